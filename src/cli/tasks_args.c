/* tasks_args.c - the options of `tidepool tasks` (tasks.h), through the parser render,
 * cache and batch share (sceneopts.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tasks.h"

enum { OPT_CHUNK = 1024, OPT_CACHE, OPT_EVERY, OPT_STEP, OPT_MISSING, OPT_SLURM, OPT_BIN,
       OPT_WHOLE };

/* tasks's own rows; the render options it cannot split are rows of its own that refuse
 * them with the reason (no line in --help). */
static const cli_row own[] = {
	{"chunk", 0, 1, OPT_CHUNK, "  --chunk N            frames per chunk\n", 0},
	{"cache", 0, 1, OPT_CACHE,
	 "  --cache DIR          simulate once into DIR (tidepool cache) and start every\n"
	 "                       chunk from its checkpoint; DIR must be shared by the hosts\n", 0},
	{"every", 0, 1, OPT_EVERY,
	 "  --every N            frames between checkpoints (default: the chunk size)\n", 0},
	{"step", 0, 1, OPT_STEP,
	 "  --step STEP          print only one step: cache, render or join\n", 0},
	{"missing", 0, 0, OPT_MISSING,
	 "  --missing            only what is not done yet: the chunks whose files are\n"
	 "                       absent or incomplete (resuming a failed farm run), the\n"
	 "                       cache if a checkpoint is missing, joins not yet made\n", 0},
	{"slurm", 0, 0, OPT_SLURM,
	 "  --slurm              print an sbatch driver script instead: the cache as one\n"
	 "                       job, the chunks as a job array depending on it (the array\n"
	 "                       index picks the chunk), the joins as a last job; run it as\n"
	 "                       'sh SCRIPT [sbatch options]' ('--wait' waits for each job)\n", 0},
	{"bin", 0, 1, OPT_BIN,
	 "  --bin PATH           the tidepool the commands run (default: tidepool)\n", 0},
	{"flipbook", 0, 1, OPT_WHOLE, "", 0},
	{"frame-size", 0, 1, OPT_WHOLE, "", 0},
	{"pot", 0, 0, OPT_WHOLE, "", 0},
	{"range", 0, 1, OPT_WHOLE, "", 0},
	{0},
};

/* The render options passed on to every chunk: named in one paragraph, not a line each;
 * -y and -q are taken and dropped (the commands printed always have both). */
static const cli_part parts[] = {
	{.rows = own},
	{.text = "\n"
		 "render options, passed on to every chunk: -o OUT (repeatable, MODE=OUT),\n"
		 "--set KEY=VALUE, --frames N, --size WxH, --scale F, --seed N, --threads N, --crf N,\n"
		 "--preset NAME, --bitrate RATE, --hash FILE, --stats FILE (see 'tidepool render\n"
		 "--help'). The commands always replace their own files (-y) and run quietly (-q).\n"
		 "\n"},
	{.rows = cli_output_rows, .in_text = 1},
	{.rows = cli_scene_rows, .in_text = 1},
	{.rows = cli_encoder_rows, .in_text = 1},
	{.rows = cli_record_rows, .in_text = 1},
	{.rows = cli_overwrite_rows, .in_text = 1},
	{.rows = cli_quiet_rows, .in_text = 1},
	{.rows = cli_help_rows},
	{0},
};

/* tasks's own options, and the render options it cannot split, refused with the reason. */
static int own_option(void *ctx, const cli_row *row, const char *arg)
{
	tasks_opts *o = ctx;
	const char *name = row->name;
	long v;
	switch (row->id) {
	case OPT_CHUNK:
	case OPT_EVERY:
		if (tp_parse_int(arg, 1, TP_MAX_FRAMES, &v))
			return tp_cli_usage("tasks", "--%s: expected a whole number 1..%d (got '%s')",
					    name, TP_MAX_FRAMES, arg);
		*(row->id == OPT_CHUNK ? &o->chunk : &o->every) = (int)v;
		return 0;
	case OPT_CACHE: o->cache = arg; return 0;
	case OPT_STEP:
		if (!strcmp(arg, "cache"))
			o->step = STEP_CACHE;
		else if (!strcmp(arg, "render"))
			o->step = STEP_RENDER;
		else if (!strcmp(arg, "join"))
			o->step = STEP_JOIN;
		else
			return tp_cli_usage("tasks", "--step: expected cache, render or join (got '%s')",
					    arg);
		return 0;
	case OPT_MISSING: o->missing = 1; return 0;
	case OPT_SLURM: o->slurm = 1; return 0;
	case OPT_BIN: o->bin = arg; return 0;
	default:
		return tp_cli_usage("tasks", "--%s: %s", name,
				    strcmp(name, "range")
					    ? "a flipbook atlas holds every frame; it cannot be rendered in chunks"
					    : "tasks chooses the ranges itself (--chunk N)");
	}
}

const cli_scene_cmd cli_tasks_cmd = {
	.cmd = "tasks",
	.head = "usage: tidepool tasks SCENE --chunk N [options] [render options]\n"
		"\n"
		"Prints the commands of a farm render of SCENE in chunks of N frames, one shell\n"
		"command a line, for GNU parallel, xargs -P or any scheduler: the cache step\n"
		"first (with --cache), then one 'tidepool render --range A-B' per chunk, then\n"
		"the joins of MP4 segments and --hash manifests. Each chunk writes files of its\n"
		"own: PNG frames keep their numbers, OUT.mp4 becomes OUT.partA-B.mp4 (joined\n"
		"into OUT.mp4), --hash/--stats FILE become FILE.partA-B.EXT.\n"
		"\n",
	.parts = parts,
	.tail = "\n"
		"Exit status: 0 done, 2 usage error, 3 bad scene or an output that cannot be\n"
		"split into chunks (a flipbook or single PNG), 4 I/O error.\n",
	.handle = own_option,
};

int tasks_parse_args(int argc, char **argv, tasks_opts *o)
{
	o->c.crf = -1;
	int rc = cli_opts_parse(&cli_tasks_cmd, o, argc, argv, &o->c);
	if (rc)
		return rc;
	int first = o->c.first;
	if (first >= argc)
		return tp_cli_usage("tasks", "no scene file given");
	if (first + 1 < argc)
		return tp_cli_usage("tasks", "one scene at a time (got '%s' too)", argv[first + 1]);
	if (!o->chunk)
		return tp_cli_usage("tasks", "give --chunk N (frames per chunk)");
	if (o->every && !o->cache)
		return tp_cli_usage("tasks", "--every goes with --cache DIR");
	if (o->step == STEP_CACHE && !o->cache)
		return tp_cli_usage("tasks", "--step cache needs --cache DIR");
	o->scene = argv[first];
	if (!o->bin)
		o->bin = "tidepool";
	if (!o->every)
		o->every = o->chunk;
	o->ov = o->c.ov;
	o->ov.output = NULL; /* -o names the chunks' outputs, not the scene's */
	o->hash = o->c.hash;
	o->stats = o->c.stats;
	o->outs = o->c.outs.spec;
	o->nouts = o->c.outs.n;
	o->sim = o->c.scene_args;
	o->nsim = o->c.nscene_args;
	o->enc = o->c.enc_args;
	o->nenc = o->c.nenc_args;
	return 0;
}
