/*
 * render.h - turns a solver surface into a picture.
 *
 * render_create() prepares everything a mode needs (the background at output size,
 * lookup tables, scratch buffers) so that render_frame() never allocates. Modes:
 * color (the refracted background, seeds 000/001), height, normal, caustics (texture
 * maps) and particles (sph debug). The renderer knows the solver only through tp_surface.
 * render_frame() writes into a caller-owned image of render_format() and size w x h, or,
 * where render_yuv() says so, of TP_YUV420: the colour picture straight into 4:2:0 for the
 * MP4 encoder, the same bytes as tp_yuv420_rows_for()'s conversion of the RGB picture (allocates its
 * two rows per thread at the first such frame).
 */
#ifndef TP_RENDER_RENDER_H
#define TP_RENDER_RENDER_H

#include "scene/scene.h"
#include "surface.h"
#include "util/error.h"
#include "util/image.h"

typedef struct render_ctx render_ctx;

int render_create(const scene *sc, scene_mode mode, render_ctx **out, tp_err *err);
void render_destroy(render_ctx *r);
tp_pixfmt render_format(const render_ctx *r);
int render_frame(render_ctx *r, const tp_surface *s, tp_image *out);
/* render_frame, and side(side_arg) once: serial work (a frame hash) that the colour pass
 * of a height field runs on one of its threads while the others draw rows, and that every
 * other mode runs first. */
int render_frame_side(render_ctx *r, const tp_surface *s, tp_image *out, void (*side)(void *),
		      void *side_arg);
/* 1 when render_frame can write TP_YUV420: the colour mode of a height field, even size. */
int render_yuv(const render_ctx *r);

/* Height maps: levels per height unit for every frame from now on, instead of the
 * scene's maps.height.scale (used for "scale": "auto", which render levels over the whole
 * render in a first pass with render_surface_absmax). */
void render_set_height_scale(render_ctx *r, double levels);
/* Float samples in physical units instead of 8/16-bit levels (OpenEXR outputs; the
 * texture modes only): height and the displacement's Z in metres (height units for a
 * solver without a length scale), displacement X and Y in metres (X right, Y up the
 * picture), normals as unit vectors, caustics as the light level (1 = flat water), foam
 * 0..1. render_format() then says TP_GRAYF32 or TP_RGBF32. */
void render_set_float(render_ctx *r, int on);
/* Height maps: the pixels of the latest frame whose height fell outside the 16-bit range
 * and were clamped (0 for other modes). Library code does not print: the caller says it. */
long render_height_clipped(const render_ctx *r);
/* The largest |h| of a height-field surface, in height units, exactly as the maps see it
 * (0 for a fluid surface). The same whatever the thread count. */
double render_surface_absmax(const tp_surface *s);

/* The slopes the colour pass sees, in height units per pixel (w*h each, row-major):
 * central differences of the surface smoothed by the 3x3 binomial (refract.c). For tests
 * and tools; a height-field surface only. */
void render_slopes(const tp_surface *s, float *dx, float *dy);

/* Test switches of the colour pass's anti-aliasing (refract_aa.c, highlight.c). Like the
 * CPU flags (util/cpu.h) they are read once, by render_create, into the context: the
 * setters change the contexts created after them, never a frame being drawn. */
typedef struct render_checks {
	int aa_force;     /* render_set_antialias */
	int aa_flat;      /* render_set_antialias_flat */
	int aa_highlight; /* render_set_antialias_highlight */
	int aa_window;    /* render_set_antialias_window */
} render_checks;
/* n > 0 draws every pixel of a height field with n x n background lookups (at most
 * RENDER_AA_MAX_FORCE), whatever the scene's render.antialias; 0 (the default) lets the
 * scene decide, supersampling only where the refraction is steep. */
#define RENDER_AA_MAX_FORCE 16
void render_set_antialias(int n);
/* 0 supersamples every steep pixel, also where its lookups all land on one colour of the
 * background (render_aa_flat skips those: the same bytes); 1 (default). */
void render_set_antialias_flat(int on);
/* 0 leaves the highlight of steep pixels unfiltered (highlight.c), as before it was; 1
 * (default). */
void render_set_antialias_highlight(int on);
/* 0 takes every steep pixel's lookups 16 pixels at a time, also where refract_aa.c's
 * window_pixel would take one pixel's from a window held in registers (the same bytes);
 * 1 (default). */
void render_set_antialias_window(int on);
/* How many pixels window_pixel has drawn since the process started (for the tests). */
long render_aa_window_pixels(void);

#endif
