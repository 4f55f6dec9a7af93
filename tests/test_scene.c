/* Scene loading: defaults, every field, overrides, paths, and one exact error message
 * (file:line:col, JSON path, reason, exit status) for each kind of bad scene. */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "util/png.h"
#include "scene/jsonpos.h"
#include "scene/scene.h"
#include "solvers/solver.h"
#include "util/opts.h"
#include "exitstatus.h"

static char dir[64];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "scene");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* In-process removal: a hundred bad-scene cases should not spawn a hundred shells. */
static void teardown(void)
{
	cr_assert_eq(nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS), 0);
}

/* Writes n bytes (or the string) to dir/name; returns the path in a static slot. */
static const char *put_n(const char *name, const char *text, size_t n)
{
	static char paths[4][256];
	static int slot;
	char *p = paths[slot++ % 4];
	snprintf(p, 256, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	cr_assert_not_null(f, "cannot write %s", p);
	cr_assert_eq(fwrite(text, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
	return p;
}

static const char *put(const char *name, const char *text)
{
	return put_n(name, text, strlen(text));
}

static scene *load_ok(const char *text, const scene_overrides *ov)
{
	tp_err err = { "" };
	scene *s = NULL;
	int rc = scene_load(put("ok.json", text), ov, tp_solvers, &s, &err);
	cr_assert_eq(rc, 0, "scene_load failed: %s", err.msg);
	cr_assert_not_null(s);
	return s;
}

/* Loads and checks the code and the whole message "PATH<want>". Uses cr_expect so a
 * table of cases reports every mismatch, not just the first. */
static void load_bad_ov(const char *path, const scene_overrides *ov, int code, const char *want)
{
	tp_err err = { "" };
	scene *s = (scene *)&err; /* must be reset to NULL on failure */
	int rc = scene_load(path, ov, tp_solvers, &s, &err);
	cr_expect_eq(rc, code, "rc %d for %s (message: %s)", rc, want, err.msg);
	if (rc == 0) {
		scene_destroy(s);
		return;
	}
	cr_expect_null(s);
	char full[2048];
	snprintf(full, sizeof full, "%s%s", code == TP_EARG ? "" : path, want);
	/* A '*' stands for text that changes as the project grows (the list of solvers). */
	char *star = strchr(full, '*');
	if (!star) {
		cr_expect_str_eq(err.msg, full);
		return;
	}
	size_t head = (size_t)(star - full), tail = strlen(star + 1), n = strlen(err.msg);
	cr_expect(n >= head + tail && !strncmp(err.msg, full, head) && !strcmp(err.msg + n - tail, star + 1),
		"got: %s\nwant: %s", err.msg, full);
}

static void load_bad(const char *text, const char *want)
{
	load_bad_ov(put("bad.json", text), NULL, TP_EINPUT, want);
}

#define FMT "\"format\": \"tidepool-scene/1\""

/* ---- valid scenes ---- */

Test(scene, minimal_scene_gets_documented_defaults, .init = setup, .fini = teardown)
{
	scene *s = load_ok("{" FMT "}", NULL);
	char want_dir[128];
	snprintf(want_dir, sizeof want_dir, "%s", dir);
	cr_assert_str_eq(s->dir, want_dir);
	cr_assert(strstr(s->path, "/ok.json") != NULL);
	cr_assert_eq(s->width, 640);
	cr_assert_eq(s->height, 360);
	cr_assert_eq(s->fps, 30.0);
	cr_assert_eq(s->frames, 120); /* 4 s */
	cr_assert_eq(s->seed, 1u);
	cr_assert_str_eq(s->solver->name, "ripple");
	cr_assert_eq(s->nparams, 0);
	cr_assert_eq(s->substeps, 1);
	cr_assert_eq(s->boundary, SCENE_BOUNDARY_REFLECT);
	cr_assert_null(s->background.image);
	cr_assert_null(s->background.pixels.pixels);
	cr_assert_eq(s->background.pattern, SCENE_PATTERN_TILES);
	cr_assert_eq(s->background.scale, 32.0);
	const uint8_t c0[3] = { 0xdc, 0xeb, 0xef }, c1[3] = { 0x5f, 0x8e, 0xa3 };
	cr_assert_arr_eq(s->background.color[0], c0, 3);
	cr_assert_arr_eq(s->background.color[1], c1, 3);
	cr_assert_eq(s->render.mode, SCENE_MODE_COLOR);
	cr_assert_eq(s->render.refraction, 1.0);
	cr_assert_eq(s->render.reflection, 1.0);
	cr_assert_float_eq(s->render.tint[0], 0x1b / 255.0, 1e-12);
	cr_assert_float_eq(s->render.tint[2], 0xa8 / 255.0, 1e-12);
	cr_assert_eq(s->render.tint_strength, 0.15);
	cr_assert_eq(s->render.specular, 0.5);
	cr_assert_eq(s->render.shadows, 1);
	cr_assert_eq(s->ndrops + s->nemitters + s->nboxes + s->nblocks + s->has_tank, 0);
	cr_assert_null(s->output);
	scene_destroy(s);
	scene_destroy(NULL);
}

static const char full_scene[] =
	"{\n"
	"  " FMT ",\n"
	"  \"description\": \"every field\",\n"
	"  \"size\": [320, 200], \"fps\": 25, \"duration\": 2.02, \"seed\": 9007199254740992,\n"
	"  \"solver\": \"hooke\", \"params\": { \"edge\": 4, \"wake\": 0.25 }, \"substeps\": 3,\n"
	"  \"boundary\": \"wrap\",\n"
	"  \"background\": { \"pattern\": \"checker\", \"scale\": 10.5, \"colors\": [\"#FF0080\", \"#000001\"] },\n"
	"  \"render\": { \"mode\": \"caustics\", \"refraction\": 3, \"reflection\": 0, \"tint\": \"#102030\",\n"
	"              \"tint_strength\": 1, \"specular\": 10, \"shadows\": false },\n"
	"  \"drops\": [ { \"t\": 0.5, \"at\": [320, 0], \"radius\": 12, \"strength\": -3 }, { \"at\": [1, 2] } ],\n"
	"  \"emitters\": [ { \"type\": \"rain\", \"from\": 1, \"rate\": 8, \"radius\": 5, \"strength\": [0.5, 2],\n"
	"                  \"area\": [10, 20, 100, 50] } ],\n"
	"  \"boxes\": [ { \"size\": [60, 40], \"height\": 20, \"float\": false,\n"
	"                \"path\": [ { \"t\": 0, \"at\": [100, 180], \"angle\": 10 }, { \"t\": 4, \"at\": [540, -20] } ] },\n"
	"              { \"size\": [8, 9], \"at\": [3, 4], \"angle\": 30 } ],\n"
	"  \"output\": \"out/pond.mp4\"\n"
	"}\n";

/* The particle solver's own fields (a height-field solver refuses them). */
static const char full_sph_scene[] =
	"{\n"
	"  " FMT ",\n"
	"  \"size\": [320, 200], \"fps\": 25, \"duration\": 2.02, \"solver\": \"sph\",\n"
	"  \"drops\": [ { \"at\": [1, 2], \"strength\": 2 } ],\n"
	"  \"emitters\": [ { \"type\": \"stream\", \"to\": 1.5, \"at\": [65, 56], \"direction\": -45, \"speed\": 10,\n"
	"                  \"spread\": 0, \"cap\": 5000 } ],\n"
	"  \"boxes\": [ { \"size\": [60, 40], \"density\": 10, \"float\": true, \"at\": [100, 140], \"angle\": 10 },\n"
	"              { \"size\": [8, 9], \"at\": [63, 54], \"angle\": 30 } ],\n"
	"  \"tank\": { \"size\": [200, 100], \"path\": [ { \"t\": 1, \"at\": [160, 100] } ] },\n"
	"  \"blocks\": [ { \"rect\": [0, 0, 320, 200] }, { \"rect\": [61.5, 52, 3, 4] } ]\n"
	"}\n";



Test(scene, every_field_is_read, .init = setup, .fini = teardown)
{
	scene *s = load_ok(full_scene, NULL);
	cr_assert_eq(s->width, 320);
	cr_assert_eq(s->height, 200);
	cr_assert_eq(s->fps, 25.0);
	cr_assert_eq(s->frames, 51); /* lround(2.02 * 25 = 50.5) */
	cr_assert_eq(s->seed, UINT64_C(9007199254740992));
	cr_assert_str_eq(s->solver->name, "hooke");
	cr_assert_eq(s->nparams, 2);
	cr_assert_str_eq(s->params[0].name, "edge");
	cr_assert_eq(s->params[0].value, 4.0);
	cr_assert_str_eq(s->params[1].name, "wake");
	cr_assert_eq(s->params[1].value, 0.25);
	cr_assert_eq(s->substeps, 3);
	cr_assert_eq(s->boundary, SCENE_BOUNDARY_WRAP);

	cr_assert_eq(s->background.pattern, SCENE_PATTERN_CHECKER);
	cr_assert_eq(s->background.scale, 10.5);
	const uint8_t c0[3] = { 0xff, 0x00, 0x80 }, c1[3] = { 0, 0, 1 };
	cr_assert_arr_eq(s->background.color[0], c0, 3);
	cr_assert_arr_eq(s->background.color[1], c1, 3);

	cr_assert_eq(s->render.mode, SCENE_MODE_CAUSTICS);
	cr_assert_eq(s->render.refraction, 3.0);
	cr_assert_eq(s->render.reflection, 0.0);
	cr_assert_float_eq(s->render.tint[0], 0x10 / 255.0, 1e-12);
	cr_assert_float_eq(s->render.tint[1], 0x20 / 255.0, 1e-12);
	cr_assert_float_eq(s->render.tint[2], 0x30 / 255.0, 1e-12);
	cr_assert_eq(s->render.tint_strength, 1.0);
	cr_assert_eq(s->render.specular, 10.0);
	cr_assert_eq(s->render.shadows, 0);

	cr_assert_eq(s->ndrops, 2);
	cr_assert_eq(s->drops[0].t, 0.5);
	cr_assert_eq(s->drops[0].x, 320.0);
	cr_assert_eq(s->drops[0].y, 0.0);
	cr_assert_eq(s->drops[0].radius, 12.0);
	cr_assert_eq(s->drops[0].strength, -3.0);
	cr_assert_eq(s->drops[1].t, 0.0);    /* default */
	cr_assert_eq(s->drops[1].radius, 8.0); /* default */
	cr_assert_eq(s->drops[1].strength, 1.0);

	cr_assert_eq(s->nemitters, 1);
	const scene_emitter *r = &s->emitters[0];
	cr_assert_eq(r->type, SCENE_EMIT_RAIN);
	cr_assert_eq(r->from, 1.0);
	cr_assert_float_eq(r->to, 51 / 25.0, 1e-12); /* default: the end of the scene */
	cr_assert_eq(r->rate, 8.0);
	cr_assert_eq(r->radius[0], 5.0);
	cr_assert_eq(r->radius[1], 5.0);
	cr_assert_eq(r->strength[0], 0.5);
	cr_assert_eq(r->strength[1], 2.0);
	const double area[4] = { 10, 20, 100, 50 };
	cr_assert_arr_eq(r->area, area, sizeof area);
	cr_assert_eq(s->nboxes, 2);
	const scene_box *b = &s->boxes[0];
	cr_assert_eq(b->size[0], 60.0);
	cr_assert_eq(b->size[1], 40.0);
	cr_assert_eq(b->height, 20.0);
	cr_assert_eq(b->density, 0.5);
	cr_assert_eq(b->floating, 0);
	cr_assert_eq(b->path.n, 2);
	cr_assert_eq(b->path.keys[0].angle, 10.0);
	cr_assert_eq(b->path.keys[1].t, 4.0);
	cr_assert_eq(b->path.keys[1].x, 540.0);
	cr_assert_eq(b->path.keys[1].y, -20.0); /* paths may leave the pool */
	cr_assert_eq(b->path.keys[1].angle, 0.0);
	b = &s->boxes[1];
	cr_assert_eq(b->height, 1.0);
	cr_assert_eq(b->density, 0.5);
	cr_assert_eq(b->floating, 0);
	cr_assert_eq(b->path.n, 1);
	cr_assert_eq(b->path.keys[0].t, 0.0);
	cr_assert_eq(b->path.keys[0].x, 3.0);
	cr_assert_eq(b->path.keys[0].angle, 30.0);

	cr_assert_eq(s->has_tank, 0);
	cr_assert_eq(s->nblocks, 0);

	char want[256];
	snprintf(want, sizeof want, "%s/out/pond.mp4", dir);
	cr_assert_str_eq(s->output, want);
	scene_destroy(s);
}

Test(scene, every_sph_field_is_read, .init = setup, .fini = teardown)
{
	scene *s = load_ok(full_sph_scene, NULL);
	cr_assert_eq(s->drops[0].strength, 2.0);
	cr_assert_eq(s->nemitters, 1);
	const scene_emitter *st = &s->emitters[0];
	cr_assert_eq(st->type, SCENE_EMIT_STREAM);
	cr_assert_eq(st->from, 0.0);
	cr_assert_eq(st->to, 1.5);
	cr_assert_eq(st->rate, 100.0); /* default */
	cr_assert_eq(st->at[0], 65.0);
	cr_assert_eq(st->at[1], 56.0);
	cr_assert_eq(st->direction, -45.0);
	cr_assert_eq(st->speed, 10.0);
	cr_assert_eq(st->spread, 0.0);
	cr_assert_eq(st->cap, 5000);
	const scene_box *b = &s->boxes[0];
	cr_assert_eq(b->density, 10.0);
	cr_assert_eq(b->floating, 1);
	cr_assert_eq(b->path.n, 1);
	cr_assert_eq(b->path.keys[0].angle, 10.0);
	cr_assert_eq(s->has_tank, 1);
	cr_assert_eq(s->tank.size[0], 200.0);
	cr_assert_eq(s->tank.path.n, 1);
	cr_assert_eq(s->tank.path.keys[0].t, 1.0);
	cr_assert_eq(s->nblocks, 2);
	cr_assert_eq(s->blocks[1].x, 61.5);
	cr_assert_eq(s->blocks[1].h, 4.0);
	scene_destroy(s);
}

Test(scene, overrides_replace_scene_values, .init = setup, .fini = teardown)
{
	scene_overrides ov = { .width = 640, .height = 400, .frames = 7, .has_seed = 1, .seed = 0,
		.output = "here.mp4" };
	scene *s = load_ok(full_scene, &ov);
	cr_assert_eq(s->width, 640);
	cr_assert_eq(s->height, 400);
	cr_assert_eq(s->frames, 7);
	cr_assert_eq(s->seed, 0u);
	cr_assert_str_eq(s->output, "here.mp4"); /* as given, not relative to the scene */
	scene_destroy(s);
}

/* --size scales the scene (its "size" is the frame of reference): every length the scene
 * stores is in output pixels, positions by the side's factor, other lengths by `scale`. */
Test(scene, a_render_size_scales_every_length, .init = setup, .fini = teardown)
{
	scene_overrides ov = { .width = 640, .height = 400 };
	scene *s = load_ok(full_scene, &ov);
	cr_assert_eq(s->ref_width, 320);
	cr_assert_eq(s->ref_height, 200);
	cr_assert_eq(s->scale, 2.0);
	cr_assert_eq(s->scale_num, 2);
	cr_assert_eq(s->scale_den, 1);
	cr_assert_eq(s->drops[0].x, 640.0);
	cr_assert_eq(s->drops[0].radius, 24.0);
	cr_assert_eq(s->drops[0].strength, -3.0, "heights are not lengths of the picture");
	cr_assert_eq(s->drops[1].y, 4.0);
	const scene_emitter *rain = &s->emitters[0];
	cr_assert(rain->area[0] == 20 && rain->area[1] == 40 && rain->area[2] == 200 &&
		  rain->area[3] == 100);
	cr_assert(rain->radius[0] == 10 && rain->radius[1] == 10);
	cr_assert(s->boxes[0].size[0] == 120 && s->boxes[0].size[1] == 80 && s->boxes[0].height == 20);
	cr_assert(s->boxes[0].path.keys[1].x == 1080 && s->boxes[0].path.keys[1].y == -40);
	cr_assert_eq(s->boxes[0].path.keys[0].angle, 10.0);
	cr_assert_eq(s->background.scale, 21.0);
	scene_destroy(s);
	s = load_ok(full_sph_scene, &ov);
	const scene_emitter *jet = &s->emitters[0];
	cr_assert(jet->at[0] == 130 && jet->at[1] == 112 && jet->speed == 20 && jet->rate == 100);
	cr_assert(s->boxes[0].path.keys[0].x == 200 && s->boxes[0].path.keys[0].y == 280);
	cr_assert(s->tank.size[0] == 400 && s->tank.size[1] == 200);
	cr_assert(s->tank.path.keys[0].x == 320 && s->tank.path.keys[0].y == 200);
	cr_assert(s->blocks[1].x == 123 && s->blocks[1].y == 104 && s->blocks[1].w == 6 &&
		  s->blocks[1].h == 8);
	scene_destroy(s);

	/* --scale, and the size rounded per side: 30% of 320x200 is 96x60. */
	scene_overrides third = { .scale = 0.3 };
	s = load_ok(full_scene, &third);
	cr_assert(s->width == 96 && s->height == 60, "%dx%d", s->width, s->height);
	cr_assert_eq(s->scale_num, 3);
	cr_assert_eq(s->scale_den, 10);
	scene_destroy(s);

	/* A position valid in the scene is valid at every size: the checks run in scene
	 * units, so a drop at x = 320 of a 640x360 scene is fine at 100x56. */
	scene_overrides small = { .width = 100, .height = 56 };
	s = load_ok("{" FMT ", \"drops\": [{\"at\": [320, 10]}]}", &small);
	cr_assert_float_eq(s->drops[0].x, 50.0, 1e-12);
	scene_destroy(s);
}

Test(scene, the_scene_can_say_its_render_size, .init = setup, .fini = teardown)
{
	scene *s = load_ok("{" FMT ", \"resolution\": [1920, 1080]}", NULL);
	cr_assert(s->width == 1920 && s->height == 1080 && s->scale == 3.0);
	scene_destroy(s);
	s = load_ok("{" FMT ", \"resolution\": \"25%\"}", NULL);
	cr_assert(s->width == 160 && s->height == 90 && s->scale == 0.25);
	scene_destroy(s);
	s = load_ok("{" FMT ", \"resolution\": 0.5}", NULL);
	cr_assert(s->width == 320 && s->height == 180);
	scene_destroy(s);
	/* the command line wins over the scene */
	scene_overrides ov = { .width = 1280, .height = 720 };
	s = load_ok("{" FMT ", \"resolution\": 0.5}", &ov);
	cr_assert(s->width == 1280 && s->height == 720);
	scene_destroy(s);
}

/* Another shape would stretch the pool or misplace what is in it: refused, with sizes
 * that fit. One side off by less than a pixel (rounding) is fine. */
Test(scene, a_render_size_of_another_shape_is_refused, .init = setup, .fini = teardown)
{
	const char *p = put("shape.json", "{" FMT ", \"drops\": [{\"at\": [320, 10]}]}");
	scene_overrides sq = { .width = 1000, .height = 1000 };
	load_bad_ov(p, &sq, TP_EARG,
		    "*shape.json: width/height: 1000x1000 has another shape than the scene's "
		    "640x360 (its "
		    "\"size\", the frame of reference), which would stretch it; use 1000x563 or "
		    "1778x1000, or change the scene's \"size\"");
	scene_overrides both = { .width = 640, .height = 360, .scale = 2 };
	load_bad_ov(p, &both, TP_EARG, "scale and width/height: give one or the other");
	scene_overrides tiny = { .scale = 0.001 };
	load_bad_ov(p, &tiny, TP_EARG,
		    "*shape.json: scale: 0.001 x the scene's 640x360 is 1x0; each side must be in "
		    "2..8192");
	scene_overrides odd = { .width = 641, .height = 361 };
	scene *s = load_ok("{" FMT "}", &odd);
	cr_assert(s->width == 641 && s->height == 361);
	scene_destroy(s);
	load_bad_ov(put("res.json", "{" FMT ", \"resolution\": [100, 100]}"), NULL, TP_EINPUT,
		":1:46: resolution: 100x100 has another shape than the scene's 640x360 (its \"size\", "
		"the frame of reference), which would stretch it; use 100x56 or 178x100, or change "
		"the scene's \"size\"");
	load_bad_ov(put("res2.json", "{" FMT ", \"resolution\": \"big\"}"), NULL, TP_EINPUT,
		":1:46: resolution: must be the render size [w, h], a factor such as 0.5, or a "
		"percentage such as \"50%\" (got \"big\")");
}

Test(scene, emitter_defaults_follow_the_scene_end, .init = setup, .fini = teardown)
{
	scene_overrides ov = { .frames = 15 };
	scene *s = load_ok("{" FMT ", \"fps\": 10, \"solver\": \"sph\", \"emitters\": [{\"type\": \"rain\"},"
	                   " {\"type\": \"rain\", \"from\": 3}, {\"type\": \"stream\", \"at\": [0, 0]}]}",
		&ov);
	cr_assert_eq(s->emitters[0].to, 1.5);
	cr_assert_eq(s->emitters[0].rate, 10.0);
	cr_assert_eq(s->emitters[0].radius[0], 4.0);
	cr_assert_eq(s->emitters[0].radius[1], 10.0);
	cr_assert_eq(s->emitters[0].area[2], 640.0);
	cr_assert_eq(s->emitters[0].area[3], 360.0);
	/* Starts after the (shortened) end: an empty window, not an error. */
	cr_assert_eq(s->emitters[1].from, 3.0);
	cr_assert_eq(s->emitters[1].to, 3.0);
	cr_assert_eq(s->emitters[2].direction, 90.0);
	cr_assert_eq(s->emitters[2].speed, 300.0);
	cr_assert_eq(s->emitters[2].spread, 5.0);
	cr_assert_eq(s->emitters[2].cap, 0);
	scene_destroy(s);
}

Test(scene, pattern_colours_default_per_pattern, .init = setup, .fini = teardown)
{
	scene *s = load_ok("{" FMT ", \"background\": {\"pattern\": \"pebbles\"}}", NULL);
	const uint8_t c0[3] = { 0x8a, 0x7f, 0x6c }, c1[3] = { 0xc9, 0xb9, 0x8f };
	cr_assert_eq(s->background.pattern, SCENE_PATTERN_PEBBLES);
	cr_assert_arr_eq(s->background.color[0], c0, 3);
	cr_assert_arr_eq(s->background.color[1], c1, 3);
	scene_destroy(s);
}

Test(scene, enum_params_are_stored_as_choice_index, .init = setup, .fini = teardown)
{
	const tp_solver_kind *sv = solver_find("shallow");
	const tp_option *o = sv ? tp_opts_find(sv->options, "float_start") : NULL;
	if (!o || o->type != TP_OPT_ENUM)
		cr_skip_test("no solver with an enum parameter to test against");
	scene *s = load_ok("{" FMT ", \"solver\": \"shallow\", \"params\": {\"float_start\": \"rest\"}}", NULL);
	cr_assert_eq(s->nparams, 1);
	cr_assert_str_eq(s->params[0].name, "float_start");
	cr_assert_eq(s->params[0].value, 1.0);
	scene_destroy(s);
	load_bad("{" FMT ", \"solver\": \"shallow\", \"params\": {\"float_start\": \"rset\"}}",
		":1:79: params.float_start: must be one of surface, rest (got \"rset\"; did you mean \"rest\"?)");
	load_bad("{" FMT ", \"solver\": \"shallow\", \"params\": {\"float_start\": 1}}",
		":1:79: params.float_start: must be one of surface, rest (got 1)");
}

Test(scene, tank_defaults_to_the_pool, .init = setup, .fini = teardown)
{
	scene *s = load_ok("{" FMT ", \"size\": [200, 100], \"solver\": \"sph\", \"tank\": {}}", NULL);
	cr_assert_eq(s->has_tank, 1);
	cr_assert_eq(s->tank.size[0], 200.0);
	cr_assert_eq(s->tank.size[1], 100.0);
	cr_assert_eq(s->tank.path.n, 1);
	cr_assert_eq(s->tank.path.keys[0].x, 100.0);
	cr_assert_eq(s->tank.path.keys[0].y, 50.0);
	scene_destroy(s);
}

Test(scene, json_details_bom_escapes_and_frames_rounding, .init = setup, .fini = teardown)
{
	/* A UTF-8 byte-order mark, an escaped key, CRLF line ends, a non-ASCII string. */
	scene *s = load_ok("\xEF\xBB\xBF{" FMT ",\r\n \"\\u0066ps\": 30, \"duration\": 1.01,\r\n"
	                   " \"description\": \"caf\xC3\xA9 \\\"pond\\\" \\ud83c\\udf0a\"}",
		NULL);
	cr_assert_eq(s->fps, 30.0);
	cr_assert_eq(s->frames, 30); /* lround(30.3) */
	scene_destroy(s);
}

Test(scene, paths_resolve_relative_to_the_scene_file, .init = setup, .fini = teardown)
{
	char sub[128], p[256];
	snprintf(sub, sizeof sub, "%s/sub", dir);
	cr_assert_eq(mkdir(sub, 0777), 0);
	tp_image img = { 0 };
	cr_assert_eq(tp_image_alloc(&img, 5, 3, TP_RGB8), 0);
	img.pixels[0] = 200;
	tp_err err = { "" };
	snprintf(p, sizeof p, "%s/sub/pool.png", dir);
	cr_assert_eq(tp_png_write(p, &img, -1, &err), 0, "%s", err.msg);
	tp_image_free(&img);

	const char *path = put("sub/scene.json",
		"{" FMT ", \"background\": {\"image\": \"pool.png\"}, \"output\": \"/abs/x.mp4\"}");
	scene *s = NULL;
	cr_assert_eq(scene_load(path, NULL, tp_solvers, &s, &err), 0, "%s", err.msg);
	cr_assert_str_eq(s->dir, sub);
	cr_assert_str_eq(s->background.image, p);
	cr_assert_eq(s->background.pixels.w, 5);
	cr_assert_eq(s->background.pixels.h, 3);
	cr_assert_eq(s->background.pixels.fmt, TP_RGB8);
	cr_assert_eq(s->background.pixels.pixels[0], 200);
	cr_assert_str_eq(s->output, "/abs/x.mp4");
	scene_destroy(s);

	/* A scene given by a bare file name resolves against ".". */
	char cwd[512];
	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	cr_assert_eq(chdir(dir), 0);
	put("rel.json", "{" FMT ", \"output\": \"out/a.mp4\"}");
	int rc = scene_load("rel.json", NULL, tp_solvers, &s, &err);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_eq(rc, 0, "%s", err.msg);
	cr_assert_str_eq(s->dir, ".");
	cr_assert_str_eq(s->output, "out/a.mp4");
	scene_destroy(s);
}

Test(scene, path_eval_interpolates_and_holds)
{
	scene_key k[3] = { { 1, 0, 0, 0 }, { 3, 10, -20, 90 }, { 4, 10, -20, 0 } };
	scene_path p = { 3, k };
	double x, y, a;
	scene_path_eval(&p, 0, &x, &y, &a); /* before the first key: held */
	cr_assert(x == 0 && y == 0 && a == 0);
	scene_path_eval(&p, 2, &x, &y, &a);
	cr_assert(x == 5 && y == -10 && a == 45, "got %g %g %g", x, y, a);
	scene_path_eval(&p, 3, &x, &y, &a); /* exactly on a key */
	cr_assert(x == 10 && y == -20 && a == 90);
	scene_path_eval(&p, 3.5, &x, &y, &a);
	cr_assert(x == 10 && y == -20 && a == 45);
	scene_path_eval(&p, 99, &x, &y, &a); /* after the last: held */
	cr_assert(x == 10 && y == -20 && a == 0);
	scene_path_eval(&p, 1.5, &x, NULL, NULL); /* outputs are optional */
	cr_assert_eq(x, 2.5);
	scene_path one = { 1, k + 1 };
	scene_path_eval(&one, -5, &x, &y, &a);
	cr_assert(x == 10 && y == -20 && a == 90);
	/* Many keys exercise the binary search: x = 2t on integer t. */
	scene_key many[100];
	for (int i = 0; i < 100; i++)
		many[i] = (scene_key){ i, 2.0 * i, 0, 0 };
	scene_path mp = { 100, many };
	for (double t = 0; t < 99; t += 0.37) {
		scene_path_eval(&mp, t, &x, NULL, NULL);
		cr_assert_float_eq(x, 2 * t, 1e-9, "t=%g x=%g", t, x);
	}
}

/* ---- bad scenes: one case per kind of mistake, each with its exact message ---- */

typedef struct bad_case {
	const char *json;
	const char *want; /* message after the file name */
} bad_case;

static const bad_case bad_cases[] = {
	/* document level */
	{ "{\"size\": [64, 64]}",
	  ":1:1: missing \"format\" (a scene file starts with \"format\": \"tidepool-scene/1\")" },
	{ "{\"format\": \"tidepool-scene/2\"}",
	  ":1:12: format: unsupported format (got \"tidepool-scene/2\"; this version reads "
	  "\"tidepool-scene/1\")" },
	{ "[1, 2]", ":1:1: a scene must be a JSON object {...} (got an array of 2)" },
	{ "", ":1:1: empty file (expected a JSON object)" },
	{ "{" FMT ",\n  \"fsp\": 30}", ":2:3: fsp: unknown key (did you mean \"fps\"?)" },
	{ "{" FMT ", \"fps\": 30,\n \"fps\": 25}", ":2:2: fps: duplicate key (first given at line 1)" },
	{ "{" FMT ", \"description\": 5}", ":1:47: description: must be a string (got 5)" },
	/* size, time, seed */
	{ "{" FMT ", \"size\": [64.5, 64]}", ":1:41: size[0]: must be an integer (got 64.5)" },
	{ "{" FMT ", \"size\": [1, 64]}", ":1:41: size[0]: must be in 2..8192 (got 1)" },
	{ "{" FMT ", \"size\": [64, 1e400]}", ":1:45: size[1]: must be a finite number (got 1e400)" },
	{ "{" FMT ", \"size\": [64]}", ":1:40: size: must be an array of 2 numbers (got an array of 1)" },
	{ "{" FMT ", \"size\": [-64, 64]}", ":1:41: size[0]: must be in 2..8192 (got -64)" },
	{ "{" FMT ", \"fps\": \"30\"}", ":1:39: fps: must be a number (got \"30\")" },
	{ "{" FMT ", \"fps\": 0}", ":1:39: fps: must be > 0 (got 0)" },
	{ "{" FMT ", \"fps\": 240.5}", ":1:39: fps: must be <= 240 (got 240.5)" },
	{ "{" FMT ", \"duration\": 2, \"frames\": 60}",
	  ":1:47: frames: give either \"duration\" or \"frames\", not both" },
	{ "{" FMT ", \"frames\": 0}", ":1:42: frames: must be in 1..1000000 (got 0)" },
	{ "{" FMT ", \"fps\": 1, \"duration\": 0.1}",
	  ":1:54: duration: too short: 0.1 s at 1 fps is less than one frame" },
	{ "{" FMT ", \"fps\": 240, \"duration\": 5000}",
	  ":1:56: duration: 5000 s at 240 fps is 1200000 frames, more than the limit of 1000000" },
	{ "{" FMT ", \"seed\": -1}", ":1:40: seed: must be in 0..9007199254740992 (got -1)" },
	{ "{" FMT ", \"seed\": 1.5}", ":1:40: seed: must be an integer (got 1.5)" },
	/* solver */
	{ "{" FMT ", \"solver\": \"rippel\"}",
	  ":1:42: solver: must be one of ripple, hooke* (got \"rippel\"; did you mean \"ripple\"?)" },
	{ "{" FMT ", \"params\": {\"dampin\": 3}}",
	  ":1:43: params.dampin: unknown parameter of solver \"ripple\" (did you mean \"damping\"?)" },
	{ "{" FMT ", \"params\": {\"damping\": 31}}", ":1:54: params.damping: must be in 1..30 (got 31)" },
	{ "{" FMT ", \"params\": {\"damping\": \"5\"}}",
	  ":1:54: params.damping: must be an integer (got \"5\")" },
	{ "{" FMT ", \"params\": {\"damping\": 2.5}}",
	  ":1:54: params.damping: must be a whole number (got 2.5)" },
	{ "{" FMT ", \"params\": [5]}", ":1:42: params: must be an object {...} (got an array of 1)" },
	{ "{" FMT ", \"substeps\": 0}", ":1:44: substeps: must be in 1..64 (got 0)" },
	{ "{" FMT ", \"boundary\": \"reflct\"}",
	  ":1:44: boundary: must be one of reflect, absorb, wrap (got \"reflct\"; did you mean "
	  "\"reflect\"?)" },
	{ "{" FMT ", \"boundary\": true}",
	  ":1:44: boundary: must be one of reflect, absorb, wrap (got true)" },
	/* background and render */
	{ "{" FMT ", \"background\": {\"image\": \"a.png\", \"pattern\": \"tiles\"}}",
	  ":1:65: background.pattern: does not apply to a background \"image\" (give one or the other)" },
	{ "{" FMT ", \"background\": {\"colors\": [\"#12345\", \"#000000\"]}}",
	  ":1:58: background.colors[0]: must be a colour \"#rrggbb\" (got \"#12345\")" },
	{ "{" FMT ", \"background\": {\"colors\": \"#123456\"}}",
	  ":1:57: background.colors: must be two colours [\"#rrggbb\", \"#rrggbb\"] (got \"#123456\")" },
	{ "{" FMT ", \"background\": {\"scale\": 1}}", ":1:56: background.scale: must be in 2..4096 (got 1)" },
	{ "{" FMT ", \"background\": {\"pattern\": \"stripes\"}}",
	  ":1:58: background.pattern: must be one of tiles, checker, pebbles, gradient (got \"stripes\")" },
	{ "{" FMT ", \"render\": {\"mode\": \"colour\"}}",
	  ":1:51: render.mode: must be one of color, height, normal, caustics, particles, "
	  "displacement, foam, velocity (got "
	  "\"colour\"; did you mean \"color\"?)" },
	{ "{" FMT ", \"render\": {\"tint_strength\": 2}}",
	  ":1:60: render.tint_strength: must be in 0..1 (got 2)" },
	{ "{" FMT ", \"render\": {\"shadows\": \"yes\"}}",
	  ":1:54: render.shadows: must be true or false (got \"yes\")" },
	{ "{" FMT ", \"render\": {\"tint\": \"blue\"}}",
	  ":1:51: render.tint: must be a colour \"#rrggbb\" (got \"blue\")" },
	{ "{" FMT ", \"render\": {\"reflection\": -0.5}}", ":1:57: render.reflection: must be in 0..100 (got -0.5)" },
	/* drops */
	{ "{" FMT ", \"drops\": {\"at\": [1, 1]}}",
	  ":1:41: drops: must be an array [...] of drops (got an object)" },
	{ "{" FMT ",\n  \"drops\": [\n    {\"at\": [1, 1]},\n    {\"t\": 1, \"at\": [320, 180], \"radius\": -2}\n  ]\n}",
	  ":4:42: drops[1].radius: must be > 0 (got -2)" },
	{ "{" FMT ", \"drops\": [{\"t\": 1}]}",
	  ":1:42: drops[0]: missing \"at\" (the drop's centre [x, y] in pixels)" },
	{ "{" FMT ", \"drops\": [{\"at\": [700, 1]}]}", ":1:50: drops[0].at[0]: must be in 0..640 (got 700)" },
	{ "{" FMT ", \"drops\": [{\"at\": [1, 1], \"strength\": 1e6}]}",
	  ":1:69: drops[0].strength: must be in -1000..1000 (got 1e6)" },
	{ "{" FMT ", \"drops\": [{\"at\": [1, 1], \"t\": -1}]}",
	  ":1:62: drops[0].t: must be in 0..10000000 (got -1)" },
	{ "{" FMT ", \"drops\": [{\"at\": [1, 1], \"radus\": 3}]}",
	  ":1:57: drops[0].radus: unknown key (did you mean \"radius\"?)" },
	{ "{" FMT ", \"drops\": [{\"at\": [1, 1], \"xyzzy\": 3}]}",
	  ":1:57: drops[0].xyzzy: unknown key (known keys: t, at, radius, strength)" },
	{ "{" FMT ", \"drops\": [7]}", ":1:42: drops[0]: must be an object {...} (got 7)" },
	/* emitters */
	{ "{" FMT ", \"emitters\": [{\"rate\": 3}]}",
	  ":1:45: emitters[0]: missing \"type\" (\"rain\" or \"stream\")" },
	{ "{" FMT ", \"emitters\": [{\"type\": \"rain\", \"from\": 2, \"to\": 1}]}",
	  ":1:79: emitters[0].to: must be > 2 (got 1)" },
	{ "{" FMT ", \"emitters\": [{\"type\": \"rain\", \"radius\": [10, 4]}]}",
	  ":1:72: emitters[0].radius: min must be <= max (got [10, 4])" },
	{ "{" FMT ", \"emitters\": [{\"type\": \"rain\", \"speed\": 3}]}",
	  ":1:62: emitters[0].speed: applies to \"stream\" emitters only" },
	{ "{" FMT ", \"emitters\": [{\"type\": \"rain\", \"rate\": 0}]}",
	  ":1:70: emitters[0].rate: must be > 0 (got 0)" },
	{ "{" FMT ", \"size\": [64, 64], \"emitters\": [{\"type\": \"rain\", \"area\": [0, 0, 80, 10]}]}",
	  ":1:95: emitters[0].area[2]: must be <= 64 (got 80)" },
	{ "{" FMT ", \"size\": [64, 64], \"emitters\": [{\"type\": \"rain\", \"area\": [30, 2, 40, 10]}]}",
	  ":1:88: emitters[0].area: must lie inside the 64x64 pool (got x+w = 70, y+h = 12)" },
	{ "{" FMT ", \"emitters\": [{\"type\": \"stream\"}]}",
	  ":1:45: emitters[0]: missing \"at\" (the nozzle position [x, y] in pixels)" },
	{ "{" FMT ", \"emitters\": [{\"type\": \"snow\"}]}",
	  ":1:54: emitters[0].type: must be one of rain, stream (got \"snow\")" },
	/* boxes, tank, blocks */
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5]}]}",
	  ":1:42: boxes[0]: missing \"path\" or \"at\" (where it is)" },
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5], \"at\": [1, 1], \"path\": []}]}",
	  ":1:59: boxes[0].at: give either \"path\" or \"at\", not both" },
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5], \"path\": [{\"t\": 1, \"at\": [0, 0]}, {\"t\": 1, \"at\": [1, 1]}]}]}",
	  ":1:98: boxes[0].path[1].t: must be > 1 (got 1)" },
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5], \"path\": []}]}",
	  ":1:67: boxes[0].path: needs at least one keyframe" },
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5], \"at\": [1, 1], \"density\": 0}]}",
	  ":1:84: boxes[0].density: must be > 0 (got 0)" },
	{ "{" FMT ", \"boxes\": [{\"at\": [1, 1]}]}",
	  ":1:42: boxes[0]: missing \"size\" (the footprint [w, h] in pixels)" },
	{ "{" FMT ", \"boxes\": [{\"size\": [0, 5], \"at\": [1, 1]}]}",
	  ":1:52: boxes[0].size[0]: must be > 0 (got 0)" },
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5], \"at\": [1, 1], \"float\": 1}]}",
	  ":1:82: boxes[0].float: must be true or false (got 1)" },
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5], \"path\": [{\"at\": [0, 0]}]}]}",
	  ":1:68: boxes[0].path[0]: missing \"t\" (the keyframe's time in seconds)" },
	{ "{" FMT ", \"boxes\": [{\"size\": [5, 5], \"path\": [{\"t\": 0, \"at\": [0, 0]}], \"angle\": 5}]}",
	  ":1:93: boxes[0].angle: goes with \"at\"; with a \"path\", give \"angle\" in its keys" },
	{ "{" FMT ", \"tank\": {\"size\": [100, -1]}}", ":1:55: tank.size[1]: must be > 0 (got -1)" },
	{ "{" FMT ", \"blocks\": [{\"rect\": [0, 0, 700, 10]}]}", ":1:59: blocks[0].rect[2]: must be <= 640 (got 700)" },
	{ "{" FMT ", \"blocks\": [{\"rect\": [0, 300, 10, 100]}]}",
	  ":1:52: blocks[0].rect: must lie inside the 640x360 pool (got x+w = 10, y+h = 400)" },
	{ "{" FMT ", \"blocks\": [{}]}",
	  ":1:43: blocks[0]: missing \"rect\" (the fluid's [x, y, w, h] in pixels)" },
	/* output */
	{ "{" FMT ", \"output\": 5}", ":1:42: output: must be a string (got 5)" },
	{ "{" FMT ", \"output\": \"\"}", ":1:42: output: must not be empty" },
	/* malformed JSON: where reading stopped, and why */
	{ "{" FMT ",\n  \"fps\": 30\n  \"seed\": 2\n}",
	  ":3:3: expected ',' or '}' (missing comma before this key?)" },
	{ "{" FMT ", \"fps\": 30,}", ":1:41: trailing comma (not allowed in JSON)" },
	{ "{" FMT ", \"output\": \"a.mp4}", ":1:42: string is never closed (missing '\"')" },
	{ "{" FMT ", \"output\": \"a.mp4\n\"}", ":1:48: line break inside a string (missing closing '\"'?)" },
	{ "{" FMT ", \"fps\": NaN}", ":1:39: NaN and Infinity are not JSON numbers" },
	{ "{" FMT ", \"fps\": -Infinity}", ":1:40: NaN and Infinity are not JSON numbers" },
	{ "{" FMT ", // pool\n \"fps\": 3}", ":1:32: comments are not allowed in JSON" },
	{ "{" FMT ", 'fps': 3}", ":1:32: keys need double quotes, not single quotes" },
	{ "{" FMT ", \"fps\": 030}", ":1:40: numbers cannot have leading zeros" },
	{ "{" FMT ", \"fps\": +3}", ":1:39: numbers cannot start with '+'" },
	{ "{" FMT ", \"solver\": ripple}", ":1:42: expected a value (text needs double quotes)" },
	{ "{" FMT ", \"render\": {\"shadows\": tru}}",
	  ":1:54: invalid word (text needs double quotes; the literals are true, false, null)" },
	{ "{" FMT "} {}", ":1:32: unexpected text after the end of the JSON value" },
	{ "{" FMT ", \"output\": \"a\\u0000b\"}", ":1:44: \\u0000 is not allowed in strings" },
	{ "{" FMT ", \"output\": \"\\ud800\"}", ":1:43: high surrogate escape not followed by a low surrogate" },
	{ "{" FMT ", \"output\": \"a\\qb\"}", ":1:44: invalid escape (use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)" },
	{ "{" FMT ", \"fps\": 1.}", ":1:41: expected a digit after the decimal point" },
	{ "{" FMT ", \"fps\": 3", ":1:40: unexpected end of file inside an object (missing '}')" },
	{ "{" FMT ", \"fps\": 1000000000000000000000000000000000000000000000000000000000000000000}",
	  ":1:39: number too long (more than 63 characters)" },
	{ "{\"caf\xC3\xA9\": 1, \"x\": [1, 2,]}", ":1:23: trailing comma (not allowed in JSON)" },
	{ "{" FMT ", \"output\": \"caf\xC3\xA9\xFF\"}", ":1:47: invalid UTF-8 byte (save the file as UTF-8)" },
	{ "{" FMT ", \"output\": \"\xE2\x82\"}", ":1:43: invalid UTF-8 sequence (save the file as UTF-8)" },
	{ "{" FMT ", \"output\": \"\xED\xA0\x80\"}", ":1:43: invalid UTF-8 sequence (save the file as UTF-8)" },
	{ "{" FMT ", \"output\": \"\xC0\xAF\"}", ":1:43: invalid UTF-8 byte (save the file as UTF-8)" },
	{ "\xFF\xFE{\0", ":1:1: file is UTF-16 text; save it as UTF-8" },
};

/* One test for the whole table: each case costs microseconds, a process per case would
 * cost far more. Every mismatch is reported with its expected message. */
Test(scene, bad_scenes_name_file_line_col_path_and_reason, .init = setup, .fini = teardown)
{
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
		load_bad(bad_cases[i].json, bad_cases[i].want);
	/* The CLI's exit status for all of these. */
	cr_assert_eq(tp_exit_code(TP_EINPUT), TP_EXIT_INPUT);
}

/* ---- files that are not scenes ---- */

Test(scene, nul_bytes_and_deep_nesting, .init = setup, .fini = teardown)
{
	const char nul[] = "{" FMT ",\n \"fps\": 3\0}";
	load_bad_ov(put_n("nul.json", nul, sizeof nul - 1), NULL, TP_EINPUT,
		":2:10: NUL byte in file (a scene is UTF-8 JSON text, is this a binary file?)");
	char deep[400] = "{" FMT ", \"drops\": ";
	for (int i = 0; i < 70; i++)
		strcat(deep, "[");
	load_bad_ov(put("deep.json", deep), NULL, TP_EINPUT,
		":1:104: arrays and objects nested too deeply");
}

Test(scene, unreadable_and_oversized_files, .init = setup, .fini = teardown)
{
	char p[256];
	tp_err err;
	scene *s;
	snprintf(p, sizeof p, "%s/missing.json", dir);
	load_bad_ov(p, NULL, TP_EIO, ": cannot open (No such file or directory)");
	cr_assert_eq(tp_exit_code(TP_EIO), TP_EXIT_IO);
	load_bad_ov(dir, NULL, TP_EIO, ": is a directory, not a scene file");

	/* A sparse 1 GiB file is refused by its size, without being read. */
	snprintf(p, sizeof p, "%s/huge.json", dir);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	load_bad_ov(p, NULL, TP_EINPUT, ": too large for a scene file (1024.0 MiB; the limit is 16 MiB)");
	cr_assert_eq(tp_exit_code(scene_load(p, NULL, tp_solvers, &s, &err)), TP_EXIT_INPUT);
}

Test(scene, background_png_missing_or_corrupt, .init = setup, .fini = teardown)
{
	const char *path = put("bg.json", "{" FMT ",\n  \"background\": { \"image\": \"pool.png\" }\n}\n");
	tp_err err = { "" };
	scene *s = NULL;
	int rc = scene_load(path, NULL, tp_solvers, &s, &err);
	cr_assert_eq(rc, TP_EINPUT, "%s", err.msg);
	cr_assert_null(s);
	char want[512];
	snprintf(want, sizeof want, "%s:2:28: background.image: %s/pool.png: ", path, dir);
	cr_assert(!strncmp(err.msg, want, strlen(want)), "got: %s", err.msg);

	put("pool.png", "\x89PNG\r\n\x1a\n this is not really a PNG file at all");
	rc = scene_load(path, NULL, tp_solvers, &s, &err);
	cr_assert_eq(rc, TP_EINPUT, "%s", err.msg);
	cr_assert(!strncmp(err.msg, want, strlen(want)), "got: %s", err.msg);
	cr_assert_eq(tp_exit_code(rc), TP_EXIT_INPUT);
}

/* The library names the overrides by its fields (the CLI gives its flags: test_where.c). */
Test(scene, bad_overrides_are_usage_errors, .init = setup, .fini = teardown)
{
	const char *p = put("ok.json", "{" FMT "}");
	scene_overrides size = { .width = 1, .height = 50 };
	load_bad_ov(p, &size, TP_EARG,
		    "width/height: width and height must be in 2..8192 (got 1x50)");
	scene_overrides big = { .width = 100, .height = 9000 };
	load_bad_ov(p, &big, TP_EARG,
		    "width/height: width and height must be in 2..8192 (got 100x9000)");
	scene_overrides frames = { .frames = -4 };
	load_bad_ov(p, &frames, TP_EARG, "frames: must be in 1..1000000 (got -4)");
	scene_overrides seed = { .has_seed = 1, .seed = UINT64_C(1) << 60 };
	load_bad_ov(p, &seed, TP_EARG,
		    "seed: must be in 0..9007199254740992 (got 1152921504606846976)");
	scene_overrides seed1 = { .has_seed = 1, .seed = (UINT64_C(1) << 53) + 1 };
	load_bad_ov(p, &seed1, TP_EARG,
		    "seed: must be in 0..9007199254740992 (got 9007199254740993)");
	scene_overrides out = { .output = "" };
	load_bad_ov(p, &out, TP_EARG, "output: the output path is empty");
	cr_assert_eq(tp_exit_code(TP_EUSAGE), TP_EXIT_USAGE);
}

Test(scene, cli_validate_prints_the_one_line_error, .init = setup, .fini = teardown)
{
	const char *p = put("x.json", "{" FMT ",\n  \"drops\": [{\"at\": [1, 1], \"radius\": -2}]\n}\n");
	char errf[128], want[512];
	snprintf(errf, sizeof errf, "%s/stderr", dir);
	cr_assert_eq(run_tp(NULL, errf, "validate %s", p), TP_EXIT_INPUT);
	snprintf(want, sizeof want, "tidepool: %s:2:38: drops[0].radius: must be > 0 (got -2)\n", p);
	cr_assert_str_eq(slurp(errf), want);
}

/* ---- the locator on its own ---- */

Test(scene, jsonpos_finds_members_elements_keys_and_duplicates)
{
	const char t[] = "{ \"a\\\"}\": [1, {\"x\": \"]}\"}, [ ]],\n  \"b\" : {\"c\": true, \"c\": -2.5e3} }";
	size_t len = sizeof t - 1, off, end;
	const char *why;
	cr_assert_eq(jsonpos_check(t, len, &off, &why), 0);
	int s1[] = { 0, 1, 0 };
	long o = jsonpos_find(t, len, s1, 3, 0, &end);
	cr_assert_eq(strncmp(t + o, "\"]}\"", end - (size_t)o), 0);
	int s2[] = { 1, 1 };
	o = jsonpos_find(t, len, s2, 2, 0, &end); /* the second "c" */
	cr_assert_eq(strncmp(t + o, "-2.5e3", end - (size_t)o), 0);
	cr_assert_eq(end - (size_t)o, 6u);
	o = jsonpos_find(t, len, s2, 2, 1, &end);
	cr_assert_eq(strncmp(t + o, "\"c\": -2", 7), 0);
	int line, col;
	jsonpos_linecol(t, len, (size_t)o, &line, &col);
	cr_assert_eq(line, 2);
	cr_assert_eq(col, 21);
	int s3[] = { 0, 2 };
	o = jsonpos_find(t, len, s3, 2, 0, &end);
	cr_assert_eq(strncmp(t + o, "[ ]", end - (size_t)o), 0);
	int s4[] = { 0, 3 };
	cr_assert_eq(jsonpos_find(t, len, s4, 2, 0, NULL), -1); /* out of range */
	int s5[] = { 0, 0, 0 };
	cr_assert_eq(jsonpos_find(t, len, s5, 3, 0, NULL), -1); /* 1 is not a container */
}

Test(scene, jsonpos_columns_count_characters)
{
	const char t[] = "\xEF\xBB\xBF[\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x8C\x8A\", 5]";
	size_t len = sizeof t - 1, off;
	const char *why;
	int line, col;
	cr_assert_eq(jsonpos_check_text(t, len, &off, &why), 0);
	cr_assert_eq(jsonpos_check(t, len, &off, &why), 0);
	int s[] = { 1 };
	long o = jsonpos_find(t, len, s, 1, 0, NULL);
	cr_assert_eq(t[o], '5');
	jsonpos_linecol(t, len, (size_t)o, &line, &col);
	cr_assert_eq(line, 1);
	cr_assert_eq(col, 9); /* [ " e-acute euro wave " , space 5: BOM not counted */
}

/* No scene element is silently ignored: what the chosen solver would not honour is
 * refused at its position, naming the field and the solver (scene/support.c; the table
 * "What each solver honours" in scenes/README.md). */
Test(scene, fields_a_solver_would_ignore_are_refused, .init = setup, .fini = teardown)
{
	/* height-field solvers: no tank, blocks, streams; floats only where supported */
	load_bad("{" FMT ", \"tank\": {}}",
		":1:40: tank: the ripple solver has no tank (the pool is the picture) (use sph; got an object)");
	load_bad("{" FMT ", \"solver\": \"hooke\", \"blocks\": [{\"rect\": [0, 0, 10, 10]}]}",
		":1:61: blocks: the hooke solver has no particles for fluid \"blocks\" (use sph; got an array of 1)");
	load_bad("{" FMT ", \"emitters\": [{\"type\": \"stream\", \"at\": [5, 5]}]}",
		":1:54: emitters[0].type: the ripple solver has no particles for a \"stream\" emitter (use sph; got \"stream\")");
	load_bad("{" FMT ", \"boxes\": [{\"size\": [5, 5], \"at\": [9, 9], \"float\": true}]}",
		":1:82: boxes[0].float: the ripple solver has no floating boxes (use shallow or sph; got true)");
	load_bad("{" FMT ", \"solver\": \"hooke\", \"boxes\": [{\"size\": [5, 5], \"at\": [9, 9], \"density\": 2}]}",
		":1:103: boxes[0].density: the hooke solver has no use for the density of a box that does not float (use shallow or airy; got 2)");
	load_bad("{" FMT ", \"render\": {\"mode\": \"particles\"}}",
		":1:51: render.mode: the ripple solver cannot render mode \"particles\" (use sph; got \"particles\")");
	/* a floating box is placed, not led */
	load_bad("{" FMT ", \"solver\": \"shallow\", \"boxes\": [{\"size\": [5, 5], \"float\": true, \"path\": "
		 "[{\"t\": 0, \"at\": [9, 9]}, {\"t\": 1, \"at\": [20, 9]}]}]}",
		":1:103: boxes[0].path: a floating box is moved by the shallow solver; its path gives only "
		"the start: give \"at\" (and \"angle\") instead (got 2 keyframes)");
	/* the particle solver: no boundary but its walls, no box heights, reflection, shadows,
	 * maps or loops, no negative drops */
	const char *sph = "{" FMT ", \"solver\": \"sph\", ";
	char text[512];
	static const char *const cases[][2] = {
		{ "\"boundary\": \"wrap\"}", ":1:61: boundary: the sph solver keeps its fluid in a tank with walls (\"reflect\") (use ripple, hooke, shallow or airy; got \"wrap\")" },
		{ "\"boxes\": [{\"size\": [5, 5], \"at\": [9, 9], \"height\": 3}]}", ":1:100: boxes[0].height: the sph solver sees boxes from the side: their \"size\" is [w, h] and they have no height (use ripple, hooke, shallow or airy; got 3)" },
		{ "\"render\": {\"reflection\": 1}}", ":1:74: render.reflection: the sph solver draws no reflection term (give 0 or leave it out) (use ripple, hooke, shallow or airy; got 1)" },
		{ "\"render\": {\"shadows\": true}}", ":1:71: render.shadows: the sph solver draws no box shadows (use ripple, hooke, shallow or airy; got true)" },
		{ "\"render\": {\"mode\": \"normal\"}}", ":1:68: render.mode: the sph solver cannot render mode \"normal\" (use ripple, hooke, shallow or airy; got \"normal\")" },
		{ "\"outputs\": [{\"path\": \"a.mp4\"}, {\"mode\": \"height\", \"path\": \"b.png\"}]}", ":1:89: outputs[1].mode: the sph solver cannot render mode \"height\" (use ripple, hooke, shallow or airy; got \"height\")" },
		{ "\"maps\": {\"normal\": {\"bits\": 16}}}", ":1:57: maps: the sph solver has no height, normal or caustics maps for \"maps\" to set (use ripple, hooke, shallow or airy; got an object)" },
		{ "\"loop\": {\"duration\": 1}}", ":1:57: loop: the sph solver cannot loop (a loop cross-fades height fields) (use ripple, hooke, shallow or airy; got an object)" },
		{ "\"drops\": [{\"at\": [9, 9], \"strength\": -1}]}", ":1:86: drops[0].strength: the sph solver cannot take water away: a drop's strength is the water it adds, >= 0 (use ripple, hooke, shallow or airy; got -1)" },
		{ "\"emitters\": [{\"type\": \"rain\", \"strength\": [-1, 1]}]}", ":1:91: emitters[0].strength: the sph solver cannot take water away: a drop's strength is the water it adds, >= 0 (use ripple, hooke, shallow or airy; got an array of 2)" },
		{ "\"boxes\": [{\"size\": [5, 5], \"at\": [9, 9], \"density\": 2}]}", ":1:101: boxes[0].density: the sph solver has no use for the density of a box that does not float (use shallow or airy; got 2)" },
		{ "\"boxes\": [{\"size\": [5, 5], \"float\": true, \"path\": [{\"t\": 0, \"at\": [9, 9]}, {\"t\": 1, \"at\": [20, 9]}]}]}", ":1:99: boxes[0].path: a floating box is moved by the sph solver; its path gives only the start: give \"at\" (and \"angle\") instead (got 2 keyframes)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, "%s%s", sph, cases[i][0]);
		load_bad(text, cases[i][1]);
	}
	/* and what each honours loads */
	scene *s = load_ok("{" FMT ", \"solver\": \"sph\", \"boundary\": \"reflect\", \"render\": "
			   "{\"reflection\": 0, \"shadows\": false, \"mode\": \"particles\"}, \"drops\": [{\"at\": "
			   "[9, 9], \"strength\": 0}], \"boxes\": [{\"size\": [5, 5], \"at\": [9, 9], \"float\": false}]}",
			   NULL);
	scene_destroy(s);
	s = load_ok("{" FMT ", \"solver\": \"shallow\", \"boxes\": [{\"size\": [5, 5], \"at\": [9, 9], "
		    "\"density\": 2, \"height\": 3}, {\"size\": [5, 5], \"at\": [20, 9], \"float\": true}]}",
		    NULL);
	scene_destroy(s);
}
