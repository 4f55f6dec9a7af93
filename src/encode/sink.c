/* sink.c - an encoder bound to one configuration, with the open/close bookkeeping. */
#include <omp.h>
#include <stdlib.h>

#include "encode/encoder.h"

struct enc_sink {
	const tp_encoder *enc;
	void *priv;
	int open;
};

int enc_sink_create(const tp_encoder *e, const enc_config *cfg, enc_sink **out, tp_err *err)
{
	*out = NULL;
	enc_sink *s = calloc(1, sizeof *s);
	if (!s || !(s->priv = calloc(1, e->priv_size ? e->priv_size : 1))) {
		free(s);
		return tp_errf(err, TP_EIO, "out of memory");
	}
	s->enc = e;
	int rc = e->open(s->priv, cfg, err);
	s->open = 1; /* close() runs exactly once, even after a failed open() */
	if (rc < 0) {
		tp_err ignored;
		e->close(s->priv, ENC_CLOSE_FAILED, &ignored);
		free(s->priv);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int enc_sink_write(enc_sink *s, int index, const tp_image *img, tp_err *err)
{
	return s->enc->write_frame(s->priv, index, img, err);
}

int enc_sink_close(enc_sink *s, enc_close_mode mode, tp_err *err)
{
	if (!s->open)
		return 0;
	s->open = 0;
	return s->enc->close(s->priv, mode, err);
}

void enc_sink_destroy(enc_sink *s)
{
	if (!s)
		return;
	if (s->open) {
		tp_err ignored;
		enc_sink_close(s, ENC_CLOSE_FAILED, &ignored);
	}
	free(s->priv);
	free(s);
}

int enc_threads(const enc_config *cfg)
{
	return cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
}
