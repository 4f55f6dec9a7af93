/*
 * bench_png.c - `tidepool-bench --png-decode FILE...`: decoding a PNG to RGB8 with
 * tidepool's reader (libpng, src/core/util/png.c) against libspng (Debian libspng0),
 * the measurement issue 29 asks for before choosing the decoder of `compare`. Rounds
 * alternate which library goes first; each library's best of the rounds is reported, and
 * the pixels are checked equal. A bench, never a test: it only reports.
 */
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "util/png.h"
#include "util/image.h"

/* Decodes path with libspng into *buf (RGB8); returns bytes, or 0 on failure. */
static size_t spng_decode(const char *path, unsigned char **buf)
{
	FILE *f = fopen(path, "rb");
	spng_ctx *c = spng_ctx_new(0);
	size_t n = 0;
	*buf = NULL;
	if (f && c && spng_set_png_file(c, f) == 0 &&
	    spng_decoded_image_size(c, SPNG_FMT_RGB8, &n) == 0 && (*buf = malloc(n)) &&
	    spng_decode_image(c, *buf, n, SPNG_FMT_RGB8, SPNG_DECODE_TRNS) != 0) {
		free(*buf);
		*buf = NULL;
	}
	spng_ctx_free(c);
	if (f)
		fclose(f);
	return *buf ? n : 0;
}

int bench_png_decode(int n, char **paths)
{
	enum { ROUNDS = 5 };
	for (int i = 0; i < n; i++) {
		double best_png = 1e30, best_spng = 1e30;
		int same = 1;
		for (int r = 0; r < ROUNDS; r++) {
			for (int k = 0; k < 2; k++) {
				int use_spng = (r + k) % 2;
				double t0 = bench_now();
				if (use_spng) {
					unsigned char *b;
					size_t bytes = spng_decode(paths[i], &b);
					double t = bench_now() - t0;
					best_spng = t < best_spng ? t : best_spng;
					tp_image img;
					tp_err err;
					if (!bytes || tp_png_read(paths[i], TP_RGB8, &img, &err) < 0) {
						fprintf(stderr, "png-decode: %s: cannot decode\n", paths[i]);
						free(b);
						return 1;
					}
					for (int y = 0; y < img.h && same; y++)
						same = !memcmp(tp_image_row(&img, y),
							       b + (size_t)y * img.w * 3, (size_t)img.w * 3);
					tp_image_free(&img);
					free(b);
				} else {
					tp_image img;
					tp_err err;
					if (tp_png_read(paths[i], TP_RGB8, &img, &err) < 0) {
						fprintf(stderr, "png-decode: %s\n", err.msg);
						return 1;
					}
					double t = bench_now() - t0;
					best_png = t < best_png ? t : best_png;
					tp_image_free(&img);
				}
			}
		}
		const char *base = strrchr(paths[i], '/');
		char label[64];
		snprintf(label, sizeof label, "png decode %s", base ? base + 1 : paths[i]);
		bench_row(label, "ms, libpng vs libspng", 1000 * best_png, "ms", 1000 * best_spng, 0);
		printf("png-decode: %s: the same pixels: %s\n", paths[i], same ? "yes" : "NO");
	}
	return 0;
}
