#include "scene/ld.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scene/jsonpos.h"
#include "util/suggest.h"
#include "util/fsutil.h"

/* ---- where a node is ---- */

typedef struct where {
	int found;
	int steps[JSONPOS_MAX_DEPTH + 1];
	const cJSON *nodes[JSONPOS_MAX_DEPTH + 2];
	int n;
} where;

/* Depth-first search for target; only runs when an error is reported, so the linear
 * cost does not matter and the readers need not carry their position around. */
static int chain(where *w, const cJSON *cur, const cJSON *target, int depth)
{
	w->nodes[depth] = cur;
	if (cur == target) {
		w->n = depth;
		return 1;
	}
	if (depth > JSONPOS_MAX_DEPTH || !(cJSON_IsArray(cur) || cJSON_IsObject(cur)))
		return 0;
	int i = 0;
	for (const cJSON *c = cur->child; c; c = c->next, i++) {
		w->steps[depth] = i;
		if (chain(w, c, target, depth + 1))
			return 1;
	}
	return 0;
}

/* Appends s to buf with control characters replaced and long keys shortened (the text
 * is valid UTF-8, so cutting only before a lead byte keeps it valid). */
static void put_clean(char *buf, size_t n, const char *s, size_t max)
{
	size_t used = strlen(buf), k = 0;
	for (; s[k] && used + 4 < n; k++) {
		unsigned char c = (unsigned char)s[k];
		if (k >= max && (c & 0xC0) != 0x80) {
			memcpy(buf + used, "...", 3);
			used += 3;
			break;
		}
		buf[used++] = c < 0x20 || c == 0x7F ? '?' : (char)c;
	}
	buf[used] = 0;
}

static void path_of(const where *w, char *buf, size_t n)
{
	buf[0] = 0;
	for (int k = 1; k <= w->n; k++) {
		size_t used = strlen(buf);
		if (used + 16 >= n)
			break;
		if (cJSON_IsArray(w->nodes[k - 1])) {
			snprintf(buf + used, n - used, "[%d]", w->steps[k - 1]);
		} else {
			if (k > 1)
				strcat(buf, ".");
			put_clean(buf, n, w->nodes[k]->string ? w->nodes[k]->string : "?", 48);
		}
	}
}

static long locate(ld *L, const cJSON *node, int at_key, where *w, size_t *end)
{
	w->found = chain(w, L->root, node, 0);
	if (!w->found)
		return -1;
	return jsonpos_find(L->text, L->len, w->steps, w->n, at_key, end);
}

int ld_fail(ld *L, const cJSON *node, int at_key, const char *fmt, ...)
{
	char msg[700], path[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);

	where w;
	size_t end;
	long off = locate(L, node, at_key, &w, &end);
	path[0] = 0;
	if (w.found)
		path_of(&w, path, sizeof path);
	int line = 1, col = 1;
	if (off >= 0)
		ld_linecol(L->s && L->s->src ? &L->s->src->edits : NULL, L->text, L->len,
				   L->s && L->s->src ? L->s->src->bom : 0, (size_t)off, &line, &col);
	char from[128];
	return tp_errf(L->err, TP_EINPUT, "%s:%d:%d: %s%s%s%s", L->file, line, col, path,
		       scene_origin(L->s ? L->s->src : NULL, path, from, sizeof from),
		       path[0] ? ": " : "", msg);
}

const char *ld_got(ld *L, const cJSON *node, char *buf, size_t n)
{
	if (cJSON_IsArray(node)) {
		int k = cJSON_GetArraySize(node);
		snprintf(buf, n, k ? "an array of %d" : "an empty array", k);
		return buf;
	}
	if (cJSON_IsObject(node))
		return "an object";
	where w;
	size_t end = 0;
	long off = locate(L, node, 0, &w, &end);
	if (off < 0 || end <= (size_t)off) {
		if (cJSON_IsNumber(node))
			snprintf(buf, n, "%g", node->valuedouble);
		else
			snprintf(buf, n, "a %s", cJSON_IsString(node) ? "string" : "literal");
		return buf;
	}
	/* The source text as written (1e999 stays 1e999, not inf), at most ~40 chars. */
	size_t len = end - (size_t)off;
	buf[0] = 0;
	char tmp[64];
	size_t k = len < sizeof tmp - 1 ? len : sizeof tmp - 1;
	memcpy(tmp, L->text + off, k);
	tmp[k] = 0;
	put_clean(buf, n, tmp, 40);
	if (len > 40 && cJSON_IsString(node) && strlen(buf) + 2 < n)
		strcat(buf, "\"");
	return buf;
}

const char *ld_numstr(double v, char *buf, size_t n)
{
	if (v == floor(v) && fabs(v) < 1e16)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.10g", v);
	return buf;
}

/* ---- suggestions ---- */

void ld_list(const char *const *names, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; names[i] && used + 1 < n; i++) {
		int k = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", names[i]);
		if (k < 0)
			break;
		used += (size_t)k;
	}
}

/* ---- readers ---- */

const cJSON *ld_get(const cJSON *obj, const char *key)
{
	return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

int ld_missing(ld *L, const cJSON *obj, const char *key, const char *hint)
{
	return ld_fail(L, obj, 0, "missing \"%s\"%s", key, hint ? hint : "");
}

int ld_object(ld *L, const cJSON *obj, const char *const *keys)
{
	char got[96];
	if (!cJSON_IsObject(obj))
		return ld_fail(L, obj, 0, "must be an object {...} (got %s)", ld_got(L, obj, got, sizeof got));
	uint64_t seen = 0;
	for (const cJSON *m = obj->child; m; m = m->next) {
		int k = 0;
		while (keys[k] && strcmp(keys[k], m->string))
			k++;
		if (!keys[k]) {
			const char *sug = tp_suggest(m->string, keys);
			if (sug)
				return ld_fail(L, m, 1, "unknown key (did you mean \"%s\"?)", sug);
			char list[512];
			ld_list(keys, list, sizeof list);
			return ld_fail(L, m, 1, "unknown key (known keys: %s)", list);
		}
		if (seen & (UINT64_C(1) << k)) {
			where w;
			size_t end;
			int line = 0, col = 0;
			long off = locate(L, ld_get(obj, keys[k]), 1, &w, &end);
			if (off >= 0)
				ld_linecol(L->s && L->s->src ? &L->s->src->edits : NULL, L->text, L->len,
				   L->s && L->s->src ? L->s->src->bom : 0, (size_t)off, &line, &col);
			return ld_fail(L, m, 1, "duplicate key (first given at line %d)", line);
		}
		seen |= UINT64_C(1) << k;
	}
	return 0;
}

static void range_msg(const ld_range *r, double x, char *buf, size_t n)
{
	char lo[32], hi[32];
	ld_numstr(r->lo, lo, sizeof lo);
	ld_numstr(r->hi, hi, sizeof hi);
	int lo_bad = (r->flags & LD_LO_OPEN) ? !(x > r->lo) : !(x >= r->lo);
	if (!(r->flags & (LD_LO_OPEN | LD_HI_OPEN)))
		snprintf(buf, n, "must be in %s..%s", lo, hi);
	else if (lo_bad)
		snprintf(buf, n, "must be %s %s", (r->flags & LD_LO_OPEN) ? ">" : ">=", lo);
	else
		snprintf(buf, n, "must be %s %s", (r->flags & LD_HI_OPEN) ? "<" : "<=", hi);
}

int ld_num(ld *L, const cJSON *v, const ld_range *r, double *out)
{
	char got[96];
	int integer = r->flags & LD_INT;
	if (!cJSON_IsNumber(v))
		return ld_fail(L, v, 0, "must be %s (got %s)", integer ? "an integer" : "a number",
			ld_got(L, v, got, sizeof got));
	double x = v->valuedouble;
	if (!isfinite(x))
		return ld_fail(L, v, 0, "must be a finite number (got %s)", ld_got(L, v, got, sizeof got));
	if (integer && x != floor(x))
		return ld_fail(L, v, 0, "must be an integer (got %s)", ld_got(L, v, got, sizeof got));
	int lo_ok = (r->flags & LD_LO_OPEN) ? x > r->lo : x >= r->lo;
	int hi_ok = (r->flags & LD_HI_OPEN) ? x < r->hi : x <= r->hi;
	if (!lo_ok || !hi_ok) {
		char why[96];
		range_msg(r, x, why, sizeof why);
		return ld_fail(L, v, 0, "%s (got %s)", why, ld_got(L, v, got, sizeof got));
	}
	*out = x;
	return 0;
}

int ld_int(ld *L, const cJSON *v, const ld_range *r, int *out)
{
	ld_range ri = *r;
	ri.flags |= LD_INT;
	double x = 0;
	int rc = ld_num(L, v, &ri, &x);
	if (rc == 0)
		*out = (int)x;
	return rc;
}

int ld_bool(ld *L, const cJSON *v, int *out)
{
	char got[96];
	if (!cJSON_IsBool(v))
		return ld_fail(L, v, 0, "must be true or false (got %s)", ld_got(L, v, got, sizeof got));
	*out = cJSON_IsTrue(v);
	return 0;
}

int ld_string(ld *L, const cJSON *v, const char **out)
{
	char got[96];
	if (!cJSON_IsString(v) || !v->valuestring)
		return ld_fail(L, v, 0, "must be a string (got %s)", ld_got(L, v, got, sizeof got));
	*out = v->valuestring;
	return 0;
}

int ld_enum(ld *L, const cJSON *v, const char *const *names, int *out)
{
	char got[96], list[256];
	ld_list(names, list, sizeof list);
	if (cJSON_IsString(v) && v->valuestring) {
		for (int i = 0; names[i]; i++) {
			if (!strcmp(names[i], v->valuestring)) {
				*out = i;
				return 0;
			}
		}
		const char *sug = tp_suggest(v->valuestring, names);
		if (sug)
			return ld_fail(L, v, 0, "must be one of %s (got %s; did you mean \"%s\"?)", list,
				ld_got(L, v, got, sizeof got), sug);
	}
	return ld_fail(L, v, 0, "must be one of %s (got %s)", list, ld_got(L, v, got, sizeof got));
}

static int array_of(ld *L, const cJSON *v, int n, const char *what)
{
	char got[96];
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n)
		return ld_fail(L, v, 0, "must be %s (got %s)", what, ld_got(L, v, got, sizeof got));
	return 0;
}

int ld_vec_each(ld *L, const cJSON *v, int n, const ld_range *r, double *out)
{
	char what[48];
	snprintf(what, sizeof what, "an array of %d numbers", n);
	int rc = array_of(L, v, n, what);
	if (rc < 0)
		return rc;
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++)
		if ((rc = ld_num(L, e, &r[i], &out[i])) < 0)
			return rc;
	return 0;
}

int ld_vec(ld *L, const cJSON *v, int n, const ld_range *r, double *out)
{
	ld_range rr[8];
	if (n > 8)
		n = 8;
	for (int i = 0; i < n; i++)
		rr[i] = *r;
	return ld_vec_each(L, v, n, rr, out);
}

int ld_minmax(ld *L, const cJSON *v, const ld_range *r, double out[2])
{
	if (cJSON_IsNumber(v)) {
		int rc = ld_num(L, v, r, &out[0]);
		out[1] = out[0];
		return rc;
	}
	char got[96];
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
		return ld_fail(L, v, 0, "must be a number or a [min, max] pair (got %s)",
			ld_got(L, v, got, sizeof got));
	int rc = ld_vec(L, v, 2, r, out);
	if (rc < 0)
		return rc;
	if (out[0] > out[1])
		return ld_fail(L, v, 0, "min must be <= max (got [%g, %g])", out[0], out[1]);
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int ld_color(ld *L, const cJSON *v, uint8_t rgb[3])
{
	char got[96];
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
	int ok = s && strlen(s) == 7 && s[0] == '#';
	for (int i = 1; ok && i < 7; i++)
		ok = hexval(s[i]) >= 0;
	if (!ok)
		return ld_fail(L, v, 0, "must be a colour \"#rrggbb\" (got %s)", ld_got(L, v, got, sizeof got));
	for (int i = 0; i < 3; i++)
		rgb[i] = (uint8_t)(hexval(s[1 + 2 * i]) * 16 + hexval(s[2 + 2 * i]));
	return 0;
}

int ld_opt_num(ld *L, const cJSON *obj, const char *key, const ld_range *r, double *out)
{
	const cJSON *v = ld_get(obj, key);
	return v ? ld_num(L, v, r, out) : 0;
}

int ld_opt_int(ld *L, const cJSON *obj, const char *key, const ld_range *r, int *out)
{
	const cJSON *v = ld_get(obj, key);
	return v ? ld_int(L, v, r, out) : 0;
}

int ld_opt_bool(ld *L, const cJSON *obj, const char *key, int *out)
{
	const cJSON *v = ld_get(obj, key);
	return v ? ld_bool(L, v, out) : 0;
}

int ld_resolve(ld *L, const cJSON *at, const char *rel, char **out)
{
	char buf[4096];
	if (!rel[0])
		return ld_fail(L, at, 0, "must not be empty");
	if (tp_path_join(L->s->dir, rel, buf, sizeof buf) < 0)
		return ld_fail(L, at, 0, "path too long (%zu bytes)", strlen(rel));
	*out = strdup(buf);
	return *out ? 0 : tp_errf(L->err, TP_EIO, "out of memory");
}
