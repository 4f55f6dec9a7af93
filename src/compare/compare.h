/*
 * compare.h - regression comparison of frames: metrics, frame sources, the comparison run
 * and its reports (`tidepool compare`).
 *
 * Pixels are compared as 8-bit RGB (tp_png_read's conversion; MP4s are decoded to rgb24).
 * Per frame, exact equality is checked first; only frames that differ get metrics:
 *
 *   d(p,c)   = |A(p,c) - B(p,c)|                  channel difference, 0..255
 *   max_diff = max over pixels p and channels c of d(p,c)
 *   pixels   = #{ p : max_c d(p,c) > fuzz }       ImageMagick 6 "AE" with -fuzz fuzz/255
 *   ratio    = pixels / N                          N = pixels compared (outside --ignore)
 *   MSE      = sum_p sum_c d(p,c)^2 / (3 N)        pooled over R, G and B
 *   PSNR     = 10 log10(255^2 / MSE) dB            +inf when MSE = 0 (ImageMagick's PSNR)
 *   SSIM     = mean over R, G, B of the mean SSIM map (Wang et al. 2004): 11x11 Gaussian
 *              window, sigma 1.5, K1 = 0.01, K2 = 0.03, L = 255, windows wholly inside the
 *              image; an image narrower or shorter than 11 pixels uses one window covering
 *              the whole image with equal weights. The map is computed in single
 *              precision about mid-grey (a - 128) and agrees with a double-precision
 *              evaluation to about 1e-5.
 *
 * Every reduction runs over fixed 16-row chunks combined in order, so results are
 * identical for any thread count. Library functions return 0 or a negative TP_E* code and
 * fill a tp_err; the report writers write only to the streams and files they are given.
 */
#ifndef TP_COMPARE_COMPARE_H
#define TP_COMPARE_COMPARE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "encode/hash.h"
#include "exitstatus.h"
#include "util/error.h"
#include "util/image.h"

#define CMP_JSON_FORMAT "tidepool-compare/1"
#define CMP_SSIM_WIN 11

typedef struct cmp_rect {
	int x, y, w, h;
} cmp_rect;

/* ---- metrics.c ---------------------------------------------------------------------- */

typedef struct cmp_metrics {
	int max_diff;      /* 0..255 */
	int64_t pixels;    /* pixels whose largest channel difference exceeds fuzz */
	int64_t compared;  /* N: pixels outside the ignored regions */
	double ratio;      /* pixels / N (0 when N = 0) */
	uint64_t sse;      /* sum of squared channel differences */
	double mse;        /* sse / (3 N) */
	double psnr;       /* dB; INFINITY when sse = 0 */
	double ssim;       /* 1 for identical images; NAN when not computed */
	double flip;       /* mean LDR-FLIP (flip.c), 0 for identical images; NAN when not asked for */
	cmp_rect bbox;     /* smallest rectangle holding every pixel that differs at all;
			    * w = h = 0 when none does */
} cmp_metrics;

/* Work space for the metrics of w x h frames: chunk partial sums and SSIM rows for up to
 * `threads` threads. Created once per comparison, so per-frame metrics never allocate. */
typedef struct cmp_scratch cmp_scratch;
int cmp_scratch_create(int w, int h, int threads, cmp_scratch **out, tp_err *err);
void cmp_scratch_destroy(cmp_scratch *s);

/* Number of pixels of a w x h frame outside the union of the rectangles (clipped). */
int64_t cmp_unmasked_pixels(int w, int h, const cmp_rect *r, int n);
/* Copies src's pixels inside the rectangles into dst (same size, RGB8), so that ignored
 * regions compare equal under every metric. */
void cmp_mask_copy(const tp_image *src, tp_image *dst, const cmp_rect *r, int n);
/* 1 when the two RGB8 images of the same size have the same pixels. */
int cmp_equal(const tp_image *a, const tp_image *b);
/* Everything but SSIM. a and b are RGB8 of the same size; compared = N (see above).
 * Uses up to `threads` threads (1 when called from a parallel region). */
void cmp_metrics_basic(const tp_image *a, const tp_image *b, int fuzz, int64_t compared,
		       cmp_scratch *s, int threads, cmp_metrics *m);
/* Mean SSIM as defined above. `change` bounds where a and b differ (m->bbox): windows
 * wholly outside it are identical and score exactly 1 without being computed. */
double cmp_ssim(const tp_image *a, const tp_image *b, const cmp_rect *change, cmp_scratch *s,
		int threads);

/* ---- flip.c ------------------------------------------------------------------------- */

/* LDR-FLIP (Andersson et al. 2020; the pipeline is described at the top of flip.c): the
 * mean over the pixels compared of a per-pixel error in [0, 1], 0 for equal frames. The
 * default viewing condition is NVIDIA's: 0.7 m from a 0.7 m wide 3840-pixel display,
 * 67.02 pixels per degree (0.7 m x 3840 px / 0.7 m x pi / 180). */
#define CMP_FLIP_PPD_DEFAULT 67.02064327658226 /* 3840 pi / 180 */
#define CMP_FLIP_PPD_MAX 1000.0
typedef struct cmp_flip cmp_flip;
/* Pixels per degree when a display width_px pixels and width metres wide is seen from
 * distance metres (the small-angle formula of NVIDIA's tool). */
double cmp_flip_ppd(double distance, double width, double width_px);
/* Work space for w x h frames at ppd pixels per degree, for up to `threads` threads.
 * TP_EUSAGE for a ppd outside (0, CMP_FLIP_PPD_MAX]. */
int cmp_flip_create(int w, int h, double ppd, int threads, cmp_flip **out, tp_err *err);
void cmp_flip_destroy(cmp_flip *f);
/* Mean FLIP of b (test) against a (reference), RGB8 of the flip's size. `change` bounds
 * where they differ (NULL: anywhere); pixels in the ignored rectangles count 0, and the
 * mean divides by `compared`. The error map stays readable through cmp_flip_map. */
double cmp_flip_frame(cmp_flip *f, const tp_image *a, const tp_image *b, const cmp_rect *change,
		      const cmp_rect *ignore, int n_ignore, int64_t compared, int threads);
const float *cmp_flip_map(const cmp_flip *f);
/* The magma colour of an error v in [0, 1] (NVIDIA's tool shows its maps so): entry
 * cmp_flip_magma_index(v) (0..255) of the 256-entry table cmp_flip_magma_table. */
void cmp_flip_magma(float v, uint8_t rgb[3]);
int cmp_flip_magma_index(float v);
extern const uint8_t cmp_flip_magma_table[256][3];

/* ---- sources.c ---------------------------------------------------------------------- */

typedef enum cmp_kind {
	CMP_SRC_PNG,      /* one PNG file: one frame */
	CMP_SRC_PNGSEQ,   /* a directory of *.png, a printf pattern ("f%04d.png"), or a glob */
	CMP_SRC_MP4,      /* a video file, decoded in order */
	CMP_SRC_MANIFEST, /* a frame-hash manifest (encode/hash.h) */
} cmp_kind;

typedef struct cmp_source cmp_source;

/* Opens spec, deciding its kind by what it is (directory, pattern, file contents).
 * TP_EIO: missing or unreadable; TP_EINPUT: not a PNG, video or manifest, or no frames. */
int cmp_source_open(const char *spec, cmp_source **out, tp_err *err);
/* An empty source of the kind spec's name implies (.manifest/.tpmanifest, .png, a printf
 * pattern): the golden side of `compare --update` before it exists. */
int cmp_source_create_empty(const char *spec, cmp_source **out, tp_err *err);
void cmp_source_close(cmp_source *s);
cmp_kind cmp_source_kind(const cmp_source *s);
const char *cmp_source_kind_name(const cmp_source *s);
const char *cmp_source_spec(const cmp_source *s);
int cmp_source_frames(const cmp_source *s);
/* Frame size when it is known up front (MP4, manifest), else 0. */
void cmp_source_size(const cmp_source *s, int *w, int *h);
/* 1 when frames can be read in any order from any thread (PNGs, manifests). */
int cmp_source_random_access(const cmp_source *s);
/* What a frame is called in messages: its file, or "SPEC#i". */
void cmp_source_frame_name(const cmp_source *s, int i, char *buf, size_t n);
/* Reads frame i into *img as `fmt` (PNG: TP_RGB8, TP_RGBA8, TP_GRAY8, TP_GRAY16 or
 * TP_RGB16; MP4: TP_RGB8 only). *img is reused when its size and format match, else
 * freed and reallocated. MP4 frames must be read in order 0, 1, 2, ... */
int cmp_source_read(cmp_source *s, int i, tp_pixfmt fmt, tp_image *img, tp_err *err);
/* Manifests: frame i's hash, the header's algorithm and pixel format. */
const char *cmp_source_hash(const cmp_source *s, int i);
const char *cmp_source_hash_algo(const cmp_source *s);
tp_pixfmt cmp_source_hash_fmt(const cmp_source *s);
/* --update: the path frame i of a PNG source is stored under, or -1 when the source
 * cannot name it (a directory or glob has no file for a new frame). */
int cmp_source_frame_path(const cmp_source *s, int i, char *buf, size_t n);

/* ---- run.c -------------------------------------------------------------------------- */

enum {
	CMP_CHECK_MAX_DIFF = 1u << 0,
	CMP_CHECK_MAX_PIXELS = 1u << 1,
	CMP_CHECK_MAX_RATIO = 1u << 2,
	CMP_CHECK_MIN_PSNR = 1u << 3,
	CMP_CHECK_MIN_SSIM = 1u << 4,
	CMP_CHECK_MAX_FLIP = 1u << 5,
};

typedef struct cmp_tolerance {
	unsigned checks;     /* CMP_CHECK_* that apply (all must hold); 0 = exact equality */
	int max_diff;
	int64_t max_pixels;
	double max_ratio;
	double min_psnr;
	double min_ssim;
	double max_flip;
	int fuzz;            /* 0..255: the channel difference a pixel must exceed to count */
} cmp_tolerance;

typedef struct cmp_config {
	const char *a, *b;        /* A: the reference (golden), B: the frames under test */
	cmp_tolerance tol;
	const cmp_rect *ignore;
	int n_ignore;
	int threads;              /* >= 1 */
	int update;               /* rewrite A's differing frames from B */
	const char *diff_dir;     /* diff images for failing frames, or NULL */
	int png_level;            /* zlib level of diff images and updated frames */
	volatile sig_atomic_t *stop; /* set asynchronously (Ctrl-C): stop early, or NULL */
	double flip_ppd;          /* > 0: measure FLIP at this many pixels per degree */
} cmp_config;

typedef enum cmp_status {
	CMP_IDENTICAL,  /* exact match (pixels or hash) */
	CMP_WITHIN,     /* differs, within tolerance */
	CMP_FAIL,       /* differs beyond tolerance */
	CMP_HASH,       /* hashes differ and one side has no pixels to measure */
	CMP_SIZE,       /* sizes (or manifest pixel formats) differ */
	CMP_MISSING,    /* one side has no frame with this index */
	CMP_ERROR,      /* the frame could not be read */
} cmp_status;

typedef struct cmp_frame {
	int index;
	cmp_status status;
	int wa, ha, wb, hb;  /* sizes seen (0 when unknown) */
	cmp_metrics m;       /* valid for CMP_WITHIN and CMP_FAIL */
	unsigned failed;     /* CMP_CHECK_* that did not hold */
	int updated;         /* --update rewrote this frame of A */
	char detail[160];    /* what differs for SIZE, MISSING, HASH and ERROR frames */
	char hash_b[ENC_HASH_HEX_MAX]; /* B's hash in A's manifest format (A a manifest) */
} cmp_frame;

typedef struct cmp_result {
	int frames_a, frames_b;
	int n;                 /* frames reported: max(frames_a, frames_b) */
	cmp_frame *frames;     /* n entries, by index */
	int compared;          /* frames present on both sides */
	int failed;            /* frames that are not IDENTICAL or WITHIN */
	int worst;             /* index of the worst failing frame, -1 if none */
	int updated;           /* frames rewritten by --update */
	int passed;            /* the run's verdict: cmp_run() returned 0 */
	char kind_a[16], kind_b[16];
	char note[512];        /* why the inputs as a whole differ (count, format), or "" */
	/* Set by the caller for the reports: */
	char error[512];       /* why nothing could be compared (an input error), or "" */
	char started[32];      /* local time the comparison began, ISO 8601 ("" = unknown) */
	double seconds;        /* how long it took (JUnit's time) */
	/* Where the reports came from (the JSON's "made", the page's header): */
	char date[32];             /* UTC, ISO 8601 with Z (SOURCE_DATE_EPOCH when set), or "" */
	char sha_a[65], sha_b[65]; /* cmp_input_sha256 of A and B before the run, or "" */
	const char *command;       /* the command line, shell-quoted, or NULL */
	const char *accept;        /* the command that makes A match B (--update), or NULL */
	const char *accept_note;   /* why there is no such command (A is a video), or NULL */
} cmp_result;

/* Compares cfg->a with cfg->b. Returns 0 when every frame is within tolerance, TP_EDIFF
 * when not (res says why), TP_EINPUT/TP_EIO when an input is missing or unreadable, or
 * TP_EUSAGE for a combination that cannot work (--ignore with a manifest, --update of an
 * MP4), or TP_EINTR when cfg->stop was set. res is filled whenever the inputs could be opened; free it with cmp_result_free. */
int cmp_run(const cmp_config *cfg, cmp_result *res, tp_err *err);
void cmp_result_free(cmp_result *res);
const char *cmp_status_name(cmp_status s);
/* "max-diff 12 > 0, psnr 31.4 < 40" for a failing frame. */
void cmp_frame_reasons(const cmp_frame *f, const cmp_tolerance *tol, char *buf, size_t n);

/* ---- report.c ----------------------------------------------------------------------- */

/* Human summary: frames compared, each failing frame with its metrics, the worst one. */
void cmp_report_summary(FILE *out, const cmp_config *cfg, const cmp_result *res);
/* Machine reports, written atomically. */
int cmp_report_json(const char *path, const cmp_config *cfg, const cmp_result *res, tp_err *err);
/* The same JSON to a stream (the HTML report embeds it). */
void cmp_report_json_write(FILE *f, const cmp_config *cfg, const cmp_result *res);
/* An input's fingerprint: SHA-256 (lower-case hex) of its files' bytes, the frames' files
 * in frame order for PNGs, else the one file. TP_EIO/TP_EINPUT as cmp_source_open. */
int cmp_input_sha256(const char *spec, char hex[65], tp_err *err);
/* s as a JSON string; in_script: also safe inside an HTML <script> ('<' and every control
 * character as \uXXXX). */
void cmp_json_string(FILE *f, const char *s, int in_script);
int cmp_report_junit(const char *path, const cmp_config *cfg, const cmp_result *res, tp_err *err);
/* The diff image of one frame: left, reference A faded to light grey with pixels over
 * fuzz in red and smaller differences in orange; right, a heat map of max_c d(p,c)
 * scaled so the frame's max_diff is white. `work` is a caller-owned RGB8 image, reused. */
int cmp_report_diff_image(const char *path, const tp_image *a, const tp_image *b, int fuzz,
			  int max_diff, tp_image *work, int level, tp_err *err);

/* ---- report_html.c ------------------------------------------------------------------ */

#define CMP_HTML_FRAMES 12  /* failing frames with pictures, by default (--html-frames) */
#define CMP_HTML_MAX_W 960  /* larger frames are cropped around the changed rectangle */
#define CMP_HTML_MAX_H 540
/* One self-contained HTML page (pictures inlined as data: URIs), written atomically: the
 * verdict, tolerances, charts, the frame table, and pictures of the worst max_frames
 * failing frames, read again from cfg->a and cfg->b. Written for every outcome: with
 * res->error set it says what failed. A picture that cannot be made is reported in the
 * page, not as an error; TP_EIO only when the file cannot be written. */
int cmp_report_html(const char *path, const cmp_config *cfg, const cmp_result *res, int max_frames,
		    tp_err *err);

#endif
