/*
 * highlight.c - the sun's highlight anti-aliased where the surface's slope varies within a
 * pixel: the pixels the anti-aliasing finds steep (refract_aa.c's plan: the refraction
 * offset, R times the slope, changes by more than a quarter pixel from one pixel to the
 * next).
 *
 * refract.c lights a pixel by the highlight of its centre's slope alone,
 *     s(dx, dy) = ((m.h)^2 / |m|^2)^32 for m.h > 0 (else 0), m = (-g dx, -g dy, 1),
 * a lobe a few hundredths of a unit of slope wide. On a ring's flank the slope sweeps
 * across that lobe within a pixel, so whether a pixel lights up depends on where its
 * centre falls: the ring's thin highlight breaks into isolated bright pixels. Here a
 * steep pixel's highlight is the mean over 2 x 2 subsamples placed as refract_aa.c places
 * its lookups (u, v = +-1/4; every steep pixel has N >= 2; a forced count N, the tests'
 * 16 x 16 reference, takes all N x N), the offset o(x + u, y + v) bilinear between the
 * pixel centres, the slope o / R:
 *     lift' = clamp(lift + round(spec (mean of s over the subsamples - s(centre))), +-1024)
 * (the reflection term of the lift, which follows the smoothed height, is kept). 2 x 2 is
 * enough for the test (no pixel 16 levels over the reference; 3 x 3 and N x N gave the
 * same count). The pixels of a run with a steep one are done in one branch-free loop the
 * compiler vectorises (cloned per vector level: the same IEEE operations, so the same
 * bytes on every level and thread count). (Toksvig's filter, the lobe widened by the
 * normals' variance over the nine footprint points, was tried: it brightened pond's ring
 * flanks, 22 pixels over the reference in a frame where the unfiltered highlight had 11.)
 */
#include <stdint.h>

#include "render/render_impl.h"

/* refract.c's highlight for the slope (dx, dy) in the colour pass's stored units;
 * branch-free, so that the loop below vectorises (a NaN gives 0) */
static inline __attribute__((always_inline)) float highlight(const render_hl *p, float dx, float dy)
{
	const float d = dx * p->g0 + dy * p->g1 + p->h2;
	float s = d * d / ((dx * dx + dy * dy) * p->ng2 + 1.0f);
	s = s > 0.125f ? s : 0.125f; /* (refract.c's floor: q^32 below 2^-96 is none) */
	s *= s;
	s *= s;
	s *= s;
	s *= s;
	s *= s;
	return d > 0.0f ? s : 0.0f;
}

/* The slope box test of every pixel: the slopes over a pixel lie in the box of its nine
 * offsets (refract_aa.c's field, bilinear in each quarter: footprint.c), so where the
 * box's point nearest the lobe's peak (m parallel to h) is lit by under 1/16 level no
 * subsample is lit enough to change the lift (the lobe falls monotonically away from the
 * peak) and the pixel is left as drawn (*near 0). */
static inline __attribute__((always_inline)) float minf(float a, float b)
{
	return a < b ? a : b;
}

static inline __attribute__((always_inline)) float maxf(float a, float b)
{
	return a > b ? a : b;
}

static inline __attribute__((always_inline)) float near_peak(const float *const r[3], int c,
							     float pk, float ir)
{
	const float *t = r[0] + c, *m = r[1] + c, *b = r[2] + c;
	const float lo = minf(minf(minf(minf(m[0], m[-1]), minf(m[1], t[0])),
				   minf(minf(b[0], t[-1]), minf(t[1], b[-1]))),
			      b[1]);
	const float hi = maxf(maxf(maxf(maxf(m[0], m[-1]), maxf(m[1], t[0])),
				   maxf(maxf(b[0], t[-1]), maxf(t[1], b[-1]))),
			      b[1]);
	return minf(maxf(pk, lo), hi) * ir;
}

/* render_aa_offset_at for u = du / 4, v = dv / 4 (du, dv = -1 or 1): the same operations */
static inline __attribute__((always_inline)) float off_q(const float *const r[3], int c, int du,
							 int dv)
{
	const float *m = r[1], *e = dv < 0 ? r[0] : r[2];
	const float top = 0.75f * m[c] + 0.25f * m[c + du];
	const float bot = 0.75f * e[c] + 0.25f * e[c + du];
	return 0.75f * top + 0.25f * bot;
}

/* The change of every pixel's highlight in levels, spec (mean over 2 x 2 - centre), 0 where
 * the slope box test leaves it; every pixel of the run, branch-free (vectorised: the
 * same IEEE operations in every clone, so the same bits). */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
hl_deltas(const render_hl *p, int n, const render_aa_offsets *o, float *restrict delta)
{
	const float ir = 1.0f / p->R;
	const float pk0 = p->g0 / (p->ng2 * p->h2) * p->R, pk1 = p->g1 / (p->ng2 * p->h2) * p->R;
	const float *const rx[3] = {o->row[0][0], o->row[1][0], o->row[2][0]};
	const float *const ry[3] = {o->row[0][1], o->row[1][1], o->row[2][1]};
	for (int i = 0; i < n; i++) {
		const int c = i + 1;
		const float sn = p->spec *
				 highlight(p, near_peak(rx, c, pk0, ir), near_peak(ry, c, pk1, ir));
		const float s0 = highlight(p, rx[1][c] * ir, ry[1][c] * ir);
		float sum = 0.0f; /* v outer, u inner, as the N x N loop below */
		sum += highlight(p, off_q(rx, c, -1, -1) * ir, off_q(ry, c, -1, -1) * ir);
		sum += highlight(p, off_q(rx, c, 1, -1) * ir, off_q(ry, c, 1, -1) * ir);
		sum += highlight(p, off_q(rx, c, -1, 1) * ir, off_q(ry, c, -1, 1) * ir);
		sum += highlight(p, off_q(rx, c, 1, 1) * ir, off_q(ry, c, 1, 1) * ir);
		const float d = p->spec * (sum / 4.0f - s0);
		delta[i] = sn >= 0.0625f ? d : 0.0f;
	}
}

int render_aa_highlight(const render_hl *p, int n, const render_aa_offsets *o, const uint8_t *steep,
			uint8_t *nsub, int32_t *lift)
{
	int added = 0;
	if (!p->checks.aa_highlight || p->spec == 0.0f || p->R == 0.0f)
		return 0;
	float delta[256]; /* n <= 256 (refract.c's CHUNK) */
	const int forced = p->checks.aa_force;
	if (!forced) {
		/* only the columns from the first steep pixel to the last (a calm scene's
		 * chunks hold a few steep pixels together): the same values there */
		int lo, hi;
		render_aa_steep_span(steep, n, &lo, &hi);
		const render_aa_offsets from = render_aa_offsets_from(o, lo);
		hl_deltas(p, hi - lo, &from, delta + lo);
	} else { /* the reference: the mean over all N x N subsamples of a forced count */
		const float ir = 1.0f / p->R;
		for (int i = 0; i < n; i++) {
			const int N = steep[i], c = i + 1;
			float sum = 0.0f;
			for (int j = 0; j < N; j++) {
				const float v = ((float)j + 0.5f) / (float)N - 0.5f;
				for (int k = 0; k < N; k++) {
					const float u = ((float)k + 0.5f) / (float)N - 0.5f;
					sum += highlight(p, render_aa_offset_at(o, 0, c, u, v) * ir,
							 render_aa_offset_at(o, 1, c, u, v) * ir);
				}
			}
			const float s0 = highlight(p, o->row[1][0][c] * ir, o->row[1][1][c] * ir);
			delta[i] = N ? p->spec * (sum / (float)(N * N) - s0) : 0.0f;
		}
	}
	for (int i = 0; i < n; i++) {
		if (!steep[i])
			continue;
		const float dl = (delta[i] + 0x1.8p23f) - 0x1.8p23f; /* to nearest, |d| < 2^22 */
		if (!(dl >= 1.0f || dl <= -1.0f))                    /* (0, or a NaN: no change) */
			continue;
		int l = (int16_t)(lift[i] & 0xffff) + (int)dl;
		l = l < -1024 ? -1024 : l > 1024 ? 1024 : l;
		const uint32_t lq = (uint32_t)l & 0xffffu;
		lift[i] = (int32_t)(lq | lq << 16);
		if (!nsub[i]) { /* skipped as flat: its one lookup, drawn again with the new lift */
			nsub[i] = 1;
			added++;
		}
	}
	return added;
}
