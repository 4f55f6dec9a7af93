/* OpenEXR writing (src/encode/exr.c, exr_pack.c): tidepool packs and predicts ZIP's
 * chunks itself, with the bytes OpenEXRCore's encode pipeline would give. Checked against
 * Imath's half conversion (the routine OpenEXRCore copies), against the predictor written
 * out byte by byte, and end to end against the chunks OpenEXRCore packs itself (the same
 * maps written uncompressed), read back through OpenEXRCore and inflated with zlib. */
#include <Imath/half.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <openexr.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli_util.h"
#include "encode/encoder.h"
#include "encode/exr_pack.h"
#include "tmpdir.h"

static char dir[64], errpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "exr");
	snprintf(errpath, sizeof errpath, "%s/err.txt", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(exr, .init = setup, .fini = teardown, .timeout = 300);

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* imath_float_to_half as compiled here (no -mf16c): the software routine, OpenEXRCore's
 * float_to_half. */
static uint16_t ref_half(float f)
{
	return imath_float_to_half(f);
}

/* The float bit patterns where a conversion can go wrong: every half's own value, one ulp
 * either side, and the midpoints to the next half with one ulp either side (the ties
 * rounded to even), for both signs; NaNs quiet and signalling with payloads that do and
 * do not survive the shift; infinities, zeros, the overflow and underflow thresholds;
 * and a sweep of 2^16 patterns spread over all 2^32. */
static size_t edge_floats(float *out)
{
	size_t n = 0;
	for (uint32_t h = 0; h < 0x7c00; h++) {
		const float v = imath_half_to_float((uint16_t)h);
		/* exact in float: one bit more than a half holds */
		const float mv = h < 0x7bff ? (float)(((double)v + (double)imath_half_to_float(
									   (uint16_t)(h + 1))) /
						      2)
					    : 65520.0f;
		uint32_t u, mid;
		memcpy(&u, &v, sizeof u);
		memcpy(&mid, &mv, sizeof mid);
		const uint32_t c[] = {u, u + 1, u ? u - 1 : 0, mid, mid + 1, mid - 1};
		for (int k = 0; k < 6; k++) {
			out[n++] = from_bits(c[k]);
			out[n++] = from_bits(c[k] | 0x80000000u);
		}
	}
	static const uint32_t special[] = {
		0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f801fffu,
		0x7f802000u, 0x7fa00000u, 0xffbfffffu, 0x7fffffffu, 0x00000000u, 0x80000000u,
		0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477fffffu, 0x47800000u, 0x7f7fffffu,
		0x33000000u, 0x33000001u, 0x33800000u, 0x387fffffu, 0x38800000u, 0x00000001u,
		0x807fffffu, 0x3f800000u, 0xbf800000u, 0x38000000u, 0x38001000u, 0x38003000u};
	for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
		out[n++] = from_bits(special[k]);
	for (uint64_t u = 0; u < ((uint64_t)1 << 32); u += 65537)
		out[n++] = from_bits((uint32_t)u);
	return n;
}

#define EDGE_MAX (0x7c00 * 12 + 64 + 65537)

Test(exr, half_is_openexr_float_to_half)
{
	float *f = malloc(EDGE_MAX * sizeof *f);
	uint16_t *h = malloc(EDGE_MAX * sizeof *h);
	cr_assert(f && h);
	const size_t n = edge_floats(f);
	cr_assert(n <= EDGE_MAX);
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &f[i], sizeof u);
		cr_assert_eq(exr_half(f[i]), ref_half(f[i]), "float 0x%08x: 0x%04x, Imath 0x%04x",
			     u, exr_half(f[i]), ref_half(f[i]));
	}
	/* rows of every length mod 8 and offset, NaNs among numbers: the vector path and the
	 * groups it hands to exr_half */
	for (size_t off = 0; off < 8; off++) {
		const size_t m = n - off - (off * 3 % 8);
		exr_half_row(f + off, h, m);
		for (size_t i = 0; i < m; i++) {
			uint32_t u;
			memcpy(&u, &f[off + i], sizeof u);
			cr_assert_eq(h[i], ref_half(f[off + i]),
				     "row at %zu, float 0x%08x: 0x%04x, "
				     "Imath 0x%04x",
				     i, u, h[i], ref_half(f[off + i]));
		}
	}
	free(f);
	free(h);
}

/* The predictor as OpenEXR's ImfZip writes it: split, then differences from the end. */
static void ref_predict(const uint8_t *raw, size_t n, uint8_t *t)
{
	uint8_t *t1 = t, *t2 = t + (n + 1) / 2;
	for (size_t i = 0; i < n; i++)
		*(i % 2 ? t2++ : t1++) = raw[i];
	for (size_t i = n - 1; n && i > 0; i--)
		t[i] = (uint8_t)(t[i] - t[i - 1] + 128);
}

Test(exr, zip_predictor_is_openexrs)
{
	enum { N = 70000 };
	uint8_t *raw = malloc(N), *a = malloc(N), *b = malloc(N);
	cr_assert(raw && a && b);
	uint32_t x = 12345;
	for (size_t i = 0; i < N; i++) {
		x = x * 1664525u + 1013904223u;
		raw[i] = (uint8_t)(x >> 24);
	}
	static const size_t ns[] = {1,  2,  3,  4,  5,    15,   16,    17,    31, 32,
				    33, 63, 64, 65, 1000, 1001, 49152, 69999, N};
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
		memset(a, 0, N);
		memset(b, 0, N);
		exr_zip_predict(raw, ns[k], a);
		ref_predict(raw, ns[k], b);
		cr_assert(!memcmp(a, b, ns[k]), "n = %zu: the predicted bytes differ", ns[k]);
	}
	free(raw);
	free(a);
	free(b);
}

/* The data of each chunk of an EXR file as packed, uncompressed (inflated and the
 * predictor undone for ZIP; a chunk stored raw as it is): all chunks one after the other
 * into *out. Returns the total, or 0 on failure. */
static size_t unpacked_chunks(const char *path, uint8_t **out)
{
	exr_context_t ctx = NULL;
	if (exr_start_read(&ctx, path, NULL) != EXR_ERR_SUCCESS)
		return 0;
	exr_compression_t comp;
	int lines = 1;
	int32_t total = 0;
	exr_attr_box2i_t dw;
	size_t n = 0, cap = 0;
	uint8_t *all = NULL;
	if (exr_get_compression(ctx, 0, &comp) != EXR_ERR_SUCCESS ||
	    exr_get_scanlines_per_chunk(ctx, 0, &lines) != EXR_ERR_SUCCESS ||
	    exr_get_data_window(ctx, 0, &dw) != EXR_ERR_SUCCESS ||
	    exr_get_chunk_count(ctx, 0, &total) != EXR_ERR_SUCCESS)
		goto fail;
	for (int y = dw.min.y; y <= dw.max.y; y += lines) {
		exr_chunk_info_t ci;
		if (exr_read_scanline_chunk_info(ctx, 0, y, &ci) != EXR_ERR_SUCCESS)
			goto fail;
		const size_t un = (size_t)ci.unpacked_size;
		uint8_t *packed = malloc(ci.packed_size), *tmp = malloc(un);
		if (n + un > cap) {
			cap = 2 * (n + un);
			uint8_t *g = realloc(all, cap);
			if (!g) {
				free(packed);
				free(tmp);
				goto fail;
			}
			all = g;
		}
		int ok = packed && tmp && exr_read_chunk(ctx, 0, &ci, packed) == EXR_ERR_SUCCESS;
		if (ok && (comp == EXR_COMPRESSION_NONE || ci.packed_size == un)) {
			memcpy(all + n, packed, un);
		} else if (ok) {
			uLongf got = (uLongf)un;
			ok = uncompress(tmp, &got, packed, (uLong)ci.packed_size) == Z_OK &&
			     got == un;
			/* undo the predictor: running sum, then interleave the halves */
			for (size_t i = 1; ok && i < un; i++)
				tmp[i] = (uint8_t)(tmp[i] + tmp[i - 1] - 128);
			for (size_t i = 0; ok && i < un; i++)
				all[n + i] = i % 2 ? tmp[(un + 1) / 2 + i / 2] : tmp[i / 2];
		}
		free(packed);
		free(tmp);
		if (!ok)
			goto fail;
		n += un;
	}
	exr_finish(&ctx);
	*out = all;
	return n;
fail:
	exr_finish(&ctx);
	free(all);
	return 0;
}

/* The chunks tidepool packs for ZIP and ZIPS hold what OpenEXRCore packs for an
 * uncompressed file of the same frame: halves and floats, RGB and Y, a size whose last
 * chunk is short. */
Test(exr, zip_chunks_hold_openexrs_packing)
{
	const char *o = "scenes/textures/ocean_choppy.json --size 131x131 --range 0-0 -q -y";
	static const char *const types[] = {"half", "float"};
	static const char *const comps[] = {"zip", "zips"};
	for (int t = 0; t < 2; t++) {
		cr_assert_eq(
			run_tp(NULL, errpath,
			       "render %s --set maps.exr.type=%s --set maps.exr.compression=none "
			       "-o displacement=%s/d_none.exr -o foam=%s/f_none.exr",
			       o, types[t], dir, dir),
			0, "%s", slurp(errpath));
		for (int c = 0; c < 2; c++) {
			cr_assert_eq(
				run_tp(NULL, errpath,
				       "render %s --set maps.exr.type=%s "
				       "--set maps.exr.compression=%s -o displacement=%s/d.exr "
				       "-o foam=%s/f.exr",
				       o, types[t], comps[c], dir, dir),
				0, "%s", slurp(errpath));
			static const char m[] = "df";
			for (int k = 0; k < 2; k++) {
				char a[160], b[160];
				snprintf(a, sizeof a, "%s/%c_none.exr", dir, m[k]);
				snprintf(b, sizeof b, "%s/%c.exr", dir, m[k]);
				uint8_t *pa = NULL, *pb = NULL;
				const size_t na = unpacked_chunks(a, &pa),
					     nb = unpacked_chunks(b, &pb);
				const size_t want = (size_t)131 * 131 * (k ? 1 : 3) * (t ? 4 : 2);
				cr_assert_eq(na, want, "%s: %zu bytes of chunks", a, na);
				cr_assert_eq(nb, na, "%s %s %s: %zu bytes of chunks", types[t],
					     comps[c], b, nb);
				cr_assert(!memcmp(pa, pb, na), "%s %s %c: the packed data differs",
					  types[t], comps[c], m[k]);
				free(pa);
				free(pb);
			}
		}
	}
}

/* The files are the same bytes whichever number of threads packs and compresses their
 * chunks (--threads sets the encoder's team as the renderer's; OMP_NUM_THREADS the
 * default of both). */
Test(exr, files_do_not_depend_on_the_threads)
{
	const char *o = "scenes/textures/ocean_choppy.json --size 256x256 --range 0-1 -q -y";
	for (int t = 1; t <= 3; t++) {
		char env[16];
		snprintf(env, sizeof env, "%d", t);
		setenv("OMP_NUM_THREADS", env, 1);
		cr_assert_eq(run_tp(NULL, errpath,
				    "render %s --threads %d -o displacement=%s/d%d_%%d.exr "
				    "-o normal=%s/n%d_%%d.exr -o foam=%s/f%d_%%d.exr",
				    o, t, dir, t, dir, t, dir, t),
			     0, "%s", slurp(errpath));
	}
	unsetenv("OMP_NUM_THREADS");
	static const char m[] = "dnf";
	for (int k = 0; k < 3; k++)
		for (int f = 0; f < 2; f++)
			for (int t = 2; t <= 3; t++) {
				char a[160], b[160];
				snprintf(a, sizeof a, "%s/%c1_%d.exr", dir, m[k], f);
				snprintf(b, sizeof b, "%s/%c%d_%d.exr", dir, m[k], t, f);
				cr_assert(files_equal(a, b), "%s and %s differ", a, b);
			}
}

/* Threads of this process (/proc/self/task). */
static int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	cr_assert(d != NULL);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

typedef struct team_probe {
	int threads;    /* enc_config.threads */
	const char *path;
	int tasks;      /* threads of the process after the frame, from inside */
	int rc;
} team_probe;

/* As the render's encoder thread does: one EXR frame through a sink. libgomp keeps a
 * team's workers alive (idle) until the thread that led it exits, so the count taken
 * here shows the team the encoder ran. */
static void *encode_on_a_thread(void *arg)
{
	team_probe *tp = arg;
	tp_image img;
	tp_err err;
	enc_sink *sink = NULL;
	enc_config cfg = {.path = tp->path, .w = 64, .h = 256, .fps = 30, .frames = 1,
			  .fmt = TP_GRAYF32, .overwrite = 1, .threads = tp->threads};
	cr_assert_eq(tp_image_alloc(&img, 64, 256, TP_GRAYF32), 0);
	for (int y = 0; y < 256; y++)
		for (int x = 0; x < 64; x++)
			((float *)(void *)tp_image_row(&img, y))[x] = (float)(x * y) / 100.0f;
	tp->rc = enc_sink_create(enc_find("exr"), &cfg, &sink, &err);
	if (tp->rc == 0)
		tp->rc = enc_sink_write(sink, 0, &img, &err);
	if (tp->rc == 0)
		tp->rc = enc_sink_close(sink, ENC_CLOSE_DONE, &err);
	tp->tasks = task_count();
	enc_sink_destroy(sink);
	tp_image_free(&img);
	return NULL;
}

/* --threads reaches the encoder's own parallel loops: they run on the encoder's thread,
 * which does not inherit the main thread's omp_set_num_threads(); enc_config.threads
 * carries it (for EXR chunks, PNG batches and flipbook cells alike). */
Test(exr, the_encoder_team_is_the_threads_asked_for)
{
	const int base = task_count();
	for (int t = 1; t <= 3; t += 2) {
		char path[160];
		snprintf(path, sizeof path, "%s/team%d.exr", dir, t);
		team_probe tp = {.threads = t, .path = path};
		pthread_t th;
		cr_assert_eq(pthread_create(&th, NULL, encode_on_a_thread, &tp), 0);
		pthread_join(th, NULL);
		cr_assert_eq(tp.rc, 0, "threads %d: the frame was written", t);
		/* the encoding thread itself, and t - 1 workers */
		cr_assert_eq(tp.tasks - base, t, "threads %d: %d threads beside the test's %d", t,
			     tp.tasks - base, base);
	}
}
