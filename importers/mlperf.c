/*
 * MLPerf logs: lines holding ":::MLLOG" and a JSON object with namespace,
 * time_ms (milliseconds since the epoch), event_type, key, value and
 * metadata.  Such lines are usually mixed with the benchmark's own output
 * (and may carry a prefix such as a rank); every other line is ignored and
 * counted.
 *
 * The interval keys (run_start/run_stop, init_, block_, epoch_, eval_)
 * become span phases under the step, nested as they are open: a start opens
 * its interval inside the innermost open one, so run > block > epoch > eval
 * and run > epoch > block (BERT's order) both come out as written, and init
 * sits under run when run is open.  A phase's id is reserved at its start
 * (so the events and phases inside it can refer to it) and its row written
 * at its stop.  Repairs, each counted: a second start of an open interval
 * with the same number is ignored (every rank logs init_start); a start
 * with a new number closes the open one; any start closes an open init or
 * eval (they hold nothing); a stop closes the intervals still open inside
 * its own; a stop with nothing open is skipped; intervals open at the end
 * close at the log's last time.  Every other key is an event (name: the
 * key; attrs: event_type, value and metadata) bound to the innermost open
 * interval, else to the step (cache_clear before each run), whose window
 * covers every record's time.  Ranks writing at once may join records on
 * one line: each ":::MLLOG" starts a record.  Memory holds one line and at
 * most one open interval per level.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "importers/lines.h"
#include "importers/mlperf.h"
#include "importers/msource.h"
#include "importers/workflow.h"
#include "model/util/xalloc.h"

#define MLLOG ":::MLLOG"

enum level { L_RUN, L_INIT, L_BLOCK, L_EPOCH, L_EVAL, L_COUNT };

static const struct {
	const char *start, *stop, *name, *num_key;
	int leaf; /* holds no other interval */
} levels[L_COUNT] = {
    [L_RUN] = {"run_start", "run_stop", "run", NULL, 0},
    [L_INIT] = {"init_start", "init_stop", "init", NULL, 1},
    [L_BLOCK] = {"block_start", "block_stop", "block", "first_epoch_num", 0},
    [L_EPOCH] = {"epoch_start", "epoch_stop", "epoch", "epoch_num", 0},
    [L_EVAL] = {"eval_start", "eval_stop", "eval", "epoch_num", 1},
};

#define D_NOT_MLLOG "NOT_MLLOG"
#define M_NOT_MLLOG "lines without :::MLLOG (the benchmark's own output) ignored"
#define D_BAD_JSON  "BAD_JSON"
#define M_BAD_JSON  ":::MLLOG lines whose JSON is malformed or has no string \"key\": skipped"
#define D_BAD_TIME  "BAD_TIME"
#define M_BAD_TIME  ":::MLLOG lines without a usable \"time_ms\": skipped"
#define D_LONG	    "LONG_LINE"
#define M_LONG	    "lines longer than 1 MB skipped unread"
#define D_DUP	    "DUP_START"
#define M_DUP	    "start of an interval already open with the same number: ignored"
#define D_UNCLOSED  "UNCLOSED"
#define M_UNCLOSED                                                                                 \
	"interval without its stop: closed by the next start or outer stop, or at"                 \
	" the log's last time"
#define D_JOINED    "JOINED_RECORDS"
#define M_JOINED    "lines holding several :::MLLOG records (ranks writing at once): each read"
#define D_UNMATCHED "UNMATCHED_STOP"
#define M_UNMATCHED "stop of an interval that is not open: skipped"

struct open_iv {
	int active;
	int64_t id, start, num, children, child_ns;
	int has_num, depth;
	int parent; /* level, or -1: the step */
	char *attrs;
};

struct ml {
	struct store *st;
	const struct import_opts *o;
	const char *path;
	char **err;
	struct msource ms;
	int64_t step_id, lineno, first_t, last_t, mllog, phases, events;
	int any_t;
	struct open_iv open[L_COUNT];
	int stk[L_COUNT]; /* the open levels, outermost first */
	int nstk;
};

/* A record anywhere in the sniffed window: ":::MLLOG", blanks, '{'.  Anywhere,
 * because the benchmark's own output (a shell trace, a banner) often comes
 * first; the brace, so that a source listing or a message that only names
 * the marker (mlperf_logging's LOG_PREFIX = ":::MLLOG") is no MLPerf log. */
int mlperf_sniff(const unsigned char *buf, size_t len)
{
	size_t k = strlen(MLLOG);
	const unsigned char *p = buf, *end = buf + len;
	while ((p = memmem(p, (size_t)(end - p), MLLOG, k))) {
		p += k;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == '{')
			return 90;
	}
	return 0;
}

static char *example(struct ml *p, const char *line, size_t n)
{
	return xasprintf("%s:%lld: %.*s", input_base_name(p->path), (long long)p->lineno,
			 (int)(n > 200 ? 200 : n), line);
}

static void diag(struct ml *p, const char *code, const char *msg, const char *line, size_t n,
		 int dropped)
{
	int i = 0;
	while (i < p->ms.ndiag && strcmp(p->ms.diag[i].code, code))
		i++;
	if (i < p->ms.ndiag) {
		msource_diag(&p->ms, code, msg, NULL, dropped);
		return;
	}
	char *ex = example(p, line, n);
	msource_diag(&p->ms, code, msg, ex, dropped);
	free(ex);
}

static int close_top(struct ml *p, int64_t t, int implicit);

/* Closes level l and, first, the intervals open inside it. */
static int close_level(struct ml *p, int l, int64_t t, int implicit)
{
	while (p->stk[p->nstk - 1] != l)
		if (close_top(p, t, 1) < 0)
			return -1;
	return close_top(p, t, implicit);
}

static int close_top(struct ml *p, int64_t t, int implicit)
{
	int l = p->stk[--p->nstk];
	struct open_iv *v = &p->open[l];
	if (implicit)
		diag(p, D_UNCLOSED, M_UNCLOSED, levels[l].start, strlen(levels[l].start), 0);
	int64_t dur = t > v->start ? t - v->start : 0;
	int64_t self = dur > v->child_ns ? dur - v->child_ns : 0;
	char name[64];
	if (v->has_num)
		snprintf(name, sizeof(name), "%s %lld", levels[l].name, (long long)v->num);
	else
		snprintf(name, sizeof(name), "%s", levels[l].name);
	struct phase_row r = {.id = v->id,
			      .parent_id = v->parent < 0 ? p->step_id : p->open[v->parent].id,
			      .kind = PHASE_SPAN,
			      .source_id = p->ms.source_id,
			      .start_ns = v->start,
			      .dur_ns = dur,
			      .self_ns = self,
			      .child_count = v->children,
			      .depth = v->depth,
			      .attrs = v->attrs,
			      .attrs_len = v->attrs ? strlen(v->attrs) : 0};
	r.name_id = store_intern(p->st, name, strlen(name), p->err);
	if (r.name_id < 0)
		return -1;
	r.cat_id = store_intern(p->st, "mlperf", 6, p->err);
	if (r.cat_id < 0 || store_add_phase(p->st, &r, p->err) < 0)
		return -1;
	if (v->parent >= 0) {
		p->open[v->parent].children++;
		p->open[v->parent].child_ns += dur;
	}
	p->phases++;
	free(v->attrs);
	memset(v, 0, sizeof(*v));
	return 0;
}

static int start_level(struct ml *p, int l, int64_t t, json_t *meta, const char *line, size_t n)
{
	struct open_iv *v = &p->open[l];
	json_t *num = levels[l].num_key ? json_object_get(meta, levels[l].num_key) : NULL;
	int has_num = json_is_integer(num);
	int64_t nv = has_num ? (int64_t)json_integer_value(num) : 0;
	if (v->active) {
		if (v->has_num == has_num && v->num == nv) {
			diag(p, D_DUP, M_DUP, line, n, 0);
			return 0;
		}
		if (close_level(p, l, t, 1) < 0)
			return -1;
	}
	for (int k = 0; k < L_COUNT; k++)
		if (p->open[k].active && levels[k].leaf && close_level(p, k, t, 1) < 0)
			return -1;
	int parent = p->nstk ? p->stk[p->nstk - 1] : -1;
	*v = (struct open_iv){.active = 1,
			      .id = store_reserve_phase_id(p->st),
			      .start = t,
			      .num = nv,
			      .has_num = has_num,
			      .parent = parent,
			      .depth = parent < 0 ? 2 : p->open[parent].depth + 1};
	p->stk[p->nstk++] = l;
	if (json_is_object(meta) && json_object_size(meta))
		v->attrs = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
	return 0;
}

static int add_event(struct ml *p, int64_t t, json_t *o, const char *key)
{
	json_t *a = json_object();
	json_t *et = json_object_get(o, "event_type"), *val = json_object_get(o, "value");
	json_t *meta = json_object_get(o, "metadata");
	if (json_is_string(et))
		json_object_set(a, "event_type", et);
	json_object_set_new(a, "value", val ? json_incref(val) : json_null());
	if (meta)
		json_object_set(a, "metadata", meta);
	char *attrs = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(a);
	int in = p->nstk ? p->stk[p->nstk - 1] : -1;
	int rc = -1;
	int64_t name_id = store_intern(p->st, key, strlen(key), p->err);
	if (name_id >= 0 && store_add_event(p->st, p->ms.source_id, 0, t, name_id, NULL,
					    in < 0 ? p->step_id : p->open[in].id, attrs,
					    attrs ? strlen(attrs) : 0, p->err) == 0) {
		p->events++;
		rc = 0;
	}
	free(attrs);
	return rc;
}

/* ms since the epoch (an integer or a real) -> ns with --time-offset; 0: bad. */
static int time_of(struct ml *p, json_t *v, int64_t *out)
{
	double ms;
	if (json_is_integer(v))
		ms = (double)json_integer_value(v);
	else if (json_is_real(v))
		ms = json_real_value(v);
	else
		return -1;
	if (!(ms >= 0 && ms < 9.2e12)) /* before 2262 */
		return -1;
	int64_t ns =
	    json_is_integer(v) ? (int64_t)json_integer_value(v) * 1000000 : (int64_t)(ms * 1e6);
	if (p->o->has_time_offset && __builtin_add_overflow(ns, p->o->time_offset_ns, &ns))
		return -1;
	*out = ns;
	return 0;
}

/* One record: the JSON text j[0..jn) of line s[0..n). */
static int record(struct ml *p, const char *s, size_t n, const char *j, size_t jn)
{
	json_error_t je;
	json_t *o = json_loadb(j, jn, JSON_DISABLE_EOF_CHECK, &je);
	const char *key = json_string_value(json_object_get(o, "key"));
	int64_t t;
	int rc = 0;
	if (!json_is_object(o) || !key) {
		diag(p, D_BAD_JSON, M_BAD_JSON, s, n, 1);
		goto out;
	}
	if (time_of(p, json_object_get(o, "time_ms"), &t) < 0) {
		diag(p, D_BAD_TIME, M_BAD_TIME, s, n, 1);
		goto out;
	}
	if (!p->any_t || t > p->last_t)
		p->last_t = t;
	if (!p->any_t || t < p->first_t)
		p->first_t = t;
	p->any_t = 1;
	for (int l = 0; l < L_COUNT; l++) {
		if (!strcmp(key, levels[l].start)) {
			rc = start_level(p, l, t, json_object_get(o, "metadata"), s, n);
			goto out;
		}
		if (!strcmp(key, levels[l].stop)) {
			if (p->open[l].active)
				rc = close_level(p, l, t, 0);
			else
				diag(p, D_UNMATCHED, M_UNMATCHED, s, n, 1);
			goto out;
		}
	}
	rc = add_event(p, t, o, key);
out:
	json_decref(o);
	return rc;
}

static int line(struct ml *p, const char *s, size_t n)
{
	const char *m = strstr(s, MLLOG);
	if (!m) {
		diag(p, D_NOT_MLLOG, M_NOT_MLLOG, s, n, 0);
		return 0;
	}
	p->mllog++;
	size_t k = strlen(MLLOG);
	for (int nrec = 0; m; nrec++) {
		const char *j = m + k, *next = strstr(j, MLLOG);
		if (nrec == 1)
			diag(p, D_JOINED, M_JOINED, s, n, 0);
		if (record(p, s, n, j, (size_t)((next ? next : s + n) - j)) < 0)
			return -1;
		m = next;
	}
	return 0;
}

int mlperf_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct ml p = {.st = st, .o = o, .path = input_path(in), .err = err};
	struct lines ls;
	lines_init(&ls, in);
	ls.skip_long = 1;
	int rc = -1, begun = 0;
	if (msource_begin(&p.ms, st, in, "mlperf", o->has_time_offset ? "time-offset" : "absolute",
			  o, err) < 0)
		goto out;
	begun = 1;
	p.step_id = import_step_node(st, o, o->step ? o->step : input_base_name(p.path), err);
	if (p.step_id < 0)
		goto out;
	char *s;
	size_t n;
	int r;
	while ((r = lines_next(&ls, &s, &n, err)) > 0) {
		p.lineno = ls.lineno;
		if (line(&p, s, n) < 0)
			goto out;
	}
	if (r < 0)
		goto out;
	if (!p.mllog) {
		*err = xasprintf("%s: no :::MLLOG line (not an MLPerf log)", p.path);
		goto out;
	}
	for (int64_t i = 0; i < ls.skipped_long; i++)
		diag(&p, D_LONG, M_LONG, "", 0, 0);
	while (p.nstk)
		if (close_top(&p, p.last_t, 1) < 0)
			goto out;
	if (p.any_t && workflow_widen_step(st, p.step_id, p.first_t, p.last_t, err) < 0)
		goto out;
	if (store_refresh_window(st, p.step_id, err) < 0)
		goto out;
	int64_t samples = p.ms.samples, dropped = p.ms.dropped;
	begun = 0;
	if (msource_end(&p.ms, err) < 0 ||
	    store_finish_source(st, p.ms.source_id, p.phases, p.events, samples, dropped, err) < 0)
		goto out;
	rc = 0;
out:
	if (begun)
		msource_release(&p.ms);
	for (int l = 0; l < L_COUNT; l++)
		free(p.open[l].attrs);
	lines_release(&ls);
	return rc;
}
