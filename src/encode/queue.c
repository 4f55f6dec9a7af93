#include "encode/queue.h"

#include <pthread.h>
#include <stdlib.h>

struct enc_queue {
	enc_sink *const *sinks;
	int *src;         /* sink s writes image src[s] of each slot */
	int nsinks, depth;
	tp_image *slots;  /* depth * nsinks images */
	int *index;       /* frame index of each slot */
	long head, tail;  /* slots [tail, head) are queued; head - tail <= depth */
	int acquired;     /* producer holds slot head % depth */
	int stop, failed, joined;
	tp_err err;
	pthread_mutex_t mu;
	pthread_cond_t not_full, not_empty;
	pthread_t thread;
};

static void *encoder_thread(void *arg)
{
	enc_queue *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->tail == q->head && !q->stop)
			pthread_cond_wait(&q->not_empty, &q->mu);
		if (q->tail == q->head)
			break;
		int slot = (int)(q->tail % q->depth);
		pthread_mutex_unlock(&q->mu);

		tp_err err;
		int rc = 0;
		for (int s = 0; s < q->nsinks && rc == 0; s++)
			rc = enc_sink_write(q->sinks[s], q->index[slot],
					    &q->slots[slot * q->nsinks + q->src[s]], &err);

		pthread_mutex_lock(&q->mu);
		q->tail++;
		if (rc < 0 && !q->failed) {
			q->failed = 1;
			q->err = err;
			q->tail = q->head; /* drop the rest: nothing more will be written */
		}
		pthread_cond_broadcast(&q->not_full);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int enc_queue_create(enc_sink *const *sinks, const tp_pixfmt *fmts, const int *share, int nsinks,
		     int w, int h, int depth, enc_queue **out, tp_err *err)
{
	*out = NULL;
	enc_queue *q = calloc(1, sizeof *q);
	if (!q)
		return tp_errf(err, TP_EIO, "out of memory");
	q->sinks = sinks;
	q->nsinks = nsinks;
	q->depth = depth < 1 ? 1 : depth;
	q->slots = calloc((size_t)q->depth * (size_t)(nsinks ? nsinks : 1), sizeof *q->slots);
	q->index = calloc((size_t)q->depth, sizeof *q->index);
	q->src = calloc((size_t)(nsinks ? nsinks : 1), sizeof *q->src);
	if (!q->slots || !q->index || !q->src)
		goto oom;
	for (int s = 0; s < nsinks; s++)
		q->src[s] = share && share[s] >= 0 && share[s] < s ? q->src[share[s]] : s;
	for (int i = 0; i < q->depth; i++)
		for (int s = 0; s < nsinks; s++)
			if (q->src[s] == s && tp_image_alloc(&q->slots[i * nsinks + s], w, h, fmts[s]) < 0)
				goto oom;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->not_full, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	if (pthread_create(&q->thread, NULL, encoder_thread, q) != 0) {
		q->joined = 1;
		enc_queue_destroy(q);
		return tp_errf(err, TP_EIO, "cannot start the encoder thread");
	}
	*out = q;
	return 0;
oom:
	if (q->slots)
		for (int i = 0; i < q->depth * nsinks; i++)
			tp_image_free(&q->slots[i]);
	free(q->slots);
	free(q->index);
	free(q->src);
	free(q);
	return tp_errf(err, TP_EIO, "out of memory for the frame queue");
}

tp_image *enc_queue_acquire(enc_queue *q)
{
	pthread_mutex_lock(&q->mu);
	while (q->head - q->tail >= q->depth && !q->failed)
		pthread_cond_wait(&q->not_full, &q->mu);
	int failed = q->failed;
	int slot = (int)(q->head % q->depth);
	q->acquired = !failed;
	pthread_mutex_unlock(&q->mu);
	return failed ? NULL : &q->slots[slot * q->nsinks];
}

void enc_queue_submit(enc_queue *q, int index)
{
	pthread_mutex_lock(&q->mu);
	if (q->acquired && !q->failed) {
		q->index[q->head % q->depth] = index;
		q->head++;
		pthread_cond_signal(&q->not_empty);
	}
	q->acquired = 0;
	pthread_mutex_unlock(&q->mu);
}

int enc_queue_finish(enc_queue *q, tp_err *err)
{
	if (!q->joined) {
		pthread_mutex_lock(&q->mu);
		q->stop = 1;
		pthread_cond_broadcast(&q->not_empty);
		pthread_mutex_unlock(&q->mu);
		pthread_join(q->thread, NULL);
		q->joined = 1;
	}
	if (q->failed) {
		if (err)
			*err = q->err;
		return TP_EIO;
	}
	return 0;
}

void enc_queue_destroy(enc_queue *q)
{
	if (!q)
		return;
	enc_queue_finish(q, NULL);
	for (int i = 0; i < q->depth * q->nsinks; i++)
		tp_image_free(&q->slots[i]);
	pthread_cond_destroy(&q->not_full);
	pthread_cond_destroy(&q->not_empty);
	pthread_mutex_destroy(&q->mu);
	free(q->slots);
	free(q->index);
	free(q->src);
	free(q);
}
