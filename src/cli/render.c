/* tidepool render: scene -> stepper -> renderer -> encoder queue -> outputs. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/sceneopts.h"
#include "encode/encoder.h"
#include "encode/queue.h"
#include "tidepool.h"
#include "util/fsutil.h"
#include "util/progress.h"

#define MAX_SINKS   (OUTPUTS_MAX + 2)
#define QUEUE_DEPTH 4
#define QUEUE_BYTES ((size_t)64 << 20)
#define QUEUE_MAX   24

/* Frames the producer may run ahead of the encoders: QUEUE_DEPTH, or with an MP4 output
 * up to QUEUE_MAX within QUEUE_BYTES. x264 fills its lookahead (about 50 frames at the
 * default preset) on one core before it uses every core; a deeper queue lets the
 * simulation and renderer work ahead in that time instead of waiting: about 1% of the
 * wall time of a 300-frame 1080p MP4 render. */
static int queue_depth(const out_plan *plan, const tp_pixfmt *fmts, int nsinks, int w, int h)
{
	int lookahead = 0;
	for (int i = 0; i < plan->n; i++)
		lookahead |= (plan->o[i].enc->caps & ENC_CAP_LOOKAHEAD) != 0;
	size_t bytes = 1;
	for (int s = 0; s < nsinks; s++)
		bytes += fmts[s] == TP_YUV420 ? (size_t)w * (size_t)h * 3 / 2
					      : (size_t)w * (size_t)h * (size_t)tp_pixfmt_bytes(fmts[s]);
	const size_t fit = QUEUE_BYTES / bytes;
	return !lookahead || fit <= QUEUE_DEPTH ? QUEUE_DEPTH : fit >= QUEUE_MAX ? QUEUE_MAX : (int)fit;
}

/* render takes every shared group, in their own words. */
static const cli_part parts[] = {
	{.rows = cli_output_rows},   {.rows = cli_scene_rows},     {.rows = cli_flipbook_rows},
	{.rows = cli_range_rows},    {.rows = cli_encoder_rows},    {.rows = cli_record_rows},
	{.rows = cli_overwrite_rows}, {.rows = cli_quiet_rows},    {.rows = cli_help_rows},
	{0},
};

const cli_scene_cmd cli_render_cmd = {
	.cmd = "render",
	.head = "usage: tidepool render SCENE [options]\n"
		"\n"
		"Simulates SCENE and writes its frames.\n"
		"\n",
	.parts = parts,
	.tail = "\n"
		"Exit status: 0 done, 2 usage error, 3 bad scene or input image, 4 I/O or runtime\n"
		"error, 130 interrupted (Ctrl-C: frames so far are kept; an MP4 is finalised),\n"
		"141 a pipe written to (--stats) was closed by its reader: handled like Ctrl-C.\n"
		"\n"
		"MP4s are H.264 (libx264). Without libx264, or with TIDEPOOL_MP4_CODEC=mpeg4, they\n"
		"are MPEG-4 Part 2, which web browsers do not play. More: man tidepool.\n",
};

typedef cli_opts render_opts;

static int parse_args(int argc, char **argv, render_opts *o, const char **scene_file)
{
	int rc = cli_opts_parse(&cli_render_cmd, NULL, argc, argv, o);
	if (rc)
		return rc;
	if (o->first >= argc)
		return tp_cli_usage("render", "no scene file given");
	if (o->first + 1 < argc)
		return tp_cli_usage("render", "one scene at a time (got '%s' too)",
				    argv[o->first + 1]);
	*scene_file = argv[o->first];
	return 0;
}

static void level_progress(void *arg, int done, int total)
{
	(void)total;
	tp_progress_update(arg, done);
}

/* "maps": {"height": {"scale": "auto"}}: a first pass simulates the whole render and
 * finds its largest |h|; every frame's height map then uses one scale that puts that
 * height at the end of the 16-bit range (v = round(h * 32767 / max) + 32768). The
 * simulation is deterministic, so the second pass sees the same surfaces. */
static int level_heights(tp_scene *sc, const out_plan *plan, int quiet, tp_err *err)
{
	int any = 0;
	for (int i = 0; i < plan->n; i++)
		any |= plan->o[i].mode == TP_MODE_HEIGHT;
	tp_scene_outputs so = TP_SCENE_OUTPUTS_INIT;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_outputs(sc, &so);
	tp_scene_get_info(sc, &in);
	if (!so.height_auto || !any)
		return 0;
	tp_progress prog;
	tp_progress_start(&prog, "levelling", in.frames, quiet);
	double top = 0, levels = 0;
	tp_error e = TP_ERROR_INIT;
	int rc = tp_scene_level_heights(sc, level_progress, &prog, &levels, &top, &e);
	tp_progress_done(&prog, NULL);
	if (rc < 0)
		return rc == TP_ERROR_CANCELLED ? TP_EINTR : cli_api_err(&e, err);
	if (!quiet)
		fprintf(stderr,
			"tidepool: height maps levelled over %d frames: largest |h| %.6g height "
			"units, "
			"%.6g levels per unit\n",
			in.frames, top, levels);
	return 0;
}

/* One JSON object per line; %.9g keeps floats exact enough and stable across runs. Then
 * the pose of every box, in scene order: its centre in scene units (the render size
 * divided out) and its angle in degrees, so scripts can follow a body at any size.
 * ferror() catches a failed flush inside any of the calls, so a full disk or a closed
 * pipe stops the render at this frame, not after the last one. */
static int write_stats_line(FILE *f, const tp_frame_stats *st, const tp_pose *boxes, int nboxes,
			    long clipped)
{
	fprintf(f, "{\"frame\":%d,\"t\":%.9g", st->frame, st->t);
	for (int i = 0; i < st->n; i++)
		fprintf(f, ",\"%s\":%.9g", st->name[i], st->value[i]);
	if (clipped >= 0) /* height maps: pixels clamped to the 16-bit range */
		fprintf(f, ",\"height_clipped\":%ld", clipped);
	fputs(",\"boxes\":[", f);
	for (int i = 0; i < nboxes; i++)
		fprintf(f, "%s{\"x\":%.9g,\"y\":%.9g,\"angle\":%.9g}", i ? "," : "", boxes[i].x,
			boxes[i].y, boxes[i].angle);
	return fputs("]}\n", f) == EOF || ferror(f) ? -1 : 0;
}

/* The frame's statistics and every box's pose, from the library; *poses grows to fit. */
static int frame_stats(tp_scene *sc, int frame, tp_frame_stats *st, tp_pose **poses, int *cap,
		       int *n, tp_err *err)
{
	tp_error e = TP_ERROR_INIT;
	if (tp_scene_stats(sc, frame, st, &e) < 0 ||
	    (*n = tp_scene_boxes(sc, frame, *poses, *cap, &e)) < 0)
		return cli_api_err(&e, err);
	if (*n > *cap) {
		tp_pose *p = realloc(*poses, (size_t)*n * sizeof *p);
		if (!p)
			return tp_errf(err, TP_EIO, "out of memory");
		for (int i = *cap; i < *n; i++)
			p[i] = (tp_pose)TP_POSE_INIT;
		*poses = p;
		*cap = *n;
		tp_scene_boxes(sc, frame, *poses, *cap, &e);
	}
	return 0;
}

/* Brings the scene to output frame `first`: from the latest checkpoint at or before it
 * in --cache DIR, else from frame 0; the frames before it are only passed through
 * (without their surfaces where the solver allows it: airy's costs several times its
 * step). The frames are the same bits either way. */
/* --cache DIR must hold a checkpoint of this render (any frame: the first chunk has none
 * at or before its start), unless --allow-empty-cache: an empty or foreign DIR is a
 * cache step that did not run, not a reason to simulate from frame 0 unannounced. */
static int cache_holds_this_render(tp_scene *sc, const render_opts *o, int first, tp_err *err)
{
	DIR *d = opendir(o->cache);
	if (!d)
		return tp_errpath(err, TP_EIO, o->cache, "cannot read the cache directory (%s)",
				  strerror(errno));
	int latest = 0, usable = 0;
	for (struct dirent *de; (de = readdir(d));) {
		int k, len = 0;
		if (sscanf(de->d_name, "frame-%8d.tpck%n", &k, &len) == 1 && len == 19 &&
		    !de->d_name[len]) {
			latest = k > latest ? k : latest;
			usable |= k > 0 && k <= first;
		}
	}
	closedir(d);
	if (usable) /* the one loaded is checked as it loads */
		return 0;
	if (!latest) {
		if (o->allow_empty_cache)
			return 0;
		return tp_errpath(err, TP_EINPUT, o->cache,
				  "holds no checkpoint (run 'tidepool cache' first, or give "
				  "--allow-empty-cache to simulate from frame 0)");
	}
	tp_error e = TP_ERROR_INIT;
	if (tp_scene_check_checkpoint(sc, o->cache, latest, &e) < 0 && !o->allow_empty_cache)
		return cli_api_err(&e, err); /* another scene's, size's or version's: says which */
	return 0;
}

static int seek_to(tp_scene *sc, const render_opts *o, int first, tp_err *err)
{
	tp_error e = TP_ERROR_INIT;
	int rc;
	if (o->cache && (rc = cache_holds_this_render(sc, o, first, err)) < 0)
		return rc;
	if (o->cache && (rc = tp_scene_load_checkpoint(sc, o->cache, first, &e)) < 0)
		return cli_api_err(&e, err);
	while (tp_scene_position(sc) + 1 < first && !tp_cli_interrupted)
		if ((rc = tp_scene_pass(sc, &e)) < 0)
			return rc == TP_ERROR_CANCELLED ? TP_EINTR : cli_api_err(&e, err);
	return tp_cli_interrupted ? TP_EINTR : 0;
}

/* The frame waiting for its hash: render_frame_side's job. */
typedef struct hash_job {
	enc_sink *sink;
	const tp_image *img; /* NULL: none waiting */
	int index;
	int rc;
	tp_err err;
} hash_job;

static void hash_pending(void *arg)
{
	hash_job *h = arg;
	h->rc = enc_sink_write(h->sink, h->index, h->img, &h->err);
	h->img = NULL;
}

/* One render's state, from the loaded scene to the closed outputs. */
typedef struct render_run {
	const render_opts *o;
	tp_scene *sc;
	tp_scene_info in;
	int first, last; /* the output frames (--range, or all) */
	out_plan plan;
	/* --hash: the first output's frames, hashed on this thread (see open_sinks) */
	enc_config hash_cfg;
	char hash_fp[65];
	enc_sink *hash_sink;
	hash_job hs;
	enc_sink *sinks[MAX_SINKS];
	tp_pixfmt fmts[MAX_SINKS];
	int share[MAX_SINKS];
	int nsinks;
	enc_queue *q;
	tp_wfile stats;
	tp_pose *poses;
	int npose_cap;
	tp_progress prog;
	int frames_done;
	tp_err err;
} render_run;

/* Every output planned and checked before any simulation (a bad path costs nothing), and
 * the encoders' notes said. */
static int plan_outputs(render_run *r, int threads)
{
	const render_opts *o = r->o;
	const enc_config base = {.threads = threads,
				 .overwrite = o->overwrite,
				 .crf = o->crf,
				 .preset = o->preset,
				 .bitrate = o->bitrate,
				 .range = o->range,
				 .first = r->first,
				 .frames = r->last - r->first + 1};
	int rc = outputs_plan(&r->plan, r->sc, &o->outs, &base, &r->err);
	if (rc < 0)
		return rc;
	for (int i = 0; i < r->plan.n; i++) {
		const out_item *it = &r->plan.o[i];
		const char *note = it->enc->note ? it->enc->note(&it->cfg) : NULL;
		if (note && !o->quiet)
			fprintf(stderr, "tidepool: %s\n", note);
	}
	r->hash_cfg = r->plan.o[0].cfg; /* --hash covers the first output's frames */
	r->hash_cfg.flipbook = NULL;
	r->hash_cfg.path = o->hash;
	outputs_fingerprint(r->sc, (int)r->plan.o[0].mode, &tp_encoder_hash, -1, NULL, 0,
			    r->hash_fp);
	r->hash_cfg.fingerprint = r->hash_fp;
	if (o->hash && (rc = tp_encoder_hash.check(&r->hash_cfg, &r->err)) < 0)
		return rc;
	/* An MP4 of the colour picture gets 4:2:0 straight from the renderer (no RGB frame in
	 * between; the same bytes as converting one), unless --hash reads its RGB pixels. */
	for (int i = 0; i < r->plan.n; i++) {
		tp_format yuv = TP_FORMAT_INIT;
		if ((r->plan.o[i].enc->caps & ENC_CAP_YUV420) && r->plan.o[i].cfg.fmt == TP_RGB8 &&
		    tp_scene_format_as(r->sc, r->plan.o[i].mode, TP_PIXELS_YUV420, &yuv, NULL) == 0 &&
		    !(o->hash && i == 0))
			r->plan.o[i].cfg.fmt = TP_YUV420;
	}
	/* Stats may go to a stream (/dev/stdout, also redirected to a file), a pipe or a
	 * device, written directly; files are written under a temporary name like every
	 * other output (tp_wopen). */
	if (o->stats && (rc = tp_check_output(o->stats, o->overwrite, 1, &r->err)) < 0)
		return rc;
	return 0;
}

/* Levels the height maps (a first pass, when asked), then opens the stats file, the
 * encoders and the queue that feeds them. */
static int open_sinks(render_run *r)
{
	const render_opts *o = r->o;
	int rc = level_heights(r->sc, &r->plan, o->quiet, &r->err);
	if (rc < 0)
		return rc;
	outputs_describe(&r->plan, r->sc);
	if (o->stats && (rc = tp_wopen(&r->stats, o->stats, &r->err)) < 0)
		return rc;
	/* A pipe or device gets each line as it is made (and fails at once). */
	if (r->stats.f && r->stats.direct)
		setvbuf(r->stats.f, NULL, _IOLBF, 0);
	for (int i = 0; i < r->plan.n; i++) {
		rc = enc_sink_create(r->plan.o[i].enc, &r->plan.o[i].cfg, &r->sinks[r->nsinks],
				     &r->err);
		if (rc < 0)
			return rc;
		r->share[r->nsinks] = -1;
		r->fmts[r->nsinks++] = r->plan.o[i].cfg.fmt;
	}
	/* The hash sink is written from this thread (it is the last sink, outside the
	 * queue): frame k is hashed by one of the colour pass's threads while the others draw
	 * frame k + 1 (render_frame_side), so the serial hash overlaps parallel work. On an
	 * encoder thread it took a core from the stepper and renderer's threads in the middle
	 * of their parallel loops, stalling both (+15% on a 1080p -o null render). */
	if (o->hash) {
		rc = enc_sink_create(&tp_encoder_hash, &r->hash_cfg, &r->sinks[r->nsinks], &r->err);
		if (rc < 0)
			return rc;
		r->hash_sink = r->sinks[r->nsinks++];
	}
	r->hs.sink = r->hash_sink;
	const int queued = r->nsinks - (r->hash_sink != NULL);
	const int depth = queue_depth(&r->plan, r->fmts, queued, r->in.width, r->in.height);
	return enc_queue_create(r->sinks, r->fmts, r->share, queued, r->in.width, r->in.height,
				depth, &r->q, &r->err);
}

/* Frame k's --stats line; 1 when the reader went away (an interruption, not a failure). */
static int stats_line(render_run *r, int k, long clipped)
{
	tp_frame_stats fs = TP_FRAME_STATS_INIT;
	int nb = 0, rc;
	if ((rc = frame_stats(r->sc, k, &fs, &r->poses, &r->npose_cap, &nb, &r->err)) < 0)
		return rc;
	if (write_stats_line(r->stats.f, &fs, r->poses, nb, clipped) < 0) {
		if (errno == EPIPE && tp_cli_broken_pipe())
			return 1;
		return tp_errf(&r->err, TP_EIO, "%s: write error (%s)", r->o->stats,
			       strerror(errno));
	}
	return 0;
}

/* Steps, draws and queues frames first..last (until Ctrl-C or an error). */
static int render_frames(render_run *r)
{
	int rc = 0, warned_clip = 0;
	for (int k = r->first; k <= r->last && !tp_cli_interrupted; k++) {
		tp_error e = TP_ERROR_INIT;
		rc = tp_scene_step(r->sc, &e);
		if (rc == TP_ERROR_CANCELLED && tp_cli_interrupted)
			rc = 0; /* stopped mid-frame: the frames before it are whole */
		else if (rc < 0)
			rc = cli_api_err(&e, &r->err);
		if (rc < 0 || tp_cli_interrupted)
			break;
		tp_image *slot = enc_queue_acquire(r->q);
		if (!slot)
			break; /* an encoder failed; enc_queue_finish() reports it */
		/* the previous frame's hash alongside this frame's drawing; its slot is the
		 * encoders' to read, and not ours to reuse before depth - 1 more frames */
		rc = outputs_render(&r->plan, r->sc, k, slot, r->hs.img ? hash_pending : NULL,
				    &r->hs, &r->err);
		if (rc < 0)
			break;
		if (r->hs.rc < 0) {
			rc = r->hs.rc;
			r->err = r->hs.err;
			break;
		}
		if (r->hash_sink) {
			r->hs.index = k;
			r->hs.img = &slot[0]; /* the first output's own pixels, no copy */
		}
		enc_queue_submit(r->q, k);
		const long clipped = outputs_height_clipped(&r->plan);
		if (clipped > 0 && !warned_clip) {
			warned_clip = 1;
			fprintf(stderr,
				"tidepool: warning: the height map clips %ld pixels at frame %d "
				"(beyond the 16-bit range); set maps.height.scale to fewer levels "
				"per height unit, or \"auto\"\n",
				clipped, k);
		}
		if (r->stats.f && (rc = stats_line(r, k, clipped)) != 0) {
			if (rc == 1) { /* this frame is already with the encoders: it counts */
				rc = 0;
				r->frames_done = k - r->first + 1;
			}
			break;
		}
		r->frames_done = k - r->first + 1;
		tp_progress_update(&r->prog, r->frames_done);
	}
	return rc;
}

/* Hashes the last frame, drains the queue and closes every output: finished, finished
 * as far as it got (Ctrl-C: *interrupted), or removed (an error, or an interrupted
 * --range chunk). */
static int close_outputs(render_run *r, int rc, int *interrupted)
{
	/* the last frame's hash (after an interruption too: every submitted frame is
	 * hashed) */
	if (r->hs.img && rc == 0) {
		hash_pending(&r->hs);
		if (r->hs.rc < 0) {
			rc = r->hs.rc;
			r->err = r->hs.err;
		}
	}
	tp_err qerr;
	int qrc = enc_queue_finish(r->q, &qerr);
	if (rc == 0 && qrc < 0) {
		rc = qrc;
		r->err = qerr;
	}
	*interrupted = rc == 0 && tp_cli_interrupted;
	enc_close_mode mode = rc < 0         ? ENC_CLOSE_FAILED
			      : *interrupted ? ENC_CLOSE_INTERRUPTED
					     : ENC_CLOSE_DONE;
	if (*interrupted && r->o->range)
		mode = ENC_CLOSE_FAILED; /* a chunk is whole or absent: rerunning it completes it */
	for (int i = 0; i < r->nsinks; i++) {
		tp_err cerr;
		int crc = enc_sink_close(r->sinks[i], mode, &cerr);
		if (crc < 0 && rc == 0) {
			rc = crc;
			r->err = cerr;
		}
	}
	if (r->stats.f) {
		tp_err serr;
		int src = tp_wclose(&r->stats, rc == 0, &serr);
		if (rc == 0 && src < 0 && !tp_cli_broken_pipe()) {
			rc = src;
			r->err = serr;
		}
	}
	return rc;
}

/* The summary line (and the broken pipe's); TP_EINTR after an interruption. */
static int summarise(render_run *r, int interrupted)
{
	const int done = r->frames_done;
	double el = tp_now() - r->prog.start;
	char summary[1024];
	char more[32] = "", warm[96] = "";
	if (r->plan.n > 1)
		snprintf(more, sizeof more, " (+%d more)", r->plan.n - 1);
	/* One figure: frames written over the wall time from the first simulated step
	 * to the last byte written, the same measure as the progress line's */
	const int wf = tp_scene_warmup_frames(r->sc), skipped = r->first > 0;
	if (wf || skipped)
		snprintf(warm, sizeof warm, "; the time includes %s%s%s",
			 wf ? "the loop's warm-up" : "", wf && skipped ? " and " : "",
			 skipped ? "simulating up to the range" : "");
	snprintf(summary, sizeof summary, "%s %d frame%s (%dx%d, %s) to %s%s in %.2f s (%.1f fps%s)",
		 interrupted ? "interrupted after" : "rendered", done, done == 1 ? "" : "s",
		 r->in.width, r->in.height, r->in.solver, r->plan.o[0].path, more, el,
		 el > 0 ? done / el : 0.0, warm);
	tp_progress_done(&r->prog, summary);
	if (interrupted && tp_cli_broken_pipe())
		/* Said even with -q: the status alone (141) would not say which pipe. */
		fprintf(stderr,
			"tidepool: render: broken pipe (SIGPIPE): stopped after %d "
			"frame%s; "
			"finished outputs are kept\n",
			done, done == 1 ? "" : "s");
	return interrupted ? TP_EINTR : 0;
}

int cmd_render(int argc, char **argv)
{
	render_opts o = {.crf = -1};
	const char *scene_file = NULL;
	int prc = parse_args(argc, argv, &o, &scene_file);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;

	render_run run = {.o = &o, .in = TP_SCENE_INFO_INIT, .err = {""}}, *r = &run;
	/* Caught from the start: Ctrl-C during set-up leaves nothing behind either. */
	tp_cli_catch_signals();
	const int threads = tp_cli_threads(o.threads);
	int rc = cli_load(scene_file, &o.ov, threads, &r->sc, &r->err);
	if (rc < 0)
		goto fail;
	tp_scene_get_info(r->sc, &r->in);
	/* Ctrl-C and SIGTERM stop a long frame in the middle (sph's substeps), not after it */
	tp_scene_set_cancel(r->sc, &tp_cli_interrupted);
	if (o.range && o.range_b >= r->in.frames) {
		rc = tp_errf(&r->err, TP_EUSAGE, "--range %d-%d: %s has %d frames (0-%d)",
			     o.range_a, o.range_b, scene_file, r->in.frames, r->in.frames - 1);
		goto fail;
	}
	r->first = o.range ? o.range_a : 0;
	r->last = o.range ? o.range_b : r->in.frames - 1;
	if ((rc = plan_outputs(r, threads)) < 0 || (rc = open_sinks(r)) < 0)
		goto fail;

	tp_progress_start(&r->prog, "render", r->last - r->first + 1, o.quiet);
	if (r->first > 0 && (rc = seek_to(r->sc, &o, r->first, &r->err)) < 0)
		goto fail;
	int interrupted = 0;
	rc = close_outputs(r, render_frames(r), &interrupted);
	if (rc == 0)
		rc = summarise(r, interrupted);
	else
		tp_progress_done(&r->prog, NULL);

fail:
	tp_wclose(&r->stats, 0, &(tp_err){""});
	enc_queue_destroy(r->q);
	for (int i = 0; i < r->nsinks; i++)
		enc_sink_destroy(r->sinks[i]);
	free(r->poses);
	tp_scene_free(r->sc);
	if (rc < 0 && rc != TP_EINTR)
		return tp_cli_fail(rc, &r->err);
	return tp_exit_code(rc);
}
