/*
 * png.h - PNG reading and writing; png.c is the only file that includes <png.h>.
 *
 * tp_png_read() decodes any PNG libpng reads (grey, palette, 16-bit, alpha, interlaced)
 * and converts it to `want` (TP_RGB8, TP_RGBA8, TP_GRAY16 or TP_RGB16): alpha is
 * composited over black when dropped, 16-bit is scaled down or 8-bit scaled up exactly.
 * The caller frees the image with tp_image_free(). Errors name the file: TP_EIO when it
 * cannot be opened, TP_EINPUT when it is not a valid PNG.
 *
 * tp_png_write() writes img to `path` atomically (temporary name, then rename).
 * `level` is the zlib level 0..9 (-1: default 3, which favours speed).
 */
#ifndef TP_ENCODE_PNG_H
#define TP_ENCODE_PNG_H

#include "util/error.h"
#include "util/image.h"

int tp_png_read(const char *path, tp_pixfmt want, tp_image *out, tp_err *err);
int tp_png_write(const char *path, const tp_image *img, int level, tp_err *err);

#endif
