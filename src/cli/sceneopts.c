/* The option parser render and validate share (sceneopts.h). */
#include "cli/sceneopts.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_api_err(const tp_error *e, tp_err *err)
{
	const char *text = e->text[0] ? e->text : "failed";
	size_t n = strnlen(text, sizeof err->msg - 1); /* messages are one line, well under */
	memcpy(err->msg, text, n);
	err->msg[n] = 0;
	return e->code < 0 ? e->code : TP_EIO;
}

/* The library names its overrides by its own fields; the command's messages name its flags. */
const char *const cli_override_names[TP_OVERRIDE_COUNT] = {
	[TP_OVERRIDE_SETS] = "--set",    [TP_OVERRIDE_SIZE] = "--size",
	[TP_OVERRIDE_SCALE] = "--scale", [TP_OVERRIDE_FRAMES] = "--frames",
	[TP_OVERRIDE_SEED] = "--seed",   [TP_OVERRIDE_OUTPUT] = "-o",
	[TP_OVERRIDE_RANGE] = "--range",
};

int cli_load(const char *path, const cli_overrides *ov, int threads, tp_scene **out,
	     tp_err *err)
{
	const tp_load_options lo = {.size = sizeof lo,
				    .width = ov->width,
				    .height = ov->height,
				    .scale = ov->scale,
				    .frames = ov->frames,
				    .has_seed = ov->has_seed,
				    .seed = ov->seed,
				    .sets = ov->sets,
				    .nsets = ov->nsets,
				    .threads = threads,
				    .checkpoint_every = TP_CHECKPOINTS_NONE,
				    .output = ov->output,
				    .names = cli_override_names,
				    .nnames = TP_OVERRIDE_COUNT};
	tp_error e = TP_ERROR_INIT;
	int rc = tp_scene_load_file(path, &lo, out, &e);
	return rc < 0 ? cli_api_err(&e, err) : 0;
}

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
	OPT_PADDING,
	OPT_SCALE,
	OPT_RANGE,
	OPT_CACHE,
	OPT_ALLOW_EMPTY_CACHE
};

/* Every shared option with the group that brings it; the scene group always comes. */
typedef struct shared_opt {
	struct option lo;
	unsigned group; /* 0: the scene group */
} shared_opt;

static const shared_opt shared[] = {
	{{"set", required_argument, NULL, OPT_SET}, 0},
	{{"frames", required_argument, NULL, OPT_FRAMES}, 0},
	{{"size", required_argument, NULL, OPT_SIZE}, 0},
	{{"scale", required_argument, NULL, OPT_SCALE}, 0},
	{{"seed", required_argument, NULL, OPT_SEED}, 0},
	{{"threads", required_argument, NULL, OPT_THREADS}, 0},
	{{"quiet", no_argument, NULL, 'q'}, 0},
	{{"help", no_argument, NULL, 'h'}, 0},
	{{"output", required_argument, NULL, 'o'}, CLI_OUTPUT_OPTS},
	{{"flipbook", required_argument, NULL, OPT_FLIPBOOK}, CLI_FLIPBOOK_OPTS},
	{{"frame-size", required_argument, NULL, OPT_FRAME_SIZE}, CLI_FLIPBOOK_OPTS},
	{{"pot", no_argument, NULL, OPT_POT}, CLI_FLIPBOOK_OPTS},
	{{"flipbook-padding", required_argument, NULL, OPT_PADDING}, CLI_FLIPBOOK_OPTS},
	{{"stats", required_argument, NULL, OPT_STATS}, CLI_ENCODE_OPTS},
	{{"hash", required_argument, NULL, OPT_HASH}, CLI_ENCODE_OPTS},
	{{"crf", required_argument, NULL, OPT_CRF}, CLI_ENCODE_OPTS},
	{{"preset", required_argument, NULL, OPT_PRESET}, CLI_ENCODE_OPTS},
	{{"bitrate", required_argument, NULL, OPT_BITRATE}, CLI_ENCODE_OPTS},
	{{"range", required_argument, NULL, OPT_RANGE}, CLI_RANGE_OPTS},
	{{"cache", required_argument, NULL, OPT_CACHE}, CLI_RANGE_OPTS},
	{{"allow-empty-cache", no_argument, NULL, OPT_ALLOW_EMPTY_CACHE}, CLI_RANGE_OPTS},
	{{"overwrite", no_argument, NULL, 'y'}, CLI_OVERWRITE_OPT},
};
#define NSHARED (sizeof shared / sizeof shared[0])
#define MAX_EXTRA 32

static const shared_opt *shared_by_val(int c)
{
	for (size_t i = 0; i < NSHARED; i++)
		if (shared[i].lo.val == c)
			return &shared[i];
	return NULL;
}

static int named_in(const struct option *lo, const char *name)
{
	for (; lo && lo->name; lo++)
		if (!strcmp(lo->name, name))
			return 1;
	return 0;
}

/* Keeps the option as given (its long name, without dashes, and its value), for commands
 * that pass it on to the commands they run. */
static int keep_arg(const char *cmd, const char **args, int *n, const char *name, const char *arg)
{
	if (*n + 2 > CLI_MAX_ARGS)
		return tp_cli_usage(cmd, "too many options");
	args[(*n)++] = name;
	args[(*n)++] = arg;
	return 0;
}

static int parse_shared(const char *cmd, const char *usage, int c, const char *name,
			cli_opts *o)
{
	long v;
	switch (c) {
	case 'o':
		if (o->outs.n == OUTPUTS_MAX)
			return tp_cli_usage(cmd, "at most %d outputs (-o)", OUTPUTS_MAX);
		o->outs.spec[o->outs.n++] = optarg;
		return 0;
	case OPT_SET:
		if (o->nsets == CLI_MAX_SETS)
			return tp_cli_usage(cmd, "at most %d --set options", CLI_MAX_SETS);
		o->sets[o->nsets++] = optarg;
		break;
	case OPT_FLIPBOOK:
		if (tp_parse_size(optarg, &o->outs.cols, &o->outs.rows) || o->outs.cols > 256 ||
		    o->outs.rows > 256)
			return tp_cli_usage(cmd,
					    "--flipbook: expected CxR such as 8x8, at most "
					    "256x256 (got '%s')",
					    optarg);
		return 0;
	case OPT_FRAME_SIZE:
		if (tp_parse_size(optarg, &o->outs.frame_w, &o->outs.frame_h))
			return tp_cli_usage(cmd,
					    "--frame-size: expected WxH such as 128x128 (got '%s')",
					    optarg);
		return 0;
	case OPT_POT: o->outs.pot = 1; return 0;
	case OPT_PADDING:
		if (tp_parse_int(optarg, 0, FLIPBOOK_MAX_PADDING, &v))
			return tp_cli_usage(cmd,
					    "--flipbook-padding: expected pixels 0..%d (got '%s')",
					    FLIPBOOK_MAX_PADDING, optarg);
		o->outs.padding = (int)v;
		return 0;
	case 'y': o->overwrite = 1; return 0;
	case 'q': o->quiet = 1; return 0;
	case 'h': fputs(usage, stdout); return 1;
	case OPT_FRAMES:
		if (tp_parse_int(optarg, 1, TP_MAX_FRAMES, &v))
			return tp_cli_usage(cmd, "--frames: expected a whole number 1..%d (got '%s')",
					    TP_MAX_FRAMES, optarg);
		o->ov.frames = (int)v;
		break;
	case OPT_SIZE:
		if (tp_parse_size(optarg, &o->ov.width, &o->ov.height))
			return tp_cli_usage(cmd, "--size: expected WxH such as 640x360 (got '%s')",
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
		return 0;
	case OPT_CACHE: o->cache = optarg; return 0;
	case OPT_ALLOW_EMPTY_CACHE: o->allow_empty_cache = 1; return 0;
	case OPT_SEED:
		if (tp_parse_u64(optarg, &o->ov.seed))
			return tp_cli_usage(cmd, "--seed: expected a whole number >= 0 (got '%s')",
					    optarg);
		o->ov.has_seed = 1;
		break;
	case OPT_THREADS:
		if (tp_parse_int(optarg, 0, 1024, &v))
			return tp_cli_usage(cmd, "--threads: expected 0..1024 (got '%s')", optarg);
		o->threads = (int)v;
		break;
	case OPT_STATS: o->stats = optarg; return 0;
	case OPT_HASH: o->hash = optarg; return 0;
	case OPT_CRF:
		if (tp_parse_int(optarg, 0, 51, &v))
			return tp_cli_usage(cmd, "--crf: expected 0..51 (got '%s')", optarg);
		o->crf = (int)v;
		return keep_arg(cmd, o->enc_args, &o->nenc_args, name, optarg);
	case OPT_PRESET:
		o->preset = optarg;
		return keep_arg(cmd, o->enc_args, &o->nenc_args, name, optarg);
	case OPT_BITRATE:
		if (cli_parse_bitrate(optarg, &o->bitrate))
			return tp_cli_usage(cmd,
					    "--bitrate: expected bits/s such as 8M or 2500k (got '%s')",
					    optarg);
		return keep_arg(cmd, o->enc_args, &o->nenc_args, name, optarg);
	default: return tp_cli_usage(cmd, "unknown option '%s'", o->argv[optind - 1]);
	}
	/* The scene group: what makes the simulation, kept as given too. */
	return keep_arg(cmd, o->scene_args, &o->nscene_args, name, optarg);
}

int cli_opts_parse_with(const char *cmd, const char *usage, unsigned flags, const cli_extra *x,
			int argc, char **argv, cli_opts *o)
{
	struct option lo[NSHARED + MAX_EXTRA + 1];
	char shortopts[64] = ":";
	size_t n = 0;
	/* The command's own first: an option it names itself replaces the shared one. */
	for (const struct option *e = x ? x->longopts : NULL; e && e->name && n < MAX_EXTRA; e++)
		lo[n++] = *e;
	for (size_t i = 0; i < NSHARED; i++)
		if (!named_in(x ? x->longopts : NULL, shared[i].lo.name))
			lo[n++] = shared[i].lo;
	lo[n] = (struct option){NULL, 0, NULL, 0};
	/* Short options: the shared ones (refused by group below), then the command's. */
	strcat(shortopts, "o:yqh");
	if (x && x->shortopts)
		strncat(shortopts, x->shortopts, sizeof shortopts - strlen(shortopts) - 1);
	int c, li;
	opterr = 0;
	optind = 1;
	o->argv = argv;
	while ((li = -1, c = getopt_long(argc, argv, shortopts, lo, &li)) != -1) {
		if (c == ':')
			return tp_cli_usage(cmd, "%s needs a value", argv[optind - 1]);
		if (c == '?')
			return tp_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		const char *name = li >= 0 ? lo[li].name : NULL;
		/* The command's own options (by value, or by name when it renamed a shared one). */
		int own = x && x->handle &&
			  ((li >= 0 && (size_t)li < n && named_in(x->longopts, lo[li].name)) ||
			   (li < 0 && x->shortopts && strchr(x->shortopts, c)));
		if (own) {
			int rc = x->handle(x->ctx, c, name, optarg);
			if (rc)
				return rc;
			continue;
		}
		const shared_opt *so = shared_by_val(c);
		if (so && so->group && !(so->group & flags))
			return tp_cli_usage(cmd, "--%s is an option of 'tidepool render'", so->lo.name);
		int rc = parse_shared(cmd, usage, c, so ? so->lo.name : "?", o);
		if (rc)
			return rc;
	}
	if ((o->outs.frame_w || o->outs.pot) && !o->outs.cols)
		return tp_cli_usage(cmd, "--frame-size and --pot go with --flipbook CxR");
	if (o->cache && !o->range)
		return tp_cli_usage(cmd, "--cache goes with --range A-B");
	if (o->allow_empty_cache && !o->cache)
		return tp_cli_usage(cmd, "--allow-empty-cache goes with --cache DIR");
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

int cli_opts_parse(const char *cmd, const char *usage, unsigned flags, int argc, char **argv,
		   cli_opts *o)
{
	return cli_opts_parse_with(cmd, usage, flags, NULL, argc, argv, o);
}
