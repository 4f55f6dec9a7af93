/* One option parser for render, validate, cache, tasks and batch (src/cli/sceneopts.c):
 * the scene options are read, checked and worded the same by every command. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "tmpdir.h"

static char dir[64], errpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "opts");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(sceneopts, .init = setup, .fini = teardown);

/* Each command with what it needs besides the options under test. */
static const char *const commands[][2] = {
	{"render", "-o null"},
	{"validate", ""},
	{"cache", "-O %s/c --every 5"},
	{"tasks", "--chunk 5"},
	{"batch", "--vary seed=1..2 -O %s/b"},
};

static void each_command_says(const char *opts, int status, const char *want)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		char extra[256], args[1024];
		snprintf(extra, sizeof extra, commands[i][1], dir);
		snprintf(args, sizeof args, "%s scenes/pond.json %s %s", commands[i][0], extra, opts);
		cr_assert_eq(run_tp(NULL, errpath, "%s", args), status, "tidepool %s: %s", args,
			     slurp(errpath));
		char msg[512];
		snprintf(msg, sizeof msg, "tidepool: %s: %s", commands[i][0], want);
		cr_assert(strstr(slurp(errpath), msg), "tidepool %s:\n%s\nwanted: %s", args,
			  slurp(errpath), msg);
	}
}

Test(sceneopts, every_command_checks_the_scene_options_alike)
{
	each_command_says("--size 64by36", 2, "--size: expected WxH such as 640x360 (got '64by36')");
	each_command_says("--scale 100", 2, "--scale: expected a factor in 0..64");
	each_command_says("--frames 0", 2, "--frames: expected a whole number 1..1000000 (got '0')");
	each_command_says("--seed -1", 2, "--seed: expected a whole number >= 0 (got '-1')");
	each_command_says("--threads 2000", 2, "--threads: expected 0..1024 (got '2000')");
	each_command_says("--set", 2, "--set needs a value");
	each_command_says("--bogus", 2, "unknown option '--bogus'");
}

Test(sceneopts, render_only_options_are_refused_by_name)
{
	static const char *const cmds[][2] = {{"cache", "-O %s/c --every 5"},
					      {"batch", "--vary seed=1..2 -O %s/b"},
					      {"validate", ""}};
	for (size_t i = 0; i < 3; i++) {
		char extra[256];
		snprintf(extra, sizeof extra, cmds[i][1], dir);
		cr_assert_eq(run_tp(NULL, errpath, "%s scenes/pond.json %s --crf 20", cmds[i][0], extra),
			     2);
		cr_assert(strstr(slurp(errpath), "--crf is an option of 'tidepool render'"), "%s: %s",
			  cmds[i][0], slurp(errpath));
	}
	/* tasks cannot split a flipbook or choose its own range: it says why */
	cr_assert_eq(run_tp(NULL, errpath, "tasks scenes/pond.json --chunk 5 --flipbook 2x2"), 2);
	cr_assert(strstr(slurp(errpath), "cannot be rendered in chunks"), "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "tasks scenes/pond.json --chunk 5 --range 1-2"), 2);
	cr_assert(strstr(slurp(errpath), "tasks chooses the ranges itself"), "%s", slurp(errpath));
}

/* What tasks and batch pass on to the renders they print is what they were given. */
Test(sceneopts, tasks_and_batch_pass_the_scene_options_on_in_order)
{
	char out[128];
	snprintf(out, sizeof out, "%s/out", dir);
	cr_assert_eq(run_tp(out, errpath,
			    "tasks scenes/pond.json --chunk 100 --scale 0.25 --set seed=4 "
			    "--frames 120 --seed 9 --crf 30 -o %s/f.mp4",
			    dir),
		     0, "%s", slurp(errpath));
	cr_assert(strstr(slurp(out), "--scale 0.25 --set seed=4 --frames 120 --seed 9"), "%s",
		  slurp(out));
	cr_assert(strstr(slurp(out), "--crf 30"), "%s", slurp(out));
	cr_assert_eq(run_tp(out, errpath,
			    "batch scenes/pond.json --vary params.damping=4,5 -O %s/b --tasks "
			    "--scale 0.25 --seed 7 --set render.refraction=2",
			    dir),
		     0, "%s", slurp(errpath));
	cr_assert(strstr(slurp(out), "--scale 0.25 --seed 7 --set render.refraction=2 --set "
				     "params.damping=4"),
		  "%s", slurp(out));
	/* a fixed seed would overwrite a varied one: refused */
	cr_assert_eq(run_tp(NULL, errpath, "batch scenes/pond.json --vary seed=1..2 -O %s/b --seed 3",
			    dir),
		     2, "%s", slurp(errpath));
	cr_assert(strstr(slurp(errpath), "--seed would replace"), "%s", slurp(errpath));
}
