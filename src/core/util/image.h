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
	TP_YUV420, /* planar BT.709 limited-range 4:2:0 (even w and h): see tp_image_plane */
	TP_GRAYF32, /* 1 x float, physical units (OpenEXR outputs) */
	TP_RGBF32,  /* 3 x float */
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

/* BT.709 limited-range 4:2:0 from RGB: two RGB rows (w even) to two rows of luma and one
 * row each of Cb and Cr (w/2 samples, the 2x2 mean), in fixed point:
 *     Y  = 16 + (5983 R + 20127 G + 2032 B) / 2^15,
 *     Cb = 128 + (-3298 R - 11094 G + 14392 B) / 2^15,
 *     Cr = 128 + (14392 R - 13073 G - 1319 B) / 2^15   (R, G, B the 2x2 sums / 4),
 * rounded to nearest: 219/255 and 224/255 of the BT.709 matrix (Kr 0.2126, Kb 0.0722).
 * The same integers whatever the CPU (each vector path is checked against C, test_mp4.c).
 * tp_yuv420_rows_for() gives the conversion for the CPU features `cpu_flags`
 * (util/cpu.h): a context picks it once, when it is created. */
typedef void (*tp_yuv420_rows_fn)(const uint8_t *r0, const uint8_t *r1, int w, uint8_t *y0,
				  uint8_t *y1, uint8_t *cb, uint8_t *cr);
tp_yuv420_rows_fn tp_yuv420_rows_for(unsigned cpu_flags);
/* Row pair j (rows 2j, 2j+1) of an RGB8 image into 4:2:0 planes pl[0..2] with row strides
 * ls[0..2] (luma rows 2j, 2j+1, chroma row j), by `rows`. */
void tp_rgb_to_yuv420_pair(tp_yuv420_rows_fn rows, const tp_image *rgb, int j, uint8_t *const pl[3],
			   const ptrdiff_t ls[3]);

/* A zeroed block of `bytes`, 64-byte aligned (in transparent huge pages from 4 MB), or
 * NULL; free() releases it. */
void *tp_alloc_zeroed(size_t bytes);
/* Allocates a zeroed w x h image (rows 64-byte aligned). Returns 0 or TP_EIO. */
int tp_image_alloc(tp_image *img, int w, int h, tp_pixfmt fmt);
void tp_image_free(tp_image *img); /* safe on a zeroed or freed image */

static inline uint8_t *tp_image_row(const tp_image *img, int y)
{
	return img->pixels + (ptrdiff_t)y * img->stride;
}

/* TP_YUV420 planes, one buffer: Y (h rows of `stride` bytes), then Cb and Cr (h/2 rows of
 * stride/2 bytes each). k = 0, 1, 2; *ls gets the plane's row stride. */
static inline uint8_t *tp_image_plane(const tp_image *img, int k, ptrdiff_t *ls)
{
	const ptrdiff_t ys = img->stride * img->h, cs = (img->stride / 2) * (img->h / 2);
	*ls = k ? img->stride / 2 : img->stride;
	return img->pixels + (k ? ys + (k - 1) * cs : 0);
}

#endif
