/*
 * refract_avx2.c - the colour pass's kernels (refract_dsp.h) for AVX2 (TP_CPU_FLAG_AVX2):
 * pass 1 vectorised by the compiler, pass 2 in intrinsics. The Makefile compiles this
 * file with -mavx2; refract_dsp_init() picks it only on a CPU that has AVX2.
 */
#ifdef __x86_64__
#include <immintrin.h>

#include "render/refract_dsp.h"

void refract_geometry_wrap_i32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t)
{
	row_geometry(r, 1, 1, p, y, xs, n, t);
}

void refract_geometry_wrap_f32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				    int n, row_taps t)
{
	row_geometry(r, 0, 1, p, y, xs, n, t);
}

void refract_geometry_clamp_i32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				     int n, row_taps t)
{
	row_geometry(r, 1, 0, p, y, xs, n, t);
}

void refract_geometry_clamp_f32_avx2(const void *const r[5], const color_par *p, int y, int xs,
				     int n, row_taps t)
{
	row_geometry(r, 0, 0, p, y, xs, n, t);
}

void refract_offsets_i32_avx2(const void *const r[5], int wrap, int w, int xs, int n, float R,
			      float *ox, float *oy)
{
	offsets_body(r, 1, wrap, w, xs, n, R, ox, oy);
}

void refract_offsets_f32_avx2(const void *const r[5], int wrap, int w, int xs, int n, float R,
			      float *ox, float *oy)
{
	offsets_body(r, 0, wrap, w, xs, n, R, ox, oy);
}

/* AVX2 (no VNNI): four pixels at a time; pmaddubsw then pmaddwd with ones sum the four
 * products exactly (each pair is at most 255 * 64 * 2, well inside 16 bits). */
void refract_shade_avx2(const uint8_t *bgx, int32_t bs, const int32_t *off, const int32_t *wq,
			const int32_t *lift, int w, uint8_t *o)
{
	const __m256i order =
		_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)TAP_ORDER));
	const __m256i ones = _mm256_set1_epi16(1), r32 = _mm256_set1_epi32(32);
	const __m256i idx_w = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
	const __m256i idx_w2 = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
	/* rgbx rgbx (two pixels' words packed to bytes) -> rgb rgb */
	const __m256i rgb =
		_mm256_setr_epi8(0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2,
				 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	int x = 0;
	for (; x + 4 <= w; x += 4) {
		const uint8_t *pa = bgx + off[x], *pb = bgx + off[x + 1];
		const uint8_t *pc = bgx + off[x + 2], *pd = bgx + off[x + 3];
		/* lane 0: pixel A's top | bottom pair, pixel B's in lane 1; C and D likewise */
		__m256i ab = _mm256_setr_m128i(
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pa),
					   _mm_loadl_epi64((const __m128i *)(pa + bs))),
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pb),
					   _mm_loadl_epi64((const __m128i *)(pb + bs))));
		__m256i cd = _mm256_setr_m128i(
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pc),
					   _mm_loadl_epi64((const __m128i *)(pc + bs))),
			_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)pd),
					   _mm_loadl_epi64((const __m128i *)(pd + bs))));
		const __m256i w4 =
			_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(wq + x)));
		__m256i s_ab = _mm256_maddubs_epi16(_mm256_shuffle_epi8(ab, order),
						    _mm256_permutevar8x32_epi32(w4, idx_w));
		__m256i s_cd = _mm256_maddubs_epi16(_mm256_shuffle_epi8(cd, order),
						    _mm256_permutevar8x32_epi32(w4, idx_w2));
		s_ab = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(s_ab, ones), r32), 6);
		s_cd = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(s_cd, ones), r32), 6);
		/* words per lane: A rgbx C rgbx | B rgbx D rgbx */
		__m256i c = _mm256_packus_epi32(s_ab, s_cd);
		const __m256i l4 =
			_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(lift + x)));
		/* lift words in the same order: A A C C | B B D D */
		c = _mm256_adds_epi16(c, _mm256_permutevar8x32_epi32(
						 l4, _mm256_setr_epi32(0, 0, 2, 2, 1, 1, 3, 3)));
		c = _mm256_shuffle_epi8(_mm256_packus_epi16(c, c), rgb);
		/* lane 0: A rgb C rgb, lane 1: B rgb D rgb */
		const __m128i lo = _mm256_castsi256_si128(c), hi = _mm256_extracti128_si256(c, 1);
		uint8_t tmp[32];
		_mm_storeu_si128((__m128i *)tmp, lo);
		_mm_storeu_si128((__m128i *)(tmp + 16), hi);
		memcpy(o + 3 * x, tmp, 3);          /* A */
		memcpy(o + 3 * x + 3, tmp + 16, 3); /* B */
		memcpy(o + 3 * x + 6, tmp + 3, 3);  /* C */
		memcpy(o + 3 * x + 9, tmp + 19, 3); /* D */
	}
	/* the last pixels (fewer than 4) by the C kernel, a call as it always was: inlined
	 * here, it cost the loop above 2% more instructions */
	refract_shade_c(bgx, bs, off + x, wq + x, lift + x, w - x, o + 3 * x);
}

#endif
