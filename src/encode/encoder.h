/*
 * encoder.h - output sinks: PNG sequences, MP4, hash manifests, null.
 *
 * An encoder is a const descriptor (same shape as a solver): everything in its file is
 * static but `const tp_encoder tp_encoder_NAME`, listed once in registry.c. The caller
 * allocates priv_size zeroed bytes and calls check() before any simulation (so an
 * unwritable directory or an existing file without -y is reported up front), then open(),
 * write_frame() for frames 0, 1, 2, ... in order, and close() exactly once, even after a
 * failed open(). Outputs are written under a temporary name and renamed when complete.
 */
#ifndef TP_ENCODE_ENCODER_H
#define TP_ENCODE_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "exitstatus.h"
#include "util/image.h"

typedef struct enc_config {
	const char *path; /* file, or a printf pattern with one %d for PNG sequences */
	int w, h;
	double fps;
	int frames;       /* expected frame count (for sizing and messages) */
	tp_pixfmt fmt;    /* pixel format of the frames that will be written */
	int overwrite;    /* -y: replace existing outputs */
	/* mp4 */
	int crf;          /* -1: encoder default (18) */
	const char *preset; /* NULL: encoder default */
	int64_t bitrate;  /* bits/s, 0 = use crf */
	/* flipbook: the atlas layout (encode/flipbook.h); NULL for every other encoder */
	const struct enc_flipbook *flipbook;
	/* render --range: frames first .. first + frames - 1 of a longer render. PNG names
	 * and manifest lines carry these global indices; an MP4 is a self-contained segment
	 * tagged with its range (enc_segment_*). range = 0: a whole render, first = 0. */
	int range;
	int first;
	/* Provenance (encode/proof.h): the output fingerprint as hex (NULL: record none) and
	 * the frames of the whole render. MP4 segments carry it in their comment, PNG frames
	 * in a tEXt chunk, manifests in their header. */
	const char *fingerprint;
	int total;
	/* exr: 32-bit float samples (0: half), and scene_exr_compression (0: ZIP) */
	int exr_float;
	int exr_compression;
	/* The team size of the encoder's own parallel loops (PNG batches, EXR chunks,
	 * flipbook cells), the program's --threads: they run on the encoder's thread, which
	 * does not inherit the main thread's omp_set_num_threads(). 0: OpenMP's default. */
	int threads;
	/* What the output says about itself (encode/record.h): every PNG, OpenEXR and MP4
	 * writes it; NULL: nothing to say (tests' own encoders). */
	const struct enc_record *record;
	/* check() only: the settings alone (size, fps, format, encoder options), not the
	 * path (nothing created or looked at): `tidepool tasks` refuses up front what every
	 * chunk's render would, with the same message */
	int settings_only;
} enc_config;

typedef enum enc_close_mode {
	ENC_CLOSE_DONE,        /* all frames written: finalise and rename into place */
	ENC_CLOSE_INTERRUPTED, /* Ctrl-C: finalise what was written (playable), rename */
	ENC_CLOSE_FAILED,      /* an error: remove temporaries, leave the output untouched */
} enc_close_mode;

typedef struct tp_encoder {
	const char *name;
	const char *description;
	size_t priv_size;
	/* 0..100: how well this encoder claims `path` (highest wins; 0 = not mine). */
	int (*probe)(const char *path);
	int (*check)(const enc_config *cfg, tp_err *err);
	int (*open)(void *priv, const enc_config *cfg, tp_err *err);
	int (*write_frame)(void *priv, int index, const tp_image *img, tp_err *err);
	int (*close)(void *priv, enc_close_mode mode, tp_err *err);
	/* Optional (may be NULL): a one-line notice for the CLI to print before rendering,
	 * such as a codec fallback ("libx264 is not available: ..."), or NULL for none. */
	const char *(*note)(const enc_config *cfg);
	unsigned caps; /* ENC_CAP_*: what the program may ask of it, in place of its name */
	/* Optional (may be NULL): its own options of render and tasks, rows of the program's
	 * parser (cli/optrows.h) with ids ENC_OPT_*, whose values reach it in enc_config. */
	const struct cli_row *options;
} tp_encoder;

/* The ids of encoders' option rows: the value of each goes to the enc_config field it
 * names (the program's parser checks it and says so by the option's name). */
enum {
	ENC_OPT_CRF = 1 << 12, /* crf */
	ENC_OPT_PRESET,        /* preset */
	ENC_OPT_BITRATE,       /* bitrate */
};

/* tp_encoder.caps */
enum {
	ENC_CAP_YUV420 = 1u << 0, /* takes the colour picture as TP_YUV420 frames (cfg.fmt) */
	/* fills a lookahead on one core before it uses every core (x264: about 50 frames): a
	 * deeper frame queue lets the simulation and renderer work ahead meanwhile */
	ENC_CAP_LOOKAHEAD = 1u << 1,
	ENC_CAP_RATE = 1u << 2, /* takes crf, preset and bitrate; the fingerprint records them */
	/* takes float samples in physical units (TP_PIXELS_FLOAT) and the scene's float
	 * settings (exr_float, exr_compression) */
	ENC_CAP_FLOAT = 1u << 3,
};

extern const tp_encoder *const tp_encoders[]; /* registry.c, NULL-terminated */
/* Named where the program means one encoder whatever the path: the frame-hash manifest
 * (--hash), PNG frames (the chunks `tidepool tasks` checks) and the flipbook atlas (a
 * single .png of many frames). */
extern const tp_encoder tp_encoder_hash, tp_encoder_pngseq, tp_encoder_flipbook;
const tp_encoder *enc_find_for_path(const char *path);
const tp_encoder *enc_find(const char *name);

/* A sink: an encoder bound to one configuration. */
typedef struct enc_sink enc_sink;
int enc_sink_create(const tp_encoder *e, const enc_config *cfg, enc_sink **out, tp_err *err);
int enc_sink_write(enc_sink *s, int index, const tp_image *img, tp_err *err);
int enc_sink_close(enc_sink *s, enc_close_mode mode, tp_err *err);
void enc_sink_destroy(enc_sink *s); /* closes with ENC_CLOSE_FAILED if still open */
/* The team size for an encoder's own parallel loops: cfg->threads, or OpenMP's default. */
int enc_threads(const enc_config *cfg);


/* join.c: concatenates MP4 segments of one render without re-encoding, after checking
 * each one's record and checksum (encode/proof.h), that they come from one render (the
 * same fingerprint and frame count), hold contiguous frame ranges (sorted by their first
 * frame) covering the whole render (unless partial) and share one size, frame rate, codec
 * and codec setup; the output is faststart and the same bytes for
 * the same segments. Frame-hash manifests (.manifest, .tpmanifest) of consecutive ranges
 * are joined the same way. A gap, an overlap or a mismatch is refused naming the segment
 * (TP_EINPUT). *frames gets the joined frame count, *first its first frame. */
int enc_join(const char *const *in, int n, const char *out, int overwrite, int partial, int *first,
	     int *frames, tp_err *err);

/* Shared helpers for file outputs. */
/* Fails with a clear message if the directory of `path` does not exist or is not
 * writable, or if `path` exists and !overwrite. */
int enc_check_output(const char *path, int overwrite, tp_err *err);
/* Outputs are written under tp_temp_name() (util/fsutil.h) and renamed when complete. */

#endif
