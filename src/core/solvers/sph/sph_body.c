/*
 * sph_body.c - floating boxes in the sph solver: rigid bodies coupled both ways with the
 * fluid (docs/sph.md, "Floating bodies").
 *
 * The method is Akinci et al. 2012 ("Versatile rigid-fluid coupling for incompressible
 * SPH"): a body's surface is a layer of boundary samples that add to the density of the
 * fluid near it and push that fluid with the fluid's own pressure, and the body receives
 * every such push back, equal and opposite, as a force and a torque. Here the layer is not
 * sampled with particles: it is integrated once into the tables the tank walls already
 * use (sph_wall_tables: the density, near density and pressure push that the fluid
 * missing beyond a flat face gives a particle at distance d), applied face by face of the
 * box. That is Akinci's boundary sum in the continuum limit, without boundary particles to
 * sort, so scenes without floating boxes run exactly the code they ran before. On top,
 * the hard containment every obstacle has (no particle inside a box after any substep)
 * moves particles out of the box; the momentum that gives them is taken from the body
 * too (LiquidFun-style particle-body contact impulses). The body integrates gravity, the
 * tank frame's forces and these, collides with the tank walls (impulses at its corners,
 * with friction), and with the other bodies (corner against face, the same impulses).
 *
 * Order within a substep (relaxed model; the seed model refuses floating boxes): the
 * bodies move with the forces of the previous substep, the fluid is predicted, its
 * density gets the bodies' ghost density, the ghost pushes are computed (and summed onto
 * the bodies, in particle order, so the sums do not depend on the thread count), the
 * relaxation pass adds them and pushes particles out of the bodies at their new pose, and
 * those push-outs are summed onto the bodies as contact impulses.
 *
 * Units: the tank frame's px and s; particles have unit mass, a body of density rho has
 * rho * area * n0 of them (n0 = particles per px^2 of the resting lattice).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/sph/sph_impl.h"
#include "util/trig.h"

/* Coulomb friction of a body's corner against a tank wall or another body. */
#define BODY_WALL_FRICTION 0.3
/* Rounds of the walls' and the bodies' contacts in each substep (overlaps they push into
 * each other settle in the next round). */
#define BODY_CONTACT_ROUNDS 2
/* A push-out within this many spacings of a body's grown face was that body's contact. */
#define BODY_CONTACT_TOL 0.05f

int sph_bodies_init(sph *s, tp_err *err)
{
	const scene *sc = s->sc;
	s->nfloat = 0;
	for (int b = 0; b < sc->nboxes; b++)
		s->nfloat += sc->boxes[b].floating != 0;
	if (!s->nfloat)
		return 0;
	for (int b = 0; b < sc->nboxes; b++)
		if (sc->boxes[b].floating && s->model == SPH_MODEL_SEED) {
			char at[48];
			snprintf(at, sizeof at, "boxes[%d].float", b);
			return scene_errf(
				sc, err, TP_EINPUT, at,
				"the sph solver's \"seed\" model has no floating boxes (use "
				"params.model \"relaxed\", the default, or \"implicit\")");
		}
	s->bodies = calloc((size_t)s->nfloat, sizeof *s->bodies);
	if (!s->bodies)
		return tp_errf(err, TP_EIO, "out of memory");
	const double n0 = 1.0 / (SPH_SQRT3_2 * s->spacing * s->spacing);
	for (int b = 0, k = 0; b < sc->nboxes; b++) {
		const scene_box *sb = &sc->boxes[b];
		if (!sb->floating)
			continue;
		sph_body *o = &s->bodies[k++];
		const sph_obst *ob = &s->obst_prev[b];
		o->box = b;
		o->x = ob->cx;
		o->y = ob->cy;
		o->th = atan2(ob->sin_a, ob->cos_a);
		o->hw = 0.5 * sb->size[0];
		o->hh = 0.5 * sb->size[1];
		o->m = sb->density * sb->size[0] * sb->size[1] * n0;
		o->I = o->m * (sb->size[0] * sb->size[0] + sb->size[1] * sb->size[1]) / 12.0;
	}
	return 0;
}

/* Body o as an obstacle (the particle margin added, as sph_obst_from_pose does). */
static void body_obst(const sph *s, const sph_body *o, sph_obst *ob)
{
	ob->cx = (float)o->x;
	ob->cy = (float)o->y;
	ob->cos_a = (float)cos(o->th);
	ob->sin_a = (float)sin(o->th);
	ob->hx = (float)(o->hw + 0.5 * s->spacing_f);
	ob->hy = (float)(o->hh + 0.5 * s->spacing_f);
	ob->vx = (float)o->vx;
	ob->vy = (float)o->vy;
}

/* An impulse j along unit n at offset (rx, ry) from the centre. */
static void body_impulse(sph_body *o, double rx, double ry, double jx, double jy)
{
	o->vx += jx / o->m;
	o->vy += jy / o->m;
	o->w += (rx * jy - ry * jx) / o->I;
}

/* Keeps the body a spacing from the tank's walls (room for a layer of particles): each
 * corner past that line is moved back with the whole body, and its velocity into the wall
 * is removed by an impulse at the corner, with Coulomb friction along the wall. */
static void body_walls(const sph *s, sph_body *o)
{
	const double m = s->spacing_f, lo[2] = {m, m}, hi[2] = {s->W - m, s->H - m};
	for (int iter = 0; iter < BODY_CONTACT_ROUNDS; iter++) {
		const double c = cos(o->th), sn = sin(o->th);
		for (int k = 0; k < 4; k++) {
			double u = (k & 1 ? 1 : -1) * o->hw, v = (k & 2 ? 1 : -1) * o->hh;
			double rx = c * u - sn * v, ry = sn * u + c * v;
			for (int axis = 0; axis < 2; axis++) {
				double p = (axis ? o->y + ry : o->x + rx), pen = 0, nrm = 0;
				if (p < lo[axis])
					pen = lo[axis] - p, nrm = 1;
				else if (p > hi[axis])
					pen = p - hi[axis], nrm = -1;
				if (pen <= 0)
					continue;
				double nx = axis ? 0 : nrm, ny = axis ? nrm : 0;
				o->x += nx * pen;
				o->y += ny * pen;
				/* velocity of the corner, then the impulse that stops it along n */
				double vx = o->vx - o->w * ry, vy = o->vy + o->w * rx;
				double vn = vx * nx + vy * ny;
				if (vn >= 0)
					continue;
				double rn = rx * ny - ry * nx;
				double jn = -vn / (1 / o->m + rn * rn / o->I);
				body_impulse(o, rx, ry, jn * nx, jn * ny);
				double tx = -ny, ty = nx;
				vx = o->vx - o->w * ry, vy = o->vy + o->w * rx;
				double vt = vx * tx + vy * ty, rt = rx * ty - ry * tx;
				double jt = -vt / (1 / o->m + rt * rt / o->I);
				double jmax = BODY_WALL_FRICTION * jn;
				jt = jt > jmax ? jmax : jt < -jmax ? -jmax : jt;
				body_impulse(o, rx, ry, jt * tx, jt * ty);
			}
		}
	}
}

/* The velocity of body o at offset (rx, ry) from its centre. */
static void point_vel(const sph_body *o, double rx, double ry, double *vx, double *vy)
{
	*vx = o->vx - o->w * ry;
	*vy = o->vy + o->w * rx;
}

/* Bodies against each other, a spacing apart (room for a layer of particles): every
 * corner of a inside b grown by that spacing is a contact on b's nearest face. The two
 * are moved apart along its normal (in inverse proportion to their masses) and the
 * corner's approach speed is removed by an impulse, with friction, as for the walls. */
static void body_pair(const sph *s, sph_body *a, sph_body *b)
{
	const double ca = cos(a->th), sa = sin(a->th), cb = cos(b->th), sb = sin(b->th);
	const double gx = b->hw + s->spacing_f, gy = b->hh + s->spacing_f, ima = 1 / a->m,
		     imb = 1 / b->m;
	for (int k = 0; k < 4; k++) {
		double u0 = (k & 1 ? 1 : -1) * a->hw, v0 = (k & 2 ? 1 : -1) * a->hh;
		double px = a->x + ca * u0 - sa * v0, py = a->y + sa * u0 + ca * v0;
		double dx = px - b->x, dy = py - b->y;
		double u = cb * dx + sb * dy, v = -sb * dx + cb * dy;
		double eu = gx - fabs(u), ev = gy - fabs(v);
		if (eu <= 0 || ev <= 0)
			continue;
		double nx, ny, pen;
		if (eu < ev) {
			pen = eu;
			nx = (u < 0 ? -1 : 1) * cb;
			ny = (u < 0 ? -1 : 1) * sb;
		} else {
			pen = ev;
			nx = -(v < 0 ? -1 : 1) * sb;
			ny = (v < 0 ? -1 : 1) * cb;
		}
		const double fa = ima / (ima + imb), fb = imb / (ima + imb);
		a->x += nx * pen * fa;
		a->y += ny * pen * fa;
		b->x -= nx * pen * fb;
		b->y -= ny * pen * fb;
		const double rax = px - a->x, ray = py - a->y, rbx = px - b->x, rby = py - b->y;
		double vax, vay, vbx, vby;
		point_vel(a, rax, ray, &vax, &vay);
		point_vel(b, rbx, rby, &vbx, &vby);
		double vn = (vax - vbx) * nx + (vay - vby) * ny;
		if (vn >= 0)
			continue;
		double ran = rax * ny - ray * nx, rbn = rbx * ny - rby * nx;
		double jn = -vn / (ima + imb + ran * ran / a->I + rbn * rbn / b->I);
		body_impulse(a, rax, ray, jn * nx, jn * ny);
		body_impulse(b, rbx, rby, -jn * nx, -jn * ny);
		const double tx = -ny, ty = nx;
		point_vel(a, rax, ray, &vax, &vay);
		point_vel(b, rbx, rby, &vbx, &vby);
		double vt = (vax - vbx) * tx + (vay - vby) * ty;
		double rat = rax * ty - ray * tx, rbt = rbx * ty - rby * tx;
		double jt = -vt / (ima + imb + rat * rat / a->I + rbt * rbt / b->I);
		double jmax = BODY_WALL_FRICTION * jn;
		jt = jt > jmax ? jmax : jt < -jmax ? -jmax : jt;
		body_impulse(a, rax, ray, jt * tx, jt * ty);
		body_impulse(b, rbx, rby, -jt * tx, -jt * ty);
	}
}

/* The particles that can be within reach of body b's faces: the grid rows and columns
 * its footprint, grown by the kernel radius (and a cell for rounding), covers. The
 * particles are sorted by cell, row-major (sph_sort, which ran this substep), so each row
 * is one contiguous index range, and the ranges come in index order: visiting them is
 * visiting the candidates in particle order, as a loop over every particle would. */
static sph_rows rows_of(const sph *s, const sph_obst *ob)
{
	const sph_k k = sph_consts(s);
	const float ex = fabsf(ob->cos_a) * ob->hx + fabsf(ob->sin_a) * ob->hy + s->R;
	const float ey = fabsf(ob->sin_a) * ob->hx + fabsf(ob->cos_a) * ob->hy + s->R;
	sph_rows r = { .y0 = (int)floorf((ob->cy - ey) * k.fy) - 1,
		       .y1 = (int)floorf((ob->cy + ey) * k.fy) + 1,
		       .x0 = (int)floorf((ob->cx - ex) * k.fx) - 1,
		       .x1 = (int)floorf((ob->cx + ex) * k.fx) + 1 };
	r.y0 = r.y0 < 0 ? 0 : r.y0;
	r.x0 = r.x0 < 0 ? 0 : r.x0;
	r.y1 = r.y1 > k.ncy - 1 ? k.ncy - 1 : r.y1;
	r.x1 = r.x1 > k.ncx - 1 ? k.ncx - 1 : r.x1;
	return r;
}

void sph_bodies_move(sph *s, const sph_sub *c, sph_obst *sub0, sph_obst *sub1)
{
	const double dt = c->dt;
	for (int k = 0; k < s->nfloat; k++) {
		sph_body *o = &s->bodies[k];
		body_obst(s, o, &sub0[o->box]);
		/* gravity and the tank frame, as the particles feel them, at the centre */
		double ax = c->ax, ay = c->ay;
		if (c->rot) {
			const double rx = o->x - c->hw, ry = o->y - c->hh, om = c->om;
			ax += om * om * rx + 2 * om * o->vy + c->al * ry;
			ay += om * om * ry - 2 * om * o->vx - c->al * rx;
		}
		o->vx += dt * (ax + o->fx / o->m);
		o->vy += dt * (ay + o->fy / o->m);
		o->w += dt * (o->tq / o->I - (c->rot ? c->al : 0));
		o->x += dt * o->vx;
		o->y += dt * o->vy;
		o->th += dt * o->w;
		body_walls(s, o);
		o->fx = o->fy = o->tq = 0;
	}
	/* contacts between bodies, pairs in scene order, both ways, then the walls again */
	for (int iter = 0; iter < BODY_CONTACT_ROUNDS && s->nfloat > 1; iter++) {
		for (int i = 0; i < s->nfloat; i++)
			for (int j = i + 1; j < s->nfloat; j++) {
				body_pair(s, &s->bodies[i], &s->bodies[j]);
				body_pair(s, &s->bodies[j], &s->bodies[i]);
			}
		for (int k = 0; k < s->nfloat; k++)
			body_walls(s, &s->bodies[k]);
	}
	for (int k = 0; k < s->nfloat; k++) {
		body_obst(s, &s->bodies[k], &sub1[s->bodies[k].box]);
		s->bodies[k].rows = rows_of(s, &sub1[s->bodies[k].box]);
	}
}

/* The face of obstacle ob nearest to a particle within reach of its ghost: the ghost's
 * distance d and the face's outward normal. Returns 0 if none is in reach (or the
 * particle is off the ends of every face: corners get no ghost, as the tank's corners
 * get two).
 *
 * Where the missing fluid starts: the particles stop at the grown face, half a spacing
 * out from the box; the body's boundary layer (Akinci's samples) is taken half a spacing
 * inside it, so d = the distance from the grown face + one spacing `gap`. Measured from
 * the grown face itself, the ghosts hold the fluid a spacing off the box and floating
 * boxes ride 2-6 px high (a third of the draft at density 0.25; docs/sph.md). */
static int near_face(const sph_obst *ob, float R, float gap, float x, float y, float *d, float *nx,
		     float *ny)
{
	float dx = x - ob->cx, dy = y - ob->cy;
	float u = ob->cos_a * dx + ob->sin_a * dy, v = -ob->sin_a * dx + ob->cos_a * dy;
	float du = fabsf(u) - ob->hx, dv = fabsf(v) - ob->hy;
	if (du + gap >= R || dv + gap >= R || (du > 0 && dv > 0))
		return 0;
	if (du >= dv) { /* an x face (also when inside, the nearer one) */
		float sg = u < 0 ? -1.0f : 1.0f;
		*d = (du > 0 ? du : 0) + gap;
		*nx = sg * ob->cos_a;
		*ny = sg * ob->sin_a;
	} else {
		float sg = v < 0 ? -1.0f : 1.0f;
		*d = (dv > 0 ? dv : 0) + gap;
		*nx = -sg * ob->sin_a;
		*ny = sg * ob->cos_a;
	}
	return 1;
}

/* for (i over the candidates of body rows r, in particle order) */
#define FOR_CANDIDATES(s, r, i)                                                                    \
	for (int row_ = (r).y0; row_ <= (r).y1 && (r).x0 <= (r).x1; row_++)                        \
		for (int i = (s)->cell_start[row_ * (s)->ncx + (r).x0],                            \
			 end_ = (s)->cell_start[row_ * (s)->ncx + (r).x1 + 1];                     \
		     i < end_; i++)
/* ... and over those of them in [i0, i1) (a thread's own particles) */
#define FOR_CANDIDATES_IN(s, r, i0, i1, i)                                                         \
	for (int row_ = (r).y0; row_ <= (r).y1 && (r).x0 <= (r).x1; row_++)                        \
		for (int i = imax((s)->cell_start[row_ * (s)->ncx + (r).x0], (i0)),                \
			 end_ = imin((s)->cell_start[row_ * (s)->ncx + (r).x1 + 1], (i1));         \
		     i < end_; i++)

/* Called by the density pass on each thread's own particles [i0, i1): of them, the
 * candidates of each body in turn, so each particle gets the bodies' ghosts in body order. */
void sph_bodies_density(sph *s, const sph_sub *c, int i0, int i1)
{
	const float ws = (float)SPH_WALL_N * s->invR, R = s->R, gap = s->spacing_f;
	for (int b = 0; b < s->nfloat; b++) {
		const sph_obst *ob = &c->cur[s->bodies[b].box];
		const sph_rows r = s->bodies[b].rows;
		FOR_CANDIDATES_IN(s, r, i0, i1, i)
		{
			float d, nx, ny;
			if (!near_face(ob, R, gap, s->x[i], s->y[i], &d, &nx, &ny))
				continue;
			s->rho[i] += wall_lookup(s->wall_rho, d, ws);
			s->rhon[i] += wall_lookup(s->wall_rhon, d, ws);
		}
	}
}

void sph_bodies_push(sph *s, const sph_sub *c)
{
	const float ws = (float)SPH_WALL_N * s->invR, R = s->R, gap = s->spacing_f;
	/* bfx, bfy are zero here: allocated so, and relax_finish clears what it adds */
	/* each push on a particle and, reversed, on its body: the bodies' sums run in particle
	 * order (the same bits at any thread count) */
	for (int b = 0; b < s->nfloat; b++) {
		sph_body *o = &s->bodies[b];
		const sph_obst *ob = &c->cur[o->box];
		const sph_rows r = o->rows;
		FOR_CANDIDATES(s, r, i)
		{
			float d, nx, ny;
			if (!near_face(ob, R, gap, s->x[i], s->y[i], &d, &nx, &ny))
				continue;
			const float Pp = ghost_p(s, s->p[i], s->pn[i]), Pnf = 2 * s->pn[i];
			const float a =
				Pp * wall_lookup(s->wall_f, d, ws) + Pnf * wall_lookup(s->wall_fn, d, ws);
			if (a == 0)
				continue;
			s->bfx[i] += a * nx;
			s->bfy[i] += a * ny;
			const double fx = -(double)a * nx, fy = -(double)a * ny, rx = s->x[i] - o->x,
				     ry = s->y[i] - o->y;
			o->fx += fx;
			o->fy += fy;
			o->tq += rx * fy - ry * fx;
		}
	}
}

static void contacts_range(sph *s, const sph_sub *c, double idt2, int i0, int i1);

/* relax_finish flagged the blocks of SPH_CONTACT_BLOCK particles that have a push-out;
 * they are visited in particle order, and their flags and push-outs cleared for the next
 * substep. */
void sph_bodies_contacts(sph *s, const sph_sub *c)
{
	const double idt2 = 1.0 / ((double)c->dt * c->dt);
	for (int g = 0; g * SPH_CONTACT_BLOCK < s->n; g++) {
		if (!s->cflag[g])
			continue;
		s->cflag[g] = 0;
		const int i0 = g * SPH_CONTACT_BLOCK;
		const int i1 = i0 + SPH_CONTACT_BLOCK < s->n ? i0 + SPH_CONTACT_BLOCK : s->n;
		contacts_range(s, c, idt2, i0, i1);
		memset(s->cdx + i0, 0, (size_t)(i1 - i0) * sizeof *s->cdx);
		memset(s->cdy + i0, 0, (size_t)(i1 - i0) * sizeof *s->cdy);
	}
}

/* The contact impulses of particles [i0, i1), in particle order. */
static void contacts_range(sph *s, const sph_sub *c, double idt2, int i0, int i1)
{
	for (int i = i0; i < i1; i++) {
		if (s->cdx[i] == 0 && s->cdy[i] == 0)
			continue;
		/* the body whose (grown) face the particle was put on */
		int best = -1;
		float bestd = BODY_CONTACT_TOL * s->spacing_f;
		for (int b = 0; b < s->nfloat; b++) {
			const sph_obst *ob = &c->cur[s->bodies[b].box];
			float dx = s->x[i] - ob->cx, dy = s->y[i] - ob->cy;
			float u = ob->cos_a * dx + ob->sin_a * dy;
			float v = -ob->sin_a * dx + ob->cos_a * dy;
			float e = fmaxf(fabsf(u) - ob->hx, fabsf(v) - ob->hy);
			if (fabsf(e) <= bestd) {
				bestd = fabsf(e);
				best = b;
			}
		}
		if (best < 0)
			continue;
		sph_body *o = &s->bodies[best];
		/* the particle gained cd / dt of velocity (unit mass): the body loses it */
		const double fx = -s->cdx[i] * idt2, fy = -s->cdy[i] * idt2;
		const double rx = s->x[i] - o->x, ry = s->y[i] - o->y;
		o->fx += fx;
		o->fy += fy;
		o->tq += rx * fy - ry * fx;
	}
}

void sph_bodies_poses(sph *s)
{
	for (int k = 0; k < s->nfloat; k++) {
		const sph_body *o = &s->bodies[k];
		tp_box_pose *p = &s->poses[o->box];
		double ang = -o->th * (180 / SPH_PI), vx = o->vx, vy = o->vy;
		if (s->turning) {
			frame_to_world(&s->fr, o->x, o->y, &p->x, &p->y);
			ang += s->tang;
		} else {
			p->x = o->x + s->org_x;
			p->y = o->y + s->org_y;
			vx += s->tank_vx;
			vy += s->tank_vy;
		}
		p->angle = ang;
		p->vx = vx;
		p->vy = vy;
		p->tilt[0] = p->tilt[1] = 0;
		p->z = 0;
	}
}

/* Where the implicit model's body ghosts start, in spacings inside the face the particles
 * stop at (half a spacing out from the box): 0.5 is the box's own surface. (0.6 had been
 * chosen while the free surface sat half a row low, sph_iisph_surface: it made up for the
 * light boxes riding high; with the surface held where it belongs it sank boxes 2-4% deep,
 * and 0.5 brought 49 of the Archimedes grid's 54 cells within 5% with half-plane ghosts,
 * 51 with the rectangle's below, docs/sph.md.) */
#define SPH_II_GAP 0.5f

/*
 * The implicit model (sph_iisph.c). A body's ghosts are the fluid missing inside the box
 * (from SPH_II_GAP inside the face the particles stop at: the box's own surface), at the
 * lattice's density, with the particle's own pressure:
 *     rho_i += rho_b = c Int_box W dA,   G_b,i += gk c Int_box q (r / |r|) dA,
 *     vbg_i += v_b . G_b                 (c = rho0 / Int_plane W dA: the lattice's density)
 * and the body receives the reverse of the ghosts' pressure push on each particle,
 *     F = sum_i (p_i / rho0^2) G_b,i   (torque about its centre likewise),
 * summed in particle order after the solve. The integrals are over the box's rectangle
 * within R of the particle, from quadrant tables (sph_box_tables): a face's ghost ends
 * where the face does, so a particle under a box's edge does not count the water beside
 * the box twice, and one off a corner gets the corner's.
 */
void sph_box_tables(sph *s)
{
	enum { N = SPH_BOX_N, SUB = 8 };
	const double R = s->R, h = 2 * R / N, hs = h / SUB;
	const double c = s->rho0 / (SPH_PI * R * R / 6); /* Int over the plane of q^2 = pi R^2/6 */
	double w[N + 1][N + 1], wx[N + 1][N + 1]; /* suffix sums: 66 KB of stack */
	for (int i = N; i >= 0; i--)
		for (int j = N; j >= 0; j--) {
			double v = 0, vx = 0;
			if (i < N && j < N) {
				/* cell (i, j), SUB x SUB midpoints */
				for (int a = 0; a < SUB; a++)
					for (int b = 0; b < SUB; b++) {
						const double x = -R + i * h + (a + 0.5) * hs;
						const double y = -R + j * h + (b + 0.5) * hs;
						const double r = sqrt(x * x + y * y);
						if (r < R) {
							const double q = 1 - r / R;
							v += q * q * hs * hs;
							vx += q * x / r * hs * hs;
						}
					}
				v += w[i + 1][j] + w[i][j + 1] - w[i + 1][j + 1];
				vx += wx[i + 1][j] + wx[i][j + 1] - wx[i + 1][j + 1];
			}
			w[i][j] = v;
			wx[i][j] = vx;
		}
	for (int i = 0; i <= N; i++)
		for (int j = 0; j <= N; j++) {
			s->bq[i][j] = (float)(c * w[i][j]);
			s->bqx[i][j] = (float)(c * s->gk * wx[i][j]);
		}
}

/* A quadrant table at (a, b), bilinear. */
static inline float quad(const float t[SPH_BOX_N + 1][SPH_BOX_N + 1], float a, float b, float k)
{
	float fa = (a * k + 1) * (0.5f * SPH_BOX_N), fb = (b * k + 1) * (0.5f * SPH_BOX_N);
	fa = fa < 0 ? 0 : fa > SPH_BOX_N ? SPH_BOX_N : fa;
	fb = fb < 0 ? 0 : fb > SPH_BOX_N ? SPH_BOX_N : fb;
	int i = (int)fa, j = (int)fb;
	i = i >= SPH_BOX_N ? SPH_BOX_N - 1 : i;
	j = j >= SPH_BOX_N ? SPH_BOX_N - 1 : j;
	const float u = fa - i, v = fb - j;
	return (1 - u) * ((1 - v) * t[i][j] + v * t[i][j + 1]) +
	       u * ((1 - v) * t[i + 1][j] + v * t[i + 1][j + 1]);
}

/* The ghost of obstacle ob at a particle at (x, y): its density (returned) and gradient
 * (gx, gy); 0 if the box is beyond R. */
static float box_ghost(const sph *s, const sph_obst *ob, float gap, float x, float y, float *gx,
		       float *gy)
{
	const float R = s->R, k = s->invR, dx = x - ob->cx, dy = y - ob->cy;
	const float u = ob->cos_a * dx + ob->sin_a * dy, v = -ob->sin_a * dx + ob->cos_a * dy;
	const float hx = ob->hx - gap, hy = ob->hy - gap; /* the box's own half extents */
	if (fabsf(u) - hx >= R || fabsf(v) - hy >= R)
		return 0;
	/* the box relative to the particle, in the box's frame: [x0, x1] x [y0, y1] */
	const float x0 = -hx - u, x1 = hx - u, y0 = -hy - v, y1 = hy - v;
	const float rho = quad(s->bq, x0, y0, k) - quad(s->bq, x1, y0, k) -
			  quad(s->bq, x0, y1, k) + quad(s->bq, x1, y1, k);
	const float ex = quad(s->bqx, x0, y0, k) - quad(s->bqx, x1, y0, k) -
			 quad(s->bqx, x0, y1, k) + quad(s->bqx, x1, y1, k);
	const float ey = quad(s->bqx, y0, x0, k) - quad(s->bqx, y0, x1, k) -
			 quad(s->bqx, y1, x0, k) + quad(s->bqx, y1, x1, k);
	*gx = ob->cos_a * ex - ob->sin_a * ey;
	*gy = ob->sin_a * ex + ob->cos_a * ey;
	return rho;
}

void sph_bodies_ghosts(sph *s, const sph_sub *c, int i0, int i1)
{
	const float gap = SPH_II_GAP * s->spacing_f;
	for (int b = 0; b < s->nfloat; b++) {
		const sph_body *o = &s->bodies[b];
		const sph_obst *ob = &c->cur[o->box];
		const sph_rows r = o->rows;
		FOR_CANDIDATES_IN(s, r, i0, i1, i)
		{
			float gx, gy;
			const float rho = box_ghost(s, ob, gap, s->x[i], s->y[i], &gx, &gy);
			if (rho <= 0)
				continue;
			const float rx = s->x[i] - (float)o->x, ry = s->y[i] - (float)o->y;
			const float vbx = (float)o->vx - (float)o->w * ry;
			const float vby = (float)o->vy + (float)o->w * rx;
			s->rho[i] += rho;
			s->gbx[i] += gx;
			s->gby[i] += gy;
			s->vbg[i] += gx * vbx + gy * vby;
		}
	}
}

void sph_bodies_pressure(sph *s, const sph_sub *c)
{
	const float gap = SPH_II_GAP * s->spacing_f;
	const double ir02 = 1.0 / ((double)s->rho0 * s->rho0);
	for (int b = 0; b < s->nfloat; b++) {
		sph_body *o = &s->bodies[b];
		const sph_obst *ob = &c->cur[o->box];
		const sph_rows r = o->rows;
		FOR_CANDIDATES(s, r, i)
		{
			float gx, gy;
			if (s->p[i] <= 0 || box_ghost(s, ob, gap, s->x[i], s->y[i], &gx, &gy) <= 0)
				continue;
			const double fx = gx * s->p[i] * ir02, fy = gy * s->p[i] * ir02;
			const double rx = s->x[i] - o->x, ry = s->y[i] - o->y;
			o->fx += fx;
			o->fy += fy;
			o->tq += rx * fy - ry * fx;
		}
	}
}
