/*
 * sph_iisph.c - the sph solver's implicit model (params.model "implicit", opt-in): implicit
 * incompressible SPH, Ihmsen, Cornelis, Solenthaler, Horvath & Teschner 2014 ("Implicit
 * incompressible SPH", IEEE TVCG 20(3)), its pressure Poisson equation solved by relaxed
 * Jacobi until the mean density residual is under `tolerance` (docs/sph.md).
 *
 * Units and kernel: unit-mass particles, W(r) = q^2, q = 1 - r/R (seed 004's kernel, not
 * normalised: densities are kernel sums, here with the particle itself, so the rest density
 * rho0 is the lattice sum + 1 and the normalisation cancels out of every gradient below).
 * With r_ij = x_j - x_i, r = |r_ij|:
 *     grad_i W_ij = gk (q / r) r_ij                                       (points to j)
 * with gk = 2 / R (the derivative of q^2) scaled so that the resting lattice gives a linear
 * field's gradient exactly (sph.c: it is 3% more).
 * Tank walls are mirrors (cluster_sums): the neighbours' images count as neighbours
 * (free slip, but no slip in the viscosity).
 * Floating boxes are Akinci et al. 2012's boundary in its continuum limit (sph_body.c): the
 * fluid missing beyond a face at distance d adds rho_w(d) to the density and its gradient
 * G_b, and pushes with the particle's own pressure.
 *
 * One substep of length dt (sums over the fluid neighbours j and their images,
 * G_f = sum_j grad W_ij, v_b a body's velocity at the particle):
 *     rho_i    = sum_j W_ij + rho_b,i
 *     v_adv,i  = v_i + dt (g + frame terms) + dt mu sum_j q (v_j - v_i) / rho0
 *     div_i    = sum_j (v_adv,i - v_adv,j) . grad W_ij + (v_adv,i - v_b) . G_b
 *     s_i      = 0.1 (rho_t,i - rho_i) - dt div_i                           (II_DRIFT)
 *     a_p,i    = -1/rho0^2 [ p_i (G_f + G_b) + sum_j p_j grad W_ij ]
 *     (A p)_i  = dt^2 [ a_p,i . (G_f + G_b) - sum_j a_p,j . grad W_ij ]   (= rho_pred - rho_adv)
 *     a_ii     = -dt^2 / rho0^2 [ |G_f + G_b|^2 + sum_j |grad W_ij|^2 ]
 *     p_i     <- max(0, p_i + omega (s_i - (A p)_i) / a_ii)                (omega = 0.3)
 * (rho_t,i = rho0 in the bulk, less within R of the free surface: sph_iisph_surface)
 * until the mean residual |(A p)_i - s_i| / rho0 (only compression where p = 0) is under
 * the tolerance (at least II_MIN_ITERS sweeps), then v = v_adv + dt a_p, x += dt v, and the
 * hard containment of the relaxed model (obstacles and tank). p >= 0: the water never
 * pulls (no tension at its surface). The solve starts from the last substep's pressure.
 *
 * Every neighbour pass gathers (particle i writes only its own outputs) over sph_sort's
 * clusters, lane by lane, so the bits do not depend on the thread count; the sums over
 * all particles (the solve's error) run over fixed chunks in index order.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"

/* Pairs closer than this (px^2) have no direction. */
#define II_EPS2 1e-12f
/* Jacobi relaxation: Ihmsen et al.'s 0.5 diverged beside the walls (the diagonal leaves out
 * a particle's own mirror image); 0.3 converges. */
#define II_OMEGA 0.3f
/* Fewest sweeps a substep: two left a resting column boiling (the residual is small long
 * before the pressure deep in the water has settled); five keep it still. */
#define II_MIN_ITERS 5
/* How much of the density error left by earlier substeps one substep corrects (the
 * rest of the source is the velocity divergence): correcting all of it at once turns
 * every small error into a kick of error / dt, which kept a resting column bouncing
 * (its kinetic energy grew); a tenth lets it settle. */
#define II_DRIFT 0.1f

/* What a neighbour pass sums (per lane, over j). */
enum { P_DENSITY, P_DOT_VADV, P_GRAD_P, P_DOT_AP };

/* One cluster's sums. P_DENSITY: o0 = sum W, o1,o2 = G_f, o3 = sum |grad W|^2,
 * o4,o5 = sum q (v_j - v_i). P_DOT_VADV / P_DOT_AP: o0 = sum_j f_j . grad W_ij with f
 * (vax, vay) or (apx, apy). P_GRAD_P: o1,o2 = sum_j p_j grad W_ij. */
typedef float lanes6[6][SPH_LANES];

/* The terms of one neighbour (or image) at (xj, yj) carrying (fxj, fyj), lane by lane;
 * gw goes to the cache gc, if any, at entry e (then e moves on). */
#define LANE_TERMS(XJ, YJ, FXJ, FYJ)                                                               \
	do {                                                                                       \
		const float xj_ = (XJ), yj_ = (YJ), fxm_ = (FXJ), fym_ = (FYJ);                    \
		float *restrict ge_ = gc ? gc + e : tmp;                                           \
		e += SPH_LANES;                                                                    \
		_Pragma("omp simd") for (int l = 0; l < SPH_LANES; l++)                            \
		{                                                                                  \
			const float dx = xj_ - xi[l], dy = yj_ - yi[l], r2 = dx * dx + dy * dy;    \
			const float r = sqrtf(r2 > II_EPS2 ? r2 : II_EPS2);                        \
			float q = 1.0f - r * invR;                                                 \
			q = q > 0.0f ? q : 0.0f;                                                   \
			const float gw = k2 * q / r; /* grad W_ij = gw r_ij */                     \
			ge_[l] = gw;                                                               \
			if (mode == P_DENSITY) {                                                   \
				a0[l] += q * q;                                                    \
				a1[l] += gw * dx;                                                  \
				a2[l] += gw * dy;                                                  \
				a3[l] += gw * gw * r2;                                             \
				a4[l] += q * (fxm_ - fxi[l]);                                      \
				a5[l] += q * (fym_ - fyi[l]);                                      \
			} else if (mode == P_GRAD_P) {                                             \
				a1[l] += fxm_ * gw * dx;                                           \
				a2[l] += fxm_ * gw * dy;                                           \
			} else {                                                                   \
				a0[l] += gw * (fxm_ * dx + fym_ * dy);                             \
			}                                                                          \
		}                                                                                  \
	} while (0)

/* TERMS for candidate j at (xj, yj) with (fxj, fyj) and then its images in the walls the
 * cluster sees (wl, wr, wt, wb), in one fixed order: the cache's. */
#define WITH_IMAGES(TERMS)                                                                         \
	do {                                                                                       \
		TERMS(xj, yj, fxj, fyj);                                                           \
		if (!(wl | wr | wt | wb))                                                          \
			break;                                                                     \
		const float fxm = flip * fxj, fym = flip * fyj;                                    \
		const float fxt = tflip * fxj, fyt = tflip * fyj;                                  \
		if (wl)                                                                            \
			TERMS(-xj, yj, fxm, fyt);                                                  \
		if (wr)                                                                            \
			TERMS(2 * W - xj, yj, fxm, fyt);                                           \
		if (wt)                                                                            \
			TERMS(xj, -yj, fxt, fym);                                                  \
		if (wb)                                                                            \
			TERMS(xj, 2 * H - yj, fxt, fym);                                           \
		if (wl && wt)                                                                      \
			TERMS(-xj, -yj, fxm, fym);                                                 \
		if (wl && wb)                                                                      \
			TERMS(-xj, 2 * H - yj, fxm, fym);                                          \
		if (wr && wt)                                                                      \
			TERMS(2 * W - xj, -yj, fxm, fym);                                          \
		if (wr && wb)                                                                      \
			TERMS(2 * W - xj, 2 * H - yj, fxm, fym);                                   \
	} while (0)

/* The walls cluster c's particles (lanes xi, yi) are within R of: 0 or 1 each. */
static inline void cluster_walls(const sph *s, const sph_cluster *c, int *wl, int *wr, int *wt,
				 int *wb)
{
	float x0 = s->W, x1 = 0, y0 = s->H, y1 = 0;
	for (int l = 0; l < c->m; l++) {
		const float xl = s->x[c->i0 + l], yl = s->y[c->i0 + l];
		x0 = xl < x0 ? xl : x0; /* (as fminf and fmaxf: positions are never NaN here) */
		x1 = xl > x1 ? xl : x1;
		y0 = yl < y0 ? yl : y0;
		y1 = yl > y1 ? yl : y1;
	}
	*wl = x0 < s->R;
	*wr = x1 > s->W - s->R;
	*wt = y0 < s->R;
	*wb = y1 > s->H - s->R;
}

/*
 * The tank walls are mirrors: a particle within R of a wall also sees the images of its
 * neighbours reflected in it (and in both walls at a corner), with their density, their
 * pressure and their velocity and acceleration mirrored (free slip), except in the
 * viscosity, which sees the images' velocity reversed (no slip: a wall holds the water
 * beside it back, as a real tank's does: it brought the dam break's front 4-8 points of
 * Martin and Moyce closer, docs/sph.md). The water beyond a wall is then exactly the water
 * before it, so a wall holds any pressure the water has without pushing or pulling a
 * particle along it, and no table is needed. An image is never nearer than its original,
 * so a particle's candidates hold every image it sees.
 */
SPH_CLONES
static void cluster_sums(const sph *s, const sph_cluster *c, int mode, float *restrict gc, lanes6 o)
{
	const float *restrict x = s->x, *restrict y = s->y;
	const float invR = s->invR, k2 = s->gk, W = s->W, H = s->H;
	const float *fx = s->vx, *fy = s->vy;
	if (mode == P_DOT_VADV)
		fx = s->vax, fy = s->vay;
	else if (mode == P_DOT_AP)
		fx = s->apx, fy = s->apy;
	else if (mode == P_GRAD_P)
		fx = s->p, fy = s->p;
	const float flip = mode == P_GRAD_P ? 1.0f : -1.0f; /* a vector's normal part flips */
	/* ... and in the viscosity's velocities its tangential part too: no slip */
	const float tflip = mode == P_DENSITY ? -1.0f : 1.0f;
	float xi[SPH_LANES], yi[SPH_LANES], fxi[SPH_LANES], fyi[SPH_LANES];
	float a0[SPH_LANES] = {0}, a1[SPH_LANES] = {0}, a2[SPH_LANES] = {0};
	float a3[SPH_LANES] = {0}, a4[SPH_LANES] = {0}, a5[SPH_LANES] = {0};
	for (int l = 0; l < SPH_LANES; l++) {
		xi[l] = x[c->i0 + l];
		yi[l] = y[c->i0 + l];
		fxi[l] = fx[c->i0 + l];
		fyi[l] = fy[c->i0 + l];
	}
	/* the walls this cluster sees: 0 none, else the mirror's offset (x' = m - x) */
	int wl, wr, wt, wb;
	cluster_walls(s, c, &wl, &wr, &wt, &wb);
	float tmp[SPH_LANES]; /* gw's sink without a cache */
	int64_t e = 0;        /* the cache's entry */
	for (int g = 0; g < c->n; g++)
		for (int j = c->a[g]; j < c->b[g]; j++) {
			const float xj = x[j], yj = y[j], fxj = fx[j], fyj = fy[j];
			WITH_IMAGES(LANE_TERMS);
		}
	for (int l = 0; l < SPH_LANES; l++) {
		o[0][l] = a0[l];
		o[1][l] = a1[l];
		o[2][l] = a2[l];
		o[3][l] = a3[l];
		o[4][l] = a4[l];
		o[5][l] = a5[l];
	}
}

/* cluster_sums for the solve's passes (P_DOT_VADV, P_GRAD_P, P_DOT_AP) from the cached gw
 * (the density pass's, for the same positions: the same floats, without the square root
 * and the division), in eight-lane vectors whose sums stay in registers: lane by lane the
 * same operations in the same order, so the same bits. */
typedef float v8f __attribute__((vector_size(SPH_LANES * sizeof(float))));

#define CACHED_GRAD_P(XJ, YJ, FXJ, FYJ)                                                            \
	do {                                                                                       \
		v8f gw;                                                                            \
		memcpy(&gw, gc + e, sizeof gw);                                                    \
		e += SPH_LANES;                                                                    \
		const v8f dx = (XJ) - xi, dy = (YJ) - yi, pg = (FXJ) * gw;                        \
		(void)(FYJ);                                                                       \
		a1 += pg * dx;                                                                     \
		a2 += pg * dy;                                                                     \
	} while (0)
#define CACHED_DOT(XJ, YJ, FXJ, FYJ)                                                               \
	do {                                                                                       \
		v8f gw;                                                                            \
		memcpy(&gw, gc + e, sizeof gw);                                                    \
		e += SPH_LANES;                                                                    \
		const v8f dx = (XJ) - xi, dy = (YJ) - yi;                                          \
		a0 += gw * ((FXJ) * dx + (FYJ) * dy);                                              \
	} while (0)

SPH_CLONES
static void cluster_sums_cached(const sph *s, const sph_cluster *c, int mode,
				const float *restrict gc, lanes6 o)
{
	const float *restrict x = s->x, *restrict y = s->y;
	const float W = s->W, H = s->H;
	const float *fx = mode == P_DOT_VADV ? s->vax : mode == P_DOT_AP ? s->apx : s->p;
	const float *fy = mode == P_DOT_VADV ? s->vay : mode == P_DOT_AP ? s->apy : s->p;
	const float flip = mode == P_GRAD_P ? 1.0f : -1.0f; /* a vector's normal part flips */
	const float tflip = 1.0f; /* (the viscosity is the density pass's) */
	v8f xi, yi, a0 = {0}, a1 = {0}, a2 = {0};
	memcpy(&xi, x + c->i0, sizeof xi);
	memcpy(&yi, y + c->i0, sizeof yi);
	int wl, wr, wt, wb;
	cluster_walls(s, c, &wl, &wr, &wt, &wb);
	int64_t e = 0;
	for (int g = 0; g < c->n; g++)
		for (int j = c->a[g]; j < c->b[g]; j++) {
			const float xj = x[j], yj = y[j], fxj = fx[j], fyj = fy[j];
			if (mode == P_GRAD_P)
				WITH_IMAGES(CACHED_GRAD_P);
			else
				WITH_IMAGES(CACHED_DOT);
		}
	memcpy(o[0], &a0, sizeof a0);
	memcpy(o[1], &a1, sizeof a1);
	memcpy(o[2], &a2, sizeof a2);
}

/*
 * The free surface's rest densities. A particle within R of the free surface misses the
 * water above it: in a lattice at rest, row m below the surface has the density rho_m < rho0
 * and |G_f| = g_m > 0 (both from the lattice sums below). Asking such a particle for rho0
 * (or, as p >= 0 does, for nothing at all) lets the top row sink into the hollows of the
 * one below: half a row of the water's depth is lost (docs/sph.md, Volume). So the solve
 * asks each particle for the density of the lattice row its kernel is cut like:
 *     rho_t,i = rho0 f(|G_f,i + G_b,i|),   f piecewise linear through (g_m, rho_m / rho_inf)
 * and rho_t = rho0 f(g_0) for a particle more exposed than the top row.
 */
void sph_iisph_surface(sph *s)
{
	const double sp = s->spacing, R = s->R, dy = sp * sqrt(3.0) / 2, gk = s->gk;
	const int nx = (int)(R / sp) + 2, ny = (int)(R / dy) + 2;
	double rho[SPH_SURF_ROWS + 1], g[SPH_SURF_ROWS + 1];
	int rows = ny + 1 < SPH_SURF_ROWS ? ny + 1 : SPH_SURF_ROWS;
	for (int m = 0; m <= rows; m++) {
		/* particle at row m (x offset of its row), lattice rows j >= 0 */
		double d = 0, gy = 0;
		const double xm = 0.5 * sp * (m & 1), ym = dy * m;
		for (int j = 0; j <= m + ny; j++)
			for (int i = -nx - 1; i <= nx + 1; i++) {
				const double px = sp * (i + 0.5 * (j & 1)) - xm, py = dy * j - ym;
				const double r = sqrt(px * px + py * py);
				if (r >= R)
					continue;
				const double q = 1 - r / R;
				d += q * q;
				if (r > 0)
					gy += gk * q / r * py;
			}
		rho[m] = d;
		g[m] = fabs(gy);
	}
	/* the last row's kernel is whole: its density is the bulk's; the rows kept are those
	 * the surface cuts (g > 0) */
	int cut = 0;
	for (int m = 0; m < rows && g[m] > 1e-6 * g[0]; m++, cut++) {
		s->sg[m] = (float)g[m];
		s->sf[m] = (float)(rho[m] / rho[rows]);
	}
	s->nsurf = cut;
}

/* rho0 f(g): the rest density of a particle whose neighbours' gradients sum to g. Below
 * half the last cut row's g, a particle counts as whole (f = 1): the bulk's own disorder
 * gives it a small g that must not lower its rest density. */
static inline float surf_rest(const sph *s, float g)
{
	if (s->nsurf == 0)
		return s->rho0;
	if (g >= s->sg[0])
		return s->rho0 * s->sf[0];
	int m = 1;
	for (; m < s->nsurf; m++)
		if (g >= s->sg[m]) {
			const float t = (g - s->sg[m]) / (s->sg[m - 1] - s->sg[m]);
			return s->rho0 * (s->sf[m] + t * (s->sf[m - 1] - s->sf[m]));
		}
	const float g0 = 0.5f * s->sg[m - 1];
	if (g <= g0)
		return s->rho0;
	return s->rho0 * (1 + (g - g0) / (s->sg[m - 1] - g0) * (s->sf[m - 1] - 1));
}

typedef struct pass_ctx {
	const sph_sub *c;
	int mode;
	float dt;
} pass_ctx;

/* After each pass, per particle [i0, i1): what the pass's sums give. */
static void finish(sph *s, const pass_ctx *pc, int i0, int i1)
{
	const float dt = pc->dt, r0 = s->rho0, ir02 = 1.0f / (r0 * r0);
	const sph_sub *c = pc->c;
	switch (pc->mode) {
	case P_DENSITY: {
		/* ghosts, then v_adv (gravity, frame, viscosity) */
		for (int i = i0; i < i1; i++) {
			s->gbx[i] = 0;
			s->gby[i] = 0;
			s->vbg[i] = 0;
		}
		if (c && s->nfloat)
			sph_bodies_ghosts(s, c, i0, i1);
		const sph_k k = sph_consts(s);
		const float mu = (float)s->viscosity / r0;
		for (int i = i0; i < i1; i++) {
			float ax = c ? c->ax : 0, ay = c ? c->ay : 0;
			if (c && c->rot) {
				const float rx = s->x[i] - c->hw, ry = s->y[i] - c->hh, om = c->om;
				ax += om * om * rx + 2.0f * om * s->vy[i] + c->al * ry;
				ay += om * om * ry - 2.0f * om * s->vx[i] - c->al * rx;
			}
			float ux = s->vx[i] + dt * (ax + mu * s->apx[i]);
			float uy = s->vy[i] + dt * (ay + mu * s->apy[i]);
			cap_speed(&k, &ux, &uy);
			s->vax[i] = ux;
			s->vay[i] = uy;
		}
		break;
	}
	case P_DOT_VADV:
		/* rho_adv, the source and the diagonal */
		for (int i = i0; i < i1; i++) {
			/* G_f + G_b */
			const float gx = s->gfx[i] + s->gbx[i], gy = s->gfy[i] + s->gby[i];
			const float g2 = gx * gx + gy * gy;
			const float div = s->vax[i] * gx + s->vay[i] * gy - s->perr[i] - s->vbg[i];
			const float rt = surf_rest(s, sqrtf(g2));
			s->src[i] = II_DRIFT * (rt - s->rho[i]) - dt * div;
			s->aii[i] = -dt * dt * ir02 * (g2 + s->gg[i]);
		}
		break;
	case P_GRAD_P:
		for (int i = i0; i < i1; i++) {
			const float p = s->p[i];
			s->apx[i] = -ir02 * (p * (s->gfx[i] + s->gbx[i]) + s->apx[i]);
			s->apy[i] = -ir02 * (p * (s->gfy[i] + s->gby[i]) + s->apy[i]);
		}
		break;
	case P_DOT_AP:
		/* the Jacobi update, and the predicted compression of the pressure used */
		for (int i = i0; i < i1; i++) {
			const float Ap = dt * dt *
					 (s->apx[i] * (s->gfx[i] + s->gbx[i]) +
					  s->apy[i] * (s->gfy[i] + s->gby[i]) - s->perr[i]);
			const float e = Ap - s->src[i];
			const float a = s->aii[i];
			float p = s->p[i];
			/* the residual: where the water pushes (p > 0) either way, else compression
			 */
			s->perr[i] = (p > 0 ? fabsf(e) : e > 0 ? e : 0.0f) / r0;
			if (a < 0)
				p += II_OMEGA * (s->src[i] - Ap) / a;
			else
				p = 0; /* an isolated particle */
			s->ptmp[i] = p > 0 ? p : 0.0f;
		}
		break;
	}
}

#define II_CACHE_MAX 1024

int sph_iisph_cache = 1;

/* Lays out the substep's cache of gw (sph.gwc): each cluster's candidates times the
 * images it sees (itself and up to eight), SPH_LANES floats each. Returns 0, or -1 if it
 * cannot be had (the passes then compute gw each time: the same bits, slower). */
static int gw_plan(sph *s)
{
	const int nc = s->nclusters;
	if (s->gwoff_cap < nc + 1) {
		int64_t *o = realloc(s->gwoff, (size_t)(nc + 1) * sizeof *o);
		if (!o)
			return -1;
		s->gwoff = o;
		s->gwoff_cap = nc + 1;
	}
	int64_t total = 0;
	for (int k = 0; k < nc; k++) {
		const sph_cluster *c = &s->clusters[k];
		int wl, wr, wt, wb;
		cluster_walls(s, c, &wl, &wr, &wt, &wb);
		const int64_t nimg = 1 + wl + wr + wt + wb + (wl & wt) + (wl & wb) + (wr & wt) +
				     (wr & wb);
		int64_t cand = 0;
		for (int g = 0; g < c->n; g++)
			cand += c->b[g] - c->a[g];
		s->gwoff[k] = total;
		total += cand * nimg * SPH_LANES;
	}
	s->gwoff[nc] = total;
	/* Typically 50-100 floats a particle; a collapse that packs the water into a few cells
	 * would ask for n^2: beyond II_CACHE_MAX floats a particle, no cache. */
	if (total > (int64_t)II_CACHE_MAX * s->n)
		return -1;
	if (total > s->gwc_cap) {
		const int64_t cap = total + total / 4;
		float *g = realloc(s->gwc, (size_t)cap * sizeof *g);
		if (!g)
			return -1;
		s->gwc = g;
		s->gwc_cap = cap;
	}
	return 0;
}

/* One neighbour pass of the given mode over all clusters, each particle's sums stored
 * where its finishing step reads them, then the finishing step. With `cache` (gw_plan
 * laid it out for these positions) the density pass writes gw and the others read it. */
static void pass(sph *s, const sph_sub *c, int mode, float dt, int cache)
{
	const pass_ctx pc = {.c = c, .mode = mode, .dt = dt};
#pragma omp parallel if (s->n >= SPH_PAR_MIN)
	{
		int k0, k1;
		sph_thread_clusters(s, &k0, &k1);
		lanes6 o;
		for (int k = k0; k < k1; k++) {
			const sph_cluster *cl = &s->clusters[k];
			if (cache && mode != P_DENSITY)
				cluster_sums_cached(s, cl, mode, s->gwc + s->gwoff[k], o);
			else
				cluster_sums(s, cl, mode, cache ? s->gwc + s->gwoff[k] : NULL, o);
			for (int l = 0; l < cl->m; l++) {
				const int i = cl->i0 + l;
				switch (mode) {
				case P_DENSITY:
					s->rho[i] = o[0][l];
					s->gfx[i] = o[1][l];
					s->gfy[i] = o[2][l];
					s->gg[i] = o[3][l];
					s->apx[i] = o[4][l]; /* viscosity sums, read by finish */
					s->apy[i] = o[5][l];
					break;
				case P_GRAD_P:
					s->apx[i] = o[1][l];
					s->apy[i] = o[2][l];
					break;
				default:
					s->perr[i] = o[0][l]; /* the dot sum, read by finish */
					break;
				}
			}
		}
		if (k1 > k0) {
			const int i0 = s->clusters[k0].i0;
			const int i1 = s->clusters[k1 - 1].i0 + s->clusters[k1 - 1].m;
			finish(s, &pc, i0, i1);
		}
	}
}

/* Mean of perr over the particles: fixed chunks, summed in index order. */
static double mean_err(sph *s)
{
	const int n = s->n, nch = (n + SPH_CHUNK - 1) / SPH_CHUNK;
#pragma omp parallel for schedule(static) if (n >= SPH_PAR_MIN)
	for (int ch = 0; ch < nch; ch++) {
		const int a = ch * SPH_CHUNK, b = imin(a + SPH_CHUNK, n);
		double e = 0;
		for (int i = a; i < b; i++)
			e += s->perr[i];
		s->part[4 * ch] = e;
	}
	double e = 0;
	for (int ch = 0; ch < nch; ch++)
		e += s->part[4 * ch];
	return n ? e / n : 0;
}

void sph_iisph_density(sph *s)
{
	pass(s, NULL, P_DENSITY, 0, 0);
}

/* The last step: velocities, positions, containment, and the push-outs kept for the
 * floating boxes' contact impulses (as the relaxed model's, sph_bodies_contacts). */
static float advance(sph *s, const sph_sub *c, int i0, int i1)
{
	const float dt = c->dt;
	const sph_k k = sph_consts(s);
	const int fl = s->nfloat != 0;
	float vm2 = 0;
	for (int i = i0; i < i1; i++) {
		float ux = s->vax[i] + dt * s->apx[i], uy = s->vay[i] + dt * s->apy[i];
		cap_speed(&k, &ux, &uy);
		float nx = s->x[i] + dt * ux, ny = s->y[i] + dt * uy;
		const float bx = ux, by = uy;
		sph_collide(s, c, s->x[i], s->y[i], &nx, &ny, &ux, &uy);
		if (fl && (ux != bx || uy != by)) {
			/* the velocity the containment gave, as a displacement dv dt^2 / dt */
			s->cdx[i] = (ux - bx) * dt;
			s->cdy[i] = (uy - by) * dt;
			__atomic_store_n(&s->cflag[i / SPH_CONTACT_BLOCK], (uint8_t)1,
					 __ATOMIC_RELAXED);
		}
		s->x2[i] = nx;
		s->y2[i] = ny;
		s->vx2[i] = ux;
		s->vy2[i] = uy;
		const float v2 = ux * ux + uy * uy;
		vm2 = v2 > vm2 ? v2 : vm2;
	}
	return vm2;
}

double sph_iisph_substep(sph *s, const sph_sub *c)
{
	const float dt = c->dt;
	sph_sort(s, NULL);
	/* the last pressures follow their particles into the new order (first guess) */
	for (int k = 0; k < s->n; k++)
		s->ptmp[k] = s->p[s->perm[k]];
	float *t = s->p;
	s->p = s->ptmp;
	s->ptmp = t;

	const int cache = sph_iisph_cache && gw_plan(s) == 0;
	pass(s, c, P_DENSITY, dt, cache);
	pass(s, c, P_DOT_VADV, dt, cache);
	int it = 0;
	double err = INFINITY;
	for (;;) {
		pass(s, c, P_GRAD_P, dt, cache);
		if ((it >= II_MIN_ITERS && err <= s->tolerance) || it >= s->max_iterations)
			break;
		if (s->cancel && *s->cancel)
			return 0; /* the step is abandoned (sph_step checks the flag) */
		/* perr holds the dot sums here; finish turns them into errors */
		pass(s, c, P_DOT_AP, dt, cache);
		t = s->p;
		s->p = s->ptmp;
		s->ptmp = t;
		err = mean_err(s);
		it++;
	}
	s->iters_last = it;
	s->iters_sum += it;
	if (s->nfloat)
		sph_bodies_pressure(s, c);
	float vm2 = 0;
#pragma omp parallel reduction(max : vm2) if (s->n >= SPH_PAR_MIN)
	{
		const int nt = omp_get_num_threads(), th = omp_get_thread_num();
		const int i0 = (int)((long)s->n * th / nt), i1 = (int)((long)s->n * (th + 1) / nt);
		const float v = advance(s, c, i0, i1);
		vm2 = v > vm2 ? v : vm2;
	}
	swap_state(s);
	if (s->nfloat)
		sph_bodies_contacts(s, c);
	return sqrt((double)vm2);
}
