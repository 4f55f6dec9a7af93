/*
 * seed_port.c - `tidepool-bench --seed-port SCENE WxH FRAMES`: the plain single-threaded
 * ports of the seed loops doing what `tidepool render SCENE --size WxH --frames FRAMES -o
 * null` does, as a process of its own, so scripts/bench.sh can time both as whole
 * processes in the same run: load the scene, then per frame the same number of solver
 * steps (seed 001's ripple loop or seed 000's hooke loop, tests/reference/) with the
 * scene's drops, and seed 000's nearest-pixel render (tests/reference/seed_render.c) into
 * a frame that is then dropped. Emitters' drops are not placed (their cost is a few
 * hundred cells a step); every step and every pixel is.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "reference/reference.h"
#include "reference/reference_render.h"
#include "scene/scene.h"
#include "solvers/solver.h"

int bench_seed_port(const char *path, int w, int h, int frames)
{
	omp_set_num_threads(1);
	tp_err err = {""};
	scene *sc = NULL;
	scene_overrides ov;
	memset(&ov, 0, sizeof ov);
	ov.width = w;
	ov.height = h;
	if (scene_load(path, &ov, tp_solvers, &sc, &err) < 0) {
		fprintf(stderr, "seed port: %s\n", err.msg);
		return 1;
	}
	const int hooke = !strcmp(sc->solver->name, "hooke");
	if (!hooke && strcmp(sc->solver->name, "ripple")) {
		fprintf(stderr, "seed port: %s: only ripple and hooke scenes have seed loops\n",
			path);
		scene_destroy(sc);
		return 1;
	}
	const long steps = (long)sc->substeps * sc->scale_num / sc->scale_den;
	const double dt = 1.0 / (sc->fps * (double)steps);
	uint8_t *bg = malloc((size_t)3 * w * h), *out = malloc((size_t)3 * w * h);
	char *done = calloc((size_t)sc->ndrops + 1, 1);
	ref_ripple rr;
	ref_hooke rh;
	int ok = bg && out && done &&
		 (hooke ? ref_hooke_init(&rh, w, h, sc->boundary, 4096, 32, 0)
			: ref_ripple_init(&rr, w, h, sc->boundary, 4096, 32, 0)) == 0;
	if (ok) {
		for (size_t i = 0; i < (size_t)3 * w * h; i++)
			bg[i] = (uint8_t)(i * 7 + (i >> 11));
		for (int f = 0; f < frames; f++) {
			for (long k = 0; k < steps; k++) {
				const double t = ((double)f * steps + k + 1) * dt;
				for (int i = 0; i < sc->ndrops; i++)
					if (!done[i] && sc->drops[i].t <= t) {
						const scene_drop *d = &sc->drops[i];
						if (hooke)
							ref_hooke_drop(&rh, d->x, d->y, d->radius,
								       d->strength);
						else
							ref_ripple_drop(&rr, d->x, d->y, d->radius,
									d->strength);
						done[i] = 1;
					}
				if (hooke)
					ref_hooke_step(&rh, NULL, NULL, 0, dt);
				else
					ref_ripple_step(&rr, NULL, NULL, 0, dt);
			}
			ref_seed_render(hooke ? rh.back : rr.cur, bg, out, w, h);
		}
		if (hooke)
			ref_hooke_free(&rh);
		else
			ref_ripple_free(&rr);
	}
	free(bg);
	free(out);
	free(done);
	scene_destroy(sc);
	return ok ? 0 : 1;
}
