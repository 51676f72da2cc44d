/*
 * Phase rows put back in id order; see idorder.h for the contract.
 *
 * A ring of slots indexed by id modulo its size holds the rows whose ids lie
 * in [next, next + size); next is the smallest id not yet emitted nor
 * skipped.  Each slot keeps its attrs buffer for reuse, up to SLOT_KEEP
 * bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "model/ingest/idorder.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

#define SLOT_KEEP 512 /* attrs capacity a slot keeps once emptied */

struct slot {
	struct phase_row row; /* row.attrs points into attrs while held */
	struct sbuf attrs;
	size_t cost; /* attrs.alloc while held: what counts against max_bytes */
	int held;
};

struct idorder {
	struct slot *slot;
	size_t mask;	    /* ring size - 1 */
	int64_t next;	    /* ids below are emitted or skipped */
	size_t held, bytes; /* rows held and their attrs bytes */
	size_t max_bytes;
	int failed; /* the emitter's non-zero value, returned from then on */
	idorder_emit emit;
	void *arg;
};

struct idorder *idorder_new(int64_t first, size_t window, size_t max_bytes, idorder_emit emit,
			    void *arg)
{
	size_t n = 1;
	while (n < window)
		n <<= 1;
	struct idorder *o = xcalloc(1, sizeof(*o));
	o->slot = xcalloc(n, sizeof(*o->slot));
	for (size_t i = 0; i < n; i++)
		sbuf_init(&o->slot[i].attrs);
	o->mask = n - 1;
	o->next = first;
	o->max_bytes = max_bytes;
	o->emit = emit;
	o->arg = arg;
	return o;
}

static int emit(struct idorder *o, const struct phase_row *p)
{
	return o->failed = o->emit(o->arg, p);
}

/* Emits the row of id next, if held, and moves next on. */
static int advance(struct idorder *o)
{
	struct slot *s = &o->slot[(uint64_t)o->next & o->mask];
	o->next++;
	if (!s->held)
		return 0;
	s->held = 0;
	o->held--;
	o->bytes -= s->cost;
	int rc = emit(o, &s->row);
	if (s->attrs.alloc > SLOT_KEEP)
		sbuf_release(&s->attrs);
	return rc;
}

int idorder_put(struct idorder *o, const struct phase_row *p)
{
	if (o->failed)
		return o->failed;
	if (p->id < o->next)
		return emit(o, p); /* skipped, or from before the window */
	int rc;
	while ((uint64_t)p->id - (uint64_t)o->next > o->mask) {
		if (!o->held) { /* nothing to emit on the way: jump */
			o->next = p->id - (int64_t)o->mask;
			break;
		}
		if ((rc = advance(o)) != 0)
			return rc;
	}
	struct slot *s = &o->slot[(uint64_t)p->id & o->mask];
	if (s->held)
		return emit(o, p); /* an id put twice: the caller's error, kept */
	s->row = *p;
	sbuf_reset(&s->attrs);
	if (p->attrs && p->attrs_len) {
		sbuf_add(&s->attrs, p->attrs, p->attrs_len);
		s->row.attrs = s->attrs.buf;
	} else {
		s->row.attrs = NULL;
		s->row.attrs_len = 0;
	}
	s->cost = s->attrs.alloc;
	s->held = 1;
	o->held++;
	o->bytes += s->cost;
	while (o->held && (o->slot[(uint64_t)o->next & o->mask].held || o->bytes > o->max_bytes))
		if ((rc = advance(o)) != 0)
			return rc;
	return 0;
}

struct phase_row *idorder_find(struct idorder *o, int64_t id)
{
	if (id < o->next || (uint64_t)id - (uint64_t)o->next > o->mask)
		return NULL;
	struct slot *s = &o->slot[(uint64_t)id & o->mask];
	return s->held && s->row.id == id ? &s->row : NULL;
}

int idorder_flush(struct idorder *o)
{
	int rc = o->failed;
	while (!rc && o->held)
		rc = advance(o);
	return rc;
}

void idorder_free(struct idorder *o)
{
	if (!o)
		return;
	for (size_t i = 0; i <= o->mask; i++)
		sbuf_release(&o->slot[i].attrs);
	free(o->slot);
	free(o);
}
