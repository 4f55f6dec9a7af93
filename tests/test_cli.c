/* End to end: the tidepool binary on a tiny scene. */
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "util/png.h"

static char dir[64];
static char errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "cli");
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
	snprintf(outpath, sizeof outpath, "%s/stdout", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(cli, .init = setup, .fini = teardown, .timeout = 60);

Test(cli, help_and_version_go_to_stdout_with_status_0)
{
	cr_assert_eq(run_tp(outpath, errpath, "--help"), 0);
	cr_assert(strstr(slurp(outpath), "usage: tidepool COMMAND") != NULL);
	cr_assert_eq(run_tp(outpath, errpath, "--version"), 0);
	cr_assert(strncmp(slurp(outpath), "tidepool ", 9) == 0);
	const char *cmds[] = { "render", "validate", "solvers" };
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(run_tp(outpath, errpath, "%s --help", cmds[i]), 0, "%s --help", cmds[i]);
		cr_assert(strstr(slurp(outpath), "usage: tidepool") != NULL);
	}
}

Test(cli, usage_errors_exit_2_with_one_line)
{
	cr_assert_eq(run_tp(NULL, errpath, "frobnicate"), 2);
	cr_assert_str_eq(slurp(errpath), "tidepool: unknown command 'frobnicate' (see 'tidepool --help')\n");
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json --frames zero -o null"), 2);
	cr_assert(strstr(slurp(errpath), "--frames: expected a whole number") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json --bogus"), 2);
	cr_assert_eq(run_tp(NULL, errpath, "render"), 2);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -o %s/x.gif", dir), 2);
	cr_assert(strstr(slurp(errpath), "unknown output type") != NULL, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -o %s/one.png", dir), 2);
	cr_assert(strstr(slurp(errpath), "need a pattern with %d") != NULL, "%s", slurp(errpath));
}

Test(cli, solvers_lists_every_parameter_with_default_and_range)
{
	cr_assert_eq(run_tp(outpath, errpath, "solvers"), 0);
	const char *o = slurp(outpath);
	cr_assert(strstr(o, "ripple - ") != NULL, "%s", o);
	cr_assert(strstr(o, "hooke - ") != NULL, "%s", o);
	cr_assert(strstr(o, "damping") != NULL && strstr(o, "default") && strstr(o, "range"), "%s", o);
}

Test(cli, validate_accepts_the_tiny_scene)
{
	cr_assert_eq(run_tp(outpath, errpath, "validate tests/data/tiny.json"), 0, "%s", slurp(errpath));
	cr_assert(strstr(slurp(outpath), "tests/data/tiny.json: ok (ripple, 96x64, 6 frames") != NULL,
		  "%s", slurp(outpath));
}

Test(cli, renders_png_frames_that_decode_and_stats_lines)
{
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o %s/f/%%03d.png --stats %s/s.jsonl",
			    dir, dir), 0, "%s", slurp(errpath));
	cr_assert_str_eq(slurp(errpath), "", "quiet means quiet");
	for (int k = 0; k < 6; k++) {
		char p[256];
		snprintf(p, sizeof p, "%s/f/%03d.png", dir, k);
		tp_image img;
		tp_err err;
		cr_assert_eq(tp_png_read(p, TP_RGB8, &img, &err), 0, "%s", err.msg);
		cr_assert_eq(img.w, 96);
		cr_assert_eq(img.h, 64);
		tp_image_free(&img);
	}
	char p[256];
	snprintf(p, sizeof p, "%s/f/006.png", dir);
	cr_assert(access(p, F_OK) != 0, "exactly 6 frames");
	snprintf(p, sizeof p, "%s/s.jsonl", dir);
	const char *s = slurp(p);
	int lines = 0;
	for (const char *c = s; *c; c++)
		lines += *c == '\n';
	cr_assert_eq(lines, 6, "%s", s);
	cr_assert(strncmp(s, "{\"frame\":0,\"t\":0,", 17) == 0, "%s", s);
	cr_assert(strstr(s, "\"frame\":5,\"t\":0.166666667") != NULL, "%s", s);
}

Test(cli, frames_are_identical_across_runs_and_thread_counts)
{
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q --threads 1 -o %s/a/%%02d.png", dir), 0,
		     "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q --threads 2 -o %s/b/%%02d.png", dir), 0);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q --threads 2 -o %s/c/%%02d.png", dir), 0);
	for (int k = 0; k < 6; k++) {
		char a[256], b[256], c[256];
		snprintf(a, sizeof a, "%s/a/%02d.png", dir, k);
		snprintf(b, sizeof b, "%s/b/%02d.png", dir, k);
		snprintf(c, sizeof c, "%s/c/%02d.png", dir, k);
		cr_assert(files_equal(a, b), "frame %d differs between 1 and 2 threads", k);
		cr_assert(files_equal(b, c), "frame %d differs between runs", k);
	}
	/* The seed matters: rain lands elsewhere with another seed. */
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q --seed 4 -o %s/d/%%02d.png", dir), 0);
	char a[256], d[256];
	snprintf(a, sizeof a, "%s/a/05.png", dir);
	snprintf(d, sizeof d, "%s/d/05.png", dir);
	cr_assert(!files_equal(a, d));
}

Test(cli, existing_outputs_are_kept_without_y)
{
	char p[256];
	snprintf(p, sizeof p, "%s/keep/0.png", dir);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q --frames 1 -o %s/keep/%%d.png", dir), 0);
	FILE *f = fopen(p, "wb");
	fputs("precious", f);
	fclose(f);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q --frames 1 -o %s/keep/%%d.png", dir), 4);
	cr_assert(strstr(slurp(errpath), "already exists (use -y to overwrite)") != NULL, "%s", slurp(errpath));
	cr_assert_str_eq(slurp(p), "precious");
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -y --frames 1 -o %s/keep/%%d.png", dir), 0);
	tp_image img;
	tp_err err;
	cr_assert_eq(tp_png_read(p, TP_RGB8, &img, &err), 0);
	tp_image_free(&img);
}

Test(cli, unwritable_output_directory_fails_before_simulating)
{
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o /proc/tp/%%d.png"), 4);
	const char *e = slurp(errpath);
	cr_assert(strncmp(e, "tidepool: ", 10) == 0 && strchr(e, '\n') == e + strlen(e) - 1, "one line: %s", e);
}

Test(cli, sigint_stops_cleanly_with_130_and_whole_frames)
{
	/* A long render to PNG, interrupted: exit 130, every frame on disk decodes, no
	 * temporaries are left. */
	char pattern[256];
	snprintf(pattern, sizeof pattern, "%s/i/%%06d.png", dir);
	pid_t pid = fork();
	if (pid == 0) {
		FILE *e = freopen(errpath, "w", stderr);
		(void)e;
		execl(tp_bin(), "tidepool", "render", "tests/data/tiny.json", "-q", "--size", "384x256",
		      "--frames", "100000", "-o", pattern, (char *)NULL);
		_exit(127);
	}
	usleep(1500 * 1000);
	cr_assert_eq(kill(pid, SIGINT), 0);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 130, "stderr: %s", slurp(errpath));
	char check[512];
	snprintf(check, sizeof check, "test -z \"$(ls -A %s/i | grep -v '^[0-9]*\\.png$')\" && test -n \"$(ls %s/i)\"", dir, dir);
	cr_assert_eq(system(check), 0, "only whole frames are left");
	snprintf(check, sizeof check, "%s/i/000000.png", dir);
	tp_image img;
	tp_err err;
	cr_assert_eq(tp_png_read(check, TP_RGB8, &img, &err), 0, "%s", err.msg);
	tp_image_free(&img);
}

Test(cli, devices_are_written_directly_or_refused_never_replaced)
{
	struct stat st;
	/* Stats into a device: written straight to it, so a full device is a write error. */
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -o null --stats /dev/full"), 4);
	cr_assert(strstr(slurp(errpath), "/dev/full: write error") != NULL, "%s", slurp(errpath));
	cr_assert_eq(stat("/dev/full", &st), 0);
	cr_assert(S_ISCHR(st.st_mode), "/dev/full must still be a device");
	/* Reports go straight into a device... */
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -y -o null --hash /dev/null"), 0,
		     "%s", slurp(errpath));
	cr_assert_eq(stat("/dev/null", &st), 0);
	cr_assert(S_ISCHR(st.st_mode), "/dev/null must still be a device");
	/* ...but outputs written under a temporary name never replace a device or a FIFO,
	 * even with -y. */
	char fifo[256];
	snprintf(fifo, sizeof fifo, "%s/fifo.png", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -y --frames 1 -o %s", fifo), 4);
	cr_assert(strstr(slurp(errpath), "fifo.png: not a regular file") != NULL, "%s", slurp(errpath));
	cr_assert_eq(stat(fifo, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode), "the FIFO must still be a FIFO");
}

/* --stats and --hash write to the standard streams whatever they are: a redirected file
 * (appended to where the shell left it, not truncated or replaced), a pipe, stderr. */
Test(cli, stats_and_hash_go_to_stdout_stderr_pipes_and_redirected_files)
{
	char out[256], cmd[1024];
	snprintf(out, sizeof out, "%s/redirected.txt", dir);
	snprintf(cmd, sizeof cmd, "{ echo before; %s render tests/data/tiny.json -q -o null --frames 3 --stats /dev/stdout; echo after; } >%s 2>%s",
		 tp_bin(), out, errpath);
	cr_assert_eq(system(cmd), 0, "%s", slurp(errpath));
	const char *s = slurp(out);
	cr_assert(!strncmp(s, "before\n{\"frame\":0,", strlen("before\n{\"frame\":0,")), "%s", s);
	cr_assert(strstr(s, "{\"frame\":2,") && strstr(s, "}\nafter\n"), "%s", s);

	snprintf(cmd, sizeof cmd, "%s render tests/data/tiny.json -q -o null --frames 3 --stats /dev/stderr 2>%s",
		 tp_bin(), out);
	cr_assert_eq(system(cmd), 0);
	cr_assert(strstr(slurp(out), "{\"frame\":2,") != NULL, "%s", slurp(out));

	snprintf(cmd, sizeof cmd, "%s render tests/data/tiny.json -q -o null --frames 3 --stats /dev/stdout | grep -c frame >%s",
		 tp_bin(), out);
	cr_assert_eq(system(cmd), 0);
	cr_assert_str_eq(slurp(out), "3\n");

	snprintf(cmd, sizeof cmd, "%s render tests/data/tiny.json -q -o null --frames 3 --hash /dev/stdout >%s", tp_bin(), out);
	cr_assert_eq(system(cmd), 0);
	cr_assert(!strncmp(slurp(out), "tidepool-frame-hashes 1\n", 24), "%s", slurp(out));

	/* A link to a file: the file is replaced, the link kept. */
	char target[256], link[256];
	snprintf(target, sizeof target, "%s/target.jsonl", dir);
	snprintf(link, sizeof link, "%s/link.jsonl", dir);
	FILE *f = fopen(target, "w");
	fputs("old\n", f);
	fclose(f);
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(run_tp(NULL, errpath, "render tests/data/tiny.json -q -y -o null --frames 2 --stats %s", link), 0,
		     "%s", slurp(errpath));
	struct stat st;
	cr_assert_eq(lstat(link, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert(!strncmp(slurp(target), "{\"frame\":0,", 10), "%s", slurp(target));
}

/* --stats lines end with the pose of every box in scene order, centre in scene units
 * and angle in degrees, for every solver, at any render size. */
Test(cli, stats_lines_carry_every_box_pose_in_scene_units)
{
	static const char *const solvers[] = { "ripple", "hooke", "shallow", "sph" };
	for (int k = 0; k < 4; k++) {
		char scene[256], line[2][512];
		snprintf(scene, sizeof scene, "%s/b_%s.json", dir, solvers[k]);
		FILE *f = fopen(scene, "w");
		cr_assert_not_null(f);
		fprintf(f, "{ \"format\": \"tidepool-scene/1\", \"size\": [160, 90], \"fps\": 10, \"frames\": 11, "
			   "\"solver\": \"%s\", \"boxes\": [ { \"size\": [10, 6], \"path\": [ { \"t\": 0, "
			   "\"at\": [40, 30] }, { \"t\": 1, \"at\": [50, 35], \"angle\": 30 } ] }, "
			   "{ \"size\": [8, 8], \"at\": [120, 60], \"angle\": -15 } ] }\n",
			solvers[k]);
		fclose(f);
		for (int size = 0; size < 2; size++) {
			char stats[256];
			snprintf(stats, sizeof stats, "%s/s_%s_%d.jsonl", dir, solvers[k], size);
			cr_assert_eq(run_tp(NULL, errpath, "render %s -q -o null --stats %s %s", scene, stats,
					    size ? "--size 320x180" : ""),
				     0, "%s", slurp(errpath));
			const char *s = slurp(stats);
			const char *last = s, *c;
			for (c = s; c[0] && c[1]; c++)
				if (c[0] == '\n')
					last = c + 1;
			snprintf(line[size], sizeof line[size], "%s", strstr(last, ",\"boxes\":"));
			cr_assert(strstr(s, "{\"frame\":0,") == s, "%s", s);
		}
		/* frame 10 is at t = 1: the end of the first box's path */
		cr_assert_str_eq(line[0], ",\"boxes\":[{\"x\":50,\"y\":35,\"angle\":30},"
					  "{\"x\":120,\"y\":60,\"angle\":-15}]}\n",
				 "%s", solvers[k]);
		cr_assert_str_eq(line[1], line[0], "%s at twice the size", solvers[k]);
	}
}

/* validate refuses what the solver would ignore, as render does: one line, status 3. */
Test(cli, validate_refuses_fields_the_solver_would_ignore)
{
	char scene[256];
	snprintf(scene, sizeof scene, "%s/float.json", dir);
	FILE *f = fopen(scene, "w");
	cr_assert_not_null(f);
	fputs("{ \"format\": \"tidepool-scene/1\", \"solver\": \"hooke\",\n"
	      "  \"boxes\": [ { \"size\": [10, 6], \"at\": [40, 30], \"float\": true } ] }\n", f);
	fclose(f);
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(run_tp(outpath, errpath, k ? "render %s -o null" : "validate %s", scene), 3);
		char want[512];
		snprintf(want, sizeof want, "tidepool: %s:2:58: boxes[0].float: the hooke solver has no floating "
			 "boxes (use shallow or sph; got true)\n", scene);
		cr_assert_str_eq(slurp(errpath), want);
	}
}
