/*
 * The causes of GPU idle gaps (see idle.h for the rule).  The host activity
 * of a source is read in one scan of its ids (or, where a file's ids do not
 * follow its tree, thread by thread through the parent index), and kept as
 * sets of spans (model/util/spans.h): per
 * launching thread its collectives, data loading, synchronising calls and
 * launch starts; of the other threads only their collectives.  Memory
 * follows the source's launches and the phases so classified, not its
 * whole host side.
 */
#include <stdlib.h>
#include <string.h>

#include "model/analysis/devcall.h"
#include "model/analysis/idle.h"
#include "model/store/col.h"
#include "model/store/namememo.h"
#include "model/util/nstime.h"
#include "model/util/spans.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"
#include "model/util/search.h"

/* What a host phase's name says (bits). */
enum {
	NAME_COMM = 1,	      /* a collective */
	NAME_INPUT = 2,	      /* data loading, whatever the phase */
	NAME_INPUT_ANNOT = 4, /* data loading when a user annotation */
	NAME_SYNC_CALL = 8,   /* a runtime call that synchronises */
	NAME_SYNC_OP = 16,    /* an operator that synchronises */
};

/* A growing set of spans, normalized once loaded. */
struct set {
	struct span *s;
	size_t n, alloc;
};

struct thread {
	int64_t track;
	int launches; /* it launched device work */
	struct set comm, input, sync, ops;
	int64_t *starts; /* its launching calls' starts, sorted */
	size_t nstarts, salloc;
};

struct idle_host {
	struct thread *t; /* by track id */
	size_t n;
};

static const char *const cause_names[IDLE_NCAUSES] = {"launch", "sync", "communication",
						      "input",	"host", "device"};

const char *idle_cause_name(int cause)
{
	return cause >= 0 && cause < IDLE_NCAUSES ? cause_names[cause] : "?";
}

int idle_cause_of(const char *s)
{
	for (int c = 0; c < IDLE_NCAUSES; c++)
		if (s && !strcmp(s, cause_names[c]))
			return c;
	return -1;
}

static int name_bits(const char *s)
{
	static const char *const comm_prefix[] = {
	    "c10d::", "gloo:", "nccl:", "mpi:", "ucc:", "record_param_comms", "ProcessGroup"};
	static const char *const comm_part[] = {"all2all", "alltoall", "all_to_all"};
	static const char *const input_part[] = {"batch", "fetch", "dataload", "data_load",
						 "load_data"};
	int b = 0;
	for (size_t i = 0; i < sizeof(comm_prefix) / sizeof(*comm_prefix); i++)
		if (!strncmp(s, comm_prefix[i], strlen(comm_prefix[i])))
			b |= NAME_COMM;
	for (size_t i = 0; i < sizeof(comm_part) / sizeof(*comm_part); i++)
		if (strcasestr(s, comm_part[i]))
			b |= NAME_COMM;
	if (strcasestr(s, "dataloader"))
		b |= NAME_INPUT;
	for (size_t i = 0; i < sizeof(input_part) / sizeof(*input_part); i++)
		if (strcasestr(s, input_part[i]))
			b |= NAME_INPUT_ANNOT;
	if (devcall_syncs(s))
		b |= NAME_SYNC_CALL;
	if (!strcmp(s, "aten::item") || !strcmp(s, "aten::_local_scalar_dense"))
		b |= NAME_SYNC_OP;
	return b;
}

static void set_add(struct set *x, int64_t start, int64_t end)
{
	XGROW(x->s, x->n + 1, x->alloc);
	x->s[x->n++] = (struct span){start, end};
}

static void set_normalize(struct set *x)
{
	x->n = spans_normalize(x->s, x->n);
}

static void set_release(struct set *x)
{
	free(x->s);
	memset(x, 0, sizeof(*x));
}

static int by_track(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	return (x->track > y->track) - (x->track < y->track);
}

static int by_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static struct thread *find(const struct idle_host *h, int64_t track)
{
	struct thread key = {.track = track};
	return h->n ? bsearch(&key, h->t, h->n, sizeof(key), by_track) : NULL;
}

/* The launching threads and what their launches say, sorted by track. */
static void add_launches(struct idle_host *h, const struct idle_launch *l, size_t n)
{
	int64_t *tr = xmalloc((n ? n : 1) * sizeof(*tr));
	size_t nt = 0;
	for (size_t i = 0; i < n; i++)
		if (l[i].track)
			tr[nt++] = l[i].track;
	if (nt)
		qsort(tr, nt, sizeof(*tr), by_int64);
	h->t = xcalloc(nt ? nt : 1, sizeof(*h->t));
	for (size_t i = 0; i < nt; i++)
		if (!i || tr[i] != tr[i - 1])
			h->t[h->n++] = (struct thread){.track = tr[i], .launches = 1};
	free(tr);
	for (size_t i = 0; i < n; i++) {
		struct thread *t = l[i].track ? find(h, l[i].track) : NULL;
		if (!t)
			continue;
		XGROW(t->starts, t->nstarts + 1, t->salloc);
		t->starts[t->nstarts++] = l[i].start;
		if (l[i].copy & DEVCALL_HTOD)
			set_add(&t->input, l[i].start, l[i].end);
		if ((l[i].copy & DEVCALL_DTOH) && (l[i].copy & DEVCALL_PAGEABLE))
			set_add(&t->sync, l[i].start, l[i].end);
	}
}

/* One row of a thread's walk: what the phase is for the causes. */
static void add_phase(struct thread *t, struct set *comm, int kind, int bits, int in_op,
		      int64_t start, int64_t end)
{
	if (bits & NAME_COMM)
		set_add(t->launches ? &t->comm : comm, start, end);
	if (!t->launches)
		return;
	if ((bits & NAME_INPUT) || ((bits & NAME_INPUT_ANNOT) && kind == PHASE_ANNOTATION))
		set_add(&t->input, start, end);
	if (((bits & NAME_SYNC_CALL) && kind == PHASE_RUNTIME) ||
	    ((bits & NAME_SYNC_OP) && kind == PHASE_OPERATOR))
		set_add(&t->sync, start, end);
	if (!in_op && (kind == PHASE_OPERATOR || kind == PHASE_RUNTIME))
		set_add(&t->ops, start, end);
}

/* A thread node of the source and the thread its phases count for. */
struct root {
	int64_t node, track, spans;
	struct thread *t;
};

static int by_node(const void *a, const void *b)
{
	const struct root *x = a, *y = b;
	return (x->node > y->node) - (x->node < y->node);
}

/* A row of a walk, with what its place in the tree says. */
static void walk_row(struct namememo *names, sqlite3_stmt *nameq, struct thread *t,
		     struct set *others, int kind, int64_t name_id, int in_op, int64_t start,
		     int64_t dur)
{
	int bits = namememo_get(names, nameq, name_id, name_bits);
	if (bits || kind == PHASE_OPERATOR || kind == PHASE_RUNTIME)
		add_phase(t, others, kind, bits, in_op, start, ns_end(start, dur));
}

static int device_kind(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET ||
	       kind == PHASE_GPU_ANNOTATION;
}

/* Each thread node's subtree through the parent index (walk_range's
 * fallback): host phases, not beneath device work or a runtime call. */
static int walk_tree(sqlite3 *db, const struct root *r, size_t nr, struct set *others,
		     struct namememo *names, sqlite3_stmt *nameq)
{
	static const char walk_sql[] =
	    "WITH RECURSIVE sub(id, kind, name_id, start_ns, dur_ns, in_op) AS ("
	    " SELECT id, kind, name_id, start_ns, dur_ns, 0 FROM phases"
	    "  WHERE parent_id = ?1 AND kind NOT IN (?2, ?3, ?4, ?5)"
	    " UNION ALL SELECT p.id, p.kind, p.name_id, p.start_ns, p.dur_ns,"
	    "  sub.in_op OR sub.kind IN (?6, ?7) FROM sub JOIN phases p ON p.parent_id = sub.id"
	    "  WHERE sub.kind <> ?7 AND p.kind NOT IN (?2, ?3, ?4, ?5))"
	    " SELECT kind, name_id, start_ns, dur_ns, in_op FROM sub";
	sqlite3_stmt *wq;
	int step = SQLITE_DONE;
	if (sqlite3_prepare_v2(db, walk_sql, -1, &wq, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int(wq, 2, PHASE_KERNEL);
	sqlite3_bind_int(wq, 3, PHASE_MEMCPY);
	sqlite3_bind_int(wq, 4, PHASE_MEMSET);
	sqlite3_bind_int(wq, 5, PHASE_GPU_ANNOTATION);
	sqlite3_bind_int(wq, 6, PHASE_OPERATOR);
	sqlite3_bind_int(wq, 7, PHASE_RUNTIME);
	for (size_t i = 0; i < nr && step == SQLITE_DONE; i++) {
		sqlite3_reset(wq);
		sqlite3_bind_int64(wq, 1, r[i].node);
		while ((step = sqlite3_step(wq)) == SQLITE_ROW)
			walk_row(names, nameq, r[i].t, others, col_int32(wq, 0), col_int(wq, 1),
				 col_int32(wq, 4), col_int(wq, 2), col_int(wq, 3));
	}
	sqlite3_finalize(wq);
	return step == SQLITE_DONE ? 0 : -1;
}

/* Per row of walk_range's scan: reached from a thread node, what its
 * children inherit (beneath an operator or call), whether they are cut
 * off (beneath a runtime call), and the root's index. */
#define ROW_REACHED (1u << 31)
#define ROW_IN_OP   (1u << 30)
#define ROW_CUT	    (1u << 29)
#define ROW_ROOT    (ROW_CUT - 1)

/* The same walk as walk_tree in one scan of the source's ids, in order: the
 * importer reserves the ids of a source's track nodes first, then writes
 * each thread's phases, a parent before its children.  Where the file
 * breaks that (a child before its parent, a phase of the threads outside
 * the range: their tracks' counts of phases say), it returns 1 and
 * walk_tree walks it again (what this scan added stays: every set is a
 * union of spans).  0 done, -1 a read failed. */
static int walk_range(sqlite3 *db, int64_t source_id, const struct root *r, size_t nr,
		      struct set *others, struct namememo *names, sqlite3_stmt *nameq)
{
	static const char range_sql[] =
	    "SELECT min(phase_id), max(phase_id),"
	    " (SELECT min(u.phase_id) FROM tracks u WHERE u.source_id <> ?1"
	    "   AND u.phase_id > (SELECT max(phase_id) FROM tracks WHERE source_id = ?1)),"
	    " (SELECT max(id) FROM phases)"
	    " FROM tracks WHERE source_id = ?1";
	sqlite3_stmt *q = NULL;
	uint32_t *row = NULL;
	int64_t *tracks = NULL;
	int rc = -1, step;
	int64_t lo = 0, hi = 0, seen = 0, want = 0;
	if (sqlite3_prepare_v2(db, range_sql, -1, &q, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(q, 1, source_id);
	if (sqlite3_step(q) != SQLITE_ROW)
		goto out;
	lo = col_int(q, 0);
	hi = !col_null(q, 2) ? ns_sum(col_int(q, 2), -1) : col_int(q, 3);
	sqlite3_finalize(q);
	q = NULL;
	tracks = xmalloc(nr * sizeof(*tracks));
	for (size_t i = 0; i < nr; i++) {
		want = ns_sum(want, r[i].spans + 1); /* its phases and its node */
		tracks[i] = r[i].track;
	}
	qsort(tracks, nr, sizeof(*tracks), by_int64);
	if (lo <= 0 || hi < lo || (uint64_t)(hi - lo) >= ROW_ROOT || nr >= ROW_ROOT) {
		rc = 1;
		goto out;
	}
	if (sqlite3_prepare_v2(db,
			       "SELECT id, coalesce(parent_id, 0), kind, name_id, start_ns, dur_ns,"
			       " coalesce(track_id, 0) FROM phases WHERE id BETWEEN ?1 AND ?2",
			       -1, &q, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(q, 1, lo);
	sqlite3_bind_int64(q, 2, hi);
	row = xcalloc((size_t)(hi - lo) + 1, sizeof(*row));
	rc = 0;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t id = col_int(q, 0), p = col_int(q, 1), track = col_int(q, 6);
		int kind = col_int32(q, 2);
		struct root key = {.node = p}, *at = bsearch(&key, r, nr, sizeof(key), by_node);
		uint32_t up = at ? ROW_REACHED | (uint32_t)(at - r) : 0;
		if (!at && p >= lo && p <= hi) {
			if (p >= id) {
				rc = 1; /* a child before its parent */
				break;
			}
			up = row[p - lo] & ROW_CUT ? 0 : row[p - lo];
		}
		seen += track && bsearch(&track, tracks, nr, sizeof(*tracks), by_int64);
		if (!(up & ROW_REACHED) || device_kind(kind))
			continue;
		const struct root *x = &r[up & ROW_ROOT];
		int in_op = (up & ROW_IN_OP) != 0;
		row[id - lo] =
		    ROW_REACHED | (up & ROW_ROOT) |
		    (in_op || kind == PHASE_OPERATOR || kind == PHASE_RUNTIME ? ROW_IN_OP : 0) |
		    (kind == PHASE_RUNTIME ? ROW_CUT : 0);
		walk_row(names, nameq, x->t, others, kind, col_int(q, 3), in_op, col_int(q, 4),
			 col_int(q, 5));
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = -1;
	if (rc == 0 && seen != want)
		rc = 1; /* some of the threads' phases lie outside the range */
out:
	sqlite3_finalize(q);
	free(row);
	free(tracks);
	return rc;
}

/* Walks the host phases under each thread node of the source; the
 * collectives of threads that launch nothing go to *others. */
static int walk_threads(sqlite3 *db, int64_t source_id, struct idle_host *h, struct set *others,
			char **err)
{
	static const char tracks_sql[] =
	    "SELECT id, phase_id, spans FROM tracks WHERE source_id = ?1 AND kind = 'thread'"
	    " AND phase_id IS NOT NULL ORDER BY id";
	sqlite3_stmt *tq = NULL, *nameq = NULL;
	struct namememo names = NAMEMEMO_INIT;
	struct thread idle_thread = {0};
	struct root *r = NULL;
	size_t nr = 0, alloc = 0;
	int rc = -1, step;
	if (sqlite3_prepare_v2(db, tracks_sql, -1, &tq, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT text FROM strings WHERE id = ?1", -1, &nameq, NULL) !=
		SQLITE_OK)
		goto out;
	sqlite3_bind_int64(tq, 1, source_id);
	while ((step = sqlite3_step(tq)) == SQLITE_ROW) {
		struct thread *t = find(h, col_int(tq, 0));
		XGROW(r, nr + 1, alloc);
		r[nr++] = (struct root){col_int(tq, 1), col_int(tq, 0), col_count(tq, 2),
					t ? t : &idle_thread};
	}
	if (step != SQLITE_DONE)
		goto out;
	if (nr)
		qsort(r, nr, sizeof(*r), by_node);
	rc = nr ? walk_range(db, source_id, r, nr, others, &names, nameq) : 0;
	if (rc == 1)
		rc = walk_tree(db, r, nr, others, &names, nameq);
out:
	if (rc < 0)
		*err = xasprintf("cannot read trace.db: %s", sqlite3_errmsg(db));
	namememo_release(&names);
	sqlite3_finalize(tq);
	sqlite3_finalize(nameq);
	free(r);
	return rc;
}

int idle_host_load(sqlite3 *db, int64_t source_id, const struct idle_launch *l, size_t n,
		   struct idle_host **out, char **err)
{
	struct idle_host *h = xcalloc(1, sizeof(*h));
	struct set all = {0};
	add_launches(h, l, n);
	*out = NULL;
	if (walk_threads(db, source_id, h, &all, err) < 0) {
		set_release(&all);
		idle_host_free(h);
		return -1;
	}
	/* every collective, whichever thread ran it */
	for (size_t i = 0; i < h->n; i++)
		for (size_t k = 0; k < h->t[i].comm.n; k++)
			set_add(&all, h->t[i].comm.s[k].start, h->t[i].comm.s[k].end);
	set_normalize(&all);
	for (size_t i = 0; i < h->n; i++) {
		struct thread *t = &h->t[i];
		set_normalize(&t->comm);
		set_normalize(&t->input);
		set_normalize(&t->sync);
		set_normalize(&t->ops);
		if (t->nstarts)
			qsort(t->starts, t->nstarts, sizeof(*t->starts), by_int64);
		/* its own collectives, and the others' while it is in no op */
		struct span *free_comm, *comm;
		size_t nf = spans_subtract(all.s, all.n, t->ops.s, t->ops.n, &free_comm);
		size_t nc = spans_union(t->comm.s, t->comm.n, free_comm, nf, &comm);
		free(free_comm);
		set_release(&t->comm);
		t->comm = (struct set){comm, nc, nc};
		set_release(&t->ops);
	}
	set_release(&all);
	*out = h;
	return 0;
}

/* Whether no stretch of [lo, hi), cut at the starts in it, exceeds max. */
static int launching(const int64_t *starts, size_t n, int64_t lo, int64_t hi, int64_t max)
{
	size_t a;
	PARTITION_POINT(a, n, i, starts[i] <= lo);
	int64_t at = lo;
	for (size_t i = a; i < n && starts[i] < hi; i++) {
		if (ns_dur(at, starts[i]) > max)
			return 0;
		at = starts[i];
	}
	return ns_dur(at, hi) <= max;
}

/* At least half of len. */
static int half(int64_t part, int64_t len)
{
	return part >= len - part;
}

int idle_gap_cause(const struct idle_host *h, int64_t start, int64_t end,
		   const struct idle_launch *next, int64_t launch_ns)
{
	int64_t len = ns_dur(start, end);
	if (!next->track)
		return IDLE_HOST;
	if (next->start < start && len <= launch_ns)
		return IDLE_LAUNCH;
	if (next->end <= start && len > launch_ns)
		return IDLE_DEVICE;
	const struct thread *t = find(h, next->track);
	if (!t)
		return IDLE_HOST;
	if (half(spans_cover(t->comm.s, t->comm.n, start, end), len))
		return IDLE_COMM;
	if (half(spans_cover(t->input.s, t->input.n, start, end), len))
		return IDLE_INPUT;
	if (spans_open_at(t->sync.s, t->sync.n, start) ||
	    half(spans_cover(t->sync.s, t->sync.n, start, end), len))
		return IDLE_SYNC;
	if (launching(t->starts, t->nstarts, start, end, launch_ns))
		return IDLE_LAUNCH;
	return IDLE_HOST;
}

void idle_host_free(struct idle_host *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++) {
		struct thread *t = &h->t[i];
		set_release(&t->comm);
		set_release(&t->input);
		set_release(&t->sync);
		set_release(&t->ops);
		free(t->starts);
	}
	free(h->t);
	free(h);
}
