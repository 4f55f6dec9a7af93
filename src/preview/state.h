/*
 * state.h - what the preview server shows: the last good scene, loaded through the public
 * API (include/tidepool.h), a generation number that grows on every reload, and the
 * current error as data.
 *
 * A reload that fails keeps the last good scene (the page keeps its picture) and records
 * the error: file, line, column, the offending line of the file and the message
 * `tidepool validate` prints. A frame that fails to simulate or render (a solver refusal,
 * a non-finite value) is recorded the same way. The next good reload clears both.
 *
 * Thread safety: every call may come from any thread (libmicrohttpd's pool, the watcher,
 * the stats worker). The scene itself is used under one lock (the API allows one thread
 * per scene); the status (generation, error) under another, so /status.json answers while
 * a frame renders. A second copy of the scene walks every frame in a worker thread to
 * collect the `--stats` fields for the page's plot (and finds runtime failures early).
 */
#ifndef TP_PREVIEW_STATE_H
#define TP_PREVIEW_STATE_H

#include <stddef.h>

#include "tidepool.h"

/* The preview size when neither --size nor --scale is given: the scene scaled to fit. */
#define PV_FIT_W 640
#define PV_FIT_H 360
/* In-memory checkpoints of each loaded scene (tp_load_options.checkpoint_bytes): the
 * API's default; a larger budget spaces them closer, so a seek simulates fewer frames. */
#define PV_CHECKPOINT_BYTES ((size_t)256 << 20)
/* The largest scene file read (the loader's own limit). */
#define PV_SCENE_MAX_BYTES (16 << 20)
/* Boxes whose pose /stats.json gives for every frame (the page draws floating ones there). */
#define PV_POSES 16
/* The draft's largest size (state.c's load_draft). */
#define PV_DRAFT_W 160
#define PV_DRAFT_H 90

typedef struct pv_state pv_state;

typedef struct pv_config {
	const char *scene_path;
	int width, height; /* --size; 0: fit */
	double scale;      /* --scale; 0: fit */
	const char *const *sets;
	int nsets;
	/* what messages call the overrides (tp_load_options.names): the command's flags */
	const char *const *names;
	int nnames;
	int threads;
} pv_config;

/* What /status.json reports (a snapshot, copied out under the lock). */
typedef struct pv_status {
	unsigned long generation;       /* grows on every reload, good or bad */
	unsigned long scene_generation; /* the generation of the last good load (0: none) */
	int loaded; /* 0: no scene loaded yet (the first load failed) */
	tp_scene_info info;
	char path[1024];
	char solver[32];
	int has_error;
	int error_frame; /* -1: a load error; else the frame that failed */
	tp_error error;
	char error_line[512]; /* the offending line of the file ("" if none) */
	int stats_done;       /* frames whose stats are known */
} pv_status;

/* Creates the state, with no scene yet: pv_state_reload() loads it (the first time once
 * the watcher runs, so that no save is missed). Returns 0 or a negative TP_ERROR_*. */
int pv_state_create(const pv_config *cfg, pv_state **out, tp_error *err);
/* Stops the work in flight (simulations stop within a step, the stats worker ends) so
 * that the server can stop at once; pv_state_destroy() does it too. */
void pv_state_stop(pv_state *st);
void pv_state_destroy(pv_state *st);

/* Reads the scene file's bytes (malloc'd, NUL-terminated) without ever blocking: opened
 * with O_NONBLOCK and refused unless fstat() on the descriptor says a regular file of at
 * most PV_SCENE_MAX_BYTES; a symbolic link put in the scene's place is not followed (a
 * scene that was a link when the preview started is read through that same link only).
 * The error says what the path is instead ("is gone", "is a FIFO", "is a directory").
 * Returns 0 or TP_ERROR_INPUT. Touches no lock: any thread. */
int pv_read_scene(const pv_state *st, char **text, size_t *len, tp_error *err);

/* Loads the scene file (again) from its bytes read once (pv_read_scene; an error's
 * line is quoted from those bytes, never re-read by name); on success the new scene replaces the old one, else the
 * error is recorded (a first load that fails is kept as the error, for the page). One
 * reload at a time; any thread. */
void pv_state_reload(pv_state *st);

void pv_state_status(pv_state *st, pv_status *out);

/* The scene's JSON after --set edits (malloc'd, the caller frees it), NULL if none;
 * *generation: its scene generation. */
char *pv_state_scene_json(pv_state *st, unsigned long *generation);

/* Renders frame `frame` in `mode` as a PNG (malloc'd into *png); `stretch` (single-channel
 * modes only) makes it an 8-bit picture from black at its lowest sample to white at its
 * highest, for the eye. Returns 0, TP_ERROR_ARGUMENT (no such frame or mode, or stretch
 * of a colour mode: 404/400), or another error recorded in the state (the page shows it).
 * gen_out: the scene generation the frame comes from. */
int pv_state_frame_png(pv_state *st, int frame, int mode, int stretch, unsigned char **png,
		       size_t *size, unsigned long *gen_out, tp_error *err);

/* The same from the draft: the scene at a quarter of the preview's size (fitted into
 * PV_DRAFT_W x PV_DRAFT_H), loaded with each good reload, which simulates many times
 * faster: the page shows it first when a frame is slow to come. TP_ERROR_ARGUMENT when
 * there is no draft (the preview is that small already). */
int pv_state_draft_png(pv_state *st, int frame, int mode, int stretch, unsigned char **png,
		       size_t *size, unsigned long *gen_out, tp_error *err);

/* The largest preview side POST /size accepts. */
#define PV_MAX_SIDE 4096
/* The preview size chosen on the page: width x height, or a scale of the scene's size, or
 * (all 0) fitted into PV_FIT_W x PV_FIT_H; the scene is loaded again at it (a failure
 * keeps the old size and scene: TP_ERROR_INPUT with the reason). */
int pv_state_set_size(pv_state *st, int width, int height, double scale, tp_error *err);

/* Stats of frames [0, *n) as JSON (malloc'd). */
char *pv_state_stats_json(pv_state *st);

#endif
