/*
 * wire.h - fixed-endianness binary fields for checkpoint files: every integer and float
 * is written little-endian whatever the host, floats as their IEEE-754 bits, so a
 * checkpoint reads back bit for bit on any machine.
 *
 * Each function returns 0 or -1 (short write or read, end of file). Callers OR the
 * results of a sequence and report one error at the end: `rc |= tp_wr_f64(f, x);`.
 */
#ifndef TP_UTIL_WIRE_H
#define TP_UTIL_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int tp_wr_bytes(FILE *f, const void *p, size_t n);
int tp_wr_u32(FILE *f, uint32_t v);
int tp_wr_i32(FILE *f, int32_t v);
int tp_wr_u64(FILE *f, uint64_t v);
int tp_wr_i64(FILE *f, int64_t v);
int tp_wr_f64(FILE *f, double v);
int tp_wr_f32s(FILE *f, const float *p, size_t n);
int tp_wr_f64s(FILE *f, const double *p, size_t n);
int tp_wr_i32s(FILE *f, const int32_t *p, size_t n);

int tp_rd_bytes(FILE *f, void *p, size_t n);
int tp_rd_u32(FILE *f, uint32_t *v);
int tp_rd_i32(FILE *f, int32_t *v);
int tp_rd_u64(FILE *f, uint64_t *v);
int tp_rd_i64(FILE *f, int64_t *v);
int tp_rd_f64(FILE *f, double *v);
int tp_rd_f32s(FILE *f, float *p, size_t n);
int tp_rd_f64s(FILE *f, double *p, size_t n);
int tp_rd_i32s(FILE *f, int32_t *p, size_t n);

/* An int written as i32 and read back into an int (values stay within int32). */
static inline int tp_rd_int(FILE *f, int *v)
{
	int32_t t;
	int rc = tp_rd_i32(f, &t);
	*v = rc ? 0 : (int)t;
	return rc;
}

#endif
