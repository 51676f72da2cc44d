/*
 * Stragglers and imbalance (DESIGN.md, Analyses).
 *
 * Ranks meet at collectives.  Where the ranks of a step do, the straggler
 * is the rank the others wait for: at each collective, the last to arrive;
 * every other rank waits inside the collective from its own arrival to the
 * last one.  How long a rank's step lasted is not the measure: a rank whose
 * step is longest because it started earliest is the one that waits.  A
 * collective is
 *   device  an NCCL kernel (HTA's communication kernels, model/analysis/gpubreak.c),
 *           arriving at its start; on every rank it ends once the last rank
 *           has arrived;
 *   host    where some rank has no NCCL kernel (gloo, CPU backends): a
 *           c10d:: operator (not one inside another on its thread), arriving
 *           at its start and lasting to the end of the gloo: op that carried
 *           it out on a gloo thread (the first one starting after it, in
 *           order: gloo's queue is first in, first out; a user annotation
 *           in Kineto's traces, an operator in the legacy export).
 * Calls of one kind (the kernel's collective, AllReduce or SendRecv, or the
 * c10d op's name) are matched across the ranks of a step by their order.
 * A match in which some rank had left before another arrived is no meeting
 * and stays unmatched, as do the calls beyond the fewest any rank made.
 * Per matched collective the last rank is charged the others' waits; the
 * straggler is the rank charged most, and the impact the last arrival less
 * the mean arrival (what the ranks would reach it sooner were the work
 * spread evenly), added up over the collectives.  Groups: the ranks of the
 * step, and each ProfilerStep#N of it when its collectives fall in two or
 * more (a collective belongs to the ProfilerStep#N during which its last
 * rank arrived).  Ranks whose calls all stay unmatched get no verdict.
 *
 * Siblings that never meet (GradeML's imbalance): the ideal is their mean
 * duration, the actual their longest, and the impact the difference, what
 * the group would save were its work spread evenly.  The groups: the ranks
 * of a step that meet at no collective, one ProfilerStep#N across them, and
 * the tasks of a Spark stage; two members at least.  The straggler is the
 * longest member; "slow" counts the members more than 10% over the ideal.
 *
 * Cost: one scan of phases (and of the names of collectives), then sorts
 * in memory; memory holds 48 bytes per rank, task, profiler step and
 * collective call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/analyze.h"
#include "model/analysis/gpubreak.h"
#include "model/analysis/imbalance.h"
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/util/nstime.h"
#include "model/util/strmap.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"
#include "model/util/search.h"

struct member {
	int64_t key, sub, id, src, start, dur;
};

struct acc {
	struct imbalance *v;
	size_t n, alloc;
};

/* A group's parent as its label names it: its kind and name ("step
 * train", "span load"), whatever level holds the group (level.h). */
static char *parent_label(struct store *st, int64_t id)
{
	int kind;
	level_of_phase(store_db(st), id, &kind);
	char *name = analysis_phase_name(st, id);
	char *s = xasprintf("%s %s", kind ? store_kind_name(kind) : "phase", name);
	free(name);
	return s;
}

/* Closes the group m[0..n) (one parent, one kind), measured by durations. */
static void finish(struct store *st, struct acc *a, const char *kind, const struct member *m,
		   size_t n)
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
	/* a stage names itself ("stage 3"); ranks' parent is any level */
	char *parent =
	    !strcmp(kind, "tasks") ? analysis_phase_name(st, m[0].key) : parent_label(st, m[0].key);
	if (!strcmp(kind, "ranks"))
		g->label = xasprintf("the %zu ranks of %s", n, parent);
	else if (!strcmp(kind, "tasks"))
		g->label = xasprintf("the %zu tasks of %s", n, parent);
	else
		g->label = xasprintf("%s on the %zu ranks of %s", g->straggler, n, parent);
	free(parent);
}

/* Feeds rows sorted by (key, sub) to finish(), one group at a time. */
static void groups(struct store *st, struct acc *a, const char *kind, const struct member *m,
		   size_t n)
{
	size_t first = 0;
	for (size_t i = 1; i <= n; i++)
		if (i == n || m[i].key != m[first].key || m[i].sub != m[first].sub) {
			finish(st, a, kind, m + first, i - first);
			first = i;
		}
}

static int cmp64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int by_key(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	int c = cmp64(a->key, b->key);
	c = c ? c : cmp64(a->sub, b->sub);
	return c ? c : cmp64(a->id, b->id);
}

static int by_key_start(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	int c = cmp64(a->key, b->key);
	return c ? c : cmp64(a->start, b->start);
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

/* The first row of l (sorted by key) whose key is at least key. */
static size_t lower(const struct list *l, int64_t key)
{
	size_t at;
	PARTITION_POINT(at, l->n, i, l->v[i].key < key);
	return at;
}

/* The step a ranked source's rank node hangs under; 0 when none.  ranks
 * is sorted by source (key). */
static int64_t step_of(const struct list *ranks, int64_t source)
{
	size_t i = lower(ranks, source);
	return i < ranks->n && ranks->v[i].key == source ? ranks->v[i].sub : 0;
}

/* ---- collectives ---- */

enum call_class { CALL_DEVICE, CALL_C10D, CALL_GLOO };

/* A name that may be a collective: its class, and the kind calls are
 * matched by. */
struct cname {
	int64_t id, kind;
	int cls;
};

struct cnames {
	struct cname *v;
	size_t n, alloc;
};

#define COLLECTIVE_NAMES "text LIKE 'nccl%' OR text LIKE 'c10d::%' OR text LIKE 'gloo:%'"

/* The names of NCCL kernels, c10d ops and gloo ops, by id.  An NCCL
 * kernel's kind is the word after its prefix ("ncclKernel_AllReduce_RING_LL_
 * Sum_float" and "ncclDevKernel_AllReduce_Sum_f32_RING_LL": AllReduce), a
 * c10d op's its name. */
static int collective_names(sqlite3 *db, struct cnames *out)
{
	sqlite3_stmt *q;
	struct strmap kinds = STRMAP_INIT;
	if (sqlite3_prepare_v2(
		db, "SELECT id, text FROM strings WHERE " COLLECTIVE_NAMES " ORDER BY id", -1, &q,
		NULL) != SQLITE_OK)
		return -1;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *s = col_text_or_null(q, 1);
		struct cname c = {.id = col_int(q, 0)};
		if (!s)
			continue;
		if (!strncmp(s, "c10d::", 6)) {
			c.cls = CALL_C10D;
			c.kind = c.id;
		} else if (!strncmp(s, "gloo:", 5)) {
			c.cls = CALL_GLOO;
		} else if (gpubreak_kernel_type(s) == GPUBREAK_COMM) {
			const char *w = strchr(s, '_');
			w = w ? w + 1 : s;
			size_t len = strcspn(w, "_(");
			c.cls = CALL_DEVICE;
			c.kind = strmap_put(&kinds, w, len, (int64_t)kinds.n, NULL)->value;
		} else {
			continue;
		}
		XGROW(out->v, out->n + 1, out->alloc);
		out->v[out->n++] = c;
	}
	sqlite3_finalize(q);
	strmap_clear(&kinds);
	return rc == SQLITE_DONE ? 0 : -1;
}

static const struct cname *cname_find(const struct cnames *c, int64_t id)
{
	size_t lo;
	PARTITION_POINT(lo, c->n, i, c->v[i].id < id);
	return lo < c->n && c->v[lo].id == id ? &c->v[lo] : NULL;
}

/* One collective call on one source. */
struct call {
	int64_t src, kind, track, start, end;
	int cls;
};

struct calls {
	struct call *v;
	size_t n, alloc;
};

static void call_push(struct calls *l, struct call c)
{
	XGROW(l->v, l->n + 1, l->alloc);
	l->v[l->n++] = c;
}

/* By source, class, start, and the outer of two calls first. */
static int by_class(const void *x, const void *y)
{
	const struct call *a = x, *b = y;
	int c = cmp64(a->src, b->src);
	c = c ? c : cmp64(a->cls, b->cls);
	c = c ? c : cmp64(a->start, b->start);
	return c ? c : cmp64(b->end, a->end);
}

static int by_kind(const void *x, const void *y)
{
	const struct call *a = x, *b = y;
	int c = cmp64(a->src, b->src);
	c = c ? c : cmp64(a->kind, b->kind);
	return c ? c : cmp64(a->start, b->start);
}

/* Splits the calls, sorted by_class, into each source's NCCL kernels (dev)
 * and its outermost c10d ops carried to the end of their gloo: ops (host),
 * both sorted by_kind. */
static void collectives(const struct calls *c, struct calls *dev, struct calls *host)
{
	size_t i = 0;
	while (i < c->n) {
		int64_t src = c->v[i].src;
		size_t h = i, g, g1;
		while (h < c->n && c->v[h].src == src && c->v[h].cls != CALL_GLOO)
			h++;
		for (g = g1 = h; g1 < c->n && c->v[g1].src == src;)
			g1++;
		const struct call *outer = NULL;
		for (; i < h; i++) {
			struct call x = c->v[i];
			if (x.cls == CALL_DEVICE) {
				call_push(dev, x);
				continue;
			}
			if (outer && x.track == outer->track && x.start < outer->end &&
			    x.end <= outer->end)
				continue; /* a c10d op inside another */
			outer = &c->v[i];
			while (g < g1 && c->v[g].start < x.start)
				g++;
			if (g < g1) {
				x.end = c->v[g].end > x.end ? c->v[g].end : x.end;
				g++;
			}
			call_push(host, x);
		}
		i = g1;
	}
	if (dev->n)
		qsort(dev->v, dev->n, sizeof(*dev->v), by_kind);
	if (host->n)
		qsort(host->v, host->n, sizeof(*host->v), by_kind);
}

/* Whether a phase of kind may be a call of class cls: an NCCL kernel is
 * device work, a c10d op a host operator, a gloo: op a user annotation in
 * Kineto's traces and an operator in the legacy export. */
static int call_fits(int kind, int cls)
{
	switch (cls) {
	case CALL_DEVICE:
		return kind == PHASE_KERNEL;
	case CALL_C10D:
		return kind == PHASE_OPERATOR;
	default:
		return kind == PHASE_ANNOTATION || kind == PHASE_OPERATOR;
	}
}

/* The first call of source src in l (sorted by_kind), and the end of its
 * run in *hi. */
static size_t calls_of(const struct calls *l, int64_t src, size_t *hi)
{
	size_t lo = 0, h = l->n;
	while (lo < h) {
		size_t mid = lo + (h - lo) / 2;
		if (l->v[mid].src < src)
			lo = mid + 1;
		else
			h = mid;
	}
	for (h = lo; h < l->n && l->v[h].src == src;)
		h++;
	*hi = h;
	return lo;
}

/* ---- ranks that meet ---- */

/* A rank of the step being matched. */
struct seat {
	int64_t rank_id, src, rank;
	char *name;
	size_t lo, hi, pos; /* its calls in the chosen list, and the next one */
};

/* What the matched collectives of a step, or of one ProfilerStep#N of it,
 * add up to; the arrays hold one value per seat. */
struct tally {
	int64_t name_id; /* the ProfilerStep#N's name; 0: the whole step */
	int64_t collectives, spread;
	double over_mean;
	int64_t *last, *wait, *charged, *phase; /* phase: the seat's ProfilerStep#N */
};

static void tally_init(struct tally *t, int64_t name_id, size_t m)
{
	*t = (struct tally){.name_id = name_id};
	t->last = xcalloc(4 * m, sizeof(int64_t));
	t->wait = t->last + m;
	t->charged = t->wait + m;
	t->phase = t->charged + m;
}

/* One collective: arrivals a[0..m), s the last. */
static void tally_add(struct tally *t, const int64_t *a, size_t m, size_t s)
{
	int64_t first = a[0], sum = 0;
	for (size_t i = 1; i < m; i++)
		first = a[i] < first ? a[i] : first;
	t->collectives++;
	t->last[s]++;
	for (size_t i = 0; i < m; i++) {
		t->wait[i] += a[s] - a[i];
		t->charged[s] += a[s] - a[i];
		sum += a[i] - first;
	}
	t->spread += a[s] - first;
	t->over_mean += (double)(a[s] - first) - (double)sum / (double)m;
}

/* What the matching of one step works with. */
struct meet {
	struct store *st;
	struct acc *acc;
	const struct calls *dev, *host;
	const struct list *psteps; /* profiler steps, sorted by (source, start) */
	sqlite3_stmt *who;	   /* a rank node's name and its source's rank */
};

/* The group of tally t, when its ranks waited at all. */
static void meet_group(struct meet *mt, const struct tally *t, const struct seat *seat, size_t m,
		       int64_t step_id, const char *meets, int64_t unmatched)
{
	int64_t impact = llround(t->over_mean);
	if (!t->collectives || impact <= 0)
		return;
	size_t s = 0;
	for (size_t i = 1; i < m; i++)
		if (t->charged[i] > t->charged[s] ||
		    (t->charged[i] == t->charged[s] && t->last[i] > t->last[s]))
			s = i;
	XGROW(mt->acc->v, mt->acc->n + 1, mt->acc->alloc);
	struct imbalance *g = &mt->acc->v[mt->acc->n++];
	*g = (struct imbalance){.parent_id = step_id,
				.kind = t->name_id ? "iteration" : "ranks",
				.members = (int64_t)m,
				.ideal_ns = t->spread - impact,
				.actual_ns = t->spread,
				.impact_ns = impact,
				.straggler_id =
				    t->name_id && t->phase[s] ? t->phase[s] : seat[s].rank_id,
				.straggler = xstrdup(seat[s].name),
				.meets = meets,
				.collectives = t->collectives,
				.unmatched = unmatched,
				.last = t->last[s],
				.ranks = xcalloc(m, sizeof(struct imbalance_rank)),
				.nranks = m};
	for (size_t i = 0, k = 1; i < m; i++) {
		struct imbalance_rank *r = &g->ranks[i == s ? 0 : k++];
		*r = (struct imbalance_rank){seat[i].rank_id, xstrdup(seat[i].name), t->last[i],
					     t->wait[i]};
		g->slow += t->last[i] > 0;
		if (i != s)
			g->wait_ns += t->wait[i];
	}
	char *parent = parent_label(mt->st, step_id);
	if (t->name_id) {
		char *it = analysis_phase_name(mt->st, g->straggler_id);
		g->label = xasprintf("%s on the %zu ranks of %s", it, m, parent);
		free(it);
	} else {
		g->label = xasprintf("the %zu ranks of %s", m, parent);
	}
	free(parent);
}

static int by_rank(const void *x, const void *y)
{
	const struct seat *a = x, *b = y;
	int c = cmp64(a->rank, b->rank);
	return c ? c : cmp64(a->rank_id, b->rank_id);
}

static int cmp_i64(const void *x, const void *y)
{
	return cmp64(*(const int64_t *)x, *(const int64_t *)y);
}

/* The ProfilerStep#N (a row of psteps) of source src that holds t, or NULL. */
static const struct member *pstep_at(const struct list *ps, int64_t src, int64_t t)
{
	size_t lo = lower(ps, src), hi = lo;
	for (size_t n = ps->n; lo < n;) { /* the first row past src's with start <= t */
		size_t mid = lo + (n - lo) / 2;
		if (ps->v[mid].key == src && ps->v[mid].start <= t)
			lo = mid + 1;
		else
			n = mid;
	}
	if (lo == hi || t >= ps->v[lo - 1].start + ps->v[lo - 1].dur)
		return NULL;
	return &ps->v[lo - 1];
}

/* Matches the collectives of the ranks m[0..n) of one step.  1 when they
 * meet at collectives (every rank calls some), 0 when they do not. */
static int meet_step(struct meet *mt, const struct member *m, size_t n)
{
	struct seat *seat = xcalloc(n, sizeof(*seat));
	int64_t *a = xcalloc(n, sizeof(*a)), *names = NULL;
	struct tally *t = NULL;
	size_t niter = 0, nnames = 0, alloc = 0;
	const struct calls *l = mt->dev;
	const char *meets = "device";
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		seat[i] = (struct seat){.rank_id = m[i].id, .src = m[i].src, .rank = -1};
		sqlite3_bind_int64(mt->who, 1, m[i].id);
		if (sqlite3_step(mt->who) == SQLITE_ROW) {
			seat[i].name = col_strdup_or_null(mt->who, 0);
			seat[i].rank = col_int(mt->who, 1);
		}
		sqlite3_reset(mt->who);
		if (!seat[i].name)
			seat[i].name = xstrdup("?");
	}
	qsort(seat, n, sizeof(*seat), by_rank);
	for (int pass = 0; pass < 2; pass++) {
		size_t have = 0;
		for (size_t i = 0; i < n; i++) {
			seat[i].pos = seat[i].lo = calls_of(l, seat[i].src, &seat[i].hi);
			have += seat[i].hi > seat[i].lo;
		}
		if (have == n)
			break;
		if (pass) {
			l = NULL;
		} else {
			l = mt->host;
			meets = "host";
		}
	}
	if (!l)
		goto out;
	rc = 1;
	/* the ProfilerStep#N names of these ranks: one tally each, after the step's */
	for (size_t i = 0; i < n; i++)
		for (size_t k = lower(mt->psteps, seat[i].src);
		     k < mt->psteps->n && mt->psteps->v[k].key == seat[i].src; k++) {
			XGROW(names, nnames + 1, alloc);
			names[nnames++] = mt->psteps->v[k].sub;
		}
	if (nnames)
		qsort(names, nnames, sizeof(*names), cmp_i64);
	t = xcalloc(nnames + 1, sizeof(*t));
	tally_init(&t[0], 0, n);
	for (size_t k = 0; k < nnames; k++)
		if (!k || names[k] != names[k - 1])
			tally_init(&t[1 + niter++], names[k], n);
	int64_t unmatched = 0;
	for (;;) {
		/* the next kind: the smallest among the ranks' next calls */
		int64_t kind = INT64_MAX;
		for (size_t i = 0; i < n; i++)
			if (seat[i].pos < seat[i].hi && l->v[seat[i].pos].kind < kind)
				kind = l->v[seat[i].pos].kind;
		if (kind == INT64_MAX)
			break;
		size_t fewest = SIZE_MAX;
		for (size_t i = 0; i < n; i++) {
			size_t c = 0;
			while (seat[i].pos + c < seat[i].hi && l->v[seat[i].pos + c].kind == kind)
				c++;
			fewest = c < fewest ? c : fewest;
			unmatched += (int64_t)c;
		}
		for (size_t j = 0; j < fewest; j++) {
			int64_t left = INT64_MAX;
			size_t s = 0;
			for (size_t i = 0; i < n; i++) {
				const struct call *c = &l->v[seat[i].pos + j];
				a[i] = c->start;
				left = c->end < left ? c->end : left;
				s = a[i] > a[s] ? i : s;
			}
			if (left < a[s])
				continue; /* a rank left before the last came: no meeting */
			unmatched -= (int64_t)n;
			tally_add(&t[0], a, n, s);
			const struct member *p = pstep_at(mt->psteps, seat[s].src, a[s]);
			for (size_t k = 0; p && k < niter; k++)
				if (t[1 + k].name_id == p->sub) {
					tally_add(&t[1 + k], a, n, s);
					if (!t[1 + k].phase[s])
						t[1 + k].phase[s] = p->id;
				}
		}
		for (size_t i = 0; i < n; i++)
			while (seat[i].pos < seat[i].hi && l->v[seat[i].pos].kind == kind)
				seat[i].pos++;
	}
	meet_group(mt, &t[0], seat, n, m[0].key, meets, unmatched);
	size_t used = 0;
	for (size_t k = 0; k < niter; k++)
		used += t[1 + k].collectives > 0;
	for (size_t k = 0; used > 1 && k < niter; k++)
		meet_group(mt, &t[1 + k], seat, n, m[0].key, meets, 0);
out:
	for (size_t k = 0; t && k <= niter; k++)
		free(t[k].last);
	for (size_t i = 0; i < n; i++)
		free(seat[i].name);
	free(t);
	free(names);
	free(seat);
	free(a);
	return rc;
}

/* Matches each step's ranks; drops the ranks (and profiler steps, rows of
 * sources: key source, sub step) of the steps whose ranks meet, which are
 * not judged by their durations. */
static void meet_all(struct meet *mt, struct list *ranks, const struct list *sources,
		     struct list *steps)
{
	int64_t *met = NULL;
	size_t nmet = 0, alloc = 0, first = 0;
	for (size_t i = 1; i <= ranks->n; i++) {
		if (i < ranks->n && ranks->v[i].key == ranks->v[first].key)
			continue;
		if (i - first >= 2 && meet_step(mt, ranks->v + first, i - first)) {
			XGROW(met, nmet + 1, alloc);
			met[nmet++] = ranks->v[first].key;
		}
		first = i;
	}
	size_t k = 0;
	for (size_t i = 0; i < ranks->n; i++)
		if (!nmet || !bsearch(&ranks->v[i].key, met, nmet, sizeof(*met), cmp_i64))
			ranks->v[k++] = ranks->v[i];
	ranks->n = k;
	k = 0;
	for (size_t i = 0; i < steps->n; i++) {
		int64_t s = step_of(sources, steps->v[i].key);
		if (s && (!nmet || !bsearch(&s, met, nmet, sizeof(*met), cmp_i64)))
			steps->v[k++] = (struct member){s, steps->v[i].sub,   steps->v[i].id,
							0, steps->v[i].start, steps->v[i].dur};
	}
	steps->n = k;
	free(met);
}

int imbalance_compute(struct store *st, struct imbalance **out, size_t *n, char **err)
{
	sqlite3 *db = store_db(st);
	struct acc a = {0};
	struct list ranks = {0}, tasks = {0}, steps = {0}, sources = {0}, psteps = {0};
	struct cnames names = {0};
	struct calls calls = {0}, dev = {0}, host = {0};
	struct meet mt = {.st = st, .acc = &a, .dev = &dev, .host = &host, .psteps = &psteps};
	sqlite3_stmt *q = NULL;
	int rc = -1;
	if (collective_names(db, &names) < 0)
		goto fail;
	/* one scan of phases for every kind the groups need */
	if (sqlite3_prepare_v2(db,
			       "SELECT kind, parent_id, name_id, source_id, id, start_ns, dur_ns,"
			       " track_id FROM phases"
			       " WHERE (kind IN (?1, ?2, ?3) AND parent_id IS NOT NULL)"
			       " OR (kind IN (?4, ?5, ?6) AND name_id IN (SELECT id FROM strings"
			       " WHERE " COLLECTIVE_NAMES "))",
			       -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int(q, 1, PHASE_RANK);
	sqlite3_bind_int(q, 2, PHASE_TASK);
	sqlite3_bind_int(q, 3, PHASE_PROFILER_STEP);
	/* without a collective's name in the file, kind 0 (none) skips the test */
	sqlite3_bind_int(q, 4, names.n ? PHASE_KERNEL : PHASE_NONE);
	sqlite3_bind_int(q, 5, names.n ? PHASE_OPERATOR : PHASE_NONE);
	sqlite3_bind_int(q, 6, names.n ? PHASE_ANNOTATION : PHASE_NONE);
	int step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int kind = col_int32(q, 0);
		int64_t parent = col_int(q, 1), name = col_int(q, 2);
		int64_t source = col_int(q, 3), id = col_int(q, 4);
		int64_t start = col_time(q, 5), dur = col_dur(q, 6);
		if (kind == PHASE_RANK) {
			push(&ranks, (struct member){parent, 0, id, source, start, dur});
			push(&sources, (struct member){source, parent, id, source, 0, 0});
		} else if (kind == PHASE_TASK) {
			push(&tasks, (struct member){parent, 0, id, source, start, dur});
		} else if (kind == PHASE_PROFILER_STEP) {
			push(&steps, (struct member){source, name, id, source, start, dur});
		} else {
			const struct cname *c = cname_find(&names, name);
			if (c && call_fits(kind, c->cls))
				call_push(&calls, (struct call){source, c->kind, col_int(q, 7),
								start, ns_end(start, dur), c->cls});
		}
	}
	sqlite3_finalize(q);
	q = NULL;
	if (step != SQLITE_DONE)
		goto fail;
	if (calls.n)
		qsort(calls.v, calls.n, sizeof(*calls.v), by_class);
	collectives(&calls, &dev, &host);
	if (ranks.n)
		qsort(ranks.v, ranks.n, sizeof(*ranks.v), by_key);
	if (tasks.n)
		qsort(tasks.v, tasks.n, sizeof(*tasks.v), by_key);
	if (sources.n)
		qsort(sources.v, sources.n, sizeof(*sources.v), by_key);
	psteps.n = psteps.alloc = steps.n;
	psteps.v = xmalloc((steps.n ? steps.n : 1) * sizeof(*psteps.v));
	if (steps.n)
		memcpy(psteps.v, steps.v, steps.n * sizeof(*steps.v));
	if (psteps.n)
		qsort(psteps.v, psteps.n, sizeof(*psteps.v), by_key_start);
	if (sqlite3_prepare_v2(db,
			       "SELECT n.text, coalesce(s.rank, -1) FROM phases p"
			       " JOIN strings n ON n.id = p.name_id"
			       " LEFT JOIN sources s ON s.id = p.source_id WHERE p.id = ?1",
			       -1, &mt.who, NULL) != SQLITE_OK)
		goto fail;
	meet_all(&mt, &ranks, &sources, &steps);
	/* ranks that do not meet, tasks of a stage: siblings of one kind */
	groups(st, &a, "ranks", ranks.v, ranks.n);
	groups(st, &a, "tasks", tasks.v, tasks.n);
	/* one iteration across ranks that do not meet: profiler steps keyed by
	 * the step their rank node hangs under, and by name */
	if (steps.n)
		qsort(steps.v, steps.n, sizeof(*steps.v), by_key);
	groups(st, &a, "iteration", steps.v, steps.n);
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), by_impact);
	*out = a.v;
	*n = a.n;
	a.v = NULL;
	rc = 0;
	goto out;
fail:
	*err = xasprintf("cannot read phases for the imbalance analysis: %s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	imbalance_release(a.v, a.n);
out:
	sqlite3_finalize(mt.who);
	free(ranks.v);
	free(tasks.v);
	free(steps.v);
	free(sources.v);
	free(psteps.v);
	free(names.v);
	free(calls.v);
	free(dev.v);
	free(host.v);
	return rc;
}

const struct imbalance_rank *imbalance_longest(const struct imbalance *g)
{
	const struct imbalance_rank *best = NULL;
	for (size_t i = 1; i < g->nranks; i++)
		if (!best || g->ranks[i].wait_ns > best->wait_ns)
			best = &g->ranks[i];
	return best;
}

char *imbalance_says(const struct imbalance *g)
{
	char w[32], l[32], u[48] = "";
	const struct imbalance_rank *r = imbalance_longest(g);
	text_duration(w, sizeof(w), g->wait_ns);
	if (g->unmatched)
		snprintf(u, sizeof(u), ", %lld calls unmatched", (long long)g->unmatched);
	char *longest =
	    r ? xasprintf(", %s the longest (%s)", r->name, text_duration(l, sizeof(l), r->wait_ns))
	      : xstrdup("");
	char *s = xasprintf("%s arrives last at %lld of %lld collectives (%s%s); the others wait"
			    " %s in all%s",
			    g->straggler, (long long)g->last, (long long)g->collectives,
			    g->meets && !strcmp(g->meets, "device") ? "NCCL kernels on the GPU"
								    : "c10d ops on the host",
			    u, w, longest);
	free(longest);
	return s;
}

void imbalance_release(struct imbalance *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].label);
		free(v[i].straggler);
		for (size_t k = 0; k < v[i].nranks; k++)
			free(v[i].ranks[k].name);
		free(v[i].ranks);
	}
	free(v);
}
