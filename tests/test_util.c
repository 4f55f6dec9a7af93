#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "util/fsutil.h"
#include "util/error.h"
#include "exitstatus.h"
#include "util/opts.h"
#include "util/rng.h"

Test(rng, pcg32_reference_sequence)
{
	/* PCG32 reference: pcg32-demo with seed 42, stream 54 prints these first values. */
	tp_rng r;
	tp_rng_seed(&r, 42u, 54u);
	const uint32_t want[] = { 0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e };
	for (int i = 0; i < 6; i++)
		cr_assert_eq(tp_rng_u32(&r), want[i], "value %d", i);
}

Test(rng, below_stays_in_range_and_covers_it)
{
	tp_rng r;
	tp_rng_seed(&r, 1, 2);
	int seen[7] = { 0 };
	for (int i = 0; i < 7000; i++) {
		uint32_t v = tp_rng_below(&r, 7);
		cr_assert_lt(v, 7u);
		seen[v]++;
	}
	for (int i = 0; i < 7; i++)
		cr_assert_gt(seen[i], 800, "bucket %d has %d", i, seen[i]);
}

Test(rng, unit_in_half_open_interval)
{
	tp_rng r;
	tp_rng_seed(&r, 7, 0);
	for (int i = 0; i < 100000; i++) {
		double u = tp_rng_unit(&r);
		cr_assert(u >= 0.0 && u < 1.0);
	}
}

typedef struct { int n; double d; int b; int e; } demo_priv;
static const char *const demo_choices[] = { "a", "bee", NULL };
static const tp_option demo_opts[] = {
	{ "n", "an int", offsetof(demo_priv, n), TP_OPT_INT, 5, 0, 16, NULL, TP_UNIT_LENGTH },
	{ "d", "a double", offsetof(demo_priv, d), TP_OPT_DOUBLE, 0.5, 0, 1, NULL, TP_UNIT_AREA },
	{ "b", "a bool", offsetof(demo_priv, b), TP_OPT_BOOL, 1, 0, 1, NULL, TP_UNIT_LENGTH },
	{ "e", "an enum", offsetof(demo_priv, e), TP_OPT_ENUM, 1, 0, 1, demo_choices, TP_UNIT_NONE },
	{ NULL },
};

Test(opts, defaults_set_and_range_errors)
{
	demo_priv p = { 0 };
	tp_err err;
	tp_opts_defaults(&p, demo_opts);
	cr_assert_eq(p.n, 5);
	cr_assert_eq(p.d, 0.5);
	cr_assert_eq(p.b, 1);
	cr_assert_eq(p.e, 1);
	cr_assert_eq(tp_opts_set(&p, tp_opts_find(demo_opts, "n"), 9, &err), 0);
	cr_assert_eq(p.n, 9);
	cr_assert_eq(tp_opts_set(&p, tp_opts_find(demo_opts, "n"), 17, &err), TP_EINPUT);
	cr_assert_str_eq(err.msg, "n: must be in 0..16 (got 17)");
	cr_assert_eq(tp_opts_set(&p, tp_opts_find(demo_opts, "n"), 2.5, &err), TP_EINPUT);
	cr_assert_str_eq(err.msg, "n: must be a whole number (got 2.5)");
	cr_assert_null(tp_opts_find(demo_opts, "zz"));
	cr_assert_eq(tp_exit_code(TP_EINPUT), 3);
	cr_assert_eq(tp_exit_code(TP_EINTR), 130);
}

/* Scene units to pixels: lengths times s, areas times s^2, ints rounded and kept >= 1
 * (0 keeps meaning "automatic"), bools and enums untouched, s = 1 changes nothing. */
Test(util, opts_scale_converts_by_unit)
{
	demo_priv p;
	tp_opts_defaults(&p, demo_opts);
	tp_opts_scale(&p, demo_opts, 1.0);
	cr_assert_eq(p.n, 5);
	cr_assert_eq(p.d, 0.5);
	tp_opts_scale(&p, demo_opts, 3.0);
	cr_assert_eq(p.n, 15);
	cr_assert_float_eq(p.d, 4.5, 1e-12);
	cr_assert_eq(p.b, 1);
	cr_assert_eq(p.e, 1);
	tp_opts_scale(&p, demo_opts, 0.01);
	cr_assert_eq(p.n, 1, "a positive int stays >= 1 (got %d)", p.n);
	p.n = 0;
	tp_opts_scale(&p, demo_opts, 4.0);
	cr_assert_eq(p.n, 0, "0 (automatic) stays 0");
}

/* Messages about files (issue 46): a long path loses its middle, never the file name nor
 * the reason; bytes of a damaged file are escaped. */
Test(util, long_paths_are_shortened_in_the_middle)
{
	char path[3000], out[128];
	int k = snprintf(path, sizeof path, "/data/");
	for (int i = 0; i < 40; i++)
		k += snprintf(path + k, sizeof path - (size_t)k, "dir%02d-\xc3\xa9t\xc3\xa9/", i);
	snprintf(path + k, sizeof path - (size_t)k, "frame_0001.exr");
	tp_path_ellipsize(path, out, sizeof out);
	cr_assert_lt(strlen(out), sizeof out);
	cr_assert(!strncmp(out, "/data/dir00", 11), "%s", out);
	cr_assert(strstr(out, "...") != NULL, "%s", out);
	cr_assert(strstr(out, "/frame_0001.exr") && !strcmp(strstr(out, "/frame_0001.exr"),
							     "/frame_0001.exr"),
		  "%s", out);
	/* no UTF-8 character cut: every lead byte has its continuation bytes */
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		if (*p == 0xc3)
			cr_assert(p[1] >= 0x80 && p[1] < 0xc0, "%s", out);
		else if (*p >= 0x80)
			cr_assert(p[-1] == 0xc3, "%s", out);
	tp_path_ellipsize("/short/x.png", out, sizeof out);
	cr_assert_str_eq(out, "/short/x.png");

	tp_err e;
	cr_assert_eq(tp_errpath(&e, TP_EIO, path, "write failed (%s)", "No space left on device"),
		     TP_EIO);
	cr_assert_lt(strlen(e.msg), sizeof e.msg);
	const char *tail = "/frame_0001.exr: write failed (No space left on device)";
	cr_assert_str_eq(e.msg + strlen(e.msg) - strlen(tail), tail);
	cr_assert(!strncmp(e.msg, "/data/dir00", 11), "%s", e.msg);

	char esc[64];
	tp_escape_bytes("0.1\xff\x01\\ok", 8, 32, esc, sizeof esc);
	cr_assert_str_eq(esc, "0.1\\xff\\x01\\\\ok");
	tp_escape_bytes("abcdef", 6, 3, esc, sizeof esc);
	cr_assert_str_eq(esc, "abc...");
}

/* The one suffix check of every path decision (encoders' probes, compare's sources,
 * tasks, the contact sheet): any case, and never the whole name. */
Test(util, has_suffix_ignores_case_and_needs_a_name)
{
	cr_assert(tp_has_suffix("out/a.png", ".png"));
	cr_assert(tp_has_suffix("OUT/A.PNG", ".png"));
	cr_assert_not(tp_has_suffix(".png", ".png"));
	cr_assert_not(tp_has_suffix("a.png.txt", ".png"));
	cr_assert_not(tp_has_suffix("", ".png"));
	cr_assert(tp_is_mp4_path("x.MOV") && tp_is_mp4_path("x.m4v") && tp_is_mp4_path("x.mp4"));
	cr_assert_not(tp_is_mp4_path("x.mkv"));
	cr_assert_not(tp_is_mp4_path(".mp4"));
}
