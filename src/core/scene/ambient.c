/*
 * ambient.c - the scene's "ambient" member: wind waves from a JONSWAP, TMA or Phillips
 * spectrum, choppy or not, with foam, made by the airy solver (docs/airy.md). Only the values are read here;
 * support.c refuses the member for solvers that do not make ambient waves.
 */
#include "scene/ld.h"

static const char *const ambient_keys[] = {"spectrum", "wind",       "direction", "fetch",
					   "amplitude", "shortest", "seed",      "choppiness",
					   "foam",     NULL};
static const char *const foam_keys[] = {"threshold", "fade", NULL};
static const char *const spectrum_names[] = {"jonswap", "phillips", "tma", NULL};

int ld_ambient(ld *L, const cJSON *v)
{
	scene_ambient *a = &L->s->ambient;
	int rc, sp = SCENE_SPECTRUM_JONSWAP;
	const cJSON *m;
	if (!v)
		return 0;
	if ((rc = ld_object(L, v, ambient_keys)) < 0)
		return rc;
	a->wind = 5;
	a->direction = 0;
	a->fetch = 20;
	a->amplitude = 0.1;
	a->seed = L->s->seed;
	a->choppiness = 0;
	a->foam_threshold = 0.4;
	a->foam_fade = 1;
	if ((m = ld_get(v, "spectrum")) && (rc = ld_enum(L, m, spectrum_names, &sp)) < 0)
		return rc;
	a->spectrum = (scene_spectrum)sp;
	const ld_range wind_r = {0, 100, LD_LO_OPEN}, dir_r = {-360, 360, 0},
		       fetch_r = {0, 1e7, LD_LO_OPEN}, amp_r = {0, 1000, LD_LO_OPEN},
		       short_r = {0, 1e4, 0}, seed_r = {0, 9007199254740992.0, LD_INT};
	double seed = (double)a->seed;
	if ((rc = ld_opt_num(L, v, "wind", &wind_r, &a->wind)) < 0 ||
	    (rc = ld_opt_num(L, v, "direction", &dir_r, &a->direction)) < 0 ||
	    (rc = ld_opt_num(L, v, "fetch", &fetch_r, &a->fetch)) < 0 ||
	    (rc = ld_opt_num(L, v, "amplitude", &amp_r, &a->amplitude)) < 0 ||
	    (rc = ld_opt_num(L, v, "shortest", &short_r, &a->shortest)) < 0 ||
	    (rc = ld_opt_num(L, v, "seed", &seed_r, &seed)) < 0)
		return rc;
	const ld_range chop_r = {0, 10, 0}, thr_r = {-1, 1, 0}, fade_r = {0, 60, LD_LO_OPEN};
	if ((rc = ld_opt_num(L, v, "choppiness", &chop_r, &a->choppiness)) < 0)
		return rc;
	if ((m = ld_get(v, "foam"))) {
		if ((rc = ld_object(L, m, foam_keys)) < 0 ||
		    (rc = ld_opt_num(L, m, "threshold", &thr_r, &a->foam_threshold)) < 0 ||
		    (rc = ld_opt_num(L, m, "fade", &fade_r, &a->foam_fade)) < 0)
			return rc;
		if (a->choppiness <= 0)
			return ld_fail(L, m, 1,
				       "foam comes from the folds of choppy waves; set "
				       "\"choppiness\" above 0 (got no choppiness)");
	}
	if (a->spectrum == SCENE_SPECTRUM_PHILLIPS && (m = ld_get(v, "fetch")))
		return ld_fail(L, m, 1,
			       "the phillips spectrum is fully developed and has no fetch; use "
			       "\"spectrum\": \"jonswap\" or leave it out");
	a->seed = (uint64_t)seed;
	a->on = 1;
	return 0;
}
