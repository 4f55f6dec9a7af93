#include "scene/jsonpos.h"

#include <string.h>

/* A leading UTF-8 byte-order mark is tolerated (some Windows editors write one) and
 * treated as if it were not there. */
static size_t skip_bom(const char *s, size_t n)
{
	return (n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) ? 3 : 0;
}

int jsonpos_check_text(const char *text, size_t len, size_t *off, const char **why)
{
	const unsigned char *s = (const unsigned char *)text;
	if (len >= 2 && ((s[0] == 0xFF && s[1] == 0xFE) || (s[0] == 0xFE && s[1] == 0xFF))) {
		*off = 0;
		*why = "file is UTF-16 text; save it as UTF-8";
		return -1;
	}
	for (size_t i = 0; i < len;) {
		unsigned c = s[i];
		if (c == 0) {
			*off = i;
			*why = "NUL byte in file (a scene is UTF-8 JSON text, is this a binary file?)";
			return -1;
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		/* Lengths and the allowed range of the second byte rule out overlong forms,
		 * UTF-16 surrogates and code points above U+10FFFF (RFC 3629 table). */
		size_t need;
		unsigned lo = 0x80, hi = 0xBF;
		if (c >= 0xC2 && c <= 0xDF) {
			need = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			if (c == 0xE0)
				lo = 0xA0;
			if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			if (c == 0xF0)
				lo = 0x90;
			if (c == 0xF4)
				hi = 0x8F;
		} else {
			*off = i;
			*why = "invalid UTF-8 byte (save the file as UTF-8)";
			return -1;
		}
		for (size_t k = 1; k <= need; k++) {
			unsigned b = i + k < len ? s[i + k] : 0;
			unsigned blo = k == 1 ? lo : 0x80, bhi = k == 1 ? hi : 0xBF;
			if (b < blo || b > bhi) {
				*off = i;
				*why = "invalid UTF-8 sequence (save the file as UTF-8)";
				return -1;
			}
		}
		i += need + 1;
	}
	return 0;
}

/* ---- strict syntax check (recursive descent, depth-limited) ---- */

typedef struct rd {
	const char *s;
	size_t n, i;
	const char *why;
} rd;

static int fail(rd *r, const char *why)
{
	r->why = why;
	return -1;
}

static void ws(rd *r)
{
	while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
	                       r->s[r->i] == '\r'))
		r->i++;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex4(rd *r, unsigned *out)
{
	unsigned v = 0;
	for (int k = 0; k < 4; k++, r->i++) {
		char c = r->i < r->n ? r->s[r->i] : 0;
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return fail(r, "\\u must be followed by four hex digits");
		v = v * 16 + d;
	}
	*out = v;
	return 0;
}

static int string(rd *r)
{
	size_t open = r->i++;
	for (;;) {
		if (r->i >= r->n) {
			r->i = open;
			return fail(r, "string is never closed (missing '\"')");
		}
		unsigned char c = (unsigned char)r->s[r->i];
		if (c == '"') {
			r->i++;
			return 0;
		}
		if (c == '\n' || c == '\r')
			return fail(r, "line break inside a string (missing closing '\"'?)");
		if (c < 0x20)
			return fail(r, "control character inside a string (write it as an escape)");
		if (c != '\\') {
			r->i++;
			continue;
		}
		size_t esc = r->i++;
		char e = r->i < r->n ? r->s[r->i] : 0;
		if (e && strchr("\"\\/bfnrt", e)) {
			r->i++;
			continue;
		}
		if (e != 'u') {
			r->i = esc;
			return fail(r, "invalid escape (use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)");
		}
		r->i++;
		unsigned u;
		if (hex4(r, &u) < 0)
			return -1;
		if (u == 0) {
			r->i = esc;
			return fail(r, "\\u0000 is not allowed in strings");
		}
		if (u >= 0xDC00 && u <= 0xDFFF) {
			r->i = esc;
			return fail(r, "lone low surrogate escape");
		}
		if (u >= 0xD800 && u <= 0xDBFF) {
			unsigned lo = 0;
			if (r->i + 1 >= r->n || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u') {
				r->i = esc;
				return fail(r, "high surrogate escape not followed by a low surrogate");
			}
			r->i += 2;
			if (hex4(r, &lo) < 0)
				return -1;
			if (lo < 0xDC00 || lo > 0xDFFF) {
				r->i = esc;
				return fail(r, "high surrogate escape not followed by a low surrogate");
			}
		}
	}
}

static int number_body(rd *r)
{
	if (r->s[r->i] == '-')
		r->i++;
	char c = r->i < r->n ? r->s[r->i] : 0;
	if (c == '0') {
		r->i++;
		if (r->i < r->n && is_digit(r->s[r->i]))
			return fail(r, "numbers cannot have leading zeros");
	} else if (is_digit(c)) {
		while (r->i < r->n && is_digit(r->s[r->i]))
			r->i++;
	} else if (c == 'I' || c == 'N' || c == 'i' || c == 'n') {
		return fail(r, "NaN and Infinity are not JSON numbers");
	} else {
		return fail(r, "expected a digit after '-'");
	}
	if (r->i < r->n && r->s[r->i] == '.') {
		r->i++;
		if (r->i >= r->n || !is_digit(r->s[r->i]))
			return fail(r, "expected a digit after the decimal point");
		while (r->i < r->n && is_digit(r->s[r->i]))
			r->i++;
	}
	if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
		r->i++;
		if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-'))
			r->i++;
		if (r->i >= r->n || !is_digit(r->s[r->i]))
			return fail(r, "expected a digit in the exponent");
		while (r->i < r->n && is_digit(r->s[r->i]))
			r->i++;
	}
	return 0;
}

/* Longest number accepted: cJSON 1.7 copies a number into a 64-byte buffer and fails on
 * longer ones, and no scene value needs more digits than a double holds. */
#define MAX_NUMBER_LEN 63

static int number(rd *r)
{
	size_t start = r->i;
	if (number_body(r) < 0)
		return -1;
	if (r->i - start > MAX_NUMBER_LEN) {
		r->i = start;
		return fail(r, "number too long (more than 63 characters)");
	}
	return 0;
}

static int literal(rd *r, const char *word)
{
	size_t k = strlen(word);
	if (r->n - r->i >= k && !memcmp(r->s + r->i, word, k)) {
		r->i += k;
		return 0;
	}
	return fail(r, "invalid word (text needs double quotes; the literals are true, false, null)");
}

static int value(rd *r, int depth);

static int container(rd *r, int depth)
{
	int obj = r->s[r->i] == '{';
	char close = obj ? '}' : ']';
	if (depth >= JSONPOS_MAX_DEPTH)
		return fail(r, "arrays and objects nested too deeply");
	r->i++;
	ws(r);
	if (r->i < r->n && r->s[r->i] == close) {
		r->i++;
		return 0;
	}
	size_t comma = 0;
	for (int first = 1;; first = 0) {
		ws(r);
		if (r->i >= r->n)
			return fail(r, obj ? "unexpected end of file inside an object (missing '}')"
			                   : "unexpected end of file inside an array (missing ']')");
		char c = r->s[r->i];
		if (!first && (c == '}' || c == ']')) {
			r->i = comma;
			return fail(r, "trailing comma (not allowed in JSON)");
		}
		if (c == '/')
			return fail(r, "comments are not allowed in JSON");
		if (c == ',')
			return fail(r, first ? "a comma before the first element (delete it)"
					     : "two commas in a row (delete one)");
		if (obj) {
			if (c != '"')
				return fail(r, c == '\'' ? "keys need double quotes, not single quotes"
				                         : "expected a key in double quotes");
			if (string(r) < 0)
				return -1;
			ws(r);
			if (r->i >= r->n || r->s[r->i] != ':')
				return fail(r, "expected ':' after the key");
			r->i++;
			ws(r);
		}
		if (value(r, depth + 1) < 0)
			return -1;
		ws(r);
		if (r->i >= r->n)
			return fail(r, obj ? "unexpected end of file inside an object (missing '}')"
			                   : "unexpected end of file inside an array (missing ']')");
		c = r->s[r->i];
		if (c == ',') {
			comma = r->i++;
			continue;
		}
		if (c == close) {
			r->i++;
			return 0;
		}
		if (c == '/')
			return fail(r, "comments are not allowed in JSON");
		if (obj)
			return fail(r, c == '"' ? "expected ',' or '}' (missing comma before this key?)"
			                        : "expected ',' or '}' after the value");
		return fail(r, "expected ',' or ']' after the array element");
	}
}

static int value(rd *r, int depth)
{
	if (r->i >= r->n)
		return fail(r, "unexpected end of file (expected a value)");
	char c = r->s[r->i];
	switch (c) {
	case '{':
	case '[': return container(r, depth);
	case '"': return string(r);
	case 't': return literal(r, "true");
	case 'f': return literal(r, "false");
	case 'n': return literal(r, "null");
	case '\'': return fail(r, "strings need double quotes, not single quotes");
	case '/': return fail(r, "comments are not allowed in JSON");
	case '+': return fail(r, "numbers cannot start with '+'");
	case '.': return fail(r, "numbers need a digit before the decimal point");
	case 'N':
	case 'I': return fail(r, "NaN and Infinity are not JSON numbers");
	case '}':
	case ']':
	case ',':
	case ':': return fail(r, "expected a value");
	default: break;
	}
	if (c == '-' || is_digit(c))
		return number(r);
	return fail(r, "expected a value (text needs double quotes)");
}

int jsonpos_check(const char *text, size_t len, size_t *off, const char **why)
{
	rd r = { .s = text, .n = len, .i = skip_bom(text, len) };
	ws(&r);
	int rc;
	if (r.i >= r.n)
		rc = fail(&r, "empty file (expected a JSON object)");
	else
		rc = value(&r, 0);
	if (rc == 0) {
		ws(&r);
		if (r.i < r.n)
			rc = fail(&r, "unexpected text after the end of the JSON value");
	}
	if (rc < 0) {
		*off = r.i < len ? r.i : len;
		*why = r.why;
	}
	return rc;
}

/* ---- locator over text already accepted by jsonpos_check() ---- */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n && s[i] != '"'; i++)
		if (s[i] == '\\')
			i++;
	return i < n ? i + 1 : n;
}

static size_t skip_value(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return n;
	if (s[i] == '"')
		return skip_string(s, n, i);
	if (s[i] == '{' || s[i] == '[') {
		int depth = 0;
		while (i < n) {
			char c = s[i];
			if (c == '"') {
				i = skip_string(s, n, i);
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return i + 1;
			i++;
		}
		return n;
	}
	while (i < n && !strchr(",]} \t\r\n", s[i]))
		i++;
	return i;
}

long jsonpos_find(const char *text, size_t len, const int *steps, int n, int want_key,
	size_t *end)
{
	size_t i = skip_ws(text, len, skip_bom(text, len));
	for (int k = 0; k < n; k++) {
		if (i >= len || (text[i] != '{' && text[i] != '['))
			return -1;
		int obj = text[i] == '{';
		i = skip_ws(text, len, i + 1);
		for (int m = 0;; m++) {
			if (i >= len || text[i] == '}' || text[i] == ']')
				return -1;
			if (obj) {
				size_t key = i;
				i = skip_string(text, len, i);
				if (m == steps[k] && k == n - 1 && want_key) {
					if (end)
						*end = i;
					return (long)key;
				}
				i = skip_ws(text, len, i);
				i = skip_ws(text, len, i + 1); /* past ':' */
			}
			if (m == steps[k])
				break;
			i = skip_ws(text, len, skip_value(text, len, i));
			if (i < len && text[i] == ',')
				i = skip_ws(text, len, i + 1);
		}
	}
	if (want_key || i >= len)
		return -1;
	if (end)
		*end = skip_value(text, len, i);
	return (long)i;
}

static size_t values_at(const char *s, size_t n, size_t i, size_t *off, size_t max,
			size_t *count)
{
	if (*count < max)
		off[*count] = i;
	(*count)++;
	if (i >= n || (s[i] != '{' && s[i] != '['))
		return skip_value(s, n, i);
	int obj = s[i] == '{';
	i = skip_ws(s, n, i + 1);
	while (i < n && s[i] != '}' && s[i] != ']') {
		if (obj) {
			i = skip_ws(s, n, skip_string(s, n, i));
			i = skip_ws(s, n, i + 1); /* past ':' */
		}
		/* nesting is bounded by jsonpos_check(): JSONPOS_MAX_DEPTH */
		i = skip_ws(s, n, values_at(s, n, i, off, max, count));
		if (i < n && s[i] == ',')
			i = skip_ws(s, n, i + 1);
	}
	return i < n ? i + 1 : n;
}

size_t jsonpos_values(const char *text, size_t len, size_t *off, size_t max)
{
	size_t count = 0;
	values_at(text, len, skip_ws(text, len, skip_bom(text, len)), off, max, &count);
	return count;
}

void jsonpos_linecol(const char *text, size_t len, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	if (off > len)
		off = len;
	for (size_t i = skip_bom(text, len) > off ? off : skip_bom(text, len); i < off; i++) {
		unsigned char b = (unsigned char)text[i];
		if (b == '\n') {
			l++;
			c = 1;
		} else if ((b & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

size_t jsonpos_end(const char *text, size_t len, size_t at)
{
	return skip_value(text, len, at);
}

size_t jsonpos_members(const char *text, size_t len, size_t at, size_t *key, size_t *val,
		       size_t max)
{
	size_t count = 0, i = at;
	if (i >= len || (text[i] != '{' && text[i] != '['))
		return 0;
	int obj = text[i] == '{';
	i = skip_ws(text, len, i + 1);
	while (i < len && text[i] != '}' && text[i] != ']') {
		size_t k = i;
		if (obj) {
			i = skip_ws(text, len, skip_string(text, len, i));
			i = skip_ws(text, len, i + 1); /* past ':' */
		}
		if (count < max) {
			if (key)
				key[count] = k;
			val[count] = i;
		}
		count++;
		i = skip_ws(text, len, skip_value(text, len, i));
		if (i < len && text[i] == ',')
			i = skip_ws(text, len, i + 1);
	}
	return count;
}
