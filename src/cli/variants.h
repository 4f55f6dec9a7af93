/*
 * variants.h - what `tidepool batch` varies: value lists and variant names.
 */
#ifndef TP_CLI_VARIANTS_H
#define TP_CLI_VARIANTS_H

#include <stddef.h>

#define VARY_MAX_VALUES 10000
#define VARIANT_NAME_MAX 200

typedef struct vary {
	const char *key;
	int n;
	const char *const *values; /* JSON text or plain strings, as --set takes them */
} vary;

/* Splits "3,4" or "tiles,pebbles" at commas outside brackets and quotes, or expands
 * "A..B" (whole numbers). Returns the count (>= 1) with *out a heap array of heap strings,
 * or -1 with a reason in why. */
int vary_parse_values(const char *spec, char ***out, char *why, size_t nwhy);
/* The last dotted part of a key: "damping" for "params.damping". */
const char *vary_last_part(const char *key);
/* The default name pattern: {scene}, then _KEY{KEY} for each key (KEY-{KEY} when a value
 * is not a number). */
void vary_default_pattern(const vary *vs, int nv, char *out, size_t n);
/* Expands a name pattern ({scene}, {index}, {KEY} by full key or last part) for the
 * combination `pick` (an index into each key's values); values are cleaned for file
 * names. Returns 0, or -1 with a reason in why. out holds VARIANT_NAME_MAX + 1 bytes. */
int vary_name(const char *pattern, const char *scene_base, int index, int count, const vary *vs,
	      int nv, const int *pick, char *out, char *why, size_t nwhy);

/* A contact-sheet label: what tells this cell from the others, one "key=value" line per
 * varied key (keys with one value left out; a key by its last part unless another
 * varied key ends the same), JSON quotes dropped. sets[i] is "KEY=VALUE" of vs[i]. */
void vary_label(const vary *vs, int nv, char *const *sets, char *out, size_t n);

#endif
