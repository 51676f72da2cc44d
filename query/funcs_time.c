/*
 * SQL functions over time (see funcs.h): a metric's time-weighted mean and
 * max, its value at a time and its time at or above a threshold over a
 * window (gm_twmean, gm_twmax, gm_valueat, gm_satns: each series loaded
 * once per connection with prefix sums and a max segment tree); the phase
 * running at an event without a phase_id (gm_running, one scan of phases
 * for all of them).  The windows of during and within are
 * funcs_window.c's.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/util/nstime.h"
#include "model/store/sample.h"
#include "query/funcs_int.h"
#include "model/util/xalloc.h"
#include "model/util/search.h"

/* One metric's samples, sorted by time, with what windows need. */
struct series {
	int64_t id;
	size_t n;
	int64_t *t;
	double *v;
	int64_t *e;	 /* e[i]: where sample i stops holding (model/store/sample.h) */
	int64_t lone;	 /* a series of one sample (no period): it holds for no time */
	double *area;	 /* area[i]: integral of the step function over [t[0], t[i]) */
	double *cov;	 /* cov[i]: the time a sample holds over [t[0], t[i]) */
	double *seg;	 /* max segment tree over v: seg[n + i] = v[i] */
	double capacity; /* NAN: unknown */
	double sat_thr;	 /* threshold sat[] was built for */
	int64_t *sat;	 /* sat[i]: ns over [t[0], t[i]) a value >= sat_thr holds */
	unsigned long used;
};

void funcs_series_free(struct series *s)
{
	if (!s)
		return;
	free(s->t);
	free(s->v);
	free(s->e);
	free(s->area);
	free(s->cov);
	free(s->seg);
	free(s->sat);
	free(s);
}

/* ---- series ---- */

/* t - t0 as a double, exact where the difference fits 53 bits (as
 * model/view/series.c: hostile times may be 2^64 ns apart). */
static double since(int64_t t, int64_t t0)
{
	int64_t d;
	if (!__builtin_sub_overflow(t, t0, &d))
		return (double)d;
	return (double)t - (double)t0;
}

static struct series *series_get(struct qfuncs *f, int64_t id, char **err)
{
	struct series *s = NULL;
	size_t victim = 0;
	for (size_t i = 0; i < NSERIES; i++) {
		if (f->ser[i] && f->ser[i]->id == id) {
			f->ser[i]->used = ++f->clock;
			return f->ser[i];
		}
		if (!f->ser[i] || (f->ser[victim] && f->ser[i]->used < f->ser[victim]->used))
			victim = i;
	}
	sqlite3_stmt *q = NULL;
	s = xcalloc(1, sizeof(*s));
	s->id = id;
	s->capacity = NAN;
	s->sat_thr = NAN;
	if (sqlite3_prepare_v2(f->db, "SELECT capacity, value_kind FROM metrics WHERE id = ?1", -1,
			       &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(q, 1, id);
	char *kind = NULL;
	if (sqlite3_step(q) == SQLITE_ROW) {
		if (!col_null(q, 0) && col_real(q, 0) > 0)
			s->capacity = col_real(q, 0);
		kind = col_strdup_or_null(q, 1);
	}
	sqlite3_finalize(q);
	if (sqlite3_prepare_v2(f->db,
			       "SELECT t_ns, value FROM samples WHERE metric_id = ?1 ORDER BY t_ns",
			       -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(q, 1, id);
	size_t at = 0, av = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(s->t, s->n + 1, at);
		XGROW(s->v, s->n + 1, av);
		s->t[s->n] = col_int(q, 0);
		s->v[s->n] = col_real(q, 1);
		s->n++;
	}
	sqlite3_finalize(q);
	q = NULL;
	if (rc != SQLITE_DONE) {
		free(kind);
		goto fail;
	}
	/* each sample holds until the next or its hold (model/store/sample.h) */
	int64_t period = sample_period(s->t, s->n), hold = sample_hold(period, kind);
	free(kind);
	s->lone = !period;
	s->e = xmalloc((s->n + 1) * sizeof(int64_t));
	s->area = xmalloc((s->n + 1) * sizeof(double));
	s->cov = xmalloc((s->n + 1) * sizeof(double));
	s->area[0] = s->cov[0] = 0;
	for (size_t i = 0; i < s->n; i++) {
		s->e[i] =
		    sample_until(s->t[i], i + 1 < s->n ? s->t[i + 1] : INT64_MAX, period, hold);
		s->area[i + 1] = s->area[i] + s->v[i] * since(s->e[i], s->t[i]);
		s->cov[i + 1] = s->cov[i] + since(s->e[i], s->t[i]);
	}
	s->seg = xmalloc((2 * s->n + 1) * sizeof(double));
	for (size_t i = 0; i < s->n; i++)
		s->seg[s->n + i] = s->v[i];
	for (size_t i = s->n - 1; i >= 1 && s->n > 1; i--)
		s->seg[i] = fmax(s->seg[2 * i], s->seg[2 * i + 1]);
	funcs_series_free(f->ser[victim]);
	f->ser[victim] = s;
	s->used = ++f->clock;
	return s;
fail:
	*err = xasprintf("cannot read samples: %s", sqlite3_errmsg(f->db));
	sqlite3_finalize(q);
	funcs_series_free(s);
	return NULL;
}

/* The last index with t[i] <= x, or -1. */
static ptrdiff_t last_le(const struct series *s, int64_t x)
{
	size_t at;
	PARTITION_POINT(at, s->n, i, s->t[i] <= x);
	return (ptrdiff_t)at - 1;
}

/* The last index with t[i] < x, or -1. */
static ptrdiff_t last_lt(const struct series *s, int64_t x)
{
	size_t at;
	PARTITION_POINT(at, s->n, i, s->t[i] < x);
	return (ptrdiff_t)at - 1;
}

/* The integral of the step function from t[0] to x (of the value, or
 * with value 0 of the time a sample holds). */
static double area_to(const struct series *s, const double *pre, int value, int64_t x)
{
	ptrdiff_t k = last_le(s, x);
	if (k < 0)
		return 0;
	int64_t end = x < s->e[k] ? x : s->e[k];
	return pre[k] + (value ? s->v[k] : 1) * (end > s->t[k] ? since(end, s->t[k]) : 0);
}

/* The window [t0, t1) clipped to [t[0], the last sample's end]: 1 when it
 * covers time. */
static int clip(const struct series *s, int64_t t0, int64_t t1, int64_t *a, int64_t *b)
{
	*a = t0 > s->t[0] ? t0 : s->t[0];
	*b = t1 < s->e[s->n - 1] ? t1 : s->e[s->n - 1];
	return *b > *a;
}

/* The mean over the time a sample holds in [t0, t1); 0 with *out set, or
 * 1 when there is none. */
static int window_mean(const struct series *s, int64_t t0, int64_t t1, double *out)
{
	int64_t a, b;
	if (!s->n || t1 <= t0)
		return 1;
	if (clip(s, t0, t1, &a, &b)) {
		double cov = area_to(s, s->cov, 0, b) - area_to(s, s->cov, 0, a);
		if (cov > 0) {
			*out = (area_to(s, s->area, 1, b) - area_to(s, s->area, 1, a)) / cov;
			return 0;
		}
	}
	/* a lone sample holds for no time but marks a window it falls in */
	if (s->lone && s->t[0] >= t0 && s->t[0] < t1) {
		*out = s->v[0];
		return 0;
	}
	return 1;
}

static double seg_max(const struct series *s, size_t l, size_t r) /* [l, r] */
{
	double m = -INFINITY;
	for (l += s->n, r += s->n + 1; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			m = fmax(m, s->seg[l++]);
		if (r & 1)
			m = fmax(m, s->seg[--r]);
	}
	return m;
}

static struct series *arg_series(sqlite3_context *ctx, sqlite3_value **argv, int nargs)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	for (int i = 0; i < nargs; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return NULL;
	char *err = NULL;
	struct series *s = series_get(f, sqlite3_value_int64(argv[0]), &err);
	if (!s) {
		sqlite3_result_error(ctx, err, -1);
		free(err);
	}
	return s;
}

void gm_twmean(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 3);
	double m;
	if (s && !window_mean(s, sqlite3_value_int64(argv[1]), sqlite3_value_int64(argv[2]), &m))
		sqlite3_result_double(ctx, m);
}

void gm_twmax(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 3);
	double m;
	if (!s)
		return;
	int64_t t0 = sqlite3_value_int64(argv[1]), t1 = sqlite3_value_int64(argv[2]);
	if (window_mean(s, t0, t1, &m))
		return;
	ptrdiff_t k0 = last_le(s, t0), k1 = last_lt(s, t1);
	if (k0 < 0 || (s->e[k0] <= t0 && !s->lone))
		k0++;
	if (k1 < k0)
		return;
	sqlite3_result_double(ctx, seg_max(s, (size_t)k0, (size_t)k1));
}

void gm_valueat(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 2);
	if (!s || !s->n)
		return;
	int64_t t = sqlite3_value_int64(argv[1]);
	ptrdiff_t k = last_le(s, t);
	if (k >= 0 && (s->e[k] > t || (s->lone && s->t[k] == t)))
		sqlite3_result_double(ctx, s->v[k]);
}

static int64_t sat_to(const struct series *s, int64_t x)
{
	ptrdiff_t k = last_le(s, x);
	if (k < 0)
		return 0;
	int64_t end = x < s->e[k] ? x : s->e[k];
	return s->sat[k] + (s->v[k] >= s->sat_thr && end > s->t[k] ? ns_dur(s->t[k], end) : 0);
}

void gm_satns(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 3);
	if (!s)
		return;
	double thr = sqlite3_value_type(argv[3]) == SQLITE_NULL ? 0.95 * s->capacity
								: sqlite3_value_double(argv[3]);
	if (isnan(thr)) {
		sqlite3_result_error(ctx,
				     "the metric has no capacity: give a threshold"
				     " (saturated METRIC >= VALUE)",
				     -1);
		return;
	}
	if (!s->n) {
		sqlite3_result_int64(ctx, 0);
		return;
	}
	if (!s->sat || s->sat_thr != thr) {
		free(s->sat);
		s->sat = xmalloc((s->n + 1) * sizeof(int64_t));
		s->sat_thr = thr;
		s->sat[0] = 0;
		for (size_t i = 1; i <= s->n; i++)
			s->sat[i] =
			    ns_sum(s->sat[i - 1],
				   s->v[i - 1] >= thr ? ns_dur(s->t[i - 1], s->e[i - 1]) : 0);
	}
	int64_t a, b, t0 = sqlite3_value_int64(argv[1]), t1 = sqlite3_value_int64(argv[2]);
	sqlite3_result_int64(ctx,
			     t1 > t0 && clip(s, t0, t1, &a, &b) ? sat_to(s, b) - sat_to(s, a) : 0);
}

/* ---- gm_running ----
 *
 * The phase running at an event without a phase_id: among the phases on
 * its track that contain its time, the deepest (then the latest start),
 * else the same among all phases.  As SQL that is two scans of phases per
 * event (no index serves it); here the first call collects the (track, t)
 * of every such event, and one scan of phases in id order answers them
 * all: a phase updates the events inside it, so among equals the lowest
 * id wins, as SQLite's ORDER BY ... LIMIT 1 over the same scan.  A call
 * for another (track, t), or a file whose values are not integers, runs
 * the SQL. */

#define RUNNING_TRACK_SQL                                                                          \
	"SELECT q.id FROM phases q WHERE q.track_id = ?1 AND q.start_ns <= ?2"                     \
	" AND q.start_ns + q.dur_ns > ?2 ORDER BY q.depth DESC, q.start_ns DESC LIMIT 1"
#define RUNNING_ANY_SQL                                                                            \
	"SELECT q.id FROM phases q WHERE q.start_ns <= ?1 AND q.start_ns + q.dur_ns > ?1"          \
	" ORDER BY q.depth DESC, q.start_ns DESC LIMIT 1"

struct rbest {
	int64_t id, depth, start;
	int found;
};

struct rkey {
	int64_t t, track;
	int has_track;
	struct rbest on_track, any;
};

static int cmp_rkey(const struct rkey *a, int64_t t, int has_track, int64_t track)
{
	if (a->t != t)
		return a->t < t ? -1 : 1;
	if (a->has_track != has_track)
		return a->has_track < has_track ? -1 : 1;
	return (a->track > track) - (a->track < track);
}

static int cmp_rkey_q(const void *x, const void *y)
{
	const struct rkey *b = y;
	return cmp_rkey(x, b->t, b->has_track, b->track);
}

static void rbest_offer(struct rbest *b, int64_t id, int64_t depth, int64_t start)
{
	if (!b->found || depth > b->depth || (depth == b->depth && start > b->start)) {
		b->id = id;
		b->depth = depth;
		b->start = start;
		b->found = 1;
	}
}

/* Builds f->rkeys; 0, 1 when the file needs the SQL, -1 on an error. */
static int running_load(struct qfuncs *f)
{
	sqlite3_stmt *q = NULL;
	size_t alloc = 0;
	int rc = -1, step;
	if (sqlite3_prepare_v2(f->db,
			       "SELECT DISTINCT track_id, t_ns FROM events WHERE phase_id IS NULL",
			       -1, &q, NULL) != SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int tt = sqlite3_column_type(q, 0);
		if (sqlite3_column_type(q, 1) != SQLITE_INTEGER ||
		    (tt != SQLITE_INTEGER && tt != SQLITE_NULL)) {
			rc = 1;
			goto out;
		}
		XGROW(f->rkeys, f->nrkeys + 1, alloc);
		struct rkey *k = &f->rkeys[f->nrkeys++];
		memset(k, 0, sizeof(*k));
		k->t = col_int(q, 1);
		k->has_track = tt == SQLITE_INTEGER;
		k->track = k->has_track ? col_int(q, 0) : 0;
	}
	if (step != SQLITE_DONE)
		goto out;
	sqlite3_finalize(q);
	q = NULL;
	if (!f->nrkeys) {
		rc = 0;
		goto out;
	}
	qsort(f->rkeys, f->nrkeys, sizeof(*f->rkeys), cmp_rkey_q);
	if (sqlite3_prepare_v2(
		f->db, "SELECT id, track_id, start_ns, dur_ns, depth FROM phases ORDER BY id", -1,
		&q, NULL) != SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int tt = sqlite3_column_type(q, 1);
		if (sqlite3_column_type(q, 0) != SQLITE_INTEGER ||
		    sqlite3_column_type(q, 2) != SQLITE_INTEGER ||
		    sqlite3_column_type(q, 3) != SQLITE_INTEGER ||
		    sqlite3_column_type(q, 4) != SQLITE_INTEGER ||
		    (tt != SQLITE_INTEGER && tt != SQLITE_NULL)) {
			rc = 1;
			goto out;
		}
		int64_t id = col_int(q, 0), track = col_int(q, 1);
		int64_t start = col_int(q, 2), dur = col_int(q, 3);
		int64_t depth = col_int(q, 4), end;
		int open_end = 0; /* start + dur beyond int64: SQLite's real sum exceeds any t */
		if (__builtin_add_overflow(start, dur, &end)) {
			if (dur < 0)
				continue;
			open_end = 1;
		}
		size_t a;
		PARTITION_POINT(a, f->nrkeys, i, f->rkeys[i].t < start);
		for (size_t i = a; i < f->nrkeys && (open_end || f->rkeys[i].t < end); i++) {
			struct rkey *k = &f->rkeys[i];
			rbest_offer(&k->any, id, depth, start);
			if (k->has_track && tt == SQLITE_INTEGER && k->track == track)
				rbest_offer(&k->on_track, id, depth, start);
		}
	}
	rc = step == SQLITE_DONE ? 0 : -1;
out:
	sqlite3_finalize(q);
	if (rc != 0) {
		free(f->rkeys);
		f->rkeys = NULL;
		f->nrkeys = 0;
	}
	return rc;
}

/* One of the two SQL lookups into *id; 1 found, 0 not, -1 on an error. */
static int running_sql(struct qfuncs *f, sqlite3_stmt **q, const char *sql, sqlite3_value *track,
		       sqlite3_value *t, int64_t *id)
{
	if (!*q && sqlite3_prepare_v2(f->db, sql, -1, q, NULL) != SQLITE_OK)
		return -1;
	if (track)
		sqlite3_bind_value(*q, 1, track);
	sqlite3_bind_value(*q, track ? 2 : 1, t);
	int step = sqlite3_step(*q);
	int found = step == SQLITE_ROW && !col_null(*q, 0);
	if (found)
		*id = col_int(*q, 0);
	sqlite3_reset(*q);
	return step == SQLITE_ROW || step == SQLITE_DONE ? found : -1;
}

void gm_running(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	int tt = sqlite3_value_type(argv[0]), ty = sqlite3_value_type(argv[1]);
	if (!f->running_loaded) {
		f->running_loaded = 1;
		if (running_load(f) < 0) {
			sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
			return;
		}
	}
	if (ty == SQLITE_INTEGER && (tt == SQLITE_INTEGER || tt == SQLITE_NULL) && f->nrkeys) {
		struct rkey key = {.t = sqlite3_value_int64(argv[1]),
				   .has_track = tt == SQLITE_INTEGER,
				   .track =
				       tt == SQLITE_INTEGER ? sqlite3_value_int64(argv[0]) : 0};
		const struct rkey *k =
		    bsearch(&key, f->rkeys, f->nrkeys, sizeof(*f->rkeys), cmp_rkey_q);
		if (k) {
			const struct rbest *b = k->on_track.found ? &k->on_track : &k->any;
			if (b->found)
				sqlite3_result_int64(ctx, b->id);
			return;
		}
	}
	int64_t id;
	int r = running_sql(f, &f->running_track_q, RUNNING_TRACK_SQL, argv[0], argv[1], &id);
	if (r == 0)
		r = running_sql(f, &f->running_any_q, RUNNING_ANY_SQL, NULL, argv[1], &id);
	if (r < 0)
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
	else if (r == 1)
		sqlite3_result_int64(ctx, id);
}
