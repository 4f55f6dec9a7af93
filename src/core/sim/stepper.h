/*
 * stepper.h - drives a solver through a scene's timeline, frame by frame.
 *
 * Frame k shows time k/fps. Frame 0 is the initial state plus every event at t <= 0;
 * each later frame runs scene->substeps solver steps of dt = 1/(fps*substeps). Before a
 * step covering (t0, t1] the stepper applies the scene's drops with t in that interval,
 * the rain emitters' random drops for it (one PCG32 stream per emitter, seeded from the
 * scene seed, so rain is the same on every run and thread count), and hands the solver the
 * kinematic box and tank poses at t1. The stepper owns the solver instance.
 */
#ifndef TP_SIM_STEPPER_H
#define TP_SIM_STEPPER_H

#include <stdio.h>

#include "scene/scene.h"
#include "solvers/solver.h"
#include "util/error.h"

typedef struct stepper stepper;

int stepper_create(const scene *sc, int threads, stepper **out, tp_err *err);
void stepper_destroy(stepper *st);
/* Advances to the next frame (the first call produces frame 0). */
int stepper_next(stepper *st, tp_err *err);
int stepper_frame(const stepper *st); /* frame now shown, -1 before the first call */
double stepper_time(const stepper *st);
void stepper_surface(stepper *st, tp_surface *out);
/* 1 if the solver says the surface of the frame just stepped need not be made. */
int stepper_surface_optional(const stepper *st);
void stepper_stats(const stepper *st, tp_stats *out);
solver *stepper_solver(stepper *st);
/* From now on, stepper_next() checks *flag between solver steps (and solvers with long
 * steps between their substeps, tp_step_in.cancel) and returns TP_EINTR once it is
 * nonzero, mid-frame: the stepper is then only good for destroying. NULL: never. */
void stepper_set_cancel(stepper *st, const volatile sig_atomic_t *flag);

/* Checkpoints (sim/ckpt.h): the stepper's own state - frame, global step count, next
 * scheduled drop, every rain stream, box poses - then the solver's section. Loading
 * into a fresh stepper of the same scene continues bit for bit. Errors: TP_EIO (write,
 * truncated file), TP_EINPUT (a section for another scene or solver). */
int stepper_save(const stepper *st, FILE *f, tp_err *err);
int stepper_load(stepper *st, FILE *f, tp_err *err);

#endif
