/* edit.c - POST /edit: checks the version, applies jsonedit.h's operations to the scene
 * file and replaces it atomically (edit.h). */
#include "preview/edit.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preview/json.h"
#include "preview/jsonedit.h"
#include "scene/jsonpos.h"

/* One edit at a time: two pages (or two tabs) each check the version, then write. */
static pthread_mutex_t edit_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t bom_len(const char *s, size_t n)
{
	return n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

void pv_edit_version(const char *text, size_t len, char hex[PV_VERSION_HEX])
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	size_t b = bom_len(text, len);
	sha256_init(&ctx);
	sha256_update(&ctx, len - b, (const uint8_t *)text + b);
	sha256_digest(&ctx, sizeof d, d);
	for (int i = 0; i < (PV_VERSION_HEX - 1) / 2; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static unsigned fail(unsigned status, char **answer, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static unsigned fail(unsigned status, char **answer, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pv_json j;
	pv_json_init(&j);
	pv_json_puts(&j, "{\"error\":");
	pv_json_string(&j, msg);
	pv_json_puts(&j, "}\n");
	*answer = pv_json_finish(&j);
	return status;
}

/* The whole file into *text (malloc'd, NUL-terminated), its mode into *mode. */
static int read_scene(const char *path, char **text, size_t *len, mode_t *mode, char *why, size_t n)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > PV_JEDIT_MAX_TEXT + 3) {
		snprintf(why, n, "%.400s: %s", path,
			 fd < 0 && errno == ELOOP ? "a symbolic link (edit the file it names)"
			 : fd < 0                 ? strerror(errno)
			 : !S_ISREG(sb.st_mode)   ? "not a regular file"
						  : "too large to edit");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *s = malloc((size_t)sb.st_size + 1);
	size_t got = 0;
	ssize_t r = 1;
	while (s && got < (size_t)sb.st_size &&
	       (r = read(fd, s + got, (size_t)sb.st_size - got)) > 0)
		got += (size_t)r;
	close(fd);
	if (!s || r < 0) {
		snprintf(why, n, "%.400s: %s", path, s ? strerror(errno) : "out of memory");
		free(s);
		return -1;
	}
	s[got] = '\0';
	*text = s;
	*len = got;
	*mode = sb.st_mode & 07777;
	return 0;
}

/* Writes head + body to a temporary file beside path with its mode, then renames it over
 * path: readers (the watcher's reload, an editor) see the old text or the new, whole. */
static int write_scene(const char *path, mode_t mode, const char *head, size_t headn,
		       const char *body, size_t bodyn, char *why, size_t n)
{
	char tmp[1100];
	const char *slash = strrchr(path, '/');
	int dirn = slash ? (int)(slash - path + 1) : 0;
	if (snprintf(tmp, sizeof tmp, "%.*s.%s.tidepool-XXXXXX", dirn, path,
		     slash ? slash + 1 : path) >= (int)sizeof tmp) {
		snprintf(why, n, "%.400s: path too long", path);
		return -1;
	}
	int fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(why, n, "cannot write beside %.400s: %s", path, strerror(errno));
		return -1;
	}
	int ok = fchmod(fd, mode) == 0;
	for (size_t k = 0; ok && k < 2; k++) {
		const char *p = k ? body : head;
		size_t left = k ? bodyn : headn;
		while (ok && left) {
			ssize_t w = write(fd, p, left);
			ok = w > 0;
			p += ok ? w : 0;
			left -= ok ? (size_t)w : 0;
		}
	}
	ok = ok && fsync(fd) == 0;
	int e = errno;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		e = ok ? errno : e;
		unlink(tmp);
		snprintf(why, n, "cannot write %.400s: %s", path, strerror(e));
		return -1;
	}
	return 0;
}

static unsigned status_of(int rc)
{
	switch (rc) {
	case PV_JEDIT_BAD: return 400;
	case PV_JEDIT_TOOBIG: return 413;
	case PV_JEDIT_NOMEM: return 500;
	default: return 422;
	}
}

unsigned pv_edit_request(const pv_edit_config *cfg, const char *body, size_t n, char **answer)
{
	*answer = NULL;
	if (!cfg->path[0])
		return fail(403, answer, "editing is off: %s", cfg->off);
	size_t off;
	const char *why;
	if (n > PV_EDIT_MAX_BODY)
		return fail(413, answer, "an edit is at most %d bytes", PV_EDIT_MAX_BODY);
	if (jsonpos_check_text(body, n, &off, &why) < 0 || jsonpos_check(body, n, &off, &why) < 0)
		return fail(400, answer, "the request is not JSON (byte %zu: %s)", off, why);
	cJSON *req = cJSON_ParseWithLength(body, n);
	if (!req)
		return fail(500, answer, "out of memory");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(req, "version");
	const cJSON *ops = cJSON_GetObjectItemCaseSensitive(req, "ops");
	if (!cJSON_IsString(ver) || !cJSON_IsArray(ops)) {
		cJSON_Delete(req);
		return fail(400, answer, "an edit is {\"version\": V, \"ops\": [...]}");
	}
	char msg[600];
	char *text = NULL;
	size_t len;
	mode_t mode;
	unsigned status = 200;
	pv_jedit ed = {0};
	pthread_mutex_lock(&edit_mu);
	if (read_scene(cfg->path, &text, &len, &mode, msg, sizeof msg) < 0) {
		status = fail(500, answer, "%s", msg);
		goto out;
	}
	char now[PV_VERSION_HEX], next[PV_VERSION_HEX];
	pv_edit_version(text, len, now);
	if (strcmp(now, ver->valuestring)) {
		status = fail(409, answer,
			      "the file changed on disk: %.400s is not the version the page loaded "
			      "(it will show the file as it is now)",
			      cfg->path);
		goto out;
	}
	size_t b = bom_len(text, len);
	int rc = pv_jedit_apply(text + b, len - b, ops, &ed, msg, sizeof msg);
	if (rc < 0) {
		status = fail(status_of(rc), answer, "%s", msg);
		goto out;
	}
	if (write_scene(cfg->path, mode, text, b, ed.text, ed.len, msg, sizeof msg) < 0) {
		status = fail(500, answer, "%s", msg);
		goto out;
	}
	pv_edit_version(ed.text, ed.len, next);
	pv_json j;
	pv_json_init(&j);
	pv_json_printf(&j, "{\"version\":\"%s\",\"undo\":%s,\"redo\":%s}\n", next, ed.undo,
		       ed.redo);
	if (!(*answer = pv_json_finish(&j)))
		status = 500;
out:
	pthread_mutex_unlock(&edit_mu);
	pv_jedit_free(&ed);
	free(text);
	cJSON_Delete(req);
	return status;
}
