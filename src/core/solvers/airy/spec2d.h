/*
 * spec2d.h - 2D spectral transforms for the airy solver, deterministic whatever the
 * thread count.
 *
 * A 2D transform is done as batches of 1D transforms: the rows, then the columns, each in
 * blocks of SPEC_BLOCK rows or columns with one FFTW plan (made once, FFTW_ESTIMATE) per
 * block shape. Blocks are shared among OpenMP threads with a static schedule and run with
 * FFTW's new-array execute functions, so every block is computed by the same plan on the
 * same data however the blocks fall to threads: the bits do not depend on the thread
 * count. FFTW's own threaded plans are not used (their plans depend on it).
 *
 * Kinds:
 *   SPEC_FFT  periodic (wrap): real w x h <-> (w/2 + 1) x h complex (r2c rows, c2c
 *             columns); coefficient (i, j) is the wavenumber (2 pi i / w, 2 pi j' / h),
 *             j' = j or j - h (above h / 2).
 *   SPEC_DCT  even about the edges (reflecting walls): real w x h <-> w x h real cosine
 *             coefficients (DCT-II forward, DCT-III back); (i, j) is (pi i / w, pi j / h).
 *             Strided DCTs are slow in FFTW (4x its FFT columns), so each block of
 *             columns is gathered into contiguous rows, transformed and put back.
 * Neither is normalised: forward then inverse multiplies by spec_norm().
 */
#ifndef TP_SOLVERS_SPEC2D_H
#define TP_SOLVERS_SPEC2D_H

#include <stddef.h>

#include "util/error.h"

#define SPEC_BLOCK    16 /* rows per block, and columns per block of an FFT */
#define SPEC_DCT_COLS 64 /* columns per block of a DCT (gathered: longer runs read) */

typedef enum spec_kind { SPEC_FFT, SPEC_DCT } spec_kind;

typedef struct spec2d {
	spec_kind kind;
	int w, h;
	int cw;       /* coefficient columns per row: w/2 + 1 complex (FFT) or w real (DCT) */
	int per;      /* floats per coefficient: 2 (FFT) or 1 (DCT) */
	int cb;       /* columns per block */
	size_t ncoef; /* floats in a coefficient array: per * cw * h */
	/* [0] a full block, [1] the last, shorter block (NULL if none) */
	void *row_f[2], *row_i[2], *col_f[2], *col_i[2];
	float *cbuf; /* DCT: each column block gathered into contiguous rows (w x h floats) */
} spec2d;

/* Plans for a w x h grid. real and coef are arrays of w * h and ncoef floats from
 * spec_alloc(), used only to plan (their contents are left alone). */
int spec_init(spec2d *t, spec_kind kind, int w, int h, tp_err *err);
void spec_free(spec2d *t);
/* 64-byte aligned floats (every block then has the alignment its plan was made for). */
float *spec_alloc(size_t n);
void spec_release(float *p);
/* real (w x h) -> coef (ncoef floats); real is kept. */
void spec_forward(const spec2d *t, const float *real, float *coef);
/* coef -> real; coef is overwritten. */
void spec_inverse(const spec2d *t, float *coef, float *real);
/* forward then inverse multiplies by this. */
double spec_norm(const spec2d *t);
/* The wavenumbers (radians per pixel) of coefficient column i and row j. */
double spec_kx(const spec2d *t, int i);
double spec_ky(const spec2d *t, int j);

#endif
