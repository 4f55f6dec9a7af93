/* The integer solvers hooke (seed 000) and ripple (seed 001): bit-exact against the plain
 * seed ports in tests/reference/ (drops, rain, boxes, every boundary), the same bits with 1
 * and 2 threads, the seeds' numbers by hand, and the physics (symmetry, damping, still
 * water, periodic wrap, absorbing edges, islands and wakes), stats and checkpoints. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "solvers/intgrid.h"
#include "solvers/solver.h"
#include "util/cpu.h"
#include "util/rng.h"

#define DT (1.0 / 30.0)

/* A pool: a minimal scene (plain data, set field by field) and a solver made from it. */
typedef struct pool {
	scene sc;
	scene_box boxes[2];
	scene_key keys[2];
	scene_param params[6];
	tp_box_pose poses[2];
	solver *s;
	const tp_solver *d;
	void *p;
} pool;

static const scene_boundary boundaries[] = {SCENE_BOUNDARY_REFLECT, SCENE_BOUNDARY_WRAP,
					    SCENE_BOUNDARY_ABSORB};
static const char *const bnames[] = {"reflect", "absorb", "wrap"};
static const char *const solvers[] = {"hooke", "ripple"};

/* Two boxes: a still island turned 30 degrees and a box that sails and turns (placed so
 * that for wrap it crosses the right edge). Poses at t come from box_poses(). */
static void add_boxes(pool *pl)
{
	scene *sc = &pl->sc;
	pl->keys[0] = (scene_key){0, 0.3 * sc->width, 0.35 * sc->height, 30};
	pl->keys[1] = (scene_key){0, 0.7 * sc->width, 0.6 * sc->height, 0};
	pl->boxes[0] = (scene_box){.size = {9, 5}, .height = 1, .path = {1, &pl->keys[0]}};
	pl->boxes[1] = (scene_box){.size = {7, 4}, .height = 1, .path = {1, &pl->keys[1]}};
	sc->boxes = pl->boxes;
	sc->nboxes = 2;
}

static void box_poses(pool *pl, double t)
{
	pl->poses[0] = (tp_box_pose){.x = pl->keys[0].x, .y = pl->keys[0].y, .angle = 30};
	pl->poses[1] = (tp_box_pose){.x = pl->keys[1].x + 25 * t,
				     .y = pl->keys[1].y - 6 * t,
				     .angle = 40 * t,
				     .vx = 25,
				     .vy = -6};
}

/* ripple's and hooke's scheme in pools opened without one: 0 seed, 1 isotropic */
static int ripple_scheme;

static void pool_open(pool *pl, const char *name, int w, int h, scene_boundary b, int boxes,
		      const scene_param *params, int nparams)
{
	memset(pl, 0, sizeof *pl);
	pl->sc.path = "test.json";
	pl->sc.width = w;
	pl->sc.height = h;
	pl->sc.fps = 30;
	pl->sc.substeps = 1;
	pl->sc.boundary = b;
	pl->sc.solver = solver_find(name);
	cr_assert_not_null(pl->sc.solver, "%s is registered", name);
	cr_assert(nparams <= 4);
	int given = 0;
	for (int i = 0; i < nparams; i++) {
		pl->params[i] = params[i];
		given |= !strcmp(params[i].name, "scheme");
	}
	/* the seed scheme unless asked otherwise (ripple_scheme): most of these tests hold
	 * it to the seed port */
	if (!given && (!strcmp(name, "ripple") || !strcmp(name, "hooke")))
		pl->params[nparams++] = (scene_param){"scheme", ripple_scheme};
	pl->sc.params = pl->params;
	pl->sc.nparams = nparams;
	if (boxes)
		add_boxes(pl);
	tp_err err;
	cr_assert_eq(solver_create(&pl->sc, 1, &pl->s, &err), 0, "%s", err.msg);
	pl->d = solver_desc(pl->s);
	pl->p = solver_priv(pl->s);
}

static void pool_close(pool *pl)
{
	solver_destroy(pl->s);
}

static double opt(pool *pl, const char *name)
{
	const tp_option *o = tp_opts_find(pl->d->kind.options, name);
	cr_assert_not_null(o, "option %s", name);
	return tp_opts_get(pl->p, o);
}

static void pool_step(pool *pl, int k)
{
	tp_step_in in = {.t = (k + 1) * DT, .dt = DT};
	if (pl->sc.nboxes) {
		box_poses(pl, in.t);
		in.boxes = pl->poses;
	}
	cr_assert_eq(pl->d->step(pl->p, &in), 0);
}

static tp_surface surf(pool *pl)
{
	tp_surface s;
	pl->d->surface(pl->p, &s);
	return s;
}

static int32_t at(const tp_surface *s, int x, int y)
{
	return ((const int32_t *)s->data)[(ptrdiff_t)y * s->stride + x];
}

static double stat(pool *pl, const char *name)
{
	tp_stats st = {0};
	pl->d->stats(pl->p, &st);
	for (int i = 0; i < st.n; i++)
		if (!strcmp(st.name[i], name))
			return st.value[i];
	cr_assert_fail("no stat %s", name);
	return 0;
}

/* The reference port of the same solver, configured from the pool's options. */
typedef struct refsim {
	int ripple;
	ref_hooke hk;
	ref_ripple rp;
} refsim;

static void ref_open(refsim *r, pool *pl)
{
	memset(r, 0, sizeof *r);
	r->ripple = !strcmp(pl->d->kind.name, "ripple");
	int u = (int)opt(pl, "unit"), sp = (int)opt(pl, "sponge");
	double wake = opt(pl, "wake");
	if (r->ripple) {
		cr_assert_eq(ref_ripple_init(&r->rp, pl->sc.width, pl->sc.height, pl->sc.boundary,
					     u, sp, wake),
			     0);
		r->rp.damping = (int)opt(pl, "damping");
	} else {
		cr_assert_eq(ref_hooke_init(&r->hk, pl->sc.width, pl->sc.height, pl->sc.boundary, u,
					    sp, wake),
			     0);
		r->hk.edge = (int)opt(pl, "edge");
		r->hk.corner = (int)opt(pl, "corner");
		r->hk.vshift = (int)opt(pl, "velocity_damping");
		r->hk.hshift = (int)opt(pl, "height_damping");
	}
}

static void ref_close(refsim *r)
{
	if (r->ripple)
		ref_ripple_free(&r->rp);
	else
		ref_hooke_free(&r->hk);
}

static void ref_drop_(refsim *r, double x, double y, double rad, double s)
{
	if (r->ripple)
		ref_ripple_drop(&r->rp, x, y, rad, s);
	else
		ref_hooke_drop(&r->hk, x, y, rad, s);
}

static void ref_step_(refsim *r, pool *pl)
{
	const tp_box_pose *poses = pl->sc.nboxes ? pl->poses : NULL; /* pool_step() set them */
	if (r->ripple)
		ref_ripple_step(&r->rp, pl->sc.boxes, poses, pl->sc.nboxes, DT);
	else
		ref_hooke_step(&r->hk, pl->sc.boxes, poses, pl->sc.nboxes, DT);
}

static const int32_t *ref_height(const refsim *r)
{
	return r->ripple ? r->rp.cur : r->hk.back;
}

static void assert_same(pool *pl, const refsim *r, int step)
{
	tp_surface s = surf(pl);
	const int32_t *want = ref_height(r);
	int nonzero = 0;
	for (int y = 0; y < s.h; y++)
		for (int x = 0; x < s.w; x++) {
			if (at(&s, x, y) != want[y * s.w + x])
				cr_assert_fail(
					"%s/%s step %d: cell (%d, %d) is %d, the seed port has %d",
					pl->d->kind.name, bnames[pl->sc.boundary], step, x, y,
					at(&s, x, y), want[y * s.w + x]);
			nonzero += want[y * s.w + x] != 0;
		}
	cr_assert_gt(nonzero, 0, "the comparison is not of two still pools");
}

/* Runs solver and port side by side: scheduled drops, then rain (random drops of both
 * signs, some across or beyond the edges), boxes if the pool has them. */
static void run_against_port(pool *pl, int steps, uint64_t seed)
{
	refsim r;
	ref_open(&r, pl);
	tp_rng rng;
	tp_rng_seed(&rng, seed, 3);
	const int w = pl->sc.width, h = pl->sc.height;
	pl->d->drop(pl->p, 0.5 * w, 0.5 * h, 7.5, 1.5);
	ref_drop_(&r, 0.5 * w, 0.5 * h, 7.5, 1.5);
	pl->d->drop(pl->p, 2.2, h - 3.7, 5, -0.8); /* across the corner */
	ref_drop_(&r, 2.2, h - 3.7, 5, -0.8);
	for (int k = 0; k < steps; k++) {
		while (tp_rng_unit(&rng) < 0.3) {
			double x = tp_rng_range(&rng, -8, w + 8), y = tp_rng_range(&rng, -8, h + 8);
			double rad = tp_rng_range(&rng, 0.5, 9), st = tp_rng_range(&rng, -1.5, 2.5);
			pl->d->drop(pl->p, x, y, rad, st);
			ref_drop_(&r, x, y, rad, st);
		}
		pool_step(pl, k);
		ref_step_(&r, pl);
		if (k % 40 == 39 || k == steps - 1)
			assert_same(pl, &r, k + 1);
	}
	ref_close(&r);
}

static void port_test(const char *name, scene_boundary b, int boxes, const scene_param *prm, int np)
{
	pool pl;
	/* Odd sizes: the vector loops' remainders and the wrap seams get exercised. */
	pool_open(&pl, name, 83, 57, b, boxes, prm, np);
	run_against_port(&pl, boxes ? 160 : 240, 11 + (uint64_t)b);
	pool_close(&pl);
}

Test(hooke, matches_seed_port_reflect)
{
	port_test("hooke", SCENE_BOUNDARY_REFLECT, 0, NULL, 0);
}
Test(hooke, matches_seed_port_wrap)
{
	port_test("hooke", SCENE_BOUNDARY_WRAP, 0, NULL, 0);
}
Test(hooke, matches_seed_port_absorb)
{
	port_test("hooke", SCENE_BOUNDARY_ABSORB, 0, NULL, 0);
}

Test(hooke, matches_seed_port_with_boxes)
{
	for (int i = 0; i < 3; i++)
		port_test("hooke", boundaries[i], 1, NULL, 0);
}

Test(hooke, matches_port_with_other_constants)
{
	/* D = 12 (plain division), D = 8 (another power of two), other shifts and unit. */
	const scene_param a[] = {
		{"edge", 2}, {"corner", 1}, {"velocity_damping", 5}, {"unit", 700}};
	const scene_param b[] = {{"edge", 1}, {"corner", 1}, {"height_damping", 11}, {"wake", 3}};
	port_test("hooke", SCENE_BOUNDARY_REFLECT, 0, a, 4);
	port_test("hooke", SCENE_BOUNDARY_WRAP, 1, b, 4);
}

Test(ripple, matches_seed_port_reflect)
{
	port_test("ripple", SCENE_BOUNDARY_REFLECT, 0, NULL, 0);
}
Test(ripple, matches_seed_port_wrap)
{
	port_test("ripple", SCENE_BOUNDARY_WRAP, 0, NULL, 0);
}
Test(ripple, matches_seed_port_absorb)
{
	port_test("ripple", SCENE_BOUNDARY_ABSORB, 0, NULL, 0);
}

Test(ripple, matches_seed_port_with_boxes)
{
	for (int i = 0; i < 3; i++)
		port_test("ripple", boundaries[i], 1, NULL, 0);
}

Test(ripple, matches_port_with_other_constants)
{
	const scene_param a[] = {{"damping", 9}, {"unit", 333}, {"sponge", 5}, {"wake", 2}};
	port_test("ripple", SCENE_BOUNDARY_ABSORB, 1, a, 4);
}

/* Seed 000 by hand: one cell at 1600 (a drop of radius 0.5 on a cell centre, unit 1600),
 * one step: centre a = 1600, v = -1600 + 25 = -1575, h = 25; edge neighbour a = -4800/16
 * = -300, v = 300 - 4 = 296, h = 296 - 1 = 295; corner a = -100, v = 99, h = 99. */
Test(hooke, seed_numbers_by_hand)
{
	pool pl;
	const scene_param u[] = {{"unit", 1600}};
	pool_open(&pl, "hooke", 9, 9, SCENE_BOUNDARY_REFLECT, 0, u, 1);
	pl.d->drop(pl.p, 4.5, 4.5, 0.5, 1.0);
	tp_surface s = surf(&pl);
	cr_assert_eq(at(&s, 4, 4), 1600);
	cr_assert_eq(at(&s, 4, 3), 0);
	pool_step(&pl, 0);
	s = surf(&pl);
	cr_assert_eq(at(&s, 4, 4), 25);
	cr_assert_eq(at(&s, 4, 3), 295);
	cr_assert_eq(at(&s, 5, 4), 295);
	cr_assert_eq(at(&s, 3, 3), 99);
	cr_assert_eq(at(&s, 5, 5), 99);
	cr_assert_eq(at(&s, 4, 2), 0);
	pool_close(&pl);
}

/* Seed 001 by hand: 600 at the centre of both buffers. Centre: 0/6 - 600 = -600, then
 * -600 - (-600 >> 5) = -600 + 19 = -581. Each of the 12 neighbours: 600/6 - 0 = 100,
 * 100 - 3 = 97. A knight's move away: 0. */
Test(ripple, seed_numbers_by_hand)
{
	pool pl;
	const scene_param u[] = {{"unit", 600}};
	pool_open(&pl, "ripple", 11, 11, SCENE_BOUNDARY_REFLECT, 0, u, 1);
	pl.d->drop(pl.p, 5.5, 5.5, 0.5, 1.0);
	pool_step(&pl, 0);
	tp_surface s = surf(&pl);
	cr_assert_eq(at(&s, 5, 5), -581);
	const int nb[12][2] = {{-1, -1}, {0, -1}, {1, -1}, {-1, 0}, {1, 0},  {-1, 1},
			       {0, 1},   {1, 1},  {0, -2}, {0, 2},  {-2, 0}, {2, 0}};
	for (int i = 0; i < 12; i++)
		cr_assert_eq(at(&s, 5 + nb[i][0], 5 + nb[i][1]), 97, "neighbour %d", i);
	cr_assert_eq(at(&s, 7, 6), 0);
	cr_assert_eq(at(&s, 3, 3), 0);
	pool_close(&pl);
}

Test(hooke, rejects_zero_springs_and_tiny_pools)
{
	scene sc = {.path = "t.json",
		    .width = 40,
		    .height = 30,
		    .fps = 30,
		    .substeps = 1,
		    .solver = solver_find("hooke")};
	scene_param p[] = {{"edge", 0}, {"corner", 0}, {"scheme", 0}};
	sc.params = p;
	sc.nparams = 3;
	solver *s = NULL;
	tp_err err;
	cr_assert_eq(solver_create(&sc, 1, &s, &err), TP_EINPUT);
	cr_assert_null(s);
	cr_assert(strstr(err.msg, "cannot both be 0") != NULL, "%s", err.msg);
	/* the spring weights belong to the seed scheme: refused with the isotropic one */
	scene_param q[] = {{"corner", 2}};
	sc.params = q;
	sc.nparams = 1;
	cr_assert_eq(solver_create(&sc, 1, &s, &err), TP_EINPUT);
	cr_assert_null(s);
	cr_assert(strstr(err.msg, "params.corner") && strstr(err.msg, "scheme"), "%s", err.msg);
	q[0] = (scene_param){"scheme", 1};
	sc.nparams = 1;
	cr_assert_eq(solver_create(&sc, 1, &s, &err), 0, "%s", err.msg);
	solver_destroy(s);
	s = NULL;
	sc.params = p;
	sc.nparams = 0;
	sc.width = 3;
	sc.solver = solver_find("ripple");
	cr_assert_eq(solver_create(&sc, 1, &s, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "at least") != NULL, "%s", err.msg);
}

/* Everything below holds for both solvers. */

/* 211 x 163 cells: above IG_PAR_CELLS, so the row loops really are split. */
Test(intsolvers, one_and_two_threads_give_the_same_bits)
{
	/* both schemes of ripple and hooke */
	for (ripple_scheme = 0; ripple_scheme < 2; ripple_scheme++) {
		for (int n = 0; n < 2; n++)
			for (int b = 0; b < 3; b++) {
				int32_t *first = NULL;
				double energy = 0;
				for (int threads = 1; threads <= 2; threads++) {
					omp_set_num_threads(threads);
					pool pl;
					pool_open(&pl, solvers[n], 211, 163, boundaries[b], 1, NULL, 0);
					tp_rng rng;
					tp_rng_seed(&rng, 5, 5);
					for (int k = 0; k < 40; k++) {
						if (k % 3 == 0)
							pl.d->drop(pl.p, tp_rng_range(&rng, 0, 211),
								   tp_rng_range(&rng, 0, 163),
								   tp_rng_range(&rng, 2, 8),
								   tp_rng_range(&rng, -1, 2));
						pool_step(&pl, k);
					}
					tp_surface s = surf(&pl);
					double e = stat(&pl, "energy"); /* a reduction: same bits too */
					if (!first) {
						energy = e;
						first = malloc(211 * 163 * sizeof *first);
						for (int y = 0; y < 163; y++)
							memcpy(first + y * 211,
							       (const int32_t *)s.data + y * s.stride,
							       211 * 4);
					} else {
						for (int y = 0; y < 163; y++)
							cr_assert_eq(memcmp(first + y * 211,
									    (const int32_t *)s.data +
										    y * s.stride,
									    211 * 4),
								     0,
								     "%s/%s row %d differs with 2 threads",
								     solvers[n], bnames[boundaries[b]], y);
						cr_assert(e == energy, "%s: energy %.17g vs %.17g",
							  solvers[n], e, energy);
					}
					pool_close(&pl);
				}
				free(first);
			}
	}
	ripple_scheme = 0;
}

/* The pool's solver made again for a render `scale` times the scene's size (the damping
 * shifts depend on it). */
static void pool_rescale(pool *pl, double scale)
{
	solver_destroy(pl->s);
	pl->sc.scale = scale;
	tp_err err;
	cr_assert_eq(solver_create(&pl->sc, 1, &pl->s, &err), 0, "%s", err.msg);
	pl->d = solver_desc(pl->s);
	pl->p = solver_priv(pl->s);
}

/* The pool's cells, row after row (free() it). */
static int32_t *surface_copy(pool *pl)
{
	tp_surface s = surf(pl);
	int32_t *o = malloc((size_t)s.w * s.h * sizeof *o);
	cr_assert_not_null(o);
	for (int y = 0; y < s.h; y++)
		memcpy(o + (size_t)y * s.w, (const int32_t *)s.data + y * s.stride,
		       (size_t)s.w * sizeof *o);
	return o;
}

/* A run of `steps` steps with a random drop every `every`, once with the plain kernels
 * (tp_cpu_force_flags(0) when the solver is created) and once with the vector ones: the
 * same cells. `what` names the case. */
static void vector_matches_plain(const char *name, int w, int h, scene_boundary b,
				 const scene_param *prm, int np, double scale, int steps,
				 int every, uint64_t seed, uint64_t stream, const char *what)
{
	int32_t *got[2];
	for (int simd = 0; simd < 2; simd++) {
		tp_cpu_force_flags(simd ? -1 : 0);
		pool pl;
		pool_open(&pl, name, w, h, b, 0, prm, np);
		tp_cpu_force_flags(-1);
		if (scale != 1)
			pool_rescale(&pl, scale);
		tp_rng rng;
		tp_rng_seed(&rng, seed, stream);
		for (int k = 0; k < steps; k++) {
			if (k % every == 0)
				pl.d->drop(pl.p, tp_rng_range(&rng, -4, w + 4),
					   tp_rng_range(&rng, -4, h + 4), tp_rng_range(&rng, 2, 9),
					   tp_rng_range(&rng, -2, 3));
			pool_step(&pl, k);
		}
		got[simd] = surface_copy(&pl);
		pool_close(&pl);
	}
	int nonzero = 0;
	for (int i = 0; i < w * h; i++) {
		if (got[0][i] != got[1][i])
			cr_assert_fail("%s, width %d, %s: cell (%d, %d) is %d with the vector "
				       "kernel, %d without",
				       bnames[b], w, what, i % w, i / w, got[1][i], got[0][i]);
		nonzero += got[0][i] != 0;
	}
	cr_assert_gt(nonzero, w * h / 2, "the waves reached most of the pool");
	free(got[0]);
	free(got[1]);
}

/* ripple's AVX-512 kernels (where the CPU has it), the seed scheme's and the isotropic
 * one's, against the plain loops (no CPU flags): the same bits for every boundary, at the scene's size and above it (the velocity-damped
 * kernel), for widths whose rows end at every offset in a vector, with waves crossing
 * the held border and the wrap seams. */
Test(ripple, vector_kernel_matches_the_plain_loop)
{
	static const int widths[] = {83, 96, 211, 257};
	static const char *const what[2][2] = {{"seed scheme, scale 1", "seed scheme, scale 1.7"},
					       {"isotropic, scale 1", "isotropic, scale 1.7"}};
	for (ripple_scheme = 0; ripple_scheme < 2; ripple_scheme++) /* both kernels */
		for (int wi = 0; wi < 4; wi++)
			for (int b = 0; b < 3; b++)
				for (int sc = 0; sc < 2; sc++)
					vector_matches_plain("ripple", widths[wi], 61, boundaries[b],
							     NULL, 0, sc ? 1.7 : 1, 90, 7, 3, 7,
							     what[ripple_scheme][sc]);
	ripple_scheme = 0;
}

/* hooke's AVX-512 kernel (D a power of two) against the plain loop (no CPU flags): the same
 * bits for every boundary, for D = 16 (the seed's), 8, 32 and 4 with other edge and corner
 * weights and shifts, at widths ending at every offset in a vector. */
Test(hooke, vector_kernel_matches_the_plain_loop)
{
	static const int widths[] = {83, 96, 257};
	static const scene_param prm[4][2] = {
		{{"edge", 3}, {"corner", 1}},
		{{"edge", 1}, {"corner", 1}},
		{{"edge", 7}, {"corner", 1}},
		{{"edge", 0}, {"height_damping", 4}},
	};
	static const char *const names[4] = {"params 0", "params 1", "params 2", "params 3"};
	for (int wi = 0; wi < 3; wi++)
		for (int b = 0; b < 3; b++)
			for (int pi = 0; pi < 4; pi++)
				vector_matches_plain("hooke", widths[wi], 47, boundaries[b], prm[pi], 2,
						     1, 70, 5, 4, 9, names[pi]);
}

/* ripple queues steps and runs up to 6 in one sweep, each thread a band of rows with the
 * gaps about the band edges filled after (ripple.c, run_fused). The same bits as running
 * each step alone (a surface read after every step forces that), for thread counts whose
 * bands are thick enough to fuse, too thin for long runs (13 threads: 15 rows) and odd;
 * runs of every length between drops; at the scene's size and above it (where a
 * velocity damping and alternating shifts join the kernel); reflect and absorb. */
Test(ripple, fused_steps_are_the_same_bits)
{
	/* both schemes of ripple and hooke */
	for (ripple_scheme = 0; ripple_scheme < 2; ripple_scheme++) {
		static const int gaps[] = {1, 2, 5, 6, 7, 13, 3, 4, 12, 1, 6, 9};
		static const int threads[] = {1, 2, 3, 8, 13};
		const int W = 240, H = 200, NG = (int)(sizeof gaps / sizeof gaps[0]);
		const int32_t cells = W * H;
		for (int sc = 0; sc < 2; sc++)
			for (int b = 0; b < 3; b += 2) {
				int32_t *want = malloc(2 * (size_t)cells * sizeof *want);
				cr_assert_not_null(want);
				for (int t = -1; t < (int)(sizeof threads / sizeof threads[0]); t++) {
					omp_set_num_threads(t < 0 ? 1 : threads[t]);
					pool pl;
					pool_open(&pl, "ripple", W, H, boundaries[b], 0, NULL, 0);
					if (sc) /* rendered 1.7x the scene's size */
						pool_rescale(&pl, 1.7);
					tp_rng rng;
					tp_rng_seed(&rng, 9, 1);
					int k = 0;
					for (int g = 0; g < NG; g++) {
						pl.d->drop(pl.p, tp_rng_range(&rng, 0, W),
							   tp_rng_range(&rng, 0, H), tp_rng_range(&rng, 3, 12),
							   tp_rng_range(&rng, -1, 2));
						for (int i = 0; i < gaps[g]; i++, k++) {
							pool_step(&pl, k);
							if (t < 0) /* the reference: every step on its own */
								(void)surf(&pl);
						}
						if (g == NG / 2)
							(void)stat(&pl, "energy"); /* a read mid-run */
						if (g == NG / 2 || g == NG - 1) {
							tp_surface s = surf(&pl);
							int32_t *o = want + (g == NG - 1 ? cells : 0);
							for (int y = 0; y < H; y++)
								for (int x = 0; x < W; x++) {
									int32_t v = at(&s, x, y);
									if (t < 0)
										o[y * W + x] = v;
									else if (v != o[y * W + x])
										cr_assert_fail(
											"%s, scale %s, %d threads, "
											"step %d: cell (%d, %d) "
											"is %d, stepping one by "
											"one gives %d",
											bnames[boundaries[b]],
											sc ? "1.7" : "1", threads[t],
											k, x, y, v, o[y * W + x]);
								}
						}
					}
					pool_close(&pl);
				}
				int nonzero = 0;
				for (int32_t i = 0; i < cells; i++)
					nonzero += want[cells + i] != 0;
				cr_assert_gt(nonzero, cells / 4, "the waves reached most of the pool");
				free(want);
			}
		omp_set_num_threads(2);
	}
	ripple_scheme = 0;
}

Test(intsolvers, still_water_stays_still)
{
	for (int n = 0; n < 2; n++)
		for (int b = 0; b < 3; b++) {
			pool pl;
			pool_open(&pl, solvers[n], 50, 40, boundaries[b], 0, NULL, 0);
			pl.d->drop(pl.p, 25, 20, 0, 1); /* radius 0 and NaNs are no-ops */
			pl.d->drop(pl.p, NAN, 20, 5, 1);
			pl.d->drop(pl.p, 25, 20, 5, NAN);
			if (b != 1) /* far outside a non-periodic pool: nothing */
				pl.d->drop(pl.p, -100, 20, 5, 1);
			for (int k = 0; k < 100; k++)
				pool_step(&pl, k);
			tp_surface s = surf(&pl);
			for (int y = 0; y < 40; y++)
				for (int x = 0; x < 50; x++)
					cr_assert_eq(at(&s, x, y), 0, "%s/%s", solvers[n],
						     bnames[boundaries[b]]);
			cr_assert_eq(stat(&pl, "energy"), 0);
			cr_assert_eq(stat(&pl, "max"), 0);
			pool_close(&pl);
		}
}

/* A drop centred between four cells of an even square pool: every step keeps the mirror
 * symmetries x -> w-1-x, y -> h-1-y and the diagonal x <-> y, bit for bit. */
Test(intsolvers, centred_drop_stays_symmetric)
{
	for (int n = 0; n < 2; n++)
		for (int b = 0; b < 3; b++) {
			pool pl;
			const int N = 64;
			pool_open(&pl, solvers[n], N, N, boundaries[b], 0, NULL, 0);
			pl.d->drop(pl.p, 32, 32, 9.3, 1.7);
			pl.d->drop(pl.p, 32, 32, 3, -0.6);
			for (int k = 0; k < 150; k++) {
				pool_step(&pl, k);
				if (k % 30 != 29)
					continue;
				tp_surface s = surf(&pl);
				int nonzero = 0;
				for (int y = 0; y < N; y++)
					for (int x = 0; x < N; x++) {
						int32_t v = at(&s, x, y);
						cr_assert_eq(v, at(&s, N - 1 - x, y),
							     "%s/%s step %d (%d,%d)", solvers[n],
							     bnames[boundaries[b]], k, x, y);
						cr_assert_eq(v, at(&s, x, N - 1 - y));
						cr_assert_eq(v, at(&s, y, x));
						nonzero += v != 0;
					}
				cr_assert_gt(nonzero, 100);
			}
			pool_close(&pl);
		}
}

Test(intsolvers, damping_makes_energy_decay)
{
	for (int n = 0; n < 2; n++) {
		pool pl;
		pool_open(&pl, solvers[n], 120, 100, SCENE_BOUNDARY_REFLECT, 0, NULL, 0);
		pl.d->drop(pl.p, 60, 50, 8, 1.0);
		double e0 = stat(&pl, "energy"), prev = e0;
		cr_assert_gt(e0, 0.5);
		for (int k = 0; k < 400; k++) {
			pool_step(&pl, k);
			if (k % 100 == 99) {
				double e = stat(&pl, "energy");
				cr_assert(e < prev || e == 0,
					  "%s: energy %g after %d steps (before %g)", solvers[n], e,
					  k + 1, prev);
				prev = e;
			}
		}
		cr_assert_lt(prev, 0.15 * e0, "%s: energy %g of %g left", solvers[n], prev, e0);
		pool_close(&pl);
	}
	/* Less damping keeps more: ripple's damping 8 against 5, hooke's shifts 9/11 vs 6/8. */
	const scene_param weak[2][2] = {{{"velocity_damping", 9}, {"height_damping", 11}},
					{{"damping", 8}, {"unit", 4096}}};
	for (int n = 0; n < 2; n++) {
		double e[2];
		for (int i = 0; i < 2; i++) {
			pool pl;
			pool_open(&pl, solvers[n], 120, 100, SCENE_BOUNDARY_REFLECT, 0, weak[n],
				  i ? 2 : 0);
			pl.d->drop(pl.p, 60, 50, 8, 1.0);
			for (int k = 0; k < 60; k++)
				pool_step(&pl, k);
			e[i] = stat(&pl, "energy");
			pool_close(&pl);
		}
		cr_assert_gt(e[1], 1.5 * e[0], "%s: weaker damping %g vs %g", solvers[n], e[1],
			     e[0]);
	}
}

Test(intsolvers, wrap_is_periodic)
{
	for (int n = 0; n < 2; n++) {
		/* A drop by the left edge shows up by the right edge, and not in a reflect pool. */
		pool a, b, c;
		pool_open(&a, solvers[n], 96, 64, SCENE_BOUNDARY_WRAP, 0, NULL, 0);
		pool_open(&c, solvers[n], 96, 64, SCENE_BOUNDARY_REFLECT, 0, NULL, 0);
		a.d->drop(a.p, 3, 32, 6, 1);
		c.d->drop(c.p, 3, 32, 6, 1);
		tp_surface s = surf(&a);
		cr_assert_gt(at(&s, 95, 32), 0, "the disc itself wraps");
		for (int k = 0; k < 20; k++) {
			pool_step(&a, k);
			pool_step(&c, k);
		}
		s = surf(&a);
		tp_surface r = surf(&c);
		int32_t across = 0, reflect = 0;
		for (int x = 80; x < 96; x++) {
			across += abs(at(&s, x, 32));
			reflect += abs(at(&r, x, 32));
		}
		cr_assert_gt(across, 1000, "%s: wave crossed the seam (%d)", solvers[n], across);
		cr_assert_eq(reflect, 0, "%s: nothing there without wrap", solvers[n]);
		pool_close(&c);

		/* The same drops shifted by (37, 21) give the same field rolled by (37, 21). */
		pool_open(&b, solvers[n], 96, 64, SCENE_BOUNDARY_WRAP, 0, NULL, 0);
		b.d->drop(b.p, 3 + 37, 32 + 21, 6, 1);
		for (int k = 0; k < 20; k++)
			pool_step(&b, k);
		for (int k = 20; k < 90; k++) {
			if (k == 50) {
				a.d->drop(a.p, 90.25, 60.5, 7, -1.2);
				b.d->drop(b.p, 90.25 + 37 - 96, 60.5 + 21 - 64, 7, -1.2);
			}
			pool_step(&a, k);
			pool_step(&b, k);
		}
		s = surf(&a);
		tp_surface t = surf(&b);
		for (int y = 0; y < 64; y++)
			for (int x = 0; x < 96; x++)
				cr_assert_eq(at(&s, x, y), at(&t, (x + 37) % 96, (y + 21) % 64),
					     "%s (%d,%d)", solvers[n], x, y);
		cr_assert_eq(s.wrap, 1);
		cr_assert_eq(r.wrap, 0);
		pool_close(&a);
		pool_close(&b);
	}
}

/* Sum of squared slopes over the middle of the pool, away from the sponge. */
static double middle_energy(pool *pl)
{
	tp_surface s = surf(pl);
	double e = 0;
	for (int y = s.h / 4; y < 3 * s.h / 4; y++)
		for (int x = s.w / 4; x < 3 * s.w / 4; x++) {
			double gx = (at(&s, x + 1, y) - at(&s, x, y)) * s.scale;
			double gy = (at(&s, x, y + 1) - at(&s, x, y)) * s.scale;
			e += gx * gx + gy * gy;
		}
	return e;
}

Test(intsolvers, absorb_reflects_much_less_than_reflect)
{
	/* Light damping and a fine unit so the echo from the edges stays above the integer
	 * dead zone; the middle of a 160 pool is watched while the echo crosses it. */
	const scene_param light[2][3] = {
		{{"velocity_damping", 9}, {"height_damping", 10}, {"unit", 65536}},
		{{"damping", 8}, {"unit", 16384}, {"sponge", 32}}};
	for (int n = 0; n < 2; n++) {
		double echo[2] = {0, 0};
		for (int i = 0; i < 2; i++) {
			pool pl;
			pool_open(&pl, solvers[n], 160, 160,
				  i ? SCENE_BOUNDARY_ABSORB : SCENE_BOUNDARY_REFLECT, 0, light[n],
				  3);
			pl.d->drop(pl.p, 80, 80, 6, 1.0);
			for (int k = 0; k < 360; k++) {
				pool_step(&pl, k);
				if (k >= 200 && k % 10 == 0) {
					double e = middle_energy(&pl);
					echo[i] = e > echo[i] ? e : echo[i];
				}
			}
			pool_close(&pl);
		}
		cr_assert_gt(echo[0], 0, "%s: the reflect pool echoes", solvers[n]);
		cr_assert_lt(echo[1], 0.25 * echo[0], "%s: absorb echo %g vs reflect %g",
			     solvers[n], echo[1], echo[0]);
	}
}

Test(intsolvers, boxes_hold_water_and_a_moving_box_makes_a_wake)
{
	for (int n = 0; n < 2; n++)
		for (int b = 0; b < 3; b++) {
			const char *bn = bnames[boundaries[b]];
			/* In still water the sailing box pushes a bow wave; with wake 0 nothing
			 * moves. */
			const scene_param off[] = {{"wake", 0}};
			pool pl, still;
			pool_open(&pl, solvers[n], 100, 70, boundaries[b], 1, NULL, 0);
			pool_open(&still, solvers[n], 100, 70, boundaries[b], 1, off, 1);
			for (int k = 0; k < 30; k++) {
				pool_step(&pl, k);
				pool_step(&still, k);
			}
			cr_assert_gt(stat(&pl, "energy"), 0.01, "%s/%s: no wake", solvers[n], bn);
			cr_assert_eq(stat(&still, "energy"), 0);
			tp_surface s = surf(&pl);
			cr_assert_eq(s.nboxes, 2);
			cr_assert_float_eq(s.boxes[1].x, 95.0, 1e-9);
			cr_assert_eq(at(&s, 95, 35), 0, "%s/%s: under the sailing box", solvers[n],
				     bn);
			/* Waves all around the island: the cells under it stay at 0. */
			for (int k = 30; k < 60; k++) {
				if (k % 3 == 0)
					pl.d->drop(pl.p, 38 + k % 7, 30, 6, 1.0);
				pool_step(&pl, k);
			}
			s = surf(&pl);
			/* Island: 9 x 5 centred on (30, 24.5), turned 30 degrees counter-clockwise;
			 * cells deeper than its soft edge (1.25 px here) inside it are held at 0. */
			cr_assert_eq(at(&s, 30, 24), 0, "%s/%s: under the island", solvers[n], bn);
			cr_assert_eq(at(&s, 31, 22), 0, "%s/%s: under its turned side", solvers[n],
				     bn);
			cr_assert_neq(at(&s, 33, 26), 0, "%s/%s: outside the turned island",
				      solvers[n], bn);
			cr_assert_neq(at(&s, 30, 18), 0, "%s/%s: outside the island", solvers[n],
				      bn);
			pool_close(&pl);
			pool_close(&still);
		}
}

/* The bow wave: a box sailing +x through still water raises the water ahead of it and
 * lowers it behind. */
Test(intsolvers, wake_rises_ahead_and_falls_behind)
{
	for (int n = 0; n < 2; n++) {
		pool pl;
		pool_open(&pl, solvers[n], 100, 70, SCENE_BOUNDARY_REFLECT, 1, NULL, 0);
		for (int k = 0; k < 3; k++)
			pool_step(&pl, k);
		/* Box 1 is now 7 x 4 at (72.5, 41.7), turned 4 degrees. */
		tp_surface s = surf(&pl);
		int64_t ahead = 0, behind = 0;
		for (int y = 40; y < 44; y++)
			for (int x = 0; x < 4; x++) {
				ahead += at(&s, 76 + x, y);
				behind += at(&s, 65 + x, y);
			}
		cr_assert_gt(ahead, 0, "%s: ahead %lld", solvers[n], (long long)ahead);
		cr_assert_lt(behind, 0, "%s: behind %lld", solvers[n], (long long)behind);
		pool_close(&pl);
	}
}

Test(intsolvers, drop_profile_and_stats)
{
	for (int n = 0; n < 2; n++) {
		pool pl;
		pool_open(&pl, solvers[n], 60, 40, SCENE_BOUNDARY_REFLECT, 0, NULL, 0);
		const int u = (int)opt(&pl, "unit");
		tp_surface s = surf(&pl);
		cr_assert_eq(s.kind, TP_SURFACE_HEIGHT);
		cr_assert_eq(s.type, TP_SAMPLE_I32);
		cr_assert_eq(s.w, 60);
		cr_assert_eq(s.h, 40);
		cr_assert_geq(s.stride, 60);
		cr_assert_float_eq(s.scale, 1.0f / u, 1e-12);
		/* Centre cell: E; a cell at distance d < R: round(E (1 - d / R)); beyond R: 0. */
		pl.d->drop(pl.p, 20.5, 20.5, 4, 2.0);
		pl.d->drop(pl.p, 40.5, 20.5, 4, -2.0);
		s = surf(&pl);
		cr_assert_eq(at(&s, 20, 20), 2 * u);
		cr_assert_eq(at(&s, 40, 20), -2 * u);
		cr_assert_eq(at(&s, 23, 20), (int32_t)floor(2.0 * u * 0.25 + 0.5));
		cr_assert_eq(at(&s, 37, 20), -(int32_t)floor(2.0 * u * 0.25 + 0.5));
		cr_assert_eq(at(&s, 22, 22), (int32_t)floor(2.0 * u * (1 - sqrt(8) / 4) + 0.5));
		cr_assert_eq(at(&s, 24, 20), 0);
		cr_assert_float_eq(stat(&pl, "max"), 2.0, 1e-12);
		cr_assert_float_eq(stat(&pl, "min"), -2.0, 1e-12);
		cr_assert_float_eq(stat(&pl, "sum"), 0.0, 1e-12);
		/* Dropped at rest: the energy is all in the slopes between neighbours. */
		double slopes = 0;
		for (int y = 0; y < 40; y++)
			for (int x = 0; x < 60; x++) {
				double gx =
					x + 1 < 60 ? (double)at(&s, x + 1, y) - at(&s, x, y) : 0;
				double gy =
					y + 1 < 40 ? (double)at(&s, x, y + 1) - at(&s, x, y) : 0;
				slopes += (gx * gx + gy * gy) / ((double)u * u);
			}
		cr_assert_gt(slopes, 1.0);
		cr_assert_float_eq(stat(&pl, "energy"), slopes, 1e-9 * slopes);
		pool_step(&pl, 0);
		cr_assert_gt(stat(&pl, "energy"), 0.5 * slopes, "now partly kinetic");
		/* Drops saturate instead of overflowing, and the held border never moves. */
		pl.d->drop(pl.p, 10.5, 10.5, 3, 1e30);
		pl.d->drop(pl.p, 10.5, 10.5, 3, 1e30);
		pl.d->drop(pl.p, 0.5, 0.5, 3, 5);
		s = surf(&pl);
		cr_assert_eq(at(&s, 10, 10), 1 << 22);
		cr_assert_eq(at(&s, 0, 0), 0);
		cr_assert_eq(at(&s, 0, 5), 0);
		pool_close(&pl);
	}
}

/* Calm water (ripple.c, level_row): with spans each row's steps cover only the cells that
 * can be nonzero. The same bits as stepping every cell (solver_set_every_cell(1)), on 1, 2 and 3
 * threads, reflect and absorb, at the scene's size and 1.7x; every nonzero cell inside its
 * row's span; the spans narrow while the rings are young (the work they save), and right
 * again after a checkpoint is loaded. Wrap and boxes step every cell: no spans. */
Test(ripple, calm_water_spans_change_no_bits)
{
	/* both schemes of ripple and hooke */
	for (ripple_scheme = 0; ripple_scheme < 2; ripple_scheme++) {
		static const int gaps[] = {1, 6, 5, 13, 2, 7, 30};
		const int W = 230, H = 150, NG = (int)(sizeof gaps / sizeof gaps[0]);
		for (int sc = 0; sc < 2; sc++)
			for (int b = 0; b < 3; b += 2)
				for (int t = 1; t <= 3; t++) {
					omp_set_num_threads(t);
					pool pl[2];
					for (int k = 0; k < 2; k++) {
						solver_set_every_cell(!k); /* pl[0]: every cell; pl[1]: calm water skipped */
						pool_open(&pl[k], "ripple", W, H, boundaries[b], 0, NULL, 0);
						if (sc)
							pool_rescale(&pl[k], 1.7);
					}
					solver_set_every_cell(0);
					tp_rng rng;
					tp_rng_seed(&rng, 4, 2);
					int step = 0;
					for (int g = 0; g < NG; g++) {
						const double x = tp_rng_range(&rng, 0, W), y = tp_rng_range(&rng, 0, H);
						const double r = tp_rng_range(&rng, 2, 9), e = tp_rng_range(&rng, -1, 2);
						for (int k = 0; k < 2; k++)
							pl[k].d->drop(pl[k].p, x, y, r, e);
						for (int i = 0; i < gaps[g]; i++, step++)
							for (int k = 0; k < 2; k++)
								pool_step(&pl[k], step);
						tp_surface s0 = surf(&pl[0]), s1 = surf(&pl[1]);
						cr_assert_null(s0.spans);
						cr_assert_not_null(s1.spans);
						long width = 0;
						for (int yy = 0; yy < H; yy++) {
							const tp_span sp = s1.spans[yy];
							width += sp.lo < sp.hi ? sp.hi - sp.lo : 0;
							for (int xx = 0; xx < W; xx++) {
								const int32_t v = at(&s1, xx, yy);
								if (v != at(&s0, xx, yy))
									cr_assert_fail("%s, scale %s, %d threads, step %d: "
										       "cell (%d, %d) is %d, %d stepping "
										       "every cell",
										       bnames[boundaries[b]],
										       sc ? "1.7" : "1", t, step, xx, yy,
										       v, at(&s0, xx, yy));
								if (v != 0 && (xx < sp.lo || xx >= sp.hi))
									cr_assert_fail("step %d: cell (%d, %d) = %d outside "
										       "its row's span [%d, %d)",
										       step, xx, yy, v, sp.lo, sp.hi);
							}
						}
						if (g == 0) /* one young ring: a small part of the pool */
							cr_assert_lt(width, (long)W * H / 4, "spans cover %ld cells",
								     width);
					}
					/* a checkpoint of the stepped pool, loaded into a fresh one */
					FILE *f = tmpfile();
					cr_assert_not_null(f);
					tp_err err;
					cr_assert_eq(pl[1].d->save(pl[1].p, f, &err), 0, "%s", err.msg);
					rewind(f);
					pool c;
					pool_open(&c, "ripple", W, H, boundaries[b], 0, NULL, 0);
					if (sc)
						pool_rescale(&c, 1.7);
					cr_assert_eq(c.d->load(c.p, f, &err), 0, "%s", err.msg);
					fclose(f);
					for (int i = 0; i < 9; i++, step++) {
						pool_step(&pl[0], step);
						pool_step(&c, step);
					}
					tp_surface s0 = surf(&pl[0]), s1 = surf(&c);
					for (int yy = 0; yy < H; yy++)
						for (int xx = 0; xx < W; xx++)
							cr_assert_eq(at(&s1, xx, yy), at(&s0, xx, yy),
								     "after a load: cell (%d, %d)", xx, yy);
					pool_close(&c);
					pool_close(&pl[0]);
					pool_close(&pl[1]);
				}
		/* wrap and boxes change cells outside the kernel: every cell is stepped */
		pool w, bx;
		pool_open(&w, "ripple", 40, 30, SCENE_BOUNDARY_WRAP, 0, NULL, 0);
		pool_open(&bx, "ripple", 40, 30, SCENE_BOUNDARY_REFLECT, 1, NULL, 0);
		tp_surface s = surf(&w);
		cr_assert_null(s.spans);
		s = surf(&bx);
		cr_assert_null(s.spans);
		pool_close(&w);
		pool_close(&bx);
		omp_set_num_threads(2);
	}
	ripple_scheme = 0;
}

Test(intsolvers, checkpoint_round_trip)
{
	for (int n = 0; n < 2; n++) {
		pool a, b;
		pool_open(&a, solvers[n], 70, 50, SCENE_BOUNDARY_WRAP, 0, NULL, 0);
		pool_open(&b, solvers[n], 70, 50, SCENE_BOUNDARY_WRAP, 0, NULL, 0);
		a.d->drop(a.p, 30, 20, 8, 1);
		for (int k = 0; k < 25; k++)
			pool_step(&a, k);
		FILE *f = tmpfile();
		cr_assert_not_null(f);
		tp_err err;
		cr_assert_eq(a.d->save(a.p, f, &err), 0, "%s", err.msg);
		rewind(f);
		cr_assert_eq(b.d->load(b.p, f, &err), 0, "%s", err.msg);
		for (int k = 25; k < 60; k++) {
			pool_step(&a, k);
			pool_step(&b, k);
		}
		tp_surface s = surf(&a), t = surf(&b);
		int nonzero = 0;
		for (int y = 0; y < 50; y++)
			for (int x = 0; x < 70; x++) {
				cr_assert_eq(at(&s, x, y), at(&t, x, y));
				nonzero += at(&s, x, y) != 0;
			}
		cr_assert_gt(nonzero, 0);
		/* Another size, another solver, or a truncated file: refused with a reason. */
		pool c;
		pool_open(&c, solvers[n], 71, 50, SCENE_BOUNDARY_WRAP, 0, NULL, 0);
		rewind(f);
		cr_assert_eq(c.d->load(c.p, f, &err), TP_EINPUT);
		cr_assert(strstr(err.msg, "70x50") != NULL, "%s", err.msg);
		pool_close(&c);
		pool_open(&c, solvers[!n], 70, 50, SCENE_BOUNDARY_WRAP, 0, NULL, 0);
		rewind(f);
		cr_assert_eq(c.d->load(c.p, f, &err), TP_EINPUT);
		pool_close(&c);
		fclose(f);
		f = tmpfile();
		fwrite("TPINTG01", 1, 8, f);
		rewind(f);
		cr_assert_eq(b.d->load(b.p, f, &err), TP_EIO);
		fclose(f);
		pool_close(&a);
		pool_close(&b);
	}
}

/* docs/solvers.md states each damping as the decay rate it gives. For the linear step the
 * amplitude of every oscillating mode falls by sqrt(det) per step, det the determinant of
 * the step's matrix: ripple's h' -= h' >> d gives det = 1 - 2^-d (both schemes: the
 * isotropic one damps on one half step of two), hooke's v -= v >> sv and h -= h >> sh
 * det = (1 - 2^-sv)(1 - 2^-sh). So the amplitude decays at -ln(det) / 2 per step and the
 * energy at twice that: measured here from the energy stat of a periodic pool (no edges,
 * no sponge), averaged over 40 steps at both ends of the run, within 6%. */
Test(intsolvers, damping_decays_at_the_documented_rate)
{
	struct {
		const char *name;
		scene_param p[2];
		int np, steps;
		double det;
	} cases[] = {
		{"ripple", {{"damping", 5}}, 1, 150, 1 - 1.0 / 32},
		{"ripple", {{"damping", 8}}, 1, 500, 1 - 1.0 / 256},
		{"ripple", {{"damping", 5}, {"scheme", 1}}, 2, 150, 1 - 1.0 / 32},
		{"hooke", {{"velocity_damping", 6}}, 1, 250, (1 - 1.0 / 64) * (1 - 1.0 / 256)},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		pool pl;
		pool_open(&pl, cases[c].name, 96, 96, SCENE_BOUNDARY_WRAP, 0, cases[c].p,
			  cases[c].np);
		pl.d->drop(pl.p, 48, 48, 20, 50);
		double e0 = 0, e1 = 0;
		const int n = cases[c].steps;
		for (int k = 0; k < n + 60; k++) {
			pool_step(&pl, k);
			if (k >= 20 && k < 60)
				e0 += stat(&pl, "energy");
			if (k >= n + 20)
				e1 += stat(&pl, "energy");
		}
		const double made = log(e0 / e1) / n / 2, want = -log(cases[c].det) / 2;
		cr_log_info("%s %s: amplitude decay %.5f per step, documented %.5f", cases[c].name,
			    cases[c].p[0].name, made, want);
		cr_assert_lt(fabs(made / want - 1), 0.06, "%s: %.5f per step, documented %.5f",
			     cases[c].name, made, want);
		pool_close(&pl);
	}
}
