#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidepool.h"
#include "util/suggest.h"

volatile sig_atomic_t tp_cli_interrupted = 0;
volatile sig_atomic_t tp_cli_signal = 0;

static void on_signal(int sig)
{
	/* SIGPIPE is kept over a later SIGINT/SIGTERM: it decides the exit status (141). */
	if (tp_cli_signal != SIGPIPE)
		tp_cli_signal = sig;
	tp_cli_interrupted = 1;
}

void tp_cli_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A reader that goes away (`| head`) stops the work like Ctrl-C instead of killing
	 * the process mid-write: temporaries are removed, an MP4 is finalised. Writes to the
	 * pipe then fail with EPIPE, which the writers treat as the interruption. */
	sigaction(SIGPIPE, &sa, NULL);
}

int tp_cli_broken_pipe(void)
{
	return tp_cli_signal == SIGPIPE;
}

int tp_cli_fail(int code, const tp_err *err)
{
	fprintf(stderr, "tidepool: %s\n", err->msg);
	return tp_exit_code(code);
}

int tp_cli_usage(const char *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "tidepool: %s: %s (see 'tidepool %s --help')\n", cmd, msg, cmd);
	return TP_EXIT_USAGE;
}

int tp_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int tp_parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int tp_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (*s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

int tp_parse_size(const char *s, int *w, int *h)
{
	char buf[64];
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	char *x = strchr(buf, 'x');
	if (!x)
		return -1;
	*x = 0;
	long a, b;
	if (tp_parse_int(buf, 1, 1 << 20, &a) || tp_parse_int(x + 1, 1, 1 << 20, &b))
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}

int tp_parse_scale(const char *s, double *out)
{
	char buf[64];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof buf)
		return -1;
	strcpy(buf, s);
	int pc = buf[n - 1] == '%';
	if (pc)
		buf[n - 1] = 0;
	double v;
	if (tp_parse_double(buf, &v) || !(v > 0))
		return -1;
	v = pc ? v / 100 : v;
	if (!(v <= 64))
		return -1;
	*out = v;
	return 0;
}

int tp_parse_range(const char *s, int *a, int *b)
{
	char buf[64];
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	char *dash = strchr(buf, '-');
	if (!dash || dash == buf)
		return -1;
	*dash = 0;
	long x, y;
	if (tp_parse_int(buf, 0, TP_MAX_FRAMES - 1, &x) ||
	    tp_parse_int(dash + 1, 0, TP_MAX_FRAMES - 1, &y) || y < x)
		return -1;
	*a = (int)x;
	*b = (int)y;
	return 0;
}

int tp_cli_threads(int n)
{
	if (n > 0)
		omp_set_num_threads(n);
	return omp_get_max_threads();
}

const char *tp_cli_suggest(const char *word, const char *const *cands)
{
	return tp_suggest(word, cands);
}
