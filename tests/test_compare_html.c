/* tidepool compare --html: what the report file holds in every outcome (the page's
 * behaviour in a browser is tested by tests/browser/test_compare_report.py). */
#include <cjson/cJSON.h>
#include <dirent.h>
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
	tp_tmpdir_make(dir, sizeof dir, "cmphtml");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(compare_html, .init = setup, .fini = teardown, .timeout = 120);

/* The whole file, NUL-terminated (reports are megabytes: no static buffer). */
static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s missing", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The text of <script type="application/json" id="ID">, with \u003c turned back into '<'. */
static char *script_json(const char *html, const char *id)
{
	char open[96];
	snprintf(open, sizeof open, "<script type=\"application/json\" id=\"%s\">", id);
	const char *a = strstr(html, open);
	cr_assert_not_null(a, "no %s block", id);
	a += strlen(open);
	const char *b = strstr(a, "</script>");
	cr_assert_not_null(b);
	char *out = malloc((size_t)(b - a) + 1), *o = out;
	for (const char *p = a; p < b;) {
		if (!strncmp(p, "\\u003c", 6)) {
			*o++ = '<';
			p += 6;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
	return out;
}

/* The pictures' blob (#tp-blob, text7 in report_html.c: 7 bits an ASCII character; NUL,
 * CR and '<' with the 7 bits after them as U+0100 + 128 i + next in UTF-8), decoded here
 * on its own. */
static unsigned char *blob_of(const char *html, size_t *n)
{
	const char *open = "<script type=\"text/plain\" id=\"tp-blob\">";
	const char *a = strstr(html, open);
	cr_assert_not_null(a, "no tp-blob block");
	a += strlen(open);
	const char *b = strstr(a, "</script>");
	cr_assert_not_null(b);
	static const unsigned esc[3] = {0, 13, '<'};
	unsigned char *out = malloc((size_t)(b - a) + 1);
	size_t o = 0;
	unsigned acc = 0;
	int bits = 0;
	for (const unsigned char *p = (const unsigned char *)a; p < (const unsigned char *)b; p++) {
		unsigned v[2] = {*p, 0}, k = 1;
		cr_assert(*p != 13 && *p != '<', "character %u in the blob", *p);
		if (*p >= 128) {
			cr_assert((p[0] & 0xe0) == 0xc0 && (p[1] & 0xc0) == 0x80, "two-byte UTF-8");
			unsigned c = (p[0] & 31u) << 6 | (p[1] & 63u);
			cr_assert(c >= 0x100 && c < 0x280, "U+%04X in the blob", c);
			v[0] = esc[(c - 0x100) >> 7];
			v[1] = c & 127;
			k = 2;
			p++;
		}
		for (unsigned i = 0; i < k; i++) {
			acc = (acc << 7 | v[i]) & 0x7fff;
			bits += 7;
			if (bits >= 8) {
				bits -= 8;
				out[o++] = (unsigned char)(acc >> bits);
			}
		}
	}
	*n = o;
	return out;
}

static tp_image noise(int w, int h, uint64_t seed)
{
	tp_image img;
	tp_rng r;
	tp_rng_seed(&r, seed, 3);
	cr_assert_eq(tp_image_alloc(&img, w, h, TP_RGB8), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < 3 * w; x++)
			tp_image_row(&img, y)[x] = (uint8_t)(96 + tp_rng_below(&r, 64));
	return img;
}

static void put(const char *name, const tp_image *img)
{
	char path[256];
	tp_err err;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_eq(tp_png_write(path, img, 1, &err), 0, "%s", err.msg);
}

/* g/ and t/: n frames of w x h; frame k of t has a (4 + 2k)-pixel square changed by 60
 * at (x0, y0), so later frames are worse. */
static void sequences(int n, int w, int h, int x0, int y0)
{
	char path[256];
	snprintf(path, sizeof path, "%s/g", dir);
	cr_assert_eq(mkdir(path, 0777), 0);
	snprintf(path, sizeof path, "%s/t", dir);
	cr_assert_eq(mkdir(path, 0777), 0);
	for (int k = 0; k < n; k++) {
		tp_image img = noise(w, h, 7 + (uint64_t)k);
		char name[64];
		snprintf(name, sizeof name, "g/%04d.png", k);
		put(name, &img);
		for (int y = y0; y < y0 + 4 + 2 * k; y++)
			for (int x = x0; x < x0 + 4 + 2 * k; x++)
				tp_image_row(&img, y)[3 * x + 1] += 60;
		snprintf(name, sizeof name, "t/%04d.png", k);
		put(name, &img);
		tp_image_free(&img);
	}
}

/* No temporary file left beside the report. */
static void only_files(int expect)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	cr_assert_eq(n, expect, "%d entries in %s", n, dir);
}

Test(compare_html, written_for_pass_fail_and_input_error)
{
	sequences(3, 40, 30, 5, 5);
	char html[128];
	snprintf(html, sizeof html, "%s/r.html", dir);
	/* Pass: the same frames. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/g --html %s -q", dir, dir, html), 0, "%s", slurp(errpath));
	char *s = read_all(html);
	char *j = script_json(s, "tp-report");
	cr_assert_not_null(strstr(j, "\"passed\": true"));
	char *p = script_json(s, "tp-pictures");
	cr_assert_not_null(strstr(p, "\"frames\": [\n  ]"), "%s", p);
	free(s), free(j), free(p);
	/* Fail. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --html %s -q", dir, dir, html), 1);
	s = read_all(html);
	j = script_json(s, "tp-report");
	cr_assert_not_null(strstr(j, "\"passed\": false"));
	p = script_json(s, "tp-pictures");
	cr_assert_eq(count(p, "\"pic\": ["), 3, "a picture of each of 3 frames");
	cr_assert_eq(count(p, "\"delta\": ["), 3, "and its delta");
	free(p);
	free(s), free(j);
	/* An input error: the report still appears and says what failed. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/nothing --html %s -q", dir, dir, html), 3);
	s = read_all(html);
	j = script_json(s, "tp-report");
	cr_assert_not_null(strstr(j, "\"error\": \"B: "), "%s", j);
	cr_assert_not_null(strstr(j, "nothing"), "%s", j);
	p = script_json(s, "tp-pictures");
	cr_assert_not_null(strstr(p, "input error"), "%s", p);
	free(s), free(j), free(p);
	only_files(4); /* g, t, stderr, r.html */
	/* A report that cannot be written is exit 4. */
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --html %s/stderr/x.html -q", dir, dir, dir), 4);
}

Test(compare_html, embeds_the_json_report_and_pictures_of_the_worst_frames)
{
	sequences(5, 48, 32, 6, 4);
	char html[128], json[128];
	snprintf(html, sizeof html, "%s/r.html", dir);
	snprintf(json, sizeof json, "%s/r.json", dir);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --metric flip --ignore 40,0,8,8 --html %s --json %s "
				     "--html-frames 2 -q", dir, dir, html, json), 1, "%s", slurp(errpath));
	char *s = read_all(html), *want = read_all(json);
	char *j = script_json(s, "tp-report");
	cr_assert_str_eq(j, want, "the page carries the JSON report, byte for byte");
	/* The page is self-contained: a CSP that allows no request, no remote URL. */
	cr_assert_not_null(strstr(s, "content=\"default-src 'none'; img-src data:;"));
	cr_assert_null(strstr(s, "src=\"http"));
	cr_assert_null(strstr(s, "href=\"http"));
	cr_assert_eq(count(s, "</script>"), 4,
		     "three data blocks and the script, nothing closes early");
	/* Bounded: two frames pictured, the worst two (3 and 4), each with a FLIP map. */
	char *p = script_json(s, "tp-pictures");
	size_t blob_n;
	unsigned char *blob = blob_of(s, &blob_n);
	cJSON *root = cJSON_Parse(p);
	cr_assert_not_null(root, "pictures JSON parses");
	size_t want_n = (size_t)cJSON_GetObjectItem(root, "blob_bytes")->valuedouble;
	cr_assert(blob_n == want_n || blob_n == want_n + 1,
		  "the blob holds blob_bytes (%zu of %zu)", blob_n, want_n);
	cr_assert_eq(cJSON_GetObjectItem(root, "max_frames")->valueint, 2);
	cr_assert_eq(cJSON_GetObjectItem(root, "measured")->valueint, 5);
	cJSON *fr = cJSON_GetObjectItem(root, "frames");
	cr_assert_eq(cJSON_GetArraySize(fr), 2);
	for (int i = 0; i < 2; i++) {
		cJSON *f = cJSON_GetArrayItem(fr, i);
		cr_assert_eq(cJSON_GetObjectItem(f, "index")->valueint, 3 + i);
		for (const char *k = "pic\0delta\0flip\0"; *k; k += strlen(k) + 1) {
			cJSON *at = cJSON_GetObjectItem(f, k);
			cr_assert(cJSON_GetArraySize(at) == 2, "%s is [offset, length]", k);
			size_t o = (size_t)cJSON_GetArrayItem(at, 0)->valuedouble;
			size_t n = (size_t)cJSON_GetArrayItem(at, 1)->valuedouble;
			cr_assert(n > 12 && o + n <= blob_n, "%s inside the blob", k);
			cr_assert(!memcmp(blob + o, "RIFF", 4) && !memcmp(blob + o + 8, "WEBP", 4),
				  "%s is WebP", k);
		}
		cJSON *crop = cJSON_GetObjectItem(f, "crop");
		cr_assert_eq(cJSON_GetArrayItem(crop, 2)->valueint, 48, "small frames are shown whole");
	}
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "error")));
	cJSON_Delete(root);
	free(s), free(want), free(j), free(p), free(blob);
}

Test(compare_html, large_frames_are_cropped_around_the_change_and_never_scaled)
{
	/* 1280x720 with the change near the bottom-right corner. */
	sequences(1, 1280, 720, 1180, 650);
	char html[128];
	snprintf(html, sizeof html, "%s/r.html", dir);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --html %s -q", dir, dir, html), 1);
	char *s = read_all(html);
	char *p = script_json(s, "tp-pictures");
	cr_assert_not_null(strstr(p, "\"size\": [1280, 720], \"crop\": [320, 180, 960, 540]"), "%.300s", p);
	/* The picture is the crop itself: 960x540 pixels. */
	size_t blob_n;
	unsigned char *blob = blob_of(s, &blob_n);
	const char *at = strstr(p, "\"pic\": [");
	cr_assert_not_null(at);
	size_t o, n;
	cr_assert_eq(sscanf(at, "\"pic\": [%zu, %zu]", &o, &n), 2);
	cr_assert(o + n <= blob_n && !memcmp(blob + o + 12, "VP8L", 4), "lossless WebP");
	cr_assert_eq(1 + ((blob[o + 21] | blob[o + 22] << 8) & 0x3fff), 960, "width");
	free(blob);
	free(s), free(p);
}

Test(compare_html, manifest_frames_say_they_have_no_pixels)
{
	char m[128], html[128];
	snprintf(m, sizeof m, "%s/t.manifest", dir);
	snprintf(html, sizeof html, "%s/r.html", dir);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o %s/f%%02d.png --hash %s", dir, m), 0,
		     "%s", slurp(errpath));
	/* Change one frame's pixels: its hash no longer matches. */
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cp %s/f01.png %s/f03.png", dir, dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s/f%%02d.png --html %s -q", m, dir, html), 1);
	char *s = read_all(html);
	char *p = script_json(s, "tp-pictures");
	cr_assert_not_null(strstr(p, "a frame-hash manifest holds no pixels"), "%s", p);
	char *j = script_json(s, "tp-report");
	cr_assert_not_null(strstr(j, "\"status\": \"hash-differs\""));
	free(s), free(p), free(j);
}

Test(compare_html, video_against_video)
{
	char a[128], b[128], html[128];
	snprintf(a, sizeof a, "%s/a.mp4", dir);
	snprintf(b, sizeof b, "%s/b.mp4", dir);
	snprintf(html, sizeof html, "%s/r.html", dir);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o %s --crf 0", a), 0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o %s --crf 0 --set render.refraction=3", b), 0,
		     "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "compare %s %s --metric flip --html %s --html-frames 3 -q", a, b, html), 1);
	char *s = read_all(html);
	char *p = script_json(s, "tp-pictures");
	cJSON *root = cJSON_Parse(p);
	cr_assert_not_null(root);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "error")), "%s", cJSON_GetObjectItem(root, "error")->valuestring);
	int n = cJSON_GetArraySize(cJSON_GetObjectItem(root, "frames"));
	cr_assert(n >= 1 && n <= 3, "%d pictured", n);
	cr_assert_eq(count(p, "\"pic\": ["), n, "a picture of each pictured frame");
	cr_assert_eq(count(p, "\"delta\": ["), n, "its delta");
	cr_assert_eq(count(p, "\"flip\": ["), n, "and its FLIP map");
	cJSON_Delete(root);
	free(s), free(p);
}

/* The JSON (and the page, which carries it) says what made it: the command, the date
 * (SOURCE_DATE_EPOCH when set), the version and the inputs' SHA-256; and the command that
 * accepts B, which works. The summary names no FLIP that was not measured. */
Test(compare_html, reports_say_what_made_them_and_how_to_accept_b)
{
	sequences(3, 40, 30, 5, 5);
	char cmd[1024], want[512];
	cr_assert_eq(run_tp(NULL, errpath,
			    "compare %s/g %s/t --max-diff 3 --json %s/r.json --html=%s/r.html", dir,
			    dir, dir, dir),
		     1);
	const char *e = slurp(errpath);
	cr_assert_null(strstr(e, "flip"), "FLIP was not measured: %s", e);
	snprintf(want, sizeof want,
		 "compare: to accept B as the new reference: tidepool compare %s/g %s/t --max-diff "
		 "3 "
		 "--update\n",
		 dir, dir);
	cr_assert_not_null(strstr(e, want), "%s", e);
	snprintf(cmd, sizeof cmd, "%s/r.json", dir);
	char *j = read_all(cmd);
	cJSON *root = cJSON_Parse(j);
	cr_assert_not_null(root);
	cJSON *made = cJSON_GetObjectItem(root, "made");
	cr_assert_str_eq(cJSON_GetObjectItem(made, "version")->valuestring, TP_VERSION);
	const char *date = cJSON_GetObjectItem(made, "date")->valuestring;
	cr_assert(strlen(date) == 20 && date[4] == '-' && date[10] == 'T' && date[19] == 'Z', "%s",
		  date);
	snprintf(want, sizeof want,
		 "tidepool compare %s/g %s/t --max-diff 3 --json %s/r.json --html=%s/r.html", dir,
		 dir, dir, dir);
	cr_assert_str_eq(cJSON_GetObjectItem(made, "command")->valuestring, want);
	/* A's fingerprint: SHA-256 of its frames' files in order, as sha256sum gives it. */
	snprintf(cmd, sizeof cmd,
		 "cat %s/g/0000.png %s/g/0001.png %s/g/0002.png | sha256sum > %s/sum", dir, dir,
		 dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/sum", dir);
	const char *sha =
		cJSON_GetObjectItem(cJSON_GetObjectItem(root, "a"), "sha256")->valuestring;
	cr_assert_eq(strlen(sha), 64);
	cr_assert(!strncmp(slurp(cmd), sha, 64), "%s vs %s", slurp(cmd), sha);
	cr_assert_str_neq(
		cJSON_GetObjectItem(cJSON_GetObjectItem(root, "b"), "sha256")->valuestring, sha);
	/* The accept command makes A match B within the same tolerance. */
	const char *acc = cJSON_GetObjectItem(root, "accept")->valuestring;
	snprintf(want, sizeof want, "tidepool compare %s/g %s/t --max-diff 3 --update", dir, dir);
	cr_assert_str_eq(acc, want);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "accept_note")));
	snprintf(cmd, sizeof cmd, "%s%s >/dev/null 2>&1", tp_bin(), acc + strlen("tidepool"));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/g %s/t --max-diff 3 --json %s/r.json -q",
			    dir, dir, dir),
		     0);
	cJSON_Delete(root);
	free(j);
	/* Passing: nothing to accept. SOURCE_DATE_EPOCH fixes the date. */
	snprintf(cmd, sizeof cmd,
		 "SOURCE_DATE_EPOCH=86400 %s compare %s/g %s/t --max-diff 3 --json %s/r.json -q",
		 tp_bin(), dir, dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/r.json", dir);
	j = read_all(cmd);
	cr_assert_not_null(strstr(j, "\"date\": \"1970-01-02T00:00:00Z\""), "%s", j);
	cr_assert_not_null(strstr(j, "\"accept\": null"), "%s", j);
	free(j);
	/* After "--" the inputs are not options: --update goes before it. */
	tp_image other = noise(40, 30, 99);
	put("h.png", &other);
	tp_image_free(&other);
	cr_assert_eq(run_tp(NULL, errpath,
			    "compare --max-diff 1 --json %s/r.json -- %s/g/0000.png %s/h.png", dir,
			    dir, dir),
		     1);
	snprintf(cmd, sizeof cmd, "%s/r.json", dir);
	j = read_all(cmd);
	snprintf(want, sizeof want,
		 "\"accept\": \"tidepool compare --max-diff 1 --update -- %s/g/0000.png %s/h.png\"",
		 dir, dir);
	cr_assert_not_null(strstr(j, want), "%s", j);
	free(j);
}
