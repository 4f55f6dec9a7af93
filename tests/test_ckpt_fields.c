/* Checkpoint fields that the checksum cannot vouch for (issue 46): a file whose checksum
 * was made again over changed values - as a damaged writer or a crafted file would have
 * it - must still be refused, naming the file, when the stepper's frame is not the one
 * its header gives, or shallow's water heights, volume and CG counters are not finite or
 * out of range. Each case changes one field of a real checkpoint (`tidepool cache`),
 * seals the file again, and expects `render --cache` to refuse it; the same file sealed
 * again unchanged still loads, so the refusals are the fields'. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <xxhash.h>

#include "cli_util.h"
#include "tmpdir.h"

static char dir[64];
static char errpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "ckptf");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(ckpt_fields, .init = setup, .fini = teardown, .timeout = 120);

typedef struct file {
	uint8_t *b;
	size_t n;
} file;

static file load(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	file d = {malloc((size_t)ftell(f)), (size_t)ftell(f)};
	rewind(f);
	cr_assert_eq(fread(d.b, 1, d.n, f), d.n);
	fclose(f);
	return d;
}

/* Writes d to path with its checksum made again (sim/ckpt.h: XXH3-64 of the header's
 * first 120 bytes and then the payload, at offset 120). */
static void seal(const char *path, const file *d)
{
	uint8_t *s = malloc(d->n);
	memcpy(s, d->b, 120);
	memcpy(s + 120, d->b + 128, d->n - 128 - 8);
	uint64_t sum = XXH3_64bits(s, 120 + d->n - 136);
	free(s);
	for (int i = 0; i < 8; i++)
		d->b[120 + i] = (uint8_t)(sum >> (8 * i));
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(d->b, 1, d->n, f), d->n);
	fclose(f);
}

static int64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return n == 4 ? (int64_t)(int32_t)v : (int64_t)v;
}

static void put_le(uint8_t *p, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *p, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	put_le(p, 8, u);
}

static size_t find(const file *d, const char *magic)
{
	for (size_t i = 128; i + 8 <= d->n; i++)
		if (!memcmp(d->b + i, magic, 8))
			return i;
	cr_assert_fail("no %s section", magic);
	return 0;
}

/* `render --range A-A --cache` over path holding d: its exit status, stderr in errpath. */
static int render_from(const char *scene, const char *path, const file *d, int a)
{
	seal(path, d);
	return run_tp(NULL, errpath, "render %s --range %d-%d --cache %s/c -o null", scene, a, a,
		      dir);
}

#define ERR_HAS(s) cr_assert(strstr(slurp(errpath), (s)) != NULL, "%s", slurp(errpath))

/* The stepper's frame and step count (after the loop section), moved to another frame. */
static void stepper_frame_case(const char *scene)
{
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4 -q", scene, dir), 0, "%s",
		     slurp(errpath));
	char p[128];
	snprintf(p, sizeof p, "%s/c/frame-00000004.tpck", dir);
	file d = load(p);
	const size_t at = find(&d, "TPSTEP01") + 8;
	const int64_t frame = get_le(d.b + at, 4), step = get_le(d.b + at + 4, 8);
	cr_assert_gt(frame, 0);
	cr_assert_eq(step % frame, 0, "steps %lld at frame %lld", (long long)step, (long long)frame);
	cr_assert_eq(render_from(scene, p, &d, 5), 0, "%s", slurp(errpath)); /* as written */
	/* frame 4352 with the step count of frame 4352: consistent in itself, but the header
	 * (checksummed, renamed nowhere) says the state is before output frame 4 */
	const int64_t far = 4352 + (frame - 3);
	put_le(d.b + at, 4, (uint64_t)far);
	put_le(d.b + at + 4, 8, (uint64_t)(step / frame * far));
	cr_assert_eq(render_from(scene, p, &d, 5), 3);
	ERR_HAS("frame-00000004.tpck: damaged (its state is not at frame 4, the frame its header gives)");
	/* the frame alone: the step count no longer follows from it */
	put_le(d.b + at + 4, 8, (uint64_t)step);
	cr_assert_eq(render_from(scene, p, &d, 5), 3);
	ERR_HAS("frame-00000004.tpck: checkpoint: the stepper's frame");
	ERR_HAS("disagree (damaged)");
	/* one frame off, step count to match */
	put_le(d.b + at, 4, (uint64_t)(frame + 1));
	put_le(d.b + at + 4, 8, (uint64_t)(step / frame * (frame + 1)));
	cr_assert_eq(render_from(scene, p, &d, 5), 3);
	ERR_HAS("frame-00000004.tpck: damaged (its state is not at frame 4");
	free(d.b);
}

Test(ckpt_fields, a_stepper_frame_other_than_the_headers_is_refused)
{
	stepper_frame_case("tests/data/tiny.json --frames 12");
}

Test(ckpt_fields, a_loops_stepper_frame_other_than_the_headers_is_refused)
{
	/* with a loop the stepper runs the warm-up's frames ahead of the output frames */
	stepper_frame_case("tests/data/farm_loop.json");
}

/* shallow's section (the last of the payload): magic, w, h, nbox, then eta's and
 * eta_old's rows (lo, hi, values lo..hi), v0, ...; at its end last_iters, masked, cg_fail
 * (i32) and last_resid (f64). */
typedef struct shal {
	size_t eta;  /* a height in eta's first moving row */
	size_t v0;
	size_t iters; /* then masked +4, cg_fail +8, last_resid +12 */
} shal;

static size_t spans_end(const file *d, size_t at, int h, size_t *first)
{
	for (int y = 0; y < h; y++) {
		const int64_t lo = get_le(d->b + at, 4), hi = get_le(d->b + at + 4, 4);
		at += 8;
		if (lo <= hi) {
			if (first && !*first)
				*first = at;
			at += (size_t)(hi - lo + 1) * 8;
		}
	}
	return at;
}

static shal shallow_fields(const file *d)
{
	shal s = {0};
	size_t at = find(d, "TPSHAL05") + 8;
	const int h = (int)get_le(d->b + at + 4, 4);
	at = spans_end(d, at + 12, h, &s.eta);
	s.v0 = spans_end(d, at, h, NULL);
	s.iters = d->n - 8 - 20;
	cr_assert_neq(s.eta, 0, "no moving water in the checkpoint");
	return s;
}

Test(ckpt_fields, shallow_heights_volume_and_counters_out_of_range_are_refused)
{
	const char *scene = "tests/data/farm_shallow.json";
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4 -q", scene, dir), 0, "%s",
		     slurp(errpath));
	char p[128];
	snprintf(p, sizeof p, "%s/c/frame-00000008.tpck", dir);
	const file orig = load(p);
	const shal s = shallow_fields(&orig);
	file d = {malloc(orig.n), orig.n};
	memcpy(d.b, orig.b, d.n);
	cr_assert_eq(render_from(scene, p, &d, 9), 0, "%s", slurp(errpath));
	const int64_t iters = get_le(d.b + s.iters, 4);
	cr_assert_geq(iters, 0);
	cr_assert_leq(iters, 200); /* within cg_iters: the field is where it is said to be */
	static const struct {
		int field; /* 0 eta, 1 v0, 2 last_iters, 3 masked, 4 cg_fail, 5 last_resid */
		double v;
		const char *msg;
	} bad[] = {
		{0, NAN, "water heights or volume not finite or out of range"},
		{0, 1e300, "water heights or volume not finite or out of range"},
		{0, -INFINITY, "water heights or volume not finite or out of range"},
		{1, INFINITY, "water heights or volume not finite or out of range"},
		{1, -1e300, "water heights or volume not finite or out of range"},
		{2, -1, "flow or solver counts out of range"},
		{2, 1e6, "flow or solver counts out of range"},
		{3, -5, "flow or solver counts out of range"},
		{3, 2e9, "flow or solver counts out of range"},
		{4, -1, "flow or solver counts out of range"},
		{4, 2147483647, "flow or solver counts out of range"},
		{5, NAN, "flow or solver counts out of range"},
		{5, -1, "flow or solver counts out of range"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memcpy(d.b, orig.b, d.n);
		const int fd = bad[i].field;
		if (fd == 0 || fd == 1 || fd == 5)
			put_f64(d.b + (fd == 0 ? s.eta : fd == 1 ? s.v0 : s.iters + 12), bad[i].v);
		else
			put_le(d.b + s.iters + 4 * (size_t)(fd - 2), 4, (uint64_t)(int64_t)bad[i].v);
		cr_assert_eq(render_from(scene, p, &d, 9), 3, "case %zu: %s", i, slurp(errpath));
		ERR_HAS("frame-00000008.tpck: shallow: truncated or damaged checkpoint");
		ERR_HAS(bad[i].msg);
	}
	free(d.b);
	free(orig.b);
}
