/*
 * The import's counters (tally.h): relaxed atomics, since a reader wants a
 * recent figure, not a consistent one, and a writer must not wait.
 */
#include <stdatomic.h>
#include <time.h>

#include "importers/tally.h"

static _Atomic uint64_t tally_nbytes, tally_nevents;
static _Atomic size_t tally_nfile;
static _Atomic int64_t tally_file_ns;
static _Atomic int tally_nstage;

void tally_bytes(uint64_t n)
{
	atomic_fetch_add_explicit(&tally_nbytes, n, memory_order_relaxed);
}

void tally_events(uint64_t n)
{
	atomic_fetch_add_explicit(&tally_nevents, n, memory_order_relaxed);
}

void tally_file(size_t i)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	atomic_store_explicit(&tally_nbytes, 0, memory_order_relaxed);
	atomic_store_explicit(&tally_file_ns, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
			      memory_order_relaxed);
	atomic_store_explicit(&tally_nfile, i, memory_order_relaxed);
	atomic_store_explicit(&tally_nstage, TALLY_READ, memory_order_relaxed);
}

void tally_stage(enum tally_stage s)
{
	atomic_store_explicit(&tally_nstage, (int)s, memory_order_relaxed);
}

void tally_get(struct tally *t)
{
	t->bytes = atomic_load_explicit(&tally_nbytes, memory_order_relaxed);
	t->events = atomic_load_explicit(&tally_nevents, memory_order_relaxed);
	t->file = atomic_load_explicit(&tally_nfile, memory_order_relaxed);
	t->file_ns = atomic_load_explicit(&tally_file_ns, memory_order_relaxed);
	t->stage = (enum tally_stage)atomic_load_explicit(&tally_nstage, memory_order_relaxed);
}
