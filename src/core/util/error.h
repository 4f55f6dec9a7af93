/*
 * error.h - error codes and the error-message buffer used everywhere below src/cli/.
 *
 * Contract: a function that can fail returns 0 or one of the negative TP_E* codes and,
 * on failure, writes a one-line, human-readable message into a caller-owned tp_err.
 * Library code never prints and never exits; the program (src/exitstatus.h) adds its own
 * codes (a usage error, compare's verdict), turns codes into exit statuses and prints
 * "tidepool: <msg>".
 */
#ifndef TP_UTIL_ERROR_H
#define TP_UTIL_ERROR_H

#include <stddef.h>

enum {
	TP_OK = 0,
	TP_EARG = -2,    /* a bad argument: a value out of range, a request the scene cannot meet */
	TP_EINPUT = -3,  /* bad scene, image or other input */
	TP_EIO = -4,     /* I/O or runtime failure (also out of memory) */
	TP_EINTR = -130, /* interrupted by SIGINT/SIGTERM */
};

typedef struct tp_err {
	char msg[1024];
} tp_err;

/* Formats the message into e (if non-NULL) and returns code, so callers can write
 * `return tp_errf(err, TP_EINPUT, "%s: ...", path);`. */
int tp_errf(tp_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes an existing message: "prefix: old message". Returns code. */
int tp_errprefix(tp_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* path for a message in at most n bytes (with its NUL): whole if it fits, else its middle
 * replaced by "..." so that the file name (the last component) and the path's start stay
 * whole, never cut inside a UTF-8 character: "/very/long/.../dir/frame_0001.exr". A file
 * name longer than n itself keeps its end. Messages give this a %s and then the reason,
 * so a long path no longer cuts the reason off. */
void tp_path_ellipsize(const char *path, char *out, size_t n);

/* "PATH: what" for an error about a file: what (formatted) is kept whole and the path
 * shortened in its middle to fit the message (tp_path_ellipsize), so that neither the
 * file name nor the system's reason is ever cut. Returns code. */
int tp_errpath(tp_err *e, int code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Bytes from a damaged file, for a message: printable ASCII as is (a backslash as "\\"),
 * anything else as \xNN, at most max input bytes (then "..."); always valid UTF-8 and
 * NUL-terminated in n bytes. */
void tp_escape_bytes(const void *bytes, size_t len, size_t max, char *out, size_t n);

#endif
