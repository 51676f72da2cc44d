/*
 * The windows of during and within (see funcs.h), answered in C so that n
 * rows against m windows cost O((n + m) log m): the SQL they replace looked
 * at every window for every row (89 s for 90 k phases during the
 * operators).  gm_wset, an aggregate over a window CTE, keeps the windows
 * as a set and returns its number; the compiler passes that number, as an
 * uncorrelated subquery (which SQLite evaluates once), to gm_during or
 * gm_near, called once a row.
 *
 * gm_during asks for a window with w0 <= t0 and t1 <= w1 (w0 <= t < w1 for
 * an instant): the windows sorted by w0 with the running maximum of w1
 * answer it with one binary search.
 *
 * gm_near asks for the window with the least gap max(w0 - t1, t0 - w1, 0)
 * <= d, the lowest wid among equals, other than self.  For a row t0 <= t1
 * and a window w0 <= w1 the gap is 0 exactly when they overlap: when the
 * window holds t0 (w0 <= t0 <= w1) or starts in (t0, t1].  A window that
 * does not overlap lies wholly after (gap w0 - t1) or wholly before (gap
 * t0 - w1).  So, built on the first gm_near of a set:
 *   - the two lowest wids holding a point: a segment tree over the
 *     elementary intervals between the windows' bounds, each window kept
 *     in the O(log m) nodes that cover it, a point's answer on the path
 *     from its leaf to the root;
 *   - the two lowest wids starting in a range: a segment tree over the
 *     windows sorted by start;
 *   - the nearest after: the first start past t1; the nearest before: the
 *     windows sorted by end, descending, the first end before t0.
 * Two wids rather than one so that self can be passed over.  An inverted
 * window (w1 < w0) or row, which only a file edited by hand holds, is
 * measured against every window, as the SQL did.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/search.h"
#include "model/util/xalloc.h"
#include "query/funcs_int.h"

__extension__ typedef __int128 i128;

struct wwin {
	int64_t wid, w0, w1;
};

/* The two lowest distinct wid ranks of a group, a < b; NONE where fewer. */
struct low2 {
	uint32_t a, b;
};

#define NONE UINT32_MAX

struct wset {
	struct wwin *v; /* every window, sorted by (w0, wid) */
	size_t n, alloc;
	int64_t *run; /* run[i]: the largest w1 of v[0..i] */
	/* gm_near's, built on its first call for the set */
	int built;
	uint32_t *ok;	  /* the indexes of v of the windows w0 <= w1 */
	size_t nok;	  /* as v is sorted, these are too */
	uint32_t *odd;	  /* the indexes of v of the windows w1 < w0 */
	size_t nodd;	  /* (scanned whole for every row) */
	int64_t *ids;	  /* the distinct wids of ok, ascending: a rank's wid */
	size_t nids;	  /* (a file edited by hand may repeat an id) */
	uint32_t *byend;  /* indexes of ok, by (w1 descending, wid) */
	int64_t *xs;	  /* the elementary bounds: every w0 and w1 + 1 of ok */
	size_t nxs;	  /* (interval i is [xs[i], xs[i + 1])) */
	struct low2 *pt;  /* 2 * nxs nodes: the windows holding each interval */
	struct low2 *beg; /* 2 * nok nodes: the windows by start, as ok */
};

void funcs_wset_free(struct wset *w)
{
	if (w) {
		free(w->v);
		free(w->run);
		free(w->ok);
		free(w->odd);
		free(w->ids);
		free(w->byend);
		free(w->xs);
		free(w->pt);
		free(w->beg);
		free(w);
	}
}

/* ---- gm_wset ---- */

struct wset_acc {
	struct wset *w;
};

void gm_wset_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct wset_acc *a = sqlite3_aggregate_context(ctx, sizeof(*a));
	if (!a) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!a->w)
		a->w = xcalloc(1, sizeof(*a->w));
	for (int i = 0; i < 3; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	struct wset *w = a->w;
	XGROW(w->v, w->n + 1, w->alloc);
	w->v[w->n++] = (struct wwin){sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]),
				     sqlite3_value_int64(argv[2])};
}

static int cmp_wwin(const void *x, const void *y)
{
	const struct wwin *a = x, *b = y;
	if (a->w0 != b->w0)
		return a->w0 < b->w0 ? -1 : 1;
	return (a->wid > b->wid) - (a->wid < b->wid);
}

void gm_wset_final(sqlite3_context *ctx)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	struct wset_acc *a = sqlite3_aggregate_context(ctx, 0);
	struct wset *w = a && a->w ? a->w : xcalloc(1, sizeof(*w));
	if (w->n >= NONE) {
		funcs_wset_free(w);
		sqlite3_result_error(ctx, "too many windows: narrow the window's query", -1);
		return;
	}
	if (w->n)
		qsort(w->v, w->n, sizeof(*w->v), cmp_wwin);
	/* the same set as the last one (the WHERE and the column each ask
	 * for it): share it */
	struct wset *last = f->nwsets ? f->wsets[f->nwsets - 1] : NULL;
	if (last && last->n == w->n && (!w->n || !memcmp(last->v, w->v, w->n * sizeof(*w->v)))) {
		funcs_wset_free(w);
		sqlite3_result_int64(ctx, (int64_t)f->nwsets - 1);
		return;
	}
	w->run = xmalloc((w->n ? w->n : 1) * sizeof(*w->run));
	for (size_t i = 0; i < w->n; i++)
		w->run[i] = i && w->run[i - 1] > w->v[i].w1 ? w->run[i - 1] : w->v[i].w1;
	f->wsets = xrealloc(f->wsets, (f->nwsets + 1) * sizeof(*f->wsets));
	f->wsets[f->nwsets++] = w;
	sqlite3_result_int64(ctx, (int64_t)f->nwsets - 1);
}

/* The set argv[0] names, or NULL: an argument NULL (no result), or no such
 * set (an error). */
static struct wset *arg_wset(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	for (int i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return NULL;
	int64_t k = sqlite3_value_int64(argv[0]);
	if (k < 0 || (uint64_t)k >= f->nwsets) {
		sqlite3_result_error(ctx, "no such window set", -1);
		return NULL;
	}
	return f->wsets[k];
}

/* ---- gm_during ---- */

void gm_during(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct wset *w = arg_wset(ctx, argc, argv);
	if (!w)
		return;
	int64_t t0 = sqlite3_value_int64(argv[1]);
	size_t p;
	PARTITION_POINT(p, w->n, i, w->v[i].w0 <= t0);
	int in = 0;
	if (p && argc > 2)
		in = w->run[p - 1] >= sqlite3_value_int64(argv[2]);
	else if (p)
		in = w->run[p - 1] > t0;
	sqlite3_result_int(ctx, in);
}

/* ---- gm_near's structures ---- */

static void low2_add(struct low2 *x, uint32_t r)
{
	if (r == x->a || r == x->b)
		return;
	if (r < x->a) {
		x->b = x->a;
		x->a = r;
	} else if (r < x->b) {
		x->b = r;
	}
}

static void low2_merge(struct low2 *x, const struct low2 *y)
{
	low2_add(x, y->a);
	low2_add(x, y->b);
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

static int cmp_byend(const void *x, const void *y, void *ctx)
{
	const struct wset *w = ctx;
	const struct wwin *a = &w->v[w->ok[*(const uint32_t *)x]];
	const struct wwin *b = &w->v[w->ok[*(const uint32_t *)y]];
	if (a->w1 != b->w1)
		return a->w1 > b->w1 ? -1 : 1;
	return (a->wid > b->wid) - (a->wid < b->wid);
}

/* Sorts v[0..n) and drops repeats; the count left. */
static size_t sort_unique(int64_t *v, size_t n)
{
	size_t k = 0;
	if (n)
		qsort(v, n, sizeof(*v), cmp_i64);
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* The index of x in the sorted v[0..n), which holds it. */
static size_t index_of(const int64_t *v, size_t n, int64_t x)
{
	size_t at;
	PARTITION_POINT(at, n, i, v[i] < x);
	return at;
}

static void wset_build(struct wset *w)
{
	w->built = 1;
	w->ok = xmalloc((w->n ? w->n : 1) * sizeof(*w->ok));
	w->odd = xmalloc((w->n ? w->n : 1) * sizeof(*w->odd));
	for (size_t i = 0; i < w->n; i++) {
		if (w->v[i].w0 <= w->v[i].w1)
			w->ok[w->nok++] = (uint32_t)i;
		else
			w->odd[w->nodd++] = (uint32_t)i;
	}
	size_t n = w->nok;
	w->ids = xmalloc((n ? n : 1) * sizeof(*w->ids));
	w->xs = xmalloc((2 * n + 1) * sizeof(*w->xs));
	w->byend = xmalloc((n ? n : 1) * sizeof(*w->byend));
	for (size_t j = 0; j < n; j++) {
		const struct wwin *x = &w->v[w->ok[j]];
		w->ids[j] = x->wid;
		w->xs[w->nxs++] = x->w0;
		if (x->w1 < INT64_MAX)
			w->xs[w->nxs++] = x->w1 + 1;
		w->byend[j] = (uint32_t)j;
	}
	w->nids = sort_unique(w->ids, n);
	w->nxs = sort_unique(w->xs, w->nxs);
	if (n)
		qsort_r(w->byend, n, sizeof(*w->byend), cmp_byend, w);
	size_t m = w->nxs;
	w->pt = xmalloc((2 * m + 1) * sizeof(*w->pt));
	w->beg = xmalloc((2 * n + 1) * sizeof(*w->beg));
	for (size_t i = 0; i < 2 * m + 1; i++)
		w->pt[i] = (struct low2){NONE, NONE};
	for (size_t j = 0; j < n; j++) {
		const struct wwin *x = &w->v[w->ok[j]];
		uint32_t r = (uint32_t)index_of(w->ids, w->nids, x->wid);
		w->beg[n + j] = (struct low2){r, NONE};
		/* [w0, w1] holds the intervals [xs[l], xs[r]) */
		size_t lo = index_of(w->xs, m, x->w0) + m;
		size_t hi = (x->w1 < INT64_MAX ? index_of(w->xs, m, x->w1 + 1) : m) + m;
		for (; lo < hi; lo >>= 1, hi >>= 1) {
			if (lo & 1)
				low2_add(&w->pt[lo++], r);
			if (hi & 1)
				low2_add(&w->pt[--hi], r);
		}
	}
	for (size_t i = n; i-- > 1;) {
		w->beg[i] = w->beg[2 * i];
		low2_merge(&w->beg[i], &w->beg[2 * i + 1]);
	}
}

/* ---- gm_near ---- */

/* The best so far: the least gap, then the lowest wid. */
struct nbest {
	int found;
	i128 gap;
	int64_t wid;
};

static void nbest_offer(struct nbest *b, i128 gap, int64_t wid)
{
	if (!b->found || gap < b->gap || (gap == b->gap && wid < b->wid)) {
		b->found = 1;
		b->gap = gap;
		b->wid = wid;
	}
}

/* Offers x by the gap's definition (any window, any row). */
static void near_offer(struct nbest *b, const struct wwin *x, i128 t0, i128 t1, i128 d,
		       int has_self, int64_t self)
{
	if (has_self && x->wid == self)
		return;
	i128 g = (i128)x->w0 - t1, g2 = t0 - (i128)x->w1;
	if (g2 > g)
		g = g2;
	if (g < 0)
		g = 0;
	if (g <= d)
		nbest_offer(b, g, x->wid);
}

/* The windows w0 <= w1 that overlap [t0, t1] (t0 <= t1): their two lowest
 * wid ranks. */
static struct low2 near_overlap(const struct wset *w, int64_t t0, int64_t t1)
{
	struct low2 acc = {NONE, NONE};
	size_t m = w->nxs, n = w->nok, at;
	/* holding t0: the path up from t0's interval */
	PARTITION_POINT(at, m, i, w->xs[i] <= t0);
	if (at)
		for (size_t i = at - 1 + m; i >= 1; i >>= 1)
			low2_merge(&acc, &w->pt[i]);
	/* starting in (t0, t1] */
	size_t lo, hi;
	PARTITION_POINT(lo, n, i, w->v[w->ok[i]].w0 <= t0);
	PARTITION_POINT(hi, n, i, w->v[w->ok[i]].w0 <= t1);
	for (lo += n, hi += n; lo < hi; lo >>= 1, hi >>= 1) {
		if (lo & 1)
			low2_merge(&acc, &w->beg[lo++]);
		if (hi & 1)
			low2_merge(&acc, &w->beg[--hi]);
	}
	return acc;
}

/* Among the windows w0 <= w1, the nearest to [t0, t1] (t0 <= t1). */
static void near_ok(const struct wset *w, struct nbest *b, int64_t t0, int64_t t1, i128 d,
		    int has_self, int64_t self)
{
	struct low2 o = near_overlap(w, t0, t1);
	uint32_t sr = NONE;
	if (has_self) {
		size_t at = index_of(w->ids, w->nids, self);
		if (at < w->nids && w->ids[at] == self)
			sr = (uint32_t)at;
	}
	uint32_t r = o.a != sr ? o.a : o.b;
	if (r != NONE) {
		nbest_offer(b, 0, w->ids[r]);
		return;
	}
	/* none overlaps: the first to start after t1, the last to end before t0 */
	size_t n = w->nok, i;
	PARTITION_POINT(i, n, k, w->v[w->ok[k]].w0 <= t1);
	while (i < n && has_self && w->v[w->ok[i]].wid == self)
		i++;
	if (i < n && (i128)w->v[w->ok[i]].w0 - t1 <= d)
		nbest_offer(b, (i128)w->v[w->ok[i]].w0 - t1, w->v[w->ok[i]].wid);
	PARTITION_POINT(i, n, k, w->v[w->ok[w->byend[k]]].w1 >= t0);
	while (i < n && has_self && w->v[w->ok[w->byend[i]]].wid == self)
		i++;
	if (i < n) {
		const struct wwin *x = &w->v[w->ok[w->byend[i]]];
		if ((i128)t0 - x->w1 <= d)
			nbest_offer(b, (i128)t0 - x->w1, x->wid);
	}
}

void gm_near(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct wset *w = arg_wset(ctx, argc, argv);
	if (!w)
		return;
	int64_t t0 = sqlite3_value_int64(argv[1]), t1 = sqlite3_value_int64(argv[2]);
	i128 d = sqlite3_value_int64(argv[3]);
	int has_self = argc > 4;
	int64_t self = has_self ? sqlite3_value_int64(argv[4]) : 0;
	struct nbest b = {0};
	if (d < 0)
		return;
	if (!w->built)
		wset_build(w);
	if (t0 <= t1) {
		near_ok(w, &b, t0, t1, d, has_self, self);
		for (size_t i = 0; i < w->nodd; i++)
			near_offer(&b, &w->v[w->odd[i]], t0, t1, d, has_self, self);
	} else {
		for (size_t i = 0; i < w->n; i++)
			near_offer(&b, &w->v[i], t0, t1, d, has_self, self);
	}
	if (b.found)
		sqlite3_result_int64(ctx, b.wid);
}
