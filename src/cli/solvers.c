/* tidepool solvers: list the solvers with every parameter, its default and range. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/optrows.h"
#include "tidepool.h"

static const char head[] =
	"usage: tidepool solvers [NAME]\n"
	"\n"
	"Lists every solver (or the one named) with its parameters: the keys of a scene's\n"
	"\"params\" object, their defaults and allowed ranges. Pixels (px, px/s, px^2/s) are\n"
	"the scene's own: a render at another size scales them with the picture\n"
	"(scenes/README.md, \"Scene units and render size\").\n"
	"\n";

const cli_row cli_solvers_rows[] = {
	{"help", 'h', 0, 'h', "  -h, --help    show this help\n", 0},
	{0},
};

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
		if (o.type == TP_PARAM_BOOLEAN)
			snprintf(def, sizeof def, "%s", o.def != 0 ? "true" : "false");
		else if (o.type == TP_PARAM_CHOICE)
			snprintf(def, sizeof def, "\"%s\"", o.choices[(int)o.def]);
		else
			snprintf(def, sizeof def, "%g", o.def);
		printf("    %-16s default %-10s range %-16s %s\n", o.name, def, o.range, o.help);
	}
}

int cmd_solvers(int argc, char **argv)
{
	const cli_rows opts = {.cmd = "solvers", .head = head, .rows = cli_solvers_rows, .tail = ""};
	int at = 0, rc = cli_rows_parse(&opts, argc, argv, &at);
	if (rc)
		return rc == 1 ? TP_EXIT_OK : rc;
	const int n = tp_solver_count();
	if (at < argc) {
		const char *names[64];
		int k = 0;
		for (; k < 63 && k < n; k++) {
			tp_solver_info s = TP_SOLVER_INFO_INIT;
			tp_solver_get(k, &s);
			names[k] = s.name;
		}
		names[k] = NULL;
		for (int i = 0; i < k; i++)
			if (!strcmp(names[i], argv[at])) {
				print_solver(i);
				return 0;
			}
		const char *sug = tp_cli_suggest(argv[at], names);
		if (sug)
			return tp_cli_usage("solvers", "no solver named '%s' (did you mean '%s'?)",
					    argv[at], sug);
		return tp_cli_usage("solvers", "no solver named '%s'", argv[at]);
	}
	for (int i = 0; i < n; i++) {
		if (i)
			putchar('\n');
		print_solver(i);
	}
	return 0;
}
