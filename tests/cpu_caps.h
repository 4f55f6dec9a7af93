/*
 * cpu_caps.h - the CPU-feature caps the SIMD tests run each kernel at (util/cpu.h):
 * tp_cpu_force_flags(cpu_caps[k]) before creating a context, tp_cpu_force_flags(-1) after.
 */
#ifndef TP_TESTS_CPU_CAPS_H
#define TP_TESTS_CPU_CAPS_H

#include "util/cpu.h"

enum { CPU_C, CPU_VEC, CPU_AVX2, CPU_ALL, CPU_NCAPS };
/* the plain C loops, the baseline vectors (SSE2), AVX2, and all this CPU has (AVX-512) */
static const int cpu_caps[CPU_NCAPS] = {0, TP_CPU_FLAG_SIMD, TP_CPU_FLAG_SIMD | TP_CPU_FLAG_AVX2,
					-1};

#endif
