/*
 * Prometheus query results into metric series.
 *
 * The input is what the HTTP API returns for /api/v1/query_range (resultType
 * "matrix": {"metric": {labels}, "values": [[t, "v"], ...]} per series) or
 * /api/v1/query (resultType "vector": one "value": [t, "v"] per series),
 * either the whole envelope {"status": "success", "data": {"resultType":
 * ..., "result": [...]}} or the bare "result" array that client libraries
 * save (prometheus-api-client's get_metric_range_data).  Keys may come in
 * any order ("jq -S" puts "status" last).
 *
 * Memory: a result can be large, so it is not parsed whole: jcut.c streams
 * it, reports the envelope's few string fields and cuts out each element of
 * "result" for jansson.  Memory is bounded by the largest
 * series (SERIES_MAX, 8 MB; Prometheus returns at most 11,000 points per
 * series, about 300 KB).
 *
 * Limits: a label's name or value longer than PROM_LABEL_MAX (1 KiB) is cut
 * to its first 1 KiB and "…", as a trace's strings are (LONG_STRING), so
 * that a name, host or diagnostic made of it stays small.  A file holds at
 * most PROM_SERIES_MAX series (10,000): more is refused, with what to
 * narrow, before it is all read; a live pull counts its series whole.  The
 * cap keeps the import and the analyses after it within their memory.
 *
 * Series: name is the __name__ label (absent after most functions: then
 * "value"); resource is the other labels but instance, sorted by name,
 * "k=v,k=v", cut to RESOURCE_MAX bytes (LONG_LABELS); host is instance
 * without its ":port" (and an IPv6 address without its brackets), --host
 * winning.  When every series has the same host it names the source's.
 * Unit "%" for names ending in "percent" (capacity 100), "s" and "B" for
 * "_seconds" and "_bytes"; capacity 1 for "_ratio", else 0 (unknown).
 *
 * Time: Prometheus stamps each value at the time the expression was
 * evaluated, so samples are stored at that time, value_kind "instant".
 * Timestamps are seconds since the epoch with up to millisecond digits;
 * jansson reads them as doubles, which are rounded to the microsecond:
 * exact for any timestamp written with at most 6 decimals before the year
 * 2255.  A timestamp written as a string is parsed digit by digit to the
 * nanosecond.  --time-offset is added to every sample.
 *
 * Values are strings: "NaN", "+Inf" and "-Inf" are skipped and counted
 * (NON_FINITE), as are values that are not numbers (BAD_VALUE), points
 * that are not [time, value] (BAD_POINT), series without values or with
 * native histograms (NO_VALUES, HISTOGRAM) and labels that are not strings
 * (BAD_LABEL).  Fatal: not JSON, truncated, "status" other than "success"
 * (the server's error is quoted), a resultType other than matrix or vector,
 * and a result without one series.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "importers/jcut.h"
#include "importers/msource.h"
#include "importers/prometheus.h"
#include "importers/sniff.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

#define SERIES_MAX   (8 << 20) /* one element of "result", bytes */
#define RESOURCE_MAX 200       /* the rendered labels, bytes */
#define STR_MAX	     200       /* an envelope string kept, bytes */
#define SECONDS_MAX  9e9       /* |t| beyond this overflows int64 ns */

struct px {
	struct msource *ms;
	const struct import_opts *o;	 /* a file's import; NULL for prometheus_read */
	const struct prom_read_ops *ops; /* prometheus_read's; NULL for a file */
	struct input *in;
	int64_t elements; /* of "result" */
	int64_t series;	  /* with values */
	char *host;	  /* the series' one host; NULL: none yet */
	int many_hosts;
	char status[STR_MAX], result_type[STR_MAX], error[STR_MAX], error_type[STR_MAX];
	char **err;
};

/* ---- one series ---- */

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && !strcmp(s + n - k, tail);
}

/* "node1:9100" -> "node1", "[::1]:9090" -> "::1"; a bare IPv6 address is
 * kept whole.  Returns a new string. */
char *prometheus_instance_host(const char *instance)
{
	const char *colon = strrchr(instance, ':');
	if (instance[0] == '[') {
		const char *close = strchr(instance, ']');
		if (close)
			return xstrndup(instance + 1, (size_t)(close - instance - 1));
	}
	if (colon && colon != instance && strchr(instance, ':') == colon && colon[1] &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1))
		return xstrndup(instance, (size_t)(colon - instance));
	return xstrdup(instance);
}

/* The most bytes of s, max at most (s is longer), that end on a UTF-8
 * character's boundary. */
static size_t char_cut(const char *s, size_t max)
{
	size_t cut = max;
	while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
		cut--;
	return cut;
}

/* s (longer than PROM_LABEL_MAX) cut, and its ellipsis, into out. */
static void cut_label(struct sbuf *out, const char *s)
{
	sbuf_reset(out);
	sbuf_add(out, s, char_cut(s, PROM_LABEL_MAX));
	sbuf_adds(out, "\xe2\x80\xa6");
}

static int any_long(json_t *labels)
{
	const char *k;
	json_t *v;
	json_object_foreach(labels, k, v)
	{
		if (strlen(k) > PROM_LABEL_MAX || json_string_length(v) > PROM_LABEL_MAX)
			return 1;
	}
	return 0;
}

json_t *prometheus_cut_labels(struct msource *ms, json_t *labels)
{
	const char *k;
	json_t *v;
	if (!any_long(labels))
		return json_incref(labels);
	struct sbuf key = SBUF_INIT, val = SBUF_INIT;
	json_t *out = json_object();
	json_object_foreach(labels, k, v)
	{
		size_t kn = strlen(k), vn = json_string_length(v);
		if (kn > PROM_LABEL_MAX)
			cut_label(&key, k);
		if (vn > PROM_LABEL_MAX)
			cut_label(&val, json_string_value(v));
		if (kn > PROM_LABEL_MAX || vn > PROM_LABEL_MAX) {
			char *ex = xasprintf("label %.64s%s of %zu bytes", k, kn > 64 ? "..." : "",
					     kn > vn ? kn : vn);
			msource_diag(ms, "LONG_STRING",
				     "label names and values longer than 1 KiB, cut to their first"
				     " 1 KiB and \"\xe2\x80\xa6\"",
				     ex, 0);
			free(ex);
		}
		json_object_set_new_nocheck(
		    out, kn > PROM_LABEL_MAX ? key.buf : k,
		    vn > PROM_LABEL_MAX ? json_stringn_nocheck(val.buf, val.len) : json_incref(v));
	}
	sbuf_release(&key);
	sbuf_release(&val);
	return out;
}

struct label {
	const char *k, *v;
};

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->k, ((const struct label *)b)->k);
}

/* The labels but __name__ and instance, "k=v,k=v" sorted by name, cut to
 * RESOURCE_MAX bytes at a character boundary; "" when there are none. */
static void resource_of(struct px *x, struct sbuf *r, json_t *metric)
{
	size_t n = json_object_size(metric), nl = 0;
	struct label *l = xcalloc(n ? n : 1, sizeof(*l));
	const char *k;
	json_t *v;
	json_object_foreach(metric, k, v)
	{
		if (!strcmp(k, "__name__") || !strcmp(k, "instance"))
			continue;
		if (!json_is_string(v)) {
			msource_diag(x->ms, "BAD_LABEL",
				     "labels whose value is not a string, ignored", k, 0);
			continue;
		}
		l[nl++] = (struct label){k, json_string_value(v)};
	}
	qsort(l, nl, sizeof(*l), label_cmp);
	for (size_t i = 0; i < nl; i++)
		sbuf_addf(r, "%s%s=%s", i ? "," : "", l[i].k, l[i].v);
	free(l);
	if (r->len > RESOURCE_MAX) {
		r->len = char_cut(r->buf, RESOURCE_MAX);
		r->buf[r->len] = '\0';
		sbuf_adds(r, "...");
		msource_diag(x->ms, "LONG_LABELS",
			     "series whose labels were cut to 200 bytes in the resource", r->buf,
			     0);
	}
}

/* A timestamp, seconds since the epoch, to ns; -1 if it is not one. */
static int time_of(json_t *t, int64_t *ns)
{
	if (json_is_integer(t)) {
		json_int_t s = json_integer_value(t);
		if (s > SECONDS_MAX || s < -SECONDS_MAX)
			return -1;
		*ns = (int64_t)s * 1000000000;
		return 0;
	}
	if (json_is_real(t)) {
		double s = json_real_value(t);
		if (!(s < SECONDS_MAX && s > -SECONDS_MAX))
			return -1;
		*ns = (int64_t)llround(s * 1e6) * 1000; /* see the top: exact to the microsecond */
		return 0;
	}
	const char *p = json_string_value(t);
	if (!p)
		return -1;
	int neg = *p == '-';
	p += neg;
	int64_t sec = 0, frac = 0, scale = 1000000000;
	int digits = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++)
		if ((sec = sec * 10 + (*p - '0')) > SECONDS_MAX)
			return -1;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			if (scale > 1) /* digits beyond the nanosecond are dropped */
				frac += (*p - '0') * (scale /= 10);
	if (*p || !digits)
		return -1;
	*ns = (neg ? -1 : 1) * (sec * 1000000000 + frac);
	return 0;
}

/* A value: a string as Prometheus writes them (or a number). */
static int value_of(struct px *x, json_t *v, double *out)
{
	const char *s = json_string_value(v);
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	if (s &&
	    (!strcmp(s, "NaN") || !strcmp(s, "+Inf") || !strcmp(s, "-Inf") || !strcmp(s, "Inf"))) {
		msource_diag(x->ms, "NON_FINITE", "NaN and infinite values, skipped", s, 1);
		return -1;
	}
	char *end = NULL;
	double d = s && strchr("0123456789+-.", *s) && *s ? strtod(s, &end) : 0;
	if (!s || !end || *end || !isfinite(d)) {
		char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		msource_diag(x->ms, "BAD_VALUE", "values that are not numbers, skipped", text, 1);
		free(text);
		return -1;
	}
	*out = d;
	return 0;
}

/* A point [t, "v"]: 1 with *t and *v, 0 when skipped (counted). */
static int point_of(struct px *x, json_t *p, int64_t *t, double *v)
{
	if (!json_is_array(p) || json_array_size(p) != 2 || time_of(json_array_get(p, 0), t) < 0) {
		char *text = json_dumps(p, JSON_ENCODE_ANY | JSON_COMPACT);
		msource_diag(x->ms, "BAD_POINT", "points that are not [time, value], skipped", text,
			     1);
		free(text);
		return 0;
	}
	return value_of(x, json_array_get(p, 1), v) == 0;
}

/* The points of a series (values, or its one value) into metric, each
 * shifted by shift_ns. */
static int put_points(struct px *x, int64_t metric, json_t *values, json_t *value, int64_t shift_ns)
{
	int64_t t;
	double v;
	if (!json_is_array(values))
		return point_of(x, value, &t, &v)
			   ? msource_sample(x->ms, metric, t + shift_ns, v, x->err)
			   : 0;
	size_t i;
	json_t *p;
	json_array_foreach(
	    values, i, p) if (point_of(x, p, &t, &v) &&
			      msource_sample(x->ms, metric, t + shift_ns, v, x->err) < 0) return -1;
	return 0;
}

/* A series of prometheus_read: named by its caller, or its points handed
 * to it. */
static int put_read_series(struct px *x, json_t *metric, json_t *values, json_t *value)
{
	const struct prom_read_ops *ops = x->ops;
	int64_t t;
	double v;
	if (ops->point) {
		if (!json_is_array(values))
			return point_of(x, value, &t, &v)
				   ? ops->point(ops->arg, metric, t, v, x->err)
				   : 0;
		size_t i;
		json_t *p;
		json_array_foreach(values, i,
				   p) if (point_of(x, p, &t, &v) &&
					  ops->point(ops->arg, metric, t, v, x->err) < 0) return -1;
		return 0;
	}
	struct prom_series s;
	memset(&s, 0, sizeof(s));
	int r = ops->series(ops->arg, metric, &s, x->err);
	if (r <= 0)
		return r;
	struct sbuf res = SBUF_INIT;
	if (s.label_resource) {
		resource_of(x, &res, metric);
		s.resource = res.len ? res.buf : NULL;
	}
	int64_t id = msource_metric(x->ms, s.host, s.resource, s.name, s.unit,
				    s.value_kind ? s.value_kind : "instant", s.capacity, x->err);
	sbuf_release(&res);
	return id < 0 ? -1 : put_points(x, id, values, value, s.shift_ns);
}

static void note_host(struct px *x, const char *host)
{
	if (!host || x->many_hosts)
		return;
	if (!x->host)
		x->host = xstrdup(host);
	else if (strcmp(x->host, host))
		x->many_hosts = 1;
}

/* -1 with the error of a result, or a pull, of too many series. */
static int too_many(struct px *x)
{
	if (x->ops)
		*x->err = xasprintf(
		    "%s: more than %d series, the most one pull stores: narrow it (--host NAME; in"
		    " a --promql query, a label matcher or an aggregation such as sum by"
		    " (instance) (...))",
		    input_path(x->in), PROM_SERIES_MAX);
	else
		*x->err = xasprintf(
		    "%s: more than %d series, the most one file stores: narrow the query that"
		    " wrote it (a label matcher such as {job=\"node\"}, or an aggregation such"
		    " as sum by (instance) (...))",
		    input_path(x->in), PROM_SERIES_MAX);
	return -1;
}

/* A series of a file: a metric named by its labels (cut). */
static int put_file_series(struct px *x, json_t *metric, json_t *values, json_t *value)
{
	const char *name = json_string_value(json_object_get(metric, "__name__"));
	const char *instance = json_string_value(json_object_get(metric, "instance"));
	if (!name || !*name)
		name = "value";
	char *host = instance ? prometheus_instance_host(instance) : NULL;
	note_host(x, x->o->host ? x->o->host : host);
	struct sbuf res = SBUF_INIT;
	resource_of(x, &res, metric);
	const char *unit = ends_with(name, "percent")	 ? "%"
			   : ends_with(name, "_seconds") ? "s"
			   : ends_with(name, "_bytes")	 ? "B"
							 : NULL;
	double cap = ends_with(name, "percent") ? 100 : ends_with(name, "_ratio") ? 1 : 0;
	int64_t id = msource_metric(x->ms, x->o->host ? NULL : host, res.len ? res.buf : NULL, name,
				    unit, "instant", cap, x->err);
	free(host);
	sbuf_release(&res);
	if (id < 0)
		return -1;
	return put_points(x, id, values, value, x->o->has_time_offset ? x->o->time_offset_ns : 0);
}

static int put_series(struct px *x, json_t *e)
{
	json_t *metric = json_object_get(e, "metric"), *values = json_object_get(e, "values"),
	       *value = json_object_get(e, "value");
	if (++x->elements > PROM_SERIES_MAX)
		return too_many(x);
	if (!json_is_array(values) && !json_is_array(value)) {
		if (json_object_get(e, "histograms") || json_object_get(e, "histogram"))
			msource_diag(x->ms, "HISTOGRAM", "native histogram series, not imported",
				     NULL, 1);
		else
			msource_diag(x->ms, "NO_VALUES", "series without values, skipped", NULL, 1);
		return 0;
	}
	x->series++;
	metric = prometheus_cut_labels(x->ms, json_is_object(metric) ? metric : NULL);
	int rc = x->ops ? put_read_series(x, metric, values, value)
			: put_file_series(x, metric, values, value);
	json_decref(metric);
	/* a pull's series are counted whole: its queries' answers add up */
	return rc == 0 && x->ms->metrics.n > PROM_SERIES_MAX ? too_many(x) : rc;
}

/* ---- reading the document (importers/jcut.c) ---- */

/* The series: the elements of a bare top-level array, or of data.result. */
static int cut(void *arg, const struct jcut *j, int d)
{
	(void)arg;
	return (d == 0 && jcut_is_array(j, 0)) ||
	       (d == 2 && !strcmp(jcut_key(j, 2), "result") && !strcmp(jcut_key(j, 1), "data"));
}

static int element(void *arg, json_t *e, char **err)
{
	(void)err; /* put_series reports through x->err, which is err */
	return put_series(arg, e);
}

/* The envelope's strings: status, error, errorType, data.resultType. */
static void scalar(void *arg, const struct jcut *j, int d, const char *key, const char *text,
		   int is_string)
{
	struct px *x = arg;
	char *dst = NULL;
	if (!is_string)
		return;
	if (d == 0)
		dst = !strcmp(key, "status")	  ? x->status
		      : !strcmp(key, "error")	  ? x->error
		      : !strcmp(key, "errorType") ? x->error_type
						  : NULL;
	else if (d == 1 && !strcmp(jcut_key(j, 1), "data") && !strcmp(key, "resultType"))
		dst = x->result_type;
	if (dst)
		snprintf(dst, STR_MAX, "%s", text);
}

static const struct jcut_ops ops_cut = {cut, element, scalar, "a series", SERIES_MAX, NULL};

/* The checks once the whole file is read. */
static int finish(struct px *x, int top)
{
	char msg[4 * STR_MAX + 100];
	const char *what = NULL;
	if (x->status[0] && strcmp(x->status, "success")) {
		snprintf(msg, sizeof(msg), "the query failed: status '%s'%s%s%s%s", x->status,
			 x->error_type[0] || x->error[0] ? ": " : "", x->error_type,
			 x->error_type[0] && x->error[0] ? ": " : "", x->error);
		what = msg;
	} else if (x->ops && top == '{' && !x->status[0]) {
		what = "no \"status\": not a Prometheus API response";
	} else if (x->result_type[0] && strcmp(x->result_type, "matrix") &&
		   strcmp(x->result_type, "vector")) {
		snprintf(msg, sizeof(msg),
			 "resultType '%s' has no series (matrix or vector expected)",
			 x->result_type);
		what = msg;
	} else if (!x->series && !x->ops) {
		what = top == '{' && !x->status[0]
			   ? "no \"status\" and no series: is this a Prometheus query result?"
			   : "no series with values in the result (an empty query result?)";
	}
	if (!what)
		return 0;
	*x->err = xasprintf("%s: %s", input_path(x->in), what);
	return -1;
}

int prometheus_read(struct msource *ms, struct input *in, const struct prom_read_ops *ops,
		    char **err)
{
	struct px x;
	int top = 0;
	memset(&x, 0, sizeof(x));
	x.ms = ms;
	x.ops = ops;
	x.in = in;
	x.err = err;
	return jcut_run(in, &ops_cut, &x, &top, err) < 0 || finish(&x, top) < 0 ? -1 : 0;
}

int prometheus_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct px x;
	struct msource ms;
	int top = 0;
	memset(&x, 0, sizeof(x));
	x.ms = &ms;
	x.o = o;
	x.in = in;
	x.err = err;
	const char *anchor = o->has_time_offset ? "time-offset" : "absolute";
	if (msource_begin(&ms, st, in, "prometheus", anchor, o, err) < 0)
		return -1;
	if (jcut_run(in, &ops_cut, &x, &top, err) < 0 || finish(&x, top) < 0)
		goto out;
	/* one host for every series names the source's */
	if (!o->host && x.host && !x.many_hosts &&
	    store_set_source_anchor(st, ms.source_id, anchor,
				    o->has_time_offset ? o->time_offset_ns : 0, -1, x.host, NULL,
				    err) < 0)
		goto out;
	free(x.host);
	return msource_end(&ms, err);
out:
	msource_release(&ms);
	free(x.host);
	return -1;
}

/* ---- sniffing ---- */

/* Whether the quoted key at b[i] is key; *next: past its ':' */
static int key_at(const unsigned char *b, size_t n, size_t i, const char *key, size_t *next)
{
	size_t k = strlen(key);
	if (i + k + 2 > n || b[i] != '"' || memcmp(b + i + 1, key, k) || b[i + k + 1] != '"')
		return 0;
	i = sniff_skip_space(b, n, i + k + 2);
	if (i == n || b[i] != ':')
		return 0;
	*next = sniff_skip_space(b, n, i + 1);
	return 1;
}

static int contains(const unsigned char *b, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t j = 0; j + k <= n; j++)
		if (!memcmp(b + j, s, k))
			return 1;
	return 0;
}

/* The envelope opens with "status" (as the server writes it) or "data"
 * (keys sorted) and names resultType early; a bare result is an array of
 * objects that open with "metric" and carry "values" or "value". */
int prometheus_sniff(const unsigned char *b, size_t n)
{
	if (n > 4096)
		n = 4096;
	size_t i = sniff_skip_space(b, n, 0), j;
	if (i == n)
		return 0;
	if (b[i] == '{') {
		i = sniff_skip_space(b, n, i + 1);
		if (key_at(b, n, i, "status", &j) &&
		    (contains(b + j, n - j, "\"success\"") || contains(b, n, "\"data\"") ||
		     contains(b, n, "\"errorType\"")))
			return 90;
		if (key_at(b, n, i, "data", &j) && j < n && b[j] == '{' &&
		    (contains(b, n, "\"resultType\"") ||
		     key_at(b, n, sniff_skip_space(b, n, j + 1), "result", &j)))
			return 90;
		return 0;
	}
	if (b[i] != '[')
		return 0;
	i = sniff_skip_space(b, n, i + 1);
	if (i == n || b[i] != '{')
		return 0;
	i = sniff_skip_space(b, n, i + 1);
	if (key_at(b, n, i, "metric", &j) && j < n && b[j] == '{' &&
	    (contains(b, n, "\"values\"") || contains(b, n, "\"value\"") || n == 4096))
		return 90;
	return 0;
}
