/*
 * sph_grid.c - the sph solver's set-up tables, neighbour grid and per-particle upkeep:
 * the rest density of the lattice, the wall tables, the counting sort that rebuilds the
 * grid every substep, the prediction step of the relaxed model and the diagnostics.
 * Units: px, s; densities are dimensionless kernel sums (self excluded).
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"

/* Sum over an infinite hexagonal lattice of spacing `spacing`, self excluded, of
 * (1 - r/R)^power: the density (power 2) or near density (3) of an interior particle of
 * a block at rest. */
double sph_lattice_sum(double spacing, double R, int power)
{
	return sph_lattice_moment(spacing, R, power, 0, 0);
}

/* The same sum of (1 - r/R)^power r^rpow, over the rows j >= 0 only when `half` (a
 * particle of the top row of a block at rest: the rows below it and none above). */
double sph_lattice_moment(double spacing, double R, int power, int rpow, int half)
{
	double dy = spacing * sqrt(3.0) / 2, sum = 0;
	int ny = (int)(R / dy) + 2, nx = (int)(R / spacing) + 2;
	for (int j = half ? 0 : -ny; j <= ny; j++)
		for (int i = -nx; i <= nx; i++) {
			double px = spacing * (i + 0.5 * (j & 1)), py = dy * j;
			double r = sqrt(px * px + py * py);
			if (r <= 0 || r >= R)
				continue;
			double q = 1 - r / R, t = q;
			for (int k = 1; k < power; k++)
				t *= q;
			for (int k = 0; k < rpow; k++)
				t *= r;
			sum += t;
		}
	return sum;
}

/*
 * Wall tables for the relaxed model. A wall cuts the kernel of a particle at distance d;
 * the fluid that would be on the far side ("ghosts" at the lattice number density
 * n0 = 2 / (sqrt(3) s^2), with the particle's own pressure) is added back:
 *     rho_w(d)  = n0 * Int_{u > d} (1 - r/R)^2 dA,     rhon_w(d) = n0 * Int (1 - r/R)^3 dA
 *     f_w(d)    = n0 * Int (1 - r/R) (u / r) dA,       fn_w(d)   = n0 * Int (1 - r/R)^2 (u / r) dA
 * where u is the distance of the area element past the particle, measured towards the
 * wall; f_w is the push away from the wall per unit of pressure. The integrals are
 * scaled so that a full plane gives the lattice sum (+1 for self), matching rho0.
 */
void sph_wall_tables(sph *s)
{
	enum { NU = 512, NY = 256 };
	const double R = s->R, sp = s->spacing_f, n0 = 2.0 / (sqrt(3.0) * sp * sp);
	double S[4][NU + 1]; /* per-strip integrals over y at u = (k + 0.5) du */
	const double du = R / NU, dyy = R / NY;
	for (int k = 0; k < NU; k++) {
		double u = (k + 0.5) * du, a0 = 0, a1 = 0, a2 = 0, a3 = 0;
		for (int m = 0; m < NY; m++) {
			double yy = (m + 0.5) * dyy, r = sqrt(u * u + yy * yy);
			if (r >= R)
				break;
			double q = 1 - r / R;
			a0 += q * q;
			a1 += q * q * q;
			a2 += q * u / r;
			a3 += q * q * u / r;
		}
		/* both signs of y */
		S[0][k] = 2 * a0 * dyy * du;
		S[1][k] = 2 * a1 * dyy * du;
		S[2][k] = 2 * a2 * dyy * du;
		S[3][k] = 2 * a3 * dyy * du;
	}
	/* Full-plane integral of (1 - r/R)^2 is pi R^2 / 6; scale to the lattice sum + 1. */
	double full = n0 * SPH_PI * R * R / 6.0;
	double scale = n0 * ((double)s->rho0 + 1.0) / full;
	for (int t = 0; t <= SPH_WALL_N + 1; t++) {
		double d = R * t / SPH_WALL_N, acc[4] = { 0, 0, 0, 0 };
		for (int k = 0; k < NU; k++) {
			double u = (k + 0.5) * du;
			if (u < d)
				continue;
			for (int c = 0; c < 4; c++)
				acc[c] += S[c][k];
		}
		s->wall_rho[t] = (float)(acc[0] * scale);
		s->wall_rhon[t] = (float)(acc[1] * scale);
		s->wall_f[t] = (float)(acc[2] * scale);
		s->wall_fn[t] = (float)(acc[3] * scale);
	}
	/* The ghosts' cohesive offset per unit of near pressure (relaxed, ghost_p): the one
	 * that balances their near pressure's push Pn fn_w over the layer they touch,
	 * sum_d fn_w / sum_d f_w (the continuum's 24/60; the lattice's own p_b is a little
	 * less), so that a wall or a body feels no background from the water at rest, only
	 * its pressure. */
	double sf = 0, sfn = 0;
	for (int t = 0; t < SPH_WALL_N; t++) {
		sf += s->wall_f[t];
		sfn += s->wall_fn[t];
	}
	s->p_bw = s->model == SPH_MODEL_RELAXED ? (float)(sfn / sf) : 0;
}

/* Columns a cluster may span: 8 cells of R/4 keep its candidate ranges at most 4.25 R
 * wide, so sparse spray does not make clusters whose ranges cover the whole row. */
#define SPH_CLUSTER_SPAN 8
/* Extra work of a particle in a floating box's reach, in candidate-loop steps. */
#define SPH_BODY_WORK 4

/*
 * Relaxed model, step 1 (Clavet et al. 2005, "prediction-relaxation"):
 *     v* = v + dt (g - a_tank + a_spring),   x~ = x + dt v*
 * then the tank clamp, with v* = (x~ - x) / dt so a clamped particle loses its velocity
 * into the wall. Also computes the particles' grid keys. Runs inside sph_sort().
 */
SPH_CLONES
static void predict_range(sph *s, const sph_sub *c, int i0, int i1)
{
	const sph_k k = sph_consts(s);
	const float dt = c->dt, idt = 1.0f / dt, gx = c->ax, gy = c->ay;
	const float x0 = SPH_WALL_EPS, x1 = k.W - SPH_WALL_EPS, y1 = k.H - SPH_WALL_EPS;
	float *restrict x = s->x, *restrict y = s->y, *restrict vx = s->vx, *restrict vy = s->vy;
	int *restrict key = s->key;
	/* rotating frame (turning tank): omega^2 r - 2 omega J v - alpha J r, J (x, y) = (-y, x) */
	const float om = c->om, om2 = om * om, al = c->al, hw = c->hw, hh = c->hh;
	const int rot = c->rot;
#pragma omp simd
	for (int i = i0; i < i1; i++) {
		float ax = gx, ay = gy;
		if (rot) {
			const float rx = x[i] - hw, ry = y[i] - hh;
			ax += om2 * rx + 2.0f * om * vy[i] + al * ry;
			ay += om2 * ry - 2.0f * om * vx[i] - al * rx;
		}
		wall_spring(&k, x[i], y[i], &ax, &ay);
		float ux = vx[i] + dt * ax, uy = vy[i] + dt * ay;
		cap_speed(&k, &ux, &uy);
		float nx = tp_clampf(x[i] + dt * ux, x0, x1);
		float ny = tp_clampf(y[i] + dt * uy, x0, y1);
		vx[i] = (nx - x[i]) * idt;
		vy[i] = (ny - y[i]) * idt;
		x[i] = nx;
		y[i] = ny;
		key[i] = cell_key(&k, nx, ny);
	}
}

/* Cuts sorted particles [k0, k1) (whole grid rows) into clusters (runs of up to
 * SPH_LANES particles of one row, at most SPH_CLUSTER_SPAN columns apart) and finds each
 * cluster's candidates: the rows above, at and below its own, from 4 columns left of
 * its first particle's cell to 4 right of its last one's (cells are R/4 wide, so that
 * covers R plus the cell). Writes them to cl[0..] with the running total of their work
 * in work[1..]; returns how many. */
static int build_clusters(const sph *s, int k0, int k1, sph_cluster *restrict cl, int64_t *restrict work)
{
	const int ncx = s->ncx, ncy = s->ncy;
	const int *restrict skey = s->skey, *restrict start = s->cell_start;
	int nc = 0;
	int64_t w = 0;
	for (int k = k0; k < k1;) {
		const int row = skey[k] / ncx, row_end = start[(row + 1) * ncx];
		const int first = skey[k] - row * ncx;
		const int lim = imin(imin(k + SPH_LANES, row_end), k1);
		int e = k + 1;
		while (e < lim && skey[e] - row * ncx - first <= SPH_CLUSTER_SPAN)
			e++;
		const int last = skey[e - 1] - row * ncx;
		const int c0 = imax(first - 4, 0), c1 = imin(last + 4, ncx - 1);
		sph_cluster *c = &cl[nc++];
		c->i0 = k;
		c->m = e - k;
		c->n = 0;
		int cand = 0;
		for (int r = imax(row - 1, 0); r <= imin(row + 1, ncy - 1); r++) {
			c->a[c->n] = start[r * ncx + c0];
			c->b[c->n] = start[r * ncx + c1 + 1];
			cand += c->b[c->n] - c->a[c->n];
			c->n++;
		}
		/* cost: the candidate loop, plus the per-particle steps and the call, plus the
		 * floating boxes' ghosts and collisions for particles in their reach (only the
		 * split between threads depends on it, never a result) */
		w += cand + 2 * c->m + 8;
		for (int b = 0; b < s->nfloat; b++) {
			const sph_rows *br = &s->bodies[b].rows;
			if (row >= br->y0 && row <= br->y1 && last >= br->x0 && first <= br->x1)
				w += SPH_BODY_WORK * c->m;
		}
		work[nc] = w;
		k = e;
	}
	return nc;
}

/* Where thread t of nt starts in the sorted particles: at the start of the grid row
 * holding particle n t / nt, so no row is split. */
static int row_bound(const sph *s, int t, int nt)
{
	if (t <= 0)
		return 0;
	if (t >= nt)
		return s->n;
	const int row = s->skey[(int)((long)s->n * t / nt)] / s->ncx;
	return s->cell_start[row * s->ncx];
}

/*
 * Stable counting sort of the particles by cell (after the prediction step, if asked),
 * in parallel: each thread counts its block of particles per cell, the counts become
 * offsets (cell by cell, blocks in order), and each thread places its block. A stable
 * sort has one result, so the thread count does not matter. Then each thread reorders
 * the particles of a run of whole rows and cuts them into clusters, which are finally
 * copied together in row order.
 */
void sph_sort(sph *s, const sph_sub *predict)
{
	const int n = s->n, nc = s->ncells;
	int *restrict key = s->key, *restrict perm = s->perm, *restrict skey = s->skey;
	int *restrict start = s->cell_start, *restrict fill = s->cell_fill;
	const float *x = s->x, *y = s->y, *vx = s->vx, *vy = s->vy; /* predict_range writes them */
	float *restrict x2 = s->x2, *restrict y2 = s->y2, *restrict vx2 = s->vx2, *restrict vy2 = s->vy2;
	int part[SPH_MAX_HIST], ncl[SPH_MAX_HIST];
	int64_t wsum[SPH_MAX_HIST];

	const int T = n >= SPH_PAR_MIN ? imin(omp_get_max_threads(), s->nhist) : 1;
#pragma omp parallel num_threads(T) if (T > 1)
	{
		const int nt = omp_get_num_threads(), t = omp_get_thread_num();
		const int i0 = (int)((long)n * t / nt), i1 = (int)((long)n * (t + 1) / nt);
		const int c0 = (int)((long)nc * t / nt), c1 = (int)((long)nc * (t + 1) / nt);
		if (predict) {
			predict_range(s, predict, i0, i1);
		} else {
			const sph_k k = sph_consts(s);
			for (int i = i0; i < i1; i++)
				key[i] = cell_key(&k, x[i], y[i]);
		}
		int *restrict h = fill + (size_t)t * nc;
		memset(h, 0, (size_t)nc * sizeof *h);
		for (int i = i0; i < i1; i++)
			h[key[i]]++;
#pragma omp barrier
		int sum = 0;
		for (int u = 0; u < nt; u++)
			for (int c = c0; c < c1; c++)
				sum += fill[(size_t)u * nc + c];
		part[t] = sum;
#pragma omp barrier
		int base = 0;
		for (int u = 0; u < t; u++)
			base += part[u];
		for (int c = c0; c < c1; c++) {
			start[c] = base;
			for (int u = 0; u < nt; u++) {
				const int v = fill[(size_t)u * nc + c];
				fill[(size_t)u * nc + c] = base;
				base += v;
			}
		}
		if (t == nt - 1)
			start[nc] = base;
#pragma omp barrier
		for (int i = i0; i < i1; i++) {
			const int k = h[key[i]]++;
			perm[k] = i;
			skey[k] = key[i];
		}
#pragma omp barrier
		/* reorder and cluster a run of whole rows; clusters go first to slots of their
		 * own (a run of m particles makes at most m clusters) */
		const int k0 = row_bound(s, t, nt), k1 = row_bound(s, t + 1, nt);
		for (int k = k0; k < k1; k++) {
			const int i = perm[k];
			x2[k] = x[i];
			y2[k] = y[i];
			vx2[k] = vx[i];
			vy2[k] = vy[i];
		}
		sph_cluster *cl = t ? s->clusters2 + k0 : s->clusters; /* the first run is in place */
		int64_t *cw = t ? s->cwork2 + k0 : s->cwork;
		ncl[t] = build_clusters(s, k0, k1, cl, cw);
		wsum[t] = ncl[t] ? cw[ncl[t]] : 0;
#pragma omp barrier
		int off = 0;
		int64_t woff = 0;
		for (int u = 0; u < t; u++) {
			off += ncl[u];
			woff += wsum[u];
		}
		if (t) {
			memcpy(s->clusters + off, cl, (size_t)ncl[t] * sizeof *s->clusters);
			for (int j = 1; j <= ncl[t]; j++)
				s->cwork[off + j] = woff + cw[j];
		}
		if (t == nt - 1)
			s->nclusters = off + ncl[t];
	}
	s->cwork[0] = 0;
	swap_state(s);
}

/* Diagnostics over fixed chunks of SPH_CHUNK particles, combined in index order:
 * kinetic energy 1/2 sum |v|^2 (unit mass, px^2/s^2), max speed, mean compression
 * max(rho/rho0 - 1, 0) and mean rho/rho0. Returns -1 if anything is not finite. */
int sph_reduce(sph *s)
{
	const int n = s->n, nch = (n + SPH_CHUNK - 1) / SPH_CHUNK;
	const float *vx = s->vx, *vy = s->vy, *rho = s->rho;
	const double irho0 = 1.0 / s->rho0;
#pragma omp parallel for schedule(static) if (n >= SPH_PAR_MIN)
	for (int ch = 0; ch < nch; ch++) {
		int a = ch * SPH_CHUNK, b = imin(a + SPH_CHUNK, n);
		double ke = 0, vm = 0, ce = 0, mr = 0;
		for (int i = a; i < b; i++) {
			double v2 = (double)vx[i] * vx[i] + (double)vy[i] * vy[i];
			ke += v2;
			if (!(v2 <= vm))
				vm = v2; /* NaN sticks */
			double e = rho[i] * irho0;
			ce += e > 1 ? e - 1 : 0;
			mr += e;
		}
		s->part[4 * ch + 0] = ke;
		s->part[4 * ch + 1] = vm;
		s->part[4 * ch + 2] = ce;
		s->part[4 * ch + 3] = mr;
	}
	double ke = 0, vm = 0, ce = 0, mr = 0;
	for (int ch = 0; ch < nch; ch++) {
		ke += s->part[4 * ch + 0];
		if (!(s->part[4 * ch + 1] <= vm))
			vm = s->part[4 * ch + 1];
		ce += s->part[4 * ch + 2];
		mr += s->part[4 * ch + 3];
	}
	s->ke = 0.5 * ke;
	s->vmax = sqrt(vm);
	s->derr = n ? ce / n : 0;
	s->mean_rho = n ? mr / n : 1;
	return isfinite(s->ke) && isfinite(s->vmax) && isfinite(s->derr) ? 0 : -1;
}
