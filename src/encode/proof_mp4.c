/* proof_mp4.c - the MP4 checksum of the provenance record (proof.h): part of the libav
 * plugin (avplugin.h), as it reads MP4s with libavformat. */
#include "encode/proof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include <libavformat/avformat.h>

#include "encode/mp4_read.h"
#include "util/fsutil.h"

#define PLACEHOLDER "????????????????"

int enc_mp4_meta(const char *path, char *comment, size_t n, char **description, tp_err *err)
{
	FILE *f = NULL;
	*description = NULL;
	comment[0] = 0;
	int rc = tp_fopen_regular(path, "an MP4 file", &f, err);
	if (rc < 0)
		return rc;
	fclose(f);
	enc_av_log_install();
	AVFormatContext *fc = NULL;
	if (avformat_open_input(&fc, path, NULL, NULL) < 0)
		return tp_errf(err, TP_EINPUT, "%s: not a readable MP4", path);
	const AVDictionaryEntry *c = av_dict_get(fc->metadata, "comment", NULL, 0);
	const AVDictionaryEntry *d = av_dict_get(fc->metadata, "description", NULL, 0);
	snprintf(comment, n, "%s", c ? c->value : "");
	if (d && !(*description = strdup(d->value)))
		rc = tp_errf(err, TP_EIO, "out of memory");
	avformat_close_input(&fc);
	return rc;
}

/* XXH3-64 of every packet's bytes in file order; the record from the comment. */
static int read_mp4(const char *path, char *comment, size_t n, uint64_t *sum, int *count,
		    tp_err *err)
{
	FILE *f = NULL;
	int rc = tp_fopen_regular(path, "an MP4 file", &f, err);
	if (rc < 0)
		return rc;
	fclose(f);
	enc_av_log_install();
	/* as for every video read (mp4_read.c): a 2 kB segment made the demuxer ask for 1 GB
	 * (found by tests/fuzz/fuzz_segment) */
	av_max_alloc(ENC_AV_MAX_ALLOC);
	/* A segment is an MP4 tidepool wrote: read it as one, without probing every demuxer
	 * libavformat has (most of a damaged segment's time, and none of them is wanted). */
	AVFormatContext *fc = NULL;
	int averr = avformat_open_input(&fc, path, av_find_input_format("mp4"), NULL);
	if (averr < 0)
		return tp_errf(err, TP_EINPUT, "%s: not a readable MP4", path);
	const AVDictionaryEntry *e = av_dict_get(fc->metadata, "comment", NULL, 0);
	snprintf(comment, n, "%s", e ? e->value : "");
	XXH3_state_t *x = XXH3_createState();
	AVPacket *pkt = av_packet_alloc();
	if (!x || !pkt) {
		rc = tp_errf(err, TP_EIO, "out of memory");
	} else {
		XXH3_64bits_reset(x);
		while ((averr = av_read_frame(fc, pkt)) >= 0) {
			XXH3_64bits_update(x, pkt->data, (size_t)pkt->size);
			++*count;
			av_packet_unref(pkt);
		}
		if (averr != AVERROR_EOF)
			rc = tp_errpath(err, TP_EINPUT, path, "damaged (a packet cannot be read)");
		*sum = XXH3_64bits_digest(x);
	}
	av_packet_free(&pkt);
	XXH3_freeState(x);
	avformat_close_input(&fc);
	return rc;
}

int enc_mp4_seal(const char *path, const char *shown, tp_err *err)
{
	char comment[512];
	uint64_t sum = 0;
	int count = 0;
	int rc = read_mp4(path, comment, sizeof comment, &sum, &count, err);
	if (rc < 0)
		return tp_errprefix(err, rc, "%s", shown);
	char hex[17];
	snprintf(hex, sizeof hex, "%016" PRIx64, sum);
	/* faststart: the index (with the comment) is at the start of the file */
	FILE *f = fopen(path, "r+b");
	if (!f)
		return tp_errpath(err, TP_EIO, path, "cannot reopen (%s)", strerror(errno));
	static const char key[] = "; xxh3 " PLACEHOLDER;
	const size_t klen = sizeof key - 1;
	char buf[65536 + 64];
	long base = 0, found = -1;
	size_t keep = 0, got;
	while (found < 0 && (got = fread(buf + keep, 1, sizeof buf - keep, f)) > 0) {
		size_t have = keep + got;
		for (size_t i = 0; i + klen <= have; i++)
			if (buf[i] == ';' && !memcmp(buf + i, key, klen)) {
				found = base + (long)i + (long)(klen - 16);
				break;
			}
		keep = have < klen ? have : klen - 1;
		memmove(buf, buf + have - keep, keep);
		base += (long)(have - keep);
	}
	rc = found < 0 ? tp_errf(err, TP_EIO, "%s: no checksum placeholder to fill in", shown) : 0;
	if (rc == 0 && (fseek(f, found, SEEK_SET) || fwrite(hex, 1, 16, f) != 16 || fflush(f)))
		rc = tp_errpath(err, TP_EIO, path, "write failed (%s)", strerror(errno));
	if (fclose(f) != 0 && rc == 0)
		rc = tp_errpath(err, TP_EIO, path, "write failed (%s)", strerror(errno));
	return rc;
}

/* The fuzzing build reads past a wrong checksum (tests/fuzz/fuzz_segment.c). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PROOF_CHECK_SUM 0
#else
#define PROOF_CHECK_SUM 1
#endif

int enc_mp4_verify(const char *path, enc_proof *p, tp_err *err)
{
	char comment[512];
	uint64_t sum = 0;
	int count = 0;
	int rc = read_mp4(path, comment, sizeof comment, &sum, &count, err);
	if (rc < 0)
		return rc;
	if (enc_proof_parse(comment, p) < 0 || !p->has_sum)
		return tp_errf(
			err, TP_EINPUT,
			"%s: no tidepool record (frame range, fingerprint and checksum: not a "
			"segment written by 'tidepool render --range' of this version)",
			path);
	if (p->sum != sum && PROOF_CHECK_SUM)
		return tp_errf(
			err, TP_EINPUT,
			"%s: damaged (the checksum of its packets does not match its record)",
			path);
	if (count != p->last - p->first + 1)
		return tp_errf(err, TP_EINPUT, "%s: holds %d frames, but its range %d-%d has %d",
			       path, count, p->first, p->last, p->last - p->first + 1);
	return 0;
}
