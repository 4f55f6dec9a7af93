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
#include "encode/record.h"
#include "tidepool.h"

#define OUTPUTS_MAX 8

/* Command-line choices. */
typedef struct out_cli {
	const char *spec[OUTPUTS_MAX]; /* -o values as given */
	int n;
	int cols, rows;       /* --flipbook CxR (0: the scene's) */
	int frame_w, frame_h; /* --frame-size WxH (0: the scene's, or its size) */
	int pot;              /* --pot */
	int padding;          /* --flipbook-padding */
} out_cli;

typedef struct out_item {
	tp_mode mode;
	tp_pixels pixels; /* the library's layout: floats for OpenEXR, 4:2:0 for an MP4 */
	const char *path; /* borrowed from the command line or the scene */
	const tp_encoder *enc;
	enc_config cfg;
	enc_flipbook fb;
	char fp[65]; /* output fingerprint (outputs_fingerprint), cfg.fingerprint */
	enc_record rec; /* cfg.record (outputs_describe) */
} out_item;

typedef struct out_plan {
	int n;
	out_item o[OUTPUTS_MAX];
	tp_target t[OUTPUTS_MAX]; /* the pictures of one frame (outputs_render) */
} out_plan;

/* Splits "MODE=PATH" (MODE a render mode name) or a bare PATH (*mode = -1). */
void outputs_split(const char *spec, int *mode, const char **path);
/* Chooses the outputs, checks that the scene can render their modes and every encoder
 * (paths, existing files, flipbook limits) before any simulation. `base` carries the
 * shared encoder settings (overwrite, crf, ...). */
int outputs_plan(out_plan *p, tp_scene *sc, const out_cli *cli, const enc_config *base,
		 tp_err *err);
/* Fills every output's record (encode/record.h) from the scene: after
 * tp_scene_level_heights(), so an "auto" height scale records the levels it chose. */
void outputs_describe(out_plan *p, const tp_scene *sc);
/* Renders frame `frame` once per output into slot[0..n); side(side_arg), if not NULL,
 * runs once alongside the first output's rendering (tp_scene_render_targets). */
int outputs_render(out_plan *p, tp_scene *sc, int frame, tp_image *slot, void (*side)(void *),
		   void *side_arg, tp_err *err);
/* Pixels the latest frame's height-map outputs clamped (summed); -1 when the plan has no
 * height map. */
long outputs_height_clipped(const out_plan *p);
/* The pixel format of a library layout (tp_scene_format_as) in the encoders' terms. */
tp_pixfmt outputs_pixfmt(const tp_format *f, tp_pixels px);
/* The fingerprint an output records (encode/proof.h): the scene's, the render mode, the
 * encoder's name and, for an encoder with ENC_CAP_RATE (MP4), its settings (crf -1,
 * preset NULL, bitrate 0: the defaults). `tidepool tasks --missing` computes the same to
 * know a chunk's files. */
void outputs_fingerprint(const tp_scene *sc, int mode, const tp_encoder *enc, int crf,
			 const char *preset, int64_t bitrate, char hex[65]);

#endif
