/*
 * fingerprint.c - which scene and options a simulation cache belongs to (scene.h).
 *
 * A checkpoint is only valid for the simulation that wrote it: the same scene text (after
 * --set edits) and the same command-line overrides. The digest is SHA-256 (libavutil)
 * over a small text record, one "key value" line per item, so the record itself is easy
 * to read and extend:
 *
 *     tidepool-scene-fingerprint 1
 *     text <sha256 of the edited scene text>
 *     width W / height H / scale F / frames N / seed [-|N] / set KEY=VALUE (each, in order)
 *     size W H            (the final size)
 *
 * serialise_overrides() is the only place that lists scene_overrides' fields: a new
 * override that changes the simulation adds one line there. `output` is left out on
 * purpose: where the frames go does not change them, and the chunks of a farm render
 * write to different files from one cache.
 */
#include <inttypes.h>
#include <libavutil/mem.h>
#include <libavutil/sha.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scene/ld.h"
#include "scene/scene.h"

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	struct AVSHA *ctx = av_sha_alloc();
	if (!ctx) { /* out of memory: a digest that matches nothing real */
		memset(out, 0xff, 32);
		return;
	}
	av_sha_init(ctx, 256);
	const uint8_t *b = p;
	while (n) { /* av_sha_update takes a length that may be an unsigned int */
		size_t k = n > (1u << 30) ? (1u << 30) : n;
		av_sha_update(ctx, b, k);
		b += k;
		n -= k;
	}
	av_sha_final(ctx, out);
	av_free(ctx);
}

void scene_text_digest(const char *text, size_t len, uint8_t out[32])
{
	sha256(text, len, out);
}

static void line(struct AVSHA *sha, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(struct AVSHA *sha, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	av_sha_update(sha, (const uint8_t *)buf, (size_t)n);
	av_sha_update(sha, (const uint8_t *)"\n", 1);
}

/* Every field of scene_overrides but `output` (see the top of this file). */
static void serialise_overrides(struct AVSHA *sha, const scene_overrides *ov)
{
	static const scene_overrides none = {0};
	if (!ov)
		ov = &none;
	line(sha, "width %d", ov->width);
	line(sha, "height %d", ov->height);
	line(sha, "scale %.17g", ov->scale);
	line(sha, "frames %d", ov->frames);
	if (ov->has_seed)
		line(sha, "seed %" PRIu64, ov->seed);
	else
		line(sha, "seed -");
	for (int i = 0; i < ov->nsets; i++) {
		/* length-prefixed: a value may hold a newline */
		line(sha, "set %zu", strlen(ov->sets[i]));
		av_sha_update(sha, (const uint8_t *)ov->sets[i], strlen(ov->sets[i]));
	}
}

void scene_fingerprint(const scene *sc, const scene_overrides *ov, uint8_t out[32])
{
	struct AVSHA *sha = av_sha_alloc();
	if (!sha) {
		memset(out, 0xff, 32);
		return;
	}
	av_sha_init(sha, 256);
	char hex[65];
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", sc->text_sha256[i]);
	line(sha, "tidepool-scene-fingerprint 1");
	line(sha, "text %s", hex);
	serialise_overrides(sha, ov);
	line(sha, "size %d %d", sc->width, sc->height);
	av_sha_final(sha, out);
	av_free(sha);
}

void scene_output_fingerprint(const uint8_t scene_fp[32], const char *what, char hex[65])
{
	uint8_t out[32];
	struct AVSHA *sha = av_sha_alloc();
	if (!sha) {
		memset(out, 0xff, 32);
	} else {
		av_sha_init(sha, 256);
		line(sha, "tidepool-output-fingerprint 1");
		av_sha_update(sha, scene_fp, 32);
		av_sha_update(sha, (const uint8_t *)what, strlen(what));
		av_sha_final(sha, out);
		av_free(sha);
	}
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", out[i]);
}
