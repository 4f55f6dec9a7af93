/*
 * solver.h - the solver interface: one const descriptor per solver, FFmpeg-codec style.
 *
 * A solver is one file under src/core/solvers/ in which everything is static except its
 * `const tp_solver tp_solver_NAME`, plus one line in registry.c. The framework allocates
 * `priv_size` zeroed bytes, fills them with the option defaults from `options`, applies
 * the scene's "params", and calls init(). init() allocates everything the solver will ever
 * need; step() never allocates. uninit() must be safe after a failed or partial init()
 * (it sees the zeroed/defaulted private struct). A solver knows nothing of rendering or
 * files: it reads the scene and the per-step input, and exposes a tp_surface.
 *
 * Time: frame k shows time k/fps. Frame 0 is the initial state plus the events at t <= 0;
 * each later frame advances `substeps` steps of dt = 1 / (fps * substeps), or, for a solver
 * with TP_SOLVER_CELL_STEPS rendered at scale s = scale_num / scale_den, frame k ends after
 * floor(k * substeps * scale_num / scale_den) steps of dt = 1 / (fps * substeps * s): its
 * waves move a fixed number of cells per step, so a finer grid needs more steps per second.
 *
 * Units: the solver works in output pixels. Scene lengths arrive converted (scene.h) and
 * parameters marked with a tp_opt_unit are converted before init(); anything else that
 * depends on the render size is the solver's to scale, from scene_scale(ctx->scene).
 *
 * Determinism: for a given scene and build, every method must produce the same bits
 * whatever the OpenMP thread count (static schedules, fixed-size reduction chunks).
 */
#ifndef TP_SOLVERS_SOLVER_H
#define TP_SOLVERS_SOLVER_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "scene/scene.h"
#include "util/error.h"
#include "util/opts.h"

/* A box as the solver sees it at one instant (kinematic poses come from the stepper;
 * floating boxes are integrated by the solver and reported back through tp_surface). */
typedef struct tp_box_pose {
	double x, y;       /* centre, pixels */
	double angle;      /* degrees about the vertical axis */
	double vx, vy;     /* pixels/s (finite difference of the path) */
	double z;          /* height of the box bottom in height units (floating boxes) */
	double tilt[2];    /* radians about the x and y axes (floating boxes) */
} tp_box_pose;

/* Everything that changes from step to step, given by the stepper. */
typedef struct tp_step_in {
	double t;                  /* time at the end of this step */
	long step;                 /* index of this step since frame 0 (0, 1, 2, ...) */
	double dt;                 /* seconds */
	const tp_box_pose *boxes;  /* scene->nboxes poses at t (kinematic ones meaningful) */
	double tank_x, tank_y;     /* tank centre at t (sph) */
	double tank_vx, tank_vy;   /* tank velocity at t, pixels/s */
	double tank_angle;         /* tank angle at t, degrees counter-clockwise on screen */
	/* The caller's cancel flag (NULL: none). A solver whose step can run long (sph's
	 * substeps) checks it between substeps and, once it is nonzero, returns TP_EINTR
	 * at once, leaving a state that is only good for freeing. */
	const volatile sig_atomic_t *cancel;
} tp_step_in;

typedef enum tp_surface_kind {
	TP_SURFACE_HEIGHT, /* a height field over the whole image */
	TP_SURFACE_FLUID,  /* a fluid-coverage field (sph): 0 = air, >= 1 = inside the fluid */
} tp_surface_kind;

typedef enum tp_sample_type { TP_SAMPLE_I32, TP_SAMPLE_F32 } tp_sample_type;

/* What the renderer may read. Pointers stay valid until the next step()/uninit(). */
/* Columns [lo, hi) of a row; empty when lo >= hi. */
typedef struct tp_span {
	int lo, hi;
} tp_span;

typedef struct tp_surface {
	tp_surface_kind kind;
	int w, h;                 /* == scene width, height */
	tp_sample_type type;
	const void *data;         /* row-major samples */
	ptrdiff_t stride;         /* samples between rows */
	float scale;              /* height units per stored unit (int solvers: 1/unit) */
	int wrap;                 /* periodic field: sample across the edges */
	/* NULL, or h spans: every sample of row y outside spans[y] is exactly 0 (calm
	 * water, which the colour pass draws from a flat picture instead of sampling) */
	const tp_span *spans;
	int nboxes;
	const tp_box_pose *boxes; /* current poses of scene->boxes */
	/* sph only */
	double tank[4];           /* x, y, w, h of the tank interior, pixels, before turning */
	double tank_angle;        /* degrees counter-clockwise about the tank's centre */
	int nparticles;
	const float *px, *py;     /* particle positions (debug view) */
	/* Choppy waves (airy with an ambient choppiness; NULL otherwise). `data` is then the
	 * displaced surface seen from above: the height at each pixel after the horizontal
	 * displacement (x0 + D(x0) = x). Per point x0 of the undisplaced grid (row-major, w
	 * per row): dx, dy the horizontal displacement D in pixels (+y down the rows), lag
	 * the height there (height units), foam its foam coverage 0..1. */
	const float *dx, *dy, *lag, *foam;
	/* Ambient waves (airy; NULL otherwise): computes, when asked, the horizontal velocity
	 * of the surface per point of the undisplaced grid, the time derivative of the choppy
	 * displacement at choppiness 1 (pixels per second, +y down the rows), into buffers
	 * of the solver's that stay valid until its next step or surface call. */
	void (*velocity)(void *ctx, const float **vx, const float **vy);
	void *vctx;
	/* Physical scale, or 0 if the solver has none: metres per pixel across, and metres
	 * per height unit (a height unit is a scene unit of length). */
	double metres_px, metres_hu;
} tp_surface;

#define TP_STATS_MAX 16
typedef struct tp_stats {
	int n;
	const char *name[TP_STATS_MAX];
	double value[TP_STATS_MAX];
} tp_stats;

typedef struct tp_solver_ctx {
	const struct scene *scene;
	int threads; /* informational; OpenMP is already configured */
} tp_solver_ctx;

typedef struct tp_solver {
	const char *name;
	const char *description;
	size_t priv_size;
	const tp_option *options; /* NULL-terminated; scene "params" keys */
	unsigned caps;            /* TP_SOLVER_* flags */

	int (*init)(void *priv, const tp_solver_ctx *ctx, tp_err *err);
	void (*uninit)(void *priv);
	/* A drop centred at (x, y) pixels of radius r pixels and centre height `strength`. */
	void (*drop)(void *priv, double x, double y, double r, double strength);
	/* One step of in->dt seconds. Returns 0, or TP_EIO if the state blew up (NaN). A solver
	 * may queue the work and do it when its state is next read or changed (surface, drop,
	 * stats, save): ripple does, to run several steps in one sweep. */
	int (*step)(void *priv, const tp_step_in *in);
	/* Fills *out; may compute into buffers allocated at init (no allocation). */
	void (*surface)(void *priv, tp_surface *out);
	void (*stats)(const void *priv, tp_stats *out);
	/* Optional (NULL: no): 1 if this scene's surface at frame f + sc->loop.frames is the
	 * same bits as at frame f, for every f, so a "loop" needs no cross-fade. */
	int (*loops_exactly)(const struct scene *sc);
	/* Optional checkpoints (NULL if unsupported). */
	int (*save)(const void *priv, FILE *f, tp_err *err);
	int (*load)(void *priv, FILE *f, tp_err *err);
	/* Optional: after a step failed, what went wrong and which parameter to change, one
	 * line (NULL: only that it became unstable). */
	const char *(*why)(const void *priv);
	/* Optional (NULL: no): 1 if leaving out surface() for the frame just stepped changes
	 * nothing later (no state kept from it), so a seek may pass through frames without
	 * making their surfaces (sim/loop.h, loop_pass). */
	int (*surface_optional)(const void *priv);
} tp_solver;

enum {
	TP_SOLVER_HEIGHTFIELD = 1u << 0,
	TP_SOLVER_PARTICLES = 1u << 1,
	TP_SOLVER_CELL_STEPS = 1u << 2, /* wave speed fixed in cells per step (see Time) */
	/* What of the scene it honours besides what HEIGHTFIELD or PARTICLES implies
	 * (scene/support.c refuses the rest at load): */
	TP_SOLVER_FLOATING = 1u << 3,     /* boxes with "float": true, and their density */
	TP_SOLVER_BOX_DRAFT = 1u << 4,    /* the density of kinematic boxes (their draft) */
	TP_SOLVER_TURNING_TANK = 1u << 5, /* a tank whose path keyframes "angle" */
	TP_SOLVER_AMBIENT = 1u << 6,      /* "ambient" wind waves */
};

/* registry.c */
extern const tp_solver *const tp_solvers[]; /* NULL-terminated */
const tp_solver *solver_find(const char *name);

/* An instance: descriptor + private state. solver_create() applies defaults, the
 * scene's params and calls init(); solver_destroy(NULL) is a no-op. */
typedef struct solver solver;
int solver_create(const struct scene *sc, int threads, solver **out, tp_err *err);
void solver_destroy(solver *s);
const tp_solver *solver_desc(const solver *s);
void *solver_priv(solver *s);

static inline void tp_stats_add(tp_stats *st, const char *name, double v)
{
	if (st->n < TP_STATS_MAX) {
		st->name[st->n] = name;
		st->value[st->n] = v;
		st->n++;
	}
}

#endif
