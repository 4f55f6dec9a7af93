/*
 * ambient.c - the scene's "ambient" member: wind waves from a JONSWAP, TMA,
 * Pierson-Moskowitz or Phillips spectrum, choppy or not, with foam, made by the airy solver
 * (docs/airy.md); "swell" adds more wave systems under the wind sea. Only the values are
 * read here; support.c refuses the member for solvers that do not make ambient waves.
 */
#include "scene/ld.h"

static const char *const ambient_keys[] = {"spectrum", "wind",       "direction", "fetch",
					   "amplitude", "shortest", "seed",      "choppiness",
					   "foam",     "spreading", "against",  "swell",
					   NULL};
static const char *const swell_keys[] = {"spectrum", "wind",      "direction", "fetch",
					 "amplitude", "shortest", "spreading", "against",
					 "seed",     NULL};
static const char *const foam_keys[] = {"threshold", "fade", "range", NULL};
static const char *const spectrum_names[] = {"jonswap", "phillips", "tma", "pierson-moskowitz",
					     NULL};

/* One wave system's members of object v into w (defaults already in w). */
static int ld_waves(ld *L, const cJSON *v, scene_waves *w)
{
	int rc, sp = (int)w->spectrum;
	const cJSON *m;
	if ((m = ld_get(v, "spectrum")) && (rc = ld_enum(L, m, spectrum_names, &sp)) < 0)
		return rc;
	w->spectrum = (scene_spectrum)sp;
	const ld_range wind_r = {0, 100, LD_LO_OPEN}, dir_r = {-360, 360, 0},
		       fetch_r = {0, 1e7, LD_LO_OPEN}, amp_r = {0, 1000, LD_LO_OPEN},
		       short_r = {0, 1e4, 0}, seed_r = {0, 9007199254740992.0, LD_INT},
		       spread_r = {0, 100, 0}, against_r = {0, 1, 0};
	double seed = (double)w->seed;
	if ((rc = ld_opt_num(L, v, "wind", &wind_r, &w->wind)) < 0 ||
	    (rc = ld_opt_num(L, v, "direction", &dir_r, &w->direction)) < 0 ||
	    (rc = ld_opt_num(L, v, "fetch", &fetch_r, &w->fetch)) < 0 ||
	    (rc = ld_opt_num(L, v, "amplitude", &amp_r, &w->amplitude)) < 0 ||
	    (rc = ld_opt_num(L, v, "shortest", &short_r, &w->shortest)) < 0 ||
	    (rc = ld_opt_num(L, v, "spreading", &spread_r, &w->spreading)) < 0 ||
	    (rc = ld_opt_num(L, v, "against", &against_r, &w->against)) < 0 ||
	    (rc = ld_opt_num(L, v, "seed", &seed_r, &seed)) < 0)
		return rc;
	if ((w->spectrum == SCENE_SPECTRUM_PHILLIPS || w->spectrum == SCENE_SPECTRUM_PM) &&
	    (m = ld_get(v, "fetch")))
		return ld_fail(L, m, 1,
			       "the %s spectrum is fully developed and has no fetch; use "
			       "\"spectrum\": \"jonswap\" or leave it out",
			       spectrum_names[w->spectrum]);
	w->seed = (uint64_t)seed;
	return 0;
}

int ld_ambient(ld *L, const cJSON *v)
{
	scene_ambient *a = &L->s->ambient;
	int rc;
	const cJSON *m;
	if (!v)
		return 0;
	if ((rc = ld_object(L, v, ambient_keys)) < 0)
		return rc;
	scene_waves *sea = &a->waves[0];
	*sea = (scene_waves){.spectrum = SCENE_SPECTRUM_JONSWAP,
			     .wind = 5,
			     .fetch = 20,
			     .spreading = 1,
			     .seed = L->s->seed};
	a->nwaves = 1;
	a->choppiness = 0;
	a->foam_threshold = 0.4;
	a->foam_fade = 1;
	a->foam_range[0] = 0;
	a->foam_range[1] = 1;
	if ((rc = ld_waves(L, v, sea)) < 0)
		return rc;
	const ld_range chop_r = {0, 10, 0}, thr_r = {-1, 1, 0}, fade_r = {0, 60, LD_LO_OPEN},
		       range_r = {0, 1, 0};
	if ((rc = ld_opt_num(L, v, "choppiness", &chop_r, &a->choppiness)) < 0)
		return rc;
	if ((m = ld_get(v, "foam"))) {
		const cJSON *r;
		if ((rc = ld_object(L, m, foam_keys)) < 0 ||
		    (rc = ld_opt_num(L, m, "threshold", &thr_r, &a->foam_threshold)) < 0 ||
		    (rc = ld_opt_num(L, m, "fade", &fade_r, &a->foam_fade)) < 0)
			return rc;
		if ((r = ld_get(m, "range"))) {
			if ((rc = ld_vec(L, r, 2, &range_r, a->foam_range)) < 0)
				return rc;
			if (!(a->foam_range[1] > a->foam_range[0]))
				return ld_fail(L, r, 0,
					       "the foam range is [low, high] with low < high (got "
					       "[%g, %g])",
					       a->foam_range[0], a->foam_range[1]);
		}
		if (a->choppiness <= 0)
			return ld_fail(L, m, 1,
				       "foam comes from the folds of choppy waves; set "
				       "\"choppiness\" above 0 (got no choppiness)");
	}
	if ((m = ld_get(v, "swell"))) {
		int n = cJSON_IsArray(m) ? cJSON_GetArraySize(m) : -1;
		if (n < 0 || n > SCENE_MAX_WAVES - 1)
			return ld_fail(L, m, 0, "swell is an array of at most %d wave systems",
				       SCENE_MAX_WAVES - 1);
		const cJSON *e;
		cJSON_ArrayForEach(e, m)
		{
			scene_waves *w = &a->waves[a->nwaves];
			/* a swell is JONSWAP waves of its own wind, narrow unless told */
			*w = (scene_waves){.spectrum = SCENE_SPECTRUM_JONSWAP,
					   .wind = sea->wind,
					   .fetch = sea->fetch,
					   .spreading = 1,
					   .seed = sea->seed};
			if ((rc = ld_object(L, e, swell_keys)) < 0 || (rc = ld_waves(L, e, w)) < 0)
				return rc;
			a->nwaves++;
		}
	}
	a->on = 1;
	return 0;
}
