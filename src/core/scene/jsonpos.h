/*
 * jsonpos.h - positions in JSON source text, for error messages that point at the
 * offending character. cJSON keeps no positions, so the scene loader first checks the
 * text here (strict RFC 8259 with a short reason on failure), then parses it with cJSON,
 * and when a value turns out to be wrong finds where it was written by walking the same
 * text again.
 *
 * All offsets are byte offsets into the text. The walker addresses values the way a
 * cJSON tree does: step i selects the i-th member of an object (in source order,
 * duplicates included, so a duplicate key is found too) or the i-th element of an array.
 * Nothing here allocates or fails on malformed input beyond returning an error.
 */
#ifndef TP_SCENE_JSONPOS_H
#define TP_SCENE_JSONPOS_H

#include <stddef.h>

/* Deepest nesting of arrays and objects jsonpos_check() accepts. */
#define JSONPOS_MAX_DEPTH 64

/* 0 if text[0..len) is UTF-8 text without NUL bytes; otherwise -1 with *off at the first
 * offending byte and *why a static reason. */
int jsonpos_check_text(const char *text, size_t len, size_t *off, const char **why);

/* 0 if text[0..len) is exactly one JSON value (surrounded by whitespace only) nested at
 * most JSONPOS_MAX_DEPTH deep, with no "\u0000" or lone surrogate escapes; otherwise -1
 * with *off where reading stopped and *why a static reason ("expected ',' or '}'..."). */
int jsonpos_check(const char *text, size_t len, size_t *off, const char **why);

/* Offset of the value reached from the top-level value by steps[0..n) in text already
 * accepted by jsonpos_check(); with want_key, the offset of the opening quote of the key
 * of the last step (which must select an object member). *end, if non-NULL, receives the
 * offset just past that value or key. Returns -1 if a step is out of range. */
long jsonpos_find(const char *text, size_t len, const int *steps, int n, int want_key,
	size_t *end);

/* Offsets of every value of text (accepted by jsonpos_check()) in source order: the
 * top-level value, then each member or element before the values inside it - the order of
 * a pre-order walk of the cJSON tree. Writes at most max offsets to off[] and returns how
 * many values there are. */
size_t jsonpos_values(const char *text, size_t len, size_t *off, size_t max);

/* The offset just past the value that starts at `at` (text accepted by jsonpos_check()). */
size_t jsonpos_end(const char *text, size_t len, size_t at);

/* The direct members of the object or array that starts at `at` (text accepted by
 * jsonpos_check()), in source order: val[i] the offset of each value and, for an object,
 * key[i] that of its key's opening quote (key may be NULL; for an array key[i] = val[i]).
 * Writes at most max of each and returns how many members there are (0 for a scalar). */
size_t jsonpos_members(const char *text, size_t len, size_t at, size_t *key, size_t *val,
		       size_t max);

/* 1-based line and column of offset off. Columns count characters (UTF-8 sequences),
 * a tab counts as one, and a leading byte-order mark is not counted. */
void jsonpos_linecol(const char *text, size_t len, size_t off, int *line, int *col);

#endif
