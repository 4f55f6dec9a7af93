/*
 * api.c - libtidepool's public API (include/tidepool.h) over the core: a loaded scene,
 * the simulation loop at some frame, one renderer per mode made when first asked for,
 * and checkpoints in memory so that a seek backwards replays from the nearest one.
 *
 * The frames are those of `tidepool render`: the same scene loader, loop and renderers,
 * so the same bytes. Checkpoints are the farm's (loop_save / loop_load, sim/ckpt.h)
 * written to memory: a checkpoint at frame k is the state just after frame k-1, so
 * loading it into a fresh loop and stepping once gives frame k bit for bit.
 */
#define _GNU_SOURCE /* open_memstream, fmemopen */
#include <math.h>
#include <errno.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_impl.h"
#include "render/modes.h"
#include "render/render.h"
#include "scene/scene.h"
#include "sim/loop.h"
#include "sim/stepper.h"
#include "solvers/solver.h"
#include "util/error.h"
#include "util/image.h"

#define DEFAULT_CKPT_BYTES ((size_t)256 << 20)
/* Seconds of stepping between two checkpoints when the caller did not fix the spacing:
 * a seek then replays at most about this much (docs/api.md). Saving a state costs about as
 * much as stepping a frame of the integer solvers, so a checkpoint every frame would make
 * playing forwards several times slower. */
#define CKPT_GAP_SECONDS 0.04

/* The public mode numbers are scene_mode's. */
_Static_assert((int)TP_MODE_COLOR == (int)SCENE_MODE_COLOR &&
		       (int)TP_MODE_HEIGHT == (int)SCENE_MODE_HEIGHT &&
		       (int)TP_MODE_NORMAL == (int)SCENE_MODE_NORMAL &&
		       (int)TP_MODE_CAUSTICS == (int)SCENE_MODE_CAUSTICS &&
		       (int)TP_MODE_PARTICLES == (int)SCENE_MODE_PARTICLES &&
		       (int)TP_MODE_DISPLACEMENT == (int)SCENE_MODE_DISPLACEMENT &&
		       (int)TP_MODE_FOAM == (int)SCENE_MODE_FOAM &&
		       (int)TP_MODE_VELOCITY == (int)SCENE_MODE_VELOCITY,
	       "tp_mode and scene_mode differ");
_Static_assert(TP_MODE_COUNT == SCENE_MODE_COUNT, "tp_mode and scene_mode differ in number");
_Static_assert(TP_MAX_FRAMES == SCENE_MAX_FRAMES, "frame limits differ");
_Static_assert((int)TP_ERROR_CANCELLED == (int)TP_EINTR, "cancel codes differ");
_Static_assert((int)TP_ERROR_INPUT == (int)TP_EINPUT && (int)TP_ERROR_IO == (int)TP_EIO &&
		       (int)TP_ERROR_ARGUMENT == (int)TP_EARG,
	       "public and internal error codes differ");


TP_API const char *tp_version(void)
{
	return TP_VERSION;
}

TP_API int tp_version_number(void)
{
	return TP_VERSION_NUMBER;
}

TP_API const char *tp_mode_name(tp_mode mode)
{
	return (int)mode >= 0 && (int)mode < API_MODES ? render_mode_get((scene_mode)mode)->name : NULL;
}

/* The structs of tidepool.h by name, for bindings that check their own layouts. */
static const struct {
	const char *name;
	size_t size;
} struct_sizes[] = {
	{"tp_error", sizeof(tp_error)},
	{"tp_load_options", sizeof(tp_load_options)},
	{"tp_format", sizeof(tp_format)},
	{"tp_scene_info", sizeof(tp_scene_info)},
	{"tp_frame_stats", sizeof(tp_frame_stats)},
	{"tp_output", sizeof(tp_output)},
	{"tp_scene_outputs", sizeof(tp_scene_outputs)},
	{"tp_vary", sizeof(tp_vary)},
	{"tp_target", sizeof(tp_target)},
	{"tp_pose", sizeof(tp_pose)},
	{"tp_param", sizeof(tp_param)},
	{"tp_solver_info", sizeof(tp_solver_info)},
	{"tp_map_info", sizeof(tp_map_info)},
};

TP_API size_t tp_struct_size(const char *name)
{
	for (size_t i = 0; name && i < sizeof struct_sizes / sizeof struct_sizes[0]; i++)
		if (!strcmp(name, struct_sizes[i].name))
			return struct_sizes[i].size;
	return 0;
}

TP_API int tp_mode_from_name(const char *name)
{
	return render_mode_from_name(name);
}

/* ---- errors as data ------------------------------------------------------------------ */

/* Copies at most n-1 bytes of s[0..len) into dst. */
static void copy_span(char *dst, size_t n, const char *s, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(dst, s, len);
	dst[len] = 0;
}

/* Reads "LINE:COL: " at *p; advances past it on success. */
static int read_position(const char **p, int *line, int *col)
{
	char *end;
	errno = 0;
	long l = strtol(*p, &end, 10);
	if (end == *p || *end != ':' || l <= 0 || l > 1 << 30 || errno)
		return -1;
	const char *q = end + 1;
	long c = strtol(q, &end, 10);
	if (end == q || end[0] != ':' || end[1] != ' ' || c <= 0 || c > 1 << 30 || errno)
		return -1;
	*line = (int)l;
	*col = (int)c;
	*p = end + 2;
	return 0;
}

/* ---- the ABI: structs as long as the caller's ------------------------------------------ */

int api_in(void *mine, size_t n, const void *theirs)
{
	size_t have = api_size_of(theirs);
	if (have < sizeof have)
		return TP_ERROR_ARGUMENT;
	/* A newer caller's members this library does not know must be zero (their default):
	 * anything else would be ignored silently (Linux's copy_struct_from_user rule). */
	for (size_t i = n; i < have; i++)
		if (((const unsigned char *)theirs)[i])
			return TP_ERROR_ARGUMENT;
	memset(mine, 0, n);
	memcpy(mine, theirs, have < n ? have : n);
	memcpy(mine, &n, sizeof n); /* mine is whole now */
	return 0;
}

int api_out(void *theirs, const void *mine, size_t n)
{
	size_t want = api_size_of(theirs);
	if (want < sizeof want)
		return TP_ERROR_ARGUMENT;
	if (want > n) /* a newer caller: members it knows and we do not read as zero */
		memset((char *)theirs + n, 0, want - n);
	memcpy((char *)theirs + sizeof want, (const char *)mine + sizeof want,
	       (want < n ? want : n) - sizeof want);
	return 0;
}

void api_error_clear(tp_error *e)
{
	if (!e)
		return;
	tp_error none = {.size = sizeof none};
	api_out(e, &none, sizeof none);
}

void api_error_fill(tp_error *out, int code, const char *msg, const char *file)
{
	if (!out)
		return;
	tp_error whole = {.size = sizeof whole}, *e = &whole;
	e->code = code;
	copy_span(e->text, sizeof e->text, msg, strlen(msg));
	/* Messages name their file first: "FILE:LINE:COL: what" or "FILE: what". */
	size_t fl = file ? strlen(file) : 0;
	const char *rest = msg;
	if (fl && !strncmp(msg, file, fl) && msg[fl] == ':') {
		copy_span(e->file, sizeof e->file, file, fl);
		const char *p = msg + fl + 1;
		if (read_position(&p, &e->line, &e->col) == 0)
			rest = p;
		else if (*p == ' ')
			rest = p + 1;
		else
			rest = p;
	}
	copy_span(e->message, sizeof e->message, rest, strlen(rest));
	api_out(out, e, sizeof *e);
}

int api_fail(tp_scene *s, tp_error *e, int code, const tp_err *err)
{
	api_error_fill(e, code, err->msg, s && s->sc ? s->sc->path : NULL);
	return code;
}

int api_fail_arg(tp_error *e, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	api_error_fill(e, TP_ERROR_ARGUMENT, msg, NULL);
	return TP_ERROR_ARGUMENT;
}

/* ---- loading ------------------------------------------------------------------------- */

int api_use_threads(const tp_scene *s)
{
	int n = s->threads > 0 ? s->threads : omp_get_num_procs();
	/* A per-thread setting: another thread's scene keeps its own. */
	omp_set_num_threads(n);
	return n;
}

static void free_sets(char **sets, int n)
{
	for (int i = 0; sets && i < n; i++)
		free(sets[i]);
	free(sets);
}

static int fail_oom(tp_error *e)
{
	api_error_fill(e, TP_ERROR_IO, "out of memory", NULL);
	return TP_ERROR_IO;
}

/* The overrides' names in messages: the caller's, else the scene loader's (its fields'). */
_Static_assert((int)TP_OVERRIDE_SETS == (int)SCENE_OV_SETS &&
		       (int)TP_OVERRIDE_SIZE == (int)SCENE_OV_SIZE &&
		       (int)TP_OVERRIDE_SCALE == (int)SCENE_OV_SCALE &&
		       (int)TP_OVERRIDE_FRAMES == (int)SCENE_OV_FRAMES &&
		       (int)TP_OVERRIDE_SEED == (int)SCENE_OV_SEED &&
		       (int)TP_OVERRIDE_OUTPUT == (int)SCENE_OV_OUTPUT &&
		       (int)TP_OVERRIDE_RANGE == (int)SCENE_OV_RANGE &&
		       TP_OVERRIDE_COUNT == SCENE_OV_COUNT,
	       "tp_override and scene_ov differ");

/* The checks of tp_load_options the scene loader does not make itself (it checks sizes
 * and seeds as it checks the scene's own). */
static int check_options(const tp_load_options *o, tp_error *e)
{
	if (o->nsets < 0 || (o->nsets > 0 && !o->sets))
		return api_fail_arg(e, "tp_load_options.nsets is %d with sets %s", o->nsets,
				    o->sets ? "given" : "NULL");
	if (o->nnames < 0 || (o->nnames > 0 && !o->names))
		return api_fail_arg(e, "tp_load_options.nnames is %d with names %s", o->nnames,
				    o->names ? "given" : "NULL");
	if (o->threads < 0 || o->threads > TP_MAX_THREADS)
		return api_fail_arg(e, "tp_load_options.threads is %d, outside 0..%d", o->threads,
				    TP_MAX_THREADS);
	if (o->frames < 0 || o->frames > TP_MAX_FRAMES)
		return api_fail_arg(e, "tp_load_options.frames is %d, outside 0..%d", o->frames,
				    TP_MAX_FRAMES);
	if (o->checkpoint_every < TP_CHECKPOINTS_NONE)
		return api_fail_arg(e, "tp_load_options.checkpoint_every is %d, less than %d",
				    o->checkpoint_every, TP_CHECKPOINTS_NONE);
	return 0;
}

static int load_common(const char *path, const char *text, const tp_load_options *given,
		       tp_scene **out, tp_error *e)
{
	tp_load_options whole = TP_LOAD_OPTIONS_INIT, *opt = &whole;
	tp_err err = {{0}};
	int rc;

	if (!out)
		return api_fail_arg(e, "no place for the scene given");
	*out = NULL;
	if (given && api_size_of(given) < sizeof(size_t))
		return api_fail_arg(e,
				    "tp_load_options.size is %zu: set it with TP_LOAD_OPTIONS_INIT",
				    api_size_of(given));
	if (given && api_in(&whole, sizeof whole, given) < 0)
		return api_fail_arg(e,
				    "tp_load_options: members past the %zu bytes this library (%s) "
				    "knows are set",
				    sizeof whole, TP_VERSION);
	if ((rc = check_options(opt, e)) < 0)
		return rc;
	tp_scene *s = calloc(1, sizeof *s);
	if (!s || (opt->nsets && !(s->sets = calloc((size_t)opt->nsets, sizeof *s->sets)))) {
		free(s);
		return fail_oom(e);
	}
	if (opt->output && !(s->output = strdup(opt->output))) {
		free(s);
		return fail_oom(e);
	}
	for (int i = 0; i < opt->nsets; i++)
		if (!opt->sets[i] || !(s->sets[i] = strdup(opt->sets[i]))) {
			free(s->output);
			free_sets(s->sets, opt->nsets);
			free(s);
			return api_fail_arg(e, "sets[%d] is NULL or memory ran out", i);
		}
	s->ov = (scene_overrides){
		.width = opt->width,
		.height = opt->height,
		.scale = opt->scale,
		.frames = opt->frames,
		.has_seed = opt->has_seed,
		.seed = opt->seed,
		.sets = (const char *const *)s->sets,
		.nsets = opt->nsets,
		.output = s->output,
	};
	for (int i = 0; i < TP_OVERRIDE_COUNT; i++)
		s->ov.names[i] = i < opt->nnames ? opt->names[i] : NULL;
	s->threads = opt->threads;
	s->pos = -1;
	s->budget = opt->checkpoint_bytes ? opt->checkpoint_bytes : DEFAULT_CKPT_BYTES;
	s->every = opt->checkpoint_every;
	s->every_fixed = opt->checkpoint_every > 0;
	s->no_ck = opt->checkpoint_every == TP_CHECKPOINTS_NONE;
	s->gap = CKPT_GAP_SECONDS;
	if (text)
		rc = scene_load_text(path, text, strlen(text), &s->ov, tp_solvers, &s->sc, &err);
	else
		rc = scene_load(path, &s->ov, tp_solvers, &s->sc, &err);
	if (rc < 0) {
		api_error_fill(e, rc, err.msg, path);
		tp_scene_free(s);
		return rc;
	}
	scene_fingerprint(s->sc, &s->ov, s->fp);
	/* the scene keeps its own copies of the names; the caller's need not outlive the call */
	memset(s->ov.names, 0, sizeof s->ov.names);
	/* What `tidepool validate` checks, in its order: the render modes the scene asks for
	 * (their renderers are kept for the first frames), then the solver at init and the
	 * loop, so that a scene that loads is one that runs, with the same message. */
	api_use_threads(s);
	const scene *sc = s->sc;
	for (int i = -1; i < sc->noutputs; i++) {
		scene_mode m = i < 0 ? sc->render.mode : sc->outputs[i].mode;
		if (s->rd[m])
			continue;
		if ((rc = render_create(sc, m, &s->rd[m], &err)) < 0) {
			api_fail(s, e, rc, &err);
			tp_scene_free(s);
			return rc;
		}
	}
	if ((rc = api_new_loop(s, &s->lp, &err)) < 0) {
		api_fail(s, e, rc, &err);
		tp_scene_free(s);
		return rc;
	}
	*out = s;
	api_error_clear(e);
	return 0;
}

TP_API int tp_scene_load_file(const char *path, const tp_load_options *opt, tp_scene **out,
			      tp_error *err)
{
	if (!path)
		return api_fail_arg(err, "no scene file given");
	return load_common(path, NULL, opt, out, err);
}

TP_API int tp_scene_load_string(const char *json, const char *name, const tp_load_options *opt,
				tp_scene **out, tp_error *err)
{
	if (!json)
		return api_fail_arg(err, "no scene text given");
	return load_common(name ? name : "<string>", json, opt, out, err);
}

static void drop_checkpoints(tp_scene *s)
{
	for (int i = 0; i < s->nck; i++)
		free(s->ck[i].buf);
	free(s->ck);
	s->ck = NULL;
	s->nck = s->cap = 0;
	s->ck_bytes = 0;
}

TP_API void tp_scene_free(tp_scene *s)
{
	if (!s)
		return;
	for (int m = 0; m < API_MODES; m++) {
		render_destroy(s->rd[m]);
		render_destroy(s->rdf[m]);
	}
	loop_destroy(s->lp);
	drop_checkpoints(s);
	scene_destroy(s->sc);
	free_sets(s->sets, s->ov.nsets);
	free(s->output);
	free(s);
}

TP_API const char *tp_scene_text(const tp_scene *s)
{
	return s ? scene_text(s->sc, NULL) : NULL;
}

/* The modes the scene can render (tp_scene_info.modes), from the render-mode table. */
static unsigned scene_modes(const scene *sc)
{
	unsigned m = 0;
	for (int k = 0; k < SCENE_MODE_COUNT; k++)
		if (!render_mode_lacks((scene_mode)k, sc->solver->caps, &sc->ambient))
			m |= 1u << k;
	return m;
}

TP_API int tp_scene_get_info(const tp_scene *s, tp_scene_info *out)
{
	if (!s || !out)
		return TP_ERROR_ARGUMENT;
	const scene *sc = s->sc;
	tp_scene_info info = {
		.size = sizeof info,
		.path = sc->path,
		.solver = sc->solver->name,
		.width = sc->width,
		.height = sc->height,
		.ref_width = sc->ref_width,
		.ref_height = sc->ref_height,
		.frames = sc->frames,
		.fps = sc->fps,
		.modes = scene_modes(sc),
		.heightfield = !(sc->solver->caps & TP_SOLVER_PARTICLES),
	};
	return api_out(out, &info, sizeof info);
}

TP_API int tp_scene_set_threads(tp_scene *s, int threads)
{
	if (!s || threads < 0 || threads > TP_MAX_THREADS)
		return TP_ERROR_ARGUMENT;
	s->threads = threads;
	return 0;
}

TP_API int tp_scene_position(const tp_scene *s)
{
	return s ? s->pos : -1;
}

/* ---- stepping and checkpoints ---------------------------------------------------------- */


static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Keeps the state before frame `frame` (lp's next) if the spacing asks for it: every
 * `every` frames when the caller chose that, else after CKPT_GAP_SECONDS of stepping. Where
 * checkpoints fall changes only how long a seek takes, never a frame's bytes. */
static int maybe_checkpoint(tp_scene *s, int frame, tp_error *e)
{
	if (frame <= 0 || frame >= s->sc->frames || s->no_ck)
		return 0;
	if (s->nck && s->ck[s->nck - 1].frame >= frame)
		return 0; /* kept already (checkpoints are made in order) */
	if (s->every_fixed ? frame % s->every != 0 : s->since_ck < s->gap)
		return 0;
	s->since_ck = 0;
	char *buf = NULL;
	size_t len = 0;
	tp_err err = {{0}};
	double t0 = seconds();
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return api_fail(s, e, tp_errf(&err, TP_EIO, "checkpoint in memory: %s", strerror(errno)),
			    &err);
	int rc = loop_save(s->lp, f, &err);
	if (fclose(f) != 0 && rc == 0)
		rc = tp_errf(&err, TP_EIO, "checkpoint in memory: %s", strerror(errno));
	if (rc < 0) {
		free(buf);
		return api_fail(s, e, rc, &err);
	}
	/* Saving may cost more than stepping (large states): then space them so that saving
	 * costs at most half the time spent stepping. */
	double cost = 2 * (seconds() - t0);
	if (!s->every_fixed && s->gap < cost)
		s->gap = cost;
	/* Over the budget (a long scene, or states that grow as particles are emitted): keep
	 * every other checkpoint and step twice as long between the next ones. */
	while (s->ck_bytes + len > s->budget && s->nck > 1) {
		int j = 0;
		s->ck_bytes = 0;
		for (int i = 0; i < s->nck; i++) {
			if (i % 2) {
				free(s->ck[i].buf);
				continue;
			}
			s->ck_bytes += s->ck[i].len;
			s->ck[j++] = s->ck[i];
		}
		s->nck = j;
		s->gap *= 2;
		if (s->every_fixed)
			s->every *= 2;
	}
	if (s->ck_bytes + len > s->budget) {
		free(buf);
		return 0;
	}
	if (s->nck == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		mem_ckpt *nc = realloc(s->ck, (size_t)cap * sizeof *nc);
		if (!nc) {
			free(buf);
			return 0; /* a checkpoint is an optimisation: do without */
		}
		s->ck = nc;
		s->cap = cap;
	}
	s->ck[s->nck++] = (mem_ckpt){.frame = frame, .t = stepper_time(loop_stepper(s->lp)),
				     .buf = buf, .len = len};
	s->ck_bytes += len;
	return 0;
}

int api_new_loop(tp_scene *s, sim_loop **out, tp_err *err)
{
	int rc = loop_create(s->sc, s->threads, out, err);
	if (rc == 0)
		stepper_set_cancel(loop_stepper(*out), (const volatile sig_atomic_t *)s->cancel);
	return rc;
}

void api_drop_loop(tp_scene *s)
{
	if (s->lp)
		s->warmed += loop_warmup_frames(s->lp);
	loop_destroy(s->lp);
	s->lp = NULL;
	s->pos = -1;
	s->surf_ok = 0;
}

/* One frame forwards; its surface is made only if `look` (the frame a seek ends on): the
 * frames a seek passes through need only their state. */
static int step_once(tp_scene *s, int look, tp_error *e)
{
	tp_err err = {{0}};
	int rc;
	if ((rc = maybe_checkpoint(s, s->pos + 1, e)) < 0)
		return rc;
	double t0 = seconds();
	rc = look ? loop_next(s->lp, &s->surf, &err) : loop_pass(s->lp, &err);
	s->since_ck += seconds() - t0;
	if (rc < 0) {
		/* The state is unusable now: start over at the next call. */
		api_drop_loop(s);
		return api_fail(s, e, rc, &err);
	}
	s->pos++;
	s->surf_ok = look;
	return 0;
}

/* The loop at the latest checkpoint at or before `frame`, or a fresh one at frame 0. A
 * checkpoint holds the whole state the next frames depend on, so it is loaded into the
 * loop as it is (a new loop would plan its solver's transforms again); a test checks that
 * the frames are the same bits either way. */
static int restart(tp_scene *s, int frame, tp_error *e)
{
	tp_err err = {{0}};
	int rc;
	const mem_ckpt *c = NULL;
	for (int i = 0; i < s->nck && s->ck[i].frame <= frame; i++)
		c = &s->ck[i];
	s->since_ck = 0;
	if (!c || !s->lp) {
		api_drop_loop(s);
		if ((rc = api_new_loop(s, &s->lp, &err)) < 0)
			return api_fail(s, e, rc, &err);
	}
	s->pos = -1;
	s->surf_ok = 0;
	if (!c)
		return 0;
	FILE *f = fmemopen(c->buf, c->len, "rb");
	if (!f)
		return api_fail(s, e, tp_errf(&err, TP_EIO, "checkpoint in memory: %s", strerror(errno)),
			    &err);
	rc = loop_load(s->lp, f, &err);
	fclose(f);
	if (rc < 0) {
		api_drop_loop(s);
		return api_fail(s, e, rc, &err);
	}
	s->pos = c->frame - 1;
	s->since_ck = 0;
	return 0;
}

/* A state simulated to time t is the same for both scenes if t < scene_diverge(); a
 * checkpoint is kept whole (bytes do not depend on the scene's render settings). */
TP_API int tp_scene_reuse_checkpoints(tp_scene *s, tp_scene *from)
{
	if (!s || !from || s == from)
		return TP_ERROR_ARGUMENT;
	double until = scene_diverge(s->sc, from->sc);
	int moved = 0;
	for (int i = 0; i < from->nck; i++) {
		mem_ckpt c = from->ck[i];
		from->ck[i].buf = NULL;
		int at = s->nck; /* keep s's list in frame order, one checkpoint per frame */
		while (at > 0 && s->ck[at - 1].frame > c.frame)
			at--;
		int keep = c.t < until && c.frame < s->sc->frames &&
			   !(at > 0 && s->ck[at - 1].frame == c.frame) &&
			   s->ck_bytes + c.len <= s->budget;
		if (keep && s->nck == s->cap) {
			int cap = s->cap ? 2 * s->cap : 16;
			mem_ckpt *nc = realloc(s->ck, (size_t)cap * sizeof *nc);
			if (nc) {
				s->ck = nc;
				s->cap = cap;
			} else {
				keep = 0;
			}
		}
		if (!keep) {
			free(c.buf);
			continue;
		}
		memmove(&s->ck[at + 1], &s->ck[at], (size_t)(s->nck - at) * sizeof *s->ck);
		s->ck[at] = c;
		s->nck++;
		s->ck_bytes += c.len;
		moved++;
	}
	drop_checkpoints(from);
	return moved;
}

TP_API double tp_scene_same_until(const tp_scene *s, const tp_scene *from)
{
	if (!s || !from)
		return -INFINITY;
	return scene_diverge(s->sc, from->sc);
}

TP_API int tp_scene_seek(tp_scene *s, int frame, tp_error *e)
{
	if (!s)
		return api_fail_arg(e, "no scene given");
	if (frame < 0 || frame >= s->sc->frames)
		return api_fail_arg(e, "frame %d is out of range (the scene has %d frames)", frame,
				s->sc->frames);
	api_use_threads(s);
	if (frame == s->pos && s->lp && s->surf_ok)
		return 0;
	/* Replay from a checkpoint when going back, or when one is nearer than here. */
	int best = 0;
	for (int i = 0; i < s->nck && s->ck[i].frame <= frame; i++)
		best = s->ck[i].frame;
	int rc;
	if (!s->lp || frame < s->pos || (frame == s->pos && !s->surf_ok) || best > s->pos + 1)
		if ((rc = restart(s, frame, e)) < 0)
			return rc;
	while (s->pos < frame)
		if ((rc = step_once(s, s->pos + 1 == frame, e)) < 0)
			return rc;
	return 0;
}

TP_API int tp_scene_step(tp_scene *s, tp_error *e)
{
	if (!s)
		return api_fail_arg(e, "no scene given");
	if (s->pos + 1 >= s->sc->frames)
		return api_fail_arg(e, "frame %d is out of range (the scene has %d frames)", s->pos + 1,
				s->sc->frames);
	return tp_scene_seek(s, s->pos + 1, e);
}

/* ---- frames ---------------------------------------------------------------------------- */

static int check_mode(const tp_scene *s, tp_mode mode, tp_error *e)
{
	if ((int)mode < 0 || (int)mode >= API_MODES)
		return api_fail_arg(e, "mode %d is not a render mode (0..%d)", (int)mode, API_MODES - 1);
	if (!(scene_modes(s->sc) & 1u << mode)) {
		tp_err err;
		tp_errf(&err, TP_EARG, "render mode \"%s\" is not available for the %s solver",
			tp_mode_name(mode), s->sc->solver->name);
		api_error_fill(e, TP_ERROR_ARGUMENT, err.msg, NULL);
		return TP_ERROR_ARGUMENT;
	}
	return 0;
}

/* "maps": {"height": {"scale": "auto"}}: one scale for the whole render from its largest
 * |h|, as `tidepool render` levels it in a first pass of its own; every height-map
 * renderer, made before or after, uses it. */
int api_level(tp_scene *s, void (*progress)(void *, int, int), void *arg, tp_error *e)
{
	if (s->levelled || !s->sc->maps.height_auto)
		return 0;
	if (!s->rd[TP_MODE_HEIGHT]) {
		tp_err err = {{0}};
		int rc = render_create(s->sc, SCENE_MODE_HEIGHT, &s->rd[TP_MODE_HEIGHT], &err);
		if (rc < 0)
			return api_fail(s, e, rc, &err);
	}
	sim_loop *lp = NULL;
	tp_err err = {{0}};
	int rc = api_new_loop(s, &lp, &err);
	double top = 0;
	for (int k = 0; rc == 0 && k < s->sc->frames; k++) {
		tp_surface surf;
		if (s->cancel && *s->cancel)
			rc = tp_errf(&err, TP_EINTR, "cancelled");
		else if ((rc = loop_next(lp, &surf, &err)) == 0) {
			double m = render_surface_absmax(&surf);
			top = m > top ? m : top;
			if (progress)
				progress(arg, k + 1, s->sc->frames);
		}
	}
	loop_destroy(lp);
	if (rc < 0)
		return api_fail(s, e, rc, &err);
	s->top = top;
	s->levelled = 1;
	render_set_height_scale(s->rd[TP_MODE_HEIGHT], api_levels(top));
	if (s->rdf[TP_MODE_HEIGHT])
		render_set_height_scale(s->rdf[TP_MODE_HEIGHT], api_levels(top));
	return 1;
}

void api_drop_renderers(tp_scene *s)
{
	for (int m = 0; m < API_MODES; m++) {
		render_destroy(s->rd[m]);
		render_destroy(s->rdf[m]);
		s->rd[m] = s->rdf[m] = NULL;
	}
}

int api_renderer(tp_scene *s, tp_mode mode, render_ctx **out, tp_error *e)
{
	int rc;
	if ((rc = check_mode(s, mode, e)) < 0 || (unsigned)mode >= API_MODES)
		return rc < 0 ? rc : TP_ERROR_ARGUMENT;
	if (!s->rd[mode]) {
		tp_err err = {{0}};
		if ((rc = render_create(s->sc, (scene_mode)mode, &s->rd[mode], &err)) < 0)
			return api_fail(s, e, rc, &err);
	}
	*out = s->rd[mode];
	return 0;
}

int api_format_of(const tp_scene *s, tp_pixfmt f, tp_format *out, tp_error *e)
{
	tp_format whole = {.size = sizeof whole, .width = s->sc->width, .height = s->sc->height};
	if (f == TP_YUV420) { /* three planes of bytes */
		whole.channels = 3;
		whole.bytes_per_sample = 1;
	} else {
		whole.channels = tp_pixfmt_channels(f);
		whole.bytes_per_sample = tp_pixfmt_bytes(f) / whole.channels;
	}
	if (api_out(out, &whole, sizeof whole) < 0)
		return api_fail_arg(e, "tp_format.size is %zu: set it with TP_FORMAT_INIT",
				    api_size_of(out));
	api_error_clear(e);
	return 0;
}

int api_check_stride(size_t *stride, size_t row, int rows, tp_error *e)
{
	if (*stride == 0)
		*stride = row;
	if (*stride < row)
		return api_fail_arg(e, "stride %zu is less than a row (%zu bytes)", *stride, row);
	/* rows * stride bytes must be addressable (the renderers step by ptrdiff_t) */
	if (rows > 0 && *stride > (size_t)PTRDIFF_MAX / (size_t)rows)
		return api_fail_arg(e, "stride %zu: %d rows of it overflow the address space",
				    *stride, rows);
	return 0;
}

int api_render_into(tp_scene *s, render_ctx *rd, tp_pixfmt f, int frame, void *buf,
		    size_t stride, void (*side)(void *), void *side_arg, tp_error *e)
{
	/* a 4:2:0 picture's rows are its luma rows, one byte a pixel, an even number apart */
	const size_t row = (size_t)s->sc->width * (size_t)(f == TP_YUV420 ? 1 : tp_pixfmt_bytes(f));
	int rc;
	if ((rc = api_check_stride(&stride, row, s->sc->height, e)) < 0)
		return rc;
	if (f == TP_YUV420 && stride % 2)
		return api_fail_arg(e, "stride %zu is odd: 4:2:0 takes an even one", stride);
	tp_image img = {.w = s->sc->width,
			.h = s->sc->height,
			.stride = (ptrdiff_t)stride,
			.fmt = f,
			.pixels = buf};
	api_use_threads(s);
	if (render_frame_side(rd, &s->surf, &img, side, side_arg) < 0) {
		tp_err err;
		return api_fail(s, e, tp_errf(&err, TP_EIO, "frame %d: rendering failed", frame),
				&err);
	}
	return 0;
}

TP_API int tp_scene_format(tp_scene *s, tp_mode mode, tp_format *out, tp_error *e)
{
	render_ctx *rd;
	int rc;
	if (!s || !out)
		return api_fail_arg(e, "no scene or no place for the format given");
	if ((rc = api_renderer(s, mode, &rd, e)) < 0)
		return rc;
	return api_format_of(s, render_format(rd), out, e);
}

TP_API int tp_scene_render(tp_scene *s, int frame, tp_mode mode, void *buf, size_t stride,
			   tp_error *e)
{
	render_ctx *rd;
	int rc;
	if (!s || !buf)
		return api_fail_arg(e, "no scene or no buffer given");
	/* a height map levelled over the whole scene is levelled before its first frame */
	if ((rc = api_renderer(s, mode, &rd, e)) < 0 ||
	    (mode == TP_MODE_HEIGHT && (rc = api_level(s, NULL, NULL, e)) < 0) ||
	    (rc = tp_scene_seek(s, frame, e)) < 0 ||
	    (rc = api_render_into(s, rd, render_format(rd), frame, buf, stride, NULL, NULL, e)) < 0)
		return rc;
	api_error_clear(e);
	return 0;
}

TP_API int tp_scene_height(tp_scene *s, int frame, float *buf, size_t stride, tp_error *e)
{
	int rc;
	if (!s || !buf)
		return api_fail_arg(e, "no scene or no buffer given");
	if (s->sc->solver->caps & TP_SOLVER_PARTICLES) {
		tp_err err;
		tp_errf(&err, TP_EARG, "the %s solver has no height field", s->sc->solver->name);
		api_error_fill(e, TP_ERROR_ARGUMENT, err.msg, NULL);
		return TP_ERROR_ARGUMENT;
	}
	const int w = s->sc->width, h = s->sc->height;
	if ((rc = api_check_stride(&stride, (size_t)w * sizeof *buf, h, e)) < 0)
		return rc;
	if (stride % sizeof *buf)
		return api_fail_arg(e, "stride %zu is not a whole number of floats", stride);
	if ((rc = tp_scene_seek(s, frame, e)) < 0)
		return rc;
	const tp_surface *sf = &s->surf;
	/* height units = stored value * scale, as the maps read it */
	for (int y = 0; y < h; y++) {
		float *d = (float *)((char *)buf + (size_t)y * stride);
		if (sf->type == TP_SAMPLE_I32) {
			const int32_t *src = (const int32_t *)sf->data + (size_t)y * (size_t)sf->stride;
			for (int x = 0; x < w; x++)
				d[x] = (float)src[x] * sf->scale;
		} else {
			const float *src = (const float *)sf->data + (size_t)y * (size_t)sf->stride;
			for (int x = 0; x < w; x++)
				d[x] = src[x] * sf->scale;
		}
	}
	api_error_clear(e);
	return 0;
}

TP_API int tp_scene_stats(tp_scene *s, int frame, tp_frame_stats *out, tp_error *e)
{
	int rc;
	if (!s || !out)
		return api_fail_arg(e, "no scene or no place for the stats given");
	if (api_size_of(out) < sizeof(size_t))
		return api_fail_arg(e,
				    "tp_frame_stats.size is %zu: set it with TP_FRAME_STATS_INIT",
				    api_size_of(out));
	if ((rc = tp_scene_seek(s, frame, e)) < 0)
		return rc;
	stepper *st = loop_stepper(s->lp);
	tp_stats in;
	stepper_stats(st, &in);
	tp_frame_stats whole = {.size = sizeof whole, .frame = frame, .t = stepper_time(st)};
	whole.n = in.n < TP_FRAME_STATS_MAX ? in.n : TP_FRAME_STATS_MAX;
	for (int i = 0; i < whole.n; i++) {
		whole.name[i] = in.name[i];
		whole.value[i] = in.value[i];
	}
	return api_out(out, &whole, sizeof whole);
}
