/*
 * refract_avx512vnni.c - the colour pass's passes 0, 1 and 2 fused in registers, 16
 * pixels at a time (color_row), for AVX-512 F, BW, DQ and VL with VNNI
 * (TP_CPU_FLAG_AVX512 and TP_CPU_FLAG_AVX512VNNI). The Makefile compiles this file with
 * -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni; refract_dsp_init() picks it
 * only on a CPU that has them.
 */
#ifdef __x86_64__
#include <immintrin.h>

#include "render/refract_dsp.h"
#include "render/render_impl.h"

/* The packed weights of row_geometry for ax | ay << 3 (64 entries). */
#define WQ_ENTRY(a, b)                                                                             \
	((int32_t)((8 - (a)) * (8 - (b)) | (8 - (a)) * (b) << 8 | (a) * (8 - (b)) << 16 |          \
		   (a) * (b) << 24))
#define WQ_ROW(b)                                                                                  \
	WQ_ENTRY(0, b), WQ_ENTRY(1, b), WQ_ENTRY(2, b), WQ_ENTRY(3, b), WQ_ENTRY(4, b),            \
		WQ_ENTRY(5, b), WQ_ENTRY(6, b), WQ_ENTRY(7, b)
static const int32_t WQ[64] __attribute__((aligned(64))) = {
	WQ_ROW(0), WQ_ROW(1), WQ_ROW(2), WQ_ROW(3), WQ_ROW(4), WQ_ROW(5), WQ_ROW(6), WQ_ROW(7)};
/* Lane k of a packed vector holds "A rgbx B rgbx" in bytes 16k .. 16k+7: the r g b of both,
 * four lanes, in 24 bytes. */
/* The 24 output bytes of eight pixels from four 128-bit lanes of "A rgbx B rgbx" bytes,
 * without VBMI's byte permute across lanes (many AVX-512 CPUs lack it: the fused kernel
 * ran only on those that have it): a byte shuffle inside each lane puts the lane's 6
 * bytes at its bytes 0-5 (lanes 0 and 2, output bytes 0-5 and 12-17) or 2-7 (lanes 1 and
 * 3, output bytes 6-11 and 18-23), so that each output dword is one lane's dword or, for
 * output dwords 1 and 4, two lanes' dwords ORed: two dword permutes and an OR. */
#define Z -1
static const int8_t PACK24_LANE[64] __attribute__((aligned(64))) = {
	0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 0 */
	Z, Z, 0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 1 */
	0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 2 */
	Z, Z, 0, 1, 2, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, /* lane 3 */
};
#undef Z

/* Eight pixels (AVX-512 VNNI): gather8 fetches the top and bottom pairs, vpdpbusd
 * weighs each channel's four taps, and a byte shuffle and two dword permutes compact the
 * 24 output bytes (PACK24_LANE) into a masked store, so nothing spills past the run.
 * `half` picks pixels 0-7 or 8-15 of the 16-lane weight and lift vectors. */
static inline __attribute__((always_inline)) void shade8(const uint8_t *bgx, int32_t bs,
							 __m256i off, __m512i wq, __m512i lift,
							 const int half, __mmask64 store,
							 uint8_t *o)
{
	const __m512i order = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)TAP_ORDER));
	const __m512i r32 = _mm512_set1_epi32(32);
	const int h8 = half ? 8 : 0;
	const __m512i idx_a =
		_mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6),
				 _mm512_set1_epi32(h8));
	const __m512i idx_b =
		_mm512_add_epi32(_mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7),
				 _mm512_set1_epi32(h8));
	const __m512i idx_l =
		_mm512_add_epi32(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
				 _mm512_set1_epi32(h8));
	/* lane k of top: pixels 2k and 2k+1's top pairs; of bot: their bottom pairs (by
	 * plain loads, gather8: the gathers took half of a storm's colour pass here) */
	const __m512i top = gather8(bgx, off), bot = gather8(bgx + bs, off);
	const __m512i pa = _mm512_shuffle_epi8(_mm512_unpacklo_epi64(top, bot), order);
	const __m512i pb = _mm512_shuffle_epi8(_mm512_unpackhi_epi64(top, bot), order);
	__m512i c_a = _mm512_dpbusd_epi32(r32, pa, _mm512_permutexvar_epi32(idx_a, wq));
	__m512i c_b = _mm512_dpbusd_epi32(r32, pb, _mm512_permutexvar_epi32(idx_b, wq));
	c_a = _mm512_srli_epi32(c_a, 6);
	c_b = _mm512_srli_epi32(c_b, 6);
	/* words per lane: A rgbx B rgbx */
	__m512i c = _mm512_packus_epi32(c_a, c_b);
	c = _mm512_adds_epi16(c, _mm512_permutexvar_epi32(idx_l, lift));
	c = _mm512_shuffle_epi8(_mm512_packus_epi16(c, c), _mm512_load_si512(PACK24_LANE));
	c = _mm512_or_si512(
		_mm512_permutexvar_epi32(
			_mm512_setr_epi32(0, 1, 5, 8, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), c),
		_mm512_maskz_permutexvar_epi32(
			(__mmask16)0x12,
			_mm512_setr_epi32(0, 4, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), c));
	_mm512_mask_storeu_epi8(o, store, c);
}

/* column_sums for the 16 columns from x; lanes outside `m` read nothing (and are zero). */
static inline __attribute__((always_inline)) void
sums16(const void *const r[5], ptrdiff_t x, __mmask16 m, const int is_int, __m512 *v, __m512 *d2)
{
	if (is_int) {
		__m512i s[5];
		for (int k = 0; k < 5; k++)
			s[k] = _mm512_maskz_loadu_epi32(m, (const int32_t *)r[k] + x);
		*v = _mm512_cvtepi32_ps(
			_mm512_add_epi32(_mm512_add_epi32(s[1], _mm512_slli_epi32(s[2], 1)), s[3]));
		*d2 = _mm512_cvtepi32_ps(
			_mm512_add_epi32(_mm512_slli_epi32(_mm512_sub_epi32(s[3], s[1]), 1),
					 _mm512_sub_epi32(s[4], s[0])));
		return;
	}
	__m512 s[5];
	for (int k = 0; k < 5; k++)
		s[k] = _mm512_maskz_loadu_ps(m, (const float *)r[k] + x);
	const __m512 two = _mm512_set1_ps(2.0f);
	*v = _mm512_add_ps(_mm512_add_ps(s[1], _mm512_mul_ps(two, s[2])), s[3]);
	*d2 = _mm512_add_ps(_mm512_mul_ps(two, _mm512_sub_ps(s[3], s[1])),
			    _mm512_sub_ps(s[4], s[0]));
}

/* Passes 0, 1 and 2 fused for the 16 pixels from column x, every intermediate in
 * registers: row_geometry's IEEE operations in the same order (max/min are clampf's
 * NaN-to-bound selects, cvtt is C's truncation), then shade8. v[k] are the column sums v
 * at x + k - 2, e[k] the sums d2 at x + k - 1. */
static inline __attribute__((always_inline)) void
color16(int x, int y, const int wrap, const color_par *p, const uint8_t *bgx, uint8_t *o,
	int32_t *lift, const __m512 v[5], const __m512 e[3], int n)
{
	const __m512 two = _mm512_set1_ps(2.0f);
	const __m512 dx = _mm512_add_ps(_mm512_sub_ps(v[4], v[0]),
					_mm512_mul_ps(two, _mm512_sub_ps(v[3], v[1])));
	const __m512 dy = _mm512_add_ps(_mm512_add_ps(e[0], e[2]), _mm512_mul_ps(two, e[1]));
	const __m512 hs = _mm512_add_ps(_mm512_add_ps(v[1], v[3]), _mm512_mul_ps(two, v[2]));
	const __m512 R = _mm512_set1_ps(p->R);
	const __m512 ox = _mm512_mul_ps(R, dx), oy = _mm512_mul_ps(R, dy);
	const __m512 fw = _mm512_set1_ps((float)p->w), fh = _mm512_set1_ps((float)p->hgt);
	const __m512 xf = _mm512_cvtepi32_ps(_mm512_add_epi32(
		_mm512_set1_epi32(x),
		_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)));
	const __m512 yf = _mm512_set1_ps((float)y);
	__m512 sx, sy;
	if (wrap) {
		const __m512 nfw = _mm512_set1_ps(-(float)p->w),
			     nfh = _mm512_set1_ps(-(float)p->hgt);
		sx = _mm512_add_ps(_mm512_add_ps(xf, _mm512_min_ps(_mm512_max_ps(ox, nfw), fw)),
				   fw);
		sy = _mm512_add_ps(_mm512_add_ps(yf, _mm512_min_ps(_mm512_max_ps(oy, nfh), fh)),
				   fh);
	} else {
		const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
		sx = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(xf, ox), zero),
				   _mm512_sub_ps(fw, one));
		sy = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(yf, oy), zero),
				   _mm512_sub_ps(fh, one));
	}
	const __m512 k8 = _mm512_set1_ps(8.0f), half = _mm512_set1_ps(0.5f);
	const __m512i qx = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sx, k8), half));
	const __m512i qy = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(sy, k8), half));
	__m512i x0 = _mm512_srai_epi32(qx, 3), y0 = _mm512_srai_epi32(qy, 3);
	/* the weights from the 64-entry table WQ by ax | ay << 3: two two-register permutes
	 * (entries 0-31 and 32-63) and a blend on bit 5 */
	const __m512i seven = _mm512_set1_epi32(7);
	const __m512i wi = _mm512_or_si512(_mm512_and_si512(qx, seven),
					   _mm512_slli_epi32(_mm512_and_si512(qy, seven), 3));
	const __m512i wlo =
		_mm512_permutex2var_epi32(_mm512_loadu_si512(WQ), wi, _mm512_loadu_si512(WQ + 16));
	const __m512i whi = _mm512_permutex2var_epi32(_mm512_loadu_si512(WQ + 32), wi,
						      _mm512_loadu_si512(WQ + 48));
	const __m512i wq = _mm512_mask_blend_epi32(
		_mm512_test_epi32_mask(wi, _mm512_set1_epi32(32)), wlo, whi);
	if (wrap) {
		const __m512i wv = _mm512_set1_epi32(p->w), hv = _mm512_set1_epi32(p->hgt);
		for (int k = 0; k < 2; k++) {
			x0 = _mm512_mask_sub_epi32(x0, _mm512_cmpge_epi32_mask(x0, wv), x0, wv);
			y0 = _mm512_mask_sub_epi32(y0, _mm512_cmpge_epi32_mask(y0, hv), y0, hv);
		}
	}
	__m512i off = _mm512_add_epi32(_mm512_mullo_epi32(y0, _mm512_set1_epi32(p->bs)),
				       _mm512_slli_epi32(x0, 2));
	/* the highlight and the lift */
	const __m512 d = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(dx, _mm512_set1_ps(p->g[0])),
						     _mm512_mul_ps(dy, _mm512_set1_ps(p->g[1]))),
				       _mm512_set1_ps(p->g[2]));
	const __m512 den = _mm512_add_ps(
		_mm512_mul_ps(_mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)),
			      _mm512_set1_ps(p->ng2)),
		_mm512_set1_ps(1.0f));
	/* recip1 */
	const __m512 two2 = _mm512_set1_ps(2.0f);
	__m512 rcp = _mm512_castsi512_ps(
		_mm512_sub_epi32(_mm512_set1_epi32(0x7ef311c3), _mm512_castps_si512(den)));
	rcp = _mm512_mul_ps(rcp, _mm512_sub_ps(two2, _mm512_mul_ps(den, rcp)));
	rcp = _mm512_mul_ps(rcp, _mm512_sub_ps(two2, _mm512_mul_ps(den, rcp)));
	const __m512 q = _mm512_mul_ps(_mm512_mul_ps(d, d), rcp);
	__m512 sp = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_GT_OQ),
					_mm512_max_ps(q, _mm512_set1_ps(0.125f)));
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	sp = _mm512_mul_ps(sp, sp);
	__m512 l = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(p->B), hs),
				 _mm512_mul_ps(_mm512_set1_ps(p->spec), sp));
	l = _mm512_min_ps(_mm512_max_ps(l, _mm512_set1_ps(-1024.0f)), _mm512_set1_ps(1024.0f));
	/* the low 16 bits in both halves, as C's (lq & 0xffff) | lq << 16 */
	const __m512i lq =
		_mm512_shuffle_epi8(_mm512_cvtps_epi32(l), /* to nearest, as lrintf */
				    _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8,
									 9, 8, 9, 12, 13, 12, 13)));
	if (lift) /* kept for the anti-aliasing, as color_row_rgb_noaa's unfused loop keeps them */
		_mm512_mask_storeu_epi32(lift + x, (__mmask16)((1u << n) - 1), lq);
	/* the first n pixels' 3 bytes each; the lanes past them read the frame's first taps
	 * (their positions, past the row's end, may fold to beyond the background) */
	const int n0 = n < 8 ? n : 8, n1 = n > 8 ? n - 8 : 0;
	if (n < 16)
		off = _mm512_maskz_mov_epi32((__mmask16)((1u << n) - 1), off);
	shade8(bgx, p->bs, _mm512_castsi512_si256(off), wq, lq, 0,
	       (__mmask64)((1ull << 3 * n0) - 1), o + 3 * x);
	if (n1)
		shade8(bgx, p->bs, _mm512_extracti64x4_epi64(off, 1), wq, lq, 1,
		       (__mmask64)((1ull << 3 * n1) - 1), o + 3 * x + 24);
}

/* 16 pixels from column x, of which the first n are stored, from column sums made by
 * column_sums (which maps the columns beyond the frame): the two ends of a row. */
static inline __attribute__((always_inline)) void
color16_edge(const void *const r[5], int x, int n, int y, const int is_int, const int wrap,
	     const color_par *p, const uint8_t *bgx, uint8_t *o, int32_t *lift)
{
	float v[20], d2[20];
	column_sums(r, p->w, x, 16, is_int, wrap, v, d2);
	const __m512 vv[5] = {_mm512_loadu_ps(v), _mm512_loadu_ps(v + 1), _mm512_loadu_ps(v + 2),
			      _mm512_loadu_ps(v + 3), _mm512_loadu_ps(v + 4)};
	const __m512 e[3] = {_mm512_loadu_ps(d2 + 1), _mm512_loadu_ps(d2 + 2),
			     _mm512_loadu_ps(d2 + 3)};
	color16(x, y, wrap, p, bgx, o, lift, vv, e, n);
}

/* Pixels [xa, xb) of a row (xa a multiple of 16, xb one or w), 16 at a time: the
 * interior with column sums sliding along the row (each computed once, its neighbours'
 * taken by lane shifts, valignd), the ends from column_sums. */
static inline __attribute__((always_inline)) void
color_row(const void *const r[5], int y, const int is_int, const int wrap, const color_par *p,
	  const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa, int xb)
{
	const int w = p->w;
	const uint8_t *pf = bgx + (size_t)(y + 8 < p->hgt ? y + 8 : p->hgt - 1) * p->bs;
	int x = xa;
	if (x == 0 && xb > 0) {
		color16_edge(r, 0, w < 16 ? w : 16, y, is_int, wrap, p, bgx, o, lift);
		x = 16;
	}
	if (x < xb && x + 18 <= w) {
		__m512 vp, dp, vc, dc, vn, dn;
		sums16(r, x - 16, (__mmask16)0xffff, is_int, &vp, &dp);
		sums16(r, x, (__mmask16)0xffff, is_int, &vc, &dc);
#define SHIFT(hi, lo, k)                                                                           \
	_mm512_castsi512_ps(                                                                       \
		_mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), k))
		for (; x < xb && x + 18 <= w; x += 16) {
			/* the next 16 columns, as many as the row has (at least two) */
			const int left = w - (x + 16);
			const __mmask16 m =
				left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
			sums16(r, x + 16, m, is_int, &vn, &dn);
			const __m512 v[5] = {SHIFT(vc, vp, 14), SHIFT(vc, vp, 15), vc,
					     SHIFT(vn, vc, 1), SHIFT(vn, vc, 2)};
			const __m512 d[3] = {SHIFT(dc, dp, 15), dc, SHIFT(dn, dc, 1)};
			color16(x, y, wrap, p, bgx, o, lift, v, d, 16);
			/* the background 4 rows down, one cache line (16 pixels) per run */
			_mm_prefetch((const char *)(pf + 4 * (size_t)x), _MM_HINT_T0);
			vp = vc, dp = dc, vc = vn, dc = dn;
		}
#undef SHIFT
	}
	for (; x < xb; x += 16)
		color16_edge(r, x, w - x < 16 ? w - x : 16, y, is_int, wrap, p, bgx, o, lift);
}

void refract_color_wrap_i32_avx512vnni(const void *const r[5], int y, const color_par *p,
				       const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa,
				       int xb)
{
	color_row(r, y, 1, 1, p, bgx, o, lift, xa, xb);
}

void refract_color_wrap_f32_avx512vnni(const void *const r[5], int y, const color_par *p,
				       const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa,
				       int xb)
{
	color_row(r, y, 0, 1, p, bgx, o, lift, xa, xb);
}

void refract_color_clamp_i32_avx512vnni(const void *const r[5], int y, const color_par *p,
					const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa,
					int xb)
{
	color_row(r, y, 1, 0, p, bgx, o, lift, xa, xb);
}

void refract_color_clamp_f32_avx512vnni(const void *const r[5], int y, const color_par *p,
					const uint8_t *bgx, uint8_t *o, int32_t *lift, int xa,
					int xb)
{
	color_row(r, y, 0, 0, p, bgx, o, lift, xa, xb);
}
#endif
