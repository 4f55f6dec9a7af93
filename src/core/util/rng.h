/*
 * rng.h - the project's only random number generator: PCG32 (O'Neill, pcg-random.org,
 * "XSH RR" output, 64-bit LCG state). Deterministic for a given seed and stream on every
 * platform; never use rand().
 */
#ifndef TP_UTIL_RNG_H
#define TP_UTIL_RNG_H

#include <stdint.h>

typedef struct tp_rng {
	uint64_t state, inc;
} tp_rng;

void tp_rng_seed(tp_rng *r, uint64_t seed, uint64_t stream);
uint32_t tp_rng_u32(tp_rng *r);
/* Uniform in [0, 1), 24 random bits, exact in float and double. */
double tp_rng_unit(tp_rng *r);
/* Uniform in [lo, hi). */
double tp_rng_range(tp_rng *r, double lo, double hi);
/* Uniform integer in [0, n), unbiased (Lemire's rejection). n > 0. */
uint32_t tp_rng_below(tp_rng *r, uint32_t n);

#endif
