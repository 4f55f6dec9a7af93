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
 * ambient (scene "ambient"): wind waves from a JONSWAP, TMA, Pierson-Moskowitz or Phillips
 * spectrum (and swells) on the FFT grid of the picture, with random Gaussian amplitudes
 * from the scene's seed; each mode runs at omega(k). In a looping scene each omega is rounded to a whole number n of turns
 * per loop and the phase at step c is 2 pi (n c mod P) / P with P the loop's steps, an
 * integer: the field at frame f + loop frames is bit for bit the one at f. With a
 * choppiness, chop.c moves the surface horizontally (Tessendorf), hands out the displaced
 * surface and adds foam where it folds (chop.h). The spectra, their spreading, the wave
 * systems and the velocity are in waves.c.
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

#include "solvers/airy/airy_impl.h"
#include "util/wire.h"

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
	if (sc->ambient.on && (rc = airy_ambient_init(a, sc, err)) < 0)
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
		airy_ambient_add(a, a->coef, a->cur);
	spec_inverse(&a->t, a->coef, a->surf);
	if (a->amb && a->own_at) {
		memset(a->acoef, 0, a->at.ncoef * sizeof(float));
		airy_ambient_add(a, a->acoef, a->cur);
		spec_inverse(&a->at, a->acoef, a->areal);
#pragma omp parallel for schedule(static) if (cells >= PAR_CELLS)
		for (size_t i = 0; i < cells; i++)
			a->surf[i] += a->areal[i];
	}
	const float *shown = a->surf;
	if (a->chop_on) {
		chop_frame(&a->chop, a->surf, a->cur, airy_ambient_fill, a);
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
		out->velocity = airy_ambient_velocity;
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
	.kind.name = "airy",
	.kind.description = "linear (Airy) gravity-capillary waves, exact per-mode dispersion on "
			    "FFTs or DCTs: Kelvin wakes, dispersive rings, ambient wind waves",
	.kind.priv_size = sizeof(airy),
	.kind.options = airy_options,
	.kind.caps = TP_SOLVER_HEIGHTFIELD | TP_SOLVER_BOX_DRAFT | TP_SOLVER_AMBIENT,
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
