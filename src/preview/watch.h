/*
 * watch.h - reloads the preview's scene when it is saved.
 *
 * inotify watches the scene's DIRECTORY, not the file: editors save by writing a
 * temporary file and renaming it over the scene (vim, VS Code, JetBrains), which replaces
 * the inode a watch on the file would follow. An event naming the scene (or a file the
 * scene names: its background image, found by reading the scene's JSON) starts a reload
 * once the directory has been quiet for PV_WATCH_QUIET_MS, so a save made of several
 * writes loads once. The files' list is read again after each reload.
 */
#ifndef TP_PREVIEW_WATCH_H
#define TP_PREVIEW_WATCH_H

#include "preview/state.h"

#define PV_WATCH_QUIET_MS  25
#define PV_WATCH_MAX_FILES 8

typedef struct pv_watch pv_watch;

/* Starts the watcher thread; returns 0, or -1 with a reason in why (inotify missing). */
int pv_watch_start(pv_state *st, const char *scene_path, pv_watch **out, char *why, size_t n);
void pv_watch_stop(pv_watch *w); /* NULL is a no-op */

#endif
