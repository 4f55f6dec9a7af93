/*
 * server.h - the preview's HTTP server (libmicrohttpd): the embedded page and the JSON/PNG
 * API of docs/preview.md over a pv_state.
 *
 * Security (docs/preview.md "Security and limits"):
 * - binds 127.0.0.1 unless told another address (--listen);
 * - answers only requests whose Host header is the loopback name or address (or the
 *   --listen address) with the server's port: anything else gets 421 (DNS rebinding);
 * - every request carries the run's secret (the ?token= of the printed URL, the cookie
 *   the page gets with it, or an X-Tidepool-Token header): anything else gets 403;
 * - GET and HEAD only (405 otherwise), no request body, no file system path: a URL is
 *   one of the fixed routes or 404; the exceptions are POST /edit (edit.h), which
 *   writes the scene file named on the command line and nothing else, and POST /size
 *   (the preview size chosen on the page), only from the page's own origin;
 * - bounded: PV_MAX_CONNECTIONS in all, PV_MAX_PER_IP from one address, idle ones closed
 *   after PV_CONN_TIMEOUT_S, PV_CONN_MEMORY bytes per connection for the request (a
 *   larger header gets 431), PV_THREADS worker threads whatever the load.
 */
#ifndef TP_PREVIEW_SERVER_H
#define TP_PREVIEW_SERVER_H

#include <stddef.h>

#include "preview/state.h"

#define PV_MAX_CONNECTIONS 1000
#define PV_MAX_PER_IP      1000
/* With more connections open than this, each new one cuts the oldest connection still
 * sending its request: idle and slow clients from anywhere cannot lock the page out. */
#define PV_EVICT_AT 900
#define PV_CONN_TIMEOUT_S  15
/* A request's headers must be in within this long of its start, however slowly they
 * trickle (checked every PV_DEADLINE_TICK_MS). */
#define PV_HEADER_DEADLINE_S 8
#define PV_DEADLINE_TICK_MS  250
/* libmicrohttpd's memory per connection: room for the request within the limits below,
 * so that those are answered here (414, 431) and not by libmicrohttpd */
#define PV_CONN_MEMORY      (64 * 1024)
#define PV_MAX_ARGS         32
#define PV_MAX_URL          2048
#define PV_MAX_HEADERS      100
#define PV_MAX_HEADER_BYTES (16 * 1024)
#define PV_THREADS          4
/* Frames answered and not yet read by their clients (each a PNG in memory); more: 503 */
#define PV_MAX_FRAMES_OUT 64

#define PV_STR_(x) #x
#define PV_STR(x)  PV_STR_(x)

typedef struct pv_server pv_server;

/* listen: a numeric IPv4 or IPv6 address, NULL for 127.0.0.1; port 0: a free one.
 * Returns 0, or -1 with the reason in why. */
int pv_server_start(pv_state *st, const char *listen, int port, pv_server **out, char *why,
		    size_t n);
/* The port listened on and the page's URL ("http://127.0.0.1:PORT/?token=SECRET"). */
int pv_server_port(const pv_server *s);
const char *pv_server_url(const pv_server *s);
/* POST /edit writes scene_path; off (NULL: editing on) says why it may not. */
void pv_server_set_edit(pv_server *s, const char *scene_path, const char *off);
void pv_server_stop(pv_server *s); /* NULL is a no-op */
/* 1 if other machines can reach the address listened on (not 127.0.0.0/8 nor ::1). */
int pv_server_reachable(const pv_server *s);

/* The embedded page: the file for a path ("/", "/app.js", ...), or NULL (page.c). */
typedef struct pv_asset {
	const char *path, *type;
	const unsigned char *data;
	size_t size;
} pv_asset;
const pv_asset *pv_page_asset(const char *path);

#endif
