/*
 * tidepool tasks: the commands of a farm render, for an existing scheduler.
 *
 * A render of F frames in chunks of N is (1) optionally `tidepool cache` once, (2) one
 * `tidepool render --range A-B` per chunk, (3) `tidepool join` for MP4 outputs and the
 * --hash manifest. Every chunk writes files of its own: PNG frames carry their global
 * numbers, an MP4 output OUT.mp4 becomes segments OUT.partA-B.mp4, a --hash or --stats
 * file gets the same ".partA-B" before its extension. So no two tasks write one file,
 * and a chunk is done when its files are there (each is written atomically), whole and
 * made by these settings (chunkcheck.h: the record and checksum each one carries).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/chunkcheck.h"
#include "cli/outputs.h"
#include "cli/sceneopts.h"
#include "cli/shline.h"
#include "cli/tasks.h"
#include "tidepool.h"
#include "util/fsutil.h"

typedef struct output {
	int mode; /* -1: the scene's */
	char *path;
	int kind;    /* 'p' PNG or OpenEXR pattern, 'v' video, 'n' null */
	/* whose fingerprint its files record: the encoder that claims the path, as render
	 * chooses it (png or exr for a pattern) */
	const tp_encoder *enc;
	char fp[65]; /* the fingerprint its files record (outputs_fingerprint) */
} output;

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



/* ---- the plan ---- */

typedef struct plan {
	const tasks_opts *o;
	tp_scene *sc;
	output outs[OUTPUTS_MAX];
	int nouts;
	int frames, nchunks, digits;
	int use_cache; /* --cache and at least one checkpoint to make */
	char hash_fp[65]; /* the --hash manifest's fingerprint */
	int nredo;        /* --missing: files found but not done (other settings, damaged) */
	tp_err why;       /* the first one's reason */
} plan;

static int chunk_range(const plan *p, int c, int *a, int *b)
{
	*a = c * p->o->chunk;
	*b = *a + p->o->chunk - 1 < p->frames - 1 ? *a + p->o->chunk - 1 : p->frames - 1;
	return 0;
}

/* Counts a file that is there but not done, keeping the first reason. */
static int note(plan *p, int done, const tp_err *why)
{
	if (!done && strstr(why->msg, ": missing") == NULL && p->nredo++ == 0)
		p->why = *why;
	return done;
}

/* 1 when every file of chunk c is done: whole, made by these settings, holding its
 * frames (chunkcheck.h). */
static int chunk_done(plan *p, int c)
{
	int a, b, done = 1;
	tp_err why = {""};
	chunk_range(p, c, &a, &b);
	for (int i = 0; i < p->nouts && done; i++) {
		const output *o = &p->outs[i];
		if (o->kind == 'p') {
			for (int k = a; k <= b && done; k++) {
				char path[4352];
				snprintf(path, sizeof path, o->path, k);
				done = note(p,
					    !strcmp(o->enc->name, "exr")
						    ? chunk_exr_done(path, o->fp, k, p->frames, &why)
						    : chunk_png_done(path, o->fp, k, p->frames, &why),
					    &why);
			}
		} else if (o->kind == 'v') {
			char *s = part_name(o->path, a, b, p->digits);
			done = s && note(p, chunk_mp4_done(s, o->fp, a, b, p->frames, &why), &why);
			free(s);
		}
	}
	if (done && p->o->hash && !tp_is_special(p->o->hash)) {
		char *s = part_name(p->o->hash, a, b, p->digits);
		done = s && note(p, chunk_manifest_done(s, p->hash_fp, a, b, p->frames, &why), &why);
		free(s);
	}
	if (done && p->o->stats && !tp_is_special(p->o->stats)) {
		char *s = part_name(p->o->stats, a, b, p->digits);
		done = s && tp_path_exists(s);
		free(s);
	}
	return done;
}

/* 1 when every checkpoint `tidepool cache` would write is there and fits. */
static int cache_done(const plan *p)
{
	for (int k = p->o->every; k <= p->frames - 1; k += p->o->every)
		if (tp_scene_check_checkpoint(p->sc, p->o->cache, k, NULL) < 0)
			return 0;
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
			snprintf(spec, n, "%s%s%s", out->mode >= 0 ? tp_mode_name((tp_mode)out->mode) : "",
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
static int join_cmds(plan *p, tp_line *ls)
{
	int n = 0;
	for (int i = 0; i <= p->nouts; i++) {
		const char *path = i < p->nouts ? p->outs[i].path : p->o->hash;
		if (i < p->nouts ? p->outs[i].kind != 'v' : !path || tp_is_special(path))
			continue;
		tp_err why = {""};
		if (p->o->missing &&
		    note(p,
			 i < p->nouts ? chunk_mp4_done(path, p->outs[i].fp, 0, p->frames - 1,
						       p->frames, &why)
				      : chunk_manifest_done(path, p->hash_fp, 0, p->frames - 1,
							    p->frames, &why),
			 &why))
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

/* The fingerprints render records in each output's files, from the same settings:
 * the render mode (a bare -o keeps the mode of the scene's outputs, else its
 * render.mode) and the encoder options passed on (as the parser read them). */
static void fingerprints(plan *p)
{
	const tasks_opts *o = p->o;
	tp_scene *sc = p->sc;
	tp_scene_outputs so = TP_SCENE_OUTPUTS_INIT;
	tp_scene_get_outputs(sc, &so);
	for (int i = 0; i < p->nouts; i++) {
		output *out = &p->outs[i];
		int mode = out->mode >= 0 ? out->mode
			   : so.n ? (int)so.o[0].mode
				  : (int)so.mode;
		outputs_fingerprint(sc, mode, out->enc, o->c.crf, o->c.preset, o->c.bitrate, out->fp);
		if (i == 0)
			outputs_fingerprint(sc, mode, &tp_encoder_hash, -1, NULL, 0, p->hash_fp);
	}
}

/* Outputs as render would choose them, checked for chunking. */
static int plan_outputs(plan *p, tp_err *err)
{
	const tasks_opts *o = p->o;
	tp_scene_outputs so = TP_SCENE_OUTPUTS_INIT;
	tp_scene_get_outputs(p->sc, &so);
	const char *paths[OUTPUTS_MAX];
	int modes[OUTPUTS_MAX], n = 0;
	if (o->nouts) {
		for (int i = 0; i < o->nouts; i++, n++)
			outputs_split(o->outs[i], &modes[n], &paths[n]);
	} else if (so.n) {
		for (int i = 0; i < so.n && n < OUTPUTS_MAX; i++, n++) {
			paths[n] = so.o[i].path;
			modes[n] = (int)so.o[i].mode;
		}
	} else if (so.output) {
		paths[n] = so.output;
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
		else if (tp_is_mp4_path(paths[i]))
			out->kind = 'v';
		else if (tp_pattern_kind(paths[i]) == 1)
			out->kind = 'p';
		else
			return tp_errf(err, TP_EINPUT,
				       "%s: cannot be split into chunks (use a PNG pattern such as "
				       "out/%%04d.png, "
				       "an .mp4, or null)",
				       paths[i]);
		out->enc = enc_find_for_path(paths[i]);
		if (!out->enc) /* render refuses it with its message (render_would_refuse) */
			out->enc = &tp_encoder_pngseq;
	}
	fingerprints(p);
	return 0;
}

/* What every chunk's `render` would refuse for these options (an odd MP4 size, a bad
 * --crf, a mode the solver cannot render...), refused here first with render's own
 * message: the same outputs_plan() and encoder checks, on the settings only. */
static int render_would_refuse(const plan *p, tp_err *err)
{
	const tasks_opts *o = p->o;
	enc_config base = {.overwrite = 1,
			   .crf = o->c.crf,
			   .preset = o->c.preset,
			   .bitrate = o->c.bitrate,
			   .range = 1,
			   .first = 0,
			   .frames = o->chunk < p->frames ? o->chunk : p->frames,
			   .settings_only = 1};
	out_plan check;
	return outputs_plan(&check, p->sc, &o->c.outs, &base, err);
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
	int prc = tasks_parse_args(argc, argv, &o);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;
	tp_err err = {""};
	tp_scene *sc = NULL;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	plan p = {.o = &o};
	int *todo = NULL, rc;
	tp_line joins[OUTPUTS_MAX + 1];
	memset(joins, 0, sizeof joins);
	if ((rc = cli_load(o.scene, &o.ov, tp_cli_threads(o.c.threads), &sc, &err)) < 0)
		goto done;
	tp_scene_get_info(sc, &in);
	p.sc = sc;
	p.frames = in.frames;
	p.nchunks = (in.frames + o.chunk - 1) / o.chunk;
	p.digits = 4;
	p.use_cache = o.cache && in.frames - 1 >= o.every; /* else no checkpoint would be made */
	for (int f = in.frames - 1; f >= 10000; f /= 10)
		p.digits++;
	if ((rc = plan_outputs(&p, &err)) < 0 || (rc = render_would_refuse(&p, &err)) < 0)
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
	if (o.missing && p.nredo)
		fprintf(stderr, "tidepool: tasks: %d file%s to make again, made by other settings or "
				"damaged (%s)\n",
			p.nredo, p.nredo == 1 ? "" : "s", p.why.msg);
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
	tp_scene_free(sc);
	if (rc < 0)
		return tp_cli_fail(rc, &err);
	return TP_EXIT_OK;
}
