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
 * With `padding` P each cell's slot is P pixels larger on every side: the frame fills the
 * middle and the border repeats it, from the frame's own wrap when the maps tile (`wrap`:
 * the pixel P to the left of column 0 is column w - P) and by extending its edge pixels
 * otherwise, so bilinear and mip sampling in an engine never reach a neighbouring frame.
 *
 * With `pot` the atlas is rounded up to powers of two and the slots grow to
 * floor(atlas / cols) x floor(atlas / rows), the cells to that less 2P (exact for
 * power-of-two grids; otherwise the few leftover pixels at the right and bottom stay
 * black).
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
#define FLIPBOOK_MAX_PADDING 256                    /* pixels around each cell */

typedef struct enc_flipbook {
	int cols, rows;
	int cell_w, cell_h; /* before pot rounding */
	int pot;
	int renormalize;
	int padding; /* pixels around each cell (--flipbook-padding) */
	int wrap;    /* 1: the frames tile: padding from their own wrap, else their edges */
} enc_flipbook;

/* The atlas size and final cell size for a layout (after pot rounding; the cell without
 * its padding: each slot is cell + 2 * padding). */
void enc_flipbook_size(const enc_flipbook *fb, int *atlas_w, int *atlas_h, int *cell_w, int *cell_h);

#endif
