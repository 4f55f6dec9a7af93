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

static const char usage[] =
	"usage: tidepool render SCENE [options]\n"
	"\n"
	"Simulates SCENE and writes its frames.\n"
	"\n"
	"  -o, --output OUT     PNG pattern (out/%04d.png), one PNG (with --frames 1),\n"
	"                       an OpenEXR pattern or file (.exr: float maps in metres),\n"
	"                       an .mp4 file, or 'null' to discard frames (timing);\n"
	"                       MODE=OUT renders mode color, height, normal, caustics,\n"
	"                       particles (sph), displacement or foam (choppy airy),\n"
	"                       velocity (airy's ambient waves);\n"
	"                       repeat -o for several outputs of one simulation;\n"
	"                       a bare OUT keeps the mode of the scene's one output;\n"
	"                       default: the scene's \"outputs\" or "
	"\"output\"\n" CLI_SCENE_OPTS_HELP
	"      --range A-B      render only frames A..B (0-based, inclusive) of the scene's\n"
	"                       timeline, byte-identical to the same frames of a full render;\n"
	"                       PNG names and --hash lines keep the global frame numbers, an\n"
	"                       MP4 is a segment for 'tidepool join'\n"
	"      --cache DIR      start --range from the latest checkpoint at or before A in\n"
	"                       DIR (written by 'tidepool cache'); without it the frames\n"
	"                       before A are simulated without rendering; a DIR that\n"
	"                       holds no checkpoint of this render is refused\n"
	"      --allow-empty-cache  with --cache: a DIR without checkpoints is fine (the\n"
	"                       frames before A are then simulated)\n"
	"      --crf N          MP4 quality, 0 (lossless) .. 51 (default 18)\n"
	"      --preset NAME    x264 preset: ultrafast, superfast, veryfast, faster, fast,\n"
	"                       medium (default), slow, slower, veryslow, placebo\n"
	"      --bitrate RATE   MP4 target bit rate in bits/s (k and M suffixes), instead of crf\n"
	"      --stats FILE     write one JSON line per frame: frame, time, solver diagnostics\n"
	"                       and every box's pose (a file, /dev/stdout, /dev/stderr or a\n"
	"                       pipe)\n"
	"      --hash FILE      also write a frame-hash manifest (xxh128 of each frame's pixels)\n"
	"                       for 'tidepool compare'\n"
	"  -y, --overwrite      replace existing output files\n"
	"  -q, --quiet          no progress or summary\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 done, 2 usage error, 3 bad scene or input image, 4 I/O or runtime\n"
	"error, 130 interrupted (Ctrl-C: frames so far are kept; an MP4 is finalised),\n"
	"141 a pipe written to (--stats) was closed by its reader: handled like Ctrl-C.\n"
	"\n"
	"MP4s are H.264 (libx264). Without libx264, or with TIDEPOOL_MP4_CODEC=mpeg4, they\n"
	"are MPEG-4 Part 2, which web browsers do not play. More: man tidepool.\n";

typedef cli_opts render_opts;

static int parse_args(int argc, char **argv, render_opts *o, const char **scene_file)
{
	int rc = cli_opts_parse("render", usage, CLI_RENDER_OPTS, argc, argv, o);
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

int cmd_render(int argc, char **argv)
{
	render_opts o = {.crf = -1};
	const char *scene_file = NULL;
	int prc = parse_args(argc, argv, &o, &scene_file);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;

	tp_err err = {""};
	tp_scene *sc = NULL;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_pose *poses = NULL;
	int npose_cap = 0;
	out_plan plan = {0};
	enc_sink *sinks[MAX_SINKS] = {NULL};
	hash_job hs = {0};
	tp_pixfmt fmts[MAX_SINKS];
	int share[MAX_SINKS];
	int nsinks = 0;
	enc_queue *q = NULL;
	tp_wfile stats = {0};
	int rc = 0, frames_done = 0;

	/* Caught from the start: Ctrl-C during set-up leaves nothing behind either. */
	tp_cli_catch_signals();
	int threads = tp_cli_threads(o.threads);
	rc = cli_load(scene_file, &o.ov, threads, &sc, &err);
	if (rc < 0)
		goto fail;
	tp_scene_get_info(sc, &in);
	/* Ctrl-C and SIGTERM stop a long frame in the middle (sph's substeps), not after it */
	tp_scene_set_cancel(sc, &tp_cli_interrupted);

	if (o.range && o.range_b >= in.frames) {
		rc = tp_errf(&err, TP_EUSAGE, "--range %d-%d: %s has %d frames (0-%d)", o.range_a,
			     o.range_b, scene_file, in.frames, in.frames - 1);
		goto fail;
	}
	const int first = o.range ? o.range_a : 0, last = o.range ? o.range_b : in.frames - 1;

	/* Every output is checked before any simulation: a bad path costs nothing. */
	const enc_config base = {.threads = threads,
				 .overwrite = o.overwrite,
				 .crf = o.crf,
				 .preset = o.preset,
				 .bitrate = o.bitrate,
				 .range = o.range,
				 .first = first,
				 .frames = last - first + 1};
	rc = outputs_plan(&plan, sc, &o.outs, &base, &err);
	if (rc < 0)
		goto fail;
	for (int i = 0; i < plan.n; i++) {
		const out_item *it = &plan.o[i];
		const char *note = it->enc->note ? it->enc->note(&it->cfg) : NULL;
		if (note && !o.quiet)
			fprintf(stderr, "tidepool: %s\n", note);
	}
	enc_config cfg = plan.o[0].cfg; /* --hash covers the first output's frames */
	cfg.flipbook = NULL;
	const tp_encoder *hash_enc = enc_find("hash");
	enc_config hash_cfg = cfg;
	hash_cfg.path = o.hash;
	char hash_fp[65];
	outputs_fingerprint(sc, (int)plan.o[0].mode, &tp_encoder_hash, -1, NULL, 0, hash_fp);
	hash_cfg.fingerprint = hash_fp;
	if (o.hash) {
		rc = hash_enc->check(&hash_cfg, &err);
		if (rc < 0)
			goto fail;
	}
	/* An MP4 of the colour picture gets 4:2:0 straight from the renderer (no RGB frame in
	 * between; the same bytes as converting one), unless --hash reads its RGB pixels. */
	for (int i = 0; i < plan.n; i++) {
		tp_format yuv = TP_FORMAT_INIT;
		if ((plan.o[i].enc->caps & ENC_CAP_YUV420) && plan.o[i].cfg.fmt == TP_RGB8 &&
		    tp_scene_format_as(sc, plan.o[i].mode, TP_PIXELS_YUV420, &yuv, NULL) == 0 &&
		    !(o.hash && i == 0))
			plan.o[i].cfg.fmt = TP_YUV420;
	}
	/* Stats may go to a stream (/dev/stdout, also redirected to a file), a pipe or a
	 * device, written directly; files are written under a temporary name like every
	 * other output (tp_wopen). */
	if (o.stats && (rc = tp_check_output(o.stats, o.overwrite, 1, &err)) < 0)
		goto fail;

	rc = level_heights(sc, &plan, o.quiet, &err);
	if (rc < 0)
		goto fail;
	outputs_describe(&plan, sc);
	if (o.stats && (rc = tp_wopen(&stats, o.stats, &err)) < 0)
		goto fail;
	/* A pipe or device gets each line as it is made (and fails at once). */
	if (stats.f && stats.direct)
		setvbuf(stats.f, NULL, _IOLBF, 0);
	for (int i = 0; i < plan.n; i++) {
		rc = enc_sink_create(plan.o[i].enc, &plan.o[i].cfg, &sinks[nsinks], &err);
		if (rc < 0)
			goto fail;
		share[nsinks] = -1;
		fmts[nsinks++] = plan.o[i].cfg.fmt;
	}
	/* The hash sink is written from this thread (it is the last sink, outside the
	 * queue): frame k is hashed by one of the colour pass's threads while the others draw
	 * frame k + 1 (render_frame_side), so the serial hash overlaps parallel work. On an
	 * encoder thread it took a core from the stepper and renderer's threads in the middle
	 * of their parallel loops, stalling both (+15% on a 1080p -o null render). */
	enc_sink *hash_sink = NULL;
	if (o.hash) {
		rc = enc_sink_create(hash_enc, &hash_cfg, &sinks[nsinks], &err);
		if (rc < 0)
			goto fail;
		hash_sink = sinks[nsinks++];
	}
	hs.sink = hash_sink;
	const int depth = queue_depth(&plan, fmts, nsinks - (hash_sink != NULL), in.width,
				      in.height);
	rc = enc_queue_create(sinks, fmts, share, nsinks - (hash_sink != NULL), in.width,
			      in.height, depth, &q, &err);
	if (rc < 0)
		goto fail;

	tp_progress prog;
	int warned_clip = 0;
	tp_progress_start(&prog, "render", last - first + 1, o.quiet);
	if (first > 0 && (rc = seek_to(sc, &o, first, &err)) < 0)
		goto fail;
	for (int k = first; k <= last && !tp_cli_interrupted; k++) {
		tp_error e = TP_ERROR_INIT;
		rc = tp_scene_step(sc, &e);
		if (rc == TP_ERROR_CANCELLED && tp_cli_interrupted)
			rc = 0; /* stopped mid-frame: the frames before it are whole */
		else if (rc < 0)
			rc = cli_api_err(&e, &err);
		if (rc < 0 || tp_cli_interrupted)
			break;
		tp_image *slot = enc_queue_acquire(q);
		if (!slot)
			break; /* an encoder failed; enc_queue_finish() reports it */
		/* the previous frame's hash alongside this frame's drawing; its slot is the
		 * encoders' to read, and not ours to reuse before depth - 1 more frames */
		rc = outputs_render(&plan, sc, k, slot, hs.img ? hash_pending : NULL, &hs, &err);
		if (rc < 0)
			break;
		if (hs.rc < 0) {
			rc = hs.rc;
			err = hs.err;
			break;
		}
		if (hash_sink) {
			hs.index = k;
			hs.img = &slot[0]; /* the first output's own pixels, no copy */
		}
		enc_queue_submit(q, k);
		const long clipped = outputs_height_clipped(&plan);
		if (clipped > 0 && !warned_clip) {
			warned_clip = 1;
			fprintf(stderr,
				"tidepool: warning: the height map clips %ld pixels at frame %d "
				"(beyond the 16-bit range); set maps.height.scale to fewer levels "
				"per height unit, or \"auto\"\n",
				clipped, k);
		}
		if (stats.f) {
			tp_frame_stats fs = TP_FRAME_STATS_INIT;
			int nb = 0;
			if ((rc = frame_stats(sc, k, &fs, &poses, &npose_cap, &nb, &err)) < 0)
				break;
			if (write_stats_line(stats.f, &fs, poses, nb, clipped) < 0) {
				if (errno == EPIPE && tp_cli_broken_pipe()) {
					/* The reader went away: an interruption, not a failure.
					 * This frame is already with the encoders, so it counts. */
					frames_done = k - first + 1;
					break;
				}
				rc = tp_errf(&err, TP_EIO, "%s: write error (%s)", o.stats,
					     strerror(errno));
				break;
			}
		}
		frames_done = k - first + 1;
		tp_progress_update(&prog, frames_done);
	}
	/* the last frame's hash (after an interruption too: every submitted frame is
	 * hashed) */
	if (hs.img && rc == 0) {
		hash_pending(&hs);
		if (hs.rc < 0) {
			rc = hs.rc;
			err = hs.err;
		}
	}
	tp_err qerr;
	int qrc = enc_queue_finish(q, &qerr);
	if (rc == 0 && qrc < 0) {
		rc = qrc;
		err = qerr;
	}
	int interrupted = rc == 0 && tp_cli_interrupted;
	enc_close_mode mode = rc < 0        ? ENC_CLOSE_FAILED
			      : interrupted ? ENC_CLOSE_INTERRUPTED
					    : ENC_CLOSE_DONE;
	if (interrupted && o.range)
		mode = ENC_CLOSE_FAILED; /* a chunk is whole or absent: rerunning it completes it */
	for (int i = 0; i < nsinks; i++) {
		tp_err cerr;
		int crc = enc_sink_close(sinks[i], mode, &cerr);
		if (crc < 0 && rc == 0) {
			rc = crc;
			err = cerr;
		}
	}
	if (stats.f) {
		tp_err serr;
		int src = tp_wclose(&stats, rc == 0, &serr);
		if (rc == 0 && src < 0 && !tp_cli_broken_pipe()) {
			rc = src;
			err = serr;
		}
	}
	if (rc == 0) {
		double el = tp_now() - prog.start;
		char summary[1024];
		char more[32] = "", warm[96] = "";
		if (plan.n > 1)
			snprintf(more, sizeof more, " (+%d more)", plan.n - 1);
		/* One figure: frames written over the wall time from the first simulated step
		 * to the last byte written, the same measure as the progress line's */
		const int wf = tp_scene_warmup_frames(sc), skipped = first > 0;
		if (wf || skipped)
			snprintf(warm, sizeof warm, "; the time includes %s%s%s",
				 wf ? "the loop's warm-up" : "", wf && skipped ? " and " : "",
				 skipped ? "simulating up to the range" : "");
		snprintf(summary, sizeof summary,
			 "%s %d frame%s (%dx%d, %s) to %s%s in %.2f s (%.1f fps%s)",
			 interrupted ? "interrupted after" : "rendered", frames_done,
			 frames_done == 1 ? "" : "s", in.width, in.height, in.solver,
			 plan.o[0].path, more, el, el > 0 ? frames_done / el : 0.0, warm);
		tp_progress_done(&prog, summary);
		if (interrupted && tp_cli_broken_pipe())
			/* Said even with -q: the status alone (141) would not say which pipe. */
			fprintf(stderr,
				"tidepool: render: broken pipe (SIGPIPE): stopped after %d "
				"frame%s; "
				"finished outputs are kept\n",
				frames_done, frames_done == 1 ? "" : "s");
		if (interrupted)
			rc = TP_EINTR;
	} else {
		tp_progress_done(&prog, NULL);
	}

fail:
	tp_wclose(&stats, 0, &(tp_err){""});
	enc_queue_destroy(q);
	for (int i = 0; i < nsinks; i++)
		enc_sink_destroy(sinks[i]);
	free(poses);
	tp_scene_free(sc);
	if (rc < 0 && rc != TP_EINTR)
		return tp_cli_fail(rc, &err);
	return tp_exit_code(rc);
}
