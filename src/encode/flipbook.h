/*
 * flipbook.h - the flipbook encoder's layout: frames collected into one atlas PNG.
 *
 * The atlas has `cols` x `rows` cells of cell_w x cell_h pixels, filled left to right,
 * then top to bottom (cell 0 top left): the order of Unity's texture-sheet animation and
 * Unreal's SubUV. With N cells and F >= N frames, cell i shows frame floor(i * F / N), so
 * a loop of F = N, 2N, ... frames stays a loop. Frames are resampled to the cell size by
 * area averaging (exact copies when the sizes match), which keeps a tileable frame
 * tileable; with `renormalize` (normal maps) each averaged pixel is decoded as
 * n * 0.5 + 0.5, normalised and encoded again.
 *
 * With `pot` the atlas is rounded up to powers of two and the cells grow to
 * floor(atlas / cols) x floor(atlas / rows) (exact for power-of-two grids; otherwise the
 * few leftover pixels at the right and bottom stay black).
 *
 * The encoder is never picked by file name: the render command chooses it for
 * single-file .png outputs when a flipbook is asked for, and passes this layout in
 * enc_config.flipbook. The atlas is written (atomically) when the render completes; an
 * interrupted or failed render leaves nothing.
 */
#ifndef TP_ENCODE_FLIPBOOK_H
#define TP_ENCODE_FLIPBOOK_H

#include "encode/encoder.h"

#define FLIPBOOK_MAX_SIDE 16384                 /* pixels per atlas side */
#define FLIPBOOK_MAX_BYTES (1024.0 * 1024 * 1024) /* atlas memory */

typedef struct enc_flipbook {
	int cols, rows;
	int cell_w, cell_h; /* before pot rounding */
	int pot;
	int renormalize;
} enc_flipbook;

/* The atlas size and final cell size for a layout (after pot rounding). */
void enc_flipbook_size(const enc_flipbook *fb, int *atlas_w, int *atlas_h, int *cell_w, int *cell_h);

#endif
