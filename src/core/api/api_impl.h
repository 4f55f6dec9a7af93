/*
 * api_impl.h - what the files of src/core/api/ share: the public header as the library
 * builds it (its calls exported, everything else hidden by -fvisibility=hidden).
 */
#ifndef TP_API_API_IMPL_H
#define TP_API_API_IMPL_H

#define TP_BUILDING_LIBRARY 1
#include "tidepool.h"

/* Fills e from a one-line message "FILE:LINE:COL: what" (or "FILE: what", or "what"):
 * file, line and col where msg starts with `file` (may be NULL), the rest as message. */
void api_error_fill(tp_error *e, int code, const char *msg, const char *file);

#endif
