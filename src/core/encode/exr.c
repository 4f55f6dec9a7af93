/*
 * exr.c - OpenEXR frames through the OpenEXR C library (OpenEXRCore), the only user of
 * it: a printf pattern with one %d ("out/disp_%04d.exr") or, for one frame, a file.
 *
 * Frames arrive as floats in physical units (render_set_float: TP_GRAYF32 or TP_RGBF32)
 * and are written as one scanline part with channels "Y" or "R", "G", "B" (the library
 * stores them sorted: B, G, R), 16-bit half by default or 32-bit float
 * (enc_config.exr_float), ZIP compression by default (enc_config.exr_compression: ZIP,
 * ZIPS, PIZ, RLE or none). The chunks of a frame (16 rows for ZIP) are packed by
 * OpenEXR's encode pipelines and compressed in parallel (ZIP's deflate by libdeflate,
 * the rest by OpenEXR), and written in order afterwards, so the file's bytes do not
 * depend on the thread count. Each frame is written under a
 * temporary name and renamed when complete; after a failure the frames this render wrote
 * are removed again. The library's messages are not printed: its error codes are turned
 * into tp_err messages.
 */
#include <libdeflate.h>
#include <omp.h>
#include <openexr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "encode/encoder.h"
#include "util/fsutil.h"

#define EXR_DEFLATE_LEVEL 1

typedef struct exrseq {
	char pattern[4096];
	int is_pattern;
	int first, frames, written;
	int half;
	exr_compression_t comp;
	/* ZIP: per chunk scratch and output (chunk_bytes each), sizes; compressors */
	uint8_t *ztmp, *zout;
	size_t *zsize, chunk_bytes;
	int nchunks, nz;
	struct libdeflate_compressor **z;
} exrseq;

static void frame_path(const exrseq *s, int index, char *buf, size_t n)
{
	if (s->is_pattern)
		snprintf(buf, n, s->pattern, index);
	else
		snprintf(buf, n, "%s", s->pattern);
}

static int exr_probe(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && !strcasecmp(path + n - 4, ".exr") ? 50 : 0;
}

static int exr_check(const enc_config *cfg, tp_err *err)
{
	int kind = tp_pattern_kind(cfg->path);
	if (kind < 0)
		return tp_errf(err, TP_EUSAGE,
			       "%.200s: an EXR pattern takes one %%d or %%0Nd with N at most %d "
			       "(like out/disp_%%04d.exr)",
			       cfg->path, TP_PATTERN_MAX_WIDTH);
	if (kind == 0 && cfg->frames > 1)
		return tp_errf(
			err, TP_EUSAGE,
			"%s: %d frames need a pattern with %%d (like out/disp_%%04d.exr), or "
			"use --frames 1",
			cfg->path, cfg->frames);
	if (cfg->fmt != TP_GRAYF32 && cfg->fmt != TP_RGBF32)
		return tp_errf(err, TP_EUSAGE,
			       "%s: OpenEXR takes the height, displacement, normal, foam and "
			       "caustics maps (got %s pixels)",
			       cfg->path, tp_pixfmt_name(cfg->fmt));
	int rc = tp_mkdirs_for(cfg->path, err);
	if (rc < 0)
		return rc;
	exrseq tmp = {.is_pattern = kind == 1};
	snprintf(tmp.pattern, sizeof tmp.pattern, "%s", cfg->path);
	char path[4352];
	frame_path(&tmp, cfg->first, path, sizeof path);
	rc = enc_check_output(path, cfg->overwrite, err); /* the directory, and the first frame */
	if (rc < 0 || cfg->overwrite || !tmp.is_pattern)
		return rc;
	for (int i = cfg->first; i < cfg->first + cfg->frames; i++) {
		frame_path(&tmp, i, path, sizeof path);
		if (tp_path_exists(path))
			return tp_errf(err, TP_EIO, "%s: already exists (use -y to overwrite)",
				       path);
	}
	return 0;
}

static int exr_open(void *priv, const enc_config *cfg, tp_err *err)
{
	exrseq *s = priv;
	int rc = exr_check(cfg, err);
	if (rc < 0)
		return rc;
	snprintf(s->pattern, sizeof s->pattern, "%s", cfg->path);
	s->is_pattern = tp_pattern_kind(cfg->path) == 1;
	s->frames = cfg->frames;
	s->first = s->written = cfg->first;
	s->half = !cfg->exr_float;
	static const exr_compression_t comp[] = {EXR_COMPRESSION_ZIP, EXR_COMPRESSION_ZIPS,
						 EXR_COMPRESSION_PIZ, EXR_COMPRESSION_RLE,
						 EXR_COMPRESSION_NONE};
	s->comp = cfg->exr_compression >= 0 && cfg->exr_compression < 5 ? comp[cfg->exr_compression]
									: EXR_COMPRESSION_ZIP;
	return 0;
}

static void quiet(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
	(void)ctxt, (void)code, (void)msg;
}

/* ZIP as OpenEXR defines it (its Technical Introduction; ImfZip): the packed bytes split
 * into the even-indexed then the odd-indexed ones, each byte replaced by its difference
 * from the one before plus 128 (mod 256), then a zlib stream. The zlib stream is
 * libdeflate's (level EXR_DEFLATE_LEVEL): the same format as OpenEXR's own zlib, about
 * four times faster on these maps. Returns the compressed size, or 0 if it would not be
 * smaller than n (the chunk is then stored raw). */
static size_t zip_chunk(struct libdeflate_compressor *z, const uint8_t *raw, size_t n, uint8_t *tmp,
			uint8_t *out)
{
	uint8_t *t1 = tmp, *t2 = tmp + (n + 1) / 2;
	for (size_t i = 0; i + 1 < n; i += 2) {
		*t1++ = raw[i];
		*t2++ = raw[i + 1];
	}
	if (n & 1)
		*t1 = raw[n - 1];
	for (size_t i = n - 1; i > 0; i--)
		tmp[i] = (uint8_t)(tmp[i] - tmp[i - 1] + 128);
	size_t c = libdeflate_zlib_compress(z, tmp, n, out, n);
	return c < n ? c : 0;
}

/* Scratch for ZIP chunks kept between frames: n chunks of `bytes`, a compressor per
 * thread. */
static int zip_scratch(exrseq *s, int n, size_t bytes)
{
	if (s->nchunks == n && s->chunk_bytes >= bytes)
		return 0;
	free(s->ztmp);
	free(s->zout);
	s->ztmp = malloc((size_t)n * bytes);
	s->zout = malloc((size_t)n * bytes);
	s->zsize = realloc(s->zsize, (size_t)n * sizeof *s->zsize);
	s->nchunks = n;
	s->chunk_bytes = bytes;
	if (!s->nz) {
		s->nz = omp_get_max_threads();
		s->z = calloc((size_t)s->nz, sizeof *s->z);
		for (int i = 0; s->z && i < s->nz; i++)
			s->z[i] = libdeflate_alloc_compressor(EXR_DEFLATE_LEVEL);
		for (int i = 0; s->z && i < s->nz; i++)
			if (!s->z[i])
				return -1;
	}
	return s->ztmp && s->zout && s->zsize && s->z ? 0 : -1;
}

/* The chunks of one frame: packed (OpenEXR converts and orders the samples) and
 * compressed in parallel, then written in order. */
static exr_result_t write_chunks(exrseq *s, exr_context_t ctx, const tp_image *img, int nch)
{
	int lines = 1;
	exr_result_t rc = exr_get_scanlines_per_chunk(ctx, 0, &lines);
	if (rc != EXR_ERR_SUCCESS)
		return rc;
	const int n = (img->h + lines - 1) / lines;
	const int zip = s->comp == EXR_COMPRESSION_ZIP || s->comp == EXR_COMPRESSION_ZIPS;
	const size_t bytes = (size_t)lines * img->w * nch * (s->half ? 2 : 4);
	exr_encode_pipeline_t *p = calloc((size_t)n, sizeof *p);
	exr_result_t *rcs = calloc((size_t)n, sizeof *rcs);
	if (!p || !rcs || (zip && zip_scratch(s, n, bytes) < 0)) {
		free(p);
		free(rcs);
		return EXR_ERR_OUT_OF_MEMORY;
	}
#pragma omp parallel for schedule(static)
	for (int k = 0; k < n; k++) {
		exr_chunk_info_t ci;
		exr_result_t r = exr_write_scanline_chunk_info(ctx, 0, k * lines, &ci);
		if (r == EXR_ERR_SUCCESS)
			r = exr_encoding_initialize(ctx, 0, &ci, &p[k]);
		for (int c = 0; r == EXR_ERR_SUCCESS && c < p[k].channel_count; c++) {
			exr_coding_channel_info_t *cc = &p[k].channels[c];
			/* R, G, B are samples 0, 1, 2 of a pixel; Y the only one */
			const int at = cc->channel_name[0] == 'G'   ? 1
				       : cc->channel_name[0] == 'B' ? 2
								    : 0;
			cc->user_data_type = EXR_PIXEL_FLOAT;
			cc->user_bytes_per_element = 4;
			cc->user_pixel_stride = 4 * nch;
			cc->user_line_stride = (int32_t)img->stride;
			cc->encode_from_ptr = tp_image_row(img, ci.start_y) + 4 * at;
		}
		if (r == EXR_ERR_SUCCESS)
			r = exr_encoding_choose_default_routines(ctx, 0, &p[k]);
		if (r == EXR_ERR_SUCCESS) {
			p[k].yield_until_ready_fn = NULL; /* written below, in order */
			p[k].write_fn = NULL;
			if (zip)
				p[k].compress_fn = NULL; /* packed only: zip_chunk compresses */
			r = exr_encoding_run(ctx, 0, &p[k]);
		}
		if (r == EXR_ERR_SUCCESS && zip) {
			int t = omp_get_thread_num();
			s->zsize[k] =
				p[k].packed_bytes <= s->chunk_bytes && t < s->nz
					? zip_chunk(s->z[t], p[k].packed_buffer, p[k].packed_bytes,
						    s->ztmp + (size_t)k * s->chunk_bytes,
						    s->zout + (size_t)k * s->chunk_bytes)
					: 0;
		}
		rcs[k] = r;
	}
	for (int k = 0; k < n && rc == EXR_ERR_SUCCESS; k++) {
		rc = rcs[k];
		/* A chunk that does not compress is stored as it is: a reader takes a chunk of
		 * the uncompressed size as uncompressed. (OpenEXR 3.1.5's own ZIP stored wrong
		 * bytes for such chunks of float maps, which tests/test_ocean.c caught; compare
		 * openexr issue 2306. The other codecs' output is used only when smaller.) */
		const void *data = p[k].packed_buffer;
		uint64_t size = p[k].packed_bytes;
		if (zip && s->zsize[k]) {
			data = s->zout + (size_t)k * s->chunk_bytes;
			size = s->zsize[k];
		} else if (!zip && p[k].compressed_bytes < p[k].packed_bytes) {
			data = p[k].compressed_buffer;
			size = p[k].compressed_bytes;
		}
		if (rc == EXR_ERR_SUCCESS)
			rc = exr_write_scanline_chunk(ctx, 0, k * lines, data, size);
	}
	for (int k = 0; k < n; k++)
		exr_encoding_destroy(ctx, &p[k]);
	free(p);
	free(rcs);
	return rc;
}

/* One frame to `path` (the temporary name). */
static exr_result_t write_file(exrseq *s, const char *path, const tp_image *img)
{
	exr_context_t ctx = NULL;
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	init.error_handler_fn = quiet;
	exr_result_t rc = exr_start_write(&ctx, path, EXR_WRITE_FILE_DIRECTLY, &init);
	if (rc != EXR_ERR_SUCCESS)
		return rc;
	const int rgb = img->fmt == TP_RGBF32, nch = rgb ? 3 : 1;
	static const char *const names[] = {"R", "G", "B"};
	const exr_pixel_type_t t = s->half ? EXR_PIXEL_HALF : EXR_PIXEL_FLOAT;
	int part = 0;
	rc = exr_add_part(ctx, "", EXR_STORAGE_SCANLINE, &part);
	if (rc == EXR_ERR_SUCCESS)
		rc = exr_initialize_required_attr_simple(ctx, part, img->w, img->h, s->comp);
	for (int c = 0; c < nch && rc == EXR_ERR_SUCCESS; c++)
		rc = exr_add_channel(ctx, part, rgb ? names[c] : "Y", t, EXR_PERCEPTUALLY_LINEAR, 1,
				     1);
	if (rc == EXR_ERR_SUCCESS)
		rc = exr_write_header(ctx);
	if (rc == EXR_ERR_SUCCESS)
		rc = write_chunks(s, ctx, img, nch);
	exr_result_t fin = exr_finish(&ctx); /* removes the file if something failed */
	return rc != EXR_ERR_SUCCESS ? rc : fin;
}

static int exr_write(void *priv, int index, const tp_image *img, tp_err *err)
{
	exrseq *s = priv;
	char path[4352], tmp[4480];
	frame_path(s, index, path, sizeof path);
	enc_temp_name(path, tmp, sizeof tmp);
	exr_result_t rc = write_file(s, tmp, img);
	if (rc != EXR_ERR_SUCCESS) {
		unlink(tmp);
		return tp_errf(err, TP_EIO, "%s: cannot write the OpenEXR file (%s)", path,
			       exr_get_error_code_as_string(rc));
	}
	if (rename(tmp, path) != 0) {
		unlink(tmp);
		return tp_errf(err, TP_EIO, "%s: cannot rename the finished file into place", path);
	}
	s->written = index + 1;
	return 0;
}

static int exr_close(void *priv, enc_close_mode mode, tp_err *err)
{
	exrseq *s = priv;
	(void)err;
	if (mode == ENC_CLOSE_FAILED) /* leave no partial sequence behind */
		for (int i = s->first; i < s->written; i++) {
			char path[4352];
			frame_path(s, i, path, sizeof path);
			unlink(path);
		}
	for (int i = 0; s->z && i < s->nz; i++)
		libdeflate_free_compressor(s->z[i]);
	free(s->z);
	free(s->ztmp);
	free(s->zout);
	free(s->zsize);
	s->z = NULL;
	s->ztmp = s->zout = NULL;
	s->zsize = NULL;
	return 0;
}

const tp_encoder tp_encoder_exr = {
	.name = "exr",
	.description = "OpenEXR frames of float maps in physical units (half or float, ZIP; "
		       "a pattern such as out/disp_%04d.exr, or one file for one frame)",
	.priv_size = sizeof(exrseq),
	.probe = exr_probe,
	.check = exr_check,
	.open = exr_open,
	.write_frame = exr_write,
	.close = exr_close,
};
