/*
 * sph_ckpt.c - the sph solver's checkpoints: its whole state in one section (the layout
 * below), read back only if its counts match the scene and every value is in range (a
 * damaged or foreign checkpoint gets a clear error, found by fuzzing, tests/fuzz/).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"
#include "util/wire.h"

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
/* ... nor any double of a frame or a body (masses and inertias may be large). */
#define SPH_CKPT_MAX_F64 1e30

static int obst_io(FILE *f, sph_obst *o, int wr)
{
	float v[8] = { o->cx, o->cy, o->cos_a, o->sin_a, o->hx, o->hy, o->vx, o->vy };
	if (wr)
		return tp_wr_f32s(f, v, 8);
	if (tp_rd_f32s(f, v, 8))
		return -1;
	for (int i = 0; i < 8; i++)
		if (!(fabsf(v[i]) <= SPH_CKPT_MAX)) /* a damaged checkpoint (found by fuzzing) */
			return -1;
	*o = (sph_obst){ .cx = v[0], .cy = v[1], .cos_a = v[2], .sin_a = v[3],
			 .hx = v[4], .hy = v[5], .vx = v[6], .vy = v[7] };
	return 0;
}

/* The doubles of a turning frame and of a body, in a fixed order. */
static int f64s_io(FILE *f, double *const *v, int n, int wr)
{
	int rc = 0;
	for (int i = 0; i < n; i++) {
		rc |= wr ? tp_wr_f64(f, *v[i]) : tp_rd_f64(f, v[i]);
		/* a damaged checkpoint (found by fuzzing); masses and inertias may be large */
		if (!wr && !(fabs(*v[i]) <= SPH_CKPT_MAX_F64))
			rc = -1;
	}
	return rc;
}

static int frame_io(FILE *f, sph_frame *fr, int wr)
{
	double *v[] = { &fr->cx, &fr->cy, &fr->cos_th, &fr->sin_th, &fr->vx, &fr->vy,
			&fr->om, &fr->hw, &fr->hh, &fr->deg };
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

int sph_save(const void *priv, FILE *f, tp_err *err)
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

int sph_load(void *priv, FILE *f, tp_err *err)
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
