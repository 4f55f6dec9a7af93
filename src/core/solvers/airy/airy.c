/*
 * airy - linear (Airy) water waves, evolved exactly per Fourier mode: deep or finite
 * depth gravity waves with capillary ripples,
 *
 *     omega(k)^2 = (g k + (sigma / rho) k^3) tanh(k d),
 *
 * so every wavelength runs at its own speed (dispersion): a boat leaves a Kelvin wake, a
 * drop's rings spread long waves first. docs/airy.md explains the model and its choices.
 *
 * State: the surface's spectrum eta^ and psi^ = (d eta / dt)^ / omega, per mode of a 2D
 * FFT (boundary wrap and absorb) or DCT-II (reflect: walls are mirror planes), kept as
 * unnormalised forward coefficients (spec2d.h). A step of dt turns each mode's pair by
 * omega dt, exactly, times a decay exp(-(damping + 2 nu k^2) dt). Sources act in real
 * space and are transformed once per step:
 *   - drops and rain: a Gaussian bump (sigma = radius / 2) of height `strength`, added to
 *     eta at rest;
 *   - boxes: a pressure patch of head P = density x height (the draft) under the soft-edged
 *     footprint at mid-step. With P held over a step, eta + P turns exactly, so a still
 *     box sits in a dip of depth P and a moving one makes waves (the classic Kelvin
 *     source). Boxes are hulls, not walls: waves pass under them.
 * Every source spectrum is multiplied by a low-pass that is 1 up to half the grid's
 * Nyquist wavenumber and falls to 0 at it (cos^2), and loses its mean (k = 0 has no
 * restoring force), so no source puts energy where the grid cannot represent it.
 *
 * absorb: a sponge band of `sponge` pixels along the edges damps the vertical velocity,
 * exp(-s(x) dt) with s = s_max (1 - d / band)^2, in real space (two more transforms), on
 * the periodic grid: what leaves one side crosses both bands before it could come back.
 * Sources are cut at the edges (not wrapped) for both reflect and absorb.
 *
 * ambient (scene "ambient"): wind waves from a JONSWAP, TMA or Phillips spectrum on the FFT
 * grid of the picture, with random Gaussian amplitudes from the scene's seed; each mode
 * runs at omega(k). In a looping scene each omega is rounded to a whole number n of turns
 * per loop and the phase at step c is 2 pi (n c mod P) / P with P the loop's steps, an
 * integer: the field at frame f + loop frames is bit for bit the one at f. With a
 * choppiness, chop.c moves the surface horizontally (Tessendorf), hands out the displaced
 * surface and adds foam where it folds (chop.h).
 *
 * Units: pixels (output) and seconds; `metres` says how long a scene unit is, so g, the
 * depth and the surface tension are converted to pixels at init, and a render at another
 * size is the same water on a finer grid. Heights are height units (the model is linear).
 * Determinism: transforms in fixed blocks (spec2d.c), per-mode and per-row loops with no
 * reductions; the same bits whatever the thread count.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solver.h"
#include "solvers/airy/chop.h"
#include "solvers/airy/spec2d.h"
#include "util/rng.h"
#include "util/wire.h"

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

#define OFF(f) offsetof(airy, f)
static const tp_option airy_options[] = {
	{"metres", "metres of water per scene unit (sets the wavelengths g makes)", OFF(metres),
	 TP_OPT_DOUBLE, 0.01, 1e-5, 1000, NULL, TP_UNIT_PER_LENGTH},
	{"depth", "water depth in metres; 0 = deep water (tanh(k d) = 1)", OFF(depth),
	 TP_OPT_DOUBLE, 0, 0, 1e5, NULL, TP_UNIT_NONE},
	{"tension", "surface tension, N/m (water 0.0728; 0 = no capillary ripples)", OFF(tension),
	 TP_OPT_DOUBLE, 0.0728, 0, 10, NULL, TP_UNIT_NONE},
	{"damping", "decay of every wave, 1/s", OFF(damping), TP_OPT_DOUBLE, 0.05, 0, 1000, NULL,
	 TP_UNIT_NONE},
	{"viscosity", "kinematic viscosity, m^2/s: short waves decay as 2 nu k^2 (water 1e-6)",
	 OFF(viscosity), TP_OPT_DOUBLE, 1e-6, 0, 1, NULL, TP_UNIT_NONE},
	{"sponge", "width in pixels of the absorbing band (boundary absorb)", OFF(sponge),
	 TP_OPT_INT, 32, 1, 4096, NULL, TP_UNIT_LENGTH},
	{"edge", "width in pixels of a box's soft edge (its pressure ramps up over it)", OFF(edge),
	 TP_OPT_DOUBLE, 4, 0.5, 256, NULL, TP_UNIT_LENGTH},
	{NULL},
};

/* omega^2 = (g k + T k^3) tanh(k d), pixels and seconds. */
static double omega_of(const airy *a, double k)
{
	double w2 = a->g * k + a->tpx * k * k * k;
	if (a->dpx > 0)
		w2 *= tanh(k * a->dpx);
	return sqrt(w2);
}

/* 1 up to half the Nyquist wavenumber (pi per pixel), cos^2 down to 0 at it. */
static double lowpass(double k)
{
	double q = k / AIRY_PI;
	if (q <= 0.5)
		return 1;
	if (q >= 1)
		return 0;
	double c = cos(AIRY_PI * (q - 0.5));
	return c * c;
}

static void airy_uninit(void *priv)
{
	airy *a = priv;
	float *f[] = {a->eta,   a->psi,  a->co,     a->si,    a->om, a->tap, a->coef, a->force,
		      a->press, a->surf, a->sp_mul, a->areal, a->ap, a->am,  a->ptab,
		      a->vcoef, a->vx, a->vy};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		spec_release(f[i]);
	if (a->own_at) {
		spec_release(a->acoef);
		spec_free(&a->at);
	}
	spec_free(&a->t);
	free(a->aom);
	free(a->an);
	free(a->pose);
	free(a->prev);
	free(a->draft);
	chop_free(&a->chop);
}

/* ---- ambient wind waves ---- */

/* How the energy of a system spreads over directions th (radians): cos^(2s) of the angle
 * to the wind in the half-plane downwind, times 1 - f, and the same lobe upwind times f,
 * so a fraction f travels against the wind. Each lobe is normalised alike, so f is
 * exactly the upwind share; s = 1, f = 0 is the cos^2 of Tessendorf (2001). */
static double spreading(const scene_waves *wv, double th)
{
	const double c = cos(th - wv->direction * AIRY_PI / 180), s = wv->spreading;
	const double fwd = c > 0 ? (s == 1 ? c * c : pow(c, 2 * s)) : 0;
	const double back = c < 0 ? (s == 1 ? c * c : pow(-c, 2 * s)) : 0;
	return (1 - wv->against) * fwd + wv->against * back;
}

/* JONSWAP's S(w) = g^2 w^-5 exp(-5/4 (wp/w)^4) 3.3^r without its alpha (the amplitude is
 * normalised afterwards), r = exp(-(w - wp)^2 / (2 sg^2 wp^2)). */
static double jonswap(double g, double w, double wp)
{
	const double sg = w <= wp ? 0.07 : 0.09, x = (w - wp) / (sg * wp);
	return g * g / pow(w, 5) * exp(-1.25 * pow(wp / w, 4)) * pow(3.3, exp(-0.5 * x * x));
}

/* JONSWAP's peak, wp = 22 (g^2 / (U F))^(1/3) (Hasselmann et al. 1973); U, F, g in any
 * one length unit. */
static double jonswap_peak(double g, double U, double F)
{
	return 22 * cbrt(g * g / (U * F));
}

/* Pierson-Moskowitz's peak, wp = 0.877 g / U19.5 with the wind at 19.5 m, U19.5 = 1.026 U10
 * (Pierson and Moskowitz 1964). */
static double pm_peak(double g, double U)
{
	return 0.877 * g / (1.026 * U);
}

/* Kitaigorodskii's depth factor phi(w_h), w_h = w sqrt(d / g): 0.5 w_h^2 up to 1,
 * 1 - 0.5 (2 - w_h)^2 up to 2, then 1 (deep water); TMA = JONSWAP x phi (Bouws et al.
 * 1985). */
static double tma_factor(double wh)
{
	return wh <= 1 ? 0.5 * wh * wh : wh < 2 ? 1 - 0.5 * (2 - wh) * (2 - wh) : 1;
}

/* The spectrum's density per unit area of wavenumbers at k (px^-1) in direction th
 * (radians), up to a constant (the amplitude is normalised afterwards). */
static double ambient_density(const airy *a, const scene_waves *am, double k, double th)
{
	if (k <= 0)
		return 0;
	double spread = spreading(am, th);
	if (spread <= 0)
		return 0;
	const double U = am->wind / a->metres; /* px/s */
	if (am->spectrum == SCENE_SPECTRUM_PHILLIPS) {
		double L = U * U / a->g, kl = k * L;
		return exp(-1 / (kl * kl)) / (k * k * k * k) * spread;
	}
	/* S(w) as a density over k: S(w) dw/dk / k */
	const double w = omega_of(a, k), dk = k * 1e-4;
	const double dwdk = (omega_of(a, k + dk) - omega_of(a, k - dk)) / (2 * dk);
	double S;
	if (am->spectrum == SCENE_SPECTRUM_PM) {
		/* S(w) = g^2 w^-5 exp(-5/4 (wp/w)^4) */
		const double wp = pm_peak(a->g, U);
		S = a->g * a->g / pow(w, 5) * exp(-1.25 * pow(wp / w, 4));
	} else {
		S = jonswap(a->g, w, jonswap_peak(a->g, U, am->fetch / a->metres));
		if (am->spectrum == SCENE_SPECTRUM_TMA)
			S *= tma_factor(w * sqrt(a->dpx / a->g));
	}
	return S * dwdk / k * spread;
}

/* The significant wave height Hs (metres) that a system's spectrum gives for its wind
 * (and fetch), when its amplitude is left out; the RMS height is Hs / 4.
 *   jonswap: the JONSWAP fetch law, g Hs / U^2 = 1.6e-3 (g F / U^2)^(1/2) (Hasselmann
 *     et al. 1973), at most the fully developed sea's (pierson-moskowitz);
 *   tma: that, times the square root of the share of JONSWAP's energy the depth factor
 *     keeps (integrated over w);
 *   pierson-moskowitz: Hs = 4 sqrt(m0), m0 = alpha g^2 / (5 wp^4), alpha = 0.0081: Hs =
 *     0.209 U19.5^2 / g;
 *   phillips: the saturation range (alpha / 2) k^-3 exp(-1 / (k L)^2), L = U^2 / g, has
 *     m0 = alpha L^2 / 4: Hs = 2 sqrt(alpha) U^2 / g = 0.18 U^2 / g. */
static double airy_law_hs(const scene_waves *wv, double depth)
{
	const double g = G_EARTH, U = wv->wind, alpha = 0.0081;
	const double wpm = pm_peak(g, U);
	const double hs_pm = 4 * sqrt(alpha * g * g / (5 * pow(wpm, 4)));
	if (wv->spectrum == SCENE_SPECTRUM_PM)
		return hs_pm;
	if (wv->spectrum == SCENE_SPECTRUM_PHILLIPS)
		return 2 * sqrt(alpha) * U * U / g;
	double hs = 1.6e-3 * U * sqrt(wv->fetch / g);
	hs = hs < hs_pm ? hs : hs_pm;
	if (wv->spectrum == SCENE_SPECTRUM_TMA && depth > 0) {
		/* midpoint sums over w up to 40 wp (the tail beyond holds < 1e-6 of it) */
		const double wp = jonswap_peak(g, U, wv->fetch);
		const int n = 20000;
		double all = 0, kept = 0;
		for (int i = 0; i < n; i++) {
			const double w = (i + 0.5) * 40 * wp / n, S = jonswap(g, w, wp);
			all += S;
			kept += S * tma_factor(w * sqrt(depth / g));
		}
		hs *= all > 0 ? sqrt(kept / all) : 0;
	}
	return hs;
}

/* A standard normal pair from the mode's own generator (Box-Muller). */
static void gauss2(tp_rng *r, double *u, double *v)
{
	double r1 = tp_rng_unit(r), r2 = tp_rng_unit(r);
	double m = sqrt(-2 * log(1 - r1));
	*u = m * cos(2 * AIRY_PI * r2);
	*v = m * sin(2 * AIRY_PI * r2);
}

/* Complex amplitude of system `sys`'s full-spectrum mode (kx index i in 0..w-1, ky index
 * j): from a generator seeded by the signed mode numbers (whole waves across the pool)
 * and the system alone, so +k and -k agree wherever they are stored, and a mode is the
 * same wave at every render size (seeded by the storage index j w + i instead, a scene's
 * seas at two sizes were unrelated: correlation 0.04). */
static void ambient_amp(const airy *a, const scene_waves *am, int sys, int i, int j,
			double out[2])
{
	const int w = a->w, h = a->h;
	const int ki = i <= w / 2 ? i : i - w, kj = j <= h / 2 ? j : j - h;
	const double kx = 2 * AIRY_PI * ki / w, ky = 2 * AIRY_PI * kj / h;
	const double k = sqrt(kx * kx + ky * ky);
	double s = ambient_density(a, am, k, atan2(ky, kx)) * lowpass(k);
	if (am->shortest > 0) {
		const double l = am->shortest / a->metres * k / (2 * AIRY_PI);
		s *= exp(-l * l);
	}
	tp_rng r;
	tp_rng_seed(&r, am->seed,
		    ((0x616d62ull + (uint64_t)sys) << 40) | ((uint64_t)(kj + (1 << 19)) << 20) |
			    (uint64_t)(ki + (1 << 19)));
	double u, v;
	gauss2(&r, &u, &v);
	s = sqrt(s * 0.5);
	out[0] = u * s;
	out[1] = v * s;
}

/* System `sys`'s amplitudes into p (+k) and q (-k), and its variance (the mean of eta^2,
 * summed over the full spectrum of |A|^2 / 2), summed in storage order (the same bits on
 * any number of threads). */
static double system_amps(const airy *a, const scene_waves *am, int sys, float *p_, float *q_,
			  double *vm)
{
	const int cw = a->at.cw, w = a->w, h = a->h;
	const size_t nm = (size_t)cw * h;
#pragma omp parallel for schedule(static) if (nm >= PAR_SETUP_MODES)
	for (int j = 0; j < h; j++)
		for (int i = 0; i < cw; i++) {
			size_t m = (size_t)j * cw + i;
			double p[2], q[2];
			ambient_amp(a, am, sys, i, j, p);
			ambient_amp(a, am, sys, (w - i) % w, (h - j) % h, q);
			p_[2 * m] = (float)p[0];
			p_[2 * m + 1] = (float)p[1];
			q_[2 * m] = (float)q[0];
			q_[2 * m + 1] = (float)q[1];
			/* columns 1..(w-1)/2 stand for themselves and their mirror */
			double wt = (i == 0 || 2 * i == w) ? 0.5 : 1;
			vm[m] = wt * (p[0] * p[0] + p[1] * p[1] + q[0] * q[0] + q[1] * q[1]);
		}
	double var = 0;
	for (size_t m = 0; m < nm; m++)
		var += vm[m];
	return var * 0.5;
}

static void ambient_velocity(void *ctx, const float **vx, const float **vy);

static int ambient_init(airy *a, const scene *sc, tp_err *err)
{
	const scene_ambient *am = &sc->ambient;
	for (int s = 0; s < am->nwaves; s++)
		if (am->waves[s].spectrum == SCENE_SPECTRUM_TMA && a->dpx <= 0)
			return scene_errf(sc, err, TP_EINPUT,
					  s ? "ambient.swell" : "ambient.spectrum",
					  "tma is the spectrum of finite depth; give the water a "
					  "depth with params.depth in metres (got deep water, "
					  "depth 0)");
	if (a->t.kind == SPEC_FFT) { /* shared: the ambient field's modes are the pool's */
		a->at = a->t;
		a->acoef = a->coef;
	} else {
		int rc = spec_init(&a->at, SPEC_FFT, a->w, a->h, err);
		if (rc < 0)
			return rc;
		a->own_at = 1;
		if (!(a->acoef = spec_alloc(a->at.ncoef)))
			return tp_errf(err, TP_EIO, "out of memory for the ambient waves");
	}
	const size_t nm = (size_t)a->at.cw * a->at.h, cells = (size_t)a->w * a->h;
	a->ap = spec_alloc(2 * nm);
	a->am = spec_alloc(2 * nm);
	a->vcoef = spec_alloc(2 * a->at.ncoef);
	a->vx = spec_alloc(cells);
	a->vy = spec_alloc(cells);
	if (a->own_at)
		a->areal = spec_alloc(cells);
	if (!a->ap || !a->am || (a->own_at && !a->areal) || !a->vcoef || !a->vx || !a->vy)
		return tp_errf(err, TP_EIO, "out of memory for the ambient waves");
	if (sc->loop.on) {
		a->period = (int64_t)sc->loop.frames * (sc->substeps > 0 ? sc->substeps : 1);
		a->an = calloc(nm, sizeof *a->an);
		a->ptab = spec_alloc(2 * (size_t)a->period);
		if (!a->an || !a->ptab)
			return tp_errf(err, TP_EIO, "out of memory for the ambient waves");
		for (int64_t j = 0; j < a->period; j++) {
			double ph = 2 * AIRY_PI * (double)j / (double)a->period;
			a->ptab[2 * j] = (float)cos(ph);
			a->ptab[2 * j + 1] = (float)sin(ph);
		}
	} else if (!(a->aom = calloc(nm, sizeof *a->aom))) {
		return tp_errf(err, TP_EIO, "out of memory for the ambient waves");
	}
	const int cw = a->at.cw, h = a->h;
	for (int j = 0; j < h; j++)
		for (int i = 0; i < cw; i++) {
			size_t m = (size_t)j * cw + i;
			const double kx = spec_kx(&a->at, i), ky = spec_ky(&a->at, j);
			const double om = omega_of(a, sqrt(kx * kx + ky * ky));
			if (a->period) {
				/* whole turns per loop: period steps of dt */
				double n =
					floor(om * (double)a->period * a->dt / (2 * AIRY_PI) + 0.5);
				n = n < 1 && om > 0 ? 1 : n;
				a->an[m] = (int64_t)fmod(n, (double)a->period);
			} else {
				a->aom[m] = om;
			}
		}
	/* Each system's amplitudes, then one factor for the RMS height asked for (or its
	 * law's). (The RMS of the waves this render shows: a render too small for the
	 * shortest waves shows the others a little higher, 0.2% for wind_pool.json at
	 * 320x180; normalising at the scene's own size instead would cost a pass over that
	 * size's spectrum at every load, 55 ms of a preview's reload.) The systems are
	 * independent random fields, so their variances add. */
	double *vm = malloc(nm * sizeof *vm);
	float *p = am->nwaves > 1 ? spec_alloc(2 * nm) : a->ap;
	float *q = am->nwaves > 1 ? spec_alloc(2 * nm) : a->am;
	if (!vm || !p || !q) {
		free(vm);
		if (p != a->ap)
			spec_release(p);
		if (q != a->am)
			spec_release(q);
		return tp_errf(err, TP_EIO, "out of memory for the ambient waves");
	}
	const double mhu = a->metres * scene_scale(sc); /* metres per height unit */
	double hs2 = 0, law2 = 0;
	for (int s = 0; s < am->nwaves; s++) {
		const scene_waves *wv = &am->waves[s];
		const double var = system_amps(a, wv, s, p, q, vm);
		const double law = airy_law_hs(wv, a->depth);
		const double rms = wv->amplitude > 0 ? wv->amplitude : law / 4 / mhu;
		const double gain = var > 0 ? rms / sqrt(var) : 0;
		hs2 += 16 * rms * rms * mhu * mhu;
		law2 += wv->amplitude > 0 ? 0 : law * law;
		for (size_t m = 0; m < 2 * nm; m++) {
			const float pv = (float)(p[m] * gain), qv = (float)(q[m] * gain);
			a->ap[m] = s ? a->ap[m] + pv : pv;
			a->am[m] = s ? a->am[m] + qv : qv;
		}
	}
	a->hs = sqrt(hs2);
	a->hs_law = sqrt(law2);
	free(vm);
	if (p != a->ap)
		spec_release(p);
	if (q != a->am)
		spec_release(q);
	a->amb = 1;
	if (am->choppiness > 0) {
		/* heights are in scene units: scene_scale pixels each */
		int rc = chop_init(&a->chop, &a->at, sc->boundary == SCENE_BOUNDARY_WRAP,
				   sc->substeps > 0 ? sc->substeps : 1, (long)a->period,
				   am->choppiness * scene_scale(sc), am->foam_threshold,
				   am->foam_fade, am->foam_range, sc->fps, err);
		if (rc < 0)
			return rc;
		a->chop_on = 1;
	}
	return 0;
}

/* The phase factor (cos, sin of omega t) of mode m at step c, and its omega (rad/s): the
 * loop's whole turns, or omega(k). */
static inline void mode_phase(const airy *a, size_t m, long c, double *cs, double *sn,
			      double *om)
{
	if (a->period) {
		/* an[m] < period <= 6.4e7 (10^6 frames of 64 substeps): no overflow */
		/* c may be negative (foam looks back before frame 0) */
		const int64_t cp = ((int64_t)c % a->period + a->period) % a->period;
		int64_t j = (a->an[m] * cp) % a->period;
		*cs = a->ptab[2 * j];
		*sn = a->ptab[2 * j + 1];
		*om = 2 * AIRY_PI * (double)a->an[m] / ((double)a->period * a->dt);
	} else {
		const double t = (double)c * a->dt;
		*cs = cos(a->aom[m] * t);
		*sn = sin(a->aom[m] * t);
		*om = a->aom[m];
	}
}

/* Adds the ambient field's coefficients at step c to out (at's layout): the mode at k is
 * (A+ e^{-i w t} + conj(A-) e^{i w t}) / 2, so the field is real (FFTW's backward
 * transform is unnormalised: these are the field's own Fourier coefficients). */
static void ambient_add(const airy *a, float *out, long c)
{
	const size_t nm = (size_t)a->at.cw * a->at.h;
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS)
	for (size_t m = 0; m < nm; m++) {
		double cs, sn, om;
		mode_phase(a, m, c, &cs, &sn, &om);
		const double pr = a->ap[2 * m], pi = a->ap[2 * m + 1];
		const double qr = a->am[2 * m], qi = -a->am[2 * m + 1]; /* conj(A-) */
		/* (p (cs - i sn) + q (cs + i sn)) / 2 */
		const double re = 0.5 * (pr * cs + pi * sn + qr * cs - qi * sn);
		const double im = 0.5 * (pi * cs - pr * sn + qi * cs + qr * sn);
		out[2 * m] = (float)(out[2 * m] + re);
		out[2 * m + 1] = (float)(out[2 * m + 1] + im);
	}
}

/* tp_surface.velocity: the horizontal velocity of the ambient waves at the current step,
 * dD/dt of the displacement at choppiness 1 (chop.h), D^ = i (k / |k|) h^:
 *     v^ = i (k / |k|) dh^/dt,  dh^/dt = -i w (p e^{-i w t} - q e^{i w t}) / 2
 *        = w (k / |k|) (p e^{-i w t} - q e^{i w t}) / 2,
 * a real multiple of the travelling waves' difference (p moves along +k, q along -k): in
 * deep water the orbital velocity of linear theory at the surface. Pixels per second
 * (heights are scene units of scene_scale pixels). */
static void ambient_velocity(void *ctx, const float **vx, const float **vy)
{
	airy *a = ctx;
	const int cw = a->at.cw, h = a->at.h;
	const size_t nm = (size_t)cw * h, nc = a->at.ncoef;
	const double px = scene_scale(a->sc);
	float *cx = a->vcoef, *cy = a->vcoef + nc;
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS)
	for (int j = 0; j < h; j++) {
		const double ky = spec_ky(&a->at, j);
		for (int i = 0; i < cw; i++) {
			const size_t m = (size_t)j * cw + i;
			const double kx = spec_kx(&a->at, i), k = sqrt(kx * kx + ky * ky);
			double cs, sn, om;
			mode_phase(a, m, a->cur, &cs, &sn, &om);
			const double pr = a->ap[2 * m], pi = a->ap[2 * m + 1];
			const double qr = a->am[2 * m], qi = -a->am[2 * m + 1]; /* conj(A-) */
			/* (p (cs - i sn) - q (cs + i sn)) / 2 */
			const double re = 0.5 * (pr * cs + pi * sn - qr * cs + qi * sn);
			const double im = 0.5 * (pi * cs - pr * sn - qi * cs - qr * sn);
			const double fx = k > 0 ? om * kx / k * px : 0, fy = k > 0 ? om * ky / k * px : 0;
			cx[2 * m] = (float)(fx * re);
			cx[2 * m + 1] = (float)(fx * im);
			cy[2 * m] = (float)(fy * re);
			cy[2 * m + 1] = (float)(fy * im);
		}
	}
	spec_inverse(&a->at, cx, a->vx);
	spec_inverse(&a->at, cy, a->vy);
	*vx = a->vx;
	*vy = a->vy;
}

/* chop_fill_fn: the ambient coefficients alone at step c (any c, negative too). */
static void ambient_fill(const void *ctx, float *coef, long c)
{
	const airy *a = ctx;
	memset(coef, 0, a->at.ncoef * sizeof(float));
	ambient_add(a, coef, c);
}

/* ---- init ---- */

static int box_pressure(airy *a, const tp_box_pose *p);

static int airy_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	airy *a = priv;
	const scene *sc = ctx->scene;
	a->sc = sc;
	a->w = sc->width;
	a->h = sc->height;
	a->dt = 1.0 / (sc->fps * (sc->substeps > 0 ? sc->substeps : 1));
	/* metres is per output pixel now (tp_opts_scale) */
	a->g = G_EARTH / a->metres;
	a->dpx = a->depth / a->metres;
	a->tpx = a->tension / RHO_WATER / (a->metres * a->metres * a->metres);
	const double nu = a->viscosity / (a->metres * a->metres); /* px^2/s */
	if (a->w < 2 || a->h < 2)
		return scene_errf(sc, err, TP_EINPUT, "size",
				  "airy needs at least 2x2 cells (got %dx%d)", a->w, a->h);
	/* reflect: cosine modes (walls are mirror planes); wrap and absorb: Fourier modes
	 * (absorb's sponge takes what would come round, and FFTs cost 2.5x less than DCTs) */
	int rc = spec_init(&a->t, sc->boundary == SCENE_BOUNDARY_REFLECT ? SPEC_DCT : SPEC_FFT,
			   a->w, a->h, err);
	if (rc < 0)
		return rc;
	const size_t cells = (size_t)a->w * a->h, nc = a->t.ncoef;
	a->nmodes = (size_t)a->t.cw * a->t.h;
	a->eta = spec_alloc(nc);
	a->psi = spec_alloc(nc);
	a->coef = spec_alloc(nc);
	a->co = spec_alloc(a->nmodes);
	a->si = spec_alloc(a->nmodes);
	a->om = spec_alloc(a->nmodes);
	a->tap = spec_alloc(a->nmodes);
	a->force = spec_alloc(cells);
	a->press = spec_alloc(cells);
	a->surf = spec_alloc(cells);
	if (!a->eta || !a->psi || !a->coef || !a->co || !a->si || !a->om || !a->tap || !a->force ||
	    !a->press || !a->surf)
		return tp_errf(err, TP_EIO, "out of memory for a %dx%d airy pool", a->w, a->h);
	memset(a->eta, 0, nc * sizeof(float));
	memset(a->psi, 0, nc * sizeof(float));
	memset(a->force, 0, cells * sizeof(float));
	memset(a->press, 0, cells * sizeof(float));
	memset(a->surf, 0, cells * sizeof(float));
#pragma omp parallel for schedule(static) if (a->nmodes >= PAR_SETUP_MODES)
	for (int j = 0; j < a->t.h; j++) {
		const double ky = spec_ky(&a->t, j);
		for (int i = 0; i < a->t.cw; i++) {
			const size_t m = (size_t)j * a->t.cw + i;
			const double kx = spec_kx(&a->t, i), k = sqrt(kx * kx + ky * ky);
			const double om = omega_of(a, k);
			const double decay = exp(-(a->damping + 2 * nu * k * k) * a->dt);
			a->co[m] = (float)(cos(om * a->dt) * decay);
			a->si[m] = (float)(sin(om * a->dt) * decay);
			a->om[m] = (float)om;
			/* the low-pass, on both axes' Nyquist for a square cell */
			a->tap[m] = m == 0 ? 0.0f : (float)lowpass(k);
		}
	}
	if (sc->boundary == SCENE_BOUNDARY_ABSORB) {
		const int band = a->sponge;
		if (2 * band > (a->w < a->h ? a->w : a->h))
			return scene_errf(sc, err, TP_EINPUT, "params.sponge",
					  "a band of %d pixels on each side leaves no water in a "
					  "%dx%d pool; at most %d",
					  band, a->w, a->h, (a->w < a->h ? a->w : a->h) / 2);
		if (!(a->sp_mul = spec_alloc(cells)))
			return tp_errf(err, TP_EIO, "out of memory for a %dx%d airy pool", a->w,
				       a->h);
		/* The band damps the vertical velocity at up to s_max = 4 omega of a wave as
		 * long as the band: such waves lose most of their energy crossing it. */
		const double smax = 4 * omega_of(a, 2 * AIRY_PI / band);
#pragma omp parallel for schedule(static) if (cells >= PAR_SETUP_MODES)
		for (int y = 0; y < a->h; y++)
			for (int x = 0; x < a->w; x++) {
				double d = fmin(fmin(x + 0.5, a->w - x - 0.5),
						fmin(y + 0.5, a->h - y - 0.5));
				double q = d < band ? 1 - d / band : 0;
				a->sp_mul[(size_t)y * a->w + x] = (float)exp(-smax * q * q * a->dt);
			}
	}
	a->nbox = sc->nboxes;
	if (a->nbox) {
		a->pose = calloc((size_t)a->nbox, sizeof *a->pose);
		a->prev = calloc((size_t)a->nbox, sizeof *a->prev);
		a->draft = calloc((size_t)a->nbox, sizeof *a->draft);
		if (!a->pose || !a->prev || !a->draft)
			return tp_errf(err, TP_EIO, "out of memory");
		for (int i = 0; i < a->nbox; i++) {
			const scene_box *b = &sc->boxes[i];
			tp_box_pose *p = &a->pose[i];
			scene_path_eval(&b->path, 0, &p->x, &p->y, &p->angle);
			a->draft[i] = b->density * b->height;
			p->z = -a->draft[i];
			a->prev[i] = *p;
		}
		/* Boxes in the water at the start have already pushed it down: still water
		 * with still boxes stays still. */
		if (box_pressure(a, a->prev)) {
			spec_forward(&a->t, a->press, a->coef);
			for (size_t m = 0; m < a->nmodes; m++)
				for (int c = 0; c < a->t.per; c++)
					a->eta[m * a->t.per + c] =
						-a->tap[m] * a->coef[m * a->t.per + c];
		}
	}
	if (sc->ambient.on && (rc = ambient_init(a, sc, err)) < 0)
		return rc;
	return 0;
}

/* ---- sources ---- */

static int wrap_i(int v, int n)
{
	v %= n;
	return v < 0 ? v + n : v;
}

/* The cells [*lo, *hi] within `reach` of c along an axis of n cells: clamped to the pool,
 * or with wrap (cells then taken modulo n) at most n of them, so a span wider than the
 * pool touches each cell once. */
static void cell_span(int wrap, double c, double reach, int n, int *lo, int *hi)
{
	int l = (int)floor(c - reach), h = (int)ceil(c + reach);
	if (!wrap) {
		l = l < 0 ? 0 : l;
		h = h > n - 1 ? n - 1 : h;
	} else if (h - l >= n) {
		h = l + n - 1;
	}
	*lo = l;
	*hi = h;
}

/* A Gaussian bump, sigma = r / 2, cut at 3 sigma; stored in force until the next step. */
static void airy_drop(void *priv, double x, double y, double r, double strength)
{
	airy *a = priv;
	const double sg = fmax(0.5 * r, 0.5), reach = 3 * sg, inv = 1 / (2 * sg * sg);
	const int wrap = a->sc->boundary == SCENE_BOUNDARY_WRAP;
	int x0, x1, y0, y1;
	cell_span(wrap, x, reach, a->w, &x0, &x1);
	cell_span(wrap, y, reach, a->h, &y0, &y1);
	for (int cy = y0; cy <= y1; cy++) {
		const double dy = cy + 0.5 - y;
		float *row = a->force + (size_t)(wrap ? wrap_i(cy, a->h) : cy) * a->w;
		for (int cx = x0; cx <= x1; cx++) {
			const double dx = cx + 0.5 - x, d2 = dx * dx + dy * dy;
			if (d2 > reach * reach)
				continue;
			row[wrap ? wrap_i(cx, a->w) : cx] += (float)(strength * exp(-d2 * inv));
		}
	}
	a->pending = 1;
}

/* Adds the low-passed spectrum of force to eta (and clears force). */
static void flush_drops(airy *a)
{
	if (!a->pending)
		return;
	spec_forward(&a->t, a->force, a->coef);
	const int per = a->t.per;
	const size_t nm = a->nmodes;
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS)
	for (size_t m = 0; m < nm; m++)
		for (int c = 0; c < per; c++)
			a->eta[m * per + c] += a->tap[m] * a->coef[m * per + c];
	memset(a->force, 0, (size_t)a->w * a->h * sizeof(float));
	a->pending = 0;
}

/* How much of a box covers a point d pixels inside its edge: smoothstep over `edge`. */
static double ramp(double d, double e)
{
	double t = d / e + 0.5;
	return t <= 0 ? 0 : t >= 1 ? 1 : t * t * (3 - 2 * t);
}

/* The pressure head of every box at its pose p[] into press (which is cleared first).
 * Returns 0 if no box has a draft. */
static int box_pressure(airy *a, const tp_box_pose *p)
{
	const size_t cells = (size_t)a->w * a->h;
	const int wrap = a->sc->boundary == SCENE_BOUNDARY_WRAP;
	int any = 0;
	memset(a->press, 0, cells * sizeof(float));
	for (int i = 0; i < a->nbox; i++) {
		const scene_box *b = &a->sc->boxes[i];
		const double hw = 0.5 * b->size[0], hh = 0.5 * b->size[1], e = a->edge;
		const double an = p[i].angle * AIRY_PI / 180, cs = cos(an), sn = sin(an);
		const double rx = fabs(hw * cs) + fabs(hh * sn) + e,
			     ry = fabs(hw * sn) + fabs(hh * cs) + e;
		int x0, x1, y0, y1;
		cell_span(wrap, p[i].x, rx, a->w, &x0, &x1);
		cell_span(wrap, p[i].y, ry, a->h, &y0, &y1);
		if (a->draft[i] <= 0 || x1 < x0 || y1 < y0)
			continue;
		any = 1;
		for (int cy = y0; cy <= y1; cy++) {
			const double dy = cy + 0.5 - p[i].y;
			float *row = a->press + (size_t)(wrap ? wrap_i(cy, a->h) : cy) * a->w;
			for (int cx = x0; cx <= x1; cx++) {
				const double dx = cx + 0.5 - p[i].x;
				/* box frame, as the renderer and the other solvers turn it */
				const double u = dx * cs - dy * sn, v = dx * sn + dy * cs;
				const double c = ramp(hw - fabs(u), e) * ramp(hh - fabs(v), e);
				if (c > 0)
					row[wrap ? wrap_i(cx, a->w) : cx] +=
						(float)(a->draft[i] * c);
			}
		}
	}
	return any;
}

/* absorb: the vertical velocity omega psi^ in real space, times the sponge, back. */
static void sponge(airy *a)
{
	const int per = a->t.per;
	const size_t nm = a->nmodes, cells = (size_t)a->w * a->h;
	const float inv = (float)(1.0 / spec_norm(&a->t));
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS)
	for (size_t m = 0; m < nm; m++)
		for (int c = 0; c < per; c++)
			a->coef[m * per + c] = a->psi[m * per + c] * a->om[m] * inv;
	spec_inverse(&a->t, a->coef, a->force);
#pragma omp parallel for schedule(static) if (cells >= PAR_CELLS)
	for (size_t i = 0; i < cells; i++)
		a->force[i] *= a->sp_mul[i];
	spec_forward(&a->t, a->force, a->coef);
	memset(a->force, 0, cells * sizeof(float));
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS)
	for (size_t m = 0; m < nm; m++)
		for (int c = 0; c < per; c++)
			a->psi[m * per + c] = a->om[m] > 0 ? a->coef[m * per + c] / a->om[m] : 0.0f;
}

/* Each mode's free evolution over one step, with the step's pressure impulse p (forced):
 *     u = eta + p,  eta' = c u + s psi - p,  psi' = c psi - s u,
 * c = cos(w dt) e^{-gamma dt}, s = sin(w dt) e^{-gamma dt}; p = tap * P(k) when forced, else
 * 0 (the same operations: x + 0 makes -0 into +0). Modes [m0, m1). Returns 1 if a new
 * eta is not finite (v * 0 is NaN exactly then: a test that vectorises). Built for AVX2
 * and AVX-512 as well, chosen at run time: the same operations in the same order. */
/* Coefficient q of a mode with factors c, s and impulse p; returns e * 0 (NaN exactly when
 * the new eta is not finite). */
static inline __attribute__((always_inline)) float rotate_one(float *restrict eta,
							     float *restrict psi, size_t q,
							     float c, float s, float p)
{
	const float u = eta[q] + p, v = psi[q];
	const float e = c * u + s * v - p;
	eta[q] = e;
	psi[q] = c * v - s * u;
	return e * 0.0f;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
static int rotate_modes(airy *a, size_t m0, size_t m1, int forced)
{
	const float *restrict co = a->co, *restrict si = a->si, *restrict tap = a->tap;
	const float *restrict coef = a->coef;
	float *restrict eta = a->eta, *restrict psi = a->psi;
	float nan_seen = 0;
	if (a->t.per == 1) { /* the DCT: one float a mode; a loop each way, so both vectorise */
		if (forced) {
#pragma omp simd reduction(max : nan_seen)
			for (size_t m = m0; m < m1; m++) {
				const float z = rotate_one(eta, psi, m, co[m], si[m], tap[m] * coef[m]);
				nan_seen = z != z ? 1.0f : nan_seen;
			}
		} else {
#pragma omp simd reduction(max : nan_seen)
			for (size_t m = m0; m < m1; m++) {
				const float z = rotate_one(eta, psi, m, co[m], si[m], 0.0f);
				nan_seen = z != z ? 1.0f : nan_seen;
			}
		}
		return nan_seen != 0;
	}
	/* the FFT's two floats a mode (re, im), each rotated alike */
	for (size_t m = m0; m < m1; m++)
		for (int k = 0; k < 2; k++) {
			const size_t q = 2 * m + k;
			const float z = rotate_one(eta, psi, q, co[m], si[m],
						   forced ? tap[m] * coef[q] : 0.0f);
			nan_seen = z != z ? 1.0f : nan_seen;
		}
	return nan_seen != 0;
}

static int airy_step(void *priv, const tp_step_in *in)
{
	airy *a = priv;
	flush_drops(a);
	int forced = 0;
	if (a->nbox) {
		/* the boxes half-way through the step */
		tp_box_pose *mid = a->pose; /* reused: the poses are set again below */
		for (int i = 0; i < a->nbox; i++) {
			const tp_box_pose *z = in->boxes ? &in->boxes[i] : &a->prev[i];
			mid[i] = a->prev[i];
			mid[i].x = 0.5 * (a->prev[i].x + z->x);
			mid[i].y = 0.5 * (a->prev[i].y + z->y);
			mid[i].angle = 0.5 * (a->prev[i].angle + z->angle);
		}
		if (box_pressure(a, mid)) {
			spec_forward(&a->t, a->press, a->coef);
			forced = 1;
		}
		for (int i = 0; i < a->nbox; i++) {
			if (in->boxes)
				a->pose[i] = in->boxes[i];
			else
				a->pose[i] = a->prev[i];
			a->pose[i].z = -a->draft[i];
			a->pose[i].tilt[0] = a->pose[i].tilt[1] = 0;
			a->prev[i] = a->pose[i];
		}
	}
	const size_t nm = a->nmodes;
	const size_t chunk = 4096; /* modes per task: whole cache lines, any thread count */
	const size_t nchunks = (nm + chunk - 1) / chunk;
	int bad = 0;
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS) reduction(| : bad)
	for (size_t b = 0; b < nchunks; b++) {
		const size_t m0 = b * chunk, m1 = m0 + chunk < nm ? m0 + chunk : nm;
		bad |= rotate_modes(a, m0, m1, forced);
	}
	if (a->sp_mul)
		sponge(a);
	a->cur = in->step + 1;
	return bad ? TP_EIO : 0;
}

static void airy_surface(void *priv, tp_surface *out)
{
	airy *a = priv;
	flush_drops(a);
	const int per = a->t.per;
	const size_t nm = a->nmodes, cells = (size_t)a->w * a->h;
	const float inv = (float)(1.0 / spec_norm(&a->t));
#pragma omp parallel for schedule(static) if (nm >= PAR_CELLS)
	for (size_t m = 0; m < nm; m++)
		for (int c = 0; c < per; c++)
			a->coef[m * per + c] = a->eta[m * per + c] * inv;
	if (a->amb && !a->own_at)
		ambient_add(a, a->coef, a->cur);
	spec_inverse(&a->t, a->coef, a->surf);
	if (a->amb && a->own_at) {
		memset(a->acoef, 0, a->at.ncoef * sizeof(float));
		ambient_add(a, a->acoef, a->cur);
		spec_inverse(&a->at, a->acoef, a->areal);
#pragma omp parallel for schedule(static) if (cells >= PAR_CELLS)
		for (size_t i = 0; i < cells; i++)
			a->surf[i] += a->areal[i];
	}
	const float *shown = a->surf;
	if (a->chop_on) {
		chop_frame(&a->chop, a->surf, a->cur, ambient_fill, a);
		shown = a->chop.disp;
	}
	/* statistics of what is shown, summed in row order */
	double s2 = 0, lo = 0, hi = 0;
	for (size_t i = 0; i < cells; i++) {
		const double v = shown[i];
		s2 += v * v;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	a->rms = sqrt(s2 / (double)cells);
	a->lo = lo;
	a->hi = hi;
	memset(out, 0, sizeof *out);
	out->kind = TP_SURFACE_HEIGHT;
	out->w = a->w;
	out->h = a->h;
	out->type = TP_SAMPLE_F32;
	out->data = shown;
	out->stride = a->w;
	out->scale = 1.0f;
	out->wrap = a->sc->boundary == SCENE_BOUNDARY_WRAP;
	out->nboxes = a->nbox;
	out->boxes = a->pose;
	out->metres_px = a->metres;
	out->metres_hu = a->metres * scene_scale(a->sc);
	if (a->amb) {
		out->velocity = ambient_velocity;
		out->vctx = a;
	}
	if (a->chop_on) {
		out->dx = a->chop.dx;
		out->dy = a->chop.dy;
		out->lag = a->surf;
		out->foam = a->chop.foam;
	}
}

/* The surface is made from the state and changes none of it, except for flushing drops
 * not yet stepped (frame 0's) and the foam of choppy waves, which it accumulates. */
static int airy_surface_optional(const void *priv)
{
	const airy *a = priv;
	return !a->pending && !a->chop_on;
}

static void airy_stats(const void *priv, tp_stats *out)
{
	const airy *a = priv;
	out->n = 0;
	tp_stats_add(out, "min", a->lo);
	tp_stats_add(out, "max", a->hi);
	tp_stats_add(out, "rms", a->rms);
	tp_stats_add(out, "steps", (double)a->cur);
	if (a->amb) {
		/* the significant wave height the amplitudes ask for, and the part of it from
		 * the spectra's own laws (systems without an amplitude), metres */
		tp_stats_add(out, "hs_m", a->hs);
		tp_stats_add(out, "hs_law_m", a->hs_law);
	}
}

/* No drops, rain or boxes: what moves is the ambient field, whose phases repeat every
 * loop (airy_init quantises them), or nothing. */
static int airy_loops_exactly(const scene *sc)
{
	return sc->loop.on && sc->ndrops == 0 && sc->nemitters == 0 && sc->nboxes == 0;
}

/* ---- checkpoints: magic, w, h, kind, steps, pending drops, eta^, psi^, box poses ---- */

static const char SAVE_MAGIC[8] = {'T', 'P', 'A', 'I', 'R', 'Y', '0', '1'};

static int airy_save(const void *priv, FILE *f, tp_err *err)
{
	const airy *a = priv;
	int rc = tp_wr_bytes(f, SAVE_MAGIC, sizeof SAVE_MAGIC);
	rc |= tp_wr_i32(f, a->w) | tp_wr_i32(f, a->h) | tp_wr_i32(f, (int)a->t.kind);
	rc |= tp_wr_i64(f, a->cur) | tp_wr_i32(f, a->pending);
	rc |= tp_wr_i32s(f, (const int32_t *)(const void *)a->force, (size_t)a->w * a->h);
	rc |= tp_wr_i32s(f, (const int32_t *)(const void *)a->eta, a->t.ncoef);
	rc |= tp_wr_i32s(f, (const int32_t *)(const void *)a->psi, a->t.ncoef);
	for (int i = 0; i < a->nbox; i++) {
		const tp_box_pose *p = &a->prev[i];
		const double v[3] = {p->x, p->y, p->angle};
		rc |= tp_wr_f64s(f, v, 3);
	}
	return rc ? tp_errf(err, TP_EIO, "airy: cannot write the checkpoint") : 0;
}

static int airy_load(void *priv, FILE *f, tp_err *err)
{
	airy *a = priv;
	char magic[sizeof SAVE_MAGIC];
	int w, h, kind, pending;
	int64_t cur;
	if (tp_rd_bytes(f, magic, sizeof magic) || tp_rd_int(f, &w) || tp_rd_int(f, &h) ||
	    tp_rd_int(f, &kind) || tp_rd_i64(f, &cur) || tp_rd_int(f, &pending))
		return tp_errf(err, TP_EIO, "airy: cannot read the checkpoint");
	if (memcmp(magic, SAVE_MAGIC, sizeof magic) || w != a->w || h != a->h ||
	    kind != (int)a->t.kind || cur < 0)
		return tp_errf(err, TP_EINPUT, "airy: the checkpoint is for another scene");
	int rc = tp_rd_i32s(f, (int32_t *)(void *)a->force, (size_t)a->w * a->h);
	rc |= tp_rd_i32s(f, (int32_t *)(void *)a->eta, a->t.ncoef);
	rc |= tp_rd_i32s(f, (int32_t *)(void *)a->psi, a->t.ncoef);
	for (int i = 0; i < a->nbox && !rc; i++) {
		double v[3];
		rc |= tp_rd_f64s(f, v, 3);
		a->prev[i].x = v[0];
		a->prev[i].y = v[1];
		a->prev[i].angle = v[2];
		a->prev[i].z = -a->draft[i];
		a->pose[i] = a->prev[i];
	}
	if (rc)
		return tp_errf(err, TP_EINPUT, "airy: truncated or damaged checkpoint");
	a->cur = (long)cur;
	a->pending = pending != 0;
	return 0;
}

const tp_solver tp_solver_airy = {
	.name = "airy",
	.description = "linear (Airy) gravity-capillary waves, exact per-mode dispersion on FFTs "
		       "or DCTs: Kelvin wakes, dispersive rings, ambient wind waves",
	.priv_size = sizeof(airy),
	.options = airy_options,
	.caps = TP_SOLVER_HEIGHTFIELD | TP_SOLVER_BOX_DRAFT | TP_SOLVER_AMBIENT,
	.init = airy_init,
	.uninit = airy_uninit,
	.drop = airy_drop,
	.step = airy_step,
	.surface = airy_surface,
	.surface_optional = airy_surface_optional,
	.stats = airy_stats,
	.loops_exactly = airy_loops_exactly,
	.save = airy_save,
	.load = airy_load,
};
