/*
 * refract.c - the "color" mode: the background seen through the moving surface.
 *
 * Seeds 000/001: each pixel shows the background displaced by the local slope,
 *     (sx, sy) = (x, y) + R * (h(x+1,y) - h(x-1,y), h(x,y+1) - h(x,y-1)) / 2
 * where R = REFRACT_PX * refraction (pixels of offset per height unit of slope),
 * sampled bilinearly; then seed 001's reflection term, brightness following height,
 *     c += REFLECT_LEVELS * reflection * h,
 * then the water tint, c = mix(c, tint, tint_strength), and a sun highlight from the
 * surface normal n = normalize(-g*dh/dx, -g*dh/dy, 1) (Blinn-Phong, (n.h)^64 by repeated
 * squaring). Everything is per pixel, so rows can be split across threads freely.
 *
 * Each row runs in two passes: a branch-free float pass over the padded heights that
 * the compiler vectorises (slopes, sample positions, brightness lift), then a fixed-point
 * pass of bilinear taps from the padded RGBX background (SSE2 where available, with a
 * plain C loop computing the very same integers elsewhere):
 *     top = (p00*(256-wx) + p01*wx + 128) >> 8,  bot likewise,
 *     c   = (top*(256-wy) + bot*wy + 128) >> 8,
 *     out = clamp(((c*keep + tint_q + 128) >> 8) + lift, 0, 255)
 * with wx, wy the sample's fractions in 1/256 and keep = 256 - tint_q/tint.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "render/render_impl.h"

#define REFRACT_PX 24.0f     /* background offset in pixels per height unit of slope */
#define REFLECT_LEVELS 40.0f /* brightness levels per height unit */
#define NORMAL_GAIN 6.0f     /* slope exaggeration for the highlight normal */

/* NaN-safe (a NaN becomes lo) and branch-free: maxss then minss. */
static inline float clampf(float v, float lo, float hi)
{
	v = v > lo ? v : lo;
	return v < hi ? v : hi;
}

/* Per-pixel results of pass 1 for one row. */
typedef struct row_taps {
	int32_t *off;  /* byte offset of the top-left tap in the padded background */
	int32_t *wx;   /* horizontal fraction, 0..256 */
	int32_t *wy;   /* vertical fraction, 0..256 */
	int32_t *lift; /* brightness lift in levels, -1024..1024 */
} row_taps;

/* Pass 1 for one row. With wrap the offset is limited to one frame and shifted by +w/+h
 * so positions stay positive, truncation is floor, and whole frames fold back; without
 * wrap positions are clamped to the frame. `wrap` is a constant at each call site, so
 * each variant is a branch-free, vectorised loop. */
static inline __attribute__((always_inline)) void
row_geometry(const float *restrict up, const float *restrict mid, const float *restrict dn,
	     int w, int hgt, int y, const int wrap, float R, float B, float spec, const float hv[3],
	     int32_t *restrict off, int32_t *restrict wxs, int32_t *restrict wys,
	     int32_t *restrict lifts)
{
	const float fw = (float)w, fh = (float)hgt, fy = (float)y;
	const int32_t bs = (w + 1) * 4;
	for (int x = 0; x < w; x++) {
		float dx = 0.5f * (mid[x + 2] - mid[x]);
		float dy = 0.5f * (dn[x + 1] - up[x + 1]);
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
		wxs[x] = (int32_t)((sx - (float)x0) * 256.0f + 0.5f);
		wys[x] = (int32_t)((sy - (float)y0) * 256.0f + 0.5f);
		if (wrap) { /* positions are in [0, 3w): fold into [0, w) */
			x0 -= w & -(x0 >= w);
			x0 -= w & -(x0 >= w);
			y0 -= hgt & -(y0 >= hgt);
			y0 -= hgt & -(y0 >= hgt);
		}
		off[x] = y0 * bs + x0 * 4;
		float nx = -NORMAL_GAIN * dx, ny = -NORMAL_GAIN * dy;
		float nd = (nx * hv[0] + ny * hv[1] + hv[2]) / sqrtf(nx * nx + ny * ny + 1.0f);
		float s = nd > 0.0f ? nd : 0.0f;
		s *= s; s *= s; s *= s; s *= s; s *= s; s *= s;
		float l = clampf(B * mid[x + 1] + spec * s, -1024.0f, 1024.0f);
		lifts[x] = (int32_t)(l + 1024.5f) - 1024;
	}
}

static void row_geometry_wrap(const float *up, const float *mid, const float *dn, int w, int hgt,
			      int y, float R, float B, float spec, const float hv[3], row_taps t)
{
	row_geometry(up, mid, dn, w, hgt, y, 1, R, B, spec, hv, t.off, t.wx, t.wy, t.lift);
}

static void row_geometry_clamp(const float *up, const float *mid, const float *dn, int w, int hgt,
			       int y, float R, float B, float spec, const float hv[3], row_taps t)
{
	row_geometry(up, mid, dn, w, hgt, y, 0, R, B, spec, hv, t.off, t.wx, t.wy, t.lift);
}

/* Pass 2, plain C: the fixed-point formula of the header, one channel at a time. */
static inline void shade_pixel(const uint8_t *p, int32_t bs, int wx, int wy, int lift, int keep,
			       const int tint_q[3], uint8_t *o)
{
	for (int k = 0; k < 3; k++) {
		int top = (p[k] * (256 - wx) + p[4 + k] * wx + 128) >> 8;
		int bot = (p[bs + k] * (256 - wx) + p[bs + 4 + k] * wx + 128) >> 8;
		int c = (top * (256 - wy) + bot * wy + 128) >> 8;
		int v = ((c * keep + tint_q[k] + 128) >> 8) + lift;
		o[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}

static void shade_row(const uint8_t *bgx, int32_t bs, row_taps t, int w, int keep,
		      const int tint_q[3], uint8_t *o)
{
	int x = 0;
#ifdef __SSE2__
	/* The same integers, four channels at once in 16-bit lanes. Every intermediate
	 * stays below 65536 (255*256 + 128), so unsigned 16-bit arithmetic is exact. */
	const __m128i zero = _mm_setzero_si128(), r128 = _mm_set1_epi16(128);
	const __m128i keepv = _mm_set1_epi16((short)keep);
	const __m128i tintv = _mm_setr_epi16((short)tint_q[0], (short)tint_q[1], (short)tint_q[2], 0,
					     0, 0, 0, 0);
	for (; x < w - 1; x++) { /* the last pixel is done in C: its 4-byte store would spill */
		const uint8_t *p = bgx + t.off[x];
		__m128i q0, q1;
		memcpy(&q0, p, 8); /* unaligned 8-byte loads: p00 p01 / p10 p11 */
		memcpy(&q1, p + bs, 8);
		q0 = _mm_unpacklo_epi8(_mm_move_epi64(q0), zero);
		q1 = _mm_unpacklo_epi8(_mm_move_epi64(q1), zero);
		__m128i wxv = _mm_unpacklo_epi64(_mm_set1_epi16((short)(256 - t.wx[x])),
						 _mm_set1_epi16((short)t.wx[x]));
		__m128i a = _mm_mullo_epi16(q0, wxv), b = _mm_mullo_epi16(q1, wxv);
		__m128i top = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(a, _mm_srli_si128(a, 8)), r128), 8);
		__m128i bot = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(b, _mm_srli_si128(b, 8)), r128), 8);
		__m128i wyv = _mm_unpacklo_epi64(_mm_set1_epi16((short)(256 - t.wy[x])),
						 _mm_set1_epi16((short)t.wy[x]));
		__m128i v = _mm_mullo_epi16(_mm_unpacklo_epi64(top, bot), wyv);
		__m128i c = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(v, _mm_srli_si128(v, 8)), r128), 8);
		c = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(_mm_mullo_epi16(c, keepv), tintv), r128), 8);
		c = _mm_adds_epi16(c, _mm_set1_epi16((short)t.lift[x]));
		int32_t px = _mm_cvtsi128_si32(_mm_packus_epi16(c, c));
		memcpy(o + 3 * x, &px, 4); /* the 4th byte is overwritten by the next pixel */
	}
#endif
	for (; x < w; x++)
		shade_pixel(bgx + t.off[x], bs, t.wx[x], t.wy[x], t.lift[x], keep, tint_q, o + 3 * x);
}

void render_color(const render_in *in, tp_image *out)
{
	const int w = in->w, hgt = in->h, wrap = in->wrap;
	const scene_render *rs = &in->sc->render;
	const float R = (float)(REFRACT_PX * rs->refraction);
	const float B = (float)(REFLECT_LEVELS * rs->reflection);
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
		/* This row's slice of the scratch (4 values per pixel), so threads never share. */
		int32_t *base = in->iscratch + (size_t)y * w * 4;
		row_taps t = { base, base + w, base + 2 * w, base + 3 * w };
		const float *mid = in->hpad + (y + 1) * hs;
		if (wrap)
			row_geometry_wrap(mid - hs, mid, mid + hs, w, hgt, y, R, B, spec, hv, t);
		else
			row_geometry_clamp(mid - hs, mid, mid + hs, w, hgt, y, R, B, spec, hv, t);
		shade_row(in->bgx, bs, t, w, keep, tint_q, tp_image_row(out, y));
	}
}
