/*
 * queue.h - a bounded frame queue with its own encoder thread.
 *
 * The producer (stepper + renderer) acquires a slot (one image per sink), renders into it
 * and submits it; the encoder thread writes each submitted slot to every sink in frame
 * order. `depth` slots are allocated up front, so memory stays flat however long the
 * render is, and the producer blocks only when the encoders fall `depth` frames behind.
 * The queue owns neither the sinks nor their closing: enc_queue_finish() drains the queue,
 * joins the thread and reports the first encoder error; the caller then closes the sinks.
 */
#ifndef TP_ENCODE_QUEUE_H
#define TP_ENCODE_QUEUE_H

#include "encode/encoder.h"

typedef struct enc_queue enc_queue;

/* fmts[s] is sink s's pixel format. `share` may be NULL; share[s] = j < s makes sink s
 * read the image of sink j (same frame, no copy, no image of its own). */
int enc_queue_create(enc_sink *const *sinks, const tp_pixfmt *fmts, const int *share, int nsinks,
		     int w, int h, int depth, enc_queue **out, tp_err *err);
/* Next free slot: an array of nsinks images (a shared sink's entry is unused). NULL if
 * an encoder has failed. */
tp_image *enc_queue_acquire(enc_queue *q);
/* Queues the acquired slot as frame `index`. */
void enc_queue_submit(enc_queue *q, int index);
/* Waits until every submitted frame is written (or an encoder failed); returns 0 or the
 * first encoder error. */
int enc_queue_finish(enc_queue *q, tp_err *err);
void enc_queue_destroy(enc_queue *q); /* finishes first if needed; NULL is a no-op */

#endif
