/* Texture outputs from the command line: a bare -o keeps the mode of the scene's outputs,
 * and height maps can be auto-levelled over the whole render. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "util/png.h"

static char dir[64], errpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "levels");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(levels, .init = setup, .fini = teardown);

Test(levels, bare_output_keeps_the_mode_of_the_scenes_output)
{
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render scenes/textures/caustics_loop.json -q --range 0-0 -o %s/bare.png",
		       dir),
		0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render scenes/textures/caustics_loop.json -q --range 0-0 -o "
			    "caustics=%s/k.png",
			    dir),
		     0, "%s", slurp(errpath));
	char a[256], b[256];
	snprintf(a, sizeof a, "%s/bare.png", dir);
	snprintf(b, sizeof b, "%s/k.png", dir);
	cr_assert(files_equal(a, b), "a bare -o renders caustics like the scene's output");
	tp_image img;
	tp_err err;
	cr_assert_eq(tp_png_read(a, TP_GRAY8, &img, &err), 0, "%s", err.msg);
	tp_image_free(&img);
	/* Outputs of two modes: a bare -o must say which. */
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render scenes/textures/height_sequence.json -q --range 0-0 -o %s/h.png",
		       dir),
		2);
	cr_assert(strstr(slurp(errpath), "the scene has outputs of modes height, normal; say which "
					 "this one is with -o MODE="),
		  "%s", slurp(errpath));
	cr_assert(access(a, F_OK) == 0);
}

/* Largest |v - 32768| over frames 0..n-1 of dir/NAME%02d.png, and whether frame 0 equals
 * the same frame of another directory. */
static int spread(const char *name, int n)
{
	int top = 0;
	for (int k = 0; k < n; k++) {
		char p[256];
		snprintf(p, sizeof p, "%s/%s%02d.png", dir, name, k);
		tp_image img;
		tp_err err;
		cr_assert_eq(tp_png_read(p, TP_GRAY16, &img, &err), 0, "%s", err.msg);
		for (int y = 0; y < img.h; y++) {
			const uint16_t *row = (const uint16_t *)tp_image_row(&img, y);
			for (int x = 0; x < img.w; x++) {
				int d = abs((int)row[x] - 32768);
				top = d > top ? d : top;
			}
		}
		tp_image_free(&img);
	}
	return top;
}

/* height_sequence.json's loop cut to 12 and 3 frames (what --frames made of it before
 * --frames was refused on loops: the cross-fade as long as the loop) */
#define L12 "--set loop.duration=0.4 --set loop.crossfade=0.4"
#define L3  "--set loop.duration=0.1 --set loop.crossfade=0.1"

Test(levels, auto_height_scale_uses_the_full_range_with_one_scale)
{
	const char *sc = "scenes/textures/height_sequence.json";
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q " L12 " -o height=%s/d%%02d.png", sc, dir),
		     0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s " L12 " --threads 1 --set maps.height.scale=auto -o "
			    "height=%s/a%%02d.png",
			    sc, dir),
		     0, "%s", slurp(errpath));
	cr_assert(strstr(slurp(errpath), "height maps levelled over 12 frames"), "%s",
		  slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s -q " L12 " --threads 2 --set maps.height.scale=auto -o "
			    "height=%s/b%%02d.png",
			    sc, dir),
		     0, "%s", slurp(errpath));
	int def = spread("d", 12), lev = spread("a", 12);
	cr_expect_lt(def, 8000, "the default leaves most of the range unused (%d)", def);
	cr_expect_eq(lev, 32767, "auto puts the largest height at the end of the range");
	for (int k = 0; k < 12; k++) {
		char a[256], b[256];
		snprintf(a, sizeof a, "%s/a%02d.png", dir, k);
		snprintf(b, sizeof b, "%s/b%02d.png", dir, k);
		cr_assert(files_equal(a, b), "frame %d: same bytes for 1 and 2 threads", k);
	}
	/* One scale for the whole render: a shorter render levels to its own, smaller peak,
	 * so its first frame comes out brighter or darker than the longer one's. */
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s -q " L3 " --set maps.height.scale=auto -o "
			    "height=%s/s%%02d.png",
			    sc, dir),
		     0, "%s", slurp(errpath));
	cr_expect_eq(spread("s", 3), 32767);
	char a[256], s[256];
	snprintf(a, sizeof a, "%s/a00.png", dir);
	snprintf(s, sizeof s, "%s/s00.png", dir);
	cr_expect(!files_equal(a, s) || spread("a", 3) == 32767);
	/* "auto" is the only word the scale takes. */
	cr_assert_eq(run_tp(NULL, errpath, "validate %s --set maps.height.scale=max", sc), 3);
	cr_assert(strstr(slurp(errpath), "maps.height.scale (from --set): must be a number of "
					 "levels per height unit or \"auto\""),
		  "%s", slurp(errpath));
}
