/*
 * test_mp4.c - the MP4 encoder, checked by decoding what it wrote with libavformat and
 * libavcodec: codec, pixel format, frame count, frame rate, duration, picture quality,
 * byte-identical reruns, faststart, temporaries, interrupted and failed renders, write
 * errors (RLIMIT_FSIZE always; a full tmpfs when mounting is permitted). The mp4_cli
 * suite does the same end to end through `tidepool render` (TP_BIN).
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "cli_util.h"
#include "encode/encoder.h"
#include "encode/mp4_read.h"
#include "util/png.h"
#include "util/cpu.h"
#include "util/image.h"
#include "tmpdir.h"

extern const tp_encoder tp_encoder_mp4;

/* ---- fixtures and helpers ------------------------------------------------------------ */

static char dir[64];

static void make_dir(void)
{
	tp_tmpdir_make(dir, sizeof dir, "mp4");
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char p[512];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (unlink(p) != 0) { /* the tmpfs of full_disk_*, if an assertion stopped it */
			umount2(p, MNT_DETACH);
			rmdir(p);
		}
	}
	closedir(d);
	rmdir(dir);
}

TestSuite(mp4, .init = make_dir, .fini = remove_dir);

static void path_in(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

/* Names in the test directory other than `except` (NULL: any), e.g. leftover temporaries. */
static int count_entries(const char *except)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    (!except || strcmp(e->d_name, except)))
			n++;
	closedir(d);
	return n;
}

/* Smooth moving content (a gradient and a bright square drifting right), like a render. */
static void make_frame(tp_image *img, int k)
{
	for (int y = 0; y < img->h; y++) {
		uint8_t *r = tp_image_row(img, y);
		for (int x = 0; x < img->w; x++) {
			int in = x >= 4 + 2 * k && x < 16 + 2 * k && y >= img->h / 4 &&
				 y < img->h / 4 + 12;
			r[3 * x + 0] = (uint8_t)(in ? 240 : 40 + (x * 150) / img->w);
			r[3 * x + 1] = (uint8_t)(in ? 230 : 60 + (y * 120) / img->h);
			r[3 * x + 2] = (uint8_t)(in ? 200 : 120 + ((x + y + k) % 64));
		}
	}
}

static enc_config config(const char *path, int w, int h, double fps, int frames)
{
	return (enc_config){.path = path,
			    .w = w,
			    .h = h,
			    .fps = fps,
			    .frames = frames,
			    .fmt = TP_RGB8,
			    .overwrite = 0,
			    .crf = -1,
			    .preset = NULL,
			    .bitrate = 0};
}

static int failed_at; /* frame whose write_frame failed in encode_n, -1: none */

/* Encodes n synthetic frames and closes with `mode`; returns the first error. */
static int encode_n(const enc_config *cfg, int n, enc_close_mode mode, tp_err *err)
{
	const tp_encoder *e = &tp_encoder_mp4;
	void *priv = calloc(1, e->priv_size);
	tp_image img;
	cr_assert_eq(tp_image_alloc(&img, cfg->w, cfg->h, TP_RGB8), 0);
	int rc = e->check(cfg, err);
	if (rc == 0)
		rc = e->open(priv, cfg, err);
	failed_at = -1;
	for (int k = 0; k < n && rc == 0; k++) {
		make_frame(&img, k);
		rc = e->write_frame(priv, k, &img, err);
		if (rc < 0)
			failed_at = k;
	}
	tp_err cerr;
	int crc = e->close(priv, rc < 0 ? ENC_CLOSE_FAILED : mode, &cerr);
	if (rc == 0 && crc < 0) {
		rc = crc;
		*err = cerr;
	}
	tp_image_free(&img);
	free(priv);
	return rc;
}

typedef struct decoded {
	char codec[32], pixfmt[32];
	int w, h;        /* decoded picture size */
	AVRational rate; /* the stream's average frame rate */
	double duration; /* seconds */
	int nframes;
	tp_image frames[64]; /* RGB8, converted with the stream's BT.709 limited range */
	tp_image luma[64];   /* GRAY8: the decoded Y plane as it is */
} decoded;

static void decoded_free(decoded *d)
{
	for (int i = 0; i < 64; i++) {
		tp_image_free(&d->frames[i]);
		tp_image_free(&d->luma[i]);
	}
}

/* Demuxes and decodes every frame of path; returns 0, or -1 if it does not play. */
static int decode_file(const char *path, decoded *d)
{
	AVFormatContext *fc = NULL;
	AVCodecContext *cc = NULL;
	AVPacket *pkt = av_packet_alloc();
	AVFrame *fr = av_frame_alloc();
	struct SwsContext *sws = NULL;
	int ok = -1;
	memset(d, 0, sizeof *d);
	if (avformat_open_input(&fc, path, NULL, NULL) < 0 ||
	    avformat_find_stream_info(fc, NULL) < 0)
		goto done;
	int si = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	if (si < 0)
		goto done;
	AVStream *st = fc->streams[si];
	const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
	if (!dec || !(cc = avcodec_alloc_context3(dec)) ||
	    avcodec_parameters_to_context(cc, st->codecpar) < 0 || avcodec_open2(cc, dec, NULL) < 0)
		goto done;
	snprintf(d->codec, sizeof d->codec, "%s", avcodec_get_name(st->codecpar->codec_id));
	snprintf(d->pixfmt, sizeof d->pixfmt, "%s",
		 av_get_pix_fmt_name((enum AVPixelFormat)st->codecpar->format));
	d->rate = st->avg_frame_rate;
	d->duration = fc->duration / (double)AV_TIME_BASE;
	int eof = 0;
	while (!eof) {
		int rc = av_read_frame(fc, pkt);
		if (rc < 0) {
			eof = 1;
			avcodec_send_packet(cc, NULL);
		} else if (pkt->stream_index == si) {
			rc = avcodec_send_packet(cc, pkt);
			av_packet_unref(pkt);
			if (rc < 0)
				goto done;
		} else {
			av_packet_unref(pkt);
			continue;
		}
		while (avcodec_receive_frame(cc, fr) == 0) {
			d->w = fr->width;
			d->h = fr->height;
			if (d->nframes < 64) {
				tp_image *im = &d->frames[d->nframes];
				tp_image_alloc(im, fr->width, fr->height, TP_RGB8);
				sws = sws_getCachedContext(sws, fr->width, fr->height, fr->format,
							   fr->width, fr->height, AV_PIX_FMT_RGB24,
							   SWS_BILINEAR | SWS_ACCURATE_RND |
								   SWS_FULL_CHR_H_INT,
							   NULL, NULL, NULL);
				sws_setColorspaceDetails(sws, sws_getCoefficients(SWS_CS_ITU709), 0,
							 sws_getCoefficients(SWS_CS_ITU709), 1, 0,
							 1 << 16, 1 << 16);
				uint8_t *dst[4] = {im->pixels};
				int dstride[4] = {(int)im->stride};
				sws_scale(sws, (const uint8_t *const *)fr->data, fr->linesize, 0,
					  fr->height, dst, dstride);
				tp_image *y = &d->luma[d->nframes];
				tp_image_alloc(y, fr->width, fr->height, TP_GRAY8);
				for (int r = 0; r < fr->height; r++)
					memcpy(tp_image_row(y, r),
					       fr->data[0] + (ptrdiff_t)r * fr->linesize[0],
					       (size_t)fr->width);
			}
			d->nframes++;
			av_frame_unref(fr);
		}
	}
	ok = 0;
done:
	sws_freeContext(sws);
	av_frame_free(&fr);
	av_packet_free(&pkt);
	avcodec_free_context(&cc);
	avformat_close_input(&fc);
	return ok;
}

/* PSNR over the w x h top-left region of two RGB8 images, in dB. */
static double psnr(const tp_image *a, const tp_image *b, int w, int h)
{
	double se = 0;
	for (int y = 0; y < h; y++) {
		const uint8_t *p = tp_image_row(a, y), *q = tp_image_row(b, y);
		for (int x = 0; x < 3 * w; x++)
			se += (double)(p[x] - q[x]) * (p[x] - q[x]);
	}
	double mse = se / (3.0 * w * h);
	return mse == 0 ? 99 : 10 * log10(255.0 * 255.0 / mse);
}

/* Luma PSNR of decoded Y against the BT.709 limited-range luma of an RGB8 image, in dB:
 * Y = 16 + 219 (0.2126 R + 0.7152 G + 0.0722 B) / 255. Unlike RGB PSNR it does not count
 * the colour smearing that 4:2:0 chroma subsampling causes at sharp coloured edges. */
static double psnr_luma(const tp_image *rgb, const tp_image *y)
{
	double se = 0;
	for (int r = 0; r < rgb->h; r++) {
		const uint8_t *p = tp_image_row(rgb, r), *q = tp_image_row(y, r);
		for (int x = 0; x < rgb->w; x++) {
			double want = 16 + 219 *
						   (0.2126 * p[3 * x] + 0.7152 * p[3 * x + 1] +
						    0.0722 * p[3 * x + 2]) /
						   255;
			se += (want - q[x]) * (want - q[x]);
		}
	}
	double mse = se / ((double)rgb->w * rgb->h);
	return mse == 0 ? 99 : 10 * log10(255.0 * 255.0 / mse);
}

static uint8_t *read_all(const char *path, long *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	*n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)*n + 1);
	cr_assert_eq(fread(b, 1, (size_t)*n, f), (size_t)*n);
	fclose(f);
	return b;
}

static int contains(const uint8_t *b, long n, const char *s)
{
	size_t k = strlen(s);
	for (long i = 0; i + (long)k <= n; i++)
		if (!memcmp(b + i, s, k))
			return 1;
	return 0;
}

/* ---- the encoder on its own ---------------------------------------------------------- */

/* The RGB -> yuv420p conversion: every vector path writes the C path's bytes, and the
 * values are BT.709 limited range (luma within one level of the exact matrix; chroma too,
 * on 2x2 blocks of one colour, so the mean is that colour). */
Test(mp4, rgb_to_yuv420_is_bt709_and_the_same_on_every_path)
{
	enum { W = 518, H = 6 }; /* a width that leaves every remainder of the vector loops */
	static uint8_t rgb[H][3 * W], yv[4][H][W], cb[4][H / 2][W / 2], cr[4][H / 2][W / 2];
	unsigned st = 7;
	for (int y = 0; y < H; y += 2)
		for (int x = 0; x < W; x += 2)
			for (int c = 0; c < 3; c++) {
				st = st * 1664525u + 1013904223u;
				uint8_t v = (uint8_t)(st >> 24);
				if (x % 4 == 0) /* every other block: one colour over its 2x2 */
					rgb[y][3 * x + c] = rgb[y][3 * x + 3 + c] =
						rgb[y + 1][3 * x + c] = rgb[y + 1][3 * x + 3 + c] =
							v;
				else {
					rgb[y][3 * x + c] = v;
					rgb[y][3 * x + 3 + c] = (uint8_t)(v * 7);
					rgb[y + 1][3 * x + c] = (uint8_t)(v * 13);
					rgb[y + 1][3 * x + 3 + c] = (uint8_t)(255 - v);
				}
			}
	/* C, the baseline's vectorised loop, AVX2, and all this CPU has (AVX-512) */
	static const unsigned caps[4] = {0, TP_CPU_FLAG_SIMD, TP_CPU_FLAG_SIMD | TP_CPU_FLAG_AVX2,
					 ~0u};
	static const char *const names[4] = {"C", "vectorised", "AVX2", "AVX-512"};
	for (int level = 0; level < 4; level++) {
		const tp_yuv420_rows_fn rows = tp_yuv420_rows_for(tp_cpu_flags() & caps[level]);
		for (int y = 0; y < H; y += 2)
			rows(rgb[y], rgb[y + 1], W, yv[level][y], yv[level][y + 1], cb[level][y / 2],
			     cr[level][y / 2]);
	}
	for (int level = 1; level < 4; level++) {
		cr_assert_eq(memcmp(yv[0], yv[level], sizeof yv[0]), 0, "luma: %s path differs from C",
			     names[level]);
		cr_assert_eq(memcmp(cb[0], cb[level], sizeof cb[0]), 0, "Cb: %s path differs from C",
			     names[level]);
		cr_assert_eq(memcmp(cr[0], cr[level], sizeof cr[0]), 0, "Cr: %s path differs from C",
			     names[level]);
	}
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			const double r = rgb[y][3 * x], g = rgb[y][3 * x + 1],
				     b = rgb[y][3 * x + 2];
			const double yl = 0.2126 * r + 0.7152 * g + 0.0722 * b; /* 0..255 */
			cr_assert_leq(fabs(yv[0][y][x] - (16 + 219 * yl / 255)), 1.0, "Y at %d,%d",
				      x, y);
			if (x % 4 == 0 && y % 2 == 0) {
				double u = 128 + 224 * (b - yl) / (1.8556 * 255),
				       v = 128 + 224 * (r - yl) / (1.5748 * 255);
				cr_assert_leq(fabs(cb[0][y / 2][x / 2] - u), 1.0,
					      "Cb at %d,%d: %d vs %.2f", x, y, cb[0][y / 2][x / 2],
					      u);
				cr_assert_leq(fabs(cr[0][y / 2][x / 2] - v), 1.0, "Cr at %d,%d", x,
					      y);
			}
		}
}

Test(mp4, probe_claims_mp4_m4v_mov_only)
{
	cr_assert_gt(tp_encoder_mp4.probe("out/pond.mp4"), 0);
	cr_assert_gt(tp_encoder_mp4.probe("a.M4V"), 0);
	cr_assert_gt(tp_encoder_mp4.probe("a.mov"), 0);
	cr_assert_eq(tp_encoder_mp4.probe("a.png"), 0);
	cr_assert_eq(tp_encoder_mp4.probe("mp4"), 0);
	cr_assert_eq(enc_find_for_path("x/y.mp4"), &tp_encoder_mp4);
	cr_assert_eq(enc_find("mp4"), &tp_encoder_mp4);
}

Test(mp4, h264_stream_properties_and_quality)
{
	char p[256];
	path_in(p, sizeof p, "a.mp4");
	enc_config cfg = config(p, 96, 64, 24, 12);
	tp_err err;
	cr_assert_eq(encode_n(&cfg, 12, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	cr_assert_null(tp_encoder_mp4.note(&cfg), "libx264 is installed on the test machines");

	decoded d;
	cr_assert_eq(decode_file(p, &d), 0);
	cr_assert_str_eq(d.codec, "h264");
	cr_assert_str_eq(d.pixfmt, "yuv420p");
	cr_assert_eq(d.w, 96);
	cr_assert_eq(d.h, 64);
	cr_assert_eq(d.nframes, 12);
	cr_assert_eq(d.rate.num, 24);
	cr_assert_eq(d.rate.den, 1);
	cr_assert_float_eq(d.duration, 0.5, 1e-3);
	tp_image src;
	tp_image_alloc(&src, 96, 64, TP_RGB8);
	for (int k = 0; k < 12; k++) {
		make_frame(&src, k);
		double q = psnr(&src, &d.frames[k], 96, 64);
		/* CRF 18 on hard-edged synthetic content gives ~35 dB; decoding with the wrong
		 * (BT.601) matrix would give ~31.5 dB. */
		cr_assert_gt(q, 34.0, "frame %d: PSNR %.1f dB", k, q);
	}
	tp_image_free(&src);
	decoded_free(&d);
	cr_assert_eq(count_entries("a.mp4"), 0, "no temporary left behind");
}

Test(mp4, faststart_and_no_version_or_time_metadata)
{
	char p[256];
	path_in(p, sizeof p, "fs.mp4");
	enc_config cfg = config(p, 64, 48, 30, 6);
	tp_err err;
	cr_assert_eq(encode_n(&cfg, 6, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	long n;
	uint8_t *b = read_all(p, &n);
	/* Top-level boxes: ftyp, then moov before mdat (playable while downloading). */
	long moov = -1, mdat = -1;
	for (long i = 0; i + 8 <= n;) {
		uint32_t sz = (uint32_t)b[i] << 24 | (uint32_t)b[i + 1] << 16 |
			      (uint32_t)b[i + 2] << 8 | b[i + 3];
		if (!memcmp(b + i + 4, "moov", 4))
			moov = i;
		if (!memcmp(b + i + 4, "mdat", 4))
			mdat = i;
		cr_assert_geq(sz, 8u);
		i += sz;
	}
	cr_assert(moov >= 0 && mdat > moov, "moov at %ld, mdat at %ld", moov, mdat);
	cr_assert_not(contains(b, n, "Lavf"), "muxer version string");
	cr_assert_not(contains(b, n, "Lavc"), "codec version string");
	cr_assert_not(contains(b, n, "x264 - core"), "x264 version SEI");
	/* mvhd creation and modification times (version 0: bytes 12..19 of the box) are 0. */
	long mvhd = -1;
	for (long i = moov; i + 4 <= n && mvhd < 0; i++)
		if (!memcmp(b + i, "mvhd", 4))
			mvhd = i - 4;
	cr_assert_geq(mvhd, 0);
	for (int i = 12; i < 20; i++)
		cr_assert_eq(b[mvhd + i], 0, "mvhd time byte %d", i);
	free(b);
}

Test(mp4, same_frames_give_identical_bytes)
{
	char p1[256], p2[256];
	path_in(p1, sizeof p1, "r1.mp4");
	path_in(p2, sizeof p2, "r2.mp4");
	tp_err err;
	/* Big enough for x264's frame threads and lookahead to be busy. */
	enc_config c1 = config(p1, 320, 192, 30, 40), c2 = config(p2, 320, 192, 30, 40);
	cr_assert_eq(encode_n(&c1, 40, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	cr_assert_eq(encode_n(&c2, 40, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	long n1, n2;
	uint8_t *b1 = read_all(p1, &n1), *b2 = read_all(p2, &n2);
	cr_assert_eq(n1, n2);
	cr_assert_eq(memcmp(b1, b2, (size_t)n1), 0);
	free(b1);
	free(b2);
}

/* H.264 4:2:0 crops in steps of 2 pixels: an odd size is refused by check(), before
 * anything is rendered, naming the even sizes to use (an MP4 always has the render's
 * size; it used to be padded to 34x18 without a word). */
Test(mp4, odd_size_is_refused_with_the_even_sizes)
{
	char p[256];
	path_in(p, sizeof p, "odd.mp4");
	enc_config cfg = config(p, 33, 17, 25, 4);
	tp_err err;
	cr_assert_eq(encode_n(&cfg, 4, ENC_CLOSE_DONE, &err), TP_EUSAGE);
	cr_assert(strstr(err.msg, "33x17: H.264 in 4:2:0 needs an even width and height") &&
			  strstr(err.msg, "render at 32x16 or 34x18"),
		  "%s", err.msg);
	cr_assert(access(p, F_OK) != 0);
	cfg = config(p, 34, 18, 25, 4);
	cr_assert_eq(encode_n(&cfg, 4, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	decoded d;
	cr_assert_eq(decode_file(p, &d), 0);
	cr_assert(d.w == 34 && d.h == 18 && d.nframes == 4);
	decoded_free(&d);
}

Test(mp4, fractional_fps_is_the_time_base)
{
	char p[256];
	path_in(p, sizeof p, "ntsc.mp4");
	enc_config cfg = config(p, 32, 32, 30000.0 / 1001.0, 30);
	tp_err err;
	cr_assert_eq(encode_n(&cfg, 30, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	decoded d;
	cr_assert_eq(decode_file(p, &d), 0);
	cr_assert_eq(d.rate.num, 30000);
	cr_assert_eq(d.rate.den, 1001);
	cr_assert_eq(d.nframes, 30);
	cr_assert_float_eq(d.duration, 1.001, 1e-3);
	decoded_free(&d);
}

Test(mp4, crf_preset_and_bitrate_change_the_stream)
{
	char p[256];
	long size[3];
	tp_err err;
	const char *names[3] = {"q18.mp4", "q40.mp4", "br.mp4"};
	for (int i = 0; i < 3; i++) {
		path_in(p, sizeof p, names[i]);
		enc_config cfg = config(p, 160, 96, 30, 15);
		cfg.preset = "veryfast";
		if (i == 1)
			cfg.crf = 40;
		if (i == 2)
			cfg.bitrate = 20000;
		cr_assert_eq(encode_n(&cfg, 15, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
		struct stat st;
		cr_assert_eq(stat(p, &st), 0);
		size[i] = (long)st.st_size;
	}
	cr_assert_lt(size[1], size[0], "crf 40 (%ld bytes) vs crf 18 (%ld)", size[1], size[0]);
	/* 20 kbit/s for half a second is ~1.3 kB of video; crf 18 takes far more here. */
	cr_assert_lt(size[2], size[0] / 2, "20 kbit/s: %ld bytes vs crf 18: %ld", size[2], size[0]);
}

Test(mp4, bad_options_are_refused_before_anything_is_written)
{
	char p[256];
	tp_err err;
	path_in(p, sizeof p, "x.mp4");
	enc_config cfg = config(p, 64, 64, 30, 1);
	cfg.preset = "quick";
	cr_assert_eq(tp_encoder_mp4.check(&cfg, &err), TP_EUSAGE);
	cr_assert(strstr(err.msg, "--preset") && strstr(err.msg, "veryslow"), "%s", err.msg);
	cfg = config(p, 64, 64, 30, 1);
	cfg.crf = 52;
	cr_assert_eq(tp_encoder_mp4.check(&cfg, &err), TP_EUSAGE);
	cr_assert(strstr(err.msg, "--crf"), "%s", err.msg);
	cfg = config(p, 64, 64, 30, 1);
	cfg.crf = 20;
	cfg.bitrate = 1000000;
	cr_assert_eq(tp_encoder_mp4.check(&cfg, &err), TP_EUSAGE);
	cfg = config(p, 20000, 64, 30, 1);
	cr_assert_eq(tp_encoder_mp4.check(&cfg, &err), TP_EUSAGE);
	cr_assert(strstr(err.msg, "16384"), "%s", err.msg);
	/* A directory where the file should go, even with -y. */
	cfg = config(dir, 64, 64, 30, 1);
	cfg.overwrite = 1;
	cr_assert_eq(tp_encoder_mp4.check(&cfg, &err), TP_EUSAGE);
	cr_assert(strstr(err.msg, "is a directory"), "%s", err.msg);
	/* A directory that cannot exist (its parent is a file). */
	cfg = config("tests/test_mp4.c/x.mp4", 64, 64, 30, 1);
	cr_assert_lt(tp_encoder_mp4.check(&cfg, &err), 0);
	cr_assert(strstr(err.msg, "tests/test_mp4.c"), "%s", err.msg);
	cr_assert_eq(count_entries(NULL), 0);
}

Test(mp4, existing_file_is_kept_without_overwrite)
{
	char p[256];
	tp_err err;
	path_in(p, sizeof p, "keep.mp4");
	FILE *f = fopen(p, "w");
	fputs("precious", f);
	fclose(f);
	enc_config cfg = config(p, 32, 32, 30, 2);
	cr_assert_eq(encode_n(&cfg, 2, ENC_CLOSE_DONE, &err), TP_EIO);
	cr_assert(strstr(err.msg, "-y"), "%s", err.msg);
	long n;
	uint8_t *b = read_all(p, &n);
	cr_assert_eq(n, 8);
	free(b);
	/* A failed render with -y leaves the old file too. */
	cfg.overwrite = 1;
	cr_assert_eq(encode_n(&cfg, 2, ENC_CLOSE_FAILED, &err), 0);
	b = read_all(p, &n);
	cr_assert_eq(n, 8);
	free(b);
	cr_assert_eq(count_entries("keep.mp4"), 0);
	/* And -y replaces it once the render completes. */
	cr_assert_eq(encode_n(&cfg, 2, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	decoded d;
	cr_assert_eq(decode_file(p, &d), 0);
	cr_assert_eq(d.nframes, 2);
	decoded_free(&d);
}

Test(mp4, interrupted_render_is_playable)
{
	char p[256];
	tp_err err;
	path_in(p, sizeof p, "int.mp4");
	enc_config cfg = config(p, 64, 48, 30, 100);
	cr_assert_eq(encode_n(&cfg, 7, ENC_CLOSE_INTERRUPTED, &err), 0, "%s", err.msg);
	decoded d;
	cr_assert_eq(decode_file(p, &d), 0);
	cr_assert_str_eq(d.codec, "h264");
	cr_assert_eq(d.nframes, 7);
	cr_assert_float_eq(d.duration, 7 / 30.0, 1e-3);
	decoded_free(&d);
	cr_assert_eq(count_entries("int.mp4"), 0);
}

Test(mp4, interrupted_before_any_frame_leaves_nothing)
{
	char p[256];
	tp_err err;
	path_in(p, sizeof p, "none.mp4");
	enc_config cfg = config(p, 64, 48, 30, 100);
	cr_assert_eq(encode_n(&cfg, 0, ENC_CLOSE_INTERRUPTED, &err), 0, "%s", err.msg);
	cr_assert_eq(count_entries(NULL), 0);
}

Test(mp4, failed_render_leaves_nothing)
{
	char p[256];
	tp_err err;
	path_in(p, sizeof p, "fail.mp4");
	enc_config cfg = config(p, 64, 48, 30, 100);
	cr_assert_eq(encode_n(&cfg, 9, ENC_CLOSE_FAILED, &err), 0);
	cr_assert_eq(count_entries(NULL), 0);
}

Test(mp4, mpeg4_fallback)
{
	char p[256];
	tp_err err;
	path_in(p, sizeof p, "m4.mp4");
	setenv("TIDEPOOL_MP4_CODEC", "mpeg4", 1); /* each Criterion test is its own process */
	enc_config cfg = config(p, 80, 48, 25, 10);
	const char *note = tp_encoder_mp4.note(&cfg);
	cr_assert(note && strstr(note, "MPEG-4 Part 2"), "the fallback is announced");
	cr_assert_eq(encode_n(&cfg, 10, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	decoded d;
	cr_assert_eq(decode_file(p, &d), 0);
	cr_assert_str_eq(d.codec, "mpeg4");
	cr_assert_str_eq(d.pixfmt, "yuv420p");
	cr_assert_eq(d.nframes, 10);
	tp_image src;
	tp_image_alloc(&src, 80, 48, TP_RGB8);
	make_frame(&src, 9);
	cr_assert_gt(psnr(&src, &d.frames[9], 80, 48), 30.0);
	tp_image_free(&src);
	decoded_free(&d);
}

Test(mp4, height_maps_and_rgba_frames_are_accepted)
{
	const tp_pixfmt fmts[] = {TP_GRAY16, TP_RGBA8, TP_GRAY8, TP_RGB16};
	for (int f = 0; f < 4; f++) {
		char p[256], name[32];
		snprintf(name, sizeof name, "f%d.mp4", f);
		path_in(p, sizeof p, name);
		enc_config cfg = config(p, 32, 16, 30, 3);
		cfg.fmt = fmts[f];
		const tp_encoder *e = &tp_encoder_mp4;
		void *priv = calloc(1, e->priv_size);
		tp_err err;
		tp_image img;
		tp_image_alloc(&img, 32, 16, fmts[f]);
		memset(img.pixels, 0x80, (size_t)img.stride * 16);
		cr_assert_eq(e->open(priv, &cfg, &err), 0, "%s", err.msg);
		for (int k = 0; k < 3; k++)
			cr_assert_eq(e->write_frame(priv, k, &img, &err), 0, "%s", err.msg);
		cr_assert_eq(e->close(priv, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
		decoded d;
		cr_assert_eq(decode_file(p, &d), 0);
		cr_assert_eq(d.nframes, 3);
		/* Mid grey in, mid grey out. */
		const uint8_t *px = tp_image_row(&d.frames[2], 8) + 3 * 16;
		cr_assert(abs(px[0] - 128) < 6 && abs(px[1] - 128) < 6, "%s: got %d %d %d",
			  tp_pixfmt_name(fmts[f]), px[0], px[1], px[2]);
		decoded_free(&d);
		tp_image_free(&img);
		free(priv);
	}
}

/* ---- write errors -------------------------------------------------------------------- */

static void assert_write_error_leaves_nothing(const char *p, const char *reason)
{
	tp_err err;
	enc_config cfg = config(p, 256, 160, 30, 60);
	cfg.crf = 0; /* lossless: big packets that reach the limit quickly */
	cfg.preset = "ultrafast";
	int rc = encode_n(&cfg, 60, ENC_CLOSE_DONE, &err);
	cr_assert_eq(rc, TP_EIO, "rc %d: %s", rc, err.msg);
	cr_assert(strstr(err.msg, p) && strstr(err.msg, reason), "%s", err.msg);
	cr_assert(failed_at >= 0, "reported by write_frame, while rendering, not only at the end");
	struct stat st;
	cr_assert_neq(stat(p, &st), 0, "no file at the output path");
}

Test(mp4, write_error_mid_run_is_reported_and_cleaned_up)
{
	char p[256];
	path_in(p, sizeof p, "big.mp4");
	/* A file-size limit makes write() fail with EFBIG part way, as a full disk would. */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old, lim;
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 200000;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_write_error_leaves_nothing(p, "File too large");
	setrlimit(RLIMIT_FSIZE, &old);
	cr_assert_eq(count_entries(NULL), 0);
}

Test(mp4, full_disk_is_reported_and_cleaned_up)
{
	char mnt[256], p[300];
	path_in(mnt, sizeof mnt, "small");
	cr_assert_eq(mkdir(mnt, 0755), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=200k") != 0) {
		rmdir(mnt);
		cr_skip("cannot mount a small tmpfs here (%s)", strerror(errno));
	}
	snprintf(p, sizeof p, "%s/full.mp4", mnt);
	assert_write_error_leaves_nothing(p, "No space left on device");
	DIR *d = opendir(mnt);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(d);
	umount(mnt);
	rmdir(mnt);
	cr_assert_eq(n, 0, "the temporary is removed");
}

/* ---- end to end: tidepool render -o x.mp4 ------------------------------------------- */

TestSuite(mp4_cli, .init = make_dir, .fini = remove_dir, .timeout = 60);

#define TINY "tests/data/tiny.json"

Test(mp4_cli, render_matches_the_png_frames_of_the_same_scene)
{
	char err[256], mp4[256];
	path_in(err, sizeof err, "stderr");
	path_in(mp4, sizeof mp4, "tiny.mp4");
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --frames 20 -o %s", mp4), 0, "%s",
		     slurp(err));
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --frames 20 -o %s/%%02d.png", dir), 0,
		     "%s", slurp(err));
	decoded d;
	cr_assert_eq(decode_file(mp4, &d), 0);
	cr_assert_str_eq(d.codec, "h264");
	cr_assert_str_eq(d.pixfmt, "yuv420p");
	cr_assert_eq(d.w, 96);
	cr_assert_eq(d.h, 64);
	cr_assert_eq(d.nframes, 20);
	cr_assert_eq(d.rate.num, 30);
	cr_assert_eq(d.rate.den, 1);
	cr_assert_float_eq(d.duration, 20 / 30.0, 1e-3);
	for (int k = 0; k < 20; k++) {
		char p[256];
		snprintf(p, sizeof p, "%s/%02d.png", dir, k);
		tp_image png;
		tp_err e;
		cr_assert_eq(tp_png_read(p, TP_RGB8, &png, &e), 0, "%s", e.msg);
		/* Luma: 1-2 pixel tile joints lose their colour to 4:2:0 even at --crf 0
		 * (~22 dB RGB PSNR), which says nothing about the encoder. Measured: 33..41 dB;
		 * the neighbouring frame's PNG scores 16..25 dB, so an off-by-one fails. */
		double q = psnr_luma(&png, &d.luma[k]);
		cr_assert_gt(q, 30.0, "frame %d: luma PSNR %.1f dB against its PNG", k, q);
		tp_image_free(&png);
	}
	decoded_free(&d);
	/* tidepool's own reader (compare) sees the same frames. */
	enc_mp4_reader *r;
	tp_err e;
	cr_assert_eq(enc_mp4_open(mp4, &r, &e), 0, "%s", e.msg);
	cr_assert_eq(enc_mp4_width(r), 96);
	cr_assert_eq(enc_mp4_height(r), 64);
	cr_assert_eq(enc_mp4_frames(r), 20);
	tp_image img;
	tp_image_alloc(&img, 96, 64, TP_RGB8);
	int n = 0;
	while (enc_mp4_next(r, &img, &e) == 1)
		n++;
	cr_assert_eq(n, 20);
	tp_image_free(&img);
	enc_mp4_close(r);
}

/* The colour picture goes to the encoder as 4:2:0 straight from the renderer, except when
 * --hash needs the RGB frame (then mp4.c converts it): the same video either way, with
 * and without boxes (drawn over whole frames), at any thread count. */
Test(mp4_cli, rendering_straight_to_yuv_gives_the_same_video)
{
	char err[256], a[256], b[256], c[256], m[256];
	path_in(err, sizeof err, "stderr");
	path_in(a, sizeof a, "a.mp4");
	path_in(b, sizeof b, "b.mp4");
	path_in(c, sizeof c, "c.mp4");
	path_in(m, sizeof m, "b.manifest");
	const char *scenes[] = {TINY, "scenes/boxes.json --scale 0.25",
				"scenes/pond.json --scale 0.25"};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(run_tp(NULL, err, "render %s -q -y --frames 12 -o %s", scenes[i], a),
			     0, "%s", slurp(err));
		cr_assert_eq(run_tp(NULL, err, "render %s -q -y --frames 12 -o %s --hash %s",
				    scenes[i], b, m),
			     0, "%s", slurp(err));
		cr_assert_eq(run_tp(NULL, err, "render %s -q -y --frames 12 --threads 1 -o %s",
				    scenes[i], c),
			     0, "%s", slurp(err));
		cr_assert(files_equal(a, b), "%s: the 4:2:0 render differs from the RGB one",
			  scenes[i]);
		cr_assert(files_equal(a, c), "%s: 1 and 2 threads differ", scenes[i]);
	}
}

Test(mp4_cli, two_renders_are_byte_identical_whatever_the_threads)
{
	char err[256], a[256], b[256];
	path_in(err, sizeof err, "stderr");
	path_in(a, sizeof a, "a.mp4");
	path_in(b, sizeof b, "b.mp4");
	cr_assert_eq(run_tp(NULL, err,
			    "render " TINY " -q --threads 1 --size 144x96 --frames 30 -o %s", a),
		     0, "%s", slurp(err));
	cr_assert_eq(run_tp(NULL, err,
			    "render " TINY " -q --threads 2 --size 144x96 --frames 30 -o %s", b),
		     0, "%s", slurp(err));
	cr_assert(files_equal(a, b));
}

Test(mp4_cli, crf_preset_and_bitrate_options)
{
	char err[256], a[256], b[256];
	path_in(err, sizeof err, "stderr");
	path_in(a, sizeof a, "crf18.mp4");
	path_in(b, sizeof b, "crf40.mp4");
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --frames 12 -o %s", a), 0, "%s",
		     slurp(err));
	cr_assert_eq(run_tp(NULL, err,
			    "render " TINY " -q --frames 12 --crf 40 --preset veryfast -o %s", b),
		     0, "%s", slurp(err));
	struct stat sa, sb;
	cr_assert_eq(stat(a, &sa), 0);
	cr_assert_eq(stat(b, &sb), 0);
	cr_assert_lt(sb.st_size, sa.st_size);
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --preset quick -o %s/c.mp4", dir), 2);
	cr_assert(strstr(slurp(err), "--preset: must be one of") != NULL, "%s", slurp(err));
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --crf 20 --bitrate 1M -o %s/c.mp4", dir),
		     2);
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --bitrate 30k -o %s/c.mp4", dir), 0,
		     "%s", slurp(err));
	decoded d;
	path_in(a, sizeof a, "c.mp4");
	cr_assert_eq(decode_file(a, &d), 0);
	cr_assert_eq(d.nframes, 6);
	decoded_free(&d);
}

Test(mp4_cli, mpeg4_fallback_is_announced)
{
	char err[256], p[256];
	path_in(err, sizeof err, "stderr");
	path_in(p, sizeof p, "m4.mp4");
	setenv("TIDEPOOL_MP4_CODEC", "mpeg4", 1);
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -o %s", p), 0, "%s", slurp(err));
	cr_assert(strstr(slurp(err), "tidepool: MP4: encoding MPEG-4 Part 2") != NULL, "%s",
		  slurp(err));
	decoded d;
	cr_assert_eq(decode_file(p, &d), 0);
	cr_assert_str_eq(d.codec, "mpeg4");
	cr_assert_eq(d.nframes, 6);
	decoded_free(&d);
}

Test(mp4_cli, interrupted_render_leaves_a_playable_file)
{
	const int sigs[2] = {SIGINT, SIGTERM};
	for (int i = 0; i < 2; i++) {
		char err[256], out[256], name[32], tmp[300];
		path_in(err, sizeof err, "stderr");
		snprintf(name, sizeof name, "long%d.mp4", i);
		path_in(out, sizeof out, name);
		pid_t pid = fork();
		if (pid == 0) {
			FILE *e = freopen(err, "w", stderr);
			(void)e;
			execl(tp_bin(), "tidepool", "render", TINY, "-q", "--size", "384x256",
			      "--frames", "100000", "--preset", "ultrafast", "-o", out,
			      (char *)NULL);
			_exit(127);
		}
		/* Wait until encoded packets reach the temporary, so there is something to keep. */
		snprintf(tmp, sizeof tmp, "%s/.%s.tmp-%ld", dir, name, (long)pid);
		struct stat st;
		for (int t = 0; t < 300 && (stat(tmp, &st) != 0 || st.st_size < 20000); t++)
			usleep(100 * 1000);
		cr_assert_eq(stat(tmp, &st), 0, "the render writes %s", tmp);
		cr_assert_eq(kill(pid, sigs[i]), 0);
		int status;
		waitpid(pid, &status, 0);
		cr_assert(WIFEXITED(status));
		cr_assert_eq(WEXITSTATUS(status), 130, "stderr: %s", slurp(err));
		decoded d;
		cr_assert_eq(decode_file(out, &d), 0, "the interrupted MP4 plays");
		cr_assert_str_eq(d.codec, "h264");
		cr_assert(d.nframes > 0 && d.nframes < 100000, "%d frames", d.nframes);
		cr_assert_float_eq(d.duration, d.nframes / 30.0, 1e-3);
		decoded_free(&d);
		cr_assert_neq(stat(tmp, &st), 0, "no temporary left");
	}
}

Test(mp4_cli, bad_output_paths_fail_before_simulating)
{
	char err[256], p[256];
	path_in(err, sizeof err, "stderr");
	/* 100000 frames would take minutes: failing at once shows nothing was simulated. */
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --frames 100000 -o /proc/tp/x.mp4"), 4);
	const char *e = slurp(err);
	cr_assert(strncmp(e, "tidepool: /proc/tp", 18) == 0 && strchr(e, '\n') == e + strlen(e) - 1,
		  "one line: %s", e);
	path_in(p, sizeof p, "keep.mp4");
	FILE *f = fopen(p, "w");
	fputs("precious", f);
	fclose(f);
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --frames 100000 -o %s", p), 4);
	cr_assert(strstr(slurp(err), "already exists (use -y to overwrite)") != NULL, "%s",
		  slurp(err));
	cr_assert_str_eq(slurp(p), "precious");
}

Test(mp4_cli, write_error_mid_render_exits_4_and_leaves_nothing)
{
	char err[256], p[256], cmd[1024];
	path_in(err, sizeof err, "stderr");
	path_in(p, sizeof p, "big.mp4");
	/* ulimit -f: writes beyond 100 blocks fail with EFBIG, like a disk filling up. */
	snprintf(cmd, sizeof cmd,
		 "ulimit -f 100; trap '' XFSZ; exec %s render " TINY
		 " -q --size 384x256 --frames 300 "
		 "--crf 0 --preset ultrafast -o %s 2>%s",
		 tp_bin(), p, err);
	int st = system(cmd);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 4, "stderr: %s", slurp(err));
	cr_assert(strstr(slurp(err), p) && strstr(slurp(err), "File too large"), "%s", slurp(err));
	cr_assert_eq(count_entries("stderr"), 0, "no output and no temporary");
}

/* MP4 is a plugin (src/encode/avplugin.h): neither the program nor libtidepool links
 * a libav library (libavutil's hashes come through the plugin too), a PNG render runs
 * without the plugin, and an MP4 output without it fails before anything is simulated,
 * naming where it was looked for. */
Test(mp4_cli, libavcodec_is_a_plugin_loaded_only_for_mp4)
{
	char cmd[1024], err[256], out[256], lib[512];
	snprintf(lib, sizeof lib, "%s/libtidepool.so.0",
		 getenv("TP_BUILD") ? getenv("TP_BUILD") : "build");
	const char *bins[] = {tp_bin(), lib};
	for (int b = 0; b < 2; b++) {
		snprintf(cmd, sizeof cmd,
			 "ldd %s | grep -c -E 'libavcodec|libavformat|libswscale|libavutil'",
			 bins[b]);
		FILE *p = popen(cmd, "r");
		int n = -1;
		cr_assert(p && fscanf(p, "%d", &n) == 1);
		pclose(p);
		cr_assert_eq(n, 0, "%s links a libav library", bins[b]);
	}

	path_in(err, sizeof err, "stderr");
	path_in(out, sizeof out, "f%d.png");
	setenv("TIDEPOOL_AV_PLUGIN", "/nonexistent/tidepool-av.so", 1);
	int png = run_tp(NULL, err, "render " TINY " -q --frames 2 -o %s", out);
	int mp4 = -1;
	static char e[1 << 16];
	if (png == 0) {
		path_in(out, sizeof out, "x.mp4");
		mp4 = run_tp(NULL, err, "render " TINY " -q --frames 100000 -o %s", out);
		snprintf(e, sizeof e, "%s", slurp(err));
	}
	unsetenv("TIDEPOOL_AV_PLUGIN");
	cr_assert_eq(png, 0, "a PNG render needs no plugin: %s", slurp(err));
	cr_assert_eq(mp4, 4, "%s", e);
	cr_assert(strstr(e, "MP4 support (libavcodec) is not available") &&
			  strstr(e, "/nonexistent/tidepool-av.so") &&
			  strchr(e, '\n') == e + strlen(e) - 1,
		  "one line naming the plugin: %s", e);
	cr_assert_eq(access(out, F_OK), -1, "nothing written");
	/* and with it, beside the program */
	cr_assert_eq(run_tp(NULL, err, "render " TINY " -q --frames 2 -o %s", out), 0, "%s",
		     slurp(err));
}
