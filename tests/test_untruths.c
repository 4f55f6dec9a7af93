/* The small untruths of issue 30, each checked where a user meets it: --set errors in the
 * file, did-you-mean for commands and solvers, --threads 0, one fps figure, --help paths
 * that exist from the tree, a doubled comma, elements that could have no effect, compare
 * counts that add up, and contact-sheet labels that show what varies. */
#include <stdint.h>
#include <unistd.h>

#include "cli/variants.h"
#include "cli_util.h"
#include "tmpdir.h"

static char dir[64];
static char errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "untrue");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
	snprintf(outpath, sizeof outpath, "%s/stdout", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(untruths, .init = setup, .fini = teardown, .timeout = 120);

#define ERR_HAS(s) cr_assert(strstr(slurp(errpath), (s)) != NULL, "%s", slurp(errpath))
#define OUT_HAS(s) cr_assert(strstr(slurp(outpath), (s)) != NULL, "%s", slurp(outpath))

static void write_file(const char *name, const char *text, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(untruths, set_errors_point_into_the_file)
{
	/* a member added to the scene: at the "{" of the object that gains it */
	cr_assert_eq(
		run_tp(NULL, errpath, "render scenes/rain.json --set params.damping=4 -o null"), 3);
	ERR_HAS("scenes/rain.json:1:1: params.damping (from --set): unknown parameter");
	cr_assert_eq(run_tp(NULL, errpath, "validate scenes/rain.json --set render.foo=4"), 3);
	ERR_HAS("scenes/rain.json:10:13: render.foo (from --set): unknown key");
	/* a value replaced: at its place in the file, even after an insertion on its line */
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "validate scenes/rain.json --set render.shadows=true --set render.tint=5"),
		3);
	ERR_HAS("scenes/rain.json:10:61: render.tint (from --set): must be a colour");
}

Test(untruths, did_you_mean_for_commands_and_solvers)
{
	cr_assert_eq(run_tp(NULL, errpath, "rendr scenes/rain.json"), 2);
	ERR_HAS("unknown command 'rendr' (did you mean 'render'?)");
	cr_assert_eq(run_tp(NULL, errpath, "jion a.mp4"), 2);
	ERR_HAS("did you mean 'join'?");
	cr_assert_eq(run_tp(NULL, errpath, "solvers rippel"), 2);
	ERR_HAS("no solver named 'rippel' (did you mean 'ripple'?)");
	cr_assert_eq(
		run_tp(NULL, errpath, "render scenes/rain.json --set solver='\"hook\"' -o null"),
		3);
	ERR_HAS("did you mean \"hooke\"?");
}

Test(untruths, threads_zero_means_all_cores_and_says_so)
{
	cr_assert_eq(run_tp(outpath, errpath, "render --help"), 0, "%s", slurp(errpath));
	OUT_HAS("0 or absent: all cores");
	cr_assert_eq(run_tp(outpath, errpath, "cache --help"), 0, "%s", slurp(errpath));
	OUT_HAS("0 or absent: all cores");
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 2 --threads 0 -o null -q"),
		     0, "%s", slurp(errpath));
	cr_assert_eq(system("grep -q '0 or absent: all cores' docs/tidepool.1.scd"), 0);
}

Test(untruths, one_fps_figure)
{
	/* not a terminal: no progress line for the last frame beside the summary */
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json --frames 30 -o null"), 0);
	cr_assert(strstr(slurp(errpath), "frame 30/30") == NULL, "%s", slurp(errpath));
	ERR_HAS("rendered 30 frames (96x64, ripple) to null in ");
	ERR_HAS(" fps)");
	/* a loop's warm-up is in the time, and the summary says so */
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/farm_loop.json -o null"),
		     0);
	ERR_HAS("fps; the time includes the loop's warm-up)");
	cr_assert_eq(run_tp(NULL, errpath,
			    "render tests/data/tiny.json --frames 30 --range 20-29 -o null"),
		     0);
	ERR_HAS("fps; the time includes simulating up to the range)");
}

/* The path after `label` in the --help text exists. */
static void help_path_exists(const char *label)
{
	const char *o = strstr(slurp(outpath), label);
	cr_assert_not_null(o, "%s", slurp(outpath));
	char path[1024];
	cr_assert_eq(sscanf(o + strlen(label), " %1023s", path), 1);
	cr_assert_eq(access(path, R_OK), 0, "%s does not exist", path);
}

Test(untruths, help_names_paths_that_exist_from_the_tree)
{
	cr_assert_eq(run_tp(outpath, NULL, "--help"), 0);
	help_path_exists("The scene format:");
	help_path_exists("Example scenes:");
	OUT_HAS("Running from the tree");
	cr_assert(strstr(slurp("README.md"), "### Running from the tree") != NULL);
}

Test(untruths, a_doubled_comma_gets_a_hint)
{
	char p[128];
	write_file("dc.json", "{\n  \"size\": [64, 64],\n  \"seed\": 4,,\n  \"duration\": 1\n}\n",
		   p, sizeof p);
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", p), 3);
	ERR_HAS("dc.json:3:13: two commas in a row (delete one)");
}

Test(untruths, elements_that_could_have_no_effect_are_refused)
{
	char p[128];
	/* the case: an sph block wholly outside its tank */
	write_file("block.json",
		   "{\"format\": \"tidepool-scene/1\", \"size\": [160, 100], \"frames\": 4, "
		   "\"solver\": \"sph\",\n"
		   " \"tank\": {\"size\": [60, 40], \"at\": [40, 30]},\n"
		   " \"blocks\": [{\"rect\": [100, 50, 40, 30]}]}\n",
		   p, sizeof p);
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", p), 3);
	ERR_HAS("block.json:3:22: blocks[0].rect: lies wholly outside the tank at t = 0 (x 10..70, "
		"y 10..50): it would make no particle");
	cr_assert_eq(run_tp(NULL, errpath, "render %s -o null", p), 3);
	ERR_HAS("blocks[0].rect: lies wholly outside the tank");
	/* a stream whose nozzle is outside the tank wherever it goes */
	write_file("stream.json",
		   "{\"format\": \"tidepool-scene/1\", \"size\": [160, 100], \"frames\": 4, "
		   "\"solver\": \"sph\",\n"
		   " \"tank\": {\"size\": [60, 40], \"at\": [40, 30]},\n"
		   " \"blocks\": [{\"rect\": [20, 20, 20, 20]}],\n"
		   " \"emitters\": [{\"type\": \"stream\", \"at\": [150, 90]}]}\n",
		   p, sizeof p);
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", p), 3);
	ERR_HAS("emitters[0].at: the nozzle [150, 90] is outside the tank");
	/* a box outside the pool all along its path; one passing through is fine */
	write_file("box.json",
		   "{\"format\": \"tidepool-scene/1\", \"size\": [96, 64], \"frames\": 4,\n"
		   " \"boxes\": [{\"size\": [10, 10], \"path\": [{\"t\": 0, \"at\": [-50, 20]}, "
		   "{\"t\": 1, \"at\": [-20, 40]}]}]}\n",
		   p, sizeof p);
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", p), 3);
	ERR_HAS("boxes[0]: lies wholly outside the pool at all times");
	write_file("box2.json",
		   "{\"format\": \"tidepool-scene/1\", \"size\": [96, 64], \"frames\": 4,\n"
		   " \"boxes\": [{\"size\": [10, 10], \"path\": [{\"t\": 0, \"at\": [-50, 20]}, "
		   "{\"t\": 1, \"at\": [150, 20]}]}]}\n",
		   p, sizeof p);
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", p), 0, "%s", slurp(errpath));
	/* every example scene still loads */
	cr_assert_eq(run_tp(NULL, errpath, "validate scenes/*.json scenes/textures/*.json"), 0,
		     "%s", slurp(errpath));
}

Test(untruths, compare_counts_add_up)
{
	cr_assert_eq(run_tp(NULL, NULL,
			    "render tests/data/tiny.json --frames 40 -o %s/%%03d.png -q", dir),
		     0);
	cr_assert_eq(
		run_tp(NULL, NULL, "render tests/data/tiny.json --frames 48 -o %s/v.mp4 -q", dir),
		0);
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/%%03d.png %s/v.mp4", dir, dir), 1);
	ERR_HAS("compare: 40 frames compared: 0 identical, 0 within tolerance, 40 failing; 8 "
		"missing");
	ERR_HAS("more frames failing or missing");
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/%%03d.png %s/v.mp4 --min-psnr 20", dir, dir),
		     1);
	ERR_HAS("40 frames compared: 0 identical, 40 within tolerance, 0 failing; 8 missing");
}

/* A PNG's height from its IHDR. */
static int png_height(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	uint8_t h[24];
	cr_assert_eq(fread(h, 1, 24, f), 24);
	fclose(f);
	return (h[20] << 24) | (h[21] << 16) | (h[22] << 8) | h[23];
}

Test(untruths, contact_sheet_labels_show_what_varies)
{
	vary vs[3] = {
		{"seed", 2, NULL}, {"maps.caustics.depth", 2, NULL}, {"render.tint", 1, NULL}};
	char s0[] = "seed=2", s1[] = "maps.caustics.depth=300", s2[] = "render.tint=\"#102030\"";
	char *sets[3] = {s0, s1, s2}, label[256];
	vary_label(vs, 3, sets, label, sizeof label);
	cr_assert_str_eq(label, "seed=2\ndepth=300"); /* the tint is the same in every cell */
	vary two[2] = {{"a.depth", 2, NULL}, {"b.depth", 3, NULL}};
	char t0[] = "a.depth=1", t1[] = "b.depth=\"x\"";
	char *tsets[2] = {t0, t1};
	vary_label(two, 2, tsets, label, sizeof label);
	cr_assert_str_eq(label, "a.depth=1\nb.depth=x"); /* the same last part: full keys */
	/* the sheet: two label lines under each box (192 pixels by default), 2 x 2 boxes */
	cr_assert_eq(run_tp(NULL, errpath,
			    "batch scenes/textures/caustics_loop.json --vary seed=1..2 --vary "
			    "maps.caustics.depth=200,300 -O %s/var --size 128x128 -q",
			    dir),
		     0, "%s", slurp(errpath));
	char p[128];
	snprintf(p, sizeof p, "%s/var/contact.png", dir);
	cr_assert_eq(png_height(p), 8 + 2 * (192 + 2 * 15 + 2 + 8));
}
