/*
 * The write-behind queue; see wqueue.h.  A chunk is a run of messages, each
 * a size_t length then its bytes, padded to 8.  The producer fills one
 * chunk at a time and hands it over whole, so the two threads meet once
 * per chunk, not once per message.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/ingest/wqueue.h"
#include "model/util/xalloc.h"

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

struct chunk {
	char *buf;
	size_t len, cap;
};

struct wqueue {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t changed;
	struct chunk ring[WQUEUE_CHUNKS]; /* filled chunks, oldest at head */
	size_t head, count;
	char *spare[WQUEUE_CHUNKS]; /* emptied chunk buffers for reuse */
	size_t nspare;
	struct chunk cur; /* the producer's chunk */
	int closing, failed;
	char *err;
	wqueue_fn fn;
	void *arg;
};

static int run_chunk(struct wqueue *q, const struct chunk *c, char **err)
{
	for (size_t off = 0; off < c->len;) {
		size_t len;
		memcpy(&len, c->buf + off, sizeof(len));
		off += sizeof(len);
		if (q->fn(q->arg, c->buf + off, len, err) < 0)
			return -1;
		off += ALIGN8(len);
	}
	return q->fn(q->arg, NULL, 0, err); /* the chunk's bytes go away now */
}

static void *consumer(void *arg)
{
	struct wqueue *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->count && !q->closing)
			pthread_cond_wait(&q->changed, &q->mu);
		if (!q->count)
			break; /* closing and drained */
		struct chunk c = q->ring[q->head];
		pthread_mutex_unlock(&q->mu);
		char *err = NULL;
		int rc = q->failed ? 0 : run_chunk(q, &c, &err);
		pthread_mutex_lock(&q->mu);
		if (rc < 0 && !q->failed) {
			q->err = err;
			__atomic_store_n(&q->failed, 1, __ATOMIC_RELAXED);
		}
		q->head = (q->head + 1) % WQUEUE_CHUNKS;
		q->count--;
		if (c.cap == WQUEUE_CHUNK && q->nspare < WQUEUE_CHUNKS)
			q->spare[q->nspare++] = c.buf;
		else
			free(c.buf);
		pthread_cond_broadcast(&q->changed);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

struct wqueue *wqueue_start(wqueue_fn fn, void *arg, char **err)
{
	struct wqueue *q = xcalloc(1, sizeof(*q));
	q->fn = fn;
	q->arg = arg;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->changed, NULL);
	if (pthread_create(&q->thread, NULL, consumer, q) != 0) {
		*err = xasprintf("cannot start the writer thread");
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->changed);
		free(q);
		return NULL;
	}
	return q;
}

/* Hands the producer's chunk to the consumer, waiting for room. */
static void hand_over(struct wqueue *q)
{
	if (!q->cur.len)
		return;
	pthread_mutex_lock(&q->mu);
	while (q->count == WQUEUE_CHUNKS)
		pthread_cond_wait(&q->changed, &q->mu);
	q->ring[(q->head + q->count) % WQUEUE_CHUNKS] = q->cur;
	q->count++;
	char *spare = q->nspare ? q->spare[--q->nspare] : NULL;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->mu);
	q->cur = (struct chunk){spare, 0, spare ? WQUEUE_CHUNK : 0};
}

int wqueue_push(struct wqueue *q, const void *head, size_t hlen, const void *tail, size_t tlen)
{
	size_t len = hlen + tlen, need = sizeof(len) + ALIGN8(len);
	if (__atomic_load_n(&q->failed, __ATOMIC_RELAXED))
		return -1;
	if (q->cur.len + need > q->cur.cap)
		hand_over(q);
	if (!q->cur.buf || need > q->cur.cap) {
		/* a message larger than a chunk gets a chunk of its own */
		size_t cap = need > WQUEUE_CHUNK ? need : WQUEUE_CHUNK;
		free(q->cur.buf);
		q->cur = (struct chunk){xmalloc(cap), 0, cap};
	}
	char *p = q->cur.buf + q->cur.len;
	memcpy(p, &len, sizeof(len));
	memcpy(p + sizeof(len), head, hlen);
	if (tlen)
		memcpy(p + sizeof(len) + hlen, tail, tlen);
	q->cur.len += need;
	return 0;
}

int wqueue_finish(struct wqueue *q, char **err)
{
	hand_over(q);
	pthread_mutex_lock(&q->mu);
	q->closing = 1;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	int rc = 0;
	if (q->failed) {
		*err = q->err;
		rc = -1;
	}
	free(q->cur.buf);
	for (size_t i = 0; i < q->nspare; i++)
		free(q->spare[i]);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->changed);
	free(q);
	return rc;
}
