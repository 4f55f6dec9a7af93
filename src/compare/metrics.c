/* metrics.c - per-frame difference metrics (definitions in compare.h). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"

/* Rows per reduction chunk. Fixed, so the chunks (and the order their partial results
 * are combined in) never depend on the thread count. */
#define CHUNK_ROWS 16
#define WIN CMP_SSIM_WIN
#define HALF (WIN / 2)

typedef struct chunk {
	int max;
	int64_t pixels;
	uint64_t sse;
	int x0, y0, x1, y1; /* bounding box of differing pixels, inclusive; x1 < x0 if none */
} chunk;

struct cmp_scratch {
	int w, h, threads;
	int nchunks;     /* chunks of image rows */
	chunk *chunks;
	int nschunks;    /* chunks of SSIM output rows */
	double *ssim_sum;
	float *rows;     /* per thread: 5 arrays of 3w floats (see ssim_row) */
	size_t row_len;
	double g[WIN];   /* normalised Gaussian window, sigma 1.5 */
	float gf[WIN];   /* the same in single precision */
};

int cmp_scratch_create(int w, int h, int threads, cmp_scratch **out, tp_err *err)
{
	*out = NULL;
	if (w <= 0 || h <= 0 || threads < 1)
		return tp_errf(err, TP_EIO, "bad scratch size %dx%d", w, h);
	cmp_scratch *s = calloc(1, sizeof *s);
	if (!s)
		return tp_errf(err, TP_EIO, "out of memory");
	s->w = w;
	s->h = h;
	s->threads = threads;
	s->nchunks = (h + CHUNK_ROWS - 1) / CHUNK_ROWS;
	s->nschunks = h >= WIN ? (h - WIN + 1 + CHUNK_ROWS - 1) / CHUNK_ROWS : 1;
	s->row_len = (size_t)w * 3;
	s->chunks = calloc((size_t)s->nchunks, sizeof *s->chunks);
	s->ssim_sum = calloc((size_t)s->nschunks, sizeof *s->ssim_sum);
	s->rows = malloc(sizeof *s->rows * s->row_len * 5 * (size_t)threads);
	if (!s->chunks || !s->ssim_sum || !s->rows) {
		cmp_scratch_destroy(s);
		return tp_errf(err, TP_EIO, "out of memory for %dx%d comparison buffers", w, h);
	}
	/* g(k) = exp(-(k - 5)^2 / (2 sigma^2)) / sum, sigma = 1.5 px (Wang et al. 2004). */
	double sum = 0;
	for (int k = 0; k < WIN; k++) {
		double d = k - HALF;
		s->g[k] = exp(-d * d / (2 * 1.5 * 1.5));
		sum += s->g[k];
	}
	for (int k = 0; k < WIN; k++) {
		s->g[k] /= sum;
		s->gf[k] = (float)s->g[k];
	}
	*out = s;
	return 0;
}

void cmp_scratch_destroy(cmp_scratch *s)
{
	if (!s)
		return;
	free(s->chunks);
	free(s->ssim_sum);
	free(s->rows);
	free(s);
}

static void clip(const cmp_rect *r, int w, int h, int *x0, int *y0, int *x1, int *y1)
{
	/* 64-bit sums: x + w must not overflow for rectangles given on the command line. */
	int64_t a = r->x, b = r->y, c = (int64_t)r->x + r->w, d = (int64_t)r->y + r->h;
	*x0 = (int)(a < 0 ? 0 : a > w ? w : a);
	*y0 = (int)(b < 0 ? 0 : b > h ? h : b);
	*x1 = (int)(c < 0 ? 0 : c > w ? w : c);
	*y1 = (int)(d < 0 ? 0 : d > h ? h : d);
}

int64_t cmp_unmasked_pixels(int w, int h, const cmp_rect *r, int n)
{
	/* Per row, the union of the covering intervals: sort-free, as there are few rects. */
	int64_t masked = 0;
	for (int y = 0; y < h; y++) {
		int covered = 0, pos = 0;
		for (;;) {
			/* Extend from pos over every interval that starts at or before it. */
			int next = pos, best = -1;
			for (int i = 0; i < n; i++) {
				int x0, y0, x1, y1;
				clip(&r[i], w, h, &x0, &y0, &x1, &y1);
				if (y < y0 || y >= y1 || x1 <= x0 || x1 <= pos)
					continue;
				if (x0 <= pos) {
					if (x1 > next)
						next = x1;
				} else if (best < 0 || x0 < best) {
					best = x0;
				}
			}
			if (next > pos) {
				covered += next - pos;
				pos = next;
			} else if (best >= 0) {
				pos = best;
			} else {
				break;
			}
		}
		masked += covered;
	}
	return (int64_t)w * h - masked;
}

void cmp_mask_copy(const tp_image *src, tp_image *dst, const cmp_rect *r, int n)
{
	for (int i = 0; i < n; i++) {
		int x0, y0, x1, y1;
		clip(&r[i], src->w, src->h, &x0, &y0, &x1, &y1);
		for (int y = y0; y < y1 && x1 > x0; y++)
			memcpy(tp_image_row(dst, y) + 3 * x0, tp_image_row(src, y) + 3 * x0,
			       3 * (size_t)(x1 - x0));
	}
}

int cmp_equal(const tp_image *a, const tp_image *b)
{
	if (a->w != b->w || a->h != b->h)
		return 0;
	for (int y = 0; y < a->h; y++)
		if (memcmp(tp_image_row(a, y), tp_image_row(b, y), 3 * (size_t)a->w))
			return 0;
	return 1;
}

/* One chunk of rows: d(p,c) = |A - B|; max, count over fuzz, sum of squares, bbox.
 * Integer arithmetic, so the chunk results are exact. */
static void basic_chunk(const tp_image *a, const tp_image *b, int fuzz, int y0, int y1, chunk *k)
{
	k->max = 0;
	k->pixels = 0;
	k->sse = 0;
	k->x0 = a->w;
	k->y0 = a->h;
	k->x1 = -1;
	k->y1 = -1;
	size_t n = 3 * (size_t)a->w;
	for (int y = y0; y < y1; y++) {
		const uint8_t *pa = tp_image_row(a, y), *pb = tp_image_row(b, y);
		if (!memcmp(pa, pb, n)) /* most rows of a regression diff are untouched */
			continue;
		int rx0 = -1, rx1 = -1;
		for (int x = 0; x < a->w; x++) {
			int d0 = abs(pa[3 * x] - pb[3 * x]);
			int d1 = abs(pa[3 * x + 1] - pb[3 * x + 1]);
			int d2 = abs(pa[3 * x + 2] - pb[3 * x + 2]);
			int dm = d0 > d1 ? d0 : d1;
			dm = dm > d2 ? dm : d2;
			if (!dm)
				continue;
			k->sse += (uint64_t)(d0 * d0 + d1 * d1 + d2 * d2);
			k->pixels += dm > fuzz;
			if (dm > k->max)
				k->max = dm;
			if (rx0 < 0)
				rx0 = x;
			rx1 = x;
		}
		if (rx0 < k->x0)
			k->x0 = rx0;
		if (rx1 > k->x1)
			k->x1 = rx1;
		if (k->y1 < 0)
			k->y0 = y;
		k->y1 = y;
	}
}

void cmp_metrics_basic(const tp_image *a, const tp_image *b, int fuzz, int64_t compared,
		       cmp_scratch *s, int threads, cmp_metrics *m)
{
	int nch = (a->h + CHUNK_ROWS - 1) / CHUNK_ROWS;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
	for (int c = 0; c < nch; c++) {
		int y0 = c * CHUNK_ROWS, y1 = y0 + CHUNK_ROWS > a->h ? a->h : y0 + CHUNK_ROWS;
		basic_chunk(a, b, fuzz, y0, y1, &s->chunks[c]);
	}
	memset(m, 0, sizeof *m);
	int x0 = a->w, y0 = a->h, x1 = -1, y1 = -1;
	for (int c = 0; c < nch; c++) {
		const chunk *k = &s->chunks[c];
		if (k->max > m->max_diff)
			m->max_diff = k->max;
		m->pixels += k->pixels;
		m->sse += k->sse;
		if (k->x1 < 0)
			continue;
		x0 = k->x0 < x0 ? k->x0 : x0;
		x1 = k->x1 > x1 ? k->x1 : x1;
		y0 = k->y0 < y0 ? k->y0 : y0;
		y1 = k->y1 > y1 ? k->y1 : y1;
	}
	if (x1 >= 0)
		m->bbox = (cmp_rect){ x0, y0, x1 - x0 + 1, y1 - y0 + 1 };
	m->compared = compared;
	m->ratio = compared > 0 ? (double)m->pixels / (double)compared : 0;
	m->mse = compared > 0 ? (double)m->sse / (3.0 * (double)compared) : 0;
	/* PSNR = 10 log10(MAX^2 / MSE), MAX = 255; identical pixels give +inf. */
	m->psnr = m->sse ? 10.0 * log10(255.0 * 255.0 / m->mse) : INFINITY;
	m->ssim = NAN;
}

/* SSIM of one window from its weighted moments (Wang et al. 2004, eq. 13):
 *   SSIM = (2 mu_a mu_b + C1)(2 s_ab + C2) / ((mu_a^2 + mu_b^2 + C1)(s_a^2 + s_b^2 + C2))
 * with s_a^2 + s_b^2 = E[a^2 + b^2] - mu_a^2 - mu_b^2, s_ab = E[ab] - mu_a mu_b,
 * C1 = (0.01 L)^2, C2 = (0.03 L)^2, L = 255 (sample values 0..255). The moments come in
 * about the centre of the range (a' = a - 128), which leaves variances and covariance
 * unchanged and keeps the squared terms small, so they lose little to cancellation.
 * Identical windows give exactly 1: numerator and denominator are then the same
 * operations on the same numbers. */
static inline double ssim_window(double ma, double mb, double eqq, double eab)
{
	const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
	double maa = ma * ma, mbb = mb * mb, mab = ma * mb;
	double ua = ma + 128, ub = mb + 128;
	return ((2 * ua * ub + c1) * (2 * (eab - mab) + c2)) /
	       ((ua * ua + ub * ub + c1) * (eqq - maa - mbb + c2));
}

/* The SSIM map in single precision, centred (see above): twice the SIMD width of double
 * and accurate to about 1e-6 against a double-precision evaluation. */
static inline float ssim_window_f(float ma, float mb, float eqq, float eab)
{
	const float c1 = (0.01f * 255) * (0.01f * 255), c2 = (0.03f * 255) * (0.03f * 255);
	float maa = ma * ma, mbb = mb * mb, mab = ma * mb;
	float ua = ma + 128, ub = mb + 128;
	return ((2 * ua * ub + c1) * (2 * (eab - mab) + c2)) /
	       ((ua * ua + ub * ub + c1) * (eqq - maa - mbb + c2));
}

/* Vertical pass, one symmetric tap pair (rows k and 10 - k, weight gk): adds the pair's
 * weighted a', b', a'^2 + b'^2 and a'b' (a' = a - 128). The pair sums are exact integers.
 * Kernels take restrict parameters so that they vectorise, and are cloned for the wider
 * vector units (element-wise arithmetic in the same order, no FMA: the same bits). */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
static void ssim_vpair(const uint8_t *restrict a0, const uint8_t *restrict a1,
		       const uint8_t *restrict b0, const uint8_t *restrict b1, float gk,
		       float *restrict va, float *restrict vb, float *restrict vq,
		       float *restrict vx, size_t i0, size_t i1)
{
	for (size_t i = i0; i < i1; i++) {
		int u0 = a0[i] - 128, v0 = b0[i] - 128, u1 = a1[i] - 128, v1 = b1[i] - 128;
		va[i] += gk * (float)(u0 + u1);
		vb[i] += gk * (float)(v0 + v1);
		vq[i] += gk * (float)(u0 * u0 + v0 * v0 + u1 * u1 + v1 * v1);
		vx[i] += gk * (float)(u0 * v0 + u1 * v1);
	}
}

/* Vertical pass, the centre row (k = 5): same sums, single row. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
static void ssim_vcentre(const uint8_t *restrict a0, const uint8_t *restrict b0, float gk,
			 float *restrict va, float *restrict vb, float *restrict vq,
			 float *restrict vx, size_t i0, size_t i1)
{
	for (size_t i = i0; i < i1; i++) {
		int u = a0[i] - 128, v = b0[i] - 128;
		va[i] += gk * (float)u;
		vb[i] += gk * (float)v;
		vq[i] += gk * (float)(u * u + v * v);
		vx[i] += gk * (float)(u * v);
	}
}

/* Horizontal pass and the SSIM of each window: output sample i (column xo, channel c)
 * covers vertical sums i + 3k, k = 0..10. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
static void ssim_hpass(const float *restrict va, const float *restrict vb,
		       const float *restrict vq, const float *restrict vx, const float *gw,
		       float *restrict out, size_t i0, size_t i1)
{
	float g[WIN]; /* a local copy: no store can alias it */
	memcpy(g, gw, sizeof g);
	for (size_t i = i0; i < i1; i++) {
		float ma = g[HALF] * va[i + 3 * HALF], mb = g[HALF] * vb[i + 3 * HALF];
		float eq = g[HALF] * vq[i + 3 * HALF], ex = g[HALF] * vx[i + 3 * HALF];
		for (int k = 0; k < HALF; k++) {
			size_t l = i + 3 * (size_t)k, r = i + 3 * (size_t)(WIN - 1 - k);
			ma += g[k] * (va[l] + va[r]);
			mb += g[k] * (vb[l] + vb[r]);
			eq += g[k] * (vq[l] + vq[r]);
			ex += g[k] * (vx[l] + vx[r]);
		}
		out[i] = ssim_window_f(ma, mb, eq, ex);
	}
}

/* Sum of the SSIM of output row yo's windows xs..xe, all three channels. buf holds 5
 * arrays of 3w floats: the vertical Gaussian sums over rows yo..yo+10 for the columns
 * those windows cover, then the per-sample SSIM. */
static double ssim_row(const tp_image *a, const tp_image *b, const float *g, int yo, int xs,
		       int xe, float *buf, size_t len)
{
	float *va = buf, *vb = buf + len, *vq = buf + 2 * len, *vx = buf + 3 * len;
	float *out = buf + 4 * len;
	size_t i0 = 3 * (size_t)xs, i1 = 3 * ((size_t)xe + WIN); /* input samples used */
	memset(va + i0, 0, (i1 - i0) * sizeof *va);
	memset(vb + i0, 0, (i1 - i0) * sizeof *vb);
	memset(vq + i0, 0, (i1 - i0) * sizeof *vq);
	memset(vx + i0, 0, (i1 - i0) * sizeof *vx);
	for (int k = 0; k < HALF; k++)
		ssim_vpair(tp_image_row(a, yo + k), tp_image_row(a, yo + WIN - 1 - k),
			   tp_image_row(b, yo + k), tp_image_row(b, yo + WIN - 1 - k), g[k], va, vb,
			   vq, vx, i0, i1);
	ssim_vcentre(tp_image_row(a, yo + HALF), tp_image_row(b, yo + HALF), g[HALF], va, vb, vq, vx,
		     i0, i1);
	size_t o1 = 3 * ((size_t)xe + 1);
	ssim_hpass(va, vb, vq, vx, g, out, i0, o1);
	double sum = 0;
	for (size_t i = i0; i < o1; i++)
		sum += out[i];
	return sum;
}

/* Images under 11 pixels on a side: one window over everything, weights 1/N. */
static double ssim_global(const tp_image *a, const tp_image *b)
{
	double total = 0, n = (double)a->w * a->h;
	for (int c = 0; c < 3; c++) {
		double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
		for (int y = 0; y < a->h; y++) {
			const uint8_t *pa = tp_image_row(a, y), *pb = tp_image_row(b, y);
			for (int x = 0; x < a->w; x++) {
				double u = pa[3 * x + c] - 128.0, v = pb[3 * x + c] - 128.0;
				sa += u;
				sb += v;
				saa += u * u;
				sbb += v * v;
				sab += u * v;
			}
		}
		total += ssim_window(sa / n, sb / n, (saa + sbb) / n, sab / n);
	}
	return total / 3;
}

double cmp_ssim(const tp_image *a, const tp_image *b, const cmp_rect *change, cmp_scratch *s,
		int threads)
{
	if (a->w < WIN || a->h < WIN)
		return ssim_global(a, b);
	int ow = a->w - WIN + 1, oh = a->h - WIN + 1;
	int nch = (oh + CHUNK_ROWS - 1) / CHUNK_ROWS;
	/* Windows that can see a changed pixel: output columns bx0-10 .. bx1, rows likewise. */
	int has = change && change->w > 0 && change->h > 0;
	int xs = has ? change->x - (WIN - 1) : 0, xe = has ? change->x + change->w - 1 : ow - 1;
	int ys = has ? change->y - (WIN - 1) : 0, ye = has ? change->y + change->h - 1 : oh - 1;
	xs = xs < 0 ? 0 : xs;
	xe = xe > ow - 1 ? ow - 1 : xe;
	ys = ys < 0 ? 0 : ys;
	ye = ye > oh - 1 ? oh - 1 : ye;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
	for (int c = 0; c < nch; c++) {
		float *buf = s->rows + (size_t)omp_get_thread_num() * 5 * s->row_len;
		double sum = 0;
		int y1 = (c + 1) * CHUNK_ROWS < oh ? (c + 1) * CHUNK_ROWS : oh;
		for (int yo = c * CHUNK_ROWS; yo < y1; yo++) {
			/* Windows that see no change score exactly 1 in each of the 3 channels. */
			if (has && (yo < ys || yo > ye || xe < xs)) {
				sum += 3.0 * ow;
				continue;
			}
			sum += ssim_row(a, b, s->gf, yo, xs, xe, buf, s->row_len) +
			       3.0 * (ow - (xe - xs + 1));
		}
		s->ssim_sum[c] = sum;
	}
	double total = 0;
	for (int c = 0; c < nch; c++)
		total += s->ssim_sum[c];
	return total / (3.0 * ow * oh);
}
