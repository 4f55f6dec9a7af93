/* Texture maps on known surfaces: height round trip, unit normals and their convention,
 * caustic energy and focusing, periodic tiling, thread independence. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"
#include "solvers/solver.h"

static const tp_solver_kind fake_solver = {.name = "fake", .caps = TP_SOLVER_HEIGHTFIELD};

static void make_scene(scene *sc, int w, int h)
{
	memset(sc, 0, sizeof *sc);
	sc->path = "maps.json";
	sc->width = w;
	sc->height = h;
	sc->solver = &fake_solver;
	sc->background.pattern = SCENE_PATTERN_CHECKER;
	sc->background.scale = 8;
	sc->boundary = SCENE_BOUNDARY_WRAP;
}

/* A periodic wave field: a few plane waves with whole wave numbers, so the field (and any
 * derivative of it) wraps exactly. */
static float *waves(int w, int h, double amp)
{
	static const int k[][2] = {{3, 1}, {-2, 4}, {5, -3}, {1, 6}, {7, 2}, {-4, -5}};
	float *f = malloc(sizeof *f * (size_t)w * h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double v = 0;
			for (int i = 0; i < 6; i++)
				v += sin(2 * M_PI *
						 (k[i][0] * (double)x / w +
						  k[i][1] * (double)y / h) +
					 1.7 * i) /
				     (1 + 0.3 * i);
			f[(size_t)y * w + x] = (float)(amp * v);
		}
	return f;
}

static tp_surface fsurf(const float *d, int w, int h, int wrap)
{
	tp_surface s = {.kind = TP_SURFACE_HEIGHT,
			.w = w,
			.h = h,
			.type = TP_SAMPLE_F32,
			.data = d,
			.stride = w,
			.scale = 1.0f,
			.wrap = wrap};
	return s;
}

/* Renders one mode of surface s into a new image. */
static tp_image render_one(const scene *sc, scene_mode mode, const tp_surface *s)
{
	render_ctx *r;
	tp_err err;
	cr_assert_eq(render_create(sc, mode, &r, &err), 0, "%s", err.msg);
	tp_image out;
	cr_assert_eq(tp_image_alloc(&out, sc->width, sc->height, render_format(r)), 0);
	render_frame(r, s, &out);
	render_destroy(r);
	return out;
}

static double sample(const tp_image *img, int x, int y, int c)
{
	int ch = tp_pixfmt_channels(img->fmt);
	const uint8_t *row = tp_image_row(img, y);
	if (img->fmt == TP_GRAY16 || img->fmt == TP_RGB16)
		return ((const uint16_t *)(const void *)row)[x * ch + c];
	return row[x * ch + c];
}

Test(maps, formats_follow_the_settings)
{
	scene sc;
	make_scene(&sc, 8, 8);
	render_ctx *r;
	tp_err err;
	cr_assert_eq(render_create(&sc, SCENE_MODE_HEIGHT, &r, &err), 0);
	cr_assert_eq(render_format(r), TP_GRAY16);
	render_destroy(r);
	sc.maps.normal_bits = 16;
	cr_assert_eq(render_create(&sc, SCENE_MODE_NORMAL, &r, &err), 0);
	cr_assert_eq(render_format(r), TP_RGB16);
	render_destroy(r);
	sc.maps.caustics_bits = 8;
	cr_assert_eq(render_create(&sc, SCENE_MODE_CAUSTICS, &r, &err), 0);
	cr_assert_eq(render_format(r), TP_GRAY8);
	render_destroy(r);
}

/* Integer solvers by default: 1024 levels per height unit like every solver, whatever
 * their stored unit (finer at larger render sizes): the same heights give the same grey
 * at 4096 and at 16384 stored units per height unit, v = round(h * 1024) + 32768, clamped
 * beyond +-32 height units, and the clamped pixels are counted. */
Test(maps, integer_heights_do_not_depend_on_the_stored_unit)
{
	scene sc;
	make_scene(&sc, 16, 8);
	int32_t raw[2][16 * 8];
	for (int i = 0; i < 16 * 8; i++) {
		raw[0][i] = (i * 7919) % 65535 * 2 - 65535; /* -16 .. 16 height units */
		raw[1][i] = raw[0][i] * 4;
	}
	raw[0][3] = 200000; /* 48.8 units: clamped at white */
	raw[0][4] = -200000;
	raw[1][3] = 800000;
	raw[1][4] = -800000;
	for (int k = 0; k < 2; k++) {
		tp_surface s = {.kind = TP_SURFACE_HEIGHT,
				.w = 16,
				.h = 8,
				.type = TP_SAMPLE_I32,
				.data = raw[k],
				.stride = 16,
				.scale = k ? 1.0f / 16384 : 1.0f / 4096};
		render_ctx *r;
		tp_err err;
		cr_assert_eq(render_create(&sc, SCENE_MODE_HEIGHT, &r, &err), 0, "%s", err.msg);
		tp_image img;
		cr_assert_eq(tp_image_alloc(&img, 16, 8, render_format(r)), 0);
		render_frame(r, &s, &img);
		cr_assert_eq(render_height_clipped(r), 2, "two pixels beyond the range");
		for (int y = 0; y < 8; y++)
			for (int x = 0; x < 16; x++) {
				double h = raw[0][y * 16 + x] / 4096.0;
				double want = floor(h * 1024 + 0.5) + 32768;
				want = want > 65535 ? 65535 : want < 0 ? 0 : want;
				cr_assert_eq(sample(&img, x, y, 0), want, "unit %s, pixel %d,%d",
					     k ? "16384" : "4096", x, y);
			}
		tp_image_free(&img);
		render_destroy(r);
	}
}

Test(maps, float_heights_use_the_scale)
{
	scene sc;
	make_scene(&sc, 4, 2);
	float d[8] = {0, 1, -1, 0.5f, 31.9f, -40, 0.25f, 1.0f / 1024};
	tp_surface s = fsurf(d, 4, 2, 0);
	tp_image img = render_one(&sc, SCENE_MODE_HEIGHT, &s); /* default 1024 levels / unit */
	const int want[8] = {32768, 33792, 31744, 33280, 65434, 0, 33024, 32769};
	for (int i = 0; i < 8; i++)
		cr_assert_eq(sample(&img, i % 4, i / 4, 0), want[i], "sample %d", i);
	tp_image_free(&img);
	sc.maps.height_scale = 100;
	img = render_one(&sc, SCENE_MODE_HEIGHT, &s);
	cr_assert_eq(sample(&img, 1, 0, 0), 32868);
	cr_assert_eq(sample(&img, 2, 0, 0), 32668);
	tp_image_free(&img);
}

/* Every pixel decodes to a unit vector (within quantisation) pointing up. */
static void assert_unit_normals(const tp_image *img)
{
	double maxv = img->fmt == TP_RGB16 ? 65535 : 255, tol = img->fmt == TP_RGB16 ? 1e-4 : 0.012;
	for (int y = 0; y < img->h; y++)
		for (int x = 0; x < img->w; x++) {
			double n[3], len = 0;
			for (int c = 0; c < 3; c++) {
				n[c] = sample(img, x, y, c) / maxv * 2 - 1;
				len += n[c] * n[c];
			}
			cr_assert(fabs(sqrt(len) - 1) < tol, "|n| = %g at %d,%d", sqrt(len), x, y);
			cr_assert_gt(n[2], 0);
		}
}

Test(maps, normals_are_unit_length_in_8_and_16_bits)
{
	scene sc;
	make_scene(&sc, 64, 48);
	float *f = waves(64, 48, 2.0);
	tp_surface s = fsurf(f, 64, 48, 1);
	tp_image a = render_one(&sc, SCENE_MODE_NORMAL, &s);
	assert_unit_normals(&a);
	sc.maps.normal_bits = 16;
	sc.maps.normal_strength = 10;
	tp_image b = render_one(&sc, SCENE_MODE_NORMAL, &s);
	assert_unit_normals(&b);
	tp_image_free(&a);
	tp_image_free(&b);
	free(f);
}

Test(maps, normal_convention_and_strength)
{
	/* h = 0.1 x + 0.05 y (rows grow downward): dh/dx = 0.1, dh/dy = 0.05. With strength
	 * k the normal is (-0.1k, +0.05k, 1)/|.| in OpenGL (+Y up the texture) and
	 * (-0.1k, -0.05k, 1)/|.| in DirectX. */
	scene sc;
	make_scene(&sc, 16, 16);
	float f[16 * 16];
	for (int y = 0; y < 16; y++)
		for (int x = 0; x < 16; x++)
			f[y * 16 + x] = 0.1f * x + 0.05f * y;
	tp_surface s = fsurf(f, 16, 16, 0);
	sc.maps.normal_strength = 4;
	sc.maps.normal_bits = 16;
	tp_image gl = render_one(&sc, SCENE_MODE_NORMAL, &s);
	sc.maps.normal_directx = 1;
	tp_image dx = render_one(&sc, SCENE_MODE_NORMAL, &s);
	double len = sqrt(0.4 * 0.4 + 0.2 * 0.2 + 1);
	double want_gl[3] = {-0.4 / len, 0.2 / len, 1 / len};
	for (int c = 0; c < 3; c++) {
		double g = sample(&gl, 8, 8, c) / 65535 * 2 - 1,
		       d = sample(&dx, 8, 8, c) / 65535 * 2 - 1;
		cr_assert(fabs(g - want_gl[c]) < 1e-4, "OpenGL channel %d: %g, want %g", c, g,
			  want_gl[c]);
		cr_assert(fabs(d - (c == 1 ? -want_gl[c] : want_gl[c])) < 1e-4,
			  "DirectX channel %d: %g", c, d);
	}
	tp_image_free(&gl);
	tp_image_free(&dx);
}

static double mean_of(const tp_image *img)
{
	double s = 0;
	for (int y = 0; y < img->h; y++)
		for (int x = 0; x < img->w; x++)
			s += sample(img, x, y, 0);
	return s / ((double)img->w * img->h);
}

Test(maps, flat_water_lights_the_floor_evenly)
{
	scene sc;
	make_scene(&sc, 40, 30);
	sc.maps.caustics_intensity = 0.25;
	float *f = calloc(40 * 30, sizeof *f);
	for (int tone = 0; tone <= 1; tone++) {
		sc.maps.caustics_linear = tone;
		/* soft: (1 - exp(-0.25)) * 255 = 56.4; linear: 0.25 * 255 = 63.75 */
		const int want = tone ? 64 : 56;
		for (int wrap = 0; wrap <= 1; wrap++) {
			tp_surface s = fsurf(f, 40, 30, wrap);
			tp_image img = render_one(&sc, SCENE_MODE_CAUSTICS, &s);
			for (int y = 0; y < 30; y++)
				for (int x = 0; x < 40; x++)
					cr_assert_eq(sample(&img, x, y, 0), want,
						     "tone %d wrap %d pixel %d,%d", tone, wrap, x,
						     y);
			tp_image_free(&img);
		}
	}
	free(f);
}

Test(maps, caustics_conserve_energy_and_focus_it_into_lines)
{
	/* 16-bit with a low intensity so nothing clips: the mean level is the light that
	 * fell, exactly up to rounding each pixel (half a level), with walls (mirrors) and
	 * with wrap. The waves focus it: the brightest pixels are many times the mean. */
	scene sc;
	make_scene(&sc, 96, 80);
	sc.maps.caustics_bits = 16;
	sc.maps.caustics_intensity = 0.02;
	sc.maps.caustics_depth = 300;
	sc.maps.caustics_linear = 1; /* level = intensity * light */
	float *f = waves(96, 80, 0.6);
	for (int wrap = 0; wrap <= 1; wrap++) {
		tp_surface s = fsurf(f, 96, 80, wrap);
		tp_image img = render_one(&sc, SCENE_MODE_CAUSTICS, &s);
		double mean = mean_of(&img), maxv = 0, minv = 65535;
		for (int y = 0; y < 80; y++)
			for (int x = 0; x < 96; x++) {
				maxv = fmax(maxv, sample(&img, x, y, 0));
				minv = fmin(minv, sample(&img, x, y, 0));
			}
		cr_assert_lt(maxv, 65535, "clipped: the energy check needs headroom");
		cr_assert(fabs(mean - 0.02 * 65535) <= 0.5, "wrap %d: mean %f, want %f", wrap, mean,
			  0.02 * 65535);
		cr_assert_gt(maxv, 4 * mean, "wrap %d: no focusing (max %g, mean %g)", wrap, maxv,
			     mean);
		cr_assert_lt(minv, 0.5 * mean, "wrap %d: no dark regions (min %g)", wrap, minv);
		tp_image_free(&img);
	}
	free(f);
}

Test(maps, a_crest_focuses_light_toward_its_middle)
{
	/* One smooth ridge along y (periodic in x): light below its crest is brighter than
	 * light below its troughs. */
	scene sc;
	make_scene(&sc, 64, 8);
	sc.maps.caustics_bits = 16;
	sc.maps.caustics_intensity = 0.01;
	/* curvature at the crest 0.5 (2 pi / 64)^2 = 0.0048 per pixel; small-slope optics
	 * brighten it by 1 / (1 - 0.248 * 500 * 0.0048) = 2.5 and dim the trough to 0.63 */
	sc.maps.caustics_depth = 500;
	float f[64 * 8];
	for (int y = 0; y < 8; y++)
		for (int x = 0; x < 64; x++)
			f[y * 64 + x] =
				(float)(0.5 * cos(2 * M_PI * x / 64.0)); /* crest at x = 0 */
	tp_surface s = fsurf(f, 64, 8, 1);
	tp_image img = render_one(&sc, SCENE_MODE_CAUSTICS, &s);
	cr_assert_gt(sample(&img, 0, 4, 0), 2 * sample(&img, 32, 4, 0), "crest %g, trough %g",
		     sample(&img, 0, 4, 0), sample(&img, 32, 4, 0));
	tp_image_free(&img);
}

/* Mean absolute difference between columns xa and xb (mod w) over all rows and channels,
 * and likewise for rows. */
static double col_diff(const tp_image *img, int xa, int xb)
{
	int ch = tp_pixfmt_channels(img->fmt);
	double s = 0;
	for (int y = 0; y < img->h; y++)
		for (int c = 0; c < ch; c++)
			s += fabs(sample(img, xa, y, c) - sample(img, xb, y, c));
	return s / (img->h * ch);
}

static double row_diff(const tp_image *img, int ya, int yb)
{
	int ch = tp_pixfmt_channels(img->fmt);
	double s = 0;
	for (int x = 0; x < img->w; x++)
		for (int c = 0; c < ch; c++)
			s += fabs(sample(img, x, ya, c) - sample(img, x, yb, c));
	return s / (img->w * ch);
}

/* The seam of a 2x2 tiling (last column next to the first, last row above the first)
 * against the largest step between neighbours inside the image. Returns seam / interior. */
static double seam_ratio(const tp_image *img)
{
	double inner = 0;
	for (int x = 0; x + 1 < img->w; x++)
		inner = fmax(inner, col_diff(img, x, x + 1));
	for (int y = 0; y + 1 < img->h; y++)
		inner = fmax(inner, row_diff(img, y, y + 1));
	double seam = fmax(col_diff(img, img->w - 1, 0), row_diff(img, img->h - 1, 0));
	return seam / fmax(inner, 1e-9);
}

Test(maps, every_mode_tiles_without_a_seam_under_wrap)
{
	scene sc;
	make_scene(&sc, 72, 56);
	sc.maps.caustics_depth = 300;
	float *f = waves(72, 56, 0.8);
	const scene_mode modes[] = {SCENE_MODE_COLOR, SCENE_MODE_HEIGHT, SCENE_MODE_NORMAL,
				    SCENE_MODE_CAUSTICS};
	for (int m = 0; m < 4; m++) {
		tp_surface s = fsurf(f, 72, 56, 1);
		tp_image img = render_one(&sc, modes[m], &s);
		double r = seam_ratio(&img);
		cr_assert_leq(r, 1.0, "mode %d: seam %.3f x the largest interior step", m, r);
		tp_image_free(&img);
	}
	free(f);
}

Test(maps, the_seam_measure_sees_a_seam)
{
	/* The same measure on a surface that does not wrap: a ramp's heights jump at the
	 * seam, so the check above could fail. */
	scene sc;
	make_scene(&sc, 32, 32);
	float f[32 * 32];
	for (int i = 0; i < 32 * 32; i++)
		f[i] = 0.05f * (i % 32);
	tp_surface s = fsurf(f, 32, 32, 0);
	tp_image img = render_one(&sc, SCENE_MODE_HEIGHT, &s);
	cr_assert_gt(seam_ratio(&img), 10.0);
	tp_image_free(&img);
}

Test(maps, same_bytes_with_any_thread_count)
{
	scene sc;
	make_scene(&sc, 97, 61); /* odd sizes: uneven bands */
	sc.maps.caustics_depth = 400;
	float *f = waves(97, 61, 1.0);
	const scene_mode modes[] = {SCENE_MODE_HEIGHT, SCENE_MODE_NORMAL, SCENE_MODE_CAUSTICS};
	int saved = omp_get_max_threads();
	for (int m = 0; m < 3; m++)
		for (int wrap = 0; wrap <= 1; wrap++) {
			tp_surface s = fsurf(f, 97, 61, wrap);
			omp_set_num_threads(1);
			tp_image a = render_one(&sc, modes[m], &s);
			omp_set_num_threads(3);
			tp_image b = render_one(&sc, modes[m], &s);
			omp_set_num_threads(7);
			tp_image c = render_one(&sc, modes[m], &s);
			size_t row = (size_t)a.w * tp_pixfmt_bytes(a.fmt);
			for (int y = 0; y < a.h; y++) {
				cr_assert_eq(memcmp(tp_image_row(&a, y), tp_image_row(&b, y), row),
					     0, "mode %d row %d", m, y);
				cr_assert_eq(memcmp(tp_image_row(&a, y), tp_image_row(&c, y), row),
					     0, "mode %d row %d", m, y);
			}
			tp_image_free(&a);
			tp_image_free(&b);
			tp_image_free(&c);
		}
	omp_set_num_threads(saved);
	free(f);
}

/* The soft tone curve rolls the focused lines off instead of clipping them: on waves
 * that clip several percent of the pixels with the linear ramp, at most 0.1% reach
 * white, dim light keeps its level, and brighter light stays brighter. */
Test(maps, soft_tone_keeps_the_lines_out_of_clipping)
{
	scene sc;
	make_scene(&sc, 96, 80);
	sc.maps.caustics_intensity = 0.5;
	sc.maps.caustics_depth = 300;
	float *f = waves(96, 80, 0.6);
	tp_surface s = fsurf(f, 96, 80, 1);
	sc.maps.caustics_linear = 1;
	tp_image lin = render_one(&sc, SCENE_MODE_CAUSTICS, &s);
	sc.maps.caustics_linear = 0;
	tp_image soft = render_one(&sc, SCENE_MODE_CAUSTICS, &s);
	int clip_lin = 0, clip_soft = 0;
	for (int y = 0; y < 80; y++)
		for (int x = 0; x < 96; x++) {
			double l = sample(&lin, x, y, 0), o = sample(&soft, x, y, 0);
			clip_lin += l == 255;
			clip_soft += o == 255;
			if (l < 40) /* dim light: 1 - exp(-e) is e within e^2/2 */
				cr_assert(fabs(o - l) <= 1 + l * l / (2 * 255.0), "%d,%d: %g vs %g",
					  x, y, o, l);
			for (int k = 0; k < x; k++) /* monotonic along the row */
				if (sample(&lin, k, y, 0) < l && sample(&lin, k, y, 0) < 255)
					cr_assert_leq(sample(&soft, k, y, 0), o);
		}
	cr_assert_gt(clip_lin, 96 * 80 / 50, "the waves should clip the linear ramp (%d pixels)",
		     clip_lin);
	cr_assert_leq(clip_soft * 1000, 96 * 80, "%d pixels clip with the soft tone", clip_soft);
	tp_image_free(&lin);
	tp_image_free(&soft);
	free(f);
}

Test(maps, steep_surfaces_still_conserve_energy)
{
	/* Displacements larger than the frame take the exact (slow) path; the light still
	 * all lands on the floor. */
	scene sc;
	make_scene(&sc, 24, 20);
	sc.maps.caustics_bits = 16;
	sc.maps.caustics_intensity = 0.001;
	sc.maps.caustics_depth = 5000;
	sc.maps.caustics_linear = 1;
	float *f = waves(24, 20, 3.0);
	for (int wrap = 0; wrap <= 1; wrap++) {
		tp_surface s = fsurf(f, 24, 20, wrap);
		tp_image img = render_one(&sc, SCENE_MODE_CAUSTICS, &s);
		cr_assert(fabs(mean_of(&img) - 0.001 * 65535) <= 0.5, "wrap %d: mean %f", wrap,
			  mean_of(&img));
		tp_image_free(&img);
	}
	free(f);
}
