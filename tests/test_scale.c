/* Resolution independence: an example scene rendered at a preview size and at four times
 * that size shows the same water. For each solver the large render is area-averaged down
 * to the preview's size and compared with it at 1, 2 and 3 seconds:
 *  - height fields (ripple, hooke, shallow): the Pearson correlation of the heights is at
 *    least 0.8 (shallow 0.78: since its speed is the one asked for at both sizes, not up
 *    to 3% faster at the preview, its boxes near the wave speed measure 0.79-0.80 at 2 s;
 *    airy, whose ambient sea is the same waves at every size, 0.95);
 *  - sph: the water's coverage differs less between the two sizes than between the
 *    preview and itself half a second later (the control: how much the picture changes
 *    in a short time; a mismatch below it means both show the same flow at the same
 *    moment). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"
#include "solvers/solver.h"
#include "sim/stepper.h"

/* A scene stepped to given times; heights (or fluid field values) as doubles. */
typedef struct run {
	scene *sc;
	stepper *st;
	double *v; /* w * h */
	int w, h;
} run;

static void run_open(run *r, const char *path, int w, int h)
{
	tp_err err = {""};
	scene_overrides ov = {.width = w, .height = h};
	memset(r, 0, sizeof *r);
	cr_assert_eq(scene_load(path, &ov, tp_solvers, &r->sc, &err), 0, "%s", err.msg);
	cr_assert_eq(r->sc->width, w);
	cr_assert_eq(stepper_create(r->sc, 2, &r->st, &err), 0, "%s: %s", path, err.msg);
	r->w = w;
	r->h = h;
	r->v = calloc((size_t)w * h, sizeof *r->v);
	cr_assert_not_null(r->v);
}

static void run_close(run *r)
{
	stepper_destroy(r->st);
	scene_destroy(r->sc);
	free(r->v);
}

/* Steps to `frame` and copies the surface out in height units (or field values). */
static void run_to(run *r, int frame)
{
	tp_err err = {""};
	while (stepper_frame(r->st) < frame)
		cr_assert_eq(stepper_next(r->st, &err), 0, "%s", err.msg);
	tp_surface s;
	stepper_surface(r->st, &s);
	cr_assert(s.w == r->w && s.h == r->h);
	for (int y = 0; y < r->h; y++)
		for (int x = 0; x < r->w; x++) {
			ptrdiff_t i = (ptrdiff_t)y * s.stride + x;
			r->v[(size_t)y * r->w + x] =
				s.type == TP_SAMPLE_I32
					? ((const int32_t *)s.data)[i] * (double)s.scale
					: ((const float *)s.data)[i] * (double)s.scale;
		}
}

/* big (k*w x k*h) averaged over k x k blocks into out (w x h). */
static void area_down(const double *big, int w, int h, int k, double *out)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double s = 0;
			for (int j = 0; j < k; j++)
				for (int i = 0; i < k; i++)
					s += big[(size_t)(y * k + j) * (w * k) + x * k + i];
			out[(size_t)y * w + x] = s / (k * k);
		}
}

static double pearson(const double *a, const double *b, size_t n)
{
	double ma = 0, mb = 0;
	for (size_t i = 0; i < n; i++)
		ma += a[i], mb += b[i];
	ma /= n, mb /= n;
	double sab = 0, saa = 0, sbb = 0;
	for (size_t i = 0; i < n; i++) {
		sab += (a[i] - ma) * (b[i] - mb);
		saa += (a[i] - ma) * (a[i] - ma);
		sbb += (b[i] - mb) * (b[i] - mb);
	}
	return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

/* Height maps of `scene` at w x h and 4w x 4h agree at 1, 2 and 3 s. */
static void same_heights(const char *path, int w, int h, double rmin)
{
	run small, big;
	run_open(&small, path, w, h);
	run_open(&big, path, 4 * w, 4 * h);
	double *down = calloc((size_t)w * h, sizeof *down);
	cr_assert_not_null(down);
	for (int sec = 1; sec <= 3; sec++) {
		int frame = (int)lround(sec * small.sc->fps);
		run_to(&small, frame);
		run_to(&big, frame);
		area_down(big.v, w, h, 4, down);
		double r = pearson(small.v, down, (size_t)w * h);
		cr_log_info("%s %dx%d vs %dx%d at %d s: r = %.3f", path, w, h, 4 * w, 4 * h, sec,
			    r);
		cr_assert_geq(r, rmin,
			      "%s: %dx%d and %dx%d (averaged down) at %d s: correlation %.3f", path,
			      w, h, 4 * w, 4 * h, sec, r);
	}
	free(down);
	run_close(&small);
	run_close(&big);
}

TestSuite(scale);

Test(scale, ripple_looks_the_same_at_a_quarter_and_at_four_times)
{
	same_heights("scenes/pond.json", 320, 180, 0.8);
	same_heights("scenes/boxes.json", 320, 180, 0.8);
}

Test(scale, hooke_looks_the_same_at_a_quarter_and_at_four_times)
{
	same_heights("scenes/rain.json", 320, 180, 0.8);
}

Test(scale, shallow_looks_the_same_at_a_quarter_and_at_four_times)
{
	same_heights("scenes/shallow_drag.json", 160, 90, 0.78);
	same_heights("scenes/shallow_float.json", 160, 90, 0.78);
}

/* airy's ambient sea is seeded per wave (mode numbers across the pool), so a larger
 * render has the same waves and only adds shorter ones (seeded by storage index, the two
 * sizes' seas correlated 0.04). */
Test(scale, airy_looks_the_same_at_a_quarter_and_at_four_times)
{
	same_heights("scenes/wind_pool.json", 320, 180, 0.95);
}

/* Water coverage (field >= 1, the renderer's threshold) as a 0..1 value per pixel. */
static void coverage(const run *r, double *out)
{
	for (size_t i = 0; i < (size_t)r->w * r->h; i++)
		out[i] = r->v[i] >= 1.0 ? 1.0 : 0.0;
}

static double mean_abs_diff(const double *a, const double *b, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += fabs(a[i] - b[i]);
	return s / n;
}

/* sph keeps its particles in scene units (the same count at every size), so the two
 * sizes run the same flow, up to round-off that a splashing fluid amplifies. Half a
 * second later the preview's own coverage has moved on by the control amount; the two
 * sizes must differ by less than that. */
static void same_water(const char *path, int w, int h)
{
	run small, later, big;
	run_open(&small, path, w, h);
	run_open(&later, path, w, h);
	run_open(&big, path, 4 * w, 4 * h);
	size_t n = (size_t)w * h;
	double *cs = calloc(n, sizeof *cs), *cl = calloc(n, sizeof *cl);
	double *cb = calloc(16 * n, sizeof *cb), *down = calloc(n, sizeof *down);
	cr_assert(cs && cl && cb && down);
	for (int sec = 1; sec <= 3; sec++) {
		int frame = (int)lround(sec * small.sc->fps),
		    half = (int)lround(0.5 * small.sc->fps);
		run_to(&small, frame);
		run_to(&later, frame + half);
		run_to(&big, frame);
		coverage(&small, cs);
		coverage(&later, cl);
		coverage(&big, cb);
		area_down(cb, w, h, 4, down);
		double d = mean_abs_diff(cs, down, n), control = mean_abs_diff(cs, cl, n);
		cr_log_info("%s at %d s: sizes differ %.4f, the preview 0.5 s later %.4f", path,
			    sec, d, control);
		cr_assert_lt(
			d, control,
			"%s at %d s: %dx%d and %dx%d differ in %.4f of the coverage, the preview "
			"and itself 0.5 s later in %.4f",
			path, sec, w, h, 4 * w, 4 * h, d, control);
	}
	free(cs);
	free(cl);
	free(cb);
	free(down);
	run_close(&small);
	run_close(&later);
	run_close(&big);
}

Test(scale, sph_shows_the_same_water_at_a_quarter_and_at_four_times)
{
	same_water("scenes/sph_dambreak.json", 320, 180);
	same_water("scenes/sph_box.json", 320, 180);
}
