/*
 * record.h - what every file tidepool writes says about itself (docs/textures.md, "What
 * each file records"): one writer and one reader of that record.
 *
 * The record is a flat JSON object (cJSON) built from an enc_record by
 * enc_record_json(): the same keys go into a PNG's iTXt chunk (TP_PNG_RECORD_KEY, the
 * object as text), an OpenEXR header (each key as a typed attribute ENC_RECORD_EXR_PREFIX
 * KEY, beside OpenEXR's standard framesPerSecond and wrapmodes) and an MP4's container
 * metadata. Nothing in it varies between runs or thread counts (no date, no host): the
 * same scene gives byte-identical files.
 *
 * enc_record_read() is the one reader: it takes any file tidepool writes (PNG, OpenEXR,
 * MP4, frame-hash manifest, checkpoint) and gives its record back as a JSON object, or
 * says the file is not tidepool's.
 */
#ifndef TP_ENCODE_RECORD_H
#define TP_ENCODE_RECORD_H

#include <cjson/cJSON.h>

#include "tidepool.h"
#include "util/error.h"

#define ENC_RECORD_FORMAT     "tidepool-record/1"
#define ENC_RECORD_EXR_PREFIX "tidepool:"

/* What an output knows about itself before its frames (outputs.c fills it). */
typedef struct enc_record {
	tp_mode mode;
	const char *mode_name; /* tp_mode_name(mode): the av plugin links this without the library */
	const char *encoder; /* "png", "exr", "mp4", "flipbook" */
	char fp[65];         /* the output fingerprint (encode/proof.h) */
	int frames;          /* frames of the whole render */
	double fps;
	int width, height; /* of one frame */
	int float_samples; /* 1: physical values (OpenEXR), 0: the PNG encoding */
	tp_map_info map;
	/* flipbook atlases: the layout (cols 0: not an atlas) */
	int cols, rows, cell_w, cell_h, padding;
} enc_record;

/* The record of frames first..last of r's output (one frame: first == last; -1, -1: a
 * file that does not say, such as a whole MP4). NULL if out of memory. */
cJSON *enc_record_json(const enc_record *r, int first, int last);
/* The same as one line of JSON (malloc'd), or NULL. */
char *enc_record_text(const enc_record *r, int first, int last);
/* The record of a picture tidepool makes about renders rather than of a render (`what`:
 * "contact sheet", "difference image"): format, software, version, image, colorSpace
 * sRGB; one line of JSON (malloc'd), or NULL. */
char *enc_record_picture(const char *what);
/* fps as a rational for OpenEXR's framesPerSecond: whole numbers n/1, NTSC's n*1000/1001. */
void enc_record_fps(double fps, int *num, unsigned *den);

/* Writes the record of frame `frame` into an OpenEXR header being built (ctx: an
 * exr_context_t before exr_write_header): framesPerSecond, wrapmodes and software, then
 * every key as a typed attribute ENC_RECORD_EXR_PREFIX KEY (strings, int for whole-number
 * keys, double, v2d for pairs; loopFrames 0 for none). Returns an exr_result_t. */
int enc_record_exr(void *ctx, int part, const enc_record *r, int frame);
/* 1 for the keys whose values are whole numbers (int attributes in OpenEXR). */
int enc_record_is_int_key(const char *key);

/* The record of `path` as a JSON object (the caller deletes it): *kind gets what the file
 * is ("PNG", "OpenEXR", "MP4", "frame-hash manifest", "checkpoint"). TP_EINPUT with a
 * message "PATH: not written by tidepool (...)" for a file tidepool did not write (*kind
 * still says what it is, or "unknown"), TP_EIO when it cannot be read. */
int enc_record_read(const char *path, cJSON **out, const char **kind, tp_err *err);
/* 0 when every chunk of the OpenEXR file `path` lies whole inside it (its offset table and
 * each chunk's bytes read back). OpenEXR carries no checksum: this is how `tasks --missing`
 * tells a whole frame from a cut one. TP_EINPUT naming the file otherwise. */
int enc_exr_whole(const char *path, tp_err *err);

#endif
