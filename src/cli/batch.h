/*
 * batch.h - `tidepool batch` inside src/cli: its options and variants (batch.c parses,
 * names and plans them) and the steps that render them (batch_run.c).
 */
#ifndef TP_CLI_BATCH_H
#define TP_CLI_BATCH_H

#include <sys/types.h>

#include "cli/sceneopts.h"
#include "cli/variants.h"
#include "util/error.h"

#define BATCH_MAX_VARY 16
#define BATCH_MAX_VARIANTS 100000
#define BATCH_MAX_SETS 64
#define BATCH_MAX_OUT 8

typedef struct batch_opts {
	cli_opts c; /* the shared options (sceneopts.h): the scene group and -y */
	const char *scene, *dir, *name, *sheet;
	int no_sheet, jobs, thumb, overwrite, quiet;
	const char *vary_spec[BATCH_MAX_VARY];
	int nvary_spec;
	const char *const *sets; /* --set, in c */
	int nsets;
	int tasks, sheet_only;
	const char *bin;
} batch_opts;

typedef struct variant {
	char name[VARIANT_NAME_MAX + 1];
	char *sets[BATCH_MAX_VARY];      /* "key=value" */
	char *outs[BATCH_MAX_OUT];       /* "MODE=DIR/NAME/file" */
	int nouts;
	char preview[4608];        /* picture for the contact sheet (PNG or MP4), "" if none */
	int preview_frame;         /* its frame, for an MP4 */
	pid_t pid;
	int status;                /* exit status, -1 until done */
} variant;

/* One batch's state, from the scene to the contact sheet. */
typedef struct batch_run {
	const batch_opts *o;
	tp_scene *sc;
	cli_overrides base; /* --frames, --size, --scale, --seed; each variant's sets on top */
	const char *scene_pattern; /* the scene's "variants" name pattern, or NULL */
	vary vs[BATCH_MAX_VARY];
	int nv;
	variant *vars;
	int nvariants;
	char sheet_path[4352];
	int done, failed, first_fail; /* renders finished, failed, and the first's status */
	double start;
	tp_err err;
} batch_run;

/* Directories, up front: an existing variant is only replaced with -y; everything is
 * checked before anything is created. */
int batch_make_dirs(batch_run *r);
/* Renders the variants, `jobs` at a time (until Ctrl-C; a render that cannot start stops
 * the starting). */
int batch_run_variants(batch_run *r);
/* The contact sheet, the summary and the batch's status given the steps' rc. */
int batch_finish(batch_run *r, int rc);

#endif
