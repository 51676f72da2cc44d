/*
 * Chrome trace event format (PyTorch/Kineto, the legacy autograd profiler,
 * TensorFlow and JAX exports), streamed with YAJL so memory does not grow
 * with the file: events go to the nest builder (model/ingest/nest.h) as they are
 * parsed; the tree is built once the whole file has been read, because
 * metadata such as baseTimeNanoseconds or distributedInfo may follow the
 * events.
 *
 * Both top-level forms are accepted: a bare array of events, and an object
 * whose "traceEvents" array may come before or after other keys.  Every
 * event is stored or counted in diagnostics with a reason.  A trace's rank
 * is its distributedInfo's, else --rank's, else its file name's.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "importers/diag.h"
#include "importers/chrome.h"
#include "importers/sniff.h"
#include "model/ingest/nest.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/util/text.h"
#include "model/util/timing.h"
#include "model/util/xalloc.h"

#define MAX_DEPTH	 256
#define MAX_SERIES	 64
#define META_MAX	 (1 << 20)	    /* bytes of top-level metadata kept in sources.attrs */
#define ARGS_MAX	 (1 << 20)	    /* bytes of an event's args kept in its attrs */
#define NUM_MAX		 1024		    /* bytes of a number; a longer one is an error */
#define INTERN_CACHE_MAX (1 << 16)	    /* names cached; cleared when full */
#define STR_MAX		 ((size_t)64 << 10) /* bytes of a string kept: longer ones are cut */
#define STR_ELLIPSIS	 "\xe2\x80\xa6"	    /* "…", which ends a cut string */
/* Bytes of JSON text kept of a string in the stream, before YAJL or the
 * scanner see it: what lies beyond this decodes beyond STR_MAX (an escape
 * is at most six bytes for one), so only STR_MAX's cut shows. */
#define STR_STREAM_MAX ((size_t)1 << 20)
_Static_assert(STR_STREAM_MAX / 6 > STR_MAX + 4, "a stream cut must not show");

/* Diagnostics: the code stored in trace.db and its message. */
#define DIAG_LIST(X)                                                                               \
	X(EMPTY_EVENT, "empty event object skipped (e.g. a trailing {})")                          \
	X(NOT_OBJECT, "traceEvents element that is not an object skipped")                         \
	X(MISSING_PH, "event without \"ph\" skipped")                                              \
	X(BAD_TS, "duration event with a missing or invalid \"ts\" dropped")                       \
	X(BAD_DUR, "missing, invalid or negative duration read as 0")                              \
	X(UNSUPPORTED, "event of an unsupported phase type skipped")                               \
	X(UNMATCHED_END, "\"E\" or \"e\" without a matching begin skipped")                        \
	X(UNCLOSED_BEGIN, "\"B\" or \"b\" never closed: ended at the source's last timestamp")     \
	X(OVERLAP, "span ending after the span containing it (kept as its child)")                 \
	X(UNLINKED_DEVICE, "device work whose launching call was not found (under its stream)")    \
	X(LONE_FLOW, "flow start or end without its partner (no edge)")                            \
	X(UNBOUND_FLOW, "flow endpoint outside any span (no edge)")                                \
	X(BIG_INTEGER, "integer beyond int64 in args kept as a string")                            \
	X(BAD_UTF8, "invalid UTF-8 or NUL in a string replaced by U+FFFD")                         \
	X(TIME_OVERFLOW, "span beyond the int64 nanosecond range dropped")                         \
	X(POINT_OVERFLOW, "instant or flow end beyond the int64 nanosecond range dropped")         \
	X(IGNORED_METADATA, "metadata event this version does not use skipped")                    \
	X(META_SKIPPED, "top-level metadata beyond 1 MiB not kept in sources.attrs")               \
	X(BAD_COUNTER, "counter event without numeric values skipped")                             \
	X(LONG_STRING, "string longer than 64 KiB cut to its first 64 KiB and \"\xe2\x80\xa6\"")   \
	X(LONG_ARGS, "args beyond 1 MiB: the members past it not kept in attrs (the event is)")    \
	X(RANK_GIVEN, "the trace names no rank (no distributedInfo): its rank is --rank's")        \
	X(RANK_FROM_NAME, "the trace names no rank (no distributedInfo): its rank is the one its"  \
			  " file name says")                                                       \
	X(RANK_NAME_AMBIGUOUS, "the trace names no rank and its file name says two: no rank"       \
			       " taken (--rank gives one)")                                        \
	X(RANK_NAME_DIFFERS, "the file name says another rank than the trace's distributedInfo:"   \
			     " the trace's kept")                                                  \
	X(RANK_UNALIGNED, "a rank's trace with relative times and no --time-offset: its"           \
			  " collectives line up with other ranks' only as well as the traces'"     \
			  " starts did")                                                           \
	X(TRAILING_COMMA, "comma before ] or } skipped, as Perfetto reads it")                     \
	X(CONTROL_CHAR, "control character unescaped in a string: read as if escaped")             \
	X(UNCLOSED_ARRAY, "the input ends inside the traceEvents array, between events (the"       \
			  " Trace Event Format allows it): read to its end")                       \
	X(TRUNCATED, "the input ends inside an event: the events before it kept, that one"         \
		     " dropped")

DIAG_TABLE(DIAG_LIST);

enum field {
	F_NONE,
	F_PH,
	F_NAME,
	F_CAT,
	F_PID,
	F_TID,
	F_TS,
	F_DUR,
	F_ID,
	F_BP,
	F_SCOPE,
	F_BIND_ID,
	F_FLOW_IN,
	F_FLOW_OUT,
	F_ARGS,
	F_OTHER
};

/* What a container being read is captured for.  CAP_ARGS_FULL: args
 * beyond ARGS_MAX, of which nothing more is kept but the closing brace,
 * while args_scalar still reads its members. */
enum cap_target { CAP_NONE, CAP_ARGS, CAP_META, CAP_SKIP, CAP_ARGS_FULL };

struct series {
	char *key;
	double value;
};

struct event {
	struct sbuf ph, name, cat, pid, tid, ts, dur, id, bp, scope, bind_id;
	int flow_in, flow_out, nfields;
	struct sbuf args; /* compact JSON of args, or empty */
	int args_cut;	  /* args went beyond ARGS_MAX */
	int64_t corr;
	int has_corr;
	struct sbuf arg_name, arg_labels;
	int64_t sort_index;
	int has_sort_index;
	struct series series[MAX_SERIES];
	int nseries;
};

/* A category recently mapped by kind_of (len SIZE_MAX: unused). */
#define CAT_MEMO 4
struct cat_memo {
	char cat[32];
	size_t len;
	int kind, device, flat;
	int64_t cat_id; /* interned; 0: not yet */
};

/* A track recently found by track_get; tracks are never removed. */
#define TRACK_MEMO 4
struct track_memo {
	uint32_t track;
	int used;
};

/* What a track of a pid/tid holds: host work, a device stream's work, or
 * the GPU annotations Kineto writes on that stream (a lane of their own, so
 * that they are neither the stream's busy time nor its items). */
enum { TRACK_HOST, TRACK_STREAM, TRACK_ANNOTATIONS };

struct track {
	char *pid, *tid;
	int device, async; /* device: TRACK_* */
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

/* Where the bytes of the piece YAJL reads from out on came from (see
 * yajl_feed): the text's from in on; or when esc, bytes put there for the
 * one byte at in (an escape for a control character, a space for a comma
 * held back). */
struct lx_mark {
	size_t out;
	uint64_t in;
	int esc;
};

/* The lenient feed's state (see yajl_feed). */
struct lenient {
	int in_str, esc;
	size_t len;	    /* bytes of the current string so far, as written */
	unsigned char last; /* the last byte outside strings that is not white space */
	int comma;	    /* a comma after a value, held back ... */
	uint64_t comma_at;  /* ... at this offset of the text */
	/* the piece being built: a run of the text not copied, or buf */
	const unsigned char *run;
	size_t run_len;
	uint64_t run_at;
	unsigned char *buf;
	size_t n, cap;
	struct lx_mark *marks;
	size_t nmarks, marks_cap;
	int mapped; /* YAJL is reading buf: its offsets go through marks */
	/* the input's offset of the first control character each counter met */
	uint64_t ctl_fed, ctl_cut;
};

/* Bytes dropped from the stream at an offset of the text that remains. */
struct stream_cut {
	uint64_t at, dropped;
};

/* Where stream_cut stands in the input's strings, and the cuts made. */
struct stream_cutter {
	uint64_t at; /* the remaining text's offset up to which it has been read */
	int in_str;
	uint64_t str_at;	 /* where the string it is in starts */
	int esc;		 /* 0; -1: after a backslash; 1..4: hex digits of a \u to come */
	size_t len;		 /* bytes of the current string so far, escapes as written */
	struct stream_cut *cuts; /* those not yet folded into dropped_before */
	size_t ncuts, cuts_alloc;
	uint64_t dropped_before;
	size_t num_run;	 /* number characters in a row, outside strings, so far */
	int bad;	 /* a run of them longer than NUM_MAX: the input is malformed ... */
	uint64_t bad_at; /* ... and YAJL is fed the text before this, its NUM_MAX + 1st */
};

struct cp {
	struct input *in;
	struct store *st;
	const struct import_opts *opts;
	char **err;
	int failed;
	struct nest *nest;
	uint64_t chunk_base;
	yajl_handle h;

	/* parse position */
	int depth;
	uint8_t is_map[MAX_DEPTH + 2];
	uint8_t first[MAX_DEPTH + 2];
	int top_object;	  /* the document is an object */
	int events_depth; /* depth of the traceEvents array; 0 outside */
	int saw_events;	  /* the document is an array, or has a traceEvents array */
	int in_event;
	struct sbuf key; /* last map key at the current depth */
	enum field field;
	enum cap_target cap;
	int cap_depth;
	struct sbuf *cap_buf;

	struct event ev;
	struct sbuf meta;     /* top-level keys other than traceEvents, as JSON members */
	size_t meta_mark;     /* meta's length before the member being kept ... */
	uint8_t meta_first;   /* ... and whether it is the first */
	struct sbuf meta_key; /* ... and its key */
	size_t args_mark;     /* the event's args' length before the member being read */
	struct sbuf scratch;
	struct sbuf cut; /* a string cut to STR_MAX */
	struct stream_cutter sc;
	int scan;	      /* the event scanner is on (GRADEML_CHROME_SCAN=0: off) */
	int events_opened;    /* a traceEvents array has just opened */
	int scanned;	      /* finish_event runs for a scanned event ... */
	uint64_t scanned_end; /* ... which ends before this byte */
	int has_base;
	int64_t base_ns;
	struct lenient lx;
	int64_t cut_dropped; /* the duration event the input ends inside */

	/* tables */
	struct cat_memo cat_memo[CAT_MEMO];
	unsigned cat_memo_next;
	struct track_memo track_memo[TRACK_MEMO];
	unsigned track_memo_next;
	struct strmap names;	 /* interned string -> id */
	struct strmap track_ids; /* "D\x1fpid\x1ftid" -> track index */
	struct track *tracks;
	size_t ntracks, tracks_alloc;
	struct strmap proc_names, thread_names, proc_labels, proc_sort;
	struct strmap open_b;	  /* track index -> index into opens */
	struct strmap open_async; /* cat\x1fid\x1fscope -> index into opens */
	struct open_stack *opens;
	size_t nopens, opens_alloc;
	struct strmap metrics; /* pid\x1fname\x1fkey -> metric id */
	int64_t source_id;
	int64_t min_ts, max_ts;
	int any_ts;
	int64_t spans, samples;
	int64_t diag[D_COUNT];
	char *diag_example[D_COUNT];
};

/* ---- helpers ---- */

static void note(struct cp *p, enum diag_code d, const char *example)
{
	p->diag[d]++;
	if (!p->diag_example[d] && example)
		p->diag_example[d] = xstrdup(example);
}

/* The input's offset of byte `at` of the text left after stream_cut. */
static uint64_t input_at(const struct cp *p, uint64_t at)
{
	uint64_t v = at + p->sc.dropped_before;
	for (size_t i = 0; i < p->sc.ncuts && p->sc.cuts[i].at <= at; i++)
		v += p->sc.cuts[i].dropped;
	return v;
}

/* The input's offset YAJL has reached. */
static uint64_t yajl_at(const struct cp *p)
{
	size_t c = yajl_get_bytes_consumed(p->h);
	const struct lenient *x = &p->lx;
	if (!x->mapped)
		return input_at(p, p->chunk_base + c);
	size_t lo = 0, hi = x->nmarks; /* the last mark at or before c */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->marks[mid].out <= c)
			lo = mid;
		else
			hi = mid;
	}
	const struct lx_mark *m = &x->marks[lo];
	return input_at(p, m->esc ? m->in + (c > m->out) : m->in + (c - m->out));
}

static void note_at(struct cp *p, enum diag_code d)
{
	if (p->diag_example[d]) {
		p->diag[d]++;
		return;
	}
	uint64_t at = p->scanned ? input_at(p, p->scanned_end) : yajl_at(p);
	char *ex = xasprintf("event ending near byte %llu", (unsigned long long)at);
	note(p, d, ex);
	free(ex);
}

static int fail(struct cp *p, char *msg)
{
	if (!p->failed) {
		*p->err = msg;
		p->failed = 1;
	} else {
		free(msg);
	}
	return 0; /* stops yajl */
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

/* Appends a string, repaired to valid UTF-8 with no NUL. */
static void add_clean(struct cp *p, struct sbuf *out, const unsigned char *s, size_t n)
{
	if (text_utf8_valid((const char *)s, n)) {
		sbuf_add(out, s, n);
		return;
	}
	if (text_utf8_repair(out, (const char *)s, n))
		note_at(p, D_BAD_UTF8);
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

/* sbuf_reset, sbuf_addc and a reset and sbuf_add, inline: the scanner
 * calls them a few times per field. */
static inline void buf_reset(struct sbuf *b)
{
	b->len = 0;
	if (b->alloc)
		b->buf[0] = '\0';
}

static inline void buf_addc(struct sbuf *b, char c)
{
	if (b->len + 2 > b->alloc)
		sbuf_grow(b, 1);
	b->buf[b->len++] = c;
	b->buf[b->len] = '\0';
}

static inline void buf_set(struct sbuf *b, const char *s, size_t n)
{
	b->len = 0;
	if (n + 1 > b->alloc)
		sbuf_grow(b, n);
	memcpy(b->buf, s, n);
	b->buf[n] = '\0';
	b->len = n;
}

static void event_reset(struct event *e)
{
	struct sbuf *bufs[] = {&e->ph,	    &e->name, &e->cat,	    &e->pid,	   &e->tid,
			       &e->ts,	    &e->dur,  &e->id,	    &e->bp,	   &e->scope,
			       &e->bind_id, &e->args, &e->arg_name, &e->arg_labels};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		buf_reset(bufs[i]);
	for (int i = 0; i < e->nseries; i++)
		free(e->series[i].key);
	e->nseries = 0;
	e->flow_in = e->flow_out = e->nfields = e->args_cut = 0;
	e->has_corr = e->has_sort_index = 0;
}

/* The event field a key names; s need not be NUL-terminated. */
static enum field field_of_mem(const char *s, size_t n)
{
#define IS(lit) (!memcmp(s, lit, sizeof(lit) - 1))
	switch (n) {
	case 5:
		return IS("scope") ? F_SCOPE : F_OTHER;
	case 2:
		return IS("ph")	  ? F_PH
		       : IS("ts") ? F_TS
		       : IS("id") ? F_ID
		       : IS("bp") ? F_BP
				  : F_OTHER;
	case 3:
		return IS("cat")   ? F_CAT
		       : IS("pid") ? F_PID
		       : IS("tid") ? F_TID
		       : IS("dur") ? F_DUR
				   : F_OTHER;
	case 4:
		return IS("name") ? F_NAME : IS("args") ? F_ARGS : F_OTHER;
	case 7:
		return IS("bind_id") ? F_BIND_ID : IS("flow_in") ? F_FLOW_IN : F_OTHER;
	case 8:
		return IS("flow_out") ? F_FLOW_OUT : F_OTHER;
	default:
		return F_OTHER;
	}
#undef IS
}

/* Keys are repaired (no NUL inside), so comparing their bytes is strcmp. */
static enum field field_of(const struct sbuf *k)
{
	return field_of_mem(k->buf, k->len);
}

static struct sbuf *field_buf(struct event *e, enum field f)
{
	switch (f) {
	case F_PH:
		return &e->ph;
	case F_NAME:
		return &e->name;
	case F_CAT:
		return &e->cat;
	case F_PID:
		return &e->pid;
	case F_TID:
		return &e->tid;
	case F_TS:
		return &e->ts;
	case F_DUR:
		return &e->dur;
	case F_ID:
		return &e->id;
	case F_BP:
		return &e->bp;
	case F_SCOPE:
		return &e->scope;
	case F_BIND_ID:
		return &e->bind_id;
	default:
		return NULL;
	}
}

/* ---- capture: re-serialising a JSON subtree compactly ---- */

static void cap_sep(struct cp *p, int is_key)
{
	int d = p->depth;
	if (p->is_map[d] && !is_key)
		return;
	if (!p->first[d])
		sbuf_addc(p->cap_buf, ',');
	p->first[d] = 0;
}

/* Args members at the top of the args object carry the fields we index;
 * k (klen bytes, no NUL inside) is the member's key. */
static void args_scalar(struct cp *p, const char *k, size_t klen, const char *s, size_t n,
			int is_string, int is_number)
{
	struct event *e = &p->ev;
	int64_t v;
#define KEY_IS(lit) (klen == sizeof(lit) - 1 && !memcmp(k, lit, sizeof(lit) - 1))
	if (klen > 11 || klen < 4) {
		/* none of the indexed keys */
	} else if (KEY_IS("correlation")) {
		if (!text_parse_int64(s, n, &v)) {
			e->corr = v;
			e->has_corr = 1;
		}
	} else if (KEY_IS("name") && is_string) {
		sbuf_reset(&e->arg_name);
		add_clean(p, &e->arg_name, (const unsigned char *)s, n);
	} else if (KEY_IS("labels") && is_string) {
		sbuf_reset(&e->arg_labels);
		add_clean(p, &e->arg_labels, (const unsigned char *)s, n);
	} else if (KEY_IS("sort_index")) {
		if (!text_parse_int64(s, n, &v)) {
			e->sort_index = v;
			e->has_sort_index = 1;
		}
	}
#undef KEY_IS
	int maybe_counter = !e->ph.len || e->ph.buf[0] == 'C';
	if (maybe_counter && (is_number || is_string) && e->nseries < MAX_SERIES && n > 0 &&
	    n < 64) {
		char buf[64];
		memcpy(buf, s, n);
		buf[n] = '\0';
		char *end;
		double d = strtod(buf, &end);
		if (end == buf + n) {
			e->series[e->nseries].key = xstrndup(k, klen);
			e->series[e->nseries].value = d;
			e->nseries++;
		}
	}
}

static int is_big_integer(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			return 0;
	int64_t v;
	return text_parse_int64(s, n, &v) < 0;
}

/* The capture writes what it reads into p->cap_buf. */
static int cap_writes(const struct cp *p)
{
	return p->cap == CAP_ARGS || p->cap == CAP_META;
}

/* A member of the metadata that takes it beyond META_MAX, or of an event's
 * args beyond ARGS_MAX, as it is read: taken out again, and the rest of it
 * (of args, the rest of args) not kept. */
static void cap_check(struct cp *p)
{
	if (p->cap == CAP_META && p->meta.len > META_MAX) {
		p->meta.len = p->meta_mark;
		p->meta.buf[p->meta.len] = '\0';
		p->first[1] = p->meta_first;
		p->cap = CAP_SKIP;
		note(p, D_META_SKIPPED, p->meta_key.buf);
	} else if (p->cap == CAP_ARGS && p->ev.args.len > ARGS_MAX) {
		p->ev.args.len = p->args_mark;
		p->ev.args.buf[p->ev.args.len] = '\0';
		p->ev.args_cut = 1;
		p->cap = CAP_ARGS_FULL;
	}
}

/* A scalar inside a capture. kind: 's' string, 'n' number, 'l' literal. */
static void cap_scalar(struct cp *p, const char *s, size_t n, char kind)
{
	if (cap_writes(p)) {
		cap_sep(p, 0);
		if (kind == 's') {
			sbuf_reset(&p->scratch);
			add_clean(p, &p->scratch, (const unsigned char *)s, n);
			sbuf_add_json_string(p->cap_buf, p->scratch.buf, p->scratch.len);
		} else if (kind == 'n' && is_big_integer(s, n)) {
			note_at(p, D_BIG_INTEGER);
			sbuf_add_json_string(p->cap_buf, s, n);
		} else {
			sbuf_add(p->cap_buf, s, n);
		}
		cap_check(p);
	}
	if ((p->cap == CAP_ARGS || p->cap == CAP_ARGS_FULL) && p->depth == p->cap_depth)
		args_scalar(p, p->key.buf, p->key.len, s, n, kind == 's', kind == 'n');
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
	/* device categories win: Kineto's GPU-side ProfilerStep#N is a
	 * gpu_user_annotation and must stay on its stream */
	if (!*device && !strncmp(e->name.buf, "ProfilerStep#", 13))
		return PHASE_PROFILER_STEP;
	return m->kind;
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
			XGROW(p->tracks, p->ntracks + 1, p->tracks_alloc);
			struct track *t = &p->tracks[p->ntracks++];
			t->pid = xstrdup(pid->buf);
			t->tid = xstrdup(tid->buf);
			t->device = device;
			t->async = async;
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

/* Hands a record to the nest builder, marking device tracks and counting spans. */
static int add_span(struct cp *p, struct nest_span s)
{
	if (p->tracks[s.track].device)
		s.flags |= NEST_ON_DEVICE;
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
		note_at(p, D_UNMATCHED_END);
		return 0;
	}
	struct open_span o = os->v[--os->n];
	int64_t dur;
	if (__builtin_sub_overflow(ts, o.ts, &dur) || dur < 0) {
		note_at(p, D_BAD_DUR);
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
		note_at(p, D_BAD_COUNTER);
	return 0;
}

/* M events: process and thread names, process labels and sort order. */
static void metadata(struct cp *p, const struct event *e)
{
	const char *n = e->name.buf;
	sbuf_reset(&p->scratch);
	sbuf_adds(&p->scratch, e->pid.buf);
	struct strmap *m = NULL;
	const struct sbuf *v = &e->arg_name;
	if (!strcmp(n, "process_name")) {
		m = &p->proc_names;
	} else if (!strcmp(n, "thread_name")) {
		m = &p->thread_names;
		sbuf_addf(&p->scratch, "\x1f%s", e->tid.buf);
	} else if (!strcmp(n, "process_labels")) {
		m = &p->proc_labels;
		v = &e->arg_labels;
	} else if (!strcmp(n, "process_sort_index") && e->has_sort_index) {
		strmap_put(&p->proc_sort, p->scratch.buf, p->scratch.len, 0, NULL)->value =
		    e->sort_index;
		return;
	}
	if (!m || !v->len) {
		note_at(p, D_IGNORED_METADATA);
		return;
	}
	int64_t id = intern(p, v->buf, v->len);
	if (id > 0)
		strmap_put(m, p->scratch.buf, p->scratch.len, 0, NULL)->value = id;
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
		note_at(p, D_BAD_DUR);
		s.dur = 0;
	}
	s.track = track_of(p, &e->pid, &e->tid, device, 0);
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

static int finish_event(struct cp *p)
{
	struct event *e = &p->ev;
	if (e->args_cut)
		note_at(p, D_LONG_ARGS);
	if (!e->nfields) {
		note(p, D_EMPTY_EVENT, "{}");
		return 0;
	}
	if (!e->ph.len) {
		note_at(p, D_MISSING_PH);
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
	int ok;
	int64_t ts = ts_of(p, &e->ts, &ok);
	if (!ok) {
		note_at(p, ph == 'X' || ph == 'B' || ph == 'b' ? D_BAD_TS
			   : ph == 'E' || ph == 'e'	       ? D_UNMATCHED_END
							       : D_UNSUPPORTED);
		return 0;
	}
	int device, flat;
	struct cat_memo *cm;
	struct nest_span s = {.kind = (uint8_t)kind_of(p, e, &device, &flat, &cm), .start = ts};
	s.name_id = intern(p, e->name.buf, e->name.len);
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
			note(p, D_UNSUPPORTED, ex);
			free(ex);
		} else {
			p->diag[D_UNSUPPORTED]++;
		}
		return 0;
	}
}

/* ---- YAJL callbacks ---- */

/* A value of a top-level key other than traceEvents starts: writes its key
 * to the metadata kept for sources.attrs, or returns 0 when the value is to
 * be skipped because the metadata is already at its cap. */
static int meta_begin_value(struct cp *p)
{
	if (p->meta.len > META_MAX) {
		note(p, D_META_SKIPPED, p->key.buf);
		return 0;
	}
	p->cap_buf = &p->meta;
	p->meta_mark = p->meta.len;
	p->meta_first = p->first[p->depth];
	sbuf_reset(&p->meta_key);
	sbuf_add(&p->meta_key, p->key.buf, p->key.len);
	cap_sep(p, 1);
	sbuf_add_json_string(&p->meta, p->key.buf, p->key.len);
	sbuf_addc(&p->meta, ':');
	return 1;
}

static int not_an_array(struct cp *p)
{
	return fail(p, xasprintf("%s: not a Chrome trace: traceEvents is not an array (near byte "
				 "%llu)",
				 input_path(p->in), (unsigned long long)yajl_at(p)));
}

static int on_scalar(struct cp *p, const char *s, size_t n, char kind)
{
	if (p->cap) {
		cap_scalar(p, s, n, kind);
		return !p->failed;
	}
	if (p->depth == 0)
		return fail(p, xasprintf("%s: not a Chrome trace: the document is a bare %s",
					 input_path(p->in), kind == 's' ? "string" : "value"));
	if (p->in_event && p->depth == p->events_depth + 1) {
		struct event *e = &p->ev;
		e->nfields++;
		if (p->field == F_FLOW_IN || p->field == F_FLOW_OUT) {
			int v = kind == 'l' && n == 4 && !memcmp(s, "true", 4);
			if (p->field == F_FLOW_IN)
				e->flow_in = v;
			else
				e->flow_out = v;
			return 1;
		}
		struct sbuf *b = field_buf(e, p->field);
		if (b && !(kind == 'l' && n == 4 && !memcmp(s, "null", 4))) {
			sbuf_reset(b);
			add_clean(p, b, (const unsigned char *)s, n);
		}
		return !p->failed;
	}
	if (p->events_depth && p->depth == p->events_depth) {
		note_at(p, D_NOT_OBJECT);
		return 1;
	}
	if (p->top_object && p->depth == 1) {
		if (!strcmp(p->key.buf, "traceEvents"))
			return not_an_array(p);
		if (!strcmp(p->key.buf, "baseTimeNanoseconds")) {
			int64_t v;
			if ((kind == 'n' || kind == 's') && !text_parse_int64(s, n, &v)) {
				p->has_base = 1;
				p->base_ns = v;
			}
		}
		if (meta_begin_value(p)) {
			p->cap = CAP_META;
			cap_scalar(p, s, n, kind);
			p->cap = CAP_NONE;
		}
	}
	return 1;
}

/* The last key read, when it is short and plain enough for a message. */
static const char *plain_key(const struct cp *p)
{
	if (!p->key.len || p->key.len > 32)
		return NULL;
	for (size_t i = 0; i < p->key.len; i++) {
		char ch = p->key.buf[i];
		if (!(ch == ' ' || ch == '_' || ch == '-' || ch == '.' ||
		      (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= 'A' && ch <= 'Z')))
			return NULL;
	}
	return p->key.buf;
}

/* Counts a string cut at YAJL's place, naming its field in the example. */
static void note_long(struct cp *p, int is_key)
{
	if (p->diag_example[D_LONG_STRING]) {
		p->diag[D_LONG_STRING]++;
		return;
	}
	const char *k = plain_key(p);
	char *what = is_key					     ? xstrdup("a key")
		     : !k					     ? xstrdup("a string")
		     : p->cap == CAP_ARGS || p->cap == CAP_ARGS_FULL ? xasprintf("args \"%s\"", k)
		     : p->cap == CAP_META || (!p->cap && p->top_object && p->depth == 1)
			 ? xasprintf("top-level \"%s\"", k)
		     : p->in_event && !p->cap ? xasprintf("event \"%s\"", k)
					      : xstrdup("a string");
	char *ex = xasprintf("%s ending near byte %llu", what, (unsigned long long)yajl_at(p));
	note(p, D_LONG_STRING, ex);
	free(ex);
	free(what);
}

/* A string longer than STR_MAX bytes: its first STR_MAX, less the bytes of
 * a character the cut would split, and "…", in p->cut; counted. */
static void cut_string(struct cp *p, const unsigned char **s, size_t *n, int is_key)
{
	size_t k = STR_MAX;
	for (int i = 0; i < 3 && ((*s)[k] & 0xc0) == 0x80; i++)
		k--;
	sbuf_reset(&p->cut);
	sbuf_add(&p->cut, *s, k);
	sbuf_adds(&p->cut, STR_ELLIPSIS);
	*s = (const unsigned char *)p->cut.buf;
	*n = p->cut.len;
	note_long(p, is_key);
}

static int cb_null(void *ctx)
{
	return on_scalar(ctx, "null", 4, 'l');
}

static int cb_boolean(void *ctx, int v)
{
	return v ? on_scalar(ctx, "true", 4, 'l') : on_scalar(ctx, "false", 5, 'l');
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	return on_scalar(ctx, s, n, 'n');
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	if (n > STR_MAX)
		cut_string(ctx, &s, &n, 0);
	return on_scalar(ctx, (const char *)s, n, 's');
}

static int open_container(struct cp *p, int is_map)
{
	if (p->depth >= MAX_DEPTH)
		return fail(p, xasprintf("%s: JSON nested deeper than %d levels near byte %llu",
					 input_path(p->in), MAX_DEPTH,
					 (unsigned long long)yajl_at(p)));
	if (p->cap) {
		if (cap_writes(p)) {
			cap_sep(p, 0);
			sbuf_addc(p->cap_buf, is_map ? '{' : '[');
			cap_check(p);
		}
	} else if (p->depth == 0) {
		p->top_object = is_map;
		if (!is_map)
			p->events_depth = p->saw_events = p->events_opened = 1;
	} else if (p->top_object && p->depth == 1) {
		if (!strcmp(p->key.buf, "traceEvents")) {
			if (is_map)
				return not_an_array(p);
			p->events_depth = 2;
			p->saw_events = p->events_opened = 1;
		} else if (meta_begin_value(p)) {
			p->cap = CAP_META;
			p->cap_depth = p->depth + 1;
			sbuf_addc(p->cap_buf, is_map ? '{' : '[');
		} else {
			p->cap = CAP_SKIP;
			p->cap_depth = p->depth + 1;
		}
	} else if (p->events_depth && p->depth == p->events_depth) {
		if (!is_map) {
			note_at(p, D_NOT_OBJECT);
			p->cap = CAP_SKIP;
			p->cap_depth = p->depth + 1;
		} else {
			p->in_event = 1;
			event_reset(&p->ev);
		}
	} else if (p->in_event && p->depth == p->events_depth + 1) {
		p->ev.nfields++;
		p->cap_depth = p->depth + 1;
		if (p->field == F_ARGS && is_map) {
			p->cap = CAP_ARGS;
			p->cap_buf = &p->ev.args;
			sbuf_reset(&p->ev.args);
			sbuf_addc(p->cap_buf, '{');
		} else {
			p->cap = CAP_SKIP;
		}
	} else {
		p->cap = CAP_SKIP;
		p->cap_depth = p->depth + 1;
	}
	p->depth++;
	p->is_map[p->depth] = (uint8_t)is_map;
	p->first[p->depth] = 1;
	return 1;
}

static int close_container(struct cp *p, int is_map)
{
	if (cap_writes(p) || (p->cap == CAP_ARGS_FULL && p->depth == p->cap_depth))
		sbuf_addc(p->cap_buf, is_map ? '}' : ']');
	if (p->cap && p->depth == p->cap_depth)
		p->cap = CAP_NONE;
	p->depth--;
	if (p->in_event && p->depth == p->events_depth && is_map && !p->cap) {
		p->in_event = 0;
		if (finish_event(p) < 0)
			p->failed = 1;
	}
	if (p->events_depth && p->depth == p->events_depth - 1 && !is_map && !p->cap)
		p->events_depth = 0;
	return !p->failed;
}

static int cb_start_map(void *ctx)
{
	return open_container(ctx, 1);
}

static int cb_end_map(void *ctx)
{
	return close_container(ctx, 1);
}

static int cb_start_array(void *ctx)
{
	return open_container(ctx, 0);
}

static int cb_end_array(void *ctx)
{
	return close_container(ctx, 0);
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
	struct cp *p = ctx;
	if (n > STR_MAX)
		cut_string(p, &s, &n, 1);
	sbuf_reset(&p->key);
	add_clean(p, &p->key, s, n);
	if (cap_writes(p)) {
		if (p->cap == CAP_ARGS && p->depth == p->cap_depth)
			p->args_mark = p->ev.args.len;
		cap_sep(p, 1);
		sbuf_add_json_string(p->cap_buf, p->key.buf, p->key.len);
		sbuf_addc(p->cap_buf, ':');
		cap_check(p);
	}
	if (p->in_event && p->depth == p->events_depth + 1 && !p->cap)
		p->field = field_of(&p->key);
	return 1;
}

static const yajl_callbacks callbacks = {
    cb_null,	  cb_boolean, NULL,	  NULL,		  cb_number,	cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

static char *parse_error(struct cp *p, const unsigned char *chunk, size_t len, int at_end);

/* ---- the event scanner: YAJL's work, for the common shape only ----
 *
 * Most of a Kineto trace is events such as
 *   {"ph": "X", "cat": "kernel", "name": "...", "pid": 1, "tid": 7,
 *    "ts": 1669783707761463, "dur": 13, "args": {"External id": 5, ...}}
 * and YAJL's callbacks cost more than the events' own handling.  While the
 * parser stands inside the traceEvents array, scan_units reads whole
 * "element ," units itself: an event it can read exactly as the callbacks
 * would (strings without escapes or control characters and valid UTF-8,
 * numbers as JSON writes them and within int64 in args, no repeated field,
 * no container but args and what args holds) fills p->ev and goes to
 * finish_event; any other element goes to YAJL, whole and with its comma.
 * YAJL therefore always stands after a comma or the array's '[', expecting
 * a value, between units, and never sees the bytes scanned: a unit is only
 * taken when a value follows its comma, not ']' or '}' (YAJL's two states
 * differ only there, and the lenient feed drops a comma before either: see
 * yajl_feed), and the last element, the array's end and anything
 * the scanner cannot delimit go to YAJL with the rest of the input.  So
 * both paths store the same events, count the same diagnostics at the same
 * byte offsets, and fail on the same bytes with the same messages. */

enum { SC_OK, SC_DECLINE, SC_NEED };

#define SCAN_DEPTH 32 /* args nested deeper go to YAJL */
/* A unit larger than this goes to YAJL, with the rest of the input: with
 * ARGS_MAX, STR_STREAM_MAX and NUM_MAX, what bounds one event's memory. */
#define SCAN_BUF_MAX ((size_t)4 << 20)

/* Bytes of a string: 0 plain ASCII, 1 the closing quote, 2 what the
 * scanner leaves to YAJL (escapes, control characters), 3 non-ASCII. */
static const unsigned char str_class[256] = {
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

/* The text being scanned, b[i..hi). */
struct scan {
	const unsigned char *b;
	size_t i, hi;
};

static inline int scan_ws(struct scan *c)
{
	while (c->i < c->hi) {
		unsigned char ch = c->b[c->i];
		if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t')
			return SC_OK;
		c->i++;
	}
	return SC_NEED;
}

#define BYTES(x) (0x0101010101010101ULL * (x))

/* The high bit of each of the 8 bytes at b that str_class does not call
 * plain (0); exact up to the first such byte, which is all the caller
 * reads ((x - 1) & ~x borrows only past a byte that matches). */
static inline uint64_t str_special(const unsigned char *b)
{
	uint64_t v, q, bs;
	memcpy(&v, b, 8);
	q = v ^ BYTES('"');
	bs = v ^ BYTES('\\');
	return (((q - BYTES(1)) & ~q) | ((bs - BYTES(1)) & ~bs) | ((v - BYTES(0x20)) & ~v) | v) &
	       BYTES(0x80);
}

/* A string at b[i] == '"': its bytes in *s, *n; i moves past it. */
static inline int scan_string(struct scan *c, const char **s, size_t *n)
{
	size_t i = c->i + 1, start = i;
	int high = 0;
	for (;; i++) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* eight bytes at a time up to the first that is not plain ASCII */
		while (c->hi - i >= 8) {
			uint64_t m = str_special(c->b + i);
			if (m) {
				i += (size_t)__builtin_ctzll(m) / 8;
				break;
			}
			i += 8;
		}
#endif
		if (i == c->hi)
			return SC_NEED;
		unsigned char k = str_class[c->b[i]];
		if (!k)
			continue;
		if (k == 1)
			break;
		if (k == 2)
			return SC_DECLINE;
		high = 1;
	}
	*s = (const char *)c->b + start;
	*n = i - start;
	if ((high && !text_utf8_valid(*s, *n)) || *n > STR_MAX)
		return SC_DECLINE; /* YAJL's callbacks cut a long string */
	c->i = i + 1;
	return SC_OK;
}

/* A member's key at b[i] and the ':' after it, with the blanks around:
 * *k its text; c->i moves to the value. */
static int scan_key(struct scan *c, const char **k, size_t *kn)
{
	int r;
	if (c->b[c->i] != '"')
		return SC_DECLINE;
	if ((r = scan_string(c, k, kn)) != SC_OK || (r = scan_ws(c)) != SC_OK)
		return r;
	if (c->b[c->i] != ':')
		return SC_DECLINE;
	c->i++;
	return scan_ws(c);
}

static inline int is_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

/* A byte a number can hold: a run of more than NUM_MAX of them outside
 * strings is an error (see stream_cut). */
static inline int is_num_char(unsigned char ch)
{
	return is_digit(ch) || ch == '-' || ch == '+' || ch == '.' || (ch | 0x20) == 'e';
}

/* A number as JSON writes it (YAJL's lexer reads no other), ending where
 * a ',', '}', ']' or white space follows; *integer when it has no
 * fraction or exponent. */
static int scan_number(struct scan *c, size_t *n, int *integer)
{
	const unsigned char *b = c->b;
	size_t i = c->i, hi = c->hi;
	*integer = 1;
	if (i < hi && b[i] == '-')
		i++;
	if (i == hi)
		return SC_NEED;
	if (b[i] == '0') {
		i++;
	} else if (is_digit(b[i])) {
		while (i < hi && is_digit(b[i]))
			i++;
	} else {
		return SC_DECLINE;
	}
	if (i < hi && b[i] == '.') {
		*integer = 0;
		if (++i == hi)
			return SC_NEED;
		if (!is_digit(b[i]))
			return SC_DECLINE;
		while (i < hi && is_digit(b[i]))
			i++;
	}
	if (i < hi && (b[i] == 'e' || b[i] == 'E')) {
		*integer = 0;
		if (++i < hi && (b[i] == '+' || b[i] == '-'))
			i++;
		if (i == hi)
			return SC_NEED;
		if (!is_digit(b[i]))
			return SC_DECLINE;
		while (i < hi && is_digit(b[i]))
			i++;
	}
	if (i - c->i > NUM_MAX)
		return SC_DECLINE; /* an error, which the YAJL path reports */
	if (i == hi)
		return SC_NEED;
	unsigned char ch = b[i];
	if (ch != ',' && ch != '}' && ch != ']' && ch != ' ' && ch != '\n' && ch != '\r' &&
	    ch != '\t')
		return SC_DECLINE;
	*n = i - c->i;
	c->i = i;
	return SC_OK;
}

/* A scalar: *kind is 's' (string), 'n' (number) or 'l' (true, false,
 * null), as on_scalar receives them. */
static int scan_scalar(struct scan *c, const char **s, size_t *n, char *kind, int *integer)
{
	unsigned char ch = c->b[c->i];
	if (ch == '"') {
		*kind = 's';
		return scan_string(c, s, n);
	}
	*s = (const char *)c->b + c->i;
	if (ch == '-' || is_digit(ch)) {
		*kind = 'n';
		return scan_number(c, n, integer);
	}
	static const char *const lits[] = {"true", "false", "null"};
	for (size_t k = 0; k < 3; k++) {
		size_t len = strlen(lits[k]);
		if (ch != (unsigned char)lits[k][0])
			continue;
		if (c->hi - c->i < len + 1)
			return SC_NEED;
		if (memcmp(c->b + c->i, lits[k], len))
			return SC_DECLINE;
		*kind = 'l';
		*n = len;
		c->i += len;
		return SC_OK;
	}
	return SC_DECLINE;
}

/* Appends a string YAJL would hand over as it is: sbuf_add_json_string
 * changes nothing in it but the quotes when it is printable ASCII. */
static void add_json_plain(struct sbuf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == 0x7f || (unsigned char)s[i] >= 0x80) {
			sbuf_add_json_string(out, s, n);
			return;
		}
	sbuf_grow(out, n + 2);
	char *w = out->buf + out->len;
	w[0] = '"';
	memcpy(w + 1, s, n);
	w[n + 1] = '"';
	out->len += n + 2;
	w[n + 2] = '\0';
}

/* A value inside args, re-serialised compactly into out as cap_scalar and
 * the container callbacks write it; depth 0 is a member of args itself,
 * whose scalars args_scalar also reads. */
static int scan_cap_value(struct cp *p, struct scan *c, struct sbuf *out, int depth,
			  const char *key, size_t klen)
{
	unsigned char ch = c->b[c->i];
	if (ch == '{' || ch == '[') {
		if (depth >= SCAN_DEPTH)
			return SC_DECLINE;
		int is_map = ch == '{';
		buf_addc(out, (char)ch);
		c->i++;
		int r;
		if ((r = scan_ws(c)) != SC_OK)
			return r;
		if (c->b[c->i] == (is_map ? '}' : ']')) {
			c->i++;
			buf_addc(out, is_map ? '}' : ']');
			return SC_OK;
		}
		for (int first = 1;; first = 0) {
			if (!first)
				buf_addc(out, ',');
			if (is_map) {
				const char *k;
				size_t kn;
				if ((r = scan_key(c, &k, &kn)) != SC_OK)
					return r;
				add_json_plain(out, k, kn);
				buf_addc(out, ':');
			}
			if ((r = scan_cap_value(p, c, out, depth + 1, NULL, 0)) != SC_OK ||
			    (r = scan_ws(c)) != SC_OK)
				return r;
			ch = c->b[c->i++];
			if (ch == ',') {
				if ((r = scan_ws(c)) != SC_OK)
					return r;
				continue;
			}
			if (ch != (is_map ? '}' : ']'))
				return SC_DECLINE;
			buf_addc(out, (char)ch);
			return SC_OK;
		}
	}
	const char *s;
	size_t n;
	char kind;
	int integer, r = scan_scalar(c, &s, &n, &kind, &integer);
	if (r != SC_OK)
		return r;
	if (kind == 's') {
		add_json_plain(out, s, n);
	} else {
		/* a big integer is counted at YAJL's byte offset: YAJL's */
		if (kind == 'n' && integer && n >= 19 && is_big_integer(s, n))
			return SC_DECLINE;
		sbuf_add(out, s, n);
	}
	if (depth == 0)
		args_scalar(p, key, klen, s, n, kind == 's', kind == 'n');
	return SC_OK;
}

/* The args object of an event, at b[i] == '{', into e->args. */
static int scan_args(struct cp *p, struct scan *c)
{
	struct sbuf *out = &p->ev.args;
	sbuf_reset(out);
	buf_addc(out, '{');
	c->i++;
	int r;
	if ((r = scan_ws(c)) != SC_OK)
		return r;
	if (c->b[c->i] == '}') {
		c->i++;
		buf_addc(out, '}');
		return SC_OK;
	}
	for (int first = 1;; first = 0) {
		const char *k;
		size_t kn;
		if ((r = scan_key(c, &k, &kn)) != SC_OK)
			return r;
		if (!first)
			buf_addc(out, ',');
		add_json_plain(out, k, kn);
		buf_addc(out, ':');
		if ((r = scan_cap_value(p, c, out, 0, k, kn)) != SC_OK || (r = scan_ws(c)) != SC_OK)
			return r;
		if (out->len > ARGS_MAX)
			return SC_DECLINE; /* YAJL's callbacks cut the args */
		unsigned char ch = c->b[c->i++];
		if (ch == '}') {
			buf_addc(out, '}');
			return SC_OK;
		}
		if (ch != ',')
			return SC_DECLINE;
		if ((r = scan_ws(c)) != SC_OK)
			return r;
	}
}

/* An event object at b[i] == '{' into p->ev, as the callbacks fill it;
 * c->i moves past its '}'. */
static int scan_event(struct cp *p, struct scan *c)
{
	struct event *e = &p->ev;
	event_reset(e);
	unsigned seen = 0;
	c->i++;
	int r;
	if ((r = scan_ws(c)) != SC_OK)
		return r;
	if (c->b[c->i] == '}')
		return SC_DECLINE; /* {}: rare, and counted without an offset */
	for (;;) {
		const char *k;
		size_t kn;
		if ((r = scan_key(c, &k, &kn)) != SC_OK)
			return r;
		enum field f = field_of_mem(k, kn);
		if (f != F_OTHER) {
			if (seen & (1u << f))
				return SC_DECLINE; /* a repeated field: YAJL's order of effects */
			seen |= 1u << f;
		}
		e->nfields++;
		unsigned char ch = c->b[c->i];
		if (ch == '{' || ch == '[') {
			if (f != F_ARGS || ch != '{')
				return SC_DECLINE;
			if ((r = scan_args(p, c)) != SC_OK)
				return r;
		} else {
			const char *s;
			size_t n;
			char kind;
			int integer;
			if ((r = scan_scalar(c, &s, &n, &kind, &integer)) != SC_OK)
				return r;
			if (f == F_FLOW_IN || f == F_FLOW_OUT) {
				int v = kind == 'l' && n == 4 && !memcmp(s, "true", 4);
				if (f == F_FLOW_IN)
					e->flow_in = v;
				else
					e->flow_out = v;
			} else {
				struct sbuf *fb = field_buf(e, f);
				if (fb && !(kind == 'l' && n == 4 && !memcmp(s, "null", 4))) {
					buf_set(fb, s, n);
				}
			}
		}
		if ((r = scan_ws(c)) != SC_OK)
			return r;
		unsigned char end = c->b[c->i++];
		if (end == '}')
			return SC_OK;
		if (end != ',')
			return SC_DECLINE;
		if ((r = scan_ws(c)) != SC_OK)
			return r;
	}
}

/* Skips any one JSON value at c->i, or its prefix when it is malformed:
 * what YAJL is to read whole.  SC_DECLINE when no value starts here, or
 * when it holds a run of number characters longer than NUM_MAX (or is a
 * scalar that long): YAJL reads the rest of the input, through stream_cut,
 * which reports it. */
static int skip_value(struct scan *c)
{
	const unsigned char *b = c->b;
	size_t i = c->i, run = 0;
	int depth = 0;
	do {
		if (i == c->hi)
			return SC_NEED;
		unsigned char ch = b[i];
		if (ch == '"') {
			for (i++;; i++) {
				if (i >= c->hi)
					return SC_NEED;
				if (b[i] == '\\')
					i++;
				else if (b[i] == '"')
					break;
			}
			i++;
			run = 0;
		} else if (ch == '{' || ch == '[') {
			depth++;
			i++;
			run = 0;
		} else if (ch == '}' || ch == ']') {
			if (!depth)
				return SC_DECLINE;
			depth--;
			i++;
			run = 0;
		} else if (depth) {
			run = is_num_char(ch) ? run + 1 : 0;
			if (run > NUM_MAX)
				return SC_DECLINE;
			i++;
		} else {
			size_t start = i;
			while (i < c->hi && !strchr(",]} \n\r\t", b[i]))
				if (++i - start > NUM_MAX)
					return SC_DECLINE;
			if (i == c->hi)
				return SC_NEED;
			if (i == start)
				return SC_DECLINE;
		}
	} while (depth);
	c->i = i;
	return SC_OK;
}

/* Hands YAJL text that starts at byte `at` of the text; 0 or -1 (*p->err set). */
static int yajl_piece(struct cp *p, const unsigned char *s, size_t n, uint64_t at)
{
	if (!n)
		return 0;
	p->chunk_base = at;
	yajl_status st = yajl_parse(p->h, s, n);
	if (p->failed)
		return -1;
	if (st != yajl_status_ok) {
		*p->err = parse_error(p, s, n, 0);
		return -1;
	}
	return 0;
}

/* ---- Chrome trace JSON as Perfetto reads it ----
 *
 * Perfetto and chrome://tracing read traces that JSON, and YAJL, refuse: a
 * comma before ']' or '}', control characters unescaped in strings, and an
 * input that ends inside the traceEvents array (see chrome_import).  Unless
 * --strict, yajl_feed filters what YAJL reads: a control character inside
 * a string goes to YAJL as an escape (or is dropped where the string is
 * past what is kept of it, as stream_cut drops it), and a comma after a
 * value that the next byte other than white space shows to be trailing is
 * dropped; one whose next byte is not read yet is held back until it is.
 * Each is counted.  An escape is longer than its byte, so a piece with
 * escapes is built in lx.buf and fed at once (YAJL reads a string it is
 * fed in pieces again from its start with each piece), with marks that map
 * YAJL's offsets in it back to the text's (yajl_at).  YAJL places an error
 * in a token it reads in two pieces at the second's start, so the pieces
 * are cut between tokens, the same wherever the reads end.  The scanner
 * reads neither: it declines a string with a control character, and takes
 * a unit only when a value follows its comma; both paths see the same. */

#define LX_PIECE_MAX ((size_t)1 << 20) /* bytes of a piece built in lx.buf */
#define LX_MARKS_MAX ((size_t)1 << 16) /* and its marks */
/* A string's control characters are escaped within its first bytes, this
 * many as written; past them it holds more than STR_MAX bytes once read
 * (an escape is at most six bytes for one), the part kept, and they are
 * dropped. */
#define LX_ESCAPE_MAX (6 * (STR_MAX + 4))
_Static_assert(LX_ESCAPE_MAX <= STR_STREAM_MAX, "stream_cut drops what is past it");

/* Counts a control character at byte `at` of the text, met by the lenient
 * feed (first: &p->lx.ctl_fed) or dropped by stream_cut (&p->lx.ctl_cut). */
static void lx_count_ctl(struct cp *p, uint64_t at, uint64_t *first)
{
	if (!*first)
		*first = input_at(p, at) + 1; /* 0: none yet */
	p->diag[D_CONTROL_CHAR]++;
}

static void lx_mark(struct lenient *x, uint64_t in, int esc)
{
	if (x->nmarks == x->marks_cap) {
		x->marks_cap = x->marks_cap ? 2 * x->marks_cap : 64;
		x->marks = xrealloc(x->marks, x->marks_cap * sizeof(*x->marks));
	}
	x->marks[x->nmarks++] = (struct lx_mark){x->n, in, esc};
}

static void lx_append(struct lenient *x, const void *s, size_t n)
{
	if (x->n + n > x->cap) {
		x->cap = x->n + n > 2 * x->cap ? x->n + n : 2 * x->cap;
		x->buf = xrealloc(x->buf, x->cap);
	}
	memcpy(x->buf + x->n, s, n);
	x->n += n;
}

/* Copies the run into buf. */
static void lx_spill(struct lenient *x)
{
	if (!x->run_len)
		return;
	lx_mark(x, x->run_at, 0);
	lx_append(x, x->run, x->run_len);
	x->run_len = 0;
}

/* Adds s[0..n), byte `at` of the text, to the piece: as a run while the
 * piece is that run alone, else copied. */
static void lx_text(struct lenient *x, const unsigned char *s, size_t n, uint64_t at)
{
	if (!n)
		return;
	if (!x->n && !x->run_len) {
		x->run = s;
		x->run_len = n;
		x->run_at = at;
		return;
	}
	lx_spill(x);
	lx_mark(x, at, 0);
	lx_append(x, s, n);
}

static void lx_escape(struct lenient *x, unsigned char ch, uint64_t at)
{
	char e[8];
	snprintf(e, sizeof(e), "\\u%04x", ch);
	lx_spill(x);
	lx_mark(x, at, 1);
	lx_append(x, e, 6);
}

/* str_special's test for what ends a plain stretch of a string for the
 * lenient feed: the high bit of each of the 8 bytes at b that is '"', '\\'
 * or a control character, exact up to the first. */
static inline uint64_t lx_special(const unsigned char *b)
{
	uint64_t v, q, bs;
	memcpy(&v, b, 8);
	q = v ^ BYTES('"');
	bs = v ^ BYTES('\\');
	return (((q - BYTES(1)) & ~q) | ((bs - BYTES(1)) & ~bs) | ((v - BYTES(0x20)) & ~v)) &
	       BYTES(0x80);
}

static inline int lx_ws(unsigned char ch)
{
	return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}

/* A byte of a number or literal (or of garbage), which YAJL knows has ended
 * only when it sees the byte after it. */
static inline int is_bare(unsigned char ch)
{
	return !lx_ws(ch) && !memchr("{}[],:\"", ch, 7);
}

/* The last byte of s[i..j) that is not white space, else last. */
static unsigned char lx_last(const unsigned char *s, size_t i, size_t j, unsigned char last)
{
	while (j > i)
		if (!lx_ws(s[--j]))
			return s[j];
	return last;
}

/* Feeds YAJL the piece built; 0 or -1. */
static int lx_flush(struct cp *p)
{
	struct lenient *x = &p->lx;
	int rc;
	if (x->n) {
		x->mapped = 1;
		rc = yajl_piece(p, x->buf, x->n, x->marks[0].in);
		x->mapped = 0;
		x->n = x->nmarks = 0;
	} else {
		rc = yajl_piece(p, x->run, x->run_len, x->run_at);
		x->run_len = 0;
	}
	return rc;
}

/* Feeds YAJL s[from..c) and holds back the comma at s[c], the last byte of
 * s but white space.  A number or literal right before the comma goes with
 * a space that stands for it, so that YAJL reads that token whole in one
 * piece (and an error in it at the same byte) however the text is split. */
static int lx_hold_comma(struct cp *p, const unsigned char *s, size_t from, size_t c, uint64_t at)
{
	struct lenient *x = &p->lx;
	size_t b = c;
	while (b > from && is_bare(s[b - 1]))
		b--;
	lx_text(x, s + from, b - from, at + from);
	if (b < c) {
		if (lx_flush(p) < 0)
			return -1;
		lx_text(x, s + b, c - b, at + b);
		lx_spill(x);
		lx_mark(x, at + c, 1);
		lx_append(x, " ", 1);
	}
	x->comma = 1;
	x->comma_at = at + c;
	return lx_flush(p);
}

/* Feeds YAJL a comma held back, now known to be followed by a value or to
 * end the input (where YAJL says whether it may). */
static int lx_release(struct cp *p)
{
	if (!p->lx.comma)
		return 0;
	p->lx.comma = 0;
	return yajl_piece(p, (const unsigned char *)",", 1, p->lx.comma_at);
}

static void lx_trailing_comma(struct cp *p, uint64_t at)
{
	if (!p->diag_example[D_TRAILING_COMMA])
		p->diag_example[D_TRAILING_COMMA] =
		    xasprintf("first at byte %llu", (unsigned long long)input_at(p, at));
	p->diag[D_TRAILING_COMMA]++;
}

/* Hands YAJL text that starts at byte `at` of the text, through the lenient
 * filter unless --strict; 0 or -1 (*p->err set). */
static int yajl_feed(struct cp *p, const unsigned char *s, size_t n, uint64_t at)
{
	if (p->opts->strict)
		return yajl_piece(p, s, n, at);
	struct lenient *x = &p->lx;
	size_t from = 0; /* s[from..i) is yet to join the piece */
	for (size_t i = 0; i < n;) {
		unsigned char ch;
		if (x->in_str) {
			if (x->esc) {
				x->esc = 0;
				x->len++;
				i++;
				continue;
			}
			size_t j = i;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			while (n - j >= 8) {
				uint64_t m = lx_special(s + j);
				if (m) {
					j += (size_t)__builtin_ctzll(m) / 8;
					break;
				}
				j += 8;
			}
#endif
			while (j < n && (str_class[s[j]] == 0 || str_class[s[j]] == 3))
				j++;
			x->len += j - i;
			if ((i = j) == n)
				break;
			ch = s[i++];
			if (ch == '\\') {
				x->esc = 1;
			} else if (ch == '"') {
				x->in_str = 0;
				x->last = '"';
			} else {
				lx_count_ctl(p, at + i - 1, &x->ctl_fed);
				lx_text(x, s + from, i - 1 - from, at + from);
				if (x->len < LX_ESCAPE_MAX)
					lx_escape(x, ch, at + i - 1);
				from = i;
				if ((x->n >= LX_PIECE_MAX || x->nmarks >= LX_MARKS_MAX) &&
				    lx_flush(p) < 0)
					return -1;
			}
			x->len++;
			continue;
		}
		if (x->comma) {
			/* YAJL sees the same however the text is split: the white
			 * space after a comma held back is not fed */
			while (i < n && lx_ws(s[i]))
				i++;
			if ((from = i) == n)
				break;
			x->comma = 0;
			if (s[i] == ']' || s[i] == '}')
				lx_trailing_comma(p, x->comma_at);
			else if (yajl_piece(p, (const unsigned char *)",", 1, x->comma_at) < 0)
				return -1;
		}
		size_t j = i;
		while (j < n && s[j] != '"' && s[j] != ',')
			j++;
		x->last = lx_last(s, i, j, x->last);
		if ((i = j) == n)
			break;
		ch = s[i++];
		if (ch == ',' && x->last && !memchr("[{,:", x->last, 4)) {
			size_t k = i;
			while (k < n && lx_ws(s[k]))
				k++;
			if (k < n && (s[k] == ']' || s[k] == '}')) {
				lx_text(x, s + from, i - 1 - from, at + from);
				lx_trailing_comma(p, at + i - 1);
				from = k;
			} else if (k == n) {
				if (lx_hold_comma(p, s, from, i - 1, at) < 0)
					return -1;
				from = k;
			}
		} else if (ch == '"') {
			x->in_str = 1;
			x->len = 0;
		}
		x->last = ch;
	}
	lx_text(x, s + from, n - from, at + from);
	return lx_flush(p);
}

/* Reads "element ," units from b[*lo..hi) inside the traceEvents array
 * (b[0] is byte `base` of the input) until one is not whole there.
 * SC_NEED: more input is wanted from *lo on; SC_DECLINE: what is left,
 * from *lo on, goes to YAJL; -1: failed, *p->err set. */
static int scan_units(struct cp *p, const unsigned char *b, size_t *lo, size_t hi, uint64_t base)
{
	struct scan c = {b, *lo, hi};
	for (;;) {
		int r = scan_ws(&c);
		*lo = c.i;
		if (r != SC_OK)
			return r;
		size_t start = c.i;
		int scanned = b[start] == '{' ? scan_event(p, &c) : SC_DECLINE;
		if (scanned == SC_NEED)
			return SC_NEED;
		if (scanned == SC_DECLINE) {
			c.i = start;
			if ((r = skip_value(&c)) != SC_OK)
				return r;
		}
		size_t end = c.i;
		int t = scan_ws(&c);
		if (t != SC_OK)
			return t;
		if (b[c.i] != ',')
			return SC_DECLINE; /* the array's end, or malformed */
		size_t comma = c.i++;
		if ((t = scan_ws(&c)) != SC_OK)
			return t;
		if (b[c.i] == ']' || b[c.i] == '}')
			return SC_DECLINE; /* [..., ]: for YAJL and the lenient feed */
		if (scanned == SC_OK) {
			p->scanned = 1;
			p->scanned_end = base + end;
			int e = finish_event(p);
			p->scanned = 0;
			if (e < 0 || p->failed)
				return -1;
		} else if (yajl_feed(p, b + start, comma + 1 - start, base + start) < 0 ||
			   lx_release(p) < 0) {
			return -1;
		}
	}
}

/* ---- long strings, cut in the stream ----
 *
 * cut_string cuts a string longer than STR_MAX where YAJL hands it over,
 * but YAJL would hold all of it first (a string read in pieces is kept whole,
 * and read again from its start with each piece), and so would the scanner's
 * buffer.  So before either reads the text, stream_cut drops, in place, what
 * a string has beyond STR_STREAM_MAX bytes, and records where and how much
 * (input_at gives the input's offsets back).  It drops only plain string
 * content (control characters too, counted, unless --strict: see yajl_feed)
 * and whole, valid escapes: the text stays valid JSON exactly where the
 * input was, and an error is found where it would be, at the same byte.
 * It reads all the text YAJL is fed in pieces, but the scanner's units only
 * when one fills the buffer, and reads on after that while inside a string,
 * so the common path does not pay for it.
 *
 * YAJL holds a number whole too, and reads it again from its start with
 * each piece, so stream_cut also stops at the first run of number
 * characters outside strings longer than NUM_MAX, a malformed file: YAJL is
 * fed the text before the run's NUM_MAX + 1st byte (and may find an error
 * in it), then the import fails.  The scanner declines such a unit, so
 * both paths fail on the same bytes. */

static int is_hex(unsigned char ch)
{
	return is_digit(ch) || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
}

/* The length of the whole, valid escape at b[0] == '\\' within n bytes, or 0. */
static size_t escape_len(const unsigned char *b, size_t n)
{
	if (n < 2)
		return 0;
	if (b[1] != 'u')
		return b[1] && strchr("\"\\/bfnrt", b[1]) ? 2 : 0;
	if (n < 6)
		return 0;
	for (size_t i = 2; i < 6; i++)
		if (!is_hex(b[i]))
			return 0;
	return 6;
}

/* Where b[i..hi) first holds a quote or a backslash, or, with ctl, a
 * control character. */
static size_t plain_end(const unsigned char *b, size_t i, size_t hi, int ctl)
{
	for (;;) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		while (hi - i >= 8 && !str_special(b + i))
			i += 8;
#endif
		if (i == hi || b[i] == '"' || b[i] == '\\' || (ctl && b[i] < 0x20))
			return i;
		i++;
	}
}

static void stream_cut_record(struct stream_cutter *c, uint64_t at, uint64_t n)
{
	if (c->ncuts && c->cuts[c->ncuts - 1].at == at) {
		c->cuts[c->ncuts - 1].dropped += n;
		return;
	}
	if (c->ncuts == c->cuts_alloc) {
		c->cuts_alloc = c->cuts_alloc ? 2 * c->cuts_alloc : 8;
		c->cuts = xrealloc(c->cuts, c->cuts_alloc * sizeof(*c->cuts));
	}
	c->cuts[c->ncuts++] = (struct stream_cut){at, n};
}

/* Folds the cuts before offset base, which no offset asked of input_at
 * precedes any more. */
static void stream_cut_fold(struct stream_cutter *c, uint64_t base)
{
	size_t k = 0;
	while (k < c->ncuts && c->cuts[k].at <= base)
		c->dropped_before += c->cuts[k++].dropped;
	if (!k)
		return;
	memmove(c->cuts, c->cuts + k, (c->ncuts - k) * sizeof(*c->cuts));
	c->ncuts -= k;
}

/* Where in b[i..hi) a run of number characters, continuing the cutter's,
 * first grows beyond NUM_MAX, or hi. */
static size_t num_run_end(struct stream_cutter *c, const unsigned char *b, size_t i, size_t hi)
{
	for (; i < hi; i++) {
		if (!is_num_char(b[i]))
			c->num_run = 0;
		else if (++c->num_run > NUM_MAX)
			break;
	}
	return i;
}

/* Cuts the long strings of b[lo..*hi), b[0] being byte `base` of the text
 * left, from where the cutter stopped, or from lo, which starts a unit,
 * when that is further; *hi is lowered by what is dropped.  Stops for
 * good at a number run longer than NUM_MAX (c->bad). */
static void stream_cut(struct cp *p, unsigned char *b, size_t lo, size_t *hi, uint64_t base)
{
	struct stream_cutter *c = &p->sc;
	size_t r = lo, end = *hi;
	if (c->bad)
		return;
	if (c->at >= base + lo) {
		r = (size_t)(c->at - base);
	} else {
		c->in_str = c->esc = 0;
		c->num_run = 0;
	}
	size_t w = r;
	while (r < end) {
		if (!c->in_str) {
			const unsigned char *q = memchr(b + r, '"', end - r);
			size_t to = q ? (size_t)(q - b) + 1 : end, plain = q ? to - 1 : end;
			size_t run_end = num_run_end(c, b, r, plain);
			if (run_end < plain) {
				if (w != r)
					memmove(b + w, b + r, end - r);
				w += run_end - r;
				c->bad = 1;
				c->bad_at = base + w;
				*hi = w + (end - run_end);
				c->at = c->bad_at;
				return;
			}
			if (w != r)
				memmove(b + w, b + r, to - r);
			w += to - r;
			r = to;
			if (q) {
				c->num_run = 0;
				c->in_str = 1;
				c->str_at = base + w - 1;
				c->len = 0;
				c->esc = 0;
			}
			continue;
		}
		size_t n = 1, to = r;
		int drop = 0;
		if (c->esc < 0) {
			c->esc = b[r] == 'u' ? 4 : 0;
		} else if (c->esc > 0 && is_hex(b[r])) {
			c->esc--;
		} else if (b[r] == '"') {
			c->in_str = c->esc = 0;
		} else if (b[r] == '\\') {
			c->esc = 0;
			if (c->len >= STR_STREAM_MAX && (n = escape_len(b + r, end - r))) {
				drop = 1;
			} else {
				c->esc = -1;
				n = 1;
			}
		} else if (c->len < STR_STREAM_MAX) {
			size_t lim =
			    end - r < STR_STREAM_MAX - c->len ? end : r + STR_STREAM_MAX - c->len;
			to = plain_end(b, r, lim, 0);
			c->esc = 0;
		} else {
			to = plain_end(b, r, end, p->opts->strict);
			drop = to > r;
			c->esc = 0;
			for (size_t k = r; !p->opts->strict && k < to; k++)
				if (b[k] < 0x20)
					lx_count_ctl(p, base + w + (k - r), &p->lx.ctl_cut);
		}
		if (to > r)
			n = to - r;
		c->len += n;
		if (drop) {
			stream_cut_record(c, base + w, n);
		} else {
			if (w != r)
				memmove(b + w, b + r, n);
			w += n;
		}
		r += n;
	}
	*hi = w;
	c->at = base + w;
}

/* The first '[' outside strings in b[lo..hi), lo being outside one, or hi:
 * where YAJL stops for the scanner (a string cut there would be read in two
 * pieces, an error after it placed at the second's start). */
static size_t bracket_at(const unsigned char *b, size_t lo, size_t hi)
{
	for (int in_str = 0; lo < hi; lo++) {
		if (in_str) {
			if (b[lo] == '\\')
				lo++;
			else if (b[lo] == '"')
				in_str = 0;
		} else if (b[lo] == '"') {
			in_str = 1;
		} else if (b[lo] == '[') {
			return lo;
		}
	}
	return hi;
}

/* Streams the input through YAJL, and through scan_units while inside a
 * traceEvents array.  Outside one, YAJL is fed up to each '[' in turn, so
 * that the scanner starts right after the array's '[' (YAJL then holds no
 * partial token).  On return p->chunk_base is the text's size. */
static int parse_input(struct cp *p)
{
	size_t cap = 1 << 16, lo = 0, hi = 0;
	unsigned char *b = xmalloc(cap);
	uint64_t base = 0; /* the offset of b[0] in the text stream_cut leaves */
	int scanning = 0, more = 1, eof = 0, rc = -1;
	for (;;) {
		if (more || lo == hi) {
			if (eof) {
				if (lo == hi)
					break;
				scanning = 0; /* a unit cut short: YAJL says how */
			} else {
				if (lo) {
					memmove(b, b + lo, hi - lo);
					base += lo;
					hi -= lo;
					lo = 0;
					stream_cut_fold(&p->sc, base);
				}
				if (hi == cap) {
					/* one unit, or a string YAJL waits for, fills the
					 * buffer: cut first, then grow */
					if (scanning)
						stream_cut(p, b, 0, &hi, base);
					if (hi > cap / 2) {
						if (cap >= SCAN_BUF_MAX)
							scanning = 0;
						else
							b = xrealloc(b, cap *= 2);
					}
				}
				if (hi < cap) {
					ssize_t n = input_read(p->in, b + hi, cap - hi, p->err);
					if (n < 0)
						goto out;
					if (n == 0)
						eof = 1;
					if (base == 0 && hi == 0 && n >= 3 && b[0] == 0xef &&
					    b[1] == 0xbb && b[2] == 0xbf)
						lo = 3; /* a UTF-8 byte order mark */
					hi += (size_t)n;
					if (!scanning || p->sc.in_str)
						stream_cut(p, b, lo, &hi, base);
				}
				/* the scanner reads a unit again from its start: fill
				 * the buffer before it does */
				more = scanning && hi < cap && !eof;
				continue;
			}
		}
		if (scanning) {
			int r = scan_units(p, b, &lo, hi, base);
			if (r < 0)
				goto out;
			if (r == SC_NEED)
				more = 1;
			else
				scanning = 0;
			continue;
		}
		stream_cut(p, b, lo, &hi, base); /* YAJL is fed this text in pieces */
		size_t end = hi;
		int bad = p->sc.bad;
		if (bad) {
			end = (size_t)(p->sc.bad_at - base);
		} else if (p->sc.in_str && !eof && p->sc.str_at >= base + lo) {
			/* YAJL reads a string it has in pieces again from its start
			 * with each piece: an unfinished one waits for its end, and
			 * so does a number or literal right before it, which YAJL
			 * would read in two pieces (and misplace an error in) */
			size_t k = (size_t)(p->sc.str_at - base);
			while (k > lo && is_bare(b[k - 1]))
				k--;
			if (k > lo)
				end = k;
			else if (hi < cap || cap < SCAN_BUF_MAX) {
				more = 1;
				continue;
			}
		}
		if (p->scan && !p->events_depth) {
			size_t k = bracket_at(b, lo, end);
			if (k < end) {
				end = k + 1;
				bad = 0;
			}
		}
		p->events_opened = 0;
		if (yajl_feed(p, b + lo, end - lo, base + lo) < 0)
			goto out;
		if (bad) {
			*p->err = xasprintf(
			    "%s: malformed JSON at byte %llu: a number longer than %d "
			    "bytes",
			    input_path(p->in),
			    (unsigned long long)input_at(p, p->sc.bad_at - NUM_MAX), NUM_MAX);
			goto out;
		}
		lo = end;
		scanning = p->scan && p->events_opened && p->depth == p->events_depth && !p->cap;
	}
	rc = 0;
out:
	p->chunk_base = base + hi;
	free(b);
	return rc;
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
static void note_once(struct cp *p, int d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_once(struct cp *p, int d, const char *fmt, ...)
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
			note_once(p, D_RANK_NAME_DIFFERS,
				  "file name rank %d, distributedInfo rank %d", named, meta);
		return meta;
	}
	if (o->has_rank) {
		note_once(p, D_RANK_GIVEN, "--rank %d", o->rank);
		return o->rank;
	}
	if (says == 1) {
		note_once(p, D_RANK_FROM_NAME, "rank %d from '%s'", named, input_base_name(path));
		return named;
	}
	if (says < 0)
		note_once(p, D_RANK_NAME_AMBIGUOUS, "'%s' says rank %d and rank %d",
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
		string_of(p, tn, name);
	else if (t->device)
		kind_and_id(name, "stream", t->tid);
	else if (t->async)
		sbuf_adds(name, t->tid);
	else
		kind_and_id(name, "thread", t->tid);
	if (t->device == TRACK_ANNOTATIONS) {
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
	return 0;
}

static void process_name(struct cp *p, const struct proc *pr, struct sbuf *name)
{
	int64_t pn = lookup_id(p, &p->proc_names, pr->pid, NULL);
	int64_t pl = lookup_id(p, &p->proc_labels, pr->pid, NULL);
	sbuf_reset(name);
	if (pn) {
		string_of(p, pn, name);
		sbuf_addf(name, " (%s)", pr->pid);
	} else {
		kind_and_id(name, pr->device ? "device" : "process", pr->pid);
	}
	if (pl) {
		struct sbuf lb = SBUF_INIT;
		sbuf_init(&lb);
		sbuf_addf(name, " %s", string_of(p, pl, &lb));
		sbuf_release(&lb);
	}
}

/* Writes the process nodes that hold a used track, and then the rank node
 * when there is one and it holds a process.  The rank's window is that of
 * its processes with spans: one that holds only instants (Kineto's "Record
 * Window End", 2 ms after the last span) does not stretch it. */
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
		struct phase_row r = {.id = pr->id,
				      .parent_id = sc->group,
				      .kind = PHASE_PROCESS,
				      .name_id = intern(p, sc->name.buf, sc->name.len),
				      .source_id = p->source_id,
				      .start_ns = pr->start,
				      .dur_ns = pr->end - pr->start,
				      .child_count = pr->children,
				      .depth = sc->depth};
		if (r.name_id < 0 || store_add_phase(p->st, &r, p->err) < 0)
			return -1;
		kids++;
		int64_t *s0 = pr->spans ? &start : &bare_start, *e0 = pr->spans ? &end : &bare_end;
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
	struct strmap *maps[] = {&p->names,	   &p->track_ids,   &p->proc_names,
				 &p->thread_names, &p->proc_labels, &p->proc_sort,
				 &p->open_b,	   &p->open_async,  &p->metrics};
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		strmap_clear(maps[i]);
	for (int d = 0; d < D_COUNT; d++)
		free(p->diag_example[d]);
	nest_free(p->nest);
	if (p->h)
		yajl_free(p->h);
}

/* The input, of which the text before byte `end` was read, ends inside the
 * traceEvents array: what was read is kept, and where it stopped is
 * counted, after an element (UNCLOSED_ARRAY) or inside one (TRUNCATED),
 * whose duration event, if it says it is one, is dropped. */
static void note_cut(struct cp *p, uint64_t end)
{
	const struct lenient *x = &p->lx;
	uint64_t at = input_at(p, end), line;
	char *err = NULL, where[64] = "";
	if (at && input_line_at(input_path(p->in), at - 1, &line, &err) == 0)
		snprintf(where, sizeof(where), " (line %llu)", (unsigned long long)line);
	free(err);
	if (!x->in_str && p->depth == p->events_depth && memchr("[,]}\"", x->last, 5)) {
		note_once(p, D_UNCLOSED_ARRAY, "input ends at byte %llu%s", (unsigned long long)at,
			  where);
		return;
	}
	const struct sbuf *ph = &p->ev.ph;
	if (p->in_event && ph->len == 1 && strchr("XBb", ph->buf[0]))
		p->cut_dropped = 1;
	note_once(p, D_TRUNCATED, "input ends at byte %llu%s inside %s", (unsigned long long)at,
		  where, p->in_event ? "an event" : "an element");
}

static char *parse_error(struct cp *p, const unsigned char *chunk, size_t len, int at_end)
{
	unsigned char *msg = yajl_get_error(p->h, 0, chunk, len);
	uint64_t at = at_end ? input_at(p, p->chunk_base) : yajl_at(p);
	char *m =
	    xasprintf("%s: %s at byte %llu: %s", input_path(p->in),
		      at_end ? "truncated JSON (input ends inside a value)" : "malformed JSON",
		      (unsigned long long)at, msg ? (const char *)msg : "parse error");
	for (char *c = m; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	for (size_t k = strlen(m); k && m[k - 1] == ' ';)
		m[--k] = '\0';
	yajl_free_error(p->h, msg);
	return m;
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

	p.h = yajl_alloc(&callbacks, NULL, &p);
	yajl_config(p.h, yajl_dont_validate_strings, 1);
	yajl_config(p.h, yajl_allow_trailing_garbage, 0);
	const char *scan = getenv("GRADEML_CHROME_SCAN");
	p.scan = !scan || strcmp(scan, "0");
	if (parse_input(&p) < 0)
		goto out;
	uint64_t end = p.chunk_base;
	if (lx_release(&p) < 0)
		goto out;
	p.chunk_base = end;
	timing_mark("parse");
	if (yajl_complete_parse(p.h) != yajl_status_ok) {
		if (p.failed)
			goto out;
		if (o->strict || !p.events_depth) {
			*err = parse_error(&p, NULL, 0, 1);
			goto out;
		}
		note_cut(&p, end);
	}
	if (p.lx.ctl_fed || p.lx.ctl_cut) {
		uint64_t first = !p.lx.ctl_cut || (p.lx.ctl_fed && p.lx.ctl_fed < p.lx.ctl_cut)
				     ? p.lx.ctl_fed
				     : p.lx.ctl_cut;
		p.diag_example[D_CONTROL_CHAR] =
		    xasprintf("first at byte %llu", (unsigned long long)first - 1);
	}
	if (!p.saw_events) {
		*err = xasprintf("%s: not a Chrome trace: no traceEvents array (byte %llu)",
				 input_path(in), (unsigned long long)input_at(&p, p.chunk_base));
		goto out;
	}
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
		note_once(&p, D_RANK_UNALIGNED, "rank %d anchored %s", rank, anchor);
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
