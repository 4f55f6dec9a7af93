/* render.c - render contexts: per-mode set-up and the per-frame dispatch. */
#include "render/render.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/modes.h"
#include "render/refract_dsp.h"
#include "render/render_impl.h"
#include "scene/solverkind.h"
#include "util/cpu.h"

struct render_ctx {
	const scene *sc;
	scene_mode mode;
	int w, h;
	tp_image bg;
	uint8_t *bgx;        /* (w+1) x (h+1) RGBX, see render_in.bgx */
	uint8_t *bgflat;     /* w x h, see render_in.bgflat (NULL: none) */
	uint32_t *bgsat;     /* see render_in.bgsat (NULL: none) */
	int bgsat_stride;
	float *hpad;         /* (w+2) x (h+2) heights with ghost cells */
	float *height;       /* w*h: the surface in height units (texture-map modes only) */
	float *scratch;      /* w*h*4 */
	double height_scale; /* render_set_height_scale(), 0 = the scene's */
	int flt;             /* render_set_float(): float samples in physical units */
	long clipped;        /* render_height_clipped() */
	/* TP_YUV420 output (colour mode): two RGB rows per thread, or (with boxes, drawn
	 * over whole frames) a full RGB frame; made at the first such frame */
	uint8_t *rgb_rows;
	int rgb_threads;
	tp_image rgb;
	/* still water (render_color_flat) as RGB and as 4:2:0, made at the first frame with
	 * spans that wants each, for surfaces of height unit flat_scale */
	tp_image flat_rgb, flat_yuv;
	float flat_scale;
	int flat_rgb_wanted; /* an RGB output asked for it: kept beside the 4:2:0 one */
	/* The CPU features (util/cpu.h), read once at render_create, and the kernels they
	 * choose: no frame reads anything process-wide. */
	unsigned cpu_flags;
	refract_dsp refract;
	tp_yuv420_rows_fn yuv_rows;
	render_checks checks; /* the test switches, also read once */
};

static atomic_int aa_force, aa_flat = 1, aa_highlight = 1, aa_window = 1;

void render_set_antialias(int n)
{
	atomic_store(&aa_force, n < 0 ? 0 : n > RENDER_AA_MAX_FORCE ? RENDER_AA_MAX_FORCE : n);
}

void render_set_antialias_flat(int on)
{
	atomic_store(&aa_flat, on);
}

void render_set_antialias_highlight(int on)
{
	atomic_store(&aa_highlight, on);
}

void render_set_antialias_window(int on)
{
	atomic_store(&aa_window, on);
}

/* RGB background -> RGBX with one extra column and row: a copy of the first (wrap) or
 * of the last (clamp). The colour pass sees the background through the water's tint, so
 * the tint is applied here, once per render: b' = (b * keep + tint_q + 128) >> 8 with
 * keep = 256 (1 - tint_strength) and tint_q = 256 * 255 * tint * tint_strength. */
static void pad_background(const tp_image *bg, int wrap, const scene_render *rs, uint8_t *dst)
{
	const int w = bg->w, h = bg->h;
	const size_t ds = (size_t)(w + 1) * 4;
	const double ts = rs->tint_strength;
	const int keep = (int)lround((1.0 - ts) * 256.0);
	int tint_q[3];
	for (int k = 0; k < 3; k++)
		tint_q[k] = (int)lround(rs->tint[k] * 255.0 * ts * 256.0);
	uint8_t lut[3][256];
	for (int k = 0; k < 3; k++)
		for (int v = 0; v < 256; v++) {
			int t = (v * keep + tint_q[k] + 128) >> 8;
			lut[k][v] = (uint8_t)(t < 0 ? 0 : t > 255 ? 255 : t);
		}
	for (int y = 0; y <= h; y++) {
		int sy = y < h ? y : (wrap ? 0 : h - 1);
		const uint8_t *src = tp_image_row(bg, sy);
		uint8_t *d = dst + (size_t)y * ds;
		for (int x = 0; x <= w; x++) {
			int sx = x < w ? x : (wrap ? 0 : w - 1);
			d[4 * x + 0] = lut[0][src[3 * sx + 0]];
			d[4 * x + 1] = lut[1][src[3 * sx + 1]];
			d[4 * x + 2] = lut[2][src[3 * sx + 2]];
			d[4 * x + 3] = 0;
		}
	}
}

int render_create(const scene *sc, scene_mode mode, render_ctx **out, tp_err *err)
{
	*out = NULL;
	const int fluid = (scene_solver_caps(sc) & TP_SOLVER_PARTICLES) != 0;
	const render_mode *d = render_mode_get(mode);
	const int lacks = render_mode_lacks(mode, scene_solver_caps(sc), &sc->ambient);
	char msg[160];
	if (lacks > 0) {
		render_mode_refusal(mode, sc, msg, sizeof msg);
		return scene_errf(sc, err, TP_EINPUT, NULL, "%s", msg);
	}
	if (lacks < 0) { /* no kernel draws this solver's surface */
		/* Point at the member that asked for it: an output's mode, or render.mode. */
		char at[48] = "render.mode";
		for (int i = 0; i < sc->noutputs; i++)
			if (sc->outputs[i].mode == mode) {
				snprintf(at, sizeof at, "outputs[%d].mode", i);
				break;
			}
		/* Neither: the mode came from the command line (-o MODE=OUT). */
		int scene_asked = mode == sc->render.mode || strcmp(at, "render.mode");
		render_mode_refusal(mode, sc, msg, sizeof msg);
		return scene_errf(sc, err, TP_EINPUT, scene_asked ? at : NULL, "%s", msg);
	}
	render_ctx *r = calloc(1, sizeof *r);
	if (!r)
		return tp_errf(err, TP_EIO, "out of memory");
	r->sc = sc;
	r->mode = mode;
	r->cpu_flags = tp_cpu_flags();
	refract_dsp_init(&r->refract, r->cpu_flags);
	r->yuv_rows = tp_yuv420_rows_for(r->cpu_flags);
	r->checks = (render_checks){.aa_force = atomic_load(&aa_force),
				    .aa_flat = atomic_load(&aa_flat),
				    .aa_highlight = atomic_load(&aa_highlight),
				    .aa_window = atomic_load(&aa_window)};
	r->w = sc->width;
	r->h = sc->height;
	size_t n = (size_t)r->w * (size_t)r->h;
	/* Only what this mode reads: the colour pass works from the solver's samples (and
	 * its stack), the texture maps from the converted height buffers. */
	int color = d->reads == RENDER_READS_SAMPLES && !fluid;
	int maps = !fluid && !color;
	r->height = maps ? malloc(n * sizeof *r->height) : NULL;
	r->scratch = malloc(n * 4 * sizeof *r->scratch);
	r->hpad = maps ? malloc((size_t)(r->w + 2) * (size_t)(r->h + 2) * sizeof *r->hpad) : NULL;
	r->bgx = color ? tp_alloc_zeroed((size_t)(r->w + 1) * (size_t)(r->h + 1) * 4) : NULL;
	if ((maps && (!r->height || !r->hpad)) || !r->scratch || (color && !r->bgx)) {
		render_destroy(r);
		return tp_errf(err, TP_EIO, "out of memory for a %dx%d renderer", sc->width,
			       sc->height);
	}
	int rc = render_background(sc, r->w, r->h, r->cpu_flags, &r->bg, err);
	if (rc < 0) {
		render_destroy(r);
		return rc;
	}
	if (color)
		pad_background(&r->bg, sc->boundary == SCENE_BOUNDARY_WRAP, &sc->render, r->bgx);
	/* anti-aliasing skips pixels whose lookups all land on one colour (without wrap,
	 * where lookups are clamped, not wrapped); without the map it supersamples them */
	if (color && sc->render.antialias && sc->boundary != SCENE_BOUNDARY_WRAP &&
	    (r->bgflat = malloc((size_t)r->w * (size_t)r->h)) &&
	    render_aa_flat_map(r->bgx, r->w, r->h, r->bgflat) < (size_t)r->w * (size_t)r->h / 100) {
		/* a background with (almost) no flat patch (the pebbles' shading): the check
		 * would cost about a tenth of a render (pond at 1080p) and skip nothing */
		free(r->bgflat);
		r->bgflat = NULL;
	}
	/* anti-aliasing by the footprint reads the background's summed-area table, built
	 * here once (footprint.c) */
	if (color && sc->render.antialias == SCENE_AA_FOOTPRINT &&
	    !(r->bgsat = render_aa_sat(r->bgx, r->w, r->h, sc->boundary == SCENE_BOUNDARY_WRAP,
				       &r->bgsat_stride))) {
		render_destroy(r);
		return tp_errf(err, TP_EIO, "out of memory for a %dx%d renderer", sc->width,
			       sc->height);
	}
	*out = r;
	return 0;
}

void render_destroy(render_ctx *r)
{
	if (!r)
		return;
	tp_image_free(&r->bg);
	tp_image_free(&r->rgb);
	tp_image_free(&r->flat_rgb);
	tp_image_free(&r->flat_yuv);
	free(r->rgb_rows);
	free(r->bgx);
	free(r->bgflat);
	free(r->bgsat);
	free(r->hpad);
	free(r->height);
	free(r->scratch);
	free(r);
}

void render_set_float(render_ctx *r, int on)
{
	r->flt = on && render_mode_get(r->mode)->has_float;
}

tp_pixfmt render_format(const render_ctx *r)
{
	return render_mode_format(r->sc, r->mode, r->flt);
}

/* Integer or float samples to float height units, once per frame, into the padded
 * buffer (ghost cells copy the edge, or the opposite edge with wrap) and, when a mode
 * needs it, the plain w*h buffer. */
static void to_height(const tp_surface *s, float *pad, float *plain)
{
	const int w = s->w, h = s->h;
	const ptrdiff_t ps = w + 2;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		float *d = pad + (y + 1) * ps + 1;
		if (s->type == TP_SAMPLE_I32) {
			const int32_t *src = (const int32_t *)s->data + (ptrdiff_t)y * s->stride;
			for (int x = 0; x < w; x++)
				d[x] = (float)src[x] * s->scale;
		} else {
			const float *src = (const float *)s->data + (ptrdiff_t)y * s->stride;
			for (int x = 0; x < w; x++)
				d[x] = src[x] * s->scale;
		}
		d[-1] = s->wrap ? d[w - 1] : d[0];
		d[w] = s->wrap ? d[0] : d[w - 1];
		if (plain)
			memcpy(plain + (size_t)y * w, d, (size_t)w * sizeof *d);
	}
	memcpy(pad, pad + (s->wrap ? h : 1) * ps, (size_t)ps * sizeof *pad);
	memcpy(pad + (h + 1) * ps, pad + (s->wrap ? 1 : h) * ps, (size_t)ps * sizeof *pad);
}

/* The surface the normal and caustics maps see: the heights smoothed by the 3x3
 * binomial [1 2 1]^T [1 2 1] / 16, from the padded buffer, as the colour pass does (see
 * refract.c: it removes the grid's odd-even mode and keeps waves of a few cells). */
static void smooth_binomial(const float *pad, int w, int h, float *plain)
{
	const ptrdiff_t ps = w + 2;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		const float *u = pad + y * ps + 1, *m = u + ps, *d = m + ps;
		float *o = plain + (size_t)y * w;
		for (int x = 0; x < w; x++) {
			float a = u[x - 1] + 2.0f * u[x] + u[x + 1];
			float b = m[x - 1] + 2.0f * m[x] + m[x + 1];
			float c = d[x - 1] + 2.0f * d[x] + d[x + 1];
			o[x] = (a + 2.0f * b + c) * 0.0625f;
		}
	}
}

long render_height_clipped(const render_ctx *r)
{
	return r->clipped;
}

void render_set_height_scale(render_ctx *r, double levels)
{
	r->height_scale = levels;
}

double render_surface_absmax(const tp_surface *s)
{
	if (s->kind != TP_SURFACE_HEIGHT)
		return 0;
	float m = 0; /* the float heights to_height() computes; max is exact in any order */
#pragma omp parallel for schedule(static) reduction(max : m)
	for (int y = 0; y < s->h; y++) {
		if (s->type == TP_SAMPLE_I32) {
			const int32_t *src = (const int32_t *)s->data + (ptrdiff_t)y * s->stride;
			for (int x = 0; x < s->w; x++)
				m = fmaxf(m, fabsf((float)src[x] * s->scale));
		} else {
			const float *src = (const float *)s->data + (ptrdiff_t)y * s->stride;
			for (int x = 0; x < s->w; x++)
				m = fmaxf(m, fabsf(src[x] * s->scale));
		}
	}
	return m;
}

/* A whole RGB frame into the 4:2:0 frame `out` of the same size. */
static void rgb_to_yuv(tp_yuv420_rows_fn rows, const tp_image *rgb, tp_image *out)
{
	ptrdiff_t ls[3];
	uint8_t *pl[3];
	for (int k = 0; k < 3; k++)
		pl[k] = tp_image_plane(out, k, &ls[k]);
#pragma omp parallel for schedule(static)
	for (int j = 0; j < rgb->h / 2; j++)
		tp_rgb_to_yuv420_pair(rows, rgb, j, pl, ls);
}

/* The colour picture as 4:2:0 for the MP4 encoder: each pair of rows converted while in
 * cache; with boxes (drawn over a whole frame) the frame is drawn first, then converted.
 * Either way the bytes are r->yuv_rows' of the RGB picture. */
static int frame_yuv(render_ctx *r, const render_in *in, const tp_surface *s, tp_image *out)
{
	if (!render_yuv(r) || out->w != r->w || out->h != r->h)
		return TP_EIO;
	const size_t row = ((size_t)r->w * 3 + 63) & ~(size_t)63;
	if (s->nboxes > 0) {
		if (!r->rgb.pixels && tp_image_alloc(&r->rgb, r->w, r->h, TP_RGB8) < 0)
			return TP_EIO;
		render_color(in, &r->rgb);
		render_boxes(in, &r->rgb);
		rgb_to_yuv(r->yuv_rows, &r->rgb, out);
		return 0;
	}
	const int nt = omp_get_max_threads();
	if (nt > r->rgb_threads) {
		void *p = NULL;
		if (posix_memalign(&p, 64, (size_t)nt * 2 * row) != 0)
			return TP_EIO;
		free(r->rgb_rows);
		r->rgb_rows = p;
		r->rgb_threads = nt;
	}
	render_color_yuv(in, r->rgb_rows, out);
	return 0;
}

/* The picture of still water in `fmt` for this surface, or NULL (out of memory: then
 * every pixel is drawn). */
static const tp_image *flat_picture(render_ctx *r, const render_in *in, tp_pixfmt fmt)
{
	if (r->flat_scale != in->surf->scale) { /* another solver unit: made again */
		tp_image_free(&r->flat_rgb);
		tp_image_free(&r->flat_yuv);
		r->flat_scale = in->surf->scale;
	}
	if ((fmt == TP_RGB8 || !r->flat_yuv.pixels) && !r->flat_rgb.pixels) {
		if (tp_image_alloc(&r->flat_rgb, r->w, r->h, TP_RGB8) < 0)
			return NULL;
		if (render_color_flat(in, &r->flat_rgb) < 0) {
			tp_image_free(&r->flat_rgb);
			return NULL;
		}
	}
	if (fmt == TP_RGB8) {
		r->flat_rgb_wanted = 1;
		return &r->flat_rgb;
	}
	if (!r->flat_yuv.pixels) {
		if (tp_image_alloc(&r->flat_yuv, r->w, r->h, TP_YUV420) < 0)
			return NULL;
		rgb_to_yuv(r->yuv_rows, &r->flat_rgb, &r->flat_yuv);
		if (!r->flat_rgb_wanted) /* only the 4:2:0 picture is read */
			tp_image_free(&r->flat_rgb);
	}
	return &r->flat_yuv;
}

int render_yuv(const render_ctx *r)
{
	const int fluid = (scene_solver_caps(r->sc) & TP_SOLVER_PARTICLES) != 0;
	return render_mode_get(r->mode)->reads == RENDER_READS_SAMPLES && !fluid &&
	       !((r->w | r->h) & 1);
}

int render_frame(render_ctx *r, const tp_surface *s, tp_image *out)
{
	return render_frame_side(r, s, out, NULL, NULL);
}

int render_frame_side(render_ctx *r, const tp_surface *s, tp_image *out, void (*side)(void *),
		      void *side_arg)
{
	render_in in = {
		.sc = r->sc,
		.surf = s,
		.w = r->w,
		.h = r->h,
		.wrap = s->wrap,
		.bg = &r->bg,
		.scratch = r->scratch,
		.bgx = r->bgx,
		.bgflat = r->bgflat,
		.bgsat = r->bgsat,
		.bgsat_stride = r->bgsat_stride,
		.mode = r->mode,
		.px = scene_scale(r->sc),
		.height_scale = r->height_scale,
		.refract = &r->refract,
		.yuv_rows = r->yuv_rows,
		.checks = r->checks,
	};
	const render_mode *d = render_mode_get(r->mode);
	const int samples = d->reads == RENDER_READS_SAMPLES;
	/* Only the colour pass of a height field runs the side job among its rows; every
	 * other picture does it first. */
	if (side && samples && s->kind == TP_SURFACE_HEIGHT &&
	    out->fmt == TP_RGB8) {
		in.side = side;
		in.side_arg = side_arg;
	} else if (side) {
		side(side_arg);
	}
	/* The colour pass reads the solver's samples directly; the texture maps read them
	 * converted to float height units. */
	if (s->kind == TP_SURFACE_HEIGHT && !samples) {
		to_height(s, r->hpad, r->height);
		/* height maps keep the solver's own data; the slope maps see the smoothed
		 * surface */
		if (d->reads == RENDER_READS_SLOPES)
			smooth_binomial(r->hpad, r->w, r->h, r->height);
		in.hpad = r->hpad;
		in.height = r->height;
	}
	if (s->kind == TP_SURFACE_FLUID) {
		d->draw_fluid(&in, out); /* colour or particle view, with tank and obstacles */
		return 0;
	}
	/* Calm water: the solver says which samples can be nonzero; pixels that see only
	 * level water are copied from its picture. Boxes are drawn over frames: none then. */
	if (s->spans && samples && s->nboxes == 0 && !s->wrap &&
	    (out->fmt == TP_RGB8 || out->fmt == TP_YUV420))
		in.flat = flat_picture(r, &in, out->fmt);
	if (out->fmt == TP_YUV420)
		return frame_yuv(r, &in, s, out);
	r->clipped = d->draw_height(&in, out);
	return 0;
}
