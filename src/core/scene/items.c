/*
 * items.c - the parts of a scene placed in the pool and in time: background, render
 * settings, drops, emitters, boxes, the tank and fluid blocks. Called by load.c once
 * the pool size and the scene length are known, so positions and times can be checked
 * against them.
 */
#include <stdlib.h>
#include <string.h>

#include "util/png.h"
#include "scene/ld.h"

#define COORD_MAX 1e6 /* keyframed things may start or end off the pool, not absurdly far */
#define TIME_MAX 1e7  /* seconds; longer than any scene of SCENE_MAX_FRAMES at >= 0.1 fps */

static const ld_range any_time = { 0, TIME_MAX, 0 };

static int oom(ld *L)
{
	return tp_errf(L->err, TP_EIO, "out of memory");
}

static int array(ld *L, const cJSON *v, const char *what, int *n)
{
	char got[96];
	if (!cJSON_IsArray(v))
		return ld_fail(L, v, 0, "must be an array [...] of %s (got %s)", what,
			ld_got(L, v, got, sizeof got));
	*n = cJSON_GetArraySize(v);
	return 0;
}

/* [x, y] inside the pool, edges included. */
static int pool_point(ld *L, const cJSON *v, double out[2])
{
	const ld_range r[2] = { { 0, L->s->width, 0 }, { 0, L->s->height, 0 } };
	return ld_vec_each(L, v, 2, r, out);
}

/* [x, y, w, h] with a positive size, lying inside the pool. */
static int pool_rect(ld *L, const cJSON *v, double out[4])
{
	const ld_range r[4] = {
		{ 0, L->s->width, 0 },
		{ 0, L->s->height, 0 },
		{ 0, L->s->width, LD_LO_OPEN },
		{ 0, L->s->height, LD_LO_OPEN },
	};
	int rc = ld_vec_each(L, v, 4, r, out);
	if (rc == 0 && (out[0] + out[2] > L->s->width || out[1] + out[3] > L->s->height))
		return ld_fail(L, v, 0, "must lie inside the %dx%d pool (got x+w = %g, y+h = %g)",
			L->s->width, L->s->height, out[0] + out[2], out[1] + out[3]);
	return rc;
}

/* ---- background and render ---- */

static const char *const bg_keys[] = { "pattern", "scale", "colors", "image", NULL };
static const char *const pattern_names[] = { "tiles", "checker", "pebbles", "gradient", NULL };

int ld_background(ld *L, const cJSON *v)
{
	scene_background *bg = &L->s->background;
	/* Per-pattern colours when "colors" is absent: [face, grout/gap]. */
	static const uint8_t def[4][2][3] = {
		{ { 0xdc, 0xeb, 0xef }, { 0x5f, 0x8e, 0xa3 } }, /* tiles: pale glaze, blue grout */
		{ { 0xe8, 0xee, 0xf0 }, { 0x7a, 0xa5, 0xb8 } }, /* checker */
		{ { 0x8a, 0x7f, 0x6c }, { 0xc9, 0xb9, 0x8f } }, /* pebbles: stones on sand */
		{ { 0xbf, 0xe3, 0xea }, { 0x2f, 0x6f, 0x8a } }, /* gradient: shallow to deep */
	};
	int rc, pat = SCENE_PATTERN_TILES;
	bg->pattern = SCENE_PATTERN_TILES;
	bg->scale = 32;
	memcpy(bg->color, def[0], sizeof def[0]);
	if (!v)
		return 0;
	if ((rc = ld_object(L, v, bg_keys)) < 0)
		return rc;
	const cJSON *img = ld_get(v, "image");
	if (img) {
		for (int i = 0; i < 3; i++) {
			const cJSON *other = ld_get(v, bg_keys[i]);
			if (other)
				return ld_fail(L, other, 1, "does not apply to a background \"image\" (give one or the other)");
		}
		const char *rel;
		if ((rc = ld_string(L, img, &rel)) < 0 || (rc = ld_resolve(L, img, rel, &bg->image)) < 0)
			return rc;
		/* Decoded now so a missing or broken picture is a scene error, not a failure
		 * halfway through a render. */
		tp_err e;
		if (tp_png_read(bg->image, TP_RGB8, &bg->pixels, &e) < 0)
			return ld_fail(L, img, 0, "%s", e.msg);
		return 0;
	}
	const cJSON *p = ld_get(v, "pattern"), *colors = ld_get(v, "colors");
	if (p && (rc = ld_enum(L, p, pattern_names, &pat)) < 0)
		return rc;
	bg->pattern = (scene_pattern)pat;
	memcpy(bg->color, def[pat], sizeof def[pat]);
	const ld_range scale = { 2, 4096, 0 };
	if ((rc = ld_opt_num(L, v, "scale", &scale, &bg->scale)) < 0)
		return rc;
	if (colors) {
		char got[96];
		if (!cJSON_IsArray(colors) || cJSON_GetArraySize(colors) != 2)
			return ld_fail(L, colors, 0, "must be two colours [\"#rrggbb\", \"#rrggbb\"] (got %s)",
				ld_got(L, colors, got, sizeof got));
		if ((rc = ld_color(L, colors->child, bg->color[0])) < 0 ||
		    (rc = ld_color(L, colors->child->next, bg->color[1])) < 0)
			return rc;
	}
	return 0;
}

static const char *const render_keys[] = {
	"mode", "refraction", "reflection", "tint", "tint_strength", "specular", "shadows", "antialias", NULL,
};
static const char *const aa_names[] = { "supersample", "footprint", NULL };

/* render.antialias: a boolean (true: the default method) or a method's name. */
static int ld_antialias(ld *L, const cJSON *a, int *out)
{
	int rc, m = 0;
	if (!a || cJSON_IsBool(a)) {
		if (a)
			*out = cJSON_IsTrue(a) ? SCENE_AA_DEFAULT : SCENE_AA_OFF;
		return 0;
	}
	if (!cJSON_IsString(a)) {
		char got[96];
		return ld_fail(L, a, 0,
			       "must be true, false, \"supersample\" or \"footprint\" (got %s)",
			       ld_got(L, a, got, sizeof got));
	}
	if ((rc = ld_enum(L, a, aa_names, &m)) < 0)
		return rc;
	*out = m ? SCENE_AA_FOOTPRINT : SCENE_AA_SUPERSAMPLE;
	return 0;
}

int ld_render(ld *L, const cJSON *v)
{
	scene_render *r = &L->s->render;
	uint8_t tint[3] = { 0x1b, 0x6c, 0xa8 };
	int rc, mode = SCENE_MODE_COLOR;
	r->refraction = 1.0;
	r->reflection = 1.0;
	r->tint_strength = 0.15;
	r->specular = 0.5;
	r->shadows = 1;
	r->antialias = SCENE_AA_DEFAULT;
	if (v) {
		const ld_range r100 = { 0, 100, 0 }, r1 = { 0, 1, 0 }, r10 = { 0, 10, 0 };
		const cJSON *m = ld_get(v, "mode"), *t = ld_get(v, "tint");
		if ((rc = ld_object(L, v, render_keys)) < 0 ||
		    (m && (rc = ld_mode(L, m, &mode)) < 0) ||
		    (rc = ld_opt_num(L, v, "refraction", &r100, &r->refraction)) < 0 ||
		    (rc = ld_opt_num(L, v, "reflection", &r100, &r->reflection)) < 0 ||
		    (t && (rc = ld_color(L, t, tint)) < 0) ||
		    (rc = ld_opt_num(L, v, "tint_strength", &r1, &r->tint_strength)) < 0 ||
		    (rc = ld_opt_num(L, v, "specular", &r10, &r->specular)) < 0 ||
		    (rc = ld_opt_bool(L, v, "shadows", &r->shadows)) < 0 ||
		    (rc = ld_antialias(L, ld_get(v, "antialias"), &r->antialias)) < 0)
			return rc;
	}
	r->mode = (scene_mode)mode;
	for (int i = 0; i < 3; i++)
		r->tint[i] = tint[i] / 255.0;
	return 0;
}

/* ---- drops and emitters ---- */

static const char *const drop_keys[] = { "t", "at", "radius", "strength", NULL };
static const ld_range radius_r = { 0, 4096, LD_LO_OPEN };
static const ld_range strength_r = { -1000, 1000, 0 };

int ld_drops(ld *L, const cJSON *v)
{
	scene *s = L->s;
	int n = 0, rc;
	if (!v)
		return 0;
	if ((rc = array(L, v, "drops", &n)) < 0)
		return rc;
	if (n && !(s->drops = calloc((size_t)n, sizeof *s->drops)))
		return oom(L);
	for (const cJSON *e = v->child; e; e = e->next) {
		scene_drop *d = &s->drops[s->ndrops];
		const cJSON *at = ld_get(e, "at");
		double xy[2];
		d->radius = 8;
		d->strength = 1;
		if ((rc = ld_object(L, e, drop_keys)) < 0)
			return rc;
		if (!at)
			return ld_missing(L, e, "at", " (the drop's centre [x, y] in pixels)");
		if ((rc = ld_opt_num(L, e, "t", &any_time, &d->t)) < 0 || (rc = pool_point(L, at, xy)) < 0 ||
		    (rc = ld_opt_num(L, e, "radius", &radius_r, &d->radius)) < 0 ||
		    (rc = ld_opt_num(L, e, "strength", &strength_r, &d->strength)) < 0)
			return rc;
		d->x = xy[0];
		d->y = xy[1];
		s->ndrops++;
	}
	return 0;
}

/* Every key of an emitter and the type it belongs to (-1: every type), in the order
 * messages list them. */
static const struct {
	const char *key;
	int type;
} emitter_keys[] = {
	{ "type", -1 },
	{ "from", -1 },
	{ "to", -1 },
	{ "rate", -1 },
	{ "radius", SCENE_EMIT_RAIN },
	{ "strength", SCENE_EMIT_RAIN },
	{ "area", SCENE_EMIT_RAIN },
	{ "at", SCENE_EMIT_STREAM },
	{ "direction", SCENE_EMIT_STREAM },
	{ "speed", SCENE_EMIT_STREAM },
	{ "spread", SCENE_EMIT_STREAM },
	{ "cap", SCENE_EMIT_STREAM },
};
#define NEMITTER_KEYS (sizeof emitter_keys / sizeof emitter_keys[0])
static const char *const emitter_types[] = { "rain", "stream", NULL };

static int read_emitter(ld *L, const cJSON *e, scene_emitter *em)
{
	int rc, type;
	const cJSON *t = ld_get(e, "type"), *to = ld_get(e, "to");
	const char *keys[NEMITTER_KEYS + 1];
	for (size_t k = 0; k < NEMITTER_KEYS; k++)
		keys[k] = emitter_keys[k].key;
	keys[NEMITTER_KEYS] = NULL;
	if ((rc = ld_object(L, e, keys)) < 0)
		return rc;
	if (!t)
		return ld_missing(L, e, "type", " (\"rain\" or \"stream\")");
	if ((rc = ld_enum(L, t, emitter_types, &type)) < 0)
		return rc;
	em->type = (scene_emitter_type)type;
	for (size_t k = 0; k < NEMITTER_KEYS; k++) {
		const int of = emitter_keys[k].type;
		const cJSON *m = of >= 0 ? ld_get(e, emitter_keys[k].key) : NULL;
		if (m && of != type)
			return ld_fail(L, m, 1, "applies to \"%s\" emitters only", emitter_types[of]);
	}

	const ld_range rate_r = { 0, 100000, LD_LO_OPEN };
	em->rate = type == SCENE_EMIT_RAIN ? 10 : 100;
	if ((rc = ld_opt_num(L, e, "from", &any_time, &em->from)) < 0 ||
	    (rc = ld_opt_num(L, e, "rate", &rate_r, &em->rate)) < 0)
		return rc;
	if (to) {
		const ld_range to_r = { em->from, TIME_MAX, LD_LO_OPEN };
		if ((rc = ld_num(L, to, &to_r, &em->to)) < 0)
			return rc;
	} else {
		/* Until the end; an emitter starting after the end (a shortened --frames run)
		 * gets an empty window rather than an error. */
		em->to = L->end > em->from ? L->end : em->from;
	}

	if (type == SCENE_EMIT_RAIN) {
		const cJSON *radius = ld_get(e, "radius"), *strength = ld_get(e, "strength");
		const cJSON *area = ld_get(e, "area");
		em->radius[0] = 4, em->radius[1] = 10;
		em->strength[0] = 0.5, em->strength[1] = 1.0;
		em->area[0] = 0, em->area[1] = 0;
		em->area[2] = L->s->width, em->area[3] = L->s->height;
		if ((radius && (rc = ld_minmax(L, radius, &radius_r, em->radius)) < 0) ||
		    (strength && (rc = ld_minmax(L, strength, &strength_r, em->strength)) < 0) ||
		    (area && (rc = pool_rect(L, area, em->area)) < 0))
			return rc;
		return 0;
	}

	const cJSON *at = ld_get(e, "at");
	const ld_range dir_r = { -360, 360, 0 }, speed_r = { 0, 100000, 0 }, spread_r = { 0, 180, 0 };
	const ld_range cap_r = { 0, 10000000, LD_INT };
	em->direction = 90;
	em->speed = 300;
	em->spread = 5;
	if (!at)
		return ld_missing(L, e, "at", " (the nozzle position [x, y] in pixels)");
	if ((rc = pool_point(L, at, em->at)) < 0 ||
	    (rc = ld_opt_num(L, e, "direction", &dir_r, &em->direction)) < 0 ||
	    (rc = ld_opt_num(L, e, "speed", &speed_r, &em->speed)) < 0 ||
	    (rc = ld_opt_num(L, e, "spread", &spread_r, &em->spread)) < 0 ||
	    (rc = ld_opt_int(L, e, "cap", &cap_r, &em->cap)) < 0)
		return rc;
	return 0;
}

int ld_emitters(ld *L, const cJSON *v)
{
	scene *s = L->s;
	int n = 0, rc;
	if (!v)
		return 0;
	if ((rc = array(L, v, "emitters", &n)) < 0)
		return rc;
	if (n && !(s->emitters = calloc((size_t)n, sizeof *s->emitters)))
		return oom(L);
	for (const cJSON *e = v->child; e; e = e->next) {
		if ((rc = read_emitter(L, e, &s->emitters[s->nemitters])) < 0)
			return rc;
		s->nemitters++;
	}
	return 0;
}

/* ---- boxes, tank, blocks: things with a size and a (keyframed) position ---- */

static const char *const key_keys[] = { "t", "at", "angle", NULL };
static const ld_range coord_r = { -COORD_MAX, COORD_MAX, 0 };
static const ld_range angle_r = { -COORD_MAX, COORD_MAX, 0 };

/* "path": [{t, at, angle}, ...] with strictly increasing t, or "at" (+ optional
 * "angle") for something that stays put: one key at t = 0. */
static int read_placement(ld *L, const cJSON *obj, scene_path *p, int def_x, double dx, double dy)
{
	const cJSON *path = ld_get(obj, "path"), *at = ld_get(obj, "at"), *angle = ld_get(obj, "angle");
	int n = 0, rc;
	double xy[2] = { dx, dy };
	if (path && at)
		return ld_fail(L, at, 1, "give either \"path\" or \"at\", not both");
	if (path && angle)
		return ld_fail(L, angle, 1, "goes with \"at\"; with a \"path\", give \"angle\" in its keys");
	if (!path) {
		if (!at && !def_x)
			return ld_missing(L, obj, "path", " or \"at\" (where it is)");
		if (!(p->keys = calloc(1, sizeof *p->keys)))
			return oom(L);
		p->n = 1;
		if ((at && (rc = ld_vec(L, at, 2, &coord_r, xy)) < 0) ||
		    (rc = ld_opt_num(L, obj, "angle", &angle_r, &p->keys[0].angle)) < 0)
			return rc;
		p->keys[0].x = xy[0];
		p->keys[0].y = xy[1];
		return 0;
	}
	if ((rc = array(L, path, "keyframes {\"t\", \"at\", \"angle\"}", &n)) < 0)
		return rc;
	if (n < 1)
		return ld_fail(L, path, 0, "needs at least one keyframe");
	if (!(p->keys = calloc((size_t)n, sizeof *p->keys)))
		return oom(L);
	for (const cJSON *e = path->child; e; e = e->next) {
		scene_key *k = &p->keys[p->n];
		const cJSON *t = ld_get(e, "t"), *kat = ld_get(e, "at");
		if ((rc = ld_object(L, e, key_keys)) < 0)
			return rc;
		if (!t)
			return ld_missing(L, e, "t", " (the keyframe's time in seconds)");
		if (!kat)
			return ld_missing(L, e, "at", " (the position [x, y] at time t)");
		ld_range tr = any_time;
		if (p->n > 0) {
			tr.lo = p->keys[p->n - 1].t;
			tr.flags |= LD_LO_OPEN;
		}
		if ((rc = ld_num(L, t, &tr, &k->t)) < 0 || (rc = ld_vec(L, kat, 2, &coord_r, xy)) < 0 ||
		    (rc = ld_opt_num(L, e, "angle", &angle_r, &k->angle)) < 0)
			return rc;
		k->x = xy[0];
		k->y = xy[1];
		p->n++;
	}
	return 0;
}

static const char *const box_keys[] = {
	"size", "height", "density", "float", "path", "at", "angle", NULL,
};
static const ld_range extent_r = { 0, 16384, LD_LO_OPEN };

int ld_boxes(ld *L, const cJSON *v)
{
	scene *s = L->s;
	int n = 0, rc;
	if (!v)
		return 0;
	if ((rc = array(L, v, "boxes", &n)) < 0)
		return rc;
	if (n && !(s->boxes = calloc((size_t)n, sizeof *s->boxes)))
		return oom(L);
	for (const cJSON *e = v->child; e; e = e->next) {
		scene_box *b = &s->boxes[s->nboxes++]; /* counted first: destroy frees its path */
		const cJSON *size = ld_get(e, "size");
		const ld_range height_r = { 0, 1000, LD_LO_OPEN }, density_r = { 0, 10, LD_LO_OPEN };
		b->height = 1;
		b->density = 0.5;
		if ((rc = ld_object(L, e, box_keys)) < 0)
			return rc;
		if (!size)
			return ld_missing(L, e, "size", " (the footprint [w, h] in pixels)");
		if ((rc = ld_vec(L, size, 2, &extent_r, b->size)) < 0 ||
		    (rc = ld_opt_num(L, e, "height", &height_r, &b->height)) < 0 ||
		    (rc = ld_opt_num(L, e, "density", &density_r, &b->density)) < 0 ||
		    (rc = ld_opt_bool(L, e, "float", &b->floating)) < 0 ||
		    (rc = read_placement(L, e, &b->path, 0, 0, 0)) < 0)
			return rc;
	}
	return 0;
}

static const char *const tank_keys[] = { "size", "path", "at", "angle", NULL };

int ld_tank(ld *L, const cJSON *v)
{
	scene *s = L->s;
	int rc;
	if (!v)
		return 0;
	if ((rc = ld_object(L, v, tank_keys)) < 0)
		return rc;
	s->has_tank = 1;
	s->tank.size[0] = s->width;
	s->tank.size[1] = s->height;
	const cJSON *size = ld_get(v, "size");
	if (size && (rc = ld_vec(L, size, 2, &extent_r, s->tank.size)) < 0)
		return rc;
	return read_placement(L, v, &s->tank.path, 1, s->width / 2.0, s->height / 2.0);
}

static const char *const block_keys[] = { "rect", NULL };

int ld_blocks(ld *L, const cJSON *v)
{
	scene *s = L->s;
	int n = 0, rc;
	if (!v)
		return 0;
	if ((rc = array(L, v, "blocks", &n)) < 0)
		return rc;
	if (n && !(s->blocks = calloc((size_t)n, sizeof *s->blocks)))
		return oom(L);
	for (const cJSON *e = v->child; e; e = e->next) {
		const cJSON *rect = ld_get(e, "rect");
		double r[4];
		if ((rc = ld_object(L, e, block_keys)) < 0)
			return rc;
		if (!rect)
			return ld_missing(L, e, "rect", " (the fluid's [x, y, w, h] in pixels)");
		if ((rc = pool_rect(L, rect, r)) < 0)
			return rc;
		s->blocks[s->nblocks++] = (scene_block){ r[0], r[1], r[2], r[3] };
	}
	return 0;
}
