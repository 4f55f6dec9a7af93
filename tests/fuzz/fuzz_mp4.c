/* Video reader (libavformat, libavcodec, libswscale through enc_mp4_*): any bytes as a
 * file, then up to 8 frames decoded to RGB8. In this build the reader caps the work of
 * one input (encode/mp4_read.c): frames of at most 512x512 pixels, one decoder thread, a
 * 32 kB probe. */
#include "encode/mp4_read.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_init();
	const char *path = fuzz_file("in.mp4", data, size);
	enc_mp4_reader *r = NULL;
	tp_err err = {""};
	int rc = enc_mp4_open(path, &r, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err);
		return 0;
	}
	int w = enc_mp4_width(r), h = enc_mp4_height(r);
	if (w < 1 || h < 1 || (double)w * h > ENC_MP4_MAX_PIXELS || enc_mp4_frames(r) < 0)
		abort();
	tp_image img;
	if (tp_image_alloc(&img, w, h, TP_RGB8) < 0)
		abort();
	for (int k = 0; k < 8; k++) {
		rc = enc_mp4_next(r, &img, &err);
		if (rc < 0)
			fuzz_check_error(rc, &err);
		if (rc <= 0)
			break;
	}
	tp_image_free(&img);
	enc_mp4_close(r);
	return 0;
}
