/*
 * hash.h - frame hashes and frame-hash manifests (the `hash` encoder and `tidepool compare`).
 *
 * A frame's hash is the digest of its canonical bytes: rows top to bottom, pixels left to
 * right, channels interleaved, no row padding, 16-bit samples big-endian (as in PNG), so a
 * hash never depends on the stride, the host or the software version. An RGB8 frame is
 * hashed as plain "rgb24" bytes: `ffmpeg -i f.png -f rawvideo -pix_fmt rgb24 - | xxh128sum`
 * gives the same digest.
 *
 * The default algorithm is XXH3-128 (libxxhash): a frame-hash manifest guards against
 * accidental change, not an adversary, and XXH3 runs at memory speed (a 1080p frame in
 * about 0.3 ms, where libavutil's SHA-256 takes about 20 ms, more than rendering it).
 * Any libavutil hash (sha256, md5, ...) can be asked for instead.
 *
 * A manifest is a text file, one item per line, diffable with `diff -u`:
 *
 *     tidepool-frame-hashes 1        format name and version
 *     width 640
 *     height 360
 *     pixfmt rgb24                   rgb24 | rgba | gray | gray16be | rgb48be
 *     hash xxh128                    xxh128 or a libavutil hash name, lower case
 *     0 9f86d081884c7d65...          frame index, hex digest; indices 0..n-1 in order
 *
 * A manifest of `render --range A-B` holds frames A..B: its first frame line may carry
 * any index, the following ones count up from it.
 *
 * A manifest written by `tidepool render --hash` also records where it came from
 * (encode/proof.h), in two header lines after `hash` and a last line:
 *
 *     fingerprint 3f9a...            output fingerprint: scene, options, mode (64 hex)
 *     frames 0-59 of 120             the frames it holds, of the whole render
 *     ...frame lines...
 *     xxh3 0123456789abcdef          XXH3-64 of every byte of the file before this line
 *
 * All three or none (manifests written by hand or by `compare --update` have none); a
 * file with a fingerprint but a missing or wrong xxh3 line, or frames other than its
 * "frames" line says, is refused as damaged (TP_EINPUT).
 *
 * Blank lines and lines starting with '#' are ignored when reading. Algorithms other than
 * xxh128 go through libavutil's av_hash API in the libav plugin (avplugin.h: without it
 * they fail with TP_EIO naming the plugin); compare uses it through the opaque enc_hasher.
 *
 * Errors: TP_EIO when a file cannot be opened or written, TP_EINPUT when a manifest is
 * malformed (the message names the file and line), TP_EUSAGE for an unknown algorithm.
 */
#ifndef TP_ENCODE_HASH_H
#define TP_ENCODE_HASH_H

#include <stddef.h>

#include "util/error.h"
#include "exitstatus.h"
#include "util/image.h"

#define ENC_HASH_DEFAULT "xxh128"
#define ENC_HASH_HEX_MAX 129 /* SHA-512: 128 hex digits + NUL */
#define ENC_MANIFEST_MAGIC "tidepool-frame-hashes"
#define ENC_MANIFEST_VERSION 1

typedef struct enc_hasher enc_hasher;

/* algo: "xxh128" or a libavutil hash name, any case ("sha256", "MD5"); NULL = ENC_HASH_DEFAULT. */
int enc_hasher_create(const char *algo, enc_hasher **out, tp_err *err);
void enc_hasher_destroy(enc_hasher *h); /* NULL is a no-op */
const char *enc_hasher_algo(const enc_hasher *h); /* lower case, as in manifests */
/* Writes img's digest as lower-case hex into hex (n >= ENC_HASH_HEX_MAX). Allocates only
 * the first time it meets a wider 16-bit frame. */
int enc_hasher_image(enc_hasher *h, const tp_image *img, char *hex, size_t n, tp_err *err);

/* Manifest names of pixel formats ("rgb24", "gray16be", ...) and back. */
const char *enc_hash_pixfmt_name(tp_pixfmt f);
int enc_hash_pixfmt_parse(const char *name, tp_pixfmt *out); /* 0 or TP_EINPUT */

typedef struct enc_manifest {
	int w, h;
	tp_pixfmt fmt;
	char algo[32];
	int first;                         /* first frame held (a --range render's manifest) */
	int n, cap;                        /* frames first..n-1 held; capacity (from first) */
	char (*hashes)[ENC_HASH_HEX_MAX];  /* hashes[i - first]: frame i (enc_manifest_hash) */
	char fp[65];                       /* output fingerprint, "" for none (proof.h) */
	int total;                         /* frames of the whole render (with fp) */
} enc_manifest;

/* Frame i's hash: "" for a frame before `first` (a range's manifest holds none), NULL
 * past the end. Storage starts at `first`, so a range late in a long render costs only
 * its own frames. */
const char *enc_manifest_hash(const enc_manifest *m, int i);

/* Parses path into m (zeroed first). */
int enc_manifest_read(const char *path, enc_manifest *m, tp_err *err);
/* Writes m to path atomically (temporary name, fsync, rename). */
int enc_manifest_write(const char *path, const enc_manifest *m, tp_err *err);
/* Sets frame i's hash, growing m->n to i + 1 if needed (frames in between stay ""). */
int enc_manifest_set(enc_manifest *m, int i, const char *hex, tp_err *err);
void enc_manifest_free(enc_manifest *m); /* safe on a zeroed or freed manifest */

#endif
