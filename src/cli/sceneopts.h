/*
 * sceneopts.h - the one option parser of render, validate, cache, tasks and batch: the
 * scene options mean the same everywhere, so validate checks the scene render would run
 * and a cache, its tasks and their renders agree on the settings.
 *
 * Every command takes the scene group (--set, --size, --scale, --frames, --seed,
 * --threads, -q, -h) and the groups it names (-o; the flipbook options; the encoder
 * options; --range and --cache; -y), plus options of its own through a cli_extra.
 * Positional arguments (scene files) are left to the caller in argv[first..argc).
 */
#ifndef TP_CLI_SCENEOPTS_H
#define TP_CLI_SCENEOPTS_H

#include <getopt.h>
#include <stdint.h>

#include "cli/outputs.h"
#include "tidepool.h"
#include "util/error.h"
#include "exitstatus.h"

#define CLI_MAX_SETS 64
#define CLI_MAX_ARGS 256

/* Option groups a command takes besides the scene group (--set, --frames, --size, --scale,
 * --seed, --threads, -q, -h), which every command takes. */
enum {
	CLI_OUTPUT_OPTS = 1u << 0,   /* -o */
	CLI_FLIPBOOK_OPTS = 1u << 1, /* --flipbook, --frame-size, --pot */
	CLI_ENCODE_OPTS = 1u << 2,   /* --stats, --hash, --crf, --preset, --bitrate */
	CLI_RANGE_OPTS = 1u << 3,    /* --range, --cache */
	CLI_OVERWRITE_OPT = 1u << 4, /* -y */
};
/* render's: everything. validate takes the scene, output and flipbook groups. */
#define CLI_RENDER_OPTS \
	(CLI_OUTPUT_OPTS | CLI_FLIPBOOK_OPTS | CLI_ENCODE_OPTS | CLI_RANGE_OPTS | CLI_OVERWRITE_OPT)

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
	char **argv;
} cli_opts;

/* A command's own options, parsed with the shared ones: longopts (NULL-terminated; an
 * option named like a shared one replaces it), their short letters getopt-style, and
 * handle(ctx, c, long name or NULL, value), which returns 0, or the status to exit with
 * (tp_cli_usage(), or 1 after printing help). */
typedef struct cli_extra {
	const struct option *longopts;
	const char *shortopts;
	int (*handle)(void *ctx, int c, const char *name, const char *arg);
	void *ctx;
} cli_extra;

/* The help lines of the scene group, for the commands' --help texts. */
#define CLI_SCENE_OPTS_HELP                                                                        \
	"      --set KEY=VALUE  change a scene value (params.damping=4, maps.normal.bits=16,\n"    \
	"                       loop.duration=2); repeatable\n"                                    \
	"      --frames N       render N frames (overrides duration; not of a loop: --range)\n"     \
	"      --size WxH       render size in pixels; the scene is scaled to it (its \"size\"\n"  \
	"                       is its frame of reference, so the picture stays the same)\n"      \
	"      --scale F        render size as a factor of the scene's size: 0.25, 25%, 2\n"      \
	"      --seed N         random seed (rain and other random events)\n"                      \
	"      --threads N      worker threads; 0 or absent: all cores (OMP_NUM_THREADS if\n"     \
	"                       set); output is identical for every N\n"                          \
	"      --flipbook CxR   write single-file .png outputs as atlases of C x R frames\n"       \
	"      --frame-size WxH size of each flipbook frame (default: the render size)\n"          \
	"      --pot            round flipbook atlases up to powers of two\n"                      \
	"      --flipbook-padding N  N pixels around each flipbook cell, from the cell's own\n" \
	"                       wrap (tiling maps) or its edges (default 0)\n"

/* Parses argv (argv[0] is the command name) for the groups in flags. Returns 0 (o->first
 * set), 1 after printing `usage` for -h, or TP_EXIT_USAGE after printing the reason. A
 * shared option of a group the command does not take is refused by name. */
int cli_opts_parse(const char *cmd, const char *usage, unsigned flags, int argc, char **argv,
		   cli_opts *o);
/* The same with the command's own options. */
int cli_opts_parse_with(const char *cmd, const char *usage, unsigned flags, const cli_extra *x,
			int argc, char **argv, cli_opts *o);

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
