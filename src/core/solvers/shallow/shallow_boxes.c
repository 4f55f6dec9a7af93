/*
 * shallow_boxes.c - the shallow solver's boxes (see shallow.c for the model): footprints
 * with soft edges, clusters of boxes whose regions touch, the virtual-height solve of
 * seed 003 over each cluster (cg.c), the water's update from it, and the floating boxes'
 * dynamics.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/shallow/shallow_impl.h"
#include "util/trig.h"

/* sin(tilt[0]), sin(tilt[1]) of a box (the bottom's slopes along v and u). */
static void tilt_sines(const box_state *b, double *s0, double *s1)
{
	double c;
	tp_sincos_deg(b->tilt[0] * (180 / SH_PI), s0, &c);
	tp_sincos_deg(b->tilt[1] * (180 / SH_PI), s1, &c);
}

/* ---- boxes: regions and clusters ---- */

/* The pool cells under box b, plus a one-cell margin, in b's own frame. */
static void box_region(const shallow *s, box_state *b)
{
	tp_sincos_deg(b->angle, &b->sn, &b->cs);
	/* the soft edge reaches half its width outside the footprint */
	double ex = fabs(b->cs) * b->hw + fabs(b->sn) * b->hh + 0.5 * s->edge;
	double ey = fabs(b->sn) * b->hw + fabs(b->cs) * b->hh + 0.5 * s->edge;
	b->active = 0;
	if (!(fabs(b->x) < 1e7 && fabs(b->y) < 1e7))
		return;
	int i0 = (int)ceil(b->x - ex - 0.5), i1 = (int)floor(b->x + ex - 0.5);
	int j0 = (int)ceil(b->y - ey - 0.5), j1 = (int)floor(b->y + ey - 0.5);
	if (s->boundary != SCENE_BOUNDARY_WRAP) {
		i0 = i0 < 0 ? 0 : i0;
		j0 = j0 < 0 ? 0 : j0;
		i1 = i1 > s->w - 1 ? s->w - 1 : i1;
		j1 = j1 > s->h - 1 ? s->h - 1 : j1;
	} else {
		/* a box larger than the pool would meet itself across the seam */
		if (i1 - i0 + 3 > s->w)
			i1 = i0 + s->w - 3;
		if (j1 - j0 + 3 > s->h)
			j1 = j0 + s->h - 3;
	}
	if (i0 > i1 || j0 > j1)
		return;
	b->active = 1;
	b->x0 = i0 - 1;
	b->y0 = j0 - 1;
	b->rw = i1 - i0 + 3;
	b->rh = j1 - j0 + 3;
	b->sx = b->sy = 0;
}

/* Do [a0, a0 + an) and [b0 + k p, b0 + k p + bn) meet for some k in {0, -1, 1} (k = 0
 * only when p == 0)? Stores the shift k p. */
static int meet(int a0, int an, int b0, int bn, int p, int *shift)
{
	for (int k = 0; k < (p ? 3 : 1); k++) {
		int d = k == 0 ? 0 : k == 1 ? -p : p;
		if (b0 + d < a0 + an && a0 < b0 + d + bn) {
			*shift = d;
			return 1;
		}
	}
	return 0;
}

/* Moves cluster c (and its boxes' shifts) so that its x0, y0 lie in [0, w) x [0, h). */
static void normalise_cluster(shallow *s, int ci)
{
	cluster *c = &s->cl[ci];
	int kx = (int)floor((double)c->x0 / s->w) * s->w;
	int ky = (int)floor((double)c->y0 / s->h) * s->h;
	c->x0 -= kx;
	c->y0 -= ky;
	for (int i = 0; i < s->nbox; i++)
		if (s->box[i].active && s->box[i].cluster == ci) {
			s->box[i].sx -= kx;
			s->box[i].sy -= ky;
		}
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* See cluster.key: the region, the arena offset and every member's pose, as bits. */
static uint64_t cluster_key(const shallow *s, int ci)
{
	const cluster *c = &s->cl[ci];
	uint64_t h = 1469598103934665603ull;
	int r[4] = { c->x0, c->y0, c->w, c->h };
	h = fnv(h, r, sizeof r);
	h = fnv(h, &c->off, sizeof c->off);
	for (int i = 0; i < s->nbox; i++) {
		const box_state *b = &s->box[i];
		if (!b->active || b->cluster != ci)
			continue;
		double v[6] = { b->x, b->y, b->angle, b->z, b->tilt[0], b->tilt[1] };
		int t[5] = { i, b->x0, b->y0, b->sx, b->sy };
		h = fnv(h, t, sizeof t);
		h = fnv(h, v, sizeof v);
	}
	return h;
}

/* Groups the active boxes into clusters whose regions (margins included) are pairwise
 * disjoint, so each cluster is solved on its own and clusters can run in parallel
 * without ever writing the same cell. Returns 0, or -1 if the arena is too small. */
static int build_clusters(shallow *s)
{
	const int wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	s->ncl = 0;
	for (int i = 0; i < s->nbox; i++) {
		box_state *b = &s->box[i];
		box_region(s, b);
		if (!b->active)
			continue;
		cluster *c = &s->cl[s->ncl];
		*c = (cluster){ .x0 = b->x0, .y0 = b->y0, .w = b->rw, .h = b->rh, .alive = 1,
				.cg = { 0, 0, 0, 1 } };
		b->cluster = s->ncl++;
		if (wrap)
			normalise_cluster(s, b->cluster);
	}
	for (int changed = 1; changed;) {
		changed = 0;
		for (int a = 0; a < s->ncl; a++)
			for (int bi = a + 1; bi < s->ncl; bi++) {
				cluster *ca = &s->cl[a], *cb = &s->cl[bi];
				int dx, dy;
				if (!ca->alive || !cb->alive ||
				    !meet(ca->x0, ca->w, cb->x0, cb->w, wrap ? s->w : 0, &dx) ||
				    !meet(ca->y0, ca->h, cb->y0, cb->h, wrap ? s->h : 0, &dy))
					continue;
				int x0 = ca->x0 < cb->x0 + dx ? ca->x0 : cb->x0 + dx;
				int y0 = ca->y0 < cb->y0 + dy ? ca->y0 : cb->y0 + dy;
				int x1 = ca->x0 + ca->w > cb->x0 + dx + cb->w ? ca->x0 + ca->w : cb->x0 + dx + cb->w;
				int y1 = ca->y0 + ca->h > cb->y0 + dy + cb->h ? ca->y0 + ca->h : cb->y0 + dy + cb->h;
				ca->x0 = x0;
				ca->y0 = y0;
				ca->w = x1 - x0;
				ca->h = y1 - y0;
				if (wrap && ca->w > s->w)
					ca->w = s->w;
				if (wrap && ca->h > s->h)
					ca->h = s->h;
				cb->alive = 0;
				for (int k = 0; k < s->nbox; k++)
					if (s->box[k].active && s->box[k].cluster == bi) {
						s->box[k].cluster = a;
						s->box[k].sx += dx;
						s->box[k].sy += dy;
					}
				if (wrap)
					normalise_cluster(s, a);
				changed = 1;
			}
	}
	/* Compact the live clusters and lay them out in the arena. */
	int n = 0;
	size_t off = 0, poff = 0, soff = 0;
	for (int a = 0; a < s->ncl; a++) {
		if (!s->cl[a].alive)
			continue;
		for (int k = 0; k < s->nbox; k++)
			if (s->box[k].active && s->box[k].cluster == a)
				s->box[k].cluster = n;
		s->cl[n] = s->cl[a];
		s->cl[n].off = off;
		s->cl[n].part_off = poff;
		s->cl[n].span_off = soff;
		off += (size_t)s->cl[n].w * s->cl[n].h;
		soff += 2 * (size_t)s->cl[n].h;
		poff += (size_t)cg_blocks(s->cl[n].h);
		n++;
	}
	s->ncl = n;
	for (int a = 0; a < n; a++) {
		cluster *c = &s->cl[a];
		c->key = cluster_key(s, a);
		c->geo_valid = a < s->nold && s->old_cl[a].key == c->key && c->key != 0;
		c->pc_ready = c->geo_valid && s->old_cl[a].pc_ready;
	}
	return off <= s->cap && poff <= s->part_cap && soff <= s->span_cap ? 0 : -1;
}

/* The columns fi (0..rw-1) of box b's region in cluster-frame row gy where the footprint
 * can cover a cell: |u| < w/2 + E/2 and |v| < h/2 + E/2 (ramp() is 0 beyond), each linear
 * in dx along the row, widened by a cell for round-off. Cells outside have no cover, so
 * FOR_FOOTPRINT skipping them changes nothing; it skips about half of a tilted box's
 * bounding rectangle. */
static inline void footprint_cols(const shallow *s, const box_state *b, int gy, int *fi0,
				  int *fi1)
{
	const double dy = gy + 0.5 - b->sy - b->y;
	const double U = b->hw + 0.5 * s->edge, V = b->hh + 0.5 * s->edge;
	double lo = -INFINITY, hi = INFINITY;
	/* u = dx cs - dy sn in (-U, U), v = dx sn + dy cs in (-V, V) */
	if (fabs(b->cs) > 1e-9) {
		double a = (-U + dy * b->sn) / b->cs, z = (U + dy * b->sn) / b->cs;
		lo = fmax(lo, fmin(a, z));
		hi = fmin(hi, fmax(a, z));
	}
	if (fabs(b->sn) > 1e-9) {
		double a = (-V - dy * b->cs) / b->sn, z = (V - dy * b->cs) / b->sn;
		lo = fmax(lo, fmin(a, z));
		hi = fmin(hi, fmax(a, z));
	}
	/* fi = gx - x0 - sx and dx = gx + 0.5 - sx - x: fi = dx + x - 0.5 - x0 */
	const double off = b->x - 0.5 - b->x0;
	double f0 = floor(lo + off) - 1, f1 = ceil(hi + off) + 1;
	*fi0 = f0 > 0 ? (int)f0 : 0;
	*fi1 = f1 < b->rw - 1 ? (int)f1 : b->rw - 1;
	if (!(lo <= hi)) /* the row misses the box (or a NaN pose): nothing */
		*fi0 = 1, *fi1 = 0;
}

/* Runs the statements for every pool cell of box b's footprint, with k the local index in
 * cluster c, p the pool index, (gx, gy) the cluster-frame cell, (u, v) box coordinates and
 * cov the weight of the cell: ramp(w/2 - |u|) ramp(h/2 - |v|), ramp(d) a smoothstep from 0
 * at d = -E/2 to 1 at d = E/2 over the soft edge width E. The ramp is odd about the edge,
 * so the weights add up to the box's true area (and buoyancy balances the weight at the
 * right draft). Partial weights make the displacement follow the box continuously as it
 * moves or turns instead of jumping a cell at a time, and a few pixels of soft edge keep
 * the forcing free of grid-scale content, which the discrete wave equation would leave
 * behind as a slow, hatched ringing. */
#define FOR_FOOTPRINT(s, b, c, ...)                                                      \
	for (int fj = 0; fj < (b)->rh; fj++) {                                           \
		int gy = (b)->y0 + (b)->sy + fj, lj = gy - (c)->y0;                      \
		if (lj < 1 || lj >= (c)->h - 1)                                          \
			continue;                                                        \
		int fi0, fi1;                                                            \
		footprint_cols(s, b, gy, &fi0, &fi1);                                    \
		for (int fi = fi0; fi <= fi1; fi++) {                                    \
			int gx = (b)->x0 + (b)->sx + fi, li = gx - (c)->x0;              \
			if (li < 1 || li >= (c)->w - 1)                                  \
				continue;                                                \
			long p = pool_index(s, gx, gy);                                  \
			if (p < 0)                                                       \
				continue;                                                \
			double dx = gx + 0.5 - (b)->sx - (b)->x;                         \
			double dy = gy + 0.5 - (b)->sy - (b)->y;                         \
			double u = dx * (b)->cs - dy * (b)->sn;                          \
			double v = dx * (b)->sn + dy * (b)->cs;                          \
			double cov = edge_ramp(s, (b)->hw - fabs(u)) *                   \
				     edge_ramp(s, (b)->hh - fabs(v));                    \
			if (!(cov > 0))                                                  \
				continue;                                                \
			size_t k = (size_t)lj * (c)->w + (size_t)li;                     \
			__VA_ARGS__                                                      \
		}                                                                        \
	}

/* Box b's footprint over the columns [fa, fb] of cluster-frame row gy (cluster row lj):
 * where it covers a cell more than what is there (as much, and lower), its cover and
 * bottom. The cells and values of FOR_FOOTPRINT, in a loop without branches (the soft
 * edge's cells were a branch the processor could not predict). */
static void footprint_row(const shallow *s, const box_state *b, int W, int off, int gy, int lj,
			  int fa, int fb, double st0, double st1, float *cv, float *low)
{
	const double dy = gy + 0.5 - b->sy - b->y;
	float *restrict cr = cv + (size_t)lj * W + off, *restrict lr = low + (size_t)lj * W + off;
	const int gx0 = b->x0 + b->sx;
#pragma omp simd
	for (int fi = fa; fi <= fb; fi++) {
		const int gx = gx0 + fi;
		const double dx = gx + 0.5 - b->sx - b->x;
		const double u = dx * b->cs - dy * b->sn;
		const double v = dx * b->sn + dy * b->cs;
		const double cov = edge_ramp(s, b->hw - fabs(u)) * edge_ramp(s, b->hh - fabs(v));
		const float bottom = (float)(b->z + v * st0 - u * st1), cf = (float)cov;
		const int take = cov > 0 && (cf > cr[fi] || (cf == cr[fi] && bottom < lr[fi]));
		lr[fi] = take ? bottom : lr[fi];
		cr[fi] = take ? cf : cr[fi];
	}
}

/* A cluster's footprint arrays from scratch: deg, the neighbours that exist (what
 * pool_index() says, branch-free), and low, cov, mask, b, x and the diagonal cleared. */
static void cluster_clear(shallow *s, const cluster *c)
{
	const int W = c->w, H = c->h, wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	uint8_t *mask = s->a_mask + c->off, *deg = s->a_deg + c->off;
	float *low = s->a_low + c->off, *cv = s->a_cov + c->off;
	double *bv = s->a_b + c->off, *x = s->a_x + c->off, *dg = s->a_diag + c->off;
	for (int j = 0; j < H; j++) {
		const int gy = c->y0 + j;
		const int vy = wrap || (gy >= 0 && gy < s->h);
		const int ny = (gy > 0) + (gy < s->h - 1);
		uint8_t *dr = deg + (size_t)j * W;
		for (int i = 0; i < W; i++) {
			const int gx = c->x0 + i;
			const int in = vy & (wrap | ((unsigned)gx < (unsigned)s->w));
			const int n4 = wrap ? 4 : (gx > 0) + (gx < s->w - 1) + ny;
			dr[i] = (uint8_t)(in ? n4 : 0);
		}
	}
	const size_t n = (size_t)W * H;
	for (size_t k = 0; k < n; k++)
		low[k] = INFINITY;
	memset(cv, 0, n * sizeof *cv);
	memset(mask, 0, n);
	memset(bv, 0, n * sizeof *bv);
	memset(x, 0, n * sizeof *x);
	memset(dg, 0, n * sizeof *dg);
}

/* Each box of cluster ci into the cluster's cov and low: where boxes overlap, the one
 * covering more of the cell (then the lower) wins. */
static void cluster_footprints(shallow *s, int ci)
{
	const cluster *c = &s->cl[ci];
	const int W = c->w, H = c->h, wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	float *low = s->a_low + c->off, *cv = s->a_cov + c->off;
	for (int bi = 0; bi < s->nbox; bi++) {
		box_state *b = &s->box[bi];
		if (!b->active || b->cluster != ci)
			continue;
		double st0, st1;
		tilt_sines(b, &st0, &st1);
		/* Where boxes overlap, the one covering more of the cell (then the lower) wins.
		 * FOR_FOOTPRINT's cells row by row: its columns, those of the cluster's
		 * interior and (unless wrapping) those in the pool. */
		const int off = b->x0 + b->sx - c->x0; /* local column of fi */
		for (int fj = 0; fj < b->rh; fj++) {
			const int gy = b->y0 + b->sy + fj, lj = gy - c->y0;
			if (lj < 1 || lj >= H - 1 || (!wrap && (gy < 0 || gy >= s->h)))
				continue;
			int fa, fb;
			footprint_cols(s, b, gy, &fa, &fb);
			fa = fa > 1 - off ? fa : 1 - off;
			fb = fb < W - 2 - off ? fb : W - 2 - off;
			if (!wrap) {
				fa = fa > -(b->x0 + b->sx) ? fa : -(b->x0 + b->sx);
				fb = fb < s->w - 1 - (b->x0 + b->sx) ? fb : s->w - 1 - (b->x0 + b->sx);
			}
			if (fa <= fb)
				footprint_row(s, b, W, off, gy, lj, fa, fb, st0, st1, cv, low);
		}
	}
}

/* The mask (cells under a box whose bottom is below the effective level), b, the
 * diagonal and the warm start x, row by row; c->masked. 1 when the mask changed. */
static int cluster_mask(shallow *s, cluster *c, int settle)
{
	const int W = c->w, H = c->h;
	uint8_t *mask = s->a_mask + c->off;
	float *low = s->a_low + c->off, *cv = s->a_cov + c->off;
	double *bv = s->a_b + c->off, *x = s->a_x + c->off, *dg = s->a_diag + c->off;
	int masked = 0, changed = 0;
	const int xrun = c->x0 >= 0 && c->x0 + W <= s->w;
	for (int j = 1; j < H - 1; j++) {
		const int gy = c->y0 + j;
		if (!settle && xrun &&
		    (s->boundary == SCENE_BOUNDARY_WRAP ? gy < s->h : gy >= 0 && gy < s->h)) {
			/* a row of cells that are one run in the pool: the loop below without
			 * its branches, the same values */
			const long p0 = pool_index(s, c->x0, gy);
			const size_t q0 = (size_t)j * W;
			const double *restrict hr = s->nw + p0, *restrict vr = s->vh + p0,
					     *restrict v1 = s->vh1 + p0;
			const float *restrict cr = cv + q0, *restrict lr = low + q0;
			uint8_t *restrict mr = mask + q0;
			double *restrict br = bv + q0, *restrict xr = x + q0, *restrict dr = dg + q0;
			const double gamma = s->gamma, rate = s->rate;
			int m = 0, ch = 0;
#pragma omp simd reduction(+ : m) reduction(| : ch)
			for (int i = 1; i < W - 1; i++) {
				const double cvk = (double)cr[i];
				const double over = cvk * (hr[i] - (double)lr[i]);
				const int in = cr[i] > 0 && over + gamma * vr[i] > 0;
				ch |= in != mr[i];
				mr[i] = (uint8_t)in;
				m += in;
				const double pen = cr[i] < 1 ? SOFT_PENALTY * (1 - cvk) / cvk : 0;
				br[i] = in ? over / rate : 0;
				dr[i] = in ? pen : 0;
				xr[i] = in ? 2 * vr[i] - v1[i] : 0;
			}
			masked += m;
			changed |= ch;
			continue;
		}
		for (int i = 1; i < W - 1; i++) {
			size_t k = (size_t)j * W + i;
			if (!(cv[k] > 0))
				continue;
			long p = pool_index(s, c->x0 + i, c->y0 + j);
			if (p < 0)
				continue;
			double hn = settle ? 0.0 : *eta_at(s->nw, p);
			double vprev = settle ? 0.0 : s->vh[p];
			double over = (double)cv[k] * (hn - (double)low[k]); /* water above the bottom */
			/* Under the box where its bottom is below the effective level (the water
			 * plus what the box held down last step, so a resting box stays masked even
			 * where round-off puts the water a hair under its bottom). */
			uint8_t in = over + s->gamma * vprev > 0;
			changed |= in != mask[k];
			mask[k] = in;
			if (!in) {
				bv[k] = x[k] = dg[k] = 0;
				continue;
			}
			masked++;
			/* A partly covered cell's virtual height is pulled towards 0 by the penalty
			 * P (infinite at cov = 0, nothing at cov = 1), so a cell that enters or leaves
			 * the mask does so with vh ~ 0: the soft edge is soft for vh too. */
			double pen = cv[k] < 1 ? SOFT_PENALTY * (1 - (double)cv[k]) / (double)cv[k] : 0;
			if (settle) {
				/* see cluster_solve: rows divided by 1 - cov gamma to stay symmetric */
				double f = 1 - (double)cv[k] * s->gamma;
				bv[k] = over / f;
				dg[k] = (s->rate * pen + s->gamma * cv[k]) / f;
			} else {
				bv[k] = over / s->rate;
				dg[k] = pen;
				x[k] = 2 * vprev - s->vh1[p];
			}
		}
	}
	c->masked = masked;
	return changed;
}

/* Phase 1 of a cluster: degrees, box bottoms, the mask and b, the warm start.
 * settle != 0 is the initial state (water at rest level, no previous solve). */
static void cluster_setup(shallow *s, int ci, int settle)
{
	cluster *c = &s->cl[ci];
	/* The footprint arrays, unless kept from the last step (a box at rest). */
	const int keep = c->geo_valid && !settle;
	if (!keep) {
		cluster_clear(s, c);
		cluster_footprints(s, ci);
	}
	const int changed = cluster_mask(s, c, settle) || !keep;
	if (changed || settle)
		c->pc_ready = 0;
}

/* The resting state (settle) is solved to round-off: a relative residual of SETTLE_CG_TOL,
 * under an iteration cap meant only to stop a solve that cannot converge
 * (SETTLE_CG_ITERS, shallow_impl.h). */
#define SETTLE_CG_TOL   1e-10

/* Phase 2 of a cluster: CG, then the water takes rate * gamma * sum_j (vh_j - vh).
 * Returns the cluster's CG statistics in c->cg. */
static void cluster_solve(shallow *s, int ci, int settle, int parallel)
{
	cluster *c = &s->cl[ci];
	const int W = c->w, H = c->h;
	const uint8_t *mask = s->a_mask + c->off, *deg = s->a_deg + c->off;
	double *x = s->a_x + c->off;
	cg_problem pb = { .w = W, .h = H, .mask = mask, .deg = deg, .scale = 1.0, .shift = 0.0,
			  .diag = s->a_diag + c->off };
	cg_work wk = { .r = s->a_r + c->off, .p = s->a_p + c->off, .q = s->a_q + c->off,
		       .z = s->a_z + c->off, .pc = s->a_pc + c->off,
		       .part = s->a_part + c->part_off, .pc_ready = &c->pc_ready,
		       .span = s->a_span + c->span_off, .apc = s->a_apc + c->off };
	if (settle) {
		/* The resting state: effective level eta + gamma vh = 0 everywhere and a step that
		 * changes nothing. With eta = -gamma vh, L eta = gamma L vh on the mask, and the
		 * step's (L + P) vh = cov (eta' - low) / rate must give back vh:
		 *   rate (1 - cov gamma) L vh + (rate P + cov gamma) vh = -cov low,
		 * divided row by row by (1 - cov gamma) to keep it symmetric. */
		pb.scale = s->rate;
	}
	/* The CG's leftover residual r moves the water by rate gamma r per step: stop when
	 * that is below cg_tol height units (RMS over the masked cells). The resting state is
	 * solved to round-off. */
	const double abs_tol = s->cg_tol / (s->rate * s->gamma) * sqrt((double)c->masked);
	if (c->masked)
		c->cg = cg_solve(&pb, s->a_b + c->off, x, &wk, settle ? SETTLE_CG_TOL : 0,
				 settle ? 0 : abs_tol, settle ? SETTLE_CG_ITERS : s->cg_iters, parallel);
	else
		c->cg = (cg_stats){ .ok = 1 }; /* nothing to solve */
	const double k = s->rate * s->gamma;
	/* Rows whose cells are one run in the pool (no edge, no seam) skip pool_index() and
	 * the region's edge tests between their first and last cell. */
	const int xrun = c->x0 >= 0 && c->x0 + W <= s->w;
	for (int j = 0; j < H; j++) {
		const int gy = c->y0 + j;
		const int run = !settle && xrun && j > 0 && j < H - 1 &&
				(s->boundary == SCENE_BOUNDARY_WRAP ? gy < s->h : gy >= 0 && gy < s->h);
		for (int i = 0; i < W; i++) {
			if (run && i == 1) {
				const long p0 = pool_index(s, c->x0, gy);
				const size_t q0 = (size_t)j * W;
				for (; i < W - 1; i++) {
					const size_t q = q0 + (size_t)i;
					s->vh[p0 + i] = x[q];
					double nb = x[q - 1] + x[q + 1] + x[q - W] + x[q + W];
					double lap = nb - (double)deg[q] * x[q];
					if (lap != 0)
						*eta_at(s->nw, p0 + i) += k * lap;
				}
			}
			long p = pool_index(s, c->x0 + i, gy);
			if (p < 0)
				continue;
			size_t q = (size_t)j * W + i;
			s->vh[p] = x[q];
			if (settle) {
				if (mask[q])
					*eta_at(s->eta, p) = -s->gamma * x[q];
				continue;
			}
			double nb = (i > 0 ? x[q - 1] : 0) + (i < W - 1 ? x[q + 1] : 0) +
				    (j > 0 ? x[q - W] : 0) + (j < H - 1 ? x[q + W] : 0);
			double lap = nb - (double)deg[q] * x[q];
			if (lap != 0)
				*eta_at(s->nw, p) += k * lap;
		}
	}
}

/* Effective water level (height units) at local cell q / pool cell p after the coupling. */
static inline double level_at(const shallow *s, const double *x, size_t q, long p)
{
	return (double)*eta_at(s->nw, p) + s->gamma * x[q];
}

/* Floating box: buoyancy g * (submerged volume) against its weight g * mass, moments of
 * the buoyancy about its centre (tilt), and the horizontal pressure force
 * -g * sum(d * grad level) (the water is pushed down-slope); symplectic Euler, with a
 * linear drag. Submerged depth per cell: d = clamp(level - bottom, 0, height). */
static void float_box(shallow *s, box_state *b, const cluster *c)
{
	const double *x = s->a_x + c->off;
	const int W = c->w;
	double st0, st1;
	tilt_sines(b, &st0, &st1);
	double vol = 0, m0 = 0, m1 = 0, fx = 0, fy = 0;
	FOR_FOOTPRINT(s, b, c, {
		double lv = level_at(s, x, k, p);
		double d = lv - (b->z + v * st0 - u * st1);
		if (d > 0) {
			d = cov * (d > b->height ? b->height : d);
			vol += d;
			m0 += d * v;
			m1 -= d * u;
			long pl = pool_index(s, gx - 1, gy), pr = pool_index(s, gx + 1, gy);
			long pu = pool_index(s, gx, gy - 1), pd = pool_index(s, gx, gy + 1);
			double ll = pl < 0 ? lv : level_at(s, x, k - 1, pl);
			double lr = pr < 0 ? lv : level_at(s, x, k + 1, pr);
			double lu = pu < 0 ? lv : level_at(s, x, k - W, pu);
			double ld = pd < 0 ? lv : level_at(s, x, k + W, pd);
			fx -= d * 0.5 * (lr - ll);
			fy -= d * 0.5 * (ld - lu);
		}
	})
	const double g = s->g_box, dt = s->dt_sub, dr = s->drag;
	b->vz += dt * (g * (vol / b->mass - 1) - dr * b->vz);
	b->z += dt * b->vz;
	if (b->z < -s->depth) { /* resting on the pool floor */
		b->z = -s->depth;
		b->vz = b->vz < 0 ? 0 : b->vz;
	}
	double mom[2] = { m0, m1 };
	for (int a = 0; a < 2; a++) {
		b->wt[a] += dt * (g * mom[a] / b->inertia[a] - dr * b->wt[a]);
		b->tilt[a] += dt * b->wt[a];
		if (fabs(b->tilt[a]) > TILT_MAX) {
			b->tilt[a] = b->tilt[a] > 0 ? TILT_MAX : -TILT_MAX;
			b->wt[a] = 0;
		}
	}
	b->vx += dt * (g * fx / b->mass - dr * b->vx);
	b->vy += dt * (g * fy / b->mass - dr * b->vy);
	b->x += dt * b->vx;
	b->y += dt * b->vy;
	if (s->boundary == SCENE_BOUNDARY_WRAP) {
		b->x -= s->w * floor(b->x / s->w);
		b->y -= s->h * floor(b->y / s->h);
	} else {
		/* keep the footprint in the pool; the walls take half the speed away */
		double ex = fabs(b->cs) * b->hw + fabs(b->sn) * b->hh;
		double ey = fabs(b->sn) * b->hw + fabs(b->cs) * b->hh;
		double lo[2] = { ex, ey }, hi[2] = { s->w - ex, s->h - ey };
		double *pos[2] = { &b->x, &b->y }, *vel[2] = { &b->vx, &b->vy };
		for (int a = 0; a < 2; a++) {
			if (lo[a] > hi[a]) {
				*pos[a] = 0.5 * (lo[a] + hi[a]);
				*vel[a] = 0;
			} else if (*pos[a] < lo[a]) {
				*pos[a] = lo[a];
				*vel[a] = 0.5 * fabs(*vel[a]);
			} else if (*pos[a] > hi[a]) {
				*pos[a] = hi[a];
				*vel[a] = -0.5 * fabs(*vel[a]);
			}
		}
	}
}

/* Over the pool cells of regions cl[0..n): dst = src (src NULL: 0), then src = 0 if
 * clear_src. */
static void regions_copy(const shallow *s, const cluster *cl, int n, double *dst, double *src,
			 int clear_src)
{
	for (int o = 0; o < n; o++) {
		const cluster *c = &cl[o];
		for (int j = 0; j < c->h; j++)
			for (int i = 0; i < c->w; i++) {
				const long p = pool_index(s, c->x0 + i, c->y0 + j);
				if (p < 0)
					continue;
				dst[p] = src ? src[p] : 0;
				if (clear_src)
					src[p] = 0;
			}
	}
}

/* see shallow_impl.h */
int shallow_couple(shallow *s, int settle)
{
	if (build_clusters(s) < 0)
		return -1;
	return shallow_couple_built(s, settle);
}

/* see shallow_impl.h */
int shallow_build_clusters(shallow *s)
{
	return build_clusters(s);
}

/* see shallow_impl.h */
int shallow_couple_built(shallow *s, int settle)
{
	const int ncl = s->ncl;
	/* Threads only pay off for big regions: every parallel region is a fork and a join,
	 * which costs far more than a small box's work when the machine is busy. */
	size_t cells = 0;
	for (int ci = 0; ci < ncl; ci++)
		cells += (size_t)s->cl[ci].w * s->cl[ci].h;
	const int big = cells >= CG_PAR_CELLS, par = big && ncl > 1;
#pragma omp parallel for schedule(static, 1) if (par)
	for (int ci = 0; ci < ncl; ci++)
		cluster_setup(s, ci, settle);
	/* vh must be zero outside the current masks: clear last step's regions (this step's
	 * are rewritten whole by cluster_solve), keeping last step's vh as vh1 (which is
	 * zero outside them: cleared where it held the step before's). */
	regions_copy(s, s->old2_cl, s->nold2, s->vh1, NULL, 0);
	regions_copy(s, s->old_cl, s->nold, s->vh1, s->vh, 1);
#pragma omp parallel for schedule(static, 1) if (par)
	for (int ci = 0; ci < ncl; ci++) {
		const cluster *c = &s->cl[ci];
		cluster_solve(s, ci, settle, big && !par);
		if (settle)
			continue;
		for (int bi = 0; bi < s->nbox; bi++)
			if (s->box[bi].floating && s->box[bi].active && s->box[bi].cluster == ci)
				float_box(s, &s->box[bi], c);
	}
	/* The new heights changed in the regions: they are not calm water (here, not in
	 * cluster_solve: clusters solved in parallel may share rows). */
	for (int ci = 0; ci < ncl && !settle; ci++) {
		const cluster *c = &s->cl[ci];
		shallow_spans_mark(s, s->sp_nw, c->x0, c->x0 + c->w - 1, c->y0, c->y0 + c->h - 1);
	}
	int iters = 0, masked = 0, fail = 0;
	double resid = 0;
	for (int ci = 0; ci < ncl; ci++) {
		iters = s->cl[ci].cg.iters > iters ? s->cl[ci].cg.iters : iters;
		/* what the leftover residual does to the water, height units per step (RMS) */
		double e = s->cl[ci].masked ? s->rate * s->gamma * s->cl[ci].cg.rnorm /
						      sqrt((double)s->cl[ci].masked)
					    : 0;
		resid = e > resid ? e : resid;
		masked += s->cl[ci].masked;
		fail += !s->cl[ci].cg.ok;
	}
	s->last_iters = iters;
	s->last_resid = resid;
	s->masked = masked;
	s->cg_fail += fail;
	memcpy(s->old2_cl, s->old_cl, (size_t)s->nold * sizeof *s->cl);
	s->nold2 = s->nold;
	memcpy(s->old_cl, s->cl, (size_t)ncl * sizeof *s->cl);
	s->nold = ncl;
	if (settle) { /* the resting solve used other diagonals: nothing carries over */
		for (int ci = 0; ci < ncl; ci++)
			s->old_cl[ci].key = 0;
		/* at rest: the step before had the same vh (the first warm start is vh) */
		regions_copy(s, s->cl, ncl, s->vh1, s->vh, 0);
		memcpy(s->old2_cl, s->cl, (size_t)ncl * sizeof *s->cl);
		s->nold2 = ncl;
	}
	return 0;
}

