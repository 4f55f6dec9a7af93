/* Farm outputs prove where they came from (issue 30): checkpoints, MP4 segments, manifests
 * and PNG frames record the fingerprint of the scene and options, the render's frame range
 * and a checksum; damaged or foreign files are refused with the reason, or remade by
 * `tasks --missing`; join refuses gaps at either end; a cache folder is locked while
 * written; FIFOs never hang a read; write errors name the file and the system's reason. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"

static char dir[64];
static char errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "proof");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
	snprintf(outpath, sizeof outpath, "%s/stdout", dir);
}

static void teardown(void)
{
	char cmd[160];
	/* the write-error test mounts a small tmpfs here */
	snprintf(cmd, sizeof cmd, "umount %s/full 2>/dev/null", dir);
	int unmounted = system(cmd); /* fails when nothing is mounted: fine */
	(void)unmounted;
	tp_tmpdir_remove(dir);
}

TestSuite(farm_proof, .init = setup, .fini = teardown, .timeout = 240);

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

#define ERR_HAS(s) cr_assert(strstr(slurp(errpath), (s)) != NULL, "%s", slurp(errpath))

/* XORs `n` bytes of path at `at` (a fraction of its size) with 0x5a: bit rot. */
static void damage(const char *path, double at, int n)
{
	FILE *f = fopen(path, "r+b");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	long size = ftell(f), pos = (long)(size * at);
	cr_assert_lt(pos + n, size);
	uint8_t buf[4096];
	fseek(f, pos, SEEK_SET);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	for (int i = 0; i < n; i++)
		buf[i] ^= 0x5a;
	fseek(f, pos, SEEK_SET);
	cr_assert_eq(fwrite(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
}

Test(farm_proof, a_damaged_checkpoint_is_refused_with_the_reason)
{
	const char *sc = "tests/data/farm_shallow.json --frames 12";
	static const struct {
		double at;
		int n;
	} rot[] = {{0.1, 64}, {0.5, 4096}, {0.9, 64}};
	for (size_t i = 0; i < sizeof rot / sizeof rot[0]; i++) {
		cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4 -y -q", sc, dir), 0,
			     "%s", slurp(errpath));
		char p[128];
		snprintf(p, sizeof p, "%s/c/frame-00000008.tpck", dir);
		damage(p, rot[i].at, rot[i].n);
		cr_assert_eq(run_tp(NULL, errpath, "render %s --range 9-10 --cache %s/c -o null",
				    sc, dir),
			     3, "%s", slurp(errpath));
		ERR_HAS("frame-00000008.tpck: damaged (the checksum of its header and state does not match");
		/* tasks --missing counts it as missing: the cache step comes back */
		cr_assert_eq(run_tp(outpath, errpath,
				    "tasks %s --chunk 4 --cache %s/c -o null --missing", sc, dir),
			     0);
		cr_assert(strstr(slurp(outpath), " cache ") != NULL, "%s", slurp(outpath));
		/* the cache step refuses it without -y, and remakes it with -y */
		cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4 -q", sc, dir), 3);
		ERR_HAS("damaged");
	}
}

/* Renders the farm of `set` (a --set) with tasks into dir/o, running every step. */
static void farm(const char *t, const char *set)
{
	cr_assert_eq(run_tp(outpath, errpath, "%s %s", t, set), 0, "%s", slurp(errpath));
	cr_assert_eq(sh("sh %s 2>%s", outpath, errpath), 0, "%s", slurp(errpath));
}

Test(farm_proof, missing_after_a_change_of_settings_makes_the_new_film)
{
	const char *b = tp_bin();
	char t[1024];
	snprintf(t, sizeof t,
		 "tasks tests/data/tiny.json --frames 14 --chunk 4 --cache %s/c -o %s/o/v.mp4 -o "
		 "height=%s/o/h%%03d.png --hash %s/o/v.manifest --bin %s",
		 dir, dir, dir, dir, b);
	farm(t, "");
	/* nothing deleted, one --set changed: everything is made again */
	cr_assert_eq(run_tp(outpath, errpath, "%s --set params.damping=3 --missing", t), 0);
	const char *o = slurp(outpath);
	cr_assert(strstr(o, " cache ") && strstr(o, "--range 0-3") && strstr(o, "--range 12-13") &&
			  strstr(o, " join "),
		  "%s", o);
	ERR_HAS("made by other settings");
	cr_assert_eq(sh("sh %s", outpath), 0);
	cr_assert_eq(run_tp(outpath, errpath, "%s --set params.damping=3 --missing", t), 0);
	cr_assert_str_eq(slurp(outpath), "");
	/* exactly the film of the new settings: a fresh farm run elsewhere, and one render */
	char t2[1024];
	snprintf(t2, sizeof t2,
		 "tasks tests/data/tiny.json --frames 14 --chunk 4 --cache %s/c2 -o %s/n/v.mp4 -o "
		 "height=%s/n/h%%03d.png --hash %s/n/v.manifest --bin %s --set params.damping=3",
		 dir, dir, dir, dir, b);
	farm(t2, "");
	char a[128], c[128];
	snprintf(a, sizeof a, "%s/o/v.mp4", dir);
	snprintf(c, sizeof c, "%s/n/v.mp4", dir);
	cr_assert(files_equal(a, c), "the resumed film differs from a fresh one");
	for (int k = 0; k < 14; k++) {
		snprintf(a, sizeof a, "%s/o/h%03d.png", dir, k);
		snprintf(c, sizeof c, "%s/n/h%03d.png", dir, k);
		cr_assert(files_equal(a, c), "frame %d", k);
	}
	cr_assert_eq(sh("%s render tests/data/tiny.json --frames 14 --set params.damping=3 -o "
			"null --hash %s/ref.manifest -q",
			b, dir),
		     0);
	snprintf(a, sizeof a, "%s/ref.manifest", dir);
	snprintf(c, sizeof c, "%s/o/v.manifest", dir);
	cr_assert(files_equal(a, c));
	/* a damaged segment is counted as missing too, and only its chunk comes back */
	snprintf(a, sizeof a, "%s/o/v.part0004-0007.mp4", dir);
	damage(a, 0.6, 64);
	cr_assert_eq(
		run_tp(outpath, errpath, "%s --set params.damping=3 --missing --step render", t),
		0);
	cr_assert(strstr(slurp(outpath), "--range 4-7") && !strstr(slurp(outpath), "--range 0-3"),
		  "%s", slurp(outpath));
	ERR_HAS("v.part0004-0007.mp4: damaged");
}

Test(farm_proof, missing_with_png_frames_and_no_cache)
{
	const char *b = tp_bin();
	char t[1024];
	snprintf(t, sizeof t,
		 "tasks tests/data/tiny.json --frames 8 --chunk 4 -o %s/p/%%03d.png --bin %s", dir,
		 b);
	farm(t, "");
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0);
	cr_assert_str_eq(slurp(outpath), "");
	cr_assert_eq(run_tp(outpath, errpath, "%s --seed 9 --missing", t), 0);
	cr_assert(strstr(slurp(outpath), "--range 0-3") && strstr(slurp(outpath), "--range 4-7"),
		  "%s", slurp(outpath));
	/* a damaged frame (its pixels' CRC) and a frame of another program */
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0);
	char p[128];
	snprintf(p, sizeof p, "%s/p/005.png", dir);
	damage(p, 0.7, 16);
	cr_assert_eq(run_tp(NULL, NULL,
			    "render tests/data/tiny.json --frames 1 -o %s/p/001.png -y -q", dir),
		     0);
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0);
	cr_assert(strstr(slurp(outpath), "--range 0-3") && strstr(slurp(outpath), "--range 4-7"),
		  "%s", slurp(outpath));
}

/* An OpenEXR pattern: tasks fingerprints it as render does (encoder exr, not png), so
 * --missing finds its chunks done; a cut frame or a frame of other settings is made
 * again. */
Test(farm_proof, missing_with_exr_frames)
{
	const char *b = tp_bin();
	char t[1024];
	snprintf(t, sizeof t,
		 "tasks tests/data/tiny.json --frames 8 --chunk 4 -o height=%s/e/%%03d.exr --bin %s",
		 dir, b);
	farm(t, "");
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0, "%s", slurp(errpath));
	cr_assert_str_eq(slurp(outpath), "", "%s", slurp(errpath));
	cr_assert_eq(run_tp(outpath, errpath, "%s --seed 9 --missing", t), 0);
	cr_assert(strstr(slurp(outpath), "--range 0-3") && strstr(slurp(outpath), "--range 4-7"),
		  "%s", slurp(outpath));
	/* frame 5 cut short, frame 1 from a render of other settings */
	char p[128];
	snprintf(p, sizeof p, "%s/e/005.exr", dir);
	cr_assert_eq(sh("truncate -s -100 %s", p), 0);
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 8 --range 1-1 --seed 4 "
			    "-o height=%s/e/%%03d.exr -y -q",
			    dir),
		     0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(outpath, errpath, "%s --missing", t), 0);
	cr_assert(strstr(slurp(outpath), "--range 0-3") && strstr(slurp(outpath), "--range 4-7"),
		  "%s", slurp(outpath));
	cr_assert(strstr(slurp(errpath), "2 files to make again"), "%s", slurp(errpath));
	cr_assert(strstr(slurp(errpath), "001.exr: made by other settings"), "%s", slurp(errpath));
}

Test(farm_proof, join_refuses_other_settings_damage_and_gaps_at_either_end)
{
	const char *b = tp_bin();
	const char *sc = "tests/data/tiny.json --frames 12";
	const char *r[3] = {"0-3", "4-7", "8-11"};
	for (int i = 0; i < 3; i++)
		cr_assert_eq(sh("%s render %s --range %s -o %s/s%d.mp4 --hash %s/s%d.manifest -q",
				b, sc, r[i], dir, i, dir, i),
			     0);
	cr_assert_eq(
		sh("%s render %s --seed 7 --range 4-7 -o %s/x1.mp4 --hash %s/x1.manifest -q "
		   "&& %s render tests/data/tiny.json --frames 16 --range 8-11 -o %s/x2.mp4 -q",
		   b, sc, dir, dir, b, dir),
		0);
	/* another seed: the fingerprint differs */
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s0.mp4 %s/x1.mp4 %s/s2.mp4 -o %s/j.mp4", dir,
			    dir, dir, dir),
		     3);
	ERR_HAS("x1.mp4: made by other settings than");
	cr_assert_eq(run_tp(NULL, errpath,
			    "join %s/s0.manifest %s/x1.manifest %s/s2.manifest -o %s/j.manifest",
			    dir, dir, dir, dir),
		     3);
	ERR_HAS("x1.manifest: made by other settings than");
	/* another frame count */
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s0.mp4 %s/s1.mp4 %s/x2.mp4 -o %s/j.mp4", dir,
			    dir, dir, dir),
		     3);
	ERR_HAS("x2.mp4: made by other settings than");
	/* the first or the last chunk missing */
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s1.mp4 %s/s2.mp4 -o %s/j.mp4", dir, dir, dir),
		     3);
	ERR_HAS("s1.mp4: starts at frame 4: frames 0-3 of the 12-frame render are missing");
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s0.mp4 %s/s1.mp4 -o %s/j.mp4", dir, dir, dir),
		     3);
	ERR_HAS("s1.mp4: ends at frame 7: frames 8-11 of the 12-frame render are missing");
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s0.manifest %s/s1.manifest -o %s/j.manifest",
			    dir, dir, dir),
		     3);
	ERR_HAS("frames 8-11 of the 12-frame render are missing");
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s0.mp4 %s/s1.mp4 -o %s/j.mp4 --partial", dir,
			    dir, dir),
		     0, "%s", slurp(errpath));
	ERR_HAS("frames 0-7 (8)");
	/* the joined file records what it holds, of which render, and its own checksum */
	cr_assert_eq(
		sh("ffprobe -v error -show_entries format_tags=comment -of csv=p=0 %s/j.mp4 "
		   "| grep -q '^tidepool frames 0-7 of 12; fingerprint [0-9a-f]*; xxh3 [0-9a-f]*$'",
		   dir),
		0);
	/* damage: a packet's bytes, a manifest line */
	char p[128];
	snprintf(p, sizeof p, "%s/s1.mp4", dir);
	damage(p, 0.8, 32);
	cr_assert_eq(run_tp(NULL, errpath, "join %s/s0.mp4 %s/s1.mp4 %s/s2.mp4 -o %s/j.mp4 -y", dir,
			    dir, dir, dir),
		     3);
	ERR_HAS("s1.mp4: damaged");
	cr_assert_eq(sh("sed -i 's/^5 \\(.\\)/5 \\1\\1/' %s/s1.manifest", dir), 0);
	cr_assert_eq(run_tp(NULL, errpath,
			    "join %s/s0.manifest %s/s1.manifest %s/s2.manifest -o %s/j.manifest",
			    dir, dir, dir, dir),
		     3);
	ERR_HAS("s1.manifest:");
	ERR_HAS("damaged");
}

/* Another writer holds the cache's lock with `record` in its file. */
static int hold_lock(const char *record)
{
	char p[128];
	snprintf(p, sizeof p, "%s/c/.tidepool-cache.lock", dir);
	int fd = open(p, O_RDWR | O_CREAT, 0666);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	if (record) {
		cr_assert_eq(ftruncate(fd, 0), 0);
		cr_assert_eq(pwrite(fd, record, strlen(record), 0), (ssize_t)strlen(record));
	}
	return fd;
}

Test(farm_proof, a_cache_folder_is_locked_while_written)
{
	const char *sc = "tests/data/tiny.json --frames 12";
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4 -q", sc, dir), 0);
	char p[128];
	snprintf(p, sizeof p, "%s/c/.tidepool-cache.lock", dir);
	char mine[256];
	snprintf(mine, sizeof mine, "%.200s", slurp(p));
	cr_assert_eq(strlen(mine) > 64 && mine[64] == ' ', 1, "%s", mine);
	/* a writer of other settings holds it: refused with the reason */
	int fd = hold_lock(
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef pid 1\n");
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4 -y", sc, dir), 4);
	ERR_HAS("being written by another 'tidepool cache' of other settings");
	close(fd);
	/* one of the same settings: waits for it (still waiting when timed out) */
	fd = hold_lock(mine);
	cr_assert_eq(sh("timeout 3 %s cache %s -O %s/c --every 4 2>%s", tp_bin(), sc, dir, errpath),
		     124);
	ERR_HAS("is writing it; waiting");
	close(fd);
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/c --every 4", sc, dir), 0);
}

Test(farm_proof, fifos_are_refused_not_waited_for)
{
	const char *b = tp_bin();
	const char *sc = "tests/data/tiny.json --frames 12";
	cr_assert_eq(sh("mkdir -p %s/c && mkfifo %s/c/frame-00000004.tpck %s/seg.mp4 "
			"%s/m.manifest %s/f000.png",
			dir, dir, dir, dir, dir),
		     0);
	cr_assert_eq(sh("timeout 20 %s render %s --range 5-6 --cache %s/c -o null 2>%s", b, sc, dir,
			errpath),
		     3);
	ERR_HAS("frame-00000004.tpck: is a FIFO");
	cr_assert_eq(sh("timeout 20 %s cache %s -O %s/c --every 4 2>%s", b, sc, dir, errpath), 3);
	ERR_HAS("is a FIFO");
	cr_assert_eq(sh("timeout 20 %s join %s/seg.mp4 -o %s/j.mp4 2>%s", b, dir, dir, errpath), 3);
	ERR_HAS("seg.mp4: is a FIFO");
	cr_assert_eq(
		sh("timeout 20 %s join %s/m.manifest -o %s/j.manifest 2>%s", b, dir, dir, errpath),
		3);
	ERR_HAS("m.manifest: is a FIFO");
	cr_assert_eq(sh("timeout 20 %s tasks %s --chunk 4 -o %s/f%%03d.png --missing >%s 2>%s", b,
			sc, dir, outpath, errpath),
		     0);
	cr_assert(strstr(slurp(outpath), "--range 0-3") != NULL, "%s", slurp(outpath));
}

/* A 96 kB tmpfs at dir/full, or skipped when mounting is not allowed. */
static int small_disk(void)
{
	if (sh("mkdir -p %s/full && mount -t tmpfs -o size=96k tmpfs %s/full 2>/dev/null", dir,
	       dir)) {
		cr_skip_test("cannot mount a small tmpfs here (needs root)");
		return 0;
	}
	return 1;
}

Test(farm_proof, write_errors_name_the_file_and_the_reason)
{
	if (!small_disk())
		return;
	const char *sc = "tests/data/farm_shallow.json --frames 12";
	cr_assert_eq(run_tp(NULL, errpath, "cache %s -O %s/full/c --every 2", sc, dir), 4);
	ERR_HAS("/full/c/frame-0000000");
	ERR_HAS(".tpck: write failed (No space left on device)");
	cr_assert_eq(sh("rm -rf %s/full/c", dir), 0);
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render tests/data/tiny.json --frames 3 --size 960x640 -o %s/full/%%03d.png",
		       dir),
		4);
	ERR_HAS("/full/00");
	ERR_HAS("No space left on device");
	cr_assert_eq(sh("rm -rf %s/full/*", dir), 0);
	/* OpenEXR too: the system's reason, not OpenEXR's code (issue 46) */
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 3 --size 960x640 "
			    "-o height=%s/full/h%%03d.exr",
			    dir),
		     4);
	ERR_HAS("/full/h00");
	ERR_HAS(".exr: write failed (No space left on device)");
	cr_assert(strstr(slurp(errpath), "EXR_ERR") == NULL, "%s", slurp(errpath));
	cr_assert_eq(sh("rm -rf %s/full/*", dir), 0);
	/* a join: the output named, not a segment */
	const char *b = tp_bin();
	cr_assert_eq(sh("%s render tests/data/tiny.json --frames 40 --size 360x240 --crf 0 "
			"--range 0-19 -o %s/a.mp4 -q && %s render tests/data/tiny.json --frames 40 "
			"--size 360x240 --crf 0 --range 20-39 -o %s/b.mp4 -q",
			b, dir, b, dir),
		     0);
	cr_assert_eq(sh("dd if=/dev/zero of=%s/full/pad bs=1k count=40 2>/dev/null", dir), 0);
	cr_assert_eq(
		run_tp(NULL, errpath, "join %s/a.mp4 %s/b.mp4 -o %s/full/j.mp4", dir, dir, dir), 4,
		"%s", slurp(errpath));
	ERR_HAS("/full/j.mp4: ");
	ERR_HAS("No space left on device");
	cr_assert(strstr(slurp(errpath), "a.mp4") == NULL, "%s", slurp(errpath));
}

/* A path too long for the message: its middle shortened, the file name and the system's
 * reason whole (an EXR whose name is over NAME_MAX once made a temporary name). */
Test(farm_proof, a_long_path_keeps_its_file_name_and_the_reason)
{
	char p[2048];
	int k = snprintf(p, sizeof p, "%s", dir);
	for (int i = 0; i < 6; i++) {
		k += snprintf(p + k, sizeof p - (size_t)k, "/%c", 'a' + i);
		for (int j = 0; j < 200; j++)
			p[k++] = (char)('a' + i);
		p[k] = '\0';
	}
	k += snprintf(p + k, sizeof p - (size_t)k, "/");
	for (int j = 0; j < 250; j++)
		p[k++] = 'n';
	snprintf(p + k, sizeof p - (size_t)k, "%%03d.exr");
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json --frames 2 -o height=%s", p),
		     4);
	const char *m = slurp(errpath);
	cr_assert(strstr(m, "...") != NULL, "%s", m);
	ERR_HAS("nnnnnnnnnn000.exr: write failed (File name too long)\n");
	cr_assert(!strncmp(m, "tidepool: /tmp/", 15), "%s", m);
}

Test(farm_proof, odd_mp4_sizes_are_refused_before_rendering)
{
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 2 --size 101x67 -o %s/v.mp4",
			    dir),
		     2);
	ERR_HAS("v.mp4: 101x67: H.264 in 4:2:0 needs an even width and height");
	ERR_HAS("render at 100x66 or 102x68");
	cr_assert(access(outpath, F_OK) != 0);
	/* PNG frames at an odd size still work, and so does the even size it names */
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render tests/data/tiny.json --frames 2 --size 101x67 -o %s/%%02d.png -q",
		       dir),
		0);
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 2 --size 102x68 -o %s/v.mp4 -q",
			    dir),
		     0);
	cr_assert_eq(sh("ffprobe -v error -show_entries stream=width,height -of csv=p=0 %s/v.mp4 | "
			"grep -qx 102,68",
			dir),
		     0);
}
