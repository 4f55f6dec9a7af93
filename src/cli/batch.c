/* tidepool batch: every combination of varied scene values, rendered several at once,
 * plus a contact sheet for choosing among them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/sceneopts.h"
#include "cli/shline.h"
#include "cli/sheet.h"
#include "cli/variants.h"
#include "tidepool.h"
#include "util/fsutil.h"
#include "util/progress.h"

/* ---- options ---- */

enum { OPT_VARY = 1024, OPT_NAME, OPT_SHEET, OPT_NO_SHEET, OPT_THUMB, OPT_TASKS, OPT_SHEET_ONLY,
       OPT_BIN };

static const cli_row own[] = {
	{"vary", 0, 1, OPT_VARY,
	 "  --vary KEY=VALUES    KEY as for --set (seed, params.damping, maps.caustics.depth,\n"
	 "                       emitters.0.rate); VALUES a range A..B of whole numbers or a\n"
	 "                       comma list (3,4  tiles,pebbles); repeatable; default: the\n"
	 "                       scene's \"variants\"\n", 0},
	{"out-dir", 'O', 1, 'O', "  -O, --out-dir DIR    where the variants go (created if missing)\n",
	 0},
	{"name", 0, 1, OPT_NAME,
	 "      --name PATTERN   variant names: {scene}, {index} and {KEY} (full or last part,\n"
	 "                       {params.damping} or {damping}); default: the scene's\n"
	 "                       \"variants\" name with its own keys, else {scene}_seed{seed}...\n", 0},
	{"jobs", 'j', 1, 'j',
	 "  -j, --jobs N         variants rendered at once (default: one per core); each gets\n"
	 "                       cores/N threads, which does not change any byte\n", 0},
	{"sheet", 0, 1, OPT_SHEET,
	 "      --sheet FILE     contact sheet path (default DIR/contact.png)\n", 0},
	{"no-sheet", 0, 0, OPT_NO_SHEET, "      --no-sheet       no contact sheet\n", 0},
	{"thumb", 0, 1, OPT_THUMB,
	 "      --thumb W        thumbnail width in pixels (default 192)\n", 0},
	{0},
};
/* Printed after the scene group. */
static const cli_row own_steps[] = {
	{"tasks", 0, 0, OPT_TASKS,
	 "      --tasks          print one 'tidepool render' command per variant and the\n"
	 "                       contact sheet step last (--sheet-only), for GNU parallel\n"
	 "                       or a scheduler, instead of rendering\n", 0},
	{"sheet-only", 0, 0, OPT_SHEET_ONLY,
	 "      --sheet-only     only make the contact sheet, from variants already rendered\n", 0},
	{"bin", 0, 1, OPT_BIN,
	 "      --bin PATH       the tidepool that --tasks commands run (default: tidepool)\n", 0},
	{0},
};
/* The scene group in batch's words: every variant takes it. */
static const cli_word scene_group_words[] = {
	{"set", "      --set KEY=VALUE  change a scene value for every variant; repeatable\n"},
	{"frames", "      --frames N       frames per variant\n"},
	{"size", "      --size WxH       render size (the scene is scaled to it)\n"},
	{"scale", "      --scale F        render size as a factor of the scene's size: 0.25, 25%, 2\n"},
	{"seed", "      --seed N         random seed for every variant (a varied seed wins)\n"},
	{"threads", "      --threads N      threads of each render (default: the cores shared among the\n"
		    "                       jobs); no byte changes\n"},
	{0},
};
static const cli_word overwrite_words[] = {
	{"overwrite", "  -y, --overwrite      replace existing variant directories' files\n"},
	{0},
};
static const cli_part parts[] = {
	{.rows = own},
	{.rows = cli_scene_rows, .words = scene_group_words},
	{.rows = own_steps},
	{.rows = cli_overwrite_rows, .words = overwrite_words},
	{.rows = cli_quiet_rows},
	{.rows = cli_help_rows},
	{0},
};

/* batch's own options. */
static int own_option(void *ctx, const cli_row *row, const char *arg)
{
	batch_opts *o = ctx;
	long v;
	switch (row->id) {
	case OPT_VARY:
		if (o->nvary_spec == BATCH_MAX_VARY)
			return tp_cli_usage("batch", "at most %d --vary options", BATCH_MAX_VARY);
		if (!strchr(arg, '=') || arg[0] == '=')
			return tp_cli_usage("batch",
					    "--vary: expected KEY=VALUES such as seed=1..16 (got '%s')",
					    arg);
		o->vary_spec[o->nvary_spec++] = arg;
		return 0;
	case 'O': o->dir = arg; return 0;
	case OPT_NAME: o->name = arg; return 0;
	case 'j':
		if (tp_parse_int(arg, 0, 256, &v))
			return tp_cli_usage("batch", "--jobs: expected 0..256 (got '%s')", arg);
		o->jobs = (int)v;
		return 0;
	case OPT_SHEET: o->sheet = arg; return 0;
	case OPT_NO_SHEET: o->no_sheet = 1; return 0;
	case OPT_THUMB:
		if (tp_parse_int(arg, 16, 4096, &v))
			return tp_cli_usage("batch", "--thumb: expected 16..4096 (got '%s')", arg);
		o->thumb = (int)v;
		return 0;
	case OPT_TASKS: o->tasks = 1; return 0;
	case OPT_SHEET_ONLY: o->sheet_only = 1; return 0;
	default: o->bin = arg; return 0; /* OPT_BIN */
	}
}

const cli_scene_cmd cli_batch_cmd = {
	.cmd = "batch",
	.head = "usage: tidepool batch SCENE --vary KEY=VALUES... -O DIR [options]\n"
		"\n"
		"Renders every combination of the varied values, several at once, into\n"
		"DIR/NAME/ (each of the scene's outputs under its own file name), and writes a\n"
		"contact sheet of labelled thumbnails, DIR/contact.png.\n"
		"\n",
	.parts = parts,
	.tail = "\n"
		"Exit status: 0 done, 2 usage error, 3 bad scene or variant (nothing is rendered),\n"
		"4 a variant failed to render (the others still are), 130 interrupted.\n",
	.handle = own_option,
};

static int parse_args(int argc, char **argv, batch_opts *o)
{
	o->c.crf = -1;
	int rc = cli_opts_parse(&cli_batch_cmd, o, argc, argv, &o->c);
	if (rc)
		return rc;
	int first = o->c.first;
	if (first >= argc)
		return tp_cli_usage("batch", "no scene file given");
	if (first + 1 < argc)
		return tp_cli_usage("batch", "one scene at a time (got '%s' too)", argv[first + 1]);
	if (!o->dir)
		return tp_cli_usage("batch", "no output directory: give -O DIR");
	if (o->tasks && o->sheet_only)
		return tp_cli_usage("batch", "--tasks prints the --sheet-only step itself; give one of them");
	if (o->sheet_only && o->no_sheet)
		return tp_cli_usage("batch", "--sheet-only and --no-sheet exclude each other");
	o->scene = argv[first];
	o->sets = o->c.sets;
	o->nsets = o->c.nsets;
	o->overwrite = o->c.overwrite;
	o->quiet = o->c.quiet;
	if (!o->bin)
		o->bin = "tidepool";
	return 0;
}

/* ---- planning ---- */

static int is_pattern(const char *path) { return strchr(path, '%') != NULL; }

/* Case-sensitive, and true for the suffix alone, unlike tp_has_suffix(): a variant's
 * preview picture and the ".json" stripped from the scene's name follow this rule, and
 * tp_has_suffix's would change which output a batch previews and the names it writes. */
static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* Loads the scene as the variant will render it (so a bad value stops the batch before
 * anything renders) and fills in the variant's outputs and preview picture. */
static int plan_variant(const batch_opts *o, const cli_overrides *base, variant *va, int nv,
			const char *dir, tp_err *err)
{
	const char *sets[BATCH_MAX_SETS + BATCH_MAX_VARY];
	int ns = 0;
	for (int i = 0; i < o->nsets; i++)
		sets[ns++] = o->sets[i];
	for (int i = 0; i < nv; i++)
		sets[ns++] = va->sets[i];
	cli_overrides ov = *base;
	ov.sets = sets;
	ov.nsets = ns;
	tp_scene *sc = NULL;
	int rc = cli_load(o->scene, &ov, tp_cli_threads(o->c.threads), &sc, err);
	if (rc < 0)
		return tp_errprefix(err, rc, "variant %s", va->name);
	tp_scene_outputs so = TP_SCENE_OUTPUTS_INIT;
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_outputs(sc, &so);
	tp_scene_get_info(sc, &in);
	const char *paths[BATCH_MAX_OUT];
	int modes[BATCH_MAX_OUT], n = 0;
	if (so.n) {
		for (int i = 0; i < so.n && n < BATCH_MAX_OUT; i++, n++) {
			paths[n] = so.o[i].path;
			modes[n] = (int)so.o[i].mode;
		}
	} else if (so.output) {
		paths[n] = so.output;
		modes[n++] = (int)so.mode;
	}
	if (!n) {
		rc = tp_errf(err, TP_EUSAGE, "%s: no output: batch renders the scene's \"outputs\" or \"output\"",
			     o->scene);
		goto done;
	}
	int best = -1;
	for (int i = 0; i < n; i++) {
		const char *base_name = strrchr(paths[i], '/');
		base_name = base_name ? base_name + 1 : paths[i];
		char file[512];
		snprintf(file, sizeof file, "%s", base_name);
		for (int j = 0; j < i; j++) /* two outputs with one file name: keep them apart */
			if (!strcmp(strchr(va->outs[j], '/') ? strrchr(va->outs[j], '/') + 1 : "", file))
				snprintf(file, sizeof file, "%s-%s", tp_mode_name((tp_mode)modes[i]), base_name);
		size_t len = strlen(dir) + strlen(va->name) + strlen(file) + 32;
		if (!(va->outs[i] = malloc(len))) {
			rc = tp_errf(err, TP_EIO, "out of memory");
			goto done;
		}
		snprintf(va->outs[i], len, "%s=%s/%s/%s", tp_mode_name((tp_mode)modes[i]), dir, va->name, file);
		va->nouts = i + 1;
		/* Preview: the first PNG output, preferring anything over a (flat-looking)
		 * height map. */
		int shows = ends_with(file, ".png") || ends_with(file, ".mp4") || ends_with(file, ".m4v") ||
			    ends_with(file, ".mov");
		if (shows && (best < 0 || (modes[best] == TP_MODE_HEIGHT && modes[i] != TP_MODE_HEIGHT)))
			best = i;
	}
	if (best >= 0) {
		const char *file = strchr(va->outs[best], '=') + 1;
		if (is_pattern(file))
			snprintf(va->preview, sizeof va->preview, file, in.frames / 2);
		else
			snprintf(va->preview, sizeof va->preview, "%s", file);
		va->preview_frame = in.frames / 2; /* for a video */
	}
done:
	tp_scene_free(sc);
	return rc;
}

/* ---- running ---- */

static void free_variants(variant *vs, int n)
{
	for (int i = 0; vs && i < n; i++) {
		for (int k = 0; k < BATCH_MAX_VARY; k++)
			free(vs[i].sets[k]);
		for (int k = 0; k < vs[i].nouts; k++)
			free(vs[i].outs[k]);
	}
	free(vs);
}

/* --tasks: the same render each variant would get (spawn() above, without --threads),
 * then this batch again with --sheet-only. */
static void opt_word(tp_line *l, const char *opt, const char *val)
{
	if (val) {
		tp_line_word(l, opt);
		tp_line_word(l, val);
	}
}

/* The scene options as given, in order (--threads too, when `threads`). */
static void scene_words(tp_line *l, const batch_opts *o, int threads)
{
	for (int i = 0; i + 1 < o->c.nscene_args; i += 2) {
		char flag[32];
		if (!threads && !strcmp(o->c.scene_args[i], "threads"))
			continue;
		snprintf(flag, sizeof flag, "--%s", o->c.scene_args[i]);
		opt_word(l, flag, o->c.scene_args[i + 1]);
	}
}

static void print_line(tp_line *l)
{
	if (l->s)
		puts(l->s);
	free(l->s);
	*l = (tp_line){ 0 };
}

static void print_tasks(const batch_opts *o, const variant *vars, int nvariants, int nv)
{
	tp_line l = { 0 };
	for (int v = 0; v < nvariants; v++) {
		const variant *va = &vars[v];
		const char *head[] = { o->bin, "render", o->scene, "-q", "-y" };
		for (int i = 0; i < 5; i++)
			tp_line_word(&l, head[i]);
		scene_words(&l, o, 0);
		for (int i = 0; i < nv; i++)
			opt_word(&l, "--set", va->sets[i]);
		for (int i = 0; i < va->nouts; i++)
			opt_word(&l, "-o", va->outs[i]);
		print_line(&l);
	}
	if (o->no_sheet)
		return;
	char thumb[32];
	snprintf(thumb, sizeof thumb, "%d", o->thumb);
	tp_line_word(&l, o->bin);
	tp_line_word(&l, "batch");
	tp_line_word(&l, o->scene);
	for (int i = 0; i < o->nvary_spec; i++)
		opt_word(&l, "--vary", o->vary_spec[i]);
	opt_word(&l, "-O", o->dir);
	opt_word(&l, "--name", o->name);
	opt_word(&l, "--sheet", o->sheet);
	scene_words(&l, o, 1);
	opt_word(&l, "--thumb", thumb);
	const char *tail[] = { "--sheet-only", "-y", "-q" };
	for (int i = 0; i < 3; i++)
		tp_line_word(&l, tail[i]);
	print_line(&l);
}

/* What varies: the command line's --vary, else the scene's "variants"; and how many
 * variants that makes. */
static int read_varies(batch_run *r)
{
	const batch_opts *o = r->o;
	char why[256];
	const int nscene_vary = tp_scene_variants(r->sc, &r->scene_pattern);
	if (o->nvary_spec) {
		for (int i = 0; i < o->nvary_spec; i++) {
			vary *va = &r->vs[r->nv++];
			const char *eq = strchr(o->vary_spec[i], '=');
			char *key = strndup(o->vary_spec[i], (size_t)(eq - o->vary_spec[i]));
			va->key = key;
			char **vals = NULL;
			va->n = key ? vary_parse_values(eq + 1, &vals, why, sizeof why) : -1;
			va->values = (const char *const *)vals;
			if (va->n < 0) {
				if (key)
					return tp_errf(&r->err, TP_EUSAGE, "batch: --vary %s: %s",
						       o->vary_spec[i], why);
				return tp_errf(&r->err, TP_EIO, "out of memory");
			}
		}
	} else {
		for (int i = 0; i < nscene_vary && i < BATCH_MAX_VARY; i++, r->nv++) {
			tp_vary v = TP_VARY_INIT;
			tp_scene_vary(r->sc, i, &v);
			r->vs[r->nv].key = v.key;
			r->vs[r->nv].n = v.n;
			r->vs[r->nv].values = v.values;
		}
	}
	if (!r->nv)
		return tp_errf(&r->err, TP_EUSAGE,
			       "batch: nothing varies: give --vary KEY=VALUES or \"variants\" in %s",
			       o->scene);
	/* --seed overrides the scene's seed after every --set: a varied seed would be lost. */
	for (int i = 0; i < r->nv && o->c.ov.has_seed; i++)
		if (!strcmp(r->vs[i].key, "seed"))
			return tp_errf(&r->err, TP_EUSAGE,
				       "batch: --seed would replace every variant's varied seed: give "
				       "one of them");
	double count = 1;
	for (int i = 0; i < r->nv; i++)
		count *= r->vs[i].n;
	if (count > BATCH_MAX_VARIANTS)
		return tp_errf(&r->err, TP_EUSAGE, "batch: %.0f variants, more than %d", count,
			       BATCH_MAX_VARIANTS);
	r->nvariants = (int)count;
	return 0;
}

/* Every variant's name, --set words and outputs; two variants of one name are refused. */
static int name_variants(batch_run *r)
{
	const batch_opts *o = r->o;
	const vary *vs = r->vs;
	const int nv = r->nv, nvariants = r->nvariants;
	char why[256];
	/* Names: the pattern, or {scene}_KEY{KEY}... */
	char pattern[1024];
	/* The scene's name pattern belongs to the scene's own "variants": keys varied on
	 * the command line may not be the ones it names. */
	const char *pat = o->name ? o->name : o->nvary_spec ? NULL : r->scene_pattern;
	if (!pat) {
		vary_default_pattern(vs, nv, pattern, sizeof pattern);
		pat = pattern;
	}
	char scene_base[256];
	const char *b = strrchr(o->scene, '/');
	snprintf(scene_base, sizeof scene_base, "%s", b ? b + 1 : o->scene);
	if (ends_with(scene_base, ".json"))
		scene_base[strlen(scene_base) - 5] = 0;

	variant *vars = r->vars = calloc((size_t)nvariants, sizeof *vars);
	if (!vars)
		return tp_errf(&r->err, TP_EIO, "out of memory");
	int pick[BATCH_MAX_VARY] = { 0 };
	for (int v = 0; v < nvariants; v++) {
		/* Odometer: the last key varies fastest. */
		int left = v;
		for (int i = nv - 1; i >= 0; i--) {
			pick[i] = left % vs[i].n;
			left /= vs[i].n;
		}
		variant *va = &vars[v];
		va->status = -1;
		if (vary_name(pat, scene_base, v, nvariants, vs, nv, pick, va->name, why, sizeof why) < 0)
			return tp_errf(&r->err, TP_EUSAGE, "batch: %s", why);
		for (int i = 0; i < nv; i++) {
			size_t len = strlen(vs[i].key) + strlen(vs[i].values[pick[i]]) + 2;
			if (!(va->sets[i] = malloc(len)))
				return tp_errf(&r->err, TP_EIO, "out of memory");
			snprintf(va->sets[i], len, "%s=%s", vs[i].key, vs[i].values[pick[i]]);
		}
		for (int u = 0; u < v; u++)
			if (!strcmp(vars[u].name, va->name))
				return tp_errf(&r->err, TP_EUSAGE,
					       "batch: variants %d and %d are both named '%s' (put every varied key in --name)",
					       u + 1, v + 1, va->name);
		int rc = plan_variant(o, &r->base, va, nv, o->dir, &r->err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* --sheet-only: the renders ran elsewhere (--tasks), so every variant counts as done if
 * its picture is there. */
static int take_rendered(batch_run *r)
{
	r->done = r->nvariants;
	for (int v = 0; v < r->nvariants; v++) {
		variant *va = &r->vars[v];
		va->status = 0;
		if (va->preview[0] && !tp_path_exists(va->preview))
			return tp_errf(&r->err, TP_EINPUT, "batch: %s: not rendered yet (no %s)",
				       va->name, va->preview);
	}
	return 0;
}

int cmd_batch(int argc, char **argv)
{
	batch_opts o = { .thumb = 192 };
	int prc = parse_args(argc, argv, &o);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;

	batch_run run = { .o = &o, .err = { "" } }, *r = &run;
	int rc;
	tp_cli_catch_signals();
	r->base = o.c.ov; /* --frames, --size, --scale, --seed; the sets below */
	r->base.sets = NULL;
	r->base.nsets = 0;
	r->base.output = NULL;
	cli_overrides first = o.c.ov;
	first.output = NULL;
	if ((rc = cli_load(o.scene, &first, tp_cli_threads(o.c.threads), &r->sc, &r->err)) < 0 ||
	    (rc = read_varies(r)) < 0 || (rc = name_variants(r)) < 0)
		goto fail;

	r->start = tp_now();
	snprintf(r->sheet_path, sizeof r->sheet_path, "%s", o.sheet ? o.sheet : "");
	if (!o.sheet)
		snprintf(r->sheet_path, sizeof r->sheet_path, "%s/contact.png", o.dir);
	if (o.tasks) {
		print_tasks(&o, r->vars, r->nvariants, r->nv);
		goto fail; /* rc == 0: only the clean-up */
	}
	if (o.sheet_only)
		rc = take_rendered(r);
	else if ((rc = batch_make_dirs(r)) == 0)
		rc = batch_run_variants(r);
	rc = batch_finish(r, rc);

fail:
	if (o.nvary_spec)
		for (int i = 0; i < r->nv; i++) {
			for (int k = 0; r->vs[i].values && k < r->vs[i].n; k++)
				free((char *)r->vs[i].values[k]);
			free((char **)r->vs[i].values);
			free((char *)r->vs[i].key);
		}
	free_variants(r->vars, r->nvariants);
	tp_scene_free(r->sc);
	if (rc < 0 && rc != TP_EINTR)
		return tp_cli_fail(rc, &r->err);
	return tp_exit_code(rc);
}
