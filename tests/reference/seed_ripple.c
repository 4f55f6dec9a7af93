/* Seed 001, ported as written: x0' = (x1 + ... + x8 + y1 + ... + y4) / 6 - x0, then
 * x0' -= x0' >> damping, where x1..x8 are the 3x3 ring and y1..y4 the cells two away on
 * the axes; x0' overwrites the buffer that held the previous state, then they swap. */
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"

int ref_ripple_init(ref_ripple *r, int w, int h, scene_boundary b, int unit, int sponge,
		    double wake)
{
	memset(r, 0, sizeof *r);
	r->damping = 5;
	if (ref_pool_init(&r->p, w, h, b, 2, unit, sponge, wake) < 0)
		return -1;
	r->cur = calloc((size_t)w * h, sizeof *r->cur);
	r->prev = calloc((size_t)w * h, sizeof *r->prev);
	return r->cur && r->prev ? 0 : -1;
}

void ref_ripple_free(ref_ripple *r)
{
	free(r->cur);
	free(r->prev);
	ref_pool_free(&r->p);
}

void ref_ripple_drop(ref_ripple *r, double x, double y, double rad, double strength)
{
	int32_t *both[2] = {r->cur, r->prev};
	ref_drop(&r->p, both, 2, x, y, rad, strength);
}

static int32_t next(const ref_ripple *r, int32_t sum, int32_t prev)
{
	int32_t n = sum / 6 - prev;
	n -= n >> r->damping;
	return n;
}

void ref_ripple_step(ref_ripple *r, const scene_box *boxes, const tp_box_pose *poses, int nboxes,
		     double dt)
{
	const int W = r->p.w, H = r->p.h;
	const int32_t *C = r->cur;
	if (r->p.boundary != SCENE_BOUNDARY_WRAP) {
		for (int y = 2; y < H - 2; y++)
			for (int x = 2; x < W - 2; x++) {
				int32_t sum = C[(y - 1) * W + x - 1] + C[(y - 1) * W + x] +
					      C[(y - 1) * W + x + 1] + C[y * W + x - 1] +
					      C[y * W + x + 1] + C[(y + 1) * W + x - 1] +
					      C[(y + 1) * W + x] + C[(y + 1) * W + x + 1] +
					      C[(y - 2) * W + x] + C[(y + 2) * W + x] +
					      C[y * W + x - 2] + C[y * W + x + 2];
				r->prev[y * W + x] = next(r, sum, r->prev[y * W + x]);
			}
	} else {
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				int32_t sum = 0;
				for (int dy = -1; dy <= 1; dy++)
					for (int dx = -1; dx <= 1; dx++)
						if (dx || dy)
							sum += C[(y + dy + H) % H * W +
								 (x + dx + W) % W];
				sum += C[(y + H - 2) % H * W + x] + C[(y + 2) % H * W + x] +
				       C[y * W + (x + W - 2) % W] + C[y * W + (x + 2) % W];
				r->prev[y * W + x] = next(r, sum, r->prev[y * W + x]);
			}
	}
	ref_sponge(&r->p, r->prev, r->cur);
	int32_t *t = r->prev;
	r->prev = r->cur;
	r->cur = t;
	int32_t *both[2] = {r->cur, r->prev};
	ref_boxes(&r->p, boxes, poses, nboxes, dt, both, 2, both, 2);
}
