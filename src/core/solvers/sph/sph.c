/*
 * sph.c - "sph": a 2D particle fluid in a tank (seed 004, "simulating fluid particles").
 *
 * Seed 004 (an AS3 write-up after saharan's wonderfl demo): unit-mass particles, density
 * rho_i = sum_j (1 - r/R)^2, pressure P = k (rho - rho0) floored at 0, pair pressure
 * forces with the averaged pressures (P_i + P_j) / (2 rho_j) (1 - r/R), viscosity from
 * velocity differences (v_i - v_j) (1 - r/R) / rho_j, gravity, walls as springs, and the
 * bottle's acceleration subtracted from every particle when it is dragged. Model "seed"
 * runs exactly that (in px and s, symplectic Euler).
 *
 * Model "relaxed" (default) keeps the seed's kernel and pairwise forms but integrates
 * them as Clavet, Beaudoin & Poulin's double density relaxation ("Particle-based
 * viscoelastic fluid simulation", SCA 2005): predict positions, then displace particles
 * by dt^2 times the pressure terms, velocities from the displacement. A near pressure
 * k_near * sum (1 - r/R)^3 keeps particles from clumping, a constant cohesive offset
 * balances its push so that the free surface of water at rest is at zero pressure and
 * rest density (the pressure clamped at zero between a free surface's density and rest
 * density, as position-based fluids clamp theirs), tension below a free surface's density
 * (scaled by `cohesion`) gives surface tension, and the walls add back the density of the
 * fluid missing beyond them (docs/sph.md, "The free surface"). Both models: a CFL-limited number of
 * substeps per step, an optional velocity cap, and hard containment (tank clamp and
 * obstacle push-out) so no particle ever leaves the tank or enters an obstacle.
 *
 * The code: this file (options, the step loop, stats, the descriptor), sph_setup.c
 * (set-up from the scene, tear-down), sph_ckpt.c (checkpoints), sph_scene.c (blocks,
 * drops, emitters, obstacles), sph_grid.c (tables, prediction, the sort into grid cells
 * and clusters, diagnostics), sph_kern.c (the neighbour passes and collisions),
 * sph_iisph.c (the implicit model), sph_body.c (floating boxes), sph_surf.c (the render
 * field).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"

/* The viscosity's explicit limit on a substep: dt <= SPH_VISC_STEP / mu. */
#define SPH_VISC_STEP 0.25
/* A substep limited by the stiffness is at most SPH_KCFL * cfl / omega (sph_step). */
#ifndef SPH_KCFL
#define SPH_KCFL 1.4
#endif

static const char *const model_names[] = { "seed", "relaxed", "implicit", NULL };

void (*sph_substep_hook)(const sph *s, void *ctx);
void *sph_substep_ctx;

static const tp_option sph_options[] = {
	{ "model", "relaxed: double density relaxation (Clavet et al.); implicit: incompressible, IISPH (Ihmsen et al.); seed: seed 004 as written",
	  offsetof(sph, model), TP_OPT_ENUM, SPH_MODEL_RELAXED, 0, 2, model_names, TP_UNIT_NONE },
	{ "spacing", "particle spacing of blocks, drops and streams, px",
	  offsetof(sph, spacing), TP_OPT_DOUBLE, 4, 1, 64, NULL, TP_UNIT_LENGTH },
	{ "radius", "kernel radius R, px (0: 2.25 x spacing)",
	  offsetof(sph, radius), TP_OPT_DOUBLE, 0, 0, 512, NULL, TP_UNIT_LENGTH },
	{ "stiffness", "k in P = k (rho - rho0), px/s^2 (0: from gravity, depth and compression)",
	  offsetof(sph, stiffness), TP_OPT_DOUBLE, 0, 0, 1e10, NULL, TP_UNIT_LENGTH },
	{ "compression", "with stiffness 0: target compression at the bottom of the settled fluid",
	  offsetof(sph, compression), TP_OPT_DOUBLE, 0.15, 0.005, 1, NULL, TP_UNIT_NONE },
	{ "near_stiffness", "relaxed: k_near in Pn = k_near rho_near, as a fraction of k",
	  offsetof(sph, near_stiffness), TP_OPT_DOUBLE, 1.5, 0, 100, NULL, TP_UNIT_NONE },
	{ "rest_density", "rho0, a kernel sum (0: that of an interior particle of a block)",
	  offsetof(sph, rest_density), TP_OPT_DOUBLE, 0, 0, 1000, NULL, TP_UNIT_NONE },
	{ "cohesion", "relaxed: tension k x cohesion below the free surface's density (surface tension), 0..1",
	  offsetof(sph, cohesion), TP_OPT_DOUBLE, 0.5, 0, 1, NULL, TP_UNIT_NONE },
	{ "viscosity", "mu in dv = -dt mu sum (v_i - v_j) q / rho_j, 1/s",
	  offsetof(sph, viscosity), TP_OPT_DOUBLE, 3, 0, 1000, NULL, TP_UNIT_NONE },
	{ "gravity", "px/s^2, positive = down the image",
	  offsetof(sph, gravity), TP_OPT_DOUBLE, 1000, -1e6, 1e6, NULL, TP_UNIT_LENGTH },
	{ "wall_stiffness", "seed wall springs: a = k_w * penetration of the margin, 1/s^2",
	  offsetof(sph, wall_stiffness), TP_OPT_DOUBLE, 20000, 0, 1e9, NULL, TP_UNIT_NONE },
	{ "max_speed", "velocity cap, px/s (0: none)",
	  offsetof(sph, max_speed), TP_OPT_DOUBLE, 4000, 0, 1e7, NULL, TP_UNIT_LENGTH },
	{ "cfl", "fraction of the stable time step used by each substep",
	  offsetof(sph, cfl), TP_OPT_DOUBLE, 0.5, 0.02, 2, NULL, TP_UNIT_NONE },
	{ "max_substeps", "most substeps per step (beyond it, substeps get longer than the CFL limit)",
	  offsetof(sph, max_substeps), TP_OPT_INT, 200, 1, 100000, NULL, TP_UNIT_NONE },
	{ "splat", "render field: splat radius in spacings",
	  offsetof(sph, splat), TP_OPT_DOUBLE, 1.6, 0.5, 8, NULL, TP_UNIT_NONE },
	{ "iso", "render field: surface level as a fraction of the interior's splat sum",
	  offsetof(sph, iso), TP_OPT_DOUBLE, 0.35, 0.05, 1, NULL, TP_UNIT_NONE },
	{ "tolerance", "implicit: the pressure solve stops at this mean density residual (0.0005: 0.05%)",
	  offsetof(sph, tolerance), TP_OPT_DOUBLE, 0.0005, 0.0001, 0.001, NULL, TP_UNIT_NONE },
	{ "max_iterations", "implicit: most Jacobi sweeps of the pressure solve per substep",
	  offsetof(sph, max_iterations), TP_OPT_INT, 100, 5, 10000, NULL, TP_UNIT_NONE },
	{ NULL },
};

/* ---- descriptor methods ---- */

static void sph_drop(void *priv, double x, double y, double r, double strength)
{
	sph *s = priv;
	if (!(strength > 0))
		return;
	/* released at rest in the world: in the tank frame it moves against the tank */
	if (s->turning) {
		double lx, ly, ux, uy;
		frame_to_local(&s->fr, x, y, &lx, &ly);
		frame_vel(&s->fr, lx, ly, 0, 0, &ux, &uy);
		sph_fill_disc(s, lx, ly, drop_radius(r, strength), ux, uy, 1);
		return;
	}
	sph_fill_disc(s, x - s->org_x, y - s->org_y, drop_radius(r, strength), -s->tank_vx,
		      -s->tank_vy, 1);
}

/* Blow-up: a density SPH_BLOWUP_RHO times the rest density (a liquid compresses by a few
 * percent; settled water at the default compression reaches 1.15 at the bottom), or a
 * NaN, or the particles' RMS speed at SPH_BLOWUP_CAP of the velocity cap (the fluid
 * boiling: a splash has a few fast particles, never most of them), after a substep of h seconds where hmax is the stable one. Says in s->why which
 * parameter to change (dt: the whole step's length): the substep cap when the substeps
 * had to be longer than stable,
 * cfl above 1, else the stiffness (or gravity, which sets it). */
#define SPH_BLOWUP_RHO 10.0
#define SPH_BLOWUP_CAP 0.5
static int blown_up(sph *s, double h, double hmax, double dt)
{
	float top = 0;
	double v2 = 0;
	int nan = 0;
	for (int i = 0; i < s->n; i++) {
		top = s->rho[i] > top ? s->rho[i] : top;
		nan |= s->rho[i] != s->rho[i] || s->vx[i] != s->vx[i] || s->vy[i] != s->vy[i];
		v2 += (double)s->vx[i] * s->vx[i] + (double)s->vy[i] * s->vy[i];
	}
	/* boiling: the particles' RMS speed at half the velocity cap or more */
	const double rms = s->n ? sqrt(v2 / s->n) : 0;
	const int boil = s->max_speed > 0 && rms >= SPH_BLOWUP_CAP * s->max_speed;
	if (!nan && !boil && !(top > SPH_BLOWUP_RHO * s->rho0))
		return 0;
	char what[96];
	if (boil && !(top > SPH_BLOWUP_RHO * s->rho0))
		snprintf(what, sizeof what, "particles at the velocity cap (RMS speed %.0f px/s of "
			 "max_speed %g)", rms, s->max_speed);
	else
		snprintf(what, sizeof what, "density %.3g times the rest density",
			 nan ? NAN : top / s->rho0);
	if (h > 1.01 * hmax)
		snprintf(s->why, sizeof s->why,
			 "%s after a substep %.3g times longer than stable (max_substeps %d); raise "
			 "params.max_substeps to at least %.0f, or lower params.viscosity%s",
			 what, h / hmax, s->max_substeps, ceil(dt / hmax),
			 s->model == SPH_MODEL_IMPLICIT ? "" : " or params.stiffness");
	else if (s->model == SPH_MODEL_IMPLICIT)
		snprintf(s->why, sizeof s->why,
			 "%s; lower params.cfl (or params.gravity) or raise params.max_substeps", what);
	else if (s->cfl > 1)
		snprintf(s->why, sizeof s->why,
			 "%s with cfl %g; lower params.cfl to 1 or less", what, s->cfl);
	else
		snprintf(s->why, sizeof s->why,
			 "%s; lower params.stiffness (or params.gravity) or raise "
			 "params.max_substeps",
			 what);
	return 1;
}

static const char *sph_why(const void *priv)
{
	const sph *s = priv;
	return s->why[0] ? s->why : NULL;
}

/* ---- the step: sph_step's parts ---- */

/* The tank over one step: its frame's origin (world position of local (0, 0)) at the
 * start and the end, its velocity at the end and the change since the last step, and
 * for a turning tank theta, omega, the centre at the start and the frame at the end. */
typedef struct tank_motion {
	double ox0, oy0, ox1, oy1;
	double tvx, tvy, dvx, dvy;
	double th0, om0, th1, om1, dom;
	double cx0, cy0;
	sph_frame fr1;
} tank_motion;

/* Tank: its velocity change over this step is an inertial kick -dv on every particle,
 * spread over the substeps as the acceleration -dv/dt (seed 004). A turning tank: theta
 * and omega at the end of the step (omega from the angle's change, as the velocity is from
 * the position's), the change of omega spread over the step as alpha. */
static tank_motion tank_motion_of(sph *s, const tp_step_in *in)
{
	const double dt = in->dt;
	tank_motion m = { .ox0 = s->org_x, .oy0 = s->org_y };
	m.ox1 = m.ox0, m.oy1 = m.oy0;
	if (s->sc->has_tank) {
		m.ox1 = in->tank_x - 0.5 * s->W;
		m.oy1 = in->tank_y - 0.5 * s->H;
		m.tvx = in->tank_vx;
		m.tvy = in->tank_vy;
		if (!s->have_tank_v) {
			s->tank_vx = m.tvx;
			s->tank_vy = m.tvy;
			s->tom = s->turning ? (-in->tank_angle * (SPH_PI / 180) - s->tth) / dt : 0;
			s->have_tank_v = 1;
		}
	}
	m.dvx = m.tvx - s->tank_vx, m.dvy = m.tvy - s->tank_vy;
	m.th0 = s->tth, m.om0 = s->tom, m.cx0 = s->org_x + 0.5 * s->W,
	m.cy0 = s->org_y + 0.5 * s->H;
	m.th1 = s->turning ? -in->tank_angle * (SPH_PI / 180) : 0;
	m.om1 = s->turning ? (m.th1 - m.th0) / dt : 0, m.dom = m.om1 - m.om0;
	if (s->turning)
		m.fr1 = frame_at(s, in->tank_x, in->tank_y, in->tank_angle, m.tvx, m.tvy, m.om1);
	return m;
}

/* The obstacles that follow their paths, at the end of the step, in the tank frame
 * (the floating ones are moved by sph_bodies_move). */
static void obstacles_at_end(sph *s, const tp_step_in *in, const tank_motion *m)
{
	double *ang1 = s->obst_angle + s->nobst + 1;
	for (int b = 0; b < s->nobst; b++) {
		if (s->sc->boxes[b].floating)
			continue;
		s->poses[b] = in->boxes[b];
		sph_obst_from_pose(s, b, &in->boxes[b], m->ox1, m->oy1, m->tvx, m->tvy,
				   s->turning ? &m->fr1 : NULL, &s->obst_cur[b], &ang1[b]);
	}
}

/* The fastest a particle can be thrown this step by what is not the fluid: the tank's
 * kick and turning, the streams, the moving obstacles and the floating boxes (px/s). */
static double fastest_kick(const sph *s, const tank_motion *m)
{
	const scene *sc = s->sc;
	double vmin = sqrt(m->dvx * m->dvx + m->dvy * m->dvy);
	if (s->turning) /* what the frame's turning can throw at a particle */
		vmin += (fabs(m->om1) + fabs(m->dom)) * 0.5 *
			sqrt((double)s->W * s->W + (double)s->H * s->H);
	for (int k = 0; k < s->nstreams; k++)
		vmin = fmax(vmin, sc->emitters[s->streams[k].scene_index].speed);
	for (int b = 0; b < s->nobst; b++) {
		double bvx = s->obst_cur[b].vx, bvy = s->obst_cur[b].vy;
		if (!sc->boxes[b].floating)
			vmin = fmax(vmin, sqrt(bvx * bvx + bvy * bvy));
	}
	for (int k = 0; k < s->nfloat; k++) {
		const sph_body *o = &s->bodies[k];
		vmin = fmax(vmin, sqrt(o->vx * o->vx + o->vy * o->vy) + fabs(o->w) * hypot(o->hw, o->hh));
	}
	return vmin;
}

/* A turning tank: gravity and the centre's acceleration turned into the frame at
 * mid-substep [f0, f1] (fractions of the step), and the frame's omega and alpha. */
static void turning_substep(const sph *s, const tank_motion *m, double dt, double f0, double f1,
			    sph_sub *c)
{
	const double fm = 0.5 * (f0 + f1), th = m->th0 + fm * (m->th1 - m->th0);
	const double awx = -m->dvx / dt, awy = s->gravity - m->dvy / dt, cs = cos(th), sn = sin(th);
	c->ax = (float)(cs * awx + sn * awy);
	c->ay = (float)(-sn * awx + cs * awy);
	c->rot = 1;
	c->om = (float)(m->om0 + fm * m->dom);
	c->al = (float)(m->dom / dt);
	c->hw = 0.5f * s->W;
	c->hh = 0.5f * s->H;
}

/* The fluid over substep c, by the model; the largest speed afterwards into *vcur.
 * Returns TP_EINTR if the step was cancelled during the implicit model's solve. */
static int model_substep(sph *s, const sph_sub *c, const tp_step_in *in, double *vcur)
{
	if (s->model == SPH_MODEL_IMPLICIT) {
		s->cancel = in->cancel;
		*vcur = sph_iisph_substep(s, c);
		if (in->cancel && *in->cancel)
			return TP_EINTR;
	} else if (s->model == SPH_MODEL_RELAXED) {
		sph_sort(s, c); /* predicts, then sorts */
		sph_density(s, c);
		if (s->nfloat)
			sph_bodies_push(s, c);
		*vcur = sph_relax(s, c);
		if (s->nfloat)
			sph_bodies_contacts(s, c);
	} else {
		sph_sort(s, NULL);
		sph_density(s, NULL);
		*vcur = sph_forces_seed(s, c);
	}
	return 0;
}

/* The world moves under the tank frame during the step: the frame at fraction f1 of
 * it (f0 where the substep started). */
static void advance_frame(sph *s, const tank_motion *m, const tp_step_in *in, double f0, double f1)
{
	s->org_x = m->ox0 + f1 * (m->ox1 - m->ox0);
	s->org_y = m->oy0 + f1 * (m->oy1 - m->oy0);
	s->tank_vx += m->dvx * (f1 - f0);
	s->tank_vy += m->dvy * (f1 - f0);
	if (s->turning)
		s->fr = frame_at(s, m->cx0 + f1 * (in->tank_x - m->cx0),
				 m->cy0 + f1 * (in->tank_y - m->cy0),
				 -(m->th0 + f1 * (m->th1 - m->th0)) * (180 / SPH_PI), s->tank_vx,
				 s->tank_vy, m->om0 + f1 * m->dom);
}

/* The step's end: the tank and obstacles where the step left them, for the next one
 * (and checkpoints), and the diagnostics. */
static int end_step(sph *s, const tank_motion *m, const tp_step_in *in, int nsub)
{
	const int nb = s->nobst;
	double *ang0 = s->obst_angle, *ang1 = s->obst_angle + nb + 1;
	s->substeps_last = nsub;
	s->org_x = m->ox1;
	s->org_y = m->oy1;
	s->tank_vx = m->tvx;
	s->tank_vy = m->tvy;
	if (s->turning) {
		s->tth = m->th1;
		s->tom = m->om1;
		s->tang = in->tank_angle;
		s->fr = m->fr1;
	}
	if (s->nfloat) {
		/* the bodies' last poses stand for them in obst_prev/cur (checkpoints, clipping) */
		for (int k = 0; k < s->nfloat; k++)
			s->obst_cur[s->bodies[k].box] = s->obst_sub1[s->bodies[k].box];
		sph_bodies_poses(s);
	}
	memcpy(s->obst_prev, s->obst_cur, (size_t)nb * sizeof(sph_obst));
	memcpy(ang0, ang1, (size_t)nb * sizeof(double));
	s->t = in->t;
	return sph_reduce(s) < 0 ? TP_EIO : 0;
}

/* Substeps, chosen one at a time: a particle moves at most cfl * R per substep (fastest
 * particle of the previous substep, plus what the tank kick, gravity, streams and
 * obstacles can add), and the pressure and viscosity terms stay inside their stability
 * limits. The remaining time is split evenly, so the step ends exactly at in->t. */
static int sph_step(void *priv, const tp_step_in *in)
{
	sph *s = priv;
	const double dt = in->dt, t0 = in->t - dt;
	const int nb = s->nobst;
	const tank_motion m = tank_motion_of(s, in);
	double *ang0 = s->obst_angle, *ang1 = s->obst_angle + nb + 1;
	obstacles_at_end(s, in, &m);
	const double vmin = fastest_kick(s, &m);
	/* The implicit model has no stiffness to limit its step: a particle starting from rest
	 * falls at most a quarter of cfl spacings in a substep, and moves at most cfl spacings. */
	const int impl = s->model == SPH_MODEL_IMPLICIT;
	const double reach = impl ? s->cfl * s->spacing_f : s->cfl * s->R;
	double hmax = impl ? sqrt(0.5 * reach / fmax(fabs(s->gravity), 1))
			   : SPH_KCFL * s->cfl / sqrt(s->omega2);
	if (s->viscosity > 0)
		hmax = fmin(hmax, SPH_VISC_STEP / s->viscosity);
	sph_sub c = { .nobst = nb, .prev = s->obst_sub0, .cur = s->obst_sub1 };
	c.ax = (float)(-m.dvx / dt);
	c.ay = (float)(s->gravity - m.dvy / dt);
	double f0 = 0, vcur = s->vmax;
	int nsub = 0;
	s->iters_sum = 0;
	while (f0 < 1) {
		if (in->cancel && *in->cancel)
			return TP_EINTR;
		double rem = (1 - f0) * dt;
		double vref = fmax(vcur + fabs(s->gravity) * hmax, vmin);
		double h = fmin(hmax, reach / fmax(vref, 1e-6));
		double left = ceil(rem / h);
		if (nsub + left > s->max_substeps)
			left = s->max_substeps > nsub ? s->max_substeps - nsub : 1;
		double f1 = left <= 1 ? 1.0 : f0 + (1 - f0) / left;
		c.dt = (float)((f1 - f0) * dt);
		if (s->turning)
			turning_substep(s, &m, dt, f0, f1, &c);
		sph_obst_lerp(s, ang0, ang1, f0, s->obst_sub0);
		sph_obst_lerp(s, ang0, ang1, f1, s->obst_sub1);
		if (s->nfloat)
			sph_bodies_move(s, &c, s->obst_sub0, s->obst_sub1);
		const int rc = model_substep(s, &c, in, &vcur);
		if (rc < 0)
			return rc;
		advance_frame(s, &m, in, f0, f1);
		sph_emit_streams(s, t0 + dt * f1, &c);
		f0 = f1;
		nsub++;
		if (sph_substep_hook)
			sph_substep_hook(s, sph_substep_ctx);
		if (blown_up(s, c.dt, hmax, dt))
			return TP_EIO;
	}
	return end_step(s, &m, in, nsub);
}

/* The surface (the splatted field, the particles' world positions) is made from the state
 * and changes none of it: a seek may pass frames without it. */
static int sph_surface_optional(const void *priv)
{
	(void)priv;
	return 1;
}

static void sph_surface(void *priv, tp_surface *out)
{
	sph *s = priv;
	sph_splat(s);
	memset(out, 0, sizeof *out);
	out->kind = TP_SURFACE_FLUID;
	out->w = s->fw;
	out->h = s->fh;
	out->type = TP_SAMPLE_F32;
	out->data = s->field;
	out->stride = s->fw;
	out->scale = 1;
	out->nboxes = s->nobst;
	out->boxes = s->poses;
	out->tank[0] = s->org_x;
	out->tank[1] = s->org_y;
	out->tank[2] = s->W;
	out->tank[3] = s->H;
	out->tank_angle = s->turning ? s->tang : 0;
	out->nparticles = s->n;
	out->px = s->wx;
	out->py = s->wy;
}

static void sph_stats(const void *priv, tp_stats *out)
{
	const sph *s = priv;
	tp_stats_add(out, "particles", s->n);
	tp_stats_add(out, "kinetic_energy", s->ke);
	tp_stats_add(out, "max_speed", s->vmax);
	tp_stats_add(out, "density_error", s->derr);
	tp_stats_add(out, "mean_density", s->mean_rho);
	tp_stats_add(out, "substeps", s->substeps_last);
	if (s->model == SPH_MODEL_IMPLICIT) /* the pressure solve's sweeps a substep */
		tp_stats_add(out, "iterations", s->substeps_last ? s->iters_sum / s->substeps_last : 0);
}

const tp_solver tp_solver_sph = {
	.kind.name = "sph",
	.kind.description = "2D particle fluid in a tank (seed 004; double density relaxation)",
	.kind.priv_size = sizeof(sph),
	.kind.options = sph_options,
	.kind.caps = TP_SOLVER_PARTICLES | TP_SOLVER_TURNING_TANK | TP_SOLVER_FLOATING,
	.init = sph_init,
	.uninit = sph_uninit,
	.drop = sph_drop,
	.step = sph_step,
	.surface = sph_surface,
	.stats = sph_stats,
	.save = sph_save,
	.load = sph_load,
	.why = sph_why,
	.surface_optional = sph_surface_optional,
};
