/* The option parser of the scene commands and their shared option rows (sceneopts.h). */
#include "cli/sceneopts.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "encode/encoder.h"

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

/* The shared groups; the ids keep the values getopt has always seen (an abbreviation
 * like --fr is ambiguous between rows of different ids only). */
const cli_row cli_scene_rows[] = {
	{"set", 0, 1, OPT_SET,
	 "      --set KEY=VALUE  change a scene value (params.damping=4, maps.normal.bits=16,\n"
	 "                       loop.duration=2); repeatable\n", 0},
	{"frames", 0, 1, OPT_FRAMES,
	 "      --frames N       render N frames (overrides duration; not of a loop: --range)\n", 0},
	{"size", 0, 1, OPT_SIZE,
	 "      --size WxH       render size in pixels; the scene is scaled to it (its \"size\"\n"
	 "                       is its frame of reference, so the picture stays the same)\n", 0},
	{"scale", 0, 1, OPT_SCALE,
	 "      --scale F        render size as a factor of the scene's size: 0.25, 25%, 2\n", 0},
	{"seed", 0, 1, OPT_SEED, "      --seed N         random seed (rain and other random events)\n",
	 0},
	{"threads", 0, 1, OPT_THREADS,
	 "      --threads N      worker threads; 0 or absent: all cores (OMP_NUM_THREADS if\n"
	 "                       set); output is identical for every N\n", 0},
	{0},
};

const cli_row cli_output_rows[] = {
	{"output", 'o', 1, 'o',
	 "  -o, --output OUT     PNG pattern (out/%04d.png), one PNG (with --frames 1),\n"
	 "                       an OpenEXR pattern or file (.exr: float maps in metres),\n"
	 "                       an .mp4 file, or 'null' to discard frames (timing);\n"
	 "                       MODE=OUT renders mode color, height, normal, caustics,\n"
	 "                       particles (sph), displacement or foam (choppy airy),\n"
	 "                       velocity (airy's ambient waves);\n"
	 "                       repeat -o for several outputs of one simulation;\n"
	 "                       a bare OUT keeps the mode of the scene's one output;\n"
	 "                       default: the scene's \"outputs\" or \"output\"\n", 0},
	{0},
};

const cli_row cli_flipbook_rows[] = {
	{"flipbook", 0, 1, OPT_FLIPBOOK,
	 "      --flipbook CxR   write single-file .png outputs as atlases of C x R frames\n", 0},
	{"frame-size", 0, 1, OPT_FRAME_SIZE,
	 "      --frame-size WxH size of each flipbook frame (default: the render size)\n", 0},
	{"pot", 0, 0, OPT_POT, "      --pot            round flipbook atlases up to powers of two\n",
	 0},
	{"flipbook-padding", 0, 1, OPT_PADDING,
	 "      --flipbook-padding N  N pixels around each flipbook cell, from the cell's own\n"
	 "                       wrap (tiling maps) or its edges (default 0)\n", 0},
	{0},
};

const cli_row cli_range_rows[] = {
	{"range", 0, 1, OPT_RANGE,
	 "      --range A-B      render only frames A..B (0-based, inclusive) of the scene's\n"
	 "                       timeline, byte-identical to the same frames of a full render;\n"
	 "                       PNG names and --hash lines keep the global frame numbers, an\n"
	 "                       MP4 is a segment for 'tidepool join'\n", 0},
	{"cache", 0, 1, OPT_CACHE,
	 "      --cache DIR      start --range from the latest checkpoint at or before A in\n"
	 "                       DIR (written by 'tidepool cache'); without it the frames\n"
	 "                       before A are simulated without rendering; a DIR that\n"
	 "                       holds no checkpoint of this render is refused\n", 0},
	{"allow-empty-cache", 0, 0, OPT_ALLOW_EMPTY_CACHE,
	 "      --allow-empty-cache  with --cache: a DIR without checkpoints is fine (the\n"
	 "                       frames before A are then simulated)\n", 0},
	{0},
};

/* A place in a command's parts, not rows: every encoder's own options (tp_encoder.options,
 * in the registry's order) go there. */
const cli_row cli_encoder_rows[] = {{0}};

const cli_row cli_record_rows[] = {
	{"stats", 0, 1, OPT_STATS,
	 "      --stats FILE     write one JSON line per frame: frame, time, solver diagnostics\n"
	 "                       and every box's pose (a file, /dev/stdout, /dev/stderr or a\n"
	 "                       pipe)\n", 0},
	{"hash", 0, 1, OPT_HASH,
	 "      --hash FILE      also write a frame-hash manifest (xxh128 of each frame's pixels)\n"
	 "                       for 'tidepool compare'\n", 0},
	{0},
};

const cli_row cli_overwrite_rows[] = {
	{"overwrite", 'y', 0, 'y', "  -y, --overwrite      replace existing output files\n", 0},
	{0},
};
const cli_row cli_quiet_rows[] = {
	{"quiet", 'q', 0, 'q', "  -q, --quiet          no progress or summary\n", 0},
	{0},
};
const cli_row cli_help_rows[] = {
	{"help", 'h', 0, 'h', "  -h, --help           show this help\n", 0},
	{0},
};

/* Every shared group, in the order getopt has always seen their options. */
static const cli_row *const groups[] = {
	cli_scene_rows, cli_quiet_rows,   cli_help_rows,  cli_output_rows,   cli_flipbook_rows,
	cli_record_rows, cli_encoder_rows, cli_range_rows, cli_overwrite_rows,
};
#define NGROUPS (sizeof groups / sizeof groups[0])
#define MAX_ROWS 64
#define MAX_PARTS 24
#define MAX_GROUPS 16

/* Writes the tables of cli_encoder_rows's place: each encoder's options. */
static int encoder_tables(const cli_row **out, int n, int max)
{
	for (int i = 0; tp_encoders[i]; i++)
		if (tp_encoders[i]->options && n < max)
			out[n++] = tp_encoders[i]->options;
	return n;
}

int cli_scene_groups(const cli_row **out, int max)
{
	int n = 0;
	for (size_t g = 0; g < NGROUPS; g++)
		if (groups[g] == cli_encoder_rows)
			n = encoder_tables(out, n, max);
		else if (n < max)
			out[n++] = groups[g];
	return n;
}

int cli_scene_parts(const cli_scene_cmd *c, cli_part *out, int max)
{
	int n = 0;
	for (const cli_part *p = c->parts; (p->text || p->rows) && n < max - 1; p++) {
		if (p->rows != cli_encoder_rows) {
			out[n++] = *p;
			continue;
		}
		const cli_row *t[8];
		int k = encoder_tables(t, 0, 8);
		for (int i = 0; i < k && n < max - 1; i++)
			out[n++] = (cli_part){.text = i ? NULL : p->text, .rows = t[i],
					      .in_text = p->in_text};
	}
	out[n] = (cli_part){0};
	return n;
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

/* One shared row's value into o. */
static int parse_shared(const char *cmd, const cli_row *row, const char *arg, cli_opts *o)
{
	long v;
	switch (row->id) {
	case 'o':
		if (o->outs.n == OUTPUTS_MAX)
			return tp_cli_usage(cmd, "at most %d outputs (-o)", OUTPUTS_MAX);
		o->outs.spec[o->outs.n++] = arg;
		return 0;
	case OPT_SET:
		if (o->nsets == CLI_MAX_SETS)
			return tp_cli_usage(cmd, "at most %d --set options", CLI_MAX_SETS);
		o->sets[o->nsets++] = arg;
		break;
	case OPT_FLIPBOOK:
		if (tp_parse_size(arg, &o->outs.cols, &o->outs.rows) || o->outs.cols > 256 ||
		    o->outs.rows > 256)
			return tp_cli_usage(cmd,
					    "--flipbook: expected CxR such as 8x8, at most "
					    "256x256 (got '%s')",
					    arg);
		return 0;
	case OPT_FRAME_SIZE:
		if (tp_parse_size(arg, &o->outs.frame_w, &o->outs.frame_h))
			return tp_cli_usage(cmd,
					    "--frame-size: expected WxH such as 128x128 (got '%s')",
					    arg);
		return 0;
	case OPT_POT: o->outs.pot = 1; return 0;
	case OPT_PADDING:
		if (tp_parse_int(arg, 0, FLIPBOOK_MAX_PADDING, &v))
			return tp_cli_usage(cmd,
					    "--flipbook-padding: expected pixels 0..%d (got '%s')",
					    FLIPBOOK_MAX_PADDING, arg);
		o->outs.padding = (int)v;
		return 0;
	case 'y': o->overwrite = 1; return 0;
	case 'q': o->quiet = 1; return 0;
	case OPT_FRAMES:
		if (tp_parse_int(arg, 1, TP_MAX_FRAMES, &v))
			return tp_cli_usage(cmd, "--frames: expected a whole number 1..%d (got '%s')",
					    TP_MAX_FRAMES, arg);
		o->ov.frames = (int)v;
		break;
	case OPT_SIZE:
		if (tp_parse_size(arg, &o->ov.width, &o->ov.height))
			return tp_cli_usage(cmd, "--size: expected WxH such as 640x360 (got '%s')",
					    arg);
		break;
	case OPT_SCALE:
		if (tp_parse_scale(arg, &o->ov.scale))
			return tp_cli_usage(cmd,
					    "--scale: expected a factor in 0..64 such as 0.5 or a "
					    "percentage such as 25%% (got '%s')",
					    arg);
		break;
	case OPT_RANGE:
		if (tp_parse_range(arg, &o->range_a, &o->range_b))
			return tp_cli_usage(cmd,
					    "--range: expected A-B with 0 <= A <= B, such as 100-199 "
					    "(got '%s')",
					    arg);
		o->range = 1;
		return 0;
	case OPT_CACHE: o->cache = arg; return 0;
	case OPT_ALLOW_EMPTY_CACHE: o->allow_empty_cache = 1; return 0;
	case OPT_SEED:
		if (tp_parse_u64(arg, &o->ov.seed))
			return tp_cli_usage(cmd, "--seed: expected a whole number >= 0 (got '%s')",
					    arg);
		o->ov.has_seed = 1;
		break;
	case OPT_THREADS:
		if (tp_parse_int(arg, 0, 1024, &v))
			return tp_cli_usage(cmd, "--threads: expected 0..1024 (got '%s')", arg);
		o->threads = (int)v;
		break;
	case OPT_STATS: o->stats = arg; return 0;
	case OPT_HASH: o->hash = arg; return 0;
	case ENC_OPT_CRF:
		if (tp_parse_int(arg, 0, 51, &v))
			return tp_cli_usage(cmd, "--crf: expected 0..51 (got '%s')", arg);
		o->crf = (int)v;
		return keep_arg(cmd, o->enc_args, &o->nenc_args, row->name, arg);
	case ENC_OPT_PRESET:
		o->preset = arg;
		return keep_arg(cmd, o->enc_args, &o->nenc_args, row->name, arg);
	case ENC_OPT_BITRATE:
		if (cli_parse_bitrate(arg, &o->bitrate))
			return tp_cli_usage(cmd,
					    "--bitrate: expected bits/s such as 8M or 2500k (got '%s')",
					    arg);
		return keep_arg(cmd, o->enc_args, &o->nenc_args, row->name, arg);
	default: return 0;
	}
	/* The scene group: what makes the simulation, kept as given too. */
	return keep_arg(cmd, o->scene_args, &o->nscene_args, row->name, arg);
}

/* Where a row of the joined table comes from. */
enum { ROW_OWN, ROW_SHARED, ROW_REFUSED };

typedef struct joined {
	const cli_scene_cmd *c;
	cli_part parts[MAX_PARTS + 1]; /* c's, with the encoders' options in place */
	const cli_row *groups[MAX_GROUPS];
	int ngroups;
	void *ctx;
	cli_opts *o;
	cli_row rows[MAX_ROWS + 1]; /* copies, for getopt: one table */
	const cli_row *src[MAX_ROWS]; /* the rows they copy, handed to the handlers */
	unsigned char from[MAX_ROWS];
	int n;
} joined;

static int is_group(const joined *j, const cli_row *rows)
{
	for (int g = 0; g < j->ngroups; g++)
		if (j->groups[g] == rows)
			return 1;
	return 0;
}

static int takes(const cli_part *parts, const cli_row *rows)
{
	for (const cli_part *p = parts; p->text || p->rows; p++)
		if (p->rows == rows)
			return 1;
	return 0;
}

/* An own row of this name (it replaces the shared one). */
static int own_named(const joined *j, const char *name)
{
	for (int i = 0; i < j->n; i++)
		if (j->from[i] == ROW_OWN && !strcmp(j->rows[i].name, name))
			return 1;
	return 0;
}

static void add_row(joined *j, const cli_row *r, int from)
{
	if (j->n == MAX_ROWS) {
		/* A programming error, never input: a dropped row would be an option that
		 * silently stops existing. */
		fprintf(stderr, "tidepool: internal error: more than %d option rows\n", MAX_ROWS);
		abort();
	}
	j->rows[j->n] = *r;
	j->src[j->n] = r;
	j->from[j->n++] = (unsigned char)from;
}

static int dispatch(void *ctx, const cli_row *row, const char *value)
{
	joined *j = ctx;
	const ptrdiff_t i = row - j->rows;
	row = j->src[i];
	switch (j->from[i]) {
	case ROW_OWN: return j->c->handle(j->ctx, row, value);
	case ROW_REFUSED:
		return tp_cli_usage(j->c->cmd, "--%s is an option of 'tidepool render'", row->name);
	default: return parse_shared(j->c->cmd, row, value, j->o);
	}
}

int cli_opts_parse(const cli_scene_cmd *c, void *ctx, int argc, char **argv, cli_opts *o)
{
	joined j = {.c = c, .ctx = ctx, .o = o};
	cli_scene_parts(c, j.parts, MAX_PARTS + 1);
	j.ngroups = cli_scene_groups(j.groups, MAX_GROUPS);
	/* The command's own rows first, then every shared group's: taken or refused. */
	for (const cli_part *p = j.parts; p->text || p->rows; p++)
		for (const cli_row *r = p->rows; r && !is_group(&j, p->rows) && r->name; r++)
			add_row(&j, r, ROW_OWN);
	for (int g = 0; g < j.ngroups; g++)
		for (const cli_row *r = j.groups[g]; r->name; r++)
			if (!own_named(&j, r->name))
				add_row(&j, r, takes(j.parts, j.groups[g]) ? ROW_SHARED : ROW_REFUSED);
	j.rows[j.n] = (cli_row){0};
	const cli_rows rows = {.cmd = c->cmd, .head = c->head, .rows = j.rows, .tail = c->tail,
			       .parts = j.parts, .handle = dispatch, .ctx = &j};
	int first, rc = cli_rows_parse(&rows, argc, argv, &first);
	if (rc)
		return rc;
	if ((o->outs.frame_w || o->outs.pot) && !o->outs.cols)
		return tp_cli_usage(c->cmd, "--frame-size and --pot go with --flipbook CxR");
	if (o->cache && !o->range)
		return tp_cli_usage(c->cmd, "--cache goes with --range A-B");
	if (o->allow_empty_cache && !o->cache)
		return tp_cli_usage(c->cmd, "--allow-empty-cache goes with --cache DIR");
	/* The scene's "output" is replaced by the first -o (its path, without MODE=). */
	if (o->outs.n) {
		int mode;
		outputs_split(o->outs.spec[0], &mode, &o->ov.output);
	}
	o->ov.sets = o->sets;
	o->ov.nsets = o->nsets;
	o->first = first;
	return 0;
}
