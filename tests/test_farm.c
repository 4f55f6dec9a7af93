/* Farm rendering end to end: render --range and --cache (bit-exact against one full
 * render, every solver, 1 and 2 threads, a loop scene and a batch variant), checkpoint
 * verification and format, tidepool join (MP4 segments and manifests), tasks (commands,
 * --missing, --slurm script) and a chunk killed midway. The real Slurm and GNU parallel
 * runs are scripts/farm-test.sh (make check-farm). */
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "util/wire.h"

static char dir[64];
static char errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "farm");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
	snprintf(outpath, sizeof outpath, "%s/stdout", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(farm, .init = setup, .fini = teardown, .timeout = 240);

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int exists(const char *fmt, ...)
{
	char p[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p, sizeof p, fmt, ap);
	va_end(ap);
	return access(p, F_OK) == 0;
}

/* Every frame line of manifest `part` ("K hash") is in manifest `full`, and part holds
 * frames a..b exactly. */
static void assert_frames_match(const char *full, const char *part, int a, int b)
{
	static char fb[(1 << 16) + 8];
	snprintf(fb, sizeof fb, "\n%s", slurp(full));
	const char *p = slurp(part);
	int next = a;
	for (const char *l = p; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		if (n && l[0] >= '0' && l[0] <= '9') {
			char want[256];
			snprintf(want, sizeof want, "\n%.*s\n", (int)n, l);
			cr_assert(strstr(fb, want) != NULL, "%s: frame line '%.*s' differs from %s",
				  part, (int)n, l, full);
			cr_assert_eq(atoi(l), next, "%s: frame %d where %d was expected", part,
				     atoi(l), next);
			next++;
		}
		l = e ? e + 1 : l + n;
	}
	cr_assert_eq(next, b + 1, "%s: ends at frame %d, expected %d", part, next - 1, b);
}

/* Full render (2 threads) against: a range from frame 0 region without a cache
 * (1 thread), ranges from the cache (1 and 2 threads), one starting exactly on a
 * checkpoint and one between two. */
static void check_scene(const char *scene, const char *extra)
{
	const char *b = tp_bin();
	cr_assert_eq(sh("%s render %s %s -o null --hash %s/full.manifest --threads 2 -q", b, scene,
			extra, dir),
		     0);
	cr_assert_eq(
		sh("%s cache %s %s -O %s/cache --every 4 --threads 1 -q", b, scene, extra, dir), 0);
	cr_assert(exists("%s/cache/frame-00000004.tpck", dir) &&
		  exists("%s/cache/frame-00000008.tpck", dir));
	struct {
		int a, b, threads, cache;
	} r[] = {{0, 4, 1, 0}, {3, 9, 2, 0}, {5, 11, 1, 1}, {8, 14, 2, 1}, {13, 14, 1, 1}};
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
		char cache[128] = "";
		if (r[i].cache)
			snprintf(cache, sizeof cache, "--cache %s/cache", dir);
		cr_assert_eq(sh("%s render %s %s -o null --range %d-%d %s --threads %d --hash "
				"%s/r%zu.manifest -q 2>%s",
				b, scene, extra, r[i].a, r[i].b, cache, r[i].threads, dir, i,
				errpath),
			     0, "%s: range %d-%d: %s", scene, r[i].a, r[i].b, slurp(errpath));
		char full[128], part[128];
		snprintf(full, sizeof full, "%s/full.manifest", dir);
		snprintf(part, sizeof part, "%s/r%zu.manifest", dir, i);
		assert_frames_match(full, part, r[i].a, r[i].b);
	}
}

Test(farm, ranges_are_bit_exact_ripple)
{
	check_scene("tests/data/tiny.json", "--frames 15");
}
Test(farm, ranges_are_bit_exact_hooke)
{
	check_scene("tests/data/tiny.json", "--frames 15 --set solver='\"hooke\"'");
}
/* At another size than the scene's: ripple takes 1.5 x 1 steps a frame (alternating 1
 * and 2) with its damping shifts alternating too, and rain falls in the scene's slots;
 * hooke at three quarters takes fewer steps than frames. Ranges still match. */
Test(farm, ranges_are_bit_exact_ripple_larger)
{
	check_scene("tests/data/tiny.json", "--frames 15 --scale 1.5");
}
Test(farm, ranges_are_bit_exact_hooke_smaller)
{
	check_scene("tests/data/tiny.json", "--frames 15 --scale 0.75 --set solver='\"hooke\"'");
}
Test(farm, ranges_are_bit_exact_shallow_floating)
{
	check_scene("tests/data/farm_shallow.json", "--frames 15");
}
Test(farm, ranges_are_bit_exact_sph_stream_tank)
{
	check_scene("tests/data/farm_sph.json", "--frames 15");
}
Test(farm, ranges_are_bit_exact_loop)
{
	check_scene("tests/data/farm_loop.json", "");
}
/* airy: the frames before a range are passed through without their surfaces (the
 * solver keeps no state from them); with choppy waves (foam) it asks for every surface. */
Test(farm, ranges_are_bit_exact_airy)
{
	check_scene("scenes/wind_pool.json", "--frames 15 --scale 0.25");
}
Test(farm, ranges_are_bit_exact_airy_choppy_foam)
{
	check_scene("tests/data/farm_ocean.json", "");
}

Test(farm, png_ranges_keep_global_names_and_pixels)
{
	const char *b = tp_bin();
	cr_assert_eq(
		sh("%s render tests/data/farm_shallow.json --frames 12 -o %s/full/%%04d.png -q", b,
		   dir),
		0);
	cr_assert_eq(sh("%s cache tests/data/farm_shallow.json --frames 12 -O %s/c --every 5 -q", b,
			dir),
		     0);
	cr_assert_eq(sh("%s render tests/data/farm_shallow.json --frames 12 --range 6-9 --cache "
			"%s/c -o %s/part/%%04d.png -q",
			b, dir, dir),
		     0);
	cr_assert(!exists("%s/part/0005.png", dir) && !exists("%s/part/0010.png", dir));
	for (int k = 6; k <= 9; k++) {
		char a[128], c[128];
		snprintf(a, sizeof a, "%s/full/%04d.png", dir, k);
		snprintf(c, sizeof c, "%s/part/%04d.png", dir, k);
		cr_assert(files_equal(a, c), "frame %d differs", k);
	}
}

Test(farm, checkpoints_are_refused_with_the_reason)
{
	const char *b = tp_bin();
	const char *sc = "tests/data/tiny.json --frames 12";
	cr_assert_eq(sh("%s cache %s -O %s/c --every 4 -q", b, sc, dir), 0);
	/* another option set, another size, another scene */
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s --set params.damping=3 --range 5-6 --cache %s/c -o null", sc,
			    dir),
		     3);
	cr_assert(strstr(slurp(errpath), "frame-00000004.tpck: made for another scene, or other") !=
			  NULL,
		  "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render %s --size 48x32 --range 5-6 --cache %s/c -o null", sc, dir),
		     3);
	cr_assert(strstr(slurp(errpath), "made at 96x64, this render is 48x32") != NULL, "%s",
		  slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/farm_loop.json --range 5-6 --cache %s/c "
			    "-o null",
			    dir),
		     3);
	cr_assert(strstr(slurp(errpath), "made at 96x64") != NULL, "%s", slurp(errpath));
	/* another program version: the 32 bytes at offset 16 */
	char p[256];
	snprintf(p, sizeof p, "%s/c/frame-00000004.tpck", dir);
	FILE *f = fopen(p, "r+b");
	cr_assert_not_null(f);
	fseek(f, 16, SEEK_SET);
	char ver[32] = "0.0.1-old";
	fwrite(ver, 1, 32, f);
	fclose(f);
	cr_assert_eq(run_tp(NULL, errpath, "render %s --range 5-6 --cache %s/c -o null", sc, dir),
		     3);
	cr_assert(strstr(slurp(errpath), "written by tidepool 0.0.1-old, this is") != NULL, "%s",
		  slurp(errpath));
	/* a truncated one */
	cr_assert_eq(sh("truncate -s 200 %s/c/frame-00000008.tpck", dir), 0);
	cr_assert_eq(run_tp(NULL, errpath, "render %s --range 9-9 --cache %s/c -o null", sc, dir),
		     3);
	cr_assert(strstr(slurp(errpath), "truncated or damaged") != NULL, "%s", slurp(errpath));
	/* the cache step refuses checkpoints it cannot continue from, -y replaces them */
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4", sc, dir), 3);
	cr_assert(strstr(slurp(errpath), "frame-00000004.tpck: written by tidepool 0.0.1-old") != NULL,
		  "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4 -y", sc, dir), 0, "%s",
		     slurp(errpath));
	cr_assert_eq(
		run_tp(NULL, errpath, "cache %s --set params.damping=3 -O %s/c --every 4", sc, dir),
		3);
	cr_assert(strstr(slurp(errpath), "made for another scene") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render %s --range 9-9 --cache %s/c -o null", sc, dir),
		     0, "%s", slurp(errpath));
}

Test(farm, checkpoint_format_is_little_endian_as_documented)
{
	cr_assert_eq(run_tp(NULL, errpath,
			    "cache tests/data/tiny.json --frames 12 -O %s/c --every 5", dir),
		     0);
	const char *msg = slurp(errpath);
	cr_assert(strstr(msg, "wrote 2 checkpoints (every 5 frames, ") != NULL &&
			  strstr(msg, "kB each"),
		  "%s", msg);
	char p[256];
	snprintf(p, sizeof p, "%s/c/frame-00000010.tpck", dir);
	FILE *f = fopen(p, "rb");
	cr_assert_not_null(f);
	uint8_t h[128];
	cr_assert_eq(fread(h, 1, 128, f), 128);
	cr_assert(!memcmp(h, "TPCKPT01", 8));
	cr_assert(h[8] == 3 && h[9] == 0 && h[10] == 0 && h[11] == 0); /* format 3, LE */
	cr_assert(h[12] == 128 && h[13] == 0);                         /* header size */
	cr_assert_str_eq((const char *)h + 16, TP_VERSION);
	cr_assert(h[80] == 96 && h[81] == 0 && h[84] == 64 && h[88] == 10 && h[92] == 12);
	cr_assert_str_eq((const char *)h + 96, "ripple");
	uint64_t payload = 0;
	for (int i = 0; i < 8; i++)
		payload |= (uint64_t)h[112 + i] << (8 * i);
	struct stat st;
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq((uint64_t)st.st_size, 128 + payload + 8);
	char tr[8];
	fseek(f, -8, SEEK_END);
	cr_assert_eq(fread(tr, 1, 8, f), 8);
	cr_assert(!memcmp(tr, "TPCKEND\n", 8));
	/* offset 120: XXH3-64 of the header's first 120 bytes and then the payload */
	uint64_t sum = 0;
	for (int i = 0; i < 8; i++)
		sum |= (uint64_t)h[120 + i] << (8 * i);
	uint8_t *pl = malloc(120 + payload);
	memcpy(pl, h, 120);
	fseek(f, 128, SEEK_SET);
	cr_assert_eq(fread(pl + 120, 1, payload, f), payload);
	cr_assert_eq(sum, XXH3_64bits(pl, 120 + payload));
	free(pl);
	fclose(f);
	/* no temporaries left */
	cr_assert_eq(sh("ls -a %s/c | grep -q tmp", dir), 1);
}

Test(farm, wire_fields_are_little_endian)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	const double d[2] = {1.0, -2.5};
	const float fl = 1.0f;
	cr_assert_eq(tp_wr_u32(f, 0x01020304u) | tp_wr_i64(f, -2) | tp_wr_f64s(f, d, 2) |
			     tp_wr_f32s(f, &fl, 1),
		     0);
	rewind(f);
	uint8_t b[32];
	cr_assert_eq(fread(b, 1, 32, f), 32);
	const uint8_t want[32] = {4,    3, 2, 1, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				  0xff, 0, 0, 0, 0,    0,    0,    0xf0, 0x3f, 0,    0,
				  0,    0, 0, 0, 0x04, 0xc0, 0,    0,    0x80, 0x3f};
	cr_assert(!memcmp(b, want, 32));
	rewind(f);
	uint32_t u;
	int64_t i;
	double e[2];
	float g;
	cr_assert_eq(tp_rd_u32(f, &u) | tp_rd_i64(f, &i) | tp_rd_f64s(f, e, 2) |
			     tp_rd_f32s(f, &g, 1),
		     0);
	cr_assert(u == 0x01020304u && i == -2 && e[0] == 1.0 && e[1] == -2.5 && g == 1.0f);
	cr_assert_eq(tp_rd_u32(f, &u), -1); /* end of file */
	fclose(f);
}

static int ffprobe_frames(const char *path)
{
	char cmd[512], out[64] = "";
	snprintf(cmd, sizeof cmd,
		 "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
		 "stream=nb_read_frames -of csv=p=0 %s",
		 path);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	if (!fgets(out, sizeof out, p))
		out[0] = 0;
	pclose(p);
	return atoi(out);
}

static double mean_psnr(const char *json)
{
	const char *s = slurp(json);
	double sum = 0;
	int n = 0;
	for (const char *p = strstr(s, "\"psnr\":"); p; p = strstr(p + 7, "\"psnr\":")) {
		sum += strtod(p + 7, NULL);
		n++;
	}
	cr_assert_gt(n, 0, "%s", s);
	return sum / n;
}

Test(farm, mp4_segments_join_without_reencoding)
{
	const char *b = tp_bin();
	const char *sc = "tests/data/farm_shallow.json --frames 16";
	cr_assert_eq(
		sh("%s render %s -o %s/full.mp4 -o color=%s/png/%%04d.png -q", b, sc, dir, dir), 0);
	const char *r[3] = {"0-5", "6-11", "12-15"};
	for (int i = 0; i < 3; i++)
		cr_assert_eq(sh("%s render %s --range %s -o %s/seg%d.mp4 -q", b, sc, r[i], dir, i),
			     0);
	/* each segment starts with a keyframe and plays on its own */
	char p[256];
	snprintf(p, sizeof p, "%s/seg1.mp4", dir);
	cr_assert_eq(ffprobe_frames(p), 6);
	cr_assert_eq(sh("ffprobe -v error -select_streams v -show_entries frame=key_frame -of "
			"csv=p=0 %s/seg1.mp4 | head -n 1 | grep -qx 1",
			dir),
		     0);
	/* given in any order; joined twice, the same bytes */
	cr_assert_eq(run_tp(NULL, errpath, "join %s/seg2.mp4 %s/seg0.mp4 %s/seg1.mp4 -o %s/j.mp4",
			    dir, dir, dir, dir),
		     0, "%s", slurp(errpath));
	cr_assert(strstr(slurp(errpath), "joined 3 segments: frames 0-15 (16)") != NULL, "%s",
		  slurp(errpath));
	cr_assert_eq(sh("%s join %s/seg0.mp4 %s/seg1.mp4 %s/seg2.mp4 -o %s/j2.mp4 -q", b, dir, dir,
			dir, dir),
		     0);
	char j[256], j2[256];
	snprintf(j, sizeof j, "%s/j.mp4", dir);
	snprintf(j2, sizeof j2, "%s/j2.mp4", dir);
	cr_assert(files_equal(j, j2));
	cr_assert_eq(ffprobe_frames(j), 16);
	/* faststart: moov before mdat */
	cr_assert_eq(sh("head -c 4096 %s | grep -q moov", j), 0);
	/* as close to the rendered frames as the single-run MP4 */
	cr_assert_eq(
		sh("%s compare %s/png/%%04d.png %s/full.mp4 --json %s/a.json -q", b, dir, dir, dir),
		1);
	cr_assert_eq(sh("%s compare %s/png/%%04d.png %s --json %s/b.json -q", b, dir, j, dir), 1);
	char a[128], c[128];
	snprintf(a, sizeof a, "%s/a.json", dir);
	snprintf(c, sizeof c, "%s/b.json", dir);
	double pa = mean_psnr(a), pb = mean_psnr(c);
	cr_assert(pb > pa - 1.0, "joined %.2f dB, single run %.2f dB", pb, pa);
	cr_assert(pb > 30, "%.2f dB", pb);
}

Test(farm, join_refuses_gaps_overlaps_and_mismatches)
{
	const char *b = tp_bin();
	const char *sc = "tests/data/tiny.json --frames 12";
	cr_assert_eq(sh("%s render %s --range 0-3 -o %s/a.mp4 -q && %s render %s --range 4-7 -o "
			"%s/b.mp4 -q && "
			"%s render %s --range 8-11 -o %s/c.mp4 -q && %s render %s --range 2-7 -o "
			"%s/o.mp4 -q && "
			"%s render %s --range 4-7 --crf 30 -o %s/q.mp4 -q && %s render %s -o "
			"%s/full.mp4 -q",
			b, sc, dir, b, sc, dir, b, sc, dir, b, sc, dir, b, sc, dir, b, sc, dir),
		     0);
	cr_assert_eq(run_tp(NULL, errpath, "join %s/a.mp4 %s/c.mp4 -o %s/x.mp4", dir, dir, dir), 3);
	cr_assert(strstr(slurp(errpath), "c.mp4: starts at frame 8, but") &&
			  strstr(slurp(errpath), "frames 4-7 are missing"),
		  "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "join %s/a.mp4 %s/o.mp4 -o %s/x.mp4", dir, dir, dir), 3);
	cr_assert(strstr(slurp(errpath), "o.mp4: starts at frame 2, which") != NULL, "%s",
		  slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "join %s/a.mp4 %s/q.mp4 -o %s/x.mp4", dir, dir, dir), 3);
	cr_assert(strstr(slurp(errpath), "q.mp4: encoder settings") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "join %s/a.mp4 %s/full.mp4 -o %s/x.mp4", dir, dir, dir),
		     3);
	cr_assert(strstr(slurp(errpath), "full.mp4: no tidepool record") != NULL, "%s", slurp(errpath));
	cr_assert_eq(sh("%s render tests/data/farm_loop.json --range 0-3 -o %s/s.mp4 -q", b, dir),
		     0);
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s.mp4 %s/b.mp4 -o %s/x.mp4", dir, dir, dir), 3);
	cr_assert(strstr(slurp(errpath), "b.mp4: size differs") != NULL, "%s", slurp(errpath));
	cr_assert(!exists("%s/x.mp4", dir));
	cr_assert_eq(run_tp(NULL, errpath, "join %s/a.mp4 %s/b.mp4 %s/c.mp4 -o %s/x.mp4", dir, dir,
			    dir, dir),
		     0);
	cr_assert_eq(run_tp(NULL, errpath, "join %s/a.mp4 -o %s/x.mp4", dir, dir),
		     4); /* exists, no -y */
	cr_assert_eq(run_tp(NULL, errpath, "join %s/a.mp4", dir), 2);
}

/* Lines of a file, counted. */
static int count_lines(const char *path)
{
	int n = 0;
	for (const char *s = slurp(path); *s; s++)
		n += *s == '\n';
	return n;
}

Test(farm, tasks_run_resume_and_never_share_a_file)
{
	const char *b = tp_bin();
	char t[1024];
	snprintf(t, sizeof t,
		 "tasks tests/data/tiny.json --frames 14 --chunk 4 --cache %s/c -o %s/o/v.mp4 -o "
		 "height=%s/o/h%%03d.png "
		 "--hash %s/o/v.manifest --bin %s",
		 dir, dir, dir, dir, b);
	cr_assert_eq(run_tp(outpath, errpath, "%s", t), 0, "%s", slurp(errpath));
	cr_assert_eq(count_lines(outpath), 1 + 4 + 2, "%s",
		     slurp(outpath)); /* cache, chunks, 2 joins */
	const char *o = slurp(outpath);
	cr_assert(strstr(o, " cache tests/data/tiny.json -O ") != NULL, "%s", o);
	cr_assert(strstr(o, "--range 12-13 --cache") != NULL, "%s", o);
	cr_assert(strstr(o, "/o/v.part0012-0013.mp4") && strstr(o, "/o/v.part0012-0013.manifest"),
		  "%s", o);
	/* no output path is given to two chunks */
	cr_assert_eq(sh("grep -o -- '-o [^ ]*part[^ ]*' %s | sort | uniq -d | grep -q .", outpath),
		     1);
	/* run cache, chunks (two at a time), joins */
	cr_assert_eq(run_tp(outpath, errpath, "%s --step cache", t), 0);
	cr_assert_eq(sh("sh %s", outpath), 0);
	cr_assert_eq(run_tp(outpath, errpath, "%s --step render", t), 0);
	cr_assert_eq(sh("xargs -d '\\n' -P 2 -I CMD sh -c CMD < %s", outpath), 0);
	cr_assert_eq(run_tp(outpath, errpath, "%s --step join", t), 0);
	cr_assert_eq(sh("sh %s", outpath), 0);
	cr_assert_eq(
		sh("%s render tests/data/tiny.json --frames 14 -o null --hash %s/ref.manifest -q",
		   b, dir),
		0);
	char ref[128], got[128];
	snprintf(ref, sizeof ref, "%s/ref.manifest", dir);
	snprintf(got, sizeof got, "%s/o/v.manifest", dir);
	cr_assert(files_equal(ref, got));
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0);
	cr_assert_str_eq(slurp(outpath), "");
	/* a lost checkpoint: the cache step comes back and makes it again */
	cr_assert_eq(sh("rm %s/c/frame-00000008.tpck", dir), 0);
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0);
	cr_assert_eq(count_lines(outpath), 1, "%s", slurp(outpath));
	cr_assert_eq(sh("sh %s", outpath), 0);
	cr_assert(exists("%s/c/frame-00000008.tpck", dir));
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0);
	cr_assert_str_eq(slurp(outpath), "");
	/* a lost frame: only its chunk (and the joins) come back */
	cr_assert_eq(sh("rm %s/o/h006.png", dir), 0);
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing --step render", t), 0);
	cr_assert_eq(count_lines(outpath), 1, "%s", slurp(outpath));
	cr_assert(strstr(slurp(outpath), "--range 4-7") != NULL, "%s", slurp(outpath));
	cr_assert_eq(sh("sh %s", outpath), 0);
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing --step render", t), 0);
	cr_assert_str_eq(slurp(outpath), "");
	/* the Slurm driver: cache job, array over the chunks, join job after it */
	cr_assert_eq(run_tp(outpath, errpath, "%s --slurm", t), 0);
	o = slurp(outpath);
	cr_assert(strstr(o, "#!/bin/sh") == o, "%s", o);
	cr_assert(strstr(o, "sbatch --parsable --job-name=tp-cache") != NULL, "%s", o);
	cr_assert(strstr(o, "--array=0-3 $dep") != NULL, "%s", o);
	cr_assert(strstr(o, "3) exec ") != NULL && strstr(o, "--job-name=tp-join $dep") != NULL,
		  "%s", o);
	cr_assert_eq(sh("sh -n %s", outpath), 0);
	/* a single PNG cannot be split */
	cr_assert_eq(
		run_tp(NULL, errpath, "tasks tests/data/tiny.json --chunk 2 -o %s/one.png", dir),
		3);
	cr_assert(strstr(slurp(errpath), "cannot be split into chunks") != NULL, "%s",
		  slurp(errpath));
}

/* Starts a chunk in the background, waits for its temporary MP4, kills it with sig. */
static void kill_midway(const char *cmd, int sig)
{
	char full[4096];
	snprintf(full, sizeof full, "%s & echo $! > %s/pid; wait", cmd, dir);
	pid_t child = fork();
	cr_assert_neq(child, -1);
	if (child == 0) {
		execl("/bin/sh", "sh", "-c", full, (char *)NULL);
		_exit(127);
	}
	int seen = 0;
	for (int i = 0; i < 600 && !seen; i++) {
		usleep(10000);
		seen = sh("ls -a %s/o | grep -q 'seg.*tmp'", dir) == 0;
	}
	cr_assert(seen, "the chunk never started writing");
	usleep(100000);
	pid_t pid = (pid_t)atoi(slurp(strcat(strcpy(full, dir), "/pid")));
	cr_assert_gt(pid, 0);
	cr_assert_eq(kill(pid, sig), 0, "the chunk finished before it could be killed");
	int st;
	waitpid(child, &st, 0);
}

Test(farm, a_killed_chunk_leaves_nothing_and_reruns)
{
	const char *b = tp_bin();
	char cmd[1024], t[1024];
	/* big enough to be killed midway, even without sanitizers */
	snprintf(t, sizeof t,
		 "%s tasks tests/data/tiny.json --frames 400 --chunk 200 --set size='[640,480]' -o "
		 "%s/o/seg.mp4 "
		 "--hash %s/o/h.manifest --bin %s --step render",
		 b, dir, dir, b);
	cr_assert_eq(sh("%s > %s/tasks", t, dir), 0);
	/* exec: the process killed is the render itself, as a scheduler would kill it */
	cr_assert_eq(sh("head -n 1 %s/tasks | sed 's/^/exec /' > %s/chunk0", dir, dir), 0);
	snprintf(cmd, sizeof cmd, "sh %s/chunk0", dir);
	cr_assert_eq(sh("mkdir -p %s/o", dir), 0);
	for (int round = 0; round < 2; round++) {
		/* SIGKILL leaves its temporaries (hidden names, never final ones): clear them so
		 * the next round waits for its own */
		cr_assert_eq(sh("rm -f %s/o/.*tmp-*", dir), 0);
		kill_midway(cmd, round ? SIGTERM : SIGKILL);
		cr_assert(!exists("%s/o/seg.part0000-0199.mp4", dir),
			  "a partial segment under its final name");
		cr_assert(!exists("%s/o/h.part0000-0199.manifest", dir),
			  "a partial manifest under its final name");
		cr_assert_eq(sh("%s --missing | grep -q -- '--range 0-199'", t), 0);
		if (round == 1) /* SIGTERM: the chunk cleaned up its temporaries too */
			cr_assert_eq(sh("ls -a %s/o | grep -q tmp-", dir), 1);
	}
	cr_assert_eq(sh("%s", cmd), 0);
	cr_assert(exists("%s/o/seg.part0000-0199.mp4", dir));
	cr_assert_eq(sh("%s --missing | grep -c -- --range | grep -qx 1", t), 0); /* only chunk 1 */
}

Test(farm, batch_tasks_and_a_variant_range)
{
	const char *b = tp_bin();
	cr_assert_eq(run_tp(outpath, errpath,
			    "batch tests/data/tiny.json --vary seed=1..2 --set "
			    "output='\"f%%04d.png\"' -O %s/v --frames 8 "
			    "--tasks --bin %s",
			    dir, b),
		     0, "%s", slurp(errpath));
	cr_assert_eq(count_lines(outpath), 3, "%s", slurp(outpath));
	cr_assert_eq(sh("tail -n 1 %s | grep -q -- '--sheet-only'", outpath), 0);
	cr_assert_eq(sh("head -n 2 %s | xargs -d '\\n' -P 2 -I CMD sh -c CMD && tail -n 1 %s | sh",
			outpath, outpath),
		     0);
	cr_assert(exists("%s/v/contact.png", dir));
	/* a variant's chunk: the variant's frames */
	cr_assert_eq(
		sh("%s render tests/data/tiny.json --frames 8 --set seed=2 -o %s/a/%%04d.png -q && "
		   "%s cache tests/data/tiny.json --frames 8 --set seed=2 -O %s/c --every 3 -q && "
		   "%s render tests/data/tiny.json --frames 8 --set seed=2 --range 4-7 --cache "
		   "%s/c -o %s/b/%%04d.png -q",
		   b, dir, b, dir, b, dir, dir),
		0);
	for (int k = 4; k < 8; k++) {
		char x[128], y[128];
		snprintf(x, sizeof x, "%s/a/%04d.png", dir, k);
		snprintf(y, sizeof y, "%s/b/%04d.png", dir, k);
		cr_assert(files_equal(x, y), "frame %d", k);
	}
}

Test(farm, usage_errors_and_help)
{
	const char *cmds[] = {"cache", "tasks", "join"};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(run_tp(outpath, errpath, "%s --help", cmds[i]), 0);
		cr_assert(strstr(slurp(outpath), "usage: tidepool") != NULL);
	}
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json --range 5-3 -o null"), 2);
	cr_assert(strstr(slurp(errpath), "--range: expected A-B") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json --range 2-9 -o null"), 2);
	cr_assert(strstr(slurp(errpath), "has 6 frames (0-5)") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json --cache %s -o null", dir),
		     2);
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --range 0-2 --flipbook 2x2 -o %s/a.png",
			    dir),
		     2);
	cr_assert(strstr(slurp(errpath), "cannot be rendered by --range") != NULL, "%s",
		  slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --range 1-2 --cache %s/none -o null", dir),
		     4);
	cr_assert_eq(run_tp(NULL, errpath, "cache tests/data/tiny.json -O %s/c", dir), 2);
	cr_assert_eq(run_tp(NULL, errpath, "tasks tests/data/tiny.json -o null"), 2);
	cr_assert_eq(
		run_tp(NULL, errpath, "tasks tests/data/tiny.json --chunk 2 --step bogus -o null"),
		2);
	cr_assert_eq(run_tp(NULL, errpath, "tasks tests/data/tiny.json --chunk 2 --flipbook 2x2 -o null"), 2);
	cr_assert(strstr(slurp(errpath), "cannot be rendered in chunks") != NULL, "%s", slurp(errpath));
}

/* tasks refuses up front what every chunk's render would refuse, with render's message
 * (issue 46): an odd MP4 size, a mode the solver cannot render; nothing is
 * printed or created. */
Test(farm, tasks_refuses_what_render_would)
{
	static const char *const opts[] = {
		"--size 97x64 -o %s/o/out.mp4",
		"--size 96x63 -o %s/o/f%%04d.png -o %s/o/out.mp4",
		"-o particles=%s/o/p%%04d.png -o %s/o/out.mp4",
	};
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		char o[256];
		snprintf(o, sizeof o, opts[i], dir, dir);
		int rr = run_tp(NULL, errpath, "render tests/data/tiny.json --frames 12 %s", o);
		char *rerr = strdup(slurp(errpath));
		cr_assert_neq(rr, 0, "%s", o);
		int tr = run_tp(outpath, errpath, "tasks tests/data/tiny.json --frames 12 --chunk 4 %s",
				o);
		cr_assert_eq(tr, rr, "%s: tasks %d, render %d: %s", o, tr, rr, slurp(errpath));
		cr_assert_str_eq(slurp(errpath), rerr);
		cr_assert_str_eq(slurp(outpath), "");
		free(rerr);
	}
	cr_assert(!exists("%s/o", dir), "tasks created the output directory");
}

/* --cache DIR that holds no checkpoint of this render says so (issue 46): an empty DIR is
 * refused unless --allow-empty-cache, and a DIR of another scene's checkpoints, none at or
 * before A, is refused with the reason. */
Test(farm, a_cache_without_checkpoints_is_refused)
{
	cr_assert_eq(sh("mkdir -p %s/empty", dir), 0);
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 12 --range 5-6 --cache %s/empty "
			    "-o %s/e%%02d.png",
			    dir, dir),
		     3);
	cr_assert(strstr(slurp(errpath), "/empty: holds no checkpoint (run 'tidepool cache' "
					 "first, or give --allow-empty-cache"),
		  "%s", slurp(errpath));
	cr_assert(!exists("%s/e05.png", dir));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 12 --range 5-6 --cache %s/empty "
			    "--allow-empty-cache -o %s/e%%02d.png -q",
			    dir, dir),
		     0, "%s", slurp(errpath));
	cr_assert(exists("%s/e05.png", dir) && exists("%s/e06.png", dir));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 12 --range 5-6 "
			    "--allow-empty-cache -o null"),
		     2);
	cr_assert(strstr(slurp(errpath), "--allow-empty-cache goes with --cache DIR"), "%s",
		  slurp(errpath));
	/* another scene's checkpoints (at 8 only): range 1-2 has none of its own to use */
	cr_assert_eq(run_tp(NULL, errpath,
			    "cache tests/data/tiny.json --frames 12 --seed 9 -O %s/other --every 8",
			    dir),
		     0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 12 --range 1-2 --cache %s/other "
			    "-o null",
			    dir),
		     3);
	cr_assert(strstr(slurp(errpath), "frame-00000008.tpck: made for another scene"), "%s",
		  slurp(errpath));
}
