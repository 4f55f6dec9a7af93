/*
 * refract.c - the "color" mode: the background seen through the moving surface.
 *
 * Seeds 000/001: each pixel shows the background displaced by the local slope,
 *     (sx, sy) = (x, y) + R * (dh/dx, dh/dy)
 * where R = REFRACT_PX * refraction * s^2 (pixels of offset per height unit of slope; s =
 * output pixels per scene unit: a slope per pixel is 1/s of the same slope per scene unit,
 * and the offset should be s times as many pixels, so that every size shows the same),
 * sampled bilinearly; then seed 001's reflection term, brightness following height,
 *     c += REFLECT_LEVELS * reflection * h,
 * over the water tint, c = mix(c, tint, tint_strength) (folded into the background once
 * per render, see render.c), and a sun highlight from the surface normal
 * n = normalize(-g*dh/dx, -g*dh/dy, 1), g = NORMAL_GAIN * s (Blinn-Phong (n.h)^64, taken as
 * ((m.h)^2 / |m|^2)^32 with the unnormalised m, so no square root, by repeated squaring).
 *
 * The slopes are not the seeds' central differences of h but those of h smoothed by the
 * 3x3 binomial filter [1 2 1]^T [1 2 1] / 16 (a 5x5 support; see row_geometry), and the
 * reflection reads the smoothed height too. The filter's response cos^2(kx/2) cos^2(ky/2)
 * vanishes at the grid's Nyquist frequency, so the odd-even (checkerboard) mode and the
 * near-Nyquist waves that the integer ripple stencils leave in the heights show no
 * slope and no hatching (docs/internals.md measures it); a plane's slope is exact.
 *
 * Per pixel, in fixed point (the same integers on every path):
 *     fx, fy = the sample position's fractions in 1/8 pixel (0..8),
 *     w00 = (8-fx)(8-fy), w01 = fx(8-fy), w10 = (8-fx)fy, w11 = fx fy   (sum 64),
 *     c   = (p00 w00 + p01 w01 + p10 w10 + p11 w11 + 32) >> 6   per channel,
 *     out = clamp(c + lift, 0, 255),  lift = round(reflection + highlight) in levels.
 * 1/8 pixel positions keep the weights in signed bytes, so one multiply-add instruction
 * (VNNI vpdpbusd, or pmaddubsw + pmaddwd) weighs all four taps of a channel.
 *
 * Paths: a float pass per run of CHUNK pixels (slopes, sample positions, weights, lift),
 * vectorised by the compiler for SSE2, AVX2 and AVX-512, then a shading pass (C or AVX2),
 * or, with AVX-512 and VNNI, both fused in registers 16 pixels at a time. The kernels are
 * in refract_dsp.h, each ISA's variants in a file of their own (refract_c.c, refract_vec.c,
 * refract_avx2.c, refract_avx512.c), picked by refract_dsp_init() when the render context
 * is created. Every path computes the same bits (IEEE single precision, no contraction,
 * the same operation order; tests/test_render.c compares them). Rows can be split across
 * threads freely.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "render/refract_dsp.h"
#include "render/render_impl.h"
#include "util/cpu.h"

#define REFRACT_PX     24.0f /* background offset in pixels per height unit of slope */
#define REFLECT_LEVELS 40.0f /* brightness levels per height unit */
#define NORMAL_GAIN    6.0   /* slope exaggeration for the highlight normal, per scene unit */

void refract_dsp_init(refract_dsp *d, unsigned cpu_flags)
{
	const int vec = (cpu_flags & TP_CPU_FLAG_SIMD) != 0;
	*d = (refract_dsp){
		.geometry = {{vec ? refract_geometry_clamp_f32_vec : refract_geometry_clamp_f32_c,
			      vec ? refract_geometry_clamp_i32_vec : refract_geometry_clamp_i32_c},
			     {vec ? refract_geometry_wrap_f32_vec : refract_geometry_wrap_f32_c,
			      vec ? refract_geometry_wrap_i32_vec : refract_geometry_wrap_i32_c}},
		.offsets = {vec ? refract_offsets_f32_vec : refract_offsets_f32_c,
			    vec ? refract_offsets_i32_vec : refract_offsets_i32_c},
		.shade = refract_shade_c,
	};
#ifdef __x86_64__
	if (cpu_flags & TP_CPU_FLAG_AVX2) {
		d->geometry[0][0] = refract_geometry_clamp_f32_avx2;
		d->geometry[0][1] = refract_geometry_clamp_i32_avx2;
		d->geometry[1][0] = refract_geometry_wrap_f32_avx2;
		d->geometry[1][1] = refract_geometry_wrap_i32_avx2;
		d->offsets[0] = refract_offsets_f32_avx2;
		d->offsets[1] = refract_offsets_i32_avx2;
		d->shade = refract_shade_avx2;
		d->aa_vec = 1;
	}
	if ((cpu_flags & TP_CPU_FLAG_AVX512) && (cpu_flags & TP_CPU_FLAG_AVX512VNNI)) {
		d->geometry[0][0] = refract_geometry_clamp_f32_avx512;
		d->geometry[0][1] = refract_geometry_clamp_i32_avx512;
		d->geometry[1][0] = refract_geometry_wrap_f32_avx512;
		d->geometry[1][1] = refract_geometry_wrap_i32_avx512;
		d->offsets[0] = refract_offsets_f32_avx512;
		d->offsets[1] = refract_offsets_i32_avx512;
		d->fused[0][0] = refract_color_clamp_f32_avx512vnni;
		d->fused[0][1] = refract_color_clamp_i32_avx512vnni;
		d->fused[1][0] = refract_color_wrap_f32_avx512vnni;
		d->fused[1][1] = refract_color_wrap_i32_avx512vnni;
		d->aa_vec = 2; /* refract_aa.c's AVX-512 lookups need F, BW and VNNI */
	}
#endif
}

/* One frame's set-up of the colour pass. */
typedef struct color_frame {
	const render_in *in;
	color_par par;
	refract_geometry_fn geom;
	const refract_dsp *dsp;
	refract_shade_fn shade;
	refract_color_fn fused; /* NULL: geom then shade */
	int aa;      /* supersample steep refraction (refract_aa.c) */
	render_aa aap;
	render_hl hl; /* and filter its highlight (highlight.c) */
	int reach;   /* a pixel can differ from still water's within this many samples */
} color_frame;

static void color_setup(const render_in *in, color_frame *cf)
{
	const int wrap = in->wrap;
	const scene_render *rs = &in->sc->render;
	const double px = in->px;
	/* Half vector between the sun (up-left, high) and the viewer straight above. */
	const float lx = -0.35f, ly = -0.45f, lz = 0.82f;
	const float hl = sqrtf(lx * lx + ly * ly + (lz + 1) * (lz + 1));
	const double ng = NORMAL_GAIN * px;
	const tp_surface *sf = in->surf;
	const double u = sf->scale; /* height units per stored unit */
	cf->in = in;
	cf->par = (color_par){
		.w = in->w,
		.hgt = in->h,
		.bs = (in->w + 1) * 4,
		.R = (float)(REFRACT_PX * rs->refraction * px * px * u / 32.0),
		.B = (float)(REFLECT_LEVELS * rs->reflection * u / 16.0),
		.spec = (float)rs->specular * 255.0f,
		.g = {(float)(-ng * u / 32 * (lx / hl)), (float)(-ng * u / 32 * (ly / hl)),
		      (lz + 1) / hl},
		.ng2 = (float)(ng * u / 32 * (ng * u / 32)),
	};
	const int is_int = sf->type == TP_SAMPLE_I32;
	const refract_dsp *dsp = in->refract;
	cf->geom = dsp->geometry[wrap != 0][is_int];
	cf->dsp = dsp;
	cf->shade = dsp->shade;
	cf->fused = dsp->fused[wrap != 0][is_int];
	/* with anti-aliasing a pixel also reads its neighbours' offsets, one sample further */
	cf->aa = rs->antialias || in->checks.aa_force;
	cf->aap = (render_aa){.w = in->w,
			      .hgt = in->h,
			      .wrap = wrap,
			      .bs = cf->par.bs,
			      .bgx = in->bgx,
			      .vec = dsp->aa_vec,
			      .flat = wrap ? NULL : in->bgflat,
			      .sat = in->bgsat,
			      .ss = in->bgsat_stride,
			      .checks = in->checks};
	cf->hl = (render_hl){.R = cf->par.R,
			     .spec = cf->par.spec,
			     .g0 = cf->par.g[0],
			     .g1 = cf->par.g[1],
			     .h2 = cf->par.g[2],
			     .ng2 = cf->par.ng2,
			     .checks = in->checks};
	cf->reach = cf->aa ? 3 : 2;
}

/* Rows y-2 .. y+2 of a surface: beyond the frame the edge row, or the opposite one with
 * wrap. */
static void surface_rows(const tp_surface *sf, int y, const void *r[5])
{
	const size_t ss = sf->type == TP_SAMPLE_I32 ? sizeof(int32_t) : sizeof(float);
	for (int k = 0; k < 5; k++) {
		int yy = y + k - 2;
		if (yy < 0 || yy >= sf->h)
			yy = sf->wrap ? (yy + 2 * sf->h) % sf->h : yy < 0 ? 0 : sf->h - 1;
		r[k] = (const char *)sf->data + (size_t)yy * sf->stride * ss;
	}
}


/* The offsets of row y (any row: surface_rows maps it), columns xs .. xs+n-1. */
static void offset_row(const color_frame *cf, const tp_surface *sf, int y, int xs, int n,
		       float *ox, float *oy)
{
	const void *r[5];
	surface_rows(sf, y, r);
	cf->dsp->offsets[sf->type == TP_SAMPLE_I32](r, cf->in->wrap, cf->par.w, xs, n, cf->par.R, ox, oy);
}

/* The refraction offsets of the last three rows a thread asked for, whole rows [xa - 1,
 * xb + 1): anti-aliasing reads rows y - 1, y and y + 1 for row y, and a thread draws
 * consecutive rows, so each row's offsets are computed once instead of three times. The
 * values are offset_row's (a column's offset does not depend on the run it is in). */
typedef struct aa_ring {
	int cap;            /* floats per row and component */
	float *buf;         /* 3 x 2 x cap */
	const tp_surface *sf[3];
	int y[3], xa[3], xb[3];
	int32_t *lift;      /* the lifts of the row being drawn, entry x (w entries) */
} aa_ring;

static void aa_ring_init(aa_ring *r, int w)
{
	r->cap = w + 2;
	r->buf = malloc((size_t)6 * (size_t)r->cap * sizeof *r->buf);
	r->lift = malloc((size_t)w * sizeof *r->lift);
	for (int k = 0; k < 3; k++)
		r->sf[k] = NULL;
}

/* Row yy's offsets [xa - 1, xb + 1) into ox, oy (entry 0: column xa - 1). */
static void aa_ring_row(aa_ring *r, const color_frame *cf, const tp_surface *sf, int yy, int xa,
			int xb, int keep_lo, float **ox, float **oy)
{
	int slot = -1;
	for (int k = 0; k < 3 && slot < 0; k++)
		if (r->sf[k] == sf && r->y[k] == yy && r->xa[k] == xa && r->xb[k] == xb)
			slot = k;
	if (slot < 0) { /* a slot holding none of rows keep_lo .. keep_lo + 2 */
		for (int k = 0; k < 3 && slot < 0; k++)
			if (r->sf[k] != sf || r->xa[k] != xa || r->xb[k] != xb ||
			    r->y[k] < keep_lo || r->y[k] > keep_lo + 2)
				slot = k;
		slot = slot < 0 ? 0 : slot; /* (cannot happen: 3 slots, 3 distinct rows) */
		float *x = r->buf + (size_t)2 * slot * r->cap, *y = x + r->cap;
		for (int c = xa - 1; c < xb + 1; c += CHUNK) {
			const int n = xb + 1 - c < CHUNK ? xb + 1 - c : CHUNK;
			offset_row(cf, sf, yy, c, n, x + (c - (xa - 1)), y + (c - (xa - 1)));
		}
		r->sf[slot] = sf;
		r->y[slot] = yy;
		r->xa[slot] = xa;
		r->xb[slot] = xb;
	}
	*ox = r->buf + (size_t)2 * slot * r->cap;
	*oy = *ox + r->cap;
}

/* Redraws the pixels of [xa, xb) of row y whose refraction is steep (refract_aa.c), with
 * the offsets from `ring` (NULL: computed here, per run) and the lifts the colour pass
 * drew the row with, entry x (NULL: computed again for the steep pixels). */
static void aa_row(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o, int xa, int xb,
		   aa_ring *ring, int32_t *lift)
{
	const void *r[5];
	surface_rows(sf, y, r);
	float ob[3][2][CHUNK + 2];
	float *rows[3][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
	if (ring && ring->buf)
		for (int k = 0; k < 3; k++)
			aa_ring_row(ring, cf, sf, y - 1 + k, xa, xb, y - 1, &rows[k][0], &rows[k][1]);
	uint8_t nsub[CHUNK], steep[CHUNK];
	int32_t buf[3 * CHUNK] __attribute__((aligned(64)));
	float fbuf[2 * CHUNK + 8] __attribute__((aligned(64)));
	row_taps t = {buf, buf + CHUNK, buf + 2 * CHUNK, fbuf, fbuf + CHUNK + 4};
	for (int xs = xa; xs < xb; xs += CHUNK) {
		const int n = xb - xs < CHUNK ? xb - xs : CHUNK;
		render_aa_offsets ofs;
		for (int k = 0; k < 3; k++) {
			if (rows[k][0]) { /* entry 0 of the run: column xs - 1 */
				ofs.row[k][0] = rows[k][0] + (xs - xa);
				ofs.row[k][1] = rows[k][1] + (xs - xa);
			} else {
				offset_row(cf, sf, y - 1 + k, xs - 1, n + 2, ob[k][0], ob[k][1]);
				ofs.row[k][0] = ob[k][0];
				ofs.row[k][1] = ob[k][1];
			}
		}
		if (!render_aa_plan(&cf->aap, n, &ofs, nsub))
			continue;
		memcpy(steep, nsub, (size_t)n);
		int left = render_aa_flat(&cf->aap, y, xs, n, &ofs, nsub);
		if (lift) { /* the lifts color_row_rgb_noaa just drew with, the highlight filtered */
			left += render_aa_highlight(&cf->hl, n, &ofs, steep, nsub, lift + xs);
			if (left)
				render_aa_shade(&cf->aap, y, xs, n, &ofs, nsub, lift + xs, o);
			continue;
		}
		/* Otherwise (no ring, so no lifts were kept) the lifts of each cluster of
		 * steep pixels (runs closer than AA_GAP pixels taken together; a pixel's
		 * geometry does not depend on where its run starts), so the geometry is
		 * redone for the steep pixels, not the whole chunk. */
		enum { AA_GAP = 16 };
		for (int a = 0; a < n;) {
			while (a < n && !steep[a])
				a++;
			if (a == n)
				break;
			int b = a + 1, gap = 0;
			for (int e = a + 1; e < n && gap < AA_GAP; e++) {
				if (steep[e]) {
					b = e + 1;
					gap = 0;
				} else {
					gap++;
				}
			}
			cf->geom(r, &cf->par, y, xs + a, b - a, t);
			const render_aa_offsets from = render_aa_offsets_from(&ofs, a);
			render_aa_highlight(&cf->hl, b - a, &from, steep + a, nsub + a, t.lift);
			render_aa_shade(&cf->aap, y, xs + a, b - a, &from, nsub + a, t.lift, o);
			a = b;
		}
	}
}

static void color_row_rgb_noaa(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o, int xa,
			   int xb, int32_t *lift);

/* Pixels [xa, xb) of row y of the picture into o (the row's 3 * w bytes), from the
 * surface `sf`; xa is a multiple of 16 and xb one or w. */
static void color_row_rgb(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o, int xa,
			  int xb, aa_ring *ring)
{
	/* the lifts kept for anti-aliasing */
	int32_t *lift = cf->aa && ring && ring->buf && ring->lift ? ring->lift : NULL;
	color_row_rgb_noaa(cf, sf, y, o, xa, xb, lift);
	if (cf->aa)
		aa_row(cf, sf, y, o, xa, xb, ring, lift);
}

/* color_row_rgb without anti-aliasing: one lookup a pixel. */
static void color_row_rgb_noaa(const color_frame *cf, const tp_surface *sf, int y, uint8_t *o, int xa,
			   int xb, int32_t *lift)
{
	const render_in *in = cf->in;
	const int hgt = cf->par.hgt;
	const color_par *par = &cf->par;
	const void *r[5];
	surface_rows(sf, y, r);
	if (cf->fused) { /* it prefetches as it goes */
		cf->fused(r, y, par, in->bgx, o, lift, xa, xb);
		return;
	}
	/* The background rows a few output rows ahead are fetched while this one is
	 * shaded: the taps are gathered, which the hardware prefetcher does not follow. */
	const uint8_t *pf = in->bgx + (size_t)(y + 4 < hgt ? y + 4 : hgt - 1) * par->bs;
	for (int k = 0; k < par->bs; k += 64)
		__builtin_prefetch(pf + k);
	/* Runs of CHUNK pixels: pass 0's and pass 1's results stay in L1 for pass 2. */
	int32_t buf[3 * CHUNK] __attribute__((aligned(64)));
	float fbuf[2 * CHUNK + 8] __attribute__((aligned(64)));
	row_taps t = {buf, buf + CHUNK, buf + 2 * CHUNK, fbuf, fbuf + CHUNK + 4};
	for (int xs = xa; xs < xb; xs += CHUNK) {
		int n = xb - xs < CHUNK ? xb - xs : CHUNK;
		cf->geom(r, par, y, xs, n, t);
		cf->shade(in->bgx, par->bs, t.off, t.wq, t.lift, n, o + 3 * xs);
		if (lift) /* kept for anti-aliasing, which would otherwise redo the geometry */
			memcpy(lift + xs, t.lift, (size_t)n * sizeof *lift);
	}
}

/* The pixels of rows ya .. yb that can differ from still water's, [*xa, *xb) (empty:
 * xa >= xb): those within `reach` columns of a nonzero sample of rows ya - reach ..
 * yb + reach (the smoothing's 2, and 1 more with anti-aliasing, which reads the
 * neighbours' offsets; rows beyond the frame are its edge rows, surface_rows), widened to
 * multiples of 16. Every other pixel sees a level surface, as in the flat picture. */
static void active_cols(const tp_surface *sf, int ya, int yb, int reach, int *xa, int *xb)
{
	int lo = sf->w, hi = 0;
	for (int y = ya - reach; y <= yb + reach; y++) {
		const int yy = y < 0 ? 0 : y >= sf->h ? sf->h - 1 : y;
		const tp_span sp = sf->spans[yy];
		if (sp.lo < sp.hi) {
			lo = sp.lo < lo ? sp.lo : lo;
			hi = sp.hi > hi ? sp.hi : hi;
		}
	}
	if (lo >= hi) {
		*xa = *xb = 0;
		return;
	}
	*xa = lo - reach < 0 ? 0 : (lo - reach) & ~15;
	hi = (hi + reach + 15) & ~15;
	*xb = hi < sf->w ? hi : sf->w;
}

/* Row y into o: the pixels that can differ from still water drawn, the others copied from
 * the flat picture (when the surface has spans and there is one). */
static void color_row_span(const color_frame *cf, int y, uint8_t *o, aa_ring *ring)
{
	const render_in *in = cf->in;
	const int w = cf->par.w;
	int xa = 0, xb = w;
	if (in->flat && in->flat->fmt == TP_RGB8 && in->surf->spans) {
		active_cols(in->surf, y, y, cf->reach, &xa, &xb);
		const uint8_t *f = tp_image_row(in->flat, y);
		if (xa >= xb) {
			memcpy(o, f, 3 * (size_t)w);
			return;
		}
		memcpy(o, f, 3 * (size_t)xa);
		memcpy(o + 3 * xb, f + 3 * xb, 3 * (size_t)(w - xb));
	}
	color_row_rgb(cf, in->surf, y, o, xa, xb, ring);
}

void render_color(const render_in *in, tp_image *out)
{
	color_frame cf;
	color_setup(in, &cf);
	if (in->side) {
		/* One thread takes the side job, the others start on the rows, and it joins
		 * them when done: rows in chunks handed out as threads come free (each row's
		 * bytes do not depend on who draws it). Chunks of 48 rows: at 1080p 1.6% faster
		 * than 16 (the kernel's prefetch runs on longer), and than 32 or 96; contiguous
		 * bands with the job's thread given fewer rows were no faster. */
#pragma omp parallel
		{
			aa_ring ring = {0};
			if (cf.aa)
				aa_ring_init(&ring, in->w);
#pragma omp single nowait
			in->side(in->side_arg);
#pragma omp for schedule(dynamic, 48)
			for (int y = 0; y < in->h; y++)
				color_row_span(&cf, y, tp_image_row(out, y), &ring);
			free(ring.buf);
			free(ring.lift);
		}
		return;
	}
#pragma omp parallel
	{
		aa_ring ring = {0};
		if (cf.aa)
			aa_ring_init(&ring, in->w);
#pragma omp for schedule(static)
		for (int y = 0; y < in->h; y++)
			color_row_span(&cf, y, tp_image_row(out, y), &ring);
		free(ring.buf);
		free(ring.lift);
	}
}

int render_color_flat(const render_in *in, tp_image *out)
{
	/* every row of the level surface is the same row of zeros (stride 0), with room
	 * to spare past its end */
	void *zero = calloc((size_t)in->w + 64, 4);
	if (!zero)
		return -1;
	tp_surface level = *in->surf;
	level.data = zero;
	level.stride = 0;
	level.spans = NULL;
	color_frame cf;
	color_setup(in, &cf);
#pragma omp parallel for schedule(static)
	for (int y = 0; y < in->h; y++)
		color_row_rgb(&cf, &level, y, tp_image_row(out, y), 0, in->w, NULL);
	free(zero);
	return 0;
}

/* Columns [a, b) of row pair j of the flat 4:2:0 picture into y0, y1, u, v (a, b even). */
static void copy_flat(const tp_image *flat, int j, int a, int b, uint8_t *y0, uint8_t *y1,
		      uint8_t *u, uint8_t *v)
{
	if (a >= b)
		return;
	ptrdiff_t ls[3];
	const uint8_t *pl[3];
	for (int k = 0; k < 3; k++)
		pl[k] = tp_image_plane(flat, k, &ls[k]);
	memcpy(y0 + a, pl[0] + (ptrdiff_t)2 * j * ls[0] + a, (size_t)(b - a));
	memcpy(y1 + a, pl[0] + (ptrdiff_t)(2 * j + 1) * ls[0] + a, (size_t)(b - a));
	memcpy(u + a / 2, pl[1] + (ptrdiff_t)j * ls[1] + a / 2, (size_t)(b - a) / 2);
	memcpy(v + a / 2, pl[2] + (ptrdiff_t)j * ls[2] + a / 2, (size_t)(b - a) / 2);
}

void render_color_yuv(const render_in *in, uint8_t *rgb_rows, tp_image *out)
{
	color_frame cf;
	color_setup(in, &cf);
	const tp_image *flat =
		in->flat && in->flat->fmt == TP_YUV420 && in->surf->spans ? in->flat : NULL;
	const int w = in->w;
	ptrdiff_t ls[3];
	uint8_t *pl[3];
	for (int k = 0; k < 3; k++)
		pl[k] = tp_image_plane(out, k, &ls[k]);
	const size_t row = ((size_t)w * 3 + 63) & ~(size_t)63;
#pragma omp parallel
	{
		/* two RGB rows per thread, in cache, converted as soon as they are drawn */
		uint8_t *r0 = rgb_rows + (size_t)omp_get_thread_num() * 2 * row, *r1 = r0 + row;
		aa_ring ring = {0};
		if (cf.aa)
			aa_ring_init(&ring, w);
#pragma omp for schedule(static)
		for (int j = 0; j < in->h / 2; j++) {
			uint8_t *y0 = pl[0] + (ptrdiff_t)2 * j * ls[0], *y1 = y0 + ls[0];
			uint8_t *u = pl[1] + (ptrdiff_t)j * ls[1], *v = pl[2] + (ptrdiff_t)j * ls[2];
			/* the columns either row can draw differently from still water; the
			 * others (whole 2x2 blocks, xa and xb being even) from the flat picture */
			int xa = 0, xb = w;
			if (flat) {
				active_cols(in->surf, 2 * j, 2 * j + 1, cf.reach, &xa, &xb);
				if (xa >= xb)
					xa = xb = w;
				copy_flat(flat, j, 0, xa, y0, y1, u, v);
				copy_flat(flat, j, xb, w, y0, y1, u, v);
			}
			if (xa >= xb)
				continue;
			color_row_rgb(&cf, in->surf, 2 * j, r0, xa, xb, &ring);
			color_row_rgb(&cf, in->surf, 2 * j + 1, r1, xa, xb, &ring);
			in->yuv_rows(r0 + 3 * xa, r1 + 3 * xa, xb - xa, y0 + xa, y1 + xa,
					      u + xa / 2, v + xa / 2);
		}
		free(ring.buf);
		free(ring.lift);
	}
}

void render_slopes(const tp_surface *sf, float *dx, float *dy)
{
	const int w = sf->w, hgt = sf->h, wrap = sf->wrap, is_int = sf->type == TP_SAMPLE_I32;
	const float u32 = sf->scale / 32.0f;
	float v[CHUNK + 4], d2[CHUNK + 4];
	for (int y = 0; y < hgt; y++) {
		const void *r[5];
		surface_rows(sf, y, r);
		for (int xs = 0; xs < w; xs += CHUNK) {
			const int n = w - xs < CHUNK ? w - xs : CHUNK;
			if (is_int)
				column_sums(r, w, xs, n, 1, wrap, v, d2);
			else
				column_sums(r, w, xs, n, 0, wrap, v, d2);
			for (int i = 0; i < n; i++) {
				/* row_geometry's slopes, scaled to height units per pixel */
				dx[(size_t)y * w + xs + i] =
					((v[i + 4] - v[i]) + 2.0f * (v[i + 3] - v[i + 1])) * u32;
				dy[(size_t)y * w + xs + i] =
					((d2[i + 1] + d2[i + 3]) + 2.0f * d2[i + 2]) * u32;
			}
		}
	}
}
