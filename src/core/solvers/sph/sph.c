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
 * The code: this file (options, scene set-up, the step loop, stats, checkpoints),
 * sph_scene.c (blocks, drops, emitters, obstacles), sph_grid.c (tables, prediction, the
 * sort into grid cells and clusters, diagnostics), sph_kern.c (the neighbour passes and
 * collisions), sph_surf.c (the render field).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"
#include "util/wire.h"

/* About 100 bytes a particle: 4M is about 400 MB. */
#define SPH_MAX_PARTICLES (4 << 20)
/* Most grid cells (a huge tank for its kernel), and how many make the counting sort use
 * one histogram rather than one per thread. */
#define SPH_MAX_CELLS      (1 << 26)
#define SPH_ONE_HIST_CELLS (1 << 22)
/* The kernel radius, in spacings: the default (params.radius 0) and the least. */
#define SPH_RADIUS_DEFAULT 2.25
#define SPH_RADIUS_MIN     1.2f
/* The implicit model's ranges (check_implicit_ranges says why): kernel radius in
 * spacings, how far params.rest_density may be off the lattice's (10%, and rounding),
 * cfl, and the least viscosity. */
#define SPH_II_RADIUS_MIN       1.75f
#define SPH_II_RADIUS_MAX       3.0f
#define SPH_II_REST_DENSITY_OFF (0.1 + 1e-9)
#define SPH_II_CFL_MIN          0.05
#define SPH_II_CFL_MAX          0.5
#define SPH_II_VISCOSITY_MIN    1
/* The automatic stiffness holds at least this many spacings of water. */
#define SPH_MIN_DEPTH 4
/* Most particles side by side across a stream's jet. */
#define SPH_STREAM_MAX_SLOTS 64
/* Added to the emitter's index, the random stream of a stream emitter: "stream". */
#define SPH_STREAM_RNG_ID 0x73747265616dULL
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

static void *alloc_floats(size_t n)
{
	size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, bytes ? bytes : 64);
	if (p)
		memset(p, 0, bytes ? bytes : 64);
	return p;
}

/* ---- descriptor methods ---- */

static void sph_uninit(void *priv)
{
	sph *s = priv;
	float **fa[] = { &s->x, &s->y, &s->vx, &s->vy, &s->x2, &s->y2, &s->vx2, &s->vy2,
			 &s->rho, &s->rhon, &s->p, &s->pn, &s->irho, &s->field, &s->wx, &s->wy,
			 &s->fax, &s->fay, &s->fsw, &s->fsvx, &s->fsvy, &s->gfx, &s->gfy, &s->gbx,
			 &s->gby, &s->gg, &s->vbg, &s->aii, &s->src, &s->apx, &s->apy, &s->vax,
			 &s->vay, &s->perr, &s->ptmp };
	for (size_t i = 0; i < sizeof fa / sizeof fa[0]; i++) {
		free(*fa[i]);
		*fa[i] = NULL;
	}
	free(s->key);
	free(s->perm);
	free(s->skey);
	free(s->clusters);
	free(s->cwork);
	free(s->clusters2);
	free(s->cwork2);
	s->skey = NULL;
	s->clusters = s->clusters2 = NULL;
	s->cwork = s->cwork2 = NULL;
	free(s->cell_start);
	free(s->cell_fill);
	free(s->part);
	free(s->obst_prev);
	free(s->obst_cur);
	free(s->obst_sub0);
	free(s->obst_sub1);
	free(s->obst_angle);
	free(s->poses);
	free(s->streams);
	free(s->bodies);
	free(s->bfx);
	free(s->bfy);
	free(s->cflag);
	free(s->cdx);
	free(s->cdy);
	s->bodies = NULL;
	s->bfx = s->bfy = s->cdx = s->cdy = NULL;
	s->cflag = NULL;
	s->key = s->perm = s->cell_start = s->cell_fill = NULL;
	s->part = NULL;
	s->obst_prev = s->obst_cur = s->obst_sub0 = s->obst_sub1 = NULL;
	s->obst_angle = NULL;
	s->poses = NULL;
	s->streams = NULL;
}

/* Stiffness from the hydrostatic balance of the relaxed pressure terms: a pressure
 * gradient dP/dy gives a_y = -dP/dy * n0 pi R^3 / 24, so holding a column of depth D
 * against g compresses its bottom by e = 144 g D / (k n0^2 pi^2 R^5); solve for k. The
 * seed model divides by rho_j, hence the extra rho0. */
static double auto_stiffness(const sph *s, double depth)
{
	double n0 = 2.0 / (sqrt(3.0) * s->spacing_f * s->spacing_f), R = s->R;
	double g = fabs(s->gravity) > 1 ? fabs(s->gravity) : 1;
	double k = 144.0 * g * depth /
		   (s->compression * n0 * n0 * SPH_PI * SPH_PI * R * R * R * R * R);
	return s->model == SPH_MODEL_SEED ? k * s->rho0 : k;
}

/* A drop of fluid has no height: its strength is how much water it brings, in discs of
 * radius r (strength 1: a disc of radius r, 2: twice the water, a disc of radius r sqrt 2;
 * 0: nothing). The loader refuses negative strengths for this solver. */
static double drop_radius(double r, double strength)
{
	return strength > 0 ? r * sqrt(strength) : 0;
}

/* The turning tank's frame: centre (cx, cy), angle `deg` (scene degrees), centre velocity
 * (vx, vy) and omega (rad/s). */
static sph_frame frame_at(const sph *s, double cx, double cy, double deg, double vx, double vy,
			  double om)
{
	double th = -deg * (SPH_PI / 180);
	return (sph_frame){ .cx = cx, .cy = cy, .c = cos(th), .s = sin(th), .vx = vx, .vy = vy,
			    .om = om, .hw = 0.5 * s->W, .hh = 0.5 * s->H, .deg = deg };
}

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

/* ---- set-up: sph_init's steps, in the order it runs them (each reads what the earlier
 * ones set; those that can fail return 0 or a negative error code) ---- */

static int out_of_memory(const sph *s, tp_err *err)
{
	return tp_errf(err, TP_EIO, "out of memory for %d particles", s->cap);
}

/* The implicit model's narrower ranges (tests/test_sph_implicit.c, a resting column at
 * each end): at a radius of 1.5 x spacing the lattice collapses (8% compression, 31% at
 * 1.2), at 3.25 too (40%), at 3.5 the Jacobi solve diverges in the first step; a rest
 * density of 1 or 1000 (the range allows 0..1000) blows up, 10% off the lattice's still
 * settles; substeps of 1/30 s (cfl 1 and up) leave it 2% compressed and jittering at
 * 7 px/s, and at cfl 0.02 (38 substeps a frame) the tenth of the density error each
 * substep corrects (sph_iisph.c II_DRIFT) adds up to a jitter of 44 px/s; without
 * viscosity it never stills. lat: the lattice's rest density. */
static int check_implicit_ranges(const sph *s, double lat, tp_err *err)
{
	const scene *sc = s->sc;
	if (s->R < SPH_II_RADIUS_MIN * s->spacing_f || s->R > SPH_II_RADIUS_MAX * s->spacing_f)
		return scene_errf(sc, err, TP_EINPUT, "params.radius",
				  "the implicit model needs 1.75 to 3 x spacing (got %g, "
				  "spacing %g): below, its lattice collapses; above, its "
				  "pressure solve diverges",
				  (double)s->R, s->spacing);
	if (s->rest_density > 0 && fabs(s->rest_density / lat - 1) > SPH_II_REST_DENSITY_OFF)
		return scene_errf(sc, err, TP_EINPUT, "params.rest_density",
				  "the implicit model needs 0 (the lattice's, %.4g) or within "
				  "10%% of it (got %g): further off, blocks start out "
				  "squeezed or stretched and blow up",
				  lat, s->rest_density);
	if (s->cfl < SPH_II_CFL_MIN || s->cfl > SPH_II_CFL_MAX)
		return scene_errf(sc, err, TP_EINPUT, "params.cfl",
				  "the implicit model needs 0.05 to 0.5 (got %g): longer "
				  "substeps leave water at rest compressed and jittering, "
				  "shorter ones make its density correction jitter",
				  s->cfl);
	if (s->viscosity < SPH_II_VISCOSITY_MIN)
		return scene_errf(sc, err, TP_EINPUT, "params.viscosity",
				  "the implicit model needs 1 or more (got %g): without it, "
				  "water at rest never stills",
				  s->viscosity);
	return 0;
}

/* The kernel and the rest densities it gives the lattice: every later length and
 * density is measured in them. */
static int init_kernel(sph *s, tp_err *err)
{
	const scene *sc = s->sc;
	s->spacing_f = (float)s->spacing;
	s->R = (float)(s->radius > 0 ? s->radius : SPH_RADIUS_DEFAULT * s->spacing);
	if (s->R < SPH_RADIUS_MIN * s->spacing_f)
		return scene_errf(sc, err, TP_EINPUT, "params.radius", "must be at least 1.2 x spacing (got %g, spacing %g)",
			       (double)s->R, s->spacing);
	s->invR = 1.0f / s->R;
	const double lat = sph_lattice_sum(s->spacing, s->R, 2);
	if (s->model == SPH_MODEL_IMPLICIT) {
		const int rc = check_implicit_ranges(s, lat, err);
		if (rc < 0)
			return rc;
	}
	s->rho0 = (float)(s->rest_density > 0 ? s->rest_density : lat);
	/* the density of the top row of a block at rest (its kernel cut by the surface) */
	s->rho_s = (float)(s->rho0 * sph_lattice_moment(s->spacing, s->R, 2, 0, 1) / lat);
	s->margin = 0.5f * s->spacing_f;
	return 0;
}

/* The tank (or the whole picture) and its pose at t = 0: the frame the particles live in. */
static int init_tank(sph *s, tp_err *err)
{
	const scene *sc = s->sc;
	double cx, cy, ang;
	if (sc->has_tank) {
		for (int k = 0; k < sc->tank.path.n; k++)
			s->turning |= sc->tank.path.keys[k].angle != 0;
		s->W = (float)sc->tank.size[0];
		s->H = (float)sc->tank.size[1];
		scene_path_eval(&sc->tank.path, 0, &cx, &cy, &ang);
	} else {
		s->W = (float)sc->width;
		s->H = (float)sc->height;
		cx = 0.5 * sc->width;
		cy = 0.5 * sc->height;
	}
	s->org_x = cx - 0.5 * s->W;
	s->org_y = cy - 0.5 * s->H;
	if (s->turning) {
		s->tang = ang;
		s->tth = -ang * (SPH_PI / 180);
		s->fr = frame_at(s, cx, cy, ang, 0, 0, 0);
	}
	if (s->W < 2 * s->spacing_f || s->H < 2 * s->spacing_f)
		return scene_errf(sc, err, TP_EINPUT, sc->has_tank ? "tank.size" : "size",
				  "%gx%g px is too small for a particle spacing of %g px",
			       (double)s->W, (double)s->H, s->spacing);
	return 0;
}

/* The obstacles at t = 0, and the floating boxes among them: blocks are clipped against
 * them when they are filled. */
static int init_obstacles(sph *s, tp_err *err)
{
	const scene *sc = s->sc;
	s->nobst = sc->nboxes;
	size_t nb = (size_t)sc->nboxes + 1;
	s->obst_prev = calloc(nb, sizeof(sph_obst));
	s->obst_cur = calloc(nb, sizeof(sph_obst));
	s->obst_sub0 = calloc(nb, sizeof(sph_obst));
	s->obst_sub1 = calloc(nb, sizeof(sph_obst));
	s->obst_angle = calloc(2 * nb, sizeof(double));
	s->poses = calloc(nb, sizeof(tp_box_pose));
	if (!s->obst_prev || !s->obst_cur || !s->obst_sub0 || !s->obst_sub1 || !s->obst_angle || !s->poses)
		return out_of_memory(s, err);
	for (int b = 0; b < sc->nboxes; b++) {
		tp_box_pose p = { 0 };
		scene_path_eval(&sc->boxes[b].path, 0, &p.x, &p.y, &p.angle);
		s->poses[b] = p;
		sph_obst_from_pose(s, b, &p, s->org_x, s->org_y, 0, 0, s->turning ? &s->fr : NULL,
				   &s->obst_prev[b], &s->obst_angle[b]);
		s->obst_angle[nb + b] = s->obst_angle[b];
	}
	memcpy(s->obst_cur, s->obst_prev, nb * sizeof(sph_obst));
	memcpy(s->obst_sub0, s->obst_prev, nb * sizeof(sph_obst));
	return sph_bodies_init(s, err);
}

/* Stream emitter e (scene emitter i) into st. Rows of `slots` particles across the jet,
 * `lateral` apart, leave at rate / slots rows per second: (speed * slots / rate) *
 * lateral is the area of a particle at rest density, so the jet is neither squeezed nor
 * thin. */
static void init_stream(const sph *s, const scene_emitter *e, int i, sph_stream *st)
{
	const scene *sc = s->sc;
	st->scene_index = i;
	st->total = sph_stream_total(sc, e);
	double ap = SPH_SQRT3_2 * s->spacing * s->spacing, v = fmax(e->speed, 1.0);
	double wdt = e->rate * ap / (v * s->spacing);
	st->slots = (int)fmin(fmax(floor(wdt + 0.5), 1), SPH_STREAM_MAX_SLOTS);
	st->lateral = (float)(e->rate * ap / (v * st->slots));
	tp_rng_seed(&st->rng, sc->seed, SPH_STREAM_RNG_ID + (uint64_t)i);
}

/* The most particles rain emitter e can bring before t_end, over `steps` steps: the
 * stepper rounds each step's expected count up at most once. */
static double rain_capacity(sph *s, const scene_emitter *e, double t_end, double steps)
{
	double span = fmin(e->to, t_end) - fmax(e->from, 0);
	double drops = ceil(e->rate * fmax(span, 0)) + steps + 1;
	return drops *
	       (double)sph_fill_disc(s, 0, 0, drop_radius(e->radius[1], e->strength[1]), 0, 0, 0);
}

/* Capacity: blocks + scene drops + streams + the most rain could bring, so that no
 * step ever allocates; the streams are set up on the way (they know their totals). */
static int init_capacity(sph *s, tp_err *err)
{
	const scene *sc = s->sc;
	double cap = 0;
	for (int i = 0; i < sc->nblocks; i++)
		cap += (double)sph_fill_block(s, &sc->blocks[i], 0);
	for (int i = 0; i < sc->ndrops; i++)
		cap += (double)sph_fill_disc(s, 0, 0, drop_radius(sc->drops[i].radius, sc->drops[i].strength),
					     0, 0, 0);
	s->nstreams = 0;
	for (int i = 0; i < sc->nemitters; i++)
		s->nstreams += sc->emitters[i].type == SCENE_EMIT_STREAM;
	s->streams = calloc((size_t)s->nstreams + 1, sizeof(sph_stream));
	if (!s->streams)
		return out_of_memory(s, err);
	double t_end = sc->frames > 1 ? (double)(sc->frames - 1) / sc->fps : 0;
	double steps = (double)sc->frames * sc->substeps;
	for (int i = 0, k = 0; i < sc->nemitters; i++) {
		const scene_emitter *e = &sc->emitters[i];
		if (e->type == SCENE_EMIT_STREAM) {
			sph_stream *st = &s->streams[k++];
			init_stream(s, e, i, st);
			cap += (double)st->total;
		} else if (e->rate > 0 && e->from < t_end) {
			cap += rain_capacity(s, e, t_end, steps);
		}
	}
	if (cap > SPH_MAX_PARTICLES)
		return scene_errf(sc, err, TP_EINPUT, "params.spacing",
				  "the scene could need %.0f particles; the limit is %d "
				  "(raise params.spacing, or lower emitter rates, caps or rain)",
				  cap, SPH_MAX_PARTICLES);
	s->cap = (int)cap + 1;
	return 0;
}

/* The stiffness (from the depth the capacity could fill, unless given), the near
 * stiffness, the relaxed model's cohesive offset, and the stiffness-limited step. */
static void init_pressure(sph *s)
{
	const double lat = sph_lattice_sum(s->spacing, s->R, 2);
	if (s->stiffness <= 0) {
		double area = (double)s->cap * SPH_SQRT3_2 * s->spacing * s->spacing;
		double depth = fmin(area / s->W, s->H);
		s->stiffness = auto_stiffness(s, fmax(depth, SPH_MIN_DEPTH * s->spacing));
	}
	double kn = s->near_stiffness * s->stiffness;
	s->near_stiffness = kn;
	if (s->model == SPH_MODEL_RELAXED) {
		/* The cohesive offset (relaxed): the near pressure k_near rhon pushes every pair
		 * apart with (Pn_i + Pn_j)/2 q^2, a background pressure that the water's surface
		 * would have to hold by tension (the top half of a pool stretched below rest
		 * density). Taking p_b off every pressure adds -p_b q to each pair, attractive,
		 * and p_b is chosen so that the two cancel in the stress of the resting lattice
		 * (zero virial: sum_j (k_near rhon0 q_j^2 - p_b q_j) r_j = 0): the near pressure
		 * keeps its short-range push between close pairs, which keeps the particles
		 * apart and ordered, and the water is under no stress but its weight. */
		double rhon0 = s->rho0 * sph_lattice_sum(s->spacing, s->R, 3) / lat;
		s->p_b = (float)(kn * rhon0 * sph_lattice_moment(s->spacing, s->R, 2, 1, 0) /
				 sph_lattice_moment(s->spacing, s->R, 1, 1, 0));
		s->rhon0 = (float)rhon0;
	}
	/* Small-oscillation rate of a particle in its neighbours' pressure field,
	 * omega^2 ~ (2/R) (k rho0 + 2 k_near rhon0) (relaxed; seed: k per unit of rho0), so a
	 * substep is at most cfl * 2 / omega. */
	double rhon0 = sph_lattice_sum(s->spacing, s->R, 3);
	double kk = s->model == SPH_MODEL_SEED ? s->stiffness : s->stiffness * s->rho0;
	/* the seed model has no near pressure: its step keeps the 0.5 k it always had */
	double kns = s->model == SPH_MODEL_SEED ? 0.5 * s->stiffness : kn;
	s->omega2 = 2.0 / s->R * (kk + 2.0 * kns * rhon0);
}

/* The walls' ghost tables, and the implicit model's own densities and gradient (after
 * the tables, which take the rest density without the particle itself). */
static void init_ghosts(sph *s)
{
	sph_wall_tables(s);
	if (s->model == SPH_MODEL_IMPLICIT) {
		s->rho0 += 1; /* its densities count the particle itself (sph_iisph.c) */
		/* grad W = (2 q / (R r)) r_ij, scaled so that on the resting lattice
		 * sum_j r_ij (x) grad W_ij = rho0 I (it is (1/R) sum_j q r I): a linear pressure's
		 * gradient comes out exactly, and water at rest holds p = rho0 g d */
		s->gk = (float)(2.0 / s->R * s->rho0 /
				(sph_lattice_moment(s->spacing, s->R, 1, 1, 0) / s->R));
	}
}

/* The particle arrays, cap of each (and SPH_LANES spare, sph_impl.h), all at once:
 * steps never allocate. */
static int alloc_particles(sph *s, tp_err *err)
{
	size_t n = (size_t)s->cap;
	float **fa[] = { &s->x, &s->y, &s->vx, &s->vy, &s->x2, &s->y2, &s->vx2, &s->vy2,
			 &s->rho, &s->rhon, &s->p, &s->pn, &s->irho, &s->wx, &s->wy,
			 &s->fax, &s->fay, &s->fsw, &s->fsvx, &s->fsvy };
	for (size_t i = 0; i < sizeof fa / sizeof fa[0]; i++)
		if (!(*fa[i] = alloc_floats(n + SPH_LANES)))
			return out_of_memory(s, err);
	s->key = calloc(n, sizeof(int));
	s->perm = calloc(n, sizeof(int));
	s->skey = calloc(n, sizeof(int));
	s->clusters = calloc(n + 1, sizeof(sph_cluster));
	s->cwork = calloc(n + 2, sizeof(int64_t));
	s->clusters2 = calloc(n + 1, sizeof(sph_cluster));
	s->cwork2 = calloc(n + 2, sizeof(int64_t));
	if (!s->key || !s->perm || !s->skey || !s->clusters || !s->cwork || !s->clusters2 || !s->cwork2)
		return out_of_memory(s, err);
	if (s->model == SPH_MODEL_IMPLICIT) {
		float **ia[] = { &s->gfx, &s->gfy, &s->gbx, &s->gby, &s->gg, &s->vbg, &s->aii,
				 &s->src, &s->apx, &s->apy, &s->vax, &s->vay, &s->perr, &s->ptmp };
		for (size_t i = 0; i < sizeof ia / sizeof ia[0]; i++)
			if (!(*ia[i] = alloc_floats(n + SPH_LANES)))
				return out_of_memory(s, err);
	}
	if (s->nfloat) {
		float **ba[] = { &s->bfx, &s->bfy, &s->cdx, &s->cdy };
		for (size_t i = 0; i < sizeof ba / sizeof ba[0]; i++)
			if (!(*ba[i] = alloc_floats(n + SPH_LANES)))
				return out_of_memory(s, err);
		if (!(s->cflag = calloc(n / SPH_CONTACT_BLOCK + 2, 1)))
			return out_of_memory(s, err);
		sph_bodies_poses(s);
	}
	return 0;
}

/* The neighbour grid (cells R/SPH_CELLS_PER_R wide and R tall), its sort's histograms and
 * the fixed reduction chunks. */
static int init_grid(sph *s, tp_err *err)
{
	const scene *sc = s->sc;
	s->ncx = (int)fmax(1, floor(SPH_CELLS_PER_R * s->W / s->R));
	s->ncy = (int)fmax(1, floor(s->H / s->R));
	if ((double)s->ncx * s->ncy > SPH_MAX_CELLS)
		return scene_errf(sc, err, TP_EINPUT, sc->has_tank ? "tank.size" : "size",
				  "%gx%g px needs too many grid cells for a kernel radius "
			       "of %g px", (double)s->W, (double)s->H, (double)s->R);
	s->ncells = s->ncx * s->ncy;
	s->cell_start = calloc((size_t)s->ncells + 1, sizeof(int));
	/* one histogram per thread for the parallel counting sort (one if the grid is huge) */
	const int threads = imax(1, imin(omp_get_max_threads(), SPH_MAX_HIST));
	s->nhist = s->ncells > SPH_ONE_HIST_CELLS ? 1 : threads;
	s->cell_fill = calloc((size_t)s->ncells * (size_t)s->nhist, sizeof(int));
	s->nchunks_max = (s->cap + SPH_CHUNK - 1) / SPH_CHUNK + 1;
	s->part = calloc((size_t)s->nchunks_max * 4, sizeof(double));
	if (!s->cell_start || !s->cell_fill || !s->part)
		return out_of_memory(s, err);
	return 0;
}

/* The render field, the size of the picture. Splat kernel (1 - r^2/Rs^2)^2 integrates to
 * pi Rs^2 / 3 per particle; scale so the surface level `iso` of the interior sum maps
 * to 1. */
static int init_render_field(sph *s, tp_err *err)
{
	s->fw = s->sc->width;
	s->fh = s->sc->height;
	s->field = alloc_floats((size_t)s->fw * (size_t)s->fh);
	if (!s->field)
		return out_of_memory(s, err);
	double n0 = 2.0 / (sqrt(3.0) * s->spacing * s->spacing);
	s->splat_r = (float)(s->splat * s->spacing);
	s->splat_scale = (float)(1.0 / (s->iso * n0 * SPH_PI * s->splat_r * s->splat_r / 3.0));
	return 0;
}

/* The blocks and the streams' first particles, and the densities of that state, so that
 * frame 0's stats mean something. */
static int fill_initial(sph *s, tp_err *err)
{
	const scene *sc = s->sc;
	for (int i = 0; i < sc->nblocks; i++)
		sph_fill_block(s, &sc->blocks[i], 1);
	sph_emit_streams(s, 0, NULL);
	sph_sort(s, NULL);
	if (s->model == SPH_MODEL_IMPLICIT)
		sph_iisph_density(s);
	else
		sph_density(s, NULL);
	if (sph_reduce(s) < 0)
		return tp_errf(err, TP_EIO, "sph: initial state is not finite");
	return 0;
}

static int sph_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	sph *s = priv;
	int rc;
	s->sc = ctx->scene;
	if ((rc = init_kernel(s, err)) < 0 || (rc = init_tank(s, err)) < 0 ||
	    (rc = init_obstacles(s, err)) < 0 || (rc = init_capacity(s, err)) < 0)
		return rc;
	init_pressure(s);
	init_ghosts(s);
	if ((rc = alloc_particles(s, err)) < 0 || (rc = init_grid(s, err)) < 0 ||
	    (rc = init_render_field(s, err)) < 0)
		return rc;
	return fill_initial(s, err);
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
		hmax = fmin(hmax, 0.25 / s->viscosity);
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

/* ---- checkpoints ---- */

/* Section layout, little-endian (util/wire.h): magic, n, t, the tank frame (origin,
 * velocity, whether it is known), emitted/lost counters, vmax (the next step's first
 * substep length depends on it), the turning tank (angle, rate, the scene's angle and the
 * frame: 10 doubles), the particles (x, y, vx, vy in their current order: the order
 * feeds the sums; the implicit model's pressures after them), the obstacles at the last step (8 floats and the angle each), the
 * floating bodies (box index and 13 doubles each) and every stream's counter and random
 * generator. */
static const char sph_magic[8] = "TPSPH03";

/* No position (px), velocity (px/s), angle or time of a real checkpoint comes near this. */
#define SPH_CKPT_MAX 1e9

static int obst_io(FILE *f, sph_obst *o, int wr)
{
	float v[8] = { o->cx, o->cy, o->c, o->s, o->hx, o->hy, o->vx, o->vy };
	if (wr)
		return tp_wr_f32s(f, v, 8);
	if (tp_rd_f32s(f, v, 8))
		return -1;
	for (int i = 0; i < 8; i++)
		if (!(fabsf(v[i]) <= SPH_CKPT_MAX)) /* a damaged checkpoint (found by fuzzing) */
			return -1;
	*o = (sph_obst){ .cx = v[0], .cy = v[1], .c = v[2], .s = v[3], .hx = v[4], .hy = v[5],
			 .vx = v[6], .vy = v[7] };
	return 0;
}

/* The doubles of a turning frame and of a body, in a fixed order. */
static int f64s_io(FILE *f, double *const *v, int n, int wr)
{
	int rc = 0;
	for (int i = 0; i < n; i++) {
		rc |= wr ? tp_wr_f64(f, *v[i]) : tp_rd_f64(f, v[i]);
		/* a damaged checkpoint (found by fuzzing); masses and inertias may be large */
		if (!wr && !(fabs(*v[i]) <= 1e30))
			rc = -1;
	}
	return rc;
}

static int frame_io(FILE *f, sph_frame *fr, int wr)
{
	double *v[] = { &fr->cx, &fr->cy, &fr->c, &fr->s, &fr->vx, &fr->vy, &fr->om, &fr->hw, &fr->hh, &fr->deg };
	return f64s_io(f, v, 10, wr);
}

static int body_io(FILE *f, sph_body *body, int wr)
{
	sph_body in = *body, *b = wr ? body : &in; /* read into a copy, kept only if valid */
	double *v[] = { &b->x, &b->y, &b->th, &b->vx, &b->vy, &b->w, &b->m, &b->I,
			&b->hw, &b->hh, &b->fx, &b->fy, &b->tq };
	/* the body's box is the scene's, set by init: a checkpoint may not move it (an index),
	 * nor change its mass, inertia or size (fuzzing: a mass of 0 made NaNs) */
	int box = b->box;
	int rc = wr ? tp_wr_i32(f, b->box) : tp_rd_int(f, &box);
	rc |= f64s_io(f, v, 13, wr);
	if (wr)
		return rc;
	if (rc || box != body->box || in.m != body->m || in.I != body->I || in.hw != body->hw ||
	    in.hh != body->hh)
		return -1;
	*body = in;
	return 0;
}

static int sph_save(const void *priv, FILE *f, tp_err *err)
{
	const sph *s = priv;
	size_t n = (size_t)s->n;
	int rc = tp_wr_bytes(f, sph_magic, sizeof sph_magic) | tp_wr_i32(f, s->n);
	rc |= tp_wr_f64(f, s->t) | tp_wr_f64(f, s->org_x) | tp_wr_f64(f, s->org_y);
	rc |= tp_wr_f64(f, s->tank_vx) | tp_wr_f64(f, s->tank_vy) | tp_wr_i32(f, s->have_tank_v);
	rc |= tp_wr_i64(f, s->emitted) | tp_wr_i64(f, s->lost) | tp_wr_f64(f, s->vmax);
	rc |= tp_wr_f64(f, s->tth) | tp_wr_f64(f, s->tom) | tp_wr_f64(f, s->tang);
	rc |= frame_io(f, (sph_frame *)&s->fr, 1);
	rc |= tp_wr_f32s(f, s->x, n) | tp_wr_f32s(f, s->y, n);
	rc |= tp_wr_f32s(f, s->vx, n) | tp_wr_f32s(f, s->vy, n);
	if (s->model == SPH_MODEL_IMPLICIT) /* the next solve starts from these pressures */
		rc |= tp_wr_f32s(f, s->p, n);
	rc |= tp_wr_i32(f, s->nobst);
	for (int b = 0; b < s->nobst; b++)
		rc |= obst_io(f, &s->obst_prev[b], 1) | tp_wr_f64(f, s->obst_angle[b]);
	rc |= tp_wr_i32(f, s->nfloat);
	for (int b = 0; b < s->nfloat; b++)
		rc |= body_io(f, &s->bodies[b], 1);
	rc |= tp_wr_i32(f, s->nstreams);
	for (int k = 0; k < s->nstreams; k++) {
		rc |= tp_wr_i64(f, s->streams[k].emitted);
		rc |= tp_wr_u64(f, s->streams[k].rng.state) | tp_wr_u64(f, s->streams[k].rng.inc);
	}
	return rc ? tp_errf(err, TP_EIO, "sph: cannot write the checkpoint") : 0;
}

static int sph_load(void *priv, FILE *f, tp_err *err)
{
	sph *s = priv;
	char magic[8];
	int n, nobst, nstreams;
	if (tp_rd_bytes(f, magic, sizeof magic) || memcmp(magic, sph_magic, sizeof magic) ||
	    tp_rd_int(f, &n))
		return tp_errf(err, TP_EINPUT, "sph: not an sph checkpoint");
	if (n < 0 || n > s->cap)
		return tp_errf(err, TP_EINPUT, "sph: checkpoint has %d particles, this scene holds %d", n, s->cap);
	size_t nn = (size_t)n;
	int64_t emitted, lost;
	int rc = tp_rd_f64(f, &s->t) | tp_rd_f64(f, &s->org_x) | tp_rd_f64(f, &s->org_y);
	rc |= tp_rd_f64(f, &s->tank_vx) | tp_rd_f64(f, &s->tank_vy) | tp_rd_int(f, &s->have_tank_v);
	rc |= tp_rd_i64(f, &emitted) | tp_rd_i64(f, &lost) | tp_rd_f64(f, &s->vmax);
	rc |= tp_rd_f64(f, &s->tth) | tp_rd_f64(f, &s->tom) | tp_rd_f64(f, &s->tang);
	rc |= frame_io(f, &s->fr, 0);
	rc |= tp_rd_f32s(f, s->x, nn) | tp_rd_f32s(f, s->y, nn);
	rc |= tp_rd_f32s(f, s->vx, nn) | tp_rd_f32s(f, s->vy, nn);
	if (s->model == SPH_MODEL_IMPLICIT)
		rc |= tp_rd_f32s(f, s->p, nn);
	rc |= tp_rd_int(f, &nobst);
	if (rc || nobst != s->nobst)
		return tp_errf(err, TP_EINPUT, "sph: truncated checkpoint, or one for another scene");
	for (int b = 0; b < s->nobst; b++)
		rc |= obst_io(f, &s->obst_prev[b], 0) | tp_rd_f64(f, &s->obst_angle[b]);
	int nfloat;
	rc |= tp_rd_int(f, &nfloat);
	if (rc || nfloat != s->nfloat)
		return tp_errf(err, TP_EINPUT, "sph: truncated checkpoint, or one for another scene");
	for (int b = 0; b < s->nfloat; b++)
		rc |= body_io(f, &s->bodies[b], 0);
	rc |= tp_rd_int(f, &nstreams);
	if (rc || nstreams != s->nstreams)
		return tp_errf(err, TP_EINPUT, "sph: truncated checkpoint, or one for another scene");
	for (int k = 0; k < s->nstreams; k++) {
		int64_t e;
		rc |= tp_rd_i64(f, &e);
		s->streams[k].emitted = (long)e;
		rc |= tp_rd_u64(f, &s->streams[k].rng.state) | tp_rd_u64(f, &s->streams[k].rng.inc);
	}
	if (rc)
		return tp_errf(err, TP_EINPUT, "sph: truncated checkpoint");
	s->emitted = (long)emitted;
	s->lost = (long)lost;
	s->n = n;
	for (int i = 0; i < n; i++)
		if (!(s->x[i] >= 0 && s->x[i] <= s->W && s->y[i] >= 0 && s->y[i] <= s->H))
			return tp_errf(err, TP_EINPUT, "sph: checkpoint particle %d is outside the tank", i);
	/* every velocity, position and time in range (fuzzing: a tank velocity of 1e293
	 * made NaNs that reached the grid's int conversions) */
	for (int i = 0; i < n; i++)
		if (!(fabsf(s->vx[i]) <= SPH_CKPT_MAX) || !(fabsf(s->vy[i]) <= SPH_CKPT_MAX))
			return tp_errf(err, TP_EINPUT, "sph: checkpoint particle %d's velocity is out of range", i);
	const double scal[] = {s->t, s->org_x, s->org_y, s->tank_vx, s->tank_vy, s->vmax, s->tth,
			       s->tom, s->tang};
	for (size_t i = 0; i < sizeof scal / sizeof scal[0]; i++)
		if (!(fabs(scal[i]) <= SPH_CKPT_MAX))
			return tp_errf(err, TP_EINPUT, "sph: checkpoint is damaged (a value out of range)");
	for (int b = 0; b < s->nobst; b++) /* fuzzing: a NaN angle reached an int conversion */
		if (!(fabs(s->obst_angle[b]) <= SPH_CKPT_MAX))
			return tp_errf(err, TP_EINPUT, "sph: checkpoint is damaged (a value out of range)");
	return sph_reduce(s) < 0 ? tp_errf(err, TP_EINPUT, "sph: checkpoint is not finite") : 0;
}

const tp_solver tp_solver_sph = {
	.name = "sph",
	.description = "2D particle fluid in a tank (seed 004; double density relaxation)",
	.priv_size = sizeof(sph),
	.options = sph_options,
	.caps = TP_SOLVER_PARTICLES | TP_SOLVER_TURNING_TANK | TP_SOLVER_FLOATING,
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
