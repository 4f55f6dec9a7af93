/* record.c - the record every output carries: its writer as JSON (record.h; OpenEXR's
 * attributes are record_exr.c, the reader record_read.c). Linked into the libav plugin
 * too (MP4 metadata), so it uses nothing of libtidepool. The keys are documented in
 * docs/textures.md, "What each file records". */
#include "encode/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pair(cJSON *o, const char *key, double a, double b)
{
	const double v[2] = {a, b};
	cJSON_AddItemToObject(o, key, cJSON_CreateDoubleArray(v, 2));
}

/* What a sample holds, its unit once decoded, and the encoding: decoded = (v - offset) /
 * scale where a PNG's levels are linear (scale 0: none given). */
typedef struct values {
	const char *what, *units, *encoding;
	double scale, offset;
} values;

static values describe(const enc_record *r)
{
	const tp_map_info *m = &r->map;
	const int flt = r->float_samples;
	const double top = m->bits == 16 ? 65535.0 : 255.0;
	const char *len = m->metres > 0 ? "m" : "height units";
	switch (r->mode) {
	case TP_MODE_HEIGHT:
		return flt ? (values){"height", len, "float", 0, 0}
			   : (values){"height", "height units",
				      "v = round(h * scale) + offset, clamped to 0..65535",
				      m->levels, 32768};
	case TP_MODE_DISPLACEMENT:
		return flt ? (values){"displacement X, Y, Z", len, "float", 0, 0}
			   : (values){"displacement X, Y, Z", "height units",
				      "v = round(c * scale) + offset per component c", m->levels,
				      32768};
	case TP_MODE_NORMAL:
		return flt ? (values){"unit normal x, y, z", "1", "float", 0, 0}
			   : (values){"unit normal x, y, z", "1",
				      "v = round((n * 0.5 + 0.5) * (2^bits - 1))", top / 2,
				      top / 2};
	case TP_MODE_FOAM:
		return flt ? (values){"foam coverage 0..1", "1", "float", 0, 0}
			   : (values){"foam coverage 0..1", "1", "v = round(f * scale)", 65535, 0};
	case TP_MODE_CAUSTICS:
		if (flt)
			return (values){"light level I (1: flat water)", "1", "float", 0, 0};
		return m->caustics_linear
			       ? (values){"light level I (1: flat water)", "1",
					  "v = round(min(1, intensity * I) * (2^bits - 1))", 0, 0}
			       : (values){"light level I (1: flat water)", "1",
					  "v = round((1 - exp(-intensity * I)) * (2^bits - 1))", 0,
					  0};
	case TP_MODE_PARTICLES:
	case TP_MODE_COLOR:
	default: return (values){"colour picture", "sRGB", "sRGB, 8 bits", 0, 0};
	}
}

cJSON *enc_record_json(const enc_record *r, int first, int last)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	const tp_map_info *m = &r->map;
	const int colour = r->mode == TP_MODE_COLOR || r->mode == TP_MODE_PARTICLES;
	cJSON_AddStringToObject(o, "format", ENC_RECORD_FORMAT);
	cJSON_AddStringToObject(o, "software", "tidepool " TP_VERSION);
	cJSON_AddStringToObject(o, "version", TP_VERSION);
	if (r->fp[0])
		cJSON_AddStringToObject(o, "fingerprint", r->fp);
	cJSON_AddStringToObject(o, "mode", r->mode_name ? r->mode_name : "?");
	if (first >= 0 && first == last)
		cJSON_AddNumberToObject(o, "frame", first);
	else if (first >= 0) {
		cJSON_AddNumberToObject(o, "first", first);
		cJSON_AddNumberToObject(o, "last", last);
	}
	cJSON_AddNumberToObject(o, "frames", r->frames);
	cJSON_AddNumberToObject(o, "fps", r->fps);
	if (m->loop_frames > 0)
		cJSON_AddNumberToObject(o, "loopFrames", m->loop_frames);
	else
		cJSON_AddNullToObject(o, "loopFrames");
	cJSON_AddNumberToObject(o, "width", r->width);
	cJSON_AddNumberToObject(o, "height", r->height);
	cJSON_AddStringToObject(o, "colorSpace", colour ? "sRGB" : "data");
	const values v = describe(r);
	cJSON_AddStringToObject(o, "values", v.what);
	cJSON_AddStringToObject(o, "units", v.units);
	cJSON_AddStringToObject(o, "encoding", v.encoding);
	if (!r->float_samples)
		cJSON_AddNumberToObject(o, "bits", colour ? 8 : m->bits);
	if (v.scale > 0) {
		cJSON_AddNumberToObject(o, "scale", v.scale);
		cJSON_AddNumberToObject(o, "offset", v.offset);
	}
	if (r->mode == TP_MODE_NORMAL) {
		cJSON_AddStringToObject(o, "normalConvention",
					m->normal_directx ? "directx" : "opengl");
		cJSON_AddNumberToObject(o, "normalStrength", m->normal_strength);
	}
	if (r->mode == TP_MODE_CAUSTICS) {
		cJSON_AddStringToObject(o, "causticsTone", m->caustics_linear ? "linear" : "soft");
		cJSON_AddNumberToObject(o, "causticsIntensity", m->caustics_intensity);
		cJSON_AddNumberToObject(o, "causticsDepth", m->caustics_depth);
	}
	cJSON_AddStringToObject(o, "axes", "X right, Y up the image, Z up");
	cJSON_AddBoolToObject(o, "tiles", m->tiles);
	pair(o, "texelSize", m->texel_w, m->texel_h);
	pair(o, "tileSize", m->tile_w, m->tile_h);
	if (m->metres > 0) {
		cJSON_AddNumberToObject(o, "metresPerUnit", m->metres);
		pair(o, "texelMetres", m->texel_w * m->metres, m->texel_h * m->metres);
		pair(o, "tileMetres", m->tile_w * m->metres, m->tile_h * m->metres);
	}
	if (r->cols > 0) {
		pair(o, "grid", r->cols, r->rows);
		pair(o, "cell", r->cell_w, r->cell_h);
		cJSON_AddNumberToObject(o, "padding", r->padding);
	}
	return o;
}

char *enc_record_text(const enc_record *r, int first, int last)
{
	cJSON *o = enc_record_json(r, first, last);
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

char *enc_record_picture(const char *what)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "format", ENC_RECORD_FORMAT);
	cJSON_AddStringToObject(o, "software", "tidepool " TP_VERSION);
	cJSON_AddStringToObject(o, "version", TP_VERSION);
	cJSON_AddStringToObject(o, "image", what);
	cJSON_AddStringToObject(o, "colorSpace", "sRGB");
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

void enc_record_fps(double fps, int *num, unsigned *den)
{
	static const unsigned dens[] = {1, 1001, 1000, 100};
	for (size_t i = 0; i < sizeof dens / sizeof dens[0]; i++) {
		const double n = fps * dens[i];
		if (fabs(n - round(n)) < 1e-6 * dens[i] && n < 2e9) {
			*num = (int)round(n);
			*den = dens[i];
			return;
		}
	}
	*num = (int)round(fps * 1000);
	*den = 1000;
}
