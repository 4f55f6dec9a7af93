/*
 * pngseq.c - PNG frames: a printf pattern with one %d ("out/%04d.png") or, for a
 * single-frame render, a plain file name.
 *
 * Frames are compressed in parallel in small batches (each frame is its own file, so the
 * bytes do not depend on the thread count) and each is written under a temporary name and
 * renamed when complete. On failure the frames this render wrote are removed again.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "encode/encoder.h"
#include "encode/proof.h"
#include "encode/record.h"
#include "util/fsutil.h"
#include "util/png.h"

#define BATCH 4

typedef struct pngseq {
	char pattern[4096];
	int is_pattern;
	int frames;
	int threads; /* enc_config.threads, or OpenMP's default */
	tp_image batch[BATCH];
	int batch_index[BATCH];
	int nbatch;
	int first;   /* first frame index (render --range) */
	int range;   /* a range of a longer render: the lock names its frames */
	int written; /* frames first..written-1 are on disk */
	int overwrite;
	int lock_fd;         /* flock()ed "<dir>/.<pattern>.lock" while a sequence is written */
	char lock_path[8320];
	char fp[65]; /* output fingerprint for each frame's tEXt record ("" for none) */
	int total;   /* frames of the whole render */
	const enc_record *record; /* enc_config.record */
} pngseq;

static void frame_path(const pngseq *s, int index, char *buf, size_t n)
{
	if (s->is_pattern)
		snprintf(buf, n, s->pattern, index);
	else
		snprintf(buf, n, "%s", s->pattern);
}

static int pngseq_probe(const char *path)
{
	return tp_has_suffix(path, ".png") ? 50 : 0;
}

/* Nothing is overwritten without -y: fails if any frame 0..frames-1 exists. Long
 * renders have many frames, so when the %d is in the file name the directory is read
 * once instead of testing every name. */
static int first_existing_frame(const pngseq *s, int first, int frames, tp_err *err)
{
	char path[4352];
	const char *slash = strrchr(s->pattern, '/');
	const char *conv = strchr(s->pattern, '%');
	while (conv && conv[1] == '%')
		conv = strchr(conv + 2, '%');
	if (!s->is_pattern || !conv || (slash && conv < slash) || frames < 64) {
		for (int i = first; i < first + frames; i++) {
			frame_path(s, i, path, sizeof path);
			if (tp_path_exists(path))
				return tp_errpath(err, TP_EIO, path, "already exists (use -y to overwrite)");
		}
		return 0;
	}
	char dir[4096];
	tp_path_dir(s->pattern, dir, sizeof dir);
	DIR *d = opendir(dir);
	if (!d)
		return 0; /* created by check(); an unreadable directory fails later, clearly */
	int found = -1;
	for (struct dirent *e; (e = readdir(d));) {
		/* A name belongs to the sequence if formatting its number gives it back. */
		const char *digits = e->d_name;
		while (*digits && (*digits < '0' || *digits > '9'))
			digits++;
		if (!*digits)
			continue;
		long v = strtol(digits, NULL, 10);
		if (v < first || v >= (long)first + frames)
			continue;
		frame_path(s, (int)v, path, sizeof path);
		const char *base = strrchr(path, '/');
		if (!strcmp(base ? base + 1 : path, e->d_name) && (found < 0 || v < found))
			found = (int)v;
	}
	closedir(d);
	if (found >= 0) {
		frame_path(s, found, path, sizeof path);
		return tp_errpath(err, TP_EIO, path, "already exists (use -y to overwrite)");
	}
	return 0;
}

static int pngseq_check(const enc_config *cfg, tp_err *err)
{
	int kind = tp_pattern_kind(cfg->path);
	if (kind < 0)
		return tp_errf(err, TP_EUSAGE,
			       "%.200s: a PNG pattern takes one %%d or %%0Nd with N at most %d (like out/%%04d.png)",
			       cfg->path, TP_PATTERN_MAX_WIDTH);
	if (kind == 0 && cfg->frames > 1)
		return tp_errf(err, TP_EUSAGE,
			       "%s: %d frames need a pattern with %%d (like out/%%04d.png), or use --frames 1",
			       cfg->path, cfg->frames);
	if (cfg->settings_only)
		return 0;
	int rc = tp_mkdirs_for(cfg->path, err);
	if (rc < 0)
		return rc;
	pngseq tmp = { .is_pattern = kind == 1 };
	snprintf(tmp.pattern, sizeof tmp.pattern, "%s", cfg->path);
	char path[4352];
	frame_path(&tmp, cfg->first, path, sizeof path);
	rc = enc_check_output(path, cfg->overwrite, err); /* the directory, and the first frame */
	if (rc < 0 || cfg->overwrite)
		return rc;
	return first_existing_frame(&tmp, cfg->first, cfg->frames, err);
}

/* Two renders into one pattern would interleave their frames (and both succeed): the
 * sequence is locked with flock() on "<dir>/.<base>.lock" for the whole render (a
 * --range render on "<dir>/.<base>.A-B.lock", the frames it writes). The lock
 * goes with the process (a killed render leaves at most an unlocked, harmless file), and
 * the file is removed on close. A lock whose file was removed (by its previous holder)
 * between open and flock is taken again on the new file. */
static int lock_sequence(pngseq *s, tp_err *err)
{
	char dir[4096];
	const char *slash = strrchr(s->pattern, '/');
	tp_path_dir(s->pattern, dir, sizeof dir);
	/* A range (render --range: a farm chunk) locks its own frames; chunks of one render
	 * write disjoint ranges of one pattern side by side. */
	if (s->range)
		snprintf(s->lock_path, sizeof s->lock_path, "%s/.%s.%d-%d.lock", dir,
			 slash ? slash + 1 : s->pattern, s->first, s->first + s->frames - 1);
	else
		snprintf(s->lock_path, sizeof s->lock_path, "%s/.%s.lock", dir,
			 slash ? slash + 1 : s->pattern);
	for (int tries = 0; tries < 100; tries++) {
		int fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
		if (fd < 0)
			return tp_errpath(err, TP_EIO, s->lock_path, "cannot create lock file (%s)", strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int e = errno;
			close(fd);
			if (e == EWOULDBLOCK)
				return tp_errf(err, TP_EIO, "%s: another render is writing this sequence "
					       "(locked by %s); wait for it or choose another output",
					       s->pattern, s->lock_path);
			return tp_errpath(err, TP_EIO, s->lock_path, "cannot lock (%s)", strerror(e));
		}
		struct stat a, b;
		if (fstat(fd, &a) == 0 && stat(s->lock_path, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev) {
			s->lock_fd = fd;
			return 0;
		}
		close(fd); /* removed under us by the previous holder: try the new file */
	}
	return tp_errpath(err, TP_EIO, s->lock_path, "cannot lock");
}

static void unlock_sequence(pngseq *s)
{
	if (s->lock_fd <= 0)
		return;
	unlink(s->lock_path); /* while still locked, so no one holds a lock on a removed name */
	close(s->lock_fd);
	s->lock_fd = 0;
}

static int pngseq_open(void *priv, const enc_config *cfg, tp_err *err)
{
	pngseq *s = priv;
	int rc = pngseq_check(cfg, err);
	if (rc < 0)
		return rc;
	snprintf(s->pattern, sizeof s->pattern, "%s", cfg->path);
	s->is_pattern = tp_pattern_kind(cfg->path) == 1;
	s->frames = cfg->frames;
	s->threads = enc_threads(cfg);
	s->first = s->written = cfg->first;
	s->range = cfg->range;
	if (cfg->fingerprint && s->is_pattern) {
		snprintf(s->fp, sizeof s->fp, "%s", cfg->fingerprint);
		s->total = cfg->total;
	}
	s->overwrite = cfg->overwrite;
	s->record = cfg->record;
	if (s->is_pattern && (rc = lock_sequence(s, err)) < 0)
		return rc;
	for (int i = 0; i < BATCH; i++)
		if (tp_image_alloc(&s->batch[i], cfg->w, cfg->h, cfg->fmt) < 0)
			return tp_errf(err, TP_EIO, "out of memory");
	return 0;
}

static int flush_batch(pngseq *s, tp_err *err)
{
	int rc = 0;
	tp_err errs[BATCH];
	int rcs[BATCH];
	/* Each frame is compressed independently, so scheduling cannot change any byte. */
#pragma omp parallel for schedule(static, 1) num_threads(s->threads)
	for (int i = 0; i < s->nbatch; i++) {
		char path[4352];
		frame_path(s, s->batch_index[i], path, sizeof path);
		char rec[ENC_PROOF_MAX];
		enc_proof p = {.first = s->batch_index[i], .last = s->batch_index[i],
			       .total = s->total};
		memcpy(p.fp, s->fp, sizeof p.fp);
		enc_proof_format(&p, rec, sizeof rec);
		const int f = s->batch_index[i];
		char *json = s->record ? enc_record_text(s->record, f, f) : NULL;
		const tp_png_meta m = {.proof = s->fp[0] ? rec : NULL,
				       .record = json,
				       .srgb = s->record && (s->record->mode == TP_MODE_COLOR ||
							     s->record->mode == TP_MODE_PARTICLES)};
		if (s->record && !json)
			rcs[i] = tp_errf(&errs[i], TP_EIO, "out of memory");
		else
			rcs[i] = tp_png_write_meta(path, &s->batch[i], -1, &m, &errs[i]);
		free(json);
	}
	for (int i = 0; i < s->nbatch; i++) {
		if (rcs[i] < 0 && rc == 0) {
			rc = rcs[i];
			*err = errs[i];
		}
	}
	if (rc == 0)
		s->written = s->batch_index[s->nbatch - 1] + 1;
	s->nbatch = 0;
	return rc;
}

static int pngseq_write(void *priv, int index, const tp_image *img, tp_err *err)
{
	pngseq *s = priv;
	tp_image *dst = &s->batch[s->nbatch];
	size_t row = (size_t)img->w * (size_t)tp_pixfmt_bytes(img->fmt);
	for (int y = 0; y < img->h; y++)
		memcpy(tp_image_row(dst, y), tp_image_row(img, y), row);
	s->batch_index[s->nbatch++] = index;
	return s->nbatch == BATCH ? flush_batch(s, err) : 0;
}

static int pngseq_close(void *priv, enc_close_mode mode, tp_err *err)
{
	pngseq *s = priv;
	int rc = 0;
	if (mode != ENC_CLOSE_FAILED && s->nbatch > 0)
		rc = flush_batch(s, err);
	if (mode == ENC_CLOSE_FAILED || rc < 0) {
		/* Leave no partial sequence behind after an error. */
		for (int i = s->first; i < s->written; i++) {
			char path[4352];
			frame_path(s, i, path, sizeof path);
			unlink(path);
		}
	}
	for (int i = 0; i < BATCH; i++)
		tp_image_free(&s->batch[i]);
	unlock_sequence(s);
	return rc;
}

const tp_encoder tp_encoder_pngseq = {
	.name = "png",
	.description = "PNG frames (a pattern such as out/%04d.png, or one file for one frame)",
	.priv_size = sizeof(pngseq),
	.probe = pngseq_probe,
	.check = pngseq_check,
	.open = pngseq_open,
	.write_frame = pngseq_write,
	.close = pngseq_close,
};
