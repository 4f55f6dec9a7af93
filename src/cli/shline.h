/*
 * shline.h - shell command lines built word by word (tidepool tasks, batch --tasks).
 *
 * Each word is single-quoted unless it consists only of characters the shell never
 * interprets, so a printed line runs as written under sh, GNU parallel or sbatch --wrap
 * (quoted once more for the latter). The line owns its buffer (free(l.s)); an allocation
 * failure sets oom and leaves the line as it was.
 */
#ifndef TP_CLI_SHLINE_H
#define TP_CLI_SHLINE_H

#include <stddef.h>

typedef struct tp_line {
	char *s; /* NUL-terminated, NULL until something is added */
	size_t n, cap;
	int oom;
} tp_line;

/* Appends text as it is. */
void tp_line_raw(tp_line *l, const char *text);
/* Appends one shell word (after a space unless the line is empty). */
void tp_line_word(tp_line *l, const char *w);

#endif
