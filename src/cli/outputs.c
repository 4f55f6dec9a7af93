/* outputs.c - the outputs of one render: modes, paths, renderers, encoders (outputs.h). */
#include "cli/outputs.h"

#include <stdio.h>
#include <string.h>

static const char *const mode_names[] = {"color",    "height",    "normal",
					 "caustics", "particles", "displacement", "foam", NULL};

void outputs_split(const char *spec, int *mode, const char **path)
{
	const char *eq = strchr(spec, '=');
	*mode = -1;
	*path = spec;
	if (!eq)
		return;
	for (int i = 0; mode_names[i]; i++)
		if (strlen(mode_names[i]) == (size_t)(eq - spec) &&
		    !strncmp(spec, mode_names[i], (size_t)(eq - spec))) {
			*mode = i;
			*path = eq + 1;
			return;
		}
}

static int is_single_png(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && !strcmp(path + n - 4, ".png") && !strchr(path, '%');
}

/* The atlas layout: the scene's "flipbook" with the command line's changes on top.
 * Returns 0 if no flipbook is asked for. */
static int layout(const scene *sc, const out_cli *cli, scene_mode mode, enc_flipbook *fb)
{
	const scene_flipbook *s = &sc->flipbook;
	if (!s->on && !cli->cols)
		return 0;
	fb->cols = cli->cols ? cli->cols : s->cols;
	fb->rows = cli->cols ? cli->rows : s->rows;
	fb->cell_w = cli->frame_w ? cli->frame_w : s->on ? s->frame_w : sc->width;
	fb->cell_h = cli->frame_w ? cli->frame_h : s->on ? s->frame_h : sc->height;
	fb->pot = cli->pot || s->pot;
	fb->renormalize = mode == SCENE_MODE_NORMAL;
	return 1;
}

static int add(out_plan *p, const scene *sc, const out_cli *cli, const enc_config *base, int mode,
	       const char *path, tp_err *err)
{
	out_item *it = &p->o[p->n++];
	it->mode = (scene_mode)(mode < 0 ? (int)sc->render.mode : mode);
	it->path = path;
	it->enc = enc_find_for_path(path);
	/* A one-frame render to one .png stays a still, whatever the flipbook settings. */
	int atlas = layout(sc, cli, it->mode, &it->fb) && is_single_png(path) && sc->frames > 1;
	if (atlas && base->range)
		return tp_errf(
			err, TP_EUSAGE,
			"%s: a flipbook atlas holds every frame; it cannot be rendered by --range",
			path);
	if (atlas)
		it->enc = enc_find("flipbook");
	if (!it->enc)
		return tp_errf(err, TP_EUSAGE,
			       "%s: unknown output type (use a .png pattern such as out/%%04d.png, "
			       ".exr, .mp4, or null)",
			       path);
	int rc = render_create(sc, it->mode, &it->rd, err);
	if (rc < 0)
		return rc;
	it->cfg = *base;
	it->cfg.path = path;
	it->cfg.w = sc->width;
	it->cfg.h = sc->height;
	it->cfg.fps = sc->fps;
	it->cfg.frames = base->range ? base->frames : sc->frames;
	if (!strcmp(it->enc->name, "exr")) { /* floats in physical units */
		render_set_float(it->rd, 1);
		it->cfg.exr_float = sc->maps.exr_float;
		it->cfg.exr_compression = sc->maps.exr_compression;
	}
	it->cfg.fmt = render_format(it->rd);
	it->cfg.flipbook = atlas ? &it->fb : NULL;
	it->cfg.total = sc->frames;
	if (cli->ov) {
		outputs_fingerprint(sc, cli->ov, (int)it->mode, it->enc->name, base->crf,
				    base->preset, base->bitrate, it->fp);
		it->cfg.fingerprint = it->fp;
	}
	return it->enc->check(&it->cfg, err);
}

/* A bare -o PATH keeps the mode of the scene's outputs when they all have one (a
 * caustics scene stays caustics); with outputs of several modes it must say which, except
 * for null (which renders the first). Without "outputs": the scene's render.mode. */
static int bare_mode(const scene *sc, const char *spec, int *mode, tp_err *err)
{
	*mode = -1;
	if (!sc->noutputs)
		return 0;
	*mode = (int)sc->outputs[0].mode;
	int same = 1;
	char list[128] = "";
	for (int i = 0; i < sc->noutputs; i++) {
		same &= sc->outputs[i].mode == sc->outputs[0].mode;
		size_t k = strlen(list);
		snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "",
			 mode_names[sc->outputs[i].mode]);
	}
	if (same || !strcmp(spec, "null"))
		return 0;
	return tp_errf(
		err, TP_EUSAGE,
		"-o %s: the scene has outputs of modes %s; say which this one is with -o MODE=%s",
		spec, list, spec);
}

int outputs_plan(out_plan *p, const scene *sc, const out_cli *cli, const enc_config *base,
		 tp_err *err)
{
	int rc = 0;
	memset(p, 0, sizeof *p);
	if (cli->n) {
		for (int i = 0; i < cli->n && rc == 0; i++) {
			int mode;
			const char *path;
			outputs_split(cli->spec[i], &mode, &path);
			if (mode < 0 && (rc = bare_mode(sc, cli->spec[i], &mode, err)) < 0)
				break;
			rc = add(p, sc, cli, base, mode, path, err);
		}
	} else if (sc->noutputs) {
		for (int i = 0; i < sc->noutputs && i < OUTPUTS_MAX && rc == 0; i++)
			rc = add(p, sc, cli, base, (int)sc->outputs[i].mode, sc->outputs[i].path,
				 err);
	} else if (sc->output) {
		rc = add(p, sc, cli, base, -1, sc->output, err);
	} else {
		rc = tp_errf(err, TP_EUSAGE,
			     "%s: no output: give -o OUT or \"output\" in the scene", sc->path);
	}
	/* Two outputs writing the same files would destroy each other. */
	for (int i = 0; i < p->n && rc == 0; i++)
		for (int j = 0; j < i && rc == 0; j++)
			if (strcmp(p->o[i].path, "null") && !strcmp(p->o[i].path, p->o[j].path))
				rc = tp_errf(err, TP_EUSAGE, "%s: given as two outputs",
					     p->o[i].path);
	if (rc < 0)
		outputs_free(p);
	return rc;
}

void outputs_render(out_plan *p, const tp_surface *s, tp_image *slot, void (*side)(void *),
		    void *side_arg)
{
	for (int i = 0; i < p->n; i++)
		render_frame_side(p->o[i].rd, s, &slot[i], i == 0 ? side : NULL, side_arg);
}

void outputs_fingerprint(const scene *sc, const scene_overrides *ov, int mode,
			 const char *encoder, int crf, const char *preset, int64_t bitrate,
			 char hex[65])
{
	uint8_t fp[32];
	char what[256];
	scene_fingerprint(sc, ov, fp);
	int n = snprintf(what, sizeof what, "mode %s\nencoder %s\n", mode_names[mode], encoder);
	if (!strcmp(encoder, "mp4") && n > 0 && (size_t)n < sizeof what)
		snprintf(what + n, sizeof what - (size_t)n, "crf %d\npreset %s\nbitrate %lld\n", crf,
			 preset ? preset : "-", (long long)bitrate);
	scene_output_fingerprint(fp, what, hex);
}

long outputs_height_clipped(const out_plan *p)
{
	long n = -1;
	for (int i = 0; i < p->n; i++)
		if (p->o[i].mode == SCENE_MODE_HEIGHT)
			n = (n < 0 ? 0 : n) + render_height_clipped(p->o[i].rd);
	return n;
}

void outputs_free(out_plan *p)
{
	for (int i = 0; i < p->n; i++)
		render_destroy(p->o[i].rd);
	memset(p, 0, sizeof *p);
}
