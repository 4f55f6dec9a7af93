/*
 * shallow_impl.h - what the shallow solver's two files share (internal to src/core/solvers/):
 * shallow.c (options, the wave update, drops, init/step/surface/stats/checkpoints) and
 * shallow_boxes.c (box footprints, the CG coupling, floating boxes). The model is
 * described at the top of shallow.c.
 *
 * Layout: eta, eta_old and vh are (w + 2) x (h + 2) doubles with a one-cell ghost ring;
 * a pool cell (x, y) is index (y + 1) * S + x + 1, S = w + 2 (pool_index()).
 */
#ifndef TP_SOLVERS_SHALLOW_IMPL_H
#define TP_SOLVERS_SHALLOW_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "solvers/shallow/cg.h"
#include "solvers/solver.h"

#define TILT_MAX 0.6       /* radians; a box tipping further is outside this model */
#define CG_PAR_CELLS 16384 /* box regions this big (in all) use the threads */
#define PAR_CELLS 65536    /* pools this big use the threads for the wave update: below,
			      a fork and join cost more than the work they would share */
#define GAMMA_MARGIN 1e-6 /* 1 - gamma per step at least: the box solve divides by it */
#define SETTLE_CG_ITERS 100000 /* the resting solve's CG cap (shallow_boxes.c) */
#define SOFT_PENALTY 1.0   /* pull of vh towards 0 on partly covered cells, see cluster_setup */

#define SH_PI 3.14159265358979323846

typedef struct box_state {
	double x, y, angle;    /* centre (px) and yaw (degrees) */
	double vx, vy;         /* px/s */
	double z, vz;          /* bottom relative to the rest level, height units (and /s) */
	double tilt[2], wt[2]; /* radians, rad/s */
	double hw, hh, height; /* half footprint (px), height (units) */
	double mass, inertia[2];
	int floating;
	/* this step's region, in its cluster's frame */
	int active, x0, y0, rw, rh;
	int sx, sy;   /* shift into the cluster frame (wrap) */
	int cluster;
	double sn, cs; /* sin, cos of angle */
} box_state;

typedef struct cluster {
	int x0, y0, w, h; /* region incl. a one-cell margin, cluster frame (== pool frame
			     up to multiples of the pool size) */
	size_t off;       /* cells into the arena */
	size_t part_off;  /* partial sums into the arena */
	size_t span_off;  /* rows' spans (2 ints a row) into the arena */
	int alive;
	cg_stats cg;
	int masked;
	/* Hash of the region, its place in the arena and its boxes' poses: equal to the
	 * previous step's cluster at the same index means its footprint arrays (deg, low,
	 * cov) in the arena are still right (0: never). */
	uint64_t key;
	int geo_valid; /* this step: the footprint arrays are kept from the last step */
	int pc_ready;  /* the arena's preconditioner matches this cluster's mask */
} cluster;

typedef struct shallow {
	/* options */
	double rate, damping, gamma, speed, depth, gravity, cg_tol, drag, edge, viscosity;
	int substeps, cg_iters, float_start;
	/* skip calm water in the wave update (tp_solver_ctx.every_cell 0): the same bits */
	int calm_water;

	/* derived */
	int w, h, S; /* S = w + 2, the stride of the ghosted buffers */
	scene_boundary boundary;
	int nsub;
	double dt_sub, d_step, mu, c_px, g_box, mur_k, inv_edge;
	/* Heights are lengths here: internal units per height unit = output pixels per scene
	 * unit, so a render at another size is the same pool scaled in all three dimensions
	 * (buoyancy, tilts and sideways forces mix heights and pixels). surface() and the
	 * poses report height units again. */
	double hs;

	double *buf[3];         /* ghosted (w+2) x (h+2) */
	double *eta, *old, *nw; /* rotate through buf */
	double *vh;             /* raw virtual height, ghosted layout (the ring stays 0) */
	double *vh1;            /* vh one step earlier (0 outside old2_cl): the CG's warm start
				   extrapolates, 2 vh - vh1 */
	/* Calm water (shallow.c): per buffer, per row, the columns [lo, hi] outside which it
	 * holds +0.0 bit for bit (2h ints; lo > hi: all of the row); they rotate with eta,
	 * old and nw. */
	int *span_mem[3];
	int *sp_eta, *sp_old, *sp_nw;
	uint8_t *band;          /* h flags: rows the boxes' coupling reads (wave_and_couple) */
	int *rows;              /* h: the order wave_and_couple takes the rows in */
	float *surf;            /* w*h, surface() output */

	int nbox;
	box_state *box;
	tp_box_pose *pose; /* reported poses */
	tp_box_pose *prev; /* the stepper's poses at the previous step */
	cluster *cl;
	int ncl;
	cluster *old_cl; /* last step's regions, to clear vh there */
	int nold;
	cluster *old2_cl; /* the step before's regions, to clear vh1 there */
	int nold2;

	/* arena for the clusters */
	size_t cap, part_cap, span_cap;
	int *a_span;
	uint8_t *a_mask, *a_deg;
	float *a_low, *a_cov;
	double *a_b, *a_x, *a_r, *a_p, *a_q, *a_z, *a_pc, *a_apc, *a_part, *a_diag;

	/* bookkeeping */
	double v0;
	int last_iters, masked, cg_fail;
	double last_resid;
	int blown;
} shallow;

/* How much of a box covers a point d pixels inside one of its edges (d < 0: outside):
 * a smoothstep 3t^2 - 2t^3 over the soft edge width E, t = d / E + 1/2. */
static inline double edge_ramp(const shallow *s, double d)
{
	double t = d * s->inv_edge + 0.5;
	return t <= 0 ? 0 : t >= 1 ? 1 : t * t * (3 - 2 * t);
}

static inline double *row(double *b, int S, int y) { return b + (size_t)(y + 1) * S + 1; }

/* Index into the ghosted buffers (eta, eta_old, vh) of cluster-frame cell (gx, gy), or -1
 * outside the pool. */
static inline long pool_index(const shallow *s, int gx, int gy)
{
	if (s->boundary == SCENE_BOUNDARY_WRAP) {
		gx = gx >= s->w ? gx - s->w : gx;
		gy = gy >= s->h ? gy - s->h : gy;
	} else if (gx < 0 || gy < 0 || gx >= s->w || gy >= s->h) {
		return -1;
	}
	return (long)(gy + 1) * s->S + gx + 1;
}

static inline double *eta_at(double *b, long p) { return b + p; }

/* shallow.c: widens the calm-water spans sp (sp_eta, sp_old or sp_nw) of pool rows y0..y1
 * to take columns x0..x1 (cluster-frame coordinates: wrapped, or clipped to the pool),
 * after writing there. */
void shallow_spans_mark(const shallow *s, int *sp, int x0, int x1, int y0, int y1);

/* shallow_boxes.c: the box coupling of one internal step (settle != 0: the initial
 * resting state instead). Returns 0, or -1 if the boxes did not fit the arena (cannot
 * happen by construction). */
int shallow_couple(shallow *s, int settle);
/* shallow_couple in two parts: the clusters from the boxes' poses alone (no water is
 * read), then the coupling over them, which reads and writes the new heights (nw) only in
 * the clusters' regions (so the wave update of the other rows may run beside it). */
int shallow_build_clusters(shallow *s);
int shallow_couple_built(shallow *s, int settle);

#endif
