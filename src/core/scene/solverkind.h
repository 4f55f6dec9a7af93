/*
 * solverkind.h - what the scene layer knows of a solver: its name, what it honours (its
 * TP_SOLVER_* caps) and its parameters as an options table.
 *
 * The solvers sit above the scene: they read a loaded scene. So the loader does not call
 * the solver registry; its caller hands it the table (scene_load's `solvers`, the
 * registry's tp_solvers), and a scene keeps the kind it chose. Each solver's descriptor
 * (solvers/solver.h, tp_solver) begins with its tp_solver_kind, so the solver layer gets
 * the whole descriptor back with solver_of_kind(). No file of scene/ includes a solvers/
 * header (tests/test_modes.c checks). The renderer reads the caps through
 * scene_solver_caps() and the flags here.
 */
#ifndef TP_SCENE_SOLVERKIND_H
#define TP_SCENE_SOLVERKIND_H

#include <stddef.h>

#include "util/opts.h"

enum {
	TP_SOLVER_HEIGHTFIELD = 1u << 0,
	TP_SOLVER_PARTICLES = 1u << 1,
	TP_SOLVER_CELL_STEPS = 1u << 2, /* wave speed fixed in cells per step (solver.h, Time) */
	/* What of the scene it honours besides what HEIGHTFIELD or PARTICLES implies
	 * (scene/support.c refuses the rest at load): */
	TP_SOLVER_FLOATING = 1u << 3,     /* boxes with "float": true, and their density */
	TP_SOLVER_BOX_DRAFT = 1u << 4,    /* the density of kinematic boxes (their draft) */
	TP_SOLVER_TURNING_TANK = 1u << 5, /* a tank whose path keyframes "angle" */
	TP_SOLVER_AMBIENT = 1u << 6,      /* "ambient" wind waves */
};

typedef struct tp_solver_kind {
	const char *name;
	const char *description;
	/* the solver's private struct, which its options are offsets into: the loader checks
	 * a scene's "params" by setting them in a scratch one (tp_opts_set's ranges) */
	size_t priv_size;
	const tp_option *options; /* NULL-terminated; scene "params" keys */
	unsigned caps;            /* TP_SOLVER_* flags */
} tp_solver_kind;

#endif
