/*
 * Imbalance (GradeML; DESIGN.md, Analyses): among siblings of one type
 * that run side by side and should take equally long, the ideal is their
 * mean duration, the actual their longest, and the impact the difference:
 * what the group would save if its work were spread evenly.
 *
 * The groups:
 *   ranks      the rank nodes of one step (one trace per GPU rank);
 *   iteration  the ProfilerStep#N of one name across the ranks of a step
 *              (the same iteration on every rank);
 *   tasks      the tasks of one Spark stage.
 * A group needs two members.  The straggler is the longest member; "slow"
 * counts the members more than 10% over the ideal.
 *
 * Cost: one scan of phases for ranks and tasks (sorted by parent by
 * SQLite), one for profiler steps, then per-group arithmetic; memory holds
 * one group's durations and the profiler steps of ranked traces.
 */
#include <stdlib.h>
#include <string.h>

#include "model/imbalance.h"
#include "model/xalloc.h"

struct member {
	int64_t key, sub, id, dur;
};

struct acc {
	struct imbalance *v;
	size_t n, alloc;
};

static char *phase_name(sqlite3 *db, int64_t id)
{
	sqlite3_stmt *q;
	char *s = NULL;
	if (sqlite3_prepare_v2(db,
			       "SELECT n.text FROM phases p JOIN strings n ON n.id = p.name_id"
			       " WHERE p.id = ?1",
			       -1, &q, NULL) != SQLITE_OK)
		return xstrdup("?");
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
		s = xstrdup((const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	return s ? s : xstrdup("?");
}

/* Closes the group m[0..n) (one parent, one kind). */
static void finish(sqlite3 *db, struct acc *a, const char *kind, const struct member *m, size_t n)
{
	if (n < 2)
		return;
	double sum = 0;
	size_t top = 0;
	for (size_t i = 0; i < n; i++) {
		sum += (double)m[i].dur;
		if (m[i].dur > m[top].dur)
			top = i;
	}
	int64_t ideal = (int64_t)(sum / (double)n);
	if (m[top].dur <= ideal)
		return;
	int64_t slow = 0;
	for (size_t i = 0; i < n; i++)
		slow += (double)m[i].dur > 1.1 * (double)ideal;
	XGROW(a->v, a->n + 1, a->alloc);
	struct imbalance *g = &a->v[a->n++];
	*g = (struct imbalance){.parent_id = m[0].key,
				.kind = kind,
				.members = (int64_t)n,
				.ideal_ns = ideal,
				.actual_ns = m[top].dur,
				.impact_ns = m[top].dur - ideal,
				.straggler_id = m[top].id,
				.straggler = phase_name(db, m[top].id),
				.slow = slow};
	char *parent = phase_name(db, m[0].key);
	if (!strcmp(kind, "ranks"))
		g->label = xasprintf("the %zu ranks of step %s", n, parent);
	else if (!strcmp(kind, "tasks"))
		g->label = xasprintf("the %zu tasks of %s", n, parent);
	else
		g->label = xasprintf("%s on the %zu ranks of step %s", g->straggler, n, parent);
	free(parent);
}

/* Feeds rows sorted by (key, sub) to finish(), one group at a time. */
static void groups(sqlite3 *db, struct acc *a, const char *kind, const struct member *m, size_t n)
{
	size_t first = 0;
	for (size_t i = 1; i <= n; i++)
		if (i == n || m[i].key != m[first].key || m[i].sub != m[first].sub) {
			finish(db, a, kind, m + first, i - first);
			first = i;
		}
}

static int by_key(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->sub != b->sub)
		return a->sub < b->sub ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int by_impact(const void *x, const void *y)
{
	const struct imbalance *a = x, *b = y;
	if (a->impact_ns != b->impact_ns)
		return a->impact_ns < b->impact_ns ? 1 : -1;
	return (a->straggler_id > b->straggler_id) - (a->straggler_id < b->straggler_id);
}

/* Rows of the query (key, sub, id, dur) into *m. */
static int rows(sqlite3 *db, const char *sql, int kind, struct member **m, size_t *n, char **err)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	*m = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int(q, 1, kind);
	sqlite3_bind_int(q, 2, PHASE_RANK);
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(*m, *n + 1, alloc);
		(*m)[(*n)++] = (struct member){sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
					       sqlite3_column_int64(q, 2),
					       sqlite3_column_int64(q, 3)};
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return 0;
fail:
	*err = xasprintf("cannot read phases for the imbalance analysis: %s", sqlite3_errmsg(db));
	free(*m);
	*m = NULL;
	return -1;
}

int imbalance_compute(struct store *st, struct imbalance **out, size_t *n, char **err)
{
	sqlite3 *db = store_db(st);
	struct acc a = {0};
	struct member *m;
	size_t k;
	/* ranks of a step, tasks of a stage: siblings of one kind */
	static const int kinds[] = {PHASE_RANK, PHASE_TASK};
	static const char *const names[] = {"ranks", "tasks"};
	for (int i = 0; i < 2; i++) {
		if (rows(db,
			 "SELECT parent_id, 0, id, dur_ns FROM phases WHERE kind = ?1 AND ?2 > 0"
			 " AND parent_id IS NOT NULL ORDER BY parent_id, id",
			 kinds[i], &m, &k, err) < 0)
			goto fail;
		groups(db, &a, names[i], m, k);
		free(m);
	}
	/* one iteration across ranks: profiler steps of ranked sources, keyed
	 * by the step their rank node hangs under and by name */
	if (rows(db,
		 "SELECT r.parent_id, p.name_id, p.id, p.dur_ns FROM phases p"
		 " JOIN (SELECT source_id, parent_id FROM phases WHERE kind = ?2) r"
		 " ON r.source_id = p.source_id WHERE p.kind = ?1",
		 PHASE_PROFILER_STEP, &m, &k, err) < 0)
		goto fail;
	if (k)
		qsort(m, k, sizeof(*m), by_key);
	groups(db, &a, "iteration", m, k);
	free(m);
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), by_impact);
	*out = a.v;
	*n = a.n;
	return 0;
fail:
	imbalance_release(a.v, a.n);
	return -1;
}

void imbalance_release(struct imbalance *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].label);
		free(v[i].straggler);
	}
	free(v);
}
