/* MP4 segment reader (what `tidepool join` and `tasks --missing` trust): the bytes as a
 * record string for enc_proof_parse(), then as a file for enc_mp4_verify() (the comment's
 * record, the packets' checksum and count) and enc_proof_match() against one render's
 * fingerprint. In this build the packets' checksum is not required to match
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), so mutations reach the checks behind it.
 * Seeds: segments of `tidepool render --range` (tests/fuzz/corpus/segment). */
#include "encode/proof.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_init();
	char rec[512];
	size_t n = size < sizeof rec - 1 ? size : sizeof rec - 1;
	memcpy(rec, data, n);
	rec[n] = '\0';
	enc_proof p;
	if (enc_proof_parse(rec, &p) == 0 && (p.first < 0 || p.last < p.first || p.total <= p.last))
		abort();
	const char *path = fuzz_file("seg.mp4", data, size);
	tp_err err = {""};
	int rc = enc_mp4_verify(path, &p, &err);
	if (rc == 0)
		rc = enc_proof_match(path, &p, p.fp, p.total, &err);
	if (rc < 0)
		fuzz_check_error(rc, &err);
	return 0;
}
