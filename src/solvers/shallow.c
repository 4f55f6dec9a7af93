/*
 * shallow.c - the `shallow` solver: seed 003 (GAMES103 lab 4) shallow waves, with boxes
 * coupled to the water through a "virtual height" solved by conjugate gradient (cg.c).
 *
 * State: eta and eta_old, heights in height units relative to the rest depth, on a w x h
 * grid of 1-pixel cells with a one-cell ghost ring (so the stencil has no branches); vh,
 * the raw CG solution under the boxes, kept as the next solve's warm start. The state is
 * double: with float, the per-cell rounding of tiny, one-signed increments (a box creeping
 * to rest) adds up to a visible volume drift, which the momentum term d (h - h_old) keeps
 * for about 1 / (1 - d) steps. The surface handed to the renderer is float.
 *
 * One internal step of dt_sub seconds:
 *   1. eta' = eta + d (eta - eta_old) + rate * sum_{j in N4} (eta_j - eta)   (wave_update)
 *      (+ an optional viscous term, see wave_update). Neumann edges: a missing neighbour
 *      contributes nothing (ghost = edge value); wrap: periodic; absorb: first-order Mur
 *      condition on the edge cells.
 *   2. Boxes, grouped into clusters whose regions touch (couple): mask the cells under a
 *      box whose bottom `low` is below the effective water level eta' + gamma vh_prev;
 *      solve L vh = (eta' - low) / rate there (L = minus the 4-neighbour Laplacian, masked-out
 *      neighbours zero); eta' += rate * gamma * sum_j (vh_j - vh). The update is a
 *      discrete divergence, so it moves water sideways and never creates or destroys it.
 *   3. Floating boxes (float_box): buoyancy and pressure from the effective level
 *      eta + gamma vh (the water plus what the box is holding down), gravity, drag.
 *
 * Scaling (the seed's constants are per step on a 100-cell pool at 8 steps per frame): the
 * wave speed is sqrt(rate) cells per step; `speed` (px/s, default: the lab's 17 cells/s
 * scaled by the pool size / 100) sets how many steps each solver step takes; `damping` is
 * per 1/240 s (the lab's step at 30 fps) and converted to the real step length, so the
 * look does not depend on the grid size, fps or the scene's substeps.
 *
 * Stability: for a Fourier mode with Laplacian eigenvalue -l (0 <= l <= 8) the update has
 * amplification factors g with g^2 - (1 + d_l - rate l) g + d_l = 0, d_l = d - mu l (mu
 * from the optional viscosity). Both roots stay in the unit disc iff |d_l| <= 1 and
 * rate l < 2 (1 + d_l) (Jury); the worst mode (the checkerboard, l = 8) gives
 *     4 rate + 8 mu < 1 + d,
 * which init() checks, refusing anything else with the reason.
 *
 * Box geometry: a box with centre (x, y) and angle a (degrees, counter-clockwise as seen
 * in the image, y down) covers the cells whose centre (i + 0.5, j + 0.5) has local
 * coordinates |u| <= w/2, |v| <= h/2 with u = dx cos a - dy sin a, v = dx sin a + dy cos a.
 * Its bottom at (u, v) is z + v sin(tilt[0]) - u sin(tilt[1]), z relative to the rest
 * level (negative = below it). One height unit is one pixel where the two meet (tilt,
 * horizontal forces).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/cg.h"
#include "solvers/solver.h"

/* The lab's scale: a 100-cell pool, 8 steps per frame at 30 fps, rate 0.005. */
#define REF_CELLS 100.0
#define REF_STEPS_PER_S 240.0
#define REF_RATE 0.005
#define MAX_SUBSTEPS 4096
#define TILT_MAX 0.6      /* radians; a box tipping further is outside this model */
#define CG_PAR_CELLS 16384 /* box regions this big (in all) use the threads */
#define PAR_CELLS 65536    /* pools this big use the threads for the wave update: below,
			      a fork and join cost more than the work they would share */
#define SOFT_PENALTY 1.0   /* pull of vh towards 0 on partly covered cells, see cluster_setup */

static const double PI = 3.14159265358979323846;

enum { FLOAT_START_SURFACE, FLOAT_START_REST };
static const char *const float_start_names[] = { "surface", "rest", NULL };

typedef struct box_state {
	double x, y, angle;    /* centre (px) and yaw (degrees) */
	double vx, vy;         /* px/s */
	double z, vz;          /* bottom relative to the rest level, height units (and /s) */
	double tilt[2], wt[2]; /* radians, rad/s */
	double hw, hh, height; /* half footprint (px), height (units) */
	double mass, inertia[2];
	int floating;
	/* this step's region, in its cluster's frame */
	int active, x0, y0, rw, rh;
	int sx, sy;   /* shift into the cluster frame (wrap) */
	int cluster;
	double sn, cs; /* sin, cos of angle */
} box_state;

typedef struct cluster {
	int x0, y0, w, h; /* region incl. a one-cell margin, cluster frame (== pool frame
			     up to multiples of the pool size) */
	size_t off;       /* cells into the arena */
	size_t part_off;  /* partial sums into the arena */
	int alive;
	cg_stats cg;
	int masked;
} cluster;

typedef struct shallow {
	/* options */
	double rate, damping, gamma, speed, depth, gravity, cg_tol, drag, edge, viscosity;
	int substeps, cg_iters, float_start;

	/* derived */
	int w, h, S; /* S = w + 2, the stride of the ghosted buffers */
	scene_boundary boundary;
	int nsub;
	double dt_sub, d_step, mu, c_px, g_box, mur_k;

	double *buf[3];         /* ghosted (w+2) x (h+2) */
	double *eta, *old, *nw; /* rotate through buf */
	double *vh;             /* raw virtual height, ghosted layout (the ring stays 0) */
	float *surf;            /* w*h, surface() output */

	int nbox;
	box_state *box;
	tp_box_pose *pose; /* reported poses */
	tp_box_pose *prev; /* the stepper's poses at the previous step */
	cluster *cl;
	int ncl;
	cluster *old_cl; /* last step's regions, to clear vh there */
	int nold;

	/* arena for the clusters */
	size_t cap, part_cap;
	uint8_t *a_mask, *a_deg;
	float *a_low, *a_cov;
	double *a_b, *a_x, *a_r, *a_p, *a_q, *a_z, *a_pc, *a_part, *a_diag;

	/* bookkeeping */
	double v0;
	int last_iters, masked, cg_fail;
	double last_resid;
	int blown;
} shallow;

/* How much of a box covers a point d pixels inside one of its edges (d < 0: outside):
 * a smoothstep 3t^2 - 2t^3 over the soft edge width E, t = d / E + 1/2. */
static inline double edge_ramp(const shallow *s, double d)
{
	double t = d / s->edge + 0.5;
	return t <= 0 ? 0 : t >= 1 ? 1 : t * t * (3 - 2 * t);
}

#define OFF(f) offsetof(shallow, f)
static const tp_option shallow_options[] = {
	{ "rate", "c^2 dt^2/dx^2 per internal step (seed: 0.005); needs 4 rate < 1 + damping",
	  OFF(rate), TP_OPT_DOUBLE, REF_RATE, 1e-6, 1, NULL },
	{ "damping", "velocity kept per 1/240 s (seed: 0.996 per step at 8 steps/frame, 30 fps)",
	  OFF(damping), TP_OPT_DOUBLE, 0.996, 0, 1, NULL },
	{ "gamma", "fraction of the virtual height applied per step (seed: 0.004)",
	  OFF(gamma), TP_OPT_DOUBLE, 0.004, 1e-6, 1, NULL },
	{ "speed", "wave speed, px/s; 0 = the lab's look scaled to the pool (0.17 x longer side)",
	  OFF(speed), TP_OPT_DOUBLE, 0, 0, 1e6, NULL },
	{ "substeps", "internal steps per solver step; 0 = from speed (overrides speed if set)",
	  OFF(substeps), TP_OPT_INT, 0, 0, MAX_SUBSTEPS, NULL },
	{ "depth", "rest depth of the pool, height units", OFF(depth), TP_OPT_DOUBLE, 40, 0.01,
	  1e6, NULL },
	{ "gravity", "for floating boxes, units/s^2; 0 = speed^2 / depth (shallow-water c^2 = g D)",
	  OFF(gravity), TP_OPT_DOUBLE, 0, 0, 1e9, NULL },
	{ "cg_tol", "CG stops when what it leaves moves the water < this, units/step (RMS)",
	  OFF(cg_tol), TP_OPT_DOUBLE, 1e-6, 1e-15, 1, NULL },
	{ "cg_iters", "CG iteration cap per solve", OFF(cg_iters), TP_OPT_INT, 200, 1, 100000,
	  NULL },
	{ "drag", "linear drag on floating boxes, 1/s", OFF(drag), TP_OPT_DOUBLE, 1.0, 0, 1000,
	  NULL },
	{ "edge", "width of a box's soft edge, px (1 = exact cell coverage; wider rings less)",
	  OFF(edge), TP_OPT_DOUBLE, 8, 1, 32, NULL },
	{ "viscosity", "px^2/s; damps short waves like real water, ~ k^2 (0 = the seed's update)",
	  OFF(viscosity), TP_OPT_DOUBLE, 1.0, 0, 1e4, NULL },
	{ "float_start", "floating boxes start resting on the surface (and settle) or at rest",
	  OFF(float_start), TP_OPT_ENUM, FLOAT_START_SURFACE, 0, 1, float_start_names },
	{ NULL },
};

/* ---- deterministic helpers (no libm transcendental functions in the state path) ---- */

/* sin x for |x| <= pi/4, Taylor to x^17 (truncation < 1e-17). */
static double sin_poly(double x)
{
	double x2 = x * x;
	return x * (1 + x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040 + x2 * (1.0 / 362880 +
		x2 * (-1.0 / 39916800 + x2 * (1.0 / 6227020800.0 + x2 * (-1.0 / 1307674368000.0 +
		x2 * (1.0 / 355687428096000.0)))))))));
}

static double cos_poly(double x)
{
	double x2 = x * x;
	return 1 + x2 * (-1.0 / 2 + x2 * (1.0 / 24 + x2 * (-1.0 / 720 + x2 * (1.0 / 40320 +
		x2 * (-1.0 / 3628800 + x2 * (1.0 / 479001600.0 + x2 * (-1.0 / 87178291200.0 +
		x2 * (1.0 / 20922789888000.0))))))));
}

static void sincos_deg(double deg, double *sn, double *cs)
{
	double t = deg - 360.0 * floor(deg / 360.0);
	double q = floor(t / 90.0 + 0.5);
	double x = (t - 90.0 * q) * (PI / 180.0);
	double s = sin_poly(x), c = cos_poly(x);
	switch ((int)q & 3) {
	case 0: *sn = s; *cs = c; break;
	case 1: *sn = c; *cs = -s; break;
	case 2: *sn = -s; *cs = -c; break;
	default: *sn = -c; *cs = s; break;
	}
}

/* a^e for 0 <= a <= 1, e >= 0 with multiplications and square roots only (both correctly
 * rounded in IEEE 754): integer part by squaring, fraction bit by bit. */
static double pow_sqrt(double a, double e)
{
	double r = 1, sq = a;
	for (unsigned long n = (unsigned long)floor(e); n; n >>= 1) {
		if (n & 1)
			r *= sq;
		sq *= sq;
	}
	double f = e - floor(e), root = a;
	for (int k = 0; k < 53 && f > 0; k++) {
		root = sqrt(root);
		f *= 2;
		if (f >= 1) {
			r *= root;
			f -= 1;
		}
	}
	return r;
}


static inline double *row(double *b, int S, int y) { return b + (size_t)(y + 1) * S + 1; }

/* ---- wave update ---- */

/* Fills the ghost ring of a ghosted buffer: Neumann (and absorb) copy the edge, so
 * eta_ghost - eta_edge = 0 and a missing neighbour contributes nothing; wrap copies the
 * opposite edge. */
static void fill_ghosts(const shallow *s, double *b)
{
	const int w = s->w, h = s->h, S = s->S;
	const int wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	for (int y = 0; y < h; y++) {
		double *r = row(b, S, y);
		r[-1] = wrap ? r[w - 1] : r[0];
		r[w] = wrap ? r[0] : r[w - 1];
	}
	memcpy(row(b, S, -1), row(b, S, wrap ? h - 1 : 0), (size_t)w * sizeof(double));
	memcpy(row(b, S, h), row(b, S, wrap ? 0 : h - 1), (size_t)w * sizeof(double));
}

/* One row of wave_update (below). Returns 1 if a new value is not finite: v * 0 is NaN
 * exactly when v is NaN or infinite, a test that vectorises. Built for AVX2 as well when
 * the compiler can (chosen at run time): the same operations in the same order, so the
 * same bits (no FMA: -ffp-contract=off). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static int wave_row(const double *restrict c, const double *restrict o, double *restrict n, int w,
		    ptrdiff_t S, double d, double r, double mu)
{
	const double *restrict up = c - S, *restrict dn = c + S;
	double nan_seen = 0;
	if (mu == 0) {
#pragma omp simd reduction(max : nan_seen)
		for (int x = 0; x < w; x++) {
			double hc = c[x];
			double v = hc + d * (hc - o[x]) + r * (((c[x - 1] + c[x + 1]) + (up[x] + dn[x])) - 4.0 * hc);
			n[x] = v;
			double z = v * 0.0;
			nan_seen = z != z ? 1.0 : nan_seen;
		}
	} else {
#pragma omp simd reduction(max : nan_seen)
		for (int x = 0; x < w; x++) {
			double hc = c[x], oc = o[x];
			double lc = ((c[x - 1] + c[x + 1]) + (up[x] + dn[x])) - 4.0 * hc;
			double lo = ((o[x - 1] + o[x + 1]) + (o[x - S] + o[x + S])) - 4.0 * oc;
			double v = hc + d * (hc - oc) + r * lc + mu * (lc - lo);
			n[x] = v;
			double z = v * 0.0;
			nan_seen = z != z ? 1.0 : nan_seen;
		}
	}
	return nan_seen != 0;
}

/* eta' = eta + d (eta - eta_old) + rate L eta + mu L (eta - eta_old),   height units,
 * L eta = sum_{N4} eta_j - 4 eta; mu = viscosity * dt is the optional viscous term (the
 * damped wave equation eta_tt = c^2 L eta + nu L eta_t), 0 for the seed's update.
 * Returns nonzero if any new value is not finite (blown up). */
static int wave_update(shallow *s)
{
	const int w = s->w, h = s->h, S = s->S;
	const double d = s->d_step, r = s->rate, mu = s->mu;
	int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (s->w * s->h >= PAR_CELLS)
	for (int y = 0; y < h; y++)
		bad |= wave_row(row(s->eta, S, y), row(s->old, S, y), row(s->nw, S, y), w, S, d, r, mu);
	if (s->boundary == SCENE_BOUNDARY_ABSORB) {
		/* Mur's first-order absorbing condition, u0' = u1 + k (u1' - u0), k = (c-1)/(c+1)
		 * with c = sqrt(rate) cells per step: a wave leaving at speed c is not reflected. */
		const double k = s->mur_k;
		for (int y = 0; y < h; y++) {
			const double *c = row(s->eta, S, y);
			double *n = row(s->nw, S, y);
			n[0] = c[1] + k * (n[1] - c[0]);
			n[w - 1] = c[w - 2] + k * (n[w - 2] - c[w - 1]);
		}
		const double *c0 = row(s->eta, S, 0), *c1 = row(s->eta, S, 1);
		const double *ce = row(s->eta, S, h - 1), *cf = row(s->eta, S, h - 2);
		double *n0 = row(s->nw, S, 0), *n1 = row(s->nw, S, 1);
		double *ne = row(s->nw, S, h - 1), *nf = row(s->nw, S, h - 2);
		for (int x = 0; x < w; x++) {
			n0[x] = c1[x] + k * (n1[x] - c0[x]);
			ne[x] = cf[x] + k * (nf[x] - ce[x]);
		}
	}
	return bad;
}

/* ---- boxes: regions and clusters ---- */

/* The pool cells under box b, plus a one-cell margin, in b's own frame. */
static void box_region(const shallow *s, box_state *b)
{
	sincos_deg(b->angle, &b->sn, &b->cs);
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
		*c = (cluster){ b->x0, b->y0, b->rw, b->rh, 0, 0, 1, { 0, 0, 0, 1 }, 0 };
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
	size_t off = 0, poff = 0;
	for (int a = 0; a < s->ncl; a++) {
		if (!s->cl[a].alive)
			continue;
		for (int k = 0; k < s->nbox; k++)
			if (s->box[k].active && s->box[k].cluster == a)
				s->box[k].cluster = n;
		s->cl[n] = s->cl[a];
		s->cl[n].off = off;
		s->cl[n].part_off = poff;
		off += (size_t)s->cl[n].w * s->cl[n].h;
		poff += (size_t)cg_blocks(s->cl[n].h);
		n++;
	}
	s->ncl = n;
	return off <= s->cap && poff <= s->part_cap ? 0 : -1;
}

/* Index into the ghosted buffers (eta, eta_old, vh) of cluster-frame cell (gx, gy), or -1
 * outside the pool. */
static inline long pool_index(const shallow *s, int gx, int gy)
{
	if (s->boundary == SCENE_BOUNDARY_WRAP) {
		gx = gx >= s->w ? gx - s->w : gx;
		gy = gy >= s->h ? gy - s->h : gy;
	} else if (gx < 0 || gy < 0 || gx >= s->w || gy >= s->h) {
		return -1;
	}
	return (long)(gy + 1) * s->S + gx + 1;
}

static inline double *eta_at(double *b, const shallow *s, long p)
{
	(void)s;
	return b + p;
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
		for (int fi = 0; fi < (b)->rw; fi++) {                                   \
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

/* Phase 1 of a cluster: degrees, box bottoms, the mask and b, the warm start.
 * settle != 0 is the initial state (water at rest level, no previous solve). */
static void cluster_setup(shallow *s, int ci, int settle)
{
	cluster *c = &s->cl[ci];
	const int W = c->w, H = c->h, wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	uint8_t *mask = s->a_mask + c->off, *deg = s->a_deg + c->off;
	float *low = s->a_low + c->off, *cv = s->a_cov + c->off;
	double *bv = s->a_b + c->off, *x = s->a_x + c->off, *dg = s->a_diag + c->off;
	for (int j = 0; j < H; j++)
		for (int i = 0; i < W; i++) {
			size_t k = (size_t)j * W + i;
			int gx = c->x0 + i, gy = c->y0 + j;
			long p = pool_index(s, gx, gy);
			deg[k] = p < 0 ? 0
				 : wrap ? 4
					: (uint8_t)((gx > 0) + (gx < s->w - 1) + (gy > 0) + (gy < s->h - 1));
			low[k] = INFINITY;
			cv[k] = 0;
			mask[k] = 0;
			bv[k] = x[k] = dg[k] = 0;
		}
	for (int bi = 0; bi < s->nbox; bi++) {
		box_state *b = &s->box[bi];
		if (!b->active || b->cluster != ci)
			continue;
		double st0 = sin_poly(b->tilt[0]), st1 = sin_poly(b->tilt[1]);
		/* Where boxes overlap, the one covering more of the cell (then the lower) wins. */
		FOR_FOOTPRINT(s, b, c, {
			(void)p;
			float bottom = (float)(b->z + v * st0 - u * st1);
			if ((float)cov > cv[k] || ((float)cov == cv[k] && bottom < low[k])) {
				low[k] = bottom;
				cv[k] = (float)cov;
			}
		})
	}
	int masked = 0;
	for (int j = 1; j < H - 1; j++)
		for (int i = 1; i < W - 1; i++) {
			size_t k = (size_t)j * W + i;
			if (!(cv[k] > 0))
				continue;
			long p = pool_index(s, c->x0 + i, c->y0 + j);
			if (p < 0)
				continue;
			double hn = settle ? 0.0 : *eta_at(s->nw, s, p);
			double vprev = settle ? 0.0 : s->vh[p];
			double over = (double)cv[k] * (hn - (double)low[k]); /* water above the bottom */
			/* Under the box where its bottom is below the effective level (the water
			 * plus what the box held down last step, so a resting box stays masked even
			 * where round-off puts the water a hair under its bottom). */
			if (!(over + s->gamma * vprev > 0))
				continue;
			mask[k] = 1;
			masked++;
			/* A partly covered cell's virtual height is pulled towards 0 by the penalty
			 * P (infinite at cov = 0, nothing at cov = 1), so a cell that enters or leaves
			 * the mask does so with vh ~ 0: the soft edge is soft for vh too. */
			double pen = SOFT_PENALTY * (1 - (double)cv[k]) / (double)cv[k];
			if (settle) {
				/* see cluster_solve: rows divided by 1 - cov gamma to stay symmetric */
				double f = 1 - (double)cv[k] * s->gamma;
				bv[k] = over / f;
				dg[k] = (s->rate * pen + s->gamma * cv[k]) / f;
			} else {
				bv[k] = over / s->rate;
				dg[k] = pen;
				x[k] = vprev;
			}
		}
	c->masked = masked;
}

/* Phase 2 of a cluster: CG, then the water takes rate * gamma * sum_j (vh_j - vh).
 * Returns the cluster's CG statistics in c->cg. */
static void cluster_solve(shallow *s, int ci, int settle, int parallel)
{
	cluster *c = &s->cl[ci];
	const int W = c->w, H = c->h;
	const uint8_t *mask = s->a_mask + c->off, *deg = s->a_deg + c->off;
	double *x = s->a_x + c->off;
	cg_problem pb = { W, H, mask, deg, 1.0, 0.0, s->a_diag + c->off };
	cg_work wk = { s->a_r + c->off, s->a_p + c->off, s->a_q + c->off, s->a_z + c->off,
		       s->a_pc + c->off, s->a_part + c->part_off };
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
		c->cg = cg_solve(&pb, s->a_b + c->off, x, &wk, settle ? 1e-10 : 0, settle ? 0 : abs_tol,
				 settle ? 100000 : s->cg_iters, parallel);
	else
		c->cg = (cg_stats){ 0, 0, 0, 1 };
	const double k = s->rate * s->gamma;
	for (int j = 0; j < H; j++)
		for (int i = 0; i < W; i++) {
			long p = pool_index(s, c->x0 + i, c->y0 + j);
			if (p < 0)
				continue;
			size_t q = (size_t)j * W + i;
			s->vh[p] = x[q];
			if (settle) {
				if (mask[q])
					*eta_at(s->eta, s, p) = -s->gamma * x[q];
				continue;
			}
			double nb = (i > 0 ? x[q - 1] : 0) + (i < W - 1 ? x[q + 1] : 0) +
				    (j > 0 ? x[q - W] : 0) + (j < H - 1 ? x[q + W] : 0);
			double lap = nb - (double)deg[q] * x[q];
			if (lap != 0)
				*eta_at(s->nw, s, p) += k * lap;
		}
}

/* Effective water level (height units) at local cell q / pool cell p after the coupling. */
static inline double level_at(const shallow *s, const double *x, size_t q, long p)
{
	return (double)*eta_at(s->nw, s, p) + s->gamma * x[q];
}

/* Floating box: buoyancy g * (submerged volume) against its weight g * mass, moments of
 * the buoyancy about its centre (tilt), and the horizontal pressure force
 * -g * sum(d * grad level) (the water is pushed down-slope); symplectic Euler, with a
 * linear drag. Submerged depth per cell: d = clamp(level - bottom, 0, height). */
static void float_box(shallow *s, box_state *b, const cluster *c)
{
	const double *x = s->a_x + c->off;
	const int W = c->w;
	double st0 = sin_poly(b->tilt[0]), st1 = sin_poly(b->tilt[1]);
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

/* The box coupling of one internal step (settle: the initial resting state instead).
 * Returns 0, or -1 if the boxes did not fit the arena (cannot happen by construction). */
static int couple(shallow *s, int settle)
{
	if (build_clusters(s) < 0)
		return -1;
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
	 * are rewritten whole by cluster_solve). */
	for (int o = 0; o < s->nold; o++) {
		const cluster *c = &s->old_cl[o];
		for (int j = 0; j < c->h; j++)
			for (int i = 0; i < c->w; i++) {
				long p = pool_index(s, c->x0 + i, c->y0 + j);
				if (p >= 0)
					s->vh[p] = 0;
			}
	}
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
	memcpy(s->old_cl, s->cl, (size_t)ncl * sizeof *s->cl);
	s->nold = ncl;
	return 0;
}

/* ---- descriptor methods ---- */

static void shallow_uninit(void *priv)
{
	shallow *s = priv;
	for (int i = 0; i < 3; i++)
		free(s->buf[i]);
	free(s->vh);
	free(s->surf);
	free(s->box);
	free(s->pose);
	free(s->prev);
	free(s->cl);
	free(s->old_cl);
	free(s->a_mask);
	free(s->a_deg);
	free(s->a_low);
	free(s->a_cov);
	free(s->a_diag);
	free(s->a_b);
	free(s->a_x);
	free(s->a_r);
	free(s->a_p);
	free(s->a_q);
	free(s->a_z);
	free(s->a_pc);
	free(s->a_part);
	memset(s->buf, 0, sizeof s->buf);
	s->vh = NULL;
	s->surf = NULL;
	s->box = NULL;
	s->pose = s->prev = NULL;
	s->cl = s->old_cl = NULL;
}

/* Volume-preserving drop. r < 1 is the seed's rule (the centre cell gains `strength`, its
 * existing 4-neighbours share the loss); otherwise a smooth bump strength (1 - q^2)^2,
 * q = d / r, and a compensating trough ring over r < d < 2r scaled so the sum over the
 * cells actually touched is zero. Applied to eta and eta_old alike: the drop starts at
 * rest. Units: pixels, height units. */
static void shallow_drop(void *priv, double x, double y, double r, double strength)
{
	shallow *s = priv;
	const int wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	if (!(r > 0) || !isfinite(x) || !isfinite(y) || !isfinite(strength) || fabs(x) > 1e7 ||
	    fabs(y) > 1e7)
		return;
	if (r < 1) {
		int ci = (int)floor(x), cj = (int)floor(y);
		int nx[4] = { ci - 1, ci + 1, ci, ci }, ny[4] = { cj, cj, cj - 1, cj + 1 };
		long pc = pool_index(s, wrap ? ((ci % s->w) + s->w) % s->w : ci,
				     wrap ? ((cj % s->h) + s->h) % s->h : cj);
		if (pc < 0)
			return;
		long pn[4];
		int cnt = 0;
		for (int k = 0; k < 4; k++) {
			pn[k] = pool_index(s, wrap ? ((nx[k] % s->w) + s->w) % s->w : nx[k],
					   wrap ? ((ny[k] % s->h) + s->h) % s->h : ny[k]);
			cnt += pn[k] >= 0;
		}
		double share = strength / cnt;
		for (int b = 0; b < 2; b++) {
			double *buf = b ? s->old : s->eta;
			*eta_at(buf, s, pc) += strength;
			for (int k = 0; k < 4; k++)
				if (pn[k] >= 0)
					*eta_at(buf, s, pn[k]) -= share;
		}
		fill_ghosts(s, s->eta);
		return;
	}
	double rmax = wrap ? 0.25 * (s->w < s->h ? s->w : s->h) : 1e6;
	r = r > rmax ? rmax : r;
	if (r < 1)
		r = 1;
	int i0 = (int)floor(x - 2 * r), i1 = (int)ceil(x + 2 * r);
	int j0 = (int)floor(y - 2 * r), j1 = (int)ceil(y + 2 * r);
	if (!wrap) {
		i0 = i0 < 0 ? 0 : i0;
		j0 = j0 < 0 ? 0 : j0;
		i1 = i1 > s->w - 1 ? s->w - 1 : i1;
		j1 = j1 > s->h - 1 ? s->h - 1 : j1;
	}
	double sum[2] = { 0, 0 }, scale = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int j = j0; j <= j1; j++)
			for (int i = i0; i <= i1; i++) {
				double dx = i + 0.5 - x, dy = j + 0.5 - y;
				double d = sqrt(dx * dx + dy * dy), q = d / r, t = (d - 1.5 * r) / (0.5 * r);
				double bump = q < 1 ? (1 - q * q) * (1 - q * q) : 0;
				double ring = fabs(t) < 1 ? (1 - t * t) * (1 - t * t) : 0;
				if (bump == 0 && ring == 0)
					continue;
				long p = pool_index(s, wrap ? ((i % s->w) + s->w) % s->w : i,
						    wrap ? ((j % s->h) + s->h) % s->h : j);
				if (pass == 0) {
					sum[0] += bump;
					sum[1] += ring;
				} else {
					double dv = strength * (bump - scale * ring);
					*eta_at(s->eta, s, p) += dv;
					*eta_at(s->old, s, p) += dv;
				}
			}
		if (pass == 0) {
			if (!(sum[1] > 0))
				return;
			scale = sum[0] / sum[1];
		}
	}
	fill_ghosts(s, s->eta);
	fill_ghosts(s, s->old);
}

static double volume_of(const shallow *s)
{
	double v = 0;
	for (int y = 0; y < s->h; y++) {
		const double *r = row(s->eta, s->S, y);
		double rv = 0;
		for (int x = 0; x < s->w; x++)
			rv += r[x];
		v += rv;
	}
	return s->depth * s->w * s->h + v;
}

/* Kinematic boxes ride at the draft they would float at (density x height, at most the
 * height), or stand on the pool floor if that is deeper: an island is a box with
 * density >= depth / height. */
static double kinematic_z(const shallow *s, const scene_box *sb)
{
	double rho = sb->density < 0 ? 0 : sb->density > 1 ? 1 : sb->density;
	double draft = rho * sb->height;
	return -(draft > s->depth ? s->depth : draft);
}

static void report_poses(shallow *s)
{
	for (int i = 0; i < s->nbox; i++) {
		const box_state *b = &s->box[i];
		s->pose[i] = (tp_box_pose){ b->x, b->y, b->angle, b->vx, b->vy, b->z,
					    { b->tilt[0], b->tilt[1] } };
	}
}

/* A kinematic box must stay slower than the waves. Faster, it overtakes the water it
 * pushes, which then piles up at its front without bound (the model has no flow under
 * or breaking): refuse with the reason. The speed of a segment counts its corners'
 * turning as well as its centre's travel. */
static int check_path_speed(const shallow *s, const scene_box *sb, int i, tp_err *err)
{
	const double half_diag = 0.5 * sqrt(sb->size[0] * sb->size[0] + sb->size[1] * sb->size[1]);
	for (int k = 1; k < sb->path.n; k++) {
		const scene_key *a = &sb->path.keys[k - 1], *b = &sb->path.keys[k];
		double dt = b->t - a->t;
		if (!(dt > 0))
			continue;
		double v = (sqrt((b->x - a->x) * (b->x - a->x) + (b->y - a->y) * (b->y - a->y)) +
			    fabs(b->angle - a->angle) * (PI / 180) * half_diag) / dt;
		if (v >= s->c_px)
			return tp_errf(err, TP_EINPUT,
				       "boxes[%d].path: moves at %.4g px/s between t = %g and %g s, not "
				       "slower than the waves (%.4g px/s): the water it pushes would pile up "
				       "in front of it without bound; slow it down or raise params.speed",
				       i, v, a->t, b->t, s->c_px);
	}
	return 0;
}

static int shallow_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	shallow *s = priv;
	const scene *sc = ctx->scene;
	s->w = sc->width;
	s->h = sc->height;
	s->S = s->w + 2;
	s->boundary = sc->boundary;
	if (s->w < 3 || s->h < 3)
		return tp_errf(err, TP_EINPUT, "size: shallow needs at least 3x3 cells (got %dx%d)", s->w,
			       s->h);
	const double dt = 1.0 / (sc->fps * (sc->substeps > 0 ? sc->substeps : 1));
	const int longer = s->w > s->h ? s->w : s->h;
	double speed = s->speed > 0 ? s->speed
				    : sqrt(REF_RATE) * REF_STEPS_PER_S * (longer / REF_CELLS);
	if (s->substeps > 0) {
		s->nsub = s->substeps;
	} else {
		double n = ceil(speed * dt / sqrt(s->rate) - 1e-9);
		if (!(n <= MAX_SUBSTEPS))
			return tp_errf(err, TP_EINPUT,
				       "params.speed: %g px/s needs %.0f internal steps per step at rate "
				       "%g (limit %d); lower the speed or raise the rate",
				       speed, n, s->rate, MAX_SUBSTEPS);
		s->nsub = n < 1 ? 1 : (int)n;
	}
	s->dt_sub = dt / s->nsub;
	s->d_step = pow_sqrt(s->damping, REF_STEPS_PER_S * s->dt_sub);
	s->mu = s->viscosity * s->dt_sub;
	/* For the viscous term, a mode's velocity factor d becomes d - 8 mu at the
	 * checkerboard: 4 rate < 1 + d - 8 mu (and d - 8 mu > -1, implied). */
	if (!(4 * s->rate + 8 * s->mu < 1 + s->d_step)) {
		if (s->mu > 0 && 4 * s->rate < 1 + s->d_step)
			return tp_errf(err, TP_EINPUT,
				       "params.viscosity: %g would blow up because the viscous term takes "
				       "8*viscosity*dt = %.4g per step off the checkerboard's velocity and the "
				       "update needs 4*rate + 8*viscosity*dt < 1 + d (here %.6g >= %.6g); use "
				       "viscosity < %.4g or more substeps",
				       s->viscosity, 8 * s->mu, 4 * s->rate + 8 * s->mu, 1 + s->d_step,
				       (1 + s->d_step - 4 * s->rate) / (8 * s->dt_sub));
		return tp_errf(err, TP_EINPUT,
			       "params.rate: %g would blow up because the update h' = h + d(h - h_old) "
			       "+ rate*sum(h_j - h) amplifies the checkerboard mode unless 4*rate < 1 + "
			       "d (here 4*rate = %g, 1 + d = %.6g with d = %.6g per step); use rate < %.4g",
			       s->rate, 4 * s->rate, 1 + s->d_step, s->d_step, (1 + s->d_step) / 4);
	}
	s->c_px = sqrt(s->rate) / s->dt_sub;
	s->g_box = s->gravity > 0 ? s->gravity : s->c_px * s->c_px / s->depth;
	s->mur_k = (sqrt(s->rate) - 1) / (sqrt(s->rate) + 1);

	size_t cells = (size_t)s->w * s->h, ghosted = (size_t)s->S * (s->h + 2);
	for (int i = 0; i < 3; i++)
		if (!(s->buf[i] = calloc(ghosted, sizeof(double))))
			goto oom;
	if (!(s->vh = calloc(ghosted, sizeof(double))) || !(s->surf = calloc(cells, sizeof(float))))
		goto oom;
	s->eta = s->buf[0];
	s->old = s->buf[1];
	s->nw = s->buf[2];

	s->nbox = sc->nboxes;
	if (s->nbox) {
		size_t nb = (size_t)s->nbox;
		if (!(s->box = calloc(nb, sizeof *s->box)) || !(s->pose = calloc(nb, sizeof *s->pose)) ||
		    !(s->prev = calloc(nb, sizeof *s->prev)) || !(s->cl = calloc(nb, sizeof *s->cl)) ||
		    !(s->old_cl = calloc(nb, sizeof *s->old_cl)))
			goto oom;
		double sumw = 0, sumh = 0;
		for (int i = 0; i < s->nbox; i++) {
			const scene_box *sb = &sc->boxes[i];
			box_state *b = &s->box[i];
			if (!(sb->size[0] > 0 && sb->size[1] > 0 && sb->height > 0))
				return tp_errf(err, TP_EINPUT, "boxes[%d]: size and height must be > 0", i);
			if (sb->floating && !(sb->density > 0))
				return tp_errf(err, TP_EINPUT,
					       "boxes[%d].density: a floating box needs density > 0 (got %g)",
					       i, sb->density);
			if (!sb->floating) {
				int rc = check_path_speed(s, sb, i, err);
				if (rc < 0)
					return rc;
			}
			scene_path_eval(&sb->path, 0.0, &b->x, &b->y, &b->angle);
			b->hw = 0.5 * sb->size[0];
			b->hh = 0.5 * sb->size[1];
			b->height = sb->height;
			b->floating = sb->floating;
			b->mass = sb->density * sb->size[0] * sb->size[1] * sb->height;
			b->inertia[0] = b->mass * (sb->size[1] * sb->size[1] + sb->height * sb->height) / 12;
			b->inertia[1] = b->mass * (sb->size[0] * sb->size[0] + sb->height * sb->height) / 12;
			if (!b->floating)
				b->z = kinematic_z(s, sb);
			else if (s->float_start == FLOAT_START_REST)
				b->z = -fmin(sb->density * sb->height, s->depth);
			s->prev[i] = (tp_box_pose){ b->x, b->y, b->angle, 0, 0, b->z, { 0, 0 } };
			double diag = sqrt(sb->size[0] * sb->size[0] + sb->size[1] * sb->size[1]);
			sumw += fmin(ceil(diag + s->edge) + 5, s->w + 2);
			sumh += fmin(ceil(diag + s->edge) + 5, s->h + 2);
		}
		double capd = fmin(sumw * sumh, (double)(s->w + 2) * (s->h + 2));
		s->cap = (size_t)capd;
		s->part_cap = (size_t)(sumh / CG_BLOCK_ROWS) + (size_t)s->nbox + 2;
		if (!(s->a_mask = malloc(s->cap)) || !(s->a_deg = malloc(s->cap)) ||
		    !(s->a_low = malloc(s->cap * sizeof(float))) ||
		    !(s->a_cov = malloc(s->cap * sizeof(float))) ||
		    !(s->a_diag = malloc(s->cap * sizeof(double))) ||
		    !(s->a_b = malloc(s->cap * sizeof(double))) ||
		    !(s->a_x = malloc(s->cap * sizeof(double))) ||
		    !(s->a_r = malloc(s->cap * sizeof(double))) ||
		    !(s->a_p = malloc(s->cap * sizeof(double))) ||
		    !(s->a_q = malloc(s->cap * sizeof(double))) ||
		    !(s->a_z = malloc(s->cap * sizeof(double))) ||
		    !(s->a_pc = malloc(s->cap * sizeof(double))) ||
		    !(s->a_part = malloc(s->part_cap * sizeof(double))))
			goto oom;
		/* Start with the water already displaced by the boxes that sit in it, so a box at
		 * rest in still water leaves it still. */
		if (couple(s, 1) < 0)
			return tp_errf(err, TP_EIO, "shallow: box regions overflow (internal error)");
		memcpy(s->old, s->eta, ghosted * sizeof(double));
		report_poses(s);
	}
	fill_ghosts(s, s->eta);
	fill_ghosts(s, s->old);
	s->v0 = volume_of(s);
	return 0;
oom:
	return tp_errf(err, TP_EIO, "shallow: out of memory for a %dx%d pool", s->w, s->h);
}

static int shallow_step(void *priv, const tp_step_in *in)
{
	shallow *s = priv;
	if (s->blown)
		return TP_EIO;
	for (int k = 0; k < s->nsub; k++) {
		/* kinematic poses move linearly across the internal steps */
		double f = (double)(k + 1) / s->nsub;
		for (int i = 0; i < s->nbox; i++) {
			box_state *b = &s->box[i];
			if (b->floating || !in->boxes)
				continue;
			const tp_box_pose *a = &s->prev[i], *z = &in->boxes[i];
			b->x = a->x + f * (z->x - a->x);
			b->y = a->y + f * (z->y - a->y);
			b->angle = a->angle + f * (z->angle - a->angle);
			b->vx = z->vx;
			b->vy = z->vy;
		}
		int bad = wave_update(s);
		if (s->nbox && couple(s, 0) < 0)
			bad = 1;
		fill_ghosts(s, s->nw);
		double *t = s->old;
		s->old = s->eta;
		s->eta = s->nw;
		s->nw = t;
		for (int i = 0; i < s->nbox; i++)
			bad |= !isfinite(s->box[i].z) || !isfinite(s->box[i].x) || !isfinite(s->box[i].y);
		if (bad) {
			s->blown = 1;
			return TP_EIO;
		}
	}
	for (int i = 0; i < s->nbox; i++)
		if (!s->box[i].floating && in->boxes) {
			s->prev[i] = in->boxes[i];
		}
	report_poses(s);
	return 0;
}

static void shallow_surface(void *priv, tp_surface *out)
{
	shallow *s = priv;
	memset(out, 0, sizeof *out);
	out->kind = TP_SURFACE_HEIGHT;
	out->w = s->w;
	out->h = s->h;
	out->type = TP_SAMPLE_F32;
	out->scale = 1.0f;
	out->wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	out->nboxes = s->nbox;
	out->boxes = s->pose;
	/* Under a box show the effective level eta + gamma vh (smooth across the box edge),
	 * so the refraction around a box is not a cliff. */
	const double g = s->gamma;
#pragma omp parallel for schedule(static) if (s->w * s->h >= PAR_CELLS)
	for (int y = 0; y < s->h; y++) {
		const double *e = row(s->eta, s->S, y), *v = row(s->vh, s->S, y);
		float *o = s->surf + (size_t)y * s->w;
		for (int x = 0; x < s->w; x++)
			o[x] = (float)(e[x] + g * v[x]);
	}
	out->data = s->surf;
	out->stride = s->w;
}

/* Per-frame statistics. energy = 1/2 sum (eta - eta_old)^2 / rate + 1/2 sum over edges
 * (eta_i - eta_j)^2, the discrete wave energy (height units^2 px^2); volume = sum of
 * water columns (height units px^2), constant with reflect/wrap edges. */
static void shallow_stats(const void *priv, tp_stats *out)
{
	const shallow *s = priv;
	double kin = 0, pot = 0, vmax = 0;
	for (int y = 0; y < s->h; y++) {
		const double *e = row(s->eta, s->S, y), *o = row(s->old, s->S, y);
		const double *dn = row(s->eta, s->S, y + 1);
		for (int x = 0; x < s->w; x++) {
			double v = (double)e[x] - o[x];
			kin += v * v;
			if (x + 1 < s->w)
				pot += ((double)e[x + 1] - e[x]) * ((double)e[x + 1] - e[x]);
			if (y + 1 < s->h)
				pot += ((double)dn[x] - e[x]) * ((double)dn[x] - e[x]);
			vmax = fabs(e[x]) > vmax ? fabs(e[x]) : vmax;
		}
	}
	double vol = volume_of(s);
	out->n = 0;
	tp_stats_add(out, "volume", vol);
	tp_stats_add(out, "dvolume", vol - s->v0);
	tp_stats_add(out, "energy", 0.5 * kin / s->rate + 0.5 * pot);
	tp_stats_add(out, "max_dev", vmax);
	tp_stats_add(out, "substeps", s->nsub);
	tp_stats_add(out, "speed", s->c_px);
	if (s->nbox) {
		tp_stats_add(out, "masked", s->masked);
		tp_stats_add(out, "cg_iters", s->last_iters);
		tp_stats_add(out, "cg_err", s->last_resid);
		tp_stats_add(out, "cg_unconverged", s->cg_fail);
	}
}

/* Checkpoint: a magic, the sizes, then eta, eta_old, vh and the box states (host byte
 * order: checkpoints are for resuming on the same machine). */
static const char SAVE_MAGIC[8] = { 'T', 'P', 'S', 'H', 'A', 'L', '0', '1' };

static int rw_all(void *p, size_t size, size_t n, FILE *f, int wr)
{
	return (wr ? fwrite(p, size, n, f) : fread(p, size, n, f)) == n ? 0 : -1;
}

static int save_load(shallow *s, FILE *f, int wr)
{
	int32_t dims[3] = { s->w, s->h, s->nbox };
	char magic[8];
	memcpy(magic, SAVE_MAGIC, sizeof magic);
	if (rw_all(magic, 1, sizeof magic, f, wr) || rw_all(dims, sizeof dims[0], 3, f, wr))
		return -1;
	if (!wr && (memcmp(magic, SAVE_MAGIC, sizeof magic) || dims[0] != s->w || dims[1] != s->h ||
		    dims[2] != s->nbox))
		return -2;
	for (int y = 0; y < s->h; y++)
		if (rw_all(row(s->eta, s->S, y), sizeof(double), (size_t)s->w, f, wr) ||
		    rw_all(row(s->old, s->S, y), sizeof(double), (size_t)s->w, f, wr))
			return -1;
	if (rw_all(s->vh, sizeof(double), (size_t)s->S * (s->h + 2), f, wr) ||
	    (s->nbox && (rw_all(s->box, sizeof *s->box, (size_t)s->nbox, f, wr) ||
			 rw_all(s->prev, sizeof *s->prev, (size_t)s->nbox, f, wr) ||
			 rw_all(s->old_cl, sizeof *s->old_cl, (size_t)s->nbox, f, wr) ||
			 rw_all(&s->nold, sizeof s->nold, 1, f, wr))) ||
	    rw_all(&s->v0, sizeof s->v0, 1, f, wr))
		return -1;
	if (!wr) {
		fill_ghosts(s, s->eta);
		fill_ghosts(s, s->old);
		report_poses(s);
	}
	return 0;
}

static int shallow_save(const void *priv, FILE *f, tp_err *err)
{
	/* save_load only reads the state when writing */
	if (save_load((shallow *)(uintptr_t)priv, f, 1) < 0)
		return tp_errf(err, TP_EIO, "shallow: cannot write the checkpoint");
	return 0;
}

static int shallow_load(void *priv, FILE *f, tp_err *err)
{
	int rc = save_load(priv, f, 0);
	if (rc == -2)
		return tp_errf(err, TP_EINPUT, "shallow: the checkpoint is for another scene");
	if (rc < 0)
		return tp_errf(err, TP_EIO, "shallow: cannot read the checkpoint");
	return 0;
}

const tp_solver tp_solver_shallow = {
	.name = "shallow",
	.description = "GAMES103 shallow waves (seed 003): volume-preserving drops and rain, "
		       "boxes dragged or floating, coupled through conjugate gradient",
	.priv_size = sizeof(shallow),
	.options = shallow_options,
	.caps = TP_SOLVER_HEIGHTFIELD,
	.init = shallow_init,
	.uninit = shallow_uninit,
	.drop = shallow_drop,
	.step = shallow_step,
	.surface = shallow_surface,
	.stats = shallow_stats,
	.save = shallow_save,
	.load = shallow_load,
};
