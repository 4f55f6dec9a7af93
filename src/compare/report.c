/* report.c - what a comparison tells people and CI: a summary, JSON, JUnit XML, and
 * diff images. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "compare/compare.h"
#include "encode/encoder.h"
#include "encode/record.h"
#include "util/fsutil.h"
#include "util/png.h"

/* Failing frames listed one per line in the summary; the rest are counted. */
#define SUMMARY_FRAMES 20

static void metrics_text(const cmp_frame *f, char *buf, size_t n)
{
	const cmp_metrics *m = &f->m;
	int len = snprintf(buf, n, "max-diff %d, pixels %lld (%.4g%%), psnr %.2f dB, ssim %.6f",
			   m->max_diff, (long long)m->pixels, 100.0 * m->ratio, m->psnr, m->ssim);
	if (len > 0 && (size_t)len < n && !isnan(m->flip))
		len += snprintf(buf + len, n - (size_t)len, ", flip %.6f", m->flip);
	if (len > 0 && (size_t)len < n && m->bbox.w > 0)
		snprintf(buf + len, n - (size_t)len, ", changed %dx%d at %d,%d", m->bbox.w, m->bbox.h,
			 m->bbox.x, m->bbox.y);
}

void cmp_report_summary(FILE *out, const cmp_config *cfg, const cmp_result *res)
{
	int identical = 0, within = 0, listed = 0, missing = 0;
	char reasons[512], metrics[256];
	fprintf(out, "compare: A %s (%s, %d frame%s), B %s (%s, %d frame%s)\n", cfg->a, res->kind_a,
		res->frames_a, res->frames_a == 1 ? "" : "s", cfg->b, res->kind_b, res->frames_b,
		res->frames_b == 1 ? "" : "s");
	if (res->note[0])
		fprintf(out, "compare: %s\n", res->note);
	for (int i = 0; i < res->n; i++) {
		const cmp_frame *f = &res->frames[i];
		identical += f->status == CMP_IDENTICAL;
		within += f->status == CMP_WITHIN;
		missing += f->status == CMP_MISSING;
		if (f->status == CMP_IDENTICAL || f->status == CMP_WITHIN)
			continue;
		if (listed++ >= SUMMARY_FRAMES)
			continue;
		cmp_frame_reasons(f, &cfg->tol, reasons, sizeof reasons);
		if (f->status == CMP_FAIL) {
			metrics_text(f, metrics, sizeof metrics);
			fprintf(out, "  frame %d: FAIL: %s; %s%s\n", f->index, reasons, metrics,
				f->updated ? " [updated]" : "");
		} else {
			fprintf(out, "  frame %d: %s: %s%s\n", f->index, cmp_status_name(f->status), reasons,
				f->updated ? " [updated]" : "");
		}
	}
	if (listed > SUMMARY_FRAMES)
		fprintf(out, "  ... and %d more frames failing or missing (see --json)\n",
			listed - SUMMARY_FRAMES);
	/* each frame counted once: the compared ones are identical, within or failing; the
	 * frames one side lacks are missing, not failing */
	const int compared = res->n - missing;
	fprintf(out, "compare: %d frame%s compared: %d identical, %d within tolerance, %d failing",
		compared, compared == 1 ? "" : "s", identical, within, res->failed - missing);
	if (missing)
		fprintf(out, "; %d missing (on one side only)", missing);
	if (res->worst >= 0) {
		const cmp_frame *w = &res->frames[res->worst];
		if (w->status == CMP_FAIL)
			fprintf(out, "; worst: frame %d (psnr %.2f dB, max-diff %d, ssim %.6f)", w->index,
				w->m.psnr, w->m.max_diff, w->m.ssim);
		else
			fprintf(out, "; worst: frame %d (%s)", w->index, cmp_status_name(w->status));
	}
	fputc('\n', out);
	if (cfg->update) {
		fprintf(out, "compare: --update rewrote %d frame%s of %s", res->updated,
			res->updated == 1 ? "" : "s", cfg->a);
		int shown = 0;
		for (int i = 0; i < res->n && shown < SUMMARY_FRAMES; i++)
			if (res->frames[i].updated)
				fprintf(out, "%s%d", shown++ ? ", " : ": ", i);
		if (shown < res->updated)
			fprintf(out, ", ...");
		fputc('\n', out);
	}
	if (res->accept)
		fprintf(out, "compare: to accept B as the new reference: %s\n", res->accept);
	else if (res->accept_note)
		fprintf(out, "compare: %s\n", res->accept_note);
	fprintf(out, "compare: %s\n", res->passed ? "PASS" : "FAIL");
}

/* ---- files written atomically ---- */

/* Reports go to a file (written under a temporary name and renamed into place) or
 * straight to a stream such as /dev/stdout (util/fsutil.h). */
typedef tp_wfile outfile;

static int out_open(outfile *o, const char *path, tp_err *err)
{
	if (!tp_is_special(path)) {
		int rc = tp_mkdirs_for(path, err);
		if (rc < 0)
			return rc;
	}
	return tp_wopen(o, path, err);
}

static int out_close(outfile *o, const char *path, tp_err *err)
{
	(void)path;
	return tp_wclose(o, 1, err);
}

/* see compare.h */
void cmp_json_string(FILE *f, const char *s, int in_script)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n' && !in_script)
			fputs("\\n", f);
		else if (c < 0x20 || (c == '<' && in_script))
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_str(FILE *f, const char *s)
{
	cmp_json_string(f, s, 0);
}

/* JSON has no infinity or NaN: those become null (documented: PSNR null = identical). */
static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f);
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s && s[0])
		json_str(f, s);
	else
		fputs("null", f);
}

static void json_side(FILE *f, const char *name, const char *path, const char *kind, int frames,
		      const char *sha)
{
	fprintf(f, "  \"%s\": {\"path\": ", name);
	json_str(f, path);
	fprintf(f, ", \"kind\": \"%s\", \"frames\": %d, \"sha256\": ", kind, frames);
	json_str_or_null(f, sha);
	fputs("},\n", f);
}

static int hash_file(struct sha256_ctx *ctx, const char *path, tp_err *err)
{
	FILE *in = fopen(path, "rb");
	if (!in)
		return tp_errf(err, TP_EIO, "%s: %s", path, strerror(errno));
	unsigned char buf[65536];
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, in)) > 0)
		sha256_update(ctx, k, buf);
	int bad = ferror(in);
	fclose(in);
	return bad ? tp_errf(err, TP_EIO, "%s: read error", path) : 0;
}

int cmp_input_sha256(const char *spec, char hex[65], tp_err *err)
{
	cmp_source *s = NULL;
	hex[0] = 0;
	int rc = cmp_source_open(spec, &s, err);
	if (rc < 0)
		return rc;
	struct sha256_ctx ctx;
	sha256_init(&ctx);
	cmp_kind k = cmp_source_kind(s);
	if (k == CMP_SRC_PNG || k == CMP_SRC_PNGSEQ) {
		char name[4096];
		for (int i = 0; rc == 0 && i < cmp_source_frames(s); i++) {
			cmp_source_frame_name(s, i, name, sizeof name);
			rc = hash_file(&ctx, name, err);
		}
	} else {
		rc = hash_file(&ctx, spec, err);
	}
	cmp_source_close(s);
	if (rc < 0)
		return rc;
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&ctx, sizeof d, d);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return 0;
}

int cmp_report_json(const char *path, const cmp_config *cfg, const cmp_result *res, tp_err *err)
{
	outfile o;
	int rc = out_open(&o, path, err);
	if (rc < 0)
		return rc;
	cmp_report_json_write(o.f, cfg, res);
	return out_close(&o, path, err);
}

void cmp_report_json_write(FILE *f, const cmp_config *cfg, const cmp_result *res)
{
	const cmp_tolerance *t = &cfg->tol;
	unsigned checks = t->checks ? t->checks : CMP_CHECK_MAX_DIFF;
	fprintf(f, "{\n  \"format\": \"%s\",\n", CMP_JSON_FORMAT);
	/* What made the report: a report kept by CI says where it came from. */
	fputs("  \"made\": {\"by\": \"tidepool compare\", \"version\": \"" TP_VERSION
	      "\", \"date\": ",
	      f);
	json_str_or_null(f, res->date);
	fputs(", \"command\": ", f);
	json_str_or_null(f, res->command);
	fputs("},\n", f);
	json_side(f, "a", cfg->a, res->kind_a, res->frames_a, res->sha_a);
	json_side(f, "b", cfg->b, res->kind_b, res->frames_b, res->sha_b);
	fputs("  \"tolerance\": {\"max_diff\": ", f);
	if (checks & CMP_CHECK_MAX_DIFF)
		fprintf(f, "%d", t->checks ? t->max_diff : 0);
	else
		fputs("null", f);
	fputs(", \"max_pixels\": ", f);
	if (checks & CMP_CHECK_MAX_PIXELS)
		fprintf(f, "%lld", (long long)t->max_pixels);
	else
		fputs("null", f);
	fputs(", \"max_ratio\": ", f);
	json_num(f, checks & CMP_CHECK_MAX_RATIO ? t->max_ratio : NAN);
	fputs(", \"min_psnr\": ", f);
	json_num(f, checks & CMP_CHECK_MIN_PSNR ? t->min_psnr : NAN);
	fputs(", \"min_ssim\": ", f);
	json_num(f, checks & CMP_CHECK_MIN_SSIM ? t->min_ssim : NAN);
	fputs(", \"max_flip\": ", f);
	json_num(f, checks & CMP_CHECK_MAX_FLIP ? t->max_flip : NAN);
	fprintf(f, ", \"fuzz\": %d},\n  \"flip_ppd\": ", t->fuzz);
	json_num(f, cfg->flip_ppd > 0 ? cfg->flip_ppd : NAN);
	fputs(",\n  \"ignore\": [", f);
	for (int i = 0; i < cfg->n_ignore; i++)
		fprintf(f, "%s[%d, %d, %d, %d]", i ? ", " : "", cfg->ignore[i].x, cfg->ignore[i].y,
			cfg->ignore[i].w, cfg->ignore[i].h);
	int identical = 0, within = 0;
	for (int i = 0; i < res->n; i++) {
		identical += res->frames[i].status == CMP_IDENTICAL;
		within += res->frames[i].status == CMP_WITHIN;
	}
	fprintf(f, "],\n  \"passed\": %s,\n  \"error\": ", res->passed ? "true" : "false");
	if (res->error[0])
		json_str(f, res->error);
	else
		fputs("null", f);
	fputs(",\n  \"note\": ", f);
	if (res->note[0])
		json_str(f, res->note);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"frames_compared\": %d,\n  \"identical\": %d,\n  \"within\": %d,\n"
		   "  \"failed\": %d,\n  \"updated\": %d,\n  \"worst\": ",
		res->compared, identical, within, res->failed, res->updated);
	if (res->worst >= 0)
		fprintf(f, "%d", res->worst);
	else
		fputs("null", f);
	fputs(",\n  \"accept\": ", f);
	json_str_or_null(f, res->accept);
	fputs(",\n  \"accept_note\": ", f);
	json_str_or_null(f, res->accept_note);
	fputs(",\n  \"frames\": [", f);
	static const char *const check_names[] = { "max_diff", "max_pixels", "max_ratio", "min_psnr",
						   "min_ssim", "max_flip" };
	for (int i = 0; i < res->n; i++) {
		const cmp_frame *fr = &res->frames[i];
		const cmp_metrics *m = &fr->m;
		fprintf(f, "%s\n    {\"index\": %d, \"status\": \"%s\"", i ? "," : "", fr->index,
			cmp_status_name(fr->status));
		if (fr->wa || fr->wb)
			fprintf(f, ", \"size_a\": [%d, %d], \"size_b\": [%d, %d]", fr->wa, fr->ha, fr->wb, fr->hb);
		if (fr->status == CMP_WITHIN || fr->status == CMP_FAIL) {
			fprintf(f, ", \"max_diff\": %d, \"pixels\": %lld, \"ratio\": ", m->max_diff,
				(long long)m->pixels);
			json_num(f, m->ratio);
			fputs(", \"mse\": ", f);
			json_num(f, m->mse);
			fputs(", \"psnr\": ", f);
			json_num(f, m->psnr);
			fputs(", \"ssim\": ", f);
			json_num(f, m->ssim);
			if (cfg->flip_ppd > 0) {
				fputs(", \"flip\": ", f);
				json_num(f, m->flip);
			}
			fprintf(f, ", \"bbox\": [%d, %d, %d, %d], \"failed\": [", m->bbox.x, m->bbox.y,
				m->bbox.w, m->bbox.h);
			for (unsigned k = 0, n = 0; k < 6; k++)
				if (fr->failed & (1u << k))
					fprintf(f, "%s\"%s\"", n++ ? ", " : "", check_names[k]);
			fputc(']', f);
		} else if (fr->status == CMP_IDENTICAL) {
			fputs(", \"max_diff\": 0, \"pixels\": 0, \"ratio\": 0, \"mse\": 0, \"psnr\": null, "
			      "\"ssim\": 1, \"bbox\": null",
			      f);
			if (cfg->flip_ppd > 0)
				fputs(", \"flip\": 0", f);
		}
		if (fr->detail[0]) {
			fputs(", \"detail\": ", f);
			json_str(f, fr->detail);
		}
		if (fr->updated)
			fputs(", \"updated\": true", f);
		fputc('}', f);
	}
	fputs("\n  ]\n}\n", f);
}

static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
	}
}

int cmp_report_junit(const char *path, const cmp_config *cfg, const cmp_result *res, tp_err *err)
{
	outfile o;
	int rc = out_open(&o, path, err);
	if (rc < 0)
		return rc;
	FILE *f = o.f;
	/* One test case per frame, plus one for the inputs as a whole (count, format). An
	 * input that cannot be read is an <error> of that case: errors="1". Attributes as
	 * Jenkins, GitLab and junitparser read them: tests, failures, errors, skipped, time
	 * (seconds) and timestamp (ISO 8601 local time, no zone) on the suite. */
	int errors = res->error[0] != 0;
	int tests = res->n + 1, failures = res->failed + (!errors && res->note[0] != 0);
	char name[9000], reasons[512], metrics[256];
	snprintf(name, sizeof name, "tidepool compare %s %s", cfg->a, cfg->b);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tidepool compare\" "
		   "tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n  <testsuite name=\"",
		tests, failures, errors, res->seconds);
	xml_str(f, name);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%.3f\"", tests,
		failures, errors, res->seconds);
	if (res->started[0])
		fprintf(f, " timestamp=\"%s\"", res->started);
	fputs(">\n    <testcase classname=\"tidepool.compare\" name=\"inputs\"", f);
	if (errors) {
		fputs(">\n      <error type=\"input\" message=\"", f);
		xml_str(f, res->error);
		fputs("\"/>\n    </testcase>\n", f);
	} else if (res->note[0]) {
		fputs(">\n      <failure type=\"inputs\" message=\"", f);
		xml_str(f, res->note);
		fputs("\"/>\n    </testcase>\n", f);
	} else {
		fputs("/>\n", f);
	}
	for (int i = 0; i < res->n; i++) {
		const cmp_frame *fr = &res->frames[i];
		fprintf(f, "    <testcase classname=\"tidepool.compare\" name=\"frame %06d\"", fr->index);
		if (fr->status == CMP_IDENTICAL || fr->status == CMP_WITHIN) {
			fputs("/>\n", f);
			continue;
		}
		cmp_frame_reasons(fr, &cfg->tol, reasons, sizeof reasons);
		fprintf(f, ">\n      <failure type=\"%s\" message=\"", cmp_status_name(fr->status));
		xml_str(f, reasons);
		fputs("\">", f);
		if (fr->status == CMP_FAIL) {
			metrics_text(fr, metrics, sizeof metrics);
			xml_str(f, metrics);
		}
		fputs("</failure>\n    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return out_close(&o, path, err);
}

/* Heat map colour of t in [0, 1]: black, violet, red, orange, white (perceptually
 * increasing brightness, so it also reads in greyscale). */
static void heat(int num, int den, uint8_t *rgb)
{
	static const uint8_t stops[5][3] = {
		{ 0, 0, 0 }, { 90, 0, 130 }, { 210, 30, 30 }, { 255, 165, 0 }, { 255, 255, 255 },
	};
	/* Position in quarter-steps, in integer arithmetic: p = 4 t, k = floor(p). */
	long p = den > 0 ? 4L * 1024 * num / den : 0;
	int k = (int)(p / 1024);
	if (k >= 4) {
		memcpy(rgb, stops[4], 3);
		return;
	}
	long frac = p - 1024L * k;
	for (int c = 0; c < 3; c++)
		rgb[c] = (uint8_t)((stops[k][c] * (1024 - frac) + stops[k + 1][c] * frac + 512) / 1024);
}

int cmp_report_diff_image(const char *path, const tp_image *a, const tp_image *b, int fuzz,
			  int max_diff, tp_image *work, int level, tp_err *err)
{
	int w = a->w, h = a->h;
	if (!work->pixels || work->w != 2 * w || work->h != h || work->fmt != TP_RGB8) {
		tp_image_free(work);
		if (tp_image_alloc(work, 2 * w, h, TP_RGB8) < 0)
			return tp_errf(err, TP_EIO, "out of memory for a %dx%d diff image", 2 * w, h);
	}
	uint8_t lut[256][3];
	for (int d = 0; d < 256; d++)
		heat(d, max_diff, lut[d]);
	for (int y = 0; y < h; y++) {
		const uint8_t *pa = tp_image_row(a, y), *pb = tp_image_row(b, y);
		uint8_t *left = tp_image_row(work, y), *right = left + 3 * (size_t)w;
		for (int x = 0; x < w; x++) {
			const uint8_t *p = pa + 3 * x, *q = pb + 3 * x;
			int d0 = abs(p[0] - q[0]), d1 = abs(p[1] - q[1]), d2 = abs(p[2] - q[2]);
			int dm = d0 > d1 ? d0 : d1;
			dm = dm > d2 ? dm : d2;
			uint8_t *o = left + 3 * x;
			if (dm > fuzz) {
				o[0] = 230, o[1] = 0, o[2] = 30;
			} else if (dm > 0) {
				o[0] = 255, o[1] = 150, o[2] = 0;
			} else {
				/* Faded reference: luma (BT.601, /256) squeezed into 191..254. */
				int g = (77 * p[0] + 150 * p[1] + 29 * p[2]) >> 8;
				o[0] = o[1] = o[2] = (uint8_t)(191 + g / 4);
			}
			memcpy(right + 3 * x, lut[dm], 3);
		}
	}
	int rc = tp_mkdirs_for(path, err);
	if (rc < 0)
		return rc;
	/* what the file is (encode/record.h): a picture about frames, in sRGB */
	char *rec = enc_record_picture("difference image");
	const tp_png_meta m = {.record = rec, .srgb = 1};
	rc = rec ? tp_png_write_meta(path, work, level, &m, err)
		 : tp_errf(err, TP_EIO, "out of memory");
	free(rec);
	return rc;
}
