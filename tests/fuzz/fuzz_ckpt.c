/* Checkpoint reader: any bytes as a checkpoint of one of three tiny scenes (the first
 * byte picks ripple with a loop, rain and a moving box; shallow with floating boxes; or
 * sph with a moving and a floating box), checked and loaded into that scene's simulation
 * (ckpt_load); a checkpoint that loads is then stepped one frame (loop_pass: the solver
 * runs on what was loaded, nothing is rendered). The scenes are tests/fuzz/scenes/
 * ckpt-*.json, 24x16 pixels, read from the working directory: run from the tree's root,
 * as the Makefile does. The sph scene sets max_substeps to 8, the most its own frames
 * take: a damaged checkpoint with particles at the velocity cap would otherwise run the
 * default 200 substeps in its one frame (about 0.2 s each under the sanitizers). In this build the checksum is not required to match
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), so mutations reach the section readers;
 * every other check runs. Seeds: real checkpoints made by `tidepool cache`, prefixed by
 * the scene's index (tests/fuzz/corpus/ckpt, remade by tests/fuzz/ckpt-seeds.sh).
 *
 * Speed: making a simulation costs far more than loading one (sph's wall tables,
 * shallow's coupling solve: about 80% of the time when done per input), so each scene's
 * simulation is made once, in LLVMFuzzerInitialize, and every input loads into it. The
 * loaders only fill what was allocated for the scene, and a checkpoint holds the whole
 * state the next frames depend on (the first step after a load recomputes the rest), so
 * what a previous input left behind does not change what a later one does: an input
 * that fails here fails the same way alone (`build/fuzz/fuzz_ckpt FILE`); if it did not,
 * that would itself be a finding (state a checkpoint misses).
 *
 * When the first byte's high bit is clear, the version field is set to this build's
 * version before loading, so that the seeds keep reaching the section readers after a
 * version bump; with it set, the version bytes are the fuzzer's too. */
#include "fuzz_util.h"
#include "scene/scene.h"
#include "solvers/solver.h"
#include "sim/ckpt.h"
#include "sim/loop.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const scene_files[] = {
	"tests/fuzz/scenes/ckpt-ripple.json",
	"tests/fuzz/scenes/ckpt-shallow.json",
	"tests/fuzz/scenes/ckpt-sph.json",
};
#define NSCENES (sizeof scene_files / sizeof scene_files[0])
static scene *scenes[NSCENES];
static ckpt_key keys[NSCENES];
static sim_loop *loops[NSCENES];

#define VERSION_AT  16 /* sim/ckpt.h: 32 bytes, NUL-padded */
#define VERSION_LEN 32

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const scene_overrides ov = {0};
	(void)argc;
	(void)argv;
	fuzz_init();
	for (size_t i = 0; i < NSCENES; i++) {
		tp_err err = {""};
		if (scene_load(scene_files[i], &ov, tp_solvers, &scenes[i], &err) < 0 ||
		    loop_create(scenes[i], 1, &loops[i], &err) < 0) {
			fprintf(stderr, "fuzz_ckpt: %s (run from the tree's root)\n", err.msg);
			abort();
		}
		keys[i].sc = scenes[i];
		scene_fingerprint(scenes[i], &ov, keys[i].fingerprint);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[1 << 20];
	if (size < 1)
		return 0;
	size_t which = data[0] % NSCENES, n = size - 1;
	const uint8_t *in = data + 1;
	if (!(data[0] & 0x80) && n >= VERSION_AT + VERSION_LEN && n <= sizeof buf) {
		memcpy(buf, in, n);
		memset(buf + VERSION_AT, 0, VERSION_LEN);
		memcpy(buf + VERSION_AT, TP_VERSION, strlen(TP_VERSION));
		in = buf;
	}
	const char *path = fuzz_file("frame-00000002.tpck", in, n);
	tp_err err = {""};
	int rc = ckpt_load(path, &keys[which], -1, loops[which], &err);
	if (rc == 0)
		rc = loop_pass(loops[which], &err);
	if (getenv("TP_FUZZ_VERBOSE")) /* to see where the seeds stop */
		fprintf(stderr, "fuzz_ckpt: scene %zu: %s\n", which, rc < 0 ? err.msg : "loaded");
	if (rc < 0)
		fuzz_check_error(rc, &err);
	return 0;
}
