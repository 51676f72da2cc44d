/*
 * Unit tests of the Chrome trace importer (importers/chrome.c,
 * chrome_json.c) through import_files(): each test writes a small JSON
 * snippet to a temporary directory, imports it into a fresh trace.db there
 * and reads the result back with SQL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

#define MAX_FILES 8

struct fx {
	char *dir;
	char *db;
	char *files[MAX_FILES];
	int nfiles;
	sqlite3 *conn; /* read-only connection to db, opened lazily */
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/grademl-test-chrome-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		free(tmpl);
		free(f);
		return -1;
	}
	f->dir = tmpl;
	f->db = xasprintf("%s/trace.db", f->dir);
	*state = f;
	return 0;
}

static void unlink_db(const char *db)
{
	static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *p = xasprintf("%s%s", db, suffixes[i]);
		unlink(p);
		free(p);
	}
}

static void close_conn(struct fx *f)
{
	if (f->conn) {
		sqlite3_close(f->conn);
		f->conn = NULL;
	}
}

static int teardown(void **state)
{
	struct fx *f = *state;
	close_conn(f);
	unlink_db(f->db);
	for (int i = 0; i < f->nfiles; i++) {
		unlink(f->files[i]);
		free(f->files[i]);
	}
	rmdir(f->dir);
	free(f->db);
	free(f->dir);
	free(f);
	return 0;
}

/* dir/name opened for writing (again, when the test wrote it before);
 * *path owned by f. */
static FILE *open_input(struct fx *f, const char *name, const char **path)
{
	char *p = xasprintf("%s/%s", f->dir, name);
	int i = 0;
	while (i < f->nfiles && strcmp(f->files[i], p))
		i++;
	if (i == f->nfiles) {
		assert_true(i < MAX_FILES);
		f->files[f->nfiles++] = p;
	} else {
		free(p);
	}
	*path = f->files[i];
	FILE *fp = fopen(*path, "wb");
	assert_non_null(fp);
	return fp;
}

/* Writes len bytes of text to dir/name and returns the path (owned by f). */
static const char *write_file(struct fx *f, const char *name, const char *text, size_t len)
{
	const char *path;
	FILE *fp = open_input(f, name, &path);
	assert_int_equal(fwrite(text, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* Imports the given files into f->db under o; import_files' status. */
static int import_with(struct fx *f, const char *const *paths, size_t n,
		       const struct import_opts *o, char **err)
{
	close_conn(f);
	*err = NULL;
	return import_files(f->db, (char *const *)paths, n, NULL, o, err);
}

/* Imports the given files into f->db; returns import_files' status. */
static int import_paths(struct fx *f, const char *const *paths, size_t n, char **err)
{
	struct import_opts o;
	memset(&o, 0, sizeof(o));
	return import_with(f, paths, n, &o, err);
}

/* Writes len bytes of text to dir/name and imports it; the import must
 * succeed. */
static void import_text(struct fx *f, const char *name, const char *text, size_t len)
{
	const char *path = write_file(f, name, text, len);
	char *err = NULL;
	int rc = import_paths(f, &path, 1, &err);
	if (rc != 0)
		print_error("import of %s failed: %s\n", name, err ? err : "(no message)");
	free(err);
	assert_int_equal(rc, 0);
}

static void import_ok(struct fx *f, const char *name, const char *json)
{
	import_text(f, name, json, strlen(json));
}

static sqlite3 *conn(struct fx *f)
{
	if (!f->conn)
		assert_int_equal(sqlite3_open_v2(f->db, &f->conn, SQLITE_OPEN_READONLY, NULL),
				 SQLITE_OK);
	return f->conn;
}

static sqlite3_stmt *prepare(struct fx *f, const char *fmt, va_list ap)
{
	char *sql = xvasprintf(fmt, ap);
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(conn(f), sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		print_error("SQL error in '%s': %s\n", sql, sqlite3_errmsg(conn(f)));
	free(sql);
	assert_int_equal(rc, SQLITE_OK);
	return s;
}

/* The integer in the first column of the first row; the row must exist. */
static int64_t q_int(struct fx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t q_int(struct fx *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sqlite3_stmt *s = prepare(f, fmt, ap);
	va_end(ap);
	int rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		print_error("no row for: %s\n", sqlite3_sql(s));
	assert_int_equal(rc, SQLITE_ROW);
	if (sqlite3_column_type(s, 0) == SQLITE_NULL)
		print_error("NULL for: %s\n", sqlite3_sql(s));
	assert_int_not_equal(sqlite3_column_type(s, 0), SQLITE_NULL);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The text in the first column of the first row (owned), or NULL when no row
 * or a NULL value. */
static char *q_text(struct fx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *q_text(struct fx *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sqlite3_stmt *s = prepare(f, fmt, ap);
	va_end(ap);
	char *v = NULL;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v;
}

static void assert_text(struct fx *f, const char *want, const char *sql)
{
	char *got = q_text(f, "%s", sql);
	if (!got || strcmp(got, want))
		print_error("%s\n  want: %s\n  got:  %s\n", sql, want, got ? got : "(null)");
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static int64_t diag_count(struct fx *f, const char *code)
{
	return q_int(f, "SELECT coalesce(sum(count), 0) FROM diagnostics WHERE code = '%s'", code);
}

static int64_t phase_id(struct fx *f, const char *name)
{
	return q_int(f, "SELECT id FROM phases_v WHERE name = '%s'", name);
}

/* Counts the events of the given ph in a JSON text the way the completeness
 * rule counts them: occurrences of "ph":"<c>". */
static int64_t count_ph(const char *json, char ph)
{
	char pat[16] = "\"ph\":\"?\"";
	pat[6] = ph;
	int64_t n = 0;
	for (const char *s = json; (s = strstr(s, pat)); s += strlen(pat))
		n++;
	return n;
}

static void assert_complete(struct fx *f, const char *json)
{
	int64_t want = count_ph(json, 'X') + count_ph(json, 'B') + count_ph(json, 'b');
	int64_t got = q_int(f, "SELECT sum(phases) + sum(dropped) FROM sources");
	if (got != want)
		print_error("phases + dropped = %lld, X + B + b = %lld\n", (long long)got,
			    (long long)want);
	assert_int_equal(got, want);
}

/* ---- top-level forms ---- */

static void test_bare_array(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5},"
	    " {\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":2,\"ts\":11,\"dur\":2}]";
	import_ok(f, "bare.json", json);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'a'"), 10000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'a'"), 5000);
	assert_int_equal(q_int(f, "SELECT kind FROM phases p JOIN strings s ON s.id = p.name_id"
				  " WHERE s.text = 'a'"),
			 PHASE_OPERATOR);
	/* b is nested in a by time */
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases_v WHERE name = 'b'"),
			 phase_id(f, "a"));
	/* a hangs under thread 2 < process 1 < step "bare" < workflow */
	assert_text(f, "thread 2",
		    "SELECT t.name FROM phases_v a JOIN phases_v t ON t.id = a.parent_id"
		    " WHERE a.name = 'a' AND t.kind = 'thread'");
	assert_text(
	    f, "process 1",
	    "SELECT p.name FROM phases_v a JOIN phases_v t ON t.id = a.parent_id"
	    " JOIN phases_v p ON p.id = t.parent_id WHERE a.name = 'a' AND p.kind = 'process'");
	assert_text(f, "bare", "SELECT name FROM phases_v WHERE kind = 'step'");
	assert_text(f, "workflow", "SELECT name FROM phases_v WHERE kind = 'workflow'");
	assert_text(f, "relative", "SELECT anchor FROM sources");
	assert_text(f, "chrome", "SELECT format FROM sources");
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_complete(f, json);
}

#define BASE_NS "1700000000123456789"

static void check_base(struct fx *f)
{
	assert_text(f, "baseTimeNanoseconds", "SELECT anchor FROM sources");
	assert_text(f, BASE_NS, "SELECT time_offset_ns FROM sources");
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'op'"),
			 INT64_C(1700000000123456789) + 10 * 1000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'op'"), 5000);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'inner'"),
			 INT64_C(1700000000123456789) + 11500);
}

static void test_object_base_after_events(void **state)
{
	struct fx *f = *state;
	import_ok(f, "after.json",
		  "{\"traceEvents\":["
		  "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5},"
		  "{\"ph\":\"X\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":11.5,\"dur\":1}],"
		  "\"baseTimeNanoseconds\":" BASE_NS "}");
	check_base(f);
}

static void test_object_base_before_events(void **state)
{
	struct fx *f = *state;
	import_ok(f, "before.json",
		  "{\"schemaVersion\":1,\"baseTimeNanoseconds\":" BASE_NS ",\"traceEvents\":["
		  "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5},"
		  "{\"ph\":\"X\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":11.5,\"dur\":1}]}");
	check_base(f);
}

/* The same events with the metadata before and after give identical rows. */
static void test_object_base_order_identical(void **state)
{
	struct fx *f = *state;
	static const char ev[] =
	    "[{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5},"
	    "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":10.25},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":12}]";
	char *after = xasprintf("{\"traceEvents\":%s,\"baseTimeNanoseconds\":" BASE_NS "}", ev);
	char *before = xasprintf("{\"baseTimeNanoseconds\":" BASE_NS ",\"traceEvents\":%s}", ev);
	import_ok(f, "one.json", after);
	import_ok(f, "two.json", before);
	free(after);
	free(before);
	assert_int_equal(q_int(f, "SELECT count(*) FROM sources"), 2);
	assert_int_equal(q_int(f, "SELECT count(DISTINCT anchor) FROM sources"), 1);
	assert_text(f, "baseTimeNanoseconds", "SELECT anchor FROM sources");
	/* every span of source 1 has its twin in source 2 */
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM phases_v WHERE source_id = 1 AND kind NOT IN"
			       " ('process', 'thread')"),
			 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v a JOIN phases_v b"
				  " ON a.name = b.name AND a.start_ns = b.start_ns"
				  " AND a.dur_ns = b.dur_ns AND a.kind = b.kind"
				  " WHERE a.source_id = 1 AND b.source_id = 2"),
			 q_int(f, "SELECT count(*) FROM phases WHERE source_id = 1"));
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'b' AND"
				  " source_id = 2"),
			 INT64_C(1700000000123456789) + 10250);
}

/* ---- numbers ---- */

static void test_ts_dur_forms(void **state)
{
	struct fx *f = *state;
	import_ok(f, "ts.json",
		  "[{\"ph\":\"X\",\"name\":\"int\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":3},"
		  "{\"ph\":\"X\",\"name\":\"frac\",\"pid\":1,\"tid\":2,\"ts\":1.5,\"dur\":0.25},"
		  "{\"ph\":\"X\",\"name\":\"str\",\"pid\":1,\"tid\":3,\"ts\":\"12\",\"dur\":\"3\"},"
		  "{\"ph\":\"X\",\"name\":\"strfrac\",\"pid\":1,\"tid\":4,\"ts\":\"7.125\","
		  "\"dur\":\"0.5\"},"
		  "{\"ph\":\"X\",\"name\":\"nano\",\"pid\":1,\"tid\":5,\"ts\":0.001,\"dur\":0.002},"
		  "{\"ph\":\"X\",\"name\":\"exact\",\"pid\":1,\"tid\":6,"
		  "\"ts\":1700000000123456.789,\"dur\":1}]");
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'int'"), 12000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'int'"), 3000);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'frac'"), 1500);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'frac'"), 250);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'str'"), 12000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'str'"), 3000);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'strfrac'"), 7125);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'strfrac'"), 500);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'nano'"), 1);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'nano'"), 2);
	/* a decimal timestamp is read exactly, not through a double */
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'exact'"),
			 INT64_C(1700000000123456789));
	assert_int_equal(diag_count(f, "BAD_TS") + diag_count(f, "BAD_DUR"), 0);
}

static void test_bad_ts_dropped(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"X\",\"name\":\"good\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
	    "{\"ph\":\"X\",\"name\":\"nots\",\"pid\":1,\"tid\":1,\"dur\":1},"
	    "{\"ph\":\"X\",\"name\":\"junk\",\"pid\":1,\"tid\":1,\"ts\":\"soon\",\"dur\":1},"
	    "{\"ph\":\"X\",\"name\":\"negdur\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":-3}]";
	import_ok(f, "badts.json", json);
	assert_int_equal(diag_count(f, "BAD_TS"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name IN ('nots', 'junk')"),
			 0);
	assert_int_equal(diag_count(f, "BAD_DUR"), 1);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'negdur'"), 0);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 2);
	assert_complete(f, json);
}

static void test_string_pid_tid(void **state)
{
	struct fx *f = *state;
	import_ok(f, "str.json",
		  "[{\"ph\":\"X\",\"name\":\"op\",\"pid\":\"CPU functions\",\"tid\":\"Spans\","
		  "\"ts\":1,\"dur\":4}]");
	assert_text(f, "CPU functions", "SELECT pid FROM tracks WHERE kind = 'thread'");
	assert_text(f, "Spans", "SELECT tid FROM tracks WHERE kind = 'thread'");
	assert_text(f, "thread Spans", "SELECT name FROM phases_v WHERE kind = 'thread'");
	assert_text(f, "process CPU functions", "SELECT name FROM phases_v WHERE kind = 'process'");
	assert_int_equal(q_int(f, "SELECT p.parent_id = t.id FROM phases_v p, phases_v t"
				  " WHERE p.name = 'op' AND t.kind = 'thread'"),
			 1);
	assert_int_equal(q_int(f, "SELECT track_id = (SELECT id FROM tracks) FROM phases_v"
				  " WHERE name = 'op'"),
			 1);
}

/* Newer Kineto traces give ids that already say their kind ("stream 15",
 * "thread 3"): the track's name does not say it twice. */
static void test_id_names_its_kind(void **state)
{
	struct fx *f = *state;
	import_ok(f, "kind.json",
		  "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
		  "\"tid\":\"stream 15\",\"ts\":1,\"dur\":4},"
		  "{\"ph\":\"X\",\"name\":\"op\",\"pid\":\"process 9\",\"tid\":\"thread 3\","
		  "\"ts\":1,\"dur\":4},"
		  "{\"ph\":\"X\",\"name\":\"op2\",\"pid\":8,\"tid\":\"threadpool 2\","
		  "\"ts\":1,\"dur\":4}]");
	assert_text(f, "stream 15", "SELECT name FROM phases_v WHERE kind = 'stream'");
	assert_text(f, "thread 3", "SELECT name FROM phases_v WHERE name LIKE '%thread 3'");
	assert_text(f, "process 9", "SELECT name FROM phases_v WHERE name LIKE '%process 9'");
	assert_text(f, "thread threadpool 2", "SELECT name FROM phases_v WHERE name LIKE '%pool%'");
}

/* ---- B/E, instants, counters, metadata ---- */

static void test_begin_end(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":10},"
	    "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":12},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":15},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":20},"
	    "{\"ph\":\"E\",\"name\":\"stray\",\"pid\":1,\"tid\":1,\"ts\":25},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":26},"
	    "{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":1,\"ts\":30},"
	    "{\"ph\":\"X\",\"name\":\"last\",\"pid\":1,\"tid\":1,\"ts\":31,\"dur\":9}]";
	import_ok(f, "be.json", json);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'outer'"), 10000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'outer'"), 10000);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'inner'"), 12000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'inner'"), 3000);
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases_v WHERE name = 'inner'"),
			 phase_id(f, "outer"));
	/* the two E without a B are dropped and counted */
	assert_int_equal(diag_count(f, "UNMATCHED_END"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name = 'stray'"), 0);
	/* the B never closed is kept, ended at the track's last time (40 us) */
	assert_int_equal(diag_count(f, "UNCLOSED_BEGIN"), 1);
	assert_text(f, "open", "SELECT example FROM diagnostics WHERE code = 'UNCLOSED_BEGIN'");
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'open'"), 30000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'open'"), 10000);
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases_v WHERE name = 'last'"),
			 phase_id(f, "open"));
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 4);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 0);
	assert_complete(f, json);
}

/* An "E" need not repeat the category of its "B" (the format requires only
 * pid, tid and ts): it closes a B of a device category on the same pid/tid. */
static void test_begin_end_device_category(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"B\",\"cat\":\"gpu_memcpy\",\"name\":\"copy\",\"pid\":0,"
	    "\"tid\":7,\"ts\":10},"
	    "{\"ph\":\"E\",\"pid\":0,\"tid\":7,\"ts\":20},"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
	    "\"ts\":30,\"dur\":10}]";
	import_ok(f, "bedev.json", json);
	assert_int_equal(diag_count(f, "UNMATCHED_END"), 0);
	assert_int_equal(diag_count(f, "UNCLOSED_BEGIN"), 0);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'copy'"), 10000);
	assert_complete(f, json);
}

/* Every track row points at a phase that exists (its thread or stream node). */
static void test_track_nodes_exist(void **state)
{
	struct fx *f = *state;
	import_ok(f, "tracks.json",
		  "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
		  "{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":5}]");
	assert_int_equal(q_int(f, "SELECT count(*) FROM tracks t WHERE t.phase_id <> 0 AND"
				  " NOT EXISTS (SELECT 1 FROM phases p WHERE p.id = t.phase_id)"),
			 0);
}

static void test_instants(void **state)
{
	struct fx *f = *state;
	import_ok(f, "inst.json",
		  "[{\"ph\":\"X\",\"name\":\"parent\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":50},"
		  "{\"ph\":\"X\",\"name\":\"child\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":5},"
		  "{\"ph\":\"i\",\"name\":\"mark\",\"pid\":1,\"tid\":1,\"ts\":120,\"s\":\"t\"},"
		  "{\"ph\":\"I\",\"name\":\"deep\",\"pid\":1,\"tid\":1,\"ts\":112,"
		  "\"args\":{\"k\":\"v\"}}]");
	assert_int_equal(q_int(f, "SELECT count(*) FROM events"), 2);
	assert_int_equal(q_int(f, "SELECT events FROM sources"), 2);
	assert_int_equal(q_int(f, "SELECT t_ns FROM events_v WHERE name = 'mark'"), 120000);
	assert_int_equal(q_int(f, "SELECT phase_id FROM events_v WHERE name = 'mark'"),
			 phase_id(f, "parent"));
	/* the innermost enclosing span */
	assert_int_equal(q_int(f, "SELECT phase_id FROM events_v WHERE name = 'deep'"),
			 phase_id(f, "child"));
	/* instants are not phases */
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name IN ('mark', 'deep')"),
			 0);
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
}

static void test_counters(void **state)
{
	struct fx *f = *state;
	import_ok(f, "ctr.json",
		  "[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":10,\"args\":{\"bytes\":100}},"
		  "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":20,\"args\":{\"bytes\":250.5}},"
		  "{\"ph\":\"C\",\"name\":\"q\",\"pid\":2,\"ts\":30,"
		  "\"args\":{\"rd\":1,\"wr\":\"2\"}},"
		  "{\"ph\":\"C\",\"name\":\"none\",\"pid\":2,\"ts\":40,\"args\":{\"s\":\"x\"}},"
		  "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":10}]");
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics"), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 4);
	assert_int_equal(q_int(f, "SELECT samples FROM sources"), 4);
	assert_text(f, "mem.bytes", "SELECT name FROM metrics WHERE resource = 'pid:1'");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples s JOIN metrics m"
				  " ON m.id = s.metric_id WHERE m.name = 'mem.bytes'"),
			 2);
	assert_int_equal(q_int(f, "SELECT s.t_ns FROM samples s JOIN metrics m"
				  " ON m.id = s.metric_id WHERE m.name = 'mem.bytes' ORDER BY t_ns"
				  " LIMIT 1 OFFSET 1"),
			 20000);
	assert_int_equal(
	    q_int(f, "SELECT s.value = 250.5 FROM samples s JOIN metrics m"
		     " ON m.id = s.metric_id WHERE m.name = 'mem.bytes' AND s.t_ns = 20000"),
	    1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics WHERE name IN ('q.rd', 'q.wr')"),
			 2);
	assert_int_equal(q_int(f, "SELECT s.value = 2 FROM samples s JOIN metrics m"
				  " ON m.id = s.metric_id WHERE m.name = 'q.wr'"),
			 1);
	/* a counter with no numeric value is skipped and counted */
	assert_int_equal(diag_count(f, "BAD_COUNTER"), 1);
	/* counters are not phases */
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 1);
}

static void test_metadata_names(void **state)
{
	struct fx *f = *state;
	import_ok(
	    f, "meta.json",
	    "[{\"ph\":\"X\",\"name\":\"op\",\"pid\":7,\"tid\":3,\"ts\":1,\"dur\":1},"
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"args\":{\"name\":\"trainer\"}},"
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":3,"
	    "\"args\":{\"name\":\"main thread\"}},"
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":4,"
	    "\"args\":{\"name\":\"other\"}},"
	    "{\"ph\":\"X\",\"name\":\"op2\",\"pid\":7,\"tid\":5,\"ts\":1,\"dur\":1}]");
	assert_text(f, "trainer (7)", "SELECT name FROM phases_v WHERE kind = 'process'");
	assert_text(f, "main thread",
		    "SELECT t.name FROM phases_v o JOIN phases_v t ON t.id = o.parent_id"
		    " WHERE o.name = 'op'");
	assert_text(f, "thread 5",
		    "SELECT t.name FROM phases_v o JOIN phases_v t ON t.id = o.parent_id"
		    " WHERE o.name = 'op2'");
	assert_text(f, "main thread", "SELECT name FROM tracks WHERE tid = '3'");
	/* metadata events are not phases; only the two X are */
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name IN"
				  " ('process_name', 'thread_name')"),
			 0);
}

/* Metadata names are kept as text up to 16 MiB, then interned: 300 threads
 * named after their events with 60000-byte names (18 MB) are each named,
 * the later name of a thread wins either way, and the name of a thread
 * that has no event is never interned. */
static void test_metadata_text_budget(void **state)
{
	struct fx *f = *state;
	enum { THREADS = 300, LEN = 60000 };
	struct sbuf sb = SBUF_INIT;
	char *pad = xmalloc(LEN + 1);
	memset(pad, 'n', LEN);
	pad[LEN] = '\0';
	sbuf_adds(&sb, "[{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":9999,"
		       "\"args\":{\"name\":\"no events\"}}");
	for (int i = 0; i < THREADS; i++)
		sbuf_addf(&sb,
			  ",{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":%d,\"ts\":1,\"dur\":1}",
			  i);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < THREADS; i++)
			sbuf_addf(&sb,
				  ",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,"
				  "\"args\":{\"name\":\"%c%03d%.*s\"}}",
				  i, pass ? 't' : 'x', i, LEN - 4, pad);
	sbuf_adds(&sb, "]");
	import_text(f, "names.json", sb.buf, sb.len);
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM tracks WHERE name GLOB 't[0-9][0-9][0-9]n*'"
			       " AND length(name) = %d",
			       LEN),
			 THREADS);
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM tracks WHERE name = 't123' || substr(name, 5)"
			       " AND tid = '123'"),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM strings WHERE text = 'no events'"), 0);
	free(pad);
	sbuf_release(&sb);
}

/* ---- GPU: flows and launch links ---- */

static void test_flow_launch(void **state)
{
	struct fx *f = *state;
	import_ok(f, "gpu.json",
		  "{\"traceEvents\":["
		  "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
		  "\"ts\":95,\"dur\":20},"
		  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
		  "\"tid\":1,\"ts\":100,\"dur\":10,\"args\":{\"correlation\":42}},"
		  "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":42,\"pid\":1,\"tid\":1,"
		  "\"ts\":100},"
		  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,"
		  "\"ts\":200,\"dur\":50,\"args\":{\"correlation\":42,\"stream\":7}},"
		  "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":42,\"pid\":0,\"tid\":7,"
		  "\"ts\":200,\"bp\":\"e\"}]}");
	int64_t rt = phase_id(f, "cudaLaunchKernel");
	int64_t k = phase_id(f, "gemm_kernel");
	assert_int_equal(q_int(f, "SELECT kind FROM phases WHERE id = %lld", (long long)rt),
			 PHASE_RUNTIME);
	assert_int_equal(q_int(f, "SELECT kind FROM phases WHERE id = %lld", (long long)k),
			 PHASE_KERNEL);
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases WHERE id = %lld", (long long)k),
			 rt);
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases WHERE id = %lld", (long long)rt),
			 phase_id(f, "aten::mm"));
	/* the s/f pair of category ac2g is the launch edge runtime -> kernel */
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM edges WHERE src = %lld AND dst = %lld"
			       " AND kind = %d",
			       (long long)rt, (long long)k, EDGE_LAUNCH),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM edges"), 1);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases WHERE id = %lld", (long long)k),
			 200000);
	/* the kernel's stream is a track of kind stream */
	assert_int_equal(q_int(f, "SELECT count(*) FROM tracks WHERE kind = 'stream' AND"
				  " pid = '0' AND tid = '7'"),
			 1);
	assert_int_equal(q_int(f,
			       "SELECT track_id = (SELECT id FROM tracks WHERE kind = 'stream')"
			       " FROM phases WHERE id = %lld",
			       (long long)k),
			 1);
	assert_int_equal(diag_count(f, "LONE_FLOW") + diag_count(f, "UNBOUND_FLOW") +
			     diag_count(f, "UNLINKED_DEVICE"),
			 0);
}

/* Without the s/f pair the correlation still parents the kernel, but there
 * is no edge: the edge comes from the flow. */
static void test_launch_without_flow(void **state)
{
	struct fx *f = *state;
	import_ok(f, "corr.json",
		  "[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
		  "\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":10,\"args\":{\"correlation\":5}},"
		  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
		  "\"ts\":200,\"dur\":50,\"args\":{\"correlation\":5}},"
		  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":7,"
		  "\"ts\":300,\"dur\":5,\"args\":{\"correlation\":6}}]");
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases_v WHERE name = 'k'"),
			 phase_id(f, "cudaLaunchKernel"));
	assert_int_equal(q_int(f, "SELECT count(*) FROM edges"), 0);
	/* a kernel whose launch is missing stays under its stream, counted */
	assert_text(f, "stream",
		    "SELECT s.kind FROM phases_v k JOIN phases_v s ON s.id = k.parent_id"
		    " WHERE k.name = 'orphan'");
	assert_int_equal(diag_count(f, "UNLINKED_DEVICE"), 1);
	assert_int_equal(q_int(f, "SELECT device_ns FROM phases_v WHERE name = 'cudaLaunchKernel'"),
			 50000);
}

/* A flow of another category between two host spans: an edge of kind flow. */
static void test_flow_host(void **state)
{
	struct fx *f = *state;
	import_ok(f, "flow.json",
		  "[{\"ph\":\"X\",\"name\":\"producer\",\"pid\":1,\"tid\":1,\"ts\":10,"
		  "\"dur\":10},"
		  "{\"ph\":\"X\",\"name\":\"consumer\",\"pid\":1,\"tid\":2,\"ts\":30,"
		  "\"dur\":10},"
		  "{\"ph\":\"s\",\"cat\":\"dataflow\",\"name\":\"q\",\"id\":\"abc\","
		  "\"pid\":1,\"tid\":1,\"ts\":15},"
		  "{\"ph\":\"f\",\"cat\":\"dataflow\",\"name\":\"q\",\"id\":\"abc\","
		  "\"pid\":1,\"tid\":2,\"ts\":35,\"bp\":\"e\"},"
		  "{\"ph\":\"s\",\"cat\":\"dataflow\",\"name\":\"q\",\"id\":\"lone\","
		  "\"pid\":1,\"tid\":1,\"ts\":16}]");
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM edges WHERE src = %lld AND dst = %lld"
			       " AND kind = %d",
			       (long long)phase_id(f, "producer"),
			       (long long)phase_id(f, "consumer"), EDGE_FLOW),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM edges"), 1);
	assert_int_equal(diag_count(f, "LONE_FLOW"), 1);
	/* flow points are neither phases nor events */
	assert_int_equal(q_int(f, "SELECT phases + events FROM sources"), 2);
}

static void test_async(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"b\",\"cat\":\"io\",\"name\":\"read\",\"id\":\"0x1\",\"pid\":1,"
	    "\"tid\":1,\"ts\":10},"
	    "{\"ph\":\"b\",\"cat\":\"io\",\"name\":\"write\",\"id\":\"0x2\",\"pid\":1,"
	    "\"tid\":2,\"ts\":12},"
	    "{\"ph\":\"e\",\"cat\":\"io\",\"name\":\"read\",\"id\":\"0x1\",\"pid\":1,"
	    "\"tid\":1,\"ts\":30},"
	    "{\"ph\":\"e\",\"cat\":\"io\",\"name\":\"write\",\"id\":\"0x2\",\"pid\":1,"
	    "\"tid\":3,\"ts\":15},"
	    "{\"ph\":\"e\",\"cat\":\"io\",\"name\":\"x\",\"id\":\"0x9\",\"pid\":1,"
	    "\"tid\":1,\"ts\":31}]";
	import_ok(f, "async.json", json);
	assert_int_equal(q_int(f, "SELECT kind FROM phases p JOIN strings s ON s.id = p.name_id"
				  " WHERE s.text = 'read'"),
			 PHASE_ASYNC);
	assert_text(f, "async", "SELECT kind FROM phases_v WHERE name = 'read'");
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'read'"), 10000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'read'"), 20000);
	/* the pair is matched by id, whatever the tid of its end */
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'write'"), 3000);
	assert_int_equal(q_int(f, "SELECT count(*) FROM tracks WHERE kind = 'async'"), 1);
	assert_int_equal(diag_count(f, "UNMATCHED_END"), 1);
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_complete(f, json);
}

/* ---- dialects and odd values ---- */

static void test_tensorflow_style(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\"1\",\"args\":{\"name\":\"/"
	    "host:CPU\"}},"
	    "{\"ph\":\"X\",\"name\":\"MatMul\",\"pid\":\"1\",\"tid\":\"2\",\"ts\":\"5\","
	    "\"dur\":\"1.5\",\"args\":{\"long_name\":\"MatMul\",\"step\":\"3\"}},"
	    "{\"ph\":\"X\",\"name\":\"Add\",\"pid\":\"1\",\"tid\":\"2\",\"ts\":\"8\","
	    "\"dur\":\"1\",\"args\":{\"name\":\"add_1\"}},"
	    "{}]}";
	import_ok(f, "tf.json", json);
	assert_int_equal(diag_count(f, "EMPTY_EVENT"), 1);
	/* displayTimeUnit does not change the unit of ts: still microseconds */
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'MatMul'"), 5000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'MatMul'"), 1500);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'Add'"), 8000);
	assert_text(f, "/host:CPU (1)", "SELECT name FROM phases_v WHERE kind = 'process'");
	assert_text(f, "3",
		    "SELECT json_extract(attrs, '$.step') FROM phases_v"
		    " WHERE name = 'MatMul'");
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 0);
	assert_complete(f, json);
}

static void test_display_time_unit_ns(void **state)
{
	struct fx *f = *state;
	import_ok(f, "ns.json",
		  "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":7,"
		  "\"dur\":2}],\"displayTimeUnit\":\"ns\"}");
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'a'"), 7000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'a'"), 2000);
}

static void test_big_integer_arg(void **state)
{
	struct fx *f = *state;
	import_ok(f, "big.json",
		  "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,"
		  "\"args\":{\"big\":18446744073709551615,\"small\":-5,\"f\":1.5e300}}]");
	assert_int_equal(diag_count(f, "BIG_INTEGER"), 1);
	assert_text(f, "text", "SELECT json_type(attrs, '$.big') FROM phases_v WHERE name = 'a'");
	assert_text(f, "18446744073709551615",
		    "SELECT json_extract(attrs, '$.big') FROM phases_v WHERE name = 'a'");
	assert_text(f, "integer",
		    "SELECT json_type(attrs, '$.small') FROM phases_v WHERE name = 'a'");
	assert_int_equal(q_int(f, "SELECT json_extract(attrs, '$.small') FROM phases_v"
				  " WHERE name = 'a'"),
			 -5);
	assert_text(f, "real", "SELECT json_type(attrs, '$.f') FROM phases_v WHERE name = 'a'");
	assert_int_equal(q_int(f, "SELECT json_valid(attrs) FROM phases_v WHERE name = 'a'"), 1);
}

static void test_bad_utf8(void **state)
{
	struct fx *f = *state;
	/* "op\xff" "x": a lone 0xff byte inside a name */
	import_ok(f, "utf8.json",
		  "[{\"ph\":\"X\",\"name\":\"op\xff"
		  "x\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]");
	assert_int_equal(diag_count(f, "BAD_UTF8"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name = 'op' ||"
				  " char(65533) || 'x'"),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM strings WHERE text LIKE 'op%%x'"
				  " AND hex(text) = '6F70EFBFBD78'"),
			 1);
}

static void test_distributed_rank(void **state)
{
	struct fx *f = *state;
	import_ok(f, "rank3.json",
		  "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":8},"
		  "\"traceEvents\":["
		  "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}");
	assert_int_equal(q_int(f, "SELECT rank FROM sources"), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases WHERE kind = %d", PHASE_RANK), 1);
	assert_text(f, "rank 3", "SELECT name FROM phases_v WHERE kind = 'rank'");
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases_v WHERE kind = 'rank'"),
			 q_int(f, "SELECT id FROM phases_v WHERE kind = 'step'"));
	assert_int_equal(q_int(f, "SELECT parent_id FROM phases_v WHERE kind = 'process'"),
			 q_int(f, "SELECT id FROM phases_v WHERE kind = 'rank'"));
	assert_int_equal(q_int(f, "SELECT rank FROM tracks"), 3);
	assert_text(f, "nccl",
		    "SELECT json_extract(attrs, '$.distributedInfo.backend')"
		    " FROM sources");
}

/* The profiler's bookkeeping as Kineto writes it: its trace span (category
 * "Trace") on pid "Spans", opening before the first op and closing after
 * it, "Iteration Start" on pid "Traces", "Record Window End" of no pid.
 * Their processes, threads and spans are kind profiler, and stretch
 * neither the rank's window nor the step's; a thread of work that happens
 * to be named "Spans" stays work. */
static void test_profiler_bookkeeping(void **state)
{
	struct fx *f = *state;
	import_ok(f, "rank0.json",
		  "{\"distributedInfo\":{\"rank\":0},\"traceEvents\":["
		  "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
		  "\"args\":{\"name\":\"python3\"}},"
		  "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\","
		  "\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"ts\":50,\"dur\":100},"
		  "{\"name\":\"Iteration Start: PyTorch Profiler\",\"ph\":\"i\",\"s\":\"g\","
		  "\"pid\":\"Traces\",\"tid\":\"Trace PyTorch Profiler\",\"ts\":50},"
		  "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,"
		  "\"ts\":100,\"dur\":10},"
		  "{\"ph\":\"X\",\"name\":\"work\",\"pid\":\"CPU functions\",\"tid\":\"Spans\","
		  "\"ts\":102,\"dur\":5},"
		  "{\"name\":\"Record Window End\",\"ph\":\"i\",\"s\":\"g\",\"pid\":\"\","
		  "\"tid\":\"\",\"ts\":2000}]}");
	assert_text(f, "profiler", "SELECT name FROM phase_kinds WHERE id = 21");
	assert_text(f,
		    "PyTorch Profiler (0)|process Spans|process Traces|process global|"
		    "thread PyTorch Profiler|thread Trace PyTorch Profiler|thread global",
		    "SELECT group_concat(name, '|') FROM (SELECT name FROM phases_v"
		    " WHERE kind = 'profiler' ORDER BY name)");
	assert_text(f, "operator", "SELECT kind FROM phases_v WHERE name = 'op'");
	assert_text(f, "operator", "SELECT kind FROM phases_v WHERE name = 'work'");
	assert_text(f, "thread", "SELECT kind FROM phases_v WHERE name = 'thread Spans'");
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'process'"), 2);
	assert_text(f, "100000 110000",
		    "SELECT start_ns || ' ' || end_ns FROM phases_v WHERE kind = 'rank'");
	assert_text(f, "100000 110000",
		    "SELECT start_ns || ' ' || end_ns FROM phases_v WHERE kind = 'step'");
}

/* Without a rank the step's window is its processes': the bookkeeping's is
 * not among them.  An instant of no process other than "Record Window
 * End" (TensorFlow's global events) is no bookkeeping: its process stays one. */
static void test_profiler_bookkeeping_no_rank(void **state)
{
	struct fx *f = *state;
	import_ok(f, "t.json",
		  "{\"traceEvents\":["
		  "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\","
		  "\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"ts\":50,\"dur\":100},"
		  "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":10},"
		  "{\"name\":\"GlobalEvent1\",\"ph\":\"I\",\"s\":\"g\",\"ts\":120}]}");
	assert_text(f, "100000 110000",
		    "SELECT start_ns || ' ' || end_ns FROM phases_v WHERE kind = 'step'");
	assert_text(f, "process", "SELECT kind FROM phases_v WHERE name = 'process global'");
	assert_text(f, "profiler", "SELECT kind FROM phases_v WHERE name = 'process Spans'");
}

/* Kineto's "Record Window End" (an instant with an empty pid, after the last
 * span) makes a track of its own, not pid 0's (whose process would show
 * twice under its name); it must not stretch the rank's window, nor the
 * step's. */
static void test_record_window_end_not_in_rank_window(void **state)
{
	struct fx *f = *state;
	import_ok(f, "rank0.json",
		  "{\"distributedInfo\":{\"rank\":0},\"traceEvents\":["
		  "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
		  "\"args\":{\"name\":\"python3\"}},"
		  "{\"ph\":\"X\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":5},"
		  "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":10},"
		  "{\"name\":\"Record Window End\",\"ph\":\"i\",\"s\":\"g\",\"pid\":\"\","
		  "\"tid\":\"\",\"ts\":2000}]}");
	assert_int_equal(q_int(f, "SELECT count(*) FROM events_v WHERE name = 'Record Window End'"),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'process'"
				  " AND name LIKE 'python3 (0)%%'"),
			 1);
	assert_text(f, "global",
		    "SELECT t.pid FROM tracks t JOIN events_v e ON e.track_id = t.id"
		    " WHERE e.name = 'Record Window End'");
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'profiler' AND name "
				  "= 'process global'"),
			 1);
	assert_text(f, "100000 110000",
		    "SELECT start_ns || ' ' || end_ns FROM phases_v WHERE kind = 'rank'");
	assert_text(f, "100000 110000",
		    "SELECT start_ns || ' ' || end_ns FROM phases_v WHERE kind = 'step'");
}

static void test_no_rank_without_distributed_info(void **state)
{
	struct fx *f = *state;
	import_ok(f, "norank.json",
		  "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":1,"
		  "\"dur\":1}]}");
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases WHERE kind = %d", PHASE_RANK), 0);
	assert_int_equal(q_int(f, "SELECT rank IS NULL FROM sources"), 1);
}

/* The events of one rank, as the legacy export writes them (a bare
 * array) and as Kineto does (an object naming the rank). */
#define RANK_EVENTS                                                                                \
	"{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":\"CPU functions\",\"tid\":1,"           \
	"\"ts\":10,\"dur\":100},"                                                                  \
	"{\"ph\":\"X\",\"name\":\"c10d::allreduce_\",\"pid\":\"CPU functions\",\"tid\":1,"         \
	"\"ts\":20,\"dur\":5},"                                                                    \
	"{\"ph\":\"X\",\"name\":\"gloo:all_reduce\",\"pid\":\"CPU functions\",\"tid\":2,"          \
	"\"ts\":22,\"dur\":50},"                                                                   \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":9}"

/* The tree, tracks and row one source made, as text to compare. */
static char *source_shape(struct fx *f, int64_t source)
{
	return q_text(f,
		      "SELECT (SELECT coalesce(rank, '-') FROM sources WHERE id = %lld) || ' | ' ||"
		      " (SELECT group_concat(k, ' ') FROM (SELECT p.kind || ':' || p.name || ':'"
		      " || p.depth || ':' || p.start_ns || ':' || p.dur_ns || ':' ||"
		      " coalesce((SELECT q.kind || ':' || q.name FROM phases_v q"
		      " WHERE q.id = p.parent_id AND q.kind <> 'step'), '-') AS k"
		      " FROM phases_v p WHERE p.source_id = %lld"
		      " ORDER BY p.depth, p.start_ns, p.name)) || ' | ' ||"
		      " (SELECT group_concat(t, ' ') FROM (SELECT kind || ':' || pid || ':' ||"
		      " tid || ':' || coalesce(rank, '-') AS t FROM tracks WHERE source_id = %lld"
		      " ORDER BY kind, tid))",
		      (long long)source, (long long)source, (long long)source);
}

/* --rank N on a trace that names no rank: the same rank node, tracks and
 * source row as distributedInfo's rank N gives, said in RANK_GIVEN. */
static void test_rank_option(void **state)
{
	struct fx *f = *state;
	static const char kineto[] =
	    "{\"distributedInfo\":{\"rank\":2},\"traceEvents\":[" RANK_EVENTS "]}";
	static const char legacy[] = "[" RANK_EVENTS "]";
	const char *a = write_file(f, "kineto.json", kineto, strlen(kineto));
	const char *b = write_file(f, "legacy.json", legacy, strlen(legacy));
	struct import_opts o = {.step = "a"};
	char *err = NULL;
	assert_int_equal(import_with(f, &a, 1, &o, &err), 0);
	o = (struct import_opts){.step = "b", .rank = 2, .has_rank = 1};
	assert_int_equal(import_with(f, &b, 1, &o, &err), 0);
	char *want = source_shape(f, 1), *got = source_shape(f, 2);
	assert_non_null(want);
	assert_non_null(strstr(want, "rank:rank 2:2:"));
	assert_non_null(strstr(want, "process:process CPU functions:3:"));
	assert_non_null(strstr(want, "stream:0:7:2"));
	if (!got || strcmp(got, want))
		print_error("want: %s\ngot:  %s\n", want, got ? got : "(null)");
	assert_non_null(got);
	assert_string_equal(got, want);
	free(want);
	free(got);
	assert_text(f, "RANK_GIVEN 1 --rank 2",
		    "SELECT code || ' ' || count || ' ' || example FROM diagnostics"
		    " WHERE source_id = 2 AND code LIKE 'RANK_G%'");
	assert_int_equal(q_int(f, "SELECT count(*) FROM diagnostics WHERE source_id = 1 AND"
				  " code IN ('RANK_GIVEN', 'RANK_FROM_NAME')"),
			 0);
}

/* --rank against the trace's own rank, over several files or on another
 * format: an error naming the file, nothing imported. */
static void test_rank_option_refused(void **state)
{
	struct fx *f = *state;
	static const char kineto[] =
	    "{\"distributedInfo\":{\"rank\":3},\"traceEvents\":[" RANK_EVENTS "]}";
	static const char legacy[] = "[" RANK_EVENTS "]";
	static const char manifest[] = "{\"step\":\"s\",\"start_ns\":1,\"end_ns\":2}\n";
	const char *paths[] = {write_file(f, "r3.json", kineto, strlen(kineto)),
			       write_file(f, "l.json", legacy, strlen(legacy)),
			       write_file(f, "steps.jsonl", manifest, strlen(manifest))};
	struct import_opts o = {.rank = 1, .has_rank = 1};
	static const struct {
		size_t first, n;
		const char *says;
	} cases[] = {{0, 1, "r3.json: --rank 1, but the trace says rank 3 (distributedInfo)"},
		     {0, 2, "--rank 1 names the rank of one trace; this import has 2 files"},
		     {2, 1, "steps.jsonl: --rank applies to a Chrome trace, not to a workflow"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *err = NULL;
		assert_int_equal(import_with(f, paths + cases[i].first, cases[i].n, &o, &err), -1);
		assert_non_null(err);
		if (!strstr(err, cases[i].says))
			print_error("message: %s\n", err);
		assert_non_null(strstr(err, cases[i].says));
		free(err);
		assert_int_not_equal(access(f->db, F_OK), 0);
	}
	/* the rank the trace says is no contradiction */
	o.rank = 3;
	char *err = NULL;
	assert_int_equal(import_with(f, paths, 1, &o, &err), 0);
	assert_int_equal(q_int(f, "SELECT rank FROM sources"), 3);
	assert_int_equal(diag_count(f, "RANK_GIVEN"), 0);
}

/* The file-name rule, word by word. */
static void test_rank_of_name(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		int says, rank, other;
	} cases[] = {
	    {"straggler_rank0.pt.trace.json.gz", 1, 0, -1},
	    {"/runs/rank1/straggler_rank1.json", 1, 1, -1},
	    {"rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 1, 34, -1},
	    {"facebookresearch__HolisticTraceAnalysis__inference_rank_1.json.gz", 1, 1, -1},
	    {"sampled_rank-0.json.gz", 1, 0, -1},
	    {"facebookresearch__param__worker5_step_12.1694128201549.pt.trace.json", 1, 5, -1},
	    {"kineto_resnet50_num_workers_0__worker0.pt.trace.json.gz", 1, 0, -1},
	    {"RANK12.json", 1, 12, -1},
	    {"Worker_7.json", 1, 7, -1},
	    {"rank3_worker3.json", 1, 3, -1},
	    {"rank0_worker1.json", -1, 0, 1},
	    {"rank-1_rank2.json", -1, 1, 2},
	    {"host_12345.1623143089861.pt.trace.json", 0, -1, -1},
	    {"local_rank0.json", 0, -1, -1},
	    {"norank3.json", 0, -1, -1},
	    {"rank3x.json", 0, -1, -1},
	    {"ranks4.json", 0, -1, -1},
	    {"rank.3.json", 0, -1, -1},
	    {"rank_.json", 0, -1, -1},
	    {"rank1234567890.json", 0, -1, -1},
	    {"/data/rank5/trace.json", 0, -1, -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int rank = -1, other = -1;
		int says = import_rank_of_name(cases[i].path, &rank, &other);
		if (says != cases[i].says || rank != cases[i].rank || other != cases[i].other)
			print_error("%s: %d %d %d\n", cases[i].path, says, rank, other);
		assert_int_equal(says, cases[i].says);
		assert_int_equal(rank, cases[i].rank);
		assert_int_equal(other, cases[i].other);
	}
}

/* A trace naming no rank takes its file name's, in RANK_FROM_NAME; two such
 * in one import share a step, rank nodes beneath; a relative one is said to
 * be unaligned.  A name saying two ranks gives none, in RANK_NAME_AMBIGUOUS;
 * the trace's own rank beats its name's, in RANK_NAME_DIFFERS. */
static void test_rank_from_file_name(void **state)
{
	struct fx *f = *state;
	static const char legacy[] = "[" RANK_EVENTS "]";
	static const char kineto[] =
	    "{\"distributedInfo\":{\"rank\":5},\"traceEvents\":[" RANK_EVENTS "]}";
	const char *two[] = {
	    write_file(f, "straggler_rank0.pt.trace.json", legacy, strlen(legacy)),
	    write_file(f, "straggler_rank1.pt.trace.json", legacy, strlen(legacy))};
	char *err = NULL;
	assert_int_equal(import_paths(f, two, 2, &err), 0);
	assert_text(f, "0 1",
		    "SELECT group_concat(rank, ' ') FROM (SELECT rank FROM sources"
		    " ORDER BY id)");
	assert_text(f, "straggler_rank: rank 0, rank 1",
		    "SELECT s.name || ': ' || group_concat(r.name, ', ') FROM phases_v r"
		    " JOIN phases_v s ON s.id = r.parent_id WHERE r.kind = 'rank'"
		    " GROUP BY s.id ORDER BY r.name");
	assert_int_equal(q_int(f, "SELECT count(DISTINCT rank) FROM tracks"), 2);
	assert_text(f, "RANK_FROM_NAME 1 rank 1 from 'straggler_rank1.pt.trace.json'",
		    "SELECT code || ' ' || count || ' ' || example FROM diagnostics"
		    " WHERE source_id = 2 AND code = 'RANK_FROM_NAME'");
	assert_int_equal(diag_count(f, "RANK_UNALIGNED"), 2);
	assert_int_equal(diag_count(f, "RANK_REPEATED"), 0);
	unlink(f->db);

	const char *amb = write_file(f, "run_rank0_worker1.json", legacy, strlen(legacy));
	assert_int_equal(import_paths(f, &amb, 1, &err), 0);
	assert_int_equal(q_int(f, "SELECT rank IS NULL FROM sources"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'rank'"), 0);
	assert_text(f, "'run_rank0_worker1.json' says rank 0 and rank 1",
		    "SELECT example FROM diagnostics WHERE code = 'RANK_NAME_AMBIGUOUS'");
	assert_int_equal(diag_count(f, "RANK_UNALIGNED"), 0);
	unlink(f->db);

	const char *own = write_file(f, "rank3.json", kineto, strlen(kineto));
	assert_int_equal(import_paths(f, &own, 1, &err), 0);
	assert_int_equal(q_int(f, "SELECT rank FROM sources"), 5);
	assert_text(f, "rank 5", "SELECT name FROM phases_v WHERE kind = 'rank'");
	assert_text(f, "file name rank 3, distributedInfo rank 5",
		    "SELECT example FROM diagnostics WHERE code = 'RANK_NAME_DIFFERS'");
	assert_int_equal(diag_count(f, "RANK_FROM_NAME"), 0);
	unlink(f->db);

	/* with its start given (--time-offset), a rank's trace is aligned */
	const char *one = two[1];
	struct import_opts o = {.time_offset_ns = 1000, .has_time_offset = 1};
	assert_int_equal(import_with(f, &one, 1, &o, &err), 0);
	assert_int_equal(q_int(f, "SELECT rank FROM sources"), 1);
	assert_int_equal(diag_count(f, "RANK_UNALIGNED"), 0);
}

/* Two traces of one import with one rank (two profiling cycles of rank 0
 * under one step): the second is said to repeat it. */
static void test_rank_repeated(void **state)
{
	struct fx *f = *state;
	static const char legacy[] = "[" RANK_EVENTS "]";
	static const char kineto[] =
	    "{\"distributedInfo\":{\"rank\":0},\"traceEvents\":[" RANK_EVENTS "]}";
	const char *paths[] = {write_file(f, "rank0.1700.pt.trace.json", legacy, strlen(legacy)),
			       write_file(f, "rank0.1800.pt.trace.json", kineto, strlen(kineto))};
	char *err = NULL;
	assert_int_equal(import_paths(f, paths, 2, &err), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM sources WHERE rank = 0"), 2);
	char *want = xasprintf("2 RANK_REPEATED rank 0, as %s", paths[0]);
	char *got = q_text(f, "SELECT source_id || ' ' || code || ' ' || example FROM diagnostics"
			      " WHERE code = 'RANK_REPEATED'");
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	free(want);
	assert_int_equal(diag_count(f, "RANK_REPEATED"), 1);
}

/* Every X, B and b ends up as a phase or as a counted drop. */
static void test_completeness(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "{\"traceEvents\":["
	    "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":10},"
	    "{\"ph\":\"X\",\"name\":\"a2\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":20},"
	    "{\"ph\":\"X\",\"name\":\"nots\",\"pid\":1,\"tid\":1},"
	    "{\"ph\":\"X\",\"name\":\"huge\",\"pid\":1,\"tid\":1,\"ts\":1e300,\"dur\":1},"
	    "{\"ph\":\"B\",\"name\":\"b1\",\"pid\":1,\"tid\":2,\"ts\":3},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":4},"
	    "{\"ph\":\"B\",\"name\":\"b2\",\"pid\":1,\"tid\":2,\"ts\":5},"
	    "{\"ph\":\"B\",\"name\":\"nots2\",\"pid\":1,\"tid\":2,\"ts\":null},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":6},"
	    "{\"ph\":\"b\",\"cat\":\"c\",\"name\":\"as\",\"id\":1,\"pid\":1,\"ts\":1},"
	    "{\"ph\":\"e\",\"cat\":\"c\",\"name\":\"as\",\"id\":1,\"pid\":1,\"ts\":9},"
	    "{\"ph\":\"b\",\"cat\":\"c\",\"name\":\"as2\",\"id\":2,\"pid\":1,\"ts\":2},"
	    "{\"ph\":\"i\",\"name\":\"pt\",\"pid\":1,\"tid\":1,\"ts\":3},"
	    "{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":3,\"args\":{\"v\":1}},"
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}},"
	    "{\"ph\":\"t\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":3},"
	    "{\"ph\":\"P\",\"name\":\"sample\",\"pid\":1,\"tid\":1,\"ts\":3},"
	    "{\"name\":\"noph\",\"pid\":1,\"tid\":1,\"ts\":3},"
	    "[1,2],"
	    "7,"
	    "{}]}";
	import_ok(f, "all.json", json);
	assert_int_equal(count_ph(json, 'X') + count_ph(json, 'B') + count_ph(json, 'b'), 9);
	assert_complete(f, json);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"),
			 diag_count(f, "BAD_TS") + diag_count(f, "TIME_OVERFLOW"));
	/* nots (no ts), huge (1e300 us overflows) and nots2 (ts null) */
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 3);
	assert_int_equal(diag_count(f, "UNCLOSED_BEGIN"), 2);
	assert_int_equal(diag_count(f, "UNMATCHED_END"), 1);
	assert_int_equal(diag_count(f, "EMPTY_EVENT"), 1);
	assert_int_equal(diag_count(f, "NOT_OBJECT"), 2);
	assert_int_equal(diag_count(f, "MISSING_PH"), 1);
	assert_int_equal(diag_count(f, "UNSUPPORTED"), 1);
	/* the phases counted are the phases stored (besides the structural nodes) */
	assert_int_equal(q_int(f, "SELECT phases FROM sources"),
			 q_int(f, "SELECT count(*) FROM phases_v WHERE kind NOT IN"
				  " ('workflow', 'step', 'rank', 'process', 'thread', 'stream')"));
}

/* A UTF-8 byte order mark before the document: the sniffer accepts it, so
 * the importer reads past it too. */
static void test_utf8_bom(void **state)
{
	struct fx *f = *state;
	import_ok(f, "bom.json",
		  "\xef\xbb\xbf[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
		  "\"dur\":1}]");
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 1);
}

/* Two files in one import: two sources, each complete. */
static void test_two_files_one_import(void **state)
{
	struct fx *f = *state;
	static const char a[] = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
				"\"dur\":1}]";
	static const char b[] = "{\"traceEvents\":[{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,"
				"\"tid\":1,\"ts\":1},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":3}]}";
	const char *paths[2] = {write_file(f, "a.json", a, strlen(a)),
				write_file(f, "b.json", b, strlen(b))};
	char *err = NULL;
	int rc = import_paths(f, paths, 2, &err);
	free(err);
	assert_int_equal(rc, 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM sources"), 2);
	assert_int_equal(q_int(f, "SELECT sum(phases) FROM sources"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases WHERE kind = %d", PHASE_WORKFLOW),
			 1);
}

/* ---- malformed input fails, naming the file and the byte; no db is left ---- */

/* Imports text as dir/name, which must fail naming the file and the byte
 * and leave no trace.db; with strict, under --strict.  The message, owned. */
static char *failure_of(struct fx *f, const char *name, const char *text, size_t len, int strict)
{
	const char *path = write_file(f, name, text, len);
	struct import_opts o;
	memset(&o, 0, sizeof(o));
	o.strict = strict;
	char *err = NULL;
	int rc = import_with(f, &path, 1, &o, &err);
	if (rc != -1)
		print_error("%s imported%s\n", name, strict ? " under --strict" : "");
	assert_int_equal(rc, -1);
	assert_non_null(err);
	if (!strstr(err, path) || !strstr(err, "byte"))
		print_error("message: %s\n", err);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "byte"));
	assert_null(strchr(err, '\n'));
	assert_int_not_equal(access(f->db, F_OK), 0);
	char *journal = xasprintf("%s-journal", f->db);
	assert_int_not_equal(access(journal, F_OK), 0);
	free(journal);
	return err;
}

static void expect_failure(struct fx *f, const char *name, const char *text, size_t len)
{
	free(failure_of(f, name, text, len, 0));
}

/* Cut before its traceEvents array: not read as a trace cut short. */
static void test_truncated_json(void **state)
{
	static const char json[] = "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"na";
	expect_failure(*state, "trunc.json", json, strlen(json));
}

static void test_syntax_error(void **state)
{
	static const char json[] =
	    "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
	    "{\"ph\":\"X\",,\"name\":\"b\"}]";
	expect_failure(*state, "syntax.json", json, strlen(json));
}

static void test_top_level_number(void **state)
{
	expect_failure(*state, "number.json", "42\n", 3);
}

static void test_trailing_garbage(void **state)
{
	static const char json[] = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
				   "\"dur\":1}] [";
	expect_failure(*state, "garbage.json", json, strlen(json));
}

/* Any JSON object is not a trace: without a traceEvents array, fail. */
static void test_object_without_events(void **state)
{
	static const char json[] = "{\"name\":\"my-package\",\"version\":\"1.0\"}";
	expect_failure(*state, "package.json", json, strlen(json));
}

static void test_trace_events_not_array(void **state)
{
	static const char json[] = "{\"traceEvents\":5}";
	expect_failure(*state, "five.json", json, strlen(json));
}

/* ---- Chrome trace JSON as Perfetto reads it; --strict reads JSON ---- */

#define EV1 "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}"

static void assert_example(struct fx *f, const char *code, const char *want)
{
	char *sql = xasprintf("SELECT example FROM diagnostics WHERE code = '%s'", code);
	assert_text(f, want, sql);
	free(sql);
}

/* Under --strict, text fails with the message JSON's rules give it (the
 * importer's message before it read what Perfetto reads). */
static void expect_strict(struct fx *f, const char *text, size_t len, const char *want)
{
	close_conn(f);
	unlink_db(f->db);
	char *err = failure_of(f, "strict.json", text, len, 1);
	const char *msg = strstr(err, "strict.json: ");
	if (!msg || strcmp(msg + 13, want))
		print_error("want: %s\ngot:  %s\n", want, err);
	assert_non_null(msg);
	assert_string_equal(msg + 13, want);
	free(err);
}

/* A comma before ']' or '}' wherever JSON has one: skipped and counted,
 * the first named by its byte; what the commas followed is read as without
 * them. */
static void test_trailing_commas(void **state)
{
	struct fx *f = *state;
	static const char arr[] = "[" EV1 "," EV1 ",]";
	import_text(f, "arr.json", arr, strlen(arr));
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_int_equal(diag_count(f, "TRAILING_COMMA"), 1);
	assert_example(f, "TRAILING_COMMA", "first at byte 106");
	expect_strict(f, arr, strlen(arr),
		      "malformed JSON at byte 108: parse error: unallowed token at this point in "
		      "JSON text");

	unlink_db(f->db);
	static const char obj[] =
	    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,"
	    "\"args\":{\"l\":[1,2 , ],\"m\":{\"k\":1,}\n,},},\n]\t,\"meta\":[1,],}\n";
	import_text(f, "obj.json", obj, strlen(obj));
	assert_int_equal(diag_count(f, "TRAILING_COMMA"), 7);
	assert_example(f, "TRAILING_COMMA", "first at byte 85");
	assert_text(f, "{\"l\":[1,2],\"m\":{\"k\":1}}",
		    "SELECT attrs FROM phases_v WHERE name = 'c'");
	assert_text(f, "{\"meta\":[1]}", "SELECT attrs FROM sources");
	expect_strict(f, obj, strlen(obj),
		      "malformed JSON at byte 88: parse error: unallowed token at this point in "
		      "JSON text");
}

/* Control characters unescaped in strings (names, args keys and values,
 * top-level metadata) read as their escapes would be; counted, the first
 * named. */
static void test_control_characters(void **state)
{
	struct fx *f = *state;
	static const char raw[] =
	    "{\"m\":\"x\ty\",\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\tb\nc\x01\",\"pid\":1,"
	    "\"tid\":1,\"ts\":1,\"dur\":7,\"args\":{\"k\x1f\":\"v\rw\",\"z\":\"n\0ul\"}}]}";
	static const char esc[] =
	    "{\"m\":\"x\\ty\",\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\\tb\\nc\\u0001\","
	    "\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":7,\"args\":{\"k\\u001f\":\"v\\rw\",\"z\":"
	    "\"n\\u0000ul\"}}]}";
	import_ok(f, "esc.json", esc);
	char *name = q_text(f, "SELECT hex(name) FROM phases_v WHERE name LIKE 'a%%'");
	char *attrs = q_text(f, "SELECT attrs FROM phases_v WHERE name LIKE 'a%%'");
	char *meta = q_text(f, "SELECT attrs FROM sources");
	assert_non_null(name);
	assert_string_equal(name, "6109620A6301");
	close_conn(f);
	unlink_db(f->db);
	import_text(f, "raw.json", raw, sizeof(raw) - 1);
	assert_int_equal(diag_count(f, "CONTROL_CHAR"), 7);
	assert_example(f, "CONTROL_CHAR", "first at byte 7");
	assert_int_equal(diag_count(f, "BAD_UTF8"), 1); /* the NUL, as when escaped */
	assert_text(f, name, "SELECT hex(name) FROM phases_v WHERE name LIKE 'a%'");
	assert_text(f, attrs, "SELECT attrs FROM phases_v WHERE name LIKE 'a%'");
	assert_text(f, meta, "SELECT attrs FROM sources");
	free(name);
	free(attrs);
	free(meta);
	expect_strict(f, raw, sizeof(raw) - 1,
		      "malformed JSON at byte 7: lexical error: invalid character inside string.");

	/* outside a string, or escaped by a backslash, one is still an error */
	expect_failure(f, "outside.json", "[" EV1 ",\x01]", strlen("[" EV1 ",\x01]"));
	static const char after_bs[] = "[{\"ph\":\"X\",\"name\":\"a\\\x01\"}]";
	expect_failure(f, "backslash.json", after_bs, strlen(after_bs));
}

/* The JSON Array Format without its closing ']', after an event or a
 * comma: every event imported, where the input ends noted. */
static void test_unclosed_array(void **state)
{
	struct fx *f = *state;
	static const char bare[] = "[" EV1 "," EV1;
	import_text(f, "bare.json", bare, strlen(bare));
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_example(f, "UNCLOSED_ARRAY", "input ends at byte 106 (line 1)");
	expect_strict(f, bare, strlen(bare),
		      "truncated JSON (input ends inside a value) at byte 106: parse error: "
		      "premature EOF");

	unlink_db(f->db);
	static const char comma[] = "[\n" EV1 ",\n" EV1 ",\n";
	import_text(f, "comma.json", comma, strlen(comma));
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_int_equal(diag_count(f, "TRAILING_COMMA"), 0);
	assert_example(f, "UNCLOSED_ARRAY", "input ends at byte 110 (line 3)");
	expect_strict(f, comma, strlen(comma),
		      "truncated JSON (input ends inside a value) at byte 110: parse error: "
		      "premature EOF");

	/* not inside the array: the object around it cut short, or a comma
	 * after the whole document */
	static const char open_obj[] = "{\"traceEvents\":[" EV1 "]";
	expect_failure(f, "object.json", open_obj, strlen(open_obj));
	static const char after[] = "[" EV1 "],";
	expect_failure(f, "after.json", after, strlen(after));
}

/* A file cut inside its last event: the events before it imported, the
 * cut one counted as dropped (so phases + dropped still count every
 * duration event), where the file stops named by byte and line. */
static void test_cut_in_last_event(void **state)
{
	struct fx *f = *state;
	static const char cut[] =
	    "{\"traceEvents\":[\n" EV1 ",\n" EV1 ",\n{\"ph\":\"X\",\"name\":\"cu";
	import_text(f, "cut.json", cut, strlen(cut));
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 1);
	assert_complete(f, cut);
	assert_int_equal(diag_count(f, "TRUNCATED"), 1);
	assert_example(f, "TRUNCATED", "input ends at byte 145 (line 4) inside an event");
	expect_strict(f, cut, strlen(cut),
		      "truncated JSON (input ends inside a value) at byte 145: parse error: "
		      "premature EOF");

	/* cut inside args, after a backslash, inside an element not an event */
	static const char *const more[] = {
	    "[" EV1 ",{\"ph\":\"B\",\"args\":{\"a\":[1,{\"b\":\"x",
	    "[" EV1 ",{\"ph\":\"i\",\"name\":\"a\\",
	    "[" EV1 ",[1,2",
	};
	static const int64_t dropped[] = {1, 0, 0};
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		unlink_db(f->db);
		import_text(f, "more.json", more[i], strlen(more[i]));
		assert_int_equal(q_int(f, "SELECT phases FROM sources"), 1);
		assert_int_equal(q_int(f, "SELECT dropped FROM sources"), dropped[i]);
		char *want = xasprintf("input ends at byte %zu (line 1) inside %s", strlen(more[i]),
				       i == 2 ? "an element" : "an event");
		assert_example(f, "TRUNCATED", want);
		free(want);
	}
}

/* What is not a trace cut short still fails, lenient or not. */
static void test_lenient_refuses_non_traces(void **state)
{
	struct fx *f = *state;
	static const char *const texts[] = {
	    "[" EV1 ",," EV1 "]",
	    "[,]",
	    "{\"traceEvents\":[" EV1 "],\"a\":{,}}",
	    "[" EV1 "] ,",
	    "{\"name\":\"my-package\",\"version\":\"1.",
	    "[" EV1 ",{\"ph\":\"X\",\"name\":\"a\" \"b\"}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		expect_failure(f, "bad.json", texts[i], strlen(texts[i]));
}

/* An event EV1 whose name is padded so that it ends at byte `end` of the
 * text in t (which holds the events before it). */
static void pad_event(struct sbuf *t, size_t end)
{
	static const char head[] = "{\"ph\":\"X\",\"name\":\"",
			  tail[] = "\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":1},";
	size_t fixed = strlen(head) + strlen(tail);
	assert_true(end >= t->len + fixed + 1);
	sbuf_adds(t, head);
	for (size_t n = end - t->len - fixed + strlen(head); n; n--)
		sbuf_addc(t, 'p');
	sbuf_adds(t, tail);
	assert_int_equal(t->len, end);
}

/* A trailing comma and a control character on either side of the places
 * where the input is handed over in pieces (the 4096 bytes sniffing
 * peeked, then 64 KiB reads: importers/input.c, parse_input), and the white
 * space between a comma and its ']' across one: through the real input
 * path, with the event scanner and without it (YAJL then reads each piece
 * as it comes). */
static void test_lenient_across_reads(void **state)
{
	struct fx *f = *state;
	static const size_t edges[] = {4096, 4096 + 65536};
	struct sbuf t = SBUF_INIT;
	sbuf_init(&t);
	for (int scan = 0; scan < 2; scan++) {
		setenv("GRADEML_CHROME_SCAN", scan ? "1" : "0", 1);
		for (size_t e = 0; e < 2; e++)
			for (size_t d = 0; d < 12; d++) {
				/* the comma at the edge - 6 + d, its ']' 8 bytes on */
				size_t at = edges[e] - 6 + d;
				sbuf_reset(&t);
				sbuf_adds(&t, "[");
				pad_event(&t, at - strlen(EV1));
				sbuf_adds(&t, EV1 ",  \n \n   ]");
				import_text(f, "comma.json", t.buf, t.len);
				assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
				char *want = xasprintf("first at byte %zu", at);
				assert_example(f, "TRAILING_COMMA", want);
				free(want);
				unlink_db(f->db);

				/* a tab there inside a name, the array unclosed after
				 * a comma at the end */
				sbuf_reset(&t);
				sbuf_adds(&t, "[");
				pad_event(&t, at - 18);
				sbuf_adds(&t, "{\"ph\":\"X\",\"name\":\"\tb\",\"pid\":1,\"tid\":3,"
					      "\"ts\":1,\"dur\":1},");
				import_text(f, "tab.json", t.buf, t.len);
				assert_int_equal(q_int(f, "SELECT phases FROM sources"), 2);
				want = xasprintf("first at byte %zu", at);
				assert_example(f, "CONTROL_CHAR", want);
				free(want);
				assert_int_equal(diag_count(f, "UNCLOSED_ARRAY"), 1);
				unlink_db(f->db);
			}
	}
	unsetenv("GRADEML_CHROME_SCAN");
	sbuf_release(&t);
}

/* Kineto's GPU-side ProfilerStep#N and Optimizer.step (gpu_user_annotation)
 * stay on the device, in a lane of their own beside their stream: the
 * stream node holds its device work alone.  Stream 0 (us): annotations
 * 10..60 and 30..40 over kernels 20..25 and 24..30 and a memcpy 50..52,
 * the first kernel launched by a runtime call: busy is the union 20..30 +
 * 50..52 = 12 us of the work's window 20..52 (32 us), so self (idle) is
 * 20 us; 3 items, of which the 2 with no launch are the stream's children. */
static void test_gpu_annotations_beside_stream(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#1\","
	    "\"pid\":2,\"tid\":0,\"ts\":10,\"dur\":50},"
	    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"Optimizer.step\","
	    "\"pid\":2,\"tid\":0,\"ts\":30,\"dur\":10},"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":2,\"tid\":0,\"ts\":20,"
	    "\"dur\":5,\"args\":{\"correlation\":7}},"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":2,\"tid\":0,\"ts\":24,"
	    "\"dur\":6},"
	    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH\",\"pid\":2,"
	    "\"tid\":0,\"ts\":50,\"dur\":2},"
	    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,"
	    "\"tid\":9,\"ts\":5,\"dur\":3,\"args\":{\"correlation\":7}},"
	    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":9,"
	    "\"tid\":9,\"ts\":0,\"dur\":100}]";
	import_ok(f, "gpustep.json", json);
	assert_text(f, "annotation:stream 0 annotations,stream:stream 0",
		    "SELECT group_concat(kind || ':' || name) FROM (SELECT kind, name FROM tracks"
		    " WHERE pid = '2' ORDER BY kind)");
	assert_text(f, "3 12000 32000 20000 2",
		    "SELECT t.spans || ' ' || (p.dur_ns - p.self_ns) || ' ' || p.dur_ns || ' ' ||"
		    " p.self_ns || ' ' || p.child_count FROM tracks t JOIN phases p ON p.id ="
		    " t.phase_id WHERE t.kind = 'stream'");
	/* the annotations hang under their lane's node, beside the stream */
	assert_text(f, "gpu_annotation 2 2 ProfilerStep#1,Optimizer.step",
		    "SELECT n.kind || ' ' || n.child_count || ' ' || t.spans || ' ' || (SELECT"
		    " group_concat(name) FROM (SELECT name FROM phases_v WHERE parent_id = n.id"
		    " ORDER BY start_ns)) FROM tracks t JOIN phases_v n ON n.id = t.phase_id"
		    " WHERE t.kind = 'annotation'");
	assert_int_equal(
	    q_int(f, "SELECT count(*) FROM phases_v a JOIN phases_v s ON s.id ="
		     " a.parent_id WHERE s.kind = 'stream' AND a.kind = 'gpu_annotation'"),
	    0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'profiler_step'"), 1);
	assert_complete(f, json);
}

/* Kineto's device categories beyond CUDA: MTIA's command processor events
 * (mtia_ccp_events) are device work on the stream Kineto names, linked to
 * the mtia_runtime call that launched them; XPU's runtime calls launch. */
static void test_accelerator_categories(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":17,\"tid\":3774,"
	    "\"args\":{\"name\":\"Stream 108\"}},"
	    "{\"ph\":\"X\",\"cat\":\"mtia_ccp_events\",\"name\":\"pe_exe\",\"pid\":17,"
	    "\"tid\":3774,\"ts\":20,\"dur\":5,\"args\":{\"stream\":108,\"correlation\":3}},"
	    "{\"ph\":\"X\",\"cat\":\"mtia_ccp_events\",\"name\":\"dma_request\",\"pid\":17,"
	    "\"tid\":3774,\"ts\":30,\"dur\":4,\"args\":{\"stream\":108}},"
	    "{\"ph\":\"X\",\"cat\":\"mtia_runtime\",\"name\":\"launchKernel\",\"pid\":865,"
	    "\"tid\":1,\"ts\":10,\"dur\":2,\"args\":{\"correlation\":3}},"
	    "{\"ph\":\"X\",\"cat\":\"xpu_runtime\",\"name\":\"urEnqueueKernelLaunch\","
	    "\"pid\":865,\"tid\":1,\"ts\":40,\"dur\":2,\"args\":{\"correlation\":4}},"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"xk\",\"pid\":0,\"tid\":1,\"ts\":45,"
	    "\"dur\":1,\"args\":{\"correlation\":4}}]}";
	import_ok(f, "mtia.json", json);
	assert_text(f, "Stream 108 2 9000 14000,stream 1 1 1000 1000",
		    "SELECT group_concat(x, ',') FROM (SELECT t.name || ' ' || t.spans || ' ' ||"
		    " (p.dur_ns - p.self_ns) || ' ' || p.dur_ns AS x FROM tracks t JOIN phases p"
		    " ON p.id = t.phase_id WHERE t.kind = 'stream' ORDER BY t.name)");
	assert_text(f, "kernel:launchKernel,kernel:Stream 108,kernel:urEnqueueKernelLaunch",
		    "SELECT group_concat(x, ',') FROM (SELECT d.kind || ':' || l.name AS x FROM"
		    " phases_v d JOIN phases_v l ON l.id = d.parent_id WHERE d.kind = 'kernel'"
		    " ORDER BY d.start_ns)");
	assert_complete(f, json);
}

/* The metadata of an XLA/TensorFlow trace viewer file (as jax.profiler
 * writes it), then its events. */
#define XLA_NAMES                                                                                  \
	"{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/"                 \
	"device:GPU:0\"}},"                                                                        \
	"{\"ph\":\"M\",\"pid\":1,\"tid\":14,\"name\":\"thread_name\",\"args\":{\"name\":"          \
	"\"Stream #14(Compute)\"}},"                                                               \
	"{\"ph\":\"M\",\"pid\":1,\"tid\":15,\"name\":\"thread_name\",\"args\":{\"name\":"          \
	"\"Stream #15(MemcpyH2D)\"}},"                                                             \
	"{\"ph\":\"M\",\"pid\":1,\"tid\":20,\"name\":\"thread_name\",\"args\":{\"name\":"          \
	"\"XLA Ops\"}},"                                                                           \
	"{\"ph\":\"M\",\"pid\":1,\"tid\":21,\"name\":\"thread_name\",\"args\":{\"name\":"          \
	"\"XLA Modules\"}},"                                                                       \
	"{\"ph\":\"M\",\"pid\":701,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},"
#define XLA_EVENTS                                                                                 \
	"{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":0,\"dur\":100,\"name\":\"train\"},"            \
	"{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":10,\"dur\":2,\"name\":\"fusion\","             \
	"\"args\":{\"correlation_id\":\"7\",\"device_id\":\"0\"}},"                                \
	"{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":13,\"dur\":1,\"name\":\"MemcpyH2D\","          \
	"\"args\":{\"correlation_id\":\"8\",\"device_id\":\"0\"}},"                                \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"ts\":20,\"dur\":5,\"name\":\"fusion\","              \
	"\"args\":{\"correlation_id\":\"7\",\"hlo_op\":\"fusion\"}},"                              \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"ts\":24,\"dur\":6,\"name\":\"gemm\","                \
	"\"args\":{\"correlation_id\":\"7\"}},"                                                    \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":15,\"ts\":40,\"dur\":2,\"name\":\"MemcpyH2D\","           \
	"\"args\":{\"correlation_id\":\"8\",\"memcpy_details\":\"size:4\"}},"                      \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":20,\"ts\":20,\"dur\":10,\"name\":\"fusion\"},"            \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":21,\"ts\":20,\"dur\":22,\"name\":\"jit_f\"}"

/* XLA's device plane: its Stream # threads hold the device work (a copy by
 * its name), each linked to the host call of its correlation_id (one call
 * may launch several: a CUDA graph); XLA Ops and XLA Modules repeat that
 * work by op and module and get lanes of their own, neither the streams'
 * busy time nor their items.  Stream 14 (us): kernels 20..25 and 24..30:
 * 2 items, busy 10 of its window 10; stream 15: a copy 40..42. */
static void test_xla_device_plane(void **state)
{
	struct fx *f = *state;
	static const char json[] = "{\"traceEvents\":[" XLA_NAMES XLA_EVENTS "]}";
	import_ok(f, "jax.json", json);
	assert_text(f,
		    "annotation:XLA Modules:1,annotation:XLA Ops:1,stream:Stream #14(Compute):2,"
		    "stream:Stream #15(MemcpyH2D):1",
		    "SELECT group_concat(x, ',') FROM (SELECT kind || ':' || name || ':' || spans"
		    " AS x FROM tracks WHERE pid = '1' ORDER BY kind, name)");
	assert_text(f, "10000 10000,2000 2000",
		    "SELECT group_concat(x, ',') FROM (SELECT (p.dur_ns - p.self_ns) || ' ' ||"
		    " p.dur_ns AS x FROM tracks t JOIN phases p ON p.id = t.phase_id"
		    " WHERE t.kind = 'stream' ORDER BY t.name)");
	/* each under the call that launched it, a runtime call of the host */
	assert_text(f,
		    "kernel fusion<runtime fusion,kernel gemm<runtime fusion,"
		    "memcpy MemcpyH2D<runtime MemcpyH2D",
		    "SELECT group_concat(x, ',') FROM (SELECT d.kind || ' ' || d.name || '<' ||"
		    " l.kind || ' ' || l.name AS x FROM phases_v d JOIN phases_v l ON l.id ="
		    " d.parent_id WHERE d.kind IN ('kernel', 'memcpy') ORDER BY d.start_ns)");
	assert_text(f, "XLA Modules>gpu_annotation jit_f,XLA Ops>gpu_annotation fusion",
		    "SELECT group_concat(x, ',') FROM (SELECT t.name || '>' || p.kind || ' ' ||"
		    " p.name AS x FROM phases_v p JOIN tracks t ON t.phase_id = p.parent_id"
		    " WHERE t.kind = 'annotation' ORDER BY t.name)");
	assert_int_equal(diag_count(f, "UNLINKED_DEVICE"), 0);
	assert_int_equal(diag_count(f, "NO_DEVICE_WORK"), 0);
	assert_complete(f, json);
}

/* XLA's host plane: the Python tracer's frames ("$file.py:line f") are
 * spans, as Kineto's python_function events are, and a StepTraceAnnotation
 * (args.step_num) a profiler step named by its number.  The step begins
 * inside the frame of its __init__ (us 20..23), and holds the work of its
 * window (22..122) all the same: the frame that opened it ends at 23, and
 * the step nests in the loop's frame that holds it. */
static void test_xla_host_plane(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "{\"traceEvents\":[" XLA_NAMES
	    "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":0,\"dur\":200,\"name\":\"$train.py:10 "
	    "main\"},"
	    "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":20,\"dur\":3,\"name\":\"$profiler.py:385 "
	    "__init__\"},"
	    "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":22,\"dur\":100,\"name\":\"train\","
	    "\"args\":{\"step_num\":\"3\"}},"
	    "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":30,\"dur\":30,\"name\":\"PjitFunction(f)\"}"
	    ","
	    "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":40,\"dur\":2,\"name\":\"fusion\","
	    "\"args\":{\"correlation_id\":\"7\"}},"
	    "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":120,\"dur\":5,\"name\":\"$profiler.py:400 "
	    "__exit__\"},"
	    "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"ts\":50,\"dur\":5,\"name\":\"fusion\","
	    "\"args\":{\"correlation_id\":\"7\"}}]}";
	import_ok(f, "jax.json", json);
	/* kind name/duration (us)<parent */
	assert_text(
	    f,
	    "span $train.py:10 main/200<python3,span $profiler.py:385 __init__/3<$train.py:10"
	    " main,profiler_step train#3/100<$train.py:10 main,operator PjitFunction(f)/30<"
	    "train#3,runtime fusion/2<PjitFunction(f),kernel fusion/5<fusion,"
	    "span $profiler.py:400 __exit__/5<train#3",
	    "SELECT group_concat(x, ',') FROM (SELECT p.kind || ' ' || p.name || '/' ||"
	    " (p.dur_ns / 1000) || '<' || coalesce(u.name, 'python3') AS x FROM phases_v p"
	    " LEFT JOIN phases_v u ON u.id = p.parent_id AND u.kind NOT IN ('thread',"
	    " 'stream') WHERE p.depth >= 4 ORDER BY p.start_ns, p.kind)");
	/* the repairs: the frame of __exit__ outlasts the step, the frame of
	 * __init__ is none, and the kernel found its launch */
	assert_text(f, "OVERLAP 1",
		    "SELECT group_concat(code || ' ' || count) FROM diagnostics"
		    " WHERE code IN ('OVERLAP', 'UNLINKED_DEVICE')");
	assert_complete(f, json);
}

/* A TPU's plane has no streams: its XLA Ops line is its work. */
static void test_tpu_plane(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "{\"traceEvents\":["
	    "{\"ph\":\"M\",\"pid\":3,\"name\":\"process_name\",\"args\":{\"name\":\"/"
	    "device:TPU:0\"}},"
	    "{\"ph\":\"M\",\"pid\":3,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":"
	    "\"XLA Ops\"}},"
	    "{\"ph\":\"M\",\"pid\":3,\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":"
	    "\"XLA Modules\"}},"
	    "{\"ph\":\"X\",\"pid\":3,\"tid\":1,\"ts\":5,\"dur\":3,\"name\":\"convolution.1\"},"
	    "{\"ph\":\"X\",\"pid\":3,\"tid\":1,\"ts\":9,\"dur\":1,\"name\":\"add.2\"},"
	    "{\"ph\":\"X\",\"pid\":3,\"tid\":2,\"ts\":5,\"dur\":5,\"name\":\"jit_step\"}]}";
	import_ok(f, "tpu.json", json);
	assert_text(f, "annotation:XLA Modules:1,stream:XLA Ops:2",
		    "SELECT group_concat(x, ',') FROM (SELECT kind || ':' || name || ':' || spans"
		    " AS x FROM tracks ORDER BY kind, name)");
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'kernel'"), 2);
	assert_int_equal(diag_count(f, "UNLINKED_DEVICE"), 2);
	assert_complete(f, json);
}

/* TensorFlow 1's timeline: a process per stream, one for all streams (a
 * repeat of them), one of copies, and the host's record of the device's
 * ops ("/job:..."), category "Op" throughout. */
static void test_tf1_timeline(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "{\"traceEvents\":["
	    "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":"
	    "\"/job:localhost/replica:0/task:0/device:GPU:0 Compute\"}},"
	    "{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":"
	    "\"/device:GPU:0/stream:all Compute\"}},"
	    "{\"ph\":\"M\",\"pid\":3,\"name\":\"process_name\",\"args\":{\"name\":"
	    "\"/device:GPU:0/stream:14 Compute\"}},"
	    "{\"ph\":\"M\",\"pid\":4,\"name\":\"process_name\",\"args\":{\"name\":"
	    "\"/device:GPU:0/memcpy Compute\"}},"
	    "{\"ph\":\"X\",\"cat\":\"Op\",\"pid\":1,\"tid\":0,\"ts\":1,\"dur\":2,\"name\":"
	    "\"MatMul\"},"
	    "{\"ph\":\"X\",\"cat\":\"Op\",\"pid\":2,\"tid\":0,\"ts\":4,\"dur\":3,\"name\":"
	    "\"MatMul\"},"
	    "{\"ph\":\"X\",\"cat\":\"Op\",\"pid\":3,\"tid\":0,\"ts\":4,\"dur\":3,\"name\":"
	    "\"MatMul\"},"
	    "{\"ph\":\"X\",\"cat\":\"Op\",\"pid\":4,\"tid\":0,\"ts\":8,\"dur\":1,\"name\":"
	    "\"MEMCPYHtoD\"}]}";
	import_ok(f, "tf1.json", json);
	assert_text(f,
		    "1:thread:operator,2:annotation:gpu_annotation,3:stream:kernel,4:stream:memcpy",
		    "SELECT group_concat(x, ',') FROM (SELECT t.pid || ':' || t.kind || ':' ||"
		    " p.kind AS x FROM phases_v p JOIN tracks t ON t.id = p.track_id"
		    " WHERE p.name IN ('MatMul', 'MEMCPYHtoD') ORDER BY t.pid)");
	assert_int_equal(diag_count(f, "NO_DEVICE_WORK"), 0);
}

/* Names that come after their tracks' events come too late to make them a
 * device's: with no device work at all, the tracks named like a device's
 * are counted in NO_DEVICE_WORK, the first one's names its example.
 * A host thread of no device name is not counted. */
static void test_device_names_too_late(void **state)
{
	struct fx *f = *state;
	static const char json[] = "{\"traceEvents\":[" XLA_EVENTS "," XLA_NAMES
				   "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_sort_index\","
				   "\"args\":{\"sort_index\":1}}]}";
	import_ok(f, "late.json", json);
	assert_int_equal(q_int(f, "SELECT count(*) FROM tracks WHERE kind = 'stream'"), 0);
	assert_int_equal(diag_count(f, "NO_DEVICE_WORK"), 4);
	assert_text(f, "pid 1 '/device:GPU:0' tid 14 'Stream #14(Compute)'",
		    "SELECT example FROM diagnostics WHERE code = 'NO_DEVICE_WORK'");
	assert_complete(f, json);
}

/* Host runtime calls and no device work (a capture without kernels): the
 * category alone says the trace expected a device. */
static void test_device_category_without_work(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,"
	    "\"tid\":9,\"ts\":5,\"dur\":3,\"args\":{\"correlation\":7}},"
	    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":9,\"tid\":8,"
	    "\"ts\":5,\"dur\":3}]";
	import_ok(f, "nokernels.json", json);
	assert_int_equal(diag_count(f, "NO_DEVICE_WORK"), 1);
	assert_text(f, "pid 9 '' tid 9 '', a device category",
		    "SELECT example FROM diagnostics WHERE code = 'NO_DEVICE_WORK'");
}

/* An E before its B: a negative duration is read as 0 and counted; extreme
 * times do not overflow. */
static void test_end_before_begin(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"B\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":50},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":10},"
	    "{\"ph\":\"B\",\"name\":\"far\",\"pid\":1,\"tid\":2,\"ts\":-9000000000000000},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":9000000000000000}]";
	import_ok(f, "negative.json", json);
	assert_int_equal(diag_count(f, "BAD_DUR"), 2);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'a'"), 0);
	assert_complete(f, json);
}

/* Spans bound into a flow by bind_id keep their own category. */
static void test_bind_id_keeps_category(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
	    "\"dur\":2,\"bind_id\":7,\"flow_out\":true},"
	    "{\"ph\":\"X\",\"cat\":\"python\",\"name\":\"b\",\"pid\":1,\"tid\":2,\"ts\":5,"
	    "\"dur\":2,\"bind_id\":7,\"flow_in\":true}]";
	import_ok(f, "bind.json", json);
	assert_text(f, "cpu_op", "SELECT category FROM phases_v WHERE name = 'a'");
	assert_text(f, "python", "SELECT category FROM phases_v WHERE name = 'b'");
	assert_int_equal(q_int(f, "SELECT count(*) FROM edges"), 1);
}

/* A ranked trace holding only metadata adds no rank node and does not
 * stretch the step back to the epoch. */
static void test_empty_rank_adds_nothing(void **state)
{
	struct fx *f = *state;
	const char *paths[2];
	paths[0] = write_file(f, "r0.json",
			      "{\"distributedInfo\":{\"rank\":0},\"traceEvents\":["
			      "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
			      "\"ts\":1700000000000000,\"dur\":5}]}",
			      strlen("{\"distributedInfo\":{\"rank\":0},\"traceEvents\":["
				     "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
				     "\"ts\":1700000000000000,\"dur\":5}]}"));
	static const char meta_only[] =
	    "{\"distributedInfo\":{\"rank\":1},\"traceEvents\":["
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}}]}";
	paths[1] = write_file(f, "r1.json", meta_only, strlen(meta_only));
	char *err = NULL;
	int rc = import_paths(f, paths, 2, &err);
	free(err);
	assert_int_equal(rc, 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'rank'"), 1);
	assert_int_equal(q_int(f, "SELECT min(start_ns) FROM phases_v WHERE kind IN"
				  " ('workflow', 'step')"),
			 1700000000000000000LL);
}

/* Top-level metadata is kept as valid JSON, and beyond its cap skipped
 * with a diagnostic rather than held in memory. */
static void test_metadata_capped(void **state)
{
	struct fx *f = *state;
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	sbuf_adds(&sb, "{");
	for (int k = 0; k < 17; k++) { /* 17 strings of 60000 bytes: 40 KiB short of 1 MiB */
		sbuf_addf(&sb, "\"a%d\":\"", k);
		for (size_t i = 0; i < 60000; i++)
			sbuf_addc(&sb, 'x');
		sbuf_adds(&sb, "\",");
	}
	sbuf_adds(&sb, "\"stackFrames\":{");
	for (int i = 0; i < 4000; i++) /* 80 KiB */
		sbuf_addf(&sb, "%s\"%d\":{\"name\":\"f\"}", i ? "," : "", i);
	sbuf_adds(&sb, "},\"traceEvents\":"
		       "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}");
	const char *path = write_file(f, "meta.json", sb.buf, sb.len);
	sbuf_release(&sb);
	char *err = NULL;
	int rc = import_paths(f, &path, 1, &err);
	free(err);
	assert_int_equal(rc, 0);
	assert_int_equal(diag_count(f, "META_SKIPPED"), 1);
	assert_int_equal(q_int(f, "SELECT json_valid(attrs) FROM sources"), 1);
	assert_int_equal(q_int(f, "SELECT json_type(attrs, '$.stackFrames') IS NULL FROM sources"),
			 1);
	assert_int_equal(q_int(f, "SELECT length(json_extract(attrs, '$.a16')) FROM sources"),
			 60000);
}

/* One top-level value larger than the cap, as the first member: it is not
 * kept, nor held while it is read, and the members after it are. */
static void test_metadata_value_capped(void **state)
{
	struct fx *f = *state;
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	sbuf_adds(&sb, "{\"stackFrames\": {");
	for (int i = 0; i < 40000; i++)
		sbuf_addf(&sb, "%s\"%d\": {\"name\": \"module.py(%d): forward\", \"parent\": %d}",
			  i ? ", " : "", i, i, i / 2);
	sbuf_adds(&sb, "}, \"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"name\": "
		       "\"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}");
	assert_true(sb.len > (1 << 20) + (1 << 19));
	const char *path = write_file(f, "frames.json", sb.buf, sb.len);
	sbuf_release(&sb);
	char *err = NULL;
	int rc = import_paths(f, &path, 1, &err);
	free(err);
	assert_int_equal(rc, 0);
	assert_int_equal(diag_count(f, "META_SKIPPED"), 1);
	assert_text(f, "stackFrames",
		    "SELECT example FROM diagnostics WHERE code = 'META_SKIPPED'");
	assert_int_equal(q_int(f, "SELECT json_valid(attrs) FROM sources"), 1);
	assert_int_equal(q_int(f, "SELECT json_type(attrs, '$.stackFrames') IS NULL FROM sources"),
			 1);
	assert_int_equal(q_int(f, "SELECT json_extract(attrs, '$.schemaVersion') FROM sources"), 1);
}

/* Appends a JSON string of n bytes of text: unit repeated, then 'x's. */
static void add_long(struct sbuf *sb, const char *unit, size_t n)
{
	size_t u = strlen(unit);
	sbuf_addc(sb, '"');
	for (size_t i = 0; i + u <= n; i += u)
		sbuf_add(sb, unit, u);
	for (size_t i = n / u * u; i < n; i++)
		sbuf_addc(sb, 'x');
	sbuf_addc(sb, '"');
}

/* Strings beyond 64 KiB, in every place a trace holds one, are cut to 64
 * KiB at a character's start and end in "…"; each is counted, the first
 * with its field and the byte it ends at; the events around are intact.
 * The strings are longer than the 1 MiB kept of them while streaming. */
static void test_long_strings(void **state)
{
	struct fx *f = *state;
	size_t big = (size_t)3 << 20;
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	sbuf_adds(&sb, "{\"deviceProperties\": ");
	add_long(&sb, "p", big);
	size_t first_end = sb.len;
	sbuf_adds(&sb, ", \"traceEvents\": [\n{\"ph\": \"M\", \"name\": \"thread_name\", "
		       "\"pid\": 1, \"tid\": 1, \"args\": {\"name\": ");
	add_long(&sb, "t", big);
	sbuf_adds(&sb, "}},\n{\"ph\": \"X\", \"name\": \"before\", \"pid\": 1, \"tid\": 1, "
		       "\"ts\": 1, \"dur\": 2},\n{\"ph\": \"X\", \"cat\": ");
	add_long(&sb, "c", big);
	sbuf_adds(&sb, ", \"name\": ");
	/* "a" then two-byte characters: byte 65536 is the second of one */
	sbuf_adds(&sb, "\"a");
	for (size_t i = 0; i < big / 2; i++)
		sbuf_adds(&sb, "\xc3\xa9");
	sbuf_adds(&sb, "\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 3, \"args\": "
		       "{\"Long\": ");
	add_long(&sb, "ab\\\"cd\\u00e9", big);
	sbuf_adds(&sb, ", ");
	add_long(&sb, "k", big);
	sbuf_adds(&sb, ": 1, \"short\": \"s\"}},\n{\"ph\": \"X\", \"name\": \"after\", "
		       "\"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 4},\n{\"ph\": \"X\", "
		       "\"name\": \"negative\", \"pid\": 1, \"tid\": 1, \"ts\": 11, \"dur\": -1}");
	size_t bad_dur_end = sb.len;
	sbuf_adds(&sb, "\n]}\n");
	const char *path = write_file(f, "long.json", sb.buf, sb.len);
	sbuf_release(&sb);
	char *err = NULL;
	int rc = import_paths(f, &path, 1, &err);
	if (rc)
		print_error("%s\n", err);
	free(err);
	assert_int_equal(rc, 0);

	assert_int_equal(diag_count(f, "LONG_STRING"), 6);
	char *want = xasprintf("top-level \"deviceProperties\" ending near byte %zu", first_end);
	assert_text(f, want, "SELECT example FROM diagnostics WHERE code = 'LONG_STRING'");
	free(want);
	assert_int_equal(diag_count(f, "BAD_UTF8"), 0);
	/* the name: "a" and 32767 "é" (65535 bytes), then "…" */
	int64_t id = q_int(f, "SELECT id FROM phases_v WHERE name LIKE 'a%%'");
	assert_int_equal(q_int(f, "SELECT length(CAST(name AS BLOB)) FROM phases_v WHERE id = %lld",
			       (long long)id),
			 65535 + 3);
	assert_text(f, "\xc3\xa9\xe2\x80\xa6",
		    "SELECT substr(name, -2) FROM phases_v WHERE name LIKE 'a%'");
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE id = %lld", (long long)id),
			 3000);
	/* the category, an args value, an args key, the thread's name */
	assert_int_equal(q_int(f, "SELECT count(*) FROM strings WHERE text = "
				  "printf('%%.65536c', 'c') || char(8230)"),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM strings WHERE text = "
				  "printf('%%.65536c', 't') || char(8230)"),
			 1);
	assert_int_equal(
	    q_int(f, "SELECT json_valid(attrs) FROM phases_v WHERE id = %lld", (long long)id), 1);
	assert_text(f, "\xe2\x80\xa6",
		    "SELECT substr(json_extract(attrs, '$.Long'), -1) FROM phases_v"
		    " WHERE name LIKE 'a%'");
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v p, json_each(p.attrs) j"
				  " WHERE p.name LIKE 'a%%' AND j.key = printf('%%.65536c', 'k')"
				  " || char(8230) AND j.value = 1"),
			 1);
	assert_text(f, "s",
		    "SELECT json_extract(attrs, '$.short') FROM phases_v WHERE name LIKE 'a%'");
	/* top-level metadata */
	assert_int_equal(q_int(f, "SELECT json_extract(attrs, '$.deviceProperties') = "
				  "printf('%%.65536c', 'p') || char(8230) FROM sources"),
			 1);
	/* the events around */
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'before'"), 2000);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'after'"), 4000);
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 4);
	/* offsets after the cuts are the input's */
	want = xasprintf("event ending near byte %zu", bad_dur_end);
	assert_text(f, want, "SELECT example FROM diagnostics WHERE code = 'BAD_DUR'");
	free(want);
}

/* A syntax error after a long string is reported at the input's byte. */
static void test_long_string_then_error(void **state)
{
	struct fx *f = *state;
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	sbuf_adds(&sb, "[{\"ph\": \"X\", \"name\": ");
	add_long(&sb, "n", (size_t)3 << 20);
	sbuf_adds(&sb, ", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},\n{\"ph\": \"X\", "
		       "\"ts\": 2, \"dur\": 1, \"name\": tru");
	size_t at = sb.len;
	sbuf_adds(&sb, "}]\n");
	const char *path = write_file(f, "bad.json", sb.buf, sb.len);
	sbuf_release(&sb);
	char *err = NULL;
	assert_int_equal(import_paths(f, &path, 1, &err), -1);
	char *want = xasprintf("malformed JSON at byte %zu", at);
	if (!err || !strstr(err, want))
		print_error("want '%s' in '%s'\n", want, err ? err : "(null)");
	assert_non_null(err);
	assert_non_null(strstr(err, want));
	free(want);
	free(err);
}

/* ---- one event of any content, in bounded memory ----
 *
 * Each input holds one hostile event of 24 MiB among ordinary ones, written
 * in pieces so that the test's own memory stays small; the import runs in a
 * child process, whose peak resident set is compared with that of a child
 * importing a one-event trace.  Under AddressSanitizer, whose allocator
 * keeps freed memory, only the results are checked. */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#define HOSTILE_BYTES	  ((size_t)24 << 20)
#define HOSTILE_EXTRA_KIB (16 << 10) /* the old importer took 32 MiB and more */

/* Writes unit repeated, then its first bytes, n bytes in all. */
static void put_run(FILE *fp, const char *unit, size_t n)
{
	char piece[4096];
	size_t u = strlen(unit), k = 0;
	while (k + u <= sizeof(piece)) {
		memcpy(piece + k, unit, u);
		k += u;
	}
	for (; n >= k; n -= k)
		assert_int_equal(fwrite(piece, 1, k, fp), k);
	assert_int_equal(fwrite(piece, 1, n, fp), n);
}

/* Imports path into a fresh f->db in a child process: its exit status
 * (0: imported), and its peak resident set in KiB in *kib. */
static int child_import(struct fx *f, const char *path, long *kib)
{
	close_conn(f);
	unlink_db(f->db);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct import_opts o;
		memset(&o, 0, sizeof(o));
		char *err = NULL;
		_exit(import_files(f->db, (char *const *)&path, 1, NULL, &o, &err) ? 2 : 0);
	}
	int status;
	struct rusage ru;
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status));
	*kib = ru.ru_maxrss;
	return WEXITSTATUS(status);
}

/* Imports path, which must import, and checks that its peak resident set
 * exceeds that of a one-event trace by less than HOSTILE_EXTRA_KIB. */
static void import_bounded(struct fx *f, const char *path)
{
	static const char tiny[] = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
				   "\"dur\":1}]";
	long base, peak;
	assert_int_equal(child_import(f, write_file(f, "tiny.json", tiny, strlen(tiny)), &base), 0);
	assert_int_equal(child_import(f, path, &peak), 0);
#ifndef UNDER_ASAN
	if (peak - base >= HOSTILE_EXTRA_KIB)
		print_error("peak resident set %ld KiB, %ld KiB for one event\n", peak, base);
	assert_true(peak - base < HOSTILE_EXTRA_KIB);
#endif
}

#define EV_AROUND "{\"ph\":\"X\",\"name\":\"around\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}"

/* A launch, then a kernel whose args take `what` (in pieces) and end with
 * its correlation, ending before byte *end, then two more events. */
static const char *write_kernel(struct fx *f, const char *name, const char *what, long *end)
{
	const char *path;
	FILE *fp = open_input(f, name, &path);
	fputs("{\"traceEvents\": [" EV_AROUND ",\n"
	      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
	      "\"tid\":1,\"ts\":100,\"dur\":10,\"args\":{\"correlation\":5}},\n"
	      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":200,"
	      "\"dur\":50,\"args\":{\"grid\":[1,2,3]",
	      fp);
	if (!strcmp(what, "strings")) {
		/* strings of 1 MiB less 16 bytes: the most not cut while streaming */
		for (size_t k = 0, n = ((size_t)1 << 20) - 16; k * n < HOSTILE_BYTES; k++) {
			fprintf(fp, ", \"s%zu\": \"", k);
			put_run(fp, "abcdefghijklmnopqrstuvwxyz012345", n);
			fputc('"', fp);
		}
	} else {
		for (size_t k = 0; k * 32 < HOSTILE_BYTES; k++)
			fprintf(fp, ", \"m%07zu\": \"abcdefghijklmnop\"", k);
	}
	fputs(", \"correlation\": 5}}", fp);
	*end = ftell(fp);
	fputs(",\n" EV_AROUND ",\n" EV_AROUND "]}\n", fp);
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* An event whose args are 24 MiB: the first 1 MiB of them is kept, less
 * the member that crosses it, and counted; the members after it are still
 * read (the kernel finds its launch by its correlation); memory stays
 * small.  With strings each just under what streaming keeps of one, and
 * with many small members. */
static void test_args_capped(void **state)
{
	struct fx *f = *state;
	static const char *const whats[] = {"strings", "members"};
	for (size_t w = 0; w < 2; w++) {
		char *name = xasprintf("%s.json", whats[w]);
		long end;
		import_bounded(f, write_kernel(f, name, whats[w], &end));
		free(name);
		assert_int_equal(diag_count(f, "LONG_ARGS"), 1);
		assert_int_equal(
		    q_int(f, "SELECT json_valid(attrs) FROM phases_v WHERE name = 'k'"), 1);
		assert_true(q_int(f, "SELECT length(attrs) FROM phases_v WHERE name = 'k'") <=
			    (1 << 20));
		assert_true(q_int(f, "SELECT length(attrs) FROM phases_v WHERE name = 'k'") >
			    (1 << 20) - (w ? 64 : 70000));
		assert_text(f, "[1,2,3]",
			    "SELECT json_extract(attrs, '$.grid') FROM phases_v WHERE name = 'k'");
		assert_int_equal(q_int(f, "SELECT parent_id FROM phases_v WHERE name = 'k'"),
				 phase_id(f, "cudaLaunchKernel"));
		assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name = 'around'"),
				 3);
		char *want = xasprintf("event ending near byte %ld", end);
		assert_text(f, want, "SELECT example FROM diagnostics WHERE code = 'LONG_ARGS'");
		free(want);
	}
}

/* 24 MiB of white space inside one event: the event and those around it
 * are read, in small memory. */
static void test_long_white_space(void **state)
{
	struct fx *f = *state;
	const char *path;
	FILE *fp = open_input(f, "space.json", &path);
	fputs("[" EV_AROUND ",{\"ph\":\"X\",\"name\":\"spaced\",\"pid\":1,", fp);
	put_run(fp, " \n\t\r", HOSTILE_BYTES);
	fputs("\"tid\":1,\"ts\":5,\"dur\":3}," EV_AROUND "]", fp);
	assert_int_equal(fclose(fp), 0);
	import_bounded(f, path);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'spaced'"), 3000);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name = 'around'"), 2);
}

/* 24 MiB of control characters unescaped in one string (read as escaped,
 * six bytes each, while the string is short enough to matter), and as
 * many of them in strings of a few bytes each: memory stays small. */
static void test_control_characters_bounded(void **state)
{
	struct fx *f = *state;
	for (int shape = 0; shape < 2; shape++) {
		const char *path;
		FILE *fp = open_input(f, "controls.json", &path);
		fputs("[" EV_AROUND ",{\"ph\":\"X\",\"name\":\"ctl\",\"pid\":1,\"tid\":1,\"ts\":5,"
		      "\"dur\":3,\"args\":{\"s\":\"",
		      fp);
		put_run(fp, shape ? "\x01\",\"k\":\"" : "\x01\n\x1f\ta", HOSTILE_BYTES);
		fputs("\"}}," EV_AROUND "]", fp);
		assert_int_equal(fclose(fp), 0);
		import_bounded(f, path);
		assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'ctl'"), 3000);
		assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name = 'around'"),
				 2);
		assert_true(diag_count(f, "CONTROL_CHAR") >= (int64_t)(HOSTILE_BYTES / 8));
	}
}

/* A number longer than 1024 bytes is a malformed file: the error names the
 * byte it starts at, wherever it is and however long; 1024 bytes import. */
static void test_long_numbers(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *head, *tail;
		size_t len;
	} cases[] = {
	    {"[" EV_AROUND ",{\"ph\":\"X\",\"name\":\"n\",\"ts\":", ",\"dur\":1}]", 1025},
	    {"[" EV_AROUND ",{\"ph\":\"X\",\"name\":\"n\",\"ts\":", ",\"dur\":1}]", HOSTILE_BYTES},
	    {"[" EV_AROUND ",{\"ph\":\"X\",\"name\":\"\\n\",\"args\":{\"a\":[", "]}}]", 4 << 20},
	    {"{\"deviceProperties\":[", "],\"traceEvents\":[" EV_AROUND "]}", 4 << 20},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const char *path;
		char *name = xasprintf("num%zu.json", k);
		FILE *fp = open_input(f, name, &path);
		free(name);
		fputs(cases[k].head, fp);
		put_run(fp, "1234567890", cases[k].len);
		fputs(cases[k].tail, fp);
		assert_int_equal(fclose(fp), 0);
		char *err = NULL;
		assert_int_equal(import_paths(f, &path, 1, &err), -1);
		char *want = xasprintf("%s: malformed JSON at byte %zu: a number longer than 1024 "
				       "bytes",
				       path, strlen(cases[k].head));
		if (!err || strcmp(err, want))
			print_error("want '%s'\ngot  '%s'\n", want, err ? err : "(null)");
		assert_non_null(err);
		assert_string_equal(err, want);
		free(want);
		free(err);
	}
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	sbuf_adds(&sb, "[" EV_AROUND ",{\"ph\":\"X\",\"name\":\"n\",\"pid\":1,\"tid\":1,\"ts\":1,"
		       "\"dur\":1,\"args\":{\"big\":");
	for (int i = 0; i < 1024; i++)
		sbuf_addc(&sb, (char)('1' + i % 9));
	sbuf_adds(&sb, "}}]");
	import_ok(f, "num1024.json", sb.buf);
	sbuf_release(&sb);
	assert_int_equal(diag_count(f, "BIG_INTEGER"), 1);
	assert_int_equal(
	    q_int(f, "SELECT length(json_extract(attrs, '$.big')) FROM phases_v WHERE name = 'n'"),
	    1024);
}

/* Counter metrics take the host the trace names (host_name), even when the
 * counter came before it. */
static void test_counter_host_from_trace(void **state)
{
	struct fx *f = *state;
	import_ok(f, "host.json",
		  "{\"traceEvents\":[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1,"
		  "\"args\":{\"v\":3}},{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
		  "\"dur\":1}],\"host_name\":\"node7\"}");
	assert_text(f, "node7", "SELECT host FROM metrics");
	assert_text(f, "node7", "SELECT host FROM sources");
}

/* s, t, f: a flow with a step is a chain of two edges, s -> t -> f. */
static void test_flow_step_chain(void **state)
{
	struct fx *f = *state;
	import_ok(
	    f, "chain.json",
	    "[{\"ph\":\"X\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
	    "{\"ph\":\"s\",\"cat\":\"c\",\"id\":1,\"name\":\"fl\",\"pid\":1,\"tid\":1,\"ts\":5},"
	    "{\"ph\":\"X\",\"name\":\"B\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":10},"
	    "{\"ph\":\"t\",\"cat\":\"c\",\"id\":1,\"name\":\"fl\",\"pid\":1,\"tid\":2,\"ts\":25},"
	    "{\"ph\":\"X\",\"name\":\"C\",\"pid\":1,\"tid\":3,\"ts\":40,\"dur\":10},"
	    "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"c\",\"id\":1,\"name\":\"fl\",\"pid\":1,"
	    "\"tid\":3,\"ts\":45}]");
	assert_int_equal(q_int(f, "SELECT count(*) FROM edges"), 2);
	assert_int_equal(
	    q_int(f, "SELECT count(*) FROM edges e JOIN phases_v a ON a.id = e.src"
		     " JOIN phases_v b ON b.id = e.dst WHERE a.name = 'A' AND b.name = 'B'"),
	    1);
	assert_int_equal(
	    q_int(f, "SELECT count(*) FROM edges e JOIN phases_v a ON a.id = e.src"
		     " JOIN phases_v b ON b.id = e.dst WHERE a.name = 'B' AND b.name = 'C'"),
	    1);
	assert_int_equal(diag_count(f, "LONE_FLOW"), 0);
}

/* A failing file among good ones rolls the whole import back. */
static void test_failure_rolls_back_existing_db(void **state)
{
	struct fx *f = *state;
	import_ok(f, "first.json",
		  "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]");
	int64_t phases = q_int(f, "SELECT count(*) FROM phases");
	static const char good[] = "[{\"ph\":\"X\",\"name\":\"g\",\"pid\":1,\"tid\":1,\"ts\":1,"
				   "\"dur\":1}]";
	static const char bad[] = "[{\"ph\":\"X\",\"name\":\"h\",,\"ts\":1}]";
	const char *paths[2] = {write_file(f, "good.json", good, strlen(good)),
				write_file(f, "bad.json", bad, strlen(bad))};
	char *err = NULL;
	int rc = import_paths(f, paths, 2, &err);
	assert_int_equal(rc, -1);
	assert_non_null(err);
	assert_non_null(strstr(err, paths[1]));
	free(err);
	assert_int_equal(access(f->db, F_OK), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM sources"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases"), phases);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name = 'g'"), 0);
}

/* A trace too large for its arena where no sort file can be made: the
 * import fails, the error names the file and the temporary directory, and
 * no trace.db is left. */
static void test_sort_file_failure_names_file(void **state)
{
	struct fx *f = *state;
	struct sbuf json = SBUF_INIT;
	sbuf_init(&json);
	sbuf_add(&json, "[", 1);
	for (int i = 0; i < 2000; i++)
		sbuf_addf(&json,
			  "%s{\"ph\":\"X\",\"name\":\"op%d\",\"pid\":1,\"tid\":1,\"ts\":%d,"
			  "\"dur\":1}",
			  i ? "," : "", i % 7, 2000 - i);
	sbuf_add(&json, "]", 1);
	const char *path = write_file(f, "big.json", json.buf, json.len);
	sbuf_release(&json);
	struct import_opts o;
	memset(&o, 0, sizeof(o));
	o.arena_bytes = 8192; /* a run for every few dozen spans */
	close_conn(f);
	char *saved = getenv("TMPDIR") ? xstrdup(getenv("TMPDIR")) : NULL;
	setenv("TMPDIR", "/nonexistent-grademl", 1);
	char *err = NULL;
	char *const paths[] = {(char *)path};
	int rc = import_files(f->db, paths, 1, NULL, &o, &err);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	assert_int_equal(rc, -1);
	assert_non_null(err);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, "/nonexistent-grademl"));
	assert_null(strchr(err, '\n'));
	free(err);
	assert_int_equal(access(f->db, F_OK), -1);

	/* with a usable TMPDIR the same file imports, sorted through runs */
	rc = import_files(f->db, paths, 1, NULL, &o, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE name LIKE 'op%%'"), 2000);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_bare_array),
	    T(test_object_base_after_events),
	    T(test_object_base_before_events),
	    T(test_object_base_order_identical),
	    T(test_ts_dur_forms),
	    T(test_bad_ts_dropped),
	    T(test_string_pid_tid),
	    T(test_id_names_its_kind),
	    T(test_begin_end),
	    T(test_begin_end_device_category),
	    T(test_track_nodes_exist),
	    T(test_instants),
	    T(test_counters),
	    T(test_metadata_names),
	    T(test_metadata_text_budget),
	    T(test_flow_launch),
	    T(test_launch_without_flow),
	    T(test_flow_host),
	    T(test_async),
	    T(test_tensorflow_style),
	    T(test_display_time_unit_ns),
	    T(test_big_integer_arg),
	    T(test_bad_utf8),
	    T(test_distributed_rank),
	    T(test_record_window_end_not_in_rank_window),
	    T(test_profiler_bookkeeping),
	    T(test_profiler_bookkeeping_no_rank),
	    T(test_no_rank_without_distributed_info),
	    T(test_rank_option),
	    T(test_rank_option_refused),
	    T(test_rank_of_name),
	    T(test_rank_from_file_name),
	    T(test_rank_repeated),
	    T(test_completeness),
	    T(test_utf8_bom),
	    T(test_two_files_one_import),
	    T(test_truncated_json),
	    T(test_syntax_error),
	    T(test_top_level_number),
	    T(test_trailing_garbage),
	    T(test_failure_rolls_back_existing_db),
	    T(test_sort_file_failure_names_file),
	    T(test_object_without_events),
	    T(test_trace_events_not_array),
	    T(test_trailing_commas),
	    T(test_control_characters),
	    T(test_unclosed_array),
	    T(test_cut_in_last_event),
	    T(test_lenient_refuses_non_traces),
	    T(test_lenient_across_reads),
	    T(test_gpu_annotations_beside_stream),
	    T(test_accelerator_categories),
	    T(test_xla_device_plane),
	    T(test_xla_host_plane),
	    T(test_tpu_plane),
	    T(test_tf1_timeline),
	    T(test_device_names_too_late),
	    T(test_device_category_without_work),
	    T(test_end_before_begin),
	    T(test_bind_id_keeps_category),
	    T(test_empty_rank_adds_nothing),
	    T(test_metadata_capped),
	    T(test_metadata_value_capped),
	    T(test_long_strings),
	    T(test_long_string_then_error),
	    T(test_args_capped),
	    T(test_long_white_space),
	    T(test_control_characters_bounded),
	    T(test_long_numbers),
	    T(test_counter_host_from_trace),
	    T(test_flow_step_chain),
	};
	return cmocka_run_group_tests_name("chrome", tests, NULL, NULL);
}
