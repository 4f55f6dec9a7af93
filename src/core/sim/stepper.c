#include "sim/stepper.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"
#include "util/wire.h"

struct stepper {
	const scene *sc;
	solver *sol;
	const tp_solver *desc;
	void *priv;
	int frame;
	long step;        /* steps taken so far */
	long rain_slot;   /* next rain slot to fall (apply_rain) */
	/* Solver steps per scene step, num / den: the render scale for solvers whose waves
	 * move a fixed number of cells per step (solver.h, Time), else 1 / 1. */
	int64_t num, den;
	int *drop_order;  /* scene drops sorted by time */
	int next_drop;
	tp_rng *rain;     /* one stream per emitter */
	tp_box_pose *poses;
	const volatile sig_atomic_t *cancel; /* stepper_set_cancel() */
};

int stepper_create(const scene *sc, int threads, stepper **out, tp_err *err)
{
	*out = NULL;
	stepper *st = calloc(1, sizeof *st);
	if (!st)
		return tp_errf(err, TP_EIO, "out of memory");
	st->sc = sc;
	st->frame = -1;
	st->drop_order = scene_drop_order(sc);
	st->rain = calloc((size_t)sc->nemitters + 1, sizeof *st->rain);
	st->poses = calloc((size_t)sc->nboxes + 1, sizeof *st->poses);
	if (!st->drop_order || !st->rain || !st->poses) {
		stepper_destroy(st);
		return tp_errf(err, TP_EIO, "out of memory");
	}
	for (int i = 0; i < sc->nemitters; i++)
		tp_rng_seed(&st->rain[i], sc->seed, 0x7261696eu + (uint64_t)i); /* "rain" + i */
	for (int i = 0; i < sc->nboxes; i++) {
		const scene_path *p = &sc->boxes[i].path;
		scene_path_eval(p, 0, &st->poses[i].x, &st->poses[i].y, &st->poses[i].angle);
	}
	int rc = solver_create(sc, threads, &st->sol, err);
	if (rc < 0) {
		stepper_destroy(st);
		return rc;
	}
	st->desc = solver_desc(st->sol);
	st->priv = solver_priv(st->sol);
	st->num = st->den = 1;
	if ((sc->solver->caps & TP_SOLVER_CELL_STEPS) && sc->scale_num > 0 && sc->scale_den > 0) {
		st->num = sc->scale_num;
		st->den = sc->scale_den;
	}
	*out = st;
	return 0;
}

void stepper_destroy(stepper *st)
{
	if (!st)
		return;
	solver_destroy(st->sol);
	free(st->drop_order);
	free(st->rain);
	free(st->poses);
	free(st);
}

/* Scheduled drops with t <= t1 not applied yet. */
static void apply_drops(stepper *st, double t1)
{
	const scene *sc = st->sc;
	while (st->next_drop < sc->ndrops) {
		const scene_drop *d = &sc->drops[st->drop_order[st->next_drop]];
		if (d->t > t1)
			break;
		st->desc->drop(st->priv, d->x, d->y, d->radius, d->strength);
		st->next_drop++;
	}
}

/* Rain over (t0, t1]: the expected count is rate * (overlap with [from, to)); its whole
 * part falls for sure and its fraction with that probability. Each drop's place, radius
 * and strength are uniform over the emitter's ranges. */
static void rain_over(stepper *st, double t0, double t1)
{
	const scene *sc = st->sc;
	for (int i = 0; i < sc->nemitters; i++) {
		const scene_emitter *e = &sc->emitters[i];
		if (e->type != SCENE_EMIT_RAIN)
			continue;
		double a = fmax(t0, e->from), b = fmin(t1, e->to);
		if (b <= a)
			continue;
		tp_rng *r = &st->rain[i];
		double expect = e->rate * (b - a);
		int n = (int)expect;
		if (tp_rng_unit(r) < expect - n)
			n++;
		for (int k = 0; k < n; k++) {
			double x = e->area[0] + e->area[2] * tp_rng_unit(r);
			double y = e->area[1] + e->area[3] * tp_rng_unit(r);
			double rad = tp_rng_range(r, e->radius[0], e->radius[1]);
			double s = tp_rng_range(r, e->strength[0], e->strength[1]);
			st->desc->drop(st->priv, x, y, rad, s);
		}
	}
}

/* Rain falls in slots of the scene's own step, 1 / (fps * substeps), whatever steps the
 * solver takes, so the same drops fall at every render size (a solver that takes more
 * steps per frame at a larger size would otherwise draw other random numbers). Slot j
 * falls before the step in which it begins: j / (fps substeps) < t1 = (step + 1) /
 * (fps substeps num / den), compared in integers. At the scene's own size slot j is
 * step j. */
static void apply_rain(stepper *st)
{
	const scene *sc = st->sc;
	const double slots_per_s = sc->fps * sc->substeps;
	while ((int64_t)st->rain_slot * st->num < ((int64_t)st->step + 1) * st->den) {
		rain_over(st, (double)st->rain_slot / slots_per_s,
			  (double)(st->rain_slot + 1) / slots_per_s);
		st->rain_slot++;
	}
}

static void eval_pose(const scene_path *p, double t0, double t1, tp_box_pose *pose)
{
	double x0, y0, a0;
	scene_path_eval(p, t0, &x0, &y0, &a0);
	scene_path_eval(p, t1, &pose->x, &pose->y, &pose->angle);
	double dt = t1 - t0;
	pose->vx = dt > 0 ? (pose->x - x0) / dt : 0;
	pose->vy = dt > 0 ? (pose->y - y0) / dt : 0;
}

/* Steps taken by the end of frame k: substeps per frame, times num / den. Exact integer
 * arithmetic, so a frame's steps depend on k alone. */
static long steps_by_frame(const stepper *st, long k)
{
	return (long)((int64_t)k * st->sc->substeps * st->num / st->den);
}

int stepper_next(stepper *st, tp_err *err)
{
	const scene *sc = st->sc;
	st->frame++;
	if (st->frame == 0) {
		apply_drops(st, 0);
		return 0;
	}
	double steps_per_s = sc->fps * sc->substeps;
	if (st->num != st->den)
		steps_per_s = steps_per_s * (double)st->num / (double)st->den;
	const long end = steps_by_frame(st, st->frame);
	while (st->step < end) {
		if (st->cancel && *st->cancel)
			return tp_errf(err, TP_EINTR, "interrupted");
		/* Times from the step count, not accumulated, so they never drift. */
		double t0 = (double)st->step / steps_per_s;
		double t1 = (double)(st->step + 1) / steps_per_s;
		apply_drops(st, t1);
		apply_rain(st);
		tp_step_in in = { .t = t1, .step = st->step, .dt = t1 - t0, .boxes = st->poses,
				  .cancel = st->cancel };
		for (int i = 0; i < sc->nboxes; i++)
			if (!sc->boxes[i].floating)
				eval_pose(&sc->boxes[i].path, t0, t1, &st->poses[i]);
		if (sc->has_tank) {
			tp_box_pose tank;
			eval_pose(&sc->tank.path, t0, t1, &tank);
			in.tank_x = tank.x;
			in.tank_y = tank.y;
			in.tank_vx = tank.vx;
			in.tank_vy = tank.vy;
			in.tank_angle = tank.angle;
		}
		int rc = st->desc->step(st->priv, &in);
		if (rc == TP_EINTR)
			return tp_errf(err, TP_EINTR, "interrupted");
		const char *why = rc < 0 && st->desc->why ? st->desc->why(st->priv) : NULL;
		if (why)
			return tp_errf(err, rc, "%s: the %s solver blew up at t=%.3fs (frame %d): %s",
				       sc->path, st->desc->kind.name, t1, st->frame, why);
		if (rc < 0)
			return tp_errf(err, rc, "%s: the %s solver became unstable at t=%.3fs (frame %d)",
				       sc->path, st->desc->kind.name, t1, st->frame);
		st->step++;
	}
	return 0;
}

void stepper_set_cancel(stepper *st, const volatile sig_atomic_t *flag) { st->cancel = flag; }
int stepper_frame(const stepper *st) { return st->frame; }
double stepper_time(const stepper *st) { return st->frame < 0 ? 0 : st->frame / st->sc->fps; }
void stepper_surface(stepper *st, tp_surface *out) { st->desc->surface(st->priv, out); }
solver *stepper_solver(stepper *st) { return st->sol; }

int stepper_surface_optional(const stepper *st)
{
	return st->desc->surface_optional && st->desc->surface_optional(st->priv);
}

void stepper_stats(const stepper *st, tp_stats *out)
{
	out->n = 0;
	st->desc->stats(st->priv, out);
}

/* ---- checkpoints: a section of sim/ckpt.h's file ---- */

static const char STEPPER_MAGIC[8] = { 'T', 'P', 'S', 'T', 'E', 'P', '0', '1' };

/* Everything the next frames depend on besides the solver: the global step count (times
 * are derived from it, never accumulated), the next scheduled drop, each rain stream's
 * generator and the box poses. */
int stepper_save(const stepper *st, FILE *f, tp_err *err)
{
	const scene *sc = st->sc;
	int rc = tp_wr_bytes(f, STEPPER_MAGIC, 8);
	rc |= tp_wr_i32(f, st->frame) | tp_wr_i64(f, st->step) | tp_wr_i32(f, st->next_drop);
	rc |= tp_wr_i32(f, sc->nemitters) | tp_wr_i32(f, sc->nboxes);
	for (int i = 0; i < sc->nemitters; i++)
		rc |= tp_wr_u64(f, st->rain[i].state) | tp_wr_u64(f, st->rain[i].inc);
	for (int i = 0; i < sc->nboxes; i++) {
		const tp_box_pose *p = &st->poses[i];
		const double v[8] = { p->x, p->y, p->angle, p->vx, p->vy, p->z, p->tilt[0], p->tilt[1] };
		rc |= tp_wr_f64s(f, v, 8);
	}
	if (rc)
		return tp_errf(err, TP_EIO, "checkpoint: write failed");
	if (!st->desc->save)
		return tp_errf(err, TP_EINPUT, "the %s solver has no checkpoints", st->sc->solver->name);
	rc |= tp_wr_bytes(f, st->desc->kind.name, strlen(st->desc->kind.name) + 1);
	return rc ? tp_errf(err, TP_EIO, "checkpoint: write failed") : st->desc->save(st->priv, f, err);
}

/* No box pose value (scene units, radians, their rates) of a real render comes near this:
 * scenes are at most 8192 units across. */
#define STEPPER_MAX_POSE 1e9

int stepper_load(stepper *st, FILE *f, tp_err *err)
{
	const scene *sc = st->sc;
	char magic[8], name[32];
	int32_t frame, next_drop, nem, nbox;
	int64_t step;
	int rc = tp_rd_bytes(f, magic, 8);
	rc |= tp_rd_i32(f, &frame) | tp_rd_i64(f, &step) | tp_rd_i32(f, &next_drop);
	rc |= tp_rd_i32(f, &nem) | tp_rd_i32(f, &nbox);
	if (rc)
		return tp_errf(err, TP_EIO, "checkpoint: truncated");
	if (memcmp(magic, STEPPER_MAGIC, 8))
		return tp_errf(err, TP_EINPUT, "checkpoint: no stepper section");
	if (nem != sc->nemitters || nbox != sc->nboxes || frame < 0 || step < 0 || next_drop < 0 ||
	    next_drop > sc->ndrops)
		return tp_errf(err, TP_EINPUT, "checkpoint: made for another scene (%d emitters, %d boxes)",
			       (int)nem, (int)nbox);
	/* The step count follows from the frame (steps_by_frame): a damaged one would make
	 * the next frame run any number of steps, or none. (The frame is bounded first, far
	 * above any render's, so that the product cannot overflow.) */
	if (frame > 2 * SCENE_MAX_FRAMES || step != steps_by_frame(st, frame))
		return tp_errf(err, TP_EINPUT,
			       "checkpoint: the stepper's frame %d and step count %lld disagree "
			       "(damaged)",
			       (int)frame, (long long)step);
	for (int i = 0; i < sc->nemitters; i++)
		rc |= tp_rd_u64(f, &st->rain[i].state) | tp_rd_u64(f, &st->rain[i].inc);
	for (int i = 0; i < sc->nboxes; i++) {
		double v[8];
		rc |= tp_rd_f64s(f, v, 8);
		for (int j = 0; j < 8 && !rc; j++)
			/* a damaged checkpoint (found by fuzzing): a pose of 1e300 made NaNs */
			if (!(fabs(v[j]) <= STEPPER_MAX_POSE))
				return tp_errf(err, TP_EINPUT,
					       "checkpoint: box %d's pose is out of range (damaged)", i);
		st->poses[i] = (tp_box_pose){ v[0], v[1], v[2], v[3], v[4], v[5], { v[6], v[7] } };
	}
	size_t k = 0;
	int c = 1;
	while (!rc && k < sizeof name - 1 && (c = fgetc(f)) > 0)
		name[k++] = (char)c;
	if (rc || c != 0)
		return tp_errf(err, TP_EIO, "checkpoint: truncated");
	name[k] = 0;
	if (strcmp(name, st->desc->kind.name)) {
		char shown[4 * sizeof name]; /* bytes of a damaged file: escaped, never raw */
		tp_escape_bytes(name, k, sizeof name, shown, sizeof shown);
		return tp_errf(err, TP_EINPUT, "checkpoint: made by the %s solver (this scene uses %s)",
			       shown, st->desc->kind.name);
	}
	if (!st->desc->load)
		return tp_errf(err, TP_EINPUT, "the %s solver has no checkpoints", st->sc->solver->name);
	if ((rc = st->desc->load(st->priv, f, err)) < 0)
		return rc;
	st->frame = frame;
	st->step = step;
	st->next_drop = next_drop;
	/* The rain slots that have fallen follow from the step count (apply_rain): those
	 * with slot * num < step * den. */
	st->rain_slot = (long)((step * st->den + st->num - 1) / st->num);
	return 0;
}
