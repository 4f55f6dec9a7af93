/* The option rows of every command (cli/optrows.h, cli/sceneopts.h): each row's help names
 * it as getopt takes it, `tidepool CMD --help` prints every row's lines and no option line
 * that is not a row (the bash completion and tests/man_check.py read that help), the
 * completion knows every option that takes a value, the man page's section of the command
 * names every row, a row a command refuses is refused, and the parser hands each row to its
 * command. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optrows.h"
#include "cli/sceneopts.h"
#include "encode/encoder.h"

/* A command's rows: its one table, or the parts of a scene command. */
static const struct {
	const char *cmd;
	const cli_row *rows;
	const cli_scene_cmd *scene;
} tables[] = {
	{"compare", cli_compare_rows, NULL},   {"preview", cli_preview_rows, NULL},
	{"join", cli_join_rows, NULL},         {"solvers", cli_solvers_rows, NULL},
	{"info", cli_info_rows, NULL},         {"render", NULL, &cli_render_cmd},
	{"validate", NULL, &cli_validate_cmd}, {"cache", NULL, &cli_cache_cmd},
	{"tasks", NULL, &cli_tasks_cmd},       {"batch", NULL, &cli_batch_cmd},
};
#define NTABLES (sizeof tables / sizeof tables[0])

/* The shared groups a scene command may take, the encoders' options among them. */
static int is_group(const cli_row *rows)
{
	const cli_row *g[16];
	int n = cli_scene_groups(g, 16);
	for (int i = 0; i < n; i++)
		if (g[i] == rows)
			return 1;
	return 0;
}

/* One row of a command as its --help prints it. */
typedef struct entry {
	const cli_row *r;
	const char *help; /* its lines in this command's words; "" when none */
	int in_text;      /* named by a text part instead */
	int shared;       /* a row of a shared group */
} entry;

static int entries_of(size_t t, entry *e, int max)
{
	int n = 0;
	for (const cli_row *r = tables[t].rows; r && r->name && n < max; r++)
		e[n++] = (entry){r, r->help, 0, 0};
	cli_part parts[32] = {{0}};
	if (tables[t].scene)
		cli_scene_parts(tables[t].scene, parts, 32);
	for (const cli_part *p = parts; p->text || p->rows; p++)
		for (const cli_row *r = p->rows; r && r->name && n < max; r++)
			e[n++] = (entry){r, cli_part_help(p, r), p->in_text, is_group(p->rows)};
	return n;
}

static char *slurp_stream(FILE *f)
{
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = 0;
	return buf;
}

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char *s = slurp_stream(f);
	fclose(f);
	return s;
}

static const char *tp(void)
{
	const char *bin = getenv("TP_BIN");
	return bin ? bin : "build/tidepool";
}

static char *help_of(const char *cmd)
{
	char line[512];
	snprintf(line, sizeof line, "%s %s --help", tp(), cmd);
	FILE *p = popen(line, "r");
	cr_assert_not_null(p);
	char *s = slurp_stream(p);
	cr_assert_eq(pclose(p), 0, "%s", line);
	return s;
}

/* `word` in text as a whole option word (not --set inside --settle). */
static int names(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *at = strstr(text, word); at; at = strstr(at + 1, word)) {
		int before = at == text || !(isalnum((unsigned char)at[-1]) || at[-1] == '-');
		int after = !(isalnum((unsigned char)at[n]) || at[n] == '-');
		if (before && after)
			return 1;
	}
	return 0;
}

Test(optrows, each_row_is_named_in_its_own_help_and_printed_by_the_command)
{
	for (size_t t = 0; t < NTABLES; t++) {
		char *help = help_of(tables[t].cmd);
		entry e[96];
		int n = entries_of(t, e, 96), has_help = 0;
		cr_assert_gt(n, 0);
		for (int i = 0; i < n; i++) {
			const cli_row *r = e[i].r;
			cr_assert(!r->letter || r->letter == r->id, "%s --%s: its letter is its id",
				  tables[t].cmd, r->name);
			if (e[i].in_text) {
				char l[8] = "", w[64];
				snprintf(w, sizeof w, "--%s", r->name);
				if (r->letter)
					snprintf(l, sizeof l, "-%c", r->letter);
				cr_assert(names(help, w) || (r->letter && names(help, l)),
					  "%s --help names --%s nowhere", tables[t].cmd, r->name);
				continue;
			}
			if (!e[i].help[0])
				continue; /* refused with the reason: each_refused_row_is_refused */
			/* the option column opens the row's first line: "  -x, --name" or
			 * "  --name" after spaces */
			char col[96];
			if (r->letter)
				snprintf(col, sizeof col, "-%c, --%s", r->letter, r->name);
			else
				snprintf(col, sizeof col, "--%s", r->name);
			const char *at = strstr(e[i].help, col);
			cr_assert_not_null(at, "%s: the help of --%s lacks '%s'", tables[t].cmd,
					   r->name, col);
			for (const char *p = at; p > e[i].help && p[-1] != '\n'; p--)
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
			cr_assert_not_null(strstr(help, e[i].help), "%s --help lacks the lines of --%s",
					   tables[t].cmd, r->name);
			for (int q = 0; q < i; q++) {
				cr_assert_str_neq(e[q].r->name, r->name, "%s: two rows --%s",
						  tables[t].cmd, r->name);
				if (e[q].help[0])
					cr_assert_neq(e[q].r->id, r->id, "%s: --%s and --%s",
						      tables[t].cmd, e[q].r->name, r->name);
			}
			has_help |= r->id == 'h' && r->letter == 'h';
		}
		cr_assert(has_help, "%s has no -h, --help row", tables[t].cmd);
		free(help);
	}
}

/* The other way: every option the help's option column shows (as the completion and
 * man_check.py read it) is a row the command prints. */
Test(optrows, every_option_line_of_the_help_is_a_row)
{
	for (size_t t = 0; t < NTABLES; t++) {
		char *help = help_of(tables[t].cmd);
		entry e[96];
		int n = entries_of(t, e, 96), lines = 0;
		for (char *line = strtok(help, "\n"); line; line = strtok(NULL, "\n")) {
			const char *s = line;
			while (*s == ' ')
				s++;
			if (s - line < 2 || s[0] != '-')
				continue;
			int letter = 0;
			char name[64] = "";
			if (s[1] != '-' && isalnum((unsigned char)s[1])) {
				letter = s[1];
				s += 2;
				s += *s == ',';
				while (*s == ' ')
					s++;
			}
			if (s[0] == '-' && s[1] == '-' && islower((unsigned char)s[2]))
				sscanf(s + 2, "%63[a-z0-9-]", name);
			if (!letter && !name[0])
				continue;
			int found = 0;
			for (int i = 0; i < n && !found; i++)
				found = e[i].help[0] && !e[i].in_text &&
					(!name[0] || !strcmp(e[i].r->name, name)) &&
					(!letter || e[i].r->letter == letter);
			cr_assert(found, "%s --help: '%s' is not a row", tables[t].cmd, line);
			lines++;
		}
		cr_assert_gt(lines, 0, "%s", tables[t].cmd);
		free(help);
	}
}

/* A scene command's words reword each row of their part once, and nothing else. */
Test(optrows, each_part_words_every_row_of_its_table_once)
{
	for (size_t t = 0; t < NTABLES; t++)
		for (const cli_part *p = tables[t].scene ? tables[t].scene->parts : NULL;
		     p && (p->text || p->rows); p++) {
			if (!p->words || p->rows == cli_encoder_rows)
				continue;
			int nrows = 0, nwords = 0;
			for (const cli_row *r = p->rows; r->name; r++)
				nrows++;
			for (const cli_word *w = p->words; w->name; w++, nwords++) {
				int hits = 0;
				for (const cli_row *r = p->rows; r->name; r++)
					hits += !strcmp(r->name, w->name);
				cr_assert_eq(hits, 1, "%s: words for --%s, not a row of the part",
					     tables[t].cmd, w->name);
				for (const cli_word *v = p->words; v < w; v++)
					cr_assert_str_neq(v->name, w->name);
			}
			cr_assert_eq(nwords, nrows, "%s: a part's words leave rows out",
				     tables[t].cmd);
		}
}

Test(optrows, the_completion_knows_every_option_that_takes_a_value)
{
	char *bash = slurp_file("completion/tidepool.bash");
	for (size_t t = 0; t < NTABLES; t++) {
		entry e[96];
		int n = entries_of(t, e, 96);
		for (int i = 0; i < n; i++) {
			const cli_row *r = e[i].r;
			if (!r->value || (!e[i].help[0] && !e[i].in_text))
				continue;
			char a[64], b[64];
			snprintf(a, sizeof a, "--%s |", r->name);
			snprintf(b, sizeof b, "--%s)", r->name);
			cr_assert(strstr(bash, a) || strstr(bash, b),
				  "completion/tidepool.bash completes --%s's value as an option",
				  r->name);
		}
	}
	free(bash);
}

/* The man page's section of each command names every row as its help does: a row with a
 * line of its own by each of its names, one a text names by one of them. */
Test(optrows, the_man_page_names_every_row_in_its_commands_section)
{
	char *man = slurp_file("docs/tidepool.1.scd");
	for (size_t t = 0; t < NTABLES; t++) {
		char head[64];
		snprintf(head, sizeof head, "\n## tidepool %s\n", tables[t].cmd);
		char *sec = strstr(man, head);
		cr_assert_not_null(sec, "no section %s", head);
		sec += strlen(head);
		char *end = strstr(sec, "\n#");
		const char save = end ? *end : 0;
		if (end)
			*end = 0;
		entry e[96];
		int n = entries_of(t, e, 96);
		for (int i = 0; i < n; i++) {
			const cli_row *r = e[i].r;
			if (!e[i].help[0] && !e[i].in_text)
				continue;
			char l[8], w[64];
			snprintf(w, sizeof w, "*--%s*", r->name);
			snprintf(l, sizeof l, "*-%c*", r->letter);
			int has_w = strstr(sec, w) != NULL, has_l = r->letter && strstr(sec, l);
			if (e[i].in_text)
				cr_assert(has_w || has_l, "man: tidepool %s names --%s nowhere",
					  tables[t].cmd, r->name);
			else
				cr_assert(has_w && (!r->letter || has_l), "man: tidepool %s lacks %s",
					  tables[t].cmd, has_w ? l : w);
		}
		if (end)
			*end = save;
	}
	free(man);
}

/* A row without help is one the command refuses with its reason, and a shared group a scene
 * command does not take is refused by name: exit 2, the option named. */
Test(optrows, each_refused_row_is_refused)
{
	int refused = 0;
	const cli_row *groups[16];
	const int ngroups = cli_scene_groups(groups, 16);
	for (size_t t = 0; t < NTABLES; t++) {
		entry e[96];
		int n = entries_of(t, e, 96);
		for (int g = 0; tables[t].scene && g < ngroups; g++)
			for (const cli_row *r = groups[g]; r->name; r++) {
				int taken = 0;
				for (int i = 0; i < n; i++)
					taken |= !strcmp(e[i].r->name, r->name);
				if (taken)
					continue;
				char line[512], want[96];
				snprintf(line, sizeof line, "%s %s scenes/pond.json --%s%s 2>&1", tp(),
					 tables[t].cmd, r->name, r->value ? " 1" : "");
				FILE *p = popen(line, "r");
				char *out = slurp_stream(p);
				cr_assert_eq(pclose(p), 2 << 8, "%s: %s", line, out);
				snprintf(want, sizeof want, "--%s is an option of 'tidepool render'",
					 r->name);
				cr_assert_not_null(strstr(out, want), "%s: %s", line, out);
				free(out);
				refused++;
			}
		for (int i = 0; i < n; i++) {
			if (e[i].help[0] || e[i].in_text)
				continue;
			char line[512], want[96];
			snprintf(line, sizeof line, "%s %s scenes/pond.json --%s%s 2>&1", tp(),
				 tables[t].cmd, e[i].r->name, e[i].r->value ? " 1" : "");
			FILE *p = popen(line, "r");
			char *out = slurp_stream(p);
			cr_assert_eq(pclose(p), 2 << 8, "%s: %s", line, out);
			snprintf(want, sizeof want, "--%s: ", e[i].r->name);
			cr_assert_not_null(strstr(out, want), "%s: %s", line, out);
			free(out);
			refused++;
		}
	}
	cr_assert_gt(refused, 10);
}

static int seen_id;
static const char *seen_value;

static int record(void *ctx, const cli_row *row, const char *value)
{
	(void)ctx;
	seen_id = row->id;
	seen_value = value;
	return 0;
}

Test(optrows, the_parser_gives_each_row_its_id)
{
	for (size_t t = 0; t < NTABLES; t++)
		for (const cli_row *r = tables[t].rows; r && r->name; r++) {
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

/* Each encoder declares its own options as rows: render prints them where the encoders'
 * place is, tasks passes them on, the other scene commands refuse them by name; an encoder
 * that says it takes a rate (ENC_CAP_RATE) declares options, and no other does. */
Test(optrows, the_encoders_declare_their_options)
{
	int declared = 0;
	for (int k = 0; tp_encoders[k]; k++) {
		const tp_encoder *enc = tp_encoders[k];
		cr_assert_eq(enc->options != NULL, (enc->caps & ENC_CAP_RATE) != 0, "%s", enc->name);
		for (const cli_row *r = enc->options; r && r->name; r++, declared++) {
			cr_assert(r->id >= ENC_OPT_CRF && r->id <= ENC_OPT_BITRATE, "--%s", r->name);
			for (size_t t = 0; t < NTABLES; t++) {
				entry e[96];
				int n = entries_of(t, e, 96), at = -1;
				for (int i = 0; i < n; i++)
					if (e[i].r == r)
						at = i;
				const char *cmd = tables[t].cmd;
				if (!strcmp(cmd, "render"))
					cr_assert(at >= 0 && e[at].shared && e[at].help == r->help,
						  "render --%s", r->name);
				else if (!strcmp(cmd, "tasks"))
					cr_assert(at >= 0 && e[at].in_text, "tasks --%s", r->name);
				else
					cr_assert_eq(at, -1, "%s --%s", cmd, r->name);
			}
		}
	}
	cr_assert_geq(declared, 3);
}

static const cli_row *seen_row;

static int record_row(void *ctx, const cli_row *row, const char *value)
{
	(void)ctx;
	seen_row = row;
	seen_value = value;
	return 0;
}

/* The scene commands: each own row reaches the command's handler as itself, each shared row
 * the shared values (the scene group's and the encoder's kept as given, for tasks and batch
 * to pass on). */
Test(optrows, the_scene_commands_parse_every_row)
{
	static const char *const valid[][3] = {
		{"set", "a=1", ""},          {"frames", "3", ""},        {"size", "8x8", ""},
		{"scale", "0.5", ""},        {"seed", "3", ""},          {"threads", "2", ""},
		{"output", "x.png", ""},     {"flipbook", "2x2", ""},    {"frame-size", "4x4", "--flipbook=2x2"},
		{"pot", NULL, "--flipbook=2x2"}, {"flipbook-padding", "1", ""}, {"range", "1-2", ""},
		{"cache", "d", "--range=1-2"}, {"allow-empty-cache", NULL, "--range=1-2 --cache=d"},
		{"crf", "3", ""},            {"preset", "fast", ""},     {"bitrate", "1M", ""},
		{"stats", "f", ""},          {"hash", "f", ""},          {"overwrite", NULL, ""},
		{"quiet", NULL, ""},
	};
	for (size_t t = 0; t < NTABLES; t++) {
		if (!tables[t].scene)
			continue;
		cli_scene_cmd c = *tables[t].scene;
		c.handle = record_row;
		entry e[96];
		int n = entries_of(t, e, 96);
		for (int i = 0; i < n; i++) {
			const cli_row *r = e[i].r;
			if (r->id == 'h')
				continue;
			const char *value = "V", *more = "";
			const int shared = e[i].shared;
			for (size_t v = 0; shared && v < sizeof valid / sizeof valid[0]; v++)
				if (!strcmp(valid[v][0], r->name)) {
					value = valid[v][1];
					more = valid[v][2];
				}
			if (!r->value)
				value = NULL;
			char opt[64], extra[2][64] = {"", ""};
			snprintf(opt, sizeof opt, "--%s", r->name);
			char *argv[8] = {(char *)c.cmd, opt};
			int argc = 2;
			if (value)
				argv[argc++] = (char *)value;
			if (more[0]) {
				sscanf(more, "%63s %63s", extra[0], extra[1]);
				argv[argc++] = extra[0];
				if (extra[1][0])
					argv[argc++] = extra[1];
			}
			argv[argc++] = "POS";
			cli_opts o = {.crf = -1};
			seen_row = NULL;
			cr_assert_eq(cli_opts_parse(&c, NULL, argc, argv, &o), 0, "%s %s", c.cmd, opt);
			cr_assert_str_eq(argv[o.first], "POS", "%s %s", c.cmd, opt);
			if (!shared) {
				cr_assert_eq(seen_row, r, "%s %s: not its own row", c.cmd, opt);
				if (value)
					cr_assert_str_eq(seen_value, value);
				continue;
			}
			cr_assert_null(seen_row, "%s %s", c.cmd, opt);
			const char *const *kept = NULL;
			int nkept = 0;
			for (const cli_row *q = cli_scene_rows; q->name; q++)
				if (q == r)
					kept = o.scene_args, nkept = o.nscene_args;
			for (int k = 0; tp_encoders[k]; k++)
				for (const cli_row *q = tp_encoders[k]->options; q && q->name; q++)
					if (q == r)
						kept = o.enc_args, nkept = o.nenc_args;
			if (kept) {
				cr_assert_eq(nkept, 2, "%s %s", c.cmd, opt);
				cr_assert_str_eq(kept[0], r->name);
				cr_assert_str_eq(kept[1], value);
			}
		}
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
