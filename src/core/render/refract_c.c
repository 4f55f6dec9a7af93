/*
 * refract_c.c - the colour pass's kernels (refract_dsp.h) in plain C: the Makefile compiles
 * this file with -fno-tree-vectorize, so these are the reference every vector variant is
 * compared against (TP_CPU_FLAG_SIMD cleared: tp_cpu_force_flags(0)).
 */
#include "render/refract_dsp.h"

void refract_geometry_wrap_i32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				 row_taps t)
{
	row_geometry(r, 1, 1, p, y, xs, n, t);
}

void refract_geometry_wrap_f32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				 row_taps t)
{
	row_geometry(r, 0, 1, p, y, xs, n, t);
}

void refract_geometry_clamp_i32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				  row_taps t)
{
	row_geometry(r, 1, 0, p, y, xs, n, t);
}

void refract_geometry_clamp_f32_c(const void *const r[5], const color_par *p, int y, int xs, int n,
				  row_taps t)
{
	row_geometry(r, 0, 0, p, y, xs, n, t);
}

void refract_offsets_i32_c(const void *const r[5], int wrap, int w, int xs, int n, float R,
			   float *ox, float *oy)
{
	offsets_body(r, 1, wrap, w, xs, n, R, ox, oy);
}

void refract_offsets_f32_c(const void *const r[5], int wrap, int w, int xs, int n, float R,
			   float *ox, float *oy)
{
	offsets_body(r, 0, wrap, w, xs, n, R, ox, oy);
}

void refract_shade_c(const uint8_t *bgx, int32_t bs, const int32_t *off, const int32_t *wq,
		     const int32_t *lift, int n, uint8_t *o)
{
	for (int x = 0; x < n; x++)
		shade_pixel(bgx + off[x], bs, wq[x], lift[x], o + 3 * x);
}
