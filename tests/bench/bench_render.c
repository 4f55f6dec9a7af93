/*
 * bench_render.c - the colour renderer at 1920x1080 and 3840x2160 (refraction, reflection, tint,
 * highlight, bilinear sampling; all threads) against seed 000's nearest-pixel render loop
 * (tests/reference/seed_render.c, one thread) on the same ripple field. The two alternate
 * in ROUNDS rounds of ROUND_S seconds and each keeps its best, so both see the same
 * machine load. The first row draws with render.antialias off (the kernel alone); the
 * second with it on (the scenes' default, refract_aa.c), against the first in the same
 * rounds. At 1920x1080 two more rows draw with anti-aliasing on at the vector levels 2
 * (AVX2) and 3 (AVX-512 where the CPU has it) against level 0 (plain C), in rounds of
 * their own.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "reference/reference_render.h"
#include <stdio.h>

#include "render/render.h"
#include "solvers/solver.h"
#include "util/cpu.h"

enum { ROUNDS = 4 };
#define ROUND_S 0.5

/* Frames per second of one round of ROUND_S seconds drawing s with r, or best if higher. */
static double round_fps(render_ctx *r, const tp_surface *s, tp_image *out, double best)
{
	int n = 0;
	double t0 = bench_now(), el;
	do {
		render_frame(r, s, out);
		n++;
	} while ((el = bench_now() - t0) < ROUND_S);
	return n / el > best ? n / el : best;
}

static const tp_solver_kind bench_solver = {.name = "bench", .caps = TP_SOLVER_HEIGHTFIELD};

static void run_size(const int W, const int H)
{
	int32_t *hi = malloc(sizeof *hi * W * H);
	uint8_t *bgp = malloc(3 * W * H), *ref_out = malloc(3 * W * H);
	/* Concentric ripples of amplitude 512 (two drops' worth in int units). */
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			double r = hypot(x - 700.0, y - 500.0);
			hi[y * W + x] = (int32_t)lrint(512 * sin(r / 9.0) * exp(-r / 600.0));
		}
	scene sc;
	memset(&sc, 0, sizeof sc);
	sc.path = "bench";
	sc.width = W;
	sc.height = H;
	sc.solver = &bench_solver;
	sc.render = (scene_render){.mode = SCENE_MODE_COLOR,
				   .refraction = 1,
				   .reflection = 1,
				   .tint = {0.1, 0.4, 0.65},
				   .tint_strength = 0.15,
				   .specular = 0.6};
	sc.background.pattern = SCENE_PATTERN_TILES;
	sc.background.scale = 32;
	memcpy(sc.background.color, (uint8_t[2][3]){{220, 235, 240}, {40, 90, 120}}, 6);
	render_ctx *r;
	tp_err err;
	if (render_create(&sc, SCENE_MODE_COLOR, &r, &err) < 0)
		return;
	tp_image out;
	tp_image_alloc(&out, W, H, TP_RGB8);
	tp_surface s = {.kind = TP_SURFACE_HEIGHT,
			.w = W,
			.h = H,
			.type = TP_SAMPLE_I32,
			.data = hi,
			.stride = W,
			.scale = 1.0f / 256};
	for (int i = 0; i < W * H * 3; i++)
		bgp[i] = (uint8_t)(i * 7);

	scene sca = sc; /* a renderer reads its scene as it draws */
	sca.render.antialias = 1;
	render_ctx *ra;
	if (render_create(&sca, SCENE_MODE_COLOR, &ra, &err) < 0) {
		render_destroy(r);
		return;
	}
	double fps = 0, ref_fps = 0, aa_fps = 0;
	for (int k = 0; k < ROUNDS; k++) {
		fps = round_fps(r, &s, &out, fps);
		aa_fps = round_fps(ra, &s, &out, aa_fps);
		int m = 0;
		double t0 = bench_now(), el;
		do {
			ref_seed_render(hi, bgp, ref_out, W, H);
			m++;
		} while ((el = bench_now() - t0) < ROUND_S);
		ref_fps = m / el > ref_fps ? m / el : ref_fps;
	}

	char label[64];
	snprintf(label, sizeof label, "render color %dx%d (%d thr)", W, H, omp_get_max_threads());
	bench_row(label, "frames/s", fps, "fps", ref_fps, 1);
	snprintf(label, sizeof label, "  antialias on, %dx%d", W, H);
	bench_row(label, "frames/s vs off", aa_fps, "fps", fps, 1);
	if (W == 1920) {
		/* the anti-aliasing lookups on each vector level (what a CPU has: AVX2 alone
		 * takes the 8-pixel kernel, AVX-512 with VNNI the 16-pixel one) against the
		 * plain loop, the rest of the pass as each level draws it */
		static const int caps[3] = {0, TP_CPU_FLAG_SIMD | TP_CPU_FLAG_AVX2, -1};
		render_ctx *rl[3] = {NULL, NULL, NULL}; /* one a cap: contexts read it once */
		for (int l = 0; l < 3; l++) {
			tp_cpu_force_flags(caps[l]);
			if (render_create(&sca, SCENE_MODE_COLOR, &rl[l], &err) < 0)
				rl[l] = NULL;
		}
		tp_cpu_force_flags(-1);
		double lf[3] = {0, 0, 0};
		for (int k = 0; k < ROUNDS; k++)
			for (int l = 0; l < 3; l++)
				if (rl[l])
					lf[l] = round_fps(rl[l], &s, &out, lf[l]);
		for (int l = 0; l < 3; l++)
			render_destroy(rl[l]);
		bench_row("  antialias on, simd level 2", "frames/s vs level 0", lf[1], "fps", lf[0],
			  1);
		bench_row("  antialias on, simd level 3", "frames/s vs level 0", lf[2], "fps", lf[0],
			  1);
	}
	render_destroy(r);
	render_destroy(ra);
	tp_image_free(&out);
	free(hi);
	free(bgp);
	free(ref_out);
}

static void run(void)
{
	run_size(1920, 1080);
	run_size(3840, 2160);
}

const bench_entry bench_render = {"render", run};
