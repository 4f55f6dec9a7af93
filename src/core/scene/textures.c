/*
 * textures.c - the scene fields for texture work: "loop", "outputs", "maps", "flipbook"
 * and "variants" (README "Textures for artists", scenes/README.md).
 *
 * ld_loop() runs right after the timing is known, because a loop changes how many frames
 * are written and how long the simulation runs (rain without a "to" must keep falling
 * through the cross-fade); ld_textures() reads the rest once everything else is read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/ld.h"

#define LOOP_MAX_SECONDS 1e5
#define VARY_MAX_VALUES 10000
#define VARIANTS_MAX 100000

static int oom(ld *L) { return tp_errf(L->err, TP_EIO, "out of memory"); }

/* ---- loop ---- */

static const char *const loop_keys[] = { "duration", "start", "crossfade", NULL };

int ld_loop(ld *L, const scene_overrides *ov)
{
	scene *s = L->s;
	scene_loop *lp = &s->loop;
	const cJSON *v = ld_get(L->root, "loop");
	int rc;
	if (!v)
		return 0;
	if ((rc = ld_object(L, v, loop_keys)) < 0)
		return rc;
	const cJSON *d = ld_get(v, "duration");
	if (!d)
		return ld_missing(L, v, "duration", " (seconds of the loop, such as \"duration\": 4)");
	const ld_range dr = { 0, LOOP_MAX_SECONDS, LD_LO_OPEN }, sr = { 0, LOOP_MAX_SECONDS, 0 };
	if ((rc = ld_num(L, d, &dr, &lp->duration)) < 0)
		return rc;
	lp->start = 0;
	lp->crossfade = lp->duration / 4;
	if ((rc = ld_opt_num(L, v, "start", &sr, &lp->start)) < 0 ||
	    (rc = ld_opt_num(L, v, "crossfade", &sr, &lp->crossfade)) < 0)
		return rc;

	long frames = lround(lp->duration * s->fps);
	long fade = lround(lp->crossfade * s->fps), start = lround(lp->start * s->fps);
	if (frames < 2)
		return ld_fail(L, d, 0, "a loop needs at least 2 frames (%g s at %g fps is %ld)",
			lp->duration, s->fps, frames);
	/* An override of the frame count would cut another, N-frame loop (its waves and
	 * cross-fade fitted to N frames), not N frames of this one: what is meant is some
	 * frames of it (the CLI's --range). The client names its words (scene_ov). */
	if (ov && ov->frames && ov->frames != frames) {
		const char *fr = scene_overrides_name(ov, SCENE_OV_FRAMES);
		const char *range = scene_overrides_name(ov, SCENE_OV_RANGE); /* NULL: none */
		return tp_errf(L->err, TP_EARG,
			       "%s: %s %d: the scene is a %ld-frame loop (\"loop\": %g s at %g fps) "
			       "and %s would make another loop, not frames of this one; render some "
			       "of its frames%s%s%s (0-%ld), or change the loop with %s "
			       "loop.duration=SECONDS",
			       s->path, fr, ov->frames, frames, lp->duration, s->fps, fr,
			       range ? " with " : "", range ? range : "", range ? " A-B" : "",
			       frames - 1, scene_overrides_name(ov, SCENE_OV_SETS));
	}
	if (fade > frames)
		return ld_fail(L, ld_get(v, "crossfade"), 0,
			"must not be longer than the loop (%g s > %g s)", lp->crossfade, lp->duration);
	if (frames + fade + start > SCENE_MAX_FRAMES)
		return ld_fail(L, v, 0, "simulates %ld frames, more than the limit of %d",
			frames + fade + start, SCENE_MAX_FRAMES);
	lp->on = 1;
	lp->frames = (int)frames;
	lp->fade_frames = (int)fade;
	lp->start_frame = (int)start;
	s->frames = (int)frames;
	/* The simulation runs through the cross-fade: events last until its end. */
	L->end = (double)(frames + fade + start) / s->fps;
	return 0;
}

/* ---- outputs ---- */

static const char *const output_keys[] = { "mode", "path", NULL };

static int read_outputs(ld *L)
{
	scene *s = L->s;
	const cJSON *v = ld_get(L->root, "outputs"), *one = ld_get(L->root, "output");
	char got[96];
	int rc;
	if (!v)
		return 0;
	if (one)
		return ld_fail(L, one, 1, "give either \"output\" or \"outputs\", not both");
	int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
	if (n < 1 || n > 8)
		return ld_fail(L, v, 0, "must be an array of 1 to 8 {\"mode\": ..., \"path\": ...} (got %s)",
			ld_got(L, v, got, sizeof got));
	s->outputs = calloc((size_t)n, sizeof *s->outputs);
	if (!s->outputs)
		return oom(L);
	for (const cJSON *o = v->child; o; o = o->next) {
		scene_output *so = &s->outputs[s->noutputs++];
		const cJSON *m = ld_get(o, "mode"), *p = ld_get(o, "path");
		const char *rel;
		int mode = s->render.mode;
		if ((rc = ld_object(L, o, output_keys)) < 0)
			return rc;
		if (!p)
			return ld_missing(L, o, "path", " (such as \"out/caustics_%04d.png\")");
		if ((m && (rc = ld_mode(L, m, &mode)) < 0) ||
		    (rc = ld_string(L, p, &rel)) < 0 || (rc = ld_resolve(L, p, rel, &so->path)) < 0)
			return rc;
		so->mode = (scene_mode)mode;
	}
	return 0;
}

/* ---- maps ---- */

static const char *const maps_keys[] = { "height", "normal", "caustics", "exr", NULL };
static const char *const exr_keys[] = { "type", "compression", NULL };
static const char *const exr_types[] = { "half", "float", NULL };
static const char *const exr_compressions[] = { "zip", "zips", "piz", "rle", "none", NULL };
static const char *const height_keys[] = { "scale", NULL };
static const char *const normal_keys[] = { "strength", "convention", "bits", NULL };
static const char *const caustics_keys[] = { "depth", "intensity", "bits", "tone", NULL };
static const char *const tones[] = { "soft", "linear", NULL };
static const char *const conventions[] = { "opengl", "directx", NULL };

static int read_bits(ld *L, const cJSON *obj, int *bits)
{
	const cJSON *b = ld_get(obj, "bits");
	const ld_range r = { 8, 16, LD_INT };
	int rc;
	*bits = 8;
	if (b && (rc = ld_int(L, b, &r, bits)) < 0)
		return rc;
	if (*bits != 8 && *bits != 16)
		return ld_fail(L, b, 0, "must be 8 or 16 (got %d)", *bits);
	return 0;
}

static int read_maps(ld *L)
{
	scene_maps *m = &L->s->maps;
	const cJSON *v = ld_get(L->root, "maps");
	const cJSON *h = v ? ld_get(v, "height") : NULL, *n = v ? ld_get(v, "normal") : NULL;
	const cJSON *c = v ? ld_get(v, "caustics") : NULL, *conv = n ? ld_get(n, "convention") : NULL;
	const cJSON *tone = c ? ld_get(c, "tone") : NULL;
	const ld_range scale = { 0, 1e6, LD_LO_OPEN }, strength = { 0, 1000, LD_LO_OPEN };
	const ld_range depth = { 0, 1e5, LD_LO_OPEN }, intensity = { 0, 100, LD_LO_OPEN };
	int rc;
	/* Defaults match maps.c's (which also applies them to zeroed scenes). */
	m->height_scale = 0;
	m->normal_strength = 4;
	m->normal_directx = 0;
	m->caustics_depth = 160;
	m->caustics_intensity = 0.25;
	m->normal_bits = 8;
	m->caustics_bits = 8;
	m->caustics_linear = 0;
	m->exr_float = 0;
	m->exr_compression = SCENE_EXR_ZIP;
	if (v && (rc = ld_object(L, v, maps_keys)) < 0)
		return rc;
	const cJSON *x = v ? ld_get(v, "exr") : NULL, *xt = x ? ld_get(x, "type") : NULL;
	const cJSON *xc = x ? ld_get(x, "compression") : NULL;
	if (x && ((rc = ld_object(L, x, exr_keys)) < 0 ||
		  (xt && (rc = ld_enum(L, xt, exr_types, &m->exr_float)) < 0) ||
		  (xc && (rc = ld_enum(L, xc, exr_compressions, &m->exr_compression)) < 0)))
		return rc;
	const cJSON *hs = h ? ld_get(h, "scale") : NULL;
	m->height_auto = 0;
	if (h && (rc = ld_object(L, h, height_keys)) < 0)
		return rc;
	if (cJSON_IsString(hs) && !strcmp(hs->valuestring, "auto"))
		m->height_auto = 1;
	else if (cJSON_IsString(hs))
		return ld_fail(L, hs, 0, "must be a number of levels per height unit or \"auto\" (got \"%.40s\")",
			hs->valuestring);
	else if (hs && (rc = ld_num(L, hs, &scale, &m->height_scale)) < 0)
		return rc;
	if (n && ((rc = ld_object(L, n, normal_keys)) < 0 ||
		  (rc = ld_opt_num(L, n, "strength", &strength, &m->normal_strength)) < 0 ||
		  (conv && (rc = ld_enum(L, conv, conventions, &m->normal_directx)) < 0) ||
		  (rc = read_bits(L, n, &m->normal_bits)) < 0))
		return rc;
	if (c && ((rc = ld_object(L, c, caustics_keys)) < 0 ||
		  (rc = ld_opt_num(L, c, "depth", &depth, &m->caustics_depth)) < 0 ||
		  (rc = ld_opt_num(L, c, "intensity", &intensity, &m->caustics_intensity)) < 0 ||
		  (rc = read_bits(L, c, &m->caustics_bits)) < 0 ||
		  (tone && (rc = ld_enum(L, tone, tones, &m->caustics_linear)) < 0)))
		return rc;
	return 0;
}

/* ---- flipbook ---- */

static const char *const flipbook_keys[] = { "grid", "frame", "pot", NULL };

static int read_flipbook(ld *L)
{
	scene *s = L->s;
	scene_flipbook *fb = &s->flipbook;
	const cJSON *v = ld_get(L->root, "flipbook");
	int rc;
	if (!v)
		return 0;
	if ((rc = ld_object(L, v, flipbook_keys)) < 0)
		return rc;
	const cJSON *g = ld_get(v, "grid"), *f = ld_get(v, "frame");
	if (!g)
		return ld_missing(L, v, "grid", " ([columns, rows], such as [8, 8])");
	const ld_range gr = { 1, 256, LD_INT }, fr = { 1, ATLAS_MAX_SIDE, LD_INT };
	double grid[2], frame[2] = { s->width, s->height };
	if ((rc = ld_vec(L, g, 2, &gr, grid)) < 0 || (f && (rc = ld_vec(L, f, 2, &fr, frame)) < 0) ||
	    (rc = ld_opt_bool(L, v, "pot", &fb->pot)) < 0)
		return rc;
	fb->on = 1;
	fb->cols = (int)grid[0];
	fb->rows = (int)grid[1];
	fb->frame_w = (int)frame[0];
	fb->frame_h = (int)frame[1];
	double aw = (double)fb->cols * fb->frame_w, ah = (double)fb->rows * fb->frame_h;
	if (aw > ATLAS_MAX_SIDE || ah > ATLAS_MAX_SIDE)
		return ld_fail(L, f ? f : g, 0,
			"the atlas would be %.0fx%.0f, more than %dx%d (the largest texture GPUs take); "
			"use smaller frames or fewer cells", aw, ah, ATLAS_MAX_SIDE, ATLAS_MAX_SIDE);
	return 0;
}

/* ---- variants ---- */

static const char *const variants_keys[] = { "vary", "name", NULL };

/* 1 if s is "A..B" (whole numbers, A <= B), with the bounds in *a, *b. */
static int parse_range(const char *s, long *a, long *b)
{
	char *end;
	*a = strtol(s, &end, 10);
	if (end == s || strncmp(end, "..", 2))
		return 0;
	const char *t = end + 2;
	*b = strtol(t, &end, 10);
	return end != t && *end == 0 && *a <= *b;
}

static int read_vary(ld *L, const cJSON *m, scene_vary *sv)
{
	char got[96];
	long a, b;
	if (!(sv->key = strdup(m->string)))
		return oom(L);
	if (!sv->key[0] || sv->key[0] == '.' || sv->key[strlen(sv->key) - 1] == '.' || strstr(sv->key, ".."))
		return ld_fail(L, m, 1, "must be a dotted path such as \"params.damping\"");
	if (cJSON_IsString(m) && parse_range(m->valuestring, &a, &b)) {
		if (b - a >= VARY_MAX_VALUES)
			return ld_fail(L, m, 0, "more than %d values", VARY_MAX_VALUES);
		sv->values = calloc((size_t)(b - a + 1), sizeof *sv->values);
		if (!sv->values)
			return oom(L);
		for (long i = a; i <= b; i++) {
			char buf[32];
			snprintf(buf, sizeof buf, "%ld", i);
			if (!(sv->values[sv->n++] = strdup(buf)))
				return oom(L);
		}
		return 0;
	}
	int n = cJSON_IsArray(m) ? cJSON_GetArraySize(m) : 0;
	if (n < 1 || n > VARY_MAX_VALUES)
		return ld_fail(L, m, 0, "must be an array of values or a range \"A..B\" (got %s)",
			ld_got(L, m, got, sizeof got));
	sv->values = calloc((size_t)n, sizeof *sv->values);
	if (!sv->values)
		return oom(L);
	for (const cJSON *e = m->child; e; e = e->next) {
		if (cJSON_IsArray(e) || cJSON_IsObject(e) || cJSON_IsNull(e))
			return ld_fail(L, e, 0, "must be a number, string or true/false (got %s)",
				ld_got(L, e, got, sizeof got));
		/* Kept as JSON text: it is handed back to the loader as --set KEY=VALUE. */
		if (!(sv->values[sv->n++] = cJSON_PrintUnformatted(e)))
			return oom(L);
	}
	return 0;
}

static int read_variants(ld *L)
{
	scene_variants *va = &L->s->variants;
	const cJSON *v = ld_get(L->root, "variants");
	int rc;
	if (!v)
		return 0;
	if ((rc = ld_object(L, v, variants_keys)) < 0)
		return rc;
	const cJSON *vary = ld_get(v, "vary"), *name = ld_get(v, "name");
	char got[96];
	if (!vary)
		return ld_missing(L, v, "vary", " (such as {\"seed\": \"1..16\"})");
	if (!cJSON_IsObject(vary) || !vary->child)
		return ld_fail(L, vary, 0, "must be an object of KEY: [values] (got %s)",
			ld_got(L, vary, got, sizeof got));
	const char *nm;
	if (name && ((rc = ld_string(L, name, &nm)) < 0))
		return rc;
	if (name && !(va->name = strdup(nm)))
		return oom(L);
	int n = cJSON_GetArraySize(vary);
	va->vary = calloc((size_t)n, sizeof *va->vary);
	if (!va->vary)
		return oom(L);
	double combos = 1;
	for (const cJSON *m = vary->child; m; m = m->next) {
		for (int i = 0; i < va->n; i++)
			if (!strcmp(va->vary[i].key, m->string))
				return ld_fail(L, m, 1, "given twice");
		if ((rc = read_vary(L, m, &va->vary[va->n++])) < 0)
			return rc;
		combos *= va->vary[va->n - 1].n;
	}
	if (combos > VARIANTS_MAX)
		return ld_fail(L, vary, 0, "%.0f combinations, more than %d", combos, VARIANTS_MAX);
	return 0;
}

int ld_textures(ld *L)
{
	int rc;
	if ((rc = read_outputs(L)) < 0 || (rc = read_maps(L)) < 0 || (rc = read_flipbook(L)) < 0 ||
	    (rc = read_variants(L)) < 0)
		return rc;
	return 0;
}

void scene_free_textures(scene *s)
{
	for (int i = 0; s->outputs && i < s->noutputs; i++)
		free(s->outputs[i].path);
	free(s->outputs);
	for (int i = 0; s->variants.vary && i < s->variants.n; i++) {
		scene_vary *sv = &s->variants.vary[i];
		for (int k = 0; sv->values && k < sv->n; k++)
			free(sv->values[k]);
		free(sv->values);
		free(sv->key);
	}
	free(s->variants.vary);
	free(s->variants.name);
}
