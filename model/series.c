/*
 * Metric series for views: the list of series with their statistics, and a
 * series reduced to n buckets for a sparkline.  A series is a step
 * function: a sample's value holds until the next sample (DESIGN.md, data
 * model), so means are time-weighted and the last sample holds for no time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/store.h"
#include "model/xalloc.h"

/* Statistics of one series in one pass over its samples. */
static int series_stats(sqlite3 *db, struct mseries *s)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db,
			       "SELECT t_ns, value FROM samples WHERE metric_id = ?1 ORDER BY t_ns",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(q, 1, s->id);
	double area = 0, prev_v = 0;
	int64_t prev_t = 0;
	s->min = INFINITY;
	s->max = -INFINITY;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(q, 0);
		double v = sqlite3_column_double(q, 1);
		if (s->samples++)
			area += prev_v * ((double)t - (double)prev_t);
		else
			s->t0 = t;
		s->t1 = t;
		if (v < s->min)
			s->min = v;
		if (v > s->max)
			s->max = v;
		prev_t = t;
		prev_v = v;
	}
	if (!s->samples)
		s->min = s->max = s->mean = NAN;
	else if (s->t1 > s->t0)
		s->mean = area / ((double)s->t1 - (double)s->t0);
	else
		s->mean = prev_v;
	return sqlite3_finalize(q) == SQLITE_OK ? 0 : -1;
}

int model_series(struct model *m, const struct mseries **out, size_t *n, char **err)
{
	size_t *count;
	int *loaded;
	struct mseries **v = model_series_slot(m, &count, &loaded);
	sqlite3 *db = store_db(model_store(m));
	if (!*loaded) {
		sqlite3_stmt *q;
		size_t alloc = 0;
		if (sqlite3_prepare_v2(
			db,
			"SELECT id, name, host, resource, unit, coalesce(capacity, 0)"
			" FROM metrics ORDER BY host, resource, name, id",
			-1, &q, NULL) != SQLITE_OK)
			goto fail;
		while (sqlite3_step(q) == SQLITE_ROW) {
			XGROW(*v, *count + 1, alloc);
			struct mseries *s = &(*v)[(*count)++];
			memset(s, 0, sizeof(*s));
			s->id = sqlite3_column_int64(q, 0);
			s->name =
			    model_intern(m, sqlite3_column_text(q, 1), sqlite3_column_bytes(q, 1));
			s->host =
			    model_intern(m, sqlite3_column_text(q, 2), sqlite3_column_bytes(q, 2));
			s->resource =
			    model_intern(m, sqlite3_column_text(q, 3), sqlite3_column_bytes(q, 3));
			s->unit =
			    model_intern(m, sqlite3_column_text(q, 4), sqlite3_column_bytes(q, 4));
			s->capacity = sqlite3_column_double(q, 5);
			if (!s->name)
				s->name = "";
		}
		if (sqlite3_finalize(q) != SQLITE_OK)
			goto fail;
		for (size_t i = 0; i < *count; i++)
			if (series_stats(db, &(*v)[i]) < 0)
				goto fail;
		*loaded = 1;
	}
	*out = *v;
	*n = *count;
	return 0;
fail:
	*err = xasprintf("%s: cannot read metrics: %s", store_path(model_store(m)),
			 sqlite3_errmsg(db));
	return -1;
}

/* t - t0 as a double, exact to the nanosecond where the difference fits
 * in 53 bits (epoch times themselves do not: doubles near 1.7e18 are 256 ns
 * apart). */
static double since(int64_t t, int64_t t0)
{
	int64_t d;
	if (!__builtin_sub_overflow(t, t0, &d))
		return (double)d;
	return (double)t - (double)t0;
}

/* Adds value v held over [a, b) to the buckets of [t0, t1).  Times are
 * taken as doubles: a hostile file's times may be 2^64 ns apart. */
static void spread(double *area, double *covered, int n, double t0, double t1, double a, double b,
		   double v)
{
	double width = (t1 - t0) / n;
	if (a < t0)
		a = t0;
	if (b > t1)
		b = t1;
	if (!(width > 0) || !(b > a))
		return;
	int first = (int)((a - t0) / width), last = (int)((b - t0) / width);
	if (first < 0)
		first = 0;
	if (last > n - 1)
		last = n - 1;
	for (int i = first; i <= last; i++) {
		double lo = t0 + width * i, hi = i == n - 1 ? t1 : lo + width;
		double part = (b < hi ? b : hi) - (a > lo ? a : lo);
		if (part > 0) {
			area[i] += v * part;
			covered[i] += part;
		}
	}
}

/* sql prepared with ?1 the series, ?2 and ?3 the window; NULL and *err. */
static sqlite3_stmt *window_query(struct model *m, const char *sql, int64_t metric_id, int64_t t0,
				  int64_t t1, char **err)
{
	sqlite3 *db = store_db(model_store(m));
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read samples: %s", store_path(model_store(m)),
				 sqlite3_errmsg(db));
		return NULL;
	}
	sqlite3_bind_int64(q, 1, metric_id);
	sqlite3_bind_int64(q, 2, t0);
	sqlite3_bind_int64(q, 3, t1);
	return q;
}

int model_series_buckets(struct model *m, int64_t metric_id, int64_t t0, int64_t t1, double *out,
			 int n, char **err)
{
	sqlite3_stmt *q;
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		out[i] = NAN;
	if (t1 <= t0)
		return 0;
	/* The sample in force at t0, every sample up to t1, and the first one
	 * after: the value before it holds up to t1. */
	if (!(q = window_query(m, "SELECT * FROM (SELECT t_ns, value FROM samples"
				  " WHERE metric_id = ?1 AND t_ns <= ?2 ORDER BY t_ns DESC LIMIT 1)"
				  " UNION ALL SELECT * FROM (SELECT t_ns, value FROM samples"
				  " WHERE metric_id = ?1 AND t_ns > ?2 AND t_ns < ?3 ORDER BY t_ns)"
				  " UNION ALL SELECT * FROM (SELECT t_ns, value FROM samples"
				  " WHERE metric_id = ?1 AND t_ns >= ?3 AND t_ns > ?2"
				  " ORDER BY t_ns LIMIT 1)",
			       metric_id, t0, t1, err)))
		return -1;
	double *area = xcalloc((size_t)n * 2, sizeof(double)), *covered = area + n;
	int have = 0;
	int64_t pt = 0;
	double pv = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(q, 0);
		double v = sqlite3_column_double(q, 1);
		if (have)
			spread(area, covered, n, 0, since(t1, t0), since(pt, t0), since(t, t0), pv);
		have = 1;
		pt = t;
		pv = v;
	}
	sqlite3_finalize(q);
	/* The last sample holds for no time, but marks its own bucket. */
	if (have && pt >= t0 && pt < t1) {
		int i = (int)(since(pt, t0) * n / since(t1, t0));
		if (i > n - 1)
			i = n - 1;
		if (covered[i] == 0) {
			area[i] = pv;
			covered[i] = 1;
		}
	}
	for (int i = 0; i < n; i++)
		if (covered[i] > 0)
			out[i] = area[i] / covered[i];
	free(area);
	return 0;
}

int model_series_window(struct model *m, int64_t metric_id, int64_t t0, int64_t t1, double *mean,
			double *max, char **err)
{
	sqlite3_stmt *q;
	*mean = *max = NAN;
	if (t1 <= t0)
		return 0;
	if (model_series_buckets(m, metric_id, t0, t1, mean, 1, err) < 0)
		return -1;
	/* the sample in force at t0 and every one up to t1 */
	if (!(q = window_query(m, "SELECT max(value) FROM (SELECT * FROM (SELECT value FROM samples"
				  " WHERE metric_id = ?1 AND t_ns <= ?2 ORDER BY t_ns DESC LIMIT 1)"
				  " UNION ALL SELECT value FROM samples"
				  " WHERE metric_id = ?1 AND t_ns > ?2 AND t_ns < ?3)",
			       metric_id, t0, t1, err)))
		return -1;
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL &&
	    !isnan(*mean))
		*max = sqlite3_column_double(q, 0);
	sqlite3_finalize(q);
	return 0;
}
