/*
 * proof.h - where an output came from: the fingerprint of the scene and options that
 * made it, the frames it holds out of the render's whole range, and a checksum of its
 * content (XXH3-64, libxxhash), so that a farm never joins, resumes from or accepts a
 * file of other settings or a damaged one (docs/farm.md, "What every file records").
 *
 * The record is one line of text, the same in an MP4's comment and a PNG's tEXt chunk:
 *
 *     tidepool frames A-B of N; fingerprint HEX64; xxh3 HEX16
 *
 * A-B: the frames held (0-based, inclusive); N: the frames of the whole render; HEX64:
 * the output fingerprint (scene_output_fingerprint(): scene text after --set, the
 * overrides that change the frames, the render mode and the encoder settings); HEX16:
 * the checksum of the content, defined per format (an MP4: every packet's bytes in file
 * order; a PNG leaves it out: its CRC-32 per chunk and zlib's Adler-32 check it).
 *
 * enc_mp4_seal() writes the checksum into a finished MP4 in place (the comment is made
 * with a placeholder before the muxer writes the index); enc_mp4_verify() reads an MP4's
 * record and checks its packets against it. Errors name the file: TP_EINPUT for a
 * missing record or a checksum that does not match, TP_EIO when it cannot be read.
 */
#ifndef TP_ENCODE_PROOF_H
#define TP_ENCODE_PROOF_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define ENC_PROOF_PREFIX "tidepool frames"
#define ENC_PROOF_MAX    160 /* bytes of a record with its NUL */

typedef struct enc_proof {
	int first, last; /* frames held */
	int total;       /* frames of the whole render */
	char fp[65];     /* output fingerprint, lower-case hex */
	int has_sum;     /* 0: no checksum in the record (a PNG's) */
	uint64_t sum;    /* XXH3-64 of the content */
} enc_proof;

/* The record as text; with p->has_sum the checksum, else none. */
void enc_proof_format(const enc_proof *p, char *buf, size_t n);
/* The record with a placeholder for the checksum (enc_mp4_seal fills it in). */
void enc_proof_format_unsealed(const enc_proof *p, char *buf, size_t n);
/* Parses a record; 0 or -1 (not one). */
int enc_proof_parse(const char *s, enc_proof *p);
/* "made by other settings" / "frames ... of N" checks against what is wanted:
 * fp NULL and total < 0 skip those checks. 0 or TP_EINPUT naming path. */
int enc_proof_match(const char *path, const enc_proof *got, const char *fp, int total, tp_err *err);

/* Fills in the checksum of a finished MP4 (path: the temporary; shown: the name for
 * messages). */
int enc_mp4_seal(const char *path, const char *shown, tp_err *err);
/* Reads path's record into *p and checks its packets against the checksum. Only a
 * regular file is opened. */
int enc_mp4_verify(const char *path, enc_proof *p, tp_err *err);
/* An MP4's container metadata as tidepool writes it: the comment (the provenance line of
 * a segment, "" if none) and the description (the record of encode/record.h as JSON,
 * *description malloc'd, NULL if none). TP_EINPUT for a file libavformat cannot read. */
int enc_mp4_meta(const char *path, char *comment, size_t n, char **description, tp_err *err);

#endif
