/* flip.c - LDR-FLIP, the perceptual difference of two sRGB frames (Andersson, Nilsson,
 * Akenine-Moller, Oskarsson, Astrom, Fairchild, "FLIP: A Difference Evaluator for
 * Alternating Images", HPG 2020), in the separable form of NVIDIA's reference code
 * (misc/separatedConvolutions.pdf of github.com/NVlabs/flip), whose means it matches to
 * about 1e-6 (tests/test_flip.c holds the values and the command that made them).
 *
 * Per pixel, with A the reference and B the test, both 8-bit sRGB:
 *
 *  1. Opponent space. sRGB -> linear RGB (IEC 61966-2-1) -> XYZ (D65) -> YCxCz:
 *       Y = 116 Y/Yn - 16,  Cx = 500 (X/Xn - Y/Yn),  Cz = 200 (Y/Yn - Z/Zn).
 *  2. Colour pipeline. Each channel is filtered with the contrast sensitivity of the eye
 *     at the viewing distance: a Gaussian in visual angle, g(x) = a sqrt(pi/b)
 *     exp(-pi^2 x^2 / b), x in degrees = pixels / ppd, with (a, b) = (1, 0.0047) for Y,
 *     (1, 0.0053) for Cx and the sum of (34.1, 0.04) and (13.5, 0.025) for Cz. Each 2D
 *     kernel is a product of 1D kernels (the Cz sum is two products, each with the square
 *     root of its 1D Gaussian), normalised, radius ceil(3 sqrt(b_max / (2 pi^2)) ppd).
 *     The filtered YCxCz goes back to linear RGB, is clamped to [0, 1], then to CIE
 *     L*a*b*, and a*, b* get the Hunt adjustment a' = 0.01 L* a*, b' = 0.01 L* b*.
 *       dE = HyAB = |L*_A - L*_B| + sqrt((a'_A - a'_B)^2 + (b'_A - b'_B)^2)
 *       dC = dE^qc, qc = 0.7, remapped to [0, 1]: with cmax = HyAB(green, blue)^qc and
 *            pc cmax (pc = 0.4) mapped to pt = 0.95: dC pt / (pc cmax) below it, else
 *            pt + (dC - pc cmax) / (cmax - pc cmax) (1 - pt).
 *  3. Feature pipeline, on the luminance Yn = (Y + 16) / 116 in [0, 1]: the first and
 *     second derivatives of a Gaussian with sigma = 0.5 w ppd pixels (w = 0.082 degrees),
 *     radius ceil(3 sigma), each normalised so its positive weights sum to 1 and its
 *     negative ones to -1; edges e = |grad|, points p = |(d2/dx2, d2/dy2)|.
 *       dF = (max(|e_A - e_B|, |p_A - p_B|) / sqrt 2)^qf,  qf = 0.5
 *  4. FLIP = dC^(1 - dF); the frame's value is the mean over the pixels compared.
 *
 * Borders repeat the edge pixel (as the reference). The pow, cube root and logarithm
 * here are our own polynomial versions (relative error under 1e-6), written so the row
 * loops vectorise; every pixel is computed the same way on any thread and the mean is
 * summed over fixed 96-row bands in order, so results do not depend on the thread count.
 * Pixels farther than the larger filter radius from the changed rectangle see identical
 * neighbourhoods in A and B, so their error is exactly 0: only the changed rectangle
 * grown by that radius is computed.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"

#define BAND 96   /* output rows per work unit and per reduction chunk */
#define STRIP 384
/* Largest filter radius: the spatial one, ceil(3 sqrt(0.04 / (2 pi^2)) ppd) = 136 at
 * CMP_FLIP_PPD_MAX pixels per degree. */
#define CMP_FLIP_MAX_RADIUS 140 /* columns per vertical pass, so its 2r + 1 rows of 14 planes stay in cache */

/* The row loops also get an AVX2 version, chosen at run time; without FMA contraction
 * (-ffp-contract=off) both give the same bits. */
#define FLIP_CLONES __attribute__((target_clones("avx2", "default")))

/* Horizontal-pass planes per image: Y, Cx, Cz (two separable parts), and the feature
 * pass's first derivative, second derivative and Gaussian of Yn. */
enum { P_Y, P_CX, P_CZ1, P_CZ2, P_DX, P_DDX, P_G, NPLANES };

struct cmp_flip {
	int w, h, threads;
	double ppd;
	int rs, rf, r;        /* spatial and feature radii, r = max */
	float *ks[4];         /* spatial kernels: Y, Cx, Cz part 1, Cz part 2 (2 rs + 1) */
	float *kf[3];         /* feature kernels: Gaussian, 1st, 2nd derivative (2 rf + 1) */
	float cmax, pccmax;
	float lin[256];       /* sRGB byte -> linear */
	float *map;           /* w x h error map of the last frame */
	double *band_sum;     /* per band */
	float *work;          /* per thread, work_len floats */
	size_t work_len;
};

/* ---- colour helpers (float, as the reference) ---- */

/* Linear RGB -> XYZ (D65), the exact rational sRGB matrix. */
static const float M_XYZ[3][3] = {
	{ 10135552.0f / 24577794.0f, 8788810.0f / 24577794.0f, 4435075.0f / 24577794.0f },
	{ 2613072.0f / 12288897.0f, 8788810.0f / 12288897.0f, 887015.0f / 12288897.0f },
	{ 1425312.0f / 73733382.0f, 8788810.0f / 73733382.0f, 70074185.0f / 73733382.0f },
};
static const float M_RGB[3][3] = {
	{ 3.241003275f, -1.537398934f, -0.498615861f },
	{ -0.969224334f, 1.875930071f, 0.041554224f },
	{ 0.055639423f, -0.204011202f, 1.057148933f },
};
static const float WHITE[3] = { 0.950428545f, 1.000000000f, 1.088900371f };
static const float INV_WHITE[3] = { 1.052156925f, 1.000000000f, 0.918357670f };

static inline float as_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint32_t as_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* Cube root of t > 0: exponent/3 bit estimate, then Newton y <- (2y + t/y^2) / 3. */
static inline float cbrt_pos(float t)
{
	float y = as_float(as_bits(t) / 3u + 709921077u);
	for (int i = 0; i < 3; i++)
		y = (2.0f * y + t / (y * y)) * (1.0f / 3.0f);
	return y;
}

/* log2 x for normal x > 0: x = 2^e m, m in [sqrt(1/2), sqrt 2), ln m = 2 atanh(s) with
 * s = (m - 1) / (m + 1), |s| < 0.172, as an odd series to s^9. */
static inline float log2_pos(float x)
{
	uint32_t u = as_bits(x);
	int e = (int)((u >> 23) & 255u) - 127;
	float m = as_float((u & 0x7fffffu) | 0x3f800000u);
	int big = m > 1.41421356f;
	m = big ? 0.5f * m : m;
	e += big;
	float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
	float ln = s * (2.0f + s2 * (2.0f / 3.0f + s2 * (2.0f / 5.0f + s2 * (2.0f / 7.0f + s2 * (2.0f / 9.0f)))));
	return (float)e + ln * 1.44269504f;
}

/* 2^x for x in [-126, 126]: 2^n e^(f ln 2), n = round(x), |f| <= 1/2, Taylor to f^7. */
static inline float exp2_f(float x)
{
	x = x < -126.0f ? -126.0f : x > 126.0f ? 126.0f : x;
	int n = (int)(x + 127.5f) - 127; /* floor(x + 1/2); the sum is positive */
	float f = (x - (float)n) * 0.693147181f;
	float p = 1.0f + f * (1.0f + f * (0.5f + f * (1.0f / 6 + f * (1.0f / 24 + f * (1.0f / 120 +
			  f * (1.0f / 720 + f * (1.0f / 5040)))))));
	return p * as_float((uint32_t)(n + 127) << 23);
}

/* x^y for x >= 0, with 0^y = 0 (y > 0), 1 (y = 0) as powf. */
static inline float pow_pos(float x, float y)
{
	float r = exp2_f(y * log2_pos(x > 1e-30f ? x : 1e-30f));
	return x > 0.0f ? r : y > 0.0f ? 0.0f : y == 0.0f ? 1.0f : INFINITY;
}

/* CIE L*a*b* f(t): t^(1/3) above (6/29)^3, else t / (3 (6/29)^2) + 4/29. */
static inline float lab_f(float t)
{
	const float d = 6.0f / 29.0f;
	float c = cbrt_pos(t > 1e-30f ? t : 1e-30f);
	return t > d * d * d ? c : t * (1.0f / (3.0f * d * d)) + 4.0f / 29.0f;
}

/* Filtered YCxCz -> XYZ -> linear RGB clamped to [0, 1] -> XYZ / white, for n pixels
 * (planes Y, Cx, Cz in; X, Y, Z out; straight-line code so that the loop vectorises). */
FLIP_CLONES static void ycxcz_to_xyzn(const float *restrict Yp, const float *restrict Cxp,
			  const float *restrict Czp, float *restrict xo, float *restrict yo,
			  float *restrict zo, int n)
{
	for (int i = 0; i < n; i++) {
		float yy = (Yp[i] + 16.0f) / 116.0f;
		float X = (yy + Cxp[i] / 500.0f) * WHITE[0], Y = yy * WHITE[1];
		float Z = (yy - Czp[i] / 200.0f) * WHITE[2];
		float r = M_RGB[0][0] * X + M_RGB[0][1] * Y + M_RGB[0][2] * Z;
		float g = M_RGB[1][0] * X + M_RGB[1][1] * Y + M_RGB[1][2] * Z;
		float b = M_RGB[2][0] * X + M_RGB[2][1] * Y + M_RGB[2][2] * Z;
		r = r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
		g = g < 0.0f ? 0.0f : g > 1.0f ? 1.0f : g;
		b = b < 0.0f ? 0.0f : b > 1.0f ? 1.0f : b;
		xo[i] = (M_XYZ[0][0] * r + M_XYZ[0][1] * g + M_XYZ[0][2] * b) * INV_WHITE[0];
		yo[i] = (M_XYZ[1][0] * r + M_XYZ[1][1] * g + M_XYZ[1][2] * b) * INV_WHITE[1];
		zo[i] = (M_XYZ[2][0] * r + M_XYZ[2][1] * g + M_XYZ[2][2] * b) * INV_WHITE[2];
	}
}

/* v[i] = lab_f(v[i]) */
FLIP_CLONES static void lab_f_row(float *restrict v, int n)
{
	for (int i = 0; i < n; i++)
		v[i] = lab_f(v[i]);
}

/* ---- set-up ---- */

/* g(x2) = a sqrt(pi/b) exp(-pi^2 x2 / b): the CSF Gaussians of the paper, x in degrees. */
static float csf(float x2, float a, float b)
{
	const float pi = 3.14159265358979f;
	return a * sqrtf(pi / b) * expf(-pi * pi * x2 / b);
}

static void spatial_kernels(cmp_flip *f)
{
	const float pi = 3.14159265358979f;
	int n = 2 * f->rs + 1;
	float dx = 1.0f / (float)f->ppd, sum[4] = { 0, 0, 0, 0 };
	for (int i = 0; i < n; i++) {
		float x = (float)(i - f->rs) * dx, x2 = x * x;
		f->ks[0][i] = csf(x2, 1.0f, 0.0047f);
		f->ks[1][i] = csf(x2, 1.0f, 0.0053f);
		/* Cz is a sum of two 2D Gaussians; each separates into the product of two 1D
		 * factors sqrt(a sqrt(pi/b)) exp(-pi^2 x^2 / b). */
		f->ks[2][i] = sqrtf(34.1f * sqrtf(pi / 0.04f)) * expf(-pi * pi * x2 / 0.04f);
		f->ks[3][i] = sqrtf(13.5f * sqrtf(pi / 0.025f)) * expf(-pi * pi * x2 / 0.025f);
		for (int k = 0; k < 4; k++)
			sum[k] += f->ks[k][i];
	}
	float cz = 1.0f / sqrtf(sum[2] * sum[2] + sum[3] * sum[3]);
	for (int i = 0; i < n; i++) {
		f->ks[0][i] *= 1.0f / sum[0];
		f->ks[1][i] *= 1.0f / sum[1];
		f->ks[2][i] *= cz;
		f->ks[3][i] *= cz;
	}
}

static void feature_kernels(cmp_flip *f)
{
	float sd = 0.5f * 0.082f * (float)f->ppd;
	int n = 2 * f->rf + 1;
	float gsum = 0, dpos = 0, dneg = 0, ddpos = 0, ddneg = 0;
	for (int i = 0; i < n; i++) {
		float x = (float)(i - f->rf);
		float g = expf(-(x * x) / (2.0f * sd * sd));
		float dg = -x * g, ddg = (x * x / (sd * sd) - 1.0f) * g;
		f->kf[0][i] = g;
		f->kf[1][i] = dg;
		f->kf[2][i] = ddg;
		gsum += g;
		if (dg > 0)
			dpos += dg;
		else
			dneg -= dg;
		if (ddg > 0)
			ddpos += ddg;
		else
			ddneg -= ddg;
	}
	for (int i = 0; i < n; i++) {
		f->kf[0][i] /= gsum;
		f->kf[1][i] /= f->kf[1][i] > 0 ? dpos : dneg;
		f->kf[2][i] /= f->kf[2][i] > 0 ? ddpos : ddneg;
	}
}

/* HyAB distance between green and blue after the Hunt adjustment, to the power qc: the
 * largest colour difference of the remapping. */
static float max_distance(void)
{
	float lab[2][3];
	for (int k = 0; k < 2; k++) {
		float rgb[3] = { 0, k == 0, k == 1 }, xyz[3];
		for (int c = 0; c < 3; c++)
			xyz[c] = (M_XYZ[c][0] * rgb[0] + M_XYZ[c][1] * rgb[1] + M_XYZ[c][2] * rgb[2]) *
				 INV_WHITE[c];
		const float d = 6.0f / 29.0f;
		float fv[3];
		for (int c = 0; c < 3; c++)
			fv[c] = xyz[c] > d * d * d ? cbrtf(xyz[c]) : xyz[c] / (3 * d * d) + 4.0f / 29.0f;
		lab[k][0] = 116 * fv[1] - 16;
		lab[k][1] = 0.01f * lab[k][0] * 500 * (fv[0] - fv[1]);
		lab[k][2] = 0.01f * lab[k][0] * 200 * (fv[1] - fv[2]);
	}
	float da = lab[0][1] - lab[1][1], db = lab[0][2] - lab[1][2];
	return powf(fabsf(lab[0][0] - lab[1][0]) + sqrtf(da * da + db * db), 0.7f);
}

double cmp_flip_ppd(double distance, double width, double width_px)
{
	/* Pixels per degree at the centre: distance * (pixels / width) * (pi / 180), the
	 * small-angle form NVIDIA's tool uses. */
	return distance * (width_px / width) * (3.14159265358979 / 180.0);
}

int cmp_flip_create(int w, int h, double ppd, int threads, cmp_flip **out, tp_err *err)
{
	*out = NULL;
	if (w <= 0 || h <= 0 || threads < 1 || !(ppd > 0) || ppd > CMP_FLIP_PPD_MAX)
		return tp_errf(err, TP_EUSAGE, "FLIP: bad size %dx%d or pixels per degree %g", w, h, ppd);
	cmp_flip *f = calloc(1, sizeof *f);
	if (!f)
		return tp_errf(err, TP_EIO, "out of memory");
	f->w = w;
	f->h = h;
	f->threads = threads;
	f->ppd = ppd;
	const float pi2 = 3.14159265358979f * 3.14159265358979f;
	f->rs = (int)ceilf(3.0f * sqrtf(0.04f / (2.0f * pi2)) * (float)ppd);
	f->rf = (int)ceilf(3.0f * 0.5f * 0.082f * (float)ppd);
	f->r = f->rs > f->rf ? f->rs : f->rf;
	int r = f->r;
	int nb = (h + BAND - 1) / BAND;
	/* Per thread: NPLANES planes for each image over BAND + 2r rows, six input rows
	 * (YCxCz of A and B) of w + 2r, and 22 accumulator and scratch rows of w. */
	f->work_len = (size_t)2 * NPLANES * (size_t)(BAND + 2 * r) * (size_t)w +
		      6 * (size_t)(w + 2 * r) + 22 * (size_t)w;
	if ((double)f->work_len * threads * sizeof(float) > 4e9) {
		free(f);
		return tp_errf(err, TP_EINPUT, "FLIP: %dx%d at %g pixels per degree needs too much memory",
			       w, h, ppd);
	}
	for (int k = 0; k < 4; k++)
		f->ks[k] = malloc(sizeof(float) * (size_t)(2 * f->rs + 1));
	for (int k = 0; k < 3; k++)
		f->kf[k] = malloc(sizeof(float) * (size_t)(2 * f->rf + 1));
	f->map = malloc(sizeof(float) * (size_t)w * (size_t)h);
	f->band_sum = calloc((size_t)nb, sizeof *f->band_sum);
	f->work = malloc(sizeof(float) * f->work_len * (size_t)threads);
	int ok = f->map && f->band_sum && f->work;
	for (int k = 0; k < 4; k++)
		ok = ok && f->ks[k];
	for (int k = 0; k < 3; k++)
		ok = ok && f->kf[k];
	if (!ok) {
		cmp_flip_destroy(f);
		return tp_errf(err, TP_EIO, "out of memory for %dx%d FLIP buffers", w, h);
	}
	spatial_kernels(f);
	feature_kernels(f);
	f->cmax = max_distance();
	f->pccmax = 0.4f * f->cmax;
	for (int i = 0; i < 256; i++) {
		float c = (float)i / 255.0f;
		f->lin[i] = c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f);
	}
	*out = f;
	return 0;
}

void cmp_flip_destroy(cmp_flip *f)
{
	if (!f)
		return;
	for (int k = 0; k < 4; k++)
		free(f->ks[k]);
	for (int k = 0; k < 3; k++)
		free(f->kf[k]);
	free(f->map);
	free(f->band_sum);
	free(f->work);
	free(f);
}

const float *cmp_flip_map(const cmp_flip *f)
{
	return f->map;
}

/* ---- the passes ---- */

/* One input row of an RGB8 image as YCxCz over x = x0 - r .. x0 + n + r - 1, columns
 * clamped to the image (edge repeat). */
static void row_ycxcz(const cmp_flip *f, const tp_image *img, int y, int x0, int n, float *oy,
		      float *ocx, float *ocz)
{
	const uint8_t *row = tp_image_row(img, y);
	int r = f->r;
	for (int j = 0; j < n + 2 * r; j++) {
		int x = x0 - r + j;
		x = x < 0 ? 0 : x >= f->w ? f->w - 1 : x;
		const uint8_t *p = row + 3 * x;
		float R = f->lin[p[0]], G = f->lin[p[1]], B = f->lin[p[2]];
		float X = (M_XYZ[0][0] * R + M_XYZ[0][1] * G + M_XYZ[0][2] * B) * INV_WHITE[0];
		float Y = (M_XYZ[1][0] * R + M_XYZ[1][1] * G + M_XYZ[1][2] * B) * INV_WHITE[1];
		float Z = (M_XYZ[2][0] * R + M_XYZ[2][1] * G + M_XYZ[2][2] * B) * INV_WHITE[2];
		oy[j] = 116.0f * Y - 16.0f;
		ocx[j] = 500.0f * (X - Y);
		ocz[j] = 200.0f * (Y - Z);
	}
}

/* Eight floats, one per column: the filters keep each column's sum in a register over
 * all taps (GCC/Clang vector extension; AVX in the avx2 clone, two SSE halves else). */
typedef float v8f __attribute__((vector_size(32)));

/* An unaligned load, as an expression (a function returning v8f would change the ABI
 * between the clones). */
#define load8(p) (__extension__({ v8f v_; memcpy(&v_, (p), sizeof v_); v_; }))

/* out[i] = sum_t k[t] in[i + t], t = 0 .. 2 rad, added in order of t: one horizontal
 * pass. */
FLIP_CLONES static void hconv(float *restrict out, const float *restrict in, const float *restrict k,
			      int rad, int n)
{
	int taps = 2 * rad + 1, i = 0;
	/* Four blocks of eight columns at a time: four independent sums hide the adds'
	 * latency (each column still adds its taps in order). */
	for (; i + 32 <= n; i += 32) {
		v8f o0 = k[0] * load8(in + i), o1 = k[0] * load8(in + i + 8);
		v8f o2 = k[0] * load8(in + i + 16), o3 = k[0] * load8(in + i + 24);
		for (int t = 1; t < taps; t++) {
			const float *p = in + i + t;
			o0 += k[t] * load8(p);
			o1 += k[t] * load8(p + 8);
			o2 += k[t] * load8(p + 16);
			o3 += k[t] * load8(p + 24);
		}
		memcpy(out + i, &o0, sizeof o0);
		memcpy(out + i + 8, &o1, sizeof o1);
		memcpy(out + i + 16, &o2, sizeof o2);
		memcpy(out + i + 24, &o3, sizeof o3);
	}
	for (; i + 8 <= n; i += 8) {
		v8f o = k[0] * load8(in + i);
		for (int t = 1; t < taps; t++)
			o += k[t] * load8(in + i + t);
		memcpy(out + i, &o, sizeof o);
	}
	for (; i < n; i++) {
		float o = k[0] * in[i];
		for (int t = 1; t < taps; t++)
			o += k[t] * in[i + t];
		out[i] = o;
	}
}

/* acc[i] (+)= sum_t k[t] rows[t][i], t = 0 .. taps - 1 in order: one vertical pass;
 * with add = 0 the sum replaces acc, else it is added to it afterwards. */
FLIP_CLONES static void vconv(float *restrict acc, const float *const *rows, const float *k, int taps,
			      int n, int add)
{
	int i = 0;
	for (; i + 32 <= n; i += 32) {
		const float *r = rows[0] + i;
		v8f o0 = k[0] * load8(r), o1 = k[0] * load8(r + 8), o2 = k[0] * load8(r + 16),
		    o3 = k[0] * load8(r + 24);
		for (int t = 1; t < taps; t++) {
			r = rows[t] + i;
			o0 += k[t] * load8(r);
			o1 += k[t] * load8(r + 8);
			o2 += k[t] * load8(r + 16);
			o3 += k[t] * load8(r + 24);
		}
		if (add) {
			o0 = load8(acc + i) + o0;
			o1 = load8(acc + i + 8) + o1;
			o2 = load8(acc + i + 16) + o2;
			o3 = load8(acc + i + 24) + o3;
		}
		memcpy(acc + i, &o0, sizeof o0);
		memcpy(acc + i + 8, &o1, sizeof o1);
		memcpy(acc + i + 16, &o2, sizeof o2);
		memcpy(acc + i + 24, &o3, sizeof o3);
	}
	for (; i + 8 <= n; i += 8) {
		v8f o = k[0] * load8(rows[0] + i);
		for (int t = 1; t < taps; t++)
			o += k[t] * load8(rows[t] + i);
		if (add)
			o = load8(acc + i) + o;
		memcpy(acc + i, &o, sizeof o);
	}
	for (; i < n; i++) {
		float o = k[0] * rows[0][i];
		for (int t = 1; t < taps; t++)
			o += k[t] * rows[t][i];
		acc[i] = add ? acc[i] + o : o;
	}
}

/* acc = sum_t k[t] P(clamp(y - rad + t))[i]: a vertical pass with rows clamped to the
 * frame; `add` as vconv. */
static void vpass(const cmp_flip *f, float *acc, const float *plane, const float *k, int rad, int y,
		  int yb, int n, int add)
{
	const float *rows[2 * CMP_FLIP_MAX_RADIUS + 1];
	int taps = 2 * rad + 1;
	for (int t = 0; t < taps; t++) {
		int yy = y - rad + t;
		yy = yy < 0 ? 0 : yy >= f->h ? f->h - 1 : yy;
		rows[t] = plane + (size_t)(yy - yb) * (size_t)f->w;
	}
	vconv(acc, rows, k, taps, n, add);
}

typedef struct region {
	int x0, x1, y0, y1; /* computed pixels, half-open */
} region;

/* Horizontal passes of image img's row y into the band planes at row slot s. */
static void hrow(const cmp_flip *f, const tp_image *img, int y, const region *g, float *planes,
		 size_t plane_len, int s, float *in)
{
	int n = g->x1 - g->x0, r = f->r, len = n + 2 * r;
	float *iy = in, *icx = in + len, *icz = in + 2 * len;
	row_ycxcz(f, img, y, g->x0, n, iy, icx, icz);
	float *o = planes + (size_t)s * (size_t)f->w;
	int ds = r - f->rs, df = r - f->rf;
	hconv(o + P_Y * plane_len, iy + ds, f->ks[0], f->rs, n);
	hconv(o + P_CX * plane_len, icx + ds, f->ks[1], f->rs, n);
	hconv(o + P_CZ1 * plane_len, icz + ds, f->ks[2], f->rs, n);
	hconv(o + P_CZ2 * plane_len, icz + ds, f->ks[3], f->rs, n);
	/* The feature pipeline sees Yn = Y / 116 + 16 / 116 in [0, 1]. */
	for (int j = 0; j < len; j++)
		iy[j] = iy[j] * (1.0f / 116.0f) + 16.0f / 116.0f;
	hconv(o + P_G * plane_len, iy + df, f->kf[0], f->rf, n);
	hconv(o + P_DX * plane_len, iy + df, f->kf[1], f->rf, n);
	hconv(o + P_DDX * plane_len, iy + df, f->kf[2], f->rf, n);
}

/* Vertical passes for output row y of one image into acc[0..7]: Y, Cx, Cz, dx, ddx, dy,
 * ddy (7 rows of n). Band row slot of image row yy is yy - yb. */
static void vrow(const cmp_flip *f, const float *planes, size_t plane_len, int y, int yb, int n,
		 float *acc)
{
	/* planes points at the strip's first column; rows keep the full width as stride. */
	float *aY = acc, *aCx = acc + n, *aCz = acc + 2 * n, *aDx = acc + 3 * n, *aDdx = acc + 4 * n,
	      *aDy = acc + 5 * n, *aDdy = acc + 6 * n;
	vpass(f, aY, planes + P_Y * plane_len, f->ks[0], f->rs, y, yb, n, 0);
	vpass(f, aCx, planes + P_CX * plane_len, f->ks[1], f->rs, y, yb, n, 0);
	/* Cz: the two separable parts summed apart, then added, as the reference does. */
	vpass(f, aCz, planes + P_CZ1 * plane_len, f->ks[2], f->rs, y, yb, n, 0);
	vpass(f, aCz, planes + P_CZ2 * plane_len, f->ks[3], f->rs, y, yb, n, 1);
	vpass(f, aDx, planes + P_DX * plane_len, f->kf[0], f->rf, y, yb, n, 0);
	vpass(f, aDdx, planes + P_DDX * plane_len, f->kf[0], f->rf, y, yb, n, 0);
	vpass(f, aDy, planes + P_G * plane_len, f->kf[1], f->rf, y, yb, n, 0);
	vpass(f, aDdy, planes + P_G * plane_len, f->kf[2], f->rf, y, yb, n, 0);
}

/* Steps 2-4 of the header for one row of n pixels, from both images' filtered values
 * (ea, eb: Y, Cx, Cz, dx, ddx, dy, ddy rows); t is 6 rows of scratch. */
FLIP_CLONES static void combine(const cmp_flip *f, const float *ea, const float *eb, int n, float *restrict t,
		    float *restrict out)
{
	const float gpt = 0.95f, cmax = f->cmax, pc = f->pccmax;
	const float inv_sqrt2 = 0.70710678118654752f;
	float *xa = t, *ya = t + n, *za = t + 2 * n, *xb = t + 3 * n, *yb = t + 4 * n, *zb = t + 5 * n;
	ycxcz_to_xyzn(ea, ea + n, ea + 2 * n, xa, ya, za, n);
	ycxcz_to_xyzn(eb, eb + n, eb + 2 * n, xb, yb, zb, n);
	lab_f_row(t, 6 * n);
	for (int i = 0; i < n; i++) {
		/* L* = 116 f(Y) - 16; Hunt: a' = 0.01 L* 500 (f(X) - f(Y)), b' = 0.01 L* 200 (f(Y) - f(Z)) */
		float La = 116.0f * ya[i] - 16.0f, Lb = 116.0f * yb[i] - 16.0f;
		float Aa = 0.01f * La * (500.0f * (xa[i] - ya[i])), Ab = 0.01f * Lb * (500.0f * (xb[i] - yb[i]));
		float Ba = 0.01f * La * (200.0f * (ya[i] - za[i])), Bb = 0.01f * Lb * (200.0f * (yb[i] - zb[i]));
		float da = Aa - Ab, db = Ba - Bb;
		float dc = pow_pos(fabsf(La - Lb) + sqrtf(da * da + db * db), 0.7f);
		dc = dc < pc ? dc * (gpt / pc) : gpt + ((dc - pc) / (cmax - pc)) * (1.0f - gpt);
		float dxa = ea[3 * n + i], ddxa = ea[4 * n + i], dya = ea[5 * n + i], ddya = ea[6 * n + i];
		float dxb = eb[3 * n + i], ddxb = eb[4 * n + i], dyb = eb[5 * n + i], ddyb = eb[6 * n + i];
		float edge = fabsf(sqrtf(dxa * dxa + dya * dya) - sqrtf(dxb * dxb + dyb * dyb));
		float point = fabsf(sqrtf(ddxa * ddxa + ddya * ddya) - sqrtf(ddxb * ddxb + ddyb * ddyb));
		float df = sqrtf(inv_sqrt2 * (edge > point ? edge : point));
		out[i] = pow_pos(dc, 1.0f - df);
	}
}

static void do_band(cmp_flip *f, const tp_image *a, const tp_image *b, const region *g, int band,
		    float *work)
{
	int w = f->w, h = f->h, r = f->r, n = g->x1 - g->x0;
	int y0 = band * BAND, y1 = y0 + BAND < h ? y0 + BAND : h;
	for (int y = y0; y < y1; y++)
		memset(f->map + (size_t)y * (size_t)w, 0, sizeof(float) * (size_t)w);
	int oy0 = y0 > g->y0 ? y0 : g->y0, oy1 = y1 < g->y1 ? y1 : g->y1;
	if (oy0 >= oy1 || n <= 0)
		return;
	/* Rows whose horizontal passes the band's outputs read. */
	int yb = oy0 - r < 0 ? 0 : oy0 - r, ye = oy1 + r > h ? h : oy1 + r;
	size_t plane_len = (size_t)(BAND + 2 * r) * (size_t)w;
	float *pa = work, *pb = pa + NPLANES * plane_len;
	float *in = pb + NPLANES * plane_len;  /* 3 (n + 2r) floats: one image's input row */
	float *acc = in + 6 * (size_t)(w + 2 * r); /* 22 rows of w */
	for (int y = yb; y < ye; y++) {
		hrow(f, a, y, g, pa, plane_len, y - yb, in);
		hrow(f, b, y, g, pb, plane_len, y - yb, in);
	}
	for (int xs = 0; xs < n; xs += STRIP) {
		int m = n - xs < STRIP ? n - xs : STRIP;
		for (int y = oy0; y < oy1; y++) {
			vrow(f, pa + xs, plane_len, y, yb, m, acc);
			vrow(f, pb + xs, plane_len, y, yb, m, acc + 8 * (size_t)m);
			combine(f, acc, acc + 8 * (size_t)m, m, acc + 16 * (size_t)m,
				f->map + (size_t)y * (size_t)w + g->x0 + xs);
		}
	}
}

double cmp_flip_frame(cmp_flip *f, const tp_image *a, const tp_image *b, const cmp_rect *change,
		      const cmp_rect *ignore, int n_ignore, int64_t compared, int threads)
{
	int w = f->w, h = f->h, r = f->r;
	region g = { 0, 0, 0, 0 };
	if (change && change->w > 0 && change->h > 0) {
		g.x0 = change->x - r < 0 ? 0 : change->x - r;
		g.y0 = change->y - r < 0 ? 0 : change->y - r;
		g.x1 = change->x + change->w + r > w ? w : change->x + change->w + r;
		g.y1 = change->y + change->h + r > h ? h : change->y + change->h + r;
	} else if (!change) {
		g = (region){ 0, w, 0, h };
	}
	int nb = (h + BAND - 1) / BAND;
	if (threads > f->threads)
		threads = f->threads;
	/* Bands go to whichever thread is free: each band's result is the same on any. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
	for (int band = 0; band < nb; band++) {
		float *work = f->work + f->work_len * (size_t)omp_get_thread_num();
		do_band(f, a, b, &g, band, work);
	}
	/* Ignored rectangles count as no error (B holds A's pixels there; the filters may
	 * still spread a difference into them). */
	for (int i = 0; i < n_ignore; i++) {
		int x0 = ignore[i].x < 0 ? 0 : ignore[i].x > w ? w : ignore[i].x;
		int y0 = ignore[i].y < 0 ? 0 : ignore[i].y > h ? h : ignore[i].y;
		int64_t xe = (int64_t)ignore[i].x + ignore[i].w, ye = (int64_t)ignore[i].y + ignore[i].h;
		int x1 = xe > w ? w : xe < x0 ? x0 : (int)xe, y1 = ye > h ? h : ye < y0 ? y0 : (int)ye;
		for (int y = y0; y < y1; y++)
			memset(f->map + (size_t)y * (size_t)w + x0, 0, sizeof(float) * (size_t)(x1 - x0));
	}
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
	for (int band = 0; band < nb; band++) {
		double s = 0;
		int y1 = (band + 1) * BAND < h ? (band + 1) * BAND : h;
		for (int y = band * BAND; y < y1; y++) {
			const float *row = f->map + (size_t)y * (size_t)w;
			double rs = 0;
			for (int x = 0; x < w; x++)
				rs += row[x];
			s += rs;
		}
		f->band_sum[band] = s;
	}
	double total = 0;
	for (int band = 0; band < nb; band++)
		total += f->band_sum[band];
	return compared > 0 ? total / (double)compared : 0.0;
}

/* matplotlib's "magma" colour map (CC0; van der Walt and Smith), 8 bits per channel, as
 * scripts/gen-magma.py writes it from Debian's python3-matplotlib. */
const uint8_t cmp_flip_magma_table[256][3] = {
#include "compare/magma.inc"
};

int cmp_flip_magma_index(float v)
{
	int i = (int)(v * 255.0f + 0.5f);
	return i < 0 ? 0 : i > 255 ? 255 : i;
}

void cmp_flip_magma(float v, uint8_t rgb[3])
{
	memcpy(rgb, cmp_flip_magma_table[cmp_flip_magma_index(v)], 3);
}
