/*
 * sph_impl.h - private to the sph solver (sph.c: descriptor, scene, emitters, stepping;
 * sph_kern.c: neighbour grid and the per-particle passes; sph_surf.c: the render field).
 *
 * Frames. The particles live in the tank's own frame: local (0, 0) is the top-left
 * corner of the tank interior, +y is down, units are pixels and seconds. The tank's
 * motion reaches the fluid only as the inertial acceleration -a_tank of seed 004 ("drag
 * the bottle"), so the walls never move in this frame and containment is exact. World
 * (image) position = local + origin, origin = tank centre - size/2. Obstacles are moved
 * into this frame every substep.
 *
 * Storage is structure-of-arrays, float, reordered by grid cell every substep.
 */
#ifndef TP_SOLVERS_SPH_IMPL_H
#define TP_SOLVERS_SPH_IMPL_H

#include <stdint.h>

#include "solvers/solver.h"
#include "util/rng.h"

enum { SPH_MODEL_SEED = 0, SPH_MODEL_RELAXED = 1 };

/* Fewer particles than this run on one thread: waking threads for tiny passes costs
 * more than it saves (a lot more on a busy machine). Results are the same either way. */
#define SPH_PAR_MIN 2048
/* Particles per fixed reduction chunk: sums are combined chunk by chunk in index order,
 * so they do not depend on the thread count. */
#define SPH_CHUNK 1024
/* Neighbour loops work on this many candidates at once (explicit lanes). Every particle
 * array has this many spare, finite entries after the last particle. */
#define SPH_LANES 8
/* Samples of the wall tables over distances 0..R. */
#define SPH_WALL_N 64

/* An obstacle at one instant, in the tank frame: centre, rotation (cos, sin), half
 * extents grown by the particle margin, and velocity. */
typedef struct sph_obst {
	float cx, cy, c, s, hx, hy, vx, vy;
} sph_obst;

/* What a substep's particle pass needs besides the particles. */
typedef struct sph_sub {
	float dt;
	float ax, ay;          /* gravity - tank acceleration, px/s^2 */
	int nobst;
	const sph_obst *prev;  /* obstacles at the start of the substep */
	const sph_obst *cur;   /* ... and at its end */
} sph_sub;

typedef struct sph_stream { /* run-time state of one stream emitter */
	int scene_index;
	long emitted;
	long total;    /* how many it will emit in the whole scene */
	int slots;     /* particles side by side across the nozzle */
	float width;   /* nozzle width, px */
	tp_rng rng;
} sph_stream;

typedef struct sph {
	/* options (filled from the option table before init) */
	int model;
	double spacing, radius, stiffness, compression, near_stiffness, rest_density, cohesion;
	double viscosity, gravity, wall_stiffness, max_speed, cfl;
	int max_substeps;
	double splat, iso;

	const scene *sc;

	/* derived constants, px and s */
	float s;          /* particle spacing */
	float R, invR;    /* kernel radius */
	float rho0;       /* rest density (kernel sum over neighbours, self excluded) */
	float margin;     /* wall spring zone */
	float W, H;       /* tank interior */
	double omega2;    /* stiffness-limited step: dt <= cfl / sqrt(omega2) */
	/* Wall "ghost" tables (relaxed model): the density, near density and push that the
	 * fluid missing beyond a wall would give a particle at distance d (index d/R*N). */
	float wall_rho[SPH_WALL_N + 2], wall_rhon[SPH_WALL_N + 2];
	float wall_f[SPH_WALL_N + 2], wall_fn[SPH_WALL_N + 2];

	/* particles: n of cap used */
	int n, cap;
	float *x, *y, *vx, *vy;   /* state */
	float *x2, *y2, *vx2, *vy2; /* reorder / next-state buffers, swapped with the above */
	float *rho, *rhon, *p, *pn, *irho;
	int *key, *perm;

	/* uniform grid over the tank, cells >= R/2 wide and >= R tall, row-major */
	int ncx, ncy, ncells;
	int *cell_start; /* ncells + 1 */
	int *cell_fill;  /* ncells */

	/* fixed-chunk reductions */
	int nchunks_max;
	double *part;    /* 4 per chunk */

	/* scene objects */
	double t;
	double org_x, org_y;       /* world position of local (0, 0) now */
	double tank_vx, tank_vy;   /* tank velocity at the last step */
	int have_tank_v;
	int nobst;
	sph_obst *obst_prev, *obst_cur, *obst_sub0, *obst_sub1;
	double *obst_angle;        /* degrees: nobst at the last step, then nobst + 1 now */
	tp_box_pose *poses;        /* world poses at the last step, for the renderer */
	int nstreams;
	sph_stream *streams;
	long emitted;              /* particles created since init */
	long lost;                 /* particles refused because the cap was reached */

	/* last step's diagnostics */
	double ke, vmax, derr, mean_rho;
	int substeps_last;

	/* render field */
	int fw, fh;
	float *field;    /* fw * fh: 0 air, >= 1 fluid */
	float *wx, *wy;  /* world positions for the debug view */
	float splat_r, splat_scale;
} sph;

/* sph_kern.c */
void sph_wall_tables(sph *s);
double sph_lattice_sum(double spacing, double R, int power);
void sph_sort(sph *s);
void sph_predict(sph *s, const sph_sub *c);
void sph_density(sph *s);
/* The final pass of a substep; both return the largest speed afterwards (px/s). */
double sph_relax(sph *s, const sph_sub *c);
double sph_forces_seed(sph *s, const sph_sub *c);
/* Pushes (x, y) out of the obstacles and into the tank; (xp, yp) is where the particle
 * was at the start of the substep. Velocity (vx, vy) loses its into-the-wall part when
 * vx != NULL. */
void sph_collide(const sph *s, const sph_sub *c, float xp, float yp, float *x, float *y,
		 float *vx, float *vy);
/* Sums over fixed chunks: ke, max speed, compression, density; returns 0 if finite. */
int sph_reduce(sph *s);

/* sph_surf.c */
void sph_splat(sph *s);

#endif
