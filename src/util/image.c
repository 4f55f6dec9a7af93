#include "util/image.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

int tp_pixfmt_channels(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8:
	case TP_RGB16:
	case TP_YUV420: return 3;
	case TP_RGBA8: return 4;
	default: return 1;
	}
}

int tp_pixfmt_bytes(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: return 3;
	case TP_RGBA8: return 4;
	case TP_GRAY16: return 2;
	case TP_RGB16: return 6;
	default: return 1;
	}
}

const char *tp_pixfmt_name(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: return "rgb24";
	case TP_RGBA8: return "rgba";
	case TP_GRAY16: return "gray16";
	case TP_RGB16: return "rgb48";
	case TP_YUV420: return "yuv420p";
	default: return "gray";
	}
}

int tp_image_alloc(tp_image *img, int w, int h, tp_pixfmt fmt)
{
	memset(img, 0, sizeof *img);
	if (w <= 0 || h <= 0)
		return TP_EIO;
	if (fmt == TP_YUV420 && ((w | h) & 1))
		return TP_EIO;
	size_t stride = ((size_t)w * (size_t)tp_pixfmt_bytes(fmt) + 63) & ~(size_t)63;
	/* 4:2:0 adds two quarter-size chroma planes */
	size_t bytes = fmt == TP_YUV420 ? stride * (size_t)h * 3 / 2 : stride * (size_t)h;
	void *p = NULL;
	if (posix_memalign(&p, 64, bytes) != 0)
		return TP_EIO;
	memset(p, 0, bytes);
	img->w = w;
	img->h = h;
	img->stride = (ptrdiff_t)stride;
	img->fmt = fmt;
	img->pixels = p;
	return 0;
}

void tp_image_free(tp_image *img)
{
	if (!img)
		return;
	free(img->pixels);
	img->pixels = NULL;
}

/* ---- BT.709 4:2:0 ---- */

#define Y_R  5983
#define Y_G  20127
#define Y_B  2032
#define CB_R (-3298)
#define CB_G (-11094)
#define CB_B 14392
#define CR_R 14392
#define CR_G (-13073)
#define CR_B (-1319)

static inline __attribute__((always_inline)) void
yuv_rows(const uint8_t *restrict r0, const uint8_t *restrict r1, int w, uint8_t *restrict y0,
	 uint8_t *restrict y1, uint8_t *restrict cb, uint8_t *restrict cr)
{
	for (int x = 0; x < w; x++) {
		y0[x] = (uint8_t)((Y_R * r0[3 * x] + Y_G * r0[3 * x + 1] + Y_B * r0[3 * x + 2] +
				   (16 << 15) + (1 << 14)) >>
				  15);
		y1[x] = (uint8_t)((Y_R * r1[3 * x] + Y_G * r1[3 * x + 1] + Y_B * r1[3 * x + 2] +
				   (16 << 15) + (1 << 14)) >>
				  15);
	}
	/* Chroma, linear in R, G, B: per pixel of the two rows' column sums, then the sum of
	 * each pair (the 2^15 scale becomes 2^17 over four pixels). In runs that stay in L1,
	 * every loop unit-stride or interleaved by 2 or 3, so the compiler vectorises them. */
	enum { RUN = 256 };
	for (int xs = 0; xs < w; xs += RUN) {
		const int n = w - xs < RUN ? w - xs : RUN; /* even: w and RUN are */
		int32_t sum[3 * RUN], pb[RUN], pr[RUN];
		for (int i = 0; i < 3 * n; i++)
			sum[i] = r0[3 * xs + i] + r1[3 * xs + i];
		for (int i = 0; i < n; i++) {
			pb[i] = CB_R * sum[3 * i] + CB_G * sum[3 * i + 1] + CB_B * sum[3 * i + 2];
			pr[i] = CR_R * sum[3 * i] + CR_G * sum[3 * i + 1] + CR_B * sum[3 * i + 2];
		}
		for (int i = 0; i < n / 2; i++) {
			cb[xs / 2 + i] =
				(uint8_t)((pb[2 * i] + pb[2 * i + 1] + (128 << 17) + (1 << 16)) >>
					  17);
			cr[xs / 2 + i] =
				(uint8_t)((pr[2 * i] + pr[2 * i + 1] + (128 << 17) + (1 << 16)) >>
					  17);
		}
	}
}

__attribute__((optimize("no-tree-vectorize"))) static void yuv_rows_c(const uint8_t *r0,
								      const uint8_t *r1, int w,
								      uint8_t *y0, uint8_t *y1,
								      uint8_t *cb, uint8_t *cr)
{
	yuv_rows(r0, r1, w, y0, y1, cb, cr);
}

#ifdef __x86_64__
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
yuv_rows_vec(const uint8_t *r0, const uint8_t *r1, int w, uint8_t *y0, uint8_t *y1, uint8_t *cb,
	     uint8_t *cr)
{
	yuv_rows(r0, r1, w, y0, y1, cb, cr);
}
#else
static void yuv_rows_vec(const uint8_t *r0, const uint8_t *r1, int w, uint8_t *y0, uint8_t *y1,
			 uint8_t *cb, uint8_t *cr)
{
	yuv_rows(r0, r1, w, y0, y1, cb, cr);
}
#endif

static int yuv_simd = 1;

void tp_yuv_set_simd(int level)
{
	yuv_simd = level;
}

void tp_rgb_to_yuv420_rows(const uint8_t *r0, const uint8_t *r1, int w, uint8_t *y0, uint8_t *y1,
			   uint8_t *cb, uint8_t *cr)
{
	if (yuv_simd)
		yuv_rows_vec(r0, r1, w, y0, y1, cb, cr);
	else
		yuv_rows_c(r0, r1, w, y0, y1, cb, cr);
}

void tp_rgb_to_yuv420_pair(const tp_image *rgb, int j, uint8_t *const pl[3], const ptrdiff_t ls[3])
{
	tp_rgb_to_yuv420_rows(tp_image_row(rgb, 2 * j), tp_image_row(rgb, 2 * j + 1), rgb->w,
			      pl[0] + (ptrdiff_t)2 * j * ls[0],
			      pl[0] + (ptrdiff_t)(2 * j + 1) * ls[0], pl[1] + (ptrdiff_t)j * ls[1],
			      pl[2] + (ptrdiff_t)j * ls[2]);
}
