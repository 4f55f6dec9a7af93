/* The preview's minimal-edit writer (src/preview/jsonedit.h): the input is JSON text, a
 * NUL byte, then a JSON array of operations. Whatever they are, an edit either fails with
 * a one-line reason and no result, or gives JSON text whose undo splices give back the
 * original byte for byte and whose redo splices give the result again. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preview/jsonedit.h"
#include "scene/jsonpos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int rc, const pv_jedit *e, const char *why)
{
	if (rc > 0 || rc < PV_JEDIT_NOMEM || e->text || e->undo || e->redo || !why[0] ||
	    strchr(why, '\n')) {
		fprintf(stderr, "bad failure %d: '%s'\n", rc, why);
		abort();
	}
}

/* Applies the splices `ops` (an undo or redo list) to text and checks that the result is
 * want[0..n). */
static void replay(const char *text, size_t len, const char *ops, const char *want, size_t n)
{
	cJSON *o = cJSON_Parse(ops);
	pv_jedit e;
	char why[512] = "";
	if (!o)
		abort(); /* the writer's own JSON must parse */
	int rc = pv_jedit_apply(text, len, o, &e, why, sizeof why);
	cJSON_Delete(o);
	if (rc == PV_JEDIT_NOMEM)
		return;
	if (rc != 0 || e.len != n || memcmp(e.text, want, n)) {
		fprintf(stderr, "replay of %s failed: %d %s\n", ops, rc, why);
		abort();
	}
	pv_jedit_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	if (!nul)
		return 0;
	size_t len = (size_t)(nul - data);
	const char *text = (const char *)data;
	size_t off;
	const char *bad;
	if (jsonpos_check_text(text, len, &off, &bad) < 0 ||
	    jsonpos_check(text, len, &off, &bad) < 0)
		return 0;
	cJSON *ops = cJSON_ParseWithLength((const char *)nul + 1, size - len - 1);
	if (!ops)
		return 0;
	pv_jedit e;
	char why[512] = "";
	int rc = pv_jedit_apply(text, len, ops, &e, why, sizeof why);
	cJSON_Delete(ops);
	if (rc < 0) {
		check_failure(rc, &e, why);
		return 0;
	}
	if (jsonpos_check_text(e.text, e.len, &off, &bad) < 0 ||
	    jsonpos_check(e.text, e.len, &off, &bad) < 0 || strlen(e.text) != e.len)
		abort(); /* a success is always JSON */
	replay(e.text, e.len, e.undo, text, len);
	replay(text, len, e.redo, e.text, e.len);
	pv_jedit_free(&e);
	return 0;
}
