/* report_html.c - the HTML report of a comparison: one self-contained file (docs/compare.md).
 *
 * The page (src/compare/report/report.{html,css,js}, embedded at build time by xxd)
 * is filled with two JSON blocks: the JSON report itself (cmp_report_json_write, so the
 * page shows exactly its numbers), and the pictures: for the worst `frames` failing
 * frames, reference, test, difference and FLIP map as PNG data: URIs, cropped around the
 * changed rectangle to at most CMP_HTML_MAX_W x CMP_HTML_MAX_H pixels (never scaled, so
 * zooming shows real pixels). Frames are read again from the inputs for this; every
 * other frame is in the chart and the table only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_report_assets.h"
#include "compare/compare.h"
#include "util/png.h"
#include "util/fsutil.h"

/* ---- output helpers ---- */

/* JSON text into a <script> element: '<' becomes \u003c, so no "</script>" can close it. */
static void put_script_json(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<')
			fputs("\\u003c", out);
		else
			fputc(s[i], out);
	}
}

static void json_str(FILE *f, const char *s)
{
	cmp_json_string(f, s, 1);
}

static void base64(FILE *out, const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		char q[4] = { tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63], tab[v & 63] };
		fwrite(q, 1, 4, out);
	}
	if (n - i == 1) {
		unsigned v = (unsigned)p[i] << 16;
		fprintf(out, "%c%c==", tab[v >> 18], tab[(v >> 12) & 63]);
	} else if (n - i == 2) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
		fprintf(out, "%c%c%c=", tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63]);
	}
}

/* "key": "data:image/png;base64,..." of img. */
static int put_png(FILE *out, const char *key, const tp_image *img, tp_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return tp_errf(err, TP_EIO, "out of memory for a report picture");
	int rc = tp_png_write_stream(m, img, 6, err);
	if (fclose(m) != 0 && rc == 0)
		rc = tp_errf(err, TP_EIO, "out of memory for a report picture");
	if (rc == 0) {
		fprintf(out, ", \"%s\": \"data:image/png;base64,", key);
		base64(out, (const unsigned char *)buf, len);
		fputc('"', out);
	}
	free(buf);
	return rc;
}

/* ---- choosing and cropping ---- */

/* Worst first: FLIP when measured, then MSE, then SSIM, then the lower index. */
static int worse_first(const void *pa, const void *pb)
{
	const cmp_frame *a = *(const cmp_frame *const *)pa, *b = *(const cmp_frame *const *)pb;
	if (!isnan(a->m.flip) && !isnan(b->m.flip) && a->m.flip != b->m.flip)
		return a->m.flip > b->m.flip ? -1 : 1;
	if (a->m.mse != b->m.mse)
		return a->m.mse > b->m.mse ? -1 : 1;
	if (a->m.ssim != b->m.ssim)
		return a->m.ssim < b->m.ssim ? -1 : 1;
	return a->index - b->index;
}

static int by_index(const void *pa, const void *pb)
{
	return (*(const cmp_frame *const *)pa)->index - (*(const cmp_frame *const *)pb)->index;
}

/* The part of a w x h frame shown: all of it when it fits CMP_HTML_MAX_W x CMP_HTML_MAX_H,
 * else a window of that size centred on the changed rectangle, moved inside the frame. */
static cmp_rect crop_for(int w, int h, const cmp_rect *bbox)
{
	cmp_rect c = { 0, 0, w < CMP_HTML_MAX_W ? w : CMP_HTML_MAX_W, h < CMP_HTML_MAX_H ? h : CMP_HTML_MAX_H };
	int cx = bbox->w > 0 ? bbox->x + bbox->w / 2 : w / 2, cy = bbox->h > 0 ? bbox->y + bbox->h / 2 : h / 2;
	c.x = cx - c.w / 2;
	c.y = cy - c.h / 2;
	c.x = c.x < 0 ? 0 : c.x + c.w > w ? w - c.w : c.x;
	c.y = c.y < 0 ? 0 : c.y + c.h > h ? h - c.h : c.y;
	return c;
}

static int crop_copy(const tp_image *src, const cmp_rect *c, tp_image *dst, tp_err *err)
{
	if (!dst->pixels || dst->w != c->w || dst->h != c->h) {
		tp_image_free(dst);
		if (tp_image_alloc(dst, c->w, c->h, TP_RGB8) < 0)
			return tp_errf(err, TP_EIO, "out of memory for a report picture");
	}
	for (int y = 0; y < c->h; y++)
		memcpy(tp_image_row(dst, y), tp_image_row(src, c->y + y) + 3 * (size_t)c->x, 3 * (size_t)c->w);
	return 0;
}

/* Difference picture: max_c |A - B| as a heat map (black, violet, red, orange, white),
 * white at the frame's max-diff, so the smallest difference is still visible. */
static void heat_picture(const tp_image *a, const tp_image *b, const cmp_rect *c, int max_diff,
			 tp_image *dst)
{
	static const uint8_t stops[5][3] = {
		{ 0, 0, 0 }, { 90, 0, 130 }, { 210, 30, 30 }, { 255, 165, 0 }, { 255, 255, 255 },
	};
	uint8_t lut[256][3];
	for (int d = 0; d < 256; d++) {
		/* t = d / max_diff in [0, 1]; position 4 t between the stops, with any d > 0 at
		 * least a little above black. */
		double t = max_diff > 0 ? (double)d / max_diff : 0;
		t = d > 0 && t < 0.08 ? 0.08 : t > 1 ? 1 : t;
		double p = 4 * t;
		int k = p >= 4 ? 3 : (int)p;
		double fr = p - k;
		for (int ch = 0; ch < 3; ch++)
			lut[d][ch] = (uint8_t)lround(stops[k][ch] * (1 - fr) + stops[k + 1][ch] * fr);
	}
	for (int y = 0; y < c->h; y++) {
		const uint8_t *pa = tp_image_row(a, c->y + y) + 3 * (size_t)c->x;
		const uint8_t *pb = tp_image_row(b, c->y + y) + 3 * (size_t)c->x;
		uint8_t *o = tp_image_row(dst, y);
		for (int x = 0; x < c->w; x++) {
			int d = 0;
			for (int ch = 0; ch < 3; ch++) {
				int v = abs(pa[3 * x + ch] - pb[3 * x + ch]);
				d = v > d ? v : d;
			}
			memcpy(o + 3 * x, lut[d], 3);
		}
	}
}

static void flip_picture(const float *map, int w, const cmp_rect *c, tp_image *dst)
{
	for (int y = 0; y < c->h; y++) {
		const float *m = map + (size_t)(c->y + y) * (size_t)w + c->x;
		uint8_t *o = tp_image_row(dst, y);
		for (int x = 0; x < c->w; x++)
			cmp_flip_magma(m[x], o + 3 * x);
	}
}

typedef struct pics {
	tp_image a, b, bm, crop;
	cmp_flip *flip;
	int fw, fh; /* the size flip was made for */
} pics;

/* One pictured frame's JSON object. a, b: the frames as read; bm: b with A's pixels in
 * the ignored rectangles (what the metrics saw). */
static int picture_frame(FILE *out, const cmp_config *cfg, const cmp_frame *fr, pics *p, int first,
			 tp_err *err)
{
	int w = p->a.w, h = p->a.h;
	cmp_rect c = crop_for(w, h, &fr->m.bbox);
	fprintf(out, "%s\n    {\"index\": %d, \"size\": [%d, %d], \"crop\": [%d, %d, %d, %d]", first ? "" : ",",
		fr->index, w, h, c.x, c.y, c.w, c.h);
	int rc = crop_copy(&p->a, &c, &p->crop, err);
	if (rc == 0)
		rc = put_png(out, "ref", &p->crop, err);
	if (rc == 0)
		rc = crop_copy(&p->b, &c, &p->crop, err);
	if (rc == 0)
		rc = put_png(out, "test", &p->crop, err);
	if (rc == 0) {
		heat_picture(&p->a, &p->bm, &c, fr->m.max_diff, &p->crop);
		rc = put_png(out, "diff", &p->crop, err);
	}
	if (rc == 0 && cfg->flip_ppd > 0) {
		if (p->flip && (p->fw != w || p->fh != h)) {
			cmp_flip_destroy(p->flip);
			p->flip = NULL;
		}
		if (!p->flip) {
			rc = cmp_flip_create(w, h, cfg->flip_ppd, cfg->threads > 0 ? cfg->threads : 1, &p->flip, err);
			p->fw = w;
			p->fh = h;
		}
		if (rc == 0) {
			int64_t n = cmp_unmasked_pixels(w, h, cfg->ignore, cfg->n_ignore);
			cmp_flip_frame(p->flip, &p->a, &p->bm, &fr->m.bbox, cfg->ignore, cfg->n_ignore, n,
				       cfg->threads > 0 ? cfg->threads : 1);
			flip_picture(cmp_flip_map(p->flip), w, &c, &p->crop);
			rc = put_png(out, "flip", &p->crop, err);
		}
	}
	fputc('}', out);
	return rc;
}

static int copy_image(const tp_image *src, tp_image *dst, tp_err *err)
{
	if (!dst->pixels || dst->w != src->w || dst->h != src->h) {
		tp_image_free(dst);
		if (tp_image_alloc(dst, src->w, src->h, TP_RGB8) < 0)
			return tp_errf(err, TP_EIO, "out of memory for a report picture");
	}
	for (int y = 0; y < src->h; y++)
		memcpy(tp_image_row(dst, y), tp_image_row(src, y), 3 * (size_t)src->w);
	return 0;
}

/* The "frames" array of the pictures block: the chosen frames, read again in index order
 * (a video only forwards). Returns 0, or an error that the page shows instead. */
static int pictures(FILE *out, const cmp_config *cfg, const cmp_frame **chosen, int n, tp_err *err)
{
	cmp_source *sa = NULL, *sb = NULL;
	pics p;
	memset(&p, 0, sizeof p);
	int rc = cmp_source_open(cfg->a, &sa, err);
	if (rc == 0)
		rc = cmp_source_open(cfg->b, &sb, err);
	int next = 0, first = 1;
	for (int i = 0; rc == 0 && next < n; i++) {
		int want = chosen[next]->index == i;
		if (!want && cmp_source_random_access(sa) && cmp_source_random_access(sb))
			continue;
		rc = cmp_source_read(sa, i, TP_RGB8, &p.a, err);
		if (rc == 0)
			rc = cmp_source_read(sb, i, TP_RGB8, &p.b, err);
		if (rc < 0 || !want)
			continue;
		if (p.a.w != p.b.w || p.a.h != p.b.h) {
			rc = tp_errf(err, TP_EINPUT, "frame %d changed size since the comparison", i);
			break;
		}
		rc = copy_image(&p.b, &p.bm, err);
		if (rc == 0) {
			cmp_mask_copy(&p.a, &p.bm, cfg->ignore, cfg->n_ignore);
			rc = picture_frame(out, cfg, chosen[next], &p, first, err);
		}
		first = 0;
		next++;
	}
	tp_image_free(&p.a);
	tp_image_free(&p.b);
	tp_image_free(&p.bm);
	tp_image_free(&p.crop);
	cmp_flip_destroy(p.flip);
	cmp_source_close(sa);
	cmp_source_close(sb);
	return rc;
}

static void pictures_block(FILE *out, const cmp_config *cfg, const cmp_result *res, int max_frames)
{
	int failing = 0, measured = 0;
	const cmp_frame **chosen = calloc((size_t)(res->n > 0 ? res->n : 1), sizeof *chosen);
	for (int i = 0; i < res->n; i++) {
		failing += res->frames[i].status != CMP_IDENTICAL && res->frames[i].status != CMP_WITHIN;
		if (chosen && res->frames[i].status == CMP_FAIL)
			chosen[measured++] = &res->frames[i];
	}
	int n = measured < max_frames ? measured : max_frames;
	if (chosen) {
		qsort(chosen, (size_t)measured, sizeof *chosen, worse_first);
		qsort(chosen, (size_t)n, sizeof *chosen, by_index);
	}
	fprintf(out, "{\n  \"max_frames\": %d, \"max_size\": [%d, %d], \"failing\": %d, \"measured\": %d,\n",
		max_frames, CMP_HTML_MAX_W, CMP_HTML_MAX_H, failing, measured);
	/* Why some frames cannot have pictures. */
	const char *why = NULL;
	if (res->error[0])
		why = "the comparison stopped on an input error: no frames to show";
	else if (!strcmp(res->kind_a, "manifest") || !strcmp(res->kind_b, "manifest"))
		why = "a frame-hash manifest holds no pixels: frames are compared by hash only, so there "
		      "are no pictures and no metrics";
	else if (cfg->update)
		why = "--update rewrote the reference frames, so there are no pictures of the old ones";
	fputs("  \"no_pixels\": ", out);
	if (why)
		json_str(out, why);
	else
		fputs("null", out);
	fputs(",\n  \"frames\": [", out);
	tp_err perr = { "" };
	int rc = 0;
	if (!why && n > 0 && chosen) {
		/* The frames go to a memory buffer first, so a failure leaves the JSON whole. */
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (!m) {
			rc = tp_errf(&perr, TP_EIO, "out of memory");
		} else {
			rc = pictures(m, cfg, chosen, n, &perr);
			fclose(m);
			if (rc == 0 && buf)
				fwrite(buf, 1, len, out);
		}
		free(buf);
	} else if (!chosen) {
		rc = tp_errf(&perr, TP_EIO, "out of memory");
	}
	fputs("\n  ],\n  \"error\": ", out);
	if (rc < 0)
		json_str(out, perr.msg);
	else
		fputs("null", out);
	fputs("\n}", out);
	free(chosen);
}

/* Writes the part of the template before `marker` (from *pos) and moves past it. */
static int template_to(FILE *out, const char *tpl, size_t len, size_t *pos, const char *marker)
{
	size_t ml = strlen(marker);
	for (size_t i = *pos; i + ml <= len; i++) {
		if (!memcmp(tpl + i, marker, ml)) {
			fwrite(tpl + *pos, 1, i - *pos, out);
			*pos = i + ml;
			return 0;
		}
	}
	return -1;
}

int cmp_report_html(const char *path, const cmp_config *cfg, const cmp_result *res, int max_frames,
		    tp_err *err)
{
	const char *tpl = (const char *)report_html;
	size_t len = report_html_len, pos = 0;
	tp_wfile o;
	int rc = 0;
	if (!tp_is_special(path))
		rc = tp_mkdirs_for(path, err);
	if (rc == 0)
		rc = tp_wopen(&o, path, err);
	if (rc < 0)
		return rc;
	FILE *f = o.f;
	int bad = template_to(f, tpl, len, &pos, "/*@CSS@*/");
	fwrite(report_css, 1, report_css_len, f);
	bad |= template_to(f, tpl, len, &pos, "<!--@DATA@-->");
	fputs("<script type=\"application/json\" id=\"tp-report\">", f);
	char *json = NULL;
	size_t jlen = 0;
	FILE *m = open_memstream(&json, &jlen);
	if (m) {
		cmp_report_json_write(m, cfg, res);
		fclose(m);
		put_script_json(f, json, jlen);
	}
	free(json);
	fputs("</script>\n<script type=\"application/json\" id=\"tp-pictures\">", f);
	pictures_block(f, cfg, res, max_frames);
	fputs("</script>\n", f);
	bad |= template_to(f, tpl, len, &pos, "/*@JS@*/");
	fwrite(report_js, 1, report_js_len, f);
	fwrite(tpl + pos, 1, len - pos, f);
	if (bad || !m) {
		tp_wclose(&o, 0, err);
		return tp_errf(err, TP_EIO, "%s: the report template is broken", path);
	}
	return tp_wclose(&o, 1, err);
}
