/*
 * The union of the device work beneath each phase (devunion.h), in one pass:
 * every piece of device work, in order of start, walks up its parents, and
 * each phase it reaches keeps the end of the busy period it has seen last
 * and the length of its busy periods so far.  Work reaching a phase in
 * order of start, a piece adds to the phase's union exactly the part of it
 * past that end (Klee's measure in one dimension), so no phase keeps a
 * list of intervals and the time is the work times its depth.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model/store/col.h"
#include "model/store/devunion.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

/* A phase as the pass sees it: the parent's index, or -1 (none, or a
 * parent_id that names no phase). */
struct node {
	int64_t id;
	int64_t stored; /* device_ns as read */
	int64_t end;	/* the end of the last busy period seen; INT64_MIN: none (until
			   the parents are found, the parent's id; 0: none) */
	int64_t ns;	/* the union so far */
	int32_t parent;
	uint32_t walk; /* the last piece of work (1 + its index) that reached it */
};

struct work {
	int64_t start, end;
	int32_t node;
};

/* Sums are held to 2^61 ns (73 years), as trace.db's readers expect. */
#define NS_CAP ((int64_t)1 << 61)

static int is_device_work(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET;
}

static int by_start(const void *a, const void *b)
{
	const struct work *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* The index of the phase id in nodes (sorted by id), or -1. */
static int32_t find_node(const struct node *nodes, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;
	if (n && id >= nodes[0].id && (uint64_t)(id - nodes[0].id) < n &&
	    nodes[id - nodes[0].id].id == id)
		return (int32_t)(id - nodes[0].id); /* ids are dense in a file the tool made */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (nodes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && nodes[lo].id == id ? (int32_t)lo : -1;
}

/* Adds [w->start, w->end) to the union of node and of each phase above it;
 * a parent cycle in a damaged file ends where the walk meets itself. */
static void add_work(struct node *nodes, const struct work *w, uint32_t walk)
{
	for (int32_t i = w->node; i >= 0 && nodes[i].walk != walk; i = nodes[i].parent) {
		struct node *p = &nodes[i];
		p->walk = walk;
		int64_t from = p->end > w->start ? p->end : w->start;
		if (w->end > from) {
			p->ns += w->end - from;
			if (p->ns > NS_CAP)
				p->ns = NS_CAP;
			p->end = w->end;
		}
	}
}

static int db_fail(sqlite3 *db, char **err, const char *what)
{
	*err = xasprintf("%s: %s: %s", sqlite3_db_filename(db, "main"), what, sqlite3_errmsg(db));
	return -1;
}

int devunion_write(sqlite3 *db, char **err)
{
	struct node *nodes = NULL;
	struct work *work = NULL;
	size_t n = 0, alloc = 0, nwork = 0, walloc = 0;
	sqlite3_stmt *q = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(db,
			       "SELECT id, parent_id, kind, start_ns, dur_ns, device_ns FROM phases"
			       " ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK) {
		db_fail(db, err, "cannot read the device work");
		goto out;
	}
	int step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		if (n >= INT32_MAX) {
			*err = xasprintf("%s: more than %d phases", sqlite3_db_filename(db, "main"),
					 INT32_MAX);
			goto out;
		}
		XGROW(nodes, n + 1, alloc);
		nodes[n] = (struct node){
		    .id = col_int(q, 0), .stored = col_int(q, 5), .end = col_int(q, 1)};
		int64_t dur = col_dur(q, 4);
		if (is_device_work(col_int32(q, 2)) && dur > 0) {
			XGROW(work, nwork + 1, walloc);
			int64_t start = col_time(q, 3);
			work[nwork++] = (struct work){start, start + dur, (int32_t)n};
		}
		n++;
	}
	if (step != SQLITE_DONE) {
		db_fail(db, err, "cannot read the device work");
		goto out;
	}
	sqlite3_finalize(q);
	q = NULL;
	for (size_t i = 0; i < n; i++) {
		nodes[i].parent = nodes[i].end ? find_node(nodes, n, nodes[i].end) : -1;
		nodes[i].end = INT64_MIN;
	}
	if (nwork > UINT32_MAX - 1)
		nwork = UINT32_MAX - 1;
	if (nwork)
		qsort(work, nwork, sizeof(*work), by_start);
	for (size_t k = 0; k < nwork; k++)
		add_work(nodes, &work[k], (uint32_t)k + 1);
	if (sqlite3_prepare_v2(db, "UPDATE phases SET device_ns = ?2 WHERE id = ?1", -1, &q,
			       NULL) != SQLITE_OK) {
		db_fail(db, err, "cannot write the device time");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].ns == nodes[i].stored)
			continue;
		sqlite3_bind_int64(q, 1, nodes[i].id);
		sqlite3_bind_int64(q, 2, nodes[i].ns);
		if (sqlite3_step(q) != SQLITE_DONE) {
			db_fail(db, err, "cannot write the device time");
			goto out;
		}
		sqlite3_reset(q);
	}
	rc = 0;
out:
	sqlite3_finalize(q);
	free(nodes);
	free(work);
	return rc;
}
