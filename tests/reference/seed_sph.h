/*
 * seed_sph.h - a plain, single-threaded port of seed 004's particle loop: particles as
 * structs with neighbour lists, the O(N^2) "handshake" search (j < i, each pair found
 * once and added to both), density with (1 - d/R)^2, pressure k (rho - rho0) with the
 * density floored at rho0, the pair pressure and viscosity forces over the neighbour
 * lists, gravity, wall springs. It is the oracle of the solver's "seed" model in
 * tests/test_sph.c and the baseline of `make bench`, not production code.
 *
 * Departures from the seed, all needed to compare it with the solver:
 *  - px and s instead of per-frame units: forces are accelerations, the seed's per-frame
 *    `v += f; x += v` becomes v += dt a, x += dt v, and the wall spring (the seed's
 *    `vx += 4 - x`, stiffness 1 per frame) an acceleration k_w * penetration;
 *  - the tank is [0, W] x [0, H] with the springs acting inside a margin, and positions
 *    are clamped 0.01 px inside it (velocity into the wall dropped), as in the solver;
 *  - a neighbour list holds at most SEED_SPH_MAX_NB entries; extra neighbours are counted
 *    in `overflow` (a test asserts it stays 0).
 */
#ifndef TP_TESTS_SEED_SPH_H
#define TP_TESTS_SEED_SPH_H

#define SEED_SPH_MAX_NB 256

/* A particle as the seed's objects hold it; its neighbour list lives in a separate array
 * (as an AS3 object holds a reference), so the particles themselves stay compact. */
typedef struct seed_sph_particle {
	float x, y, vx, vy, fx, fy;
	float density, pressure;
	int num_neighbors;
	int *neighbors; /* SEED_SPH_MAX_NB entries */
} seed_sph_particle;

typedef struct seed_sph {
	int n;
	seed_sph_particle *p;
	int *nb_pool;
	float range, density, stiffness, viscosity, gravity, wall_k, margin, w, h;
	long overflow;
} seed_sph;

/* n particles at positions xy[2i], xy[2i+1] (px), at rest. Returns 0 or -1 (no memory). */
int seed_sph_init(seed_sph *s, int n, const float *xy, float range, float rest_density,
		  float stiffness, float viscosity, float gravity, float wall_k, float margin,
		  float w, float h);
void seed_sph_free(seed_sph *s);
/* One step of dt seconds with extra acceleration (ax, ay) (the tank's, negated). */
void seed_sph_step(seed_sph *s, float dt, float ax, float ay);

#endif
