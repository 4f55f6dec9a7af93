/*
 * draft.h - how the preview's draft (state.c's load_draft, docs/preview.md "Drafts")
 * differs from the scene besides its size.
 *
 * A draft is the same scene text loaded at a quarter of the preview's size. The grid
 * solvers then simulate far fewer cells; sph would not: its particles' spacing is a length
 * in scene units, so a smaller render has as many particles. The draft of an sph scene
 * therefore also spaces its particles at least PV_DRAFT_SPH_SPACING draft pixels apart
 * (the kernel radius, when the scene sets one, grows with it, and streams, whose rate and
 * cap count particles, emit as many fewer as each is larger): a coarser version of the
 * same flow, four or more times cheaper, that the full picture soon replaces.
 */
#ifndef TP_PREVIEW_DRAFT_H
#define TP_PREVIEW_DRAFT_H

#include <stddef.h>

/* Draft pixels between an sph draft's particles at least (the full default: 4 px). */
#define PV_DRAFT_SPH_SPACING 2.0
/* Edits of one draft at most (the spacing, the radius, two per stream emitter); a
 * scene with more streams than fit gets the plain draft. */
#define PV_DRAFT_MAX_SETS 34

/* The "KEY=VALUE" edits (tp_load_options.sets) that make the draft of a scene whose text
 * (tp_scene_text) is `text`, solved by `solver`, drawn at `scale` draft pixels per scene
 * unit: written into buf (n bytes) and pointed to by sets[]. Returns how many (0: none,
 * the draft is the text at the smaller size). */
int pv_draft_sets(const char *text, const char *solver, double scale, char *buf, size_t n,
		  const char *sets[PV_DRAFT_MAX_SETS]);

#endif
