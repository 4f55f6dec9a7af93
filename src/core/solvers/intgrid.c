#include "solvers/intgrid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/cpu.h"
#include "util/image.h"
#include "util/wire.h"

static inline int wrapi(int i, int n)
{
	i %= n;
	return i < 0 ? i + n : i;
}

static inline int imin(int a, int b)
{
	return a < b ? a : b;
}

int ig_setup(ig_grid *g, const tp_solver_ctx *ctx, int ring, int unit, int sponge, tp_err *err)
{
	const scene *sc = ctx->scene;
	const int w = sc->width, h = sc->height;
	if (w < 2 * ring + 1 || h < 2 * ring + 1 || w < 2 * IG_GHOST || h < 2 * IG_GHOST)
		return scene_errf(sc, err, TP_EINPUT, "size",
			       "the %s solver needs at least %dx%d cells (got %dx%d)",
			       sc->solver ? sc->solver->name : "integer", 2 * ring + 1,
			       2 * ring + 1, w, h);
	g->sc = sc;
	g->avx512 = (ctx->cpu_flags & TP_CPU_FLAG_AVX512F) != 0;
	g->w = w;
	g->h = h;
	/* Rows start on 64-byte boundaries so the vector loops see aligned, contiguous rows. */
	g->stride = ((ptrdiff_t)w + 2 * IG_GHOST + 15) & ~(ptrdiff_t)15;
	g->count = (size_t)g->stride * (size_t)(h + 2 * IG_GHOST);
	g->wrap = sc->boundary == SCENE_BOUNDARY_WRAP;
	/* Above the scene's size the damping shifts grow (intgrid.h) and with them the dead
	 * zone of x -= x >> d (nothing happens to |x| < 2^d): finer stored units keep it at
	 * the same height, about s^2 times as many (the velocities per step are 1/s as
	 * large), within the `unit` range. */
	const double s2 = scene_scale(sc) * scene_scale(sc) * 1.4142135623730951;
	int m = 0;
	while (ldexp(1.0, m + 1) <= s2 && ((int64_t)unit << (m + 1)) <= IG_UNIT_MAX)
		m++;
	g->unit = unit << m;
	if (g->wrap) {
		g->x0 = 0, g->x1 = w, g->y0 = 0, g->y1 = h;
	} else {
		g->x0 = ring, g->x1 = w - ring, g->y0 = ring, g->y1 = h - ring;
	}
	g->par = (double)w * h >= IG_PAR_CELLS;
	g->wake_band = IG_WAKE_BAND * scene_scale(sc);
	g->sponge = 0;
	if (sc->boundary == SCENE_BOUNDARY_ABSORB) {
		int b = imin(sponge, imin(w, h) / 4);
		g->sponge = b > 1 ? b : 1;
		g->sponge_f = malloc((size_t)g->sponge * sizeof *g->sponge_f);
		if (!g->sponge_f)
			goto oom;
		/* Quadratic ramp from no damping at the inner edge of the band to IG_SPONGE_EDGE
		 * at the outermost cell: gentle enough that the ramp itself hardly reflects. At
		 * another render size (s times the steps per second, a band s times as wide) the
		 * damping per step is 1/s of it, so a wave loses as much crossing the band. */
		const int64_t edge = llround(IG_SPONGE_EDGE / scene_scale(sc));
		for (int k = 0; k < g->sponge; k++) {
			int64_t q = (int64_t)(g->sponge - k) * (g->sponge - k);
			g->sponge_f[k] =
				(int32_t)(IG_Q16 - edge * q / ((int64_t)g->sponge * g->sponge));
		}
		/* by column: the factor of the left or right band, IG_Q16 (none) between */
		g->sponge_x = malloc((size_t)w * sizeof *g->sponge_x);
		if (!g->sponge_x)
			goto oom;
		for (int x = 0; x < w; x++) {
			int d = imin(x, w - 1 - x);
			g->sponge_x[x] = d < g->sponge ? g->sponge_f[d] : IG_Q16;
		}
	}
	g->rows = calloc((size_t)h, sizeof *g->rows);
	g->nboxes = sc->nboxes;
	g->poses = calloc((size_t)sc->nboxes + 1, sizeof *g->poses);
	if (!g->rows || !g->poses)
		goto oom;
	for (int i = 0; i < sc->nboxes; i++)
		scene_path_eval(&sc->boxes[i].path, 0, &g->poses[i].x, &g->poses[i].y,
				&g->poses[i].angle);
	return 0;
oom:
	ig_free(g);
	return tp_errf(err, TP_EIO, "out of memory");
}

void ig_shift_init(ig_shift *sh, double r)
{
	sh->p = sh->q = 1;
	if (!(r > 0)) {
		sh->k = 0;
		return;
	}
	/* k: the largest with 2^-k >= r (exact: r and 2^-k are doubles) */
	int k = 0;
	while (k < 62 && ldexp(1.0, -(k + 1)) >= r)
		k++;
	if (k < 1 || k >= IG_SHIFT_MAX) {
		sh->k = k < 1 ? 1 : IG_SHIFT_MAX;
		return;
	}
	sh->k = k;
	double f = ldexp(r, k + 1) - 1; /* in (0, 1] */
	uint64_t q = (uint64_t)1 << 24, p = (uint64_t)llround(f * (double)q);
	if (p >= q || p == 0) {
		sh->k = p == 0 ? k + 1 : k;
		return;
	}
	sh->p = p;
	sh->q = q;
}

void ig_free(ig_grid *g)
{
	free(g->sponge_f);
	free(g->sponge_x);
	g->sponge_x = NULL;
	free(g->rows);
	free(g->poses);
	g->sponge_f = NULL;
	g->rows = NULL;
	g->poses = NULL;
}

int32_t *ig_alloc(const ig_grid *g)
{
	size_t bytes = ((g->count + 2 * IG_SLACK) * sizeof(int32_t) + 63) & ~(size_t)63;
	int32_t *p = tp_alloc_zeroed(bytes);
	return p ? p + IG_SLACK : NULL;
}

void ig_release(int32_t *buf)
{
	if (buf)
		free(buf - IG_SLACK);
}

void ig_wrap_ghosts(const ig_grid *g, int32_t *org)
{
	const int w = g->w, h = g->h;
	const ptrdiff_t s = g->stride;
	for (int y = 0; y < h; y++) {
		int32_t *r = org + y * s;
		for (int k = 1; k <= IG_GHOST; k++) {
			r[-k] = r[w - k];
			r[w - 1 + k] = r[k - 1];
		}
	}
	const size_t row = (size_t)(w + 2 * IG_GHOST) * sizeof *org;
	for (int k = 1; k <= IG_GHOST; k++) {
		memcpy(org - IG_GHOST - k * s, org - IG_GHOST + (h - k) * s, row);
		memcpy(org - IG_GHOST + (h - 1 + k) * s, org - IG_GHOST + (k - 1) * s, row);
	}
}

/* base + (v - base) f / 65536, truncated toward base so small motions die out. */
static inline int32_t sponge_scale(int32_t v, int32_t base, int32_t f)
{
	return base + (int32_t)((int64_t)(v - base) * f / IG_Q16);
}

/* row[x] = base[x] + (row[x] - base[x]) min(cap, fx[x]) / 65536 (base NULL: 0) over
 * [lo, hi): sponge_scale with the factor of the nearer of the two bands that meet there. */
static void sponge_span(int32_t *row, const int32_t *base, const int32_t *fx, int32_t cap,
			int lo, int hi)
{
	for (int x = lo; x < hi; x++)
		row[x] = sponge_scale(row[x], base ? base[x] : 0, fx[x] < cap ? fx[x] : cap);
}

#ifdef __x86_64__
#include <immintrin.h>

/* sponge_span in AVX-512: the 64-bit products of the even and the odd lanes
 * (vpmuldq), each divided by 65536 toward zero as C does, (p + (p < 0 ? 65535 : 0)) >> 16,
 * and their low halves put back together. The same bits as the plain loop. */
__attribute__((target("avx512f"))) static void
sponge_span_avx512(int32_t *row, const int32_t *base, const int32_t *fx, int32_t cap, int lo,
		   int hi)
{
	const __m512i capv = _mm512_set1_epi32(cap), round = _mm512_set1_epi64(IG_Q16 - 1);
	for (int x = lo; x < hi; x += 16) {
		const __mmask16 m = hi - x >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (hi - x)) - 1);
		const __m512i v = _mm512_maskz_loadu_epi32(m, row + x);
		const __m512i bs = base ? _mm512_maskz_loadu_epi32(m, base + x) : _mm512_setzero_si512();
		const __m512i f = _mm512_min_epi32(_mm512_maskz_loadu_epi32(m, fx + x), capv);
		const __m512i t = _mm512_sub_epi32(v, bs);
		__m512i pe = _mm512_mul_epi32(t, f);
		__m512i po = _mm512_mul_epi32(_mm512_srli_epi64(t, 32), _mm512_srli_epi64(f, 32));
		pe = _mm512_srai_epi64(_mm512_add_epi64(pe, _mm512_and_si512(_mm512_srai_epi64(pe, 63), round)), 16);
		po = _mm512_srai_epi64(_mm512_add_epi64(po, _mm512_and_si512(_mm512_srai_epi64(po, 63), round)), 16);
		const __m512i q = _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
		_mm512_mask_storeu_epi32(row + x, m, _mm512_add_epi32(bs, q));
	}
}
#endif

void ig_sponge_row(const ig_grid *g, int y, int32_t *row, const int32_t *base)
{
	const int b = g->sponge, w = g->w;
	if (!b)
		return;
	void (*span)(int32_t *, const int32_t *, const int32_t *, int32_t, int, int) = sponge_span;
#ifdef __x86_64__
	if (ig_use_avx512(g))
		span = sponge_span_avx512;
#endif
	/* A cell's factor is sponge_f at its distance to the nearest edge, min(dy, dx): as
	 * sponge_f grows with the distance (ig_setup), that is min(sponge_f[dy], sponge_x[x]). */
	const int dy = imin(y, g->h - 1 - y);
	if (dy < b) {
		span(row, base, g->sponge_x, g->sponge_f[dy], g->x0, g->x1);
		return;
	}
	/* b <= w / 4: the left and right bands never overlap. */
	span(row, base, g->sponge_x, IG_Q16, g->x0, imin(b, g->x1));
	span(row, base, g->sponge_x, IG_Q16, w - b > g->x0 ? w - b : g->x0, g->x1);
}

/* v in stored units, rounded half away from zero (symmetric for negative strengths) and
 * saturated at +-IG_HMAX. */
static int32_t round_sat(double v)
{
	if (v != v)
		return 0;
	if (v >= IG_HMAX)
		return IG_HMAX;
	if (v <= -IG_HMAX)
		return -IG_HMAX;
	return (int32_t)(v >= 0 ? floor(v + 0.5) : -floor(-v + 0.5));
}

static inline void add_sat(int32_t *cell, int32_t add)
{
	int64_t s = (int64_t)*cell + add;
	*cell = (int32_t)(s > IG_HMAX ? IG_HMAX : s < -IG_HMAX ? -IG_HMAX : s);
}

/* Clamps a (possibly huge) coordinate before it is converted to int. */
static inline int to_cell(double v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : (int)v;
}

/* The cells [i0, i1] x [j0, j1] whose centres (i + 0.5, j + 0.5) may lie within ex, ey
 * of (x, y): clipped to the active cells, or for wrap (x, y already reduced to the pool)
 * to the pool and its neighbouring periodic images, so a cell is visited once for each of
 * its images at offsets -1, 0, +1 periods. */
static void cell_range(const ig_grid *g, double x, double ex, double y, double ey, int *i0, int *i1,
		       int *j0, int *j1)
{
	const int w = g->w, h = g->h;
	if (g->wrap) {
		*i0 = to_cell(floor(x - ex - 0.5), -w, 2 * w - 1);
		*i1 = to_cell(ceil(x + ex - 0.5), -w, 2 * w - 1);
		*j0 = to_cell(floor(y - ey - 0.5), -h, 2 * h - 1);
		*j1 = to_cell(ceil(y + ey - 0.5), -h, 2 * h - 1);
	} else {
		*i0 = to_cell(floor(x - ex - 0.5), g->x0, g->x1);
		*i1 = to_cell(ceil(x + ex - 0.5), g->x0 - 1, g->x1 - 1);
		*j0 = to_cell(floor(y - ey - 0.5), g->y0, g->y1);
		*j1 = to_cell(ceil(y + ey - 0.5), g->y0 - 1, g->y1 - 1);
	}
}

void ig_drop(const ig_grid *g, int32_t *const *org, int n, double x, double y, double r,
	     double strength, int smooth, ig_rect *touched)
{
	if (touched)
		*touched = (ig_rect){0, -1, 0, -1};
	if (!(r > 0) || !isfinite(x) || !isfinite(y) || !isfinite(r) || !isfinite(strength))
		return;
	const int w = g->w, h = g->h;
	const double rmax = w > h ? w : h;
	if (r > rmax)
		r = rmax;
	if (g->wrap) {
		x -= floor(x / w) * w;
		y -= floor(y / h) * h;
	}
	if (smooth && r < IG_DROP_RMIN) {
		/* Below IG_DROP_RMIN cells a raised cosine sampled at cell centres is a square
		 * more than a disc, and its ring keeps that shape (a drop of radius 3 at half
		 * the scene's size measured 0.031-0.035 in tests/test_round.c's measure): it is
		 * drawn at IG_DROP_RMIN with the same volume (the peak times r^2). */
		strength *= (r / IG_DROP_RMIN) * (r / IG_DROP_RMIN);
		r = IG_DROP_RMIN;
	}
	const double e = strength * g->unit;
	int i0, i1, j0, j1;
	cell_range(g, x, r, y, r, &i0, &i1, &j0, &j1);
	if (touched)
		*touched = (ig_rect){i0, i1, j0, j1};
	for (int j = j0; j <= j1; j++) {
		const ptrdiff_t row = (ptrdiff_t)wrapi(j, h) * g->stride;
		for (int i = i0; i <= i1; i++) {
			double dx = i + 0.5 - x, dy = j + 0.5 - y;
			double d = sqrt(dx * dx + dy * dy);
			if (!(d < r))
				continue;
			/* seed 001: E_b = E_a (1 - d / R); smooth: a raised cosine */
			const double shape =
				smooth ? 0.5 + 0.5 * cos(M_PI * d / r) : 1.0 - d / r;
			int32_t add = round_sat(e * shape);
			for (int b = 0; b < n; b++)
				add_sat(&org[b][row + wrapi(i, w)], add);
		}
	}
}

/* The share of a cell at (u, v) in a box's frame that the box a x b (half extents) holds:
 * 1 deeper than e inside, 0 farther than e outside, and between them the smoothstep
 * t^2 (3 - 2 t), t = (e - sd) / (2 e), of the signed distance sd to the footprint's edge
 * (negative inside). A hard footprint switches whole cells in and out as the box moves,
 * which these integer schemes carry away as grid-scale waves. */
static double box_cover(double u, double v, double a, double b, double e)
{
	double du = fabs(u) - a, dv = fabs(v) - b;
	double sd = du > 0 || dv > 0 ? sqrt((du > 0 ? du * du : 0) + (dv > 0 ? dv * dv : 0))
				     : du > dv ? du : dv;
	if (sd <= -e)
		return 1;
	if (sd >= e)
		return 0;
	double t = (e - sd) / (2 * e);
	return t * t * (3 - 2 * t);
}

/* One box's cells. pass 0 pushes the band around the footprint, pass 1 holds it. */
static void box_cells(const ig_grid *g, const scene_box *bx, const tp_box_pose *p, int pass,
		      double dt, double wake, int32_t *const *buf, int n)
{
	const int w = g->w, h = g->h;
	double px = p->x, py = p->y;
	if (!isfinite(px) || !isfinite(py) || !isfinite(p->angle) || !isfinite(p->vx) ||
	    !isfinite(p->vy))
		return;
	if (g->wrap) {
		px -= floor(px / w) * w;
		py -= floor(py / h) * h;
	}
	double s, c;
	ig_sincos_deg(p->angle, &s, &c);
	const double a = 0.5 * bx->size[0], b = 0.5 * bx->size[1];
	/* pass 1's soft edge: IG_BOX_EDGE wide, narrower on a box under twice that wide */
	const double e = fmin(0.5 * IG_BOX_EDGE, 0.5 * fmin(a, b));
	const double m = pass == 0 ? g->wake_band : e;
	const double ea = a + m, eb = b + m;
	/* Half extents of the bounding box of the (band-grown) rotated rectangle. */
	const double ex = fabs(c) * ea + fabs(s) * eb, ey = fabs(s) * ea + fabs(c) * eb;
	int i0, i1, j0, j1;
	cell_range(g, px, ex, py, ey, &i0, &i1, &j0, &j1);
	/* The box velocity in its own frame (same rotation as positions). */
	const double vu = c * p->vx - s * p->vy, vv = s * p->vx + c * p->vy;
	const double push = wake * dt * g->unit;
	for (int j = j0; j <= j1; j++) {
		const ptrdiff_t row = (ptrdiff_t)wrapi(j, h) * g->stride;
		for (int i = i0; i <= i1; i++) {
			/* Angle counter-clockwise on screen (y down): u = c dx - s dy, v = s dx + c
			 * dy. */
			double dx = i + 0.5 - px, dy = j + 0.5 - py;
			double u = c * dx - s * dy, v = s * dx + c * dy;
			int inside = fabs(u) < a && fabs(v) < b;
			if (pass == 1) {
				double cov = box_cover(u, v, a, b, m);
				if (cov >= 1)
					for (int k = 0; k < n; k++)
						buf[k][row + wrapi(i, w)] = 0;
				else if (cov > 0)
					for (int k = 0; k < n; k++) {
						int32_t *cell = &buf[k][row + wrapi(i, w)];
						*cell -= round_sat(*cell * cov);
					}
				continue;
			}
			if (inside || !(fabs(u) < ea && fabs(v) < eb))
				continue;
			/* Distance to the footprint and its outward normal (continuous around the
			 * corners); the velocity along the normal pushes water. The profile is 0
			 * with zero slope at both ends of the band: a smooth source excites no
			 * pixel-scale waves, which these integer schemes would keep as glitter. */
			double du = fabs(u) - a, dv = fabs(v) - b;
			du = du > 0 ? du : 0;
			dv = dv > 0 ? dv : 0;
			double dist = sqrt(du * du + dv * dv);
			if (!(dist < m) || dist <= 0)
				continue;
			double vn = ((u > 0 ? du : -du) * vu + (v > 0 ? dv : -dv) * vv) / dist;
			double q = dist / m;
			double prof = 16.0 * q * q * (1.0 - q) * (1.0 - q);
			int32_t add = round_sat(push * vn * prof);
			for (int k = 0; k < n; k++)
				add_sat(&buf[k][row + wrapi(i, w)], add);
		}
	}
}

void ig_boxes(ig_grid *g, const tp_box_pose *poses, double dt, double wake, int32_t *const *push,
	      int npush, int32_t *const *hold, int nhold)
{
	if (!poses || !g->nboxes)
		return;
	memcpy(g->poses, poses, (size_t)g->nboxes * sizeof *poses);
	if (wake != 0 && dt > 0)
		for (int i = 0; i < g->nboxes; i++)
			box_cells(g, &g->sc->boxes[i], &poses[i], 0, dt, wake, push, npush);
	for (int i = 0; i < g->nboxes; i++)
		box_cells(g, &g->sc->boxes[i], &poses[i], 1, dt, wake, hold, nhold);
}

void ig_stats(const ig_grid *g, const int32_t *h, const int32_t *k, int kind, tp_stats *out)
{
	const int w = g->w, hh = g->h;
#pragma omp parallel for schedule(static) if (g->par)
	for (int y = 0; y < hh; y++) {
		const int32_t *hr = h + y * g->stride, *kr = k + y * g->stride;
		/* The pair below row y: the next row, the first one for wrap, none at the bottom.
		 */
		const int32_t *dn = y + 1 < hh ? hr + g->stride : g->wrap ? h : NULL;
		int32_t mn = hr[0], mx = hr[0];
		int64_t sum = 0;
		double e = 0;
		for (int x = 0; x < w; x++) {
			int32_t v = hr[x];
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			sum += v;
			double kin = kind ? (double)v - kr[x] : (double)kr[x];
			double gx = x + 1 < w ? (double)hr[x + 1] - v
				    : g->wrap ? (double)hr[0] - v
					      : 0;
			double gy = dn ? (double)dn[x] - v : 0;
			e += kin * kin + gx * gx + gy * gy;
		}
		g->rows[y] = (ig_rowstat){mn, mx, sum, e};
	}
	int32_t mn = g->rows[0].min, mx = g->rows[0].max;
	int64_t sum = 0;
	double e = 0;
	for (int y = 0; y < hh; y++) {
		mn = g->rows[y].min < mn ? g->rows[y].min : mn;
		mx = g->rows[y].max > mx ? g->rows[y].max : mx;
		sum += g->rows[y].sum;
		e += g->rows[y].energy;
	}
	const double u = g->unit;
	tp_stats_add(out, "min", mn / u);
	tp_stats_add(out, "max", mx / u);
	tp_stats_add(out, "sum", (double)sum / u);
	tp_stats_add(out, "energy", e / (u * u));
}

/* Checkpoint section: magic, tag, then w, h, unit, n and the n buffers' pool cells row by
 * row, all little-endian (util/wire.h). */
#define IG_MAGIC "TPINTG02"

int ig_save(const ig_grid *g, const char *tag, const int32_t *const *org, int n, FILE *f,
	    tp_err *err)
{
	char t[16] = { 0 };
	strncpy(t, tag, sizeof t - 1);
	int rc = tp_wr_bytes(f, IG_MAGIC, 8) | tp_wr_bytes(f, t, sizeof t);
	rc |= tp_wr_i32(f, g->w) | tp_wr_i32(f, g->h) | tp_wr_i32(f, g->unit) | tp_wr_i32(f, n);
	for (int b = 0; b < n && !rc; b++)
		for (int y = 0; y < g->h && !rc; y++)
			rc |= tp_wr_i32s(f, org[b] + y * g->stride, (size_t)g->w);
	return rc ? tp_errf(err, TP_EIO, "checkpoint: write failed") : 0;
}

int ig_load(const ig_grid *g, const char *tag, int32_t *const *org, int n, FILE *f, tp_err *err)
{
	char magic[8], t[16], want[16] = { 0 };
	int w, h, unit, nb;
	strncpy(want, tag, sizeof want - 1);
	if (tp_rd_bytes(f, magic, 8) || tp_rd_bytes(f, t, sizeof t) || tp_rd_int(f, &w) ||
	    tp_rd_int(f, &h) || tp_rd_int(f, &unit) || tp_rd_int(f, &nb))
		return tp_errf(err, TP_EIO, "checkpoint: truncated header");
	if (memcmp(magic, IG_MAGIC, 8) || memcmp(t, want, sizeof t))
		return tp_errf(err, TP_EINPUT, "checkpoint: not a %s checkpoint", tag);
	if (w != g->w || h != g->h || unit != g->unit || nb != n)
		return tp_errf(err, TP_EINPUT,
			       "checkpoint: made for %dx%d, unit %d (this scene: %dx%d, unit %d)", w, h,
			       unit, g->w, g->h, g->unit);
	for (int b = 0; b < n; b++)
		for (int y = 0; y < g->h; y++)
			if (tp_rd_i32s(f, org[b] + y * g->stride, (size_t)g->w))
				return tp_errf(err, TP_EIO, "checkpoint: truncated data");
	/* A checkpoint from another boundary could carry non-zero held cells: re-zero them. */
	for (int b = 0; b < n; b++)
		for (int y = 0; y < g->h; y++)
			for (int x = 0; x < g->w; x++)
				if (x < g->x0 || x >= g->x1 || y < g->y0 || y >= g->y1)
					org[b][y * g->stride + x] = 0;
	return 0;
}

void ig_scan_spans(const ig_grid *g, const int32_t *org, tp_span *spans)
{
	for (int y = 0; y < g->h; y++) {
		const int32_t *row = org + (ptrdiff_t)y * g->stride;
		int lo = 0, hi = g->w;
		while (lo < hi && row[lo] == 0)
			lo++;
		while (hi > lo && row[hi - 1] == 0)
			hi--;
		spans[y] = lo < hi ? (tp_span){lo, hi} : (tp_span){0, 0};
	}
}

void ig_surface(const ig_grid *g, const int32_t *org, tp_surface *out)
{
	memset(out, 0, sizeof *out);
	out->kind = TP_SURFACE_HEIGHT;
	out->w = g->w;
	out->h = g->h;
	out->type = TP_SAMPLE_I32;
	out->data = org;
	out->stride = g->stride;
	out->scale = 1.0f / (float)g->unit;
	out->wrap = g->wrap;
	out->nboxes = g->nboxes;
	out->boxes = g->poses;
}

void ig_sincos_deg(double deg, double *s, double *c)
{
	if (!isfinite(deg)) {
		*s = 0;
		*c = 1;
		return;
	}
	double d = fmod(deg, 360.0); /* exact */
	if (d < 0)
		d += 360.0;
	int q = (int)(d / 90.0);
	double x = (d - 90.0 * q) * (3.14159265358979323846 / 180.0); /* about [0, pi/2] */
	/* Taylor series to x^21 / x^22: the truncation error is below 1e-17 on [0, pi/2]. */
	double x2 = x * x, sn = 0, cs = 0;
	for (int k = 21; k >= 1; k -= 2) /* sn = x (1 - x^2/(2*3) (1 - x^2/(4*5) (...))) */
		sn = 1.0 - x2 / (double)((k + 1) * (k + 2)) * sn;
	sn *= x;
	for (int k = 22; k >= 2; k -= 2)
		cs = 1.0 - x2 / (double)((k - 1) * k) * cs;
	switch (q & 3) {
	case 0: *s = sn, *c = cs; break;
	case 1: *s = cs, *c = -sn; break;
	case 2: *s = -sn, *c = -cs; break;
	default: *s = -cs, *c = sn; break;
	}
}
