/*
 * The trace.db store: opening and validating the file, creating schema v1,
 * the import transaction, and the prepared statements of the write path.
 * Readers (model.c, summary.c) prepare their own statements on store_db().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/schema.sql.h"
#include "model/store.h"
#include "model/xalloc.h"

enum stmt_id {
	S_INTERN_GET,
	S_INTERN_PUT,
	S_PHASE,
	S_PHASE_WINDOW,
	S_LAUNCH_STATS,
	S_SOURCE,
	S_SOURCE_FINISH,
	S_TRACK,
	S_TRACK_SPANS,
	S_EDGE,
	S_EVENT,
	S_METRIC,
	S_SAMPLE,
	S_DIAG,
	S_FIND_CHILD,
	S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
	[S_INTERN_GET] = "SELECT id FROM strings WHERE text = ?1",
	[S_INTERN_PUT] = "INSERT INTO strings(text) VALUES (?1)",
	[S_PHASE] = "INSERT INTO phases(id, parent_id, kind, name_id, cat_id, track_id, source_id,"
		    " start_ns, dur_ns, self_ns, device_ns, child_count, depth, attrs)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	[S_PHASE_WINDOW] = "UPDATE phases SET start_ns = ?2, dur_ns = ?3, self_ns = 0,"
			   " child_count = ?4 WHERE id = ?1",
	[S_LAUNCH_STATS] = "UPDATE phases SET child_count = child_count + ?2,"
			   " device_ns = device_ns + ?3 WHERE id = ?1",
	[S_SOURCE] = "INSERT INTO sources(path, format, compression, size_bytes, anchor,"
		     " time_offset_ns, host, rank, imported_at, attrs)"
		     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[S_SOURCE_FINISH] = "UPDATE sources SET phases = ?2, events = ?3, samples = ?4,"
			    " dropped = ?5 WHERE id = ?1",
	[S_TRACK] = "INSERT INTO tracks(source_id, kind, pid, tid, name, host, rank, sort_index,"
		    " phase_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[S_TRACK_SPANS] = "UPDATE tracks SET spans = ?2 WHERE id = ?1",
	[S_EDGE] = "INSERT INTO edges(src, dst, kind) VALUES (?1, ?2, ?3)",
	[S_EVENT] = "INSERT INTO events(source_id, track_id, t_ns, name_id, level, phase_id, attrs)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[S_METRIC] = "INSERT INTO metrics(source_id, host, resource, name, unit, value_kind,"
		     " capacity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[S_SAMPLE] = "INSERT INTO samples(metric_id, t_ns, value) VALUES (?1, ?2, ?3)",
	[S_DIAG] = "INSERT INTO diagnostics(source_id, code, count, message, example)"
		   " VALUES (?1, ?2, ?3, ?4, ?5)",
	[S_FIND_CHILD] = "SELECT p.id FROM phases p JOIN strings s ON s.id = p.name_id"
			 " WHERE p.parent_id IS ?1 AND p.kind = ?2 AND s.text = ?3 LIMIT 1",
};

struct store {
	sqlite3 *db;
	char *path;
	enum store_mode mode;
	int created; /* the file did not exist before this open */
	int in_txn;
	int64_t next_phase_id;
	int indexes_deferred; /* bulk load into an empty file: index at commit */
	sqlite3_stmt *stmt[S_COUNT];
};

/* Indexes built once after a bulk load rather than row by row. */
static const char drop_indexes_sql[] =
	"DROP INDEX phases_parent; DROP INDEX edges_src; DROP INDEX edges_dst;"
	" DROP INDEX samples_metric";
static const char create_indexes_sql[] =
	"CREATE INDEX phases_parent ON phases(parent_id, start_ns);"
	" CREATE INDEX edges_src ON edges(src); CREATE INDEX edges_dst ON edges(dst);"
	" CREATE INDEX samples_metric ON samples(metric_id, t_ns)";

static const char *const kind_names[PHASE_KIND_COUNT] = {
	[PHASE_NONE] = "none",
#define X(id, name) [PHASE_##id] = name,
	PHASE_KIND_LIST(X)
#undef X
};

const char *phase_kind_name(int kind)
{
	if (kind <= 0 || kind >= PHASE_KIND_COUNT)
		return "none";
	return kind_names[kind];
}

static int db_error(struct store *st, char **err, const char *what)
{
	*err = xasprintf("%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
	return -1;
}

int store_exec(struct store *st, const char *sql, char **err)
{
	char *msg = NULL;
	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		*err = xasprintf("%s: %s", st->path, msg ? msg : sqlite3_errmsg(st->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int pragma_int(struct store *st, const char *sql, int *out, char **err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		goto bad;
	int rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_finalize(s);
		goto bad;
	}
	*out = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_finalize(s);
	return 0;
bad:
	if (sqlite3_errcode(st->db) == SQLITE_NOTADB)
		*err = xasprintf("%s: not a trace.db (not an SQLite database)", st->path);
	else
		*err = xasprintf("%s: cannot read: %s", st->path, sqlite3_errmsg(st->db));
	return -1;
}

/* Checks that an existing file is a trace.db this version understands. */
static int check_file(struct store *st, char **err)
{
	int app, ver, tables;
	if (pragma_int(st, "PRAGMA application_id", &app, err) < 0 ||
	    pragma_int(st, "PRAGMA user_version", &ver, err) < 0 ||
	    pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables, err) < 0)
		return -1;
	if (tables == 0 && app == 0 && st->mode == STORE_WRITE)
		return 1; /* an empty database: create the schema */
	if (app != STORE_APPLICATION_ID) {
		*err = xasprintf("%s: not a trace.db (an SQLite database of another program)",
				 st->path);
		return -1;
	}
	if (ver > STORE_SCHEMA_VERSION) {
		*err = xasprintf("%s: schema version %d is newer than this grademl-tui (%d)",
				 st->path, ver, STORE_SCHEMA_VERSION);
		return -1;
	}
	return 0;
}

static int create_schema(struct store *st, char **err)
{
	if (store_exec(st, store_schema_sql, err) < 0)
		return -1;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "INSERT INTO phase_kinds(id, name) VALUES (?1, ?2)", -1,
			       &s, NULL) != SQLITE_OK)
		return db_error(st, err, "cannot create schema");
	for (int k = 1; k < PHASE_KIND_COUNT; k++) {
		sqlite3_bind_int(s, 1, k);
		sqlite3_bind_text(s, 2, kind_names[k], -1, SQLITE_STATIC);
		sqlite3_step(s);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	char *sql = xasprintf("PRAGMA application_id = %d; PRAGMA user_version = %d;"
			      "INSERT INTO meta VALUES ('schema_version', '%d'),"
			      " ('tool_version', '%s'), ('created_at', strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ')),"
			      " ('updated_at', strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ'))",
			      STORE_APPLICATION_ID, STORE_SCHEMA_VERSION, STORE_SCHEMA_VERSION,
			      GRADEML_VERSION);
	int rc = store_exec(st, sql, err);
	free(sql);
	return rc;
}

int store_open(const char *path, enum store_mode mode, struct store **out, char **err)
{
	struct store *st = xcalloc(1, sizeof(*st));
	st->path = xstrdup(path);
	st->mode = mode;
	struct stat sb;
	int exists = stat(path, &sb) == 0;
	if (exists && S_ISDIR(sb.st_mode)) {
		*err = xasprintf("%s: is a directory, not a trace.db", path);
		goto fail;
	}
	if (!exists && mode == STORE_READ) {
		*err = xasprintf("%s: cannot open: %s", path, strerror(ENOENT));
		goto fail;
	}
	st->created = !exists;
	int flags = mode == STORE_READ ? SQLITE_OPEN_READONLY
				       : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot open: %s", path,
				 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 0);
	sqlite3_busy_timeout(st->db, 2000);
	int fresh = check_file(st, err);
	if (fresh < 0)
		goto fail;
	if (mode == STORE_WRITE) {
		if (store_exec(st, "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384;"
				   " PRAGMA temp_store = FILE",
			       err) < 0)
			goto fail;
		if (fresh) {
			/* schema creation belongs to the first import's transaction */
			/* a failed first import deletes the file: no journal needed */
			if (store_exec(st, "PRAGMA page_size = 8192; PRAGMA journal_mode = OFF;"
					   " BEGIN IMMEDIATE", err) < 0 ||
			    create_schema(st, err) < 0)
				goto fail;
			st->in_txn = 1;
		}
	}
	*out = st;
	return 0;
fail:
	store_rollback(st);
	store_close(st);
	return -1;
}

static void finalize_all(struct store *st)
{
	for (int i = 0; i < S_COUNT; i++) {
		sqlite3_finalize(st->stmt[i]);
		st->stmt[i] = NULL;
	}
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->in_txn)
		store_rollback(st);
	finalize_all(st);
	if (st->db)
		sqlite3_close(st->db);
	free(st->path);
	free(st);
}

sqlite3 *store_db(struct store *st)
{
	return st->db;
}

const char *store_path(const struct store *st)
{
	return st->path;
}

static sqlite3_stmt *stmt(struct store *st, enum stmt_id id, char **err)
{
	if (!st->stmt[id] &&
	    sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id],
			       NULL) != SQLITE_OK) {
		db_error(st, err, "cannot prepare statement");
		return NULL;
	}
	return st->stmt[id];
}

/* Steps a write statement to completion and resets it. */
static int run(struct store *st, sqlite3_stmt *s, char **err)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_error(st, err, "write failed");
	return 0;
}

static int64_t max_phase_id(struct store *st)
{
	sqlite3_stmt *s;
	int64_t id = 0;
	if (sqlite3_prepare_v2(st->db, "SELECT max(id) FROM phases", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			id = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	return id;
}

int store_begin(struct store *st, char **err)
{
	if (st->mode != STORE_WRITE) {
		*err = xasprintf("%s: opened read-only", st->path);
		return -1;
	}
	if (!st->in_txn) {
		if (store_exec(st, "BEGIN IMMEDIATE", err) < 0)
			return -1;
		st->in_txn = 1;
	}
	st->next_phase_id = max_phase_id(st) + 1;
	if (st->next_phase_id == 1 && !st->indexes_deferred) {
		finalize_all(st);
		if (store_exec(st, drop_indexes_sql, err) < 0)
			return -1;
		st->indexes_deferred = 1;
	}
	return 0;
}

int store_commit(struct store *st, char **err)
{
	if (st->indexes_deferred) {
		finalize_all(st);
		if (store_exec(st, create_indexes_sql, err) < 0)
			return -1;
		st->indexes_deferred = 0;
	}
	if (store_exec(st, "INSERT OR REPLACE INTO meta VALUES ('updated_at',"
			   " strftime('%Y-%m-%dT%H:%M:%SZ')); COMMIT",
		       err) < 0)
		return -1;
	st->in_txn = 0;
	if (st->created) {
		/* the first import ran without a journal; later ones must have one */
		st->created = 0;
		if (store_exec(st, "PRAGMA journal_mode = DELETE", err) < 0)
			return -1;
	}
	return 0;
}

void store_rollback(struct store *st)
{
	if (st->db && st->in_txn) {
		finalize_all(st);
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	st->in_txn = 0;
	st->indexes_deferred = 0;
	if (st->created && st->db) {
		/* the import created the file: leave nothing behind */
		finalize_all(st);
		sqlite3_close(st->db);
		st->db = NULL;
		unlink(st->path);
		char *j = xasprintf("%s-journal", st->path);
		unlink(j);
		free(j);
		st->created = 0;
	}
}

int64_t store_intern(struct store *st, const char *str, size_t n, char **err)
{
	sqlite3_stmt *g = stmt(st, S_INTERN_GET, err);
	if (!g)
		return -1;
	sqlite3_bind_text(g, 1, str, (int)n, SQLITE_STATIC);
	int rc = sqlite3_step(g);
	int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(g, 0) : 0;
	sqlite3_reset(g);
	if (rc == SQLITE_ROW)
		return id;
	if (rc != SQLITE_DONE)
		return db_error(st, err, "cannot read strings");
	sqlite3_stmt *p = stmt(st, S_INTERN_PUT, err);
	if (!p)
		return -1;
	sqlite3_bind_text(p, 1, str, (int)n, SQLITE_STATIC);
	if (run(st, p, err) < 0)
		return -1;
	return sqlite3_last_insert_rowid(st->db);
}

int64_t store_reserve_phase_id(struct store *st)
{
	return st->next_phase_id++;
}

static void bind_id_or_null(sqlite3_stmt *s, int col, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(s, col, v);
	else
		sqlite3_bind_null(s, col);
}

static void bind_text_or_null(sqlite3_stmt *s, int col, const char *v, size_t n)
{
	if (v)
		sqlite3_bind_text(s, col, v, (int)n, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, col);
}

int store_add_phase(struct store *st, const struct phase_row *p, char **err)
{
	sqlite3_stmt *s = stmt(st, S_PHASE, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, p->id);
	bind_id_or_null(s, 2, p->parent_id);
	sqlite3_bind_int(s, 3, p->kind);
	sqlite3_bind_int64(s, 4, p->name_id);
	bind_id_or_null(s, 5, p->cat_id);
	bind_id_or_null(s, 6, p->track_id);
	bind_id_or_null(s, 7, p->source_id);
	sqlite3_bind_int64(s, 8, p->start_ns);
	sqlite3_bind_int64(s, 9, p->dur_ns);
	sqlite3_bind_int64(s, 10, p->self_ns);
	sqlite3_bind_int64(s, 11, p->device_ns);
	sqlite3_bind_int64(s, 12, p->child_count);
	sqlite3_bind_int(s, 13, p->depth);
	bind_text_or_null(s, 14, p->attrs, p->attrs_len);
	return run(st, s, err);
}

int store_update_phase_window(struct store *st, int64_t id, int64_t start_ns, int64_t dur_ns,
			      int64_t child_count, char **err)
{
	sqlite3_stmt *s = stmt(st, S_PHASE_WINDOW, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, start_ns);
	sqlite3_bind_int64(s, 3, dur_ns);
	sqlite3_bind_int64(s, 4, child_count);
	return run(st, s, err);
}

int store_add_launch_stats(struct store *st, int64_t id, int64_t kernels, int64_t device_ns,
			   char **err)
{
	sqlite3_stmt *s = stmt(st, S_LAUNCH_STATS, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, kernels);
	sqlite3_bind_int64(s, 3, device_ns);
	return run(st, s, err);
}

int64_t store_add_source(struct store *st, const struct source_row *r, char **err)
{
	sqlite3_stmt *s = stmt(st, S_SOURCE, err);
	if (!s)
		return -1;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	sqlite3_bind_text(s, 1, r->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, r->format, -1, SQLITE_STATIC);
	bind_text_or_null(s, 3, r->compression, r->compression ? strlen(r->compression) : 0);
	sqlite3_bind_int64(s, 4, r->size_bytes);
	sqlite3_bind_text(s, 5, r->anchor, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, r->time_offset_ns);
	bind_text_or_null(s, 7, r->host, r->host ? strlen(r->host) : 0);
	if (r->rank >= 0)
		sqlite3_bind_int(s, 8, r->rank);
	else
		sqlite3_bind_null(s, 8);
	sqlite3_bind_text(s, 9, when, -1, SQLITE_TRANSIENT);
	bind_text_or_null(s, 10, r->attrs, r->attrs ? strlen(r->attrs) : 0);
	if (run(st, s, err) < 0)
		return -1;
	return sqlite3_last_insert_rowid(st->db);
}

int store_finish_source(struct store *st, int64_t source_id, int64_t phases, int64_t events,
			int64_t samples, int64_t dropped, char **err)
{
	sqlite3_stmt *s = stmt(st, S_SOURCE_FINISH, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_int64(s, 2, phases);
	sqlite3_bind_int64(s, 3, events);
	sqlite3_bind_int64(s, 4, samples);
	sqlite3_bind_int64(s, 5, dropped);
	return run(st, s, err);
}

int64_t store_add_track(struct store *st, const struct track_row *t, char **err)
{
	sqlite3_stmt *s = stmt(st, S_TRACK, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, t->source_id);
	sqlite3_bind_text(s, 2, t->kind, -1, SQLITE_STATIC);
	bind_text_or_null(s, 3, t->pid, t->pid ? strlen(t->pid) : 0);
	bind_text_or_null(s, 4, t->tid, t->tid ? strlen(t->tid) : 0);
	bind_text_or_null(s, 5, t->name, t->name ? strlen(t->name) : 0);
	bind_text_or_null(s, 6, t->host, t->host ? strlen(t->host) : 0);
	if (t->rank >= 0)
		sqlite3_bind_int(s, 7, t->rank);
	else
		sqlite3_bind_null(s, 7);
	sqlite3_bind_int64(s, 8, t->sort_index);
	bind_id_or_null(s, 9, t->phase_id);
	if (run(st, s, err) < 0)
		return -1;
	return sqlite3_last_insert_rowid(st->db);
}

int store_set_track_spans(struct store *st, int64_t track_id, int64_t spans, char **err)
{
	sqlite3_stmt *s = stmt(st, S_TRACK_SPANS, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, track_id);
	sqlite3_bind_int64(s, 2, spans);
	return run(st, s, err);
}

int store_add_edge(struct store *st, int64_t src, int64_t dst, int kind, char **err)
{
	sqlite3_stmt *s = stmt(st, S_EDGE, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, src);
	sqlite3_bind_int64(s, 2, dst);
	sqlite3_bind_int(s, 3, kind);
	return run(st, s, err);
}

int store_add_event(struct store *st, int64_t source_id, int64_t track_id, int64_t t_ns,
		    int64_t name_id, const char *level, int64_t phase_id, const char *attrs,
		    size_t attrs_len, char **err)
{
	sqlite3_stmt *s = stmt(st, S_EVENT, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, source_id);
	bind_id_or_null(s, 2, track_id);
	sqlite3_bind_int64(s, 3, t_ns);
	sqlite3_bind_int64(s, 4, name_id);
	bind_text_or_null(s, 5, level, level ? strlen(level) : 0);
	bind_id_or_null(s, 6, phase_id);
	bind_text_or_null(s, 7, attrs, attrs_len);
	return run(st, s, err);
}

int64_t store_add_metric(struct store *st, const struct metric_row *m, char **err)
{
	sqlite3_stmt *s = stmt(st, S_METRIC, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, m->source_id);
	bind_text_or_null(s, 2, m->host, m->host ? strlen(m->host) : 0);
	bind_text_or_null(s, 3, m->resource, m->resource ? strlen(m->resource) : 0);
	sqlite3_bind_text(s, 4, m->name, -1, SQLITE_STATIC);
	bind_text_or_null(s, 5, m->unit, m->unit ? strlen(m->unit) : 0);
	sqlite3_bind_text(s, 6, m->value_kind, -1, SQLITE_STATIC);
	if (m->capacity > 0)
		sqlite3_bind_double(s, 7, m->capacity);
	else
		sqlite3_bind_null(s, 7);
	if (run(st, s, err) < 0)
		return -1;
	return sqlite3_last_insert_rowid(st->db);
}

int store_add_sample(struct store *st, int64_t metric_id, int64_t t_ns, double value, char **err)
{
	sqlite3_stmt *s = stmt(st, S_SAMPLE, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, metric_id);
	sqlite3_bind_int64(s, 2, t_ns);
	sqlite3_bind_double(s, 3, value);
	return run(st, s, err);
}

int store_add_diagnostic(struct store *st, int64_t source_id, const char *code, int64_t count,
			 const char *message, const char *example, char **err)
{
	sqlite3_stmt *s = stmt(st, S_DIAG, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_text(s, 2, code, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, count);
	sqlite3_bind_text(s, 4, message, -1, SQLITE_STATIC);
	bind_text_or_null(s, 5, example, example ? strlen(example) : 0);
	return run(st, s, err);
}

int64_t store_find_child(struct store *st, int64_t parent_id, int kind, const char *name,
			 char **err)
{
	sqlite3_stmt *s = stmt(st, S_FIND_CHILD, err);
	if (!s)
		return -1;
	bind_id_or_null(s, 1, parent_id);
	sqlite3_bind_int(s, 2, kind);
	sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(st, err, "cannot read phases");
	return id;
}
