/*
 * sph_scene.c - the sph solver's particles from the scene: blocks and drops laid on a
 * hexagonal lattice of the particle spacing, the stream emitters (nozzles fixed in the
 * world), and the obstacles moved into the tank's frame.
 */
#include <math.h>

#include "solvers/sph/sph_impl.h"
#include "util/trig.h"

static int inside_obstacle0(const sph *s, double x, double y)
{
	for (int b = 0; b < s->nobst; b++) {
		const sph_obst *o = &s->obst_sub0[b];
		double dx = x - o->cx, dy = y - o->cy;
		double lx = o->cos_a * dx + o->sin_a * dy, ly = -o->sin_a * dx + o->cos_a * dy;
		if (fabs(lx) < o->hx && fabs(ly) < o->hy)
			return 1;
	}
	return 0;
}

/* Appends one particle at a local position with a local velocity. */
static void add_particle(sph *s, double x, double y, double vx, double vy)
{
	s->emitted++;
	if (s->n >= s->cap) {
		s->lost++;
		return;
	}
	const double eps = 0.01; /* px from the walls, as SPH_WALL_EPS (in double here) */
	int i = s->n++;
	s->x[i] = (float)fmin(fmax(x, eps), s->W - eps);
	s->y[i] = (float)fmin(fmax(y, eps), s->H - eps);
	s->vx[i] = (float)vx;
	s->vy[i] = (float)vy;
}

/* A block of fluid at rest (local frame) on the hexagonal lattice, clipped to the tank
 * and to the obstacles at t = 0. Returns the number of particles. */
long sph_fill_block(sph *s, const scene_block *b, int place)
{
	const double sp = s->spacing_f, dy = sp * SPH_SQRT3_2;
	double x0 = b->x - s->org_x, y0 = b->y - s->org_y;
	long count = 0;
	if (s->turning) {
		/* the lattice in the world's axes, each point moved into the turned tank */
		for (int j = 0;; j++) {
			double wy = b->y + dy * (j + 0.5);
			if (wy > b->y + b->h)
				break;
			for (int i = 0;; i++) {
				double wx = b->x + sp * (i + 0.5 + 0.5 * (j & 1)), x, y;
				if (wx > b->x + b->w)
					break;
				frame_to_local(&s->fr, wx, wy, &x, &y);
				if (x < 0 || x > s->W || y < 0 || y > s->H || inside_obstacle0(s, x, y))
					continue;
				count++;
				if (place)
					add_particle(s, x, y, 0, 0);
			}
		}
		return count;
	}
	for (int j = 0;; j++) {
		double y = y0 + dy * (j + 0.5);
		if (y > y0 + b->h)
			break;
		for (int i = 0;; i++) {
			double x = x0 + sp * (i + 0.5 + 0.5 * (j & 1));
			if (x > x0 + b->w)
				break;
			if (x < 0 || x > s->W || y < 0 || y > s->H || inside_obstacle0(s, x, y))
				continue;
			count++;
			if (place)
				add_particle(s, x, y, 0, 0);
		}
	}
	return count;
}

/* A disc of radius r on the lattice centred at local (cx, cy); at least one particle. */
long sph_fill_disc(sph *s, double cx, double cy, double r, double vx, double vy, int place)
{
	const double sp = s->spacing_f, dy = sp * SPH_SQRT3_2;
	int J = (int)(r / dy), I = (int)(r / sp) + 1;
	long count = 0;
	for (int j = -J; j <= J; j++)
		for (int i = -I; i <= I; i++) {
			double px = sp * (i + 0.5 * (j & 1)), py = dy * j;
			if (px * px + py * py > r * r)
				continue;
			count++;
			if (place)
				add_particle(s, cx + px, cy + py, vx, vy);
		}
	return count;
}

/* ---- stream emitters ---- */

/* Particle k of a stream leaves the nozzle at t_k = from + k / rate. */
static double stream_time(const scene_emitter *e, long k) { return e->from + (double)k / e->rate; }

long sph_stream_total(const scene *sc, const scene_emitter *e)
{
	double t_end = sc->frames > 1 ? (double)(sc->frames - 1) / sc->fps : 0;
	if (e->rate <= 0 || e->from > t_end)
		return 0;
	double last = fmin(e->to, t_end + 1e-9);
	long n = (long)floor((last - e->from) * e->rate) + 2; /* bound, then exact count */
	while (n > 0 && !(stream_time(e, n - 1) < e->to && stream_time(e, n - 1) <= t_end))
		n--;
	if (e->cap > 0 && n > e->cap)
		n = e->cap;
	return n;
}

/* Emits every particle of every stream due by time t; the nozzle is fixed in the world,
 * so a particle that left at t_k is at nozzle + u (t - t_k), with velocity u - v_tank
 * in the tank frame. New particles are pushed out of obstacles like the others. */
void sph_emit_streams(sph *s, double t, const sph_sub *c)
{
	for (int k = 0; k < s->nstreams; k++) {
		sph_stream *st = &s->streams[k];
		const scene_emitter *e = &s->sc->emitters[st->scene_index];
		double bs, bc;
		tp_sincos_deg(e->direction, &bs, &bc);
		while (st->emitted < st->total && stream_time(e, st->emitted) <= t) {
			double age = t - stream_time(e, st->emitted);
			double ds, dc;
			tp_sincos_deg(e->direction + e->spread * (tp_rng_unit(&st->rng) - 0.5), &ds, &dc);
			double ux = e->speed * dc, uy = e->speed * ds;
			/* alternate rows shifted by half a slot: a hexagonal packing */
			long row = st->emitted / st->slots;
			int slot = (int)(st->emitted % st->slots);
			double off = (slot - 0.5 * (st->slots - 1) + ((row & 1) ? 0.25 : -0.25)) * st->lateral;
			double x = e->at[0] - s->org_x - off * bs + ux * age;
			double y = e->at[1] - s->org_y + off * bc + uy * age;
			double lvx = ux - s->tank_vx, lvy = uy - s->tank_vy, nx, ny;
			if (s->turning) {
				frame_to_local(&s->fr, e->at[0] - off * bs + ux * age,
					       e->at[1] + off * bc + uy * age, &x, &y);
				frame_vel(&s->fr, x, y, ux, uy, &lvx, &lvy);
				frame_to_local(&s->fr, e->at[0], e->at[1], &nx, &ny);
			} else {
				nx = e->at[0] - s->org_x;
				ny = e->at[1] - s->org_y;
			}
			int before = s->n;
			add_particle(s, x, y, lvx, lvy);
			st->emitted++;
			if (c && s->n > before) {
				int i = s->n - 1;
				sph_collide(s, c, (float)nx, (float)ny, &s->x[i], &s->y[i], &s->vx[i], &s->vy[i]);
			}
		}
	}
}

/* ---- obstacles ---- */

/* Obstacle b from a world pose into the tank frame whose origin is (ox, oy); the
 * scene's angle is counter-clockwise on screen (+y down), so the local x axis is
 * (cos a, -sin a). Half extents grow by half a spacing: particles are blobs. */
void sph_obst_from_pose(const sph *s, int b, const tp_box_pose *p, double ox, double oy,
			   double tvx, double tvy, const sph_frame *f, sph_obst *o, double *angle)
{
	const scene_box *sb = &s->sc->boxes[b];
	double sn, cs;
	if (f) {
		/* angles add: the box's angle in the frame is its own less the tank's */
		double lx, ly, ux, uy, a = p->angle - f->deg;
		frame_to_local(f, p->x, p->y, &lx, &ly);
		frame_vel(f, lx, ly, p->vx, p->vy, &ux, &uy);
		tp_sincos_deg(a, &sn, &cs);
		o->cx = (float)lx;
		o->cy = (float)ly;
		o->cos_a = (float)cs;
		o->sin_a = (float)-sn;
		o->hx = (float)(0.5 * sb->size[0] + 0.5 * s->spacing_f);
		o->hy = (float)(0.5 * sb->size[1] + 0.5 * s->spacing_f);
		o->vx = (float)ux;
		o->vy = (float)uy;
		*angle = a;
		return;
	}
	tp_sincos_deg(p->angle, &sn, &cs);
	o->cx = (float)(p->x - ox);
	o->cy = (float)(p->y - oy);
	o->cos_a = (float)cs;
	o->sin_a = (float)-sn;
	o->hx = (float)(0.5 * sb->size[0] + 0.5 * s->spacing_f);
	o->hy = (float)(0.5 * sb->size[1] + 0.5 * s->spacing_f);
	o->vx = (float)(p->vx - tvx);
	o->vy = (float)(p->vy - tvy);
	*angle = p->angle;
}

/* Pose at fraction f of the step, interpolated in the tank frame. */
void sph_obst_lerp(const sph *s, const double *a0, const double *a1, double f, sph_obst *out)
{
	for (int b = 0; b < s->nobst; b++) {
		const sph_obst *p = &s->obst_prev[b], *q = &s->obst_cur[b];
		double sn, cs;
		tp_sincos_deg(a0[b] + f * (a1[b] - a0[b]), &sn, &cs);
		out[b] = *q;
		out[b].cx = (float)(p->cx + f * (q->cx - p->cx));
		out[b].cy = (float)(p->cy + f * (q->cy - p->cy));
		out[b].cos_a = (float)cs;
		out[b].sin_a = (float)-sn;
	}
}


void sph_world_to_local(const sph *s, double wx, double wy, double *lx, double *ly)
{
	if (s->turning) {
		frame_to_local(&s->fr, wx, wy, lx, ly);
	} else {
		*lx = wx - s->org_x;
		*ly = wy - s->org_y;
	}
}
