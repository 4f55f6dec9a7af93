/*
 * loop.h - the surfaces a render writes, frame by frame: the stepper's own frames, or,
 * for a scene with a "loop", a seamless loop cut from a longer simulation.
 *
 * A loop of F frames with a cross-fade of B frames starting S frames in simulates
 * S + F + B frames s[0..]. Output frame j is
 *     s[S + B + j]                                   for j < F - B,
 *     mix(s[S + F + k], s[S + k], (k + 1)/(B + 1))   for j = F - B + k, k < B,
 * so the last frames fade from the simulation's continuation back into the states that
 * lead into frame 0: the sequence wraps around as smoothly as it runs. The mix keeps
 * the blend's variance (measured on both surfaces, deterministically) so waves do not
 * calm down in the middle of the fade. The B early frames are kept in memory (refused
 * above LOOP_MAX_BYTES, with the reason).
 *
 * The loop owns its stepper; without a loop, frames pass straight through.
 */
#ifndef TP_SIM_LOOP_H
#define TP_SIM_LOOP_H

#include <stdio.h>

#include "scene/scene.h"
#include "sim/stepper.h"
#include "solvers/solver.h"
#include "util/error.h"

#define LOOP_MAX_BYTES (2.0 * 1024 * 1024 * 1024)

typedef struct sim_loop sim_loop;

int loop_create(const scene *sc, int threads, sim_loop **out, tp_err *err);
void loop_destroy(sim_loop *lp); /* NULL is a no-op */
/* Advances to the next output frame (the first call gives frame 0) and fills *surf;
 * its pointers stay valid until the next call. */
int loop_next(sim_loop *lp, tp_surface *surf, tp_err *err);
/* Advances one output frame that nobody will look at (a seek passing through): as
 * loop_next, but without making the surface where the solver says it is not needed and
 * there is no loop. The next frames are the same bits either way. */
int loop_pass(sim_loop *lp, tp_err *err);
/* The stepper underneath (time and statistics of the latest simulated frame). */
stepper *loop_stepper(sim_loop *lp);
/* Output frames given so far (the next loop_next() gives this frame). */
int loop_position(const sim_loop *lp);
/* Frames the loop's warm-up simulated in this process (0: none, or loaded from a
 * checkpoint): the summary says its time is included. */
int loop_warmup_frames(const sim_loop *lp);

/* Checkpoints (sim/ckpt.h): the loop's section - output frames given so far and, once
 * the warm-up ran, the B saved early frames of the cross-fade - then the stepper's. */
int loop_save(const sim_loop *lp, FILE *f, tp_err *err);
int loop_load(sim_loop *lp, FILE *f, tp_err *err);
/* After loop_load(): the output frame the loaded state continues from (what its
 * checkpoint's header must give), or -1 when the loop's and the stepper's counts
 * disagree. */
int loop_loaded_frame(const sim_loop *lp);

#endif
