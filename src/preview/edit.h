/*
 * edit.h - POST /edit: the page writes the scene file (docs/preview.md "Editing").
 *
 * The request is {"version": V, "ops": [...]} (jsonedit.h's operations). V is the
 * version of the file the page last loaded (X-Tidepool-Version of /scene.json: the first
 * 128 bits of the SHA-256 of its text, a leading byte-order mark aside). The edit is
 * made only if the file on disk still has that version (else 409, "the file changed on
 * disk"); only the bytes of the values that change are rewritten; the new text goes to a
 * temporary file in the scene's directory, with the scene's mode, which is renamed over
 * it, so a reader sees the old file or the new one, never half of one. The watcher then
 * reloads it like any save. Only the scene file named on the command line is written:
 * the request names no file.
 */
#ifndef TP_PREVIEW_EDIT_H
#define TP_PREVIEW_EDIT_H

#include <stddef.h>

#define PV_SECRET_BYTES  32           /* the per-run secret: 256 random bits */
#define PV_EDIT_MAX_BODY (256 * 1024) /* bytes of one POST /edit */
#define PV_VERSION_HEX   33           /* 32 hex digits and a NUL */

typedef struct pv_edit_config {
	char path[1024]; /* the scene file; "" when editing is off */
	char off[160];   /* why editing is off ("--read-only"), shown by the page */
} pv_edit_config;

/* The version of text[0..len) (its BOM skipped), as 32 hex digits. */
void pv_edit_version(const char *text, size_t len, char hex[PV_VERSION_HEX]);

/* Makes the edit body[0..n) asks for. Returns the HTTP status: 200 with the answer
 * {"version": NEW, "undo": [...], "redo": [...]} in *answer (malloc'd JSON), or an error
 * status with {"error": TEXT} there: 400 (a malformed request), 403 (editing off), 409
 * (the file changed on disk), 413, 422 (a path that names nothing, a result that is not
 * JSON), 500 (the file could not be read or written). */
unsigned pv_edit_request(const pv_edit_config *cfg, const char *body, size_t n, char **answer);

#endif
