/*
 * bench_scale.c - scenes/pond.json (ripple, a 640x360 scene) rendered at 3840x2160: the
 * simulation and the colour render of each frame, written nowhere (what `tidepool render
 * scenes/pond.json --size 3840x2160 -o null` does per frame), all threads. At 6x its size
 * the ripple solver takes 6 x 2 = 12 steps per frame. Baseline, in the same run: the seed
 * ports at that size, one thread: seed 001's ripple loop (tests/reference/seed_ripple.c)
 * for the same 12 steps per frame with the scene's drops, and seed 000's nearest-pixel
 * render (tests/reference/seed_render.c).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "reference/reference.h"
#include "reference/reference_render.h"
#include "render/render.h"
#include "sim/stepper.h"

#define SCENE "scenes/pond.json"
enum { W = 3840, H = 2160, FRAMES = 24 };

static void run(void)
{
	tp_err err = {""};
	scene *sc = NULL;
	stepper *st = NULL;
	render_ctx *r = NULL;
	tp_image out = {0};
	ref_ripple rr;
	int rr_ok = 0;
	uint8_t *bg = NULL, *ref_out = NULL;
	scene_overrides ov = {.width = W, .height = H};
	if (scene_load(SCENE, &ov, &sc, &err) < 0 ||
	    stepper_create(sc, omp_get_max_threads(), &st, &err) < 0 ||
	    render_create(sc, SCENE_MODE_COLOR, &r, &err) < 0 ||
	    tp_image_alloc(&out, W, H, TP_RGB8) < 0) {
		fprintf(stderr, "bench pond 4k: %s\n", err.msg);
		goto done;
	}
	tp_surface s;
	/* frame 0 (the drops at t = 0), untimed */
	stepper_next(st, &err);
	double t0 = bench_now();
	for (int f = 1; f <= FRAMES; f++) {
		stepper_next(st, &err);
		stepper_surface(st, &s);
		render_frame(r, &s, &out);
	}
	const double fps = FRAMES / (bench_now() - t0);

	/* The seed ports: the same steps per frame and drops, one thread. */
	const long steps_per_frame = (long)sc->substeps * sc->scale_num / sc->scale_den;
	bg = malloc((size_t)3 * W * H);
	ref_out = malloc((size_t)3 * W * H);
	if (!bg || !ref_out || ref_ripple_init(&rr, W, H, sc->boundary, 4096, 32, 0) < 0)
		goto done;
	rr_ok = 1;
	for (int y = 0; y < H; y++)
		memcpy(bg + (size_t)3 * W * y, tp_image_row(&out, y), (size_t)3 * W);
	char *done_drop = calloc((size_t)sc->ndrops + 1, 1);
	if (!done_drop)
		goto done;
	const double dt = 1.0 / (sc->fps * (double)steps_per_frame);
	const int threads = omp_get_max_threads();
	omp_set_num_threads(1);
	t0 = bench_now();
	for (int f = 1; f <= FRAMES; f++) {
		for (long k = 0; k < steps_per_frame; k++) {
			double t1 = ((f - 1) * steps_per_frame + k + 1) * dt;
			for (int i = 0; i < sc->ndrops; i++)
				if (!done_drop[i] && sc->drops[i].t <= t1) {
					ref_ripple_drop(&rr, sc->drops[i].x, sc->drops[i].y,
							sc->drops[i].radius, sc->drops[i].strength);
					done_drop[i] = 1;
				}
			ref_ripple_step(&rr, NULL, NULL, 0, dt);
		}
		ref_seed_render(rr.cur, bg, ref_out, W, H);
	}
	const double ref_fps = FRAMES / (bench_now() - t0);
	omp_set_num_threads(threads);
	free(done_drop);

	char label[64];
	snprintf(label, sizeof label, "pond 3840x2160 to null (%d thr)", threads);
	bench_row(label, "frames/s vs seed ports", fps, "fps", ref_fps, 1);
done:
	if (rr_ok)
		ref_ripple_free(&rr);
	free(bg);
	free(ref_out);
	tp_image_free(&out);
	render_destroy(r);
	stepper_destroy(st);
	scene_destroy(sc);
}

const bench_entry bench_pond4k = {"pond4k", run};
