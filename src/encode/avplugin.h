/*
 * avplugin.h - what needs libavcodec and libavformat (MP4 writing, reading, joining and
 * checksums) is a plugin, tidepool-av.so, loaded the first time an MP4 is touched.
 *
 * Why: libavcodec brings about 120 shared libraries (every codec Debian builds it with),
 * and the dynamic loader resolving them cost each tidepool process tens of milliseconds
 * before main(): `compare`, `validate`, a PNG render and every farm chunk paid it without
 * touching an MP4. The core links no libav library.
 *
 * libavutil's hashes (av_hash, for manifests that name an algorithm other than xxh128)
 * come through it too, so the core links no libav library at all.
 *
 * The plugin is mp4.c, mp4_read.c, join.c and proof_mp4.c with private copies of the few
 * core helpers they use (errors, files, images, hashes, the provenance record: none keeps
 * state); it exports one symbol, TP_AV_PLUGIN_SYMBOL, a table of the calls below. The core
 * side (avload.c) keeps the names and signatures of encoder.h, mp4_read.h and proof.h, so
 * callers do not change: each call loads the plugin if needed, or fails with TP_EIO and a
 * message naming the file looked for.
 *
 * Where it is looked for, first found: $TIDEPOOL_AV_PLUGIN (a path, for tests and odd
 * installs); beside the running program (build/tidepool-av.so next to build/tidepool);
 * beside libtidepool.so for programs using the library; TP_PLUGINDIR (make install puts it
 * in $(LIBDIR)/tidepool/). The plugin must come from the same build: the table carries
 * TP_AV_PLUGIN_ABI and the version, checked on load.
 */
#ifndef TP_ENCODE_AVPLUGIN_H
#define TP_ENCODE_AVPLUGIN_H

#include "encode/encoder.h"
#include "encode/mp4_read.h"
#include "encode/proof.h"

#define TP_AV_PLUGIN_NAME "tidepool-av.so"
#define TP_AV_PLUGIN_SYMBOL "tp_av_plugin_v1"
#define TP_AV_PLUGIN_ABI    3

struct AVHashContext;

typedef struct tp_av_plugin {
	int abi;             /* TP_AV_PLUGIN_ABI */
	const char *version; /* TP_VERSION of the build */
	size_t config_size, image_size; /* sizeof(enc_config), sizeof(tp_image): same headers */
	const tp_encoder *mp4;
	void (*log_install)(void);
	int (*mp4_open)(const char *path, enc_mp4_reader **out, tp_err *err);
	void (*mp4_close)(enc_mp4_reader *r);
	int (*mp4_width)(const enc_mp4_reader *r);
	int (*mp4_height)(const enc_mp4_reader *r);
	int (*mp4_frames)(const enc_mp4_reader *r);
	int (*mp4_next)(enc_mp4_reader *r, tp_image *img, tp_err *err);
	int (*join)(const char *const *in, int n, const char *out, int overwrite, int partial,
		    int *first, int *frames, tp_err *err);
	int (*seal)(const char *path, const char *shown, tp_err *err);
	int (*verify)(const char *path, enc_proof *p, tp_err *err);
	/* libavutil's av_hash: the manifests' algorithms other than xxh128 (hash.c) */
	const char *(*hash_names)(int i);
	int (*hash_alloc)(struct AVHashContext **ctx, const char *name);
	int (*hash_get_size)(const struct AVHashContext *ctx);
	void (*hash_init)(struct AVHashContext *ctx);
	void (*hash_update)(struct AVHashContext *ctx, const uint8_t *src, size_t len);
	void (*hash_final_hex)(struct AVHashContext *ctx, uint8_t *dst, int size);
	void (*hash_freep)(struct AVHashContext **ctx);
	int (*mp4_meta)(const char *path, char *comment, size_t n, char **description, tp_err *err);
} tp_av_plugin;

/* The plugin, loaded once per process (thread-safe); NULL with err set if it cannot be.
 * Inside the plugin itself (hash.c is linked into both) it is the plugin's own table. */
const tp_av_plugin *tp_av(tp_err *err);
/* Where the plugin was loaded from ("" if not loaded). */
const char *tp_av_path(void);

#endif
