/* render.c - render contexts: per-mode set-up and the per-frame dispatch. */
#include "render/render.h"

#include <stdlib.h>
#include <string.h>

#include "render/render_impl.h"

struct render_ctx {
	const scene *sc;
	scene_mode mode;
	int w, h;
	tp_image bg;
	float *height;  /* w*h: the surface in height units */
	float *scratch; /* w*h*4 */
};

static const char *mode_name(scene_mode m)
{
	static const char *const names[] = { "color", "height", "normal", "caustics", "particles" };
	return names[m];
}

int render_create(const scene *sc, scene_mode mode, render_ctx **out, tp_err *err)
{
	*out = NULL;
	int fluid = (sc->solver->caps & TP_SOLVER_PARTICLES) != 0;
	int supported = !fluid && mode == SCENE_MODE_COLOR;
	if (!supported)
		return tp_errf(err, TP_EINPUT, "%s: render mode \"%s\" is not available for the %s solver",
			       sc->path, mode_name(mode), sc->solver->name);
	render_ctx *r = calloc(1, sizeof *r);
	if (!r)
		return tp_errf(err, TP_EIO, "out of memory");
	r->sc = sc;
	r->mode = mode;
	r->w = sc->width;
	r->h = sc->height;
	size_t n = (size_t)r->w * (size_t)r->h;
	r->height = malloc(n * sizeof *r->height);
	r->scratch = malloc(n * 4 * sizeof *r->scratch);
	if (!r->height || !r->scratch) {
		render_destroy(r);
		return tp_errf(err, TP_EIO, "out of memory for a %dx%d renderer", sc->width, sc->height);
	}
	int rc = render_background(sc, r->w, r->h, &r->bg, err);
	if (rc < 0) {
		render_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

void render_destroy(render_ctx *r)
{
	if (!r)
		return;
	tp_image_free(&r->bg);
	free(r->height);
	free(r->scratch);
	free(r);
}

tp_pixfmt render_format(const render_ctx *r)
{
	(void)r;
	return TP_RGB8;
}

/* Integer or float samples to float height units, once per frame. */
static void to_height(const tp_surface *s, float *dst)
{
#pragma omp parallel for schedule(static)
	for (int y = 0; y < s->h; y++) {
		float *d = dst + (size_t)y * s->w;
		if (s->type == TP_SAMPLE_I32) {
			const int32_t *src = (const int32_t *)s->data + (ptrdiff_t)y * s->stride;
			for (int x = 0; x < s->w; x++)
				d[x] = (float)src[x] * s->scale;
		} else {
			const float *src = (const float *)s->data + (ptrdiff_t)y * s->stride;
			for (int x = 0; x < s->w; x++)
				d[x] = src[x] * s->scale;
		}
	}
}

int render_frame(render_ctx *r, const tp_surface *s, tp_image *out)
{
	render_in in = {
		.sc = r->sc,
		.surf = s,
		.w = r->w,
		.h = r->h,
		.wrap = s->wrap,
		.bg = &r->bg,
		.scratch = r->scratch,
	};
	if (s->kind == TP_SURFACE_HEIGHT) {
		to_height(s, r->height);
		in.height = r->height;
	}
	switch (r->mode) {
	case SCENE_MODE_COLOR:
		render_color(&in, out);
		break;
	default:
		break;
	}
	return 0;
}
