/*
 * fsutil.h - small file-system helpers: atomic replacement, directory checks, path joins.
 */
#ifndef TP_UTIL_FSUTIL_H
#define TP_UTIL_FSUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

/* Directory part of path ("." if none) into buf. */
void tp_path_dir(const char *path, char *buf, size_t n);
/* "<dir>/.<base>.tmp-<pid>" for `path`: where an output is written before its rename. */
void tp_temp_name(const char *path, char *buf, size_t n);
/* Joins dir and rel unless rel is absolute. Returns 0 or TP_EINPUT if too long. */
int tp_path_join(const char *dir, const char *rel, char *buf, size_t n);
/* 1 if path is written directly rather than through a temporary file: a name of an
 * inherited stream (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, whatever it is
 * redirected to), or a character device, FIFO or socket. */
int tp_is_special(const char *path);
/* 1 when path ends in ext (".png"), ignoring case, and is more than ext. */
int tp_has_suffix(const char *path, const char *ext);
/* 1 for the paths the MP4 encoder takes: .mp4, .m4v, .mov (any case). */
int tp_is_mp4_path(const char *path);
/* The descriptor a stream name stands for (/dev/stdout -> 1, /dev/fd/5 -> 5), or -1. */
int tp_stream_fd(const char *path);
/* 1 if path exists (any type). */
int tp_path_exists(const char *path);
/* 0 if `dir` exists, is a directory and is writable; otherwise a message naming it. */
int tp_dir_writable(const char *dir, tp_err *err);
/* Creates missing parent directories of `path` (mkdir -p of its directory). */
int tp_mkdirs_for(const char *path, tp_err *err);
/* Frame-name patterns: 1 for exactly one "%d" / "%0Nd" conversion ("%%" is a literal
 * percent), 0 for none, -1 for anything else (so a pattern is safe to give printf),
 * including a field width above TP_PATTERN_MAX_WIDTH (%999999999d would make every name a
 * gigabyte of spaces). */
#define TP_PATTERN_MAX_WIDTH 32
int tp_pattern_kind(const char *p);
/* Opens path for reading without ever blocking: O_NONBLOCK, so a FIFO with no writer
 * cannot hang the open, then fstat() on the descriptor itself; anything but a regular
 * file (FIFO, device, socket, directory) is refused with TP_EINPUT naming what it is
 * and `what` ("a PNG image"). Returns 0 with a blocking *out, TP_EIO if it cannot be
 * opened, TP_EINPUT if it is not a regular file. */
int tp_fopen_regular(const char *path, const char *what, FILE **out, tp_err *err);
/* Renames tmp onto path (atomic), removing tmp and naming both on failure. A symbolic
 * link at path to a regular file is followed (the file it names is replaced). Refuses to
 * replace a device, FIFO, socket or directory. */
int tp_commit_file(const char *tmp, const char *path, tp_err *err);
/* 0 if path may become an output file: its directory exists and is writable, and path is
 * missing, a regular file (only with overwrite) or a link to one; otherwise an error
 * naming path (TP_EIO). With allow_direct, streams and devices (tp_is_special) pass. */
int tp_check_output(const char *path, int overwrite, int allow_direct, tp_err *err);

/* A report or log that may go to a stream: --stats, compare's --json and --junit.
 * tp_wopen() writes a tp_is_special() path directly (a stream name through a duplicate of
 * its descriptor, never reopened, so a redirected file is appended to and not truncated),
 * anything else to a temporary file beside it; tp_wclose() flushes and closes, and with
 * ok renames the temporary file into place (without ok, or on a write error, removes it):
 * a file appears complete or not at all. */
typedef struct tp_wfile {
	FILE *f;
	int direct;
	char tmp[4352];
	const char *path;
} tp_wfile;
int tp_wopen(tp_wfile *w, const char *path, tp_err *err);
int tp_wclose(tp_wfile *w, int ok, tp_err *err);

#endif
