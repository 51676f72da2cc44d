/*
 * Critical path and what-if (see critpath.h for the graph and its
 * assumptions).  The subtree is read into parallel arrays indexed by load
 * order (breadth first, so a parent comes before its children); event 2p is
 * the start of phase p and 2p + 1 its end.  Edges are mostly implicit (the
 * parent, a child list, the next phase on the same executor); only the
 * edges table's rows are stored, by source phase.  One Kahn pass finds a
 * topological order and each event's binding predecessor; the path follows
 * those back, and a what-if replays the order with scaled weights.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/critpath.h"
#include "model/analysis/devcall.h"
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/util/idmap.h"
#include "model/view/model.h"
#include "model/store/ptree.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"
#include "model/util/search.h"

/* Phase flags. */
#define F_LEAF	    0x01 /* no contained child: S(p) -> E(p) */
#define F_CONTAINED 0x02 /* E(p) -> E(up[p]) */
#define F_INPARENT  0x80 /* contained in its parent: up[p] is the parent */
#define F_NEST	    0x04 /* S(parent) -> S(p) does not go back in time */
#define F_DEVICE    0x08 /* kernel, memcpy, memset */
#define F_SIB	    0x10 /* ordered after a contained sibling: the gap is the parent's */
#define F_UNDER	    0x20 /* the what-if phase or under it */
#define F_DROP	    0x40 /* an empty container: no edges, no end */

/* Why an event waited on its binding predecessor; BK_EDGE + edges.kind. */
enum {
	BK_RELEASE,
	BK_WORK,
	BK_NEST_START,
	BK_NEST_END,
	BK_LAUNCH,
	BK_ORDER,
	BK_SYNC,
	BK_COPY,
	BK_EDGE
};
#define EDGE_KIND_MAX 200 /* edges.kind beyond this reads as 0 */

#define T_LIMIT	  (INT64_MAX / 2)
#define SCAN_ROWS ((size_t)1 << 18)

struct graph {
	size_t n, cap;
	int32_t root;	/* the root's index; -1 for root 0 */
	int64_t origin; /* earliest start; times below are relative to it */
	int64_t *id, *t0, *t1;
	int32_t *parent, *track, *first_child, *next_sib, *next_order;
	int64_t *track_id; /* by track index: the tracks row */
	int32_t *up; /* whose end waits for p's end: its parent, or a device op's stream node */
	uint8_t *kind, *flags;
	uint8_t *structure; /* 1: structure, its window its children's (mark_structure) */
	uint32_t *eoff;	    /* n + 1: the edges of source phase p are [eoff[p], eoff[p+1]) */
	uint32_t *edst;	    /* destination phase << 1, | 1 when from the source's end */
	uint8_t *ekind;	    /* edges.kind */
	int64_t nedges;	    /* edges kept, implicit ones included */
	/* synchronising calls: E(sync_src[j]) -> E(sync_dst[j]); sync_head[p]
	 * is the first j whose source is p, sync_next[j] the next (-1: none) */
	int32_t *syncs; /* while loading: the synchronising calls */
	size_t nsyncs, async;
	int32_t *sync_head, *sync_next, *sync_dst;
	/* copies from or to pageable memory; copy_call[k]: the call whose end
	 * waits on copy k's progress, S(k) -> E(copy_call[k]) (-1: none) */
	int32_t *pcopies, *copy_call;
	size_t npcopies, apcopies;
	int32_t *b;	/* per event: binding predecessor, -1 when released */
	uint8_t *bk;	/* per event: BK_* of the binding edge */
	int32_t *order; /* the 2n events in topological order */
	size_t qtail;	/* Kahn pass: events queued so far */
	int32_t *indeg; /* Kahn pass only */
	uint8_t *state; /* Kahn pass: queued; what-if pass: done */
	int64_t *T;	/* what-if pass: event times */
	int32_t *nb;	/* what-if pass: each event's binding predecessor now */
	uint8_t *nbk;	/* what-if pass: BK_* of that edge */
	double k;	/* what-if factor */
};

/* Tracks: id -> serial (a thread or a stream runs one thing at a time),
 * a CPU thread's (level_of's on_thread), the source (the trace file: one
 * process) and the track's node in the graph (-1: none). */
struct tracks {
	int64_t *id, *phase_id, *source;
	int32_t *node;
	uint8_t *serial, *thread;
	size_t n;
};

static inline int64_t ev_t(const struct graph *g, int32_t v)
{
	return (v & 1) ? g->t1[v >> 1] : g->t0[v >> 1];
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ---- reading ---- */

static int db_fail(struct store *st, const char *what, char **err)
{
	*err =
	    xasprintf("%s: cannot read %s: %s", store_path(st), what, sqlite3_errmsg(store_db(st)));
	return -1;
}

static int load_tracks(struct store *st, struct tracks *t, char **err)
{
	sqlite3_stmt *q;
	size_t alloc = 0, salloc = 0, talloc = 0, palloc = 0, oalloc = 0;
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT id, kind IN ('thread', 'stream'), coalesce(phase_id, 0),"
			       " source_id, kind = 'thread' FROM tracks ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK)
		return db_fail(st, "tracks", err);
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(t->id, t->n + 1, alloc);
		XGROW(t->serial, t->n + 1, salloc);
		XGROW(t->thread, t->n + 1, talloc);
		XGROW(t->phase_id, t->n + 1, palloc);
		XGROW(t->source, t->n + 1, oalloc);
		t->id[t->n] = col_int(q, 0);
		t->phase_id[t->n] = col_int(q, 2);
		t->source[t->n] = col_int(q, 3);
		t->thread[t->n] = (uint8_t)col_int32(q, 4);
		t->serial[t->n++] = (uint8_t)col_int32(q, 1);
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : db_fail(st, "tracks", err);
}

static int32_t track_index(const struct tracks *t, int64_t id)
{
	size_t lo;
	PARTITION_POINT(lo, t->n, i, t->id[i] < id);
	return lo < t->n && t->id[lo] == id ? (int32_t)lo : -1;
}

/* The string ids of this file's synchronising calls (model/analysis/devcall.h) and
 * of its copies from or to pageable memory. */
struct sync_ids {
	int64_t id[16], copy[16];
	size_t n, ncopy;
};

static int load_sync_ids(struct store *st, struct sync_ids *s, char **err)
{
	sqlite3_stmt *q;
	s->n = s->ncopy = 0;
	if (sqlite3_prepare_v2(store_db(st), "SELECT id FROM strings WHERE text = ?1", -1, &q,
			       NULL) != SQLITE_OK)
		return db_fail(st, "strings", err);
	for (size_t i = 0; devcall_sync_names[i] && s->n < 16; i++) {
		sqlite3_reset(q);
		sqlite3_bind_text(q, 1, devcall_sync_names[i], -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW)
			s->id[s->n++] = col_int(q, 0);
	}
	sqlite3_finalize(q);
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT id, text FROM strings WHERE text GLOB 'Memcpy*Pageable*'",
			       -1, &q, NULL) != SQLITE_OK)
		return db_fail(st, "strings", err);
	while (sqlite3_step(q) == SQLITE_ROW && s->ncopy < 16)
		if (devcall_copy(col_text(q, 1)) & DEVCALL_PAGEABLE)
			s->copy[s->ncopy++] = col_int(q, 0);
	sqlite3_finalize(q);
	return 0;
}

/* What a phase is to the sync edges: ROLE_SYNC, a synchronising runtime
 * call; ROLE_PAGEABLE, a copy from or to pageable memory; else 0. */
enum { ROLE_SYNC = 1, ROLE_PAGEABLE = 2 };
static int role_of(const struct sync_ids *s, int kind, int64_t name_id)
{
	const int64_t *ids = kind == PHASE_RUNTIME ? s->id : kind == PHASE_MEMCPY ? s->copy : NULL;
	size_t n = kind == PHASE_RUNTIME ? s->n : s->ncopy;
	for (size_t i = 0; ids && i < n; i++)
		if (ids[i] == name_id)
			return kind == PHASE_RUNTIME ? ROLE_SYNC : ROLE_PAGEABLE;
	return 0;
}

static void add_sync(struct graph *g, int32_t p)
{
	XGROW(g->syncs, g->nsyncs + 1, g->async);
	g->syncs[g->nsyncs++] = p;
}

static void add_role(struct graph *g, int32_t p, int role)
{
	if (role == ROLE_SYNC)
		add_sync(g, p);
	else if (role == ROLE_PAGEABLE) {
		XGROW(g->pcopies, g->npcopies + 1, g->apcopies);
		g->pcopies[g->npcopies++] = p;
	}
}

static void grow(struct graph *g)
{
	if (g->n < g->cap)
		return;
	g->cap = g->cap ? g->cap * 2 : 1024;
	g->id = xrealloc(g->id, g->cap * sizeof(*g->id));
	g->t0 = xrealloc(g->t0, g->cap * sizeof(*g->t0));
	g->t1 = xrealloc(g->t1, g->cap * sizeof(*g->t1));
	g->parent = xrealloc(g->parent, g->cap * sizeof(*g->parent));
	g->track = xrealloc(g->track, g->cap * sizeof(*g->track));
	g->kind = xrealloc(g->kind, g->cap * sizeof(*g->kind));
}

/* The subtree, breadth first: every row's parent was read before it.  A
 * parent cycle through the root would recurse for ever; the root read a
 * second time stops it. */
static int load_phases(struct store *st, struct graph *g, int64_t root_id, const struct tracks *t,
		       struct idmap *mp, const struct sync_ids *sy, size_t cap, char **err)
{
#define SUB_COLS "id, parent_id, kind, coalesce(track_id, 0), start_ns, dur_ns, name_id"
#define SUB_HEAD                                                                                   \
	"WITH RECURSIVE sub(id, parent_id, kind, track_id, start_ns, dur_ns, name_id) AS (SELECT "
#define SUB_TAIL                                                                                   \
	" UNION ALL SELECT p.id, p.parent_id, p.kind, coalesce(p.track_id, 0), p.start_ns,"        \
	" p.dur_ns, p.name_id FROM sub JOIN phases p ON p.parent_id = sub.id WHERE p.kind <> ?2"   \
	" AND NOT (p.kind <= ?3 AND p.dur_ns = 0) AND p.kind <> ?4)"                               \
	" SELECT * FROM sub"
	static const char by_id[] = SUB_HEAD SUB_COLS " FROM phases WHERE id = ?1" SUB_TAIL;
	static const char all[] =
	    SUB_HEAD SUB_COLS " FROM phases WHERE parent_id IS NULL AND kind <> ?2" SUB_TAIL;
#undef SUB_COLS
#undef SUB_HEAD
#undef SUB_TAIL
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(store_db(st), root_id ? by_id : all, -1, &q, NULL) != SQLITE_OK)
		return db_fail(st, "phases", err);
	sqlite3_bind_int64(q, 1, root_id);
	sqlite3_bind_int(q, 2, PHASE_GPU_ANNOTATION);
	sqlite3_bind_int(q, 3, PHASE_STREAM);	/* workflow .. stream: structural */
	sqlite3_bind_int(q, 4, PHASE_PROFILER); /* the profiler's bookkeeping: not work */
	idmap_init(mp, 1024);
	g->n = g->nsyncs = g->npcopies = 0;
	g->root = root_id ? 0 : -1;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (g->n >= cap) {
			sqlite3_finalize(q);
			idmap_release(mp);
			return 1;
		}
		if (g->n >= (size_t)1 << 30) {
			sqlite3_finalize(q);
			*err = xasprintf("critical path: more than 2^30 phases under %lld",
					 (long long)root_id);
			return -1;
		}
		int64_t id = col_int(q, 0);
		if (idmap_put(mp, id, (int32_t)g->n) < 0) {
			sqlite3_finalize(q);
			*err = ptree_loop_error(store_path(st), id);
			return PTREE_LOOP;
		}
		grow(g);
		size_t i = g->n++;
		g->id[i] = id;
		g->parent[i] = col_null(q, 1) ? -1 : idmap_get(mp, col_int(q, 1));
		int kind = col_int32(q, 2);
		g->kind[i] = (uint8_t)(kind > 0 && kind < PHASE_KIND_COUNT ? kind : 0);
		int64_t tid = col_int(q, 3);
		g->track[i] = tid ? track_index(t, tid) : -1;
		g->t0[i] = clamp(col_int(q, 4), MODEL_TIME_MIN, MODEL_TIME_MAX);
		g->t1[i] = g->t0[i] + clamp(col_int(q, 5), 0, MODEL_TIME_MAX);
		add_role(g, (int32_t)i, role_of(sy, kind, col_int(q, 6)));
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return db_fail(st, "phases", err);
	if (!g->n) {
		*err = xasprintf("%s: no phase %lld", store_path(st), (long long)root_id);
		return -1;
	}
	return 0;
}

/* The map of g's ids, read in rowid order: dense when they nearly are. */
static void scan_map(struct idmap *mp, const struct graph *g)
{
	memset(mp, 0, sizeof(*mp));
	size_t n = g->n;
	if (n && (uint64_t)g->id[n - 1] - (uint64_t)g->id[0] < (uint64_t)n * 4) {
		mp->base = g->id[0];
		mp->range = (size_t)(g->id[n - 1] - g->id[0]) + 1;
		mp->dense = xmalloc(mp->range * sizeof(*mp->dense));
		memset(mp->dense, 0xff, mp->range * sizeof(*mp->dense));
		for (size_t i = 0; i < n; i++)
			mp->dense[g->id[i] - mp->base] = (int32_t)i;
		return;
	}
	idmap_init(mp, 1024);
	for (size_t i = 0; i < n; i++)
		idmap_put(mp, g->id[i], (int32_t)i);
}

/* A large subtree: the recursive query walks the index at random, a scan
 * of the table in rowid order is several times faster.  Kept rows are
 * compacted in place; this needs every parent's id below its children's
 * (ids are reserved when a span opens); 1 when a row breaks that, and the
 * caller walks the tree instead. */
static int load_scan(struct store *st, struct graph *g, int64_t root_id, const struct tracks *t,
		     struct idmap *mp, const struct sync_ids *sy, char **err)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(
		store_db(st),
		"SELECT id, parent_id, kind, coalesce(track_id, 0), start_ns, dur_ns,"
		" name_id FROM phases",
		-1, &q, NULL) != SQLITE_OK)
		return db_fail(st, "phases", err);
	int64_t *pid = NULL;
	uint8_t *rule = NULL; /* 1: excluded, 2: no parent; role_of() << 2 */
	size_t palloc = 0, ralloc = 0;
	g->n = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (g->n >= (size_t)1 << 30)
			break;
		grow(g);
		XGROW(pid, g->n + 1, palloc);
		XGROW(rule, g->n + 1, ralloc);
		size_t i = g->n++;
		g->id[i] = col_int(q, 0);
		pid[i] = col_int(q, 1);
		int kind = col_int32(q, 2);
		int64_t dur = col_int(q, 5);
		rule[i] = (uint8_t)((kind == PHASE_GPU_ANNOTATION ||
				     (kind <= PHASE_STREAM && !dur) || store_is_bookkeeping(kind)) |
				    col_null(q, 1) << 1 | role_of(sy, kind, col_int(q, 6)) << 2);
		g->kind[i] = (uint8_t)(kind > 0 && kind < PHASE_KIND_COUNT ? kind : 0);
		int64_t tid = col_int(q, 3);
		g->track[i] = tid ? track_index(t, tid) : -1;
		g->t0[i] = clamp(col_int(q, 4), MODEL_TIME_MIN, MODEL_TIME_MAX);
		g->t1[i] = g->t0[i] + clamp(dur, 0, MODEL_TIME_MAX);
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		free(pid);
		free(rule);
		return db_fail(st, "phases", err);
	}
	scan_map(mp, g);
	int32_t *nidx = xmalloc((g->n ? g->n : 1) * sizeof(*nidx));
	size_t w = 0;
	int unordered = 0;
	g->root = -1;
	g->nsyncs = g->npcopies = 0;
	for (size_t i = 0; i < g->n && !unordered; i++) {
		int32_t p = -1;
		int in, r = rule[i] & 3;
		if (root_id ? g->id[i] == root_id : (r == 2 && g->kind[i] != PHASE_GPU_ANNOTATION))
			in = 1;
		else if (r)
			in = 0;
		else if ((p = idmap_get(mp, pid[i])) < 0)
			in = 0;
		else if ((size_t)p > i)
			in = 0, unordered = 1;
		else
			in = nidx[p] >= 0;
		nidx[i] = -1;
		if (!in)
			continue;
		if (root_id && g->id[i] == root_id)
			g->root = (int32_t)w, p = -1;
		nidx[i] = (int32_t)w;
		g->id[w] = g->id[i];
		g->kind[w] = g->kind[i];
		g->track[w] = g->track[i];
		g->t0[w] = g->t0[i];
		g->t1[w] = g->t1[i];
		g->parent[w] = p >= 0 ? nidx[p] : -1;
		add_role(g, (int32_t)w, rule[i] >> 2);
		w++;
	}
	free(nidx);
	free(pid);
	free(rule);
	idmap_release(mp);
	if (unordered)
		return 1;
	if (!w) {
		*err = xasprintf("%s: no phase %lld", store_path(st), (long long)root_id);
		return -1;
	}
	g->n = w;
	scan_map(mp, g);
	return 0;
}

/* Rows of the edges table with both ends in the graph, as stored edges from
 * E(src) (or S(src) when the destination began before the source ended) to
 * S(dst).  A small subtree of a large file looks its edges up by
 * destination; a large one reads the table once. */
static int load_edges(struct store *st, struct graph *g, const struct idmap *mp, char **err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q;
	int64_t total = 0;
	if (sqlite3_prepare_v2(db, "SELECT max(rowid) FROM edges", -1, &q, NULL) != SQLITE_OK)
		return db_fail(st, "edges", err);
	if (sqlite3_step(q) == SQLITE_ROW)
		total = col_int(q, 0);
	sqlite3_finalize(q);
	int by_dst = (int64_t)g->n * 8 < total;
	if (sqlite3_prepare_v2(db,
			       by_dst ? "SELECT src, ?1, kind FROM edges WHERE dst = ?1"
				      : "SELECT src, dst, kind FROM edges",
			       -1, &q, NULL) != SQLITE_OK)
		return db_fail(st, "edges", err);
	int32_t *src = NULL;
	uint32_t *dst = NULL;
	uint8_t *kind = NULL;
	size_t ne = 0, asrc = 0, adst = 0, akind = 0;
	int rc = SQLITE_DONE;
	for (size_t i = 0; i < (by_dst ? g->n : 1); i++) {
		if (by_dst) {
			sqlite3_reset(q);
			sqlite3_bind_int64(q, 1, g->id[i]);
		}
		while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
			int32_t a = idmap_get(mp, col_int(q, 0));
			int32_t d = idmap_get(mp, col_int(q, 1));
			int k = col_int32(q, 2);
			if (a < 0 || d < 0 || a == d)
				continue;
			uint32_t from_end;
			if (g->t1[a] <= g->t0[d])
				from_end = 1;
			else if (g->t0[a] <= g->t0[d])
				from_end = 0;
			else
				continue; /* back in time: it explains nothing */
			if (ne >= UINT32_MAX - 1)
				break;
			XGROW(src, ne + 1, asrc);
			XGROW(dst, ne + 1, adst);
			XGROW(kind, ne + 1, akind);
			src[ne] = a;
			dst[ne] = (uint32_t)d << 1 | from_end;
			kind[ne++] = (uint8_t)(k > 0 && k <= EDGE_KIND_MAX ? k : 0);
		}
		if (rc != SQLITE_DONE)
			break;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		free(src);
		free(dst);
		free(kind);
		return db_fail(st, "edges", err);
	}
	/* counting sort by source */
	g->eoff = xcalloc(g->n + 1, sizeof(*g->eoff));
	for (size_t e = 0; e < ne; e++)
		g->eoff[src[e] + 1]++;
	for (size_t i = 0; i < g->n; i++)
		g->eoff[i + 1] += g->eoff[i];
	g->edst = xmalloc((ne ? ne : 1) * sizeof(*g->edst));
	g->ekind = xmalloc((ne ? ne : 1) * sizeof(*g->ekind));
	uint32_t *fill = xmalloc((g->n + 1) * sizeof(*fill));
	memcpy(fill, g->eoff, (g->n + 1) * sizeof(*fill));
	for (size_t e = 0; e < ne; e++) {
		uint32_t at = fill[src[e]]++;
		g->edst[at] = dst[e];
		g->ekind[at] = kind[e];
	}
	free(fill);
	free(src);
	free(dst);
	free(kind);
	return 0;
}

/* ---- structure ---- */

/* A rank, process, thread or stream node: its window is its children's. */
static int container(const struct graph *g, int32_t p)
{
	int k = g->kind[p];
	return k == PHASE_RANK || k == PHASE_PROCESS || k == PHASE_THREAD || k == PHASE_STREAM;
}

/* What each node is to the path, by its level (level.h) and so the same
 * whatever importer made it.  The workflow and a container of tracks are
 * structure.  A part of the workflow (a step or span at any depth, a Spark
 * job or stage) is structure when it holds work beneath it, its time its
 * children's and its own gaps, even when its only children are parts; a
 * leaf part, whose time nothing traced beneath it explains, is work and
 * has its what-if.  Anything else is work on its track, structure off any
 * track.  An empty container holds nothing.  Children come after their
 * parent: backwards, a node has seen all its children. */
static void mark_structure(struct graph *g, const struct tracks *t)
{
	size_t n = g->n;
	uint8_t *holds = xcalloc(n ? n : 1, sizeof(*holds));
	g->structure = xmalloc((n ? n : 1) * sizeof(*g->structure));
	for (size_t i = n; i-- > 0;) {
		int32_t p = (int32_t)i, tr = g->track[p];
		int level = level_of(g->kind[p], tr >= 0 && t->thread[tr]);
		if (container(g, p) || level == LEVEL_WORKFLOW)
			g->structure[p] = 1;
		else if (level == LEVEL_PART)
			g->structure[p] = holds[p];
		else
			g->structure[p] = tr < 0;
		if (g->parent[p] >= 0 && (!container(g, p) || holds[p]))
			holds[g->parent[p]] = 1;
	}
	free(holds);
}

static int structural(const struct graph *g, int32_t p)
{
	return g->structure[p];
}

/* idx[0..n) (load indexes) ordered by key[idx] (stable: ties keep their
 * order), by an LSD radix sort on 16-bit digits; keys are >= 0.  Returns
 * the sorted array (idx is reused or freed). */
static int32_t *sort_by_key(const int64_t *key, int32_t *idx, size_t n)
{
	int32_t *a = idx, *tmp = xmalloc((n ? n : 1) * sizeof(*tmp));
	size_t *cnt = xmalloc(65536 * sizeof(*cnt));
	uint64_t max = 0;
	for (size_t i = 0; i < n; i++)
		if ((uint64_t)key[a[i]] > max)
			max = (uint64_t)key[a[i]];
	for (int shift = 0; shift < 64 && (max >> shift); shift += 16) {
		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (size_t i = 0; i < n; i++)
			cnt[((uint64_t)key[a[i]] >> shift) & 0xffff]++;
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[((uint64_t)key[a[i]] >> shift) & 0xffff]++] = a[i];
		int32_t *s = a;
		a = tmp;
		tmp = s;
	}
	free(tmp);
	free(cnt);
	return a;
}

/* Load indexes in order of start time. */
static int32_t *by_start(const struct graph *g)
{
	int32_t *a = xmalloc((g->n ? g->n : 1) * sizeof(*a));
	for (size_t i = 0; i < g->n; i++)
		a[i] = (int32_t)i;
	return sort_by_key(g->t0, a, g->n);
}

/* Flags, child lists and the order edges, from the loaded arrays. */
static void link(struct graph *g, const struct tracks *t)
{
	size_t n = g->n;
	int64_t origin = INT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (g->t0[i] < origin)
			origin = g->t0[i];
	g->origin = origin;
	g->flags = xmalloc(n * sizeof(*g->flags));
	g->first_child = xmalloc(n * sizeof(*g->first_child));
	g->next_sib = xmalloc(n * sizeof(*g->next_sib));
	g->next_order = xmalloc(n * sizeof(*g->next_order));
	g->up = xmalloc(n * sizeof(*g->up));
	for (size_t i = 0; i < n; i++) {
		g->t0[i] -= origin;
		g->t1[i] -= origin;
		g->first_child[i] = g->next_order[i] = g->up[i] = -1;
		int k = g->kind[i];
		g->flags[i] =
		    F_LEAF |
		    (k == PHASE_KERNEL || k == PHASE_MEMCPY || k == PHASE_MEMSET ? F_DEVICE : 0);
	}
	/* children come after their parent: backwards, a node is complete
	 * before its parent sees it */
	for (size_t i = n; i-- > 0;) {
		int32_t p = g->parent[i], c = (int32_t)i;
		g->next_sib[i] = -1;
		if ((g->flags[c] & F_LEAF) && container(g, c) && c != g->root) {
			g->flags[c] = F_DROP;
			continue;
		}
		if (p < 0)
			continue;
		g->next_sib[i] = g->first_child[p];
		g->first_child[p] = c;
		if (g->t0[p] > g->t0[c])
			continue;
		g->flags[c] |= F_NEST;
		if (g->t1[c] <= g->t1[p] &&
		    (structural(g, p) || g->track[c] == g->track[p] || container(g, c))) {
			g->up[c] = p;
			g->flags[c] |= F_INPARENT;
		} else if ((g->flags[c] & F_DEVICE) && g->track[c] >= 0) {
			/* device work ends inside its stream's node, not its launch */
			int32_t s = t->node[g->track[c]];
			if (s >= 0 && s != c && !(g->flags[s] & F_DROP) && g->t0[s] <= g->t0[c] &&
			    g->t1[c] <= g->t1[s])
				g->up[c] = s;
		}
		if (g->up[c] >= 0) {
			g->flags[c] |= F_CONTAINED;
			g->flags[g->up[c]] &= (uint8_t)~F_LEAF;
		}
	}
	/* order: per serial track, consecutive device ops; per parent,
	 * consecutive children on its track, and among its children off any
	 * serial track (steps, spans, ranks) each one that began after all
	 * before it had ended, after the one that ended last */
	int32_t *seq = by_start(g);
	int32_t *last_child = xmalloc(n * sizeof(*last_child));
	int32_t *last_free = xmalloc(n * sizeof(*last_free));
	int32_t *last_dev = xmalloc((t->n ? t->n : 1) * sizeof(*last_dev));
	memset(last_child, 0xff, n * sizeof(*last_child));
	memset(last_free, 0xff, n * sizeof(*last_free));
	memset(last_dev, 0xff, (t->n ? t->n : 1) * sizeof(*last_dev));
	for (size_t j = 0; j < n; j++) {
		int32_t q = seq[j], tr = g->track[q], prev;
		if (g->flags[q] & F_DROP)
			continue;
		if (tr < 0 || !t->serial[tr]) {
			int32_t p = g->parent[q];
			if (p < 0 || (g->flags[q] & F_DEVICE))
				continue;
			prev = last_free[p];
			if (prev < 0 || g->t1[q] >= g->t1[prev])
				last_free[p] = q;
		} else if (g->flags[q] & F_DEVICE) {
			prev = last_dev[tr];
			last_dev[tr] = q;
		} else {
			int32_t p = g->parent[q];
			if (p < 0)
				continue;
			prev = last_child[p];
			last_child[p] = q;
			if (prev >= 0 && g->track[prev] != tr)
				prev = -1;
		}
		if (prev < 0 || g->t1[prev] > g->t0[q])
			continue;
		g->next_order[prev] = q;
		if (!(g->flags[q] & F_DEVICE) && (g->flags[q] & F_INPARENT) &&
		    (g->flags[prev] & F_INPARENT))
			g->flags[q] |= F_SIB;
	}
	free(last_dev);
	free(last_free);
	free(last_child);
	free(seq);
}

/* A copy from or to pageable memory holds its call (cudaMemcpyAsync) until
 * it is done: the host stages the data through a pinned buffer as the copy
 * runs.  A call that returns after its copy ends is a synchronising call
 * (link_syncs); one that returns while the copy's last chunk is still in
 * flight gets S(copy) -> E(call), the copy's work, so that a faster copy
 * returns the call sooner. */
static void link_copies(struct graph *g)
{
	for (size_t i = 0; i < g->npcopies; i++) {
		int32_t k = g->pcopies[i], p = g->parent[k];
		if (p < 0 || g->kind[p] != PHASE_RUNTIME || g->track[p] < 0 ||
		    ((g->flags[k] | g->flags[p]) & F_DROP) || g->t0[k] < g->t0[p] ||
		    g->t0[k] > g->t1[p])
			continue;
		if (g->t1[k] <= g->t1[p]) {
			add_sync(g, p);
			continue;
		}
		if (!g->copy_call) {
			g->copy_call = xmalloc(g->n * sizeof(*g->copy_call));
			memset(g->copy_call, 0xff, g->n * sizeof(*g->copy_call));
		}
		g->copy_call[k] = p;
	}
}

/* Sync edges: a synchronising call returns only once the device work it
 * waits for is done, so its end waits on the device op of its own source
 * (trace file) that ended last within the call's window: E(k) -> E(s).
 * Which stream or event it named is not in the trace, so the last op to
 * end on any of the source's streams stands for what it waited on. */
static void link_syncs(struct graph *g, const struct tracks *t)
{
	size_t nd = 0, m = 0;
	if (!g->nsyncs)
		return;
	int32_t *dev = xmalloc(g->n * sizeof(*dev));
	for (size_t i = 0; i < g->n; i++)
		if ((g->flags[i] & (F_DEVICE | F_DROP)) == F_DEVICE && g->track[i] >= 0)
			dev[nd++] = (int32_t)i;
	if (!nd) {
		free(dev);
		return;
	}
	dev = sort_by_key(g->t1, dev, nd);
	g->sync_head = xmalloc(g->n * sizeof(*g->sync_head));
	memset(g->sync_head, 0xff, g->n * sizeof(*g->sync_head));
	g->sync_next = xmalloc(g->nsyncs * sizeof(*g->sync_next));
	g->sync_dst = xmalloc(g->nsyncs * sizeof(*g->sync_dst));
	for (size_t i = 0; i < g->nsyncs; i++) {
		int32_t sy = g->syncs[i];
		if (g->track[sy] < 0 || (g->flags[sy] & F_DROP))
			continue;
		int64_t src = t->source[g->track[sy]];
		/* the last op ending by the call's end; back while inside its window */
		size_t lo;
		PARTITION_POINT(lo, nd, k, g->t1[dev[k]] <= g->t1[sy]);
		for (size_t j = lo, tries = 0; j-- > 0 && tries < 4096; tries++) {
			int32_t k = dev[j];
			if (g->t1[k] < g->t0[sy])
				break;
			if (t->source[g->track[k]] != src)
				continue;
			g->sync_dst[m] = sy;
			g->sync_next[m] = g->sync_head[k];
			g->sync_head[k] = (int32_t)m++;
			break;
		}
	}
	free(dev);
}

/* ---- passes ---- */

enum { PASS_COUNT, PASS_KAHN, PASS_WHATIF };

/* Whose time the binding edge of v is: the phase that ran (its work, or
 * its own time before, between or after its children); -1 for a wait. */
static int32_t holder(const struct graph *g, int32_t v)
{
	int32_t p = v >> 1;
	switch (g->bk[v]) {
	case BK_WORK:
	case BK_NEST_END:
		return p;
	case BK_NEST_START:
		return g->parent[p];
	case BK_ORDER:
		return (g->flags[p] & F_SIB) ? g->parent[p] : -1;
	case BK_COPY:
		return g->b[v] >> 1;
	default:
		return -1;
	}
}

/* holder, except a workflow: its own time is when nothing recorded under
 * it ran (before, between or after its steps), a gap on the path rather
 * than work a what-if could shorten. */
static int32_t owner(const struct graph *g, int32_t v)
{
	int32_t o = holder(g, v);
	return o >= 0 && g->kind[o] == PHASE_WORKFLOW ? -1 : o;
}

/* The binding weight of v, as the what-if scales it. */
static int64_t weight(const struct graph *g, int32_t v)
{
	int64_t w = ev_t(g, v) - ev_t(g, g->b[v]);
	int32_t o = owner(g, v);
	if (o < 0 || !(g->flags[o] & F_UNDER))
		return w;
	double s = (double)w / g->k;
	return s >= (double)T_LIMIT ? T_LIMIT : (int64_t)llround(s);
}

static void visit(struct graph *g, int pass, int32_t u, int32_t v, int bk)
{
	switch (pass) {
	case PASS_COUNT:
		g->indeg[v]++;
		g->nedges++;
		break;
	case PASS_KAHN:
		if (g->state[v])
			return; /* forced out of a cycle earlier: this edge is ignored */
		if (g->b[v] < 0 || ev_t(g, u) > ev_t(g, g->b[v])) {
			g->b[v] = u;
			g->bk[v] = (uint8_t)bk;
		}
		if (--g->indeg[v] == 0) {
			g->state[v] = 1;
			g->order[g->qtail++] = v;
		}
		break;
	case PASS_WHATIF: {
		if (g->state[v])
			return;
		int64_t w = g->b[v] == u && g->bk[v] == bk ? weight(g, v) : 0;
		int64_t c = g->T[u] > T_LIMIT - w ? T_LIMIT : g->T[u] + w;
		if (c > g->T[v]) {
			g->T[v] = c;
			g->nb[v] = u;
			g->nbk[v] = (uint8_t)bk;
		}
		break;
	}
	}
}

/* Calls visit for every edge out of event u. */
static void successors(struct graph *g, int pass, int32_t u)
{
	int32_t p = u >> 1;
	if (g->flags[p] & F_DROP)
		return;
	if (!(u & 1)) {
		if (g->flags[p] & F_LEAF)
			visit(g, pass, u, u + 1, BK_WORK);
		if (g->copy_call && g->copy_call[p] >= 0)
			visit(g, pass, u, 2 * g->copy_call[p] + 1, BK_COPY);
		for (int32_t c = g->first_child[p]; c >= 0; c = g->next_sib[c])
			if (g->flags[c] & F_NEST)
				visit(g, pass, u, 2 * c,
				      (g->flags[c] & F_INPARENT) ? BK_NEST_START : BK_LAUNCH);
	} else {
		if (g->flags[p] & F_CONTAINED)
			visit(g, pass, u, 2 * g->up[p] + 1, BK_NEST_END);
		if (g->next_order[p] >= 0)
			visit(g, pass, u, 2 * g->next_order[p], BK_ORDER);
		if (g->sync_head)
			for (int32_t j = g->sync_head[p]; j >= 0; j = g->sync_next[j])
				visit(g, pass, u, 2 * g->sync_dst[j] + 1, BK_SYNC);
	}
	for (uint32_t e = g->eoff[p]; e < g->eoff[p + 1]; e++)
		if ((g->edst[e] & 1) == (uint32_t)(u & 1) && !(g->flags[g->edst[e] >> 1] & F_DROP))
			visit(g, pass, u, 2 * (int32_t)(g->edst[e] >> 1), BK_EDGE + g->ekind[e]);
}

/* Kahn's algorithm over the 2n events: the topological order and each
 * event's binding predecessor (the one that happened last).  Every edge
 * goes forward in time or stays at one instant, so only events at one
 * instant can form a cycle (contradictory flows); should the queue run dry
 * with events left, the first of them (by index) is taken, and the edges
 * into it from events not yet taken are ignored. */
static void kahn(struct graph *g)
{
	size_t ne = g->n * 2;
	g->indeg = xcalloc(ne, sizeof(*g->indeg));
	g->state = xcalloc(ne, sizeof(*g->state));
	g->order = xmalloc(ne * sizeof(*g->order));
	g->b = xmalloc(ne * sizeof(*g->b));
	g->bk = xcalloc(ne, sizeof(*g->bk));
	memset(g->b, 0xff, ne * sizeof(*g->b));
	for (size_t u = 0; u < ne; u++)
		successors(g, PASS_COUNT, (int32_t)u);
	g->qtail = 0;
	for (size_t v = 0; v < ne; v++)
		if (!g->indeg[v]) {
			g->state[v] = 1;
			g->order[g->qtail++] = (int32_t)v;
		}
	size_t head = 0, cursor = 0;
	while (head < ne) {
		if (head == g->qtail) {
			while (g->state[cursor])
				cursor++;
			g->state[cursor] = 1;
			g->order[g->qtail++] = (int32_t)cursor;
		}
		successors(g, PASS_KAHN, g->order[head++]);
	}
	free(g->indeg);
	g->indeg = NULL;
	free(g->state);
	g->state = NULL;
}

static void graph_release(struct graph *g)
{
	free(g->id);
	free(g->t0);
	free(g->t1);
	free(g->parent);
	free(g->track);
	free(g->track_id);
	free(g->first_child);
	free(g->next_sib);
	free(g->next_order);
	free(g->up);
	free(g->kind);
	free(g->flags);
	free(g->structure);
	free(g->eoff);
	free(g->edst);
	free(g->ekind);
	free(g->b);
	free(g->bk);
	free(g->order);
	free(g->indeg);
	free(g->state);
	free(g->T);
	free(g->nb);
	free(g->nbk);
	free(g->syncs);
	free(g->pcopies);
	free(g->copy_call);
	free(g->sync_head);
	free(g->sync_next);
	free(g->sync_dst);
	memset(g, 0, sizeof(*g));
}

static int build(struct store *st, int64_t root_id, struct graph *g, char **err)
{
	struct tracks t = {0};
	struct idmap mp = {0};
	memset(g, 0, sizeof(*g));
	int rc = -1;
	if (load_tracks(st, &t, err) < 0)
		goto out;
	/* walk the tree; past SCAN_ROWS, scan the table instead */
	struct sync_ids sy;
	if (load_sync_ids(st, &sy, err) < 0)
		goto out;
	int r = load_phases(st, g, root_id, &t, &mp, &sy, SCAN_ROWS, err);
	if (r == 1)
		r = load_scan(st, g, root_id, &t, &mp, &sy, err);
	if (r == 1)
		r = load_phases(st, g, root_id, &t, &mp, &sy, SIZE_MAX, err);
	if (r < 0) {
		rc = r;
		goto out;
	}
	if (load_edges(st, g, &mp, err) < 0)
		goto out;
	t.node = xmalloc((t.n ? t.n : 1) * sizeof(*t.node));
	for (size_t i = 0; i < t.n; i++)
		t.node[i] = t.phase_id[i] ? idmap_get(&mp, t.phase_id[i]) : -1;
	idmap_release(&mp);
	mark_structure(g, &t);
	link(g, &t);
	link_copies(g);
	link_syncs(g, &t);
	kahn(g);
	g->track_id = t.id;
	t.id = NULL;
	rc = 0;
out:
	idmap_release(&mp);
	free(t.id);
	free(t.phase_id);
	free(t.node);
	free(t.serial);
	free(t.thread);
	free(t.source);
	if (rc < 0)
		graph_release(g);
	return rc;
}

/* The event where the path ends: the latest end (the first such). */
static int32_t last_end(const struct graph *g)
{
	int32_t best = 1;
	for (size_t p = 1; p < g->n; p++)
		if (g->t1[p] > g->t1[best >> 1] && !(g->flags[p] & F_DROP))
			best = (int32_t)(2 * p + 1);
	return best;
}

/* ---- the path ---- */

static void add_step(struct critpath *c, size_t *alloc, int64_t phase, int what, int edge_kind,
		     int64_t start, int64_t dur)
{
	if (dur <= 0)
		return;
	if (c->nsteps) {
		struct critpath_step *l = &c->steps[c->nsteps - 1];
		/* built backwards: l is the stretch after this one */
		if (l->phase_id == phase && l->what == what && l->edge_kind == edge_kind &&
		    start + dur == l->start_ns) {
			l->start_ns = start;
			l->dur_ns += dur;
			return;
		}
	}
	XGROW(c->steps, c->nsteps + 1, *alloc);
	c->steps[c->nsteps++] = (struct critpath_step){.phase_id = phase,
						       .start_ns = start,
						       .dur_ns = dur,
						       .what = what,
						       .edge_kind = edge_kind};
}

static int cmp_phase_id(const void *a, const void *b)
{
	const struct critpath_phase *x = a, *y = b;
	return x->phase_id < y->phase_id ? -1 : x->phase_id > y->phase_id;
}

static int cmp_on_path(const void *a, const void *b)
{
	const struct critpath_phase *x = a, *y = b;
	if (x->on_path_ns != y->on_path_ns)
		return x->on_path_ns > y->on_path_ns ? -1 : 1;
	return cmp_phase_id(a, b);
}

static void fill_path(const struct graph *g, struct critpath *c)
{
	size_t alloc = 0;
	int32_t v = last_end(g);
	c->start_ns = g->origin;
	c->makespan_ns = ev_t(g, v);
	for (;;) {
		int32_t u = g->b[v], p = v >> 1;
		int64_t from = u >= 0 ? ev_t(g, u) : 0, len = ev_t(g, v) - from;
		int bk = g->bk[v], what, ek = 0;
		int32_t o = u >= 0 ? holder(g, v) : -1;
		if (o >= 0)
			what = g->kind[o] == PHASE_WORKFLOW ? CRITPATH_GAP : CRITPATH_RUN, p = o;
		else if (u < 0)
			what = CRITPATH_RELEASE;
		else if (bk == BK_LAUNCH || bk == BK_NEST_START)
			what = CRITPATH_LAUNCH;
		else if (bk == BK_ORDER)
			what = CRITPATH_QUEUE;
		else if (bk == BK_SYNC)
			what = CRITPATH_SYNC;
		else
			what = CRITPATH_EDGE, ek = bk - BK_EDGE;
		add_step(c, &alloc, g->id[p], what, ek, g->origin + from, len);
		if (what == CRITPATH_RUN)
			c->run_ns += len;
		else
			c->wait_ns += len;
		if (u < 0)
			break;
		v = u;
	}
	for (size_t i = 0, j = c->nsteps ? c->nsteps - 1 : 0; i < j; i++, j--) {
		struct critpath_step s = c->steps[i];
		c->steps[i] = c->steps[j];
		c->steps[j] = s;
	}
	/* running time per phase */
	size_t np = 0;
	c->phases = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(*c->phases));
	for (size_t i = 0; i < c->nsteps; i++)
		if (c->steps[i].what == CRITPATH_RUN)
			c->phases[np++] = (struct critpath_phase){c->steps[i].phase_id,
								  c->steps[i].dur_ns, -1, 0};
	qsort(c->phases, np, sizeof(*c->phases), cmp_phase_id);
	size_t w = 0;
	for (size_t i = 0; i < np; i++) {
		if (w && c->phases[w - 1].phase_id == c->phases[i].phase_id)
			c->phases[w - 1].on_path_ns += c->phases[i].on_path_ns;
		else
			c->phases[w++] = c->phases[i];
	}
	c->nphases = w;
	for (size_t i = 0; i < c->nsteps; i++) {
		struct critpath_phase key = {c->steps[i].phase_id, 0, -1, 0};
		struct critpath_phase *f =
		    bsearch(&key, c->phases, c->nphases, sizeof(key), cmp_phase_id);
		c->steps[i].on_path_ns = f && c->steps[i].what == CRITPATH_RUN ? f->on_path_ns : 0;
	}
	qsort(c->phases, c->nphases, sizeof(*c->phases), cmp_on_path);
}

/* What the observed path loses were the phases under the what-if (flagged
 * F_UNDER) k times faster and the path to stay the same: their running
 * time on it (*shrink), and what that time loses (the return). */
static int64_t path_loss(const struct graph *g, int64_t *shrink)
{
	int64_t loss = 0;
	*shrink = 0;
	for (int32_t v = last_end(g), u; (u = g->b[v]) >= 0; v = u) {
		int32_t o = owner(g, v);
		if (o < 0 || !(g->flags[o] & F_UNDER))
			continue;
		*shrink += ev_t(g, v) - ev_t(g, u);
		loss += ev_t(g, v) - ev_t(g, u) - weight(g, v);
	}
	return loss;
}

/* Where the replayed path leaves the observed one, walking back from its
 * end: the event it now waits on there, taken down through the ends of
 * structural nodes to the work that ended last; -1 when it never leaves. */
static int32_t replay_bound(const struct graph *g, int32_t end)
{
	int32_t v = end, u = -1;
	if (end == last_end(g))
		for (; (u = g->nb[v]) >= 0 && u == g->b[v] && g->nbk[v] == g->bk[v]; v = u)
			;
	else
		u = end;
	if (u < 0)
		return -1;
	while ((u & 1) && structural(g, u >> 1) && g->nb[u] >= 0 && g->nbk[u] == BK_NEST_END)
		u = g->nb[u];
	return u;
}

/* The what-if: the graph replayed in its topological order with the phase
 * at index x and everything under it k times faster; the graph is left as
 * it was. */
static void replay(struct graph *g, size_t x, double k, struct critpath_whatif *w)
{
	for (size_t i = 0; i < g->n; i++)
		g->flags[i] &= (uint8_t)~F_UNDER;
	/* breadth-first load order: a parent is flagged before its children */
	for (size_t i = 0; i < g->n; i++)
		if (i == x || (g->parent[i] >= 0 && (g->flags[g->parent[i]] & F_UNDER)))
			g->flags[i] |= F_UNDER;
	g->k = k;
	size_t ne = g->n * 2;
	g->T = xmalloc(ne * sizeof(*g->T));
	g->nb = xmalloc(ne * sizeof(*g->nb));
	g->nbk = xcalloc(ne, sizeof(*g->nbk));
	g->state = xcalloc(ne, sizeof(*g->state));
	for (size_t v = 0; v < ne; v++) {
		g->T[v] = INT64_MIN;
		g->nb[v] = -1;
	}
	int64_t end = 0;
	int32_t at = last_end(g);
	for (size_t i = 0; i < ne; i++) {
		int32_t u = g->order[i];
		if (g->b[u] < 0)
			g->T[u] = ev_t(g, u); /* released: stays where it was */
		g->state[u] = 1;
		successors(g, PASS_WHATIF, u);
	}
	/* the new end: the latest end, the first such as last_end takes */
	for (size_t p = 0; p < g->n; p++)
		if (!(g->flags[p] & F_DROP) && g->T[2 * p + 1] > end) {
			end = g->T[2 * p + 1];
			at = (int32_t)(2 * p + 1);
		}
	w->observed_ns = ev_t(g, last_end(g));
	w->makespan_ns = end;
	w->loss_ns = path_loss(g, &w->shrink_ns);
	/* short by more than 1% of what it would save: the path moved */
	int64_t short_ns = w->loss_ns - (w->observed_ns - end);
	int32_t b = short_ns > 0 && short_ns > w->loss_ns / 100 ? replay_bound(g, at) : -1;
	w->bound_id = b >= 0 ? g->id[b >> 1] : 0;
	w->bound_track_id = b >= 0 && g->track[b >> 1] >= 0 ? g->track_id[g->track[b >> 1]] : 0;
	free(g->T);
	free(g->nb);
	free(g->nbk);
	free(g->state);
	g->T = NULL;
	g->nb = NULL;
	g->nbk = NULL;
	g->state = NULL;
}

/* The load index of phase id; g->n when it is not in the graph. */
static size_t index_of(const struct graph *g, int64_t id)
{
	size_t x = 0;
	while (x < g->n && g->id[x] != id)
		x++;
	return x;
}

int critpath_analyze(struct store *st, int64_t root_id, double k, size_t n, struct critpath *out,
		     char **err)
{
	struct graph g;
	memset(out, 0, sizeof(*out));
	if (n && !(k > 0)) {
		*err = xasprintf("what-if: the speed-up must be above 0, not %g", k);
		return -1;
	}
	int rc = build(st, root_id, &g, err);
	if (rc < 0)
		return rc;
	out->root_id = root_id;
	out->nphases_graph = (int64_t)g.n;
	out->nedges_graph = g.nedges;
	fill_path(&g, out);
	for (size_t i = 0; i < out->nphases; i++)
		out->phases[i].whatif_ns = -1;
	/* a replay is a pass over the graph with 2 events' state per phase */
	size_t replays = n > 1 && g.n > CRITPATH_WHATIF_ALL_MAX ? 1 : n;
	for (size_t i = 0, done = 0; i < out->nphases && i < n && done < replays; i++) {
		size_t x = index_of(&g, out->phases[i].phase_id);
		if (x == g.n || structural(&g, (int32_t)x))
			continue;
		struct critpath_whatif w;
		replay(&g, x, k, &w);
		out->phases[i].whatif_ns = w.makespan_ns;
		out->phases[i].bound_id = w.bound_id;
		done++;
	}
	graph_release(&g);
	return 0;
}

int critpath_compute(struct store *st, int64_t root_id, struct critpath *out, char **err)
{
	return critpath_analyze(st, root_id, 1, 0, out, err);
}

int critpath_whatif(struct store *st, int64_t root_id, int64_t phase_id, double k,
		    struct critpath_whatif *out, char **err)
{
	if (!(k > 0)) {
		*err = xasprintf("what-if: the speed-up must be above 0, not %g", k);
		return -1;
	}
	struct graph g;
	int rc = build(st, root_id, &g, err);
	if (rc < 0)
		return rc;
	size_t x = index_of(&g, phase_id);
	if (x == g.n) {
		*err = xasprintf("what-if: phase %lld is not under %lld", (long long)phase_id,
				 (long long)root_id);
		graph_release(&g);
		return -1;
	}
	replay(&g, x, k, out);
	graph_release(&g);
	return 0;
}

void critpath_release(struct critpath *c)
{
	free(c->steps);
	free(c->phases);
	memset(c, 0, sizeof(*c));
}
