/*
 * trace.db: the SQLite file every importer writes and every view reads.
 *
 * The store owns the connection, the schema (version STORE_SCHEMA_VERSION in
 * PRAGMA user_version, application_id 'GRML'), and the prepared statements
 * of the write path.  An import is one transaction: store_begin, any number
 * of store_add_*, then store_commit, or store_rollback on any error, which
 * leaves the file exactly as it was (a file the import created is removed).
 *
 * A new trace.db (or one of 0 bytes) is built as a hidden temp file beside
 * its path ("<dir>/.<base>.XXXXXX") and appears at its path only when the
 * first commit succeeds, so a killed import never leaves a broken file
 * there and two imports racing to create one file cannot destroy each
 * other's work.  An existing trace.db is written in WAL mode for the
 * transaction, so its own pages never change before the commit: a killed
 * import leaves it reading as before, copied alone or not.  store.c says
 * why and what that costs.
 *
 * Times are int64 nanoseconds since the Unix epoch.  Strings (names,
 * categories) are interned in the `strings` table; phases refer to them by id.
 * The schema is documented in man/grademl-tui.1 (section TRACE.DB).
 */
#ifndef GRADEML_STORE_H
#define GRADEML_STORE_H

#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>

#define STORE_SCHEMA_VERSION 7
#define STORE_APPLICATION_ID 0x47524d4c /* 'GRML' */

struct store;
struct sbuf;

enum store_mode { STORE_READ, STORE_WRITE };

/* Phase kinds: the levels of the execution model (table phase_kinds).  New
 * kinds go at the end: the ids are stored in existing files.
 *
 * PROFILER marks the profiler's bookkeeping: records a profiler writes
 * about its own recording, not work that ran (Kineto's trace span and the
 * process and thread nodes that hold it; importers/chrome.c says which).
 * It is the one mark every view and analysis reads (store_is_bookkeeping):
 * such a phase is never selected by default, is listed after its siblings,
 * and counts in no flame width, critical path or share of its parent. */
#define PHASE_KIND_LIST(X)                                                                         \
	X(WORKFLOW, "workflow")                                                                    \
	X(STEP, "step")                                                                            \
	X(RANK, "rank")                                                                            \
	X(PROCESS, "process")                                                                      \
	X(THREAD, "thread")                                                                        \
	X(STREAM, "stream")                                                                        \
	X(PROFILER_STEP, "profiler_step")                                                          \
	X(OPERATOR, "operator")                                                                    \
	X(ANNOTATION, "annotation")                                                                \
	X(RUNTIME, "runtime")                                                                      \
	X(KERNEL, "kernel")                                                                        \
	X(MEMCPY, "memcpy")                                                                        \
	X(MEMSET, "memset")                                                                        \
	X(GPU_ANNOTATION, "gpu_annotation")                                                        \
	X(ASYNC, "async")                                                                          \
	X(SPAN, "span")                                                                            \
	X(APPLICATION, "application")                                                              \
	X(JOB, "job")                                                                              \
	X(STAGE, "stage")                                                                          \
	X(TASK, "task")                                                                            \
	X(PROFILER, "profiler")

enum phase_kind {
	PHASE_NONE = 0,
#define X(id, name) PHASE_##id,
	PHASE_KIND_LIST(X)
#undef X
	    PHASE_KIND_COUNT
};

const char *store_kind_name(int kind);
/* Whether a phase of this kind is the profiler's bookkeeping (PROFILER above). */
static inline int store_is_bookkeeping(int kind)
{
	return kind == PHASE_PROFILER;
}

/* Edge kinds (edges.kind). */
enum edge_kind {
	EDGE_FLOW = 1,
	EDGE_LAUNCH = 2,
	EDGE_FWDBWD = 3,
	EDGE_STAGE_PARENT = 4,
	EDGE_STEP_ORDER = 5 /* from a step to a step that depends on it */
};

/* "flow", "launch", "fwd-bwd", "stage-parent", "step-order"; "edge" else. */
const char *store_edge_kind_name(int kind);

struct phase_row {
	int64_t id;	   /* from store_reserve_phase_id */
	int64_t parent_id; /* 0: none (a workflow) */
	int kind;
	int64_t name_id, cat_id;
	int64_t track_id; /* 0: none */
	int64_t source_id;
	int64_t start_ns, dur_ns;
	int64_t self_ns;   /* host time not covered by children on the same track */
	int64_t device_ns; /* device time in its subtree; store_commit makes it the union */
	int64_t child_count;
	int depth;
	const char *attrs; /* compact JSON object text, or NULL */
	size_t attrs_len;
};

struct source_row {
	const char *path, *format, *compression, *anchor, *host;
	int64_t size_bytes;
	int64_t time_offset_ns;
	int rank;	   /* -1: none */
	const char *attrs; /* JSON text of the file's metadata, or NULL */
};

struct track_row {
	int64_t source_id;
	const char *kind;      /* "thread", "stream", "annotation", "async", "counter" */
	const char *pid, *tid; /* as written in the trace */
	const char *name;
	const char *host;
	int rank; /* -1: none */
	int64_t sort_index;
	int64_t phase_id; /* the track's node in the phase tree, or 0 */
};

struct metric_row {
	int64_t source_id;
	const char *host, *resource, *name, *unit;
	const char *value_kind; /* "instant", "mean", "counter" */
	double capacity;	/* 0: unknown */
};

/* The path of a private trace.db in memory (fuzzing, tests): nothing on
 * disk, opened empty, written under SQLite's own rollback, gone at
 * store_close. */
#define STORE_MEMORY ":memory:"

/* Opening: STORE_READ reads only, after store_tidy.  STORE_WRITE on a
 * missing path or an empty file (0 bytes) builds the new file aside (see
 * above) and begins its first transaction with the schema in it; it first
 * removes the hidden files of killed imports into path (those whose flock
 * it can take).  What store_check_path or store_check_db refuses (a file
 * that is not a SQLite database, a database that is not a trace.db) is an
 * error and is left untouched. */
int store_open(const char *path, enum store_mode mode, struct store **out, char **err);
/* What may be opened as a trace.db, the same for every command (store_open
 * and query_open apply both checks).  store_check_path: 1 when path is a
 * regular file (through symbolic links; its stat in *sb unless sb is NULL),
 * 0 when it does not exist, -1 with *err for anything else ("x: is a FIFO,
 * not a trace.db": a directory, FIFO, socket or device), judged by stat(2)
 * alone, so that nothing waits on it.  From the first store_open or
 * store_tidy on, every file SQLite opens in this process is opened without
 * waiting and refused when it is a FIFO or socket, whatever was at its path
 * when it was checked.  store_check_db: db, open on path, has the
 * application id 'GRML', a schema version from 1 to STORE_SCHEMA_VERSION
 * (a future, zero or negative one is refused, never rewritten) and the
 * tables of schema v1; else -1 with *err naming path and what is wrong. */
int store_check_path(const char *path, struct stat *sb, char **err);
int store_check_db(sqlite3 *db, const char *path, char **err);
/* A trace.db that a killed import (or a reader open at the end of one) left
 * in WAL mode goes back to rollback mode, its -wal and -shm removed; the
 * -wal's uncommitted frames are dropped.  Only when it is a regular file,
 * this process may write it, no other connection has it open, and it is a
 * trace.db; else nothing changes, and SQLite reads it in WAL mode just as
 * well. */
void store_tidy(const char *path);

/* Signals (async-signal-safe, for handlers): store_interrupt removes the
 * hidden files this process is building at once and makes every statement
 * of an open transaction fail from then on ("interrupted"), so the import
 * rolls back and trace.db stays as it was.  store_interrupted: the first
 * signal given, or 0. */
void store_interrupt(int sig);
int store_interrupted(void);
/* 1 from the moment store_commit runs COMMIT, unless it fails: a signal
 * then comes too late to roll back, and the import ends by itself. */
int store_committing(void);
void store_close(struct store *st);
sqlite3 *store_db(struct store *st);
const char *store_path(const struct store *st);
/* Phase id's name, its first cut characters (0: all of it), or "?" when it
 * has none; the caller frees it. */
char *store_phase_name(struct store *st, int64_t id, int cut);

/* store_commit publishes a new file at its path; when another process
 * created that path (or filled the empty file) meanwhile it fails ("created
 * by another import meanwhile"), leaves that file alone, and the caller
 * rolls back.  The rollback of a new file deletes it and leaves the store
 * closed: a later store_begin fails.  Once a transaction added device work,
 * store_commit sets the device_ns of every phase of the file to the union
 * of the device work beneath it (devunion.h), whatever the rows held. */
int store_begin(struct store *st, char **err);
/* In a bulk load into an empty file, builds the indexes (and the window
 * refreshes that waited for them) now rather than at commit, for a caller
 * that reads the tree by parent before committing; else nothing. */
int store_index_now(struct store *st, char **err);
int store_commit(struct store *st, char **err);
void store_rollback(struct store *st);

/* Write path: every call below is valid only between begin and commit.  They
 * return -1 with *err set on a SQLite failure (disk full, I/O error). */
int64_t store_intern(struct store *st, const char *s, size_t n, char **err);
int64_t store_reserve_phase_id(struct store *st);
/* The id the next store_reserve_phase_id will give, reserving nothing. */
int64_t store_next_phase_id(const struct store *st);
int store_add_phase(struct store *st, const struct phase_row *p, char **err);
/* Adds n phases, STORE_PHASE_BATCH to a statement where it can. */
#define STORE_PHASE_BATCH 16
int store_add_phases(struct store *st, const struct phase_row *p, size_t n, char **err);
int store_update_phase_window(struct store *st, int64_t id, int64_t start_ns, int64_t dur_ns,
			      int64_t child_count, char **err);
int store_add_launch_stats(struct store *st, int64_t id, int64_t kernels, int64_t device_ns,
			   char **err);
int64_t store_add_source(struct store *st, const struct source_row *s, char **err);
int store_finish_source(struct store *st, int64_t source_id, int64_t phases, int64_t events,
			int64_t samples, int64_t dropped, char **err);
int64_t store_add_track(struct store *st, const struct track_row *t, char **err);
int store_set_track_spans(struct store *st, int64_t track_id, int64_t spans, char **err);
int store_add_event(struct store *st, int64_t source_id, int64_t track_id, int64_t t_ns,
		    int64_t name_id, const char *level, int64_t phase_id, const char *attrs,
		    size_t attrs_len, char **err);
struct event_row {
	int64_t source_id, track_id, t_ns, name_id, phase_id; /* track_id, phase_id 0: none */
	const char *level;				      /* NULL: none */
	const char *attrs;				      /* JSON, NULL: none */
	size_t attrs_len;
};
/* Adds n events in order (their ids follow it), STORE_EVENT_BATCH to a
 * statement where it can. */
#define STORE_EVENT_BATCH 16
int store_add_events(struct store *st, const struct event_row *e, size_t n, char **err);
int64_t store_add_metric(struct store *st, const struct metric_row *m, char **err);
/* Host aliases: until the transaction ends (commit or rollback), every host
 * this store writes (sources, tracks, metrics) that is alias is written as
 * canonical.  -1 when alias already names another host. */
int store_add_host_alias(struct store *st, const char *alias, const char *canonical);
/* host's canonical name (host itself when it is no alias; NULL stays NULL). */
const char *store_host(const struct store *st, const char *host);
int store_add_sample(struct store *st, int64_t metric_id, int64_t t_ns, double value, char **err);
/* Adds n samples, STORE_SAMPLE_BATCH to a statement where it can. */
#define STORE_SAMPLE_BATCH 64
struct sample_row {
	int64_t metric_id, t_ns;
	double value;
};
int store_add_samples(struct store *st, const struct sample_row *v, size_t n, char **err);
int store_add_diagnostic(struct store *st, int64_t source_id, const char *code, int64_t count,
			 const char *message, const char *example, char **err);
/* Fixes the time anchor of a source once its file is read: anchor, offset,
 * rank (-1: none) and attrs (JSON text or NULL) replace what add_source set;
 * host fills in only a source that has none (--host wins), NULL changes
 * nothing; the source's metrics without a host take the source's.  An
 * unknown source_id is an error. */
int store_set_source_anchor(struct store *st, int64_t source_id, const char *anchor,
			    int64_t offset_ns, int rank, const char *host, const char *attrs_json,
			    char **err);
/* Detaches a track from the phase tree (tracks.phase_id = NULL), for a track
 * whose records were all dropped.  An unknown track_id is an error. */
int store_clear_track_node(struct store *st, int64_t track_id, char **err);
/* Adds offset_ns to the time of every sample of the source's metrics. */
int store_shift_samples(struct store *st, int64_t source_id, int64_t offset_ns, char **err);
/* Sets the window (start, duration, child count) of a structural node to
 * cover its children, then does the same for each ancestor.  Children that
 * are empty structural nodes (workflow, step, rank or process with no
 * children) have no time of their own and are left out of the window.  A
 * node whose attrs declare its own window, {"manifest":{"start":NS,
 * "end":NS}} (a step of a workflow manifest or a root OTLP span), or that
 * is no structural node (an OTLP span a trace was imported under: see
 * store_declared_window), keeps at least that window, children or not, and
 * is never an empty node.  In a
 * bulk load into an empty file, which has no index on parent_id until
 * store_commit, the refresh is done by store_commit once it has indexed. */
int store_refresh_window(struct store *st, int64_t node_id, char **err);
/* The window a node declares: its attrs' ({"manifest":{"start":NS,
 * "end":NS}}, 1), or, for a phase that is no structural node (a span, an
 * operator: workflow .. stream are structural), its own recorded window
 * (2), which a refresh widens to its children but never shrinks and whose
 * self time it keeps.  *start and *end set; 0 when it declares none, -1 on
 * error. */
int store_declared_window(struct store *st, int64_t node_id, int64_t *start, int64_t *end,
			  char **err);
/* The SQL of the member at JSON path p (a literal, "$.host") of the attrs
 * column col ("p.attrs"): NULL where the row's attrs are NULL or not JSON,
 * so that one malformed value (a damaged or hand-made trace.db) reads as a
 * row without that member instead of failing the statement ("malformed
 * JSON"). */
#define STORE_ATTR_SQL(col, p)                                                                     \
	"(CASE WHEN json_valid(" col ") THEN json_extract(" col ", '" p "') END)"

/* Runs one statement with no results (DDL, fix-ups); for model/ modules. */
int store_exec(struct store *st, const char *sql, char **err);

/* Finds a phase by kind (0: any, the first made) and name under parent; 0
 * when none. */
int64_t store_find_child(struct store *st, int64_t parent_id, int kind, const char *name,
			 char **err);
/* The text of strings row id, put in out (reset first; the caller owns out,
 * initialised); returns out->buf, or NULL with *err set when there is no such
 * row or the read fails. */
const char *store_string(struct store *st, int64_t id, struct sbuf *out, char **err);

#endif
