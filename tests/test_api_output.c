/* The calls of tidepool.h that programs writing whole renders use (the tidepool command is
 * one): pictures in the encoders' layouts, pass, cancel, checkpoints on disk, levelling,
 * box poses, fingerprints, what a scene asks to be written, variants and the solvers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidepool.h"
#include "tmpdir.h"
#include "util/cpu.h"
#include "util/image.h"

static char dir[64];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "apiout");
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(api_output, .init = setup, .fini = teardown);

static tp_scene *load_opts(const char *path, int w, int h, const char *set)
{
	const char *sets[1] = {set};
	tp_load_options o = {.size = sizeof(tp_load_options),
			     .width = w,
			     .height = h,
			     .sets = set ? sets : NULL,
			     .nsets = !!set};
	tp_scene *s = NULL;
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(tp_scene_load_file(path, &o, &s, &e), 0, "%s: %s", path, e.text);
	return s;
}

static size_t frame_bytes(const tp_format *f)
{
	return (size_t)f->width * f->height * f->channels * f->bytes_per_sample;
}

/* Frame n of mode m as tp_scene_render writes it (malloc'd). */
static void *plain(tp_scene *s, int n, tp_mode m, size_t *bytes)
{
	tp_format f = TP_FORMAT_INIT;
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(tp_scene_format(s, m, &f, &e), 0, "%s", e.text);
	*bytes = frame_bytes(&f);
	void *buf = malloc(*bytes);
	cr_assert_eq(tp_scene_render(s, n, m, buf, 0, &e), 0, "frame %d: %s", n, e.text);
	return buf;
}

static void count_call(void *arg)
{
	++*(int *)arg;
}

/* Several pictures of one frame: the same bytes as one render each; 4:2:0 the same as
 * converting the RGB picture; floats in height units; the side job runs once. */
Test(api_output, render_targets_give_each_layout_of_one_frame)
{
	tp_scene *s = load_opts("scenes/pond.json", 160, 90, NULL);
	tp_error e = TP_ERROR_INIT;
	tp_format fc = TP_FORMAT_INIT, fh = TP_FORMAT_INIT, ff = TP_FORMAT_INIT,
		  fy = TP_FORMAT_INIT;
	cr_assert_eq(tp_scene_format_as(s, TP_MODE_COLOR, TP_PIXELS_NATIVE, &fc, &e), 0);
	cr_assert_eq(tp_scene_format_as(s, TP_MODE_HEIGHT, TP_PIXELS_NATIVE, &fh, &e), 0);
	cr_assert_eq(tp_scene_format_as(s, TP_MODE_HEIGHT, TP_PIXELS_FLOAT, &ff, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_format_as(s, TP_MODE_COLOR, TP_PIXELS_YUV420, &fy, &e), 0, "%s", e.text);
	cr_assert_eq(ff.channels, 1);
	cr_assert_eq(ff.bytes_per_sample, 4);
	cr_assert_eq(fy.channels, 3);
	/* 4:2:0 of a height map is refused */
	cr_assert_eq(tp_scene_format_as(s, TP_MODE_HEIGHT, TP_PIXELS_YUV420, &fy, &e), TP_ERROR_ARGUMENT);

	uint8_t *c = malloc(frame_bytes(&fc)), *h = malloc(frame_bytes(&fh));
	float *fl = malloc(frame_bytes(&ff)), *ref = malloc(frame_bytes(&ff));
	uint8_t *y = malloc((size_t)160 * 90 * 3 / 2);
	int calls = 0;
	tp_target t[4] = {
		{.size = sizeof(tp_target), .mode = TP_MODE_COLOR, .buf = c},
		{.size = sizeof(tp_target), .mode = TP_MODE_HEIGHT, .buf = h},
		{.size = sizeof(tp_target),
		 .mode = TP_MODE_HEIGHT,
		 .pixels = TP_PIXELS_FLOAT,
		 .buf = fl},
		{.size = sizeof(tp_target),
		 .mode = TP_MODE_COLOR,
		 .pixels = TP_PIXELS_YUV420,
		 .buf = y},
	};
	cr_assert_eq(tp_scene_render_targets(s, 12, t, 4, count_call, &calls, &e), 0, "%s", e.text);
	cr_assert_eq(calls, 1);
	cr_assert_eq(t[0].clipped, -1);
	cr_assert_eq(t[1].clipped, 0);
	cr_assert_eq(t[2].clipped, 0);

	tp_scene *o = load_opts("scenes/pond.json", 160, 90, NULL);
	size_t nc, nh;
	uint8_t *pc = plain(o, 12, TP_MODE_COLOR, &nc), *ph = plain(o, 12, TP_MODE_HEIGHT, &nh);
	cr_assert_eq(memcmp(c, pc, nc), 0, "colour differs from tp_scene_render");
	cr_assert_eq(memcmp(h, ph, nh), 0, "height differs from tp_scene_render");
	cr_assert_eq(tp_scene_height(o, 12, ref, 0, &e), 0);
	double most = 0;
	for (int i = 0; i < 160 * 90; i++) {
		cr_assert_float_eq(fl[i], ref[i], 1e-6, "pixel %d: %g, height %g", i, fl[i], ref[i]);
		most = fabs(ref[i]) > most ? fabs(ref[i]) : most;
	}
	cr_assert_gt(most, 0, "the pond has waves at frame 12");
	/* 4:2:0 as the encoders' converter makes it from the RGB picture */
	uint8_t *want = malloc((size_t)160 * 90 * 3 / 2);
	tp_image rgb = {.w = 160, .h = 90, .stride = 160 * 3, .fmt = TP_RGB8, .pixels = pc};
	tp_image yuv = {.w = 160, .h = 90, .stride = 160, .fmt = TP_YUV420, .pixels = want};
	uint8_t *pl[3];
	ptrdiff_t ls[3];
	for (int k = 0; k < 3; k++)
		pl[k] = tp_image_plane(&yuv, k, &ls[k]);
	for (int j = 0; j < 45; j++)
		tp_rgb_to_yuv420_pair(tp_yuv420_rows_for(tp_cpu_flags()), &rgb, j, pl, ls);
	cr_assert_eq(memcmp(y, want, (size_t)160 * 90 * 3 / 2), 0, "4:2:0 differs");

	/* no targets: the side job still runs (a hash of the last frame) */
	calls = 0;
	cr_assert_eq(tp_scene_render_targets(s, 12, NULL, 0, count_call, &calls, &e), 0);
	cr_assert_eq(calls, 1);
	free(c), free(h), free(fl), free(ref), free(y), free(pc), free(ph), free(want);
	tp_scene_free(s);
	tp_scene_free(o);
}

/* A checkpoint written at frame 10 continues bit for bit in another process's scene, and
 * is refused by a scene of other settings with the reason. */
Test(api_output, checkpoints_on_disk_continue_bit_for_bit)
{
	tp_scene *a = load_opts("scenes/rain.json", 160, 90, NULL);
	tp_error e = TP_ERROR_INIT;
	for (int k = 0; k < 10; k++)
		cr_assert_eq(tp_scene_pass(a, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_position(a), 9);
	uint64_t bytes = 0;
	cr_assert_eq(tp_scene_save_checkpoint(a, dir, &bytes, &e), 0, "%s", e.text);
	cr_assert_gt(bytes, 1000);
	char path[256];
	cr_assert_eq(tp_checkpoint_path(dir, 10, path, sizeof path), 0);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fclose(f);
	cr_assert_eq(tp_scene_check_checkpoint(a, dir, 10, &e), 0, "%s", e.text);

	/* the frames after it, from the checkpoint and from frame 0 */
	tp_scene *b = load_opts("scenes/rain.json", 160, 90, NULL);
	cr_assert_eq(tp_scene_load_checkpoint(b, dir, 9, &e), 0, "none at or before 9");
	cr_assert_eq(tp_scene_load_checkpoint(b, dir, 25, &e), 10, "%s", e.text);
	cr_assert_eq(tp_scene_position(b), 9);
	tp_scene *c = load_opts("scenes/rain.json", 160, 90, NULL);
	for (int k = 10; k < 14; k++) {
		size_t n1, n2;
		void *p1 = plain(b, k, TP_MODE_COLOR, &n1), *p2 = plain(c, k, TP_MODE_COLOR, &n2);
		cr_assert_eq(memcmp(p1, p2, n1), 0, "frame %d differs after the checkpoint", k);
		free(p1), free(p2);
	}

	/* another seed: refused, naming the file and why */
	tp_scene *d = load_opts("scenes/rain.json", 160, 90, "seed=99");
	cr_assert_eq(tp_scene_check_checkpoint(d, dir, 10, &e), TP_ERROR_INPUT);
	cr_assert(strstr(e.text, "frame-00000010.tpck"), "%s", e.text);
	cr_assert_eq(tp_scene_load_checkpoint(d, dir, 20, &e), TP_ERROR_INPUT, "%s", e.text);
	/* a frame without a file */
	cr_assert_lt(tp_scene_check_checkpoint(a, dir, 20, &e), 0);
	tp_scene_free(a), tp_scene_free(b), tp_scene_free(c), tp_scene_free(d);
}

/* No single-bit flip anywhere in a checkpoint passes (issue 46): every bit of the header
 * and of the trailer, and bits spread over the payload; each refusal names the file in
 * printable ASCII (bytes of the damaged file escaped, never raw). */
Test(api_output, no_single_bit_flip_in_a_checkpoint_is_accepted)
{
	tp_scene *a = load_opts("tests/data/tiny.json", 0, 0, NULL);
	tp_error e = TP_ERROR_INIT;
	for (int k = 0; k < 3; k++)
		cr_assert_eq(tp_scene_pass(a, &e), 0, "%s", e.text);
	uint64_t bytes = 0;
	cr_assert_eq(tp_scene_save_checkpoint(a, dir, &bytes, &e), 0, "%s", e.text);
	char path[256];
	tp_checkpoint_path(dir, 3, path, sizeof path);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	unsigned char *good = malloc(bytes);
	cr_assert_eq(fread(good, 1, bytes, f), bytes);
	fclose(f);
	cr_assert_eq(tp_scene_check_checkpoint(a, dir, 3, &e), 0, "%s", e.text);
	int tried = 0;
	for (size_t bit = 0; bit < bytes * 8; bit++) {
		size_t at = bit / 8;
		/* all of the header (128 bytes) and trailer (8), one byte in 97 of the payload */
		if (at >= 128 && at < bytes - 8 && at % 97)
			continue;
		good[at] ^= (unsigned char)(1u << (bit % 8));
		f = fopen(path, "wb");
		cr_assert_eq(fwrite(good, 1, bytes, f), bytes);
		fclose(f);
		good[at] ^= (unsigned char)(1u << (bit % 8));
		cr_assert_eq(tp_scene_check_checkpoint(a, dir, 3, &e), TP_ERROR_INPUT,
			     "a flip of bit %zu (byte %zu) was accepted", bit % 8, at);
		cr_assert(strstr(e.text, "frame-00000003.tpck: "), "%s", e.text);
		for (const char *c = e.text; *c; c++)
			cr_assert(*c >= 0x20 && *c < 0x7f, "byte %zu: raw byte in %s", at, e.text);
		tried++;
	}
	cr_assert_gt(tried, 136 * 8);
	/* a version with bytes that are not text: shown escaped */
	memcpy(good + 16, "0.1\xff\x01", 6);
	f = fopen(path, "wb");
	fwrite(good, 1, bytes, f);
	fclose(f);
	cr_assert_eq(tp_scene_check_checkpoint(a, dir, 3, &e), TP_ERROR_INPUT);
	cr_assert(strstr(e.text, "written by tidepool 0.1\\xff\\x01"), "%s", e.text);
	free(good);
	tp_scene_free(a);
}

/* A passed frame has no picture: rendering it simulates it again, the same bits. A raised
 * cancel flag stops the next step; lowered, the scene starts over and gives frame 0. */
Test(api_output, pass_and_cancel)
{
	tp_scene *s = load_opts("scenes/rain.json", 160, 90, NULL), *r = load_opts("scenes/rain.json", 160, 90, NULL);
	tp_error e = TP_ERROR_INIT;
	for (int k = 0; k < 5; k++)
		cr_assert_eq(tp_scene_pass(s, &e), 0);
	size_t n1, n2;
	void *p1 = plain(s, 4, TP_MODE_COLOR, &n1), *p2 = plain(r, 4, TP_MODE_COLOR, &n2);
	cr_assert_eq(memcmp(p1, p2, n1), 0, "frame 4 after a pass differs");
	free(p1), free(p2);

	/* at the scene's own size every frame runs the solver (smaller ones skip steps) */
	volatile int flag = 0;
	tp_scene *c = load_opts("scenes/rain.json", 640, 360, NULL);
	tp_scene_free(r);
	r = load_opts("scenes/rain.json", 640, 360, NULL);
	cr_assert_eq(tp_scene_set_cancel(c, &flag), 0);
	cr_assert_eq(tp_scene_step(c, &e), 0, "%s", e.text); /* frame 0: the drops at t = 0 */
	flag = 1;
	cr_assert_eq(tp_scene_step(c, &e), TP_ERROR_CANCELLED, "%s", e.text);
	cr_assert_eq(tp_scene_position(c), -1);
	flag = 0;
	cr_assert_eq(tp_scene_step(c, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_position(c), 0);
	p1 = plain(c, 3, TP_MODE_COLOR, &n1);
	p2 = plain(r, 3, TP_MODE_COLOR, &n2);
	cr_assert_eq(memcmp(p1, p2, n1), 0, "frame 3 after a cancel differs");
	free(p1), free(p2);
	tp_scene_free(s), tp_scene_free(r), tp_scene_free(c);
}

static void count_progress(void *arg, int done, int total)
{
	int *n = arg;
	cr_assert_eq(done, n[0] + 1);
	n[0] = done;
	n[1] = total;
}

/* "scale": "auto": one pass over every frame, the largest |h| at 32767 levels; a fixed
 * scale levels nothing. */
Test(api_output, level_heights)
{
	tp_scene *s = load_opts("scenes/pond.json", 96, 54, "maps.height.scale=\"auto\"");
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_info(s, &in);
	tp_error e = TP_ERROR_INIT;
	double levels = 0, top = 0;
	int seen[2] = {0, 0};
	/* asking for the layout simulates nothing (a render checks its outputs first) */
	tp_format fmt = TP_FORMAT_INIT;
	cr_assert_eq(tp_scene_format_as(s, TP_MODE_HEIGHT, TP_PIXELS_NATIVE, &fmt, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_format_as(s, TP_MODE_HEIGHT, TP_PIXELS_FLOAT, &fmt, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_format(s, TP_MODE_HEIGHT, &fmt, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_level_heights(s, count_progress, seen, &levels, &top, &e), 1, "%s", e.text);
	cr_assert_eq(seen[0], in.frames);
	cr_assert_eq(seen[1], in.frames);
	cr_assert_gt(top, 0);
	cr_assert_float_eq(levels * top, 32767.0, 1e-6);
	/* the frames use that scale: the largest |h| reaches the end of the 16-bit range */
	uint16_t *px = malloc((size_t)96 * 54 * 2);
	int reach = 0;
	for (int k = 0; k < in.frames && !reach; k++) {
		cr_assert_eq(tp_scene_render(s, k, TP_MODE_HEIGHT, px, 0, &e), 0, "%s", e.text);
		for (int i = 0; i < 96 * 54; i++)
			reach |= px[i] == 65535 || px[i] == 1;
	}
	cr_assert(reach, "no frame reaches the end of the range");
	free(px);
	tp_scene *f = load_opts("scenes/pond.json", 96, 54, NULL);
	cr_assert_eq(tp_scene_level_heights(f, NULL, NULL, &levels, &top, &e), 0);
	cr_assert_eq(levels, 0);
	tp_scene_free(s), tp_scene_free(f);
}

/* Box poses in scene units: the render size divided out, so two sizes agree closely. */
Test(api_output, box_poses_in_scene_units)
{
	tp_scene *a = load_opts("scenes/boxes.json", 320, 180, NULL), *b = load_opts("scenes/boxes.json", 640, 360, NULL);
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_info(a, &in);
	tp_pose pa[8], pb[8];
	for (int i = 0; i < 8; i++)
		pa[i] = pb[i] = (tp_pose)TP_POSE_INIT;
	tp_error e = TP_ERROR_INIT;
	int n = tp_scene_boxes(a, 20, pa, 8, &e);
	cr_assert_geq(n, 1, "%s", e.text);
	cr_assert_eq(tp_scene_boxes(b, 20, pb, 8, &e), n);
	cr_assert_eq(tp_scene_boxes(a, 20, NULL, 0, &e), n, "the count without a place for poses");
	for (int i = 0; i < n && i < 8; i++) {
		cr_assert(pa[i].x >= 0 && pa[i].x <= in.ref_width, "x %g", pa[i].x);
		cr_assert(pa[i].y >= 0 && pa[i].y <= in.ref_height, "y %g", pa[i].y);
		cr_assert_float_eq(pa[i].x, pb[i].x, 1e-6);
		cr_assert_float_eq(pa[i].y, pb[i].y, 1e-6);
	}
	tp_scene_free(a), tp_scene_free(b);
}

/* What a scene asks to be written, its variants, its fingerprints and the solvers. */
Test(api_output, outputs_variants_fingerprints_and_solvers)
{
	tp_scene *s = load_opts("scenes/textures/caustics_loop.json", 64, 64, NULL);
	tp_scene_outputs so = TP_SCENE_OUTPUTS_INIT;
	cr_assert_eq(tp_scene_get_outputs(s, &so), 0);
	cr_assert(so.n > 0 || so.output, "the texture scene writes something");
	const char *name = NULL;
	int nv = tp_scene_variants(s, &name);
	cr_assert_gt(nv, 0, "caustics_loop.json has \"variants\"");
	tp_vary v = TP_VARY_INIT;
	cr_assert_eq(tp_scene_vary(s, 0, &v), 0);
	cr_assert_not_null(v.key);
	cr_assert_gt(v.n, 0);
	cr_assert_not_null(v.values[v.n - 1]);
	cr_assert_eq(tp_scene_vary(s, nv, &v), TP_ERROR_ARGUMENT);

	char f1[65], f2[65], f3[65], f4[65];
	tp_scene *same = load_opts("scenes/textures/caustics_loop.json", 64, 64, NULL);
	tp_scene *other = load_opts("scenes/textures/caustics_loop.json", 64, 64, "seed=7");
	cr_assert_eq(tp_scene_fingerprint(s, NULL, f1), 0);
	tp_scene_fingerprint(same, NULL, f2);
	tp_scene_fingerprint(other, NULL, f3);
	tp_scene_fingerprint(s, "mode color\nencoder png\n", f4);
	cr_assert_eq(strlen(f1), 64);
	cr_assert_str_eq(f1, f2, "the same scene and options");
	cr_assert_str_neq(f1, f3, "another seed");
	cr_assert_str_neq(f1, f4, "an output's own");

	/* -o replaces "output" */
	tp_load_options o = {.size = sizeof(tp_load_options),
			     .width = 64,
			     .height = 36,
			     .output = "elsewhere/%04d.png"};
	tp_scene *r = NULL;
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(tp_scene_load_file("scenes/pond.json", &o, &r, &e), 0, "%s", e.text);
	tp_scene_get_outputs(r, &so);
	cr_assert_str_eq(so.output, "elsewhere/%04d.png");

	int n = tp_solver_count();
	cr_assert_eq(n, 5);
	int found = 0;
	for (int i = 0; i < n; i++) {
		tp_solver_info si = TP_SOLVER_INFO_INIT;
		cr_assert_eq(tp_solver_get(i, &si), 0);
		if (strcmp(si.name, "ripple"))
			continue;
		found = 1;
		cr_assert_gt(si.nparams, 0);
		tp_param p = TP_PARAM_INIT;
		cr_assert_eq(tp_solver_param(i, 0, &p), 0);
		cr_assert_not_null(p.name);
		cr_assert_gt(strlen(p.range), 0);
		cr_assert_eq(tp_solver_param(i, si.nparams, &p), TP_ERROR_ARGUMENT);
	}
	cr_assert(found);
	cr_assert_eq(tp_solver_get(n, &(tp_solver_info){0}), TP_ERROR_ARGUMENT);
	tp_scene_free(s), tp_scene_free(same), tp_scene_free(other), tp_scene_free(r);
}

/* docs/api.md documents every call tidepool.h declares (and no call it lacks). */
Test(api_output, every_call_is_documented)
{
	FILE *h = fopen("include/tidepool.h", "r"), *d = fopen("docs/api.md", "r");
	cr_assert(h && d);
	static char doc[1 << 17];
	size_t n = fread(doc, 1, sizeof doc - 1, d);
	doc[n] = 0;
	fclose(d);
	char line[512];
	int calls = 0;
	while (fgets(line, sizeof line, h)) {
		if (strncmp(line, "TP_API ", 7))
			continue;
		char *q = strstr(line, "tp_");
		char name[96], key[100];
		size_t k = strcspn(q, "(");
		cr_assert_lt(k, sizeof name);
		memcpy(name, q, k);
		name[k] = 0;
		snprintf(key, sizeof key, " %s(", name);
		int found = strstr(doc, key) != NULL;
		key[0] = '*'; /* const char *tp_version( */
		found |= strstr(doc, key) != NULL;
		cr_assert(found, "docs/api.md does not document %s", name);
		calls++;
	}
	fclose(h);
	cr_assert_geq(calls, 35);
}
