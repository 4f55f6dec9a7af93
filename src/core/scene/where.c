/*
 * where.c - where a scene member was written, for the errors found after loading
 * (solvers at init, the renderer, the loop) and for naming the command-line option a value
 * came from (scene.h: scene_errf, scene_origin).
 *
 * scene_load() keeps the parsed tree and the source text it was parsed from (after the
 * --set edits, which keep every line where it was) in a scene_src; a dotted path is
 * walked down the tree to a list of member indices, and jsonpos_find() turns those into
 * an offset in the text.
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
	cJSON_Delete(src->root);
	free(src->buf);
	ld_edits_free(&src->edits);
	for (int i = 0; i < src->nsets; i++)
		free(src->sets[i]);
	free(src->sets);
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

const char *scene_origin(const scene_src *src, const char *jpath)
{
	char d[512];
	if (!src || !jpath)
		return "";
	dotted(jpath, d, sizeof d);
	for (int i = src->nsets - 1; i >= 0; i--)
		if (within(d, src->sets[i]))
			return " (from --set)";
	/* the render size: "size" is where the solvers' grid-size checks point */
	if ((src->from & SCENE_FROM_SIZE) && (within(d, "size") || within(d, "resolution")))
		return " (from --size)";
	if ((src->from & SCENE_FROM_SCALE) && (within(d, "size") || within(d, "resolution")))
		return " (from --scale)";
	if ((src->from & SCENE_FROM_FRAMES) && (within(d, "frames") || within(d, "duration")))
		return " (from --frames)";
	if ((src->from & SCENE_FROM_SEED) && within(d, "seed"))
		return " (from --seed)";
	if ((src->from & SCENE_FROM_OUTPUT) && (within(d, "output") || within(d, "outputs")))
		return " (from -o)";
	return "";
}

/* Walks jpath down the tree; returns the number of steps found (stops at the first
 * member that is not there) and whether the last one selects an object member. */
static int walk(const cJSON *root, const char *jpath, int *steps, int max)
{
	const cJSON *node = root;
	int n = 0;
	const char *p = jpath;
	while (*p && n < max && node) {
		if (*p == '.') {
			p++;
			continue;
		}
		const cJSON *next = NULL;
		int idx = 0;
		if (*p == '[') {
			char *end;
			long v = strtol(p + 1, &end, 10);
			p = *end == ']' ? end + 1 : end;
			if (!cJSON_IsArray(node) || v < 0 || v >= cJSON_GetArraySize(node))
				break;
			idx = (int)v;
			next = cJSON_GetArrayItem(node, idx);
		} else {
			size_t k = strcspn(p, ".[");
			if (!cJSON_IsObject(node))
				break;
			for (const cJSON *c = node->child; c; c = c->next, idx++)
				if (c->string && strlen(c->string) == k &&
				    !strncmp(c->string, p, k)) {
					next = c;
					break;
				}
			p += k;
		}
		if (!next)
			break;
		steps[n++] = idx;
		node = next;
	}
	return n;
}

int scene_has(const scene *s, const char *jpath)
{
	int steps[JSONPOS_MAX_DEPTH], n = 0;
	for (const char *p = jpath; *p; p++)
		n += *p == '.' || *p == '[';
	return s && s->src && walk(s->src->root, jpath, steps, JSONPOS_MAX_DEPTH) == n + 1;
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
	int steps[JSONPOS_MAX_DEPTH], line = 1, col = 1;
	int n = jpath ? walk(src->root, jpath, steps, JSONPOS_MAX_DEPTH) : 0;
	long off = jsonpos_find(src->text, src->len, steps, n, 0, NULL);
	if (off >= 0)
		ld_linecol(&src->edits, src->text, src->len, src->bom, (size_t)off, &line, &col);
	return tp_errf(err, code, "%s:%d:%d: %s%s%s%s", src->file, line, col, jpath ? jpath : "",
		       scene_origin(src, jpath), jpath ? ": " : "", msg);
}
