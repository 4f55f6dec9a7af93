/*
 * refract.c - the "color" mode: the background seen through the moving surface.
 *
 * Seeds 000/001: each pixel shows the background displaced by the local slope,
 *     (sx, sy) = (x, y) + R * (dh/dx, dh/dy)
 * where R = REFRACT_PX * refraction * s^2 (pixels of offset per height unit of slope; s =
 * output pixels per scene unit: a slope per pixel is 1/s of the same slope per scene unit,
 * and the offset should be s times as many pixels, so that every size shows the same),
 * sampled bilinearly; then seed 001's reflection term, brightness following height,
 *     c += REFLECT_LEVELS * reflection * h,
 * over the water tint, c = mix(c, tint, tint_strength) (folded into the background once
 * per render, see render.c), and a sun highlight from the surface normal
 * n = normalize(-g*dh/dx, -g*dh/dy, 1), g = NORMAL_GAIN * s (Blinn-Phong (n.h)^64, taken as
 * ((m.h)^2 / |m|^2)^32 with the unnormalised m, so no square root, by repeated squaring).
 *
 * The slopes are not the seeds' central differences of h but those of h smoothed by the
 * 3x3 binomial filter [1 2 1]^T [1 2 1] / 16 (a 5x5 support; see row_geometry), and the
 * reflection reads the smoothed height too. The filter's response cos^2(kx/2) cos^2(ky/2)
 * vanishes at the grid's Nyquist frequency, so the odd-even (checkerboard) mode and the
 * near-Nyquist waves that the integer ripple stencils leave in the heights show no
 * slope and no hatching (docs/internals.md measures it); a plane's slope is exact.
 *
 * Per pixel, in fixed point (the same integers on every path):
 *     fx, fy = the sample position's fractions in 1/8 pixel (0..8),
 *     w00 = (8-fx)(8-fy), w01 = fx(8-fy), w10 = (8-fx)fy, w11 = fx fy   (sum 64),
 *     c   = (p00 w00 + p01 w01 + p10 w10 + p11 w11 + 32) >> 6   per channel,
 *     out = clamp(c + lift, 0, 255),  lift = round(reflection + highlight) in levels.
 * 1/8 pixel positions keep the weights in signed bytes, so one multiply-add instruction
 * (VNNI vpdpbusd, or pmaddubsw + pmaddwd) weighs all four taps of a channel.
 *
 * Paths: a float pass per run of CHUNK pixels (slopes, sample positions, weights, lift),
 * vectorised by the compiler for SSE2, AVX2 and AVX-512, then a shading pass (C, AVX2, or
 * AVX-512), or, with AVX-512, both fused in registers 16 pixels at a time. Every path
 * computes the same bits (IEEE single precision, no contraction, the same operation
 * order; tests/test_render.c compares them). Rows can be split across threads freely.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif

#include "render/render_impl.h"

#define REFRACT_PX     24.0f /* background offset in pixels per height unit of slope */
#define REFLECT_LEVELS 40.0f /* brightness levels per height unit */
#define NORMAL_GAIN    6.0   /* slope exaggeration for the highlight normal, per scene unit */
#define CHUNK          256   /* pixels per pass-1/pass-2 run */

/* NaN-safe (a NaN becomes lo) and branch-free: maxss then minss. */
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

typedef void (*row_geometry_fn)(const void *const[5], const color_par *, int, int, int, row_taps);

/* Each of the four variants (wrap or clamp, int or float samples) in plain scalar C and
 * vectorised for SSE2 (the x86-64 baseline), AVX2 and AVX-512 (x86-64-v4). */
#define GEOM_ARGS (const void *const r[5], const color_par *p, int y, int xs, int n, row_taps t)
#ifdef __x86_64__
#define GEOM_TARGETS(name, body)                                                                   \
	__attribute__((optimize("no-tree-vectorize"))) static void name##_c GEOM_ARGS              \
		body static void name##_sse2 GEOM_ARGS body                                        \
		__attribute__((target("avx2"))) static void name##_avx2 GEOM_ARGS body             \
		__attribute__((target("arch=x86-64-v4"))) static void name##_avx512 GEOM_ARGS      \
			body static const row_geometry_fn name[4] = {name##_c, name##_sse2,        \
								     name##_avx2, name##_avx512};
#else
#define GEOM_TARGETS(name, body)                                                                   \
	__attribute__((optimize("no-tree-vectorize"))) static void name##_c GEOM_ARGS              \
		body static void name##_vec GEOM_ARGS body static const row_geometry_fn name[4] =  \
			{name##_c, name##_vec, name##_vec, name##_vec};
#endif
#define ROW_GEOMETRY(name, is_int, wrap)                                                           \
	GEOM_TARGETS(name, { row_geometry(r, is_int, wrap, p, y, xs, n, t); })
ROW_GEOMETRY(row_geometry_wrap_i32, 1, 1)
ROW_GEOMETRY(row_geometry_clamp_i32, 1, 0)
ROW_GEOMETRY(row_geometry_wrap_f32, 0, 1)
ROW_GEOMETRY(row_geometry_clamp_f32, 0, 0)

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

static void shade_row_c(const uint8_t *bgx, int32_t bs, row_taps t, int x, int w, uint8_t *o)
{
	for (; x < w; x++)
		shade_pixel(bgx + t.off[x], bs, t.wq[x], t.lift[x], o + 3 * x);
}

#ifdef __x86_64__
/* Both vector paths put one pixel's four taps of a channel side by side as bytes,
 * [p00 p10 p01 p11] (the order of the weight bytes), so one u8 x s8 multiply-add of the
 * pixel bytes with the weight bytes gives each channel's weighted sum. The taps arrive
 * as two 8-byte pairs per pixel, top row "r0 g0 b0 x0 r1 g1 b1 x1" and the bottom row
 * likewise, side by side in a 128-bit lane. */
static const int8_t TAP_ORDER[16] = {0, 8, 4, 12, 1, 9, 5, 13, 2, 10, 6, 14, 3, 11, 7, 15};
/* Lane k of a packed vector holds "A rgbx B rgbx" in bytes 16k .. 16k+7: the r g b of both,
 * four lanes, in 24 bytes. */
/* The packed weights of row_geometry for ax | ay << 3 (64 entries). */
#define WQ_ENTRY(a, b)                                                                             \
	((int32_t)((8 - (a)) * (8 - (b)) | (8 - (a)) * (b) << 8 | (a) * (8 - (b)) << 16 |          \
		   (a) * (b) << 24))
#define WQ_ROW(b)                                                                                  \
	WQ_ENTRY(0, b), WQ_ENTRY(1, b), WQ_ENTRY(2, b), WQ_ENTRY(3, b), WQ_ENTRY(4, b),            \
		WQ_ENTRY(5, b), WQ_ENTRY(6, b), WQ_ENTRY(7, b)
static const int32_t WQ[64] __attribute__((aligned(64))) = {
	WQ_ROW(0), WQ_ROW(1), WQ_ROW(2), WQ_ROW(3), WQ_ROW(4), WQ_ROW(5), WQ_ROW(6), WQ_ROW(7)};
/* The 24 output bytes of eight pixels from four 128-bit lanes of "A rgbx B rgbx" bytes,
 * without VBMI's byte permute across lanes (many AVX-512 CPUs lack it: the fused kernel
 * ran only on those that have it): a byte shuffle inside each lane puts the lane's 6
 * bytes at its bytes 0-5 (lanes 0 and 2, output bytes 0-5 and 12-17) or 2-7 (lanes 1 and
 * 3, output bytes 6-11 and 18-23), so that each output dword is one lane's dword or, for
 * output dwords 1 and 4, two lanes' dwords ORed: two dword permutes and an OR. */
#define Z -1
static const int8_t PACK24_LANE[64] __attribute__((aligned(64))) = {
	0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 0 */
	Z, Z, 0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 1 */
	0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 2 */
	Z, Z, 0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 3 */
};
#undef Z

/* AVX2 (no VNNI): four pixels at a time; pmaddubsw then pmaddwd with ones sum the four
 * products exactly (each pair is at most 255 * 64 * 2, well inside 16 bits). */
__attribute__((target("avx2"))) static void shade_row_avx2(const uint8_t *bgx, int32_t bs,
							   row_taps t, int w, uint8_t *o)
{
	const __m256i order =
		_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)TAP_ORDER));
	const __m256i ones = _mm256_set1_epi16(1), r32 = _mm256_set1_epi32(32);
	const __m256i idx_w = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
	const __m256i idx_w2 = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
	/* rgbx rgbx (two pixels' words packed to bytes) -> rgb rgb */
	const __m256i rgb =
		_mm256_setr_epi8(0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2,
				 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	int x = 0;
	for (; x + 4 <= w; x += 4) {
		const uint8_t *pa = bgx + t.off[x], *pb = bgx + t.off[x + 1];
		const uint8_t *pc = bgx + t.off[x + 2], *pd = bgx + t.off[x + 3];
		/* lane 0: pixel A's top | bottom pair, pixel B's in lane 1; C and D likewise */
		__m256i ab = _mm256_setr_m128i(
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pa),
					   _mm_loadl_epi64((const __m128i *)(pa + bs))),
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pb),
					   _mm_loadl_epi64((const __m128i *)(pb + bs))));
		__m256i cd = _mm256_setr_m128i(
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pc),
					   _mm_loadl_epi64((const __m128i *)(pc + bs))),
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pd),
					   _mm_loadl_epi64((const __m128i *)(pd + bs))));
		const __m256i wq =
			_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(t.wq + x)));
		__m256i s_ab = _mm256_maddubs_epi16(_mm256_shuffle_epi8(ab, order),
						    _mm256_permutevar8x32_epi32(wq, idx_w));
		__m256i s_cd = _mm256_maddubs_epi16(_mm256_shuffle_epi8(cd, order),
						    _mm256_permutevar8x32_epi32(wq, idx_w2));
		s_ab = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(s_ab, ones), r32), 6);
		s_cd = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(s_cd, ones), r32), 6);
		/* words per lane: A rgbx C rgbx | B rgbx D rgbx */
		__m256i c = _mm256_packus_epi32(s_ab, s_cd);
		const __m256i l4 =
			_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(t.lift + x)));
		/* lift words in the same order: A A C C | B B D D */
		c = _mm256_adds_epi16(c, _mm256_permutevar8x32_epi32(
						 l4, _mm256_setr_epi32(0, 0, 2, 2, 1, 1, 3, 3)));
		c = _mm256_shuffle_epi8(_mm256_packus_epi16(c, c), rgb);
		/* lane 0: A rgb C rgb, lane 1: B rgb D rgb */
		const __m128i lo = _mm256_castsi256_si128(c), hi = _mm256_extracti128_si256(c, 1);
		uint8_t tmp[32];
		_mm_storeu_si128((__m128i *)tmp, lo);
		_mm_storeu_si128((__m128i *)(tmp + 16), hi);
		memcpy(o + 3 * x, tmp, 3);          /* A */
		memcpy(o + 3 * x + 3, tmp + 16, 3); /* B */
		memcpy(o + 3 * x + 6, tmp + 3, 3);  /* C */
		memcpy(o + 3 * x + 9, tmp + 19, 3); /* D */
	}
	shade_row_c(bgx, bs, t, x, w, o);
}

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

/* Eight pixels (AVX-512 VNNI): gather8 fetches the top and bottom pairs, vpdpbusd
 * weighs each channel's four taps, and a byte shuffle and two dword permutes compact the
 * 24 output bytes (PACK24_LANE) into a masked store, so nothing spills past the run.
 * `half` picks pixels 0-7 or 8-15 of the 16-lane weight and lift vectors. */
static inline __attribute__((always_inline)) AVX512_TARGET void
shade8(const uint8_t *bgx, int32_t bs, __m256i off, __m512i wq, __m512i lift, const int half,
       __mmask64 store, uint8_t *o)
{
	const __m512i order = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)TAP_ORDER));
	const __m512i r32 = _mm512_set1_epi32(32);
	const int h8 = half ? 8 : 0;
	const __m512i idx_a =
		_mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6),
				 _mm512_set1_epi32(h8));
	const __m512i idx_b =
		_mm512_add_epi32(_mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7),
				 _mm512_set1_epi32(h8));
	const __m512i idx_l =
		_mm512_add_epi32(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
				 _mm512_set1_epi32(h8));
	/* lane k of top: pixels 2k and 2k+1's top pairs; of bot: their bottom pairs (by
	 * plain loads, gather8: the gathers took half of a storm's colour pass here) */
	const __m512i top = gather8(bgx, off), bot = gather8(bgx + bs, off);
	const __m512i pa = _mm512_shuffle_epi8(_mm512_unpacklo_epi64(top, bot), order);
	const __m512i pb = _mm512_shuffle_epi8(_mm512_unpackhi_epi64(top, bot), order);
	__m512i c_a = _mm512_dpbusd_epi32(r32, pa, _mm512_permutexvar_epi32(idx_a, wq));
	__m512i c_b = _mm512_dpbusd_epi32(r32, pb, _mm512_permutexvar_epi32(idx_b, wq));
	c_a = _mm512_srli_epi32(c_a, 6);
	c_b = _mm512_srli_epi32(c_b, 6);
	/* words per lane: A rgbx B rgbx */
	__m512i c = _mm512_packus_epi32(c_a, c_b);
	c = _mm512_adds_epi16(c, _mm512_permutexvar_epi32(idx_l, lift));
	c = _mm512_shuffle_epi8(_mm512_packus_epi16(c, c), _mm512_load_si512(PACK24_LANE));
	c = _mm512_or_si512(
		_mm512_permutexvar_epi32(
			_mm512_setr_epi32(0, 1, 5, 8, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), c),
		_mm512_maskz_permutexvar_epi32(
			(__mmask16)0x12,
			_mm512_setr_epi32(0, 4, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), c));
	_mm512_mask_storeu_epi8(o, store, c);
}

/* column_sums for the 16 columns from x; lanes outside `m` read nothing (and are zero). */
static inline __attribute__((always_inline)) AVX512_TARGET void
sums16(const void *const r[5], ptrdiff_t x, __mmask16 m, const int is_int, __m512 *v, __m512 *d2)
{
	if (is_int) {
		__m512i s[5];
		for (int k = 0; k < 5; k++)
			s[k] = _mm512_maskz_loadu_epi32(m, (const int32_t *)r[k] + x);
		*v = _mm512_cvtepi32_ps(
			_mm512_add_epi32(_mm512_add_epi32(s[1], _mm512_slli_epi32(s[2], 1)), s[3]));
		*d2 = _mm512_cvtepi32_ps(
			_mm512_add_epi32(_mm512_slli_epi32(_mm512_sub_epi32(s[3], s[1]), 1),
					 _mm512_sub_epi32(s[4], s[0])));
		return;
	}
	__m512 s[5];
	for (int k = 0; k < 5; k++)
		s[k] = _mm512_maskz_loadu_ps(m, (const float *)r[k] + x);
	const __m512 two = _mm512_set1_ps(2.0f);
	*v = _mm512_add_ps(_mm512_add_ps(s[1], _mm512_mul_ps(two, s[2])), s[3]);
	*d2 = _mm512_add_ps(_mm512_mul_ps(two, _mm512_sub_ps(s[3], s[1])),
			    _mm512_sub_ps(s[4], s[0]));
}

/* Passes 0, 1 and 2 fused for the 16 pixels from column x, every intermediate in
 * registers: row_geometry's IEEE operations in the same order (max/min are tp_clampf_nan_lo's
 * NaN-to-bound selects, cvtt is C's truncation), then shade8. v[k] are the column sums v
 * at x + k - 2, e[k] the sums d2 at x + k - 1. */
static inline __attribute__((always_inline)) AVX512_TARGET void
color16(int x, int y, const int wrap, const color_par *p, const uint8_t *bgx, uint8_t *o,
	int32_t *lift, const __m512 v[5], const __m512 e[3], int n)
{
	const __m512 two = _mm512_set1_ps(2.0f);
	const __m512 dx = _mm512_add_ps(_mm512_sub_ps(v[4], v[0]),
					_mm512_mul_ps(two, _mm512_sub_ps(v[3], v[1])));
	const __m512 dy = _mm512_add_ps(_mm512_add_ps(e[0], e[2]), _mm512_mul_ps(two, e[1]));
	const __m512 hs = _mm512_add_ps(_mm512_add_ps(v[1], v[3]), _mm512_mul_ps(two, v[2]));
	const __m512 R = _mm512_set1_ps(p->R);
	const __m512 ox = _mm512_mul_ps(R, dx), oy = _mm512_mul_ps(R, dy);
	const __m512 fw = _mm512_set1_ps((float)p->w), fh = _mm512_set1_ps((float)p->hgt);
	const __m512 xf = _mm512_cvtepi32_ps(_mm512_add_epi32(
		_mm512_set1_epi32(x),
		_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)));
	const __m512 yf = _mm512_set1_ps((float)y);
	__m512 sx, sy;
	if (wrap) {
		const __m512 nfw = _mm512_set1_ps(-(float)p->w),
			     nfh = _mm512_set1_ps(-(float)p->hgt);
		sx = _mm512_add_ps(_mm512_add_ps(xf, _mm512_min_ps(_mm512_max_ps(ox, nfw), fw)),
				   fw);
		sy = _mm512_add_ps(_mm512_add_ps(yf, _mm512_min_ps(_mm512_max_ps(oy, nfh), fh)),
				   fh);
	} else {
		const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
		sx = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(xf, ox), zero),
				   _mm512_sub_ps(fw, one));
		sy = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(yf, oy), zero),
				   _mm512_sub_ps(fh, one));
	}
	const __m512 k8 = _mm512_set1_ps(8.0f), half = _mm512_set1_ps(0.5f);
	const __m512i qx = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sx, k8), half));
	const __m512i qy = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sy, k8), half));
	__m512i x0 = _mm512_srai_epi32(qx, 3), y0 = _mm512_srai_epi32(qy, 3);
	/* the weights from the 64-entry table WQ by ax | ay << 3: two two-register permutes
	 * (entries 0-31 and 32-63) and a blend on bit 5 */
	const __m512i seven = _mm512_set1_epi32(7);
	const __m512i wi = _mm512_or_si512(_mm512_and_si512(qx, seven),
					   _mm512_slli_epi32(_mm512_and_si512(qy, seven), 3));
	const __m512i wlo =
		_mm512_permutex2var_epi32(_mm512_loadu_si512(WQ), wi, _mm512_loadu_si512(WQ + 16));
	const __m512i whi = _mm512_permutex2var_epi32(_mm512_loadu_si512(WQ + 32), wi,
						      _mm512_loadu_si512(WQ + 48));
	const __m512i wq = _mm512_mask_blend_epi32(
		_mm512_test_epi32_mask(wi, _mm512_set1_epi32(32)), wlo, whi);
	if (wrap) {
		const __m512i wv = _mm512_set1_epi32(p->w), hv = _mm512_set1_epi32(p->hgt);
		for (int k = 0; k < 2; k++) {
			x0 = _mm512_mask_sub_epi32(x0, _mm512_cmpge_epi32_mask(x0, wv), x0, wv);
			y0 = _mm512_mask_sub_epi32(y0, _mm512_cmpge_epi32_mask(y0, hv), y0, hv);
		}
	}
	__m512i off = _mm512_add_epi32(_mm512_mullo_epi32(y0, _mm512_set1_epi32(p->bs)),
				       _mm512_slli_epi32(x0, 2));
	/* the highlight and the lift */
	const __m512 d = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(dx, _mm512_set1_ps(p->g[0])),
						     _mm512_mul_ps(dy, _mm512_set1_ps(p->g[1]))),
				       _mm512_set1_ps(p->g[2]));
	const __m512 den = _mm512_add_ps(
		_mm512_mul_ps(_mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)),
			      _mm512_set1_ps(p->ng2)),
		_mm512_set1_ps(1.0f));
	/* recip1 */
	const __m512 two2 = _mm512_set1_ps(2.0f);
	__m512 rcp = _mm512_castsi512_ps(
		_mm512_sub_epi32(_mm512_set1_epi32(0x7ef311c3), _mm512_castps_si512(den)));
	rcp = _mm512_mul_ps(rcp, _mm512_sub_ps(two2, _mm512_mul_ps(den, rcp)));
	rcp = _mm512_mul_ps(rcp, _mm512_sub_ps(two2, _mm512_mul_ps(den, rcp)));
	const __m512 q = _mm512_mul_ps(_mm512_mul_ps(d, d), rcp);
	__m512 sp = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_GT_OQ),
					_mm512_max_ps(q, _mm512_set1_ps(0.125f)));
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	__m512 l = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(p->B), hs),
				 _mm512_mul_ps(_mm512_set1_ps(p->spec), sp));
	l = _mm512_min_ps(_mm512_max_ps(l, _mm512_set1_ps(-1024.0f)), _mm512_set1_ps(1024.0f));
	/* the low 16 bits in both halves, as C's (lq & 0xffff) | lq << 16 */
	const __m512i lq =
		_mm512_shuffle_epi8(_mm512_cvtps_epi32(l), /* to nearest, as lrintf */
				    _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8,
									 9, 8, 9, 12, 13, 12, 13)));
	if (lift) /* kept for the anti-aliasing, as color_row_rgb_noaa's unfused loop keeps them */
		_mm512_mask_storeu_epi32(lift + x, (__mmask16)((1u << n) - 1), lq);
	/* the first n pixels' 3 bytes each; the lanes past them read the frame's first taps
	 * (their positions, past the row's end, may fold to beyond the background) */
	const int n0 = n < 8 ? n : 8, n1 = n > 8 ? n - 8 : 0;
	if (n < 16)
		off = _mm512_maskz_mov_epi32((__mmask16)((1u << n) - 1), off);
	shade8(bgx, p->bs, _mm512_castsi512_si256(off), wq, lq, 0,
	       (__mmask64)((1ull << 3 * n0) - 1), o + 3 * x);
	if (n1)
		shade8(bgx, p->bs, _mm512_extracti64x4_epi64(off, 1), wq, lq, 1,
		       (__mmask64)((1ull << 3 * n1) - 1), o + 3 * x + 24);
}

/* 16 pixels from column x, of which the first n are stored, from column sums made by
 * column_sums (which maps the columns beyond the frame): the two ends of a row. */
static inline __attribute__((always_inline)) AVX512_TARGET void
color16_edge(const void *const r[5], int x, int n, int y, const int is_int, const int wrap,
	     const color_par *p, const uint8_t *bgx, uint8_t *o, int32_t *lift)
{
	float v[20], d2[20];
	column_sums(r, p->w, x, 16, is_int, wrap, v, d2);
	const __m512 vv[5] = {_mm512_loadu_ps(v), _mm512_loadu_ps(v + 1), _mm512_loadu_ps(v + 2),
			      _mm512_loadu_ps(v + 3), _mm512_loadu_ps(v + 4)};
	const __m512 e[3] = {_mm512_loadu_ps(d2 + 1), _mm512_loadu_ps(d2 + 2),
			     _mm512_loadu_ps(d2 + 3)};
	color16(x, y, wrap, p, bgx, o, lift, vv, e, n);
}

/* Pixels [xa, xb) of a row (xa a multiple of 16, xb one or w), 16 at a time: the
 * interior with column sums sliding along the row (each computed once, its neighbours'
 * taken by lane shifts, valignd), the ends from column_sums. */
static inline __attribute__((always_inline)) AVX512_TARGET void
color_row(const void *const r[5], int y, const int is_int, const int wrap, const color_par *p,
	  const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa, int xb)
{
	const int w = p->w;
	const uint8_t *pf = bgx + (size_t)(y + 8 < p->hgt ? y + 8 : p->hgt - 1) * p->bs;
	int x = xa;
	if (x == 0 && xb > 0) {
		color16_edge(r, 0, w < 16 ? w : 16, y, is_int, wrap, p, bgx, o, lift);
		x = 16;
	}
	if (x < xb && x + 18 <= w) {
		__m512 vp, dp, vc, dc, vn, dn;
		sums16(r, x - 16, (__mmask16)0xffff, is_int, &vp, &dp);
		sums16(r, x, (__mmask16)0xffff, is_int, &vc, &dc);
#define SHIFT(hi, lo, k)                                                                           \
	_mm512_castsi512_ps(                                                                       \
		_mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), k))
		for (; x < xb && x + 18 <= w; x += 16) {
			/* the next 16 columns, as many as the row has (at least two) */
			const int left = w - (x + 16);
			const __mmask16 m =
				left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
			sums16(r, x + 16, m, is_int, &vn, &dn);
			const __m512 v[5] = {SHIFT(vc, vp, 14), SHIFT(vc, vp, 15), vc,
					     SHIFT(vn, vc, 1), SHIFT(vn, vc, 2)};
			const __m512 d[3] = {SHIFT(dc, dp, 15), dc, SHIFT(dn, dc, 1)};
			color16(x, y, wrap, p, bgx, o, lift, v, d, 16);
			/* the background 4 rows down, one cache line (16 pixels) per run */
			_mm_prefetch((const char *)(pf + 4 * (size_t)x), _MM_HINT_T0);
			vp = vc, dp = dc, vc = vn, dc = dn;
		}
#undef SHIFT
	}
	for (; x < xb; x += 16)
		color16_edge(r, x, w - x < 16 ? w - x : 16, y, is_int, wrap, p, bgx, o, lift);
}

#define COLOR_ROW(name, is_int, wrap)                                                              \
	AVX512_TARGET static void name(const void *const r[5], int y, const color_par *p,          \
				       const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa,      \
				       int xb)                                                     \
	{                                                                                          \
		color_row(r, y, is_int, wrap, p, bgx, o, lift, xa, xb);                            \
	}
COLOR_ROW(color_row_wrap_i32, 1, 1)
COLOR_ROW(color_row_clamp_i32, 1, 0)
COLOR_ROW(color_row_wrap_f32, 0, 1)
COLOR_ROW(color_row_clamp_f32, 0, 0)
#endif

typedef void (*color_row_fn)(const void *const[5], int, const color_par *, const uint8_t *,
			     uint8_t *, int32_t *, int, int);

static int simd_level = 3;

void render_set_simd(int level)
{
	simd_level = level;
}

int render_simd_level(void) { return simd_level; }

/* The vector level simd_level allows on this CPU: 3 AVX-512 (with VNNI; the fused
 * kernel), 2 AVX2, 1 SSE2 (geometry only; shading in C), 0 plain C. */
static int cpu_level(void)
{
#ifdef __x86_64__
	if (simd_level >= 3 && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd") &&
	    __builtin_cpu_supports("avx512vnni"))
		return 3;
	if (simd_level >= 2 && __builtin_cpu_supports("avx2"))
		return 2;
#endif
	return simd_level >= 1 ? 1 : 0;
}

/* How the anti-aliasing lookups run (render_aa.vec): 2, 16 pixels at a time in
 * refract_aa.c's AVX-512 kernel, which needs F, BW and VNNI (at level 3, and on AVX-512
 * CPUs without CD, DQ or VL, where the rest of the colour pass runs AVX2); 1, 8 at a time
 * in AVX2 (level 2); 0, the plain loop. */
static int aa_vec(int level)
{
#ifdef __x86_64__
	if (level == 3 || (level == 2 && simd_level >= 3 && __builtin_cpu_supports("avx512f") &&
			   __builtin_cpu_supports("avx512bw") &&
			   __builtin_cpu_supports("avx512vnni")))
		return 2;
	return level == 2;
#else
	(void)level;
	return 0;
#endif
}

/* Shades w pixels at the vector level `level` (below 3: level 3 draws with the fused
 * kernel, color_row). */
static void shade_row(const uint8_t *bgx, int32_t bs, row_taps t, int w, int level, uint8_t *o)
{
#ifdef __x86_64__
	if (level == 2) {
		shade_row_avx2(bgx, bs, t, w, o);
		return;
	}
#else
	(void)level;
#endif
	shade_row_c(bgx, bs, t, 0, w, o);
}

/* One frame's set-up of the colour pass. */
typedef struct color_frame {
	const render_in *in;
	color_par par;
	int level;
	row_geometry_fn geom;
	color_row_fn fused;
	int aa;      /* supersample steep refraction (refract_aa.c) */
	render_aa aap;
	render_hl hl; /* and filter its highlight (highlight.c) */
	int reach;   /* a pixel can differ from still water's within this many samples */
} color_frame;

static void color_setup(const render_in *in, color_frame *cf)
{
	const int wrap = in->wrap;
	const scene_render *rs = &in->sc->render;
	const double px = in->px;
	/* Half vector between the sun (up-left, high) and the viewer straight above. */
	const float lx = -0.35f, ly = -0.45f, lz = 0.82f;
	const float hl = sqrtf(lx * lx + ly * ly + (lz + 1) * (lz + 1));
	const double ng = NORMAL_GAIN * px;
	const tp_surface *sf = in->surf;
	const double u = sf->scale; /* height units per stored unit */
	cf->in = in;
	cf->par = (color_par){
		.w = in->w,
		.hgt = in->h,
		.bs = (in->w + 1) * 4,
		.R = (float)(REFRACT_PX * rs->refraction * px * px * u / 32.0),
		.B = (float)(REFLECT_LEVELS * rs->reflection * u / 16.0),
		.spec = (float)rs->specular * 255.0f,
		.g = {(float)(-ng * u / 32 * (lx / hl)), (float)(-ng * u / 32 * (ly / hl)),
		      (lz + 1) / hl},
		.ng2 = (float)(ng * u / 32 * (ng * u / 32)),
	};
	const int is_int = sf->type == TP_SAMPLE_I32;
	cf->level = cpu_level();
	const row_geometry_fn *geoms =
		wrap ? (is_int ? row_geometry_wrap_i32 : row_geometry_wrap_f32)
		     : (is_int ? row_geometry_clamp_i32 : row_geometry_clamp_f32);
	cf->geom = geoms[cf->level];
	cf->fused = NULL;
	/* with anti-aliasing a pixel also reads its neighbours' offsets, one sample further */
	cf->aa = rs->antialias || render_aa_forced();
	cf->aap = (render_aa){in->w,
			      in->h,
			      wrap,
			      cf->par.bs,
			      in->bgx,
			      aa_vec(cf->level),
			      wrap ? NULL : in->bgflat,
			      in->bgsat,
			      in->bgsat_stride};
	cf->hl = (render_hl){cf->par.R,    cf->par.spec, cf->par.g[0],
			     cf->par.g[1], cf->par.g[2], cf->par.ng2};
	cf->reach = cf->aa ? 3 : 2;
#ifdef __x86_64__
	if (cf->level == 3)
		cf->fused = wrap ? (is_int ? color_row_wrap_i32 : color_row_wrap_f32)
				 : (is_int ? color_row_clamp_i32 : color_row_clamp_f32);
#endif
}

/* Rows y-2 .. y+2 of a surface: beyond the frame the edge row, or the opposite one with
 * wrap. */
static void surface_rows(const tp_surface *sf, int y, const void *r[5])
{
	const size_t ss = sf->type == TP_SAMPLE_I32 ? sizeof(int32_t) : sizeof(float);
	for (int k = 0; k < 5; k++) {
		int yy = y + k - 2;
		if (yy < 0 || yy >= sf->h)
			yy = sf->wrap ? (yy + 2 * sf->h) % sf->h : yy < 0 ? 0 : sf->h - 1;
		r[k] = (const char *)sf->data + (size_t)yy * sf->stride * ss;
	}
}

/* The refraction offsets R * slope of one row from its five surface rows r (surface_rows),
 * columns xs .. xs+n-1 (any: column_sums maps those beyond the frame), n <= CHUNK + 2:
 * row_geometry's operations in its order, so the same bits. Away from the frame's edges
 * the column sums are taken without the remapping, a loop the compiler vectorises; each
 * variant below is that body for one vector level. */
static inline __attribute__((always_inline)) void offsets_body(const void *const r[5],
							       const int is_int, int wrap, int w,
							       int xs, int n, float R,
							       float *restrict ox,
							       float *restrict oy)
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

typedef void (*offsets_fn)(const void *const[5], int, int, int, int, float, float *, float *);
#define OFFS_ARGS                                                                                  \
	(const void *const r[5], int wrap, int w, int xs, int n, float R, float *ox, float *oy)
#define OFFS_BODY(is_int) { offsets_body(r, is_int, wrap, w, xs, n, R, ox, oy); }
#ifdef __x86_64__
#define OFFS_TARGETS(name, is_int)                                                                 \
	__attribute__((optimize("no-tree-vectorize"))) static void name##_c OFFS_ARGS             \
		OFFS_BODY(is_int) static void name##_sse2 OFFS_ARGS OFFS_BODY(is_int)             \
		__attribute__((target("avx2"))) static void name##_avx2 OFFS_ARGS                 \
		OFFS_BODY(is_int) __attribute__((target("arch=x86-64-v4"))) static void           \
		name##_avx512 OFFS_ARGS OFFS_BODY(is_int) static const offsets_fn name[4] = {     \
			name##_c, name##_sse2, name##_avx2, name##_avx512};
#else
#define OFFS_TARGETS(name, is_int)                                                                 \
	__attribute__((optimize("no-tree-vectorize"))) static void name##_c OFFS_ARGS             \
		OFFS_BODY(is_int) static void name##_vec OFFS_ARGS OFFS_BODY(is_int)              \
		static const offsets_fn name[4] = {name##_c, name##_vec, name##_vec, name##_vec};
#endif
OFFS_TARGETS(offsets_i32, 1)
OFFS_TARGETS(offsets_f32, 0)

/* The offsets of row y (any row: surface_rows maps it), columns xs .. xs+n-1. */
static void offset_row(const color_frame *cf, const tp_surface *sf, int y, int xs, int n,
		       float *ox, float *oy)
{
	const void *r[5];
	surface_rows(sf, y, r);
	const offsets_fn *f = sf->type == TP_SAMPLE_I32 ? offsets_i32 : offsets_f32;
	f[cf->level](r, cf->in->wrap, cf->par.w, xs, n, cf->par.R, ox, oy);
}

/* The refraction offsets of the last three rows a thread asked for, whole rows [xa - 1,
 * xb + 1): anti-aliasing reads rows y - 1, y and y + 1 for row y, and a thread draws
 * consecutive rows, so each row's offsets are computed once instead of three times. The
 * values are offset_row's (a column's offset does not depend on the run it is in). */
typedef struct aa_ring {
	int cap;            /* floats per row and component */
	float *buf;         /* 3 x 2 x cap */
	const tp_surface *sf[3];
	int y[3], xa[3], xb[3];
	int32_t *lift;      /* the lifts of the row being drawn, entry x (w entries) */
} aa_ring;

static void aa_ring_init(aa_ring *r, int w)
{
	r->cap = w + 2;
	r->buf = malloc((size_t)6 * (size_t)r->cap * sizeof *r->buf);
	r->lift = malloc((size_t)w * sizeof *r->lift);
	for (int k = 0; k < 3; k++)
		r->sf[k] = NULL;
}

/* Row yy's offsets [xa - 1, xb + 1) into ox, oy (entry 0: column xa - 1). */
static void aa_ring_row(aa_ring *r, const color_frame *cf, const tp_surface *sf, int yy, int xa,
			int xb, int keep_lo, float **ox, float **oy)
{
	int slot = -1;
	for (int k = 0; k < 3 && slot < 0; k++)
		if (r->sf[k] == sf && r->y[k] == yy && r->xa[k] == xa && r->xb[k] == xb)
			slot = k;
	if (slot < 0) { /* a slot holding none of rows keep_lo .. keep_lo + 2 */
		for (int k = 0; k < 3 && slot < 0; k++)
			if (r->sf[k] != sf || r->xa[k] != xa || r->xb[k] != xb ||
			    r->y[k] < keep_lo || r->y[k] > keep_lo + 2)
				slot = k;
		slot = slot < 0 ? 0 : slot; /* (cannot happen: 3 slots, 3 distinct rows) */
		float *x = r->buf + (size_t)2 * slot * r->cap, *y = x + r->cap;
		for (int c = xa - 1; c < xb + 1; c += CHUNK) {
			const int n = xb + 1 - c < CHUNK ? xb + 1 - c : CHUNK;
			offset_row(cf, sf, yy, c, n, x + (c - (xa - 1)), y + (c - (xa - 1)));
		}
		r->sf[slot] = sf;
		r->y[slot] = yy;
		r->xa[slot] = xa;
		r->xb[slot] = xb;
	}
	*ox = r->buf + (size_t)2 * slot * r->cap;
	*oy = *ox + r->cap;
}

/* Redraws the pixels of [xa, xb) of row y whose refraction is steep (refract_aa.c), with
 * the offsets from `ring` (NULL: computed here, per run) and the lifts the colour pass
 * drew the row with, entry x (NULL: computed again for the steep pixels). */
static void aa_row(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o, int xa, int xb,
		   aa_ring *ring, int32_t *lift)
{
	const void *r[5];
	surface_rows(sf, y, r);
	float ob[3][2][CHUNK + 2];
	float *rows[3][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
	if (ring && ring->buf)
		for (int k = 0; k < 3; k++)
			aa_ring_row(ring, cf, sf, y - 1 + k, xa, xb, y - 1, &rows[k][0], &rows[k][1]);
	uint8_t nsub[CHUNK], steep[CHUNK];
	int32_t buf[3 * CHUNK] __attribute__((aligned(64)));
	float fbuf[2 * CHUNK + 8] __attribute__((aligned(64)));
	row_taps t = {buf, buf + CHUNK, buf + 2 * CHUNK, fbuf, fbuf + CHUNK + 4};
	for (int xs = xa; xs < xb; xs += CHUNK) {
		const int n = xb - xs < CHUNK ? xb - xs : CHUNK;
		render_aa_offsets ofs;
		for (int k = 0; k < 3; k++) {
			if (rows[k][0]) { /* entry 0 of the run: column xs - 1 */
				ofs.row[k][0] = rows[k][0] + (xs - xa);
				ofs.row[k][1] = rows[k][1] + (xs - xa);
			} else {
				offset_row(cf, sf, y - 1 + k, xs - 1, n + 2, ob[k][0], ob[k][1]);
				ofs.row[k][0] = ob[k][0];
				ofs.row[k][1] = ob[k][1];
			}
		}
		if (!render_aa_plan(n, &ofs, nsub))
			continue;
		memcpy(steep, nsub, (size_t)n);
		int left = render_aa_flat(&cf->aap, y, xs, n, &ofs, nsub);
		if (lift) { /* the lifts color_row_rgb_noaa just drew with, the highlight filtered */
			left += render_aa_highlight(&cf->hl, n, &ofs, steep, nsub, lift + xs);
			if (left)
				render_aa_shade(&cf->aap, y, xs, n, &ofs, nsub, lift + xs, o);
			continue;
		}
		/* Otherwise (no ring, so no lifts were kept) the lifts of each cluster of
		 * steep pixels (runs closer than AA_GAP pixels taken together; a pixel's
		 * geometry does not depend on where its run starts), so the geometry is
		 * redone for the steep pixels, not the whole chunk. */
		enum { AA_GAP = 16 };
		for (int a = 0; a < n;) {
			while (a < n && !steep[a])
				a++;
			if (a == n)
				break;
			int b = a + 1, gap = 0;
			for (int e = a + 1; e < n && gap < AA_GAP; e++) {
				if (steep[e]) {
					b = e + 1;
					gap = 0;
				} else {
					gap++;
				}
			}
			cf->geom(r, &cf->par, y, xs + a, b - a, t);
			render_aa_offsets from = ofs;
			for (int k = 0; k < 3; k++)
				from.row[k][0] += a, from.row[k][1] += a;
			render_aa_highlight(&cf->hl, b - a, &from, steep + a, nsub + a, t.lift);
			render_aa_shade(&cf->aap, y, xs + a, b - a, &from, nsub + a, t.lift, o);
			a = b;
		}
	}
}

static void color_row_rgb_noaa(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o,
			       int xa, int xb, int32_t *lift);

/* Pixels [xa, xb) of row y of the picture into o (the row's 3 * w bytes), from the
 * surface `sf`; xa is a multiple of 16 and xb one or w. */
static void color_row_rgb(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o, int xa,
			  int xb, aa_ring *ring)
{
	/* the lifts kept for anti-aliasing */
	int32_t *lift = cf->aa && ring && ring->buf && ring->lift ? ring->lift : NULL;
	color_row_rgb_noaa(cf, sf, y, o, xa, xb, lift);
	if (cf->aa)
		aa_row(cf, sf, y, o, xa, xb, ring, lift);
}

/* color_row_rgb without anti-aliasing (the colour pass alone): one lookup a pixel. */
static void color_row_rgb_noaa(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o,
			       int xa, int xb, int32_t *lift)
{
	const render_in *in = cf->in;
	const int hgt = cf->par.hgt;
	const color_par *par = &cf->par;
	const void *r[5];
	surface_rows(sf, y, r);
	if (cf->fused) { /* it prefetches as it goes */
		cf->fused(r, y, par, in->bgx, o, lift, xa, xb);
		return;
	}
	/* The background rows a few output rows ahead are fetched while this one is
	 * shaded: the taps are gathered, which the hardware prefetcher does not follow. */
	const uint8_t *pf = in->bgx + (size_t)(y + 4 < hgt ? y + 4 : hgt - 1) * par->bs;
	for (int k = 0; k < par->bs; k += 64)
		__builtin_prefetch(pf + k);
	/* Runs of CHUNK pixels: pass 0's and pass 1's results stay in L1 for pass 2. */
	int32_t buf[3 * CHUNK] __attribute__((aligned(64)));
	float fbuf[2 * CHUNK + 8] __attribute__((aligned(64)));
	row_taps t = {buf, buf + CHUNK, buf + 2 * CHUNK, fbuf, fbuf + CHUNK + 4};
	for (int xs = xa; xs < xb; xs += CHUNK) {
		int n = xb - xs < CHUNK ? xb - xs : CHUNK;
		cf->geom(r, par, y, xs, n, t);
		shade_row(in->bgx, par->bs, t, n, cf->level, o + 3 * xs);
		if (lift) /* kept for anti-aliasing, which would otherwise redo the geometry */
			memcpy(lift + xs, t.lift, (size_t)n * sizeof *lift);
	}
}

/* The pixels of rows ya .. yb that can differ from still water's, [*xa, *xb) (empty:
 * xa >= xb): those within `reach` columns of a nonzero sample of rows ya - reach ..
 * yb + reach (the smoothing's 2, and 1 more with anti-aliasing, which reads the
 * neighbours' offsets; rows beyond the frame are its edge rows, surface_rows), widened to
 * multiples of 16. Every other pixel sees a level surface, as in the flat picture. */
static void active_cols(const tp_surface *sf, int ya, int yb, int reach, int *xa, int *xb)
{
	int lo = sf->w, hi = 0;
	for (int y = ya - reach; y <= yb + reach; y++) {
		const int yy = y < 0 ? 0 : y >= sf->h ? sf->h - 1 : y;
		const tp_span sp = sf->spans[yy];
		if (sp.lo < sp.hi) {
			lo = sp.lo < lo ? sp.lo : lo;
			hi = sp.hi > hi ? sp.hi : hi;
		}
	}
	if (lo >= hi) {
		*xa = *xb = 0;
		return;
	}
	*xa = lo - reach < 0 ? 0 : (lo - reach) & ~15;
	hi = (hi + reach + 15) & ~15;
	*xb = hi < sf->w ? hi : sf->w;
}

/* Row y into o: the pixels that can differ from still water drawn, the others copied from
 * the flat picture (when the surface has spans and there is one). */
static void color_row_span(const color_frame *cf, int y, uint8_t *o, aa_ring *ring)
{
	const render_in *in = cf->in;
	const int w = cf->par.w;
	int xa = 0, xb = w;
	if (in->flat && in->flat->fmt == TP_RGB8 && in->surf->spans) {
		active_cols(in->surf, y, y, cf->reach, &xa, &xb);
		const uint8_t *f = tp_image_row(in->flat, y);
		if (xa >= xb) {
			memcpy(o, f, 3 * (size_t)w);
			return;
		}
		memcpy(o, f, 3 * (size_t)xa);
		memcpy(o + 3 * xb, f + 3 * xb, 3 * (size_t)(w - xb));
	}
	color_row_rgb(cf, in->surf, y, o, xa, xb, ring);
}

void render_color(const render_in *in, tp_image *out)
{
	color_frame cf;
	color_setup(in, &cf);
	if (in->side) {
		/* One thread takes the side job, the others start on the rows, and it joins
		 * them when done: rows in chunks handed out as threads come free (each row's
		 * bytes do not depend on who draws it). Chunks of 48 rows: at 1080p 1.6% faster
		 * than 16 (the kernel's prefetch runs on longer), and than 32 or 96; contiguous
		 * bands with the job's thread given fewer rows were no faster. */
#pragma omp parallel
		{
			aa_ring ring = {0};
			if (cf.aa)
				aa_ring_init(&ring, in->w);
#pragma omp single nowait
			in->side(in->side_arg);
#pragma omp for schedule(dynamic, 48)
			for (int y = 0; y < in->h; y++)
				color_row_span(&cf, y, tp_image_row(out, y), &ring);
			free(ring.buf);
			free(ring.lift);
		}
		return;
	}
#pragma omp parallel
	{
		aa_ring ring = {0};
		if (cf.aa)
			aa_ring_init(&ring, in->w);
#pragma omp for schedule(static)
		for (int y = 0; y < in->h; y++)
			color_row_span(&cf, y, tp_image_row(out, y), &ring);
		free(ring.buf);
		free(ring.lift);
	}
}

int render_color_flat(const render_in *in, tp_image *out)
{
	/* every row of the level surface is the same row of zeros (stride 0), with room
	 * to spare past its end */
	void *zero = calloc((size_t)in->w + 64, 4);
	if (!zero)
		return -1;
	tp_surface level = *in->surf;
	level.data = zero;
	level.stride = 0;
	level.spans = NULL;
	color_frame cf;
	color_setup(in, &cf);
#pragma omp parallel for schedule(static)
	for (int y = 0; y < in->h; y++)
		color_row_rgb(&cf, &level, y, tp_image_row(out, y), 0, in->w, NULL);
	free(zero);
	return 0;
}

/* Columns [a, b) of row pair j of the flat 4:2:0 picture into y0, y1, u, v (a, b even). */
static void copy_flat(const tp_image *flat, int j, int a, int b, uint8_t *y0, uint8_t *y1,
		      uint8_t *u, uint8_t *v)
{
	if (a >= b)
		return;
	ptrdiff_t ls[3];
	const uint8_t *pl[3];
	for (int k = 0; k < 3; k++)
		pl[k] = tp_image_plane(flat, k, &ls[k]);
	memcpy(y0 + a, pl[0] + (ptrdiff_t)2 * j * ls[0] + a, (size_t)(b - a));
	memcpy(y1 + a, pl[0] + (ptrdiff_t)(2 * j + 1) * ls[0] + a, (size_t)(b - a));
	memcpy(u + a / 2, pl[1] + (ptrdiff_t)j * ls[1] + a / 2, (size_t)(b - a) / 2);
	memcpy(v + a / 2, pl[2] + (ptrdiff_t)j * ls[2] + a / 2, (size_t)(b - a) / 2);
}

void render_color_yuv(const render_in *in, uint8_t *rgb_rows, tp_image *out)
{
	color_frame cf;
	color_setup(in, &cf);
	const tp_image *flat =
		in->flat && in->flat->fmt == TP_YUV420 && in->surf->spans ? in->flat : NULL;
	const int w = in->w;
	ptrdiff_t ls[3];
	uint8_t *pl[3];
	for (int k = 0; k < 3; k++)
		pl[k] = tp_image_plane(out, k, &ls[k]);
	const size_t row = ((size_t)w * 3 + 63) & ~(size_t)63;
#pragma omp parallel
	{
		/* two RGB rows per thread, in cache, converted as soon as they are drawn */
		uint8_t *r0 = rgb_rows + (size_t)omp_get_thread_num() * 2 * row, *r1 = r0 + row;
		aa_ring ring = {0};
		if (cf.aa)
			aa_ring_init(&ring, w);
#pragma omp for schedule(static)
		for (int j = 0; j < in->h / 2; j++) {
			uint8_t *y0 = pl[0] + (ptrdiff_t)2 * j * ls[0], *y1 = y0 + ls[0];
			uint8_t *u = pl[1] + (ptrdiff_t)j * ls[1], *v = pl[2] + (ptrdiff_t)j * ls[2];
			/* the columns either row can draw differently from still water; the
			 * others (whole 2x2 blocks, xa and xb being even) from the flat picture */
			int xa = 0, xb = w;
			if (flat) {
				active_cols(in->surf, 2 * j, 2 * j + 1, cf.reach, &xa, &xb);
				if (xa >= xb)
					xa = xb = w;
				copy_flat(flat, j, 0, xa, y0, y1, u, v);
				copy_flat(flat, j, xb, w, y0, y1, u, v);
			}
			if (xa >= xb)
				continue;
			color_row_rgb(&cf, in->surf, 2 * j, r0, xa, xb, &ring);
			color_row_rgb(&cf, in->surf, 2 * j + 1, r1, xa, xb, &ring);
			tp_rgb_to_yuv420_rows(r0 + 3 * xa, r1 + 3 * xa, xb - xa, y0 + xa, y1 + xa,
					      u + xa / 2, v + xa / 2);
		}
		free(ring.buf);
		free(ring.lift);
	}
}

void render_slopes(const tp_surface *sf, float *dx, float *dy)
{
	const int w = sf->w, hgt = sf->h, wrap = sf->wrap, is_int = sf->type == TP_SAMPLE_I32;
	const float u32 = sf->scale / 32.0f;
	float v[CHUNK + 4], d2[CHUNK + 4];
	for (int y = 0; y < hgt; y++) {
		const void *r[5];
		surface_rows(sf, y, r);
		for (int xs = 0; xs < w; xs += CHUNK) {
			const int n = w - xs < CHUNK ? w - xs : CHUNK;
			if (is_int)
				column_sums(r, w, xs, n, 1, wrap, v, d2);
			else
				column_sums(r, w, xs, n, 0, wrap, v, d2);
			for (int i = 0; i < n; i++) {
				/* row_geometry's slopes, scaled to height units per pixel */
				dx[(size_t)y * w + xs + i] =
					((v[i + 4] - v[i]) + 2.0f * (v[i + 3] - v[i + 1])) * u32;
				dy[(size_t)y * w + xs + i] =
					((d2[i + 1] + d2[i + 3]) + 2.0f * d2[i + 2]) * u32;
			}
		}
	}
}
