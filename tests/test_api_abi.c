/* tidepool.h's ABI (issue 48): a caller built against an older, shorter struct gets no
 * byte read or written past its size; one stride unit (bytes) for every call; threads,
 * strides and option counts outside what the library takes are refused; messages name
 * the overrides as the caller asks. Built with ASan (make check-asan), every struct here
 * sits in an allocation of exactly its size, so an access past it is a failure too. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tidepool.h"

/* The structs as a caller of an older library might have compiled them: cut after a
 * member, their `size` saying so. */
typedef struct old_load_options {
	size_t size;
	int width, height;
} old_load_options;
typedef struct old_scene_info {
	size_t size;
	const char *path;
	const char *solver;
	int width;
} old_scene_info;
typedef struct old_error {
	size_t size;
	tp_status code;
	char file[16];
} old_error;
typedef struct old_format {
	size_t size;
	int width, height;
} old_format;

#define GUARD 64
/* n bytes of struct, then GUARD bytes of 0xA5 that must stay so. */
static void *guarded(size_t n)
{
	unsigned char *p = malloc(n + GUARD);
	cr_assert(p);
	memset(p, 0, n);
	memset(p + n, 0xA5, GUARD);
	memcpy(p, &n, sizeof n);
	return p;
}

static void guard_intact(const void *p, size_t n, const char *what)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < GUARD; i++)
		cr_assert_eq(b[n + i], 0xA5, "%s: byte %zu past its size was written", what, i);
}

/* Exactly n bytes (ASan sees any access past them). */
static void *exact(size_t n)
{
	void *p = calloc(1, n);
	cr_assert(p);
	memcpy(p, &n, sizeof n);
	return p;
}

Test(api_abi, an_older_callers_structs_are_read_and_written_within_their_size)
{
	/* options cut after width/height: 96x54, every later member its default */
	old_load_options *o = exact(sizeof *o);
	o->width = 96;
	o->height = 54;
	old_error *e = guarded(sizeof *e);
	tp_scene *s = NULL;
	cr_assert_eq(tp_scene_load_file("scenes/pond.json", (const tp_load_options *)o, &s,
					(tp_error *)e),
		     0);
	guard_intact(e, sizeof *e, "tp_error on success");
	cr_assert_eq(e->code, 0);

	old_scene_info *in = guarded(sizeof *in);
	cr_assert_eq(tp_scene_get_info(s, (tp_scene_info *)in), 0);
	guard_intact(in, sizeof *in, "tp_scene_info");
	cr_assert_eq(in->size, sizeof *in, "the caller's size is kept");
	cr_assert_eq(in->width, 96);
	cr_assert_str_eq(in->solver, "ripple");

	old_format *f = guarded(sizeof *f);
	cr_assert_eq(tp_scene_format(s, TP_MODE_COLOR, (tp_format *)f, (tp_error *)e), 0);
	guard_intact(f, sizeof *f, "tp_format");
	cr_assert_eq(f->width, 96);
	cr_assert_eq(f->height, 54);

	/* an error into 16 bytes of file name: cut, the message not written at all */
	cr_assert_eq(tp_scene_seek(s, 999999, (tp_error *)e), TP_ERROR_ARGUMENT);
	guard_intact(e, sizeof *e, "tp_error on failure");
	cr_assert_eq(e->code, TP_ERROR_ARGUMENT);

	/* stats cut after `frame` */
	size_t cut = offsetof(tp_frame_stats, t);
	tp_frame_stats *st = guarded(cut);
	cr_assert_eq(tp_scene_stats(s, 3, st, NULL), 0);
	guard_intact(st, cut, "tp_frame_stats");
	cr_assert_eq(st->frame, 3);

	/* an error of size 0 is not written; one smaller than its size member is refused */
	tp_error *none = guarded(sizeof(size_t));
	memset(none, 0, sizeof(size_t));
	cr_assert_eq(tp_scene_seek(s, -1, none), TP_ERROR_ARGUMENT);
	guard_intact(none, sizeof(size_t), "a tp_error of size 0");
	tp_scene_info *zero = guarded(sizeof(size_t));
	memset(zero, 0, sizeof(size_t));
	cr_assert_eq(tp_scene_get_info(s, zero), TP_ERROR_ARGUMENT);
	guard_intact(zero, sizeof(size_t), "a tp_scene_info of size 0");

	tp_scene_free(s);
	free(o);
	free(e);
	free(in);
	free(f);
	free(st);
	free(none);
	free(zero);
}

/* A newer caller's longer struct: the members the library does not know read as zero. */
Test(api_abi, a_newer_callers_longer_struct_gets_zeros_past_the_librarys)
{
	tp_scene *s = NULL;
	cr_assert_eq(tp_scene_load_file("scenes/pond.json", NULL, &s, NULL), 0);
	size_t longer = sizeof(tp_scene_info) + 32;
	unsigned char *in = malloc(longer);
	memset(in, 0xA5, longer);
	memcpy(in, &longer, sizeof longer);
	cr_assert_eq(tp_scene_get_info(s, (tp_scene_info *)in), 0);
	for (size_t i = sizeof(tp_scene_info); i < longer; i++)
		cr_assert_eq(in[i], 0, "byte %zu of a newer member", i);
	cr_assert_eq(((tp_scene_info *)in)->frames, 240);
	free(in);
	tp_scene_free(s);
}

/* A newer caller's longer options: zeros past the library's members are their defaults;
 * a member the library does not know, set, is refused rather than ignored. */
Test(api_abi, a_newer_callers_unknown_members_must_be_zero)
{
	size_t longer = sizeof(tp_load_options) + 16;
	unsigned char *o = calloc(1, longer);
	memcpy(o, &longer, sizeof longer);
	((tp_load_options *)o)->scale = 0.1;
	tp_error e = TP_ERROR_INIT;
	tp_scene *s = NULL;
	cr_assert_eq(tp_scene_load_file("scenes/pond.json", (tp_load_options *)o, &s, &e), 0, "%s",
		     e.text);
	tp_scene_free(s);
	o[sizeof(tp_load_options) + 5] = 1;
	cr_assert_eq(tp_scene_load_file("scenes/pond.json", (tp_load_options *)o, &s, &e),
		     TP_ERROR_ARGUMENT);
	cr_assert(strstr(e.message, "members past the"), "%s", e.message);
	cr_assert_null(s);
	free(o);
}

Test(api_abi, the_library_reports_its_struct_sizes)
{
	cr_assert_eq(tp_struct_size("tp_error"), sizeof(tp_error));
	cr_assert_eq(tp_struct_size("tp_load_options"), sizeof(tp_load_options));
	cr_assert_eq(tp_struct_size("tp_scene_info"), sizeof(tp_scene_info));
	cr_assert_eq(tp_struct_size("tp_frame_stats"), sizeof(tp_frame_stats));
	cr_assert_eq(tp_struct_size("tp_target"), sizeof(tp_target));
	cr_assert_eq(tp_struct_size("tp_map_info"), sizeof(tp_map_info));
	cr_assert_eq(tp_struct_size("tp_nothing"), 0);
	cr_assert_eq(tp_struct_size(NULL), 0);
}

static int load_rc(const tp_load_options *o, tp_error *e)
{
	tp_scene *s = NULL;
	int rc = tp_scene_load_file("scenes/pond.json", o, &s, e);
	tp_scene_free(s);
	return rc;
}

Test(api_abi, threads_options_and_strides_outside_what_the_library_takes_are_refused)
{
	tp_error e = TP_ERROR_INIT;
	tp_load_options o = {.size = sizeof o, .scale = 0.1, .threads = TP_MAX_THREADS + 1};
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_ARGUMENT);
	cr_assert(strstr(e.message, "tp_load_options.threads is 1025, outside 0..1024"), "%s",
		  e.message);
	o.threads = -1;
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_ARGUMENT);
	o.threads = 0;
	o.frames = TP_MAX_FRAMES + 1;
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_ARGUMENT);
	o.frames = -3;
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_ARGUMENT);
	o.frames = 0;
	o.nnames = 2; /* and no names */
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_ARGUMENT);
	o.nnames = 0;
	o.size = 3; /* less than the size member */
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_ARGUMENT);
	cr_assert(strstr(e.message, "TP_LOAD_OPTIONS_INIT"), "%s", e.message);
	o.size = sizeof o;
	o.threads = TP_MAX_THREADS; /* the bound itself is taken */
	tp_scene *s = NULL;
	cr_assert_eq(tp_scene_load_file("scenes/pond.json", &o, &s, &e), 0, "%s", e.text);

	cr_assert_eq(tp_scene_set_threads(s, TP_MAX_THREADS + 1), TP_ERROR_ARGUMENT);
	cr_assert_eq(tp_scene_set_threads(s, -1), TP_ERROR_ARGUMENT);
	cr_assert_eq(tp_scene_set_threads(s, 2), 0);

	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_scene_get_info(s, &in);
	const size_t w = (size_t)in.width, h = (size_t)in.height;
	unsigned char px[4];
	/* rows that overflow: the stride times the rows is past the address space */
	cr_assert_eq(tp_scene_render(s, 0, TP_MODE_COLOR, px, SIZE_MAX / 2, &e), TP_ERROR_ARGUMENT);
	cr_assert(strstr(e.message, "overflow"), "%s", e.message);
	cr_assert_eq(tp_scene_height(s, 0, (float *)px, SIZE_MAX / 8 * 4, &e), TP_ERROR_ARGUMENT);
	cr_assert_eq(tp_scene_render(s, 0, TP_MODE_COLOR, px, 3 * w - 1, &e), TP_ERROR_ARGUMENT);

	/* the height field's stride is in bytes, as the pictures': a padded row */
	const size_t stride = w * sizeof(float) + 12;
	float *padded = malloc(stride * h), *packed = malloc(w * h * sizeof(float));
	cr_assert_eq(tp_scene_height(s, 0, padded, stride + 2, &e), TP_ERROR_ARGUMENT,
		     "not a whole number of floats");
	cr_assert_eq(tp_scene_height(s, 5, padded, stride, &e), 0, "%s", e.text);
	cr_assert_eq(tp_scene_height(s, 5, packed, 0, &e), 0, "%s", e.text);
	for (size_t y = 0; y < h; y++)
		cr_assert(!memcmp((char *)padded + y * stride, packed + y * w, w * sizeof(float)),
			  "row %zu", y);
	free(padded);
	free(packed);
	tp_scene_free(s);
}

Test(api_abi, messages_name_the_overrides_as_the_caller_does)
{
	const char *sets[] = {"params.damping=99"};
	tp_load_options o = {.size = sizeof o, .scale = 0.1, .sets = sets, .nsets = 1};
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_INPUT);
	cr_assert(strstr(e.message, "params.damping (from sets): "), "%s", e.message);
	cr_assert(!strstr(e.text, "--"), "no command-line flag: %s", e.text);
	const char *names[TP_OVERRIDE_COUNT] = {
		[TP_OVERRIDE_SETS] = "overrides=", [TP_OVERRIDE_SIZE] = "size="};
	o.names = names;
	o.nnames = TP_OVERRIDE_COUNT;
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_INPUT);
	cr_assert(strstr(e.message, "params.damping (from overrides=): "), "%s", e.message);
	sets[0] = "params";
	cr_assert_eq(load_rc(&o, &e), TP_ERROR_ARGUMENT);
	cr_assert(strstr(e.text, "overrides= params: expected KEY=VALUE"), "%s", e.text);
	/* a render size of another shape, from the override */
	tp_load_options odd = {
		.size = sizeof odd, .width = 3, .height = 3, .names = names, .nnames = 2};
	cr_assert_eq(load_rc(&odd, &e), TP_ERROR_ARGUMENT, "%s", e.text);
	cr_assert(strstr(e.text, "size=: 3x3 has another shape"), "%s", e.text);
	odd.nnames = 0;
	cr_assert_eq(load_rc(&odd, &e), TP_ERROR_ARGUMENT);
	cr_assert(strstr(e.text, "width/height: 3x3 has another shape"), "%s", e.text);
}
