/*
 * request.h - what the preview server decides about a request, apart from the socket:
 * its limits, method, Host, body and route, from the parts libmicrohttpd parsed (server.c
 * gathers them; tests/fuzz/fuzz_request.c feeds them from arbitrary bytes).
 *
 * Every refusal is a status and a one-line message; nothing here allocates or touches
 * the scene.
 */
#ifndef TP_PREVIEW_REQUEST_H
#define TP_PREVIEW_REQUEST_H

#include <stddef.h>

#include "preview/server.h"

/* Where the server listens, for the Host check. */
typedef struct pv_listen {
	int port;
	const char *listen; /* the --listen address as given ("" or NULL: the default) */
	int wildcard;       /* --listen 0.0.0.0 or :: */
	const char *secret; /* the run's secret (hex) every request must carry */
} pv_listen;

/* A request as parsed: its line, and counts and values of its headers and arguments. */
typedef struct pv_request {
	const char *method, *url, *version; /* url: the path, without the query */
	const char *host;                   /* the (first) Host header, NULL if none */
	int nhosts;                         /* Host headers */
	int nargs, nheaders;                /* query arguments, header fields */
	size_t query_bytes, header_bytes;   /* their names and values, in bytes */
	const char *content_length;         /* NULL if none */
	int transfer_encoding;              /* a Transfer-Encoding header was sent */
	const char *mode, *stretch, *draft; /* those arguments of /frame/N.png (or NULL) */
	/* the secret as the request carries it: the X-Tidepool-Token header, the page's
	 * cookie, the ?token= argument (each NULL if absent) */
	const char *token[3];
} pv_request;

typedef enum pv_route {
	PV_ROUTE_REFUSED, /* status and message say why */
	PV_ROUTE_STATUS,  /* /status.json */
	PV_ROUTE_STATS,   /* /stats.json */
	PV_ROUTE_SCENE,   /* /scene.json */
	PV_ROUTE_FRAME,   /* /frame/N.png: frame, mode, stretch */
	PV_ROUTE_ASSET,   /* a file of the embedded page: asset */
	PV_ROUTE_EDIT,    /* POST /edit (edit.h): its body is read, then decided there */
	PV_ROUTE_SIZE,    /* POST /size: the preview size chosen on the page */
} pv_route;

typedef struct pv_decision {
	pv_route route;
	unsigned status;     /* PV_ROUTE_REFUSED: the HTTP status (400, 404, 405, 413, ...) */
	const char *message; /* PV_ROUTE_REFUSED: why (static) */
	int frame, mode, stretch, draft;
	const pv_asset *asset;
} pv_decision;

/* Fills d and returns its route. The order: the request's own limits, its Host, the
 * secret (403 before anything about the scene is said or rendered), then the method,
 * body and route. /edit and /size are routed whatever the method: the server answers
 * their method, Origin and body (server.c's edit_begin). */
pv_route pv_request_decide(const pv_listen *l, const pv_request *rq, pv_decision *d);

/* Host must be NAME:PORT with NAME the loopback (or the --listen address; any IP literal
 * when that is a wildcard); ":PORT" may be left out only for port 80. */
int pv_host_ok(const pv_listen *l, const char *host);

#endif
