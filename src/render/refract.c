/*
 * refract.c - the "color" mode: the background seen through the moving surface.
 *
 * Seeds 000/001: each pixel shows the background displaced by the local slope,
 *     (sx, sy) = (x, y) + R * (h(x+1,y) - h(x-1,y), h(x,y+1) - h(x,y-1)) / 2
 * where R = REFRACT_PX * refraction (pixels of offset per height unit of slope),
 * sampled bilinearly; then seed 001's reflection term, brightness following height,
 *     c += REFLECT_LEVELS * reflection * h,
 * then the water tint, c = mix(c, tint, tint_strength), and a sun highlight from the
 * surface normal n = normalize(-R'*dh/dx, -R'*dh/dy, 1) (Blinn-Phong, exponent 64 by
 * repeated squaring so no libm call is involved). Everything is per pixel and clamped
 * to 0..255, so rows can be split across threads freely.
 */
#include <math.h>
#include <stdint.h>

#include "render/render_impl.h"

#define REFRACT_PX 24.0f     /* background offset in pixels per height unit of slope */
#define REFLECT_LEVELS 40.0f /* brightness levels per height unit */
#define NORMAL_GAIN 6.0f     /* slope exaggeration for the highlight normal */

static inline int wrapi(int v, int n)
{
	v %= n;
	return v < 0 ? v + n : v;
}

static inline float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

void render_color(const render_in *in, tp_image *out)
{
	const int w = in->w, hgt = in->h, wrap = in->wrap;
	const float *H = in->height;
	const scene_render *rs = &in->sc->render;
	const float R = (float)(REFRACT_PX * rs->refraction);
	const float B = (float)(REFLECT_LEVELS * rs->reflection);
	const float ts = (float)rs->tint_strength;
	const float tint[3] = { (float)rs->tint[0] * 255.0f, (float)rs->tint[1] * 255.0f,
				(float)rs->tint[2] * 255.0f };
	const float spec = (float)rs->specular * 255.0f;
	/* Half vector between the sun (up-left, high) and the viewer straight above. */
	float lx = -0.35f, ly = -0.45f, lz = 0.82f;
	float hl = sqrtf(lx * lx + ly * ly + (lz + 1) * (lz + 1));
	const float hx = lx / hl, hy = ly / hl, hz = (lz + 1) / hl;

#pragma omp parallel for schedule(static)
	for (int y = 0; y < hgt; y++) {
		int yu = y > 0 ? y - 1 : (wrap ? hgt - 1 : 0);
		int yd = y < hgt - 1 ? y + 1 : (wrap ? 0 : hgt - 1);
		const float *row = H + (size_t)y * w, *up = H + (size_t)yu * w, *dn = H + (size_t)yd * w;
		uint8_t *o = tp_image_row(out, y);
		for (int x = 0; x < w; x++) {
			int xl = x > 0 ? x - 1 : (wrap ? w - 1 : 0);
			int xr = x < w - 1 ? x + 1 : (wrap ? 0 : w - 1);
			float dx = 0.5f * (row[xr] - row[xl]);
			float dy = 0.5f * (dn[x] - up[x]);
			float sx = (float)x + R * dx, sy = (float)y + R * dy;
			int x0, y0;
			float fx, fy;
			if (wrap) {
				float flx = floorf(sx), fly = floorf(sy);
				fx = sx - flx;
				fy = sy - fly;
				x0 = wrapi((int)flx, w);
				y0 = wrapi((int)fly, hgt);
			} else {
				sx = clampf(sx, 0, (float)(w - 1));
				sy = clampf(sy, 0, (float)(hgt - 1));
				x0 = (int)sx;
				y0 = (int)sy;
				fx = sx - (float)x0;
				fy = sy - (float)y0;
			}
			int x1 = x0 + 1 < w ? x0 + 1 : (wrap ? 0 : x0);
			int y1 = y0 + 1 < hgt ? y0 + 1 : (wrap ? 0 : y0);
			const uint8_t *b0 = tp_image_row(in->bg, y0), *b1 = tp_image_row(in->bg, y1);

			/* Highlight: n.h with n = (-g*dx, -g*dy, 1)/|.|, raised to the 64th power. */
			float nx = -NORMAL_GAIN * dx, ny = -NORMAL_GAIN * dy;
			float nd = (nx * hx + ny * hy + hz) / sqrtf(nx * nx + ny * ny + 1.0f);
			float s = nd > 0 ? nd : 0;
			s *= s; s *= s; s *= s; s *= s; s *= s; s *= s;
			float lift = B * row[x] + spec * s;
			for (int k = 0; k < 3; k++) {
				float a = b0[3 * x0 + k] + (b0[3 * x1 + k] - b0[3 * x0 + k]) * fx;
				float b = b1[3 * x0 + k] + (b1[3 * x1 + k] - b1[3 * x0 + k]) * fx;
				float c = a + (b - a) * fy;
				c = c + (tint[k] - c) * ts + lift;
				o[3 * x + k] = (uint8_t)(clampf(c, 0, 255) + 0.5f);
			}
		}
	}
}
