/* null.c - discards frames: `-o null`, for timing the simulation and renderer. */
#include <string.h>

#include "encode/encoder.h"

static int null_probe(const char *path) { return strcmp(path, "null") ? 0 : 100; }
static int null_check(const enc_config *cfg, tp_err *err) { (void)cfg; (void)err; return 0; }
static int null_open(void *priv, const enc_config *cfg, tp_err *err) { (void)priv; (void)cfg; (void)err; return 0; }

static int null_write(void *priv, int index, const tp_image *img, tp_err *err)
{
	(void)priv; (void)index; (void)img; (void)err;
	return 0;
}

static int null_close(void *priv, enc_close_mode mode, tp_err *err)
{
	(void)priv; (void)mode; (void)err;
	return 0;
}

const tp_encoder tp_encoder_null = {
	.name = "null",
	.description = "discard frames (for timing)",
	.probe = null_probe,
	.check = null_check,
	.open = null_open,
	.write_frame = null_write,
	.close = null_close,
};
