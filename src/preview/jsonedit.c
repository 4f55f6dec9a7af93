/* jsonedit.c - the fewest-bytes edits of JSON text (jsonedit.h). Offsets come from the
 * loader's own walker (scene/jsonpos.h); every edit is a splice of the text, recorded so
 * that it can be undone and redone byte for byte. */
#include "preview/jsonedit.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preview/json.h"
#include "scene/jsonpos.h"

typedef struct splice {
	size_t at;
	char *old, *new; /* the bytes taken out and put in */
	size_t oldn, newn;
} splice;

typedef struct ed {
	char *t; /* the text being edited, NUL-terminated */
	size_t n, cap;
	splice *sp;
	size_t nsp, capsp;
	char *why;
	size_t whyn;
} ed;

static int failf(ed *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(ed *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->why, e->whyn, fmt, ap);
	va_end(ap);
	return code;
}

static char *dup_bytes(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* Replaces text[at, at + del) by ins[0..insn), recording the splice. */
static int do_splice(ed *e, size_t at, size_t del, const char *ins, size_t insn)
{
	if (at > e->n || del > e->n - at)
		return failf(e, PV_JEDIT_BAD, "splice %zu+%zu: outside the text (%zu bytes)", at,
			     del, e->n);
	size_t n = e->n - del + insn;
	if (n > PV_JEDIT_MAX_TEXT)
		return failf(e, PV_JEDIT_TOOBIG, "the edited text would exceed %u MiB",
			     PV_JEDIT_MAX_TEXT >> 20);
	if (e->nsp == e->capsp) {
		size_t cap = e->capsp ? 2 * e->capsp : 16;
		splice *sp = realloc(e->sp, cap * sizeof *sp);
		if (!sp)
			return failf(e, PV_JEDIT_NOMEM, "out of memory");
		e->sp = sp;
		e->capsp = cap;
	}
	splice s = {at, dup_bytes(e->t + at, del), dup_bytes(ins, insn), del, insn};
	if (!s.old || !s.new || (n + 1 > e->cap && !(e->t = realloc(e->t, e->cap = 2 * n + 1)))) {
		free(s.old);
		free(s.new);
		return failf(e, PV_JEDIT_NOMEM, "out of memory");
	}
	memmove(e->t + at + insn, e->t + at + del, e->n - at - del + 1);
	memcpy(e->t + at, s.new, insn);
	e->n = n;
	e->sp[e->nsp++] = s;
	return 0;
}

/* ---- values as JSON text ---- */

/* The shortest decimal that reads back as v; integers without a fraction. */
static void put_number(pv_json *j, double v)
{
	if (v == floor(v) && fabs(v) < 1e15) {
		pv_json_printf(j, "%.0f", v == 0 ? 0.0 : v); /* no "-0" */
		return;
	}
	char s[40];
	for (int p = 1; p <= 17; p++) {
		snprintf(s, sizeof s, "%.*g", p, v);
		if (strtod(s, NULL) == v)
			break;
	}
	pv_json_puts(j, s);
}

static int put_value(ed *e, pv_json *j, const cJSON *v)
{
	if (cJSON_IsNumber(v)) {
		if (!isfinite(v->valuedouble))
			return failf(e, PV_JEDIT_BAD, "value: numbers must be finite");
		put_number(j, v->valuedouble);
	} else if (cJSON_IsString(v)) {
		pv_json_string(j, v->valuestring);
	} else if (cJSON_IsTrue(v) || cJSON_IsFalse(v) || cJSON_IsNull(v)) {
		pv_json_puts(j, cJSON_IsTrue(v) ? "true" : cJSON_IsFalse(v) ? "false" : "null");
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		int obj = cJSON_IsObject(v);
		pv_json_puts(j, obj ? "{" : "[");
		for (const cJSON *c = v->child; c; c = c->next) {
			if (obj) {
				pv_json_string(j, c->string);
				pv_json_puts(j, ": ");
			}
			int rc = put_value(e, j, c);
			if (rc < 0)
				return rc;
			if (c->next)
				pv_json_puts(j, ", ");
		}
		pv_json_puts(j, obj ? "}" : "]");
	} else {
		return failf(e, PV_JEDIT_BAD, "value: not a JSON value");
	}
	return 0;
}

/* ---- where things are ---- */

/* The members of the container at `at`: *key and *val (one allocation, freed through
 * *key), for an array key[i] = val[i]. */
static int members(ed *e, size_t at, size_t **key, size_t **val, size_t *count)
{
	size_t c = jsonpos_members(e->t, e->n, at, NULL, NULL, 0);
	size_t *k = malloc((2 * c + 1) * sizeof *k);
	if (!k)
		return failf(e, PV_JEDIT_NOMEM, "out of memory");
	jsonpos_members(e->t, e->n, at, k, k + c, c);
	if (e->t[at] == '[')
		memcpy(k, k + c, c * sizeof *k);
	*key = k;
	*val = k + c;
	*count = c;
	return 0;
}

/* The next segment of pointer *p (RFC 6901: "~1" is '/', "~0" is '~') into seg. */
static int segment(ed *e, const char **p, char *seg, size_t segn, size_t *len)
{
	const char *s = *p + 1; /* past '/' */
	size_t n = 0;
	for (; *s && *s != '/'; s++) {
		char c = *s;
		if (c == '~') {
			if (s[1] != '0' && s[1] != '1')
				return failf(e, PV_JEDIT_BAD,
					     "path: '~' must be followed by 0 or 1");
			c = *++s == '0' ? '~' : '/';
		}
		if (n + 1 >= segn)
			return failf(e, PV_JEDIT_BAD, "path: a segment longer than %zu bytes",
				     segn - 1);
		seg[n++] = c;
	}
	seg[n] = '\0';
	*len = n;
	*p = s;
	return 0;
}

/* The member of the container at `at` that segment seg names: its index, or -1. Object
 * keys are compared as written (escapes are not decoded); array indices are decimal,
 * without leading zeros. */
static long find_member(const ed *e, size_t at, const size_t *key, const size_t *val, size_t c,
			const char *seg, size_t segn)
{
	if (e->t[at] == '{') {
		for (size_t i = 0; i < c; i++) {
			size_t end = jsonpos_end(e->t, e->n, key[i]);
			if (end - key[i] == segn + 2 && !memcmp(e->t + key[i] + 1, seg, segn))
				return (long)i;
		}
		return -1;
	}
	(void)val;
	if (!segn || segn > 9 || (seg[0] == '0' && segn > 1) || strspn(seg, "0123456789") != segn)
		return -1;
	long i = strtol(seg, NULL, 10);
	return (size_t)i < c ? i : -1;
}

/* Follows pointer p from the top value to *at; with `parent`, stops before its last
 * segment, which goes to last. */
static int walk(ed *e, const char *p, int parent, size_t *at, char *last, size_t lastn)
{
	if (!p || (*p && *p != '/'))
		return failf(e, PV_JEDIT_BAD, "path: a JSON pointer (\"/drops/0/at\")");
	size_t i = 0;
	while (i < e->n && strchr(" \t\r\n", e->t[i]))
		i++;
	const char *whole = p;
	char seg[256];
	for (int depth = 0; *p; depth++) {
		size_t segn = 0;
		if (depth >= PV_JEDIT_MAX_DEPTH)
			return failf(e, PV_JEDIT_BAD, "path: deeper than %d", PV_JEDIT_MAX_DEPTH);
		int rc = segment(e, &p, seg, sizeof seg, &segn);
		if (rc < 0)
			return rc;
		if (parent && !*p) {
			snprintf(last, lastn, "%s", seg);
			*at = i;
			return 0;
		}
		if (e->t[i] != '{' && e->t[i] != '[')
			return failf(e, PV_JEDIT_NOPATH,
				     "path %.200s: \"%.100s\" is inside a value that is not an "
				     "object or array",
				     whole, seg);
		size_t *key, *val, c;
		if ((rc = members(e, i, &key, &val, &c)) < 0)
			return rc;
		long m = find_member(e, i, key, val, c, seg, segn);
		if (m >= 0)
			i = val[m];
		free(key);
		if (m < 0)
			return failf(e, PV_JEDIT_NOPATH, "path %.200s: no member \"%.100s\"", whole,
				     seg);
	}
	if (parent)
		return failf(e, PV_JEDIT_BAD,
			     "path: \"\" (the whole file) cannot be added or removed");
	*at = i;
	return 0;
}

/* ---- the operations ---- */

/* Makes the value at `at` equal v, rewriting only what differs: arrays of one length and
 * objects with the same keys member by member (from the last, so the offsets of those
 * before stay put), equal values not at all, anything else as new text. */
static int replace_at(ed *e, size_t at, const cJSON *v, int depth)
{
	size_t end = jsonpos_end(e->t, e->n, at);
	cJSON *old = cJSON_ParseWithLength(e->t + at, end - at);
	if (!old)
		return failf(e, PV_JEDIT_NOMEM, "out of memory");
	int rc = 0, same = cJSON_Compare(old, v, 1);
	int arrays = cJSON_IsArray(old) && cJSON_IsArray(v) &&
		     cJSON_GetArraySize(old) == cJSON_GetArraySize(v);
	int objects = cJSON_IsObject(old) && cJSON_IsObject(v) &&
		      cJSON_GetArraySize(old) == cJSON_GetArraySize(v);
	for (const cJSON *c = objects ? old->child : NULL; c; c = c->next)
		if (!cJSON_GetObjectItemCaseSensitive(v, c->string))
			objects = 0;
	if (same) {
		rc = 0;
	} else if ((arrays || objects) && depth < PV_JEDIT_MAX_DEPTH) {
		size_t *key, *val, c;
		if ((rc = members(e, at, &key, &val, &c)) == 0) {
			const cJSON **want = malloc((c + 1) * sizeof *want);
			const cJSON *o = old->child;
			for (size_t i = 0; want && i < c; i++, o = o->next)
				want[i] = objects ? cJSON_GetObjectItemCaseSensitive(v, o->string)
						  : cJSON_GetArrayItem(v, (int)i);
			if (!want)
				rc = failf(e, PV_JEDIT_NOMEM, "out of memory");
			for (size_t i = c; want && i-- > 0 && rc == 0;)
				rc = replace_at(e, val[i], want[i], depth + 1);
			free(want);
			free(key);
		}
	} else {
		pv_json j;
		pv_json_init(&j);
		rc = put_value(e, &j, v);
		char *s = pv_json_finish(&j);
		if (rc == 0 && !s)
			rc = failf(e, PV_JEDIT_NOMEM, "out of memory");
		if (rc == 0)
			rc = do_splice(e, at, end - at, s, strlen(s));
		free(s);
	}
	cJSON_Delete(old);
	return rc;
}

/* The separator between members of the container at `at` (after the comma): between the
 * first two, or before the only one; "" when empty. */
static void gap(const ed *e, size_t at, const size_t *key, const size_t *val, size_t c,
		size_t *from, size_t *to)
{
	if (c >= 2) {
		size_t i = jsonpos_end(e->t, e->n, val[0]);
		while (e->t[i] != ',')
			i++;
		*from = i + 1;
		*to = key[1];
	} else {
		*from = at + 1;
		*to = c ? key[0] : at + 1;
	}
}

/* The object or array that `path`'s last step is in: its offset, that last step (into
 * `last`), and its members as members() gives them. */
static int parent_members(ed *e, const char *path, size_t *at, char *last, size_t n,
			  size_t **key, size_t **val, size_t *c)
{
	int rc = walk(e, path, 1, at, last, n);
	if (rc < 0)
		return rc;
	if (e->t[*at] != '{' && e->t[*at] != '[')
		return failf(e, PV_JEDIT_NOPATH, "path %.200s: not inside an object or array",
			     path);
	return members(e, *at, key, val, c);
}

static int add(ed *e, const char *path, const cJSON *v)
{
	size_t at, *key, *val, c, gf, gt;
	char last[256];
	int rc = parent_members(e, path, &at, last, sizeof last, &key, &val, &c);
	if (rc < 0)
		return rc;
	gap(e, at, key, val, c, &gf, &gt);
	pv_json j;
	pv_json_init(&j);
	size_t idx = c, elem = 0; /* the new value's offset once inserted */
	const char *like = NULL;  /* a neighbour's text the new element starts as */
	size_t liken = 0;
	if (e->t[at] == '[') {
		if (strcmp(last, "-")) {
			long m = find_member(e, at, key, val, c, last, strlen(last));
			if (m < 0 &&
			    !(strspn(last, "0123456789") == strlen(last) && *last &&
			      strtoul(last, NULL, 10) == c && (c == 0 || last[0] != '0'))) {
				free(key);
				return failf(e, PV_JEDIT_NOPATH,
					     "path %.200s: no place %.100s in an array of %zu",
					     path, last, c);
			}
			idx = m < 0 ? c : (size_t)m;
		}
		if (c) {
			size_t s = val[idx < c ? idx : c - 1];
			like = e->t + s;
			liken = jsonpos_end(e->t, e->n, s) - s;
		}
	} else {
		if (find_member(e, at, key, val, c, last, strlen(last)) >= 0) {
			free(key);
			return failf(e, PV_JEDIT_NOPATH,
				     "path %.200s: already there (replace changes it)", path);
		}
		pv_json_string(&j, last);
		if (c)
			pv_json_printf(&j, "%.*s", (int)(val[0] - jsonpos_end(e->t, e->n, key[0])),
				       e->t + jsonpos_end(e->t, e->n, key[0]));
		else
			pv_json_puts(&j, ": ");
	}
	size_t head = j.n; /* the key and its colon, for an object */
	if (like)
		pv_json_printf(&j, "%.*s", (int)liken, like);
	else if ((rc = put_value(e, &j, v)) < 0) {
		free(key);
		free(pv_json_finish(&j));
		return rc;
	}
	char *item = pv_json_finish(&j);
	pv_json_init(&j);
	size_t pos;
	if (c == 0) { /* the only member: right after the bracket */
		pos = at + 1;
		elem = pos + head;
		pv_json_puts(&j, item ? item : "");
	} else if (idx < c) { /* before member idx: ITEM , GAP */
		pos = key[idx];
		elem = pos + head;
		pv_json_printf(&j, "%s,%.*s", item ? item : "", (int)(gt - gf), e->t + gf);
	} else { /* after the last: , GAP ITEM */
		pos = jsonpos_end(e->t, e->n, val[c - 1]);
		elem = pos + 1 + (gt - gf) + head;
		pv_json_printf(&j, ",%.*s%s", (int)(gt - gf), e->t + gf, item ? item : "");
	}
	free(key);
	char *ins = pv_json_finish(&j);
	if (!item || !ins)
		rc = failf(e, PV_JEDIT_NOMEM, "out of memory");
	else
		rc = do_splice(e, pos, 0, ins, strlen(ins));
	free(item);
	free(ins);
	if (rc == 0 && like) /* the neighbour's copy becomes the new value */
		rc = replace_at(e, elem, v, 0);
	return rc;
}

static int remove_at(ed *e, const char *path)
{
	size_t at, *key, *val, c;
	char last[256];
	int rc = parent_members(e, path, &at, last, sizeof last, &key, &val, &c);
	if (rc < 0)
		return rc;
	long m = find_member(e, at, key, val, c, last, strlen(last));
	size_t from = 0, to = 0;
	if (m >= 0 && c == 1) { /* the member alone, its surroundings stay */
		from = key[0];
		to = jsonpos_end(e->t, e->n, val[0]);
	} else if (m >= 0 && (size_t)m + 1 < c) { /* the member, its comma and the gap after */
		from = key[m];
		to = key[m + 1];
	} else if (m >= 0) { /* the last: the comma and gap before it, and it */
		from = jsonpos_end(e->t, e->n, val[m - 1]);
		to = jsonpos_end(e->t, e->n, val[m]);
	}
	free(key);
	if (m < 0)
		return failf(e, PV_JEDIT_NOPATH, "path %.200s: no such member", path);
	return do_splice(e, from, to - from, "", 0);
}

static int get_offset(ed *e, const cJSON *op, const char *name, size_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(op, name);
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > PV_JEDIT_MAX_TEXT ||
	    v->valuedouble != floor(v->valuedouble))
		return failf(e, PV_JEDIT_BAD, "splice: \"%s\" must be a byte offset", name);
	*out = (size_t)v->valuedouble;
	return 0;
}

/* 1 if every number in v is finite (JSON's 1e999 reads as infinity, which cJSON_Compare
 * takes for equal to anything). */
static int all_finite(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return isfinite(v->valuedouble);
	for (const cJSON *c = v->child; c; c = c->next)
		if (!all_finite(c))
			return 0;
	return 1;
}

static int apply_op(ed *e, const cJSON *op)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(op, "op");
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(op, "path");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");
	const char *k = cJSON_IsString(kind) ? kind->valuestring : "";
	const char *p = cJSON_IsString(path) ? path->valuestring : NULL;
	if (!strcmp(k, "splice")) {
		size_t at = 0, del = 0;
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(op, "text");
		int rc = get_offset(e, op, "at", &at);
		if (rc == 0)
			rc = get_offset(e, op, "delete", &del);
		if (rc == 0 && !cJSON_IsString(text))
			rc = failf(e, PV_JEDIT_BAD, "splice: \"text\" must be a string");
		return rc ? rc
			  : do_splice(e, at, del, text->valuestring, strlen(text->valuestring));
	}
	if (!p)
		return failf(e, PV_JEDIT_BAD, "op \"%.20s\": \"path\" must be a string", k);
	if (!strcmp(k, "remove"))
		return remove_at(e, p);
	if (strcmp(k, "replace") && strcmp(k, "add"))
		return failf(e, PV_JEDIT_BAD,
			     "op: \"replace\", \"add\", \"remove\" or \"splice\" (got \"%.20s\")",
			     k);
	if (!value)
		return failf(e, PV_JEDIT_BAD, "op \"%s\": no \"value\"", k);
	if (!all_finite(value))
		return failf(e, PV_JEDIT_BAD, "value: numbers must be finite");
	if (*k == 'a')
		return add(e, p, value);
	size_t at;
	int rc = walk(e, p, 0, &at, NULL, 0);
	return rc ? rc : replace_at(e, at, value, 0);
}

static char *splices_json(const ed *e, int undo)
{
	pv_json j;
	pv_json_init(&j);
	pv_json_puts(&j, "[");
	for (size_t k = 0; k < e->nsp; k++) {
		const splice *s = &e->sp[undo ? e->nsp - 1 - k : k];
		pv_json_printf(&j, "%s{\"op\":\"splice\",\"at\":%zu,\"delete\":%zu,\"text\":",
			       k ? "," : "", s->at, undo ? s->newn : s->oldn);
		pv_json_string(&j, undo ? s->old : s->new);
		pv_json_puts(&j, "}");
	}
	pv_json_puts(&j, "]");
	return pv_json_finish(&j);
}

int pv_jedit_apply(const char *text, size_t len, const cJSON *ops, pv_jedit *out, char *why,
		   size_t n)
{
	ed e = {.why = why, .whyn = n};
	memset(out, 0, sizeof *out);
	size_t off;
	const char *bad;
	int rc = 0;
	if (len > PV_JEDIT_MAX_TEXT)
		return failf(&e, PV_JEDIT_TOOBIG, "the text exceeds %u MiB",
			     PV_JEDIT_MAX_TEXT >> 20);
	if (jsonpos_check_text(text, len, &off, &bad) < 0 ||
	    jsonpos_check(text, len, &off, &bad) < 0)
		return failf(&e, PV_JEDIT_INVALID, "the file is not JSON at byte %zu: %s", off,
			     bad);
	if (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) > PV_JEDIT_MAX_OPS)
		return failf(&e, PV_JEDIT_BAD, "ops: an array of at most %d operations",
			     PV_JEDIT_MAX_OPS);
	if (!(e.t = dup_bytes(text, len)))
		return failf(&e, PV_JEDIT_NOMEM, "out of memory");
	e.n = len;
	e.cap = len + 1;
	int i = 0;
	for (const cJSON *op = ops->child; op && rc == 0; op = op->next, i++) {
		if (!cJSON_IsObject(op))
			rc = failf(&e, PV_JEDIT_BAD, "ops[%d]: an object", i);
		else if ((rc = apply_op(&e, op)) == 0 &&
			 (jsonpos_check_text(e.t, e.n, &off, &bad) < 0 ||
			  jsonpos_check(e.t, e.n, &off, &bad) < 0))
			rc = failf(&e, PV_JEDIT_INVALID,
				   "ops[%d] would leave the file invalid JSON at byte %zu: %s", i,
				   off, bad);
		if (rc < 0 && rc != PV_JEDIT_INVALID && i > 0) { /* say which operation */
			char inner[512];
			snprintf(inner, sizeof inner, "%s", why);
			snprintf(why, n, "ops[%d]: %s", i, inner);
		}
	}
	if (rc == 0) {
		out->undo = splices_json(&e, 1);
		out->redo = splices_json(&e, 0);
		if (!out->undo || !out->redo)
			rc = failf(&e, PV_JEDIT_NOMEM, "out of memory");
	}
	for (size_t k = 0; k < e.nsp; k++) {
		free(e.sp[k].old);
		free(e.sp[k].new);
	}
	free(e.sp);
	if (rc < 0) {
		/* one line, whatever the request's paths and names held */
		for (char *c = why; n && *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = ' ';
		free(e.t);
		pv_jedit_free(out);
		return rc;
	}
	out->text = e.t;
	out->len = e.n;
	return 0;
}

void pv_jedit_free(pv_jedit *e)
{
	free(e->text);
	free(e->undo);
	free(e->redo);
	memset(e, 0, sizeof *e);
}
