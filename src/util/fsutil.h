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
/* Joins dir and rel unless rel is absolute. Returns 0 or TP_EINPUT if too long. */
int tp_path_join(const char *dir, const char *rel, char *buf, size_t n);
/* 1 if path is a character device or a FIFO (/dev/stdout, a pipe): written directly. */
int tp_is_special(const char *path);
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
/* Renames tmp onto path (atomic), removing tmp and naming both on failure. Refuses to
 * replace anything but a regular file (a device, link or directory at path). */
int tp_commit_file(const char *tmp, const char *path, tp_err *err);

#endif
