/* Drops, sponge and boxes for the reference ports, cell by cell from the definitions. */
#include <math.h>
#include <stdlib.h>

#include "reference/reference.h"
#include "solvers/intgrid.h"

int ref_pool_init(ref_pool *p, int w, int h, scene_boundary b, int ring, int unit, int sponge,
		  double wake)
{
	*p = (ref_pool){.w = w, .h = h, .boundary = b, .ring = ring, .unit = unit, .wake = wake};
	if (b != SCENE_BOUNDARY_ABSORB)
		return 0;
	int m = (w < h ? w : h) / 4;
	p->sponge = sponge < m ? sponge : m;
	if (p->sponge < 1)
		p->sponge = 1;
	p->sponge_f = malloc((size_t)p->sponge * sizeof *p->sponge_f);
	if (!p->sponge_f)
		return -1;
	for (int k = 0; k < p->sponge; k++) {
		int64_t q = (int64_t)(p->sponge - k) * (p->sponge - k);
		p->sponge_f[k] = (int32_t)(65536 - 9830 * q / ((int64_t)p->sponge * p->sponge));
	}
	return 0;
}

void ref_pool_free(ref_pool *p)
{
	free(p->sponge_f);
	p->sponge_f = NULL;
}

static int is_active(const ref_pool *p, int x, int y)
{
	if (p->boundary == SCENE_BOUNDARY_WRAP)
		return 1;
	return x >= p->ring && x < p->w - p->ring && y >= p->ring && y < p->h - p->ring;
}

static int32_t rounded(double v)
{
	if (v != v)
		return 0;
	if (v >= 4194304.0)
		return 4194304;
	if (v <= -4194304.0)
		return -4194304;
	return (int32_t)(v >= 0 ? floor(v + 0.5) : -floor(-v + 0.5));
}

static void add_to(int32_t *cell, int32_t a)
{
	int64_t s = (int64_t)*cell + a;
	*cell = (int32_t)(s > 4194304 ? 4194304 : s < -4194304 ? -4194304 : s);
}

/* Periodic images tried for wrap: the cell itself and one period each way. */
static int images(const ref_pool *p)
{
	return p->boundary == SCENE_BOUNDARY_WRAP ? 1 : 0;
}

void ref_drop(const ref_pool *p, int32_t **bufs, int n, double x, double y, double r,
	      double strength)
{
	if (!(r > 0) || !isfinite(x) || !isfinite(y) || !isfinite(r) || !isfinite(strength))
		return;
	double rmax = p->w > p->h ? p->w : p->h;
	if (r > rmax)
		r = rmax;
	if (p->boundary == SCENE_BOUNDARY_WRAP) {
		x -= floor(x / p->w) * p->w;
		y -= floor(y / p->h) * p->h;
	}
	double e = strength * p->unit;
	int k = images(p);
	/* Only the rows and columns some image of the disc reaches (|dy| < r for some ky, and
	 * likewise x), in the same order as a sweep of every cell: the cells skipped get
	 * nothing, so the result is the same, at the cost of the disc rather than the grid
	 * (the bench's seed port places a storm's 336 drops with this). */
	int *cols = malloc((size_t)p->w * sizeof *cols), nc = 0;
	if (!cols)
		abort();
	for (int cx = 0; cx < p->w; cx++)
		for (int kx = -k; kx <= k; kx++)
			if (fabs(cx + kx * p->w + 0.5 - x) < r) {
				cols[nc++] = cx;
				break;
			}
	for (int cy = 0; cy < p->h; cy++) {
		int hit = 0;
		for (int ky = -k; ky <= k && !hit; ky++)
			hit = fabs(cy + ky * p->h + 0.5 - y) < r;
		if (!hit)
			continue;
		for (int q = 0; q < nc; q++) {
			const int cx = cols[q];
			if (!is_active(p, cx, cy))
				continue;
			for (int ky = -k; ky <= k; ky++)
				for (int kx = -k; kx <= k; kx++) {
					int i = cx + kx * p->w, j = cy + ky * p->h;
					double dx = i + 0.5 - x, dy = j + 0.5 - y;
					double d = sqrt(dx * dx + dy * dy);
					if (d < r)
						for (int b = 0; b < n; b++)
							add_to(&bufs[b][cy * p->w + cx],
							       rounded(e * (1.0 - d / r)));
				}
		}
	}
	free(cols);
}

void ref_sponge(const ref_pool *p, int32_t *buf, const int32_t *base)
{
	if (!p->sponge)
		return;
	for (int y = 0; y < p->h; y++)
		for (int x = 0; x < p->w; x++) {
			int d = x;
			if (p->w - 1 - x < d)
				d = p->w - 1 - x;
			if (y < d)
				d = y;
			if (p->h - 1 - y < d)
				d = p->h - 1 - y;
			if (d >= p->sponge || !is_active(p, x, y))
				continue;
			int32_t b = base ? base[y * p->w + x] : 0;
			buf[y * p->w + x] = b + (int32_t)((int64_t)(buf[y * p->w + x] - b) *
							  p->sponge_f[d] / 65536);
		}
}

/* Pass 1 for one cell at (u, v) in the box's frame: the share of it the box holds is 1
 * deeper than e = min(IG_BOX_EDGE, min(a, b)) / 2 inside the footprint, 0 farther than e
 * outside, and the smoothstep of the signed distance sd to the edge between; each buffer
 * keeps x - round(x share). */
static void hold_cell(const ref_pool *p, int32_t **bufs, int n, int at, double u, double v,
		      double a, double b)
{
	(void)p;
	const double e = fmin(0.5 * IG_BOX_EDGE, 0.5 * fmin(a, b));
	double du = fabs(u) - a, dv = fabs(v) - b, sd;
	if (du > 0 && dv > 0)
		sd = sqrt(du * du + dv * dv);
	else if (du > 0)
		sd = du;
	else if (dv > 0)
		sd = dv;
	else
		sd = du > dv ? du : dv;
	double share;
	if (sd <= -e)
		share = 1;
	else if (sd >= e)
		share = 0;
	else {
		double t = (e - sd) / (2 * e);
		share = t * t * (3 - 2 * t);
	}
	for (int q = 0; q < n; q++)
		bufs[q][at] = share == 1 ? 0 : bufs[q][at] - rounded(bufs[q][at] * share);
}

/* pass 0: push the 8-pixel band around each footprint; pass 1: hold the footprints. */
static void box_pass(const ref_pool *p, const scene_box *bx, const tp_box_pose *ps, int pass,
		     double dt, int32_t **bufs, int n)
{
	if (!isfinite(ps->x) || !isfinite(ps->y) || !isfinite(ps->angle) || !isfinite(ps->vx) ||
	    !isfinite(ps->vy))
		return;
	double px = ps->x, py = ps->y;
	if (p->boundary == SCENE_BOUNDARY_WRAP) {
		px -= floor(px / p->w) * p->w;
		py -= floor(py / p->h) * p->h;
	}
	double s, c;
	ig_sincos_deg(ps->angle, &s, &c);
	double a = 0.5 * bx->size[0], b = 0.5 * bx->size[1], m = 8.0;
	double vu = c * ps->vx - s * ps->vy, vv = s * ps->vx + c * ps->vy;
	int k = images(p);
	for (int cy = 0; cy < p->h; cy++)
		for (int cx = 0; cx < p->w; cx++) {
			if (!is_active(p, cx, cy))
				continue;
			for (int ky = -k; ky <= k; ky++)
				for (int kx = -k; kx <= k; kx++) {
					int i = cx + kx * p->w, j = cy + ky * p->h;
					double dx = i + 0.5 - px, dy = j + 0.5 - py;
					double u = c * dx - s * dy, v = s * dx + c * dy;
					int inside = fabs(u) < a && fabs(v) < b;
					if (pass == 1) {
						hold_cell(p, bufs, n, cy * p->w + cx, u, v, a, b);
						continue;
					}
					if (inside || !(fabs(u) < a + m && fabs(v) < b + m))
						continue;
					double du = fabs(u) - a, dv = fabs(v) - b;
					du = du > 0 ? du : 0;
					dv = dv > 0 ? dv : 0;
					double dist = sqrt(du * du + dv * dv);
					if (!(dist < m) || dist <= 0)
						continue;
					double vn = ((u > 0 ? du : -du) * vu +
						     (v > 0 ? dv : -dv) * vv) /
						    dist;
					double f = dist / m;
					double prof = 16.0 * f * f * (1.0 - f) * (1.0 - f);
					int32_t add = rounded(p->wake * dt * p->unit * vn * prof);
					for (int q = 0; q < n; q++)
						add_to(&bufs[q][cy * p->w + cx], add);
				}
		}
}

void ref_boxes(const ref_pool *p, const scene_box *boxes, const tp_box_pose *poses, int nboxes,
	       double dt, int32_t **push, int npush, int32_t **hold, int nhold)
{
	if (!poses)
		return;
	if (p->wake != 0 && dt > 0)
		for (int i = 0; i < nboxes; i++)
			box_pass(p, &boxes[i], &poses[i], 0, dt, push, npush);
	for (int i = 0; i < nboxes; i++)
		box_pass(p, &boxes[i], &poses[i], 1, dt, hold, nhold);
}
