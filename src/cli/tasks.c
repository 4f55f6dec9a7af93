/*
 * tidepool tasks: the commands of a farm render, for an existing scheduler.
 *
 * A render of F frames in chunks of N is (1) optionally `tidepool cache` once, (2) one
 * `tidepool render --range A-B` per chunk, (3) `tidepool join` for MP4 outputs and the
 * --hash manifest. Every chunk writes files of its own: PNG frames carry their global
 * numbers, an MP4 output OUT.mp4 becomes segments OUT.partA-B.mp4, a --hash or --stats
 * file gets the same ".partA-B" before its extension. So no two tasks write one file,
 * and a chunk whose files are all there is done (each file is written atomically).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/shline.h"
#include "scene/scene.h"
#include "sim/ckpt.h"
#include "util/fsutil.h"

#define MAX_ARGS 256
#define MAX_SETS 64

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

enum step { STEP_ALL, STEP_CACHE, STEP_RENDER, STEP_JOIN };

typedef struct tasks_opts {
	scene_overrides ov;
	const char *scene, *cache, *bin, *hash, *stats;
	int chunk, every, missing, slurm;
	enum step step;
	const char *outs[OUTPUTS_MAX];
	int nouts;
	const char *sets[MAX_SETS];
	int nsets;
	/* passed on as given: sim = cache and render, enc = render only */
	const char *sim[MAX_ARGS], *enc[MAX_ARGS];
	int nsim, nenc;
} tasks_opts;

typedef struct output {
	int mode; /* -1: the scene's */
	char *path;
	int kind; /* 'p' PNG pattern, 'v' video, 'n' null */
} output;

static const char *const mode_names[] = {"color",     "height",       "normal", "caustics",
					 "particles", "displacement", "foam"};

static int parse_args(int argc, char **argv, tasks_opts *o)
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
			if (o->nsim + 2 > MAX_ARGS)
				return tp_cli_usage("tasks", "too many options");
			if (c == OPT_SET && o->nsets < MAX_SETS)
				o->sets[o->nsets++] = optarg;
			else if (c == OPT_SET)
				return tp_cli_usage("tasks", "at most %d --set options", MAX_SETS);
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
			if (o->nenc + 2 > MAX_ARGS)
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

/* ---- shell words ---- */

static void words(tp_line *l, const char *const *w, int n)
{
	for (int i = 0; i < n; i++) {
		char opt[64];
		if (i % 2 == 0) {
			snprintf(opt, sizeof opt, "--%s", w[i]);
			tp_line_word(l, opt);
		} else {
			tp_line_word(l, w[i]);
		}
	}
}

/* ---- names ---- */

/* "dir/name.ext" -> "dir/name.partA-B.ext" (zero-padded to `digits`). */
static char *part_name(const char *path, int a, int b, int digits)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(path, '.');
	if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
		dot = path + strlen(path);
	size_t n = strlen(path) + 64;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%.*s.part%0*d-%0*d%s", (int)(dot - path), path, digits, a, digits,
			 b, dot);
	return s;
}

static int is_video(const char *p)
{
	size_t n = strlen(p);
	return (n > 4 && (!strcasecmp(p + n - 4, ".mp4") || !strcasecmp(p + n - 4, ".m4v") ||
			  !strcasecmp(p + n - 4, ".mov")));
}

static int frame_exists(const char *pattern, int k)
{
	char path[4352];
	snprintf(path, sizeof path, pattern, k);
	return tp_path_exists(path);
}

/* ---- the plan ---- */

typedef struct plan {
	const tasks_opts *o;
	const scene *sc;
	output outs[OUTPUTS_MAX];
	int nouts;
	int frames, nchunks, digits;
	int use_cache; /* --cache and at least one checkpoint to make */
} plan;

static int chunk_range(const plan *p, int c, int *a, int *b)
{
	*a = c * p->o->chunk;
	*b = *a + p->o->chunk - 1 < p->frames - 1 ? *a + p->o->chunk - 1 : p->frames - 1;
	return 0;
}

/* 1 when every file of chunk c is on disk. */
static int chunk_done(const plan *p, int c)
{
	int a, b, done = 1;
	chunk_range(p, c, &a, &b);
	for (int i = 0; i < p->nouts && done; i++) {
		const output *o = &p->outs[i];
		if (o->kind == 'p') {
			for (int k = a; k <= b && done; k++)
				done = frame_exists(o->path, k);
		} else if (o->kind == 'v') {
			char *s = part_name(o->path, a, b, p->digits);
			done = s && tp_path_exists(s);
			free(s);
		}
	}
	const char *extra[2] = {p->o->hash, p->o->stats};
	for (int i = 0; i < 2 && done; i++) {
		if (!extra[i] || tp_is_special(extra[i]))
			continue;
		char *s = part_name(extra[i], a, b, p->digits);
		done = s && tp_path_exists(s);
		free(s);
	}
	return done;
}

/* 1 when every checkpoint `tidepool cache` would write is there and fits. */
static int cache_done(const plan *p)
{
	ckpt_key key = {.sc = p->sc};
	scene_fingerprint(p->sc, &p->o->ov, key.fingerprint);
	for (int k = p->o->every; k <= p->frames - 1; k += p->o->every) {
		char path[4352];
		tp_err err;
		if (ckpt_path(p->o->cache, k, path, sizeof path) < 0 ||
		    ckpt_check(path, &key, k, NULL, &err) < 0)
			return 0;
	}
	return 1;
}

static void cache_cmd(const plan *p, tp_line *l)
{
	const tasks_opts *o = p->o;
	char every[32];
	snprintf(every, sizeof every, "%d", o->every);
	tp_line_word(l, o->bin);
	tp_line_word(l, "cache");
	tp_line_word(l, o->scene);
	tp_line_word(l, "-O");
	tp_line_word(l, o->cache);
	tp_line_word(l, "--every");
	tp_line_word(l, every);
	words(l, o->sim, o->nsim);
	tp_line_word(l, "-y");
	tp_line_word(l, "-q");
}

static void chunk_cmd(const plan *p, int c, tp_line *l)
{
	const tasks_opts *o = p->o;
	int a, b;
	char range[64];
	chunk_range(p, c, &a, &b);
	snprintf(range, sizeof range, "%d-%d", a, b);
	tp_line_word(l, o->bin);
	tp_line_word(l, "render");
	tp_line_word(l, o->scene);
	tp_line_word(l, "--range");
	tp_line_word(l, range);
	if (p->use_cache) {
		tp_line_word(l, "--cache");
		tp_line_word(l, o->cache);
	}
	words(l, o->sim, o->nsim);
	words(l, o->enc, o->nenc);
	for (int i = 0; i < p->nouts; i++) {
		const output *out = &p->outs[i];
		char *path = out->kind == 'v' ? part_name(out->path, a, b, p->digits) : NULL;
		const char *use = path ? path : out->path;
		size_t n = strlen(use) + 32;
		char *spec = malloc(n);
		if (!spec) {
			l->oom = 1;
		} else {
			snprintf(spec, n, "%s%s%s", out->mode >= 0 ? mode_names[out->mode] : "",
				 out->mode >= 0 ? "=" : "", use);
			tp_line_word(l, "-o");
			tp_line_word(l, spec);
		}
		free(spec);
		free(path);
	}
	const char *extra[2] = {o->hash, o->stats}, *flag[2] = {"--hash", "--stats"};
	for (int i = 0; i < 2; i++) {
		if (!extra[i])
			continue;
		char *s = tp_is_special(extra[i]) ? NULL : part_name(extra[i], a, b, p->digits);
		tp_line_word(l, flag[i]);
		tp_line_word(l, s ? s : extra[i]);
		free(s);
	}
	tp_line_word(l, "-y");
	tp_line_word(l, "-q");
}

/* Joins: one per MP4 output, one for --hash. Returns how many were written into ls. */
static int join_cmds(const plan *p, tp_line *ls)
{
	int n = 0;
	for (int i = 0; i <= p->nouts; i++) {
		const char *path = i < p->nouts ? p->outs[i].path : p->o->hash;
		if (i < p->nouts ? p->outs[i].kind != 'v' : !path || tp_is_special(path))
			continue;
		if (p->o->missing && tp_path_exists(path))
			continue;
		tp_line *l = &ls[n++];
		tp_line_word(l, p->o->bin);
		tp_line_word(l, "join");
		for (int c = 0; c < p->nchunks; c++) {
			int a, b;
			chunk_range(p, c, &a, &b);
			char *s = part_name(path, a, b, p->digits);
			if (!s)
				l->oom = 1;
			else
				tp_line_word(l, s);
			free(s);
		}
		tp_line_word(l, "-o");
		tp_line_word(l, path);
		tp_line_word(l, "-y");
		tp_line_word(l, "-q");
	}
	return n;
}

/* Outputs as render would choose them, checked for chunking. */
static int plan_outputs(plan *p, tp_err *err)
{
	const tasks_opts *o = p->o;
	const scene *sc = p->sc;
	const char *paths[OUTPUTS_MAX];
	int modes[OUTPUTS_MAX], n = 0;
	if (o->nouts) {
		for (int i = 0; i < o->nouts; i++, n++)
			outputs_split(o->outs[i], &modes[n], &paths[n]);
	} else if (sc->noutputs) {
		for (int i = 0; i < sc->noutputs && n < OUTPUTS_MAX; i++, n++) {
			paths[n] = sc->outputs[i].path;
			modes[n] = (int)sc->outputs[i].mode;
		}
	} else if (sc->output) {
		paths[n] = sc->output;
		modes[n++] = -1;
	} else {
		return tp_errf(err, TP_EUSAGE,
			       "%s: no output: give -o OUT or \"output\" in the scene", o->scene);
	}
	for (int i = 0; i < n; i++) {
		output *out = &p->outs[p->nouts++];
		out->mode = modes[i];
		if (!(out->path = strdup(paths[i])))
			return tp_errf(err, TP_EIO, "out of memory");
		if (!strcmp(paths[i], "null"))
			out->kind = 'n';
		else if (is_video(paths[i]))
			out->kind = 'v';
		else if (tp_pattern_kind(paths[i]) == 1)
			out->kind = 'p';
		else
			return tp_errf(err, TP_EINPUT,
				       "%s: cannot be split into chunks (use a PNG pattern such as "
				       "out/%%04d.png, "
				       "an .mp4, or null)",
				       paths[i]);
	}
	return 0;
}

/* The sbatch driver. Chunk commands go into the array job's script, keyed by index. */
static void slurm_script(const plan *p, const int *todo, int ntodo, const tp_line *cache,
			 const tp_line *joins, int njoins)
{
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, ".");
	tp_line q = {0};
	tp_line_word(&q, cwd);
	printf("#!/bin/sh\n"
	       "# tidepool farm render of %s: %d frames, %d chunk%s of %d, as Slurm jobs.\n"
	       "# Written by 'tidepool tasks --slurm'. Run: sh THIS_FILE [sbatch options]\n"
	       "# (for example --partition=NAME; --wait makes each sbatch wait for its job).\n"
	       "set -eu\n"
	       "cd %s\n"
	       "dep=\n",
	       p->o->scene, p->frames, p->nchunks, p->nchunks == 1 ? "" : "s", p->o->chunk,
	       q.s ? q.s : ".");
	free(q.s);
	if (cache) {
		tp_line w = {0};
		tp_line_word(&w, cache->s);
		printf("job=$(sbatch --parsable --job-name=tp-cache \"$@\" --wrap=%s)\n"
		       "echo \"cache: job $job\"\n"
		       "dep=\"--dependency=afterok:${job%%%%;*} --kill-on-invalid-dep=yes\"\n",
		       w.s);
		free(w.s);
	}
	if (ntodo) {
		printf("job=$(sbatch --parsable --job-name=tp-render --array=");
		for (int i = 0; i < ntodo;) { /* runs of indices as A-B */
			int j = i;
			while (j + 1 < ntodo && todo[j + 1] == todo[j] + 1)
				j++;
			printf(j > i ? "%s%d-%d" : "%s%d", i ? "," : "", todo[i], todo[j]);
			i = j + 1;
		}
		printf(" $dep \"$@\" <<'TIDEPOOL_CHUNKS'\n#!/bin/sh\ncase \"$SLURM_ARRAY_TASK_ID\" "
		       "in\n");
		for (int i = 0; i < ntodo; i++) {
			tp_line l = {0};
			chunk_cmd(p, todo[i], &l);
			printf("%d) exec %s ;;\n", todo[i], l.s ? l.s : "false");
			free(l.s);
		}
		printf("*) echo \"tidepool: no chunk $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\n"
		       "esac\nTIDEPOOL_CHUNKS\n)\n"
		       "echo \"render: array job $job (%d chunk%s)\"\n"
		       "dep=\"--dependency=afterok:${job%%%%;*} --kill-on-invalid-dep=yes\"\n",
		       ntodo, ntodo == 1 ? "" : "s");
	}
	if (njoins) {
		tp_line all = {0};
		for (int i = 0; i < njoins; i++) {
			if (i)
				tp_line_raw(&all, " && ");
			tp_line_raw(&all, joins[i].s ? joins[i].s : "false");
		}
		tp_line w = {0};
		tp_line_word(&w, all.s ? all.s : "false");
		printf("job=$(sbatch --parsable --job-name=tp-join $dep \"$@\" --wrap=%s)\n"
		       "echo \"join: job $job\"\n",
		       w.s);
		free(all.s);
		free(w.s);
	}
	if (!cache && !ntodo && !njoins)
		printf("echo 'tidepool: nothing to do'\n");
}

int cmd_tasks(int argc, char **argv)
{
	tasks_opts o = {0};
	int prc = parse_args(argc, argv, &o);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;
	tp_err err = {""};
	scene *sc = NULL;
	plan p = {.o = &o};
	int *todo = NULL, rc;
	tp_line joins[OUTPUTS_MAX + 1];
	memset(joins, 0, sizeof joins);
	if ((rc = scene_load(o.scene, &o.ov, &sc, &err)) < 0)
		goto done;
	p.sc = sc;
	p.frames = sc->frames;
	p.nchunks = (sc->frames + o.chunk - 1) / o.chunk;
	p.digits = 4;
	p.use_cache = o.cache && sc->frames - 1 >= o.every; /* else no checkpoint would be made */
	for (int f = sc->frames - 1; f >= 10000; f /= 10)
		p.digits++;
	if ((rc = plan_outputs(&p, &err)) < 0)
		goto done;
	todo = calloc((size_t)p.nchunks, sizeof *todo);
	if (!todo) {
		rc = tp_errf(&err, TP_EIO, "out of memory");
		goto done;
	}
	int ntodo = 0;
	for (int c = 0; c < p.nchunks; c++)
		if (!o.missing || !chunk_done(&p, c))
			todo[ntodo++] = c;
	/* The joins wait for every chunk; with --missing they are due when their output is
	 * absent (or a chunk is being redone). */
	int njoins = join_cmds(&p, joins);
	if (o.missing && ntodo) {
		for (int i = 0; i < njoins; i++)
			free(joins[i].s);
		memset(joins, 0, sizeof joins);
		tasks_opts all = o;
		all.missing = 0;
		plan pa = p;
		pa.o = &all;
		njoins = join_cmds(&pa, joins);
	}
	int want_cache = p.use_cache && (!o.missing || !cache_done(&p));
	tp_line cache = {0};
	if (want_cache)
		cache_cmd(&p, &cache);
	int show_cache = want_cache && (o.step == STEP_ALL || o.step == STEP_CACHE);
	int show_render = o.step == STEP_ALL || o.step == STEP_RENDER;
	int show_join = o.step == STEP_ALL || o.step == STEP_JOIN;
	if (o.slurm) {
		slurm_script(&p, todo, show_render ? ntodo : 0, show_cache ? &cache : NULL, joins,
			     show_join ? njoins : 0);
	} else {
		if (show_cache)
			printf("%s\n", cache.s);
		for (int i = 0; show_render && i < ntodo; i++) {
			tp_line l = {0};
			chunk_cmd(&p, todo[i], &l);
			if (l.oom)
				rc = tp_errf(&err, TP_EIO, "out of memory");
			else
				printf("%s\n", l.s);
			free(l.s);
		}
		for (int i = 0; show_join && i < njoins; i++)
			printf("%s\n", joins[i].s);
	}
	free(cache.s);
done:
	for (int i = 0; i < OUTPUTS_MAX + 1; i++)
		free(joins[i].s);
	for (int i = 0; i < p.nouts; i++)
		free(p.outs[i].path);
	free(todo);
	scene_destroy(sc);
	if (rc < 0)
		return tp_cli_fail(rc, &err);
	return TP_EXIT_OK;
}
