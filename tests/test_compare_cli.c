/* tidepool compare end to end: exit codes, tolerances, masks, reports, --update, render
 * --hash, videos, and agreement with ImageMagick's AE and PSNR. */
#include <cjson/cJSON.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "util/png.h"
#include "util/rng.h"

static char dir[64];
static char errpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "cmpcli");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(compare_cli, .init = setup, .fini = teardown, .timeout = 120);

static tp_image random_image(int w, int h, uint64_t seed)
{
	tp_image img;
	tp_rng r;
	tp_rng_seed(&r, seed, 9);
	cr_assert_eq(tp_image_alloc(&img, w, h, TP_RGB8), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < 3 * w; x++)
			tp_image_row(&img, y)[x] = (uint8_t)tp_rng_below(&r, 256);
	return img;
}

/* Writes img to dir/name (sub-directories created by the caller). */
static void put(const char *name, const tp_image *img)
{
	char path[256];
	tp_err err;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_eq(tp_png_write(path, img, 1, &err), 0, "%s", err.msg);
}

static void mk(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_eq(mkdir(path, 0777), 0);
}

static const char *err_text(void)
{
	return slurp(errpath);
}

/* Golden g/ and test t/ sequences of 3 frames; frame 1 of t differs in a 4x3 block by
 * +delta in the red channel. */
static void two_sequences(int delta)
{
	mk("g");
	mk("t");
	for (int k = 0; k < 3; k++) {
		tp_image img = random_image(32, 24, 40 + (uint64_t)k);
		char name[64];
		snprintf(name, sizeof name, "g/%04d.png", k);
		put(name, &img);
		if (k == 1)
			for (int y = 10; y < 13; y++)
				for (int x = 5; x < 9; x++) {
					uint8_t *p = tp_image_row(&img, y) + 3 * x;
					p[0] = (uint8_t)(p[0] + delta > 255 ? p[0] - delta : p[0] + delta);
				}
		snprintf(name, sizeof name, "t/%04d.png", k);
		put(name, &img);
		tp_image_free(&img);
	}
}

Test(compare_cli, exit_codes)
{
	two_sequences(30);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/g", dir, dir), 0, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t", dir, dir), 1, "%s", err_text());
	cr_assert(strstr(err_text(), "frame 1: FAIL: max-diff 30 > 0") != NULL, "%s", err_text());
	cr_assert(strstr(err_text(), "worst: frame 1") != NULL, "%s", err_text());
	/* 2: usage. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g", dir), 2);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --max-diff 300", dir, dir), 2);
	cr_assert(strstr(err_text(), "--max-diff: expected 0..255") != NULL, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --ignore 1,2,3", dir, dir), 2);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --frobnicate", dir, dir), 2);
	/* 3: missing or unreadable input. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/nothing", dir, dir), 3);
	cr_assert(strstr(err_text(), "nothing: No such file or directory") != NULL, "%s", err_text());
	char path[256];
	snprintf(path, sizeof path, "%s/t/0002.png", dir);
	FILE *f = fopen(path, "r+b");
	cr_assert_not_null(f);
	fseek(f, 40, SEEK_SET);
	fputs("garbage garbage garbage", f);
	fclose(f);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t", dir, dir), 3);
	cr_assert(strstr(err_text(), "0002.png") != NULL, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare --help"), 0);
	/* 4: a report that cannot be written (its directory would be under a file). */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/g --json %s/g/0000.png/r.json", dir, dir, dir), 4);
	cr_assert(strstr(err_text(), "cannot create") != NULL, "%s", err_text());
}

Test(compare_cli, count_and_size_mismatches_are_reported_not_compared)
{
	two_sequences(0);
	char path[256];
	snprintf(path, sizeof path, "%s/t/0002.png", dir);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --max-diff 255", dir, dir), 1);
	cr_assert(strstr(err_text(), "frame count differs: A has 3, B has 2") != NULL, "%s", err_text());
	cr_assert(strstr(err_text(), "frame 2: missing: no frame 2 in B") != NULL, "%s", err_text());
	tp_image small = random_image(16, 24, 1);
	put("t/0002.png", &small);
	tp_image_free(&small);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --max-diff 255", dir, dir), 1);
	cr_assert(strstr(err_text(), "size differs: A 32x24, B 16x24") != NULL, "%s", err_text());
}

Test(compare_cli, tolerances_combine_with_and)
{
	two_sequences(30); /* 12 pixels of 768 differ by 30 in one channel of frame 1 */
	const struct {
		const char *opts;
		int want;
	} cases[] = {
		{ "--max-diff 30", 0 },
		{ "--max-diff 29", 1 },
		{ "--max-pixels 12", 0 },
		{ "--max-pixels 11", 1 },
		{ "--max-pixels 0 --fuzz 30", 0 },
		{ "--max-pixels 0 --fuzz 29", 1 },
		{ "--max-ratio 1.5625%", 0 }, /* 12 / 768 */
		{ "--max-ratio 0.0156", 1 },
		{ "--min-psnr 30", 0 },       /* MSE = 12*900/2304 = 4.6875: 41.42 dB */
		{ "--min-psnr 41.5", 1 },
		{ "--min-ssim 0.9", 0 },
		{ "--min-ssim 0.9999", 1 },
		{ "--max-diff 30 --max-pixels 11", 1 },
		{ "--max-diff 30 --min-psnr 30 --min-ssim 0.9", 0 },
		{ "--ignore 5,10,4,3", 0 },
		{ "--ignore 5,10,4,2", 1 },
		{ "--ignore 0,0,6,24 --ignore 6,0,26,24", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t %s", dir, dir, cases[i].opts),
			     cases[i].want, "%s: %s", cases[i].opts, err_text());
}

Test(compare_cli, json_report_has_per_frame_metrics_and_bbox)
{
	two_sequences(30);
	char json[256];
	snprintf(json, sizeof json, "%s/r.json", dir);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --json %s --max-pixels 3", dir, dir, json), 1);
	cJSON *root = cJSON_Parse(slurp(json));
	cr_assert_not_null(root, "%s", slurp(json));
	cr_assert_str_eq(cJSON_GetObjectItem(root, "format")->valuestring, "tidepool-compare/1");
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(root, "passed")));
	cr_assert_eq(cJSON_GetObjectItem(root, "worst")->valueint, 1);
	cr_assert_eq(cJSON_GetObjectItem(root, "frames_compared")->valueint, 3);
	cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "tolerance"), "max_pixels")->valueint, 3);
	cJSON *frames = cJSON_GetObjectItem(root, "frames");
	cr_assert_eq(cJSON_GetArraySize(frames), 3);
	cJSON *f0 = cJSON_GetArrayItem(frames, 0), *f1 = cJSON_GetArrayItem(frames, 1);
	cr_assert_str_eq(cJSON_GetObjectItem(f0, "status")->valuestring, "identical");
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(f0, "psnr")));
	cr_assert_str_eq(cJSON_GetObjectItem(f1, "status")->valuestring, "fail");
	cr_assert_eq(cJSON_GetObjectItem(f1, "max_diff")->valueint, 30);
	cr_assert_eq(cJSON_GetObjectItem(f1, "pixels")->valueint, 12);
	cr_assert_float_eq(cJSON_GetObjectItem(f1, "mse")->valuedouble, 4.6875, 1e-9);
	cr_assert_float_eq(cJSON_GetObjectItem(f1, "psnr")->valuedouble, 10 * log10(65025 / 4.6875), 1e-6);
	cJSON *bbox = cJSON_GetObjectItem(f1, "bbox");
	const int want[4] = { 5, 10, 4, 3 };
	for (int k = 0; k < 4; k++)
		cr_assert_eq(cJSON_GetArrayItem(bbox, k)->valueint, want[k]);
	cJSON *failed = cJSON_GetObjectItem(f1, "failed");
	cr_assert_eq(cJSON_GetArraySize(failed), 1);
	cr_assert_str_eq(cJSON_GetArrayItem(failed, 0)->valuestring, "max_pixels");
	cJSON_Delete(root);
	/* Same report whatever the thread count, but for the line that says what made it (the
	 * command line and the date differ between runs). */
	char json2[256], cmd[2048];
	snprintf(json2, sizeof json2, "%s/r2.json", dir);
	cr_assert_eq(run_tp(NULL, NULL, "compare %s/g %s/t --json %s --threads 1 --max-pixels 3", dir, dir, json2), 1);
	cr_assert_eq(run_tp(NULL, NULL, "compare %s/g %s/t --json %s --threads 2 --max-pixels 3", dir, dir, json), 1);
	snprintf(cmd, sizeof cmd,
		 "grep -q '^  \"made\": ' %s && grep -v '^  \"made\": ' %s > %s.1 && "
		 "grep -v '^  \"made\": ' %s > %s.2 && cmp -s %s.1 %s.2",
		 json, json, json, json2, json, json, json);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(compare_cli, junit_report_has_a_case_per_frame)
{
	two_sequences(30);
	char xml[256];
	snprintf(xml, sizeof xml, "%s/r.xml", dir);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --junit %s -q", dir, dir, xml), 1);
	cr_assert_str_eq(err_text(), "", "-q is quiet");
	const char *x = slurp(xml);
	cr_assert(strncmp(x, "<?xml version=\"1.0\"", 19) == 0, "%s", x);
	cr_assert(strstr(x, "<testsuites name=\"tidepool compare\" tests=\"4\" failures=\"1\"") != NULL, "%s", x);
	cr_assert(strstr(x, "name=\"frame 000000\"/>") != NULL, "%s", x);
	cr_assert(strstr(x, "name=\"frame 000001\">\n      <failure type=\"fail\" message=\"max-diff 30 &gt; 0\">") != NULL, "%s", x);
	cr_assert(strstr(x, "</testsuites>\n") != NULL);
}

Test(compare_cli, diff_image_highlights_changes_over_faded_reference)
{
	two_sequences(30);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --diff %s/d", dir, dir, dir), 1);
	char path[256];
	snprintf(path, sizeof path, "%s/d/diff-000000.png", dir);
	cr_assert(access(path, F_OK) != 0, "no image for a passing frame");
	snprintf(path, sizeof path, "%s/d/diff-000001.png", dir);
	tp_image d;
	tp_err err;
	cr_assert_eq(tp_png_read(path, TP_RGB8, &d, &err), 0, "%s", err.msg);
	cr_assert_eq(d.w, 64);
	cr_assert_eq(d.h, 24);
	const uint8_t *changed = tp_image_row(&d, 11) + 3 * 6, *same = tp_image_row(&d, 0);
	cr_assert(changed[0] == 230 && changed[1] == 0 && changed[2] == 30);
	cr_assert(same[0] >= 191 && same[0] == same[1] && same[1] == same[2], "faded grey");
	const uint8_t *heat = tp_image_row(&d, 11) + 3 * (32 + 6), *cold = tp_image_row(&d, 0) + 3 * 32;
	cr_assert(heat[0] == 255 && heat[1] == 255 && heat[2] == 255, "max-diff is white");
	cr_assert(cold[0] == 0 && cold[1] == 0 && cold[2] == 0, "no difference is black");
	tp_image_free(&d);
}

static ino_t inode(const char *name)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return st.st_ino;
}

Test(compare_cli, update_rewrites_only_the_differing_golden_frames)
{
	two_sequences(30);
	ino_t i0 = inode("g/0000.png"), i1 = inode("g/0001.png"), i2 = inode("g/0002.png");
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --update", dir, dir), 0, "%s", err_text());
	cr_assert(strstr(err_text(), "--update rewrote 1 frame of") != NULL, "%s", err_text());
	cr_assert(strstr(err_text(), ": 1\n") != NULL, "%s", err_text());
	cr_assert_eq(inode("g/0000.png"), i0);
	cr_assert_neq(inode("g/0001.png"), i1);
	cr_assert_eq(inode("g/0002.png"), i2);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t", dir, dir), 0, "%s", err_text());
	/* Frames within tolerance are left alone. */
	tp_image other = random_image(32, 24, 77);
	put("t/0002.png", &other);
	tp_image_free(&other);
	i2 = inode("g/0002.png");
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --update --max-diff 255", dir, dir), 0);
	cr_assert_eq(inode("g/0002.png"), i2);
}

Test(compare_cli, manifests_render_hash_and_update)
{
	char m[256], m2[256], m3[256], cmd0[1024];
	snprintf(m, sizeof m, "%s/golden/tiny.manifest", dir);
	snprintf(m2, sizeof m2, "%s/t1.manifest", dir);
	snprintf(m3, sizeof m3, "%s/t2.manifest", dir);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o %s/f%%02d.png --hash %s --threads 1",
			    dir, m2), 0, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o null --hash %s --threads 2", m3),
		     0, "%s", err_text());
	cr_assert(files_equal(m2, m3), "same hashes for 1 and 2 threads");
	cr_assert(strncmp(slurp(m2), "tidepool-frame-hashes 1\nwidth 96\nheight 64\npixfmt rgb24\nhash xxh128\nfingerprint ", 78) == 0,
		  "%s", slurp(m2));
	/* A manifest against the PNGs it describes, either way round. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s/f%%02d.png", m2, dir), 0, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/f%%02d.png %s", dir, m2), 0, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s --ignore 0,0,1,1", m2, m3), 2);
	/* --update creates a missing golden manifest, then passes. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s --update", m, m2), 0, "%s", err_text());
	/* the same header and frames; render's record of where it came from is its own */
	snprintf(cmd0, sizeof cmd0, "grep -v '^fingerprint \\|^frames \\|^xxh3 ' %s | cmp -s - %s", m2, m);
	cr_assert_eq(system(cmd0), 0);
	/* A changed frame: the hash differs and no tolerance can pass it. */
	tp_image other = random_image(96, 64, 5);
	put("f03.png", &other);
	tp_image_free(&other);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s/f%%02d.png --max-diff 255", m, dir), 1);
	cr_assert(strstr(err_text(), "frame 3: hash-differs") != NULL, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s/f%%02d.png --update", m, dir), 0, "%s", err_text());
	cr_assert(strstr(err_text(), "rewrote 1 frame of") != NULL, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s/f%%02d.png", m, dir), 0, "%s", err_text());
	/* diff -u shows exactly the one changed line. */
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "diff -u %s %s | grep -c '^[-+][0-9]' | grep -qx 2", m2, m);
	cr_assert_eq(system(cmd), 0);
}

Test(compare_cli, video_against_png_frames_with_tolerance)
{
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o %s/v.mp4 --crf 12", dir), 0,
		     "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o %s/f%%03d.png", dir), 0);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/f%%03d.png %s/v.mp4", dir, dir), 1);
	/* 4:2:0 chroma smears the tiles' one-pixel grout lines: about 23 dB at this size. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/f%%03d.png %s/v.mp4 --min-psnr 20 --min-ssim 0.75", dir, dir),
		     0, "%s", err_text());
	cr_assert(strstr(err_text(), "6 frames compared") != NULL, "%s", err_text());
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/v.mp4 %s/v.mp4", dir, dir), 0, "%s", err_text());
}

/* ImageMagick's numbers for the same pair, when `compare` is installed (make deps). */
static int im_metric(const char *args, double *out)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "compare %s null: 2>&1", args);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	int ok = fscanf(p, "%lf", out) == 1;
	pclose(p);
	return ok ? 0 : -1;
}

Test(compare_cli, ae_and_psnr_agree_with_imagemagick)
{
	if (system("compare -version >/dev/null 2>&1") != 0)
		cr_skip_test("ImageMagick compare is not installed");
	/* b = a plus small random noise, so the count depends on the fuzz. */
	tp_image a = random_image(50, 40, 1), b = random_image(50, 40, 1);
	tp_rng r;
	tp_rng_seed(&r, 2, 2);
	for (int y = 0; y < 40; y++)
		for (int x = 0; x < 150; x++) {
			int v = tp_image_row(&b, y)[x] + (int)tp_rng_below(&r, 41) - 20;
			tp_image_row(&b, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	put("a.png", &a);
	put("b.png", &b);
	tp_image_free(&a);
	tp_image_free(&b);
	char json[256], args[512];
	snprintf(json, sizeof json, "%s/r.json", dir);
	const int fuzz[] = { 0, 5, 10, 15, 19 };
	for (int i = 0; i < 5; i++) {
		/* The percentage sits between two whole numbers, away from rounding edges. */
		double pct = (fuzz[i] + 0.5) * 100 / 255;
		snprintf(args, sizeof args, "-metric AE -fuzz %.6f%% %s/a.png %s/b.png", pct, dir, dir);
		double ae;
		cr_assert_eq(im_metric(args, &ae), 0, "%s", args);
		cr_assert_eq(run_tp(NULL, errpath, "compare %s/a.png %s/b.png --json %s --fuzz %.6f%%", dir, dir,
				    json, pct), 1);
		cJSON *root = cJSON_Parse(slurp(json));
		cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "frames"), 0);
		cr_assert_eq(cJSON_GetObjectItem(f, "pixels")->valuedouble, ae, "fuzz %d: ours %g, IM %g",
			     fuzz[i], cJSON_GetObjectItem(f, "pixels")->valuedouble, ae);
		if (i == 0) {
			double psnr;
			snprintf(args, sizeof args, "-metric PSNR %s/a.png %s/b.png", dir, dir);
			cr_assert_eq(im_metric(args, &psnr), 0);
			cr_assert_float_eq(cJSON_GetObjectItem(f, "psnr")->valuedouble, psnr, 0.01);
		}
		cJSON_Delete(root);
	}
}

/* junitparser (python3-junitparser) reads the file as Jenkins and GitLab do; its summary
 * goes to dir/junit.txt. */
static const char *junit_summary(const char *xml)
{
	char cmd[1024], out[256];
	snprintf(out, sizeof out, "%s/junit.txt", dir);
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/junit_summary.py %s >%s 2>&1", xml, out);
	int st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "junitparser: %s", slurp(out));
	return slurp(out);
}

Test(compare_cli, junit_has_time_and_timestamp_for_ci_readers)
{
	two_sequences(30);
	char xml[256];
	snprintf(xml, sizeof xml, "%s/r.xml", dir);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --junit %s -q", dir, dir, xml), 1);
	const char *s = junit_summary(xml);
	cr_assert(strstr(s, " tests=4 failures=1 errors=0 skipped=0 time=") != NULL, "%s", s);
	cr_assert(strstr(s, "case frame 000001 failure max-diff 30 > 0\n") != NULL, "%s", s);
	cr_assert(strstr(s, "case frame 000000 passed") != NULL, "%s", s);
}

Test(compare_cli, reports_are_written_when_an_input_is_missing)
{
	two_sequences(30);
	char xml[256], json[256];
	snprintf(xml, sizeof xml, "%s/r.xml", dir);
	snprintf(json, sizeof json, "%s/r.json", dir);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/nothing %s/t --junit %s --json %s", dir, dir, xml, json),
		     3, "%s", err_text());
	cr_assert(strstr(err_text(), "nothing") != NULL, "%s", err_text());
	const char *s = junit_summary(xml);
	cr_assert(strstr(s, " tests=1 failures=0 errors=1 ") != NULL, "%s", s);
	cr_assert(strstr(s, "case inputs error A: ") != NULL && strstr(s, "/nothing") != NULL, "%s", s);
	cJSON *j = cJSON_Parse(slurp(json));
	cr_assert_not_null(j, "%s", slurp(json));
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "passed")));
	const cJSON *e = cJSON_GetObjectItem(j, "error");
	cr_assert(cJSON_IsString(e) && strstr(e->valuestring, "/nothing"), "%s", slurp(json));
	cJSON_Delete(j);
	/* An option combination that cannot work is reported the same way (exit 2). */
	snprintf(xml, sizeof xml, "%s/m.manifest", dir);
	cr_assert_eq(run_tp(NULL, NULL, "render tests/data/tiny.json -q -o null --hash %s", xml), 0);
	char xml2[256];
	snprintf(xml2, sizeof xml2, "%s/r2.xml", dir);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s --ignore 0,0,2,2 --junit %s", xml, xml, xml2), 2,
		     "%s", err_text());
	s = junit_summary(xml2);
	cr_assert(strstr(s, "errors=1") != NULL && strstr(s, "case inputs error ") != NULL, "%s", s);
}

Test(compare_cli, reports_go_to_streams_and_redirected_files)
{
	two_sequences(0);
	char out[256];
	snprintf(out, sizeof out, "%s/redirected.xml", dir);
	cr_assert_eq(run_tp(out, errpath, "compare %s/g %s/t -q --junit /dev/stdout", dir, dir), 0, "%s",
		     err_text());
	const char *s = junit_summary(out);
	cr_assert(strstr(s, "errors=0") != NULL, "%s", s);
	struct stat st;
	cr_assert_eq(lstat("/dev/stdout", &st), 0);
	cr_assert(S_ISLNK(st.st_mode), "/dev/stdout is left alone");
}
