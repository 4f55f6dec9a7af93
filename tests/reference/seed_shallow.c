/* Plain port of seed 003 (GAMES103 lab 4); see seed_shallow.h for what differs. */
#include "reference/seed_shallow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AT(a, i, j) ((a)[(size_t)(j) * (size_t)s->w + (size_t)(i)])

int seed_shallow_init(seed_shallow *s, int w, int h, float rate, float damping, float gamma,
		      double cg_tol, int cg_iters)
{
	memset(s, 0, sizeof *s);
	s->w = w;
	s->h = h;
	s->rate = rate;
	s->damping = damping;
	s->gamma = gamma;
	s->cg_tol = cg_tol;
	s->cg_iters = cg_iters;
	size_t n = (size_t)w * (size_t)h;
	float **f[] = { &s->hh, &s->old_h, &s->new_h, &s->low_h, &s->vh, &s->b,
			&s->cg_r, &s->cg_p, &s->cg_Ap };
	for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
		if (!(*f[k] = calloc(n, sizeof(float))))
			goto fail;
	if (!(s->cg_mask = calloc(n, 1)))
		goto fail;
	return 0;
fail:
	seed_shallow_free(s);
	return -1;
}

void seed_shallow_free(seed_shallow *s)
{
	free(s->hh);
	free(s->old_h);
	free(s->new_h);
	free(s->low_h);
	free(s->vh);
	free(s->b);
	free(s->cg_r);
	free(s->cg_p);
	free(s->cg_Ap);
	free(s->cg_mask);
	memset(s, 0, sizeof *s);
}

void seed_shallow_drop(seed_shallow *s, int ri, int rj, float rh)
{
	int size_x = s->w, size_y = s->h;
	AT(s->hh, ri, rj) += rh;
	int neighbors = 0;
	if (ri > 0) neighbors++;
	if (ri < size_x - 1) neighbors++;
	if (rj > 0) neighbors++;
	if (rj < size_y - 1) neighbors++;
	rh /= (float)neighbors;
	if (ri > 0) AT(s->hh, ri - 1, rj) -= rh;
	if (ri < size_x - 1) AT(s->hh, ri + 1, rj) -= rh;
	if (rj > 0) AT(s->hh, ri, rj - 1) -= rh;
	if (rj < size_y - 1) AT(s->hh, ri, rj + 1) -= rh;
}

/* The seed's A_Times: Ax = -Laplacian(x) over the masked cells of the region, missing
 * (off-grid) neighbours contribute nothing. */
static void a_times(seed_shallow *s, const float *x, float *Ax, int li, int ui, int lj, int uj)
{
	for (int j = lj; j <= uj; j++)
		for (int i = li; i <= ui; i++)
			if (i >= 0 && j >= 0 && i < s->w && j < s->h && AT(s->cg_mask, i, j)) {
				AT(Ax, i, j) = 0;
				if (i != 0) AT(Ax, i, j) -= AT(x, i - 1, j) - AT(x, i, j);
				if (i != s->w - 1) AT(Ax, i, j) -= AT(x, i + 1, j) - AT(x, i, j);
				if (j != 0) AT(Ax, i, j) -= AT(x, i, j - 1) - AT(x, i, j);
				if (j != s->h - 1) AT(Ax, i, j) -= AT(x, i, j + 1) - AT(x, i, j);
			}
}

static double dot(seed_shallow *s, const float *x, const float *y, int li, int ui, int lj, int uj)
{
	double ret = 0;
	for (int j = lj; j <= uj; j++)
		for (int i = li; i <= ui; i++)
			if (i >= 0 && j >= 0 && i < s->w && j < s->h && AT(s->cg_mask, i, j))
				ret += (double)AT(x, i, j) * (double)AT(y, i, j);
	return ret;
}

/* The seed's Conjugate_Gradient, x (= vh) as the initial guess. */
static void conjugate_gradient(seed_shallow *s, const float *b, float *x, int li, int ui, int lj,
			       int uj)
{
	float *r = s->cg_r, *p = s->cg_p, *Ap = s->cg_Ap;
	for (int j = lj; j <= uj; j++)
		for (int i = li; i <= ui; i++)
			if (i >= 0 && j >= 0 && i < s->w && j < s->h)
				AT(r, i, j) = AT(p, i, j) = AT(Ap, i, j) = 0;
	a_times(s, x, Ap, li, ui, lj, uj);
	for (int j = lj; j <= uj; j++)
		for (int i = li; i <= ui; i++)
			if (i >= 0 && j >= 0 && i < s->w && j < s->h && AT(s->cg_mask, i, j))
				AT(p, i, j) = AT(r, i, j) = AT(b, i, j) - AT(Ap, i, j);
	double bb = dot(s, b, b, li, ui, lj, uj);
	double rk_norm = dot(s, r, r, li, ui, lj, uj);
	double n = 0;
	for (int j = lj; j <= uj; j++)
		for (int i = li; i <= ui; i++)
			if (i >= 0 && j >= 0 && i < s->w && j < s->h && AT(s->cg_mask, i, j))
				n++;
	double abs_r = s->cg_err / (s->rate * s->gamma) * sqrt(n);
	int k;
	for (k = 0; k < s->cg_iters; k++) {
		if (rk_norm <= s->cg_tol * s->cg_tol * bb || rk_norm <= abs_r * abs_r)
			break;
		a_times(s, p, Ap, li, ui, lj, uj);
		double alpha = rk_norm / dot(s, p, Ap, li, ui, lj, uj);
		for (int j = lj; j <= uj; j++)
			for (int i = li; i <= ui; i++)
				if (i >= 0 && j >= 0 && i < s->w && j < s->h && AT(s->cg_mask, i, j)) {
					AT(x, i, j) += (float)alpha * AT(p, i, j);
					AT(r, i, j) -= (float)alpha * AT(Ap, i, j);
				}
		double rk_norm1 = dot(s, r, r, li, ui, lj, uj);
		double beta = rk_norm1 / rk_norm;
		rk_norm = rk_norm1;
		for (int j = lj; j <= uj; j++)
			for (int i = li; i <= ui; i++)
				if (i >= 0 && j >= 0 && i < s->w && j < s->h && AT(s->cg_mask, i, j))
					AT(p, i, j) = AT(r, i, j) + (float)beta * AT(p, i, j);
	}
	s->last_iters = k;
}

/* Cells whose centre lies in the footprint, plus one cell around (the CG region). */
static void box_region(const seed_shallow_box *bx, int *li, int *ui, int *lj, int *uj)
{
	*li = (int)ceil(bx->x0 - 0.5) - 1;
	*ui = (int)floor(bx->x1 - 0.5) + 1;
	*lj = (int)ceil(bx->y0 - 0.5) - 1;
	*uj = (int)floor(bx->y1 - 0.5) + 1;
}

void seed_shallow_step(seed_shallow *s, const seed_shallow_box *boxes, int nboxes)
{
	const int size_x = s->w, size_y = s->h;
	float *h = s->hh, *old_h = s->old_h, *new_h = s->new_h, *low_h = s->low_h;
	float *vh = s->vh, *b = s->b;
	const float rate = s->rate, damping = s->damping, gamma = s->gamma;

	/* Step 1: the shallow wave, Neumann boundaries. */
	for (int j = 0; j < size_y; j++)
		for (int i = 0; i < size_x; i++) {
			AT(new_h, i, j) = AT(h, i, j) + damping * (AT(h, i, j) - AT(old_h, i, j));
			if (i > 0) AT(new_h, i, j) += rate * (AT(h, i - 1, j) - AT(h, i, j));
			if (i < size_x - 1) AT(new_h, i, j) += rate * (AT(h, i + 1, j) - AT(h, i, j));
			if (j > 0) AT(new_h, i, j) += rate * (AT(h, i, j - 1) - AT(h, i, j));
			if (j < size_y - 1) AT(new_h, i, j) += rate * (AT(h, i, j + 1) - AT(h, i, j));
		}

	/* Step 2: block -> water coupling. low_h = box bottom under each box. */
	for (int j = 0; j < size_y; j++)
		for (int i = 0; i < size_x; i++)
			AT(low_h, i, j) = 99999;
	for (int k = 0; k < nboxes; k++) {
		int li, ui, lj, uj;
		box_region(&boxes[k], &li, &ui, &lj, &uj);
		for (int j = lj; j <= uj; j++)
			for (int i = li; i <= ui; i++) {
				if (i < 0 || j < 0 || i >= size_x || j >= size_y)
					continue;
				double cx = i + 0.5, cy = j + 0.5;
				if (cx >= boxes[k].x0 && cx <= boxes[k].x1 && cy >= boxes[k].y0 &&
				    cy <= boxes[k].y1 && boxes[k].bottom < AT(low_h, i, j))
					AT(low_h, i, j) = (float)boxes[k].bottom;
			}
	}
	for (int j = 0; j < size_y; j++)
		for (int i = 0; i < size_x; i++) {
			if (AT(low_h, i, j) <= AT(new_h, i, j)) {
				AT(b, i, j) = (AT(new_h, i, j) - AT(low_h, i, j)) / rate;
				AT(s->cg_mask, i, j) = 1;
			} else {
				AT(b, i, j) = 0;
				AT(s->cg_mask, i, j) = 0;
				AT(vh, i, j) = 0;
			}
		}
	for (int k = 0; k < nboxes; k++) {
		int li, ui, lj, uj;
		box_region(&boxes[k], &li, &ui, &lj, &uj);
		conjugate_gradient(s, b, vh, li, ui, lj, uj);
	}
	for (int j = 0; j < size_y; j++)
		for (int i = 0; i < size_x; i++)
			if (AT(s->cg_mask, i, j))
				AT(vh, i, j) *= gamma;
	for (int j = 0; j < size_y; j++)
		for (int i = 0; i < size_x; i++) {
			if (i > 0) AT(new_h, i, j) += rate * (AT(vh, i - 1, j) - AT(vh, i, j));
			if (i < size_x - 1) AT(new_h, i, j) += rate * (AT(vh, i + 1, j) - AT(vh, i, j));
			if (j > 0) AT(new_h, i, j) += rate * (AT(vh, i, j - 1) - AT(vh, i, j));
			if (j < size_y - 1) AT(new_h, i, j) += rate * (AT(vh, i, j + 1) - AT(vh, i, j));
		}

	/* Step 3: old_h = h; h = new_h. */
	for (int j = 0; j < size_y; j++)
		for (int i = 0; i < size_x; i++) {
			AT(old_h, i, j) = AT(h, i, j);
			AT(h, i, j) = AT(new_h, i, j);
		}
}
