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
 * steep pixel's highlight is the mean over the same N x N subsamples as its lookups
 * (refract_aa.c: u_i = (i + 1/2) / N - 1/2, the offset o(x + u, y + v) bilinear between
 * the pixel centres, the slope o / R):
 *     lift' = clamp(lift + round(spec (mean of s over the subsamples - s(centre))), +-1024)
 * (the reflection term of the lift, which follows the smoothed height, is kept). Plain
 * scalar C, one function for every vector level and thread: the same bytes everywhere.
 */
#include <stdint.h>

#include "render/render_impl.h"

/* refract.c's highlight for the slope (dx, dy) in the colour pass's stored units */
static float highlight(const render_hl *p, float dx, float dy)
{
	const float d = dx * p->g0 + dy * p->g1 + p->h2;
	if (!(d > 0.0f))
		return 0.0f;
	float s = d * d / ((dx * dx + dy * dy) * p->ng2 + 1.0f);
	s = s > 0.125f ? s : 0.125f; /* (refract.c's floor: q^32 below 2^-96 is none) */
	s *= s;
	s *= s;
	s *= s;
	s *= s;
	s *= s;
	return s;
}

static int hl_on = 1;

void render_set_antialias_highlight(int on)
{
	hl_on = on;
}

int render_aa_highlight(const render_hl *p, int n, const render_aa_offsets *o,
			const uint8_t *steep, uint8_t *nsub, int32_t *lift)
{
	int added = 0;
	if (!hl_on || p->spec == 0.0f || p->R == 0.0f)
		return 0;
	const float ir = 1.0f / p->R;
	for (int i = 0; i < n; i++) {
		const int N = steep[i];
		if (!N)
			continue;
		const int c = i + 1;
		/* The slopes over the pixel lie in the box of its nine offsets (refract_aa.c's
		 * field, bilinear in each quarter: footprint.c); where the box's point nearest
		 * the highlight's peak, m parallel to h, is lit by under 1/16 level, no
		 * subsample is lit enough to change the lift (the lobe falls monotonically
		 * away from the peak), and the pixel is left as drawn. */
		float near[2];
		for (int k = 0; k < 2; k++) {
			const float *t = o->row[0][k] + c, *m = o->row[1][k] + c,
				    *b = o->row[2][k] + c;
			const float pt[8] = {m[-1], m[1], t[0], b[0], t[-1], t[1], b[-1], b[1]};
			float lo = m[0], hi = m[0];
			for (int e = 0; e < 8; e++) {
				lo = pt[e] < lo ? pt[e] : lo;
				hi = pt[e] > hi ? pt[e] : hi;
			}
			/* (the neighbours' offsets bound the midpoints and corners, means of
			 * them and the centre) */
			const float peak = (k ? p->g1 : p->g0) / (p->ng2 * p->h2) * p->R;
			near[k] = (peak < lo ? lo : peak > hi ? hi : peak) * ir;
		}
		if (!(p->spec * highlight(p, near[0], near[1]) >= 0.0625f))
			continue;
		const float s0 = highlight(p, o->row[1][0][c] * ir, o->row[1][1][c] * ir);
		float sum = 0.0f;
		for (int j = 0; j < N; j++) {
			const float v = ((float)j + 0.5f) / (float)N - 0.5f;
			for (int k = 0; k < N; k++) {
				const float u = ((float)k + 0.5f) / (float)N - 0.5f;
				sum += highlight(p, render_aa_offset_at(o, 0, c, u, v) * ir,
						 render_aa_offset_at(o, 1, c, u, v) * ir);
			}
		}
		const float d = p->spec * (sum / (float)(N * N) - s0);
		const float dl = (d + 0x1.8p23f) - 0x1.8p23f; /* to nearest, |d| < 2^22 */
		if (!(dl != 0.0f)) /* (a NaN changes nothing) */
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
