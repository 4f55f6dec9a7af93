/*
 * sph_kern.c - the sph solver's neighbour passes (density, relaxation, the seed model's
 * forces) and its obstacle collisions.
 *
 * Every pass gathers: particle i reads its neighbours and writes only its own outputs,
 * so results do not depend on how OpenMP splits the particles. Neighbours are found on a
 * uniform grid (sph_grid.c) rebuilt every substep by a stable counting sort that also
 * reorders the particles, so the cells around a particle are three contiguous index
 * ranges (one per cell row).
 *
 * Notation: r_ij = x_j - x_i, r = |r_ij|, q = 1 - r/R for r < R (0 beyond), P pressure.
 * Units: px, s; densities are dimensionless kernel sums (self excluded).
 */
#include <math.h>

#include "solvers/sph_impl.h"

/* Pairs closer than this (px^2) exert no force: they have no direction. */
#define SPH_EPS2 1e-12f

static inline int near_wall(const sph *s, float x, float y)
{
	return x < s->R || y < s->R || s->W - x < s->R || s->H - y < s->R;
}

static inline float wall_lookup(const float *tab, float d, float scale)
{
	float f = d * scale;
	int i = (int)f;
	if (i >= SPH_WALL_N)
		return 0;
	float a = f - (float)i;
	return tab[i] + a * (tab[i + 1] - tab[i]);
}

/* Position of (x, y) in the frame of obstacle o. */
static inline void to_local(const sph_obst *o, float x, float y, float *lx, float *ly)
{
	float dx = x - o->cx, dy = y - o->cy;
	*lx = o->c * dx + o->s * dy;
	*ly = -o->s * dx + o->c * dy;
}

/* Pushes (x, y) out of obstacle b through one face; returns 0 if it was not inside.
 * swept: leave through the face the particle was outside of at the start of the substep
 * (in the obstacle's frame then), so a fast obstacle sweeps particles ahead of it
 * instead of letting them through; otherwise (or if it was inside already) leave by the
 * nearest face. */
static inline int push_out(const sph_sub *c, int b, int swept, float xp, float yp, float *x, float *y,
		    float *vx, float *vy)
{
	const sph_obst *o = &c->cur[b];
	float lx, ly;
	to_local(o, *x, *y, &lx, &ly);
	if (!(fabsf(lx) < o->hx && fabsf(ly) < o->hy))
		return 0;
	float px, py;
	to_local(&c->prev[b], xp, yp, &px, &py);
	float ex = fabsf(px) - c->prev[b].hx, ey = fabsf(py) - c->prev[b].hy;
	int axis_x;
	float sign;
	if (swept && (ex > 0 || ey > 0)) {
		axis_x = ex >= ey;
		sign = axis_x ? (px < 0 ? -1.0f : 1.0f) : (py < 0 ? -1.0f : 1.0f);
	} else {
		axis_x = o->hx - fabsf(lx) <= o->hy - fabsf(ly);
		sign = axis_x ? (lx < 0 ? -1.0f : 1.0f) : (ly < 0 ? -1.0f : 1.0f);
	}
	float nx, ny; /* outward normal, tank frame */
	if (axis_x) {
		lx = sign * o->hx;
		nx = sign * o->c;
		ny = sign * o->s;
	} else {
		ly = sign * o->hy;
		nx = -sign * o->s;
		ny = sign * o->c;
	}
	*x = o->cx + o->c * lx - o->s * ly;
	*y = o->cy + o->s * lx + o->c * ly;
	if (vx) {
		float un = (*vx - o->vx) * nx + (*vy - o->vy) * ny;
		if (un < 0) {
			*vx -= un * nx;
			*vy -= un * ny;
		}
	}
	return 1;
}

static inline __attribute__((always_inline)) void collide(const sph *s, const sph_sub *c, float xp,
							  float yp, float *x, float *y, float *vx, float *vy)
{
	/* Obstacles, then the tank, which nothing ever leaves. Overlapping obstacles or one
	 * against a wall can push a particle into another: a few more rounds by nearest
	 * face settle that. */
	for (int round = 0; round < 4; round++) {
		int moved = 0;
		for (int b = 0; b < c->nobst; b++)
			moved |= push_out(c, b, round == 0, xp, yp, x, y, vx, vy);
		float cx = clampf(*x, SPH_WALL_EPS, s->W - SPH_WALL_EPS);
		float cy = clampf(*y, SPH_WALL_EPS, s->H - SPH_WALL_EPS);
		if (vx) {
			if (cx != *x)
				*vx = 0;
			if (cy != *y)
				*vy = 0;
		}
		*x = cx;
		*y = cy;
		if (!moved)
			break;
	}
}

void sph_collide(const sph *s, const sph_sub *c, float xp, float yp, float *x, float *y,
		 float *vx, float *vy)
{
	collide(s, c, xp, yp, x, y, vx, vy);
}

/*
 * Neighbour loops. Cells are R/4 wide and R tall, so the neighbours of a particle lie in
 * three row ranges of nine cells (2.25 R wide: fewer needless candidates than three
 * cells of R), each contiguous in the sorted arrays. The inner loops
 * run over a range in groups of SPH_LANES candidates with one explicit accumulator per
 * lane; lanes past the end of a range read the next particles (or the zeroed padding
 * after the last one) and are masked out. Because every lane's sum and the final sum
 * over lanes have a fixed order, the result is the same bits whether the loop is
 * compiled for SSE2 or AVX2 (the kernels are built for both and picked at run time;
 * FMA contraction is off) and whatever the thread count: each particle only gathers.
 * Work is handed to threads in chunks of SPH_PCHUNK particles, dynamically (particles near
 * the surface have fewer neighbours): who computes a particle does not change its bits.
 */
#define SPH_PCHUNK 256

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) \
	&& !defined(SPH_NO_CLONES)
#define SPH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SPH_CLONES
#endif

static inline void ranges_of(const sph *s, float x, float y, nb_ranges *r)
{
	const int ncx = s->ncx, cx = cell_x(s, x), cy = cell_y(s, y);
	const int c0 = imax(cx - 4, 0), c1 = imin(cx + 4, ncx - 1);
	r->n = 0;
	for (int row = imax(cy - 1, 0); row <= imin(cy + 1, s->ncy - 1); row++) {
		r->a[r->n] = s->cell_start[row * ncx + c0];
		r->b[r->n] = s->cell_start[row * ncx + c1 + 1];
		r->n++;
	}
}

/* sph_tail[k][l] = 1 for the first k lanes: masks the lanes of a group past its range. */
static const float sph_tail[SPH_LANES + 1][SPH_LANES] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0 }, { 1, 0, 0, 0, 0, 0, 0, 0 }, { 1, 1, 0, 0, 0, 0, 0, 0 },
	{ 1, 1, 1, 0, 0, 0, 0, 0 }, { 1, 1, 1, 1, 0, 0, 0, 0 }, { 1, 1, 1, 1, 1, 0, 0, 0 },
	{ 1, 1, 1, 1, 1, 1, 0, 0 }, { 1, 1, 1, 1, 1, 1, 1, 0 }, { 1, 1, 1, 1, 1, 1, 1, 1 },
};

/* Sum of the 8 lanes in a fixed order (the halves, then their halves: cheap on SSE2 and
 * AVX2 alike, and the same bits on both). */
_Static_assert(SPH_LANES == 8, "lane_sum and sph_tail are written for 8 lanes");

static inline float lane_sum(const float *v)
{
	float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
	return (a0 + a2) + (a1 + a3);
}

/* Pressures from the kernel sums of particle i (see the density pass), stored halved:
 * every pair term averages two particles' pressures. */
static inline __attribute__((always_inline)) void density_finish(sph *s, int i, float d, float dn)
{
	const float xi = s->x[i], yi = s->y[i], rho0 = s->rho0, ws = (float)SPH_WALL_N * s->invR;
	const float k = (float)s->stiffness, kn = (float)s->near_stiffness, coh = (float)s->cohesion;
	d -= 1.0f; /* the particle itself (r = 0, q = 1) */
	dn -= 1.0f;
	if (s->model == SPH_MODEL_RELAXED && near_wall(s, xi, yi)) {
		d += wall_lookup(s->wall_rho, xi, ws) + wall_lookup(s->wall_rho, s->W - xi, ws) +
		     wall_lookup(s->wall_rho, yi, ws) + wall_lookup(s->wall_rho, s->H - yi, ws);
		dn += wall_lookup(s->wall_rhon, xi, ws) + wall_lookup(s->wall_rhon, s->W - xi, ws) +
		      wall_lookup(s->wall_rhon, yi, ws) + wall_lookup(s->wall_rhon, s->H - yi, ws);
	}
	if (s->model == SPH_MODEL_RELAXED) {
		float e = d - rho0;
		s->p[i] = 0.5f * k * (e < 0 ? coh * e : e);
		s->pn[i] = 0.5f * kn * dn;
	} else {
		if (d < rho0)
			d = rho0;
		s->p[i] = 0.5f * k * (d - rho0);
		s->pn[i] = 0;
	}
	s->rho[i] = d;
	s->rhon[i] = dn;
	s->irho[i] = 1.0f / (d > rho0 ? d : rho0);
}

/*
 * Density pass:
 *     rho_i = sum_j q^2 (seed 004's kernel),  rhon_i = sum_j q^3 (near density)
 * Relaxed: plus the wall ghosts; P_i = k (rho_i - rho0), negative part scaled by
 * `cohesion`; Pn_i = k_near rhon_i.  Seed: rho_i floored at rho0, P_i = k (rho_i - rho0).
 * Both: irho_i = 1 / max(rho_i, rho0), the weight of i in its neighbours' viscosity.
 */
SPH_CLONES
static void density_chunk(sph *s, int i0, int i1)
{
	const float *restrict x = s->x, *restrict y = s->y;
	const float invR = s->invR;

	for (int i = i0; i < i1; i++) {
		const float xi = x[i], yi = y[i];
		float d8[SPH_LANES] = { 0 }, dn8[SPH_LANES] = { 0 };
		nb_ranges nr;
		ranges_of(s, xi, yi, &nr);
		s->ranges[i] = nr; /* for the pressure pass: the positions do not move until then */
		for (int r = 0; r < nr.n; r++) {
			const int b = nr.b[r];
			for (int j0 = nr.a[r]; j0 < b; j0 += SPH_LANES) {
				const float *m = sph_tail[imin(b - j0, SPH_LANES)];
#pragma omp simd
				for (int l = 0; l < SPH_LANES; l++) {
					const int j = j0 + l;
					float dx = x[j] - xi, dy = y[j] - yi;
					float q = 1.0f - sqrtf(dx * dx + dy * dy) * invR;
					q = (q > 0.0f ? q : 0.0f) * m[l];
					d8[l] += q * q;
					dn8[l] += q * q * q;
				}
			}
		}
		density_finish(s, i, lane_sum(d8), lane_sum(dn8));
	}
}

void sph_density(sph *s)
{
	const int n = s->n, nch = (n + SPH_PCHUNK - 1) / SPH_PCHUNK;
#pragma omp parallel for schedule(dynamic, 1) if (n >= SPH_PAR_MIN)
	for (int ch = 0; ch < nch; ch++)
		density_chunk(s, ch * SPH_PCHUNK, imin(ch * SPH_PCHUNK + SPH_PCHUNK, n));
}

/*
 * The pair sums both models need, for particle i at (xi, yi):
 *     a   = -sum_j [ (P_i + P_j)/2 q + (Pn_i + Pn_j)/2 q^2 ] c_j r_ij / r
 *     sw  = sum_j q / max(rho_j, rho0),   sv = sum_j v_j q / max(rho_j, rho0)
 * with c_j = 1 (relaxed) or 1 / max(rho_j, rho0) (seed, whose Pn is 0).
 */
typedef struct pair_sums {
	float ax, ay, sw, svx, svy;
} pair_sums;

static inline __attribute__((always_inline)) void pair_loop(const sph *s, int seed, int i, float xi, float yi, float Pi, float Pni, pair_sums *o)
{
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx, *restrict vy = s->vy;
	const float *restrict P = s->p, *restrict Pn = s->pn, *restrict ir = s->irho;
	const float invR = s->invR;
	float ax[SPH_LANES] = { 0 }, ay[SPH_LANES] = { 0 }, sw[SPH_LANES] = { 0 };
	float svx[SPH_LANES] = { 0 }, svy[SPH_LANES] = { 0 };
	const nb_ranges nr = s->ranges[i]; /* from the density pass */
	for (int g = 0; g < nr.n; g++) {
		const int b = nr.b[g];
		for (int j0 = nr.a[g]; j0 < b; j0 += SPH_LANES) {
			const float *m = sph_tail[imin(b - j0, SPH_LANES)];
#pragma omp simd
			for (int l = 0; l < SPH_LANES; l++) {
				const int j = j0 + l;
				float dx = x[j] - xi, dy = y[j] - yi;
				float r2 = dx * dx + dy * dy;
				/* the particle itself (dx = dy = 0) adds no force and, up to rounding,
				 * no viscosity; the floor only keeps 1/r finite */
				float r = sqrtf(r2 > SPH_EPS2 ? r2 : SPH_EPS2);
				float q = 1.0f - r * invR;
				q = (q > 0.0f ? q : 0.0f) * m[l];
				float w = q * ir[j];
				float D = ((Pi + P[j]) * q + (Pni + Pn[j]) * q * q) / r;
				D = seed ? D * ir[j] : D;
				ax[l] -= D * dx;
				ay[l] -= D * dy;
				sw[l] += w;
				svx[l] += w * vx[j];
				svy[l] += w * vy[j];
			}
		}
	}
	o->ax = lane_sum(ax);
	o->ay = lane_sum(ay);
	o->sw = lane_sum(sw);
	o->svx = lane_sum(svx);
	o->svy = lane_sum(svy);
}

/*
 * Relaxed model, step 2: double density relaxation, gathered per particle (a Jacobi
 * form of Clavet's loop, whose pair (i, j) moves i by -D/2 with P_i and again with P_j):
 *     dx_i = -dt^2 sum_j [ (P_i + P_j)/2 q + (Pn_i + Pn_j)/2 q^2 ] r_ij / r
 *            + dt^2 [ P_i+ f_w(d) + Pn_i fn_w(d) ] n_wall  (for each wall within R)
 * and seed 004's viscosity from velocity differences, as a velocity change
 *     dv_i = -dt mu sum_j (v_i - v_j) q / max(rho_j, rho0)               (mu in 1/s)
 * x = x~ + dx_i + dt dv_i, then obstacles and tank, then v = (x - x_start) / dt.
 */
SPH_CLONES
static float relax_chunk(sph *s, const sph_sub *c, int i0, int i1)
{
	float vm2 = 0;
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx, *restrict vy = s->vy;
	float *restrict x2 = s->x2, *restrict y2 = s->y2, *restrict vx2 = s->vx2, *restrict vy2 = s->vy2;
	const float ws = (float)SPH_WALL_N * s->invR, dmax2 = 0.0625f * s->R * s->R;
	const float dt = c->dt, dt2 = dt * dt, idt = 1.0f / dt, mu = (float)s->viscosity;

	for (int i = i0; i < i1; i++) {
		const float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i], Pi = s->p[i], Pni = s->pn[i];
		pair_sums o;
		pair_loop(s, 0, i, xi, yi, Pi, Pni, &o);
		/* wall ghosts push with the particle's own (non-negative) pressure */
		const float Pp = Pi > 0 ? 2 * Pi : 0, Pnf = 2 * Pni; /* full pressures */
		float ax = o.ax, ay = o.ay;
		if (near_wall(s, xi, yi)) {
			ax += Pp * wall_lookup(s->wall_f, xi, ws) + Pnf * wall_lookup(s->wall_fn, xi, ws);
			ax -= Pp * wall_lookup(s->wall_f, s->W - xi, ws) + Pnf * wall_lookup(s->wall_fn, s->W - xi, ws);
			ay += Pp * wall_lookup(s->wall_f, yi, ws) + Pnf * wall_lookup(s->wall_fn, yi, ws);
			ay -= Pp * wall_lookup(s->wall_f, s->H - yi, ws) + Pnf * wall_lookup(s->wall_fn, s->H - yi, ws);
		}
		/* A pressure push of more than a quarter kernel in one substep only happens when
		 * particles were thrown into each other; capping it keeps such impacts from
		 * exploding (it never binds in resting or flowing fluid). */
		float px = dt2 * ax, py = dt2 * ay, p2 = px * px + py * py;
		if (p2 > dmax2) {
			float f = sqrtf(dmax2 / p2);
			px *= f;
			py *= f;
		}
		float dvx = -dt * mu * (vxi * o.sw - o.svx), dvy = -dt * mu * (vyi * o.sw - o.svy);
		float nx = xi + px + dt * dvx, ny = yi + py + dt * dvy;
		collide(s, c, xi - dt * vxi, yi - dt * vyi, &nx, &ny, NULL, NULL);
		float ux = vxi + (nx - xi) * idt, uy = vyi + (ny - yi) * idt;
		cap_speed(s, &ux, &uy);
		x2[i] = nx;
		y2[i] = ny;
		vx2[i] = ux;
		vy2[i] = uy;
		float v2 = ux * ux + uy * uy;
		vm2 = v2 > vm2 ? v2 : vm2;
	}
	return vm2;
}

double sph_relax(sph *s, const sph_sub *c)
{
	const int n = s->n, nch = (n + SPH_PCHUNK - 1) / SPH_PCHUNK;
	float vm2 = 0; /* a max is exact in any order */
#pragma omp parallel for schedule(dynamic, 1) reduction(max : vm2) if (n >= SPH_PAR_MIN)
	for (int ch = 0; ch < nch; ch++) {
		float v = relax_chunk(s, c, ch * SPH_PCHUNK, imin(ch * SPH_PCHUNK + SPH_PCHUNK, n));
		vm2 = v > vm2 ? v : vm2;
	}
	swap_state(s);
	return sqrt((double)vm2);
}

/*
 * Seed model (seed 004 as written, in px and s), symplectic Euler:
 *     a_i = sum_j (P_i + P_j) / (2 rho_j) q (x_i - x_j)/r  - mu sum_j (v_i - v_j) q / rho_j
 *           + g - a_tank + wall springs
 *     v += dt a,  x += dt v,  then obstacles and tank (velocity into a wall removed).
 */
SPH_CLONES
static float seed_chunk(sph *s, const sph_sub *c, int i0, int i1)
{
	float vm2 = 0;
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx, *restrict vy = s->vy;
	float *restrict x2 = s->x2, *restrict y2 = s->y2, *restrict vx2 = s->vx2, *restrict vy2 = s->vy2;
	const float dt = c->dt, mu = (float)s->viscosity;

	for (int i = i0; i < i1; i++) {
		const float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i];
		pair_sums o;
		pair_loop(s, 1, i, xi, yi, s->p[i], 0, &o);
		float ax = o.ax + c->ax - mu * (vxi * o.sw - o.svx);
		float ay = o.ay + c->ay - mu * (vyi * o.sw - o.svy);
		wall_spring(s, xi, yi, &ax, &ay);
		float ux = vxi + dt * ax, uy = vyi + dt * ay;
		cap_speed(s, &ux, &uy);
		float nx = xi + dt * ux, ny = yi + dt * uy;
		collide(s, c, xi, yi, &nx, &ny, &ux, &uy);
		x2[i] = nx;
		y2[i] = ny;
		vx2[i] = ux;
		vy2[i] = uy;
		float v2 = ux * ux + uy * uy;
		vm2 = v2 > vm2 ? v2 : vm2;
	}
	return vm2;
}

double sph_forces_seed(sph *s, const sph_sub *c)
{
	const int n = s->n, nch = (n + SPH_PCHUNK - 1) / SPH_PCHUNK;
	float vm2 = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(max : vm2) if (n >= SPH_PAR_MIN)
	for (int ch = 0; ch < nch; ch++) {
		float v = seed_chunk(s, c, ch * SPH_PCHUNK, imin(ch * SPH_PCHUNK + SPH_PCHUNK, n));
		vm2 = v > vm2 ? v : vm2;
	}
	swap_state(s);
	return sqrt((double)vm2);
}

