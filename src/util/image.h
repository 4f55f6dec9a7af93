/*
 * image.h - plain pixel buffers passed between render, encode and compare.
 *
 * A tp_image owns nothing by itself: tp_image_alloc() gives it a heap buffer that
 * tp_image_free() releases. Rows are contiguous, `stride` bytes apart (>= w * bpp).
 * Channels are interleaved, 16-bit samples are host-endian uint16_t.
 */
#ifndef TP_UTIL_IMAGE_H
#define TP_UTIL_IMAGE_H

#include <stddef.h>
#include <stdint.h>

typedef enum tp_pixfmt {
	TP_RGB8,   /* 3 x uint8 */
	TP_RGBA8,  /* 4 x uint8 */
	TP_GRAY16, /* 1 x uint16 */
	TP_RGB16,  /* 3 x uint16 */
	TP_GRAY8,  /* 1 x uint8 */
} tp_pixfmt;

typedef struct tp_image {
	int w, h;
	ptrdiff_t stride; /* bytes between rows */
	tp_pixfmt fmt;
	uint8_t *pixels;
} tp_image;

int tp_pixfmt_channels(tp_pixfmt f);
int tp_pixfmt_bytes(tp_pixfmt f); /* bytes per pixel */
const char *tp_pixfmt_name(tp_pixfmt f);

/* Allocates a zeroed w x h image (rows 64-byte aligned). Returns 0 or TP_EIO. */
int tp_image_alloc(tp_image *img, int w, int h, tp_pixfmt fmt);
void tp_image_free(tp_image *img); /* safe on a zeroed or freed image */

static inline uint8_t *tp_image_row(const tp_image *img, int y)
{
	return img->pixels + (ptrdiff_t)y * img->stride;
}

#endif
