/* sources.c - where compared frames come from: a PNG, a PNG sequence (directory, printf
 * pattern or glob), a video, or a frame-hash manifest. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "compare/compare.h"
#include "encode/hash.h"
#include "encode/mp4_read.h"
#include "util/png.h"
#include "util/fsutil.h"

struct cmp_source {
	cmp_kind kind;
	char spec[4096];
	int frames;
	char **paths;     /* PNG, and PNGSEQ from a directory or glob: one file per frame */
	int is_pattern;   /* PNGSEQ from a printf pattern: frame i is pattern(first + i) */
	int first;
	enc_mp4_reader *mp4;
	int mp4_next;     /* index of the frame enc_mp4_next() decodes next */
	enc_manifest man;
};

static int has_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

/* Natural order: digit runs compare as numbers, so f2.png < f10.png. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			size_t na = 0, nb = 0;
			while (isdigit((unsigned char)a[na]))
				na++;
			while (isdigit((unsigned char)b[nb]))
				nb++;
			if (na != nb)
				return na < nb ? -1 : 1;
			int c = strncmp(a, b, na);
			if (c)
				return c;
			a += na;
			b += nb;
		} else {
			if (*a != *b)
				return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
			a++;
			b++;
		}
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int natural_qsort(const void *a, const void *b)
{
	int c = natural_cmp(*(char *const *)a, *(char *const *)b);
	return c ? c : strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_path(cmp_source *s, int *cap, const char *path, tp_err *err)
{
	if (s->frames == *cap) {
		int n = *cap ? *cap * 2 : 64;
		char **p = realloc(s->paths, sizeof *p * (size_t)n);
		if (!p)
			return tp_errf(err, TP_EIO, "out of memory");
		s->paths = p;
		*cap = n;
	}
	s->paths[s->frames] = strdup(path);
	if (!s->paths[s->frames])
		return tp_errf(err, TP_EIO, "out of memory");
	s->frames++;
	return 0;
}

static int open_dir(cmp_source *s, tp_err *err)
{
	DIR *d = opendir(s->spec);
	if (!d)
		return tp_errf(err, TP_EIO, "%s: cannot open directory (%s)", s->spec, strerror(errno));
	int cap = 0, rc = 0;
	struct dirent *e;
	char path[8192];
	while (rc == 0 && (e = readdir(d))) {
		/* Hidden files include our own temporaries (".name.tmp-PID"). */
		if (e->d_name[0] == '.' || !tp_has_suffix(e->d_name, ".png"))
			continue;
		snprintf(path, sizeof path, "%s/%s", s->spec, e->d_name);
		rc = add_path(s, &cap, path, err);
	}
	closedir(d);
	if (rc < 0)
		return rc;
	if (!s->frames)
		return tp_errf(err, TP_EINPUT, "%s: no .png files in directory", s->spec);
	qsort(s->paths, (size_t)s->frames, sizeof *s->paths, natural_qsort);
	return 0;
}

static int open_glob(cmp_source *s, tp_err *err)
{
	glob_t g;
	int ret = glob(s->spec, 0, NULL, &g);
	if (ret == GLOB_NOMATCH)
		return tp_errf(err, TP_EIO, "%s: no files match", s->spec);
	if (ret != 0)
		return tp_errf(err, TP_EIO, "%s: cannot expand pattern", s->spec);
	int cap = 0, rc = 0;
	for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
		rc = add_path(s, &cap, g.gl_pathv[i], err);
	globfree(&g);
	if (rc == 0)
		qsort(s->paths, (size_t)s->frames, sizeof *s->paths, natural_qsort);
	return rc;
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* printf pattern: frames are consecutive from 0 or, failing that, 1 (ffmpeg's habit). */
static int open_pattern(cmp_source *s, tp_err *err)
{
	char path[8192];
	s->is_pattern = 1;
	for (s->first = 0; s->first < 2; s->first++) {
		snprintf(path, sizeof path, s->spec, s->first);
		if (file_exists(path))
			break;
	}
	if (s->first == 2)
		return tp_errf(err, TP_EIO, "%s: no frames (neither frame 0 nor 1 exists)", s->spec);
	for (;;) {
		snprintf(path, sizeof path, s->spec, s->first + s->frames);
		if (!file_exists(path))
			break;
		s->frames++;
	}
	return 0;
}

/* 1 if the text starts, after blank lines and '#' comment lines (as the manifest reader
 * skips them), with the manifest magic. */
static int looks_like_manifest(const unsigned char *head, size_t n)
{
	size_t i = 0, ml = strlen(ENC_MANIFEST_MAGIC);
	while (i < n) {
		size_t j = i;
		while (j < n && (head[j] == ' ' || head[j] == '\t' || head[j] == '\r'))
			j++;
		if (j < n && head[j] == '\n') {
			i = j + 1;
			continue;
		}
		if (j < n && head[j] == '#' && i == j) {
			while (j < n && head[j] != '\n')
				j++;
			i = j + 1;
			continue;
		}
		return n - i >= ml && !memcmp(head + i, ENC_MANIFEST_MAGIC, ml);
	}
	return 0;
}

static int open_file(cmp_source *s, tp_err *err)
{
	/* Never waits on a FIFO or device: those are refused (exit 3) before any read. */
	FILE *f;
	int rc = tp_fopen_regular(s->spec, "a PNG, video or frame-hash manifest", &f, err);
	if (rc < 0)
		return rc;
	unsigned char head[4096] = {0};
	size_t got = fread(head, 1, sizeof head, f);
	fclose(f);
	static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	if (got >= 8 && !memcmp(head, png_sig, 8)) {
		s->kind = CMP_SRC_PNG;
		int cap = 0;
		return add_path(s, &cap, s->spec, err);
	}
	if (looks_like_manifest(head, got)) {
		s->kind = CMP_SRC_MANIFEST;
		rc = enc_manifest_read(s->spec, &s->man, err);
		if (rc < 0)
			return rc;
		s->frames = s->man.n;
		return 0;
	}
	s->kind = CMP_SRC_MP4;
	tp_err verr;
	rc = enc_mp4_open(s->spec, &s->mp4, &verr);
	if (rc < 0)
		return tp_errf(err, TP_EINPUT, "%s: not a PNG, video or frame-hash manifest (%s)",
			       s->spec, verr.msg);
	s->frames = enc_mp4_frames(s->mp4);
	return 0;
}

static int source_new(const char *spec, cmp_source **out, tp_err *err)
{
	*out = NULL;
	if (strlen(spec) >= sizeof((cmp_source *)0)->spec)
		return tp_errf(err, TP_EINPUT, "%s: path too long", spec);
	cmp_source *s = calloc(1, sizeof *s);
	if (!s)
		return tp_errf(err, TP_EIO, "out of memory");
	snprintf(s->spec, sizeof s->spec, "%s", spec);
	*out = s;
	return 0;
}

int cmp_source_open(const char *spec, cmp_source **out, tp_err *err)
{
	cmp_source *s;
	int rc = source_new(spec, &s, err);
	if (rc < 0)
		return rc;
	struct stat st;
	int pk = tp_pattern_kind(spec);
	if (stat(spec, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			s->kind = CMP_SRC_PNGSEQ;
			rc = open_dir(s, err);
		} else {
			rc = open_file(s, err);
		}
	} else if (pk == 1) {
		s->kind = CMP_SRC_PNGSEQ;
		rc = open_pattern(s, err);
	} else if (has_glob(spec)) {
		s->kind = CMP_SRC_PNGSEQ;
		rc = open_glob(s, err);
	} else if (strchr(spec, '%')) {
		/* Never formatted: %999999999d would make every name a gigabyte of spaces. */
		rc = tp_errf(err, TP_EUSAGE, "%.200s: a frame pattern takes one %%d or %%0Nd with N at most %d",
			     spec, TP_PATTERN_MAX_WIDTH);
	} else {
		rc = tp_errf(err, TP_EIO, "%s: %s", spec, strerror(errno));
	}
	if (rc < 0) {
		cmp_source_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int cmp_source_create_empty(const char *spec, cmp_source **out, tp_err *err)
{
	cmp_source *s;
	int rc = source_new(spec, &s, err);
	if (rc < 0)
		return rc;
	if (tp_has_suffix(spec, ".manifest") || tp_has_suffix(spec, ".tpmanifest")) {
		s->kind = CMP_SRC_MANIFEST;
		snprintf(s->man.algo, sizeof s->man.algo, "%s", ENC_HASH_DEFAULT);
		s->man.fmt = TP_RGB8;
	} else if (tp_pattern_kind(spec) == 1) {
		s->kind = CMP_SRC_PNGSEQ;
		s->is_pattern = 1;
	} else if (tp_has_suffix(spec, ".png") && !has_glob(spec)) {
		s->kind = CMP_SRC_PNG;
	} else if (strchr(spec, '%') && tp_pattern_kind(spec) < 0) {
		cmp_source_close(s);
		return tp_errf(err, TP_EUSAGE, "%.200s: a frame pattern takes one %%d or %%0Nd with N at most %d",
			       spec, TP_PATTERN_MAX_WIDTH);
	} else {
		cmp_source_close(s);
		return tp_errf(err, TP_EIO, "%s: does not exist, and --update can only create a "
			       ".manifest, a .png or a %%d pattern", spec);
	}
	*out = s;
	return 0;
}

void cmp_source_close(cmp_source *s)
{
	if (!s)
		return;
	for (int i = 0; s->paths && i < s->frames; i++)
		free(s->paths[i]);
	free(s->paths);
	enc_mp4_close(s->mp4);
	enc_manifest_free(&s->man);
	free(s);
}

cmp_kind cmp_source_kind(const cmp_source *s)
{
	return s->kind;
}

const char *cmp_source_kind_name(const cmp_source *s)
{
	switch (s->kind) {
	case CMP_SRC_PNG: return "png";
	case CMP_SRC_PNGSEQ: return "png-sequence";
	case CMP_SRC_MP4: return "video";
	default: return "manifest";
	}
}

const char *cmp_source_spec(const cmp_source *s)
{
	return s->spec;
}

int cmp_source_frames(const cmp_source *s)
{
	return s->frames;
}

void cmp_source_size(const cmp_source *s, int *w, int *h)
{
	*w = *h = 0;
	if (s->kind == CMP_SRC_MP4) {
		*w = enc_mp4_width(s->mp4);
		*h = enc_mp4_height(s->mp4);
	} else if (s->kind == CMP_SRC_MANIFEST) {
		*w = s->man.w;
		*h = s->man.h;
	}
}

int cmp_source_random_access(const cmp_source *s)
{
	return s->kind != CMP_SRC_MP4;
}

int cmp_source_frame_path(const cmp_source *s, int i, char *buf, size_t n)
{
	if (s->kind == CMP_SRC_PNG && i == 0) {
		snprintf(buf, n, "%s", s->spec);
		return 0;
	}
	if (s->kind != CMP_SRC_PNGSEQ || i < 0)
		return -1;
	if (s->is_pattern) {
		snprintf(buf, n, s->spec, s->first + i);
		return 0;
	}
	if (i >= s->frames)
		return -1;
	snprintf(buf, n, "%s", s->paths[i]);
	return 0;
}

void cmp_source_frame_name(const cmp_source *s, int i, char *buf, size_t n)
{
	if (cmp_source_frame_path(s, i, buf, n) < 0)
		snprintf(buf, n, "%s#%d", s->spec, i);
}

int cmp_source_read(cmp_source *s, int i, tp_pixfmt fmt, tp_image *img, tp_err *err)
{
	if (i < 0 || i >= s->frames)
		return tp_errf(err, TP_EIO, "%s: no frame %d", s->spec, i);
	if (s->kind == CMP_SRC_MANIFEST)
		return tp_errf(err, TP_EIO, "%s: a manifest holds no pixels", s->spec);
	if (s->kind == CMP_SRC_MP4) {
		if (fmt != TP_RGB8)
			return tp_errf(err, TP_EINPUT, "%s: video frames decode to rgb24 only", s->spec);
		if (i != s->mp4_next)
			return tp_errf(err, TP_EIO, "%s: frame %d read out of order", s->spec, i);
		int w = enc_mp4_width(s->mp4), h = enc_mp4_height(s->mp4);
		if (!img->pixels || img->w != w || img->h != h || img->fmt != TP_RGB8) {
			tp_image_free(img);
			if (tp_image_alloc(img, w, h, TP_RGB8) < 0)
				return tp_errf(err, TP_EIO, "out of memory for a %dx%d frame", w, h);
		}
		int rc = enc_mp4_next(s->mp4, img, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return tp_errf(err, TP_EINPUT, "%s: stream ended after %d frames (container says %d)",
				       s->spec, i, s->frames);
		s->mp4_next++;
		return 0;
	}
	char path[8192];
	cmp_source_frame_path(s, i, path, sizeof path);
	/* png.h allocates the decoded image: the caller's goes first, so that a worker never
	 * holds three frames at once (docs/limits.md's budget) */
	tp_image_free(img);
	return tp_png_read(path, fmt, img, err);
}

const char *cmp_source_hash(const cmp_source *s, int i)
{
	return s->kind == CMP_SRC_MANIFEST ? enc_manifest_hash(&s->man, i) : NULL;
}

const char *cmp_source_hash_algo(const cmp_source *s)
{
	return s->man.algo;
}

tp_pixfmt cmp_source_hash_fmt(const cmp_source *s)
{
	return s->man.fmt;
}
