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
#include "util/cpu.h"

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

/* A pebbles pixel at (fx, fy) in its cell (cells cx x cy pixels), from the nine centres:
 * the nearest (F1) and second nearest (F2) centre; sand where F2 - F1 < PEBBLE_SAND, else
 * a domed stone of the nearest's tone, lit from the upper left. The border is
 * anti-aliased: the share a of the pixel on the stone side is its signed distance to
 * the border, in pixels, plus 1/2, clamped to [0, 1]: (e - PEBBLE_SAND) / |grad e| + 1/2
 * with e = F2 - F1, whose gradient is u2 - u1 (u the unit vectors from the two centres,
 * over the cell size in pixels). Both colours are made and mixed by a; a pixel inside a
 * stone or the sand (a = 1 or 0) is that colour alone. Selects, not branches: the per-pixel
 * pattern and the vectorised rows compute the same doubles. */
#define PEBBLE_SAND 0.10
static inline double pebble_mix(double c0, double c1, double t_stone, double sh_stone,
				double sh_sand, double a)
{
	const double sand = mixc(c0, c1, 1) * sh_sand, stone = mixc(c0, c1, t_stone) * sh_stone;
	return a >= 1 ? stone : a <= 0 ? sand : sand + (stone - sand) * a;
}
static inline void pebble_pixel(const double *px, const double *py, const uint32_t *hh, double fx,
				double fy, double cx, double cy, const double *c0,
				const double *c1, double *out_r, double *out_g, double *out_b)
{
	double f1 = 1e9, f2 = 1e9, x1 = 0, y1 = 0, x2 = 0, y2 = 0;
	uint32_t bh = 0;
#pragma GCC unroll 9
	for (int k = 0; k < 9; k++) {
		const double dx = px[k] - fx, dy = py[k] - fy, d = dx * dx + dy * dy;
		const int near = d < f1;
		/* the one of d and f1 that is not the nearest now, and its offset */
		const int dnot = d > f1;
		const double m = dnot ? d : f1, mx = dnot ? dx : x1, my = dnot ? dy : y1;
		const int sec = m < f2;
		f2 = sec ? m : f2;
		x2 = sec ? mx : x2;
		y2 = sec ? my : y2;
		f1 = near ? d : f1;
		bh = near ? hh[k] : bh;
		x1 = near ? dx : x1;
		y1 = near ? dy : y1;
	}
	const double r1 = sqrt(f1), r2 = sqrt(f2), edge = r2 - r1;
	/* grad e = u2 - u1 per cell, u = -(offset to the centre) / distance; per pixel / c */
	const double gx = (x1 / r1 - x2 / r2) / cx, gy = (y1 / r1 - y2 / r2) / cy;
	const double g = sqrt(gx * gx + gy * gy);
	const double lin = (edge - PEBBLE_SAND) / g + 0.5;
	/* g NaN (a pixel on a centre) or 0: the hard border */
	const int soft = g > 1e-9;
	double a = soft ? lin : (edge < PEBBLE_SAND ? 0.0 : 1.0);
	a = a < 0 ? 0 : a;
	a = a > 1 ? 1 : a;
	const double tone = (double)((bh >> 20) & 255) / 255.0;
	const double r = (edge - PEBBLE_SAND) / 0.25, rim = r < 0 ? 0 : r < 1.0 ? r : 1.0;
	const double lit = 0.5 * (x1 + y1);
	const double es = edge < PEBBLE_SAND ? edge : PEBBLE_SAND;
	const double sh_sand = 0.85 + 0.15 * es / PEBBLE_SAND;
	const double sh_stone = (0.78 + 0.22 * rim) * (0.85 + 0.3 * tone) * (1.0 + 0.35 * lit);
	const double t_stone = 0.35 * tone;
	/* (written out: a second inner loop would stop the rows' loop from vectorising) */
	*out_r = pebble_mix(c0[0], c1[0], t_stone, sh_stone, sh_sand, a);
	*out_g = pebble_mix(c0[1], c1[1], t_stone, sh_stone, sh_sand, a);
	*out_b = pebble_mix(c0[2], c1[2], t_stone, sh_stone, sh_sand, a);
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
		/* Cobbles: a cellular (Worley) pattern, each cell holding a pebble centre at a
		 * hashed position (pebble_pixel). */
		pebble_centres(pc, ix, iy, periodic_w, periodic_h);
		const double d0[3] = {c0[0], c0[1], c0[2]}, d1[3] = {c1[0], c1[1], c1[2]};
		double rgb[3];
		pebble_pixel(pc->px, pc->py, pc->h, fx, fy, cx, cy, d0, d1, &rgb[0], &rgb[1], &rgb[2]);
		for (int k = 0; k < 3; k++)
			out[k] = to8(rgb[k]);
		return;
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
 * across the run (selects, not branches; the same doubles). s holds 4 w doubles, ixs w. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
pebble_row(const scene_background *bg, double cx, double cy, double y, int pw, int ph, int w,
	   double *s, int *ixs, uint8_t *o)
{
	double *restrict fxs = s, *restrict rr = s + w, *restrict gg = s + 2 * w,
	       *restrict bb = s + 3 * w;
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
	const uint8_t *b0 = bg->color[0], *b1 = bg->color[1];
	const double c0[3] = {b0[0], b0[1], b0[2]}, c1[3] = {b1[0], b1[1], b1[2]};
	pebble_cells pc = {.valid = 0};
	for (int xa = 0, xb; xa < w; xa = xb) {
		for (xb = xa + 1; xb < w && ixs[xb] == ixs[xa];)
			xb++;
		pebble_centres(&pc, ixs[xa], iy, pw, ph);
		const double *px = pc.px, *py = pc.py;
		const uint32_t *hh = pc.h;
#pragma omp simd
		for (int x = xa; x < xb; x++)
			pebble_pixel(px, py, hh, fxs[x], fy, cx, cy, c0, c1, rr + x, gg + x, bb + x);
	}
	for (int x = 0; x < w; x++) {
		o[3 * x] = to8(rr[x]);
		o[3 * x + 1] = to8(gg[x]);
		o[3 * x + 2] = to8(bb[x]);
	}
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

int render_background(const scene *sc, int w, int h, unsigned cpu_flags, tp_image *out,
		      tp_err *err)
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
	if (bg->pattern == SCENE_PATTERN_PEBBLES && (cpu_flags & TP_CPU_FLAG_SIMD)) {
		const size_t nt = (size_t)omp_get_max_threads();
		double *scratch = malloc(nt * 4 * (size_t)w * sizeof *scratch);
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
			double *sc3 = scratch + (size_t)t * 4 * w;
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
