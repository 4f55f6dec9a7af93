/* json.c - JSON text for the preview's answers (json.h). */
#include "preview/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pv_json_init(pv_json *j)
{
	memset(j, 0, sizeof *j);
}

static int reserve(pv_json *j, size_t more)
{
	if (j->failed)
		return -1;
	if (j->n + more + 1 <= j->cap)
		return 0;
	size_t cap = j->cap ? j->cap : 256;
	while (cap < j->n + more + 1)
		cap *= 2;
	char *s = realloc(j->s, cap);
	if (!s) {
		j->failed = 1;
		return -1;
	}
	j->s = s;
	j->cap = cap;
	return 0;
}

static void put(pv_json *j, const char *s, size_t n)
{
	if (reserve(j, n) < 0)
		return;
	memcpy(j->s + j->n, s, n);
	j->n += n;
	j->s[j->n] = '\0';
}

void pv_json_puts(pv_json *j, const char *s)
{
	put(j, s, strlen(s));
}

void pv_json_printf(pv_json *j, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof buf) {
		put(j, buf, (size_t)n);
		return;
	}
	if (reserve(j, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(j->s + j->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	j->n += (size_t)n;
}

void pv_json_string(pv_json *j, const char *s)
{
	if (!s) {
		pv_json_puts(j, "null");
		return;
	}
	put(j, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		switch (*p) {
		case '"': put(j, "\\\"", 2); break;
		case '\\': put(j, "\\\\", 2); break;
		case '\n': put(j, "\\n", 2); break;
		case '\r': put(j, "\\r", 2); break;
		case '\t': put(j, "\\t", 2); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				snprintf(esc, sizeof esc, "\\u%04x", *p);
				put(j, esc, 6);
			} else {
				put(j, (const char *)p, 1);
			}
		}
	}
	put(j, "\"", 1);
}

void pv_json_number(pv_json *j, double v)
{
	if (!isfinite(v))
		pv_json_puts(j, "null");
	else if (v == (double)(long long)v && fabs(v) < 1e15)
		pv_json_printf(j, "%lld", (long long)v);
	else
		pv_json_printf(j, "%.12g", v);
}

char *pv_json_finish(pv_json *j)
{
	if (j->failed || !j->s) {
		free(j->s);
		j->s = NULL;
		if (!j->failed)
			return strdup("");
		return NULL;
	}
	char *s = j->s;
	j->s = NULL;
	return s;
}
