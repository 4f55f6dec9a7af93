/*
 * exitstatus.h - the program's words for failure (src/cli, src/compare, src/encode,
 * src/main.c), beside the core's codes in util/error.h.
 *
 * The library knows bad arguments, bad input, I/O and cancelling (TP_EARG, TP_EINPUT,
 * TP_EIO, TP_EINTR); what a command line is and what compare's verdict means are the
 * program's: a usage error is the library's bad argument (both exit 2), and TP_EDIFF is
 * compare's "frames differ". The process exit statuses are DESIGN.md's "Errors, exit
 * codes, safety"; tp_exit_code() maps a code to one.
 */
#ifndef TP_EXITSTATUS_H
#define TP_EXITSTATUS_H

#include "util/error.h"

enum {
	TP_EDIFF = -1,       /* compare: frames differ beyond tolerance */
	TP_EUSAGE = TP_EARG, /* bad command line */
};

/* Process exit statuses. */
enum {
	TP_EXIT_OK = 0,
	TP_EXIT_DIFF = 1,
	TP_EXIT_USAGE = 2,
	TP_EXIT_INPUT = 3,
	TP_EXIT_IO = 4,
	TP_EXIT_INTR = 130,
};

/* Maps a TP_E* code (or 0) to a process exit status. */
static inline int tp_exit_code(int code)
{
	switch (code) {
	case TP_OK: return TP_EXIT_OK;
	case TP_EDIFF: return TP_EXIT_DIFF;
	case TP_EUSAGE: return TP_EXIT_USAGE;
	case TP_EINPUT: return TP_EXIT_INPUT;
	case TP_EINTR: return TP_EXIT_INTR;
	default: return TP_EXIT_IO;
	}
}

#endif
