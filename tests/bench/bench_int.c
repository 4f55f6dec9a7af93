/*
 * bench_int.c - the integer solvers at 1920x1080 (reflect, the seeds' setting) against
 * their plain seed ports (tests/reference/seed_{ripple,hooke}.c, one thread), both
 * stepping the same rippled pool. Measurements alternate in short rounds and keep each
 * side's best, so both see the same machine load. Rows: all threads, then one thread.
 * Every cell is stepped, as the ports do (solver_set_every_cell(1)): the damped pool falls still within
 * the rounds, and calm water would cost ripple nothing (the e2e rows show what it saves).
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "reference/reference.h"
#include "solvers/intgrid.h"
#include "solvers/solver.h"
#include "util/rng.h"

enum { W = 1920, H = 1080, ROUNDS = 3 };
#define ROUND_S 0.6

typedef struct sim {
	const char *name;
	solver *s;
	const tp_solver *d;
	void *p;
	ref_ripple rr;
	ref_hooke rh;
} sim;

/* Steps/s of the solver over about ROUND_S seconds. */
static double solver_rate(sim *m)
{
	tp_step_in in = {.dt = 1.0 / 30};
	int n = 0;
	double t0 = bench_now(), el;
	tp_surface s;
	do {
		in.t += in.dt;
		m->d->step(m->p, &in);
		n++;
		if (n % 6 == 0) /* a frame's worth: ripple runs its queued steps when read */
			m->d->surface(m->p, &s);
	} while ((el = bench_now() - t0) < ROUND_S);
	return n / el;
}

static double ref_rate(sim *m)
{
	int n = 0;
	double t0 = bench_now(), el;
	do {
		if (m->name[0] == 'r')
			ref_ripple_step(&m->rr, NULL, NULL, 0, 1.0 / 30);
		else
			ref_hooke_step(&m->rh, NULL, NULL, 0, 1.0 / 30);
		n++;
	} while ((el = bench_now() - t0) < ROUND_S);
	return n / el;
}

/* iso: the default isotropic scheme (ripple: two half steps of the 9-point wave equation;
 * hooke: the 9-point springs with a short-wave viscosity); otherwise the seed scheme, the
 * one the seed port computes. */
static void run_one(const char *name, int iso)
{
	scene_param prm = {"scheme", iso ? 1 : 0};
	scene sc;
	memset(&sc, 0, sizeof sc);
	sc.path = "bench";
	sc.width = W;
	sc.height = H;
	sc.fps = 30;
	sc.substeps = 1;
	sc.boundary = SCENE_BOUNDARY_REFLECT;
	sc.solver = solver_find(name);
	sc.params = &prm;
	sc.nparams = 1;
	sim m = {.name = name};
	tp_err err;
	solver_set_every_cell(1);
	const int rc = sc.solver ? solver_create(&sc, omp_get_max_threads(), &m.s, &err) : -1;
	solver_set_every_cell(0);
	if (rc < 0)
		return;
	m.d = solver_desc(m.s);
	m.p = solver_priv(m.s);
	const int unit = (int)tp_opts_get(m.p, tp_opts_find(m.d->kind.options, "unit"));
	int ok = name[0] == 'r' ? ref_ripple_init(&m.rr, W, H, sc.boundary, unit, 32, 0)
				: ref_hooke_init(&m.rh, W, H, sc.boundary, unit, 32, 0);
	if (ok < 0)
		goto done;
	tp_rng rng;
	tp_rng_seed(&rng, 1, 1);
	for (int i = 0; i < 60; i++) {
		double x = tp_rng_range(&rng, 0, W), y = tp_rng_range(&rng, 0, H);
		double r = tp_rng_range(&rng, 5, 30), st = tp_rng_range(&rng, -2, 3);
		m.d->drop(m.p, x, y, r, st);
		if (name[0] == 'r')
			ref_ripple_drop(&m.rr, x, y, r, st);
		else
			ref_hooke_drop(&m.rh, x, y, r, st);
	}
	const int threads = omp_get_max_threads();
	double all = 0, one = 0, ref = 0;
	for (int k = 0; k < ROUNDS; k++) {
		double v = solver_rate(&m);
		all = v > all ? v : all;
		omp_set_num_threads(1);
		v = ref_rate(&m);
		ref = v > ref ? v : ref;
		v = solver_rate(&m);
		one = v > one ? v : one;
		omp_set_num_threads(threads);
	}
	char label[64];
	snprintf(label, sizeof label, "%s%s step 1920x1080 (%d thr)", name, iso ? " isotropic" : "",
		 threads);
	bench_row(label, "steps/s vs seed port", all, "steps/s", ref, 1);
	snprintf(label, sizeof label, "%s%s step 1920x1080 (1 thr)", name, iso ? " isotropic" : "");
	bench_row(label, "steps/s vs seed port", one, "steps/s", ref, 1);
done:
	if (name[0] == 'r')
		ref_ripple_free(&m.rr);
	else
		ref_hooke_free(&m.rh);
	solver_destroy(m.s);
}

static void run_ripple(void)
{
	run_one("ripple", 0);
	run_one("ripple", 1);
}
static void run_hooke(void)
{
	run_one("hooke", 0);
	run_one("hooke", 1);
}

const bench_entry bench_ripple = {"ripple", run_ripple};
const bench_entry bench_hooke = {"hooke", run_hooke};
