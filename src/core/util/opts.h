/*
 * opts.h - option tables in the FFmpeg AVOption style, shared by solvers and encoders.
 *
 * A component's private struct is described by a NULL-terminated array of tp_option,
 * each naming a field by offsetof with its type, default and range. tp_opts_defaults()
 * fills the struct with defaults, tp_opts_set() sets one named value after range
 * checking. Values always travel as doubles (ints and bools are whole numbers, an enum
 * is the index of its choice).
 */
#ifndef TP_UTIL_OPTS_H
#define TP_UTIL_OPTS_H

#include <stddef.h>

#include "util/error.h"

typedef enum tp_opt_type {
	TP_OPT_INT,    /* int field */
	TP_OPT_DOUBLE, /* double field */
	TP_OPT_BOOL,   /* int field, 0 or 1; JSON true/false */
	TP_OPT_ENUM,   /* int field, index into `choices`; JSON string */
} tp_opt_type;

/* How a value changes when a scene is rendered at another size than its own (scene units
 * to output pixels, factor s = scene.scale; scenes/README.md "Scene units"). */
typedef enum tp_opt_unit {
	TP_UNIT_NONE = 0,  /* not a length: kept as written */
	TP_UNIT_LENGTH,    /* pixels, px/s, px/s^2: times s */
	TP_UNIT_AREA,      /* px^2/s: times s^2 */
	TP_UNIT_PER_LENGTH /* per pixel: divided by s */
} tp_opt_unit;

typedef struct tp_option {
	const char *name;
	const char *help;
	size_t offset;
	tp_opt_type type;
	double def, min, max;
	const char *const *choices; /* TP_OPT_ENUM only, NULL-terminated */
	tp_opt_unit unit;           /* how it scales with the render size */
} tp_option;

void tp_opts_defaults(void *priv, const tp_option *opts);
const tp_option *tp_opts_find(const tp_option *opts, const char *name);
/* Range-checks and stores v. On error, message is "NAME: must be ... (got V)". */
int tp_opts_set(void *priv, const tp_option *opt, double v, tp_err *err);
double tp_opts_get(const void *priv, const tp_option *opt);
/* Converts a value set in scene units to output pixels at scale s (see tp_opt_unit):
 * ints are rounded, and a positive int stays at least 1 (0 keeps its "automatic"
 * meaning). s == 1 leaves every value exactly as it is. */
void tp_opts_scale(void *priv, const tp_option *opts, double s);
/* Writes a short human description of the range ("0..16", "one of a, b") to buf. */
void tp_opts_range(const tp_option *opt, char *buf, size_t n);

#endif
