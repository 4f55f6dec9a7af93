/* tidepool validate: load a scene and set up everything a render would, without rendering. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "render/render.h"
#include "scene/scene.h"
#include "sim/stepper.h"
#include "util/fsutil.h"

static const char usage[] =
	"usage: tidepool validate SCENE...\n"
	"\n"
	"Checks each scene without rendering: the JSON, every field and range, the\n"
	"background image, the solver's parameters (including its stability check) and the\n"
	"render mode. Prints one line per scene.\n"
	"\n"
	"  -q, --quiet   print only errors\n"
	"  -h, --help    show this help\n"
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

static int check_one(const char *path, int quiet)
{
	tp_err err = { "" };
	scene *sc = NULL;
	stepper *st = NULL;
	render_ctx *rd = NULL;
	int rc = scene_load(path, NULL, &sc, &err);
	if (rc == 0)
		rc = render_create(sc, sc->render.mode, &rd, &err);
	/* Every mode named in "outputs" must be one the solver's surface can feed. */
	for (int i = 0; rc == 0 && i < sc->noutputs; i++) {
		render_ctx *other = NULL;
		rc = render_create(sc, sc->outputs[i].mode, &other, &err);
		render_destroy(other);
	}
	if (rc == 0)
		rc = check_output(path, sc->output, &err);
	for (int i = 0; rc == 0 && i < sc->noutputs; i++)
		rc = check_output(path, sc->outputs[i].path, &err);
	if (rc == 0)
		rc = stepper_create(sc, 1, &st, &err);
	if (rc == 0 && !quiet)
		printf("%s: ok (%s, %dx%d, %d frames at %g fps%s%s)\n", path, sc->solver->name, sc->width,
		       sc->height, sc->frames, sc->fps, sc->output ? ", output " : "",
		       sc->output ? sc->output : "");
	stepper_destroy(st);
	render_destroy(rd);
	scene_destroy(sc);
	if (rc < 0)
		return tp_cli_fail(rc, &err);
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int quiet = 0, c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': quiet = 1; break;
		case 'h': fputs(usage, stdout); return 0;
		default: return tp_cli_usage("validate", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return tp_cli_usage("validate", "no scene file given");
	int worst = 0;
	for (int i = optind; i < argc; i++) {
		int status = check_one(argv[i], quiet);
		if (status > worst)
			worst = status;
	}
	return worst;
}
