/* The option parser render and validate share (sceneopts.h). */
#include "cli/sceneopts.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_parse_bitrate(const char *s, int64_t *out)
{
	char buf[64];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof buf)
		return -1;
	strcpy(buf, s);
	double mul = 1;
	if (buf[n - 1] == 'k' || buf[n - 1] == 'K')
		mul = 1e3;
	else if (buf[n - 1] == 'M' || buf[n - 1] == 'm')
		mul = 1e6;
	if (mul != 1)
		buf[n - 1] = 0;
	double v;
	if (tp_parse_double(buf, &v) || v <= 0 || v * mul > 1e10)
		return -1;
	*out = (int64_t)(v * mul);
	return 0;
}

enum {
	OPT_FRAMES = 256,
	OPT_SIZE,
	OPT_SEED,
	OPT_THREADS,
	OPT_STATS,
	OPT_CRF,
	OPT_PRESET,
	OPT_BITRATE,
	OPT_HASH,
	OPT_SET,
	OPT_FLIPBOOK,
	OPT_FRAME_SIZE,
	OPT_POT,
	OPT_SCALE,
	OPT_RANGE,
	OPT_CACHE
};

/* The render group's options, refused by commands without CLI_RENDER_OPTS. */
static int render_only(int c)
{
	return c == OPT_STATS || c == OPT_HASH || c == OPT_CRF || c == OPT_PRESET ||
	       c == OPT_BITRATE || c == OPT_RANGE || c == OPT_CACHE || c == 'y';
}

int cli_opts_parse(const char *cmd, const char *usage, unsigned flags, int argc, char **argv,
		   cli_opts *o)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"frames", required_argument, NULL, OPT_FRAMES},
		{"size", required_argument, NULL, OPT_SIZE},
		{"scale", required_argument, NULL, OPT_SCALE},
		{"seed", required_argument, NULL, OPT_SEED},
		{"threads", required_argument, NULL, OPT_THREADS},
		{"stats", required_argument, NULL, OPT_STATS},
		{"hash", required_argument, NULL, OPT_HASH},
		{"crf", required_argument, NULL, OPT_CRF},
		{"preset", required_argument, NULL, OPT_PRESET},
		{"bitrate", required_argument, NULL, OPT_BITRATE},
		{"set", required_argument, NULL, OPT_SET},
		{"flipbook", required_argument, NULL, OPT_FLIPBOOK},
		{"frame-size", required_argument, NULL, OPT_FRAME_SIZE},
		{"pot", no_argument, NULL, OPT_POT},
		{"range", required_argument, NULL, OPT_RANGE},
		{"cache", required_argument, NULL, OPT_CACHE},
		{"overwrite", no_argument, NULL, 'y'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long v;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:yqh", longopts, NULL)) != -1) {
		if (render_only(c) && !(flags & CLI_RENDER_OPTS)) {
			const struct option *lo = longopts;
			while (lo->name && lo->val != c)
				lo++;
			return tp_cli_usage(cmd, "--%s is an option of 'tidepool render'",
					    lo->name);
		}
		switch (c) {
		case 'o':
			if (o->outs.n == OUTPUTS_MAX)
				return tp_cli_usage(cmd, "at most %d outputs (-o)", OUTPUTS_MAX);
			o->outs.spec[o->outs.n++] = optarg;
			break;
		case OPT_SET:
			if (o->nsets == CLI_MAX_SETS)
				return tp_cli_usage(cmd, "at most %d --set options", CLI_MAX_SETS);
			o->sets[o->nsets++] = optarg;
			break;
		case OPT_FLIPBOOK:
			if (tp_parse_size(optarg, &o->outs.cols, &o->outs.rows) ||
			    o->outs.cols > 256 || o->outs.rows > 256)
				return tp_cli_usage(cmd,
						    "--flipbook: expected CxR such as 8x8, at most "
						    "256x256 (got '%s')",
						    optarg);
			break;
		case OPT_FRAME_SIZE:
			if (tp_parse_size(optarg, &o->outs.frame_w, &o->outs.frame_h))
				return tp_cli_usage(
					cmd,
					"--frame-size: expected WxH such as 128x128 (got '%s')",
					optarg);
			break;
		case OPT_POT: o->outs.pot = 1; break;
		case 'y': o->overwrite = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': fputs(usage, stdout); return 1;
		case OPT_FRAMES:
			if (tp_parse_int(optarg, 1, SCENE_MAX_FRAMES, &v))
				return tp_cli_usage(
					cmd, "--frames: expected a whole number 1..%d (got '%s')",
					SCENE_MAX_FRAMES, optarg);
			o->ov.frames = (int)v;
			break;
		case OPT_SIZE:
			if (tp_parse_size(optarg, &o->ov.width, &o->ov.height))
				return tp_cli_usage(
					cmd, "--size: expected WxH such as 640x360 (got '%s')",
					optarg);
			break;
		case OPT_SCALE:
			if (tp_parse_scale(optarg, &o->ov.scale))
				return tp_cli_usage(cmd,
						    "--scale: expected a factor in 0..64 such as 0.5 or a "
						    "percentage such as 25%% (got '%s')",
						    optarg);
			break;
		case OPT_RANGE:
			if (tp_parse_range(optarg, &o->range_a, &o->range_b))
				return tp_cli_usage(cmd,
						    "--range: expected A-B with 0 <= A <= B, such as 100-199 "
						    "(got '%s')",
						    optarg);
			o->range = 1;
			break;
		case OPT_CACHE: o->cache = optarg; break;
		case OPT_SEED:
			if (tp_parse_u64(optarg, &o->ov.seed))
				return tp_cli_usage(
					cmd, "--seed: expected a whole number >= 0 (got '%s')",
					optarg);
			o->ov.has_seed = 1;
			break;
		case OPT_THREADS:
			if (tp_parse_int(optarg, 0, 1024, &v))
				return tp_cli_usage(cmd, "--threads: expected 0..1024 (got '%s')",
						    optarg);
			o->threads = (int)v;
			break;
		case OPT_STATS: o->stats = optarg; break;
		case OPT_HASH: o->hash = optarg; break;
		case OPT_CRF:
			if (tp_parse_int(optarg, 0, 51, &v))
				return tp_cli_usage(cmd, "--crf: expected 0..51 (got '%s')",
						    optarg);
			o->crf = (int)v;
			break;
		case OPT_PRESET: o->preset = optarg; break;
		case OPT_BITRATE:
			if (cli_parse_bitrate(optarg, &o->bitrate))
				return tp_cli_usage(
					cmd,
					"--bitrate: expected bits/s such as 8M or 2500k (got '%s')",
					optarg);
			break;
		case ':': return tp_cli_usage(cmd, "%s needs a value", argv[optind - 1]);
		default: return tp_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if ((o->outs.frame_w || o->outs.pot) && !o->outs.cols)
		return tp_cli_usage(cmd, "--frame-size and --pot go with --flipbook CxR");
	if (o->cache && !o->range)
		return tp_cli_usage(cmd, "--cache goes with --range A-B");
	/* The scene's "output" is replaced by the first -o (its path, without MODE=). */
	if (o->outs.n) {
		int mode;
		outputs_split(o->outs.spec[0], &mode, &o->ov.output);
	}
	o->ov.sets = o->sets;
	o->ov.nsets = o->nsets;
	o->first = optind;
	return 0;
}
