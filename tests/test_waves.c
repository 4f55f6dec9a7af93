/* The ocean's controls (airy's ambient waves), each against theory, measured from what
 * the solver hands out: the directional spreading cos^(2s) (the energy-weighted mean of
 * cos 2(theta - wind) is s / (s + 1)), the share of energy travelling against the wind
 * (each mode split into its two travelling waves from two frames), Pierson-Moskowitz's
 * mean frequency (1.296 wp), the height the spectrum's law gives when the amplitude is
 * left out (JONSWAP's fetch law, said by validate), a swell under the wind sea on the one
 * exact loop, the velocity map against the displacement's change between frames, and the
 * foam range. */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "scene/scene.h"
#include "sim/loop.h"
#include "sim/stepper.h"
#include "solvers/solver.h"
#include "tidepool.h"
#include "tmpdir.h"

#define PI 3.14159265358979323846

static char dir[64], errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "waves");
	snprintf(errpath, sizeof errpath, "%s/err.txt", dir);
	snprintf(outpath, sizeof outpath, "%s/out.txt", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(waves, .init = setup, .fini = teardown, .timeout = 300);

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
	cr_assert_eq(scene_load(write_text(name, text), NULL, tp_solvers, &sc, &err), 0, "%s", err.msg);
	return sc;
}

/* A deep, undamped, wrapped n x n sea of `m` metres a pixel at `fps`, no tension (so
 * omega^2 = g k exactly), no loop; `amb` the members of "ambient". */
static const char *deep_sea(int n, double m, int fps, const char *amb)
{
	static char text[2048];
	snprintf(text, sizeof text,
		 "{\"format\": \"tidepool-scene/1\", \"size\": [%d, %d], \"fps\": %d, "
		 "\"frames\": 4, \"seed\": 3, \"solver\": \"airy\", \"boundary\": \"wrap\", "
		 "\"params\": {\"metres\": %g, \"damping\": 0, \"tension\": 0, \"viscosity\": 0}, "
		 "\"ambient\": {%s}}",
		 n, n, fps, m, amb);
	return text;
}

/* The surface heights (no choppiness: the field itself) at frames f and f + 1. */
static void two_frames(const scene *sc, int f, float *h0, float *h1)
{
	stepper *st;
	tp_err err;
	tp_surface s;
	const size_t n = (size_t)sc->width * sc->height;
	cr_assert_eq(stepper_create(sc, 2, &st, &err), 0, "%s", err.msg);
	for (int i = 0; i <= f + 1; i++) {
		cr_assert_eq(stepper_next(st, &err), 0, "%s", err.msg);
		if (i >= f) {
			stepper_surface(st, &s);
			cr_assert_eq(s.stride, s.w);
			memcpy(i == f ? h0 : h1, s.data, n * sizeof *h0);
		}
	}
	stepper_destroy(st);
}

/* The field's own Fourier coefficients (r2c, w/2 + 1 columns), normalised. */
static fftw_complex *spectrum(const float *h, int w, int hh)
{
	const size_t n = (size_t)w * hh, nc = (size_t)(w / 2 + 1) * hh;
	double *in = fftw_malloc(n * sizeof *in);
	fftw_complex *out = fftw_malloc(nc * sizeof *out);
	cr_assert(in && out);
	fftw_plan p = fftw_plan_dft_r2c_2d(hh, w, in, out, FFTW_ESTIMATE);
	for (size_t i = 0; i < n; i++)
		in[i] = h[i];
	fftw_execute(p);
	for (size_t i = 0; i < nc; i++)
		out[i] /= (double)n;
	fftw_destroy_plan(p);
	fftw_free(in);
	return out;
}

/* The wavenumber (radians per pixel) of stored coefficient (i, j). */
static void wavenumber(int i, int j, int w, int h, double *kx, double *ky)
{
	*kx = 2 * PI * i / w;
	*ky = 2 * PI * (j <= h / 2 ? j : j - h) / h;
}

typedef struct directions {
	double cos2;    /* energy-weighted mean of cos 2(theta - wind) */
	double against; /* share of the energy travelling against the wind */
	double mean_w;  /* energy-weighted mean omega, rad/s */
} directions;

/* Splits each mode c(t) = (P e^{-i w t} + Q e^{i w t}) / 2 of a deep sea into the wave
 * travelling along +k (P) and along -k (Q) from its values at frames f and f + 1, and
 * measures where the energy goes; wind the wind's direction in degrees (scene angles). */
static directions measure(const scene *sc, double wind, double metres)
{
	const int w = sc->width, h = sc->height, cw = w / 2 + 1;
	const size_t n = (size_t)w * h;
	float *h0 = malloc(n * sizeof *h0), *h1 = malloc(n * sizeof *h1);
	cr_assert(h0 && h1);
	two_frames(sc, 3, h0, h1);
	fftw_complex *c0 = spectrum(h0, w, h), *c1 = spectrum(h1, w, h);
	const double g = 9.81 / metres, dt = 1.0 / sc->fps, th = wind * PI / 180;
	double e = 0, cos2 = 0, up = 0, mw = 0;
	for (int j = 0; j < h; j++)
		for (int i = 0; i < cw; i++) {
			double kx, ky;
			wavenumber(i, j, w, h, &kx, &ky);
			const double k = sqrt(kx * kx + ky * ky);
			if (k == 0 || 2 * i == w || 2 * j == h)
				continue;
			const double om = sqrt(g * k);
			const double complex z = cexp(I * om * dt), a = c0[(size_t)j * cw + i],
					     b = c1[(size_t)j * cw + i];
			/* a = (P + Q) / 2, b = (P conj(z) + Q z) / 2 */
			const double complex P = 2 * (b - a * z) / (conj(z) - z);
			const double complex Q = 2 * (a * conj(z) - b) / (conj(z) - z);
			const double wt = i == 0 ? 0.5 : 1; /* column 0 holds k and -k both */
			const double ep = wt * creal(P * conj(P)), eq = wt * creal(Q * conj(Q));
			const double c = cos(atan2(ky, kx) - th),
				     c2 = cos(2 * (atan2(ky, kx) - th));
			e += ep + eq;
			cos2 += (ep + eq) * c2;
			up += c > 0 ? eq : ep; /* P moves along k, Q against it */
			mw += (ep + eq) * om;
		}
	fftw_free(c0), fftw_free(c1), free(h0), free(h1);
	return (directions){cos2 / e, up / e, mw / e};
}

Test(waves, spreading_follows_cos_2s)
{
	const double s[] = {1, 6};
	for (int t = 0; t < 2; t++) {
		char amb[256];
		snprintf(amb, sizeof amb,
			 "\"wind\": 10, \"fetch\": 5000, \"direction\": 30, \"spreading\": %g",
			 s[t]);
		scene *sc = load_ok("spread", deep_sea(512, 0.5, 64, amb));
		directions d = measure(sc, 30, 0.5);
		const double want = s[t] / (s[t] + 1);
		cr_log_info("s %g: <cos 2 theta> %.4f (theory %.4f), against %.2e", s[t], d.cos2,
			    want, d.against);
		cr_assert(fabs(d.cos2 - want) < 0.05, "s = %g: <cos 2 theta> %.3f, theory %.3f",
			  s[t], d.cos2, want);
		cr_assert_lt(d.against, 1e-3, "s = %g: %.4f of the energy against the wind", s[t],
			     d.against);
		scene_destroy(sc);
	}
}

Test(waves, a_share_travels_against_the_wind)
{
	const double f[] = {0.25, 0.5};
	for (int t = 0; t < 2; t++) {
		char amb[256];
		snprintf(amb, sizeof amb,
			 "\"wind\": 10, \"fetch\": 5000, \"direction\": -60, \"spreading\": 2, "
			 "\"against\": %g",
			 f[t]);
		scene *sc = load_ok("against", deep_sea(512, 0.5, 64, amb));
		directions d = measure(sc, -60, 0.5);
		cr_log_info("against %g: measured %.4f, <cos 2 theta> %.4f", f[t], d.against,
			    d.cos2);
		cr_assert(fabs(d.against - f[t]) < 0.04, "against %g: measured %.3f", f[t],
			  d.against);
		/* the lobes keep their shape: s / (s + 1) */
		cr_assert(fabs(d.cos2 - 2.0 / 3) < 0.05, "<cos 2 theta> %.3f", d.cos2);
		scene_destroy(sc);
	}
}

/* S(w) = alpha g^2 w^-5 exp(-5/4 (wp/w)^4): m1 / m0 = (5/4)^(1/4) Gamma(3/4) wp. */
Test(waves, pierson_moskowitz_mean_frequency)
{
	scene *sc = load_ok(
		"pm", deep_sea(512, 0.5, 64, "\"spectrum\": \"pierson-moskowitz\", \"wind\": 5"));
	directions d = measure(sc, 0, 0.5);
	const double wp = 0.877 * 9.81 / (1.026 * 5);
	const double want = pow(1.25, 0.25) * tgamma(0.75) * wp;
	cr_log_info("pierson-moskowitz: mean omega %.4f, theory %.4f", d.mean_w, want);
	cr_assert(fabs(d.mean_w / want - 1) < 0.05, "mean omega %.4f, theory %.4f", d.mean_w, want);
	scene_destroy(sc);
	/* fully developed: a fetch means nothing to it */
	scene *bad = NULL;
	tp_err err;
	cr_assert_lt(scene_load(write_text("pmf", deep_sea(32, 0.5, 16,
							   "\"spectrum\": \"pierson-moskowitz\", "
							   "\"fetch\": 100")),
				NULL, tp_solvers, &bad, &err),
		     0);
	cr_assert(strstr(err.msg, "ambient.fetch") && strstr(err.msg, "fully developed"), "%s",
		  err.msg);
}

/* RMS of the surface (height units) over a few frames. */
static double rms_height(const scene *sc, int frames)
{
	stepper *st;
	tp_err err;
	tp_surface s;
	double s2 = 0;
	size_t cnt = 0;
	cr_assert_eq(stepper_create(sc, 2, &st, &err), 0, "%s", err.msg);
	for (int f = 0; f < frames; f++) {
		cr_assert_eq(stepper_next(st, &err), 0, "%s", err.msg);
		stepper_surface(st, &s);
		for (int i = 0; i < s.w * s.h; i++, cnt++)
			s2 += (double)((const float *)s.data)[i] * ((const float *)s.data)[i];
	}
	stepper_destroy(st);
	return sqrt(s2 / (double)cnt);
}

/* Without "amplitude", Hs = 4 RMS is JONSWAP's fetch law g Hs / U^2 = 1.6e-3 (g F / U^2)^(1/2);
 * validate says it. A 256 m tile of 0.5 m pixels. */
Test(waves, left_out_amplitude_is_the_fetch_law)
{
	const double U[] = {10, 14}, F[] = {5000, 20000};
	for (int t = 0; t < 2; t++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "{\"format\": \"tidepool-scene/1\", \"size\": [512, 512], "
			 "\"fps\": 16, \"frames\": 3, \"seed\": 9, "
			 "\"solver\": \"airy\", \"boundary\": \"wrap\", "
			 "\"params\": {\"metres\": 0.5, \"damping\": 0}, "
			 "\"ambient\": {\"wind\": %g, \"fetch\": %g, \"direction\": 10}}",
			 U[t], F[t]);
		scene *sc = load_ok("law", text);
		const double want = 1.6e-3 * U[t] * sqrt(F[t] / 9.81);
		const double metres_hu = 0.5; /* a height unit is a scene unit */
		const double hs = 4 * rms_height(sc, 3) * metres_hu;
		cr_log_info("U %g F %g: Hs %.4f m, the law %.4f m", U[t], F[t], hs, want);
		cr_assert(fabs(hs / want - 1) < 0.1, "U %g F %g: Hs %.4f m, the law %.4f m", U[t],
			  F[t], hs, want);
		cr_assert_eq(run_tp(outpath, errpath, "validate %s/law.json", dir), 0, "%s",
			     slurp(errpath));
		char said[64];
		snprintf(said, sizeof said, "significant wave height %.3g m", want);
		cr_assert(strstr(slurp(outpath), said) && strstr(slurp(outpath), "own law"),
			  "wanted '%s' in: %s", said, slurp(outpath));
		scene_destroy(sc);
	}
}

/* A swell from another direction under the wind sea: both on the one exact loop (frame F
 * is frame 0, bit for bit), their variances add, and the swell's energy is where it was
 * sent. */
Test(waves, a_swell_under_the_wind_sea_loops_exactly)
{
	const char *fmt =
		"{\"format\": \"tidepool-scene/1\", \"size\": [256, 256], \"fps\": 8, "
		"\"seed\": 4, \"solver\": \"airy\", \"boundary\": \"wrap\", "
		"\"params\": {\"metres\": 1, \"damping\": 0}, \"loop\": {\"duration\": 4}, "
		"\"ambient\": {\"wind\": 8, \"fetch\": 4000, \"direction\": 0, "
		"\"amplitude\": %g%s}}";
	char text[1024];
	snprintf(text, sizeof text, fmt, 0.3,
		 ", \"swell\": [{\"wind\": 8, \"fetch\": 20000, \"direction\": 100, "
		 "\"spreading\": 10, \"amplitude\": 0.4}]");
	scene *sc = load_ok("swell", text);
	sim_loop *lp;
	tp_err err;
	tp_surface t;
	cr_assert_eq(loop_create(sc, 1, &lp, &err), 0, "%s", err.msg);
	const int F = sc->loop.frames, n = 256 * 256;
	float *first = malloc(n * sizeof *first);
	cr_assert_not_null(first);
	double s2 = 0;
	for (int f = 0; f <= F; f++) {
		cr_assert_eq(loop_next(lp, &t, &err), 0, "%s", err.msg);
		if (f == 0)
			memcpy(first, t.data, n * sizeof *first);
		if (f == F)
			cr_assert(!memcmp(first, t.data, n * sizeof *first), "frame %d is not 0",
				  F);
		for (int i = 0; f < F && i < n; i++)
			s2 += (double)((const float *)t.data)[i] * ((const float *)t.data)[i];
	}
	loop_destroy(lp);
	/* variances add: 0.3^2 + 0.4^2 = 0.5^2 */
	const double rms = sqrt(s2 / ((double)n * F));
	cr_log_info("swell: rms %.4f (0.5)", rms);
	cr_assert(fabs(rms - 0.5) < 0.02, "rms %.4f, want 0.5", rms);
	/* the swell's share of the energy within 30 degrees of 100 (the wind sea, cos^2
	 * about 0, has 0.5% of its energy beyond 70 degrees) */
	fftw_complex *c = spectrum(first, 256, 256);
	double e = 0, near = 0;
	for (int j = 0; j < 256; j++)
		for (int i = 0; i < 129; i++) {
			double kx, ky;
			wavenumber(i, j, 256, 256, &kx, &ky);
			const double p = creal(c[j * 129 + i] * conj(c[j * 129 + i]));
			const double a = fabs(remainder(atan2(ky, kx) * 180 / PI - 100, 180));
			e += p;
			near += a < 30 ? p : 0;
		}
	fftw_free(c);
	cr_log_info("swell: %.4f of the energy near 100 degrees (0.64)", near / e);
	cr_assert(fabs(near / e - 0.16 / 0.25) < 0.05, "%.3f of the energy near 100 degrees",
		  near / e);
	free(first);
	scene_destroy(sc);
}

/* velocity: dD/dt at choppiness 1, against the central difference of the displacement
 * between the frames either side (fps 64: the difference's own error, (w dt)^2 / 6, is
 * under 0.5% at the shortest waves); and the map itself through the CLI. */
Test(waves, velocity_is_the_displacements_rate_of_change)
{
	scene *sc = load_ok("vel", "{\"format\": \"tidepool-scene/1\", \"size\": [128, 128], "
				   "\"fps\": 64, \"seed\": 2, \"solver\": \"airy\", "
				   "\"boundary\": \"wrap\", \"params\": {\"metres\": 0.25}, "
				   "\"loop\": {\"duration\": 2}, "
				   "\"ambient\": {\"wind\": 9, \"fetch\": 3000, \"direction\": 40, "
				   "\"choppiness\": 1, \"shortest\": 1}}");
	const int n = 128 * 128, f0 = 10;
	float *dx[3], *dy[3], *vx = malloc(n * sizeof *vx), *vy = malloc(n * sizeof *vy);
	stepper *st;
	tp_err err;
	tp_surface s;
	cr_assert_eq(stepper_create(sc, 2, &st, &err), 0, "%s", err.msg);
	for (int f = 0; f <= f0 + 1; f++) {
		cr_assert_eq(stepper_next(st, &err), 0, "%s", err.msg);
		stepper_surface(st, &s);
		if (f < f0 - 1)
			continue;
		const int k = f - (f0 - 1);
		dx[k] = malloc(n * sizeof *dx[k]);
		dy[k] = malloc(n * sizeof *dy[k]);
		memcpy(dx[k], s.dx, n * sizeof *vx);
		memcpy(dy[k], s.dy, n * sizeof *vx);
		if (f == f0) {
			const float *a, *b;
			cr_assert_not_null(s.velocity);
			s.velocity(s.vctx, &a, &b);
			memcpy(vx, a, n * sizeof *vx);
			memcpy(vy, b, n * sizeof *vy);
		}
	}
	stepper_destroy(st);
	double e2 = 0, v2 = 0;
	for (int i = 0; i < n; i++) {
		const double ux = (dx[2][i] - dx[0][i]) * 32.0, uy = (dy[2][i] - dy[0][i]) * 32.0;
		e2 += (ux - vx[i]) * (ux - vx[i]) + (uy - vy[i]) * (uy - vy[i]);
		v2 += (double)vx[i] * vx[i] + (double)vy[i] * vy[i];
	}
	cr_assert_gt(v2, 0);
	cr_log_info("velocity vs dD/dt: relative RMS error %.2e", sqrt(e2 / v2));
	cr_assert_lt(sqrt(e2 / v2), 0.01, "velocity vs dD/dt: relative RMS error %.4f",
		     sqrt(e2 / v2));
	for (int k = 0; k < 3; k++)
		free(dx[k]), free(dy[k]);
	free(vx), free(vy);
	scene_destroy(sc);
	/* the API knows it (as mode 7 until tidepool.h names it); the CLI writes it as EXR
	 * and PNG, the same bytes with one thread or two (at 512x512, where the loops are
	 * shared among threads); a scene without ambient waves
	 * cannot */
	cr_assert_eq(tp_mode_from_name("velocity"), 7);
	cr_assert_str_eq(tp_mode_name((tp_mode)7), "velocity");
	for (int t = 1; t <= 2; t++)
		cr_assert_eq(run_tp(NULL, errpath,
				    "render %s/vel.json -q -y --range 0-1 --threads %d --size 512x512 "
				    "-o velocity=%s/t%d_%%d.png",
				    dir, t, dir, t),
			     0, "%s", slurp(errpath));
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cmp -s %s/t1_1.png %s/t2_1.png", dir, dir);
	cr_assert_eq(system(cmd), 0, "velocity differs with 1 and 2 threads");
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s/vel.json -q -y --range 0-1 -o velocity=%s/v%%d.exr "
			    "-o velocity=%s/v%%d.png",
			    dir, dir, dir),
		     0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "validate %s -o velocity=%s/x.png",
			    write_text("calm", "{\"format\": \"tidepool-scene/1\", \"size\": [32, "
					       "32], \"solver\": \"airy\"}"),
			    dir),
		     3);
	cr_assert(strstr(slurp(errpath), "velocity") && strstr(slurp(errpath), "ambient"), "%s",
		  slurp(errpath));
}

/* ambient.foam.range [lo, hi] shows clamp((F - lo) / (hi - lo), 0, 1) of the same foam. */
Test(waves, foam_range_reshapes_the_same_foam)
{
	const char *fmt = "{\"format\": \"tidepool-scene/1\", \"size\": [96, 96], \"fps\": 16, "
			  "\"seed\": 5, \"solver\": \"airy\", \"boundary\": \"wrap\", "
			  "\"params\": {\"metres\": 0.1}, \"loop\": {\"duration\": 1}, "
			  "\"ambient\": {\"wind\": 9, \"fetch\": 3000, \"amplitude\": 2, "
			  "\"shortest\": 0.5, \"choppiness\": 1.5, \"foam\": {%s}}}";
	char a[512], b[512];
	snprintf(a, sizeof a, fmt, "\"fade\": 1");
	snprintf(b, sizeof b, fmt, "\"fade\": 1, \"range\": [0.3, 0.9]");
	float *foam[2];
	const int n = 96 * 96;
	for (int k = 0; k < 2; k++) {
		scene *sc = load_ok(k ? "fr" : "f0", k ? b : a);
		stepper *st;
		tp_err err;
		tp_surface s;
		cr_assert_eq(stepper_create(sc, 1, &st, &err), 0, "%s", err.msg);
		for (int f = 0; f < 8; f++)
			cr_assert_eq(stepper_next(st, &err), 0, "%s", err.msg);
		stepper_surface(st, &s);
		foam[k] = malloc(n * sizeof *foam[k]);
		memcpy(foam[k], s.foam, n * sizeof *foam[k]);
		stepper_destroy(st);
		scene_destroy(sc);
	}
	int thin = 0, thick = 0;
	const float inv = 1.0f / (0.9f - 0.3f);
	for (int i = 0; i < n; i++) {
		float v = (foam[0][i] - 0.3f) * inv;
		v = v < 0 ? 0 : v > 1 ? 1 : v;
		cr_assert(fabsf(foam[1][i] - v) < 1e-6f, "texel %d: %g, want %g", i, foam[1][i], v);
		thin += foam[0][i] > 0 && foam[0][i] <= 0.3f;
		thick += foam[0][i] > 0.3f;
	}
	cr_assert(thin > 0 && thick > 0, "the foam is all thin or all thick (%d, %d)", thin, thick);
	free(foam[0]), free(foam[1]);
	const char *bad =
		write_text("fbad", "{\"format\": \"tidepool-scene/1\", \"size\": [32, 32], "
				   "\"solver\": \"airy\", \"ambient\": {\"choppiness\": 1, "
				   "\"foam\": {\"range\": [0.8, 0.2]}}}");
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", bad), 3);
	cr_assert(strstr(slurp(errpath), "ambient.foam.range"), "%s", slurp(errpath));
}
