/*
 * fuzz_util.h - what the libFuzzer targets share: one private temporary directory per
 * process (removed at exit), the input written to a file there (tidepool reads files,
 * not buffers), and the invariants every error must keep.
 */
#ifndef TP_FUZZ_UTIL_H
#define TP_FUZZ_UTIL_H

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "exitstatus.h"

static char fuzz_dir[256];

__attribute__((unused)) static void fuzz_cleanup(void)
{
	char cmd[300];
	if (fuzz_dir[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "fuzz: cannot remove %s\n", fuzz_dir);
	}
}

/* One thread: the fuzzer runs one input at a time, and the machine is shared. The
 * directory is in TMPDIR if set, else in /dev/shm where there is one: on a disk file
 * system, writing each input (a file truncated and rewritten thousands of times a
 * second) made ext4 flush it to disk every time, most of fuzz_ckpt's time. */
__attribute__((unused)) static void fuzz_init(void)
{
	if (fuzz_dir[0])
		return;
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/tp-fuzz-XXXXXX", t);
	if (!mkdtemp(fuzz_dir))
		abort();
	atexit(fuzz_cleanup);
	omp_set_num_threads(1);
}

/* Writes data[0..n) to fuzz_dir/name; returns the path (static). */
__attribute__((unused)) static const char *fuzz_file(const char *name, const uint8_t *data, size_t n)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir, name);
	unlink(path); /* a new file, not a truncated one (ext4 flushes those on close) */
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
		abort();
	return path;
}

/* Every failure must carry a one-line message (the CLI prints it as is) and a TP_E code. */
__attribute__((unused)) static void fuzz_check_error(int rc, const tp_err *err)
{
	if (rc != TP_EINPUT && rc != TP_EIO && rc != TP_EUSAGE) {
		fprintf(stderr, "unexpected error code %d: %s\n", rc, err->msg);
		abort();
	}
	if (!err->msg[0] || strchr(err->msg, '\n')) {
		fprintf(stderr, "error message empty or not one line: '%s'\n", err->msg);
		abort();
	}
}

#endif
