/* seed_sph.c - seed 004's particle loop, ported as written (see seed_sph.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/seed_sph.h"

int seed_sph_init(seed_sph *s, int n, const float *xy, float range, float rest_density,
		  float stiffness, float viscosity, float gravity, float wall_k, float margin,
		  float w, float h)
{
	memset(s, 0, sizeof *s);
	s->p = calloc((size_t)n + 1, sizeof *s->p);
	s->nb_pool = malloc(((size_t)n + 1) * SEED_SPH_MAX_NB * sizeof *s->nb_pool);
	if (!s->p || !s->nb_pool) {
		seed_sph_free(s);
		return -1;
	}
	s->n = n;
	for (int i = 0; i < n; i++) {
		s->p[i].x = xy[2 * i];
		s->p[i].y = xy[2 * i + 1];
		s->p[i].neighbors = s->nb_pool + (size_t)i * SEED_SPH_MAX_NB;
	}
	s->range = range;
	s->density = rest_density;
	s->stiffness = stiffness;
	s->viscosity = viscosity;
	s->gravity = gravity;
	s->wall_k = wall_k;
	s->margin = margin;
	s->w = w;
	s->h = h;
	return 0;
}

void seed_sph_free(seed_sph *s)
{
	free(s->p);
	free(s->nb_pool);
	s->p = NULL;
	s->nb_pool = NULL;
}

static void add_neighbor(seed_sph *s, seed_sph_particle *a, int j)
{
	if (a->num_neighbors < SEED_SPH_MAX_NB)
		a->neighbors[a->num_neighbors++] = j;
	else
		s->overflow++;
}

void seed_sph_step(seed_sph *s, float dt, float ax, float ay)
{
	const float RANGE = s->range, RANGE2 = RANGE * RANGE, DENSITY = s->density;
	/* density: every pair once (j < i), added to both */
	for (int i = 0; i < s->n; i++) {
		seed_sph_particle *pi = &s->p[i];
		pi->num_neighbors = 0;
		pi->density = 0;
		for (int j = 0; j < i; j++) {
			seed_sph_particle *pj = &s->p[j];
			float dist = (pi->x - pj->x) * (pi->x - pj->x) + (pi->y - pj->y) * (pi->y - pj->y);
			if (dist < RANGE2) {
				dist = sqrtf(dist);
				float weight = (1 - dist / RANGE) * (1 - dist / RANGE);
				pi->density += weight;
				pj->density += weight;
				add_neighbor(s, pi, j);
				add_neighbor(s, pj, i);
			}
		}
	}
	/* pressure */
	for (int i = 0; i < s->n; i++) {
		seed_sph_particle *pi = &s->p[i];
		if (pi->density < DENSITY)
			pi->density = DENSITY;
		pi->pressure = s->stiffness * (pi->density - DENSITY);
	}
	/* forces over the neighbour lists */
	for (int i = 0; i < s->n; i++) {
		seed_sph_particle *pi = &s->p[i];
		pi->fx = 0;
		pi->fy = 0;
		for (int k = 0; k < pi->num_neighbors; k++) {
			seed_sph_particle *pj = &s->p[pi->neighbors[k]];
			float dx = pi->x - pj->x, dy = pi->y - pj->y;
			float dist = sqrtf(dx * dx + dy * dy);
			if (dist <= 0)
				continue;
			float weight = 1 - dist / RANGE;
			float pressure = weight * (pi->pressure + pj->pressure) / (2 * pj->density);
			dist = 1 / dist;
			pi->fx += dx * dist * pressure;
			pi->fy += dy * dist * pressure;
			float viscosity = weight / pj->density * s->viscosity;
			pi->fx -= (pi->vx - pj->vx) * viscosity;
			pi->fy -= (pi->vy - pj->vy) * viscosity;
		}
	}
	/* external forces (gravity, the bottle), wall springs, move */
	const float m = s->margin;
	for (int i = 0; i < s->n; i++) {
		seed_sph_particle *pi = &s->p[i];
		float fx = pi->fx + ax, fy = pi->fy + ay + s->gravity;
		if (pi->x < m)
			fx += s->wall_k * (m - pi->x);
		if (pi->y < m)
			fy += s->wall_k * (m - pi->y);
		if (pi->x > s->w - m)
			fx += s->wall_k * (s->w - m - pi->x);
		if (pi->y > s->h - m)
			fy += s->wall_k * (s->h - m - pi->y);
		pi->vx += dt * fx;
		pi->vy += dt * fy;
		pi->x += dt * pi->vx;
		pi->y += dt * pi->vy;
		const float eps = 0.01f;
		if (pi->x < eps || pi->x > s->w - eps) {
			pi->x = pi->x < eps ? eps : s->w - eps;
			pi->vx = 0;
		}
		if (pi->y < eps || pi->y > s->h - eps) {
			pi->y = pi->y < eps ? eps : s->h - eps;
			pi->vy = 0;
		}
	}
}
