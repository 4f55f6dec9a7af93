/*
 * tasks.h - `tidepool tasks`: its options (tasks_args.c parses them; tasks.c plans and
 * prints the commands).
 */
#ifndef TP_CLI_TASKS_H
#define TP_CLI_TASKS_H

#include "cli/outputs.h"
#include "scene/scene.h"

#define TASKS_MAX_ARGS 256
#define TASKS_MAX_SETS 64

enum step { STEP_ALL, STEP_CACHE, STEP_RENDER, STEP_JOIN };

typedef struct tasks_opts {
	scene_overrides ov;
	const char *scene, *cache, *bin, *hash, *stats;
	int chunk, every, missing, slurm;
	enum step step;
	const char *outs[OUTPUTS_MAX];
	int nouts;
	const char *sets[TASKS_MAX_SETS];
	int nsets;
	/* passed on as given: sim = cache and render, enc = render only */
	const char *sim[TASKS_MAX_ARGS], *enc[TASKS_MAX_ARGS];
	int nsim, nenc;
} tasks_opts;

/* Parses the command line into o (zeroed by the caller). Returns 0, 1 for --help (printed),
 * or an exit status for a usage error (printed). */
int tasks_parse_args(int argc, char **argv, tasks_opts *o);

#endif
