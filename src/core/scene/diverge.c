/*
 * diverge.c - the first moment two versions of a scene can simulate differently
 * (scene_diverge, scene.h), so an edited scene can keep the saved states of the old one
 * that are still its own: a drop moved at 3 s keeps every state before 3 s, a new colour
 * keeps them all.
 *
 * What the simulation reads, and so what is compared (src/core/sim/stepper.c and the
 * solvers' init): the sizes and scales, fps, substeps, the solver and its parameters, the
 * boundary, "ambient", "loop", the boxes, blocks and tank, the emitters with the seed
 * their random streams start from, and the drops. What only the renderer reads (background,
 * "render", "maps", outputs) is not compared. A difference in anything read when the
 * solver starts gives 0; a difference in a timed input gives its time:
 *   - drops, in the order the stepper applies them (by time, then file order): the time of
 *     the first that differs (a drop at t is applied before the step ending at or after t);
 *   - a kinematic path (box or tank): keyframes before the first that differs are kept, so
 *     the path is the same up to the keyframe before it (all of it if key 0 differs);
 *   - a rain emitter: from its "from" (its random stream is drawn only while it rains), or
 *     from its "to" when only that changed;
 *   - the seed: from the first rain emitter's "from" (the streams' only use of it; "ambient"
 *     keeps its own seed, compared above).
 * The particle solver (sph) sizes its buffers from the drops, emitters and frame count at
 * start, and its automatic stiffness from that size: for it a timed difference keeps its
 * time only if the drops' sizes, the emitters, the frame count, the seed and whether the
 * tank turns are all the same (a drop or a box keyframe moved), else it is 0.
 * Conservative by design: a wrong "later" would show a frame of neither scene, a wrong
 * "earlier" only costs a re-simulation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"

static double min2(double a, double b)
{
	return a < b ? a : b;
}

static int key_eq(const scene_key *a, const scene_key *b)
{
	return a->t == b->t && a->x == b->x && a->y == b->y && a->angle == b->angle;
}

/* A path interpolates between keyframes and holds outside them, so it is the same until
 * the keyframe before the first one that differs (or is missing in one of the two). */
static double path_diverge(const scene_path *a, const scene_path *b)
{
	int n = a->n < b->n ? a->n : b->n;
	int i = 0;
	while (i < n && key_eq(&a->keys[i], &b->keys[i]))
		i++;
	if (i == a->n && i == b->n)
		return INFINITY;
	return i == 0 ? -INFINITY : a->keys[i - 1].t;
}

static int path_eq(const scene_path *a, const scene_path *b)
{
	return path_diverge(a, b) == INFINITY;
}

/* The emitter's fields other than its time window. */
static int emitter_same_rain(const scene_emitter *a, const scene_emitter *b)
{
	return a->rate == b->rate && !memcmp(a->radius, b->radius, sizeof a->radius) &&
	       !memcmp(a->strength, b->strength, sizeof a->strength) &&
	       !memcmp(a->area, b->area, sizeof a->area);
}

static int emitter_eq(const scene_emitter *a, const scene_emitter *b)
{
	return a->type == b->type && a->from == b->from && a->to == b->to &&
	       emitter_same_rain(a, b) && !memcmp(a->at, b->at, sizeof a->at) &&
	       a->direction == b->direction && a->speed == b->speed && a->spread == b->spread &&
	       a->cap == b->cap;
}

static int waves_eq(const scene_waves *a, const scene_waves *b)
{
	return a->spectrum == b->spectrum && a->wind == b->wind && a->direction == b->direction &&
	       a->fetch == b->fetch && a->amplitude == b->amplitude && a->shortest == b->shortest &&
	       a->spreading == b->spreading && a->against == b->against && a->seed == b->seed;
}

static int ambient_eq(const scene_ambient *a, const scene_ambient *b)
{
	if (!a->on && !b->on)
		return 1;
	if (a->on != b->on || a->nwaves != b->nwaves)
		return 0;
	for (int i = 0; i < a->nwaves; i++)
		if (!waves_eq(&a->waves[i], &b->waves[i]))
			return 0;
	return a->choppiness == b->choppiness && a->foam_threshold == b->foam_threshold &&
	       a->foam_fade == b->foam_fade && a->foam_range[0] == b->foam_range[0] &&
	       a->foam_range[1] == b->foam_range[1];
}

/* Everything read when the solver starts. */
static int start_eq(const scene *a, const scene *b)
{
	if (a->width != b->width || a->height != b->height || a->scale != b->scale ||
	    a->scale_x != b->scale_x || a->scale_y != b->scale_y || a->scale_num != b->scale_num ||
	    a->scale_den != b->scale_den || a->fps != b->fps || a->substeps != b->substeps ||
	    a->boundary != b->boundary || a->solver != b->solver || a->nparams != b->nparams ||
	    !ambient_eq(&a->ambient, &b->ambient) || a->loop.on != b->loop.on ||
	    a->nboxes != b->nboxes || a->nblocks != b->nblocks || a->has_tank != b->has_tank ||
	    a->nemitters != b->nemitters)
		return 0;
	for (int i = 0; i < a->nparams; i++)
		if (strcmp(a->params[i].name, b->params[i].name) ||
		    a->params[i].value != b->params[i].value)
			return 0;
	/* A loop's frames are cut from fixed simulated frames (sim/loop.h); airy also times
	 * its period from them, and runs ambient-only loops as a closed form. */
	if (a->loop.on && (a->frames != b->frames || a->loop.frames != b->loop.frames ||
			   a->loop.start_frame != b->loop.start_frame ||
			   a->loop.fade_frames != b->loop.fade_frames ||
			   (a->ndrops == 0) != (b->ndrops == 0)))
		return 0;
	for (int i = 0; i < a->nboxes; i++) {
		const scene_box *p = &a->boxes[i], *q = &b->boxes[i];
		if (memcmp(p->size, q->size, sizeof p->size) || p->height != q->height ||
		    p->density != q->density || p->floating != q->floating)
			return 0;
		if (p->floating && !path_eq(&p->path, &q->path)) /* its path is its start */
			return 0;
	}
	for (int i = 0; i < a->nblocks; i++)
		if (memcmp(&a->blocks[i], &b->blocks[i], sizeof a->blocks[i]))
			return 0;
	if (a->has_tank && memcmp(a->tank.size, b->tank.size, sizeof a->tank.size))
		return 0;
	for (int i = 0; i < a->nemitters; i++)
		if (a->emitters[i].type != b->emitters[i].type)
			return 0;
	return 1;
}

static double drops_diverge(const scene *a, const scene *b)
{
	int *oa = scene_drop_order(a), *ob = scene_drop_order(b);
	double t = -INFINITY;
	if (oa && ob) {
		int n = a->ndrops < b->ndrops ? a->ndrops : b->ndrops, i = 0;
		for (; i < n; i++) {
			const scene_drop *p = &a->drops[oa[i]], *q = &b->drops[ob[i]];
			if (memcmp(p, q, sizeof *p))
				break;
		}
		if (i < n)
			t = min2(a->drops[oa[i]].t, b->drops[ob[i]].t);
		else if (a->ndrops > n)
			t = a->drops[oa[n]].t;
		else if (b->ndrops > n)
			t = b->drops[ob[n]].t;
		else
			t = INFINITY;
	}
	free(oa);
	free(ob);
	return t;
}

/* Orders drops by radius, then strength (what a particle solver sizes its buffers by). */
static int drop_size_cmp(const void *pa, const void *pb)
{
	const scene_drop *a = pa, *b = pb;
	if (a->radius != b->radius)
		return a->radius < b->radius ? -1 : 1;
	if (a->strength != b->strength)
		return a->strength < b->strength ? -1 : 1;
	return 0;
}

/* 1 if any keyframe of the path has an angle (sph then works in the tank's turning frame). */
static int path_turns(const scene_path *p)
{
	for (int k = 0; k < p->n; k++)
		if (p->keys[k].angle != 0)
			return 1;
	return 0;
}

/* What sph reads from the whole timeline when it starts is the same in both: its
 * particle capacity (the blocks, compared in start_eq; the drops' sizes, whenever they
 * fall; the emitters whole, with the frame count their streams and rain are counted over),
 * which also sets its automatic stiffness; the seed of its streams; and whether any tank
 * keyframe turns the tank (the turning frame is chosen at the start). */
static int particles_alike(const scene *a, const scene *b)
{
	if (a->frames != b->frames || a->seed != b->seed || a->ndrops != b->ndrops)
		return 0;
	for (int i = 0; i < a->nemitters; i++)
		if (!emitter_eq(&a->emitters[i], &b->emitters[i]))
			return 0;
	if (a->has_tank && path_turns(&a->tank.path) != path_turns(&b->tank.path))
		return 0;
	int same = 0;
	size_t n = (size_t)a->ndrops;
	scene_drop *da = malloc((n + 1) * sizeof *da), *db = malloc((n + 1) * sizeof *db);
	if (da && db) {
		if (n) {
			memcpy(da, a->drops, n * sizeof *da);
			memcpy(db, b->drops, n * sizeof *db);
		}
		qsort(da, n, sizeof *da, drop_size_cmp);
		qsort(db, n, sizeof *db, drop_size_cmp);
		same = 1;
		for (size_t i = 0; i < n && same; i++)
			same = da[i].radius == db[i].radius && da[i].strength == db[i].strength;
	}
	free(da);
	free(db);
	return same;
}

double scene_diverge(const scene *a, const scene *b)
{
	if (!start_eq(a, b))
		return -INFINITY;
	double t = drops_diverge(a, b);
	for (int i = 0; i < a->nboxes; i++)
		if (!a->boxes[i].floating)
			t = min2(t, path_diverge(&a->boxes[i].path, &b->boxes[i].path));
	if (a->has_tank)
		t = min2(t, path_diverge(&a->tank.path, &b->tank.path));
	int rain = 0;
	double first_rain = INFINITY;
	for (int i = 0; i < a->nemitters; i++) {
		const scene_emitter *p = &a->emitters[i], *q = &b->emitters[i];
		if (p->type == SCENE_EMIT_RAIN) {
			rain = 1;
			first_rain = min2(first_rain, min2(p->from, q->from));
		}
		if (emitter_eq(p, q))
			continue;
		if (p->type == SCENE_EMIT_RAIN && p->from == q->from && emitter_same_rain(p, q))
			t = min2(t, min2(p->to, q->to));
		else
			t = min2(t, min2(p->from, q->from));
	}
	if (rain && a->seed != b->seed)
		t = min2(t, first_rain);
	if ((a->solver->caps & TP_SOLVER_PARTICLES) && t != INFINITY && !particles_alike(a, b))
		return -INFINITY;
	return t;
}
