/* The documentation runs: every ```sh block of README.md, scenes/README.md and docs/ (*.md)
 * through tests/doctest.sh (which describes the convention), every example scene under
 * `tidepool validate`, and the harness itself is shown to catch a broken block.
 * No Criterion .timeout here: doctest.sh bounds every block with timeout(1), and each
 * pending Criterion timeout that is still registered when the runner exits is reported
 * as a 48-byte leak by LeakSanitizer (libcriterion's timeout-posix.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

/* Runs the doc tests over `files` (a shell word list, globs allowed); returns the exit
 * status and leaves the report in `log`. */
static int doctest(const char *files, char *log, size_t n)
{
	char out[] = "/tmp/tp-doclog-XXXXXX";
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "sh tests/doctest.sh %s %s >%s 2>&1", tp_bin(), files, out);
	int st = system(cmd);
	cr_assert(WIFEXITED(st), "%s", cmd);
	FILE *f = fopen(out, "r");
	size_t k = f ? fread(log, 1, n - 1, f) : 0;
	log[k] = 0;
	if (f)
		fclose(f);
	unlink(out);
	return WEXITSTATUS(st);
}

static char logbuf[1 << 16];

Test(docs, readme_commands_run_as_written)
{
	cr_expect_eq(doctest("README.md", logbuf, sizeof logbuf), 0, "%s", logbuf);
	cr_expect(strstr(logbuf, "doctest: ") && !strstr(logbuf, "doctest: 0 blocks"), "%s",
		  logbuf);
}

Test(docs, scene_reference_commands_run_as_written)
{
	cr_expect_eq(doctest("scenes/README.md", logbuf, sizeof logbuf), 0, "%s", logbuf);
}

Test(docs, docs_dir_commands_run_as_written)
{
	cr_expect_eq(doctest("docs/*.md", logbuf, sizeof logbuf), 0, "%s", logbuf);
	cr_expect(!strstr(logbuf, "doctest: 0 blocks"), "%s", logbuf);
}

static void write_md(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

/* The harness itself: a failing block fails and is named by its line, "# exit N" and
 * norun are honoured, blocks share their directory, and bash fences are refused. */
Test(docs, harness_reports_a_broken_block_by_line)
{
	char md[] = "/tmp/tp-docmd-XXXXXX.md";
	int fd = mkstemps(md, 3);
	cr_assert_geq(fd, 0);
	close(fd);
	char files[256];
	snprintf(files, sizeof files, "%s", md);

	write_md(md, "# ok\n\n```sh\ntidepool validate scenes/pond.json > ok.txt\n```\n\n"
		     "```sh\ngrep -q ok ok.txt\ntidepool validate nothing.json   # exit 4\n```\n\n"
		     "```sh norun\nssh host false\n```\n\n```text\nnot run\n```\n");
	cr_expect_eq(doctest(files, logbuf, sizeof logbuf), 0, "%s", logbuf);
	cr_expect(strstr(logbuf, "doctest: 2 blocks"), "%s", logbuf);

	write_md(md, "# broken\n\ntext\n\n```sh\ntidepool validate scenes/pond.json\n"
		     "tidepool render scenes/pond.json --frames 0 -o null\ntrue\n```\n");
	cr_expect_eq(doctest(files, logbuf, sizeof logbuf), 1);
	char want[300];
	snprintf(want, sizeof want, "%s:5: the block exited with status 2, expected 0", md);
	cr_expect(strstr(logbuf, want), "%s", logbuf);
	cr_expect(strstr(logbuf, "--frames"), "the block's output is shown: %s", logbuf);

	write_md(md, "```sh\ntidepool validate scenes/pond.json   # exit 3\n```\n");
	cr_expect_eq(doctest(files, logbuf, sizeof logbuf), 1, "%s", logbuf);

	write_md(md, "```bash\ntrue\n```\n");
	cr_expect_eq(doctest(files, logbuf, sizeof logbuf), 1, "%s", logbuf);
	cr_expect(strstr(logbuf, "write ```sh"), "%s", logbuf);
	unlink(md);
}

Test(docs, every_example_scene_validates)
{
	char out[] = "/tmp/tp-val-XXXXXX";
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	int rc = run_tp(out, out, "validate scenes/*.json scenes/textures/*.json");
	const char *log = slurp(out);
	cr_expect_eq(rc, 0, "%s", log);
	/* one "ok" line per scene file */
	FILE *p = popen("ls scenes/*.json scenes/textures/*.json | wc -l", "r");
	int nfiles = 0;
	cr_assert(p && fscanf(p, "%d", &nfiles) == 1);
	pclose(p);
	int oks = 0;
	for (const char *s = log; (s = strstr(s, ": ok (")); s++)
		oks++;
	cr_expect_eq(oks, nfiles, "%s", log);
	cr_expect_geq(nfiles, 13);
	unlink(out);
}
