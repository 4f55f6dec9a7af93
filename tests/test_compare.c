/* compare: metrics against hand-computed values and an independent SSIM, thread
 * invariance, masks, frame hashes and manifests, frame sources. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "tmpdir.h"
#include "compare/compare.h"
#include "encode/encoder.h"
#include "encode/hash.h"
#include "encode/mp4_read.h"
#include "util/png.h"
#include "util/rng.h"

static char dir[64];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "cmp");
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(compare, .init = setup, .fini = teardown, .timeout = 60);

/* An RGB8 image from rows of "r,g,b" triples. */
static tp_image make_rgb(int w, int h, const uint8_t *px)
{
	tp_image img;
	cr_assert_eq(tp_image_alloc(&img, w, h, TP_RGB8), 0);
	for (int y = 0; y < h; y++)
		memcpy(tp_image_row(&img, y), px + (size_t)3 * w * y, (size_t)3 * w);
	return img;
}

static tp_image make_random(int w, int h, uint64_t seed)
{
	tp_image img;
	tp_rng r;
	tp_rng_seed(&r, seed, 3);
	cr_assert_eq(tp_image_alloc(&img, w, h, TP_RGB8), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < 3 * w; x++)
			tp_image_row(&img, y)[x] = (uint8_t)tp_rng_below(&r, 256);
	return img;
}

static tp_image copy_image(const tp_image *src)
{
	tp_image img;
	cr_assert_eq(tp_image_alloc(&img, src->w, src->h, src->fmt), 0);
	for (int y = 0; y < src->h; y++)
		memcpy(tp_image_row(&img, y), tp_image_row(src, y), (size_t)src->w * 3);
	return img;
}

static cmp_metrics measure(const tp_image *a, const tp_image *b, int fuzz, int threads)
{
	cmp_scratch *s;
	tp_err err;
	cr_assert_eq(cmp_scratch_create(a->w, a->h, threads, &s, &err), 0);
	cmp_metrics m;
	cmp_metrics_basic(a, b, fuzz, (int64_t)a->w * a->h, s, threads, &m);
	m.ssim = cmp_ssim(a, b, &m.bbox, s, threads);
	cmp_scratch_destroy(s);
	return m;
}

Test(compare, metrics_match_hand_computed_values)
{
	/* 2x2; differences per pixel: (10,10,0), (13,0,0), (8,8,8), (0,0,0). */
	const uint8_t pa[] = {100, 100, 100, 100, 100, 100, 100, 100, 100, 7, 7, 7};
	const uint8_t pb[] = {110, 110, 100, 87, 100, 100, 108, 108, 108, 7, 7, 7};
	tp_image a = make_rgb(2, 2, pa), b = make_rgb(2, 2, pb);
	cmp_metrics m = measure(&a, &b, 0, 1);
	cr_assert_eq(m.max_diff, 13);
	cr_assert_eq(m.pixels, 3);
	cr_assert_eq(m.compared, 4);
	cr_assert_float_eq(m.ratio, 0.75, 1e-15);
	/* SSE = 100+100 + 169 + 3*64 = 561; MSE = 561 / 12; PSNR = 10 log10(255^2 / MSE). */
	cr_assert_eq(m.sse, 561u);
	cr_assert_float_eq(m.mse, 46.75, 1e-12);
	cr_assert_float_eq(m.psnr, 10 * log10(65025 / 46.75), 1e-12);
	cr_assert_float_eq(m.psnr, 31.433, 5e-4, "ImageMagick prints 31.433 for this pair");
	cr_assert_eq(m.bbox.x, 0);
	cr_assert_eq(m.bbox.y, 0);
	cr_assert_eq(m.bbox.w, 2);
	cr_assert_eq(m.bbox.h, 2);
	/* The count is "largest channel difference > fuzz" (IM 6.9 AE with -fuzz). */
	cr_assert_eq(measure(&a, &b, 8, 1).pixels, 2); /* 8 is not > 8 */
	cr_assert_eq(measure(&a, &b, 9, 1).pixels, 2);
	cr_assert_eq(measure(&a, &b, 10, 1).pixels, 1);
	cr_assert_eq(measure(&a, &b, 12, 1).pixels, 1);
	cr_assert_eq(measure(&a, &b, 13, 1).pixels, 0);
	tp_image_free(&a);
	tp_image_free(&b);
}

Test(compare, bbox_covers_exactly_the_changed_pixels)
{
	tp_image a = make_random(40, 30, 1), b = copy_image(&a);
	tp_image_row(&b, 7)[3 * 5 + 1] ^= 1;
	tp_image_row(&b, 21)[3 * 33 + 2] ^= 0x80;
	cmp_metrics m = measure(&a, &b, 0, 2);
	cr_assert_eq(m.bbox.x, 5);
	cr_assert_eq(m.bbox.y, 7);
	cr_assert_eq(m.bbox.w, 33 - 5 + 1);
	cr_assert_eq(m.bbox.h, 21 - 7 + 1);
	cr_assert_eq(m.pixels, 2);
	cr_assert_eq(m.max_diff, 128);
	tp_image_free(&a);
	tp_image_free(&b);
}

/* Grey 2x2 images: every channel equal, so the mean over channels is the one value. */
static double ssim_grey(const uint8_t va[4], const uint8_t vb[4])
{
	uint8_t pa[12], pb[12];
	for (int i = 0; i < 12; i++) {
		pa[i] = va[i / 3];
		pb[i] = vb[i / 3];
	}
	tp_image a = make_rgb(2, 2, pa), b = make_rgb(2, 2, pb);
	double s = measure(&a, &b, 0, 1).ssim;
	tp_image_free(&a);
	tp_image_free(&b);
	return s;
}

Test(compare, ssim_of_small_images_matches_hand_computation)
{
	const double c1 = 6.5025, c2 = 58.5225; /* (0.01*255)^2, (0.03*255)^2 */
	/* A brightness shift: variances and covariance equal, so only the mean term is < 1:
	 * mu_a = 75, mu_b = 85 -> (2*75*85 + C1) / (75^2 + 85^2 + C1). */
	const uint8_t a1[4] = {0, 50, 100, 150}, b1[4] = {10, 60, 110, 160};
	cr_assert_float_eq(ssim_grey(a1, b1), (12750 + c1) / (5625 + 7225 + c1), 1e-12);
	/* Uncorrelated: equal means 127.5, variances 16256.25, covariance 0 ->
	 * C2 / (2 * 16256.25 + C2). */
	const uint8_t a2[4] = {0, 0, 255, 255}, b2[4] = {0, 255, 0, 255};
	cr_assert_float_eq(ssim_grey(a2, b2), c2 / (32512.5 + c2), 1e-12);
	/* Inverted: covariance -16256.25 gives a negative SSIM. */
	const uint8_t b3[4] = {255, 255, 0, 0};
	cr_assert_float_eq(ssim_grey(a2, b3), (c2 - 32512.5) / (32512.5 + c2), 1e-12);
	cr_assert_float_eq(ssim_grey(a1, a1), 1.0, 0);
}

/* Independent SSIM: direct 2-D 11x11 Gaussian sums per window (no separable passes, no
 * skipping of unchanged windows). */
static double ssim_reference(const tp_image *a, const tp_image *b)
{
	double g[11], sum = 0;
	for (int k = 0; k < 11; k++)
		sum += g[k] = exp(-(k - 5) * (k - 5) / (2 * 1.5 * 1.5));
	double total = 0;
	int n = 0;
	for (int c = 0; c < 3; c++)
		for (int y = 0; y + 11 <= a->h; y++)
			for (int x = 0; x + 11 <= a->w; x++) {
				double ma = 0, mb = 0, saa = 0, sbb = 0, sab = 0;
				for (int j = 0; j < 11; j++)
					for (int i = 0; i < 11; i++) {
						double wgt = g[j] * g[i] / (sum * sum);
						double u = tp_image_row(a, y + j)[3 * (x + i) + c];
						double v = tp_image_row(b, y + j)[3 * (x + i) + c];
						ma += wgt * u;
						mb += wgt * v;
						saa += wgt * u * u;
						sbb += wgt * v * v;
						sab += wgt * u * v;
					}
				double va = saa - ma * ma, vb = sbb - mb * mb, cov = sab - ma * mb;
				total += (2 * ma * mb + 6.5025) * (2 * cov + 58.5225) /
					 ((ma * ma + mb * mb + 6.5025) * (va + vb + 58.5225));
				n++;
			}
	return total / n;
}

/* The map is computed in single precision (compare.h): within 1e-5 of double. */
Test(compare, ssim_matches_a_direct_gaussian_window_implementation)
{
	tp_image a = make_random(29, 23, 5), b = make_random(29, 23, 6);
	cr_assert_float_eq(measure(&a, &b, 0, 1).ssim, ssim_reference(&a, &b), 1e-5);
	/* A local change: the skipped (unchanged) windows must not alter the result. */
	tp_image c = copy_image(&a);
	for (int y = 12; y < 15; y++)
		for (int x = 20; x < 24; x++)
			tp_image_row(&c, y)[3 * x] = (uint8_t)(255 - tp_image_row(&c, y)[3 * x]);
	double got = measure(&a, &c, 0, 2).ssim;
	cr_assert_float_eq(got, ssim_reference(&a, &c), 1e-5);
	cr_assert_lt(got, 1.0);
	/* The hard case for single precision: bright, nearly flat windows. */
	tp_image d = copy_image(&a), e = copy_image(&a);
	tp_rng r;
	tp_rng_seed(&r, 8, 8);
	for (int y = 0; y < d.h; y++)
		for (int x = 0; x < 3 * d.w; x++) {
			tp_image_row(&d, y)[x] = (uint8_t)(250 + tp_rng_below(&r, 3));
			tp_image_row(&e, y)[x] = (uint8_t)(250 + tp_rng_below(&r, 3));
		}
	cr_assert_float_eq(measure(&d, &e, 0, 1).ssim, ssim_reference(&d, &e), 1e-5);
	tp_image_free(&d);
	tp_image_free(&e);
	tp_image_free(&a);
	tp_image_free(&b);
	tp_image_free(&c);
}

Test(compare, metrics_are_bit_identical_for_any_thread_count)
{
	tp_image a = make_random(97, 203, 11), b = make_random(97, 203, 12);
	cmp_metrics m1 = measure(&a, &b, 20, 1), m2 = measure(&a, &b, 20, 2),
		    m3 = measure(&a, &b, 20, 3);
	cr_assert_eq(memcmp(&m1.ssim, &m2.ssim, sizeof(double)), 0);
	cr_assert_eq(memcmp(&m1.ssim, &m3.ssim, sizeof(double)), 0);
	cr_assert_eq(memcmp(&m1.psnr, &m3.psnr, sizeof(double)), 0);
	cr_assert_eq(m1.sse, m2.sse);
	cr_assert_eq(m1.pixels, m3.pixels);
	cr_assert_eq(m1.max_diff, m2.max_diff);
	tp_image_free(&a);
	tp_image_free(&b);
}

Test(compare, ignore_rectangles_union_and_masking)
{
	cmp_rect r[3] = {{0, 0, 5, 5}, {3, 3, 5, 5}, {8, 8, 5, 5}};
	/* 25 + 25 - 4 overlapping + 4 (the third clipped to 2x2) = 50 masked of 100. */
	cr_assert_eq(cmp_unmasked_pixels(10, 10, r, 3), 50);
	cr_assert_eq(cmp_unmasked_pixels(10, 10, r, 0), 100);
	cmp_rect far = {20, 20, 5, 5};
	cr_assert_eq(cmp_unmasked_pixels(10, 10, &far, 1), 100);
	tp_image a = make_random(10, 10, 2), b = make_random(10, 10, 3);
	cmp_mask_copy(&a, &b, r, 3);
	cr_assert_eq(memcmp(tp_image_row(&a, 0), tp_image_row(&b, 0), 15), 0);
	cr_assert_eq(memcmp(tp_image_row(&a, 9) + 24, tp_image_row(&b, 9) + 24, 6), 0);
	cr_assert_neq(memcmp(tp_image_row(&a, 9), tp_image_row(&b, 9), 6), 0);
	cr_assert(!cmp_equal(&a, &b));
	tp_image_free(&a);
	tp_image_free(&b);
}

/* The default, XXH3-128 (libxxhash), in its canonical form: what `xxh128sum` prints for
 * the same bytes. Any libavutil hash can be asked for: SHA-256 as `sha256sum`. */
Test(compare, frame_hash_is_xxh128_of_canonical_bytes)
{
	tp_err err;
	enc_hasher *h;
	char hex[ENC_HASH_HEX_MAX];
	cr_assert_eq(enc_hasher_create(NULL, &h, &err), 0);
	cr_assert_str_eq(enc_hasher_algo(h), "xxh128");
	/* 1x1 rgb24 pixel "abc" (the row is padded to 64 bytes in memory):
	 * `printf abc | xxh128sum` */
	const uint8_t abc[3] = {'a', 'b', 'c'};
	tp_image img = make_rgb(1, 1, abc);
	cr_assert_gt(img.stride, 3);
	cr_assert_eq(enc_hasher_image(h, &img, hex, sizeof hex, &err), 0);
	cr_assert_str_eq(hex, "06b05ab6733a618578af5f94892f3950");
	/* 16-bit samples hash big-endian: 0x6162 is "ab". */
	tp_image g16;
	cr_assert_eq(tp_image_alloc(&g16, 1, 1, TP_GRAY16), 0);
	((uint16_t *)g16.pixels)[0] = 0x6162;
	cr_assert_eq(enc_hasher_image(h, &g16, hex, sizeof hex, &err), 0);
	cr_assert_str_eq(hex, "89c65ebc828eebaca873719c24d5735c");
	enc_hasher_destroy(h);
	/* SHA-256("abc") and SHA-256("ab") */
	cr_assert_eq(enc_hasher_create("SHA256", &h, &err), 0);
	cr_assert_str_eq(enc_hasher_algo(h), "sha256");
	cr_assert_eq(enc_hasher_image(h, &img, hex, sizeof hex, &err), 0);
	cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cr_assert_eq(enc_hasher_image(h, &g16, hex, sizeof hex, &err), 0);
	cr_assert_str_eq(hex, "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603");
	enc_hasher_destroy(h);
	tp_image_free(&img);
	tp_image_free(&g16);
	cr_assert_eq(enc_hasher_create("MD5", &h, &err), 0);
	cr_assert_str_eq(enc_hasher_algo(h), "md5");
	enc_hasher_destroy(h);
	cr_assert_eq(enc_hasher_create("nope", &h, &err), TP_EUSAGE);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(compare, hash_encoder_writes_a_diffable_manifest)
{
	char path[128];
	snprintf(path, sizeof path, "%s/x.tpmanifest", dir);
	const tp_encoder *e = enc_find_for_path(path);
	cr_assert(e && !strcmp(e->name, "hash"));
	enc_config cfg = {.path = path, .w = 1, .h = 1, .fps = 30, .frames = 2, .fmt = TP_RGB8};
	enc_sink *s;
	tp_err err;
	cr_assert_eq(enc_sink_create(e, &cfg, &s, &err), 0, "%s", err.msg);
	const uint8_t abc[3] = {'a', 'b', 'c'}, zero[3] = {0, 0, 0};
	tp_image f0 = make_rgb(1, 1, abc), f1 = make_rgb(1, 1, zero);
	cr_assert_eq(enc_sink_write(s, 0, &f0, &err), 0);
	cr_assert_eq(enc_sink_write(s, 1, &f1, &err), 0);
	cr_assert(access(path, F_OK) != 0, "nothing visible before close");
	cr_assert_eq(enc_sink_close(s, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	enc_sink_destroy(s);
	cr_assert_str_eq(slurp(path),
			 "tidepool-frame-hashes 1\nwidth 1\nheight 1\npixfmt rgb24\nhash xxh128\n"
			 "0 06b05ab6733a618578af5f94892f3950\n"
			 "1 f21da334f2869f1beb5d658bb22f286b\n");
	enc_manifest m;
	cr_assert_eq(enc_manifest_read(path, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.n, 2);
	cr_assert_eq(m.w, 1);
	cr_assert_eq(m.fmt, TP_RGB8);
	cr_assert_str_eq(m.algo, "xxh128");
	enc_manifest_free(&m);
	/* A failed render leaves nothing behind. */
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(enc_sink_create(e, &cfg, &s, &err), 0);
	cr_assert_eq(enc_sink_write(s, 0, &f0, &err), 0);
	enc_sink_close(s, ENC_CLOSE_FAILED, &err);
	enc_sink_destroy(s);
	cr_assert(access(path, F_OK) != 0);
	tp_image_free(&f0);
	tp_image_free(&f1);
}

Test(compare, malformed_manifests_are_rejected_with_their_line)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"hello\n", "not a frame-hash manifest"},
		{"tidepool-frame-hashes 2\n", ":1: bad value for 'tidepool-frame-hashes'"},
		{"tidepool-frame-hashes 1\nwidth 4\nheight 4\npixfmt rgb24\n0 ab\n",
		 ":5: frame line before the header is complete"},
		/* a range's manifest may start anywhere, then counts up (render --range) */
		{"tidepool-frame-hashes 1\nwidth 4\nheight 4\npixfmt rgb24\nhash sha256\n1 ab\n3 "
		 "cd\n",
		 ":7: expected '2 <lower-case hex digest>'"},
		{"tidepool-frame-hashes 1\nwidth 4\nheight 4\npixfmt rgb24\nhash sha256\n0 AB\n",
		 ":6: expected '0 "},
		{"tidepool-frame-hashes 1\nwidth 4\nheight 4\npixfmt yuv\nhash sha256\n",
		 ":4: bad value for 'pixfmt'"},
		{"tidepool-frame-hashes 1\nwidth 4\nwidth 4\n", ":3: 'width' given twice"},
		{"tidepool-frame-hashes 1\nwidth 4\n", "incomplete header"},
	};
	char path[128];
	snprintf(path, sizeof path, "%s/bad.manifest", dir);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		write_text(path, cases[i].text);
		enc_manifest m;
		tp_err err;
		cr_assert_eq(enc_manifest_read(path, &m, &err), TP_EINPUT, "case %zu", i);
		cr_assert(strstr(err.msg, cases[i].want) != NULL, "case %zu: %s", i, err.msg);
	}
	/* Comments and blank lines are fine. */
	write_text(
		path,
		"tidepool-frame-hashes 1\n# note\nwidth 4\n\nheight 4\npixfmt gray16be\nhash md5\n"
		"0 0123abcd\n");
	enc_manifest m;
	tp_err err;
	cr_assert_eq(enc_manifest_read(path, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.fmt, TP_GRAY16);
	cr_assert_str_eq(enc_manifest_hash(&m, 0), "0123abcd");
	enc_manifest_free(&m);
	/* A --range manifest: frames 5 and 6 */
	write_text(path, "tidepool-frame-hashes 1\nwidth 4\nheight 4\npixfmt rgb24\nhash sha256\n"
			 "5 0a\n6 0b\n");
	cr_assert_eq(enc_manifest_read(path, &m, &err), 0, "%s", err.msg);
	cr_assert(m.first == 5 && m.n == 7, "first %d n %d", m.first, m.n);
	cr_assert_str_eq(enc_manifest_hash(&m, 6), "0b");
	cr_assert_str_eq(enc_manifest_hash(&m, 4), "", "frames before a range are empty");
	cr_assert_null(enc_manifest_hash(&m, 7));
	enc_manifest_free(&m);
	/* A range late in a long render holds only its own frames (fuzz_manifest found a
	 * 60-byte manifest starting at frame 11111111 that asked for 2 GB). */
	write_text(path, "tidepool-frame-hashes 1\nwidth 4\nheight 4\npixfmt rgb24\nhash sha256\n"
			 "11111111 0a\n");
	cr_assert_eq(enc_manifest_read(path, &m, &err), 0, "%s", err.msg);
	cr_assert(m.first == 11111111 && m.n == 11111112 && m.cap <= 16, "first %d n %d cap %d",
		  m.first, m.n, m.cap);
	cr_assert_str_eq(enc_manifest_hash(&m, 11111111), "0a");
	enc_manifest_free(&m);
}

static void write_png(const char *path, const tp_image *img)
{
	tp_err err;
	cr_assert_eq(tp_png_write(path, img, 1, &err), 0, "%s", err.msg);
}

Test(compare, sources_directory_pattern_and_glob_in_natural_order)
{
	char path[256];
	tp_image img[3];
	const int names[3] = {2, 10, 1};
	for (int i = 0; i < 3; i++) {
		img[i] = make_random(4, 3, 100 + (uint64_t)names[i]);
		snprintf(path, sizeof path, "%s/f%d.png", dir, names[i]);
		write_png(path, &img[i]);
	}
	snprintf(path, sizeof path, "%s/.hidden.png", dir);
	write_png(path, &img[0]);
	snprintf(path, sizeof path, "%s/notes.txt", dir);
	write_text(path, "not a frame");
	const char *specs[3] = {dir, "%s/f%%d.png", "%s/f*.png"};
	for (int k = 0; k < 3; k++) {
		char spec[256];
		snprintf(spec, sizeof spec, specs[k], dir);
		cmp_source *s;
		tp_err err;
		cr_assert_eq(cmp_source_open(spec, &s, &err), 0, "%s: %s", spec, err.msg);
		cr_assert_eq(cmp_source_kind(s), CMP_SRC_PNGSEQ);
		/* The pattern starts at 1 (no f0.png) and stops at the first gap (f3.png). */
		cr_assert_eq(cmp_source_frames(s), k == 1 ? 2 : 3, "%s", spec);
		char name[256];
		cmp_source_frame_name(s, 1, name, sizeof name);
		snprintf(path, sizeof path, "%s/f2.png", dir);
		cr_assert_str_eq(name, path, "f1, f2, f10 in that order");
		tp_image got = {0};
		cr_assert_eq(cmp_source_read(s, 1, TP_RGB8, &got, &err), 0, "%s", err.msg);
		cr_assert(cmp_equal(&got, &img[0]));
		tp_image_free(&got);
		cmp_source_close(s);
	}
	for (int i = 0; i < 3; i++)
		tp_image_free(&img[i]);
	cmp_source *s;
	tp_err err;
	snprintf(path, sizeof path, "%s/none", dir);
	cr_assert_eq(cmp_source_open(path, &s, &err), TP_EIO);
	snprintf(path, sizeof path, "%s/notes.txt", dir);
	cr_assert_eq(cmp_source_open(path, &s, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "not a PNG, video or frame-hash manifest") != NULL, "%s",
		  err.msg);
}

Test(compare, video_frames_decode_to_rgb_close_to_what_was_encoded)
{
	char path[128];
	snprintf(path, sizeof path, "%s/v.mp4", dir);
	const tp_encoder *e = enc_find("mp4");
	cr_assert_not_null(e);
	enc_config cfg = {
		.path = path, .w = 64, .h = 48, .fps = 25, .frames = 5, .fmt = TP_RGB8, .crf = 10};
	enc_sink *s;
	tp_err err;
	cr_assert_eq(enc_sink_create(e, &cfg, &s, &err), 0, "%s", err.msg);
	tp_image frames[5];
	for (int k = 0; k < 5; k++) {
		/* Smooth gradients that move: what a codec keeps well. */
		cr_assert_eq(tp_image_alloc(&frames[k], 64, 48, TP_RGB8), 0);
		for (int y = 0; y < 48; y++)
			for (int x = 0; x < 64; x++) {
				uint8_t *p = tp_image_row(&frames[k], y) + 3 * x;
				p[0] = (uint8_t)(3 * x + 8 * k);
				p[1] = (uint8_t)(4 * y);
				p[2] = (uint8_t)(128 + x - y);
			}
		cr_assert_eq(enc_sink_write(s, k, &frames[k], &err), 0, "%s", err.msg);
	}
	cr_assert_eq(enc_sink_close(s, ENC_CLOSE_DONE, &err), 0, "%s", err.msg);
	enc_sink_destroy(s);

	cmp_source *src;
	cr_assert_eq(cmp_source_open(path, &src, &err), 0, "%s", err.msg);
	cr_assert_eq(cmp_source_kind(src), CMP_SRC_MP4);
	cr_assert_eq(cmp_source_frames(src), 5);
	int w, h;
	cmp_source_size(src, &w, &h);
	cr_assert(w == 64 && h == 48);
	tp_image got = {0};
	for (int k = 0; k < 5; k++) {
		cr_assert_eq(cmp_source_read(src, k, TP_RGB8, &got, &err), 0, "%s", err.msg);
		cmp_metrics m = measure(&frames[k], &got, 0, 1);
		cr_assert_gt(m.psnr, 35, "frame %d psnr %.2f", k, m.psnr);
		cr_assert_gt(m.ssim, 0.9, "frame %d ssim %.4f", k, m.ssim);
	}
	cr_assert_eq(cmp_source_read(src, 3, TP_RGB8, &got, &err), TP_EIO,
		     "video is read in order");
	tp_image_free(&got);
	cmp_source_close(src);
	for (int k = 0; k < 5; k++)
		tp_image_free(&frames[k]);
}

/* libavutil's hashes come from the MP4 plugin (avplugin.h): a manifest naming one, with
 * no plugin to be found, fails with one line naming the algorithm and the plugin. */
Test(compare, a_libavutil_hash_without_the_plugin_is_a_clear_error)
{
	char path[256];
	snprintf(path, sizeof path, "%s/m.manifest", dir);
	write_text(path, "tidepool-frame-hashes 1\nwidth 4\nheight 4\npixfmt rgb24\nhash sha256\n"
			 "0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n");
	setenv("TIDEPOOL_AV_PLUGIN", "/nonexistent/tidepool-av.so", 1);
	enc_manifest m;
	tp_err err = {""};
	const int rc = enc_manifest_read(path, &m, &err);
	unsetenv("TIDEPOOL_AV_PLUGIN");
	cr_assert_lt(rc, 0, "read without the plugin");
	cr_assert(strstr(err.msg, "hash algorithm 'sha256' needs libavutil") &&
			  strstr(err.msg, "tidepool-av.so"),
		  "%s", err.msg);
	enc_manifest_free(&m);
}
