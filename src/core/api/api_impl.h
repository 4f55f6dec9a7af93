/*
 * api_impl.h - what the files of src/core/api/ share: the public header as the library
 * builds it (its calls exported, everything else hidden by -fvisibility=hidden).
 */
#ifndef TP_API_API_IMPL_H
#define TP_API_API_IMPL_H

#define TP_BUILDING_LIBRARY 1
#include "tidepool.h"

#include "render/render.h"
#include "scene/scene.h"
#include "sim/loop.h"
#include "util/error.h"

#include <string.h>

typedef struct mem_ckpt {
	int frame; /* the next output frame once loaded */
	double t;  /* simulated time of the state (tp_scene_reuse_checkpoints) */
	char *buf;
	size_t len;
} mem_ckpt;

/* The core's render modes: tidepool.h's (api.c asserts they are the scene's). */
#define API_MODES TP_MODE_COUNT

struct tp_scene {
	scene *sc;
	scene_overrides ov;
	char **sets; /* copies of the --set strings */
	int threads;
	sim_loop *lp;
	tp_surface surf; /* the surface of frame pos, valid while pos >= 0 */
	int pos;         /* the frame lp last gave, -1 before the first */
	render_ctx *rd[API_MODES];
	/* the float-sample renderers (TP_PIXELS_FLOAT), made when asked for; 4:2:0 is drawn
	 * by the mode's own renderer */
	render_ctx *rdf[API_MODES];
	int surf_ok;     /* surf is frame pos's (not after tp_scene_pass or a disk checkpoint) */
	int no_ck;       /* TP_CHECKPOINTS_NONE */
	char *output;    /* tp_load_options.output, copied */
	const volatile int *cancel; /* tp_scene_set_cancel() */
	int warmed;      /* tp_scene_warmup_frames() of the loops before lp */
	/* In-memory checkpoints, by increasing frame, within budget bytes. */
	mem_ckpt *ck;
	int nck, cap;
	size_t ck_bytes, budget;
	int every;       /* the caller's spacing in frames (every_fixed) */
	int every_fixed;
	double gap;      /* else seconds of stepping between checkpoints */
	double since_ck; /* seconds stepped since the last checkpoint (or the start) */
	int levelled;    /* the height map's "auto" scale is set, from top */
	double top;      /* the largest |h| of the whole scene, once levelled */
	uint8_t fp[32];  /* scene_fingerprint() of sc and ov */
};

/* api.c's helpers for the other files of the API: errors as data (fail: from a tp_err,
 * naming the scene's file; fail_arg: a bad argument), the scene's thread count applied to
 * this thread, the renderer of a mode in its own layout, and a fresh loop with the
 * scene's cancel flag. */
int api_fail(tp_scene *s, tp_error *e, int code, const tp_err *err);
int api_fail_arg(tp_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int api_use_threads(const tp_scene *s);
int api_renderer(tp_scene *s, tp_mode mode, render_ctx **out, tp_error *e);
/* For tests: destroys the scene's render contexts, so that the next frame creates new ones,
 * which read the CPU flags (util/cpu.h) and the render test switches (render.h) again. */
void api_drop_renderers(tp_scene *s);
int api_new_loop(tp_scene *s, sim_loop **out, tp_err *err);
/* Destroys the loop (its warm-up counted in s->warmed): the next call starts over. */
void api_drop_loop(tp_scene *s);
/* The height maps' levels per height unit for a largest |h| of top (0: none). */
static inline double api_levels(double top)
{
	return top > 0 ? 32767.0 / top : 0;
}
/* Renders the surface of frame `frame` (the scene is there) with rd into buf, rows
 * `stride` bytes apart (0: packed), in format f (render_format(rd), or TP_YUV420 where
 * render_yuv(rd)); side(side_arg) as render_frame_side(). */
int api_render_into(tp_scene *s, render_ctx *rd, tp_pixfmt f, int frame, void *buf,
		    size_t stride, void (*side)(void *), void *side_arg, tp_error *e);
/* The tp_format of pixel format f at the scene's size, into the caller's *out. */
int api_format_of(const tp_scene *s, tp_pixfmt f, tp_format *out, tp_error *e);
/* A row stride in bytes (0: row): at least a row, and `rows` of it addressable. */
int api_check_stride(size_t *stride, size_t row, int rows, tp_error *e);
/* Levels the height maps of a "scale": "auto" scene once (tp_scene_level_heights()). */
int api_level(tp_scene *s, void (*progress)(void *, int, int), void *arg, tp_error *e);

/* The ABI (tidepool.h): a caller's struct is its first `size` bytes. api_in copies the
 * caller's struct `theirs` into mine (n bytes: the rest zero), api_out mine into theirs
 * (at most its size; its size member kept). Both return TP_ERROR_ARGUMENT (without
 * copying) for a size smaller than the size member, api_in also for a non-zero byte of
 * theirs past n (a member this library does not know, set). api_error_clear empties an
 * error. */
int api_in(void *mine, size_t n, const void *theirs);
int api_out(void *theirs, const void *mine, size_t n);
void api_error_clear(tp_error *e);
/* The caller's size of a struct (its first member), for arrays of them. */
static inline size_t api_size_of(const void *theirs)
{
	size_t n;
	memcpy(&n, theirs, sizeof n);
	return n;
}

/* Fills e from a one-line message "FILE:LINE:COL: what" (or "FILE: what", or "what"):
 * file, line and col where msg starts with `file` (may be NULL), the rest as message. */
void api_error_fill(tp_error *e, int code, const char *msg, const char *file);

#endif
