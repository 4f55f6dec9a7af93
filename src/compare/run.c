/* run.c - one comparison: opens both sides, matches frames by index, checks exact
 * equality first, measures the frames that differ, applies the tolerances, writes diff
 * images and (with --update) the new golden frames. */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare/compare.h"
#include "encode/hash.h"
#include "util/png.h"
#include "util/fsutil.h"

/* What one thread needs to compare a frame; nothing here is shared between threads. */
typedef struct worker {
	tp_image a, b, work;
	cmp_scratch *scratch;
	int sw, sh;          /* size scratch was made for */
	cmp_flip *flip;      /* FLIP work space (cfg->flip_ppd > 0), the same size */
	enc_hasher *hasher;  /* manifest comparisons */
	int err_index;       /* lowest frame index that failed to read, or -1 */
	int err_code;
	tp_err err;
} worker;

typedef struct run {
	const cmp_config *cfg;
	cmp_source *a, *b;
	cmp_result *res;
	int a_created;       /* A did not exist: --update creates it */
	int hash_mode;       /* one side is a manifest */
	int fmt_mismatch;    /* hashes cannot match at all (pixel format or algorithm) */
	tp_pixfmt hash_fmt;  /* pixel format frames are hashed in */
	const char *algo;
	/* frames compared in parallel share CMP_DECODE_BUDGET bytes of decoded pictures */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t decoded;
} run;

/* Decoded pictures of frames compared in parallel, in all (docs/limits.md: 512 MB for
 * any input under 1 MB at any --threads; a pair at the pixel limit is 402 MB and runs
 * alone). */
#define CMP_DECODE_BUDGET ((size_t)440 << 20)

const char *cmp_status_name(cmp_status s)
{
	static const char *const names[] = { "identical", "within", "fail", "hash-differs",
					     "size-differs", "missing", "unreadable" };
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

void cmp_frame_reasons(const cmp_frame *f, const cmp_tolerance *tol, char *buf, size_t n)
{
	buf[0] = 0;
	if (f->status != CMP_FAIL) {
		snprintf(buf, n, "%s", f->detail[0] ? f->detail : cmp_status_name(f->status));
		return;
	}
	size_t len = 0;
#define ADD(...) \
	do { \
		if (len < n) \
			len += (size_t)snprintf(buf + len, n - len, "%s", len ? ", " : ""); \
		if (len < n) \
			len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__); \
	} while (0)
	int max_diff = tol->checks ? tol->max_diff : 0;
	if (f->failed & CMP_CHECK_MAX_DIFF)
		ADD("max-diff %d > %d", f->m.max_diff, max_diff);
	if (f->failed & CMP_CHECK_MAX_PIXELS)
		ADD("pixels %lld > %lld", (long long)f->m.pixels, (long long)tol->max_pixels);
	if (f->failed & CMP_CHECK_MAX_RATIO)
		ADD("ratio %.6g > %.6g", f->m.ratio, tol->max_ratio);
	if (f->failed & CMP_CHECK_MIN_PSNR)
		ADD("psnr %.2f dB < %.2f", f->m.psnr, tol->min_psnr);
	if (f->failed & CMP_CHECK_MIN_SSIM)
		ADD("ssim %.6f < %.6f", f->m.ssim, tol->min_ssim);
	if (f->failed & CMP_CHECK_MAX_FLIP)
		ADD("flip %.6f > %.6f", f->m.flip, tol->max_flip);
#undef ADD
}

/* All the tolerances that apply must hold (AND); none given means exact equality. */
static unsigned judge(const cmp_metrics *m, const cmp_tolerance *t)
{
	unsigned checks = t->checks ? t->checks : CMP_CHECK_MAX_DIFF;
	int max_diff = t->checks ? t->max_diff : 0;
	unsigned failed = 0;
	if (checks & CMP_CHECK_MAX_DIFF && m->max_diff > max_diff)
		failed |= CMP_CHECK_MAX_DIFF;
	if (checks & CMP_CHECK_MAX_PIXELS && m->pixels > t->max_pixels)
		failed |= CMP_CHECK_MAX_PIXELS;
	if (checks & CMP_CHECK_MAX_RATIO && m->ratio > t->max_ratio)
		failed |= CMP_CHECK_MAX_RATIO;
	if (checks & CMP_CHECK_MIN_PSNR && !(m->psnr >= t->min_psnr))
		failed |= CMP_CHECK_MIN_PSNR;
	if (checks & CMP_CHECK_MIN_SSIM && !(m->ssim >= t->min_ssim))
		failed |= CMP_CHECK_MIN_SSIM;
	if (checks & CMP_CHECK_MAX_FLIP && !(m->flip <= t->max_flip))
		failed |= CMP_CHECK_MAX_FLIP;
	return failed;
}

static void worker_free(worker *w)
{
	tp_image_free(&w->a);
	tp_image_free(&w->b);
	tp_image_free(&w->work);
	cmp_scratch_destroy(w->scratch);
	cmp_flip_destroy(w->flip);
	enc_hasher_destroy(w->hasher);
}

/* Truncating copy (snprintf would warn about the truncation we want here). */
static void copy_str(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);
	memcpy(dst, src, len);
	dst[len] = 0;
}

static void frame_error(worker *w, cmp_frame *f, int code, const tp_err *e)
{
	f->status = CMP_ERROR;
	copy_str(f->detail, sizeof f->detail, e->msg);
	if (w->err_index < 0 || f->index < w->err_index) {
		w->err_index = f->index;
		w->err_code = code;
		w->err = *e;
	}
}

/* Reads A's and B's frame i in fmt, concurrently when both need decoding and threads
 * allow (PNG decoding is single-threaded and dominates a comparison). */
static int read_pair(run *r, worker *w, int i, int read_a, int read_b, tp_pixfmt fmt, int threads,
		     cmp_frame *f)
{
	int rca = 0, rcb = 0;
	tp_err ea, eb;
	int both = read_a && read_b && threads > 1;
#pragma omp parallel sections num_threads(2) if (both)
	{
#pragma omp section
		if (read_a)
			rca = cmp_source_read(r->a, i, fmt, &w->a, &ea);
#pragma omp section
		if (read_b)
			rcb = cmp_source_read(r->b, i, fmt, &w->b, &eb);
	}
	/* Whatever went wrong reading, it is an input the user must fix (exit 3). */
	if (rca < 0) {
		frame_error(w, f, TP_EINPUT, &ea);
		return TP_EINPUT;
	}
	if (rcb < 0) {
		frame_error(w, f, TP_EINPUT, &eb);
		return TP_EINPUT;
	}
	return 0;
}

static int ensure_scratch(worker *w, int width, int height, int threads, double ppd, tp_err *err)
{
	if (w->scratch && w->sw == width && w->sh == height)
		return 0;
	cmp_scratch_destroy(w->scratch);
	w->scratch = NULL;
	cmp_flip_destroy(w->flip);
	w->flip = NULL;
	int rc = cmp_scratch_create(width, height, threads, &w->scratch, err);
	if (rc == 0 && ppd > 0)
		rc = cmp_flip_create(width, height, ppd, threads, &w->flip, err);
	w->sw = rc < 0 ? 0 : width;
	w->sh = rc < 0 ? 0 : height;
	return rc;
}

/* --update of a PNG golden: B's frame i becomes A's frame i. */
static void update_png(run *r, worker *w, cmp_frame *f)
{
	char path[8192];
	tp_err e;
	if (cmp_source_frame_path(r->a, f->index, path, sizeof path) < 0) {
		snprintf(f->detail, sizeof f->detail, "%.60s has no file name for frame %d; not updated",
			 cmp_source_spec(r->a), f->index);
		return;
	}
	int rc = tp_mkdirs_for(path, &e);
	if (rc == 0)
		rc = tp_png_write(path, &w->b, r->cfg->png_level, &e);
	if (rc < 0) {
		frame_error(w, f, rc, &e);
		return;
	}
	f->updated = 1;
}

static void diff_image(run *r, worker *w, cmp_frame *f)
{
	char path[8192];
	tp_err e;
	snprintf(path, sizeof path, "%s/diff-%06d.png", r->cfg->diff_dir, f->index);
	int rc = cmp_report_diff_image(path, &w->a, &w->b, r->cfg->tol.fuzz, f->m.max_diff, &w->work,
				       r->cfg->png_level, &e);
	if (rc < 0)
		frame_error(w, f, rc, &e);
}

/* Frames where one side holds only a hash: hash the other side's pixels the same way. */
static void hash_frame(run *r, worker *w, cmp_frame *f, int threads)
{
	int i = f->index, fa = r->res->frames_a, fb = r->res->frames_b;
	int a_man = cmp_source_kind(r->a) == CMP_SRC_MANIFEST;
	int b_man = cmp_source_kind(r->b) == CMP_SRC_MANIFEST;
	const char *ha = i < fa && a_man ? cmp_source_hash(r->a, i) : NULL;
	const char *hb = i < fb && b_man ? cmp_source_hash(r->b, i) : NULL;
	char hex[ENC_HASH_HEX_MAX];
	tp_err e;
	int rc;
	if (a_man && i < fa)
		cmp_source_size(r->a, &f->wa, &f->ha);
	if (b_man && i < fb)
		cmp_source_size(r->b, &f->wb, &f->hb);
	/* The pixel side is hashed where there is something to match, or B for --update. */
	int both = i < fa && i < fb;
	int read_a = !a_man && both, read_b = !b_man && (both || (r->cfg->update && i < fb));
	if (read_a || read_b) {
		rc = read_pair(r, w, i, read_a, read_b, r->hash_fmt, threads, f);
		if (rc < 0)
			return;
		const tp_image *img = a_man ? &w->b : &w->a;
		if (a_man) {
			f->wb = img->w;
			f->hb = img->h;
		} else {
			f->wa = img->w;
			f->ha = img->h;
		}
		rc = enc_hasher_image(w->hasher, img, hex, sizeof hex, &e);
		if (rc < 0) {
			frame_error(w, f, rc, &e);
			return;
		}
		if (a_man)
			hb = hex;
		else
			ha = hex;
	}
	if (hb && a_man)
		snprintf(f->hash_b, sizeof f->hash_b, "%s", hb);
	if (i >= fa || i >= fb) {
		f->status = CMP_MISSING;
		snprintf(f->detail, sizeof f->detail, "no frame %d in %s", i, i >= fa ? "A" : "B");
	} else if (r->fmt_mismatch) {
		f->status = CMP_SIZE;
		copy_str(f->detail, sizeof f->detail, r->res->note);
	} else if (f->wa != f->wb || f->ha != f->hb) {
		f->status = CMP_SIZE;
		snprintf(f->detail, sizeof f->detail, "size differs: A %dx%d, B %dx%d", f->wa, f->ha,
			 f->wb, f->hb);
	} else if (!strcmp(ha, hb)) {
		f->status = CMP_IDENTICAL;
	} else {
		f->status = CMP_HASH;
		snprintf(f->detail, sizeof f->detail, "A %.12s.., B %.12s.. (no pixels to measure)", ha, hb);
	}
}

static void pixel_frame(run *r, worker *w, cmp_frame *f, int threads)
{
	const cmp_config *cfg = r->cfg;
	int i = f->index, in_a = i < r->res->frames_a, in_b = i < r->res->frames_b;
	/* A frame only one side has is read just to become A's under --update. */
	int rc = read_pair(r, w, i, in_a && in_b, in_b && (in_a || cfg->update), TP_RGB8, threads, f);
	if (rc < 0)
		return;
	if (in_a && in_b) {
		f->wa = w->a.w;
		f->ha = w->a.h;
	}
	if (in_b && (in_a || cfg->update)) {
		f->wb = w->b.w;
		f->hb = w->b.h;
	}
	if (!in_a || !in_b) {
		f->status = CMP_MISSING;
		snprintf(f->detail, sizeof f->detail, "no frame %d in %s", i, in_a ? "B" : "A");
		if (cfg->update && in_b)
			update_png(r, w, f);
		return;
	}
	if (f->wa != f->wb || f->ha != f->hb) {
		f->status = CMP_SIZE;
		snprintf(f->detail, sizeof f->detail, "size differs: A %dx%d, B %dx%d", f->wa, f->ha,
			 f->wb, f->hb);
		if (cfg->update)
			update_png(r, w, f);
		return;
	}
	/* Ignored regions take A's pixels in B, so every metric sees them as equal. */
	cmp_mask_copy(&w->a, &w->b, cfg->ignore, cfg->n_ignore);
	if (cmp_equal(&w->a, &w->b)) {
		f->status = CMP_IDENTICAL;
		f->m.psnr = INFINITY;
		f->m.ssim = 1;
		f->m.flip = cfg->flip_ppd > 0 ? 0 : NAN;
		return;
	}
	tp_err e;
	rc = ensure_scratch(w, f->wa, f->ha, threads, cfg->flip_ppd, &e);
	if (rc < 0) {
		frame_error(w, f, rc, &e);
		return;
	}
	int64_t n = cmp_unmasked_pixels(f->wa, f->ha, cfg->ignore, cfg->n_ignore);
	cmp_metrics_basic(&w->a, &w->b, cfg->tol.fuzz, n, w->scratch, threads, &f->m);
	f->m.ssim = cmp_ssim(&w->a, &w->b, &f->m.bbox, w->scratch, threads);
	f->m.flip = NAN; /* no figure unless measured: 0 would read "perceptually identical" */
	if (w->flip)
		f->m.flip = cmp_flip_frame(w->flip, &w->a, &w->b, &f->m.bbox, cfg->ignore, cfg->n_ignore, n,
					   threads);
	f->failed = judge(&f->m, &cfg->tol);
	f->status = f->failed ? CMP_FAIL : CMP_WITHIN;
	if (f->status == CMP_FAIL && cfg->diff_dir)
		diff_image(r, w, f);
	if (f->status == CMP_FAIL && cfg->update)
		update_png(r, w, f);
}

/* RGB8 bytes of side s's frame i as its PNG header declares them (0 if not a PNG). */
static size_t png_bytes(const cmp_source *s, int i)
{
	char path[8192];
	int w, h;
	if (cmp_source_frame_path(s, i, path, sizeof path) < 0 || tp_png_size(path, &w, &h) < 0)
		return 0;
	return (size_t)w * (size_t)h * 3;
}

static void do_frame(run *r, worker *w, int i, int threads);

/* A frame compared in parallel with others: it waits until its pictures fit in the
 * budget beside the frames in flight (or none is), and frees them when done. */
static void do_frame_budgeted(run *r, worker *w, int i)
{
	size_t need = png_bytes(r->a, i) + png_bytes(r->b, i);
	pthread_mutex_lock(&r->mu);
	while (r->decoded > 0 && r->decoded + need > CMP_DECODE_BUDGET)
		pthread_cond_wait(&r->cv, &r->mu);
	r->decoded += need;
	pthread_mutex_unlock(&r->mu);
	do_frame(r, w, i, 1);
	tp_image_free(&w->a);
	tp_image_free(&w->b);
	tp_image_free(&w->work);
	pthread_mutex_lock(&r->mu);
	r->decoded -= need;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void do_frame(run *r, worker *w, int i, int threads)
{
	cmp_frame *f = &r->res->frames[i];
	f->index = i;
	f->m.ssim = NAN;
	f->m.psnr = NAN;
	f->m.flip = NAN;
	if (r->hash_mode)
		hash_frame(r, w, f, threads);
	else
		pixel_frame(r, w, f, threads);
}

/* --update of a manifest golden: B's hashes (in A's format) replace A's. Rewritten only
 * when something differs; the frames that changed are marked. */
static int update_manifest(run *r, tp_err *err)
{
	cmp_result *res = r->res;
	enc_manifest m = { 0 };
	int rc = 0, changed = 0;
	if (cmp_source_kind(r->b) == CMP_SRC_MANIFEST) {
		cmp_source_size(r->b, &m.w, &m.h);
		m.fmt = cmp_source_hash_fmt(r->b);
		snprintf(m.algo, sizeof m.algo, "%s", cmp_source_hash_algo(r->b));
	} else {
		m.fmt = r->hash_fmt;
		snprintf(m.algo, sizeof m.algo, "%s", r->algo);
		if (res->frames_b > 0) {
			m.w = res->frames[0].wb;
			m.h = res->frames[0].hb;
		}
	}
	int aw, ah;
	cmp_source_size(r->a, &aw, &ah);
	changed = r->a_created || aw != m.w || ah != m.h || res->frames_a != res->frames_b ||
		  r->fmt_mismatch;
	for (int i = 0; rc == 0 && i < res->frames_b; i++) {
		cmp_frame *f = &res->frames[i];
		const char *h = cmp_source_kind(r->b) == CMP_SRC_MANIFEST ? cmp_source_hash(r->b, i) : f->hash_b;
		rc = enc_manifest_set(&m, i, h, err);
		if (f->status != CMP_IDENTICAL) {
			f->updated = 1;
			changed = 1;
		}
	}
	for (int i = res->frames_b; i < res->frames_a; i++)
		res->frames[i].updated = 1; /* dropped from the manifest */
	if (rc == 0 && changed)
		rc = tp_mkdirs_for(cmp_source_spec(r->a), err);
	if (rc == 0 && changed)
		rc = enc_manifest_write(cmp_source_spec(r->a), &m, err);
	enc_manifest_free(&m);
	return rc;
}

static int open_sides(run *r, tp_err *err)
{
	const cmp_config *cfg = r->cfg;
	int rc = cmp_source_open(cfg->a, &r->a, err);
	struct stat st;
	if (rc == TP_EIO && cfg->update && stat(cfg->a, &st) != 0) {
		rc = cmp_source_create_empty(cfg->a, &r->a, err);
		r->a_created = rc == 0;
	}
	/* Missing or unreadable inputs are all input errors (exit 3). */
	if (rc < 0)
		return tp_errprefix(err, rc == TP_EUSAGE ? rc : TP_EINPUT, "A");
	rc = cmp_source_open(cfg->b, &r->b, err);
	if (rc < 0)
		return tp_errprefix(err, rc == TP_EUSAGE ? rc : TP_EINPUT, "B");
	cmp_kind ka = cmp_source_kind(r->a), kb = cmp_source_kind(r->b);
	r->hash_mode = ka == CMP_SRC_MANIFEST || kb == CMP_SRC_MANIFEST;
	if (r->hash_mode && cfg->n_ignore)
		return tp_errf(err, TP_EUSAGE, "--ignore needs pixels on both sides, and %s is a manifest",
			       ka == CMP_SRC_MANIFEST ? cfg->a : cfg->b);
	if (cfg->update && ka == CMP_SRC_MP4)
		return tp_errf(err, TP_EUSAGE, "--update cannot rewrite a video (%s)", cfg->a);
	if (cfg->update && ka != CMP_SRC_MANIFEST && kb == CMP_SRC_MANIFEST)
		return tp_errf(err, TP_EUSAGE, "--update cannot write PNG frames from a manifest (%s)", cfg->b);
	return 0;
}

/* Header-level checks for manifest comparisons; sets the format frames are hashed in. */
static int plan_hashing(run *r, tp_err *err)
{
	cmp_result *res = r->res;
	cmp_source *man = cmp_source_kind(r->a) == CMP_SRC_MANIFEST ? r->a : r->b;
	cmp_source *other = man == r->a ? r->b : r->a;
	r->hash_fmt = cmp_source_hash_fmt(man);
	r->algo = cmp_source_hash_algo(man);
	if (cmp_source_kind(other) == CMP_SRC_MANIFEST) {
		const char *fa = enc_hash_pixfmt_name(cmp_source_hash_fmt(r->a));
		const char *fb = enc_hash_pixfmt_name(cmp_source_hash_fmt(r->b));
		const char *aa = cmp_source_hash_algo(r->a), *ab = cmp_source_hash_algo(r->b);
		if (strcmp(fa, fb) || strcmp(aa, ab)) {
			r->fmt_mismatch = 1;
			snprintf(res->note, sizeof res->note,
				 "manifests hash different things: A %s/%s, B %s/%s", fa, aa, fb, ab);
		}
		return 0;
	}
	if (cmp_source_kind(other) == CMP_SRC_MP4 && r->hash_fmt != TP_RGB8) {
		r->fmt_mismatch = 1;
		snprintf(res->note, sizeof res->note, "manifest %s hashes %s pixels; a video decodes to rgb24",
			 cmp_source_spec(man), enc_hash_pixfmt_name(r->hash_fmt));
		/* Still hash the video (as rgb24) so --update can replace the manifest. */
		r->hash_fmt = TP_RGB8;
		return 0;
	}
	return 0;
	(void)err;
}

static void tally(run *r)
{
	cmp_result *res = r->res;
	const cmp_frame *worst = NULL;
	res->failed = res->updated = 0;
	res->worst = -1;
	for (int i = 0; i < res->n; i++) {
		const cmp_frame *f = &res->frames[i];
		res->updated += f->updated;
		if (f->status == CMP_IDENTICAL || f->status == CMP_WITHIN)
			continue;
		res->failed++;
		/* Worst: measured frames first, by MSE, then SSIM; else the first failure. */
		if (!worst) {
			worst = f;
		} else if (f->status == CMP_FAIL) {
			if (worst->status != CMP_FAIL || f->m.mse > worst->m.mse ||
			    (f->m.mse == worst->m.mse && f->m.ssim < worst->m.ssim))
				worst = f;
		}
	}
	if (worst)
		res->worst = worst->index;
}

int cmp_run(const cmp_config *cfg, cmp_result *res, tp_err *err)
{
	memset(res, 0, sizeof *res);
	res->worst = -1;
	run r = { .cfg = cfg, .res = res };
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	worker *workers = NULL;
	int nworkers = 0;
	int threads = cfg->threads > 0 ? cfg->threads : 1;
	int rc = open_sides(&r, err);
	if (rc < 0)
		goto done;
	snprintf(res->kind_a, sizeof res->kind_a, "%s", cmp_source_kind_name(r.a));
	snprintf(res->kind_b, sizeof res->kind_b, "%s", cmp_source_kind_name(r.b));
	res->frames_a = cmp_source_frames(r.a);
	res->frames_b = cmp_source_frames(r.b);
	res->n = res->frames_a > res->frames_b ? res->frames_a : res->frames_b;
	res->compared = res->frames_a < res->frames_b ? res->frames_a : res->frames_b;
	res->frames = calloc(res->n ? (size_t)res->n : 1, sizeof *res->frames);
	if (!res->frames) {
		rc = tp_errf(err, TP_EIO, "out of memory for %d frames", res->n);
		goto done;
	}
	if (r.hash_mode)
		rc = plan_hashing(&r, err);
	if (rc < 0)
		goto done;
	if (res->frames_a != res->frames_b && !r.a_created && !res->note[0])
		snprintf(res->note, sizeof res->note, "frame count differs: A has %d, B has %d",
			 res->frames_a, res->frames_b);

	/* Frames in parallel when both sides can be read in any order; otherwise one frame at
	 * a time with A and B decoded concurrently and the metrics split into row chunks. */
	int par = cmp_source_random_access(r.a) && cmp_source_random_access(r.b) && threads > 1 &&
		  res->n > 1;
	nworkers = par ? threads : 1;
	workers = calloc((size_t)nworkers, sizeof *workers);
	if (!workers) {
		rc = tp_errf(err, TP_EIO, "out of memory");
		goto done;
	}
	for (int t = 0; t < nworkers; t++) {
		workers[t].err_index = -1;
		if (r.hash_mode && rc == 0)
			rc = enc_hasher_create(r.algo, &workers[t].hasher, err);
	}
	if (rc < 0)
		goto done;
	/* Frames of A beyond B's end need no reading unless A must be hashed or rewritten. */
	int last = res->n;
	if (par) {
#pragma omp parallel for schedule(static, 1) num_threads(threads)
		for (int i = 0; i < last; i++) {
			if (cfg->stop && *cfg->stop)
				continue;
			do_frame_budgeted(&r, &workers[omp_get_thread_num()], i);
		}
	} else {
		for (int i = 0; i < last && workers[0].err_index < 0; i++) {
			if (cfg->stop && *cfg->stop)
				break;
			do_frame(&r, &workers[0], i, threads);
		}
	}
	if (cfg->stop && *cfg->stop) {
		rc = tp_errf(err, TP_EINTR, "interrupted");
		goto done;
	}
	/* An unreadable frame is an input error (exit 3), reported for the lowest index. */
	int bad = -1;
	for (int t = 0; t < nworkers; t++)
		if (workers[t].err_index >= 0 && (bad < 0 || workers[t].err_index < workers[bad].err_index))
			bad = t;
	if (bad >= 0) {
		*err = workers[bad].err;
		rc = workers[bad].err_code;
		goto done;
	}
	if (cfg->update && cmp_source_kind(r.a) == CMP_SRC_MANIFEST) {
		rc = update_manifest(&r, err);
		if (rc < 0)
			goto done;
	}
	tally(&r);
	rc = 0;
	if (cfg->update) {
		/* Fixed when every differing frame was rewritten. */
		int left = 0;
		for (int i = 0; i < res->n; i++) {
			const cmp_frame *f = &res->frames[i];
			left += f->status != CMP_IDENTICAL && f->status != CMP_WITHIN && !f->updated;
		}
		rc = left ? TP_EDIFF : 0;
	} else if (res->failed || res->note[0]) {
		rc = TP_EDIFF;
	}
	res->passed = rc == 0;
done:
	for (int t = 0; t < nworkers; t++)
		worker_free(&workers[t]);
	free(workers);
	cmp_source_close(r.a);
	cmp_source_close(r.b);
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.mu);
	return rc;
}

void cmp_result_free(cmp_result *res)
{
	if (!res)
		return;
	free(res->frames);
	res->frames = NULL;
	res->n = 0;
}
