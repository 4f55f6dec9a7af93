/*
 * mathf.h - small float helpers every module would otherwise copy.
 */
#ifndef TP_UTIL_MATHF_H
#define TP_UTIL_MATHF_H

/* v limited to [lo, hi] by comparisons: a NaN and -0.0 pass unchanged. */
static inline float tp_clampf(float v, float lo, float hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* v limited to [lo, hi] as max-then-min, the way SSE/AVX max_ps(v, lo) and min_ps(v, hi)
 * select: a NaN becomes lo, and -0.0 against lo = 0 becomes +0.0. The colour pass
 * (render/refract.c, refract_aa.c, footprint.c) clamps sample positions with this so that
 * its plain C and its SIMD twins give the same bits. */
static inline float tp_clampf_nan_lo(float v, float lo, float hi)
{
	v = v > lo ? v : lo;
	return v < hi ? v : hi;
}

#endif
