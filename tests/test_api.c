/* The public C API (include/tidepool.h): errors as data, the same pixels as the CLI,
 * seeking in any order, two scenes in two threads, and nothing exported but the API. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "util/png.h"
#include "tidepool.h"
#include "util/image.h"

static char dir[64];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "api");
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(api, .init = setup, .fini = teardown);

/* At w x h, or (w == 0) at a scale of h / 1000 of the scene's size. */
static tp_scene *load(const char *path, int w, int h)
{
	tp_load_options o = {.size = sizeof(tp_load_options),
			     .width = w,
			     .height = w ? h : 0,
			     .scale = w ? 0 : h / 1000.0};
	tp_scene *s = NULL;
	tp_error e = TP_ERROR_INIT;
	int rc = tp_scene_load_file(path, &o, &s, &e);
	cr_assert_eq(rc, 0, "%s: %s", path, e.text);
	return s;
}

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* A frame of mode m as a hash of its bytes. */
static uint64_t frame_hash(tp_scene *s, int n, tp_mode m)
{
	tp_format f = TP_FORMAT_INIT;
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(tp_scene_format(s, m, &f, &e), 0, "%s", e.text);
	size_t bytes = (size_t)f.width * f.height * f.channels * f.bytes_per_sample;
	void *buf = malloc(bytes);
	cr_assert_eq(tp_scene_render(s, n, m, buf, 0, &e), 0, "frame %d: %s", n, e.text);
	uint64_t h = fnv(buf, bytes);
	free(buf);
	return h;
}

Test(api, errors_are_data_with_the_message_validate_prints)
{
	char path[128], errf[160];
	snprintf(path, sizeof path, "%s/bad.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\n  \"format\": \"tidepool-scene/1\",\n  \"size\": [64, 64],\n  \"fps\": 30,\n"
	      "  \"drops\": [ { \"t\": 0, \"at\": [10, 10], \"radius\": -2 } ]\n}\n",
	      f);
	fclose(f);
	tp_scene *s = (tp_scene *)1;
	tp_error e = TP_ERROR_INIT;
	int rc = tp_scene_load_file(path, NULL, &s, &e);
	cr_assert_eq(rc, TP_ERROR_INPUT);
	cr_assert_eq(e.code, TP_ERROR_INPUT);
	cr_assert_null(s);
	cr_assert_str_eq(e.file, path);
	cr_assert_eq(e.line, 5, "%s", e.text);
	cr_assert_gt(e.col, 1, "%s", e.text);
	cr_assert(strstr(e.message, "drops[0].radius"), "%s", e.message);
	/* The CLI prints "tidepool: " and the same text. */
	snprintf(errf, sizeof errf, "%s/err", dir);
	cr_assert_eq(run_tp(NULL, errf, "validate %s", path), 3);
	char want[2100];
	snprintf(want, sizeof want, "tidepool: %s\n", e.text);
	cr_assert(strstr(slurp(errf), want), "CLI: %s\nAPI: %s", slurp(errf), want);

	/* From text, with the name standing for the file; a syntax error has its place. */
	rc = tp_scene_load_string("{\"format\": \"tidepool-scene/1\",\n \"size\": [64, 64],,\n}",
				  "mine.json", NULL, &s, &e);
	cr_assert_eq(rc, TP_ERROR_INPUT);
	cr_assert_str_eq(e.file, "mine.json");
	cr_assert_eq(e.line, 2, "%s", e.text);
	/* A file that is not there is an I/O error with no place. */
	rc = tp_scene_load_file("/nonexistent/x.json", NULL, &s, &e);
	cr_assert_eq(rc, TP_ERROR_IO);
	cr_assert_eq(e.line, 0);
	/* Bad arguments are refused, not crashed on. */
	s = load("scenes/pond.json", 64, 36);
	uint8_t px[64 * 36 * 3];
	cr_assert_eq(tp_scene_render(s, 100000, TP_MODE_COLOR, px, 0, &e), TP_ERROR_ARGUMENT);
	cr_assert(strstr(e.text, "out of range"), "%s", e.text);
	cr_assert_eq(tp_scene_render(s, 0, TP_MODE_PARTICLES, px, 0, &e), TP_ERROR_ARGUMENT);
	cr_assert_eq(tp_scene_render(s, 0, TP_MODE_COLOR, px, 10, &e), TP_ERROR_ARGUMENT);
	tp_scene_free(s);
	tp_scene_free(NULL);
}

/* Frame N from the API equals the PNG `tidepool render --size WxH --range N-N` writes. */
static void same_as_cli_at(const char *scene, tp_mode m, const char *mode, int n, int w, int h)
{
	char out[160], errf[160];
	snprintf(out, sizeof out, "%s/f%%04d.png", dir);
	snprintf(errf, sizeof errf, "%s/err", dir);
	cr_assert_eq(run_tp(NULL, errf, "render %s --size %dx%d --range %d-%d -o %s=%s -q -y", scene,
			    w, h, n, n, mode, out),
		     0, "%s", slurp(errf));
	snprintf(out, sizeof out, "%s/f%04d.png", dir, n);
	tp_scene *s = load(scene, w, h);
	tp_format f = TP_FORMAT_INIT;
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(tp_scene_format(s, m, &f, &e), 0, "%s", e.text);
	tp_pixfmt want = f.channels == 3 ? (f.bytes_per_sample == 1 ? TP_RGB8 : TP_RGB16)
					 : TP_GRAY16;
	tp_image png;
	tp_err err;
	cr_assert_eq(tp_png_read(out, want, &png, &err), 0, "%s", err.msg);
	size_t row = (size_t)f.width * f.channels * f.bytes_per_sample;
	uint8_t *buf = malloc(row * f.height);
	cr_assert_eq(tp_scene_render(s, n, m, buf, 0, &e), 0, "%s", e.text);
	for (int y = 0; y < f.height; y++) {
		if (f.channels == 1 && f.bytes_per_sample == 1) {
			/* 8-bit grey read back as 16-bit: v * 257 exactly */
			const uint16_t *p = (const uint16_t *)tp_image_row(&png, y);
			for (int x = 0; x < f.width; x++)
				cr_assert_eq(p[x], buf[y * row + x] * 257u, "%s %s row %d", scene, mode, y);
		} else {
			cr_assert_eq(memcmp(tp_image_row(&png, y), buf + y * row, row), 0,
				     "%s %s frame %d row %d differs from the CLI's PNG", scene, mode, n, y);
		}
	}
	free(buf);
	tp_image_free(&png);
	tp_scene_free(s);
}

static void same_as_cli(const char *scene, tp_mode m, const char *mode, int n)
{
	same_as_cli_at(scene, m, mode, n, 96, 54);
}

Test(api, frames_are_the_pixels_the_cli_writes)
{
	same_as_cli_at("scenes/textures/ocean_choppy.json", TP_MODE_DISPLACEMENT, "displacement", 5,
		       64, 64);
	same_as_cli_at("scenes/textures/ocean_choppy.json", TP_MODE_FOAM, "foam", 5, 64, 64);
	same_as_cli("scenes/pond.json", TP_MODE_COLOR, "color", 20);
	same_as_cli("scenes/pond.json", TP_MODE_HEIGHT, "height", 20);
	same_as_cli("scenes/pond.json", TP_MODE_NORMAL, "normal", 20);
	same_as_cli("scenes/pond.json", TP_MODE_CAUSTICS, "caustics", 20);
	same_as_cli("scenes/sph_box.json", TP_MODE_COLOR, "color", 6);
	/* airy: a seek passes through frames without making their surfaces (loop_pass); the
	 * drop at 1 s (frame 30) is stepped in a frame passed through */
	same_as_cli("scenes/wind_pool.json", TP_MODE_COLOR, "color", 40);
	same_as_cli("scenes/wind_pool.json", TP_MODE_HEIGHT, "height", 40);
}

/* Frames asked for backwards and at random equal the same frames asked for in order:
 * checkpoints replay bit for bit, for every solver. */
Test(api, seeking_in_any_order_gives_the_same_frames, .timeout = 120)
{
	static const char *const scenes[] = {"scenes/pond.json", "scenes/rain.json",
					     "scenes/shallow_float.json", "scenes/sph_box.json",
					     "scenes/rowing.json", "scenes/sph_nozzle.json",
					     "scenes/wind_pool.json",
					     "scenes/textures/caustics_loop.json"};
	enum { N = 16, F0 = 30 };
	for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
		uint64_t fwd[N];
		tp_scene *s = load(scenes[i], 0, 125);
		for (int k = 0; k < N; k++)
			fwd[k] = frame_hash(s, F0 + k, TP_MODE_COLOR);
		cr_assert_neq(fwd[0], fwd[N - 1], "%s should move between frames %d and %d", scenes[i],
			      F0, F0 + N - 1);
		tp_scene_free(s);
		/* Small checkpoint spacing, then backwards, then a scatter. */
		tp_load_options o = {
			.size = sizeof(tp_load_options), .scale = 0.125, .checkpoint_every = 3};
		tp_error e = TP_ERROR_INIT;
		cr_assert_eq(tp_scene_load_file(scenes[i], &o, &s, &e), 0, "%s", e.text);
		cr_assert_eq(tp_scene_position(s), -1);
		cr_assert_eq(frame_hash(s, F0 + N - 1, TP_MODE_COLOR), fwd[N - 1]);
		for (int k = N - 1; k >= 0; k--)
			cr_assert_eq(frame_hash(s, F0 + k, TP_MODE_COLOR), fwd[k],
				     "%s frame %d backwards", scenes[i], F0 + k);
		static const int scatter[] = {7, 2, 15, 9, 9, 0, 13, 4};
		for (size_t j = 0; j < sizeof scatter / sizeof scatter[0]; j++)
			cr_assert_eq(frame_hash(s, F0 + scatter[j], TP_MODE_COLOR), fwd[scatter[j]],
				     "%s frame %d", scenes[i], F0 + scatter[j]);
		cr_assert_eq(tp_scene_position(s), F0 + 4);
		cr_assert_eq(tp_scene_step(s, &e), 0, "%s", e.text);
		cr_assert_eq(tp_scene_position(s), F0 + 5);
		tp_scene_free(s);
		/* The default spacing (by stepping time) and a budget too small for them all. */
		tp_load_options d = {.size = sizeof(tp_load_options),
				     .scale = 0.125,
				     .checkpoint_bytes = 400000};
		cr_assert_eq(tp_scene_load_file(scenes[i], &d, &s, &e), 0, "%s", e.text);
		for (int k = N - 1; k >= 0; k -= 2)
			cr_assert_eq(frame_hash(s, F0 + k, TP_MODE_COLOR), fwd[k],
				     "%s frame %d backwards, default checkpoints", scenes[i], F0 + k);
		tp_scene_free(s);
	}
}

typedef struct job {
	const char *scene;
	uint64_t h[12];
} job;

static void *run_job(void *arg)
{
	job *j = arg;
	tp_load_options o = {.size = sizeof(tp_load_options), .scale = 0.25, .threads = 1};
	tp_scene *s = NULL;
	tp_error e = TP_ERROR_INIT;
	if (tp_scene_load_file(j->scene, &o, &s, &e) < 0)
		return NULL;
	tp_format f = TP_FORMAT_INIT;
	tp_scene_format(s, TP_MODE_COLOR, &f, &e);
	size_t bytes = (size_t)f.width * f.height * 3;
	uint8_t *buf = malloc(bytes);
	for (int k = 0; k < 12; k++)
		if (tp_scene_render(s, k * 2, TP_MODE_COLOR, buf, 0, &e) == 0)
			j->h[k] = fnv(buf, bytes);
	free(buf);
	tp_scene_free(s);
	return j;
}

Test(api, two_scenes_in_two_threads_give_the_frames_of_each_alone, .timeout = 120)
{
	job alone[2] = {{.scene = "scenes/rowing.json"}, {.scene = "scenes/rain.json"}};
	job both[2] = {{.scene = "scenes/rowing.json"}, {.scene = "scenes/rain.json"}};
	for (int i = 0; i < 2; i++)
		cr_assert_not_null(run_job(&alone[i]));
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, run_job, &both[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 12; k++) {
			cr_assert_neq(alone[i].h[k], 0);
			cr_assert_eq(both[i].h[k], alone[i].h[k], "%s frame %d", alone[i].scene, 2 * k);
		}
}

Test(api, height_field_matches_the_height_map)
{
	/* maps.height.scale fixed: the 16-bit map is round(h * scale) + 32768, clamped. */
	tp_load_options o = {.size = sizeof(tp_load_options), .width = 96, .height = 54};
	const char *sets[] = {"maps.height.scale=2000"};
	o.sets = sets;
	o.nsets = 1;
	tp_scene *s = NULL;
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(tp_scene_load_file("scenes/pond.json", &o, &s, &e), 0, "%s", e.text);
	float *h = malloc(sizeof(float) * 96 * 54);
	uint16_t *m = malloc(2 * 96 * 54);
	cr_assert_eq(tp_scene_height(s, 25, h, 0, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_render(s, 25, TP_MODE_HEIGHT, m, 0, &e), 0, "%s", e.text);
	int moving = 0;
	for (int i = 0; i < 96 * 54; i++) {
		double want = h[i] * 2000.0 + 32768.0;
		want = want < 0 ? 0 : want > 65535 ? 65535 : want;
		cr_assert_leq(fabs(m[i] - want), 0.5 + 1e-3, "pixel %d: map %u, height %g", i, m[i],
			      h[i]);
		moving += h[i] != 0;
	}
	cr_assert_gt(moving, 100, "the pond should move by frame 25");
	tp_frame_stats st = TP_FRAME_STATS_INIT;
	cr_assert_eq(tp_scene_stats(s, 25, &st, &e), 0);
	cr_assert_eq(st.frame, 25);
	cr_assert_float_eq(st.t, 25 / 30.0, 1e-9);
	cr_assert_gt(st.n, 0);
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_info(s, &in);
	cr_assert_eq(in.modes, 0x2fu); /* colour, the three maps, displacement; no foam */
	cr_assert_str_eq(in.solver, "ripple");
	cr_assert(strstr(tp_scene_text(s), "\"scale\": 2000") || strstr(tp_scene_text(s), "2000"));
	free(h);
	free(m);
	tp_scene_free(s);
}

/* The names tidepool.h declares with TP_API, each followed by a newline. */
static void declared_calls(char *declared, size_t cap)
{
	FILE *h = fopen("include/tidepool.h", "r");
	cr_assert_not_null(h);
	char line[512];
	declared[0] = 0;
	while (fgets(line, sizeof line, h)) {
		char *p = strstr(line, "TP_API ");
		char *q = p ? strstr(p, "tp_") : NULL;
		if (!q || strncmp(line, "TP_API", 6))
			continue;
		size_t n = strcspn(q, "(");
		cr_assert_lt(strlen(declared) + n + 2, cap);
		strncat(declared, q, n);
		strcat(declared, "\n");
	}
	fclose(h);
}

/* Runs cmd (its output into DIR/syms) and checks every line is a declared call; returns
 * how many lines there were. */
static int only_declared(const char *cmd, const char *declared, const char *what)
{
	char out[160], full[1024], line[512];
	snprintf(out, sizeof out, "%s/syms", dir);
	snprintf(full, sizeof full, "%s | sort > %s", cmd, out);
	cr_assert_eq(system(full), 0, "%s", full);
	FILE *f = fopen(out, "r");
	cr_assert_not_null(f);
	int count = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || !strncmp(line, "_init", 5) || !strncmp(line, "_fini", 5))
			continue;
		char key[520];
		snprintf(key, sizeof key, "%s\n", line);
		cr_assert(strstr(declared, key), "%s but not in tidepool.h: %s", what, line);
		count++;
	}
	fclose(f);
	return count;
}

/* Only the calls tidepool.h declares are exported by the shared library. */
Test(api, the_library_exports_only_the_public_api)
{
	const char *b = getenv("TP_BUILD");
	char cmd[512], declared[16384];
	declared_calls(declared, sizeof declared);
	snprintf(cmd, sizeof cmd,
		 "nm -D --defined-only %s/libtidepool.so.0 | awk '$2 ~ /[TDBRVW]/ {print $3}'",
		 b ? b : "build");
	int count = only_declared(cmd, declared, "exported");
	cr_assert_geq(count, 30, "declared:\n%s", declared);
	/* A version a program can check. */
	cr_assert_eq(tp_version_number(), TP_VERSION_NUMBER);
	cr_assert_str_eq(tp_version(), "0.2.0");
}

/* The tidepool command is a client of the library: it loads libtidepool.so.0, takes only
 * calls tidepool.h declares from it, and holds none of the core's code itself (no
 * scene loader, stepper, solver, renderer or checkpoint writer of its own). */
Test(api, the_program_is_a_client_of_the_library)
{
	const char *b = getenv("TP_BUILD");
	b = b ? b : "build";
	char cmd[512], declared[16384];
	snprintf(cmd, sizeof cmd, "readelf -d %s/tidepool | grep -q 'NEEDED.*\\[libtidepool.so.0\\]'", b);
	cr_assert_eq(system(cmd), 0, "%s/tidepool does not load libtidepool.so.0", b);
	declared_calls(declared, sizeof declared);
	snprintf(cmd, sizeof cmd, "nm -D --undefined-only %s/tidepool | awk '{print $2}' | grep '^tp_'",
		 b);
	int used = only_declared(cmd, declared, "the program calls it");
	cr_assert_geq(used, 25);
	static const char *const core[] = {"scene_load", "loop_next", "stepper_stats",
					   "solver_find", "render_frame", "ckpt_write",
					   "render_create", "tp_scene_render", NULL};
	for (int i = 0; core[i]; i++) {
		snprintf(cmd, sizeof cmd, "nm --defined-only %s/tidepool | awk '{print $3}' | grep -qx '%s'",
			 b, core[i]);
		cr_assert_neq(system(cmd), 0, "the program has its own %s", core[i]);
	}
}

/* The example in docs/api.md compiles (with the build's sanitizer flags, TP_CLIENT_FLAGS) against the library as built and runs. */
Test(api, the_example_in_docs_api_md_builds_and_runs, .timeout = 120)
{
	const char *b = getenv("TP_BUILD");
	char cmd[2048], out[160];
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(cmd, sizeof cmd,
		 "awk '/^```c$/{on=1;next} /^```$/{on=0} on' docs/api.md > %s/example.c && "
		 "cc -std=c11 -Wall -Werror %s %s/example.c -Iinclude -L%s -ltidepool -Wl,-rpath,%s "
		 "-o %s/example && %s/example scenes/pond.json > %s 2>&1",
		 dir, getenv("TP_CLIENT_FLAGS") ? getenv("TP_CLIENT_FLAGS") : "", dir, b ? b : "build",
		 b ? b : "build", dir, dir, out);
	cr_assert_eq(system(cmd), 0, "%s", slurp(out));
	cr_assert(strstr(slurp(out), "320x180, mean "), "%s", slurp(out));
}
