/*
 * hooke - seed 000/002: every cell is a mass on springs to its 8 neighbours (Hooke's law),
 * int32 height h and velocity v, two height buffers swapped every step.
 *
 *   a  = (D h - (e (N + S + W + E) + c (NW + NE + SE + SW))) / D,  D = 4 (e + c)
 *   v -= a;  v -= v >> sv;  h' = h + v;  h' -= h' >> sh
 *
 * with C integer division (toward zero) and arithmetic shifts, exactly as the seed writes
 * it; the seed's constants are the defaults (e = 3, c = 1, D = 16, sv = 6, sh = 8). Units:
 * h and v are stored units (1/unit height units), v per step. The step is bit-identical to
 * tests/reference/seed_hooke.c whatever the thread count with params.scheme "seed".
 *
 * The default scheme, "isotropic" (row_iso), replaces the 3 : 1 springs, whose short waves
 * travel at direction-dependent speeds (a lattice of dots inside every ring), by the
 * isotropic 9-point Laplacian (4 : 1, Patra & Karttunen 2006) plus a viscosity that takes
 * the grid-scale waves away, and drops by raised cosines; the edge and corner weights
 * belong to the seed scheme (refused with the isotropic one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/intgrid.h"
#include "solvers/solver.h"

typedef struct hooke {
	int edge, corner; /* spring weights of the 4 edge and 4 corner neighbours */
	int vshift;       /* velocity damping: v -= v >> vshift */
	int hshift;       /* height damping: h -= h >> hshift */
	int unit;         /* stored units per height unit */
	int sponge;       /* absorb band, pixels */
	double wake;      /* bow push of moving boxes */

	ig_grid g;
	ig_shift vsh, hsh; /* damping shifts per step at the render size */
	int32_t *hbuf[2], *vbuf; /* allocations; cur indexes the current heights */
	int32_t *vbuf2;          /* isotropic scheme: the next velocities (swapped with vbuf) */
	int cur;
	int kshift; /* D = 1 << kshift when D is a power of two, else -1 */
	int scheme; /* HOOKE_SEED or HOOKE_ISO */
} hooke;

enum { HOOKE_SEED, HOOKE_ISO };
static const char *const scheme_names[] = {"seed", "isotropic", NULL};

#define OFF(f) offsetof(hooke, f)
static const tp_option hooke_options[] = {
	{"scheme", "isotropic: 9-point isotropic springs, round drops; seed: seed 000", OFF(scheme),
	 TP_OPT_ENUM, HOOKE_ISO, 0, 1, scheme_names, TP_UNIT_NONE},
	{"edge", "spring weight of the 4 edge neighbours (seed: 3)", OFF(edge), TP_OPT_INT, 3, 0,
	 15, NULL, TP_UNIT_NONE},
	{"corner", "spring weight of the 4 corner neighbours (seed: 1)", OFF(corner), TP_OPT_INT, 1,
	 0, 15, NULL, TP_UNIT_NONE},
	{"velocity_damping", "v -= v >> this each step (seed: 6; larger = less damping)",
	 OFF(vshift), TP_OPT_INT, 6, 1, 30, NULL, TP_UNIT_NONE},
	{"height_damping", "h -= h >> this each step (seed: 8; larger = less damping)", OFF(hshift),
	 TP_OPT_INT, 8, 1, 30, NULL, TP_UNIT_NONE},
	{"unit", "stored integer units per height unit (a drop of strength 1)", OFF(unit),
	 TP_OPT_INT, 4096, 16, 65536, NULL, TP_UNIT_NONE},
	{"sponge", "width in pixels of the absorbing band (boundary absorb)", OFF(sponge),
	 TP_OPT_INT, 32, 1, 4096, NULL, TP_UNIT_LENGTH},
	{"wake", "bow wave of a moving box: about 4.3 x this height units (0 = off)", OFF(wake),
	 TP_OPT_DOUBLE, 0.1, 0, 100, NULL, TP_UNIT_PER_LENGTH},
	{NULL},
};

/* The kernel above for one row of n cells, for D = 1 << k: C division by a power of two
 * is (t + (t < 0 ? D - 1 : 0)) >> k, which vectorises where `/` by a variable cannot. */
__attribute__((target_clones("avx2", "default"))) static void
row_pow2(const int32_t *restrict h, int32_t *restrict hn, int32_t *restrict v, ptrdiff_t s, int n,
	 int32_t e, int32_t c, int k, int sv, int sh)
{
	const int32_t *restrict up = h - s, *restrict dn = h + s;
	const int32_t dd = (int32_t)1 << k, bias = dd - 1;
#pragma omp simd
	for (int x = 0; x < n; x++) {
		int32_t t = dd * h[x] - (e * (up[x] + dn[x] + h[x - 1] + h[x + 1]) +
					 c * (up[x - 1] + up[x + 1] + dn[x + 1] + dn[x - 1]));
		int32_t a = (t + (t < 0 ? bias : 0)) >> k;
		int32_t vv = v[x] - a;
		vv -= vv >> sv;
		v[x] = vv;
		int32_t hh = h[x] + vv;
		hh -= hh >> sh;
		hn[x] = hh;
	}
}

#ifdef __x86_64__
#include <immintrin.h>

/* row_pow2 in AVX-512 for the cells [a, b) of a row whose start `r` is 64-byte aligned
 * (hn, w: the same row of the next heights and of the velocities). As in ripple.c, every
 * load is aligned and the shifted neighbours come from vectors already loaded: with
 * U = up + dn, the edge sum is U + h[x-1] + h[x+1] and the corner sum U[x-1] + U[x+1].
 * Lanes outside [a, b) are never stored. */
__attribute__((target("avx512f"))) static void row_pow2_avx512(const int32_t *r, int32_t *hn,
							      int32_t *w, ptrdiff_t s, int a, int b,
							      int32_t e, int32_t c, int k, int sv,
							      int sh)
{
	const __m512i ve = _mm512_set1_epi32(e), vc = _mm512_set1_epi32(c);
	const __m512i bias = _mm512_set1_epi32(((int32_t)1 << k) - 1);
	const __m128i kk = _mm_cvtsi32_si128(k), ssv = _mm_cvtsi32_si128(sv),
		      ssh = _mm_cvtsi32_si128(sh);
	const int32_t *up = r - s, *dn = r + s;
	int x = a & ~15;
	__m512i Hp = _mm512_load_si512(r + x - 16), H = _mm512_load_si512(r + x);
	__m512i Up = _mm512_add_epi32(_mm512_load_si512(up + x - 16), _mm512_load_si512(dn + x - 16));
	__m512i U = _mm512_add_epi32(_mm512_load_si512(up + x), _mm512_load_si512(dn + x));
	for (; x < b; x += 16) {
		const __m512i Hn = _mm512_load_si512(r + x + 16);
		const __m512i Un = _mm512_add_epi32(_mm512_load_si512(up + x + 16),
						    _mm512_load_si512(dn + x + 16));
		const __m512i edge = _mm512_add_epi32(
			U, _mm512_add_epi32(_mm512_alignr_epi32(H, Hp, 15), _mm512_alignr_epi32(Hn, H, 1)));
		const __m512i corner =
			_mm512_add_epi32(_mm512_alignr_epi32(U, Up, 15), _mm512_alignr_epi32(Un, U, 1));
		const __m512i t = _mm512_sub_epi32(
			_mm512_sll_epi32(H, kk),
			_mm512_add_epi32(_mm512_mullo_epi32(ve, edge), _mm512_mullo_epi32(vc, corner)));
		/* C division by 2^k: toward zero */
		const __m512i q = _mm512_sra_epi32(
			_mm512_add_epi32(t, _mm512_and_si512(_mm512_srai_epi32(t, 31), bias)), kk);
		__m512i vv = _mm512_sub_epi32(_mm512_load_si512(w + x), q);
		vv = _mm512_sub_epi32(vv, _mm512_sra_epi32(vv, ssv));
		__m512i hh = _mm512_add_epi32(H, vv);
		hh = _mm512_sub_epi32(hh, _mm512_sra_epi32(hh, ssh));
		__mmask16 m = 0xFFFF;
		if (x < a)
			m &= (__mmask16)(0xFFFFu << (a - x));
		if (x + 16 > b)
			m &= (__mmask16)(0xFFFFu >> (x + 16 - b));
		_mm512_mask_store_epi32(w + x, m, vv);
		_mm512_mask_store_epi32(hn + x, m, hh);
		Hp = H;
		H = Hn;
		Up = U;
		U = Un;
	}
}
#endif

/* The isotropic scheme (scheme "isotropic"), one step for a row of n cells:
 *   v' = v + (4 (N + S + W + E) + (NW + NE + SW + SE) - 20 h) / 20
 *          + (the same stencil on v) / 64;   v' -= v' >> sv;   h' = h + v';  h' -= h' >> sh
 * (C division toward zero, arithmetic shifts). The first term is c^2 L h with the 9-point
 * Laplacian L = (4 edges + corners - 20 h) / 6, whose leading error is the same in every
 * direction, and c^2 = 0.3 cells^2 per step (the seed's 3 : 1 springs give 5/16: waves run
 * 2% slower). The second is a viscosity, 6/64 L v: it takes 4.7% of a 4-cell wave's
 * velocity per step and 1.4% of a 16-cell wave's. Short waves are the ones a 9-point
 * stencil cannot carry alike in every direction; without it the slow grid-scale tail
 * behind every ring makes a lattice of dots inside it. v is read from one buffer and
 * written to another (vn), since the viscosity reads v's neighbours. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
row_iso(const int32_t *restrict h, int32_t *restrict hn, const int32_t *restrict v,
	int32_t *restrict vn, ptrdiff_t s, int n, int sv, int sh)
{
	const int32_t *restrict up = h - s, *restrict dn = h + s;
	const int32_t *restrict vu = v - s, *restrict vd = v + s;
#pragma omp simd
	for (int x = 0; x < n; x++) {
		int32_t lh = 4 * (up[x] + dn[x] + h[x - 1] + h[x + 1]) +
			     (up[x - 1] + up[x + 1] + dn[x + 1] + dn[x - 1]) - 20 * h[x];
		int32_t lv = 4 * (vu[x] + vd[x] + v[x - 1] + v[x + 1]) +
			     (vu[x - 1] + vu[x + 1] + vd[x + 1] + vd[x - 1]) - 20 * v[x];
		int32_t vv = v[x] + lh / 20 + lv / 64;
		vv -= vv >> sv;
		vn[x] = vv;
		int32_t hh = h[x] + vv;
		hh -= hh >> sh;
		hn[x] = hh;
	}
}

/* Any other D (e + c not a power of two): plain division. */
static void row_div(const int32_t *restrict h, int32_t *restrict hn, int32_t *restrict v,
		    ptrdiff_t s, int n, int32_t e, int32_t c, int sv, int sh)
{
	const int32_t *up = h - s, *dn = h + s;
	const int32_t dd = 4 * (e + c);
	for (int x = 0; x < n; x++) {
		int32_t a = (dd * h[x] - (e * (up[x] + dn[x] + h[x - 1] + h[x + 1]) +
					  c * (up[x - 1] + up[x + 1] + dn[x + 1] + dn[x - 1]))) /
			    dd;
		int32_t vv = v[x] - a;
		vv -= vv >> sv;
		v[x] = vv;
		int32_t hh = h[x] + vv;
		hh -= hh >> sh;
		hn[x] = hh;
	}
}

static void hooke_uninit(void *priv)
{
	hooke *p = priv;
	ig_release(p->hbuf[0]);
	ig_release(p->hbuf[1]);
	ig_release(p->vbuf);
	ig_release(p->vbuf2);
	ig_free(&p->g);
}

static int hooke_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	hooke *p = priv;
	for (int i = 0; p->scheme == HOOKE_ISO && i < ctx->scene->nparams; i++) {
		const char *nm = ctx->scene->params[i].name;
		if (!strcmp(nm, "edge") || !strcmp(nm, "corner"))
			return scene_errf(
				ctx->scene, err, TP_EINPUT,
				!strcmp(nm, "edge") ? "params.edge" : "params.corner",
				"the spring weights are the seed scheme's: set params.scheme "
				"\"seed\" with them (the isotropic scheme's are 4 : 1)");
	}
	if (p->edge + p->corner < 1)
		return scene_errf(ctx->scene, err, TP_EINPUT, "params.edge",
				  "edge and corner cannot both be 0 (no spring would move the water)");
	int rc = ig_setup(&p->g, ctx, 1, p->unit, p->sponge, err);
	if (rc < 0)
		return rc;
	/* At another size than the scene's (s = scene_scale, s times the steps per second)
	 * both dampings keep their rate per second: 2^-shift / s per step. */
	const double sc = scene_scale(ctx->scene);
	ig_shift_init(&p->vsh, ldexp(1.0, -p->vshift) / sc);
	ig_shift_init(&p->hsh, ldexp(1.0, -p->hshift) / sc);
	p->hbuf[0] = ig_alloc(&p->g);
	p->hbuf[1] = ig_alloc(&p->g);
	p->vbuf = ig_alloc(&p->g);
	if (p->scheme == HOOKE_ISO)
		p->vbuf2 = ig_alloc(&p->g);
	if (!p->hbuf[0] || !p->hbuf[1] || !p->vbuf || (p->scheme == HOOKE_ISO && !p->vbuf2))
		return tp_errf(err, TP_EIO, "out of memory for a %dx%d pool", p->g.w, p->g.h);
	int d = 4 * (p->edge + p->corner);
	p->kshift = -1;
	for (int k = 0; k < 8; k++)
		if (d == 1 << k)
			p->kshift = k;
	return 0;
}

static void hooke_drop(void *priv, double x, double y, double r, double strength)
{
	hooke *p = priv;
	int32_t *h = ig_org(p->hbuf[p->cur], &p->g);
	/* displaced at rest: v is untouched; the isotropic scheme's drops are raised cosines */
	ig_drop(&p->g, &h, 1, x, y, r, strength, p->scheme == HOOKE_ISO, NULL);
}

static int hooke_step(void *priv, const tp_step_in *in)
{
	hooke *p = priv;
	const ig_grid *g = &p->g;
	int32_t *h = ig_org(p->hbuf[p->cur], g), *hn = ig_org(p->hbuf[!p->cur], g);
	int32_t *v = ig_org(p->vbuf, g);
	const int iso = p->scheme == HOOKE_ISO;
	int32_t *vn = iso ? ig_org(p->vbuf2, g) : v;
	if (g->wrap) {
		ig_wrap_ghosts(g, h);
		if (iso)
			ig_wrap_ghosts(g, v);
	}
	const ptrdiff_t s = g->stride;
	const int x0 = g->x0, n = g->x1 - g->x0;
	const int sv = ig_shift_at(&p->vsh, in->step), sh = ig_shift_at(&p->hsh, in->step);
	/* Rows start IG_GHOST cells before x = 0, 64-byte aligned (intgrid.h, ig_alloc). */
	const int vec = !iso && p->kshift >= 0 && ig_use_avx512(g);
	const int a = x0 + IG_GHOST, b = g->x1 + IG_GHOST;
	(void)a, (void)b;
#pragma omp parallel for schedule(static) if (g->par)
	for (int y = g->y0; y < g->y1; y++) {
		const ptrdiff_t o = y * s + x0;
		if (iso)
			row_iso(h + o, hn + o, v + o, vn + o, s, n, sv, sh);
		else
#ifdef __x86_64__
		if (vec) {
			const ptrdiff_t r0 = y * s - IG_GHOST;
			row_pow2_avx512(h + r0, hn + r0, v + r0, s, a, b, p->edge, p->corner,
					p->kshift, sv, sh);
		} else
#endif
		if (p->kshift >= 0)
			row_pow2(h + o, hn + o, v + o, s, n, p->edge, p->corner, p->kshift, sv,
				 sh);
		else
			row_div(h + o, hn + o, v + o, s, n, p->edge, p->corner, sv, sh);
		if (g->sponge) {
			ig_sponge_row(g, y, hn + y * s, h + y * s);
			ig_sponge_row(g, y, vn + y * s, NULL);
		}
	}
	p->cur = !p->cur;
	if (iso) {
		int32_t *t = p->vbuf;
		p->vbuf = p->vbuf2;
		p->vbuf2 = t;
	}
	int32_t *hold[2] = {hn, vn};
	ig_boxes(&p->g, in->boxes, in->dt, p->wake, hold, 1, hold, 2);
	return 0;
}

static void hooke_surface(void *priv, tp_surface *out)
{
	hooke *p = priv;
	ig_surface(&p->g, ig_org(p->hbuf[p->cur], &p->g), out);
}

static void hooke_stats(const void *priv, tp_stats *out)
{
	const hooke *p = priv;
	ig_stats(&p->g, ig_org(p->hbuf[p->cur], &p->g), ig_org(p->vbuf, &p->g), 0, out);
}

static int hooke_save(const void *priv, FILE *f, tp_err *err)
{
	const hooke *p = priv;
	const int32_t *b[2] = {ig_org(p->hbuf[p->cur], &p->g), ig_org(p->vbuf, &p->g)};
	return ig_save(&p->g, "hooke", b, 2, f, err);
}

static int hooke_load(void *priv, FILE *f, tp_err *err)
{
	hooke *p = priv;
	int32_t *b[2] = {ig_org(p->hbuf[p->cur], &p->g), ig_org(p->vbuf, &p->g)};
	return ig_load(&p->g, "hooke", b, 2, f, err);
}

const tp_solver tp_solver_hooke = {
	.kind.name = "hooke",
	.kind.description =
		"seed 000: int32 height and velocity, 8 springs (Hooke's law; isotropic 9-point "
		"weights and a short-wave viscosity by default, or the seed's 3 : 1), shift "
		"damping",
	.kind.priv_size = sizeof(hooke),
	.kind.options = hooke_options,
	.kind.caps = TP_SOLVER_HEIGHTFIELD | TP_SOLVER_CELL_STEPS,
	.init = hooke_init,
	.uninit = hooke_uninit,
	.drop = hooke_drop,
	.step = hooke_step,
	.surface = hooke_surface,
	.stats = hooke_stats,
	.save = hooke_save,
	.load = hooke_load,
};
