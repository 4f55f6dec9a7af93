/* The JSON Schema of scene files (scenes/schema/tidepool-scene-1.schema.json): every
 * example scene validates with a real validator (python3-jsonschema), schema and loader
 * agree on tests/data/bad_scenes.json and on the members of every object and the
 * parameters of every solver (tests/schema_check.py says how). */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_util.h"

#define SCHEMA "scenes/schema/tidepool-scene-1.schema.json"

static int schema_check(const char *schema, char *log, size_t n)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "/usr/bin/python3 tests/schema_check.py %s %s tests/data/bad_scenes.json "
		 "scenes/*.json "
		 "scenes/textures/*.json 2>&1",
		 tp_bin(), schema);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t k = fread(log, 1, n - 1, p);
	log[k] = 0;
	int st = pclose(p);
	cr_assert(WIFEXITED(st), "%s", log);
	return WEXITSTATUS(st);
}

static char logbuf[1 << 16];

Test(schema, examples_validate_and_schema_agrees_with_loader)
{
	cr_assert_eq(schema_check(SCHEMA, logbuf, sizeof logbuf), 0, "%s", logbuf);
	cr_assert(strstr(logbuf, " 0 disagreements"), "%s", logbuf);
}

/* The check itself finds a member the schema lacks. */
Test(schema, a_member_missing_from_the_schema_is_found)
{
	const char *tmp = "/tmp/tp-schema-test.json";
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "/usr/bin/python3 -c \"import json; s = json.load(open('%s')); "
		 "del s['properties']['render']['properties']['shadows']; json.dump(s, open('%s', "
		 "'w'))\"",
		 SCHEMA, tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(schema_check(tmp, logbuf, sizeof logbuf), 1, "%s", logbuf);
	cr_assert(strstr(logbuf, "render: the loader knows") &&
			  strstr(logbuf, "differences: ['shadows']"),
		  "%s", logbuf);
	remove(tmp);
}

/* Every example scene names the schema, by a path that resolves from where it is. */
Test(schema, every_example_scene_names_the_schema)
{
	FILE *p = popen("for f in scenes/*.json scenes/textures/*.json; do "
			"s=$(sed -n 's/.*\"\\$schema\": *\"\\([^\"]*\\)\".*/\\1/p' \"$f\"); "
			"[ -n \"$s\" ] && [ -f \"$(dirname \"$f\")/$s\" ] || echo \"$f\"; done",
			"r");
	cr_assert_not_null(p);
	size_t k = fread(logbuf, 1, sizeof logbuf - 1, p);
	logbuf[k] = 0;
	pclose(p);
	cr_assert_str_eq(logbuf, "", "scenes without a resolvable \"$schema\": %s", logbuf);
}
