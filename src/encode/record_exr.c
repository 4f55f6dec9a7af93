/* record_exr.c - the record (record.h) as OpenEXR header attributes: the one place that
 * maps its keys to OpenEXR's standard attributes and typed tidepool:KEY ones. */
#include "encode/record.h"

#include <openexr.h>
#include <stdio.h>
#include <string.h>

/* The keys whose values are whole numbers (OpenEXR int attributes). */
static const char *const int_keys[] = {"frame", "first",  "last", "frames",  "loopFrames",
				       "width", "height", "bits", "padding", NULL};

int enc_record_is_int_key(const char *key)
{
	for (int i = 0; int_keys[i]; i++)
		if (!strcmp(key, int_keys[i]))
			return 1;
	return 0;
}

int enc_record_exr(void *ctx_, int part, const enc_record *r, int frame)
{
	exr_context_t ctx = ctx_;
	cJSON *o = enc_record_json(r, frame, frame);
	if (!o)
		return EXR_ERR_OUT_OF_MEMORY;
	int num;
	unsigned den;
	enc_record_fps(r->fps, &num, &den);
	const exr_attr_rational_t fps = {num, den};
	exr_result_t rc = exr_attr_set_rational(ctx, part, "framesPerSecond", &fps);
	if (rc == EXR_ERR_SUCCESS)
		rc = exr_attr_set_string(ctx, part, "wrapmodes",
					 r->map.tiles ? "periodic,periodic" : "clamp,clamp");
	if (rc == EXR_ERR_SUCCESS)
		rc = exr_attr_set_string(ctx, part, "software", "tidepool " TP_VERSION);
	for (const cJSON *k = o->child; k && rc == EXR_ERR_SUCCESS; k = k->next) {
		char name[96];
		if (!strcmp(k->string, "software"))
			continue; /* the standard attribute above */
		snprintf(name, sizeof name, ENC_RECORD_EXR_PREFIX "%s", k->string);
		if (cJSON_IsString(k))
			rc = exr_attr_set_string(ctx, part, name, k->valuestring);
		else if (cJSON_IsBool(k))
			rc = exr_attr_set_int(ctx, part, name, cJSON_IsTrue(k));
		else if (cJSON_IsNull(k)) /* loopFrames: none */
			rc = exr_attr_set_int(ctx, part, name, 0);
		else if (cJSON_IsNumber(k) && enc_record_is_int_key(k->string))
			rc = exr_attr_set_int(ctx, part, name, k->valueint);
		else if (cJSON_IsNumber(k))
			rc = exr_attr_set_double(ctx, part, name, k->valuedouble);
		else if (cJSON_IsArray(k) && cJSON_GetArraySize(k) == 2) {
			exr_attr_v2d_t v;
			v.x = cJSON_GetArrayItem(k, 0)->valuedouble;
			v.y = cJSON_GetArrayItem(k, 1)->valuedouble;
			rc = exr_attr_set_v2d(ctx, part, name, &v);
		}
	}
	cJSON_Delete(o);
	return rc;
}
