/* Scene loader with --set overrides: any text as a scene file plus KEY=VALUE lines. A
 * scene that loads must hold values inside the documented limits. */
#include "fuzz_scene.h"
#include "solvers/solver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_init();
	fuzz_scene fs;
	fuzz_scene_split(&fs, data, size);
	scene_overrides ov = {.sets = fs.sets, .nsets = fs.nsets};
	scene *sc = NULL;
	tp_err err = {""};
	int rc = scene_load(fs.path, &ov, tp_solvers, &sc, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err);
	} else {
		if (sc->width < 1 || sc->height < 1 ||
		    (double)sc->width * sc->height > SCENE_MAX_PIXELS || sc->frames < 1 ||
		    sc->frames > SCENE_MAX_FRAMES || !(sc->fps > 0))
			abort();
		scene_destroy(sc);
	}
	free(fs.text);
	return 0;
}
