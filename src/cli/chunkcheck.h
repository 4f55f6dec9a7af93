/*
 * chunkcheck.h - is a farm chunk's file done? For `tidepool tasks --missing`: a file
 * counts as done only when it is whole (its checksum matches), was made by the settings
 * of this render (its fingerprint) and holds the frames it should, out of this render's
 * frame count (encode/proof.h). Anything else is missing and made again, so --missing
 * after any change of settings gives the film of the new settings.
 *
 * Each returns 1 when done, else 0 with the reason in *why (the file named).
 */
#ifndef TP_CLI_CHUNKCHECK_H
#define TP_CLI_CHUNKCHECK_H

#include "util/error.h"

/* One PNG frame k. */
int chunk_png_done(const char *path, const char *fp, int k, int total, tp_err *why);
/* One OpenEXR frame k (its tidepool:* record; whole: every chunk inside the file). */
int chunk_exr_done(const char *path, const char *fp, int k, int total, tp_err *why);
/* An MP4 segment or joined MP4 holding frames a..b. */
int chunk_mp4_done(const char *path, const char *fp, int a, int b, int total, tp_err *why);
/* A frame-hash manifest holding frames a..b. */
int chunk_manifest_done(const char *path, const char *fp, int a, int b, int total, tp_err *why);

#endif
