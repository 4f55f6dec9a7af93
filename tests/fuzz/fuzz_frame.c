/* Scene to frames: a scene (plus --set lines) that loads is simulated and rendered for at
 * most 3 frames in its own render mode, as `tidepool render` would. Only tiny scenes (at
 * most FUZZ_MAX_PIXELS) are run, so time goes into the paths, not into big grids: the
 * corpus holds small copies of scenes/ (tests/fuzz/corpus/frame/small-*.json). */
#include "fuzz_scene.h"
#include "render/render.h"
#include "sim/loop.h"

#define FUZZ_MAX_PIXELS (96 * 64)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_init();
	fuzz_scene fs;
	fuzz_scene_split(&fs, data, size);
	scene_overrides ov = {.frames = 3, .sets = fs.sets, .nsets = fs.nsets};
	scene *sc = NULL;
	sim_loop *lp = NULL;
	render_ctx *rd = NULL;
	tp_image img = {0};
	tp_err err = {""};
	int rc = scene_load(fs.path, &ov, tp_solvers, &sc, &err);
	if (rc == 0 && sc->width * sc->height > FUZZ_MAX_PIXELS) {
		scene_destroy(sc);
		free(fs.text);
		return 0;
	}
	if (rc == 0)
		rc = loop_create(sc, 1, &lp, &err);
	if (rc == 0)
		rc = render_create(sc, sc->render.mode, &rd, &err);
	if (rc == 0 && tp_image_alloc(&img, sc->width, sc->height, render_format(rd)) < 0)
		abort();
	for (int k = 0; rc == 0 && k < sc->frames; k++) {
		tp_surface surf;
		rc = loop_next(lp, &surf, &err);
		if (rc == 0)
			render_frame(rd, &surf, &img);
	}
	if (rc < 0)
		fuzz_check_error(rc, &err);
	tp_image_free(&img);
	render_destroy(rd);
	loop_destroy(lp);
	scene_destroy(sc);
	free(fs.text);
	return 0;
}
