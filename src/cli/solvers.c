/* tidepool solvers: list the solvers with every parameter, its default and range. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "tidepool.h"

static const char usage[] =
	"usage: tidepool solvers [NAME]\n"
	"\n"
	"Lists every solver (or the one named) with its parameters: the keys of a scene's\n"
	"\"params\" object, their defaults and allowed ranges. Pixels (px, px/s, px^2/s) are\n"
	"the scene's own: a render at another size scales them with the picture\n"
	"(scenes/README.md, \"Scene units and render size\").\n"
	"\n"
	"  -h, --help    show this help\n";

static void print_solver(int i)
{
	tp_solver_info s = TP_SOLVER_INFO_INIT;
	tp_solver_get(i, &s);
	printf("%s - %s\n", s.name, s.description);
	if (!s.nparams) {
		printf("    (no parameters)\n");
		return;
	}
	for (int k = 0; k < s.nparams; k++) {
		tp_param o = TP_PARAM_INIT;
		char def[64];
		tp_solver_param(i, k, &o);
		if (o.type == 2)
			snprintf(def, sizeof def, "%s", o.def != 0 ? "true" : "false");
		else if (o.type == 3)
			snprintf(def, sizeof def, "\"%s\"", o.choices[(int)o.def]);
		else
			snprintf(def, sizeof def, "%g", o.def);
		printf("    %-16s default %-10s range %-16s %s\n", o.name, def, o.range, o.help);
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
	const int n = tp_solver_count();
	if (optind < argc) {
		const char *names[64];
		int k = 0;
		for (; k < 63 && k < n; k++) {
			tp_solver_info s = TP_SOLVER_INFO_INIT;
			tp_solver_get(k, &s);
			names[k] = s.name;
		}
		names[k] = NULL;
		for (int i = 0; i < k; i++)
			if (!strcmp(names[i], argv[optind])) {
				print_solver(i);
				return 0;
			}
		const char *sug = tp_cli_suggest(argv[optind], names);
		if (sug)
			return tp_cli_usage("solvers", "no solver named '%s' (did you mean '%s'?)",
					    argv[optind], sug);
		return tp_cli_usage("solvers", "no solver named '%s'", argv[optind]);
	}
	for (int i = 0; i < n; i++) {
		if (i)
			putchar('\n');
		print_solver(i);
	}
	return 0;
}
