/*
 * Metric series for views: the list of series with their statistics, and a
 * series reduced to n buckets for a sparkline.  A series is a step
 * function: a sample's value holds until the next sample, or across a gap
 * for no more than its series' hold (model/store/sample.h), so means are
 * time-weighted over the time a value holds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/view/model.h"
#include "model/util/nstime.h"
#include "model/util/text.h"
#include "model/store/sample.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

/* The series' period from its first samples (model/store/sample.h). */
static int series_period(sqlite3 *db, struct mseries *s)
{
	sqlite3_stmt *q;
	int64_t t[SAMPLE_PERIOD_N];
	size_t n = 0;
	if (sqlite3_prepare_v2(
		db, "SELECT t_ns FROM samples WHERE metric_id = ?1 ORDER BY t_ns LIMIT ?2", -1, &q,
		NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(q, 1, s->id);
	sqlite3_bind_int(q, 2, SAMPLE_PERIOD_N);
	while (n < SAMPLE_PERIOD_N && sqlite3_step(q) == SQLITE_ROW)
		t[n++] = col_int(q, 0);
	s->period_ns = sample_period(t, n);
	s->hold_ns = sample_hold(s->period_ns, s->value_kind);
	return sqlite3_finalize(q) == SQLITE_OK ? 0 : -1;
}

/* Statistics of one series in one pass over its samples. */
static int series_stats(sqlite3 *db, struct mseries *s)
{
	sqlite3_stmt *q;
	if (series_period(db, s) < 0 ||
	    sqlite3_prepare_v2(db,
			       "SELECT t_ns, value FROM samples WHERE metric_id = ?1 ORDER BY t_ns",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(q, 1, s->id);
	double area = 0, prev_v = 0;
	int64_t prev_t = 0, covered = 0;
	s->min = INFINITY;
	s->max = -INFINITY;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t t = col_int(q, 0);
		double v = col_real(q, 1);
		if (s->samples++) {
			int64_t until = sample_until(prev_t, t, s->period_ns, s->hold_ns);
			area += prev_v * ns_span(prev_t, until);
			covered = ns_sum(covered, ns_dur(prev_t, until));
		} else {
			s->t0 = t;
		}
		if (v < s->min)
			s->min = v;
		if (v > s->max)
			s->max = v;
		prev_t = t;
		prev_v = v;
	}
	if (s->samples) {
		s->t1 = sample_until(prev_t, INT64_MAX, s->period_ns, s->hold_ns);
		area += prev_v * ns_span(prev_t, s->t1);
		covered = ns_sum(covered, ns_dur(prev_t, s->t1));
	}
	s->covered_ns = covered;
	if (!s->samples)
		s->min = s->max = s->mean = NAN;
	else if (covered > 0)
		s->mean = area / (double)covered;
	else
		s->mean = prev_v;
	return sqlite3_finalize(q) == SQLITE_OK ? 0 : -1;
}

int mseries_named(const struct mseries *s, const char *ref, int *pinned)
{
	const char *at = strrchr(ref, '@');
	size_t n = at ? (size_t)(at - ref) : strlen(ref);
	size_t r = s->resource ? strlen(s->resource) : 0;
	if (pinned)
		*pinned = at != NULL;
	if (at && (!s->host || strcmp(s->host, at + 1)))
		return 0;
	if (strlen(s->name) == n && !strncmp(s->name, ref, n))
		return 1;
	return r && n == r + 1 + strlen(s->name) && !strncmp(ref, s->resource, r) &&
	       ref[r] == '.' && !strncmp(ref + r + 1, s->name, n - r - 1);
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
			"SELECT id, name, host, resource, unit, coalesce(capacity, 0), value_kind"
			" FROM metrics ORDER BY host, resource, name, id",
			-1, &q, NULL) != SQLITE_OK)
			goto fail;
		while (sqlite3_step(q) == SQLITE_ROW) {
			XGROW(*v, *count + 1, alloc);
			struct mseries *s = &(*v)[(*count)++];
			memset(s, 0, sizeof(*s));
			s->id = col_int(q, 0);
			s->name = model_intern_col(m, q, 1);
			s->host = model_intern_col(m, q, 2);
			s->resource = model_intern_col(m, q, 3);
			s->unit = model_intern_col(m, q, 4);
			s->capacity = col_real(q, 5);
			s->value_kind = model_intern_col(m, q, 6);
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

void mseries_scale(const struct mseries *s, double *lo, double *hi)
{
	if (s->capacity > 0) {
		*lo = 0;
		*hi = s->capacity;
	} else {
		*lo = s->min;
		*hi = s->max;
	}
}

/* Where a value's unit starts in text_metric's text: its first blank or
 * '%' (" GB", " k MHz", "%"), else its end. */
static const char *unit_part(const char *text)
{
	return text + strcspn(text, " %");
}

void mseries_scale_text(const struct mseries *s, char *buf, size_t n)
{
	double lo, hi;
	char a[48], b[48];
	mseries_scale(s, &lo, &hi);
	/* both ends as the metrics screen writes a value (text_metric), a unit
	 * they share once: "0..150.8 GB", "345..1980 MHz", "2 B..1.5 KB" */
	text_metric(a, sizeof(a), lo, s->unit);
	text_metric(b, sizeof(b), hi, s->unit);
	if (lo == 0 || !strcmp(unit_part(a), unit_part(b)))
		*(char *)unit_part(a) = '\0';
	snprintf(buf, n, "%s..%s", a, b);
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

/* Of the samples that hold some of a window: the lowest and highest value
 * (+-INFINITY if none) and how many they are. */
struct held {
	double min, max;
	int64_t count;
};

static void held_add(struct held *h, double v)
{
	h->min = fmin(h->min, v);
	h->max = fmax(h->max, v);
	h->count++;
}

/* The samples of s that may hold in [t0, t1), in n buckets: per bucket the
 * integral and the time covered (area[0..n), covered[0..n)), and those
 * that hold some of the window (*h). */
static int walk(struct model *m, const struct mseries *s, int64_t t0, int64_t t1, int n,
		double *area, double *covered, struct held *h, char **err)
{
	sqlite3 *db = store_db(model_store(m));
	sqlite3_stmt *q;
	*h = (struct held){INFINITY, -INFINITY, 0};
	/* The sample at or before t0, every sample up to t1, and the first one
	 * after: where the last of the window stops holding depends on it. */
	if (sqlite3_prepare_v2(db,
			       "SELECT * FROM (SELECT t_ns, value FROM samples"
			       " WHERE metric_id = ?1 AND t_ns <= ?2 ORDER BY t_ns DESC LIMIT 1)"
			       " UNION ALL SELECT * FROM (SELECT t_ns, value FROM samples"
			       " WHERE metric_id = ?1 AND t_ns > ?2 AND t_ns < ?3 ORDER BY t_ns)"
			       " UNION ALL SELECT * FROM (SELECT t_ns, value FROM samples"
			       " WHERE metric_id = ?1 AND t_ns >= ?3 AND t_ns > ?2"
			       " ORDER BY t_ns LIMIT 1)",
			       -1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read samples: %s", store_path(model_store(m)),
				 sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_int64(q, 1, s->id);
	sqlite3_bind_int64(q, 2, t0);
	sqlite3_bind_int64(q, 3, t1);
	int have = 0;
	int64_t pt = 0;
	double pv = 0;
	for (int more = 1; more;) {
		int64_t t = INT64_MAX;
		double v = 0;
		more = sqlite3_step(q) == SQLITE_ROW;
		if (more) {
			t = col_int(q, 0);
			v = col_real(q, 1);
		}
		if (have && pt < t1) {
			int64_t until = sample_until(pt, t, s->period_ns, s->hold_ns);
			if (until > t0 && until > pt) {
				spread(area, covered, n, 0, since(t1, t0), since(pt, t0),
				       since(until, t0), pv);
				held_add(h, pv);
			} else if (until == pt && pt >= t0 && !s->period_ns) {
				/* a lone sample holds for no time, but marks its bucket */
				int i = (int)(since(pt, t0) * n / since(t1, t0));
				i = i > n - 1 ? n - 1 : i;
				if (covered[i] == 0) {
					area[i] = pv;
					covered[i] = 1;
				}
				held_add(h, pv);
			}
		}
		have = more;
		pt = t;
		pv = v;
	}
	sqlite3_finalize(q);
	return 0;
}

int model_series_buckets(struct model *m, const struct mseries *s, int64_t t0, int64_t t1,
			 double *out, int n, char **err)
{
	struct held h;
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		out[i] = NAN;
	if (t1 <= t0)
		return 0;
	double *area = xcalloc((size_t)n * 2, sizeof(double)), *covered = area + n;
	int rc = walk(m, s, t0, t1, n, area, covered, &h, err);
	for (int i = 0; i < n && rc == 0; i++)
		if (covered[i] > 0)
			out[i] = area[i] / covered[i];
	free(area);
	return rc;
}

int model_series_window(struct model *m, const struct mseries *s, int64_t t0, int64_t t1,
			double *mean, double *max, int64_t *covered, char **err)
{
	struct mwindow w;
	if (model_series_stats(m, s, t0, t1, &w, err) < 0)
		return -1;
	*mean = w.mean;
	*max = w.max;
	if (covered)
		*covered = w.covered_ns;
	return 0;
}

int model_series_stats(struct model *m, const struct mseries *s, int64_t t0, int64_t t1,
		       struct mwindow *out, char **err)
{
	double area = 0, cov = 0;
	struct held h;
	*out = (struct mwindow){NAN, NAN, NAN, 0, 0};
	if (t1 <= t0)
		return 0;
	if (walk(m, s, t0, t1, 1, &area, &cov, &h, err) < 0)
		return -1;
	if (cov > 0) {
		out->min = h.min;
		out->mean = area / cov;
		out->max = h.max;
		out->samples = h.count;
		out->covered_ns = (int64_t)llround(cov);
	}
	return 0;
}
