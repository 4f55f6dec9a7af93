/*
 * tasks.h - `tidepool tasks`: its options (tasks_args.c parses them; tasks.c plans and
 * prints the commands).
 */
#ifndef TP_CLI_TASKS_H
#define TP_CLI_TASKS_H

#include "cli/outputs.h"
#include "cli/sceneopts.h"


enum step { STEP_ALL, STEP_CACHE, STEP_RENDER, STEP_JOIN };

typedef struct tasks_opts {
	cli_opts c; /* the shared options (sceneopts.h): scene, -o and encoder groups */
	cli_overrides ov;
	const char *scene, *cache, *bin, *hash, *stats;
	int chunk, every, missing, slurm;
	enum step step;
	const char *const *outs; /* -o, in c */
	int nouts;
	/* passed on as given (long name, value): sim = cache and render, enc = render only */
	const char *const *sim, *const *enc;
	int nsim, nenc;
} tasks_opts;

/* Parses the command line into o (zeroed by the caller). Returns 0, 1 for --help (printed),
 * or an exit status for a usage error (printed). */
int tasks_parse_args(int argc, char **argv, tasks_opts *o);

#endif
