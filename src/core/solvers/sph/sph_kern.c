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
#include <omp.h>

#include "solvers/sph/sph_impl.h"

/* Pairs closer than this (px^2) exert no force: they have no direction. */
#define SPH_EPS2 1e-12f
/* Most rounds of collide(): obstacles pushing a particle into each other or a wall. */
#define SPH_COLLIDE_ROUNDS 4

static inline int near_wall(const sph *s, float x, float y)
{
	return x < s->R || y < s->R || s->W - x < s->R || s->H - y < s->R;
}

/* Position of (x, y) in the frame of obstacle o. */
static inline void to_local(const sph_obst *o, float x, float y, float *lx, float *ly)
{
	float dx = x - o->cx, dy = y - o->cy;
	*lx = o->cos_a * dx + o->sin_a * dy;
	*ly = -o->sin_a * dx + o->cos_a * dy;
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
		nx = sign * o->cos_a;
		ny = sign * o->sin_a;
	} else {
		ly = sign * o->hy;
		nx = -sign * o->sin_a;
		ny = sign * o->cos_a;
	}
	*x = o->cx + o->cos_a * lx - o->sin_a * ly;
	*y = o->cy + o->sin_a * lx + o->cos_a * ly;
	if (vx) {
		float un = (*vx - o->vx) * nx + (*vy - o->vy) * ny;
		if (un < 0) {
			*vx -= un * nx;
			*vy -= un * ny;
		}
	}
	return 1;
}

/* 1 if (x, y) is inside some obstacle (push_out's own test). */
static inline int in_obstacle(const sph_sub *c, float x, float y)
{
	int in = 0;
	for (int b = 0; b < c->nobst; b++) {
		float lx, ly;
		to_local(&c->cur[b], x, y, &lx, &ly);
		in |= fabsf(lx) < c->cur[b].hx && fabsf(ly) < c->cur[b].hy;
	}
	return in;
}

static inline __attribute__((always_inline)) void collide(const sph *s, const sph_sub *c, float xp,
							  float yp, float *x, float *y, float *vx, float *vy)
{
	/* Obstacles, then the tank, which nothing ever leaves. Overlapping obstacles or one
	 * against a wall can push a particle into another: a few more rounds by nearest
	 * face settle that. */
	for (int round = 0; round < SPH_COLLIDE_ROUNDS; round++) {
		int moved = 0;
		for (int b = 0; b < c->nobst; b++)
			moved |= push_out(c, b, round == 0, xp, yp, x, y, vx, vy);
		float cx = tp_clampf(*x, SPH_WALL_EPS, s->W - SPH_WALL_EPS);
		float cy = tp_clampf(*y, SPH_WALL_EPS, s->H - SPH_WALL_EPS);
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
 * Neighbour loops. The particles are sorted by grid cell (cells R/4 wide and R tall,
 * row-major) and cut into clusters of up to 8 neighbouring particles of one row
 * (sph_grid.c); a cluster's candidates are three contiguous index ranges, one per cell
 * row, reaching R beyond its first and last particle's cells.
 *
 * The loops are transposed: a cluster's particles sit in the 8 lanes of a vector and
 * each candidate j is broadcast to all of them, so every lane sums its own particle's
 * terms over j in index order. No lane ever mixes with another, no candidate is loaded
 * twice for one cluster, and a range needs no tail: what a particle gets depends only on
 * the sorted order and its cluster, never on the thread that computed it. The AVX2 path
 * and the plain C path do the same IEEE operations in the same order (FMA contraction
 * is off), so they give the same bits; candidates beyond R add exact zeros. Lanes past
 * a cluster's end compute from whatever follows it and are never stored.
 *
 * Each thread takes one contiguous run of clusters with an equal share of the work
 * (candidates counted by sph_sort), the same run in the density and the final pass, so
 * it finds its particles in its own cache. It works through its run SPH_CCHUNK clusters
 * at a time.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SPH_HAVE_AVX2 1
#endif

#define SPH_CCHUNK 32
/* Particles per block of relax_finish's obstacle test. */
#define SPH_OBST_BLOCK 256
/* The relaxation's push is capped at a quarter kernel (relax_pos): (1/4)^2, times R^2. */
#define SPH_RELAX_MAX_PUSH2 0.0625f
/* Candidates per block of the AVX2 pair loop's distance pass. */
#define SPH_JBLOCK 32

_Static_assert(SPH_LANES == 8, "the AVX2 kernels are written for 8 lanes");

/* This thread's clusters [*k0, *k1): the first cluster at or past each thread's share of
 * the total work. */
void sph_thread_clusters(const sph *s, int *k0, int *k1)
{
	const int nt = omp_get_num_threads(), t = omp_get_thread_num(), nc = s->nclusters;
	const int64_t *w = s->cwork, total = w[nc];
	int b[2];
	for (int e = 0; e < 2; e++) {
		const int64_t goal = total * (t + e) / nt;
		int lo = 0, hi = nc; /* first k with w[k] >= goal */
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (w[mid] < goal)
				lo = mid + 1;
			else
				hi = mid;
		}
		b[e] = lo;
	}
	*k0 = b[0];
	*k1 = t == nt - 1 ? nc : b[1];
}

/* The neighbour passes' AVX2 path (s->avx2, from the solver context's CPU flags) or
 * their plain C twin: the same bits. */
static int use_avx2(const sph *s)
{
#ifdef SPH_HAVE_AVX2
	return s->avx2;
#else
	(void)s;
	return 0;
#endif
}

/* One past the last particle of clusters [.., k1): consecutive clusters hold
 * consecutive particles. */
static inline int chunk_end(const sph *s, int k1)
{
	return s->clusters[k1 - 1].i0 + s->clusters[k1 - 1].m;
}

/* Per-lane sums of a cluster: density passes use the first two. */
enum { S_AX, S_AY, S_SW, S_SVX, S_SVY, S_N };
typedef float lane_sums[S_N][SPH_LANES];
enum { S_D = 0, S_DN = 1 };

/*
 * Density sums of a cluster's particles i:
 *     rho_i = sum_j q^2 (seed 004's kernel),  rhon_i = sum_j q^3 (near density)
 * over j in the candidate ranges (i itself included: r = 0, q = 1).
 */
static void density_lanes_c(const sph *s, const sph_cluster *c, lane_sums o)
{
	const float *restrict x = s->x, *restrict y = s->y;
	const float invR = s->invR;
	float xi[SPH_LANES], yi[SPH_LANES], d[SPH_LANES] = { 0 }, dn[SPH_LANES] = { 0 };
	for (int l = 0; l < SPH_LANES; l++) {
		xi[l] = x[c->i0 + l];
		yi[l] = y[c->i0 + l];
	}
	for (int g = 0; g < c->n; g++)
		for (int j = c->a[g]; j < c->b[g]; j++) {
			const float xj = x[j], yj = y[j];
#pragma omp simd
			for (int l = 0; l < SPH_LANES; l++) {
				float dx = xj - xi[l], dy = yj - yi[l];
				float q = 1.0f - sqrtf(dx * dx + dy * dy) * invR;
				q = q > 0.0f ? q : 0.0f;
				float q2 = q * q;
				d[l] += q2;
				dn[l] += q2 * q;
			}
		}
	for (int l = 0; l < SPH_LANES; l++) {
		o[S_D][l] = d[l];
		o[S_DN][l] = dn[l];
	}
}

#ifdef SPH_HAVE_AVX2
/* The same operations, 8 lanes at once (max(q, 0) returns 0 for q = NaN or -0, as the C
 * select does). */
__attribute__((target("avx2"))) static void density_lanes_avx2(const sph *s, const sph_cluster *c,
							     lane_sums o)
{
	const float *x = s->x, *y = s->y;
	const __m256 xi = _mm256_loadu_ps(x + c->i0), yi = _mm256_loadu_ps(y + c->i0);
	const __m256 invR = _mm256_set1_ps(s->invR), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
	__m256 d = zero, dn = zero;
	for (int g = 0; g < c->n; g++)
		for (int j = c->a[g]; j < c->b[g]; j++) {
			__m256 dx = _mm256_sub_ps(_mm256_broadcast_ss(x + j), xi);
			__m256 dy = _mm256_sub_ps(_mm256_broadcast_ss(y + j), yi);
			__m256 r2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
			__m256 q = _mm256_sub_ps(one, _mm256_mul_ps(_mm256_sqrt_ps(r2), invR));
			q = _mm256_max_ps(q, zero);
			__m256 q2 = _mm256_mul_ps(q, q);
			d = _mm256_add_ps(d, q2);
			dn = _mm256_add_ps(dn, _mm256_mul_ps(q2, q));
		}
	_mm256_storeu_ps(o[S_D], d);
	_mm256_storeu_ps(o[S_DN], dn);
}
#endif

/* Density, step 2, for particles [i0, i1) whose sums are in rho and rhon (self
 * included): the particle itself (r = 0, q = 1) out, the wall ghosts in (relaxed), then
 * relaxed: P_i = k (rho_i - rho0) where rho_i >= rho0 (compression), 0 down to the density
 * rho_s of a free surface at rest (the kernel cut by the surface, not the water
 * stretched), cohesion k (rho_i - rho_s) below it (a particle pulled off the water:
 * surface tension), all less the constant p_b (sph.c) that balances the near pressure's
 * rest push; Pn_i = k_near rhon_i;
 * seed: rho_i floored at rho0, P_i = k (rho_i - rho0).
 * Both: irho_i = 1 / max(rho_i, rho0), the weight of i in its neighbours' viscosity.
 * Pressures are stored halved: every pair term averages two particles' pressures. */
SPH_CLONES
static void density_finish(sph *s, const sph_sub *c, int i0, int i1)
{
	const float *restrict x = s->x, *restrict y = s->y;
	float *restrict rho = s->rho, *restrict rhon = s->rhon;
	float *restrict p = s->p, *restrict pn = s->pn, *restrict irho = s->irho;
	const float rho0 = s->rho0, ws = (float)SPH_WALL_N * s->invR, W = s->W, H = s->H;
	const float k = (float)s->stiffness, kn = (float)s->near_stiffness, coh = (float)s->cohesion;
	const float rho_s = s->rho_s, pb = s->p_b;
#pragma omp simd
	for (int i = i0; i < i1; i++) {
		rho[i] -= 1.0f;
		rhon[i] -= 1.0f;
	}
	if (s->model == SPH_MODEL_RELAXED) {
		for (int i = i0; i < i1; i++) {
			const float xi = x[i], yi = y[i];
			if (!near_wall(s, xi, yi))
				continue;
			rho[i] += wall_lookup(s->wall_rho, xi, ws) + wall_lookup(s->wall_rho, W - xi, ws) +
				  wall_lookup(s->wall_rho, yi, ws) + wall_lookup(s->wall_rho, H - yi, ws);
			rhon[i] += wall_lookup(s->wall_rhon, xi, ws) + wall_lookup(s->wall_rhon, W - xi, ws) +
				   wall_lookup(s->wall_rhon, yi, ws) + wall_lookup(s->wall_rhon, H - yi, ws);
		}
		if (c && s->nfloat) /* and the floating boxes' (sph_body.c) */
			sph_bodies_density(s, c, i0, i1);
#pragma omp simd
		for (int i = i0; i < i1; i++) {
			const float d = rho[i], e = d - rho0, t = d - rho_s;
			p[i] = 0.5f * (k * (e >= 0 ? e : t < 0 ? coh * t : 0.0f) - pb);
			pn[i] = 0.5f * kn * rhon[i];
			irho[i] = 1.0f / (d > rho0 ? d : rho0);
		}
	} else {
#pragma omp simd
		for (int i = i0; i < i1; i++) {
			const float d = rho[i] < rho0 ? rho0 : rho[i];
			rho[i] = d;
			p[i] = 0.5f * k * (d - rho0);
			pn[i] = 0;
			irho[i] = 1.0f / (d > rho0 ? d : rho0);
		}
	}
}

/* Density pass: the sums of each cluster's particles into rho and rhon, then the
 * finishing step above over the chunk's particles (consecutive clusters hold
 * consecutive particles). */
static void density_chunk(sph *s, const sph_sub *sc, int avx2, int k0, int k1)
{
	lane_sums o;
	for (int ci = k0; ci < k1; ci++) {
		const sph_cluster *c = &s->clusters[ci];
#ifdef SPH_HAVE_AVX2
		if (avx2)
			density_lanes_avx2(s, c, o);
		else
#endif
			density_lanes_c(s, c, o);
		for (int l = 0; l < c->m; l++) {
			s->rho[c->i0 + l] = o[S_D][l];
			s->rhon[c->i0 + l] = o[S_DN][l];
		}
	}
	(void)avx2;
	if (k1 > k0)
		density_finish(s, sc, s->clusters[k0].i0, chunk_end(s, k1));
}

void sph_density(sph *s, const sph_sub *c)
{
	const int avx2 = use_avx2(s);
#pragma omp parallel if (s->n >= SPH_PAR_MIN)
	{
		int k0, k1;
		sph_thread_clusters(s, &k0, &k1);
		for (int k = k0; k < k1; k += SPH_CCHUNK)
			density_chunk(s, c, avx2, k, imin(k + SPH_CCHUNK, k1));
	}
}

/*
 * The pair sums both models need, for each particle i of a cluster:
 *     a   = -sum_j [ (P_i + P_j)/2 q + (Pn_i + Pn_j)/2 q^2 ] c_j r_ij / r
 *     sw  = sum_j q / max(rho_j, rho0),   sv = sum_j v_j q / max(rho_j, rho0)
 * with c_j = 1 (relaxed) or 1 / max(rho_j, rho0) (seed, whose Pn is 0 and not summed).
 * The particle itself (r = 0) adds no force and, up to rounding, no viscosity; the floor
 * on r^2 only keeps 1/r finite.
 */
static inline __attribute__((always_inline)) void pair_lanes_c(const sph *s, const int seed,
							     const sph_cluster *c, lane_sums o)
{
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx, *restrict vy = s->vy;
	const float *restrict P = s->p, *restrict Pn = s->pn, *restrict ir = s->irho;
	const float invR = s->invR;
	float xi[SPH_LANES], yi[SPH_LANES], Pi[SPH_LANES], Pni[SPH_LANES];
	float ax[SPH_LANES] = { 0 }, ay[SPH_LANES] = { 0 }, sw[SPH_LANES] = { 0 };
	float svx[SPH_LANES] = { 0 }, svy[SPH_LANES] = { 0 };
	for (int l = 0; l < SPH_LANES; l++) {
		xi[l] = x[c->i0 + l];
		yi[l] = y[c->i0 + l];
		Pi[l] = P[c->i0 + l];
		Pni[l] = Pn[c->i0 + l];
	}
	for (int g = 0; g < c->n; g++)
		for (int j = c->a[g]; j < c->b[g]; j++) {
			const float xj = x[j], yj = y[j];
			const float vxj = vx[j], vyj = vy[j], Pj = P[j], Pnj = Pn[j], irj = ir[j];
#pragma omp simd
			for (int l = 0; l < SPH_LANES; l++) {
				float dx = xj - xi[l], dy = yj - yi[l];
				float r2 = dx * dx + dy * dy;
				float r = sqrtf(r2 > SPH_EPS2 ? r2 : SPH_EPS2);
				float q = 1.0f - r * invR;
				q = q > 0.0f ? q : 0.0f;
				float w = q * irj, D;
				if (seed)
					D = (Pi[l] + Pj) * q / r * irj;
				else
					D = ((Pi[l] + Pj) * q + (Pni[l] + Pnj) * q * q) / r;
				ax[l] -= D * dx;
				ay[l] -= D * dy;
				sw[l] += w;
				svx[l] += w * vxj;
				svy[l] += w * vyj;
			}
		}
	for (int l = 0; l < SPH_LANES; l++) {
		o[S_AX][l] = ax[l];
		o[S_AY][l] = ay[l];
		o[S_SW][l] = sw[l];
		o[S_SVX][l] = svx[l];
		o[S_SVY][l] = svy[l];
	}
}

#ifdef SPH_HAVE_AVX2
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
pair_lanes_avx2(const sph *s, const int seed, const sph_cluster *c, lane_sums o)
{
	const float *x = s->x, *y = s->y, *vx = s->vx, *vy = s->vy;
	const float *P = s->p, *Pn = s->pn, *ir = s->irho;
	const int i0 = c->i0;
	const __m256 xi = _mm256_loadu_ps(x + i0), yi = _mm256_loadu_ps(y + i0);
	const __m256 Pi = _mm256_loadu_ps(P + i0), Pni = _mm256_loadu_ps(Pn + i0);
	const __m256 invR = _mm256_set1_ps(s->invR), one = _mm256_set1_ps(1.0f);
	const __m256 zero = _mm256_setzero_ps(), eps2 = _mm256_set1_ps(SPH_EPS2);
	__m256 ax = zero, ay = zero, sw = zero, svx = zero, svy = zero;
	/* Distances first, a block of candidates at a time, then the rest: two short
	 * dependency chains keep more candidates in flight than one long one. */
	float rb[SPH_JBLOCK * SPH_LANES] __attribute__((aligned(32)));
	for (int g = 0; g < c->n; g++)
		for (int jb = c->a[g]; jb < c->b[g]; jb += SPH_JBLOCK) {
		const int je = imin(jb + SPH_JBLOCK, c->b[g]);
		for (int j = jb; j < je; j++) {
			__m256 dx = _mm256_sub_ps(_mm256_broadcast_ss(x + j), xi);
			__m256 dy = _mm256_sub_ps(_mm256_broadcast_ss(y + j), yi);
			__m256 r2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
			_mm256_store_ps(rb + SPH_LANES * (j - jb), _mm256_sqrt_ps(_mm256_max_ps(r2, eps2)));
		}
		for (int j = jb; j < je; j++) {
			const __m256 irj = _mm256_broadcast_ss(ir + j);
			__m256 dx = _mm256_sub_ps(_mm256_broadcast_ss(x + j), xi);
			__m256 dy = _mm256_sub_ps(_mm256_broadcast_ss(y + j), yi);
			__m256 r = _mm256_load_ps(rb + SPH_LANES * (j - jb));
			__m256 q = _mm256_max_ps(_mm256_sub_ps(one, _mm256_mul_ps(r, invR)), zero);
			__m256 w = _mm256_mul_ps(q, irj), D;
			__m256 pp = _mm256_mul_ps(_mm256_add_ps(Pi, _mm256_broadcast_ss(P + j)), q);
			if (seed) {
				D = _mm256_mul_ps(_mm256_div_ps(pp, r), irj);
			} else {
				__m256 pn = _mm256_add_ps(Pni, _mm256_broadcast_ss(Pn + j));
				pn = _mm256_mul_ps(_mm256_mul_ps(pn, q), q);
				D = _mm256_div_ps(_mm256_add_ps(pp, pn), r);
			}
			ax = _mm256_sub_ps(ax, _mm256_mul_ps(D, dx));
			ay = _mm256_sub_ps(ay, _mm256_mul_ps(D, dy));
			sw = _mm256_add_ps(sw, w);
			svx = _mm256_add_ps(svx, _mm256_mul_ps(w, _mm256_broadcast_ss(vx + j)));
			svy = _mm256_add_ps(svy, _mm256_mul_ps(w, _mm256_broadcast_ss(vy + j)));
		}
		}
	_mm256_storeu_ps(o[S_AX], ax);
	_mm256_storeu_ps(o[S_AY], ay);
	_mm256_storeu_ps(o[S_SW], sw);
	_mm256_storeu_ps(o[S_SVX], svx);
	_mm256_storeu_ps(o[S_SVY], svy);
}

__attribute__((target("avx2"))) static void pair_relaxed_avx2(const sph *s, const sph_cluster *c,
							    lane_sums o)
{
	pair_lanes_avx2(s, 0, c, o);
}

__attribute__((target("avx2"))) static void pair_seed_avx2(const sph *s, const sph_cluster *c,
							 lane_sums o)
{
	pair_lanes_avx2(s, 1, c, o);
}
#endif

static void pair_sums(const sph *s, int avx2, int seed, const sph_cluster *c, lane_sums o)
{
#ifdef SPH_HAVE_AVX2
	if (avx2) {
		if (seed)
			pair_seed_avx2(s, c, o);
		else
			pair_relaxed_avx2(s, c, o);
		return;
	}
#endif
	(void)avx2;
	if (seed)
		pair_lanes_c(s, 1, c, o);
	else
		pair_lanes_c(s, 0, c, o);
}

/* Where relaxation puts a particle (before obstacles and tank): the pressure push
 * dt^2 a, capped at a quarter kernel (a bigger one only happens when particles were thrown
 * into each other; the cap keeps such impacts from exploding and never binds in resting or
 * flowing fluid), plus the viscosity's velocity change times dt. */
static inline __attribute__((always_inline)) void
relax_pos(float xi, float yi, float vxi, float vyi, float ax, float ay, float sw, float svx,
	  float svy, float dt, float dt2, float mu, float dmax2, float *nx, float *ny)
{
	float px = dt2 * ax, py = dt2 * ay, p2 = px * px + py * py;
	if (p2 > dmax2) {
		float f = sqrtf(dmax2 / p2);
		px *= f;
		py *= f;
	}
	float dvx = -dt * mu * (vxi * sw - svx), dvy = -dt * mu * (vyi * sw - svy);
	*nx = xi + px + dt * dvx;
	*ny = yi + py + dt * dvy;
}

/* The constants of relax_finish's per-particle steps. */
typedef struct relax_k {
	float dt, dt2, idt; /* the substep, its square and inverse */
	float mu;           /* viscosity, 1/s */
	float dmax2;        /* the push's cap, squared (relax_pos) */
	float x1, y1;       /* the tank clamp's far sides */
} relax_k;

/* Wall ghosts push with the particle's own (non-negative) pressure, less their offset
 * (the dt^2 [ Pg_i f_w(d) + Pn_i fn_w(d) ] n_wall term below, without the dt^2). */
static inline __attribute__((always_inline)) void add_wall_ghosts(const sph *s, int i0, int i1)
{
	const float *restrict x = s->x, *restrict y = s->y;
	float *restrict fax = s->fax, *restrict fay = s->fay;
	const float *restrict P = s->p, *restrict Pn = s->pn;
	const float ws = (float)SPH_WALL_N * s->invR, W = s->W, H = s->H;
	for (int i = i0; i < i1; i++) {
		const float xi = x[i], yi = y[i];
		if (!near_wall(s, xi, yi))
			continue;
		const float Pp = ghost_p(s, P[i], Pn[i]), Pnf = 2 * Pn[i]; /* full pressures */
		float ax = fax[i], ay = fay[i];
		ax += Pp * wall_lookup(s->wall_f, xi, ws) + Pnf * wall_lookup(s->wall_fn, xi, ws);
		ax -= Pp * wall_lookup(s->wall_f, W - xi, ws) + Pnf * wall_lookup(s->wall_fn, W - xi, ws);
		ay += Pp * wall_lookup(s->wall_f, yi, ws) + Pnf * wall_lookup(s->wall_fn, yi, ws);
		ay -= Pp * wall_lookup(s->wall_f, H - yi, ws) + Pnf * wall_lookup(s->wall_fn, H - yi, ws);
		fax[i] = ax;
		fay[i] = ay;
	}
}

/* Floating boxes' ghost pushes (sph_body.c): only their candidates have any, in each
 * body's cell rows; they are cleared for the next substep once added (a particle two
 * bodies share adds its push once, then a zero). */
static inline __attribute__((always_inline)) void add_body_ghosts(const sph *s, int i0, int i1)
{
	float *restrict fax = s->fax, *restrict fay = s->fay;
	for (int b = 0; b < s->nfloat; b++) {
		const sph_rows r = s->bodies[b].rows;
		float *restrict bfx = s->bfx, *restrict bfy = s->bfy;
		for (int row = r.y0; row <= r.y1 && r.x0 <= r.x1; row++) {
			const int a = imax(s->cell_start[row * s->ncx + r.x0], i0);
			const int e = imin(s->cell_start[row * s->ncx + r.x1 + 1], i1);
#pragma omp simd
			for (int i = a; i < e; i++) {
				fax[i] += bfx[i];
				fay[i] += bfy[i];
				bfx[i] = 0;
				bfy[i] = 0;
			}
		}
	}
}

/* Without obstacles: relax_pos, then the tank clamp, which is all the containment there is. */
static inline __attribute__((always_inline)) void relax_clamped(const sph *s, const relax_k *r,
								int i0, int i1)
{
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx,
			      *restrict vy = s->vy;
	float *restrict x2 = s->x2, *restrict y2 = s->y2;
	const float *restrict fax = s->fax, *restrict fay = s->fay;
	const float *restrict fsw = s->fsw, *restrict fsvx = s->fsvx, *restrict fsvy = s->fsvy;
	const float dt = r->dt, dt2 = r->dt2, mu = r->mu, dmax2 = r->dmax2, x1 = r->x1, y1 = r->y1;
#pragma omp simd
	for (int i = i0; i < i1; i++) {
		float nx, ny;
		relax_pos(x[i], y[i], vx[i], vy[i], fax[i], fay[i], fsw[i], fsvx[i], fsvy[i], dt,
			  dt2, mu, dmax2, &nx, &ny);
		x2[i] = tp_clampf(nx, SPH_WALL_EPS, x1);
		y2[i] = tp_clampf(ny, SPH_WALL_EPS, y1);
	}
}

/* Which of the n positions (rx, ry) are inside some obstacle, into in[] (in_obstacle(),
 * lane by lane: push_out's own test, vectorised); returns 1 if any is. */
static inline __attribute__((always_inline)) int in_obstacles(const sph_sub *c, const float *rx,
							      const float *ry, int n, int *in)
{
	int any = 0;
	for (int b = 0; b < c->nobst; b++) {
		const float ocx = c->cur[b].cx, ocy = c->cur[b].cy, oc = c->cur[b].cos_a,
			    os = c->cur[b].sin_a, ohx = c->cur[b].hx, ohy = c->cur[b].hy;
#pragma omp simd reduction(| : any)
		for (int l = 0; l < n; l++) {
			const float dx = rx[l] - ocx, dy = ry[l] - ocy;
			const float lx = oc * dx + os * dy, ly = -os * dx + oc * dy;
			const int t = (fabsf(lx) < ohx) & (fabsf(ly) < ohy);
			in[l] |= t;
			any |= t;
		}
	}
	return any;
}

/* With obstacles, particles [b0, b1), a block of at most SPH_OBST_BLOCK: most particles
 * are in no obstacle, and for them collide() comes down to the tank clamp. The block is
 * clamped, tested against the obstacles, and only a block with a particle inside one
 * takes the scalar collision loop (the same numbers either way). With floating boxes, the
 * push-outs are kept for their contact impulses: cdx, cdy are zero but where a block
 * flagged in cflag has one (sph_bodies_contacts reads and clears them). */
static inline __attribute__((always_inline)) void relax_block(sph *s, const sph_sub *c,
							      const relax_k *r, int b0, int b1)
{
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx,
			      *restrict vy = s->vy;
	float *restrict x2 = s->x2, *restrict y2 = s->y2;
	const float *restrict fax = s->fax, *restrict fay = s->fay;
	const float *restrict fsw = s->fsw, *restrict fsvx = s->fsvx, *restrict fsvy = s->fsvy;
	const float dt = r->dt, dt2 = r->dt2, mu = r->mu, dmax2 = r->dmax2, x1 = r->x1, y1 = r->y1;
	const int fl = s->nfloat != 0;
	float *restrict cdx = s->cdx, *restrict cdy = s->cdy;
	float rx[SPH_OBST_BLOCK] = { 0 }, ry[SPH_OBST_BLOCK] = { 0 }; /* before the clamp */
	int moved = 0; /* some push-out in the block */
#pragma omp simd reduction(| : moved)
	for (int i = b0; i < b1; i++) {
		float nx, ny;
		relax_pos(x[i], y[i], vx[i], vy[i], fax[i], fay[i], fsw[i], fsvx[i], fsvy[i], dt,
			  dt2, mu, dmax2, &nx, &ny);
		const float cx = tp_clampf(nx, SPH_WALL_EPS, x1), cy = tp_clampf(ny, SPH_WALL_EPS, y1);
		rx[i - b0] = nx;
		ry[i - b0] = ny;
		x2[i] = cx;
		y2[i] = cy;
		moved |= (cx != nx) | (cy != ny);
	}
	for (int i = b0; fl && moved && i < b1; i++) { /* the tank's push-outs */
		cdx[i] = x2[i] - rx[i - b0];
		cdy[i] = y2[i] - ry[i - b0];
	}
	int in[SPH_OBST_BLOCK] = { 0 };
	const int any = in_obstacles(c, rx, ry, b1 - b0, in);
	for (int i = b0; any && i < b1; i++) {
		const float ox = rx[i - b0], oy = ry[i - b0];
		if (!in[i - b0])
			continue; /* clamped already */
		x2[i] = ox;
		y2[i] = oy;
		collide(s, c, x[i] - dt * vx[i], y[i] - dt * vy[i], &x2[i], &y2[i], NULL, NULL);
		if (fl) {
			cdx[i] = x2[i] - ox;
			cdy[i] = y2[i] - oy;
			moved = 1;
		}
	}
	/* flag the contact scan's blocks this one overlaps (a block of it may be another
	 * thread's too: both only ever store 1, and sph_bodies_contacts clears) */
	for (int g = b0 / SPH_CONTACT_BLOCK; fl && moved && g <= (b1 - 1) / SPH_CONTACT_BLOCK; g++)
		__atomic_store_n(&s->cflag[g], (uint8_t)1, __ATOMIC_RELAXED);
}

/* The velocities from the displacements, v = (x - x_start) / dt, capped; returns the
 * largest squared speed. */
static inline __attribute__((always_inline)) float relax_velocities(const sph *s, const relax_k *r,
								    int i0, int i1)
{
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx,
			      *restrict vy = s->vy;
	const float *restrict x2 = s->x2, *restrict y2 = s->y2;
	float *restrict vx2 = s->vx2, *restrict vy2 = s->vy2;
	const float idt = r->idt;
	const sph_k k = sph_consts(s);
	float vm2 = 0;
#pragma omp simd reduction(max : vm2)
	for (int i = i0; i < i1; i++) {
		float ux = vx[i] + (x2[i] - x[i]) * idt, uy = vy[i] + (y2[i] - y[i]) * idt;
		cap_speed(&k, &ux, &uy);
		vx2[i] = ux;
		vy2[i] = uy;
		float v2 = ux * ux + uy * uy;
		vm2 = v2 > vm2 ? v2 : vm2;
	}
	return vm2;
}

/*
 * Relaxed model, step 2: double density relaxation, gathered per particle (a Jacobi
 * form of Clavet's loop, whose pair (i, j) moves i by -D/2 with P_i and again with P_j):
 *     dx_i = -dt^2 sum_j [ (P_i + P_j)/2 q + (Pn_i + Pn_j)/2 q^2 ] r_ij / r
 *            + dt^2 [ Pg_i f_w(d) + Pn_i fn_w(d) ] n_wall  (for each wall within R)
 * with Pg_i = max(P_i + p_b, 0) - Pn_i sum fn_w / sum f_w (ghost_p, sph_impl.h): the
 * particle's non-negative pressure less the ghosts' cohesive offset
 * and seed 004's viscosity from velocity differences, as a velocity change
 *     dv_i = -dt mu sum_j (v_i - v_j) q / max(rho_j, rho0)               (mu in 1/s)
 * x = x~ + dx_i + dt dv_i, then obstacles and tank, then v = (x - x_start) / dt.
 * Returns the largest squared speed of particles [i0, i1).
 */
SPH_CLONES
static float relax_finish(sph *s, const sph_sub *c, int i0, int i1)
{
	const float dt = c->dt;
	const relax_k r = { .dt = dt, .dt2 = dt * dt, .idt = 1.0f / dt, .mu = (float)s->viscosity,
			    .dmax2 = SPH_RELAX_MAX_PUSH2 * s->R * s->R,
			    .x1 = s->W - SPH_WALL_EPS, .y1 = s->H - SPH_WALL_EPS };
	add_wall_ghosts(s, i0, i1);
	add_body_ghosts(s, i0, i1);
	if (c->nobst == 0)
		relax_clamped(s, &r, i0, i1);
	for (int b0 = i0; c->nobst && b0 < i1; b0 += SPH_OBST_BLOCK)
		relax_block(s, c, &r, b0, imin(b0 + SPH_OBST_BLOCK, i1));
	return relax_velocities(s, &r, i0, i1);
}

static float relax_chunk(sph *s, const sph_sub *c, int avx2, int k0, int k1)
{
	lane_sums o;
	for (int ci = k0; ci < k1; ci++) {
		const sph_cluster *cl = &s->clusters[ci];
		pair_sums(s, avx2, 0, cl, o);
		for (int l = 0; l < cl->m; l++) {
			const int i = cl->i0 + l;
			s->fax[i] = o[S_AX][l];
			s->fay[i] = o[S_AY][l];
			s->fsw[i] = o[S_SW][l];
			s->fsvx[i] = o[S_SVX][l];
			s->fsvy[i] = o[S_SVY][l];
		}
	}
	if (k1 <= k0)
		return 0;
	return relax_finish(s, c, s->clusters[k0].i0, chunk_end(s, k1));
}

/*
 * Seed model (seed 004 as written, in px and s), symplectic Euler:
 *     a_i = sum_j (P_i + P_j) / (2 rho_j) q (x_i - x_j)/r  - mu sum_j (v_i - v_j) q / rho_j
 *           + g - a_tank + wall springs
 *     v += dt a,  x += dt v,  then obstacles and tank (velocity into a wall removed).
 */
static float seed_chunk(sph *s, const sph_sub *c, int avx2, int k0, int k1)
{
	float vm2 = 0;
	const float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx, *restrict vy = s->vy;
	float *restrict x2 = s->x2, *restrict y2 = s->y2, *restrict vx2 = s->vx2, *restrict vy2 = s->vy2;
	const float dt = c->dt, mu = (float)s->viscosity;
	const sph_k k = sph_consts(s);
	lane_sums o;

	for (int ci = k0; ci < k1; ci++) {
		const sph_cluster *cl = &s->clusters[ci];
		pair_sums(s, avx2, 1, cl, o);
		for (int l = 0; l < cl->m; l++) {
			const int i = cl->i0 + l;
			const float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i];
			float ax = o[S_AX][l] + c->ax - mu * (vxi * o[S_SW][l] - o[S_SVX][l]);
			float ay = o[S_AY][l] + c->ay - mu * (vyi * o[S_SW][l] - o[S_SVY][l]);
			if (c->rot) { /* the rotating frame, as in the relaxed prediction */
				const float rx = xi - c->hw, ry = yi - c->hh;
				ax += c->om * c->om * rx + 2.0f * c->om * vyi + c->al * ry;
				ay += c->om * c->om * ry - 2.0f * c->om * vxi - c->al * rx;
			}
			wall_spring(&k, xi, yi, &ax, &ay);
			float ux = vxi + dt * ax, uy = vyi + dt * ay;
			cap_speed(&k, &ux, &uy);
			float nx = xi + dt * ux, ny = yi + dt * uy;
			collide(s, c, xi, yi, &nx, &ny, &ux, &uy);
			x2[i] = nx;
			y2[i] = ny;
			vx2[i] = ux;
			vy2[i] = uy;
			float v2 = ux * ux + uy * uy;
			vm2 = v2 > vm2 ? v2 : vm2;
		}
	}
	return vm2;
}

/* Runs the final pass of a substep over all clusters; returns the largest speed. */
static double final_pass(sph *s, const sph_sub *c, int seed)
{
	const int avx2 = use_avx2(s);
	float vm2 = 0; /* a max is exact in any order */
#pragma omp parallel reduction(max : vm2) if (s->n >= SPH_PAR_MIN)
	{
		int k0, k1;
		sph_thread_clusters(s, &k0, &k1);
		for (int k = k0; k < k1; k += SPH_CCHUNK) {
			const int e = imin(k + SPH_CCHUNK, k1);
			float v = seed ? seed_chunk(s, c, avx2, k, e) : relax_chunk(s, c, avx2, k, e);
			vm2 = v > vm2 ? v : vm2;
		}
	}
	swap_state(s);
	return sqrt((double)vm2);
}

double sph_relax(sph *s, const sph_sub *c)
{
	return final_pass(s, c, 0);
}

double sph_forces_seed(sph *s, const sph_sub *c)
{
	return final_pass(s, c, 1);
}
