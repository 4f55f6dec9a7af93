/* Golden frames: every example scene in scenes/ renders, with 1 and with 2 threads, to
 * exactly the frames whose hashes are in tests/golden/<scene>.manifest. After an
 * intended change of the output, `make golden` rewrites the manifests (only the frames
 * that changed, listed) and the diff shows up in review. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "compare/compare.h"

/* What the goldens were rendered with: scripts/golden.sh uses the same (checked below). */
#define GOLDEN_ARGS "-q -o null --frames 16"

typedef struct golden_scene {
	char name[64];
} golden_scene;

ParameterizedTestParameters(golden, scene_matches_its_manifest)
{
	glob_t g;
	size_t n = 0;
	golden_scene *p = NULL;
	if (glob("scenes/*.json", 0, NULL, &g) == 0) {
		p = cr_malloc(sizeof *p * g.gl_pathc);
		for (size_t i = 0; p && i < g.gl_pathc; i++) {
			char *base = basename(g.gl_pathv[i]);
			size_t len = strlen(base) - 5; /* ".json" */
			if (len >= sizeof p[n].name)
				continue;
			memcpy(p[n].name, base, len);
			p[n].name[len] = 0;
			n++;
		}
		globfree(&g);
	}
	return cr_make_param_array(golden_scene, p, n);
}

ParameterizedTest(golden_scene *sc, golden, scene_matches_its_manifest, .timeout = 300)
{
	char golden[256], tmpdir[64];
	snprintf(golden, sizeof golden, "tests/golden/%s.manifest", sc->name);
	cr_assert(access(golden, R_OK) == 0,
		  "scenes/%s.json has no golden manifest %s: run 'make golden' and commit it", sc->name,
		  golden);
	tp_tmpdir_make(tmpdir, sizeof tmpdir, "golden");
	for (int threads = 1; threads <= 2; threads++) {
		char got[512], errf[128];
		snprintf(got, sizeof got, "%s/%s-t%d.manifest", tmpdir, sc->name, threads);
		snprintf(errf, sizeof errf, "%s/stderr", tmpdir);
		cr_assert_eq(run_tp(NULL, errf, "render scenes/%s.json " GOLDEN_ARGS " --threads %d --hash %s",
				    sc->name, threads, got),
			     0, "render %s: %s", sc->name, slurp(errf));
		cmp_config cfg = { .a = golden, .b = got, .threads = 1, .png_level = -1 };
		cmp_result res;
		tp_err err;
		int rc = cmp_run(&cfg, &res, &err);
		char *report = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&report, &len);
		cr_assert_not_null(mem);
		if (rc == 0 || rc == TP_EDIFF)
			cmp_report_summary(mem, &cfg, &res);
		else
			fprintf(mem, "%s\n", err.msg);
		fclose(mem);
		cmp_result_free(&res);
		cr_expect_eq(rc, 0,
			     "scenes/%s.json with --threads %d differs from %s (if intended: make golden):\n%s",
			     sc->name, threads, golden, report);
		free(report);
	}
	tp_tmpdir_remove(tmpdir);
}

Test(golden, regeneration_script_renders_what_the_tests_check)
{
	const char *script = slurp("scripts/golden.sh");
	cr_assert(strstr(script, "ARGS=\"" GOLDEN_ARGS "\"") != NULL,
		  "scripts/golden.sh must render with " GOLDEN_ARGS);
	cr_assert(strstr(script, "compare --update") != NULL);
}
