/*
 * boxes.c - the scene's boxes over the coloured water: a solid, lit block per box and,
 * when the scene asks for shadows, the soft shadow it casts on the water.
 *
 * Geometry (the solvers' convention, see solvers/shallow.c): a box is size[0] x size[1]
 * pixels and `height` height units tall, drawn one scene unit per height unit (in->px
 * pixels; the bevel and the penumbra scale likewise). Its pose gives
 * the centre, the angle a (degrees, counter-clockwise on screen, y down), the bottom z
 * relative to the rest level and the tilts: box coordinates (u, v, w), w up from the
 * bottom, map to the world by
 *     (u, v, w) -> Rx(tilt0) Ry(tilt1) (u, v, w),   then   dx = u c + v s, dy = v c - u s,
 * with c = cos a, s = sin a; to first order the bottom is at z + v sin tilt0 - u sin tilt1.
 * The camera looks straight down, as the refraction does, so a level box shows its top
 * face only; a tilted one also shows the sides that face up.
 *
 * Light: the same sun as refract.c (up-left, high). Faces are Lambert-shaded with a bevel
 * along the top face's edges, anti-aliased by the distance to their edges; the shadow is
 * the convex hull of the box corners above the water projected along the sun onto the
 * water plane, with a penumbra that widens with height.
 *
 * Works for every height-field solver (hooke and ripple report level boxes at z = 0).
 * Uses in->scratch (w*h floats) for the shadow coverage; never allocates.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "render/render_impl.h"

/* Direction towards the sun, as in refract.c (normalised below). */
static const double SUN[3] = { -0.35, -0.45, 0.82 };
#define AMBIENT 0.42
#define DIFFUSE 0.62
#define SHADOW_DARK 0.38  /* fraction of the light a full shadow takes away */
#define BEVEL_PX 2.5      /* width of the rounded top edge */

/* A few pale, paint-like colours (linear 0..1), one per box in turn. */
static const double PALETTE[4][3] = {
	{ 0.86, 0.70, 0.50 }, /* pine */
	{ 0.80, 0.46, 0.36 }, /* terracotta */
	{ 0.62, 0.68, 0.74 }, /* slate */
	{ 0.88, 0.84, 0.72 }, /* sand */
};

typedef struct vec3 {
	double x, y, z;
} vec3;

typedef struct frame3 { /* a box's axes in the world, and its bottom centre */
	vec3 eu, ev, ew;
	vec3 o;
} frame3;

static vec3 v3(double x, double y, double z) { return (vec3){ x, y, z }; }

static vec3 at(const frame3 *f, double u, double v, double w)
{
	return v3(f->o.x + u * f->eu.x + v * f->ev.x + w * f->ew.x,
		  f->o.y + u * f->eu.y + v * f->ev.y + w * f->ew.y,
		  f->o.z + u * f->eu.z + v * f->ev.z + w * f->ew.z);
}

static double dot3(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static void box_frame(const tp_box_pose *p, double px, frame3 *f)
{
	const double a = p->angle * (3.14159265358979323846 / 180.0);
	const double c = cos(a), s = sin(a);
	const double c0 = cos(p->tilt[0]), s0 = sin(p->tilt[0]);
	const double c1 = cos(p->tilt[1]), s1 = sin(p->tilt[1]);
	/* the box axes after Ry(tilt1) then Rx(tilt0), in level box coordinates */
	const vec3 bu = v3(c1, s1 * s0, -s1 * c0), bv = v3(0, c0, s0), bw = v3(s1, -c1 * s0, c1 * c0);
	/* yaw to the screen: dx = u c + v s, dy = v c - u s */
	f->eu = v3(bu.x * c + bu.y * s, bu.y * c - bu.x * s, bu.z);
	f->ev = v3(bv.x * c + bv.y * s, bv.y * c - bv.x * s, bv.z);
	f->ew = v3(bw.x * c + bw.y * s, bw.y * c - bw.x * s, bw.z);
	f->o = v3(p->x, p->y, p->z * px);
}

static inline double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

static inline void blend(uint8_t *px, const double rgb[3], double a)
{
	for (int k = 0; k < 3; k++) {
		double v = px[k] * (1 - a) + 255.0 * clamp01(rgb[k]) * a;
		px[k] = (uint8_t)(v + 0.5);
	}
}

/* A parallelogram on screen: P0 + s E1 + t E2, s, t in [0, 1]. */
typedef struct quad {
	double x0, y0, e1x, e1y, e2x, e2y;
	double det, l1, l2; /* signed area, distance across the E2 / E1 edges per unit s / t */
} quad;

static int make_quad(quad *q, vec3 p0, vec3 p1, vec3 p2)
{
	q->x0 = p0.x;
	q->y0 = p0.y;
	q->e1x = p1.x - p0.x;
	q->e1y = p1.y - p0.y;
	q->e2x = p2.x - p0.x;
	q->e2y = p2.y - p0.y;
	q->det = q->e1x * q->e2y - q->e1y * q->e2x;
	double n1 = hypot(q->e1x, q->e1y), n2 = hypot(q->e2x, q->e2y);
	if (!(fabs(q->det) > 0.25) || n1 < 1e-9 || n2 < 1e-9) /* seen edge-on: nothing to draw */
		return 0;
	q->l1 = fabs(q->det) / n2;
	q->l2 = fabs(q->det) / n1;
	return 1;
}

/* (s, t) of pixel centre (px, py), and the distances in pixels to the four edges. */
static void quad_coords(const quad *q, double px, double py, double *s, double *t, double d[4])
{
	double rx = px - q->x0, ry = py - q->y0;
	*s = (rx * q->e2y - ry * q->e2x) / q->det;
	*t = (q->e1x * ry - q->e1y * rx) / q->det;
	d[0] = *s * q->l1;
	d[1] = (1 - *s) * q->l1;
	d[2] = *t * q->l2;
	d[3] = (1 - *t) * q->l2;
}

static void quad_bounds(const quad *q, int w, int h, int *x0, int *x1, int *y0, int *y1)
{
	double xs[4] = { q->x0, q->x0 + q->e1x, q->x0 + q->e2x, q->x0 + q->e1x + q->e2x };
	double ys[4] = { q->y0, q->y0 + q->e1y, q->y0 + q->e2y, q->y0 + q->e1y + q->e2y };
	double lx = xs[0], hx = xs[0], ly = ys[0], hy = ys[0];
	for (int k = 1; k < 4; k++) {
		lx = fmin(lx, xs[k]);
		hx = fmax(hx, xs[k]);
		ly = fmin(ly, ys[k]);
		hy = fmax(hy, ys[k]);
	}
	*x0 = (int)fmax(0, floor(lx - 1));
	*x1 = (int)fmin(w - 1, ceil(hx + 1));
	*y0 = (int)fmax(0, floor(ly - 1));
	*y1 = (int)fmin(h - 1, ceil(hy + 1));
}

static double shade(vec3 n, const vec3 *sun)
{
	double l = sqrt(dot3(n, n));
	double d = l > 0 ? dot3(n, *sun) / l : 0;
	return AMBIENT + DIFFUSE * (d > 0 ? d : 0);
}

/* A side face (flat shaded) or the top face (bevelled along its edges). `outward` holds
 * the outward screen directions of the edges s = 0, s = 1, t = 0, t = 1 (top face only). */
static void draw_face(tp_image *out, const quad *q, const double base[3], vec3 n, const vec3 *sun,
		      const vec3 *outward, double bevel_px)
{
	int x0, x1, y0, y1;
	quad_bounds(q, out->w, out->h, &x0, &x1, &y0, &y1);
	double flat = shade(n, sun);
	for (int y = y0; y <= y1; y++) {
		uint8_t *row = tp_image_row(out, y);
		for (int x = x0; x <= x1; x++) {
			double s, t, d[4];
			quad_coords(q, x + 0.5, y + 0.5, &s, &t, d);
			double dmin = fmin(fmin(d[0], d[1]), fmin(d[2], d[3]));
			double cov = clamp01(dmin + 0.5);
			if (cov <= 0)
				continue;
			double k = flat;
			if (outward) {
				/* bevel: the normal leans towards the nearest edge as it is approached */
				int e = 0;
				for (int i = 1; i < 4; i++)
					e = d[i] < d[e] ? i : e;
				double b = clamp01(1 - d[e] / bevel_px);
				vec3 nb = v3(n.x + 0.9 * b * outward[e].x, n.y + 0.9 * b * outward[e].y, n.z);
				k = shade(nb, sun);
			}
			double rgb[3] = { base[0] * k, base[1] * k, base[2] * k };
			blend(row + 3 * x, rgb, cov);
		}
	}
}

/* Convex hull (Andrew's monotone chain) of n <= 8 points, counter-clockwise in a y-up
 * sense; returns the vertex count. */
static int hull(double (*p)[2], int n, double (*hl)[2])
{
	for (int i = 1; i < n; i++) /* insertion sort by x, then y */
		for (int j = i; j > 0 && (p[j][0] < p[j - 1][0] ||
					  (p[j][0] == p[j - 1][0] && p[j][1] < p[j - 1][1])); j--) {
			double tx = p[j][0], ty = p[j][1];
			p[j][0] = p[j - 1][0];
			p[j][1] = p[j - 1][1];
			p[j - 1][0] = tx;
			p[j - 1][1] = ty;
		}
	int k = 0;
	for (int pass = 0; pass < 2; pass++) {
		int start = k;
		for (int ii = 0; ii < n; ii++) {
			int i = pass ? n - 1 - ii : ii;
			while (k >= start + 2) {
				double ax = hl[k - 1][0] - hl[k - 2][0], ay = hl[k - 1][1] - hl[k - 2][1];
				double bx = p[i][0] - hl[k - 2][0], by = p[i][1] - hl[k - 2][1];
				if (ax * by - ay * bx > 1e-12)
					break;
				k--;
			}
			hl[k][0] = p[i][0];
			hl[k][1] = p[i][1];
			k++;
		}
		k--; /* the last point is the first of the other chain */
	}
	return k;
}

/* A box's shadow on the water plane: the convex hull of its corners above the water,
 * projected along the sun, with a penumbra width and pixel bounds. */
typedef struct shadow {
	double hl[18][2];
	int m;
	double soft;
	int x0, x1, y0, y1;
} shadow;

static int shadow_shape(const render_in *in, const frame3 *f, const scene_box *sb, const vec3 *sun,
			shadow *sh)
{
	const double hw = 0.5 * sb->size[0], hh = 0.5 * sb->size[1], H = sb->height * in->px;
	double pts[8][2], top = -1e30;
	for (int c = 0; c < 8; c++) {
		double u = (c & 1) ? hw : -hw, v = (c & 2) ? hh : -hh;
		vec3 p = at(f, u, v, (c & 4) ? H : 0);
		if (p.z < 0) { /* under water: use where its vertical edge meets the water */
			vec3 q = at(f, u, v, H);
			double k = q.z - p.z > 1e-9 ? -p.z / (q.z - p.z) : 0;
			k = k > 1 ? 1 : k;
			p = v3(p.x + k * (q.x - p.x), p.y + k * (q.y - p.y), p.z + k * (q.z - p.z));
		}
		double z = p.z > 0 ? p.z : 0;
		top = fmax(top, z);
		pts[c][0] = p.x - z * sun->x / sun->z;
		pts[c][1] = p.y - z * sun->y / sun->z;
	}
	if (!(top > 0.05)) /* nothing above the water */
		return 0;
	sh->m = hull(pts, 8, sh->hl);
	if (sh->m < 3)
		return 0;
	sh->soft = 1.5 * in->px + 0.06 * top; /* the penumbra widens with height */
	double lx = sh->hl[0][0], hx = lx, ly = sh->hl[0][1], hy = ly;
	for (int i = 1; i < sh->m; i++) {
		lx = fmin(lx, sh->hl[i][0]);
		hx = fmax(hx, sh->hl[i][0]);
		ly = fmin(ly, sh->hl[i][1]);
		hy = fmax(hy, sh->hl[i][1]);
	}
	sh->x0 = (int)fmax(0, floor(lx - sh->soft - 1));
	sh->x1 = (int)fmin(in->w - 1, ceil(hx + sh->soft + 1));
	sh->y0 = (int)fmax(0, floor(ly - sh->soft - 1));
	sh->y1 = (int)fmin(in->h - 1, ceil(hy + sh->soft + 1));
	return sh->x0 <= sh->x1 && sh->y0 <= sh->y1;
}

/* Coverage of pixel (x, y): the signed distance inside the hull over the penumbra. */
static float shadow_cov(const shadow *sh, int x, int y)
{
	double px = x + 0.5, py = y + 0.5, dmin = 1e30;
	for (int i = 0; i < sh->m; i++) {
		const double *a = sh->hl[i], *b = sh->hl[(i + 1) % sh->m];
		double ex = b[0] - a[0], ey = b[1] - a[1], l = hypot(ex, ey);
		if (l > 1e-9)
			dmin = fmin(dmin, (ex * (py - a[1]) - ey * (px - a[0])) / l);
	}
	return (float)clamp01(0.5 + dmin / sh->soft);
}

/* One box at a screen offset (for wrap, the copies one period away). */
static void draw_box(const render_in *in, tp_image *out, int i, double ox, double oy,
		     const vec3 *sun)
{
	const scene_box *sb = &in->sc->boxes[i];
	tp_box_pose p = in->surf->boxes[i];
	if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.angle) || !isfinite(p.z) ||
	    !isfinite(p.tilt[0]) || !isfinite(p.tilt[1]))
		return;
	p.x += ox;
	p.y += oy;
	frame3 f;
	box_frame(&p, in->px, &f);
	const double hw = 0.5 * sb->size[0], hh = 0.5 * sb->size[1], H = sb->height * in->px;
	const double *base = PALETTE[i % 4];
	/* the waterline on the box (box w where the world height is 0), for the sides */
	double wl = f.ew.z > 1e-6 ? -f.o.z / f.ew.z : 0;
	wl = wl < 0 ? 0 : wl > H ? H : wl;
	/* sides facing up: +u, -u, +v, -v */
	for (int sd = 0; sd < 4; sd++) {
		vec3 n = sd < 2 ? f.eu : f.ev;
		double sg = (sd & 1) ? -1 : 1;
		n = v3(sg * n.x, sg * n.y, sg * n.z);
		if (!(n.z > 0.02))
			continue;
		quad q;
		vec3 a, b, c;
		if (sd < 2) {
			a = at(&f, sg * hw, -hh, wl);
			b = at(&f, sg * hw, hh, wl);
			c = at(&f, sg * hw, -hh, H);
		} else {
			a = at(&f, -hw, sg * hh, wl);
			b = at(&f, hw, sg * hh, wl);
			c = at(&f, -hw, sg * hh, H);
		}
		if (make_quad(&q, a, b, c)) {
			double dark[3] = { base[0] * 0.85, base[1] * 0.85, base[2] * 0.85 };
			draw_face(out, &q, dark, n, sun, NULL, 0);
		}
	}
	/* the top face: s along u, t along v */
	quad q;
	if (make_quad(&q, at(&f, -hw, -hh, H), at(&f, hw, -hh, H), at(&f, -hw, hh, H))) {
		vec3 outward[4] = { v3(-f.eu.x, -f.eu.y, 0), v3(f.eu.x, f.eu.y, 0),
				    v3(-f.ev.x, -f.ev.y, 0), v3(f.ev.x, f.ev.y, 0) };
		draw_face(out, &q, base, f.ew, sun, outward, BEVEL_PX * in->px);
	}
}

void render_boxes(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	if (!s || !s->boxes || s->nboxes <= 0 || !in->sc || in->sc->nboxes < s->nboxes ||
	    out->fmt != TP_RGB8)
		return;
	const int n = s->nboxes;
	double sl = sqrt(SUN[0] * SUN[0] + SUN[1] * SUN[1] + SUN[2] * SUN[2]);
	const vec3 sun = v3(SUN[0] / sl, SUN[1] / sl, SUN[2] / sl);
	/* copies of each box: itself, and with wrap those one period away */
	const int ncopy = in->wrap ? 9 : 1;
	double off[9][2];
	for (int k = 0; k < 9; k++) {
		off[k][0] = (k % 3 - 1) * (double)in->w;
		off[k][1] = (k / 3 - 1) * (double)in->h;
	}
	if (!in->wrap) {
		off[0][0] = off[0][1] = 0;
	} else { /* the unshifted copy first, so the order is the same either way */
		off[4][0] = off[0][0];
		off[4][1] = off[0][1];
		off[0][0] = off[0][1] = 0;
	}

	if (in->sc->render.shadows && in->scratch) {
		/* Coverage is the max over the boxes (one sun: overlapping shadows do not darken
		 * twice) and is applied once per pixel, which is reset to 0 as it is darkened.
		 * Three passes over the shapes: clear their bounds, rasterise, apply. */
		float *cov = in->scratch;
		for (int pass = 0; pass < 3; pass++)
			for (int i = 0; i < n; i++)
				for (int k = 0; k < ncopy; k++) {
					tp_box_pose q = s->boxes[i];
					if (!isfinite(q.x) || !isfinite(q.y) || !isfinite(q.z) ||
					    !isfinite(q.angle) || !isfinite(q.tilt[0]) || !isfinite(q.tilt[1]))
						continue;
					q.x += off[k][0];
					q.y += off[k][1];
					frame3 f;
					shadow sh;
					box_frame(&q, in->px, &f);
					if (!shadow_shape(in, &f, &in->sc->boxes[i], &sun, &sh))
						continue;
					for (int y = sh.y0; y <= sh.y1; y++) {
						float *cr = cov + (size_t)y * in->w;
						uint8_t *row = tp_image_row(out, y);
						for (int x = sh.x0; x <= sh.x1; x++) {
							if (pass == 0) {
								cr[x] = 0;
							} else if (pass == 1) {
								float c = shadow_cov(&sh, x, y);
								cr[x] = c > cr[x] ? c : cr[x];
							} else if (cr[x] > 0) {
								double keep = 1 - SHADOW_DARK * cr[x];
								for (int ch = 0; ch < 3; ch++)
									row[3 * x + ch] = (uint8_t)(row[3 * x + ch] * keep + 0.5);
								cr[x] = 0;
							}
						}
					}
				}
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < ncopy; k++)
			draw_box(in, out, i, off[k][0], off[k][1], &sun);
}
