/* PNG reading and writing: round trips and every PNG type libpng reads. */
#include <criterion/criterion.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/png.h"
#include "tmpdir.h"

static char dir[64];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "png");
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

/* Writes a 4x3 PNG of the given libpng colour type and depth with libpng directly, so
 * the reader is tested against files it did not write itself. Pixel (x, y) has
 * grey/red level v = 40*x + 60*y (scaled to the depth), green 255-v, blue 7*x, alpha
 * 255 - 20*x. */
static void write_typed(const char *path, int type, int depth, int interlace)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	png_init_io(png, f);
	png_set_IHDR(png, info, 4, 3, depth, type, interlace, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	if (type == PNG_COLOR_TYPE_PALETTE) {
		png_color pal[12];
		for (int i = 0; i < 12; i++) {
			int x = i % 4, y = i / 4, v = 40 * x + 60 * y;
			pal[i].red = (png_byte)v;
			pal[i].green = (png_byte)(255 - v);
			pal[i].blue = (png_byte)(7 * x);
		}
		png_set_PLTE(png, info, pal, 12);
	}
	png_write_info(png, info);
	png_set_swap(png); /* we build 16-bit rows little-endian below */
	int passes = png_set_interlace_handling(png);
	for (int pass = 0; pass < passes; pass++)
		for (int y = 0; y < 3; y++) {
			uint16_t row16[4 * 4];
			uint8_t row8[4 * 4];
			int ch = 0;
			for (int x = 0; x < 4; x++) {
				int v = 40 * x + 60 * y, c[4] = { v, 255 - v, 7 * x, 255 - 20 * x };
				int n = type == PNG_COLOR_TYPE_GRAY ? 1 : type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
					: type == PNG_COLOR_TYPE_RGB ? 3 : type == PNG_COLOR_TYPE_RGBA ? 4 : 0;
				int pick[4] = { 0, 1, 2, 3 };
				if (type == PNG_COLOR_TYPE_GRAY_ALPHA)
					pick[1] = 3;
				if (type == PNG_COLOR_TYPE_PALETTE) {
					row8[ch++] = (uint8_t)(y * 4 + x);
					continue;
				}
				for (int k = 0; k < n; k++) {
					row16[ch] = (uint16_t)(c[pick[k]] * 257);
					row8[ch] = (uint8_t)c[pick[k]];
					ch++;
				}
			}
			png_write_row(png, depth == 16 ? (png_bytep)row16 : row8);
		}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	fclose(f);
}

static void check_rgb(const tp_image *img, int grey, int with_alpha)
{
	cr_assert_eq(img->w, 4);
	cr_assert_eq(img->h, 3);
	for (int y = 0; y < 3; y++)
		for (int x = 0; x < 4; x++) {
			const uint8_t *p = tp_image_row(img, y) + 3 * x;
			int v = 40 * x + 60 * y, a = with_alpha ? 255 - 20 * x : 255;
			int want[3] = { v, grey ? v : 255 - v, grey ? v : 7 * x };
			for (int k = 0; k < 3; k++) {
				/* alpha is composited over black */
				int exp = (want[k] * a + 127) / 255;
				cr_assert(abs(p[k] - exp) <= 1, "(%d,%d) channel %d: %d, want %d", x, y, k, p[k], exp);
			}
		}
}

TestSuite(png, .init = setup, .fini = teardown);

Test(png, reads_every_color_type_and_depth)
{
	struct { int type, depth, grey, alpha, interlace; } cases[] = {
		{ PNG_COLOR_TYPE_GRAY, 8, 1, 0, 0 },
		{ PNG_COLOR_TYPE_GRAY, 16, 1, 0, 0 },
		{ PNG_COLOR_TYPE_GRAY_ALPHA, 8, 1, 1, 0 },
		{ PNG_COLOR_TYPE_RGB, 8, 0, 0, 0 },
		{ PNG_COLOR_TYPE_RGB, 16, 0, 0, 0 },
		{ PNG_COLOR_TYPE_RGBA, 8, 0, 1, 0 },
		{ PNG_COLOR_TYPE_RGBA, 16, 0, 1, 0 },
		{ PNG_COLOR_TYPE_PALETTE, 8, 0, 0, 0 },
		{ PNG_COLOR_TYPE_RGB, 8, 0, 0, PNG_INTERLACE_ADAM7 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/t%zu.png", dir, i);
		write_typed(path, cases[i].type, cases[i].depth, cases[i].interlace);
		tp_image img;
		tp_err err;
		int rc = tp_png_read(path, TP_RGB8, &img, &err);
		cr_assert_eq(rc, 0, "case %zu: %s", i, err.msg);
		check_rgb(&img, cases[i].grey, cases[i].alpha);
		tp_image_free(&img);
	}
}

Test(png, round_trip_rgb8_gray16_rgb16_exact)
{
	tp_pixfmt fmts[] = { TP_RGB8, TP_GRAY16, TP_RGB16, TP_RGBA8 };
	for (int f = 0; f < 4; f++) {
		tp_image a, b;
		tp_err err;
		cr_assert_eq(tp_image_alloc(&a, 37, 21, fmts[f]), 0);
		int nb = tp_pixfmt_bytes(fmts[f]);
		for (int y = 0; y < a.h; y++)
			for (int i = 0; i < a.w * nb; i++)
				tp_image_row(&a, y)[i] = (uint8_t)(i * 31 + y * 17 + (i * y) % 7);
		char path[128];
		snprintf(path, sizeof path, "%s/rt%d.png", dir, f);
		cr_assert_eq(tp_png_write(path, &a, -1, &err), 0, "%s", err.msg);
		cr_assert_eq(tp_png_read(path, fmts[f], &b, &err), 0, "%s", err.msg);
		cr_assert_eq(b.w, 37);
		cr_assert_eq(b.h, 21);
		for (int y = 0; y < a.h; y++)
			cr_assert_eq(memcmp(tp_image_row(&a, y), tp_image_row(&b, y), (size_t)a.w * nb), 0,
				     "format %d row %d differs", f, y);
		tp_image_free(&a);
		tp_image_free(&b);
	}
}

Test(png, missing_truncated_and_garbage_files_are_clear_errors)
{
	tp_image img;
	tp_err err;
	char path[128];
	snprintf(path, sizeof path, "%s/none.png", dir);
	cr_assert_eq(tp_png_read(path, TP_RGB8, &img, &err), TP_EIO);
	cr_assert(strstr(err.msg, "none.png: cannot open") != NULL, "%s", err.msg);

	snprintf(path, sizeof path, "%s/garbage.png", dir);
	FILE *f = fopen(path, "wb");
	fputs("this is not a png at all", f);
	fclose(f);
	cr_assert_eq(tp_png_read(path, TP_RGB8, &img, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "garbage.png: not a PNG file") != NULL, "%s", err.msg);

	/* A valid file cut in half: header fine, data missing. */
	char full[128];
	snprintf(full, sizeof full, "%s/full.png", dir);
	tp_image a;
	cr_assert_eq(tp_image_alloc(&a, 64, 64, TP_RGB8), 0);
	for (int y = 0; y < 64; y++)
		for (int x = 0; x < 64 * 3; x++)
			tp_image_row(&a, y)[x] = (uint8_t)(x ^ y);
	cr_assert_eq(tp_png_write(full, &a, 0, &err), 0);
	tp_image_free(&a);
	FILE *in = fopen(full, "rb");
	char buf[20000];
	size_t n = fread(buf, 1, sizeof buf, in);
	fclose(in);
	snprintf(path, sizeof path, "%s/cut.png", dir);
	f = fopen(path, "wb");
	fwrite(buf, 1, n / 2, f);
	fclose(f);
	cr_assert_eq(tp_png_read(path, TP_RGB8, &img, &err), TP_EINPUT);
	cr_assert(strstr(err.msg, "cut.png: corrupt PNG") != NULL, "%s", err.msg);
	cr_assert_null(img.pixels);
}

Test(png, write_is_atomic_and_reports_unwritable_paths)
{
	tp_image a;
	tp_err err;
	cr_assert_eq(tp_image_alloc(&a, 8, 8, TP_RGB8), 0);
	cr_assert_eq(tp_png_write("/nonexistent-dir/x.png", &a, -1, &err), TP_EIO);
	cr_assert(strstr(err.msg, "cannot create") != NULL, "%s", err.msg);
	char path[128];
	snprintf(path, sizeof path, "%s/ok.png", dir);
	cr_assert_eq(tp_png_write(path, &a, -1, &err), 0);
	/* no temporary left next to it */
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", dir);
	cr_assert_eq(system(cmd), 0);
	tp_image_free(&a);
}

/* tp_png_encode (the preview's frames): the same bytes tp_png_write puts in a file, for
 * each format and level, and so the same pixels read back. */
Test(png, encode_in_memory_gives_the_bytes_of_the_file)
{
	const tp_pixfmt fmts[] = { TP_RGB8, TP_GRAY16, TP_RGB16, TP_GRAY8 };
	const int levels[] = { 0, 1, 3 };
	for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
		for (size_t k = 0; k < sizeof levels / sizeof levels[0]; k++) {
			tp_image a, b;
			tp_err err;
			cr_assert_eq(tp_image_alloc(&a, 37, 21, fmts[i]), 0);
			for (int y = 0; y < a.h; y++)
				for (int x = 0; x < a.w * tp_pixfmt_bytes(fmts[i]); x++)
					tp_image_row(&a, y)[x] = (uint8_t)(x * 7 + y * 13);
			char path[128];
			snprintf(path, sizeof path, "%s/enc.png", dir);
			cr_assert_eq(tp_png_write(path, &a, levels[k], &err), 0, "%s", err.msg);
			unsigned char *mem = NULL;
			size_t n = 0;
			cr_assert_eq(tp_png_encode(&a, levels[k], &mem, &n, &err), 0, "%s", err.msg);
			FILE *f = fopen(path, "rb");
			cr_assert_not_null(f);
			unsigned char *file = malloc(n + 1);
			size_t got = fread(file, 1, n + 1, f);
			fclose(f);
			cr_assert_eq(got, n, "%s level %d: %zu bytes in the file, %zu in memory",
				     tp_pixfmt_name(fmts[i]), levels[k], got, n);
			cr_assert_eq(memcmp(file, mem, n), 0);
			cr_assert_eq(tp_png_read(path, fmts[i], &b, &err), 0, "%s", err.msg);
			for (int y = 0; y < a.h; y++)
				cr_assert_eq(memcmp(tp_image_row(&a, y), tp_image_row(&b, y),
						    (size_t)a.w * tp_pixfmt_bytes(fmts[i])),
					     0);
			free(file);
			free(mem);
			tp_image_free(&a);
			tp_image_free(&b);
		}
}
