/*
 * A write-behind queue: one producer thread appends messages, one consumer
 * thread (started here) hands each to a function in the order they were
 * pushed.  The import uses it so that SQLite's inserts run on the second
 * core while the nest builder sorts and nests on the first.
 *
 * Messages are copied into chunks of WQUEUE_CHUNK bytes; at most
 * WQUEUE_CHUNKS chunks are in flight, so the queue holds a few MB however
 * fast the producer is (it blocks when the consumer falls behind).  While a
 * queue runs, whatever the consumer function touches (the SQLite
 * connection) belongs to the consumer thread alone.
 *
 * The first error of the consumer function stops the consumer; later pushes
 * return -1 at once and wqueue_finish returns that error.
 */
#ifndef GRADEML_WQUEUE_H
#define GRADEML_WQUEUE_H

#include <stddef.h>

#define WQUEUE_CHUNK  (256 << 10)
#define WQUEUE_CHUNKS 8

/* Handles one message; 0, or -1 with *err set.  A message's bytes stay
 * valid until the end of its chunk: the consumer may keep pointers into
 * them until it is called with msg NULL (after each chunk, and before
 * wqueue_finish returns), when it must be done with them. */
typedef int (*wqueue_fn)(void *arg, const void *msg, size_t len, char **err);

struct wqueue;

/* Starts the consumer thread; NULL with *err set when it cannot. */
struct wqueue *wqueue_start(wqueue_fn fn, void *arg, char **err);
/* Appends one message made of head[0..hlen) then tail[0..tlen) (tail may
 * be NULL).  0, or -1 when the consumer has failed. */
int wqueue_push(struct wqueue *q, const void *head, size_t hlen, const void *tail, size_t tlen);
/* Waits until every message is handled, stops the thread and frees q.
 * 0, or -1 with *err set to the consumer's error. */
int wqueue_finish(struct wqueue *q, char **err);

#endif
