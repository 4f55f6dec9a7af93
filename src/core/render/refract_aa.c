/*
 * refract_aa.c - anti-aliased refraction: the colour pass's background lookup supersampled
 * where the refraction offset varies within a pixel.
 *
 * refract.c shows, at pixel (x, y), the background at (x, y) + o(x, y), o = R * slope: one
 * bilinear lookup. Where o changes by more than a pixel from one pixel to the next (the
 * steep flanks of a ring), that one lookup lands on isolated points of the background, and
 * a sharp edge of it (a grout line, an image's edge) is torn into stair-steps. Here such a
 * pixel averages N x N lookups instead:
 *
 *     D = max |o(x, y) - o(neighbour)|, over the 4 neighbours and both components (pixels),
 *     N = 0 (no change)           if D <= AA_THRESHOLD,
 *         min(AA_MAX, max(2, ceil(D / AA_SPACING))) otherwise,
 *     subsample (i, j): u_i = (i + 1/2) / N - 1/2 (likewise v_j), its offset
 *         o(x + u, y + v) bilinear between the pixel centres around it, its lookup at
 *         (x, y) + o(x + u, y + v),
 *     c = sum over subsamples of the 4-tap fixed-point bilinear sum of refract.c
 *         (weights in 1/64, bytes as stored: the renderer blends in sRGB bytes),
 *     c = (c + 32 N^2) / (64 N^2)   (rounded; N = 1 is refract.c's (c + 32) >> 6),
 *     out = clamp(c + lift, 0, 255)  with refract.c's lift (reflection and highlight are
 *         not supersampled).
 * The lookups spread by the offset's variation only, not by the pixel's own width: the
 * background at output size already holds one pixel's worth of it at each pixel (the
 * footprint of level water), so where the offset grows by D across a pixel the pixel
 * sees that 1-pixel footprint swept over D more, which is what the N x N lookups cover;
 * and level water, or any constant offset, gives exactly the one lookup (N = 1 is
 * refract.c's pixel, bit for bit). With AA_SPACING 1/4 neighbouring lookups are about a
 * quarter of a background pixel apart, so the bilinear lookups follow an edge; AA_MAX
 * bounds the cost where D is several pixels (folds of the picture, a blur anyway). The
 * threshold: below a quarter pixel of change per pixel one bilinear lookup is within a
 * level or two of the average. These were chosen on pond.json and rain.json at 1920x1080
 * (frames 15-30) against 16 x 16 lookups at every pixel: the threshold 1/2 or the
 * spacing 1/2 left 20-50 % more error, AA_MAX 8 changed nothing measurable; about 0.5 %
 * of the pixels are supersampled. tests/test_refract_aa.c bounds the error.
 *
 * Each pixel depends only on the surface, so the bytes are the same whatever the thread
 * count. The lookups of a pixel run 16 at a time in AVX-512 where the colour pass runs its
 * level 3 (shade_pixel_avx512: the plain loop's float operations lane by lane, gathered
 * taps, integer sums), the plain loop elsewhere; tests/test_refract_aa.c checks they
 * give the same bytes, with wrap and forced counts.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "render/render_impl.h"

#define AA_THRESHOLD 0.25f /* pixels of offset change per pixel: up to it, one lookup */
#define AA_SPACING   0.25f /* pixels of offset change per subsample */
#define AA_MAX       6     /* subsamples per axis at most */

static int aa_force;

void render_set_antialias(int n)
{
	aa_force = n < 0 ? 0 : n > RENDER_AA_MAX_FORCE ? RENDER_AA_MAX_FORCE : n;
}

int render_aa_forced(void)
{
	return aa_force;
}

static int aa_flat_on = 1;

void render_set_antialias_flat(int on)
{
	aa_flat_on = on;
}

static inline float absf(float v)
{
	return v < 0 ? -v : v;
}

static inline float clampf(float v, float lo, float hi)
{
	v = v > lo ? v : lo;
	return v < hi ? v : hi;
}

static inline float maxf(float a, float b)
{
	return a > b ? a : b;
}

/* Cloned for the vector units: max, abs and subtraction are exact, so every clone gives
 * the same D. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static int
aa_plan(int n, const render_aa_offsets *o, uint8_t *nsub)
{
	float d[258]; /* n <= 256 (refract.c's CHUNK) */
	int steep = 0;
	/* D of every pixel, branch-free (vectorised), and how many pass the threshold; a
	 * NaN offset compares false: one lookup */
	for (int i = 0; i < n; i++) {
		const int c = i + 1; /* entry of column xs + i */
		float m = 0;
		for (int k = 0; k < 2; k++) {
			const float *r = o->row[1][k], *a = o->row[0][k], *b = o->row[2][k];
			const float v = r[c];
			m = maxf(m, maxf(maxf(absf(v - r[c - 1]), absf(v - r[c + 1])),
					 maxf(absf(v - a[c]), absf(v - b[c]))));
		}
		d[i] = m;
		steep += m > AA_THRESHOLD;
	}
	if (aa_force) {
		memset(nsub, aa_force, (size_t)n);
		return n;
	}
	if (!steep) {
		memset(nsub, 0, (size_t)n);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int N = 0;
		if (d[i] > AA_THRESHOLD) {
			const float f = ceilf(d[i] / AA_SPACING);
			N = f >= (float)AA_MAX ? AA_MAX : f < 2.0f ? 2 : (int)f;
		}
		nsub[i] = (uint8_t)N;
	}
	return steep;
}

/* (static clones: a non-static one would export its resolver from libtidepool) */
int render_aa_plan(int n, const render_aa_offsets *o, uint8_t *nsub)
{
	return aa_plan(n, o, nsub);
}

/* A cell (x0, y0) is an edge if its four bilinear taps, (x0, y0) .. (x0 + 1, y0 + 1), are
 * not all one RGB colour; out[] is each cell's Chebyshev distance to the nearest edge
 * (two passes over the 8 neighbours, capped at 255). */
size_t render_aa_flat_map(const uint8_t *bgx, int w, int h, uint8_t *out)
{
	const size_t bs = 4 * ((size_t)w + 1);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const uint8_t *p = bgx + (size_t)y * bs + 4 * (size_t)x;
			const int edge = memcmp(p, p + 4, 3) || memcmp(p, p + bs, 3) ||
					 memcmp(p, p + bs + 4, 3);
			out[(size_t)y * w + x] = edge ? 0 : 255;
		}
	for (int y = 0; y < h; y++) /* forward: left, up-left, up, up-right */
		for (int x = 0; x < w; x++) {
			uint8_t *o = out + (size_t)y * w + x;
			int m = *o;
			if (x > 0 && o[-1] + 1 < m)
				m = o[-1] + 1;
			if (y > 0) {
				const uint8_t *u = o - w;
				if (u[0] + 1 < m)
					m = u[0] + 1;
				if (x > 0 && u[-1] + 1 < m)
					m = u[-1] + 1;
				if (x + 1 < w && u[1] + 1 < m)
					m = u[1] + 1;
			}
			*o = (uint8_t)m;
		}
	for (int y = h - 1; y >= 0; y--) /* backward: right, down-right, down, down-left */
		for (int x = w - 1; x >= 0; x--) {
			uint8_t *o = out + (size_t)y * w + x;
			int m = *o;
			if (x + 1 < w && o[1] + 1 < m)
				m = o[1] + 1;
			if (y + 1 < h) {
				const uint8_t *d = o + w;
				if (d[0] + 1 < m)
					m = d[0] + 1;
				if (x + 1 < w && d[1] + 1 < m)
					m = d[1] + 1;
				if (x > 0 && d[-1] + 1 < m)
					m = d[-1] + 1;
			}
			*o = (uint8_t)m;
		}
	size_t far = 0;
	for (size_t k = 0; k < (size_t)w * (size_t)h; k++)
		far += out[k] >= 4;
	return far;
}

/* dd of every column: the largest change of either offset component from the pixel to
 * any of its 8 neighbours (the 3 x 3 entries around entry i + 1), branch-free so that it
 * vectorises; max, abs and subtraction are exact, so every clone gives the same dd (a NaN
 * is kept or dropped as the scalar order of maxf calls does: maxps is maxf's a > b ? a : b).
 * Computed per pixel inside the flat check, it cost as much as the lookups it saves. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
aa_spread(int n, const render_aa_offsets *o, float *restrict dd)
{
	const float *restrict t0 = o->row[0][0], *restrict m0 = o->row[1][0],
			      *restrict b0 = o->row[2][0];
	const float *restrict t1 = o->row[0][1], *restrict m1 = o->row[1][1],
			      *restrict b1 = o->row[2][1];
#define SPREAD3(row, c, v, m)                                                                      \
	m = maxf(maxf(maxf(m, absf((row)[(c)-1] - (v))), absf((row)[c] - (v))),                    \
		 absf((row)[(c) + 1] - (v)))
	for (int i = 0; i < n; i++) {
		const int c = i + 1;
		const float v0 = m0[c], v1 = m1[c];
		float m = 0;
		SPREAD3(t0, c, v0, m);
		SPREAD3(m0, c, v0, m);
		SPREAD3(b0, c, v0, m);
		SPREAD3(t1, c, v1, m);
		SPREAD3(m1, c, v1, m);
		SPREAD3(b1, c, v1, m);
		dd[i] = m;
	}
#undef SPREAD3
}

/* Every lookup of the pixel lies within R cells of its centre lookup's cell: a subsample's
 * offset is a bilinear mix, weights up to 1/2, of the pixel's and its 8 neighbours', so it
 * differs from the centre's by at most 3/4 of their largest difference Dd; clamping to the
 * frame only moves positions closer; R = ceil(Dd) + 2 covers that, the 1/8-pixel rounding
 * and the cell boundary. If no edge cell lies within R (flat > R), every tap of every
 * lookup is one colour c, so the average is c, as the one lookup is. */
int render_aa_flat(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
		   uint8_t *nsub)
{
	if (!a->flat || aa_force || !aa_flat_on)
		return 1;
	float spread[256]; /* n <= 256 (refract.c's CHUNK) */
	aa_spread(n, o, spread);
	int left = 0;
	const float fw = (float)a->w, fh = (float)a->hgt;
	for (int i = 0; i < n; i++) {
		if (!nsub[i])
			continue;
		const int c = i + 1;
		const float dd = spread[i];
		const float sx = clampf((float)(xs + i) + o->row[1][0][c], 0.0f, fw - 1.0f);
		const float sy = clampf((float)y + o->row[1][1][c], 0.0f, fh - 1.0f);
		if (!(dd < 200.0f)) { /* NaN or huge: supersample */
			left++;
			continue;
		}
		const int R = (int)ceilf(dd) + 2;
		if (a->flat[(size_t)(int)sy * a->w + (int)sx] > R)
			nsub[i] = 0;
		else
			left++;
	}
	return left;
}

/* The offset component k at (x + u, y + v), |u|, |v| <= 1/2, bilinear between the centre
 * entry c of the middle row and its neighbours on the side of u and of v. */
static inline float offset_at(const render_aa_offsets *o, int k, int c, float u, float v)
{
	const int cx = u < 0 ? c - 1 : c + 1, ry = v < 0 ? 0 : 2;
	const float wu = absf(u), wv = absf(v);
	const float *m = o->row[1][k], *e = o->row[ry][k];
	const float top = (1.0f - wu) * m[c] + wu * m[cx];
	const float bot = (1.0f - wu) * e[c] + wu * e[cx];
	return (1.0f - wv) * top + wv * bot;
}

/* The subsample positions (i + 1/2) / N - 1/2 for every N, computed once (the same
 * float operations as inline). */
static float pos_tab[RENDER_AA_MAX_FORCE + 1][RENDER_AA_MAX_FORCE];
static pthread_once_t pos_once = PTHREAD_ONCE_INIT;

static void pos_init(void)
{
	for (int N = 1; N <= RENDER_AA_MAX_FORCE; N++)
		for (int i = 0; i < N; i++)
			pos_tab[N][i] = ((float)i + 0.5f) / (float)N - 0.5f;
}

/* The N x N lookups of the pixel at column x (entry c of the offsets), summed into acc:
 * the plain loop, and the reference of the vector one below. */
static void shade_pixel_c(const render_aa *a, int x, int y, int c, int N,
			  const render_aa_offsets *o, uint32_t acc[3])
{
	const int w = a->w, hgt = a->hgt;
	const float fw = (float)w, fh = (float)hgt;
	const float *pos = pos_tab[N];
	for (int j = 0; j < N; j++) {
		const float v = pos[j];
		for (int ii = 0; ii < N; ii++) {
			const float u = pos[ii];
			const float ox = offset_at(o, 0, c, u, v), oy = offset_at(o, 1, c, u, v);
			float sx, sy;
			/* refract.c's positions with the subsample's offset */
			if (a->wrap) {
				sx = (float)x + clampf(ox, -fw, fw) + fw;
				sy = (float)y + clampf(oy, -fh, fh) + fh;
			} else {
				sx = clampf((float)x + ox, 0.0f, fw - 1.0f);
				sy = clampf((float)y + oy, 0.0f, fh - 1.0f);
			}
			const int32_t qx = (int32_t)(sx * 8.0f + 0.5f),
				      qy = (int32_t)(sy * 8.0f + 0.5f);
			int32_t x0 = qx >> 3, y0 = qy >> 3;
			const uint32_t ax = (uint32_t)(qx & 7), ay = (uint32_t)(qy & 7);
			if (a->wrap) {
				x0 %= w;
				y0 %= hgt;
			}
			const uint8_t *p = a->bgx + (ptrdiff_t)y0 * a->bs + 4 * (ptrdiff_t)x0;
			const uint32_t w00 = (8 - ax) * (8 - ay), w01 = ax * (8 - ay),
				       w10 = (8 - ax) * ay, w11 = ax * ay;
			for (int k = 0; k < 3; k++)
				acc[k] += p[k] * w00 + p[4 + k] * w01 + p[a->bs + k] * w10 +
					  p[a->bs + 4 + k] * w11;
		}
	}
}

#ifdef __x86_64__
#include <immintrin.h>

/* Subsample (i, j) of N x N as lane i + N j: u and v per lane, for every N. */
static float lane_u[RENDER_AA_MAX_FORCE + 1][RENDER_AA_MAX_FORCE * RENDER_AA_MAX_FORCE + 16];
static float lane_v[RENDER_AA_MAX_FORCE + 1][RENDER_AA_MAX_FORCE * RENDER_AA_MAX_FORCE + 16];

static void lanes_init(void)
{
	for (int N = 1; N <= RENDER_AA_MAX_FORCE; N++)
		for (int j = 0; j < N; j++)
			for (int i = 0; i < N; i++) {
				lane_u[N][i + N * j] = pos_tab[N][i];
				lane_v[N][i + N * j] = pos_tab[N][j];
			}
}

/* offset_at for 16 subsamples: the same products and sums per lane, each neighbour
 * chosen by the sign of u and of v (broadcast values, blended by mask). */
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vnni"))) __m512
offset16(const render_aa_offsets *o, int k, int c, __m512 u, __m512 v, __mmask16 un, __mmask16 vn)
{
	const float *m = o->row[1][k], *t = o->row[0][k], *b = o->row[2][k];
	const __m512 one = _mm512_set1_ps(1.0f);
	const __m512 wu = _mm512_abs_ps(u), wv = _mm512_abs_ps(v);
	const __m512 mc = _mm512_set1_ps(m[c]);
	const __m512 mx =
		_mm512_mask_blend_ps(un, _mm512_set1_ps(m[c + 1]), _mm512_set1_ps(m[c - 1]));
	const __m512 ec = _mm512_mask_blend_ps(vn, _mm512_set1_ps(b[c]), _mm512_set1_ps(t[c]));
	const __m512 ex = _mm512_mask_blend_ps(
		vn, _mm512_mask_blend_ps(un, _mm512_set1_ps(b[c + 1]), _mm512_set1_ps(b[c - 1])),
		_mm512_mask_blend_ps(un, _mm512_set1_ps(t[c + 1]), _mm512_set1_ps(t[c - 1])));
	const __m512 iu = _mm512_sub_ps(one, wu);
	const __m512 top = _mm512_add_ps(_mm512_mul_ps(iu, mc), _mm512_mul_ps(wu, mx));
	const __m512 bot = _mm512_add_ps(_mm512_mul_ps(iu, ec), _mm512_mul_ps(wu, ex));
	return _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(one, wv), top), _mm512_mul_ps(wv, bot));
}

/* clampf per lane: max_ps(v, lo) is v > lo ? v : lo (NaN: lo), min_ps(v, hi) likewise. */
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vnni"))) __m512
clamp16(__m512 v, __m512 lo, __m512 hi)
{
	return _mm512_min_ps(_mm512_max_ps(v, lo), hi);
}

/* shade_pixel_c for 16 subsamples at a time (gathered taps), the same sums: every lane
 * computes what the plain loop does for its subsample, and the integer sums do not
 * depend on their order. Offsets into the background fit 32 bits, as the colour pass's
 * own gathers assume. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
shade_pixel_avx512(const render_aa *a, int x, int y, int c, int N, const render_aa_offsets *o,
		   uint32_t acc[3])
{
	const int w = a->w, hgt = a->hgt, nn = N * N;
	const float fw = (float)w, fh = (float)hgt;
	const __m512 fx = _mm512_set1_ps((float)x), fy = _mm512_set1_ps((float)y);
	const __m512 eight = _mm512_set1_ps(8.0f), half = _mm512_set1_ps(0.5f);
	const __m512 zero = _mm512_setzero_ps();
	const __m512i seven = _mm512_set1_epi32(7), k8 = _mm512_set1_epi32(8),
		      bs = _mm512_set1_epi32(a->bs), z = _mm512_setzero_si512();
	__m512i rg = z, bb = z;
	const __m512i dup_lo = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),
		      dup_hi = _mm512_set_epi32(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9,
						9, 8, 8);
	/* per 64-bit lane (bytes 0-7: R0 G0 B0 X0 R1 G1 B1 X1; -1 makes a zero byte) */
	const __m512i ctl_rg = _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 8,
								    -1, 12, -1, 9, -1, 13, -1)),
		      ctl_b = _mm512_broadcast_i32x4(_mm_setr_epi8(2, -1, 6, -1, -1, -1, -1, -1, 10,
								   -1, 14, -1, -1, -1, -1, -1));
	for (int l = 0; l < nn; l += 16) {
		const __mmask16 live =
			nn - l >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nn - l)) - 1);
		const __m512 u = _mm512_loadu_ps(lane_u[N] + l), v = _mm512_loadu_ps(lane_v[N] + l);
		const __mmask16 un = _mm512_cmp_ps_mask(u, zero, _CMP_LT_OQ),
				vn = _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ);
		const __m512 ox = offset16(o, 0, c, u, v, un, vn),
			     oy = offset16(o, 1, c, u, v, un, vn);
		__m512 sx, sy;
		if (a->wrap) {
			sx = _mm512_add_ps(_mm512_add_ps(fx, clamp16(ox, _mm512_set1_ps(-fw),
								     _mm512_set1_ps(fw))),
					   _mm512_set1_ps(fw));
			sy = _mm512_add_ps(_mm512_add_ps(fy, clamp16(oy, _mm512_set1_ps(-fh),
								     _mm512_set1_ps(fh))),
					   _mm512_set1_ps(fh));
		} else {
			sx = clamp16(_mm512_add_ps(fx, ox), zero, _mm512_set1_ps(fw - 1.0f));
			sy = clamp16(_mm512_add_ps(fy, oy), zero, _mm512_set1_ps(fh - 1.0f));
		}
		const __m512i qx =
			_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sx, eight), half));
		const __m512i qy =
			_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sy, eight), half));
		__m512i x0 = _mm512_srai_epi32(qx, 3), y0 = _mm512_srai_epi32(qy, 3);
		const __m512i ax = _mm512_and_si512(qx, seven), ay = _mm512_and_si512(qy, seven);
		if (a->wrap) { /* x0 in [0, 3w): x0 % w by two conditional subtractions */
			const __m512i W = _mm512_set1_epi32(w), H = _mm512_set1_epi32(hgt);
			for (int r = 0; r < 2; r++) {
				x0 = _mm512_mask_sub_epi32(x0, _mm512_cmpge_epi32_mask(x0, W), x0,
							   W);
				y0 = _mm512_mask_sub_epi32(y0, _mm512_cmpge_epi32_mask(y0, H), y0,
							   H);
			}
		}
		const __m512i off =
			_mm512_add_epi32(_mm512_mullo_epi32(y0, bs), _mm512_slli_epi32(x0, 2));
		/* the two taps of a row are adjacent: one 64-bit gather fetches both (half
		 * the elements of four 32-bit gathers, which bound this loop), then the
		 * low and high halves are split into the taps' 16 lanes */
		const __m256i olo = _mm512_castsi512_si256(off),
			      ohi = _mm512_extracti64x4_epi64(off, 1);
		const __mmask8 llo = (__mmask8)live, lhi = (__mmask8)(live >> 8);
		const __m512i t0 = _mm512_mask_i32gather_epi64(z, llo, olo, a->bgx, 1),
			      t1 = _mm512_mask_i32gather_epi64(z, lhi, ohi, a->bgx, 1),
			      b0 = _mm512_mask_i32gather_epi64(z, llo, olo, a->bgx + a->bs, 1),
			      b1 = _mm512_mask_i32gather_epi64(z, lhi, ohi, a->bgx + a->bs, 1);
		/* Each 64-bit lane holds a lookup's two taps of a row, RGBX RGBX. Bytes are
		 * spread to 16-bit pairs (R0 R1 | G0 G1 and B0 B1 | 0 0) and multiplied by
		 * the pair of weights (w_0 w_1): vpdpwssd adds R0 w_0 + R1 w_1 into the
		 * lookup's R lane, and so on, exactly the integer sums of the plain loop. */
		const __m512i iax = _mm512_sub_epi32(k8, ax), iay = _mm512_sub_epi32(k8, ay);
		const __m512i wx = _mm512_or_si512(iax, _mm512_slli_epi32(ax, 16));
		const __m512i wt = _mm512_mullo_epi16(
				      wx, _mm512_or_si512(iay, _mm512_slli_epi32(iay, 16))),
			      wb = _mm512_mullo_epi16(
				      wx, _mm512_or_si512(ay, _mm512_slli_epi32(ay, 16)));
		const __m512i wtl = _mm512_permutexvar_epi32(dup_lo, wt),
			      wth = _mm512_permutexvar_epi32(dup_hi, wt),
			      wbl = _mm512_permutexvar_epi32(dup_lo, wb),
			      wbh = _mm512_permutexvar_epi32(dup_hi, wb);
		rg = _mm512_dpwssd_epi32(rg, _mm512_shuffle_epi8(t0, ctl_rg), wtl);
		rg = _mm512_dpwssd_epi32(rg, _mm512_shuffle_epi8(t1, ctl_rg), wth);
		rg = _mm512_dpwssd_epi32(rg, _mm512_shuffle_epi8(b0, ctl_rg), wbl);
		rg = _mm512_dpwssd_epi32(rg, _mm512_shuffle_epi8(b1, ctl_rg), wbh);
		bb = _mm512_dpwssd_epi32(bb, _mm512_shuffle_epi8(t0, ctl_b), wtl);
		bb = _mm512_dpwssd_epi32(bb, _mm512_shuffle_epi8(t1, ctl_b), wth);
		bb = _mm512_dpwssd_epi32(bb, _mm512_shuffle_epi8(b0, ctl_b), wbl);
		bb = _mm512_dpwssd_epi32(bb, _mm512_shuffle_epi8(b1, ctl_b), wbh);
	}
	/* rg: R in the even 32-bit lanes, G in the odd; bb: B in the even */
	const __m256i r8 = _mm256_add_epi32(_mm512_castsi512_si256(rg),
					    _mm512_extracti64x4_epi64(rg, 1)),
		      b8 = _mm256_add_epi32(_mm512_castsi512_si256(bb),
					    _mm512_extracti64x4_epi64(bb, 1));
	const __m128i r4 = _mm_add_epi32(_mm256_castsi256_si128(r8),
					 _mm256_extracti128_si256(r8, 1)),
		      b4 = _mm_add_epi32(_mm256_castsi256_si128(b8),
					 _mm256_extracti128_si256(b8, 1));
	const __m128i r2 = _mm_add_epi32(r4, _mm_unpackhi_epi64(r4, r4)),
		      b2 = _mm_add_epi32(b4, _mm_unpackhi_epi64(b4, b4));
	acc[0] += (uint32_t)_mm_cvtsi128_si32(r2);
	acc[1] += (uint32_t)_mm_extract_epi32(r2, 1);
	acc[2] += (uint32_t)_mm_cvtsi128_si32(b2);
}

static pthread_once_t lanes_once = PTHREAD_ONCE_INIT;
#endif

void render_aa_shade(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
		     const uint8_t *nsub, const int32_t *lift, uint8_t *out)
{
	pthread_once(&pos_once, pos_init);
#ifdef __x86_64__
	if (a->vec)
		pthread_once(&lanes_once, lanes_init);
#endif
	for (int i = 0; i < n; i++) {
		const int N = nsub[i];
		if (!N)
			continue;
		const int x = xs + i, c = i + 1;
		uint32_t acc[3] = {0, 0, 0};
#ifdef __x86_64__
		if (a->vec)
			shade_pixel_avx512(a, x, y, c, N, o, acc);
		else
#endif
			shade_pixel_c(a, x, y, c, N, o, acc);
		const uint32_t nn = (uint32_t)(N * N);
		const int l = (int16_t)(lift[i] & 0xffff);
		for (int k = 0; k < 3; k++) {
			const int cc = (int)((acc[k] + 32 * nn) / (64 * nn)) + l;
			out[3 * x + k] = (uint8_t)(cc < 0 ? 0 : cc > 255 ? 255 : cc);
		}
	}
}
