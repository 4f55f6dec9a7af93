/*
 * png.h - PNG reading and writing; png.c is the only file that includes <png.h>.
 *
 * tp_png_read() decodes any PNG libpng reads (grey, palette, 16-bit, alpha, interlaced)
 * and converts it to `want` (TP_RGB8, TP_RGBA8, TP_GRAY16 or TP_RGB16): alpha is
 * composited over black when dropped, 16-bit is scaled down or 8-bit scaled up exactly.
 * The caller frees the image with tp_image_free(). Errors name the file: TP_EIO when it
 * cannot be opened, TP_EINPUT when it is not a valid PNG.
 *
 * Memory is bounded before anything is allocated: each side at most TP_PNG_MAX_SIDE and
 * the image at most TP_PNG_MAX_PIXELS (the scene's own pixel limit, SCENE_MAX_PIXELS), so
 * the decoded image is the only large buffer (192 MiB at most in RGB8) besides one row.
 * Ancillary chunks other than tRNS are skipped without being read into memory; libpng's
 * chunk limits are set too (at most TP_PNG_MAX_CHUNKS ancillary chunks kept, none over
 * TP_PNG_MAX_CHUNK bytes). Non-regular files (FIFOs, devices, sockets) are refused
 * (TP_EINPUT) without waiting for a writer.
 *
 * tp_png_write() writes img to `path` atomically (temporary name, then rename).
 * `level` is the zlib level 0..9 (-1: default 3, which favours speed).
 *
 * tp_png_encode() writes the same PNG into memory: *out (malloc'd, the caller frees it)
 * holds *size bytes. Used by the preview server to answer GET /frame/N.png.
 */
#ifndef TP_ENCODE_PNG_H
#define TP_ENCODE_PNG_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "util/image.h"

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* The fuzzer's build (tests/fuzz/) checks the same limits lower, as OSS-Fuzz's libpng
 * harness caps the image it decodes: a few bytes declaring 16384x4096 took seconds to
 * decode through an instrumented libpng, and most of a run went to such inputs instead
 * of new paths. Both checks stay reachable (a side over 256; 256x128 over the pixels);
 * the real limits are tested by tests/test_limits.c. */
#define TP_PNG_MAX_SIDE 256
#define TP_PNG_MAX_PIXELS (128.0 * 128.0)
#else
#define TP_PNG_MAX_SIDE 16384                 /* pixels; flipbook atlases reach it */
#define TP_PNG_MAX_PIXELS (8192.0 * 8192.0)   /* == SCENE_MAX_PIXELS */
#endif
#define TP_PNG_MAX_CHUNKS 64                  /* ancillary chunks libpng may keep */
#define TP_PNG_MAX_CHUNK (1024 * 1024)        /* bytes in any one non-IDAT chunk */

int tp_png_read(const char *path, tp_pixfmt want, tp_image *out, tp_err *err);
/* The size a PNG's header declares, without decoding it (what tp_png_read would
 * allocate: w x h pixels); -1 if it cannot be read as a PNG header. */
int tp_png_size(const char *path, int *w, int *h);
int tp_png_write(const char *path, const tp_image *img, int level, tp_err *err);
/* The same PNG bytes to an open stream (e.g. open_memstream for a data: URI); TP_EIO. */
int tp_png_write_stream(FILE *f, const tp_image *img, int level, tp_err *err);
/* tp_png_write() with a tEXt chunk TP_PNG_TEXT_KEY = text before the pixels (the
 * provenance record of encode/proof.h; NULL: none). */
#define TP_PNG_TEXT_KEY "tidepool"
int tp_png_write_text(const char *path, const tp_image *img, int level, const char *text,
		      tp_err *err);
/* What a PNG says about itself besides its pixels: the provenance line (tEXt
 * TP_PNG_TEXT_KEY), the record of encode/record.h (iTXt TP_PNG_RECORD_KEY, JSON) and an
 * sRGB chunk (on colour pictures only: maps are data). NULL: none. */
#define TP_PNG_RECORD_KEY "tidepool-record"
typedef struct tp_png_meta {
	const char *proof;
	const char *record;
	int srgb;
} tp_png_meta;
int tp_png_write_meta(const char *path, const tp_image *img, int level, const tp_png_meta *m,
		      tp_err *err);
/* Reads the whole of path, so every chunk's CRC-32 and the pixel data's Adler-32 are
 * checked, and copies its TP_PNG_TEXT_KEY record into text ("" for none). TP_EINPUT for a
 * damaged file or not a PNG, TP_EIO when it cannot be read; only a regular file is
 * opened. */
int tp_png_check(const char *path, char *text, size_t n, tp_err *err);
/* tp_png_check() that also gives the record (*record malloc'd, NULL for none; the caller
 * frees it) and whether the file has an sRGB chunk (*srgb); record and srgb may be NULL. */
int tp_png_check_meta(const char *path, char *text, size_t n, char **record, int *srgb,
		      tp_err *err);
int tp_png_encode(const tp_image *img, int level, unsigned char **out, size_t *size, tp_err *err);

#endif
