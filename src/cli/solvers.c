/* tidepool solvers: list the solvers with every parameter, its default and range. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solvers/solver.h"

static const char usage[] =
	"usage: tidepool solvers [NAME]\n"
	"\n"
	"Lists every solver (or the one named) with its parameters: the keys of a scene's\n"
	"\"params\" object, their defaults and allowed ranges. Pixels (px, px/s, px^2/s) are\n"
	"the scene's own: a render at another size scales them with the picture\n"
	"(scenes/README.md, \"Scene units and render size\").\n"
	"\n"
	"  -h, --help    show this help\n";

static void print_solver(const tp_solver *s)
{
	printf("%s - %s\n", s->name, s->description);
	if (!s->options || !s->options[0].name) {
		printf("    (no parameters)\n");
		return;
	}
	for (const tp_option *o = s->options; o->name; o++) {
		char def[64], range[256];
		tp_opts_range(o, range, sizeof range);
		if (o->type == TP_OPT_BOOL)
			snprintf(def, sizeof def, "%s", o->def != 0 ? "true" : "false");
		else if (o->type == TP_OPT_ENUM)
			snprintf(def, sizeof def, "\"%s\"", o->choices[(int)o->def]);
		else
			snprintf(def, sizeof def, "%g", o->def);
		printf("    %-16s default %-10s range %-16s %s\n", o->name, def, range, o->help);
	}
}

int cmd_solvers(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		return tp_cli_usage("solvers", "unknown option '%s'", argv[optind - 1]);
	}
	if (optind < argc) {
		const tp_solver *s = solver_find(argv[optind]);
		if (!s) {
			const char *names[64];
			int n = 0;
			for (; n < 63 && tp_solvers[n]; n++)
				names[n] = tp_solvers[n]->name;
			names[n] = NULL;
			const char *sug = tp_cli_suggest(argv[optind], names);
			if (sug)
				return tp_cli_usage("solvers", "no solver named '%s' (did you mean '%s'?)",
						    argv[optind], sug);
			return tp_cli_usage("solvers", "no solver named '%s'", argv[optind]);
		}
		print_solver(s);
		return 0;
	}
	for (int i = 0; tp_solvers[i]; i++) {
		if (i)
			putchar('\n');
		print_solver(tp_solvers[i]);
	}
	return 0;
}
