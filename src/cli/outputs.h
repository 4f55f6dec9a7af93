/*
 * outputs.h - what `tidepool render` writes: one or more outputs of one simulation, each
 * a render mode and a path, with its own renderer and encoder.
 *
 * The outputs come from the command line (-o PATH or -o MODE=PATH, repeatable; a bare
 * PATH keeps the mode of the scene's "outputs" when they have one, else takes the scene's
 * render mode), else from the scene's "outputs", else from its
 * "output" in its render mode. A single-file .png output of a multi-frame render becomes
 * a flipbook atlas when the scene has a "flipbook" or --flipbook is given.
 */
#ifndef TP_CLI_OUTPUTS_H
#define TP_CLI_OUTPUTS_H

#include "encode/encoder.h"
#include "encode/flipbook.h"
#include "render/render.h"
#include "scene/scene.h"

#define OUTPUTS_MAX 8

/* Command-line choices. */
typedef struct out_cli {
	const char *spec[OUTPUTS_MAX]; /* -o values as given */
	int n;
	int cols, rows;       /* --flipbook CxR (0: the scene's) */
	int frame_w, frame_h; /* --frame-size WxH (0: the scene's, or its size) */
	int pot;              /* --pot */
	const scene_overrides *ov; /* set by render: for the outputs' fingerprints */
} out_cli;

typedef struct out_item {
	scene_mode mode;
	const char *path; /* borrowed from the command line or the scene */
	const tp_encoder *enc;
	enc_config cfg;
	enc_flipbook fb;
	render_ctx *rd;
	char fp[65]; /* output fingerprint (outputs_fingerprint), cfg.fingerprint */
} out_item;

typedef struct out_plan {
	int n;
	out_item o[OUTPUTS_MAX];
} out_plan;

/* Splits "MODE=PATH" (MODE a render mode name) or a bare PATH (*mode = -1). */
void outputs_split(const char *spec, int *mode, const char **path);
/* Chooses the outputs, creates their renderers and checks every encoder (paths,
 * existing files, flipbook limits) before any simulation. `base` carries the shared
 * encoder settings (overwrite, crf, ...). On failure the plan is freed. */
int outputs_plan(out_plan *p, const scene *sc, const out_cli *cli, const enc_config *base,
		 tp_err *err);
/* Renders surface s once per output into slot[0..n); side(side_arg), if not NULL, runs
 * once alongside the first output's rendering (render_frame_side). */
void outputs_render(out_plan *p, const tp_surface *s, tp_image *slot, void (*side)(void *),
		    void *side_arg);
/* Pixels the latest frame's height-map outputs clamped (render_height_clipped summed);
 * -1 when the plan has no height map. */
long outputs_height_clipped(const out_plan *p);
void outputs_free(out_plan *p);
/* The fingerprint an output records (encode/proof.h): the scene's, the render mode, the
 * encoder's name and, for an MP4, its settings (crf -1, preset NULL, bitrate 0: the
 * defaults). `tidepool tasks --missing` computes the same to know a chunk's files. */
void outputs_fingerprint(const scene *sc, const scene_overrides *ov, int mode,
			 const char *encoder, int crf, const char *preset, int64_t bitrate,
			 char hex[65]);

#endif
