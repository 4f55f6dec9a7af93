/* png.c - PNG reading and writing through libpng (the only file that includes png.h). */
#include "util/png.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"

typedef struct png_io {
	char msg[256];
	char warning[128]; /* the last warning: says why libpng gave up on IHDR */
} png_io;

static void on_error(png_structp png, png_const_charp msg)
{
	png_io *io = png_get_error_ptr(png);
	snprintf(io->msg, sizeof io->msg, "%s", msg);
	png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
	png_io *io = png_get_error_ptr(png);
	if (io)
		snprintf(io->warning, sizeof io->warning, "%s", msg);
}

/* Converts n decoded pixels (RGBA16 big-endian after the transforms below) to `want`,
 * writing every step-th pixel of dst (step > 1 scatters an interlace pass). */
static void convert_row(const png_byte *src, uint8_t *dst, int n, int step, tp_pixfmt want)
{
	for (int i = 0; i < n; i++) {
		const png_byte *p = src + 8 * i;
		size_t x = (size_t)i * (size_t)step;
		unsigned c[4];
		for (int k = 0; k < 4; k++)
			c[k] = (unsigned)(p[2 * k] << 8 | p[2 * k + 1]);
		if (want != TP_RGBA8) /* composite over black: c * a / 65535, rounded */
			for (int k = 0; k < 3; k++)
				c[k] = (unsigned)(((uint64_t)c[k] * c[3] + 32767) / 65535);
		switch (want) {
		case TP_RGB8:
			for (int k = 0; k < 3; k++)
				dst[3 * x + k] = (uint8_t)((c[k] * 255 + 32767) / 65535);
			break;
		case TP_RGBA8:
			for (int k = 0; k < 4; k++)
				dst[4 * x + k] = (uint8_t)((c[k] * 255 + 32767) / 65535);
			break;
		case TP_RGB16:
			for (int k = 0; k < 3; k++)
				((uint16_t *)dst)[3 * x + k] = (uint16_t)c[k];
			break;
		case TP_GRAY16: /* Rec. 709 luma on the stored values */
			((uint16_t *)dst)[x] =
				(uint16_t)((2126 * c[0] + 7152 * c[1] + 722 * c[2] + 5000) / 10000);
			break;
		case TP_GRAY8:
			dst[x] = (uint8_t)(((2126 * c[0] + 7152 * c[1] + 722 * c[2] + 5000) /
						    10000 * 255 +
					    32767) /
					   65535);
			break;
		case TP_YUV420: /* never asked of a PNG */
		case TP_GRAYF32:
		case TP_RGBF32:
			break;
		}
	}
}

/* The fast path's rows are RGB8 already: only an interlace pass needs scattering. */
static void scatter_rgb8(const png_byte *src, uint8_t *dst, int n, int step)
{
	for (int i = 0; i < n; i++)
		memcpy(dst + (size_t)3 * i * step, src + 3 * i, 3);
}

/* Limits, set before libpng allocates anything (png.h states them). */
static void set_limits(png_structp png)
{
	png_set_user_limits(png, TP_PNG_MAX_SIDE, TP_PNG_MAX_SIDE);
	png_set_chunk_cache_max(png, TP_PNG_MAX_CHUNKS);
	png_set_chunk_malloc_max(png, TP_PNG_MAX_CHUNK);
	/* Only the pixels matter here (no gamma or colour management), so every ancillary
	 * chunk but tRNS is skipped unread: a tEXt or iCCP chunk claiming a gigabyte costs
	 * nothing. Skipping reads through the chunk in small pieces, never allocating it. */
	png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
}

/* Opens path for reading as a PNG: a regular file whose signature is PNG's, and libpng's
 * read and info structs reporting into io. On failure nothing is left open. */
static int read_open(const char *path, png_io *io, FILE **f, png_structp *png, png_infop *info,
		     tp_err *err)
{
	*png = NULL;
	*info = NULL;
	int orc = tp_fopen_regular(path, "a PNG image", f, err);
	if (orc < 0)
		return orc;
	png_byte sig[8];
	if (fread(sig, 1, 8, *f) != 8 || png_sig_cmp(sig, 0, 8)) {
		fclose(*f);
		return tp_errf(err, TP_EINPUT, "%s: not a PNG file", path);
	}
	*png = png_create_read_struct(PNG_LIBPNG_VER_STRING, io, on_error, on_warning);
	if (*png)
		*info = png_create_info_struct(*png);
	if (!*png || !*info) {
		png_destroy_read_struct(png, info, NULL);
		fclose(*f);
		return tp_errf(err, TP_EIO, "%s: out of memory", path);
	}
	return 0;
}

int tp_png_size(const char *path, int *w, int *h)
{
	png_io io = {"", ""};
	png_structp png = NULL;
	png_infop info = NULL;
	FILE *f;
	tp_err e;
	*w = *h = 0;
	if (read_open(path, &io, &f, &png, &info, &e) < 0)
		return -1;
	int rc = -1;
	if (setjmp(png_jmpbuf(png)))
		goto done;
	png_init_io(png, f);
	png_set_sig_bytes(png, 8);
	set_limits(png);
	png_read_info(png, info);
	*w = (int)png_get_image_width(png, info);
	*h = (int)png_get_image_height(png, info);
	rc = 0;
done:
	png_destroy_read_struct(&png, &info, NULL);
	fclose(f);
	return rc;
}

int tp_png_read(const char *path, tp_pixfmt want, tp_image *out, tp_err *err)
{
	memset(out, 0, sizeof *out);
	png_io io = {"", ""};
	png_structp png = NULL;
	png_infop info = NULL;
	png_bytep volatile row = NULL; /* the only heap buffer besides out; survives longjmp */
	int rc = TP_EINPUT;
	FILE *f;
	int orc = read_open(path, &io, &f, &png, &info, err);
	if (orc < 0)
		return orc;
	if (setjmp(png_jmpbuf(png))) {
		if (strstr(io.warning, "exceeds user limit"))
			rc = tp_errf(err, TP_EINPUT,
				     "%s: larger than %d pixels on a side (the limit for images)",
				     path, TP_PNG_MAX_SIDE);
		else if (!strcmp(io.msg, "Read Error")) /* libpng's word for a short read */
			rc = tp_errf(err, TP_EINPUT, "%s: corrupt PNG (the file ends early)", path);
		else
			rc = tp_errf(err, TP_EINPUT, "%s: corrupt PNG (%s)", path, io.msg);
		goto fail;
	}
	png_init_io(png, f);
	png_set_sig_bytes(png, 8);
	set_limits(png);
	png_read_info(png, info);

	png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
	if ((double)w * h > TP_PNG_MAX_PIXELS) {
		rc = tp_errf(err, TP_EINPUT,
			     "%s: %ux%u is more than %.0f pixels (the limit for images)", path, w,
			     h, TP_PNG_MAX_PIXELS);
		goto fail;
	}
	int color = png_get_color_type(png, info);
	int interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
	/* Fast path for the common case (our own frames): opaque 8-bit pixels decode straight
	 * into RGB8 rows. Same values the general path would give. */
	int fast = want == TP_RGB8 && png_get_bit_depth(png, info) <= 8 &&
		   !(color & PNG_COLOR_MASK_ALPHA) && !png_get_valid(png, info, PNG_INFO_tRNS);
	size_t px = fast ? 3 : 8;
	png_set_expand(png);
	if (!fast)
		png_set_expand_16(png); /* everything else as 16-bit RGBA: one conversion for all */
	if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
		png_set_gray_to_rgb(png);
	if (!fast)
		png_set_add_alpha(png, 0xffff, PNG_FILLER_AFTER);
	/* No png_set_interlace_handling(): an interlaced image is read pass by pass, each
	 * pass's pixels going straight to their place in out. libpng's own de-interlacing
	 * needs a full-size buffer in its 16-bit RGBA layout (8 bytes a pixel) and reads
	 * every row seven times. */
	png_read_update_info(png, info);
	if (png_get_rowbytes(png, info) != (size_t)w * px) {
		rc = tp_errf(err, TP_EINPUT, "%s: unsupported PNG layout", path);
		goto fail;
	}
	if (tp_image_alloc(out, (int)w, (int)h, want) < 0) {
		rc = tp_errf(err, TP_EIO, "%s: out of memory for %ux%u image", path, w, h);
		goto fail;
	}
	if (!fast || interlaced) {
		row = malloc((size_t)w * px);
		if (!row) {
			rc = tp_errf(err, TP_EIO, "%s: out of memory", path);
			goto fail;
		}
	}
	int bpp = tp_pixfmt_bytes(want);
	for (int pass = 0; pass < (interlaced ? 7 : 1); pass++) {
		png_uint_32 cols = interlaced ? PNG_PASS_COLS(w, pass) : w;
		png_uint_32 rows = interlaced ? PNG_PASS_ROWS(h, pass) : h;
		if (!cols || !rows)
			continue; /* libpng skips empty passes too */
		int x0 = interlaced ? (int)PNG_PASS_START_COL(pass) : 0;
		int step = interlaced ? 1 << PNG_PASS_COL_SHIFT(pass) : 1;
		for (png_uint_32 r = 0; r < rows; r++) {
			int y = interlaced ? (int)PNG_ROW_FROM_PASS_ROW(r, pass) : (int)r;
			uint8_t *dst = tp_image_row(out, y) + (size_t)x0 * bpp;
			if (fast && !interlaced) {
				png_read_row(png, dst, NULL);
				continue;
			}
			png_read_row(png, row, NULL);
			if (fast)
				scatter_rgb8(row, dst, (int)cols, step);
			else
				convert_row(row, dst, (int)cols, step, want);
		}
	}
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(row);
	fclose(f);
	return 0;
fail:
	png_destroy_read_struct(&png, &info, NULL);
	free(row);
	fclose(f);
	tp_image_free(out);
	return rc;
}

/* Writes to an open FILE; returns 0 or fills io->msg. Kept apart from tp_png_write so the
 * setjmp frame holds no locals that need to survive the longjmp. */
static int write_stream(FILE *f, const tp_image *img, int level, const tp_png_meta *m, png_io *io)
{
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, io, on_error, on_warning);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	if (!png || !info) {
		png_destroy_write_struct(&png, &info);
		snprintf(io->msg, sizeof io->msg, "out of memory");
		return -1;
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return -1;
	}
	png_init_io(png, f);
	int type, depth = 8;
	switch (img->fmt) {
	case TP_RGB8: type = PNG_COLOR_TYPE_RGB; break;
	case TP_RGBA8: type = PNG_COLOR_TYPE_RGBA; break;
	case TP_GRAY8: type = PNG_COLOR_TYPE_GRAY; break;
	case TP_GRAY16: type = PNG_COLOR_TYPE_GRAY; depth = 16; break;
	default: type = PNG_COLOR_TYPE_RGB; depth = 16; break;
	}
	png_set_IHDR(png, info, (png_uint_32)img->w, (png_uint_32)img->h, depth, type,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	/* Level 3: ~3x faster than zlib's default 6 for ~12% larger frames (measured on 640x360 water). */
	png_set_compression_level(png, level < 0 ? 3 : level);
	/* The frames are photographic; Paeth/sub filters pay off, and a fixed choice keeps
	 * the output bytes independent of libpng's heuristics across versions. Level 0 stores
	 * the rows uncompressed, where a filter would only cost time. */
	png_set_filter(png, 0, level == 0 ? PNG_FILTER_NONE : PNG_FILTER_SUB | PNG_FILTER_PAETH);
	png_text t[2];
	int nt = 0;
	if (m && m->proof)
		t[nt++] = (png_text){.compression = PNG_TEXT_COMPRESSION_NONE,
				     .key = (png_charp)TP_PNG_TEXT_KEY,
				     .text = (png_charp)m->proof};
	if (m && m->record) /* iTXt: UTF-8, uncompressed so any tool shows it */
		t[nt++] = (png_text){.compression = PNG_ITXT_COMPRESSION_NONE,
				     .key = (png_charp)TP_PNG_RECORD_KEY,
				     .text = (png_charp)m->record,
				     .lang = (png_charp) "",
				     .lang_key = (png_charp) ""};
	if (nt)
		png_set_text(png, info, t, nt);
	if (m && m->srgb)
		png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
	png_write_info(png, info);
	if (depth == 16)
		png_set_swap(png); /* our samples are host (little) endian, PNG is big endian */
	for (int y = 0; y < img->h; y++)
		png_write_row(png, tp_image_row(img, y));
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	return 0;
}

int tp_png_write_stream(FILE *f, const tp_image *img, int level, tp_err *err)
{
	png_io io = { "", "" };
	if (write_stream(f, img, level, NULL, &io) || ferror(f))
		return tp_errf(err, TP_EIO, "cannot write PNG (%s)", io.msg[0] ? io.msg : "write error");
	return 0;
}

int tp_png_write(const char *path, const tp_image *img, int level, tp_err *err)
{
	return tp_png_write_text(path, img, level, NULL, err);
}

int tp_png_write_text(const char *path, const tp_image *img, int level, const char *text,
		      tp_err *err)
{
	const tp_png_meta m = {.proof = text};
	return tp_png_write_meta(path, img, level, &m, err);
}

int tp_png_write_meta(const char *path, const tp_image *img, int level, const tp_png_meta *m,
		      tp_err *err)
{
	char tmp[4352];
	tp_temp_name(path, tmp, sizeof tmp);
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return tp_errpath(err, TP_EIO, tmp, "cannot create (%s)", strerror(errno));
	png_io io = { "", "" };
	int bad = write_stream(f, img, level, m, &io);
	if (!bad && fflush(f) != 0) {
		snprintf(io.msg, sizeof io.msg, "%s", strerror(errno));
		bad = 1;
	}
	if (ferror(f) && !bad) {
		snprintf(io.msg, sizeof io.msg, "write error");
		bad = 1;
	}
	if (fclose(f) != 0 && !bad) {
		snprintf(io.msg, sizeof io.msg, "%s", strerror(errno));
		bad = 1;
	}
	if (bad) {
		unlink(tmp);
		/* libpng reports a failed fwrite as "Write Error"; errno says why (e.g. ENOSPC). */
		if (errno == ENOSPC || errno == EDQUOT || errno == EIO)
			snprintf(io.msg, sizeof io.msg, "%s", strerror(errno));
		return tp_errpath(err, TP_EIO, path, "cannot write PNG (%s)", io.msg);
	}
	return tp_commit_file(tmp, path, err);
}

/* Reads every chunk (libpng checks each one's CRC-32 and zlib its Adler-32) and the
 * record under TP_PNG_TEXT_KEY. Rows are decoded into one row buffer and dropped. */
int tp_png_check(const char *path, char *text, size_t n, tp_err *err)
{
	return tp_png_check_meta(path, text, n, NULL, NULL, err);
}

int tp_png_check_meta(const char *path, char *text, size_t n, char **record, int *srgb, tp_err *err)
{
	png_io io = {"", ""};
	png_structp png = NULL;
	png_infop info = NULL;
	png_bytep volatile row = NULL;
	int rc = TP_EINPUT;
	FILE *f;
	text[0] = 0;
	if (record)
		*record = NULL;
	if (srgb)
		*srgb = 0;
	int orc = read_open(path, &io, &f, &png, &info, err);
	if (orc < 0)
		return orc;
	if (setjmp(png_jmpbuf(png))) {
		rc = tp_errf(err, TP_EINPUT, "%s: damaged PNG (%s)", path,
			     io.msg[0] ? io.msg : "the file ends early");
		goto done;
	}
	png_init_io(png, f);
	png_set_sig_bytes(png, 8);
	png_set_user_limits(png, TP_PNG_MAX_SIDE, TP_PNG_MAX_SIDE);
	png_set_chunk_cache_max(png, TP_PNG_MAX_CHUNKS);
	png_set_chunk_malloc_max(png, TP_PNG_MAX_CHUNK);
	/* a damaged ancillary chunk (the record) is an error too, not a warning */
	png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
	png_read_info(png, info);
	png_textp t = NULL;
	int nt = png_get_text(png, info, &t, NULL);
	for (int i = 0; i < nt; i++)
		if (!strcmp(t[i].key, TP_PNG_TEXT_KEY))
			snprintf(text, n, "%s", t[i].text);
		else if (record && !*record && !strcmp(t[i].key, TP_PNG_RECORD_KEY))
			*record = strdup(t[i].text);
	int intent;
	if (srgb)
		*srgb = png_get_sRGB(png, info, &intent) != 0;
	png_uint_32 h = png_get_image_height(png, info);
	int passes = png_set_interlace_handling(png);
	png_read_update_info(png, info);
	if (!(row = malloc(png_get_rowbytes(png, info)))) {
		rc = tp_errf(err, TP_EIO, "%s: out of memory", path);
		goto done;
	}
	for (int p = 0; p < passes; p++)
		for (png_uint_32 y = 0; y < h; y++)
			png_read_row(png, row, NULL);
	png_read_end(png, NULL);
	rc = 0;
done:
	png_destroy_read_struct(&png, &info, NULL);
	free(row);
	fclose(f);
	if (rc < 0 && record) {
		free(*record);
		*record = NULL;
	}
	return rc;
}

int tp_png_encode(const tp_image *img, int level, unsigned char **out, size_t *size, tp_err *err)
{
	char *buf = NULL;
	size_t n = 0;
	*out = NULL;
	*size = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return tp_errf(err, TP_EIO, "cannot encode PNG (%s)", strerror(errno));
	png_io io = { "", "" };
	int bad = write_stream(f, img, level, NULL, &io);
	if (fclose(f) != 0 && !bad) {
		snprintf(io.msg, sizeof io.msg, "%s", strerror(errno));
		bad = 1;
	}
	if (bad) {
		free(buf);
		return tp_errf(err, TP_EIO, "cannot encode PNG (%s)", io.msg);
	}
	*out = (unsigned char *)buf;
	*size = n;
	return 0;
}
