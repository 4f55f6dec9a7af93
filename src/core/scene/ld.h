/*
 * ld.h - internals of the scene loader (src/core/scene/ only): the loading context and the
 * typed, range-checked readers every field goes through.
 *
 * Each reader takes a cJSON node, checks its type and range and either stores the value
 * or fails with the project's one-line error,
 *     FILE:LINE:COL: json.path: what is wrong (got X)
 * code TP_EINPUT. The JSON path and the position are recovered from the node itself
 * (ld_fail() finds it in the tree, then in the source text with jsonpos.h), so callers
 * never track where they are. Readers return 0 or a negative TP_E* code.
 */
#ifndef TP_SCENE_LD_H
#define TP_SCENE_LD_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "scene/scene.h"
#include "util/error.h"

/* Which overrides the command line gave (scene_src.from). */
enum {
	SCENE_FROM_SIZE = 1u << 0,
	SCENE_FROM_FRAMES = 1u << 1,
	SCENE_FROM_SEED = 1u << 2,
	SCENE_FROM_OUTPUT = 1u << 3,
	SCENE_FROM_SCALE = 1u << 4,
};

/* One --set edit of the source text (sets.c): at `at`, `oldlen` bytes became `newlen`;
 * insert: a new member put right after the "{" at at - 1 (else a value replaced). */
typedef struct ld_edit {
	size_t at, oldlen, newlen;
	int insert;
} ld_edit;

/* The edits of a scene's text by --set, so that positions are reported in the file. */
typedef struct ld_edits {
	char *orig;      /* the text as read, before any edit (owned; NULL: no edits) */
	size_t orig_len;
	ld_edit *e;      /* in the order they were made (owned) */
	int n;
} ld_edits;
void ld_edits_free(ld_edits *ed);
/* LINE:COL in the file of offset off of text (the edited text, possibly past a BOM of
 * `bom` bytes): a position inside a replaced value is the value's place in the file, one
 * inside an inserted member the "{" of the object that gained it. ed may be NULL. */
void ld_linecol(const ld_edits *ed, const char *text, size_t len, size_t bom, size_t off,
		int *line, int *col);

/* where.c: where each member was written, kept in the scene as plain data (the JSON tree
 * is freed once the scene is read): every value's path ("boxes[1].path[2].angle", "" for
 * the whole scene) with its offset in the text, sorted by path. */
typedef struct scene_member {
	const char *path; /* in scene_src.names */
	size_t off;       /* in scene_src.text (after --set edits; ld_linecol maps it to the file) */
	int order;        /* source order, so that of duplicate keys the first is found */
} scene_member;

struct scene_src {
	const char *file; /* the scene's path (the scene's own string) */
	char *buf;        /* the source text after --set edits, owned (scene_text()) */
	const char *text; /* buf past a byte-order mark */
	size_t len;
	scene_member *members; /* sorted by path, then order */
	size_t nmembers;
	char *names;      /* the paths, one allocation */
	char **sets;      /* the --set keys, dotted ("emitters.0.rate") */
	int nsets;
	unsigned from;    /* SCENE_FROM_* */
	char *ov_names[SCENE_OV_COUNT]; /* what messages call the overrides (copies) */
	ld_edits edits;   /* --set edits, for positions in the file */
	size_t bom;       /* bytes of byte-order mark before text */
};
void scene_src_free(scene_src *src);
/* Records where every value of root (parsed from src->text) was written. */
int scene_src_index(scene_src *src, const cJSON *root);
/* " (from --set)", " (from --size)", ... (the overrides' names as the client gave them)
 * for a member at jpath, into buf; or "". */
const char *scene_origin(const scene_src *src, const char *jpath, char *buf, size_t n);

typedef struct ld {
	const char *file;  /* the scene path as given, for messages */
	const char *text;  /* the whole source, jsonpos_check()ed */
	size_t len;
	const cJSON *root;
	tp_err *err;
	scene *s;          /* the scene being filled */
	double end;        /* scene length in seconds (frames / fps), once known */
	int out_w, out_h;  /* the render size; s->width, height stay the scene's until ld_scale */
	const tp_solver_kind *const *solvers; /* the caller's (scene_load), NULL-terminated */
} ld;

/* The largest flipbook atlas side: the largest texture current GPUs take. */
#define ATLAS_MAX_SIDE 16384

/* Range of a numeric field. */
enum {
	LD_INT = 1u << 0,     /* must be a whole number */
	LD_LO_OPEN = 1u << 1, /* value > lo rather than >= lo */
	LD_HI_OPEN = 1u << 2, /* value < hi rather than <= hi */
};
typedef struct ld_range {
	double lo, hi;
	unsigned flags;
} ld_range;

/* Fails at `node` (at its key instead of its value with at_key) with a message made
 * from fmt. Always returns TP_EINPUT. */
int ld_fail(ld *L, const cJSON *node, int at_key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Short description of a value for "(got X)": its source text for numbers and
 * literals, the quoted string (shortened), "an array", "an object". */
const char *ld_got(ld *L, const cJSON *node, char *buf, size_t n);
/* Formats a limit compactly: integers without a fraction, others with %.10g. */
const char *ld_numstr(double v, char *buf, size_t n);

/* obj must be an object whose keys all appear in the NULL-terminated `keys` (at most
 * 64); unknown keys fail with a did-you-mean hint, repeated keys fail too. */
int ld_object(ld *L, const cJSON *obj, const char *const *keys);
/* The member `key` of obj, or NULL. */
const cJSON *ld_get(const cJSON *obj, const char *key);
/* Fails at obj (an object) because `key` is missing. */
int ld_missing(ld *L, const cJSON *obj, const char *key, const char *hint);

int ld_num(ld *L, const cJSON *v, const ld_range *r, double *out);
int ld_int(ld *L, const cJSON *v, const ld_range *r, int *out);
int ld_bool(ld *L, const cJSON *v, int *out);
int ld_string(ld *L, const cJSON *v, const char **out);
/* A string that is one of the NULL-terminated `names`; *out is its index. */
int ld_enum(ld *L, const cJSON *v, const char *const *names, int *out);
/* ld_enum over the render modes' names (render/modes.h; support.c). */
int ld_mode(ld *L, const cJSON *v, int *mode);
/* An array of exactly n numbers, each in r. */
int ld_vec(ld *L, const cJSON *v, int n, const ld_range *r, double *out);
/* Like ld_vec, with a separate range per element. */
int ld_vec_each(ld *L, const cJSON *v, int n, const ld_range *r, double *out);
/* A number (min = max) or a [min, max] pair with min <= max, both in r. */
int ld_minmax(ld *L, const cJSON *v, const ld_range *r, double out[2]);
/* A "#rrggbb" colour. */
int ld_color(ld *L, const cJSON *v, uint8_t rgb[3]);

/* Optional members: absent keeps *out (the default) untouched. */
int ld_opt_num(ld *L, const cJSON *obj, const char *key, const ld_range *r, double *out);
int ld_opt_int(ld *L, const cJSON *obj, const char *key, const ld_range *r, int *out);
int ld_opt_bool(ld *L, const cJSON *obj, const char *key, int *out);

/* Writes "a, b, c" into buf. */
void ld_list(const char *const *names, char *buf, size_t n);

/* items.c: the parts of a scene after the top-level numbers are known (L->s->width,
 * height, fps, frames and L->end are set). Each takes the member (may be NULL). */
int ld_background(ld *L, const cJSON *v);
int ld_render(ld *L, const cJSON *v);
int ld_drops(ld *L, const cJSON *v);
int ld_emitters(ld *L, const cJSON *v);
int ld_boxes(ld *L, const cJSON *v);
int ld_tank(ld *L, const cJSON *v);
int ld_blocks(ld *L, const cJSON *v);
/* ambient.c: "ambient" (wind waves); after the seed is known. */
int ld_ambient(ld *L, const cJSON *v);

/* Joins the scene directory and a relative path into a new heap string. */
int ld_resolve(ld *L, const cJSON *at, const char *rel, char **out);

/* textures.c: "loop" (right after the timing: it sets frames and L->end), then "outputs",
 * "maps", "flipbook" and "variants" (last); scene_free_textures() for scene_destroy(). */
int ld_loop(ld *L, const scene_overrides *ov);
int ld_textures(ld *L);
void scene_free_textures(scene *s);
/* scale.c: last, converts every length of the scene from scene units to output pixels
 * and sets the render size (scene.h). At the scene's own size it changes nothing. */
int ld_scale(ld *L);

/* fingerprint.c: SHA-256 of the scene text (after --set edits) into out. */
void scene_text_digest(const char *text, size_t len, uint8_t out[32]);
/* support.c: after everything is read (before ld_scale), refuses every field the chosen
 * solver would not honour, at its position, naming the field and the solver. */
int ld_support(ld *L);
/* reach.c: after ld_support (before ld_scale), refuses a fluid block, stream emitter or
 * box that lies wholly outside the water (the pool, or a particle solver's tank), at its
 * place with the reason: no element is ignored silently. */
int ld_reach(ld *L);
/* sets.c: applies KEY=VALUE edits to the source text (reallocated) before parsing;
 * messages call them `word` (the CLI's "--set"; NULL: "sets"). */
int ld_apply_sets(const char *file, char **text, size_t *len, const char *const *sets, int nsets,
		  const char *word, ld_edits *ed, tp_err *err);

#endif
