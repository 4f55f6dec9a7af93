/* exr_pack.c - float to half and ZIP's predictor, byte for byte as OpenEXRCore (exr_pack.h). */
#include "encode/exr_pack.h"

#include <pthread.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_F16C_PATH 1
#endif

/* Imath's imath_float_to_half without F16C, which OpenEXRCore 3.1 copies as its
 * float_to_half: the float's bits ui (sign cleared) are rebiased from exponent 127 to 15
 * and rounded to nearest even on the 13 dropped mantissa bits; below 2^-14 a denormal
 * half (m >> shift, rounded to nearest even); at or below 2^-25 zero; from 65520 up
 * infinity. */
uint16_t exr_half(float f)
{
	uint32_t ui;
	memcpy(&ui, &f, sizeof ui);
	uint16_t ret = (uint16_t)((ui >> 16) & 0x8000);
	ui &= 0x7fffffffu;
	if (ui >= 0x38800000u) {
		if (ui >= 0x7f800000u) { /* infinity or NaN */
			ret |= 0x7c00;
			if (ui == 0x7f800000u)
				return ret;
			const uint32_t m = (ui & 0x7fffffu) >> 13;
			return (uint16_t)(ret | m | (m == 0));
		}
		if (ui > 0x477fefffu)
			return ret | 0x7c00;
		ui -= 0x38000000u;
		ui = (ui + 0x00000fffu + ((ui >> 13) & 1)) >> 13;
		return (uint16_t)(ret | ui);
	}
	if (ui < 0x33000001u)
		return ret;
	const uint32_t e = ui >> 23, shift = 0x7e - e, m = 0x800000u | (ui & 0x7fffffu);
	const uint32_t r = m << (32 - shift);
	ret |= (uint16_t)(m >> shift);
	if (r > 0x80000000u || (r == 0x80000000u && (ret & 1)))
		++ret;
	return ret;
}

#ifdef HAVE_F16C_PATH
/* Eight samples at a time with VCVTPS2PH, round to nearest even: the same half as
 * exr_half for every number, infinities included. A NaN is where the two differ (the
 * instruction sets the quiet bit of a signalling NaN), so groups holding one go through
 * exr_half. Returns how many samples were done (a multiple of 8). */
__attribute__((target("avx,f16c"))) static size_t half_f16c(const float *in, uint16_t *out,
							    size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 v = _mm256_loadu_ps(in + i);
		if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
			for (size_t j = i; j < i + 8; j++)
				out[j] = exr_half(in[j]);
			continue;
		}
		_mm_storeu_si128((__m128i *)(void *)(out + i),
				 _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	}
	return i;
}
#endif

#ifdef HAVE_F16C_PATH
/* AVX (the OS saves its registers) and F16C (CPUID 1, ECX bit 29): clang 14's
 * __builtin_cpu_supports does not know "f16c", so it is read from CPUID. */
static int f16c_present;
static pthread_once_t f16c_once = PTHREAD_ONCE_INIT;

static void read_f16c(void)
{
	unsigned a, b, c, d;
	f16c_present = __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) &&
		       (c >> 29 & 1);
}

/* Read once: CPUID traps to the hypervisor in a virtual machine (tens of microseconds),
 * and asked on every row it was a quarter of an ocean EXR render's time. */
static int has_f16c(void)
{
	pthread_once(&f16c_once, read_f16c);
	return f16c_present;
}
#endif

void exr_half_row(const float *in, uint16_t *out, size_t n)
{
	size_t i = 0;
#ifdef HAVE_F16C_PATH
	if (has_f16c())
		i = half_f16c(in, out, n);
#endif
	for (; i < n; i++)
		out[i] = exr_half(in[i]);
}

/* With t the split bytes (t[j] = raw[2j] for j < h = ceil(n/2), t[h + j] = raw[2j + 1]):
 * out[0] = t[0], out[i] = t[i] - t[i - 1] + 128 (mod 256), computed from raw directly. */
void exr_zip_predict(const uint8_t *raw, size_t n, uint8_t *out)
{
	if (n == 0)
		return;
	const size_t h = (n + 1) / 2, m = n / 2;
	uint8_t *o1 = out, *o2 = out + h;
	o1[0] = raw[0];
	for (size_t j = 1; j < h; j++)
		o1[j] = (uint8_t)(raw[2 * j] - raw[2 * j - 2] + 128);
	if (m == 0)
		return;
	o2[0] = (uint8_t)(raw[1] - raw[2 * (h - 1)] + 128);
	for (size_t j = 1; j < m; j++)
		o2[j] = (uint8_t)(raw[2 * j + 1] - raw[2 * j - 1] + 128);
}
