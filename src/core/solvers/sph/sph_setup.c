/*
 * sph_setup.c - the sph solver's set-up from the scene and its tear-down: the kernel and
 * rest densities from the options, the tank and the obstacles at t = 0, the capacity every
 * buffer is sized for (no step allocates), the stiffness and the stable step, the grid, the
 * render field and the first particles. sph_init runs these steps in order; sph_uninit
 * frees whatever they allocated, after a failed init too.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"
#include "util/cpu.h"

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
 * cfl, the least viscosity, and the strongest gravity (px/s^2, either way). */
#define SPH_II_RADIUS_MIN       1.75f
#define SPH_II_RADIUS_MAX       3.0f
#define SPH_II_REST_DENSITY_OFF (0.1 + 1e-9)
#define SPH_II_CFL_MIN          0.05
#define SPH_II_CFL_MAX          0.5
#define SPH_II_VISCOSITY_MIN    1
#define SPH_II_GRAVITY_MAX      5e4
/* The automatic stiffness holds at least this many spacings of water. */
#define SPH_MIN_DEPTH 4
/* Most particles side by side across a stream's jet. */
#define SPH_STREAM_MAX_SLOTS 64
/* Added to the emitter's index, the random stream of a stream emitter: "stream". */
#define SPH_STREAM_RNG_ID 0x73747265616dULL

/* Particle arrays start on a cache line, their size rounded up to whole lines. */
#define SPH_ALIGN 64

/* n floats, zeroed and aligned to SPH_ALIGN bytes. */
static void *alloc_floats(size_t n)
{
	size_t bytes = (n * sizeof(float) + SPH_ALIGN - 1) & ~(size_t)(SPH_ALIGN - 1);
	void *p = aligned_alloc(SPH_ALIGN, bytes ? bytes : SPH_ALIGN);
	if (p)
		memset(p, 0, bytes ? bytes : SPH_ALIGN);
	return p;
}

/* Frees all that sph_init's steps allocated: every pointer is NULL or owned, so a failed
 * init is undone too. */
void sph_uninit(void *priv)
{
	sph *s = priv;
	float **fa[] = { &s->x, &s->y, &s->vx, &s->vy, &s->x2, &s->y2, &s->vx2, &s->vy2,
			 &s->rho, &s->rhon, &s->p, &s->pn, &s->irho, &s->field, &s->wx, &s->wy,
			 &s->fax, &s->fay, &s->fsw, &s->fsvx, &s->fsvy, &s->gfx, &s->gfy, &s->gbx,
			 &s->gby, &s->gg, &s->vbg, &s->aii, &s->src, &s->apx, &s->apy, &s->vax,
			 &s->vay, &s->perr, &s->ptmp, &s->gwc };
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
	free(s->gwoff);
	s->gwoff = NULL;
	s->gwoff_cap = 0;
	s->gwc_cap = 0;
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
	if (fabs(s->gravity) > SPH_II_GRAVITY_MAX)
		return scene_errf(sc, err, TP_EINPUT, "params.gravity",
				  "the implicit model needs -50000 to 50000 px/s^2 (got %g): "
				  "stronger, water at rest keeps jittering at its free surface",
				  s->gravity);
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
		sph_iisph_surface(s);
		sph_box_tables(s);
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

int sph_init(void *priv, const tp_solver_ctx *ctx, tp_err *err)
{
	sph *s = priv;
	int rc;
	s->sc = ctx->scene;
	s->avx2 = (ctx->cpu_flags & TP_CPU_FLAG_AVX2) != 0;
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
