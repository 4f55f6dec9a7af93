/*
 * join.c - `tidepool join`: MP4 segments of one render concatenated without re-encoding
 * (libavformat remux), and frame-hash manifests of consecutive ranges merged (encoder.h).
 *
 * Each segment of `render --range A-B` is a self-contained MP4 that starts with a
 * keyframe and records its frames, the render's, its fingerprint and a checksum in its
 * comment (encode/proof.h). The segments are sorted by their first frame and must be of
 * one render and cover it (or, partial, one contiguous range of it); they must share the codec, its
 * setup (the SPS/PPS extradata: the same encoder settings), the size, pixel format, time
 * base and frame rate. Packets are copied as they are, their timestamps shifted by the
 * length of the segments before them. The output is written like every MP4 of tidepool:
 * bit-exact muxer flags, faststart, a temporary name renamed into place when complete.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>

#include "encode/encoder.h"
#include "encode/hash.h"
#include "encode/proof.h"
#include "util/fsutil.h"

typedef struct seg {
	const char *path;
	AVFormatContext *fc;
	AVStream *st;
	int first, last;
	enc_proof proof;
} seg;

static void quiet_log(void *avcl, int level, const char *fmt, va_list ap)
{
	(void)avcl, (void)level, (void)fmt, (void)ap;
}

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void quiet_install(void)
{
	av_log_set_callback(quiet_log);
}

static int is_manifest(const char *p)
{
	return tp_has_suffix(p, ".manifest") || tp_has_suffix(p, ".tpmanifest");
}

static int av_err(tp_err *err, int averr, const char *path, const char *what)
{
	char e[128];
	av_strerror(averr, e, sizeof e);
	return tp_errf(err, TP_EINPUT, "%s: %s (%s)", path, what, e);
}

/* A write error of the output: its name and the system's reason. */
static int wr_err(tp_err *err, int averr, const char *out)
{
	char e[128];
	av_strerror(averr, e, sizeof e);
	return tp_errpath(err, TP_EIO, out, "write failed (%s)", e);
}

/* Insertion sort by first frame (stable: equal firsts stay in the given order). */
#define SORT_BY_FIRST(a, n, T)                                                                     \
	for (int i_ = 1; i_ < (n); i_++) {                                                         \
		T t_ = (a)[i_];                                                                    \
		int j_ = i_;                                                                       \
		for (; j_ > 0 && (a)[j_ - 1].first > t_.first; j_--)                               \
			(a)[j_] = (a)[j_ - 1];                                                     \
		(a)[j_] = t_;                                                                      \
	}

/* Ranges must follow each other: next.first == prev.last + 1. */
static int check_contiguous(const char *prev, int plast, const char *next, int nfirst, tp_err *err)
{
	if (nfirst > plast + 1)
		return tp_errf(
			err, TP_EINPUT,
			"%s: starts at frame %d, but %s ends at %d: frames %d-%d are missing", next,
			nfirst, prev, plast, plast + 1, nfirst - 1);
	if (nfirst <= plast)
		return tp_errf(err, TP_EINPUT,
			       "%s: starts at frame %d, which %s (ending at %d) already holds",
			       next, nfirst, prev, plast);
	return 0;
}

/* The same render (fingerprint and length) as the first part, and with every part, the
 * whole of it unless partial. */
static int check_same(const char *first, const char *fp0, int total0, const char *path,
		      const char *fp, int total, tp_err *err)
{
	if (strcmp(fp, fp0))
		return tp_errf(err, TP_EINPUT,
			       "%s: made by other settings than %s (another scene, --set, --seed, "
			       "--frames, --size, mode or encoder options: fingerprints differ)",
			       path, first);
	if (total != total0)
		return tp_errf(err, TP_EINPUT, "%s: part of a %d-frame render, but %s of a %d-frame one",
			       path, total, first, total0);
	return 0;
}

static int check_ends(const char *firstp, int first, const char *lastp, int last, int total,
		      int partial, tp_err *err)
{
	if (partial)
		return 0;
	if (first > 0)
		return tp_errf(err, TP_EINPUT,
			       "%s: starts at frame %d: frames 0-%d of the %d-frame render are "
			       "missing (join --partial joins a part of a render)",
			       firstp, first, first - 1, total);
	if (last < total - 1)
		return tp_errf(err, TP_EINPUT,
			       "%s: ends at frame %d: frames %d-%d of the %d-frame render are "
			       "missing (join --partial joins a part of a render)",
			       lastp, last, last + 1, total - 1, total);
	return 0;
}

/* ---- manifests ---- */

typedef struct man {
	const char *path;
	enc_manifest m;
	int first;
} man;

static int join_manifests(const char *const *in, int n, const char *out, int partial, int *first,
			  int *frames, tp_err *err)
{
	man *ms = calloc((size_t)n, sizeof *ms);
	enc_manifest o = {0};
	int rc = ms ? 0 : tp_errf(err, TP_EIO, "out of memory");
	for (int i = 0; i < n && rc == 0; i++) {
		ms[i].path = in[i];
		if ((rc = enc_manifest_read(in[i], &ms[i].m, err)) == 0)
			ms[i].first = ms[i].m.first;
		if (rc == 0 && ms[i].m.n <= ms[i].m.first)
			rc = tp_errf(err, TP_EINPUT, "%s: holds no frames", in[i]);
		if (rc == 0 && !ms[i].m.fp[0])
			rc = tp_errf(err, TP_EINPUT,
				     "%s: no fingerprint or frames line (not a part written by "
				     "'tidepool render --range --hash' of this version)",
				     in[i]);
		if (rc == 0 && i > 0)
			rc = check_same(in[0], ms[0].m.fp, ms[0].m.total, in[i], ms[i].m.fp,
					ms[i].m.total, err);
	}
	if (rc == 0) {
		SORT_BY_FIRST(ms, n, man);
	}
	for (int i = 1; i < n && rc == 0; i++) {
		const enc_manifest *a = &ms[0].m, *b = &ms[i].m;
		if (a->w != b->w || a->h != b->h || a->fmt != b->fmt || strcmp(a->algo, b->algo))
			rc = tp_errf(err, TP_EINPUT, "%s: %dx%d %s %s, but %s is %dx%d %s %s",
				     ms[i].path, b->w, b->h, enc_hash_pixfmt_name(b->fmt), b->algo,
				     ms[0].path, a->w, a->h, enc_hash_pixfmt_name(a->fmt), a->algo);
		else
			rc = check_contiguous(ms[i - 1].path, ms[i - 1].m.n - 1, ms[i].path,
					      ms[i].first, err);
	}
	if (rc == 0)
		rc = check_ends(ms[0].path, ms[0].first, ms[n - 1].path, ms[n - 1].m.n - 1,
				ms[0].m.total, partial, err);
	if (rc == 0) {
		o.w = ms[0].m.w;
		snprintf(o.fp, sizeof o.fp, "%s", ms[0].m.fp);
		o.total = ms[0].m.total;
		o.h = ms[0].m.h;
		o.fmt = ms[0].m.fmt;
		snprintf(o.algo, sizeof o.algo, "%s", ms[0].m.algo);
		o.first = ms[0].first;
		for (int i = 0; i < n && rc == 0; i++)
			for (int k = ms[i].first; k < ms[i].m.n && rc == 0; k++)
				rc = enc_manifest_set(&o, k, enc_manifest_hash(&ms[i].m, k), err);
		o.first = ms[0].first;
		if (rc == 0)
			rc = enc_manifest_write(out, &o, err);
		*first = o.first;
		*frames = o.n - o.first;
	}
	for (int i = 0; ms && i < n; i++)
		enc_manifest_free(&ms[i].m);
	enc_manifest_free(&o);
	free(ms);
	return rc;
}

/* ---- MP4 ---- */

static int open_segment(seg *s, tp_err *err)
{
	/* Only a regular file is opened; its record and checksum are checked first. */
	int rc = enc_mp4_verify(s->path, &s->proof, err);
	if (rc < 0)
		return rc;
	s->first = s->proof.first;
	s->last = s->proof.last;
	rc = avformat_open_input(&s->fc, s->path, NULL, NULL);
	if (rc < 0)
		return av_err(err, rc, s->path, "not a readable MP4");
	if (s->fc->nb_streams != 1 || s->fc->streams[0]->codecpar->codec_type != AVMEDIA_TYPE_VIDEO)
		return tp_errf(err, TP_EINPUT, "%s: expected one video stream (got %u streams)",
			       s->path, s->fc->nb_streams);
	s->st = s->fc->streams[0];
	return 0;
}

static int same_setup(const seg *a, const seg *b, tp_err *err)
{
	const AVCodecParameters *p = a->st->codecpar, *q = b->st->codecpar;
	const char *what = NULL;
	char detail[160] = "";
	if (p->codec_id != q->codec_id) {
		what = "codec";
		snprintf(detail, sizeof detail, "%s vs %s", avcodec_get_name(q->codec_id),
			 avcodec_get_name(p->codec_id));
	} else if (p->width != q->width || p->height != q->height) {
		what = "size";
		snprintf(detail, sizeof detail, "%dx%d vs %dx%d", q->width, q->height, p->width,
			 p->height);
	} else if (p->format != q->format) {
		what = "pixel format";
	} else if (av_cmp_q(a->st->avg_frame_rate, b->st->avg_frame_rate) ||
		   av_cmp_q(a->st->time_base, b->st->time_base)) {
		what = "frame rate";
		snprintf(detail, sizeof detail, "%d/%d vs %d/%d fps", b->st->avg_frame_rate.num,
			 b->st->avg_frame_rate.den, a->st->avg_frame_rate.num,
			 a->st->avg_frame_rate.den);
	} else if (p->extradata_size != q->extradata_size ||
		   (p->extradata_size &&
		    memcmp(p->extradata, q->extradata, (size_t)p->extradata_size))) {
		what = "encoder settings (codec setup)";
		snprintf(detail, sizeof detail,
			 "render every chunk with the same --crf/--preset/--bitrate");
	}
	if (!what)
		return 0;
	return tp_errf(err, TP_EINPUT, "%s: %s differs from %s%s%s%s", b->path, what, a->path,
		       detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
}

static int copy_packets(AVFormatContext *ofc, AVStream *ost, seg *s, const char *out,
			int64_t *offset, int64_t *last_dts, AVPacket *pkt, tp_err *err)
{
	AVRational tb = s->st->time_base;
	int64_t start = AV_NOPTS_VALUE, end = 0;
	int first = 1, rc;
	while ((rc = av_read_frame(s->fc, pkt)) >= 0) {
		if (pkt->pts == AV_NOPTS_VALUE || pkt->dts == AV_NOPTS_VALUE) {
			av_packet_unref(pkt);
			return tp_errf(err, TP_EINPUT, "%s: a packet without timestamps", s->path);
		}
		if (first && !(pkt->flags & AV_PKT_FLAG_KEY)) {
			av_packet_unref(pkt);
			return tp_errf(err, TP_EINPUT, "%s: does not start with a keyframe",
				       s->path);
		}
		if (first)
			start = pkt->pts; /* the first packet of an MP4 is its first frame (a
					     keyframe) */
		first = 0;
		if (pkt->pts + pkt->duration > end)
			end = pkt->pts + pkt->duration;
		pkt->pts += *offset - start;
		pkt->dts += *offset - start;
		av_packet_rescale_ts(pkt, tb, ost->time_base);
		if (*last_dts != AV_NOPTS_VALUE && pkt->dts <= *last_dts) {
			av_packet_unref(pkt);
			return tp_errf(err, TP_EINPUT,
				       "%s: its timestamps overlap the segment before it", s->path);
		}
		*last_dts = pkt->dts;
		pkt->stream_index = ost->index;
		pkt->pos = -1;
		rc = av_write_frame(ofc, pkt);
		av_packet_unref(pkt);
		if (rc >= 0 && ofc->pb->error < 0)
			rc = ofc->pb->error;
		if (rc < 0)
			return wr_err(err, rc, out);
	}
	if (rc != AVERROR_EOF)
		return av_err(err, rc, s->path, "read failed");
	if (first)
		return tp_errf(err, TP_EINPUT, "%s: holds no frames", s->path);
	*offset += end - start;
	return 0;
}

static int join_mp4(seg *sg, int n, const char *out, tp_err *err)
{
	char tmp[4352];
	AVFormatContext *ofc = NULL;
	AVDictionary *mopts = NULL;
	AVPacket *pkt = av_packet_alloc();
	int rc = 0, opened = 0;
	tp_temp_name(out, tmp, sizeof tmp);
	if (!pkt)
		return tp_errf(err, TP_EIO, "out of memory");
	int averr = avformat_alloc_output_context2(&ofc, NULL, tp_has_suffix(out, ".mov") ? "mov" : "mp4",
						   tmp);
	if (averr < 0) {
		rc = av_err(err, averr, out, "cannot set up the MP4 muxer");
		goto done;
	}
	ofc->flags |= AVFMT_FLAG_BITEXACT;
	AVStream *ost = avformat_new_stream(ofc, NULL);
	if (!ost || avcodec_parameters_copy(ost->codecpar, sg[0].st->codecpar) < 0) {
		rc = tp_errf(err, TP_EIO, "out of memory");
		goto done;
	}
	ost->codecpar->codec_tag = 0;
	ost->time_base = sg[0].st->time_base;
	ost->avg_frame_rate = sg[0].st->avg_frame_rate;
	ost->sample_aspect_ratio = sg[0].st->sample_aspect_ratio;
	/* The joined file records the same: its frames, the render's, the fingerprint and
	 * (filled in when finished) the checksum of its packets. */
	enc_proof pr = sg[0].proof;
	pr.last = sg[n - 1].last;
	char tag[ENC_PROOF_MAX];
	enc_proof_format_unsealed(&pr, tag, sizeof tag);
	av_dict_set(&ofc->metadata, "comment", tag, 0);
	/* the record (encode/record.h) of the first segment, for the frames joined */
	const AVDictionaryEntry *d = av_dict_get(sg[0].fc->metadata, "description", NULL, 0);
	cJSON *rec = d ? cJSON_Parse(d->value) : NULL;
	if (rec && cJSON_GetObjectItem(rec, "first") && cJSON_GetObjectItem(rec, "last")) {
		cJSON_SetNumberValue(cJSON_GetObjectItem(rec, "first"), pr.first);
		cJSON_SetNumberValue(cJSON_GetObjectItem(rec, "last"), pr.last);
		char *json = cJSON_PrintUnformatted(rec);
		if (json)
			av_dict_set(&ofc->metadata, "description", json, 0);
		free(json);
	}
	cJSON_Delete(rec);
	if ((averr = avio_open(&ofc->pb, tmp, AVIO_FLAG_WRITE)) < 0) {
		rc = tp_errpath(err, TP_EIO, tmp, "cannot create (%s)", strerror(AVUNERROR(averr)));
		goto done;
	}
	opened = 1;
	av_dict_set(&mopts, "movflags", "+faststart", 0);
	averr = avformat_write_header(ofc, &mopts);
	av_dict_free(&mopts);
	if (averr < 0) {
		rc = wr_err(err, averr, out);
		goto done;
	}
	int64_t offset = 0, last_dts = AV_NOPTS_VALUE;
	for (int i = 0; i < n && rc == 0; i++)
		rc = copy_packets(ofc, ost, &sg[i], out, &offset, &last_dts, pkt, err);
	if (rc == 0 && ((averr = av_write_trailer(ofc)) < 0 || (averr = ofc->pb->error) < 0))
		rc = wr_err(err, averr, out);
	if (rc == 0 && (averr = avio_closep(&ofc->pb)) < 0)
		rc = wr_err(err, averr, out);
	if (rc == 0)
		rc = enc_mp4_seal(tmp, out, err);
	if (rc == 0) {
		opened = 0;
		rc = tp_commit_file(tmp, out, err);
	}
done:
	if (ofc) {
		if (ofc->pb)
			avio_closep(&ofc->pb);
		avformat_free_context(ofc);
	}
	if (opened)
		unlink(tmp);
	av_packet_free(&pkt);
	return rc;
}

int enc_join(const char *const *in, int n, const char *out, int overwrite, int partial, int *first,
	     int *frames, tp_err *err)
{
	*first = *frames = 0;
	if (n < 1)
		return tp_errf(err, TP_EUSAGE, "join: no segments given");
	int man_out = is_manifest(out);
	for (int i = 0; i < n; i++) {
		if (is_manifest(in[i]) != man_out)
			return tp_errf(err, TP_EUSAGE, "%s: %s, but the output %s is %s", in[i],
				       is_manifest(in[i]) ? "a manifest" : "a video", out,
				       man_out ? "a manifest" : "a video");
		if (!strcmp(in[i], out))
			return tp_errf(err, TP_EUSAGE, "%s: is both a segment and the output", out);
	}
	int rc = tp_mkdirs_for(out, err);
	if (rc == 0)
		rc = enc_check_output(out, overwrite, err);
	if (rc < 0)
		return rc;
	if (man_out)
		return join_manifests(in, n, out, partial, first, frames, err);

	pthread_once(&quiet_once, quiet_install);
	seg *sg = calloc((size_t)n, sizeof *sg);
	if (!sg)
		return tp_errf(err, TP_EIO, "out of memory");
	for (int i = 0; i < n && rc == 0; i++) {
		sg[i].path = in[i];
		rc = open_segment(&sg[i], err);
	}
	if (rc == 0) {
		SORT_BY_FIRST(sg, n, seg);
	}
	for (int i = 1; i < n && rc == 0; i++) {
		rc = same_setup(&sg[0], &sg[i], err);
		if (rc == 0)
			rc = check_same(sg[0].path, sg[0].proof.fp, sg[0].proof.total, sg[i].path,
					sg[i].proof.fp, sg[i].proof.total, err);
		if (rc == 0)
			rc = check_contiguous(sg[i - 1].path, sg[i - 1].last, sg[i].path,
					      sg[i].first, err);
	}
	if (rc == 0)
		rc = check_ends(sg[0].path, sg[0].first, sg[n - 1].path, sg[n - 1].last,
				sg[0].proof.total, partial, err);
	if (rc == 0)
		rc = join_mp4(sg, n, out, err);
	if (rc == 0) {
		*first = sg[0].first;
		*frames = sg[n - 1].last - sg[0].first + 1;
	}
	for (int i = 0; i < n; i++)
		avformat_close_input(&sg[i].fc);
	free(sg);
	return rc;
}
