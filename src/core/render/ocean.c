/*
 * ocean.c - the maps of choppy waves: vector displacement and foam (render_impl.h).
 *
 * Both are per point of the undisplaced grid (the texture's UV space): a 3D app moves
 * the vertex at a texel's UV by the displacement read there, and foam read at the same
 * UV lands where that vertex goes. Axes, right-handed and Z up as in Blender: X along
 * the picture's columns (right), Y up the picture (towards row 0: image rows grow
 * downward, so Y = -(displacement down the rows)), Z up out of the water.
 *
 * displacement: float (OpenEXR) X, Y, Z in metres, no offset; 16-bit PNG RGB
 *     v = round(c * scale) + 32768 for each component c in height units (X and Y
 *     converted from pixels to scene units), scale the height map's levels per height
 *     unit, so a PNG displacement and a PNG height map of one render share one scale.
 *     Without choppiness X = Y = 0 and Z is the height.
 * foam: float 0..1; 16-bit PNG grey round(foam x 65535).
 * velocity: the horizontal velocity of the surface (airy's ambient waves), the time
 *     derivative of the displacement at choppiness 1 (in deep water the orbital velocity
 *     of linear theory at the surface): float X, Y in metres per second, B = 0; 16-bit
 *     PNG RGB v = round(c * scale) + 32768, c in scene units per second, scale as for
 *     the displacement (B = 32768).
 */
#include <math.h>
#include <stdint.h>

#include "render/render_impl.h"

#define HEIGHT_FLOAT_LEVELS 1024.0 /* as maps.c: default 16-bit levels per height unit */

static inline uint16_t level(double v, double scale)
{
	double q = floor(v * scale + 0.5) + 32768.0;
	return (uint16_t)(q < 0 ? 0 : q > 65535 ? 65535 : q);
}

void render_displacement_map(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const int w = in->w, hgt = in->h;
	const int flt = out->fmt == TP_RGBF32;
	/* float: metres per pixel across and per height unit up (1 and px without a scale) */
	const double mp = s->metres_px > 0 ? s->metres_px : 1.0 / in->px;
	const double mh = s->metres_hu > 0 ? s->metres_hu : 1.0;
	/* PNG: levels per height unit; pixels across are 1/px height units */
	const double chosen = in->height_scale > 0 ? in->height_scale : in->sc->maps.height_scale;
	const double scale = chosen > 0 ? chosen : HEIGHT_FLOAT_LEVELS;
	const double ipx = 1.0 / in->px;
	/* Z: heights at the undisplaced points (in->height is the displaced surface) */
	const float *Z = in->height;
	if (s->lag && s->type == TP_SAMPLE_F32 && s->scale == 1.0f)
		Z = s->lag;

#pragma omp parallel for schedule(static)
	for (int y = 0; y < hgt; y++) {
		uint8_t *o8 = tp_image_row(out, y);
		const float *dx = s->dx ? s->dx + (size_t)y * w : NULL;
		const float *dy = s->dy ? s->dy + (size_t)y * w : NULL;
		const float *z = Z + (size_t)y * w;
		for (int x = 0; x < w; x++) {
			const double X = dx ? dx[x] : 0, Y = dy ? -dy[x] : 0;
			if (flt) {
				float *of = (float *)(void *)o8 + 3 * x;
				of[0] = (float)(X * mp);
				of[1] = (float)(Y * mp);
				of[2] = (float)(z[x] * mh);
			} else {
				uint16_t *o = (uint16_t *)(void *)o8 + 3 * x;
				o[0] = level(X * ipx, scale);
				o[1] = level(Y * ipx, scale);
				o[2] = level(z[x], scale);
			}
		}
	}
}

void render_foam_map(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const int w = in->w, hgt = in->h;
	const int flt = out->fmt == TP_GRAYF32;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < hgt; y++) {
		uint8_t *o8 = tp_image_row(out, y);
		const float *f = s->foam ? s->foam + (size_t)y * w : NULL;
		for (int x = 0; x < w; x++) {
			const float v = f ? f[x] : 0.0f;
			if (flt)
				((float *)(void *)o8)[x] = v;
			else
				((uint16_t *)(void *)o8)[x] = (uint16_t)(v * 65535.0f + 0.5f);
		}
	}
}

void render_velocity_map(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const int w = in->w, hgt = in->h;
	const int flt = out->fmt == TP_RGBF32;
	const double mp = s->metres_px > 0 ? s->metres_px : 1.0 / in->px;
	const double chosen = in->height_scale > 0 ? in->height_scale : in->sc->maps.height_scale;
	const double scale = chosen > 0 ? chosen : HEIGHT_FLOAT_LEVELS;
	const double ipx = 1.0 / in->px;
	const float *vx = NULL, *vy = NULL;
	if (s->velocity)
		s->velocity(s->vctx, &vx, &vy);
#pragma omp parallel for schedule(static)
	for (int y = 0; y < hgt; y++) {
		uint8_t *o8 = tp_image_row(out, y);
		for (int x = 0; x < w; x++) {
			const size_t i = (size_t)y * w + x;
			/* Y up the picture: rows grow downward */
			const double X = vx ? vx[i] : 0, Y = vy ? -vy[i] : 0;
			if (flt) {
				float *of = (float *)(void *)o8 + 3 * x;
				of[0] = (float)(X * mp);
				of[1] = (float)(Y * mp);
				of[2] = 0.0f;
			} else {
				uint16_t *o = (uint16_t *)(void *)o8 + 3 * x;
				o[0] = level(X * ipx, scale);
				o[1] = level(Y * ipx, scale);
				o[2] = 32768;
			}
		}
	}
}
