#include "util/rng.h"

void tp_rng_seed(tp_rng *r, uint64_t seed, uint64_t stream)
{
	r->state = 0;
	r->inc = (stream << 1u) | 1u;
	tp_rng_u32(r);
	r->state += seed;
	tp_rng_u32(r);
}

uint32_t tp_rng_u32(tp_rng *r)
{
	uint64_t old = r->state;
	r->state = old * 6364136223846793005ULL + r->inc;
	uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
	uint32_t rot = (uint32_t)(old >> 59u);
	return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

double tp_rng_unit(tp_rng *r)
{
	return (double)(tp_rng_u32(r) >> 8) * (1.0 / 16777216.0);
}

double tp_rng_range(tp_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * tp_rng_unit(r);
}

uint32_t tp_rng_below(tp_rng *r, uint32_t n)
{
	uint32_t threshold = (uint32_t)(-n) % n;
	for (;;) {
		uint32_t x = tp_rng_u32(r);
		if (x >= threshold)
			return x % n;
	}
}
