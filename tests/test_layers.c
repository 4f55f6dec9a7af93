/*
 * test_layers.c - the core's modules include only the layers below them
 * (docs/internals.md, "Layers"):
 *
 *     util <- scene <- solvers <- sim <- api,   scene <- render <- api
 *
 * A scene file that included a solvers/ header would make the loader call up into the
 * solvers while they read the scene (the cycle scene/solverkind.h removed); render/ knows a
 * solver only by the surface it hands over and the caps flags. The one exception is named:
 * the loader reads the render-mode table (render/modes.h) to refuse a mode a scene lacks.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

typedef struct layer {
	const char *dir;    /* under src/core/ */
	const char *may[6]; /* module folders (the first path component) it may include */
	const char *also;   /* one more header it may include, or NULL */
} layer;

static const layer layers[] = {
	{"util", {"util"}, NULL},
	{"scene", {"util", "scene"}, "render/modes.h"},
	{"solvers", {"util", "scene", "solvers"}, NULL},
	{"sim", {"util", "scene", "solvers", "sim"}, NULL},
	{"render", {"util", "scene", "render"}, NULL},
};

/* Every `#include "MODULE/..."` of src/core/DIR (recursively) outside `l`'s allowed set,
 * logged unless quiet; returns how many. */
static int strays(const layer *l, int quiet)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd,
		 "grep -rHo '^#include \"[a-z_]*/[^\"]*\"' src/core/%s --include='*.c' "
		 "--include='*.h'",
		 l->dir);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char line[512];
	int bad = 0, seen = 0;
	while (fgets(line, sizeof line, p)) {
		const char *q = strchr(line, '"');
		if (!q)
			continue;
		seen++;
		const char *inc = q + 1;
		size_t k = strcspn(inc, "/");
		int ok = l->also && !strncmp(inc, l->also, strlen(l->also)) &&
			 inc[strlen(l->also)] == '"';
		for (int i = 0; !ok && i < 6 && l->may[i]; i++)
			ok = strlen(l->may[i]) == k && !strncmp(inc, l->may[i], k);
		if (!ok && !quiet) {
			line[strcspn(line, "\n")] = 0;
			cr_log_error("%s: src/core/%s may not include that", line, l->dir);
		}
		bad += !ok;
	}
	pclose(p);
	cr_assert_gt(seen, 0, "no includes found in src/core/%s: run from the tree's root", l->dir);
	return bad;
}

Test(layers, each_module_includes_only_the_layers_below)
{
	for (size_t i = 0; i < sizeof layers / sizeof *layers; i++)
		cr_expect_eq(strays(&layers[i], 0), 0, "src/core/%s reaches above its layer",
			     layers[i].dir);
}

/* The check itself sees a stray include: the scene layer as if it could not read render/. */
Test(layers, a_stray_include_is_found)
{
	const layer strict = {"scene", {"util", "scene"}, NULL};
	cr_assert_gt(strays(&strict, 1), 0);
}
