/*
 * fingerprint.c - which scene and options a simulation cache belongs to (scene.h).
 *
 * A checkpoint is only valid for the simulation that wrote it: the same scene text (after
 * --set edits) and the same command-line overrides. The digest is SHA-256 (nettle)
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
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scene/ld.h"
#include "scene/scene.h"

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	struct sha256_ctx ctx;
	sha256_init(&ctx);
	sha256_update(&ctx, n, p);
	sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

void scene_text_digest(const char *text, size_t len, uint8_t out[32])
{
	sha256(text, len, out);
}

static void line(struct sha256_ctx *sha, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(struct sha256_ctx *sha, const char *fmt, ...)
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
	sha256_update(sha, (size_t)n, (const uint8_t *)buf);
	sha256_update(sha, 1, (const uint8_t *)"\n");
}

/* Every field of scene_overrides but `output` (see the top of this file). */
static void serialise_overrides(struct sha256_ctx *sha, const scene_overrides *ov)
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
		sha256_update(sha, strlen(ov->sets[i]), (const uint8_t *)ov->sets[i]);
	}
}

void scene_fingerprint(const scene *sc, const scene_overrides *ov, uint8_t out[32])
{
	struct sha256_ctx ctx, *sha = &ctx;
	sha256_init(sha);
	char hex[65];
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", sc->text_sha256[i]);
	line(sha, "tidepool-scene-fingerprint 1");
	line(sha, "text %s", hex);
	serialise_overrides(sha, ov);
	line(sha, "size %d %d", sc->width, sc->height);
	sha256_digest(sha, SHA256_DIGEST_SIZE, out);
}

void scene_output_fingerprint(const uint8_t scene_fp[32], const char *what, char hex[65])
{
	uint8_t out[32];
	struct sha256_ctx ctx, *sha = &ctx;
	sha256_init(sha);
	line(sha, "tidepool-output-fingerprint 1");
	sha256_update(sha, 32, scene_fp);
	sha256_update(sha, strlen(what), (const uint8_t *)what);
	sha256_digest(sha, SHA256_DIGEST_SIZE, out);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", out[i]);
}
