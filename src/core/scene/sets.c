/*
 * sets.c - `--set KEY=VALUE` (tp_load_options.sets): values written over a scene's JSON text
 * before it is read. Messages call them as the client does (ld_apply_sets' `word`).
 *
 * KEY is a dotted path of object members ("params.damping", "maps.caustics.depth") and
 * array indices ("emitters.0.rate"); missing objects on the way are created. VALUE is JSON ("4",
 * "true", "[1, 2]",
 * "\"tiles\"") or, if it does not parse as JSON, taken as a string ("tiles").
 *
 * The edit is made on the source text, not on the parsed tree: the new value replaces
 * the old one's characters (or a new member is inserted right after the object's "{"),
 * and line breaks in VALUE become spaces. The lines of the file therefore stay where
 * they were, and a value that the loader then rejects is reported at the place of the
 * member it replaced, with its own text in "(got ...)". Every edit is noted (ld_edits),
 * so positions are reported in the file as read: a replaced value at its place, an
 * inserted member at the "{" of the object that gained it (ld_linecol). This is what
 * `tidepool batch` uses for its variants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/jsonpos.h"
#include "scene/ld.h"

#define SET_MAX_DEPTH 16

/* Appends s as a JSON string literal ("..." with escapes) to buf at *n (cap checked). */
static int put_json_string(char *buf, size_t cap, size_t *n, const char *s)
{
	if (*n + 1 >= cap)
		return -1;
	buf[(*n)++] = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof esc, "\\%c", c);
		else if (c < 0x20)
			snprintf(esc, sizeof esc, "\\u%04x", c);
		else
			esc[0] = (char)c, esc[1] = 0;
		size_t k = strlen(esc);
		if (*n + k + 1 >= cap)
			return -1;
		memcpy(buf + *n, esc, k);
		*n += k;
	}
	if (*n + 1 >= cap)
		return -1;
	buf[(*n)++] = '"';
	buf[*n] = 0;
	return 0;
}

/* Replaces text[off, end) by ins (a new buffer; the old one is freed), noting the edit. */
static int splice(char **text, size_t *len, size_t off, size_t end, const char *ins, int insert,
		  ld_edits *ed)
{
	size_t k = strlen(ins), n = *len - (end - off) + k;
	ld_edit *e = realloc(ed->e, (size_t)(ed->n + 1) * sizeof *e);
	if (!e)
		return -1;
	ed->e = e;
	ed->e[ed->n++] = (ld_edit){.at = off, .oldlen = end - off, .newlen = k, .insert = insert};
	char *t = malloc(n + 1);
	if (!t)
		return -1;
	memcpy(t, *text, off);
	memcpy(t + off, ins, k);
	memcpy(t + off + k, *text + end, *len - end);
	t[n] = 0;
	free(*text);
	*text = t;
	*len = n;
	return 0;
}

/* KEY of KEY=VALUE into its members (key is cut in place), or TP_EARG. */
static int split_key(char *key, char *parts[SET_MAX_DEPTH], int *np, const char *set,
		     const char *word, tp_err *err)
{
	*np = 0;
	for (char *p = key;;) {
		char *dot = strchr(p, '.');
		if (dot)
			*dot = 0;
		if (!*p || *np == SET_MAX_DEPTH)
			return tp_errf(err, TP_EARG,
				       "%s %s: KEY must be a dotted path such as params.damping",
				       word, set);
		parts[(*np)++] = p;
		if (!dot)
			return 0;
		p = dot + 1;
	}
}

/* VALUE as one line of JSON into value (n bytes); anything that is not JSON becomes a
 * string. -1 when it does not fit. */
static int json_value(const char *raw, char *value, size_t n)
{
	size_t off, vn = 0;
	const char *why;
	snprintf(value, n, "%s", raw);
	for (char *c = value; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' '; /* raw line breaks are only ever whitespace in valid JSON */
	if (jsonpos_check(value, strlen(value), &off, &why) < 0) {
		char quoted[4096];
		if (put_json_string(quoted, n < sizeof quoted ? n : sizeof quoted, &vn, raw) < 0)
			return -1;
		snprintf(value, n, "%s", quoted);
	}
	return 0;
}

/* Follows parts[0..np) from root: *node gets the deepest member that exists, steps[] its
 * path (member and element indices), and the return value how many parts exist (np: all),
 * or an error for an index out of range or a member of a non-object. */
static int find_member(const cJSON *root, char *const *parts, int np, int steps[],
		       const cJSON **node, const char *file, const char *set, const char *word,
		       tp_err *err)
{
	*node = root;
	int k = 0;
	for (; k < np; k++) {
		if (cJSON_IsArray(*node)) {
			/* An element of an existing array: "emitters.0.rate". */
			char *end;
			long idx = strtol(parts[k], &end, 10);
			if (*end || end == parts[k] || idx < 0 || idx >= cJSON_GetArraySize(*node))
				return tp_errf(err, TP_EINPUT, "%s: %s %s: \"%s\" has no element %s",
					       file, word, set, k ? parts[k - 1] : "the scene",
					       parts[k]);
			steps[k] = (int)idx;
			*node = cJSON_GetArrayItem(*node, (int)idx);
			continue;
		}
		if (!cJSON_IsObject(*node))
			return tp_errf(err, TP_EINPUT, "%s: %s %s: \"%s\" is not an object", file,
				       word, set, k ? parts[k - 1] : "the scene");
		int i = 0;
		const cJSON *c = (*node)->child;
		for (; c && strcmp(c->string, parts[k]); c = c->next)
			i++;
		if (!c)
			break;
		steps[k] = i;
		*node = c;
	}
	return k;
}

/* "parts[k]": {"parts[k+1]": ... VALUE ...} into ins (n bytes), with a comma when the
 * object it goes into has members. -1 when it does not fit. */
static int nest_members(char *const *parts, int k, int np, const char *value, int comma,
			char *ins, size_t cap)
{
	size_t n = 0;
	for (int j = k; j < np; j++) {
		if (put_json_string(ins, cap, &n, parts[j]) < 0 || n + 2 >= cap)
			return -1;
		ins[n++] = ':';
		if (j < np - 1)
			ins[n++] = '{';
	}
	size_t vl = strlen(value);
	if (n + vl + (size_t)(np - k) + 2 >= cap)
		return -1;
	memcpy(ins + n, value, vl);
	n += vl;
	for (int j = k; j < np - 1; j++)
		ins[n++] = '}';
	if (comma)
		ins[n++] = ',';
	ins[n] = 0;
	return 0;
}

/* One KEY=VALUE edit of the scene text: the member's value replaced, or the member (and
 * the objects on its way) inserted into the deepest object that exists. */
static int apply_one(const char *file, char **text, size_t *len, const char *set, const char *word,
		     ld_edits *ed, tp_err *err)
{
	char key[512], value[4096], ins[4096 + 1024];
	const char *eq = strchr(set, '=');
	if (!eq || eq == set)
		return tp_errf(err, TP_EARG,
			       "%s %s: expected KEY=VALUE (such as params.damping=4)", word, set);
	size_t kn = (size_t)(eq - set);
	if (kn >= sizeof key || strlen(eq + 1) >= sizeof value)
		return tp_errf(err, TP_EARG, "%s %.40s...: too long", word, set);
	memcpy(key, set, kn);
	key[kn] = 0;
	char *parts[SET_MAX_DEPTH];
	int np, rc;
	if ((rc = split_key(key, parts, &np, set, word, err)) < 0)
		return rc;
	if (json_value(eq + 1, value, sizeof value) < 0)
		return tp_errf(err, TP_EARG, "%s %.40s...: too long", word, set);

	size_t bom = *len >= 3 && !memcmp(*text, "\xEF\xBB\xBF", 3) ? 3 : 0;
	cJSON *root = cJSON_ParseWithLength(*text + bom, *len - bom);
	if (!root)
		return tp_errf(err, TP_EIO, "%s: out of memory", file);
	int steps[SET_MAX_DEPTH];
	const cJSON *node;
	const int k = find_member(root, parts, np, steps, &node, file, set, word, err);
	size_t end;
	long at;
	rc = 0;
	if (k < 0) {
		rc = k;
	} else if (k == np) { /* the member exists: replace its value */
		at = jsonpos_find(*text, *len, steps, np, 0, &end);
		if (at < 0 || splice(text, len, (size_t)at, end, value, 0, ed) < 0)
			rc = tp_errf(err, TP_EIO, "%s: %s %s: cannot edit the scene", file, word,
				     set);
	} else if (nest_members(parts, k, np, value, node->child != NULL, ins, sizeof ins) < 0) {
		rc = tp_errf(err, TP_EARG, "%s %.40s...: too long", word, set);
	} else { /* right after the "{" of `node` */
		at = jsonpos_find(*text, *len, steps, k, 0, &end);
		if (at < 0 || splice(text, len, (size_t)at + 1, (size_t)at + 1, ins, 1, ed) < 0)
			rc = tp_errf(err, TP_EIO, "%s: %s %s: cannot edit the scene", file, word,
				     set);
	}
	cJSON_Delete(root);
	return rc;
}

void ld_edits_free(ld_edits *ed)
{
	free(ed->orig);
	free(ed->e);
	memset(ed, 0, sizeof *ed);
}

void ld_linecol(const ld_edits *ed, const char *text, size_t len, size_t bom, size_t off,
		int *line, int *col)
{
	if (!ed || !ed->orig) {
		jsonpos_linecol(text, len, off, line, col);
		return;
	}
	/* back through the edits, last first, to an offset of the text as read */
	size_t o = off + bom;
	for (int i = ed->n - 1; i >= 0; i--) {
		const ld_edit *e = &ed->e[i];
		if (o < e->at)
			continue;
		if (o >= e->at + e->newlen)
			o = o - e->newlen + e->oldlen;
		else
			o = e->insert ? e->at - 1 : e->at;
	}
	jsonpos_linecol(ed->orig, ed->orig_len, o, line, col);
}

int ld_apply_sets(const char *file, char **text, size_t *len, const char *const *sets, int nsets,
		  const char *word, ld_edits *ed, tp_err *err)
{
	if (!word)
		word = "sets";
	if (nsets && !(ed->orig = malloc(*len + 1)))
		return tp_errf(err, TP_EIO, "%s: out of memory", file);
	if (nsets) {
		memcpy(ed->orig, *text, *len);
		ed->orig[*len] = 0;
		ed->orig_len = *len;
	}
	for (int i = 0; i < nsets; i++) {
		int rc = apply_one(file, text, len, sets[i], word, ed, err);
		if (rc < 0)
			return rc;
		size_t off;
		const char *why;
		if (jsonpos_check(*text, *len, &off, &why) < 0)
			return tp_errf(err, TP_EARG,
				       "%s %s: the scene is no longer valid JSON (%s)", word,
				       sets[i], why);
	}
	return 0;
}
