/* sph's limits (issue 28): allowed parameters that make the fluid blow up are reported,
 * with the parameter to change, instead of a silent collapse; a frame's substeps are
 * bounded (max_substeps) and Ctrl-C or SIGTERM stop a render within a second even inside
 * a long frame. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The three: each exits 4 with one line naming the parameter to change. */
Test(sph_limits, blow_ups_are_reported_with_the_parameter_to_change, .timeout = 240)
{
	const char *err = "/tmp/tp_sph_blowup.err";
	const struct {
		const char *sets, *want;
	} cases[] = {
		{"--set params.viscosity=1000 --set params.max_substeps=1",
		 "raise params.max_substeps to at least"},
		{"--set params.stiffness=1e10 --set params.cfl=2", "params."},
		{"--set params.gravity=1e6", "params."},
	};
	for (int i = 0; i < 3; i++) {
		int rc = run_tp(NULL, err, "render scenes/sph_box.json -q -y --frames 30 -o null %s",
				cases[i].sets);
		const char *e = slurp(err);
		cr_assert_eq(rc, 4, "%s: exit %d: %s", cases[i].sets, rc, e);
		cr_assert_not_null(strstr(e, "the sph solver blew up"), "%s", e);
		cr_assert_not_null(strstr(e, cases[i].want), "%s", e);
		cr_assert_eq(strchr(e, '\n'), e + strlen(e) - 1, "one line: %s", e);
	}
	/* the implicit model (issue 44): the same report, without the stiffness it has not */
	int rc = run_tp(NULL, err, "render scenes/sph_box.json -q -y --frames 30 -o null --set "
			"params.model=implicit --set params.viscosity=1000 --set params.max_substeps=1");
	const char *e = slurp(err);
	cr_assert_eq(rc, 4, "implicit: exit %d: %s", rc, e);
	cr_assert_not_null(strstr(e, "raise params.max_substeps to at least"), "%s", e);
	cr_assert_null(strstr(e, "stiffness"), "%s", e);
	cr_assert_eq(strchr(e, '\n'), e + strlen(e) - 1, "one line: %s", e);
	/* and the example at its own settings does not */
	cr_assert_eq(run_tp(NULL, err, "render scenes/sph_box.json -q -y --frames 30 -o null"), 0,
		     "%s", slurp(err));
	unlink(err);
}

/* A render whose frames take seconds (34000 particles at spacing 1.5, cfl 0.02: ~500
 * substeps a frame), sent SIGTERM (and, in a second run, SIGINT) 2.5 s in: it exits 130
 * within a second. */
Test(sph_limits, signals_stop_a_long_frame_within_a_second, .timeout = 120)
{
	const int sigs[] = {SIGTERM, SIGINT, SIGINT};
	for (int i = 0; i < 3; i++) { /* the third: the implicit model */
		pid_t pid = fork();
		if (pid == 0) {
			FILE *e = freopen("/dev/null", "w", stderr);
			(void)e;
			/* the implicit model takes cfl 0.05 at least: its long frames come from
			 * spacing 2 and the tightest tolerance with no cap on the sweeps */
			if (i == 2)
				execl(tp_bin(), "tidepool", "render", "scenes/sph_box.json", "-q",
				      "--frames", "200", "--threads", "1", "-o", "null", "--set",
				      "params.cfl=0.05", "--set", "params.max_substeps=100000",
				      "--set", "params.spacing=2", "--set",
				      "params.tolerance=0.0001", "--set",
				      "params.max_iterations=10000", "--set",
				      "params.model=implicit", (char *)NULL);
			else
				execl(tp_bin(), "tidepool", "render", "scenes/sph_box.json", "-q",
				      "--frames", "200", "--threads", "1", "-o", "null", "--set",
				      "params.cfl=0.02", "--set", "params.max_substeps=100000",
				      "--set", "params.spacing=1.5", "--set",
				      "params.model=relaxed", (char *)NULL);
			_exit(127);
		}
		usleep(2500 * 1000);
		const double t0 = now();
		cr_assert_eq(kill(pid, sigs[i]), 0);
		int st;
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		const double took = now() - t0;
		cr_assert(WIFEXITED(st));
		cr_assert_eq(WEXITSTATUS(st), 130);
		cr_assert_lt(took, 1.0, "signal %d: stopped %.2f s after it", sigs[i], took);
	}
}
