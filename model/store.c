/*
 * The trace.db store: opening and validating the file, creating schema v1
 * (a new file in a temp file, published at the first commit), the import
 * transaction, and the prepared statements of the write path and of the
 * importers' fix-ups.  Readers (model.c, summary.c) prepare their own
 * statements on store_db().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/sbuf.h"
#include "model/schema.sql.h"
#include "model/store.h"
#include "model/timing.h"
#include "model/xalloc.h"

enum stmt_id {
	S_INTERN_GET,
	S_INTERN_PUT,
	S_PHASE,
	S_PHASES, /* STORE_PHASE_BATCH rows at once */
	S_PHASE_WINDOW,
	S_LAUNCH_STATS,
	S_SOURCE,
	S_SOURCE_FINISH,
	S_TRACK,
	S_TRACK_SPANS,
	S_EVENT,
	S_EVENTS, /* STORE_EVENT_BATCH rows at once */
	S_METRIC,
	S_SAMPLE,
	S_SAMPLES, /* STORE_SAMPLE_BATCH rows at once */
	S_DIAG,
	S_FIND_CHILD,
	S_STRING,
	S_SOURCE_ANCHOR,
	S_TRACK_CLEAR_NODE,
	S_SHIFT_SAMPLES,
	S_METRIC_HOSTS,
	S_CHILD_WINDOW,
	S_PARENT_OF,
	S_MANIFEST_OF,
	S_COUNT
};

/* The window a step's own record declares (attrs {"manifest":{"start":
 * ns, "end": ns}}, written by the workflow and OTLP importers): NULL when
 * none or when attrs is not JSON. */
#define MANIFEST_START                                                                             \
	"(CASE WHEN json_valid(attrs) THEN json_extract(attrs, '$.manifest.start') END)"
#define MANIFEST_END "(CASE WHEN json_valid(attrs) THEN json_extract(attrs, '$.manifest.end') END)"

static const char *const stmt_sql[S_COUNT] = {
    [S_INTERN_GET] = "SELECT id FROM strings WHERE text = ?1",
    [S_INTERN_PUT] = "INSERT INTO strings(text) VALUES (?1)",
    [S_PHASE] = "INSERT INTO phases(id, parent_id, kind, name_id, cat_id, track_id, source_id,"
		" start_ns, dur_ns, self_ns, device_ns, child_count, depth, attrs)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [S_PHASES] = NULL, /* built by phases_sql() */
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
    [S_EVENT] = "INSERT INTO events(source_id, track_id, t_ns, name_id, level, phase_id, attrs)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [S_EVENTS] = NULL, /* built by batch_sql() */
    [S_METRIC] = "INSERT INTO metrics(source_id, host, resource, name, unit, value_kind,"
		 " capacity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [S_SAMPLE] = "INSERT INTO samples(metric_id, t_ns, value) VALUES (?1, ?2, ?3)",
    [S_SAMPLES] = NULL, /* built by batch_sql() */
    [S_DIAG] = "INSERT INTO diagnostics(source_id, code, count, message, example)"
	       " VALUES (?1, ?2, ?3, ?4, ?5)",
    [S_FIND_CHILD] = "SELECT p.id FROM phases p JOIN strings s ON s.id = p.name_id"
		     " WHERE p.parent_id IS ?1 AND p.kind = ?2 AND s.text = ?3 LIMIT 1",
    [S_STRING] = "SELECT text FROM strings WHERE id = ?1",
    /* the file's own host only fills in a source that has none (--host wins) */
    [S_SOURCE_ANCHOR] = "UPDATE sources SET anchor = ?2, time_offset_ns = ?3, rank = ?4,"
			" host = coalesce(host, ?5), attrs = ?6 WHERE id = ?1",
    [S_METRIC_HOSTS] = "UPDATE metrics SET host = (SELECT host FROM sources WHERE id = ?1)"
		       " WHERE source_id = ?1 AND host IS NULL",
    [S_TRACK_CLEAR_NODE] = "UPDATE tracks SET phase_id = NULL WHERE id = ?1",
    [S_SHIFT_SAMPLES] = "UPDATE samples SET t_ns = t_ns + ?2 WHERE metric_id IN"
			" (SELECT id FROM metrics WHERE source_id = ?1)",
    /* an empty structural child (?2..?5: workflow, step, rank, process with no
     * children) has no window of its own: it must not drag the parent to 0 */
    [S_CHILD_WINDOW] = "SELECT min(CASE WHEN e THEN NULL ELSE start_ns END),"
		       " max(CASE WHEN e THEN NULL ELSE start_ns + dur_ns END), count(*)"
		       " FROM (SELECT start_ns, dur_ns, child_count = 0 AND kind IN"
		       " (?2, ?3, ?4, ?5) AND " MANIFEST_END " IS NULL AS e"
		       " FROM phases WHERE parent_id = ?1)",
    [S_PARENT_OF] = "SELECT parent_id FROM phases WHERE id = ?1",
    [S_MANIFEST_OF] = "SELECT " MANIFEST_START ", " MANIFEST_END " FROM phases WHERE id = ?1",
};

struct store {
	sqlite3 *db;
	char *path;	/* the trace.db the caller named */
	char *tmp_path; /* a new file built aside until store_commit publishes it; else NULL */
	enum store_mode mode;
	int in_txn;
	int64_t next_phase_id;
	int indexes_deferred; /* bulk load into an empty file: index at commit */
	/* nodes whose windows store_commit refreshes once indexed (deferred) */
	int64_t *refresh;
	size_t nrefresh, refresh_alloc;
	uint64_t batched; /* phases added in batches, for start_writeback */
	sqlite3_stmt *stmt[S_COUNT];
	char **alias, **canonical; /* host aliases: alias[i] is canonical[i] */
	size_t naliases;
};

static int refresh_now(struct store *st, int64_t node_id, char **err);
static void start_writeback(const struct store *st);

/* Indexes built once after a bulk load rather than row by row. */
static const char drop_indexes_sql[] =
    "DROP INDEX phases_parent; DROP INDEX edges_src; DROP INDEX edges_dst;"
    " DROP INDEX samples_metric";
static const char create_indexes_sql[] =
    "CREATE INDEX phases_parent ON phases(parent_id, start_ns);"
    " CREATE INDEX edges_src ON edges(src); CREATE INDEX edges_dst ON edges(dst);"
    " CREATE INDEX samples_metric ON samples(metric_id, t_ns)";

static const char *const kind_names[PHASE_KIND_COUNT] = {[PHASE_NONE] = "none",
#define X(id, name) [PHASE_##id] = name,
							 PHASE_KIND_LIST(X)
#undef X
};

const char *store_kind_name(int kind)
{
	if (kind <= 0 || kind >= PHASE_KIND_COUNT)
		return "none";
	return kind_names[kind];
}

const char *store_edge_kind_name(int kind)
{
	static const char *const names[] = {[EDGE_FLOW] = "flow",
					    [EDGE_LAUNCH] = "launch",
					    [EDGE_FWDBWD] = "fwd-bwd",
					    [EDGE_STAGE_PARENT] = "stage-parent",
					    [EDGE_STEP_ORDER] = "step-order"};
	if (kind <= 0 || kind >= (int)(sizeof(names) / sizeof(names[0])))
		return "edge";
	return names[kind];
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

/* Writes every phase kind into phase_kinds; a file made by an older version
 * gets the kinds added since (ids never move, so the rows it has stay). */
static int add_kinds(struct store *st, char **err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT OR IGNORE INTO phase_kinds(id, name) VALUES (?1, ?2)", -1,
			       &s, NULL) != SQLITE_OK)
		return db_error(st, err, "cannot write phase kinds");
	int rc = 0;
	for (int k = 1; k < PHASE_KIND_COUNT && rc == 0; k++) {
		sqlite3_bind_int(s, 1, k);
		sqlite3_bind_text(s, 2, kind_names[k], -1, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = db_error(st, err, "cannot write phase kinds");
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return rc;
}

/* Brings a file of an older schema up to this one, inside the write
 * transaction: each version's additions, then the version marks. */
static int migrate(struct store *st, char **err)
{
	int ver;
	if (pragma_int(st, "PRAGMA user_version", &ver, err) < 0)
		return -1;
	if (ver >= STORE_SCHEMA_VERSION)
		return 0;
	if (ver < 2 && store_exec(st, store_schema_v2_sql, err) < 0)
		return -1;
	if (ver < 3 && store_exec(st, store_schema_v3_sql, err) < 0)
		return -1;
	if (ver < 4 && store_exec(st, store_schema_v4_sql, err) < 0)
		return -1;
	char *sql = xasprintf("PRAGMA user_version = %d;"
			      " INSERT OR REPLACE INTO meta VALUES ('schema_version', '%d')",
			      STORE_SCHEMA_VERSION, STORE_SCHEMA_VERSION);
	int rc = store_exec(st, sql, err);
	free(sql);
	return rc;
}

static int create_schema(struct store *st, char **err)
{
	if (store_exec(st, store_schema_sql, err) < 0 ||
	    store_exec(st, store_schema_v2_sql, err) < 0 ||
	    store_exec(st, store_schema_v3_sql, err) < 0 ||
	    store_exec(st, store_schema_v4_sql, err) < 0 || add_kinds(st, err) < 0)
		return -1;
	char *sql = xasprintf(
	    "PRAGMA application_id = %d; PRAGMA user_version = %d;"
	    "INSERT INTO meta VALUES ('schema_version', '%d'),"
	    " ('tool_version', '%s'), ('created_at', strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ')),"
	    " ('updated_at', strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ'))",
	    STORE_APPLICATION_ID, STORE_SCHEMA_VERSION, STORE_SCHEMA_VERSION, GRADEML_VERSION);
	int rc = store_exec(st, sql, err);
	free(sql);
	return rc;
}

/* Opens the connection on file (path, or the temp file of a new one).  A
 * connection is used by one thread at a time (the import hands it to its
 * writer thread through a queue whose lock orders the two), so SQLite's own
 * per-call locking is switched off (NOMUTEX).  A process that writes first
 * (import, analyze) switches off SQLite's memory accounting too, which
 * takes a global lock on every allocation; one that reads first (report,
 * the explorer) keeps it: a query's memory limit (query/exec.h) needs it. */
static int open_db(struct store *st, const char *file, int flags, char **err)
{
	static int configured;
	if (!configured) {
		configured = 1;
		if (flags & SQLITE_OPEN_READWRITE) /* fails harmlessly once initialised */
			sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	}
	if (sqlite3_open_v2(file, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot open: %s", st->path,
				 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		return -1;
	}
	sqlite3_extended_result_codes(st->db, 0);
	sqlite3_busy_timeout(st->db, 2000);
	return 0;
}

/* Settings of a write connection, once the file is known to be a trace.db
 * (on another file they would fail with a less helpful message). */
static int write_settings(struct store *st, char **err)
{
	return store_exec(
	    st,
	    "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8192; PRAGMA threads = 2;"
	    " PRAGMA temp_store = FILE",
	    err);
}

/* Creates the empty file "<dir>/.<base>.XXXXXX" next to path, with the
 * permissions a file created at path would get; the caller frees the name. */
static char *make_temp(const char *path, char **err)
{
	const char *slash = strrchr(path, '/');
	char *tmp = slash ? xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1)
			  : xasprintf(".%s.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		*err = xasprintf("%s: cannot create: %s", path, strerror(errno));
		free(tmp);
		return NULL;
	}
	mode_t mask = umask(0);
	umask(mask);
	int rc = fchmod(fd, 0666 & ~mask);
	int e = errno;
	close(fd);
	if (rc < 0) {
		*err = xasprintf("%s: cannot create: %s", path, strerror(e));
		unlink(tmp);
		free(tmp);
		return NULL;
	}
	return tmp;
}

static void finalize_all(struct store *st)
{
	for (int i = 0; i < S_COUNT; i++) {
		sqlite3_finalize(st->stmt[i]);
		st->stmt[i] = NULL;
	}
}

/* Drops a new file that was never published: nothing else ever saw it. */
static void discard_temp(struct store *st)
{
	finalize_all(st);
	if (st->db)
		sqlite3_close(st->db);
	st->db = NULL;
	unlink(st->tmp_path);
	char *j = xasprintf("%s-journal", st->tmp_path);
	unlink(j);
	free(j);
	free(st->tmp_path);
	st->tmp_path = NULL;
}

/*
 * A new trace.db is built in a temp file beside path with no journal (a
 * failed import just deletes it), so a killed import never leaves a broken
 * file at path, and published by store_commit.  An existing file, even an
 * empty one, is written in place under the rollback journal.
 */
int store_open(const char *path, enum store_mode mode, struct store **out, char **err)
{
	struct store *st = xcalloc(1, sizeof(*st));
	st->path = xstrdup(path);
	st->mode = mode;
	struct stat sb = {0};
	int exists = !strcmp(path, STORE_MEMORY) || stat(path, &sb) == 0;
	int stat_errno = exists ? 0 : errno;
	if (exists && S_ISDIR(sb.st_mode)) {
		*err = xasprintf("%s: is a directory, not a trace.db", path);
		goto fail;
	}
	if (!exists && (mode == STORE_READ || stat_errno != ENOENT)) {
		*err = xasprintf("%s: cannot open: %s", path, strerror(stat_errno));
		goto fail;
	}
	if (!exists && !(st->tmp_path = make_temp(path, err)))
		goto fail;
	int flags = mode == STORE_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (open_db(st, st->tmp_path ? st->tmp_path : path, flags, err) < 0)
		goto fail;
	int fresh = st->tmp_path ? 1 : check_file(st, err);
	if (fresh < 0 || (mode == STORE_WRITE && write_settings(st, err) < 0))
		goto fail;
	if (fresh) {
		/* schema creation belongs to the first import's transaction */
		if (store_exec(st,
			       st->tmp_path ? "PRAGMA page_size = 8192; PRAGMA journal_mode = OFF;"
					      " BEGIN IMMEDIATE"
					    : "PRAGMA page_size = 8192; BEGIN IMMEDIATE",
			       err) < 0)
			goto fail;
		st->in_txn = 1;
		/* an empty file another import may have filled meanwhile: look
		 * again now that we hold the write lock */
		if (!st->tmp_path && (fresh = check_file(st, err)) < 0)
			goto fail;
		if (fresh && create_schema(st, err) < 0)
			goto fail;
	}
	*out = st;
	return 0;
fail:
	store_close(st);
	return -1;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->in_txn || st->tmp_path)
		store_rollback(st);
	finalize_all(st);
	if (st->db)
		sqlite3_close(st->db);
	for (size_t i = 0; i < st->naliases; i++) {
		free(st->alias[i]);
		free(st->canonical[i]);
	}
	free(st->alias);
	free(st->canonical);
	free(st->refresh);
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

/* The INSERT of STORE_PHASE_BATCH phases or STORE_SAMPLE_BATCH samples: one
 * statement per batch costs SQLite's per-statement work once for many rows
 * (30% less time per phase, measured on 700 k rows). */
static char *batch_sql(enum stmt_id id)
{
	static const struct {
		enum stmt_id id;
		int rows;
		const char *head, *row;
	} batches[] = {
	    {S_PHASES, STORE_PHASE_BATCH,
	     "INSERT INTO phases(id, parent_id, kind, name_id, cat_id, track_id, source_id,"
	     " start_ns, dur_ns, self_ns, device_ns, child_count, depth, attrs) VALUES ",
	     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
	    {S_EVENTS, STORE_EVENT_BATCH,
	     "INSERT INTO events(source_id, track_id, t_ns, name_id, level, phase_id, attrs)"
	     " VALUES ",
	     "(?,?,?,?,?,?,?)"},
	    {S_SAMPLES, STORE_SAMPLE_BATCH, "INSERT INTO samples(metric_id, t_ns, value) VALUES ",
	     "(?,?,?)"},
	};
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		if (batches[b].id != id)
			continue;
		struct sbuf sb = SBUF_INIT;
		sbuf_adds(&sb, batches[b].head);
		for (int i = 0; i < batches[b].rows; i++) {
			sbuf_adds(&sb, i ? "," : "");
			sbuf_adds(&sb, batches[b].row);
		}
		return sbuf_detach(&sb);
	}
	return NULL;
}

static sqlite3_stmt *stmt(struct store *st, enum stmt_id id, char **err)
{
	if (!st->stmt[id]) {
		char *built = batch_sql(id);
		int rc = sqlite3_prepare_v3(st->db, built ? built : stmt_sql[id], -1,
					    SQLITE_PREPARE_PERSISTENT, &st->stmt[id], NULL);
		free(built);
		if (rc != SQLITE_OK) {
			db_error(st, err, "cannot prepare statement");
			return NULL;
		}
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

/* run() for an UPDATE of one row by id: no such row is an error too. */
static int run_one(struct store *st, sqlite3_stmt *s, const char *what, int64_t id, char **err)
{
	if (run(st, s, err) < 0)
		return -1;
	if (sqlite3_changes(st->db) == 0) {
		*err = xasprintf("%s: no %s with id %lld", st->path, what, (long long)id);
		return -1;
	}
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
	if (!st->db) {
		*err = xasprintf("%s: connection closed after an earlier error", st->path);
		return -1;
	}
	if (!st->in_txn) {
		if (store_exec(st, "BEGIN IMMEDIATE", err) < 0)
			return -1;
		st->in_txn = 1;
	}
	if (migrate(st, err) < 0 || add_kinds(st, err) < 0)
		return -1;
	st->next_phase_id = max_phase_id(st) + 1;
	if (st->next_phase_id == 1 && !st->indexes_deferred) {
		finalize_all(st);
		if (store_exec(st, drop_indexes_sql, err) < 0)
			return -1;
		st->indexes_deferred = 1;
	}
	return 0;
}

/* Gives the committed temp file its final name with link(), which, unlike
 * rename(), fails when another import created path meanwhile; then reopens
 * the connection on path so that later transactions journal beside it. */
static int publish(struct store *st, char **err)
{
	if (link(st->tmp_path, st->path) < 0) {
		if (errno == EEXIST)
			*err = xasprintf(
			    "%s: created by another import meanwhile; nothing imported", st->path);
		else
			*err = xasprintf("%s: cannot create: %s", st->path, strerror(errno));
		return -1;
	}
	unlink(st->tmp_path);
	free(st->tmp_path);
	st->tmp_path = NULL;
	finalize_all(st);
	sqlite3_close(st->db);
	st->db = NULL;
	char *why = NULL;
	if (open_db(st, st->path, SQLITE_OPEN_READWRITE, &why) < 0 ||
	    write_settings(st, &why) < 0 ||
	    store_exec(st, "PRAGMA journal_mode = DELETE", &why) < 0) {
		*err = xasprintf("%s (the import itself is committed)", why);
		free(why);
		return -1;
	}
	return 0;
}

int store_commit(struct store *st, char **err)
{
	if (!st->db) {
		*err = xasprintf("%s: connection closed after an earlier error", st->path);
		return -1;
	}
	if (st->indexes_deferred) {
		finalize_all(st);
		start_writeback(st);
		if (store_exec(st, create_indexes_sql, err) < 0)
			return -1;
		st->indexes_deferred = 0;
		timing_mark("indexes");
		for (size_t i = 0; i < st->nrefresh; i++)
			if (refresh_now(st, st->refresh[i], err) < 0)
				return -1;
		st->nrefresh = 0;
	}
	if (store_exec(st,
		       "INSERT OR REPLACE INTO meta VALUES ('updated_at',"
		       " strftime('%Y-%m-%dT%H:%M:%SZ')); COMMIT",
		       err) < 0)
		return -1;
	st->in_txn = 0;
	int rc = st->tmp_path ? publish(st, err) : 0;
	timing_mark("commit");
	return rc;
}

void store_rollback(struct store *st)
{
	if (st->tmp_path) {
		discard_temp(st);
	} else if (st->db && st->in_txn) {
		finalize_all(st);
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	st->in_txn = 0;
	st->indexes_deferred = 0;
	st->nrefresh = 0;
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

int64_t store_next_phase_id(const struct store *st)
{
	return st->next_phase_id;
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

/* A C string, or NULL for SQL NULL. */
static void bind_str(sqlite3_stmt *s, int col, const char *v)
{
	bind_text_or_null(s, col, v, v ? strlen(v) : 0);
}

int store_add_host_alias(struct store *st, const char *alias, const char *canonical)
{
	for (size_t i = 0; i < st->naliases; i++)
		if (!strcmp(st->alias[i], alias))
			return strcmp(st->canonical[i], canonical) ? -1 : 0;
	st->alias = xrealloc(st->alias, (st->naliases + 1) * sizeof(*st->alias));
	st->canonical = xrealloc(st->canonical, (st->naliases + 1) * sizeof(*st->canonical));
	st->alias[st->naliases] = xstrdup(alias);
	st->canonical[st->naliases] = xstrdup(canonical);
	st->naliases++;
	return 0;
}

const char *store_host(const struct store *st, const char *host)
{
	for (size_t i = 0; host && i < st->naliases; i++)
		if (!strcmp(st->alias[i], host))
			return st->canonical[i];
	return host;
}

/* A host as stored: its canonical name when it is an alias. */
static void bind_host(const struct store *st, sqlite3_stmt *s, int col, const char *host)
{
	bind_str(s, col, store_host(st, host));
}

static void bind_rank(sqlite3_stmt *s, int col, int rank)
{
	if (rank >= 0)
		sqlite3_bind_int(s, col, rank);
	else
		sqlite3_bind_null(s, col);
}

/* Binds p to the 14 columns from col + 1 on. */
static void bind_phase(sqlite3_stmt *s, int col, const struct phase_row *p)
{
	sqlite3_bind_int64(s, col + 1, p->id);
	bind_id_or_null(s, col + 2, p->parent_id);
	sqlite3_bind_int(s, col + 3, p->kind);
	sqlite3_bind_int64(s, col + 4, p->name_id);
	bind_id_or_null(s, col + 5, p->cat_id);
	bind_id_or_null(s, col + 6, p->track_id);
	bind_id_or_null(s, col + 7, p->source_id);
	sqlite3_bind_int64(s, col + 8, p->start_ns);
	sqlite3_bind_int64(s, col + 9, p->dur_ns);
	sqlite3_bind_int64(s, col + 10, p->self_ns);
	sqlite3_bind_int64(s, col + 11, p->device_ns);
	sqlite3_bind_int64(s, col + 12, p->child_count);
	sqlite3_bind_int(s, col + 13, p->depth);
	bind_text_or_null(s, col + 14, p->attrs, p->attrs_len);
}

int store_add_phase(struct store *st, const struct phase_row *p, char **err)
{
	sqlite3_stmt *s = stmt(st, S_PHASE, err);
	if (!s)
		return -1;
	bind_phase(s, 0, p);
	return run(st, s, err);
}

#define STORE_WRITEBACK_ROWS (1 << 18)

/* Asks the kernel to start writing the file's dirty pages now: a bulk load
 * leaves hundreds of MB in the page cache, and the commit's fdatasync would
 * wait for all of them (0.45 s on the 1 GiB bench) after building the
 * indexes, where the disk could have been writing meanwhile.  Given every
 * STORE_WRITEBACK_ROWS phases and before indexing.  Only a hint: nothing
 * fails if it cannot be given.
 *
 * Only for a new file built aside, which no one else opens: closing any
 * descriptor of a file drops every POSIX lock the process holds on it, so
 * on a trace.db written in place it would release SQLite's locks in the
 * middle of the transaction. */
static void start_writeback(const struct store *st)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (!st->tmp_path)
		return;
	int fd = open(st->tmp_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	close(fd);
#else
	(void)st;
#endif
}

int store_add_phases(struct store *st, const struct phase_row *p, size_t n, char **err)
{
	while (n >= STORE_PHASE_BATCH) {
		sqlite3_stmt *s = stmt(st, S_PHASES, err);
		if (!s)
			return -1;
		for (int i = 0; i < STORE_PHASE_BATCH; i++)
			bind_phase(s, 14 * i, &p[i]);
		if (run(st, s, err) < 0)
			return -1;
		p += STORE_PHASE_BATCH;
		n -= STORE_PHASE_BATCH;
		st->batched += STORE_PHASE_BATCH;
		if (st->batched % STORE_WRITEBACK_ROWS < STORE_PHASE_BATCH)
			start_writeback(st);
	}
	for (size_t i = 0; i < n; i++)
		if (store_add_phase(st, &p[i], err) < 0)
			return -1;
	return 0;
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
	bind_str(s, 3, r->compression);
	sqlite3_bind_int64(s, 4, r->size_bytes);
	sqlite3_bind_text(s, 5, r->anchor, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, r->time_offset_ns);
	bind_host(st, s, 7, r->host);
	bind_rank(s, 8, r->rank);
	sqlite3_bind_text(s, 9, when, -1, SQLITE_TRANSIENT);
	bind_str(s, 10, r->attrs);
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
	bind_str(s, 3, t->pid);
	bind_str(s, 4, t->tid);
	bind_str(s, 5, t->name);
	bind_host(st, s, 6, t->host);
	bind_rank(s, 7, t->rank);
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

static void bind_event(sqlite3_stmt *s, int col, const struct event_row *e)
{
	sqlite3_bind_int64(s, col + 1, e->source_id);
	bind_id_or_null(s, col + 2, e->track_id);
	sqlite3_bind_int64(s, col + 3, e->t_ns);
	sqlite3_bind_int64(s, col + 4, e->name_id);
	bind_str(s, col + 5, e->level);
	bind_id_or_null(s, col + 6, e->phase_id);
	bind_text_or_null(s, col + 7, e->attrs, e->attrs_len);
}

int store_add_events(struct store *st, const struct event_row *e, size_t n, char **err)
{
	while (n) {
		size_t k = n >= STORE_EVENT_BATCH ? STORE_EVENT_BATCH : 1;
		sqlite3_stmt *s = stmt(st, k > 1 ? S_EVENTS : S_EVENT, err);
		if (!s)
			return -1;
		for (size_t i = 0; i < k; i++)
			bind_event(s, 7 * (int)i, &e[i]);
		if (run(st, s, err) < 0)
			return -1;
		e += k;
		n -= k;
	}
	return 0;
}

int store_add_event(struct store *st, int64_t source_id, int64_t track_id, int64_t t_ns,
		    int64_t name_id, const char *level, int64_t phase_id, const char *attrs,
		    size_t attrs_len, char **err)
{
	struct event_row e = {source_id, track_id, t_ns,  name_id,
			      phase_id,	 level,	   attrs, attrs_len};
	return store_add_events(st, &e, 1, err);
}

int64_t store_add_metric(struct store *st, const struct metric_row *m, char **err)
{
	sqlite3_stmt *s = stmt(st, S_METRIC, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, m->source_id);
	bind_host(st, s, 2, m->host);
	bind_str(s, 3, m->resource);
	sqlite3_bind_text(s, 4, m->name, -1, SQLITE_STATIC);
	bind_str(s, 5, m->unit);
	sqlite3_bind_text(s, 6, m->value_kind, -1, SQLITE_STATIC);
	if (m->capacity > 0)
		sqlite3_bind_double(s, 7, m->capacity);
	else
		sqlite3_bind_null(s, 7);
	if (run(st, s, err) < 0)
		return -1;
	return sqlite3_last_insert_rowid(st->db);
}

int store_add_samples(struct store *st, const struct sample_row *v, size_t n, char **err)
{
	while (n >= STORE_SAMPLE_BATCH) {
		sqlite3_stmt *s = stmt(st, S_SAMPLES, err);
		if (!s)
			return -1;
		for (int i = 0; i < STORE_SAMPLE_BATCH; i++) {
			sqlite3_bind_int64(s, 3 * i + 1, v[i].metric_id);
			sqlite3_bind_int64(s, 3 * i + 2, v[i].t_ns);
			sqlite3_bind_double(s, 3 * i + 3, v[i].value);
		}
		if (run(st, s, err) < 0)
			return -1;
		v += STORE_SAMPLE_BATCH;
		n -= STORE_SAMPLE_BATCH;
	}
	for (size_t i = 0; i < n; i++)
		if (store_add_sample(st, v[i].metric_id, v[i].t_ns, v[i].value, err) < 0)
			return -1;
	return 0;
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
	bind_str(s, 5, example);
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

const char *store_string(struct store *st, int64_t id, struct sbuf *out, char **err)
{
	sqlite3_stmt *s = stmt(st, S_STRING, err);
	if (!s)
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		sbuf_reset(out);
		sbuf_add(out, sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
	}
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return out->buf;
	if (rc == SQLITE_DONE)
		*err = xasprintf("%s: no string with id %lld", st->path, (long long)id);
	else
		db_error(st, err, "cannot read strings");
	return NULL;
}

int store_set_source_anchor(struct store *st, int64_t source_id, const char *anchor,
			    int64_t offset_ns, int rank, const char *host, const char *attrs_json,
			    char **err)
{
	sqlite3_stmt *s = stmt(st, S_SOURCE_ANCHOR, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_text(s, 2, anchor, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, offset_ns);
	bind_rank(s, 4, rank);
	bind_host(st, s, 5, host);
	bind_str(s, 6, attrs_json);
	if (run_one(st, s, "source", source_id, err) < 0)
		return -1;
	/* metrics created before the host was known take the source's */
	sqlite3_stmt *m = stmt(st, S_METRIC_HOSTS, err);
	if (!m)
		return -1;
	sqlite3_bind_int64(m, 1, source_id);
	return run(st, m, err);
}

int store_clear_track_node(struct store *st, int64_t track_id, char **err)
{
	sqlite3_stmt *s = stmt(st, S_TRACK_CLEAR_NODE, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, track_id);
	return run_one(st, s, "track", track_id, err);
}

int store_shift_samples(struct store *st, int64_t source_id, int64_t offset_ns, char **err)
{
	sqlite3_stmt *s = stmt(st, S_SHIFT_SAMPLES, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_int64(s, 2, offset_ns);
	return run(st, s, err);
}

int store_manifest_window(struct store *st, int64_t node_id, int64_t *start, int64_t *end,
			  char **err)
{
	sqlite3_stmt *mf = stmt(st, S_MANIFEST_OF, err);
	if (!mf)
		return -1;
	sqlite3_bind_int64(mf, 1, node_id);
	int rc = sqlite3_step(mf), found = 0;
	if (rc == SQLITE_ROW && sqlite3_column_type(mf, 0) == SQLITE_INTEGER &&
	    sqlite3_column_type(mf, 1) == SQLITE_INTEGER) {
		*start = sqlite3_column_int64(mf, 0);
		*end = sqlite3_column_int64(mf, 1);
		found = *end >= *start;
	}
	sqlite3_reset(mf);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(st, err, "cannot read phases");
	return found;
}

static int refresh_now(struct store *st, int64_t node_id, char **err)
{
	sqlite3_stmt *q = stmt(st, S_CHILD_WINDOW, err);
	sqlite3_stmt *up = q ? stmt(st, S_PARENT_OF, err) : NULL;
	if (!up)
		return -1;
	sqlite3_bind_int(q, 2, PHASE_WORKFLOW);
	sqlite3_bind_int(q, 3, PHASE_STEP);
	sqlite3_bind_int(q, 4, PHASE_RANK);
	sqlite3_bind_int(q, 5, PHASE_PROCESS);
	while (node_id > 0) {
		sqlite3_bind_int64(q, 1, node_id);
		int rc = sqlite3_step(q);
		int has = rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL;
		int64_t start = has ? sqlite3_column_int64(q, 0) : 0;
		int64_t end = has ? sqlite3_column_int64(q, 1) : 0;
		int64_t count = rc == SQLITE_ROW ? sqlite3_column_int64(q, 2) : 0;
		sqlite3_reset(q);
		if (rc != SQLITE_ROW)
			return db_error(st, err, "cannot read phases");
		int64_t ms, me;
		int mw = store_manifest_window(st, node_id, &ms, &me, err);
		if (mw < 0)
			return -1;
		if (mw) {
			start = has && start < ms ? start : ms;
			end = has && end > me ? end : me;
			has = 1;
		}
		if (has &&
		    store_update_phase_window(st, node_id, start, end - start, count, err) < 0)
			return -1;
		sqlite3_bind_int64(up, 1, node_id);
		rc = sqlite3_step(up);
		node_id = rc == SQLITE_ROW ? sqlite3_column_int64(up, 0) : 0;
		sqlite3_reset(up);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return db_error(st, err, "cannot read phases");
	}
	return 0;
}

/* Without phases_parent, each refresh would scan every phase: during a bulk
 * load the refreshes wait for store_commit, which indexes first.  The result
 * is the same, as a refresh depends only on the children as they end up. */
int store_refresh_window(struct store *st, int64_t node_id, char **err)
{
	if (!st->indexes_deferred)
		return refresh_now(st, node_id, err);
	for (size_t i = 0; i < st->nrefresh; i++)
		if (st->refresh[i] == node_id)
			return 0;
	XGROW(st->refresh, st->nrefresh + 1, st->refresh_alloc);
	st->refresh[st->nrefresh++] = node_id;
	return 0;
}
