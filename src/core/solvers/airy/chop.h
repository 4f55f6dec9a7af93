/*
 * chop.h - choppy ambient waves for the airy solver: the horizontal displacement of
 * Tessendorf (2001), the displaced surface seen from above, and foam where it folds.
 *
 * The ambient field h(x) = sum_k h^(k) e^{i k.x} (its own Fourier coefficients, airy.c)
 * moves each surface point x0 horizontally by
 *
 *     D(x0) = sum_k  i lambda (k / |k|) h^(k) e^{i k.x0}            (pixels)
 *
 * so that for one wave h = A cos(k x) the points move by -lambda A sin(k x): towards the
 * crests (a Gerstner wave). The crests sharpen and the troughs flatten. (Tessendorf
 * writes -i lambda k/|k| with the opposite sign of the exponent; the sign here is the
 * one that sharpens crests.) Its derivatives are real multiples of h^:
 * dDx/dx = -lambda kx^2/|k| h^, dDy/dy = -lambda ky^2/|k| h^, dDx/dy = dDy/dx =
 * -lambda kx ky/|k| h^, and the Jacobian of x0 -> x0 + D(x0) is
 *
 *     J = (1 + dDx/dx)(1 + dDy/dy) - (dDx/dy)(dDy/dx);
 *
 * J < 0 where the surface folds over itself. Every field is an inverse FFT of the
 * ambient coefficients (chop.c), so all of it is periodic on the grid (it tiles).
 *
 * Foam: each frame f adds a(f) = clamp(threshold - J, 0, 1) x FOAM_RATE / fps where the
 * surface (nearly) folds; the foam shown at frame f is
 *
 *     F(f) = min(1, sum_{j=0}^{N-1} e^{-j / (fade fps)} a(f - j)),  N = ceil(4 fade fps),
 *
 * a sum over a fixed window of earlier frames, so F is a function of the field at those
 * frames alone: in a loop (where the field at step c is the field at c + period) it
 * loops bit for bit, and a seek or a checkpoint gives the same bytes as a run from the
 * start. The a(f - j) are kept in a ring of N frames (8 bits each), or in a loop of F
 * frames a ring of the F frames (each computed once); missing frames (the first frame, a
 * seek) are computed from the field at their step, which the ambient waves give in closed
 * form for any step, before frame 0 too.
 *
 * The foam handed out is shaped by a range [lo, hi] (ambient.foam.range): clamp((F - lo) /
 * (hi - lo), 0, 1), so thin foam vanishes (lo) and thick foam saturates (hi); [0, 1] is F.
 *
 * The displaced surface: the height at pixel x is the height at the point x0 that moves
 * there, x0 + D(x0) = x, found by CHOP_ITERS fixed-point iterations x0 <- x - D(x0)
 * (bilinear samples of D, periodic), then a bilinear sample of the heights at x0
 * (periodic with wrap, held at the edges otherwise). Where the surface folds there is no
 * single x0; the iterations still give a deterministic value.
 */
#ifndef TP_SOLVERS_AIRY_CHOP_H
#define TP_SOLVERS_AIRY_CHOP_H

#include <stdint.h>

#include "solvers/airy/spec2d.h"
#include "util/error.h"

#define CHOP_ITERS 5
#define FOAM_RATE  10.0 /* foam per second at full depth (J = threshold - 1) */

/* Writes the ambient field's coefficients (at's layout) at step c into coef. */
typedef void (*chop_fill_fn)(const void *ctx, float *coef, long c);

typedef struct airy_chop {
	const spec2d *at;
	int w, h, wrap, spf;
	float thr;
	float flo, fhi; /* the foam range */
	float *mul;     /* per mode: kx/|k|, ky/|k|, kx^2/|k|, ky^2/|k|, kx ky/|k| (x lambda) */
	float *ca, *cw; /* coefficients: the field, a transform's input */
	float *dx, *dy; /* displacement, pixels */
	float *jxx, *jyy, *jxy;
	float *disp; /* the displaced surface */
	float *foam;
	int nwin;        /* N */
	int nring;       /* frames the ring holds: N, or a loop's frames */
	long period;     /* steps per loop when the ring holds a loop's frames, else 0 */
	float *wts;      /* N weights, FOAM_RATE / fps e^{-j / (fade fps)} / 255 */
	const uint8_t **wrows; /* N: chop_frame's ring frames in the order of wts */
	uint8_t *ring;   /* N frames of a(f), 255 = 1 */
	long *ring_step; /* the step (key_of) each ring frame holds */
} airy_chop;

/* lambda_px: choppiness x pixels per height unit; range the foam's (chop.h); fps frames per second of spf steps;
 * period the steps of an exact loop (the field at c + period is the field at c), or 0. */
int chop_init(airy_chop *c, const spec2d *at, int wrap, int spf, long period, double lambda_px,
	      double thr, double fade, const double range[2], double fps, tp_err *err);
void chop_free(airy_chop *c);
/* The fields at step `step` of heights `lag` (w x h, height units); fill gives the
 * ambient coefficients. Fills c->dx, dy, disp, foam. */
void chop_frame(airy_chop *c, const float *lag, long step, chop_fill_fn fill, const void *ctx);

#endif
