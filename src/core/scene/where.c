/*
 * where.c - where a scene member was written, for the errors found after loading
 * (solvers at init, the renderer, the loop) and for naming the command-line option a value
 * came from (scene.h: scene_errf, scene_origin).
 *
 * scene_load() indexes the parsed tree against the source text it was parsed from (after
 * the --set edits, which keep every line where it was) before it frees the tree: a
 * scene_src holds every value's path with its line and column, sorted for lookup. An
 * error about a member that was not written (a default) points at its nearest written
 * ancestor.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/jsonpos.h"
#include "scene/ld.h"

void scene_src_free(scene_src *src)
{
	if (!src)
		return;
	free(src->members);
	free(src->names);
	free(src->buf);
	ld_edits_free(&src->edits);
	for (int i = 0; i < src->nsets; i++)
		free(src->sets[i]);
	free(src->sets);
	for (int i = 0; i < SCENE_OV_COUNT; i++)
		free(src->ov_names[i]);
	free(src);
}

/* "boxes[1].path[2]" -> "boxes.1.path.2" (the --set spelling) in buf. */
static void dotted(const char *jpath, char *buf, size_t n)
{
	size_t k = 0;
	for (const char *p = jpath; *p && k + 2 < n; p++) {
		if (*p == '[')
			buf[k++] = '.';
		else if (*p != ']')
			buf[k++] = *p;
	}
	buf[k] = 0;
}

/* 1 if `path` is `key` or lies inside it ("params.rate" in "params"). */
static int within(const char *path, const char *key)
{
	size_t k = strlen(key);
	return !strncmp(path, key, k) && (path[k] == 0 || path[k] == '.');
}

/* Which override wrote the member at dotted path d, or -1. */
static int origin_of(const scene_src *src, const char *d)
{
	for (int i = src->nsets - 1; i >= 0; i--)
		if (within(d, src->sets[i]))
			return SCENE_OV_SETS;
	/* the render size: "size" is where the solvers' grid-size checks point */
	if ((src->from & SCENE_FROM_SIZE) && (within(d, "size") || within(d, "resolution")))
		return SCENE_OV_SIZE;
	if ((src->from & SCENE_FROM_SCALE) && (within(d, "size") || within(d, "resolution")))
		return SCENE_OV_SCALE;
	if ((src->from & SCENE_FROM_FRAMES) && (within(d, "frames") || within(d, "duration")))
		return SCENE_OV_FRAMES;
	if ((src->from & SCENE_FROM_SEED) && within(d, "seed"))
		return SCENE_OV_SEED;
	if ((src->from & SCENE_FROM_OUTPUT) && (within(d, "output") || within(d, "outputs")))
		return SCENE_OV_OUTPUT;
	return -1;
}

/* the library's own names of the overrides: tidepool.h's tp_load_options fields */
static const char *const own_names[SCENE_OV_COUNT] = {"sets",   "width/height", "scale",
						      "frames", "seed",         "output", NULL};

const char *scene_overrides_name(const scene_overrides *ov, scene_ov which)
{
	return ov && ov->names[which] ? ov->names[which] : own_names[which];
}

const char *scene_ov_name(const scene *s, scene_ov which)
{
	return s && s->src && s->src->ov_names[which] ? s->src->ov_names[which] : own_names[which];
}

const char *scene_origin(const scene_src *src, const char *jpath, char *buf, size_t n)
{
	char d[512];
	if (!src || !jpath)
		return "";
	dotted(jpath, d, sizeof d);
	int o = origin_of(src, d);
	if (o < 0)
		return "";
	snprintf(buf, n, " (from %s)", src->ov_names[o] ? src->ov_names[o] : own_names[o]);
	return buf;
}

/* ---- the index --------------------------------------------------------------------- */

typedef struct indexer {
	scene_src *src;
	const size_t *off; /* value offsets in source (= pre-order) order */
	size_t noff, k;
	char *names;
	size_t used, cap;
	int failed;        /* out of memory */
} indexer;

/* Records node (at path[0..plen)) and, in source order, everything inside it. */
static void index_node(indexer *x, const cJSON *node, char *path, size_t plen, size_t pcap)
{
	size_t k = x->k++;
	if (x->used + plen + 1 > x->cap && !x->failed) {
		size_t cap = (x->cap ? 2 * x->cap : 4096) + plen + 1;
		char *nb = realloc(x->names, cap);
		if (nb) {
			x->names = nb;
			x->cap = cap;
		} else {
			x->failed = 1;
		}
	}
	if (k < x->noff && !x->failed) {
		scene_member *m = &x->src->members[x->src->nmembers++];
		m->path = (const char *)(uintptr_t)x->used; /* an offset: names may move */
		m->off = x->off[k];
		m->order = (int)k;
		memcpy(x->names + x->used, path, plen);
		x->names[x->used + plen] = 0;
		x->used += plen + 1;
	}
	int i = 0;
	for (const cJSON *c = node->child; c; c = c->next, i++) {
		int n = cJSON_IsArray(node) ? snprintf(path + plen, pcap - plen, "[%d]", i)
					    : snprintf(path + plen, pcap - plen, "%s%s",
						       plen ? "." : "", c->string ? c->string : "");
		/* A path too long to hold is no member any message names: keep its place only. */
		size_t nl = n > 0 && (size_t)n < pcap - plen ? plen + (size_t)n : plen;
		index_node(x, c, path, nl, pcap);
		path[plen] = 0;
	}
}

static int by_path(const void *a, const void *b)
{
	const scene_member *p = a, *q = b;
	int c = strcmp(p->path, q->path);
	return c ? c : (p->order > q->order) - (p->order < q->order);
}

int scene_src_index(scene_src *src, const cJSON *root)
{
	size_t n = jsonpos_values(src->text, src->len, NULL, 0);
	size_t *off = malloc((n ? n : 1) * sizeof *off);
	indexer x = {.src = src, .off = off, .noff = n};
	src->members = calloc(n ? n : 1, sizeof *src->members);
	char path[1024] = "";
	if (off && src->members) {
		jsonpos_values(src->text, src->len, off, n);
		index_node(&x, root, path, 0, sizeof path);
	}
	free(off);
	if (!off || !src->members || x.failed) {
		free(x.names);
		free(src->members);
		src->members = NULL;
		src->nmembers = 0;
		return TP_EIO;
	}
	src->names = x.names;
	for (size_t i = 0; i < src->nmembers; i++)
		src->members[i].path = x.names + (uintptr_t)src->members[i].path;
	qsort(src->members, src->nmembers, sizeof *src->members, by_path);
	return 0;
}

/* The first member at exactly `path`, or NULL. */
static const scene_member *find(const scene_src *src, const char *path)
{
	size_t lo = 0, hi = src->nmembers;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(src->members[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < src->nmembers && !strcmp(src->members[lo].path, path) ? &src->members[lo] : NULL;
}

/* jpath as the index spells it: "boxes[1].path[2]" ("a.[1]" and a leading '.' folded). */
static void canonical(const char *jpath, char *buf, size_t n)
{
	size_t k = 0;
	for (const char *p = jpath; *p && k + 1 < n; p++)
		if (!(*p == '.' && (k == 0 || p[1] == '[' || p[1] == '.' || p[1] == 0)))
			buf[k++] = *p;
	buf[k] = 0;
}

/* The member at jpath, or its nearest written ancestor (the whole scene at worst). */
static const scene_member *nearest(const scene_src *src, const char *jpath)
{
	char p[1024];
	canonical(jpath ? jpath : "", p, sizeof p);
	for (;;) {
		const scene_member *m = find(src, p);
		if (m || !p[0])
			return m;
		char *dot = strrchr(p, '.'), *br = strrchr(p, '[');
		char *cut = dot > br ? dot : br;
		if (cut)
			*cut = 0;
		else
			p[0] = 0;
	}
}

int scene_has(const scene *s, const char *jpath)
{
	char p[1024];
	if (!s || !s->src || !jpath)
		return 0;
	canonical(jpath, p, sizeof p);
	return find(s->src, p) != NULL;
}

int scene_errf(const scene *s, tp_err *err, int code, const char *jpath, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const scene_src *src = s ? s->src : NULL;
	if (!src)
		return tp_errf(err, code, "%s%s%s", jpath ? jpath : "", jpath ? ": " : "", msg);
	const scene_member *m = nearest(src, jpath);
	int line = 1, col = 1;
	if (m)
		ld_linecol(&src->edits, src->text, src->len, src->bom, m->off, &line, &col);
	char from[128];
	return tp_errf(err, code, "%s:%d:%d: %s%s%s%s", src->file, line, col, jpath ? jpath : "",
		       scene_origin(src, jpath, from, sizeof from), jpath ? ": " : "", msg);
}
