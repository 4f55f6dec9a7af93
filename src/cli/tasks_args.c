/* tasks_args.c - the options of `tidepool tasks` (tasks.h). */
#include <getopt.h>
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

int tasks_parse_args(int argc, char **argv, tasks_opts *o)
{
	enum {
		OPT_CHUNK = 256,
		OPT_CACHE,
		OPT_EVERY,
		OPT_STEP,
		OPT_MISSING,
		OPT_SLURM,
		OPT_BIN,
		OPT_SET,
		OPT_FRAMES,
		OPT_SIZE,
		OPT_SEED,
		OPT_SCALE,
		OPT_THREADS,
		OPT_CRF,
		OPT_PRESET,
		OPT_BITRATE,
		OPT_HASH,
		OPT_STATS,
		OPT_WHOLE
	};
	static const struct option longopts[] = {
		{"chunk", required_argument, NULL, OPT_CHUNK},
		{"cache", required_argument, NULL, OPT_CACHE},
		{"every", required_argument, NULL, OPT_EVERY},
		{"step", required_argument, NULL, OPT_STEP},
		{"missing", no_argument, NULL, OPT_MISSING},
		{"slurm", no_argument, NULL, OPT_SLURM},
		{"bin", required_argument, NULL, OPT_BIN},
		{"output", required_argument, NULL, 'o'},
		{"set", required_argument, NULL, OPT_SET},
		{"frames", required_argument, NULL, OPT_FRAMES},
		{"size", required_argument, NULL, OPT_SIZE},
		{"scale", required_argument, NULL, OPT_SCALE},
		{"seed", required_argument, NULL, OPT_SEED},
		{"threads", required_argument, NULL, OPT_THREADS},
		{"crf", required_argument, NULL, OPT_CRF},
		{"preset", required_argument, NULL, OPT_PRESET},
		{"bitrate", required_argument, NULL, OPT_BITRATE},
		{"hash", required_argument, NULL, OPT_HASH},
		{"stats", required_argument, NULL, OPT_STATS},
		/* render options that cannot be split: refused with the reason */
		{"flipbook", required_argument, NULL, OPT_WHOLE},
		{"frame-size", required_argument, NULL, OPT_WHOLE},
		{"pot", no_argument, NULL, OPT_WHOLE},
		{"range", required_argument, NULL, OPT_WHOLE},
		{"overwrite", no_argument, NULL, 'y'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long v;
	int c, lo;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:yqh", longopts, &lo)) != -1) {
		const char *name = c >= 256 ? longopts[lo].name : NULL;
		switch (c) {
		case OPT_CHUNK:
			if (tp_parse_int(optarg, 1, SCENE_MAX_FRAMES, &v))
				return tp_cli_usage(
					"tasks",
					"--chunk: expected a whole number 1..%d (got '%s')",
					SCENE_MAX_FRAMES, optarg);
			o->chunk = (int)v;
			break;
		case OPT_EVERY:
			if (tp_parse_int(optarg, 1, SCENE_MAX_FRAMES, &v))
				return tp_cli_usage(
					"tasks",
					"--every: expected a whole number 1..%d (got '%s')",
					SCENE_MAX_FRAMES, optarg);
			o->every = (int)v;
			break;
		case OPT_CACHE: o->cache = optarg; break;
		case OPT_STEP:
			if (!strcmp(optarg, "cache"))
				o->step = STEP_CACHE;
			else if (!strcmp(optarg, "render"))
				o->step = STEP_RENDER;
			else if (!strcmp(optarg, "join"))
				o->step = STEP_JOIN;
			else
				return tp_cli_usage(
					"tasks",
					"--step: expected cache, render or join (got '%s')",
					optarg);
			break;
		case OPT_MISSING: o->missing = 1; break;
		case OPT_SLURM: o->slurm = 1; break;
		case OPT_BIN: o->bin = optarg; break;
		case 'o':
			if (o->nouts == OUTPUTS_MAX)
				return tp_cli_usage("tasks", "at most %d outputs (-o)",
						    OUTPUTS_MAX);
			o->outs[o->nouts++] = optarg;
			break;
		case OPT_HASH: o->hash = optarg; break;
		case OPT_STATS: o->stats = optarg; break;
		case OPT_SET:
		case OPT_FRAMES:
		case OPT_SIZE:
		case OPT_SCALE:
		case OPT_SEED:
		case OPT_THREADS:
			if (o->nsim + 2 > TASKS_MAX_ARGS)
				return tp_cli_usage("tasks", "too many options");
			if (c == OPT_SET && o->nsets < TASKS_MAX_SETS)
				o->sets[o->nsets++] = optarg;
			else if (c == OPT_SET)
				return tp_cli_usage("tasks", "at most %d --set options", TASKS_MAX_SETS);
			if (c == OPT_FRAMES) {
				if (tp_parse_int(optarg, 1, SCENE_MAX_FRAMES, &v))
					return tp_cli_usage("tasks",
							    "--frames: expected a whole number "
							    "1..%d (got '%s')",
							    SCENE_MAX_FRAMES, optarg);
				o->ov.frames = (int)v;
			}
			if (c == OPT_SIZE && tp_parse_size(optarg, &o->ov.width, &o->ov.height))
				return tp_cli_usage(
					"tasks", "--size: expected WxH such as 640x360 (got '%s')",
					optarg);
			if (c == OPT_SCALE && tp_parse_scale(optarg, &o->ov.scale))
				return tp_cli_usage("tasks",
						    "--scale: expected a factor in 0..64 such as 0.5 or a "
						    "percentage such as 25%% (got '%s')",
						    optarg);
			if (c == OPT_SEED) {
				if (tp_parse_u64(optarg, &o->ov.seed))
					return tp_cli_usage(
						"tasks",
						"--seed: expected a whole number >= 0 (got '%s')",
						optarg);
				o->ov.has_seed = 1;
			}
			if (c == OPT_THREADS && tp_parse_int(optarg, 0, 1024, &v))
				return tp_cli_usage(
					"tasks", "--threads: expected 0..1024 (got '%s')", optarg);
			o->sim[o->nsim++] = longopts[lo].name;
			o->sim[o->nsim++] = optarg;
			break;
		case OPT_CRF:
		case OPT_PRESET:
		case OPT_BITRATE:
			if (o->nenc + 2 > TASKS_MAX_ARGS)
				return tp_cli_usage("tasks", "too many options");
			o->enc[o->nenc++] = name;
			o->enc[o->nenc++] = optarg;
			break;
		case OPT_WHOLE:
			return tp_cli_usage("tasks", "--%s: %s", name,
					    strcmp(name, "range") ? "a flipbook atlas holds every frame; it cannot be rendered in chunks"
								  : "tasks chooses the ranges itself (--chunk N)");
		case 'y':
		case 'q': break; /* the commands always have both */
		case 'h': fputs(usage, stdout); return 1;
		case ':': return tp_cli_usage("tasks", "%s needs a value", argv[optind - 1]);
		default: return tp_cli_usage("tasks", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return tp_cli_usage("tasks", "no scene file given");
	if (optind + 1 < argc)
		return tp_cli_usage("tasks", "one scene at a time (got '%s' too)",
				    argv[optind + 1]);
	if (!o->chunk)
		return tp_cli_usage("tasks", "give --chunk N (frames per chunk)");
	if (o->every && !o->cache)
		return tp_cli_usage("tasks", "--every goes with --cache DIR");
	if (o->step == STEP_CACHE && !o->cache)
		return tp_cli_usage("tasks", "--step cache needs --cache DIR");
	o->scene = argv[optind];
	if (!o->bin)
		o->bin = "tidepool";
	if (!o->every)
		o->every = o->chunk;
	o->ov.sets = o->sets;
	o->ov.nsets = o->nsets;
	return 0;
}

