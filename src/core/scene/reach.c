/*
 * reach.c - no element may be ignored silently: a fluid block, stream emitter or box that
 * can have no effect, because it lies wholly outside the water (the pool, or for a
 * particle solver its tank), is refused at its place with the reason (ld.h, ld_reach).
 *
 * The tests are conservative, so nothing that could touch the water is refused: a moving
 * tank or box counts as the bounding box of its footprints at every keyframe (between two
 * keys it moves linearly, so it stays within theirs), each footprint turned by its angle
 * taken as its axis-aligned bounding box. Rectangles that only share an edge do not
 * overlap.
 */
#include <math.h>
#include <stdio.h>

#include "scene/ld.h"

typedef struct box2 {
	double x0, y0, x1, y1;
} box2;

/* The axis-aligned bounds of a w x h rectangle centred at (x, y), turned by deg. */
static box2 footprint(double x, double y, double w, double h, double deg)
{
	double a = deg * (3.14159265358979323846 / 180);
	double hw = 0.5 * (fabs(w * cos(a)) + fabs(h * sin(a)));
	double hh = 0.5 * (fabs(w * sin(a)) + fabs(h * cos(a)));
	return (box2){x - hw, y - hh, x + hw, y + hh};
}

/* Every place a w x h thing on path p may be. */
static box2 reach(const scene_path *p, double w, double h)
{
	box2 r = footprint(p->keys[0].x, p->keys[0].y, w, h, p->keys[0].angle);
	for (int k = 1; k < p->n; k++) {
		box2 f = footprint(p->keys[k].x, p->keys[k].y, w, h, p->keys[k].angle);
		r.x0 = fmin(r.x0, f.x0), r.y0 = fmin(r.y0, f.y0);
		r.x1 = fmax(r.x1, f.x1), r.y1 = fmax(r.y1, f.y1);
	}
	return r;
}

static int overlap(box2 a, box2 b)
{
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

static int inside(box2 a, double x, double y)
{
	return x >= a.x0 && x <= a.x1 && y >= a.y0 && y <= a.y1;
}

/* The i-th element of root[key], and its member m (NULL: the element). */
static const cJSON *node_of(const ld *L, const char *key, int i, const char *m)
{
	const cJSON *e = cJSON_GetArrayItem(ld_get(L->root, key), i);
	const cJSON *v = e && m ? ld_get(e, m) : NULL;
	return v ? v : e;
}

int ld_reach(ld *L)
{
	const scene *s = L->s;
	const int particles = s->solver && (s->solver->caps & TP_SOLVER_PARTICLES);
	const box2 pool = {0, 0, s->width, s->height};
	box2 tank = pool, tank0 = pool;
	char where[96] = "the pool";
	if (particles && s->has_tank) {
		const scene_key *k0 = &s->tank.path.keys[0];
		tank = reach(&s->tank.path, s->tank.size[0], s->tank.size[1]);
		double x, y, a;
		scene_path_eval(&s->tank.path, 0, &x, &y, &a);
		tank0 = footprint(x, y, s->tank.size[0], s->tank.size[1], a);
		snprintf(where, sizeof where, "the tank (%gx%g at [%g, %g]%s)", s->tank.size[0],
			 s->tank.size[1], k0->x, k0->y,
			 s->tank.path.n > 1 ? " and along its path" : "");
	}
	/* fluid blocks are filled into the tank as it stands at t = 0 */
	for (int i = 0; particles && i < s->nblocks; i++) {
		const scene_block *b = &s->blocks[i];
		if (!overlap((box2){b->x, b->y, b->x + b->w, b->y + b->h}, tank0))
			return ld_fail(
				L, node_of(L, "blocks", i, "rect"), 0,
				"lies wholly outside the tank at t = 0 (x %g..%g, y %g..%g): it "
				"would make no particle",
				tank0.x0, tank0.x1, tank0.y0, tank0.y1);
	}
	for (int i = 0; particles && i < s->nemitters; i++) {
		const scene_emitter *e = &s->emitters[i];
		if (e->type == SCENE_EMIT_STREAM && !inside(tank, e->at[0], e->at[1]))
			return ld_fail(
				L, node_of(L, "emitters", i, "at"), 0,
				"the nozzle [%g, %g] is outside %s at all times: its particles "
				"would be lost",
				e->at[0], e->at[1], where);
	}
	for (int i = 0; i < s->nboxes; i++) {
		const scene_box *b = &s->boxes[i];
		if (!overlap(reach(&b->path, b->size[0], b->size[1]), tank))
			return ld_fail(
				L, node_of(L, "boxes", i, NULL), 0,
				"lies wholly outside %s at all times: it would touch no water",
				particles && s->has_tank ? where : "the pool");
	}
	return 0;
}
