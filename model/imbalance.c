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
 * Cost: one scan of phases, then sorts in memory; memory holds 32 bytes
 * per rank, task and profiler step.
 */
#include <stdlib.h>
#include <string.h>

#include "model/analyze.h"
#include "model/imbalance.h"
#include "model/xalloc.h"

struct member {
	int64_t key, sub, id, dur;
};

struct acc {
	struct imbalance *v;
	size_t n, alloc;
};

/* Closes the group m[0..n) (one parent, one kind). */
static void finish(struct store *st, struct acc *a, const char *kind, const struct member *m, size_t n)
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
				.straggler = analysis_phase_name(st, m[top].id),
				.slow = slow};
	char *parent = analysis_phase_name(st, m[0].key);
	if (!strcmp(kind, "ranks"))
		g->label = xasprintf("the %zu ranks of step %s", n, parent);
	else if (!strcmp(kind, "tasks"))
		g->label = xasprintf("the %zu tasks of %s", n, parent);
	else
		g->label = xasprintf("%s on the %zu ranks of step %s", g->straggler, n, parent);
	free(parent);
}

/* Feeds rows sorted by (key, sub) to finish(), one group at a time. */
static void groups(struct store *st, struct acc *a, const char *kind, const struct member *m, size_t n)
{
	size_t first = 0;
	for (size_t i = 1; i <= n; i++)
		if (i == n || m[i].key != m[first].key || m[i].sub != m[first].sub) {
			finish(st, a, kind, m + first, i - first);
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

struct list {
	struct member *v;
	size_t n, alloc;
};

static void push(struct list *l, struct member m)
{
	XGROW(l->v, l->n + 1, l->alloc);
	l->v[l->n++] = m;
}

/* The step a ranked source's rank node hangs under; 0 when none.  ranks
 * is sorted by source (key). */
static int64_t step_of(const struct list *ranks, int64_t source)
{
	size_t lo = 0, hi = ranks->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ranks->v[mid].key < source)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ranks->n && ranks->v[lo].key == source ? ranks->v[lo].sub : 0;
}

int imbalance_compute(struct store *st, struct imbalance **out, size_t *n, char **err)
{
	sqlite3 *db = store_db(st);
	struct acc a = {0};
	struct list ranks = {0}, tasks = {0}, steps = {0}, sources = {0};
	sqlite3_stmt *q;
	int rc = -1;
	/* one scan of phases for every kind the groups need */
	if (sqlite3_prepare_v2(db,
			       "SELECT kind, parent_id, name_id, source_id, id, dur_ns FROM phases"
			       " WHERE kind IN (?1, ?2, ?3) AND parent_id IS NOT NULL",
			       -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int(q, 1, PHASE_RANK);
	sqlite3_bind_int(q, 2, PHASE_TASK);
	sqlite3_bind_int(q, 3, PHASE_PROFILER_STEP);
	int step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int kind = sqlite3_column_int(q, 0);
		int64_t parent = sqlite3_column_int64(q, 1), name = sqlite3_column_int64(q, 2);
		int64_t source = sqlite3_column_int64(q, 3), id = sqlite3_column_int64(q, 4);
		int64_t dur = sqlite3_column_int64(q, 5);
		if (kind == PHASE_RANK) {
			push(&ranks, (struct member){parent, 0, id, dur});
			push(&sources, (struct member){source, parent, id, 0});
		} else if (kind == PHASE_TASK) {
			push(&tasks, (struct member){parent, 0, id, dur});
		} else {
			push(&steps, (struct member){source, name, id, dur});
		}
	}
	sqlite3_finalize(q);
	if (step != SQLITE_DONE)
		goto fail;
	/* ranks of a step, tasks of a stage: siblings of one kind */
	if (ranks.n)
		qsort(ranks.v, ranks.n, sizeof(*ranks.v), by_key);
	if (tasks.n)
		qsort(tasks.v, tasks.n, sizeof(*tasks.v), by_key);
	groups(st, &a, "ranks", ranks.v, ranks.n);
	groups(st, &a, "tasks", tasks.v, tasks.n);
	/* one iteration across ranks: profiler steps of ranked sources, keyed
	 * by the step their rank node hangs under, and by name */
	if (sources.n)
		qsort(sources.v, sources.n, sizeof(*sources.v), by_key);
	size_t k = 0;
	for (size_t i = 0; i < steps.n; i++) {
		int64_t s = step_of(&sources, steps.v[i].key);
		if (s)
			steps.v[k++] = (struct member){s, steps.v[i].sub, steps.v[i].id,
						       steps.v[i].dur};
	}
	if (k)
		qsort(steps.v, k, sizeof(*steps.v), by_key);
	groups(st, &a, "iteration", steps.v, k);
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), by_impact);
	*out = a.v;
	*n = a.n;
	a.v = NULL;
	rc = 0;
	goto out;
fail:
	*err = xasprintf("cannot read phases for the imbalance analysis: %s", sqlite3_errmsg(db));
	imbalance_release(a.v, a.n);
out:
	free(ranks.v);
	free(tasks.v);
	free(steps.v);
	free(sources.v);
	return rc;
}

void imbalance_release(struct imbalance *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].label);
		free(v[i].straggler);
	}
	free(v);
}
