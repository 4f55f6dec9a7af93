/* The airy solver (linear dispersive waves on FFTs/DCTs): a moving box's Kelvin wake
 * measured from the surface the renderer gets (19.47 degrees at two hull Froude numbers,
 * and another angle in shallow water, which shows the measurement can fail), one mode's
 * frequency against omega(k), the same bits whatever the thread count, ambient wind waves
 * that loop exactly without a cross-fade, and what it refuses. */
#include <fftw3.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "scene/scene.h"
#include "sim/loop.h"
#include "sim/stepper.h"
#include "solvers/airy/spec2d.h"
#include "solvers/solver.h"

#define PI     3.14159265358979323846
#define KELVIN 19.4712206 /* asin(1/3), degrees */

static char dir[64];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "airy");
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(airy, .init = setup, .fini = teardown, .timeout = 300);

static const char *write_text(const char *name, const char *text)
{
	static char path[160];
	snprintf(path, sizeof path, "%s/%s.json", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static scene *load_ok(const char *name, const char *text)
{
	scene *sc = NULL;
	tp_err err;
	int rc = scene_load(write_text(name, text), NULL, tp_solvers, &sc, &err);
	cr_assert_eq(rc, 0, "%s", err.msg);
	return sc;
}

/* The message of a scene that must not load (or start). */
static const char *load_bad(const char *name, const char *text)
{
	static tp_err err;
	scene *sc = NULL;
	int rc = scene_load(write_text(name, text), NULL, tp_solvers, &sc, &err);
	if (rc == 0) {
		stepper *st = NULL;
		rc = stepper_create(sc, 1, &st, &err);
		stepper_destroy(st);
		scene_destroy(sc);
	}
	cr_assert_lt(rc, 0, "%s loaded", name);
	return err.msg;
}

/* Runs a scene to its last frame; returns a copy of the surface the renderer gets. */
static float *run_to_end(const scene *sc, int *w, int *h)
{
	stepper *st;
	tp_err err;
	cr_assert_eq(stepper_create(sc, omp_get_max_threads(), &st, &err), 0, "%s", err.msg);
	for (int f = 0; f < sc->frames; f++)
		cr_assert_eq(stepper_next(st, &err), 0, "%s", err.msg);
	tp_surface s;
	stepper_surface(st, &s);
	cr_assert_eq(s.type, TP_SAMPLE_F32);
	float *out = malloc(sizeof(float) * s.w * s.h);
	cr_assert_not_null(out);
	for (int y = 0; y < s.h; y++)
		for (int x = 0; x < s.w; x++)
			out[(size_t)y * s.w + x] =
				((const float *)s.data)[y * s.stride + x] * s.scale;
	*w = s.w;
	*h = s.h;
	stepper_destroy(st);
	return out;
}

/* ---- the Kelvin wake ---- */

enum { WW = 1024, WH = 384, SPONGE = 32 };
#define WAKE_METRES 0.01
#define HULL_L      24.0
#define HULL_B      8.0

typedef struct wake_run {
	double U, lam, xb; /* px/s, transverse wavelength 2 pi U^2 / g (px), box at the end */
	double angle;      /* measured half-angle, degrees */
	int used;          /* columns the fit used */
} wake_run;

/*
 * The half-angle of the wake in h (w x hh, the box moving along +x on y = hh/2, its
 * centre now at xb): for each distance d = 60, 70, ... 300 px behind the box, the
 * envelope of the waves across the track is the mean of h^2 over one wavelength along x;
 * on each side the wake's edge is the outermost cell where it reaches 10% of that
 * column's peak (beyond the cusp line the amplitude falls off exponentially, so the edge
 * is sharp). A least-squares line through the edges against d gives tan(angle); its
 * intercept takes the hull's own width. Columns whose edge is in the absorbing band (a
 * wake wider than the pool) are left out.
 */
static void measure_wake(const float *h, int w, int hh, wake_run *r)
{
	const double y0 = hh / 2.0;
	const int win = r->lam > 1 ? (int)r->lam : 1, rmax = hh / 2 - 1;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int n = 0;
	double *env = malloc(sizeof(double) * hh);
	cr_assert_not_null(env);
	for (int d = 60; d <= 300; d += 10) {
		const int xc = (int)(r->xb - d);
		for (int y = 0; y < hh; y++) {
			double s = 0;
			for (int x = xc - win; x <= xc + win; x++) {
				double v = h[(size_t)y * w + ((x % w) + w) % w];
				s += v * v;
			}
			env[y] = s / (2 * win + 1);
		}
		for (int side = -1; side <= 1; side += 2) {
			double peak = 0;
			for (int k = 0; k < rmax; k++)
				peak = fmax(peak, env[(int)(y0 + side * k)]);
			int edge = 0;
			for (int k = 0; k < rmax; k++)
				if (env[(int)(y0 + side * k)] >= 0.1 * peak)
					edge = k;
			if (edge >= rmax - SPONGE)
				continue;
			sx += d;
			sy += edge;
			sxx += (double)d * d;
			sxy += (double)d * edge;
			n++;
		}
	}
	free(env);
	r->used = n;
	cr_assert_geq(n, 10, "only %d columns inside the pool", n);
	const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	r->angle = atan(slope) * 180 / PI;
}

/*
 * A 24 x 8 px hull (1 cm a pixel, so L = 0.24 m) moving along +x at hull Froude number
 * fr = U / sqrt(g L) through water `depth` metres deep (0 = deep). It speeds up evenly
 * over its first 2 s (a sudden start would fill the pool with the start's rings) and then
 * goes on at U until it has covered 640 px; absorb boundary.
 */
static void wake(double fr, double depth, wake_run *r)
{
	const double g = 9.81 / WAKE_METRES, Ta = 2.0, x0 = 40;
	r->U = fr * sqrt(g * HULL_L);
	r->lam = 2 * PI * r->U * r->U / g;
	const double T = 640 / r->U + Ta / 2;
	const int frames = (int)ceil(T * 30) + 1;
	char path[4096] = "", text[8192];
	size_t k = 0;
	for (int i = 0; i <= 20; i++) {
		double t = 0.1 * i;
		k += (size_t)snprintf(path + k, sizeof path - k,
				      "{\"t\": %.17g, \"at\": [%.17g, %d]},", t,
				      x0 + r->U * t * t / (2 * Ta), WH / 2);
	}
	snprintf(path + k, sizeof path - k, "{\"t\": 1000, \"at\": [%.17g, %d]}",
		 x0 + r->U * Ta / 2 + r->U * (1000 - Ta), WH / 2);
	snprintf(
		text, sizeof text,
		"{\"format\": \"tidepool-scene/1\", \"size\": [%d, %d], \"fps\": 30, \"substeps\": "
		"2, "
		"\"frames\": %d, \"solver\": \"airy\", \"boundary\": \"absorb\", \"params\": "
		"{\"metres\": %g, \"depth\": %.17g, \"tension\": 0, \"damping\": 0, \"sponge\": "
		"%d}, "
		"\"boxes\": [{\"size\": [%g, %g], \"height\": 1, \"density\": 1, \"path\": [%s]}]}",
		WW, WH, frames, WAKE_METRES, depth, SPONGE, HULL_L, HULL_B, path);
	scene *sc = load_ok("wake", text);
	r->xb = x0 + r->U * Ta / 2 + r->U * ((frames - 1) / 30.0 - Ta);
	int w, h;
	float *surf = run_to_end(sc, &w, &h);
	measure_wake(surf, w, h, r);
	free(surf);
	scene_destroy(sc);
}

Test(airy, kelvin_wake_half_angle_at_two_froude_numbers)
{
	const double fr[2] = {0.3, 0.45};
	for (int i = 0; i < 2; i++) {
		wake_run r;
		wake(fr[i], 0, &r);
		fprintf(stderr,
			"airy wake: Fr %.2f, U %.1f px/s: half-angle %.2f degrees (%d columns)\n",
			fr[i], r.U, r.angle, r.used);
		cr_assert(fabs(r.angle - KELVIN) <= 2.0, "Fr %.2f: %.2f degrees, not 19.47 +- 2",
			  fr[i], r.angle);
	}
}

/* The same measurement in water so shallow that the boat outruns the longest waves
 * (depth Froude number U / sqrt(g d) = 1.5): the wake is the supercritical wedge of
 * asin(1 / 1.5) = 41.8 degrees, and the test above would fail on it. */
Test(airy, shallow_water_wake_has_another_angle)
{
	const double fr = 0.45, g = 9.81 / WAKE_METRES, U = fr * sqrt(g * HULL_L);
	const double d_px = (U / 1.5) * (U / 1.5) / g;
	wake_run r;
	wake(fr, d_px * WAKE_METRES, &r);
	fprintf(stderr, "airy wake: depth Froude 1.5: half-angle %.2f degrees (%d columns)\n",
		r.angle, r.used);
	cr_assert(fabs(r.angle - KELVIN) > 2.0, "%.2f degrees would pass as a Kelvin wake",
		  r.angle);
	cr_assert(fabs(r.angle - asin(1 / 1.5) * 180 / PI) < 5, "%.2f, not about 41.8", r.angle);
}

/* ---- dispersion ---- */

/* A drop in a wrapped pool starts at rest, so each Fourier mode of the surface is its
 * start times cos(omega(k) t): the (8, 0) and (3, 5) modes' coefficients, from an FFT of
 * the surface at each frame, against omega^2 = (g k + sigma/rho k^3) tanh(k d) computed
 * here. Capillarity and finite depth both matter at these wavelengths. */
Test(airy, one_mode_runs_at_omega_of_k)
{
	enum { N = 64 };
	const double metres = 0.002, depth = 0.01, tension = 0.0728;
	scene *sc = load_ok(
		"disp", "{\"format\": \"tidepool-scene/1\", \"size\": [64, 64], \"fps\": 30, "
			"\"frames\": 40, \"solver\": \"airy\", \"boundary\": \"wrap\", \"params\": "
			"{\"metres\": 0.002, \"depth\": 0.01, \"damping\": 0, \"viscosity\": 0}, "
			"\"drops\": [{\"at\": [20, 30], \"radius\": 6, \"strength\": 1}]}");
	const double g = 9.81 / metres, dp = depth / metres, T = tension / 1000 / pow(metres, 3);
	stepper *st;
	tp_err err;
	cr_assert_eq(stepper_create(sc, 1, &st, &err), 0, "%s", err.msg);
	float *in = fftwf_malloc(sizeof(float) * N * N);
	fftwf_complex *out = fftwf_malloc(sizeof(fftwf_complex) * N * (N / 2 + 1));
	fftwf_plan p = fftwf_plan_dft_r2c_2d(N, N, in, out, FFTW_ESTIMATE);
	const int modes[2][2] = {{8, 0}, {3, 5}};
	double c0[2][2] = {{0}};
	double worst = 0;
	for (int f = 0; f < 40; f++) {
		cr_assert_eq(stepper_next(st, &err), 0, "%s", err.msg);
		tp_surface s;
		stepper_surface(st, &s);
		for (int y = 0; y < N; y++)
			memcpy(in + y * N, (const float *)s.data + y * s.stride, sizeof(float) * N);
		fftwf_execute(p);
		for (int m = 0; m < 2; m++) {
			const int i = modes[m][0], j = modes[m][1];
			const double kx = 2 * PI * i / N, ky = 2 * PI * j / N,
				     k = sqrt(kx * kx + ky * ky);
			const double om = sqrt((g * k + T * k * k * k) * tanh(k * dp));
			const float *c = out[j * (N / 2 + 1) + i];
			if (f == 0) {
				c0[m][0] = c[0];
				c0[m][1] = c[1];
				cr_assert(hypot(c0[m][0], c0[m][1]) > 1, "mode (%d, %d) is empty",
					  i, j);
				continue;
			}
			const double want = cos(om * f / 30.0);
			const double mag = hypot(c0[m][0], c0[m][1]);
			const double got = (c[0] * c0[m][0] + c[1] * c0[m][1]) / (mag * mag);
			worst = fmax(worst, fabs(got - want));
		}
	}
	cr_assert_lt(worst, 2e-4, "a mode's amplitude is off cos(omega t) by %g", worst);
	fftwf_destroy_plan(p);
	fftwf_free(in);
	fftwf_free(out);
	stepper_destroy(st);
	scene_destroy(sc);
}

/* The blocked transforms against FFTW's own 2D plans, at sides shorter than a block
 * (SPEC_BLOCK rows, SPEC_DCT_COLS columns of a DCT, SPEC_BLOCK complex columns of an FFT;
 * these took a plan that was never made and crashed: wind_pool.json at --size 40x22),
 * at exact multiples and with a shorter last block; and the round trip back. */
Test(airy, transforms_match_fftw_at_every_size)
{
	static const int sz[][2] = {{2, 2}, {3, 2}, {5, 3}, {16, 9}, {20, 9}, {40, 22},
				    {33, 17}, {64, 16}, {70, 40}, {130, 33}};
	for (size_t n = 0; n < sizeof sz / sizeof sz[0]; n++)
		for (int kind = 0; kind < 2; kind++) {
			const int w = sz[n][0], h = sz[n][1];
			spec2d t;
			tp_err err;
			cr_assert_eq(spec_init(&t, kind ? SPEC_DCT : SPEC_FFT, w, h, &err), 0, "%s",
				     err.msg);
			float *real = spec_alloc((size_t)w * h), *back = spec_alloc((size_t)w * h);
			float *coef = spec_alloc(t.ncoef), *ref = fftwf_malloc(t.ncoef * sizeof(float));
			float *in = fftwf_malloc((size_t)w * h * sizeof(float));
			double amax = 0;
			for (int i = 0; i < w * h; i++) {
				real[i] = in[i] = (float)sin(0.7 * i + 0.3 * (i % 7)) + 0.25f;
				amax = fmax(amax, fabs(real[i]));
			}
			fftwf_plan p = kind ? fftwf_plan_r2r_2d(h, w, in, ref, FFTW_REDFT10, FFTW_REDFT10,
							       FFTW_ESTIMATE)
					    : fftwf_plan_dft_r2c_2d(h, w, in, (fftwf_complex *)(void *)ref,
								    FFTW_ESTIMATE);
			fftwf_execute(p);
			spec_forward(&t, real, coef);
			double worst = 0, scale = 0;
			for (size_t i = 0; i < t.ncoef; i++) {
				worst = fmax(worst, fabs((double)coef[i] - ref[i]));
				scale = fmax(scale, fabs(ref[i]));
			}
			cr_assert_lt(worst, 1e-5 * scale, "%s %dx%d: a coefficient is off by %g (of %g)",
				     kind ? "DCT" : "FFT", w, h, worst, scale);
			spec_inverse(&t, coef, back);
			worst = 0;
			for (int i = 0; i < w * h; i++)
				worst = fmax(worst, fabs(back[i] / spec_norm(&t) - real[i]));
			cr_assert_lt(worst, 1e-5 * amax, "%s %dx%d: the round trip is off by %g",
				     kind ? "DCT" : "FFT", w, h, worst);
			fftwf_destroy_plan(p);
			fftwf_free(in);
			fftwf_free(ref);
			spec_release(real);
			spec_release(back);
			spec_release(coef);
			spec_free(&t);
		}
}

/* ---- determinism ---- */

/* Everything at once (drops, rain, a turning box, ambient waves), on a pool large enough
 * for the threaded paths, for each boundary: the same bits with 1 and 2 threads. */
Test(airy, same_bits_whatever_the_thread_count)
{
	static const char *const bnd[] = {"wrap", "reflect", "absorb"};
	for (int b = 0; b < 3; b++) {
		char text[2048];
		snprintf(text, sizeof text,
			 "{\"format\": \"tidepool-scene/1\", \"size\": [320, 240], \"fps\": 30, "
			 "\"frames\": 12, \"solver\": \"airy\", \"boundary\": \"%s\", \"seed\": 3, "
			 "\"drops\": [{\"at\": [100, 100], \"radius\": 9}], "
			 "\"emitters\": [{\"type\": \"rain\", \"rate\": 40}], "
			 "\"ambient\": {\"wind\": 3, \"amplitude\": 0.05}, "
			 "\"boxes\": [{\"size\": [30, 12], \"path\": [{\"t\": 0, \"at\": [20, "
			 "120]}, "
			 "{\"t\": 1, \"at\": [200, 140], \"angle\": 40}]}]}",
			 bnd[b]);
		scene *sc = load_ok("det", text);
		int w, h;
		const int keep = omp_get_max_threads();
		omp_set_num_threads(1);
		float *one = run_to_end(sc, &w, &h);
		omp_set_num_threads(2);
		float *two = run_to_end(sc, &w, &h);
		omp_set_num_threads(keep);
		cr_assert_eq(memcmp(one, two, sizeof(float) * w * h), 0,
			     "%s: 1 and 2 threads differ", bnd[b]);
		double e = 0;
		for (int i = 0; i < w * h; i++)
			e += fabs(one[i]);
		cr_assert_gt(e, 0, "%s: still water proves nothing", bnd[b]);
		free(one);
		free(two);
		scene_destroy(sc);
	}
}

/* ---- loops ---- */

/* The loop's first frame and the frame after its last, through the loop machinery. */
static void loop_scene_ends(scene *sc, int *same, double *moved)
{
	sim_loop *lp;
	tp_err err;
	cr_assert_eq(loop_create(sc, 1, &lp, &err), 0, "%s", err.msg);
	const size_t n = (size_t)sc->width * sc->height;
	float *first = malloc(n * sizeof(float)), *second = malloc(n * sizeof(float));
	tp_surface s;
	for (int f = 0; f <= sc->loop.frames; f++) {
		cr_assert_eq(loop_next(lp, &s, &err), 0, "%s", err.msg);
		for (int y = 0; y < s.h; y++) {
			if (f == 0)
				memcpy(first + y * s.w, (const float *)s.data + y * s.stride,
				       s.w * sizeof(float));
			if (f == 1)
				memcpy(second + y * s.w, (const float *)s.data + y * s.stride,
				       s.w * sizeof(float));
		}
	}
	*same = 1;
	*moved = 0;
	for (int y = 0; y < s.h; y++)
		for (int x = 0; x < s.w; x++) {
			float v = ((const float *)s.data)[y * s.stride + x];
			*same &= memcmp(&v, first + y * s.w + x, sizeof v) == 0;
			*moved += fabs(first[y * s.w + x] - second[y * s.w + x]);
		}
	free(first);
	free(second);
	loop_destroy(lp);
}

static void loop_ends(const char *extra, int *same, double *moved)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "{\"format\": \"tidepool-scene/1\", \"size\": [64, 48], \"fps\": 24, "
		 "\"substeps\": 2, "
		 "\"solver\": \"airy\", \"boundary\": \"wrap\", \"params\": {\"metres\": 0.005}, "
		 "\"loop\": {\"duration\": 1, \"start\": 0.25}, "
		 "\"ambient\": {\"wind\": 4, \"fetch\": 10, \"amplitude\": 0.2}%s}",
		 extra);
	scene *sc = load_ok("loop", text);
	loop_scene_ends(sc, same, moved);
	scene_destroy(sc);
}

Test(airy, ambient_waves_loop_exactly_without_a_cross_fade)
{
	int same;
	double moved;
	loop_ends("", &same, &moved);
	cr_assert(same, "frame 24 (the loop's last + 1) is not frame 0 bit for bit");
	cr_assert_gt(moved, 1e-3, "the water does not move (%g)", moved);
	/* a drop is not periodic: the loop falls back to its cross-fade, and the ends differ */
	loop_ends(", \"drops\": [{\"t\": 0.4, \"at\": [30, 20]}]", &same, &moved);
	cr_assert(!same, "with a drop the loop cannot be exact");
}

/* The texture example itself (at 64x64): frame 60 of its 2 s loop is frame 0. */
Test(airy, pool_caustics_example_loops_exactly)
{
	scene_overrides ov = {.width = 64, .height = 64};
	scene *sc = NULL;
	tp_err err;
	cr_assert_eq(scene_load("scenes/textures/pool_caustics.json", &ov, tp_solvers, &sc, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(sc->loop.frames, 60);
	int same;
	double moved;
	loop_scene_ends(sc, &same, &moved);
	cr_assert(same, "pool_caustics.json: frame 60 is not frame 0");
	cr_assert_gt(moved, 1e-3);
	scene_destroy(sc);
}

/* ---- what airy refuses, and what others refuse of it ---- */

#define FMT "\"format\": \"tidepool-scene/1\""
Test(airy, refused_elements_name_the_field_and_the_solver)
{
	const char *m;
	m = load_bad("float",
		     "{" FMT ", \"solver\": \"airy\", \"boxes\": [{\"size\": [5, 5], \"at\": "
		     "[9, 9], \"float\": true}]}");
	cr_assert(strstr(m, "boxes[0].float: the airy solver has no floating boxes (use shallow or "
			    "sph; got true)"),
		  "%s", m);
	m = load_bad("amb", "{" FMT ", \"ambient\": {\"wind\": 3}}");
	cr_assert(strstr(m, "ambient: the ripple solver makes no ambient wind waves (use airy; got "
			    "an object)"),
		  "%s", m);
	m = load_bad("tank", "{" FMT ", \"solver\": \"airy\", \"tank\": {}}");
	cr_assert(strstr(m, "tank: the airy solver has no tank"), "%s", m);
	m = load_bad("fetch",
		     "{" FMT ", \"solver\": \"airy\", \"ambient\": {\"spectrum\": \"phillips\", "
		     "\"fetch\": 10}}");
	cr_assert(
		strstr(m,
		       "ambient.fetch: the phillips spectrum is fully developed and has no fetch"),
		"%s", m);
	m = load_bad("sponge", "{" FMT ", \"size\": [64, 64], \"solver\": \"airy\", \"boundary\": "
			       "\"absorb\", \"params\": {\"sponge\": 40}}");
	cr_assert(strstr(m, "params.sponge: a band of 40 pixels on each side leaves no water in a "
			    "64x64 pool; at most 32"),
		  "%s", m);
	m = load_bad("wind", "{" FMT ", \"solver\": \"airy\", \"ambient\": {\"wind\": 0}}");
	cr_assert(strstr(m, "ambient.wind: must be > 0"), "%s", m);
	/* and what it honours loads: a kinematic box's density is its draft */
	scene *sc =
		load_ok("ok", "{" FMT ", \"solver\": \"airy\", \"boundary\": \"reflect\", "
			      "\"boxes\": [{\"size\": [5, 5], \"at\": [9, 9], \"density\": 2}], "
			      "\"ambient\": {}}");
	scene_destroy(sc);
}

/* The example scenes' height maps (what the renderer's look does not change) against
 * tests/golden/airy/ (scripts/golden.sh writes them), with 1 and with 2 threads. */
Test(airy, example_height_maps_match_their_goldens)
{
	static const char *const names[] = {"rowing", "wind_pool"};
	for (int i = 0; i < 2; i++)
		for (int t = 1; t <= 2; t++) {
			char got[128], errf[128];
			snprintf(got, sizeof got, "%s/%s-t%d.manifest", dir, names[i], t);
			snprintf(errf, sizeof errf, "%s/stderr", dir);
			cr_assert_eq(run_tp(NULL, errf,
					    "render scenes/%s.json -q -o height=null --frames 16 "
					    "--threads %d --hash %s",
					    names[i], t, got),
				     0, "%s", slurp(errf));
			cr_assert_eq(
				run_tp(errf, NULL,
				       "compare tests/golden/airy/%s-height.manifest %s", names[i],
				       got),
				0,
				"%s with %d threads differs from its golden (if intended: make "
				"golden): %s",
				names[i], t, slurp(errf));
		}
	const char *script = slurp("scripts/golden.sh");
	cr_assert(strstr(script, "-q -o height=null --frames 16") != NULL,
		  "scripts/golden.sh must render the height goldens as this test does");
}

/* A render resumed from a checkpoint (tidepool cache, then --range --cache) gives the
 * frames of a run from the start: the spectrum, the pending drops, the step count (the ambient
 * phases) and the boxes are all in the checkpoint. */
Test(airy, checkpoints_resume_bit_for_bit)
{
	static const char *const names[] = {"rowing", "wind_pool"};
	for (int i = 0; i < 2; i++) {
		char errf[128], full[128], part[128];
		snprintf(errf, sizeof errf, "%s/stderr", dir);
		snprintf(full, sizeof full, "%s/%s-full.manifest", dir, names[i]);
		snprintf(part, sizeof part, "%s/%s-part.manifest", dir, names[i]);
		cr_assert_eq(run_tp(NULL, errf,
				    "cache scenes/%s.json -q -O %s/cc%d --frames 24 --every 10",
				    names[i], dir, i),
			     0, "%s", slurp(errf));
		cr_assert_eq(
			run_tp(NULL, errf,
			       "render scenes/%s.json -q --frames 24 --range 10-23 -o height=null "
			       "--hash %s",
			       names[i], full),
			0, "%s", slurp(errf));
		cr_assert_eq(
			run_tp(NULL, errf,
			       "render scenes/%s.json -q --frames 24 --range 10-23 --cache %s/cc%d "
			       "-o height=null --hash %s",
			       names[i], dir, i, part),
			0, "%s", slurp(errf));
		cr_assert_eq(run_tp(errf, NULL, "compare %s %s", full, part), 0, "%s: %s", names[i],
			     slurp(errf));
	}
}
