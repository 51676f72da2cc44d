/*
 * Reading a phase's subtree; see subtree.h.
 */
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/util/nstime.h"
#include "model/store/store.h"
#include "model/store/subtree.h"
#include "model/util/xalloc.h"

struct walk {
	sqlite3 *db;
	const char *path;
	sqlite3_stmt **levels; /* children of a phase, one per depth */
	size_t nlevels;
	const struct subtree_visitor *v;
};

static int db_error(struct walk *w, char **err)
{
	*err = xasprintf("%s: cannot read phases: %s", w->path, sqlite3_errmsg(w->db));
	return -1;
}

/* The columns a walk reads: those every visitor needs, then its own
 * (each column read costs a visible share of a pass over millions). */
static const char *const row_names[] = {
    [SUBTREE_SUMS] = "id, kind, dur_ns, child_count, name_id, self_ns, device_ns",
    [SUBTREE_TIMES] = "id, kind, dur_ns, child_count, start_ns, track_id",
    [SUBTREE_TIMES_NAMES] = "id, kind, dur_ns, child_count, start_ns, track_id, name_id",
};

/* Reads the columns of row_names[cols] from column off on. */
static void row_read(sqlite3_stmt *q, int off, enum subtree_cols cols, struct subtree_row *r)
{
	memset(r, 0, sizeof(*r));
	r->id = col_int(q, off);
	r->kind = col_int32(q, off + 1);
	r->dur_ns = col_int(q, off + 2);
	r->child_count = col_int(q, off + 3);
	if (cols == SUBTREE_SUMS) {
		r->name_id = col_int(q, off + 4);
		r->self_ns = col_int(q, off + 5);
		r->device_ns = col_int(q, off + 6);
	} else {
		r->start_ns = col_int(q, off + 4);
		r->track_id = col_int(q, off + 5);
		if (cols == SUBTREE_TIMES_NAMES)
			r->name_id = col_int(q, off + 6);
	}
}

/* Prepares "SELECT [first, ]COLUMNS FROM phases WHERE where". */
static int prepare(struct walk *w, const char *first, const char *where, sqlite3_stmt **q,
		   char **err)
{
	char *sql =
	    xasprintf("SELECT %s%s FROM phases WHERE %s", first, row_names[w->v->cols], where);
	int rc = sqlite3_prepare_v2(w->db, sql, -1, q, NULL);
	free(sql);
	return rc == SQLITE_OK ? 0 : db_error(w, err);
}

/* Starts level d reading the children of phase id. */
static int level_open(struct walk *w, size_t d, int64_t id, char **err)
{
	if (d >= w->nlevels) {
		w->levels = xrealloc(w->levels, (d + 1) * sizeof(*w->levels));
		w->levels[d] = NULL;
		w->nlevels = d + 1;
		if (prepare(w, "", "parent_id = ?1", &w->levels[d], err) < 0)
			return -1;
	}
	sqlite3_bind_int64(w->levels[d], 1, id);
	return 0;
}

/* The root's row, or -1 with *err (none is an error too).  Root 0 is the
 * virtual parent of the phases that have none (the workflows). */
static int root_read(struct walk *w, int64_t root_id, struct subtree_row *r, char **err)
{
	sqlite3_stmt *q;
	if (!root_id) {
		memset(r, 0, sizeof(*r));
		r->child_count = 1;
		return 0;
	}
	if (prepare(w, "", "id = ?1", &q, err) < 0)
		return -1;
	sqlite3_bind_int64(q, 1, root_id);
	int step = sqlite3_step(q);
	if (step == SQLITE_ROW)
		row_read(q, 0, w->v->cols, r);
	sqlite3_finalize(q);
	if (step == SQLITE_ROW)
		return 0;
	if (step != SQLITE_DONE)
		return db_error(w, err);
	*err = xasprintf("%s: no phase %lld", w->path, (long long)root_id);
	return -1;
}

/* Depth first through the parent index: a seek per phase with children.
 * Reads at most limit rows; 0 done, 1 over the limit, 2 stopped, -1 with
 * *err. */
static int walk_dfs(struct walk *w, struct subtree_row *root, size_t limit, char **err)
{
	struct subtree_row r;
	int32_t *at = xmalloc((SUBTREE_MAX_DEPTH + 1) * sizeof(*at)); /* each level's value */
	size_t sp = 0, rows = 0;
	int rc = -1;
	root->depth = 0;
	if ((at[0] = w->v->visit(w->v->arg, root, -1)) == SUBTREE_STOP) {
		rc = 2;
		goto out;
	}
	if (root->child_count > 0) {
		if (level_open(w, 0, root->id, err) < 0)
			goto out;
		sp = 1;
	}
	while (sp > 0) {
		sqlite3_stmt *q = w->levels[sp - 1];
		int step = sqlite3_step(q);
		if (step != SQLITE_ROW) {
			sqlite3_reset(q);
			if (step != SQLITE_DONE) {
				db_error(w, err);
				goto out;
			}
			sp--;
			continue;
		}
		if (++rows > limit) {
			rc = 1;
			goto out;
		}
		row_read(q, 0, w->v->cols, &r);
		r.depth = (int)sp;
		int32_t val = w->v->visit(w->v->arg, &r, at[sp - 1]);
		if (val == SUBTREE_STOP) {
			rc = 2;
			goto out;
		}
		if (r.child_count <= 0)
			continue;
		if (sp >= SUBTREE_MAX_DEPTH) {
			*err = xasprintf("%s: the phases below phase %lld nest deeper than %d "
					 "levels (do their parents loop?)",
					 w->path, (long long)root->id, SUBTREE_MAX_DEPTH);
			goto out;
		}
		if (level_open(w, sp, r.id, err) < 0)
			goto out;
		at[sp++] = val;
	}
	rc = 0;
out:
	for (size_t d = 0; d < w->nlevels; d++)
		if (w->levels[d])
			sqlite3_reset(w->levels[d]);
	free(at);
	return rc;
}

/* In id order from the root up: a phase is in the subtree when its parent
 * is (a phase with none is under root 0, whose subtree is every phase).
 * Importers give a child a larger id than its parent; the pass ends when
 * every child the subtree's phases count has been read.  0 done, 1
 * when the file breaks that order (children never found), 2 stopped, -1
 * with *err. */
static int walk_scan(struct walk *w, struct subtree_row *root, char **err)
{
	/* of each phase read, by id - root id: its value when it is in the
	 * subtree and has children, else NOT_IN; and its depth */
	enum { NOT_IN = INT32_MIN + 1 };
	int32_t *at = NULL;
	uint16_t *dep = NULL;
	size_t cap = 0;
	struct subtree_row r;
	int64_t want = !root->id ? INT64_MAX : root->child_count > 0 ? root->child_count : 0;
	sqlite3_stmt *q = NULL;
	int rc = -1, step = SQLITE_DONE;
	root->depth = 0;
	int32_t val = w->v->visit(w->v->arg, root, -1);
	if (val == SUBTREE_STOP) {
		rc = 2;
		goto out;
	}
	if (!want) {
		rc = 0;
		goto out;
	}
	if (prepare(w, "parent_id, ", "id > ?1 ORDER BY id", &q, err) < 0)
		goto out;
	sqlite3_bind_int64(q, 1, root->id);
	cap = 1 << 16;
	at = xmalloc(cap * sizeof(*at));
	dep = xcalloc(cap, sizeof(*dep));
	at[0] = val;
	for (size_t i = 1; i < cap; i++)
		at[i] = NOT_IN;
	uint64_t rows = 0;
	while (want > 0 && (step = sqlite3_step(q)) == SQLITE_ROW) {
		rows++;
		uint64_t pk = (uint64_t)col_int(q, 0) - (uint64_t)root->id;
		int32_t pv = pk < cap ? at[pk] : NOT_IN;
		if (pv == NOT_IN)
			continue;
		row_read(q, 1, w->v->cols, &r);
		r.depth = dep[pk] + 1;
		want--;
		if ((val = w->v->visit(w->v->arg, &r, pv)) == SUBTREE_STOP) {
			rc = 2;
			goto out;
		}
		if (r.child_count <= 0)
			continue;
		if (r.depth >= SUBTREE_MAX_DEPTH) {
			*err = xasprintf("%s: the phases below phase %lld nest deeper than %d "
					 "levels (do their parents loop?)",
					 w->path, (long long)root->id, SUBTREE_MAX_DEPTH);
			goto out;
		}
		uint64_t k = (uint64_t)r.id - (uint64_t)root->id;
		if (k >= cap) {
			if (k > rows * 4 + (1 << 20)) {
				rc = 1; /* ids far sparser than rows: the walk holds less */
				goto out;
			}
			size_t had = cap;
			while (cap <= k)
				cap *= 2;
			at = xrealloc(at, cap * sizeof(*at));
			dep = xrealloc(dep, cap * sizeof(*dep));
			for (size_t i = had; i < cap; i++)
				at[i] = NOT_IN;
		}
		at[k] = val;
		dep[k] = (uint16_t)r.depth;
		want = ns_sum(want, r.child_count);
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		db_error(w, err);
		goto out;
	}
	rc = root->id && want > 0;
out:
	sqlite3_finalize(q);
	free(at);
	free(dep);
	return rc;
}

int subtree_walk(sqlite3 *db, const char *path, int64_t root_id, size_t dfs_rows,
		 const struct subtree_visitor *v, char **err)
{
	struct walk w = {.db = db, .path = path, .v = v};
	struct subtree_row r;
	int rc = -1;
	if (root_read(&w, root_id, &r, err) < 0)
		goto out;
	/* the levels above a profiler step hold whole traces: straight to the pass */
	rc = (dfs_rows != SIZE_MAX && r.kind >= PHASE_WORKFLOW && r.kind <= PHASE_STREAM) || !r.id
		 ? 1
		 : walk_dfs(&w, &r, dfs_rows, err);
	if (rc == 1) {
		v->restart(v->arg);
		rc = walk_scan(&w, &r, err);
	}
	if (rc == 1) {
		v->restart(v->arg);
		rc = walk_dfs(&w, &r, SIZE_MAX, err);
	}
out:
	for (size_t d = 0; d < w.nlevels; d++)
		sqlite3_finalize(w.levels[d]);
	free(w.levels);
	return rc;
}
