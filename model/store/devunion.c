/*
 * The union of the device work beneath each phase (devunion.h), in one
 * sweep: the device work, in order of start (SQLite sorts it, spilling to
 * disk past its cache), walks up its parents, and each phase it reaches
 * keeps the end of the busy period it has seen last and the length of its
 * busy periods so far.  Work reaching a phase in order of start, a piece
 * adds to the phase's union exactly the part of it past that end (Klee's
 * measure in one dimension), so no phase keeps a list of intervals and the
 * time is the work times its depth.
 *
 * Memory is bounded whatever the file's size.  A walk reads the phases it
 * passes by blocks of ids (the ids of a file the tool made follow time, so
 * a block serves the walks of the work around it), a few blocks cached.
 * The phases work has reached are held in a table; when it is full, those
 * whose last busy period ended at or before the current work's start are
 * let go: all later work starts after that end and adds its whole length,
 * so such a phase's sum so far is written to its row and its id noted (in
 * memory, then in a temporary table that SQLite keeps on disk past its
 * cache), and work that reaches it later adds to what the row holds.  Only
 * the phases whose busy period is still running stay, a handful in any
 * real trace.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/store/devunion.h"
#include "model/store/store.h"
#include "model/util/idmap.h"
#include "model/util/xalloc.h"

/* The parent_id and device_ns of a block of ids as read, and whether the
 * sweep has set the phase's sum aside (then device_ns holds it). */
#define BLOCK	256
#define NBLOCKS 1024 /* held at once: 4 MiB */
#define MISSING INT64_MIN
struct block {
	int64_t base;	       /* a multiple of BLOCK; MISSING: none read */
	int64_t parent[BLOCK]; /* 0: none; MISSING: the id names no phase */
	int64_t stored[BLOCK];
	unsigned char aside[BLOCK];
};

/* A phase that device work has reached. */
struct met {
	int64_t id;
	int64_t parent;
	int64_t stored; /* device_ns as the row holds it */
	int64_t end;	/* the end of the last busy period seen; INT64_MIN: none */
	int64_t ns;	/* the union so far */
	uint32_t walk;	/* the last piece of work (1 + its index) that reached it */
};

struct sweep {
	sqlite3 *db;
	sqlite3_stmt *read;  /* the phases of a block of ids */
	sqlite3_stmt *write; /* a phase's device_ns */
	sqlite3_stmt *note;  /* notes a phase whose sum was set aside */
	sqlite3_stmt *noted; /* those of a block of ids */
	struct block *blocks;
	struct met *met;
	size_t n, alloc, cap;
	struct idmap map; /* id -> index in met */
	int64_t *set;	  /* the ids of the phases set aside, increasing (not yet in ASIDE) */
	size_t nset, noted_max;
	int64_t now; /* the start of the current piece of work */
};

/* Sums are held to 2^61 ns (73 years), as trace.db's readers expect. */
#define NS_CAP ((int64_t)1 << 61)
#define ASIDE  "temp.grademl_devunion"
/* Ids of phases set aside held in memory before they go to ASIDE, for each
 * phase the table holds (8 MiB for DEVUNION_MAX_PHASES). */
#define NOTED_PER_PHASE 16

static int db_fail(sqlite3 *db, char **err, const char *what)
{
	*err = xasprintf("%s: %s: %s", sqlite3_db_filename(db, "main"), what, sqlite3_errmsg(db));
	return -1;
}

static int64_t ns_add(int64_t a, int64_t b)
{
	return a > NS_CAP - b ? NS_CAP : a + b;
}

static struct block *block_of(struct sweep *s, int64_t base)
{
	return &s->blocks[((uint64_t)base / BLOCK) % NBLOCKS];
}

/* Whether id was set aside, as noted in memory (the table is asked by
 * read_block). */
static int noted_in_memory(const struct sweep *s, int64_t id)
{
	size_t lo = 0, hi = s->nset;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->set[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nset && s->set[lo] == id;
}

/* Reads the block of ids from base into b, with the sums set aside. */
static int read_block(struct sweep *s, struct block *b, int64_t base, char **err)
{
	b->base = base;
	for (int j = 0; j < BLOCK; j++)
		b->parent[j] = MISSING;
	memset(b->aside, 0, sizeof(b->aside));
	sqlite3_stmt *q = s->read;
	sqlite3_bind_int64(q, 1, base);
	sqlite3_bind_int64(q, 2, base + BLOCK);
	int step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t j = col_int(q, 0) - base;
		if (j >= 0 && j < BLOCK) {
			b->parent[j] = col_int(q, 1);
			b->stored[j] = col_int(q, 2);
			b->aside[j] = (unsigned char)noted_in_memory(s, base + j);
		}
	}
	sqlite3_reset(q);
	if (step == SQLITE_DONE && s->noted) {
		q = s->noted;
		sqlite3_bind_int64(q, 1, base);
		sqlite3_bind_int64(q, 2, base + BLOCK);
		while ((step = sqlite3_step(q)) == SQLITE_ROW) {
			int64_t j = col_int(q, 0) - base;
			if (j >= 0 && j < BLOCK)
				b->aside[j] = 1;
		}
		sqlite3_reset(q);
	}
	if (step != SQLITE_DONE) {
		b->base = MISSING;
		return db_fail(s->db, err, "cannot read the phases above the device work");
	}
	return 0;
}

static int write_ns(struct sweep *s, int64_t id, int64_t ns, char **err)
{
	sqlite3_bind_int64(s->write, 1, id);
	sqlite3_bind_int64(s->write, 2, ns);
	int rc = sqlite3_step(s->write);
	sqlite3_reset(s->write);
	return rc == SQLITE_DONE ? 0 : db_fail(s->db, err, "cannot write the device time");
}

static int write_sum(struct sweep *s, const struct met *m, char **err)
{
	return m->ns == m->stored ? 0 : write_ns(s, m->id, m->ns, err);
}

/* Moves the ids noted in memory into the temporary table, in order. */
static int note_flush(struct sweep *s, char **err)
{
	if (!s->note &&
	    (sqlite3_exec(s->db,
			  "DROP TABLE IF EXISTS " ASIDE "; CREATE TABLE " ASIDE
			  "(id INTEGER PRIMARY KEY)",
			  NULL, NULL, NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO " ASIDE "(id) VALUES (?1)", -1,
				&s->note, NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(s->db, "SELECT id FROM " ASIDE " WHERE id >= ?1 AND id < ?2", -1,
				&s->noted, NULL) != SQLITE_OK))
		return db_fail(s->db, err, "cannot set the device time aside");
	for (size_t i = 0; i < s->nset; i++) {
		sqlite3_bind_int64(s->note, 1, s->set[i]);
		int rc = sqlite3_step(s->note);
		sqlite3_reset(s->note);
		if (rc != SQLITE_DONE)
			return db_fail(s->db, err, "cannot set the device time aside");
	}
	s->nset = 0;
	return 0;
}

/* Notes the ids of this round's phases set aside (ids[0..n), increasing)
 * beside those of earlier rounds: merged in memory, in the temporary table
 * past NOTED_PER_PHASE times the table's first size. */
static int note(struct sweep *s, const int64_t *ids, size_t n, char **err)
{
	int64_t *merged = xmalloc((s->nset + n + 1) * sizeof(*merged));
	size_t a = 0, b = 0, m = 0;
	while (a < s->nset || b < n) {
		int64_t v = b >= n || (a < s->nset && s->set[a] <= ids[b]) ? s->set[a++] : ids[b++];
		if (!m || merged[m - 1] != v)
			merged[m++] = v;
	}
	free(s->set);
	s->set = merged;
	s->nset = m;
	return m > s->noted_max ? note_flush(s, err) : 0;
}

/* Lets go of a phase whose busy period is over: its sum so far goes to its
 * row, to be added to by work that reaches it later (note). */
static int set_aside(struct sweep *s, const struct met *m, char **err)
{
	if (write_sum(s, m, err) < 0)
		return -1;
	int64_t base = m->id - (int64_t)((uint64_t)m->id % BLOCK);
	struct block *b = block_of(s, base);
	if (b->base == base) {
		b->stored[m->id - base] = m->ns;
		b->aside[m->id - base] = 1;
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct met *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Makes room for one more phase: lets go of those whose busy period ended
 * at or before the current work's start; the table grows when the phases
 * still busy fill half of it. */
static int reserve(struct sweep *s, char **err)
{
	if (s->n < s->cap)
		return 0;
	qsort(s->met, s->n, sizeof(*s->met), by_id);
	int64_t *gone = xmalloc(s->n * sizeof(*gone));
	size_t kept = 0, ngone = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->met[i].end > s->now) {
			s->met[kept++] = s->met[i];
			continue;
		}
		if (set_aside(s, &s->met[i], err) < 0) {
			free(gone);
			return -1;
		}
		gone[ngone++] = s->met[i].id;
	}
	s->n = kept;
	int rc = note(s, gone, ngone, err);
	free(gone);
	if (rc < 0)
		return -1;
	while (s->n + 1 > s->cap / 2)
		s->cap *= 2;
	size_t slots = 64;
	while (slots < 2 * s->n + 2)
		slots *= 2;
	idmap_release(&s->map);
	idmap_init(&s->map, slots);
	for (size_t i = 0; i < s->n; i++)
		idmap_put(&s->map, s->met[i].id, (int32_t)i);
	return 0;
}

/* The block holding phase id, read if need be, and id's place in it (*j);
 * NULL with *j = -1 when no phase has that id (a damaged file's parent_id),
 * NULL with *j = -2 on error. */
static struct block *find_block(struct sweep *s, int64_t id, int64_t *j, char **err)
{
	*j = -1;
	if (id < -COL_ID_MAX || id > COL_ID_MAX) /* ids are checked at open */
		return NULL;
	int64_t base = id - (int64_t)((uint64_t)id % BLOCK);
	struct block *b = block_of(s, base);
	if (b->base != base && read_block(s, b, base, err) < 0) {
		*j = -2;
		return NULL;
	}
	*j = id - base;
	if (b->parent[*j] == MISSING) {
		*j = -1;
		return NULL;
	}
	return b;
}

/* The index in met of phase id, met anew from its block if need be; -1 when
 * no phase has that id, -2 on error. */
static int64_t find_met(struct sweep *s, int64_t id, char **err)
{
	int32_t i = idmap_get(&s->map, id);
	if (i >= 0)
		return i;
	int64_t j;
	struct block *b = find_block(s, id, &j, err);
	if (!b)
		return j;
	if (reserve(s, err) < 0)
		return -2;
	XGROW(s->met, s->n + 1, s->alloc);
	s->met[s->n] = (struct met){.id = id,
				    .parent = b->parent[j],
				    .stored = b->stored[j],
				    .end = INT64_MIN,
				    .ns = b->aside[j] ? b->stored[j] : 0};
	idmap_put(&s->map, id, (int32_t)s->n);
	return (int64_t)s->n++;
}

/* Adds the piece of work id, [start, end), to its own union and to that of
 * each phase above it; a parent cycle in a damaged file ends where the walk
 * meets itself. */
static int add_work(struct sweep *s, int64_t id, int64_t start, int64_t end, uint32_t walk,
		    char **err)
{
	while (id) {
		int64_t i = find_met(s, id, err);
		if (i < 0)
			return i == -1 ? 0 : -1;
		struct met *p = &s->met[i];
		if (p->walk == walk)
			return 0;
		p->walk = walk;
		int64_t from = p->end > start ? p->end : start;
		if (end > from) {
			p->ns = ns_add(p->ns, end - from);
			p->end = end;
		}
		id = p->parent;
	}
	return 0;
}

int devunion_write_within(sqlite3 *db, size_t max_phases, char **err)
{
	struct sweep s = {.db = db, .cap = max_phases < 8 ? 8 : max_phases};
	s.noted_max = s.cap * NOTED_PER_PHASE;
	s.blocks = xmalloc(NBLOCKS * sizeof(*s.blocks));
	for (size_t b = 0; b < NBLOCKS; b++)
		s.blocks[b].base = MISSING;
	idmap_init(&s.map, 64);
	sqlite3_stmt *work = NULL;
	int rc = -1;
	char sql[160];
	snprintf(sql, sizeof(sql),
		 "SELECT id, start_ns, dur_ns FROM phases WHERE kind IN (%d, %d, %d)"
		 " AND dur_ns > 0 ORDER BY start_ns",
		 PHASE_KERNEL, PHASE_MEMCPY, PHASE_MEMSET);
	if (sqlite3_prepare_v2(db, sql, -1, &work, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "SELECT id, parent_id, device_ns FROM phases"
			       " WHERE id >= ?1 AND id < ?2",
			       -1, &s.read, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "UPDATE phases SET device_ns = ?2 WHERE id = ?1", -1, &s.write,
			       NULL) != SQLITE_OK) {
		db_fail(db, err, "cannot read the device work");
		goto out;
	}
	int step;
	uint32_t walk = 0;
	while ((step = sqlite3_step(work)) == SQLITE_ROW) {
		int64_t start = col_time(work, 1), dur = col_dur(work, 2);
		if (dur <= 0)
			continue;
		if (start > s.now || !walk)
			s.now = start;
		if (walk == UINT32_MAX) { /* 4 billion pieces: the walks' marks start over */
			for (size_t i = 0; i < s.n; i++)
				s.met[i].walk = 1;
			walk = 1;
		}
		if (add_work(&s, col_int(work, 0), start, start + dur, ++walk, err) < 0)
			goto out;
	}
	if (step != SQLITE_DONE) {
		db_fail(db, err, "cannot read the device work");
		goto out;
	}
	for (size_t i = 0; i < s.n; i++)
		if (write_sum(&s, &s.met[i], err) < 0)
			goto out;
	rc = 0;
out:
	sqlite3_finalize(work);
	sqlite3_finalize(s.read);
	sqlite3_finalize(s.write);
	sqlite3_finalize(s.note);
	sqlite3_finalize(s.noted);
	if (s.note)
		sqlite3_exec(db, "DROP TABLE IF EXISTS " ASIDE, NULL, NULL, NULL);
	idmap_release(&s.map);
	free(s.blocks);
	free(s.met);
	free(s.set);
	return rc;
}

int devunion_write(sqlite3 *db, char **err)
{
	return devunion_write_within(db, DEVUNION_MAX_PHASES, err);
}
