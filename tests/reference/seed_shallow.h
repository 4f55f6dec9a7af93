/*
 * seed_shallow.h - a plain, single-threaded port of seed 003 (GAMES103 lab 4): the shallow
 * wave loops, the seed's volume-preserving drop, and the box coupling through conjugate
 * gradient, written the obvious way (full-grid passes with per-neighbour branches, CG over
 * each box's bounding region). It is the baseline of tests/test_shallow.c and of
 * `make bench`, not production code.
 *
 * Departures from the seed, all needed to make it a usable reference:
 *  - w x h grids instead of size x size; heights are deviations from the rest level;
 *  - boxes are axis-aligned footprints (the seed's Bounds) with a given bottom height,
 *    instead of Unity ray casts; a cell belongs to a box when its centre (i+0.5, j+0.5)
 *    lies inside the footprint;
 *  - CG stops at ||r|| <= tol ||b||, or when the residual would move the water by less
 *    than cg_err height units per step (RMS; 0 = off), or after max_iters (the seed:
 *    r.r < 1e-10 or 128); it sums its dot products in double and clears r, p, Ap in its
 *    region first.
 */
#ifndef TP_TESTS_SEED_SHALLOW_H
#define TP_TESTS_SEED_SHALLOW_H

typedef struct seed_shallow_box {
	double x0, y0, x1, y1; /* footprint, pixels */
	double bottom;         /* box bottom, height units relative to rest */
} seed_shallow_box;

typedef struct seed_shallow {
	int w, h;
	float rate, damping, gamma;
	double cg_tol;
	double cg_err; /* set after init if wanted */
	int cg_iters;
	float *hh, *old_h, *new_h, *low_h, *vh, *b;
	float *cg_r, *cg_p, *cg_Ap;
	unsigned char *cg_mask;
	int last_iters; /* CG iterations of the last solve */
} seed_shallow;

/* Allocates a still pool (all heights 0). Returns 0, or -1 if out of memory. */
int seed_shallow_init(seed_shallow *s, int w, int h, float rate, float damping, float gamma,
		      double cg_tol, int cg_iters);
void seed_shallow_free(seed_shallow *s);
/* The seed's "r" key: h[i,j] += rh, the existing 4-neighbours lose rh/count each. */
void seed_shallow_drop(seed_shallow *s, int i, int j, float rh);
/* One Shallow_Wave() call: wave update, box coupling, then old_h = h, h = new_h. */
void seed_shallow_step(seed_shallow *s, const seed_shallow_box *boxes, int nboxes);

#endif
