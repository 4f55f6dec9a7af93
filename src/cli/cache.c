/* tidepool cache: simulate once, write checkpoints for `render --range A-B --cache DIR`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sceneopts.h"
#include "tidepool.h"
#include "util/fsutil.h"
#include "util/progress.h"

typedef struct cache_opts {
	cli_opts c; /* the shared options (sceneopts.h): the scene group and -y */
	cli_overrides ov;
	const char *dir;
	int every, threads, overwrite, quiet;
} cache_opts;

enum { OPT_EVERY = 1024 };

static const cli_row own[] = {
	{"out-dir", 'O', 1, 'O', "  -O, --out-dir DIR    where the checkpoints go (created if missing)\n",
	 0},
	{"every", 0, 1, OPT_EVERY,
	 "      --every N        frames between checkpoints (checkpoints at N, 2N, ...)\n", 0},
	{0},
};
/* The scene group in cache's words: only what makes the simulation matters here. */
static const cli_word scene_group_words[] = {
	{"frames", "      --frames N       frames of the render (overrides duration)\n"},
	{"size", "      --size WxH       render size in pixels (the scene is scaled to it)\n"},
	{"scale", "      --scale F        render size as a factor of the scene's size: 0.25, 25%, 2\n"},
	{"seed", "      --seed N         random seed\n"},
	{"set", "      --set KEY=VALUE  change a scene value; repeatable\n"
		"                       (--frames, --size/--scale, --seed and --set must be the same as\n"
		"                       the render's)\n"},
	{"threads",
	 "      --threads N      worker threads; 0 or absent: all cores; same bytes for every N\n"},
	{0},
};
static const cli_word overwrite_words[] = {
	{"overwrite", "  -y, --overwrite      replace checkpoints in DIR made for something else\n"},
	{0},
};
static const cli_part parts[] = {
	{.rows = own},
	{.rows = cli_scene_rows, .words = scene_group_words},
	{.rows = cli_overwrite_rows, .words = overwrite_words},
	{.rows = cli_quiet_rows},
	{.rows = cli_help_rows},
	{0},
};

/* -O DIR and --every N, cache's own. */
static int own_option(void *ctx, const cli_row *row, const char *arg)
{
	cache_opts *o = ctx;
	long v;
	if (row->id == 'O') {
		o->dir = arg;
		return 0;
	}
	if (tp_parse_int(arg, 1, TP_MAX_FRAMES, &v))
		return tp_cli_usage("cache", "--every: expected a whole number 1..%d (got '%s')",
				    TP_MAX_FRAMES, arg);
	o->every = (int)v;
	return 0;
}

const cli_scene_cmd cli_cache_cmd = {
	.cmd = "cache",
	.head = "usage: tidepool cache SCENE -O DIR --every N [options]\n"
		"\n"
		"Runs the simulation of SCENE only (nothing is rendered) and writes a checkpoint\n"
		"every N frames, DIR/frame-NNNNNNNN.tpck, for 'tidepool render --range A-B --cache\n"
		"DIR'. A checkpoint holds the whole state the next frames depend on, is written\n"
		"atomically and is refused, with the reason, by a render of another scene, size,\n"
		"option set or tidepool version. Checkpoints already in DIR that match are kept:\n"
		"running the command again after an interruption continues from the last one.\n"
		"\n",
	.parts = parts,
	.tail = "\n"
		"Exit status: 0 done, 2 usage error, 3 bad scene, or DIR holds checkpoints of\n"
		"another scene (without -y), 4 I/O or runtime error, 130 interrupted (the\n"
		"checkpoints written so far are complete).\n",
	.handle = own_option,
};

static int parse_args(int argc, char **argv, cache_opts *o, const char **scene_file)
{
	o->c.crf = -1;
	int rc = cli_opts_parse(&cli_cache_cmd, o, argc, argv, &o->c);
	if (rc)
		return rc;
	int first = o->c.first;
	if (first >= argc)
		return tp_cli_usage("cache", "no scene file given");
	if (first + 1 < argc)
		return tp_cli_usage("cache", "one scene at a time (got '%s' too)", argv[first + 1]);
	if (!o->dir)
		return tp_cli_usage("cache", "no cache directory: give -O DIR");
	if (!o->every)
		return tp_cli_usage("cache", "give --every N (frames between checkpoints)");
	*scene_file = argv[first];
	o->ov = o->c.ov;
	o->threads = o->c.threads;
	o->overwrite = o->c.overwrite;
	o->quiet = o->c.quiet;
	return 0;
}

/* DIR/.tidepool-cache.lock, flock()ed while this run writes DIR and holding the
 * fingerprint of what it writes. Another run of other settings is refused with the
 * reason; one of the same settings waits for it, then continues after its checkpoints.
 * The lock goes with the process (a killed run leaves an unlocked, harmless file).
 * Returns the descriptor to keep open, or a negative code. */
static int lock_cache(const char *dir, const char *mine, int quiet, tp_err *err)
{
	char path[4352], theirs[128] = "";
	snprintf(path, sizeof path, "%s/.tidepool-cache.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
	struct stat st;
	if (fd < 0)
		return tp_errpath(err, TP_EIO, path, "cannot create the lock file (%s)",
			       strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tp_errf(err, TP_EIO, "%s: is not a regular file (remove it)", path);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		ssize_t k = e == EWOULDBLOCK ? pread(fd, theirs, sizeof theirs - 1, 0) : -1;
		theirs[k > 0 ? k : 0] = 0;
		if (e != EWOULDBLOCK || strncmp(theirs, mine, 64)) {
			char *nl = strchr(theirs, '\n');
			if (nl)
				*nl = 0;
			close(fd);
			return e == EWOULDBLOCK
				       ? tp_errf(err, TP_EIO,
						 "%s: being written by another 'tidepool cache' of other "
						 "settings (%s holds %s); wait for it or use another "
						 "directory",
						 dir, path, theirs[0] ? theirs : "its lock")
				       : tp_errpath(err, TP_EIO, path, "cannot lock (%s)", strerror(e));
		}
		if (!quiet)
			fprintf(stderr, "tidepool: %s: another 'tidepool cache' of the same settings "
					"is writing it; waiting\n",
				dir);
		if (flock(fd, LOCK_EX) != 0) {
			int why = errno;
			close(fd);
			return why == EINTR ? TP_EINTR
					    : tp_errpath(err, TP_EIO, path, "cannot lock (%s)",
						      strerror(why));
		}
	}
	char rec[192];
	int len = snprintf(rec, sizeof rec, "%s pid %ld\n", mine, (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, rec, (size_t)len, 0) != len) {
		int e = errno;
		close(fd);
		return tp_errpath(err, TP_EIO, path, "write failed (%s)", strerror(e));
	}
	return fd;
}

static void human(double bytes, char *buf, size_t n)
{
	if (bytes >= 1e9)
		snprintf(buf, n, "%.2f GB", bytes / 1e9);
	else if (bytes >= 1e6)
		snprintf(buf, n, "%.2f MB", bytes / 1e6);
	else
		snprintf(buf, n, "%.1f kB", bytes / 1e3);
}

int cmd_cache(int argc, char **argv)
{
	cache_opts o = {0};
	const char *scene_file = NULL;
	int prc = parse_args(argc, argv, &o, &scene_file);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;

	tp_err err = {""};
	tp_error e = TP_ERROR_INIT;
	tp_scene *sc = NULL;
	int rc, lock = -1;
	tp_cli_catch_signals();
	int threads = tp_cli_threads(o.threads);
	if ((rc = cli_load(scene_file, &o.ov, threads, &sc, &err)) < 0)
		goto fail;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_info(sc, &in);
	tp_scene_set_cancel(sc, &tp_cli_interrupted);
	char probe[4352];
	snprintf(probe, sizeof probe, "%s/x", o.dir);
	if ((rc = tp_mkdirs_for(probe, &err)) < 0 || (rc = tp_dir_writable(o.dir, &err)) < 0)
		goto fail;
	char fp[65];
	tp_scene_fingerprint(sc, NULL, fp);
	if ((lock = rc = lock_cache(o.dir, fp, o.quiet, &err)) < 0)
		goto fail;

	/* The last checkpoint a render can use is before its last frame. */
	const int last = (in.frames - 1) / o.every * o.every;
	/* Continue after the last checkpoint of an unbroken run of ours from the start (so a
	 * lost one in the middle is made again); another scene's is an error without -y. */
	int from = 0;
	char path[4352];
	for (int k = o.every; k <= last; k += o.every) {
		if (tp_checkpoint_path(o.dir, k, path, sizeof path) < 0) {
			rc = tp_errf(&err, TP_EUSAGE, "%s: path too long", o.dir);
			goto fail;
		}
		if (!tp_path_exists(path))
			break;
		if ((rc = tp_scene_check_checkpoint(sc, o.dir, k, &e)) < 0) {
			if (!o.overwrite) {
				rc = tp_errprefix(&err, cli_api_err(&e, &err), "cache");
				goto fail;
			}
			rc = 0;
			break;
		}
		from = k;
	}
	if (from > 0 && (rc = tp_scene_load_checkpoint(sc, o.dir, from, &e)) != from) {
		rc = rc < 0 ? cli_api_err(&e, &err)
			    : tp_errf(&err, TP_EIO, "%s: the checkpoint of frame %d went away",
				      o.dir, from);
		tp_errprefix(&err, rc, "cache");
		goto fail;
	}

	tp_progress prog;
	tp_progress_start(&prog, "cache", last, o.quiet);
	double start = tp_now(), total = 0, largest = 0;
	int written = 0;
	for (int k = from; k < last && !tp_cli_interrupted; k++) {
		/* no frame is looked at: surfaces only where the solver needs them */
		if ((rc = tp_scene_pass(sc, &e)) < 0) {
			rc = rc == TP_ERROR_CANCELLED ? 0 : cli_api_err(&e, &err);
			break;
		}
		if ((k + 1) % o.every == 0) {
			uint64_t bytes = 0;
			if ((rc = tp_scene_save_checkpoint(sc, o.dir, &bytes, &e)) < 0) {
				rc = cli_api_err(&e, &err);
				break;
			}
			written++;
			total += (double)bytes;
			largest = (double)bytes > largest ? (double)bytes : largest;
		}
		tp_progress_update(&prog, k + 1);
	}
	if (rc < 0) {
		tp_progress_done(&prog, NULL);
		goto fail;
	}
	char summary[4608], each[32], all[32];
	human(largest, each, sizeof each);
	human(total, all, sizeof all);
	double el = tp_now() - start;
	if (written)
		snprintf(summary, sizeof summary,
			 "%s %d checkpoint%s (every %d frames, %s each at most, %s in all) to %s "
			 "in %.2f s",
			 tp_cli_interrupted ? "interrupted after" : "wrote", written,
			 written == 1 ? "" : "s", o.every, each, all, o.dir, el);
	else
		snprintf(summary, sizeof summary, "%s: %s", o.dir,
			 last == 0 ? "no checkpoint needed (fewer frames than --every)"
				   : "every checkpoint is there already");
	tp_progress_done(&prog, summary);
	rc = tp_cli_interrupted ? TP_EINTR : 0;

fail:
	if (lock >= 0)
		close(lock);
	tp_scene_free(sc);
	if (rc < 0 && rc != TP_EINTR)
		return tp_cli_fail(rc, &err);
	return tp_exit_code(rc);
}
