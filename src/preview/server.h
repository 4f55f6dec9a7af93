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

#define PV_MAX_CONNECTIONS 128
#define PV_MAX_PER_IP      120
#define PV_CONN_TIMEOUT_S  15
#define PV_CONN_MEMORY     (16 * 1024)
#define PV_THREADS         4

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

/* The embedded page: the file for a path ("/", "/app.js", ...), or NULL (page.c). */
typedef struct pv_asset {
	const char *path, *type;
	const unsigned char *data;
	size_t size;
} pv_asset;
const pv_asset *pv_page_asset(const char *path);

#endif
