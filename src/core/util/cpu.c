/* cpu.c - CPU feature detection, once, and the tests' cap (cpu.h). */
#include "util/cpu.h"

#include <stdatomic.h>

#define DETECTED 0x80000000u /* set in `detected` once detection has run */

static atomic_uint detected;
static atomic_uint cap = ~0u;

static unsigned detect(void)
{
	unsigned f = TP_CPU_FLAG_SIMD;
#ifdef __x86_64__
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		f |= TP_CPU_FLAG_AVX2;
	if (__builtin_cpu_supports("avx512f"))
		f |= TP_CPU_FLAG_AVX512F;
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512vl"))
		f |= TP_CPU_FLAG_AVX512;
	if (__builtin_cpu_supports("avx512vnni"))
		f |= TP_CPU_FLAG_AVX512VNNI;
#endif
	return f;
}

unsigned tp_cpu_flags(void)
{
	/* Two threads asking first both detect and store the same value. */
	unsigned d = atomic_load_explicit(&detected, memory_order_relaxed);
	if (!d) {
		d = detect() | DETECTED;
		atomic_store_explicit(&detected, d, memory_order_relaxed);
	}
	return d & ~DETECTED & atomic_load_explicit(&cap, memory_order_relaxed);
}

void tp_cpu_force_flags(int mask)
{
	atomic_store_explicit(&cap, (unsigned)mask, memory_order_relaxed);
}
