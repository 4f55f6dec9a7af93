/*
 * footprint.c - anti-aliased refraction by the lookup's footprint: box-filtered reads of a
 * summed-area table of the background over the area a pixel's refracted footprint covers
 * (one box per quarter of the pixel), instead of refract_aa.c's N x N point lookups
 * (render.antialias "footprint").
 *
 * The table, built once per renderer (render_aa_sat), holds per channel
 *     S(i, j) = sum of p(x, y) over 0 <= x < i, 0 <= y < j
 * of the tinted background (render_in.bgx), in unsigned 32-bit arithmetic: a sum can wrap,
 * but a box's sum is a difference of four entries and is itself far below 2^32, so the
 * wrapped arithmetic gives it exactly. With wrap the table runs FP_CAP + 1 columns and
 * rows past the frame over the background's periodic continuation.
 *
 * Read with nearest-pixel reconstruction (pixel x covers [x, x + 1)), the integral of the
 * background up to a fractional corner (X, Y) is bilinear in the table:
 *     I(X, Y) = sum of S(X0 + i, Y0 + j) wx_i wy_j, wx = (8 - fx, fx), wy = (8 - fy, fy),
 * corners in 1/8 pixel (X = X0 + fx / 8). A box [q0x, q1x) x [q0y, q1y) (1/8 pixels) sums
 *     V = I(q1x, q1y) - I(q0x, q1y) - I(q1x, q0y) + I(q0x, q0y)        (64 x its integral)
 * and the box's mean is V / A, A = (q1x - q0x)(q1y - q0y). A box one pixel wide, [q, q + 8),
 * is refract.c's bilinear lookup at q (nearest reconstruction boxed over one pixel is the
 * tent).
 *
 * The footprint: refract_aa.c's pixel sees the background at (x, y) + o(x + u, y + v),
 * |u|, |v| <= 1/2, o bilinear between the pixel centres, so bilinear in each quarter of
 * the pixel between o at the centre, two edge midpoints and a corner (means of the
 * neighbouring centres' offsets). Each quarter's footprint is bounded by those four:
 *     lo_q = min, hi_q = max of the quarter's four offsets, per component,
 *     box_q = [x + lo_q, x + hi_q + 1) in the table (clamped to the frame as refract.c
 *             clamps a position, or folded into it with wrap), at most FP_CAP + 1 pixels
 *             wide (wider is a fold of the picture, a blur anyway: the box keeps its
 *             centre),
 *     m_q = round(64 V_q / A_q),  c = (m_0 + m_1 + m_2 + m_3 + 128) / 256,
 * the mean of the four quarters' box means. Level water, or any constant offset, gives
 * four one-pixel boxes at one place: refract.c's lookup, bit for bit (m = V, A = 64). A
 * pixel costs four boxes (64 table entries) however steep its refraction.
 *
 * What it gives (tests/test_refract_aa.c, against 16 x 16 lookups): better than one
 * lookup a pixel, worse than the N x N lookups of "supersample" (docs/benchmarks.md has
 * the numbers): an axis-aligned box bounds a diagonal footprint (most of a ring's flank,
 * whose offset changes along the ring's radius only) by a square, blurring across the
 * direction the true footprint is thin in. So "supersample" stays the default.
 *
 * Each pixel depends only on the surface, so the bytes are the same whatever the thread
 * count; the integer sums are the same on every path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_impl.h"

static inline float minf(float a, float b)
{
	return a < b ? a : b;
}

static inline float maxf(float a, float b)
{
	return a > b ? a : b;
}

uint32_t *render_aa_sat(const uint8_t *bgx, int w, int h, int wrap, int *stride)
{
	const int ext = wrap ? FP_CAP + 1 : 0;
	const size_t sw = (size_t)w + ext + 2, sh = (size_t)h + ext + 2;
	uint32_t *s = malloc(sw * sh * 4 * sizeof *s);
	if (!s)
		return NULL;
	const size_t bs = 4 * ((size_t)w + 1);
	memset(s, 0, sw * 4 * sizeof *s); /* row 0: nothing above */
	for (size_t j = 1; j < sh; j++) {
		/* background row j - 1: clamped (only rows up to h are read) or periodic */
		const size_t y = j - 1, yy = wrap            ? y % (size_t)h
					     : y < (size_t)h ? y
							     : (size_t)h - 1;
		const uint8_t *src = bgx + yy * bs;
		const uint32_t *up = s + (j - 1) * sw * 4;
		uint32_t *d = s + j * sw * 4;
		uint32_t run[4] = {0, 0, 0, 0};
		d[0] = d[1] = d[2] = d[3] = 0;
		for (size_t i = 1; i < sw; i++) {
			const size_t x = i - 1, xx = wrap            ? x % (size_t)w
						     : x < (size_t)w ? x
								     : (size_t)w - 1;
			for (int k = 0; k < 4; k++) {
				run[k] += src[4 * xx + k];
				d[4 * i + k] = up[4 * i + k] + run[k];
			}
		}
	}
	*stride = (int)(sw * 4);
	return s;
}

/* The pixel's box along one axis, [*q0, *q1) in 1/8 pixel of the table: from position p
 * (x or y) and the offsets' range [lo, hi]; n is w or h. */
static inline void fp_axis(float p, float lo, float hi, int n, int wrap, int32_t *q0, int32_t *q1)
{
	const float fn = (float)n;
	float a, b;
	if (wrap) {
		a = p + tp_clampf_nan_lo(lo, -fn, fn) + fn;
		b = p + tp_clampf_nan_lo(hi, -fn, fn) + fn;
	} else {
		a = tp_clampf_nan_lo(p + lo, 0.0f, fn - 1.0f);
		b = tp_clampf_nan_lo(p + hi, 0.0f, fn - 1.0f);
	}
	if (!(b - a <= (float)FP_CAP)) { /* (a NaN too: a and b are clamped, not NaN) */
		const float m = 0.5f * (a + b);
		a = m - 0.5f * (float)FP_CAP;
		b = m + 0.5f * (float)FP_CAP;
	}
	int32_t s0 = (int32_t)(a * 8.0f + 0.5f), s1 = (int32_t)(b * 8.0f + 0.5f) + 8;
	if (wrap) /* a in [0, 3n): the box moved by whole frames into [0, n) */
		for (int r = 0; r < 2; r++)
			if (s0 >= 8 * n)
				s0 -= 8 * n, s1 -= 8 * n;
	*q0 = s0;
	*q1 = s1;
}

/* 64 x the mean of the background over the box [qx0, qx1) x [qy0, qy1) (1/8 pixels of the
 * table), rounded, per channel, added to acc. */
static inline void fp_box(const render_aa *a, int32_t qx0, int32_t qx1, int32_t qy0, int32_t qy1,
			  uint32_t acc[3])
{
	/* the four table columns and rows around the box's edges and their weights */
	const int32_t cx[4] = {qx0 >> 3, (qx0 >> 3) + 1, qx1 >> 3, (qx1 >> 3) + 1};
	const int32_t cy[4] = {qy0 >> 3, (qy0 >> 3) + 1, qy1 >> 3, (qy1 >> 3) + 1};
	const uint32_t wx[4] = {(uint32_t) - (8 - (qx0 & 7)), (uint32_t) - (qx0 & 7),
				(uint32_t)(8 - (qx1 & 7)), (uint32_t)(qx1 & 7)};
	const uint32_t wy[4] = {(uint32_t) - (8 - (qy0 & 7)), (uint32_t) - (qy0 & 7),
				(uint32_t)(8 - (qy1 & 7)), (uint32_t)(qy1 & 7)};
	uint32_t v[3] = {0, 0, 0};
	for (int j = 0; j < 4; j++) {
		const uint32_t *row = a->sat + (size_t)cy[j] * (size_t)a->ss;
		uint32_t r[3] = {0, 0, 0};
		for (int i = 0; i < 4; i++)
			for (int k = 0; k < 3; k++)
				r[k] += wx[i] * row[4 * (size_t)cx[i] + k];
		for (int k = 0; k < 3; k++)
			v[k] += wy[j] * r[k];
	}
	const uint64_t A = (uint64_t)(qx1 - qx0) * (uint64_t)(qy1 - qy0);
	for (int k = 0; k < 3; k++)
		acc[k] += (uint32_t)(((uint64_t)v[k] * 64 + A / 2) / A);
}

/* The colour of the pixel at column x (entry c of the offsets), row y, into col: the mean
 * of its four quarters' boxes. */
static void fp_pixel(const render_aa *a, int x, int y, int c, const render_aa_offsets *o,
		     uint32_t col[3])
{
	/* per component k, the offsets at the centre, the edge midpoints (left, right, up,
	 * down) and the corners (up-left, up-right, down-left, down-right) */
	float p[2][9];
	for (int k = 0; k < 2; k++) {
		const float *t = o->row[0][k] + c, *m = o->row[1][k] + c, *b = o->row[2][k] + c;
		const float v = m[0];
		p[k][0] = v;
		p[k][1] = 0.5f * (m[-1] + v), p[k][2] = 0.5f * (m[1] + v);
		p[k][3] = 0.5f * (t[0] + v), p[k][4] = 0.5f * (b[0] + v);
		p[k][5] = 0.25f * ((m[-1] + v) + (t[0] + t[-1]));
		p[k][6] = 0.25f * ((m[1] + v) + (t[0] + t[1]));
		p[k][7] = 0.25f * ((m[-1] + v) + (b[0] + b[-1]));
		p[k][8] = 0.25f * ((m[1] + v) + (b[0] + b[1]));
	}
	/* quarter q: the centre, its horizontal and vertical edge midpoints, its corner */
	static const int quad[4][3] = {{1, 3, 5}, {2, 3, 6}, {1, 4, 7}, {2, 4, 8}};
	uint32_t acc[3] = {0, 0, 0};
	for (int q = 0; q < 4; q++) {
		int32_t qb[2][2];
		for (int k = 0; k < 2; k++) {
			float lo = p[k][0], hi = p[k][0];
			for (int e = 0; e < 3; e++) {
				lo = minf(lo, p[k][quad[q][e]]);
				hi = maxf(hi, p[k][quad[q][e]]);
			}
			fp_axis(k ? (float)y : (float)x, lo, hi, k ? a->hgt : a->w, a->wrap,
				&qb[k][0], &qb[k][1]);
		}
		fp_box(a, qb[0][0], qb[0][1], qb[1][0], qb[1][1], acc);
	}
	for (int k = 0; k < 3; k++)
		col[k] = (acc[k] + 128) / 256;
}

void render_aa_footprint(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
			 const uint8_t *nsub, const int32_t *lift, uint8_t *out)
{
	for (int i = 0; i < n; i++) {
		if (!nsub[i])
			continue;
		uint32_t c[3];
		fp_pixel(a, xs + i, y, i + 1, o, c);
		const int l = (int16_t)(lift[i] & 0xffff);
		uint8_t *p = out + 3 * (size_t)(xs + i);
		for (int k = 0; k < 3; k++) {
			const int cc = (int)c[k] + l;
			p[k] = (uint8_t)(cc < 0 ? 0 : cc > 255 ? 255 : cc);
		}
	}
}
