/* chop.c - choppy ambient waves: displacement, displaced surface, foam (chop.h). */
#include "solvers/airy/chop.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAR_CELLS 65536
#define RING_MAX  ((size_t)1 << 30) /* bytes of foam history */

int chop_init(airy_chop *c, const spec2d *at, int wrap, int spf, long period, double lambda_px,
	      double thr, double fade, const double range[2], double fps, tp_err *err)
{
	const int w = at->w, h = at->h, cw = at->cw;
	const size_t nm = (size_t)cw * h, cells = (size_t)w * h;
	memset(c, 0, sizeof *c);
	c->at = at;
	c->w = w;
	c->h = h;
	c->wrap = wrap;
	c->spf = spf > 0 ? spf : 1;
	c->thr = (float)thr;
	c->flo = (float)range[0];
	c->fhi = (float)range[1];
	double n = ceil(4 * fade * fps);
	c->nwin = n < 1 ? 1 : (int)n;
	c->nring = c->nwin;
	/* A loop of F frames whose ring fits holds each frame of the loop once: the frames
	 * before frame 0 are the loop's last ones, computed once for both. */
	const long loop_frames = period > 0 ? period / c->spf : 0;
	if (loop_frames > 0 && period % c->spf == 0 &&
	    (double)loop_frames * (double)cells <= (double)RING_MAX) {
		c->period = period;
		c->nring = (int)loop_frames;
	}
	if ((double)c->nwin * (double)cells > (double)RING_MAX)
		return tp_errf(err, TP_EINPUT,
			       "ambient.foam.fade: %g s keeps %d frames of %dx%d foam, more than "
			       "%zu MiB; use a shorter fade",
			       fade, c->nwin, w, h, RING_MAX >> 20);
	c->mul = spec_alloc(5 * nm);
	c->ca = spec_alloc(at->ncoef);
	c->cw = spec_alloc(at->ncoef);
	float **r[] = {&c->dx, &c->dy, &c->jxx, &c->jyy, &c->jxy, &c->disp, &c->foam};
	int ok = c->mul && c->ca && c->cw;
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
		ok &= (*r[i] = spec_alloc(cells)) != NULL;
	c->wts = malloc((size_t)c->nwin * sizeof *c->wts);
	c->ring = malloc((size_t)c->nring * cells);
	c->ring_step = malloc((size_t)c->nring * sizeof *c->ring_step);
	c->wrows = malloc((size_t)c->nwin * sizeof *c->wrows);
	if (!ok || !c->wts || !c->ring || !c->ring_step || !c->wrows)
		return tp_errf(err, TP_EIO, "out of memory for %dx%d choppy waves and their foam",
			       w, h);
	for (int j = 0; j < c->nwin; j++)
		c->wts[j] = (float)(FOAM_RATE / fps * exp(-j / (fade * fps)) / 255.0);
	for (int j = 0; j < c->nring; j++)
		c->ring_step[j] = LONG_MIN; /* holds no frame yet */
	memset(c->ring, 0, (size_t)c->nring * cells);
	for (int j = 0; j < h; j++) {
		const double ky = spec_ky(at, j);
		for (int i = 0; i < cw; i++) {
			const double kx = spec_kx(at, i), k = sqrt(kx * kx + ky * ky);
			float *m = c->mul + 5 * ((size_t)j * cw + i);
			const double l = k > 0 ? lambda_px / k : 0;
			m[0] = (float)(l * kx);
			m[1] = (float)(l * ky);
			m[2] = (float)(l * kx * kx);
			m[3] = (float)(l * ky * ky);
			m[4] = (float)(l * kx * ky);
		}
	}
	return 0;
}

void chop_free(airy_chop *c)
{
	float *f[] = {c->mul, c->ca, c->cw, c->dx, c->dy, c->jxx, c->jyy, c->jxy, c->disp, c->foam};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		spec_release(f[i]);
	free(c->wts);
	free(c->ring);
	free(c->ring_step);
	free(c->wrows);
	memset(c, 0, sizeof *c);
}

/* out = inverse transform of (i or -1) x mul[q] x ca: i for the displacement (odd in k),
 * -1 for its derivatives (even). */
static void derived(airy_chop *c, int q, int odd, float *out)
{
	const size_t nm = (size_t)c->at->cw * c->at->h;
	const float *ca = c->ca, *mul = c->mul;
	float *cw = c->cw;
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS)
	for (size_t m = 0; m < nm; m++) {
		const float s = mul[5 * m + q], re = ca[2 * m], im = ca[2 * m + 1];
		/* i (re + i im) = -im + i re */
		cw[2 * m] = odd ? -s * im : -s * re;
		cw[2 * m + 1] = odd ? s * re : -s * im;
	}
	spec_inverse(c->at, cw, out);
}

static long floor_div(long a, long b)
{
	long q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* What the ring knows the frame at step s by: s, or in a loop s modulo the loop (the same
 * field, bit for bit). */
static long key_of(const airy_chop *c, long s)
{
	if (!c->period)
		return s;
	long k = s % c->period;
	return k < 0 ? k + c->period : k;
}

/* Ring slot of the frame at step s. */
static int slot_of(const airy_chop *c, long s)
{
	long f = floor_div(key_of(c, s), c->spf) % c->nring;
	return (int)(f < 0 ? f + c->nring : f);
}

/* a(f) of the field in ca (the step s) into its ring slot:
 *     a = clamp(threshold - J, 0, 1),  J = (1 + Dxx)(1 + Dyy) - Dxy^2. */
static void foam_new(airy_chop *c, long s)
{
	const size_t cells = (size_t)c->w * c->h;
	derived(c, 2, 0, c->jxx);
	derived(c, 3, 0, c->jyy);
	derived(c, 4, 0, c->jxy);
	const int k = slot_of(c, s);
	uint8_t *o = c->ring + (size_t)k * cells;
	const float thr = c->thr;
	const float *a = c->jxx, *b = c->jyy, *x = c->jxy;
#pragma omp parallel for schedule(static) if (cells >= PAR_CELLS)
	for (size_t i = 0; i < cells; i++) {
		float J = (1.0f + a[i]) * (1.0f + b[i]) - x[i] * x[i];
		float v = thr - J;
		v = v < 0 ? 0 : v > 1 ? 1 : v;
		o[i] = (uint8_t)(v * 255.0f + 0.5f);
	}
	c->ring_step[k] = key_of(c, s);
}

/* Bilinear, periodic sample of a w x h field at (x, y) pixels (sample (i, j) at i, j). */
static inline float sample_wrap(const float *f, int w, int h, float x, float y)
{
	if (!(fabsf(x) < 1e9f && fabsf(y) < 1e9f)) /* a blown-up (NaN) field: defined */
		return f[0];
	float fx = floorf(x), fy = floorf(y);
	float ax = x - fx, ay = y - fy;
	int x0 = (int)fx % w, y0 = (int)fy % h;
	x0 += x0 < 0 ? w : 0;
	y0 += y0 < 0 ? h : 0;
	int x1 = x0 + 1 < w ? x0 + 1 : 0, y1 = y0 + 1 < h ? y0 + 1 : 0;
	const float *r0 = f + (size_t)y0 * w, *r1 = f + (size_t)y1 * w;
	float t = r0[x0] + (r0[x1] - r0[x0]) * ax, b = r1[x0] + (r1[x1] - r1[x0]) * ax;
	return t + (b - t) * ay;
}

/* sample_wrap for x in (-w, 2w) and y in (-h, 2h): one wrap by a compare. */
static inline float sample_near(const float *f, int w, int h, float x, float y)
{
	int x0 = (int)(x + (float)w) - w, y0 = (int)(y + (float)h) - h;
	float ax = x - (float)x0, ay = y - (float)y0;
	x0 += x0 < 0 ? w : x0 >= w ? -w : 0;
	y0 += y0 < 0 ? h : y0 >= h ? -h : 0;
	int x1 = x0 + 1 < w ? x0 + 1 : 0, y1 = y0 + 1 < h ? y0 + 1 : 0;
	const float *r0 = f + (size_t)y0 * w, *r1 = f + (size_t)y1 * w;
	float t = r0[x0] + (r0[x1] - r0[x0]) * ax, b = r1[x0] + (r1[x1] - r1[x0]) * ax;
	return t + (b - t) * ay;
}

/* The displacement (both fields) at (x, y), as sample_near, the weights shared. */
static inline void sample_d(const float *dx, const float *dy, int w, int h, float x, float y,
			    float *ux, float *uy)
{
	/* floor by truncating a positive number (floorf is a libm call on baseline x86-64) */
	int x0 = (int)(x + (float)w) - w, y0 = (int)(y + (float)h) - h;
	float ax = x - (float)x0, ay = y - (float)y0;
	x0 += x0 < 0 ? w : x0 >= w ? -w : 0;
	y0 += y0 < 0 ? h : y0 >= h ? -h : 0;
	int x1 = x0 + 1 < w ? x0 + 1 : 0, y1 = y0 + 1 < h ? y0 + 1 : 0;
	const size_t a = (size_t)y0 * w, b = (size_t)y1 * w;
	float t = dx[a + x0] + (dx[a + x1] - dx[a + x0]) * ax;
	float u = dx[b + x0] + (dx[b + x1] - dx[b + x0]) * ax;
	*ux = t + (u - t) * ay;
	t = dy[a + x0] + (dy[a + x1] - dy[a + x0]) * ax;
	u = dy[b + x0] + (dy[b + x1] - dy[b + x0]) * ax;
	*uy = t + (u - t) * ay;
}

/* The same, held at the edges. */
static inline float sample_held(const float *f, int w, int h, float x, float y)
{
	x = !(x > 0) ? 0 : x > (float)(w - 1) ? (float)(w - 1) : x; /* NaN: 0 */
	y = !(y > 0) ? 0 : y > (float)(h - 1) ? (float)(h - 1) : y;
	int x0 = (int)x, y0 = (int)y;
	int x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
	float ax = x - (float)x0, ay = y - (float)y0;
	const float *r0 = f + (size_t)y0 * w, *r1 = f + (size_t)y1 * w;
	float t = r0[x0] + (r0[x1] - r0[x0]) * ax, b = r1[x0] + (r1[x1] - r1[x0]) * ax;
	return t + (b - t) * ay;
}

/* One row of the foam sum, o = min(1, sum_j wts[j] rows[j][at + x]) in order of j:
 * cloned for the vector units (the same products and sums per element, so the same
 * bits on each). */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
foam_row(float *restrict o, const uint8_t *const *rows, size_t at, const float *wts, int n, int w)
{
	for (int x = 0; x < w; x++)
		o[x] = 0;
	for (int j = 0; j < n; j++) {
		const uint8_t *restrict r = rows[j] + at;
		const float wj = wts[j];
		for (int x = 0; x < w; x++)
			o[x] += wj * (float)r[x];
	}
	for (int x = 0; x < w; x++)
		o[x] = o[x] < 1.0f ? o[x] : 1.0f;
}

void chop_frame(airy_chop *c, const float *lag, long step, chop_fill_fn fill, const void *ctx)
{
	const int w = c->w, h = c->h, n = c->nwin;
	const size_t cells = (size_t)w * h;
	fill(ctx, c->ca, step);
	derived(c, 0, 1, c->dx);
	derived(c, 1, 1, c->dy);
	if (c->ring_step[slot_of(c, step)] != key_of(c, step))
		foam_new(c, step);
	/* earlier frames missing from the ring (the first frame, a seek) */
	for (int j = 1; j < n; j++) {
		const long s = step - (long)j * c->spf;
		if (c->ring_step[slot_of(c, s)] != key_of(c, s)) {
			fill(ctx, c->ca, s);
			foam_new(c, s);
		}
	}
	/* F = min(1, sum_j wts[j] ring(step - j spf)), in order of j */
	const uint8_t **rows = c->wrows;
	for (int j = 0; j < n; j++)
		rows[j] = c->ring + (size_t)slot_of(c, step - (long)j * c->spf) * cells;
#pragma omp parallel for schedule(static) if (cells >= PAR_CELLS)
	for (int y = 0; y < h; y++)
		foam_row(c->foam + (size_t)y * w, rows, (size_t)y * w, c->wts, n, w);
	if (c->flo != 0.0f || c->fhi != 1.0f) {
		/* the range: clamp((F - lo) / (hi - lo), 0, 1) */
		const float lo = c->flo, inv = 1.0f / (c->fhi - c->flo);
		float *f = c->foam;
#pragma omp parallel for schedule(static) if (cells >= PAR_CELLS)
		for (size_t i = 0; i < cells; i++) {
			const float v = (f[i] - lo) * inv;
			f[i] = v < 0.0f ? 0.0f : v < 1.0f ? v : 1.0f;
		}
	}
	/* the displaced surface: x0 <- x - D(x0), then the height at x0 */
	const float *dx = c->dx, *dy = c->dy;
	const int wrap = c->wrap;
	/* the one-compare wrap of sample_d needs |Dx|, |Dy| < min(w, h) - 1 (a field that
	 * large is no sea; it, and a blown-up one, gets the general path) */
	float dmax = 0;
#pragma omp parallel for schedule(static) reduction(max : dmax) if (cells >= PAR_CELLS)
	for (size_t i = 0; i < cells; i++) {
		float m = fabsf(dx[i]) + fabsf(dy[i]); /* >= either; NaN if either is */
		m = m < INFINITY ? m : INFINITY;        /* NaN: the general path */
		dmax = m > dmax ? m : dmax;
	}
	const int fast = dmax < (float)((w < h ? w : h) - 1);
	/* Each pixel's iterations are a chain of dependent loads; LANES pixels at a time
	 * let the processor overlap the chains. */
	enum { LANES = 16 };
#pragma omp parallel for schedule(static) if (cells >= PAR_CELLS)
	for (int y = 0; y < h; y++) {
		float *o = c->disp + (size_t)y * w;
		for (int xa = 0; xa < w; xa += LANES) {
			const int cnt = w - xa < LANES ? w - xa : LANES;
			float px[LANES], py[LANES];
			for (int l = 0; l < cnt; l++) {
				px[l] = (float)(xa + l);
				py[l] = (float)y;
			}
			for (int it = 0; it < CHOP_ITERS; it++)
				for (int l = 0; l < cnt; l++) {
					float ux, uy;
					if (fast) {
						sample_d(dx, dy, w, h, px[l], py[l], &ux, &uy);
					} else {
						ux = sample_wrap(dx, w, h, px[l], py[l]);
						uy = sample_wrap(dy, w, h, px[l], py[l]);
					}
					px[l] = (float)(xa + l) - ux;
					py[l] = (float)y - uy;
				}
			for (int l = 0; l < cnt; l++)
				o[xa + l] = !wrap  ? sample_held(lag, w, h, px[l], py[l])
					    : fast ? sample_near(lag, w, h, px[l], py[l])
						   : sample_wrap(lag, w, h, px[l], py[l]);
		}
	}
}
