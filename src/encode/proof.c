/* proof.c - the provenance record of outputs (proof.h); the MP4 checksum is proof_mp4.c. */
#include "encode/proof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "util/fsutil.h"

#define PLACEHOLDER "????????????????"

static void format(const enc_proof *p, const char *sum, char *buf, size_t n)
{
	snprintf(buf, n, ENC_PROOF_PREFIX " %d-%d of %d; fingerprint %s%s%s", p->first, p->last,
		 p->total, p->fp, sum ? "; xxh3 " : "", sum ? sum : "");
}

void enc_proof_format(const enc_proof *p, char *buf, size_t n)
{
	char sum[17];
	snprintf(sum, sizeof sum, "%016" PRIx64, p->sum);
	format(p, p->has_sum ? sum : NULL, buf, n);
}

void enc_proof_format_unsealed(const enc_proof *p, char *buf, size_t n)
{
	format(p, PLACEHOLDER, buf, n);
}

int enc_proof_parse(const char *s, enc_proof *p)
{
	memset(p, 0, sizeof *p);
	int len = 0;
	if (sscanf(s, ENC_PROOF_PREFIX " %d-%d of %d; fingerprint %64[0-9a-f]%n", &p->first,
		   &p->last, &p->total, p->fp, &len) != 4 ||
	    strlen(p->fp) != 64)
		return -1;
	s += len;
	if (*s) {
		int k = 0;
		if (sscanf(s, "; xxh3 %16" SCNx64 "%n", &p->sum, &k) != 1 || s[k] || k != 23)
			return -1;
		p->has_sum = 1;
	}
	return p->first >= 0 && p->last >= p->first && p->total > p->last ? 0 : -1;
}

int enc_proof_match(const char *path, const enc_proof *got, const char *fp, int total, tp_err *err)
{
	if (fp && strcmp(got->fp, fp))
		return tp_errf(
			err, TP_EINPUT,
			"%s: made by other settings (another scene, --set, --seed, --frames, "
			"--size, mode or encoder options: fingerprints differ)",
			path);
	if (total >= 0 && got->total != total)
		return tp_errf(err, TP_EINPUT,
			       "%s: holds frames %d-%d of a %d-frame render, not of %d", path,
			       got->first, got->last, got->total, total);
	return 0;
}
