/*
 * optrows.h - a command's options as rows: each row is one option's names, whether it
 * takes a value, and its lines of --help, so the parser (getopt_long underneath), the help
 * text and what reads the help (the bash completion, tests/man_check.py) come from one list.
 *
 * The commands whose options are all their own (compare, preview, join, solvers, info)
 * parse through cli_rows_parse(); the scene commands (render, validate, cache, tasks,
 * batch) through sceneopts.h, which adds the shared groups.
 */
#ifndef TP_CLI_OPTROWS_H
#define TP_CLI_OPTROWS_H

#include <stdio.h>

typedef struct cli_row {
	const char *name; /* the long name without dashes; NULL ends the table */
	int letter;       /* the short letter, or 0 */
	int value;        /* 1: takes a value (--name V, --name=V, -x V) */
	int id;           /* what handle() sees: the letter, or a code >= 256 */
	const char *help; /* its lines of --help exactly as printed ("" for none) */
	unsigned tags;    /* the command's own marks (compare: the report options) */
} cli_row;

typedef struct cli_rows {
	const char *cmd;  /* "join": for messages */
	const char *head; /* --help before the option lines */
	const cli_row *rows;
	const char *tail; /* --help after them ("" for none) */
	/* One option: 0, or the status to exit with (tp_cli_usage's). -h is the parser's. */
	int (*handle)(void *ctx, int id, const char *value);
	void *ctx;
	/* The usage error for an unknown option (printf, the word); NULL: "unknown option
	 * '%s'" (preview has always said it without the quotes) */
	const char *unknown;
} cli_rows;

/* The rows of the commands that parse through cli_rows_parse (tests/test_optrows.c checks
 * them against their help and the bash completion). */
extern const cli_row cli_compare_rows[], cli_preview_rows[], cli_join_rows[], cli_solvers_rows[],
	cli_info_rows[];

/* Parses argv (argv[0] the command's name). Returns 0 with *first the index of the first
 * positional argument, 1 after printing --help (exit 0), or the status to exit with after
 * a usage error ("needs a value", "unknown option") or handle()'s. */
int cli_rows_parse(const cli_rows *c, int argc, char **argv, int *first);
/* The --help text: head, every row's help, tail. */
void cli_rows_help(const cli_rows *c, FILE *f);

#endif
