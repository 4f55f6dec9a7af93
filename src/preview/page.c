/* page.c - the preview's page (src/preview/page/), embedded at build time by xxd -i
 * into preview_page.h (the Makefile's rule): served from memory, never from disk. */
#include <string.h>

#include "preview/server.h"
#include "preview_page.h"

static const pv_asset assets[] = {
	{"/", "text/html; charset=utf-8", index_html, sizeof index_html},
	{"/style.css", "text/css; charset=utf-8", style_css, sizeof style_css},
	{"/app.js", "text/javascript; charset=utf-8", app_js, sizeof app_js},
	{"/overlays.js", "text/javascript; charset=utf-8", overlays_js, sizeof overlays_js},
	{"/plot.js", "text/javascript; charset=utf-8", plot_js, sizeof plot_js},
	{"/edit.js", "text/javascript; charset=utf-8", edit_js, sizeof edit_js},
};

const pv_asset *pv_page_asset(const char *path)
{
	if (!strcmp(path, "/index.html"))
		path = "/";
	for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++)
		if (!strcmp(path, assets[i].path))
			return &assets[i];
	return NULL;
}
