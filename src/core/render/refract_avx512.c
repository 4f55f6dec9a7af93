/*
 * refract_avx512.c - the colour pass's pass 1 (refract_dsp.h) vectorised by the compiler
 * for AVX-512 F, CD, BW, DQ and VL (x86-64-v4), beside the fused kernel of
 * refract_avx512vnni.c: refract_aa.c's redraws and offsets. The Makefile compiles this file
 * with -march=x86-64-v4; refract_dsp_init() picks it only with the fused kernel, on a CPU
 * that has AVX-512 and VNNI.
 */
#ifdef __x86_64__
#include <immintrin.h>

#include "render/refract_dsp.h"

void refract_geometry_wrap_i32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				      int n, row_taps t)
{
	row_geometry(r, 1, 1, p, y, xs, n, t);
}

void refract_geometry_wrap_f32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				      int n, row_taps t)
{
	row_geometry(r, 0, 1, p, y, xs, n, t);
}

void refract_geometry_clamp_i32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				       int n, row_taps t)
{
	row_geometry(r, 1, 0, p, y, xs, n, t);
}

void refract_geometry_clamp_f32_avx512(const void *const r[5], const color_par *p, int y, int xs,
				       int n, row_taps t)
{
	row_geometry(r, 0, 0, p, y, xs, n, t);
}

void refract_offsets_i32_avx512(const void *const r[5], int wrap, int w, int xs, int n, float R,
				float *ox, float *oy)
{
	offsets_body(r, 1, wrap, w, xs, n, R, ox, oy);
}

void refract_offsets_f32_avx512(const void *const r[5], int wrap, int w, int xs, int n, float R,
				float *ox, float *oy)
{
	offsets_body(r, 0, wrap, w, xs, n, R, ox, oy);
}
#endif
