/*
 * Reading a Chrome trace's JSON text (importers/chrome.c gives the events
 * their meaning), streamed so that memory does not grow with the file or
 * with one event: YAJL's callbacks follow the document, and inside the
 * traceEvents array an event scanner reads the common event shape itself;
 * unless --strict, a lenient feed reads what Perfetto reads and JSON
 * refuses; long strings and numbers are cut in the stream.  Each event,
 * read whole into p->ev (its args as compact JSON), goes to
 * chrome_finish_event; the top-level keys other than traceEvents are kept
 * in p->meta for sources.attrs.  Offsets in messages and diagnostics are
 * the input's.
 *
 * Both top-level forms are accepted: a bare array of events, and an object
 * whose "traceEvents" array may come before or after other keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "importers/chrome_int.h"
#include "importers/importer.h"
#include "importers/input.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/timing.h"
#include "model/util/xalloc.h"

#define META_MAX     (1 << 20)		/* bytes of top-level metadata kept in sources.attrs */
#define ARGS_MAX     (1 << 20)		/* bytes of an event's args kept in its attrs */
#define NUM_MAX	     1024		/* bytes of a number; a longer one is an error */
#define STR_MAX	     ((size_t)64 << 10) /* bytes of a string kept: longer ones are cut */
#define STR_ELLIPSIS "\xe2\x80\xa6"	/* "…", which ends a cut string */
/* Bytes of JSON text kept of a string in the stream, before YAJL or the
 * scanner see it: what lies beyond this decodes beyond STR_MAX (an escape
 * is at most six bytes for one), so only STR_MAX's cut shows. */
#define STR_STREAM_MAX ((size_t)1 << 20)
_Static_assert(STR_STREAM_MAX / 6 > STR_MAX + 4, "a stream cut must not show");

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

void chrome_note_at(struct cp *p, enum diag_code d)
{
	if (p->diag_example[d]) {
		p->diag[d]++;
		return;
	}
	uint64_t at = p->scanned ? input_at(p, p->scanned_end) : yajl_at(p);
	char *ex = xasprintf("event ending near byte %llu", (unsigned long long)at);
	chrome_note(p, d, ex);
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

/* Appends a string, repaired to valid UTF-8 with no NUL. */
static void add_clean(struct cp *p, struct sbuf *out, const unsigned char *s, size_t n)
{
	if (text_utf8_valid((const char *)s, n)) {
		sbuf_add(out, s, n);
		return;
	}
	if (text_utf8_repair(out, (const char *)s, n))
		chrome_note_at(p, D_BAD_UTF8);
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
	e->has_corr = e->corr_xla = e->has_step = e->has_sort_index = 0;
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
	if (klen > 14 || klen < 4) {
		/* none of the indexed keys */
	} else if (KEY_IS("correlation")) {
		if (!text_parse_int64(s, n, &v)) {
			e->corr = v;
			e->has_corr = 1;
			e->corr_xla = 0;
		}
	} else if (KEY_IS("correlation_id")) {
		/* XLA's: a string, on the CUDA call and on the work it launched */
		if (!e->has_corr && !text_parse_int64(s, n, &v)) {
			e->corr = v;
			e->has_corr = e->corr_xla = 1;
		}
	} else if (KEY_IS("step_num")) {
		/* XLA's StepTraceAnnotation: a string or a number */
		if (!text_parse_int64(s, n, &v)) {
			e->step_num = v;
			e->has_step = 1;
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
		chrome_note(p, D_META_SKIPPED, p->meta_key.buf);
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
			chrome_note_at(p, D_BIG_INTEGER);
			sbuf_add_json_string(p->cap_buf, s, n);
		} else {
			sbuf_add(p->cap_buf, s, n);
		}
		cap_check(p);
	}
	if ((p->cap == CAP_ARGS || p->cap == CAP_ARGS_FULL) && p->depth == p->cap_depth)
		args_scalar(p, p->key.buf, p->key.len, s, n, kind == 's', kind == 'n');
}

/* ---- YAJL callbacks ---- */

/* A value of a top-level key other than traceEvents starts: writes its key
 * to the metadata kept for sources.attrs, or returns 0 when the value is to
 * be skipped because the metadata is already at its cap. */
static int meta_begin_value(struct cp *p)
{
	if (p->meta.len > META_MAX) {
		chrome_note(p, D_META_SKIPPED, p->key.buf);
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
		chrome_note_at(p, D_NOT_OBJECT);
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
	chrome_note(p, D_LONG_STRING, ex);
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
			chrome_note_at(p, D_NOT_OBJECT);
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
		if (chrome_finish_event(p) < 0)
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
 * chrome_finish_event; any other element goes to YAJL, whole and with its comma.
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
 * input that ends inside the traceEvents array (see note_cut).  Unless
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
			int e = chrome_finish_event(p);
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
		chrome_note_once(p, D_UNCLOSED_ARRAY, "input ends at byte %llu%s",
				 (unsigned long long)at, where);
		return;
	}
	const struct sbuf *ph = &p->ev.ph;
	if (p->in_event && ph->len == 1 && strchr("XBb", ph->buf[0]))
		p->cut_dropped = 1;
	chrome_note_once(p, D_TRUNCATED, "input ends at byte %llu%s inside %s",
			 (unsigned long long)at, where, p->in_event ? "an event" : "an element");
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

/* Reads the whole input through YAJL and the scanner; an input that ends
 * inside the traceEvents array is kept to its last whole event unless
 * --strict (note_cut). */
int chrome_json_read(struct cp *p)
{
	p->h = yajl_alloc(&callbacks, NULL, p);
	yajl_config(p->h, yajl_dont_validate_strings, 1);
	yajl_config(p->h, yajl_allow_trailing_garbage, 0);
	const char *scan = getenv("GRADEML_CHROME_SCAN");
	p->scan = !scan || strcmp(scan, "0");
	if (parse_input(p) < 0)
		return -1;
	uint64_t end = p->chunk_base;
	if (lx_release(p) < 0)
		return -1;
	p->chunk_base = end;
	timing_mark("parse");
	if (yajl_complete_parse(p->h) != yajl_status_ok) {
		if (p->failed)
			return -1;
		if (p->opts->strict || !p->events_depth) {
			*p->err = parse_error(p, NULL, 0, 1);
			return -1;
		}
		note_cut(p, end);
	}
	if (p->lx.ctl_fed || p->lx.ctl_cut) {
		uint64_t first = !p->lx.ctl_cut || (p->lx.ctl_fed && p->lx.ctl_fed < p->lx.ctl_cut)
				     ? p->lx.ctl_fed
				     : p->lx.ctl_cut;
		p->diag_example[D_CONTROL_CHAR] =
		    xasprintf("first at byte %llu", (unsigned long long)first - 1);
	}
	if (!p->saw_events) {
		*p->err =
		    xasprintf("%s: not a Chrome trace: no traceEvents array (byte %llu)",
			      input_path(p->in), (unsigned long long)input_at(p, p->chunk_base));
		return -1;
	}
	return 0;
}
