/*
 * bench_shallow.c - the shallow solver on a 512x512 pool with two boxes dragged through it
 * (CG coupling every step), against the plain single-threaded port of the seed's loops
 * (tests/reference/seed_shallow.c: full-grid passes, CG over each box's bounding region)
 * doing the same steps: same rate, per-step damping and gamma, the solver's default
 * scaling (41 steps per 30 fps frame at this size), both CGs stopped by the solver's
 * default criterion (what the residual leaves moves the water by less than 1e-6 height
 * units per step). Throughput is internal steps per second.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "reference/seed_shallow.h"
#include "scene/scene.h"
#include "solvers/solver.h"

extern const tp_solver tp_solver_shallow;

enum { W = 512, H = 512 };
static const double FPS = 30, BW = 48, BH = 32, HEIGHT = 4, DENSITY = 0.5;
static const double CG_ERR = 1e-6; /* the solver's default cg_tol, for both */
static int SUB; /* internal steps per frame, from the solver */

/* Two boxes going back and forth across the pool at 59 px/s (the waves: 87 px/s), 12 s
 * per round trip. */
static scene_key keys[2][3] = {
	{ { 0, 80, 170, 0 }, { 6, 432, 170, 0 }, { 12, 80, 170, 0 } },
	{ { 0, 432, 342, 0 }, { 6, 80, 342, 0 }, { 12, 432, 342, 0 } },
};

typedef struct contender {
	int threads; /* 0: the seed port */
	solver *s;
	seed_shallow ss;
	scene_box boxes[2];
	scene sc;
	long step; /* internal steps done */
	long timed;
	double secs;
} contender;

/* the seed's rate, so both take the same internal steps (the solver's default cap is 0.1) */
static const scene_param params[] = { { "cg_tol", CG_ERR }, { "rate", 0.005 } };

static int setup(contender *c, int threads)
{
	memset(c, 0, sizeof *c);
	c->threads = threads;
	if (!threads) { /* the solver's per-step damping: 0.996 per 1/240 s */
		if (seed_shallow_init(&c->ss, W, H, 0.005f, (float)pow(0.996, 240 / (FPS * SUB)), 0.004f,
				      0, 200) < 0)
			return -1;
		c->ss.cg_err = CG_ERR;
		return 0;
	}
	for (int i = 0; i < 2; i++)
		c->boxes[i] = (scene_box){ { BW, BH }, HEIGHT, DENSITY, 0, { 3, keys[i] } };
	c->sc.path = "bench";
	c->sc.width = W;
	c->sc.height = H;
	c->sc.fps = FPS;
	c->sc.frames = 1000000;
	c->sc.substeps = 1;
	c->sc.solver = &tp_solver_shallow.kind;
	c->sc.params = (scene_param *)params;
	c->sc.nparams = 2;
	c->sc.boxes = c->boxes;
	c->sc.nboxes = 2;
	tp_err err;
	if (solver_create(&c->sc, threads, &c->s, &err) < 0) {
		fprintf(stderr, "bench shallow: %s\n", err.msg);
		return -1;
	}
	tp_stats st;
	tp_solver_shallow.stats(solver_priv(c->s), &st);
	for (int i = 0; i < st.n; i++)
		if (!strcmp(st.name[i], "substeps"))
			SUB = (int)st.value[i];
	return 0;
}

/* Box poses at time t (the paths repeat every 12 s). */
static void poses_at(double t, tp_box_pose *p)
{
	double tt = t - 12.0 * (double)(int)(t / 12.0);
	for (int i = 0; i < 2; i++) {
		scene_path path = { 3, keys[i] };
		memset(&p[i], 0, sizeof p[i]);
		scene_path_eval(&path, tt, &p[i].x, &p[i].y, &p[i].angle);
	}
}

/* One frame (SUB internal steps) of contender c. */
static void frame(contender *c)
{
	tp_box_pose p[2];
	if (!c->threads) {
		for (int k = 0; k < SUB; k++) {
			c->step++;
			poses_at(c->step / (FPS * SUB), p);
			seed_shallow_box b[2];
			for (int i = 0; i < 2; i++)
				b[i] = (seed_shallow_box){ p[i].x - BW / 2, p[i].y - BH / 2, p[i].x + BW / 2,
							   p[i].y + BH / 2, -DENSITY * HEIGHT };
			seed_shallow_step(&c->ss, b, 2);
		}
		return;
	}
	c->step += SUB;
	tp_step_in in = { .t = c->step / (FPS * SUB), .dt = 1 / FPS, .boxes = p };
	poses_at(in.t, p);
	tp_solver_shallow.step(solver_priv(c->s), &in);
}

/* Runs c for about `secs` seconds of whole frames, timing only after its warm-up. */
static void round_of(contender *c, double secs)
{
	int nthr = omp_get_max_threads();
	if (c->threads)
		omp_set_num_threads(c->threads);
	while (c->step < 10 * SUB) /* warm-up: CG warm starts, caches */
		frame(c);
	double t0 = bench_now(), el;
	do {
		frame(c);
		c->timed += SUB;
	} while ((el = bench_now() - t0) < secs);
	c->secs += el;
	omp_set_num_threads(nthr);
}

/* The three contenders run in alternating short rounds so that all see the same machine
 * load; throughput is the sum of their steps over the sum of their times. */
static void run(void)
{
	int nthr = omp_get_max_threads();
	contender c[3];
	if (setup(&c[1], nthr) < 0 || setup(&c[2], 1) < 0 || setup(&c[0], 0) < 0)
		return;
	for (int r = 0; r < 8; r++)
		for (int i = 0; i < 3; i++)
			round_of(&c[i], 0.25);
	double base = c[0].timed / c[0].secs;
	char label[64];
	snprintf(label, sizeof label, "shallow 512x512 2 boxes (%d thr)", nthr);
	bench_row(label, "steps/s vs seed loops", c[1].timed / c[1].secs, "steps/s", base, 1);
	bench_row("shallow 512x512 2 boxes (1 thr)", "steps/s vs seed loops", c[2].timed / c[2].secs,
		  "steps/s", base, 1);
	seed_shallow_free(&c[0].ss);
	solver_destroy(c[1].s);
	solver_destroy(c[2].s);
}

const bench_entry bench_shallow = { "shallow", run };
