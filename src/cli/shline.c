/* shline.c - shell command lines (shline.h). */
#include "cli/shline.h"

#include <stdlib.h>
#include <string.h>

static void put(tp_line *l, const char *s, size_t k)
{
	if (l->oom)
		return;
	if (l->n + k + 1 > l->cap) {
		size_t cap = l->cap ? l->cap : 256;
		while (cap < l->n + k + 1)
			cap *= 2;
		char *p = realloc(l->s, cap);
		if (!p) {
			l->oom = 1;
			return;
		}
		l->s = p;
		l->cap = cap;
	}
	memcpy(l->s + l->n, s, k);
	l->n += k;
	l->s[l->n] = 0;
}

void tp_line_raw(tp_line *l, const char *text)
{
	put(l, text, strlen(text));
}

void tp_line_word(tp_line *l, const char *w)
{
	if (l->n)
		put(l, " ", 1);
	int safe = *w != 0;
	for (const char *p = w; *p; p++)
		safe &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			       "-_./=:,+%@",
			       *p) != NULL;
	if (safe) {
		tp_line_raw(l, w);
		return;
	}
	put(l, "'", 1);
	for (const char *p = w; *p; p++)
		if (*p == '\'')
			tp_line_raw(l, "'\\''");
		else
			put(l, p, 1);
	put(l, "'", 1);
}
