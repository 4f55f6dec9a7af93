/* sph_tank.h - the sph tests' tank (tests/test_sph.c, tests/test_sph_implicit.c): a minimal
 * scene set field by field, a solver made from it, and steps with the box and tank poses the
 * stepper would give. Header-only (static inline): each test file takes what it uses. */
#ifndef TP_TESTS_SPH_TANK_H
#define TP_TESTS_SPH_TANK_H

#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "scene/scene.h"
#include "solvers/solver.h"

typedef struct tank {
	scene sc;
	scene_param params[12];
	scene_block blocks[2];
	scene_emitter em[2];
	scene_box boxes[2];
	scene_key bkeys[2][4];
	scene_key tkeys[4];
	tp_box_pose poses[2];
	solver *s;
	const tp_solver *d;
	void *p;
	double t;
} tank;

/* A w x h picture; a tank tw x th centred in it (tw = 0: no tank, the picture is one). */
static inline void tank_scene(tank *t, int w, int h, double tw, double th)
{
	memset(t, 0, sizeof *t);
	t->sc.path = "test.json";
	t->sc.width = w;
	t->sc.height = h;
	t->sc.fps = 30;
	t->sc.frames = 300;
	t->sc.seed = 3;
	t->sc.substeps = 1;
	t->sc.solver = solver_find("sph");
	t->sc.params = t->params;
	if (tw > 0) {
		t->sc.has_tank = 1;
		t->sc.tank.size[0] = tw;
		t->sc.tank.size[1] = th;
		t->tkeys[0] = (scene_key){0, 0.5 * w, 0.5 * h, 0};
		t->sc.tank.path = (scene_path){1, t->tkeys};
	}
}

static inline void tank_param(tank *t, const char *name, double v)
{
	cr_assert_lt(t->sc.nparams, (int)(sizeof t->params / sizeof t->params[0]));
	t->params[t->sc.nparams++] = (scene_param){(char *)name, v};
}

static inline void tank_block(tank *t, double x, double y, double w, double h)
{
	t->blocks[t->sc.nblocks++] = (scene_block){x, y, w, h};
	t->sc.blocks = t->blocks;
}

static inline void tank_open(tank *t)
{
	tp_err err;
	cr_assert_not_null(t->sc.solver);
	cr_assert_eq(solver_create(&t->sc, omp_get_max_threads(), &t->s, &err), 0, "%s", err.msg);
	t->d = solver_desc(t->s);
	t->p = solver_priv(t->s);
}

static inline void pose_at(const scene_path *p, double t, double dt, tp_box_pose *out)
{
	double x0, y0, a0;
	scene_path_eval(p, t - dt, &x0, &y0, &a0);
	scene_path_eval(p, t, &out->x, &out->y, &out->angle);
	out->vx = (out->x - x0) / dt;
	out->vy = (out->y - y0) / dt;
}

/* One step of dt ending at t + dt, with the poses the stepper would give. */
static inline int tank_step(tank *t, double dt)
{
	t->t += dt;
	tp_step_in in = {.t = t->t, .dt = dt, .boxes = t->poses};
	for (int b = 0; b < t->sc.nboxes; b++)
		pose_at(&t->boxes[b].path, t->t, dt, &t->poses[b]);
	if (t->sc.has_tank) {
		tp_box_pose tp;
		pose_at(&t->sc.tank.path, t->t, dt, &tp);
		in.tank_x = tp.x;
		in.tank_y = tp.y;
		in.tank_vx = tp.vx;
		in.tank_vy = tp.vy;
		in.tank_angle = tp.angle;
	}
	return t->d->step(t->p, &in);
}

/* The solver's statistic `name` (the test fails if it has none). */
static inline double stat(const tp_solver *d, const void *p, const char *name)
{
	tp_stats st = {0};
	d->stats(p, &st);
	for (int i = 0; i < st.n; i++)
		if (!strcmp(st.name[i], name))
			return st.value[i];
	cr_assert_fail("no stat %s", name);
	return 0;
}

/* Saves a's state as a checkpoint and loads it into b (opened on the same scene), which
 * then carries on from a's time. */
static inline void tank_checkpoint(tank *a, tank *b)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	tp_err err;
	cr_assert_eq(a->d->save(a->p, f, &err), 0, "%s", err.msg);
	rewind(f);
	cr_assert_eq(b->d->load(b->p, f, &err), 0, "%s", err.msg);
	fclose(f);
	b->t = a->t;
}

/* A pool with floating boxes: a tw x th tank in a picture 20 px larger, water `depth`
 * deep; `model` (NULL: the scene's default) sets the pressure model's parameters; boxes
 * are added by the caller (float, at rest). */
static inline void float_pool_model(tank *t, double tw, double th, double depth,
				    void (*model)(tank *))
{
	tank_scene(t, (int)tw + 20, (int)th + 20, tw, th);
	if (model)
		model(t);
	tank_block(t, 10, 10 + th - depth, tw, depth);
	t->sc.boxes = t->boxes;
}

static inline void float_pool(tank *t, double tw, double th, double depth)
{
	float_pool_model(t, tw, th, depth, NULL);
}

static inline void float_box(tank *t, double w, double h, double density, double x, double y,
			     double angle)
{
	int b = t->sc.nboxes++;
	t->bkeys[b][0] = (scene_key){0, x, y, angle};
	t->boxes[b] = (scene_box){.size = {w, h},
				  .height = 1,
				  .density = density,
				  .floating = 1,
				  .path = {1, t->bkeys[b]}};
}

/* The free surface away from the boxes: the top particle of each 8 px column more than
 * `keep` px from every box, averaged, raised by half a spacing (a particle is a blob). */
static inline double surface_level(const tp_surface *s, double keep, double spacing)
{
	double sum = 0;
	int cols = 0;
	for (double x0 = s->tank[0] + 8; x0 + 8 < s->tank[0] + s->tank[2] - 8; x0 += 8) {
		int skip = 0;
		for (int b = 0; b < s->nboxes; b++)
			skip |= fabs(x0 + 4 - s->boxes[b].x) < keep;
		if (skip)
			continue;
		double top = 1e9;
		for (int i = 0; i < s->nparticles; i++)
			if (s->px[i] >= x0 && s->px[i] < x0 + 8 && s->py[i] < top)
				top = s->py[i];
		if (top < 1e9) {
			sum += top;
			cols++;
		}
	}
	cr_assert_gt(cols, 4);
	return sum / cols - 0.5 * spacing;
}

/* The draft of a bw x bh box of density `dens` dropped from `above` px over `depth` px of
 * water in a tw x th tank (pressure model as float_pool_model), averaged over the fifth and
 * sixth seconds (it still bobs a little), from the free surface away from the box; *tilt
 * gets the largest tilt over that second. */
static inline double settled_draft_in(void (*model)(tank *), double tw, double th, double depth,
				      double above, double bw, double bh, double dens, double *tilt)
{
	tank t;
	float_pool_model(&t, tw, th, depth, model);
	float_box(&t, bw, bh, dens, 10 + 0.5 * tw, 10 + th - depth - 0.5 * bh - above, 0);
	tank_open(&t);
	const double dt = 1.0 / t.sc.fps;
	tp_surface s;
	for (int f = 0; f < 120; f++)
		cr_assert_eq(tank_step(&t, dt), 0);
	double draft = 0;
	*tilt = 0;
	for (int f = 0; f < 60; f++) {
		cr_assert_eq(tank_step(&t, dt), 0);
		t.d->surface(t.p, &s);
		draft += (s.boxes[0].y + 0.5 * bh - surface_level(&s, bw, 4)) / 60;
		*tilt = fmax(*tilt, fabs(s.boxes[0].angle));
	}
	solver_destroy(t.s);
	return draft;
}

#endif
