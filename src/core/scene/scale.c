/*
 * scale.c - scene units to output pixels, the last step of loading.
 *
 * A scene is written in scene units: its "size" is the frame of reference, and a render at
 * another size (--size, --scale, "resolution") shows the same picture, larger or smaller.
 * Everything is read and checked in scene units (so messages quote the values as written
 * and a position valid at one size is valid at all); this pass then converts what the
 * scene stores to output pixels, with
 *     x positions and widths of pool-aligned rectangles:   * scale_x = W / W0
 *     y positions and heights of pool-aligned rectangles:  * scale_y = H / H0
 *     every other length (radii, footprints, speeds, pattern cells, flipbook frames): * scale
 * (scale = scale_x; scale_y differs from it by less than a pixel over the frame, see
 * read_resolution). Heights ("height units") are not lengths of the picture and stay as
 * written. At the scene's own size every factor is exactly 1, so nothing changes.
 *
 * What is not stored here is scaled where it is used: solver parameters by their tp_option
 * unit (solvers/registry.c), the integer solvers' steps per frame and damping shifts (the
 * stepper and intgrid), the renderer's slope gains and pixel constants (render/).
 */
#include <math.h>

#include "scene/ld.h"

static void scale_path(scene_path *p, double sx, double sy)
{
	for (int i = 0; i < p->n; i++) {
		p->keys[i].x *= sx;
		p->keys[i].y *= sy;
	}
}

/* A whole number of pixels for a length that must stay at least one pixel. */
static int scale_px(int v, double s)
{
	long r = lround(v * s);
	return r < 1 ? 1 : r > 1 << 30 ? 1 << 30 : (int)r;
}

int ld_scale(ld *L)
{
	scene *s = L->s;
	s->width = L->out_w;
	s->height = L->out_h;
	if (s->width == s->ref_width && s->height == s->ref_height)
		return 0; /* the scene's own size: scale factors 1, nothing to convert */
	const double k = s->scale, sx = s->scale_x, sy = s->scale_y;

	for (int i = 0; i < s->ndrops; i++) {
		scene_drop *d = &s->drops[i];
		d->x *= sx;
		d->y *= sy;
		d->radius *= k;
	}
	for (int i = 0; i < s->nemitters; i++) {
		scene_emitter *e = &s->emitters[i];
		e->area[0] *= sx;
		e->area[1] *= sy;
		e->area[2] *= sx;
		e->area[3] *= sy;
		e->radius[0] *= k;
		e->radius[1] *= k;
		e->at[0] *= sx;
		e->at[1] *= sy;
		e->speed *= k;
	}
	for (int i = 0; i < s->nboxes; i++) {
		scene_box *b = &s->boxes[i];
		b->size[0] *= k;
		b->size[1] *= k;
		scale_path(&b->path, sx, sy);
	}
	if (s->has_tank) {
		s->tank.size[0] *= sx;
		s->tank.size[1] *= sy;
		scale_path(&s->tank.path, sx, sy);
	}
	for (int i = 0; i < s->nblocks; i++) {
		scene_block *b = &s->blocks[i];
		b->x *= sx;
		b->w *= sx;
		b->y *= sy;
		b->h *= sy;
	}
	s->background.scale *= k;

	scene_flipbook *fb = &s->flipbook;
	if (fb->on) {
		fb->frame_w = scale_px(fb->frame_w, k);
		fb->frame_h = scale_px(fb->frame_h, k);
		double aw = (double)fb->cols * fb->frame_w, ah = (double)fb->rows * fb->frame_h;
		if (aw > ATLAS_MAX_SIDE || ah > ATLAS_MAX_SIDE)
			return ld_fail(L, ld_get(L->root, "flipbook"), 0,
				       "at %dx%d the atlas would be %.0fx%.0f, more than %dx%d "
				       "(the largest "
				       "texture GPUs take); render smaller or use fewer cells",
				       s->width, s->height, aw, ah, ATLAS_MAX_SIDE, ATLAS_MAX_SIDE);
	}
	return 0;
}
