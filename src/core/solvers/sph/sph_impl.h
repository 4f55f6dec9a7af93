/*
 * sph_impl.h - private to the sph solver: sph.c (descriptor, the step loop, stats),
 * sph_setup.c (set-up, tear-down), sph_ckpt.c (checkpoints), sph_scene.c (blocks, drops,
 * streams, obstacles), sph_grid.c (set-up tables, the neighbour grid's sort, prediction,
 * diagnostics), sph_kern.c (the neighbour passes), sph_iisph.c (the implicit model),
 * sph_body.c (floating boxes) and sph_surf.c (the render field).
 *
 * Frames. The particles live in the tank's own frame: local (0, 0) is the top-left
 * corner of the tank interior, +y is down, units are pixels and seconds. The tank's
 * motion reaches the fluid only as the inertial acceleration -a_tank of seed 004 ("drag
 * the bottle"), so the walls never move in this frame and containment is exact. World
 * (image) position = local + origin, origin = tank centre - size/2. Obstacles are moved
 * into this frame every substep.
 *
 * A turning tank (its path keyframes "angle"): the frame also turns, about the tank's
 * centre. World = C + R(theta) (local - size/2), theta = -angle (the scene's angles are
 * counter-clockwise on screen, y down), and the fluid feels the rotating frame: with
 * r = local - size/2, omega = dtheta/dt and alpha = domega/dt,
 *     a = R^T (g - A_centre) - 2 omega J v - alpha J r + omega^2 r,   J (x, y) = (-y, x)
 * (Coriolis, Euler and centrifugal terms). The walls still never move in this frame, so
 * containment stays exact. A tank that never turns keeps the translation-only code, bit
 * for bit.
 *
 * Storage is structure-of-arrays, float, reordered by grid cell every substep.
 */
#ifndef TP_SOLVERS_SPH_IMPL_H
#define TP_SOLVERS_SPH_IMPL_H

#include <math.h>
#include <signal.h>
#include <stdint.h>

#include "solvers/solver.h"
#include "util/mathf.h"
#include "util/rng.h"

enum { SPH_MODEL_SEED = 0, SPH_MODEL_RELAXED = 1, SPH_MODEL_IMPLICIT = 2 };

/* Fewer particles than this run on one thread: waking threads for tiny passes costs
 * more than it saves (a lot more on a busy machine). Results are the same either way. */
#define SPH_PAR_MIN 2048
/* Particles per fixed reduction chunk: sums are combined chunk by chunk in index order,
 * so they do not depend on the thread count. */
#define SPH_CHUNK 1024
/* Neighbour loops work on clusters of up to this many particles at once, one per vector
 * lane (sph_kern.c). Every particle array has this many spare entries after the last
 * particle, so a cluster's lanes can always be loaded whole. */
#define SPH_LANES 8
/* most lattice rows a kernel reaches below a free surface (radius 3 spacings: 5) */
#define SPH_SURF_ROWS 8
/* cells a side of the implicit model's box ghost tables (sph.bq) */
#define SPH_BOX_N 64
/* Most threads the counting sort splits its work over. */
#define SPH_MAX_HIST 64
/* Particles per flag of the floating boxes' contact scan (sph.cflag). */
#define SPH_CONTACT_BLOCK 64
/* Samples of the wall tables over distances 0..R. */
#define SPH_WALL_N 64
/* Grid cells per kernel radius across (cells are R/4 wide and R tall): a cluster's
 * candidates reach this many columns beyond its particles' cells. */
#define SPH_CELLS_PER_R 4

#define SPH_PI      3.14159265358979323846
#define SPH_SQRT3_2 0.86602540378443864676 /* rows of the hexagonal lattice, in spacings */

/* A cluster: up to SPH_LANES consecutive sorted particles [i0, i0 + m) of one grid row,
 * close together, and where their neighbour candidates are: up to three index ranges
 * [a, b) of the sorted particles, one per grid row (built by sph_sort). */
typedef struct sph_cluster {
	int i0, m, n;
	int a[3], b[3];
} sph_cluster;

/* An obstacle at one instant, in the tank frame: centre, the cosine and sine of its
 * angle a, half extents grown by the particle margin, and velocity. */
typedef struct sph_obst {
	float cx, cy, cos_a, sin_a, hx, hy, vx, vy;
} sph_obst;

/* What a substep's particle pass needs besides the particles. */
typedef struct sph_sub {
	float dt;
	float ax, ay;          /* gravity - tank acceleration, px/s^2 (tank frame) */
	int rot;               /* turning tank: add the rotating frame's terms below */
	float om, al;          /* omega (rad/s) and alpha (rad/s^2) of the frame */
	float hw, hh;          /* the tank's centre, local */
	int nobst;
	const sph_obst *prev;  /* obstacles at the start of the substep */
	const sph_obst *cur;   /* ... and at its end */
} sph_sub;

/* The tank frame at one instant (turning tanks): centre C (world), the cosine and sine of
 * theta, the centre's velocity V (world) and omega; hw, hh the half size. */
typedef struct sph_frame {
	double cx, cy, cos_th, sin_th, vx, vy, om, hw, hh;
	double deg; /* the tank's angle as the scene gives it, degrees */
} sph_frame;

static inline void frame_to_local(const sph_frame *f, double wx, double wy, double *lx, double *ly)
{
	double dx = wx - f->cx, dy = wy - f->cy;
	*lx = f->cos_th * dx + f->sin_th * dy + f->hw;
	*ly = -f->sin_th * dx + f->cos_th * dy + f->hh;
}

static inline void frame_to_world(const sph_frame *f, double lx, double ly, double *wx, double *wy)
{
	double rx = lx - f->hw, ry = ly - f->hh;
	*wx = f->cx + f->cos_th * rx - f->sin_th * ry;
	*wy = f->cy + f->sin_th * rx + f->cos_th * ry;
}

/* The velocity, in the frame, of a point at local (lx, ly) moving at (vx, vy) in the
 * world: R^T (v - V) - omega J r. */
static inline void frame_vel(const sph_frame *f, double lx, double ly, double vx, double vy,
			     double *ux, double *uy)
{
	double dx = vx - f->vx, dy = vy - f->vy, rx = lx - f->hw, ry = ly - f->hh;
	*ux = f->cos_th * dx + f->sin_th * dy + f->om * ry;
	*uy = -f->sin_th * dx + f->cos_th * dy - f->om * rx;
}

/* Grid cells: rows y0..y1, columns x0..x1. */
typedef struct sph_rows {
	int y0, y1, x0, x1;
} sph_rows;

/* A floating box (sph_body.c), in the tank frame: centre, angle th (rad, of the frame's
 * numbers: th = -the scene's angle), velocities, mass and moment of inertia in particle
 * masses, half size, and the fluid's force and torque summed over the last substep. */
typedef struct sph_body {
	int box;
	sph_rows rows; /* the cells its ghosts can reach this substep (sph_bodies_move) */
	double x, y, th, vx, vy, w;
	double m, I, hw, hh;
	double fx, fy, tq;
} sph_body;

typedef struct sph_stream { /* run-time state of one stream emitter */
	int scene_index;
	long emitted;
	long total;    /* how many it will emit in the whole scene */
	int slots;     /* particles side by side across the jet */
	float lateral; /* their spacing, px */
	tp_rng rng;
} sph_stream;

typedef struct sph {
	/* options (filled from the option table before init) */
	int model;
	double spacing, radius, stiffness, compression, near_stiffness, rest_density, cohesion;
	double viscosity, gravity, wall_stiffness, max_speed, cfl;
	int max_substeps;
	double splat, iso;
	double tolerance;   /* implicit: mean density error the pressure solve stops at */
	int max_iterations; /* implicit: most Jacobi sweeps of the pressure solve a substep */

	const scene *sc;
	int avx2; /* the neighbour passes' AVX2 path may run (tp_solver_ctx.cpu_flags) */

	/* derived constants, px and s */
	float spacing_f;  /* params.spacing as a float: the lattice's particle spacing */
	float R, invR;    /* kernel radius */
	float rho0;       /* rest density (kernel sum over neighbours, self excluded) */
	float rho_s;      /* relaxed: that of the top row of a block at rest (free surface) */
	float p_b;        /* relaxed: the cohesive offset taken off every pressure (sph.c) */
	float p_bw;       /* ... and the walls' and bodies' ghosts', per unit of Pn (sph_wall_tables) */
	float rhon0;      /* relaxed: the rest near density */
	float margin;     /* wall spring zone */
	float W, H;       /* tank interior */
	double omega2;    /* stiffness-limited step: dt <= cfl / sqrt(omega2) */
	/* Wall "ghost" tables (relaxed model): the density, near density and push that the
	 * fluid missing beyond a wall would give a particle at distance d (index d/R*N). */
	float wall_rho[SPH_WALL_N + 2], wall_rhon[SPH_WALL_N + 2];
	float wall_f[SPH_WALL_N + 2], wall_fn[SPH_WALL_N + 2];

	/* particles: n of cap used */
	int n, cap;
	float *x, *y, *vx, *vy;   /* state */
	float *x2, *y2, *vx2, *vy2; /* reorder / next-state buffers, swapped with the above */
	float *rho, *rhon, *p, *pn, *irho;
	float *fax, *fay, *fsw, *fsvx, *fsvy; /* the final pass's pair sums */
	int *key, *perm, *skey;    /* grid keys (unsorted, then sorted order), sort order */
	sph_cluster *clusters;     /* the sorted particles in clusters, from sph_sort */
	int nclusters;
	int64_t *cwork;            /* nclusters + 1: running total of the clusters' candidates */
	sph_cluster *clusters2;    /* sph_sort's scratch for both */
	int64_t *cwork2;

	/* uniform grid over the tank, cells >= R/4 wide and >= R tall, row-major */
	int ncx, ncy, ncells;
	int *cell_start; /* ncells + 1 */
	int *cell_fill;  /* ncells per histogram: nhist of them */
	int nhist;

	/* fixed-chunk reductions */
	int nchunks_max;
	double *part;    /* 4 per chunk */

	/* scene objects */
	double t;
	double org_x, org_y;       /* world position of local (0, 0) now */
	double tank_vx, tank_vy;   /* tank velocity at the last step */
	int have_tank_v;
	int turning;               /* the tank's path keyframes an angle */
	double tth, tom;           /* turning: theta (rad) and omega (rad/s) at the last step */
	double tang;               /* ... and the angle as the scene gives it, degrees */
	sph_frame fr;              /* turning: the frame now */
	int nobst;
	sph_obst *obst_prev, *obst_cur, *obst_sub0, *obst_sub1;
	double *obst_angle;        /* degrees: nobst at the last step, then nobst + 1 now */
	tp_box_pose *poses;        /* world poses at the last step, for the renderer */
	int nstreams;
	sph_stream *streams;
	int nfloat;                /* floating boxes */
	sph_body *bodies;
	float *bfx, *bfy;          /* per particle: the bodies' ghost push (px/s^2) */
	float *cdx, *cdy;          /* ... and the push-out of the last relaxation (px) */
	uint8_t *cflag;            /* per SPH_CONTACT_BLOCK particles: some push-out there (0
				    * between substeps) */
	long emitted;              /* particles created since init */
	long lost;                 /* particles refused because the cap was reached */

	/* last step's diagnostics */
	double ke, vmax, derr, mean_rho;
	int substeps_last;
	char why[256]; /* a blow-up's reason (sph_why) */

	/* render field */
	int fw, fh;
	float *field;    /* fw * fh: 0 air, >= 1 fluid */
	float *wx, *wy;  /* world positions for the debug view */
	float splat_r, splat_scale;

	/* implicit model (sph_iisph.c): per particle, in the sorted order of the substep;
	 * only p (the pressure, kept for the next substep's first guess) lives longer */
	float *gfx, *gfy;   /* sum_j grad W_ij over the fluid */
	float *gbx, *gby;   /* ... and over the walls' and bodies' ghosts */
	float *gg;          /* sum_j |grad W_ij|^2 */
	float *vbg;         /* sum over the bodies' ghosts of v_b . grad W_ib */
	float *aii, *src;   /* the diagonal and the right-hand side rho0 - rho_adv */
	float *apx, *apy;   /* the pressure acceleration */
	float *vax, *vay;   /* the velocity without pressure */
	float *perr;        /* each particle's predicted compression */
	float *ptmp;        /* p reordered with the particles */
	float gk;           /* the gradient's constant: grad W_ij = gk q / r r_ij */
	/* the free surface's rest densities (sph_iisph_surface): row m of a lattice at rest
	 * below a free surface has |sum_j grad W_ij| = sg[m] and density rho0 sf[m] */
	float sg[SPH_SURF_ROWS], sf[SPH_SURF_ROWS];
	int nsurf;
	/* the implicit model's box ghosts (sph_body.c box_ghost): over the quadrant x > a,
	 * y > b of the kernel, a and b on SPH_BOX_N + 1 points from -R to R, the ghost
	 * density bq and the x part of its gradient integral bqx (the y part is bqx(b, a)) */
	float bq[SPH_BOX_N + 1][SPH_BOX_N + 1], bqx[SPH_BOX_N + 1][SPH_BOX_N + 1];
	float *gwc;         /* the substep's gw of every (cluster, candidate or image, lane) */
	int64_t gwc_cap;    /* ... its floats */
	int64_t *gwoff;     /* nclusters + 1: where each cluster's run of gwc starts */
	int gwoff_cap;
	const volatile sig_atomic_t *cancel; /* the step's cancel flag (NULL: none) */
	int iters_last;     /* sweeps of the last substep's solve */
	double iters_sum;   /* ... summed over the last step, for the stats */
} sph;

/* The descriptor's methods in files of their own: set-up and tear-down (sph_setup.c) and
 * checkpoints (sph_ckpt.c). */
int sph_init(void *priv, const tp_solver_ctx *ctx, tp_err *err);
void sph_uninit(void *priv);
int sph_save(const void *priv, FILE *f, tp_err *err);
int sph_load(void *priv, FILE *f, tp_err *err);

/* A drop of fluid has no height: its strength is how much water it brings, in discs of
 * radius r (strength 1: a disc of radius r, 2: twice the water, a disc of radius r sqrt 2;
 * 0: nothing). The loader refuses negative strengths for this solver. */
static inline double drop_radius(double r, double strength)
{
	return strength > 0 ? r * sqrt(strength) : 0;
}

/* The turning tank's frame: centre (cx, cy), angle `deg` (scene degrees), centre velocity
 * (vx, vy) and omega (rad/s). */
static inline sph_frame frame_at(const sph *s, double cx, double cy, double deg, double vx,
				 double vy, double om)
{
	double th = -deg * (SPH_PI / 180);
	return (sph_frame){ .cx = cx, .cy = cy, .cos_th = cos(th), .sin_th = sin(th), .vx = vx,
			    .vy = vy, .om = om, .hw = 0.5 * s->W, .hh = 0.5 * s->H, .deg = deg };
}

/* Tests only: called after every substep of sph_step (NULL: nothing is called). */
extern void (*sph_substep_hook)(const sph *s, void *ctx);
extern void *sph_substep_ctx;
/* Tests only: 0 turns the implicit solve's gradient cache off (sph_iisph.c; the same bits). */
extern int sph_iisph_cache;

/* sph_scene.c: particles from the scene, in the tank frame */
/* Particles of a block (place = 0: only counts them), clipped to the tank and the
 * obstacles at t = 0. */
long sph_fill_block(sph *s, const scene_block *b, int place);
/* A disc of radius r on the lattice centred at local (cx, cy); at least one particle. */
long sph_fill_disc(sph *s, double cx, double cy, double r, double vx, double vy, int place);
/* How many particles stream emitter e makes in the whole scene. */
long sph_stream_total(const scene *sc, const scene_emitter *e);
/* Emits every stream particle due by time t (c: the substep, for obstacles; may be NULL). */
void sph_emit_streams(sph *s, double t, const sph_sub *c);
/* Obstacle b at a world pose into the tank frame with origin (ox, oy), moving with the
 * tank's velocity (tvx, tvy); *angle gets the pose's angle (in the frame). A turning tank
 * passes its frame f instead (ox ... tvy unused); f = NULL otherwise. */
void sph_obst_from_pose(const sph *s, int b, const tp_box_pose *p, double ox, double oy,
			double tvx, double tvy, const sph_frame *f, sph_obst *o, double *angle);
/* A world position to the tank frame now. */
void sph_world_to_local(const sph *s, double wx, double wy, double *lx, double *ly);
/* The obstacles at fraction f of the step (prev -> cur, angles a0 -> a1). */
void sph_obst_lerp(const sph *s, const double *a0, const double *a1, double f, sph_obst *out);

/* sph_body.c: floating boxes (relaxed model) */
int sph_bodies_init(sph *s, tp_err *err);
/* Moves the bodies over substep c; their poses at its start and end into sub0, sub1. */
void sph_bodies_move(sph *s, const sph_sub *c, sph_obst *sub0, sph_obst *sub1);
/* The bodies' ghost density into rho, rhon of particles [i0, i1) (the density pass calls
 * it, before the pressures, on each thread's own particles). */
void sph_bodies_density(sph *s, const sph_sub *c, int i0, int i1);
/* The ghost pushes into bfx, bfy and, reversed, onto the bodies. */
void sph_bodies_push(sph *s, const sph_sub *c);
/* After sph_relax: the push-outs (cdx, cdy) onto the bodies as contact impulses. */
void sph_bodies_contacts(sph *s, const sph_sub *c);
/* World poses of the bodies into s->poses. */
void sph_bodies_poses(sph *s);

/* sph_grid.c */
void sph_wall_tables(sph *s);
double sph_lattice_sum(double spacing, double R, int power);
double sph_lattice_moment(double spacing, double R, int power, int rpow, int half);
/* Sorts the particles by grid cell and rebuilds the clusters; with `predict`, first does
 * the relaxed model's prediction step for that substep (which moves the particles). */
void sph_sort(sph *s, const sph_sub *predict);
/* Sums over fixed chunks: ke, max speed, compression, density; returns 0 if finite. */
int sph_reduce(sph *s);

/* sph_kern.c */
/* c: the substep, for the floating boxes' ghosts (NULL: none). */
void sph_density(sph *s, const sph_sub *c);
/* The final pass of a substep; both return the largest speed afterwards (px/s). */
double sph_relax(sph *s, const sph_sub *c);
double sph_forces_seed(sph *s, const sph_sub *c);
/* Pushes (x, y) out of the obstacles and into the tank; (xp, yp) is where the particle
 * was at the start of the substep. Velocity (vx, vy) loses its into-the-wall part when
 * vx != NULL. */
void sph_collide(const sph *s, const sph_sub *c, float xp, float yp, float *x, float *y,
		 float *vx, float *vy);

/* The implicit model's substep (sph_iisph.c): sorts, solves for the pressure and moves
 * the particles; returns the largest speed afterwards (px/s). */
double sph_iisph_substep(sph *s, const sph_sub *c);
/* Its densities (self included) of the sorted particles, for the initial stats. */
void sph_iisph_density(sph *s);
/* Its free surface's rest densities (sph.sg, sph.sf), once gk is known. */
void sph_iisph_surface(sph *s);
/* Thread t's share of the clusters (sph_kern.c). */
void sph_thread_clusters(const sph *s, int *k0, int *k1);
/* The implicit model's body ghosts into rho, gbx, gby, vbg of particles [i0, i1), and
 * their pressure forces onto the bodies (sph_body.c). */
void sph_bodies_ghosts(sph *s, const sph_sub *c, int i0, int i1);
void sph_bodies_pressure(sph *s, const sph_sub *c);
/* Its tables (sph.bq, sph.bqx), once gk and rho0 are known. */
void sph_box_tables(sph *s);

/* sph_surf.c */
void sph_splat(sph *s);

/* ---- small helpers shared by sph_grid.c and sph_kern.c ---- */

/* Per-particle loops run over whole particle ranges, so the compiler can vectorise them,
 * with an AVX2 clone picked at run time (elementwise IEEE operations: the same bits at
 * any width). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define SPH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SPH_CLONES
#endif

/* How far from the walls clamped particles stay, px. */
#define SPH_WALL_EPS 0.01f

static inline int imin(int a, int b) { return a < b ? a : b; }

static inline int imax(int a, int b) { return a > b ? a : b; }

/* A wall table at distance d (scale = SPH_WALL_N / R entries per px), linearly
 * interpolated; 0 beyond the kernel. Shared by the tank walls and the floating bodies. */
static inline float wall_lookup(const float *tab, float d, float scale)
{
	float f = d * scale;
	int i = (int)f;
	if (i >= SPH_WALL_N)
		return 0;
	float a = f - (float)i;
	return tab[i] + a * (tab[i + 1] - tab[i]);
}

/* Relaxed model: the pressure a wall's or a body's ghosts push with, from the stored
 * (halved) pressure P and near pressure Pn of the particle: the missing fluid's pressure
 * taken as the particle's own, its negative part left out (walls do not pull), less a
 * cohesive offset like the water's, in proportion to the particle's near pressure: that
 * which cancels the near pressure's push fn_w over the layer the ghosts touch
 * (sph_wall_tables), so that at rest a wall or a body feels the water's pressure and no
 * background, and a stray particle is neither pushed off a wall nor held to it. */
static inline float ghost_p(const sph *s, float P, float Pn)
{
	const float e = 2 * P + s->p_b;
	return (e > 0 ? e : 0.0f) - 2 * Pn * s->p_bw;
}

/* Constants of the per-particle steps, copied out of the solver so that loops writing
 * particle arrays need not reload them (and can be vectorised). */
typedef struct sph_k {
	float margin, kw;     /* wall spring zone and stiffness */
	float W, H;           /* tank interior */
	float vmax;           /* velocity cap, 0 = none */
	float fx, fy;         /* cells per px */
	int ncx, ncy;
} sph_k;

static inline sph_k sph_consts(const sph *s)
{
	return (sph_k){ .margin = s->margin, .kw = (float)s->wall_stiffness, .W = s->W, .H = s->H,
			.vmax = (float)s->max_speed, .fx = (float)s->ncx / s->W,
			.fy = (float)s->ncy / s->H, .ncx = s->ncx, .ncy = s->ncy };
}

/* The grid cell (row-major key) of a position. */
static inline int cell_key(const sph_k *k, float x, float y)
{
	/* clamped as floats, the same cells as clamping the ints: a position that is not
	 * finite (found by fuzzing a damaged checkpoint) never reaches an int conversion */
	const float gx = x * k->fx, gy = y * k->fy;
	int cx = gx > 0 ? (gx < (float)(k->ncx - 1) ? (int)gx : k->ncx - 1) : 0;
	int cy = gy > 0 ? (gy < (float)(k->ncy - 1) ? (int)gy : k->ncy - 1) : 0;
	return cy * k->ncx + cx;
}

static inline void swap_state(sph *s)
{
	float *t;
	t = s->x, s->x = s->x2, s->x2 = t;
	t = s->y, s->y = s->y2, s->y2 = t;
	t = s->vx, s->vx = s->vx2, s->vx2 = t;
	t = s->vy, s->vy = s->vy2, s->vy2 = t;
}

/* Seed wall springs: inside the margin a wall pushes with a = k_w * penetration (px/s^2). */
static inline void wall_spring(const sph_k *k, float x, float y, float *ax, float *ay)
{
	const float m = k->margin, kw = k->kw;
	if (x < m)
		*ax += kw * (m - x);
	if (x > k->W - m)
		*ax += kw * (k->W - m - x);
	if (y < m)
		*ay += kw * (m - y);
	if (y > k->H - m)
		*ay += kw * (k->H - m - y);
}

/* Velocity cap: |v| <= max_speed (0 = none). */
static inline void cap_speed(const sph_k *k, float *vx, float *vy)
{
	const float vm = k->vmax;
	float v2 = *vx * *vx + *vy * *vy;
	if (vm > 0 && v2 > vm * vm) {
		float f = vm / sqrtf(v2);
		*vx *= f;
		*vy *= f;
	}
}

#endif
