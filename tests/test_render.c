/* The colour renderer against known height fields: offsets, reflection, wrap, threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"
#include "solvers/solver.h"
#include "render/render_impl.h"

#include "cpu_caps.h"

static const tp_solver_kind fake_solver = {.name = "fake", .caps = TP_SOLVER_HEIGHTFIELD};

/* A scene whose background is a horizontal ramp: red = x, green = y, blue = 100, so
 * a sampled colour tells where the renderer looked. */
static void make_scene(scene *sc, int w, int h)
{
	memset(sc, 0, sizeof *sc);
	sc->path = "test.json";
	sc->width = w;
	sc->height = h;
	sc->solver = &fake_solver;
	sc->render.mode = SCENE_MODE_COLOR;
	sc->render.refraction = 1.0;
	sc->background.image = "ramp";
	cr_assert_eq(tp_image_alloc(&sc->background.pixels, w, h, TP_RGB8), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint8_t *p = tp_image_row(&sc->background.pixels, y) + 3 * x;
			p[0] = (uint8_t)x;
			p[1] = (uint8_t)y;
			p[2] = 100;
		}
}

static tp_surface float_surface(const float *data, int w, int h)
{
	tp_surface s = {.kind = TP_SURFACE_HEIGHT,
			.w = w,
			.h = h,
			.type = TP_SAMPLE_F32,
			.data = data,
			.stride = w,
			.scale = 1.0f};
	return s;
}

Test(render, flat_water_shows_the_background_unchanged)
{
	scene sc;
	make_scene(&sc, 64, 48);
	float *hf = calloc(64 * 48, sizeof *hf);
	render_ctx *r;
	tp_err err;
	cr_assert_eq(render_create(&sc, SCENE_MODE_COLOR, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(render_format(r), TP_RGB8);
	tp_image out;
	tp_image_alloc(&out, 64, 48, TP_RGB8);
	tp_surface s = float_surface(hf, 64, 48);
	render_frame(r, &s, &out);
	for (int y = 0; y < 48; y++)
		cr_assert_eq(memcmp(tp_image_row(&out, y), tp_image_row(&sc.background.pixels, y),
				    64 * 3),
			     0);
	render_destroy(r);
	tp_image_free(&out);
	tp_image_free(&sc.background.pixels);
	free(hf);
}

Test(render, slope_offsets_the_sample_by_refraction_times_slope)
{
	/* h = 0.05 * x: central difference (h(x+1) - h(x-1))/2 = 0.05, so the sample moves
	 * by 24 px/unit * refraction 2 * 0.05 = 2.4 px to the right; bilinear between the
	 * ramp's integer columns gives red = x + 2.4 exactly (rounded). */
	scene sc;
	make_scene(&sc, 64, 16);
	sc.render.refraction = 2.0;
	float *hf = malloc(64 * 16 * sizeof *hf);
	for (int y = 0; y < 16; y++)
		for (int x = 0; x < 64; x++)
			hf[y * 64 + x] = 0.05f * x;
	render_ctx *r;
	tp_err err;
	cr_assert_eq(render_create(&sc, SCENE_MODE_COLOR, &r, &err), 0);
	tp_image out;
	tp_image_alloc(&out, 64, 16, TP_RGB8);
	tp_surface s = float_surface(hf, 64, 16);
	render_frame(r, &s, &out);
	for (int x = 1; x < 60; x++) {
		const uint8_t *p = tp_image_row(&out, 5) + 3 * x;
		cr_assert_eq(p[0], (uint8_t)lrint(x + 2.4), "x=%d red=%d", x, p[0]);
		cr_assert_eq(p[1], 5, "rows must not move");
	}
	render_destroy(r);
	tp_image_free(&out);
	tp_image_free(&sc.background.pixels);
	free(hf);
}

Test(render, reflection_brightens_crests_and_darkens_troughs)
{
	scene sc;
	make_scene(&sc, 32, 32);
	sc.render.refraction = 0;
	sc.render.reflection = 1.0;
	float *hf = malloc(32 * 32 * sizeof *hf);
	for (int i = 0; i < 32 * 32; i++)
		hf[i] = (i / 32) < 16 ? 0.5f : -0.5f; /* top half a crest, bottom a trough */
	render_ctx *r;
	tp_err err;
	cr_assert_eq(render_create(&sc, SCENE_MODE_COLOR, &r, &err), 0);
	tp_image out;
	tp_image_alloc(&out, 32, 32, TP_RGB8);
	tp_surface s = float_surface(hf, 32, 32);
	render_frame(r, &s, &out);
	/* 40 levels per height unit: +20 above, -20 below (blue 100 -> 120 / 80). */
	cr_assert_eq(tp_image_row(&out, 4)[3 * 10 + 2], 120);
	cr_assert_eq(tp_image_row(&out, 28)[3 * 10 + 2], 80);
	render_destroy(r);
	tp_image_free(&out);
	tp_image_free(&sc.background.pixels);
	free(hf);
}

Test(render, integer_surfaces_are_scaled_to_height_units)
{
	scene sc;
	make_scene(&sc, 16, 16);
	sc.render.refraction = 0;
	sc.render.reflection = 1.0;
	int32_t *hi = malloc(16 * 16 * sizeof *hi);
	for (int i = 0; i < 256; i++)
		hi[i] = 128; /* with scale 1/256: 0.5 height units -> +20 levels */
	tp_surface s = {.kind = TP_SURFACE_HEIGHT,
			.w = 16,
			.h = 16,
			.type = TP_SAMPLE_I32,
			.data = hi,
			.stride = 16,
			.scale = 1.0f / 256};
	render_ctx *r;
	tp_err err;
	cr_assert_eq(render_create(&sc, SCENE_MODE_COLOR, &r, &err), 0);
	tp_image out;
	tp_image_alloc(&out, 16, 16, TP_RGB8);
	render_frame(r, &s, &out);
	cr_assert_eq(tp_image_row(&out, 7)[3 * 7 + 2], 120);
	render_destroy(r);
	tp_image_free(&out);
	tp_image_free(&sc.background.pixels);
	free(hi);
}

Test(render, same_bytes_with_one_and_two_threads_and_patterns_tile_with_wrap)
{
	scene sc;
	make_scene(&sc, 96, 64);
	tp_image_free(&sc.background.pixels);
	sc.background.image = NULL;
	sc.background.pattern = SCENE_PATTERN_TILES;
	sc.background.scale = 20; /* adjusted to 96/5 x 64/3 under wrap */
	sc.background.color[0][0] = 220, sc.background.color[0][1] = 235,
	sc.background.color[0][2] = 240;
	sc.background.color[1][0] = 40, sc.background.color[1][1] = 90,
	sc.background.color[1][2] = 120;
	sc.boundary = SCENE_BOUNDARY_WRAP;
	sc.render.reflection = 1;
	sc.render.specular = 0.5;
	sc.render.tint_strength = 0.2;
	sc.render.tint[2] = 1;
	float *hf = malloc(96 * 64 * sizeof *hf);
	for (int y = 0; y < 64; y++)
		for (int x = 0; x < 96; x++)
			hf[y * 96 + x] =
				(float)(sin(2 * M_PI * x / 96.0) * cos(2 * M_PI * 2 * y / 64.0));
	tp_surface s = float_surface(hf, 96, 64);
	s.wrap = 1;
	tp_image a, b;
	tp_image_alloc(&a, 96, 64, TP_RGB8);
	tp_image_alloc(&b, 96, 64, TP_RGB8);
	render_ctx *r;
	tp_err err;
	cr_assert_eq(render_create(&sc, SCENE_MODE_COLOR, &r, &err), 0);
	omp_set_num_threads(1);
	render_frame(r, &s, &a);
	omp_set_num_threads(2);
	render_frame(r, &s, &b);
	for (int y = 0; y < 64; y++)
		cr_assert_eq(memcmp(tp_image_row(&a, y), tp_image_row(&b, y), 96 * 3), 0);
	/* Periodic field + periodic background: shifting the field by a whole period of
	 * both gives the same picture shifted, so column 0 continues column 95 like any
	 * interior pair: compare the edge step with the largest interior step. */
	int edge = 0, inner = 0;
	for (int y = 0; y < 64; y++) {
		const uint8_t *row = tp_image_row(&a, y);
		for (int k = 0; k < 3; k++) {
			int e = abs(row[k] - row[3 * 95 + k]);
			edge = e > edge ? e : edge;
			for (int x = 1; x < 96; x++) {
				int d = abs(row[3 * x + k] - row[3 * (x - 1) + k]);
				inner = d > inner ? d : inner;
			}
		}
	}
	cr_assert_leq(edge, inner, "seam %d larger than any interior step %d", edge, inner);
	render_destroy(r);
	tp_image_free(&a);
	tp_image_free(&b);
	free(hf);
}

/* The AVX-512 (fused), AVX2, SSE2 and plain C colour passes compute the same integers:
 * steep random slopes (taps all over the background), tint, reflection and highlight,
 * clamped and wrapped, float and integer samples, widths that leave every kind of
 * remainder (and rows shorter than one fused run). */
Test(render, vector_paths_write_the_same_bytes_as_plain_c)
{
	const int sizes[][2] = {{97, 31}, {256, 9}, {3, 5}, {301, 17}, {17, 4}, {18, 3}};
	for (int si = 0; si < 12; si++) {
		const int as_int = si >= 6;
		const int w = sizes[si % 6][0], h = sizes[si % 6][1];
		for (int wrap = 0; wrap < 2; wrap++) {
			scene sc;
			make_scene(&sc, w, h);
			tp_image_free(&sc.background.pixels);
			sc.background.image = NULL;
			sc.background.pattern = SCENE_PATTERN_PEBBLES;
			sc.background.scale = 7;
			sc.background.color[0][0] = 250, sc.background.color[0][1] = 200,
			sc.background.color[0][2] = 10;
			sc.background.color[1][0] = 5, sc.background.color[1][1] = 90,
			sc.background.color[1][2] = 255;
			sc.boundary = wrap ? SCENE_BOUNDARY_WRAP : SCENE_BOUNDARY_REFLECT;
			sc.render.reflection = 2;
			sc.render.specular = 1;
			sc.render.tint_strength = 0.35;
			sc.render.tint[0] = 0.1, sc.render.tint[1] = 0.5, sc.render.tint[2] = 0.9;
			sc.render.antialias = si % 3 != 0; /* refract_aa.c's lifts come from each path */
			float *hf = malloc((size_t)w * h * sizeof *hf);
			unsigned st = 12345u + (unsigned)si;
			for (int i = 0; i < w * h; i++) {
				st = st * 1664525u + 1013904223u;
				hf[i] = (float)((int)(st >> 8 & 0xffff) - 32768) /
					2048.0f; /* +-16 */
			}
			int32_t *hi = malloc((size_t)w * h * sizeof *hi);
			for (int i = 0; i < w * h; i++)
				hi[i] = (int32_t)lrintf(hf[i] * 256.0f);
			tp_surface s = float_surface(hf, w, h);
			if (as_int) {
				s.type = TP_SAMPLE_I32;
				s.data = hi;
				s.scale = 1.0f / 256;
			}
			s.wrap = wrap;
			tp_image img[4];
			tp_err err;
			for (int level = 0; level < 4; level++) { /* cpu_caps.h */
				render_ctx *r;
				tp_cpu_force_flags(cpu_caps[level]);
				cr_assert_eq(render_create(&sc, SCENE_MODE_COLOR, &r, &err), 0);
				tp_cpu_force_flags(-1);
				tp_image_alloc(&img[level], w, h, TP_RGB8);
				render_frame(r, &s, &img[level]);
				render_destroy(r);
			}
			for (int level = 1; level < 4; level++)
				for (int y = 0; y < h; y++)
					cr_assert_eq(memcmp(tp_image_row(&img[0], y),
							    tp_image_row(&img[level], y),
							    (size_t)w * 3),
						     0,
						     "%dx%d wrap %d int %d: level %d differs from "
						     "C in row %d",
						     w, h, wrap, as_int, level, y);
			for (int level = 0; level < 4; level++)
				tp_image_free(&img[level]);
			free(hf);
			free(hi);
		}
	}
}

/* Calm water: where the surface's spans say a row is 0, pixels that see only level water
 * are copied from the flat picture (render.c, refract.c active_cols). The same bytes as
 * drawing every pixel, RGB and 4:2:0, on every vector level: islands of waves in a
 * level pool (rows all calm, rows partly calm, an island at each edge and one wider
 * than 16 pixels), spans exact or looser than needed, and a second frame whose waves
 * have moved (the flat picture is reused). */
Test(render, calm_water_copies_give_the_same_bytes)
{
	const int sizes[][2] = {{160, 40}, {98, 30}, {34, 12}, {302, 18}};
	for (int si = 0; si < 4; si++) {
		const int w = sizes[si][0], h = sizes[si][1];
		scene sc;
		make_scene(&sc, w, h);
		sc.render.reflection = 2;
		sc.render.specular = 1;
		sc.render.antialias = si & 1; /* it reads one sample further (active_cols) */
		sc.boundary = SCENE_BOUNDARY_REFLECT;
		int32_t *hi = calloc((size_t)w * h, sizeof *hi);
		tp_span *sp = malloc((size_t)h * sizeof *sp);
		cr_assert(hi && sp);
		render_ctx *rs[4]; /* one a CPU cap (cpu_caps.h), each keeping its flat picture */
		tp_err err;
		for (int level = 0; level < 4; level++) {
			tp_cpu_force_flags(cpu_caps[level]);
			cr_assert_eq(render_create(&sc, SCENE_MODE_COLOR, &rs[level], &err), 0);
		}
		tp_cpu_force_flags(-1);
		unsigned st = 777u + (unsigned)si;
		for (int frame = 0; frame < 2; frame++) {
			memset(hi, 0, (size_t)w * h * sizeof *hi);
			/* islands [x, x + iw) x [y, y + ih) of random heights */
			const int isl[][4] = {{0, 3 + frame, 5, 4},
					      {w - 7, h / 2 - frame, 7, 3},
					      {w / 3 + 5 * frame, h - 4, 21, 4}};
			for (int k = 0; k < 3; k++)
				for (int y = isl[k][1]; y < isl[k][1] + isl[k][3] && y < h; y++)
					for (int x = isl[k][0]; x < isl[k][0] + isl[k][2] && x < w; x++) {
						st = st * 1664525u + 1013904223u;
						hi[y * w + x] = (int32_t)(st >> 16 & 0x3ff) - 512;
					}
			int calm = 0, partly = 0;
			for (int y = 0; y < h; y++) {
				int lo = w, hi_ = 0;
				for (int x = 0; x < w; x++)
					if (hi[y * w + x]) {
						lo = x < lo ? x : lo;
						hi_ = x + 1;
					}
				sp[y] = lo < hi_ ? (tp_span){lo, hi_} : (tp_span){0, 0};
				calm += lo >= hi_;
				partly += lo < hi_ && (lo > 20 || hi_ < w - 20);
			}
			cr_assert(calm > 0 && partly > 0, "the frame has calm and partly calm rows");
			for (int loose = 0; loose < 2; loose++) {
				if (loose) /* wider than the waves: still right, less copied */
					for (int y = 0; y < h; y += 3)
						if (sp[y].lo < sp[y].hi)
							sp[y].lo = sp[y].lo / 2, sp[y].hi += (w - sp[y].hi) / 3;
				tp_surface s = {.kind = TP_SURFACE_HEIGHT,
						.w = w,
						.h = h,
						.type = TP_SAMPLE_I32,
						.data = hi,
						.stride = w,
						.scale = 1.0f / 64};
				for (int level = 0; level < 4; level++) {
					render_ctx *r = rs[level];
					for (int yuv = 0; yuv < 2; yuv++) {
						const tp_pixfmt fmt = yuv ? TP_YUV420 : TP_RGB8;
						tp_image all, some;
						tp_image_alloc(&all, w, h, fmt);
						tp_image_alloc(&some, w, h, fmt);
						s.spans = NULL;
						cr_assert_eq(render_frame(r, &s, &all), 0);
						s.spans = sp;
						cr_assert_eq(render_frame(r, &s, &some), 0);
						for (int k = 0; k < (yuv ? 3 : 1); k++) {
							ptrdiff_t la, lb;
							const uint8_t *pa = tp_image_plane(&all, k, &la);
							const uint8_t *pb = tp_image_plane(&some, k, &lb);
							const int pw = yuv ? (k ? w / 2 : w) : 3 * w;
							const int ph = yuv && k ? h / 2 : h;
							for (int y = 0; y < ph; y++)
								cr_assert_eq(memcmp(pa + y * la, pb + y * lb,
										    (size_t)pw),
									     0,
									     "%dx%d frame %d loose %d level %d "
									     "%s plane %d row %d differs",
									     w, h, frame, loose, level,
									     yuv ? "4:2:0" : "RGB", k, y);
						}
						tp_image_free(&all);
						tp_image_free(&some);
					}
				}
			}
		}
		for (int level = 0; level < 4; level++)
			render_destroy(rs[level]);
		free(hi);
		free(sp);
		tp_image_free(&sc.background.pixels);
	}
}

/* The pebbles background a cell's run at a time (background.c, pebble_row, vectorised)
 * against pattern_pixel a pixel at a time (no TP_CPU_FLAG_SIMD): the same bytes, with and
 * without wrap (periodic cells), odd sizes, whole and fractional cell sizes. */
Test(render, pebbles_rows_match_the_per_pixel_pattern)
{
	const int sizes[][2] = {{97, 31}, {640, 360}, {333, 211}};
	const double scales[] = {7, 28.5, 3};
	for (int si = 0; si < 3; si++)
		for (int wrap = 0; wrap < 2; wrap++)
			for (int ci = 0; ci < 3; ci++) {
				const int w = sizes[si][0], h = sizes[si][1];
				scene sc;
				make_scene(&sc, w, h);
				tp_image_free(&sc.background.pixels);
				sc.background.image = NULL;
				sc.background.pattern = SCENE_PATTERN_PEBBLES;
				sc.background.scale = scales[ci];
				sc.background.color[0][0] = 200, sc.background.color[0][1] = 180,
				sc.background.color[0][2] = 150;
				sc.background.color[1][0] = 60, sc.background.color[1][1] = 50,
				sc.background.color[1][2] = 40;
				sc.boundary = wrap ? SCENE_BOUNDARY_WRAP : SCENE_BOUNDARY_REFLECT;
				tp_image a, b;
				tp_err err;
				cr_assert_eq(render_background(&sc, w, h, 0, &a, &err), 0);
				cr_assert_eq(render_background(&sc, w, h, tp_cpu_flags(), &b, &err), 0);
				long sand = 0;
				for (int y = 0; y < h; y++) {
					cr_assert_eq(memcmp(tp_image_row(&a, y), tp_image_row(&b, y),
							    (size_t)w * 3),
						     0, "%dx%d wrap %d scale %g: row %d differs", w, h,
						     wrap, scales[ci], y);
					for (int x = 0; x < w; x++)
						sand += tp_image_row(&a, y)[3 * x] < 70;
				}
				cr_assert(sand > 0 && sand < (long)w * h, "both sand and pebbles");
				tp_image_free(&a);
				tp_image_free(&b);
			}
}

/* The pebbles' borders are anti-aliased: against the same background drawn 8 x 8 times
 * larger (8 times the cell size, so the same stones) and box-averaged down, the pixels
 * where the two differ by more than a level (the borders: interiors are smooth shading)
 * differ by little. Measured at 640x360, scale 28.5, over the samples that differ by
 * more than a level: mean 2.79 levels and 99th percentile 10 with the coverage blend
 * (44,041 samples); the hard threshold it replaced (the stair-stepped borders of
 * pond.json at 1080p) gave mean 15.9 and 99th percentile 52 (104,501 samples). */
Test(render, pebble_borders_are_close_to_a_supersampled_background)
{
	const int w = 640, h = 360, S = 8;
	scene sc, big;
	make_scene(&sc, w, h);
	make_scene(&big, w * S, h * S);
	for (scene *s = &sc; s; s = s == &sc ? &big : NULL) {
		tp_image_free(&s->background.pixels);
		s->background.image = NULL;
		s->background.pattern = SCENE_PATTERN_PEBBLES;
		s->background.scale = s == &sc ? 28.5 : 28.5 * S;
		s->background.color[0][0] = 126, s->background.color[0][1] = 140;
		s->background.color[0][2] = 132;
		s->background.color[1][0] = 200, s->background.color[1][1] = 205;
		s->background.color[1][2] = 170;
	}
	tp_image a, ref;
	tp_err err;
	cr_assert_eq(render_background(&sc, w, h, tp_cpu_flags(), &a, &err), 0);
	cr_assert_eq(render_background(&big, w * S, h * S, tp_cpu_flags(), &ref, &err), 0);
	long hist[256] = {0}, n = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int k = 0; k < 3; k++) {
				long sum = 0;
				for (int j = 0; j < S; j++)
					for (int i = 0; i < S; i++)
						sum += tp_image_row(&ref, y * S + j)[3 * (x * S + i) + k];
				const int r = (int)((sum + S * S / 2) / (S * S));
				const int d = abs(r - tp_image_row(&a, y)[3 * x + k]);
				if (d > 1) {
					hist[d]++;
					n++;
				}
			}
	cr_assert_gt(n, 1000, "the borders differ from a one-sample picture at all");
	double mean = 0;
	int p99 = 0;
	long acc = 0;
	for (int d = 0; d < 256; d++)
		mean += (double)d * (double)hist[d] / (double)n;
	for (int d = 0; d < 256 && acc < 0.99 * (double)n; d++)
		acc += hist[p99 = d];
	cr_log_info("pebble borders: %ld samples differ by more than a level: mean %.2f, p99 %d",
		    n, mean, p99);
	cr_assert_lt(mean, 4.0, "mean %.2f levels", mean);
	cr_assert_lt(p99, 16, "p99 %d levels", p99);
	tp_image_free(&a);
	tp_image_free(&ref);
}

/* The colour pass's per-row loops are vectorised by the compiler, not by hand, and one
 * function GCC cannot vectorise (lrintf) left the whole row geometry scalar in every
 * variant for four days, half of a busy frame's time, with the same bytes. So the
 * library's AVX2 and AVX-512 variants of the row geometry and the offsets
 * (refract_avx2.c, refract_avx512.c) are read back
 * from the built library (objdump) and must use 256- or 512-bit registers throughout; the
 * scalar build of that loop used none. */
Test(render, the_row_loops_are_vectorised)
{
#if !defined(__x86_64__)
	cr_skip("x86-64 only");
#elif defined(__SANITIZE_ADDRESS__)
	cr_skip("the sanitizer build is -O1, which vectorises nothing");
#else
	const char *b = getenv("TP_BUILD");
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "objdump -d --no-show-raw-insn %s/libtidepool.so.0 | awk '"
		 "/^[0-9a-f]+ <refract_(geometry|offsets)_[a-z0-9_]*_avx(2|512)>:/ { f = $2; n[f] = 0; next }"
		 " /^$/ { f = \"\" } f && /[yz]mm/ { n[f]++ }"
		 " END { for (f in n) print f, n[f] }'",
		 b ? b : "build");
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	char name[128];
	int count, functions = 0;
	while (fscanf(p, "%127s %d", name, &count) == 2) {
		functions++;
		const int min = strncmp(name, "<refract_offsets", 16) ? 60 : 20;
		cr_expect_geq(count, min, "%s uses vector registers %d times (at least %d expected)",
			      name, count, min);
	}
	cr_assert_eq(pclose(p), 0, "objdump failed");
	cr_assert_eq(functions, 12, "the 8 geometry and 4 offsets variants found (%d)", functions);
#endif
}
