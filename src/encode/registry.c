/* registry.c - the list of encoders (their output-path helpers are outfile.c). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "encode/encoder.h"
#include "util/fsutil.h"

extern const tp_encoder tp_encoder_pngseq;
extern const tp_encoder tp_encoder_null;
extern const tp_encoder tp_encoder_mp4;
extern const tp_encoder tp_encoder_hash;
extern const tp_encoder tp_encoder_flipbook;
extern const tp_encoder tp_encoder_exr;

/* Adding an encoder: one file plus one line here. */
const tp_encoder *const tp_encoders[] = {
	&tp_encoder_pngseq,
	&tp_encoder_null,
	&tp_encoder_mp4,
	&tp_encoder_hash,
	&tp_encoder_flipbook,
	&tp_encoder_exr,
	NULL,
};

const tp_encoder *enc_find_for_path(const char *path)
{
	const tp_encoder *best = NULL;
	int best_score = 0;
	for (int i = 0; tp_encoders[i]; i++) {
		int s = tp_encoders[i]->probe(path);
		if (s > best_score) {
			best_score = s;
			best = tp_encoders[i];
		}
	}
	return best;
}

const tp_encoder *enc_find(const char *name)
{
	for (int i = 0; tp_encoders[i]; i++)
		if (!strcmp(tp_encoders[i]->name, name))
			return tp_encoders[i];
	return NULL;
}
