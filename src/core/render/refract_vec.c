/*
 * refract_vec.c - the colour pass's pass 1 (refract_dsp.h) vectorised by the compiler for
 * the build's baseline ISA (SSE2 on x86-64; TP_CPU_FLAG_SIMD).
 */
#include "render/refract_dsp.h"

void refract_geometry_wrap_i32_vec(const void *const r[5], const color_par *p, int y, int xs, int n,
				   row_taps t)
{
	row_geometry(r, 1, 1, p, y, xs, n, t);
}

void refract_geometry_wrap_f32_vec(const void *const r[5], const color_par *p, int y, int xs, int n,
				   row_taps t)
{
	row_geometry(r, 0, 1, p, y, xs, n, t);
}

void refract_geometry_clamp_i32_vec(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t)
{
	row_geometry(r, 1, 0, p, y, xs, n, t);
}

void refract_geometry_clamp_f32_vec(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t)
{
	row_geometry(r, 0, 0, p, y, xs, n, t);
}

void refract_offsets_i32_vec(const void *const r[5], int wrap, int w, int xs, int n, float R,
			     float *ox, float *oy)
{
	offsets_body(r, 1, wrap, w, xs, n, R, ox, oy);
}

void refract_offsets_f32_vec(const void *const r[5], int wrap, int w, int xs, int n, float R,
			     float *ox, float *oy)
{
	offsets_body(r, 0, wrap, w, xs, n, R, ox, oy);
}
