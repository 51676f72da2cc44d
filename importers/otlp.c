/*
 * OTLP/JSON traces (ExportTraceServiceRequest, the protobuf JSON mapping of
 * opentelemetry-proto) into the phase tree: workflow -> step -> span ...
 *
 * The export is read whole (at most OTLP_MAX_BYTES decompressed, an error
 * beyond: split the export) and parsed with jansson; the collector's file
 * exporter writes one request a line, and so several documents in a row are
 * read one after another.  Every span of every resource and scope is kept
 * until the end, then placed by parentSpanId within its traceId.
 *
 * Without --step, each root span (no parent, or a parent not in the export)
 * is a step of the workflow, named after the span: the step node is found or
 * created by name (roots of the same name share one), takes the span's ids
 * and attributes in its attrs and keeps the span's window as its declared
 * window ({"manifest":...}, see store_refresh_window).  With --step, every
 * root span is a phase of kind span under that step.  Other spans are phases
 * of kind span under their parent; category: the resource's service.name;
 * attrs: trace_id, span_id, the span kind, host (the resource's host.name),
 * service, the attributes (AnyValue unwrapped) and the status.  Span events
 * become events on their span.  A span whose resource names a host.name runs
 * on that host's track (kind "host", as a manifest step's), so attribution
 * charges it with the host's metrics; a root span made a step takes that
 * track unless the step has one.  The first host.name is the source's host
 * unless --host gave one.  --time-offset shifts every time.
 *
 * Repairs, counted in diagnostics: spans without an id or a usable time are
 * skipped (BAD_SPAN), a repeated (traceId, spanId) keeps the first (DUP_SPAN),
 * a parent not in the export or a cycle makes a root (ORPHAN_SPAN), an end
 * before the start is taken as the start (NEGATIVE_DURATION).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "importers/diag.h"
#include "importers/otlp.h"
#include "importers/sniff.h"
#include "importers/workflow.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/util/xalloc.h"

#define DIAG_LIST(X)                                                                               \
	X(BAD_SPAN, "spans without a spanId or a usable start and end time: skipped")              \
	X(DUP_SPAN, "spans whose traceId and spanId repeat an earlier span: skipped")              \
	X(ORPHAN_SPAN, "spans whose parent is not in the export (or is their own descendant):"     \
		       " taken as roots")                                                          \
	X(NEGATIVE_DURATION, "spans that end before they start: ended at their start")             \
	X(BAD_EVENT, "span events without a usable time: skipped")

DIAG_TABLE(DIAG_LIST);

struct span {
	char *name, *attrs;
	const char *service, *host; /* owned by strs */
	json_t *events;
	char *parent_key; /* traceId/parentSpanId, or NULL */
	int64_t start, end;
	int64_t parent; /* index; -1: a root */
	int64_t phase, step;
	int64_t cmin, cmax, children;
	int depth;
	int state; /* 0: not placed, 1: being placed, 2: placed */
};

struct ot {
	struct store *st;
	const struct import_opts *o;
	struct input *in;
	char **err;
	int64_t source_id;
	struct span *spans;
	size_t nspans, cspans;
	char **strs; /* hosts and services, owned */
	size_t nstrs, cstrs;
	const char *first_host;
	struct strmap by_key, step_root, host_track;
	int64_t phases, events;
	struct diag_counts dc;
};

static const char *keep(struct ot *p, const char *s)
{
	if (!s)
		return NULL;
	XGROW(p->strs, p->nstrs + 1, p->cstrs);
	return p->strs[p->nstrs++] = xstrdup(s);
}

/* An AnyValue ({"stringValue": ...}, {"intValue": "5"}, ...) as plain JSON. */
static json_t *any_value(json_t *v)
{
	const char *k;
	json_t *x;
	json_object_foreach(v, k, x)
	{
		if (!strcmp(k, "intValue") && json_is_string(x)) {
			char *end;
			long long n = strtoll(json_string_value(x), &end, 10);
			return *end ? json_incref(x) : json_integer(n);
		}
		if (!strcmp(k, "arrayValue")) {
			json_t *a = json_array(), *e;
			size_t i;
			json_array_foreach(json_object_get(x, "values"), i, e)
			    json_array_append_new(a, any_value(e));
			return a;
		}
		if (!strcmp(k, "kvlistValue")) {
			json_t *o = json_object(), *e;
			size_t i;
			json_array_foreach(json_object_get(x, "values"), i, e)
			{
				const char *key = json_string_value(json_object_get(e, "key"));
				if (key)
					json_object_set_new(o, key,
							    any_value(json_object_get(e, "value")));
			}
			return o;
		}
		return json_incref(x);
	}
	return json_null();
}

/* A list of KeyValue as one JSON object. */
static json_t *key_values(json_t *list)
{
	json_t *o = json_object(), *e;
	size_t i;
	json_array_foreach(list, i, e)
	{
		const char *key = json_string_value(json_object_get(e, "key"));
		if (key)
			json_object_set_new(o, key, any_value(json_object_get(e, "value")));
	}
	return o;
}

static int span_time(struct ot *p, json_t *v, int64_t *ns)
{
	return workflow_time(v, ns) < 0 || (p->o->has_time_offset &&
					    __builtin_add_overflow(*ns, p->o->time_offset_ns, ns))
		   ? -1
		   : 0;
}

static void add_span(struct ot *p, json_t *js, const char *host, const char *service)
{
	const char *trace = json_string_value(json_object_get(js, "traceId"));
	const char *id = json_string_value(json_object_get(js, "spanId"));
	const char *parent = json_string_value(json_object_get(js, "parentSpanId"));
	const char *name = json_string_value(json_object_get(js, "name"));
	int64_t start, end;
	trace = trace ? trace : "";
	if (!id || !*id || span_time(p, json_object_get(js, "startTimeUnixNano"), &start) < 0 ||
	    span_time(p, json_object_get(js, "endTimeUnixNano"), &end) < 0) {
		diag_count(&p->dc, D_BAD_SPAN, 1, "span '%.80s' id '%.40s'", name ? name : "",
			   id ? id : "");
		return;
	}
	struct sbuf key;
	sbuf_init(&key);
	sbuf_addf(&key, "%s/%s", trace, id);
	int created;
	strmap_put(&p->by_key, key.buf, key.len, (int64_t)p->nspans, &created);
	if (!created) {
		diag_count(&p->dc, D_DUP_SPAN, 1, "trace '%.40s' span '%.40s'", trace, id);
		sbuf_release(&key);
		return;
	}
	if (end < start) {
		diag_count(&p->dc, D_NEGATIVE_DURATION, 1, "span '%.80s' id '%.40s'",
			   name ? name : "", id);
		end = start;
	}
	XGROW(p->spans, p->nspans + 1, p->cspans);
	struct span *s = &p->spans[p->nspans++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name && *name ? name : "(unnamed span)");
	s->service = service;
	s->host = host;
	s->start = start;
	s->end = end;
	s->parent = -1;
	if (parent && *parent) {
		sbuf_reset(&key);
		sbuf_addf(&key, "%s/%s", trace, parent);
		s->parent_key = sbuf_detach(&key);
	}
	sbuf_release(&key);
	json_t *a = json_object();
	json_object_set(a, "trace_id", json_object_get(js, "traceId"));
	json_object_set(a, "span_id", json_object_get(js, "spanId"));
	if (json_object_get(js, "kind"))
		json_object_set(a, "span_kind", json_object_get(js, "kind"));
	if (host)
		json_object_set_new(a, "host", json_string(host));
	if (service)
		json_object_set_new(a, "service", json_string(service));
	json_t *attrs = json_object_get(js, "attributes");
	if (json_array_size(attrs))
		json_object_set_new(a, "attributes", key_values(attrs));
	json_t *status = json_object_get(js, "status");
	if (json_object_size(status))
		json_object_set(a, "status", status);
	s->attrs = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	if (json_array_size(json_object_get(js, "events")))
		s->events = json_incref(json_object_get(js, "events"));
}

/* One ExportTraceServiceRequest; -1 when it is not one. */
static int document(struct ot *p, json_t *doc, size_t at)
{
	json_t *rs = json_object_get(doc, "resourceSpans");
	if (!json_is_array(rs)) {
		const char *what = json_object_get(doc, "resourceMetrics") ? "metrics"
				   : json_object_get(doc, "resourceLogs")  ? "logs"
									   : NULL;
		*p->err = what ? xasprintf("%s: byte %zu: an OTLP %s export: only traces"
					   " (\"resourceSpans\") are imported",
					   input_path(p->in), at, what)
			       : xasprintf("%s: byte %zu: not an OTLP/JSON trace export: expected"
					   " an object with \"resourceSpans\"",
					   input_path(p->in), at);
		return -1;
	}
	json_t *r;
	size_t i;
	json_array_foreach(rs, i, r)
	{
		json_t *ra =
		    key_values(json_object_get(json_object_get(r, "resource"), "attributes"));
		const char *host = keep(p, json_string_value(json_object_get(ra, "host.name")));
		const char *service =
		    keep(p, json_string_value(json_object_get(ra, "service.name")));
		json_decref(ra);
		p->first_host = p->first_host ? p->first_host : host;
		json_t *scopes = json_object_get(r, "scopeSpans"), *sc;
		if (!scopes) /* OTLP before 0.15 */
			scopes = json_object_get(r, "instrumentationLibrarySpans");
		size_t j;
		json_array_foreach(scopes, j, sc)
		{
			json_t *sp;
			size_t k;
			json_array_foreach(json_object_get(sc, "spans"), k, sp)
			    add_span(p, sp, host, service);
		}
	}
	return 0;
}

/* Places span i after its chain of ancestors, as workflow.c places steps. */
static void place(struct ot *p, size_t i)
{
	size_t *chain = NULL, n = 0, cap = 0;
	size_t j = i;
	for (;;) {
		struct span *s = &p->spans[j];
		if (s->state == 2)
			break;
		XGROW(chain, n + 1, cap);
		chain[n++] = j;
		s->state = 1;
		struct strmap_ent *e =
		    s->parent_key ? strmap_get(&p->by_key, s->parent_key, strlen(s->parent_key))
				  : NULL;
		if (s->parent_key && (!e || p->spans[e->value].state == 1)) {
			diag_count(&p->dc, D_ORPHAN_SPAN, 1, "span '%.80s', parent '%.80s'",
				   s->name, s->parent_key);
			e = NULL;
		}
		if (!e)
			break;
		s->parent = e->value;
		j = (size_t)e->value;
	}
	while (n--) {
		struct span *s = &p->spans[chain[n]];
		s->depth = s->parent < 0 ? 1 : p->spans[s->parent].depth + 1;
		s->state = 2;
	}
	free(chain);
}

static int write_events(struct ot *p, struct span *s)
{
	json_t *e;
	size_t i;
	json_array_foreach(s->events, i, e)
	{
		int64_t t;
		const char *name = json_string_value(json_object_get(e, "name"));
		if (span_time(p, json_object_get(e, "timeUnixNano"), &t) < 0) {
			diag_count(&p->dc, D_BAD_EVENT, 1, "event '%.80s' of span '%.80s'",
				   name ? name : "", s->name);
			continue;
		}
		name = name && *name ? name : "(unnamed event)";
		json_t *attrs = key_values(json_object_get(e, "attributes"));
		char *text = json_object_size(attrs) ? json_dumps(attrs, JSON_COMPACT) : NULL;
		json_decref(attrs);
		int64_t name_id = store_intern(p->st, name, strlen(name), p->err);
		int rc = name_id < 0
			     ? -1
			     : store_add_event(p->st, p->source_id, 0, t, name_id, NULL, s->phase,
					       text, text ? strlen(text) : 0, p->err);
		free(text);
		if (rc < 0)
			return -1;
		p->events++;
	}
	return 0;
}

static int write_span(struct ot *p, struct span *s)
{
	int64_t dur = s->end - s->start, covered = 0;
	if (s->children) {
		int64_t a = s->cmin > s->start ? s->cmin : s->start;
		int64_t b = s->cmax < s->end ? s->cmax : s->end;
		covered = b > a ? b - a : 0;
	}
	int64_t parent = s->parent >= 0 ? p->spans[s->parent].phase : s->step;
	int64_t track =
	    s->host ? workflow_host_track(p->st, p->source_id, &p->host_track, s->host, p->err) : 0;
	if (track < 0)
		return -1;
	struct phase_row r = {.id = s->phase,
			      .track_id = track,
			      .parent_id = parent,
			      .kind = PHASE_SPAN,
			      .source_id = p->source_id,
			      .start_ns = s->start,
			      .dur_ns = dur,
			      .self_ns = dur - covered,
			      .child_count = s->children,
			      .depth = s->depth + (p->o->step ? 1 : 0),
			      .attrs = s->attrs,
			      .attrs_len = s->attrs ? strlen(s->attrs) : 0};
	r.name_id = store_intern(p->st, s->name, strlen(s->name), p->err);
	if (r.name_id < 0)
		return -1;
	if (s->service &&
	    (r.cat_id = store_intern(p->st, s->service, strlen(s->service), p->err)) < 0)
		return -1;
	if (store_add_phase(p->st, &r, p->err) < 0)
		return -1;
	p->phases++;
	return 0;
}

static int finish(struct ot *p)
{
	int64_t step = 0;
	if (p->o->step && (step = import_step_node(p->st, p->o, p->o->step, p->err)) < 0)
		return -1;
	for (size_t i = 0; i < p->nspans; i++)
		place(p, i);
	/* ids first: a child may come before its parent in the export */
	for (size_t i = 0; i < p->nspans; i++) {
		struct span *s = &p->spans[i];
		if (s->parent >= 0 || p->o->step) {
			s->phase = store_reserve_phase_id(p->st);
			s->step = step;
		} else if ((s->phase = s->step = import_step_node(p->st, p->o, s->name, p->err)) <
			   0) {
			return -1;
		}
		if (s->parent >= 0) {
			struct span *q = &p->spans[s->parent];
			q->cmin = q->children && q->cmin < s->start ? q->cmin : s->start;
			q->cmax = q->children && q->cmax > s->end ? q->cmax : s->end;
			q->children++;
		}
	}
	struct sbuf key;
	sbuf_init(&key);
	int rc = -1;
	for (size_t i = 0; i < p->nspans; i++) {
		struct span *s = &p->spans[i];
		if (s->parent >= 0 || p->o->step) {
			if (write_span(p, s) < 0)
				goto out;
		} else {
			/* a root as a step: the union of the windows of the roots
			 * that share it, the attrs of the first */
			sbuf_reset(&key);
			sbuf_addf(&key, "%lld", (long long)s->step);
			int created;
			struct strmap_ent *e =
			    strmap_put(&p->step_root, key.buf, key.len, (int64_t)i, &created);
			struct span *first = &p->spans[e->value];
			if (!created) {
				first->start = first->start < s->start ? first->start : s->start;
				first->end = first->end > s->end ? first->end : s->end;
			}
		}
		if (write_events(p, s) < 0)
			goto out;
	}
	for (size_t i = 0; i < p->step_root.cap; i++) {
		if (!p->step_root.slot[i].key)
			continue;
		struct span *s = &p->spans[p->step_root.slot[i].value];
		int64_t t = s->host ? workflow_host_track(p->st, p->source_id, &p->host_track,
							  s->host, p->err)
				    : 0;
		if (t < 0 || (t && workflow_step_track(p->st, s->step, t, p->err) < 0) ||
		    workflow_mark_step(p->st, s->step, s->attrs, s->start, s->end, p->err) < 0 ||
		    store_refresh_window(p->st, s->step, p->err) < 0)
			goto out;
	}
	if (step && store_refresh_window(p->st, step, p->err) < 0)
		goto out;
	if (p->first_host &&
	    store_set_source_anchor(p->st, p->source_id,
				    p->o->has_time_offset ? "time-offset" : "absolute",
				    p->o->has_time_offset ? p->o->time_offset_ns : 0, -1,
				    p->first_host, NULL, p->err) < 0)
		goto out;
	if (diag_write(&p->dc, diag_info, D_COUNT, p->st, p->source_id, p->err) < 0)
		goto out;
	rc = store_finish_source(p->st, p->source_id, p->phases, p->events, 0,
				 p->dc.n[D_BAD_SPAN] + p->dc.n[D_DUP_SPAN] + p->dc.n[D_BAD_EVENT],
				 p->err);
out:
	sbuf_release(&key);
	return rc;
}

static void release(struct ot *p)
{
	for (size_t i = 0; i < p->nspans; i++) {
		free(p->spans[i].name);
		free(p->spans[i].attrs);
		free(p->spans[i].parent_key);
		json_decref(p->spans[i].events);
	}
	free(p->spans);
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	diag_release(&p->dc);
	strmap_clear(&p->by_key);
	strmap_clear(&p->step_root);
	strmap_clear(&p->host_track);
}

/* The whole input, at most OTLP_MAX_BYTES. */
static int slurp(struct ot *p, struct sbuf *sb)
{
	for (;;) {
		sbuf_grow(sb, 1 << 16);
		ssize_t n = input_read(p->in, sb->buf + sb->len, 1 << 16, p->err);
		if (n < 0)
			return -1;
		if (!n)
			return 0;
		sb->len += (size_t)n;
		sb->buf[sb->len] = 0;
		if (sb->len > OTLP_MAX_BYTES) {
			*p->err =
			    xasprintf("%s: byte %zu: an OTLP/JSON export larger than %zu MB"
				      " (read whole): split it",
				      input_path(p->in), OTLP_MAX_BYTES, OTLP_MAX_BYTES >> 20);
			return -1;
		}
	}
}

int otlp_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct ot p;
	memset(&p, 0, sizeof(p));
	p.st = st;
	p.o = o;
	p.in = in;
	p.err = err;
	struct sbuf buf;
	sbuf_init(&buf);
	int rc = -1;
	struct source_row src = {.path = input_path(in),
				 .format = "otlp",
				 .compression = input_codec_name(input_codec(in)),
				 .anchor = o->has_time_offset ? "time-offset" : "absolute",
				 .size_bytes = (int64_t)input_file_size(in),
				 .time_offset_ns = o->has_time_offset ? o->time_offset_ns : 0,
				 .rank = -1,
				 .host = o->host};
	if ((p.source_id = store_add_source(st, &src, err)) < 0 || slurp(&p, &buf) < 0)
		goto out;
	size_t at = 0;
	if (buf.len >= 3 && !memcmp(buf.buf, "\xef\xbb\xbf", 3))
		at = 3;
	int docs = 0;
	while ((at = sniff_skip_space((const unsigned char *)buf.buf, buf.len, at)) < buf.len) {
		json_error_t je;
		json_t *doc = json_loadb(buf.buf + at, buf.len - at, JSON_DISABLE_EOF_CHECK, &je);
		if (!doc) {
			*err = xasprintf("%s: byte %zu: %s", input_path(in),
					 at + (size_t)je.position, je.text);
			goto out;
		}
		int r = document(&p, doc, at);
		json_decref(doc);
		if (r < 0)
			goto out;
		at += (size_t)je.position;
		docs++;
	}
	if (!docs) {
		*err = xasprintf("%s: byte %zu: no OTLP/JSON document", input_path(in), at);
		goto out;
	}
	rc = finish(&p);
out:
	sbuf_release(&buf);
	release(&p);
	return rc;
}

/* A JSON object whose first key is "resourceSpans": 90; a metrics or logs
 * export: 50, above a JSON object of unknown shape (chrome's 10 to 20), so
 * that it reaches otlp_import and its clear refusal. */
int otlp_sniff(const unsigned char *b, size_t n)
{
	size_t i = sniff_start(b, n);
	if (i == n || b[i] != '{')
		return 0;
	i = sniff_skip_space(b, n, i + 1);
	static const char spans[] = "\"resourceSpans\"", metrics[] = "\"resourceMetrics\"",
			  logs[] = "\"resourceLogs\"";
	if (n - i >= sizeof(spans) - 1 && !memcmp(b + i, spans, sizeof(spans) - 1))
		return 90;
	if ((n - i >= sizeof(metrics) - 1 && !memcmp(b + i, metrics, sizeof(metrics) - 1)) ||
	    (n - i >= sizeof(logs) - 1 && !memcmp(b + i, logs, sizeof(logs) - 1)))
		return 50;
	return 0;
}
