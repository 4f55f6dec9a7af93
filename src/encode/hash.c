/* hash.c - frame hashing (libxxhash's XXH3-128 by default, or any libavutil av_hash,
 * reached through the libav plugin: avplugin.h), frame-hash manifests and the `hash`
 * encoder. */
#include "encode/hash.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <xxhash.h>
#ifdef __x86_64__
/* libxxhash's runtime dispatch to its SSE2, AVX2 or AVX-512 code: the same hashes, the
 * fastest this CPU runs (AVX2 hashes a 1080p frame in 0.2 ms where SSE2 takes 0.3). */
#include <xxh_x86dispatch.h>
#endif

#include "encode/avplugin.h"
#include "encode/encoder.h"
#include "util/fsutil.h"

struct enc_hasher {
	const tp_av_plugin *av;    /* av_hash's calls, NULL for xxh128 */
	struct AVHashContext *ctx; /* NULL for xxh128 */
	XXH3_state_t *xxh;         /* xxh128 only */
	char algo[32];
	uint8_t *row; /* big-endian copy of one 16-bit row */
	size_t row_cap;
};

/* libavutil's spelling of algo ("SHA256", "murmur3", ...; matched without case) through
 * the plugin into *name, NULL if libavutil has no such hash. Fails (TP_EIO, err naming
 * the plugin) if the plugin cannot be loaded. */
static int av_hash_lookup(const char *algo, const tp_av_plugin **av, const char **name,
			  tp_err *err)
{
	tp_err aerr = {""};
	*name = NULL;
	if (!(*av = tp_av(&aerr)))
		return tp_errf(err, TP_EIO, "hash algorithm '%s' needs libavutil, from the plugin %s (%s)",
			       algo, TP_AV_PLUGIN_NAME, aerr.msg);
	for (int i = 0; (*av)->hash_names(i); i++)
		if (!strcasecmp((*av)->hash_names(i), algo))
			*name = (*av)->hash_names(i);
	return 0;
}

int enc_hasher_create(const char *algo, enc_hasher **out, tp_err *err)
{
	*out = NULL;
	if (!algo)
		algo = ENC_HASH_DEFAULT;
	if (!strcasecmp(algo, "xxh128")) {
		enc_hasher *h = calloc(1, sizeof *h);
		if (!h || !(h->xxh = XXH3_createState())) {
			free(h);
			return tp_errf(err, TP_EIO, "out of memory");
		}
		strcpy(h->algo, "xxh128");
		*out = h;
		return 0;
	}
	const tp_av_plugin *av;
	const char *name;
	int rc = av_hash_lookup(algo, &av, &name, err);
	if (rc < 0)
		return rc;
	if (!name || strlen(name) >= sizeof((enc_hasher *)0)->algo)
		return tp_errf(err, TP_EUSAGE,
			       "unknown hash algorithm '%s' (xxh128, or a libavutil "
			       "hash: sha256, md5, sha512, ...)",
			       algo);
	enc_hasher *h = calloc(1, sizeof *h);
	if (!h)
		return tp_errf(err, TP_EIO, "out of memory");
	h->av = av;
	if (av->hash_alloc(&h->ctx, name) < 0 ||
	    av->hash_get_size(h->ctx) * 2 + 1 > ENC_HASH_HEX_MAX) {
		enc_hasher_destroy(h);
		return tp_errf(err, TP_EIO, "cannot set up hash '%s'", name);
	}
	for (size_t i = 0; name[i]; i++)
		h->algo[i] = (char)tolower((unsigned char)name[i]);
	*out = h;
	return 0;
}

void enc_hasher_destroy(enc_hasher *h)
{
	if (!h)
		return;
	if (h->av)
		h->av->hash_freep(&h->ctx);
	XXH3_freeState(h->xxh);
	free(h->row);
	free(h);
}

const char *enc_hasher_algo(const enc_hasher *h)
{
	return h->algo;
}

int enc_hasher_image(enc_hasher *h, const tp_image *img, char *hex, size_t n, tp_err *err)
{
	if (n < ENC_HASH_HEX_MAX)
		return tp_errf(err, TP_EIO, "hash buffer too small");
	size_t bytes = (size_t)img->w * (size_t)tp_pixfmt_bytes(img->fmt);
	int wide = img->fmt == TP_GRAY16 || img->fmt == TP_RGB16;
	if (wide && bytes > h->row_cap) {
		uint8_t *p = realloc(h->row, bytes);
		if (!p)
			return tp_errf(err, TP_EIO, "out of memory");
		h->row = p;
		h->row_cap = bytes;
	}
	if (h->xxh)
		XXH3_128bits_reset(h->xxh);
	else
		h->av->hash_init(h->ctx);
	for (int y = 0; y < img->h; y++) {
		const uint8_t *src = tp_image_row(img, y);
		if (wide) {
			/* Canonical order is big-endian, as PNG stores 16-bit samples. */
			const uint16_t *s = (const uint16_t *)src;
			for (size_t i = 0; i < bytes / 2; i++) {
				h->row[2 * i] = (uint8_t)(s[i] >> 8);
				h->row[2 * i + 1] = (uint8_t)(s[i] & 0xff);
			}
			src = h->row;
		}
		if (h->xxh)
			XXH3_128bits_update(h->xxh, src, bytes);
		else
			h->av->hash_update(h->ctx, src, bytes);
	}
	if (h->xxh) {
		/* The canonical (big-endian) form, as `xxh128sum` prints it. */
		XXH128_canonical_t c;
		XXH128_canonicalFromHash(&c, XXH3_128bits_digest(h->xxh));
		for (int i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", c.digest[i]);
		return 0;
	}
	h->av->hash_final_hex(h->ctx, (uint8_t *)hex, (int)n);
	return 0;
}

static const struct {
	tp_pixfmt fmt;
	const char *name;
} pixfmt_names[] = {
	{TP_RGB8, "rgb24"},      {TP_RGBA8, "rgba"},    {TP_GRAY8, "gray"},
	{TP_GRAY16, "gray16be"}, {TP_RGB16, "rgb48be"},
	/* floats as the host stores them (little-endian here) */
	{TP_GRAYF32, "grayf32"}, {TP_RGBF32, "rgbf32"},
};

const char *enc_hash_pixfmt_name(tp_pixfmt f)
{
	for (size_t i = 0; i < sizeof pixfmt_names / sizeof pixfmt_names[0]; i++)
		if (pixfmt_names[i].fmt == f)
			return pixfmt_names[i].name;
	return "unknown";
}

int enc_hash_pixfmt_parse(const char *name, tp_pixfmt *out)
{
	for (size_t i = 0; i < sizeof pixfmt_names / sizeof pixfmt_names[0]; i++)
		if (!strcmp(pixfmt_names[i].name, name)) {
			*out = pixfmt_names[i].fmt;
			return 0;
		}
	return TP_EINPUT;
}

void enc_manifest_free(enc_manifest *m)
{
	if (!m)
		return;
	free(m->hashes);
	m->hashes = NULL;
	m->n = m->cap = 0;
}

static int manifest_reserve(enc_manifest *m, int n, tp_err *err)
{
	if (n <= m->cap)
		return 0;
	int cap = m->cap ? m->cap : 16;
	while (cap < n)
		cap *= 2;
	void *p = realloc(m->hashes, (size_t)cap * sizeof *m->hashes);
	if (!p)
		return tp_errf(err, TP_EIO, "out of memory for %d frame hashes", n);
	m->hashes = p;
	memset(m->hashes + m->cap, 0, (size_t)(cap - m->cap) * sizeof *m->hashes);
	m->cap = cap;
	return 0;
}

int enc_manifest_set(enc_manifest *m, int i, const char *hex, tp_err *err)
{
	if (i < m->first || strlen(hex) >= ENC_HASH_HEX_MAX)
		return tp_errf(err, TP_EINPUT, "bad frame hash for frame %d", i);
	int rc = manifest_reserve(m, i - m->first + 1, err);
	if (rc < 0)
		return rc;
	snprintf(m->hashes[i - m->first], ENC_HASH_HEX_MAX, "%s", hex);
	if (i >= m->n)
		m->n = i + 1;
	return 0;
}

const char *enc_manifest_hash(const enc_manifest *m, int i)
{
	if (i < 0 || i >= m->n)
		return NULL;
	return i < m->first ? "" : m->hashes[i - m->first];
}

static int is_hex(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
			return 0;
	return 1;
}

/* 1 if known, 0 if not, -1 with err set if a name other than xxh128 needs the missing
 * plugin to tell. */
static int known_algo(const char *algo, tp_err *err)
{
	if (!strcasecmp(algo, "xxh128"))
		return 1;
	const tp_av_plugin *av;
	const char *name;
	return av_hash_lookup(algo, &av, &name, err) < 0 ? -1 : name != NULL;
}

/* Parses one "key value" header line; returns 1 when it was a header key. */
static int header_line(enc_manifest *m, const char *key, const char *val, unsigned *seen,
		       const char *path, int line, tp_err *err, int *rc)
{
	static const char *const keys[] = {ENC_MANIFEST_MAGIC, "width", "height", "pixfmt", "hash"};
	for (unsigned k = 0; k < 5; k++) {
		if (strcmp(key, keys[k]))
			continue;
		char *end = NULL;
		long v = strtol(val, &end, 10);
		int bad = 0;
		switch (k) {
		case 0: bad = *end || v != ENC_MANIFEST_VERSION; break;
		case 1:
			bad = *end || v < 1 || v > 65536;
			m->w = (int)v;
			break;
		case 2:
			bad = *end || v < 1 || v > 65536;
			m->h = (int)v;
			break;
		case 3: bad = enc_hash_pixfmt_parse(val, &m->fmt) < 0; break;
		default:
			bad = !*val || strlen(val) >= sizeof m->algo;
			if (!bad)
				snprintf(m->algo, sizeof m->algo, "%s", val);
			tp_err aerr = {""};
			const int known = bad ? 1 : known_algo(val, &aerr);
			if (known < 0) { /* a libavutil name, and no plugin to ask */
				*rc = tp_errf(err, TP_EIO, "%s:%d: %s", path, line, aerr.msg);
				*seen |= 1u << k;
				return 1;
			}
			if (!known) {
				/* A bad input file, not a bad command line: exit 3, not 2. */
				*rc = tp_errf(err, TP_EINPUT, "%s:%d: unknown hash algorithm '%s'",
					      path, line, val);
				*seen |= 1u << k;
				return 1;
			}
		}
		if (bad)
			*rc = tp_errf(err, TP_EINPUT, "%s:%d: bad value for '%s': '%s'", path, line,
				      key, val);
		else if (k == 0 && *seen)
			*rc = tp_errf(err, TP_EINPUT, "%s:%d: '%s' must be the first line", path,
				      line, key);
		else if (*seen & (1u << k))
			*rc = tp_errf(err, TP_EINPUT, "%s:%d: '%s' given twice", path, line, key);
		*seen |= 1u << k;
		return 1;
	}
	return 0;
}

int enc_manifest_read(const char *path, enc_manifest *m, tp_err *err)
{
	memset(m, 0, sizeof *m);
	FILE *f;
	int orc = tp_fopen_regular(path, "a frame-hash manifest", &f, err);
	if (orc < 0)
		return orc;
	char buf[512];
	int rc = 0, line = 0, sealed = 0, rfirst = -1, rlast = -1;
	unsigned seen = 0;
	XXH3_state_t *sum = XXH3_createState();
	if (!sum)
		rc = tp_errf(err, TP_EIO, "out of memory");
	else
		XXH3_64bits_reset(sum);
	while (rc == 0 && fgets(buf, sizeof buf, f)) {
		line++;
		size_t len = strlen(buf);
		if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
			rc = tp_errf(err, TP_EINPUT, "%s:%d: line too long", path, line);
			break;
		}
		if (sealed) {
			rc = tp_errf(err, TP_EINPUT, "%s:%d: a line after the xxh3 line", path, line);
			break;
		}
		if (!strncmp(buf, "xxh3 ", 5)) {
			unsigned long long want = 0;
			int k = 0;
			if (sscanf(buf + 5, "%16llx%n", &want, &k) != 1 || k != 16 ||
			    (uint64_t)want != XXH3_64bits_digest(sum)) {
				rc = tp_errf(err, TP_EINPUT,
					     "%s:%d: damaged (the checksum of the lines before does "
					     "not match)",
					     path, line);
				break;
			}
			sealed = 1;
			continue;
		}
		XXH3_64bits_update(sum, buf, len);
		while (len && isspace((unsigned char)buf[len - 1]))
			buf[--len] = 0;
		if (!len || buf[0] == '#')
			continue;
		size_t ml = strlen(ENC_MANIFEST_MAGIC);
		if (!seen && (strncmp(buf, ENC_MANIFEST_MAGIC, ml) || buf[ml] != ' ')) {
			rc = tp_errf(err, TP_EINPUT, "%s: not a frame-hash manifest (no '%s' line)",
				     path, ENC_MANIFEST_MAGIC);
			break;
		}
		char *sp = strchr(buf, ' ');
		if (!sp) {
			rc = tp_errf(err, TP_EINPUT, "%s:%d: expected 'key value', got '%s'", path,
				     line, buf);
			break;
		}
		*sp = 0;
		const char *key = buf, *val = sp + 1;
		if (!strcmp(key, "fingerprint")) {
			if (strlen(val) != 64 || !is_hex(val) || m->fp[0])
				rc = tp_errf(err, TP_EINPUT, "%s:%d: bad fingerprint line", path, line);
			snprintf(m->fp, sizeof m->fp, "%s", val);
			continue;
		}
		if (!strcmp(key, "frames")) {
			int k = 0;
			if (sscanf(val, "%d-%d of %d%n", &rfirst, &rlast, &m->total, &k) != 3 ||
			    val[k] || rfirst < 0 || rlast < rfirst || m->total <= rlast)
				rc = tp_errf(err, TP_EINPUT, "%s:%d: bad frames line (expected 'frames "
					     "A-B of N')", path, line);
			continue;
		}
		if (header_line(m, key, val, &seen, path, line, err, &rc))
			continue;
		if (seen != 0x1f) {
			rc = tp_errf(err, TP_EINPUT,
				     "%s:%d: frame line before the header is complete", path, line);
			break;
		}
		char *end = NULL;
		long idx = strtol(key, &end, 10);
		if (m->n == 0 && m->first == 0 && !*end && idx > 0 && idx < 100000000)
			m->first = m->n =
				(int)idx; /* a range's manifest starts at its first frame */
		if (*end || !isdigit((unsigned char)key[0]) || idx != m->n || !is_hex(val) ||
		    strlen(val) >= ENC_HASH_HEX_MAX) {
			rc = tp_errf(err, TP_EINPUT,
				     "%s:%d: expected '%d <lower-case hex digest>', got '%s %s'",
				     path, line, m->n, key, val);
			break;
		}
		rc = enc_manifest_set(m, (int)idx, val, err);
	}
	if (rc == 0 && ferror(f))
		rc = tp_errf(err, TP_EIO, "%s: read error", path);
	if (rc == 0 && seen != 0x1f)
		rc = tp_errf(err, TP_EINPUT,
			     "%s: incomplete header (needs %s, width, height, pixfmt, hash)", path,
			     ENC_MANIFEST_MAGIC);
	if (rc == 0 && (m->fp[0] || rfirst >= 0 || sealed) &&
	    !(m->fp[0] && rfirst >= 0 && sealed))
		rc = tp_errf(err, TP_EINPUT,
			     "%s: truncated or damaged (a fingerprint, frames and xxh3 line go "
			     "together)",
			     path);
	if (rc == 0 && m->fp[0] && (m->first != rfirst || m->n - 1 != rlast))
		rc = tp_errf(err, TP_EINPUT, "%s: holds frames %d-%d, but its frames line says %d-%d",
			     path, m->first, m->n - 1, rfirst, rlast);
	XXH3_freeState(sum);
	fclose(f);
	if (rc < 0)
		enc_manifest_free(m);
	return rc;
}

static void put(FILE *f, XXH3_state_t *sum, const char *s)
{
	XXH3_64bits_update(sum, s, strlen(s));
	fputs(s, f);
}

int enc_manifest_write(const char *path, const enc_manifest *m, tp_err *err)
{
	/* A file appears complete or not at all; a stream (/dev/stdout) is written directly. */
	tp_wfile w;
	int rc = tp_wopen(&w, path, err);
	if (rc < 0)
		return rc;
	/* No software version here: a manifest must only change when the frames do. */
	XXH3_state_t *sum = XXH3_createState();
	if (!sum) {
		tp_wclose(&w, 0, err);
		return tp_errf(err, TP_EIO, "out of memory");
	}
	XXH3_64bits_reset(sum);
	char line[ENC_HASH_HEX_MAX + 256];
	snprintf(line, sizeof line, "%s %d\nwidth %d\nheight %d\npixfmt %s\nhash %s\n",
		 ENC_MANIFEST_MAGIC, ENC_MANIFEST_VERSION, m->w, m->h,
		 enc_hash_pixfmt_name(m->fmt), m->algo);
	put(w.f, sum, line);
	const int proof = m->fp[0] && m->n > m->first;
	if (proof) {
		snprintf(line, sizeof line, "fingerprint %s\nframes %d-%d of %d\n", m->fp, m->first,
			 m->n - 1, m->total);
		put(w.f, sum, line);
	}
	for (int i = m->first; i < m->n; i++) {
		snprintf(line, sizeof line, "%d %s\n", i, m->hashes[i - m->first]);
		put(w.f, sum, line);
	}
	if (proof)
		fprintf(w.f, "xxh3 %016llx\n", (unsigned long long)XXH3_64bits_digest(sum));
	XXH3_freeState(sum);
	return tp_wclose(&w, 1, err);
}

/* The encoder: collects one hash per frame and writes the manifest when closed, so the
 * file appears complete or not at all. */
typedef struct hash_enc {
	enc_hasher *hasher;
	enc_manifest m;
	char path[4096];
	int opened;
} hash_enc;

static int hash_probe(const char *path)
{
	if (tp_has_suffix(path, ".tpmanifest"))
		return 100;
	if (tp_has_suffix(path, ".manifest"))
		return 60;
	return 0;
}

static int hash_check(const enc_config *cfg, tp_err *err)
{
	if (strlen(cfg->path) >= sizeof((hash_enc *)0)->path)
		return tp_errf(err, TP_EUSAGE, "%s: path too long", cfg->path);
	if (enc_hash_pixfmt_name(cfg->fmt)[0] == 'u')
		return tp_errf(err, TP_EUSAGE, "%s: cannot hash pixel format %d", cfg->path,
			       (int)cfg->fmt);
	if (cfg->settings_only)
		return 0;
	return tp_check_output(cfg->path, cfg->overwrite, 1, err); /* streams too */
}

static int hash_open(void *priv, const enc_config *cfg, tp_err *err)
{
	hash_enc *s = priv;
	int rc = hash_check(cfg, err);
	if (rc < 0)
		return rc;
	snprintf(s->path, sizeof s->path, "%s", cfg->path);
	rc = enc_hasher_create(NULL, &s->hasher, err);
	if (rc < 0)
		return rc;
	s->m.w = cfg->w;
	s->m.h = cfg->h;
	s->m.fmt = cfg->fmt;
	snprintf(s->m.algo, sizeof s->m.algo, "%s", enc_hasher_algo(s->hasher));
	/* Reserve up front so write_frame does not allocate. */
	rc = manifest_reserve(&s->m, cfg->frames > 0 ? cfg->frames : 1, err);
	if (rc < 0)
		return rc;
	s->m.first = s->m.n = cfg->first;
	if (cfg->fingerprint) {
		snprintf(s->m.fp, sizeof s->m.fp, "%s", cfg->fingerprint);
		s->m.total = cfg->total;
	}
	s->opened = 1;
	return 0;
}

static int hash_write(void *priv, int index, const tp_image *img, tp_err *err)
{
	hash_enc *s = priv;
	if (img->w != s->m.w || img->h != s->m.h || img->fmt != s->m.fmt)
		return tp_errf(err, TP_EIO, "%s: frame %d is %dx%d %s, manifest is %dx%d %s",
			       s->path, index, img->w, img->h, enc_hash_pixfmt_name(img->fmt),
			       s->m.w, s->m.h, enc_hash_pixfmt_name(s->m.fmt));
	if (index != s->m.n)
		return tp_errf(err, TP_EIO, "%s: frame %d arrived out of order (expected %d)",
			       s->path, index, s->m.n);
	char hex[ENC_HASH_HEX_MAX];
	int rc = enc_hasher_image(s->hasher, img, hex, sizeof hex, err);
	if (rc < 0)
		return rc;
	return enc_manifest_set(&s->m, index, hex, err);
}

static int hash_close(void *priv, enc_close_mode mode, tp_err *err)
{
	hash_enc *s = priv;
	int rc = 0;
	/* An interrupted render keeps the hashes of the frames it finished. */
	if (s->opened && mode != ENC_CLOSE_FAILED)
		rc = enc_manifest_write(s->path, &s->m, err);
	enc_manifest_free(&s->m);
	enc_hasher_destroy(s->hasher);
	s->hasher = NULL;
	s->opened = 0;
	return rc;
}

const tp_encoder tp_encoder_hash = {
	.name = "hash",
	.description = "frame-hash manifest (" ENC_MANIFEST_MAGIC " 1, xxh128 of canonical pixels)",
	.priv_size = sizeof(hash_enc),
	.probe = hash_probe,
	.check = hash_check,
	.open = hash_open,
	.write_frame = hash_write,
	.close = hash_close,
};
