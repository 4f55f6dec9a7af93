/* LDR-FLIP (src/compare/flip.c): agreement with NVIDIA's reference implementation on
 * tidepool frames, exactness properties, and `tidepool compare --metric flip / --max-flip`.
 *
 * Reference values: NVIDIA's FLIP tool, github.com/NVlabs/flip at commit
 * 1eb247cabcf2862c2c8207ab15314304394132b9 (FLIP v1.6, "FLIP v1.6." in its -h), C++ CPU
 * tool built outside this repository with
 *   g++ -std=c++17 -O2 -fopenmp -Isrc/cpp -Isrc/cpp/tool src/cpp/tool/FLIP-tool.cpp -o flip
 * and run in tests/data/flip/ as
 *   flip -r REFERENCE.png -t TEST.png -v 1 -nerm                     (default 67 ppd)
 *   flip -r REFERENCE.png -t TEST.png -v 1 -nerm -vc 0.5 0.6 1920    (27.93 ppd)
 *   flip -r REFERENCE.png -t TEST.png -v 1 -nerm -ppd 120
 * which prints "Mean: X" with six decimals. The frames are 256x144 tidepool renders:
 *   tidepool render scenes/pond.json --size 256x144 --frames 48 -o a/%04d.png
 *     (the same with --set render.refraction=1.3, render.refraction=4 and
 *     render.tint_strength=0.45), and scenes/rain.json --frames 40 with --seed 9 or not;
 * pond_f30 is frame 30, pond_f39 and rain_f39 frame 39.
 */
#include <math.h>
#include <string.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "compare/compare.h"
#include "util/png.h"

#define DATA "tests/data/flip/"

typedef struct ref_case {
	const char *a, *b;
	double ppd;   /* 0: the default */
	double mean;  /* NVIDIA's tool */
} ref_case;

static const ref_case REF[] = {
	{ "pond_f30.png", "pond_f30_refraction1.3.png", 0, 0.000882 },
	{ "pond_f39.png", "pond_f39_refraction4.png", 0, 0.003069 },
	{ "rain_f39_seed1.png", "rain_f39_seed9.png", 0, 0.024570 },
	{ "pond_f39.png", "pond_f39_tint0.45.png", 0, 0.227458 },
	{ "pond_f39.png", "pond_f39_tint0.45.png", -1, 0.225953 },   /* -vc 0.5 0.6 1920 */
	{ "rain_f39_seed1.png", "rain_f39_seed9.png", -1, 0.028809 }, /* -vc 0.5 0.6 1920 */
	{ "pond_f39.png", "pond_f39_refraction4.png", 120, 0.002274 },
};

static void load(const char *name, tp_image *img)
{
	char path[256];
	tp_err err;
	snprintf(path, sizeof path, DATA "%s", name);
	memset(img, 0, sizeof *img);
	cr_assert_eq(tp_png_read(path, TP_RGB8, img, &err), 0, "%s", err.msg);
}

static double flip_of(const tp_image *a, const tp_image *b, double ppd, int threads, const cmp_rect *change,
		      float *map_out)
{
	cmp_flip *f;
	tp_err err;
	cr_assert_eq(cmp_flip_create(a->w, a->h, ppd, threads, &f, &err), 0, "%s", err.msg);
	double m = cmp_flip_frame(f, a, b, change, NULL, 0, (int64_t)a->w * a->h, threads);
	if (map_out)
		memcpy(map_out, cmp_flip_map(f), sizeof(float) * (size_t)a->w * (size_t)a->h);
	cmp_flip_destroy(f);
	return m;
}

Test(flip, means_match_nvidia_reference_tool)
{
	for (size_t i = 0; i < sizeof REF / sizeof REF[0]; i++) {
		tp_image a, b;
		load(REF[i].a, &a);
		load(REF[i].b, &b);
		double ppd = REF[i].ppd == 0 ? CMP_FLIP_PPD_DEFAULT
			     : REF[i].ppd < 0 ? cmp_flip_ppd(0.5, 0.6, 1920) : REF[i].ppd;
		double m = flip_of(&a, &b, ppd, 2, NULL, NULL);
		/* The bound is 0.001; we agree to the tool's printed precision (its six
		 * decimals round by up to 5e-7; our polynomials add about 1e-7). */
		cr_assert(fabs(m - REF[i].mean) < 0.001, "%s vs %s: %.7f, NVIDIA %.6f", REF[i].a, REF[i].b, m,
			  REF[i].mean);
		cr_assert(fabs(m - REF[i].mean) < 2e-6, "%s vs %s at %g ppd: %.7f, NVIDIA %.6f", REF[i].a,
			  REF[i].b, ppd, m, REF[i].mean);
		tp_image_free(&a);
		tp_image_free(&b);
	}
}

Test(flip, identical_frames_score_zero_everywhere)
{
	tp_image a;
	load("rain_f39_seed1.png", &a);
	float *map = malloc(sizeof(float) * (size_t)a.w * (size_t)a.h);
	cr_assert_eq(flip_of(&a, &a, CMP_FLIP_PPD_DEFAULT, 1, NULL, map), 0.0);
	for (int i = 0; i < a.w * a.h; i++)
		cr_assert_eq(map[i], 0.0f, "pixel %d: %g", i, map[i]);
	free(map);
	tp_image_free(&a);
}

/* The changed-rectangle shortcut and the thread count change nothing, to the bit. */
Test(flip, same_bits_for_any_thread_count_and_changed_rectangle)
{
	tp_image a, b;
	load("pond_f39.png", &a);
	load("pond_f39_refraction4.png", &b);
	cmp_metrics m;
	cmp_scratch *s;
	tp_err err;
	cr_assert_eq(cmp_scratch_create(a.w, a.h, 1, &s, &err), 0);
	cmp_metrics_basic(&a, &b, 0, (int64_t)a.w * a.h, s, 1, &m);
	cmp_scratch_destroy(s);
	cr_assert(m.bbox.w < a.w / 2, "the test wants a local change (bbox %dx%d)", m.bbox.w, m.bbox.h);
	size_t n = (size_t)a.w * (size_t)a.h;
	float *full = malloc(sizeof(float) * n), *part = malloc(sizeof(float) * n);
	double m1 = flip_of(&a, &b, CMP_FLIP_PPD_DEFAULT, 1, NULL, full);
	double m2 = flip_of(&a, &b, CMP_FLIP_PPD_DEFAULT, 3, &m.bbox, part);
	cr_assert_eq(m1, m2, "%.17g vs %.17g", m1, m2);
	cr_assert_eq(memcmp(full, part, sizeof(float) * n), 0, "error maps differ");
	/* And the shortcut is not vacuous: errors reach beyond the rectangle, within the
	 * filter radius. */
	int outside = 0;
	for (int y = 0; y < a.h; y++)
		for (int x = 0; x < a.w; x++)
			if (full[(size_t)y * a.w + x] > 0 &&
			    (x < m.bbox.x || y < m.bbox.y || x >= m.bbox.x + m.bbox.w || y >= m.bbox.y + m.bbox.h))
				outside++;
	cr_assert_gt(outside, 0);
	free(full);
	free(part);
	tp_image_free(&a);
	tp_image_free(&b);
}

Test(flip, ignored_rectangles_count_zero_and_leave_the_mean_over_the_rest)
{
	tp_image a, b;
	load("pond_f39.png", &a);
	load("pond_f39_tint0.45.png", &b);
	cmp_flip *f;
	tp_err err;
	cr_assert_eq(cmp_flip_create(a.w, a.h, CMP_FLIP_PPD_DEFAULT, 1, &f, &err), 0);
	double all = cmp_flip_frame(f, &a, &b, NULL, NULL, 0, (int64_t)a.w * a.h, 1);
	cmp_rect ig = { 0, 0, 128, 144 };
	int64_t n = cmp_unmasked_pixels(a.w, a.h, &ig, 1);
	double half = cmp_flip_frame(f, &a, &b, NULL, &ig, 1, n, 1);
	const float *map = cmp_flip_map(f);
	for (int y = 0; y < a.h; y++)
		for (int x = 0; x < 128; x++)
			cr_assert_eq(map[y * a.w + x], 0.0f);
	/* A uniform tint change: the right half's mean is close to the whole frame's. */
	cr_assert(fabs(half - all) < 0.02 && half != all, "%g vs %g", half, all);
	cmp_flip_destroy(f);
	tp_image_free(&a);
	tp_image_free(&b);
}

Test(flip, pixels_per_degree_from_viewing_conditions_and_limits)
{
	/* NVIDIA's default: 0.7 m from a 0.7 m wide, 3840-pixel display. */
	cr_assert(fabs(cmp_flip_ppd(0.7, 0.7, 3840) - CMP_FLIP_PPD_DEFAULT) < 1e-9);
	cr_assert(fabs(cmp_flip_ppd(0.5, 0.6, 1920) - 27.925268) < 1e-5);
	cmp_flip *f;
	tp_err err;
	cr_assert_eq(cmp_flip_create(8, 8, 0, 1, &f, &err), TP_EUSAGE);
	cr_assert_eq(cmp_flip_create(8, 8, CMP_FLIP_PPD_MAX * 2, 1, &f, &err), TP_EUSAGE);
	cr_assert_null(f);
}

Test(flip, magma_colours_run_from_black_to_pale_yellow)
{
	uint8_t lo[3], mid[3], hi[3], over[3];
	cmp_flip_magma(0, lo);
	cmp_flip_magma(0.5f, mid);
	cmp_flip_magma(1, hi);
	cmp_flip_magma(7, over);
	cr_assert(lo[0] < 5 && lo[1] < 5 && lo[2] < 10);
	cr_assert(hi[0] > 245 && hi[1] > 245 && hi[2] > 180 && hi[2] < 200);
	cr_assert(mid[0] > 170 && mid[1] < 80, "magma's middle is a red-magenta (%d %d %d)", mid[0], mid[1], mid[2]);
	cr_assert_eq(memcmp(hi, over, 3), 0);
}

/* ---- the command line ---- */

Test(flip, compare_metric_flip_and_max_flip, .timeout = 60)
{
	char out[64];
	tp_tmpdir_make(out, sizeof out, "flipcli");
	char js[128], er[128];
	snprintf(js, sizeof js, "%s/r.json", out);
	snprintf(er, sizeof er, "%s/err", out);
	/* --max-flip measures FLIP and judges by it alone. */
	cr_assert_eq(run_tp(NULL, er, "compare " DATA "pond_f39.png " DATA "pond_f39_refraction4.png --max-flip 0.01 --json %s", js), 0,
		     "%s", slurp(er));
	cr_assert_not_null(strstr(slurp(js), "\"flip\": 0.003069"), "%s", slurp(js));
	cr_assert_not_null(strstr(slurp(js), "\"max_flip\": 0.01"));
	cr_assert_eq(run_tp(NULL, er, "compare " DATA "pond_f39.png " DATA "pond_f39_tint0.45.png --max-flip 0.01 --junit %s", js), 1);
	cr_assert_not_null(strstr(slurp(er), "flip 0.227457 > 0.010000"), "%s", slurp(er));
	cr_assert_not_null(strstr(slurp(js), "flip 0.227457"), "JUnit: %s", slurp(js));
	/* --metric flip only reports it; --viewing-conditions as NVIDIA's -vc. */
	cr_assert_eq(run_tp(NULL, er, "compare " DATA "rain_f39_seed1.png " DATA "rain_f39_seed9.png --metric flip --viewing-conditions 0.5,0.6,1920 --json %s -q", js), 1);
	cr_assert_not_null(strstr(slurp(js), "\"flip\": 0.02880"), "%s", slurp(js));
	cr_assert_not_null(strstr(slurp(js), "\"failed\": [\"max_diff\"]"));
	/* Without it, no FLIP anywhere. */
	cr_assert_eq(run_tp(NULL, er, "compare " DATA "pond_f39.png " DATA "pond_f39_refraction4.png --json %s", js), 1);
	cr_assert_null(strstr(slurp(js), "\"flip\":"));
	cr_assert_not_null(strstr(slurp(js), "\"flip_ppd\": null"));
	/* Usage errors. */
	cr_assert_eq(run_tp(NULL, er, "compare a b --metric psnr"), 2);
	cr_assert_not_null(strstr(slurp(er), "--metric: expected flip"), "%s", slurp(er));
	cr_assert_eq(run_tp(NULL, er, "compare a b --max-flip 1.5"), 2);
	cr_assert_eq(run_tp(NULL, er, "compare a b --ppd 40"), 2);
	cr_assert_not_null(strstr(slurp(er), "need --metric flip"), "%s", slurp(er));
	cr_assert_eq(run_tp(NULL, er, "compare a b --metric flip --viewing-conditions 0.5,0.6"), 2);
	cr_assert_eq(run_tp(NULL, er, "compare a b --metric flip --ppd 0"), 2);
	tp_tmpdir_remove(out);
}
