/*
 * Summaries of a subtree by name; see aggr.h.  A walk hands each phase of
 * the subtree to visit() with its parent's visit index, parents first; the
 * groups (one per name id) accumulate count, sums, extremes and Welford's
 * running mean and variance, and for device work the durations that give
 * the medians.  Annotations leave out the tracks' nodes and the GPU
 * annotations named as profiler steps, both read before the walk.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/aggr.h"
#include "model/analysis/analyze.h"
#include "model/analysis/gpubreak.h"
#include "model/analysis/gpucache.h"
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/util/idmap.h"
#include "model/view/model.h"
#include "model/util/nstime.h"
#include "model/store/ptree.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

struct wrow {
	int64_t id, parent_id, name_id, start, dur, self, device, bytes;
	int kind, has_parent;
};

struct group {
	int64_t name_id;
	int kind;
	int64_t count, total, self, device, min, max, bytes, first_id, first_start;
	int64_t gpu_count, gpu_total;
	double mean, m2; /* Welford */
	int64_t *durs;
	size_t ndurs, adurs;
};

struct walk {
	enum aggr_what what;
	struct idmap names; /* name id -> group */
	struct group *g;
	size_t ng, ag;
	size_t kept; /* durations kept for medians */
	int median_cut;
	int64_t n; /* phases entered */
	/* the scan (walk_scan): its root, and per id from it the visit index
	 * (-1: not in the subtree) */
	int64_t root;
	int32_t *idx;
	size_t range;
	uint64_t scanned; /* rows the filter saw */
	int unordered, too_many;
	/* children of the subtree's phases not yet read; done: none left,
	 * the scan stops (a root of 0, every phase, is read to the end) */
	int64_t want;
	int done;
	/* AGGR_ANNOTATIONS: the tracks' nodes, and the names of profiler steps */
	struct idmap places, steps;
};

static int is_device(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET;
}

static int counts(enum aggr_what what, int kind)
{
	switch (what) {
	case AGGR_KERNELS:
		return is_device(kind);
	case AGGR_OPS:
		return kind == PHASE_OPERATOR;
	case AGGR_API:
		return kind == PHASE_RUNTIME;
	case AGGR_ANNOTATIONS:
		return kind == PHASE_ANNOTATION || kind == PHASE_GPU_ANNOTATION;
	}
	return 0;
}

/* Whether the summary counts the row its kind let in (counts()): for
 * annotations, not a track's node nor a profiler step's GPU side. */
static int counted(const struct walk *w, const struct wrow *r)
{
	if (w->what != AGGR_ANNOTATIONS)
		return 1;
	if (idmap_get(&w->places, r->id) >= 0)
		return 0;
	return r->kind != PHASE_GPU_ANNOTATION || idmap_get(&w->steps, r->name_id) < 0;
}

static int32_t group_of(struct walk *w, const struct wrow *r)
{
	int32_t k = idmap_get(&w->names, r->name_id);
	if (k >= 0)
		return k;
	XGROW(w->g, w->ng + 1, w->ag);
	struct group *g = &w->g[w->ng];
	memset(g, 0, sizeof(*g));
	g->name_id = r->name_id;
	g->kind = r->kind;
	g->min = INT64_MAX;
	idmap_put(&w->names, r->name_id, (int32_t)w->ng);
	return (int32_t)w->ng++;
}

static void note_first(struct group *g, const struct wrow *r)
{
	if ((g->count + g->gpu_count == 1) || r->start < g->first_start ||
	    (r->start == g->first_start && r->id < g->first_id)) {
		g->first_start = r->start;
		g->first_id = r->id;
	}
}

static void add(struct walk *w, struct group *g, const struct wrow *r)
{
	if (w->what == AGGR_ANNOTATIONS && r->kind == PHASE_GPU_ANNOTATION) {
		g->gpu_count++;
		g->gpu_total = ns_sum(g->gpu_total, r->dur);
		note_first(g, r);
		return;
	}
	g->count++;
	g->total = ns_sum(g->total, r->dur);
	g->self = ns_sum(g->self, r->self);
	/* per instance the union of the device work beneath it, over instances a sum */
	if (w->what == AGGR_OPS || w->what == AGGR_ANNOTATIONS)
		g->device = ns_sum(g->device, r->device);
	g->bytes = ns_sum(g->bytes, r->bytes);
	g->min = r->dur < g->min ? r->dur : g->min;
	g->max = r->dur > g->max ? r->dur : g->max;
	note_first(g, r);
	double d = (double)r->dur - g->mean;
	g->mean += d / (double)g->count;
	g->m2 += d * ((double)r->dur - g->mean);
	if (w->what != AGGR_KERNELS || w->median_cut)
		return;
	if (w->kept >= AGGR_MEDIAN_MAX) {
		w->median_cut = 1;
		return;
	}
	XGROW(g->durs, g->ndurs + 1, g->adurs);
	g->durs[g->ndurs++] = r->dur;
	w->kept++;
}

/* Enters the next phase of the subtree, of kind kind; 1 when the summary
 * reads the phase's row. */
static int enter(struct walk *w, int kind)
{
	w->n++;
	return counts(w->what, kind);
}

/* The row of the phase entered last, which enter() said the summary reads. */
static void visit(struct walk *w, const struct wrow *r)
{
	if (!counts(w->what, r->kind) || !counted(w, r))
		return;
	int32_t k = group_of(w, r); /* may move w->g */
	add(w, &w->g[k], r);
}

static int db_fail(struct store *st, char **err)
{
	*err =
	    xasprintf("%s: cannot read phases: %s", store_path(st), sqlite3_errmsg(store_db(st)));
	return -1;
}

/* The columns read_row() reads, of phases known as P. */
#define AGGR_COLS(P)                                                                               \
	P "id, " P "parent_id, " P "kind, " P "name_id, " P "start_ns, " P "dur_ns, " P            \
	  "self_ns, " P "device_ns, CASE WHEN " P "kind IN (?2, ?3) AND json_valid(" P "attrs)"    \
	  " THEN json_extract(" P "attrs, '$.bytes') END"

static void read_row(sqlite3_stmt *q, struct wrow *r)
{
	r->id = col_int(q, 0);
	r->has_parent = !col_null(q, 1);
	r->parent_id = col_int(q, 1);
	r->kind = col_int32(q, 2);
	r->name_id = col_int(q, 3);
	r->start = col_int(q, 4);
	int64_t d = col_int(q, 5), s = col_int(q, 6);
	r->dur = d < 0 ? 0 : d > MODEL_TIME_MAX ? MODEL_TIME_MAX : d;
	r->self = s < 0 ? 0 : s > r->dur ? r->dur : s;
	r->device = col_int(q, 7);
	int64_t b = col_int(q, 8);
	r->bytes = b > 0 ? b : 0;
}

static sqlite3_stmt *prepare(struct store *st, const char *sql, int64_t root_id)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &q, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(q, 1, root_id);
	sqlite3_bind_int(q, 2, PHASE_MEMCPY);
	sqlite3_bind_int(q, 3, PHASE_MEMSET);
	return q;
}

/* The scan's filter, aggr_member(id, parent_id, kind, child_count), called
 * on every row in id order: whether the row is in the subtree (its parent
 * is) and the summary reads it.  Deciding in the WHERE clause spares SQLite
 * making the result rows of the phases the summary does not read.  Once
 * every child the subtree's phases count has been read, the next call
 * ends the scan with an error the caller knows (w->done). */
static void member_fn(sqlite3_context *cx, int argc, sqlite3_value **v)
{
	struct walk *w = sqlite3_user_data(cx);
	if (w->done) {
		sqlite3_result_error(cx, "the subtree is read", -1);
		return;
	}
	int64_t id = sqlite3_value_int64(v[0]), parent = sqlite3_value_int64(v[1]);
	int64_t kids = sqlite3_value_int64(v[3]);
	int has_parent = sqlite3_value_type(v[1]) != SQLITE_NULL;
	uint64_t off = (uint64_t)id - (uint64_t)w->root;
	w->scanned++;
	if (id < w->root) {
		sqlite3_result_int(cx, 0);
		return;
	}
	if (off >= w->range && off / 4 > w->scanned + 65536) {
		/* ids far sparser than rows (a file not laid out as imports
		 * lay it out): the tree walk reads it, not an index of them all */
		w->unordered = 1;
		sqlite3_result_error(cx, "sparse ids", -1);
		return;
	}
	if (off >= w->range) {
		size_t nr = w->range ? w->range : 4096;
		while (nr <= off)
			nr *= 2;
		w->idx = xrealloc(w->idx, nr * sizeof(*w->idx));
		memset(w->idx + w->range, 0xff, (nr - w->range) * sizeof(*w->idx));
		w->range = nr;
	}
	int32_t pi = -1;
	if (w->root ? id != w->root : has_parent) {
		if (!has_parent || parent < w->root) {
			sqlite3_result_int(cx, 0);
			return;
		}
		if (parent >= id) {
			w->unordered = 1;
			sqlite3_result_error(cx, "a parent after its child", -1);
			return;
		}
		if ((pi = w->idx[parent - w->root]) < 0) {
			sqlite3_result_int(cx, 0);
			return;
		}
	}
	if (w->n >= INT32_MAX) {
		w->too_many = 1;
		sqlite3_result_error(cx, "too many phases", -1);
		return;
	}
	w->idx[off] = (int32_t)w->n;
	if (w->root && id == w->root)
		w->want = kids > 0 ? kids : 0;
	else if (w->root)
		w->want = ns_sum(w->want - 1, kids > 0 ? kids : 0);
	w->done = w->root && w->want <= 0;
	sqlite3_result_int(cx, enter(w, sqlite3_value_int(v[2])));
}

/* The subtree in one scan in id order: 0, -1 with *err, or 1 when a row's
 * parent comes after it (the caller walks the tree instead). */
static int walk_scan(struct store *st, int64_t root_id, struct walk *w, char **err)
{
	sqlite3 *db = store_db(st);
	w->root = root_id;
	if (sqlite3_create_function_v2(db, "aggr_member", 4, SQLITE_UTF8 | SQLITE_DIRECTONLY, w,
				       member_fn, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(st, err);
	sqlite3_stmt *q = prepare(
	    st,
	    "SELECT " AGGR_COLS(
		"") " FROM phases WHERE id >= ?1 AND aggr_member(id, parent_id, kind, child_count)",
	    root_id);
	int rc = SQLITE_ERROR, ret = 0;
	struct wrow r;
	while (q && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		read_row(q, &r);
		visit(w, &r);
	}
	if (w->unordered) {
		ret = 1;
	} else if (w->too_many) {
		*err = xasprintf("%s: more than 2^31 phases under %lld", store_path(st),
				 (long long)root_id);
		ret = -1;
	} else if (rc != SQLITE_DONE && !w->done) {
		ret = db_fail(st, err);
	}
	sqlite3_finalize(q);
	sqlite3_create_function_v2(db, "aggr_member", 4, SQLITE_UTF8, NULL, NULL, NULL, NULL, NULL);
	free(w->idx);
	w->idx = NULL;
	w->range = 0;
	w->scanned = 0;
	return ret;
}

/* The subtree by a recursive query, breadth first (parents first); a
 * parent cycle through the root reads it again, which stops the walk. */
static int walk_tree(struct store *st, int64_t root_id, struct walk *w, char **err)
{
	sqlite3_stmt *q = prepare(
	    st,
	    "WITH RECURSIVE sub(id, parent_id, kind, name_id, start_ns, dur_ns, self_ns,"
	    " device_ns, bytes) AS (SELECT " AGGR_COLS(
		"") " FROM phases WHERE CASE WHEN ?1"
		    " THEN id = ?1 ELSE parent_id IS NULL END UNION ALL SELECT " AGGR_COLS(
			"p.") " FROM sub JOIN phases p ON p.parent_id = sub.id) SELECT * FROM sub",
	    root_id);
	if (!q)
		return db_fail(st, err);
	struct idmap ids;
	idmap_init(&ids, 1024);
	int rc, ret = 0;
	struct wrow r;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		read_row(q, &r);
		if (w->n >= INT32_MAX || idmap_put(&ids, r.id, (int32_t)w->n) < 0) {
			*err = ptree_loop_error(store_path(st), r.id);
			ret = PTREE_LOOP;
			break;
		}
		if (enter(w, r.kind))
			visit(w, &r);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_fail(st, err);
	sqlite3_finalize(q);
	idmap_release(&ids);
	return ret;
}

static void walk_release(struct walk *w)
{
	for (size_t i = 0; i < w->ng; i++)
		free(w->g[i].durs);
	free(w->g);
	free(w->idx);
	idmap_release(&w->names);
	idmap_release(&w->places);
	idmap_release(&w->steps);
	memset(w, 0, sizeof(*w));
}

/* What annotations leave out: the nodes of the file's tracks (threads,
 * streams, a stream's annotation lane: where ranges ran, none a range),
 * and the names of the profiler steps at the top of a track, which
 * Kineto writes again as GPU annotations.  Two indexed reads, of the
 * tracks and of their nodes' children. */
static int read_places(struct store *st, struct walk *w, char **err)
{
	static const char sql[] =
	    "SELECT phase_id, 0 FROM tracks WHERE phase_id IS NOT NULL UNION ALL"
	    " SELECT DISTINCT p.name_id, 1 FROM tracks t JOIN phases p"
	    " ON p.parent_id = t.phase_id WHERE p.kind = ?1";
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &q, NULL) != SQLITE_OK)
		return db_fail(st, err);
	sqlite3_bind_int(q, 1, PHASE_PROFILER_STEP);
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		idmap_put(col_int32(q, 1) ? &w->steps : &w->places, col_int(q, 0), 0);
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : db_fail(st, err);
}

static int walk_init(struct store *st, struct walk *w, enum aggr_what what, char **err)
{
	memset(w, 0, sizeof(*w));
	w->what = what;
	idmap_init(&w->names, 1024);
	idmap_init(&w->places, 64);
	idmap_init(&w->steps, 64);
	return what == AGGR_ANNOTATIONS ? read_places(st, w, err) : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct aggr_row *a = pa, *b = pb;
	if (a->total_ns != b->total_ns)
		return a->total_ns < b->total_ns ? 1 : -1;
	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns < b->gpu_ns ? 1 : -1;
	return strcmp(a->name, b->name);
}

static double median(struct group *g)
{
	size_t n = g->ndurs;
	if (!n)
		return NAN;
	qsort(g->durs, n, sizeof(*g->durs), cmp_i64);
	return n % 2 ? (double)g->durs[n / 2]
		     : ((double)g->durs[n / 2 - 1] + (double)g->durs[n / 2]) / 2.0;
}

void aggr_release(struct aggr *a)
{
	for (size_t i = 0; i < a->nrows; i++)
		free(a->rows[i].name);
	free(a->rows);
	free(a->why);
	memset(a, 0, sizeof(*a));
}

/* Why the subtree of root_id (phases phases, itself included) has nothing
 * to summarise as what. */
static char *why_none(struct store *st, int64_t root_id, enum aggr_what what, int64_t phases)
{
	static const char *const words[] = {"device work (kernels, copies, sets)", "operators",
					    "runtime calls", "annotations"};
	const char *w = words[what];
	if (phases > 1)
		return xasprintf("no %s among the %lld phases beneath it", w,
				 (long long)(phases - 1));
	if (root_id && level_of_phase(store_db(st), root_id, NULL) == LEVEL_PART)
		return xasprintf("no %s: a part of the workflow with nothing traced beneath it", w);
	return xasprintf("no %s: nothing beneath it", w);
}

int aggr_compute(struct store *st, int64_t root_id, enum aggr_what what, struct aggr *a, char **err)
{
	struct walk w;
	struct sbuf name = SBUF_INIT;
	memset(a, 0, sizeof(*a));
	int rc = walk_init(st, &w, what, err);
	if (rc == 0)
		rc = walk_scan(st, root_id, &w, err);
	if (rc == 1) {
		walk_release(&w);
		if ((rc = walk_init(st, &w, what, err)) == 0)
			rc = walk_tree(st, root_id, &w, err);
	}
	if (rc < 0)
		goto out;
	if (!w.n) {
		*err = xasprintf("%s: no phase %lld", store_path(st), (long long)root_id);
		rc = -1;
		goto out;
	}
	a->rows = xcalloc(w.ng ? w.ng : 1, sizeof(*a->rows));
	a->nrows = w.ng;
	a->phases = w.n;
	if (!w.ng)
		a->why = why_none(st, root_id, what, (int64_t)w.n);
	a->median_cut = w.median_cut;
	for (size_t i = 0; i < w.ng; i++) {
		struct group *g = &w.g[i];
		struct aggr_row *r = &a->rows[i];
		char *e = NULL;
		const char *s = store_string(st, g->name_id, &name, &e);
		free(e);
		r->name = xstrdup(s ? s : "");
		r->kind = g->kind;
		r->type = gpubreak_kernel_type(r->name);
		r->count = g->count;
		r->total_ns = g->total;
		r->self_ns = g->self;
		r->device_ns = g->device;
		r->gpu_count = g->gpu_count;
		r->gpu_ns = g->gpu_total;
		r->min_ns = g->count ? g->min : 0;
		r->max_ns = g->max;
		r->mean_ns = g->count ? (double)g->total / (double)g->count : NAN;
		r->median_ns = w.what == AGGR_KERNELS && !w.median_cut ? median(g) : NAN;
		r->stddev_ns = g->count > 1 ? sqrt(g->m2 / (double)(g->count - 1))
			       : g->count   ? 0.0
					    : NAN;
		r->bytes = g->bytes;
		r->first_id = g->first_id;
		a->total_ns = ns_sum(a->total_ns, g->total);
	}
	qsort(a->rows, a->nrows, sizeof(*a->rows), cmp_row);
	rc = 0;
out:
	if (rc < 0)
		aggr_release(a);
	sbuf_release(&name);
	walk_release(&w);
	return rc;
}

/* ---- ranks ---- */

void aggr_ranks_release(struct aggr_rank *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].name);
	free(r);
}

/* The nearest phase, id or one above it, with ranks as its children: 1
 * with *at, 0 when none, -1.  Ranks hang under the workflow's levels
 * (level.h), so only those are asked for children: a thread's million
 * operators are never scanned. */
static int ranks_above(struct store *st, int64_t id, int64_t *at, char **err)
{
	static const char up_sql[] =
	    "SELECT parent_id, kind, " LEVEL_ON_THREAD_SQL("p") " FROM phases p WHERE p.id = ?1";
	static const char has_sql[] =
	    "SELECT EXISTS (SELECT 1 FROM phases WHERE parent_id = ?1 AND kind = ?2)";
	sqlite3_stmt *q = NULL, *has = NULL;
	int found = -1;
	if (sqlite3_prepare_v2(store_db(st), up_sql, -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(store_db(st), has_sql, -1, &has, NULL) != SQLITE_OK) {
		db_fail(st, err);
		goto out;
	}
	sqlite3_bind_int(has, 2, PHASE_RANK);
	found = 0;
	/* a bound on the climb: a parent cycle must not hang it */
	for (int up = 0; up < 1 << 16; up++) {
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, id);
		if (sqlite3_step(q) != SQLITE_ROW)
			break;
		int level = level_of(col_int32(q, 1), col_int32(q, 2));
		if (level == LEVEL_PART || level == LEVEL_WORKFLOW) {
			sqlite3_reset(has);
			sqlite3_bind_int64(has, 1, id);
			if (sqlite3_step(has) == SQLITE_ROW && col_int32(has, 0)) {
				*at = id;
				found = 1;
				break;
			}
		}
		if (col_null(q, 0))
			break;
		id = col_int(q, 0);
	}
out:
	sqlite3_finalize(q);
	sqlite3_finalize(has);
	return found;
}

/* Why phase id has no ranks at or above it: its parts hold them, or none
 * does.  NULL on a read error (*err). */
static char *why_no_ranks(struct store *st, int64_t id, char **err)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(
		store_db(st),
		"WITH RECURSIVE sub(id) AS (SELECT ?1 UNION SELECT c.id FROM phases c"
		" JOIN sub ON c.parent_id = sub.id WHERE c.kind NOT IN (?2, ?3, ?4, ?5))"
		" SELECT EXISTS (SELECT 1 FROM phases r JOIN sub ON r.parent_id = sub.id"
		" WHERE r.kind = ?2)",
		-1, &q, NULL) != SQLITE_OK) {
		db_fail(st, err);
		return NULL;
	}
	sqlite3_bind_int64(q, 1, id);
	sqlite3_bind_int(q, 2, PHASE_RANK);
	/* ranks hang under parts of the workflow, never in a track */
	sqlite3_bind_int(q, 3, PHASE_PROCESS);
	sqlite3_bind_int(q, 4, PHASE_THREAD);
	sqlite3_bind_int(q, 5, PHASE_STREAM);
	int below = sqlite3_step(q) == SQLITE_ROW && col_int32(q, 0);
	sqlite3_finalize(q);
	return xstrdup(
	    below ? "no ranks at its level: the parts beneath it hold theirs; select one"
		  : "no ranks at or above it (a rank is one process of a distributed trace)");
}

static long rank_number(const char *name)
{
	long k;
	return sscanf(name, "rank %ld", &k) == 1 ? k : -1;
}

static int cmp_rank(const void *pa, const void *pb)
{
	const struct aggr_rank *a = pa, *b = pb;
	long x = rank_number(a->name), y = rank_number(b->name);
	if (x != y)
		return x < y ? -1 : 1;
	return (a->rank_id > b->rank_id) - (a->rank_id < b->rank_id);
}

/* The breakdown of rank node r (source src): its source's one, or the one
 * whose rank its name says. */
static const struct gpubreak_rank *breakdown_of(const struct gpubreak *g, const struct aggr_rank *r,
						int64_t src)
{
	const struct gpubreak_rank *hit = NULL;
	int hits = 0;
	for (size_t i = 0; i < g->nranks; i++)
		if (g->ranks[i].source_id == src) {
			hits++;
			if (!hit || g->ranks[i].rank == rank_number(r->name))
				hit = &g->ranks[i];
		}
	return hits ? hit : NULL;
}

int aggr_ranks(struct store *st, int64_t phase_id, int64_t *step, struct aggr_rank **out, size_t *n,
	       char **why, char **err)
{
	struct gpubreak g = {0};
	struct imbalance *imb = NULL;
	size_t nimb = 0, alloc = 0;
	int64_t *src = NULL;
	sqlite3_stmt *q = NULL;
	struct sbuf name = SBUF_INIT;
	*out = NULL;
	*n = 0;
	*step = 0;
	*why = NULL;
	int rc = ranks_above(st, phase_id, step, err);
	if (rc <= 0) {
		if (!rc && !(*why = why_no_ranks(st, phase_id, err)))
			rc = -1;
		goto out;
	}
	rc = -1;
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT id, name_id, dur_ns, coalesce(source_id, 0) FROM phases"
			       " WHERE parent_id = ?1 AND kind = ?2",
			       -1, &q, NULL) != SQLITE_OK) {
		db_fail(st, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, *step);
	sqlite3_bind_int(q, 2, PHASE_RANK);
	int s;
	while ((s = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(*out, *n + 1, alloc);
		src = xrealloc(src, alloc * sizeof(*src));
		struct aggr_rank *r = &(*out)[*n];
		char *e = NULL;
		const char *t = store_string(st, col_int(q, 1), &name, &e);
		free(e);
		memset(r, 0, sizeof(*r));
		r->rank_id = col_int(q, 0);
		r->name = xstrdup(t ? t : "");
		r->dur_ns = col_int(q, 2);
		r->compute_ns = r->comm_ns = r->wait_ns = -1;
		r->idle_pct = NAN;
		src[(*n)++] = col_int(q, 3);
	}
	if (s != SQLITE_DONE) {
		db_fail(st, err);
		goto out;
	}
	if (*n && (analysis_fresh(store_db(st)) ? gpucache_load(store_db(st), &g, err)
						: gpubreak_load(st, NULL, &g, err)) < 0)
		goto out;
	if (*n && analysis_imbalance(st, &imb, &nimb, err) < 0)
		goto out;
	for (size_t i = 0; i < *n; i++) {
		struct aggr_rank *r = &(*out)[i];
		const struct gpubreak_rank *b = breakdown_of(&g, r, src[i]);
		if (b && b->items) {
			r->compute_ns = b->type_ns[GPUBREAK_COMP];
			r->comm_ns = b->type_ns[GPUBREAK_COMM];
			if (b->time.window_ns > 0)
				r->idle_pct =
				    100.0 * (double)b->time.idle_ns / (double)b->time.window_ns;
		}
		for (size_t k = 0; k < nimb; k++) {
			const struct imbalance *m = &imb[k];
			if (m->parent_id != *step || strcmp(m->kind, "ranks"))
				continue;
			r->straggler = m->straggler_id == r->rank_id;
			for (size_t j = 0; m->meets && j < m->nranks; j++)
				if (m->ranks[j].rank_id == r->rank_id)
					r->wait_ns = m->ranks[j].wait_ns;
		}
	}
	if (*n > 1) /* *out is NULL when the step has no ranks */
		qsort(*out, *n, sizeof(**out), cmp_rank);
	rc = 0;
out:
	if (rc < 0) {
		aggr_ranks_release(*out, *n);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(q);
	free(src);
	sbuf_release(&name);
	gpubreak_release(&g);
	imbalance_release(imb, nimb);
	return rc;
}
