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
 * Plain scalar C (no vector twin needed); each pixel depends only on the surface, so the
 * bytes are the same whatever the thread count.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "render/render_impl.h"

#define AA_THRESHOLD 0.25f /* pixels of offset change per pixel: up to it, one lookup */
#define AA_SPACING   0.25f /* pixels of offset change per subsample */
#define AA_MAX       6    /* subsamples per axis at most */

static int aa_force;

void render_set_antialias(int n)
{
	aa_force = n < 0 ? 0 : n > RENDER_AA_MAX_FORCE ? RENDER_AA_MAX_FORCE : n;
}

int render_aa_forced(void) { return aa_force; }

static inline float absf(float v) { return v < 0 ? -v : v; }

static inline float clampf(float v, float lo, float hi)
{
	v = v > lo ? v : lo;
	return v < hi ? v : hi;
}

static inline float maxf(float a, float b) { return a > b ? a : b; }

/* Cloned for the vector units: max, abs and subtraction are exact, so every clone gives
 * the same D. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) int
render_aa_plan(int n, const render_aa_offsets *o, uint8_t *nsub)
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

void render_aa_shade(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
		     const uint8_t *nsub, const int32_t *lift, uint8_t *out)
{
	const int w = a->w, hgt = a->hgt;
	const float fw = (float)w, fh = (float)hgt;
	pthread_once(&pos_once, pos_init);
	for (int i = 0; i < n; i++) {
		const int N = nsub[i];
		if (!N)
			continue;
		const int x = xs + i, c = i + 1;
		const float *pos = pos_tab[N];
		uint32_t acc[3] = {0, 0, 0};
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
		const uint32_t nn = (uint32_t)(N * N);
		const int l = (int16_t)(lift[i] & 0xffff);
		for (int k = 0; k < 3; k++) {
			const int cc = (int)((acc[k] + 32 * nn) / (64 * nn)) + l;
			out[3 * x + k] = (uint8_t)(cc < 0 ? 0 : cc > 255 ? 255 : cc);
		}
	}
}
