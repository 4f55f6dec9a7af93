/*
 * api_output.c - the part of libtidepool's API (include/tidepool.h) that programs writing
 * whole renders use, the tidepool command first: what the scene asks to be written, the
 * pictures of a frame in the encoders' layouts, cancelling, the height maps' levelling,
 * box poses, fingerprints, checkpoints on disk (sim/ckpt.h) and the solvers' listing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "render/modes.h"
#include "sim/ckpt.h"
#include "sim/stepper.h"
#include "solvers/solver.h"
#include "util/opts.h"

_Static_assert((int)TP_PARAM_INTEGER == (int)TP_OPT_INT &&
		       (int)TP_PARAM_NUMBER == (int)TP_OPT_DOUBLE &&
		       (int)TP_PARAM_BOOLEAN == (int)TP_OPT_BOOL &&
		       (int)TP_PARAM_CHOICE == (int)TP_OPT_ENUM,
	       "tp_param_type and tp_opt_type differ");
_Static_assert((int)TP_EXR_ZIP == (int)SCENE_EXR_ZIP && (int)TP_EXR_ZIPS == (int)SCENE_EXR_ZIPS &&
		       (int)TP_EXR_PIZ == (int)SCENE_EXR_PIZ &&
		       (int)TP_EXR_RLE == (int)SCENE_EXR_RLE &&
		       (int)TP_EXR_NONE == (int)SCENE_EXR_NONE,
	       "tp_exr_compression and scene_exr_compression differ");

TP_API int tp_scene_get_outputs(const tp_scene *s, tp_scene_outputs *out)
{
	if (!s || !out)
		return TP_ERROR_ARGUMENT;
	const scene *sc = s->sc;
	tp_scene_outputs whole = {.size = sizeof whole}, *given = out;
	out = &whole;
	out->mode = (tp_mode)sc->render.mode;
	out->output = sc->output;
	for (int i = 0; i < sc->noutputs && i < TP_OUTPUTS_MAX; i++)
		out->o[out->n++] = (tp_output){.mode = (tp_mode)sc->outputs[i].mode,
					       .path = sc->outputs[i].path};
	out->flipbook = sc->flipbook.on;
	out->flipbook_cols = sc->flipbook.cols;
	out->flipbook_rows = sc->flipbook.rows;
	out->flipbook_cell_w = sc->flipbook.frame_w;
	out->flipbook_cell_h = sc->flipbook.frame_h;
	out->flipbook_pot = sc->flipbook.pot;
	out->exr_float = sc->maps.exr_float;
	out->exr_compression = (tp_exr_compression)sc->maps.exr_compression;
	out->height_auto = sc->maps.height_auto;
	return api_out(given, out, sizeof *out);
}

/* The solver's "metres" (per scene unit) as the scene sets it, or its default; 0 for a
 * solver without one (no length scale). */
static double scene_metres(const scene *sc)
{
	const tp_option *o =
		sc->solver->options ? tp_opts_find(sc->solver->options, "metres") : NULL;
	if (!o)
		return 0;
	for (int i = 0; i < sc->nparams; i++)
		if (!strcmp(sc->params[i].name, "metres"))
			return sc->params[i].value;
	return o->def;
}

TP_API int tp_scene_map_info(const tp_scene *s, tp_mode mode, tp_map_info *out)
{
	if (!s || !out || mode < 0 || mode >= TP_MODE_COUNT)
		return TP_ERROR_ARGUMENT;
	const scene *sc = s->sc;
	const scene_maps *m = &sc->maps;
	/* as maps.c: a fixed scale, the levelled one, or 1024 levels per height unit */
	const double fixed = m->height_scale > 0 ? m->height_scale : 1024.0;
	tp_map_info info = {
		.size = sizeof info,
		.loop_frames = sc->loop.on ? sc->loop.frames : 0,
		.tiles = sc->boundary == SCENE_BOUNDARY_WRAP,
		.texel_w = (double)sc->ref_width / sc->width,
		.texel_h = (double)sc->ref_height / sc->height,
		.tile_w = sc->ref_width,
		.tile_h = sc->ref_height,
		.metres = scene_metres(sc),
		.levels = s->levelled ? api_levels(s->top) : fixed,
		.bits = render_mode_bits(sc, (scene_mode)mode),
		.normal_directx = m->normal_directx,
		.normal_strength = m->normal_strength,
		.caustics_linear = m->caustics_linear,
		.caustics_intensity = m->caustics_intensity,
		.caustics_depth = m->caustics_depth, /* scene units */
	};
	return api_out(out, &info, sizeof info);
}

TP_API int tp_scene_variants(const tp_scene *s, const char **name)
{
	if (!s)
		return TP_ERROR_ARGUMENT;
	if (name)
		*name = s->sc->variants.name;
	return s->sc->variants.n;
}

TP_API int tp_scene_vary(const tp_scene *s, int i, tp_vary *out)
{
	if (!s || !out || i < 0 || i >= s->sc->variants.n)
		return TP_ERROR_ARGUMENT;
	const scene_vary *v = &s->sc->variants.vary[i];
	tp_vary whole = {.size = sizeof whole,
			 .key = v->key,
			 .n = v->n,
			 .values = (const char *const *)v->values};
	return api_out(out, &whole, sizeof whole);
}

/* ---- pictures in the encoders' layouts ---------------------------------------------- */

/* The renderer of `mode` in layout `px` and the format it writes: the mode's own (which
 * also draws 4:2:0 where render_yuv() says so), or one of its own for floats
 * (render_set_float), made when first asked for. A mode the scene cannot feed fails with
 * render_create's message, as validate gives it. */
static int layout_renderer(tp_scene *s, tp_mode mode, tp_pixels px, render_ctx **out,
			   tp_pixfmt *fmt, tp_error *e)
{
	int rc;
	tp_err err = {{0}};
	if ((int)mode < 0 || (int)mode >= API_MODES)
		return api_fail_arg(e, "mode %d is not a render mode (0..%d)", (int)mode,
				    API_MODES - 1);
	if ((int)px < 0 || (int)px > TP_PIXELS_YUV420)
		return api_fail_arg(e, "pixel layout %d is not one of tp_pixels", (int)px);
	render_ctx **slot = px == TP_PIXELS_FLOAT ? &s->rdf[mode] : &s->rd[mode];
	if (!*slot) {
		if ((rc = render_create(s->sc, (scene_mode)mode, slot, &err)) < 0)
			return api_fail(s, e, rc, &err);
		if (px == TP_PIXELS_FLOAT)
			render_set_float(*slot, 1);
		if (mode == TP_MODE_HEIGHT && s->levelled)
			render_set_height_scale(*slot, api_levels(s->top));
	}
	if (px == TP_PIXELS_YUV420 && !render_yuv(*slot))
		return api_fail_arg(e, "4:2:0 pictures are made of the colour mode of a height field "
				       "at an even size only (%s, %s, %dx%d)",
				    tp_mode_name(mode), s->sc->solver->name, s->sc->width,
				    s->sc->height);
	*out = *slot;
	*fmt = px == TP_PIXELS_YUV420 ? TP_YUV420 : render_format(*slot);
	return 0;
}

TP_API int tp_scene_format_as(tp_scene *s, tp_mode mode, tp_pixels px, tp_format *out,
			      tp_error *e)
{
	render_ctx *rd;
	tp_pixfmt f;
	int rc;
	if (!s || !out)
		return api_fail_arg(e, "no scene or no place for the format given");
	if ((rc = layout_renderer(s, mode, px, &rd, &f, e)) < 0)
		return rc;
	return api_format_of(s, f, out, e);
}

/* Target i of the caller's array, elements t[0].size bytes apart. */
static tp_target *target_at(tp_target *t, size_t each, int i)
{
	return (tp_target *)((char *)t + (size_t)i * each);
}

TP_API int tp_scene_render_targets(tp_scene *s, int frame, tp_target *given, int n,
				   void (*side)(void *), void *side_arg, tp_error *e)
{
	int rc;
	if (!s || n < 0 || (n > 0 && !given))
		return api_fail_arg(e, "no scene or no targets given");
	render_ctx *rd[TP_OUTPUTS_MAX * 2];
	tp_pixfmt f[TP_OUTPUTS_MAX * 2];
	tp_target t[TP_OUTPUTS_MAX * 2];
	if (n > (int)(sizeof rd / sizeof rd[0]))
		return api_fail_arg(e, "%d targets, more than %d", n, (int)(sizeof rd / sizeof rd[0]));
	const size_t each = n > 0 ? api_size_of(given) : 0;
	for (int i = 0; i < n; i++)
		if (api_in(&t[i], sizeof t[i], target_at(given, each, i)) < 0 ||
		    api_size_of(target_at(given, each, i)) != each)
			return api_fail_arg(
				e, "tp_target %d: size %zu, not %zu as target 0's (TP_TARGET_INIT)",
				i, api_size_of(target_at(given, each, i)), each);
	for (int i = 0; i < n; i++) {
		if (!t[i].buf)
			return api_fail_arg(e, "target %d has no buffer", i);
		if ((rc = layout_renderer(s, t[i].mode, t[i].pixels, &rd[i], &f[i], e)) < 0 ||
		    (t[i].mode == TP_MODE_HEIGHT && (rc = api_level(s, NULL, NULL, e)) < 0))
			return rc;
	}
	if ((rc = tp_scene_seek(s, frame, e)) < 0)
		return rc;
	for (int i = 0; i < n; i++) {
		if ((rc = api_render_into(s, rd[i], f[i], frame, t[i].buf, t[i].stride,
					  i == 0 ? side : NULL, side_arg, e)) < 0)
			return rc;
		t[i].clipped = t[i].mode == TP_MODE_HEIGHT ? render_height_clipped(rd[i]) : -1;
		api_out(target_at(given, each, i), &t[i], sizeof t[i]);
	}
	if (n == 0 && side)
		side(side_arg);
	api_error_clear(e);
	return 0;
}

/* ---- stepping for renders ------------------------------------------------------------ */

TP_API int tp_scene_pass(tp_scene *s, tp_error *e)
{
	if (!s)
		return api_fail_arg(e, "no scene given");
	if (s->pos + 1 >= s->sc->frames)
		return api_fail_arg(e, "frame %d is out of range (the scene has %d frames)",
				    s->pos + 1, s->sc->frames);
	if (!s->lp)
		return tp_scene_seek(s, s->pos + 1, e); /* starting over: from a checkpoint */
	api_use_threads(s);
	tp_err err = {{0}};
	int rc = loop_pass(s->lp, &err);
	if (rc < 0) {
		api_drop_loop(s);
		return api_fail(s, e, rc, &err);
	}
	s->pos++;
	s->surf_ok = 0;
	return 0;
}

TP_API int tp_scene_set_cancel(tp_scene *s, const volatile int *flag)
{
	if (!s)
		return TP_ERROR_ARGUMENT;
	s->cancel = flag;
	if (s->lp)
		stepper_set_cancel(loop_stepper(s->lp), (const volatile sig_atomic_t *)flag);
	return 0;
}

TP_API int tp_scene_level_heights(tp_scene *s, void (*progress)(void *, int, int), void *arg,
				  double *levels, double *top, tp_error *e)
{
	if (!s)
		return api_fail_arg(e, "no scene given");
	api_use_threads(s);
	int rc = api_level(s, progress, arg, e);
	if (rc < 0)
		return rc;
	if (levels)
		*levels = s->levelled ? api_levels(s->top) : 0;
	if (top)
		*top = s->levelled ? s->top : 0;
	return s->levelled;
}

TP_API int tp_scene_warmup_frames(const tp_scene *s)
{
	return s ? s->warmed + (s->lp ? loop_warmup_frames(s->lp) : 0) : 0;
}

TP_API int tp_scene_boxes(tp_scene *s, int frame, tp_pose *out, int max, tp_error *e)
{
	int rc;
	if (!s || max < 0 || (max > 0 && !out))
		return api_fail_arg(e, "no scene or no place for the poses given");
	if ((rc = tp_scene_seek(s, frame, e)) < 0)
		return rc;
	const scene *sc = s->sc;
	const double sx = sc->scale_x > 0 ? sc->scale_x : 1, sy = sc->scale_y > 0 ? sc->scale_y : 1;
	const int n = s->surf.boxes ? s->surf.nboxes : 0;
	const size_t each = max > 0 ? api_size_of(out) : 0;
	if (max > 0 && each < sizeof each)
		return api_fail_arg(e, "tp_pose.size is %zu: set it with TP_POSE_INIT", each);
	for (int i = 0; i < n && i < max; i++) {
		const tp_box_pose *p = &s->surf.boxes[i];
		/* 0 for -0, so a box at rest reads the same on every run */
		tp_pose pose = {.size = sizeof pose,
				.x = p->x / sx + 0.0,
				.y = p->y / sy + 0.0,
				.angle = p->angle + 0.0};
		tp_pose *to = (tp_pose *)((char *)out + (size_t)i * each);
		if (api_size_of(to) != each)
			return api_fail_arg(e, "tp_pose %d: size %zu, not %zu as pose 0's", i,
					    api_size_of(to), each);
		api_out(to, &pose, sizeof pose);
	}
	api_error_clear(e);
	return n;
}

/* ---- provenance and checkpoints on disk ---------------------------------------------- */

TP_API int tp_scene_fingerprint(const tp_scene *s, const char *what, char hex[65])
{
	if (!s || !hex)
		return TP_ERROR_ARGUMENT;
	if (what) {
		scene_output_fingerprint(s->fp, what, hex);
		return 0;
	}
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", s->fp[i]);
	return 0;
}

TP_API int tp_checkpoint_path(const char *dir, int frame, char *buf, size_t n)
{
	if (!dir || !buf || frame < 0)
		return TP_ERROR_ARGUMENT;
	return ckpt_path(dir, frame, buf, n) < 0 ? TP_ERROR_ARGUMENT : 0;
}

static ckpt_key key_of(const tp_scene *s)
{
	ckpt_key key = {.sc = s->sc};
	memcpy(key.fingerprint, s->fp, sizeof key.fingerprint);
	return key;
}

static int dir_path(tp_scene *s, const char *dir, int frame, char *path, size_t n, tp_error *e)
{
	if (!dir)
		return api_fail_arg(e, "no checkpoint folder given");
	if (ckpt_path(dir, frame, path, n) < 0) {
		tp_err err;
		return api_fail(s, e, tp_errf(&err, TP_EARG, "%s: path too long", dir), &err);
	}
	return 0;
}

TP_API int tp_scene_save_checkpoint(tp_scene *s, const char *dir, uint64_t *bytes, tp_error *e)
{
	if (!s || !dir)
		return api_fail_arg(e, "no scene or no checkpoint folder given");
	if (s->pos < 0 || !s->lp)
		return api_fail_arg(e, "no frame simulated yet: a checkpoint holds the state after one");
	ckpt_key key = key_of(s);
	uint64_t size = 0;
	tp_err err = {{0}};
	int rc = ckpt_write(dir, &key, s->lp, s->pos + 1, &size, &err);
	if (rc < 0)
		return api_fail(s, e, rc, &err);
	if (bytes)
		*bytes = size;
	return 0;
}

TP_API int tp_scene_check_checkpoint(tp_scene *s, const char *dir, int frame, tp_error *e)
{
	char path[4352];
	int rc;
	if (!s)
		return api_fail_arg(e, "no scene given");
	if ((rc = dir_path(s, dir, frame, path, sizeof path, e)) < 0)
		return rc;
	ckpt_key key = key_of(s);
	tp_err err = {{0}};
	if ((rc = ckpt_check(path, &key, frame, NULL, &err)) < 0)
		return api_fail(s, e, rc, &err);
	return 0;
}

TP_API int tp_scene_load_checkpoint(tp_scene *s, const char *dir, int at_most, tp_error *e)
{
	char path[4352];
	int rc, from = 0;
	tp_err err = {{0}};
	if (!s)
		return api_fail_arg(e, "no scene given");
	if (!dir)
		return api_fail_arg(e, "no checkpoint folder given");
	if ((rc = ckpt_find(dir, at_most, &from, &err)) < 0)
		return api_fail(s, e, rc, &err);
	if (from <= 0)
		return 0;
	if ((rc = dir_path(s, dir, from, path, sizeof path, e)) < 0)
		return rc;
	ckpt_key key = key_of(s);
	api_drop_loop(s);
	api_use_threads(s);
	if ((rc = api_new_loop(s, &s->lp, &err)) < 0 ||
	    (rc = ckpt_load(path, &key, from, s->lp, &err)) < 0) {
		api_drop_loop(s);
		return api_fail(s, e, rc, &err);
	}
	s->pos = from - 1;
	s->surf_ok = 0;
	return from;
}

/* ---- the solvers ------------------------------------------------------------------------ */

TP_API int tp_solver_count(void)
{
	int n = 0;
	while (tp_solvers[n])
		n++;
	return n;
}

TP_API int tp_solver_get(int i, tp_solver_info *out)
{
	if (!out || i < 0 || i >= tp_solver_count())
		return TP_ERROR_ARGUMENT;
	const tp_solver_kind *sv = tp_solvers[i];
	int np = 0;
	while (sv->options && sv->options[np].name)
		np++;
	tp_solver_info whole = {.size = sizeof whole,
				.name = sv->name,
				.description = sv->description,
				.nparams = np};
	return api_out(out, &whole, sizeof whole);
}

TP_API int tp_solver_param(int i, int p, tp_param *out)
{
	tp_solver_info info = TP_SOLVER_INFO_INIT;
	if (!out || tp_solver_get(i, &info) < 0 || p < 0 || p >= info.nparams)
		return TP_ERROR_ARGUMENT;
	const tp_option *o = &tp_solvers[i]->options[p];
	tp_param whole = {.size = sizeof whole,
			  .name = o->name,
			  .help = o->help,
			  .def = o->def,
			  .choices = o->choices};
	whole.type = (tp_param_type)o->type;
	tp_opts_range(o, whole.range, sizeof whole.range);
	return api_out(out, &whole, sizeof whole);
}
