/*
 * sheet.h - contact sheets: one PNG of labelled thumbnails, for choosing among the
 * variants of a batch. Each item is a label and the PNG to show (any PNG type; NULL or an
 * unreadable file gives an empty box that still carries the label). Thumbnails are
 * area-averaged into boxes `thumb_w` wide (the first readable image sets the height),
 * laid out left to right, top to bottom, in a near-square grid. The labels use a built-in
 * 7x13 bitmap font (printable ASCII); a label may have several lines ('\n'), and a line
 * longer than its box is wrapped, never cut: the strip under every box is as tall as the
 * longest label needs.
 */
#ifndef TP_CLI_SHEET_H
#define TP_CLI_SHEET_H

#include "util/error.h"

typedef struct sheet_item {
	const char *label;
	const char *image; /* PNG or MP4 (.mp4, .m4v, .mov) path, or NULL */
	int frame;         /* MP4: the frame to show (the last one if there are fewer) */
} sheet_item;

/* Writes the sheet to `path` (atomically). Returns 0 or TP_EIO. */
int sheet_write(const char *path, const sheet_item *items, int n, int thumb_w, tp_err *err);

#endif
