/*
 * tidepool.h - libtidepool, the water renderer as a library (soname libtidepool.so.0).
 *
 * Load a scene (a tidepool-scene/1 JSON file, or its text), then ask for any frame: the
 * library simulates up to it, keeping checkpoints in memory so that going back is cheap,
 * and renders it in any output mode into a buffer the caller owns. The pixels are the
 * same bytes `tidepool render` writes to PNG for the same scene, size and options.
 *
 * Contract (docs/api.md says more):
 * - Handles are opaque. tp_scene_load_*() creates one, tp_scene_free() destroys it
 *   (NULL is a no-op). Pointers the library returns (names, info strings) stay valid
 *   while their scene lives, or forever where the comment says "static".
 * - Every call that can fail returns 0 (or a count) on success and a negative tp_status on
 *   failure, and, when given a tp_error, fills it: the file, line and column at fault
 *   where there is one, and the message. The library never prints and never exits.
 * - One scene is used by one thread at a time (the caller serialises calls on a scene);
 *   different scenes may be used at once from different threads and give the same
 *   frames as each alone.
 * - Output is deterministic: same scene, options and library = same bytes, whatever the
 *   thread count.
 * - ABI: every struct that crosses this header starts with `size_t size`, the size of the
 *   struct as the caller was compiled with it; set it with the struct's TP_*_INIT macro
 *   (which also zeroes the rest). The library reads and writes only the first `size` bytes
 *   of a struct it is given: members past them read as zero (their defaults) and are not
 *   written. Members are only ever added at the end, and zero always means "the default";
 *   a newer caller's struct that sets a member this library does not know is refused
 *   (TP_ERROR_ARGUMENT), never half-read.
 *   An array of structs (tp_target, tp_pose) is read with element i at i * [0].size bytes.
 *   A size smaller than the `size` member is refused (TP_ERROR_ARGUMENT); a tp_error of
 *   size 0 is not written.
 * - Strides are in bytes for every call.
 * - Messages name scene keys ("params.damping") and this header's fields; where a value
 *   came from an override, each client names it in its own terms (tp_load_options.names).
 * - The first part of this header is for any program; the part marked "PROGRAM API"
 *   serves programs that write whole renders, as the tidepool command does.
 */
#ifndef TIDEPOOL_H
#define TIDEPOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TP_BUILDING_LIBRARY) && defined(__GNUC__)
#define TP_API __attribute__((visibility("default")))
#else
#define TP_API
#endif

#define TP_VERSION_MAJOR 0
#define TP_VERSION_MINOR 2
#define TP_VERSION_PATCH 0
/* major * 10000 + minor * 100 + patch, as tp_version_number() returns */
#define TP_VERSION_NUMBER (TP_VERSION_MAJOR * 10000 + TP_VERSION_MINOR * 100 + TP_VERSION_PATCH)

typedef struct tp_scene tp_scene;

/* The most frames a scene may have (its "duration" or tp_load_options.frames). */
#define TP_MAX_FRAMES 1000000
/* The most worker threads a scene may be given (tp_load_options.threads). */
#define TP_MAX_THREADS 1024

/* What a call returns on failure: the same numbers as the CLI's internal ones. */
typedef enum tp_status {
	TP_ERROR_NONE = 0,
	TP_ERROR_ARGUMENT = -2, /* a bad argument: frame out of range, mode the scene lacks */
	TP_ERROR_INPUT = -3,    /* a bad scene, image or other input */
	TP_ERROR_IO = -4,       /* I/O or runtime failure (a solver blew up, out of memory) */
	TP_ERROR_CANCELLED = -130, /* the flag of tp_scene_set_cancel() was raised */
} tp_status;

/* What went wrong, as data. line and col are 1-based; 0 where the error has no place
 * in a file (file is then "" or the file as a whole). text is the whole one-line
 * message exactly as `tidepool validate` prints it after "tidepool: ". Every call given
 * a tp_error clears it on success (code 0) and fills it on failure. */
typedef struct tp_error {
	size_t size;        /* sizeof(tp_error): TP_ERROR_INIT */
	tp_status code;     /* 0: no error */
	char file[1024];    /* the file at fault */
	int line, col;
	char message[1024]; /* the text after FILE:LINE:COL: */
	char text[2048];
} tp_error;
#define TP_ERROR_INIT {.size = sizeof(tp_error)}

/* The overrides of tp_load_options, by how messages name them (tp_load_options.names). */
typedef enum tp_override {
	TP_OVERRIDE_SETS = 0,   /* default name "sets" */
	TP_OVERRIDE_SIZE = 1,   /* "width/height" */
	TP_OVERRIDE_SCALE = 2,  /* "scale" */
	TP_OVERRIDE_FRAMES = 3, /* "frames" */
	TP_OVERRIDE_SEED = 4,   /* "seed" */
	TP_OVERRIDE_OUTPUT = 5, /* "output" */
	/* Not a member: how the client picks some frames of a scene to render (the CLI's
	 * "--range"), for the hint of a loop cut by `frames`; no default (no hint). */
	TP_OVERRIDE_RANGE = 6,
} tp_override;
#define TP_OVERRIDE_COUNT 7

/* Options for loading: values that override the scene's. Zero members: the scene's own. */
typedef struct tp_load_options {
	size_t size;              /* sizeof(tp_load_options): TP_LOAD_OPTIONS_INIT */
	int width, height;        /* the render size; 0: the scene's (both or neither) */
	double scale;             /* the render size as a factor of the scene's (width 0) */
	int frames;               /* 1..TP_MAX_FRAMES; 0: the scene's */
	int has_seed;             /* 1: seed replaces the scene's seed */
	uint64_t seed;
	const char *const *sets;  /* "KEY=VALUE" edits of the scene (KEY a dotted path such as
				   * params.damping, VALUE JSON), applied in order */
	int nsets;
	int threads;              /* worker threads, 0..TP_MAX_THREADS; 0: all cores */
	/* Memory for in-memory checkpoints (seeking backwards); 0: 256 MiB. Checkpoints
	 * are kept every checkpoint_every frames (0: after every 40 ms of stepping, spaced
	 * out further when the budget is reached; docs/api.md). */
	size_t checkpoint_bytes;
	int checkpoint_every;     /* TP_CHECKPOINTS_NONE (-1): keep none (frames in order only) */
	const char *output;       /* replaces the scene's "output" */
	/* How messages name each override, by tp_override ("(from --set)" in the CLI, which
	 * passes "--set", "--size", ...): nnames entries, NULL entries or past nnames: the
	 * library's names above. */
	const char *const *names;
	int nnames;
} tp_load_options;
#define TP_LOAD_OPTIONS_INIT {.size = sizeof(tp_load_options)}
#define TP_CHECKPOINTS_NONE (-1)

/* Render modes: what tidepool render -o MODE=... writes. */
typedef enum tp_mode {
	TP_MODE_COLOR = 0,     /* the refracted picture: RGB8 */
	TP_MODE_HEIGHT = 1,    /* height map: GRAY16 */
	TP_MODE_NORMAL = 2,    /* normal map: RGB8 or RGB16 (maps.normal.bits) */
	TP_MODE_CAUSTICS = 3,  /* caustics: GRAY8 or GRAY16 (maps.caustics.bits) */
	TP_MODE_PARTICLES = 4, /* particle view (sph): RGB8 */
	TP_MODE_DISPLACEMENT = 5, /* vector displacement X, Y, Z: RGB16 (as its 16-bit PNG) */
	TP_MODE_FOAM = 6,         /* foam coverage (airy, choppy waves): GRAY16 */
	TP_MODE_VELOCITY = 7,     /* horizontal surface velocity X, Y (airy), m/s: RGB16 */
} tp_mode;
#define TP_MODE_COUNT 8

/* A frame's layout: width x height pixels of `channels` interleaved samples of
 * `bytes_per_sample` bytes (1: uint8, 2: host-endian uint16, 4: float). */
typedef struct tp_format {
	size_t size; /* sizeof(tp_format): TP_FORMAT_INIT */
	int width, height;
	int channels;
	int bytes_per_sample;
} tp_format;
#define TP_FORMAT_INIT {.size = sizeof(tp_format)}

typedef struct tp_scene_info {
	size_t size;               /* sizeof(tp_scene_info): TP_SCENE_INFO_INIT */
	const char *path;          /* the scene file, or the name given to load_string */
	const char *solver;        /* "ripple", "hooke", "shallow", "sph", "airy" */
	int width, height;         /* render size, pixels */
	int ref_width, ref_height; /* the scene's own "size" (scene units) */
	int frames;
	double fps;
	unsigned modes;            /* bit (1u << m) for every tp_mode this scene can render */
	int heightfield;           /* 1: tp_scene_height() works (every solver but sph) */
} tp_scene_info;
#define TP_SCENE_INFO_INIT {.size = sizeof(tp_scene_info)}

/* The solver's statistics after a frame, as `render --stats` prints them. */
#define TP_FRAME_STATS_MAX 16
typedef struct tp_frame_stats {
	size_t size; /* sizeof(tp_frame_stats): TP_FRAME_STATS_INIT */
	int frame;
	double t; /* seconds */
	int n;
	const char *name[TP_FRAME_STATS_MAX]; /* static strings */
	double value[TP_FRAME_STATS_MAX];
} tp_frame_stats;
#define TP_FRAME_STATS_INIT {.size = sizeof(tp_frame_stats)}

/* ---- version and sizes: no side effects; any thread ------------------------------------ */

/* "0.2.0", static. */
TP_API const char *tp_version(void);
/* TP_VERSION_NUMBER of the library (which may differ from the header's). */
TP_API int tp_version_number(void);
/* sizeof the struct called `name` ("tp_error", "tp_load_options", ...: every struct of
 * this header) as the library was built; 0 for an unknown name. For bindings that lay the
 * structs out themselves and check them (the Python package does at import). */
TP_API size_t tp_struct_size(const char *name);

/* "color", "height", "normal", "caustics", "particles", "displacement", "foam" (static),
 * NULL for a bad mode. */
TP_API const char *tp_mode_name(tp_mode mode);
/* The mode called `name`, or -1. */
TP_API int tp_mode_from_name(const char *name);

/* ---- loading and freeing ---------------------------------------------------------------- */

/* Loads and validates a scene file, then sets up its solver and the renderers of the
 * modes it names, so a scene that loads is one that runs (the checks `tidepool validate`
 * makes). opt: NULL for none. On success *out is the scene (the caller frees it); on
 * failure *out is NULL and err says why: TP_ERROR_INPUT (a bad scene), TP_ERROR_IO (a
 * file that cannot be read: err->file names it), TP_ERROR_ARGUMENT (bad options: threads
 * outside 0..TP_MAX_THREADS, frames outside 0..TP_MAX_FRAMES, a bad set). Reads the scene
 * file and the files it names; uses opt->threads threads. */
TP_API int tp_scene_load_file(const char *path, const tp_load_options *opt, tp_scene **out,
			      tp_error *err);
/* The same from JSON text. `name` stands for the file in messages and its directory
 * resolves relative paths in the scene (background images); NULL: "<string>" in the
 * working directory. */
TP_API int tp_scene_load_string(const char *json, const char *name, const tp_load_options *opt,
				tp_scene **out, tp_error *err);
/* Frees the scene and everything it holds (NULL: nothing). No call on it may be running. */
TP_API void tp_scene_free(tp_scene *sc);

/* ---- what a scene is: queries without side effects ---------------------------------------- */

/* Fills *out (out->size bytes of it). TP_ERROR_ARGUMENT for NULLs or a bad out->size. */
TP_API int tp_scene_get_info(const tp_scene *sc, tp_scene_info *out);
/* The scene's JSON text after the `sets` edits: what was loaded (owned by the scene). */
TP_API const char *tp_scene_text(const tp_scene *sc);
/* The frame the scene is at: -1 before the first step (and after a failed one). */
TP_API int tp_scene_position(const tp_scene *sc);

/* ---- settings ------------------------------------------------------------------------------ */

/* Worker threads for this scene's later calls, 0..TP_MAX_THREADS (0: all cores);
 * TP_ERROR_ARGUMENT outside. Frames do not depend on it. */
TP_API int tp_scene_set_threads(tp_scene *sc, int threads);

/* ---- frames: these simulate (moving the scene's position) and render ---------------------- */

/* The layout tp_scene_render() writes for mode. Side effect: makes the mode's renderer
 * (memory held until the scene is freed) if no call made it before. TP_ERROR_ARGUMENT if
 * the scene cannot render the mode (particles of a height field), with the reason. */
TP_API int tp_scene_format(tp_scene *sc, tp_mode mode, tp_format *out, tp_error *err);

/* Simulates to `frame` (0 <= frame < frames; TP_ERROR_ARGUMENT otherwise): forwards from
 * the current frame or from the nearest earlier in-memory checkpoint, keeping new
 * checkpoints on the way (within tp_load_options.checkpoint_bytes). The position is then
 * `frame`; after a failure the scene starts over at its next call. */
TP_API int tp_scene_seek(tp_scene *sc, int frame, tp_error *err);
/* tp_scene_seek() to the next frame (the first call after loading gives frame 0). */
TP_API int tp_scene_step(tp_scene *sc, tp_error *err);

/* For an edited scene: moves to `sc` the in-memory checkpoints of `from` (an earlier
 * version of the same scene, loaded with the same options) that are still valid for it,
 * those of states before the first moment the two can simulate differently. An edit to a
 * drop at 3 s keeps the states before 3 s; an edit to what only the picture uses (colours,
 * background, maps) keeps them all; an edit to the solver, its parameters or the size
 * keeps none. Frames are the same bits as without. Side effect: `from` is left without
 * checkpoints (its frames are unchanged). Returns how many were moved (0 or more), or
 * TP_ERROR_ARGUMENT. No call on either scene may be running. */
TP_API int tp_scene_reuse_checkpoints(tp_scene *sc, tp_scene *from);
/* The first moment (seconds) at which `sc` and `from` (an earlier version of the same
 * scene) can simulate differently: what tp_scene_reuse_checkpoints() goes by. A value at or
 * past the scene's end (INFINITY when nothing the simulation reads differs: a new colour)
 * means every frame's simulation, and so its stats, is the same; -INFINITY none is. */
TP_API double tp_scene_same_until(const tp_scene *sc, const tp_scene *from);

/* Seeks to `frame` (tp_scene_seek()) and renders it in `mode` into buf, in
 * tp_scene_format()'s layout, rows `stride` bytes apart (0: packed). TP_ERROR_ARGUMENT
 * for a stride less than a row, or one whose height rows do not fit in the address space.
 * A "scale": "auto" height map simulates the whole scene once first (tp_scene_level_heights). */
TP_API int tp_scene_render(tp_scene *sc, int frame, tp_mode mode, void *buf, size_t stride,
			   tp_error *err);
/* Seeks to `frame` and writes its height field, in height units (1.0 = a drop of strength
 * 1 at its centre), width x height floats, rows `stride` bytes apart (0: packed; a
 * multiple of sizeof(float), else TP_ERROR_ARGUMENT). TP_ERROR_ARGUMENT for a scene
 * without a height field (sph). */
TP_API int tp_scene_height(tp_scene *sc, int frame, float *buf, size_t stride, tp_error *err);
/* Seeks to `frame` and gives its statistics (out->size bytes). */
TP_API int tp_scene_stats(tp_scene *sc, int frame, tp_frame_stats *out, tp_error *err);

/* ==== PROGRAM API ===========================================================================
 * For programs that write whole renders, as the tidepool command does (it is the one
 * user of most of these; the preview server uses a few). Same contract as above. */

/* OpenEXR compression of "maps": {"exr": {"compression"}}. */
typedef enum tp_exr_compression {
	TP_EXR_ZIP = 0,
	TP_EXR_ZIPS = 1,
	TP_EXR_PIZ = 2,
	TP_EXR_RLE = 3,
	TP_EXR_NONE = 4,
} tp_exr_compression;

/* What the scene file asks to be written: its render mode, its "output" and "outputs",
 * its "flipbook" and its OpenEXR settings. Strings are owned by the scene. tp_output
 * lives only inside tp_scene_outputs, so it carries no size and never grows. */
#define TP_OUTPUTS_MAX 8
typedef struct tp_output {
	tp_mode mode;
	const char *path; /* a PNG pattern, a .png, .exr or .mp4 file, or "null" */
} tp_output;
typedef struct tp_scene_outputs {
	size_t size;        /* sizeof(tp_scene_outputs): TP_SCENE_OUTPUTS_INIT */
	tp_mode mode;       /* "render": {"mode"}: the mode of "output" */
	const char *output; /* "output" (or tp_load_options.output), NULL if none */
	int n;              /* "outputs": n of them (at most TP_OUTPUTS_MAX) */
	tp_output o[TP_OUTPUTS_MAX];
	/* "flipbook": single-file PNG outputs of several frames become an atlas of cols x
	 * rows cells of cell_w x cell_h pixels (pot: padded to powers of two) */
	int flipbook, flipbook_cols, flipbook_rows, flipbook_cell_w, flipbook_cell_h,
		flipbook_pot;
	int exr_float;       /* "maps": {"exr": {"float": true}}: 32-bit samples, else half */
	tp_exr_compression exr_compression; /* "maps": {"exr": {"compression"}} */
	int height_auto;     /* "maps": {"height": {"scale": "auto"}} */
} tp_scene_outputs;
#define TP_SCENE_OUTPUTS_INIT {.size = sizeof(tp_scene_outputs)}
/* Fills *out (out->size bytes); no side effects. */
TP_API int tp_scene_get_outputs(const tp_scene *sc, tp_scene_outputs *out);

/* "variants": what `tidepool batch` varies. Key i (0 <= i < tp_scene_variants()) is a
 * sets path with n values as JSON text; *name gets the scene's name pattern (or NULL).
 * No side effects. */
typedef struct tp_vary {
	size_t size; /* sizeof(tp_vary): TP_VARY_INIT */
	const char *key;
	int n;
	const char *const *values;
} tp_vary;
#define TP_VARY_INIT {.size = sizeof(tp_vary)}
TP_API int tp_scene_variants(const tp_scene *sc, const char **name);
TP_API int tp_scene_vary(const tp_scene *sc, int i, tp_vary *out);

/* Pixel layouts besides a mode's own, for encoders. */
typedef enum tp_pixels {
	TP_PIXELS_NATIVE = 0, /* tp_scene_format()'s: 8 or 16-bit samples */
	TP_PIXELS_FLOAT = 1,  /* float samples in physical units (the texture modes; OpenEXR):
			       * bytes_per_sample 4 */
	TP_PIXELS_YUV420 = 2, /* colour of a height field at an even size: planar BT.709
			       * limited-range 4:2:0 as H.264 takes it: Y (height rows of
			       * stride bytes), then Cb and Cr (height/2 rows of stride/2) */
} tp_pixels;
/* tp_scene_format() for a layout (the same side effect: makes the layout's renderer); for
 * a mode the scene cannot render, the message says why and where (as tidepool validate,
 * TP_ERROR_INPUT); TP_ERROR_ARGUMENT for a layout the mode has not (YUV of anything but
 * colour). */
TP_API int tp_scene_format_as(tp_scene *sc, tp_mode mode, tp_pixels pixels, tp_format *out,
			      tp_error *err);

/* One picture of a frame for tp_scene_render_targets(). */
typedef struct tp_target {
	size_t size; /* sizeof(tp_target): TP_TARGET_INIT */
	tp_mode mode;
	tp_pixels pixels;
	void *buf;
	size_t stride; /* bytes between rows (0: tightly packed) */
	long clipped;  /* set: the height map's pixels clamped to the 16-bit range; -1 for
			* the other modes */
} tp_target;
#define TP_TARGET_INIT {.size = sizeof(tp_target)}
/* Seeks to `frame` and renders it n times (n <= 2 * TP_OUTPUTS_MAX), into each target
 * (t[i] at i * t[0].size bytes; each target's `clipped` is written). side(side_arg), if
 * not NULL, runs once during the first target's rendering on one of the rendering threads
 * (the colour pass of a height field draws the other rows meanwhile): serial work that
 * should not wait for the picture, such as hashing the previous frame. */
TP_API int tp_scene_render_targets(tp_scene *sc, int frame, tp_target *t, int n,
				   void (*side)(void *), void *side_arg, tp_error *err);

/* One frame forwards without its picture (nothing renders it): the frames after it are
 * the same bits. Moves the position; rendering this frame afterwards simulates it again. */
TP_API int tp_scene_pass(tp_scene *sc, tp_error *err);

/* While *flag is non-zero, simulating stops within a step (sph's substeps) and the call
 * returns TP_ERROR_CANCELLED; the scene then starts over at its next call. A signal
 * handler may set it. NULL: none. The scene keeps the pointer: it must outlive the scene
 * or be replaced. */
TP_API int tp_scene_set_cancel(tp_scene *sc, const volatile int *flag);

/* "scale": "auto" height maps: one scale for the whole render, from its largest |h|. This
 * simulates every frame once (the first height-map render does it otherwise), calling
 * progress(arg, done, total) after each if it is not NULL; the scene's position does not
 * move. *levels gets the levels per height unit, *top the largest |h| in height units.
 * Returns 1 when it levelled, 0 when the scene's scale is fixed (nothing simulated,
 * *levels and *top 0). */
TP_API int tp_scene_level_heights(tp_scene *sc, void (*progress)(void *arg, int done, int total),
				  void *arg, double *levels, double *top, tp_error *err);

/* The frames the scene's "loop" warm-up simulated so far (0: no loop, or the state came
 * from a checkpoint). No side effects. */
TP_API int tp_scene_warmup_frames(const tp_scene *sc);

/* Seeks to `frame`; out[0..max) (element i at i * out[0].size bytes) get its boxes' poses
 * in scene order: the centre in scene units (the render size divided out), the angle in
 * degrees. Returns the number of boxes (which may be more than max). */
typedef struct tp_pose {
	size_t size; /* sizeof(tp_pose): TP_POSE_INIT */
	double x, y, angle;
} tp_pose;
#define TP_POSE_INIT {.size = sizeof(tp_pose)}
TP_API int tp_scene_boxes(tp_scene *sc, int frame, tp_pose *out, int max, tp_error *err);

/* Which simulation and outputs a file belongs to, as 64 lower-case hex digits and a NUL:
 * SHA-256 of the scene's text after the sets edits and of the options that change its
 * frames (size, frames, seed). With `what` (a text naming what else changes an output's
 * bytes, such as "mode color\nencoder mp4\n"), the fingerprint of that output. No side
 * effects. */
TP_API int tp_scene_fingerprint(const tp_scene *sc, const char *what, char hex[65]);

/* Checkpoints on disk, for renders in pieces (docs/farm.md): DIR/frame-NNNNNNNN.tpck holds
 * the whole state before frame NNNNNNNN; written atomically, and refused (with the
 * reason, TP_ERROR_INPUT) by another scene, option set, size or library version. */
/* The path of DIR's checkpoint of `frame` into buf (n bytes); TP_ERROR_ARGUMENT if it does
 * not fit. No side effects. */
TP_API int tp_checkpoint_path(const char *dir, int frame, char *buf, size_t n);
/* Writes the state after the current frame (a checkpoint of frame position + 1) into DIR
 * (a file written, the scene unchanged). *bytes, if not NULL, gets the file's size. */
TP_API int tp_scene_save_checkpoint(tp_scene *sc, const char *dir, uint64_t *bytes,
				    tp_error *err);
/* Checks DIR's checkpoint of `frame` against this scene without loading it (reads the
 * file; the scene unchanged). */
TP_API int tp_scene_check_checkpoint(tp_scene *sc, const char *dir, int frame, tp_error *err);
/* Loads the latest checkpoint k with 0 < k <= at_most in DIR (by name): the position is
 * then k - 1 and the next step gives frame k. Returns k, or 0 if DIR has none (the scene
 * unchanged). */
TP_API int tp_scene_load_checkpoint(tp_scene *sc, const char *dir, int at_most, tp_error *err);

/* The solvers, for listings: name, description and the parameters of "params". All
 * strings static; no side effects. */
typedef enum tp_param_type {
	TP_PARAM_INTEGER = 0,
	TP_PARAM_NUMBER = 1,
	TP_PARAM_BOOLEAN = 2,
	TP_PARAM_CHOICE = 3, /* one of `choices` */
} tp_param_type;
typedef struct tp_param {
	size_t size; /* sizeof(tp_param): TP_PARAM_INIT */
	const char *name, *help;
	tp_param_type type;
	double def;           /* the default (for choices: its index) */
	char range[128];      /* the allowed values, as tidepool solvers prints them */
	const char *const *choices; /* NULL-terminated, for TP_PARAM_CHOICE */
} tp_param;
#define TP_PARAM_INIT {.size = sizeof(tp_param)}
typedef struct tp_solver_info {
	size_t size; /* sizeof(tp_solver_info): TP_SOLVER_INFO_INIT */
	const char *name, *description;
	int nparams;
} tp_solver_info;
#define TP_SOLVER_INFO_INIT {.size = sizeof(tp_solver_info)}
/* Solver i (0 <= i < tp_solver_count()) and its parameter p (0 <= p < nparams). */
TP_API int tp_solver_count(void);
TP_API int tp_solver_get(int i, tp_solver_info *out);
TP_API int tp_solver_param(int i, int p, tp_param *out);

/* What a map of `mode` says about itself: every file the tidepool command writes records
 * it (docs/textures.md, "What each file records"). Call it after tp_scene_level_heights()
 * for the levels an "auto" height scale chose. */
typedef struct tp_map_info {
	size_t size;             /* sizeof(tp_map_info): TP_MAP_INFO_INIT */
	int loop_frames;         /* frames of the seamless loop ("loop"); 0: not a loop */
	int tiles;               /* 1: "boundary": "wrap", every map tiles */
	double texel_w, texel_h; /* one pixel in scene units */
	double tile_w, tile_h;   /* the whole frame in scene units (the scene's "size") */
	double metres;           /* metres per scene unit (and per height unit); 0: the
				  * solver has no length scale */
	double levels;           /* 16-bit PNG height and displacement: levels per height
				  * unit, v = round(h * levels) + 32768 */
	int bits;                /* bits per sample of the mode's PNG (8 or 16) */
	int normal_directx;      /* normal maps: 1 green is -Y (DirectX), 0 +Y (OpenGL) */
	double normal_strength;  /* normal maps: the slopes' multiplier (1: the true normal) */
	int caustics_linear;     /* caustics PNG: 1 intensity * I clipped, 0 1 - exp(-intensity I) */
	double caustics_intensity, caustics_depth; /* caustics: "maps.caustics" (depth in
						    * scene units) */
} tp_map_info;
#define TP_MAP_INFO_INIT {.size = sizeof(tp_map_info)}
TP_API int tp_scene_map_info(const tp_scene *sc, tp_mode mode, tp_map_info *out);

#ifdef __cplusplus
}
#endif

#endif
