/*
 * Phase rows put back in id order before they are written.
 *
 * The nest builder reserves a span's id when the span opens (pre-order) but
 * can write its row only when it closes (post-order), so a parent's row
 * comes after its children's, with a smaller id: each such row lands in the
 * middle of the phases table, where SQLite must seek and split pages
 * (measured: 11-14% slower to load, 6% larger).  An idorder holds rows
 * in a window of ids and hands them on in id order.  Rows whose turn cannot
 * come while the window is full or holds too many attrs bytes (the ancestors
 * still open when their subtree outgrows the window) are skipped: they are
 * handed on as soon as they arrive.  Every row put is emitted once, by
 * idorder_put or idorder_flush; only the order changes.  Memory: the slots
 * of the window, the attrs held (at most max_bytes of allocation), and up
 * to 512 bytes of buffer each slot keeps for reuse.
 */
#ifndef GRADEML_IDORDER_H
#define GRADEML_IDORDER_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/store.h"

/* Takes one row; its attrs (NULL when empty) are valid until the call
 * returns.  Non-zero fails the idorder: that row and the ones still held
 * are dropped, and every later put or flush returns the same value. */
typedef int (*idorder_emit)(void *arg, const struct phase_row *p);

struct idorder;

/* Rows are expected from id first (>= 0) on; window (rounded up to a power
 * of two) bounds the rows held, max_bytes the memory their attrs hold. */
struct idorder *idorder_new(int64_t first, size_t window, size_t max_bytes, idorder_emit emit,
			    void *arg);
/* Holds a copy of p, then emits every row whose turn has come. */
int idorder_put(struct idorder *o, const struct phase_row *p);
/* The held row with this id, which the caller may change in place (its
 * counts, not its id or attrs); NULL when it is not held. */
struct phase_row *idorder_find(struct idorder *o, int64_t id);
/* Emits every held row, in id order. */
int idorder_flush(struct idorder *o);
void idorder_free(struct idorder *o);

#endif
