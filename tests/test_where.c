/* Errors found after loading (solver init, renderer, loop) point at the member at fault,
 * FILE:LINE:COL, and say when the value came from the command line; validate takes the
 * scene options of render. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "scene/scene.h"
#include "solvers/solver.h"

static char dir[64], errpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "where");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(where, .init = setup, .fini = teardown);

static const char *put(const char *name, const char *text)
{
	static char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* Runs `tidepool validate FILE ARGS`; checks the status and that stderr is exactly
 * "tidepool: FILE:" + want + "\n". */
static void validate_fails(const char *file, const char *args, int status, const char *want)
{
	cr_assert_eq(run_tp(NULL, errpath, "validate %s %s", file, args), status, "%s",
		     slurp(errpath));
	char full[1024];
	snprintf(full, sizeof full, "tidepool: %s:%s\n", file, want);
	cr_assert_str_eq(slurp(errpath), full);
}

static const char shallow_box[] = "{\n"
				  "  \"format\": \"tidepool-scene/1\",\n"
				  "  \"solver\": \"shallow\",\n"
				  "  \"params\": { \"rate\": 0.3 },\n"
				  "  \"boxes\": [ { \"size\": [20, 20], \"height\": 2,\n"
				  "      \"path\": [ { \"t\": 0, \"at\": [100, 100] }, { \"t\": "
				  "0.1, \"at\": [600, 100] } ] } ]\n"
				  "}\n";

Test(where, shallow_box_speed_points_at_the_keyframe)
{
	const char *p = put("box.json", shallow_box);
	validate_fails(p, "", 3,
		       "6:47: boxes[0].path[1]: moves at 5000 px/s between t = 0 and 0.1 s, not "
		       "slower than the "
		       "waves (108.6 px/s): the water it pushes would pile up in front of it without "
		       "bound; slow "
		       "it down or raise params.speed");
}

Test(where, shallow_stability_points_at_the_parameter_and_names_set)
{
	const char *p = put("box.json", shallow_box);
	cr_assert_eq(run_tp(NULL, errpath, "validate %s --set params.rate=0.6", p), 3);
	char want[256];
	snprintf(want, sizeof want,
		 "tidepool: %s:4:23: params.rate (from --set): 0.6 would blow up because", p);
	cr_assert(!strncmp(slurp(errpath), want, strlen(want)), "%s", slurp(errpath));
	/* The same value written in the file: no "(from --set)". */
	char text[sizeof shallow_box + 8];
	snprintf(text, sizeof text, "%s", shallow_box);
	memcpy(strstr(text, "0.3"), "0.6", 3);
	p = put("box6.json", text);
	cr_assert_eq(run_tp(NULL, errpath, "validate %s", p), 3);
	snprintf(want, sizeof want, "tidepool: %s:4:23: params.rate: 0.6 would blow up because", p);
	cr_assert(!strncmp(slurp(errpath), want, strlen(want)), "%s", slurp(errpath));
}

Test(where, sph_seed_model_floating_box_points_at_the_box)
{
	const char *p = put("seedbox.json",
			    "{ \"format\": \"tidepool-scene/1\", \"solver\": \"sph\",\n"
			    "  \"params\": { \"model\": \"seed\" },\n"
			    "  \"blocks\": [ { \"rect\": [0, 200, 640, 160] } ],\n"
			    "  \"boxes\": [ { \"size\": [40, 20], \"float\": true, \"at\": [320, 100] } ] }\n");
	validate_fails(p, "", 3,
		       "4:43: boxes[0].float: the sph solver's \"seed\" model has no floating boxes "
		       "(use params.model \"relaxed\", the default, or \"implicit\")");
	validate_fails(p, "--set params.model=relaxed --set params.model=seed", 3,
		       "4:43: boxes[0].float: the sph solver's \"seed\" model has no floating boxes "
		       "(use params.model \"relaxed\", the default, or \"implicit\")");
}

Test(where, size_from_the_command_line_is_named)
{
	const char *p = put("pond.json",
			    "{\n  \"format\": \"tidepool-scene/1\",\n  \"size\": [64, 64]\n}\n");
	validate_fails(
		p, "--size 3x3", 3,
		"3:11: size (from --size): the ripple solver needs at least 5x5 cells (got 3x3)");
	/* Without "size" in the file, the scene as a whole; --scale names itself. */
	p = put("bare.json", "{ \"format\": \"tidepool-scene/1\" }\n");
	validate_fails(
		p, "--scale 0.005", 3,
		"1:1: size (from --scale): the ripple solver needs at least 5x5 cells (got 3x2)");
	/* Another shape than the scene's: refused by validate as by render. */
	validate_fails(p, "--size 3x3", 2,
		       " --size: 3x3 has another shape than the scene's 640x360 (its \"size\", the "
		       "frame of reference), which would stretch it; use 3x2 or 5x3, or change the "
		       "scene's \"size\"");
	/* render says the same as validate, for every such option */
	static const char *const opts[] = { "--size 3x3", "--scale 0.005", "--size 4x4" };
	for (int i = 0; i < 3; i++) {
		static char v[1 << 16], r[1 << 16];
		run_tp(NULL, errpath, "validate %s %s", p, opts[i]);
		snprintf(v, sizeof v, "%s", slurp(errpath));
		run_tp(NULL, errpath, "render %s %s -o null -q", p, opts[i]);
		snprintf(r, sizeof r, "%s", slurp(errpath));
		cr_assert_str_eq(r, v, "%s", opts[i]);
	}
}

Test(where, render_mode_of_an_output_is_pointed_at)
{
	const char *p =
		put("modes.json",
		    "{ \"format\": \"tidepool-scene/1\", \"solver\": \"sph\",\n"
		    "  \"outputs\": [ { \"mode\": \"color\", \"path\": \"a.mp4\" },\n"
		    "               { \"mode\": \"height\", \"path\": \"b/%04d.png\" } ] }\n");
	validate_fails(p, "", 3,
		       "3:26: outputs[1].mode: the sph solver cannot render mode \"height\" (use "
		       "ripple, hooke, shallow or airy; got \"height\")");
}

Test(where, loop_with_particles_points_at_loop)
{
	const char *p =
		put("loop.json", "{ \"format\": \"tidepool-scene/1\", \"solver\": \"sph\",\n"
				 "  \"loop\": { \"duration\": 1 } }\n");
	validate_fails(p, "", 3,
		       "2:11: loop: the sph solver cannot loop (a loop cross-fades height fields) "
		       "(use ripple, hooke, shallow or airy; got an object)");
}

/* validate shares render's option parser: the same overrides, the same refusals. */
Test(where, validate_takes_the_scene_options_of_render)
{
	cr_assert_eq(run_tp(errpath, NULL,
			    "validate scenes/rain.json --size 320x180 --frames 7 --seed 3 "
			    "--set params.height_damping=6 --threads 1 -o out/x.mp4"),
		     0);
	cr_assert(strstr(slurp(errpath), "scenes/rain.json: ok (hooke, 320x180, 7 frames at 30 "
					 "fps, output out/x.mp4)"),
		  "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "validate scenes/pond.json --size 1x5"), 2);
	cr_assert(strstr(slurp(errpath), "--size"), "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "validate scenes/pond.json --crf 20"), 2);
	cr_assert(strstr(slurp(errpath), "--crf is an option of 'tidepool render'"), "%s",
		  slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "validate scenes/sph_box.json -o height=x/%%04d.png"),
		     3);
	cr_assert(strstr(slurp(errpath), "render mode \"height\" is not available"), "%s",
		  slurp(errpath));
	/* and render's messages name the override too */
	cr_assert_eq(
		run_tp(NULL, errpath, "render scenes/pond.json -q -o null --set params.damping=40"),
		3);
	cr_assert(strstr(slurp(errpath), "scenes/pond.json:8:26: params.damping (from --set): must "
					 "be in 1..30 (got 40)"),
		  "%s", slurp(errpath));
}

/* The function solvers call, on its own: a member that is not written points at its
 * nearest written ancestor. */
Test(where, scene_errf_falls_back_to_the_nearest_written_member)
{
	const char *p = put(
		"s.json",
		"{ \"format\": \"tidepool-scene/1\",\n  \"params\": {\n    \"damping\": 4 } }\n");
	scene *sc = NULL;
	tp_err err;
	cr_assert_eq(scene_load(p, NULL, tp_solvers, &sc, &err), 0, "%s", err.msg);
	char want[300];
	cr_assert_eq(scene_errf(sc, &err, TP_EINPUT, "params.damping", "bad %d", 1), TP_EINPUT);
	snprintf(want, sizeof want, "%s:3:16: params.damping: bad 1", p);
	cr_assert_str_eq(err.msg, want);
	scene_errf(sc, &err, TP_EINPUT, "params.unit", "bad");
	snprintf(want, sizeof want, "%s:2:13: params.unit: bad", p);
	cr_assert_str_eq(err.msg, want);
	scene_errf(sc, &err, TP_EINPUT, "boxes[3].path", "bad");
	snprintf(want, sizeof want, "%s:1:1: boxes[3].path: bad", p);
	cr_assert_str_eq(err.msg, want);
	cr_assert(scene_has(sc, "params.damping"));
	cr_assert(!scene_has(sc, "params.unit"));
	scene_destroy(sc);
}
