/* tidepool render: scene -> stepper -> renderer -> encoder queue -> outputs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "encode/encoder.h"
#include "encode/queue.h"
#include "render/render.h"
#include "scene/scene.h"
#include "sim/loop.h"
#include "sim/stepper.h"
#include "util/fsutil.h"
#include "util/progress.h"

#define MAX_SINKS (OUTPUTS_MAX + 2)
#define MAX_SETS 64
#define QUEUE_DEPTH 4

static const char usage[] =
	"usage: tidepool render SCENE [options]\n"
	"\n"
	"Simulates SCENE and writes its frames.\n"
	"\n"
	"  -o, --output OUT     PNG pattern (out/%04d.png), one PNG (with --frames 1),\n"
	"                       an .mp4 file, or 'null' to discard frames (timing);\n"
	"                       MODE=OUT renders mode color, height, normal, caustics\n"
	"                       or particles (sph);\n"
	"                       repeat -o for several outputs of one simulation;\n"
	"                       default: the scene's \"outputs\" or \"output\"\n"
	"      --set KEY=VALUE  change a scene value (params.damping=4, maps.normal.bits=16,\n"
	"                       loop.duration=2); repeatable\n"
	"      --flipbook CxR   write single-file .png outputs as atlases of C x R frames\n"
	"      --frame-size WxH size of each flipbook frame (default: the render size)\n"
	"      --pot            round flipbook atlases up to powers of two\n"
	"      --frames N       render N frames (overrides duration)\n"
	"      --size WxH       output size in pixels\n"
	"      --seed N         random seed (rain and other random events)\n"
	"      --threads N      worker threads (default: all cores); output is identical\n"
	"                       for every N\n"
	"      --crf N          MP4 quality, 0 (lossless) .. 51 (default 18)\n"
	"      --preset NAME    x264 preset, ultrafast .. veryslow (default medium)\n"
	"      --bitrate RATE   MP4 target bit rate in bits/s (k and M suffixes), instead of crf\n"
	"      --stats FILE     write one JSON line per frame: frame, time, solver diagnostics\n"
	"                       (a file, or a pipe or device such as /dev/stdout)\n"
	"      --hash FILE      also write a frame-hash manifest (sha256 of each frame's pixels)\n"
	"                       for 'tidepool compare'\n"
	"  -y, --overwrite      replace existing output files\n"
	"  -q, --quiet          no progress or summary\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 done, 2 usage error, 3 bad scene or input image, 4 I/O or runtime\n"
	"error, 130 interrupted (Ctrl-C: frames so far are kept; an MP4 is finalised),\n"
	"141 a pipe written to (--stats) was closed by its reader: handled like Ctrl-C.\n";

typedef struct render_opts {
	scene_overrides ov;
	int threads;
	int overwrite, quiet;
	const char *stats;
	const char *hash;
	out_cli outs;
	const char *sets[MAX_SETS];
	int nsets;
	int crf;
	const char *preset;
	int64_t bitrate;
} render_opts;

static int parse_bitrate(const char *s, int64_t *out)
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

static int parse_args(int argc, char **argv, render_opts *o, const char **scene_file)
{
	enum { OPT_FRAMES = 256, OPT_SIZE, OPT_SEED, OPT_THREADS, OPT_STATS, OPT_CRF, OPT_PRESET,
	       OPT_BITRATE, OPT_HASH, OPT_SET, OPT_FLIPBOOK, OPT_FRAME_SIZE, OPT_POT };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "stats", required_argument, NULL, OPT_STATS },
		{ "hash", required_argument, NULL, OPT_HASH },
		{ "crf", required_argument, NULL, OPT_CRF },
		{ "preset", required_argument, NULL, OPT_PRESET },
		{ "bitrate", required_argument, NULL, OPT_BITRATE },
		{ "set", required_argument, NULL, OPT_SET },
		{ "flipbook", required_argument, NULL, OPT_FLIPBOOK },
		{ "frame-size", required_argument, NULL, OPT_FRAME_SIZE },
		{ "pot", no_argument, NULL, OPT_POT },
		{ "overwrite", no_argument, NULL, 'y' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:yqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (o->outs.n == OUTPUTS_MAX)
				return tp_cli_usage("render", "at most %d outputs (-o)", OUTPUTS_MAX);
			o->outs.spec[o->outs.n++] = optarg;
			break;
		case OPT_SET:
			if (o->nsets == MAX_SETS)
				return tp_cli_usage("render", "at most %d --set options", MAX_SETS);
			o->sets[o->nsets++] = optarg;
			break;
		case OPT_FLIPBOOK:
			if (tp_parse_size(optarg, &o->outs.cols, &o->outs.rows) || o->outs.cols > 256 ||
			    o->outs.rows > 256)
				return tp_cli_usage("render", "--flipbook: expected CxR such as 8x8, at most 256x256 (got '%s')",
						    optarg);
			break;
		case OPT_FRAME_SIZE:
			if (tp_parse_size(optarg, &o->outs.frame_w, &o->outs.frame_h))
				return tp_cli_usage("render", "--frame-size: expected WxH such as 128x128 (got '%s')", optarg);
			break;
		case OPT_POT: o->outs.pot = 1; break;
		case 'y': o->overwrite = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': fputs(usage, stdout); return 1;
		case OPT_FRAMES:
			if (tp_parse_int(optarg, 1, SCENE_MAX_FRAMES, &v))
				return tp_cli_usage("render", "--frames: expected a whole number 1..%d (got '%s')",
						    SCENE_MAX_FRAMES, optarg);
			o->ov.frames = (int)v;
			break;
		case OPT_SIZE:
			if (tp_parse_size(optarg, &o->ov.width, &o->ov.height))
				return tp_cli_usage("render", "--size: expected WxH such as 640x360 (got '%s')", optarg);
			break;
		case OPT_SEED:
			if (tp_parse_u64(optarg, &o->ov.seed))
				return tp_cli_usage("render", "--seed: expected a whole number >= 0 (got '%s')", optarg);
			o->ov.has_seed = 1;
			break;
		case OPT_THREADS:
			if (tp_parse_int(optarg, 0, 1024, &v))
				return tp_cli_usage("render", "--threads: expected 0..1024 (got '%s')", optarg);
			o->threads = (int)v;
			break;
		case OPT_STATS: o->stats = optarg; break;
		case OPT_HASH: o->hash = optarg; break;
		case OPT_CRF:
			if (tp_parse_int(optarg, 0, 51, &v))
				return tp_cli_usage("render", "--crf: expected 0..51 (got '%s')", optarg);
			o->crf = (int)v;
			break;
		case OPT_PRESET: o->preset = optarg; break;
		case OPT_BITRATE:
			if (parse_bitrate(optarg, &o->bitrate))
				return tp_cli_usage("render", "--bitrate: expected bits/s such as 8M or 2500k (got '%s')", optarg);
			break;
		case ':': return tp_cli_usage("render", "%s needs a value", argv[optind - 1]);
		default: return tp_cli_usage("render", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return tp_cli_usage("render", "no scene file given");
	if (optind + 1 < argc)
		return tp_cli_usage("render", "one scene at a time (got '%s' too)", argv[optind + 1]);
	*scene_file = argv[optind];
	if ((o->outs.frame_w || o->outs.pot) && !o->outs.cols)
		return tp_cli_usage("render", "--frame-size and --pot go with --flipbook CxR");
	/* The scene's "output" is replaced by the first -o (its path, without MODE=). */
	if (o->outs.n) {
		int mode;
		outputs_split(o->outs.spec[0], &mode, &o->ov.output);
	}
	o->ov.sets = o->sets;
	o->ov.nsets = o->nsets;
	return 0;
}

/* One JSON object per line; %.9g keeps floats exact enough and stable across runs.
 * ferror() catches a failed flush inside any of the calls, so a full disk or a closed
 * pipe stops the render at this frame, not after the last one. */
static int write_stats_line(FILE *f, int frame, double t, const tp_stats *st)
{
	fprintf(f, "{\"frame\":%d,\"t\":%.9g", frame, t);
	for (int i = 0; i < st->n; i++)
		fprintf(f, ",\"%s\":%.9g", st->name[i], st->value[i]);
	return fputs("}\n", f) == EOF || ferror(f) ? -1 : 0;
}

int cmd_render(int argc, char **argv)
{
	render_opts o = { .crf = -1 };
	const char *scene_file = NULL;
	int prc = parse_args(argc, argv, &o, &scene_file);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;

	tp_err err = { "" };
	scene *sc = NULL;
	sim_loop *lp = NULL;
	stepper *st = NULL;
	out_plan plan = { 0 };
	enc_sink *sinks[MAX_SINKS] = { NULL };
	tp_pixfmt fmts[MAX_SINKS];
	int share[MAX_SINKS];
	int nsinks = 0;
	enc_queue *q = NULL;
	FILE *stats = NULL;
	char stats_tmp[4352] = "";
	int rc = 0, frames_done = 0;

	/* Caught from the start: Ctrl-C during set-up leaves nothing behind either. */
	tp_cli_catch_signals();
	int threads = tp_cli_threads(o.threads);
	rc = scene_load(scene_file, &o.ov, &sc, &err);
	if (rc < 0)
		goto fail;

	/* Every output is checked before any simulation: a bad path costs nothing. */
	const enc_config base = { .overwrite = o.overwrite, .crf = o.crf, .preset = o.preset,
				  .bitrate = o.bitrate };
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
	if (o.hash) {
		rc = hash_enc->check(&hash_cfg, &err);
		if (rc < 0)
			goto fail;
	}
	/* Stats may go to a pipe or /dev/stdout, written directly; files are written
	 * under a temporary name like every other output. */
	int stats_direct = o.stats && tp_is_special(o.stats);
	if (o.stats && !stats_direct) {
		rc = enc_check_output(o.stats, o.overwrite, &err);
		if (rc < 0)
			goto fail;
	}

	rc = loop_create(sc, threads, &lp, &err);
	if (rc < 0)
		goto fail;
	st = loop_stepper(lp);
	if (o.stats) {
		if (!stats_direct)
			enc_temp_name(o.stats, stats_tmp, sizeof stats_tmp);
		stats = fopen(stats_direct ? o.stats : stats_tmp, "w");
		if (!stats) {
			rc = tp_errf(&err, TP_EIO, "%s: cannot create (%s)", o.stats, strerror(errno));
			stats_tmp[0] = 0;
			goto fail;
		}
		/* A pipe or device gets each line as it is made (and fails at once). */
		if (stats_direct)
			setvbuf(stats, NULL, _IOLBF, 0);
	}
	for (int i = 0; i < plan.n; i++) {
		rc = enc_sink_create(plan.o[i].enc, &plan.o[i].cfg, &sinks[nsinks], &err);
		if (rc < 0)
			goto fail;
		share[nsinks] = -1;
		fmts[nsinks++] = plan.o[i].cfg.fmt;
	}
	if (o.hash) {
		rc = enc_sink_create(hash_enc, &hash_cfg, &sinks[nsinks], &err);
		if (rc < 0)
			goto fail;
		share[nsinks] = 0; /* hashes the first output's own pixels, no copy */
		fmts[nsinks++] = hash_cfg.fmt;
	}
	rc = enc_queue_create(sinks, fmts, share, nsinks, sc->width, sc->height, QUEUE_DEPTH, &q, &err);
	if (rc < 0)
		goto fail;

	tp_progress prog;
	tp_progress_start(&prog, "render", sc->frames, o.quiet);
	for (int k = 0; k < sc->frames && !tp_cli_interrupted; k++) {
		tp_surface surf;
		rc = loop_next(lp, &surf, &err);
		if (rc < 0)
			break;
		tp_image *slot = enc_queue_acquire(q);
		if (!slot)
			break; /* an encoder failed; enc_queue_finish() reports it */
		outputs_render(&plan, &surf, slot);
		enc_queue_submit(q, k);
		if (stats) {
			tp_stats s;
			stepper_stats(st, &s);
			if (write_stats_line(stats, k, stepper_time(st), &s) < 0) {
				if (errno == EPIPE && tp_cli_broken_pipe()) {
					/* The reader went away: an interruption, not a failure. This
					 * frame is already with the encoders, so it counts. */
					frames_done = k + 1;
					break;
				}
				rc = tp_errf(&err, TP_EIO, "%s: write error (%s)", o.stats, strerror(errno));
				break;
			}
		}
		frames_done = k + 1;
		tp_progress_update(&prog, frames_done);
	}
	tp_err qerr;
	int qrc = enc_queue_finish(q, &qerr);
	if (rc == 0 && qrc < 0) {
		rc = qrc;
		err = qerr;
	}
	int interrupted = rc == 0 && tp_cli_interrupted;
	enc_close_mode mode = rc < 0 ? ENC_CLOSE_FAILED : interrupted ? ENC_CLOSE_INTERRUPTED : ENC_CLOSE_DONE;
	for (int i = 0; i < nsinks; i++) {
		tp_err cerr;
		int crc = enc_sink_close(sinks[i], mode, &cerr);
		if (crc < 0 && rc == 0) {
			rc = crc;
			err = cerr;
		}
	}
	if (stats) {
		int bad = ferror(stats);
		bad |= fclose(stats) != 0;
		stats = NULL;
		if (rc == 0 && bad && !tp_cli_broken_pipe())
			rc = tp_errf(&err, TP_EIO, "%s: write error", o.stats);
		if (!stats_direct) {
			if (rc == 0)
				rc = tp_commit_file(stats_tmp, o.stats, &err);
			else
				unlink(stats_tmp);
		}
		stats_tmp[0] = 0;
	}
	if (rc == 0) {
		double el = tp_now() - prog.start;
		char summary[1024];
		char more[32] = "";
		if (plan.n > 1)
			snprintf(more, sizeof more, " (+%d more)", plan.n - 1);
		snprintf(summary, sizeof summary, "%s %d frame%s (%dx%d, %s) to %s%s in %.2f s (%.1f fps)",
			 interrupted ? "interrupted after" : "rendered", frames_done,
			 frames_done == 1 ? "" : "s", sc->width, sc->height, sc->solver->name, plan.o[0].path,
			 more, el, el > 0 ? frames_done / el : 0.0);
		tp_progress_done(&prog, summary);
		if (interrupted && tp_cli_broken_pipe())
			/* Said even with -q: the status alone (141) would not say which pipe. */
			fprintf(stderr, "tidepool: render: broken pipe (SIGPIPE): stopped after %d frame%s; "
				"finished outputs are kept\n", frames_done, frames_done == 1 ? "" : "s");
		if (interrupted)
			rc = TP_EINTR;
	} else {
		tp_progress_done(&prog, NULL);
	}

fail:
	if (stats) {
		fclose(stats);
		if (stats_tmp[0])
			unlink(stats_tmp);
	}
	enc_queue_destroy(q);
	for (int i = 0; i < nsinks; i++)
		enc_sink_destroy(sinks[i]);
	loop_destroy(lp);
	outputs_free(&plan);
	scene_destroy(sc);
	if (rc < 0 && rc != TP_EINTR)
		return tp_cli_fail(rc, &err);
	return tp_exit_code(rc);
}
