/*
 * refract.c - the "color" mode: the background seen through the moving surface.
 *
 * Seeds 000/001: each pixel shows the background displaced by the local slope,
 *     (sx, sy) = (x, y) + R * (h(x+1,y) - h(x-1,y), h(x,y+1) - h(x,y-1)) / 2
 * where R = REFRACT_PX * refraction * s^2 (pixels of offset per height unit of slope; s =
 * output pixels per scene unit: a slope per pixel is 1/s of the same slope per scene unit,
 * and the offset should be s times as many pixels, so that every size shows the same),
 * sampled bilinearly; then seed 001's reflection term, brightness following height,
 *     c += REFLECT_LEVELS * reflection * h,
 * then the water tint, c = mix(c, tint, tint_strength), and a sun highlight from the
 * surface normal n = normalize(-g*dh/dx, -g*dh/dy, 1), g = NORMAL_GAIN * s (Blinn-Phong (n.h)^64, taken as
 * ((m.h)^2 / |m|^2)^32 with the unnormalised m, so no square root, by repeated squaring).
 * Everything is per pixel, so rows can be split across threads freely.
 *
 * Rows go in runs of CHUNK pixels, two passes per run so that pass 1's results stay in
 * L1: a branch-free float pass over the padded heights that the compiler vectorises
 * (slopes, sample positions, brightness lift; an AVX2 clone where the CPU has it), then
 * a fixed-point pass of bilinear taps from the padded RGBX background (AVX2 four pixels
 * at a time, SSE2 one pixel at a time, or plain C: the very same integers):
 *     top = (p00*(256-wx) + p01*wx + 128) >> 8,  bot likewise,
 *     c   = (top*(256-wy) + bot*wy + 128) >> 8,
 *     out = clamp(((c*keep + tint_q + 128) >> 8) + lift, 0, 255)
 * with wx, wy the sample's fractions in 1/256 and keep = 256 - tint_q/tint.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif

#include "render/render_impl.h"

#define REFRACT_PX 24.0f     /* background offset in pixels per height unit of slope */
#define REFLECT_LEVELS 40.0f /* brightness levels per height unit */
#define NORMAL_GAIN 6.0      /* slope exaggeration for the highlight normal, per scene unit */
#define CHUNK 256            /* pixels per pass-1/pass-2 run */

/* NaN-safe (a NaN becomes lo) and branch-free: maxss then minss. */
static inline float clampf(float v, float lo, float hi)
{
	v = v > lo ? v : lo;
	return v < hi ? v : hi;
}

/* Per-pixel results of pass 1 for one row. */
typedef struct row_taps {
	int32_t *off;  /* byte offset of the top-left tap in the padded background */
	int32_t *wx;   /* horizontal weights packed for pmaddwd: wx << 16 | (256 - wx), wx 0..256 */
	int32_t *wy;   /* vertical weights, packed likewise */
	int32_t *lift; /* brightness lift in levels, -1024..1024, in both 16-bit halves */
} row_taps;

/* Pass 1 for one row. With wrap the offset is limited to one frame and shifted by +w/+h
 * so positions stay positive, truncation is floor, and whole frames fold back; without
 * wrap positions are clamped to the frame. `wrap` is a constant at each call site, so
 * each variant is a branch-free, vectorised loop. */
static inline __attribute__((always_inline)) void
row_geometry(const float *restrict up, const float *restrict mid, const float *restrict dn,
	     int w, int hgt, int y, int xs, int n, const int wrap, float R, float B, float spec,
	     float ng, const float hv[3], int32_t *restrict off, int32_t *restrict wxs,
	     int32_t *restrict wys, int32_t *restrict lifts)
{
	const float fw = (float)w, fh = (float)hgt, fy = (float)y;
	const int32_t bs = (w + 1) * 4;
	up += xs, mid += xs, dn += xs;
	for (int i = 0; i < n; i++) {
		const int x = xs + i;
		float dx = 0.5f * (mid[i + 2] - mid[i]);
		float dy = 0.5f * (dn[i + 1] - up[i + 1]);
		float ox = R * dx, oy = R * dy;
		float sx, sy;
		if (wrap) {
			sx = (float)x + clampf(ox, -fw, fw) + fw;
			sy = fy + clampf(oy, -fh, fh) + fh;
		} else {
			sx = clampf((float)x + ox, 0.0f, fw - 1.0f);
			sy = clampf(fy + oy, 0.0f, fh - 1.0f);
		}
		int32_t x0 = (int32_t)sx, y0 = (int32_t)sy;
		int32_t ax = (int32_t)((sx - (float)x0) * 256.0f + 0.5f);
		int32_t ay = (int32_t)((sy - (float)y0) * 256.0f + 0.5f);
		wxs[i] = (int32_t)((uint32_t)ax << 16) | (256 - ax);
		wys[i] = (int32_t)((uint32_t)ay << 16) | (256 - ay);
		if (wrap) { /* positions are in [0, 3w): fold into [0, w) */
			x0 -= w & -(x0 >= w);
			x0 -= w & -(x0 >= w);
			y0 -= hgt & -(y0 >= hgt);
			y0 -= hgt & -(y0 >= hgt);
		}
		off[i] = y0 * bs + x0 * 4;
		float nx = -ng * dx, ny = -ng * dy;
		float d = nx * hv[0] + ny * hv[1] + hv[2];
		float s = d > 0.0f ? d * d / (nx * nx + ny * ny + 1.0f) : 0.0f;
		s *= s; s *= s; s *= s; s *= s; s *= s;
		float l = clampf(B * mid[i + 1] + spec * s, -1024.0f, 1024.0f);
		uint32_t lq = (uint32_t)((int32_t)(l + 1024.5f) - 1024) & 0xffffu;
		lifts[i] = (int32_t)(lq | lq << 16);
	}
}

__attribute__((target_clones("avx2", "default"))) static void
row_geometry_wrap(const float *up, const float *mid, const float *dn, int w, int hgt, int y,
		  int xs, int n, float R, float B, float spec, float ng, const float hv[3], row_taps t)
{
	row_geometry(up, mid, dn, w, hgt, y, xs, n, 1, R, B, spec, ng, hv, t.off, t.wx, t.wy,
		     t.lift);
}

__attribute__((target_clones("avx2", "default"))) static void
row_geometry_clamp(const float *up, const float *mid, const float *dn, int w, int hgt, int y,
		   int xs, int n, float R, float B, float spec, float ng, const float hv[3], row_taps t)
{
	row_geometry(up, mid, dn, w, hgt, y, xs, n, 0, R, B, spec, ng, hv, t.off, t.wx, t.wy,
		     t.lift);
}

/* Pass 2, plain C: the fixed-point formula of the header, one channel at a time. */
static inline void shade_pixel(const uint8_t *p, int32_t bs, int32_t wxp, int32_t wyp,
			       int32_t liftp, int keep, const int tint_q[3], uint8_t *o)
{
	const int wx = wxp >> 16, wy = wyp >> 16, lift = (int16_t)(liftp & 0xffff);
	for (int k = 0; k < 3; k++) {
		int top = (p[k] * (256 - wx) + p[4 + k] * wx + 128) >> 8;
		int bot = (p[bs + k] * (256 - wx) + p[bs + 4 + k] * wx + 128) >> 8;
		int c = (top * (256 - wy) + bot * wy + 128) >> 8;
		int v = ((c * keep + tint_q[k] + 128) >> 8) + lift;
		o[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}

static void shade_row_c(const uint8_t *bgx, int32_t bs, row_taps t, int x, int w, int keep,
			const int tint_q[3], uint8_t *o)
{
	for (; x < w; x++)
		shade_pixel(bgx + t.off[x], bs, t.wx[x], t.wy[x], t.lift[x], keep, tint_q, o + 3 * x);
}

#ifdef __x86_64__
/* The same integers, four pixels at a time (AVX2). Each 128-bit lane holds one pixel's
 * two taps of a row as 16-bit pairs (r0 r1 g0 g1 b0 b1 x0 x1), so one pmaddwd with the
 * packed weights (256-wx, wx) gives the horizontal sums of all channels; top and bottom
 * results are paired the same way for the vertical step. Every intermediate stays below
 * 2^16 * 256, so 32-bit lanes are exact, and below 65536 after the shifts. */
/* 8 bytes at a in the low half, 8 bytes at b in the high half. */
static inline __m128i load_8_8(const uint8_t *a, const uint8_t *b)
{
	return _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)a), _mm_loadl_epi64((const __m128i *)b));
}

__attribute__((target("avx2"))) static void
shade_row_avx2(const uint8_t *bgx, int32_t bs, row_taps t, int w, int last, int keep,
	       const int tint_q[3], uint8_t *o)
{
	/* bytes r0 g0 b0 x0 r1 g1 b1 x1 -> words r0 r1 g0 g1 b0 b1 x0 x1 (low or high 8 bytes) */
	const __m256i lo = _mm256_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1,
					    0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1);
	const __m256i hi = _mm256_setr_epi8(8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1,
					    8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1);
	/* rgbx rgbx (two pixels' words packed to bytes) -> rgb rgb */
	const __m256i rgb = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
					     0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m256i r128 = _mm256_set1_epi32(128);
	const __m256i idx_ac = _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2);
	const __m256i idx_bd = _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3);
	const __m256i idx_l = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
	const __m256i keepv = _mm256_set1_epi16((short)keep);
	const __m256i tintv = _mm256_setr_epi16(
		(short)(tint_q[0] + 128), (short)(tint_q[1] + 128), (short)(tint_q[2] + 128), 128,
		(short)(tint_q[0] + 128), (short)(tint_q[1] + 128), (short)(tint_q[2] + 128), 128,
		(short)(tint_q[0] + 128), (short)(tint_q[1] + 128), (short)(tint_q[2] + 128), 128,
		(short)(tint_q[0] + 128), (short)(tint_q[1] + 128), (short)(tint_q[2] + 128), 128);
	/* Each store writes 8 bytes for 2 pixels (6 used); the 2 spare bytes land on the next
	 * pixel, which is written later, so only a row's last run must keep one pixel back. */
	const int end = last ? w - 1 : w;
	int x = 0;
	for (; x + 4 <= end; x += 4) {
		const uint8_t *pa = bgx + t.off[x], *pb = bgx + t.off[x + 1];
		const uint8_t *pc = bgx + t.off[x + 2], *pd = bgx + t.off[x + 3];
		/* lanes: [A | C] in the low 8 bytes, [B | D] in the high 8 bytes */
		__m128i ab = load_8_8(pa, pb), cd = load_8_8(pc, pd);
		__m128i ab1 = load_8_8(pa + bs, pb + bs), cd1 = load_8_8(pc + bs, pd + bs);
		__m256i top = _mm256_inserti128_si256(_mm256_castsi128_si256(ab), cd, 1);
		__m256i bot = _mm256_inserti128_si256(_mm256_castsi128_si256(ab1), cd1, 1);

		__m256i wx4 = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(t.wx + x)));
		__m256i wy4 = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(t.wy + x)));
		__m256i wx_ac = _mm256_permutevar8x32_epi32(wx4, idx_ac);
		__m256i wx_bd = _mm256_permutevar8x32_epi32(wx4, idx_bd);
		/* top = (p0*(256-wx) + p1*wx + 128) >> 8, and the bottom row likewise */
		__m256i t_ac = _mm256_madd_epi16(_mm256_shuffle_epi8(top, lo), wx_ac);
		__m256i t_bd = _mm256_madd_epi16(_mm256_shuffle_epi8(top, hi), wx_bd);
		__m256i b_ac = _mm256_madd_epi16(_mm256_shuffle_epi8(bot, lo), wx_ac);
		__m256i b_bd = _mm256_madd_epi16(_mm256_shuffle_epi8(bot, hi), wx_bd);
		t_ac = _mm256_srli_epi32(_mm256_add_epi32(t_ac, r128), 8);
		t_bd = _mm256_srli_epi32(_mm256_add_epi32(t_bd, r128), 8);
		b_ac = _mm256_srli_epi32(_mm256_add_epi32(b_ac, r128), 8);
		b_bd = _mm256_srli_epi32(_mm256_add_epi32(b_bd, r128), 8);
		/* c = (top*(256-wy) + bot*wy + 128) >> 8 */
		__m256i c_ac = _mm256_madd_epi16(_mm256_or_si256(t_ac, _mm256_slli_epi32(b_ac, 16)),
						 _mm256_permutevar8x32_epi32(wy4, idx_ac));
		__m256i c_bd = _mm256_madd_epi16(_mm256_or_si256(t_bd, _mm256_slli_epi32(b_bd, 16)),
						 _mm256_permutevar8x32_epi32(wy4, idx_bd));
		c_ac = _mm256_srli_epi32(_mm256_add_epi32(c_ac, r128), 8);
		c_bd = _mm256_srli_epi32(_mm256_add_epi32(c_bd, r128), 8);
		/* words per lane: A rgbx B rgbx | C rgbx D rgbx */
		__m256i c = _mm256_packus_epi32(c_ac, c_bd);
		c = _mm256_srli_epi16(_mm256_add_epi16(_mm256_mullo_epi16(c, keepv), tintv), 8);
		__m256i l4 = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(t.lift + x)));
		c = _mm256_adds_epi16(c, _mm256_permutevar8x32_epi32(l4, idx_l));
		c = _mm256_shuffle_epi8(_mm256_packus_epi16(c, c), rgb);
		_mm_storel_epi64((__m128i *)(o + 3 * x), _mm256_castsi256_si128(c));
		_mm_storel_epi64((__m128i *)(o + 3 * x + 6), _mm256_extracti128_si256(c, 1));
	}
	shade_row_c(bgx, bs, t, x, w, keep, tint_q, o);
}
#endif

static int simd_level = 2;

void render_set_simd(int level)
{
	simd_level = level;
}

/* Shades w pixels; `last` says they end the row, so no store may spill past them. */
static void shade_row(const uint8_t *bgx, int32_t bs, row_taps t, int w, int last, int keep,
		      const int tint_q[3], uint8_t *o)
{
#ifdef __x86_64__
	if (simd_level >= 2 && __builtin_cpu_supports("avx2")) {
		shade_row_avx2(bgx, bs, t, w, last, keep, tint_q, o);
		return;
	}
#endif
	int x = 0;
#ifdef __SSE2__
	/* The same integers, four channels at once in 16-bit lanes. Every intermediate
	 * stays below 65536 (255*256 + 128), so unsigned 16-bit arithmetic is exact. */
	const __m128i zero = _mm_setzero_si128(), r128 = _mm_set1_epi16(128);
	const __m128i keepv = _mm_set1_epi16((short)keep);
	const __m128i tintv = _mm_setr_epi16((short)tint_q[0], (short)tint_q[1], (short)tint_q[2], 0,
					     0, 0, 0, 0);
	/* A row's last pixel is done in C: its 4-byte store would spill. */
	for (const int n = simd_level >= 1 ? w - last : 0; x < n; x++) {
		const uint8_t *p = bgx + t.off[x];
		const int wx = t.wx[x] >> 16, wy = t.wy[x] >> 16;
		__m128i q0, q1;
		memcpy(&q0, p, 8); /* unaligned 8-byte loads: p00 p01 / p10 p11 */
		memcpy(&q1, p + bs, 8);
		q0 = _mm_unpacklo_epi8(_mm_move_epi64(q0), zero);
		q1 = _mm_unpacklo_epi8(_mm_move_epi64(q1), zero);
		__m128i wxv = _mm_unpacklo_epi64(_mm_set1_epi16((short)(256 - wx)),
						 _mm_set1_epi16((short)wx));
		__m128i a = _mm_mullo_epi16(q0, wxv), b = _mm_mullo_epi16(q1, wxv);
		__m128i top = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(a, _mm_srli_si128(a, 8)), r128), 8);
		__m128i bot = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(b, _mm_srli_si128(b, 8)), r128), 8);
		__m128i wyv = _mm_unpacklo_epi64(_mm_set1_epi16((short)(256 - wy)),
						 _mm_set1_epi16((short)wy));
		__m128i v = _mm_mullo_epi16(_mm_unpacklo_epi64(top, bot), wyv);
		__m128i c = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(v, _mm_srli_si128(v, 8)), r128), 8);
		c = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(_mm_mullo_epi16(c, keepv), tintv), r128), 8);
		c = _mm_adds_epi16(c, _mm_set1_epi16((short)t.lift[x]));
		int32_t px = _mm_cvtsi128_si32(_mm_packus_epi16(c, c));
		memcpy(o + 3 * x, &px, 4); /* the 4th byte is overwritten by the next pixel */
	}
#endif
	shade_row_c(bgx, bs, t, x, w, keep, tint_q, o);
}

void render_color(const render_in *in, tp_image *out)
{
	const int w = in->w, hgt = in->h, wrap = in->wrap;
	const scene_render *rs = &in->sc->render;
	const double px = in->px;
	const float R = (float)(REFRACT_PX * rs->refraction * px * px);
	const float B = (float)(REFLECT_LEVELS * rs->reflection);
	const float ng = (float)(NORMAL_GAIN * px);
	const double ts = rs->tint_strength;
	const int tint_q[3] = { (int)lround(rs->tint[0] * 255.0 * ts * 256.0),
				(int)lround(rs->tint[1] * 255.0 * ts * 256.0),
				(int)lround(rs->tint[2] * 255.0 * ts * 256.0) };
	const int keep = (int)lround((1.0 - ts) * 256.0);
	const float spec = (float)rs->specular * 255.0f;
	/* Half vector between the sun (up-left, high) and the viewer straight above. */
	const float lx = -0.35f, ly = -0.45f, lz = 0.82f;
	const float hl = sqrtf(lx * lx + ly * ly + (lz + 1) * (lz + 1));
	const float hv[3] = { lx / hl, ly / hl, (lz + 1) / hl };
	const ptrdiff_t hs = w + 2;
	const int32_t bs = (w + 1) * 4;

#pragma omp parallel for schedule(static)
	for (int y = 0; y < hgt; y++) {
		/* Runs of CHUNK pixels: pass 1's results stay in L1 for pass 2. */
		int32_t buf[4 * CHUNK] __attribute__((aligned(64)));
		row_taps t = { buf, buf + CHUNK, buf + 2 * CHUNK, buf + 3 * CHUNK };
		const float *mid = in->hpad + (y + 1) * hs;
		uint8_t *o = tp_image_row(out, y);
		for (int xs = 0; xs < w; xs += CHUNK) {
			int n = w - xs < CHUNK ? w - xs : CHUNK;
			if (wrap)
				row_geometry_wrap(mid - hs, mid, mid + hs, w, hgt, y, xs, n, R, B,
						  spec, ng, hv, t);
			else
				row_geometry_clamp(mid - hs, mid, mid + hs, w, hgt, y, xs, n, R, B,
						   spec, ng, hv, t);
			shade_row(in->bgx, bs, t, n, xs + n == w, keep, tint_q, o + 3 * xs);
		}
	}
}
