/*
 * background.c - what lies under the water: the scene's PNG (decoded by the scene loader)
 * resampled to the output size, or a built-in pattern, so no asset is ever required.
 *
 * Patterns are pure functions of the pixel position (and a hash for per-tile variation),
 * so they are identical on every run. With boundary "wrap" the cell size is adjusted to
 * divide the frame exactly, so the background tiles too.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "render/render_impl.h"

static uint32_t hash2(int32_t x, int32_t y)
{
	uint32_t h = (uint32_t)x * 0x8da6b343u ^ (uint32_t)y * 0xd8163841u;
	h ^= h >> 13;
	h *= 0x85ebca6bu;
	h ^= h >> 16;
	return h;
}

static double mixc(double a, double b, double t)
{
	return a + (b - a) * t;
}

static uint8_t to8(double v)
{
	v = v < 0 ? 0 : v > 255 ? 255 : v;
	return (uint8_t)(v + 0.5);
}

/* The nine pebble centres around cell (ix, iy), relative to its corner, and their hashes:
 * the same for every pixel of the cell, so a row computes them once per cell. */
typedef struct pebble_cells {
	int ix, iy, valid;
	double px[9], py[9];
	uint32_t h[9];
} pebble_cells;

static void pebble_centres(pebble_cells *pc, int ix, int iy, int periodic_w, int periodic_h)
{
	if (pc->valid && pc->ix == ix && pc->iy == iy)
		return;
	for (int k = 0; k < 9; k++) {
		const int dx = k % 3 - 1, dy = k / 3 - 1;
		int nx = ix + dx, ny = iy + dy;
		int hx = periodic_w > 0 ? ((nx % periodic_w) + periodic_w) % periodic_w : nx;
		int hy = periodic_h > 0 ? ((ny % periodic_h) + periodic_h) % periodic_h : ny;
		uint32_t h = hash2(hx, hy);
		pc->h[k] = h;
		pc->px[k] = dx + 0.15 + 0.7 * (double)(h & 1023) / 1023.0;
		pc->py[k] = dy + 0.15 + 0.7 * (double)((h >> 10) & 1023) / 1023.0;
	}
	pc->ix = ix, pc->iy = iy, pc->valid = 1;
}

static void pattern_pixel(const scene_background *bg, double cx, double cy, double x, double y,
			  int periodic_w, int periodic_h, pebble_cells *pc, uint8_t *out)
{
	const uint8_t *c0 = bg->color[0], *c1 = bg->color[1];
	double t = 0, shade = 1;
	/* cell index and the position within the cell, 0 <= f < 1 */
	const double qx = x / cx, qy = y / cy, flx = floor(qx), fly = floor(qy);
	int ix = (int)flx, iy = (int)fly;
	if (periodic_w > 0)
		ix = ((ix % periodic_w) + periodic_w) % periodic_w;
	if (periodic_h > 0)
		iy = ((iy % periodic_h) + periodic_h) % periodic_h;
	double fx = qx - flx, fy = qy - fly;
	switch (bg->pattern) {
	case SCENE_PATTERN_TILES: {
		/* Glazed tiles: face colour c0 with a little per-tile variation, grout c1,
		 * and a soft bevel that darkens toward the grout. */
		double g = fmax(1.0 / 14.0, 1.0 / cx);
		double ex = fmin(fx, 1 - fx), ey = fmin(fy, 1 - fy), e = fmin(ex, ey);
		if (e < g * 0.5) {
			t = 1;
		} else {
			double bevel = fmin(1.0, (e - g * 0.5) / (g * 1.5));
			shade = (0.90 + 0.10 * bevel) *
				(0.96 + 0.08 * (double)(hash2(ix, iy) & 255) / 255.0);
		}
		break;
	}
	case SCENE_PATTERN_CHECKER: t = ((ix + iy) & 1) ? 1 : 0; break;
	case SCENE_PATTERN_PEBBLES: {
		/* Cobbles: a cellular (Worley) pattern. Each cell holds a pebble centre at a
		 * hashed position; a pixel belongs to the nearest (F1) and is sand (c1) near
		 * the border with the second nearest (F2 - F1 small). Pebbles are domed (darker
		 * toward their rim, lit from the upper left) and vary in tone. */
		double f1 = 1e9, f2 = 1e9, cx1 = 0, cy1 = 0;
		uint32_t bh = 0;
		pebble_centres(pc, ix, iy, periodic_w, periodic_h);
		for (int k = 0; k < 9; k++) {
			const double px = pc->px[k], py = pc->py[k];
			/* squared distances: the nearest two take their roots below */
			double d = (px - fx) * (px - fx) + (py - fy) * (py - fy);
			if (d < f1) {
				f2 = f1;
				f1 = d;
				bh = pc->h[k];
				cx1 = px - fx;
				cy1 = py - fy;
			} else if (d < f2) {
				f2 = d;
			}
		}
		double edge = sqrt(f2) - sqrt(f1);
		if (edge < 0.10) {
			t = 1;
			shade = 0.85 + 0.15 * edge / 0.10;
		} else {
			double tone = (double)((bh >> 20) & 255) / 255.0;
			double rim = fmin(1.0, (edge - 0.10) / 0.25);
			/* (cx1, cy1) points from the pixel to the centre: lit where it points
			 * down-right, i.e. on the upper-left flank. */
			double lit = 0.5 * (cx1 + cy1);
			t = 0.35 * tone;
			shade = (0.78 + 0.22 * rim) * (0.85 + 0.3 * tone) * (1.0 + 0.35 * lit);
		}
		break;
	}
	case SCENE_PATTERN_GRADIENT:
		t = y / (cy * periodic_h > 0 ? cy * periodic_h : cy);
		t = t < 0 ? 0 : t > 1 ? 1 : t;
		break;
	}
	for (int k = 0; k < 3; k++)
		out[k] = to8(mixc(c0[k], c1[k], t) * shade);
}

/* A row of pebbles: pattern_pixel's operations, a cell's run of pixels at a time with its
 * nine centres fixed, so the distances, the two square roots and the shading vectorise
 * across the run (selects, not branches; the same doubles). s holds 3 w doubles, ixs w. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
pebble_row(const scene_background *bg, double cx, double cy, double y, int pw, int ph, int w,
	   double *s, int *ixs, uint8_t *o)
{
	double *fxs = s, *ts = s + w, *shs = s + 2 * w;
	const double qy = y / cy, fly = floor(qy), fy = qy - fly;
	int iy = (int)fly;
	if (ph > 0)
		iy = ((iy % ph) + ph) % ph;
	for (int x = 0; x < w; x++) {
		const double qx = (x + 0.5) / cx, flx = floor(qx);
		int ix = (int)flx;
		if (pw > 0)
			ix = ((ix % pw) + pw) % pw;
		ixs[x] = ix;
		fxs[x] = qx - flx;
	}
	pebble_cells pc = {.valid = 0};
	for (int xa = 0, xb; xa < w; xa = xb) {
		for (xb = xa + 1; xb < w && ixs[xb] == ixs[xa];)
			xb++;
		pebble_centres(&pc, ixs[xa], iy, pw, ph);
		const double *px = pc.px, *py = pc.py;
		const uint32_t *hh = pc.h;
#pragma omp simd
		for (int x = xa; x < xb; x++) {
			const double fx = fxs[x];
			double f1 = 1e9, f2 = 1e9, cx1 = 0, cy1 = 0;
			uint32_t bh = 0;
			for (int k = 0; k < 9; k++) {
				const double d = (px[k] - fx) * (px[k] - fx) + (py[k] - fy) * (py[k] - fy);
				const int near = d < f1;
				const double m = d > f1 ? d : f1;
				f2 = m < f2 ? m : f2;
				f1 = near ? d : f1;
				bh = near ? hh[k] : bh;
				cx1 = near ? px[k] - fx : cx1;
				cy1 = near ? py[k] - fy : cy1;
			}
			const double edge = sqrt(f2) - sqrt(f1);
			const double tone = (double)((bh >> 20) & 255) / 255.0;
			const double r = (edge - 0.10) / 0.25, rim = r < 1.0 ? r : 1.0;
			const double lit = 0.5 * (cx1 + cy1);
			const int sand = edge < 0.10;
			ts[x] = sand ? 1 : 0.35 * tone;
			shs[x] = sand ? 0.85 + 0.15 * edge / 0.10
				      : (0.78 + 0.22 * rim) * (0.85 + 0.3 * tone) * (1.0 + 0.35 * lit);
		}
	}
	const uint8_t *c0 = bg->color[0], *c1 = bg->color[1];
	for (int x = 0; x < w; x++)
		for (int k = 0; k < 3; k++)
			o[3 * x + k] = to8(mixc(c0[k], c1[k], ts[x]) * shs[x]);
}

/* Bilinear resample of src (RGB8) to cover w x h exactly. */
static void resample(const tp_image *src, tp_image *dst)
{
	double sx = (double)src->w / dst->w, sy = (double)src->h / dst->h;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < dst->h; y++) {
		uint8_t *o = tp_image_row(dst, y);
		double fy = (y + 0.5) * sy - 0.5;
		fy = fy < 0 ? 0 : fy > src->h - 1 ? src->h - 1 : fy;
		int y0 = (int)fy, y1 = y0 + 1 < src->h ? y0 + 1 : y0;
		double ty = fy - y0;
		for (int x = 0; x < dst->w; x++) {
			double fx = (x + 0.5) * sx - 0.5;
			fx = fx < 0 ? 0 : fx > src->w - 1 ? src->w - 1 : fx;
			int x0 = (int)fx, x1 = x0 + 1 < src->w ? x0 + 1 : x0;
			double tx = fx - x0;
			const uint8_t *r0 = tp_image_row(src, y0), *r1 = tp_image_row(src, y1);
			for (int k = 0; k < 3; k++) {
				double a = mixc(r0[3 * x0 + k], r0[3 * x1 + k], tx);
				double b = mixc(r1[3 * x0 + k], r1[3 * x1 + k], tx);
				o[3 * x + k] = to8(mixc(a, b, ty));
			}
		}
	}
}

int render_background(const scene *sc, int w, int h, tp_image *out, tp_err *err)
{
	if (tp_image_alloc(out, w, h, TP_RGB8) < 0)
		return tp_errf(err, TP_EIO, "out of memory for a %dx%d background", w, h);
	const scene_background *bg = &sc->background;
	if (bg->image) {
		resample(&bg->pixels, out);
		return 0;
	}
	double cx = bg->scale, cy = bg->scale;
	int pw = 0, ph = 0;
	if (sc->boundary == SCENE_BOUNDARY_WRAP) {
		/* Whole cells across the frame, so the pattern tiles with the water. */
		pw = (int)lround(w / cx);
		ph = (int)lround(h / cy);
		pw = pw < 1 ? 1 : pw;
		ph = ph < 1 ? 1 : ph;
		cx = (double)w / pw;
		cy = (double)h / ph;
	} else if (bg->pattern == SCENE_PATTERN_GRADIENT) {
		ph = (int)ceil(h / cy);
	}
	if (bg->pattern == SCENE_PATTERN_PEBBLES && render_simd_level() > 0) {
		const size_t nt = (size_t)omp_get_max_threads();
		double *scratch = malloc(nt * 3 * (size_t)w * sizeof *scratch);
		int *ixs = malloc(nt * (size_t)w * sizeof *ixs);
		if (!scratch || !ixs) {
			free(scratch);
			free(ixs);
			tp_image_free(out);
			return tp_errf(err, TP_EIO, "out of memory for a %dx%d background", w, h);
		}
#pragma omp parallel
		{
			const int t = omp_get_thread_num();
			double *sc3 = scratch + (size_t)t * 3 * w;
#pragma omp for schedule(static)
			for (int y = 0; y < h; y++)
				pebble_row(bg, cx, cy, y + 0.5, pw, ph, w, sc3, ixs + (size_t)t * w,
					   tp_image_row(out, y));
		}
		free(scratch);
		free(ixs);
		return 0;
	}
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		uint8_t *o = tp_image_row(out, y);
		pebble_cells pc = {.valid = 0};
		for (int x = 0; x < w; x++)
			pattern_pixel(bg, cx, cy, x + 0.5, y + 0.5, pw, ph, &pc, o + 3 * x);
	}
	return 0;
}
