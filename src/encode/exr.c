/*
 * exr.c - OpenEXR frames through the OpenEXR C library (OpenEXRCore), the only user of
 * it: a printf pattern with one %d ("out/disp_%04d.exr") or, for one frame, a file.
 *
 * Frames arrive as floats in physical units (render_set_float: TP_GRAYF32 or TP_RGBF32)
 * and are written as one scanline part with channels "Y" or "R", "G", "B" (the library
 * stores them sorted: B, G, R), 16-bit half by default or 32-bit float
 * (enc_config.exr_float), ZIP compression by default (enc_config.exr_compression: ZIP,
 * ZIPS, PIZ, RLE or none). The chunks of a frame (16 rows for ZIP) are packed and
 * compressed in parallel, and written in order afterwards, so the file's bytes do not
 * depend on the thread count: ZIP's chunks packed and predicted here (exr_pack.h, the
 * same bytes as OpenEXRCore's, with F16C where the CPU has it) and deflated by
 * libdeflate; the other codecs' by OpenEXR's encode pipelines. Each frame is written under a
 * temporary name and renamed when complete; after a failure the frames this render wrote
 * are removed again. The library's messages are not printed: its error codes are turned
 * into tp_err messages.
 */
#include <errno.h>
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
#include "encode/exr_pack.h"
#include "encode/record.h"
#include "util/fsutil.h"

#define EXR_DEFLATE_LEVEL 1

typedef struct exrseq {
	char pattern[4096];
	int is_pattern;
	int first, frames, written;
	int half;
	int threads; /* enc_config.threads, or OpenMP's default */
	exr_compression_t comp;
	/* ZIP: per chunk output (chunk_bytes each) and sizes; per thread a compressor and
	 * work_bytes of scratch (zip_scratch) */
	uint8_t *zout, *zwork;
	size_t *zsize, chunk_bytes, row_bytes, work_bytes;
	int nchunks, nz;
	struct libdeflate_compressor **z;
	const enc_record *record; /* enc_config.record, or NULL */
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
	return tp_has_suffix(path, ".exr") ? 50 : 0;
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
			       "%s: OpenEXR takes the height, displacement, normal, foam, velocity and "
			       "caustics maps (got %s pixels)",
			       cfg->path, tp_pixfmt_name(cfg->fmt));
	if (cfg->settings_only)
		return 0;
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
			return tp_errpath(err, TP_EIO, path, "already exists (use -y to overwrite)");
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
	s->threads = enc_threads(cfg);
	s->record = cfg->record;
	static const exr_compression_t comp[] = {EXR_COMPRESSION_ZIP, EXR_COMPRESSION_ZIPS,
						 EXR_COMPRESSION_PIZ, EXR_COMPRESSION_RLE,
						 EXR_COMPRESSION_NONE};
	s->comp = cfg->exr_compression >= 0 && cfg->exr_compression < 5 ? comp[cfg->exr_compression]
									: EXR_COMPRESSION_ZIP;
	return 0;
}

/* OpenEXRCore reports a failed open or write with its own code and a message; the
 * system's reason (errno, still set when the handler runs) is kept in the context's user
 * data for ours. */
static void quiet(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
	int e = errno;
	void *ud = NULL;
	(void)msg;
	if ((code == EXR_ERR_FILE_ACCESS || code == EXR_ERR_WRITE_IO ||
	     code == EXR_ERR_READ_IO) &&
	    exr_get_user_data(ctxt, &ud) == EXR_ERR_SUCCESS && ud && e && !*(int *)ud)
		*(int *)ud = e;
}

/* ZIP as OpenEXR defines it (its Technical Introduction; ImfZip): the predictor
 * (exr_zip_predict), then a zlib stream. The zlib stream is libdeflate's (level
 * EXR_DEFLATE_LEVEL): the same format as OpenEXR's own zlib, about four times faster on
 * these maps. Into out: the stream, or raw itself if the stream would not be smaller than
 * its n bytes (the chunk is then stored as it is: a reader takes a chunk of the
 * uncompressed size as uncompressed). Returns the bytes in out. */
static size_t zip_chunk(struct libdeflate_compressor *z, const uint8_t *raw, size_t n, uint8_t *tmp,
			uint8_t *out)
{
	exr_zip_predict(raw, n, tmp);
	size_t c = libdeflate_zlib_compress(z, tmp, n, out, n);
	if (c == 0 || c >= n) {
		memcpy(out, raw, n);
		c = n;
	}
	return c;
}

/* Scratch kept between frames: the n chunks' output (`bytes` each) and sizes, and for
 * each thread a compressor and its work space (the packed chunk, the predicted chunk and
 * one row of halves). */
static int zip_scratch(exrseq *s, int n, size_t bytes, size_t row)
{
	if (s->nchunks == n && s->chunk_bytes >= bytes && s->row_bytes >= row)
		return 0;
	free(s->zout);
	free(s->zwork);
	s->zout = malloc((size_t)n * bytes);
	s->zsize = realloc(s->zsize, (size_t)n * sizeof *s->zsize);
	s->nchunks = n;
	s->chunk_bytes = bytes;
	s->row_bytes = row;
	s->work_bytes = (2 * bytes + row + 63) / 64 * 64;
	if (!s->nz) {
		s->nz = s->threads;
		s->z = calloc((size_t)s->nz, sizeof *s->z);
		for (int i = 0; s->z && i < s->nz; i++)
			s->z[i] = libdeflate_alloc_compressor(EXR_DEFLATE_LEVEL);
		for (int i = 0; s->z && i < s->nz; i++)
			if (!s->z[i])
				return -1;
	}
	s->zwork = aligned_alloc(64, (size_t)s->nz * s->work_bytes);
	return s->zout && s->zsize && s->z && s->zwork ? 0 : -1;
}

/* The packed bytes of rows y0 .. y1 - 1, as OpenEXRCore's encode pipeline packs a
 * scanline chunk: row after row, in each the file's channels in their order (at[c]: the
 * channel's sample in a pixel of nch), w little-endian halves or floats each. row: w * nch
 * halves of scratch. */
static void pack_rows(const tp_image *img, int y0, int y1, const int *at, int nch, int half,
		      uint8_t *raw, uint16_t *row)
{
	const int w = img->w;
	for (int y = y0; y < y1; y++) {
		const float *src = (const float *)(const void *)tp_image_row(img, y);
		if (half && nch == 1) {
			exr_half_row(src, (uint16_t *)(void *)raw, (size_t)w);
			raw += (size_t)w * 2;
		} else if (half && nch == 3 && at[0] == 2 && at[1] == 1 && at[2] == 0) {
			/* B, G, R: the usual order, with constant offsets (vectorised) */
			uint16_t *b = (uint16_t *)(void *)raw, *g = b + w, *r = g + w;
			exr_half_row(src, row, (size_t)w * 3);
			for (int x = 0; x < w; x++) {
				b[x] = row[3 * x + 2];
				g[x] = row[3 * x + 1];
				r[x] = row[3 * x];
			}
			raw += (size_t)w * 6;
		} else if (half) {
			uint16_t *o = (uint16_t *)(void *)raw;
			exr_half_row(src, row, (size_t)w * nch);
			for (int c = 0; c < nch; c++)
				for (int x = 0; x < w; x++)
					*o++ = row[x * nch + at[c]];
			raw = (uint8_t *)o;
		} else {
			for (int c = 0; c < nch; c++)
				for (int x = 0; x < w; x++, raw += 4)
					memcpy(raw, &src[x * nch + at[c]], 4);
		}
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	const size_t bps = half ? 2 : 4, nb = (size_t)(y1 - y0) * w * nch * bps;
	raw -= nb;
	for (size_t i = 0; i < nb; i += bps)
		for (size_t a = i, b = i + bps - 1; a < b; a++, b--) {
			const uint8_t t = raw[a];
			raw[a] = raw[b];
			raw[b] = t;
		}
#endif
}

/* Where each of the file's channels (sorted by name: B, G, R) is in a pixel: R, G, B are
 * samples 0, 1, 2; Y the only one. */
static int channel_at(const char *name)
{
	return name[0] == 'G' ? 1 : name[0] == 'B' ? 2 : 0;
}

/* ZIP and ZIPS chunks: packed here (pack_rows), predicted and
 * compressed in parallel, then written in order; the bytes are OpenEXRCore's and do not
 * depend on the thread count. */
static exr_result_t write_zip_chunks(exrseq *s, exr_context_t ctx, const tp_image *img, int nch,
				     int lines)
{
	const exr_attr_chlist_t *chl = NULL;
	exr_result_t rc = exr_get_channels(ctx, 0, &chl);
	if (rc != EXR_ERR_SUCCESS)
		return rc;
	int at[3] = {0, 0, 0};
	if (chl->num_channels != nch)
		return EXR_ERR_INVALID_ARGUMENT;
	for (int c = 0; c < nch; c++)
		at[c] = channel_at(chl->entries[c].name.str);
	const int n = (img->h + lines - 1) / lines, bps = s->half ? 2 : 4;
	const size_t bytes = (size_t)lines * img->w * nch * bps;
	if (zip_scratch(s, n, bytes, (size_t)img->w * nch * 2) < 0)
		return EXR_ERR_OUT_OF_MEMORY;
#pragma omp parallel for schedule(static) num_threads(s->threads)
	for (int k = 0; k < n; k++) {
		const int t = omp_get_thread_num();
		if (t >= s->nz) { /* a larger team than at the start: not expected */
			s->zsize[k] = 0;
			continue;
		}
		uint8_t *work = s->zwork + (size_t)t * s->work_bytes;
		const int y0 = k * lines, y1 = y0 + lines < img->h ? y0 + lines : img->h;
		const size_t nb = (size_t)(y1 - y0) * img->w * nch * bps;
		pack_rows(img, y0, y1, at, nch, s->half, work,
			  (uint16_t *)(void *)(work + 2 * bytes));
		s->zsize[k] = zip_chunk(s->z[t], work, nb, work + bytes,
					s->zout + (size_t)k * s->chunk_bytes);
	}
	for (int k = 0; k < n && rc == EXR_ERR_SUCCESS; k++)
		rc = s->zsize[k] ? exr_write_scanline_chunk(ctx, 0, k * lines,
							    s->zout + (size_t)k * s->chunk_bytes,
							    s->zsize[k])
				 : EXR_ERR_OUT_OF_MEMORY;
	return rc;
}

/* The chunks of one frame. ZIP: write_zip_chunks. The other
 * compressions: packed and compressed by OpenEXR's encode pipelines in parallel, then
 * written in order. */
static exr_result_t write_chunks(exrseq *s, exr_context_t ctx, const tp_image *img, int nch)
{
	int lines = 1;
	exr_result_t rc = exr_get_scanlines_per_chunk(ctx, 0, &lines);
	if (rc != EXR_ERR_SUCCESS)
		return rc;
	if (s->comp == EXR_COMPRESSION_ZIP || s->comp == EXR_COMPRESSION_ZIPS)
		return write_zip_chunks(s, ctx, img, nch, lines);
	const int n = (img->h + lines - 1) / lines;
	exr_encode_pipeline_t *p = calloc((size_t)n, sizeof *p);
	exr_result_t *rcs = calloc((size_t)n, sizeof *rcs);
	if (!p || !rcs) {
		free(p);
		free(rcs);
		return EXR_ERR_OUT_OF_MEMORY;
	}
#pragma omp parallel for schedule(static) num_threads(s->threads)
	for (int k = 0; k < n; k++) {
		exr_chunk_info_t ci;
		exr_result_t r = exr_write_scanline_chunk_info(ctx, 0, k * lines, &ci);
		if (r == EXR_ERR_SUCCESS)
			r = exr_encoding_initialize(ctx, 0, &ci, &p[k]);
		for (int c = 0; r == EXR_ERR_SUCCESS && c < p[k].channel_count; c++) {
			exr_coding_channel_info_t *cc = &p[k].channels[c];
			cc->user_data_type = EXR_PIXEL_FLOAT;
			cc->user_bytes_per_element = 4;
			cc->user_pixel_stride = 4 * nch;
			cc->user_line_stride = (int32_t)img->stride;
			cc->encode_from_ptr =
				tp_image_row(img, ci.start_y) + 4 * channel_at(cc->channel_name);
		}
		if (r == EXR_ERR_SUCCESS)
			r = exr_encoding_choose_default_routines(ctx, 0, &p[k]);
		if (r == EXR_ERR_SUCCESS) {
			p[k].yield_until_ready_fn = NULL; /* written below, in order */
			p[k].write_fn = NULL;
			r = exr_encoding_run(ctx, 0, &p[k]);
		}
		rcs[k] = r;
	}
	for (int k = 0; k < n && rc == EXR_ERR_SUCCESS; k++) {
		rc = rcs[k];
		/* OpenEXR 3.1.5's own ZIP stored wrong bytes for chunks that do not compress, of
		 * float maps, which tests/test_ocean.c caught (compare openexr issue 2306): ZIP
		 * is always write_zip_chunks'. The other codecs' output is used only when
		 * smaller. */
		const void *data = p[k].packed_buffer;
		uint64_t size = p[k].packed_bytes;
		if (p[k].compressed_bytes < p[k].packed_bytes) {
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

/* One frame to `path` (the temporary name); *sys_errno: the system's reason of a failed
 * open or write (0 if none). */
static exr_result_t write_file(exrseq *s, const char *path, int index, const tp_image *img,
				int *sys_errno)
{
	exr_context_t ctx = NULL;
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	init.error_handler_fn = quiet;
	init.user_data = sys_errno;
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
	if (rc == EXR_ERR_SUCCESS && s->record)
		rc = enc_record_exr(ctx, part, s->record, index);
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
	tp_temp_name(path, tmp, sizeof tmp);
	int sys = 0;
	exr_result_t rc = write_file(s, tmp, index, img, &sys);
	if (rc != EXR_ERR_SUCCESS) {
		unlink(tmp);
		if (sys) /* an I/O error: the system's reason, as for every other file */
			return tp_errpath(err, TP_EIO, path, "write failed (%s)", strerror(sys));
		return tp_errpath(err, TP_EIO, path, "cannot write the OpenEXR file (%s)",
				  exr_get_error_code_as_string(rc));
	}
	if (rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return tp_errpath(err, TP_EIO, path, "cannot rename the finished file into place (%s)",
				  strerror(e));
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
	free(s->zwork);
	free(s->zout);
	free(s->zsize);
	s->z = NULL;
	s->zwork = s->zout = NULL;
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
	.caps = ENC_CAP_FLOAT,
};
