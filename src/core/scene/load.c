/*
 * load.c - scene_load(): read the file, check it is JSON, parse it with cJSON, then read
 * the top-level fields in dependency order (size, fps and frames before anything placed
 * in the pool or in time; the solver before its params). items.c reads the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scene/jsonpos.h"
#include "scene/ld.h"
#include "util/suggest.h"
#include "util/fsutil.h"
#include "util/opts.h"

/* Scene files are small; anything bigger is a mistake (a video or a dump passed by
 * accident), refused before it is read. */
#define SCENE_MAX_FILE (16u << 20)

#define SCENE_FORMAT "tidepool-scene/1"
#define SEED_MAX 9007199254740992.0 /* 2^53: every integer up to it is exact in JSON */
#define SCALE_MAX 64.0               /* render size / scene size; the pixel limit decides */

static const char *const top_keys[] = {
	"$schema", "format", "description", "size", "fps", "duration", "frames", "seed", "solver", "params",
	"substeps", "boundary", "background", "render", "drops", "emitters", "boxes", "tank",
	"blocks", "output", "outputs", "maps", "loop", "flipbook", "variants", "resolution", "ambient",
	NULL,
};

static const char *const boundary_names[] = { "reflect", "absorb", "wrap", NULL };

static int check_overrides(const scene_overrides *ov, tp_err *err)
{
	if (!ov)
		return 0;
	const char *size = scene_overrides_name(ov, SCENE_OV_SIZE);
	const char *scale = scene_overrides_name(ov, SCENE_OV_SCALE);
	if (ov->width < 0 || ov->height < 0 || (ov->width && (ov->width < 2 || ov->width > 8192)) ||
	    (ov->height && (ov->height < 2 || ov->height > 8192)))
		return tp_errf(err, TP_EARG,
			       "%s: width and height must be in 2..8192 (got %dx%d)", size,
			       ov->width, ov->height);
	if (ov->scale && (ov->width || ov->height))
		return tp_errf(err, TP_EARG, "%s and %s: give one or the other", scale, size);
	if (ov->scale < 0 || ov->scale > SCALE_MAX || ov->scale != ov->scale)
		return tp_errf(err, TP_EARG, "%s: must be in 0..%g (got %g)", scale, SCALE_MAX,
			       ov->scale);
	if (ov->frames < 0 || ov->frames > SCENE_MAX_FRAMES)
		return tp_errf(err, TP_EARG, "%s: must be in 1..%d (got %d)",
			       scene_overrides_name(ov, SCENE_OV_FRAMES), SCENE_MAX_FRAMES,
			       ov->frames);
	if (ov->has_seed && ov->seed > (UINT64_C(1) << 53)) /* not via double: 2^53 + 1 rounds */
		return tp_errf(err, TP_EARG, "%s: must be in 0..9007199254740992 (got %llu)",
			       scene_overrides_name(ov, SCENE_OV_SEED),
			       (unsigned long long)ov->seed);
	if (ov->output && !ov->output[0])
		return tp_errf(err, TP_EARG, "%s: the output path is empty",
			       scene_overrides_name(ov, SCENE_OV_OUTPUT));
	return 0;
}

/* Reads the whole file into a NUL-terminated buffer, refusing directories and anything
 * over SCENE_MAX_FILE without reading it (a regular file by its size, a pipe or device
 * by reading at most one byte past the limit). */
static int read_file(const char *path, char **out, size_t *outlen, tp_err *err)
{
	char *buf = NULL;
	size_t len = 0, cap;
	int rc = 0;
	/* O_NONBLOCK: a FIFO nobody writes reads as empty instead of hanging in open(). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return tp_errf(err, TP_EIO, "%s: cannot open (%s)", path, strerror(errno));
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || fstat(fd, &st) != 0) {
		rc = tp_errf(err, TP_EIO, "%s: cannot read (%s)", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = tp_errf(err, TP_EIO, "%s: is a directory, not a scene file", path);
		goto fail;
	}
	if (S_ISREG(st.st_mode) && st.st_size > (off_t)SCENE_MAX_FILE) {
		rc = tp_errf(err, TP_EINPUT, "%s: too large for a scene file (%.1f MiB; the limit is %u MiB)",
			path, (double)st.st_size / (1 << 20), SCENE_MAX_FILE >> 20);
		goto fail;
	}
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
	buf = malloc(cap + 1);
	if (!buf) {
		rc = tp_errf(err, TP_EIO, "out of memory");
		goto fail;
	}
	for (;;) {
		if (len == cap) {
			if (cap > SCENE_MAX_FILE) {
				rc = tp_errf(err, TP_EINPUT, "%s: too large for a scene file (over %u MiB)", path,
					SCENE_MAX_FILE >> 20);
				goto fail;
			}
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				rc = tp_errf(err, TP_EIO, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = tp_errf(err, TP_EIO, "%s: cannot read (%s)", path, strerror(errno));
			goto fail;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (len > SCENE_MAX_FILE) {
		rc = tp_errf(err, TP_EINPUT, "%s: too large for a scene file (over %u MiB)", path,
			SCENE_MAX_FILE >> 20);
		goto fail;
	}
	close(fd);
	buf[len] = 0;
	*out = buf;
	*outlen = len;
	return 0;
fail:
	free(buf);
	close(fd);
	return rc;
}

/* Notes which values the command line gave, so that messages can say so. */
static int keep_origins(scene_src *src, const scene_overrides *ov)
{
	if (!ov)
		return 0;
	src->from = (ov->width || ov->height ? SCENE_FROM_SIZE : 0) | (ov->scale ? SCENE_FROM_SCALE : 0) |
		    (ov->frames ? SCENE_FROM_FRAMES : 0) | (ov->has_seed ? SCENE_FROM_SEED : 0) |
		    (ov->output ? SCENE_FROM_OUTPUT : 0);
	for (int i = 0; i < SCENE_OV_COUNT; i++)
		if (ov->names[i] && !(src->ov_names[i] = strdup(ov->names[i])))
			return TP_EIO;
	if (ov->nsets <= 0)
		return 0;
	if (!(src->sets = calloc((size_t)ov->nsets, sizeof *src->sets)))
		return TP_EIO;
	for (int i = 0; i < ov->nsets; i++) {
		const char *eq = strchr(ov->sets[i], '=');
		size_t k = eq ? (size_t)(eq - ov->sets[i]) : strlen(ov->sets[i]);
		if (!(src->sets[src->nsets] = strndup(ov->sets[i], k)))
			return TP_EIO;
		src->nsets++;
	}
	return 0;
}

static int fail_text(const char *path, const char *text, size_t len, size_t off, const char *why,
	tp_err *err)
{
	int line, col;
	jsonpos_linecol(text, len, off, &line, &col);
	return tp_errf(err, TP_EINPUT, "%s:%d:%d: %s", path, line, col, why);
}

static int read_format(ld *L)
{
	const cJSON *f = ld_get(L->root, "format");
	char got[96];
	if (!f)
		return ld_missing(L, L->root, "format",
			" (a scene file starts with \"format\": \"" SCENE_FORMAT "\")");
	if (!cJSON_IsString(f) || strcmp(f->valuestring, SCENE_FORMAT))
		return ld_fail(L, f, 0, "unsupported format (got %s; this version reads \"" SCENE_FORMAT "\")",
			ld_got(L, f, got, sizeof got));
	return 0;
}

static long gcd(long a, long b)
{
	while (b) {
		long t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Where a render size comes from, for messages. */
typedef struct size_origin {
	const char *opt; /* the size or scale override's name, or NULL for "resolution" */
	const cJSON *at; /* the scene member, for ld_fail */
} size_origin;

static int size_fail(ld *L, const size_origin *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int size_fail(ld *L, const size_origin *o, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (o->opt)
		return tp_errf(L->err, TP_EARG, "%s: %s: %s", L->file, o->opt, msg);
	return ld_fail(L, o->at, 0, "%s", msg);
}

/* The render size: --size, --scale, the scene's "resolution" ([w, h], a factor such as
 * 0.25, or a percentage "25%"), or the scene's own size. A size must have the scene's
 * aspect ratio up to rounding (one side may be off by less than a pixel): anything else
 * would stretch the pool or misplace what is in it, so it is refused with the sizes that
 * would fit. Sets the render size (L->out_w, out_h) and the scale factors. */
static int read_resolution(ld *L, const scene_overrides *ov)
{
	scene *s = L->s;
	const int W0 = s->ref_width, H0 = s->ref_height;
	const cJSON *res = ld_get(L->root, "resolution");
	size_origin o = { NULL, res };
	double f = 0;
	int W = W0, H = H0, rc;
	char got[96];
	if (ov && ov->width) {
		o.opt = scene_overrides_name(ov, SCENE_OV_SIZE);
		W = ov->width;
		H = ov->height;
	} else if (ov && ov->scale > 0) {
		o.opt = scene_overrides_name(ov, SCENE_OV_SCALE);
		f = ov->scale;
	} else if (res && cJSON_IsArray(res)) {
		double wh[2];
		const ld_range side = { 2, 8192, LD_INT };
		if ((rc = ld_vec(L, res, 2, &side, wh)) < 0)
			return rc;
		W = (int)wh[0];
		H = (int)wh[1];
	} else if (res && cJSON_IsNumber(res)) {
		const ld_range fr = { 0, SCALE_MAX, LD_LO_OPEN };
		if ((rc = ld_num(L, res, &fr, &f)) < 0)
			return rc;
	} else if (res) {
		char *end = NULL;
		double pc = cJSON_IsString(res) ? strtod(res->valuestring, &end) : 0;
		if (!cJSON_IsString(res) || end == res->valuestring || strcmp(end, "%") ||
		    !(pc > 0 && pc <= 100 * SCALE_MAX))
			return ld_fail(L, res, 0,
				"must be the render size [w, h], a factor such as 0.5, or a percentage such "
				"as \"50%%\" (got %s)", ld_got(L, res, got, sizeof got));
		f = pc / 100;
	}
	if (f > 0) {
		double fw = floor(W0 * f + 0.5), fh = floor(H0 * f + 0.5);
		if (!(fw >= 2 && fh >= 2 && fw <= 8192 && fh <= 8192))
			return size_fail(L, &o,
				"%g x the scene's %dx%d is %.0fx%.0f; each side must be in 2..8192", f, W0,
				H0, fw, fh);
		W = (int)fw;
		H = (int)fh;
	}
	if ((double)W * H > SCENE_MAX_PIXELS)
		return size_fail(L, &o, "%dx%d is more than %.0f pixels", W, H, SCENE_MAX_PIXELS);
	/* Same shape: the other side, scaled like this one, rounds to what was asked. */
	double hw = (double)W * H0 / W0, wh = (double)H * W0 / H0;
	if (fabs(hw - H) >= 1 && fabs(wh - W) >= 1)
		return size_fail(L, &o,
			"%dx%d has another shape than the scene's %dx%d (its \"size\", the frame of "
			"reference), which would stretch it; use %dx%.0f or %.0fx%d, or change the "
			"scene's \"size\"", W, H, W0, H0, W, floor(hw + 0.5), floor(wh + 0.5), H);
	L->out_w = W; /* s->width, height stay the scene's until ld_scale */
	L->out_h = H;
	long g = gcd(W, W0);
	s->scale_num = (int)(W / g);
	s->scale_den = (int)(W0 / g);
	s->scale = (double)W / W0;
	s->scale_x = s->scale;
	s->scale_y = (double)H / H0;
	return 0;
}

static int read_timing(ld *L, const scene_overrides *ov)
{
	scene *s = L->s;
	const cJSON *size = ld_get(L->root, "size");
	int rc;
	double wh[2] = { 640, 360 }, fps = 30, duration = 4;
	const ld_range side = { 2, 8192, LD_INT };
	if (size && (rc = ld_vec(L, size, 2, &side, wh)) < 0)
		return rc;
	/* Everything is read and checked in scene units (width and height stay the scene's
	 * until scale.c converts at the end). */
	s->ref_width = s->width = (int)wh[0];
	s->ref_height = s->height = (int)wh[1];
	if ((double)s->width * s->height > SCENE_MAX_PIXELS)
		return ld_fail(L, size, 0, "%dx%d is more than %.0f pixels", s->width, s->height,
			SCENE_MAX_PIXELS);
	if ((rc = read_resolution(L, ov)) < 0)
		return rc;

	const ld_range fps_r = { 0, 240, LD_LO_OPEN };
	if ((rc = ld_opt_num(L, L->root, "fps", &fps_r, &fps)) < 0)
		return rc;
	s->fps = fps;

	const cJSON *dur = ld_get(L->root, "duration"), *frames = ld_get(L->root, "frames");
	if (dur && frames)
		return ld_fail(L, frames, 1, "give either \"duration\" or \"frames\", not both");
	if (frames) {
		const ld_range fr = { 1, SCENE_MAX_FRAMES, LD_INT };
		if ((rc = ld_int(L, frames, &fr, &s->frames)) < 0)
			return rc;
	} else {
		const ld_range dr = { 0, 1e9, LD_LO_OPEN };
		if (dur && (rc = ld_num(L, dur, &dr, &duration)) < 0)
			return rc;
		long n = lround(duration * fps);
		if (n < 1)
			return ld_fail(L, dur, 0, "too short: %g s at %g fps is less than one frame", duration,
				fps);
		if (n > SCENE_MAX_FRAMES)
			return ld_fail(L, dur ? dur : L->root, 0,
				"%g s at %g fps is %ld frames, more than the limit of %d", duration, fps, n,
				SCENE_MAX_FRAMES);
		s->frames = (int)n;
	}
	if (ov && ov->frames)
		s->frames = ov->frames;
	L->end = s->frames / s->fps;

	double seed = 1;
	const ld_range seed_r = { 0, SEED_MAX, LD_INT };
	if ((rc = ld_opt_num(L, L->root, "seed", &seed_r, &seed)) < 0)
		return rc;
	/* 2^53 + 1 reads as the double 2^53: check the digits as written, like --seed. */
	char sd[64];
	const cJSON *sv = ld_get(L->root, "seed");
	if (seed == SEED_MAX && strtold(ld_got(L, sv, sd, sizeof sd), NULL) > SEED_MAX)
		return ld_fail(L, sv, 0, "must be in 0..9007199254740992 (got %s)", sd);
	s->seed = ov && ov->has_seed ? ov->seed : (uint64_t)seed;
	return 0;
}

static int read_solver(ld *L)
{
	scene *s = L->s;
	const cJSON *v = ld_get(L->root, "solver");
	const char *name = "ripple";
	const char *names[64];
	int n = 0, rc, idx;
	for (; n < 63 && L->solvers[n]; n++)
		names[n] = L->solvers[n]->name;
	names[n] = NULL;
	if (v) {
		if ((rc = ld_enum(L, v, names, &idx)) < 0)
			return rc;
		name = names[idx];
	}
	s->solver = NULL;
	for (int i = 0; i < n && !s->solver; i++)
		if (!strcmp(names[i], name))
			s->solver = L->solvers[i];
	if (!s->solver)
		return tp_errf(L->err, TP_EIO, "%s: the default solver \"%s\" is not built in", L->file, name);

	const ld_range sub = { 1, 64, LD_INT };
	s->substeps = 1;
	if ((rc = ld_opt_int(L, L->root, "substeps", &sub, &s->substeps)) < 0)
		return rc;
	int b = SCENE_BOUNDARY_REFLECT;
	if ((v = ld_get(L->root, "boundary")) && (rc = ld_enum(L, v, boundary_names, &b)) < 0)
		return rc;
	s->boundary = (scene_boundary)b;
	return 0;
}

/* Each key must be an option of the chosen solver; values are range-checked by
 * tp_opts_set() into a scratch private struct so the messages give the solver's own
 * ranges, and are kept as doubles for solver_create() to apply again. */
static int read_params(ld *L)
{
	scene *s = L->s;
	const tp_solver_kind *sv = s->solver;
	const cJSON *p = ld_get(L->root, "params");
	const char *names[65];
	char list[512], got[96];
	int n = 0, rc = 0;
	void *scratch = NULL;
	if (!p)
		return 0;
	for (const tp_option *o = sv->options; o && o->name && n < 64; o++)
		names[n++] = o->name;
	names[n] = NULL;
	if (!cJSON_IsObject(p))
		return ld_fail(L, p, 0, "must be an object {...} (got %s)", ld_got(L, p, got, sizeof got));
	for (const cJSON *m = p->child; m; m = m->next) {
		if (tp_opts_find(sv->options, m->string))
			continue;
		const char *sug = tp_suggest(m->string, names);
		ld_list(names, list, sizeof list);
		if (!n)
			return ld_fail(L, m, 1, "solver \"%s\" has no parameters", sv->name);
		if (sug)
			return ld_fail(L, m, 1, "unknown parameter of solver \"%s\" (did you mean \"%s\"?)",
				sv->name, sug);
		return ld_fail(L, m, 1, "unknown parameter of solver \"%s\" (parameters: %s)", sv->name,
			list);
	}
	if ((rc = ld_object(L, p, names)) < 0) /* duplicates */
		return rc;
	int count = cJSON_GetArraySize(p);
	s->params = calloc((size_t)count + 1, sizeof *s->params);
	scratch = calloc(1, sv->priv_size ? sv->priv_size : 1);
	if (!s->params || !scratch) {
		rc = tp_errf(L->err, TP_EIO, "out of memory");
		goto fail;
	}
	tp_opts_defaults(scratch, sv->options);
	for (const cJSON *m = p->child; m; m = m->next) {
		const tp_option *o = tp_opts_find(sv->options, m->string);
		double v = 0;
		int iv = 0;
		if (o->type == TP_OPT_BOOL) {
			if ((rc = ld_bool(L, m, &iv)) < 0)
				goto fail;
			v = iv;
		} else if (o->type == TP_OPT_ENUM) {
			if ((rc = ld_enum(L, m, o->choices, &iv)) < 0)
				goto fail;
			v = iv;
		} else {
			if (!cJSON_IsNumber(m)) {
				rc = ld_fail(L, m, 0, "must be %s (got %s)",
					o->type == TP_OPT_INT ? "an integer" : "a number", ld_got(L, m, got, sizeof got));
				goto fail;
			}
			v = m->valuedouble;
		}
		tp_err e;
		if (tp_opts_set(scratch, o, v, &e) < 0) {
			/* tp_opts_set says "NAME: reason"; the location already names it. */
			size_t k = strlen(o->name);
			const char *why = !strncmp(e.msg, o->name, k) && e.msg[k] == ':' ? e.msg + k + 2 : e.msg;
			rc = ld_fail(L, m, 0, "%s", why);
			goto fail;
		}
		s->params[s->nparams].name = strdup(o->name);
		if (!s->params[s->nparams].name) {
			rc = tp_errf(L->err, TP_EIO, "out of memory");
			goto fail;
		}
		s->params[s->nparams++].value = v;
	}
fail:
	free(scratch);
	return rc;
}

static int read_output(ld *L, const scene_overrides *ov)
{
	const cJSON *v = ld_get(L->root, "output");
	const char *o;
	int rc;
	if (v && (rc = ld_string(L, v, &o)) < 0)
		return rc;
	if (ov && ov->output) {
		L->s->output = strdup(ov->output);
		return L->s->output ? 0 : tp_errf(L->err, TP_EIO, "out of memory");
	}
	return v ? ld_resolve(L, v, o, &L->s->output) : 0;
}

static int read_scene(ld *L, const scene_overrides *ov)
{
	int rc;
	const cJSON *v;
	char got[96];
	if (!cJSON_IsObject(L->root))
		return ld_fail(L, L->root, 0, "a scene must be a JSON object {...} (got %s)",
			ld_got(L, L->root, got, sizeof got));
	if ((rc = read_format(L)) < 0 || (rc = ld_object(L, L->root, top_keys)) < 0)
		return rc;
	const char *desc;
	if ((v = ld_get(L->root, "description")) && (rc = ld_string(L, v, &desc)) < 0)
		return rc;
	/* "$schema" names the JSON Schema for editors (scenes/schema/); tidepool ignores it. */
	if ((v = ld_get(L->root, "$schema")) && (rc = ld_string(L, v, &desc)) < 0)
		return rc;
	if ((rc = read_timing(L, ov)) < 0 || (rc = ld_loop(L, ov)) < 0 || (rc = read_solver(L)) < 0 ||
	    (rc = read_params(L)) < 0)
		return rc;
	if ((rc = ld_background(L, ld_get(L->root, "background"))) < 0 ||
	    (rc = ld_render(L, ld_get(L->root, "render"))) < 0 ||
	    (rc = ld_drops(L, ld_get(L->root, "drops"))) < 0 ||
	    (rc = ld_emitters(L, ld_get(L->root, "emitters"))) < 0 ||
	    (rc = ld_boxes(L, ld_get(L->root, "boxes"))) < 0 ||
	    (rc = ld_tank(L, ld_get(L->root, "tank"))) < 0 ||
	    (rc = ld_blocks(L, ld_get(L->root, "blocks"))) < 0 ||
	    (rc = ld_ambient(L, ld_get(L->root, "ambient"))) < 0)
		return rc;
	if ((rc = read_output(L, ov)) < 0 || (rc = ld_textures(L)) < 0 || (rc = ld_support(L)) < 0 ||
	    (rc = ld_reach(L)) < 0)
		return rc;
	return ld_scale(L);
}

/* Loads the scene from `text` (len bytes, NUL-terminated, malloc'd: taken over and freed
 * here) read from `path`. */
static int load_buffer(const char *path, char *text, size_t len, const scene_overrides *ov,
		       const tp_solver_kind *const *solvers, scene **out, tp_err *err)
{
	size_t off;
	const char *why;
	cJSON *root = NULL;
	scene *s = NULL;
	char dir[4096];
	int rc;
	ld_edits edits = {0};

	if (jsonpos_check_text(text, len, &off, &why) < 0 || jsonpos_check(text, len, &off, &why) < 0) {
		rc = fail_text(path, text, len, off, why, err);
		goto fail;
	}
	if (ov && ov->nsets &&
	    (rc = ld_apply_sets(path, &text, &len, ov->sets, ov->nsets, ov->names[SCENE_OV_SETS],
				&edits, err)) < 0)
		goto fail;
	/* The text is known-good JSON, so a failure here can only be memory. The BOM that
	 * jsonpos tolerates is skipped for cJSON. */
	size_t bom = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
	root = cJSON_ParseWithLength(text + bom, len - bom);
	s = calloc(1, sizeof *s);
	tp_path_dir(path, dir, sizeof dir);
	if (!root || !s || !(s->path = strdup(path)) || !(s->dir = strdup(dir))) {
		rc = tp_errf(err, TP_EIO, "%s: out of memory", path);
		goto fail;
	}
	scene_text_digest(text, len, s->text_sha256);
	/* The text and where each member was written stay with the scene, for scene_errf(). */
	if (!(s->src = calloc(1, sizeof *s->src))) {
		rc = tp_errf(err, TP_EIO, "%s: out of memory", path);
		goto fail;
	}
	s->src->file = s->path;
	s->src->buf = text;
	s->src->text = text + bom;
	s->src->len = len - bom;
	s->src->bom = bom;
	s->src->edits = edits;
	memset(&edits, 0, sizeof edits);
	text = NULL;
	if ((rc = keep_origins(s->src, ov)) < 0 || (rc = scene_src_index(s->src, root)) < 0) {
		rc = tp_errf(err, TP_EIO, "%s: out of memory", path);
		goto fail;
	}
	ld L = { .file = path, .text = s->src->text, .len = s->src->len, .root = root,
		 .err = err, .s = s, .solvers = solvers };
	if ((rc = read_scene(&L, ov)) < 0)
		goto fail;
	/* Once read, the scene is plain data: scene_src keeps the positions, not the tree. */
	cJSON_Delete(root);
	*out = s;
	return 0;
fail:
	ld_edits_free(&edits);
	scene_destroy(s);
	cJSON_Delete(root);
	free(text);
	return rc;
}

int scene_load(const char *path, const scene_overrides *ov, const tp_solver_kind *const *solvers,
	       scene **out, tp_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = check_overrides(ov, err)) < 0)
		return rc;
	if ((rc = read_file(path, &text, &len, err)) < 0)
		return rc;
	return load_buffer(path, text, len, ov, solvers, out, err);
}

int scene_load_text(const char *name, const char *text, size_t len, const scene_overrides *ov,
		    const tp_solver_kind *const *solvers, scene **out, tp_err *err)
{
	int rc;

	*out = NULL;
	if ((rc = check_overrides(ov, err)) < 0)
		return rc;
	if (len > SCENE_MAX_FILE)
		return tp_errf(err, TP_EINPUT, "%s: too large for a scene (over %u MiB)", name,
			       SCENE_MAX_FILE >> 20);
	char *buf = malloc(len + 1);
	if (!buf)
		return tp_errf(err, TP_EIO, "out of memory");
	memcpy(buf, text, len);
	buf[len] = 0;
	return load_buffer(name, buf, len, ov, solvers, out, err);
}

const char *scene_text(const scene *s, size_t *len)
{
	if (!s || !s->src)
		return NULL;
	if (len)
		*len = s->src->len;
	return s->src->text;
}

static void free_path(scene_path *p)
{
	free(p->keys);
	p->keys = NULL;
	p->n = 0;
}

void scene_destroy(scene *s)
{
	if (!s)
		return;
	for (int i = 0; s->params && i < s->nparams; i++)
		free(s->params[i].name);
	free(s->params);
	free(s->background.image);
	tp_image_free(&s->background.pixels);
	free(s->drops);
	free(s->emitters);
	for (int i = 0; s->boxes && i < s->nboxes; i++)
		free_path(&s->boxes[i].path);
	free(s->boxes);
	free(s->blocks);
	free_path(&s->tank.path);
	free(s->output);
	scene_free_textures(s);
	scene_src_free(s->src);
	free(s->path);
	free(s->dir);
	free(s);
}
