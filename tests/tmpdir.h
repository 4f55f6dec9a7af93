/*
 * tmpdir.h - the one temporary folder a test works in: made fresh in /tmp before each test
 * of a suite (`.init`), removed with everything in it after (`.fini`).
 *
 *     static char dir[64];
 *     static void setup(void) { tp_tmpdir_make(dir, sizeof dir, "cli"); }   -> /tmp/tp-cli-XXXXXX
 *     static void teardown(void) { tp_tmpdir_remove(dir); }
 */
#ifndef TP_TESTS_TMPDIR_H
#define TP_TESTS_TMPDIR_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Makes /tmp/tp-NAME-XXXXXX into dir (n bytes); fails the test if it cannot. */
static inline void tp_tmpdir_make(char *dir, size_t n, const char *name)
{
	int k = snprintf(dir, n, "/tmp/tp-%s-XXXXXX", name);
	cr_assert(k > 0 && (size_t)k < n, "tmpdir: name too long");
	cr_assert_not_null(mkdtemp(dir), "tmpdir: cannot make %s", dir);
}

/* Removes path: a folder with everything below it (links are removed, not followed). */
static inline int tp_tmpdir_rm(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int rc = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char sub[4096];
		if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub ||
		    tp_tmpdir_rm(sub) != 0)
			rc = -1;
	}
	closedir(d);
	return rc ? rc : rmdir(path);
}

/* Removes dir and everything below it; fails the test if anything stays. */
static inline void tp_tmpdir_remove(const char *dir)
{
	if (dir[0])
		cr_assert_eq(tp_tmpdir_rm(dir), 0, "tmpdir: cannot remove %s", dir);
}

#endif
