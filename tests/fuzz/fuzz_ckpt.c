/* Checkpoint reader: any bytes as a checkpoint of one of three small scenes (the first
 * byte picks ripple, shallow with floating boxes, or sph), checked and loaded into a fresh
 * simulation (ckpt_load), which then makes one frame from it. The scenes are the frame
 * target's (tests/fuzz/corpus/frame, read from the working directory: run from the
 * tree's root, as the Makefile does). In this build the checksum is not required to match
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), so mutations reach the section readers;
 * every other check runs. Seeds: real checkpoints made by `tidepool cache`, prefixed by
 * the scene's index (tests/fuzz/corpus/ckpt). */
#include "fuzz_util.h"
#include "scene/scene.h"
#include "sim/ckpt.h"
#include "sim/loop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const scene_files[] = {
	"tests/fuzz/corpus/frame/small-tiny.json",
	"tests/fuzz/corpus/frame/small-shallow_float.json",
	"tests/fuzz/corpus/frame/small-sph_box.json",
};
#define NSCENES (sizeof scene_files / sizeof scene_files[0])
static scene *scenes[NSCENES];
static ckpt_key keys[NSCENES];

static void load_scenes(void)
{
	static const scene_overrides ov = {0};
	if (scenes[0])
		return;
	for (size_t i = 0; i < NSCENES; i++) {
		tp_err err = {""};
		if (scene_load(scene_files[i], &ov, &scenes[i], &err) < 0) {
			fprintf(stderr, "fuzz_ckpt: %s (run from the tree's root)\n", err.msg);
			abort();
		}
		keys[i].sc = scenes[i];
		scene_fingerprint(scenes[i], &ov, keys[i].fingerprint);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_init();
	load_scenes();
	if (size < 1)
		return 0;
	size_t which = data[0] % NSCENES;
	const char *path = fuzz_file("frame-00000002.tpck", data + 1, size - 1);
	sim_loop *lp = NULL;
	tp_err err = {""};
	int rc = loop_create(scenes[which], 1, &lp, &err);
	if (rc < 0)
		abort(); /* the scene itself loads and runs: not the input's doing */
	rc = ckpt_load(path, &keys[which], -1, lp, &err);
	if (rc == 0) {
		tp_surface surf;
		rc = loop_next(lp, &surf, &err);
	}
	if (getenv("TP_FUZZ_VERBOSE")) /* to see where the seeds stop */
		fprintf(stderr, "fuzz_ckpt: scene %zu: %s\n", which, rc < 0 ? err.msg : "loaded");
	if (rc < 0)
		fuzz_check_error(rc, &err);
	loop_destroy(lp);
	return 0;
}
