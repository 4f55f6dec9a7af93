/*
 * support.c - no scene element is silently ignored: every field the chosen solver would
 * not honour is refused at load, at its position, naming the field and the solver.
 *
 * What a solver honours follows from its caps (scene/solverkind.h): height-field solvers
 * (seen from above) use the boundary, box heights, reflection, shadows, the texture maps
 * and loops; particle solvers (seen from the side, in a tank) use the tank, fluid blocks
 * and stream emitters; TP_SOLVER_FLOATING, TP_SOLVER_BOX_DRAFT and TP_SOLVER_TURNING_TANK
 * say which of the rest it has. scenes/README.md ("What each solver honours") is the
 * same table for people; keep the two in step.
 */
#include <stdio.h>
#include <string.h>

#include "render/modes.h"
#include "scene/ld.h"

/* "shallow or sph": the solvers (of the loader's) that have every bit of `caps`. */
static const char *who_has(const ld *L, unsigned caps, char *buf, size_t n)
{
	const char *names[16];
	int k = 0;
	for (int i = 0; L->solvers[i] && k < 16; i++)
		if ((L->solvers[i]->caps & caps) == caps)
			names[k++] = L->solvers[i]->name;
	buf[0] = 0;
	for (int i = 0; i < k; i++) {
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%s",
			 i == 0       ? ""
			 : i == k - 1 ? " or "
				      : ", ",
			 names[i]);
	}
	if (!k)
		snprintf(buf, n, "no solver");
	return buf;
}

/* Refuses node (a member given in the file) because the solver lacks `caps`. */
static int refuse(ld *L, const cJSON *node, unsigned caps, const char *what)
{
	char who[128], got[96];
	return ld_fail(L, node, 0, "the %s solver %s (use %s; got %s)", L->s->solver->name, what,
		       who_has(L, caps, who, sizeof who), ld_got(L, node, got, sizeof got));
}

/* The mode at m (a member given in the file) against the render-mode table: a solver
 * whose surface no kernel draws is refused here; a missing ambient is refused by its own
 * check below, so the needs are weighed as if the solver had ambient waves. */
static int check_mode(ld *L, const cJSON *m, int mode, unsigned caps)
{
	int particles = (caps & TP_SOLVER_PARTICLES) != 0;
	int lacks = render_mode_lacks((scene_mode)mode, caps | TP_SOLVER_AMBIENT, &L->s->ambient);
	if (!m || !lacks)
		return 0;
	char what[192];
	if (lacks > 0) {
		render_mode_needs_text((scene_mode)mode, lacks, what, sizeof what);
		return ld_fail(L, m, 0, "%s", what);
	}
	snprintf(what, sizeof what, "cannot render mode \"%s\"", render_mode_get(mode)->name);
	return refuse(L, m, particles ? TP_SOLVER_HEIGHTFIELD : TP_SOLVER_PARTICLES, what);
}

/* A mode's name at v (render.mode, outputs[i].mode) into *mode. */
int ld_mode(ld *L, const cJSON *v, int *mode)
{
	const char *names[SCENE_MODE_COUNT + 1];
	render_mode_names(names);
	return ld_enum(L, v, names, mode);
}

int ld_support(ld *L)
{
	const scene *s = L->s;
	const unsigned caps = s->solver->caps;
	const int particles = (caps & TP_SOLVER_PARTICLES) != 0;
	const cJSON *root = L->root, *v, *e, *m;
	int rc;

	if ((v = ld_get(root, "boundary")) && particles && s->boundary != SCENE_BOUNDARY_REFLECT)
		return refuse(L, v, TP_SOLVER_HEIGHTFIELD,
			      "keeps its fluid in a tank with walls (\"reflect\")");

	/* render */
	if ((v = ld_get(root, "render"))) {
		if ((rc = check_mode(L, ld_get(v, "mode"), s->render.mode, caps)) < 0)
			return rc;
		if (particles && (m = ld_get(v, "reflection")) && s->render.reflection != 0)
			return refuse(L, m, TP_SOLVER_HEIGHTFIELD,
				      "draws no reflection term (give 0 or leave it out)");
		if (particles && (m = ld_get(v, "shadows")) && s->render.shadows)
			return refuse(L, m, TP_SOLVER_HEIGHTFIELD, "draws no box shadows");
	}
	v = ld_get(root, "outputs");
	for (int i = 0; v && i < s->noutputs; i++) {
		const cJSON *o = cJSON_GetArrayItem(v, i);
		if ((rc = check_mode(L, o ? ld_get(o, "mode") : NULL, s->outputs[i].mode, caps)) <
		    0)
			return rc;
	}
	if (particles && (v = ld_get(root, "maps")))
		return refuse(L, v, TP_SOLVER_HEIGHTFIELD,
			      "has no height, normal or caustics maps for \"maps\" to set");
	if (particles && (v = ld_get(root, "loop")))
		return refuse(L, v, TP_SOLVER_HEIGHTFIELD,
			      "cannot loop (a loop cross-fades height fields)");

	/* drops and rain: particle drops add water, they cannot take it away */
	v = ld_get(root, "drops");
	for (int i = 0; particles && v && i < s->ndrops; i++)
		if (s->drops[i].strength < 0 && (m = ld_get(cJSON_GetArrayItem(v, i), "strength")))
			return refuse(L, m, TP_SOLVER_HEIGHTFIELD,
				      "cannot take water away: a drop's strength is the water it "
				      "adds, >= 0");
	v = ld_get(root, "emitters");
	for (int i = 0; v && i < s->nemitters; i++) {
		const scene_emitter *em = &s->emitters[i];
		e = cJSON_GetArrayItem(v, i);
		if (em->type == SCENE_EMIT_STREAM && !particles)
			return refuse(L, ld_get(e, "type"), TP_SOLVER_PARTICLES,
				      "has no particles for a \"stream\" emitter");
		if (em->type == SCENE_EMIT_RAIN && particles && em->strength[0] < 0 &&
		    (m = ld_get(e, "strength")))
			return refuse(L, m, TP_SOLVER_HEIGHTFIELD,
				      "cannot take water away: a drop's strength is the water it "
				      "adds, >= 0");
	}

	/* boxes */
	v = ld_get(root, "boxes");
	for (int i = 0; v && i < s->nboxes; i++) {
		const scene_box *b = &s->boxes[i];
		e = cJSON_GetArrayItem(v, i);
		if (b->floating && !(caps & TP_SOLVER_FLOATING))
			return refuse(L, ld_get(e, "float"), TP_SOLVER_FLOATING,
				      "has no floating boxes");
		if (particles && (m = ld_get(e, "height")))
			return refuse(L, m, TP_SOLVER_HEIGHTFIELD,
				      "sees boxes from the side: their \"size\" is [w, h] and they "
				      "have no height");
		if (!b->floating && !(caps & TP_SOLVER_BOX_DRAFT) && (m = ld_get(e, "density")))
			return refuse(L, m, TP_SOLVER_BOX_DRAFT,
				      "has no use for the density of a box that does not float");
		if (b->floating && (m = ld_get(e, "path")) && b->path.n > 1)
			return ld_fail(
				L, m, 0,
				"a floating box is moved by the %s solver; its path gives only the "
				"start: give \"at\" (and \"angle\") instead (got %d keyframes)",
				s->solver->name, b->path.n);
	}

	/* tank and blocks */
	if ((v = ld_get(root, "tank"))) {
		if (!particles)
			return refuse(L, v, TP_SOLVER_PARTICLES,
				      "has no tank (the pool is the picture)");
		const cJSON *path = ld_get(v, "path");
		if (!(caps & TP_SOLVER_TURNING_TANK))
			for (int k = 0; k < s->tank.path.n; k++)
				if (s->tank.path.keys[k].angle != 0) {
					m = path ? ld_get(cJSON_GetArrayItem(path, k), "angle")
						 : ld_get(v, "angle");
					return refuse(L, m ? m : v, TP_SOLVER_TURNING_TANK,
						      "keeps its tank upright");
				}
	}
	if ((v = ld_get(root, "ambient")) && !(caps & TP_SOLVER_AMBIENT))
		return refuse(L, v, TP_SOLVER_AMBIENT, "makes no ambient wind waves");
	if ((v = ld_get(root, "blocks")) && !particles)
		return refuse(L, v, TP_SOLVER_PARTICLES, "has no particles for fluid \"blocks\"");
	return 0;
}

unsigned scene_solver_caps(const scene *sc)
{
	return sc->solver->caps;
}

const char *scene_solver_name(const scene *sc)
{
	return sc->solver->name;
}
