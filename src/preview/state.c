/* state.c - the preview's scene, reloads, errors as data and frames as PNG (state.h). */
#include "preview/state.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/png.h"
#include "preview/draft.h"
#include "preview/json.h"
#include "util/error.h"
#include "util/image.h"

/* zlib level of the frames served: 0 stores the rows (no filter, no compression). A
 * 640x360 frame is then 691 KB on a loopback connection, and compressing it took several
 * times longer than rendering it. The pixels are the same at every level. */
#define PV_PNG_LEVEL 0
/* The stats worker starts this long after a reload, so the page's first frame of the
 * new scene is not slowed by it. */
#define PV_STATS_DELAY_MS 400

struct pv_state {
	pv_config cfg;
	char path[1024];
	char link[1024]; /* the scene's link target when the preview started ("": no link) */
	volatile int cancel; /* raised by pv_state_stop(): simulations stop within a step */

	pthread_mutex_t reload_mu; /* one reload at a time (the watcher's, the first) */
	pthread_mutex_t scene_mu;  /* the scene and what is rendered from it */
	tp_scene *sc;
	int ref_w, ref_h; /* the last loaded scene's "size", for the fit */
	pthread_mutex_t draft_mu; /* the draft: the same scene, smaller (NULL: none) */
	tp_scene *draft;

	pthread_mutex_t mu; /* everything below */
	pthread_cond_t cv;
	unsigned long generation;
	unsigned long scene_gen; /* the generation of the last good load: of the frames */
	int loaded;
	tp_scene_info info;
	char info_path[1024], info_solver[32];
	int has_error, error_frame;
	tp_error error;
	char error_line[512];
	char *scene_text; /* tp_scene_text of the loaded scene */
	char *bytes;      /* the file's bytes the loaded scene was parsed from */
	/* stats of the loaded scene, filled by the worker */
	int stats_n, stats_cap, stats_fields;
	const char *stats_names[TP_FRAME_STATS_MAX];
	double *stats;           /* stats_cap x (1 + TP_FRAME_STATS_MAX): t, values */
	tp_pose *poses;          /* stats_cap x PV_POSES: the boxes where they are */
	int nposes;              /* boxes per frame in poses (at most PV_POSES) */
	unsigned long stats_gen; /* the generation the worker should walk */
	int rendering; /* frames the page asked for, and reloads, being made now */
	int stop;
	pthread_t worker;
	int worker_started;
};

/* The first line of the parse's own bytes that err points at: quoted only when the
 * error is in the scene file whose bytes these are (never re-read by name: the path may
 * name another file by now). */
static void set_error_line(char *out, size_t n, const tp_error *e, const char *path,
			   const char *text, size_t len)
{
	out[0] = '\0';
	if (e->line <= 0 || !text || strcmp(e->file, path) != 0)
		return;
	int line = 1;
	size_t i = 0, k = 0;
	for (; i < len && line < e->line; i++)
		line += text[i] == '\n';
	for (; i < len && text[i] != '\n' && k + 1 < n; i++)
		if (text[i] != '\r')
			out[k++] = text[i];
	out[k] = '\0';
}

static int read_fail(tp_error *err, const char *path, const char *what)
{
	memset(err, 0, sizeof *err);
	err->code = TP_ERROR_INPUT;
	snprintf(err->file, sizeof err->file, "%s", path);
	snprintf(err->message, sizeof err->message, "%s", what);
	/* keeps the file name whole: a long path loses its middle */
	char shown[256];
	tp_path_ellipsize(path, shown, sizeof shown);
	snprintf(err->text, sizeof err->text, "%s: %s", shown, what);
	return err->code;
}

int pv_read_scene(const pv_state *st, char **text, size_t *len, tp_error *err)
{
	*text = NULL;
	*len = 0;
	const char *path = st->path;
	if (st->link[0]) { /* the scene was a link when the preview started: only to there */
		char now[sizeof st->link];
		ssize_t k = readlink(path, now, sizeof now - 1);
		if (k >= 0) {
			now[k] = '\0';
			if (strcmp(now, st->link) != 0)
				return read_fail(err, path,
						 "is a symbolic link to another file than when the "
						 "preview started; not read");
		}
	}
	/* O_NONBLOCK: a FIFO cannot hang the open; O_NOFOLLOW: a link renamed over the scene
	 * is not followed to a file the page should not quote */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
				    (st->link[0] ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		char why[300];
		if (errno == ENOENT)
			snprintf(why, sizeof why, "is gone (deleted or renamed away); the page "
						  "shows the last scene until it is back");
		else if (errno == ELOOP)
			snprintf(why, sizeof why, "is a symbolic link put in the scene's place; "
						  "not followed");
		else
			snprintf(why, sizeof why, "cannot open (%s)", strerror(errno));
		return read_fail(err, path, why);
	}
	struct stat sb;
	const char *kind = NULL;
	if (fstat(fd, &sb) != 0)
		kind = "cannot be examined";
	else if (S_ISDIR(sb.st_mode))
		kind = "is a directory, not a scene file";
	else if (S_ISFIFO(sb.st_mode))
		kind = "is a FIFO, not a scene file";
	else if (S_ISSOCK(sb.st_mode))
		kind = "is a socket, not a scene file";
	else if (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode))
		kind = "is a device, not a scene file";
	else if (!S_ISREG(sb.st_mode))
		kind = "is not a regular file";
	else if (sb.st_size > PV_SCENE_MAX_BYTES)
		kind = "is too large for a scene file (over 16 MiB)";
	if (kind) {
		close(fd);
		return read_fail(err, path, kind);
	}
	/* one byte more than the size, to see a file that grew meanwhile */
	size_t cap = (size_t)sb.st_size + 2, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return read_fail(err, path, "out of memory");
	}
	for (;;) {
		if (n + 1 == cap) {
			if (cap > PV_SCENE_MAX_BYTES) {
				free(buf);
				close(fd);
				return read_fail(err, path,
						 "is too large for a scene file (over 16 MiB)");
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				close(fd);
				return read_fail(err, path, "out of memory");
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t k = read(fd, buf + n, cap - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			char why[300];
			snprintf(why, sizeof why, "cannot read (%s)", strerror(errno));
			free(buf);
			close(fd);
			return read_fail(err, path, why);
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	if (memchr(buf, '\0', n)) {
		free(buf);
		return read_fail(err, path, "holds a NUL byte: not a scene file");
	}
	*text = buf;
	*len = n;
	return 0;
}

static void fit_size(int rw, int rh, int *w, int *h)
{
	double s = fmin((double)PV_FIT_W / rw, (double)PV_FIT_H / rh);
	*w = (int)lround(rw * s);
	*h = (int)lround(rh * s);
	if (*w < 1)
		*w = 1;
	if (*h < 1)
		*h = 1;
}

static void load_options(const pv_state *st, int w, int h, tp_load_options *o)
{
	*o = (tp_load_options)TP_LOAD_OPTIONS_INIT;
	o->names = st->cfg.names;
	o->nnames = st->cfg.nnames;
	o->width = w;
	o->height = h;
	o->scale = w ? 0 : st->cfg.scale;
	o->sets = st->cfg.sets;
	o->nsets = st->cfg.nsets;
	o->threads = st->cfg.threads;
	o->checkpoint_bytes = PV_CHECKPOINT_BYTES;
}

/* Loads the scene from text (the file's bytes) at the configured size; with neither
 * --size nor --scale, at the size that fits the scene's own into PV_FIT_W x PV_FIT_H (its
 * "size" may change between saves, so a guess from the last load is checked and
 * corrected). */
static int load_text(pv_state *st, const char *text, tp_scene **out, tp_error *err)
{
	tp_load_options o = TP_LOAD_OPTIONS_INIT;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	int fit = !st->cfg.width && !(st->cfg.scale > 0);
	int w = st->cfg.width, h = st->cfg.height;
	if (fit && st->ref_w > 0)
		fit_size(st->ref_w, st->ref_h, &w, &h);
	load_options(st, w, h, &o);
	int rc = tp_scene_load_string(text, st->path, &o, out, err);
	if (!fit)
		return rc;
	if (rc < 0 && w) { /* maybe the guess: try the scene's own size */
		load_options(st, 0, 0, &o);
		rc = tp_scene_load_string(text, st->path, &o, out, err);
	}
	if (rc < 0)
		return rc;
	tp_scene_get_info(*out, &in);
	int fw, fh;
	fit_size(in.ref_width, in.ref_height, &fw, &fh);
	st->ref_w = in.ref_width;
	st->ref_h = in.ref_height;
	if (in.width == fw && in.height == fh)
		return 0;
	tp_scene_free(*out);
	*out = NULL;
	load_options(st, fw, fh, &o);
	return tp_scene_load_string(text, st->path, &o, out, err);
}

/* The draft of a loaded scene: the same text at a quarter of the preview's width and
 * height (fitted into PV_DRAFT_W x PV_DRAFT_H), sph's particles spaced wider (draft.h),
 * which simulates ten or more times faster (scenes are resolution-independent), so that
 * the page has a picture soon after a save that simulates again from far back. NULL when the preview is that small already, or the
 * draft does not load (the page then waits for the full frame, as before). */
static tp_scene *load_draft(const pv_state *st, tp_scene *sc)
{
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_info(sc, &in);
	int w = in.width / 4, h = in.height / 4;
	if (w > PV_DRAFT_W || h > PV_DRAFT_H) {
		double k = fmin((double)PV_DRAFT_W / w, (double)PV_DRAFT_H / h);
		w = (int)lround(w * k);
		h = (int)lround(h * k);
	}
	if (w < 16 || h < 16)
		return NULL;
	tp_load_options o;
	load_options(st, w, h, &o);
	o.checkpoint_bytes = PV_CHECKPOINT_BYTES / 8;
	tp_scene *d = NULL;
	tp_error err = TP_ERROR_INIT;
	const char *text = tp_scene_text(sc);
	if (!text)
		return NULL;
	/* the text is the scene after the command's sets; the draft's own (sph: coarser
	 * particles, draft.h) are tried first, and left out if the scene refuses them */
	char buf[PV_DRAFT_MAX_SETS * 48];
	const char *sets[PV_DRAFT_MAX_SETS];
	o.sets = sets;
	o.nsets = pv_draft_sets(text, in.solver, (double)w / in.ref_width, buf, sizeof buf, sets);
	if (o.nsets && tp_scene_load_string(text, st->path, &o, &d, &err) == 0)
		return d;
	o.nsets = 0;
	if (tp_scene_load_string(text, st->path, &o, &d, &err) < 0)
		return NULL;
	return d;
}

/* Records err as the current error with its line quoted from text (len bytes: what was
 * parsed), the caller holding st->mu. */
static void record_error(pv_state *st, const tp_error *err, int frame, const char *text,
			 size_t len)
{
	st->has_error = 1;
	st->error_frame = frame;
	st->error = *err;
	if (!st->error.text[0])
		snprintf(st->error.text, sizeof st->error.text, "%s", st->error.message);
	set_error_line(st->error_line, sizeof st->error_line, err, st->path, text, len);
}

void pv_state_reload(pv_state *st)
{
	tp_scene *sc = NULL;
	tp_error err = TP_ERROR_INIT;
	char *bytes = NULL;
	size_t len = 0;
	/* reload_mu only orders the reloads: no request waits on it, and the file is read
	 * without blocking (pv_read_scene) */
	pthread_mutex_lock(&st->reload_mu);
	/* the stats worker is still walking the last scene: it waits while this one loads */
	pthread_mutex_lock(&st->mu);
	st->rendering++;
	pthread_mutex_unlock(&st->mu);
	int rc = pv_read_scene(st, &bytes, &len, &err);
	if (rc == 0)
		rc = load_text(st, bytes, &sc, &err);
	if (rc == 0)
		tp_scene_set_cancel(sc, &st->cancel);
	tp_scene *old = NULL;
	if (rc == 0) { /* the draft first: ready when the page learns of the new scene */
		tp_scene *d = load_draft(st, sc);
		pthread_mutex_lock(&st->draft_mu);
		tp_scene *od = st->draft;
		st->draft = d;
		if (d && od)
			tp_scene_reuse_checkpoints(d, od);
		pthread_mutex_unlock(&st->draft_mu);
		tp_scene_free(od);
	}
	if (rc == 0) {
		const char *text = tp_scene_text(sc);
		char *copy = text ? strdup(text) : NULL;
		pthread_mutex_lock(&st->scene_mu);
		old = st->sc;
		st->sc = sc;
		/* the saved states from before the edit's first effect are still this scene's;
		 * when that is all of them (a colour, the background), so are the stats */
		tp_scene_info was = st->info;
		double until = old ? tp_scene_same_until(sc, old) : -INFINITY;
		if (old)
			tp_scene_reuse_checkpoints(sc, old);
		pthread_mutex_lock(&st->mu);
		st->info = (tp_scene_info)TP_SCENE_INFO_INIT;
		tp_scene_get_info(sc, &st->info);
		int same_sim = until >= st->info.frames / st->info.fps &&
			       st->info.frames == was.frames && st->info.fps == was.fps &&
			       st->info.width == was.width && st->info.height == was.height;
		snprintf(st->info_path, sizeof st->info_path, "%s",
			 st->info.path ? st->info.path : "");
		snprintf(st->info_solver, sizeof st->info_solver, "%s",
			 st->info.solver ? st->info.solver : "");
		st->loaded = 1;
		st->has_error = 0;
		st->error_line[0] = '\0';
		free(st->scene_text);
		st->scene_text = copy;
		free(st->bytes);
		st->bytes = bytes;
		bytes = NULL;
		st->generation++;
		st->scene_gen = st->generation;
		if (!same_sim) { /* else the walk under way (or done) goes on: the same numbers */
			st->stats_n = 0;
			st->stats_fields = 0;
			st->stats_gen = st->generation;
		}
		pthread_cond_broadcast(&st->cv);
		pthread_mutex_unlock(&st->mu);
		pthread_mutex_unlock(&st->scene_mu);
	} else {
		pthread_mutex_lock(&st->mu);
		record_error(st, &err, -1, bytes, len);
		st->generation++;
		pthread_mutex_unlock(&st->mu);
	}
	pthread_mutex_lock(&st->mu);
	st->rendering--;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	pthread_mutex_unlock(&st->reload_mu);
	tp_scene_free(old);
	free(bytes);
}

int pv_state_set_size(pv_state *st, int width, int height, double scale, tp_error *err)
{
	pthread_mutex_lock(&st->reload_mu);
	pv_config was = st->cfg;
	st->cfg.width = width;
	st->cfg.height = height;
	st->cfg.scale = width ? 0 : scale;
	/* the size must load (a scene of another shape refuses a WxH): tried first */
	tp_scene *sc = NULL;
	char *bytes = NULL;
	size_t len = 0;
	int rc = pv_read_scene(st, &bytes, &len, err);
	if (rc == 0)
		rc = load_text(st, bytes, &sc, err);
	free(bytes);
	tp_scene_free(sc);
	if (rc < 0)
		st->cfg = was;
	pthread_mutex_unlock(&st->reload_mu);
	if (rc < 0)
		return err->code = TP_ERROR_INPUT;
	pv_state_reload(st);
	return 0;
}

void pv_state_status(pv_state *st, pv_status *out)
{
	pthread_mutex_lock(&st->mu);
	memset(out, 0, sizeof *out);
	out->generation = st->generation;
	out->scene_generation = st->scene_gen;
	out->loaded = st->loaded;
	out->info = st->info;
	snprintf(out->path, sizeof out->path, "%s", st->loaded ? st->info_path : st->path);
	snprintf(out->solver, sizeof out->solver, "%s", st->info_solver);
	out->has_error = st->has_error;
	out->error_frame = st->error_frame;
	out->error = st->error;
	snprintf(out->error_line, sizeof out->error_line, "%s", st->error_line);
	out->stats_done = st->stats_n;
	pthread_mutex_unlock(&st->mu);
	out->info.path = out->path;
	out->info.solver = out->solver;
}

char *pv_state_scene_json(pv_state *st, unsigned long *generation)
{
	pthread_mutex_lock(&st->mu);
	char *s = st->scene_text ? strdup(st->scene_text) : NULL;
	*generation = st->scene_gen;
	pthread_mutex_unlock(&st->mu);
	return s;
}

/* A single-channel frame stretched for the eye: its lowest sample black, its highest
 * white, linearly between (8 bits); a flat frame as its top 8 bits. Display only: the
 * frame's own samples are what `tidepool render` writes. */
static int stretch_gray(const tp_image *in, tp_image *out)
{
	if (tp_image_alloc(out, in->w, in->h, TP_GRAY8) < 0)
		return -1;
	const int wide = in->fmt == TP_GRAY16;
	unsigned lo = 65535, hi = 0;
	for (int y = 0; y < in->h; y++) {
		const uint8_t *r = in->pixels + y * in->stride;
		for (int x = 0; x < in->w; x++) {
			unsigned v = wide ? ((const uint16_t *)(const void *)r)[x] : r[x];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	for (int y = 0; y < in->h; y++) {
		const uint8_t *r = in->pixels + y * in->stride;
		uint8_t *o = out->pixels + y * out->stride;
		for (int x = 0; x < in->w; x++) {
			unsigned v = wide ? ((const uint16_t *)(const void *)r)[x] : r[x];
			if (hi > lo)
				o[x] = (uint8_t)((255u * (v - lo) + (hi - lo) / 2) / (hi - lo));
			else
				o[x] = (uint8_t)(wide ? v >> 8 : v);
		}
	}
	return 0;
}

static int render_png(pv_state *st, int draft, int frame, int mode, int stretch,
		      unsigned char **png, size_t *size, unsigned long *gen_out, tp_error *err)
{
	tp_format f = TP_FORMAT_INIT;
	tp_image img;
	memset(&img, 0, sizeof img);
	*png = NULL;
	*size = 0;
	pthread_mutex_t *mu = draft ? &st->draft_mu : &st->scene_mu;
	pthread_mutex_lock(mu);
	tp_scene *sc = draft ? st->draft : st->sc;
	if (!sc) {
		pthread_mutex_unlock(mu);
		snprintf(err->text, sizeof err->text,
			 draft ? "no draft (the preview is small, or no scene loaded)"
			       : "no scene loaded");
		return err->code = draft ? TP_ERROR_ARGUMENT : TP_ERROR_INPUT;
	}
	pthread_mutex_lock(&st->mu);
	*gen_out = st->scene_gen;
	int frames = st->info.frames;
	st->rendering++;
	pthread_mutex_unlock(&st->mu);
	int rc = 0;
	if (frame < 0 || frame >= frames) {
		snprintf(err->text, sizeof err->text, "frame %d: out of range (0..%d)", frame,
			 frames - 1);
		rc = err->code = TP_ERROR_ARGUMENT;
	}
	if (rc == 0)
		rc = tp_scene_format(sc, (tp_mode)mode, &f, err);
	tp_pixfmt pf = TP_RGB8;
	if (rc == 0) {
		if (f.channels == 3)
			pf = f.bytes_per_sample == 1 ? TP_RGB8 : TP_RGB16;
		else if (f.channels == 4)
			pf = TP_RGBA8;
		else
			pf = f.bytes_per_sample == 1 ? TP_GRAY8 : TP_GRAY16;
		if (stretch && f.channels != 1) {
			snprintf(err->text, sizeof err->text,
				 "stretch: only for the single-channel modes (height, caustics, foam)");
			rc = err->code = TP_ERROR_ARGUMENT;
		}
	}
	if (rc == 0) {
		if (tp_image_alloc(&img, f.width, f.height, pf) < 0) {
			snprintf(err->text, sizeof err->text, "out of memory for a %dx%d frame",
				 f.width, f.height);
			rc = err->code = TP_ERROR_IO;
		}
	}
	if (rc == 0)
		rc = tp_scene_render(sc, frame, (tp_mode)mode, img.pixels, (size_t)img.stride, err);
	pthread_mutex_lock(&st->mu);
	st->rendering--;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	pthread_mutex_unlock(mu);
	/* a runtime failure: shown in the page (the full scene's; the draft's is its too) */
	if (!draft && (rc == TP_ERROR_IO || rc == TP_ERROR_INPUT)) {
		pthread_mutex_lock(&st->mu);
		if (st->scene_gen == *gen_out && !st->has_error && rc != TP_ERROR_CANCELLED)
			record_error(st, err, frame, st->bytes, st->bytes ? strlen(st->bytes) : 0);
		pthread_mutex_unlock(&st->mu);
	}
	if (rc == 0 && stretch) {
		tp_image shown;
		memset(&shown, 0, sizeof shown);
		if (stretch_gray(&img, &shown) < 0) {
			snprintf(err->text, sizeof err->text, "out of memory for a %dx%d frame", img.w,
				 img.h);
			rc = err->code = TP_ERROR_IO;
		}
		tp_image_free(&img);
		img = shown;
	}
	if (rc == 0) {
		tp_err e2;
		if (tp_png_encode(&img, PV_PNG_LEVEL, png, size, &e2) < 0) {
			snprintf(err->text, sizeof err->text, "%s", e2.msg);
			rc = err->code = TP_ERROR_IO;
		}
	}
	tp_image_free(&img);
	return rc;
}

int pv_state_frame_png(pv_state *st, int frame, int mode, int stretch, unsigned char **png,
		       size_t *size, unsigned long *gen_out, tp_error *err)
{
	return render_png(st, 0, frame, mode, stretch, png, size, gen_out, err);
}

int pv_state_draft_png(pv_state *st, int frame, int mode, int stretch, unsigned char **png,
		       size_t *size, unsigned long *gen_out, tp_error *err)
{
	return render_png(st, 1, frame, mode, stretch, png, size, gen_out, err);
}

char *pv_state_stats_json(pv_state *st)
{
	pv_json j;
	pv_json_init(&j);
	pthread_mutex_lock(&st->mu);
	pv_json_printf(&j, "{\"generation\":%lu,\"frames\":%d,\"done\":%d,\"fps\":", st->scene_gen,
		       st->loaded ? st->info.frames : 0, st->stats_n);
	pv_json_number(&j, st->loaded ? st->info.fps : 0);
	pv_json_puts(&j, ",\"fields\":[");
	for (int k = 0; k < st->stats_fields; k++) {
		pv_json_puts(&j, k ? "," : "");
		pv_json_string(&j, st->stats_names[k]);
	}
	pv_json_puts(&j, "],\"t\":[");
	for (int i = 0; i < st->stats_n; i++) {
		pv_json_puts(&j, i ? "," : "");
		pv_json_number(&j, st->stats[(size_t)i * (1 + TP_FRAME_STATS_MAX)]);
	}
	pv_json_puts(&j, "],\"values\":[");
	for (int k = 0; k < st->stats_fields; k++) {
		pv_json_puts(&j, k ? ",[" : "[");
		for (int i = 0; i < st->stats_n; i++) {
			pv_json_puts(&j, i ? "," : "");
			pv_json_number(&j, st->stats[(size_t)i * (1 + TP_FRAME_STATS_MAX) + 1 + k]);
		}
		pv_json_puts(&j, "]");
	}
	pv_json_puts(&j, "],\"boxes\":[");
	for (int i = 0; st->nposes && i < st->stats_n; i++) {
		pv_json_puts(&j, i ? ",[" : "[");
		for (int b = 0; b < st->nposes; b++) {
			const tp_pose *q = &st->poses[(size_t)i * PV_POSES + b];
			pv_json_puts(&j, b ? ",[" : "[");
			pv_json_number(&j, q->x);
			pv_json_puts(&j, ",");
			pv_json_number(&j, q->y);
			pv_json_puts(&j, ",");
			pv_json_number(&j, q->angle);
			pv_json_puts(&j, "]");
		}
		pv_json_puts(&j, "]");
	}
	pv_json_puts(&j, "]}");
	pthread_mutex_unlock(&st->mu);
	return pv_json_finish(&j);
}

/* Waits until ms passed or the state is stopping or gen is stale (caller holds st->mu).
 * Returns 1 if the walk for gen should go on. */
static int wait_still_wanted(pv_state *st, unsigned long gen, int ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!st->stop && st->stats_gen == gen)
		if (pthread_cond_timedwait(&st->cv, &st->mu, &until) == ETIMEDOUT)
			break;
	return !st->stop && st->stats_gen == gen;
}

/* The stats worker: for each new generation, a copy of the scene walks every frame with
 * one thread and records tp_scene_stats(); a failure is recorded as the page's error.
 * It runs at the lowest priority (on Linux nice is per thread) and waits while a frame the
 * page asked for is being made, so that it takes only the CPU those frames leave idle. */
static void *stats_worker(void *arg)
{
	pv_state *st = arg;
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&st->mu);
	for (;;) {
		while (!st->stop && (st->stats_gen == 0 || st->stats_n >= st->info.frames))
			pthread_cond_wait(&st->cv, &st->mu);
		if (st->stop)
			break;
		unsigned long gen = st->stats_gen;
		int frames = st->info.frames;
		if (!wait_still_wanted(st, gen, PV_STATS_DELAY_MS))
			continue;
		pthread_mutex_unlock(&st->mu);

		tp_scene *sc = NULL;
		tp_error err = TP_ERROR_INIT;
		tp_load_options o = TP_LOAD_OPTIONS_INIT;
		tp_scene_info in = TP_SCENE_INFO_INIT;
		/* the size the page's scene has, whichever way it was chosen */
		pthread_mutex_lock(&st->mu);
		in = st->info;
		/* the bytes the page's scene came from, not the file as it is now */
		char *bytes = st->bytes ? strdup(st->bytes) : NULL;
		pthread_mutex_unlock(&st->mu);
		load_options(st, in.width, in.height, &o);
		o.threads = 1;
		o.checkpoint_bytes = (size_t)1 << 20;
		int rc = bytes ? tp_scene_load_string(bytes, st->path, &o, &sc, &err) : -1;
		if (rc == 0)
			tp_scene_set_cancel(sc, &st->cancel);
		double *buf = NULL;
		if (rc == 0 &&
		    !(buf = malloc((size_t)frames * (1 + TP_FRAME_STATS_MAX) * sizeof *buf)))
			rc = -1;
		pthread_mutex_lock(&st->mu);
		tp_pose *poses = rc == 0 ? calloc((size_t)frames * PV_POSES, sizeof *poses) : NULL;
		if (rc == 0 && !poses) {
			free(buf);
			buf = NULL;
			rc = -1;
		}
		if (rc == 0 && st->stats_gen == gen) {
			free(st->stats);
			free(st->poses);
			st->poses = poses;
			poses = NULL;
			st->nposes = 0;
			st->stats = buf;
			st->stats_cap = frames;
			buf = NULL;
		}
		pthread_mutex_unlock(&st->mu);
		free(buf);
		free(poses);
		for (int i = 0; rc == 0 && i < frames; i++) {
			/* Not beside a frame the page waits for (a reload simulating from the start,
			 * a seek) nor a scene being loaded: even at the lowest priority this thread
			 * took about a tenth of such a frame's time from the threads that make it. */
			pthread_mutex_lock(&st->mu);
			while (st->rendering > 0 && !st->stop && st->stats_gen == gen)
				pthread_cond_wait(&st->cv, &st->mu);
			pthread_mutex_unlock(&st->mu);
			tp_frame_stats fs = TP_FRAME_STATS_INIT;
			rc = tp_scene_stats(sc, i, &fs, &err);
			/* where the boxes are (floating ones move by themselves), at no cost: the
			 * scene is at frame i */
			tp_pose pose[PV_POSES];
			for (int b = 0; b < PV_POSES; b++)
				pose[b] = (tp_pose)TP_POSE_INIT;
			int nb = rc == 0 ? tp_scene_boxes(sc, i, pose, PV_POSES, &err) : 0;
			if (nb < 0)
				rc = nb;
			pthread_mutex_lock(&st->mu);
			int wanted = !st->stop && st->stats_gen == gen;
			if (wanted && rc < 0 && !st->has_error)
				record_error(st, &err, i, bytes, strlen(bytes));
			if (wanted && rc == 0 && i < st->stats_cap) {
				double *row = st->stats + (size_t)i * (1 + TP_FRAME_STATS_MAX);
				row[0] = fs.t;
				st->stats_fields =
					fs.n < TP_FRAME_STATS_MAX ? fs.n : TP_FRAME_STATS_MAX;
				for (int k = 0; k < st->stats_fields; k++) {
					st->stats_names[k] = fs.name[k];
					row[1 + k] = fs.value[k];
				}
				nb = nb < PV_POSES ? nb : PV_POSES;
				memcpy(st->poses + (size_t)i * PV_POSES, pose, (size_t)nb * sizeof *pose);
				st->nposes = nb;
				st->stats_n = i + 1;
			}
			pthread_mutex_unlock(&st->mu);
			if (!wanted)
				break;
		}
		tp_scene_free(sc);
		free(bytes);
		pthread_mutex_lock(&st->mu);
		if (st->stats_gen == gen && st->stats_n < frames)
			st->stats_gen = 0; /* failed: wait for the next reload */
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

int pv_state_create(const pv_config *cfg, pv_state **out, tp_error *err)
{
	*out = NULL;
	pv_state *st = calloc(1, sizeof *st);
	if (!st) {
		snprintf(err->text, sizeof err->text, "out of memory");
		return err->code = TP_ERROR_IO;
	}
	st->cfg = *cfg;
	snprintf(st->path, sizeof st->path, "%s", cfg->scene_path);
	/* a scene that is a link when the preview starts is read through that link only */
	ssize_t k = readlink(st->path, st->link, sizeof st->link - 1);
	st->link[k > 0 ? k : 0] = '\0';
	pthread_mutex_init(&st->reload_mu, NULL);
	pthread_mutex_init(&st->scene_mu, NULL);
	pthread_mutex_init(&st->draft_mu, NULL);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv, NULL);
	if (pthread_create(&st->worker, NULL, stats_worker, st) == 0)
		st->worker_started = 1;
	*out = st;
	return 0;
}

void pv_state_stop(pv_state *st)
{
	if (!st)
		return;
	st->cancel = 1;
	pthread_mutex_lock(&st->mu);
	st->stop = 1;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
}

void pv_state_destroy(pv_state *st)
{
	if (!st)
		return;
	pv_state_stop(st);
	if (st->worker_started)
		pthread_join(st->worker, NULL);
	tp_scene_free(st->sc);
	tp_scene_free(st->draft);
	free(st->scene_text);
	free(st->bytes);
	free(st->stats);
	free(st->poses);
	pthread_cond_destroy(&st->cv);
	pthread_mutex_destroy(&st->mu);
	pthread_mutex_destroy(&st->scene_mu);
	pthread_mutex_destroy(&st->draft_mu);
	pthread_mutex_destroy(&st->reload_mu);
	free(st);
}
