/* modes.c - the render-mode descriptors (modes.h): the one list of modes. */
#include "render/modes.h"

#include <stdio.h>
#include <string.h>

#include "render/render_impl.h"
#include "scene/solverkind.h"

/* The kernels as the table calls them (render_impl.h has their equations). */
static long draw_color(const render_in *in, tp_image *out)
{
	render_color(in, out);
	if (in->surf->nboxes > 0)
		render_boxes(in, out); /* solid blocks over the water */
	return 0;
}

static long draw_height(const render_in *in, tp_image *out)
{
	return render_height_map(in, out);
}

static long draw_normal(const render_in *in, tp_image *out)
{
	render_normal_map(in, out);
	return 0;
}

static long draw_caustics(const render_in *in, tp_image *out)
{
	render_caustics(in, out);
	return 0;
}

static long draw_displacement(const render_in *in, tp_image *out)
{
	render_displacement_map(in, out);
	return 0;
}

static long draw_foam(const render_in *in, tp_image *out)
{
	render_foam_map(in, out);
	return 0;
}

static long draw_velocity(const render_in *in, tp_image *out)
{
	render_velocity_map(in, out);
	return 0;
}

/* Indexed by scene_mode (and so by tidepool.h's tp_mode). */
static const render_mode modes[SCENE_MODE_COUNT] = {
	[SCENE_MODE_COLOR] = {
		.name = "color",
		.draw_height = draw_color,
		.draw_fluid = render_fluid,
		.reads = RENDER_READS_SAMPLES,
		.fmt8 = TP_RGB8, .fmt16 = TP_RGB8,
	},
	[SCENE_MODE_HEIGHT] = {
		.name = "height",
		.draw_height = draw_height,
		.reads = RENDER_READS_HEIGHTS,
		.fmt8 = TP_GRAY16, .fmt16 = TP_GRAY16,
		.has_float = 1, .fmtf = TP_GRAYF32,
	},
	[SCENE_MODE_NORMAL] = {
		.name = "normal",
		.draw_height = draw_normal,
		.reads = RENDER_READS_SLOPES,
		.fmt8 = TP_RGB8, .fmt16 = TP_RGB16,
		.bits_at = offsetof(scene_maps, normal_bits),
		.has_float = 1, .fmtf = TP_RGBF32,
	},
	[SCENE_MODE_CAUSTICS] = {
		.name = "caustics",
		.draw_height = draw_caustics,
		.reads = RENDER_READS_SLOPES,
		.fmt8 = TP_GRAY8, .fmt16 = TP_GRAY16,
		.bits_at = offsetof(scene_maps, caustics_bits),
		.has_float = 1, .fmtf = TP_GRAYF32,
	},
	[SCENE_MODE_PARTICLES] = {
		.name = "particles",
		.draw_fluid = render_fluid,
		.fmt8 = TP_RGB8, .fmt16 = TP_RGB8,
	},
	[SCENE_MODE_DISPLACEMENT] = {
		.name = "displacement",
		.draw_height = draw_displacement,
		.reads = RENDER_READS_HEIGHTS,
		.fmt8 = TP_RGB16, .fmt16 = TP_RGB16,
		.has_float = 1, .fmtf = TP_RGBF32,
	},
	[SCENE_MODE_FOAM] = {
		.name = "foam",
		.draw_height = draw_foam,
		.reads = RENDER_READS_HEIGHTS,
		.needs = RENDER_NEEDS_CHOPPY,
		.why = "comes from the folds of choppy ambient waves",
		.fmt8 = TP_GRAY16, .fmt16 = TP_GRAY16,
		.has_float = 1, .fmtf = TP_GRAYF32,
	},
	[SCENE_MODE_VELOCITY] = {
		.name = "velocity",
		.draw_height = draw_velocity,
		.reads = RENDER_READS_HEIGHTS,
		.needs = RENDER_NEEDS_AMBIENT,
		.why = "is the horizontal velocity of ambient waves",
		.fmt8 = TP_RGB16, .fmt16 = TP_RGB16,
		.has_float = 1, .fmtf = TP_RGBF32,
	},
};

/* bits_at 0 means "fixed": no depth the scene chooses may sit at offset 0. */
_Static_assert(offsetof(scene_maps, normal_bits) > 0 && offsetof(scene_maps, caustics_bits) > 0,
	       "a depth at offset 0 of scene_maps");

/* What each need asks of the scene, in the renderer's words and in the loader's. */
static const struct {
	unsigned need;
	const char *what, *render_give, *load_give;
} needs[] = {
	{RENDER_NEEDS_CHOPPY, "choppy ambient waves", "an \"ambient\" with \"choppiness\" above 0",
	 "an \"ambient\" with \"choppiness\" above 0"},
	{RENDER_NEEDS_AMBIENT, "ambient waves", "an \"ambient\" member", "an \"ambient\""},
};

const render_mode *render_mode_get(scene_mode m)
{
	return &modes[m];
}

int render_mode_from_name(const char *name)
{
	for (int m = 0; name && m < SCENE_MODE_COUNT; m++)
		if (!strcmp(name, modes[m].name))
			return m;
	return -1;
}

void render_mode_names(const char *names[SCENE_MODE_COUNT + 1])
{
	for (int m = 0; m < SCENE_MODE_COUNT; m++)
		names[m] = modes[m].name;
	names[SCENE_MODE_COUNT] = NULL;
}

int render_mode_lacks(scene_mode m, unsigned caps, const scene_ambient *amb)
{
	const render_mode *d = &modes[m];
	const int drawn = (caps & TP_SOLVER_PARTICLES) ? d->draw_fluid != NULL : d->draw_height != NULL;
	if (!drawn)
		return -1;
	const int waves = amb->on && (caps & TP_SOLVER_AMBIENT);
	unsigned has = (waves ? RENDER_NEEDS_AMBIENT : 0u) |
		       (waves && amb->choppiness > 0 ? RENDER_NEEDS_CHOPPY : 0u);
	return (int)(d->needs & ~has);
}

/* The first need in `lacks`. */
static int first_need(int lacks)
{
	int k = 0;
	while (k < (int)(sizeof needs / sizeof needs[0]) - 1 && !(needs[k].need & (unsigned)lacks))
		k++;
	return k;
}

void render_mode_refusal(scene_mode m, const scene *sc, char *buf, size_t n)
{
	int lacks = render_mode_lacks(m, scene_solver_caps(sc), &sc->ambient);
	if (lacks < 0) {
		snprintf(buf, n, "render mode \"%s\" is not available for the %s solver",
			 modes[m].name, scene_solver_name(sc));
		return;
	}
	int k = first_need(lacks);
	snprintf(buf, n, "render mode \"%s\" needs %s: the airy solver and %s", modes[m].name,
		 needs[k].what, needs[k].render_give);
}

void render_mode_needs_text(scene_mode m, int lacks, char *buf, size_t n)
{
	int k = first_need(lacks);
	snprintf(buf, n, "%s %s: give the scene %s (airy; got \"%s\")", modes[m].name, modes[m].why,
		 needs[k].load_give, modes[m].name);
}

int render_mode_bits(const scene *sc, scene_mode m)
{
	const render_mode *d = &modes[m];
	if (d->bits_at)
		return *(const int *)((const char *)&sc->maps + d->bits_at);
	return tp_pixfmt_bytes(d->fmt8) / tp_pixfmt_channels(d->fmt8) * 8;
}

tp_pixfmt render_mode_format(const scene *sc, scene_mode m, int flt)
{
	const render_mode *d = &modes[m];
	if (flt && d->has_float)
		return d->fmtf;
	return render_mode_bits(sc, m) == 16 ? d->fmt16 : d->fmt8;
}
