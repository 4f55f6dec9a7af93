/* tasks_args.c - the options of `tidepool tasks` (tasks.h), through the parser render,
 * cache and batch share (sceneopts.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tasks.h"

static const char usage[] =
	"usage: tidepool tasks SCENE --chunk N [options] [render options]\n"
	"\n"
	"Prints the commands of a farm render of SCENE in chunks of N frames, one shell\n"
	"command a line, for GNU parallel, xargs -P or any scheduler: the cache step\n"
	"first (with --cache), then one 'tidepool render --range A-B' per chunk, then\n"
	"the joins of MP4 segments and --hash manifests. Each chunk writes files of its\n"
	"own: PNG frames keep their numbers, OUT.mp4 becomes OUT.partA-B.mp4 (joined\n"
	"into OUT.mp4), --hash/--stats FILE become FILE.partA-B.EXT.\n"
	"\n"
	"  --chunk N            frames per chunk\n"
	"  --cache DIR          simulate once into DIR (tidepool cache) and start every\n"
	"                       chunk from its checkpoint; DIR must be shared by the hosts\n"
	"  --every N            frames between checkpoints (default: the chunk size)\n"
	"  --step STEP          print only one step: cache, render or join\n"
	"  --missing            only what is not done yet: the chunks whose files are\n"
	"                       absent or incomplete (resuming a failed farm run), the\n"
	"                       cache if a checkpoint is missing, joins not yet made\n"
	"  --slurm              print an sbatch driver script instead: the cache as one\n"
	"                       job, the chunks as a job array depending on it (the array\n"
	"                       index picks the chunk), the joins as a last job; run it as\n"
	"                       'sh SCRIPT [sbatch options]' ('--wait' waits for each job)\n"
	"  --bin PATH           the tidepool the commands run (default: tidepool)\n"
	"\n"
	"render options, passed on to every chunk: -o OUT (repeatable, MODE=OUT),\n"
	"--set KEY=VALUE, --frames N, --size WxH, --scale F, --seed N, --threads N, --crf N,\n"
	"--preset NAME, --bitrate RATE, --hash FILE, --stats FILE (see 'tidepool render\n"
	"--help'). The commands always replace their own files (-y) and run quietly (-q).\n"
	"\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 done, 2 usage error, 3 bad scene or an output that cannot be\n"
	"split into chunks (a flipbook or single PNG), 4 I/O error.\n";

enum { OPT_CHUNK = 1024, OPT_CACHE, OPT_EVERY, OPT_STEP, OPT_MISSING, OPT_SLURM, OPT_BIN,
       OPT_WHOLE };

/* tasks's own options, and the render options it cannot split, refused with the reason. */
static int own_option(void *ctx, int c, const char *name, const char *arg)
{
	tasks_opts *o = ctx;
	long v;
	switch (c) {
	case OPT_CHUNK:
	case OPT_EVERY:
		if (tp_parse_int(arg, 1, TP_MAX_FRAMES, &v))
			return tp_cli_usage("tasks", "--%s: expected a whole number 1..%d (got '%s')",
					    name, TP_MAX_FRAMES, arg);
		*(c == OPT_CHUNK ? &o->chunk : &o->every) = (int)v;
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

int tasks_parse_args(int argc, char **argv, tasks_opts *o)
{
	static const struct option own[] = {
		{"chunk", required_argument, NULL, OPT_CHUNK},
		{"cache", required_argument, NULL, OPT_CACHE},
		{"every", required_argument, NULL, OPT_EVERY},
		{"step", required_argument, NULL, OPT_STEP},
		{"missing", no_argument, NULL, OPT_MISSING},
		{"slurm", no_argument, NULL, OPT_SLURM},
		{"bin", required_argument, NULL, OPT_BIN},
		{"flipbook", required_argument, NULL, OPT_WHOLE},
		{"frame-size", required_argument, NULL, OPT_WHOLE},
		{"pot", no_argument, NULL, OPT_WHOLE},
		{"range", required_argument, NULL, OPT_WHOLE},
		{NULL, 0, NULL, 0},
	};
	const cli_extra x = {own, NULL, own_option, o};
	/* -y and -q are taken and dropped: the commands printed always have both. */
	o->c.crf = -1;
	int rc = cli_opts_parse_with("tasks", usage,
				     CLI_OUTPUT_OPTS | CLI_ENCODE_OPTS | CLI_OVERWRITE_OPT, &x, argc,
				     argv, &o->c);
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
