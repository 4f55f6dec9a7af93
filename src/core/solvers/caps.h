/*
 * caps.h - what a solver can do, as flags (tp_solver.caps; scene_solver_caps()).
 *
 * Apart from solver.h so that the loader's support checks and the renderer's mode table
 * can ask "does this scene's solver draw particles / make ambient waves" without the
 * solver interface.
 */
#ifndef TP_SOLVER_CAPS_H
#define TP_SOLVER_CAPS_H

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

#endif
