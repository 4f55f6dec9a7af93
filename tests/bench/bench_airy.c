/*
 * bench_airy.c - the airy solver (linear dispersive waves on FFTs) at 1024x1024 against
 * the ripple solver at the same size in the same run (the yardstick: at least 60
 * steps/s on two cores). Rows, all threads:
 *   - wrap, a box moving through the pool: each step transforms the box's pressure
 *     forward once (the steady cost of a Kelvin wake), plus a rain of drops;
 *   - the same with the surface read after every step (one inverse transform each): what
 *     a render at one step per frame pays;
 *   - absorb (the sponge: two more transforms per step);
 *   - reflect (DCTs, about 2.5x an FFT's time).
 * Measurements alternate in short rounds and keep each side's best.
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "solvers/solver.h"
#include "util/rng.h"

enum { W = 1024, H = 1024, ROUNDS = 3 };
#define ROUND_S 0.6

typedef struct run {
	scene sc;
	scene_box box;
	scene_key keys[2];
	solver *s;
	const tp_solver *d;
	void *p;
	tp_box_pose pose;
	long step;
	tp_rng rng;
} run;

static int open_run(run *r, const char *name, scene_boundary b)
{
	memset(r, 0, sizeof *r);
	r->sc.path = "bench";
	r->sc.width = W;
	r->sc.height = H;
	r->sc.fps = 30;
	r->sc.frames = 1000;
	r->sc.substeps = 1;
	r->sc.boundary = b;
	r->sc.solver = solver_find(name);
	r->keys[0] = (scene_key){0, 100, 512, 0};
	r->keys[1] = (scene_key){100, 100 + 60 * 100, 512, 0};
	r->box = (scene_box){{60, 20}, 1, 0.5, 0, {2, r->keys}};
	if (name[0] == 'a') { /* ripple holds boxes as islands: give it none */
		r->sc.boxes = &r->box;
		r->sc.nboxes = 1;
	}
	tp_err err;
	if (!r->sc.solver || solver_create(&r->sc, omp_get_max_threads(), &r->s, &err) < 0) {
		fprintf(stderr, "bench %s: %s\n", name, r->sc.solver ? err.msg : "no such solver");
		return -1;
	}
	r->d = solver_desc(r->s);
	r->p = solver_priv(r->s);
	tp_rng_seed(&r->rng, 1, 1);
	for (int i = 0; i < 60; i++)
		r->d->drop(r->p, tp_rng_range(&r->rng, 0, W), tp_rng_range(&r->rng, 0, H),
			   tp_rng_range(&r->rng, 5, 30), tp_rng_range(&r->rng, -2, 3));
	return 0;
}

/* Steps/s over about ROUND_S seconds; with surface, the surface after every step. */
static double rate(run *r, int surface)
{
	tp_step_in in = {.dt = 1.0 / 30, .boxes = &r->pose};
	int n = 0;
	double t0 = bench_now(), el;
	do {
		in.step = r->step++;
		in.t = (in.step + 1) * in.dt;
		scene_path_eval(&r->box.path, in.t, &r->pose.x, &r->pose.y, &r->pose.angle);
		r->pose.vx = 60;
		if (in.step % 4 == 0) /* rain: a drop every few steps */
			r->d->drop(r->p, tp_rng_range(&r->rng, 0, W), tp_rng_range(&r->rng, 0, H),
				   6, 1);
		r->d->step(r->p, &in);
		if (surface) {
			tp_surface s;
			r->d->surface(r->p, &s);
		}
		n++;
	} while ((el = bench_now() - t0) < ROUND_S);
	return n / el;
}

static void run_airy(void)
{
	static run a, ab, rf, rp;
	if (open_run(&a, "airy", SCENE_BOUNDARY_WRAP) < 0 ||
	    open_run(&ab, "airy", SCENE_BOUNDARY_ABSORB) < 0 ||
	    open_run(&rf, "airy", SCENE_BOUNDARY_REFLECT) < 0 ||
	    open_run(&rp, "ripple", SCENE_BOUNDARY_WRAP) < 0)
		goto done;
	double step = 0, frame = 0, absorb = 0, reflect = 0, ref = 0;
	for (int k = 0; k < ROUNDS; k++) {
		double v = rate(&a, 0);
		step = v > step ? v : step;
		v = rate(&rp, 0);
		ref = v > ref ? v : ref;
		v = rate(&a, 1);
		frame = v > frame ? v : frame;
		v = rate(&ab, 0);
		absorb = v > absorb ? v : absorb;
		v = rate(&rf, 0);
		reflect = v > reflect ? v : reflect;
	}
	char label[64];
	const int thr = omp_get_max_threads();
	snprintf(label, sizeof label, "airy step 1024x1024 (%d thr)", thr);
	bench_row(label, "steps/s vs ripple", step, "steps/s", ref, 1);
	snprintf(label, sizeof label, "airy step+surface 1024^2 (%d thr)", thr);
	bench_row(label, "steps/s vs ripple", frame, "steps/s", ref, 1);
	snprintf(label, sizeof label, "airy absorb 1024x1024 (%d thr)", thr);
	bench_row(label, "steps/s vs ripple", absorb, "steps/s", ref, 1);
	snprintf(label, sizeof label, "airy reflect 1024x1024 (%d thr)", thr);
	bench_row(label, "steps/s vs ripple", reflect, "steps/s", ref, 1);
done:
	solver_destroy(a.s);
	solver_destroy(rf.s);
	solver_destroy(ab.s);
	solver_destroy(rp.s);
}

const bench_entry bench_airy = {"airy", run_airy};
