/* flipbook.c - frames collected into one atlas PNG (layout and contract: flipbook.h). */
#include "encode/flipbook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode/record.h"
#include "util/fsutil.h"
#include "util/png.h"

/* Area-resampling taps along one axis: output o reads src[i] for i in [off[o], off[o+1]). */
typedef struct taps {
	int *off, *src;
	double *w;
} taps;

typedef struct flipbook {
	char path[4096];
	enc_flipbook fb;
	int aw, ah, cw, ch; /* atlas and cell size */
	int frames, cells;
	int threads; /* enc_config.threads, or OpenMP's default */
	int channels, wide;
	tp_image atlas;
	taps tx, ty;
	int same_size; /* cells are frame-sized: plain copies */
	int done;      /* cells filled */
	const enc_record *record; /* enc_config.record, or NULL */
} flipbook;

static int next_pot(int v)
{
	int p = 1;
	while (p < v && p < (1 << 30))
		p <<= 1;
	return p;
}

void enc_flipbook_size(const enc_flipbook *fb, int *atlas_w, int *atlas_h, int *cell_w, int *cell_h)
{
	const int p2 = 2 * fb->padding;
	int64_t aw = (int64_t)fb->cols * (fb->cell_w + p2),
		ah = (int64_t)fb->rows * (fb->cell_h + p2);
	int cw = fb->cell_w, ch = fb->cell_h;
	if (fb->pot && aw <= FLIPBOOK_MAX_SIDE && ah <= FLIPBOOK_MAX_SIDE) {
		aw = next_pot((int)aw);
		ah = next_pot((int)ah);
		cw = (int)(aw / fb->cols) - p2;
		ch = (int)(ah / fb->rows) - p2;
	}
	*atlas_w = aw > FLIPBOOK_MAX_SIDE * 2 ? FLIPBOOK_MAX_SIDE * 2 : (int)aw;
	*atlas_h = ah > FLIPBOOK_MAX_SIDE * 2 ? FLIPBOOK_MAX_SIDE * 2 : (int)ah;
	*cell_w = cw;
	*cell_h = ch;
}

static int flipbook_probe(const char *path)
{
	(void)path;
	return 0; /* chosen by the render command, never by name */
}

static int flipbook_check(const enc_config *cfg, tp_err *err)
{
	const enc_flipbook *fb = cfg->flipbook;
	size_t n = strlen(cfg->path);
	if (!fb)
		return tp_errf(err, TP_EUSAGE, "%s: a flipbook needs a layout", cfg->path);
	/* ".png" exactly (not tp_has_suffix's any case): cli/outputs.c sends only such a path
	 * here, and a flipbook refused for "OUT.PNG" stays refused. */
	if (n < 5 || strcmp(cfg->path + n - 4, ".png") || strchr(cfg->path, '%'))
		return tp_errf(err, TP_EUSAGE, "%s: a flipbook is one .png file (no %%d pattern)", cfg->path);
	if (fb->cols < 1 || fb->rows < 1 || fb->cell_w < 1 || fb->cell_h < 1)
		return tp_errf(err, TP_EUSAGE, "%s: flipbook grid and frame size must be positive", cfg->path);
	if (fb->padding < 0 || fb->padding > FLIPBOOK_MAX_PADDING)
		return tp_errf(err, TP_EUSAGE, "%s: flipbook padding must be 0..%d pixels",
			       cfg->path, FLIPBOOK_MAX_PADDING);
	int aw, ah, cw, ch;
	enc_flipbook_size(fb, &aw, &ah, &cw, &ch);
	if (aw > FLIPBOOK_MAX_SIDE || ah > FLIPBOOK_MAX_SIDE)
		return tp_errf(err, TP_EUSAGE,
			       "%s: the %dx%d flipbook of %dx%d frames would be %dx%d, more than %dx%d "
			       "(the largest texture GPUs take); use smaller frames or fewer cells",
			       cfg->path, fb->cols, fb->rows, cw, ch, aw, ah, FLIPBOOK_MAX_SIDE, FLIPBOOK_MAX_SIDE);
	double bytes = (double)aw * ah * tp_pixfmt_bytes(cfg->fmt);
	if (bytes > FLIPBOOK_MAX_BYTES)
		return tp_errf(err, TP_EUSAGE, "%s: a %dx%d %s atlas needs %.1f GiB, over the %.0f GiB limit",
			       cfg->path, aw, ah, tp_pixfmt_name(cfg->fmt), bytes / (1 << 30),
			       FLIPBOOK_MAX_BYTES / (1 << 30));
	int cells = fb->cols * fb->rows;
	if (cfg->frames < cells)
		return tp_errf(err, TP_EUSAGE,
			       "%s: the %dx%d flipbook has %d cells but the render has %d frame%s "
			       "(render more frames or use a smaller grid)",
			       cfg->path, fb->cols, fb->rows, cells, cfg->frames, cfg->frames == 1 ? "" : "s");
	if (cfg->settings_only)
		return 0;
	int rc = tp_mkdirs_for(cfg->path, err);
	if (rc < 0)
		return rc;
	return enc_check_output(cfg->path, cfg->overwrite, err);
}

/* Output o of n covers source [o*s, (o+1)*s), s = src/n; each source pixel weighs its
 * overlap / s, so the weights of an output sum to 1 and a periodic frame stays periodic. */
static int make_taps(taps *t, int src, int n)
{
	double s = (double)src / n;
	int per = (int)ceil(s) + 1;
	t->off = malloc(((size_t)n + 1) * sizeof *t->off);
	t->src = malloc((size_t)n * (size_t)per * sizeof *t->src);
	t->w = malloc((size_t)n * (size_t)per * sizeof *t->w);
	if (!t->off || !t->src || !t->w)
		return -1;
	int k = 0;
	for (int o = 0; o < n; o++) {
		double a = o * s, b = (o + 1) * s;
		t->off[o] = k;
		for (int i = (int)floor(a); i < src && i < b; i++) {
			double ov = fmin(i + 1.0, b) - fmax((double)i, a);
			if (ov <= 0)
				continue;
			t->src[k] = i;
			t->w[k++] = ov / s;
		}
	}
	t->off[n] = k;
	return 0;
}

static void free_taps(taps *t)
{
	free(t->off);
	free(t->src);
	free(t->w);
	memset(t, 0, sizeof *t);
}

static int flipbook_open(void *priv, const enc_config *cfg, tp_err *err)
{
	flipbook *f = priv;
	int rc = flipbook_check(cfg, err);
	if (rc < 0)
		return rc;
	snprintf(f->path, sizeof f->path, "%s", cfg->path);
	f->fb = *cfg->flipbook;
	f->threads = enc_threads(cfg);
	f->record = cfg->record;
	enc_flipbook_size(&f->fb, &f->aw, &f->ah, &f->cw, &f->ch);
	f->frames = cfg->frames;
	f->cells = f->fb.cols * f->fb.rows;
	f->channels = tp_pixfmt_channels(cfg->fmt);
	f->wide = cfg->fmt == TP_GRAY16 || cfg->fmt == TP_RGB16;
	f->same_size = f->cw == cfg->w && f->ch == cfg->h;
	if (tp_image_alloc(&f->atlas, f->aw, f->ah, cfg->fmt) < 0)
		return tp_errf(err, TP_EIO, "%s: out of memory for a %dx%d atlas", cfg->path, f->aw, f->ah);
	if (!f->same_size && (make_taps(&f->tx, cfg->w, f->cw) < 0 || make_taps(&f->ty, cfg->h, f->ch) < 0))
		return tp_errf(err, TP_EIO, "out of memory");
	return 0;
}

static double get(const tp_image *img, int x, int y, int c, int ch, int wide)
{
	const uint8_t *r = tp_image_row(img, y);
	return wide ? ((const uint16_t *)(const void *)r)[x * ch + c] : r[x * ch + c];
}

/* One cell from one frame: area average of its footprint, per channel. */
static void fill_cell(flipbook *f, const tp_image *img, int cx, int cy)
{
	const int ch = f->channels, wide = f->wide, bpp = tp_pixfmt_bytes(img->fmt);
	const double maxv = wide ? 65535.0 : 255.0;
	if (f->same_size) {
		for (int y = 0; y < f->ch; y++)
			memcpy(tp_image_row(&f->atlas, cy + y) + (size_t)cx * bpp, tp_image_row(img, y),
			       (size_t)f->cw * bpp);
		return;
	}
#pragma omp parallel for schedule(static) num_threads(f->threads)
	for (int oy = 0; oy < f->ch; oy++) {
		uint8_t *row = tp_image_row(&f->atlas, cy + oy) + (size_t)cx * bpp;
		for (int ox = 0; ox < f->cw; ox++) {
			double v[4] = { 0, 0, 0, 0 };
			for (int a = f->ty.off[oy]; a < f->ty.off[oy + 1]; a++)
				for (int b = f->tx.off[ox]; b < f->tx.off[ox + 1]; b++) {
					double wgt = f->ty.w[a] * f->tx.w[b];
					for (int c = 0; c < ch; c++)
						v[c] += wgt * get(img, f->tx.src[b], f->ty.src[a], c, ch, wide);
				}
			if (f->fb.renormalize && ch == 3) {
				/* Averaged unit normals are shorter than 1: make them unit again. */
				double n[3], len = 0;
				for (int c = 0; c < 3; c++) {
					n[c] = v[c] / maxv * 2.0 - 1.0;
					len += n[c] * n[c];
				}
				len = len > 0 ? sqrt(len) : 1.0;
				for (int c = 0; c < 3; c++)
					v[c] = (n[c] / len * 0.5 + 0.5) * maxv;
			}
			for (int c = 0; c < ch; c++) {
				double q = floor(v[c] + 0.5);
				q = q < 0 ? 0 : q > maxv ? maxv : q;
				if (wide)
					((uint16_t *)(void *)row)[ox * ch + c] = (uint16_t)q;
				else
					row[ox * ch + c] = (uint8_t)q;
			}
		}
	}
}

/* The padding around the cell whose frame is at (x0, y0): each border pixel repeats the
 * frame's pixel at its offset taken modulo the cell (wrap: the frame's own continuation
 * across its edge) or clamped into it (the edge pixel extended). */
static void pad_cell(flipbook *f, int x0, int y0)
{
	const int p = f->fb.padding, w = f->cw, h = f->ch;
	if (p == 0)
		return;
	const size_t bpp = (size_t)tp_pixfmt_bytes(f->atlas.fmt);
	for (int y = -p; y < h + p; y++) {
		const int sy = f->fb.wrap ? ((y % h) + h) % h : y < 0 ? 0 : y >= h ? h - 1 : y;
		uint8_t *dst = tp_image_row(&f->atlas, y0 + y);
		const uint8_t *src = tp_image_row(&f->atlas, y0 + sy);
		for (int x = -p; x < w + p; x++) {
			if (y >= 0 && y < h && x == 0)
				x = w; /* the frame itself: already there */
			if (x >= w + p)
				break;
			const int sx = f->fb.wrap ? ((x % w) + w) % w
				       : x < 0    ? 0
				       : x >= w   ? w - 1
						  : x;
			memcpy(dst + (size_t)(x0 + x) * bpp, src + (size_t)(x0 + sx) * bpp, bpp);
		}
	}
}

static int flipbook_write(void *priv, int index, const tp_image *img, tp_err *err)
{
	flipbook *f = priv;
	(void)err;
	/* Cell i shows frame floor(i * F / N); F >= N, so a frame feeds at most one cell,
	 * the first i with i * F >= index * N. */
	int64_t F = f->frames, N = f->cells;
	int64_t i = ((int64_t)index * N + F - 1) / F;
	if (i >= N || i * F / N != index)
		return 0;
	const int pad = f->fb.padding, sw = f->cw + 2 * pad, sh = f->ch + 2 * pad;
	const int x0 = (int)(i % f->fb.cols) * sw + pad, y0 = (int)(i / f->fb.cols) * sh + pad;
	fill_cell(f, img, x0, y0);
	pad_cell(f, x0, y0);
	f->done++;
	return 0;
}

static int flipbook_close(void *priv, enc_close_mode mode, tp_err *err)
{
	flipbook *f = priv;
	int rc = 0;
	/* A partial atlas would be a broken texture: only a complete one is written. */
	if (mode == ENC_CLOSE_DONE && f->atlas.pixels) {
		if (f->done < f->cells)
			rc = tp_errf(err, TP_EIO, "%s: only %d of %d flipbook cells were rendered", f->path, f->done,
				     f->cells);
		else {
			char *json =
				f->record ? enc_record_text(f->record, 0, f->frames - 1) : NULL;
			const tp_png_meta m = {.record = json,
					       .srgb = f->record &&
						       (f->record->mode == TP_MODE_COLOR ||
							f->record->mode == TP_MODE_PARTICLES)};
			rc = f->record && !json
				     ? tp_errf(err, TP_EIO, "out of memory")
				     : tp_png_write_meta(f->path, &f->atlas, -1, &m, err);
			free(json);
		}
	}
	tp_image_free(&f->atlas);
	free_taps(&f->tx);
	free_taps(&f->ty);
	return rc;
}

const tp_encoder tp_encoder_flipbook = {
	.name = "flipbook",
	.description = "frames tiled into one atlas PNG (chosen with --flipbook or \"flipbook\")",
	.priv_size = sizeof(flipbook),
	.probe = flipbook_probe,
	.check = flipbook_check,
	.open = flipbook_open,
	.write_frame = flipbook_write,
	.close = flipbook_close,
};
