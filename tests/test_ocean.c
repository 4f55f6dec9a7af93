/* Choppy ocean maps (airy's ambient choppiness, foam, TMA) and their OpenEXR outputs:
 * crests sharpen, the displaced grid does not fold where there is no foam, foam and
 * displacement loop bit for bit and do not depend on the thread count or on how the run
 * got to a frame, TMA needs a depth, and the EXR files read back by independent readers
 * (exrheader; OpenImageIO through tests/exr_check.py) hold the PNG's values, tile and loop. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "scene/scene.h"
#include "sim/loop.h"
#include "sim/stepper.h"
#include "solvers/solver.h"

static char dir[64], errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "ocean");
	snprintf(errpath, sizeof errpath, "%s/err.txt", dir);
	snprintf(outpath, sizeof outpath, "%s/out.txt", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(ocean, .init = setup, .fini = teardown, .timeout = 300);

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

/* A wrapped sea of w x h pixels, 0.1 m each, with `extra` members in "ambient". */
static const char *sea(int w, int h, const char *extra, const char *more)
{
	static char text[2048];
	snprintf(text, sizeof text,
		 "{\"format\": \"tidepool-scene/1\", \"size\": [%d, %d], \"fps\": 16, "
		 "\"frames\": 4, \"seed\": 5, \"solver\": \"airy\", \"boundary\": \"wrap\", "
		 "\"params\": {\"metres\": 0.1, \"damping\": 0%s}, "
		 "\"ambient\": {\"wind\": 9, \"fetch\": 3000, \"direction\": 30, "
		 "\"amplitude\": 2, \"shortest\": 0.5%s}}",
		 w, h, more, extra);
	return text;
}

/* The fields of a surface, copied (n samples each; NULL where the surface has none). */
typedef struct fields {
	int w, h;
	float *data, *dx, *dy, *lag, *foam;
} fields;

static float *copy(const float *src, size_t n)
{
	if (!src)
		return NULL;
	float *d = malloc(n * sizeof *d);
	cr_assert_not_null(d);
	memcpy(d, src, n * sizeof *d);
	return d;
}

static void grab(const tp_surface *s, fields *f)
{
	const size_t n = (size_t)s->w * s->h;
	cr_assert_eq(s->stride, s->w);
	f->w = s->w;
	f->h = s->h;
	f->data = copy(s->data, n);
	f->dx = copy(s->dx, n);
	f->dy = copy(s->dy, n);
	f->lag = copy(s->lag, n);
	f->foam = copy(s->foam, n);
}

static void drop(fields *f)
{
	free(f->data), free(f->dx), free(f->dy), free(f->lag), free(f->foam);
	memset(f, 0, sizeof *f);
}

static int same(const float *a, const float *b, size_t n)
{
	return (!a && !b) || (a && b && !memcmp(a, b, n * sizeof *a));
}

static int same_fields(const fields *a, const fields *b)
{
	const size_t n = (size_t)a->w * a->h;
	return same(a->data, b->data, n) && same(a->dx, b->dx, n) && same(a->dy, b->dy, n) &&
	       same(a->lag, b->lag, n) && same(a->foam, b->foam, n);
}

/* Frame `frame` of a scene; `every` reads the surface at every frame on the way. */
static void run_to(const scene *sc, int frame, int every, fields *out)
{
	stepper *st;
	tp_err err;
	tp_surface s;
	cr_assert_eq(stepper_create(sc, omp_get_max_threads(), &st, &err), 0, "%s", err.msg);
	for (int f = 0; f <= frame; f++) {
		cr_assert_eq(stepper_next(st, &err), 0, "%s", err.msg);
		if (every)
			stepper_surface(st, &s);
	}
	stepper_surface(st, &s);
	grab(&s, out);
	stepper_destroy(st);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* How much more curved the crests are than the troughs: the mean Laplacian of the
 * highest 5% of a w x w periodic field over that of its lowest 5%, sign turned (about 1
 * for linear waves, whose crests and troughs are alike). */
static double crest_over_trough(const float *v, int w)
{
	const size_t n = (size_t)w * w;
	float *s = malloc(n * sizeof *s);
	cr_assert_not_null(s);
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_float);
	const float lo = s[n / 20], hi = s[n - n / 20];
	free(s);
	double top = 0, bottom = 0;
	for (int y = 0; y < w; y++)
		for (int x = 0; x < w; x++) {
			const float c = v[y * w + x];
			const double lap = v[y * w + (x + 1) % w] + v[y * w + (x + w - 1) % w] +
					   v[((y + 1) % w) * w + x] + v[((y + w - 1) % w) * w + x] -
					   4.0 * c;
			if (c >= hi)
				top += lap;
			if (c <= lo)
				bottom += lap;
		}
	return -top / bottom;
}

/* Linear waves have crests as round as their troughs; choppy ones sharp crests and flat
 * troughs, and the displacement moves points towards the crests. */
Test(ocean, choppy_crests_are_sharp_and_troughs_flat)
{
	fields flat, chop;
	scene *a = load_ok("flat", sea(256, 256, "", ""));
	scene *b = load_ok("chop", sea(256, 256, ", \"choppiness\": 1.5", ""));
	run_to(a, 2, 0, &flat);
	run_to(b, 2, 0, &chop);
	const size_t n = 256 * 256;
	cr_assert_null(flat.dx, "no choppiness, no displacement");
	cr_assert_not_null(chop.dx);
	cr_assert(same(flat.data, chop.lag, n), "the undisplaced heights are the linear sea's");
	double r0 = crest_over_trough(flat.data, 256), r1 = crest_over_trough(chop.data, 256);
	cr_assert(r0 > 0.8 && r0 < 1.25, "linear waves: crests %.2f x as curved as troughs", r0);
	cr_assert_gt(r1, 2, "choppy waves: crests only %.2f x as curved as troughs", r1);
	/* the highest point of the undisplaced grid: its neighbours across the crest move
	 * towards it (the crest narrows), along the displacement's own axis */
	size_t top = 0;
	for (size_t i = 0; i < n; i++)
		top = chop.lag[i] > chop.lag[top] ? i : top;
	int x = (int)(top % 256), y = (int)(top / 256);
	double conv = 0;
	for (int d = 1; d <= 3; d++) {
		size_t l = (size_t)y * 256 + (size_t)((x - d + 256) % 256);
		size_t r = (size_t)y * 256 + (size_t)((x + d) % 256);
		size_t u = (size_t)((y - d + 256) % 256) * 256 + (size_t)x;
		size_t w = (size_t)((y + d) % 256) * 256 + (size_t)x;
		conv += (chop.dx[l] - chop.dx[r]) + (chop.dy[u] - chop.dy[w]);
	}
	cr_assert_gt(conv, 0, "points around the highest crest move away from it (%g)", conv);
	drop(&flat);
	drop(&chop);
	scene_destroy(a);
	scene_destroy(b);
}

/* Moves each point of the grid by the displacement and checks every cell's two triangles
 * keep their orientation (no fold) wherever none of its corners has foam. Returns the
 * folded cells; *bare those of them without foam. */
static int folds(const fields *f, int *bare)
{
	const int w = f->w, h = f->h;
	int n = 0;
	*bare = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const int x1 = (x + 1) % w, y1 = (y + 1) % h;
			const size_t c[4] = {(size_t)y * w + x, (size_t)y * w + x1,
					     (size_t)y1 * w + x1, (size_t)y1 * w + x};
			const double ox[4] = {0, 1, 1, 0}, oy[4] = {0, 0, 1, 1};
			double px[4], py[4];
			int foam = 0;
			for (int k = 0; k < 4; k++) {
				px[k] = ox[k] + f->dx[c[k]];
				py[k] = oy[k] + f->dy[c[k]];
				foam |= f->foam[c[k]] > 0;
			}
			/* signed areas of (0, 1, 2) and (0, 2, 3) */
			double a1 = (px[1] - px[0]) * (py[2] - py[0]) -
				    (px[2] - px[0]) * (py[1] - py[0]);
			double a2 = (px[2] - px[0]) * (py[3] - py[0]) -
				    (px[3] - px[0]) * (py[2] - py[0]);
			if (a1 <= 0 || a2 <= 0) {
				n++;
				*bare += !foam;
			}
		}
	return n;
}

Test(ocean, the_displaced_grid_folds_only_under_foam)
{
	/* the example ocean as written (choppiness 1, default foam), three frames */
	scene *sc = NULL;
	tp_err err;
	cr_assert_eq(scene_load("scenes/textures/ocean_choppy.json", NULL, tp_solvers, &sc, &err), 0, "%s",
		     err.msg);
	int any_foam = 0;
	for (int f = 0; f < 3; f++) {
		fields a;
		run_to(sc, f * 20, 0, &a);
		int bare, n = folds(&a, &bare);
		cr_assert_eq(bare, 0, "frame %d: %d of %d folded cells have no foam", f * 20, bare,
			     n);
		for (int i = 0; i < a.w * a.h; i++)
			any_foam |= a.foam[i] > 0;
		drop(&a);
	}
	cr_assert(any_foam, "the example has no foam at all");
	scene_destroy(sc);
	/* the check finds folds: very choppy waves with foam only in the deepest folds */
	scene *b = load_ok(
		"steep", sea(128, 128, ", \"choppiness\": 3, \"foam\": {\"threshold\": -0.6}", ""));
	fields s;
	run_to(b, 1, 0, &s);
	int bare, n = folds(&s, &bare);
	cr_assert_gt(bare, 0, "choppiness 3: %d folds, none outside the foam", n);
	drop(&s);
	scene_destroy(b);
}

/* Foam is a function of the frames before it: reading every frame (the ring filled as it
 * goes) and jumping to the last (filled at once) give the same bits, with 1 or 2
 * threads. */
Test(ocean, foam_does_not_depend_on_the_path_or_the_threads)
{
	static const char *const bnd[] = {"", ", \"boundary\": \"reflect\""};
	for (int b = 0; b < 2; b++) {
		char text[2048];
		snprintf(text, sizeof text, "%s", sea(96, 64, ", \"choppiness\": 2", ""));
		if (b) /* a reflecting pool: the waves on their own FFT grid */
			strcpy(strstr(text, ", \"boundary\": \"wrap\""),
			       ", \"boundary\": \"reflect\", \"params\": {\"metres\": 0.1, "
			       "\"damping\": 0}, "
			       "\"ambient\": {\"wind\": 9, \"fetch\": 3000, \"amplitude\": 2, "
			       "\"shortest\": 0.5, \"choppiness\": 2}}");
		scene *sc = load_ok("path", text);
		fields walk, jump, one;
		const int keep = omp_get_max_threads();
		omp_set_num_threads(2);
		run_to(sc, 9, 1, &walk);
		run_to(sc, 9, 0, &jump);
		omp_set_num_threads(1);
		run_to(sc, 9, 1, &one);
		omp_set_num_threads(keep);
		cr_assert(same_fields(&walk, &jump), "%s: a jump to frame 9 differs", bnd[b]);
		cr_assert(same_fields(&walk, &one), "%s: 1 and 2 threads differ", bnd[b]);
		double foam = 0;
		for (int i = 0; i < walk.w * walk.h; i++)
			foam += walk.foam[i];
		cr_assert_gt(foam, 1, "%s: no foam proves nothing (%g)", bnd[b], foam);
		drop(&walk), drop(&jump), drop(&one);
		scene_destroy(sc);
	}
}

/* Through the loop machinery: frames F and F + 1 are frames 0 and 1, bit for bit, in
 * every field; and the field moves. */
Test(ocean, foam_and_displacement_loop_exactly)
{
	scene *sc = load_ok("loop", "{\"format\": \"tidepool-scene/1\", \"size\": [64, 48], "
				    "\"fps\": 12, \"substeps\": 2, \"solver\": \"airy\", "
				    "\"boundary\": \"wrap\", \"params\": {\"metres\": 0.1}, "
				    "\"loop\": {\"duration\": 2, \"start\": 0.5}, "
				    "\"ambient\": {\"wind\": 9, \"fetch\": 3000, \"amplitude\": 2, "
				    "\"shortest\": 0.5, \"choppiness\": 2, "
				    "\"foam\": {\"fade\": 0.5}}}");
	sim_loop *lp;
	tp_err err;
	cr_assert_eq(loop_create(sc, 1, &lp, &err), 0, "%s", err.msg);
	const int F = sc->loop.frames;
	cr_assert_eq(F, 24);
	fields first[2], s;
	tp_surface t;
	for (int f = 0; f <= F + 1; f++) {
		cr_assert_eq(loop_next(lp, &t, &err), 0, "%s", err.msg);
		if (f < 2)
			grab(&t, &first[f]);
		if (f >= F) {
			grab(&t, &s);
			cr_assert(same_fields(&s, &first[f - F]), "frame %d is not frame %d", f,
				  f - F);
			drop(&s);
		}
	}
	double moved = 0, foam = 0;
	for (int i = 0; i < 64 * 48; i++) {
		moved += fabs(first[0].foam[i] - first[1].foam[i]) +
			 fabs(first[0].dx[i] - first[1].dx[i]);
		foam += first[0].foam[i];
	}
	cr_assert_gt(moved, 1e-2, "nothing moves (%g)", moved);
	cr_assert_gt(foam, 0.5, "no foam (%g)", foam);
	drop(&first[0]), drop(&first[1]);
	loop_destroy(lp);
	scene_destroy(sc);
}

/* TMA: JONSWAP times the depth factor, which takes energy from the long waves: with the
 * same RMS height, shallow water's sea is steeper. It needs a depth. */
Test(ocean, tma_needs_a_depth_and_steepens_the_sea)
{
	scene *sc = NULL;
	tp_err err;
	stepper *st = NULL;
	cr_assert_eq(scene_load(write_text("tma0", sea(64, 64, ", \"spectrum\": \"tma\"", "")),
				NULL, tp_solvers, &sc, &err),
		     0, "%s", err.msg);
	cr_assert_lt(stepper_create(sc, 1, &st, &err), 0);
	cr_assert(strstr(err.msg, "ambient.spectrum") && strstr(err.msg, "params.depth"), "%s",
		  err.msg);
	scene_destroy(sc);
	double slope[2];
	for (int k = 0; k < 2; k++) {
		scene *s = load_ok("tma", sea(256, 256, k ? ", \"spectrum\": \"tma\"" : "",
					      ", \"depth\": 1.5"));
		fields f;
		run_to(s, 0, 0, &f);
		double g = 0;
		for (int y = 0; y < 256; y++)
			for (int x = 0; x < 256; x++) {
				double d = f.data[y * 256 + (x + 1) % 256] - f.data[y * 256 + x];
				g += d * d;
			}
		slope[k] = sqrt(g / (256.0 * 256));
		drop(&f);
		scene_destroy(s);
	}
	cr_assert_gt(slope[1], 1.05 * slope[0], "rms slope: tma %g, jonswap %g", slope[1],
		     slope[0]);
}

Test(ocean, foam_needs_choppy_waves)
{
	char calm[160];
	snprintf(calm, sizeof calm, "%s", write_text("calm", sea(32, 32, "", "")));
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -y -o foam=%s/f%%d.png", calm, dir), 3);
	cr_assert(strstr(slurp(errpath), "choppiness"), "%s", slurp(errpath));
	/* a colour picture is no float map */
	cr_assert_eq(run_tp(NULL, errpath, "render %s -q -y -o color=%s/c%%d.exr", calm, dir), 2);
	cr_assert(strstr(slurp(errpath), "OpenEXR takes"), "%s", slurp(errpath));
	const char *sc = write_text("calm2", sea(32, 32, ", \"foam\": {\"fade\": 2}", ""));
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", sc), 3);
	cr_assert(strstr(slurp(errpath), "ambient.foam"), "%s", slurp(errpath));
}

/* ---- OpenEXR ---- */

static int py(const char *fmt, ...)
{
	char args[2048], cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/exr_check.py %s >%s 2>&1", args, outpath);
	return system(cmd);
}

Test(ocean, exr_headers_name_channels_type_and_compression)
{
	const char *o = "scenes/textures/ocean_choppy.json --size 64x64 --range 0-0 -q -y";
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s -o displacement=%s/d.exr -o height=%s/h.exr "
			    "-o foam=%s/f.exr -o normal=%s/n.exr -o caustics=%s/k.exr",
			    o, dir, dir, dir, dir, dir),
		     0, "%s", slurp(errpath));
	char cmd[512];
	static const char *const rgb[] = {"d", "n"}, *const grey[] = {"h", "f", "k"};
	for (int i = 0; i < 5; i++) {
		const char *n = i < 2 ? rgb[i] : grey[i - 2];
		snprintf(cmd, sizeof cmd, "exrheader %s/%s.exr >%s 2>&1", dir, n, outpath);
		cr_assert_eq(system(cmd), 0, "%s", slurp(outpath));
		const char *t = slurp(outpath);
		cr_assert(strstr(t, "zip, multi-scanline blocks"), "%s: %s", n, t);
		if (i < 2)
			cr_assert(strstr(t, "B, 16-bit floating-point") &&
					  strstr(t, "G, 16-bit floating-point") &&
					  strstr(t, "R, 16-bit floating-point") &&
					  !strstr(t, "    Y,"),
				  "%s: %s", n, t);
		else
			cr_assert(strstr(t, "Y, 16-bit floating-point") && !strstr(t, "    R,"),
				  "%s: %s", n, t);
	}
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s --set maps.exr.type=float --set maps.exr.compression=piz "
			    "-o displacement=%s/d32.exr",
			    o, dir),
		     0, "%s", slurp(errpath));
	snprintf(cmd, sizeof cmd, "exrheader %s/d32.exr >%s 2>&1", dir, outpath);
	cr_assert_eq(system(cmd), 0);
	cr_assert(strstr(slurp(outpath), "R, 32-bit floating-point") &&
			  strstr(slurp(outpath), "piz"),
		  "%s", slurp(outpath));
}

/* The EXR of a frame holds the 16-bit PNG's values, in metres, half or float. */
Test(ocean, exr_values_are_the_png_values_in_metres)
{
	/* 0.125 m a pixel at 512, so 0.25 m at 256: metres per height unit (a scene unit) */
	const double hm = 0.125, levels = 1024;
	const char *o = "scenes/textures/ocean_choppy.json --size 256x256 --range 0-2 -q -y";
	for (int t = 0; t < 2; t++) {
		cr_assert_eq(run_tp(NULL, errpath,
				    "render %s --set maps.exr.type=%s -o displacement=%s/d%%d.exr "
				    "-o height=%s/h%%d.exr -o foam=%s/f%%d.exr -o "
				    "displacement=%s/d%%d.png "
				    "-o height=%s/h%%d.png -o foam=%s/f%%d.png",
				    o, t ? "float" : "half", dir, dir, dir, dir, dir, dir),
			     0, "%s", slurp(errpath));
		static const char *const kinds[] = {"displacement", "height", "foam"};
		for (int k = 0; k < 3; k++)
			cr_assert_eq(py("values %s/%c2.exr %s/%c2.png %s %g %g", dir, kinds[k][0],
					dir, kinds[k][0], kinds[k], levels, hm),
				     0, "%s %s: %s", t ? "float" : "half", kinds[k],
				     slurp(outpath));
	}
}

/* Every compression holds the same values; the files are the same bytes with 1 or 2
 * threads. */
Test(ocean, exr_compressions_and_threads)
{
	const char *o = "scenes/textures/ocean_choppy.json --size 128x128 --range 0-1 -q -y";
	static const char *const comp[] = {"zips", "piz", "rle", "none"};
	cr_assert_eq(run_tp(NULL, errpath, "render %s -o height=%s/h%%d.png", o, dir), 0, "%s",
		     slurp(errpath));
	for (int c = 0; c < 4; c++) {
		cr_assert_eq(run_tp(NULL, errpath,
				    "render %s --set maps.exr.type=float --set maps.exr.compression=%s "
				    "-o height=%s/%s%%d.exr",
				    o, comp[c], dir, comp[c]),
			     0, "%s", slurp(errpath));
		char e[160], pth[160];
		snprintf(e, sizeof e, "%s/%s1.exr", dir, comp[c]);
		snprintf(pth, sizeof pth, "%s/h1.png", dir);
		cr_assert_eq(py("values %s %s height 1024 0.125", e, pth), 0, "%s: %s", comp[c],
			     slurp(outpath));
	}
	for (int t = 1; t <= 2; t++)
		cr_assert_eq(run_tp(NULL, errpath,
				    "render %s --threads %d -o displacement=%s/t%d_%%d.exr "
				    "-o foam=%s/f%d_%%d.exr",
				    o, t, dir, t, dir, t),
			     0, "%s", slurp(errpath));
	char a[160], b[160];
	for (int k = 0; k < 2; k++) {
		snprintf(a, sizeof a, "%s/t1_%d.exr", dir, k);
		snprintf(b, sizeof b, "%s/t2_%d.exr", dir, k);
		cr_assert(files_equal(a, b), "%s and %s differ", a, b);
		snprintf(a, sizeof a, "%s/f1_%d.exr", dir, k);
		snprintf(b, sizeof b, "%s/f2_%d.exr", dir, k);
		cr_assert(files_equal(a, b), "%s and %s differ", a, b);
	}
}

/* A looped EXR sequence tiles and loops as the PNG textures do. */
Test(ocean, exr_sequence_tiles_and_loops)
{
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render scenes/textures/ocean_choppy.json --size 128x128 -q -y "
		       "--set loop.duration=2 -o displacement=%s/d%%02d.exr -o foam=%s/f%%02d.exr "
		       "-o normal=%s/n%%02d.exr -o height=%s/h%%02d.exr",
		       dir, dir, dir, dir),
		0, "%s", slurp(errpath));
	static const char m[] = "dfnh";
	for (int k = 0; k < 4; k++)
		cr_assert_eq(py("sequence %s/%c%%02d.exr 32", dir, m[k]), 0, "%c: %s", m[k],
			     slurp(outpath));
}
