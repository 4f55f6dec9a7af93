/*
 * json.h - a growable text buffer for the preview's JSON answers: strings escaped per
 * RFC 8259, numbers printed exactly enough to round-trip (non-finite ones as null).
 * Running out of memory is remembered and reported once by pv_json_finish() (NULL).
 */
#ifndef TP_PREVIEW_JSON_H
#define TP_PREVIEW_JSON_H

#include <stddef.h>

typedef struct pv_json {
	char *s;
	size_t n, cap;
	int failed;
} pv_json;

void pv_json_init(pv_json *j);
void pv_json_puts(pv_json *j, const char *s);
void pv_json_printf(pv_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pv_json_string(pv_json *j, const char *s); /* "s" escaped; NULL gives null */
void pv_json_number(pv_json *j, double v);
/* The text (malloc'd, the caller frees it), or NULL if memory ran out. */
char *pv_json_finish(pv_json *j);

#endif
