/*
 * mp4_read.h - decodes the video frames of an MP4 (or any container libavformat reads)
 * to RGB8, for `tidepool compare`. Lives in src/encode/ because that is the only place
 * for libav*; mp4.c is the writer.
 *
 * enc_mp4_open() opens the file, finds its best video stream and counts its frames
 * (the container's count when it has one, else a demux-only pass). enc_mp4_next() then
 * decodes frames in order. Conversion to RGB8 uses libswscale with bit-exact flags and the
 * stream's colour matrix and range (BT.601 when unspecified), so decoding the same file
 * twice gives the same pixels. The reader owns its buffers; enc_mp4_next() fills a
 * caller-owned RGB8 image of the stream's size and does not allocate.
 *
 * Bounds: a stream over ENC_MP4_MAX_PIXELS a frame (the scene limit) is refused before
 * its decoder opens, no single libav allocation may exceed ENC_AV_MAX_ALLOC (set with
 * av_max_alloc(), process-wide, when a reader opens), and libav's own log lines never reach stderr (the caller prints one
 * error line); enc_mp4_open() installs that log callback itself.
 *
 * Errors: TP_EIO when the file cannot be opened, TP_EINPUT when it has no decodable
 * video stream or a frame fails to decode (the message names the file).
 */
#ifndef TP_ENCODE_MP4_READ_H
#define TP_ENCODE_MP4_READ_H

#include "util/error.h"
#include "util/image.h"

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* The fuzzer's build checks the same bound lower, so that a few bytes declaring an
 * 8192x8192 stream cannot make every input decode and convert 64 Mpixel frames (the
 * real limit is tested by tests/test_mp4.c and test_limits.c). */
#define ENC_MP4_MAX_PIXELS (512 * 512)
#else
#define ENC_MP4_MAX_PIXELS (8192 * 8192)  /* == SCENE_MAX_PIXELS */
#endif
#define ENC_AV_MAX_ALLOC (256 << 20)      /* bytes in any one libav allocation */

typedef struct enc_mp4_reader enc_mp4_reader;

/* Routes libav's log lines away from stderr (mp4.c keeps the last error line for its
 * messages). Idempotent and thread-safe. */
void enc_av_log_install(void);

int enc_mp4_open(const char *path, enc_mp4_reader **out, tp_err *err);
void enc_mp4_close(enc_mp4_reader *r); /* NULL is a no-op */
int enc_mp4_width(const enc_mp4_reader *r);
int enc_mp4_height(const enc_mp4_reader *r);
int enc_mp4_frames(const enc_mp4_reader *r);
/* Decodes the next frame into img (TP_RGB8, width x height). Returns 1 when a frame was
 * written, 0 at the end of the stream, or a negative TP_E* code. */
int enc_mp4_next(enc_mp4_reader *r, tp_image *img, tp_err *err);

#endif
