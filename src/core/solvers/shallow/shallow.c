/*
 * shallow.c - the `shallow` solver: seed 003 (GAMES103 lab 4) shallow waves, with boxes
 * coupled to the water through a "virtual height" solved by conjugate gradient (cg.c).
 * This file: options, the wave update, drops, init/step/surface/stats/checkpoints. The
 * boxes are in shallow_boxes.c; what both share is in shallow_impl.h.
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
 *      plus the optional viscous term mu L(eta - eta_old). Neumann edges: a missing
 *      neighbour contributes nothing (ghost = edge value); wrap: periodic; absorb: Mur's
 *      first-order condition on the edge cells.
 *   2. Boxes, in clusters of boxes whose regions touch (shallow_couple): mask the cells
 *      under a box whose bottom `low` is below the effective water level eta' + gamma vh;
 *      solve L vh = cov (eta' - low) / rate there (L = minus the 4-neighbour Laplacian,
 *      masked-out neighbours zero; cov the cell's share of the soft-edged footprint);
 *      eta' += rate * gamma * sum_j (vh_j - vh). That is a discrete divergence: it moves
 *      water sideways and never creates or destroys it.
 *   3. Floating boxes (float_box): buoyancy and pressure from the effective level
 *      eta + gamma vh (the water plus what the box holds down), gravity, drag.
 *
 * Scaling: the seed's constants are per step on a 100-cell pool at 8 steps per frame. The
 * wave speed is sqrt(rate) cells per step, so `speed` (px/s; default the lab's 17 cells/s
 * times the pool size / 100) sets how many steps each solver step takes. `damping` is per
 * 1/240 s (the lab's step at 30 fps), converted to the real step length, and `gamma` is
 * scaled with rate, so the boxes' stiffness gamma / rate is the lab's. The look then
 * depends neither on the grid size nor on the fps or the scene's substeps. The rate cap
 * (default 0.4, 80 x the lab's, so 9 x fewer steps) sets the step length: free waves are
 * the more accurate the nearer the cap is to the stability limit, the waves a box makes
 * are within a few % at any cap (docs/solvers.md, Time).
 *
 * Stability: for a Fourier mode with Laplacian eigenvalue -l (0 <= l <= 8) the update has
 * amplification factors g with g^2 - (1 + d_l - rate l) g + d_l = 0, d_l = d - mu l (mu
 * from the optional viscosity). Both roots stay in the unit disc iff |d_l| <= 1 and
 * rate l < 2 (1 + d_l) (Jury); the worst mode (the checkerboard, l = 8) gives
 *     4 rate + 8 mu < 1 + d,
 * which init() checks, refusing anything else with the reason.
 *
 * Box geometry: a box with centre (x, y) and angle a (degrees, counter-clockwise as seen
 * in the image, y down) has local coordinates u = dx cos a - dy sin a, v = dx sin a +
 * dy cos a for a point (dx, dy) from its centre; it covers |u| < w/2, |v| < h/2, with a
 * soft edge (FOR_FOOTPRINT in shallow_boxes.c). Its bottom at (u, v) is
 * z + v sin(tilt[0]) - u sin(tilt[1]), z relative to the rest level (negative: below).
 * Where heights and pixels meet (tilts, horizontal forces) a height unit is a pixel; at
 * another render size than the scene's, heights are scaled with the pixels inside the
 * solver (shallow.hs), so the pool keeps its proportions.
 */
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/shallow/shallow_impl.h"
#include "util/wire.h"

/* The lab's scale: a 100-cell pool, 8 steps per frame at 30 fps, rate 0.005. */
#define REF_CELLS 100.0
#define REF_STEPS_PER_S 240.0
#define REF_RATE 0.005
/* The default cap on rate when a speed sets the internal steps: 80 x the lab's rate, 9 x
 * fewer steps (sqrt(0.4) = 0.63 cells a step). It is also the more accurate: the update's
 * time and space errors partly cancel as the step nears the stability limit (in 1D they
 * cancel exactly at one cell a step), so against the same scene simulated at twice the
 * size, rain at 0.4 is nearer than at 0.1 and much nearer than at the lab's 0.005
 * (docs/solvers.md, Time). Damping, viscosity and gamma are per second and the speed is
 * exact, so the look stays. 4 rate = 1.6 leaves room under the bound 4 rate + 8 mu < 1 + d
 * (~2); with a large viscosity, auto takes more steps to stay within AUTO_MARGIN of it. */
#define AUTO_RATE 0.4
#define AUTO_MARGIN 0.9
#define MAX_SUBSTEPS 4096

enum { FLOAT_START_SURFACE, FLOAT_START_REST };
static const char *const float_start_names[] = { "surface", "rest", NULL };

#define OFF(f) offsetof(shallow, f)
static const tp_option shallow_options[] = {
	{ "rate", "c^2 dt^2/dx^2 per internal step, at most; lowered to make the speed exact (0 = auto: 0.4, or the seed's 0.005 with substeps)",
	  OFF(rate), TP_OPT_DOUBLE, 0, 0, 1, NULL, TP_UNIT_NONE },
	{ "damping", "velocity kept per 1/240 s (seed: 0.996 per step at 8 steps/frame, 30 fps)",
	  OFF(damping), TP_OPT_DOUBLE, 0.996, 0, 1, NULL, TP_UNIT_NONE },
	{ "gamma", "fraction of the virtual height applied per step at rate 0.005 (seed: 0.004; scaled with rate)",
	  OFF(gamma), TP_OPT_DOUBLE, 0.004, 1e-6, 1, NULL, TP_UNIT_NONE },
	{ "speed", "wave speed, px/s; 0 = the lab's look scaled to the pool (0.17 x longer side)",
	  OFF(speed), TP_OPT_DOUBLE, 0, 0, 1e6, NULL, TP_UNIT_LENGTH },
	{ "substeps", "internal steps per solver step; 0 = from speed (overrides speed if set)",
	  OFF(substeps), TP_OPT_INT, 0, 0, MAX_SUBSTEPS, NULL, TP_UNIT_LENGTH },
	{ "depth", "rest depth of the pool, height units", OFF(depth), TP_OPT_DOUBLE, 40, 0.01,
	  1e6, NULL, TP_UNIT_LENGTH },
	{ "gravity", "units/s^2; sets speed = sqrt(gravity x depth) (not with speed or substeps); 0 = speed^2 / depth",
	  OFF(gravity), TP_OPT_DOUBLE, 0, 0, 1e9, NULL, TP_UNIT_LENGTH },
	{ "cg_tol", "CG stops when what it leaves moves the water < this, units/step (RMS)",
	  OFF(cg_tol), TP_OPT_DOUBLE, 1e-5, 1e-15, 1, NULL, TP_UNIT_LENGTH },
	{ "cg_iters", "CG iteration cap per solve", OFF(cg_iters), TP_OPT_INT, 200, 1, 100000,
	  NULL, TP_UNIT_NONE },
	{ "drag", "linear drag on floating boxes, 1/s", OFF(drag), TP_OPT_DOUBLE, 1.0, 0, 1000,
	  NULL, TP_UNIT_NONE },
	{ "edge", "width of a box's soft edge, px (~1: cell coverage; wider: less ringing)",
	  OFF(edge), TP_OPT_DOUBLE, 8, 1, 32, NULL, TP_UNIT_LENGTH },
	{ "viscosity", "px^2/s; damps short waves like real water, ~ k^2 (0 = the seed's update)",
	  OFF(viscosity), TP_OPT_DOUBLE, 1.0, 0, 1e4, NULL, TP_UNIT_AREA },
	{ "float_start", "floating boxes start on the surface (they bob and settle) or at their draft",
	  OFF(float_start), TP_OPT_ENUM, FLOAT_START_SURFACE, 0, 1, float_start_names, TP_UNIT_NONE },
	{ NULL },
};

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

/* ---- calm water ----
 *
 * Water no wave has reached is +0.0 in all three buffers, and the update of a cell whose
 * stencil reads only +0.0 is +0.0 (the coefficients d, rate and mu are >= 0; Mur's edge
 * gives +0 + (-0) = +0). So each buffer keeps, per row, the span of columns outside which
 * it holds +0.0 bit for bit, and the update computes a row only over its inputs' spans
 * widened by the stencil: a wave spreading into still water costs only where it has
 * reached (a drop's first frames, a box setting off in a calm pool). The same bits as the
 * update of every cell. The spans are shrunk to the first and last cell that is not +0.0
 * after each row, so they follow the waves' fronts (new heights below CALM_EPS are 0). */

/* New heights below this (internal height units) are still water, +0.0. Without it, the
 * stencil carries a wave's tail one cell a step, far ahead of the wave, until it
 * underflows past 1e-308, and the spans soon cover the pool; at 1e-30 the tail ends a few
 * cells past the wave. What it takes away is < 1e-30 a cell and step, nothing any output
 * can show (a 16-bit map's step is about 1e-5). */
#define CALM_EPS 1e-30

static inline int bits_zero(double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof b);
	return b == 0;
}

/* Shrinks [*lo, *hi] of row r to its first and last cell that is not +0.0 (w, -1: none). */
static void span_shrink(const double *r, int w, int *lo, int *hi)
{
	int a = *lo, b = *hi;
	while (a <= b && bits_zero(r[a]))
		a++;
	while (b > a && bits_zero(r[b]))
		b--;
	if (a > b)
		a = w, b = -1;
	*lo = a;
	*hi = b;
}

/* The spans of buffer b, read off its cells (after a checkpoint is loaded, at init). */
static void spans_scan(const shallow *s, const double *b, int *sp)
{
	for (int y = 0; y < s->h; y++) {
		sp[2 * y] = 0;
		sp[2 * y + 1] = s->w - 1;
		span_shrink(row((double *)(uintptr_t)b, s->S, y), s->w, &sp[2 * y], &sp[2 * y + 1]);
	}
}

/* see shallow_impl.h */
void shallow_spans_mark(const shallow *s, int *sp, int x0, int x1, int y0, int y1)
{
	const int w = s->w, h = s->h, wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	if (wrap && (x0 < 0 || x1 >= w)) /* across the seam: all of the rows */
		x0 = 0, x1 = w - 1;
	x0 = x0 < 0 ? 0 : x0;
	x1 = x1 > w - 1 ? w - 1 : x1;
	if (wrap && y1 - y0 >= h)
		y0 = 0, y1 = h - 1;
	for (int j = y0; j <= y1 && x0 <= x1; j++) {
		const int y = wrap ? ((j % h) + h) % h : j;
		if (y < 0 || y >= h)
			continue;
		sp[2 * y] = x0 < sp[2 * y] ? x0 : sp[2 * y];
		sp[2 * y + 1] = x1 > sp[2 * y + 1] ? x1 : sp[2 * y + 1];
	}
}

/* Adds span [a, b] to [*lo, *hi]. */
static inline void span_union(const int *sp, int *lo, int *hi)
{
	*lo = sp[0] < *lo ? sp[0] : *lo;
	*hi = sp[1] > *hi ? sp[1] : *hi;
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
			n[x] = fabs(v) < CALM_EPS ? 0.0 : v;
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
			n[x] = fabs(v) < CALM_EPS ? 0.0 : v;
			double z = v * 0.0;
			nan_seen = z != z ? 1.0 : nan_seen;
		}
	}
	return nan_seen != 0;
}

/* Row y of the update over its inputs' spans widened by the stencil (calm water, above):
 * what the buffer held two steps ago outside them is cleared to +0.0. Returns wave_row's
 * flag. Writes only row y of nw and its span. */
static int wave_row_calm(shallow *s, int y, double d, double r, double mu)
{
	const int w = s->w, h = s->h, wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	int lo = w, hi = -1;
	for (int k = -1; k <= 1; k++) {
		int yy = y + k; /* the ghost rows copy an edge row */
		yy = yy < 0 ? (wrap ? h - 1 : 0) : yy >= h ? (wrap ? 0 : h - 1) : yy;
		span_union(s->sp_eta + 2 * yy, &lo, &hi);
		if (k == 0 || mu != 0)
			span_union(s->sp_old + 2 * yy, &lo, &hi);
	}
	if (!s->calm_water)
		lo = 0, hi = w - 1;
	if (lo <= hi) {
		lo--, hi++;
		if (wrap && (lo < 0 || hi >= w)) /* the ghost columns copy the other edge */
			lo = 0, hi = w - 1;
		lo = lo < 0 ? 0 : lo;
		hi = hi >= w ? w - 1 : hi;
	}
	double *n = row(s->nw, s->S, y);
	int *sn = s->sp_nw + 2 * y;
	if (sn[0] <= sn[1]) {
		if (lo > hi) {
			memset(n + sn[0], 0, (size_t)(sn[1] - sn[0] + 1) * sizeof *n);
		} else {
			if (sn[0] < lo)
				memset(n + sn[0], 0, (size_t)((sn[1] < lo - 1 ? sn[1] : lo - 1) - sn[0] + 1) * sizeof *n);
			if (sn[1] > hi) {
				const int a = sn[0] > hi + 1 ? sn[0] : hi + 1;
				memset(n + a, 0, (size_t)(sn[1] - a + 1) * sizeof *n);
			}
		}
	}
	int bad = 0;
	if (lo <= hi) {
		bad = wave_row(row(s->eta, s->S, y) + lo, row(s->old, s->S, y) + lo, n + lo, hi - lo + 1,
			       s->S, d, r, mu);
		span_shrink(n, w, &lo, &hi);
	} else {
		lo = w, hi = -1;
	}
	sn[0] = lo;
	sn[1] = hi;
	return bad;
}

/* eta' = eta + d (eta - eta_old) + rate L eta + mu L (eta - eta_old),   height units
 * (0 where |eta'| < CALM_EPS),
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
		bad |= wave_row_calm(s, y, d, r, mu);
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
		/* the edges' new values in the spans: the columns at the ends, rows 0 and h-1
		 * whole */
		for (int y = 0; y < h; y++) {
			const double *n = row(s->nw, S, y);
			int *sn = s->sp_nw + 2 * y;
			if (y == 0 || y == h - 1) {
				sn[0] = 0, sn[1] = w - 1;
				span_shrink(n, w, &sn[0], &sn[1]);
				continue;
			}
			if (!bits_zero(n[0]))
				sn[0] = 0, sn[1] = sn[1] < 0 ? 0 : sn[1];
			if (!bits_zero(n[w - 1]))
				sn[1] = w - 1, sn[0] = sn[0] > w - 1 ? w - 1 : sn[0];
		}
	}
	return bad;
}

/* One internal step with boxes on two threads, the same bits as wave_update() then
 * shallow_couple(): the coupling reads and writes the new heights only in its clusters'
 * rows, so both threads update those rows first, then one couples the boxes while the
 * other updates the rest, and takes rows of the rest too when it is done (the coupling is
 * about half a step of shallow_drag.json: on one thread each waited for the other).
 * Only without absorbing edges (Mur's condition runs after every row, and a cluster at
 * the edge would read it). Returns nonzero if a new value is not finite or the boxes did
 * not fit. */
#define WAVE_CHUNK 8 /* rows per claim in wave_and_couple */

/* Waits until every row of the clusters is updated (spinning, then yielding). */
static void wait_band(atomic_int *band_left)
{
	for (int spins = 0; atomic_load_explicit(band_left, memory_order_acquire) > 0; spins++)
		if (spins > 4096)
			sched_yield();
}

static int wave_and_couple(shallow *s)
{
	if (shallow_build_clusters(s) < 0)
		return 1;
	const int h = s->h;
	const double d = s->d_step, r = s->rate, mu = s->mu;
	memset(s->band, 0, (size_t)h);
	for (int ci = 0; ci < s->ncl; ci++)
		for (int j = 0; j < s->cl[ci].h; j++) {
			int y = s->cl[ci].y0 + j;
			y = s->boundary == SCENE_BOUNDARY_WRAP ? (y % h + h) % h : y;
			if (y >= 0 && y < h)
				s->band[y] = 1;
		}
	/* Rows in the order they are taken: the clusters' rows first. */
	int nb = 0;
	for (int y = 0; y < h; y++)
		if (s->band[y])
			s->rows[nb++] = y;
	for (int y = 0, k = nb; y < h; y++)
		if (!s->band[y])
			s->rows[k++] = y;
	atomic_int next = 0, band_left = nb;
	int bad = 0, couple_rc = 0;
#pragma omp parallel num_threads(2) reduction(| : bad)
	{
		const int t = omp_get_thread_num(), nt = omp_get_num_threads();
		/* Both threads take chunks of rows, the clusters' first; once those are all
		 * done, thread 1 couples the boxes while thread 0 goes on with the rest, and
		 * then takes rows again. Each row is independent: the order changes no bit. */
		int to_couple = t == 1;
		for (;;) {
			if (to_couple && atomic_load_explicit(&next, memory_order_relaxed) >= nb) {
				wait_band(&band_left);
				couple_rc = shallow_couple_built(s, 0);
				to_couple = 0;
			}
			int i0 = atomic_fetch_add_explicit(&next, WAVE_CHUNK, memory_order_relaxed);
			if (i0 >= h)
				break;
			int i1 = i0 + WAVE_CHUNK < h ? i0 + WAVE_CHUNK : h;
			for (int i = i0; i < i1; i++) {
				bad |= wave_row_calm(s, s->rows[i], d, r, mu);
			}
			if (i0 < nb)
				atomic_fetch_sub_explicit(&band_left, (i1 < nb ? i1 : nb) - i0,
							  memory_order_release);
		}
		if (to_couple || (t == 0 && nt == 1)) { /* the rows ran out first; or alone */
			wait_band(&band_left);
			couple_rc = shallow_couple_built(s, 0);
		}
	}
	return bad || couple_rc < 0;
}

/* ---- descriptor methods ---- */

static void shallow_uninit(void *priv)
{
	shallow *s = priv;
	for (int i = 0; i < 3; i++) {
		free(s->buf[i]);
		free(s->span_mem[i]);
	}
	free(s->vh);
	free(s->vh1);
	free(s->band);
	free(s->rows);
	free(s->surf);
	free(s->box);
	free(s->pose);
	free(s->prev);
	free(s->cl);
	free(s->old_cl);
	free(s->old2_cl);
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
	free(s->a_apc);
	free(s->a_part);
	free(s->a_span);
	memset(s->buf, 0, sizeof s->buf);
	memset(s->span_mem, 0, sizeof s->span_mem);
	s->vh = NULL;
	s->band = NULL;
	s->rows = NULL;
	s->surf = NULL;
	s->box = NULL;
	s->pose = s->prev = NULL;
	s->cl = s->old_cl = s->old2_cl = NULL;
	s->vh1 = NULL;
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
	strength *= s->hs; /* internal height units (shallow.hs) */
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
			*eta_at(buf, pc) += strength;
			for (int k = 0; k < 4; k++)
				if (pn[k] >= 0)
					*eta_at(buf, pn[k]) -= share;
		}
		shallow_spans_mark(s, s->sp_eta, ci - 1, ci + 1, cj - 1, cj + 1);
		shallow_spans_mark(s, s->sp_old, ci - 1, ci + 1, cj - 1, cj + 1);
		fill_ghosts(s, s->eta);
		fill_ghosts(s, s->old);
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
					*eta_at(s->eta, p) += dv;
					*eta_at(s->old, p) += dv;
				}
			}
		if (pass == 0) {
			if (!(sum[1] > 0))
				return;
			scale = sum[0] / sum[1];
		}
	}
	shallow_spans_mark(s, s->sp_eta, i0, i1, j0, j1);
	shallow_spans_mark(s, s->sp_old, i0, i1, j0, j1);
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
	double draft = rho * sb->height * s->hs;
	return -(draft > s->depth ? s->depth : draft);
}

static void report_poses(shallow *s)
{
	for (int i = 0; i < s->nbox; i++) {
		const box_state *b = &s->box[i];
		s->pose[i] = (tp_box_pose){ b->x, b->y, b->angle, b->vx, b->vy, b->z / s->hs,
					    { b->tilt[0], b->tilt[1] } };
	}
}

/* A kinematic box must stay slower than the waves. Faster, it overtakes the water it
 * pushes, which then piles up at its front without bound (the model has no flow under
 * or breaking): refuse with the reason. The speed of a segment counts its corners'
 * turning as well as its centre's travel. */
static int check_path_speed(const shallow *s, const scene *sc, const scene_box *sb, int i,
			    tp_err *err)
{
	const double half_diag = 0.5 * sqrt(sb->size[0] * sb->size[0] + sb->size[1] * sb->size[1]);
	for (int k = 1; k < sb->path.n; k++) {
		const scene_key *a = &sb->path.keys[k - 1], *b = &sb->path.keys[k];
		double dt = b->t - a->t;
		if (!(dt > 0))
			continue;
		double v = (sqrt((b->x - a->x) * (b->x - a->x) + (b->y - a->y) * (b->y - a->y)) +
			    fabs(b->angle - a->angle) * (SH_PI / 180) * half_diag) / dt;
		if (v >= s->c_px) {
			char at[64];
			snprintf(at, sizeof at, "boxes[%d].path[%d]", i, k);
			if (!scene_has(sc, at))
				snprintf(at, sizeof at, "boxes[%d].path", i);
			return scene_errf(sc, err, TP_EINPUT, at,
				       "moves at %.4g px/s between t = %g and %g s, not "
				       "slower than the waves (%.4g px/s): the water it pushes would pile up "
				       "in front of it without bound; slow it down or raise params.speed",
				       v, a->t, b->t, s->c_px);
		}
	}
	return 0;
}

/* The internal step: the wave speed (from gravity, speed or substeps), the substeps and
 * the rate they make, damping and viscosity per internal step, each checked for
 * stability; and gamma at that rate. */
static int choose_step(shallow *s, const scene *sc, tp_err *err)
{
	const double dt = 1.0 / (sc->fps * (sc->substeps > 0 ? sc->substeps : 1));
	const int longer = s->w > s->h ? s->w : s->h;
	/* One wave speed: c^2 = g D. gravity (with depth) may set it, or speed, or substeps
	 * (sqrt(rate) cells per internal step), never two of them. */
	if (s->gravity > 0 && (s->speed > 0 || s->substeps > 0))
		return scene_errf(sc, err, TP_EINPUT, "params.gravity",
			       "gravity and %s both set the wave speed (c^2 = gravity x depth); give "
			       "one of them",
			       s->speed > 0 ? "speed" : "substeps");
	double speed = s->gravity > 0 ? sqrt(s->gravity * s->depth)
		       : s->speed > 0 ? s->speed
				      : sqrt(REF_RATE) * REF_STEPS_PER_S * (longer / REF_CELLS);
	const int auto_rate = !(s->rate > 0) && s->substeps <= 0;
	if (!(s->rate > 0)) /* auto: the cap for a speed, the lab's rate for given substeps */
		s->rate = s->substeps > 0 ? REF_RATE : AUTO_RATE;
	if (s->substeps > 0) {
		s->nsub = s->substeps;
	} else {
		double n = ceil(speed * dt / sqrt(s->rate) - 1e-9);
		if (!(n <= MAX_SUBSTEPS))
			return scene_errf(sc, err, TP_EINPUT, "params.speed",
				       "%g px/s needs %.0f internal steps per step at rate "
				       "%g (limit %d); lower the speed or raise the rate",
				       speed, n, s->rate, MAX_SUBSTEPS);
		s->nsub = n < 1 ? 1 : (int)n;
		/* Auto: more steps while the viscous term would bring the checkerboard within
		 * AUTO_MARGIN of the stability bound (a large viscosity), rather than refuse. */
		while (auto_rate && s->nsub < MAX_SUBSTEPS) {
			const double ds = dt / s->nsub, r = (speed * ds) * (speed * ds);
			if (4 * r + 8 * s->viscosity * ds <=
			    AUTO_MARGIN * (1 + pow_sqrt(s->damping, REF_STEPS_PER_S * ds)))
				break;
			s->nsub++;
		}
	}
	s->dt_sub = dt / s->nsub;
	/* The fewest internal steps that keep rate at or under the given one; the rate then
	 * made exact, (c dt_sub)^2, so the speed made is the speed asked for. */
	const double rate_in = s->rate;
	if (s->substeps <= 0)
		s->rate = (speed * s->dt_sub) * (speed * s->dt_sub);
	s->d_step = pow_sqrt(s->damping, REF_STEPS_PER_S * s->dt_sub);
	s->mu = s->viscosity * s->dt_sub;
	/* For the viscous term, a mode's velocity factor d becomes d - 8 mu at the
	 * checkerboard: 4 rate < 1 + d - 8 mu (and d - 8 mu > -1, implied). */
	if (!(4 * s->rate + 8 * s->mu < 1 + s->d_step)) {
		if (s->mu > 0 && 4 * s->rate < 1 + s->d_step)
			return scene_errf(sc, err, TP_EINPUT, "params.viscosity",
				       "%g would blow up because the viscous term takes "
				       "8*viscosity*dt = %.4g per step off the checkerboard's velocity and the "
				       "update needs 4*rate + 8*viscosity*dt < 1 + d (here %.6g >= %.6g); use "
				       "viscosity < %.4g or more substeps",
				       s->viscosity, 8 * s->mu, 4 * s->rate + 8 * s->mu, 1 + s->d_step,
				       (1 + s->d_step - 4 * s->rate) / (8 * s->dt_sub));
		return scene_errf(sc, err, TP_EINPUT, "params.rate",
			       "%g would blow up because the update h' = h + d(h - h_old) "
			       "+ rate*sum(h_j - h) amplifies the checkerboard mode unless 4*rate < 1 + "
			       "d (here 4*rate = %g, 1 + d = %.6g with d = %.6g per step); use rate < %.4g",
			       rate_in, 4 * s->rate, 1 + s->d_step, s->d_step, (1 + s->d_step) / 4);
	}
	/* gamma is per lab step at the lab's rate: the share of what a box holds down given
	 * back per step is 1 - (1 - gamma)^(rate / REF_RATE), so gamma / rate, the box's
	 * stiffness against the wave update (a resting box holds the water where gamma times
	 * its excess balances rate times the pull of the Laplacian), stays the lab's 0.8 at any
	 * rate. Scaled with the step length instead (sqrt(rate / REF_RATE)), boxes came out
	 * softer at larger steps: at rate 0.1 shallow_drag's waves were 12% lower, 25% less
	 * steep; so, within 3% (heights) and 7% (slopes) of the lab rate's. */
	const double gamma_in = s->gamma;
	if (s->rate != REF_RATE)
		s->gamma = 1 - pow_sqrt(1 - s->gamma, s->rate / REF_RATE);
	/* The box solve divides each covered row by 1 - gamma (cluster_setup): a step that
	 * gives back (nearly) all of the virtual height makes it singular, and the boxes
	 * were silently pushed in instead of settled. */
	if (sc->nboxes > 0 && !(1 - s->gamma >= GAMMA_MARGIN))
		return scene_errf(sc, err, TP_EINPUT, "params.gamma",
				  "%g is too stiff for the boxes at this step length (each internal "
				  "step would give back 1 - (1 - gamma)^(rate / %g) = %.9g of what a box "
				  "holds down, which makes the box solve singular); use gamma < %.4g",
				  gamma_in, REF_RATE, s->gamma, 1 - pow(GAMMA_MARGIN, REF_RATE / s->rate));
	s->c_px = sqrt(s->rate) / s->dt_sub;
	s->g_box = s->c_px * s->c_px / s->depth; /* = gravity when given (c^2 = g D) */
	s->mur_k = (sqrt(s->rate) - 1) / (sqrt(s->rate) + 1);
	s->inv_edge = 1 / s->edge;
	return 0;
}

/* The surface's three time levels with their ghost cells, the box coupling's arrays and
 * the rows' spans. -1: out of memory. */
static int alloc_grids(shallow *s)
{
	size_t cells = (size_t)s->w * s->h, ghosted = (size_t)s->S * (s->h + 2);
	for (int i = 0; i < 3; i++)
		if (!(s->buf[i] = calloc(ghosted, sizeof(double))))
			return -1;
	if (!(s->vh = calloc(ghosted, sizeof(double))) || !(s->vh1 = calloc(ghosted, sizeof(double))) || !(s->surf = calloc(cells, sizeof(float))) ||
	    !(s->band = calloc((size_t)s->h, 1)) || !(s->rows = calloc((size_t)s->h, sizeof(int))))
		return -1;
	s->eta = s->buf[0];
	s->old = s->buf[1];
	s->nw = s->buf[2];
	for (int i = 0; i < 3; i++)
		if (!(s->span_mem[i] = malloc(2 * (size_t)s->h * sizeof(int))))
			return -1;
	s->sp_eta = s->span_mem[0];
	s->sp_old = s->span_mem[1];
	s->sp_nw = s->span_mem[2];
	return 0;
}

/* The boxes at time 0 (kinematic ones on their paths, floating ones at rest or where the
 * scene puts them), their coupling arrays, and the water they already displace. */
static int init_boxes(shallow *s, const scene *sc, tp_err *err)
{
	const size_t ghosted = (size_t)s->S * (s->h + 2);
	size_t nb = (size_t)s->nbox;
	if (!(s->box = calloc(nb, sizeof *s->box)) || !(s->pose = calloc(nb, sizeof *s->pose)) ||
	    !(s->prev = calloc(nb, sizeof *s->prev)) || !(s->cl = calloc(nb, sizeof *s->cl)) ||
	    !(s->old_cl = calloc(nb, sizeof *s->old_cl)) ||
	    !(s->old2_cl = calloc(nb, sizeof *s->old2_cl)))
		goto oom;
	double sumw = 0, sumh = 0;
	for (int i = 0; i < s->nbox; i++) {
		const scene_box *sb = &sc->boxes[i];
		box_state *b = &s->box[i];
		char at[48];
		snprintf(at, sizeof at, "boxes[%d]", i);
		if (!(sb->size[0] > 0 && sb->size[1] > 0 && sb->height > 0))
			return scene_errf(sc, err, TP_EINPUT, at, "size and height must be > 0");
		snprintf(at, sizeof at, "boxes[%d].density", i);
		if (sb->floating && !(sb->density > 0))
			return scene_errf(sc, err, TP_EINPUT, at, "a floating box needs density > 0 (got %g)",
					  sb->density);
		if (!sb->floating) {
			int rc = check_path_speed(s, sc, sb, i, err);
			if (rc < 0)
				return rc;
		}
		scene_path_eval(&sb->path, 0.0, &b->x, &b->y, &b->angle);
		b->hw = 0.5 * sb->size[0];
		b->hh = 0.5 * sb->size[1];
		b->height = sb->height * s->hs;
		b->floating = sb->floating;
		b->mass = sb->density * sb->size[0] * sb->size[1] * b->height;
		b->inertia[0] = b->mass * (sb->size[1] * sb->size[1] + b->height * b->height) / 12;
		b->inertia[1] = b->mass * (sb->size[0] * sb->size[0] + b->height * b->height) / 12;
		if (!b->floating)
			b->z = kinematic_z(s, sb);
		else if (s->float_start == FLOAT_START_REST)
			b->z = -fmin(sb->density * b->height, s->depth);
		s->prev[i] = (tp_box_pose){ b->x, b->y, b->angle, 0, 0, b->z, { 0, 0 } };
		double diag = sqrt(sb->size[0] * sb->size[0] + sb->size[1] * sb->size[1]);
		sumw += fmin(ceil(diag + s->edge) + 5, s->w + 2);
		sumh += fmin(ceil(diag + s->edge) + 5, s->h + 2);
	}
	double capd = fmin(sumw * sumh, (double)(s->w + 2) * (s->h + 2));
	s->cap = (size_t)capd;
	s->part_cap = (size_t)(sumh / CG_BLOCK_ROWS) + (size_t)s->nbox + 2;
	/* a cluster is at most as high as its boxes' regions together */
	s->span_cap = 2 * ((size_t)sumh + 2);
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
	    !(s->a_apc = malloc(s->cap * sizeof(double))) ||
	    !(s->a_part = malloc(s->part_cap * sizeof(double))) ||
	    !(s->a_span = malloc(s->span_cap * sizeof(int))))
		goto oom;
	/* Start with the water already displaced by the boxes that sit in it, so a box at
	 * rest in still water leaves it still. */
	if (shallow_couple(s, 1) < 0)
		return tp_errf(err, TP_EIO, "shallow: box regions overflow (internal error)");
	memcpy(s->old, s->eta, ghosted * sizeof(double));
	report_poses(s);
	return 0;
oom:
	return tp_errf(err, TP_EIO, "shallow: out of memory for a %dx%d pool", s->w, s->h);
}

static int shallow_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	shallow *s = priv;
	const scene *sc = ctx->scene;
	s->calm_water = !ctx->every_cell;
	s->w = sc->width;
	s->h = sc->height;
	s->S = s->w + 2;
	s->hs = scene_scale(sc);
	s->boundary = sc->boundary;
	if (s->w < 3 || s->h < 3)
		return scene_errf(sc, err, TP_EINPUT, "size", "shallow needs at least 3x3 cells (got %dx%d)",
				  s->w, s->h);
	int rc = choose_step(s, sc, err);
	if (rc < 0)
		return rc;
	if (alloc_grids(s) < 0)
		return tp_errf(err, TP_EIO, "shallow: out of memory for a %dx%d pool", s->w, s->h);
	s->nbox = sc->nboxes;
	if (s->nbox && (rc = init_boxes(s, sc, err)) < 0)
		return rc;
	fill_ghosts(s, s->eta);
	fill_ghosts(s, s->old);
	spans_scan(s, s->eta, s->sp_eta);
	spans_scan(s, s->old, s->sp_old);
	spans_scan(s, s->nw, s->sp_nw);
	s->v0 = volume_of(s);
	return 0;
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
		int bad;
		if (s->nbox && s->boundary != SCENE_BOUNDARY_ABSORB && s->w * s->h >= PAR_CELLS &&
		    omp_get_max_threads() > 1 && !omp_in_parallel()) {
			bad = wave_and_couple(s);
		} else {
			bad = wave_update(s);
			if (s->nbox && shallow_couple(s, 0) < 0)
				bad = 1;
		}
		fill_ghosts(s, s->nw);
		double *t = s->old;
		s->old = s->eta;
		s->eta = s->nw;
		s->nw = t;
		int *ts = s->sp_old;
		s->sp_old = s->sp_eta;
		s->sp_eta = s->sp_nw;
		s->sp_nw = ts;
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
	out->scale = (float)(1.0 / s->hs);
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

/* The surface is made from the state and changes none of it: a seek may pass frames
 * without it. */
static int shallow_surface_optional(const void *priv)
{
	(void)priv;
	return 1;
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
	/* Heights back in height units (shallow.hs); areas stay in output pixels. */
	double vol = volume_of(s), hs = s->hs;
	out->n = 0;
	tp_stats_add(out, "volume", vol / hs);
	tp_stats_add(out, "dvolume", (vol - s->v0) / hs);
	tp_stats_add(out, "energy", (0.5 * kin / s->rate + 0.5 * pot) / (hs * hs));
	tp_stats_add(out, "max_dev", vmax / hs);
	tp_stats_add(out, "substeps", s->nsub);
	tp_stats_add(out, "speed", s->c_px);
	if (s->nbox) {
		tp_stats_add(out, "masked", s->masked);
		tp_stats_add(out, "cg_iters", s->last_iters);
		tp_stats_add(out, "cg_err", s->last_resid / hs);
		tp_stats_add(out, "cg_unconverged", s->cg_fail);
	}
}

/* Checkpoint section, little-endian (util/wire.h): a magic, w, h, nbox; eta, eta_old and
 * vh (ghost rings included); v0; then per box its state, the stepper's previous pose, and
 * the regions of last step's clusters (where vh must be cleared next step, and the CG's
 * warm start: vh itself); the CG counters. The footprint cache and the preconditioners
 * are rebuilt on the first step after loading, to the same bits. */
static const char SAVE_MAGIC[8] = { 'T', 'P', 'S', 'H', 'A', 'L', '0', '5' };

/* A box_state's persistent fields, as doubles and ints (the region is per step). */
#define BOX_DOUBLES 19

static void box_doubles(box_state *b, double **d)
{
	double *const v[BOX_DOUBLES] = { &b->x, &b->y, &b->angle, &b->vx, &b->vy, &b->z, &b->vz,
					 &b->tilt[0], &b->tilt[1], &b->wt[0], &b->wt[1], &b->hw,
					 &b->hh, &b->height, &b->mass, &b->inertia[0],
					 &b->inertia[1], &b->sn, &b->cs };
	memcpy(d, v, sizeof v);
}

/* Bound of every value a checkpoint gives a box or the water (px, height units, degrees,
 * per second): finite, and far above anything a render reaches. */
#define SHALLOW_CKPT_MAX 1e9

static int pose_io(FILE *f, tp_box_pose *p, int wr)
{
	double *v[8] = { &p->x, &p->y, &p->angle, &p->vx, &p->vy, &p->z, &p->tilt[0], &p->tilt[1] };
	int rc = 0;
	for (int i = 0; i < 8; i++)
		rc |= wr ? tp_wr_f64(f, *v[i])
			 : tp_rd_f64(f, v[i]) || !(fabs(*v[i]) <= SHALLOW_CKPT_MAX);
	return rc;
}

/* A region read from a checkpoint lies where build_clusters() puts them (so that
 * pool_index() stays in the buffers over it). */
static int region_ok(const shallow *s, const cluster *c)
{
	const int wrap = s->boundary == SCENE_BOUNDARY_WRAP;
	return c->w >= 0 && c->h >= 0 && c->w <= s->w + 2 && c->h <= s->h + 2 &&
	       c->x0 >= (wrap ? 0 : -1) && c->y0 >= (wrap ? 0 : -1) && c->x0 < s->w + 1 &&
	       c->y0 < s->h + 1 && c->x0 + c->w <= 2 * s->w && c->y0 + c->h <= 2 * s->h;
}

/* A ghosted buffer b as its rows' calm-water spans sp and the values in them (the rest is
 * +0.0, and the ghost ring is filled again on load): a pool that is partly still costs
 * only what has moved. */
static int wr_spans(FILE *f, const shallow *s, double *b, const int *sp)
{
	int rc = 0;
	for (int y = 0; y < s->h; y++) {
		const int lo = sp[2 * y], hi = sp[2 * y + 1];
		rc |= tp_wr_i32(f, lo) | tp_wr_i32(f, hi);
		if (lo <= hi)
			rc |= tp_wr_f64s(f, row(b, s->S, y) + lo, (size_t)(hi - lo + 1));
	}
	return rc;
}

/* Reads what wr_spans wrote into b and sp; nonzero if it does not fit the pool. */
static int rd_spans(FILE *f, const shallow *s, double *b, int *sp)
{
	memset(b, 0, (size_t)s->S * (s->h + 2) * sizeof *b);
	int rc = 0;
	for (int y = 0; y < s->h && !rc; y++) {
		int lo, hi;
		rc |= tp_rd_int(f, &lo) | tp_rd_int(f, &hi);
		if (rc)
			break;
		if (lo > hi) {
			lo = s->w, hi = -1;
		} else if (lo < 0 || hi >= s->w) {
			return 1;
		} else {
			double *r = row(b, s->S, y);
			rc |= tp_rd_f64s(f, r + lo, (size_t)(hi - lo + 1));
			for (int x = lo; x <= hi && !rc; x++)
				rc |= !(fabs(r[x]) <= SHALLOW_CKPT_MAX);
		}
		sp[2 * y] = lo;
		sp[2 * y + 1] = hi;
	}
	return rc;
}

/* A region's place and size (x0, y0, w, h); read, it is checked with region_ok(). */
static int region_io(FILE *f, const shallow *s, cluster *c, int wr)
{
	if (wr)
		return tp_wr_i32(f, c->x0) | tp_wr_i32(f, c->y0) | tp_wr_i32(f, c->w) |
		       tp_wr_i32(f, c->h);
	memset(c, 0, sizeof *c); /* key 0: the footprint cache is rebuilt */
	int rc = tp_rd_int(f, &c->x0) | tp_rd_int(f, &c->y0) | tp_rd_int(f, &c->w) |
		 tp_rd_int(f, &c->h);
	return rc | !region_ok(s, c);
}

/* The values of ghosted buffer b over region c, row by row (0 for its cells outside the
 * pool, which are not read back). */
static int region_values_io(FILE *f, const shallow *s, const cluster *c, double *b, int wr)
{
	int rc = 0;
	for (int j = 0; j < c->h && !rc; j++)
		for (int k = 0; k < c->w && !rc; k++) {
			const long p = pool_index(s, c->x0 + k, c->y0 + j);
			double v = p >= 0 ? b[p] : 0;
			rc |= wr ? tp_wr_f64(f, v) : tp_rd_f64(f, &v) || !(fabs(v) <= SHALLOW_CKPT_MAX);
			if (!wr && p >= 0)
				b[p] = v;
		}
	return rc;
}

static int shallow_save(const void *priv, FILE *f, tp_err *err)
{
	/* pose_io and box_doubles take non-const pointers for the read side; nothing is
	 * written to the state here */
	shallow *s = (shallow *)(uintptr_t)priv;
	int rc = tp_wr_bytes(f, SAVE_MAGIC, sizeof SAVE_MAGIC);
	rc |= tp_wr_i32(f, s->w) | tp_wr_i32(f, s->h) | tp_wr_i32(f, s->nbox);
	rc |= wr_spans(f, s, s->eta, s->sp_eta) | wr_spans(f, s, s->old, s->sp_old);
	rc |= tp_wr_f64(f, s->v0);
	for (int i = 0; i < s->nbox; i++) {
		double *d[BOX_DOUBLES];
		box_doubles(&s->box[i], d);
		for (int k = 0; k < BOX_DOUBLES; k++)
			rc |= tp_wr_f64(f, *d[k]);
		rc |= tp_wr_i32(f, s->box[i].floating);
		rc |= pose_io(f, &s->prev[i], 1);
	}
	rc |= tp_wr_i32(f, s->nold);
	for (int i = 0; i < s->nold; i++)
		rc |= region_io(f, s, &s->old_cl[i], 1);
	/* vh, nonzero only in last step's regions: its values there */
	for (int i = 0; i < s->nold; i++)
		rc |= region_values_io(f, s, &s->old_cl[i], s->vh, 1);
	/* vh1, nonzero only in the step before's regions: those regions and its values there */
	rc |= tp_wr_i32(f, s->nold2);
	for (int i = 0; i < s->nold2; i++)
		rc |= region_io(f, s, &s->old2_cl[i], 1) |
		      region_values_io(f, s, &s->old2_cl[i], s->vh1, 1);
	rc |= tp_wr_i32(f, s->last_iters) | tp_wr_i32(f, s->masked) | tp_wr_i32(f, s->cg_fail);
	rc |= tp_wr_f64(f, s->last_resid);
	return rc ? tp_errf(err, TP_EIO, "shallow: cannot write the checkpoint") : 0;
}

static int shallow_load(void *priv, FILE *f, tp_err *err)
{
	shallow *s = priv;
	char magic[sizeof SAVE_MAGIC];
	int w, h, nbox, nold;
	const size_t ghosted = (size_t)s->S * (s->h + 2);
	if (tp_rd_bytes(f, magic, sizeof magic) || tp_rd_int(f, &w) || tp_rd_int(f, &h) ||
	    tp_rd_int(f, &nbox))
		return tp_errf(err, TP_EIO, "shallow: cannot read the checkpoint");
	if (memcmp(magic, SAVE_MAGIC, sizeof magic) || w != s->w || h != s->h || nbox != s->nbox)
		return tp_errf(err, TP_EINPUT, "shallow: the checkpoint is for another scene");
	int rc = rd_spans(f, s, s->eta, s->sp_eta) | rd_spans(f, s, s->old, s->sp_old);
	/* v0, the volume at rest plus what drops added: within what bounded heights give */
	rc |= tp_rd_f64(f, &s->v0) ||
	      !(fabs(s->v0) <= (s->depth + SHALLOW_CKPT_MAX) * ((double)s->w + 2) * (s->h + 2));
	if (rc)
		return tp_errf(err, TP_EINPUT,
			       "shallow: truncated or damaged checkpoint (water heights or volume "
			       "not finite or out of range)");
	for (int i = 0; i < s->nbox && !rc; i++) {
		box_state in = s->box[i]; /* read into a copy, kept only if valid */
		double *d[BOX_DOUBLES];
		box_doubles(&in, d);
		for (int k = 0; k < BOX_DOUBLES; k++)
			rc |= tp_rd_f64(f, d[k]) || !(fabs(*d[k]) <= SHALLOW_CKPT_MAX);
		rc |= tp_rd_int(f, &in.floating) | pose_io(f, &s->prev[i], 0);
		/* the box's size, mass and kind are the scene's: a checkpoint may not change
		 * them (fuzzing: damaged values made NaNs) */
		const box_state *b = &s->box[i];
		if (in.hw != b->hw || in.hh != b->hh || in.height != b->height ||
		    in.mass != b->mass || in.inertia[0] != b->inertia[0] ||
		    in.inertia[1] != b->inertia[1] || in.floating != b->floating)
			rc = -1;
		else
			s->box[i] = in;
	}
	rc |= tp_rd_int(f, &nold);
	if (rc || nold < 0 || nold > s->nbox)
		return tp_errf(err, TP_EINPUT, "shallow: truncated or damaged checkpoint");
	s->nold = nold;
	for (int i = 0; i < nold && !rc; i++)
		rc |= region_io(f, s, &s->old_cl[i], 0);
	memset(s->vh, 0, ghosted * sizeof *s->vh);
	for (int i = 0; i < nold && !rc; i++)
		rc |= region_values_io(f, s, &s->old_cl[i], s->vh, 0);
	int nold2 = -1;
	rc |= tp_rd_int(f, &nold2);
	if (rc || nold2 < 0 || nold2 > s->nbox)
		return tp_errf(err, TP_EINPUT, "shallow: truncated or damaged checkpoint");
	memset(s->vh1, 0, ghosted * sizeof *s->vh1);
	s->nold2 = nold2;
	for (int i = 0; i < nold2 && !rc; i++) {
		rc |= region_io(f, s, &s->old2_cl[i], 0);
		if (!rc)
			rc |= region_values_io(f, s, &s->old2_cl[i], s->vh1, 0);
	}
	rc |= tp_rd_int(f, &s->last_iters) | tp_rd_int(f, &s->masked) | tp_rd_int(f, &s->cg_fail);
	rc |= tp_rd_f64(f, &s->last_resid);
	/* the CG's statistics: iterations up to its cap (the resting solve's, or cg_iters),
	 * cells under at most every box's region, a count of failed solves that cannot
	 * overflow as it grows */
	const int iters_cap = s->cg_iters > SETTLE_CG_ITERS ? s->cg_iters : SETTLE_CG_ITERS;
	rc |= s->last_iters < 0 || s->last_iters > iters_cap || s->masked < 0 ||
	      (double)s->masked > (double)s->nbox * (s->w + 2) * (s->h + 2) || s->cg_fail < 0 ||
	      s->cg_fail > INT_MAX / 2 || !(s->last_resid >= 0 && s->last_resid <= SHALLOW_CKPT_MAX);
	if (rc)
		return tp_errf(err, TP_EINPUT,
			       "shallow: truncated or damaged checkpoint (flow or solver counts out of "
			       "range)");
	fill_ghosts(s, s->eta);
	fill_ghosts(s, s->old);
	spans_scan(s, s->nw, s->sp_nw);
	report_poses(s);
	return 0;
}

const tp_solver tp_solver_shallow = {
	.kind.name = "shallow",
	.kind.description = "GAMES103 shallow waves (seed 003): volume-preserving drops and rain, "
			    "boxes dragged or floating, coupled through conjugate gradient",
	.kind.priv_size = sizeof(shallow),
	.kind.options = shallow_options,
	.kind.caps = TP_SOLVER_HEIGHTFIELD | TP_SOLVER_FLOATING | TP_SOLVER_BOX_DRAFT,
	.init = shallow_init,
	.uninit = shallow_uninit,
	.drop = shallow_drop,
	.step = shallow_step,
	.surface = shallow_surface,
	.stats = shallow_stats,
	.save = shallow_save,
	.load = shallow_load,
	.surface_optional = shallow_surface_optional,
};
