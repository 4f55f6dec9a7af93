/* record_read.c - the one reader of what tidepool's files say about themselves
 * (record.h): PNG (iTXt record, tEXt provenance, sRGB), OpenEXR (tidepool:KEY attributes),
 * MP4 (container metadata, through the libav plugin), frame-hash manifests (their header)
 * and checkpoints (their 128-byte header, sim/ckpt.h's table in docs/farm.md). */
#include "encode/record.h"

#include <openexr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "encode/hash.h"
#include "encode/proof.h"
#include "util/fsutil.h"
#include "util/png.h"

#define CKPT_MAGIC "TPCKPT01"

static int foreign(const char *path, const char *why, tp_err *err)
{
	return tp_errf(err, TP_EINPUT, "%s: not written by tidepool (%s)", path, why);
}

/* The provenance line (encode/proof.h) as keys of the record. */
static void add_proof(cJSON *o, const char *line)
{
	enc_proof p;
	if (!line[0] || enc_proof_parse(line, &p) < 0)
		return;
	cJSON_AddStringToObject(o, "provenance", line);
	if (!cJSON_GetObjectItem(o, "fingerprint"))
		cJSON_AddStringToObject(o, "fingerprint", p.fp);
	if (!cJSON_GetObjectItem(o, "first") && !cJSON_GetObjectItem(o, "frame")) {
		cJSON_AddNumberToObject(o, "first", p.first);
		cJSON_AddNumberToObject(o, "last", p.last);
	}
	if (!cJSON_GetObjectItem(o, "frames"))
		cJSON_AddNumberToObject(o, "frames", p.total);
}

static int read_png(const char *path, cJSON **out, tp_err *err)
{
	char proof[ENC_PROOF_MAX];
	char *json = NULL;
	int srgb = 0;
	int rc = tp_png_check_meta(path, proof, sizeof proof, &json, &srgb, err);
	if (rc < 0)
		return rc;
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	free(json);
	if (json && !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return tp_errf(err, TP_EINPUT, "%s: its tidepool record is not a JSON object",
			       path);
	}
	if (!o && !proof[0])
		return foreign(path, "a PNG without a tidepool record", err);
	if (!o && !(o = cJSON_CreateObject()))
		return tp_errf(err, TP_EIO, "out of memory");
	add_proof(o, proof);
	cJSON_AddBoolToObject(o, "srgbChunk", srgb);
	*out = o;
	return 0;
}

/* One OpenEXR attribute as a JSON value, or NULL for a type the record never uses. */
static cJSON *exr_value(const exr_attribute_t *a)
{
	switch (a->type) {
	case EXR_ATTR_STRING: return cJSON_CreateString(a->string->str ? a->string->str : "");
	case EXR_ATTR_INT: return cJSON_CreateNumber(a->i);
	case EXR_ATTR_DOUBLE: return cJSON_CreateNumber(a->d);
	case EXR_ATTR_FLOAT: return cJSON_CreateNumber(a->f);
	case EXR_ATTR_V2D: return cJSON_CreateDoubleArray(a->v2d->arr, 2);
	case EXR_ATTR_RATIONAL: {
		const double v[2] = {a->rational->num, a->rational->denom};
		return cJSON_CreateDoubleArray(v, 2);
	}
	default: return NULL;
	}
}

static void quiet(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
	(void)ctxt, (void)code, (void)msg;
}

static int read_exr(const char *path, cJSON **out, tp_err *err)
{
	exr_context_t ctx = NULL;
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	init.error_handler_fn = quiet;
	if (exr_start_read(&ctx, path, &init) != EXR_ERR_SUCCESS)
		return tp_errf(err, TP_EINPUT, "%s: damaged OpenEXR header", path);
	int32_t n = 0;
	cJSON *o = cJSON_CreateObject();
	exr_get_attribute_count(ctx, 0, &n);
	const size_t plen = strlen(ENC_RECORD_EXR_PREFIX);
	for (int32_t i = 0; o && i < n; i++) {
		const exr_attribute_t *a = NULL;
		if (exr_get_attribute_by_index(ctx, 0, EXR_ATTR_LIST_FILE_ORDER, i, &a) !=
			    EXR_ERR_SUCCESS ||
		    !a)
			continue;
		const int ours = !strncmp(a->name, ENC_RECORD_EXR_PREFIX, plen);
		const char *key = ours ? a->name + plen : a->name;
		if (!ours && strcmp(key, "framesPerSecond") && strcmp(key, "wrapmodes") &&
		    strcmp(key, "software"))
			continue;
		cJSON *v = exr_value(a);
		if (!v)
			continue;
		/* the JSON record's own types: loopFrames 0 is none, tiles a truth */
		if (!strcmp(key, "loopFrames") && cJSON_IsNumber(v) && v->valueint == 0) {
			cJSON_Delete(v);
			v = cJSON_CreateNull();
		} else if (!strcmp(key, "tiles") && cJSON_IsNumber(v)) {
			const int t = v->valueint;
			cJSON_Delete(v);
			v = cJSON_CreateBool(t);
		}
		cJSON_AddItemToObject(o, key, v);
	}
	exr_finish(&ctx);
	if (!o)
		return tp_errf(err, TP_EIO, "out of memory");
	if (!cJSON_GetObjectItem(o, "format")) {
		cJSON_Delete(o);
		return foreign(path, "an OpenEXR file without tidepool attributes", err);
	}
	*out = o;
	return 0;
}

int enc_exr_whole(const char *path, tp_err *err)
{
	struct stat st;
	const long long size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
	exr_context_t ctx = NULL;
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	init.error_handler_fn = quiet;
	if (size < 0 || exr_start_read(&ctx, path, &init) != EXR_ERR_SUCCESS)
		return tp_errf(err, TP_EINPUT, "%s: damaged OpenEXR header", path);
	int32_t n = 0, lines = 0;
	exr_attr_box2i_t dw;
	int bad = exr_get_chunk_count(ctx, 0, &n) || exr_get_scanlines_per_chunk(ctx, 0, &lines) ||
		  exr_get_data_window(ctx, 0, &dw) || lines < 1;
	void *buf = NULL;
	uint64_t cap = 0;
	for (int32_t i = 0; !bad && i < n; i++) {
		exr_chunk_info_t ci;
		bad = exr_read_scanline_chunk_info(ctx, 0, dw.min.y + i * lines, &ci) ||
		      ci.packed_size > (uint64_t)size || ci.data_offset > (uint64_t)size - ci.packed_size;
		if (!bad && ci.packed_size > cap) {
			void *nb = realloc(buf, ci.packed_size);
			bad = !nb;
			buf = nb ? nb : buf;
			cap = nb ? ci.packed_size : cap;
		}
		bad = bad || (ci.packed_size && exr_read_chunk(ctx, 0, &ci, buf));
	}
	free(buf);
	exr_finish(&ctx);
	return bad ? tp_errf(err, TP_EINPUT, "%s: damaged or truncated OpenEXR (a chunk cannot be read)",
			     path)
		   : 0;
}

static int read_mp4(const char *path, cJSON **out, const char **kind, tp_err *err)
{
	char comment[512];
	char *json = NULL;
	int rc = enc_mp4_meta(path, comment, sizeof comment, &json, err);
	if (rc < 0)
		return rc;
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	free(json);
	enc_proof p;
	const int segment = comment[0] && enc_proof_parse(comment, &p) == 0;
	if (!o && !segment)
		return foreign(path, "an MP4 without tidepool metadata", err);
	if (!o && !(o = cJSON_CreateObject()))
		return tp_errf(err, TP_EIO, "out of memory");
	if (segment) {
		*kind = "MP4 segment";
		add_proof(o, comment);
	}
	*out = o;
	return 0;
}

static int read_manifest(const char *path, cJSON **out, tp_err *err)
{
	enc_manifest m;
	int rc = enc_manifest_read(path, &m, err);
	if (rc < 0)
		return rc;
	cJSON *o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "format", ENC_MANIFEST_MAGIC " 1");
		cJSON_AddNumberToObject(o, "width", m.w);
		cJSON_AddNumberToObject(o, "height", m.h);
		cJSON_AddStringToObject(o, "pixfmt", enc_hash_pixfmt_name(m.fmt));
		cJSON_AddStringToObject(o, "hash", m.algo);
		cJSON_AddNumberToObject(o, "first", m.first);
		cJSON_AddNumberToObject(o, "last", m.n - 1);
		if (m.fp[0]) {
			cJSON_AddStringToObject(o, "fingerprint", m.fp);
			cJSON_AddNumberToObject(o, "frames", m.total);
		}
	}
	enc_manifest_free(&m);
	if (!o)
		return tp_errf(err, TP_EIO, "out of memory");
	*out = o;
	return 0;
}

static uint32_t le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The header only: `tidepool cache` and render --cache check the payload when they load it. */
static int read_checkpoint(const char *path, const unsigned char *h, size_t got, cJSON **out,
			   tp_err *err)
{
	if (got < 128)
		return tp_errf(err, TP_EINPUT, "%s: damaged checkpoint (the header ends early)",
			       path);
	char version[33] = "", solver[17] = "", fp[65];
	memcpy(version, h + 16, 32);
	memcpy(solver, h + 96, 16);
	for (int i = 0; i < 32; i++)
		snprintf(fp + 2 * i, 3, "%02x", h[48 + i]);
	uint64_t payload = 0;
	for (int i = 7; i >= 0; i--)
		payload = payload << 8 | h[112 + i];
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return tp_errf(err, TP_EIO, "out of memory");
	cJSON_AddStringToObject(o, "format", "tidepool checkpoint");
	cJSON_AddNumberToObject(o, "formatVersion", le32(h + 8));
	cJSON_AddStringToObject(o, "version", version);
	cJSON_AddStringToObject(o, "sceneFingerprint", fp);
	cJSON_AddNumberToObject(o, "width", (int32_t)le32(h + 80));
	cJSON_AddNumberToObject(o, "height", (int32_t)le32(h + 84));
	cJSON_AddNumberToObject(o, "frame", (int32_t)le32(h + 88));
	cJSON_AddNumberToObject(o, "frames", (int32_t)le32(h + 92));
	cJSON_AddStringToObject(o, "solver", solver);
	cJSON_AddNumberToObject(o, "payloadBytes", (double)payload);
	*out = o;
	return 0;
}

int enc_record_read(const char *path, cJSON **out, const char **kind, tp_err *err)
{
	*out = NULL;
	*kind = "unknown";
	FILE *f = NULL;
	int rc = tp_fopen_regular(path, "a file", &f, err);
	if (rc < 0)
		return rc;
	unsigned char h[128];
	const size_t got = fread(h, 1, sizeof h, f);
	fclose(f);
	static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	static const unsigned char exr_sig[4] = {0x76, 0x2f, 0x31, 0x01};
	const size_t mlen = strlen(ENC_MANIFEST_MAGIC);
	if (got >= 8 && !memcmp(h, png_sig, 8)) {
		*kind = "PNG";
		return read_png(path, out, err);
	}
	if (got >= 4 && !memcmp(h, exr_sig, 4)) {
		*kind = "OpenEXR";
		return read_exr(path, out, err);
	}
	if (got >= 12 && !memcmp(h + 4, "ftyp", 4)) {
		*kind = "MP4";
		return read_mp4(path, out, kind, err);
	}
	if (got >= mlen && !memcmp(h, ENC_MANIFEST_MAGIC, mlen)) {
		*kind = "frame-hash manifest";
		return read_manifest(path, out, err);
	}
	if (got >= 8 && !memcmp(h, CKPT_MAGIC, 8)) {
		*kind = "checkpoint";
		return read_checkpoint(path, h, got, out, err);
	}
	return foreign(path, "not a file kind tidepool writes", err);
}
