/* Helpers for end-to-end tests that run the built tidepool binary (TP_BIN). */
#ifndef TP_TESTS_CLI_UTIL_H
#define TP_TESTS_CLI_UTIL_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static inline const char *tp_bin(void)
{
	const char *b = getenv("TP_BIN");
	return b ? b : "build/tidepool";
}

/* Runs `tidepool ARGS` through the shell; stdout/stderr go to the given files (or
 * /dev/null). Returns the exit status. */
static inline int run_tp(const char *out, const char *errf, const char *fmt, ...)
{
	char args[4096], cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s", tp_bin(), args, out ? out : "/dev/null",
		 errf ? errf : "/dev/null");
	int st = system(cmd);
	cr_assert(WIFEXITED(st), "did not exit normally: %s", cmd);
	return WEXITSTATUS(st);
}

/* Whole file into a static buffer (tests only read small files). */
static inline const char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "rb");
	if (!f)
		return "";
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static inline int files_equal(const char *a, const char *b)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

#endif
