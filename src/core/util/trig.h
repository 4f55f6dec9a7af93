/*
 * trig.h - sine and cosine of an angle in degrees with the same bits on every platform.
 *
 * Solvers must not call transcendental libm functions in state updates (DESIGN.md,
 * "Determinism"); box and tank angles still need rotating. tp_sincos_deg() reduces the
 * angle exactly (fmod) to [-45, 45] degrees and evaluates Taylor series there, which is
 * accurate to about 1 ulp of a double and uses only IEEE +, *, / and fmod.
 */
#ifndef TP_UTIL_TRIG_H
#define TP_UTIL_TRIG_H

void tp_sincos_deg(double deg, double *sn, double *cs);

#endif
