/*
 * Chrome trace event format (PyTorch/Kineto, the legacy autograd profiler,
 * TensorFlow and JAX exports): what the events mean.
 * importers/chrome_json.c reads the JSON text and hands each event here
 * (chrome_finish_event), which sends it to the nest builder
 * (model/ingest/nest.h) as a span, an instant, a flow's end or a counter's
 * samples; the tree is built once the whole file has been read, because
 * metadata such as baseTimeNanoseconds or distributedInfo may follow the
 * events.
 *
 * Every event is stored or counted in diagnostics with a reason.  A
 * trace's rank is its distributedInfo's, else --rank's, else its file
 * name's.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "importers/chrome.h"
#include "importers/chrome_int.h"
#include "importers/devtrack.h"
#include "importers/diag.h"
#include "importers/sniff.h"
#include "importers/tally.h"
#include "model/ingest/nest.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

#define INTERN_CACHE_MAX (1 << 16) /* names cached; cleared when full */

DIAG_INFO(DIAG_LIST);

/* What a track of a pid/tid holds: host work, a device stream's work, or
 * the GPU annotations Kineto writes on that stream (a lane of their own, so
 * that they are neither the stream's busy time nor its items). */
enum { TRACK_HOST, TRACK_STREAM, TRACK_ANNOTATIONS };

struct track {
	char *pid, *tid;
	int device, async; /* device: TRACK_* */
	int looks;	   /* a span of a category that looks like a device's */
	int64_t last_ts;   /* greatest time seen, to close unclosed begins */
};

struct open_span { /* a "B" or "b" waiting for its end */
	int64_t ts, name_id, cat_id;
	uint32_t track;
	int kind;
	char *attrs;
	size_t attrs_len;
};

struct open_stack {
	struct open_span *v;
	size_t n, alloc;
};

/* ---- helpers ---- */

void chrome_note(struct cp *p, enum diag_code d, const char *example)
{
	p->diag[d]++;
	if (!p->diag_example[d] && example)
		p->diag_example[d] = xstrdup(example);
}

static int64_t intern(struct cp *p, const char *s, size_t n)
{
	struct strmap_ent *e = strmap_get(&p->names, s, n);
	if (e)
		return e->value;
	if (p->names.n >= INTERN_CACHE_MAX)
		strmap_clear(&p->names);
	int64_t id = store_intern(p->st, s, n, p->err);
	if (id < 0) {
		p->failed = 1;
		return -1;
	}
	strmap_put(&p->names, s, n, id, NULL);
	return id;
}

/* Applies fn to every text buffer of an event. */
static void event_each_buf(struct event *e, void (*fn)(struct sbuf *))
{
	struct sbuf *bufs[] = {&e->ph,	    &e->name, &e->cat,	    &e->pid,	   &e->tid,
			       &e->ts,	    &e->dur,  &e->id,	    &e->bp,	   &e->scope,
			       &e->bind_id, &e->args, &e->arg_name, &e->arg_labels};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		fn(bufs[i]);
}

/* ---- events ---- */

static int64_t ts_of(struct cp *p, const struct sbuf *t, int *ok)
{
	int64_t v = 0;
	*ok = t->len && !text_parse_units(t->buf, t->len, 1000, &v);
	if (*ok) {
		if (!p->any_ts || v < p->min_ts)
			p->min_ts = v;
		if (!p->any_ts || v > p->max_ts)
			p->max_ts = v;
		p->any_ts = 1;
	}
	return v;
}

static int ieq(const struct sbuf *s, const char *lit)
{
	return !strcasecmp(s->buf, lit);
}

/* Categories and the phase kinds they make; anything else is an operator.
 * Device work is what Kineto records on a device's stream or queue, whatever
 * the accelerator: CUDA, ROCm/HIP and XPU write kernel, gpu_memcpy and
 * gpu_memset (older Kineto: Kernel, Memcpy, Memset), MTIA its command
 * processor's mtia_ccp_events (pe_exe, dma_request, event_wait, ...), each
 * on the thread that Kineto names after its stream.  GPU user annotations
 * (ProfilerStep#N, Optimizer.step on the GPU) are no device work: they get
 * a lane of their own beside their stream. */
static const struct {
	const char *cat;
	int kind, device, flat;
} cat_kinds[] = {
    {"kernel", PHASE_KERNEL, TRACK_STREAM, 0},
    {"gpu_memcpy", PHASE_MEMCPY, TRACK_STREAM, 0},
    {"memcpy", PHASE_MEMCPY, TRACK_STREAM, 0},
    {"gpu_memset", PHASE_MEMSET, TRACK_STREAM, 0},
    {"memset", PHASE_MEMSET, TRACK_STREAM, 0},
    {"mtia_ccp_events", PHASE_KERNEL, TRACK_STREAM, 0},
    {"gpu_user_annotation", PHASE_GPU_ANNOTATION, TRACK_ANNOTATIONS, 1},
    {"cuda_runtime", PHASE_RUNTIME, 0, 0},
    {"runtime", PHASE_RUNTIME, 0, 0},
    {"cuda_driver", PHASE_RUNTIME, 0, 0},
    {"mtia_runtime", PHASE_RUNTIME, 0, 0},
    {"hip_runtime", PHASE_RUNTIME, 0, 0},
    {"xpu_runtime", PHASE_RUNTIME, 0, 0},
    {"xpu_driver", PHASE_RUNTIME, 0, 0},
    {"privateuse1_runtime", PHASE_RUNTIME, 0, 0},
    {"privateuse1_driver", PHASE_RUNTIME, 0, 0},
    {"cuda_sync", PHASE_RUNTIME, 0, 0},
    {"user_annotation", PHASE_ANNOTATION, 0, 0},
    {"trace", PHASE_SPAN, 0, 0},
    {"python_function", PHASE_SPAN, 0, 0},
    {"python", PHASE_SPAN, 0, 0},
};

static int line_of(struct cp *p, const struct event *e);
static int64_t lookup_id(struct cp *p, struct strmap *m, const char *pid, const char *tid);
static const char *meta_text(struct cp *p, int64_t v, struct sbuf *out);

/* An event of no device category on a track its names make a device's
 * (importers/devtrack.h): work on a stream, a row that repeats the
 * streams' work (a lane of its own, as GPU annotations), or host work; a
 * host event that carries XLA's correlation_id is the CUDA call that
 * launched the work of that id.  In a trace with XLA device planes, a
 * host event with an integer args.step_num is a StepTraceAnnotation, a
 * training step as Kineto's ProfilerStep#N is one, and an event of the
 * host plane whose name is "$file.py:line function" is a frame of XLA's
 * Python tracer, as Kineto's python_function events are. */
static int kind_by_track(struct cp *p, const struct event *e, int *device, int *flat)
{
	int line = p->device_names ? line_of(p, e) : DEVTRACK_HOST;
	if (p->xla_planes && (line == DEVTRACK_HOST || line == DEVTRACK_HOST_PLANE)) {
		if (e->has_step)
			return PHASE_PROFILER_STEP;
		if (line == DEVTRACK_HOST_PLANE && e->name.buf[0] == '$')
			return PHASE_SPAN;
	}
	switch (line) {
	case DEVTRACK_STREAM:
	case DEVTRACK_COPIES:
		*device = TRACK_STREAM;
		return devtrack_kind(e->name.buf, line == DEVTRACK_COPIES);
	case DEVTRACK_AGGREGATE:
		*device = TRACK_ANNOTATIONS;
		*flat = 1;
		return PHASE_GPU_ANNOTATION;
	default:
		return e->corr_xla ? PHASE_RUNTIME : PHASE_OPERATOR;
	}
}

/* Maps an event to a phase kind; sets *device to the kind of device track
 * it goes on (0: a host one) and *flat for spans that do not nest.  A trace uses a handful of
 * categories: the last few are remembered, so that most events cost one comparison. */
static int kind_of(struct cp *p, const struct event *e, int *device, int *flat,
		   struct cat_memo **memo)
{
	struct cat_memo *m = NULL;
	for (int i = 0; i < CAT_MEMO; i++)
		if (p->cat_memo[i].len == e->cat.len &&
		    !memcmp(p->cat_memo[i].cat, e->cat.buf, e->cat.len)) {
			m = &p->cat_memo[i];
			break;
		}
	struct cat_memo fresh = {.kind = PHASE_OPERATOR, .len = e->cat.len};
	if (!m) {
		for (size_t i = 0; i < sizeof(cat_kinds) / sizeof(cat_kinds[0]); i++)
			if (ieq(&e->cat, cat_kinds[i].cat)) {
				fresh.kind = cat_kinds[i].kind;
				fresh.device = cat_kinds[i].device;
				fresh.flat = cat_kinds[i].flat;
				break;
			}
		fresh.looks = !fresh.device && devtrack_category(e->cat.buf, e->cat.len);
		m = &fresh;
		if (e->cat.len < sizeof(fresh.cat)) {
			memcpy(fresh.cat, e->cat.buf, e->cat.len);
			m = &p->cat_memo[p->cat_memo_next++ % CAT_MEMO];
			*m = fresh;
		}
	}
	*memo = m == &fresh ? NULL : m;
	*device = m->device;
	*flat = m->flat;
	p->cat_looks = m->looks;
	int kind = m->kind;
	if (!m->device && kind == PHASE_OPERATOR)
		kind = kind_by_track(p, e, device, flat);
	/* device categories win: Kineto's GPU-side ProfilerStep#N is a
	 * gpu_user_annotation and must stay on its stream */
	if (!*device && !strncmp(e->name.buf, "ProfilerStep#", 13))
		return PHASE_PROFILER_STEP;
	return kind;
}

static void track_key(struct cp *p, const struct sbuf *pid, const struct sbuf *tid, int device,
		      int async)
{
	sbuf_reset(&p->scratch);
	sbuf_addc(&p->scratch, "HDN"[device]);
	sbuf_addc(&p->scratch, async ? 'A' : 'S');
	sbuf_addc(&p->scratch, '\x1f');
	sbuf_add(&p->scratch, pid->buf, pid->len);
	sbuf_addc(&p->scratch, '\x1f');
	sbuf_add(&p->scratch, tid->buf, tid->len);
}

/* The track of pid/tid, created on first use when `create` (only records
 * create tracks), or -1.  Events come in runs on one thread or stream: the
 * last few tracks found are tried first. */
static int64_t track_get(struct cp *p, const struct sbuf *pid, const struct sbuf *tid, int device,
			 int async, int create)
{
	for (int i = 0; i < TRACK_MEMO; i++) {
		const struct track_memo *m = &p->track_memo[i];
		if (!m->used)
			continue;
		const struct track *t = &p->tracks[m->track];
		if (t->device == device && t->async == async && !strcmp(t->pid, pid->buf) &&
		    !strcmp(t->tid, tid->buf))
			return m->track;
	}
	track_key(p, pid, tid, device, async);
	struct strmap_ent *e;
	if (create) {
		int created;
		e = strmap_put(&p->track_ids, p->scratch.buf, p->scratch.len, (int64_t)p->ntracks,
			       &created);
		if (created) {
			strmap_put(&p->track_pids, pid->buf, pid->len, 1, NULL);
			XGROW(p->tracks, p->ntracks + 1, p->tracks_alloc);
			struct track *t = &p->tracks[p->ntracks++];
			t->pid = xstrdup(pid->buf);
			t->tid = xstrdup(tid->buf);
			t->device = device;
			t->async = async;
			t->looks = 0;
			t->last_ts = INT64_MIN;
		}
	} else {
		e = strmap_get(&p->track_ids, p->scratch.buf, p->scratch.len);
		if (!e)
			return -1;
	}
	/* keys of distinct pid/tid pairs may coincide ("a\x1fb"/"c" and
	 * "a"/"b\x1fc"): only the track's own pid and tid are memoised */
	const struct track *t = &p->tracks[e->value];
	if (!strcmp(t->pid, pid->buf) && !strcmp(t->tid, tid->buf))
		p->track_memo[p->track_memo_next++ % TRACK_MEMO] =
		    (struct track_memo){(uint32_t)e->value, 1};
	return e->value;
}

static uint32_t track_of(struct cp *p, const struct sbuf *pid, const struct sbuf *tid, int device,
			 int async)
{
	return (uint32_t)track_get(p, pid, tid, device, async, 1);
}

/* The existing track of pid/tid, or -1. */
static int64_t track_find(struct cp *p, const struct sbuf *pid, const struct sbuf *tid, int device)
{
	return track_get(p, pid, tid, device, 0, 0);
}

/* Points carry no device category: they join the device stream of their
 * pid/tid when one exists (in real traces a stream's first kernel precedes
 * its flow ends), else the host thread. */
static uint32_t point_track(struct cp *p, const struct event *e)
{
	int64_t d = track_find(p, &e->pid, &e->tid, TRACK_STREAM);
	return d >= 0 ? (uint32_t)d : track_of(p, &e->pid, &e->tid, 0, 0);
}

static void seen_at(struct cp *p, uint32_t track, int64_t t)
{
	if (t > p->tracks[track].last_ts)
		p->tracks[track].last_ts = t;
}

/* ---- the profiler's bookkeeping ---- */

/* Beside the work it recorded, Kineto writes records of its own recording:
 * its trace span ("PyTorch Profiler (0)", category "Trace") on a process
 * whose pid is the text "Spans" (the text "Traces" in older versions, which
 * still put the "Iteration Start" instant there), and "Record Window End",
 * an instant of no process (pid "global" here).  A process of work has a
 * number for a pid.  Such a process, its threads and its spans are stored
 * as the profiler's bookkeeping (PHASE_PROFILER, model/store/store.h); pid
 * "global" only while it holds nothing but "Record Window End". */
static int bookkeeping_pid(const struct cp *p, const char *pid, int device)
{
	if (device)
		return 0;
	if (!strcmp(pid, "global"))
		return !p->global_work;
	return !strcmp(pid, "Spans") || !strcmp(pid, "Traces");
}

/* Notes an event of pid "global" that is not Kineto's "Record Window End". */
static void note_global(struct cp *p, const struct event *e, char ph)
{
	if (!p->global_work && !strcmp(e->pid.buf, "global") &&
	    ((ph != 'i' && ph != 'I') || strcmp(e->name.buf, "Record Window End")))
		p->global_work = 1;
}

/* The kind a span of track t is stored as: its own, or the bookkeeping's. */
static uint8_t span_kind(const struct cp *p, const struct track *t, uint8_t kind)
{
	return bookkeeping_pid(p, t->pid, t->device) ? PHASE_PROFILER : kind;
}

/* Hands a record to the nest builder, marking device tracks and counting spans. */
static int add_span(struct cp *p, struct nest_span s)
{
	if (p->tracks[s.track].device)
		s.flags |= NEST_ON_DEVICE;
	s.kind = span_kind(p, &p->tracks[s.track], s.kind);
	if (s.role == NEST_SPAN || s.role == NEST_DEVICE)
		p->spans++;
	int64_t end;
	seen_at(p, s.track, __builtin_add_overflow(s.start, s.dur, &end) ? s.start : end);
	if (nest_add(p->nest, &s, p->err) < 0) {
		p->failed = 1;
		return -1;
	}
	return 0;
}

static struct open_stack *open_stack(struct cp *p, struct strmap *m, const char *key, size_t n,
				     int create)
{
	struct strmap_ent *e =
	    create ? strmap_put(m, key, n, (int64_t)p->nopens, NULL) : strmap_get(m, key, n);
	if (!e)
		return NULL;
	if (e->value == (int64_t)p->nopens) {
		XGROW(p->opens, p->nopens + 1, p->opens_alloc);
		memset(&p->opens[p->nopens++], 0, sizeof(struct open_stack));
	}
	return &p->opens[e->value];
}

static void open_push(struct open_stack *os, struct open_span o, const char *attrs, size_t alen)
{
	o.attrs = alen ? xstrndup(attrs, alen) : NULL;
	o.attrs_len = alen;
	XGROW(os->v, os->n + 1, os->alloc);
	os->v[os->n++] = o;
}

/* Closes the latest begin of os at ts (B/E and b/e alike). */
static int open_close(struct cp *p, struct open_stack *os, int64_t ts, int flags)
{
	if (!os || !os->n) {
		chrome_note_at(p, D_UNMATCHED_END);
		return 0;
	}
	struct open_span o = os->v[--os->n];
	int64_t dur;
	if (__builtin_sub_overflow(ts, o.ts, &dur) || dur < 0) {
		chrome_note_at(p, D_BAD_DUR);
		dur = 0;
	}
	int rc = add_span(p, (struct nest_span){.track = o.track,
						.flags = (uint8_t)flags,
						.kind = (uint8_t)o.kind,
						.start = o.ts,
						.dur = dur,
						.name_id = o.name_id,
						.cat_id = o.cat_id,
						.attrs = o.attrs,
						.attrs_len = o.attrs_len});
	free(o.attrs);
	return rc;
}

/* The event's args as JSON, or NULL when it had none or an empty "{}". */
static const char *attrs_or_null(const struct event *e, size_t *len)
{
	if (e->args.len <= 2) {
		*len = 0;
		return NULL;
	}
	*len = e->args.len;
	return e->args.buf;
}

/* The metric name of counter series `key` of event e. */
static char *series_name(const struct event *e, const char *key)
{
	if (!strcmp(key, e->name.buf) || (e->nseries == 1 && !strcmp(key, "value")))
		return xstrdup(e->name.buf);
	return xasprintf("%s.%s", e->name.buf, key);
}

static int metric_sample(struct cp *p, const struct event *e, int64_t ts)
{
	int stored = 0;
	for (int i = 0; i < e->nseries; i++) {
		const char *key = e->series[i].key;
		sbuf_reset(&p->scratch);
		sbuf_add(&p->scratch, e->pid.buf, e->pid.len);
		sbuf_addc(&p->scratch, '\x1f');
		sbuf_add(&p->scratch, e->name.buf, e->name.len);
		sbuf_addc(&p->scratch, '\x1f');
		sbuf_adds(&p->scratch, key);
		int created;
		struct strmap_ent *m =
		    strmap_put(&p->metrics, p->scratch.buf, p->scratch.len, 0, &created);
		if (created) {
			char *name = series_name(e, key);
			char *res = xasprintf("pid:%s", e->pid.buf);
			struct metric_row r = {.source_id = p->source_id,
					       .host = p->opts->host,
					       .resource = res,
					       .name = name,
					       .value_kind = "instant"};
			m->value = store_add_metric(p->st, &r, p->err);
			free(name);
			free(res);
			if (m->value < 0)
				return p->failed = 1, -1;
		}
		if (store_add_sample(p->st, m->value, ts, e->series[i].value, p->err) < 0)
			return p->failed = 1, -1;
		p->samples++;
		stored++;
	}
	if (!stored)
		chrome_note_at(p, D_BAD_COUNTER);
	return 0;
}

/* Metadata of processes and threads without events so far kept at most,
 * of each kind: a trace names its processes and threads before or after
 * their events, but not a million of them (2 M metadata events took 231 MB
 * when each was kept). */
#define META_UNUSED_MAX 65536
/* Bytes of metadata values kept as text; past them, values are interned
 * (the strings table holds them, the map their ids). */
#define META_TEXT_MAX (16 << 20)

/* Whether an event made a track of pid (tid NULL: of any of its threads);
 * scratch is overwritten. */
static int has_track(struct cp *p, const struct sbuf *pid, const struct sbuf *tid)
{
	if (!tid)
		return strmap_get(&p->track_pids, pid->buf, pid->len) != NULL;
	for (int device = TRACK_HOST; device <= TRACK_ANNOTATIONS; device++)
		for (int async = 0; async < 2; async++) {
			track_key(p, pid, tid, device, async);
			if (strmap_get(&p->track_ids, p->scratch.buf, p->scratch.len))
				return 1;
		}
	return 0;
}

/* The key of an M event's process (tid NULL) or thread, into scratch. */
static void meta_key(struct cp *p, const struct sbuf *pid, const struct sbuf *tid)
{
	sbuf_reset(&p->scratch);
	sbuf_add(&p->scratch, pid->buf, pid->len);
	if (tid) {
		sbuf_addc(&p->scratch, '\x1f');
		sbuf_add(&p->scratch, tid->buf, tid->len);
	}
}

/* Sets a metadata value: as text while META_TEXT_MAX allows, so that only
 * the names a track uses are interned (make_tracks, write_groups); else
 * interned now. */
static void meta_set(struct cp *p, struct strmap_ent *ent, const struct sbuf *v)
{
	size_t slot = p->nmeta_text;
	if (ent->value < 0) { /* its text before goes */
		slot = (size_t)(-ent->value - 1);
		p->meta_bytes -= strlen(p->meta_text[slot]);
		free(p->meta_text[slot]);
		p->meta_text[slot] = NULL;
	}
	if (p->meta_bytes + v->len > META_TEXT_MAX) {
		int64_t id = intern(p, v->buf, v->len);
		ent->value = id > 0 ? id : 0;
		return;
	}
	if (slot == p->nmeta_text) {
		XGROW(p->meta_text, p->nmeta_text + 1, p->meta_text_alloc);
		p->nmeta_text++;
	}
	p->meta_text[slot] = xstrndup(v->buf, v->len);
	p->meta_bytes += v->len;
	ent->value = -(int64_t)slot - 1;
}

/* A process or thread named: whether the name makes a track a device's
 * (read as events come: a name after its track's events comes too late for
 * them, which NO_DEVICE_WORK then counts).  Only a process's name does:
 * until one is named like a device, no event's track is looked up. */
static void device_names(struct cp *p, const struct event *e, int thread)
{
	const char *v = e->arg_name.buf;
	p->line_valid = 0;
	enum devtrack c = thread ? DEVTRACK_HOST : devtrack_process(v);
	if (c != DEVTRACK_HOST)
		p->device_names = 1;
	if (c == DEVTRACK_PLANE)
		p->xla_planes = 1;
	if (thread && !strncmp(v, "Stream #", 8))
		strmap_put(&p->stream_pids, e->pid.buf, e->pid.len, 1, NULL);
}

/* What the names of e's process and thread, as read so far, make its
 * track (DEVTRACK_*).  Events come in runs on one track: the last one is
 * remembered. */
static int line_of(struct cp *p, const struct event *e)
{
	if (p->line_valid && !strcmp(p->line_pid.buf, e->pid.buf) &&
	    !strcmp(p->line_tid.buf, e->tid.buf))
		return p->line_class;
	int64_t pn = lookup_id(p, &p->proc_names, e->pid.buf, NULL);
	int c = devtrack_process(pn ? meta_text(p, pn, &p->line_name) : NULL);
	if (c == DEVTRACK_PLANE) {
		int64_t tn = lookup_id(p, &p->thread_names, e->pid.buf, e->tid.buf);
		int streams = strmap_get(&p->stream_pids, e->pid.buf, e->pid.len) != NULL;
		c = devtrack_line(tn ? meta_text(p, tn, &p->line_name) : NULL, streams);
	}
	sbuf_reset(&p->line_pid);
	sbuf_add(&p->line_pid, e->pid.buf, e->pid.len);
	sbuf_reset(&p->line_tid);
	sbuf_add(&p->line_tid, e->tid.buf, e->tid.len);
	p->line_class = c;
	p->line_valid = 1;
	return c;
}

/* M events: process and thread names, process labels and sort order, each
 * kept under its process's or thread's key.  Those of processes and
 * threads without events so far are kept up to META_UNUSED_MAX of a kind,
 * the others counted (UNUSED_METADATA). */
static void metadata(struct cp *p, const struct event *e)
{
	const char *n = e->name.buf;
	struct strmap *m = NULL;
	const struct sbuf *v = &e->arg_name, *tid = NULL;
	if (!strcmp(n, "process_name")) {
		m = &p->proc_names;
	} else if (!strcmp(n, "thread_name")) {
		m = &p->thread_names;
		tid = &e->tid;
	} else if (!strcmp(n, "process_labels")) {
		m = &p->proc_labels;
		v = &e->arg_labels;
	} else if (!strcmp(n, "process_sort_index") && e->has_sort_index) {
		m = &p->proc_sort;
	}
	if (!m || (m != &p->proc_sort && !v->len)) {
		chrome_note_at(p, D_IGNORED_METADATA);
		return;
	}
	meta_key(p, &e->pid, tid);
	struct strmap_ent *ent = strmap_get(m, p->scratch.buf, p->scratch.len);
	if (!ent) {
		if (m->n >= META_UNUSED_MAX && !has_track(p, &e->pid, tid)) {
			chrome_note_at(p, D_UNUSED_METADATA);
			return;
		}
		meta_key(p, &e->pid, tid);
		ent = strmap_put(m, p->scratch.buf, p->scratch.len, 0, NULL);
	}
	if (m == &p->proc_sort) {
		ent->value = e->sort_index;
		return;
	}
	meta_set(p, ent, v);
	if (m == &p->proc_names || m == &p->thread_names)
		device_names(p, e, m == &p->thread_names);
}

/* A flow id as a number: decimal, 0x-hex, or any other string hashed. */
static uint64_t flow_id_of(const struct sbuf *id)
{
	uint64_t fid;
	if (id->len && !text_parse_id64(id->buf, id->len, &fid))
		return fid;
	fid = 1469598103934665603ULL;
	for (size_t i = 0; i < id->len; i++)
		fid = (fid ^ (unsigned char)id->buf[i]) * 1099511628211ULL;
	return fid;
}

static int complete_event(struct cp *p, const struct event *e, struct nest_span s, int device,
			  int flat)
{
	if (!e->dur.len || text_parse_units(e->dur.buf, e->dur.len, 1000, &s.dur) < 0 ||
	    s.dur < 0) {
		chrome_note_at(p, D_BAD_DUR);
		s.dur = 0;
	}
	s.track = track_of(p, &e->pid, &e->tid, device, 0);
	p->tracks[s.track].looks |= p->cat_looks;
	s.flags = flat ? NEST_FLAT : 0;
	s.role = device && !flat ? NEST_DEVICE : NEST_SPAN;
	if (s.kind == PHASE_RUNTIME && e->has_corr)
		s.flags |= NEST_LAUNCH;
	s.corr = e->has_corr ? e->corr : 0;
	if (e->bind_id.len && (e->flow_out || e->flow_in)) {
		/* bind_id flows pair by id alone, whatever the categories */
		s.flags |= e->flow_out ? NEST_BIND_OUT : NEST_BIND_IN;
		s.flow_id = flow_id_of(&e->bind_id);
	}
	return add_span(p, s);
}

int chrome_finish_event(struct cp *p)
{
	struct event *e = &p->ev;
	tally_events(1);
	if (e->args_cut)
		chrome_note_at(p, D_LONG_ARGS);
	if (!e->nfields) {
		chrome_note(p, D_EMPTY_EVENT, "{}");
		return 0;
	}
	if (!e->ph.len) {
		chrome_note_at(p, D_MISSING_PH);
		return 0;
	}
	char ph = e->ph.buf[0];
	if ((ph == 'i' || ph == 'I') && !e->pid.len && !e->tid.len) {
		/* an instant of no process (Kineto's "Record Window End"): not
		 * pid 0's, whose process it would double under pid 0's name */
		sbuf_adds(&e->pid, "global");
		sbuf_adds(&e->tid, "global");
	}
	if (!e->pid.len)
		sbuf_adds(&e->pid, "0");
	if (!e->tid.len)
		sbuf_adds(&e->tid, "0");
	if (ph == 'M') {
		metadata(p, e);
		return 0;
	}
	note_global(p, e, ph);
	int ok;
	int64_t ts = ts_of(p, &e->ts, &ok);
	if (!ok) {
		chrome_note_at(p, ph == 'X' || ph == 'B' || ph == 'b' ? D_BAD_TS
				  : ph == 'E' || ph == 'e'	      ? D_UNMATCHED_END
								      : D_UNSUPPORTED);
		return 0;
	}
	int device, flat;
	struct cat_memo *cm;
	struct nest_span s = {.kind = (uint8_t)kind_of(p, e, &device, &flat, &cm), .start = ts};
	if (s.kind == PHASE_PROFILER_STEP && e->has_step &&
	    strncmp(e->name.buf, "ProfilerStep#", 13)) {
		/* "train#3", as Kineto's ProfilerStep#3: each step its own name */
		sbuf_reset(&p->scratch);
		sbuf_addf(&p->scratch, "%s#%lld", e->name.buf, (long long)e->step_num);
		s.name_id = intern(p, p->scratch.buf, p->scratch.len);
	} else {
		s.name_id = intern(p, e->name.buf, e->name.len);
	}
	if (!e->cat.len) {
		s.cat_id = 0;
	} else if (cm && cm->cat_id) {
		s.cat_id = cm->cat_id; /* string ids are stable */
	} else {
		s.cat_id = intern(p, e->cat.buf, e->cat.len);
		if (cm && s.cat_id > 0)
			cm->cat_id = s.cat_id;
	}
	if (s.name_id < 0 || s.cat_id < 0)
		return -1;
	s.attrs = attrs_or_null(e, &s.attrs_len);

	switch (ph) {
	case 'X':
		return complete_event(p, e, s, device, flat);
	case 'B': {
		uint32_t t = track_of(p, &e->pid, &e->tid, device, 0);
		p->tracks[t].looks |= p->cat_looks;
		seen_at(p, t, ts);
		char key[24];
		int kn = snprintf(key, sizeof(key), "%u", t);
		open_push(open_stack(p, &p->open_b, key, (size_t)kn, 1),
			  (struct open_span){ts, s.name_id, s.cat_id, t, s.kind, NULL, 0}, s.attrs,
			  s.attrs_len);
		return 0;
	}
	case 'E': {
		/* an E need not repeat its B's category: close the B open on this
		 * pid/tid, host or device */
		struct open_stack *os = NULL;
		for (int dev = TRACK_HOST; dev <= TRACK_ANNOTATIONS && (!os || !os->n); dev++) {
			int64_t t = track_find(p, &e->pid, &e->tid, dev);
			if (t < 0)
				continue;
			char key[24];
			int kn = snprintf(key, sizeof(key), "%lld", (long long)t);
			os = open_stack(p, &p->open_b, key, (size_t)kn, 0);
		}
		return open_close(p, os, ts, 0);
	}
	case 'b':
	case 'e': {
		sbuf_reset(&p->scratch);
		sbuf_addf(&p->scratch, "%s\x1f%s\x1f%s\x1f%s", e->cat.buf, e->id.buf, e->scope.buf,
			  e->pid.buf);
		struct open_stack *os =
		    open_stack(p, &p->open_async, p->scratch.buf, p->scratch.len, ph == 'b');
		if (ph == 'e')
			return open_close(p, os, ts, NEST_FLAT);
		struct sbuf tid = SBUF_INIT;
		sbuf_init(&tid);
		sbuf_addf(&tid, "async %s", e->cat.len ? e->cat.buf : "events");
		uint32_t t = track_of(p, &e->pid, &tid, 0, 1);
		sbuf_release(&tid);
		seen_at(p, t, ts);
		open_push(os, (struct open_span){ts, s.name_id, s.cat_id, t, PHASE_ASYNC, NULL, 0},
			  s.attrs, s.attrs_len);
		return 0;
	}
	case 'i':
	case 'I':
	case 'R':
	case 'n':
		s.track = point_track(p, e);
		s.role = NEST_INSTANT;
		return add_span(p, s);
	case 's':
	case 't':
	case 'f':
		s.track = point_track(p, e);
		s.flow_cat = s.cat_id;
		s.flow_id = flow_id_of(&e->id);
		s.attrs = NULL;
		s.attrs_len = 0;
		if (ph == 's') {
			s.role = NEST_FLOW_OUT;
			return add_span(p, s);
		}
		/* a step ends one segment of the flow and starts the next: its end
		 * is recorded first, so the pairing never joins it to itself */
		s.role = ph == 'f' && strcmp(e->bp.buf, "e") ? NEST_FLOW_IN_NEXT /* the default */
							     : NEST_FLOW_IN;
		if (add_span(p, s) < 0)
			return -1;
		if (ph == 'f')
			return 0;
		s.role = NEST_FLOW_OUT;
		return add_span(p, s);
	case 'C':
		return metric_sample(p, e, ts);
	default:
		if (!p->diag_example[D_UNSUPPORTED]) {
			char *ex = xasprintf("ph \"%.8s\"", e->ph.buf);
			chrome_note(p, D_UNSUPPORTED, ex);
			free(ex);
		} else {
			p->diag[D_UNSUPPORTED]++;
		}
		return 0;
	}
}

/* ---- building the source's nodes once the file is read ---- */

static char *step_name_of(const char *path)
{
	static const char *const exts[] = {".gz", ".zst", ".json", ".trace", ".pt"};
	char *name = xstrdup(input_base_name(path));
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
			size_t n = strlen(name), k = strlen(exts[i]);
			if (n > k && !strcmp(name + n - k, exts[i])) {
				name[n - k] = '\0';
				again = 1;
			}
		}
	}
	return name;
}

static int meta_rank(struct cp *p, char **host)
{
	sbuf_reset(&p->scratch);
	sbuf_addc(&p->scratch, '{');
	sbuf_add(&p->scratch, p->meta.buf, p->meta.len);
	sbuf_addc(&p->scratch, '}');
	json_t *root = json_loadb(p->scratch.buf, p->scratch.len, 0, NULL);
	int rank = -1;
	if (root) {
		json_t *r = json_object_get(json_object_get(root, "distributedInfo"), "rank");
		if (json_is_integer(r) && json_integer_value(r) >= 0 &&
		    json_integer_value(r) < 1 << 30)
			rank = (int)json_integer_value(r);
		else if (json_is_string(r))
			rank = atoi(json_string_value(r));
		json_t *h = json_object_get(root, "host_name");
		if (json_is_string(h))
			*host = xstrdup(json_string_value(h));
		json_decref(root);
	}
	return rank;
}

/* Counts diagnostic d once with the example fmt. */
void chrome_note_once(struct cp *p, int d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!p->diag_example[d])
		p->diag_example[d] = xvasprintf(fmt, ap);
	va_end(ap);
	p->diag[d]++;
}

/* The source's rank: the trace's own (distributedInfo.rank, meta), else
 * --rank's, else the one its file name says (import_rank_of_name), each
 * but the first noted in a diagnostic.  -1 when none; -2 with *err when
 * --rank contradicts the trace. */
static int source_rank(struct cp *p, int meta)
{
	const struct import_opts *o = p->opts;
	const char *path = input_path(p->in);
	int named = -1, other = -1;
	int says = import_rank_of_name(path, &named, &other);
	if (meta >= 0) {
		if (o->has_rank && o->rank != meta) {
			*p->err = xasprintf("%s: --rank %d, but the trace says rank %d"
					    " (distributedInfo)",
					    path, o->rank, meta);
			return -2;
		}
		if (!o->has_rank && says == 1 && named != meta)
			chrome_note_once(p, D_RANK_NAME_DIFFERS,
					 "file name rank %d, distributedInfo rank %d", named, meta);
		return meta;
	}
	if (o->has_rank) {
		chrome_note_once(p, D_RANK_GIVEN, "--rank %d", o->rank);
		return o->rank;
	}
	if (says == 1) {
		chrome_note_once(p, D_RANK_FROM_NAME, "rank %d from '%s'", named,
				 input_base_name(path));
		return named;
	}
	if (says < 0)
		chrome_note_once(p, D_RANK_NAME_AMBIGUOUS, "'%s' says rank %d and rank %d",
				 input_base_name(path), named, other);
	return -1;
}

static int64_t lookup_id(struct cp *p, struct strmap *m, const char *pid, const char *tid)
{
	sbuf_reset(&p->scratch);
	sbuf_adds(&p->scratch, pid);
	if (tid)
		sbuf_addf(&p->scratch, "\x1f%s", tid);
	struct strmap_ent *e = strmap_get(m, p->scratch.buf, p->scratch.len);
	return e ? e->value : 0;
}

static const char *string_of(struct cp *p, int64_t id, struct sbuf *out)
{
	char *e = NULL;
	if (!store_string(p->st, id, out, &e)) {
		free(e);
		sbuf_reset(out);
	}
	return out->buf;
}

/* A metadata value's text into out ("" for none). */
static const char *meta_text(struct cp *p, int64_t v, struct sbuf *out)
{
	if (v >= 0)
		return string_of(p, v, out);
	sbuf_reset(out);
	sbuf_adds(out, p->meta_text[-v - 1]);
	return out->buf;
}

struct proc {
	char *pid;
	int device;
	int64_t id, start, end, children, spans;
};

/* B and b events never closed end at the last time seen on their track. */
static int close_unclosed(struct cp *p)
{
	for (size_t i = 0; i < p->nopens; i++) {
		struct open_stack *os = &p->opens[i];
		while (os->n) {
			struct open_span *o = &os->v[os->n - 1];
			int64_t end = p->tracks[o->track].last_ts;
			if (!p->diag_example[D_UNCLOSED_BEGIN])
				p->diag_example[D_UNCLOSED_BEGIN] =
				    xstrdup(string_of(p, o->name_id, &p->scratch));
			p->diag[D_UNCLOSED_BEGIN]++;
			if (open_close(p, os, end > o->ts ? end : o->ts,
				       p->tracks[o->track].async ? NEST_FLAT : 0) < 0)
				return -1;
		}
	}
	return 0;
}

/* The nodes one source adds above its spans: step, optional rank, one node
 * per process and per track. */
struct scaffold {
	int64_t step_id, group; /* group: the rank node, or the step */
	int64_t rank_id;	/* 0: no rank */
	int depth;		/* of the process nodes */
	struct nest_track *nt;	/* one per track, for nest_finish */
	struct proc *procs;
	size_t nprocs;
	struct sbuf name;
};

/* "KIND ID", or ID alone when it already says KIND: newer Kineto traces
 * give a stream's tid as "stream 7", which must not read "stream stream 7". */
static void kind_and_id(struct sbuf *name, const char *kind, const char *id)
{
	size_t k = strlen(kind);
	if (strncmp(id, kind, k) || id[k] != ' ')
		sbuf_addf(name, "%s ", kind);
	sbuf_adds(name, id);
}

static void track_name(struct cp *p, const struct track *t, struct sbuf *name)
{
	int64_t tn = lookup_id(p, &p->thread_names, t->pid, t->tid);
	sbuf_reset(name);
	if (tn)
		meta_text(p, tn, name);
	else if (t->device)
		kind_and_id(name, "stream", t->tid);
	else if (t->async)
		sbuf_adds(name, t->tid);
	else
		kind_and_id(name, "thread", t->tid);
	/* a stream's annotations are named after it; XLA's rows ("XLA Ops")
	 * keep their own name */
	if (t->device == TRACK_ANNOTATIONS && (!tn || devtrack_is_stream(name->buf))) {
		while (name->len && name->buf[name->len - 1] == ' ')
			name->buf[--name->len] = '\0'; /* Kineto's "stream 7 " */
		sbuf_adds(name, " annotations");
	}
}

static const char *track_kind(const struct track *t)
{
	if (t->device)
		return t->device == TRACK_STREAM ? "stream" : "annotation";
	return t->async ? "async" : "thread";
}

/* Reserves the process and track nodes and stores the tracks. */
static int make_tracks(struct cp *p, struct scaffold *sc, int rank, const char *host)
{
	for (size_t i = 0; i < p->ntracks; i++) {
		struct track *t = &p->tracks[i];
		size_t j;
		for (j = 0; j < sc->nprocs; j++)
			if (!strcmp(sc->procs[j].pid, t->pid) && sc->procs[j].device == !!t->device)
				break;
		if (j == sc->nprocs) {
			sc->procs[j].pid = t->pid;
			sc->procs[j].device = !!t->device;
			sc->procs[j].id = store_reserve_phase_id(p->st);
			sc->nprocs++;
		}
		struct nest_track *n = &sc->nt[i];
		track_name(p, t, &sc->name);
		n->node_id = store_reserve_phase_id(p->st);
		n->parent_id = sc->procs[j].id;
		n->name_id = intern(p, sc->name.buf, sc->name.len);
		n->kind = t->device == TRACK_STREAM	   ? PHASE_STREAM
			  : t->device == TRACK_ANNOTATIONS ? PHASE_GPU_ANNOTATION
							   : PHASE_THREAD;
		if (bookkeeping_pid(p, t->pid, t->device))
			n->kind = PHASE_PROFILER;
		n->depth = sc->depth + 1;
		struct track_row tr = {.source_id = p->source_id,
				       .kind = track_kind(t),
				       .pid = t->pid,
				       .tid = t->tid,
				       .name = sc->name.buf,
				       .host = host,
				       .rank = rank,
				       .sort_index = lookup_id(p, &p->proc_sort, t->pid, NULL),
				       .phase_id = n->node_id};
		n->track_id = store_add_track(p->st, &tr, p->err);
		if (n->name_id < 0 || n->track_id < 0)
			return -1;
	}
	return 0;
}

/* A trace with no device work whose tracks are named or categorised like
 * a device's (a device plane, a stream, a kernel category): each such
 * host track with records is counted, the first one's names the example. */
static void note_devices(struct cp *p, const struct scaffold *sc)
{
	for (size_t i = 0; i < p->ntracks; i++)
		if (p->tracks[i].device == TRACK_STREAM && sc->nt[i].spans)
			return;
	struct sbuf pn = SBUF_INIT, tn = SBUF_INIT;
	sbuf_init(&pn);
	sbuf_init(&tn);
	for (size_t i = 0; i < p->ntracks; i++) {
		const struct track *t = &p->tracks[i];
		if (t->device != TRACK_HOST || t->async || !sc->nt[i].used)
			continue;
		int64_t pv = lookup_id(p, &p->proc_names, t->pid, NULL);
		int64_t tv = lookup_id(p, &p->thread_names, t->pid, t->tid);
		sbuf_reset(&pn);
		sbuf_reset(&tn);
		if (pv)
			meta_text(p, pv, &pn);
		if (tv)
			meta_text(p, tv, &tn);
		enum devtrack c = devtrack_process(pn.buf);
		if (!t->looks && (c == DEVTRACK_HOST || c == DEVTRACK_HOST_PLANE) &&
		    !devtrack_is_stream(tn.buf))
			continue;
		chrome_note_once(p, D_NO_DEVICE_WORK, "pid %s '%s' tid %s '%s'%s", t->pid, pn.buf,
				 t->tid, tn.buf, t->looks ? ", a device category" : "");
	}
	sbuf_release(&pn);
	sbuf_release(&tn);
}

/* Records what nest_finish repaired and what each track ended up holding. */
static int note_nest(struct cp *p, struct scaffold *sc, const struct nest_stats *ns)
{
	p->diag[D_OVERLAP] += ns->overlaps;
	p->diag[D_UNLINKED_DEVICE] += ns->unlinked;
	p->diag[D_LONE_FLOW] += ns->lone_flows;
	p->diag[D_UNBOUND_FLOW] += ns->unbound_points;
	p->diag[D_TIME_OVERFLOW] += ns->span_overflow;
	p->diag[D_POINT_OVERFLOW] += ns->point_overflow;
	p->spans -= ns->span_overflow;
	for (size_t i = 0; i < p->ntracks; i++) {
		struct nest_track *n = &sc->nt[i];
		if (n->spans && store_set_track_spans(p->st, n->track_id, n->spans, p->err) < 0)
			return -1;
		/* every record of the track was dropped: it has no node */
		if (!n->used && store_clear_track_node(p->st, n->track_id, p->err) < 0)
			return -1;
	}
	note_devices(p, sc);
	return 0;
}

static void process_name(struct cp *p, const struct proc *pr, struct sbuf *name)
{
	int64_t pn = lookup_id(p, &p->proc_names, pr->pid, NULL);
	int64_t pl = lookup_id(p, &p->proc_labels, pr->pid, NULL);
	sbuf_reset(name);
	if (pn) {
		meta_text(p, pn, name);
		sbuf_addf(name, " (%s)", pr->pid);
	} else {
		kind_and_id(name, pr->device ? "device" : "process", pr->pid);
	}
	if (pl)
		sbuf_addf(name, " %s", meta_text(p, pl, &p->meta_value));
}

/* Writes the process nodes that hold a used track, and then the rank node
 * when there is one and it holds a process.  The rank's window is that of
 * its processes with spans of work: one that holds only instants (Kineto's
 * "Record Window End", 2 ms after the last span) or the profiler's
 * bookkeeping (its trace span, which opens before the first op) does not
 * stretch it. */
static int write_groups(struct cp *p, struct scaffold *sc, int rank)
{
	int64_t start = INT64_MAX, end = INT64_MIN, kids = 0;
	int64_t bare_start = INT64_MAX, bare_end = INT64_MIN;
	for (size_t j = 0; j < sc->nprocs; j++) {
		struct proc *pr = &sc->procs[j];
		pr->start = INT64_MAX;
		pr->end = INT64_MIN;
		for (size_t i = 0; i < p->ntracks; i++) {
			const struct nest_track *n = &sc->nt[i];
			if (n->parent_id != pr->id || !n->used)
				continue;
			pr->children++;
			pr->spans += n->spans;
			pr->start = n->start < pr->start ? n->start : pr->start;
			pr->end = n->end > pr->end ? n->end : pr->end;
		}
		if (!pr->children)
			continue;
		process_name(p, pr, &sc->name);
		int books = bookkeeping_pid(p, pr->pid, pr->device);
		struct phase_row r = {.id = pr->id,
				      .parent_id = sc->group,
				      .kind = books ? PHASE_PROFILER : PHASE_PROCESS,
				      .name_id = intern(p, sc->name.buf, sc->name.len),
				      .source_id = p->source_id,
				      .start_ns = pr->start,
				      .dur_ns = pr->end - pr->start,
				      .child_count = pr->children,
				      .depth = sc->depth};
		if (r.name_id < 0 || store_add_phase(p->st, &r, p->err) < 0)
			return -1;
		kids++;
		int work = pr->spans && !books; /* the bookkeeping's window is not the rank's */
		int64_t *s0 = work ? &start : &bare_start, *e0 = work ? &end : &bare_end;
		*s0 = pr->start < *s0 ? pr->start : *s0;
		*e0 = pr->end > *e0 ? pr->end : *e0;
	}
	if (!sc->rank_id || !kids)
		return 0; /* a rank without spans gets no node */
	if (start > end) {
		start = bare_start;
		end = bare_end;
	}
	sbuf_reset(&sc->name);
	sbuf_addf(&sc->name, "rank %d", rank);
	struct phase_row r = {.id = sc->rank_id,
			      .parent_id = sc->step_id,
			      .kind = PHASE_RANK,
			      .name_id = intern(p, sc->name.buf, sc->name.len),
			      .source_id = p->source_id,
			      .start_ns = start,
			      .dur_ns = end - start,
			      .child_count = kids,
			      .depth = 2};
	if (r.name_id < 0 || store_add_phase(p->st, &r, p->err) < 0)
		return -1;
	return 0;
}

/* Stores the diagnostics and the source's counts. */
static int finish_source(struct cp *p, int64_t events)
{
	/* the duration events (X, B, b) not stored: with the spans stored they
	 * account for every duration event of the file */
	int64_t dropped = p->diag[D_BAD_TS] + p->diag[D_TIME_OVERFLOW] + p->cut_dropped;
	for (int d = 0; d < D_COUNT; d++)
		if (p->diag[d] &&
		    store_add_diagnostic(p->st, p->source_id, diag_info[d].code, p->diag[d],
					 diag_info[d].message, p->diag_example[d], p->err) < 0)
			return -1;
	return store_finish_source(p->st, p->source_id, p->spans, events, p->samples, dropped,
				   p->err);
}

/* Builds the source's part of the tree once the whole file has been read. */
static int build(struct cp *p, int64_t step_id, int64_t offset, int rank, const char *host)
{
	struct store *st = p->st;
	int rc = -1;
	struct scaffold sc = {.step_id = step_id, .depth = 2};
	sc.group = sc.step_id;
	if (rank >= 0) {
		sc.rank_id = sc.group = store_reserve_phase_id(st);
		sc.depth = 3;
	}
	sc.nt = xcalloc(p->ntracks ? p->ntracks : 1, sizeof(*sc.nt));
	sc.procs = xcalloc(p->ntracks ? p->ntracks : 1, sizeof(*sc.procs));
	sbuf_init(&sc.name);
	struct nest_stats ns = {0};
	if (make_tracks(p, &sc, rank, host) < 0 ||
	    nest_finish(p->nest, st, p->source_id, sc.nt, p->ntracks, offset, &ns, p->err) < 0 ||
	    note_nest(p, &sc, &ns) < 0 || write_groups(p, &sc, rank) < 0 ||
	    store_refresh_window(st, sc.step_id, p->err) < 0 ||
	    (offset && p->samples && store_shift_samples(st, p->source_id, offset, p->err) < 0) ||
	    finish_source(p, ns.events) < 0)
		goto out;
	rc = 0;
out:
	sbuf_release(&sc.name);
	free(sc.procs);
	free(sc.nt);
	return rc;
}

/* ---- entry points ---- */

static void cp_release(struct cp *p)
{
	event_each_buf(&p->ev, sbuf_release);
	sbuf_release(&p->key);
	sbuf_release(&p->meta);
	sbuf_release(&p->meta_key);
	sbuf_release(&p->scratch);
	sbuf_release(&p->cut);
	free(p->sc.cuts);
	free(p->lx.buf);
	free(p->lx.marks);
	for (int i = 0; i < p->ev.nseries; i++)
		free(p->ev.series[i].key);
	for (size_t i = 0; i < p->ntracks; i++) {
		free(p->tracks[i].pid);
		free(p->tracks[i].tid);
	}
	free(p->tracks);
	for (size_t i = 0; i < p->nopens; i++) {
		for (size_t k = 0; k < p->opens[i].n; k++)
			free(p->opens[i].v[k].attrs);
		free(p->opens[i].v);
	}
	free(p->opens);
	for (size_t i = 0; i < p->nmeta_text; i++)
		free(p->meta_text[i]);
	free(p->meta_text);
	sbuf_release(&p->meta_value);
	sbuf_release(&p->line_pid);
	sbuf_release(&p->line_tid);
	sbuf_release(&p->line_name);
	struct strmap *maps[] = {&p->names,	  &p->track_ids, &p->proc_names, &p->thread_names,
				 &p->proc_labels, &p->proc_sort, &p->track_pids, &p->open_b,
				 &p->open_async,  &p->metrics,	 &p->stream_pids};
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		strmap_clear(maps[i]);
	for (int d = 0; d < D_COUNT; d++)
		free(p->diag_example[d]);
	nest_free(p->nest);
	if (p->h)
		yajl_free(p->h);
}

int chrome_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct cp p;
	memset(&p, 0, sizeof(p));
	event_each_buf(&p.ev, sbuf_init);
	sbuf_init(&p.key);
	sbuf_init(&p.meta);
	sbuf_init(&p.meta_key);
	sbuf_init(&p.scratch);
	sbuf_init(&p.cut);
	sbuf_init(&p.meta_value);
	sbuf_init(&p.line_pid);
	sbuf_init(&p.line_tid);
	sbuf_init(&p.line_name);
	p.in = in;
	p.st = st;
	p.opts = o;
	p.err = err;
	p.nest = nest_new(o->arena_bytes ? o->arena_bytes : (size_t)32 << 20);
	p.first[0] = 1;
	for (int i = 0; i < CAT_MEMO; i++)
		p.cat_memo[i].len = SIZE_MAX;
	int rc = -1;
	char *host = NULL;

	struct source_row src = {.path = input_path(in),
				 .format = "chrome",
				 .compression = input_codec_name(input_codec(in)),
				 .anchor = "pending",
				 .size_bytes = (int64_t)input_file_size(in),
				 .rank = -1,
				 .host = o->host};
	p.source_id = store_add_source(st, &src, err);
	if (p.source_id < 0)
		goto out;

	if (chrome_json_read(&p) < 0)
		goto out;
	if (close_unclosed(&p) < 0)
		goto out;

	int rank = source_rank(&p, meta_rank(&p, &host));
	if (rank < -1)
		goto out;
	char *step = o->step			  ? xstrdup(o->step)
		     : rank >= 0 && o->group_step ? xstrdup(o->group_step)
						  : step_name_of(input_path(in));
	int64_t step_id = import_step_node(st, o, step, err), win_start = 0, win_end;
	free(step);
	int has_window =
	    step_id < 0 ? -1 : store_declared_window(st, step_id, &win_start, &win_end, err);
	if (has_window < 0)
		goto out;
	const char *anchor;
	int64_t offset = 0;
	if (p.has_base) {
		anchor = "baseTimeNanoseconds";
		offset = p.base_ns;
	} else if (o->has_time_offset) {
		anchor = "time-offset";
	} else if (p.any_ts && p.min_ts > (int64_t)946684800 * 1000000000) {
		anchor = "absolute";
	} else if (has_window && p.any_ts) {
		/* the profiler's own clock, and the step this trace records
		 * declares when it ran: the trace starts with its step */
		anchor = "step-window";
		offset = (int64_t)((uint64_t)win_start - (uint64_t)p.min_ts);
	} else {
		anchor = "relative"; /* unanchored: the profiler's own clock */
	}
	if (o->has_time_offset && __builtin_add_overflow(offset, o->time_offset_ns, &offset)) {
		*err = xasprintf("%s: --time-offset overflows the time range", input_path(in));
		goto out;
	}
	if (rank >= 0 && (!strcmp(anchor, "relative") || !strcmp(anchor, "step-window")))
		chrome_note_once(&p, D_RANK_UNALIGNED, "rank %d anchored %s", rank, anchor);
	char *meta = xasprintf("{%s}", p.meta.buf);
	int e = store_set_source_anchor(st, p.source_id, anchor, offset, rank, host, meta, err);
	free(meta);
	if (e < 0)
		goto out;
	if (build(&p, step_id, offset, rank, host ? host : o->host) < 0)
		goto out;
	rc = 0;
out:
	free(host);
	cp_release(&p);
	return rc;
}

int chrome_sniff(const unsigned char *b, size_t n)
{
	size_t i = sniff_start(b, n);
	if (i == n)
		return 0;
	if (b[i] != '{' && b[i] != '[')
		return 0;
	const char *s = (const char *)b + i;
	size_t rest = n - i;
	if (memmem(s, rest, "\"traceEvents\"", 13))
		return 90;
	if (memmem(s, rest, "\"ph\"", 4))
		return 80;
	if (b[i] == '[')
		return 20;
	return 10;
}
