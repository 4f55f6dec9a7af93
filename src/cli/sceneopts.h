/*
 * sceneopts.h - the shared options of render, validate, cache, tasks and batch: the
 * scene options mean the same everywhere, so validate checks the scene render would run
 * and a cache, its tasks and their renders agree on the settings.
 *
 * Each option is a row (optrows.h) of a shared group (the scene group --set, --size,
 * --scale, --frames, --seed, --threads; -o; the flipbook options; each encoder's own
 * options, tp_encoder.options; --stats and --hash; --range and --cache; -y; -q; -h) or of
 * the command's own table, and all go through cli_rows_parse(); a command's --help is
 * printed from the rows, in the parts and wording it gives.
 * Positional arguments (scene files) are left to the caller in argv[first..argc).
 */
#ifndef TP_CLI_SCENEOPTS_H
#define TP_CLI_SCENEOPTS_H

#include <stdint.h>

#include "cli/optrows.h"
#include "cli/outputs.h"
#include "tidepool.h"
#include "util/error.h"
#include "exitstatus.h"

#define CLI_MAX_SETS 64
#define CLI_MAX_ARGS 256

/* What the command calls tp_load_options' overrides in messages: "--set", "--size", ... */
extern const char *const cli_override_names[TP_OVERRIDE_COUNT];

/* The scene group's values, as tp_load_options takes them (zero: the scene's own). */
typedef struct cli_overrides {
	int width, height; /* --size */
	double scale;      /* --scale */
	int frames;        /* --frames */
	int has_seed;      /* --seed */
	uint64_t seed;
	const char *output; /* the first -o's path: replaces the scene's "output" */
	const char *const *sets; /* --set KEY=VALUE, in order */
	int nsets;
} cli_overrides;

typedef struct cli_opts {
	cli_overrides ov;
	int threads;
	int overwrite, quiet;
	const char *stats;
	const char *hash;
	out_cli outs;
	const char *sets[CLI_MAX_SETS];
	int nsets;
	int crf; /* -1: the encoder's default */
	const char *preset;
	int64_t bitrate;
	int first; /* index of the first positional argument */
	int range, range_a, range_b; /* --range A-B (render) */
	const char *cache;           /* --cache DIR (render, with --range) */
	int allow_empty_cache;       /* --allow-empty-cache: DIR may hold no checkpoint */
	/* The scene group's and the encoder options as given, in order: long name (no dashes)
	 * and value, for commands that pass them on (tasks, batch). */
	const char *scene_args[CLI_MAX_ARGS];
	int nscene_args;
	const char *enc_args[CLI_MAX_ARGS];
	int nenc_args;
} cli_opts;

/* The shared groups, each a table of rows whose help is render's wording. A scene command
 * takes the groups its parts name; a shared option of a group it does not take is refused
 * by name ("--crf is an option of 'tidepool render'"). */
extern const cli_row cli_scene_rows[];     /* --set --frames --size --scale --seed --threads */
extern const cli_row cli_output_rows[];    /* -o */
extern const cli_row cli_flipbook_rows[];  /* --flipbook --frame-size --pot --flipbook-padding */
extern const cli_row cli_range_rows[];     /* --range --cache --allow-empty-cache */
/* Not rows but their place: every encoder's own options (tp_encoder.options: the MP4
 * encoder's --crf, --preset, --bitrate), as groups of their own. */
extern const cli_row cli_encoder_rows[];
extern const cli_row cli_record_rows[];    /* --stats --hash */
extern const cli_row cli_overwrite_rows[]; /* -y */
extern const cli_row cli_quiet_rows[];     /* -q */
extern const cli_row cli_help_rows[];      /* -h */

/* A scene command's options: its own rows and the groups it takes, as parts of its --help
 * in the order printed. An own row named like a shared one replaces it. */
typedef struct cli_scene_cmd {
	const char *cmd;         /* "render": for messages */
	const char *head, *tail; /* --help before and after the parts */
	const cli_part *parts;
	/* One of its own rows: 0, or the status to exit with (tp_cli_usage's). */
	int (*handle)(void *ctx, const cli_row *row, const char *value);
} cli_scene_cmd;

extern const cli_scene_cmd cli_render_cmd, cli_validate_cmd, cli_cache_cmd, cli_tasks_cmd,
	cli_batch_cmd;

/* The parts of c's --help with each encoder's options in cli_encoder_rows's place (at most
 * max - 1 and an end), and every shared group (the encoders' options each one); counts. */
int cli_scene_parts(const cli_scene_cmd *c, cli_part *out, int max);
int cli_scene_groups(const cli_row **out, int max);

/* Parses argv (argv[0] is the command name) through c's rows, the own ones into ctx. Returns
 * 0 (o->first set), 1 after printing --help, or TP_EXIT_USAGE after printing the reason. */
int cli_opts_parse(const cli_scene_cmd *c, void *ctx, int argc, char **argv, cli_opts *o);

/* Loads a scene through libtidepool with these overrides and --threads, keeping no
 * checkpoints in memory (the commands go forwards only). On failure the message (the
 * library's, as validate prints it) is in err and the TP_E* code returned. */
int cli_load(const char *path, const cli_overrides *ov, int threads, tp_scene **out,
	     tp_err *err);
/* A failed library call's error as the CLI's: the message into err, the code returned. */
int cli_api_err(const tp_error *e, tp_err *err);

/* --bitrate: bits/s with an optional k or M suffix. 0 or -1. */
int cli_parse_bitrate(const char *s, int64_t *out);

#endif
