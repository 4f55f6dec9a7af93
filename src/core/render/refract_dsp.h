/*
 * refract_dsp.h - the colour pass's kernels (refract.c) and the DSP context that picks
 * their ISA variants, as FFmpeg's per-codec DSP contexts do.
 *
 * The kernels are written once, here, as inline functions; each variant is that code
 * compiled for one instruction set in a file of its own (the Makefile gives each file its
 * -m flags): refract_c.c (plain C, not vectorised: the reference), refract_vec.c (the
 * compiler's vectorisation at the build's baseline, SSE2 on x86-64), refract_avx2.c,
 * refract_avx512.c (x86-64-v4) and refract_avx512vnni.c (passes 0-2 fused in registers).
 * refract_dsp_init() fills a refract_dsp from the CPU flags a render context read once at
 * its creation (util/cpu.h); every variant computes the same bits (tests/test_render.c).
 * Internal to src/core/render/.
 */
#ifndef TP_RENDER_REFRACT_DSP_H
#define TP_RENDER_REFRACT_DSP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/mathf.h"

#define CHUNK 256 /* pixels per pass-1/pass-2 run */

/* The constants of one frame's colour pass. */
typedef struct color_par {
	int w, hgt;
	int32_t bs; /* background row stride in bytes */
	/* Slopes and heights are taken in the solver's stored units, 32 and 16 times over
	 * (see row_geometry); those factors and the units' scale u are folded in here: */
	float R;    /* pixels of offset per unit of slope: REFRACT_PX ... u / 32 */
	float B;    /* levels per stored unit of height: REFLECT_LEVELS ... u / 16 */
	float spec; /* levels of a full highlight */
	float g[3]; /* -g h0 u / 32, -g h1 u / 32, h2: the half vector h, the gain g */
	float ng2;  /* (g u / 32)^2 */
} color_par;

/* Per-pixel results of pass 1 for one run. */
typedef struct row_taps {
	int32_t *off;  /* byte offset of the top-left tap in the padded background */
	int32_t *wq;   /* the four weights as bytes: w00 | w10 << 8 | w01 << 16 | w11 << 24 */
	int32_t *lift; /* brightness lift in levels, -1024..1024, in both 16-bit halves */
	float *v, *d;  /* CHUNK + 4 column sums v and d2 (see column_sums) */
} row_taps;

/* 1/x for x >= 1 without a division (a zmm division alone cost 10% of the colour pass):
 * the exponent-flipping first guess, then two Newton steps y = y (2 - x y), relative error
 * under 1e-5 (the highlight's 32nd power keeps it under 0.1 level). Plain IEEE operations,
 * so every vector path computes these bits. */
static inline float recip1(float x)
{
	uint32_t i;
	memcpy(&i, &x, sizeof i);
	i = 0x7ef311c3u - i;
	float y;
	memcpy(&y, &i, sizeof y);
	y = y * (2.0f - x * y);
	return y * (2.0f - x * y);
}

/* One sample of a surface row in its stored units. `is_int` is a constant at every call. */
static inline float sample(const void *row, ptrdiff_t x, const int is_int)
{
	return is_int ? (float)((const int32_t *)row)[x] : ((const float *)row)[x];
}

/* Pass 0: the column sums of the slope kernels for columns xs-2 .. xs+n+1 (entry i is
 * column xs-2+i; columns outside the frame are the edge's, or the opposite edge's with
 * wrap), from the five rows r[0..4] = y-2 .. y+2:
 *     v  = r1 + 2 r2 + r3                 ([1 2 1] down the column),
 *     d2 = 2 (r3 - r1) + (r4 - r0)        ([-1 -2 0 2 1] down the column).
 * The columns inside the frame are one branch-free loop the compiler vectorises; only
 * the ghost columns beyond the frame's edges (at most two on each side) are remapped. */
static inline __attribute__((always_inline)) void column_sum1(const void *const r[5], ptrdiff_t x,
							      const int is_int, float *restrict v,
							      float *restrict d2)
{
	if (is_int) {
		/* integer sums, converted once (wrapping like the solvers' own sums if
		 * heights ever came near 2^29) */
		const uint32_t a = (uint32_t)((const int32_t *)r[1])[x],
			       b = (uint32_t)((const int32_t *)r[2])[x];
		const uint32_t c = (uint32_t)((const int32_t *)r[3])[x];
		const uint32_t m = (uint32_t)((const int32_t *)r[0])[x],
			       e = (uint32_t)((const int32_t *)r[4])[x];
		*v = (float)(int32_t)(a + 2u * b + c);
		*d2 = (float)(int32_t)(2u * (c - a) + (e - m));
	} else {
		const float a = sample(r[1], x, 0), b = sample(r[2], x, 0), c = sample(r[3], x, 0);
		*v = a + 2.0f * b + c;
		*d2 = 2.0f * (c - a) + (sample(r[4], x, 0) - sample(r[0], x, 0));
	}
}

static inline __attribute__((always_inline)) void column_sums(const void *const r[5], int w, int xs,
							      int n, const int is_int,
							      const int wrap, float *restrict v,
							      float *restrict d2)
{
	const int x0 = xs - 2, lo = x0 < 0 ? 0 : x0, hi = xs + n + 2 < w ? xs + n + 2 : w;
	for (int x = lo; x < hi; x++)
		column_sum1(r, x, is_int, &v[x - x0], &d2[x - x0]);
	/* the ghost columns: [x0, gl) left of the frame and [gh, end) right of it (all of
	 * them if the run lies beyond the frame) */
	const int end = xs + n + 2, gl = lo < hi ? lo : end, gh = lo < hi ? hi : end;
	for (int k = 0; k < 2; k++)
		for (int x = k ? gh : x0; x < (k ? end : gl); x++)
			column_sum1(r, wrap ? (x + w) % w : x < 0 ? 0 : w - 1, is_int, &v[x - x0],
				    &d2[x - x0]);
}

/* Pass 1 for one run of a row: slopes, sample position, weights, lift. The slopes are
 * central differences of the surface smoothed by the 3x3 binomial [1 2 1]^T [1 2 1] / 16,
 * 32 times over (the 1/32 is folded into the constants):
 *     dx = (v[x+2] - v[x-2]) + 2 (v[x+1] - v[x-1]),  dy = (d2[x-1] + d2[x+1]) + 2 d2[x],
 * and the reflection sees the smoothed height, 16 times over,
 *     hs = (v[x-1] + v[x+1]) + 2 v[x].
 * With wrap the offset is limited to one frame and shifted by +w/+h so positions stay
 * positive, truncation is floor, and whole frames fold back; without wrap positions are
 * clamped to the frame. `wrap` and `is_int` are constants at each call site, so each
 * variant is a branch-free, vectorised loop. color16() repeats these operations in this
 * order. */
static inline __attribute__((always_inline)) void row_geometry(const void *const r[5],
							       const int is_int, const int wrap,
							       const color_par *p, int y, int xs,
							       int n, row_taps t)
{
	float *restrict v = t.v, *restrict d2 = t.d;
	int32_t *restrict off = t.off, *restrict wq = t.wq, *restrict lifts = t.lift;
	const int w = p->w, hgt = p->hgt;
	const float R = p->R, B = p->B, spec = p->spec;
	const float g0 = p->g[0], g1 = p->g[1], h2 = p->g[2], ng2 = p->ng2;
	column_sums(r, w, xs, n, is_int, wrap, v, d2);
	const float fw = (float)w, fh = (float)hgt, fy = (float)y;
	const int32_t bs = p->bs;
	for (int i = 0; i < n; i++) {
		const int x = xs + i;
		float dx = (v[i + 4] - v[i]) + 2.0f * (v[i + 3] - v[i + 1]);
		float dy = (d2[i + 1] + d2[i + 3]) + 2.0f * d2[i + 2];
		float hs = (v[i + 1] + v[i + 3]) + 2.0f * v[i + 2];
		float ox = R * dx, oy = R * dy;
		float sx, sy;
		if (wrap) {
			sx = (float)x + tp_clampf_nan_lo(ox, -fw, fw) + fw;
			sy = fy + tp_clampf_nan_lo(oy, -fh, fh) + fh;
		} else {
			sx = tp_clampf_nan_lo((float)x + ox, 0.0f, fw - 1.0f);
			sy = tp_clampf_nan_lo(fy + oy, 0.0f, fh - 1.0f);
		}
		/* positions in 1/8 pixel, rounded; a fraction that rounds up to a whole
		 * pixel moves to the next one with weight 0, the same sample */
		int32_t qx = (int32_t)(sx * 8.0f + 0.5f), qy = (int32_t)(sy * 8.0f + 0.5f);
		int32_t x0 = qx >> 3, y0 = qy >> 3, ax = qx & 7, ay = qy & 7;
		/* (8-ax | ax << 16) * (8-ay | (8-ay) << 16) per 16-bit half, and with ay */
		uint32_t u = (uint32_t)(8 - ax) | (uint32_t)ax << 16;
		uint32_t top = u * (uint32_t)(8 - ay), bot = u * (uint32_t)ay;
		wq[i] = (int32_t)(top | bot << 8);
		if (wrap) { /* positions are in [0, 3w): fold into [0, w) */
			x0 -= w & -(x0 >= w);
			x0 -= w & -(x0 >= w);
			y0 -= hgt & -(y0 >= hgt);
			y0 -= hgt & -(y0 >= hgt);
		}
		off[i] = y0 * bs + x0 * 4;
		/* m = (-g dx, -g dy, 1): m.h = dx g0 + dy g1 + h2 with gi = -g hi, and
		 * |m|^2 = g^2 (dx^2 + dy^2) + 1, inverted by recip1 (no division), then
		 * select. */
		float d = dx * g0 + dy * g1 + h2;
		float q = d * d * recip1((dx * dx + dy * dy) * ng2 + 1.0f);
		/* q^32 below 2^-96 is no highlight; the floor keeps the powers out of the
		 * subnormal range, where every multiply would take a slow microcode assist */
		q = q > 0.125f ? q : 0.125f;
		float s = d > 0.0f ? q : 0.0f;
		s *= s;
		s *= s;
		s *= s;
		s *= s;
		s *= s;
		float l = tp_clampf_nan_lo(B * hs + spec * s, -1024.0f, 1024.0f);
		/* to nearest (even), as lrintf: adding and removing 1.5 * 2^23 leaves |l| <=
		 * 1024 rounded by the FPU's own round-to-nearest-even, and the conversion of
		 * the whole number that remains is exact. (GCC 12 does not vectorise lrintf,
		 * which left this whole loop scalar.) */
		const float lr = (l + 0x1.8p23f) - 0x1.8p23f;
		uint32_t lq = (uint32_t)(int32_t)lr & 0xffffu;
		lifts[i] = (int32_t)(lq | lq << 16);
	}
}

/* The refraction offsets R * slope of one row from its five surface rows r (surface_rows),
 * columns xs .. xs+n-1 (any: column_sums maps those beyond the frame), n <= CHUNK + 2:
 * row_geometry's operations in its order, so the same bits. Away from the frame's edges
 * the column sums are taken without the remapping, a loop the compiler vectorises; each
 * refract_offsets_* is this body compiled for one ISA. */
static inline __attribute__((always_inline)) void
offsets_body(const void *const r[5], const int is_int, int wrap, int w, int xs, int n, float R,
	     float *restrict ox, float *restrict oy)
{
	float v[CHUNK + 8], d2[CHUNK + 8];
	column_sums(r, w, xs, n, is_int, wrap, v, d2);
	for (int i = 0; i < n; i++) {
		const float dx = (v[i + 4] - v[i]) + 2.0f * (v[i + 3] - v[i + 1]);
		const float dy = (d2[i + 1] + d2[i + 3]) + 2.0f * d2[i + 2];
		ox[i] = R * dx;
		oy[i] = R * dy;
	}
}

/* Pass 2, plain C: the fixed-point formula of the header, one channel at a time. */
static inline void shade_pixel(const uint8_t *p, int32_t bs, int32_t wq, int32_t liftp, uint8_t *o)
{
	const int w00 = wq & 0xff, w10 = wq >> 8 & 0xff, w01 = wq >> 16 & 0xff,
		  w11 = wq >> 24 & 0xff;
	const int lift = (int16_t)(liftp & 0xffff);
	for (int k = 0; k < 3; k++) {
		int c = (p[k] * w00 + p[4 + k] * w01 + p[bs + k] * w10 + p[bs + 4 + k] * w11 +
			 32) >>
			6;
		int v = c + lift;
		o[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}


#ifdef __x86_64__
/* Both vector paths put one pixel's four taps of a channel side by side as bytes,
 * [p00 p10 p01 p11] (the order of the weight bytes), so one u8 x s8 multiply-add of the
 * pixel bytes with the weight bytes gives each channel's weighted sum. The taps arrive
 * as two 8-byte pairs per pixel, top row "r0 g0 b0 x0 r1 g1 b1 x1" and the bottom row
 * likewise, side by side in a 128-bit lane. */
static const int8_t TAP_ORDER[16] = {0, 8, 4, 12, 1, 9, 5, 13, 2, 10, 6, 14, 3, 11, 7, 15};
#endif

/* Pass 1 for pixels xs .. xs+n-1 of row y from its five surface rows r (row_geometry). */
typedef void (*refract_geometry_fn)(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t);
/* The offsets R * slope of columns xs .. xs+n-1 (offsets_body). */
typedef void (*refract_offsets_fn)(const void *const r[5], int wrap, int w, int xs, int n, float R,
				   float *ox, float *oy);
/* Pass 2: n pixels of a run from its taps (row_taps' off, wq and lift, apart: a struct
 * passed by value cost the AVX2 shading 2% more instructions) into o (3 bytes a pixel). */
typedef void (*refract_shade_fn)(const uint8_t *bgx, int32_t bs, const int32_t *off,
				 const int32_t *wq, const int32_t *lift, int n, uint8_t *o);
/* Passes 0-2 fused: pixels [xa, xb) of row y into o, the lifts into lift (if not NULL). */
typedef void (*refract_color_fn)(const void *const r[5], int y, const color_par *p,
				 const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa, int xb);

typedef struct refract_dsp {
	refract_geometry_fn geometry[2][2]; /* [wrap][is_int] */
	refract_offsets_fn offsets[2];      /* [is_int] */
	refract_shade_fn shade;
	refract_color_fn fused[2][2]; /* [wrap][is_int]; NULL: geometry then shade */
	int aa_vec;                   /* render_aa.vec: 2 AVX-512, 1 AVX2, 0 plain */
} refract_dsp;

/* The variants for the TP_CPU_FLAG_* set `cpu_flags`. */
void refract_dsp_init(refract_dsp *d, unsigned cpu_flags);

/* refract_c.c: plain C, not vectorised */
void refract_geometry_wrap_i32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				 row_taps t);
void refract_geometry_clamp_i32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				  row_taps t);
void refract_geometry_wrap_f32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				 row_taps t);
void refract_geometry_clamp_f32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				  row_taps t);
void refract_offsets_i32_c(const void *const r[5], int wrap, int w, int xs, int n, float R,
			   float *ox, float *oy);
void refract_offsets_f32_c(const void *const r[5], int wrap, int w, int xs, int n, float R,
			   float *ox, float *oy);
void refract_shade_c(const uint8_t *bgx, int32_t bs, const int32_t *off, const int32_t *wq,
		     const int32_t *lift, int n, uint8_t *o);

/* refract_vec.c: the baseline ISA's vectors (SSE2 on x86-64) */
void refract_geometry_wrap_i32_vec(const void *const r[5], const color_par *p, int y, int xs, int n,
				   row_taps t);
void refract_geometry_clamp_i32_vec(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t);
void refract_geometry_wrap_f32_vec(const void *const r[5], const color_par *p, int y, int xs, int n,
				   row_taps t);
void refract_geometry_clamp_f32_vec(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t);
void refract_offsets_i32_vec(const void *const r[5], int wrap, int w, int xs, int n, float R,
			     float *ox, float *oy);
void refract_offsets_f32_vec(const void *const r[5], int wrap, int w, int xs, int n, float R,
			     float *ox, float *oy);

#ifdef __x86_64__
/* refract_avx2.c */
void refract_geometry_wrap_i32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t);
void refract_geometry_clamp_i32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				     int n, row_taps t);
void refract_geometry_wrap_f32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t);
void refract_geometry_clamp_f32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				     int n, row_taps t);
void refract_offsets_i32_avx2(const void *const r[5], int wrap, int w, int xs, int n, float R,
			      float *ox, float *oy);
void refract_offsets_f32_avx2(const void *const r[5], int wrap, int w, int xs, int n, float R,
			      float *ox, float *oy);
void refract_shade_avx2(const uint8_t *bgx, int32_t bs, const int32_t *off, const int32_t *wq,
			const int32_t *lift, int n, uint8_t *o);

/* refract_avx512.c: AVX-512 (F, CD, BW, DQ, VL); refract_avx512vnni.c: the fused kernel */
void refract_geometry_wrap_i32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				      int n, row_taps t);
void refract_geometry_clamp_i32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				       int n, row_taps t);
void refract_geometry_wrap_f32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				      int n, row_taps t);
void refract_geometry_clamp_f32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				       int n, row_taps t);
void refract_offsets_i32_avx512(const void *const r[5], int wrap, int w, int xs, int n, float R,
				float *ox, float *oy);
void refract_offsets_f32_avx512(const void *const r[5], int wrap, int w, int xs, int n, float R,
				float *ox, float *oy);
void refract_color_wrap_i32_avx512vnni(const void *const r[5], int y, const color_par *p,
				   const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa, int xb);
void refract_color_clamp_i32_avx512vnni(const void *const r[5], int y, const color_par *p,
				    const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa, int xb);
void refract_color_wrap_f32_avx512vnni(const void *const r[5], int y, const color_par *p,
				   const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa, int xb);
void refract_color_clamp_f32_avx512vnni(const void *const r[5], int y, const color_par *p,
				    const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa, int xb);
#endif

#endif
