/* ckpt.c - checkpoint files (ckpt.h). */
#include "sim/ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "util/fsutil.h"
#include "util/wire.h"

/* The fuzzing build reads past a wrong checksum, so that mutations reach the section
 * readers (tests/fuzz/fuzz_ckpt.c); every other check runs. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CKPT_CHECK_SUM 0
#else
#define CKPT_CHECK_SUM 1
#endif

static const char MAGIC[8] = {'T', 'P', 'C', 'K', 'P', 'T', '0', '1'};
static const char TRAILER[8] = {'T', 'P', 'C', 'K', 'E', 'N', 'D', '\n'};

int ckpt_path(const char *dir, int frame, char *buf, size_t n)
{
	int k = snprintf(buf, n, "%s/frame-%08d.tpck", dir, frame);
	return k < 0 || (size_t)k >= n ? TP_EARG : 0;
}

static int write_header(FILE *f, const ckpt_key *key, int frame, uint64_t payload, uint64_t sum)
{
	char ver[32] = {0}, name[16] = {0};
	strncpy(ver, TP_VERSION, sizeof ver - 1);
	strncpy(name, key->sc->solver->name, sizeof name - 1);
	int rc = tp_wr_bytes(f, MAGIC, 8) | tp_wr_u32(f, CKPT_FORMAT) | tp_wr_u32(f, CKPT_HEADER);
	rc |= tp_wr_bytes(f, ver, sizeof ver) | tp_wr_bytes(f, key->fingerprint, 32);
	rc |= tp_wr_i32(f, key->sc->width) | tp_wr_i32(f, key->sc->height);
	rc |= tp_wr_i32(f, frame) | tp_wr_i32(f, key->sc->frames);
	rc |= tp_wr_bytes(f, name, sizeof name) | tp_wr_u64(f, payload) | tp_wr_u64(f, sum);
	return rc;
}

/* XXH3-64 of the header's bytes before the checksum (CKPT_SUMMED: every field, padding
 * included) and then of the `n` bytes of f from offset CKPT_HEADER (the payload); f is left
 * at its end. -1 on a read error. So no bit of the file can change unnoticed: a flip in
 * the checksum itself mismatches, in the trailer fails the trailer check. */
#define CKPT_SUMMED 120
static int payload_sum(FILE *f, uint64_t n, uint64_t *sum)
{
	XXH3_state_t *x = XXH3_createState();
	static __thread unsigned char buf[1 << 16];
	if (!x || fseek(f, 0, SEEK_SET) || fread(buf, 1, CKPT_SUMMED, f) != CKPT_SUMMED ||
	    fseek(f, CKPT_HEADER, SEEK_SET)) {
		XXH3_freeState(x);
		return -1;
	}
	XXH3_64bits_reset(x);
	XXH3_64bits_update(x, buf, CKPT_SUMMED);
	while (n > 0) {
		size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
		if (fread(buf, 1, k, f) != k)
			break;
		XXH3_64bits_update(x, buf, k);
		n -= k;
	}
	*sum = XXH3_64bits_digest(x);
	XXH3_freeState(x);
	return n ? -1 : 0;
}

/* A write error: the file and the system's reason. */
static int write_failed(tp_err *err, const char *path, int e)
{
	return tp_errpath(err, TP_EIO, path, "write failed (%s)",
		       strerror(e ? e : EIO));
}

int ckpt_write(const char *dir, const ckpt_key *key, sim_loop *lp, int frame, uint64_t *bytes,
	       tp_err *err)
{
	char path[4352], tmp[4400];
	if (ckpt_path(dir, frame, path, sizeof path) < 0)
		return tp_errf(err, TP_EARG, "%s: path too long", dir);
	snprintf(tmp, sizeof tmp, "%s/.frame-%08d.tpck.tmp-%ld", dir, frame, (long)getpid());
	FILE *f = fopen(tmp, "w+b");
	if (!f)
		return tp_errpath(err, TP_EIO, tmp, "cannot create (%s)", strerror(errno));
	errno = 0;
	int rc = write_header(f, key, frame, 0, 0) ? write_failed(err, path, errno) : 0;
	if (rc == 0 && (rc = loop_save(lp, f, err)) < 0 && (ferror(f) || errno))
		rc = write_failed(err, path, errno); /* the state's own "write failed" */
	long end = rc == 0 ? ftell(f) : -1;
	if (rc == 0 && (end < CKPT_HEADER || fflush(f)))
		rc = write_failed(err, path, errno);
	if (rc == 0) {
		/* the payload's length, then the checksum of the header and payload, go into
		 * the header once known */
		uint64_t payload = (uint64_t)end - CKPT_HEADER, sum = 0;
		if (tp_wr_bytes(f, TRAILER, 8) || fseek(f, 0, SEEK_SET) ||
		    write_header(f, key, frame, payload, 0) || fflush(f) ||
		    payload_sum(f, payload, &sum) || fseek(f, 0, SEEK_SET) ||
		    write_header(f, key, frame, payload, sum) || fflush(f) || ferror(f) ||
		    fsync(fileno(f)))
			rc = write_failed(err, path, errno);
		*bytes = payload + CKPT_HEADER + 8;
	}
	if (fclose(f) != 0 && rc == 0)
		rc = write_failed(err, path, errno);
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	return tp_commit_file(tmp, path, err);
}

static int read_header(FILE *f, ckpt_info *in)
{
	char magic[8];
	uint32_t format, hsize;
	memset(in, 0, sizeof *in);
	int rc = tp_rd_bytes(f, magic, 8) || memcmp(magic, MAGIC, 8);
	rc = rc || tp_rd_u32(f, &format) || format != CKPT_FORMAT || tp_rd_u32(f, &hsize) ||
	     hsize != CKPT_HEADER;
	rc = rc || tp_rd_bytes(f, in->version, 32) || tp_rd_bytes(f, in->fingerprint, 32);
	rc = rc || tp_rd_int(f, &in->w) || tp_rd_int(f, &in->h) || tp_rd_int(f, &in->frame) ||
	     tp_rd_int(f, &in->frames);
	rc = rc || tp_rd_bytes(f, in->solver, 16) || tp_rd_u64(f, &in->payload) ||
	     tp_rd_u64(f, &in->sum);
	in->version[32] = in->solver[16] = 0;
	return rc ? -1 : 0;
}

static int check_open(FILE *f, const char *path, const ckpt_key *key, int frame, ckpt_info *in,
		      tp_err *err)
{
	const scene *sc = key->sc;
	if (read_header(f, in) < 0)
		return tp_errf(err, TP_EINPUT,
			       "%s: not a tidepool checkpoint (format %d), or truncated", path,
			       CKPT_FORMAT);
	if (strcmp(in->version, TP_VERSION)) {
		char shown[4 * 32 + 4]; /* bytes of a damaged file: escaped, never raw */
		tp_escape_bytes(in->version, strlen(in->version), 32, shown, sizeof shown);
		return tp_errf(err, TP_EINPUT,
			       "%s: written by tidepool %s, this is %s (remake the cache with this "
			       "version)",
			       path, shown, TP_VERSION);
	}
	if (in->w != sc->width || in->h != sc->height)
		return tp_errf(err, TP_EINPUT,
			       "%s: made at %dx%d, this render is %dx%d (same %s as the cache)",
			       path, in->w, in->h, sc->width, sc->height,
			       scene_ov_name(sc, SCENE_OV_SIZE));
	if (memcmp(in->fingerprint, key->fingerprint, 32))
		return tp_errf(err, TP_EINPUT,
			       "%s: made for another scene, or other %s/%s/%s options "
			       "(fingerprints differ)",
			       path, scene_ov_name(sc, SCENE_OV_SETS),
			       scene_ov_name(sc, SCENE_OV_SEED),
			       scene_ov_name(sc, SCENE_OV_FRAMES));
	if (frame >= 0 && in->frame != frame)
		return tp_errpath(err, TP_EINPUT, path, "holds frame %d, not %d (renamed?)",
			       in->frame, frame);
	if (in->frames != sc->frames || strncmp(in->solver, sc->solver->name, 15) != 0)
		return tp_errf(err, TP_EINPUT,
			       "%s: damaged (its frame count or solver is not this render's)", path);
	if (in->frame < 1 || in->frame > in->frames)
		return tp_errf(err, TP_EINPUT, "%s: damaged (frame %d of a %d-frame render)", path,
			       in->frame, in->frames);
	/* size: header + payload + trailer */
	if (fseek(f, 0, SEEK_END) || ftell(f) < 0 ||
	    (uint64_t)ftell(f) != CKPT_HEADER + in->payload + 8)
		return tp_errf(err, TP_EINPUT,
			       "%s: truncated or damaged (size does not match its header)", path);
	char tr[8];
	if (fseek(f, -8, SEEK_END) || tp_rd_bytes(f, tr, 8) || memcmp(tr, TRAILER, 8))
		return tp_errf(err, TP_EINPUT, "%s: truncated or damaged (no trailer)", path);
	uint64_t sum = 0;
	if (payload_sum(f, in->payload, &sum))
		return tp_errf(err, TP_EIO, "%s: read error", path);
	if (sum != in->sum && CKPT_CHECK_SUM)
		return tp_errf(err, TP_EINPUT,
			       "%s: damaged (the checksum of its header and state does not match: "
			       "remake the cache)",
			       path);
	return fseek(f, CKPT_HEADER, SEEK_SET) ? tp_errpath(err, TP_EIO, path, "cannot read") : 0;
}

int ckpt_check(const char *path, const ckpt_key *key, int frame, ckpt_info *info, tp_err *err)
{
	FILE *f = NULL;
	int orc = tp_fopen_regular(path, "a checkpoint", &f, err);
	if (orc < 0)
		return orc;
	ckpt_info tmp;
	int rc = check_open(f, path, key, frame, info ? info : &tmp, err);
	fclose(f);
	return rc;
}

int ckpt_load(const char *path, const ckpt_key *key, int frame, sim_loop *lp, tp_err *err)
{
	FILE *f = NULL;
	int orc = tp_fopen_regular(path, "a checkpoint", &f, err);
	if (orc < 0)
		return orc;
	ckpt_info in;
	int rc = check_open(f, path, key, frame, &in, err);
	if (rc == 0 && (rc = loop_load(lp, f, err)) < 0)
		tp_errprefix(err, rc, "%s", path);
	/* the header's frame is checksummed, the state's is checked against it */
	if (rc == 0 && loop_loaded_frame(lp) != in.frame)
		rc = tp_errf(err, TP_EINPUT,
			     "%s: damaged (its state is not at frame %d, the frame its header gives)",
			     path, in.frame);
	if (rc == 0 && ftell(f) != (long)(CKPT_HEADER + in.payload))
		rc = tp_errf(err, TP_EINPUT, "%s: damaged (the state ends before its trailer)",
			     path);
	fclose(f);
	return rc;
}

int ckpt_find(const char *dir, int at_most, int *frame, tp_err *err)
{
	*frame = 0;
	DIR *d = opendir(dir);
	if (!d)
		return tp_errpath(err, TP_EIO, dir, "cannot read the cache directory (%s)",
			       strerror(errno));
	for (struct dirent *e; (e = readdir(d));) {
		int k, len = 0;
		if (sscanf(e->d_name, "frame-%8d.tpck%n", &k, &len) == 1 && len == 19 &&
		    !e->d_name[len] && k > *frame && k <= at_most)
			*frame = k;
	}
	closedir(d);
	return 0;
}
