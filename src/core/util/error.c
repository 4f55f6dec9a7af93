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

/* i moved back to the start of the UTF-8 character it is in */
static size_t char_start(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

void tp_path_ellipsize(const char *path, char *out, size_t n)
{
	if (n == 0)
		return;
	size_t len = strlen(path);
	if (len < n || n < 8) {
		snprintf(out, n, "%s", path);
		if (len >= n) /* too small to shorten: no half character at the end */
			out[char_start(out, strlen(out))] = '\0';
		return;
	}
	const size_t room = n - 1 - 3; /* bytes of the path kept around "..." */
	const char *slash = strrchr(path, '/');
	size_t base = slash ? len - (size_t)(slash - path) : len; /* "/name" */
	/* the end keeps the name whole and at least half of the room; the start the rest */
	size_t tail = base > room / 2 ? base : room / 2;
	if (tail > room)
		tail = room;
	size_t head = char_start(path, room - tail);
	size_t from = len - tail;
	while (from < len && ((unsigned char)path[from] & 0xC0) == 0x80)
		from++;
	memcpy(out, path, head);
	memcpy(out + head, "...", 3);
	memcpy(out + head + 3, path + from, len - from);
	out[head + 3 + len - from] = '\0';
}

void tp_escape_bytes(const void *bytes, size_t len, size_t max, char *out, size_t n)
{
	const unsigned char *b = bytes;
	size_t k = 0;
	if (n == 0)
		return;
	for (size_t i = 0; i < len; i++) {
		char one[8];
		if (i == max) {
			snprintf(one, sizeof one, "...");
		} else if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\') {
			one[0] = (char)b[i];
			one[1] = '\0';
		} else if (b[i] == '\\') {
			snprintf(one, sizeof one, "\\\\");
		} else {
			snprintf(one, sizeof one, "\\x%02x", b[i]);
		}
		size_t m = strlen(one);
		if (k + m + 1 > n)
			break;
		memcpy(out + k, one, m);
		k += m;
		if (i == max)
			break;
	}
	out[k] = '\0';
}

int tp_errpath(tp_err *e, int code, const char *path, const char *fmt, ...)
{
	if (!e)
		return code;
	char what[sizeof e->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	size_t wl = strlen(what), room = sizeof e->msg - 3; /* ": " and the NUL */
	if (wl + 64 > room) { /* a reason longer than the message: the path keeps 64 bytes */
		wl = room - 64;
		what[wl] = '\0';
	}
	char shown[sizeof e->msg];
	tp_path_ellipsize(path, shown, room - wl + 1);
	size_t sl = strlen(shown); /* sl + 2 + wl < sizeof e->msg by the sizes above */
	memcpy(e->msg, shown, sl);
	memcpy(e->msg + sl, ": ", 2);
	memcpy(e->msg + sl + 2, what, wl + 1);
	return code;
}
