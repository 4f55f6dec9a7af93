/*
 * render_impl.h - what the render modes share inside src/core/render/ (not a public API).
 *
 * render.c converts the surface to float heights (height units) once per frame and
 * dispatches to one mode function. Mode functions read `in` and write `out`; they may use
 * in->scratch (w*h*4 floats owned by the context) and must not allocate.
 */
#ifndef TP_RENDER_IMPL_H
#define TP_RENDER_IMPL_H

#include "render/render.h"
#include "util/mathf.h"

typedef struct render_in {
	const scene *sc;
	const tp_surface *surf;
	const float *height; /* w*h heights in height units, row-major; NULL for fluid surfaces */
	int w, h;
	int wrap;           /* sample periodically (boundary "wrap") */
	const tp_image *bg; /* background, TP_RGB8, w x h */
	float *scratch;     /* w*h*4 floats */
	/* The surface padded by one ghost cell on every side ((w+2) x (h+2), row stride
	 * w+2; ghosts copy the edge, or the opposite edge with wrap), so kernels read
	 * neighbours without branches. NULL for fluid surfaces. */
	const float *hpad;
	/* The background as RGBX with one extra column and row (clamped or wrapped), so a
	 * bilinear tap at (x0+1, y0+1) never needs a bounds check. Row stride (w+1)*4. */
	const uint8_t *bgx;
	/* For anti-aliasing: per background cell (w x h), the Chebyshev distance (capped at
	 * 255) to the nearest cell whose bilinear taps are not all one colour; NULL with wrap
	 * (render_aa_plan). */
	const uint8_t *bgflat;
	/* For anti-aliasing by the footprint: the background's summed-area table
	 * (render_aa_sat), row stride bgsat_stride entries; NULL: supersampling. */
	const uint32_t *bgsat;
	int bgsat_stride;
	scene_mode mode; /* the mode of this output (a scene may have several outputs) */
	/* Output pixels per scene unit (scene_scale): slopes per pixel are 1/px of the same
	 * slopes per scene unit, and pixel-sized constants (edges, bevels, walls) grow by it,
	 * so every render size shows the same picture. 1 at the scene's own size. */
	double px;
	double height_scale; /* height maps: levels per height unit if > 0 (auto-levelling) */
	/* render_frame_side(): a serial job the colour pass runs on one of its threads while
	 * the others draw rows (NULL: none) */
	void (*side)(void *);
	void *side_arg;
	/* The picture of still water in the output's format (TP_RGB8 or TP_YUV420), or NULL:
	 * with surf->spans, pixels that see only level water are copied from it. */
	const tp_image *flat;
	/* The render context's kernels for the CPU flags it read when it was created
	 * (util/cpu.h): the colour pass's (refract_dsp.h) and the RGB to 4:2:0 conversion. */
	const struct refract_dsp *refract;
	tp_yuv420_rows_fn yuv_rows;
	render_checks checks; /* the test switches, also read once at creation (render.h) */
} render_in;

/* refract.c: seeds 000/001 refraction + reflection, tint and specular (TP_RGB8). */
void render_color(const render_in *in, tp_image *out);
/* The same picture straight into TP_YUV420 (in->yuv_rows on each pair of rows as
 * it is drawn, so the bytes equal converting render_color's); rgb_rows holds two rows of
 * 64-byte-aligned 3w bytes per OpenMP thread. */
void render_color_yuv(const render_in *in, uint8_t *rgb_rows, tp_image *out);
/* The picture of still water (surf's samples all 0, spans ignored) as TP_RGB8: what
 * render_color draws wherever the surface is level around a pixel. -1: out of memory. */
int render_color_flat(const render_in *in, tp_image *out);
/* refract_aa.c: the background lookup supersampled where the refraction offset varies
 * within a pixel (the equations are at the top of refract_aa.c). refract.c gives it the
 * offsets o = R * slope in pixels of rows y-1, y, y+1, columns xs-1 .. xs+n (entry i is
 * column xs-1+i; row[r][0] x, row[r][1] y, before wrap's clamp to one frame). */
typedef struct render_aa_offsets {
	const float *row[3][2];
} render_aa_offsets;
typedef struct render_aa {
	int w, hgt, wrap;
	int32_t bs;         /* background row stride, bytes */
	const uint8_t *bgx; /* render_in.bgx */
	int vec;            /* lookups 16 pixels at a time (2, AVX-512), 8 (1, AVX2), or one (0) */
	const uint8_t *flat; /* render_in.bgflat, or NULL */
	const uint32_t *sat; /* render_in.bgsat: footprint boxes instead of N x N lookups */
	int ss;              /* its row stride, entries */
	render_checks checks; /* render_in.checks */
} render_aa;
static inline float render_aa_absf(float v)
{
	return v < 0 ? -v : v;
}
/* The offsets of the same three rows from entry `by` on (column xs - 1 + by first). */
static inline render_aa_offsets render_aa_offsets_from(const render_aa_offsets *o, int by)
{
	render_aa_offsets f = *o;
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 2; k++)
			f.row[r][k] += by;
	return f;
}
/* [*lo, *hi): from the first nonzero entry of m[0..n) to the last (empty if none). */
static inline void render_aa_steep_span(const uint8_t *m, int n, int *lo, int *hi)
{
	int a = 0, b = n;
	while (a < b && !m[a])
		a++;
	while (b > a && !m[b - 1])
		b--;
	*lo = a;
	*hi = b;
}
/* The offset component k at (x + u, y + v), |u|, |v| <= 1/2, bilinear between the centre
 * entry c of the middle row and its neighbours on the side of u and of v. */
static inline float render_aa_offset_at(const render_aa_offsets *o, int k, int c, float u, float v)
{
	const int cx = u < 0 ? c - 1 : c + 1, ry = v < 0 ? 0 : 2;
	const float wu = render_aa_absf(u), wv = render_aa_absf(v);
	const float *m = o->row[1][k], *e = o->row[ry][k];
	const float top = (1.0f - wu) * m[c] + wu * m[cx];
	const float bot = (1.0f - wu) * e[c] + wu * e[cx];
	return (1.0f - wv) * top + wv * bot;
}
/* highlight.c: the colour pass's highlight constants (refract.c's color_par, for the
 * slopes in its stored units: the offset is R times the slope). */
typedef struct render_hl {
	float R, spec, g0, g1, h2, ng2;
	render_checks checks; /* render_in.checks */
} render_hl;
/* The lifts of the steep pixels (steep[i], their N before render_aa_flat) with the
 * highlight averaged over 2 x 2 subsamples (N x N with a forced count, checks.aa_force);
 * a pixel whose lift changes and whose
 * nsub is 0 gets nsub 1 (drawn again). Returns how many got it. */
int render_aa_highlight(const render_hl *p, int n, const render_aa_offsets *o, const uint8_t *steep,
			uint8_t *nsub, int32_t *lift);
/* The subsamples per axis of columns xs .. xs+n-1 (n <= 256) into nsub (0: refract.c's
 * one lookup stands); returns how many are not 0. */
int render_aa_plan(const render_aa *a, int n, const render_aa_offsets *o, uint8_t *nsub);
/* Then clears nsub of the pixels of row y, columns xs .. xs+n-1, whose lookups all land
 * in one flat colour of the background (a->flat): the N x N average is then the one
 * lookup, so the bytes are the same. Returns how many are left. */
int render_aa_flat(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
		   uint8_t *nsub);
/* The distance map of render_in.bgflat for the (w+1) x (h+1) RGBX background bgx.
 * Returns how many cells are far enough from an edge (4 cells or more) for the check to
 * skip a steep pixel there. */
size_t render_aa_flat_map(const uint8_t *bgx, int w, int h, uint8_t *out);
/* Redraws the pixels of row y whose nsub is not 0 into `row` (the row's 3w bytes), with
 * refract.c's lifts of columns xs .. xs+n-1. */
void render_aa_shade(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
		     const uint8_t *nsub, const int32_t *lift, uint8_t *row);
/* footprint.c: a box of the background's summed-area table instead of N x N lookups
 * (the equations are at the top of footprint.c). FP_CAP: the widest box, pixels. */
#define FP_CAP 16
/* The table of the (w+1) x (h+1) RGBX background bgx, row stride *stride entries
 * (malloc'd; NULL: out of memory). */
uint32_t *render_aa_sat(const uint8_t *bgx, int w, int h, int wrap, int *stride);
/* render_aa_shade's job by footprint boxes (a->sat). */
void render_aa_footprint(const render_aa *a, int y, int xs, int n, const render_aa_offsets *o,
			 const uint8_t *nsub, const int32_t *lift, uint8_t *out);
/* background.c: the background at w x h as TP_RGB8 (pattern, or the scene's image
 * tiled/scaled to cover). Without TP_CPU_FLAG_SIMD in cpu_flags (util/cpu.h) patterns are
 * drawn a pixel at a time (the reference the row-at-a-time code is tested against). */
int render_background(const scene *sc, int w, int h, unsigned cpu_flags, tp_image *out,
		      tp_err *err);
/* boxes.c: draws boxes (solid, lit blocks, optional shadow) over a TP_RGB8 frame. */
void render_boxes(const render_in *in, tp_image *out);
/* fluid.c: the sph fluid surface over the background, tank and obstacles (TP_RGB8). */
void render_fluid(const render_in *in, tp_image *out);
/* maps.c: texture maps. */
long render_height_map(const render_in *in, tp_image *out);
void render_normal_map(const render_in *in, tp_image *out);
void render_caustics(const render_in *in, tp_image *out);
/* ocean.c: choppy-wave maps (and their float forms, TP_*F32, in physical units). */
void render_displacement_map(const render_in *in, tp_image *out);
void render_foam_map(const render_in *in, tp_image *out);
void render_velocity_map(const render_in *in, tp_image *out);

#ifdef __x86_64__
#include <immintrin.h>

/* The 64-bit words at base + off[i], i = 0..7, by plain loads put together in registers
 * (the colour pass's taps, refract.c, and the anti-aliasing's, refract_aa.c): vpgatherdq
 * is microcoded on CPUs that mitigate Gather Data Sampling. */
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vnni"))) __m512i
gather8(const uint8_t *base, __m256i off)
{
	const __m128i lo = _mm256_castsi256_si128(off), hi = _mm256_extracti128_si256(off, 1);
	const int32_t o0 = _mm_cvtsi128_si32(lo), o1 = _mm_extract_epi32(lo, 1),
		      o2 = _mm_extract_epi32(lo, 2), o3 = _mm_extract_epi32(lo, 3),
		      o4 = _mm_cvtsi128_si32(hi), o5 = _mm_extract_epi32(hi, 1),
		      o6 = _mm_extract_epi32(hi, 2), o7 = _mm_extract_epi32(hi, 3);
#define LD(o) _mm_loadl_epi64((const __m128i *)(base + (o)))
	const __m256i a = _mm256_setr_m128i(_mm_unpacklo_epi64(LD(o0), LD(o1)),
					    _mm_unpacklo_epi64(LD(o2), LD(o3)));
	const __m256i b = _mm256_setr_m128i(_mm_unpacklo_epi64(LD(o4), LD(o5)),
					    _mm_unpacklo_epi64(LD(o6), LD(o7)));
#undef LD
	return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}
#endif

#endif
