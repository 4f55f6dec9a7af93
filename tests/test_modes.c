/* The render-mode table (render/modes.h) walked row by row: every name round-trips through
 * the public API, the formats of a row agree with each other, and for every solver and
 * mode the table's "can this scene render it" is what the loader, the renderer and the
 * API actually do. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "render/modes.h"
#include "render/render.h"
#include "solvers/solver.h"
#include "tidepool.h"

Test(modes, every_name_round_trips_and_the_numbers_agree)
{
	cr_assert_eq(SCENE_MODE_COUNT, TP_MODE_COUNT);
	for (int m = 0; m < SCENE_MODE_COUNT; m++) {
		const render_mode *d = render_mode_get((scene_mode)m);
		cr_assert_not_null(d->name, "mode %d has no name", m);
		cr_assert_str_eq(tp_mode_name((tp_mode)m), d->name);
		cr_assert_eq(tp_mode_from_name(d->name), m, "%s", d->name);
		for (int k = 0; k < m; k++)
			cr_assert_str_neq(render_mode_get((scene_mode)k)->name, d->name);
	}
	cr_assert_null(tp_mode_name(TP_MODE_COUNT));
	cr_assert_null(tp_mode_name((tp_mode)-1));
	cr_assert_eq(tp_mode_from_name("colour"), -1);
	cr_assert_eq(tp_mode_from_name(NULL), -1);
	const char *names[SCENE_MODE_COUNT + 1];
	render_mode_names(names);
	cr_assert_null(names[SCENE_MODE_COUNT]);
	cr_assert_str_eq(names[SCENE_MODE_COUNT - 1], tp_mode_name(TP_MODE_COUNT - 1));
}

static int sample_bytes(tp_pixfmt f)
{
	return tp_pixfmt_bytes(f) / tp_pixfmt_channels(f);
}

Test(modes, the_formats_of_a_row_agree)
{
	for (int m = 0; m < SCENE_MODE_COUNT; m++) {
		const render_mode *d = render_mode_get((scene_mode)m);
		cr_assert(d->draw_height || d->draw_fluid, "%s: no kernel", d->name);
		cr_assert_eq(tp_pixfmt_channels(d->fmt8), tp_pixfmt_channels(d->fmt16), "%s", d->name);
		if (d->bits_at) { /* the scene chooses: one format per depth */
			cr_assert_eq(sample_bytes(d->fmt8), 1, "%s", d->name);
			cr_assert_eq(sample_bytes(d->fmt16), 2, "%s", d->name);
		} else {
			cr_assert_eq(d->fmt8, d->fmt16, "%s: one depth, one format", d->name);
		}
		if (d->has_float) {
			cr_assert_eq(tp_pixfmt_channels(d->fmtf), tp_pixfmt_channels(d->fmt8), "%s",
				     d->name);
			cr_assert_eq(sample_bytes(d->fmtf), 4, "%s", d->name);
		}
		cr_assert_eq(d->needs != 0, d->why != NULL, "%s: a need says why", d->name);
		/* the colour pass reads the solver's samples; the maps read heights */
		if (d->draw_height)
			cr_assert_eq(d->reads == RENDER_READS_SAMPLES, m == SCENE_MODE_COLOR, "%s",
				     d->name);
	}
}

/* A small scene per solver, and airy with ambient waves, smooth and choppy. */
static const struct {
	const char *name, *json;
} scenes[] = {
	{"hooke", "\"solver\": \"hooke\""},
	{"ripple", "\"solver\": \"ripple\""},
	{"shallow", "\"solver\": \"shallow\""},
	{"airy", "\"solver\": \"airy\""},
	{"airy ambient", "\"solver\": \"airy\", \"ambient\": {\"wind\": 3, \"amplitude\": 0.05}"},
	{"airy choppy", "\"solver\": \"airy\", \"ambient\": {\"wind\": 9, \"amplitude\": 2, "
			"\"choppiness\": 1.5}"},
	{"sph", "\"solver\": \"sph\", \"tank\": {\"size\": [60, 40], \"at\": [32, 24]}, "
		"\"blocks\": [{\"rect\": [4, 30, 56, 14]}]"},
};

static tp_scene *load(int i, const char *mode, tp_error *e)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "{\"format\": \"tidepool-scene/1\", \"size\": [64, 48], \"fps\": 30, "
		 "\"frames\": 2, %s%s%s%s}",
		 scenes[i].json, mode ? ", \"render\": {\"mode\": \"" : "", mode ? mode : "",
		 mode ? "\"}" : "");
	tp_scene *s = NULL;
	*e = (tp_error)TP_ERROR_INIT;
	int rc = tp_scene_load_string(text, "modes.json", NULL, &s, e);
	return rc < 0 ? NULL : s;
}

Test(modes, what_the_table_allows_is_what_renders, .timeout = 120)
{
	for (int si = 0; si < (int)(sizeof scenes / sizeof scenes[0]); si++) {
		tp_error e;
		tp_scene *s = load(si, NULL, &e);
		cr_assert_not_null(s, "%s: %s", scenes[si].name, e.text);
		tp_scene_info info = TP_SCENE_INFO_INIT;
		cr_assert_eq(tp_scene_get_info(s, &info), 0);
		const scene *sc = s->sc;
		int allowed = 0, refused = 0;
		for (int m = 0; m < SCENE_MODE_COUNT; m++) {
			const char *name = tp_mode_name((tp_mode)m);
			int lacks = render_mode_lacks((scene_mode)m, sc->solver->caps, &sc->ambient);
			/* the API's mask */
			cr_assert_eq(!lacks, !!(info.modes & 1u << m), "%s %s", scenes[si].name, name);
			/* the renderer */
			render_ctx *r = NULL;
			tp_err err;
			int rc = render_create(sc, (scene_mode)m, &r, &err);
			cr_assert_eq(rc == 0, !lacks, "%s %s: %s", scenes[si].name, name,
				     rc ? err.msg : "made");
			if (r) {
				cr_assert_eq(render_format(r), render_mode_format(sc, (scene_mode)m, 0));
				render_destroy(r);
			}
			/* a frame through the API, in the format it states */
			tp_format f = TP_FORMAT_INIT;
			e = (tp_error)TP_ERROR_INIT;
			rc = tp_scene_format(s, (tp_mode)m, &f, &e);
			cr_assert_eq(rc == 0, !lacks, "%s %s: %s", scenes[si].name, name, e.text);
			if (rc == 0) {
				tp_pixfmt want = render_mode_format(sc, (scene_mode)m, 0);
				cr_assert_eq(f.channels, tp_pixfmt_channels(want), "%s %s",
					     scenes[si].name, name);
				cr_assert_eq(f.bytes_per_sample, sample_bytes(want), "%s %s",
					     scenes[si].name, name);
				size_t row = (size_t)f.width * f.channels * f.bytes_per_sample;
				void *buf = malloc(row * f.height);
				cr_assert_eq(tp_scene_render(s, 1, (tp_mode)m, buf, row, &e), 0,
					     "%s %s: %s", scenes[si].name, name, e.text);
				free(buf);
				allowed++;
			} else {
				refused++;
			}
			/* the loader, given the mode as render.mode */
			tp_scene *t = load(si, name, &e);
			cr_assert_eq(t != NULL, !lacks, "%s %s: %s", scenes[si].name, name,
				     t ? "loaded" : e.text);
			if (!t)
				cr_assert(strstr(e.message, name), "%s %s: %s", scenes[si].name, name,
					  e.message);
			tp_scene_free(t);
		}
		cr_assert_gt(allowed, 0, "%s renders nothing", scenes[si].name);
		cr_assert_gt(refused, 0, "%s renders everything", scenes[si].name);
		tp_scene_free(s);
	}
}

/* A file's text (malloc'd). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* The words people read list the modes in prose of their own (not generated, so that no
 * help text changes): every mode of the table must be in each, and the completion's list
 * is the table's, in order. */
Test(modes, help_man_page_and_completion_name_every_mode)
{
	char want[256] = "";
	for (int m = 0; m < TP_MODE_COUNT; m++)
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", m ? " " : "",
			 tp_mode_name((tp_mode)m));
	char *bash = slurp("completion/tidepool.bash");
	char line[300];
	snprintf(line, sizeof line, "local modes=\"%s\"\n", want);
	cr_assert(strstr(bash, line), "completion/tidepool.bash: want %s", line);
	free(bash);

	char *man = slurp("docs/tidepool.1.scd");
	const char *at = strstr(man, "_MODE_=_OUT_ chooses the render mode:");
	cr_assert_not_null(at);
	char cmd[512];
	const char *bin = getenv("TP_BIN");
	snprintf(cmd, sizeof cmd, "%s render --help", bin ? bin : "build/tidepool");
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char *help = calloc(1, 1 << 16);
	size_t n = fread(help, 1, (1 << 16) - 1, p);
	help[n] = 0;
	cr_assert_eq(pclose(p), 0);
	const char *modes = strstr(help, "MODE=OUT renders mode");
	cr_assert_not_null(modes);
	for (int m = 0; m < TP_MODE_COUNT; m++) {
		char word[64];
		snprintf(word, sizeof word, "_%s_", tp_mode_name((tp_mode)m));
		const char *end = strstr(at, "Repeat *-o*");
		const char *hit = strstr(at, word);
		cr_assert(hit && end && hit < end, "the man page's -o lacks %s", word);
		const char *stop = strstr(modes, "repeat -o");
		hit = strstr(modes, tp_mode_name((tp_mode)m));
		cr_assert(hit && stop && hit < stop, "render --help's -o lacks %s",
			  tp_mode_name((tp_mode)m));
	}
	free(help);
	free(man);
}

/* The renderer knows a solver only through the surface it hands over (surface.h) and the
 * caps flags (scene/solverkind.h): no file of render/ includes the solver interface
 * (test_layers.c checks every module's includes). */
Test(modes, render_never_includes_the_solver_interface)
{
	FILE *p = popen("grep -l 'include \"solvers/solver.h\"' src/core/render/*.c "
			"src/core/render/*.h 2>/dev/null",
			"r");
	cr_assert_not_null(p);
	char line[256];
	int n = 0;
	while (fgets(line, sizeof line, p)) {
		cr_log_error("%s includes solvers/solver.h", line);
		n++;
	}
	cr_assert_eq(pclose(p) >> 8, 1, "grep failed or found a file"); /* 1: no match */
	cr_assert_eq(n, 0);
	FILE *f = fopen("src/core/render/render.h", "r");
	cr_assert_not_null(f, "run from the tree's root");
	fclose(f);
}
