/* variants.c - value lists and variant names for `tidepool batch` (variants.h). */
#include "cli/variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vary_parse_values(const char *spec, char ***out, char *why, size_t nwhy)
{
	char *end;
	long a = strtol(spec, &end, 10), b;
	char **v = NULL;
	int n = 0;
	if (end != spec && !strncmp(end, "..", 2)) {
		const char *t = end + 2;
		b = strtol(t, &end, 10);
		if (end == t || *end || b < a || b - a >= VARY_MAX_VALUES) {
			snprintf(why, nwhy, "a range is A..B with A <= B, at most %d values", VARY_MAX_VALUES);
			return -1;
		}
		v = calloc((size_t)(b - a + 1), sizeof *v);
		for (long i = a; v && i <= b; i++) {
			char buf[32];
			snprintf(buf, sizeof buf, "%ld", i);
			if (!(v[n++] = strdup(buf)))
				break;
		}
	} else {
		size_t len = strlen(spec);
		v = calloc(len + 1, sizeof *v);
		int depth = 0, quoted = 0;
		const char *start = spec;
		for (const char *p = spec; v; p++) {
			if (*p == '"' && (p == spec || p[-1] != '\\'))
				quoted = !quoted;
			else if (!quoted && (*p == '[' || *p == '{'))
				depth++;
			else if (!quoted && (*p == ']' || *p == '}'))
				depth--;
			if (*p == 0 || (*p == ',' && !depth && !quoted)) {
				if (p == start) {
					snprintf(why, nwhy, "an empty value");
					goto fail;
				}
				if (!(v[n++] = strndup(start, (size_t)(p - start))))
					break;
				start = p + 1;
			}
			if (!*p)
				break;
		}
	}
	if (!v || !v[n - 1]) {
		snprintf(why, nwhy, "out of memory");
		goto fail;
	}
	*out = v;
	return n;
fail:
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	return -1;
}

/* A value as it appears in a name: JSON quotes dropped, anything but letters, digits,
 * '.', '+' and '-' turned into '-'. */
static void name_part(const char *value, char *buf, size_t n)
{
	size_t k = 0, len = strlen(value);
	if (len >= 2 && value[0] == '"' && value[len - 1] == '"')
		value++, len -= 2;
	for (size_t i = 0; i < len && k + 1 < n; i++) {
		char c = value[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '+' || c == '-';
		buf[k++] = ok ? c : '-';
	}
	buf[k] = 0;
}

const char *vary_last_part(const char *key)
{
	const char *d = strrchr(key, '.');
	return d ? d + 1 : key;
}

int vary_name(const char *pattern, const char *scene_base, int index, int count,
		     const vary *vs, int nv, const int *pick, char *out, char *why, size_t nwhy)
{
	size_t k = 0;
	for (const char *p = pattern; *p; p++) {
		char part[256] = "";
		if (*p != '{') {
			part[0] = *p;
			part[1] = 0;
		} else {
			const char *close = strchr(p, '}');
			if (!close) {
				snprintf(why, nwhy, "--name: '{' without '}'");
				return -1;
			}
			size_t len = (size_t)(close - p - 1);
			char key[128];
			snprintf(key, sizeof key, "%.*s", (int)len, p + 1);
			if (!strcmp(key, "scene")) {
				snprintf(part, sizeof part, "%s", scene_base);
			} else if (!strcmp(key, "index")) {
				int width = snprintf(NULL, 0, "%d", count);
				snprintf(part, sizeof part, "%0*d", width, index + 1);
			} else {
				int found = 0;
				for (int i = 0; i < nv && !found; i++)
					if (!strcmp(vs[i].key, key) || !strcmp(vary_last_part(vs[i].key), key)) {
						name_part(vs[i].values[pick[i]], part, sizeof part);
						found = 1;
					}
				if (!found) {
					snprintf(why, nwhy, "--name: {%s} is not a varied key", key);
					return -1;
				}
			}
			p = close;
		}
		size_t pl = strlen(part);
		if (k + pl > VARIANT_NAME_MAX) {
			snprintf(why, nwhy, "variant name longer than %d characters", VARIANT_NAME_MAX);
			return -1;
		}
		memcpy(out + k, part, pl);
		k += pl;
	}
	out[k] = 0;
	if (!k || strchr(out, '/') || !strcmp(out, ".") || !strcmp(out, "..")) {
		snprintf(why, nwhy, "variant name '%s' is not a usable directory name", out);
		return -1;
	}
	return 0;
}


void vary_default_pattern(const vary *vs, int nv, char *out, size_t n)
{
	size_t k = (size_t)snprintf(out, n, "{scene}");
	for (int i = 0; i < nv && k < n; i++) {
		/* seed3 for numbers, solver-hooke for words */
		int numeric = 1;
		for (int j = 0; j < vs[i].n && numeric; j++) {
			char *end;
			strtod(vs[i].values[j], &end);
			numeric = end != vs[i].values[j] && !*end;
		}
		k += (size_t)snprintf(out + k, n - k, "_%s%s{%s}", vary_last_part(vs[i].key), numeric ? "" : "-",
				      vs[i].key);
	}
}

void vary_label(const vary *vs, int nv, char *const *sets, char *out, size_t n)
{
	size_t k = 0;
	out[0] = 0;
	for (int i = 0; i < nv && k + 1 < n; i++) {
		if (vs[i].n < 2)
			continue; /* the same in every cell: not what tells them apart */
		/* the last part of the key when no other varied key ends the same */
		const char *key = vary_last_part(vs[i].key);
		for (int j = 0; j < nv; j++)
			if (j != i && vs[j].n > 1 && !strcmp(vary_last_part(vs[j].key), key))
				key = vs[i].key;
		const char *value = sets[i] + strlen(vs[i].key) + 1;
		size_t len = strlen(value);
		int quoted = len >= 2 && value[0] == '"' && value[len - 1] == '"';
		int w = snprintf(out + k, n - k, "%s%s=%.*s", k ? "\n" : "", key,
				 (int)(quoted ? len - 2 : len), value + quoted);
		k = w < 0 ? k : k + (size_t)w < n ? k + (size_t)w : n - 1;
	}
}
