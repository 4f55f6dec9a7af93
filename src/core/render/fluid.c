/*
 * fluid.c - the sph picture: water seen from the side in a glass tank.
 *
 * Input: a TP_SURFACE_FLUID field F (the solver's particle density splatted onto the
 * pixels, 0 = air, F = 1 on the surface, larger inside), the tank rectangle, the
 * obstacles' poses and, for the debug view, the particles.
 *
 * Water pixels, per pixel, rows in parallel (every pixel is independent):
 *   coverage   a = clamp(0.5 + (F - 1) / |grad F|, 0, 1)       (1-pixel anti-aliased edge)
 *   lens       h = min(F, FCAP) / FCAP, a smooth bump that is flat inside the water
 *   refraction the background at p - REFRACT_PX * refraction * grad h, bilinear
 *   body       mix(refracted, tint, t), t = tint_strength + (1 - tint_strength) * d / (d + DEPTH_PX)
 *              with d the water above the pixel in its column, averaged sideways
 *   highlight  Blinn-Phong with n = normalize(-NORMAL_GAIN grad h, 1), exponent 32 by repeated
 *              squaring, plus a bright rim on the top surface (where grad h points down)
 *   final      mix(background, water, a)
 * Then the tank's glass walls and the obstacles (rotated rectangles with an anti-aliased
 * edge) are drawn over it. Mode "particles" draws the particles as dots instead of water.
 */
#include <math.h>
#include <stdint.h>

#include "render/render_impl.h"
#include "util/mathf.h"
#include "util/trig.h"

/* Lengths below are in scene units and slopes per scene unit: the renderer multiplies by
 * in->px (output pixels per scene unit), so every render size shows the same picture. */
#define FCAP 2.0f        /* field value where the lens flattens out */
#define REFRACT_PX 10.0  /* background offset per unit slope of h, refraction 1 */
#define NORMAL_GAIN 5.0  /* slope exaggeration for the highlight normal */
#define RIM_GAIN 2.5     /* how fast the rim brightens with the downward slope */
#define DEPTH_PX 90.0    /* depth at which the water is half way to its full tint */
#define WALL_PX 4.0      /* thickness of the tank's glass walls */
#define DEPTH_BLUR 12.0  /* half width of the horizontal average of the depth */
#define OUTLINE_PX 2.0   /* width of an obstacle's darker outline */
#define DOT_PX 1.6       /* radius of a particle in the debug view */

/* A scene length in whole output pixels, at least 1. */
static int px_int(double len, double px)
{
	long v = lround(len * px);
	return v < 1 ? 1 : v > 4096 ? 4096 : (int)v;
}

static inline uint8_t to8(float v) { return (uint8_t)(tp_clampf(v, 0, 255) + 0.5f); }

/* Bilinear sample of the RGB8 background, clamped to the picture. */
static void sample_bg(const tp_image *bg, float sx, float sy, float c[3])
{
	sx = tp_clampf(sx, 0, (float)(bg->w - 1));
	sy = tp_clampf(sy, 0, (float)(bg->h - 1));
	int x0 = (int)sx, y0 = (int)sy;
	int x1 = x0 + 1 < bg->w ? x0 + 1 : x0, y1 = y0 + 1 < bg->h ? y0 + 1 : y0;
	float fx = sx - (float)x0, fy = sy - (float)y0;
	const uint8_t *r0 = tp_image_row(bg, y0), *r1 = tp_image_row(bg, y1);
	for (int k = 0; k < 3; k++) {
		float a = r0[3 * x0 + k] + fx * (float)(r0[3 * x1 + k] - r0[3 * x0 + k]);
		float b = r1[3 * x0 + k] + fx * (float)(r1[3 * x1 + k] - r1[3 * x0 + k]);
		c[k] = a + fy * (b - a);
	}
}

static inline float fieldv(const float *F, ptrdiff_t stride, int w, int h, int x, int y)
{
	x = x < 0 ? 0 : x >= w ? w - 1 : x;
	y = y < 0 ? 0 : y >= h ? h - 1 : y;
	return F[(ptrdiff_t)y * stride + x];
}

/* Water above each pixel in its column, in pixels (bubbles and gaps add nothing), then
 * averaged over DEPTH_BLUR pixels left and right so that columns under splashes or an
 * obstacle do not show as streaks. depth and tmp are w x h. */
static void water_depth(const float *F, ptrdiff_t stride, int w, int h, int blur, float *tmp,
			float *depth)
{
#pragma omp parallel for schedule(static)
	for (int x = 0; x < w; x++) {
		float d = 0;
		for (int y = 0; y < h; y++) {
			d += F[(ptrdiff_t)y * stride + x] >= 1.0f ? 1.0f : 0.0f;
			tmp[(size_t)y * w + x] = d;
		}
	}
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		const float *t = tmp + (size_t)y * w;
		float *o = depth + (size_t)y * w;
		for (int x = 0; x < w; x++) {
			int a = x - blur < 0 ? 0 : x - blur;
			int b = x + blur > w - 1 ? w - 1 : x + blur;
			float sum = 0;
			for (int k = a; k <= b; k++)
				sum += t[k];
			o[x] = sum / (float)(b - a + 1);
		}
	}
}

static void draw_water(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const int w = in->w, h = in->h;
	const float *F = s->data;
	const ptrdiff_t st = s->stride;
	const scene_render *rs = &in->sc->render;
	const double px = in->px;
	const float R = (float)(REFRACT_PX * rs->refraction * px * px) / FCAP;
	const float ng = (float)(NORMAL_GAIN * px), rg = (float)(RIM_GAIN * px);
	const float depth_px = (float)(DEPTH_PX * px);
	const float ts = (float)rs->tint_strength;
	const float tint[3] = { (float)rs->tint[0] * 255.0f, (float)rs->tint[1] * 255.0f,
				(float)rs->tint[2] * 255.0f };
	const float spec = (float)rs->specular * 255.0f;
	float *depth = in->scratch, *tmp = in->scratch + (size_t)w * h;
	/* Half vector between a light up and to the left of the viewer and the viewer. */
	const float lx = -0.4f, ly = -0.55f, lz = 0.73f;
	const float hl = sqrtf(lx * lx + ly * ly + (lz + 1) * (lz + 1));
	const float hx = lx / hl, hy = ly / hl, hz = (lz + 1) / hl;

	water_depth(F, st, w, h, px_int(DEPTH_BLUR, px), tmp, depth);
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		uint8_t *o = tp_image_row(out, y);
		const uint8_t *b = tp_image_row(in->bg, y);
		for (int x = 0; x < w; x++) {
			float f = F[(ptrdiff_t)y * st + x];
			float fl = fieldv(F, st, w, h, x - 1, y), fr = fieldv(F, st, w, h, x + 1, y);
			float fu = fieldv(F, st, w, h, x, y - 1), fd = fieldv(F, st, w, h, x, y + 1);
			float gx = 0.5f * (fr - fl), gy = 0.5f * (fd - fu);
			float gm = sqrtf(gx * gx + gy * gy);
			float a = tp_clampf(0.5f + (f - 1.0f) / (gm > 0.25f ? gm : 0.25f), 0, 1);
			if (a <= 0) {
				o[3 * x] = b[3 * x];
				o[3 * x + 1] = b[3 * x + 1];
				o[3 * x + 2] = b[3 * x + 2];
				continue;
			}
			/* the lens: slope of min(F, FCAP) */
			float hxs = 0.5f * (fminf(fr, FCAP) - fminf(fl, FCAP));
			float hys = 0.5f * (fminf(fd, FCAP) - fminf(fu, FCAP));
			float c[3];
			sample_bg(in->bg, (float)x - R * hxs, (float)y - R * hys, c);
			float d = depth[(size_t)y * w + x];
			float t = ts + (1.0f - ts) * d / (d + depth_px) * 0.8f;
			float nx = -ng * hxs / FCAP, ny = -ng * hys / FCAP;
			float nd = (nx * hx + ny * hy + hz) / sqrtf(nx * nx + ny * ny + 1.0f);
			float sp = nd > 0 ? nd : 0;
			sp *= sp; sp *= sp; sp *= sp; sp *= sp; sp *= sp; /* ^32 */
			/* rim: the top surface, where the field grows downwards */
			float up = hys > 0 ? hys / FCAP : 0;
			float rim = tp_clampf(rg * up, 0, 1) * 0.6f;
			for (int k = 0; k < 3; k++) {
				float v = c[k] + t * (tint[k] - c[k]);
				v += spec * sp + (255.0f - v) * rim * (float)rs->specular;
				v = (float)b[3 * x + k] + a * (v - (float)b[3 * x + k]);
				o[3 * x + k] = to8(v);
			}
		}
	}
}

/* The tank's glass: walls WALL_PX (scaled) thick around the interior, a dark line on both faces
 * and a pale pane between with a bright inner edge. */
static void draw_tank_turned(const render_in *in, tp_image *out);

static void draw_tank(const render_in *in, tp_image *out)
{
	const double *tk = in->surf->tank;
	if (in->surf->tank_angle != 0) {
		draw_tank_turned(in, out);
		return;
	}
	const int w = in->w, h = in->h, wall = px_int(WALL_PX, in->px);
	const int x0 = (int)floor(tk[0] + 0.5), y0 = (int)floor(tk[1] + 0.5);
	const int x1 = (int)floor(tk[0] + tk[2] + 0.5), y1 = (int)floor(tk[1] + tk[3] + 0.5);
#pragma omp parallel for schedule(static)
	for (int y = y0 - wall; y < y1 + wall; y++) {
		if (y < 0 || y >= h)
			continue;
		uint8_t *o = tp_image_row(out, y);
		for (int x = x0 - wall; x < x1 + wall; x++) {
			if (x < 0 || x >= w || (x >= x0 && x < x1 && y >= y0 && y < y1))
				continue;
			/* how deep into the wall, 0 (touching the water) .. wall - 1 (outside) */
			int dx = x < x0 ? x0 - 1 - x : x >= x1 ? x - x1 : -1;
			int dy = y < y0 ? y0 - 1 - y : y >= y1 ? y - y1 : -1;
			int dd = dx > dy ? dx : dy;
			const float pane[3] = { 222, 236, 242 }, line[3] = { 52, 70, 84 };
			const float *c = dd == wall - 1 || dd == 0 ? line : pane;
			float a = dd == wall - 1 ? 0.85f : dd == 0 ? 0.6f : 0.75f;
			for (int k = 0; k < 3; k++)
				o[3 * x + k] = to8((float)o[3 * x + k] + a * (c[k] - (float)o[3 * x + k]));
		}
	}
}

/* A turned tank: the same glass about the rotated interior, by signed distance to it
 * (d = 0 at the inner face, WALL_PX outside), anti-aliased over a pixel on both faces. */
static void draw_tank_turned(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const int w = in->w, h = in->h;
	const double wall = px_int(WALL_PX, in->px), hw = 0.5 * s->tank[2], hh = 0.5 * s->tank[3];
	const double cx = s->tank[0] + hw, cy = s->tank[1] + hh;
	double sn, cs;
	tp_sincos_deg(s->tank_angle, &sn, &cs);
	const double ex = fabs(cs) * hw + fabs(sn) * hh + wall + 1, ey = fabs(sn) * hw + fabs(cs) * hh + wall + 1;
	const int ya = (int)fmax(0, floor(cy - ey)), yb = (int)fmin(h - 1, ceil(cy + ey));
	const int xa = (int)fmax(0, floor(cx - ex)), xb = (int)fmin(w - 1, ceil(cx + ex));
	const float pane[3] = { 222, 236, 242 }, line[3] = { 52, 70, 84 };
#pragma omp parallel for schedule(static)
	for (int y = ya; y <= yb; y++) {
		uint8_t *o = tp_image_row(out, y);
		for (int x = xa; x <= xb; x++) {
			double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
			double u = cs * dx - sn * dy, v = sn * dx + cs * dy;
			double d = fmax(fabs(u) - hw, fabs(v) - hh); /* outside the interior by d */
			float cov = tp_clampf((float)fmin(d + 0.5, wall + 0.5 - d), 0, 1);
			if (cov <= 0)
				continue;
			int face = d < 1 || d > wall - 1;
			const float *c = face ? line : pane;
			float a = cov * (d > wall - 1 ? 0.85f : d < 1 ? 0.6f : 0.75f);
			for (int k = 0; k < 3; k++)
				o[3 * x + k] = to8((float)o[3 * x + k] + a * (c[k] - (float)o[3 * x + k]));
		}
	}
}

/* Obstacles: rotated rectangles (angle counter-clockwise on screen, y down), a solid
 * slate colour lit from the upper left, a darker outline, anti-aliased over one pixel. */
static void draw_obstacles(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const int w = in->w, h = in->h;
	for (int bi = 0; bi < s->nboxes && bi < in->sc->nboxes; bi++) {
		const tp_box_pose *p = &s->boxes[bi];
		const double ha = 0.5 * in->sc->boxes[bi].size[0], hb = 0.5 * in->sc->boxes[bi].size[1];
		if (!isfinite(p->x) || !isfinite(p->y) || !isfinite(p->angle))
			continue;
		double sn, cs;
		tp_sincos_deg(p->angle, &sn, &cs);
		const double ol = OUTLINE_PX * in->px;
		const double ex = fabs(cs) * ha + fabs(sn) * hb + ol, ey = fabs(sn) * ha + fabs(cs) * hb + ol;
		int ya = (int)floor(p->y - ey), yb = (int)ceil(p->y + ey);
		int xa = (int)floor(p->x - ex), xb = (int)ceil(p->x + ex);
		ya = ya < 0 ? 0 : ya;
		yb = yb > h - 1 ? h - 1 : yb;
		xa = xa < 0 ? 0 : xa;
		xb = xb > w - 1 ? w - 1 : xb;
#pragma omp parallel for schedule(static)
		for (int y = ya; y <= yb; y++) {
			uint8_t *o = tp_image_row(out, y);
			for (int x = xa; x <= xb; x++) {
				double dx = x + 0.5 - p->x, dy = y + 0.5 - p->y;
				double u = cs * dx - sn * dy, v = sn * dx + cs * dy;
				/* signed distance to the rectangle (negative inside) */
				double qx = fabs(u) - ha, qy = fabs(v) - hb;
				double sd = qx > qy ? qx : qy;
				float cov = tp_clampf((float)(0.5 - sd), 0, 1);
				if (cov <= 0)
					continue;
				/* light from the upper left: brighter towards -u, -v */
				float shade = 0.85f + 0.15f * (float)(-(u / (ha + 1e-9) + v / (hb + 1e-9)) * 0.5);
				float edge = sd > -ol ? 0.55f : 1.0f;
				const float base[3] = { 96, 104, 118 };
				for (int k = 0; k < 3; k++) {
					float c = base[k] * shade * edge;
					o[3 * x + k] = to8((float)o[3 * x + k] + cov * (c - (float)o[3 * x + k]));
				}
			}
		}
	}
}

/* Debug view: every particle as a small disc over the background. */
static void draw_particles(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const int w = in->w, h = in->h;
	const float rad = (float)(DOT_PX * in->px), rad2 = rad * rad;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		uint8_t *o = tp_image_row(out, y);
		const uint8_t *b = tp_image_row(in->bg, y);
		for (int x = 0; x < 3 * w; x++)
			o[x] = (uint8_t)(b[x] * 3 / 4);
		/* particles whose disc touches this row; the scan keeps rows independent */
		for (int i = 0; i < s->nparticles; i++) {
			float py = s->py[i], dy = (float)y + 0.5f - py;
			if (dy * dy >= rad2)
				continue;
			float px = s->px[i];
			int xa = (int)floorf(px - rad), xb = (int)ceilf(px + rad);
			for (int x = xa < 0 ? 0 : xa; x <= xb && x < w; x++) {
				float dx = (float)x + 0.5f - px, d2 = dx * dx + dy * dy;
				if (d2 >= rad2)
					continue;
				float cov = tp_clampf(rad - sqrtf(d2), 0, 1);
				const float c[3] = { 70, 170, 255 };
				for (int k = 0; k < 3; k++)
					o[3 * x + k] = to8((float)o[3 * x + k] + cov * (c[k] - (float)o[3 * x + k]));
			}
		}
	}
}

void render_fluid(const render_in *in, tp_image *out)
{
	if (in->mode == SCENE_MODE_PARTICLES)
		draw_particles(in, out);
	else
		draw_water(in, out);
	draw_tank(in, out);
	draw_obstacles(in, out);
}
