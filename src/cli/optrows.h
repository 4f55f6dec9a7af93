/*
 * optrows.h - a command's options as rows: each row is one option's names, whether it
 * takes a value, and its lines of --help, so the parser (getopt_long underneath), the help
 * text and what reads the help (the bash completion, tests/man_check.py) come from one list.
 *
 * Every command parses through cli_rows_parse(): compare, preview, join, solvers and info
 * with one table of their own; the scene commands (render, validate, cache, tasks, batch)
 * through sceneopts.h, which joins their own rows and the shared groups' and prints their
 * --help in parts (cli_part).
 */
#ifndef TP_CLI_OPTROWS_H
#define TP_CLI_OPTROWS_H

#include <stdio.h>

typedef struct cli_row {
	const char *name; /* the long name without dashes; NULL ends the table */
	int letter;       /* the short letter, or 0 */
	int value;        /* 1: takes a value (--name V, --name=V, -x V) */
	int id;           /* what handle() sees: the letter, or a code >= 256 */
	const char *help; /* its lines of --help exactly as printed ("" for none: an option
			   * the command refuses with its reason) */
	unsigned tags;    /* the command's own marks (compare: the report options) */
} cli_row;

/* A command's wording of a row (a shared row whose line says something else there). */
typedef struct cli_word {
	const char *name; /* the row's long name; NULL ends the table */
	const char *help; /* the lines printed in place of the row's own */
} cli_word;

/* One part of a --help made of several tables: a text, then the rows' lines. */
typedef struct cli_part {
	const char *text;      /* printed first; NULL: none */
	const cli_row *rows;   /* NULL: the text only; a NULL rows and NULL text end the list */
	const cli_word *words; /* NULL: each row's own help in the rows' order; else every row
				* of the table once, in the order and wording printed */
	int in_text;           /* 1: no line of their own, a text part before names them */
} cli_part;

typedef struct cli_rows {
	const char *cmd;  /* "join": for messages */
	const char *head; /* --help before the option lines */
	const cli_row *rows;
	const char *tail; /* --help after them ("" for none) */
	/* What --help prints between head and tail when it is not rows in their order */
	const cli_part *parts;
	/* One option: 0, or the status to exit with (tp_cli_usage's). -h is the parser's. */
	int (*handle)(void *ctx, const cli_row *row, const char *value);
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
/* The --help text: head, every row's help (or the parts), tail. */
void cli_rows_help(const cli_rows *c, FILE *f);
/* The lines a part prints for one of its rows ("" when a text names it). */
const char *cli_part_help(const cli_part *p, const cli_row *r);

#endif
