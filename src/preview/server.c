/* server.c - routes, Host check and limits of the preview's HTTP server (server.h). */
#include "preview/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "preview/edit.h"
#include "preview/json.h"

struct pv_server {
	pv_state *st;
	struct MHD_Daemon *d;
	int port;
	char listen[64]; /* the --listen address as given ("" for the default) */
	int wildcard;    /* --listen 0.0.0.0 or :: */
	char url[256];
	/* the per-run secret (hex) every request must carry, and the cookie that carries it */
	char secret[2 * PV_SECRET_BYTES + 1];
	char cookie[32];
	pv_edit_config edit; /* where POST /edit writes, or that it is off */
};

static const char csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
			  "img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; "
			  "form-action 'none'; frame-ancestors 'none'";

static void common_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type,
				void *data, size_t n, int owned, unsigned long gen)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		n, data, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	common_headers(r);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	if (gen) {
		char g[32];
		snprintf(g, sizeof g, "%lu", gen);
		MHD_add_response_header(r, "X-Tidepool-Generation", g);
	}
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A short JSON error body: {"error": "..."} */
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	pv_json j;
	pv_json_init(&j);
	pv_json_puts(&j, "{\"error\":");
	pv_json_string(&j, msg);
	pv_json_puts(&j, "}\n");
	char *s = pv_json_finish(&j);
	if (!s)
		return MHD_NO;
	return send_buf(c, status, "application/json", s, strlen(s), 1, 0);
}

static enum MHD_Result send_json(struct MHD_Connection *c, char *s, unsigned long gen)
{
	if (!s)
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return send_buf(c, MHD_HTTP_OK, "application/json", s, strlen(s), 1, gen);
}

static char *status_json(pv_state *st, unsigned long *gen)
{
	pv_status s;
	pv_state_status(st, &s);
	*gen = s.generation;
	pv_json j;
	pv_json_init(&j);
	pv_json_puts(&j, "{\"scene\":");
	pv_json_string(&j, s.path);
	pv_json_printf(&j, ",\"generation\":%lu,\"scene_generation\":%lu,\"loaded\":%s,\"solver\":",
		       s.generation, s.scene_generation, s.loaded ? "true" : "false");
	pv_json_string(&j, s.loaded ? s.solver : NULL);
	pv_json_printf(&j, ",\"frames\":%d,\"fps\":", s.loaded ? s.info.frames : 0);
	pv_json_number(&j, s.loaded ? s.info.fps : 0);
	pv_json_printf(&j, ",\"width\":%d,\"height\":%d,\"ref_width\":%d,\"ref_height\":%d,",
		       s.info.width, s.info.height, s.info.ref_width, s.info.ref_height);
	pv_json_puts(&j, "\"modes\":[");
	int first = 1;
	for (int m = 0; s.loaded && m < TP_MODE_COUNT; m++)
		if (s.info.modes & (1u << m)) {
			pv_json_puts(&j, first ? "" : ",");
			pv_json_string(&j, tp_mode_name((tp_mode)m));
			first = 0;
		}
	pv_json_printf(&j, "],\"stats_done\":%d,\"error\":", s.stats_done);
	if (!s.has_error) {
		pv_json_puts(&j, "null");
	} else {
		pv_json_puts(&j, "{\"kind\":");
		pv_json_string(&j, s.error_frame < 0 ? "load" : "runtime");
		pv_json_puts(&j, ",\"file\":");
		pv_json_string(&j, s.error.file);
		pv_json_printf(&j, ",\"line\":%d,\"col\":%d,\"frame\":", s.error.line, s.error.col);
		if (s.error_frame < 0)
			pv_json_puts(&j, "null");
		else
			pv_json_printf(&j, "%d", s.error_frame);
		pv_json_puts(&j, ",\"message\":");
		pv_json_string(&j, s.error.message[0] ? s.error.message : s.error.text);
		pv_json_puts(&j, ",\"text\":");
		pv_json_string(&j, s.error.text);
		pv_json_puts(&j, ",\"source_line\":");
		pv_json_string(&j, s.error_line[0] ? s.error_line : NULL);
		pv_json_puts(&j, "}");
	}
	pv_json_puts(&j, "}\n");
	return pv_json_finish(&j);
}

/* "/frame/N.png": N, or -1 if the path is not that. Digits only, no sign, no padding
 * tricks beyond leading zeros, at most 9 digits. */
static int frame_number(const char *url)
{
	const char *p = url + strlen("/frame/");
	int n = 0, digits = 0;
	while (*p >= '0' && *p <= '9' && digits < 9) {
		n = n * 10 + (*p++ - '0');
		digits++;
	}
	if (!digits || strcmp(p, ".png") != 0)
		return -1;
	return n;
}

static enum MHD_Result frame(pv_server *s, struct MHD_Connection *c, int n)
{
	const char *mode_name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
	int mode = TP_MODE_COLOR;
	if (mode_name && (mode = tp_mode_from_name(mode_name)) < 0)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "mode: not a render mode");
	const char *st_arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "stretch");
	if (st_arg && strcmp(st_arg, "0") != 0 && strcmp(st_arg, "1") != 0)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "stretch: 0 or 1");
	const int stretch = st_arg && !strcmp(st_arg, "1");
	unsigned char *png = NULL;
	size_t size = 0;
	unsigned long gen = 0;
	tp_error err;
	memset(&err, 0, sizeof err);
	const char *draft = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "draft");
	if (draft && strcmp(draft, "0") != 0 && strcmp(draft, "1") != 0)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "draft: 0 or 1");
	int rc = draft && !strcmp(draft, "1")
			 ? pv_state_draft_png(s->st, n, mode, stretch, &png, &size, &gen, &err)
			 : pv_state_frame_png(s->st, n, mode, stretch, &png, &size, &gen, &err);
	if (rc == TP_ERROR_ARGUMENT)
		return send_error(c,
				  n >= 0 && strstr(err.text, "out of range") ? MHD_HTTP_NOT_FOUND
									     : MHD_HTTP_BAD_REQUEST,
				  err.text);
	if (rc < 0)
		return send_error(c,
				  rc == TP_ERROR_INPUT ? MHD_HTTP_SERVICE_UNAVAILABLE
						       : MHD_HTTP_INTERNAL_SERVER_ERROR,
				  err.text);
	return send_buf(c, MHD_HTTP_OK, "image/png", png, size, 1, gen);
}

static int is_loopback_name(const char *h, size_t n)
{
	return (n == 9 && !strncasecmp(h, "localhost", 9)) ||
	       (n == 9 && !strncmp(h, "127.0.0.1", 9)) || (n == 5 && !strncmp(h, "[::1]", 5));
}

/* An IP literal (1.2.3.4 or [v6]): DNS rebinding needs a name, so these are safe. */
static int is_ip_literal(const char *h, size_t n)
{
	char buf[64];
	unsigned char addr[16];
	if (n == 0 || n >= sizeof buf)
		return 0;
	if (h[0] == '[' && h[n - 1] == ']') {
		memcpy(buf, h + 1, n - 2);
		buf[n - 2] = '\0';
		return inet_pton(AF_INET6, buf, addr) == 1;
	}
	memcpy(buf, h, n);
	buf[n] = '\0';
	return inet_pton(AF_INET, buf, addr) == 1;
}

/* Host must be NAME:PORT with NAME the loopback (or the --listen address; any IP
 * literal when that is a wildcard); ":PORT" may be left out only for port 80. */
static int host_ok(const pv_server *s, const char *host)
{
	if (!host)
		return 0;
	const char *colon = strrchr(host, ':');
	if (colon && strchr(colon, ']')) /* "[::1]" without a port */
		colon = NULL;
	size_t n = colon ? (size_t)(colon - host) : strlen(host);
	if (colon) {
		char *end;
		errno = 0;
		long p = strtol(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || *end || errno || p != s->port)
			return 0;
	} else if (s->port != 80) {
		return 0;
	}
	if (is_loopback_name(host, n))
		return 1;
	if (s->wildcard)
		return is_ip_literal(host, n);
	if (s->listen[0]) {
		size_t ln = strlen(s->listen);
		if (strchr(s->listen, ':')) /* v6: [ADDR] */
			return n == ln + 2 && host[0] == '[' &&
			       !strncasecmp(host + 1, s->listen, ln);
		return n == ln && !strncmp(host, s->listen, ln);
	}
	return 0;
}

/* ---- the secret (docs/preview.md "The secret") ---- */

static int same_secret(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (strlen(a) != n)
		return 0;
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++) /* every byte, whatever the first difference */
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* The request carries the run's secret: in the X-Tidepool-Token header, in the cookie
 * the page got with it (HttpOnly, SameSite=Strict: other sites' pages do not send it), or
 * as ?token= (the printed URL, scripts). */
static int secret_ok(const pv_server *s, struct MHD_Connection *c)
{
	const char *got[3] = {
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Tidepool-Token"),
		MHD_lookup_connection_value(c, MHD_COOKIE_KIND, s->cookie),
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"),
	};
	for (int i = 0; i < 3; i++)
		if (got[i] && same_secret(got[i], s->secret))
			return 1;
	return 0;
}

/* The page itself, with the cookie that lets its own requests in. */
static enum MHD_Result send_page(const pv_server *s, struct MHD_Connection *c,
				 const pv_asset *a)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(a->size, (void *)a->data,
								  MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	char cookie[2 * PV_SECRET_BYTES + 96];
	snprintf(cookie, sizeof cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict", s->cookie,
		 s->secret);
	MHD_add_response_header(r, "Content-Type", a->type);
	common_headers(r);
	MHD_add_response_header(r, "Set-Cookie", cookie);
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* /scene.json, with the version of its text (what an edit must be made over) and whether
 * the page may edit. */
static enum MHD_Result send_scene(const pv_server *s, struct MHD_Connection *c, char *text,
				  unsigned long gen)
{
	char ver[PV_VERSION_HEX], g[32];
	size_t n = strlen(text);
	pv_edit_version(text, n, ver);
	struct MHD_Response *r =
		MHD_create_response_from_buffer(n, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	snprintf(g, sizeof g, "%lu", gen);
	MHD_add_response_header(r, "Content-Type", "application/json");
	common_headers(r);
	MHD_add_response_header(r, "X-Tidepool-Generation", g);
	MHD_add_response_header(r, "X-Tidepool-Version", ver);
	MHD_add_response_header(r, "X-Tidepool-Edit", s->edit.path[0] ? "on" : s->edit.off);
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- POST /edit (edit.h) ---- */

typedef struct edit_body {
	char *buf;
	size_t n, cap;
	int size; /* POST /size, not /edit */
} edit_body;

static enum MHD_Result edit_answer(struct MHD_Connection *c, unsigned status, char *json)
{
	if (!json)
		return MHD_NO;
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(json), json, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(json);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	common_headers(r);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "POST");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result edit_refuse(struct MHD_Connection *c, unsigned status, const char *msg)
{
	pv_json j;
	pv_json_init(&j);
	pv_json_puts(&j, "{\"error\":");
	pv_json_string(&j, msg);
	pv_json_puts(&j, "}\n");
	return edit_answer(c, status, pv_json_finish(&j));
}

/* The headers of POST /edit: a write comes only from the page itself (its own Origin, a
 * same-origin fetch), as JSON of a known, bounded length. */
static enum MHD_Result edit_begin(pv_server *s, struct MHD_Connection *c, const char *method,
				  const char *host, int size, void **con_cls)
{
	if (strcmp(method, MHD_HTTP_METHOD_POST))
		return edit_refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED, "POST only");
	if (!size && !s->edit.path[0]) {
		char msg[200];
		snprintf(msg, sizeof msg, "editing is off: %s", s->edit.off);
		return edit_refuse(c, MHD_HTTP_FORBIDDEN, msg);
	}
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	if (!origin || strncmp(origin, "http://", 7) || strcasecmp(origin + 7, host))
		return edit_refuse(c, MHD_HTTP_FORBIDDEN,
				   "a write needs the Origin of the page itself");
	if (site && strcmp(site, "same-origin"))
		return edit_refuse(c, MHD_HTTP_FORBIDDEN,
				   "a write comes only from the page itself (Sec-Fetch-Site)");
	const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!type || strncasecmp(type, "application/json", 16) ||
	    (type[16] && type[16] != ';'))
		return edit_refuse(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
				   "Content-Type: application/json");
	const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_LENGTH);
	char *end = NULL;
	unsigned long n = clen ? strtoul(clen, &end, 10) : 0;
	if (!clen || !*clen || *end || clen[0] == '-')
		return edit_refuse(c, MHD_HTTP_LENGTH_REQUIRED, "Content-Length needed");
	if (n > PV_EDIT_MAX_BODY)
		return edit_refuse(c, MHD_HTTP_CONTENT_TOO_LARGE, "an edit is at most 256 KiB");
	edit_body *b = calloc(1, sizeof *b);
	if (!b || !(b->buf = malloc(n + 1))) {
		free(b);
		return MHD_NO;
	}
	b->cap = n;
	b->size = size;
	*con_cls = b;
	return MHD_YES;
}

/* POST /size {"width": W, "height": H} or {"scale": F} or {"fit": true}: the preview size
 * chosen on the page (as --size, --scale or neither); the scene reloads at it. */
static enum MHD_Result size_request(pv_server *s, struct MHD_Connection *c, const edit_body *b)
{
	cJSON *j = cJSON_ParseWithLength(b->buf, b->n);
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "width");
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "height");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "scale");
	int width = 0, height = 0;
	double scale = 0;
	int ok = cJSON_IsObject(j);
	if (ok && cJSON_IsNumber(w) && cJSON_IsNumber(h)) {
		ok = w->valuedouble >= 1 && w->valuedouble <= PV_MAX_SIDE &&
		     h->valuedouble >= 1 && h->valuedouble <= PV_MAX_SIDE;
		width = ok ? (int)w->valuedouble : 0;
		height = ok ? (int)h->valuedouble : 0;
	} else if (ok && cJSON_IsNumber(k)) {
		ok = k->valuedouble > 0 && k->valuedouble <= 4;
		scale = k->valuedouble;
	} else {
		ok = ok && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "fit"));
	}
	cJSON_Delete(j);
	if (!ok)
		return edit_refuse(c, MHD_HTTP_BAD_REQUEST,
				   "a size is {\"width\": W, \"height\": H} (1..4096), "
				   "{\"scale\": F} (0..4) or {\"fit\": true}");
	tp_error err;
	memset(&err, 0, sizeof err);
	if (pv_state_set_size(s->st, width, height, scale, &err) < 0)
		return edit_refuse(c, (unsigned)422, err.text);
	pv_json o;
	pv_json_init(&o);
	pv_json_printf(&o, "{\"width\":%d,\"height\":%d,\"scale\":", width, height);
	pv_json_number(&o, scale);
	pv_json_puts(&o, "}\n");
	return edit_answer(c, MHD_HTTP_OK, pv_json_finish(&o));
}

/* The body as it comes, then the edit once it is all there. */
static enum MHD_Result edit_data(pv_server *s, struct MHD_Connection *c, edit_body *b,
				 const char *data, size_t *size)
{
	if (*size) {
		size_t take = *size < b->cap - b->n ? *size : b->cap - b->n;
		memcpy(b->buf + b->n, data, take);
		b->n += take;
		*size = 0;
		return MHD_YES;
	}
	if (b->size)
		return size_request(s, c, b);
	char *answer = NULL;
	unsigned status = pv_edit_request(&s->edit, b->buf, b->n, &answer);
	return edit_answer(c, status, answer);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	(void)c;
	(void)toe;
	if (*con_cls && *con_cls != cls) {
		edit_body *b = *con_cls;
		free(b->buf);
		free(b);
	}
	*con_cls = NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	pv_server *s = cls;
	(void)version;
	if (*con_cls == NULL) { /* headers only so far */
		*con_cls = s;
		const char *host =
			MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
		if (!host_ok(s, host))
			return send_error(
				c, MHD_HTTP_MISDIRECTED_REQUEST,
				"Host must be 127.0.0.1 or localhost with the server's port");
		if (!secret_ok(s, c))
			return send_error(c, MHD_HTTP_FORBIDDEN,
					  "open the URL that `tidepool preview` printed (it carries "
					  "this run's secret)");
		if (!strcmp(url, "/edit") || !strcmp(url, "/size"))
			return edit_begin(s, c, method, host, url[1] == 's', con_cls);
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD");
		/* answer now, never read a body */
		const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_CONTENT_LENGTH);
		if ((clen && strcmp(clen, "0")) ||
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "no request body allowed");
		unsigned long gen = 0;
		if (!strcmp(url, "/status.json"))
			return send_json(c, status_json(s->st, &gen), gen);
		if (!strcmp(url, "/stats.json"))
			return send_json(c, pv_state_stats_json(s->st), 0);
		if (!strcmp(url, "/scene.json")) {
			char *text = pv_state_scene_json(s->st, &gen);
			if (!text)
				return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
						  "no scene loaded");
			return send_scene(s, c, text, gen);
		}
		if (!strncmp(url, "/frame/", 7)) {
			int n = frame_number(url);
			if (n >= 0)
				return frame(s, c, n);
		}
		const pv_asset *a = pv_page_asset(url);
		if (a && !strcmp(a->path, "/"))
			return send_page(s, c, a);
		if (a)
			return send_buf(c, MHD_HTTP_OK, a->type, (void *)a->data, a->size, 0, 0);
		return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
	}
	if (*con_cls != s)
		return edit_data(s, c, *con_cls, upload_data, upload_data_size);
	/* A body arrived although the request was answered: drop it. */
	*upload_data_size = 0;
	return MHD_YES;
}

int pv_server_start(pv_state *st, const char *listen, int port, pv_server **out, char *why,
		    size_t n)
{
	*out = NULL;
	pv_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	s->st = st;
	snprintf(s->edit.off, sizeof s->edit.off, "not set up");
	unsigned char rnd[PV_SECRET_BYTES];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		snprintf(why, n, "no random numbers for the secret: %s", strerror(errno));
		free(s);
		return -1;
	}
	for (int i = 0; i < PV_SECRET_BYTES; i++)
		snprintf(s->secret + 2 * i, 3, "%02x", rnd[i]);
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
	struct sockaddr *sa = (struct sockaddr *)&a4;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	memset(&a4, 0, sizeof a4);
	memset(&a6, 0, sizeof a6);
	a4.sin_family = AF_INET;
	a4.sin_port = htons((uint16_t)port);
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (listen) {
		if (strlen(listen) >= sizeof s->listen) {
			snprintf(why, n,
				 "--listen: not a numeric IPv4 or IPv6 address (got %.100s)",
				 listen);
			free(s);
			return -1;
		}
		snprintf(s->listen, sizeof s->listen, "%s", listen);
		if (inet_pton(AF_INET, listen, &a4.sin_addr) == 1) {
			s->wildcard = a4.sin_addr.s_addr == htonl(INADDR_ANY);
		} else if (inet_pton(AF_INET6, listen, &a6.sin6_addr) == 1) {
			a6.sin6_family = AF_INET6;
			a6.sin6_port = htons((uint16_t)port);
			sa = (struct sockaddr *)&a6;
			flags |= MHD_USE_IPv6;
			s->wildcard = IN6_IS_ADDR_UNSPECIFIED(&a6.sin6_addr);
		} else {
			snprintf(why, n,
				 "--listen: not a numeric IPv4 or IPv6 address (got %.100s)",
				 listen);
			free(s);
			return -1;
		}
	}
	s->port = port;
	errno = 0;
	s->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR,
				sa, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)PV_THREADS,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)PV_MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PV_MAX_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PV_CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PV_CONN_MEMORY,
				MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_END);
	if (!s->d) {
		snprintf(why, n, "cannot listen on %s port %d (%s)", listen ? listen : "127.0.0.1",
			 port, errno ? strerror(errno) : "libmicrohttpd refused");
		free(s);
		return -1;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	if (info && info->port)
		s->port = info->port;
	const char *shown = !listen || s->wildcard ? "127.0.0.1" : listen;
	if (strchr(shown, ':'))
		snprintf(s->url, sizeof s->url, "http://[%s]:%d/?token=%s", shown, s->port,
			 s->secret);
	else
		snprintf(s->url, sizeof s->url, "http://%s:%d/?token=%s", shown, s->port,
			 s->secret);
	/* cookies are shared by every port of a host: one per server */
	snprintf(s->cookie, sizeof s->cookie, "tidepool-%d", s->port);
	*out = s;
	return 0;
}

int pv_server_port(const pv_server *s)
{
	return s->port;
}

const char *pv_server_url(const pv_server *s)
{
	return s->url;
}

void pv_server_set_edit(pv_server *s, const char *scene_path, const char *off)
{
	snprintf(s->edit.path, sizeof s->edit.path, "%s", off ? "" : scene_path);
	snprintf(s->edit.off, sizeof s->edit.off, "%s", off ? off : "");
}

void pv_server_stop(pv_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s);
}
