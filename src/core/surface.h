/*
 * surface.h - what a solver hands the renderer each frame: the contract between the two.
 *
 * Its own header so that the renderer (render/) and the solvers (solvers/) share this type
 * and nothing else: render never includes the solver interface, and a solver knows nothing
 * of rendering.
 */
#ifndef TP_SURFACE_H
#define TP_SURFACE_H

#include <stddef.h>

/* A box as the solver sees it at one instant (kinematic poses come from the stepper;
 * floating boxes are integrated by the solver and reported back through tp_surface). */
typedef struct tp_box_pose {
	double x, y;       /* centre, pixels */
	double angle;      /* degrees about the vertical axis */
	double vx, vy;     /* pixels/s (finite difference of the path) */
	double z;          /* height of the box bottom in height units (floating boxes) */
	double tilt[2];    /* radians about the x and y axes (floating boxes) */
} tp_box_pose;

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

#endif
