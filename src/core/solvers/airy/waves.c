/*
 * waves.c - the airy solver's ambient wind waves (airy.c, docs/airy.md): the spectra
 * (JONSWAP, TMA, Pierson-Moskowitz, Phillips), their directional spreading, the wave height
 * their laws give, the systems (the wind sea and its swells) drawn as random complex
 * amplitudes per Fourier mode, their exact loop, and the surface velocity.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/airy/airy_impl.h"
#include "util/rng.h"

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
static void ambient_amp(const airy *a, const scene_waves *am, int sys, int i, int j, double out[2])
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

int airy_ambient_init(airy *a, const scene *sc, tp_err *err)
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
static inline void mode_phase(const airy *a, size_t m, long c, double *cs, double *sn, double *om)
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
void airy_ambient_add(const airy *a, float *out, long c)
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
void airy_ambient_velocity(void *ctx, const float **vx, const float **vy)
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
			const double fx = k > 0 ? om * kx / k * px : 0,
				     fy = k > 0 ? om * ky / k * px : 0;
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
void airy_ambient_fill(const void *ctx, float *coef, long c)
{
	const airy *a = ctx;
	memset(coef, 0, a->at.ncoef * sizeof(float));
	airy_ambient_add(a, coef, c);
}
