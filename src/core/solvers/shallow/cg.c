/* Conjugate gradient over a masked rectangle (see cg.h for the operator and contract). */
#include "solvers/shallow/cg.h"

#include <math.h>
#include <string.h>

/* Rows [j0, j1) of block c, clipped to the interior rows 1..h-2 (the outer ring is never
 * masked, so it never needs the stencil). */
static void block_rows(const cg_problem *pb, int c, int *j0, int *j1)
{
	int a = c * CG_BLOCK_ROWS, b = a + CG_BLOCK_ROWS;
	*j0 = a < 1 ? 1 : a;
	*j1 = b > pb->h - 1 ? pb->h - 1 : b;
}

/* Columns [*lo, *hi] of row j that can be masked (see cg_problem.span). */
static inline void row_span(const cg_problem *pb, int j, int *lo, int *hi)
{
	if (pb->span) {
		*lo = pb->span[2 * j];
		*hi = pb->span[2 * j + 1];
	} else {
		*lo = 1;
		*hi = pb->w - 2;
	}
}

/* Sum of a[i] * b[i] for i in [lo, hi], in eight interleaved lanes added in a fixed tree
 * at the end: the same bits on every run, thread count and instruction set, and eight
 * chains of additions in flight (with two, the rows' dots were bound by the adds'
 * latency: 5% of a shallow_drag step). */
static double span_dot(const double *restrict a, const double *restrict b, int lo, int hi)
{
	double l[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	int i = lo;
	for (; i + 8 <= hi + 1; i += 8)
		for (int k = 0; k < 8; k++)
			l[k] += a[i + k] * b[i + k];
	for (int k = 0; i <= hi; i++, k++)
		l[k] += a[i] * b[i];
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* q = (scale*L + shift + D) p on the masked cells of block c; returns sum p.q over the
 * block. (L p)_i = deg_i p_i - sum_{N4} p_j, dimensionless (p in height units). Unmasked
 * cells get q = 0 (their p is 0, so computing and then masking is exact). */
static double block_apply_dot(const cg_problem *pb, int c, const double *p, double *q)
{
	const int w = pb->w;
	const double sc = pb->scale, sh = pb->shift;
	double s = 0;
	int j0, j1;
	block_rows(pb, c, &j0, &j1);
	for (int j = j0; j < j1; j++) {
		const uint8_t *restrict m = pb->mask + (size_t)j * w, *restrict dg = pb->deg + (size_t)j * w;
		const double *restrict pr = p + (size_t)j * w;
		double *restrict qr = q + (size_t)j * w;
		int lo, hi;
		row_span(pb, j, &lo, &hi);
		if (lo > hi)
			continue;
		if (pb->diag) {
			const double *restrict dr = pb->diag + (size_t)j * w;
#pragma omp simd
			for (int i = lo; i <= hi; i++) {
				double nb = (pr[i - 1] + pr[i + 1]) + (pr[i - w] + pr[i + w]);
				double v = sc * ((double)dg[i] * pr[i] - nb) + (sh + dr[i]) * pr[i];
				qr[i] = m[i] ? v : 0.0;
			}
		} else {
#pragma omp simd
			for (int i = lo; i <= hi; i++) {
				double nb = (pr[i - 1] + pr[i + 1]) + (pr[i - w] + pr[i + w]);
				double v = sc * ((double)dg[i] * pr[i] - nb) + sh * pr[i];
				qr[i] = m[i] ? v : 0.0;
			}
		}
		s += span_dot(pr, qr, lo, hi);
	}
	return s;
}

/* x += alpha p, r -= alpha q over block c; returns sum r.r over the block. */
static double block_update(const cg_problem *pb, int c, double alpha, double *x, double *r,
			   const double *p, const double *q)
{
	const int w = pb->w;
	double s = 0;
	int j0, j1;
	block_rows(pb, c, &j0, &j1);
	for (int j = j0; j < j1; j++) {
		size_t o = (size_t)j * w;
		double *restrict xr = x + o, *restrict rr = r + o;
		const double *restrict pr = p + o, *restrict qr = q + o;
		int lo, hi;
		row_span(pb, j, &lo, &hi);
#pragma omp simd
		for (int i = lo; i <= hi; i++) {
			xr[i] += alpha * pr[i];
			rr[i] -= alpha * qr[i];
		}
		s += span_dot(rr, rr, lo, hi);
	}
	return s;
}

/* p = r + beta p over block c. */
static void block_direction(const cg_problem *pb, int c, double beta, const double *r, double *p)
{
	const int w = pb->w;
	int j0, j1;
	block_rows(pb, c, &j0, &j1);
	for (int j = j0; j < j1; j++) {
		size_t o = (size_t)j * w;
		const double *restrict rr = r + o;
		double *restrict pr = p + o;
		int lo, hi;
		row_span(pb, j, &lo, &hi);
#pragma omp simd
		for (int i = lo; i <= hi; i++)
			pr[i] = rr[i] + beta * pr[i];
	}
}

static double sum_parts(const double *part, int n)
{
	double s = 0;
	for (int c = 0; c < n; c++)
		s += part[c];
	return s;
}

void cg_apply(const cg_problem *pb, const double *x, double *y)
{
	size_t n = (size_t)pb->w * pb->h;
	for (size_t k = 0; k < n; k++)
		y[k] = 0;
	for (int c = 0; c < cg_blocks(pb->h); c++)
		block_apply_dot(pb, c, x, y);
}

/* Modified incomplete Cholesky, MIC(0) (Bridson, "Fluid Simulation for Computer Graphics",
 * ch. 5): A ~ (F + E) E^-1 (F + E)^T with E = diag(1/pc^2) and F the strictly lower part of
 * A. tau blends in the dropped fill-in (keeps row sums, which is what removes the slow,
 * smooth error components); sigma guards against a tiny pivot. */
#define MIC_TAU 0.97
#define MIC_SIGMA 0.25

/* Rows solved together by the triangular sweeps below (and the factorisation): a
 * wavefront over MIC_ROWS rows (row r of the group trails row r-1 by one column) keeps
 * MIC_ROWS independent dependency chains in flight. Every cell still sees exactly the
 * inputs of the plain row-major sweep, so the bits are the same as the sequential order. */
#define MIC_ROWS 8

/* The factor for one cell k (left l, up u), from the factors already made. */
static inline double mic_cell(const cg_problem *pb, const double *pc, size_t k)
{
	const int w = pb->w;
	const uint8_t *m = pb->mask;
	const double a = -pb->scale; /* coupling between two masked neighbours */
	const size_t l = k - 1, u = k - w;
	double ad = pb->scale * pb->deg[k] + pb->shift + (pb->diag ? pb->diag[k] : 0);
	double e = ad;
	if (m[l]) {
		double al = a * pc[l], alj = m[l + w] ? a : 0;
		e -= al * al + MIC_TAU * (a * alj) * pc[l] * pc[l];
	}
	if (m[u]) {
		double au = a * pc[u], aui = m[u + 1] ? a : 0;
		e -= au * au + MIC_TAU * (a * aui) * pc[u] * pc[u];
	}
	if (e < MIC_SIGMA * ad)
		e = ad;
	return 1 / sqrt(e);
}

static void mic_build(const cg_problem *pb, double *pc, double *apc)
{
	const int w = pb->w, h = pb->h;
	const uint8_t *m = pb->mask;
	for (size_t k = 0; k < (size_t)w * h; k++)
		pc[k] = 0;
	/* in the sweeps' wavefront order: each factor waits on a square root and a division,
	 * which one row alone would do one after the other */
	for (int j0 = 1; j0 < h - 1; j0 += MIC_ROWS) {
		int nr = h - 1 - j0 < MIC_ROWS ? h - 1 - j0 : MIC_ROWS;
		for (int t = 1; t < w - 1 + nr - 1; t++)
			for (int rr = 0; rr < nr; rr++) {
				int i = t - rr;
				if (i < 1 || i > w - 2)
					continue;
				size_t k = (size_t)(j0 + rr) * w + i;
				if (m[k])
					pc[k] = mic_cell(pb, pc, k);
			}
	}
	const double a = -pb->scale;
	for (size_t k = 0; k < (size_t)w * h; k++)
		apc[k] = a * pc[k];
}

/* One band of the forward sweep: rows j0 .. j0+nr-1, row rr trailing row rr-1 by one
 * column (t = i + rr). A row's value at the column before and the value above it (row
 * rr-1's, made at t - 1) are carried in registers rather than read back from tmp: the
 * dependency chains are then two multiplications and two subtractions long. A cell
 * outside its row's span carries 0, what tmp holds there. The same expressions in the
 * same order as tmp_k = (r_k - a pc_l tmp_l - a pc_u tmp_u) pc_k, so the same bits. */
static inline __attribute__((always_inline)) void
mic_forward_band(const double *restrict r, const double *restrict pc, const double *restrict apc,
		 double *restrict tmp, int w, int j0, int nr, const int *lo, const int *hi, int t0,
		 int t1)
{
	double left[MIC_ROWS] = { 0 };
	for (int t = t0; t <= t1; t++) {
		/* above row 0 of the band: the previous band's last row (or the outer ring) */
		double up = t >= lo[0] && t <= hi[0] ? tmp[(size_t)(j0 - 1) * w + t] : 0;
		for (int rr = 0; rr < nr; rr++) {
			const int i = t - rr;
			const double prev = left[rr];
			double v = 0;
			if (i >= lo[rr] && i <= hi[rr]) {
				const size_t k = (size_t)(j0 + rr) * w + i;
				v = (r[k] - apc[k - 1] * prev - apc[k - w] * up) * pc[k];
				tmp[k] = v;
			}
			up = prev; /* row rr at column i - 1: above row rr + 1's cell */
			left[rr] = v;
		}
	}
}

/* The backward sweep's band: rows j1, j1-1, .. j1-nr+1 from the right, row rr trailing row
 * rr-1 by one column (t = i - rr); z_k = (tmp_k - a pc_k z_right - a pc_k z_down) pc_k with
 * the values right of and below a cell carried as in mic_forward_band. */
static inline __attribute__((always_inline)) void
mic_backward_band(const double *restrict tmp, const double *restrict pc,
		  const double *restrict apc, double *restrict z, int w, int j1, int nr,
		  const int *lo, const int *hi, int t0, int t1)
{
	double right[MIC_ROWS] = { 0 };
	for (int t = t1; t >= t0; t--) {
		double down = t >= lo[0] && t <= hi[0] ? z[(size_t)(j1 + 1) * w + t] : 0;
		for (int rr = 0; rr < nr; rr++) {
			const int i = t + rr;
			const double prev = right[rr];
			double v = 0;
			if (i >= lo[rr] && i <= hi[rr]) {
				const size_t k = (size_t)(j1 - rr) * w + i;
				v = (tmp[k] - apc[k] * prev - apc[k] * down) * pc[k];
				z[k] = v;
			}
			down = prev;
			right[rr] = v;
		}
	}
}

/* z = M^-1 r: forward substitution in row-major order, then backward in reverse. Returns
 * r.z summed by blocks in order. pc and z are 0 off the mask (and on the outer ring), so
 * neighbours need no mask test. tmp is scratch whose outer ring must be 0. */
static double mic_apply(const cg_problem *pb, const double *pc, const double *apc,
			const double *r, double *tmp, double *z, double *part)
{
	const int w = pb->w, h = pb->h;
	for (int j0 = 1; j0 < h - 1; j0 += MIC_ROWS) {
		int nr = h - 1 - j0 < MIC_ROWS ? h - 1 - j0 : MIC_ROWS;
		int lo[MIC_ROWS], hi[MIC_ROWS], t0 = w, t1 = 0;
		for (int rr = 0; rr < nr; rr++) {
			row_span(pb, j0 + rr, &lo[rr], &hi[rr]);
			if (lo[rr] <= hi[rr]) {
				t0 = lo[rr] + rr < t0 ? lo[rr] + rr : t0;
				t1 = hi[rr] + rr > t1 ? hi[rr] + rr : t1;
			}
		}
		if (nr == MIC_ROWS) /* unrolled for the full bands */
			mic_forward_band(r, pc, apc, tmp, w, j0, MIC_ROWS, lo, hi, t0, t1);
		else
			mic_forward_band(r, pc, apc, tmp, w, j0, nr, lo, hi, t0, t1);
	}
	for (int j1 = h - 2; j1 >= 1; j1 -= MIC_ROWS) {
		int nr = j1 < MIC_ROWS ? j1 : MIC_ROWS;
		int lo[MIC_ROWS], hi[MIC_ROWS], t0 = w, t1 = -MIC_ROWS;
		for (int rr = 0; rr < nr; rr++) {
			row_span(pb, j1 - rr, &lo[rr], &hi[rr]);
			if (lo[rr] <= hi[rr]) {
				t0 = lo[rr] - rr < t0 ? lo[rr] - rr : t0;
				t1 = hi[rr] - rr > t1 ? hi[rr] - rr : t1;
			}
		}
		if (nr == MIC_ROWS)
			mic_backward_band(tmp, pc, apc, z, w, j1, MIC_ROWS, lo, hi, t0, t1);
		else
			mic_backward_band(tmp, pc, apc, z, w, j1, nr, lo, hi, t0, t1);
	}
	const int nb = cg_blocks(h);
	for (int c = 0; c < nb; c++) {
		int j0, j1;
		block_rows(pb, c, &j0, &j1);
		double s = 0;
		for (int j = j0; j < j1; j++) {
			int lo, hi;
			row_span(pb, j, &lo, &hi);
			s += span_dot(r + (size_t)j * w, z + (size_t)j * w, lo, hi);
		}
		part[c] = s;
	}
	return sum_parts(part, nb);
}

/* The rows' masked spans into span (2*h ints; see cg_problem.span). */
static void find_spans(const cg_problem *pb, int *span)
{
	const int w = pb->w, h = pb->h;
	for (int j = 0; j < h; j++) {
		const uint8_t *m = pb->mask + (size_t)j * w;
		int lo = w, hi = 0;
		if (j > 0 && j < h - 1) {
			for (int i = 1; i < w - 1; i++)
				if (m[i]) {
					lo = i;
					break;
				}
			for (int i = w - 2; i >= lo; i--)
				if (m[i]) {
					hi = i;
					break;
				}
		}
		span[2 * j] = lo;
		span[2 * j + 1] = hi;
	}
}

cg_stats cg_solve(const cg_problem *pb_in, const double *b, double *x, const cg_work *wk,
		  double tol, double abs_tol, int max_iters, int parallel)
{
	cg_problem prob = *pb_in;
	const cg_problem *pb = &prob;
	if (wk->span) {
		find_spans(pb, wk->span);
		prob.span = wk->span;
	}
	const size_t n = (size_t)pb->w * pb->h;
	const int nb = cg_blocks(pb->h);
	double *r = wk->r, *p = wk->p, *q = wk->q, *z = wk->z, *pc = wk->pc, *part = wk->part;
	cg_stats st = { 0, 0, 0, 1 };

	/* x off the mask is the Dirichlet zero. The scratch vectors may hold values from a
	 * previous, differently shaped mask: everything outside the rows' spans (the outer
	 * ring included), which the stencils read and nothing writes, is cleared, and every
	 * cell of the spans of r, q, z and p is written below (0 off the mask) before it is
	 * read. */
	const int w = pb->w, h = pb->h;
	for (size_t k = 0; k < n; k++)
		x[k] = pb->mask[k] ? x[k] : 0;
	for (int j = 0; j < h; j++) {
		int lo, hi;
		row_span(pb, j, &lo, &hi);
		if (j == 0 || j == h - 1 || lo > hi)
			lo = w, hi = w - 1; /* the whole row */
		double *v[4] = { r, p, q, z };
		for (int a = 0; a < 4; a++) {
			double *row = v[a] + (size_t)j * w;
			memset(row, 0, (size_t)lo * sizeof *row);
			memset(row + hi + 1, 0, (size_t)(w - 1 - hi) * sizeof *row);
		}
	}

	/* r = b - A x, block by block; b.b and r.r in block order like every later dot. */
	double bb = 0;
	for (int c = 0; c < nb; c++) {
		block_apply_dot(pb, c, x, q);
		int j0, j1;
		block_rows(pb, c, &j0, &j1);
		double s = 0;
		for (int j = j0; j < j1; j++) {
			const size_t o = (size_t)j * w;
			int lo, hi;
			row_span(pb, j, &lo, &hi);
			for (int i = lo; i <= hi; i++) {
				double bi = pb->mask[o + i] ? b[o + i] : 0;
				r[o + i] = pb->mask[o + i] ? bi - q[o + i] : 0;
				bb += bi * bi;
			}
			s += span_dot(r + o, r + o, lo, hi);
		}
		part[c] = s;
	}
	double rr = sum_parts(part, nb);
	if (bb == 0) {
		for (size_t k = 0; k < n; k++)
			x[k] = 0;
		return st;
	}
	const double target = fmax(tol * tol * bb, abs_tol * abs_tol);
	int it = 0, done = !(rr > target);
	double alpha = 0, beta = 0, rz = 0;
	if (!done) {
		if (!wk->pc_ready || !*wk->pc_ready)
			mic_build(pb, pc, wk->apc);
		if (wk->pc_ready)
			*wk->pc_ready = 1;
		rz = mic_apply(pb, pc, wk->apc, r, q, z, part); /* q is free until the first A p */
		for (int j = 1; j < h - 1; j++) {
			int lo, hi;
			row_span(pb, j, &lo, &hi);
			if (lo <= hi)
				memcpy(p + (size_t)j * w + lo, z + (size_t)j * w + lo,
				       (size_t)(hi - lo + 1) * sizeof *p);
		}
	}

	/* One parallel region for the whole solve; the scalar steps and the (sequential)
	 * preconditioner run in `single`, whose implicit barrier publishes alpha, beta and
	 * done to every thread. */
#pragma omp parallel if (parallel) default(none) \
	shared(pb, wk, x, r, p, q, z, pc, part, nb, rr, rz, alpha, beta, done, it, max_iters, target)
	{
		while (!done) {
#pragma omp for schedule(static)
			for (int c = 0; c < nb; c++)
				part[c] = block_apply_dot(pb, c, p, q);
#pragma omp single
			{
				double pq = sum_parts(part, nb);
				if (!(pq > 0)) /* breakdown: A is not positive definite on this mask */
					done = 1;
				else
					alpha = rz / pq;
			}
			if (done)
				break;
#pragma omp for schedule(static)
			for (int c = 0; c < nb; c++)
				part[c] = block_update(pb, c, alpha, x, r, p, q);
#pragma omp single
			{
				rr = sum_parts(part, nb);
				it++;
				done = !(rr > target) || it >= max_iters;
				if (!done) {
					double rz1 = mic_apply(pb, pc, wk->apc, r, q, z, part);
					beta = rz1 / rz;
					rz = rz1;
				}
			}
			if (done)
				break;
#pragma omp for schedule(static)
			for (int c = 0; c < nb; c++)
				block_direction(pb, c, beta, z, p);
		}
	}
	st.iters = it;
	st.resid = sqrt(rr / bb);
	st.rnorm = sqrt(rr);
	st.ok = !(rr > target);
	return st;
}
