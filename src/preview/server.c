/* server.c - routes, Host check and limits of the preview's HTTP server (server.h). */
#include "preview/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "preview/edit.h"
#include "preview/json.h"
#include "preview/request.h"

/* A connection as the deadline sees it: when its current request began (its accept, or
 * the end of the last answer on a kept-alive connection) and whether its headers are
 * all in. Kept in a list under conns_mu from libmicrohttpd's start to its close notice
 * (sent before the socket is closed, so a shutdown() under the lock never hits another
 * socket's descriptor). */
typedef struct pv_conn {
	struct pv_conn *prev, *next;
	int fd;
	double start;
	int headers_done, shut;
} pv_conn;

struct pv_server {
	pv_state *st;
	pthread_mutex_t conns_mu;
	pthread_cond_t conns_cv;
	pv_conn *conns_head, *conns_tail; /* oldest first */
	int nconns, stopping, timer_started;
	int frames_out; /* PNG answers queued or being sent (under conns_mu) */
	pthread_t timer;
	struct MHD_Daemon *d;
	int port;
	char listen[64]; /* the --listen address as given ("" for the default) */
	int wildcard;    /* --listen 0.0.0.0 or :: */
	pv_listen where; /* the three above, for pv_host_ok() */
	int loopback;    /* listening on a loopback address only (127.0.0.0/8, ::1) */
	char url[256];
	/* the per-run secret (hex) every request must carry, and the cookie that carries it */
	char secret[2 * PV_SECRET_BYTES + 1];
	char cookie[32];
	pv_edit_config edit; /* where POST /edit writes, or that it is off */
};

static const char csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
			  "img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; "
			  "form-action 'none'; frame-ancestors 'none'";

/* con_cls of a request whose answer is a frame: its buffer counts until it is sent */
static char frame_answer;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Ends a connection from outside its thread: libmicrohttpd then reads the end of the
 * stream and closes it (caller holds conns_mu). */
static void cut(pv_conn *k)
{
	if (!k->shut)
		shutdown(k->fd, SHUT_RDWR);
	k->shut = 1;
}

static void unlink_conn(pv_server *s, pv_conn *k)
{
	if (k->prev)
		k->prev->next = k->next;
	else
		s->conns_head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		s->conns_tail = k->prev;
	s->nconns--;
}

static void append_conn(pv_server *s, pv_conn *k)
{
	k->next = NULL;
	k->prev = s->conns_tail;
	if (s->conns_tail)
		s->conns_tail->next = k;
	else
		s->conns_head = k;
	s->conns_tail = k;
	s->nconns++;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	pv_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		pv_conn *k = calloc(1, sizeof *k);
		*socket_context = k;
		if (!k || !ci) {
			free(k);
			*socket_context = NULL;
			return;
		}
		k->fd = ci->connect_fd;
		k->start = now_s();
		pthread_mutex_lock(&s->conns_mu);
		append_conn(s, k);
		/* Near the limit, a new connection pushes out the oldest one still sending its
		 * request: idle and slow clients cannot lock the page out. */
		if (s->nconns > PV_EVICT_AT)
			for (pv_conn *o = s->conns_head; o; o = o->next)
				if (!o->headers_done && !o->shut && o != k) {
					cut(o);
					break;
				}
		pthread_mutex_unlock(&s->conns_mu);
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		pv_conn *k = *socket_context;
		pthread_mutex_lock(&s->conns_mu);
		unlink_conn(s, k);
		pthread_mutex_unlock(&s->conns_mu);
		free(k);
		*socket_context = NULL;
	}
}

static pv_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* The headers are in: the deadline no longer applies to this request. */
static void headers_in(pv_server *s, struct MHD_Connection *c)
{
	pv_conn *k = conn_of(c);
	if (!k)
		return;
	pthread_mutex_lock(&s->conns_mu);
	k->headers_done = 1;
	/* moved to the end: the eviction looks for the oldest unfinished first */
	unlink_conn(s, k);
	append_conn(s, k);
	pthread_mutex_unlock(&s->conns_mu);
}

/* The body of a POST /edit or /size as it comes (con_cls until the answer is sent). */
typedef struct edit_body {
	char *buf;
	size_t n, cap;
	int size; /* POST /size, not /edit */
} edit_body;

/* An answer sent: a kept-alive connection's next request has its own deadline. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	pv_server *s = cls;
	(void)toe;
	pv_conn *k = conn_of(c);
	pthread_mutex_lock(&s->conns_mu);
	if (*con_cls == &frame_answer) {
		s->frames_out--;
	} else if (*con_cls && *con_cls != s) { /* a POST's body (edit_begin) */
		edit_body *b = *con_cls;
		free(b->buf);
		free(b);
	}
	*con_cls = NULL;
	if (!k) {
		pthread_mutex_unlock(&s->conns_mu);
		return;
	}
	k->headers_done = 0;
	k->start = now_s();
	unlink_conn(s, k);
	append_conn(s, k);
	pthread_mutex_unlock(&s->conns_mu);
}

/* Every PV_DEADLINE_TICK_MS: cuts the connections whose request headers took longer
 * than PV_HEADER_DEADLINE_S in all (libmicrohttpd's timeout is idle time only, so one
 * byte every few seconds would hold a connection for ever). */
static void *deadline_timer(void *arg)
{
	pv_server *s = arg;
	pthread_mutex_lock(&s->conns_mu);
	while (!s->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PV_DEADLINE_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->conns_cv, &s->conns_mu, &until);
		double t = now_s();
		for (pv_conn *k = s->conns_head; k; k = k->next)
			if (!k->headers_done && t - k->start > PV_HEADER_DEADLINE_S)
				cut(k);
	}
	pthread_mutex_unlock(&s->conns_mu);
	return NULL;
}

static void common_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
}

/* Queues one answer with the common headers; `allow` is what a 405 names. */
static enum MHD_Result send_answer(struct MHD_Connection *c, unsigned status, const char *type,
				   void *data, size_t n, int owned, unsigned long gen,
				   const char *allow)
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
		MHD_add_response_header(r, "Allow", allow);
	if (gen) {
		char g[32];
		snprintf(g, sizeof g, "%lu", gen);
		MHD_add_response_header(r, "X-Tidepool-Generation", g);
	}
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type,
				void *data, size_t n, int owned, unsigned long gen)
{
	return send_answer(c, status, type, data, n, owned, gen, "GET, HEAD");
}

/* {"error": msg} and a newline, or NULL without memory. */
static char *error_json(const char *msg)
{
	pv_json j;
	pv_json_init(&j);
	pv_json_puts(&j, "{\"error\":");
	pv_json_string(&j, msg);
	pv_json_puts(&j, "}\n");
	return pv_json_finish(&j);
}

/* A short JSON error body: {"error": "..."} */
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *s = error_json(msg);
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

static enum MHD_Result frame(pv_server *s, struct MHD_Connection *c, const pv_decision *d,
			     void **con_cls)
{
	const int n = d->frame, mode = d->mode, stretch = d->stretch;
	/* a frame's PNG stays in memory until the client has read it: a bound on how many */
	pthread_mutex_lock(&s->conns_mu);
	int busy = s->frames_out >= PV_MAX_FRAMES_OUT;
	if (!busy)
		s->frames_out++;
	pthread_mutex_unlock(&s->conns_mu);
	if (busy)
		return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "too many frames being sent; try again");
	*con_cls = &frame_answer;
	unsigned char *png = NULL;
	size_t size = 0;
	unsigned long gen = 0;
	tp_error err = TP_ERROR_INIT;
	int rc = d->draft ? pv_state_draft_png(s->st, n, mode, stretch, &png, &size, &gen, &err)
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

static enum MHD_Result edit_answer(struct MHD_Connection *c, unsigned status, char *json)
{
	if (!json)
		return MHD_NO;
	return send_answer(c, status, "application/json", json, strlen(json), 1, 0, "POST");
}

static enum MHD_Result edit_refuse(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return edit_answer(c, status, error_json(msg));
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
	tp_error err = TP_ERROR_INIT;
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

static enum MHD_Result count_bytes(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	(void)kind;
	*(size_t *)cls += strlen(key) + (value ? strlen(value) : 0) + 4;
	return MHD_YES;
}

static enum MHD_Result count_hosts(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	(void)kind;
	(void)value;
	*(int *)cls += !strcasecmp(key, MHD_HTTP_HEADER_HOST);
	return MHD_YES;
}

/* The parts of the request pv_request_decide() looks at. */
static void gather(const pv_server *s, struct MHD_Connection *c, pv_request *rq)
{
	rq->nargs =
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_bytes, &rq->query_bytes);
	rq->nheaders =
		MHD_get_connection_values(c, MHD_HEADER_KIND, count_bytes, &rq->header_bytes);
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_hosts, &rq->nhosts);
	rq->host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	rq->content_length =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	rq->transfer_encoding =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					    MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
	rq->mode = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
	rq->stretch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "stretch");
	rq->draft = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "draft");
	rq->token[0] = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Tidepool-Token");
	rq->token[1] = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, s->cookie);
	rq->token[2] = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	pv_server *s = cls;
	if (*con_cls == NULL) { /* headers only so far: answer now (but for a POST's body) */
		*con_cls = s;
		headers_in(s, c);
		pv_request rq = {.method = method, .url = url, .version = version};
		gather(s, c, &rq);
		pv_decision d;
		pv_request_decide(&s->where, &rq, &d);
		unsigned long gen = 0;
		switch (d.route) {
		case PV_ROUTE_REFUSED: return send_error(c, d.status, d.message);
		case PV_ROUTE_STATUS: return send_json(c, status_json(s->st, &gen), gen);
		case PV_ROUTE_STATS: return send_json(c, pv_state_stats_json(s->st), 0);
		case PV_ROUTE_SCENE: {
			char *text = pv_state_scene_json(s->st, &gen);
			if (!text)
				return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
						  "no scene loaded");
			return send_scene(s, c, text, gen);
		}
		case PV_ROUTE_FRAME: return frame(s, c, &d, con_cls);
		case PV_ROUTE_ASSET:
			if (!strcmp(d.asset->path, "/"))
				return send_page(s, c, d.asset);
			return send_buf(c, MHD_HTTP_OK, d.asset->type, (void *)d.asset->data,
					d.asset->size, 0, 0);
		case PV_ROUTE_EDIT:
		case PV_ROUTE_SIZE:
			return edit_begin(s, c, method, rq.host, d.route == PV_ROUTE_SIZE, con_cls);
		}
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "no route");
	}
	if (*con_cls != s && *con_cls != &frame_answer)
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
	s->loopback = 1;
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
			s->loopback = (ntohl(a4.sin_addr.s_addr) >> 24) == 127;
		} else if (inet_pton(AF_INET6, listen, &a6.sin6_addr) == 1) {
			a6.sin6_family = AF_INET6;
			a6.sin6_port = htons((uint16_t)port);
			sa = (struct sockaddr *)&a6;
			flags |= MHD_USE_IPv6;
			s->wildcard = IN6_IS_ADDR_UNSPECIFIED(&a6.sin6_addr);
			s->loopback = IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr) ||
				      (IN6_IS_ADDR_V4MAPPED(&a6.sin6_addr) &&
				       a6.sin6_addr.s6_addr[12] == 127);
		} else {
			snprintf(why, n,
				 "--listen: not a numeric IPv4 or IPv6 address (got %.100s)",
				 listen);
			free(s);
			return -1;
		}
	}
	s->port = port;
	/* room for PV_MAX_CONNECTIONS sockets under a default soft limit of 1024 */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096 && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	pthread_mutex_init(&s->conns_mu, NULL);
	pthread_cond_init(&s->conns_cv, NULL);
	errno = 0;
	s->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR,
				sa, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)PV_THREADS,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)PV_MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PV_MAX_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PV_CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PV_CONN_MEMORY,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				/* not 1: libmicrohttpd's own answer to a missing Host is sent
				 * twice and without the security headers; handle() answers */
				MHD_OPTION_STRICT_FOR_CLIENT, (int)0, MHD_OPTION_END);
	if (!s->d) {
		pthread_mutex_destroy(&s->conns_mu);
		pthread_cond_destroy(&s->conns_cv);
		snprintf(why, n, "cannot listen on %s port %d (%s)", listen ? listen : "127.0.0.1",
			 port, errno ? strerror(errno) : "libmicrohttpd refused");
		free(s);
		return -1;
	}
	if (pthread_create(&s->timer, NULL, deadline_timer, s) == 0)
		s->timer_started = 1;
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	if (info && info->port)
		s->port = info->port;
	s->where = (pv_listen){.port = s->port,
			       .listen = s->listen,
			       .wildcard = s->wildcard,
			       .secret = s->secret};
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

int pv_server_reachable(const pv_server *s)
{
	return !s->loopback;
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
	pthread_mutex_lock(&s->conns_mu);
	s->stopping = 1;
	pthread_cond_broadcast(&s->conns_cv);
	pthread_mutex_unlock(&s->conns_mu);
	if (s->timer_started)
		pthread_join(s->timer, NULL);
	MHD_stop_daemon(s->d); /* closes every connection: the list empties */
	pthread_mutex_destroy(&s->conns_mu);
	pthread_cond_destroy(&s->conns_cv);
	free(s);
}
