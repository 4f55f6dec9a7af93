/* mp4_read.c - MP4 frames to RGB8 through libavformat, libavcodec and libswscale. */
#include "encode/mp4_read.h"
#include "util/fsutil.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under the fuzzer (tests/fuzz/fuzz_mp4.c), the work one input may cause is capped, as
 * OSS-Fuzz's FFmpeg harnesses do: one decoder thread (frame threads give each thread its
 * own copy of the decoder's context, allocated and cleared for every input), and a short
 * probe. The pixel limit is lowered in mp4_read.h. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define DEC_THREADS 1
#define PROBE_OPTS "probesize=32768:analyzeduration=500000:fpsprobesize=4"
#else
#define DEC_THREADS 0 /* as many as libavcodec likes: the pictures are the same */
#define PROBE_OPTS ""
#endif

struct enc_mp4_reader {
	char path[4096];
	AVFormatContext *fmt;
	AVCodecContext *dec;
	struct SwsContext *sws;
	AVPacket *pkt;
	AVFrame *frame;
	int stream;
	int w, h, frames;
	int draining, done;
};

static int av_fail(tp_err *err, int code, const char *path, const char *what, int averr)
{
	char buf[AV_ERROR_MAX_STRING_SIZE] = "";
	av_strerror(averr, buf, sizeof buf);
	return tp_errf(err, code, "%s: %s (%s)", path, what, buf);
}

static int open_input(enc_mp4_reader *r, tp_err *err)
{
	/* Only a regular file: a FIFO would block libavformat's open for ever. */
	FILE *f = NULL;
	int ret = tp_fopen_regular(r->path, "a video file", &f, err);
	if (ret < 0)
		return ret;
	fclose(f);
	AVDictionary *opts = NULL;
	if (PROBE_OPTS[0] && av_dict_parse_string(&opts, PROBE_OPTS, "=", ":", 0) < 0) {
		av_dict_free(&opts);
		return tp_errf(err, TP_EIO, "out of memory");
	}
	ret = avformat_open_input(&r->fmt, r->path, NULL, &opts);
	av_dict_free(&opts);
	if (ret < 0)
		return av_fail(err, ret == AVERROR(ENOENT) ? TP_EIO : TP_EINPUT, r->path,
			       "cannot open as a video", ret);
	ret = avformat_find_stream_info(r->fmt, NULL);
	if (ret < 0)
		return av_fail(err, TP_EINPUT, r->path, "cannot read stream info", ret);
	ret = av_find_best_stream(r->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	if (ret < 0)
		return tp_errf(err, TP_EINPUT, "%s: no video stream", r->path);
	r->stream = ret;
	return 0;
}

/* Frame count: the container's when it states one (MP4's sample table does), else one
 * demux-only pass over the packets, which is cheap next to decoding. */
static int count_frames(enc_mp4_reader *r, tp_err *err)
{
	AVStream *st = r->fmt->streams[r->stream];
	if (st->nb_frames > 0 && st->nb_frames < (1 << 30)) {
		r->frames = (int)st->nb_frames;
		return 0;
	}
	int n = 0, ret;
	while ((ret = av_read_frame(r->fmt, r->pkt)) >= 0) {
		n += r->pkt->stream_index == r->stream;
		av_packet_unref(r->pkt);
	}
	if (ret != AVERROR_EOF)
		return av_fail(err, TP_EINPUT, r->path, "cannot read packets", ret);
	r->frames = n;
	/* Start again from the top for decoding. */
	avformat_close_input(&r->fmt);
	return open_input(r, err);
}

int enc_mp4_open(const char *path, enc_mp4_reader **out, tp_err *err)
{
	*out = NULL;
	enc_mp4_reader *r = calloc(1, sizeof *r);
	if (!r)
		return tp_errf(err, TP_EIO, "out of memory");
	int rc;
	if (strlen(path) >= sizeof r->path) {
		rc = tp_errf(err, TP_EINPUT, "%s: path too long", path);
		goto fail;
	}
	snprintf(r->path, sizeof r->path, "%s", path);
	enc_av_log_install();
	/* Demuxers size tables from the file's own counts: a few hundred bytes of MP4 can ask
	 * for 564 MB (found by tests/fuzz/fuzz_mp4). No single libav allocation may exceed
	 * ENC_AV_MAX_ALLOC; the largest legitimate one, an RGB24 frame at the pixel limit, is
	 * 192 MiB. */
	av_max_alloc(ENC_AV_MAX_ALLOC);
	r->pkt = av_packet_alloc();
	r->frame = av_frame_alloc();
	if (!r->pkt || !r->frame) {
		rc = tp_errf(err, TP_EIO, "out of memory");
		goto fail;
	}
	rc = open_input(r, err);
	if (rc < 0)
		goto fail;
	rc = count_frames(r, err);
	if (rc < 0)
		goto fail;
	AVCodecParameters *par = r->fmt->streams[r->stream]->codecpar;
	if ((double)par->width * par->height > ENC_MP4_MAX_PIXELS) {
		rc = tp_errf(err, TP_EINPUT, "%s: %dx%d video is more than %d pixels a frame (the limit)",
			     path, par->width, par->height, ENC_MP4_MAX_PIXELS);
		goto fail;
	}
	const AVCodec *codec = avcodec_find_decoder(par->codec_id);
	if (!codec) {
		rc = tp_errf(err, TP_EINPUT, "%s: no decoder for codec '%s'", path,
			     avcodec_get_name(par->codec_id));
		goto fail;
	}
	r->dec = avcodec_alloc_context3(codec);
	if (!r->dec) {
		rc = tp_errf(err, TP_EIO, "out of memory");
		goto fail;
	}
	int ret = avcodec_parameters_to_context(r->dec, par);
	if (ret < 0) {
		rc = av_fail(err, TP_EINPUT, path, "bad codec parameters", ret);
		goto fail;
	}
	r->dec->flags |= AV_CODEC_FLAG_BITEXACT;
	r->dec->thread_count = DEC_THREADS; /* the same pictures whatever the threading */
	r->dec->max_pixels = ENC_MP4_MAX_PIXELS; /* a size change mid-stream is bounded too */
	ret = avcodec_open2(r->dec, codec, NULL);
	if (ret < 0) {
		rc = av_fail(err, TP_EINPUT, path, "cannot open decoder", ret);
		goto fail;
	}
	r->w = par->width;
	r->h = par->height;
	if (r->w <= 0 || r->h <= 0) {
		rc = tp_errf(err, TP_EINPUT, "%s: video has no size", path);
		goto fail;
	}
	*out = r;
	return 0;
fail:
	enc_mp4_close(r);
	return rc;
}

void enc_mp4_close(enc_mp4_reader *r)
{
	if (!r)
		return;
	sws_freeContext(r->sws);
	avcodec_free_context(&r->dec);
	avformat_close_input(&r->fmt);
	av_packet_free(&r->pkt);
	av_frame_free(&r->frame);
	free(r);
}

int enc_mp4_width(const enc_mp4_reader *r) { return r->w; }
int enc_mp4_height(const enc_mp4_reader *r) { return r->h; }
int enc_mp4_frames(const enc_mp4_reader *r) { return r->frames; }

/* YUV -> RGB8 with the frame's own matrix and range, so BT.709 video is not decoded with
 * BT.601 colours. Created on the first frame, when the decoder's pixel format is known. */
static int convert(enc_mp4_reader *r, const AVFrame *f, tp_image *img, tp_err *err)
{
	if (f->width != r->w || f->height != r->h)
		return tp_errf(err, TP_EINPUT, "%s: frame size changed to %dx%d mid-stream", r->path,
			       f->width, f->height);
	if (!r->sws) {
		enum AVPixelFormat src = (enum AVPixelFormat)f->format;
		int full_in = f->color_range == AVCOL_RANGE_JPEG;
		/* The deprecated yuvj formats mean full range; sws wants the plain format. */
		switch (src) {
		case AV_PIX_FMT_YUVJ420P: src = AV_PIX_FMT_YUV420P; full_in = 1; break;
		case AV_PIX_FMT_YUVJ422P: src = AV_PIX_FMT_YUV422P; full_in = 1; break;
		case AV_PIX_FMT_YUVJ444P: src = AV_PIX_FMT_YUV444P; full_in = 1; break;
		default: break;
		}
		r->sws = sws_getContext(r->w, r->h, src, r->w, r->h, AV_PIX_FMT_RGB24,
					SWS_BICUBIC | SWS_BITEXACT | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
					NULL, NULL, NULL);
		if (!r->sws)
			return tp_errf(err, TP_EINPUT, "%s: cannot convert pixel format %s to rgb24",
				       r->path, av_get_pix_fmt_name(src));
		int cs = SWS_CS_DEFAULT;
		switch (f->colorspace) {
		case AVCOL_SPC_BT709: cs = SWS_CS_ITU709; break;
		case AVCOL_SPC_FCC: cs = SWS_CS_FCC; break;
		case AVCOL_SPC_SMPTE240M: cs = SWS_CS_SMPTE240M; break;
		case AVCOL_SPC_BT2020_NCL: case AVCOL_SPC_BT2020_CL: cs = SWS_CS_BT2020; break;
		default: break;
		}
		const int *coef = sws_getCoefficients(cs);
		sws_setColorspaceDetails(r->sws, coef, full_in, sws_getCoefficients(SWS_CS_DEFAULT), 1,
					 0, 1 << 16, 1 << 16);
	}
	uint8_t *dst[4] = { img->pixels, NULL, NULL, NULL };
	int dst_stride[4] = { (int)img->stride, 0, 0, 0 };
	sws_scale(r->sws, (const uint8_t *const *)f->data, f->linesize, 0, r->h, dst, dst_stride);
	return 0;
}

int enc_mp4_next(enc_mp4_reader *r, tp_image *img, tp_err *err)
{
	if (img->fmt != TP_RGB8 || img->w != r->w || img->h != r->h)
		return tp_errf(err, TP_EIO, "%s: output image must be %dx%d rgb24", r->path, r->w, r->h);
	while (!r->done) {
		int ret = avcodec_receive_frame(r->dec, r->frame);
		if (ret == 0) {
			int rc = convert(r, r->frame, img, err);
			av_frame_unref(r->frame);
			return rc < 0 ? rc : 1;
		}
		if (ret == AVERROR_EOF) {
			r->done = 1;
			break;
		}
		if (ret != AVERROR(EAGAIN))
			return av_fail(err, TP_EINPUT, r->path, "cannot decode", ret);
		if (r->draining) /* EAGAIN after a flush would loop forever */
			return tp_errf(err, TP_EINPUT, "%s: decoder stalled", r->path);
		ret = av_read_frame(r->fmt, r->pkt);
		if (ret == AVERROR_EOF) {
			r->draining = 1;
			ret = avcodec_send_packet(r->dec, NULL);
		} else if (ret < 0) {
			return av_fail(err, TP_EINPUT, r->path, "cannot read", ret);
		} else if (r->pkt->stream_index != r->stream) {
			av_packet_unref(r->pkt);
			continue;
		} else {
			ret = avcodec_send_packet(r->dec, r->pkt);
			av_packet_unref(r->pkt);
		}
		if (ret < 0 && ret != AVERROR_EOF)
			return av_fail(err, TP_EINPUT, r->path, "cannot decode", ret);
	}
	return 0;
}
