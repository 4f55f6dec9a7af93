/*
 * scene.h - a validated, immutable scene: everything a render needs to know.
 *
 * scene_load() parses a tidepool-scene/1 JSON file (format reference: scenes/README.md),
 * applies command-line overrides, validates every field and resolves file paths relative
 * to the scene file. On success the caller owns the scene and frees it with
 * scene_destroy(); every array inside belongs to the scene. After loading the scene is
 * read-only: solvers, the stepper and the renderer take `const scene *`.
 *
 * Errors are one line, "FILE:LINE:COL: json.path: what is wrong (got X)", code TP_EINPUT
 * (TP_EIO if the file cannot be read). Units: times in seconds, heights in "height units"
 * (1.0 = a drop of strength 1 at its centre). Lengths are written in scene units: the
 * scene's "size" is its frame of reference. The render size (--size, --scale or the scene's
 * "resolution") may differ, and the loader converts every length it stores to output
 * pixels: x positions times scale_x, y positions times scale_y, every other length
 * (radii, footprints, speeds, pattern cells, flipbook frames) times `scale`. What it
 * cannot convert (solver parameters, renderer constants) is scaled where it is used, from
 * `scale` (scenes/README.md, "Scene units and render size").
 *
 * The struct is exposed (not opaque) because it is plain immutable data; nothing but
 * scene/ writes to it.
 */
#ifndef TP_SCENE_SCENE_H
#define TP_SCENE_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "scene/solverkind.h"
#include "util/error.h"
#include "util/image.h"

typedef enum scene_boundary {
	SCENE_BOUNDARY_REFLECT, /* waves bounce off the edges (Neumann / held edge) */
	SCENE_BOUNDARY_ABSORB,  /* waves leave without coming back */
	SCENE_BOUNDARY_WRAP,    /* periodic: the output tiles */
} scene_boundary;

/* One keyframe of a path; between keyframes positions are linearly interpolated, before
 * the first and after the last they hold. */
typedef struct scene_key {
	double t;
	double x, y;  /* centre, pixels */
	double angle; /* degrees, counter-clockwise; 0 if absent */
} scene_key;

typedef struct scene_path {
	int n; /* >= 1 */
	scene_key *keys; /* sorted by strictly increasing t */
} scene_path;

typedef struct scene_drop {
	double t;
	double x, y;
	double radius;   /* pixels, > 0 */
	double strength; /* height units at the centre; negative pushes down */
} scene_drop;

typedef enum scene_emitter_type {
	SCENE_EMIT_RAIN,   /* random drops over an area (every solver) */
	SCENE_EMIT_STREAM, /* a nozzle of particles (sph) */
} scene_emitter_type;

typedef struct scene_emitter {
	scene_emitter_type type;
	double from, to;                   /* active time window [from, to) */
	double rate;                       /* rain: drops/s; stream: particles/s */
	double radius[2];                  /* rain: drop radius range */
	double strength[2];                /* rain: drop strength range */
	double area[4];                    /* rain: x, y, w, h (default: whole pool) */
	double at[2];                      /* stream: nozzle position */
	double direction;                  /* stream: degrees, 0 = +x, 90 = +y (down) */
	double speed;                      /* stream: pixels/s */
	double spread;                     /* stream: degrees of random spread */
	int cap;                           /* stream: max particles emitted (0 = no cap) */
} scene_emitter;

typedef struct scene_box {
	double size[2];  /* footprint w, h in pixels */
	double height;   /* vertical extent in height units */
	double density;  /* relative to water (floating boxes) */
	int floating;    /* 1: dynamic (the path gives only the start); 0: kinematic */
	scene_path path;
} scene_box;

typedef struct scene_block { /* sph: initial rectangle of fluid (dam break) */
	double x, y, w, h;
} scene_block;

typedef struct scene_tank { /* sph: the container, keyframed like a box */
	double size[2];
	scene_path path;
} scene_tank;

typedef enum scene_pattern {
	SCENE_PATTERN_TILES,
	SCENE_PATTERN_CHECKER,
	SCENE_PATTERN_PEBBLES,
	SCENE_PATTERN_GRADIENT,
} scene_pattern;

typedef struct scene_background {
	char *image;           /* resolved PNG path, or NULL for a pattern */
	tp_image pixels;       /* image: decoded as TP_RGB8 at load time (validated) */
	scene_pattern pattern;
	double scale;          /* pattern cell size in pixels */
	uint8_t color[2][3];   /* pattern's two colours (sRGB) */
} scene_background;

typedef enum scene_mode {
	SCENE_MODE_COLOR,
	SCENE_MODE_HEIGHT,
	SCENE_MODE_NORMAL,
	SCENE_MODE_CAUSTICS,
	SCENE_MODE_PARTICLES, /* sph debug view */
	SCENE_MODE_DISPLACEMENT, /* vector displacement X, Y, Z of the undisplaced grid */
	SCENE_MODE_FOAM,         /* foam coverage 0..1 (airy, choppy ambient waves) */
	SCENE_MODE_VELOCITY,     /* horizontal velocity X, Y of the ambient waves (airy) */
	SCENE_MODE_COUNT         /* render/modes.c describes each */
} scene_mode;

typedef struct scene_render {
	scene_mode mode;
	double refraction;   /* background offset = refraction * slope (pixels per unit slope) */
	double reflection;   /* brightness += reflection * height */
	double tint[3];      /* water colour, 0..1 */
	double tint_strength;/* 0 = clear water, 1 = opaque tint */
	double specular;     /* strength of the sun highlight, 0 = off */
	int shadows;         /* boxes cast a shadow on the water */
	int antialias;       /* colour, where refraction is steep: SCENE_AA_* (0: one lookup) */
} scene_render;
/* render.antialias: false, "supersample" (N x N lookups, refract_aa.c) or "footprint" (one
 * box of a summed-area table, footprint.c); true is SCENE_AA_DEFAULT. */
enum { SCENE_AA_OFF, SCENE_AA_SUPERSAMPLE, SCENE_AA_FOOTPRINT };
#define SCENE_AA_DEFAULT SCENE_AA_SUPERSAMPLE

typedef struct scene_param { /* a validated solver parameter */
	char *name;
	double value;
} scene_param;

/* "ambient": wind waves from a spectrum (the airy solver), added to whatever the sources
 * make. Physical units: the solver's `metres` parameter says how long a scene unit is. */
typedef enum scene_spectrum {
	SCENE_SPECTRUM_JONSWAP,
	SCENE_SPECTRUM_PHILLIPS,
	SCENE_SPECTRUM_TMA, /* JONSWAP times the finite-depth factor (Bouws et al. 1985) */
	SCENE_SPECTRUM_PM,  /* Pierson-Moskowitz (1964): the fully developed sea */
} scene_spectrum;
/* One wave system: the wind sea ("ambient" itself) or a swell ("ambient.swell[i]"). */
typedef struct scene_waves {
	scene_spectrum spectrum;
	double wind;      /* m/s (10 m above the water) */
	double direction; /* degrees the wind blows towards: 0 = +x, 90 = +y (down) */
	double fetch;     /* metres of open water upwind (jonswap, tma) */
	double amplitude; /* RMS height, height units; 0: the spectrum's own law (Hs / 4) */
	double shortest;  /* metres: shorter waves fade out, exp(-(shortest k / 2 pi)^2); 0: none */
	double spreading; /* s of the directional spreading cos^(2s) (1: cos^2) */
	double against;   /* fraction of the energy that travels against the wind, 0..1 */
	uint64_t seed;    /* of the random phases and amplitudes (default: the scene's seed) */
} scene_waves;
#define SCENE_MAX_WAVES 8 /* the wind sea and up to 7 swells */
typedef struct scene_ambient {
	int on;
	int nwaves;                          /* systems: [0] the wind sea, then the swells */
	scene_waves waves[SCENE_MAX_WAVES];
	double choppiness;     /* lambda of the horizontal displacement (Tessendorf); 0: none */
	double foam_threshold; /* new foam where the Jacobian J < this */
	double foam_fade;      /* seconds: foam fades as exp(-age / fade) */
	double foam_range[2];  /* foam shown = clamp((F - lo) / (hi - lo), 0, 1); [0, 1]: F */
} scene_ambient;

/* One of "outputs": a render mode and where it goes. */
typedef struct scene_output {
	scene_mode mode;
	char *path; /* resolved like "output" */
} scene_output;

/* "maps": how the texture modes encode what they show. */
typedef struct scene_maps {
	double height_scale;       /* 16-bit levels per height unit; 0 = 1024 */
	int height_auto;           /* "scale": "auto": levelled over the whole render (render's
				    * first pass), one scale for every frame */
	double normal_strength;    /* slope multiplier before normalising */
	int normal_directx;        /* 1: green is -Y (DirectX); 0: +Y (OpenGL) */
	int normal_bits;           /* 8 or 16 */
	double caustics_depth;     /* water depth under the surface, pixels */
	double caustics_intensity; /* output level of unfocused light, 0..1 of white */
	int caustics_bits;         /* 8 or 16 */
	int caustics_linear;       /* tone "linear" (intensity * I, clipped) instead of "soft" */
	int exr_float;             /* OpenEXR outputs: 32-bit float samples (0: half) */
	int exr_compression;       /* scene_exr_compression */
} scene_maps;

/* "maps.exr.compression" (the OpenEXR names). */
typedef enum scene_exr_compression {
	SCENE_EXR_ZIP,
	SCENE_EXR_ZIPS,
	SCENE_EXR_PIZ,
	SCENE_EXR_RLE,
	SCENE_EXR_NONE,
} scene_exr_compression;

/* "loop": the frames are a seamless loop of `frames`, cut from the simulation at
 * start_frame and cross-faded over fade_frames (sim/loop.h). */
typedef struct scene_loop {
	int on;
	double duration, start, crossfade; /* seconds, as written */
	int frames, start_frame, fade_frames;
} scene_loop;

/* "flipbook": a cols x rows atlas of frame_w x frame_h cells, left to right then top to
 * bottom; pot rounds the atlas up to powers of two. */
typedef struct scene_flipbook {
	int on;
	int cols, rows;
	int frame_w, frame_h; /* 0: the scene size */
	int pot;
} scene_flipbook;

/* "variants": each key (a --set path such as "params.damping") with its values as JSON
 * text; `tidepool batch` renders every combination, named from `name`. */
typedef struct scene_vary {
	char *key;
	int n;
	char **values;
} scene_vary;

typedef struct scene_variants {
	int n;
	scene_vary *vary;
	char *name; /* pattern with {key} placeholders, NULL for the default */
} scene_variants;

/* Where each member was written and which values came from the command line, kept for
 * the messages of checks made after loading (scene_errf); private to src/core/scene/. */
typedef struct scene_src scene_src;

typedef struct scene {
	char *path; /* the scene file as given */
	scene_src *src; /* positions of the members, for scene_errf() */
	char *dir;  /* its directory, for resolving relative paths */

	int width, height;         /* render size, output pixels */
	int ref_width, ref_height; /* the scene's own "size": the frame of reference */
	double scale;              /* output pixels per scene unit: width / ref_width */
	double scale_x, scale_y;   /* for positions: width / ref_width, height / ref_height */
	/* scale as the exact fraction width / ref_width, in lowest terms: solvers whose waves
	 * move one cell per step take scale_num / scale_den times the scene's steps. */
	int scale_num, scale_den;
	double fps;
	int frames;
	uint64_t seed;

	const tp_solver_kind *solver; /* one of scene_load's `solvers` */
	scene_param *params;
	int nparams;
	int substeps;
	scene_boundary boundary;

	scene_background background;
	scene_render render;

	scene_drop *drops;
	int ndrops;
	scene_emitter *emitters;
	int nemitters;
	scene_box *boxes;
	int nboxes;
	scene_block *blocks;
	int nblocks;
	int has_tank;
	scene_tank tank;
	scene_ambient ambient;

	char *output; /* resolved output path or pattern, NULL if none */

	/* Texture work (scene/textures.c, README "Textures for artists"). */
	scene_output *outputs; /* "outputs": several renders of one simulation (0: use output) */
	int noutputs;
	scene_maps maps;       /* "maps": height, normal and caustics settings */
	scene_loop loop;       /* "loop": a seamless loop (frames above is then loop.frames) */
	scene_flipbook flipbook; /* "flipbook": single-file PNG outputs become frame atlases */
	scene_variants variants; /* "variants": what `tidepool batch` varies */

	uint8_t text_sha256[32]; /* of the JSON text after --set edits (scene_fingerprint) */
} scene;

/* The overrides by how messages name them (scene_overrides.names): tidepool.h's
 * tp_override. */
typedef enum scene_ov {
	SCENE_OV_SETS,
	SCENE_OV_SIZE,
	SCENE_OV_SCALE,
	SCENE_OV_FRAMES,
	SCENE_OV_SEED,
	SCENE_OV_OUTPUT,
	SCENE_OV_RANGE, /* not an override: the client's word for rendering some frames */
	SCENE_OV_COUNT
} scene_ov;

/* Command-line values that override the scene; a zero/NULL field leaves it alone. */
typedef struct scene_overrides {
	int width, height; /* --size: the render size (the scene keeps its frame of reference) */
	double scale;      /* --scale: the render size as a factor of the scene's size */
	int frames;
	int has_seed;
	uint64_t seed;
	const char *output; /* taken as given (relative to the working directory) */
	/* --set KEY=VALUE: JSON values written over the file's before it is read; KEY is a
	 * dotted path of object members ("params.damping", "maps.caustics.depth"). */
	const char *const *sets;
	int nsets;
	/* What messages call each override, by scene_ov: "(from --set)" for the CLI's
	 * "--set"; NULL: the library's field names ("sets", "width/height", ...). */
	const char *names[SCENE_OV_COUNT];
} scene_overrides;

/* `solvers` are the solvers a scene may name (NULL-terminated; "ripple" the default): the
 * registry's tp_solvers (solvers/solver.h), given by the caller because the solvers sit
 * above the scene (solverkind.h). The scene keeps a pointer to the one it names. */
int scene_load(const char *path, const scene_overrides *ov, const tp_solver_kind *const *solvers,
	       scene **out, tp_err *err);
/* The same from JSON text (len bytes, copied): `name` stands for the file in messages and
 * its directory resolves the scene's relative paths. */
int scene_load_text(const char *name, const char *text, size_t len, const scene_overrides *ov,
		    const tp_solver_kind *const *solvers, scene **out, tp_err *err);
/* The scene's JSON text after --set edits (owned by the scene), and its length. */
const char *scene_text(const scene *s, size_t *len);
/* What messages call override `which`: the client's name (scene_overrides.names) or the
 * library's own ("sets", "width/height", ...); s or ov may be NULL. */
const char *scene_ov_name(const scene *s, scene_ov which);
const char *scene_overrides_name(const scene_overrides *ov, scene_ov which);

/* What a simulation cache belongs to (fingerprint.c): SHA-256 over the scene text after
 * --set edits, every field of *ov that can change the simulation (one serialiser, so a
 * new override is added in one place) and the final size. Same scene, same options =
 * same 32 bytes. ov may be NULL (no overrides). */
void scene_fingerprint(const scene *sc, const scene_overrides *ov, uint8_t out[32]);
/* The fingerprint of one output of that simulation (encode/proof.h), as lower-case hex:
 * SHA-256 of the scene's fingerprint and `what`, a text naming what else changes the
 * output's bytes (render mode, encoder settings). */
void scene_output_fingerprint(const uint8_t scene_fp[32], const char *what, char hex[65]);
void scene_destroy(scene *s);

/* The scene's solver as the renderer may know it (render/ does not include the solver
 * interface): its TP_SOLVER_* caps (scene/solverkind.h) and its name. */
unsigned scene_solver_caps(const scene *sc);
const char *scene_solver_name(const scene *sc);

/* For every check of a scene made after scene_load() (solvers at init through
 * ctx->scene, the renderer, the stepper): fails with code and the one-line message
 *     FILE:LINE:COL: JPATH (from --set): MESSAGE
 * where JPATH is the member at fault as a dotted path with [i] for array elements
 * ("params.rate", "boxes[1].path[2].angle", "size"), LINE:COL where it was written (or
 * its nearest written ancestor, for a default or a value given on the command line), and
 * the parenthesis names --set, --size, --frames, --seed or -o when the value came from
 * there. jpath may be NULL (the scene as a whole). Returns code. */
int scene_errf(const scene *s, tp_err *err, int code, const char *jpath, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* 1 if the member at jpath is written in the scene (after --set edits). */
int scene_has(const scene *s, const char *jpath);

/* The first time at which the simulations of scenes a and b (two versions of one scene,
 * loaded the same way) can differ (diverge.c): the state after simulated time t is the
 * same for both if t < the result. -INFINITY: from the start; INFINITY: never (only what
 * the renderer reads differs). */
double scene_diverge(const scene *a, const scene *b);

/* The drops in the order the stepper applies them: by time, file order breaking ties.
 * Returns a malloc'd array of ndrops indices (at least one entry), or NULL if out of
 * memory. Thread-safe (qsort of (t, index) pairs, no shared state). */
int *scene_drop_order(const scene *s);

/* Position of a path at time t (linear between keyframes, held outside them). */
void scene_path_eval(const scene_path *p, double t, double *x, double *y, double *angle);

/* Output pixels per scene unit; 1 for a scene built by hand (not by scene_load). */
static inline double scene_scale(const scene *s)
{
	return s->scale > 0 ? s->scale : 1.0;
}

/* Memory bound: scenes whose per-frame working set would exceed this are refused. */
#define SCENE_MAX_PIXELS (8192.0 * 8192.0)
#define SCENE_MAX_FRAMES 1000000

#endif
