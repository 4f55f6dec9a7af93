/* tidepool compare: regression comparison of frames (src/compare/ does the work). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/optrows.h"
#include "cli/shline.h"
#include "compare/compare.h"
#include "util/progress.h"

#define MAX_IGNORE 64

static const char head[] =
	"usage: tidepool compare A B [options]\n"
	"\n"
	"Compares frames: A is the reference (golden), B the frames under test. Each side is\n"
	"  a PNG file (one frame),\n"
	"  a directory of PNGs (*.png in natural order: f2.png before f10.png),\n"
	"  a printf pattern ('out/%04d.png', frames from 0 or 1 on) or a quoted glob ('out/*.png'),\n"
	"  a video (MP4, decoded with libavcodec to rgb24), or\n"
	"  a frame-hash manifest (written by 'tidepool render --hash FILE').\n"
	"Frames are matched by index. A different frame count or frame size is a difference\n"
	"(exit 1) and is reported as such; such frames are never compared.\n"
	"\n"
	"Tolerances (all given ones must hold; default: exact equality):\n";

enum { OPT_MAX_DIFF = 256, OPT_MAX_PIXELS, OPT_MAX_RATIO, OPT_MIN_PSNR, OPT_MIN_SSIM, OPT_FUZZ,
       OPT_IGNORE, OPT_DIFF, OPT_JSON, OPT_JUNIT, OPT_UPDATE, OPT_THREADS, OPT_MAX_FLIP,
       OPT_METRIC, OPT_PPD, OPT_VIEWING, OPT_HTML, OPT_HTML_FRAMES };

/* The options that do not change what --update does (command_lines). */
#define ROW_REPORT 1u

const cli_row cli_compare_rows[] = {
	{"max-diff", 0, 1, OPT_MAX_DIFF,
	 "      --max-diff N     largest channel difference allowed, 0..255\n",
	 0},
	{"max-pixels", 0, 1, OPT_MAX_PIXELS,
	 "      --max-pixels N   number of differing pixels allowed (see --fuzz)\n",
	 0},
	{"max-ratio", 0, 1, OPT_MAX_RATIO,
	 "      --max-ratio R    fraction of differing pixels allowed, 0..1 or a percentage (0.5%)\n",
	 0},
	{"min-psnr", 0, 1, OPT_MIN_PSNR,
	 "      --min-psnr DB    lowest PSNR allowed, in dB\n",
	 0},
	{"min-ssim", 0, 1, OPT_MIN_SSIM,
	 "      --min-ssim S     lowest SSIM allowed, -1..1\n",
	 0},
	{"max-flip", 0, 1, OPT_MAX_FLIP,
	 "      --max-flip X     highest mean FLIP allowed, 0..1 (measures FLIP)\n",
	 0},
	{"fuzz", 0, 1, OPT_FUZZ,
	 "      --fuzz N         a pixel differs when some channel differs by more than N,\n"
	 "                       0..255 or a percentage of 255 (default 0)\n",
	 0},
	{"ignore", 0, 1, OPT_IGNORE,
	 "      --ignore X,Y,W,H leave out a rectangle (repeatable); needs pixels on both sides\n",
	 0},
	{"metric", 0, 1, OPT_METRIC,
	 "\n"
	 "      --metric flip    also measure LDR-FLIP (NVIDIA, Andersson et al. 2020), the mean\n"
	 "                       perceptual error in 0..1 (max-diff, pixels, ratio, PSNR and SSIM\n"
	 "                       are always measured)\n",
	 0},
	{"ppd", 0, 1, OPT_PPD,
	 "      --ppd N          FLIP's pixels per degree of visual angle (default 67.02: 0.7 m\n"
	 "                       from a 0.7 m wide display 3840 pixels across)\n",
	 0},
	{"viewing-conditions", 0, 1, OPT_VIEWING,
	 "      --viewing-conditions D,W,PX\n"
	 "                       FLIP's pixels per degree from the viewing distance D and display\n"
	 "                       width W in metres and its width PX in pixels, as NVIDIA's tool\n",
	 0},
	{"diff", 0, 1, OPT_DIFF,
	 "\n"
	 "Reports:\n"
	 "      --diff DIR       for each failing frame, DIR/diff-NNNNNN.png: left, A faded to\n"
	 "                       grey with pixels over --fuzz in red and smaller differences in\n"
	 "                       orange; right, a heat map of the difference (white = the frame's\n"
	 "                       max-diff)\n",
	 ROW_REPORT},
	{"json", 0, 1, OPT_JSON,
	 "      --json FILE      per-frame metrics and the changed rectangle (\"format\":\n"
	 "                       \"tidepool-compare/1\"; psnr null means identical)\n",
	 ROW_REPORT},
	{"junit", 0, 1, OPT_JUNIT,
	 "      --junit FILE     JUnit XML, one test case per frame\n",
	 ROW_REPORT},
	{"html", 0, 1, OPT_HTML,
	 "      --html FILE      one self-contained HTML page to look at the differences: verdict,\n"
	 "                       charts, a sortable frame table, and reference, test, difference\n"
	 "                       (and FLIP map) of the worst failing frames side by side, as a\n"
	 "                       slider or blinking, zoomable to the pixel (docs/compare.md)\n",
	 ROW_REPORT},
	{"html-frames", 0, 1, OPT_HTML_FRAMES,
	 "      --html-frames N  failing frames with pictures in the HTML report (default 12;\n"
	 "                       the worst first); frames over 960x540 are cropped around the\n"
	 "                       changed rectangle\n",
	 ROW_REPORT},
	{"quiet", 'q', 0, 'q',
	 "  -q, --quiet          no summary on standard error\n",
	 ROW_REPORT},
	{"update", 0, 0, OPT_UPDATE,
	 "\n"
	 "      --update         make A match B: rewrite the frames of A (PNGs or manifest) that\n"
	 "                       differ beyond tolerance, and only those, then list them; creates A\n"
	 "                       (a .manifest, a .png or a %d pattern) when it does not exist\n",
	 ROW_REPORT},
	{"threads", 0, 1, OPT_THREADS,
	 "      --threads N      worker threads; 0 or absent: all cores; results are identical\n"
	 "                       for every N\n",
	 ROW_REPORT},
	{"help", 'h', 0, 'h',
	 "  -h, --help           show this help\n",
	 0},
	{0},
};

/* After the options (C11 promises string literals of 4095 characters only). */
static const char tail[] =
	"\n"
	"Metrics, over the N pixels compared (outside --ignore), with d(p,c) = |A(p,c) - B(p,c)|\n"
	"the difference of channel c (R, G, B; 8 bits) at pixel p:\n"
	"  max-diff = max over p, c of d(p,c)\n"
	"  pixels   = number of p with max over c of d(p,c) > fuzz. This is ImageMagick 6's\n"
	"             'compare -metric AE -fuzz F%' with F = 100 fuzz / 255: IM 6.9 also counts a\n"
	"             pixel when any one channel differs by more than the fuzz distance (it is\n"
	"             not a colour-space distance there), so both give the same count.\n"
	"  ratio    = pixels / N\n"
	"  MSE      = sum over p, c of d(p,c)^2 / (3 N)      (pooled over R, G, B)\n"
	"  PSNR     = 10 log10(255^2 / MSE) dB; infinite when MSE = 0. Same as ImageMagick's\n"
	"             'compare -metric PSNR'.\n"
	"  SSIM     = mean of the SSIM maps of R, G and B (Wang, Bovik, Sheikh, Simoncelli 2004):\n"
	"             per window SSIM = (2 ma mb + C1)(2 sab + C2) / ((ma^2 + mb^2 + C1)\n"
	"             (sa^2 + sb^2 + C2)), an 11x11 Gaussian window with sigma 1.5, C1 = (0.01 L)^2,\n"
	"             C2 = (0.03 L)^2, L = 255, over every window wholly inside the frame; a frame\n"
	"             under 11 pixels wide or high is one window with equal weights. Computed\n"
	"             in single precision: within about 1e-5 of a double-precision evaluation.\n"
	"  FLIP     = mean over the N pixels of LDR-FLIP (Andersson, Nilsson, Akenine-Moller,\n"
	"             Oskarsson, Astrom, Fairchild 2020): colour differences (HyAB in\n"
	"             Hunt-adjusted L*a*b* after contrast-sensitivity filtering in YCxCz)\n"
	"             raised to 1 - the edge and point feature difference; 0 equal .. 1.\n"
	"             Matches NVIDIA's flip tool (v1.6) to 1e-6 on tidepool frames.\n"
	"Frames equal pixel for pixel (or by hash) pass at once: max-diff 0, PSNR infinite,\n"
	"SSIM 1. When one side is a manifest, only hashes can be compared: a differing hash\n"
	"fails whatever the tolerances.\n"
	"\n"
	"Exit status: 0 every frame within tolerance (or --update fixed every difference),\n"
	"1 a difference beyond tolerance, a frame-count or size mismatch, 2 usage error,\n"
	"3 missing or unreadable input, 4 cannot write a report, 130 interrupted.\n";

typedef struct compare_opts {
	cmp_config cfg;
	cmp_rect ignore[MAX_IGNORE];
	const char *json, *junit, *html;
	int html_frames;
	int flip, ppd_set;
	int quiet;
	long threads;
} compare_opts;

/* "0.5%" -> 0.005 when pct_scale = 0.01; plain numbers as they are. */
static int parse_amount(const char *s, double pct_scale, double *out)
{
	char buf[64];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n + 1);
	double scale = 1;
	if (buf[n - 1] == '%') {
		buf[n - 1] = 0;
		scale = pct_scale;
	}
	if (tp_parse_double(buf, out))
		return -1;
	*out *= scale;
	return 0;
}

static int parse_rect(const char *s, cmp_rect *r)
{
	long v[4];
	char buf[128];
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	char *save = NULL, *tok = strtok_r(buf, ",", &save);
	for (int i = 0; i < 4; i++) {
		if (!tok || tp_parse_int(tok, i < 2 ? 0 : 1, 1 << 20, &v[i]))
			return -1;
		tok = strtok_r(NULL, ",", &save);
	}
	if (tok)
		return -1;
	*r = (cmp_rect){ (int)v[0], (int)v[1], (int)v[2], (int)v[3] };
	return 0;
}

/* "D,W,PX": three numbers. */
static int parse_triple(const char *s, double v[3])
{
	char buf[128];
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	char *save = NULL, *tok = strtok_r(buf, ",", &save);
	for (int i = 0; i < 3; i++) {
		if (!tok || tp_parse_double(tok, &v[i]))
			return -1;
		tok = strtok_r(NULL, ",", &save);
	}
	return tok ? -1 : 0;
}

/* One option's value into o (cli_rows.handle). */
static int handle(void *ctx, const cli_row *row, const char *arg)
{
	compare_opts *o = ctx;
	cmp_tolerance *t = &o->cfg.tol;
	long v;
	double d;
	switch (row->id) {
	case 'q': o->quiet = 1; break;
	case OPT_MAX_DIFF:
		if (tp_parse_int(arg, 0, 255, &v))
			return tp_cli_usage("compare", "--max-diff: expected 0..255 (got '%s')", arg);
		t->max_diff = (int)v;
		t->checks |= CMP_CHECK_MAX_DIFF;
		break;
	case OPT_MAX_PIXELS:
		if (tp_parse_int(arg, 0, (long)1 << 40, &v))
			return tp_cli_usage("compare", "--max-pixels: expected a whole number >= 0 (got '%s')",
					    arg);
		t->max_pixels = v;
		t->checks |= CMP_CHECK_MAX_PIXELS;
		break;
	case OPT_MAX_RATIO:
		if (parse_amount(arg, 0.01, &d) || d < 0 || d > 1)
			return tp_cli_usage("compare", "--max-ratio: expected 0..1 or 0%%..100%% (got '%s')",
					    arg);
		t->max_ratio = d;
		t->checks |= CMP_CHECK_MAX_RATIO;
		break;
	case OPT_MIN_PSNR:
		if (tp_parse_double(arg, &d) || d < 0)
			return tp_cli_usage("compare", "--min-psnr: expected decibels >= 0 (got '%s')", arg);
		t->min_psnr = d;
		t->checks |= CMP_CHECK_MIN_PSNR;
		break;
	case OPT_MIN_SSIM:
		if (tp_parse_double(arg, &d) || d < -1 || d > 1)
			return tp_cli_usage("compare", "--min-ssim: expected -1..1 (got '%s')", arg);
		t->min_ssim = d;
		t->checks |= CMP_CHECK_MIN_SSIM;
		break;
	case OPT_MAX_FLIP:
		if (tp_parse_double(arg, &d) || d < 0 || d > 1)
			return tp_cli_usage("compare", "--max-flip: expected 0..1 (got '%s')", arg);
		t->max_flip = d;
		t->checks |= CMP_CHECK_MAX_FLIP;
		o->flip = 1;
		break;
	case OPT_METRIC:
		if (strcmp(arg, "flip"))
			return tp_cli_usage("compare", "--metric: expected flip (max-diff, pixels, ratio, psnr "
					    "and ssim are always measured) (got '%s')", arg);
		o->flip = 1;
		break;
	case OPT_PPD:
		if (tp_parse_double(arg, &d) || !(d > 0) || d > CMP_FLIP_PPD_MAX)
			return tp_cli_usage("compare", "--ppd: expected pixels per degree, 0 < N <= %g (got '%s')",
					    CMP_FLIP_PPD_MAX, arg);
		o->cfg.flip_ppd = d;
		o->ppd_set = 1;
		break;
	case OPT_VIEWING: {
		double vc[3];
		if (parse_triple(arg, vc) || !(vc[0] > 0) || !(vc[1] > 0) || !(vc[2] >= 1) ||
		    !(cmp_flip_ppd(vc[0], vc[1], vc[2]) <= CMP_FLIP_PPD_MAX))
			return tp_cli_usage("compare", "--viewing-conditions: expected DISTANCE,WIDTH,PIXELS (metres, "
					    "metres, pixels; all > 0, at most %g pixels per degree) (got '%s')",
					    CMP_FLIP_PPD_MAX, arg);
		o->cfg.flip_ppd = cmp_flip_ppd(vc[0], vc[1], vc[2]);
		o->ppd_set = 1;
		break;
	}
	case OPT_HTML: o->html = arg; break;
	case OPT_HTML_FRAMES:
		if (tp_parse_int(arg, 0, 1000, &v))
			return tp_cli_usage("compare", "--html-frames: expected 0..1000 (got '%s')", arg);
		o->html_frames = (int)v;
		break;
	case OPT_FUZZ:
		/* A percentage is of 255, as ImageMagick's -fuzz is of the quantum range. */
		if (parse_amount(arg, 2.55, &d) || d < 0 || d > 255)
			return tp_cli_usage("compare", "--fuzz: expected 0..255 or 0%%..100%% (got '%s')", arg);
		/* Counting is "d > fuzz" on whole numbers: d > 12.75 is d > 12. */
		t->fuzz = (int)floor(d);
		break;
	case OPT_IGNORE:
		if (o->cfg.n_ignore == MAX_IGNORE)
			return tp_cli_usage("compare", "--ignore: at most %d rectangles", MAX_IGNORE);
		if (parse_rect(arg, &o->ignore[o->cfg.n_ignore]))
			return tp_cli_usage("compare", "--ignore: expected X,Y,W,H with W, H >= 1 (got '%s')",
					    arg);
		o->cfg.n_ignore++;
		break;
	case OPT_DIFF: o->cfg.diff_dir = arg; break;
	case OPT_JSON: o->json = arg; break;
	case OPT_JUNIT: o->junit = arg; break;
	case OPT_UPDATE: o->cfg.update = 1; break;
	case OPT_THREADS:
		if (tp_parse_int(arg, 0, 1024, &o->threads))
			return tp_cli_usage("compare", "--threads: expected 0..1024 (got '%s')", arg);
		break;
	}
	return 0;
}

static int parse_args(int argc, char **argv, compare_opts *o)
{
	const cli_rows opts = {.cmd = "compare", .head = head, .rows = cli_compare_rows, .tail = tail,
			       .handle = handle, .ctx = o};
	int at, rc = cli_rows_parse(&opts, argc, argv, &at);
	if (rc)
		return rc;
	if (o->ppd_set && !o->flip)
		return tp_cli_usage("compare", "--ppd and --viewing-conditions need --metric flip or --max-flip");
	if (o->flip && !o->ppd_set)
		o->cfg.flip_ppd = CMP_FLIP_PPD_DEFAULT;
	if (!o->flip)
		o->cfg.flip_ppd = 0;
	if (argc - at < 2)
		return tp_cli_usage("compare", "expected two inputs, A and B");
	if (argc - at > 2)
		return tp_cli_usage("compare", "expected two inputs, A and B (got '%s' too)", argv[at + 2]);
	o->cfg.a = argv[at];
	o->cfg.b = argv[at + 1];
	return 0;
}

/* Is the option word w (--name, --name=VALUE, -q) one that does not change what --update
 * does (the reports, --threads, --update itself)? getopt_long takes unique prefixes, so a
 * prefix of one of these names is one of them. *takes_next: its value is the next word. */
static int report_option(const char *w, int *takes_next)
{
	*takes_next = 0;
	if (!strcmp(w, "-q"))
		return 1;
	if (strncmp(w, "--", 2) || !w[2])
		return 0;
	const char *eq = strchr(w + 2, '=');
	size_t n = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
	for (const cli_row *r = cli_compare_rows; n && r->name; r++) {
		if ((r->tags & ROW_REPORT) && !strncmp(w + 2, r->name, n)) {
			*takes_next = r->value && !eq;
			return 1;
		}
	}
	return 0;
}

/* The command line as run, and the one that would make A match B: the same inputs and
 * tolerances with --update instead of the reports (argv as given, before getopt
 * permutes it). */
static void command_lines(int argc, char **argv, tp_line *run, tp_line *accept)
{
	tp_line_word(run, "tidepool");
	tp_line_word(accept, "tidepool");
	int opts = 1;
	for (int i = 0; i < argc; i++) {
		tp_line_word(run, argv[i]);
		int next = 0;
		if (i > 0 && opts && !strcmp(argv[i], "--")) {
			opts = 0;
			tp_line_word(accept, "--update"); /* an option: before the "--" */
		} else if (i > 0 && opts && report_option(argv[i], &next)) {
			if (next && i + 1 < argc)
				tp_line_word(run, argv[++i]);
			continue;
		}
		tp_line_word(accept, argv[i]);
	}
	if (opts)
		tp_line_word(accept, "--update");
}

int cmd_compare(int argc, char **argv)
{
	compare_opts o;
	memset(&o, 0, sizeof o);
	o.cfg.ignore = o.ignore;
	o.cfg.png_level = -1;
	o.html_frames = CMP_HTML_FRAMES;
	tp_line run_line = {0}, accept_line = {0};
	command_lines(argc, argv, &run_line, &accept_line);
	int prc = parse_args(argc, argv, &o);
	if (prc) {
		free(run_line.s);
		free(accept_line.s);
		return prc == 1 ? TP_EXIT_OK : prc;
	}
	o.cfg.threads = tp_cli_threads((int)o.threads);
	tp_cli_catch_signals();
	o.cfg.stop = &tp_cli_interrupted;

	tp_err err = { "" };
	cmp_result res;
	time_t now = time(NULL);
	struct tm tm;
	char started[32] = "";
	if (localtime_r(&now, &tm))
		strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%S", &tm);
	/* The date in UTC; SOURCE_DATE_EPOCH (reproducible-builds.org) when set. */
	char date[32] = "";
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	time_t when = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : now;
	if (gmtime_r(&when, &tm))
		strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* The inputs' fingerprints before --update can change A. */
	char sha_a[65] = "", sha_b[65] = "";
	tp_err herr;
	if (o.json || o.html) {
		cmp_input_sha256(o.cfg.a, sha_a, &herr);
		cmp_input_sha256(o.cfg.b, sha_b, &herr);
	}
	double t0 = tp_now();
	int rc = cmp_run(&o.cfg, &res, &err);
	snprintf(res.started, sizeof res.started, "%s", started);
	snprintf(res.date, sizeof res.date, "%s", date);
	memcpy(res.sha_a, sha_a, sizeof sha_a);
	memcpy(res.sha_b, sha_b, sizeof sha_b);
	res.command = run_line.oom ? NULL : run_line.s;
	if (!o.cfg.update && res.failed > 0 && !accept_line.oom) {
		if (!strcmp(res.kind_a, "video"))
			res.accept_note =
				"A is a video: --update rewrites PNG frames and manifests only, "
				"so render the new reference frames as PNGs or a manifest";
		else
			res.accept = accept_line.s;
	}
	res.seconds = tp_now() - t0;
	if (rc < 0 && rc != TP_EDIFF) {
		/* Nothing (or not everything) could be compared: the reports still say why, so
		 * that a CI server shows the cause rather than "no test results". */
		snprintf(res.error, sizeof res.error, "%.*s", (int)sizeof res.error - 1, err.msg);
		free(res.frames);
		res.frames = NULL;
		res.n = res.failed = res.compared = 0;
		res.passed = 0;
		tp_err werr;
		if (o.json && cmp_report_json(o.json, &o.cfg, &res, &werr) < 0)
			fprintf(stderr, "tidepool: %s\n", werr.msg);
		if (o.junit && cmp_report_junit(o.junit, &o.cfg, &res, &werr) < 0)
			fprintf(stderr, "tidepool: %s\n", werr.msg);
		if (o.html && cmp_report_html(o.html, &o.cfg, &res, o.html_frames, &werr) < 0)
			fprintf(stderr, "tidepool: %s\n", werr.msg);
		cmp_result_free(&res);
		free(run_line.s);
		free(accept_line.s);
		if (rc == TP_EUSAGE)
			return tp_cli_usage("compare", "%s", err.msg);
		return tp_cli_fail(rc, &err);
	}
	if (!o.quiet)
		cmp_report_summary(stderr, &o.cfg, &res);
	int wrc = 0;
	if (o.json)
		wrc = cmp_report_json(o.json, &o.cfg, &res, &err);
	if (wrc == 0 && o.junit)
		wrc = cmp_report_junit(o.junit, &o.cfg, &res, &err);
	if (wrc == 0 && o.html)
		wrc = cmp_report_html(o.html, &o.cfg, &res, o.html_frames, &err);
	cmp_result_free(&res);
	free(run_line.s);
	free(accept_line.s);
	if (wrc < 0)
		return tp_cli_fail(wrc, &err);
	return tp_exit_code(rc);
}
