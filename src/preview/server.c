/* server.c - routes, Host check and limits of the preview's HTTP server (server.h). */
#include "preview/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "preview/json.h"

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
	int loopback;    /* listening on a loopback address only (127.0.0.0/8, ::1) */
	char url[128];
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

/* An answer sent: a kept-alive connection's next request has its own deadline. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	pv_server *s = cls;
	(void)toe;
	pv_conn *k = conn_of(c);
	pthread_mutex_lock(&s->conns_mu);
	if (*con_cls == &frame_answer)
		s->frames_out--;
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
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
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

static enum MHD_Result frame(pv_server *s, struct MHD_Connection *c, int n, void **con_cls)
{
	const char *mode_name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
	int mode = TP_MODE_COLOR;
	if (mode_name && (mode = tp_mode_from_name(mode_name)) < 0)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "mode: not a render mode");
	const char *st_arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "stretch");
	if (st_arg && strcmp(st_arg, "0") != 0 && strcmp(st_arg, "1") != 0)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "stretch: 0 or 1");
	const int stretch = st_arg && !strcmp(st_arg, "1");
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
	tp_error err;
	memset(&err, 0, sizeof err);
	int rc = pv_state_frame_png(s->st, n, mode, stretch, &png, &size, &gen, &err);
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

/* The request's own limits, answered here (with the security headers) rather than by
 * libmicrohttpd: NULL if it is within them, else the status and the message. */
static const char *over_limits(struct MHD_Connection *c, const char *url, const char *version,
			       unsigned *status)
{
	size_t query = 0, headers = 0;
	int nargs = MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_bytes, &query);
	int nheaders = MHD_get_connection_values(c, MHD_HEADER_KIND, count_bytes, &headers);
	*status = MHD_HTTP_URI_TOO_LONG;
	if (nargs > PV_MAX_ARGS)
		return "too many query arguments (the limit is " PV_STR(PV_MAX_ARGS) ")";
	if (strlen(url) + query > PV_MAX_URL)
		return "the URL is too long (the limit is " PV_STR(PV_MAX_URL) " bytes)";
	*status = MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE;
	if (nheaders > PV_MAX_HEADERS)
		return "too many request headers (the limit is " PV_STR(PV_MAX_HEADERS) ")";
	if (headers > PV_MAX_HEADER_BYTES)
		return "the request headers are too large (the limit is " PV_STR(
			PV_MAX_HEADER_BYTES) " bytes)";
	*status = MHD_HTTP_BAD_REQUEST;
	int hosts = 0;
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_hosts, &hosts);
	if (hosts > 1)
		return "more than one Host header";
	if (!strcmp(version, MHD_HTTP_VERSION_1_1) &&
	    !MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))
		return "an HTTP/1.1 request needs a Host header";
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	pv_server *s = cls;
	(void)upload_data;
	if (*con_cls == NULL) { /* headers only so far: answer now, never read a body */
		*con_cls = s;
		headers_in(s, c);
		unsigned status;
		const char *over = over_limits(c, url, version, &status);
		if (over)
			return send_error(c, status, over);
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD");
		const char *host =
			MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
		if (!host_ok(s, host))
			return send_error(
				c, MHD_HTTP_MISDIRECTED_REQUEST,
				"Host must be 127.0.0.1 or localhost with the server's port");
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
			return send_json(c, text, gen);
		}
		if (!strncmp(url, "/frame/", 7)) {
			int n = frame_number(url);
			if (n >= 0)
				return frame(s, c, n, con_cls);
		}
		const pv_asset *a = pv_page_asset(url);
		if (a)
			return send_buf(c, MHD_HTTP_OK, a->type, (void *)a->data, a->size, 0, 0);
		return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
	}
	/* A body arrived although Content-Length said none: drop it. */
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
	const char *shown = !listen || s->wildcard ? "127.0.0.1" : listen;
	if (strchr(shown, ':'))
		snprintf(s->url, sizeof s->url, "http://[%s]:%d/", shown, s->port);
	else
		snprintf(s->url, sizeof s->url, "http://%s:%d/", shown, s->port);
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
