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
#include "scene/solverkind.h"
#include "surface.h"
#include "util/error.h"
#include "util/opts.h"


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


#define TP_STATS_MAX 16
typedef struct tp_stats {
	int n;
	const char *name[TP_STATS_MAX];
	double value[TP_STATS_MAX];
} tp_stats;

typedef struct tp_solver_ctx {
	const struct scene *scene;
	int threads; /* informational; OpenMP is already configured */
	unsigned cpu_flags; /* tp_cpu_flags() at solver_create: the vector kernels allowed */
	int every_cell;     /* solver_set_every_cell() at solver_create */
} tp_solver_ctx;

typedef struct tp_solver {
	/* What the scene loader sees (scene/solverkind.h): name, description, priv_size,
	 * options, caps. First, so that solver_of_kind() finds the descriptor from it. */
	tp_solver_kind kind;

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


/* The descriptor a scene's kind (sc->solver) begins. */
static inline const tp_solver *solver_of_kind(const tp_solver_kind *k)
{
	_Static_assert(offsetof(tp_solver, kind) == 0, "tp_solver must begin with its kind");
	return (const tp_solver *)k;
}

/* registry.c: the built-in solvers as the scene loader takes them (scene_load's
 * `solvers`), NULL-terminated, and one of them by name (NULL: none). */
extern const tp_solver_kind *const tp_solvers[];
const tp_solver_kind *solver_find(const char *name);

/* An instance: descriptor + private state. solver_create() applies defaults, the
 * scene's params and calls init(); solver_destroy(NULL) is a no-op. */
typedef struct solver solver;
int solver_create(const struct scene *sc, int threads, solver **out, tp_err *err);
/* For tests and benchmarks: 1 makes the instances created from now on step every cell,
 * calm water too (ripple's spans, shallow's calm rows skip it: the same bits, tested
 * against this); 0, the default. Read once into tp_solver_ctx, as the CPU flags are. */
void solver_set_every_cell(int on);
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
