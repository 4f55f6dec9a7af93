/* Frame-hash manifest parser: any text. On success the manifest must be complete and
 * consistent (header values in range, n hashes of lower-case hex), and write back to a
 * file that parses to the same thing. */
#include <ctype.h>

#include "encode/hash.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_init();
	const char *path = fuzz_file("in.manifest", data, size);
	enc_manifest m, back;
	tp_err err = {""};
	int rc = enc_manifest_read(path, &m, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err);
		return 0;
	}
	if (m.w < 1 || m.h < 1 || m.n < 0 || !m.algo[0])
		abort();
	for (int i = 0; i < m.n; i++)
		for (const char *p = enc_manifest_hash(&m, i); *p; p++)
			if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
				abort();
	char out[512];
	snprintf(out, sizeof out, "%s/out.manifest", fuzz_dir);
	if (enc_manifest_write(out, &m, &err) < 0 || enc_manifest_read(out, &back, &err) < 0) {
		fprintf(stderr, "round trip failed: %s\n", err.msg);
		abort();
	}
	if (back.n != m.n || back.first != m.first || back.w != m.w || back.h != m.h || back.fmt != m.fmt ||
	    strcmp(back.algo, m.algo))
		abort();
	for (int i = 0; i < m.n; i++)
		if (strcmp(enc_manifest_hash(&back, i), enc_manifest_hash(&m, i)))
			abort();
	enc_manifest_free(&back);
	enc_manifest_free(&m);
	return 0;
}
