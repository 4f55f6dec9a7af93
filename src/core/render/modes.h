/*
 * modes.h - the render-mode descriptors: one row per mode, as FFmpeg's AVCodecDescriptor
 * and AVPixFmtDescriptor describe codecs and pixel formats.
 *
 * A row says everything the rest of the library asks about a mode: its name (the scene's
 * "mode" values, tp_mode_name), the kernel that draws it from each kind of surface (none:
 * solvers of that kind cannot render it), what else the scene must have (ambient waves),
 * what the kernel reads, and its pixel formats at 8 and 16 bits and as float samples.
 * The loader (scene/support.c), the renderer (render.c) and the API (api.c) all decide
 * "can this scene render this mode" with render_mode_lacks(), and pick formats with
 * render_mode_format(); nothing else lists the modes. Adding a mode is one row in modes.c
 * plus its kernel (and its number in scene_mode and tidepool.h's tp_mode).
 */
#ifndef TP_RENDER_MODES_H
#define TP_RENDER_MODES_H

#include <stddef.h>

#include "scene/scene.h"
#include "util/image.h"

struct render_in;

/* What a height-field kernel reads: the solver's own samples (the colour pass, which then
 * also draws 4:2:0 and still water directly), the surface as float height units, or those
 * heights smoothed by the 3x3 binomial as the colour pass sees its slopes. */
typedef enum render_reads {
	RENDER_READS_SAMPLES,
	RENDER_READS_HEIGHTS,
	RENDER_READS_SLOPES,
} render_reads;

/* What a mode needs of the scene beyond a kernel for its solver's surface. */
enum {
	RENDER_NEEDS_AMBIENT = 1u << 0, /* ambient waves (a solver with TP_SOLVER_AMBIENT) */
	RENDER_NEEDS_CHOPPY = 1u << 1,  /* ambient waves with "choppiness" above 0 */
};

typedef struct render_mode {
	const char *name; /* the scene's and the API's name */
	/* The kernel for a height-field surface: returns the samples it clipped (height
	 * maps), else 0. NULL: height-field solvers cannot render the mode. */
	long (*draw_height)(const struct render_in *in, tp_image *out);
	/* The kernel for a particle fluid; NULL: particle solvers cannot render it. */
	void (*draw_fluid)(const struct render_in *in, tp_image *out);
	render_reads reads; /* what draw_height reads */
	unsigned needs;     /* RENDER_NEEDS_* */
	const char *why;    /* with needs: what the mode is, for the loader's message */
	/* Integer formats at 8 and 16 bits (a mode with one depth gives it for both), and
	 * where the scene chooses between them: offsetof(scene_maps, ..._bits), 0 for none
	 * (then fmt8 == fmt16). */
	tp_pixfmt fmt8, fmt16;
	size_t bits_at;
	int has_float;   /* float samples in physical units (OpenEXR) exist, as fmtf */
	tp_pixfmt fmtf;
} render_mode;

/* The row of mode m (0 <= m < SCENE_MODE_COUNT). */
const render_mode *render_mode_get(scene_mode m);
/* The mode called `name`, or -1. */
int render_mode_from_name(const char *name);
/* Every mode's name in order, then NULL (for ld_enum). */
void render_mode_names(const char *names[SCENE_MODE_COUNT + 1]);

/* 0 when a solver with `caps` and a scene with `amb` can render mode m; else
 * RENDER_NEEDS_* bits the scene lacks, or -1 when no kernel draws the solver's surface. */
int render_mode_lacks(scene_mode m, unsigned caps, const scene_ambient *amb);
/* The same as a one-line message (render_create's and the API's): "render mode \"foam\"
 * needs choppy ambient waves: ..." or "... is not available for the X solver". */
void render_mode_refusal(scene_mode m, const scene *sc, char *buf, size_t n);
/* The loader's words for missing needs: "foam comes from the folds of ...: give the
 * scene an \"ambient\" with ... (airy; got \"foam\")". */
void render_mode_needs_text(scene_mode m, int lacks, char *buf, size_t n);

/* The pixel format of mode m in scene sc: float samples when flt and the mode has them. */
tp_pixfmt render_mode_format(const scene *sc, scene_mode m, int flt);
/* The integer depth the scene gives mode m: 8 or 16. */
int render_mode_bits(const scene *sc, scene_mode m);

#endif
