/* Conjugate gradient over a masked rectangle (see cg.h for the operator and contract). */
#include "solvers/cg.h"

#include <math.h>

/* Rows [j0, j1) of block c, clipped to the interior rows 1..h-2 (the outer ring is never
 * masked, so it never needs the stencil). */
static void block_rows(const cg_problem *pb, int c, int *j0, int *j1)
{
	int a = c * CG_BLOCK_ROWS, b = a + CG_BLOCK_ROWS;
	*j0 = a < 1 ? 1 : a;
	*j1 = b > pb->h - 1 ? pb->h - 1 : b;
}

/* q = (scale*L + shift) p on the masked cells of block c; returns sum p.q over the block.
 * (L p)_i = deg_i p_i - sum_{N4} p_j, dimensionless (p in height units). */
static double block_apply_dot(const cg_problem *pb, int c, const double *p, double *q)
{
	const int w = pb->w;
	const double sc = pb->scale, sh = pb->shift;
	double s = 0;
	int j0, j1;
	block_rows(pb, c, &j0, &j1);
	for (int j = j0; j < j1; j++) {
		const uint8_t *m = pb->mask + (size_t)j * w, *dg = pb->deg + (size_t)j * w;
		const double *pr = p + (size_t)j * w;
		double *qr = q + (size_t)j * w;
		for (int i = 1; i < w - 1; i++) {
			double v = 0;
			if (m[i]) {
				double nb = (pr[i - 1] + pr[i + 1]) + (pr[i - w] + pr[i + w]);
				v = sc * ((double)dg[i] * pr[i] - nb) + sh * pr[i];
			}
			qr[i] = v;
			s += pr[i] * v;
		}
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
		for (int i = 1; i < w - 1; i++) {
			x[o + i] += alpha * p[o + i];
			r[o + i] -= alpha * q[o + i];
			s += r[o + i] * r[o + i];
		}
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
		for (int i = 1; i < w - 1; i++)
			p[o + i] = r[o + i] + beta * p[o + i];
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

cg_stats cg_solve(const cg_problem *pb, const double *b, double *x, const cg_work *wk,
		  double tol, int max_iters, int parallel)
{
	const size_t n = (size_t)pb->w * pb->h;
	const int nb = cg_blocks(pb->h);
	double *r = wk->r, *p = wk->p, *q = wk->q, *part = wk->part;
	cg_stats st = { 0, 0, 1 };

	/* Clear everything off the mask: x there is the Dirichlet zero, and r, p, q may hold
	 * values from a previous, differently shaped mask. */
	for (size_t k = 0; k < n; k++) {
		if (!pb->mask[k])
			x[k] = 0;
		r[k] = p[k] = q[k] = 0;
	}

	/* r = b - A x, p = r. */
	cg_apply(pb, x, q);
	double bb = 0, rr = 0;
	for (size_t k = 0; k < n; k++) {
		if (pb->mask[k]) {
			r[k] = b[k] - q[k];
			p[k] = r[k];
			bb += b[k] * b[k];
		}
	}
	/* rr in block order, like every later dot product. */
	for (int c = 0; c < nb; c++) {
		int j0, j1;
		block_rows(pb, c, &j0, &j1);
		double s = 0;
		for (int j = j0; j < j1; j++)
			for (int i = 1; i < pb->w - 1; i++)
				s += r[(size_t)j * pb->w + i] * r[(size_t)j * pb->w + i];
		part[c] = s;
	}
	rr = sum_parts(part, nb);
	if (bb == 0) {
		for (size_t k = 0; k < n; k++)
			x[k] = 0;
		return st;
	}
	const double target = tol * tol * bb;
	int it = 0, done = !(rr > target);
	double alpha = 0, beta = 0;

	/* One parallel region for the whole solve; the scalar steps run in `single`, whose
	 * implicit barrier publishes alpha, beta and done to every thread. */
#pragma omp parallel if (parallel) default(none) \
	shared(pb, x, r, p, q, part, nb, rr, alpha, beta, done, it, max_iters, target)
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
					alpha = rr / pq;
			}
			if (done)
				break;
#pragma omp for schedule(static)
			for (int c = 0; c < nb; c++)
				part[c] = block_update(pb, c, alpha, x, r, p, q);
#pragma omp single
			{
				double rr1 = sum_parts(part, nb);
				beta = rr1 / rr;
				rr = rr1;
				it++;
				done = !(rr > target) || it >= max_iters;
			}
			if (done)
				break;
#pragma omp for schedule(static)
			for (int c = 0; c < nb; c++)
				block_direction(pb, c, beta, r, p);
		}
	}
	st.iters = it;
	st.resid = sqrt(rr / bb);
	st.ok = !(rr > target);
	return st;
}
