/*
 * cg.h - conjugate gradient on a masked 4-neighbour Laplacian over a small rectangle.
 *
 * Used by the shallow solver (seed 003, GAMES103 lab 4) to find the "virtual height" that
 * pushes water out from under the boxes. It solves
 *
 *     (scale * L + shift * I + D) x = b    on the masked cells,
 *     (L x)_i = deg_i * x_i - sum_{j in N4(i)} x_j,
 *
 * where unmasked cells hold x = 0 (Dirichlet) and neighbours outside the pool do not exist
 * (deg_i counts the neighbours that do: 4 inside, fewer on a Neumann edge), and D is an
 * optional non-negative per-cell diagonal. With shift = 0 and no D this is exactly the operator the water update applies to the virtual height, so
 * `water += -rate * L vh` removes rate * b from the masked cells.
 *
 * Layout: row-major w x h cells, the outermost ring of cells must be unmasked so the
 * stencil needs no bounds checks. x holds the initial guess on entry (warm start) and the
 * solution on return. Before iterating, cg_solve() sets x to 0 off the mask and clears
 * the outer ring of its scratch vectors, and writes every interior cell of them (0 off the
 * mask) before reading it, so nothing left over from an earlier, differently shaped mask
 * is ever read.
 *
 * Ownership: the caller provides every array (the shallow solver carves them from one
 * arena at init), so cg_solve() never allocates.
 *
 * Determinism: dot products are summed per block of CG_BLOCK_ROWS rows in a fixed order
 * and the block sums are added in block order, so the bits do not depend on the number
 * of OpenMP threads (or on whether the parallel path is used at all).
 */
#ifndef TP_SOLVERS_CG_H
#define TP_SOLVERS_CG_H

#include <stddef.h>
#include <stdint.h>

#define CG_BLOCK_ROWS 8

typedef struct cg_problem {
	int w, h;
	const uint8_t *mask; /* 1 = unknown, 0 = held at zero */
	const uint8_t *deg;  /* existing neighbours per cell (0..4) */
	double scale, shift;
	const double *diag;  /* optional per-cell addition to the diagonal (>= 0), or NULL */
	/* Set by cg_solve (leave NULL): per row, the first and last masked column (lo > hi
	 * if none); NULL means every interior column. */
	const int *span;
} cg_problem;

typedef struct cg_work {
	double *r, *p, *q, *z, *pc; /* w*h each */
	double *part;               /* cg_blocks(h) partial sums */
	/* Optional: 1 when pc already holds the preconditioner of this very mask, deg, diag,
	 * scale and shift (set to 1 once built; the caller clears it when any changes).
	 * NULL: built at every solve that iterates. */
	int *pc_ready;
	/* Optional: 2*h ints for the rows' masked spans; the sweeps and vector operations
	 * then skip the unmasked ends of the rows (a tilted box leaves ~40% of its bounding
	 * rectangle unmasked). NULL: whole rows. */
	int *span;
	double *apc; /* w*h: -scale * pc, the factor the preconditioner's sweeps multiply by */
} cg_work;

typedef struct cg_stats {
	int iters;    /* iterations run */
	double resid; /* final ||r|| / ||b|| (0 when b = 0) */
	double rnorm; /* final ||r|| */
	int ok;       /* 1 if the tolerance was reached */
} cg_stats;

/* Number of row blocks (and of partial sums) for a rectangle h rows high. */
static inline int cg_blocks(int h) { return (h + CG_BLOCK_ROWS - 1) / CG_BLOCK_ROWS; }

/* y = (scale * L + shift * I + D) x on masked cells, 0 elsewhere (x must be 0 off the mask). */
void cg_apply(const cg_problem *pb, const double *x, double *y);

/* Runs CG, preconditioned with a modified incomplete Cholesky factorisation (MIC(0)),
 * until ||r|| <= max(tol * ||b||, abs_tol) or max_iters iterations. b is read on masked
 * cells only. parallel != 0 spreads row blocks over the OpenMP threads (worth it for
 * large rectangles); the result is bit-identical either way. */
cg_stats cg_solve(const cg_problem *pb, const double *b, double *x, const cg_work *wk,
		  double tol, double abs_tol, int max_iters, int parallel);

#endif
