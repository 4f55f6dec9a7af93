/*
 * airy_impl.h - the airy solver's state and what its files share (airy.c: the solver;
 * waves.c: the ambient wind waves). Private to src/core/solvers/airy/.
 */
#ifndef TP_SOLVERS_AIRY_IMPL_H
#define TP_SOLVERS_AIRY_IMPL_H

#include <math.h>
#include <stdint.h>

#include "scene/scene.h"
#include "solvers/airy/chop.h"
#include "solvers/airy/spec2d.h"
#include "solvers/solver.h"

#define AIRY_PI   3.14159265358979323846
#define G_EARTH   9.81
#define RHO_WATER 1000.0
#define PAR_CELLS 65536
/* Modes whose set-up (several transcendental functions each) is shared among the threads:
 * a loaded scene's first frame waits for it (wind_pool.json at 640x360: 230,000 modes). */
#define PAR_SETUP_MODES 4096

typedef struct airy {
	/* options */
	double metres, depth, tension, damping, viscosity, edge;
	int sponge;

	/* derived */
	const scene *sc;
	int w, h;
	double dt;           /* the scene's step, s */
	double g, dpx, tpx;  /* gravity px/s^2, depth px (0: deep), sigma/rho px^3/s^2 */
	spec2d t;            /* the dynamic field's transform */
	size_t nmodes;       /* t.cw * t.h */
	float *eta, *psi;    /* state, t.ncoef floats */
	float *co, *si, *om; /* per mode: cos and sin of omega dt times the decay, omega */
	float *tap;          /* per mode: source low-pass (0 at k = 0) */
	float *coef;         /* scratch coefficients */
	float *force;        /* real: drops since the last step */
	int pending;         /* force holds something */
	float *press;        /* real: box pressure head */
	float *surf;         /* real: the surface handed out */
	float *sp_mul;       /* absorb: per cell exp(-s dt) (1 outside the band), or NULL */
	long cur;            /* steps taken */

	/* boxes */
	int nbox;
	tp_box_pose *pose, *prev;
	double *draft;

	/* ambient */
	int amb;
	spec2d at;            /* its FFT grid (== t when wrap) */
	int own_at;           /* at is separate (reflect: the pool has cosine modes) */
	float *acoef, *areal; /* its scratch (acoef == coef when shared) */
	float *ap, *am;       /* per mode of at: complex amplitudes of +k and -k */
	double *aom;          /* per mode: omega (no loop) */
	int64_t *an;          /* per mode: turns per loop (loop) */
	int64_t period;       /* steps per loop, 0 without a loop */
	float *ptab;          /* loop: cos, sin of 2 pi j / period */
	int chop_on;          /* choppiness > 0: displacement, displaced surface, foam */
	airy_chop chop;
	float *vcoef, *vx, *vy; /* the velocity's coefficients (x, then y) and fields */
	double hs, hs_law;      /* significant wave height, metres: all systems, law's part */

	double rms, lo, hi; /* of the last surface */
} airy;

/* omega^2 = (g k + T k^3) tanh(k d), pixels and seconds. */
static inline double omega_of(const airy *a, double k)
{
	double w2 = a->g * k + a->tpx * k * k * k;
	if (a->dpx > 0)
		w2 *= tanh(k * a->dpx);
	return sqrt(w2);
}

/* 1 up to half the Nyquist wavenumber (pi per pixel), cos^2 down to 0 at it. */
static inline double lowpass(double k)
{
	double q = k / AIRY_PI;
	if (q <= 0.5)
		return 1;
	if (q >= 1)
		return 0;
	double c = cos(AIRY_PI * (q - 0.5));
	return c * c;
}

/* waves.c: the ambient waves of sc->ambient (amplitudes, loop turns, choppiness). */
int airy_ambient_init(airy *a, const scene *sc, tp_err *err);
/* Adds the ambient field's coefficients at step c to out (a->at's layout). */
void airy_ambient_add(const airy *a, float *out, long c);
/* chop_fill_fn: the ambient coefficients alone at step c (any c, negative too). */
void airy_ambient_fill(const void *ctx, float *coef, long c);
/* tp_surface.velocity: the horizontal velocity of the ambient waves at a->cur. */
void airy_ambient_velocity(void *ctx, const float **vx, const float **vy);

#endif
