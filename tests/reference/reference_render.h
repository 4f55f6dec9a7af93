/* reference_render.h - the seed renderer port used as the renderer's benchmark baseline. */
#ifndef TP_REFERENCE_RENDER_H
#define TP_REFERENCE_RENDER_H

#include <stdint.h>

/* Seed 000 RenderRipple(): W x H int heights, RGB8 background and output (packed rows). */
void ref_seed_render(const int32_t *h, const uint8_t *bg, uint8_t *out, int W, int H);

#endif
