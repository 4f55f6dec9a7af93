/*
 * intgrid.h - what the two integer height-field solvers (hooke, ripple) share: the padded
 * int32 grid, drops, the three boundaries, box footprints, statistics and checkpoints.
 * Internal to src/core/solvers/; tests/reference/ re-implements all of it in plain loops
 * (sharing only ig_sincos_deg) so the tests can compare the two bit for bit.
 *
 * Layout: a buffer holds (h + 4) rows of `stride` int32; the image cell (x, y) lives at
 * ig_org(buf, g)[y * stride + x], with IG_GHOST ghost cells on every side so the kernels'
 * stencils (reach 1 for hooke, 2 for ripple) never branch. Ghosts are 0 for reflect and
 * absorb and copies of the opposite edge for wrap (ig_wrap_ghosts before each step).
 *
 * Geometry: cell (x, y) is the unit square whose centre is (x + 0.5, y + 0.5) pixels.
 * Active cells (the ones a step updates and drops or boxes touch) are all cells for wrap;
 * for reflect and absorb, cells closer than `ring` to the edge are never written and stay
 * 0, as in the seeds' interior loops: that held border is what reflects the waves.
 *
 * Heights are int32 in 1/unit height units. Drops saturate cells at +-IG_HMAX so that the
 * kernels' neighbour sums (at most 12 cells, or 4 (edge + corner) <= 120 times a cell)
 * stay far from int32 overflow under the solvers' bounded (damped) dynamics.
 *
 * Nothing here allocates except ig_setup() and ig_alloc(); nothing prints.
 */
#ifndef TP_SOLVERS_INTGRID_H
#define TP_SOLVERS_INTGRID_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scene/scene.h"
#include "solvers/solver.h"
#include "util/error.h"

#define IG_GHOST       2
#define IG_HMAX        (1 << 22)
#define IG_UNIT_MAX    65536 /* finest stored unit (ig_setup refines `unit` up to it) */
#define IG_Q16         65536 /* fixed-point one of the sponge factors */
#define IG_SPONGE_EDGE 9830  /* sponge damping per step at the outermost cell, Q16 (0.15) */
#define IG_WAKE_BAND   8.0   /* scene units around a box footprint that its motion pushes */
#define IG_BOX_EDGE    4.0   /* width in cells of a box footprint's soft edge (ig_boxes) */
#define IG_PAR_CELLS   32768 /* smaller pools step on one thread: forking costs more */

typedef struct ig_rowstat {
	int32_t min, max;
	int64_t sum;
	double energy;
} ig_rowstat;

typedef struct ig_grid {
	int w, h;
	ptrdiff_t stride;   /* int32 between rows */
	size_t count;       /* int32 per buffer, ghosts included */
	int wrap;           /* periodic boundary */
	int x0, x1, y0, y1; /* active cells [x0, x1) x [y0, y1) */
	int par;            /* worth running the row loops in parallel */
	int avx512;         /* the AVX-512 row kernels may run (tp_solver_ctx.cpu_flags) */
	int unit;           /* stored units per height unit */
	int sponge;         /* absorbing band width in cells (0: no sponge) */
	double wake_band;   /* IG_WAKE_BAND scaled to the render size, pixels */
	int32_t *sponge_f;  /* Q16 factor by depth (distance to the nearest edge), sponge entries */
	int32_t *sponge_x;  /* Q16 factor of the left/right band by column (IG_Q16 between), w entries */
	ig_rowstat *rows;   /* stats scratch, h entries */
	const scene *sc;
	int nboxes;
	tp_box_pose *poses; /* latest box poses, for the surface */
} ig_grid;

/* Sets up g for the solver context's scene: `ring` = stencil reach (held border width for
 * reflect/absorb), `sponge` = requested absorb band width in pixels (clamped to a quarter
 * of the smaller side); the AVX-512 kernels run if ctx->cpu_flags has AVX-512F. Allocates
 * the tables; ig_free() releases them and is safe on a zeroed g. */
int ig_setup(ig_grid *g, const tp_solver_ctx *ctx, int ring, int unit, int sponge, tp_err *err);
void ig_free(ig_grid *g);

/* A zeroed, 64-byte aligned buffer of g->count int32, or NULL; free with ig_release().
 * IG_SLACK more zeroed int32 before and after it may be read (never written): a vector
 * kernel's aligned loads reach that far past the first and last row. */
#define IG_SLACK 16
int32_t *ig_alloc(const ig_grid *g);
void ig_release(int32_t *buf);

/* 1 if the AVX-512 row kernels may run (g->avx512; otherwise the plain C loops, the
 * reference the vector paths are tested against). */
static inline int ig_use_avx512(const ig_grid *g)
{
	return g->avx512;
}

/* spans[y] = the smallest span holding every nonzero cell of row y of org. */
void ig_scan_spans(const ig_grid *g, const int32_t *org, tp_span *spans);

static inline int32_t *ig_org(int32_t *buf, const ig_grid *g)
{
	return buf + IG_GHOST * g->stride + IG_GHOST;
}

/* Periodic ghosts: copies the opposite edges (IG_GHOST wide, corners included). */
void ig_wrap_ghosts(const ig_grid *g, int32_t *org);

/* Absorb: a Rayleigh sponge. The active cells of row y that lie in the band have their
 * change since `base` (the same row one step earlier) scaled down,
 *   v <- base + trunc((v - base) f[depth] / 65536),  depth = distance to the nearest edge,
 * or, with base NULL, v itself (a velocity). Damping motion rather than height lets waves
 * die in the band without pulling the water level there toward 0. */
void ig_sponge_row(const ig_grid *g, int y, int32_t *row, const int32_t *base);

/* Cells [i0, i1] x [j0, j1] (empty when i0 > i1 or j0 > j1). */
typedef struct ig_rect {
	int i0, i1, j0, j1;
} ig_rect;

/* Adds a drop to each of the n buffers (origins): every active cell whose centre is at
 * distance d < r of (x, y) gets += round(strength * unit * shape(d / r)) (rounded half away
 * from zero, saturating), shape(q) = 1 - q (the seeds' cone) or, with `smooth`, the raised
 * cosine (1 + cos(pi q)) / 2: a cone's kink and rim put energy into the grid's shortest
 * waves, which no stencil carries isotropically; a smooth drop narrower than IG_DROP_RMIN
 * cells is drawn that wide with the same volume (strength times (r / IG_DROP_RMIN)^2).
 * r is clamped to max(w, h). Wrap: (x, y) is first reduced to the
 * pool, and the disc adds through each periodic image of a cell one period away or less.
 * `touched` (if not NULL) gets a rectangle holding every cell changed (without wrap). */
#define IG_DROP_RMIN 2.0
void ig_drop(const ig_grid *g, int32_t *const *org, int n, double x, double y, double r,
	     double strength, int smooth, ig_rect *touched);

/* Boxes, once per step after the kernel, using poses (scene->nboxes entries or NULL):
 * first every box pushes the cells within IG_WAKE_BAND = m pixels outside its footprint,
 * at distance d with outward normal n, by
 *     wake * (box velocity . n) * dt * 16 q^2 (1 - q)^2  height units,  q = d / m
 * (added like a drop to the `npush` buffers): a bow wave ahead, a trough behind, about
 * 4.3 * wake height units in all as the box sweeps past a cell. Then each box holds the
 * water under it: in the `nhold` buffers a cell x becomes x - round(x c), c the share the
 * box holds, a smoothstep of the signed distance sd of the cell's centre to the
 * footprint's edge (negative inside): c = 1 (x = 0) for sd <= -e, c = 0 for sd >= e, and
 * t^2 (3 - 2 t), t = (e - sd) / (2 e), between, e = min(IG_BOX_EDGE, a, b) / 2 with a, b
 * the footprint's half extents. (A hard footprint switched whole cells in and out as the
 * box moved: grid-scale waves, tests/test_wake.c.) Footprints are
 * rectangles size[0] x size[1] centred on the pose, turned `angle` degrees
 * counter-clockwise as seen on screen; for wrap they repeat like drops. Remembers the poses
 * for ig_surface(). */
void ig_boxes(ig_grid *g, const tp_box_pose *poses, double dt, double wake, int32_t *const *push,
	      int npush, int32_t *const *hold, int nhold);

/* Stats over the whole image, in height units: min, max and sum of h, and the wave energy
 * = sum over cells of kinetic k^2 + the spring (slope) energy (h[x+1] - h)^2 + (h[y+1] - h)^2
 * (pairs inside the image; across the edges too for wrap). k is `k` itself (kind 0,
 * hooke's velocity) or h - k (kind 1, ripple's previous state). A level surface has no
 * energy, whatever its height. Rows are combined in row order (thread-count independent). */
void ig_stats(const ig_grid *g, const int32_t *h, const int32_t *k, int kind, tp_stats *out);

/* Damping shifts at another render size. The seeds damp with shifts, x -= x >> d, the
 * fraction 2^-d of x per step. Rendered at scale s the solver takes s times the steps per
 * second (TP_SOLVER_CELL_STEPS), so each damping wants another fraction r per step
 * (ripple.c and hooke.c say which). A shift only gives powers of two, so steps alternate
 * between the shifts k and k + 1 with 2^-(k+1) < r <= 2^-k, shift k on the fraction
 * f = r 2^(k+1) - 1 of the steps, spread evenly (Bresenham: step j uses k when
 * floor((j+1) f) > floor(j f)); the mean per step is then r (f is kept to 1/2^24).
 * Shifts stay in 1..IG_SHIFT_MAX (clamped: 1 is the most damping a shift gives, and 30
 * already keeps a wave for millions of steps); r = 0 is no damping. r = 2^-d gives d on
 * every step. A pure function of the step index: nothing to checkpoint. */
#define IG_SHIFT_MAX 30
typedef struct ig_shift {
	int k;          /* the stronger shift, k + 1 the other; 0: no damping */
	uint64_t p, q;  /* f = p / q, 0 < p <= q */
} ig_shift;
void ig_shift_init(ig_shift *sh, double r);
static inline int ig_shift_at(const ig_shift *sh, long step)
{
	if (sh->p >= sh->q)
		return sh->k;
	__extension__ typedef unsigned __int128 u128;
	uint64_t m = (uint64_t)(((u128)(uint64_t)step * sh->p) % sh->q);
	return m + sh->p >= sh->q ? sh->k : sh->k + 1;
}

/* Checkpoints: a header (tag, size, unit, buffer count) then the image cells of each
 * buffer, host byte order. */
int ig_save(const ig_grid *g, const char *tag, const int32_t *const *org, int n, FILE *f,
	    tp_err *err);
int ig_load(const ig_grid *g, const char *tag, int32_t *const *org, int n, FILE *f, tp_err *err);

void ig_surface(const ig_grid *g, const int32_t *org, tp_surface *out);

/* sin and cos of an angle in degrees from a fixed polynomial (no libm transcendental), so
 * box footprints are the same bits on every platform. Exact at multiples of 90 degrees. */
void ig_sincos_deg(double deg, double *s, double *c);

#endif
