/* spec2d.c - blocked, thread-count independent 2D FFTs and DCTs on FFTW (spec2d.h). */
#include "solvers/airy/spec2d.h"

#include <fftw3.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PAR_CELLS 65536 /* grids this big share their blocks among the threads */

/* FFTW's planner is not thread-safe; execution is. */
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;

float *spec_alloc(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, (n ? n : 1) * sizeof(float)))
		return NULL;
	return p;
}

void spec_release(float *p)
{
	free(p);
}

static int nblocks(int n, int b)
{
	return (n + b - 1) / b;
}

/* Block k's plan: [0] for whole blocks and for the one block of a side shorter than a
 * block (spec_init makes [0] for that many), [1] for a shorter last block. */
static fftwf_plan block_plan(void *const *pl, int k, int full)
{
	return pl[k < full || full == 0 ? 0 : 1];
}

/* The plans for `count` 1D transforms in blocks of SPEC_BLOCK; dir 0 forward, 1 inverse;
 * rows (along x) or columns (along y). */
static void *make(const spec2d *t, int rows, int inverse, int howmany, float *real, float *coef)
{
	const int w = t->w, h = t->h, cw = t->cw;
	const unsigned fl = FFTW_ESTIMATE;
	fftwf_complex *c = (fftwf_complex *)(void *)coef;
	if (t->kind == SPEC_FFT) {
		if (rows && !inverse)
			return fftwf_plan_many_dft_r2c(1, &w, howmany, real, NULL, 1, w, c, NULL, 1,
						       cw, fl);
		if (rows)
			return fftwf_plan_many_dft_c2r(1, &w, howmany, c, NULL, 1, cw, real, NULL,
						       1, w, fl);
		return fftwf_plan_many_dft(1, &h, howmany, c, NULL, cw, 1, c, NULL, cw, 1,
					   inverse ? FFTW_BACKWARD : FFTW_FORWARD, fl);
	}
	const fftwf_r2r_kind k = inverse ? FFTW_REDFT01 : FFTW_REDFT10;
	if (rows && !inverse)
		return fftwf_plan_many_r2r(1, &w, howmany, real, NULL, 1, w, coef, NULL, 1, w, &k,
					   fl);
	if (rows)
		return fftwf_plan_many_r2r(1, &w, howmany, coef, NULL, 1, w, real, NULL, 1, w, &k,
					   fl);
	/* columns, gathered: contiguous rows of h */
	return fftwf_plan_many_r2r(1, &h, howmany, coef, NULL, 1, h, coef, NULL, 1, h, &k, fl);
}

int spec_init(spec2d *t, spec_kind kind, int w, int h, tp_err *err)
{
	memset(t, 0, sizeof *t);
	t->kind = kind;
	t->w = w;
	t->h = h;
	t->cw = kind == SPEC_FFT ? w / 2 + 1 : w;
	t->per = kind == SPEC_FFT ? 2 : 1;
	t->cb = kind == SPEC_FFT ? SPEC_BLOCK : SPEC_DCT_COLS;
	t->ncoef = (size_t)t->per * t->cw * h;
	float *real = spec_alloc((size_t)w * h), *coef = spec_alloc(t->ncoef);
	int ok = real && coef;
	if (kind == SPEC_DCT)
		ok &= (t->cbuf = spec_alloc((size_t)w * h)) != NULL;
	pthread_mutex_lock(&plan_lock);
	for (int tail = 0; ok && tail < 2; tail++) {
		int nr = tail ? h % SPEC_BLOCK : (h < SPEC_BLOCK ? h : SPEC_BLOCK);
		int nc = tail ? t->cw % t->cb : (t->cw < t->cb ? t->cw : t->cb);
		if (tail && h < SPEC_BLOCK)
			nr = 0;
		if (tail && t->cw < t->cb)
			nc = 0;
		if (nr) {
			t->row_f[tail] = make(t, 1, 0, nr, real, coef);
			t->row_i[tail] = make(t, 1, 1, nr, real, coef);
			ok &= t->row_f[tail] && t->row_i[tail];
		}
		if (nc) {
			t->col_f[tail] = make(t, 0, 0, nc, real, coef);
			t->col_i[tail] = make(t, 0, 1, nc, real, coef);
			ok &= t->col_f[tail] && t->col_i[tail];
		}
	}
	pthread_mutex_unlock(&plan_lock);
	spec_release(real);
	spec_release(coef);
	if (!ok) {
		spec_free(t);
		return tp_errf(err, TP_EIO, "out of memory for the %dx%d spectral transforms", w,
			       h);
	}
	return 0;
}

void spec_free(spec2d *t)
{
	pthread_mutex_lock(&plan_lock);
	for (int i = 0; i < 2; i++) {
		void *p[4] = {t->row_f[i], t->row_i[i], t->col_f[i], t->col_i[i]};
		for (int k = 0; k < 4; k++)
			if (p[k])
				fftwf_destroy_plan(p[k]);
		t->row_f[i] = t->row_i[i] = t->col_f[i] = t->col_i[i] = NULL;
	}
	pthread_mutex_unlock(&plan_lock);
	spec_release(t->cbuf);
	t->cbuf = NULL;
}

double spec_norm(const spec2d *t)
{
	return t->kind == SPEC_FFT ? (double)t->w * t->h : 4.0 * t->w * t->h;
}

double spec_kx(const spec2d *t, int i)
{
	const double pi = 3.14159265358979323846;
	return t->kind == SPEC_FFT ? 2 * pi * i / t->w : pi * i / t->w;
}

double spec_ky(const spec2d *t, int j)
{
	const double pi = 3.14159265358979323846;
	if (t->kind == SPEC_DCT)
		return pi * j / t->h;
	return 2 * pi * (j <= t->h / 2 ? j : j - t->h) / t->h;
}

/* Row blocks: from `in` (row stride a floats) to `out` (row stride b floats). Block
 * starts are multiples of SPEC_BLOCK rows, 32 bytes or more apart: the alignment the
 * plans were made with (spec_alloc's 64 bytes modulo FFTW's 16). */
static void rows(const spec2d *t, void *const *pl, const float *in, size_t a, float *out, size_t b)
{
	const int nb = nblocks(t->h, SPEC_BLOCK), full = t->h / SPEC_BLOCK;
#pragma omp parallel for schedule(static) if ((size_t)t->w * t->h >= PAR_CELLS)
	for (int k = 0; k < nb; k++) {
		fftwf_plan p = block_plan(pl, k, full);
		const float *i = in + (size_t)k * SPEC_BLOCK * a;
		float *o = out + (size_t)k * SPEC_BLOCK * b;
		if (t->kind == SPEC_DCT)
			fftwf_execute_r2r(p, (float *)(uintptr_t)i, o);
		else if (pl == t->row_f)
			fftwf_execute_dft_r2c(p, (float *)(uintptr_t)i, (fftwf_complex *)(void *)o);
		else
			fftwf_execute_dft_c2r(p, (fftwf_complex *)(uintptr_t)i, o);
	}
}

static void cols(const spec2d *t, void *const *pl, float *coef)
{
	const int nb = nblocks(t->cw, t->cb), full = t->cw / t->cb;
#pragma omp parallel for schedule(static) if ((size_t)t->w * t->h >= PAR_CELLS)
	for (int k = 0; k < nb; k++) {
		fftwf_plan p = block_plan(pl, k, full);
		float *c = coef + (size_t)k * t->cb * t->per;
		if (t->kind == SPEC_DCT) {
			const int w = t->w, h = t->h, nc = k < full ? t->cb : t->cw - full * t->cb;
			float *b = t->cbuf + (size_t)k * t->cb * h;
			for (int y = 0; y < h; y++)
				for (int i = 0; i < nc; i++)
					b[(size_t)i * h + y] = c[(size_t)y * w + i];
			fftwf_execute_r2r(p, b, b);
			for (int y = 0; y < h; y++)
				for (int i = 0; i < nc; i++)
					c[(size_t)y * w + i] = b[(size_t)i * h + y];
		} else
			fftwf_execute_dft(p, (fftwf_complex *)(void *)c,
					  (fftwf_complex *)(void *)c);
	}
}

void spec_forward(const spec2d *t, const float *real, float *coef)
{
	const size_t cs = (size_t)t->cw * t->per;
	rows(t, t->row_f, real, (size_t)t->w, coef, cs);
	cols(t, t->col_f, coef);
}

void spec_inverse(const spec2d *t, float *coef, float *real)
{
	const size_t cs = (size_t)t->cw * t->per;
	cols(t, t->col_i, coef);
	rows(t, t->row_i, coef, cs, real, (size_t)t->w);
}
