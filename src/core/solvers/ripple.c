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
 * tests/reference/seed_ripple.c whatever the thread count with params.scheme "seed".
 *
 * The default scheme, "isotropic" (row_step_iso), replaces the seed's stencil, whose short
 * waves travel at direction-dependent speeds (square hatching inside the rings), by two
 * half steps of the wave equation on the isotropic 9-point Laplacian, and drops by raised
 * cosines; its levels are half steps in the queue below.
 *
 * Steps are lazy: step() queues up to FUSE_MAX of them, and the queue runs when anything
 * looks at or changes the surface (surface, drop, stats, save) or fills. A run of k queued
 * steps is one sweep over memory instead of k (temporal blocking, run_fused): the same
 * per-row arithmetic in an order that respects every dependency, so the same bits. Alone
 * the AVX-512 kernel is bound by its arithmetic and this gains nothing; beside x264's
 * threads it is bound by memory, and an MP4 render at 3x the scene's size (6 steps a
 * frame) takes about 1% less wall time.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/intgrid.h"
#include "solvers/solver.h"

/* Steps fused into one sweep at most. The rows a sweep keeps in flight (2 per step, in
 * both buffers) stay in L2 at 4K widths; more steps would add to the serial band-edge
 * work (2 k (k - 1) rows per thread boundary) for little. */
#define FUSE_MAX 6

typedef struct ripple {
	int damping; /* h' -= h' >> damping */
	int unit;    /* stored units per height unit */
	int sponge;  /* absorb band, pixels */
	double wake; /* bow push of moving boxes */
	int scheme;  /* RIPPLE_SEED or RIPPLE_ISO */

	ig_grid g;
	ig_shift hdamp, vdamp; /* damping shifts per step at the render size (see init) */
	int32_t *buf[2];       /* buf[cur] = current surface, buf[!cur] = previous */
	/* Calm water: span[b][y] holds every nonzero cell of buf[b]'s row y (see level_row);
	 * NULL (all cells stepped) with wrap or boxes, which change cells outside the kernel. */
	tp_span *span[2];
	int cur;
	int npend;                        /* queued steps (see run_fused) */
	signed char pd[FUSE_MAX], pv[FUSE_MAX]; /* their damping shifts (pv 0: no vd term) */
} ripple;

enum { RIPPLE_SEED, RIPPLE_ISO };
static const char *const scheme_names[] = {"seed", "isotropic", NULL};

#define OFF(f) offsetof(ripple, f)
static const tp_option ripple_options[] = {
	{"scheme", "isotropic: 9-point wave equation, 2 steps in 1, round drops; seed: seed 001",
	 OFF(scheme), TP_OPT_ENUM, RIPPLE_ISO, 0, 1, scheme_names, TP_UNIT_NONE},
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

/* The isotropic scheme (scheme "isotropic"), one half step of the wave equation
 *   h' = 2 h - h_prev + c^2 L h,   L h = (4 (N + S + W + E) + (NW + NE + SW + SE) - 20 h) / 6,
 * the 9-point Laplacian whose leading error is isotropic (a multiple of the biharmonic),
 * with c^2 = 0.3 cells^2 per half step: c^2 L h = (4 edges + corners - 20 h) / 20, C
 * division toward zero. Two half steps make one step (1.095 cells per step, the seed's
 * 1.080 within 1.5%); the seed's 12-point stencil has c^2 = 7/6 per step, past what a
 * 9-point leapfrog allows (3/4), and its short waves travel at speeds that depend on the
 * direction by tens of percent, which made the square hatching inside every ring. The
 * damping (dmp: h' -= h' >> d, vd: h' -= (h' - h) >> v) is done on the second half only,
 * so a step damps as the seed's does. dmp and vd are constants at each call site. */
static inline __attribute__((always_inline)) void row_step_iso(const int32_t *restrict c,
							       int32_t *restrict p, ptrdiff_t s,
							       int n, const int dmp, int d,
							       const int vd, int v)
{
	const int32_t *restrict u1 = c - s, *restrict d1 = c + s;
#pragma omp simd
	for (int x = 0; x < n; x++) {
		int32_t edge = u1[x] + d1[x] + c[x - 1] + c[x + 1];
		int32_t corner = u1[x - 1] + u1[x + 1] + d1[x - 1] + d1[x + 1];
		int32_t nv = 2 * c[x] - p[x] + (4 * edge + corner - 20 * c[x]) / 20;
		if (dmp)
			nv -= nv >> d;
		if (vd)
			nv -= (nv - c[x]) >> v;
		p[x] = nv;
	}
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
row_kernel_iso(const int32_t *restrict c, int32_t *restrict p, ptrdiff_t s, int n, int d, int v)
{
	if (!d)
		row_step_iso(c, p, s, n, 0, 0, 0, 0);
	else if (!v)
		row_step_iso(c, p, s, n, 1, d, 0, 0);
	else
		row_step_iso(c, p, s, n, 1, d, 1, v);
}

#ifdef __x86_64__
#include <immintrin.h>

/* The kernel in AVX-512 for the cells [a, b) of a row whose start `r` (and the previous
 * row's) is 64-byte aligned; `q` is the same row of the previous surface. The plain loop
 * above loads each neighbour unaligned, and 10 of its 12 loads split a cache line: it is
 * bound by loads. Here every load is aligned and the shifted neighbours come from the
 * vectors already loaded (valignd): with V = u1 + c + d1 (column sums),
 *   sum = V[x-1] + V[x] + V[x+1] - c[x] + c[x-2] + c[x+2] + u2[x] + d2[x],
 * the same 12 neighbours, the same integer sum. sum / 6 toward zero is the compiler's
 * multiply-high: (sum * 0x2AAAAAAB) >> 32, plus 1 for negative sums. Lanes outside
 * [a, b) are computed from whatever lies there (ghosts, padding, IG_SLACK) and never
 * stored. */
static inline __attribute__((always_inline, target("avx512f"))) void
row_step_avx512(const int32_t *r, int32_t *q, ptrdiff_t s, int a, int b, int d, const int vd, int v)
{
	const __m512i m6 = _mm512_set1_epi32(0x2AAAAAAB);
	const __m512i odd = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29,
					      15, 31);
	const __m128i dd = _mm_cvtsi32_si128(d), vv = _mm_cvtsi32_si128(v);
	const int32_t *u2 = r - 2 * s, *u1 = r - s, *d1 = r + s, *d2 = r + 2 * s;
	int x = a & ~15;
	__m512i Cp = _mm512_load_si512(r + x - 16);
	__m512i Vp = _mm512_add_epi32(_mm512_add_epi32(_mm512_load_si512(u1 + x - 16), Cp),
				      _mm512_load_si512(d1 + x - 16));
	__m512i C = _mm512_load_si512(r + x);
	__m512i V = _mm512_add_epi32(_mm512_add_epi32(_mm512_load_si512(u1 + x), C),
				     _mm512_load_si512(d1 + x));
	for (; x < b; x += 16) {
		const __m512i Cn = _mm512_load_si512(r + x + 16);
		const __m512i Vn = _mm512_add_epi32(
			_mm512_add_epi32(_mm512_load_si512(u1 + x + 16), Cn),
			_mm512_load_si512(d1 + x + 16));
		__m512i sum = _mm512_add_epi32(_mm512_alignr_epi32(V, Vp, 15),
					       _mm512_alignr_epi32(Vn, V, 1));
		sum = _mm512_add_epi32(sum, _mm512_sub_epi32(V, C));
		sum = _mm512_add_epi32(sum, _mm512_add_epi32(_mm512_alignr_epi32(C, Cp, 14),
							     _mm512_alignr_epi32(Cn, C, 2)));
		sum = _mm512_add_epi32(sum, _mm512_add_epi32(_mm512_load_si512(u2 + x),
							     _mm512_load_si512(d2 + x)));
		const __m512i lo = _mm512_mul_epi32(sum, m6); /* even lanes' 64-bit products */
		const __m512i hi = _mm512_mul_epi32(_mm512_srli_epi64(sum, 32), m6);
		__m512i nv = _mm512_permutex2var_epi32(lo, odd, hi); /* their high halves */
		nv = _mm512_sub_epi32(nv, _mm512_srai_epi32(sum, 31));
		nv = _mm512_sub_epi32(nv, _mm512_load_si512(q + x));
		nv = _mm512_sub_epi32(nv, _mm512_sra_epi32(nv, dd));
		if (vd)
			nv = _mm512_sub_epi32(nv, _mm512_sra_epi32(_mm512_sub_epi32(nv, C), vv));
		__mmask16 m = 0xFFFF;
		if (x < a)
			m &= (__mmask16)(0xFFFFu << (a - x));
		if (x + 16 > b)
			m &= (__mmask16)(0xFFFFu >> (x + 16 - b));
		_mm512_mask_store_epi32(q + x, m, nv);
		Cp = C;
		C = Cn;
		Vp = V;
		V = Vn;
	}
}

__attribute__((target("avx512f"))) static void row_kernel_avx512(const int32_t *r, int32_t *q,
								   ptrdiff_t s, int a, int b, int d)
{
	row_step_avx512(r, q, s, a, b, d, 0, 0);
}

__attribute__((target("avx512f"))) static void
row_kernel_vd_avx512(const int32_t *r, int32_t *q, ptrdiff_t s, int a, int b, int d, int v)
{
	row_step_avx512(r, q, s, a, b, d, 1, v);
}
/* row_step_iso in AVX-512, for the cells [a, b) of a row whose start `r` (and its
 * neighbours') is 64-byte aligned, `q` the same row of the previous surface. Every load
 * is aligned and the shifted neighbours come from the vectors already loaded (valignd):
 * with W = u1 + d1 (the cells above and below),
 *   edge = W[x] + c[x-1] + c[x+1],   corner = W[x-1] + W[x+1],
 * the same integer sums as the plain loop. (4 edge + corner - 20 c) / 20 toward zero is
 * the compiler's multiply-high: ((n * 0x66666667) >> 35) + 1 for negative n. Lanes outside
 * [a, b) are computed from whatever lies there and never stored. */
static inline __attribute__((always_inline, target("avx512f"))) void
row_step_iso_avx512(const int32_t *r, int32_t *q, ptrdiff_t s, int a, int b, const int dmp,
		    int d, const int vd, int v)
{
	const __m512i m20 = _mm512_set1_epi32(0x66666667);
	const __m512i odd = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29,
					      15, 31);
	const __m512i k20 = _mm512_set1_epi32(20);
	const __m128i dd = _mm_cvtsi32_si128(d), vv = _mm_cvtsi32_si128(v);
	const int32_t *u1 = r - s, *d1 = r + s;
	int x = a & ~15;
	__m512i Cp = _mm512_load_si512(r + x - 16);
	__m512i Wp = _mm512_add_epi32(_mm512_load_si512(u1 + x - 16), _mm512_load_si512(d1 + x - 16));
	__m512i C = _mm512_load_si512(r + x);
	__m512i W = _mm512_add_epi32(_mm512_load_si512(u1 + x), _mm512_load_si512(d1 + x));
	for (; x < b; x += 16) {
		const __m512i Cn = _mm512_load_si512(r + x + 16);
		const __m512i Wn = _mm512_add_epi32(_mm512_load_si512(u1 + x + 16),
						    _mm512_load_si512(d1 + x + 16));
		__m512i edge = _mm512_add_epi32(W, _mm512_add_epi32(_mm512_alignr_epi32(C, Cp, 15),
								    _mm512_alignr_epi32(Cn, C, 1)));
		__m512i corner = _mm512_add_epi32(_mm512_alignr_epi32(W, Wp, 15),
						  _mm512_alignr_epi32(Wn, W, 1));
		__m512i n = _mm512_add_epi32(_mm512_slli_epi32(edge, 2), corner);
		n = _mm512_sub_epi32(n, _mm512_mullo_epi32(C, k20));
		const __m512i lo = _mm512_mul_epi32(n, m20); /* even lanes' 64-bit products */
		const __m512i hi = _mm512_mul_epi32(_mm512_srli_epi64(n, 32), m20);
		__m512i quo = _mm512_permutex2var_epi32(lo, odd, hi); /* their high halves */
		quo = _mm512_sub_epi32(_mm512_srai_epi32(quo, 3), _mm512_srai_epi32(n, 31));
		__m512i nv = _mm512_sub_epi32(_mm512_add_epi32(C, C), _mm512_load_si512(q + x));
		nv = _mm512_add_epi32(nv, quo);
		if (dmp)
			nv = _mm512_sub_epi32(nv, _mm512_sra_epi32(nv, dd));
		if (vd)
			nv = _mm512_sub_epi32(nv, _mm512_sra_epi32(_mm512_sub_epi32(nv, C), vv));
		__mmask16 m = 0xFFFF;
		if (x < a)
			m &= (__mmask16)(0xFFFFu << (a - x));
		if (x + 16 > b)
			m &= (__mmask16)(0xFFFFu >> (x + 16 - b));
		_mm512_mask_store_epi32(q + x, m, nv);
		Cp = C;
		C = Cn;
		Wp = W;
		W = Wn;
	}
}

__attribute__((target("avx512f"))) static void
row_kernel_iso_avx512(const int32_t *r, int32_t *q, ptrdiff_t s, int a, int b, int d, int v)
{
	if (!d)
		row_step_iso_avx512(r, q, s, a, b, 0, 0, 0, 0);
	else if (!v)
		row_step_iso_avx512(r, q, s, a, b, 1, d, 0, 0);
	else
		row_step_iso_avx512(r, q, s, a, b, 1, d, 1, v);
}
#endif

static void ripple_uninit(void *priv)
{
	ripple *p = priv;
	ig_release(p->buf[0]);
	ig_release(p->buf[1]);
	free(p->span[0]);
	free(p->span[1]);
	ig_free(&p->g);
}

static int ripple_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	ripple *p = priv;
	int rc = ig_setup(&p->g, ctx, 2, p->unit, p->sponge, err);
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
	if (!ctx->every_cell && !p->g.wrap && p->g.nboxes == 0) { /* zeroed: all rows empty */
		p->span[0] = calloc((size_t)p->g.h, sizeof(tp_span));
		p->span[1] = calloc((size_t)p->g.h, sizeof(tp_span));
		if (!p->span[0] || !p->span[1])
			return tp_errf(err, TP_EIO, "out of memory for a %dx%d pool", p->g.w,
				       p->g.h);
	}
	return 0;
}

static void ripple_flush(ripple *p);

/* s grown to hold [lo, hi) as well. */
static inline void span_add(tp_span *s, int lo, int hi)
{
	if (s->lo >= s->hi) {
		*s = (tp_span){lo, hi};
		return;
	}
	if (lo < s->lo)
		s->lo = lo;
	if (hi > s->hi)
		s->hi = hi;
}

static void ripple_drop(void *priv, double x, double y, double r, double strength)
{
	ripple *p = priv;
	ripple_flush(p);
	int32_t *b[2] = {ig_org(p->buf[0], &p->g), ig_org(p->buf[1], &p->g)};
	ig_rect t;
	ig_drop(&p->g, b, 2, x, y, r, strength, p->scheme == RIPPLE_ISO, &t);
	if (p->span[0])
		for (int j = t.j0; j <= t.j1 && t.i0 <= t.i1; j++)
			for (int k = 0; k < 2; k++)
				span_add(&p->span[k][j], t.i0, t.i1 + 1);
}

/* Row y of one step (damping shifts d, v; v 0: no velocity term), from the surface in
 * buffer `from` and the one before it in `into`, which it overwrites. With spans (sf of
 * `from`, si of `into`) only the cells that can be nonzero are stepped: a cell whose 12
 * neighbours and previous height are all 0 stays 0 (sum 0, and 0 >> d = 0), and `into`
 * already holds that 0. So the cells within 2 columns of the nonzero ones of rows
 * y - 2 .. y + 2, and those nonzero in `into`'s row; si[y] becomes the span of the
 * nonzero cells among them. The spans are read and written exactly where their rows are,
 * so the sweep's order keeps them right too. */
static inline void level_row(const ig_grid *g, int vec, int iso, int32_t *from, int32_t *into,
			     int d, int v, int y, const tp_span *sf, tp_span *si)
{
	const ptrdiff_t s = g->stride;
	int x0 = g->x0, n = g->x1 - g->x0;
	if (sf) {
		tp_span a = si[y];
		for (int yy = y - 2; yy <= y + 2; yy++)
			if (yy >= 0 && yy < g->h && sf[yy].lo < sf[yy].hi)
				span_add(&a, sf[yy].lo - 2, sf[yy].hi + 2);
		if (a.lo < g->x0)
			a.lo = g->x0;
		if (a.hi > g->x1)
			a.hi = g->x1;
		if (a.lo >= a.hi)
			return; /* calm: the row stays 0 */
		si[y] = a;
		x0 = a.lo;
		n = a.hi - a.lo;
	}
	int32_t *c = from + y * s, *nx = into + y * s;
	if (iso) {
#ifdef __x86_64__
		if (vec) /* rows start IG_GHOST cells before x = 0, 64-byte aligned */
			row_kernel_iso_avx512(c - IG_GHOST, nx - IG_GHOST, s, x0 + IG_GHOST,
					      x0 + n + IG_GHOST, d, v);
		else
#endif
			row_kernel_iso(c + x0, nx + x0, s, n, d, v);
		if (g->sponge && d) /* once a step, on its second half */
			ig_sponge_row(g, y, nx, c);
		goto trim;
	}
#ifdef __x86_64__
	/* Rows start IG_GHOST cells before x = 0, 64-byte aligned (intgrid.h, ig_alloc). */
	const int a = x0 + IG_GHOST, b = x0 + n + IG_GHOST;
	if (vec && v)
		row_kernel_vd_avx512(c - IG_GHOST, nx - IG_GHOST, s, a, b, d, v);
	else if (vec)
		row_kernel_avx512(c - IG_GHOST, nx - IG_GHOST, s, a, b, d);
	else
#endif
	if (v)
		row_kernel_vd(c + x0, nx + x0, s, n, d, v);
	else
		row_kernel(c + x0, nx + x0, s, n, d);
	if (g->sponge)
		ig_sponge_row(g, y, nx, c);
trim:
	if (sf) { /* trimmed to the nonzero cells: the wave front is slower than the reach */
		int lo = x0, hi = x0 + n;
		while (lo < hi && nx[lo] == 0)
			lo++;
		while (hi > lo && nx[hi - 1] == 0)
			hi--;
		si[y] = lo < hi ? (tp_span){lo, hi} : (tp_span){0, 0};
	}
}

/* The queued k steps in one sweep. Level j reads level j - 1 (rows y - 2 .. y + 2) and
 * overwrites level j - 2 (row y) in the other buffer. Each thread sweeps its band of rows
 * [lo, hi) once, doing at sweep position yy level j's row yy - 2 (j - 1): two rows behind
 * level j - 1, so its inputs are done, and its target row is read by nobody any more.
 * Within the band that is a trapezoid: level j covers [lo + 2 (j - 1), hi - 2 (j - 1)),
 * touching no other band's rows except level 1 reading level 0 (which no one overwrites
 * before level 2, and level 2 stops 2 rows short of the band's edge). Edges of the pool
 * are held rows, so bands do not shrink there. After a barrier, the V-shaped gaps about
 * each boundary between bands are filled level by level: level j's rows
 * [b - 2 (j - 1), b + 2 (j - 1)), whose inputs are now all done. */
/* Level j's row r of a sweep: buffers and spans alternate with the level. */
static inline void sweep_row(const ig_grid *g, int vec, int iso, int32_t *const bufs[2],
			     tp_span *const sp[2], const signed char *d, const signed char *v,
			     int j, int r)
{
	level_row(g, vec, iso, bufs[(j - 1) & 1], bufs[j & 1], d[j - 1], v[j - 1], r,
		  sp[(j - 1) & 1], sp[j & 1]);
}

static void run_fused(ripple *p, const signed char *d, const signed char *v, int k)
{
	const ig_grid *g = &p->g;
	int32_t *bufs[2] = {ig_org(p->buf[p->cur], g), ig_org(p->buf[!p->cur], g)};
	tp_span *sp[2] = {p->span[p->cur], p->span[!p->cur]};
	const int y0 = g->y0, y1 = g->y1;
	const int nt = g->par ? omp_get_max_threads() : 1, vec = ig_use_avx512(g);
	const int iso = p->scheme == RIPPLE_ISO;
#pragma omp parallel num_threads(nt) if (nt > 1)
	{
		const int t = omp_get_thread_num(), T = omp_get_num_threads();
		const int lo = y0 + (int)((long)(y1 - y0) * t / T);
		const int hi = y0 + (int)((long)(y1 - y0) * (t + 1) / T);
		const int shrink_lo = lo > y0, shrink_hi = hi < y1;
		for (int yy = lo; yy < hi + 2 * (k - 1); yy++)
			for (int j = 1; j <= k; j++) {
				const int r = yy - 2 * (j - 1);
				if (r < lo + (shrink_lo ? 2 * (j - 1) : 0) ||
				    r >= hi - (shrink_hi ? 2 * (j - 1) : 0))
					continue;
				sweep_row(g, vec, iso, bufs, sp, d, v, j, r);
			}
		if (k > 1 && T > 1) {
#pragma omp barrier
			if (shrink_lo) /* the gap about this band's first row */
				for (int j = 2; j <= k; j++)
					for (int r = lo - 2 * (j - 1); r < lo + 2 * (j - 1); r++)
						sweep_row(g, vec, iso, bufs, sp, d, v, j, r);
		}
	}
	p->cur ^= k & 1;
}

/* Runs the queued steps. Bands must be at least 4 k rows for the gaps about their two
 * edges (each reaching 2 k rows into the band) not to meet; thinner ones run a level at a
 * time. */
static void ripple_flush(ripple *p)
{
	const int k = p->npend;
	if (!k)
		return;
	p->npend = 0;
	const int rows = p->g.y1 - p->g.y0;
	const int nt = p->g.par ? omp_get_max_threads() : 1;
	if (rows / nt >= 4 * k)
		run_fused(p, p->pd, p->pv, k);
	else
		for (int j = 0; j < k; j++)
			run_fused(p, p->pd + j, p->pv + j, 1);
}

/* Queues one level (a seed step, or an isotropic half step: d 0 = undamped), running it
 * alone when wrap ghosts or boxes change cells between levels. */
static void queue_level(ripple *p, int d, int v, int alone)
{
	if (alone || p->npend == FUSE_MAX)
		ripple_flush(p);
	p->pd[p->npend] = (signed char)d;
	p->pv[p->npend] = (signed char)v;
	p->npend++;
	if (!alone)
		return;
	if (p->g.wrap)
		ig_wrap_ghosts(&p->g, ig_org(p->buf[p->cur], &p->g));
	ripple_flush(p);
}

static int ripple_step(void *priv, const tp_step_in *in)
{
	ripple *p = priv;
	ig_grid *g = &p->g;
	const int d = ig_shift_at(&p->hdamp, in->step);
	const int v = p->vdamp.k ? ig_shift_at(&p->vdamp, in->step) : 0;
	/* Wrap ghosts and boxes change cells between steps: those steps run one by one. */
	const int alone = g->wrap || g->nboxes > 0;
	if (p->scheme == RIPPLE_ISO)
		queue_level(p, 0, 0, alone);
	queue_level(p, d, v, alone);
	if (!alone)
		return 0;
	int32_t *both[2] = {ig_org(p->buf[p->cur], g), ig_org(p->buf[!p->cur], g)};
	ig_boxes(g, in->boxes, in->dt, p->wake, both, 2, both, 2);
	return 0;
}

static void ripple_surface(void *priv, tp_surface *out)
{
	ripple *p = priv;
	ripple_flush(p);
	ig_surface(&p->g, ig_org(p->buf[p->cur], &p->g), out);
	out->spans = p->span[p->cur];
}

/* Stats and checkpoints run the queued steps first: they are part of the state, so this
 * changes no value the solver stands for, only when the work is done. */
static void ripple_stats(const void *priv, tp_stats *out)
{
	const ripple *p = priv;
	ripple_flush((ripple *)priv);
	ig_stats(&p->g, ig_org(p->buf[p->cur], &p->g), ig_org(p->buf[!p->cur], &p->g), 1, out);
}

static int ripple_save(const void *priv, FILE *f, tp_err *err)
{
	const ripple *p = priv;
	ripple_flush((ripple *)priv);
	const int32_t *b[2] = {ig_org(p->buf[p->cur], &p->g), ig_org(p->buf[!p->cur], &p->g)};
	return ig_save(&p->g, "ripple", b, 2, f, err);
}

static int ripple_load(void *priv, FILE *f, tp_err *err)
{
	ripple *p = priv;
	p->npend = 0; /* the loaded state replaces everything, queued steps too */
	int32_t *b[2] = {ig_org(p->buf[p->cur], &p->g), ig_org(p->buf[!p->cur], &p->g)};
	int rc = ig_load(&p->g, "ripple", b, 2, f, err);
	for (int k = 0; k < 2 && p->span[k]; k++) /* the loaded cells' spans */
		ig_scan_spans(&p->g, ig_org(p->buf[k], &p->g), p->span[k]);
	return rc;
}

const tp_solver tp_solver_ripple = {
	.kind.name = "ripple",
	.kind.description =
		"seed 001: int32 two-buffer ripples, isotropic 9-point wave equation (or the seed's 12 "
		"neighbours / 6 - previous), shift damping",
	.kind.priv_size = sizeof(ripple),
	.kind.options = ripple_options,
	.kind.caps = TP_SOLVER_HEIGHTFIELD | TP_SOLVER_CELL_STEPS,
	.init = ripple_init,
	.uninit = ripple_uninit,
	.drop = ripple_drop,
	.step = ripple_step,
	.surface = ripple_surface,
	.stats = ripple_stats,
	.save = ripple_save,
	.load = ripple_load,
};
