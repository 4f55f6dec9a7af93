/* The shallow solver (seed 003, GAMES103 lab 4): the wave update against the plain seed
 * port, CG against a dense solve, volume conservation with drops, rain and boxes, still
 * water around resting boxes, a dragged box's wake reaching the far wall, a floating box
 * settling at its density's draft, the stability check, checkpoints, thread-count
 * independence and a golden hash. */
#include <criterion/criterion.h>
#include <glob.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/seed_shallow.h"
#include "sim/stepper.h"
#include "solvers/shallow/cg.h"
#include "solvers/shallow/shallow_impl.h"
#include "solvers/solver.h"
#include "util/rng.h"

extern const tp_solver tp_solver_shallow;
#define SH (&tp_solver_shallow)
#define FPS 30.0

/* A pool: a scene filled in by hand, its boxes (one keyframe pair each) and a solver. */
typedef struct pool {
	scene sc;
	scene_box boxes[4];
	scene_key keys[4][2];
	scene_param params[8];
	tp_box_pose poses[4];
	solver *s;
	void *p;
	int frame;
} pool;

static void pool_init(pool *pl, int w, int h, scene_boundary b)
{
	memset(pl, 0, sizeof *pl);
	pl->sc.path = "test.json";
	pl->sc.width = w;
	pl->sc.height = h;
	pl->sc.fps = FPS;
	pl->sc.frames = 1000;
	pl->sc.substeps = 1;
	pl->sc.boundary = b;
	pl->sc.solver = &SH->kind;
	pl->sc.params = pl->params;
	pl->sc.boxes = pl->boxes;
}

static void pool_param(pool *pl, const char *name, double v)
{
	pl->params[pl->sc.nparams++] = (scene_param){ (char *)name, v };
}

/* A box going from (x0, y0) at t0 to (x1, y1) at t1 (hold outside). */
static void pool_box(pool *pl, double w, double h, double height, double density, int floating,
		     double t0, double x0, double y0, double t1, double x1, double y1)
{
	int i = pl->sc.nboxes++;
	pl->keys[i][0] = (scene_key){ t0, x0, y0, 0 };
	pl->keys[i][1] = (scene_key){ t1, x1, y1, 0 };
	pl->boxes[i] = (scene_box){ { w, h }, height, density, floating, { 2, pl->keys[i] } };
}

static int pool_open(pool *pl, tp_err *err)
{
	int rc = solver_create(&pl->sc, 1, &pl->s, err);
	pl->p = rc == 0 ? solver_priv(pl->s) : NULL;
	return rc;
}

static void pool_open_ok(pool *pl)
{
	tp_err err;
	cr_assert_eq(pool_open(pl, &err), 0, "%s", err.msg);
}

/* One solver step (one frame, scene substeps 1) with the kinematic poses at its end. */
static int pool_step(pool *pl)
{
	pl->frame++;
	tp_step_in in = { .t = pl->frame / FPS, .dt = 1 / FPS, .boxes = pl->poses };
	for (int i = 0; i < pl->sc.nboxes; i++)
		scene_path_eval(&pl->boxes[i].path, in.t, &pl->poses[i].x, &pl->poses[i].y,
				&pl->poses[i].angle);
	return SH->step(pl->p, &in);
}

static void pool_run(pool *pl, int frames)
{
	for (int f = 0; f < frames; f++)
		cr_assert_eq(pool_step(pl), 0, "blew up at frame %d", pl->frame);
}

static double stat_of(pool *pl, const char *name)
{
	tp_stats st;
	SH->stats(pl->p, &st);
	for (int i = 0; i < st.n; i++)
		if (!strcmp(st.name[i], name))
			return st.value[i];
	cr_assert_fail("no stat %s", name);
	return 0;
}

static tp_surface pool_surface(pool *pl)
{
	tp_surface s;
	SH->surface(pl->p, &s);
	return s;
}

static float at(const tp_surface *s, int x, int y)
{
	return ((const float *)s->data)[(ptrdiff_t)y * s->stride + x];
}

static uint64_t surface_hash(const tp_surface *s)
{
	uint64_t hsh = 1469598103934665603ull; /* FNV-1a over the float bits */
	for (int y = 0; y < s->h; y++)
		for (int x = 0; x < s->w; x++) {
			float v = at(s, x, y);
			uint32_t b;
			memcpy(&b, &v, sizeof b);
			for (int k = 0; k < 4; k++) {
				hsh ^= (b >> (8 * k)) & 0xff;
				hsh *= 1099511628211ull;
			}
		}
	for (int i = 0; i < s->nboxes; i++) {
		double v[4] = { s->boxes[i].x, s->boxes[i].y, s->boxes[i].z, s->boxes[i].tilt[0] };
		const unsigned char *c = (const unsigned char *)v;
		for (size_t k = 0; k < sizeof v; k++) {
			hsh ^= c[k];
			hsh *= 1099511628211ull;
		}
	}
	return hsh;
}

static void pool_close(pool *pl) { solver_destroy(pl->s); }

/* ---- the wave update is the seed's ---- */

Test(shallow, matches_the_seed_port_without_boxes)
{
	/* 8 internal steps per frame at 30 fps is the lab's step, where damping is used as
	 * given; r < 1 drops are the seed's rule. */
	pool pl;
	pool_init(&pl, 40, 30, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "substeps", 8);
	pool_param(&pl, "viscosity", 0); /* the seed's update exactly */
	pool_open_ok(&pl);
	seed_shallow ref;
	cr_assert_eq(seed_shallow_init(&ref, 40, 30, 0.005f, 0.996f, 0.004f, 1e-6, 100), 0);
	SH->drop(pl.p, 12.5, 9.5, 0.5, 1.0);
	SH->drop(pl.p, 0.5, 29.5, 0.5, -0.7); /* a corner: two neighbours share the loss */
	seed_shallow_drop(&ref, 12, 9, 1.0f);
	seed_shallow_drop(&ref, 0, 29, -0.7f);
	/* the solver's drops start at rest (the seed's key press also kicks the water once) */
	memcpy(ref.old_h, ref.hh, sizeof(float) * 40 * 30);
	double maxd = 0, maxh = 0;
	for (int f = 0; f < 60; f++) {
		pool_run(&pl, 1);
		for (int k = 0; k < 8; k++)
			seed_shallow_step(&ref, NULL, 0);
		tp_surface s = pool_surface(&pl);
		for (int y = 0; y < 30; y++)
			for (int x = 0; x < 40; x++) {
				maxd = fmax(maxd, fabs(at(&s, x, y) - ref.hh[y * 40 + x]));
				maxh = fmax(maxh, fabs(ref.hh[y * 40 + x]));
			}
	}
	cr_assert_gt(maxh, 0.01, "the drops made waves");
	/* float (seed) against double (solver) arithmetic over 480 steps */
	cr_assert_lt(maxd, 2e-5, "max difference from the seed port %g", maxd);
	seed_shallow_free(&ref);
	pool_close(&pl);
}

/* ---- CG ---- */

/* Dense Gaussian elimination with partial pivoting, n <= 120. */
static void dense_solve(int n, double *a, double *b, double *x)
{
	for (int c = 0; c < n; c++) {
		int pv = c;
		for (int r = c + 1; r < n; r++)
			if (fabs(a[r * n + c]) > fabs(a[pv * n + c]))
				pv = r;
		for (int k = 0; k < n; k++) {
			double t = a[c * n + k];
			a[c * n + k] = a[pv * n + k];
			a[pv * n + k] = t;
		}
		double t = b[c];
		b[c] = b[pv];
		b[pv] = t;
		for (int r = c + 1; r < n; r++) {
			double f = a[r * n + c] / a[c * n + c];
			for (int k = c; k < n; k++)
				a[r * n + k] -= f * a[c * n + k];
			b[r] -= f * b[c];
		}
	}
	for (int r = n - 1; r >= 0; r--) {
		double s = b[r];
		for (int k = r + 1; k < n; k++)
			s -= a[r * n + k] * x[k];
		x[r] = s / a[r * n + r];
	}
}

Test(shallow, cg_matches_a_dense_solve_on_small_masks)
{
	tp_rng rng;
	tp_rng_seed(&rng, 7, 3);
	for (int trial = 0; trial < 40; trial++) {
		const int w = 4 + (int)tp_rng_below(&rng, 9), h = 4 + (int)tp_rng_below(&rng, 8);
		const int n = w * h;
		uint8_t mask[16 * 16], deg[16 * 16];
		double b[256], x[256], diag[256], r[256], p[256], q[256], z[256], pc[256], apc[256], part[8];
		int idx[256], m = 0;
		/* trial % 4 == 1: the rectangle's left column is the pool's edge (Neumann: the
		 * cells next to it have 3 neighbours) */
		const int edge = trial % 4 == 1;
		for (int k = 0; k < n; k++) {
			int i = k % w, j = k / w;
			int interior = i > 0 && j > 0 && i < w - 1 && j < h - 1;
			mask[k] = interior && tp_rng_unit(&rng) < 0.8;
			deg[k] = (uint8_t)(edge && i == 1 ? 3 : 4);
			b[k] = mask[k] ? tp_rng_range(&rng, -50, 200) : 1e9; /* off-mask b is ignored */
			x[k] = tp_rng_range(&rng, -5, 5);                       /* stale guess everywhere */
			diag[k] = trial % 3 == 2 ? tp_rng_range(&rng, 0, 3) : 0;
			r[k] = p[k] = q[k] = z[k] = pc[k] = apc[k] = 777; /* stale scratch */
			idx[k] = mask[k] ? m++ : -1;
		}
		if (m == 0)
			continue;
		const double scale = trial % 2 ? 0.37 : 1.0, shift = trial % 5 == 3 ? 0.004 : 0.0;
		/* every other pair of trials works on the rows' masked spans only (the solver's
		 * way), over the stale scratch outside them */
		int span[2 * 16];
		cg_problem pb = { .w = w, .h = h, .mask = mask, .deg = deg, .scale = scale,
				  .shift = shift, .diag = trial % 3 == 2 ? diag : NULL };
		cg_work wk = { .r = r, .p = p, .q = q, .z = z, .pc = pc, .part = part,
			       .span = (trial / 2) % 2 ? span : NULL, .apc = apc };
		cg_stats st = cg_solve(&pb, b, x, &wk, 1e-13, 0, 1000, 0);
		cr_assert(st.ok, "trial %d did not converge (resid %g)", trial, st.resid);

		/* the same system written out densely from its definition */
		double *a = calloc((size_t)m * m, sizeof *a), *bd = malloc(m * sizeof *bd);
		double *xd = malloc(m * sizeof *xd);
		for (int k = 0; k < n; k++) {
			if (!mask[k])
				continue;
			int row = idx[k];
			a[row * m + row] = scale * deg[k] + shift + (pb.diag ? diag[k] : 0);
			const int nb[4] = { k - 1, k + 1, k - w, k + w };
			for (int e = 0; e < 4; e++)
				if (mask[nb[e]])
					a[row * m + idx[nb[e]]] = -scale;
			bd[row] = b[k];
		}
		dense_solve(m, a, bd, xd);
		double err = 0, mag = 0;
		for (int k = 0; k < n; k++) {
			if (!mask[k]) {
				cr_assert_eq(x[k], 0.0, "trial %d: x off the mask must be cleared", trial);
				continue;
			}
			err = fmax(err, fabs(x[k] - xd[idx[k]]));
			mag = fmax(mag, fabs(xd[idx[k]]));
		}
		cr_assert_leq(err, 1e-9 * fmax(1, mag), "trial %d (%dx%d, %d unknowns): CG off by %g",
			      trial, w, h, m, err);
		free(a);
		free(bd);
		free(xd);
	}
}

Test(shallow, cg_bits_do_not_depend_on_the_parallel_path)
{
	enum { W = 70, H = 60 };
	static uint8_t mask[W * H], deg[W * H];
	static double b[W * H], x1[W * H], x2[W * H], r[W * H], p[W * H], q[W * H], z[W * H],
		pc[W * H], apc[W * H], part[16];
	for (int k = 0; k < W * H; k++) {
		int i = k % W, j = k / W;
		mask[k] = i > 0 && j > 0 && i < W - 1 && j < H - 1 && (i - 35) * (i - 35) + (j - 30) * (j - 30) < 700;
		deg[k] = 4;
		b[k] = mask[k] ? sin(0.3 * i) * cos(0.2 * j) * 100 : 0;
		x1[k] = x2[k] = 0;
	}
	static int span[2 * H];
	cg_problem pb = { .w = W, .h = H, .mask = mask, .deg = deg, .scale = 1, .shift = 0 };
	cg_work wk = { .r = r, .p = p, .q = q, .z = z, .pc = pc, .part = part, .span = span,
		       .apc = apc };
	cg_stats a = cg_solve(&pb, b, x1, &wk, 1e-10, 0, 500, 0);
	omp_set_num_threads(2);
	cg_stats c = cg_solve(&pb, b, x2, &wk, 1e-10, 0, 500, 1);
	cr_assert(a.ok && c.ok);
	cr_assert_eq(a.iters, c.iters);
	cr_assert_eq(memcmp(x1, x2, sizeof x1), 0, "serial and parallel CG differ");
}

/* ---- volume ---- */

static void volume_case(scene_boundary bnd, double rate)
{
	pool pl;
	pool_init(&pl, 96, 64, bnd);
	if (rate > 0)
		pool_param(&pl, "rate", rate);
	pool_box(&pl, 16, 10, 4, 0.5, 0, 0.2, 20, 20, 2.5, 50, 42);  /* dragged at 16 px/s */
	pool_box(&pl, 12, 12, 6, 0.4, 1, 0, 60, 18, 0, 60, 18);      /* floating */
	pool_open_ok(&pl);
	const double v0 = stat_of(&pl, "volume");
	tp_rng rng;
	tp_rng_seed(&rng, 11, (uint64_t)bnd);
	double moved = 0;
	for (int f = 0; f < 300; f++) {
		/* rain: drops of every size, anywhere, corners and edges included */
		for (int k = 0; k < 2; k++) {
			double x = tp_rng_range(&rng, -2, 98), y = tp_rng_range(&rng, -2, 66);
			double r = tp_rng_range(&rng, 0.3, 7), st = tp_rng_range(&rng, -1, 1.5);
			SH->drop(pl.p, x, y, r, st);
		}
		SH->drop(pl.p, 0.2, 0.3, 3, 1.0);
		cr_assert_eq(pool_step(&pl), 0);
		moved = fmax(moved, stat_of(&pl, "max_dev"));
	}
	const double v1 = stat_of(&pl, "volume");
	cr_assert_gt(moved, 0.2, "the pool moved");
	/* 1 internal step a frame at the default rate cap, 8 at the seed's */
	cr_assert_geq(stat_of(&pl, "substeps") * 300, rate > 0 ? 2400 : 300, "hundreds of steps");
	/* total water about 2.5e5 units; float round-off of a double sum */
	cr_assert_lt(fabs(v1 - v0), 1e-7, "volume %.12g -> %.12g (boundary %d)", v0, v1, (int)bnd);
	pool_close(&pl);
}

Test(shallow, volume_constant_with_reflect_edges) { volume_case(SCENE_BOUNDARY_REFLECT, 0); }
Test(shallow, volume_constant_with_wrap_edges) { volume_case(SCENE_BOUNDARY_WRAP, 0); }
Test(shallow, volume_constant_at_the_seed_rate) { volume_case(SCENE_BOUNDARY_REFLECT, 0.005); }

Test(shallow, drops_are_volume_neutral_and_shaped)
{
	pool pl;
	pool_init(&pl, 50, 40, SCENE_BOUNDARY_REFLECT);
	pool_open_ok(&pl);
	SH->drop(pl.p, 25, 20, 5, 2.0);
	tp_surface s = pool_surface(&pl);
	cr_assert_gt(at(&s, 24, 19), 1.8, "the centre rises by about the strength");
	cr_assert_lt(at(&s, 32, 19), 0, "a trough around it");
	cr_assert_lt(fabs(stat_of(&pl, "dvolume")), 1e-12);
	pool_close(&pl);
}

/* ---- boxes ---- */

Test(shallow, boxes_at_rest_leave_still_water_still)
{
	pool pl;
	pool_init(&pl, 80, 60, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "float_start", 1); /* "rest": floating boxes start at their draft */
	pool_box(&pl, 20, 14, 6, 0.5, 0, 0, 25, 30, 0, 25, 30);
	pool_box(&pl, 14, 14, 5, 0.6, 1, 0, 58, 24, 0, 58, 24);
	pool_box(&pl, 10, 8, 60, 1.0, 0, 0, 60, 48, 0, 60, 48); /* an island on the floor */
	pool_open_ok(&pl);
	tp_surface s0 = pool_surface(&pl);
	const double e0 = stat_of(&pl, "energy"); /* the resting slope at the box edges */
	float *h0 = malloc(sizeof *h0 * 80 * 60);
	for (int y = 0; y < 60; y++)
		for (int x = 0; x < 80; x++)
			h0[y * 80 + x] = at(&s0, x, y);
	double z0 = s0.boxes[1].z;
	cr_assert_lt(fabs(z0 + 3.0), 1e-9, "a density 0.6 box rests 3 of its 5 units deep");
	cr_assert_lt(fabs(s0.boxes[2].z + 40), 1e-9, "the island stands on the floor (depth 40)");
	pool_run(&pl, 60);
	tp_surface s = pool_surface(&pl);
	double dmax = 0;
	for (int y = 0; y < 60; y++)
		for (int x = 0; x < 80; x++)
			dmax = fmax(dmax, fabs(at(&s, x, y) - h0[y * 80 + x]));
	cr_assert_lt(dmax, 1e-4, "still water moved by %g", dmax);
	cr_assert_lt(fabs(s.boxes[1].z - z0), 1e-4, "the floating box moved by %g", s.boxes[1].z - z0);
	cr_assert_lt(fabs(stat_of(&pl, "energy") - e0), 1e-6 * e0, "energy %g -> %g", e0,
		     stat_of(&pl, "energy"));
	free(h0);
	pool_close(&pl);
}

Test(shallow, a_dragged_box_makes_a_wake_that_reaches_the_far_wall)
{
	pool pl;
	pool_init(&pl, 160, 100, SCENE_BOUNDARY_REFLECT);
	/* rests until t = 0.5 s, then goes along y = 30 at 20 px/s (the waves: 27 px/s) */
	pool_box(&pl, 16, 10, 4, 0.5, 0, 0.5, 20, 30, 3.0, 70, 30);
	pool_open_ok(&pl);
	pool_run(&pl, 14);
	tp_surface s = pool_surface(&pl);
	double far0 = 0;
	for (int x = 0; x < 160; x++)
		far0 = fmax(far0, fabs(at(&s, x, 99)));
	cr_assert_lt(far0, 1e-9, "nothing moves before the box does");
	double far = 0, behind = 0;
	for (int f = 0; f < 110; f++) {
		pool_run(&pl, 1);
		s = pool_surface(&pl);
		for (int x = 0; x < 160; x++)
			far = fmax(far, fabs(at(&s, x, 99)));
		if (f == 70) /* the box is at x ~ 70: the water it left behind is still moving */
			for (int x = 15; x < 50; x++)
				behind = fmax(behind, fabs(at(&s, x, 30)));
	}
	cr_assert_gt(behind, 0.02, "a wake behind the box (%g)", behind);
	cr_assert_gt(far, 0.01, "the waves reach the far wall (%g)", far);
	pool_close(&pl);
}

/* The rate cap sets the step length, not the look: a dragged box's waves at the default
 * cap 0.4 (1 internal step a frame here) against the lab's 0.005 (6): gamma follows rate,
 * so the box holds the water down as stiffly at both. (gamma scaled with the step length
 * instead gives an RMS ratio of 0.63 here.) */
Test(shallow, a_box_makes_the_same_waves_at_the_default_rate_cap_and_the_labs)
{
	pool pl[2];
	for (int k = 0; k < 2; k++) {
		pool_init(&pl[k], 160, 100, SCENE_BOUNDARY_REFLECT);
		if (k)
			pool_param(&pl[k], "rate", 0.005);
		pool_box(&pl[k], 16, 10, 4, 0.5, 0, 0.3, 30, 40, 2.3, 70, 55);
		pool_open_ok(&pl[k]);
		pool_run(&pl[k], 75);
	}
	cr_assert_lt(stat_of(&pl[0], "substeps"), stat_of(&pl[1], "substeps") / 2);
	tp_surface a = pool_surface(&pl[0]), b = pool_surface(&pl[1]);
	double ab = 0, aa = 0, bb = 0;
	for (int y = 0; y < 100; y++)
		for (int x = 0; x < 160; x++) {
			ab += (double)at(&a, x, y) * at(&b, x, y);
			aa += (double)at(&a, x, y) * at(&a, x, y);
			bb += (double)at(&b, x, y) * at(&b, x, y);
		}
	const double corr = ab / sqrt(aa * bb), rms = sqrt(aa / bb);
	cr_log_info("rate 0.4 against 0.005: correlation %.4f, RMS ratio %.4f", corr, rms);
	cr_assert_gt(corr, 0.98, "correlation %g", corr);
	cr_assert_lt(fabs(rms - 1), 0.05, "RMS ratio %g", rms);
	pool_close(&pl[0]);
	pool_close(&pl[1]);
}

static void settle_case(double density)
{
	pool pl;
	pool_init(&pl, 96, 96, SCENE_BOUNDARY_REFLECT);
	const double H = 8;
	pool_box(&pl, 24, 24, H, density, 1, 0, 48, 48, 0, 48, 48);
	pool_open_ok(&pl);
	double zmin = 0;
	for (int f = 0; f < 300; f++) {
		pool_run(&pl, 1);
		zmin = fmin(zmin, pool_surface(&pl).boxes[0].z);
	}
	tp_surface s = pool_surface(&pl);
	/* the water level around the box: a ring 6..12 px outside its footprint */
	double lv = 0;
	int n = 0;
	for (int y = 0; y < 96; y++)
		for (int x = 0; x < 96; x++) {
			double d = fmax(fabs(x + 0.5 - 48), fabs(y + 0.5 - 48)) - 12;
			if (d > 6 && d < 12) {
				lv += at(&s, x, y);
				n++;
			}
		}
	lv /= n;
	double sub = (lv - s.boxes[0].z) / H;
	cr_assert_lt(fabs(sub - density), 0.1 * density,
		     "density %g: %.3f of the height submerged (level %.3f, bottom %.3f)", density, sub,
		     lv, s.boxes[0].z);
	/* it got there by bobbing: dropped from the surface it overshot its draft */
	cr_assert_lt(zmin, s.boxes[0].z - 0.05 * H * density, "no bob (min %g, final %g)", zmin,
		     s.boxes[0].z);
	cr_assert_lt(fabs(s.boxes[0].tilt[0]) + fabs(s.boxes[0].tilt[1]), 1e-3, "settles level");
	pool_close(&pl);
}

Test(shallow, a_floating_box_of_density_half_settles_half_submerged) { settle_case(0.5); }
Test(shallow, a_light_floating_box_settles_higher) { settle_case(0.25); }

Test(shallow, a_wave_tilts_and_lifts_a_floating_box)
{
	pool pl;
	pool_init(&pl, 120, 60, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "float_start", 1);
	pool_box(&pl, 20, 20, 6, 0.5, 1, 0, 80, 30, 0, 80, 30);
	pool_open_ok(&pl);
	SH->drop(pl.p, 40, 30, 10, 4.0);
	double tilt = 0, dz = 0, z0 = pool_surface(&pl).boxes[0].z;
	for (int f = 0; f < 100; f++) {
		pool_run(&pl, 1);
		tp_surface s = pool_surface(&pl);
		tilt = fmax(tilt, fabs(s.boxes[0].tilt[1]));
		dz = fmax(dz, fabs(s.boxes[0].z - z0));
	}
	cr_assert_gt(tilt, 1e-3, "the wave front tips the box (%g rad)", tilt);
	cr_assert_gt(dz, 0.01, "and moves it up and down (%g)", dz);
	cr_assert_lt(tilt, 0.2, "without tipping over");
	pool_close(&pl);
}

/* ---- parameters ---- */

Test(shallow, refuses_parameters_that_would_blow_up)
{
	pool pl;
	tp_err err;
	pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "rate", 0.6);
	pool_param(&pl, "substeps", 1); /* (from a speed, rate is only an upper bound) */
	cr_assert_eq(pool_open(&pl, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "params.rate: 0.6 would blow up because") != NULL, "%s", err.msg);
	cr_assert(strstr(err.msg, "4*rate < 1 + d") != NULL, "%s", err.msg);

	/* one step per frame: d = 0.996^(240/30) = 0.968 per step, 4 * 0.49 < 1.968, but the
	 * viscous term's 8 * 1 / 30 per step is too much on top */
	pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "rate", 0.49);
	pool_param(&pl, "substeps", 1);
	cr_assert_eq(pool_open(&pl, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "params.viscosity: 1 would blow up because") != NULL, "%s", err.msg);

	pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "rate", 0.49);
	pool_param(&pl, "substeps", 1);
	pool_param(&pl, "viscosity", 0);
	cr_assert_eq(pool_open(&pl, &err), 0, "%s", err.msg);
	SH->drop(pl.p, 16, 16, 3, 1);
	pool_run(&pl, 200);
	cr_assert_lt(stat_of(&pl, "max_dev"), 2, "stable at the limit");
	pool_close(&pl);

	/* the auto rate with a large viscosity: more internal steps rather than a refusal
	 * (640x360 takes 6 a frame at viscosity 1; at 20, 8 keep 4 rate + 8 mu within 90% of
	 * 1 + d) and the water stays calm */
	pool_init(&pl, 640, 360, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "viscosity", 20);
	cr_assert_eq(pool_open(&pl, &err), 0, "%s", err.msg);
	cr_assert_eq(stat_of(&pl, "substeps"), 8);
	SH->drop(pl.p, 320, 180, 4, 1);
	pool_run(&pl, 30);
	cr_assert_lt(stat_of(&pl, "max_dev"), 1, "stable with a large viscosity");
	pool_close(&pl);

	pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "speed", 1e6);
	cr_assert_eq(pool_open(&pl, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "params.speed") != NULL, "%s", err.msg);

	/* a box faster than the waves (5.4 px/s here) would plough a pile-up without bound */
	pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
	pool_box(&pl, 6, 4, 2, 0.5, 0, 0, 5, 16, 2, 27, 16);
	cr_assert_eq(pool_open(&pl, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "boxes[0].path: moves at 11 px/s") != NULL, "%s", err.msg);
	pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
	pool_box(&pl, 6, 4, 2, 0.5, 0, 0, 5, 16, 2, 13, 16); /* 4 px/s is fine */
	cr_assert_eq(pool_open(&pl, &err), 0, "%s", err.msg);
	pool_close(&pl);

	/* gamma near 1 at a large step: each step would give back all of the virtual height
	 * and the box solve (rows divided by 1 - gamma) is singular; without boxes it is
	 * unused, and a gamma below the bound the message names runs */
	for (int boxes = 0; boxes < 2; boxes++) {
		pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
		pool_param(&pl, "rate", 0.1);
		pool_param(&pl, "gamma", 0.9);
		if (boxes)
			pool_box(&pl, 8, 6, 4, 0.5, 0, 0, 16, 16, 1, 16, 16);
		cr_assert_eq(pool_open(&pl, &err), boxes ? TP_EINPUT : 0, "%s", err.msg);
		if (!boxes)
			pool_close(&pl);
	}
	cr_assert(strstr(err.msg, "params.gamma: 0.9 is too stiff for the boxes") != NULL, "%s",
		  err.msg);
	const char *bound = strstr(err.msg, "use gamma < ");
	cr_assert(bound != NULL, "%s", err.msg);
	const double gmax = strtod(bound + strlen("use gamma < "), NULL);
	cr_assert(gmax > 0.1 && gmax < 0.9, "%s", err.msg);
	pool_init(&pl, 32, 32, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "rate", 0.1);
	pool_param(&pl, "gamma", gmax * 0.99);
	pool_box(&pl, 8, 6, 4, 0.5, 0, 0, 16, 16, 1, 16, 16);
	cr_assert_eq(pool_open(&pl, &err), 0, "%s", err.msg);
	pool_run(&pl, 60);
	cr_log_info("max_dev %g energy %g", stat_of(&pl, "max_dev"), stat_of(&pl, "energy"));
	cr_assert_lt(stat_of(&pl, "max_dev"), 10, "a still box in still water stays calm");
	pool_close(&pl);
}

Test(shallow, scales_steps_and_damping_to_the_pool)
{
	pool pl;
	/* the seed's rate, given: the lab's steps */
	pool_init(&pl, 100, 100, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "rate", 0.005);
	pool_open_ok(&pl);
	cr_assert_eq(stat_of(&pl, "substeps"), 8, "the lab's 8 steps per frame at 100 cells");
	pool_close(&pl);
	pool_init(&pl, 640, 360, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "rate", 0.005);
	pool_open_ok(&pl);
	cr_assert_eq(stat_of(&pl, "substeps"), 52, "6.4 times the pool, 6.4 times the speed");
	/* 0.17 x 640 px/s exactly: rate lowered from 0.005 to make it so */
	cr_assert_lt(fabs(stat_of(&pl, "speed") - sqrt(0.005) * 240 * 6.4), 1e-9);
	pool_close(&pl);
	/* the default cap, 0.4: ceil(16.97 / 30 / sqrt(0.4)) = 1 and ceil(108.6 / 30 /
	 * sqrt(0.4)) = 6 steps a frame, the same speeds */
	pool_init(&pl, 100, 100, SCENE_BOUNDARY_REFLECT);
	pool_open_ok(&pl);
	cr_assert_eq(stat_of(&pl, "substeps"), 1);
	cr_assert_lt(fabs(stat_of(&pl, "speed") - sqrt(0.005) * 240), 1e-9);
	pool_close(&pl);
	pool_init(&pl, 640, 360, SCENE_BOUNDARY_REFLECT);
	pool_open_ok(&pl);
	cr_assert_eq(stat_of(&pl, "substeps"), 6);
	cr_assert_lt(fabs(stat_of(&pl, "speed") - sqrt(0.005) * 240 * 6.4), 1e-9);
	pool_close(&pl);
	/* substeps given without a rate: the seed's rate, as before the cap was raised */
	pool_init(&pl, 100, 100, SCENE_BOUNDARY_REFLECT);
	pool_param(&pl, "substeps", 8);
	pool_open_ok(&pl);
	cr_assert_lt(fabs(stat_of(&pl, "speed") - sqrt(0.005) * 240), 1e-9);
	pool_close(&pl);
}

/* The front of a wave running down a channel (600 x 24, reflect: the walls fold the
 * ring into a plane wave; no damping or viscosity, so slow waves keep their height): the
 * last x of the middle row where |eta| reaches a tenth of the row's largest, interpolated
 * linearly between samples. Measured at two times, its speed is the speed asked for,
 * within 1%, for speeds that need 1, 2, 3 and many internal steps a frame (before, the
 * fewest steps at the given rate made them up to twice as fast), and for gravity with
 * depth (c^2 = g D). */
static double front_x(pool *pl)
{
	tp_surface s = pool_surface(pl);
	double top = 0;
	for (int x = 0; x < s.w; x++)
		top = fmax(top, fabs(at(&s, x, 12)));
	const double th = 0.1 * top;
	int x = s.w - 1;
	while (x > 0 && fabs(at(&s, x, 12)) < th)
		x--;
	const double a = fabs(at(&s, x, 12)), b = fabs(at(&s, x + 1, 12));
	return x + (a - th) / (a - b);
}

Test(shallow, the_speed_asked_for_is_the_speed_made)
{
	/* At the seed's rate 0.005 (i < 6) and 30 fps: sqrt(0.005) * 30 = 2.12 px/s a step; 2,
	 * 3, 5, 6 and 100 px/s need 1, 2, 3, 3 and 48 internal steps. At the default cap 0.4
	 * (i >= 6): 18.97 px/s a step; 18, 30, 50 and 100 px/s need 1, 2, 3 and 6. Gravity 250
	 * x depth 40 = 100^2 at both. */
	const double speeds[] = {2, 3, 5, 6, 100, 0, 18, 30, 50, 100, 0};
	for (int i = 0; i < 11; i++) {
		pool pl;
		pool_init(&pl, 600, 24, SCENE_BOUNDARY_REFLECT);
		pool_param(&pl, "damping", 1);
		pool_param(&pl, "viscosity", 0);
		if (i < 6)
			pool_param(&pl, "rate", 0.005);
		const double want = speeds[i] > 0 ? speeds[i] : 100;
		if (speeds[i] > 0)
			pool_param(&pl, "speed", speeds[i]);
		else
			pool_param(&pl, "gravity", 250);
		pool_open_ok(&pl);
		cr_assert_lt(fabs(stat_of(&pl, "speed") - want), 1e-9 * want);
		/* the front 120 and 240 px past the drop: 1.2 s and 2.4 s at 100 px/s */
		const int f1 = (int)ceil(FPS * 120 / want);
		SH->drop(pl.p, 100, 12, 6, 1);
		pool_run(&pl, f1);
		double x1 = front_x(&pl);
		pool_run(&pl, f1);
		double x2 = front_x(&pl);
		double made = (x2 - x1) / (f1 / FPS);
		cr_log_info("asked %g px/s (%g internal steps): made %.3f", want,
			    stat_of(&pl, "substeps"), made);
		cr_assert_lt(fabs(made / want - 1), 0.01, "asked %g px/s, made %.3f", want, made);
		pool_close(&pl);
	}
	/* gravity and a speed, or gravity and substeps: two wave speeds, refused */
	const char *other[] = {"speed", "substeps"};
	for (int i = 0; i < 2; i++) {
		pool pl;
		tp_err err;
		pool_init(&pl, 40, 40, SCENE_BOUNDARY_REFLECT);
		pool_param(&pl, "gravity", 250);
		pool_param(&pl, other[i], 4);
		cr_assert_eq(pool_open(&pl, &err), TP_EINPUT);
		cr_assert(strstr(err.msg, "params.gravity") && strstr(err.msg, other[i]), "%s",
			  err.msg);
	}
}

/* ---- boundaries ---- */

Test(shallow, absorbing_edges_swallow_the_waves)
{
	double e[2];
	for (int k = 0; k < 2; k++) {
		pool pl;
		pool_init(&pl, 80, 80, k ? SCENE_BOUNDARY_ABSORB : SCENE_BOUNDARY_REFLECT);
		pool_param(&pl, "damping", 1.0);
		pool_open_ok(&pl);
		SH->drop(pl.p, 40, 40, 4, 1);
		pool_run(&pl, 200);
		e[k] = stat_of(&pl, "energy");
		pool_close(&pl);
	}
	cr_assert_lt(e[1], 0.2 * e[0], "absorb %g vs reflect %g", e[1], e[0]);
}

Test(shallow, wrap_is_periodic)
{
	pool a, b;
	pool_init(&a, 60, 40, SCENE_BOUNDARY_WRAP);
	pool_init(&b, 60, 40, SCENE_BOUNDARY_WRAP);
	pool_open_ok(&a);
	pool_open_ok(&b);
	SH->drop(a.p, 10, 10, 4, 1);
	SH->drop(b.p, 10 + 25, 10 + 15, 4, 1); /* the same drop, shifted */
	pool_run(&a, 40);
	pool_run(&b, 40);
	tp_surface sa = pool_surface(&a), sb = pool_surface(&b);
	cr_assert(sa.wrap);
	double d = 0;
	for (int y = 0; y < 40; y++)
		for (int x = 0; x < 60; x++)
			d = fmax(d, fabs(at(&sa, x, y) - at(&sb, (x + 25) % 60, (y + 15) % 40)));
	cr_assert_lt(d, 1e-6, "shifted pools differ by %g", d);
	pool_close(&a);
	pool_close(&b);
}

/* ---- determinism, checkpoints, golden ---- */

/* Two dragged boxes whose regions overlap, a floating one, drops: the busy case. */
/* Opens pl, steps it `frames` frames with a drop before each at (x0 + dx f, y), and
 * returns the hash of the last surface (pl is closed). */
static uint64_t rain_and_hash(pool *pl, int frames, double x0, double dx, double y)
{
	pool_open_ok(pl);
	for (int f = 0; f < frames; f++) {
		SH->drop(pl->p, x0 + dx * f, y, 3, 0.5);
		cr_assert_eq(pool_step(pl), 0);
	}
	tp_surface s = pool_surface(pl);
	uint64_t hsh = surface_hash(&s);
	pool_close(pl);
	return hsh;
}

static uint64_t busy_hash(int threads, int frames)
{
	omp_set_num_threads(threads);
	pool pl;
	pool_init(&pl, 150, 130, SCENE_BOUNDARY_REFLECT);
	pool_box(&pl, 30, 20, 4, 0.5, 0, 0, 30, 40, 2, 70, 50);
	pool_box(&pl, 120, 110, 3, 0.3, 0, 0, 75, 65, 2, 76, 66); /* big: parallel CG */
	pool_box(&pl, 16, 16, 5, 0.5, 1, 0, 20, 110, 0, 20, 110);
	return rain_and_hash(&pl, frames, 10, 7, 120);
}

Test(shallow, same_bits_with_one_and_two_threads)
{
	uint64_t a = busy_hash(1, 5), b = busy_hash(2, 5);
	cr_assert_eq(a, b, "1 thread %016llx, 2 threads %016llx", (unsigned long long)a,
		     (unsigned long long)b);
}

/* A pool large enough (PAR_CELLS) that with two threads the boxes are coupled on one
 * thread while the other updates the rows outside their clusters (wave_and_couple): the
 * same bits as one thread doing both in turn, with reflecting and wrapping edges (a box
 * across the seam, a floating one, two that merge into one cluster). */
static uint64_t big_hash(int threads, scene_boundary edge)
{
	omp_set_num_threads(threads);
	pool pl;
	pool_init(&pl, 320, 240, edge);
	pool_box(&pl, 30, 20, 4, 0.5, 0, 0, 30, 40, 2, 90, 60);
	pool_box(&pl, 24, 18, 4, 0.5, 0, 0, 60, 52, 2, 120, 70); /* meets the first */
	pool_box(&pl, 20, 16, 5, 0.5, 1, 0, 200, 150, 0, 200, 150);
	pool_box(&pl, 26, 14, 3, 0.4, 0, 0, 160, 236, 2, 170, 232); /* across the seam */
	return rain_and_hash(&pl, 6, 40, 30, 120);
}

Test(shallow, boxes_coupled_beside_the_wave_update_give_the_same_bits)
{
	for (int wrap = 0; wrap < 2; wrap++) {
		const scene_boundary e = wrap ? SCENE_BOUNDARY_WRAP : SCENE_BOUNDARY_REFLECT;
		const uint64_t a = big_hash(1, e), b = big_hash(2, e);
		cr_assert_eq(a, b, "wrap %d: 1 thread %016llx, 2 threads %016llx", wrap,
			     (unsigned long long)a, (unsigned long long)b);
	}
}

/* The whole state (a checkpoint's bytes) after rain of every size and dragged boxes in a
 * pool that is calm at first, with the wave update skipping the calm water and updating
 * every cell: the same bytes at every edge, with one thread and two, and the skip does
 * leave cells out (the calm state after the first steps). */
static char *calm_state(scene_boundary edge, int calm, int threads, size_t *len)
{
	omp_set_num_threads(threads);
	solver_set_every_cell(!calm);
	pool pl;
	pool_init(&pl, 300, 230, edge);
	pool_box(&pl, 30, 20, 4, 0.5, 0, 0.1, 40, 60, 2.1, 110, 80);
	pool_box(&pl, 20, 16, 5, 0.5, 1, 0, 200, 150, 0, 200, 150);
	pool_box(&pl, 26, 14, 3, 0.4, 0, 0, 160, 226, 1, 170, 222); /* across the seam */
	/* big: with absorbing edges (the coupling after the whole update) the clusters are
	 * solved in parallel */
	pool_box(&pl, 130, 110, 4, 0.5, 0, 0, 230, 95, 2.1, 235, 100);
	pool_open_ok(&pl);
	tp_rng rng;
	tp_rng_seed(&rng, 5, (uint64_t)edge);
	for (int f = 0; f < 24; f++) {
		if (f % 3 == 0) {
			double x = tp_rng_range(&rng, -3, 303), y = tp_rng_range(&rng, -3, 233);
			SH->drop(pl.p, x, y, tp_rng_range(&rng, 0.3, 9), tp_rng_range(&rng, -1, 1.5));
		}
		if (f == 10) /* the seed's rule at a corner and on an edge */
			SH->drop(pl.p, 0.5, 229.5, 0.5, 0.8), SH->drop(pl.p, 299.5, 100.5, 0.5, -0.6);
		cr_assert_eq(pool_step(&pl), 0);
	}
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	tp_err err;
	cr_assert_eq(SH->save(pl.p, f, &err), 0);
	fclose(f);
	pool_close(&pl);
	solver_set_every_cell(0);
	return buf;
}

Test(shallow, skipping_calm_water_gives_the_same_bits)
{
	const scene_boundary edges[] = { SCENE_BOUNDARY_REFLECT, SCENE_BOUNDARY_WRAP,
					 SCENE_BOUNDARY_ABSORB };
	for (int e = 0; e < 3; e++)
		for (int threads = 1; threads <= 2; threads++) {
			size_t na, nb;
			char *a = calm_state(edges[e], 1, threads, &na);
			char *b = calm_state(edges[e], 0, threads, &nb);
			cr_assert_eq(na, nb);
			cr_assert(memcmp(a, b, na) == 0, "edge %d, %d threads: the states differ", e,
				  threads);
			free(a);
			free(b);
		}
}

/* After a drop in a calm pool the update skips what the wave has not reached: the spans of
 * the rows far from it stay empty. */
Test(shallow, calm_water_is_left_out_of_the_update)
{
	pool pl;
	pool_init(&pl, 400, 300, SCENE_BOUNDARY_REFLECT);
	pool_open_ok(&pl);
	SH->drop(pl.p, 100, 80, 4, 1);
	pool_run(&pl, 3);
	const shallow *s = pl.p;
	int empty = 0, narrow = 0;
	for (int y = 0; y < s->h; y++) {
		empty += s->sp_eta[2 * y] > s->sp_eta[2 * y + 1];
		narrow += s->sp_eta[2 * y + 1] - s->sp_eta[2 * y] < s->w / 2;
	}
	cr_assert_gt(empty, s->h / 4, "%d of %d rows calm", empty, s->h);
	cr_assert_eq(narrow, s->h, "every row's span covers less than half of it");
	pool_close(&pl);
}

Test(shallow, golden_hash)
{
	/* Recorded from this build's arithmetic; an intended change of the model updates it
	 * (last: the default rate cap 0.4, heights below 1e-30 made still water, the CG warm
	 * start extrapolated). */
	uint64_t h = busy_hash(2, 5);
	cr_assert_eq(h, 0x3a8c62b2abf17879ull, "golden hash is %016llx", (unsigned long long)h);
}

Test(shallow, checkpoint_resumes_exactly)
{
	pool a, b;
	pool_init(&a, 64, 48, SCENE_BOUNDARY_REFLECT);
	pool_box(&a, 12, 8, 4, 0.5, 0, 0, 15, 20, 4, 50, 25);
	pool_box(&a, 10, 10, 4, 0.5, 1, 0, 40, 35, 0, 40, 35);
	b = a;
	b.sc.params = b.params;
	b.sc.boxes = b.boxes;
	for (int i = 0; i < 2; i++)
		b.boxes[i].path.keys = b.keys[i];
	pool_open_ok(&a);
	SH->drop(a.p, 30, 10, 4, 1);
	pool_run(&a, 20);
	FILE *f = tmpfile();
	tp_err err;
	cr_assert_eq(SH->save(a.p, f, &err), 0, "%s", err.msg);
	rewind(f);
	pool_open_ok(&b);
	cr_assert_eq(SH->load(b.p, f, &err), 0, "%s", err.msg);
	fclose(f);
	b.frame = a.frame;
	pool_run(&a, 15);
	pool_run(&b, 15);
	tp_surface sa = pool_surface(&a), sb = pool_surface(&b);
	cr_assert_eq(surface_hash(&sa), surface_hash(&sb), "resumed run differs");
	pool_close(&a);
	pool_close(&b);
}

/* ---- the example scenes ---- */

Test(shallow, example_scenes_stay_finite, .timeout = 120)
{
	/* Their first frames (drop-ins, the paddle's first stroke, rain on the island): the
	 * stats and poses of every frame are finite. A whole scene takes several seconds
	 * (52 steps a frame at 640x360), too long for the suite: full runs are checked with
	 * `tidepool render --stats`, and test_golden renders 16 frames of each. */
	omp_set_num_threads(1);
	glob_t g;
	cr_assert_eq(glob("scenes/shallow_*.json", 0, NULL, &g), 0, "no shallow example scenes");
	cr_assert_geq(g.gl_pathc, 3);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		scene *sc;
		stepper *st;
		tp_err err;
#if defined(__SANITIZE_ADDRESS__)
		scene_overrides ov = { .frames = 3 }; /* ten times slower under the sanitizers */
#else
		scene_overrides ov = { .frames = 10 };
#endif
		cr_assert_eq(scene_load(g.gl_pathv[i], &ov, tp_solvers, &sc, &err), 0, "%s", err.msg);
		cr_assert_eq(stepper_create(sc, 2, &st, &err), 0, "%s: %s", g.gl_pathv[i], err.msg);
		for (int f = 0; f < sc->frames; f++) {
			cr_assert_eq(stepper_next(st, &err), 0, "%s frame %d: %s", g.gl_pathv[i], f, err.msg);
			tp_stats ss;
			stepper_stats(st, &ss);
			for (int k = 0; k < ss.n; k++)
				cr_assert(isfinite(ss.value[k]), "%s frame %d: %s = %g", g.gl_pathv[i], f,
					  ss.name[k], ss.value[k]);
			tp_surface s;
			stepper_surface(st, &s);
			for (int b = 0; b < s.nboxes; b++)
				cr_assert(isfinite(s.boxes[b].x + s.boxes[b].y + s.boxes[b].z + s.boxes[b].tilt[0] +
						   s.boxes[b].tilt[1]));
			cr_assert_lt(fabs(at(&s, s.w / 2, s.h / 2)), 100);
		}
		stepper_destroy(st);
		scene_destroy(sc);
	}
	globfree(&g);
}

/* ---- render_boxes ---- */

#include "render/render_impl.h"

/* A 120x80 frame of flat grey water and one box pose; returns the pixel (x, y). */
typedef struct box_pic {
	tp_image img;
	scene sc;
	scene_box box;
	tp_box_pose pose;
	float scratch[120 * 80 * 4];
} box_pic;

static void box_pic_draw(box_pic *bp, int shadows, int wrap)
{
	tp_image_free(&bp->img);
	cr_assert_eq(tp_image_alloc(&bp->img, 120, 80, TP_RGB8), 0);
	for (int y = 0; y < 80; y++)
		memset(tp_image_row(&bp->img, y), 100, 3 * 120);
	bp->sc.render.shadows = shadows;
	bp->sc.boxes = &bp->box;
	bp->sc.nboxes = 1;
	tp_surface s = { .kind = TP_SURFACE_HEIGHT, .w = 120, .h = 80, .nboxes = 1, .boxes = &bp->pose,
			 .wrap = wrap };
	render_in in = { .px = 1, .sc = &bp->sc, .surf = &s, .w = 120, .h = 80, .wrap = wrap,
			 .scratch = bp->scratch };
	render_boxes(&in, &bp->img);
}

static const uint8_t *px(const box_pic *bp, int x, int y) { return tp_image_row(&bp->img, y) + 3 * x; }

static int grey(const box_pic *bp, int x, int y)
{
	const uint8_t *p = px(bp, x, y);
	return p[0] == 100 && p[1] == 100 && p[2] == 100;
}

Test(boxes_render, a_lit_block_with_or_without_its_shadow)
{
	static box_pic bp;
	memset(&bp, 0, sizeof bp);
	bp.box = (scene_box){ { 30, 20 }, 20, 0.5, 0, { 0, NULL } };
	bp.pose = (tp_box_pose){ .x = 50, .y = 35, .z = -4 }; /* top 16 units above the water */
	box_pic_draw(&bp, 0, 0);
	uint8_t c[3];
	memcpy(c, px(&bp, 50, 35), 3);
	cr_assert(c[0] > c[2] + 30, "the top face has the box's warm colour (%d %d %d)", c[0], c[1], c[2]);
	cr_assert(!grey(&bp, 37, 27) && !grey(&bp, 63, 43), "covers its footprint");
	cr_assert(grey(&bp, 33, 35) && grey(&bp, 67, 35) && grey(&bp, 50, 23) && grey(&bp, 50, 47),
		  "and nothing outside it");
	cr_assert(grey(&bp, 70, 50), "no shadow when shadows are off");
	/* the bevel: the edge facing the sun (up-left) is lighter than the one facing away */
	cr_assert_gt(px(&bp, 36, 35)[0] + 0, px(&bp, 64, 35)[0]);

	box_pic_draw(&bp, 1, 0);
	/* the sun is up-left: the shadow falls down-right, 16 units x (0.43, 0.55) away */
	const uint8_t *sh = px(&bp, 70, 50);
	cr_assert(sh[0] < 90 && sh[0] == sh[1] && sh[1] == sh[2], "shadow (%d %d %d)", sh[0], sh[1], sh[2]);
	cr_assert(grey(&bp, 30, 20), "only down-right of the box");
	cr_assert_eq(px(&bp, 50, 35)[0], c[0], "the box is drawn over its shadow");
	tp_image_free(&bp.img);
}

Test(boxes_render, tilts_turn_and_wrap)
{
	static box_pic bp;
	memset(&bp, 0, sizeof bp);
	bp.box = (scene_box){ { 30, 20 }, 10, 0.5, 0, { 0, NULL } };
	bp.pose = (tp_box_pose){ .x = 50, .y = 40, .z = -5 };
	box_pic_draw(&bp, 0, 0);
	int level = px(&bp, 50, 40)[0];
	/* tipped towards the sun (up-left) the top is brighter, away from it darker;
	 * bottom(u) = z - u sin(tilt1): tilt1 > 0 lowers the +u (right) side */
	bp.pose.tilt[1] = -0.3;
	box_pic_draw(&bp, 0, 0);
	int towards = px(&bp, 50, 40)[0];
	bp.pose.tilt[1] = 0.3;
	box_pic_draw(&bp, 0, 0);
	int away = px(&bp, 50, 40)[0];
	cr_assert(towards > level && level > away, "lighting follows the tilt: %d %d %d", towards, level,
		  away);
	/* turned 90 degrees the footprint is 20 wide and 30 tall */
	bp.pose = (tp_box_pose){ .x = 50, .y = 40, .angle = 90, .z = -5 };
	box_pic_draw(&bp, 0, 0);
	cr_assert(!grey(&bp, 50, 27) && grey(&bp, 50, 23) && grey(&bp, 37, 40));
	/* with wrap a box on the right edge shows on the left */
	bp.pose = (tp_box_pose){ .x = 115, .y = 40, .z = -5 };
	box_pic_draw(&bp, 0, 1);
	cr_assert(!grey(&bp, 5, 40) && !grey(&bp, 117, 40) && grey(&bp, 60, 40));
	box_pic_draw(&bp, 0, 0);
	cr_assert(grey(&bp, 5, 40), "but not without");
	/* a pose that is not a number draws nothing */
	bp.pose.x = NAN;
	box_pic_draw(&bp, 1, 0);
	for (int y = 0; y < 80; y++)
		for (int x = 0; x < 120; x++)
			cr_assert(grey(&bp, x, y));
	tp_image_free(&bp.img);
}
