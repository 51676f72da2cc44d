/*
 * The trace.db store: opening and validating the file, creating schema v1
 * (a new file in a temp file, published at the first commit), the import
 * transaction, and the prepared statements of the write path and of the
 * importers' fix-ups.  Readers (model.c, summary.c) prepare their own
 * statements on store_db().
 *
 * Nothing lost, nothing left behind: how a failed or killed import leaves
 * trace.db as it was.
 *
 * - A new file (or an empty one, 0 bytes) is built in a hidden file beside
 *   it, with no journal, and published at the commit: by link() for a new
 *   file, by rename() over the empty one.  Until then nothing at the path
 *   changes.  The importer holds flock() on its hidden file while alive; a
 *   signal removes it at once (store_interrupt), exit() too, and after a
 *   kill -9 the next import (or export) into that directory removes every
 *   hidden file of this tool whose lock it can take, that is, whose process
 *   is gone (model/util/aside.h).
 *
 * - An existing file is written in place in WAL mode, switched on for the
 *   transaction and off again at its end.  With a rollback journal, SQLite
 *   writes changed pages into the file itself as soon as its cache fills,
 *   so a killed import left a hot journal that read-only opens cannot roll
 *   back ("attempt to write a readonly database") and a file that, copied
 *   without its journal, was corrupt or counted rows that were never
 *   committed.  In WAL mode every page goes to trace.db-wal until the
 *   commit, so until then trace.db keeps its committed pages whatever
 *   happens: a copy of it alone reads as before, and so does the file with
 *   the -wal and -shm beside it (their frames are uncommitted, so every
 *   reader ignores them).  After the commit the checkpoint copies the
 *   -wal's pages into trace.db; a kill then leaves trace.db part written,
 *   whole only with its -wal (it reads as after), until the next open
 *   finishes the copy (store_tidy).  Only a copy of the whole file for
 *   every append could keep trace.db alone whole then too, at the cost of
 *   its size each time; the man page says what holds instead.  The cost: the new pages are written
 * twice (the -wal, then the checkpoint into trace.db), the disk needs room for both until the
 *   checkpoint, and the switches rewrite trace.db's header (its mode bytes,
 *   and SQLite's change counter, which thus differs by 2 after a failed
 *   import while every page reads the same).  The room trace.db will need
 *   is claimed before the commit (SQLITE_FCNTL_SIZE_HINT), so a full disk
 *   fails the import rather than the checkpoint after it, and is given
 *   back on rollback.
 *
 * - Leaving WAL mode needs no other connection open.  When one is (a reader
 *   at the end of an import, or a killed import's -wal), the file stays in
 *   WAL mode, which every SQLite reader understands, and the next open
 *   (store_tidy, from import, report, query or the explorer) takes it back
 *   to rollback mode and removes the -wal and -shm: an open that can
 *   write does what SQLite does with a hot journal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/util/aside.h"
#include "model/util/sbuf.h"
#include "model/store/schema.sql.h"
#include "model/store/store.h"
#include "model/store/col.h"
#include "model/store/devunion.h"
#include "model/util/nstime.h"
#include "model/util/timing.h"
#include "model/util/xalloc.h"

enum stmt_id {
	S_INTERN_GET,
	S_INTERN_PUT,
	S_PHASE,
	S_PHASES, /* STORE_PHASE_BATCH rows at once */
	S_PHASE_WINDOW,
	S_PHASE_WIDEN,
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
#define MANIFEST_START STORE_ATTR_SQL("attrs", "$.manifest.start")
#define MANIFEST_END   STORE_ATTR_SQL("attrs", "$.manifest.end")

static const char *const stmt_sql[S_COUNT] = {
    [S_INTERN_GET] = "SELECT id FROM strings WHERE text = ?1",
    [S_INTERN_PUT] = "INSERT INTO strings(text) VALUES (?1)",
    [S_PHASE] = "INSERT INTO phases(id, parent_id, kind, name_id, cat_id, track_id, source_id,"
		" start_ns, dur_ns, self_ns, device_ns, child_count, depth, attrs)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [S_PHASES] = NULL, /* built by phases_sql() */
    [S_PHASE_WIDEN] = "UPDATE phases SET start_ns = ?2, dur_ns = ?3, child_count = ?4"
		      " WHERE id = ?1",
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
		     " WHERE p.parent_id IS ?1 AND (p.kind = ?2 OR ?2 = 0) AND s.text = ?3"
		     " ORDER BY p.id LIMIT 1",
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
     * children) has no window of its own: it must not drag the parent to 0;
     * nor does a process whose tracks hold instants only (Kineto's "Record
     * Window End") stretch it, as it does not stretch a rank (chrome.c), nor
     * the profiler's bookkeeping (?6) */
    [S_CHILD_WINDOW] = "SELECT min(CASE WHEN e THEN NULL ELSE start_ns END),"
		       " max(CASE WHEN e THEN NULL ELSE start_ns + dur_ns END), count(*)"
		       " FROM (SELECT start_ns, dur_ns, (child_count = 0 AND kind IN"
		       " (?2, ?3, ?4, ?5) AND " MANIFEST_END " IS NULL) OR (kind = ?5 AND"
		       " NOT EXISTS (SELECT 1 FROM phases th JOIN tracks t ON t.phase_id = th.id"
		       " WHERE th.parent_id = c.id AND t.spans > 0)) OR kind = ?6 AS e"
		       " FROM phases c WHERE parent_id = ?1)",
    [S_PARENT_OF] = "SELECT parent_id FROM phases WHERE id = ?1",
    [S_MANIFEST_OF] = "SELECT " MANIFEST_START ", " MANIFEST_END ", kind, start_ns,"
		      " start_ns + dur_ns FROM phases WHERE id = ?1",
};

struct store {
	sqlite3 *db;
	char *path;	/* the trace.db the caller named */
	char *tmp_path; /* a new file built aside until store_commit publishes it; else NULL */
	int tmp_fd;	/* tmp_path, open and flock()ed while it exists; else -1 */
	int slot;	/* tmp_path's entry in hidden[], or -1 */
	char *target;	/* what publish creates (path) or replaces (an empty file) */
	int replace;	/* target is an empty file, to be replaced by rename() */
	dev_t empty_dev;
	ino_t empty_ino;
	int memory;	    /* STORE_MEMORY: no file at all */
	int wal;	    /* in WAL mode for this transaction (written in place) */
	int64_t base_bytes; /* the file's size when the WAL transaction began */
	int grown;	    /* the file was grown for the checkpoint: shrink on rollback */
	enum store_mode mode;
	int in_txn;
	int64_t next_phase_id;
	int device_dirty;     /* device work added: store_commit recomputes device_ns */
	int indexes_deferred; /* bulk load into an empty file: index at commit */
	/* nodes whose windows store_commit refreshes once indexed (deferred) */
	int64_t *refresh;
	size_t nrefresh, refresh_alloc;
	uint64_t batched; /* phases added in batches, for start_writeback */
	sqlite3_stmt *stmt[S_COUNT];
	char **alias, **canonical; /* host aliases: alias[i] is canonical[i] */
	size_t naliases;
};

/*
 * The hidden files this process is building, as signal handlers and exit()
 * see them: a handler may only read fixed memory and call async-signal-safe
 * functions (lstat, fstat, unlink), so each name is copied here.
 */
enum { HIDDEN_SLOTS = 4 };
static struct {
	volatile sig_atomic_t armed;
	int fd;
	char path[PATH_MAX];
} hidden[HIDDEN_SLOTS];
static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t committing; /* from the COMMIT on, unless it fails */

/* Fails (after a signal: store_interrupt) in a transaction; the progress
 * handler stops long statements, this the short ones. */
static int check_interrupt(const struct store *st, char **err)
{
	if (!interrupted || !st->in_txn)
		return 0;
	*err = xasprintf("%s: interrupted", st->path);
	return -1;
}

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
	if (check_interrupt(st, err) < 0)
		return -1;
	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		*err = xasprintf("%s: %s", st->path, msg ? msg : sqlite3_errmsg(st->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* The integer sql gives on db, the file at path (0 when it gives no row). */
static int db_int(sqlite3 *db, const char *path, const char *sql, int *out, char **err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		goto bad;
	int rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_finalize(s);
		goto bad;
	}
	*out = rc == SQLITE_ROW ? col_int32(s, 0) : 0;
	sqlite3_finalize(s);
	return 0;
bad:
	if (sqlite3_errcode(db) == SQLITE_NOTADB)
		*err = xasprintf("%s: not a trace.db (not an SQLite database)", path);
	else
		*err = xasprintf("%s: cannot read: %s", path, sqlite3_errmsg(db));
	return -1;
}

static int pragma_int(struct store *st, const char *sql, int *out, char **err)
{
	return db_int(st->db, st->path, sql, out, err);
}

/* Whether db has every table of schema v1 (those store_schema_sql creates,
 * which every trace.db has had), or a view by its name: a file without one
 * (made by hand, or damaged) would fail later with no word of why. */
static int check_tables(sqlite3 *db, const char *path, char **err)
{
	static const char create[] = "CREATE TABLE ";
	sqlite3_stmt *q;
	int rc = -1;
	if (sqlite3_prepare_v2(db,
			       "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view')"
			       " AND name = ?1 COLLATE NOCASE",
			       -1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	for (const char *p = store_schema_sql; (p = strstr(p, create)); p++) {
		p += strlen(create);
		int n = (int)strcspn(p, "( ");
		sqlite3_bind_text(q, 1, p, n, SQLITE_STATIC);
		int step = sqlite3_step(q);
		sqlite3_reset(q);
		if (step == SQLITE_DONE) {
			*err = xasprintf("%s: not a trace.db (it has no table '%.*s')", path, n, p);
			goto out;
		}
		if (step != SQLITE_ROW) {
			*err = xasprintf("%s: cannot read: %s", path, sqlite3_errmsg(db));
			goto out;
		}
	}
	rc = 0;
out:
	sqlite3_finalize(q);
	return rc;
}

int store_check_db(sqlite3 *db, const char *path, char **err)
{
	int app, ver;
	if (db_int(db, path, "PRAGMA application_id", &app, err) < 0 ||
	    db_int(db, path, "PRAGMA user_version", &ver, err) < 0)
		return -1;
	if (app != STORE_APPLICATION_ID) {
		*err =
		    xasprintf("%s: not a trace.db (an SQLite database of another program)", path);
		return -1;
	}
	if (ver > STORE_SCHEMA_VERSION) {
		*err = xasprintf("%s: schema version %d is newer than this grademl-tui (%d)", path,
				 ver, STORE_SCHEMA_VERSION);
		return -1;
	}
	if (ver < 1) {
		*err =
		    xasprintf("%s: not a trace.db (schema version %d; grademl-tui writes 1 to %d)",
			      path, ver, STORE_SCHEMA_VERSION);
		return -1;
	}
	return check_tables(db, path, err);
}

/* Checks that an existing file is a trace.db this version understands; 1
 * for an empty database opened to write, which gets the schema. */
static int check_file(struct store *st, char **err)
{
	int app, tables;
	if (pragma_int(st, "PRAGMA application_id", &app, err) < 0 ||
	    pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables, err) < 0)
		return -1;
	if (tables == 0 && app == 0 && st->mode == STORE_WRITE)
		return 1; /* an empty database: create the schema */
	return store_check_db(st->db, st->path, err) < 0 ? -1 : 0;
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

/* Adds each (table, column definition) of cols unless the table has it. */
static int add_columns(struct store *st, const char *const (*cols)[2], char **err)
{
	for (size_t i = 0; cols[i][0]; i++) {
		const char *table = cols[i][0], *col = cols[i][1];
		int had;
		char *sql = xasprintf("SELECT count(*) FROM pragma_table_info('%s')"
				      " WHERE name = '%.*s'",
				      table, (int)strcspn(col, " "), col);
		int rc = pragma_int(st, sql, &had, err);
		free(sql);
		if (rc < 0)
			return -1;
		if (had)
			continue;
		sql = xasprintf("ALTER TABLE %s ADD COLUMN %s", table, col);
		rc = store_exec(st, sql, err);
		free(sql);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Schema v5's tables, and its columns where they are missing. */
static int schema_v5(struct store *st, char **err)
{
	if (store_exec(st, store_schema_v5_sql, err) < 0)
		return -1;
	return add_columns(st, store_schema_v5_columns, err);
}

/* Schema v6: the mixes' table rebuilt, and other_ns where it is missing. */
static int schema_v6(struct store *st, char **err)
{
	if (store_exec(st, store_schema_v6_sql, err) < 0)
		return -1;
	return add_columns(st, store_schema_v6_columns, err);
}

/* Schema v7: device_ns, on launching calls and device work only before,
 * becomes the device time beneath every phase, which store_commit
 * computes for every phase of the file (devunion_write). */
static int schema_v7(struct store *st)
{
	st->device_dirty = 1;
	return 0;
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
	if (ver < 5 && schema_v5(st, err) < 0)
		return -1;
	if (ver < 6 && schema_v6(st, err) < 0)
		return -1;
	if (ver < 7 && schema_v7(st) < 0)
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
	    store_exec(st, store_schema_v4_sql, err) < 0 || schema_v5(st, err) < 0 ||
	    schema_v6(st, err) < 0 || add_kinds(st, err) < 0)
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

/* Fails the statement running in a transaction ("interrupted") once a
 * signal asked the import to stop (store_interrupt); the caller rolls back. */
static int on_progress(void *arg)
{
	const struct store *st = arg;
	return interrupted && st->in_txn;
}

/*
 * Only a regular file is a trace.db.  store_check_path refuses anything
 * else by its stat(2) alone, without opening it: open(2) of a FIFO for
 * reading waits for a writer and a read of one waits for data, so a FIFO
 * named as trace.db hung every command, and a device would be read or
 * written.  The path may change between that look and SQLite's own open,
 * so SQLite's open(2) (its unix VFS's "open" system call, used for every
 * file it opens) is replaced, once, by open_no_wait: it never waits, and
 * refuses a FIFO or a socket once it has it, before anything reads it.
 */
static int (*sqlite_open)(const char *, int, int);

static int open_no_wait(const char *file, int flags, int mode)
{
	int fd = sqlite_open(file, flags | O_NONBLOCK, mode);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0)
		return fd;
	if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)) {
		close(fd);
		errno = ENXIO;
		return -1;
	}
	/* a device keeps O_NONBLOCK: a terminal's read must not wait either */
	int fl;
	if (S_ISREG(sb.st_mode) && !(flags & O_NONBLOCK) && (fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

static void install_open_no_wait(void)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find("unix");
	if (!vfs || vfs->iVersion < 3 || !vfs->xGetSystemCall || !vfs->xSetSystemCall)
		return;
	sqlite_open = (int (*)(const char *, int, int))vfs->xGetSystemCall(vfs, "open");
	if (sqlite_open)
		vfs->xSetSystemCall(vfs, "open", (sqlite3_syscall_ptr)open_no_wait);
}

/* Before SQLite opens a file of this process (it initialises SQLite: call
 * it after any sqlite3_config). */
static void guard_opens(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install_open_no_wait);
}

/* What a file of that mode is when it is no regular file; NULL when it is. */
static const char *not_a_file(mode_t mode)
{
	if (S_ISREG(mode))
		return NULL;
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "no regular file";
}

int store_check_path(const char *path, struct stat *sb, char **err)
{
	struct stat own;
	if (!sb)
		sb = &own;
	if (stat(path, sb) < 0) {
		if (errno == ENOENT)
			return 0;
		*err = xasprintf("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	const char *what = not_a_file(sb->st_mode);
	if (!what)
		return 1;
	*err = xasprintf("%s: is %s, not a trace.db", path, what);
	return -1;
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
	guard_opens();
	if (sqlite3_open_v2(file, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot open: %s", st->path,
				 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		return -1;
	}
	sqlite3_extended_result_codes(st->db, 0);
	sqlite3_busy_timeout(st->db, 2000);
	if (flags & SQLITE_OPEN_READWRITE)
		sqlite3_progress_handler(st->db, 1000, on_progress, st);
	return 0;
}

/* Settings of a write connection, once the file is known to be a trace.db
 * (on another file they would fail with a less helpful message). */
static int write_settings(struct store *st, char **err)
{
	return store_exec(
	    st,
	    "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8192; PRAGMA threads = 2;"
	    " PRAGMA temp_store = FILE; PRAGMA wal_autocheckpoint = 0",
	    err);
}

/* Whether path names the file open as fd (not one made since under its name). */
static int same_file(const char *path, int fd)
{
	struct stat a, b;
	return lstat(path, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static void drop_hidden(void)
{
	for (int i = 0; i < HIDDEN_SLOTS; i++)
		if (hidden[i].armed && same_file(hidden[i].path, hidden[i].fd))
			unlink(hidden[i].path);
}

void store_interrupt(int sig)
{
	if (!interrupted)
		interrupted = sig;
	drop_hidden();
}

int store_interrupted(void)
{
	return interrupted;
}

int store_committing(void)
{
	return committing;
}

static void hidden_arm(struct store *st)
{
	static int registered;
	if (!registered && atexit(drop_hidden) == 0)
		registered = 1;
	for (int i = 0; i < HIDDEN_SLOTS; i++) {
		if (hidden[i].armed || strlen(st->tmp_path) >= sizeof(hidden[i].path))
			continue;
		memcpy(hidden[i].path, st->tmp_path, strlen(st->tmp_path) + 1);
		hidden[i].fd = st->tmp_fd;
		hidden[i].armed = 1;
		st->slot = i;
		return;
	}
}

static void hidden_disarm(struct store *st)
{
	if (st->slot >= 0)
		hidden[st->slot].armed = 0;
	st->slot = -1;
}

/* Creates the hidden file beside path (model/util/aside.h) with permissions
 * perm: st->tmp_path, st->tmp_fd, flock()ed while it exists. */
static int make_temp(struct store *st, const char *path, mode_t perm, char **err)
{
	char *tmp = NULL;
	int fd = aside_create(path, &tmp);
	if (fd < 0 || fchmod(fd, perm) < 0) {
		*err = xasprintf("%s: cannot create: %s", st->path, strerror(errno));
		if (fd >= 0) {
			unlink(tmp);
			close(fd);
		}
		free(tmp);
		return -1;
	}
	st->tmp_path = tmp;
	st->tmp_fd = fd;
	hidden_arm(st);
	return 0;
}

/* Closes the hidden file and removes it if it is still ours and at its name. */
static void close_temp(struct store *st)
{
	if (st->tmp_path && st->tmp_fd >= 0 && same_file(st->tmp_path, st->tmp_fd))
		unlink(st->tmp_path);
	hidden_disarm(st);
	if (st->tmp_fd >= 0)
		close(st->tmp_fd);
	st->tmp_fd = -1;
	free(st->tmp_path);
	st->tmp_path = NULL;
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
	close_temp(st);
}

/* Whether the connection is in WAL mode. */
static int in_wal(sqlite3 *db)
{
	sqlite3_stmt *s;
	int wal = 0;
	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW) {
			wal = !strcmp(col_text(s, 0), "wal");
		}
		sqlite3_finalize(s);
	}
	return wal;
}

static sqlite3_file *main_file(struct store *st)
{
	sqlite3_file *f = NULL;
	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
	    !f || !f->pMethods)
		return NULL;
	return f;
}

/* Begins the transaction on a file written in place, in WAL mode (see the
 * top of this file).  A reader's store_tidy may take the file back to
 * rollback mode between the switch and BEGIN: then once more. */
static int begin_in_place(struct store *st, char **err)
{
	if (st->memory) /* no file to keep as it was: SQLite's own rollback */
		return store_exec(st, "BEGIN IMMEDIATE", err);
	for (int tries = 0;; tries++) {
		if (store_exec(st, "PRAGMA journal_mode = WAL; BEGIN IMMEDIATE", err) < 0)
			return -1;
		if (in_wal(st->db))
			break;
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		if (tries == 3) {
			*err = xasprintf("%s: cannot switch to WAL mode", st->path);
			return -1;
		}
	}
	st->wal = 1;
	st->grown = 0;
	sqlite3_file *f = main_file(st);
	sqlite3_int64 n;
	st->base_bytes = f && f->pMethods->xFileSize(f, &n) == SQLITE_OK ? n : -1;
	return 0;
}

/* Claims the room trace.db needs for the checkpoint to copy the transaction
 * into it, before the commit: a full disk or a file size limit then fails
 * the import, not the checkpoint after its commit.  Only the file's end
 * grows (zeros past the pages its header counts), so a copy of the file
 * still reads as before. */
static int reserve_room(struct store *st, char **err)
{
	int pages, page_size;
	if (pragma_int(st, "PRAGMA page_count", &pages, err) < 0 ||
	    pragma_int(st, "PRAGMA page_size", &page_size, err) < 0)
		return -1;
	sqlite3_int64 want = (sqlite3_int64)pages * page_size;
	if (st->base_bytes < 0 || want <= st->base_bytes)
		return 0;
	/* the hint grows the file only in whole chunks: one page each */
	sqlite3_file_control(st->db, "main", SQLITE_FCNTL_CHUNK_SIZE, &page_size);
	st->grown = 1;
	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_SIZE_HINT, &want) != SQLITE_OK) {
		*err = xasprintf("%s: cannot grow the file to %lld bytes for the commit: disk full"
				 " or file size limit",
				 st->path, (long long)want);
		return -1;
	}
	return 0;
}

/* Takes a file written in place back to rollback mode once its transaction
 * has ended: the checkpoint copies a commit into it, and the -wal and -shm
 * go.  With another connection open this fails, and the file stays in WAL
 * mode until the next open (store_tidy). */
static void leave_wal(struct store *st)
{
	if (!st->wal)
		return;
	st->wal = 0;
	sqlite3_exec(st->db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE", NULL,
		     NULL, NULL);
}

void store_tidy(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	char *err = NULL;
	if (store_check_path(path, NULL, &err) <= 0) {
		free(err);
		return;
	}
	guard_opens();
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		SQLITE_OK ||
	    sqlite3_db_readonly(db, "main") == 1)
		goto out;
	int ours = sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &s, NULL) == SQLITE_OK &&
		   sqlite3_step(s) == SQLITE_ROW && col_int32(s, 0) == STORE_APPLICATION_ID;
	sqlite3_finalize(s);
	/* another program's database is not ours to change */
	if (!ours || !in_wal(db) ||
	    sqlite3_exec(db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL) != SQLITE_OK ||
	    in_wal(db))
		goto out;
	/* the room a killed import's commit reserved (zeros past the pages the
	 * header counts) goes too */
	sqlite3_file *f = NULL;
	sqlite3_int64 size;
	if (sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
		goto out;
	int pages = 0, page_size = 0;
	if (sqlite3_prepare_v2(db, "SELECT * FROM pragma_page_count, pragma_page_size", -1, &s,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW) {
		pages = col_int32(s, 0);
		page_size = col_int32(s, 1);
	}
	sqlite3_finalize(s);
	if (pages > 0 &&
	    sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) == SQLITE_OK && f &&
	    f->pMethods && f->pMethods->xFileSize(f, &size) == SQLITE_OK &&
	    size > (sqlite3_int64)pages * page_size)
		f->pMethods->xTruncate(f, (sqlite3_int64)pages * page_size);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
out:
	sqlite3_close(db);
}

/* Where a new file is built aside: st->target is the name publish creates,
 * or, for an empty file (0 bytes, which no reader takes for a trace.db),
 * the file it replaces, through any symbolic link. */
static int open_aside(struct store *st, const struct stat *sb, int exists, char **err)
{
	mode_t perm;
	if (exists) {
		if (!(st->target = realpath(st->path, NULL))) {
			*err = xasprintf("%s: cannot open: %s", st->path, strerror(errno));
			return -1;
		}
		st->replace = 1;
		st->empty_dev = sb->st_dev;
		st->empty_ino = sb->st_ino;
		perm = sb->st_mode & 07777;
	} else {
		st->target = xstrdup(st->path);
		mode_t mask = umask(0);
		umask(mask);
		perm = 0666 & ~mask;
	}
	aside_sweep(st->target);
	return make_temp(st, st->target, perm, err);
}

int store_open(const char *path, enum store_mode mode, struct store **out, char **err)
{
	struct store *st = xcalloc(1, sizeof(*st));
	st->path = xstrdup(path);
	st->mode = mode;
	st->tmp_fd = st->slot = -1;
	st->memory = !strcmp(path, STORE_MEMORY);
	struct stat sb = {0};
	int exists = st->memory ? 1 : store_check_path(path, &sb, err);
	if (exists < 0)
		goto fail;
	if (!exists && mode == STORE_READ) {
		*err = xasprintf("%s: cannot open: %s", path, strerror(ENOENT));
		goto fail;
	}
	if (mode == STORE_WRITE && !st->memory && (!exists || sb.st_size == 0)) {
		if (open_aside(st, &sb, exists, err) < 0)
			goto fail;
	} else if (!st->memory) {
		store_tidy(path);
		if (mode == STORE_WRITE)
			aside_sweep(path);
	}
	int flags = mode == STORE_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (open_db(st, st->tmp_path ? st->tmp_path : path, flags, err) < 0)
		goto fail;
	int fresh = st->tmp_path ? 1 : check_file(st, err);
	if (fresh < 0 || (mode == STORE_WRITE && write_settings(st, err) < 0))
		goto fail;
	if (!fresh && col_check_ids(st->db, path, err) < 0)
		goto fail;
	if (fresh) {
		/* schema creation belongs to the first import's transaction */
		if (st->tmp_path ? store_exec(st,
					      "PRAGMA page_size = 8192; PRAGMA journal_mode = OFF;"
					      " BEGIN IMMEDIATE",
					      err) < 0
				 : begin_in_place(st, err) < 0)
			goto fail;
		st->in_txn = 1;
		/* an SQLite file with no tables, which another import may have
		 * filled meanwhile: look again now that we hold the write lock */
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

/* Host aliases hold for the transaction they were given in. */
static void forget_aliases(struct store *st)
{
	for (size_t i = 0; i < st->naliases; i++) {
		free(st->alias[i]);
		free(st->canonical[i]);
	}
	free(st->alias);
	free(st->canonical);
	st->alias = st->canonical = NULL;
	st->naliases = 0;
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
	forget_aliases(st);
	free(st->refresh);
	free(st->target);
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

char *store_phase_name(struct store *st, int64_t id, int cut)
{
	sqlite3_stmt *q;
	char *s = NULL;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT CASE WHEN ?2 > 0 THEN substr(n.text, 1, ?2) ELSE n.text END"
			       " FROM phases p JOIN strings n ON n.id = p.name_id WHERE p.id = ?1",
			       -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(q, 1, id);
		sqlite3_bind_int(q, 2, cut);
		if (sqlite3_step(q) == SQLITE_ROW)
			s = col_strdup_or_null(q, 0);
		sqlite3_finalize(q);
	}
	return s ? s : xstrdup("?");
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
	if (check_interrupt(st, err) < 0)
		return -1;
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
			id = col_int(s, 0);
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
	committing = 0;
	if (!st->in_txn) {
		if (st->tmp_path ? store_exec(st, "BEGIN IMMEDIATE", err) < 0
				 : begin_in_place(st, err) < 0)
			return -1;
		st->in_txn = 1;
	}
	if (migrate(st, err) < 0 || add_kinds(st, err) < 0)
		return -1;
	st->next_phase_id = max_phase_id(st) + 1;
	/* a first import builds the indexes after its rows; not in memory,
	 * where imports are small and a schema change costs more (fuzzing) */
	if (st->next_phase_id == 1 && !st->indexes_deferred && !st->memory) {
		finalize_all(st);
		if (store_exec(st, drop_indexes_sql, err) < 0)
			return -1;
		st->indexes_deferred = 1;
	}
	return 0;
}

/* Replaces the empty file st->target by the new one, unless another import
 * did first: under the flock every import replacing it takes, the empty
 * file must still be at its name, empty, and unlocked by SQLite. */
static int replace_empty(struct store *st, char **err)
{
	int fd = open(st->target, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat now;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int rc = -1;
	if (fd >= 0 && flock(fd, LOCK_EX) == 0 && fstat(fd, &now) == 0 &&
	    now.st_dev == st->empty_dev && now.st_ino == st->empty_ino && now.st_size == 0 &&
	    same_file(st->target, fd) && fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_UNLCK) {
		if (rename(st->tmp_path, st->target) == 0)
			rc = 0;
		else
			*err = xasprintf("%s: cannot create: %s", st->path, strerror(errno));
	} else {
		*err = xasprintf("%s: written by another import meanwhile; nothing imported",
				 st->path);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Gives the committed temp file its final name: link(), which, unlike
 * rename(), fails when another import created path meanwhile, or rename()
 * over the empty file it replaces; then reopens the connection on path so
 * that later transactions write beside it. */
static int publish(struct store *st, char **err)
{
	if (st->replace) {
		if (replace_empty(st, err) < 0)
			return -1;
	} else if (link(st->tmp_path, st->target) < 0) {
		if (errno == EEXIST)
			*err = xasprintf(
			    "%s: created by another import meanwhile; nothing imported", st->path);
		else
			*err = xasprintf("%s: cannot create: %s", st->path, strerror(errno));
		return -1;
	}
	finalize_all(st);
	sqlite3_close(st->db);
	st->db = NULL;
	close_temp(st);
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

int store_index_now(struct store *st, char **err)
{
	if (!st->indexes_deferred)
		return 0;
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
	return 0;
}

/* The device time beneath every phase, once the transaction added device
 * work: the union of that work's intervals (devunion.h). */
static int spread_device(struct store *st, char **err)
{
	if (!st->device_dirty)
		return 0;
	st->device_dirty = 0;
	int rc = devunion_write(st->db, err);
	timing_mark("device time above the traces");
	return rc;
}

int store_commit(struct store *st, char **err)
{
	if (!st->db) {
		*err = xasprintf("%s: connection closed after an earlier error", st->path);
		return -1;
	}
	if (store_index_now(st, err) < 0 || spread_device(st, err) < 0)
		return -1;
	if (st->wal && reserve_room(st, err) < 0)
		return -1;
	committing = 1;
	if (store_exec(st,
		       "INSERT OR REPLACE INTO meta VALUES ('updated_at',"
		       " strftime('%Y-%m-%dT%H:%M:%SZ')); COMMIT",
		       err) < 0) {
		committing = 0;
		return -1;
	}
	st->in_txn = 0;
	st->grown = 0;
	forget_aliases(st);
	leave_wal(st);
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
		sqlite3_file *f = st->grown ? main_file(st) : NULL;
		if (f)
			f->pMethods->xTruncate(f, st->base_bytes); /* the room reserve_room took */
		st->grown = 0;
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		leave_wal(st);
	}
	st->in_txn = 0;
	st->indexes_deferred = 0;
	st->nrefresh = 0;
	st->device_dirty = 0; /* the rows rolled back */
	forget_aliases(st);
}

int64_t store_intern(struct store *st, const char *str, size_t n, char **err)
{
	sqlite3_stmt *g = stmt(st, S_INTERN_GET, err);
	if (!g)
		return -1;
	sqlite3_bind_text(g, 1, str, (int)n, SQLITE_STATIC);
	int rc = sqlite3_step(g);
	int64_t id = rc == SQLITE_ROW ? col_int(g, 0) : 0;
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

/* Whether one of the n phases at p is device work, whose time store_commit
 * spreads above it. */
static void note_device_work(struct store *st, const struct phase_row *p, size_t n)
{
	for (size_t i = 0; i < n && !st->device_dirty; i++)
		if (p[i].kind == PHASE_KERNEL || p[i].kind == PHASE_MEMCPY ||
		    p[i].kind == PHASE_MEMSET)
			st->device_dirty = 1;
}

int store_add_phase(struct store *st, const struct phase_row *p, char **err)
{
	sqlite3_stmt *s = stmt(st, S_PHASE, err);
	if (!s)
		return -1;
	bind_phase(s, 0, p);
	note_device_work(st, p, 1);
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
 * Only for a new file built aside, through the descriptor the store holds
 * (opening and closing another would drop SQLite's POSIX locks on it); a
 * file written in place takes its pages in the -wal. */
static void start_writeback(const struct store *st)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (st->tmp_fd >= 0)
		(void)sync_file_range(st->tmp_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
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
		note_device_work(st, p, STORE_PHASE_BATCH);
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

/* Runs statement which with two integers bound. */
static int run_int2(struct store *st, int which, int64_t a, int64_t b, char **err)
{
	sqlite3_stmt *s = stmt(st, which, err);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
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
	return run_int2(st, S_TRACK_SPANS, track_id, spans, err);
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
	int64_t id = rc == SQLITE_ROW ? col_int(s, 0) : 0;
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
		size_t n;
		const char *text = col_text_n(s, 0, &n);
		sbuf_add(out, text, n);
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
	return run_int2(st, S_SHIFT_SAMPLES, source_id, offset_ns, err);
}

/* Workflow .. stream: nodes whose window is their children's. */
static int structural_kind(int kind)
{
	return kind >= PHASE_WORKFLOW && kind <= PHASE_STREAM;
}

int store_declared_window(struct store *st, int64_t node_id, int64_t *start, int64_t *end,
			  char **err)
{
	sqlite3_stmt *mf = stmt(st, S_MANIFEST_OF, err);
	if (!mf)
		return -1;
	sqlite3_bind_int64(mf, 1, node_id);
	int rc = sqlite3_step(mf), found = 0;
	if (rc == SQLITE_ROW && sqlite3_column_type(mf, 0) == SQLITE_INTEGER &&
	    sqlite3_column_type(mf, 1) == SQLITE_INTEGER) {
		*start = col_int(mf, 0);
		*end = col_int(mf, 1);
		found = *end >= *start;
	} else if (rc == SQLITE_ROW && !structural_kind(col_int32(mf, 2))) {
		*start = col_int(mf, 3);
		*end = col_int(mf, 4);
		found = 2;
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
	sqlite3_bind_int(q, 6, PHASE_PROFILER); /* the bookkeeping's window is no work's */
	while (node_id > 0) {
		sqlite3_bind_int64(q, 1, node_id);
		int rc = sqlite3_step(q);
		int has = rc == SQLITE_ROW && !col_null(q, 0);
		int64_t start = has ? col_int(q, 0) : 0;
		int64_t end = has ? col_int(q, 1) : 0;
		int64_t count = rc == SQLITE_ROW ? col_int(q, 2) : 0;
		sqlite3_reset(q);
		if (rc != SQLITE_ROW)
			return db_error(st, err, "cannot read phases");
		int64_t ms, me;
		int mw = store_declared_window(st, node_id, &ms, &me, err);
		if (mw < 0)
			return -1;
		if (mw) {
			start = has && start < ms ? start : ms;
			end = has && end > me ? end : me;
			has = 1;
		}
		/* a hostile file's times may lie more than INT64_MAX apart */
		int64_t dur = end > start ? ns_dur(start, end) : 0;
		if (mw == 2) {
			/* a span or other recorded phase keeps its own time */
			sqlite3_stmt *w = stmt(st, S_PHASE_WIDEN, err);
			if (!w)
				return -1;
			sqlite3_bind_int64(w, 1, node_id);
			sqlite3_bind_int64(w, 2, start);
			sqlite3_bind_int64(w, 3, dur);
			sqlite3_bind_int64(w, 4, count);
			if (run(st, w, err) < 0)
				return -1;
		} else if (has &&
			   store_update_phase_window(st, node_id, start, dur, count, err) < 0) {
			return -1;
		}
		sqlite3_bind_int64(up, 1, node_id);
		rc = sqlite3_step(up);
		node_id = rc == SQLITE_ROW ? col_int(up, 0) : 0;
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
