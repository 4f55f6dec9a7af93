/* report_html.c - the HTML report of a comparison: one self-contained file (docs/compare.md).
 *
 * The page (src/compare/report/report.{html,css,js}, embedded at build time by xxd)
 * is filled with two JSON blocks: the JSON report itself (cmp_report_json_write, so the
 * page shows exactly its numbers), and the pictures of the worst `frames` failing frames
 * (frames of different sizes first), cropped around the changed rectangle to at most
 * CMP_HTML_MAX_W x CMP_HTML_MAX_H pixels (never scaled, so zooming shows real pixels).
 * Every picture is lossless WebP (libwebp), and the page rebuilds what it shows:
 *
 *   pic      one side's crop, "pic_side" "a" (A) or "b" (B), or with "pic_from": k,
 *            (S - S_k) mod 256 per channel against that side's crop of frame k (the
 *            previous pictured frame: consecutive frames share most of their pixels).
 *            Of the four (A, B, each whole or from k) the smallest is kept.
 *   delta    (B - A) mod 256 per channel: the other side is pic + delta or pic - delta,
 *            and the difference map is the heat of max_c |delta| (zero where nothing
 *            changed, so it costs almost nothing)
 *   flip     the FLIP error map, when measured, as the index of each pixel's colour in
 *            the magma table (grey: R = G = B), which the pictures block carries once
 *            ("magma"); about two thirds of the bytes of the map in colour
 *
 * A frame whose sizes differ has "mismatch" and both sides whole ("ref", "test"). Frames
 * are read again from the inputs for this; every other frame is in the chart and the
 * table only. A picture in the JSON is [offset, length] into one blob of all the WebP
 * bytes, which follows the JSON in its own element as text7 (below): 8/7 bytes of the page
 * a byte, where base64 data: URIs took 4/3 and a prefix each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <webp/encode.h>

#include "cmp_report_assets.h"
#include "compare/compare.h"
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

/* text7: the bytes as one stream of bits, most significant first, cut into 7-bit numbers
 * (the last padded with zero bits); each number v is the ASCII character v, except those
 * an HTML <script> element would not give back as they are (NUL, CR, '<'): such a v and
 * the number after it (0 past the end) are the one character U+0100 + 128 i + next, i its
 * place in TEXT7_ESC, two bytes of UTF-8 for 14 bits as the ASCII are one for 7. So 8/7
 * bytes of the page a byte (base64: 4/3). The page (report.js, text7) reverses it. */
static const unsigned char TEXT7_ESC[3] = {0, 13, '<'};

static void text7(FILE *out, const unsigned char *p, size_t n)
{
	unsigned acc = 0;
	int bits = 0, esc = -1; /* esc: the escaped number waiting for the next */
	for (size_t i = 0; i <= n; i++) {
		if (i < n) {
			acc = (acc << 8 | p[i]) & 0x7fff; /* at most 6 + 8 bits are pending */
			bits += 8;
		} else if (bits > 0) {
			acc <<= 7 - bits; /* the last number, padded */
			bits = 7;
		}
		for (; bits >= 7; bits -= 7) {
			unsigned v = (acc >> (bits - 7)) & 127;
			if (esc >= 0) {
				unsigned c = 0x100 + 128 * (unsigned)esc + v; /* U+0100..U+027F */
				fputc(0xc0 | c >> 6, out);
				fputc(0x80 | (c & 63), out);
				esc = -1;
				continue;
			}
			const unsigned char *e = memchr(TEXT7_ESC, (int)v, sizeof TEXT7_ESC);
			if (e)
				esc = (int)(e - TEXT7_ESC);
			else
				fputc((int)v, out);
		}
	}
	if (esc >= 0) {
		unsigned c = 0x100 + 128 * (unsigned)esc;
		fputc(0xc0 | c >> 6, out);
		fputc(0x80 | (c & 63), out);
	}
}

/* img as lossless WebP (libwebp) into wr (WebPMemoryWriterClear frees it). */
static int webp_encode(const tp_image *img, WebPMemoryWriter *wr, tp_err *err)
{
	WebPConfig cfg;
	WebPPicture pic;
	if (!WebPConfigInit(&cfg) || !WebPConfigLosslessPreset(&cfg, 6) || !WebPPictureInit(&pic))
		return tp_errf(err, TP_EIO, "libwebp: version mismatch");
	cfg.exact = 1;
	pic.use_argb = 1;
	pic.width = img->w;
	pic.height = img->h;
	pic.writer = WebPMemoryWrite;
	pic.custom_ptr = wr;
	int ok =
		WebPPictureImportRGB(&pic, img->pixels, (int)img->stride) && WebPEncode(&cfg, &pic);
	WebPPictureFree(&pic);
	return ok ? 0 : tp_errf(err, TP_EIO, "out of memory for a report picture");
}

/* , "key": [offset, length] of wr's bytes, appended to the blob. */
static void put_webp(FILE *out, FILE *blob, const char *key, const WebPMemoryWriter *wr)
{
	fprintf(out, ", \"%s\": [%ld, %zu]", key, ftell(blob), wr->size);
	fwrite(wr->mem, 1, wr->size, blob);
}

static int put_picture(FILE *out, FILE *blob, const char *key, const tp_image *img, tp_err *err)
{
	WebPMemoryWriter wr;
	WebPMemoryWriterInit(&wr);
	int rc = webp_encode(img, &wr, err);
	if (rc == 0)
		put_webp(out, blob, key, &wr);
	WebPMemoryWriterClear(&wr);
	return rc;
}

/* ---- choosing and cropping ---- */

/* Worst first: frames of different sizes, then FLIP when measured, then MSE, then SSIM,
 * then the lower index. */
static int worse_first(const void *pa, const void *pb)
{
	const cmp_frame *a = *(const cmp_frame *const *)pa, *b = *(const cmp_frame *const *)pb;
	if ((a->status == CMP_SIZE) != (b->status == CMP_SIZE))
		return a->status == CMP_SIZE ? -1 : 1;
	if (a->status == CMP_SIZE)
		return a->index - b->index;
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

/* (b - a) mod 256 per channel over the crop c (the page adds it back to a). */
static void delta_picture(const tp_image *a, const tp_image *b, const cmp_rect *c, tp_image *dst)
{
	for (int y = 0; y < c->h; y++) {
		const uint8_t *pa = tp_image_row(a, c->y + y) + 3 * (size_t)c->x;
		const uint8_t *pb = tp_image_row(b, c->y + y) + 3 * (size_t)c->x;
		uint8_t *o = tp_image_row(dst, y);
		for (int x = 0; x < 3 * c->w; x++)
			o[x] = (uint8_t)(pb[x] - pa[x]);
	}
}

static void flip_picture(const float *map, int w, const cmp_rect *c, tp_image *dst)
{
	for (int y = 0; y < c->h; y++) {
		const float *m = map + (size_t)(c->y + y) * (size_t)w + c->x;
		uint8_t *o = tp_image_row(dst, y);
		for (int x = 0; x < c->w; x++)
			memset(o + 3 * x, cmp_flip_magma_index(m[x]), 3);
	}
}

typedef struct pics {
	tp_image a, b, bm, side[2], prev[2], tmp; /* side, prev: A's and B's crops */
	int prev_index;                           /* the frame prev holds (-1: none) */
	cmp_flip *flip;
	int fw, fh; /* the size flip was made for */
} pics;

static int ensure_rgb(tp_image *img, int w, int h, tp_err *err)
{
	if (img->pixels && img->w == w && img->h == h)
		return 0;
	tp_image_free(img);
	return tp_image_alloc(img, w, h, TP_RGB8) < 0
		       ? tp_errf(err, TP_EIO, "out of memory for a report picture")
		       : 0;
}

/* The pic: A's or B's crop (p->side), whole or as its difference from the same side of
 * the previous pictured frame, whichever of the four encodes smallest (rain's B, damped
 * harder, costs less than A; a still background makes the differences cheap). The
 * crops then become p->prev. */
static int put_pic(FILE *out, FILE *blob, pics *p, int index, tp_err *err)
{
	const int w = p->side[0].w, h = p->side[0].h;
	const int chain = p->prev_index >= 0 && p->prev[0].w == w && p->prev[0].h == h;
	WebPMemoryWriter best, cand;
	WebPMemoryWriterInit(&best);
	int rc = 0, have = 0, best_side = 0, best_from = 0;
	for (int k = 0; rc == 0 && k < (chain ? 4 : 2); k++) {
		const int side = k & 1, from = k >= 2;
		const tp_image *img = &p->side[side];
		if (from) {
			cmp_rect all = {0, 0, w, h};
			rc = ensure_rgb(&p->tmp, w, h, err);
			if (rc < 0)
				break;
			delta_picture(&p->prev[side], img, &all, &p->tmp);
			img = &p->tmp;
		}
		WebPMemoryWriterInit(&cand);
		rc = webp_encode(img, &cand, err);
		if (rc == 0 && (!have || cand.size < best.size)) {
			WebPMemoryWriterClear(&best);
			best = cand; /* best owns cand's bytes now */
			have = 1;
			best_side = side;
			best_from = from;
		} else {
			WebPMemoryWriterClear(&cand);
		}
	}
	if (rc == 0) {
		fprintf(out, ", \"pic_side\": \"%s\"", best_side ? "b" : "a");
		if (best_from)
			fprintf(out, ", \"pic_from\": %d", p->prev_index);
		put_webp(out, blob, "pic", &best);
		for (int i = 0; i < 2; i++) {
			tp_image t = p->prev[i];
			p->prev[i] = p->side[i];
			p->side[i] = t;
		}
		p->prev_index = index;
	}
	WebPMemoryWriterClear(&best);
	return rc;
}

/* A frame whose sizes differ: each side whole (or cropped about its centre). */
static int mismatch_frame(FILE *out, FILE *blob, const cmp_frame *fr, pics *p, tp_err *err)
{
	cmp_rect none = {0, 0, 0, 0};
	cmp_rect ca = crop_for(p->a.w, p->a.h, &none), cb = crop_for(p->b.w, p->b.h, &none);
	fprintf(out,
		"{\"index\": %d, \"mismatch\": true, \"size\": [%d, %d], \"crop\": [%d, %d, %d, "
		"%d], "
		"\"test_size\": [%d, %d], \"test_crop\": [%d, %d, %d, %d]",
		fr->index, p->a.w, p->a.h, ca.x, ca.y, ca.w, ca.h, p->b.w, p->b.h, cb.x, cb.y, cb.w,
		cb.h);
	int rc = crop_copy(&p->a, &ca, &p->tmp, err);
	if (rc == 0)
		rc = put_picture(out, blob, "ref", &p->tmp, err);
	if (rc == 0)
		rc = crop_copy(&p->b, &cb, &p->tmp, err);
	if (rc == 0)
		rc = put_picture(out, blob, "test", &p->tmp, err);
	fputc('}', out);
	return rc;
}

/* One pictured frame's JSON object. a, b: the frames as read; bm: b with A's pixels in
 * the ignored rectangles (what the metrics saw, and what FLIP measures). */
static int picture_frame(FILE *out, FILE *blob, const cmp_config *cfg, const cmp_frame *fr, pics *p,
			 int first, tp_err *err)
{
	fputs(first ? "\n    " : ",\n    ", out);
	if (fr->status == CMP_SIZE)
		return mismatch_frame(out, blob, fr, p, err);
	int w = p->a.w, h = p->a.h;
	cmp_rect c = crop_for(w, h, &fr->m.bbox);
	fprintf(out, "{\"index\": %d, \"size\": [%d, %d], \"crop\": [%d, %d, %d, %d]", fr->index, w,
		h, c.x, c.y, c.w, c.h);
	int rc = crop_copy(&p->a, &c, &p->side[0], err);
	if (rc == 0)
		rc = crop_copy(&p->b, &c, &p->side[1], err);
	if (rc == 0)
		rc = put_pic(out, blob, p, fr->index, err);
	if (rc == 0)
		rc = ensure_rgb(&p->tmp, c.w, c.h, err);
	if (rc == 0) {
		delta_picture(&p->a, &p->b, &c, &p->tmp);
		rc = put_picture(out, blob, "delta", &p->tmp, err);
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
			rc = ensure_rgb(&p->tmp, c.w, c.h, err);
			if (rc == 0) {
				flip_picture(cmp_flip_map(p->flip), w, &c, &p->tmp);
				rc = put_picture(out, blob, "flip", &p->tmp, err);
			}
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
static int pictures(FILE *out, FILE *blob, const cmp_config *cfg, const cmp_frame **chosen, int n,
		    tp_err *err)
{
	cmp_source *sa = NULL, *sb = NULL;
	pics p;
	memset(&p, 0, sizeof p);
	p.prev_index = -1;
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
		if ((p.a.w != p.b.w || p.a.h != p.b.h) != (chosen[next]->status == CMP_SIZE)) {
			rc = tp_errf(err, TP_EINPUT, "frame %d changed size since the comparison", i);
			break;
		}
		rc = copy_image(&p.b, &p.bm, err);
		if (rc == 0) {
			cmp_mask_copy(&p.a, &p.bm, cfg->ignore, cfg->n_ignore);
			rc = picture_frame(out, blob, cfg, chosen[next], &p, first, err);
		}
		first = 0;
		next++;
	}
	tp_image_free(&p.a);
	tp_image_free(&p.b);
	tp_image_free(&p.bm);
	for (int i = 0; i < 2; i++) {
		tp_image_free(&p.side[i]);
		tp_image_free(&p.prev[i]);
	}
	tp_image_free(&p.tmp);
	cmp_flip_destroy(p.flip);
	cmp_source_close(sa);
	cmp_source_close(sb);
	return rc;
}

/* The pictures block (JSON) into out; the WebP bytes its pictures point into go to *blob
 * (malloc'd, *blob_len bytes; NULL when there are none). */
static void pictures_block(FILE *out, const cmp_config *cfg, const cmp_result *res, int max_frames,
			   char **blob, size_t *blob_len)
{
	*blob = NULL;
	*blob_len = 0;
	int failing = 0, measured = 0, mismatched = 0, k = 0;
	const cmp_frame **chosen = calloc((size_t)(res->n > 0 ? res->n : 1), sizeof *chosen);
	for (int i = 0; i < res->n; i++) {
		cmp_status st = res->frames[i].status;
		failing += st != CMP_IDENTICAL && st != CMP_WITHIN;
		measured += st == CMP_FAIL;
		mismatched += st == CMP_SIZE;
		if (chosen && (st == CMP_FAIL || st == CMP_SIZE))
			chosen[k++] = &res->frames[i];
	}
	int n = k < max_frames ? k : max_frames;
	if (chosen) {
		qsort(chosen, (size_t)k, sizeof *chosen, worse_first);
		qsort(chosen, (size_t)n, sizeof *chosen, by_index);
	}
	fprintf(out,
		"{\n  \"max_frames\": %d, \"max_size\": [%d, %d], \"failing\": %d, \"measured\": "
		"%d, "
		"\"mismatched\": %d,\n",
		max_frames, CMP_HTML_MAX_W, CMP_HTML_MAX_H, failing, measured, mismatched);
	/* Why some frames cannot have pictures. */
	const char *why = NULL;
	if (res->error[0])
		why = "the comparison stopped on an input error: no frames to show";
	else if (!strcmp(res->kind_a, "manifest") || !strcmp(res->kind_b, "manifest"))
		why = "a frame-hash manifest holds no pixels: frames are compared by hash only, so there "
		      "are no pictures and no metrics";
	else if (cfg->update)
		why = "--update rewrote the reference frames, so there are no pictures of the old ones";
	if (cfg->flip_ppd > 0) {
		fputs("  \"magma\": [", out);
		for (int i = 0; i < 256; i++) {
			const uint8_t *c = cmp_flip_magma_table[i];
			fprintf(out, "%s%d,%d,%d", i ? "," : "", c[0], c[1], c[2]);
		}
		fputs("],\n", out);
	}
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
		FILE *m = open_memstream(&buf, &len), *bm = open_memstream(blob, blob_len);
		if (!m || !bm) {
			rc = tp_errf(&perr, TP_EIO, "out of memory");
		} else {
			rc = pictures(m, bm, cfg, chosen, n, &perr);
		}
		if (m)
			fclose(m);
		if (bm)
			fclose(bm);
		if (rc == 0 && buf)
			fwrite(buf, 1, len, out);
		if (rc < 0) {
			free(*blob);
			*blob = NULL;
			*blob_len = 0;
		}
		free(buf);
	} else if (!chosen) {
		rc = tp_errf(&perr, TP_EIO, "out of memory");
	}
	fprintf(out, "\n  ],\n  \"blob_bytes\": %zu,\n  \"error\": ", *blob_len);
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
	char *blob = NULL;
	size_t blob_len = 0;
	pictures_block(f, cfg, res, max_frames, &blob, &blob_len);
	fputs("</script>\n<script type=\"text/plain\" id=\"tp-blob\">", f);
	text7(f, (const unsigned char *)blob, blob_len);
	free(blob);
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
