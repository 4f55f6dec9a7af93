/* tidepool preview: a local page that plays a scene and re-renders it on every save
 * (docs/preview.md). The server lives in src/preview/; this file parses the options,
 * prints the URL and waits for Ctrl-C. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/optrows.h"
#include "cli/sceneopts.h"
#include "preview/server.h"
#include "preview/state.h"
#include "preview/watch.h"

extern char **environ;

#define PV_DEFAULT_PORT 8740
#define PV_MAX_SETS     64

/* Ctrl-C and SIGTERM stop the server within a second: this long after the signal at the
 * latest (the main loop sees it within 100 ms). */
#define PV_STOP_DEADLINE_MS 800

static const char head[] =
	"usage: tidepool preview SCENE [options]\n"
	"\n"
	"Serves a page that plays SCENE in a loop and shows it again whenever the file\n"
	"(or a background image it names) is saved: play, pause, scrub, every render mode,\n"
	"overlays of drops, rain, boxes, emitters and the tank, a plot of the solver's stats,\n"
	"and the error with its line and column when a save is broken. The first line on\n"
	"standard output is the page's URL, with this run's secret: every request needs\n"
	"it. Ctrl-C stops the server.\n"
	"\n";

static const char tail[] =
	"\n"
	"HTTP API (docs/preview.md): GET /status.json, /frame/N.png?mode=MODE, /stats.json,\n"
	"/scene.json; POST /edit (from the page only).\n"
	"\n"
	"Exit status: 0 stopped by Ctrl-C or SIGTERM, 2 usage error, 3 bad scene path,\n"
	"4 cannot listen.\n";

enum { OPT_PORT = 256, OPT_SIZE, OPT_SCALE, OPT_SET, OPT_THREADS, OPT_OPEN, OPT_LISTEN,
       OPT_READ_ONLY };

const cli_row cli_preview_rows[] = {
	{"port", 0, 1, OPT_PORT,
	 "      --port N         TCP port (default 8740; 0: any free port)\n", 0},
	{"size", 0, 1, OPT_SIZE,
	 "      --size WxH       preview size in pixels (default: the scene scaled to fit\n"
	 "                       640x360)\n", 0},
	{"scale", 0, 1, OPT_SCALE,
	 "      --scale F        preview size as a factor of the scene's size: 0.5, 50%\n", 0},
	{"set", 0, 1, OPT_SET,
	 "      --set KEY=VALUE  change a scene value, as for render; repeatable\n", 0},
	{"threads", 0, 1, OPT_THREADS,
	 "      --threads N      worker threads (default: all cores)\n", 0},
	{"open", 0, 0, OPT_OPEN,
	 "      --open           open the page in the desktop's browser (xdg-open)\n", 0},
	{"read-only", 0, 0, OPT_READ_ONLY,
	 "      --read-only      the page does not edit the scene file (it does by default:\n"
	 "                       drag drops, keyframes, areas; docs/preview.md)\n", 0},
	{"listen", 0, 1, OPT_LISTEN,
	 "      --listen ADDR    listen on this numeric address instead of 127.0.0.1;\n"
	 "                       WARNING: anyone who can reach ADDR sees the scene and can\n"
	 "                       load your CPU (docs/preview.md)\n", 0},
	{"quiet", 'q', 0, 'q',
	 "  -q, --quiet          print only the URL and errors\n", 0},
	{"help", 'h', 0, 'h',
	 "  -h, --help           show this help\n", 0},
	{0},
};

/* What the options say, until cmd_preview takes it. */
typedef struct preview_opts {
	pv_config cfg;
	const char *sets[PV_MAX_SETS];
	long port, threads;
	int open, quiet, read_only;
	const char *listen;
} preview_opts;

/* Runs xdg-open URL without waiting for it; -1 when there is no xdg-open on the PATH
 * (glibc's posix_spawnp reports the failed exec). */
/* After Ctrl-C or SIGTERM: ends the process if the orderly stop takes too long (a scene
 * load does not look at the cancel flag). */
static void *stop_deadline(void *quiet)
{
	struct timespec ts = {0, PV_STOP_DEADLINE_MS * 1000000L};
	nanosleep(&ts, NULL);
	if (!quiet)
		fprintf(stderr, "tidepool: preview: stopped (work in flight cut short)\n");
	_exit(TP_EXIT_OK);
	return NULL;
}

static int open_browser(const char *url)
{
	char *argv[] = {"xdg-open", (char *)url, NULL};
	pid_t pid;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? 0 : -1;
}

/* One option's value into o (cli_rows.handle). */
static int handle(void *ctx, const cli_row *row, const char *arg)
{
	preview_opts *o = ctx;
	switch (row->id) {
	case OPT_PORT:
		if (tp_parse_int(arg, 0, 65535, &o->port))
			return tp_cli_usage("preview", "--port: expected 0..65535 (got %s)",
					    arg);
		break;
	case OPT_SIZE:
		if (tp_parse_size(arg, &o->cfg.width, &o->cfg.height))
			return tp_cli_usage("preview", "--size: expected WxH (got %s)",
					    arg);
		break;
	case OPT_SCALE:
		if (tp_parse_scale(arg, &o->cfg.scale))
			return tp_cli_usage("preview",
					    "--scale: expected a factor or a percentage "
					    "in 0..64, like 0.5 or 50%% (got %s)",
					    arg);
		break;
	case OPT_SET:
		if (o->cfg.nsets >= PV_MAX_SETS)
			return tp_cli_usage("preview", "--set: at most %d", PV_MAX_SETS);
		if (!strchr(arg, '='))
			return tp_cli_usage("preview", "--set: expected KEY=VALUE (got %s)",
					    arg);
		o->sets[o->cfg.nsets++] = arg;
		break;
	case OPT_THREADS:
		if (tp_parse_int(arg, 0, 1024, &o->threads))
			return tp_cli_usage("preview",
					    "--threads: expected 0..1024 (got %s)", arg);
		break;
	case OPT_OPEN: o->open = 1; break;
	case OPT_READ_ONLY: o->read_only = 1; break;
	case OPT_LISTEN: {
		unsigned char a[16];
		if (inet_pton(AF_INET, arg, a) != 1 &&
		    inet_pton(AF_INET6, arg, a) != 1)
			return tp_cli_usage("preview",
					    "--listen: expected a numeric IPv4 or IPv6 "
					    "address like 0.0.0.0 or ::1 (got %s)",
					    arg);
		o->listen = arg;
		break;
	}
	case 'q': o->quiet = 1; break;
	}
	return 0;
}

int cmd_preview(int argc, char **argv)
{
	preview_opts o = {.port = PV_DEFAULT_PORT};
	const cli_rows opts = {.cmd = "preview", .head = head, .rows = cli_preview_rows, .tail = tail,
			       .handle = handle, .ctx = &o, .unknown = "unknown option %s"};
	int at = 0, prc = cli_rows_parse(&opts, argc, argv, &at);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;
	pv_config cfg = o.cfg;
	const long port = o.port, threads = o.threads;
	const int open = o.open, quiet = o.quiet, read_only = o.read_only;
	const char *listen = o.listen;
	if (at >= argc)
		return tp_cli_usage("preview", "no scene file given");
	if (at + 1 < argc)
		return tp_cli_usage("preview", "one scene at a time (got %s and %s)", argv[at],
				    argv[at + 1]);
	if (cfg.width && cfg.scale > 0)
		return tp_cli_usage("preview", "--size and --scale: give one of them");
	cfg.scene_path = argv[at];
	cfg.sets = o.sets;
	cfg.names = cli_override_names;
	cfg.nnames = TP_OVERRIDE_COUNT;
	cfg.threads = (int)threads;

	tp_err e;
	struct stat sb;
	int missing = stat(cfg.scene_path, &sb) != 0;
	if (missing || !S_ISREG(sb.st_mode)) {
		tp_errf(&e, TP_EINPUT, "%s: %s", cfg.scene_path,
			missing ? strerror(errno) : "not a regular file");
		return tp_cli_fail(TP_EINPUT, &e);
	}

	tp_cli_catch_signals();
	signal(SIGPIPE, SIG_IGN); /* a page that goes away is not an interruption */
	tp_cli_threads((int)threads);

	pv_state *st = NULL;
	pv_server *srv = NULL;
	pv_watch *w = NULL;
	tp_error terr = TP_ERROR_INIT;
	char why[512];
	if (pv_state_create(&cfg, &st, &terr) < 0) {
		tp_errf(&e, TP_EIO, "%s", terr.text);
		return tp_cli_fail(TP_EIO, &e);
	}
	/* The watcher first, then the first load: a save made meanwhile is not missed. */
	if (pv_watch_start(st, cfg.scene_path, &w, why, sizeof why) < 0)
		fprintf(stderr, "tidepool: preview: warning: %s; saves will not be shown\n", why);
	pv_state_reload(st);
	if (pv_server_start(st, listen, (int)port, &srv, why, sizeof why) < 0) {
		pv_watch_stop(w);
		pv_state_destroy(st);
		tp_errf(&e, TP_EIO, "preview: %s%s", why,
			port ? "; --port 0 picks a free port" : "");
		return tp_cli_fail(TP_EIO, &e);
	}
	pv_server_set_edit(srv, cfg.scene_path,
			   read_only    ? "the preview runs with --read-only"
			   : cfg.nsets ? "--set changes the scene the page shows, not the file"
				       : NULL);
	printf("%s\n", pv_server_url(srv));
	fflush(stdout);
	if (listen && pv_server_reachable(srv))
		fprintf(stderr,
			"tidepool: preview: warning: listening on %s: anyone who can reach "
			"this address can watch the scene and load this machine\n",
			listen);

	pv_status s;
	pv_state_status(st, &s);
	if (s.has_error)
		fprintf(stderr, "tidepool: %s\n", s.error.text);
	else if (!quiet)
		fprintf(stderr,
			"tidepool: preview: %s (%s, %dx%d, %d frames at %g fps); Ctrl-C stops\n",
			s.path, s.solver, s.info.width, s.info.height, s.info.frames, s.info.fps);
	if (open && open_browser(pv_server_url(srv)) < 0)
		fprintf(stderr,
			"tidepool: preview: --open: xdg-open not found; open %s in a browser\n",
			pv_server_url(srv));

	/* Report each reload on the terminal too, until Ctrl-C or SIGTERM. */
	unsigned long seen = s.generation;
	int seen_error = s.has_error;
	while (!tp_cli_interrupted) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0) /* xdg-open's exit */
			;
		pv_state_status(st, &s);
		if (s.generation == seen && s.has_error == seen_error)
			continue;
		seen = s.generation;
		seen_error = s.has_error;
		if (s.has_error)
			fprintf(stderr, "tidepool: %s\n", s.error.text);
		else if (!quiet)
			fprintf(stderr, "tidepool: preview: reloaded %s (generation %lu)\n", s.path,
				s.generation);
	}
	/* Within a second whatever runs: the simulations in flight stop within a step; a
	 * load that still runs past the deadline (nothing is being written) is cut short. */
	pthread_t dog;
	if (pthread_create(&dog, NULL, stop_deadline, (void *)(intptr_t)quiet) == 0)
		pthread_detach(dog);
	pv_state_stop(st);
	pv_watch_stop(w);
	pv_server_stop(srv);
	pv_state_destroy(st);
	if (!quiet)
		fprintf(stderr, "tidepool: preview: stopped\n");
	return TP_EXIT_OK;
}
