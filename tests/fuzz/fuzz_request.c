/* The preview's request handling without a socket: any bytes as an HTTP request (request
 * line, headers up to an empty line), split here into what libmicrohttpd would hand the
 * server (the path percent-decoded, query arguments, header fields), then decided by
 * pv_request_decide() (src/preview/request.c) for one of three --listen settings (the
 * first byte picks it). Checks that every answer is a route or a refusal with a status
 * from the documented set and a one-line message, that nothing is served to a request
 * whose Host is not the server's or whose method is not GET or HEAD, and that only the
 * fixed routes and the page's own files are ever served. */
#include <strings.h>

#include "fuzz_util.h"
#include "preview/request.h"
#include "tidepool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINE 8192

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* libmicrohttpd's unescaping of the path, %XX to the byte (a NUL ends it). */
static void unescape(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		int h, l;
		if (*p == '%' && (h = hexval(p[1])) >= 0 && (l = hexval(p[2])) >= 0) {
			*o++ = (char)(h * 16 + l);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const pv_listen where[] = {
		{.port = 8123, .listen = "", .wildcard = 0, .secret = "5ec1"},
		{.port = 80, .listen = "::1", .wildcard = 0, .secret = "5ec1"},
		{.port = 8123, .listen = "0.0.0.0", .wildcard = 1, .secret = "5ec1"},
	};
	if (size < 1 || size > 64 * 1024)
		return 0;
	const pv_listen *l = &where[data[0] % 3];
	char *text = malloc(size);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	/* the request line */
	char *save = NULL, *line = strtok_r(text, "\r\n", &save);
	char *method = line ? strtok(line, " ") : NULL, *target = method ? strtok(NULL, " ") : NULL;
	char *version = target ? strtok(NULL, " ") : NULL;
	if (!version) {
		free(text);
		return 0;
	}
	pv_request rq = {.method = method, .version = version};
	char *query = strchr(target, '?');
	if (query)
		*query++ = '\0';
	unescape(target);
	rq.url = target;
	for (char *q = query ? strtok(query, "&") : NULL; q; q = strtok(NULL, "&")) {
		char *eq = strchr(q, '=');
		if (eq)
			*eq++ = '\0';
		rq.nargs++;
		rq.query_bytes += strlen(q) + (eq ? strlen(eq) : 0) + 4;
		if (!strcmp(q, "mode") && !rq.mode)
			rq.mode = eq ? eq : "";
		if (!strcmp(q, "stretch") && !rq.stretch)
			rq.stretch = eq ? eq : "";
		if (!strcmp(q, "draft") && !rq.draft)
			rq.draft = eq ? eq : "";
		if (!strcmp(q, "token") && !rq.token[2])
			rq.token[2] = eq ? eq : "";
	}
	/* header fields */
	for (char *h; (h = strtok_r(NULL, "\r\n", &save));) {
		char *colon = strchr(h, ':');
		if (!colon)
			continue;
		*colon = '\0';
		char *v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		rq.nheaders++;
		rq.header_bytes += strlen(h) + strlen(v) + 4;
		if (!strcasecmp(h, "Host") && rq.nhosts++ == 0)
			rq.host = v;
		if (!strcasecmp(h, "Content-Length"))
			rq.content_length = v;
		if (!strcasecmp(h, "Transfer-Encoding"))
			rq.transfer_encoding = 1;
		if (!strcasecmp(h, "X-Tidepool-Token") && !rq.token[0])
			rq.token[0] = v;
	}
	pv_decision d;
	pv_route r = pv_request_decide(l, &rq, &d);
	if (r != d.route)
		abort();
	if (r == PV_ROUTE_REFUSED) {
		static const unsigned ok[] = {400, 403, 404, 405, 413, 414, 421, 431};
		int known = 0;
		for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
			known |= d.status == ok[i];
		if (!known || !d.message || !d.message[0] || strchr(d.message, '\n'))
			abort();
	} else {
		/* served: a request naming this server and carrying the secret, within the
		 * limits; a GET or HEAD without a body but for the page's two writes */
		int token = 0;
		for (int i = 0; i < 3; i++)
			token |= rq.token[i] && !strcmp(rq.token[i], l->secret);
		int write = r == PV_ROUTE_EDIT || r == PV_ROUTE_SIZE;
		if (!token || (write && strcmp(rq.url, r == PV_ROUTE_EDIT ? "/edit" : "/size")))
			abort();
		if ((!write && strcmp(method, "GET") && strcmp(method, "HEAD")) ||
		    !pv_host_ok(l, rq.host) ||
		    rq.nhosts != 1 || rq.nargs > PV_MAX_ARGS || rq.header_bytes > PV_MAX_HEADER_BYTES)
			abort();
		if (r == PV_ROUTE_FRAME &&
		    (d.frame < 0 || d.frame > 999999999 || !tp_mode_name((tp_mode)d.mode) ||
		     strncmp(rq.url, "/frame/", 7)))
			abort();
		if (r == PV_ROUTE_ASSET &&
		    (!d.asset || (strcmp(d.asset->path, rq.url) && strcmp(rq.url, "/index.html"))))
			abort();
		if (strstr(rq.url, "..") || strstr(rq.url, "//"))
			abort();
	}
	free(text);
	return 0;
}
