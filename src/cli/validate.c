/* tidepool validate: load a scene and set up everything a render would, without rendering. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/sceneopts.h"
#include "render/render.h"
#include "scene/scene.h"
#include "sim/loop.h"
#include "util/fsutil.h"

static const char usage[] =
	"usage: tidepool validate SCENE... [options]\n"
	"\n"
	"Checks each scene without rendering: the JSON, every field and range, the\n"
	"background image, the solver's parameters (including its stability check) and the\n"
	"render modes of its outputs. Prints one line per scene. Takes the scene options of\n"
	"'tidepool render', so it checks the scene that render would run.\n"
	"\n"
	"  -o, --output OUT     MODE=OUT checks that the solver can render "
	"MODE\n" CLI_SCENE_OPTS_HELP "  -q, --quiet          print only errors\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 all valid, 2 usage error, 3 a scene is invalid, 4 I/O error.\n";

/* A PNG output pattern is checked as render checks it, so a bad or huge conversion
 * (%999999999d) fails here rather than after validate said ok. */
static int check_output(const char *file, const char *path, tp_err *err)
{
	size_t n = path ? strlen(path) : 0;
	if (n > 4 && !strcasecmp(path + n - 4, ".png") && strchr(path, '%') && tp_pattern_kind(path) < 0)
		return tp_errf(err, TP_EINPUT,
			       "%s: output: a PNG pattern takes one %%d or %%0Nd with N at most %d "
			       "(got %.200s)", file, TP_PATTERN_MAX_WIDTH, path);
	return 0;
}

static int check_one(const char *path, const cli_opts *o)
{
	tp_err err = {""};
	scene *sc = NULL;
	sim_loop *lp = NULL;
	render_ctx *rd = NULL;
	int rc = scene_load(path, &o->ov, &sc, &err);
	if (rc == 0)
		rc = render_create(sc, sc->render.mode, &rd, &err);
	/* Every mode named in "outputs" or by -o must be one the solver's surface can feed. */
	for (int i = 0; rc == 0 && i < sc->noutputs; i++) {
		render_ctx *other = NULL;
		rc = render_create(sc, sc->outputs[i].mode, &other, &err);
		render_destroy(other);
	}
	for (int i = 0; rc == 0 && i < o->outs.n; i++) {
		int mode;
		const char *out;
		outputs_split(o->outs.spec[i], &mode, &out);
		render_ctx *other = NULL;
		if (mode >= 0 && (rc = render_create(sc, (scene_mode)mode, &other, &err)) < 0)
			rc = tp_errprefix(&err, rc, "-o %s", o->outs.spec[i]);
		render_destroy(other);
		if (rc == 0)
			rc = check_output(path, out, &err);
	}
	if (rc == 0)
		rc = check_output(path, sc->output, &err);
	for (int i = 0; rc == 0 && i < sc->noutputs; i++)
		rc = check_output(path, sc->outputs[i].path, &err);
	if (rc == 0) /* the solver's init and the loop's cross-fade, as render sets them up */
		rc = loop_create(sc, 1, &lp, &err);
	if (rc == 0 && !o->quiet)
		printf("%s: ok (%s, %dx%d, %d frames at %g fps%s%s)\n", path, sc->solver->name,
		       sc->width, sc->height, sc->frames, sc->fps, sc->output ? ", output " : "",
		       sc->output ? sc->output : "");
	loop_destroy(lp);
	render_destroy(rd);
	scene_destroy(sc);
	if (rc < 0)
		return tp_cli_fail(rc, &err);
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	cli_opts o = {.crf = -1};
	int rc = cli_opts_parse("validate", usage, CLI_OUTPUT_OPTS | CLI_FLIPBOOK_OPTS, argc, argv, &o);
	if (rc)
		return rc == 1 ? TP_EXIT_OK : rc;
	if (o.first >= argc)
		return tp_cli_usage("validate", "no scene file given");
	tp_cli_threads(o.threads);
	int worst = 0;
	for (int i = o.first; i < argc; i++) {
		int status = check_one(argv[i], &o);
		if (status > worst)
			worst = status;
	}
	return worst;
}
