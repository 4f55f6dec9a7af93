/*
 * cpu.h - the CPU features the vector kernels may use (libavutil/cpu.h's shape).
 *
 * tp_cpu_flags() says which TP_CPU_FLAG_* sets this CPU has: detected once (any thread may
 * ask first), within the cap of tp_cpu_force_flags(). A context with vector kernels (a
 * render context, a solver instance, an MP4 encoder) reads it once, when it is created,
 * keeps it in a field of its own and picks its kernels from that field; no per-frame or
 * per-step path reads it, so scenes running side by side never see it change. Every
 * choice of flags computes the same bytes: the flags choose speed, never results
 * (tests/test_render.c, test_refract_aa.c, test_solvers_int.c, test_sph.c and
 * test_mp4.c compare each set against the plain C loops).
 */
#ifndef TP_UTIL_CPU_H
#define TP_UTIL_CPU_H

/* The compiler's vectorisation at the build's baseline ISA (SSE2 on x86-64): present on
 * every CPU. Without it the kernels run their plain C reference loops. */
#define TP_CPU_FLAG_SIMD    0x0001
#define TP_CPU_FLAG_AVX2    0x0002
#define TP_CPU_FLAG_AVX512F 0x0004 /* AVX-512 Foundation */
/* AVX-512 F, CD, BW, DQ and VL (x86-64-v4), as FFmpeg's AV_CPU_FLAG_AVX512 */
#define TP_CPU_FLAG_AVX512     0x0008
#define TP_CPU_FLAG_AVX512VNNI 0x0010

/* The TP_CPU_FLAG_* sets of this CPU, within tp_cpu_force_flags()'s cap. */
unsigned tp_cpu_flags(void);

/* For tests and benchmarks (as av_force_cpu_flags): contexts created from now on see
 * tp_cpu_flags() & mask, never a set the CPU lacks; -1 (the default) lifts the cap, 0
 * leaves only the plain C loops. Contexts already created keep what they read. */
void tp_cpu_force_flags(int mask);

#endif
