/* The preview's minimal-edit writer (src/preview/jsonedit.h): each edit checked byte for
 * byte against the text it must give, and its undo and redo splices against the text
 * before and after. */
#include <criterion/criterion.h>
#include <string.h>

#include "preview/jsonedit.h"

/* Applies the JSON array `ops` to text; returns the code, the result in *out. */
static int edit(const char *text, const char *ops, pv_jedit *out, char *why)
{
	cJSON *o = cJSON_Parse(ops);
	cr_assert(o, "test ops not JSON: %s", ops);
	int rc = pv_jedit_apply(text, strlen(text), o, out, why, 512);
	cJSON_Delete(o);
	return rc;
}

/* text edited by ops must be want exactly; then its undo gives text back and its redo
 * want again. */
static void expect(const char *text, const char *ops, const char *want)
{
	pv_jedit e, u, r;
	char why[512] = "";
	cr_assert_eq(edit(text, ops, &e, why), 0, "%s: %s", ops, why);
	cr_assert_str_eq(e.text, want, "%s", ops);
	cr_assert_eq(e.len, strlen(want));
	cr_assert_eq(edit(e.text, e.undo, &u, why), 0, "undo %s: %s", e.undo, why);
	cr_assert_str_eq(u.text, text, "undo of %s", ops);
	cr_assert_eq(edit(text, e.redo, &r, why), 0, "redo %s: %s", e.redo, why);
	cr_assert_str_eq(r.text, want, "redo of %s", ops);
	pv_jedit_free(&e);
	pv_jedit_free(&u);
	pv_jedit_free(&r);
}

static void refuse(const char *text, const char *ops, int code, const char *words)
{
	pv_jedit e;
	char why[512] = "";
	cr_assert_eq(edit(text, ops, &e, why), code, "%s: %s", ops, why);
	cr_assert(strstr(why, words), "%s: \"%s\" lacks \"%s\"", ops, why, words);
	cr_assert_null(e.text);
}

static const char pond[] =
	"{\n"
	"  \"fps\": 30,\t\"seed\" :1,\n"
	"  \"drops\": [\n"
	"    { \"t\": 0.2, \"at\": [320, 180], \"radius\": 10, \"strength\": 8.0 },\n"
	"    { \"t\": 1.4, \"at\": [180,110], \"radius\": 7, \"strength\": 6.0 }\n"
	"  ]\n"
	"}\n";

Test(jsonedit, a_number_in_an_array_is_the_only_bytes_rewritten)
{
	expect(pond, "[{\"op\":\"replace\",\"path\":\"/drops/1/at\",\"value\":[185.5,110]}]",
	       "{\n  \"fps\": 30,\t\"seed\" :1,\n  \"drops\": [\n"
	       "    { \"t\": 0.2, \"at\": [320, 180], \"radius\": 10, \"strength\": 8.0 },\n"
	       "    { \"t\": 1.4, \"at\": [185.5,110], \"radius\": 7, \"strength\": 6.0 }\n  "
	       "]\n}\n");
}

Test(jsonedit, equal_values_keep_their_spelling)
{
	/* 8 == 8.0 and the same object: nothing changes, not even "8.0" */
	expect(pond,
	       "[{\"op\":\"replace\",\"path\":\"/drops/0\",\"value\":{\"strength\":8,\"radius\":10,"
	       "\"at\":[320,180],\"t\":0.2}}]",
	       pond);
	expect(pond, "[{\"op\":\"replace\",\"path\":\"/drops/0/strength\",\"value\":8.5}]",
	       "{\n  \"fps\": 30,\t\"seed\" :1,\n  \"drops\": [\n"
	       "    { \"t\": 0.2, \"at\": [320, 180], \"radius\": 10, \"strength\": 8.5 },\n"
	       "    { \"t\": 1.4, \"at\": [180,110], \"radius\": 7, \"strength\": 6.0 }\n  ]\n}\n");
}

Test(jsonedit, numbers_are_written_short_and_exact)
{
	expect("[1]", "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":0.1}]", "[0.1]");
	expect("[1]", "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":-0.0}]", "[0]");
	expect("[1]", "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":1e300}]", "[1e+300]");
	expect("[1]", "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":123456789012}]",
	       "[123456789012]");
	expect("[1]", "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":0.30000000000000004}]",
	       "[0.30000000000000004]");
}

Test(jsonedit, a_new_shape_is_written_whole)
{
	expect("{\"a\": [1, 2]}", "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":[1,2,3]}]",
	       "{\"a\": [1, 2, 3]}");
	expect("{\"a\": 1}",
	       "[{\"op\":\"replace\",\"path\":\"/"
	       "a\",\"value\":{\"b\":\"x\\\"y\",\"c\":[true,null]}}]",
	       "{\"a\": {\"b\": \"x\\\"y\", \"c\": [true, null]}}");
}

Test(jsonedit, an_added_drop_copies_its_neighbour_and_separator)
{
	expect(pond,
	       "[{\"op\":\"add\",\"path\":\"/drops/-\",\"value\":{\"t\":3,\"at\":[5,6],"
	       "\"radius\":7,\"strength\":6}}]",
	       "{\n  \"fps\": 30,\t\"seed\" :1,\n  \"drops\": [\n"
	       "    { \"t\": 0.2, \"at\": [320, 180], \"radius\": 10, \"strength\": 8.0 },\n"
	       "    { \"t\": 1.4, \"at\": [180,110], \"radius\": 7, \"strength\": 6.0 },\n"
	       "    { \"t\": 3, \"at\": [5,6], \"radius\": 7, \"strength\": 6.0 }\n  ]\n}\n");
	expect(pond,
	       "[{\"op\":\"add\",\"path\":\"/drops/0\",\"value\":{\"t\":0,\"at\":[1,2],"
	       "\"radius\":10,\"strength\":8}}]",
	       "{\n  \"fps\": 30,\t\"seed\" :1,\n  \"drops\": [\n"
	       "    { \"t\": 0, \"at\": [1, 2], \"radius\": 10, \"strength\": 8.0 },\n"
	       "    { \"t\": 0.2, \"at\": [320, 180], \"radius\": 10, \"strength\": 8.0 },\n"
	       "    { \"t\": 1.4, \"at\": [180,110], \"radius\": 7, \"strength\": 6.0 }\n  ]\n}\n");
}

Test(jsonedit, adds_to_empty_and_single_containers)
{
	expect("{\"d\": []}", "[{\"op\":\"add\",\"path\":\"/d/-\",\"value\":{\"t\":1}}]",
	       "{\"d\": [{\"t\": 1}]}");
	expect("{\"d\": [\n  1\n]}", "[{\"op\":\"add\",\"path\":\"/d/1\",\"value\":2}]",
	       "{\"d\": [\n  1,\n  2\n]}");
	expect("{\n  \"a\": 1\n}", "[{\"op\":\"add\",\"path\":\"/drops\",\"value\":[{\"t\":1}]}]",
	       "{\n  \"a\": 1,\n  \"drops\": [{\"t\": 1}]\n}");
	expect("{}", "[{\"op\":\"add\",\"path\":\"/a~1b\",\"value\":1}]", "{\"a/b\": 1}");
}

Test(jsonedit, remove_takes_one_separator_with_the_member)
{
	const char *a = "[ 1,  2 ,3 ]";
	expect(a, "[{\"op\":\"remove\",\"path\":\"/0\"}]", "[ 2 ,3 ]");
	expect(a, "[{\"op\":\"remove\",\"path\":\"/1\"}]", "[ 1,  3 ]");
	expect(a, "[{\"op\":\"remove\",\"path\":\"/2\"}]", "[ 1,  2 ]");
	expect("[ 7 ]", "[{\"op\":\"remove\",\"path\":\"/0\"}]", "[  ]");
	expect("{\"a\": 1, \"b\": 2}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", "{\"a\": 1}");
	/* add then remove (and remove then add) give the same bytes back */
	expect(pond,
	       "[{\"op\":\"add\",\"path\":\"/drops/1\",\"value\":{\"t\":9}},"
	       "{\"op\":\"remove\",\"path\":\"/drops/1\"}]",
	       pond);
}

Test(jsonedit, pointers_follow_rfc_6901)
{
	expect("{\"a~b\": {\"\": [0, 1]}}",
	       "[{\"op\":\"replace\",\"path\":\"/a~0b//1\",\"value\":5}]",
	       "{\"a~b\": {\"\": [0, 5]}}");
	expect("7", "[{\"op\":\"replace\",\"path\":\"\",\"value\":8}]", "8");
	refuse("[1]", "[{\"op\":\"replace\",\"path\":\"/01\",\"value\":8}]", PV_JEDIT_NOPATH,
	       "no member");
	refuse("[1]", "[{\"op\":\"replace\",\"path\":\"/1\",\"value\":8}]", PV_JEDIT_NOPATH,
	       "no member");
	refuse("[1]", "[{\"op\":\"replace\",\"path\":\"/-\",\"value\":8}]", PV_JEDIT_NOPATH,
	       "no member");
	refuse("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/a/b\",\"value\":8}]", PV_JEDIT_NOPATH,
	       "not an object or array");
	refuse("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/a~2\",\"value\":8}]", PV_JEDIT_BAD,
	       "~");
	refuse("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":8}]", PV_JEDIT_NOPATH,
	       "already");
	refuse("[1]", "[{\"op\":\"add\",\"path\":\"/2\",\"value\":8}]", PV_JEDIT_NOPATH,
	       "no place");
}

Test(jsonedit, splices_are_bounded_and_must_leave_json)
{
	expect("[1, 2]", "[{\"op\":\"splice\",\"at\":1,\"delete\":1,\"text\":\"10\"}]", "[10, 2]");
	refuse("[1]", "[{\"op\":\"splice\",\"at\":2,\"delete\":5,\"text\":\"\"}]", PV_JEDIT_BAD,
	       "outside");
	refuse("[1]", "[{\"op\":\"splice\",\"at\":-1,\"delete\":0,\"text\":\"\"}]", PV_JEDIT_BAD,
	       "offset");
	refuse("[1]", "[{\"op\":\"splice\",\"at\":1,\"delete\":1,\"text\":\"x\"}]",
	       PV_JEDIT_INVALID, "invalid JSON");
	refuse("[1]", "[{\"op\":\"splice\",\"at\":0,\"delete\":0}]", PV_JEDIT_BAD, "text");
	refuse("[1]", "{}", PV_JEDIT_BAD, "ops");
	refuse("[1]", "[{\"op\":\"copy\",\"path\":\"/0\"}]", PV_JEDIT_BAD, "op:");
	refuse("[1", "[]", PV_JEDIT_INVALID, "not JSON");
	/* the second operation is named when it fails */
	refuse("[1]",
	       "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":2},{\"op\":\"remove\",\"path\":\"/"
	       "5\"}]",
	       PV_JEDIT_NOPATH, "ops[1]");
}
