/* optrows.c - options as rows (optrows.h). */
#include "cli/optrows.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define MAX_ROWS 64

const char *cli_part_help(const cli_part *p, const cli_row *r)
{
	if (p->in_text)
		return "";
	for (const cli_word *w = p->words; w && w->name; w++)
		if (!strcmp(w->name, r->name))
			return w->help;
	return r->help;
}

void cli_rows_help(const cli_rows *c, FILE *f)
{
	fputs(c->head, f);
	if (!c->parts)
		for (const cli_row *r = c->rows; r->name; r++)
			fputs(r->help, f);
	for (const cli_part *p = c->parts; p && (p->text || p->rows); p++) {
		if (p->text)
			fputs(p->text, f);
		if (!p->rows || p->in_text)
			continue;
		if (p->words)
			for (const cli_word *w = p->words; w->name; w++)
				fputs(w->help, f);
		else
			for (const cli_row *r = p->rows; r->name; r++)
				fputs(r->help, f);
	}
	fputs(c->tail, f);
}

int cli_rows_parse(const cli_rows *c, int argc, char **argv, int *first)
{
	struct option lo[MAX_ROWS + 1];
	char shortopts[2 * MAX_ROWS + 2] = ":";
	size_t n = 0, k = 1;
	for (const cli_row *r = c->rows; r->name && n < MAX_ROWS; r++, n++) {
		lo[n] = (struct option){r->name, r->value ? required_argument : no_argument, NULL,
					r->id};
		if (r->letter) {
			shortopts[k++] = (char)r->letter;
			if (r->value)
				shortopts[k++] = ':';
		}
	}
	if (n == MAX_ROWS && c->rows[n].name) {
		/* A programming error, never input: a dropped row would be an option that
		 * silently stops existing. */
		fprintf(stderr, "tidepool %s: internal error: more than %d option rows\n", c->cmd,
			MAX_ROWS);
		abort();
	}
	lo[n] = (struct option){NULL, 0, NULL, 0};
	shortopts[k] = 0;
	int id, li;
	opterr = 0;
	optind = 1;
	while ((li = -1, id = getopt_long(argc, argv, shortopts, lo, &li)) != -1) {
		if (id == ':')
			return tp_cli_usage(c->cmd, "%s needs a value", argv[optind - 1]);
		if (id == '?') {
			if (c->unknown)
				return tp_cli_usage(c->cmd, c->unknown, argv[optind - 1]);
			return tp_cli_usage(c->cmd, "unknown option '%s'", argv[optind - 1]);
		}
		if (id == 'h') {
			cli_rows_help(c, stdout);
			return 1;
		}
		/* The row: by getopt's index for a long name, by its letter for a short one. */
		const cli_row *row = li >= 0 ? &c->rows[li] : c->rows;
		while (li < 0 && row->name && row->letter != id)
			row++;
		int rc = c->handle ? c->handle(c->ctx, row, optarg) : 0;
		if (rc)
			return rc;
	}
	*first = optind;
	return 0;
}
