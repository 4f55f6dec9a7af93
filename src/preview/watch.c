/* watch.c - inotify on the scene's directory and its images' (watch.h). */
#include "preview/watch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* saves (by rename or in place), and the scene deleted, moved away or made again as
 * something else (a FIFO, a directory), so the page says so and recovers */
#define WATCH_MASK                                                                         \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM | IN_CREATE)

typedef struct watched {
	int wd;
	char dir[PATH_MAX];
	char name[PATH_MAX];
} watched;

struct pv_watch {
	pv_state *st;
	char scene[PATH_MAX];
	int fd, stop_pipe[2];
	pthread_t thread;
	watched files[1 + PV_WATCH_MAX_FILES];
	int nfiles;
};

/* Splits path into its directory and last component; -1 if either does not fit. */
static int split(const char *path, char *dir, size_t nd, char *name, size_t nn)
{
	const char *slash = strrchr(path, '/');
	size_t dl = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	const char *base = slash ? slash + 1 : path;
	if (dl >= nd || strlen(base) >= nn)
		return -1;
	memcpy(dir, slash ? path : ".", dl);
	dir[dl] = '\0';
	memcpy(name, base, strlen(base) + 1);
	return 0;
}

static void add_file(pv_watch *w, const char *path)
{
	if (w->nfiles >= 1 + PV_WATCH_MAX_FILES)
		return;
	watched *f = &w->files[w->nfiles];
	if (split(path, f->dir, sizeof f->dir, f->name, sizeof f->name) < 0)
		return;
	f->wd = inotify_add_watch(w->fd, f->dir, WATCH_MASK);
	if (f->wd >= 0)
		w->nfiles++;
}

/* A few steps of JSON, enough to find one string member in the scene's text without a
 * parser (scene/ is the only cJSON user): each returns where it stopped, or NULL on text
 * that is not JSON. */
#define JSON_MAX_DEPTH 64

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* p at '"': the string, decoded into out (n bytes; NULL: skipped). Escapes of non-ASCII
 * code points give NULL (a file name spelt that way is not watched). */
static const char *scan_string(const char *p, char *out, size_t n)
{
	size_t k = 0;
	for (p++; *p != '"'; p++) {
		char c = *p;
		if ((unsigned char)c < 0x20)
			return NULL; /* also the end of the text */
		if (c == '\\') {
			switch (*++p) {
			case '"': case '\\': case '/': c = *p; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned v = 0;
				for (int i = 1; i <= 4; i++) { /* stops at the text's end too */
					char h = p[i];
					int d = h >= '0' && h <= '9'   ? h - '0'
						: h >= 'a' && h <= 'f' ? h - 'a' + 10
						: h >= 'A' && h <= 'F' ? h - 'A' + 10
								       : -1;
					if (d < 0)
						return NULL;
					v = v * 16 + (unsigned)d;
				}
				if (v == 0 || (v >= 0x80 && out))
					return NULL;
				c = (char)v;
				p += 4;
				break;
			}
			default: return NULL;
			}
		}
		if (out) {
			if (k + 1 >= n)
				return NULL;
			out[k++] = c;
		}
	}
	if (out)
		out[k] = '\0';
	return p + 1;
}

static const char *skip_value(const char *p, int depth)
{
	p = skip_ws(p);
	if (depth > JSON_MAX_DEPTH)
		return NULL;
	if (*p == '"')
		return scan_string(p, NULL, 0);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		p = skip_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (*p != '"' || !(p = scan_string(p, NULL, 0)))
					return NULL;
				p = skip_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			if (!(p = skip_value(p, depth + 1)))
				return NULL;
			p = skip_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
			p = skip_ws(p);
		}
	}
	/* a number, true, false or null */
	const char *q = p;
	while (*p && strchr("+-.0123456789eEtruefalsn", *p))
		p++;
	return p > q ? p : NULL;
}

/* obj at '{': where the value of member `key` starts, or NULL. */
static const char *find_member(const char *obj, const char *key)
{
	const char *p = skip_ws(obj + 1);
	while (*p == '"') {
		char name[64];
		const char *after = scan_string(p, name, sizeof name);
		int match = after && !strcmp(name, key);
		if (!after && !(after = scan_string(p, NULL, 0))) /* a long name: not ours */
			return NULL;
		p = skip_ws(after);
		if (*p++ != ':')
			return NULL;
		p = skip_ws(p);
		if (match)
			return p;
		if (!(p = skip_value(p, 1)))
			return NULL;
		p = skip_ws(p);
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
	return NULL;
}

/* The background image the scene names, read from the file on disk (so a scene that
 * fails to load because of its image still has the image watched). A file that is not
 * JSON (a broken save) keeps the files of the last readable one. */
static void named_files(pv_watch *w)
{
	char *text;
	size_t n;
	tp_error err = TP_ERROR_INIT;
	if (pv_read_scene(w->st, &text, &n, &err) < 0) /* never blocks: gone, a FIFO... */
		return;
	const char *root = skip_ws(text), *end = skip_value(root, 0), *bg, *img;
	char image[PATH_MAX] = "";
	int readable = *root == '{' && end && !*skip_ws(end);
	if (readable && (bg = find_member(root, "background")) && *bg == '{' &&
	    (img = find_member(bg, "image")) && *img == '"' &&
	    !scan_string(img, image, sizeof image))
		image[0] = '\0';
	free(text);
	if (!readable)
		return;
	w->nfiles = 1;
	if (image[0]) {
		char dir[PATH_MAX], name[PATH_MAX], path[PATH_MAX];
		int len = -1;
		if (split(w->scene, dir, sizeof dir, name, sizeof name) == 0)
			len = image[0] == '/' ? snprintf(path, sizeof path, "%s", image)
					      : snprintf(path, sizeof path, "%s/%s", dir, image);
		if (len > 0 && (size_t)len < sizeof path)
			add_file(w, path);
	}
}

static int relevant(const pv_watch *w, const struct inotify_event *ev)
{
	if (!ev->len)
		return 0;
	for (int i = 0; i < w->nfiles; i++) {
		const char *name = w->files[i].name;
		/* "img/../x.png" names end in their last component: compare that */
		const char *slash = strrchr(name, '/');
		if (w->files[i].wd == ev->wd && !strcmp(slash ? slash + 1 : name, ev->name))
			return 1;
	}
	return 0;
}

/* Reads the pending events; returns 1 if one concerns a watched file, -1 on error. */
static int drain(pv_watch *w)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	int hit = 0;
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof buf);
		if (n < 0)
			return errno == EAGAIN ? hit : -1;
		if (n == 0)
			return hit;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (relevant(w, ev))
				hit = 1;
			p += sizeof *ev + ev->len;
		}
	}
}

static void *run(void *arg)
{
	pv_watch *w = arg;
	struct pollfd pf[2] = {{w->fd, POLLIN, 0}, {w->stop_pipe[0], POLLIN, 0}};
	int pending = 0;
	for (;;) {
		int n = poll(pf, 2, pending ? PV_WATCH_QUIET_MS : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (pf[1].revents & (POLLIN | POLLHUP)))
			break;
		if (n == 0) { /* quiet since the last event of a save: reload */
			pending = 0;
			pv_state_reload(w->st);
			named_files(w);
			continue;
		}
		int hit = drain(w);
		if (hit < 0)
			break;
		pending |= hit;
	}
	return NULL;
}

int pv_watch_start(pv_state *st, const char *scene_path, pv_watch **out, char *why, size_t n)
{
	*out = NULL;
	pv_watch *w = calloc(1, sizeof *w);
	if (!w) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	w->st = st;
	snprintf(w->scene, sizeof w->scene, "%s", scene_path);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0 || pipe(w->stop_pipe) < 0) {
		snprintf(why, n, "cannot watch the scene (%s)", strerror(errno));
		if (w->fd >= 0)
			close(w->fd);
		free(w);
		return -1;
	}
	add_file(w, scene_path);
	if (w->nfiles != 1) {
		snprintf(why, n, "cannot watch the directory of %s (%s)", scene_path,
			 strerror(errno));
		goto fail;
	}
	named_files(w);
	if (pthread_create(&w->thread, NULL, run, w) != 0) {
		snprintf(why, n, "cannot start the watcher thread");
		goto fail;
	}
	*out = w;
	return 0;
fail:
	close(w->fd);
	close(w->stop_pipe[0]);
	close(w->stop_pipe[1]);
	free(w);
	return -1;
}

void pv_watch_stop(pv_watch *w)
{
	if (!w)
		return;
	close(w->stop_pipe[1]);
	pthread_join(w->thread, NULL);
	close(w->stop_pipe[0]);
	close(w->fd);
	free(w);
}
