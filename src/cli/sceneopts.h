/*
 * sceneopts.h - the options `render` and `validate` share: one parser, so that validate
 * checks exactly the scene a render with the same options would run.
 *
 * The scene group (--set, --size, --scale, --frames, --seed, --threads, -o, --flipbook,
 * --frame-size, --pot, -q, -h) is accepted by both; the render group (--stats, --hash,
 * --crf, --preset, --bitrate, --range, --cache, -y) only when CLI_RENDER_OPTS is given. Positional
 * arguments (scene files) are left to the caller in argv[first..argc).
 */
#ifndef TP_CLI_SCENEOPTS_H
#define TP_CLI_SCENEOPTS_H

#include <stdint.h>

#include "cli/outputs.h"
#include "scene/scene.h"

#define CLI_MAX_SETS 64

enum { CLI_RENDER_OPTS = 1u << 0 };

typedef struct cli_opts {
	scene_overrides ov;
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
} cli_opts;

/* The help lines of the scene group, for the commands' --help texts. */
#define CLI_SCENE_OPTS_HELP                                                                        \
	"      --set KEY=VALUE  change a scene value (params.damping=4, maps.normal.bits=16,\n"    \
	"                       loop.duration=2); repeatable\n"                                    \
	"      --frames N       render N frames (overrides duration)\n"                            \
	"      --size WxH       render size in pixels; the scene is scaled to it (its \"size\"\n"  \
	"                       is its frame of reference, so the picture stays the same)\n"      \
	"      --scale F        render size as a factor of the scene's size: 0.25, 25%, 2\n"      \
	"      --seed N         random seed (rain and other random events)\n"                      \
	"      --threads N      worker threads; 0 or absent: all cores (OMP_NUM_THREADS if\n"     \
	"                       set); output is identical for every N\n"                          \
	"      --flipbook CxR   write single-file .png outputs as atlases of C x R frames\n"       \
	"      --frame-size WxH size of each flipbook frame (default: the render size)\n"          \
	"      --pot            round flipbook atlases up to powers of two\n"

/* Parses argv (argv[0] is the command name). Returns 0 (o->first set), 1 after printing
 * `usage` for -h, or TP_EXIT_USAGE after printing the reason. */
int cli_opts_parse(const char *cmd, const char *usage, unsigned flags, int argc, char **argv,
		   cli_opts *o);

/* --bitrate: bits/s with an optional k or M suffix. 0 or -1. */
int cli_parse_bitrate(const char *s, int64_t *out);

#endif
