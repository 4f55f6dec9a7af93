/*
 * fsutil.h - small file-system helpers: atomic replacement, directory checks, path joins.
 */
#ifndef TP_UTIL_FSUTIL_H
#define TP_UTIL_FSUTIL_H

#include <stddef.h>

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
 * percent), 0 for none, -1 for anything else (so a pattern is safe to give printf). */
int tp_pattern_kind(const char *p);
/* Renames tmp onto path (atomic), removing tmp and naming both on failure. Refuses to
 * replace anything but a regular file (a device, link or directory at path). */
int tp_commit_file(const char *tmp, const char *path, tp_err *err);

#endif
