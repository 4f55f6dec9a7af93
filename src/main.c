/* tidepool - batch renderer for water. main() dispatches through the command table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

typedef struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} command;

static const command commands[] = {
	{ "render", cmd_render, "simulate a scene and write PNG frames, an MP4 or nothing" },
	{ "validate", cmd_validate, "check scene files without rendering" },
	{ "solvers", cmd_solvers, "list solvers and their parameters" },
	{ "batch", cmd_batch, "render every combination of varied scene values, with a contact sheet" },
	{ "compare", cmd_compare, "compare frames (PNG, directory, MP4, hash manifest) with tolerances" },
};

static void print_help(FILE *f)
{
	fprintf(f, "usage: tidepool COMMAND [options]\n\n"
		   "tidepool simulates water described by a JSON scene file and renders it.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'tidepool COMMAND --help' describes a command; the scene format is in\n"
		   "scenes/README.md. Options: -h/--help, -V/--version.\n");
}

static int finish(int status)
{
	/* Interrupted by a broken pipe rather than Ctrl-C: the shell's 128 + SIGPIPE. */
	if (status == TP_EXIT_INTR && tp_cli_broken_pipe())
		status = TP_EXIT_PIPE;
	/* A full disk or closed pipe on stdout must not pass silently. */
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		fprintf(stderr, "tidepool: error writing to standard output\n");
		return status ? status : TP_EXIT_IO;
	}
	return status;
}

/* tidepool's OpenMP loops share the cores with its own encoder threads (x264, PNG), so
 * idle OpenMP workers must not spin for long: libgomp's default (300000 spins, about 15 ms
 * here) took enough CPU from x264 to slow MP4 renders by ~10%. Sleeping at once
 * (OMP_WAIT_POLICY=passive) costs a futex wake-up per parallel loop instead, which
 * doubled the sph solver's time at 5,000 particles (four short loops per substep). A short
 * spin, GOMP_SPINCOUNT=5000 (about 0.3 ms), keeps the workers awake between the loops of
 * one step and asleep while the encoder works. libgomp reads these only when it loads,
 * so the default is set by re-executing once; a user's own setting of either is kept. */
#define TP_SPINCOUNT "5000"

static void prefer_short_spinning(char **argv)
{
	if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
		return;
	if (setenv("GOMP_SPINCOUNT", TP_SPINCOUNT, 1) != 0)
		return;
	execv("/proc/self/exe", argv);
	/* No /proc: carry on with libgomp's default. */
}

int main(int argc, char **argv)
{
	prefer_short_spinning(argv);
	if (argc < 2) {
		print_help(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
				if (!strcmp(argv[2], commands[i].name)) {
					char *args[] = { argv[2], "--help", NULL };
					return finish(commands[i].run(2, args));
				}
		}
		print_help(stdout);
		return finish(0);
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("tidepool %s\n", TP_VERSION);
		return finish(0);
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(cmd, commands[i].name))
			return finish(commands[i].run(argc - 1, argv + 1));
	fprintf(stderr, "tidepool: unknown command '%s' (see 'tidepool --help')\n", cmd);
	return 2;
}
