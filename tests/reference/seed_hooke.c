/* Seed 000 (RippleSpread), ported as written: pBack holds the current heights, pFront
 * receives the next ones, pV the velocities; the buffers are swapped after each step. */
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"

int ref_hooke_init(ref_hooke *r, int w, int h, scene_boundary b, int unit, int sponge, double wake)
{
	memset(r, 0, sizeof *r);
	r->edge = 3;
	r->corner = 1;
	r->vshift = 6;
	r->hshift = 8;
	if (ref_pool_init(&r->p, w, h, b, 1, unit, sponge, wake) < 0)
		return -1;
	r->back = calloc((size_t)w * h, sizeof *r->back);
	r->front = calloc((size_t)w * h, sizeof *r->front);
	r->v = calloc((size_t)w * h, sizeof *r->v);
	return r->back && r->front && r->v ? 0 : -1;
}

void ref_hooke_free(ref_hooke *r)
{
	free(r->back);
	free(r->front);
	free(r->v);
	ref_pool_free(&r->p);
}

void ref_hooke_drop(ref_hooke *r, double x, double y, double rad, double strength)
{
	ref_drop(&r->p, &r->back, 1, x, y, rad, strength);
}

/* One cell of the seed loop given the current height c, its edge neighbours n s w e and
 * corner neighbours nw ne se sw; updates *v and returns the next height. */
static int32_t spread(const ref_hooke *r, int32_t c, int32_t n, int32_t s, int32_t w, int32_t e,
		      int32_t nw, int32_t ne, int32_t se, int32_t sw, int32_t *v)
{
	int32_t k = r->edge, q = r->corner, d = 4 * (k + q);
	int32_t a =
		(d * c - (k * n + k * s + k * w + k * e + q * nw + q * ne + q * se + q * sw)) / d;
	*v -= a;
	*v -= *v >> r->vshift;
	int32_t f = c + *v;
	f -= f >> r->hshift;
	return f;
}

void ref_hooke_step(ref_hooke *r, const scene_box *boxes, const tp_box_pose *poses, int nboxes,
		    double dt)
{
	const int W = r->p.w, H = r->p.h;
	const int32_t *B = r->back;
	if (r->p.boundary != SCENE_BOUNDARY_WRAP) {
		for (int y = 1; y < H - 1; y++)
			for (int x = 1; x < W - 1; x++)
				r->front[y * W + x] = spread(
					r, B[y * W + x], B[(y - 1) * W + x], B[(y + 1) * W + x],
					B[y * W + x - 1], B[y * W + x + 1], B[(y - 1) * W + x - 1],
					B[(y - 1) * W + x + 1], B[(y + 1) * W + x + 1],
					B[(y + 1) * W + x - 1], &r->v[y * W + x]);
	} else {
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				int yu = (y + H - 1) % H, yd = (y + 1) % H;
				int xl = (x + W - 1) % W, xr = (x + 1) % W;
				r->front[y * W + x] =
					spread(r, B[y * W + x], B[yu * W + x], B[yd * W + x],
					       B[y * W + xl], B[y * W + xr], B[yu * W + xl],
					       B[yu * W + xr], B[yd * W + xr], B[yd * W + xl],
					       &r->v[y * W + x]);
			}
	}
	ref_sponge(&r->p, r->front, r->back);
	ref_sponge(&r->p, r->v, NULL);
	int32_t *t = r->front;
	r->front = r->back;
	r->back = t;
	int32_t *hold[2] = {r->back, r->v};
	ref_boxes(&r->p, boxes, poses, nboxes, dt, hold, 1, hold, 2);
}
