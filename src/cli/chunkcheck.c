/* chunkcheck.c - whether a farm chunk's file is done (chunkcheck.h). */
#include "cli/chunkcheck.h"

#include <string.h>

#include "encode/hash.h"
#include "encode/record.h"
#include "util/png.h"
#include "encode/proof.h"
#include "util/fsutil.h"

static int frames_are(const char *path, const enc_proof *p, int a, int b, tp_err *why)
{
	if (p->first == a && p->last == b)
		return 1;
	tp_errf(why, TP_EINPUT, "%s: holds frames %d-%d, not %d-%d", path, p->first, p->last, a, b);
	return 0;
}

int chunk_png_done(const char *path, const char *fp, int k, int total, tp_err *why)
{
	if (!tp_path_exists(path)) {
		tp_errf(why, TP_EIO, "%s: missing", path);
		return 0;
	}
	char text[ENC_PROOF_MAX + 64];
	enc_proof p;
	if (tp_png_check(path, text, sizeof text, why) < 0)
		return 0;
	if (enc_proof_parse(text, &p) < 0) {
		tp_errf(why, TP_EINPUT,
			"%s: no tidepool record (made by another program or version)", path);
		return 0;
	}
	return enc_proof_match(path, &p, fp, total, why) == 0 && frames_are(path, &p, k, k, why);
}

int chunk_exr_done(const char *path, const char *fp, int k, int total, tp_err *why)
{
	if (!tp_path_exists(path)) {
		tp_errf(why, TP_EIO, "%s: missing", path);
		return 0;
	}
	cJSON *rec = NULL;
	const char *kind = NULL;
	if (enc_record_read(path, &rec, &kind, why) < 0)
		return 0;
	/* the record's fingerprint, frame and frame count, as a PNG frame's proof gives them */
	const cJSON *f = cJSON_GetObjectItem(rec, "fingerprint");
	const cJSON *fr = cJSON_GetObjectItem(rec, "frame");
	const cJSON *n = cJSON_GetObjectItem(rec, "frames");
	enc_proof p = {0};
	const int ok = cJSON_IsString(f) && strlen(f->valuestring) == 64 && cJSON_IsNumber(fr) &&
		       cJSON_IsNumber(n);
	if (ok) {
		snprintf(p.fp, sizeof p.fp, "%s", f->valuestring);
		p.first = p.last = fr->valueint;
		p.total = n->valueint;
	}
	cJSON_Delete(rec);
	if (!ok) {
		tp_errf(why, TP_EINPUT,
			"%s: no tidepool record (made by another program or version)", path);
		return 0;
	}
	return enc_proof_match(path, &p, fp, total, why) == 0 && frames_are(path, &p, k, k, why) &&
	       enc_exr_whole(path, why) == 0;
}

int chunk_mp4_done(const char *path, const char *fp, int a, int b, int total, tp_err *why)
{
	enc_proof p;
	if (!tp_path_exists(path)) {
		tp_errf(why, TP_EIO, "%s: missing", path);
		return 0;
	}
	return enc_mp4_verify(path, &p, why) == 0 &&
	       enc_proof_match(path, &p, fp, total, why) == 0 && frames_are(path, &p, a, b, why);
}

int chunk_manifest_done(const char *path, const char *fp, int a, int b, int total, tp_err *why)
{
	enc_manifest m;
	if (!tp_path_exists(path)) {
		tp_errf(why, TP_EIO, "%s: missing", path);
		return 0;
	}
	if (enc_manifest_read(path, &m, why) < 0)
		return 0;
	enc_proof p = {.first = m.first, .last = m.n - 1, .total = m.total};
	memcpy(p.fp, m.fp, sizeof p.fp);
	int ok = m.fp[0] ? 1 : 0;
	if (!ok)
		tp_errf(why, TP_EINPUT,
			"%s: no fingerprint (not written by 'tidepool render --hash')", path);
	enc_manifest_free(&m);
	return ok && enc_proof_match(path, &p, fp, total, why) == 0 &&
	       frames_are(path, &p, a, b, why);
}
