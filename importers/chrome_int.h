/*
 * What importers/chrome.c and importers/chrome_json.c share: the import's
 * state (struct cp: where the JSON reader stands and what it captures, the
 * event it fills, and the tracks, open spans, tables and diagnostics the
 * events make), the diagnostic codes, and the few functions each calls of
 * the other.  chrome_json.c reads the text and hands each event, read
 * whole, to chrome_finish_event; chrome.c gives it its meaning.  Internal
 * to the two; callers use chrome.h.
 */
#ifndef GRADEML_CHROME_INT_H
#define GRADEML_CHROME_INT_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "importers/diag.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"

struct import_opts;
struct input;
struct nest;
struct open_stack;
struct store;
struct track;

#define MAX_DEPTH  256
#define MAX_SERIES 64

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
	X(UNUSED_METADATA, "process or thread metadata skipped: 65536 of its kind (names, labels," \
			   " sort indexes) were kept already for processes and threads without"    \
			   " events so far")                                                       \
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
		     " dropped")                                                                   \
	X(NO_DEVICE_WORK, "tracks named or categorised like a device's, but no device work"        \
			  " recognised in the trace: their events read as host work")

DIAG_CODES(DIAG_LIST);

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
	int corr_xla;	  /* corr is XLA's args.correlation_id, not Kineto's correlation */
	int64_t step_num; /* XLA's StepTraceAnnotation: args.step_num, an integer */
	int has_step;
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
	int looks;	/* the category looks like a device's (devtrack_category) */
	int64_t cat_id; /* interned; 0: not yet */
};

/* A track recently found by track_get; tracks are never removed. */
#define TRACK_MEMO 4
struct track_memo {
	uint32_t track;
	int used;
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

/* One trace's import: the reader's state, the event it fills, the tables
 * the events make. */
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
	int scanned;	      /* chrome_finish_event runs for a scanned event ... */
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
	struct strmap track_pids; /* pid -> 1, of every track */
	/* "pid" or "pid\x1ftid" -> a metadata value: an interned string's id,
	 * or -(1 + i) for meta_text[i]; proc_sort's values are sort indexes */
	struct strmap proc_names, thread_names, proc_labels, proc_sort;
	char **meta_text; /* metadata values kept as text, until META_TEXT_MAX */
	size_t nmeta_text, meta_text_alloc, meta_bytes;
	struct sbuf meta_value;
	struct strmap open_b;	  /* track index -> index into opens */
	struct strmap open_async; /* cat\x1fid\x1fscope -> index into opens */
	struct open_stack *opens;
	size_t nopens, opens_alloc;
	struct strmap metrics; /* pid\x1fname\x1fkey -> metric id */
	/* device tracks by name (importers/devtrack.h): whether a process
	 * was named like a device's or XLA's host plane; the pids with a
	 * "Stream #" thread; the last pid/tid classified and its class
	 * (line_valid 0: none) */
	int device_names;
	int xla_planes; /* a process was named like an XLA device plane */
	struct strmap stream_pids;
	struct sbuf line_pid, line_tid, line_name;
	int line_class, line_valid;
	int cat_looks; /* the event's category looks like a device's */
	int64_t source_id;
	int64_t min_ts, max_ts;
	int any_ts;
	int64_t spans, samples;
	/* pid "global" holds more than Kineto's "Record Window End": it is not
	 * the profiler's bookkeeping (chrome.c) */
	int global_work;
	int64_t diag[D_COUNT];
	char *diag_example[D_COUNT];
};

/* chrome.c */

/* Counts diagnostic d; the first example is kept (NULL: none). */
void chrome_note(struct cp *p, enum diag_code d, const char *example);
/* Counts diagnostic d once with the example fmt. */
void chrome_note_once(struct cp *p, int d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The event read whole into p->ev: stored, or counted in a diagnostic;
 * -1 when the import fails (*p->err set). */
int chrome_finish_event(struct cp *p);

/* chrome_json.c */

/* Counts diagnostic d with the byte near which the event being read ends
 * as its example. */
void chrome_note_at(struct cp *p, enum diag_code d);
/* Reads the whole input, each event to chrome_finish_event and the
 * top-level keys other than traceEvents into p->meta; 0, or -1 with
 * *p->err set. */
int chrome_json_read(struct cp *p);

#endif
