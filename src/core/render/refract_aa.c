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
 * count. The steep pixels of a run are grouped by N and shaded 16 at a time in AVX-512
 * (shade16_avx512) or 8 at a time in AVX2 (shade8_avx2), one lane a pixel: the plain
 * loop's float operations lane by lane and its integer sums; the plain loop elsewhere.
 * In AVX-512 a pixel of N >= AA_WIN_MIN is first offered to window_pixel, whose lanes are
 * its own lookups and whose taps come from 8 x 4 texels of the background held in two
 * registers (most such pixels' lookups fit): the same sums without a scalar load a tap
 * pair. tests/test_refract_aa.c checks they all give the same bytes, with wrap and forced
 * counts.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "render/render_impl.h"

#define AA_THRESHOLD 0.25f /* pixels of offset change per pixel: up to it, one lookup */
#define AA_SPACING   0.25f /* pixels of offset change per subsample */
#define AA_MAX       6     /* subsamples per axis at most */

static inline float absf(float v)
{
	return v < 0 ? -v : v;
}

static inline float maxf(float a, float b)
{
	return a > b ? a : b;
}

/* Cloned for the vector units: max, abs and subtraction are exact, so every clone gives
 * the same D. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static int
aa_plan(int n, int force, const render_aa_offsets *o, uint8_t *nsub)
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
	if (force) {
		memset(nsub, force, (size_t)n);
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
int render_aa_plan(const render_aa *a, int n, const render_aa_offsets *o, uint8_t *nsub)
{
	return aa_plan(n, a->checks.aa_force, o, nsub);
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
	if (!a->flat || a->checks.aa_force || !a->checks.aa_flat)
		return 1;
	float spread[256]; /* n <= 256 (refract.c's CHUNK) */
	/* only the columns from the first steep pixel to the last */
	int lo, hi;
	render_aa_steep_span(nsub, n, &lo, &hi);
	const render_aa_offsets from = render_aa_offsets_from(o, lo);
	aa_spread(hi - lo, &from, spread + lo);
	int left = 0;
	const float fw = (float)a->w, fh = (float)a->hgt;
	for (int i = lo; i < hi; i++) {
		if (!nsub[i])
			continue;
		const int c = i + 1;
		const float dd = spread[i];
		const float sx = tp_clampf_nan_lo((float)(xs + i) + o->row[1][0][c], 0.0f, fw - 1.0f);
		const float sy = tp_clampf_nan_lo((float)y + o->row[1][1][c], 0.0f, fh - 1.0f);
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

/* The subsample positions (i + 1/2) / N - 1/2 for every N, computed once (the same
 * float operations as inline). */
static float pos_tab[RENDER_AA_MAX_FORCE + 1][RENDER_AA_MAX_FORCE];
static pthread_once_t pos_once = PTHREAD_ONCE_INIT;

/* The same N x N subsamples in one list, v outer (window_pixel's lanes), padded with
 * zeros to a multiple of 16. */
static float win_u[RENDER_AA_MAX_FORCE + 1][RENDER_AA_MAX_FORCE * RENDER_AA_MAX_FORCE],
	win_v[RENDER_AA_MAX_FORCE + 1][RENDER_AA_MAX_FORCE * RENDER_AA_MAX_FORCE];

static void pos_init(void)
{
	for (int N = 1; N <= RENDER_AA_MAX_FORCE; N++)
		for (int i = 0; i < N; i++)
			pos_tab[N][i] = ((float)i + 0.5f) / (float)N - 0.5f;
	for (int N = 1; N <= RENDER_AA_MAX_FORCE; N++)
		for (int k = 0; k < N * N; k++) {
			win_u[N][k] = pos_tab[N][k % N];
			win_v[N][k] = pos_tab[N][k / N];
		}
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
			const float ox = render_aa_offset_at(o, 0, c, u, v),
				    oy = render_aa_offset_at(o, 1, c, u, v);
			float sx, sy;
			/* refract.c's positions with the subsample's offset */
			if (a->wrap) {
				sx = (float)x + tp_clampf_nan_lo(ox, -fw, fw) + fw;
				sy = (float)y + tp_clampf_nan_lo(oy, -fh, fh) + fh;
			} else {
				sx = tp_clampf_nan_lo((float)x + ox, 0.0f, fw - 1.0f);
				sy = tp_clampf_nan_lo((float)y + oy, 0.0f, fh - 1.0f);
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

/* How many pixels window_pixel has drawn (render_aa_window_pixels). */
static atomic_long window_pixels; /* render_aa_window_pixels */

long render_aa_window_pixels(void)
{
	return atomic_load(&window_pixels);
}

#ifdef __x86_64__
#include <immintrin.h>

/* The offsets around each of L pixels (columns idx[p], entries c - 1 .. c + 1 of the
 * three rows, c = idx[p] + 1) as nb[((k * 3 + r) * 3 + d) * L + p]: component k, row r,
 * column c - 1 + d, lane p. */
static inline void aa_neighbours(const render_aa_offsets *o, const int32_t *idx, int L, float *nb)
{
	for (int p = 0; p < L; p++)
		for (int k = 0; k < 2; k++)
			for (int r = 0; r < 3; r++)
				for (int d = 0; d < 3; d++)
					nb[((k * 3 + r) * 3 + d) * L + p] = o->row[r][k][idx[p] + d];
}

/* The lanes' sums: R and G in rg_lo (lanes 0-7) and rg_hi (8-15), B in b_lo and b_hi. */
typedef struct acc16 {
	__m512i rg_lo, rg_hi, b_lo, b_hi;
} acc16;

/* One lookup per lane added to its sums from its taps: t0 / b0 the top / bottom pairs of
 * lanes 0-7, t1 / b1 of lanes 8-15 (each 64-bit lane RGBX RGBX), its 1/8-pixel fractions
 * ax, ay; lanes outside `valid` add nothing. Bytes are spread to 16-bit pairs (R0 R1 | G0
 * G1 and B0 B1 | 0 0) and multiplied by the pair of weights (w_0 w_1): vpdpwssd adds R0 w_0
 * + R1 w_1 into the lookup's R lane, and so on, exactly the integer sums of the plain
 * loop. */
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) static inline void
taps16(acc16 *ac, __m512i t0, __m512i t1, __m512i b0, __m512i b1, __m512i ax, __m512i ay,
       __mmask16 valid)
{
	const __m512i k8 = _mm512_set1_epi32(8);
	const __m512i dup_lo = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),
		      dup_hi = _mm512_set_epi32(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9,
						9, 8, 8);
	/* per 64-bit lane (bytes 0-7: R0 G0 B0 X0 R1 G1 B1 X1; -1 makes a zero byte) */
	const __m512i ctl_rg = _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 8,
								    -1, 12, -1, 9, -1, 13, -1)),
		      ctl_b = _mm512_broadcast_i32x4(_mm_setr_epi8(2, -1, 6, -1, -1, -1, -1, -1, 10,
								   -1, 14, -1, -1, -1, -1, -1));
	const __m512i iax = _mm512_sub_epi32(k8, ax), iay = _mm512_sub_epi32(k8, ay);
	const __m512i wx = _mm512_or_si512(iax, _mm512_slli_epi32(ax, 16));
	const __m512i wt = _mm512_maskz_mov_epi32(
			      valid, _mm512_mullo_epi16(wx, _mm512_or_si512(
							     iay, _mm512_slli_epi32(iay, 16)))),
		      wb = _mm512_maskz_mov_epi32(
			      valid, _mm512_mullo_epi16(wx, _mm512_or_si512(
							     ay, _mm512_slli_epi32(ay, 16))));
	const __m512i wtl = _mm512_permutexvar_epi32(dup_lo, wt),
		      wth = _mm512_permutexvar_epi32(dup_hi, wt),
		      wbl = _mm512_permutexvar_epi32(dup_lo, wb),
		      wbh = _mm512_permutexvar_epi32(dup_hi, wb);
	ac->rg_lo = _mm512_dpwssd_epi32(ac->rg_lo, _mm512_shuffle_epi8(t0, ctl_rg), wtl);
	ac->rg_lo = _mm512_dpwssd_epi32(ac->rg_lo, _mm512_shuffle_epi8(b0, ctl_rg), wbl);
	ac->rg_hi = _mm512_dpwssd_epi32(ac->rg_hi, _mm512_shuffle_epi8(t1, ctl_rg), wth);
	ac->rg_hi = _mm512_dpwssd_epi32(ac->rg_hi, _mm512_shuffle_epi8(b1, ctl_rg), wbh);
	ac->b_lo = _mm512_dpwssd_epi32(ac->b_lo, _mm512_shuffle_epi8(t0, ctl_b), wtl);
	ac->b_lo = _mm512_dpwssd_epi32(ac->b_lo, _mm512_shuffle_epi8(b0, ctl_b), wbl);
	ac->b_hi = _mm512_dpwssd_epi32(ac->b_hi, _mm512_shuffle_epi8(t1, ctl_b), wth);
	ac->b_hi = _mm512_dpwssd_epi32(ac->b_hi, _mm512_shuffle_epi8(b1, ctl_b), wbh);
}

/* shade_pixel_c for 16 pixels at a time, all with the same N: lane p is pixel idx[p] of
 * the run, and the loop walks their N x N subsamples together. Subsample (i, j) has the
 * same u, v and neighbours' side in every lane, so offset_at is the same products and
 * sums per lane without blends; the taps are gathered, and each lane sums its pixel's
 * lookups with the plain loop's integer sums (whose order does not matter). Packing
 * pixels rather than a pixel's subsamples fills every lane: most steep pixels take 2 x 2
 * or 3 x 3 lookups, which left 12 or 7 of 16 lanes idle. Offsets into the background fit
 * 32 bits, as the colour pass's own gathers assume. sum[3][16] receives the sums. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
shade16_avx512(const render_aa *a, int y, int xs, int N, const int32_t idx[16],
	       const render_aa_offsets *o, uint32_t sum[3][16])
{
	const int w = a->w, hgt = a->hgt;
	const float fw = (float)w, fh = (float)hgt;
	const __m512i ci = _mm512_add_epi32(_mm512_loadu_si512(idx), _mm512_set1_epi32(1));
	const __m512 fx = _mm512_cvtepi32_ps(_mm512_add_epi32(ci, _mm512_set1_epi32(xs - 1)));
	const __m512 fy = _mm512_set1_ps((float)y);
	/* the offsets around each lane's pixel: [component][row 0..2][column c-1 .. c+1] */
	float nbuf[2][3][3][16] __attribute__((aligned(64)));
	aa_neighbours(o, idx, 16, &nbuf[0][0][0][0]); /* (plain loads: cheaper than gathers) */
	__m512 nb[2][3][3];
	for (int k = 0; k < 2; k++)
		for (int r = 0; r < 3; r++)
			for (int d = 0; d < 3; d++)
				nb[k][r][d] = _mm512_load_ps(nbuf[k][r][d]);
	const __m512 eight = _mm512_set1_ps(8.0f), half = _mm512_set1_ps(0.5f);
	const __m512 zero = _mm512_setzero_ps();
	const __m512 lox = a->wrap ? _mm512_set1_ps(-fw) : zero,
		     hix = a->wrap ? _mm512_set1_ps(fw) : _mm512_set1_ps(fw - 1.0f),
		     loy = a->wrap ? _mm512_set1_ps(-fh) : zero,
		     hiy = a->wrap ? _mm512_set1_ps(fh) : _mm512_set1_ps(fh - 1.0f);
	const __m512i seven = _mm512_set1_epi32(7), bs = _mm512_set1_epi32(a->bs),
		      z = _mm512_setzero_si512(), W = _mm512_set1_epi32(w),
		      H = _mm512_set1_epi32(hgt);
	acc16 ac = {z, z, z, z};
	const float *pos = pos_tab[N];
	for (int j = 0; j < N; j++) {
		const float v = pos[j], wv = absf(v);
		const int ry = v < 0 ? 0 : 2;
		const __m512 wv1 = _mm512_set1_ps(1.0f - wv), wvv = _mm512_set1_ps(wv);
		for (int i = 0; i < N; i++) {
			const float u = pos[i], wu = absf(u);
			const int dx = u < 0 ? 0 : 2;
			const __m512 wu1 = _mm512_set1_ps(1.0f - wu), wuu = _mm512_set1_ps(wu);
			__m512 of[2];
			for (int k = 0; k < 2; k++) { /* offset_at, lane by lane */
				const __m512 top = _mm512_add_ps(_mm512_mul_ps(wu1, nb[k][1][1]),
								 _mm512_mul_ps(wuu, nb[k][1][dx]));
				const __m512 bot = _mm512_add_ps(_mm512_mul_ps(wu1, nb[k][ry][1]),
								 _mm512_mul_ps(wuu, nb[k][ry][dx]));
				of[k] = _mm512_add_ps(_mm512_mul_ps(wv1, top), _mm512_mul_ps(wvv, bot));
			}
			/* refract.c's positions (tp_clampf_nan_lo: max_ps(v, lo) is v > lo ? v : lo, NaN
			 * giving lo, and min_ps likewise) */
			__m512 sx, sy;
			if (a->wrap) {
				sx = _mm512_add_ps(
					_mm512_add_ps(fx, _mm512_min_ps(_mm512_max_ps(of[0], lox), hix)),
					hix);
				sy = _mm512_add_ps(
					_mm512_add_ps(fy, _mm512_min_ps(_mm512_max_ps(of[1], loy), hiy)),
					hiy);
			} else {
				sx = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(fx, of[0]), lox), hix);
				sy = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(fy, of[1]), loy), hiy);
			}
			const __m512i qx =
				_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sx, eight), half));
			const __m512i qy =
				_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sy, eight), half));
			__m512i x0 = _mm512_srai_epi32(qx, 3), y0 = _mm512_srai_epi32(qy, 3);
			const __m512i ax = _mm512_and_si512(qx, seven), ay = _mm512_and_si512(qy, seven);
			if (a->wrap) { /* x0 in [0, 3w): x0 % w by two conditional subtractions */
				for (int r = 0; r < 2; r++) {
					x0 = _mm512_mask_sub_epi32(x0, _mm512_cmpge_epi32_mask(x0, W), x0,
								   W);
					y0 = _mm512_mask_sub_epi32(y0, _mm512_cmpge_epi32_mask(y0, H), y0,
								   H);
				}
			}
			const __m512i off = _mm512_add_epi32(_mm512_mullo_epi32(y0, bs),
							     _mm512_slli_epi32(x0, 2));
			/* the two taps of a row are adjacent: one 64-bit gather fetches both */
			const __m256i olo = _mm512_castsi512_si256(off),
				      ohi = _mm512_extracti64x4_epi64(off, 1);
			const __m512i t0 = gather8(a->bgx, olo), t1 = gather8(a->bgx, ohi),
				      b0 = gather8(a->bgx + a->bs, olo),
				      b1 = gather8(a->bgx + a->bs, ohi);
			taps16(&ac, t0, t1, b0, b1, ax, ay, 0xFFFF);
		}
	}
	/* rg_*: R in the even 32-bit lanes, G in the odd; b_*: B in the even */
	const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4,
					      2, 0),
		      odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3,
					     1);
	_mm512_storeu_si512(sum[0], _mm512_permutex2var_epi32(ac.rg_lo, even, ac.rg_hi));
	_mm512_storeu_si512(sum[1], _mm512_permutex2var_epi32(ac.rg_lo, odd, ac.rg_hi));
	_mm512_storeu_si512(sum[2], _mm512_permutex2var_epi32(ac.b_lo, even, ac.b_hi));
}

/*
 * One pixel's N x N lookups from a window of the background held in registers, for the
 * larger N (N >= AA_WIN_MIN): lanes are the pixel's own lookups (16 at a time), not 16
 * pixels of the row. The lookups of one pixel land within a few texels of each other, so
 * the 8 x 4 texels [X, X + 8) x [Y, Y + 4) around them (128 bytes, two registers: rows
 * Y, Y + 1 and Y + 2, Y + 3) usually hold every tap; each lookup's two pairs of taps are
 * then picked out of those registers by word permutes (vpermi2w: a pair is 4 words at
 * word (y0 - Y) 16 + (x0 - X) 2, the bottom pair 16 words on) instead of two scalar loads
 * each. The positions and weights are shade16_avx512's (offset_at with the lane's u, v:
 * the same float operations), the taps the same bytes and the sums the same integer
 * sums, so the pixel is the same bytes. Returns 0 (and draws nothing) where the taps
 * spread wider than the window, or with wrap; shade16_avx512 then takes the pixel.
 */
#define AA_WIN_MIN 4 /* (3, 5 and 6 took more of a storm's time: a profile's samples) */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int
window_pixel(const render_aa *a, int x, int y, int c, int N, const render_aa_offsets *o,
	     uint32_t col[3])
{
	const int nn = N * N, nb = (nn + 15) / 16;
	const int w = a->w, hgt = a->hgt;
	if (a->wrap || w < 7 || hgt < 3)
		return 0;
	const float *pu = win_u[N], *pv = win_v[N];
	__m512 nb_[2][3][3];
	for (int k = 0; k < 2; k++)
		for (int r = 0; r < 3; r++)
			for (int d = 0; d < 3; d++)
				nb_[k][r][d] = _mm512_set1_ps(o->row[r][k][c - 1 + d]);
	const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
	const __m512 eight = _mm512_set1_ps(8.0f), half = _mm512_set1_ps(0.5f);
	const __m512 hix = _mm512_set1_ps((float)w - 1.0f), hiy = _mm512_set1_ps((float)hgt - 1.0f);
	const __m512 fx = _mm512_set1_ps((float)x), fy = _mm512_set1_ps((float)y);
	const __m512i sign = _mm512_set1_epi32(0x7fffffff), seven = _mm512_set1_epi32(7);
	__m512i QX[RENDER_AA_MAX_FORCE * RENDER_AA_MAX_FORCE / 16],
		QY[RENDER_AA_MAX_FORCE * RENDER_AA_MAX_FORCE / 16];
	__m512i lo = _mm512_set1_epi32(INT32_MAX), hi = _mm512_set1_epi32(INT32_MIN);
	__m512i loy = lo, hiy_ = hi;
	__mmask16 valid[RENDER_AA_MAX_FORCE * RENDER_AA_MAX_FORCE / 16]; /* lanes < N^2 */
	for (int b = 0; b < nb; b++) {
		const __m512 u = _mm512_loadu_ps(pu + 16 * b), v = _mm512_loadu_ps(pv + 16 * b);
		const __mmask16 ul = _mm512_cmp_ps_mask(u, zero, _CMP_LT_OQ),
				vl = _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ);
		const __m512 wu = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(u), sign)),
			     wv = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), sign));
		const __m512 wu1 = _mm512_sub_ps(one, wu), wv1 = _mm512_sub_ps(one, wv);
		__m512 of[2];
		for (int k = 0; k < 2; k++) { /* offset_at: the sides of u and v per lane */
			const __m512 mx = _mm512_mask_blend_ps(ul, nb_[k][1][2], nb_[k][1][0]);
			const __m512 ec = _mm512_mask_blend_ps(vl, nb_[k][2][1], nb_[k][0][1]);
			const __m512 ex = _mm512_mask_blend_ps(
				ul, _mm512_mask_blend_ps(vl, nb_[k][2][2], nb_[k][0][2]),
				_mm512_mask_blend_ps(vl, nb_[k][2][0], nb_[k][0][0]));
			const __m512 top = _mm512_add_ps(_mm512_mul_ps(wu1, nb_[k][1][1]),
							 _mm512_mul_ps(wu, mx));
			const __m512 bot = _mm512_add_ps(_mm512_mul_ps(wu1, ec), _mm512_mul_ps(wu, ex));
			of[k] = _mm512_add_ps(_mm512_mul_ps(wv1, top), _mm512_mul_ps(wv, bot));
		}
		/* look16's positions without wrap */
		const __m512 sx = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(fx, of[0]), zero), hix);
		const __m512 sy = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(fy, of[1]), zero), hiy);
		QX[b] = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sx, eight), half));
		QY[b] = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sy, eight), half));
		valid[b] = (__mmask16)(nn - 16 * b >= 16 ? 0xFFFF : (1u << (nn - 16 * b)) - 1);
		const __m512i x0 = _mm512_srai_epi32(QX[b], 3), y0 = _mm512_srai_epi32(QY[b], 3);
		lo = _mm512_mask_min_epi32(lo, valid[b], lo, x0);
		hi = _mm512_mask_max_epi32(hi, valid[b], hi, x0);
		loy = _mm512_mask_min_epi32(loy, valid[b], loy, y0);
		hiy_ = _mm512_mask_max_epi32(hiy_, valid[b], hiy_, y0);
	}
	/* the window: [X, X + 8) x [Y, Y + 4) within the stored background (w + 1 columns,
	 * hgt + 1 rows), holding every lookup's taps x0, x0 + 1 and y0, y0 + 1 */
	int X = _mm512_reduce_min_epi32(lo), Y = _mm512_reduce_min_epi32(loy);
	const int X1 = _mm512_reduce_max_epi32(hi), Y1 = _mm512_reduce_max_epi32(hiy_);
	X = X < w + 1 - 8 ? X : w + 1 - 8;
	Y = Y < hgt + 1 - 4 ? Y : hgt + 1 - 4;
	if (X < 0 || Y < 0 || X1 + 1 - X > 7 || Y1 + 1 - Y > 3)
		return 0;
	const uint8_t *p0 = a->bgx + (ptrdiff_t)Y * a->bs + 4 * (ptrdiff_t)X;
	const __m512i wlo = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)p0)),
		_mm256_loadu_si256((const __m256i *)(p0 + a->bs)), 1);
	const __m512i whi = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(p0 + 2 * a->bs))),
		_mm256_loadu_si256((const __m256i *)(p0 + 3 * a->bs)), 1);
	const __m512i XX = _mm512_set1_epi32(X), YY = _mm512_set1_epi32(Y);
	const __m512i words = _mm512_set1_epi64(0x0003000200010000LL),
		      down = _mm512_set1_epi64(0x0010001000100010LL); /* +16 words: a row */
	acc16 ac = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
		    _mm512_setzero_si512()};
	for (int b = 0; b < nb; b++) {
		const __m512i x0 = _mm512_sub_epi32(_mm512_srai_epi32(QX[b], 3), XX),
			      y0 = _mm512_sub_epi32(_mm512_srai_epi32(QY[b], 3), YY);
		const __m512i ax = _mm512_and_si512(QX[b], seven), ay = _mm512_and_si512(QY[b], seven);
		/* each lane's top pair: words base .. base + 3, base = 16 (y0 - Y) + 2 (x0 - X);
		 * invalid lanes read word 0 with zero weights */
		const __m512i base = _mm512_maskz_add_epi32(valid[b], _mm512_slli_epi32(y0, 4),
							    _mm512_slli_epi32(x0, 1));
		__m512i ql = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(base)),
			qh = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(base, 1));
		ql = _mm512_or_si512(ql, _mm512_slli_epi64(ql, 16));
		ql = _mm512_add_epi64(_mm512_or_si512(ql, _mm512_slli_epi64(ql, 32)), words);
		qh = _mm512_or_si512(qh, _mm512_slli_epi64(qh, 16));
		qh = _mm512_add_epi64(_mm512_or_si512(qh, _mm512_slli_epi64(qh, 32)), words);
		const __m512i t0 = _mm512_permutex2var_epi16(wlo, ql, whi),
			      t1 = _mm512_permutex2var_epi16(wlo, qh, whi),
			      b0 = _mm512_permutex2var_epi16(wlo, _mm512_add_epi16(ql, down), whi),
			      b1 = _mm512_permutex2var_epi16(wlo, _mm512_add_epi16(qh, down), whi);
		taps16(&ac, t0, t1, b0, b1, ax, ay, valid[b]);
	}
	/* the lanes' sums: R in the even dwords of rg_*, G in the odd, B in the even of b_*;
	 * each total is under 2^24 (255 * 64 * 256), so the 64-bit sum of the R, G pairs
	 * keeps R in its low half and G in its high half */
	const uint64_t rg = (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi32(ac.rg_lo, ac.rg_hi));
	const uint64_t bb = (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi32(ac.b_lo, ac.b_hi));
	/* (sum + 32 N^2) / (64 N^2) as finish16_avx512 takes it: in float, exact */
	const __m128i sum = _mm_setr_epi32((int)(uint32_t)rg, (int)(uint32_t)(rg >> 32),
					   (int)(uint32_t)bb, 0);
	const __m128i quo = _mm_cvttps_epi32(
		_mm_div_ps(_mm_cvtepi32_ps(_mm_add_epi32(sum, _mm_set1_epi32(32 * nn))),
			   _mm_set1_ps((float)(64 * nn))));
	col[0] = (uint32_t)_mm_cvtsi128_si32(quo);
	col[1] = (uint32_t)_mm_extract_epi32(quo, 1);
	col[2] = (uint32_t)_mm_extract_epi32(quo, 2);
	return 1;
}

/* The colours of 16 pixels of N x N lookups from their sums: (sum + 32 N^2) / (64 N^2) in
 * float, which is the integer quotient: the numerator and the divisor are whole numbers
 * under 2^24 (at most 255 * 64 * 256 + 32 * 256 with 16 x 16 lookups), so the correctly
 * rounded float quotient is below the next whole number whenever the exact one is, and
 * truncation floors it. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
finish16_avx512(uint32_t sum[3][16], int N)
{
	const uint32_t nn = (uint32_t)(N * N);
	const __m512i add = _mm512_set1_epi32((int)(32 * nn));
	const __m512 div = _mm512_set1_ps((float)(64 * nn));
	for (int k = 0; k < 3; k++) {
		const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(sum[k]), add);
		_mm512_storeu_si512(sum[k], _mm512_cvttps_epi32(_mm512_div_ps(
						    _mm512_cvtepi32_ps(a), div)));
	}
}


/* shade16_avx512 for 8 pixels in AVX2 (no VNNI): the same per-lane offsets and positions;
 * each lookup's four taps are the colour pass's byte sums (shade_row_avx2): the top and
 * bottom pairs in one 128-bit lane, bytes grouped by channel, multiplied by the four byte
 * weights (u8 x s8, a pair's sum at most 255 * 64) and summed to 32 bits per channel,
 * which each pixel's lane adds up over its lookups. */
__attribute__((target("avx2"))) static void shade8_avx2(const render_aa *a, int y, int xs, int N,
							 const int32_t idx[8],
							 const render_aa_offsets *o,
							 uint32_t sum[3][16])
{
	const int w = a->w, hgt = a->hgt;
	const float fw = (float)w, fh = (float)hgt;
	float nbuf[2][3][3][8] __attribute__((aligned(32)));
	aa_neighbours(o, idx, 8, &nbuf[0][0][0][0]);
	const __m256 fx = _mm256_cvtepi32_ps(_mm256_add_epi32(
		_mm256_loadu_si256((const __m256i *)idx), _mm256_set1_epi32(xs)));
	const __m256 fy = _mm256_set1_ps((float)y);
	const __m256 eight = _mm256_set1_ps(8.0f), half = _mm256_set1_ps(0.5f);
	const __m256 zero = _mm256_setzero_ps();
	const __m256 lox = a->wrap ? _mm256_set1_ps(-fw) : zero,
		     hix = a->wrap ? _mm256_set1_ps(fw) : _mm256_set1_ps(fw - 1.0f),
		     loy = a->wrap ? _mm256_set1_ps(-fh) : zero,
		     hiy = a->wrap ? _mm256_set1_ps(fh) : _mm256_set1_ps(fh - 1.0f);
	const __m256i seven = _mm256_set1_epi32(7), k8 = _mm256_set1_epi32(8),
		      bs = _mm256_set1_epi32(a->bs), W = _mm256_set1_epi32(w),
		      H = _mm256_set1_epi32(hgt), W1 = _mm256_set1_epi32(w - 1),
		      H1 = _mm256_set1_epi32(hgt - 1), ones = _mm256_set1_epi16(1);
	/* top pair | bottom pair -> R R' R R' ... (refract.c's TAP_ORDER) per 128-bit lane */
	const __m256i order = _mm256_setr_epi8(0, 8, 4, 12, 1, 9, 5, 13, 2, 10, 6, 14, 3, 11, 7,
					       15, 0, 8, 4, 12, 1, 9, 5, 13, 2, 10, 6, 14, 3, 11, 7,
					       15);
	__m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
			  _mm256_setzero_si256()};
	const float *pos = pos_tab[N];
	for (int j = 0; j < N; j++) {
		const float v = pos[j], wv = absf(v);
		const int ry = v < 0 ? 0 : 2;
		const __m256 wv1 = _mm256_set1_ps(1.0f - wv), wvv = _mm256_set1_ps(wv);
		for (int i = 0; i < N; i++) {
			const float u = pos[i], wu = absf(u);
			const int dx = u < 0 ? 0 : 2;
			const __m256 wu1 = _mm256_set1_ps(1.0f - wu), wuu = _mm256_set1_ps(wu);
			__m256 of[2];
			for (int k = 0; k < 2; k++) { /* offset_at, lane by lane */
				const __m256 mc = _mm256_load_ps(nbuf[k][1][1]),
					     mx = _mm256_load_ps(nbuf[k][1][dx]),
					     ec = _mm256_load_ps(nbuf[k][ry][1]),
					     ex = _mm256_load_ps(nbuf[k][ry][dx]);
				const __m256 top = _mm256_add_ps(_mm256_mul_ps(wu1, mc),
								 _mm256_mul_ps(wuu, mx));
				const __m256 bot = _mm256_add_ps(_mm256_mul_ps(wu1, ec),
								 _mm256_mul_ps(wuu, ex));
				of[k] = _mm256_add_ps(_mm256_mul_ps(wv1, top), _mm256_mul_ps(wvv, bot));
			}
			/* refract.c's positions (tp_clampf_nan_lo: max_ps(v, lo) is v > lo ? v : lo, NaN
			 * giving lo, and min_ps likewise) */
			__m256 sx, sy;
			if (a->wrap) {
				sx = _mm256_add_ps(
					_mm256_add_ps(fx, _mm256_min_ps(_mm256_max_ps(of[0], lox), hix)),
					hix);
				sy = _mm256_add_ps(
					_mm256_add_ps(fy, _mm256_min_ps(_mm256_max_ps(of[1], loy), hiy)),
					hiy);
			} else {
				sx = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(fx, of[0]), lox), hix);
				sy = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(fy, of[1]), loy), hiy);
			}
			const __m256i qx =
				_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(sx, eight), half));
			const __m256i qy =
				_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(sy, eight), half));
			__m256i x0 = _mm256_srai_epi32(qx, 3), y0 = _mm256_srai_epi32(qy, 3);
			const __m256i ax = _mm256_and_si256(qx, seven), ay = _mm256_and_si256(qy, seven);
			if (a->wrap) { /* x0 in [0, 3w): x0 % w by two conditional subtractions */
				for (int r = 0; r < 2; r++) {
					x0 = _mm256_sub_epi32(
						x0, _mm256_and_si256(W, _mm256_cmpgt_epi32(x0, W1)));
					y0 = _mm256_sub_epi32(
						y0, _mm256_and_si256(H, _mm256_cmpgt_epi32(y0, H1)));
				}
			}
			int32_t off[8] __attribute__((aligned(32)));
			_mm256_store_si256((__m256i *)off,
					   _mm256_add_epi32(_mm256_mullo_epi32(y0, bs),
							    _mm256_slli_epi32(x0, 2)));
			/* the byte weights w00 w10 w01 w11 of each lookup, as refract.c packs them */
			const __m256i uu = _mm256_or_si256(_mm256_sub_epi32(k8, ax),
							   _mm256_slli_epi32(ax, 16));
			const __m256i wq = _mm256_or_si256(
				_mm256_mullo_epi32(uu, _mm256_sub_epi32(k8, ay)),
				_mm256_slli_epi32(_mm256_mullo_epi32(uu, ay), 8));
			for (int q = 0; q < 4; q++) { /* pixels 2q (low lane) and 2q + 1 */
				const uint8_t *pa = a->bgx + off[2 * q], *pb = a->bgx + off[2 * q + 1];
				const __m256i t = _mm256_setr_m128i(
					_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pa),
							   _mm_loadl_epi64((const __m128i *)(pa + a->bs))),
					_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pb),
							   _mm_loadl_epi64((const __m128i *)(pb + a->bs))));
				const __m256i wsel = _mm256_permutevar8x32_epi32(
					wq, _mm256_setr_epi32(2 * q, 2 * q, 2 * q, 2 * q, 2 * q + 1,
							      2 * q + 1, 2 * q + 1, 2 * q + 1));
				acc[q] = _mm256_add_epi32(
					acc[q],
					_mm256_madd_epi16(_mm256_maddubs_epi16(
								  _mm256_shuffle_epi8(t, order), wsel),
							  ones));
			}
		}
	}
	/* acc[q]: pixel 2q's R G B X sums, then pixel 2q + 1's */
	for (int q = 0; q < 4; q++) {
		uint32_t t[8];
		_mm256_storeu_si256((__m256i *)t, acc[q]);
		for (int k = 0; k < 3; k++) {
			sum[k][2 * q] = t[k];
			sum[k][2 * q + 1] = t[4 + k];
		}
	}
}

/* finish16_avx512 for 8 pixels. */
__attribute__((target("avx2"))) static void finish8_avx2(uint32_t sum[3][16], int N)
{
	const uint32_t nn = (uint32_t)(N * N);
	const __m256i add = _mm256_set1_epi32((int)(32 * nn));
	const __m256 div = _mm256_set1_ps((float)(64 * nn));
	for (int k = 0; k < 3; k++) {
		const __m256i a = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)sum[k]), add);
		_mm256_storeu_si256((__m256i *)sum[k], _mm256_cvttps_epi32(_mm256_div_ps(
								_mm256_cvtepi32_ps(a), div)));
	}
}
#endif

/* Pixel x of the row from its lookups' colour c and its lift: out = clamp(c + lift). */
static inline void put_pixel(uint8_t *out, int x, const uint32_t c[3], int32_t lift)
{
	const int l = (int16_t)(lift & 0xffff);
	for (int k = 0; k < 3; k++) {
		const int cc = (int)c[k] + l;
		out[3 * x + k] = (uint8_t)(cc < 0 ? 0 : cc > 255 ? 255 : cc);
	}
}

void render_aa_shade(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
		     const uint8_t *nsub, const int32_t *lift, uint8_t *out)
{
	if (a->sat && !a->checks.aa_force) { /* render.antialias "footprint" (a forced count supersamples) */
		render_aa_footprint(a, y, xs, n, o, nsub, lift, out);
		return;
	}
	pthread_once(&pos_once, pos_init);
#ifdef __x86_64__
	if (a->vec) {
		/* the pixels of each N in runs of 16 or 8 (the last run padded with its
		 * first pixel, drawn once) */
		int32_t idx[RENDER_AA_MAX_FORCE + 1][256 + 16];
		int cnt[RENDER_AA_MAX_FORCE + 1] = {0}, win = 0;
		for (int i = 0; i < n; i++) {
			const int N = nsub[i];
			if (!N)
				continue;
			if (N >= AA_WIN_MIN && a->vec == 2 && a->checks.aa_window) {
				uint32_t col[3];
				if (window_pixel(a, xs + i, y, i + 1, N, o, col)) {
					put_pixel(out, xs + i, col, lift[i]);
					win++;
					continue;
				}
			}
			idx[N][cnt[N]++] = i;
		}
		if (win)
			atomic_fetch_add_explicit(&window_pixels, win, memory_order_relaxed);
		const int L = a->vec == 2 ? 16 : 8; /* pixels at a time */
		for (int N = 1; N <= RENDER_AA_MAX_FORCE; N++) {
			for (int b = 0; b < cnt[N]; b += L) {
				int32_t *ix = idx[N] + b;
				const int m = cnt[N] - b < L ? cnt[N] - b : L;
				for (int p = m; p < L; p++)
					ix[p] = ix[0];
				uint32_t sum[3][16];
				if (L == 16) {
					shade16_avx512(a, y, xs, N, ix, o, sum);
					finish16_avx512(sum, N);
				} else {
					shade8_avx2(a, y, xs, N, ix, o, sum);
					finish8_avx2(sum, N);
				}
				for (int p = 0; p < m; p++) {
					const uint32_t c[3] = {sum[0][p], sum[1][p], sum[2][p]};
					put_pixel(out, xs + ix[p], c, lift[ix[p]]);
				}
			}
		}
		return;
	}
#endif
	for (int i = 0; i < n; i++) {
		const int N = nsub[i];
		if (!N)
			continue;
		uint32_t acc[3] = {0, 0, 0};
		shade_pixel_c(a, xs + i, y, i + 1, N, o, acc);
		const uint32_t nn = (uint32_t)(N * N);
		for (int k = 0; k < 3; k++)
			acc[k] = (acc[k] + 32 * nn) / (64 * nn);
		put_pixel(out, xs + i, acc, lift[i]);
	}
}
