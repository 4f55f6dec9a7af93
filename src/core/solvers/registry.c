#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solver.h"
#include "util/cpu.h"

extern const tp_solver tp_solver_hooke;
extern const tp_solver tp_solver_ripple;
extern const tp_solver tp_solver_shallow;
extern const tp_solver tp_solver_sph;
extern const tp_solver tp_solver_airy;

/* Adding a solver: one file plus one line here. */
const tp_solver_kind *const tp_solvers[] = {
	&tp_solver_ripple.kind,
	&tp_solver_hooke.kind,
	&tp_solver_shallow.kind,
	&tp_solver_sph.kind,
	&tp_solver_airy.kind,
	NULL,
};

const tp_solver_kind *solver_find(const char *name)
{
	for (int i = 0; tp_solvers[i]; i++)
		if (!strcmp(tp_solvers[i]->name, name))
			return tp_solvers[i];
	return NULL;
}

struct solver {
	const tp_solver *desc;
	void *priv;
};

static atomic_int every_cell;

void solver_set_every_cell(int on)
{
	atomic_store(&every_cell, on);
}

int solver_create(const scene *sc, int threads, solver **out, tp_err *err)
{
	*out = NULL;
	solver *s = calloc(1, sizeof *s);
	if (!s)
		return tp_errf(err, TP_EIO, "out of memory");
	s->desc = solver_of_kind(sc->solver);
	s->priv = calloc(1, s->desc->kind.priv_size ? s->desc->kind.priv_size : 1);
	if (!s->priv) {
		free(s);
		return tp_errf(err, TP_EIO, "out of memory");
	}
	tp_opts_defaults(s->priv, s->desc->kind.options);
	for (int i = 0; i < sc->nparams; i++) {
		const tp_option *o = tp_opts_find(s->desc->kind.options, sc->params[i].name);
		int rc = o ? tp_opts_set(s->priv, o, sc->params[i].value, err)
		           : tp_errf(err, TP_EINPUT, "params.%s: unknown parameter", sc->params[i].name);
		if (rc < 0) {
			free(s->priv);
			free(s);
			return rc;
		}
	}
	/* Parameters are in scene units; the solver works in output pixels. */
	tp_opts_scale(s->priv, s->desc->kind.options, scene_scale(sc));
	tp_solver_ctx ctx = {.scene = sc,
			     .threads = threads,
			     .cpu_flags = tp_cpu_flags(),
			     .every_cell = atomic_load(&every_cell)};
	int rc = s->desc->init(s->priv, &ctx, err);
	if (rc < 0) {
		solver_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

void solver_destroy(solver *s)
{
	if (!s)
		return;
	s->desc->uninit(s->priv);
	free(s->priv);
	free(s);
}

const tp_solver *solver_desc(const solver *s) { return s->desc; }
void *solver_priv(solver *s) { return s->priv; }
