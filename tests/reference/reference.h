/*
 * reference.h - plain, obviously-correct ports of the seed loops of the integer solvers
 * (seed 000 hooke, seed 001 ripple): the oracle of the bit-exactness tests and the
 * baseline of the benchmarks. Unpadded w x h row-major arrays, 2-D loops, one thread, no
 * tricks; the seeds' interior loops are kept as written (reflect), with periodic indexing
 * for wrap. Drops, the absorbing sponge and boxes are written out here again from their
 * definitions in src/core/solvers/intgrid.h, cell by cell over the whole pool, sharing only
 * ig_sincos_deg() with the solvers.
 *
 * Functions returning int give 0 or -1 (out of memory).
 */
#ifndef TP_TESTS_REFERENCE_H
#define TP_TESTS_REFERENCE_H

#include <stdint.h>

#include "scene/scene.h"
#include "solvers/solver.h"

typedef struct ref_pool {
	int w, h;
	scene_boundary boundary;
	int ring; /* reflect/absorb: cells closer than this to an edge stay 0 */
	int unit;
	int sponge;        /* effective absorbing band width (0 unless absorb) */
	int32_t *sponge_f; /* Q16 factor by depth */
	double wake;
} ref_pool;

int ref_pool_init(ref_pool *p, int w, int h, scene_boundary b, int ring, int unit, int sponge,
		  double wake);
void ref_pool_free(ref_pool *p);
void ref_drop(const ref_pool *p, int32_t **bufs, int n, double x, double y, double r,
	      double strength);
/* Scales the change of buf since base (or buf itself if base is NULL) in the band. */
void ref_sponge(const ref_pool *p, int32_t *buf, const int32_t *base);
void ref_boxes(const ref_pool *p, const scene_box *boxes, const tp_box_pose *poses, int nboxes,
	       double dt, int32_t **push, int npush, int32_t **hold, int nhold);

typedef struct ref_hooke {
	ref_pool p;
	int edge, corner, vshift, hshift; /* the seed's 3, 1, 6, 8 after init */
	int32_t *back, *front, *v;        /* back = the current heights, as in the seed */
} ref_hooke;

int ref_hooke_init(ref_hooke *r, int w, int h, scene_boundary b, int unit, int sponge, double wake);
void ref_hooke_free(ref_hooke *r);
void ref_hooke_drop(ref_hooke *r, double x, double y, double rad, double strength);
void ref_hooke_step(ref_hooke *r, const scene_box *boxes, const tp_box_pose *poses, int nboxes,
		    double dt);

typedef struct ref_ripple {
	ref_pool p;
	int damping; /* 5 after init */
	int32_t *cur, *prev;
} ref_ripple;

int ref_ripple_init(ref_ripple *r, int w, int h, scene_boundary b, int unit, int sponge,
		    double wake);
void ref_ripple_free(ref_ripple *r);
void ref_ripple_drop(ref_ripple *r, double x, double y, double rad, double strength);
void ref_ripple_step(ref_ripple *r, const scene_box *boxes, const tp_box_pose *poses, int nboxes,
		     double dt);

#endif
