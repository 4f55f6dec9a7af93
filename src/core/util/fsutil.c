#include "util/fsutil.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void tp_path_dir(const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(buf, n, ".");
	else if (slash == path)
		snprintf(buf, n, "/");
	else
		snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

int tp_path_join(const char *dir, const char *rel, char *buf, size_t n)
{
	int len;
	if (rel[0] == '/' || !dir || !dir[0] || !strcmp(dir, "."))
		len = snprintf(buf, n, "%s", rel);
	else
		len = snprintf(buf, n, "%s/%s", dir, rel);
	return (len < 0 || (size_t)len >= n) ? TP_EINPUT : 0;
}

int tp_stream_fd(const char *path)
{
	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	const char *n = NULL;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || !*n || strlen(n) > 6)
		return -1;
	for (const char *c = n; *c; c++)
		if (!isdigit((unsigned char)*c))
			return -1;
	int fd = atoi(n);
	return fd >= 1 && fcntl(fd, F_GETFD) != -1 ? fd : -1;
}

int tp_is_special(const char *path)
{
	if (tp_stream_fd(path) >= 0)
		return 1;
	struct stat st;
	return stat(path, &st) == 0 &&
	       (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

int tp_check_output(const char *path, int overwrite, int allow_direct, tp_err *err)
{
	if (allow_direct && tp_is_special(path))
		return 0;
	char dir[4096];
	tp_path_dir(path, dir, sizeof dir);
	int rc = tp_dir_writable(dir, err);
	if (rc < 0)
		return tp_errprefix(err, rc, "%s", path);
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
		return 0; /* a dangling link: replaced by the file */
	if (S_ISDIR(st.st_mode))
		return tp_errpath(err, TP_EIO, path, "is a directory");
	if (!S_ISREG(st.st_mode))
		return tp_errf(err, TP_EIO, "%s: not a regular file; refusing to replace it", path);
	if (!overwrite)
		return tp_errpath(err, TP_EIO, path, "already exists (use -y to overwrite)");
	return 0;
}

int tp_path_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int tp_dir_writable(const char *dir, tp_err *err)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return tp_errpath(err, TP_EIO, dir, "directory does not exist");
	if (!S_ISDIR(st.st_mode))
		return tp_errpath(err, TP_EIO, dir, "not a directory");
	if (access(dir, W_OK | X_OK) != 0)
		return tp_errpath(err, TP_EIO, dir, "directory is not writable (%s)", strerror(errno));
	return 0;
}

int tp_mkdirs_for(const char *path, tp_err *err)
{
	char dir[4096];
	tp_path_dir(path, dir, sizeof dir);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0777) != 0 && errno != EEXIST)
			return tp_errpath(err, TP_EIO, dir, "cannot create directory (%s)", strerror(errno));
		*p = '/';
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return tp_errpath(err, TP_EIO, dir, "cannot create directory (%s)", strerror(errno));
	return 0;
}

int tp_commit_file(const char *tmp, const char *path, tp_err *err)
{
	/* rename() is atomic: readers see the old file or the complete new one, never a torn
	 * one. (No fsync per file: it would dominate PNG-sequence time; the writer has already
	 * checked every write and fclose for ENOSPC/EIO.) */
	struct stat st;
	char real[PATH_MAX];
	const char *dest = path;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) == 0 &&
	    S_ISREG(st.st_mode) && realpath(path, real))
		dest = real; /* a link to a file: the file is replaced, the link kept */
	if (lstat(dest, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		/* Never swap a device, pipe or directory for a regular file. */
		unlink(tmp);
		return tp_errf(err, TP_EIO, "%s: not a regular file; refusing to replace it", path);
	}
	if (rename(tmp, dest) != 0) {
		int e = errno;
		unlink(tmp);
		return tp_errpath(err, TP_EIO, path, "cannot rename into place (%s)", strerror(e));
	}
	return 0;
}

int tp_pattern_kind(const char *p)
{
	int convs = 0;
	for (; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			p++;
			continue;
		}
		p++;
		long width = 0;
		for (; isdigit((unsigned char)*p); p++)
			if ((width = width * 10 + (*p - '0')) > TP_PATTERN_MAX_WIDTH)
				return -1;
		if (*p != 'd')
			return -1;
		convs++;
	}
	return convs > 1 ? -1 : convs;
}

int tp_wopen(tp_wfile *w, const char *path, tp_err *err)
{
	w->f = NULL;
	w->tmp[0] = 0;
	w->path = path;
	w->direct = tp_is_special(path);
	int fd = tp_stream_fd(path);
	if (fd >= 0) {
		int d = dup(fd);
		w->f = d >= 0 ? fdopen(d, "w") : NULL;
		if (!w->f && d >= 0)
			close(d);
	} else if (w->direct) {
		w->f = fopen(path, "w");
	} else {
		/* Hidden and pid-tagged like the encoders' temporary files. */
		char dir[4096];
		const char *base = strrchr(path, '/');
		tp_path_dir(path, dir, sizeof dir);
		snprintf(w->tmp, sizeof w->tmp, "%s/.%s.tmp-%ld", dir, base ? base + 1 : path,
			 (long)getpid());
		w->f = fopen(w->tmp, "w");
	}
	if (!w->f) {
		int e = errno;
		w->tmp[0] = 0;
		return tp_errpath(err, TP_EIO, path, "cannot create (%s)", strerror(e));
	}
	return 0;
}

int tp_wclose(tp_wfile *w, int ok, tp_err *err)
{
	if (!w->f)
		return 0;
	int bad = fflush(w->f) != 0 || ferror(w->f);
	int e = errno;
	if (fclose(w->f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	w->f = NULL;
	int rc = 0;
	if (bad && ok)
		rc = tp_errpath(err, TP_EIO, w->path, "write error (%s)", strerror(e));
	if (w->tmp[0]) {
		if (ok && !bad)
			rc = tp_commit_file(w->tmp, w->path, err);
		else
			unlink(w->tmp);
		w->tmp[0] = 0;
	}
	return rc;
}

static const char *file_type(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

int tp_fopen_regular(const char *path, const char *what, FILE **out, tp_err *err)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return tp_errpath(err, TP_EIO, path, "cannot open (%s)", strerror(errno));
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0)
		rc = tp_errpath(err, TP_EIO, path, "cannot read (%s)", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = tp_errf(err, TP_EINPUT, "%s: is %s, not %s (only regular files are read)", path,
			     file_type(st.st_mode), what);
	if (rc == 0) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || !(*out = fdopen(fd, "rb")))
			rc = tp_errpath(err, TP_EIO, path, "cannot open (%s)", strerror(errno));
	}
	if (rc < 0)
		close(fd);
	return rc;
}

void tp_temp_name(const char *path, char *buf, size_t n)
{
	char dir[4096];
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	tp_path_dir(path, dir, sizeof dir);
	/* Hidden and pid-tagged: never mistaken for output, never shared by two renders. */
	snprintf(buf, n, "%s/.%s.tmp-%ld", dir, base, (long)getpid());
}

int tp_has_suffix(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);
	return n > e && !strcasecmp(path + n - e, ext);
}

int tp_is_mp4_path(const char *path)
{
	return tp_has_suffix(path, ".mp4") || tp_has_suffix(path, ".m4v") || tp_has_suffix(path, ".mov");
}
