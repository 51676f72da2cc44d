/*
 * Unit tests for model/store/store.h: creating a trace.db, the write path, the
 * schema markers and views, rollback leaving files as they were, a new file
 * appearing only at its first commit, and the refusal of files that are not
 * a trace.db.  Also import_step_node and import_files, which write names from
 * the command line through the store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/text.h"
#include "tests/testdir.h"
#include "model/util/xalloc.h"

struct fx {
	char dir[256];
	char path[320];
	char *before; /* a file's bytes kept for comparison; freed by the teardown */
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	if (testdir_make(f->dir, sizeof(f->dir), "store") < 0) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/trace.db", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	testdir_remove(f->dir);
	free(f->before);
	free(f);
	return 0;
}

static int exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* Temp files of a new trace.db in dir: ".trace.db.grademl.XXXXXX" (and its
 * journal), and other names that start as theirs do. */
static int count_temps(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, ".trace.db.", 10);
	closedir(d);
	return n;
}

/* The whole file, NUL-terminated; *len its size.  NULL when unreadable. */
static int64_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	size_t alloc = 4096, n = 0;
	char *buf = xmalloc(alloc + 1);
	size_t got;
	while ((got = fread(buf + n, 1, alloc - n, fp)) > 0) {
		n += got;
		if (n == alloc) {
			alloc *= 2;
			buf = xrealloc(buf, alloc + 1);
		}
	}
	fclose(fp);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void spit(const char *path, const void *data, size_t n)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

static void assert_same_file(const char *path, const char *before, size_t before_len)
{
	size_t len = 0;
	char *after = slurp(path, &len);
	int same = after && len == before_len && !memcmp(after, before, len);
	free(after);
	if (!same)
		fail_msg("%s changed: %zu bytes before, %zu after", path, before_len, len);
}

/* The file is byte for byte as before but for the header fields SQLite
 * rewrites when it switches the journal mode: the change counter (bytes
 * 24..27) and its copy (92..95), and, while in WAL mode (wal), the format
 * bytes 18 and 19.  So every page reads as before. */
static void assert_same_pages(const char *path, const char *before, size_t before_len, int wal)
{
	size_t len = 0;
	char *after = slurp(path, &len);
	size_t at = 0;
	int same = after && len == before_len && len >= 100;
	for (; same && at < len; at++)
		same = after[at] == before[at] || (at >= 24 && at < 28) || (at >= 92 && at < 96) ||
		       (wal && at >= 18 && at < 20);
	free(after);
	if (!same)
		fail_msg("%s changed: %zu bytes before, %zu after, first difference at byte %zu",
			 path, before_len, len, at ? at - 1 : 0);
}

/* path with suffix ("-wal", "-shm", "-journal") exists. */
static int exists_beside(const char *path, const char *suffix)
{
	char p[400];
	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return exists(p);
}

static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("cannot prepare %s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) != SQLITE_ROW)
		fail_msg("no row from %s", sql);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* First column of the first row as text, into buf; "(null)" for NULL. */
static const char *q_text(sqlite3 *db, const char *sql, char *buf, size_t n)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("cannot prepare %s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) != SQLITE_ROW)
		fail_msg("no row from %s", sql);
	const unsigned char *t = sqlite3_column_text(s, 0);
	snprintf(buf, n, "%s", t ? (const char *)t : "(null)");
	sqlite3_finalize(s);
	return buf;
}

static void assert_err_mentions(char *err, const char *path, const char *what)
{
	assert_non_null(err);
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", err);
	int ok = strstr(err, path) && strstr(err, what);
	free(err);
	if (!ok)
		fail_msg("error \"%s\" should mention \"%s\" and \"%s\"", msg, path, what);
}

/* store_open of path fails to read and to write, saying what. */
static void assert_refused(const char *path, const char *what)
{
	enum store_mode modes[] = {STORE_READ, STORE_WRITE};
	for (size_t m = 0; m < 2; m++) {
		struct store *st = NULL;
		char *err = NULL;
		assert_int_equal(store_open(path, modes[m], &st, &err), -1);
		assert_null(st);
		assert_err_mentions(err, path, what);
	}
}

struct ids {
	int64_t src, track, wf, thread, op, mm, add, cat, metric;
};

/* Creates the file at path with a small import: one source, a workflow, a
 * thread and an operator, an edge, an event, a metric and a diagnostic. */
static void write_sample(const char *path, struct ids *ids)
{
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(path, STORE_WRITE, &st, &err), 0);
	assert_null(err);
	assert_string_equal(store_path(st), path);
	assert_int_equal(store_begin(st, &err), 0);

	ids->mm = store_intern(st, "aten::mm", 8, &err);
	assert_true(ids->mm > 0);
	assert_true(store_intern(st, "aten::mm", 8, &err) == ids->mm);
	assert_true(store_intern(st, "aten::mm(extra)", 8, &err) == ids->mm);
	ids->add = store_intern(st, "aten::add", 9, &err);
	assert_true(ids->add > 0 && ids->add != ids->mm);
	ids->cat = store_intern(st, "cpu_op", 6, &err);
	assert_true(ids->cat > 0 && ids->cat != ids->mm && ids->cat != ids->add);
	int64_t wname = store_intern(st, "train", 5, &err);
	int64_t tname = store_intern(st, "thread 7", 8, &err);
	assert_true(wname > 0 && tname > 0 && wname != tname);

	/* an empty phases table: ids start at 1 and go up by one */
	ids->wf = store_reserve_phase_id(st);
	ids->thread = store_reserve_phase_id(st);
	ids->op = store_reserve_phase_id(st);
	assert_true(ids->wf == 1);
	assert_true(ids->thread == 2);
	assert_true(ids->op == 3);

	struct source_row sr = {.path = "/data/a.json",
				.format = "chrome",
				.anchor = "epoch",
				.host = "node1",
				.size_bytes = 1234,
				.rank = -1,
				.time_offset_ns = 5};
	ids->src = store_add_source(st, &sr, &err);
	assert_true(ids->src > 0);
	struct track_row tr = {.source_id = ids->src,
			       .kind = "thread",
			       .pid = "1",
			       .tid = "7",
			       .name = "thread 7",
			       .rank = 3,
			       .sort_index = 2,
			       .phase_id = ids->thread};
	ids->track = store_add_track(st, &tr, &err);
	assert_true(ids->track > 0);

	struct phase_row wf = {.id = ids->wf,
			       .kind = PHASE_WORKFLOW,
			       .name_id = wname,
			       .start_ns = 1000,
			       .dur_ns = 500,
			       .depth = 0};
	struct phase_row th = {.id = ids->thread,
			       .parent_id = ids->wf,
			       .kind = PHASE_THREAD,
			       .name_id = tname,
			       .track_id = ids->track,
			       .source_id = ids->src,
			       .start_ns = 1000,
			       .dur_ns = 400,
			       .self_ns = 300,
			       .child_count = 1,
			       .depth = 1};
	static const char attrs[] = "{\"shape\":[2,3]}trailing";
	struct phase_row op = {.id = ids->op,
			       .parent_id = ids->thread,
			       .kind = PHASE_OPERATOR,
			       .name_id = ids->mm,
			       .cat_id = ids->cat,
			       .track_id = ids->track,
			       .source_id = ids->src,
			       .start_ns = 1100,
			       .dur_ns = 100,
			       .self_ns = 100,
			       .depth = 2,
			       .attrs = attrs,
			       .attrs_len = 15};
	assert_int_equal(store_add_phase(st, &wf, &err), 0);
	assert_int_equal(store_add_phase(st, &th, &err), 0);
	assert_int_equal(store_add_phase(st, &op, &err), 0);
	assert_int_equal(store_update_phase_window(st, ids->wf, 900, 700, 1, &err), 0);
	assert_int_equal(store_add_launch_stats(st, ids->op, 2, 300, &err), 0);
	assert_true(store_find_child(st, ids->thread, PHASE_OPERATOR, "aten::mm", &err) == ids->op);
	assert_true(store_find_child(st, ids->thread, PHASE_KERNEL, "aten::mm", &err) == 0);
	assert_true(store_find_child(st, 0, PHASE_WORKFLOW, "train", &err) == ids->wf);

	char *edge = xasprintf("INSERT INTO edges(src, dst, kind) VALUES (%lld, %lld, %d)",
			       (long long)ids->thread, (long long)ids->op, EDGE_LAUNCH);
	assert_int_equal(store_exec(st, edge, &err), 0);
	free(edge);
	assert_int_equal(store_add_event(st, ids->src, ids->track, 1150, ids->add, "warn", ids->op,
					 "{\"k\":1}", 7, &err),
			 0);
	struct metric_row mr = {.source_id = ids->src,
				.host = "node1",
				.resource = "cpu",
				.name = "util",
				.unit = "%",
				.value_kind = "mean",
				.capacity = 100};
	ids->metric = store_add_metric(st, &mr, &err);
	assert_true(ids->metric > 0);
	assert_int_equal(store_add_sample(st, ids->metric, 1000, 12.5, &err), 0);
	assert_int_equal(store_add_sample(st, ids->metric, 2000, 87.25, &err), 0);
	assert_int_equal(
	    store_add_diagnostic(st, ids->src, "BAD_TS", 3, "bad ts", "{\"ts\":x}", &err), 0);
	assert_int_equal(store_finish_source(st, ids->src, 3, 1, 2, 4, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	assert_null(err);
	store_close(st);
}

static void test_store_create_and_read_back(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	assert_true(exists(f->path));

	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	sqlite3 *db = store_db(st);
	char buf[256];
	assert_true(q_int(db, "PRAGMA user_version") == STORE_SCHEMA_VERSION);
	assert_true(q_int(db, "PRAGMA user_version") == 7);
	assert_true(q_int(db, "PRAGMA application_id") == 0x47524d4c);
	assert_string_equal(
	    q_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", buf, sizeof(buf)),
	    "7");
	assert_true(q_int(db, "SELECT count(*) FROM phase_kinds") == PHASE_KIND_COUNT - 1);
	assert_string_equal(
	    q_text(db, "SELECT name FROM phase_kinds WHERE id = 11", buf, sizeof(buf)),
	    store_kind_name(PHASE_KERNEL));
	assert_string_equal(store_kind_name(PHASE_KERNEL), "kernel");
	assert_string_equal(store_kind_name(0), "none");
	assert_string_equal(store_kind_name(PHASE_KIND_COUNT), "none");

	assert_true(q_int(db, "SELECT count(*) FROM strings") == 5);
	assert_true(q_int(db, "SELECT count(*) FROM strings WHERE text = 'aten::mm'") == 1);
	assert_true(q_int(db, "SELECT count(*) FROM phases") == 3);

	/* the view resolves names, kinds and categories */
	sqlite3_stmt *s;
	assert_int_equal(
	    sqlite3_prepare_v2(db,
			       "SELECT name, kind, category, start_ns, end_ns, dur_ns,"
			       " self_ns, device_ns, child_count, depth, parent_id,"
			       " attrs, track_id, source_id FROM phases_v WHERE id = ?1",
			       -1, &s, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(s, 1, ids.op);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "aten::mm");
	assert_string_equal((const char *)sqlite3_column_text(s, 1), "operator");
	assert_string_equal((const char *)sqlite3_column_text(s, 2), "cpu_op");
	assert_true(sqlite3_column_int64(s, 3) == 1100);
	assert_true(sqlite3_column_int64(s, 4) == 1200);
	assert_true(sqlite3_column_int64(s, 5) == 100);
	assert_true(sqlite3_column_int64(s, 6) == 100);
	assert_true(sqlite3_column_int64(s, 7) == 300); /* launch stats */
	assert_true(sqlite3_column_int64(s, 8) == 2);
	assert_true(sqlite3_column_int64(s, 9) == 2);
	assert_true(sqlite3_column_int64(s, 10) == ids.thread);
	assert_string_equal((const char *)sqlite3_column_text(s, 11), "{\"shape\":[2,3]}");
	assert_true(sqlite3_column_int64(s, 12) == ids.track);
	assert_true(sqlite3_column_int64(s, 13) == ids.src);
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, ids.wf);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "train");
	assert_string_equal((const char *)sqlite3_column_text(s, 1), "workflow");
	assert_int_equal(sqlite3_column_type(s, 2), SQLITE_NULL); /* no category */
	assert_true(sqlite3_column_int64(s, 3) == 900);		  /* updated window */
	assert_true(sqlite3_column_int64(s, 5) == 700);
	assert_true(sqlite3_column_int64(s, 6) == 0);
	assert_true(sqlite3_column_int64(s, 8) == 1);
	assert_int_equal(sqlite3_column_type(s, 10), SQLITE_NULL); /* parent 0 is NULL */
	assert_int_equal(sqlite3_column_type(s, 11), SQLITE_NULL);
	assert_int_equal(sqlite3_column_type(s, 12), SQLITE_NULL); /* track 0 is NULL */
	sqlite3_finalize(s);

	assert_true(q_int(db, "SELECT count(*) FROM edges") == 1);
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM edges WHERE src = %lld AND dst = %lld"
		 " AND kind = 2",
		 (long long)ids.thread, (long long)ids.op);
	assert_true(q_int(db, sql) == 1);
	assert_string_equal(q_text(db,
				   "SELECT name || '|' || level || '|' || t_ns || '|' ||"
				   " phase_id || '|' || attrs FROM events_v",
				   buf, sizeof(buf)),
			    "aten::add|warn|1150|3|{\"k\":1}");
	assert_string_equal(q_text(db,
				   "SELECT host || '|' || resource || '|' || name || '|' ||"
				   " unit || '|' || value_kind || '|' || capacity FROM metrics",
				   buf, sizeof(buf)),
			    "node1|cpu|util|%|mean|100.0");
	assert_true(q_int(db, "SELECT count(*) FROM samples") == 2);
	assert_true(q_int(db, "SELECT sum(value) * 100 FROM samples") == 9975);
	assert_true(q_int(db, "SELECT max(t_ns) FROM samples") == 2000);
	assert_string_equal(q_text(db,
				   "SELECT code || '|' || count || '|' || message || '|' ||"
				   " example FROM diagnostics",
				   buf, sizeof(buf)),
			    "BAD_TS|3|bad ts|{\"ts\":x}");
	assert_string_equal(q_text(db,
				   "SELECT path || '|' || format || '|' || anchor || '|' ||"
				   " host || '|' || size_bytes || '|' || time_offset_ns || '|' ||"
				   " phases || '|' || events || '|' || samples || '|' || dropped ||"
				   " '|' || (rank IS NULL) FROM sources",
				   buf, sizeof(buf)),
			    "/data/a.json|chrome|epoch|node1|1234|5|3|1|2|4|1");
	assert_string_equal(q_text(db,
				   "SELECT kind || '|' || pid || '|' || tid || '|' || name ||"
				   " '|' || rank || '|' || sort_index || '|' || phase_id ||"
				   " '|' || (host IS NULL) FROM tracks",
				   buf, sizeof(buf)),
			    "thread|1|7|thread 7|3|2|2|1");

	/* a read-only store takes no transaction */
	assert_int_equal(store_begin(st, &err), -1);
	assert_err_mentions(err, f->path, "read-only");
	store_close(st);
}

/* store_add_phases: full batches and a remainder, every column in place. */
static void test_store_add_phases_batches(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t name = store_intern(st, "op", 2, &err);
	enum { N = 2 * STORE_PHASE_BATCH + 5 };
	struct phase_row rows[N];
	char attrs[N][24];
	for (int i = 0; i < N; i++) {
		snprintf(attrs[i], sizeof(attrs[i]), "{\"i\":%d}", i);
		rows[i] = (struct phase_row){.id = store_reserve_phase_id(st),
					     .parent_id = i ? rows[0].id : 0,
					     .kind = PHASE_OPERATOR,
					     .name_id = name,
					     .start_ns = 1000 * i,
					     .dur_ns = i,
					     .self_ns = i / 2,
					     .child_count = i == 0 ? N - 1 : 0,
					     .depth = i ? 1 : 0,
					     .attrs = i % 3 ? attrs[i] : NULL,
					     .attrs_len = i % 3 ? strlen(attrs[i]) : 0};
	}
	assert_int_equal(store_add_phases(st, rows, N, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	sqlite3 *db = store_db(st);
	char buf[64];
	assert_true(q_int(db, "SELECT count(*) FROM phases") == N);
	assert_true(q_int(db, "SELECT sum(start_ns) FROM phases") == 1000LL * N * (N - 1) / 2);
	assert_true(q_int(db, "SELECT count(*) FROM phases WHERE attrs IS NULL") == (N + 2) / 3);
	assert_true(q_int(db, "SELECT count(*) FROM phases WHERE parent_id IS NULL") == 1);
	assert_string_equal(
	    q_text(db, "SELECT attrs FROM phases WHERE dur_ns = 35", buf, sizeof(buf)),
	    "{\"i\":35}");
	store_close(st);
}

/* Events in batches and alone: ids in the order given, every column kept,
 * NULL where a field says none. */
static void test_store_add_events_batches(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t name = store_intern(st, "ev", 2, &err);
	struct source_row sr = {
	    .path = "t.json", .format = "chrome", .anchor = "epoch", .rank = -1};
	int64_t src = store_add_source(st, &sr, &err);
	enum { N = 2 * STORE_EVENT_BATCH + 3 };
	struct event_row rows[N];
	char attrs[N][24];
	for (int i = 0; i < N; i++) {
		snprintf(attrs[i], sizeof(attrs[i]), "{\"i\":%d}", i);
		rows[i] = (struct event_row){.source_id = src,
					     .track_id = i % 2 ? 0 : 1 + i,
					     .t_ns = 1000 * i,
					     .name_id = name,
					     .phase_id = i % 5 ? 100 + i : 0,
					     .level = i == 7 ? "warn" : NULL,
					     .attrs = i % 3 ? attrs[i] : NULL,
					     .attrs_len = i % 3 ? strlen(attrs[i]) : 0};
	}
	assert_int_equal(store_add_events(st, rows, N, &err), 0);
	assert_int_equal(store_add_event(st, src, 0, 5, name, NULL, 0, NULL, 0, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	sqlite3 *db = store_db(st);
	char buf[64];
	assert_true(q_int(db, "SELECT count(*) FROM events") == N + 1);
	/* ids follow the order: t_ns = 1000 * (id - 1) for the batch */
	char sql[160];
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM events WHERE id <= %d AND t_ns <> 1000 * (id - 1)"
		 " OR id = %d AND t_ns <> 5",
		 N, N + 1);
	assert_true(q_int(db, sql) == 0);
	assert_true(q_int(db, "SELECT count(*) FROM events WHERE track_id IS NULL") == N / 2 + 1);
	assert_true(q_int(db, "SELECT count(*) FROM events WHERE phase_id IS NULL") ==
		    (N + 4) / 5 + 1);
	assert_true(q_int(db, "SELECT count(*) FROM events WHERE attrs IS NULL") ==
		    (N + 2) / 3 + 1);
	assert_string_equal(q_text(db, "SELECT level FROM events WHERE id = 8", buf, sizeof(buf)),
			    "warn");
	assert_string_equal(q_text(db, "SELECT attrs FROM events WHERE id = 35", buf, sizeof(buf)),
			    "{\"i\":34}");
	store_close(st);
}

/* Whether this process holds a POSIX lock on path (from /proc/locks). */
static int holds_posix_lock(const char *path)
{
	struct stat sb;
	char line[256], ino[32];
	if (stat(path, &sb) < 0)
		return 0;
	snprintf(ino, sizeof(ino), ":%llu", (unsigned long long)sb.st_ino);
	FILE *f = fopen("/proc/locks", "r");
	if (!f)
		return 0;
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		long pid;
		char kind[16], dev_ino[64];
		if (sscanf(line, "%*s %15s %*s %*s %ld %63s", kind, &pid, dev_ino) == 3 &&
		    !strcmp(kind, "POSIX") && pid == (long)getpid()) {
			size_t n = strlen(dev_ino), k = strlen(ino);
			found = n >= k && !strcmp(dev_ino + n - k, ino);
		}
	}
	fclose(f);
	return found;
}

/* A bulk load into an existing file (here one that has the schema only) is
 * written in place: it keeps its locks to the end, however many phases it
 * adds (the write-back hint given for new files would drop SQLite's POSIX
 * locks if it opened and closed this file, and another process could then
 * write). */
static void test_store_in_place_keeps_lock(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_commit(st, &err), 0); /* the schema only */
	assert_int_equal(store_begin(st, &err), 0);
	int64_t name = store_intern(st, "op", 2, &err);
	enum { N = (1 << 18) + 4 * STORE_PHASE_BATCH };
	struct phase_row *rows = xcalloc(N, sizeof(*rows));
	for (int i = 0; i < N; i++)
		rows[i] = (struct phase_row){.id = store_reserve_phase_id(st),
					     .kind = PHASE_OPERATOR,
					     .name_id = name,
					     .start_ns = i,
					     .dur_ns = 1};
	assert_int_equal(store_add_phases(st, rows, N, &err), 0);
	free(rows);
	/* SQLite's POSIX locks on the file are still this process's */
	assert_true(holds_posix_lock(f->path));
	assert_int_equal(store_commit(st, &err), 0);
	assert_true(q_int(store_db(st), "SELECT count(*) FROM phases") == N);
	store_close(st);
}

static void test_store_ids_continue(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	/* a second import continues after the largest phase id */
	assert_true(store_reserve_phase_id(st) == 4);
	assert_true(store_reserve_phase_id(st) == 5);
	/* interning sees the strings of the first import */
	assert_true(store_intern(st, "aten::add", 9, &err) == ids.add);
	int64_t fresh = store_intern(st, "new", 3, &err);
	assert_true(fresh > 0 && fresh != ids.add && fresh != ids.mm && fresh != ids.cat);
	struct phase_row p = {
	    .id = 5, .kind = PHASE_SPAN, .name_id = fresh, .start_ns = 1, .dur_ns = 1};
	assert_int_equal(store_add_phase(st, &p, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_true(store_reserve_phase_id(st) == 6);
	store_rollback(st);
	store_close(st);
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	assert_true(q_int(store_db(st), "SELECT count(*) FROM phases") == 4);
	store_close(st);
}

static void test_store_rollback_first_import(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	assert_false(exists(f->path));
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t name = store_intern(st, "x", 1, &err);
	struct phase_row p = {.id = store_reserve_phase_id(st),
			      .kind = PHASE_SPAN,
			      .name_id = name,
			      .start_ns = 1,
			      .dur_ns = 2};
	assert_int_equal(store_add_phase(st, &p, &err), 0);
	/* built aside: a killed import leaves nothing at the path */
	assert_false(exists(f->path));
	assert_int_equal(count_temps(f->dir), 1);
	store_rollback(st);
	assert_int_equal(count_temps(f->dir), 0);
	/* the store that lost its new file refuses another transaction */
	assert_int_equal(store_begin(st, &err), -1);
	assert_err_mentions(err, f->path, "closed");
	store_close(st);
	assert_false(exists(f->path));
	char j[400];
	snprintf(j, sizeof(j), "%s-journal", f->path);
	assert_false(exists(j));
	assert_int_equal(count_temps(f->dir), 0);

	/* closing without a commit is a rollback too */
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_true(store_intern(st, "y", 1, &err) > 0);
	store_close(st);
	assert_false(exists(f->path));
	assert_false(exists(j));
	assert_int_equal(count_temps(f->dir), 0);
}

/* `: > trace.db` then a failed import: the file was not ours to delete, and
 * it stays 0 bytes all along (built aside); a good import then replaces it,
 * keeping its permissions. */
static void test_store_empty_file_rollback(void **state)
{
	struct fx *f = *state;
	spit(f->path, "", 0);
	assert_int_equal(chmod(f->path, 0640), 0);
	char j[400];
	snprintf(j, sizeof(j), "%s-journal", f->path);
	for (int close_only = 0; close_only < 2; close_only++) {
		struct store *st = NULL;
		char *err = NULL;
		assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
		assert_int_equal(store_begin(st, &err), 0);
		assert_int_equal(store_exec(st, "PRAGMA cache_size = 8", &err), 0);
		int64_t name = store_intern(st, "lost", 4, &err);
		for (int i = 0; i < 3000; i++) {
			struct phase_row p = {.id = store_reserve_phase_id(st),
					      .kind = PHASE_SPAN,
					      .name_id = name,
					      .start_ns = i,
					      .dur_ns = 1};
			assert_int_equal(store_add_phase(st, &p, &err), 0);
		}
		assert_true(file_size(f->path) == 0); /* a copy now reads as before */
		assert_int_equal(count_temps(f->dir), 1);
		if (close_only) {
			store_close(st);
		} else {
			store_rollback(st);
			store_close(st);
		}
		assert_true(file_size(f->path) == 0);
		assert_false(exists(j));
		assert_int_equal(count_temps(f->dir), 0);
	}

	/* and a good import into it makes it a trace.db */
	struct ids ids;
	write_sample(f->path, &ids);
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	char ok[256];
	assert_string_equal(q_text(store_db(st), "PRAGMA integrity_check", ok, sizeof(ok)), "ok");
	assert_true(q_int(store_db(st), "SELECT count(*) FROM phases") == 3);
	assert_true(q_int(store_db(st), "PRAGMA application_id") == STORE_APPLICATION_ID);
	store_close(st);
	struct stat sb;
	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0640);
	assert_int_equal(count_temps(f->dir), 0);
}

/* Another process created the path while the new file was being built: the
 * commit must not replace or touch that file. */
static void test_store_commit_path_taken(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_true(store_intern(st, "mine", 4, &err) > 0);
	static const char other[] = "another import's bytes";
	spit(f->path, other, sizeof(other) - 1);
	assert_int_equal(store_commit(st, &err), -1);
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", err ? err : "");
	assert_err_mentions(err, f->path, "created by another import meanwhile");
	assert_non_null(strstr(msg, "nothing imported"));
	store_rollback(st);
	store_close(st);
	assert_same_file(f->path, other, sizeof(other) - 1);
	assert_int_equal(count_temps(f->dir), 0);
}

/* Two imports create the same missing file at once: the first commit wins,
 * the second fails, and its rollback leaves the winner's file whole. */
static void test_store_concurrent_create(void **state)
{
	struct fx *f = *state;
	struct store *a = NULL, *b = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &a, &err), 0);
	assert_int_equal(store_open(f->path, STORE_WRITE, &b, &err), 0);
	assert_int_equal(count_temps(f->dir), 2);
	struct store *both[2] = {a, b};
	const char *names[2] = {"from a", "from b"};
	for (int k = 0; k < 2; k++) {
		struct store *st = both[k];
		assert_int_equal(store_begin(st, &err), 0);
		int64_t name = store_intern(st, names[k], strlen(names[k]), &err);
		struct phase_row p = {.id = store_reserve_phase_id(st),
				      .kind = PHASE_WORKFLOW,
				      .name_id = name,
				      .start_ns = 5,
				      .dur_ns = 5};
		assert_int_equal(store_add_phase(st, &p, &err), 0);
	}
	assert_int_equal(store_commit(a, &err), 0);
	assert_int_equal(store_commit(b, &err), -1);
	assert_err_mentions(err, f->path, "another import");
	store_rollback(b);
	store_close(b);
	store_close(a);
	assert_int_equal(count_temps(f->dir), 0);

	struct store *st = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	char buf[256];
	assert_string_equal(q_text(store_db(st), "PRAGMA integrity_check", buf, sizeof(buf)), "ok");
	assert_string_equal(q_text(store_db(st), "SELECT name FROM phases_v", buf, sizeof(buf)),
			    "from a");
	store_close(st);
}

/* After the first commit the store works on the real file: a second
 * transaction journals beside it, and its rollback restores it. */
static void test_store_commit_reopens_at_path(void **state)
{
	struct fx *f = *state;
	mode_t old = umask(022);
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t name = store_intern(st, "first", 5, &err);
	for (int i = 0; i < 2000; i++) {
		struct phase_row p = {.id = store_reserve_phase_id(st),
				      .kind = PHASE_SPAN,
				      .name_id = name,
				      .start_ns = i,
				      .dur_ns = 2};
		assert_int_equal(store_add_phase(st, &p, &err), 0);
	}
	assert_int_equal(store_commit(st, &err), 0);
	umask(old);
	assert_int_equal(count_temps(f->dir), 0);
	struct stat sb;
	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644); /* as any new file, not mkstemp's 0600 */
	const char *file = sqlite3_db_filename(store_db(st), "main");
	assert_non_null(file);
	size_t fl = strlen(file), bl = strlen("/trace.db");
	assert_true(fl >= bl && !strcmp(file + fl - bl, "/trace.db"));
	char buf[256];
	assert_string_equal(q_text(store_db(st), "PRAGMA journal_mode", buf, sizeof(buf)),
			    "delete");
	assert_true(q_int(store_db(st), "PRAGMA page_size") == 8192);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_non_null(before);

	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_exec(st, "PRAGMA cache_size = 8", &err), 0);
	for (int64_t id = 1; id <= 2000; id++)
		assert_int_equal(store_update_phase_window(st, id, 7, 1000, 3, &err), 0);
	/* in WAL mode: the pages SQLite writes before the end go to the -wal */
	assert_true(exists_beside(f->path, "-wal"));
	assert_false(exists_beside(f->path, "-journal"));
	assert_same_pages(f->path, before, len, 1);
	store_rollback(st);
	assert_false(exists_beside(f->path, "-wal"));
	assert_false(exists_beside(f->path, "-shm"));
	assert_string_equal(q_text(store_db(st), "PRAGMA journal_mode", buf, sizeof(buf)),
			    "delete");
	assert_same_pages(f->path, before, len, 0);
	/* and a later transaction on the same store commits */
	assert_int_equal(store_begin(st, &err), 0);
	assert_true(store_intern(st, "third", 5, &err) > 0);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);

	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	assert_string_equal(q_text(store_db(st), "PRAGMA integrity_check", buf, sizeof(buf)), "ok");
	assert_true(q_int(store_db(st), "SELECT total(dur_ns) FROM phases") == 4000);
	assert_true(q_int(store_db(st), "SELECT count(*) FROM strings WHERE text = 'third'") == 1);
	store_close(st);
}

static void test_store_rollback_existing(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_non_null(before);
	assert_true(len > 0);

	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	/* pages written before the end must come back from the journal */
	assert_int_equal(store_exec(st, "PRAGMA cache_size = 8", &err), 0);
	int64_t name = store_intern(st, "rolled back", 11, &err);
	assert_true(name > 0);
	struct phase_row p = {.id = store_reserve_phase_id(st),
			      .kind = PHASE_SPAN,
			      .name_id = name,
			      .start_ns = 1,
			      .dur_ns = 2};
	assert_int_equal(store_add_phase(st, &p, &err), 0);
	struct source_row sr = {.path = "b", .format = "chrome", .anchor = "epoch", .rank = -1};
	assert_true(store_add_source(st, &sr, &err) > 0);
	for (int i = 0; i < 3000; i++)
		assert_int_equal(store_add_sample(st, ids.metric, i, i, &err), 0);
	assert_int_equal(store_update_phase_window(st, ids.op, 7, 1000, 3, &err), 0);
	assert_int_equal(store_add_diagnostic(st, 1, "X", 1, "m", NULL, &err), 0);
	/* SQLite did write pages before the end, all to the -wal: a copy of the
	 * file alone reads as before */
	assert_true(file_size(f->path) == (int64_t)len);
	assert_true(exists_beside(f->path, "-wal"));
	assert_same_pages(f->path, before, len, 1);
	store_rollback(st);
	store_close(st);

	assert_same_pages(f->path, before, len, 0);
	assert_false(exists_beside(f->path, "-journal"));
	assert_false(exists_beside(f->path, "-wal"));
	assert_false(exists_beside(f->path, "-shm"));
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	char ok[256];
	assert_string_equal(q_text(store_db(st), "PRAGMA integrity_check", ok, sizeof(ok)), "ok");
	assert_true(q_int(store_db(st), "SELECT count(*) FROM samples") == 2);
	assert_true(
	    q_int(store_db(st), "SELECT count(*) FROM strings WHERE text = 'rolled back'") == 0);
	store_close(st);
}

/* A second transaction on the store that created the file: its rollback must
 * still leave the committed file as it was, even when the transaction was big
 * enough for SQLite to write pages before the end. */
static void test_store_rollback_after_commit_same_session(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	enum { N = 3000 };
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t name = store_intern(st, "first", 5, &err);
	for (int i = 0; i < N; i++) {
		struct phase_row p = {.id = store_reserve_phase_id(st),
				      .kind = PHASE_SPAN,
				      .name_id = name,
				      .start_ns = i,
				      .dur_ns = 2};
		assert_int_equal(store_add_phase(st, &p, &err), 0);
	}
	assert_int_equal(store_commit(st, &err), 0);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_non_null(before);

	assert_int_equal(store_begin(st, &err), 0);
	/* a small page cache makes SQLite write pages before the commit, as a
	 * large import does with the default cache */
	assert_int_equal(store_exec(st, "PRAGMA cache_size = 8", &err), 0);
	for (int64_t id = 1; id <= N; id++)
		assert_int_equal(store_update_phase_window(st, id, 7, 1000, 3, &err), 0);
	int64_t second = store_intern(st, "second", 6, &err);
	assert_true(second > 0);
	for (int i = 0; i < N; i++) {
		struct phase_row q = {.id = store_reserve_phase_id(st),
				      .kind = PHASE_SPAN,
				      .name_id = second,
				      .start_ns = i,
				      .dur_ns = 1};
		assert_int_equal(store_add_phase(st, &q, &err), 0);
	}
	assert_true(file_size(f->path) == (int64_t)len); /* pages went to the -wal */
	assert_same_pages(f->path, before, len, 1);
	store_rollback(st);
	store_close(st);

	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	char ok[256];
	q_text(store_db(st), "PRAGMA integrity_check", ok, sizeof(ok));
	int64_t rows = q_int(store_db(st), "SELECT count(*) FROM phases");
	int64_t dur = q_int(store_db(st), "SELECT total(dur_ns) FROM phases");
	store_close(st);
	if (strcmp(ok, "ok"))
		fail_msg("after the rollback: integrity_check says \"%s\"", ok);
	assert_true(rows == N);
	assert_true(dur == 2 * N);
	assert_same_pages(f->path, before, len, 0);
}

/* The reads and fix-ups importers used to do in raw SQL. */
static void test_store_string_and_fixups(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	struct store *st = NULL;
	char *err = NULL;
	char buf[256];
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	sqlite3 *db = store_db(st);

	struct sbuf sb;
	sbuf_init(&sb);
	sbuf_adds(&sb, "stale");
	const char *t = store_string(st, ids.mm, &sb, &err);
	assert_non_null(t);
	assert_string_equal(t, "aten::mm");
	assert_string_equal(store_string(st, ids.cat, &sb, &err), "cpu_op");
	assert_true(sb.len == 6);
	assert_null(store_string(st, 9999, &sb, &err));
	assert_err_mentions(err, f->path, "no string with id 9999");
	sbuf_release(&sb);

	/* the source of write_sample has host node1: the file's host does not
	 * replace it; anchor, offset, rank and attrs do change */
	assert_int_equal(store_set_source_anchor(st, ids.src, "baseTimeNanoseconds", 77, 4, "other",
						 "{\"a\":1}", &err),
			 0);
	assert_string_equal(q_text(db,
				   "SELECT anchor || '|' || time_offset_ns || '|' || rank || '|' ||"
				   " host || '|' || attrs FROM sources WHERE id = 1",
				   buf, sizeof(buf)),
			    "baseTimeNanoseconds|77|4|node1|{\"a\":1}");
	struct source_row sr = {.path = "b.json", .format = "chrome", .anchor = "epoch", .rank = 2};
	int64_t src2 = store_add_source(st, &sr, &err);
	assert_true(src2 > ids.src);
	assert_int_equal(store_set_source_anchor(st, src2, "relative", -5, -1, NULL, NULL, &err),
			 0);
	snprintf(buf, sizeof(buf),
		 "SELECT (host IS NULL) + 2 * (rank IS NULL) + 4 * (attrs IS NULL) FROM sources"
		 " WHERE id = %lld AND anchor = 'relative' AND time_offset_ns = -5",
		 (long long)src2);
	assert_true(q_int(db, buf) == 7);
	assert_int_equal(store_set_source_anchor(st, src2, "relative", 0, -1, "h2", NULL, &err), 0);
	assert_int_equal(store_set_source_anchor(st, src2, "relative", 0, -1, NULL, NULL, &err), 0);
	assert_string_equal(q_text(db, "SELECT host FROM sources WHERE id = 2", buf, sizeof(buf)),
			    "h2");
	assert_int_equal(store_set_source_anchor(st, 999, "epoch", 0, -1, NULL, NULL, &err), -1);
	assert_err_mentions(err, f->path, "no source with id 999");

	assert_true(q_int(db, "SELECT count(*) FROM tracks WHERE phase_id IS NULL") == 0);
	assert_int_equal(store_clear_track_node(st, ids.track, &err), 0);
	assert_true(q_int(db, "SELECT count(*) FROM tracks WHERE phase_id IS NULL") == 1);
	assert_int_equal(store_clear_track_node(st, 999, &err), -1);
	assert_err_mentions(err, f->path, "no track with id 999");

	/* only the samples of the source's own metrics move */
	struct metric_row mr = {.source_id = src2, .name = "mem", .value_kind = "instant"};
	int64_t m2 = store_add_metric(st, &mr, &err);
	assert_true(m2 > ids.metric);
	assert_int_equal(store_add_sample(st, m2, 10, 1, &err), 0);
	assert_int_equal(store_shift_samples(st, ids.src, 1000, &err), 0);
	assert_string_equal(q_text(db,
				   "SELECT group_concat(t_ns, ',') FROM (SELECT t_ns FROM samples"
				   " ORDER BY metric_id, t_ns)",
				   buf, sizeof(buf)),
			    "2000,3000,10");
	assert_int_equal(store_shift_samples(st, src2, -10, &err), 0);
	assert_true(q_int(db, "SELECT min(t_ns) FROM samples") == 0);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
}

static void add_node(struct store *st, int64_t id, int64_t parent, int kind, int64_t start,
		     int64_t dur, int64_t children)
{
	char *err = NULL;
	char name[32];
	snprintf(name, sizeof(name), "n%lld", (long long)id);
	struct phase_row r = {.id = id,
			      .parent_id = parent,
			      .kind = kind,
			      .name_id = store_intern(st, name, strlen(name), &err),
			      .start_ns = start,
			      .dur_ns = dur,
			      .child_count = children};
	assert_true(r.name_id > 0);
	if (store_add_phase(st, &r, &err) < 0)
		fail_msg("store_add_phase: %s", err);
}

static const char *window_of(struct store *st, int64_t id, char *buf, size_t n)
{
	char sql[128];
	snprintf(
	    sql, sizeof(sql),
	    "SELECT start_ns || '+' || dur_ns || '/' || child_count FROM phases WHERE id = %lld",
	    (long long)id);
	return q_text(store_db(st), sql, buf, n);
}

/* An empty step (or rank, process) has no time: it must not stretch its
 * parent's window back to 0, the Unix epoch. */
static void test_store_refresh_window(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	char buf[64];
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	add_node(st, 1, 0, PHASE_WORKFLOW, 0, 0, 0);
	add_node(st, 2, 1, PHASE_STEP, 0, 0, 0);
	add_node(st, 3, 2, PHASE_THREAD, 1000, 500, 1);
	add_node(st, 4, 3, PHASE_OPERATOR, 1100, 100, 0);
	add_node(st, 5, 2, PHASE_RANK, 0, 0, 0);      /* empty rank */
	add_node(st, 6, 2, PHASE_SPAN, 1400, 300, 0); /* a leaf counts even with no children */
	add_node(st, 7, 1, PHASE_STEP, 0, 0, 0);      /* empty step */
	add_node(st, 8, 1, PHASE_PROCESS, 0, 0, 0);   /* empty process */
	/* a first import into an empty file defers refreshes to its commit:
	 * the second transaction below refreshes at once */
	assert_int_equal(store_commit(st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_refresh_window(st, 2, &err), 0);
	assert_string_equal(window_of(st, 2, buf, sizeof(buf)), "1000+700/3");
	assert_string_equal(window_of(st, 1, buf, sizeof(buf)), "1000+700/3");
	/* refreshing an empty node changes nothing, above it neither */
	assert_int_equal(store_refresh_window(st, 7, &err), 0);
	assert_string_equal(window_of(st, 7, buf, sizeof(buf)), "0+0/0");
	assert_string_equal(window_of(st, 1, buf, sizeof(buf)), "1000+700/3");
	/* a structural node is no longer empty once it has children */
	add_node(st, 9, 7, PHASE_THREAD, 3000, 10, 0);
	assert_int_equal(store_refresh_window(st, 7, &err), 0);
	assert_string_equal(window_of(st, 7, buf, sizeof(buf)), "3000+10/1");
	assert_string_equal(window_of(st, 1, buf, sizeof(buf)), "1000+2010/3");
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
}

/* In a bulk load (no phases_parent yet) each refresh waits for the commit,
 * which indexes first: refreshed once, in order, with the same result as
 * refreshes done at once, and dropped with a rollback. */
static void test_store_refresh_deferred(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	char buf[64];
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	add_node(st, 1, 0, PHASE_WORKFLOW, 0, 0, 0);
	add_node(st, 2, 1, PHASE_STEP, 0, 0, 0);
	add_node(st, 3, 2, PHASE_THREAD, 1000, 500, 1);
	assert_int_equal(store_refresh_window(st, 2, &err), 0);
	assert_string_equal(window_of(st, 2, buf, sizeof(buf)), "0+0/0"); /* not yet */
	add_node(st, 4, 1, PHASE_STEP, 0, 0, 0);
	add_node(st, 5, 4, PHASE_THREAD, 4000, 100, 0);
	add_node(st, 6, 2, PHASE_SPAN, 1400, 300, 0); /* after step 2's refresh: still counts */
	assert_int_equal(store_refresh_window(st, 4, &err), 0);
	assert_int_equal(store_refresh_window(st, 2, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	assert_string_equal(window_of(st, 2, buf, sizeof(buf)), "1000+700/2");
	assert_string_equal(window_of(st, 4, buf, sizeof(buf)), "4000+100/1");
	assert_string_equal(window_of(st, 1, buf, sizeof(buf)), "1000+3100/2");
	store_close(st);

	/* a rolled-back bulk load leaves nothing to refresh at the next commit */
	char path2[sizeof(f->path) + 8];
	snprintf(path2, sizeof(path2), "%s/b.db", f->dir);
	assert_int_equal(store_open(path2, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_commit(st, &err), 0); /* the schema only; then in place */
	assert_int_equal(store_begin(st, &err), 0);
	add_node(st, 1, 0, PHASE_WORKFLOW, 0, 0, 0);
	assert_int_equal(store_refresh_window(st, 1, &err), 0);
	store_rollback(st);
	assert_int_equal(store_begin(st, &err), 0);
	add_node(st, 1, 0, PHASE_WORKFLOW, 5, 6, 0);
	add_node(st, 2, 1, PHASE_THREAD, 100, 10, 0); /* a refresh of 1 would take this in */
	assert_int_equal(store_commit(st, &err), 0);
	assert_string_equal(window_of(st, 1, buf, sizeof(buf)), "5+6/0");
	store_close(st);
}

/* Every text column a name can reach is valid UTF-8. */
static void assert_all_utf8(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("cannot prepare %s: %s", sql, sqlite3_errmsg(db));
	int rows = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		rows++;
		const char *t = (const char *)sqlite3_column_text(s, 0);
		int n = sqlite3_column_bytes(s, 0);
		if (t && !text_utf8_valid(t, (size_t)n))
			fail_msg("%s: row %d is not valid UTF-8", sql, rows);
	}
	sqlite3_finalize(s);
	assert_true(rows > 0);
}

static void test_import_step_node_repairs_names(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	char buf[64];
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	struct import_opts o = {.workflow = "wf\xff"};
	int64_t a = import_step_node(st, &o, "step\xc3(", &err);
	assert_true(a > 0);
	/* the same names find the same nodes */
	assert_true(import_step_node(st, &o, "step\xc3(", &err) == a);
	assert_true(q_int(store_db(st), "SELECT count(*) FROM phases") == 2);
	assert_all_utf8(store_db(st), "SELECT text FROM strings");
	assert_string_equal(q_text(store_db(st),
				   "SELECT name FROM phases_v WHERE kind = 'workflow'", buf,
				   sizeof(buf)),
			    "wf\xef\xbf\xbd");
	assert_string_equal(
	    q_text(store_db(st), "SELECT name FROM phases_v WHERE kind = 'step'", buf, sizeof(buf)),
	    "step\xef\xbf\xbd(");
	/* valid names are kept as they are */
	struct import_opts plain = {0};
	int64_t b = import_step_node(st, &plain, "train", &err);
	assert_true(b > a);
	assert_string_equal(q_text(store_db(st),
				   "SELECT group_concat(name, ',') FROM (SELECT name FROM phases_v"
				   " WHERE id > 2 ORDER BY id)",
				   buf, sizeof(buf)),
			    "workflow,train");
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
}

/* --host, --workflow and a step named after a file with invalid UTF-8. */
static void test_import_files_repairs_names(void **state)
{
	struct fx *f = *state;
	char trace[400];
	snprintf(trace, sizeof(trace),
		 "%s/tr\xff"
		 "ain.json",
		 f->dir);
	static const char json[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,"
				   "\"dur\":2,\"pid\":1,\"tid\":1}]}";
	spit(trace, json, sizeof(json) - 1);
	struct import_opts o = {.workflow = "w\xfe", .host = "ho\xc0st"};
	char *paths[] = {trace};
	char *err = NULL;
	if (import_files(f->path, paths, 1, NULL, &o, &err) < 0)
		fail_msg("import_files: %s", err);
	struct store *st = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	sqlite3 *db = store_db(st);
	assert_all_utf8(db, "SELECT text FROM strings");
	assert_all_utf8(db, "SELECT host FROM sources");
	char buf[64];
	assert_string_equal(q_text(db, "SELECT host FROM sources", buf, sizeof(buf)),
			    "ho\xef\xbf\xbdst");
	assert_string_equal(
	    q_text(db, "SELECT name FROM phases_v WHERE kind = 'workflow'", buf, sizeof(buf)),
	    "w\xef\xbf\xbd");
	assert_string_equal(
	    q_text(db, "SELECT name FROM phases_v WHERE kind = 'step'", buf, sizeof(buf)),
	    "tr\xef\xbf\xbd"
	    "ain");
	store_close(st);
}

static void test_store_refuses_garbage(void **state)
{
	struct fx *f = *state;
	char junk[3000];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)("this is not a database\n"[i % 23]);
	spit(f->path, junk, sizeof(junk));
	assert_refused(f->path, "not a trace.db");
	assert_same_file(f->path, junk, sizeof(junk));
}

static void test_store_refuses_foreign_sqlite(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);"
				      " INSERT INTO notes(body) VALUES ('keep me')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_non_null(before);
	enum store_mode modes[] = {STORE_WRITE, STORE_READ};
	for (size_t m = 0; m < 2; m++) {
		struct store *st = NULL;
		char *err = NULL;
		assert_int_equal(store_open(f->path, modes[m], &st, &err), -1);
		assert_null(st);
		assert_err_mentions(err, f->path, "not a trace.db");
		assert_same_file(f->path, before, len);
	}
}

static void test_store_refuses_newer_schema(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	char *sql = xasprintf("PRAGMA application_id = 1196576076;"
			      " PRAGMA user_version = %d; CREATE TABLE meta(k, v)",
			      STORE_SCHEMA_VERSION + 1);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	free(sql);
	sqlite3_close(db);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_non_null(before);
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), -1);
	assert_err_mentions(err, f->path, "newer");
	assert_same_file(f->path, before, len);
}

/* Runs sql on the file at path, outside the store (as an older version or
 * another program would have written it). */
static void exec_on_file(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* The file at path after a first write (an empty transaction), open. */
static struct store *first_write(const char *path)
{
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	return st;
}

/* A file of schema v1 (before the analyses' cache) is read as it is and
 * brought to v7 (v2's tables, then v3's, v4's and v5's, v6's HTA OTHER columns, v7's device_ns) by
 * its first write. */
static void test_store_migrates_v1(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	exec_on_file(
	    f->path,
	    "DROP TABLE imbalance; DROP TABLE issues; DROP TABLE critical_path;"
	    " DROP TABLE attribution; DROP TABLE attribution_fit; DROP TABLE gpu_breakdown;"
	    " DROP TABLE gpu_breakdown_mix; DROP TABLE gpu_breakdown_kernels;"
	    " DROP TABLE gpu_breakdown_streams; DROP TABLE gpu_breakdown_causes;"
	    " DROP TABLE gpu_breakdown_copies; DROP TABLE imbalance_meets;"
	    " DROP TABLE imbalance_ranks; PRAGMA user_version = 1;"
	    " UPDATE meta SET value = '1' WHERE key = 'schema_version'");
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	assert_true(q_int(store_db(st), "PRAGMA user_version") == 1);
	store_close(st);
	st = first_write(f->path);
	char buf[64];
	sqlite3 *db = store_db(st);
	assert_true(q_int(db, "PRAGMA user_version") == 7);
	assert_string_equal(
	    q_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", buf, sizeof(buf)),
	    "7");
	assert_true(q_int(db, "SELECT count(*) FROM pragma_table_info('gpu_breakdown')"
			      " WHERE name = 'other_ns'") == 1);
	assert_true(q_int(db, "SELECT count(*) FROM pragma_table_info('gpu_breakdown_mix')"
			      " WHERE name = 'other'") == 1);
	assert_true(q_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN"
			      " ('imbalance', 'issues', 'critical_path', 'attribution',"
			      " 'attribution_fit', 'gpu_breakdown', 'gpu_breakdown_mix',"
			      " 'gpu_breakdown_kernels', 'gpu_breakdown_streams',"
			      " 'imbalance_meets', 'imbalance_ranks', 'gpu_breakdown_causes',"
			      " 'gpu_breakdown_copies')") == 13);
	assert_true(q_int(db, "SELECT count(*) FROM pragma_table_info('critical_path')"
			      " WHERE name IN ('wait_ns', 'bound_id')") == 2);
	assert_true(q_int(db, "SELECT count(*) FROM pragma_table_info('issues')"
			      " WHERE name = 'cause'") == 1);
	assert_true(q_int(db, "SELECT count(*) FROM phases") > 0);
	store_close(st);
}

/* A file of schema v4: its critical_path table gains wait_ns and bound_id
 * at the first write, its rows kept. */
static void test_store_migrates_v4(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	exec_on_file(f->path, "DROP TABLE critical_path; CREATE TABLE critical_path(root_id INTEGER"
			      " NOT NULL, phase_id INTEGER NOT NULL, on_path_ns INTEGER NOT NULL,"
			      " whatif_ns INTEGER, makespan_ns INTEGER NOT NULL);"
			      " INSERT INTO critical_path VALUES (1, 2, 3, NULL, 5);"
			      " PRAGMA user_version = 4;"
			      " UPDATE meta SET value = '4' WHERE key = 'schema_version'");
	struct store *st = first_write(f->path);
	sqlite3 *db = store_db(st);
	assert_true(q_int(db, "PRAGMA user_version") == 7);
	assert_true(q_int(db, "SELECT count(*) FROM critical_path WHERE makespan_ns = 5 AND"
			      " wait_ns IS NULL AND bound_id IS NULL") == 1);
	store_close(st);
}

/* A file of schema v5 had device_ns on launching calls and device work
 * only: the first write recomputes it as the device time beneath every
 * phase, device work launched by device work included, and a parent cycle
 * of a damaged file (a kernel under it) does not stop the walk up. */
static void test_store_migrates_v5_device_ns(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	char *sql = xasprintf(
	    "INSERT INTO phases(id, parent_id, kind, name_id, start_ns, dur_ns, self_ns,"
	    " device_ns, depth) VALUES (100, %lld, %d, %lld, 1100, 10, 10, 30, 3),"
	    " (101, 100, %d, %lld, 1150, 30, 0, 34, 4), (102, 101, %d, %lld, 1190, 4, 0, 4, 5),"
	    " (103, %lld, %d, %lld, 1200, 7, 0, 7, 2), (104, %lld, %d, %lld, 1300, 'x', 0, 0, 2),"
	    " (200, 201, %d, %lld, 0, 1, 1, 0, 1), (201, 200, %d, %lld, 0, 1, 1, 0, 1),"
	    " (202, 200, %d, %lld, 0, 5, 0, 5, 2);"
	    " PRAGMA user_version = 5; UPDATE meta SET value = '5' WHERE key = 'schema_version'",
	    (long long)ids.op, PHASE_RUNTIME, (long long)ids.add, PHASE_KERNEL, (long long)ids.add,
	    PHASE_KERNEL, (long long)ids.add, (long long)ids.thread, PHASE_KERNEL,
	    (long long)ids.add, (long long)ids.thread, PHASE_MEMCPY, (long long)ids.add,
	    PHASE_OPERATOR, (long long)ids.add, PHASE_OPERATOR, (long long)ids.add, PHASE_KERNEL,
	    (long long)ids.add);
	exec_on_file(f->path, sql);
	free(sql);
	struct store *st = first_write(f->path);
	sqlite3 *db = store_db(st);
	assert_true(q_int(db, "PRAGMA user_version") == STORE_SCHEMA_VERSION);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 102") == 4);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 101") == 34);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 100") == 34);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 3") == 34);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 104") == 0);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 2") == 41);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 1") == 41);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 200") == 5);
	assert_true(q_int(db, "SELECT device_ns FROM phases WHERE id = 201") == 5);
	store_close(st);
}

/* Adds a phase of kind under parent, [start, start + dur), stored with the
 * device_ns given (a sum, as the nest writes it), to st's transaction. */
static int64_t add_under(struct store *st, int64_t parent, int kind, int64_t name, int64_t start,
			 int64_t dur, int64_t device)
{
	char *err = NULL;
	struct phase_row p = {.id = store_reserve_phase_id(st),
			      .parent_id = parent,
			      .kind = kind,
			      .name_id = name,
			      .start_ns = start,
			      .dur_ns = dur,
			      .device_ns = device,
			      .depth = 3};
	assert_int_equal(store_add_phase(st, &p, &err), 0);
	return p.id;
}

/* The file at path opened for writing, in a transaction. */
static struct store *begin_write(const char *path)
{
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	return st;
}

/* device_ns is the union of the device work beneath a phase, whatever the
 * rows held: an operator whose two launches' kernels overlap on two
 * streams, K1 [1000, 1030) and K2 [1010, 1050), has 50 ns, not the 70
 * summed; a later transaction's kernel K3 [1040, 1060) under the thread
 * makes the thread's and the workflow's 60, the earlier work counted once;
 * the sample's operator, with no device work beneath, keeps what its row
 * holds (its launch statistics' 300 ns). */
static void test_store_device_union(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	char *err = NULL;
	struct store *st = begin_write(f->path);
	int64_t op = add_under(st, ids.thread, PHASE_OPERATOR, ids.add, 900, 50, 70);
	int64_t l1 = add_under(st, op, PHASE_RUNTIME, ids.add, 910, 5, 30);
	int64_t l2 = add_under(st, op, PHASE_RUNTIME, ids.add, 920, 5, 40);
	int64_t k1 = add_under(st, l1, PHASE_KERNEL, ids.mm, 1000, 30, 30);
	add_under(st, l2, PHASE_KERNEL, ids.mm, 1010, 40, 40);
	assert_int_equal(store_commit(st, &err), 0);
	sqlite3 *db = store_db(st);
	char sql[96];
	int64_t want[][2] = {{k1, 30},	       {l1, 30},     {l2, 40},	   {op, 50},
			     {ids.thread, 50}, {ids.wf, 50}, {ids.op, 300}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT device_ns FROM phases WHERE id = %lld",
			 (long long)want[i][0]);
		assert_int_equal(q_int(db, sql), want[i][1]);
	}
	assert_int_equal(store_begin(st, &err), 0);
	add_under(st, ids.thread, PHASE_KERNEL, ids.mm, 1040, 20, 20);
	assert_int_equal(store_commit(st, &err), 0);
	snprintf(sql, sizeof(sql), "SELECT device_ns FROM phases WHERE id = %lld",
		 (long long)ids.thread);
	assert_int_equal(q_int(db, sql), 60);
	snprintf(sql, sizeof(sql), "SELECT device_ns FROM phases WHERE id = %lld",
		 (long long)ids.wf);
	assert_int_equal(q_int(db, sql), 60);
	snprintf(sql, sizeof(sql), "SELECT device_ns FROM phases WHERE id = %lld", (long long)op);
	assert_int_equal(q_int(db, sql), 50);
	store_close(st);
}

static void test_store_refuses_directory(void **state)
{
	struct fx *f = *state;
	assert_refused(f->dir, "directory");
	struct stat sb;
	assert_int_equal(stat(f->dir, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
}

/* Runs sql on the file at path behind the store's back, as sqlite3 would. */
static void doctor(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* A schema version no grademl-tui wrote (zero, negative) is refused like a
 * newer one, by reads and writes alike, and the file is left as it was:
 * before, a write took -1 for an old version and rewrote it to 5. */
static void test_store_refuses_bad_version(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	static const int versions[] = {-1, 0, STORE_SCHEMA_VERSION + 1};
	for (size_t v = 0; v < sizeof(versions) / sizeof(*versions); v++) {
		char *sql = xasprintf("PRAGMA user_version = %d", versions[v]);
		doctor(f->path, sql);
		free(sql);
		size_t len = 0;
		char *before = slurp(f->path, &len);
		assert_non_null(before);
		char version[16];
		snprintf(version, sizeof(version), "version %d", versions[v]);
		assert_refused(f->path, version);
		assert_same_file(f->path, before, len);
		free(before);
	}
}

/* A file that lacks a table of schema v1 is refused at the open, naming
 * the table, rather than failing later with no word of why. */
static void test_store_refuses_missing_table(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	doctor(f->path, "DROP TABLE meta");
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), -1);
	assert_err_mentions(err, f->path, "no table 'meta'");
}

/* On SIGALRM: a FIFO open waited, which is the failure tested. */
static void fifo_waited(int sig)
{
	(void)sig;
	static const char msg[] = "a FIFO named as trace.db made an open wait\n";
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

/* A FIFO named as trace.db is refused at once by every open (it hung
 * every reader, waiting for a writer), store_tidy leaves it alone, and
 * once the store has been opened SQLite's own open of a FIFO (a path
 * that became one after the store looked at it) fails rather than waits. */
static void test_store_refuses_fifo(void **state)
{
	struct fx *f = *state;
	assert_int_equal(mkfifo(f->path, 0600), 0);
	signal(SIGALRM, fifo_waited);
	alarm(10);
	assert_refused(f->path, "FIFO");
	store_tidy(f->path);
	char other[400];
	snprintf(other, sizeof(other), "%s/other.db", f->dir);
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(other, STORE_WRITE, &st, &err), 0);
	store_close(st);
	int flags[] = {SQLITE_OPEN_READONLY, SQLITE_OPEN_READWRITE};
	for (size_t i = 0; i < 2; i++) {
		sqlite3 *db = NULL;
		int rc = sqlite3_open_v2(f->path, &db, flags[i], NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL,
					  NULL);
		assert_int_not_equal(rc, SQLITE_OK);
		sqlite3_close(db);
	}
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	struct stat sb;
	assert_int_equal(stat(f->path, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
}

static void test_store_read_missing(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), -1);
	assert_null(st);
	assert_err_mentions(err, f->path, "cannot open");
	assert_false(exists(f->path));
}

/* Appends n phases named name to the open transaction, in batches. */
static void add_rows(struct store *st, const char *name, int n)
{
	char *err = NULL;
	int64_t id = store_intern(st, name, strlen(name), &err);
	assert_true(id > 0);
	for (int i = 0; i < n; i++) {
		struct phase_row p = {.id = store_reserve_phase_id(st),
				      .kind = PHASE_SPAN,
				      .name_id = id,
				      .start_ns = i,
				      .dur_ns = 1,
				      .attrs = "{\"pad\":\"................................\"}",
				      .attrs_len = 42};
		assert_int_equal(store_add_phase(st, &p, &err), 0);
	}
}

/* Runs child in a new process and returns its exit status (or 128 + the
 * signal that ended it).  The child reports by its status, not by cmocka. */
static int in_child(int (*child)(const char *), const char *path)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child(path));
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* An append killed mid-way: SQLite has written pages, then kill -9. */
static int killed_append(const char *path)
{
	struct store *st = NULL;
	char *err = NULL;
	if (store_open(path, STORE_WRITE, &st, &err) < 0 || store_begin(st, &err) < 0 ||
	    store_exec(st, "PRAGMA cache_size = 8", &err) < 0)
		return 1;
	add_rows(st, "lost", 4000);
	raise(SIGKILL);
	return 2;
}

/* After an append killed with SIGKILL the file reads as before at once,
 * copied alone too, and the next open tidies the -wal and -shm away. */
static void test_store_killed_append(void **state)
{
	struct fx *f = *state;
	struct ids ids;
	write_sample(f->path, &ids);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_non_null(before);
	assert_int_equal(in_child(killed_append, f->path), 128 + SIGKILL);

	char copy[400];
	snprintf(copy, sizeof(copy), "%s/copy.db", f->dir);
	size_t n = 0;
	char *bytes = slurp(f->path, &n);
	spit(copy, bytes, n);
	free(bytes);
	const char *files[] = {copy, f->path};
	for (int i = 0; i < 2; i++) {
		struct store *st = NULL;
		char *err = NULL;
		char ok[256];
		assert_int_equal(store_open(files[i], STORE_READ, &st, &err), 0);
		assert_string_equal(q_text(store_db(st), "PRAGMA integrity_check", ok, sizeof(ok)),
				    "ok");
		assert_true(q_int(store_db(st), "SELECT count(*) FROM phases") == 3);
		assert_true(
		    q_int(store_db(st), "SELECT count(*) FROM strings WHERE text = 'lost'") == 0);
		store_close(st);
		assert_false(exists_beside(files[i], "-wal"));
		assert_false(exists_beside(files[i], "-shm"));
		assert_false(exists_beside(files[i], "-journal"));
	}
	assert_same_pages(f->path, before, len, 0);
}

/* A foreign SQLite database in WAL mode is not tidied: it is not ours. */
static void test_store_tidy_leaves_foreign_wal(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "PRAGMA journal_mode = WAL; CREATE TABLE t(x);"
				      " INSERT INTO t VALUES (1)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	store_tidy(f->path);
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), -1);
	free(err);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	char buf[64];
	assert_string_equal(q_text(db, "PRAGMA journal_mode", buf, sizeof(buf)), "wal");
	sqlite3_close(db);
}

/* Holds a POSIX lock on path, as SQLite in an importer older than the
 * flock does, until its parent closes the pipe. */
static int hold_posix_lock(const char *path, int ready, int done)
{
	int fd = open(path, O_RDWR);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	char c = 1;
	if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0 || write(ready, &c, 1) != 1)
		return 1;
	return read(done, &c, 1) < 0;
}

/* The hidden files that killed processes left go at the next open for
 * writing, whatever file each was for (an export's too); those of live
 * processes (flock held, or SQLite's POSIX lock), and names this tool did
 * not make (another program's ".NAME.XXXXXX", a name mkstemp did not fill
 * in, no hidden name) stay. */
static void test_store_sweeps_dead_hidden_files(void **state)
{
	struct fx *f = *state;
	enum { N = 7 };
	static const char *const names[N] = {
	    ".trace.db.grademl.dEaD01",	 ".trace.db.grademl.LiVe01",
	    ".trace.db.grademl.PoSix1",	 ".out.json.gz.grademl.dEaD02",
	    ".trace.db.grademl.toolong", "trace.db.grademl.dEaD03",
	    ".trace.db.dEaD04"};
	char p[N][400];
	for (int i = 0; i < N; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/%s", f->dir, names[i]);
		spit(p[i], "x", 1);
	}
	int live = open(p[1], O_RDONLY);
	assert_true(live >= 0);
	assert_int_equal(flock(live, LOCK_EX), 0);
	int ready[2], done[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(done[1]);
		_exit(hold_posix_lock(p[2], ready[1], done[0]));
	}
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);

	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	for (int i = 0; i < N; i++)
		if (exists(p[i]) != (i != 0 && i != 3))
			fail_msg("%s was %s", names[i], exists(p[i]) ? "left" : "removed");
	/* the store's own hidden file, flock()ed, survives another's sweep */
	struct store *other = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &other, &err), 0);
	assert_int_equal(count_temps(f->dir), 2 + 2 + 2); /* LiVe01, PoSix1, toolong, dEaD04 */
	store_close(other);
	store_close(st);

	close(done[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(live);
	/* both importers gone now: the next open removes theirs */
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	store_close(st);
	assert_int_equal(count_temps(f->dir), 2); /* toolong, dEaD04 */
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
}

/* store_interrupt (a signal) in a new file's transaction: the hidden file
 * goes at once, the next statement fails. */
static int interrupted_create(const char *path)
{
	struct store *st = NULL;
	char *err = NULL;
	if (store_open(path, STORE_WRITE, &st, &err) < 0 || store_begin(st, &err) < 0)
		return 1;
	add_rows(st, "first", 10);
	store_interrupt(SIGTERM);
	char dir[400];
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
	if (count_temps(dir) != 0)
		return 2;
	int64_t id = store_intern(st, "after", 5, &err);
	if (id >= 0 || !err || !strstr(err, "interrupted"))
		return 3;
	free(err);
	store_rollback(st);
	store_close(st);
	return store_interrupted() == SIGTERM && count_temps(dir) == 0 ? 0 : 4;
}

/* The same in an append: the file reads as before, nothing beside it. */
static int interrupted_append(const char *path)
{
	struct store *st = NULL;
	char *err = NULL;
	if (store_open(path, STORE_WRITE, &st, &err) < 0 || store_begin(st, &err) < 0 ||
	    store_exec(st, "PRAGMA cache_size = 8", &err) < 0)
		return 1;
	add_rows(st, "lost", 3000);
	store_interrupt(SIGINT);
	if (store_commit(st, &err) == 0 || !strstr(err, "interrupted"))
		return 3;
	free(err);
	store_rollback(st);
	store_close(st);
	return 0;
}

static void test_store_interrupt(void **state)
{
	struct fx *f = *state;
	assert_int_equal(in_child(interrupted_create, f->path), 0);
	assert_false(exists(f->path));
	assert_int_equal(count_temps(f->dir), 0);

	struct ids ids;
	write_sample(f->path, &ids);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_int_equal(in_child(interrupted_append, f->path), 0);
	assert_same_pages(f->path, before, len, 0);
	assert_false(exists_beside(f->path, "-wal"));
	assert_false(exists_beside(f->path, "-shm"));
	assert_false(exists_beside(f->path, "-journal"));
}

/* Two imports into the same empty file: the first commit replaces it, the
 * second fails and leaves the first's file whole. */
static void test_store_replace_empty_race(void **state)
{
	struct fx *f = *state;
	spit(f->path, "", 0);
	struct store *a = NULL, *b = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &a, &err), 0);
	assert_int_equal(store_open(f->path, STORE_WRITE, &b, &err), 0);
	assert_int_equal(store_begin(a, &err), 0);
	assert_int_equal(store_begin(b, &err), 0);
	add_rows(a, "from a", 5);
	add_rows(b, "from b", 7);
	assert_int_equal(store_commit(a, &err), 0);
	assert_int_equal(store_commit(b, &err), -1);
	assert_err_mentions(err, f->path, "another import");
	store_rollback(b);
	store_close(b);
	store_close(a);
	assert_int_equal(count_temps(f->dir), 0);
	struct store *st = NULL;
	assert_int_equal(store_open(f->path, STORE_READ, &st, &err), 0);
	assert_true(q_int(store_db(st), "SELECT count(*) FROM phases") == 5);
	store_close(st);
}

/* An append whose -wal fits a file size limit but whose checkpoint would
 * not: it fails before its commit, and the room it took goes back. */
static int append_over_limit(const char *path)
{
	struct store *st = NULL;
	char *err = NULL;
	if (store_open(path, STORE_WRITE, &st, &err) < 0 || store_begin(st, &err) < 0 ||
	    store_exec(st, "PRAGMA cache_size = 8", &err) < 0)
		return 1;
	add_rows(st, "too big", 12000);
	char wal[400];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	struct stat sb;
	if (stat(wal, &sb) < 0)
		return 1;
	/* room for the -wal's last frames, not for trace.db's growth */
	struct rlimit rl = {.rlim_cur = (rlim_t)sb.st_size + (256 << 10),
			    .rlim_max = (rlim_t)sb.st_size + (256 << 10)};
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 1;
	if (store_commit(st, &err) == 0)
		return 2;
	int rc = strstr(err, "cannot grow") ? 0 : 3;
	free(err);
	store_rollback(st);
	store_close(st);
	return rc;
}

static void test_store_commit_room(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(f->path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	add_rows(st, "base", 20000);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
	size_t len = 0;
	char *before = f->before = slurp(f->path, &len);
	assert_int_equal(in_child(append_over_limit, f->path), 0);
	assert_same_pages(f->path, before, len, 0);
	assert_false(exists_beside(f->path, "-wal"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_store_create_and_read_back, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_ids_continue, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_add_phases_batches, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_add_events_batches, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_in_place_keeps_lock, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_rollback_first_import, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_empty_file_rollback, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_commit_path_taken, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_concurrent_create, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_commit_reopens_at_path, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_rollback_existing, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_rollback_after_commit_same_session, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_string_and_fixups, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refresh_window, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refresh_deferred, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_import_step_node_repairs_names, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_import_files_repairs_names, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refuses_garbage, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refuses_foreign_sqlite, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_migrates_v1, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_migrates_v4, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_device_union, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_migrates_v5_device_ns, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refuses_newer_schema, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refuses_directory, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refuses_bad_version, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refuses_missing_table, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_refuses_fifo, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_read_missing, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_killed_append, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_tidy_leaves_foreign_wal, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_sweeps_dead_hidden_files, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_interrupt, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_replace_empty_race, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_commit_room, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
