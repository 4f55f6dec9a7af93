/* The option rows of compare, preview, join, solvers and info (cli/optrows.h): each row's
 * help names it as getopt takes it, `tidepool CMD --help` prints every row's lines (the
 * bash completion and tests/man_check.py read that help), the completion knows every
 * option that takes a value, and the parser hands each row's id to its command. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optrows.h"

static const struct {
	const char *cmd;
	const cli_row *rows;
} tables[] = {
	{"compare", cli_compare_rows}, {"preview", cli_preview_rows}, {"join", cli_join_rows},
	{"solvers", cli_solvers_rows}, {"info", cli_info_rows},
};
#define NTABLES (sizeof tables / sizeof tables[0])

static char *slurp_stream(FILE *f)
{
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = 0;
	return buf;
}

static char *help_of(const char *cmd)
{
	char line[512];
	const char *bin = getenv("TP_BIN");
	snprintf(line, sizeof line, "%s %s --help", bin ? bin : "build/tidepool", cmd);
	FILE *p = popen(line, "r");
	cr_assert_not_null(p);
	char *s = slurp_stream(p);
	cr_assert_eq(pclose(p), 0, "%s", line);
	return s;
}

Test(optrows, each_row_is_named_in_its_own_help_and_printed_by_the_command)
{
	for (size_t t = 0; t < NTABLES; t++) {
		char *help = help_of(tables[t].cmd);
		int has_help = 0;
		for (const cli_row *r = tables[t].rows; r->name; r++) {
			/* the option column opens the row's first line: "  -x, --name" or
			 * "  --name" after spaces */
			char col[96];
			if (r->letter)
				snprintf(col, sizeof col, "-%c, --%s", r->letter, r->name);
			else
				snprintf(col, sizeof col, "--%s", r->name);
			const char *at = strstr(r->help, col);
			cr_assert_not_null(at, "%s: the help of --%s lacks '%s'", tables[t].cmd,
					   r->name, col);
			for (const char *p = at; p > r->help && p[-1] != '\n'; p--)
				cr_assert_eq(p[-1], ' ', "%s --%s: not in the option column",
					     tables[t].cmd, r->name);
			const char *after = at + strlen(col);
			/* a value's name follows after one space; a flag's text after two */
			if (r->value)
				cr_assert(after[0] == ' ' && after[1] != ' ', "%s --%s: no value named",
					  tables[t].cmd, r->name);
			else
				cr_assert(after[0] == ' ' && after[1] == ' ', "%s --%s: names a value",
					  tables[t].cmd, r->name);
			cr_assert_not_null(strstr(help, r->help), "%s --help lacks the lines of --%s",
					   tables[t].cmd, r->name);
			for (const cli_row *q = tables[t].rows; q < r; q++) {
				cr_assert_neq(q->id, r->id, "%s: --%s and --%s", tables[t].cmd,
					      q->name, r->name);
				cr_assert_str_neq(q->name, r->name);
			}
			has_help |= r->id == 'h' && r->letter == 'h';
		}
		cr_assert(has_help, "%s has no -h, --help row", tables[t].cmd);
		free(help);
	}
}

Test(optrows, the_completion_knows_every_option_that_takes_a_value)
{
	FILE *f = fopen("completion/tidepool.bash", "r");
	cr_assert_not_null(f);
	char *bash = slurp_stream(f);
	fclose(f);
	for (size_t t = 0; t < NTABLES; t++)
		for (const cli_row *r = tables[t].rows; r->name; r++) {
			if (!r->value)
				continue;
			char a[64], b[64];
			snprintf(a, sizeof a, "--%s |", r->name);
			snprintf(b, sizeof b, "--%s)", r->name);
			cr_assert(strstr(bash, a) || strstr(bash, b),
				  "completion/tidepool.bash completes --%s's value as an option",
				  r->name);
		}
	free(bash);
}

static int seen_id;
static const char *seen_value;

static int record(void *ctx, int id, const char *value)
{
	(void)ctx;
	seen_id = id;
	seen_value = value;
	return 0;
}

Test(optrows, the_parser_gives_each_row_its_id)
{
	for (size_t t = 0; t < NTABLES; t++)
		for (const cli_row *r = tables[t].rows; r->name; r++) {
			if (r->id == 'h')
				continue; /* the parser's own */
			const cli_rows c = {.cmd = tables[t].cmd, .head = "", .rows = tables[t].rows,
					    .tail = "", .handle = record};
			char opt[64];
			snprintf(opt, sizeof opt, "--%s", r->name);
			char *argv[] = {(char *)tables[t].cmd, opt, "V", "POS", NULL};
			int argc = r->value ? 4 : 3, first = -1;
			seen_id = -1;
			seen_value = NULL;
			cr_assert_eq(cli_rows_parse(&c, argc, argv, &first), 0, "%s", opt);
			cr_assert_eq(seen_id, r->id, "%s %s", tables[t].cmd, opt);
			if (r->value)
				cr_assert_str_eq(seen_value, "V");
			cr_assert_str_eq(argv[first], r->value ? "POS" : "V");
		}
}

/* x264's presets: the MP4 encoder's list (its refusal of a bad one names them) is the one
 * render --help, the man page and the bash completion give, in the same order. */
Test(optrows, the_x264_presets_are_the_encoders_everywhere)
{
	char line[512];
	const char *bin = getenv("TP_BIN");
	snprintf(line, sizeof line,
		 "%s render scenes/pond.json --frames 1 --preset bogus -o /tmp/tp-optrows.mp4 2>&1",
		 bin ? bin : "build/tidepool");
	FILE *p = popen(line, "r");
	cr_assert_not_null(p);
	char *msg = slurp_stream(p);
	pclose(p);
	const char *from = strstr(msg, "must be one of ");
	cr_assert_not_null(from, "%s", msg);
	from += strlen("must be one of ");
	const char *to = strstr(from, " (got");
	cr_assert_not_null(to);
	char names[16][32];
	int n = 0;
	for (const char *s = from; s < to && n < 16; n++) {
		const char *e = strstr(s, ", ");
		if (!e || e > to)
			e = to;
		snprintf(names[n], sizeof names[n], "%.*s", (int)(e - s), s);
		s = e == to ? to : e + 2;
	}
	cr_assert_geq(n, 5, "%s", msg);

	FILE *f = fopen("completion/tidepool.bash", "r");
	char *bash = slurp_stream(f);
	fclose(f);
	char words[512] = "";
	for (int i = 0; i < n; i++)
		snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s", i ? " " : "",
			 names[i]);
	char want[600];
	snprintf(want, sizeof want, "compgen -W \"%s\"", words);
	cr_assert_not_null(strstr(bash, want), "the completion lacks %s", want);

	f = fopen("docs/tidepool.1.scd", "r");
	char *man = slurp_stream(f);
	fclose(f);
	char *help = help_of("render");
	const char *m = strstr(man, "*--preset* _NAME_"), *h = strstr(help, "--preset NAME");
	cr_assert(m && h);
	for (int i = 0; i < n; i++) {
		char word[48];
		snprintf(word, sizeof word, "_%.31s_", names[i]);
		const char *at = strstr(m, word);
		cr_assert_not_null(at, "the man page's --preset lacks %s", word);
		m = at + strlen(word);
		at = strstr(h, names[i]);
		cr_assert_not_null(at, "render --help's --preset lacks %s", names[i]);
		h = at + strlen(names[i]);
	}
	free(help);
	free(man);
	free(bash);
	free(msg);
}
