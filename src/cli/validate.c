/* tidepool validate: load a scene and set up everything a render would, without rendering. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/sceneopts.h"
#include "tidepool.h"
#include "util/fsutil.h"

/* The render options that say which scene render would run, -o in validate's words. */
static const cli_word output_words[] = {
	{"output", "  -o, --output OUT     MODE=OUT checks that the solver can render MODE\n"},
	{0},
};
static const cli_word quiet_words[] = {
	{"quiet", "  -q, --quiet          print only errors\n"},
	{0},
};
static const cli_part parts[] = {
	{.rows = cli_output_rows, .words = output_words},
	{.rows = cli_scene_rows},
	{.rows = cli_flipbook_rows},
	{.rows = cli_quiet_rows, .words = quiet_words},
	{.rows = cli_help_rows},
	{0},
};

const cli_scene_cmd cli_validate_cmd = {
	.cmd = "validate",
	.head = "usage: tidepool validate SCENE... [options]\n"
		"\n"
		"Checks each scene without rendering: the JSON, every field and range, the\n"
		"background image, the solver's parameters (including its stability check) and the\n"
		"render modes of its outputs. Prints one line per scene. Takes the scene options of\n"
		"'tidepool render', so it checks the scene that render would run.\n"
		"\n",
	.parts = parts,
	.tail = "\n"
		"Exit status: 0 all valid, 2 usage error, 3 a scene is invalid, 4 I/O error.\n",
};

/* A PNG output pattern is checked as render checks it, so a bad or huge conversion
 * (%999999999d) fails here rather than after validate said ok. */
static int check_output(const char *file, const char *path, tp_err *err)
{
	if (path && tp_has_suffix(path, ".png") && strchr(path, '%') && tp_pattern_kind(path) < 0)
		return tp_errf(err, TP_EINPUT,
			       "%s: output: a PNG pattern takes one %%d or %%0Nd with N at most %d "
			       "(got %.200s)", file, TP_PATTERN_MAX_WIDTH, path);
	return 0;
}

/* airy's ambient waves: the significant wave height their amplitudes ask for, and how much
 * of it the spectra's own laws gave (systems whose "amplitude" is left out), from the
 * solver's statistics of the first frame. */
static int say_waves(tp_scene *sc, tp_err *err)
{
	tp_frame_stats st = TP_FRAME_STATS_INIT;
	tp_error e = TP_ERROR_INIT;
	double hs = -1, law = 0;
	if (tp_scene_stats(sc, 0, &st, &e) < 0)
		return cli_api_err(&e, err);
	for (int i = 0; i < st.n; i++) {
		if (!strcmp(st.name[i], "hs_m"))
			hs = st.value[i];
		else if (!strcmp(st.name[i], "hs_law_m"))
			law = st.value[i];
	}
	if (hs < 0)
		return 0;
	if (law > 0 && law >= hs * (1 - 1e-9))
		printf("  ambient: significant wave height %.3g m (RMS %.3g m), from the spectrum's "
		       "own law for its wind and fetch (no \"amplitude\")\n",
		       hs, hs / 4);
	else if (law > 0)
		printf("  ambient: significant wave height %.3g m (RMS %.3g m); %.3g m of it from "
		       "the spectra's own laws (systems without \"amplitude\")\n",
		       hs, hs / 4, law);
	else
		printf("  ambient: significant wave height %.3g m (RMS %.3g m, from \"amplitude\")\n",
		       hs, hs / 4);
	return 0;
}

/* Loading through the library checks what a render sets up before its first frame: the
 * scene, the renderers of its modes, the solver at init and the loop's cross-fade. */
static int check_one(const char *path, const cli_opts *o, int threads)
{
	tp_err err = {""};
	tp_scene *sc = NULL;
	tp_scene_outputs so = TP_SCENE_OUTPUTS_INIT;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	int rc = cli_load(path, &o->ov, threads, &sc, &err);
	if (rc == 0) {
		tp_scene_get_outputs(sc, &so);
		tp_scene_get_info(sc, &in);
	}
	/* Every mode named by -o must be one the solver's surface can feed. */
	for (int i = 0; rc == 0 && i < o->outs.n; i++) {
		int mode;
		const char *out;
		outputs_split(o->outs.spec[i], &mode, &out);
		tp_format f = TP_FORMAT_INIT;
		tp_error e = TP_ERROR_INIT;
		if (mode >= 0 && tp_scene_format_as(sc, (tp_mode)mode, TP_PIXELS_NATIVE, &f, &e) < 0)
			rc = tp_errprefix(&err, cli_api_err(&e, &err), "-o %s", o->outs.spec[i]);
		if (rc == 0)
			rc = check_output(path, out, &err);
	}
	if (rc == 0)
		rc = check_output(path, so.output, &err);
	for (int i = 0; rc == 0 && i < so.n; i++)
		rc = check_output(path, so.o[i].path, &err);
	if (rc == 0 && !o->quiet)
		printf("%s: ok (%s, %dx%d, %d frames at %g fps%s%s)\n", path, in.solver, in.width,
		       in.height, in.frames, in.fps, so.output ? ", output " : "",
		       so.output ? so.output : "");
	if (rc == 0 && !o->quiet && !strcmp(in.solver, "airy"))
		rc = say_waves(sc, &err);
	tp_scene_free(sc);
	if (rc < 0)
		return tp_cli_fail(rc, &err);
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	cli_opts o = {.crf = -1};
	int rc = cli_opts_parse(&cli_validate_cmd, NULL, argc, argv, &o);
	if (rc)
		return rc == 1 ? TP_EXIT_OK : rc;
	if (o.first >= argc)
		return tp_cli_usage("validate", "no scene file given");
	const int threads = tp_cli_threads(o.threads);
	int worst = 0;
	for (int i = o.first; i < argc; i++) {
		int status = check_one(argv[i], &o, threads);
		if (status > worst)
			worst = status;
	}
	return worst;
}
