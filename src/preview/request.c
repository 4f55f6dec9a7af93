/* request.c - the preview's decisions on a request, apart from the socket (request.h). */
#include "preview/request.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tidepool.h"

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

int pv_host_ok(const pv_listen *l, const char *host)
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
		if (colon[1] < '0' || colon[1] > '9' || *end || errno || p != l->port)
			return 0;
	} else if (l->port != 80) {
		return 0;
	}
	if (is_loopback_name(host, n))
		return 1;
	if (l->wildcard)
		return is_ip_literal(host, n);
	if (l->listen && l->listen[0]) {
		size_t ln = strlen(l->listen);
		if (strchr(l->listen, ':')) /* v6: [ADDR] */
			return n == ln + 2 && host[0] == '[' &&
			       !strncasecmp(host + 1, l->listen, ln);
		return n == ln && !strncmp(host, l->listen, ln);
	}
	return 0;
}

/* a == b, comparing every byte whatever the first difference (no timing to learn from) */
static int same_secret(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (strlen(a) != n)
		return 0;
	unsigned char diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

static pv_route refuse(pv_decision *d, unsigned status, const char *why)
{
	d->status = status;
	d->message = why;
	return d->route = PV_ROUTE_REFUSED;
}

pv_route pv_request_decide(const pv_listen *l, const pv_request *rq, pv_decision *d)
{
	memset(d, 0, sizeof *d);
	d->frame = -1;
	/* the request's own limits first, answered here with the security headers */
	if (rq->nargs > PV_MAX_ARGS)
		return refuse(d, MHD_HTTP_URI_TOO_LONG,
			      "too many query arguments (the limit is " PV_STR(PV_MAX_ARGS) ")");
	if (strlen(rq->url) + rq->query_bytes > PV_MAX_URL)
		return refuse(d, MHD_HTTP_URI_TOO_LONG,
			      "the URL is too long (the limit is " PV_STR(PV_MAX_URL) " bytes)");
	if (rq->nheaders > PV_MAX_HEADERS)
		return refuse(d, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
			      "too many request headers (the limit is " PV_STR(PV_MAX_HEADERS) ")");
	if (rq->header_bytes > PV_MAX_HEADER_BYTES)
		return refuse(d, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
			      "the request headers are too large (the limit is " PV_STR(
				      PV_MAX_HEADER_BYTES) " bytes)");
	if (rq->nhosts > 1)
		return refuse(d, MHD_HTTP_BAD_REQUEST, "more than one Host header");
	if (!strcmp(rq->version, MHD_HTTP_VERSION_1_1) && !rq->host)
		return refuse(d, MHD_HTTP_BAD_REQUEST, "an HTTP/1.1 request needs a Host header");
	if (!pv_host_ok(l, rq->host))
		return refuse(d, MHD_HTTP_MISDIRECTED_REQUEST,
			      "Host must be 127.0.0.1 or localhost with the server's port");
	int secret = 0;
	for (int i = 0; i < 3; i++)
		secret |= l->secret && rq->token[i] && same_secret(rq->token[i], l->secret);
	if (!secret)
		return refuse(d, MHD_HTTP_FORBIDDEN,
			      "open the URL that `tidepool preview` printed (it carries this run's "
			      "secret)");
	if (!strcmp(rq->url, "/edit"))
		return d->route = PV_ROUTE_EDIT;
	if (!strcmp(rq->url, "/size"))
		return d->route = PV_ROUTE_SIZE;
	if (strcmp(rq->method, MHD_HTTP_METHOD_GET) && strcmp(rq->method, MHD_HTTP_METHOD_HEAD))
		return refuse(d, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD");
	if ((rq->content_length && strcmp(rq->content_length, "0")) || rq->transfer_encoding)
		return refuse(d, MHD_HTTP_CONTENT_TOO_LARGE, "no request body allowed");
	if (!strcmp(rq->url, "/status.json"))
		return d->route = PV_ROUTE_STATUS;
	if (!strcmp(rq->url, "/stats.json"))
		return d->route = PV_ROUTE_STATS;
	if (!strcmp(rq->url, "/scene.json"))
		return d->route = PV_ROUTE_SCENE;
	if (!strncmp(rq->url, "/frame/", 7) && (d->frame = frame_number(rq->url)) >= 0) {
		d->mode = TP_MODE_COLOR;
		if (rq->mode && (d->mode = tp_mode_from_name(rq->mode)) < 0)
			return refuse(d, MHD_HTTP_BAD_REQUEST, "mode: not a render mode");
		if (rq->stretch && strcmp(rq->stretch, "0") != 0 && strcmp(rq->stretch, "1") != 0)
			return refuse(d, MHD_HTTP_BAD_REQUEST, "stretch: 0 or 1");
		d->stretch = rq->stretch && !strcmp(rq->stretch, "1");
		if (rq->draft && strcmp(rq->draft, "0") != 0 && strcmp(rq->draft, "1") != 0)
			return refuse(d, MHD_HTTP_BAD_REQUEST, "draft: 0 or 1");
		d->draft = rq->draft && !strcmp(rq->draft, "1");
		return d->route = PV_ROUTE_FRAME;
	}
	if ((d->asset = pv_page_asset(rq->url)))
		return d->route = PV_ROUTE_ASSET;
	return refuse(d, MHD_HTTP_NOT_FOUND, "not found");
}
