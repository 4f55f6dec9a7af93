/*
 * seed_render.c - plain port of seed 000's RenderRipple(): each interior pixel copies
 * the background pixel at (x + xoff/10, y + yoff/10) where xoff = h[x+1] - h[x-1] and
 * yoff = h[y-1] - h[y+1] (integer heights); out-of-range samples are skipped. The
 * benchmark baseline for the colour renderer.
 */
#include "reference/reference_render.h"

void ref_seed_render(const int32_t *h, const uint8_t *bg, uint8_t *out, int W, int H)
{
	for (int y = 1; y < H - 1; y++) {
		for (int x = 1; x < W - 1; x++) {
			int xoff = h[y * W + x + 1] - h[y * W + x - 1];
			int yoff = h[(y - 1) * W + x] - h[(y + 1) * W + x];
			int nx = x + xoff / 10;
			int ny = y + yoff / 10;
			if (nx >= W || nx < 0 || ny >= H || ny < 0)
				continue;
			for (int k = 0; k < 3; k++)
				out[(y * W + x) * 3 + k] = bg[(ny * W + nx) * 3 + k];
		}
	}
}
