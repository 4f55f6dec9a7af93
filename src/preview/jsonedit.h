/*
 * jsonedit.h - the fewest-bytes edits of JSON text that the preview's page asks for
 * (POST /edit, docs/preview.md "Editing"), as VS Code's jsonc `modify` does: only the
 * bytes of the values that change are rewritten; spacing, key order and every other
 * number stay byte for byte. No file, no I/O: src/preview/edit.c reads and writes the
 * scene, tests/fuzz/fuzz_jsonedit.c fuzzes this.
 *
 * An edit is a list of operations, applied in order (JSON Patch's names, RFC 6902, with
 * JSON Pointers, RFC 6901, compared with keys as they are written):
 *
 *   {"op": "replace", "path": "/drops/0/at", "value": [420, 96]}
 *       arrays of the same length and objects with the same keys are compared member by
 *       member, so only "412" becomes "420"; a member equal to the old one keeps its text
 *   {"op": "add", "path": "/drops/-", "value": {...}}      ("-": at the end, or an index)
 *       the new element is a copy of its neighbour's text with the values that differ
 *       replaced, joined with the array's own separator; a new object member goes last
 *   {"op": "remove", "path": "/drops/2"}                   (the element and one separator)
 *   {"op": "splice", "at": N, "delete": M, "text": "..."}  (bytes: what undo and redo send)
 *
 * Each applied edit is also returned as splices: `redo` turns the old text into the new
 * one, `undo` the new one back into the old, byte for byte.
 */
#ifndef TP_PREVIEW_JSONEDIT_H
#define TP_PREVIEW_JSONEDIT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define PV_JEDIT_MAX_OPS   256         /* operations in one edit */
#define PV_JEDIT_MAX_TEXT  (16u << 20) /* the text before and after, as the loader's bound */
#define PV_JEDIT_MAX_DEPTH 64          /* path segments (the loader nests as deep) */

enum {
	PV_JEDIT_BAD = -1,     /* a malformed operation (HTTP 400) */
	PV_JEDIT_NOPATH = -2,  /* a path that names no value, or an add over one (422) */
	PV_JEDIT_INVALID = -3, /* the result would not be JSON (422) */
	PV_JEDIT_TOOBIG = -4,  /* the result would exceed PV_JEDIT_MAX_TEXT (413) */
	PV_JEDIT_NOMEM = -5,
};

typedef struct pv_jedit {
	char *text; /* the edited text, NUL-terminated (malloc'd) */
	size_t len;
	char *undo, *redo; /* JSON arrays of splice operations (malloc'd) */
} pv_jedit;

/* Applies ops (a cJSON array) to text[0..len), which must be one JSON value (as
 * jsonpos_check() accepts). Returns 0 with *out filled, or a PV_JEDIT_* code with the
 * reason in why ("path /drops/9: no such element"). */
int pv_jedit_apply(const char *text, size_t len, const cJSON *ops, pv_jedit *out, char *why,
		   size_t n);
void pv_jedit_free(pv_jedit *e);

#endif
