/* draft.c - the draft's edits of the scene (draft.h). */
#include "preview/draft.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tidepool.h"

/* The default and the largest value of solver parameter `name`, from the registry. */
static int param_of(const char *solver, const char *name, double *def, double *hi)
{
	for (int i = 0; i < tp_solver_count(); i++) {
		tp_solver_info si = TP_SOLVER_INFO_INIT;
		if (tp_solver_get(i, &si) < 0 || strcmp(si.name, solver) != 0)
			continue;
		for (int p = 0; p < si.nparams; p++) {
			tp_param pa = TP_PARAM_INIT;
			if (tp_solver_param(i, p, &pa) == 0 && !strcmp(pa.name, name)) {
				*def = pa.def;
				/* the range as `tidepool solvers` prints it: "LO..HI" */
				const char *dots = strstr(pa.range, "..");
				*hi = dots ? strtod(dots + 2, NULL) : HUGE_VAL;
				return 0;
			}
		}
	}
	return -1;
}

/* Appends "KEY=VALUE" to buf at *used and to sets; -1 when either is full. */
static int add_set(char *buf, size_t n, size_t *used, const char **sets, int *k, const char *fmt,
		   const char *key, double v)
{
	if (*k >= PV_DRAFT_MAX_SETS || *used >= n)
		return -1;
	int w = snprintf(buf + *used, n - *used, fmt, key, v);
	if (w < 0 || (size_t)w >= n - *used)
		return -1;
	sets[(*k)++] = buf + *used;
	*used += (size_t)w + 1;
	return 0;
}

int pv_draft_sets(const char *text, const char *solver, double scale, char *buf, size_t n,
		  const char *sets[PV_DRAFT_MAX_SETS])
{
	double def, hi, rdef, rhi;
	if (!text || !solver || strcmp(solver, "sph") != 0 || !(scale > 0) ||
	    param_of("sph", "spacing", &def, &hi) < 0 || param_of("sph", "radius", &rdef, &rhi) < 0)
		return 0;
	cJSON *root = cJSON_Parse(text);
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
	const cJSON *js = cJSON_GetObjectItemCaseSensitive(params, "spacing");
	const cJSON *jr = cJSON_GetObjectItemCaseSensitive(params, "radius");
	double spacing = cJSON_IsNumber(js) ? js->valuedouble : def;
	double radius = cJSON_IsNumber(jr) ? jr->valuedouble : 0;
	/* spacing s scene units is s * scale draft pixels */
	double want = fmin(PV_DRAFT_SPH_SPACING / scale, hi);
	int k = 0;
	size_t used = 0;
	if (!root || !(spacing > 0) || want <= spacing)
		goto done;
	double area = (want / spacing) * (want / spacing); /* of a particle, over the scene's */
	if (add_set(buf, n, &used, sets, &k, "%s=%.17g", "params.spacing", want) < 0)
		goto fail;
	/* an explicit kernel radius keeps its ratio to the spacing */
	if (radius > 0 && add_set(buf, n, &used, sets, &k, "%s=%.17g", "params.radius",
				  fmin(radius * want / spacing, rhi)) < 0)
		goto fail;
	/* blocks, drops and rain are areas of water: the wider spacing fills them with fewer
	 * particles. A stream's rate and cap count particles: fewer of them, each `area`
	 * times larger, pour as much water. */
	const cJSON *em = cJSON_GetObjectItemCaseSensitive(root, "emitters");
	int i = 0;
	for (const cJSON *e = cJSON_IsArray(em) ? em->child : NULL; e; e = e->next, i++) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
		if (!cJSON_IsString(type) || strcmp(type->valuestring, "stream") != 0)
			continue;
		const cJSON *rate = cJSON_GetObjectItemCaseSensitive(e, "rate");
		const cJSON *cap = cJSON_GetObjectItemCaseSensitive(e, "cap");
		char key[48];
		snprintf(key, sizeof key, "emitters.%d.rate", i);
		if (cJSON_IsNumber(rate) &&
		    add_set(buf, n, &used, sets, &k, "%s=%.17g", key, rate->valuedouble / area) < 0)
			goto fail;
		snprintf(key, sizeof key, "emitters.%d.cap", i);
		if (cJSON_IsNumber(cap) && cap->valuedouble > 0 &&
		    add_set(buf, n, &used, sets, &k, "%s=%.0f", key,
			    fmax(1, round(cap->valuedouble / area))) < 0)
			goto fail;
	}
done:
	cJSON_Delete(root);
	return k;
fail: /* more streams than fit: the draft is the scene's own, only smaller */
	cJSON_Delete(root);
	return 0;
}
