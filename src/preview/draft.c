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
	cJSON_Delete(root);
	/* spacing s scene units is s * scale draft pixels */
	double want = fmin(PV_DRAFT_SPH_SPACING / scale, hi);
	if (!(spacing > 0) || want <= spacing)
		return 0;
	int k = 0, used = snprintf(buf, n, "params.spacing=%.17g", want);
	if (used < 0 || (size_t)used >= n)
		return 0;
	sets[k++] = buf;
	if (radius > 0) { /* an explicit kernel radius keeps its ratio to the spacing */
		int more = snprintf(buf + used + 1, n - (size_t)used - 1, "params.radius=%.17g",
				    fmin(radius * want / spacing, rhi));
		if (more < 0 || (size_t)(used + 1 + more) >= n)
			return 0;
		sets[k++] = buf + used + 1;
	}
	return k;
}
