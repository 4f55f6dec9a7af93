/* Textures end to end: several outputs of one run, tiling under wrap for every
 * height-field solver, seamless loops, flipbook layout, batch naming and contact sheets,
 * --set, and golden hashes of the texture scenes. */
#include <glob.h>
#include <math.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "util/png.h"
#include "scene/scene.h"
#include "solvers/solver.h"

static char dir[64];
static char errpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "tex");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(textures, .init = setup, .fini = teardown, .timeout = 120);

/* A small wrapped rain scene, written into the test directory. */
static const char *write_scene(const char *name, const char *solv, const char *extra)
{
	static char path[160];
	snprintf(path, sizeof path, "%s/%s.json", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f,
		"{ \"format\": \"tidepool-scene/1\", \"size\": [48, 40], \"fps\": 30, \"frames\": 12,\n"
		"  \"seed\": 4, \"solver\": \"%s\", \"boundary\": \"wrap\",\n"
		"  \"emitters\": [ { \"type\": \"rain\", \"rate\": 60, \"radius\": [3, 6], \"strength\": [0.5, 1.5] } ],\n"
		"  \"maps\": { \"caustics\": { \"depth\": 250 } }%s%s }\n",
		solv, extra ? ",\n  " : "", extra ? extra : "");
	fclose(f);
	return path;
}

static tp_image load(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static tp_image load(const char *fmt, ...)
{
	char path[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	tp_image img;
	tp_err err;
	int rc = tp_png_read(path, TP_RGB16, &img, &err);
	cr_assert_eq(rc, 0, "%s", err.msg);
	return img;
}

static double px(const tp_image *img, int x, int y, int c)
{
	return ((const uint16_t *)(const void *)tp_image_row(img, y))[3 * x + c];
}

/* Mean absolute difference of two whole images. */
static double frame_diff(const tp_image *a, const tp_image *b)
{
	double s = 0;
	for (int y = 0; y < a->h; y++)
		for (int x = 0; x < a->w; x++)
			for (int c = 0; c < 3; c++)
				s += fabs(px(a, x, y, c) - px(b, x, y, c));
	return s / (3.0 * a->w * a->h);
}

/* The seam of a 2x2 tiling (last column against the first, last row against the
 * first) over the largest step between neighbouring columns or rows inside. */
static double seam_ratio(const tp_image *img)
{
	double inner = 0, seam = 0;
	for (int x = 0; x < img->w; x++) {
		double d = 0;
		for (int y = 0; y < img->h; y++)
			for (int c = 0; c < 3; c++)
				d += fabs(px(img, x, y, c) - px(img, (x + 1) % img->w, y, c));
		if (x + 1 < img->w)
			inner = fmax(inner, d / img->h);
		else
			seam = fmax(seam, d / img->h);
	}
	for (int y = 0; y < img->h; y++) {
		double d = 0;
		for (int x = 0; x < img->w; x++)
			for (int c = 0; c < 3; c++)
				d += fabs(px(img, x, y, c) - px(img, x, (y + 1) % img->h, c));
		if (y + 1 < img->h)
			inner = fmax(inner, d / img->w);
		else
			seam = fmax(seam, d / img->w);
	}
	return seam / fmax(inner, 1e-9);
}

/* Every height-field solver's frames tile, at the scene's size and at twice it. */
Test(textures, every_heightfield_solver_tiles_in_every_mode)
{
	static const char *const modes[] = { "color", "height", "normal", "caustics" };
	static const char *const sizes[] = { "", "--size 96x80" };
	int tested = 0;
	for (int i = 0; tp_solvers[i]; i++) {
		if (!(tp_solvers[i]->caps & TP_SOLVER_HEIGHTFIELD))
			continue;
		const char *sc = write_scene("tile", tp_solvers[i]->name, NULL);
		for (int z = 0; z < 2; z++) {
			cr_assert_eq(run_tp(NULL, errpath,
					    "render %s -q -y --frames 8 %s -o color=%s/c%%d.png -o height=%s/h%%d.png "
					    "-o normal=%s/n%%d.png -o caustics=%s/k%%d.png",
					    sc, sizes[z], dir, dir, dir, dir),
				     0, "%s: %s", tp_solvers[i]->name, slurp(errpath));
			for (int m = 0; m < 4; m++) {
				tp_image img = load("%s/%c7.png", dir, modes[m][0] == 'c' && m == 3 ? 'k' : modes[m][0]);
				cr_assert_eq(img.w, z ? 96 : 48);
				double r = seam_ratio(&img);
				/* a periodic picture's seam is one more step among its neighbours;
				 * a real seam is several times the largest (maps.c's own test) */
				cr_assert_leq(r, 1.25, "%s %s %s: the 2x2 seam is %.2f x the largest interior step",
					      tp_solvers[i]->name, modes[m], sizes[z], r);
				tp_image_free(&img);
			}
		}
		tested++;
	}
	cr_assert_geq(tested, 2);
}

/* Loop of 24 frames cut from a ripple run: the step from the last frame to the first is
 * no larger than the largest step between neighbouring frames. Without the cross-fade
 * the same measure finds the jump. */
static void loop_steps(double crossfade, const char *size, double *wrap, double *max_step)
{
	char extra[160];
	snprintf(extra, sizeof extra, "\"loop\": { \"duration\": 0.8, \"start\": 0.5, \"crossfade\": %g }", crossfade);
	const char *sc = write_scene("loop", "ripple", extra);
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -y %s -o height=%s/l%%02d.png", sc, size, dir), 0,
		     "%s", slurp(errpath));
	tp_image f[24];
	for (int k = 0; k < 24; k++)
		f[k] = load("%s/l%02d.png", dir, k);
	*max_step = 0;
	for (int k = 0; k + 1 < 24; k++)
		*max_step = fmax(*max_step, frame_diff(&f[k], &f[k + 1]));
	*wrap = frame_diff(&f[23], &f[0]);
	for (int k = 0; k < 24; k++)
		tp_image_free(&f[k]);
	char cmd[160];
	snprintf(cmd, sizeof cmd, "test ! -e %s/l24.png", dir);
	cr_assert_eq(system(cmd), 0, "a 0.8 s loop at 30 fps is 24 frames");
}

Test(textures, loops_wrap_as_smoothly_as_they_run)
{
	double wrap, step;
	loop_steps(0.3, "", &wrap, &step);
	cr_assert_leq(wrap, step, "last -> first %.1f, largest neighbour step %.1f", wrap, step);
	/* at twice the size: twice the steps per frame, the same loop */
	loop_steps(0.3, "--scale 2", &wrap, &step);
	cr_assert_leq(wrap, step, "x2: last -> first %.1f, largest neighbour step %.1f", wrap, step);
	loop_steps(0, "", &wrap, &step);
	cr_assert_gt(wrap, 1.5 * step, "without a cross-fade: last -> first %.1f, steps up to %.1f", wrap, step);
}

Test(textures, flipbook_cells_are_the_frames_left_to_right_then_down)
{
	const char *sc = write_scene("fb", "ripple", NULL);
	/* 12 frames into a 3x2 atlas: cell i is frame 2i; same size cells are exact copies. */
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -o normal=%s/f%%02d.png -o normal=%s/atlas.png --flipbook 3x2",
			    sc, dir, dir),
		     0, "%s", slurp(errpath));
	tp_image atlas = load("%s/atlas.png", dir);
	cr_assert_eq(atlas.w, 3 * 48);
	cr_assert_eq(atlas.h, 2 * 40);
	for (int i = 0; i < 6; i++) {
		tp_image f = load("%s/f%02d.png", dir, 2 * i);
		int cx = (i % 3) * 48, cy = (i / 3) * 40;
		for (int y = 0; y < 40; y++)
			cr_assert_eq(memcmp(tp_image_row(&atlas, cy + y) + 6 * cx, tp_image_row(&f, y), 6 * 48), 0,
				     "cell %d row %d is not frame %d", i, y, 2 * i);
		tp_image_free(&f);
	}
	tp_image_free(&atlas);
}

Test(textures, flipbook_sizes_power_of_two_and_limits)
{
	const char *sc = write_scene("fbp", "hooke",
				     "\"flipbook\": { \"grid\": [3, 2], \"frame\": [20, 20], \"pot\": true }");
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -o caustics=%s/pot.png", sc, dir), 0, "%s", slurp(errpath));
	tp_image a = load("%s/pot.png", dir);
	cr_assert_eq(a.w, 64, "60 wide rounds up to 64");
	cr_assert_eq(a.h, 64, "40 high rounds up to 64");
	tp_image_free(&a);
	/* From the command line; resampled cells keep unit normals. */
	const char *plain = write_scene("fbn", "hooke", NULL);
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -o normal=%s/n.png --flipbook 2x2 --frame-size 17x13", plain,
			    dir),
		     0, "%s", slurp(errpath));
	tp_image n = load("%s/n.png", dir);
	cr_assert_eq(n.w, 34);
	cr_assert_eq(n.h, 26);
	for (int y = 0; y < n.h; y++)
		for (int x = 0; x < n.w; x++) {
			double len = 0;
			for (int c = 0; c < 3; c++)
				len += pow(px(&n, x, y, c) / 65535.0 * 2 - 1, 2);
			cr_assert(fabs(sqrt(len) - 1) < 0.012, "|n| = %g at %d,%d", sqrt(len), x, y);
		}
	tp_image_free(&n);
	/* Too few frames for the grid, and absurd atlases, are refused before rendering. */
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -o %s/x.png --flipbook 4x4", sc, dir), 2);
	cr_assert(strstr(slurp(errpath), "16 cells but the render has 12 frames") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -o %s/x.png --flipbook 3x2 --frame-size 8000x8000", sc, dir), 2);
	cr_assert(strstr(slurp(errpath), "the largest texture GPUs take") != NULL, "%s", slurp(errpath));
}

Test(textures, set_changes_values_and_reports_bad_ones_in_place)
{
	const char *sc = write_scene("set", "ripple", NULL);
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q --set params.damping=99 -o null", sc), 3);
	cr_assert(strstr(slurp(errpath), "set.json:1:") != NULL && strstr(slurp(errpath), "params.damping") != NULL &&
		  strstr(slurp(errpath), "(got 99)") != NULL,
		  "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q --set emitters.3.rate=1 -o null", sc), 3);
	cr_assert(strstr(slurp(errpath), "has no element 3") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q --set nonsense -o null", sc), 2);
	/* Strings need no JSON quotes; frames and seed change what is rendered. */
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q --set boundary=reflect --set frames=3 -o %s/s%%d.png", sc, dir),
		     0, "%s", slurp(errpath));
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test -e %s/s2.png && test ! -e %s/s3.png", dir, dir);
	cr_assert_eq(system(cmd), 0);
}

Test(textures, batch_names_every_combination_and_makes_a_contact_sheet)
{
	const char *sc = write_scene("pool", "ripple", "\"outputs\": [ { \"mode\": \"caustics\", \"path\": \"c%d.png\" }, "
						      "{ \"mode\": \"height\", \"path\": \"h%d.png\" } ]");
	cr_assert_eq(run_tp(NULL, errpath, "batch %s -q --frames 2 --vary seed=1..2 --vary params.damping=3,4 -O %s/b",
			    sc, dir),
		     0, "%s", slurp(errpath));
	const char *names[] = { "pool_seed1_damping3", "pool_seed1_damping4", "pool_seed2_damping3",
				"pool_seed2_damping4" };
	for (int i = 0; i < 4; i++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd, "test -e %s/b/%s/c1.png && test -e %s/b/%s/h1.png", dir, names[i], dir, names[i]);
		cr_assert_eq(system(cmd), 0, "%s", names[i]);
	}
	/* Variants differ by what they vary (seed 1 vs 2 with the same damping). */
	char a[256], b[256];
	snprintf(a, sizeof a, "%s/b/%s/c1.png", dir, names[0]);
	snprintf(b, sizeof b, "%s/b/%s/c1.png", dir, names[2]);
	cr_assert(!files_equal(a, b));
	/* A 2x2 sheet: 192-pixel boxes (48x40 frames: 160 high), labels of two 15-pixel
	 * lines ("seed=1", "damping=3") and 2 pixels, 8-pixel gaps. */
	tp_image sheet = load("%s/b/contact.png", dir);
	cr_assert_eq(sheet.w, 2 * (192 + 8) + 8);
	cr_assert_eq(sheet.h, 2 * (160 + 2 * 15 + 2 + 8) + 8);
	tp_image_free(&sheet);

	/* A pattern; names that collide are refused before anything renders. */
	cr_assert_eq(run_tp(NULL, errpath, "batch %s -q --frames 2 --vary seed=5,6 --name v{index}-s{seed} -O %s/p",
			    sc, dir),
		     0, "%s", slurp(errpath));
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test -d %s/p/v1-s5 && test -d %s/p/v2-s6", dir, dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(run_tp(NULL, errpath, "batch %s -q --vary seed=1..3 --name same -O %s/q", sc, dir), 2);
	cr_assert(strstr(slurp(errpath), "both named 'same'") != NULL, "%s", slurp(errpath));
	snprintf(cmd, sizeof cmd, "test ! -e %s/q", dir);
	cr_assert_eq(system(cmd), 0, "nothing is created for a refused batch");
	/* A bad value stops the batch up front too (exit 3), naming the variant. */
	cr_assert_eq(run_tp(NULL, errpath, "batch %s -q --vary params.damping=4,99 -O %s/r", sc, dir), 3);
	cr_assert(strstr(slurp(errpath), "variant pool_damping99") != NULL, "%s", slurp(errpath));
}

/* ---- golden hashes of the texture scenes ---- */

/* What scripts/golden-textures.sh renders with (the test checks it agrees). */
#define GOLDEN_TEX_ARGS "-q --size 64x64 --range 0-5"

Test(textures, texture_scenes_match_their_golden_hashes, .timeout = 300)
{
	/* One manifest per scene and mode of its "outputs". */
	glob_t g;
	cr_assert_eq(glob("scenes/textures/*.json", 0, NULL, &g), 0);
	cr_assert_geq(g.gl_pathc, 3u);
	int checked = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char name[128];
		const char *base = strrchr(g.gl_pathv[i], '/') + 1;
		snprintf(name, sizeof name, "%.*s", (int)(strlen(base) - 5), base);
		scene *sc;
		tp_err err;
		cr_assert_eq(scene_load(g.gl_pathv[i], NULL, tp_solvers, &sc, &err), 0, "%s", err.msg);
		for (int m = 0; m < sc->noutputs; m++) {
			static const char *const modes[] = { "color", "height", "normal", "caustics", "particles",
							     "displacement", "foam" };
			const char *mode = modes[sc->outputs[m].mode];
			char golden[256], got[256];
			snprintf(golden, sizeof golden, "tests/golden/textures/%s-%s.manifest", name, mode);
			snprintf(got, sizeof got, "%s/%s-%s.manifest", dir, name, mode);
			cr_assert_eq(run_tp(NULL, errpath, "render %s " GOLDEN_TEX_ARGS " --threads 2 -o %s=null --hash %s",
					    g.gl_pathv[i], mode, got),
				     0, "%s: %s", name, slurp(errpath));
			/* the frames: a render's manifest also records its fingerprint (farm.md) */
			cr_expect(run_tp(NULL, errpath, "compare %s %s -q", golden, got) == 0,
				  "%s in %s mode differs from %s (if intended: make golden)", g.gl_pathv[i],
				  mode, golden);
			checked++;
		}
		scene_destroy(sc);
	}
	globfree(&g);
	cr_assert_geq(checked, 3);
	const char *script = slurp("scripts/golden-textures.sh");
	cr_assert(strstr(script, "ARGS=\"" GOLDEN_TEX_ARGS "\"") != NULL,
		  "scripts/golden-textures.sh must render with " GOLDEN_TEX_ARGS);
}

/* Height maps never clip silently (issue 28): pond.json at 640x360 and at 1920x1080 stays
 * in range with the default scale (it reached -32768 by frame 14 at 1080p when the integer
 * solvers' stored units, finer at larger sizes, were written raw), and --stats says so for
 * every frame; a scale that does clip is said once on stderr and counted in --stats. */
Test(textures, height_maps_say_when_they_clip, .timeout = 120)
{
	char cdir[64];
	tp_tmpdir_make(cdir, sizeof cdir, "clip");
	char cerr[256], stats[256];
	snprintf(cerr, sizeof cerr, "%s/err", cdir);
	snprintf(stats, sizeof stats, "%s/stats", cdir);
	const char *sizes[] = {"640x360", "1920x1080"};
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(run_tp(NULL, cerr,
				    "render scenes/pond.json -q -y --size %s --frames 20 -o "
				    "height=null --stats %s",
				    sizes[i], stats),
			     0, "%s", slurp(cerr));
		cr_assert_null(strstr(slurp(cerr), "clips"), "%s: %s", sizes[i],
			       slurp(cerr));
		const char *st = slurp(stats);
		int lines = 0;
		for (const char *p = st; (p = strstr(p, "\"height_clipped\":0,")); p++)
			lines++;
		cr_assert_eq(lines, 20, "%s: every frame says 0 pixels clipped:\n%s", sizes[i], st);
	}
	/* 1e6 levels per height unit: waves beyond 0.033 units clip, from the first drop on */
	cr_assert_eq(run_tp(NULL, cerr,
			    "render scenes/pond.json -q -y --frames 12 -o height=null --stats %s "
			    "--set maps.height.scale=1000000",
			    stats),
		     0, "%s", slurp(cerr));
	const char *e = slurp(cerr);
	const char *w = strstr(e, "warning: the height map clips");
	cr_assert_not_null(w, "%s", e);
	cr_assert_null(strstr(w + 1, "warning: the height map clips"), "said once: %s", e);
	cr_assert_not_null(strstr(e, "maps.height.scale"), "%s", e);
	const char *st = slurp(stats);
	cr_assert_not_null(strstr(st, "\"frame\":11,"), "%s", st);
	cr_assert_null(strstr(strstr(st, "\"frame\":11,"), "\"height_clipped\":0,"),
		       "the last frame clips: %s", st);
	tp_tmpdir_remove(cdir);
}

/* --frames N on a loop made another, N-frame loop (issue 41): it is refused, naming
 * --range and loop.duration; the loop's own length is no change and is taken. */
Test(textures, frames_on_a_loop_is_refused_naming_range)
{
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render scenes/textures/ocean_choppy.json --size 32x32 --frames 4 -q -y "
		       "-o displacement=%s/d%%d.exr",
		       dir),
		2);
	const char *e = slurp(errpath);
	cr_assert(strstr(e, "ocean_choppy.json: --frames 4: the scene is a 64-frame loop "
			    "(\"loop\": 4 s at 16 fps)"),
		  "%s", e);
	cr_assert(strstr(e, "--range A-B (0-63)") && strstr(e, "--set loop.duration=SECONDS"), "%s",
		  e);
	cr_assert(strchr(e, '\n') == strrchr(e, '\n'), "one line: %s", e);
	char none[160];
	snprintf(none, sizeof none, "test ! -e %s/d0.exr", dir);
	cr_assert_eq(system(none), 0, "nothing is written");
	cr_assert_eq(
		run_tp(NULL, errpath, "validate scenes/textures/caustics_loop.json --frames 1"), 2);
	cr_assert_eq(
		run_tp(NULL, errpath, "validate scenes/textures/ocean_choppy.json --frames 64"), 0,
		"%s", slurp(errpath));
	/* the shorter loop, as the message says */
	cr_assert_eq(run_tp(NULL, errpath,
			    "render scenes/textures/ocean_choppy.json --size 32x32 -q -y "
			    "--set loop.duration=0.25 -o displacement=%s/s%%d.exr",
			    dir),
		     0, "%s", slurp(errpath));
	char p[320];
	snprintf(p, sizeof p, "test -e %s/s3.exr && test ! -e %s/s4.exr", dir, dir);
	cr_assert_eq(system(p), 0, "a 0.25 s loop at 16 fps is 4 frames");
}

/* Every padding pixel of the cell whose frame is at (x0, y0), w x h, repeats the frame's
 * pixel at its offset wrapped (wrap) or clamped into the frame. */
static void check_padding(const tp_image *a, int x0, int y0, int w, int h, int p, int wrap)
{
	for (int y = -p; y < h + p; y++)
		for (int x = -p; x < w + p; x++) {
			if (x >= 0 && x < w && y >= 0 && y < h)
				continue;
			const int sx = wrap ? (x + w) % w : x < 0 ? 0 : x >= w ? w - 1 : x;
			const int sy = wrap ? (y + h) % h : y < 0 ? 0 : y >= h ? h - 1 : y;
			for (int c = 0; c < 3; c++)
				cr_assert_eq(px(a, x0 + x, y0 + y, c), px(a, x0 + sx, y0 + sy, c),
					     "padding at %d,%d of the cell at %d,%d is not its "
					     "pixel %d,%d",
					     x, y, x0, y0, sx, sy);
		}
}

/* --flipbook-padding P: each frame sits in a slot P pixels larger on every side, the
 * border from the frame's own wrap (a tiling scene) or its edges (one that does not);
 * with --pot the atlas is still a power of two. */
Test(textures, flipbook_padding_wraps_tiling_maps_and_extends_the_others)
{
	for (int wrap = 1; wrap >= 0; wrap--) {
		const char *sc = write_scene(wrap ? "pw" : "pc", "ripple",
					     wrap ? NULL : "\"boundary\": \"reflect\"");
		if (!wrap) { /* the scene's own boundary: write_scene puts wrap first */
			char cmd[512];
			snprintf(cmd, sizeof cmd, "sed -i 's/\"boundary\": \"wrap\",//' %s", sc);
			cr_assert_eq(system(cmd), 0);
		}
		cr_assert_eq(
			run_tp(NULL, errpath,
			       "render %s -q -y -o normal=%s/f%d_%%02d.png -o normal=%s/a%d.png "
			       "--flipbook 3x2 --flipbook-padding 3",
			       sc, dir, wrap, dir, wrap),
			0, "%s", slurp(errpath));
		tp_image a = load("%s/a%d.png", dir, wrap);
		cr_assert_eq(a.w, 3 * (48 + 6));
		cr_assert_eq(a.h, 2 * (40 + 6));
		for (int i = 0; i < 6; i++) {
			const int x0 = (i % 3) * 54 + 3, y0 = (i / 3) * 46 + 3;
			tp_image f = load("%s/f%d_%02d.png", dir, wrap, 2 * i);
			for (int y = 0; y < 40; y++)
				cr_assert_eq(memcmp(tp_image_row(&a, y0 + y) + 6 * x0,
						    tp_image_row(&f, y), 6 * 48),
					     0, "cell %d row %d is not frame %d", i, y, 2 * i);
			tp_image_free(&f);
			check_padding(&a, x0, y0, 48, 40, 3, wrap);
		}
		tp_image_free(&a);
		char rec[160];
		snprintf(rec, sizeof rec, "info --json %s/a%d.png", dir, wrap);
		cr_assert_eq(run_tp(errpath, NULL, "%s", rec), 0);
		cr_assert(strstr(slurp(errpath), "\"grid\":[3,2],\"cell\":[48,40],\"padding\":3"),
			  "%s", slurp(errpath));
	}
	/* --pot: 3 x 54 = 162 and 2 x 46 = 92 round up to 256 x 128; slots of 85 x 64 hold
	 * cells of 79 x 58 (resampled), still padded from their own wrap */
	const char *sc = write_scene("pp", "ripple", NULL);
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render %s -q -y -o height=%s/pot.png --flipbook 3x2 --flipbook-padding 3 "
		       "--pot",
		       sc, dir),
		0, "%s", slurp(errpath));
	tp_image a;
	tp_err err;
	char path[256];
	snprintf(path, sizeof path, "%s/pot.png", dir);
	cr_assert_eq(tp_png_read(path, TP_RGB16, &a, &err), 0, "%s", err.msg);
	cr_assert_eq(a.w, 256);
	cr_assert_eq(a.h, 128);
	for (int i = 0; i < 6; i++)
		check_padding(&a, (i % 3) * 85 + 3, (i / 3) * 64 + 3, 79, 58, 3, 1);
	tp_image_free(&a);
	/* padding without a flipbook says so */
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -y -o %s/x%%d.png --flipbook-padding 2",
			    sc, dir),
		     2);
	cr_assert(strstr(slurp(errpath), "--flipbook-padding: no output is a flipbook"), "%s",
		  slurp(errpath));
}
