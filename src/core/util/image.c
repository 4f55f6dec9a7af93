#include "util/image.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/cpu.h"
#include "util/error.h"

int tp_pixfmt_channels(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8:
	case TP_RGB16:
	case TP_RGBF32:
	case TP_YUV420: return 3;
	case TP_RGBA8: return 4;
	default: return 1;
	}
}

int tp_pixfmt_bytes(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: return 3;
	case TP_RGBA8: return 4;
	case TP_GRAY16: return 2;
	case TP_RGB16: return 6;
	case TP_GRAYF32: return 4;
	case TP_RGBF32: return 12;
	default: return 1;
	}
}

const char *tp_pixfmt_name(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: return "rgb24";
	case TP_RGBA8: return "rgba";
	case TP_GRAY16: return "gray16";
	case TP_RGB16: return "rgb48";
	case TP_YUV420: return "yuv420p";
	case TP_GRAYF32: return "grayf32";
	case TP_RGBF32: return "rgbf32";
	default: return "gray";
	}
}

void *tp_alloc_zeroed(size_t bytes)
{
	void *p = NULL;
	/* 2 MB and more in transparent huge pages where the kernel gives them on request:
	 * each 4 KB page is a fault when first touched (a 1080p 4:2:0 frame: 760 faults, or
	 * 2), and a TLB entry when swept (a solver's grid, the padded background). From 2 MB
	 * rather than 4: the encoder queue's 512x512 float maps (3 MB, four frames of two)
	 * faulted 6000 times, about 100 ms before the first frame. */
	const size_t huge = (size_t)2 << 20;
	if (bytes >= huge) {
		bytes = (bytes + huge - 1) & ~(huge - 1);
		if (posix_memalign(&p, huge, bytes) != 0)
			return NULL;
#ifdef MADV_HUGEPAGE
		(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	} else if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

int tp_image_alloc(tp_image *img, int w, int h, tp_pixfmt fmt)
{
	memset(img, 0, sizeof *img);
	if (w <= 0 || h <= 0)
		return TP_EIO;
	if (fmt == TP_YUV420 && ((w | h) & 1))
		return TP_EIO;
	size_t stride = ((size_t)w * (size_t)tp_pixfmt_bytes(fmt) + 63) & ~(size_t)63;
	/* 4:2:0 adds two quarter-size chroma planes */
	size_t bytes = fmt == TP_YUV420 ? stride * (size_t)h * 3 / 2 : stride * (size_t)h;
	void *p = tp_alloc_zeroed(bytes);
	if (!p)
		return TP_EIO;
	img->w = w;
	img->h = h;
	img->stride = (ptrdiff_t)stride;
	img->fmt = fmt;
	img->pixels = p;
	return 0;
}

void tp_image_free(tp_image *img)
{
	if (!img)
		return;
	free(img->pixels);
	img->pixels = NULL;
}

/* ---- BT.709 4:2:0 ---- */

#define Y_R  5983
#define Y_G  20127
#define Y_B  2032
#define CB_R (-3298)
#define CB_G (-11094)
#define CB_B 14392
#define CR_R 14392
#define CR_G (-13073)
#define CR_B (-1319)

static inline __attribute__((always_inline)) void
yuv_rows(const uint8_t *restrict r0, const uint8_t *restrict r1, int w, uint8_t *restrict y0,
	 uint8_t *restrict y1, uint8_t *restrict cb, uint8_t *restrict cr)
{
	for (int x = 0; x < w; x++) {
		y0[x] = (uint8_t)((Y_R * r0[3 * x] + Y_G * r0[3 * x + 1] + Y_B * r0[3 * x + 2] +
				   (16 << 15) + (1 << 14)) >>
				  15);
		y1[x] = (uint8_t)((Y_R * r1[3 * x] + Y_G * r1[3 * x + 1] + Y_B * r1[3 * x + 2] +
				   (16 << 15) + (1 << 14)) >>
				  15);
	}
	/* Chroma, linear in R, G, B: per pixel of the two rows' column sums, then the sum of
	 * each pair (the 2^15 scale becomes 2^17 over four pixels). In runs that stay in L1,
	 * every loop unit-stride or interleaved by 2 or 3, so the compiler vectorises them. */
	enum { RUN = 256 };
	for (int xs = 0; xs < w; xs += RUN) {
		const int n = w - xs < RUN ? w - xs : RUN; /* even: w and RUN are */
		int32_t sum[3 * RUN], pb[RUN], pr[RUN];
		for (int i = 0; i < 3 * n; i++)
			sum[i] = r0[3 * xs + i] + r1[3 * xs + i];
		for (int i = 0; i < n; i++) {
			pb[i] = CB_R * sum[3 * i] + CB_G * sum[3 * i + 1] + CB_B * sum[3 * i + 2];
			pr[i] = CR_R * sum[3 * i] + CR_G * sum[3 * i + 1] + CR_B * sum[3 * i + 2];
		}
		for (int i = 0; i < n / 2; i++) {
			cb[xs / 2 + i] =
				(uint8_t)((pb[2 * i] + pb[2 * i + 1] + (128 << 17) + (1 << 16)) >>
					  17);
			cr[xs / 2 + i] =
				(uint8_t)((pr[2 * i] + pr[2 * i + 1] + (128 << 17) + (1 << 16)) >>
					  17);
		}
	}
}

__attribute__((optimize("no-tree-vectorize"))) static void yuv_rows_c(const uint8_t *r0,
								      const uint8_t *r1, int w,
								      uint8_t *y0, uint8_t *y1,
								      uint8_t *cb, uint8_t *cr)
{
	yuv_rows(r0, r1, w, y0, y1, cb, cr);
}

/* The same loop vectorised by the compiler for the build's baseline (SSE2 on x86-64)
 * and for AVX2. */
static void yuv_rows_vec(const uint8_t *r0, const uint8_t *r1, int w, uint8_t *y0, uint8_t *y1,
			 uint8_t *cb, uint8_t *cr)
{
	yuv_rows(r0, r1, w, y0, y1, cb, cr);
}

#ifdef __x86_64__
__attribute__((target("avx2"))) static void yuv_rows_avx2(const uint8_t *r0, const uint8_t *r1,
							   int w, uint8_t *y0, uint8_t *y1,
							   uint8_t *cb, uint8_t *cr)
{
	yuv_rows(r0, r1, w, y0, y1, cb, cr);
}
#endif

#ifdef __x86_64__
#include <immintrin.h>

#define YUV_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

/* Pixels [x, x + n) of an RGB row (n <= 16) as 16-bit words: rg = R, G pairs (32 words),
 * b = B, 0 pairs. One masked load (never past the row), a dword permute that gives each
 * 128-bit lane four pixels' 12 bytes (lane k: bytes 12k .. 12k + 11), and two byte
 * shuffles inside the lanes (no VBMI byte permute across lanes: many AVX-512 CPUs lack
 * it). */
static inline __attribute__((always_inline)) YUV_AVX512 void
rgb_words(const uint8_t *row, int x, int n, __m512i *rg, __m512i *b)
{
	const __m512i src = _mm512_maskz_loadu_epi8(n == 16 ? 0xFFFFFFFFFFFFull
							    : (((__mmask64)1 << (3 * n)) - 1),
						    row + 3 * x);
	const __m512i lanes = _mm512_permutexvar_epi32(
		_mm512_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0), src);
	/* byte 4j of rg is R_j, byte 4j + 2 is G_j; byte 4j of b is B_j (pixel j of the
	 * lane); the rest zero (-1 in a shuffle) */
	const __m512i irg = _mm512_broadcast_i32x4(
		_mm_setr_epi8(0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1));
	const __m512i ib = _mm512_broadcast_i32x4(
		_mm_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1));
	*rg = _mm512_shuffle_epi8(lanes, irg);
	*b = _mm512_shuffle_epi8(lanes, ib);
}

/* yuv_rows in AVX-512 (F, BW, VL): the same integer formulas, 16 pixels a step. Luma is
 * Y_R R + Y_G G (vpmaddwd on R, G pairs) + Y_B B; chroma sums the two rows' words first
 * (at most 510, still 16-bit), then adds neighbouring pixels' 32-bit results in pairs. */
static YUV_AVX512 void yuv_rows_avx512(const uint8_t *r0, const uint8_t *r1, int w, uint8_t *y0,
				       uint8_t *y1, uint8_t *cb, uint8_t *cr)
{
	const __m512i cy_rg = _mm512_set1_epi32((Y_G << 16) | Y_R), cy_b = _mm512_set1_epi32(Y_B);
	const __m512i cb_rg = _mm512_set1_epi32((int32_t)((uint32_t)(CB_G & 0xFFFF) << 16) |
						(CB_R & 0xFFFF));
	const __m512i cr_rg = _mm512_set1_epi32((int32_t)((uint32_t)(CR_G & 0xFFFF) << 16) |
						(CR_R & 0xFFFF));
	const __m512i cb_b = _mm512_set1_epi32(CB_B), cr_b = _mm512_set1_epi32(CR_B & 0xFFFF);
	const __m512i ky = _mm512_set1_epi32((16 << 15) + (1 << 14));
	const __m256i kc = _mm256_set1_epi32((128 << 17) + (1 << 16));
	for (int x = 0; x < w; x += 16) {
		const int n = w - x < 16 ? w - x : 16; /* even: w is */
		__m512i rg0, b0, rg1, b1;
		rgb_words(r0, x, n, &rg0, &b0);
		rgb_words(r1, x, n, &rg1, &b1);
		const __mmask16 m = (__mmask16)((1u << n) - 1);
		__m512i l0 = _mm512_add_epi32(_mm512_madd_epi16(rg0, cy_rg), _mm512_madd_epi16(b0, cy_b));
		__m512i l1 = _mm512_add_epi32(_mm512_madd_epi16(rg1, cy_rg), _mm512_madd_epi16(b1, cy_b));
		_mm_mask_storeu_epi8(y0 + x, m,
				     _mm512_cvtepi32_epi8(_mm512_srai_epi32(_mm512_add_epi32(l0, ky), 15)));
		_mm_mask_storeu_epi8(y1 + x, m,
				     _mm512_cvtepi32_epi8(_mm512_srai_epi32(_mm512_add_epi32(l1, ky), 15)));
		const __m512i rg = _mm512_add_epi16(rg0, rg1), b = _mm512_add_epi16(b0, b1);
		__m512i pb = _mm512_add_epi32(_mm512_madd_epi16(rg, cb_rg), _mm512_madd_epi16(b, cb_b));
		__m512i pr = _mm512_add_epi32(_mm512_madd_epi16(rg, cr_rg), _mm512_madd_epi16(b, cr_b));
		/* each 64-bit lane's low half += its high half: pixel 2i + pixel 2i + 1 */
		pb = _mm512_add_epi32(pb, _mm512_srli_epi64(pb, 32));
		pr = _mm512_add_epi32(pr, _mm512_srli_epi64(pr, 32));
		const __m256i sb = _mm256_srai_epi32(_mm256_add_epi32(_mm512_cvtepi64_epi32(pb), kc), 17);
		const __m256i sr = _mm256_srai_epi32(_mm256_add_epi32(_mm512_cvtepi64_epi32(pr), kc), 17);
		const __mmask16 mc = (__mmask16)((1u << (n / 2)) - 1);
		_mm_mask_storeu_epi8(cb + x / 2, mc, _mm256_cvtepi32_epi8(sb));
		_mm_mask_storeu_epi8(cr + x / 2, mc, _mm256_cvtepi32_epi8(sr));
	}
}

#endif

tp_yuv420_rows_fn tp_yuv420_rows_for(unsigned cpu_flags)
{
#ifdef __x86_64__
	if (cpu_flags & TP_CPU_FLAG_AVX512)
		return yuv_rows_avx512;
	if (cpu_flags & TP_CPU_FLAG_AVX2)
		return yuv_rows_avx2;
#endif
	return cpu_flags & TP_CPU_FLAG_SIMD ? yuv_rows_vec : yuv_rows_c;
}

void tp_rgb_to_yuv420_pair(tp_yuv420_rows_fn rows, const tp_image *rgb, int j, uint8_t *const pl[3],
			   const ptrdiff_t ls[3])
{
	rows(tp_image_row(rgb, 2 * j), tp_image_row(rgb, 2 * j + 1), rgb->w,
			      pl[0] + (ptrdiff_t)2 * j * ls[0],
			      pl[0] + (ptrdiff_t)(2 * j + 1) * ls[0], pl[1] + (ptrdiff_t)j * ls[1],
			      pl[2] + (ptrdiff_t)j * ls[2]);
}
