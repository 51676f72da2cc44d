/*
 * A bounded map of correlation ids; see cmap.h for the contract.
 *
 * In memory: linear probing over 16-byte slots, a load of at most 3/4, the
 * size doubled until max_bytes would be passed.  Once the table is as large
 * as it may be, most lookups of ids on disk miss it first: at 7/8 a miss
 * scans 32 slots on average, 8.5 at 3/4 (on a 3 GiB trace the probing was
 * 11% of the nest's main thread at 7/8).  On disk: one rowid table
 * keyed by the id, so that a lookup is one B-tree descent, through pages
 * that nearly ordered ids keep in the 2 MiB cache.  The table lives in one
 * transaction, opened with it and never committed (the file is thrown away
 * when closed): in autocommit mode each statement would be a transaction of
 * its own, a read checking the file for changes and a write handing its
 * pages to the kernel, a few system calls for every id.
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "model/ingest/cmap.h"
#include "model/ingest/runs.h"
#include "model/store/col.h"
#include "model/util/xalloc.h"

#define MIN_SLOTS 1024
#define LATE_BUF  (64 << 10) /* deferred deltas buffered before a sorted run */

struct slot {
	int64_t id; /* 0: empty */
	uint64_t v;
};

/* A delta for an id with no room in memory, applied by cmap_settle. */
struct late {
	int64_t id;
	uint64_t delta;
};

struct cmap {
	struct slot *slot;
	size_t cap, n, max_cap;
	cmap_combine combine;
	sqlite3 *db; /* the disk table, opened when first needed */
	sqlite3_stmt *get, *put;
	struct run_buffer late; /* deltas of ids with no room in memory */
	char *err;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int late_cmp(const void *a, const void *b)
{
	const struct late *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static size_t late_size(const void *r)
{
	(void)r;
	return sizeof(struct late);
}

static const struct run_kind late_runs = {sizeof(struct late), late_size, late_cmp};

struct cmap *cmap_new(size_t max_bytes, cmap_combine combine)
{
	struct cmap *m = xcalloc(1, sizeof(*m));
	m->combine = combine;
	run_buffer_init(&m->late, &late_runs, LATE_BUF);
	m->max_cap = MIN_SLOTS;
	while (m->max_cap <= max_bytes / 2 / sizeof(struct slot))
		m->max_cap *= 2;
	return m;
}

static struct slot *probe(const struct cmap *m, int64_t id)
{
	size_t i = mix64((uint64_t)id) & (m->cap - 1);
	while (m->slot[i].id && m->slot[i].id != id)
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

static int full(const struct cmap *m)
{
	return (m->n + 1) * 4 > m->cap * 3;
}

static void grow(struct cmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : MIN_SLOTS;
	struct slot *old = m->slot;
	size_t old_cap = m->cap;
	m->slot = xcalloc(cap, sizeof(*m->slot));
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].id)
			*probe(m, old[i].id) = old[i];
	free(old);
}

static int fail(struct cmap *m, const char *what)
{
	free(m->err);
	m->err = xasprintf("cannot keep correlation ids in a temporary file: %s: %s", what,
			   m->db ? sqlite3_errmsg(m->db) : "out of memory");
	return -1;
}

static int disk_open(struct cmap *m)
{
	if (m->put)
		return 0;
	if (m->err)
		return -1; /* it failed before: no second try */
	/* "" is a private database in a temporary file, deleted when closed */
	if (sqlite3_open_v2("", &m->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return fail(m, "open");
	if (sqlite3_exec(m->db,
			 "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
			 " PRAGMA cache_size = -2048;"
			 " CREATE TABLE m(id INTEGER PRIMARY KEY, v INTEGER NOT NULL); BEGIN",
			 NULL, NULL, NULL) != SQLITE_OK)
		return fail(m, "create");
	if (sqlite3_prepare_v2(m->db, "SELECT v FROM m WHERE id = ?1", -1, &m->get, NULL) !=
		SQLITE_OK ||
	    sqlite3_prepare_v2(m->db, "INSERT OR REPLACE INTO m(id, v) VALUES (?1, ?2)", -1,
			       &m->put, NULL) != SQLITE_OK)
		return fail(m, "prepare");
	return 0;
}

static int disk_get(struct cmap *m, int64_t id, uint64_t *v)
{
	if (m->err)
		return -1; /* a failure may have cost the whole transaction */
	if (!m->get)
		return 0;
	sqlite3_bind_int64(m->get, 1, id);
	int rc = sqlite3_step(m->get);
	if (rc == SQLITE_ROW)
		*v = (uint64_t)col_int(m->get, 0);
	sqlite3_reset(m->get);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : fail(m, "read");
}

int cmap_get(struct cmap *m, int64_t id, uint64_t *v)
{
	if (m->cap) {
		const struct slot *s = probe(m, id);
		if (s->id) {
			*v = s->v;
			return 1;
		}
	}
	return disk_get(m, id, v);
}

/* The slot of id in memory; with add, a new one when there is room
 * (NULL when the table is as large as it may be and full). */
static struct slot *mem_slot(struct cmap *m, int64_t id, int add)
{
	if (m->cap) {
		struct slot *s = probe(m, id);
		if (s->id || !add)
			return s->id ? s : NULL;
	}
	if (!add)
		return NULL;
	if (!m->cap || full(m)) {
		if (m->cap == m->max_cap)
			return NULL;
		grow(m);
	}
	struct slot *s = probe(m, id);
	s->id = id;
	m->n++;
	return s;
}

static int disk_put(struct cmap *m, int64_t id, uint64_t v)
{
	if (m->err || disk_open(m) < 0)
		return -1;
	sqlite3_bind_int64(m->put, 1, id);
	sqlite3_bind_int64(m->put, 2, (int64_t)v);
	int rc = sqlite3_step(m->put);
	sqlite3_reset(m->put);
	return rc == SQLITE_DONE ? 0 : fail(m, "write");
}

int cmap_put(struct cmap *m, int64_t id, uint64_t v)
{
	struct slot *s = mem_slot(m, id, 1);
	if (!s)
		return disk_put(m, id, v); /* no room in memory: on disk */
	s->v = v;
	return 0;
}

/* ---- deltas deferred to cmap_settle ---- */

int cmap_add(struct cmap *m, int64_t id, uint64_t delta)
{
	if (m->err)
		return -1;
	struct slot *s = mem_slot(m, id, 1);
	if (s) {
		s->v = m->combine(s->v, delta);
		return 0;
	}
	char *err = NULL;
	struct late *l = run_buffer_add(&m->late, &err);
	if (!l) {
		free(m->err);
		m->err = err;
		return -1;
	}
	*l = (struct late){id, delta};
	return 0;
}

/* Folds the sorted deltas of one id after another into the disk table. */
struct settling {
	struct cmap *m;
	int64_t id;
	uint64_t v;
	int have, had_rows; /* had_rows: the table held ids before settling */
};

static int settle_flush(struct settling *st)
{
	if (!st->have)
		return 0;
	st->have = 0;
	return disk_put(st->m, st->id, st->v);
}

static int settle_one(void *arg, const void *rec)
{
	struct settling *st = arg;
	const struct late *l = rec;
	if (!st->have || l->id != st->id) {
		if (settle_flush(st) < 0)
			return -1;
		st->id = l->id;
		st->v = 0;
		st->have = 1;
		if (st->had_rows && disk_get(st->m, l->id, &st->v) < 0)
			return -1;
	}
	st->v = st->m->combine(st->v, l->delta);
	return 0;
}

int cmap_settle(struct cmap *m)
{
	if (m->err)
		return -1;
	if (!m->late.n && !m->late.runs.n)
		return 0;
	struct settling st = {.m = m, .had_rows = m->put != NULL};
	if (disk_open(m) < 0)
		return -1;
	char *err = NULL;
	if (run_buffer_merge(&m->late, settle_one, &st, &err) < 0) {
		if (err) { /* a sort file failed, not the table */
			free(m->err);
			m->err = err;
		}
		return -1;
	}
	return settle_flush(&st);
}

void cmap_prefetch(const struct cmap *m, int64_t id)
{
	if (m->cap)
		__builtin_prefetch(&m->slot[mix64((uint64_t)id) & (m->cap - 1)]);
}

const char *cmap_error(const struct cmap *m)
{
	return m->err ? m->err : "no error";
}

uint64_t cmap_on_disk(const struct cmap *m)
{
	sqlite3_stmt *s;
	uint64_t n = 0;
	if (m->db &&
	    sqlite3_prepare_v2(m->db, "SELECT count(*) FROM m", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			n = (uint64_t)col_int(s, 0);
		sqlite3_finalize(s);
	}
	return n;
}

void cmap_free(struct cmap *m)
{
	if (!m)
		return;
	sqlite3_finalize(m->get);
	sqlite3_finalize(m->put);
	sqlite3_close(m->db);
	run_buffer_release(&m->late);
	free(m->slot);
	free(m->err);
	free(m);
}
