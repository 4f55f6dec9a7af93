/*
 * mp4.c - MP4/MOV output: H.264 through libx264 (or MPEG-4 Part 2 when libavcodec has no
 * libx264), muxed by libavformat. The only encoding file that includes libav* headers.
 *
 * Frames are converted to yuv420p with BT.709 coefficients and limited range, and the
 * stream is tagged so: RGB frames (the colour renders) by tp_yuv420_rows_for() (util/image.h:
 * fixed point, the 2x2 mean for chroma), other formats by libswscale. yuv420p needs even
 * dimensions and H.264 crops 4:2:0 only in steps of 2 pixels, so an odd width or height
 * is refused by check(), before any rendering, naming the even sizes to use: an MP4
 * always has the size of the render.
 *
 * Determinism: the muxer and the codec get their bit-exact flags (no "Lavf"/"Lavc"
 * version strings, no creation time), x264's version-and-options SEI is stripped, and
 * x264 runs a fixed number of frame threads with deterministic=1, so the same frames
 * give the same bytes on any machine with the same libraries, whatever its core count.
 *
 * Robustness: the file is written as "<dir>/.<name>.tmp-<pid>", finished with the moov
 * atom moved to the front (faststart), then renamed into place. ENC_CLOSE_INTERRUPTED
 * finishes the frames written so far the same way (a playable, shorter file; nothing if
 * no frame was written); ENC_CLOSE_FAILED and every write error remove the temporary.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include "encode/encoder.h"
#include "encode/mp4_read.h"
#include "encode/proof.h"
#include "encode/record.h"
#include "util/cpu.h"
#include "util/fsutil.h"

#define DEFAULT_CRF    18
#define DEFAULT_PRESET "medium"
/* A fixed x264 frame-thread count instead of "auto": x264's output depends on its thread
 * count, and this keeps files identical across machines. Four frame threads keep two to
 * eight cores busy at 1080p; more would only add latency and lower quality slightly. */
#define X264_THREADS 4
/* MPEG-4 Part 2 has no CRF: crf 18 maps to qscale 3 (2 = best .. 31 = worst). */
#define MPEG4_QSCALE_FOR_CRF(c) ((c) / 6 < 2 ? 2 : (c) / 6 > 31 ? 31 : (c) / 6)
#define MAX_DIM                 16384 /* x264's limit for either dimension */

static const char *const x264_presets[] = {
	"ultrafast", "superfast", "veryfast", "faster",  "fast", "medium",
	"slow",      "slower",    "veryslow", "placebo", NULL,
};

typedef struct mp4 {
	char path[4096];
	char tmp[4352];
	int overwrite;
	int w, h;   /* frame size */
	int cw, ch; /* coded size: w, h (even: check() refuses odd sizes) */
	enum AVPixelFormat src_fmt;
	int x264;

	AVFormatContext *fc;
	AVCodecContext *cc;
	AVStream *st;
	AVBSFContext *bsf; /* NULL when there is no SEI to strip */
	AVFrame *frame;
	AVFrame *view; /* x264 and a 4:2:0 frame: the frame's own planes, no copy (mp4_write) */
	AVPacket *pkt;
	struct SwsContext *sws;
	tp_yuv420_rows_fn yuv_rows; /* RGB to 4:2:0 for this CPU (util/cpu.h), chosen at open */

	int tmp_exists;
	int header_written;
	int seal; /* a segment: its checksum is filled in when finished */
	int64_t frames; /* frames sent to the encoder */
} mp4;

/* ---- libav messages ------------------------------------------------------------------ */

/* Library code never prints: libav's log lines are dropped, except that the last
 * error-level line is kept to explain a failing call. x264 logs from its own threads. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_last[256];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_cb(void *avcl, int level, const char *fmt, va_list ap)
{
	(void)avcl;
	if (level > AV_LOG_ERROR)
		return;
	char line[sizeof log_last];
	vsnprintf(line, sizeof line, fmt, ap);
	line[strcspn(line, "\n")] = 0;
	if (!line[0])
		return;
	pthread_mutex_lock(&log_lock);
	memcpy(log_last, line, sizeof line);
	pthread_mutex_unlock(&log_lock);
}

static void log_install(void)
{
	av_log_set_callback(log_cb);
}

void enc_av_log_install(void)
{
	pthread_once(&log_once, log_install);
}

static void log_reset(void)
{
	pthread_once(&log_once, log_install);
	pthread_mutex_lock(&log_lock);
	log_last[0] = 0;
	pthread_mutex_unlock(&log_lock);
}

/* "Invalid argument" or "Invalid argument (libx264 says: ...)" */
static void av_why(int averr, char *buf, size_t n)
{
	char e[128], last[sizeof log_last];
	av_strerror(averr, e, sizeof e);
	pthread_mutex_lock(&log_lock);
	memcpy(last, log_last, sizeof last);
	pthread_mutex_unlock(&log_lock);
	if (last[0])
		snprintf(buf, n, "%s (%s)", e, last);
	else
		snprintf(buf, n, "%s", e);
}

static int av_fail(tp_err *err, int averr, const char *path, const char *what)
{
	char why[512];
	av_why(averr, why, sizeof why);
	return tp_errpath(err, TP_EIO, path, "%s: %s", what, why);
}

/* ---- configuration ------------------------------------------------------------------- */

static int mp4_probe(const char *path)
{
	return tp_is_mp4_path(path) ? 50 : 0;
}

/* TIDEPOOL_MP4_CODEC=mpeg4 forces the fallback (for players without H.264, and tests). */
static const AVCodec *pick_codec(int *is_x264)
{
	const char *force = getenv("TIDEPOOL_MP4_CODEC");
	const AVCodec *c = NULL;
	if (!force || strcmp(force, "mpeg4") != 0)
		c = avcodec_find_encoder_by_name("libx264");
	*is_x264 = c != NULL;
	if (!c)
		c = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
	return c;
}

static int src_pixfmt(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: return AV_PIX_FMT_RGB24;
	case TP_RGBA8: return AV_PIX_FMT_RGBA;
	case TP_GRAY8: return AV_PIX_FMT_GRAY8;
	case TP_YUV420: return AV_PIX_FMT_YUV420P; /* rendered straight into 4:2:0 */
	case TP_GRAY16: return AV_PIX_FMT_GRAY16;  /* host-endian, as tp_image stores it */
	case TP_RGB16: return AV_PIX_FMT_RGB48;
	case TP_GRAYF32: /* float maps go to OpenEXR only */
	case TP_RGBF32: break;
	}
	return AV_PIX_FMT_NONE;
}

static int mp4_check(const enc_config *cfg, tp_err *err)
{
	int x264;
	if (cfg->w < 1 || cfg->h < 1 || cfg->w > MAX_DIM || cfg->h > MAX_DIM)
		return tp_errf(err, TP_EUSAGE,
			       "%s: %dx%d: MP4 frames must be 1..%d pixels on each side", cfg->path,
			       cfg->w, cfg->h, MAX_DIM);
	if ((cfg->w | cfg->h) & 1)
		return tp_errf(err, TP_EUSAGE,
			       "%s: %dx%d: H.264 in 4:2:0 needs an even width and height (its "
			       "cropping works in steps of 2 pixels); render at %dx%d or %dx%d "
			       "(--size)",
			       cfg->path, cfg->w, cfg->h, cfg->w & ~1 ? cfg->w & ~1 : 2,
			       cfg->h & ~1 ? cfg->h & ~1 : 2, (cfg->w + 1) & ~1, (cfg->h + 1) & ~1);
	if (!(cfg->fps > 0 && cfg->fps <= 1000))
		return tp_errf(err, TP_EUSAGE, "%s: fps must be in (0, 1000] for MP4 (got %g)",
			       cfg->path, cfg->fps);
	if (cfg->crf < -1 || cfg->crf > 51)
		return tp_errf(err, TP_EUSAGE, "--crf: must be in 0..51 (got %d)", cfg->crf);
	if (cfg->bitrate < 0)
		return tp_errf(err, TP_EUSAGE, "--bitrate: must be > 0 (got %lld)",
			       (long long)cfg->bitrate);
	if (cfg->bitrate > 0 && cfg->crf >= 0)
		return tp_errf(err, TP_EUSAGE, "--crf and --bitrate exclude each other (give one)");
	if (cfg->preset) {
		int ok = 0;
		char list[128] = "";
		for (int i = 0; x264_presets[i]; i++) {
			ok |= !strcmp(cfg->preset, x264_presets[i]);
			size_t k = strlen(list);
			snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", x264_presets[i]);
		}
		if (!ok) /* the list is the one render --help, the man page and the completion
			  * give (test_optrows.c checks them against it) */
			return tp_errf(err, TP_EUSAGE, "--preset: must be one of %s (got \"%s\")", list,
				       cfg->preset);
	}
	if (src_pixfmt(cfg->fmt) == AV_PIX_FMT_NONE)
		return tp_errpath(err, TP_EUSAGE, cfg->path, "MP4 cannot take %s frames",
			       tp_pixfmt_name(cfg->fmt));
	if (!pick_codec(&x264))
		return tp_errf(err, TP_EIO,
			       "%s: this libavcodec has neither libx264 nor an MPEG-4 encoder",
			       cfg->path);
	if (cfg->settings_only)
		return 0;
	struct stat st;
	if (stat(cfg->path, &st) == 0 && S_ISDIR(st.st_mode))
		return tp_errpath(err, TP_EUSAGE, cfg->path,
			       "is a directory (give a file name such as %s/out.mp4)", cfg->path);
	int rc = tp_mkdirs_for(cfg->path, err);
	if (rc < 0)
		return rc;
	return enc_check_output(cfg->path, cfg->overwrite, err);
}

static const char *mp4_note(const enc_config *cfg)
{
	int x264;
	(void)cfg;
	if (!pick_codec(&x264) || x264)
		return NULL;
	return getenv("TIDEPOOL_MP4_CODEC")
		       ? "MP4: encoding MPEG-4 Part 2 (TIDEPOOL_MP4_CODEC=mpeg4), which web "
			 "browsers do "
			 "not play; --preset is ignored"
		       : "MP4: libx264 is not available in this libavcodec: encoding MPEG-4 Part 2 "
			 "instead (larger files, and web browsers do not play it); --preset is "
			 "ignored";
}

/* ---- open ---------------------------------------------------------------------------- */

static int open_codec(mp4 *m, const enc_config *cfg, const AVCodec *codec, tp_err *err)
{
	AVDictionary *opts = NULL;
	AVRational rate = av_d2q(cfg->fps, 1001000);
	AVCodecContext *cc = avcodec_alloc_context3(codec);
	if (!cc)
		return tp_errf(err, TP_EIO, "out of memory");
	m->cc = cc;
	cc->width = m->cw;
	cc->height = m->ch;
	cc->pix_fmt = AV_PIX_FMT_YUV420P;
	cc->time_base = av_inv_q(rate); /* one tick per frame */
	cc->framerate = rate;
	cc->sample_aspect_ratio = (AVRational){1, 1};
	cc->color_range = AVCOL_RANGE_MPEG;
	cc->colorspace = AVCOL_SPC_BT709;
	cc->color_primaries = AVCOL_PRI_BT709;
	cc->color_trc = AVCOL_TRC_BT709;
	cc->flags |= AV_CODEC_FLAG_BITEXACT;
	if (m->fc->oformat->flags & AVFMT_GLOBALHEADER)
		cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	int crf = cfg->crf >= 0 ? cfg->crf : DEFAULT_CRF;
	if (m->x264) {
		cc->thread_count = X264_THREADS;
		cc->thread_type = FF_THREAD_FRAME; /* frame threads, not sliced */
		av_dict_set(&opts, "preset", cfg->preset ? cfg->preset : DEFAULT_PRESET, 0);
		if (cfg->bitrate > 0)
			cc->bit_rate = cfg->bitrate;
		else
			av_dict_set_int(&opts, "crf", crf, 0);
	} else {
		/* Slice threads would change the bitstream with the core count: one thread. */
		cc->thread_count = 1;
		cc->gop_size = 250;
		cc->max_b_frames = 2;
		if (cfg->bitrate > 0) {
			cc->bit_rate = cfg->bitrate;
		} else {
			cc->flags |= AV_CODEC_FLAG_QSCALE;
			cc->global_quality = FF_QP2LAMBDA * MPEG4_QSCALE_FOR_CRF(crf);
		}
	}
	int rc = avcodec_open2(cc, codec, &opts);
	av_dict_free(&opts);
	if (rc < 0)
		return av_fail(err, rc, m->path,
			       m->x264 ? "cannot open the H.264 encoder"
				       : "cannot open the MPEG-4 encoder");
	return 0;
}

/* x264 puts its version and full option string in an SEI message in the first packet;
 * filter_units drops SEI NAL units (type 6) without re-encoding anything else. */
static int open_bsf(mp4 *m, tp_err *err)
{
	const AVBitStreamFilter *f = av_bsf_get_by_name("filter_units");
	if (!f)
		return 0; /* no version-free stream then, but still a valid, deterministic one */
	int rc = av_bsf_alloc(f, &m->bsf);
	if (rc < 0)
		return av_fail(err, rc, m->path, "cannot set up filter_units");
	rc = avcodec_parameters_from_context(m->bsf->par_in, m->cc);
	if (rc >= 0)
		rc = av_opt_set(m->bsf->priv_data, "remove_types", "6", 0);
	m->bsf->time_base_in = m->cc->time_base;
	if (rc >= 0)
		rc = av_bsf_init(m->bsf);
	if (rc < 0)
		return av_fail(err, rc, m->path, "cannot set up filter_units");
	return 0;
}

static int mp4_open(void *priv, const enc_config *cfg, tp_err *err)
{
	mp4 *m = priv;
	AVDictionary *mopts = NULL;
	int rc = mp4_check(cfg, err);
	if (rc < 0)
		return rc;
	log_reset();
	snprintf(m->path, sizeof m->path, "%s", cfg->path);
	tp_temp_name(cfg->path, m->tmp, sizeof m->tmp);
	m->overwrite = cfg->overwrite;
	m->yuv_rows = tp_yuv420_rows_for(tp_cpu_flags());
	m->w = cfg->w;
	m->h = cfg->h;
	m->cw = cfg->w;
	m->ch = cfg->h;
	m->src_fmt = src_pixfmt(cfg->fmt);
	const AVCodec *codec = pick_codec(&m->x264);

	/* The real name picks the muxer: the temporary's extension is ".tmp-PID". */
	rc = avformat_alloc_output_context2(&m->fc, NULL,
					    tp_has_suffix(cfg->path, ".mov") ? "mov" : "mp4", m->tmp);
	if (rc < 0)
		return av_fail(err, rc, m->path, "cannot set up the MP4 muxer");
	m->fc->flags |= AVFMT_FLAG_BITEXACT;
	if (!(m->st = avformat_new_stream(m->fc, NULL)))
		return tp_errf(err, TP_EIO, "out of memory");
	if ((rc = open_codec(m, cfg, codec, err)) < 0)
		return rc;
	if (m->x264 && (rc = open_bsf(m, err)) < 0)
		return rc;
	rc = avcodec_parameters_from_context(m->st->codecpar, m->cc);
	if (rc < 0)
		return av_fail(err, rc, m->path, "cannot set stream parameters");
	if (m->bsf && (rc = avcodec_parameters_copy(m->st->codecpar, m->bsf->par_out)) < 0)
		return av_fail(err, rc, m->path, "cannot set stream parameters");
	m->st->time_base = m->cc->time_base;
	m->st->avg_frame_rate = m->cc->framerate;

	if (!(m->frame = av_frame_alloc()) || !(m->view = av_frame_alloc()) ||
	    !(m->pkt = av_packet_alloc()))
		return tp_errf(err, TP_EIO, "out of memory");
	m->frame->format = AV_PIX_FMT_YUV420P;
	m->frame->width = m->cw;
	m->frame->height = m->ch;
	if ((rc = av_frame_get_buffer(m->frame, 0)) < 0)
		return av_fail(err, rc, m->path, "cannot allocate a frame");
	/* Accurate rounding and bit-exact C paths: the same pixels on every CPU. */
	m->sws = sws_getContext(m->cw, m->ch, m->src_fmt, m->cw, m->ch, AV_PIX_FMT_YUV420P,
				SWS_BILINEAR | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
	if (!m->sws)
		return tp_errpath(err, TP_EIO, m->path, "cannot set up the colour conversion");
	/* Full-range RGB in, BT.709 limited-range YUV out (matching the stream's tags). */
	sws_setColorspaceDetails(m->sws, sws_getCoefficients(SWS_CS_ITU709), 1,
				 sws_getCoefficients(SWS_CS_ITU709), 0, 0, 1 << 16, 1 << 16);

	rc = avio_open(&m->fc->pb, m->tmp, AVIO_FLAG_WRITE);
	if (rc < 0)
		return av_fail(err, rc, m->tmp, "cannot create");
	m->tmp_exists = 1;
	if (cfg->range && cfg->fingerprint) {
		/* A segment records its frames, the render's and its settings for `tidepool
		 * join` and `tasks --missing` (encode/proof.h); the checksum of its packets is
		 * filled in when it is finished (enc_mp4_seal). */
		enc_proof p = {.first = cfg->first, .last = cfg->first + cfg->frames - 1,
			       .total = cfg->total};
		snprintf(p.fp, sizeof p.fp, "%s", cfg->fingerprint);
		char tag[ENC_PROOF_MAX];
		enc_proof_format_unsealed(&p, tag, sizeof tag);
		av_dict_set(&m->fc->metadata, "comment", tag, 0);
		m->seal = 1;
	}
	if (cfg->record) {
		/* what the file is (encode/record.h): the MP4 muxer keeps "description" */
		const int a = cfg->range ? cfg->first : 0;
		char *json = enc_record_text(cfg->record, a, a + cfg->frames - 1);
		if (!json)
			return tp_errf(err, TP_EIO, "out of memory");
		av_dict_set(&m->fc->metadata, "description", json, 0);
		free(json);
	}
	av_dict_set(&mopts, "movflags", "+faststart", 0);
	rc = avformat_write_header(m->fc, &mopts);
	av_dict_free(&mopts);
	if (rc < 0)
		return av_fail(err, rc, m->tmp, "cannot write the MP4 header");
	m->header_written = 1;
	return 0;
}

/* ---- encoding ------------------------------------------------------------------------ */

static int write_error(mp4 *m, int averr, tp_err *err)
{
	char why[512];
	av_why(averr, why, sizeof why);
	return tp_errpath(err, TP_EIO, m->path, "write failed: %s", why);
}

static int mux(mp4 *m, AVPacket *pkt, tp_err *err)
{
	av_packet_rescale_ts(pkt, m->cc->time_base, m->st->time_base);
	pkt->stream_index = m->st->index;
	int rc = av_write_frame(m->fc, pkt); /* one stream: nothing to interleave */
	av_packet_unref(pkt);
	if (rc >= 0 && m->fc->pb->error < 0)
		rc = m->fc->pb->error;
	return rc < 0 ? write_error(m, rc, err) : 0;
}

/* Passes one encoder packet (or NULL at the end) through the SEI filter to the muxer. */
static int filter_and_mux(mp4 *m, AVPacket *pkt, tp_err *err)
{
	if (!m->bsf)
		return pkt ? mux(m, pkt, err) : 0;
	int rc = av_bsf_send_packet(m->bsf, pkt);
	if (rc < 0)
		return av_fail(err, rc, m->path, "filter_units failed");
	for (;;) {
		rc = av_bsf_receive_packet(m->bsf, m->pkt);
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			return 0;
		if (rc < 0)
			return av_fail(err, rc, m->path, "filter_units failed");
		if ((rc = mux(m, m->pkt, err)) < 0)
			return rc;
	}
}

/* Sends one frame (NULL: flush) and muxes every packet the encoder has ready. */
static int encode(mp4 *m, const AVFrame *frame, tp_err *err)
{
	int rc = avcodec_send_frame(m->cc, frame);
	if (rc < 0)
		return av_fail(err, rc, m->path, "encoding failed");
	for (;;) {
		rc = avcodec_receive_packet(m->cc, m->pkt);
		if (rc == AVERROR(EAGAIN))
			return 0;
		if (rc == AVERROR_EOF)
			return filter_and_mux(m, NULL, err);
		if (rc < 0)
			return av_fail(err, rc, m->path, "encoding failed");
		/* filter_and_mux consumes m->pkt (the filter moves its reference). */
		if ((rc = filter_and_mux(m, m->pkt, err)) < 0)
			return rc;
	}
}

static void keep_buffer(void *opaque, uint8_t *data)
{
	(void)opaque, (void)data; /* the queue's slot: not ours to free */
}

/* A 4:2:0 image as a frame for x264, without copying it: libx264 copies the picture into
 * its own frame inside the encode call, and libavcodec drops its reference when that call
 * returns (every packet is received before mp4_write returns), so the image is free for
 * the next frame as soon as this returns. Saves a 3 MB copy a 1080p frame. */
static int write_view(mp4 *m, const tp_image *src, tp_err *err)
{
	AVFrame *f = m->view;
	f->format = AV_PIX_FMT_YUV420P;
	f->width = m->cw;
	f->height = m->ch;
	const size_t bytes = (size_t)src->stride * (size_t)src->h * 3 / 2;
	f->buf[0] = av_buffer_create(src->pixels, bytes, keep_buffer, NULL, AV_BUFFER_FLAG_READONLY);
	if (!f->buf[0])
		return av_fail(err, AVERROR(ENOMEM), m->path, "cannot allocate a frame");
	for (int k = 0; k < 3; k++) {
		ptrdiff_t ls;
		f->data[k] = (uint8_t *)tp_image_plane(src, k, &ls);
		f->linesize[k] = (int)ls;
	}
	f->pts = m->frames++;
	int rc = encode(m, f, err);
	av_frame_unref(f);
	return rc;
}

static int mp4_write(void *priv, int index, const tp_image *img, tp_err *err)
{
	mp4 *m = priv;
	if (img->w != m->w || img->h != m->h || src_pixfmt(img->fmt) != (int)m->src_fmt)
		return tp_errf(err, TP_EIO, "%s: frame %d is %dx%d %s, expected %dx%d", m->path,
			       index, img->w, img->h, tp_pixfmt_name(img->fmt), m->w, m->h);
	const tp_image *src = img;
	if (src->fmt == TP_YUV420 && m->x264)
		return write_view(m, src, err);
	/* The encoder may still hold the previous frame (MPEG-4 B-frames): never overwrite it. */
	int rc = av_frame_make_writable(m->frame);
	if (rc < 0)
		return av_fail(err, rc, m->path, "cannot allocate a frame");
	if (src->fmt == TP_YUV420) {
		/* Rendered as 4:2:0 already (render.h: the same bytes as converting RGB). */
		for (int k = 0; k < 3; k++) {
			ptrdiff_t ls;
			const uint8_t *pl = tp_image_plane(src, k, &ls);
			av_image_copy_plane(m->frame->data[k], m->frame->linesize[k], pl, (int)ls,
					    k ? m->cw / 2 : m->cw, k ? m->ch / 2 : m->ch);
		}
	} else if (src->fmt == TP_RGB8) {
		/* The colour renders: our own BT.709 conversion, several times faster than
		 * libswscale's bit-exact path, the same bytes on every CPU. */
		uint8_t *const pl[3] = {m->frame->data[0], m->frame->data[1], m->frame->data[2]};
		const ptrdiff_t ls[3] = {m->frame->linesize[0], m->frame->linesize[1],
					 m->frame->linesize[2]};
		for (int j = 0; j < m->ch / 2; j++)
			tp_rgb_to_yuv420_pair(m->yuv_rows, src, j, pl, ls);
	} else {
		const uint8_t *planes[4] = {src->pixels};
		const int strides[4] = {(int)src->stride};
		sws_scale(m->sws, planes, strides, 0, m->ch, m->frame->data, m->frame->linesize);
	}
	m->frame->pts = m->frames++;
	return encode(m, m->frame, err);
}

/* ---- close --------------------------------------------------------------------------- */

static int finish(mp4 *m, tp_err *err)
{
	int rc = encode(m, NULL, err);
	if (rc < 0)
		return rc;
	/* The trailer writes the index and, for faststart, rewrites the file with it first. */
	if ((rc = av_write_trailer(m->fc)) < 0 || (rc = m->fc->pb->error) < 0)
		return write_error(m, rc, err);
	rc = avio_closep(&m->fc->pb);
	if (rc < 0)
		return write_error(m, rc, err);
	return m->seal ? enc_mp4_seal(m->tmp, m->path, err) : 0;
}

/* Renames the finished temporary into place. Without -y, link() refuses to replace a
 * file that appeared while rendering; where links are unsupported, rename() it is. */
static int commit(mp4 *m, tp_err *err)
{
	if (!m->overwrite) {
		if (link(m->tmp, m->path) == 0) {
			unlink(m->tmp);
			return 0;
		}
		if (errno == EEXIST) {
			unlink(m->tmp);
			return tp_errpath(err, TP_EIO, m->path,
				       "already exists (created during the render; use -y)");
		}
	}
	return tp_commit_file(m->tmp, m->path, err);
}

static void release(mp4 *m)
{
	if (m->fc) {
		if (m->fc->pb)
			avio_closep(&m->fc->pb);
		avformat_free_context(m->fc);
		m->fc = NULL;
	}
	avcodec_free_context(&m->cc);
	av_bsf_free(&m->bsf);
	av_frame_free(&m->frame);
	av_frame_free(&m->view);
	av_packet_free(&m->pkt);
	sws_freeContext(m->sws);
	m->sws = NULL;
}

static int mp4_close(void *priv, enc_close_mode mode, tp_err *err)
{
	mp4 *m = priv;
	int rc = 0;
	if (mode == ENC_CLOSE_DONE && m->header_written && m->frames == 0)
		rc = tp_errf(err, TP_EIO, "%s: no frames to encode", m->path);
	else if (mode != ENC_CLOSE_FAILED && m->header_written && m->frames > 0) {
		rc = finish(m, err);
		if (rc == 0) {
			rc = commit(m, err);
			m->tmp_exists = 0; /* committed, or removed by tp_commit_file */
		}
	}
	release(m);
	if (m->tmp_exists) {
		unlink(m->tmp);
		m->tmp_exists = 0;
	}
	return rc;
}

const tp_encoder tp_encoder_mp4 = {
	.name = "mp4",
	.description = "H.264 MP4 (libx264 through libavcodec; MPEG-4 Part 2 without libx264)",
	.priv_size = sizeof(mp4),
	.probe = mp4_probe,
	.check = mp4_check,
	.open = mp4_open,
	.write_frame = mp4_write,
	.close = mp4_close,
	.note = mp4_note,
	.caps = ENC_CAP_YUV420 | ENC_CAP_LOOKAHEAD | ENC_CAP_RATE,
};
