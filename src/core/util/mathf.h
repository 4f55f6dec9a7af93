/*
 * mathf.h - small float helpers every module would otherwise copy.
 */
#ifndef TP_UTIL_MATHF_H
#define TP_UTIL_MATHF_H

/* v limited to [lo, hi] by comparisons: a NaN and -0.0 pass unchanged. (The colour pass's
 * own clamp, refract.c, is max-then-min so that a NaN becomes lo, as its SIMD twins do.) */
static inline float tp_clampf(float v, float lo, float hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

#endif
