/*
 * sph_surf.c - the sph solver's render field: particle density splatted onto the image.
 *
 *     F(p) = c * sum_i (1 - |p - x_i|^2 / Rs^2)^2     over particles with |p - x_i| < Rs
 *
 * p the pixel centre, x_i world positions, Rs = splat * spacing, and c chosen so that
 * F = 1 at `iso` times the sum deep inside the fluid: F >= 1 is water, 0 is air. The
 * picture is cut into bands of rows; each band adds its particles in index order, so
 * every pixel sums in the same order whatever the thread count.
 */
#include <math.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"

#define SPLAT_BAND 16 /* rows per band */

void sph_splat(sph *s)
{
	const int n = s->n, w = s->fw, h = s->fh;
	const float ox = (float)s->org_x, oy = (float)s->org_y;
	const float Rs = s->splat_r, iRs2 = 1.0f / (Rs * Rs), c = s->splat_scale;
	float *restrict wx = s->wx, *restrict wy = s->wy, *restrict F = s->field;

	if (s->turning) {
		const sph_frame f = s->fr;
#pragma omp parallel for schedule(static) if (n >= SPH_PAR_MIN)
		for (int i = 0; i < n; i++) {
			double px, py;
			frame_to_world(&f, s->x[i], s->y[i], &px, &py);
			wx[i] = (float)px;
			wy[i] = (float)py;
		}
	} else {
#pragma omp parallel for schedule(static) if (n >= SPH_PAR_MIN)
		for (int i = 0; i < n; i++) {
			wx[i] = s->x[i] + ox;
			wy[i] = s->y[i] + oy;
		}
	}
	const int nbands = (h + SPLAT_BAND - 1) / SPLAT_BAND;
#pragma omp parallel for schedule(static) if (n >= SPH_PAR_MIN)
	for (int band = 0; band < nbands; band++) {
		const int r0 = band * SPLAT_BAND, r1 = r0 + SPLAT_BAND < h ? r0 + SPLAT_BAND : h;
		memset(F + (size_t)r0 * w, 0, (size_t)(r1 - r0) * w * sizeof *F);
		for (int i = 0; i < n; i++) {
			const float px = wx[i], py = wy[i];
			/* pixel centres y + 0.5 within Rs of py */
			int ya = (int)ceilf(py - Rs - 0.5f), yb = (int)floorf(py + Rs - 0.5f);
			if (ya < r0)
				ya = r0;
			if (yb > r1 - 1)
				yb = r1 - 1;
			if (ya > yb)
				continue;
			int xa = (int)ceilf(px - Rs - 0.5f), xb = (int)floorf(px + Rs - 0.5f);
			if (xa < 0)
				xa = 0;
			if (xb > w - 1)
				xb = w - 1;
			for (int y = ya; y <= yb; y++) {
				float dy = (float)y + 0.5f - py, dy2 = dy * dy;
				float *row = F + (size_t)y * w;
				for (int x = xa; x <= xb; x++) {
					float dx = (float)x + 0.5f - px;
					float u = 1.0f - (dx * dx + dy2) * iRs2;
					if (u > 0)
						row[x] += c * u * u;
				}
			}
		}
	}
}
