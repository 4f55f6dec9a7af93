#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tp_errf(tp_err *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

int tp_errprefix(tp_err *e, int code, const char *fmt, ...)
{
	if (e) {
		char prefix[512], old[sizeof e->msg];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(prefix, sizeof prefix, fmt, ap);
		va_end(ap);
		memcpy(old, e->msg, sizeof old);
		size_t n = strlen(prefix);
		if (n + 2 < sizeof e->msg) {
			memcpy(e->msg, prefix, n);
			memcpy(e->msg + n, ": ", 2);
			size_t m = strlen(old);
			if (m > sizeof e->msg - n - 3)
				m = sizeof e->msg - n - 3;
			memcpy(e->msg + n + 2, old, m);
			e->msg[n + 2 + m] = 0;
		}
	}
	return code;
}

int tp_exit_code(int code)
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
