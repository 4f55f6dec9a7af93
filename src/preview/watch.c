/* watch.c - inotify on the scene's directory and its images' (watch.h). */
#include "preview/watch.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB)

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

/* The background image the scene names, read from the file on disk (so a scene that
 * fails to load because of its image still has the image watched). */
static void named_files(pv_watch *w)
{
	FILE *f = fopen(w->scene, "rb");
	if (!f)
		return;
	char *text = malloc((size_t)4 << 20);
	size_t n = text ? fread(text, 1, ((size_t)4 << 20) - 1, f) : 0;
	fclose(f);
	if (!text)
		return;
	text[n] = '\0';
	cJSON *root = cJSON_Parse(text);
	free(text);
	if (!root)
		return; /* a broken save: keep the files of the last readable one */
	w->nfiles = 1;
	const cJSON *bg = cJSON_GetObjectItemCaseSensitive(root, "background");
	const cJSON *img = cJSON_GetObjectItemCaseSensitive(bg, "image");
	if (cJSON_IsString(img) && img->valuestring[0]) {
		char dir[PATH_MAX], name[PATH_MAX], path[PATH_MAX];
		int len = -1;
		if (split(w->scene, dir, sizeof dir, name, sizeof name) == 0)
			len = img->valuestring[0] == '/'
				      ? snprintf(path, sizeof path, "%s", img->valuestring)
				      : snprintf(path, sizeof path, "%s/%s", dir, img->valuestring);
		if (len > 0 && (size_t)len < sizeof path)
			add_file(w, path);
	}
	cJSON_Delete(root);
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
