/* wire.c - little-endian fields for checkpoints (wire.h). */
#include "util/wire.h"

#include <string.h>

#define BATCH 512 /* values converted per fwrite/fread */

static void put64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static void put32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int tp_wr_bytes(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}
int tp_rd_bytes(FILE *f, void *p, size_t n)
{
	return fread(p, 1, n, f) == n ? 0 : -1;
}

int tp_wr_u32(FILE *f, uint32_t v)
{
	uint8_t b[4];
	put32(b, v);
	return tp_wr_bytes(f, b, 4);
}

int tp_wr_i32(FILE *f, int32_t v)
{
	return tp_wr_u32(f, (uint32_t)v);
}

int tp_wr_u64(FILE *f, uint64_t v)
{
	uint8_t b[8];
	put64(b, v);
	return tp_wr_bytes(f, b, 8);
}

int tp_wr_i64(FILE *f, int64_t v)
{
	return tp_wr_u64(f, (uint64_t)v);
}

int tp_wr_f64(FILE *f, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	return tp_wr_u64(f, u);
}

int tp_rd_u32(FILE *f, uint32_t *v)
{
	uint8_t b[4];
	int rc = tp_rd_bytes(f, b, 4);
	*v = rc ? 0 : get32(b);
	return rc;
}

int tp_rd_i32(FILE *f, int32_t *v)
{
	uint32_t u;
	int rc = tp_rd_u32(f, &u);
	*v = (int32_t)u;
	return rc;
}

int tp_rd_u64(FILE *f, uint64_t *v)
{
	uint8_t b[8];
	int rc = tp_rd_bytes(f, b, 8);
	*v = rc ? 0 : get64(b);
	return rc;
}

int tp_rd_i64(FILE *f, int64_t *v)
{
	uint64_t u;
	int rc = tp_rd_u64(f, &u);
	*v = (int64_t)u;
	return rc;
}

int tp_rd_f64(FILE *f, double *v)
{
	uint64_t u;
	int rc = tp_rd_u64(f, &u);
	memcpy(v, &u, 8);
	return rc;
}

/* On a little-endian machine the values' memory is already the file's bytes: arrays are
 * written and read whole (a shallow checkpoint, 7 MB at 640x360, spent most of its time in
 * the per-value copies). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WIRE_LE 1
#else
#define WIRE_LE 0
#endif

/* Arrays go through a small buffer: the same bytes as per-value writes, fewer calls. */
#define ARRAY_IO(NAME_WR, NAME_RD, T, SZ, PUT, GET, UT)                                            \
	int NAME_WR(FILE *f, const T *p, size_t n)                                                 \
	{                                                                                          \
		if (WIRE_LE)                                                                       \
			return n ? tp_wr_bytes(f, p, SZ * n) : 0;                                  \
		uint8_t b[BATCH * SZ] = {0};                                                             \
		for (size_t i = 0; i < n;) {                                                       \
			size_t k = n - i < BATCH ? n - i : BATCH;                                  \
			for (size_t j = 0; j < k; j++) {                                           \
				UT u;                                                              \
				memcpy(&u, &p[i + j], SZ);                                         \
				PUT(b + SZ * j, u);                                                \
			}                                                                          \
			if (tp_wr_bytes(f, b, SZ * k))                                             \
				return -1;                                                         \
			i += k;                                                                    \
		}                                                                                  \
		return 0;                                                                          \
	}                                                                                          \
	int NAME_RD(FILE *f, T *p, size_t n)                                                       \
	{                                                                                          \
		if (WIRE_LE)                                                                       \
			return n ? tp_rd_bytes(f, p, SZ * n) : 0;                                  \
		uint8_t b[BATCH * SZ];                                                             \
		for (size_t i = 0; i < n;) {                                                       \
			size_t k = n - i < BATCH ? n - i : BATCH;                                  \
			if (tp_rd_bytes(f, b, SZ * k))                                             \
				return -1;                                                         \
			for (size_t j = 0; j < k; j++) {                                           \
				UT u = GET(b + SZ * j);                                            \
				memcpy(&p[i + j], &u, SZ);                                         \
			}                                                                          \
			i += k;                                                                    \
		}                                                                                  \
		return 0;                                                                          \
	}

ARRAY_IO(tp_wr_f32s, tp_rd_f32s, float, 4, put32, get32, uint32_t)
ARRAY_IO(tp_wr_f64s, tp_rd_f64s, double, 8, put64, get64, uint64_t)
ARRAY_IO(tp_wr_i32s, tp_rd_i32s, int32_t, 4, put32, get32, uint32_t)
