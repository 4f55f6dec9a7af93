/*
 * ripple - seed 001: two int32 buffers that take turns holding the current and the
 * previous surface. Each cell's next height comes from its 12 neighbours (the 3x3 ring and
 * the 4 cells two steps away on the axes), minus its own previous height:
 *
 *   h' = (sum of the 12 neighbours of h) / 6 - h_prev;   h' -= h' >> d
 *
 * (C division toward zero, arithmetic shift; 12a + b = 1 with b = -1 gives a = 1/6, the
 * seed's energy-conserving choice before damping). h' overwrites h_prev, then the buffers
 * swap. Units: stored units, 1/unit height units. A drop is added to both buffers, so it
 * starts at rest with height `strength` at its centre. Bit-identical to
 * tests/reference/seed_ripple.c whatever the thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/intgrid.h"
#include "solvers/solver.h"

typedef struct ripple {
	int damping; /* h' -= h' >> damping */
	int unit;    /* stored units per height unit */
	int sponge;  /* absorb band, pixels */
	double wake; /* bow push of moving boxes */

	ig_grid g;
	ig_shift hdamp, vdamp; /* damping shifts per step at the render size (see init) */
	int32_t *buf[2];       /* buf[cur] = current surface, buf[!cur] = previous */
	int cur;
} ripple;

#define OFF(f) offsetof(ripple, f)
static const tp_option ripple_options[] = {
	{"damping", "h -= h >> this each step (larger = waves last longer)", OFF(damping),
	 TP_OPT_INT, 5, 1, 30, NULL, TP_UNIT_NONE},
	{"unit", "stored integer units per height unit (a drop of strength 1)", OFF(unit),
	 TP_OPT_INT, 4096, 16, 65536, NULL, TP_UNIT_NONE},
	{"sponge", "width in pixels of the absorbing band (boundary absorb)", OFF(sponge),
	 TP_OPT_INT, 32, 1, 4096, NULL, TP_UNIT_LENGTH},
	{"wake", "bow wave of a moving box: about 4.3 x this height units (0 = off)", OFF(wake),
	 TP_OPT_DOUBLE, 0.1, 0, 100, NULL, TP_UNIT_PER_LENGTH},
	{NULL},
};

/* The kernel above for one row of n cells; c is the current row, p the previous one,
 * overwritten with the next. Division by the constant 6 vectorises (multiply-high).
 * With vd (only at render sizes above the scene's, see ripple_init) the velocity is
 * damped too, h' -= (h' - h) >> v. vd is a constant at each call site, so the seed's
 * kernel is compiled as it was. */
static inline __attribute__((always_inline)) void row_step(const int32_t *restrict c,
							   int32_t *restrict p, ptrdiff_t s, int n,
							   int d, const int vd, int v)
{
	const int32_t *restrict u2 = c - 2 * s, *restrict u1 = c - s;
	const int32_t *restrict d1 = c + s, *restrict d2 = c + 2 * s;
#pragma omp simd
	for (int x = 0; x < n; x++) {
		int32_t sum = u2[x] + u1[x - 1] + u1[x] + u1[x + 1] + c[x - 2] + c[x - 1] +
			      c[x + 1] + c[x + 2] + d1[x - 1] + d1[x] + d1[x + 1] + d2[x];
		int32_t nv = sum / 6 - p[x];
		nv -= nv >> d;
		if (vd)
			nv -= (nv - c[x]) >> v;
		p[x] = nv;
	}
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
row_kernel(const int32_t *restrict c, int32_t *restrict p, ptrdiff_t s, int n, int d)
{
	row_step(c, p, s, n, d, 0, 0);
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
row_kernel_vd(const int32_t *restrict c, int32_t *restrict p, ptrdiff_t s, int n, int d, int v)
{
	row_step(c, p, s, n, d, 1, v);
}

static void ripple_uninit(void *priv)
{
	ripple *p = priv;
	free(p->buf[0]);
	free(p->buf[1]);
	ig_free(&p->g);
}

static int ripple_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	ripple *p = priv;
	int rc = ig_setup(&p->g, ctx->scene, 2, p->unit, p->sponge, err);
	if (rc < 0)
		return rc;
	/* At another size than the scene's (s = scene_scale, s times the steps per second) the
	 * seed's damping h' -= h' >> d does two things: it takes 2^-d of the height per step
	 * (decay), and, since it scales the whole update, it is also a spring: the surface as a
	 * whole oscillates at sqrt(2^-d) radians per step, which slows long waves (omega^2 =
	 * 2^-d + 7/6 k^2 per step, in cells). Ring speeds are what the eye follows, so the
	 * spring keeps its frequency per second: 2^-d / s^2 per step. That alone decays s
	 * times slower per second; above the scene's size a damping of the velocity
	 * h' - h makes up the rest, 2^-d (s - 1) / s^2 per step (velocity and height damping
	 * each take half their rate off the amplitude). Below it the waves decay 1/s times
	 * faster (there is no anti-damping). At the scene's own size: d, no velocity term. */
	const double sc = scene_scale(ctx->scene), e = ldexp(1.0, -p->damping);
	ig_shift_init(&p->hdamp, e / (sc * sc));
	ig_shift_init(&p->vdamp, sc > 1 ? e * (sc - 1) / (sc * sc) : 0);
	p->buf[0] = ig_alloc(&p->g);
	p->buf[1] = ig_alloc(&p->g);
	if (!p->buf[0] || !p->buf[1])
		return tp_errf(err, TP_EIO, "out of memory for a %dx%d pool", p->g.w, p->g.h);
	return 0;
}

static void ripple_drop(void *priv, double x, double y, double r, double strength)
{
	ripple *p = priv;
	int32_t *b[2] = {ig_org(p->buf[0], &p->g), ig_org(p->buf[1], &p->g)};
	ig_drop(&p->g, b, 2, x, y, r, strength);
}

static int ripple_step(void *priv, const tp_step_in *in)
{
	ripple *p = priv;
	const ig_grid *g = &p->g;
	int32_t *c = ig_org(p->buf[p->cur], g), *nx = ig_org(p->buf[!p->cur], g);
	if (g->wrap)
		ig_wrap_ghosts(g, c);
	const ptrdiff_t s = g->stride;
	const int x0 = g->x0, n = g->x1 - g->x0;
	const int d = ig_shift_at(&p->hdamp, in->step);
	const int v = p->vdamp.k ? ig_shift_at(&p->vdamp, in->step) : 0;
#pragma omp parallel for schedule(static) if (g->par)
	for (int y = g->y0; y < g->y1; y++) {
		if (v)
			row_kernel_vd(c + y * s + x0, nx + y * s + x0, s, n, d, v);
		else
			row_kernel(c + y * s + x0, nx + y * s + x0, s, n, d);
		if (g->sponge)
			ig_sponge_row(g, y, nx + y * s, c + y * s);
	}
	p->cur = !p->cur;
	int32_t *both[2] = {nx, c};
	ig_boxes(&p->g, in->boxes, in->dt, p->wake, both, 2, both, 2);
	return 0;
}

static void ripple_surface(void *priv, tp_surface *out)
{
	ripple *p = priv;
	ig_surface(&p->g, ig_org(p->buf[p->cur], &p->g), out);
}

static void ripple_stats(const void *priv, tp_stats *out)
{
	const ripple *p = priv;
	ig_stats(&p->g, ig_org(p->buf[p->cur], &p->g), ig_org(p->buf[!p->cur], &p->g), 1, out);
}

static int ripple_save(const void *priv, FILE *f, tp_err *err)
{
	const ripple *p = priv;
	const int32_t *b[2] = {ig_org(p->buf[p->cur], &p->g), ig_org(p->buf[!p->cur], &p->g)};
	return ig_save(&p->g, "ripple", b, 2, f, err);
}

static int ripple_load(void *priv, FILE *f, tp_err *err)
{
	ripple *p = priv;
	int32_t *b[2] = {ig_org(p->buf[p->cur], &p->g), ig_org(p->buf[!p->cur], &p->g)};
	return ig_load(&p->g, "ripple", b, 2, f, err);
}

const tp_solver tp_solver_ripple = {
	.name = "ripple",
	.description =
		"seed 001: int32 two-buffer ripples, 12 neighbours / 6 - previous, shift damping",
	.priv_size = sizeof(ripple),
	.options = ripple_options,
	.caps = TP_SOLVER_HEIGHTFIELD | TP_SOLVER_CELL_STEPS,
	.init = ripple_init,
	.uninit = ripple_uninit,
	.drop = ripple_drop,
	.step = ripple_step,
	.surface = ripple_surface,
	.stats = ripple_stats,
	.save = ripple_save,
	.load = ripple_load,
};
