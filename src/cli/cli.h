/*
 * cli.h - what the subcommands share: their entry points, error printing, signal state
 * and option parsing helpers. Only src/cli/ and src/main.c print or choose exit codes.
 */
#ifndef TP_CLI_CLI_H
#define TP_CLI_CLI_H

#include <signal.h>
#include <stdint.h>

#include "util/error.h"
#include "exitstatus.h"

int cmd_render(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_solvers(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_join(int argc, char **argv);
int cmd_preview(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* Set by SIGINT, SIGTERM or SIGPIPE once tp_cli_catch_signals() ran; long loops poll it.
 * tp_cli_signal holds the signal (SIGPIPE once one arrived). An interrupted command
 * exits 130, or 141 (128 + SIGPIPE) after a broken pipe: main() maps the status. */
extern volatile sig_atomic_t tp_cli_interrupted;
extern volatile sig_atomic_t tp_cli_signal;
void tp_cli_catch_signals(void);
/* 1 once SIGPIPE arrived: a reader of a pipe we write went away. */
int tp_cli_broken_pipe(void);
#define TP_EXIT_PIPE 141

/* Prints "tidepool: MSG" to stderr and returns the exit status for code. */
int tp_cli_fail(int code, const tp_err *err);
/* Prints "tidepool: CMD: MSG" plus a hint to --help, returns TP_EXIT_USAGE. */
int tp_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict number parsing for option values: the whole string must be consumed. */
int tp_parse_int(const char *s, long min, long max, long *out);
int tp_parse_double(const char *s, double *out);
int tp_parse_u64(const char *s, uint64_t *out);
/* "640x360" */
int tp_parse_size(const char *s, int *w, int *h);
/* A render scale: a factor ("0.5", "2") or a percentage ("25%"), in 0..64. */
int tp_parse_scale(const char *s, double *out);
/* "100-199": 0 <= A <= B < TP_MAX_FRAMES */
int tp_parse_range(const char *s, int *a, int *b);

/* Applies --threads (0 = all cores) to OpenMP; returns the thread count in use. */
int tp_cli_threads(int n);
/* The candidate a mistyped word most likely meant (a few characters off, or a prefix
 * of three or more), or NULL: for "did you mean". cands is NULL-terminated. */
const char *tp_cli_suggest(const char *word, const char *const *cands);

#endif
