/*
 * maps.c - texture maps for artists: height (16-bit grey), tangent-space normals and
 * caustics. Every map samples periodically when the surface wraps, so a wrapped
 * simulation gives maps that tile without a seam.
 *
 * Heights h are in height units, positions in pixels; where a map needs the relief in
 * pixels (normals, caustics) one height unit counts as one pixel, and a strength or depth
 * setting scales it (scene "maps", README "Textures for artists").
 *
 * Every function here is per pixel, or (caustics) accumulates integers, so the bytes do
 * not depend on how rows are split among threads.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "render/render_impl.h"
#include "util/mathf.h"

#define HEIGHT_FLOAT_LEVELS 1024.0 /* default 16-bit levels per height unit, every solver */
#define NORMAL_STRENGTH     4.0    /* default slope multiplier of the normal map */
#define CAUSTICS_DEPTH      160.0  /* default water depth, pixels */
#define CAUSTICS_INTENSITY  0.25   /* default level of unfocused light */
#define WATER_IOR           1.33

/* Photons per pixel side. 3x3 photons per pixel, each spread bilinearly, keep gaps out
 * of the picture until light is spread over 3x its area, far dimmer than the lines. */
#ifndef CAUSTIC_SS
#define CAUSTIC_SS 3
#endif
/* Each photon carries 2^16 energy units, split by Q8 x Q8 bilinear weights that sum to
 * exactly 2^16, so the total is conserved to the unit. Unfocused light is `UNIT` per pixel. */
#define PHOTON_ONE   65536u
#define CAUSTIC_UNIT ((uint64_t)CAUSTIC_SS * CAUSTIC_SS * PHOTON_ONE)

static inline int wrapi(int v, int n)
{
	v %= n;
	return v < 0 ? v + n : v;
}

/* Neighbour index: periodic with wrap, held at the edge otherwise. */
static inline int nb(int i, int d, int n, int wrap)
{
	int j = i + d;
	if (j >= 0 && j < n)
		return j;
	return wrap ? wrapi(j, n) : (j < 0 ? 0 : n - 1);
}

/* ---- height ---- */

/* 16-bit grey, v = round(h * scale) + 32768, clamped to 0..65535; every solver defaults
 * to HEIGHT_FLOAT_LEVELS levels per height unit, whatever the render size (the integer
 * solvers' stored units are finer at larger sizes, so writing them raw made a map clip
 * at 1080p that did not at the scene's size). Returns the number of pixels clamped. */
long render_height_map(const render_in *in, tp_image *out)
{
	const tp_surface *s = in->surf;
	const scene_maps *m = &in->sc->maps;
	const int w = in->w, hgt = in->h;
	const double chosen = in->height_scale > 0 ? in->height_scale : m->height_scale;
	const double scale = chosen > 0 ? chosen : HEIGHT_FLOAT_LEVELS;
	/* float: metres (height units without a length scale), no offset */
	const float hm = s->metres_hu > 0 ? (float)s->metres_hu : 1.0f;
	long clipped = 0;

#pragma omp parallel for schedule(static) reduction(+ : clipped)
	for (int y = 0; y < hgt; y++) {
		uint16_t *o = (uint16_t *)tp_image_row(out, y);
		const float *row = in->height + (size_t)y * w;
		if (out->fmt == TP_GRAYF32) {
			float *f = (float *)(void *)o;
			for (int x = 0; x < w; x++)
				f[x] = row[x] * hm;
			continue;
		}
		for (int x = 0; x < w; x++) {
			double v = floor((double)row[x] * scale + 0.5) + 32768.0;
			clipped += !(v >= 0 && v <= 65535); /* NaN counts too */
			o[x] = (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
		}
	}
	return clipped;
}

/* ---- normals ---- */

/* n = normalize(-k dh/dx, +-k dh/dy, 1) with central differences (periodic with wrap),
 * k = strength * px (height units taken as scene units: the same normals at every render
 * size). Image rows grow downward while OpenGL's
 * tangent +Y points up the texture, so OpenGL gets +k dh/dy and DirectX -k dh/dy.
 * Stored as n * 0.5 + 0.5 in 8 or 16 bits. */
void render_normal_map(const render_in *in, tp_image *out)
{
	const scene_maps *m = &in->sc->maps;
	const int w = in->w, hgt = in->h, wrap = in->wrap;
	const float *H = in->height;
	const float k =
		(float)((m->normal_strength > 0 ? m->normal_strength : NORMAL_STRENGTH) * in->px);
	const float ky = m->normal_directx ? -k : k;
	const int wide = out->fmt == TP_RGB16, flt = out->fmt == TP_RGBF32;
	const float maxv = wide ? 65535.0f : 255.0f;

#pragma omp parallel for schedule(static)
	for (int y = 0; y < hgt; y++) {
		const float *row = H + (size_t)y * w;
		const float *up = H + (size_t)nb(y, -1, hgt, wrap) * w;
		const float *dn = H + (size_t)nb(y, 1, hgt, wrap) * w;
		uint8_t *o8 = tp_image_row(out, y);
		uint16_t *o16 = (uint16_t *)o8;
		float *of = (float *)(void *)o8;
		for (int x = 0; x < w; x++) {
			float dx = 0.5f * (row[nb(x, 1, w, wrap)] - row[nb(x, -1, w, wrap)]);
			float dy = 0.5f * (dn[x] - up[x]);
			float n[3] = {-k * dx, ky * dy, 1.0f};
			float inv = 1.0f / sqrtf(n[0] * n[0] + n[1] * n[1] + 1.0f);
			if (flt) { /* the unit vector itself */
				for (int c = 0; c < 3; c++)
					of[3 * x + c] = n[c] * inv;
				continue;
			}
			for (int c = 0; c < 3; c++) {
				float v = tp_clampf((n[c] * inv * 0.5f + 0.5f) * maxv + 0.5f, 0, maxv);
				if (wide)
					o16[3 * x + c] = (uint16_t)v;
				else
					o8[3 * x + c] = (uint8_t)v;
			}
		}
	}
}

/* ---- caustics ---- */

/*
 * Light falls straight down through the surface onto a flat floor `depth` scene units below.
 * Snell's law for small slopes bends a ray entering water by
 *     d = (1 - 1/1.33) * depth * grad h      (pixels; grad h in height units per pixel)
 * toward the downhill side of a crest, so crests focus light and troughs spread it.
 * Each pixel sends CAUSTIC_SS^2 photons from evenly spaced points (grad h by central
 * differences, interpolated bilinearly, periodic with wrap); each lands at its point + d
 * and is splatted bilinearly onto the floor. Focusing crowds photons into bright lines;
 * the floor receives exactly the light that fell (integer sums). With wrap the floor is
 * periodic; otherwise the pool walls are mirrors, so no light is lost either.
 *
 * Determinism without atomics: the floor is cut into one band of rows per thread; a
 * band re-traces every photon that can reach it (source rows within the frame's largest
 * displacement plus the splat's reach) and keeps what lands in its rows. Integer sums do
 * not depend on order, so the bytes do not depend on the banding.
 *
 * Scratch: per band two rows of w + 2 floats (the displacement of one row of photons),
 * then w*h uint64 accumulators in the second half.
 */

typedef struct caustic_frame {
	int w, h, wrap;
	const float *H;
	float k;  /* (1 - 1/ior) * depth: pixels of displacement per unit slope */
	int fast; /* every displacement is under min(w, h) - 1 */
	uint64_t *acc;
} caustic_frame;

/* Reflects p into [0, n] (mirror walls). */
static inline float mirror(float p, float n)
{
	float period = 2.0f * n;
	if (p < 0 || p > n) {
		p = p - period * floorf(p / period);
		if (p > n)
			p = period - p;
	}
	return p;
}

/* k * dh/dx at column x of row r (central difference; periodic or held edge). */
static inline float slope_x(const float *r, int x, int w, int wrap)
{
	return 0.5f * (r[nb(x, 1, w, wrap)] - r[nb(x, -1, w, wrap)]);
}

/* The displacement (dx, dy) of the photons of sub-row j of source row y, at pixel-centre
 * columns: d[x + 1] for column x, with one ghost column on each side. */
static void subrow_disp(const caustic_frame *cf, int y, int j, float *dx, float *dy)
{
	const int w = cf->w, h = cf->h, wrap = cf->wrap;
	/* Sub-row j sits (j + 0.5)/SS - 0.5 pixels below the centre of row y; interpolate
	 * between the two pixel-centre rows around it. */
	float ty = ((float)j + 0.5f) / CAUSTIC_SS - 0.5f;
	int ya = ty < 0 ? nb(y, -1, h, wrap) : y, yb = ty < 0 ? y : nb(y, 1, h, wrap);
	float fy = ty < 0 ? ty + 1.0f : ty;
	const float *ra = cf->H + (size_t)ya * w, *rb = cf->H + (size_t)yb * w;
	const float *ua = cf->H + (size_t)nb(ya, -1, h, wrap) * w,
		    *da = cf->H + (size_t)nb(ya, 1, h, wrap) * w;
	const float *ub = cf->H + (size_t)nb(yb, -1, h, wrap) * w,
		    *db = cf->H + (size_t)nb(yb, 1, h, wrap) * w;
	const float k = cf->k;
	for (int x = 0; x < w; x++) {
		float gxa, gxb;
		if (x > 0 && x < w - 1) {
			gxa = 0.5f * (ra[x + 1] - ra[x - 1]);
			gxb = 0.5f * (rb[x + 1] - rb[x - 1]);
		} else {
			gxa = slope_x(ra, x, w, wrap);
			gxb = slope_x(rb, x, w, wrap);
		}
		float gya = 0.5f * (da[x] - ua[x]), gyb = 0.5f * (db[x] - ub[x]);
		dx[x + 1] = k * (gxa + (gxb - gxa) * fy);
		dy[x + 1] = k * (gya + (gyb - gya) * fy);
	}
	dx[0] = wrap ? dx[w] : dx[1];
	dy[0] = wrap ? dy[w] : dy[1];
	dx[w + 1] = wrap ? dx[1] : dx[w];
	dy[w + 1] = wrap ? dy[1] : dy[w];
}

/* Photons are landed in chunks of columns on the stack, then splatted. */
#define PHOTON_CHUNK 64

/* Where a chunk of photons lands: the splat's corner pixels and Q8 fractions. */
typedef struct photon_row {
	int32_t x0[PHOTON_CHUNK], x1[PHOTON_CHUNK], y0[PHOTON_CHUNK], y1[PHOTON_CHUNK];
	uint32_t ax[PHOTON_CHUNK], ay[PHOTON_CHUNK];
} photon_row;

/* Splat corners of landed photons (qx, qy already inside [0, w] x [0, h]): pixel-centre
 * corners and Q8 fractions, so that the four weights sum to 2^16 exactly. q - 0.5 >= -0.5,
 * so truncating it + 1 floors it. Written as straight-line selects so that it vectorises. */
static void corners(const caustic_frame *cf, const float *qx, const float *qy, int n,
		    photon_row *pr)
{
	const int w = cf->w, h = cf->h;
	if (cf->wrap) {
#pragma omp simd
		for (int x = 0; x < n; x++) {
			float sx = qx[x] - 0.5f, sy = qy[x] - 0.5f;
			int x0 = (int)(sx + 1.0f) - 1, y0 = (int)(sy + 1.0f) - 1;
			pr->ax[x] = (uint32_t)(int)((sx - (float)x0) * 256.0f + 0.5f);
			pr->ay[x] = (uint32_t)(int)((sy - (float)y0) * 256.0f + 0.5f);
			int x1 = x0 + 1, y1 = y0 + 1;
			pr->x0[x] = x0 < 0 ? w - 1 : x0;
			pr->y0[x] = y0 < 0 ? h - 1 : y0;
			pr->x1[x] = x1 >= w ? x1 - w : x1;
			pr->y1[x] = y1 >= h ? y1 - h : y1;
		}
	} else {
#pragma omp simd
		for (int x = 0; x < n; x++) {
			float sx = qx[x] - 0.5f, sy = qy[x] - 0.5f;
			int x0 = (int)(sx + 1.0f) - 1, y0 = (int)(sy + 1.0f) - 1;
			pr->ax[x] = (uint32_t)(int)((sx - (float)x0) * 256.0f + 0.5f);
			pr->ay[x] = (uint32_t)(int)((sy - (float)y0) * 256.0f + 0.5f);
			int x1 = x0 + 1, y1 = y0 + 1;
			pr->x0[x] = x0 < 0 ? 0 : x0;
			pr->y0[x] = y0 < 0 ? 0 : y0;
			pr->x1[x] = x1 >= w ? w - 1 : x1;
			pr->y1[x] = y1 >= h ? h - 1 : y1;
		}
	}
}

/* Lands the photons of columns [xa, xa + n) of sub-column `sub` in a sub-row at height
 * py whose displacements are dx, dy (d[x + 1] for column x; photon x blends d[x + off]
 * and d[x + off + 1] by frac) into pr[0..n). The fast path needs every |d| < min(w, h)
 * - 1: one wrap or one mirror reflection at most, branch-free. */
static void land(const caustic_frame *cf, const float *dx, const float *dy, int xa, int n,
		 float sub, int off, float frac, float py, photon_row *pr)
{
	const float fw = (float)cf->w, fh = (float)cf->h;
	const float *ex = dx + off + xa, *ey = dy + off + xa;
	float qx[PHOTON_CHUNK], qy[PHOTON_CHUNK];
#pragma omp simd
	for (int x = 0; x < n; x++) {
		qx[x] = (float)(xa + x) + sub + ex[x] + (ex[x + 1] - ex[x]) * frac;
		qy[x] = py + ey[x] + (ey[x + 1] - ey[x]) * frac;
	}
	if (cf->fast && cf->wrap) {
		/* q in (-size, 2 size): subtract size * floor(q / size), the floor by
		 * truncating q / size + 1 > 0. Arithmetic only, so it vectorises. */
		const float iw = 1.0f / fw, ih = 1.0f / fh;
#pragma omp simd
		for (int x = 0; x < n; x++) {
			int kx = (int)(qx[x] * iw + 1.0f) - 1, ky = (int)(qy[x] * ih + 1.0f) - 1;
			qx[x] -= fw * (float)kx;
			qy[x] -= fh * (float)ky;
		}
	} else if (cf->fast) {
		/* Mirror walls at 0 and size, for q in (-size, 2 size): size - |size - |q||. */
#pragma omp simd
		for (int x = 0; x < n; x++) {
			qx[x] = fw - fabsf(fw - fabsf(qx[x]));
			qy[x] = fh - fabsf(fh - fabsf(qy[x]));
		}
	} else {
		/* Steep (or blown-up) surfaces: exact wrap or repeated reflection. */
		for (int x = 0; x < n; x++) {
			float u = qx[x], v = qy[x];
			if (!(u == u) || !(v == v))
				u = v = 0; /* NaN heights: land somewhere defined */
			if (cf->wrap) {
				u -= fw * floorf(u / fw);
				v -= fh * floorf(v / fh);
				u = u < fw ? u : 0; /* rounding can give exactly fw */
				v = v < fh ? v : 0;
			} else {
				u = mirror(u, fw);
				v = mirror(v, fh);
			}
			qx[x] = u;
			qy[x] = v;
		}
	}
	corners(cf, qx, qy, n, pr);
}

/* Adds the landed photons' energy to the floor rows [r0, r1) (the band's own). */
static void splat(const caustic_frame *cf, const photon_row *pr, int n, int r0, int r1)
{
	const int w = cf->w;
	for (int x = 0; x < n; x++) {
		uint32_t ax = pr->ax[x], ay = pr->ay[x];
		int y0 = pr->y0[x], y1 = pr->y1[x];
		if (y0 >= r0 && y0 < r1) {
			uint64_t *a = cf->acc + (size_t)y0 * w;
			a[pr->x0[x]] += (256u - ax) * (256u - ay);
			a[pr->x1[x]] += ax * (256u - ay);
		}
		if (y1 >= r0 && y1 < r1) {
			uint64_t *a = cf->acc + (size_t)y1 * w;
			a[pr->x0[x]] += (256u - ax) * ay;
			a[pr->x1[x]] += ax * ay;
		}
	}
}

/* Adds to floor rows [r0, r1) the photons of source row y that land there. */
static void trace_row(const caustic_frame *cf, int y, int r0, int r1, float *dx, float *dy)
{
	photon_row pr;
	for (int j = 0; j < CAUSTIC_SS; j++) {
		subrow_disp(cf, y, j, dx, dy);
		const float py = (float)y + ((float)j + 0.5f) / CAUSTIC_SS;
		for (int i = 0; i < CAUSTIC_SS; i++) {
			/* Sub-column i's offset from the pixel centre picks the columns to blend.
			 */
			float sub = ((float)i + 0.5f) / CAUSTIC_SS, t = sub - 0.5f;
			int off = t < 0 ? 0 : 1;
			float frac = t < 0 ? t + 1.0f : t;
			for (int xa = 0; xa < cf->w; xa += PHOTON_CHUNK) {
				int n = cf->w - xa < PHOTON_CHUNK ? cf->w - xa : PHOTON_CHUNK;
				land(cf, dx, dy, xa, n, sub, off, frac, py, &pr);
				splat(cf, &pr, n, r0, r1);
			}
		}
	}
}

/* Floor rows [r0, r1): every source row within `reach` rows of them. */
static void trace_band(const caustic_frame *cf, int r0, int r1, int reach, float *rows)
{
	const int w = cf->w, h = cf->h;
	float *dx = rows, *dy = rows + w + 2;

	memset(cf->acc + (size_t)r0 * cf->w, 0, (size_t)(r1 - r0) * cf->w * sizeof *cf->acc);
	int lo = r0 - reach, hi = r1 + reach; /* source rows [lo, hi) */
	if (hi - lo >= h) {
		lo = 0;
		hi = h;
	}
	if (cf->wrap) {
		for (int y = lo; y < hi; y++)
			trace_row(cf, wrapi(y, h), r0, r1, dx, dy);
	} else {
		/* Mirror walls: a reflected photon lands no farther from its source row than
		 * the displacement, so the same window holds. */
		for (int y = lo < 0 ? 0 : lo; y < (hi > h ? h : hi); y++)
			trace_row(cf, y, r0, r1, dx, dy);
	}
}

void render_caustics(const render_in *in, tp_image *out)
{
	const scene_maps *m = &in->sc->maps;
	const int w = in->w, hgt = in->h, wrap = in->wrap;
	const float *H = in->height;
	/* The second half of scratch (2 floats per pixel) holds one uint64 per pixel; it
	 * is only ever accessed as uint64 and is 8-byte aligned. */
	uint64_t *acc = (uint64_t *)(void *)(in->scratch + (size_t)2 * w * hgt);
	const double depth = m->caustics_depth > 0 ? m->caustics_depth : CAUSTICS_DEPTH;
	/* depth in scene units and slopes per pixel: px^2 turns the displacement into pixels */
	const float k = (float)((1.0 - 1.0 / WATER_IOR) * depth * in->px * in->px);
	float maxdy = 0, maxd = 0;

	/* The largest displacements (rows limit the bands' reach; both pick the wrap path).
	 * Photons interpolate between pixel-centre slopes, so these bound them too. */
#pragma omp parallel for schedule(static) reduction(max : maxdy, maxd)
	for (int y = 0; y < hgt; y++) {
		const float *row = H + (size_t)y * w;
		const float *up = H + (size_t)nb(y, -1, hgt, wrap) * w;
		const float *dn = H + (size_t)nb(y, 1, hgt, wrap) * w;
		for (int x = 0; x < w; x++) {
			float ay = fabsf(k * 0.5f * (dn[x] - up[x]));
			float ax = fabsf(k * slope_x(row, x, w, wrap));
			maxdy = ay > maxdy ? ay : maxdy;
			maxd = ax > maxd ? ax : maxd;
			maxd = ay > maxd ? ay : maxd;
		}
	}
	int reach = maxdy < (float)hgt ? (int)ceilf(maxdy) + 2 : hgt; /* NaN: every row */
	caustic_frame cf = {.w = w,
			    .h = hgt,
			    .wrap = wrap,
			    .H = H,
			    .k = k,
			    .fast = maxd < (float)(w < hgt ? w : hgt) - 1.0f,
			    .acc = acc};
	/* Per band, two rows of w + 2 floats in the first half of scratch (2*w*h floats:
	 * room for at least one band, as w, h >= 2). */
	const int band_words = 2 * (w + 2);
	const int max_bands = (int)((int64_t)2 * w * hgt / band_words);

#pragma omp parallel
	{
		int nt = omp_get_num_threads();
		nt = nt < max_bands ? nt : max_bands;
		nt = nt < hgt ? nt : hgt;
		int t = omp_get_thread_num();
		if (t < nt) {
			int r0 = (int)((int64_t)hgt * t / nt),
			    r1 = (int)((int64_t)hgt * (t + 1) / nt);
			trace_band(&cf, r0, r1, reach, in->scratch + (size_t)t * band_words);
		}
	}

	/* Light level I = acc / UNIT (1 for flat water). Tone "soft" (default) shows
	 * 1 - exp(-intensity * I): linear in the dim light, rolling off in the focused lines
	 * instead of clipping (white only where I > ln(2 * 255) / intensity, 25 times flat
	 * water at the default intensity); "linear" shows intensity * I, clipped at white. */
	const double gain =
		(m->caustics_intensity > 0 ? m->caustics_intensity : CAUSTICS_INTENSITY) /
		(double)CAUSTIC_UNIT;
	const int wide = out->fmt == TP_GRAY16, soft = !m->caustics_linear;
	const double maxv = wide ? 65535.0 : 255.0;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < hgt; y++) {
		const uint64_t *a = acc + (size_t)y * w;
		uint8_t *o8 = tp_image_row(out, y);
		uint16_t *o16 = (uint16_t *)o8;
		if (out->fmt == TP_GRAYF32) { /* the light level I itself, untoned */
			float *of = (float *)(void *)o8;
			for (int x = 0; x < w; x++)
				of[x] = (float)((double)a[x] / (double)CAUSTIC_UNIT);
			continue;
		}
		for (int x = 0; x < w; x++) {
			double e = (double)a[x] * gain;
			double v = (soft ? -expm1(-e) : e) * maxv + 0.5;
			v = v > maxv ? maxv : v;
			if (wide)
				o16[x] = (uint16_t)v;
			else
				o8[x] = (uint8_t)v;
		}
	}
}
