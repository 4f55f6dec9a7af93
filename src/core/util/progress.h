/*
 * progress.h - progress reporting for long renders, on stderr.
 *
 * On a terminal: one self-rewriting line (frame, percent, frames/s, ETA). Otherwise: a
 * plain line every few seconds (logs stay readable). Quiet mode prints nothing.
 * tp_progress_done() prints the one-line summary (unless quiet).
 */
#ifndef TP_UTIL_PROGRESS_H
#define TP_UTIL_PROGRESS_H

typedef struct tp_progress {
	const char *label;
	int total;
	int quiet, tty;
	double start, last;
	int shown; /* a TTY line is on screen */
} tp_progress;

double tp_now(void); /* monotonic seconds */
void tp_progress_start(tp_progress *p, const char *label, int total, int quiet);
void tp_progress_update(tp_progress *p, int done);
/* Clears the TTY line; `summary` (may be NULL) is printed as its own line. */
void tp_progress_done(tp_progress *p, const char *summary);

#endif
