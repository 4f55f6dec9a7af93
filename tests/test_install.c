/* What ships: the manual page covers every command, option, exit status and environment
 * variable; `make install` puts the program, manual, documents, example scenes, schema and
 * bash completion under PREFIX; the completion completes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"

static char dir[64];
static char logbuf[1 << 16];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "install");
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(install, .init = setup, .fini = teardown);

/* Runs a shell command, output into logbuf; returns its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t k = fread(logbuf, 1, sizeof logbuf - 1, p);
	logbuf[k] = 0;
	int st = pclose(p);
	cr_assert(WIFEXITED(st), "%s", cmd);
	return WEXITSTATUS(st);
}

static const char *build_dir(void)
{
	const char *b = getenv("TP_BUILD");
	return b ? b : "build";
}

Test(install, man_page_documents_every_command_and_option)
{
	cr_assert_eq(
		sh("/usr/bin/python3 tests/man_check.py %s docs/tidepool.1.scd src 2>&1", tp_bin()),
		0, "%s", logbuf);
	cr_assert(strstr(logbuf, " 0 omissions"), "%s", logbuf);
	/* An option the page leaves out is found, by command. */
	cr_assert_eq(sh("sed 's/^\\*--thumb\\* _W_$/thumb W/' docs/tidepool.1.scd > %s/m.scd && "
			"/usr/bin/python3 tests/man_check.py %s %s/m.scd src 2>&1",
			dir, tp_bin(), dir),
		     1, "%s", logbuf);
	cr_assert(strstr(logbuf, "tidepool batch --thumb: not in the manual page's section"), "%s",
		  logbuf);
}

/* The page as `man -l` prints it (no line wrapping) against its source for every
 * underscore: none of the source's lost, none printed that was meant as markup. */
static int man_underscores(const char *sed)
{
	return sh("sed '%s' docs/tidepool.1.scd > %s/m.scd && scdoc < %s/m.scd > %s/m.1 && "
		  "MANWIDTH=1000 man -l %s/m.1 2>/dev/null | col -b > %s/m.txt && "
		  "/usr/bin/python3 tests/man_underscores.py %s/m.scd %s/m.txt . 2>&1",
		  sed, dir, dir, dir, dir, dir, dir, dir);
}

Test(install, man_page_prints_every_underscore_as_written)
{
	cr_assert_eq(man_underscores(""), 0, "%s", logbuf);
	/* The page's old spellings are found: a path's underscore taken for markup (it
	 * printed out/disp%04d.exr_) and markup printed (W_x_H, 2_N_). */
	cr_assert_eq(man_underscores("s#_out/disp\\\\_%04d#_out/disp_%04d#; s#_WxH_#_W_x_H_#; "
				     "s#_2N_#2_N_#"),
		     1, "%s", logbuf);
	cr_assert(strstr(logbuf, "dropped underscore: ") && strstr(logbuf, "_out/disp_%04d.exr_"),
		  "%s", logbuf);
	cr_assert(strstr(logbuf, "stray underscore: 'W_x_H'"), "%s", logbuf);
	cr_assert(strstr(logbuf, "stray underscore: '2_N_'"), "%s", logbuf);
	cr_assert(strstr(logbuf, "stray underscore: 'out/disp%04d.exr_'"), "%s", logbuf);
}

Test(install, man_page_is_built_from_its_source)
{
	cr_assert_eq(sh("SOURCE_DATE_EPOCH=$(sh scripts/man-date.sh) scdoc < docs/tidepool.1.scd | "
			"cmp - %s/tidepool.1 2>&1",
			build_dir()),
		     0,
		     "build/tidepool.1 is stale or missing: %s", logbuf);
	cr_assert_eq(sh("head -c 2000 %s/tidepool.1", build_dir()), 0);
	cr_assert(strstr(logbuf, ".TH \"tidepool\" \"1\""), "%s", logbuf);
}

Test(install, make_install_ships_the_manual_scenes_schema_and_completion)
{
	/* The default PREFIX, so that nothing is rebuilt: the built binary is installed. */
	cr_assert_eq(sh("make -s install BUILD=%s DESTDIR=%s/root 2>&1", build_dir(), dir), 0, "%s",
		     logbuf);
	const char *files[] = {
		"bin/tidepool",
		"share/man/man1/tidepool.1",
		"share/doc/tidepool/README.md",
		"share/doc/tidepool/scenes/README.md",
		"share/doc/tidepool/docs/textures.md",
		"share/tidepool/scenes/pond.json",
		"share/tidepool/scenes/textures/caustics_loop.json",
		"share/tidepool/scenes/schema/tidepool-scene-1.schema.json",
		"share/tidepool/tidepool-scene-1.schema.json",
		"share/bash-completion/completions/tidepool",
	};
	char p[512];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/root/usr/local/%s", dir, files[i]);
		cr_expect_eq(access(p, R_OK), 0, "not installed: %s", files[i]);
	}
	cr_assert_eq(sh("cd %s/root/usr/local/share/tidepool/scenes && ls *.json textures/*.json | "
			"wc -l",
			dir),
		     0);
	int installed = atoi(logbuf);
	cr_assert_eq(sh("ls scenes/*.json scenes/textures/*.json | wc -l"), 0);
	cr_expect_eq(installed, atoi(logbuf), "%d scenes installed, %d in scenes/", installed,
		     atoi(logbuf));
	cr_expect_geq(installed, 13);
	/* --help names what was installed, where it is installed. */
	cr_assert_eq(sh("%s/root/usr/local/bin/tidepool --help", dir), 0);
	cr_assert(strstr(logbuf, "man tidepool"), "%s", logbuf);
	cr_assert(strstr(logbuf, "/usr/local/share/doc/tidepool/scenes/README.md"), "%s", logbuf);
	cr_assert(strstr(logbuf, "/usr/local/share/tidepool/scenes/"), "%s", logbuf);
	/* The installed scenes validate with the installed program, and their "$schema"
	 * resolves beside them. */
	cr_assert_eq(sh("cd %s/root/usr/local/share/tidepool/scenes && ../../../bin/tidepool "
			"validate -q *.json "
			"textures/*.json 2>&1 && test -f \"$(sed -n 's/.*\"\\$schema\": "
			"*\"\\([^\"]*\\)\".*/\\1/p' pond.json)\"",
			dir),
		     0, "%s", logbuf);
	/* docs/api.md's example against the installed library, built as that page says, in a
	 * prefix the loader does not search ($DESTDIR/usr/local/lib; --define-prefix reads the
	 * staged tidepool.pc as if PREFIX were there): without an rpath it cannot start; with
	 * the rpath pkg-config gives, or with LD_LIBRARY_PATH, it runs. */
	const char *pc =
		"PKG_CONFIG_PATH=%s/root/usr/local/lib/pkgconfig pkg-config --define-prefix";
	char pcd[512], cc[2048];
	snprintf(pcd, sizeof pcd, pc, dir);
	snprintf(cc, sizeof cc,
		 "awk '/^```c$/{on=1;next} /^```$/{on=0} on' docs/api.md > %s/example.c && "
		 "cc -std=c11 -Wall -Werror %s %s/example.c $(%s --cflags --libs tidepool)",
		 dir, getenv("TP_CLIENT_FLAGS") ? getenv("TP_CLIENT_FLAGS") : "", dir, pcd);
	cr_assert_eq(sh("%s -o %s/example-plain 2>&1 && env -u LD_LIBRARY_PATH "
			"%s/example-plain scenes/pond.json 2>&1",
			cc, dir, dir),
		     127, "%s", logbuf);
	cr_assert(strstr(logbuf, "libtidepool.so.0: cannot open shared object file"), "%s", logbuf);
	cr_assert_eq(sh("%s -Wl,-rpath,$(%s --variable=libdir tidepool) -o %s/example 2>&1 && "
			"env -u LD_LIBRARY_PATH %s/example scenes/pond.json 2>&1",
			cc, pcd, dir, dir),
		     0, "%s", logbuf);
	cr_assert(strstr(logbuf, "320x180, mean "), "%s", logbuf);
	cr_assert_eq(
		sh("LD_LIBRARY_PATH=%s/root/usr/local/lib %s/example-plain scenes/pond.json 2>&1",
		   dir, dir),
		0, "%s", logbuf);
	cr_assert(strstr(logbuf, "320x180, mean "), "%s", logbuf);
	cr_assert_eq(sh("make -s uninstall DESTDIR=%s/root 2>&1 && find %s/root -type f | wc -l",
			dir, dir),
		     0, "%s", logbuf);
	cr_expect_eq(atoi(logbuf), 0, "uninstall leaves nothing: %s", logbuf);
}

/* Completions for a command line (one per line), with the built tidepool on PATH. */
static const char *complete(const char *line)
{
	char bin[1024];
	cr_assert_not_null(realpath(tp_bin(), bin));
	sh("mkdir -p %s/bin && ln -sf %s %s/bin/tidepool && PATH=%s/bin:$PATH bash "
	   "tests/complete.sh '%s' | tr '\\n' ' '",
	   dir, bin, dir, dir, line);
	return logbuf;
}

Test(install, bash_completion_completes_commands_options_scenes_solvers_modes)
{
	cr_assert_str_eq(complete("tidepool re"), "render ");
	cr_assert(strstr(complete("tidepool "), "render validate solvers batch compare"), "%s",
		  logbuf);
	cr_assert_str_eq(complete("tidepool render --thr"), "--threads ");
	cr_assert_str_eq(complete("tidepool validate --si"), "--size ");
	cr_assert_str_eq(complete("tidepool compare a b --ju"), "--junit ");
	cr_assert_str_eq(complete("tidepool compare a b --html-f"), "--html-frames ");
	cr_assert_str_eq(complete("tidepool compare a b --metric "), "flip ");
	cr_assert_str_eq(complete("tidepool solvers s"), "shallow sph ");
	cr_assert_str_eq(complete("tidepool render scenes/textures/c"),
			 "scenes/textures/caustics_loop.json ");
	cr_assert(strstr(complete("tidepool render scenes/pond.json -o "), "caustics= "), "%s",
		  logbuf);
	cr_assert_str_eq(complete("tidepool render scenes/pond.json --set solver=s"),
			 "shallow sph ");
	cr_assert_str_eq(complete("tidepool render scenes/pond.json --set render.mode=n"),
			 "normal ");
	cr_assert_str_eq(complete("tidepool render scenes/pond.json --preset pl"), "placebo ");
	cr_assert_str_eq(complete("tidepool pre"), "preview ");
	cr_assert_str_eq(complete("tidepool preview --li"), "--listen ");
	cr_assert_str_eq(complete("tidepool preview scenes/textures/c"),
			 "scenes/textures/caustics_loop.json ");
	cr_assert_str_eq(complete("tidepool preview scenes/pond.json --listen 0"), "0.0.0.0 ");
}
