/* outputs.c - the outputs of one render: modes, paths, renderers, encoders (outputs.h). */
#include "cli/outputs.h"

#include <stdio.h>
#include <string.h>

#include "cli/sceneopts.h"

void outputs_split(const char *spec, int *mode, const char **path)
{
	const char *eq = strchr(spec, '=');
	*mode = -1;
	*path = spec;
	if (!eq)
		return;
	char name[32]; /* longer than any mode's name: no mode */
	if ((size_t)(eq - spec) >= sizeof name)
		return;
	memcpy(name, spec, (size_t)(eq - spec));
	name[eq - spec] = 0;
	if ((*mode = tp_mode_from_name(name)) >= 0)
		*path = eq + 1;
}

/* Case-sensitive on purpose, unlike tp_has_suffix(): "OUT.PNG" has always been rendered as
 * a sequence, not one picture, and changing that would change what a render writes. */
static int is_single_png(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && !strcmp(path + n - 4, ".png") && !strchr(path, '%');
}

/* The atlas layout: the scene's "flipbook" with the command line's changes on top.
 * Returns 0 if no flipbook is asked for. */
static int layout(const tp_scene_info *in, const tp_scene_outputs *so, const out_cli *cli,
		  tp_mode mode, enc_flipbook *fb)
{
	if (!so->flipbook && !cli->cols)
		return 0;
	fb->cols = cli->cols ? cli->cols : so->flipbook_cols;
	fb->rows = cli->cols ? cli->rows : so->flipbook_rows;
	fb->cell_w = cli->frame_w ? cli->frame_w : so->flipbook ? so->flipbook_cell_w : in->width;
	fb->cell_h = cli->frame_w ? cli->frame_h : so->flipbook ? so->flipbook_cell_h : in->height;
	fb->pot = cli->pot || so->flipbook_pot;
	fb->renormalize = mode == TP_MODE_NORMAL;
	fb->padding = cli->padding;
	return 1;
}

tp_pixfmt outputs_pixfmt(const tp_format *f, tp_pixels px)
{
	if (px == TP_PIXELS_YUV420)
		return TP_YUV420;
	if (f->bytes_per_sample == 4)
		return f->channels == 1 ? TP_GRAYF32 : TP_RGBF32;
	if (f->bytes_per_sample == 2)
		return f->channels == 1 ? TP_GRAY16 : TP_RGB16;
	return f->channels == 1 ? TP_GRAY8 : f->channels == 4 ? TP_RGBA8 : TP_RGB8;
}

static int add(out_plan *p, tp_scene *sc, const tp_scene_info *in, const tp_scene_outputs *so,
	       const out_cli *cli, const enc_config *base, int mode, const char *path, tp_err *err)
{
	out_item *it = &p->o[p->n++];
	it->mode = mode < 0 ? so->mode : (tp_mode)mode;
	it->path = path;
	it->enc = enc_find_for_path(path);
	/* A one-frame render to one .png stays a still, whatever the flipbook settings. */
	int atlas = layout(in, so, cli, it->mode, &it->fb) && is_single_png(path) && in->frames > 1;
	if (atlas && base->range)
		return tp_errf(
			err, TP_EUSAGE,
			"%s: a flipbook atlas holds every frame; it cannot be rendered by --range",
			path);
	if (atlas)
		it->enc = &tp_encoder_flipbook;
	if (!it->enc)
		return tp_errf(err, TP_EUSAGE,
			       "%s: unknown output type (use a .png pattern such as out/%%04d.png, "
			       ".exr, .mp4, or null)",
			       path);
	it->cfg = *base;
	it->cfg.path = path;
	it->cfg.w = in->width;
	it->cfg.h = in->height;
	it->cfg.fps = in->fps;
	it->cfg.frames = base->range ? base->frames : in->frames;
	it->pixels = TP_PIXELS_NATIVE;
	if (it->enc->caps & ENC_CAP_FLOAT) { /* floats in physical units */
		it->pixels = TP_PIXELS_FLOAT;
		it->cfg.exr_float = so->exr_float;
		it->cfg.exr_compression = so->exr_compression;
	}
	tp_format f = TP_FORMAT_INIT;
	tp_error e = TP_ERROR_INIT;
	if (tp_scene_format_as(sc, it->mode, it->pixels, &f, &e) < 0)
		return cli_api_err(&e, err);
	it->cfg.fmt = outputs_pixfmt(&f, it->pixels);
	if (atlas) { /* padding from the cell's own wrap where the maps tile */
		tp_map_info mi = TP_MAP_INFO_INIT;
		tp_scene_map_info(sc, it->mode, &mi);
		it->fb.wrap = mi.tiles;
	}
	it->cfg.flipbook = atlas ? &it->fb : NULL;
	it->cfg.total = in->frames;
	outputs_fingerprint(sc, (int)it->mode, it->enc, base->crf, base->preset,
			    base->bitrate, it->fp);
	it->cfg.fingerprint = it->fp;
	return it->enc->check(&it->cfg, err);
}

/* A bare -o PATH keeps the mode of the scene's outputs when they all have one (a
 * caustics scene stays caustics); with outputs of several modes it must say which, except
 * for null (which renders the first). Without "outputs": the scene's render.mode. */
static int bare_mode(const tp_scene_outputs *so, const char *spec, int *mode, tp_err *err)
{
	*mode = -1;
	if (!so->n)
		return 0;
	*mode = (int)so->o[0].mode;
	int same = 1;
	char list[128] = "";
	for (int i = 0; i < so->n; i++) {
		same &= so->o[i].mode == so->o[0].mode;
		size_t k = strlen(list);
		snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "",
			 tp_mode_name(so->o[i].mode));
	}
	if (same || !strcmp(spec, "null"))
		return 0;
	return tp_errf(
		err, TP_EUSAGE,
		"-o %s: the scene has outputs of modes %s; say which this one is with -o MODE=%s",
		spec, list, spec);
}

int outputs_plan(out_plan *p, tp_scene *sc, const out_cli *cli, const enc_config *base,
		 tp_err *err)
{
	int rc = 0;
	tp_scene_outputs so = TP_SCENE_OUTPUTS_INIT;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_outputs(sc, &so);
	tp_scene_get_info(sc, &in);
	memset(p, 0, sizeof *p);
	if (cli->n) {
		for (int i = 0; i < cli->n && rc == 0; i++) {
			int mode;
			const char *path;
			outputs_split(cli->spec[i], &mode, &path);
			if (mode < 0 && (rc = bare_mode(&so, cli->spec[i], &mode, err)) < 0)
				break;
			rc = add(p, sc, &in, &so, cli, base, mode, path, err);
		}
	} else if (so.n) {
		for (int i = 0; i < so.n && i < OUTPUTS_MAX && rc == 0; i++)
			rc = add(p, sc, &in, &so, cli, base, (int)so.o[i].mode, so.o[i].path, err);
	} else if (so.output) {
		rc = add(p, sc, &in, &so, cli, base, -1, so.output, err);
	} else {
		rc = tp_errf(err, TP_EUSAGE,
			     "%s: no output: give -o OUT or \"output\" in the scene", in.path);
	}
	int atlases = 0;
	for (int i = 0; i < p->n; i++)
		atlases += p->o[i].cfg.flipbook != NULL;
	if (rc == 0 && cli->padding && !atlases)
		rc = tp_errf(
			err, TP_EUSAGE,
			"--flipbook-padding: no output is a flipbook (a single .png of several "
			"frames, with --flipbook CxR or the scene's \"flipbook\")");
	/* Two outputs writing the same files would destroy each other. */
	for (int i = 0; i < p->n && rc == 0; i++)
		for (int j = 0; j < i && rc == 0; j++)
			if (strcmp(p->o[i].path, "null") && !strcmp(p->o[i].path, p->o[j].path))
				rc = tp_errf(err, TP_EUSAGE, "%s: given as two outputs",
					     p->o[i].path);
	return rc;
}

void outputs_describe(out_plan *p, const tp_scene *sc)
{
	for (int i = 0; i < p->n; i++) {
		out_item *it = &p->o[i];
		enc_record *r = &it->rec;
		*r = (enc_record){.mode = it->mode,
				  .mode_name = tp_mode_name(it->mode),
				  .encoder = it->enc->name,
				  .frames = it->cfg.total,
				  .fps = it->cfg.fps,
				  .width = it->cfg.w,
				  .height = it->cfg.h,
				  .float_samples = it->pixels == TP_PIXELS_FLOAT};
		memcpy(r->fp, it->fp, sizeof r->fp);
		r->map = (tp_map_info)TP_MAP_INFO_INIT;
		tp_scene_map_info(sc, it->mode, &r->map);
		if (it->cfg.flipbook) {
			int aw, ah;
			enc_flipbook_size(&it->fb, &aw, &ah, &r->cell_w, &r->cell_h);
			r->cols = it->fb.cols;
			r->rows = it->fb.rows;
			r->padding = it->fb.padding;
		}
		it->cfg.record = r;
	}
}

int outputs_render(out_plan *p, tp_scene *sc, int frame, tp_image *slot, void (*side)(void *),
		   void *side_arg, tp_err *err)
{
	for (int i = 0; i < p->n; i++)
		p->t[i] = (tp_target){.size = sizeof(tp_target),
				      .mode = p->o[i].mode,
				      .pixels = slot[i].fmt == TP_YUV420 ? TP_PIXELS_YUV420
									 : p->o[i].pixels,
				      .buf = slot[i].pixels,
				      .stride = (size_t)slot[i].stride};
	tp_error e = TP_ERROR_INIT;
	if (tp_scene_render_targets(sc, frame, p->t, p->n, side, side_arg, &e) < 0)
		return cli_api_err(&e, err);
	return 0;
}

void outputs_fingerprint(const tp_scene *sc, int mode, const tp_encoder *enc, int crf,
			 const char *preset, int64_t bitrate, char hex[65])
{
	char what[256];
	int n = snprintf(what, sizeof what, "mode %s\nencoder %s\n", tp_mode_name((tp_mode)mode),
			 enc->name);
	if ((enc->caps & ENC_CAP_RATE) && n > 0 && (size_t)n < sizeof what)
		snprintf(what + n, sizeof what - (size_t)n, "crf %d\npreset %s\nbitrate %lld\n", crf,
			 preset ? preset : "-", (long long)bitrate);
	tp_scene_fingerprint(sc, what, hex);
}

long outputs_height_clipped(const out_plan *p)
{
	long n = -1;
	for (int i = 0; i < p->n; i++)
		if (p->o[i].mode == TP_MODE_HEIGHT)
			n = (n < 0 ? 0 : n) + p->t[i].clipped;
	return n;
}
