/*
 * Unit tests for query/: the lexer (tokens, units), the parser and the
 * compiler (valid queries, errors with their column and hint), globs, the
 * parameter binding (injection attempts stay values), the read-only sql
 * escape (every kind of write denied), and the time-weighted statistics on
 * a tiny trace.db computed by hand and checked against model/view/series.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/view/model.h"
#include "model/store/schema.sql.h"
#include "model/store/store.h"
#include "query/compile.h"
#include "query/exec.h"
#include "query/funcs.h"
#include "query/lexer.h"
#include "query/parse.h"
#include "query/print.h"
#include "tests/testdir.h"
#include "tui/format.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

/* ---- the tiny trace ----
 *
 * wf [1000, 11000) > step1 [1000, 9000) on track 1 (host h1) > mm [2000,
 * 5000), add [6000, 7000).  cpu.util (capacity 100) on h1: 10 from 0, 50
 * from 2500, 100 from 4000, 20 from 5500, 0 at 9000 (the last sample).
 * Events: "boom" at 2100 on track 1, "late" at 6500 on no track. */
static const char tiny_sql[] =
    "INSERT INTO phase_kinds(id, name) VALUES (1,'workflow'),(2,'step'),(8,'operator');"
    "INSERT INTO strings(id, text) VALUES (1,'wf'),(2,'step1'),"
    " (3,'x''; DROP TABLE phases; --'),(4,'aten::mm'),(5,'aten::add'),(6,'boom'),(7,'late');"
    "INSERT INTO tracks(id, source_id, kind, host) VALUES (1, 1, 'thread', 'h1');"
    "INSERT INTO phases(id, parent_id, kind, name_id, track_id, start_ns, dur_ns, self_ns,"
    " depth) VALUES (1, NULL, 1, 1, NULL, 1000, 10000, 0, 0),"
    " (2, 1, 2, 2, 1, 1000, 8000, 0, 1), (3, 2, 8, 4, 1, 2000, 3000, 3000, 2),"
    " (4, 2, 8, 5, 1, 6000, 1000, 1000, 2);"
    "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity)"
    " VALUES (1, 'h1', 'cpu', 'cpu.util', '%', 'mean', 100),"
    " (2, 'h1', 'gpu0', 'power', 'W', 'instant', NULL);"
    "INSERT INTO samples(metric_id, t_ns, value) VALUES (1, 0, 10), (1, 2500, 50),"
    " (1, 4000, 100), (1, 5500, 20), (1, 9000, 0), (2, 0, 5);"
    "INSERT INTO events(id, track_id, t_ns, name_id) VALUES (1, 1, 2100, 6), (2, NULL, 6500, 7);";

static sqlite3 *tiny_db(void)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, store_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, tiny_sql, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

/* Runs q; asserts success; returns the result (release it). */
static struct query_result run_ok(sqlite3 *db, const char *q)
{
	struct query_result r;
	char *err = NULL;
	int rc = query_run(db, q, 0, NULL, &r, NULL, &err);
	if (rc < 0)
		fail_msg("query '%s' failed: %s", q, err);
	return r;
}

/* Runs q, which must fail; returns the error (release it) and frees the text. */
static struct query_error run_err(sqlite3 *db, const char *q)
{
	struct query_result r;
	struct query_error e = {0};
	char *err = NULL;
	if (query_run(db, q, 0, NULL, &r, &e, &err) == 0) {
		query_result_release(&r);
		fail_msg("query '%s' should have failed", q);
	}
	assert_non_null(err);
	free(err);
	return e;
}

/* Compiles q, which must fail at column col (1-based) with msg and hint
 * containing the given texts (hint NULL: not checked). */
static void compile_fails(const char *q, int col, const char *msg, const char *hint)
{
	struct query_plan plan;
	struct query_error e = {0};
	if (query_compile(q, &plan, &e) == 0) {
		query_plan_release(&plan);
		fail_msg("'%s' compiled", q);
	}
	if (e.pos + 1 != col || !strstr(e.msg, msg) || (hint && (!e.hint || !strstr(e.hint, hint))))
		fail_msg("'%s': column %d '%s' hint '%s'; wanted column %d '%s' hint '%s'", q,
			 e.pos + 1, e.msg, e.hint ? e.hint : "(none)", col, msg, hint ? hint : "-");
	query_error_release(&e);
}

static void compiles(const char *q)
{
	struct query_plan plan;
	struct query_error e = {0};
	if (query_compile(q, &plan, &e) < 0)
		fail_msg("'%s' failed: column %d: %s", q, e.pos + 1, e.msg);
	query_plan_release(&plan);
}

/* ---- lexer ---- */

static void test_lex_tokens(void **state)
{
	(void)state;
	const char *q =
	    "phases name ~ \"a\\\"b\" | top 10 sum(dur) /wf/**/x != <= >= !~ cpu.util@h1 -5ms"
	    " + - * dur*2 2*x";
	enum query_tok want[] = {QT_WORD,   QT_WORD,  QT_MATCH, QT_STRING, QT_PIPE,   QT_WORD,
				 QT_NUMBER, QT_WORD,  QT_LP,	QT_WORD,   QT_RP,     QT_PATH,
				 QT_NE,	    QT_LE,    QT_GE,	QT_NMATCH, QT_WORD,   QT_NUMBER,
				 QT_PLUS,   QT_MINUS, QT_STAR,	QT_WORD,   QT_NUMBER, QT_STAR,
				 QT_WORD,   QT_EOF};
	int pos = 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct query_token t = query_lex_next(q, &pos);
		if (t.type != want[i])
			fail_msg("token %zu at %d: type %d, wanted %d", i, t.pos, t.type, want[i]);
	}
	pos = 0;
	struct query_token t = query_lex_next("  \"unterminated", &pos);
	assert_int_equal(t.type, QT_ERROR);
	assert_int_equal(t.pos, 2);
	char *s = query_lex_string("\"a\\\"b\\\\c\\d\"", 11);
	assert_string_equal(s, "a\"b\\c\\d"); /* unknown escapes stay for regexes */
	free(s);
}

static void num(const char *s, enum query_unit_kind kind, int64_t i, double r)
{
	struct query_number n;
	const char *why = NULL;
	if (query_lex_number(s, (int)strlen(s), &n, &why) < 0)
		fail_msg("'%s': %s", s, why);
	assert_int_equal(n.kind, kind);
	if (kind == QU_TIME || kind == QU_BYTES)
		assert_true(n.i == i);
	else
		assert_true(fabs(n.r - r) < 1e-9);
}

static void test_lex_units(void **state)
{
	(void)state;
	num("1.5ms", QU_TIME, 1500000, 0);
	num("250ns", QU_TIME, 250, 0);
	num("3us", QU_TIME, 3000, 0);
	num("2s", QU_TIME, 2000000000, 0);
	num("1.5min", QU_TIME, 90000000000, 0);
	num("2h", QU_TIME, INT64_C(7200000000000), 0);
	num("0.000001s", QU_TIME, 1000, 0);
	num("-5ms", QU_TIME, -5000000, 0);
	num("1e3us", QU_TIME, 1000000, 0);
	num("2GB", QU_BYTES, 2000000000, 0);
	num("1KB", QU_BYTES, 1000, 0);
	num("3MB", QU_BYTES, 3000000, 0);
	num("1KiB", QU_BYTES, 1024, 0);
	num("1.5GiB", QU_BYTES, 1610612736, 0);
	num("512B", QU_BYTES, 512, 0);
	num("80%", QU_PERCENT, 0, 80);
	num("12.5", QU_NONE, 0, 12.5);
	struct query_number n;
	const char *why;
	assert_int_equal(query_lex_number("5mss", 4, &n, &why), -1);
	assert_int_equal(n.unit_pos, 1);
	assert_int_equal(query_lex_number("99999999999h", 12, &n, &why), -1);
}

/* ---- parser and compiler ---- */

static void test_parse_valid(void **state)
{
	(void)state;
	static const char *const ok[] = {
	    "phases",
	    "phases name ~ \"^aten::\" and dur > 1ms | by name | top 10 sum(dur)",
	    "phases kind = operator dur >= 2us or not (self < 1us)",
	    "phases /wf/*/aten::mm",
	    "phases path = \"/wf/step1/**\" | select id, path",
	    "phases | by kind, name | stats count, mean(dur), p95(dur), p99(self) | sort count "
	    "desc",
	    "phases | by name | stats sum(dur) | where sum(dur) > 1ms | top 3 sum(dur)",
	    "phases | with cpu.util | sort cpu.util.mean desc | limit 5",
	    "phases kind = operator | saturated cpu.util >= 90% | top 5 cpu.util.sat",
	    "phases | during /wf/step1 | between 1s and 2s | count",
	    "phases | during (phases kind = step | top 1 dur) | count",
	    "events name ~ \"oom\" | during phases kind = step",
	    "events | within 5ms of /wf/step1 | select t, name, phase, phase.path",
	    "events | with cpu.util@h1",
	    "metrics cpu.util | during phases kind = step",
	    "metrics \"cpu.util\" host = h1 | select name, mean, max, sat",
	    "samples cpu.util value >= 50 | between 0s and 10s | stats min(value), max(value)",
	    "samples | by metric | stats count",
	    "sql SELECT 1",
	    "PHASES DUR > 1MS | TOP 2",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		compiles(ok[i]);
}

static void test_parse_errors(void **state)
{
	(void)state;
	compile_fails("phases durr > 1ms", 8, "unknown field 'durr'", "did you mean 'dur'?");
	compile_fails("phase dur > 1ms", 1, "expected phases", "did you mean 'phases'?");
	compile_fails("phases dur > 5mss", 15, "unknown unit 'mss'", "did you mean 'ms'?");
	compile_fails("phases name ~ \"([a-z\"", 21, "invalid regular expression", NULL);
	compile_fails("phases kind = opertor", 15, "unknown phase kind 'opertor'",
		      "did you mean 'operator'?");
	compile_fails("phases | tpo 5", 10, "unknown stage", "did you mean 'top'?");
	compile_fails("phases dur > \"x\"", 14, "'dur' is a duration, not text", NULL);
	compile_fails("phases dur > 5GB", 14, "'dur' is a duration", NULL);
	compile_fails("phases name = \"x", 15, "unterminated string", NULL);
	compile_fails("phases (dur > 1ms", 18, "expected ')'", "not closed");
	compile_fails("phases dur > 1ms)", 17, "unbalanced ')'", NULL);
	compile_fails("phases dur", 11, "expected a comparison", NULL);
	compile_fails("phases | top 3 | by name", 18, "'by' cannot come after 'top'", NULL);
	compile_fails("phases | by name | stats summ(dur)", 26, "unknown function 'summ'",
		      "did you mean 'sum'?");
	compile_fails("phases sum(dur) > 1s", 8, "'sum' is an aggregate", NULL);
	compile_fails("phases | by name", 1, "'by' needs stats", NULL);
	compile_fails("phases | top x", 14, "expected how many rows", NULL);
	compile_fails("metrics | within 5ms of /x", 11, "within needs phases or events", NULL);
	compile_fails("phases | during (events)", 18, "a window is a selection of phases", NULL);
	compile_fails("phases | between 1s", 20, "expected 'and'", NULL);
	compile_fails("phases & dur", 8, "expected", NULL);
	compile_fails("", 1, "expected phases", NULL);
	/* deep nesting is refused, not a stack overflow */
	char deep[600];
	memset(deep, '(', sizeof(deep));
	memcpy(deep, "phases ", 7);
	deep[sizeof(deep) - 1] = '\0';
	struct query_plan plan;
	struct query_error e = {0};
	assert_int_equal(query_compile(deep, &plan, &e), -1);
	assert_non_null(strstr(e.msg, "nested too deeply"));
	query_error_release(&e);
}

static void test_error_format(void **state)
{
	(void)state;
	struct query_error e = {0};
	query_error_set(&e, 7, 4, xstrdup("unknown field 'durr'"), xstrdup("did you mean 'dur'?"));
	char *s = query_error_format("phases durr > 1ms", &e);
	assert_string_equal(s, "error at column 8: unknown field 'durr'\n"
			       "  phases durr > 1ms\n"
			       "         ^^^^\n"
			       "hint: did you mean 'dur'?");
	free(s);
	query_error_release(&e);
	/* columns count characters: 'é' is two bytes, one column */
	query_error_set(&e, 9, 1, xstrdup("x"), NULL);
	s = query_error_format("phases é ?", &e);
	assert_non_null(strstr(s, "column 9:"));
	assert_non_null(strstr(s, "\n          ^"));
	free(s);
	query_error_release(&e);
}

/* The SQL holds no literal: every value is a parameter. */
static void test_compile_binds(void **state)
{
	(void)state;
	struct query_plan plan;
	struct query_error e = {0};
	const char *q = "phases name = \"x'; DROP TABLE phases; --\" or name ~ \"a'b\" or dur > 7ms"
			" or host = evilhost | with cpu.util | limit 3";
	assert_int_equal(query_compile(q, &plan, &e), 0);
	assert_null(strstr(plan.sql, "DROP"));
	assert_null(strstr(plan.sql, "evilhost"));
	assert_null(strstr(plan.sql, "7000000"));
	assert_null(strstr(plan.sql, "a'b"));
	assert_null(strstr(plan.sql, "cpu.util"));
	int found = 0;
	for (size_t i = 0; i < plan.nparams; i++)
		if (plan.params[i].type == QP_TEXT &&
		    !strcmp(plan.params[i].s, "x'; DROP TABLE phases; --"))
			found = 1;
	assert_true(found);
	/* the glob is bound as a pattern too */
	query_plan_release(&plan);
	assert_int_equal(query_compile("phases /a'b/**", &plan, &e), 0);
	assert_null(strstr(plan.sql, "a'b"));
	query_plan_release(&plan);
}

static void test_injection(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	/* a quote and a statement in a value match only themselves */
	struct query_result r = run_ok(db, "phases name = \"x'; DROP TABLE phases; --\"");
	assert_int_equal(r.nrows, 0);
	query_result_release(&r);
	r = run_ok(db, "phases name = 'x\\'; DROP TABLE phases; --' or name ~ \"'; ATTACH"
		       " DATABASE '/tmp/x.db' AS x; --\"");
	assert_int_equal(r.nrows, 0);
	query_result_release(&r);
	r = run_ok(db, "phases host = \"h1'; DELETE FROM phases; --\" | count");
	assert_int_equal(r.nrows, 1);
	assert_true(query_cell(&r, 0, 0)->i == 0);
	query_result_release(&r);
	r = run_ok(db, "phases | count");
	assert_true(query_cell(&r, 0, 0)->i == 4); /* all still there */
	query_result_release(&r);
	/* writes through the escape hatch are denied, on a writable connection */
	static const char *const writes[] = {
	    "sql INSERT INTO phases(id, kind, name_id, start_ns, dur_ns, self_ns, depth)"
	    " VALUES (9, 1, 1, 0, 0, 0, 0)",
	    "sql UPDATE phases SET dur_ns = 0",
	    "sql DELETE FROM phases",
	    "sql DROP TABLE phases",
	    "sql CREATE TABLE t(x)",
	    "sql CREATE TEMP TABLE t(x)",
	    "sql CREATE VIEW v AS SELECT 1",
	    "sql CREATE INDEX i ON phases(dur_ns)",
	    "sql ALTER TABLE phases ADD COLUMN x",
	    "sql ATTACH DATABASE ':memory:' AS x",
	    "sql DETACH DATABASE main",
	    "sql PRAGMA writable_schema = 1",
	    "sql PRAGMA user_version = 7",
	    "sql PRAGMA journal_mode = DELETE",
	    "sql PRAGMA query_only = 0",
	    "sql VACUUM",
	    "sql REINDEX",
	    "sql ANALYZE",
	    "sql BEGIN",
	    "sql SAVEPOINT a",
	    "sql SELECT load_extension('x')",
	    "sql SELECT 1; DELETE FROM phases",
	    "sql WITH x AS (SELECT 1) DELETE FROM phases",
	    "sql REPLACE INTO strings(id, text) VALUES (1, 'x')",
	    "sql UPDATE sqlite_master SET sql = 'x'",
	    "sql DELETE FROM sqlite_master",
	    "sql INSERT INTO sqlite_master VALUES ('table', 'x', 'x', 0, 'CREATE TABLE x(y)')",
	};
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		struct query_error e = run_err(db, writes[i]);
		query_error_release(&e);
	}
	r = run_ok(db, "sql SELECT count(*) AS n FROM phases");
	assert_true(query_cell(&r, 0, 0)->i == 4);
	query_result_release(&r);
	r = run_ok(db, "sql SELECT (SELECT text FROM strings WHERE id = 1) AS t");
	assert_string_equal(query_cell(&r, 0, 0)->s, "wf");
	query_result_release(&r);
	r = run_ok(db, "sql PRAGMA user_version");
	assert_int_equal(r.nrows, 1);
	query_result_release(&r);
	r = run_ok(db, "sql SELECT count(*) FROM json_each('[1,2]') UNION ALL"
		       " SELECT count(*) FROM pragma_table_info('phases')");
	assert_int_equal(r.nrows, 2);
	query_result_release(&r);
	r = run_ok(db, "sql PRAGMA table_info(phases)");
	assert_true(r.nrows > 5);
	query_result_release(&r);
	r = run_ok(db, "sql SELECT * FROM metrics m WHERE 'x' REGEXP 'x'");
	query_result_release(&r);
	sqlite3_close(db);
}

/* gm_str and gm_kind answer as the subqueries they replace, for every kind
 * of key and of stored value, on a miss, a hit and an unknown id; and the
 * result shares one copy of a repeated text. */
static void test_interned_text(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	/* a hostile file: a blob and a text holding a NUL among the strings */
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO strings(id, text) VALUES (8, X'00ff'),"
				      " (9, CAST(X'610062' AS TEXT)), (-3, 'neg');"
				      "INSERT INTO phase_kinds(id, name) VALUES (0, 'zero');",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	static const char *const fns[][2] = {{"gm_str", "SELECT text FROM strings"},
					     {"gm_kind", "SELECT name FROM phase_kinds"}};
	for (int k = 0; k < 2; k++) {
		char *q = xasprintf(
		    "sql WITH v(x) AS (VALUES (1), (4), (4), (99), (NULL), (8), (9), (9), (-3),"
		    " (0), (2), ('4'), (4.0), (X'01'), (1), (99))"
		    " SELECT count(*) AS n, sum(%s(x) IS NOT (%s WHERE id = x)"
		    " OR typeof(%s(x)) != typeof((%s WHERE id = x))"
		    " OR hex(%s(x)) != hex((%s WHERE id = x))) AS bad FROM v",
		    fns[k][0], fns[k][1], fns[k][0], fns[k][1], fns[k][0], fns[k][1]);
		struct query_result r = run_ok(db, q);
		assert_true(query_cell(&r, 0, 0)->i == 16);
		assert_true(query_cell(&r, 0, 1)->i == 0);
		query_result_release(&r);
		free(q);
	}
	struct query_result r = run_ok(db, "sql SELECT typeof(gm_str(8)), hex(gm_str(9)),"
					   " gm_str(4), gm_kind(8)");
	assert_string_equal(query_cell(&r, 0, 0)->s, "blob");
	assert_string_equal(query_cell(&r, 0, 1)->s, "610062");
	assert_string_equal(query_cell(&r, 0, 2)->s, "aten::mm");
	assert_string_equal(query_cell(&r, 0, 3)->s, "operator");
	query_result_release(&r);
	/* mm and add are both operators: one copy of "operator" */
	r = run_ok(db, "phases | select kind, name");
	assert_int_equal(r.nrows, 4);
	assert_string_equal(query_cell(&r, 2, 0)->s, "operator");
	assert_string_equal(query_cell(&r, 2, 1)->s, "aten::mm");
	assert_string_equal(query_cell(&r, 3, 1)->s, "aten::add");
	assert_ptr_equal(query_cell(&r, 2, 0)->s, query_cell(&r, 3, 0)->s);
	query_result_release(&r);
	sqlite3_close(db);
}

/* A path up parent links that loop (step 2 under its own operator 3) is
 * an error naming the phase, where it once stopped quietly on a made-up
 * path; the paths of phases above the loop are still found. */
static void test_path_loop(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	assert_int_equal(
	    sqlite3_exec(db, "UPDATE phases SET parent_id = 3 WHERE id = 2", NULL, NULL, NULL),
	    SQLITE_OK);
	struct query_result r;
	char *err = NULL;
	assert_int_equal(query_run(db, "phases id = 4 | select id, path", 0, NULL, &r, NULL, &err),
			 -1);
	assert_non_null(strstr(err, "phase 4's parents form a loop"));
	free(err);
	r = run_ok(db, "phases id = 1 | select path");
	assert_string_equal(query_cell(&r, 0, 0)->s, "/wf");
	query_result_release(&r);
	sqlite3_close(db);
}

/* ---- limits ---- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs q under lim, which must stop it: within max_ms, with an error
 * containing want. */
static void run_stopped(sqlite3 *db, const char *q, const struct query_limits *lim,
			const char *want, int64_t max_ms)
{
	struct query_result r;
	char *err = NULL;
	int64_t t0 = now_ms();
	if (query_run(db, q, 0, lim, &r, NULL, &err) == 0)
		fail_msg("'%s' ran to its end", q);
	int64_t took = now_ms() - t0;
	if (!strstr(err, want) || took > max_ms)
		fail_msg("'%s': '%s' after %lld ms; wanted '%s' within %lld ms", q, err,
			 (long long)took, want, (long long)max_ms);
	free(err);
}

static const char endless[] =
    "sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

static int stop_after(void *ctx)
{
	int *calls = ctx;
	return ++*calls > 20;
}

/* A recursive CTE that never ends stops at the time limit, or when the
 * caller's stop test says so (C-c); the connection answers the next query. */
static void test_time_limit(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_limits lim = {.timeout_ns = 300 * (int64_t)1000000};
	run_stopped(db, endless, &lim, "query stopped after 300 ms; raise --timeout", 3000);
	int calls = 0;
	struct query_limits stop = {.stop = stop_after, .ctx = &calls};
	run_stopped(db, endless, &stop, "query stopped", 3000);
	assert_true(calls > 20);
	struct query_result r = run_ok(db, "phases | count");
	assert_true(query_cell(&r, 0, 0)->i == 4);
	query_result_release(&r);
	sqlite3_close(db);
}

/* A sort that spills stops at the cap on temporary files, a result that
 * grows at the cap on memory; a cap large enough lets the sort finish, and
 * the caps are lifted after each query. */
static void test_memory_limits(void **state)
{
	(void)state;
	char dir[256], path[300];
	assert_int_equal(testdir_make(dir, sizeof(dir), "memlimit"), 0);
	snprintf(path, sizeof(path), "%s/t.db", dir);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *pragma =
	    xasprintf("PRAGMA application_id = %d; PRAGMA user_version = 1;", STORE_APPLICATION_ID);
	assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	free(pragma);
	assert_int_equal(sqlite3_exec(db, store_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	sqlite3 *qdb;
	char *err = NULL;
	assert_int_equal(query_open(path, NULL, &qdb, &err), 0);
	static const char sorted[] =
	    "sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000)"
	    " SELECT count(*) FROM (SELECT x, randomblob(200) AS b FROM c ORDER BY x % 7, x)";
	struct query_limits small = {.max_memory = 8 << 20}, large = {.max_memory = 256 << 20};
	run_stopped(
	    qdb, sorted, &small,
	    "query stopped: it needs more than 8 MiB of temporary files; raise --max-memory",
	    10000);
	struct query_result r;
	if (query_run(qdb, sorted, 0, &large, &r, NULL, &err) < 0)
		fail_msg("with 256 MiB: %s", err);
	assert_true(query_cell(&r, 0, 0)->i == 300000);
	query_result_release(&r);
	run_stopped(qdb,
		    "sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x <"
		    " 3000000) SELECT x, x, x FROM c",
		    &small, "query stopped: it needs more than 8 MiB of memory; raise --max-memory",
		    10000);
	assert_true(sqlite3_hard_heap_limit64(-1) == 0);
	query_close(qdb);
	testdir_remove(dir);
}

/* The write lock of another connection (an import's commit) for a while. */
struct holder {
	const char *path;
	int hold_ms;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int locked;
};

static void *hold_lock(void *arg)
{
	struct holder *h = arg;
	sqlite3 *w;
	assert_int_equal(sqlite3_open(h->path, &w), SQLITE_OK);
	assert_int_equal(sqlite3_exec(w,
				      "BEGIN EXCLUSIVE; UPDATE meta SET value = value"
				      " WHERE key = 'schema_version'",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	pthread_mutex_lock(&h->mu);
	h->locked = 1;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	struct timespec ts = {h->hold_ms / 1000, (long)(h->hold_ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
	assert_int_equal(sqlite3_exec(w, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(w);
	return NULL;
}

static void hold_start(struct holder *h, pthread_t *th, const char *path, int ms)
{
	*h = (struct holder){.path = path, .hold_ms = ms};
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	assert_int_equal(pthread_create(th, NULL, hold_lock, h), 0);
	pthread_mutex_lock(&h->mu);
	while (!h->locked)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

static void hold_end(struct holder *h, pthread_t th)
{
	pthread_join(th, NULL);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
}

/* A query while another connection holds the write lock waits for the
 * commit and succeeds (it once failed at once: "database is locked"), on
 * opening and on running; past its time limit it stops and says so. */
static void test_busy_waits(void **state)
{
	(void)state;
	char dir[256], path[300];
	assert_int_equal(testdir_make(dir, sizeof(dir), "busy"), 0);
	snprintf(path, sizeof(path), "%s/t.db", dir);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *pragma = xasprintf("PRAGMA application_id = %d; PRAGMA user_version = %d;",
				 STORE_APPLICATION_ID, STORE_SCHEMA_VERSION);
	assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	free(pragma);
	assert_int_equal(sqlite3_exec(db, store_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, tiny_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(
	    sqlite3_exec(db, "INSERT INTO meta VALUES ('schema_version', '4')", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	struct holder h;
	pthread_t th;
	char *err = NULL;
	struct query_limits lim = {.timeout_ns = 10 * (int64_t)1000000000};
	sqlite3 *qdb;
	hold_start(&h, &th, path, 400);
	int64_t t0 = now_ms();
	if (query_open(path, &lim, &qdb, &err) < 0)
		fail_msg("query_open while locked: %s", err);
	assert_true(now_ms() - t0 >= 300);
	hold_end(&h, th);
	hold_start(&h, &th, path, 400);
	t0 = now_ms();
	struct query_result r;
	if (query_run(qdb, "phases | count", 0, &lim, &r, NULL, &err) < 0)
		fail_msg("query_run while locked: %s", err);
	assert_true(now_ms() - t0 >= 300);
	assert_true(query_cell(&r, 0, 0)->i == 4);
	query_result_release(&r);
	hold_end(&h, th);
	hold_start(&h, &th, path, 1500);
	struct query_limits brief = {.timeout_ns = 200 * (int64_t)1000000};
	run_stopped(qdb, "phases | count", &brief, "query stopped after 200 ms; raise --timeout",
		    1200);
	hold_end(&h, th);
	query_close(qdb);
	testdir_remove(dir);
}

/* tiny_db with windows for during and within: spans with ties, overlaps,
 * equal spans, inverted ones (negative durations) and one that holds all
 * the others (the longest window, which a bound on duration cannot cut);
 * events 3 ns into the later phases. */
static sqlite3 *windows_db(void)
{
	sqlite3 *db = tiny_db();
	assert_int_equal(
	    sqlite3_exec(db,
			 "WITH RECURSIVE i(n) AS (SELECT 10 UNION ALL SELECT n + 1 FROM i"
			 " WHERE n < 300) INSERT INTO phases(id, parent_id, kind, name_id,"
			 " start_ns, dur_ns, self_ns, depth) SELECT n, 1, 8, 4,"
			 " (n * 7919) % 5000, CASE WHEN n % 17 = 0 THEN -50 ELSE (n * 104729) % 400"
			 " END, 0, 1 FROM i;"
			 "INSERT INTO phases(id, parent_id, kind, name_id, start_ns, dur_ns,"
			 " self_ns, depth) VALUES (301, 1, 8, 4, 100, 100, 0, 1),"
			 " (302, 1, 8, 4, 100, 100, 0, 1), (303, 1, 8, 4, 4000, 0, 0, 1),"
			 " (304, 1, 8, 4, -7, 6000, 0, 2);"
			 "INSERT INTO events(id, t_ns, name_id) SELECT id, start_ns + 3, 6 FROM"
			 " phases WHERE id > 250;",
			 NULL, NULL, NULL),
	    SQLITE_OK);
	return db;
}

/* Runs q, whose one row is (rows, rows where a function and its SQL
 * differ, rows the SQL found something for): asserts rows, none differing
 * and, when found, something found; set and ev name the case. */
static void same_as_sql(sqlite3 *db, const char *q, const char *set, int ev, int found)
{
	struct query_result r = run_ok(db, q);
	assert_true(query_cell(&r, 0, 0)->i > 0);
	if (query_cell(&r, 0, 1)->i != 0)
		fail_msg("set '%s' (%s): %lld of %lld rows differ", set, ev ? "events" : "phases",
			 (long long)query_cell(&r, 0, 1)->i, (long long)query_cell(&r, 0, 0)->i);
	if (found)
		assert_true(query_cell(&r, 0, 2)->i > 0);
	query_result_release(&r);
}

/* The window sets of test_windows_match_sql, as conditions on phases. */
static const char *const window_sets[] = {"depth = 1 AND id % 3 = 0", "id IN (301, 302, 303)",
					  "id % 29 = 1", "id % 5 = 2 OR id = 304", "0"};

/* gm_near (within's nearest window) beside the SQL it replaced, for the
 * phases (ev 0) or the events (1), as same_as_sql reads them. */
static char *near_vs_sql(const char *set, int ev)
{
	const char *t0 = ev ? "e.t_ns" : "p.start_ns";
	const char *t1 = ev ? "e.t_ns" : "(p.start_ns + p.dur_ns)";
	const char *self = ev ? "" : " AND w.wid != p.id";
	char *dist = xasprintf("max(w.w0 - %s, %s - w.w1, 0)", t1, t0);
	char *q = xasprintf("sql WITH w1 AS MATERIALIZED (SELECT id AS wid, start_ns AS w0,"
			    " start_ns + dur_ns AS w1 FROM phases WHERE %s),"
			    " d(d) AS (VALUES (0), (1), (37), (250), (100000))"
			    " SELECT count(*) AS n, sum(gm_near((SELECT gm_wset(w.wid, w.w0, w.w1)"
			    " FROM w1 w), %s, %s, d.d%s) IS NOT (SELECT w.wid FROM w1 w WHERE %s ="
			    " (SELECT min(%s) FROM w1 w WHERE %s <= d.d%s)%s ORDER BY w.wid"
			    " LIMIT 1)) AS bad, count(gm_near((SELECT gm_wset(w.wid, w.w0, w.w1)"
			    " FROM w1 w), %s, %s, d.d%s)) AS found FROM %s, d",
			    set, t0, t1, ev ? "" : ", p.id", dist, dist, dist, self, self, t0, t1,
			    ev ? "" : ", p.id", ev ? "events e" : "phases p");
	free(dist);
	return q;
}

/* gm_during (during's windows) beside the EXISTS it replaced: phases
 * contained (w0 <= start, end <= w1), instants inside (w0 <= t < w1). */
static char *during_vs_sql(const char *set, int ev)
{
	const char *in = ev ? "w.w0 <= e.t_ns AND e.t_ns < w.w1"
			    : "w.w0 <= p.start_ns AND p.start_ns + p.dur_ns <= w.w1";
	return xasprintf("sql WITH w1 AS MATERIALIZED (SELECT id AS wid, start_ns AS w0,"
			 " start_ns + dur_ns AS w1 FROM phases WHERE %s)"
			 " SELECT count(*) AS n, sum(gm_during((SELECT gm_wset(w.wid, w.w0, w.w1)"
			 " FROM w1 w), %s) IS NOT EXISTS (SELECT 1 FROM w1 w WHERE %s)) AS bad,"
			 " sum(EXISTS (SELECT 1 FROM w1 w WHERE %s)) AS inside FROM %s",
			 set, ev ? "e.t_ns" : "p.start_ns, p.start_ns + p.dur_ns", in, in,
			 ev ? "events e" : "phases p");
}

/* gm_near and gm_during answer as the SQL they replaced, over windows_db's
 * windows, for phases and for events. */
static void test_windows_match_sql(void **state)
{
	(void)state;
	sqlite3 *db = windows_db();
	char *(*const vs[])(const char *, int) = {near_vs_sql, during_vs_sql};
	for (size_t k = 0; k < sizeof(window_sets) / sizeof(window_sets[0]); k++)
		for (int ev = 0; ev < 2; ev++)
			for (size_t f = 0; f < 2; f++) {
				char *q = vs[f](window_sets[k], ev);
				same_as_sql(db, q, window_sets[k], ev, window_sets[k][0] != '0');
				free(q);
			}
	sqlite3_close(db);
}

/* gm_running (the phase running at an event without one) answers as the
 * SQL it replaced, over phases with equal depths and starts (ties), on
 * several tracks and none, for the events' own keys and for others. */
static void test_running_matches_sql(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	assert_int_equal(
	    sqlite3_exec(db,
			 "WITH RECURSIVE i(n) AS (SELECT 10 UNION ALL SELECT n + 1 FROM i"
			 " WHERE n < 400) INSERT INTO phases(id, parent_id, kind, name_id,"
			 " track_id, start_ns, dur_ns, self_ns, depth) SELECT n, 1, 8, 4,"
			 " CASE WHEN n % 5 = 0 THEN NULL ELSE n % 3 END, ((n * 7919) % 50) * 100,"
			 " CASE WHEN n % 13 = 0 THEN 0 ELSE ((n * 104729) % 30) * 100 END, 0,"
			 " n % 4 FROM i;"
			 "WITH RECURSIVE i(n) AS (SELECT 10 UNION ALL SELECT n + 1 FROM i"
			 " WHERE n < 200) INSERT INTO events(id, track_id, t_ns, name_id)"
			 " SELECT n, CASE WHEN n % 7 = 0 THEN NULL ELSE n % 4 END,"
			 " ((n * 31) % 60) * 100 + (n % 3) * 50, 6 FROM i;",
			 NULL, NULL, NULL),
	    SQLITE_OK);
	static const char *const old =
	    "coalesce((SELECT q.id FROM phases q WHERE q.track_id = %s AND q.start_ns <= %s"
	    " AND q.start_ns + q.dur_ns > %s ORDER BY q.depth DESC, q.start_ns DESC LIMIT 1),"
	    " (SELECT q.id FROM phases q WHERE q.start_ns <= %s AND q.start_ns + q.dur_ns > %s"
	    " ORDER BY q.depth DESC, q.start_ns DESC LIMIT 1))";
	char *o = xasprintf(old, "e.track_id", "e.t_ns", "e.t_ns", "e.t_ns", "e.t_ns");
	char *q =
	    xasprintf("sql SELECT count(*) AS n, sum(gm_running(e.track_id, e.t_ns) IS NOT %s)"
		      " AS bad, count(gm_running(e.track_id, e.t_ns)) AS found FROM events e"
		      " WHERE e.phase_id IS NULL",
		      o);
	struct query_result r = run_ok(db, q);
	assert_true(query_cell(&r, 0, 0)->i == 193);
	assert_true(query_cell(&r, 0, 1)->i == 0);
	assert_true(query_cell(&r, 0, 2)->i > 100);
	query_result_release(&r);
	free(q);
	free(o);
	/* keys no event has: the SQL path */
	o = xasprintf(old, "v.column1", "v.column2", "v.column2", "v.column2", "v.column2");
	q = xasprintf("sql SELECT count(*) AS n, sum(gm_running(v.column1, v.column2) IS NOT %s)"
		      " AS bad FROM (VALUES (1, 2525), (NULL, 1010), (9, 3000), (2, '3000'),"
		      " (1, 2500.0), (2, NULL)) v",
		      o);
	r = run_ok(db, q);
	assert_true(query_cell(&r, 0, 0)->i == 6);
	assert_true(query_cell(&r, 0, 1)->i == 0);
	query_result_release(&r);
	free(q);
	free(o);
	/* the query language's field */
	r = run_ok(db, "events id = 20 | select phase");
	assert_int_equal(r.nrows, 1);
	query_result_release(&r);
	sqlite3_close(db);
}

static void test_authorizer(void **state)
{
	(void)state;
	assert_int_equal(query_authorizer(NULL, SQLITE_SELECT, NULL, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(query_authorizer(NULL, SQLITE_READ, "phases", "id", "main", NULL),
			 SQLITE_OK);
	assert_int_equal(query_authorizer(NULL, SQLITE_INSERT, "phases", NULL, "main", NULL),
			 SQLITE_DENY);
	assert_int_equal(query_authorizer(NULL, SQLITE_ATTACH, "x.db", NULL, NULL, NULL),
			 SQLITE_DENY);
	assert_int_equal(query_authorizer(NULL, SQLITE_PRAGMA, "user_version", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(query_authorizer(NULL, SQLITE_PRAGMA, "user_version", "3", NULL, NULL),
			 SQLITE_DENY);
	assert_int_equal(query_authorizer(NULL, SQLITE_PRAGMA, "writable_schema", NULL, NULL, NULL),
			 SQLITE_DENY);
	assert_int_equal(
	    query_authorizer(NULL, SQLITE_FUNCTION, NULL, "load_extension", NULL, NULL),
	    SQLITE_DENY);
	assert_int_equal(query_authorizer(NULL, SQLITE_FUNCTION, NULL, "regexp", NULL, NULL),
			 SQLITE_OK);
	/* no UPDATE at all, the schema table's included (the virtual tables
	 * that ask for it while they are created are created beforehand) */
	assert_int_equal(
	    query_authorizer(NULL, SQLITE_UPDATE, "sqlite_master", "sql", "main", NULL),
	    SQLITE_DENY);
	assert_int_equal(
	    query_authorizer(NULL, SQLITE_UPDATE, "sqlite_temp_master", "sql", "temp", NULL),
	    SQLITE_DENY);
	/* a PRAGMA's table form follows the PRAGMA's list */
	assert_int_equal(
	    query_authorizer(NULL, SQLITE_READ, "pragma_table_info", "name", "main", NULL),
	    SQLITE_OK);
	assert_int_equal(
	    query_authorizer(NULL, SQLITE_READ, "pragma_journal_mode", "journal_mode", NULL, NULL),
	    SQLITE_DENY);
	/* on fresh connections (virtual tables not yet created), queries that
	 * need json_each and pragma tables still run */
	static const char *const reads[] = {
	    "phases | by name | stats count",
	    "sql SELECT count(*) FROM json_each('[1,2]')",
	    "sql SELECT count(*) FROM json_tree('[1,[2]]')",
	    "sql SELECT count(*) FROM pragma_table_info('phases')",
	    "sql SELECT count(*) FROM pragma_index_list('phases')",
	    "sql SELECT * FROM pragma_user_version",
	};
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		sqlite3 *db = tiny_db();
		struct query_result r = run_ok(db, reads[i]);
		assert_true(r.nrows >= 1);
		query_result_release(&r);
		sqlite3_close(db);
	}
	static const char *const denied[] = {
	    "sql SELECT * FROM pragma_journal_mode",
	    "sql SELECT * FROM pragma_writable_schema",
	    "sql SELECT count(*) FROM dbstat",
	    "sql UPDATE sqlite_master SET sql = 'x'",
	};
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		sqlite3 *db = tiny_db();
		struct query_error e = run_err(db, denied[i]);
		query_error_release(&e);
		sqlite3_close(db);
	}
}

static void test_glob(void **state)
{
	(void)state;
	static const struct {
		const char *glob, *re;
	} cases[] = {
	    {"/wf/step1", "^/wf/step1$"},
	    {"/wf/*/x", "^/wf/[^/]*/x$"},
	    {"/wf/**", "^/wf(?:/[^/]*)*$"},
	    {"/wf/**/aten::mm", "^/wf(?:/[^/]*)*/aten::mm$"},
	    {"/a.b/c?d/(x)", "^/a\\.b/c[^/]d/\\(x\\)$"},
	    {"/process CPU functions/*", "^/process\\ CPU\\ functions/[^/]*$"},
	    {"aten::mm", "^(?:/[^/]*)*/aten::mm$"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *re = query_glob_regex(cases[i].glob);
		if (strcmp(re, cases[i].re))
			fail_msg("glob '%s': '%s', wanted '%s'", cases[i].glob, re, cases[i].re);
		int off;
		char *err = NULL;
		assert_int_equal(query_regex_check(re, &off, &err), 0);
		free(re);
	}
	/* and on the tiny trace */
	sqlite3 *db = tiny_db();
	static const struct {
		const char *q;
		size_t rows;
	} runs[] = {
	    {"phases /wf", 1},
	    {"phases /wf/*", 1},
	    {"phases /wf/*/*", 2},
	    {"phases /wf/**", 4},
	    {"phases /wf/**/aten::mm", 1},
	    {"phases /wf/step1/aten::*", 2},
	    {"phases /*/step?/aten::add", 1},
	    {"phases path != /wf/**/aten::*", 2},
	    {"phases \"/wf/**\" and dur < 5us", 2},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct query_result r = run_ok(db, runs[i].q);
		if (r.nrows != runs[i].rows)
			fail_msg("'%s': %zu rows, wanted %zu", runs[i].q, r.nrows, runs[i].rows);
		query_result_release(&r);
	}
	sqlite3_close(db);
}

static double cell_real(const struct query_result *r, size_t row, size_t col)
{
	const struct query_value *v = query_cell(r, row, col);
	if (v->type == QP_INT)
		return (double)v->i;
	if (v->type != QP_REAL)
		fail_msg("row %zu col %zu is not a number (type %d)", row, col, v->type);
	return v->r;
}

static void test_twmean_by_hand(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r = run_ok(db, "phases | with cpu.util | select id, cpu.util.mean,"
					   " cpu.util.max | sort id");
	assert_int_equal(r.nrows, 4);
	/* cpu.util's samples (interval means) are 2500, 1500, 1500 and 3500 ns
	 * apart: its period is 1500 (the lower median), so a sample holds
	 * 2250 at most (model/store/sample.h): 10 over [0, 2250), 20 over [5500,
	 * 7750), the last one, 0, over its own period [9000, 10500); there is
	 * no value in [2250, 2500) nor in [7750, 9000).
	 * wf [1000, 11000): (1250x10 + 1500x50 + 1500x100 + 2250x20 + 1500x0)
	 * / 8000 = 35.3125 */
	assert_true(fabs(cell_real(&r, 0, 1) - 35.3125) < 1e-9);
	assert_true(fabs(cell_real(&r, 0, 2) - 100) < 1e-9);
	/* mm [2000, 5000): (250x10 + 1500x50 + 1000x100) / 2750; max 100 */
	assert_true(fabs(cell_real(&r, 2, 1) - 177500.0 / 2750) < 1e-9);
	assert_true(fabs(cell_real(&r, 2, 2) - 100) < 1e-9);
	/* add [6000, 7000): 20 throughout */
	assert_true(fabs(cell_real(&r, 3, 1) - 20) < 1e-9);
	assert_true(fabs(cell_real(&r, 3, 2) - 20) < 1e-9);
	query_result_release(&r);

	/* saturation: >= 95 during [4000, 5500) */
	r = run_ok(db, "phases | saturated cpu.util | select id, cpu.util.sat | sort id");
	assert_int_equal(r.nrows, 3); /* wf, step1, mm */
	assert_true(query_cell(&r, 0, 1)->i == 1500);
	assert_true(query_cell(&r, 2, 1)->i == 1000);
	query_result_release(&r);
	r = run_ok(db, "phases | saturated cpu.util >= 20 | select id, cpu.util.sat | sort id");
	assert_int_equal(r.nrows, 4);
	assert_true(query_cell(&r, 3, 1)->i == 1000); /* add: 20 >= 20 */
	assert_true(query_cell(&r, 2, 1)->i == 2500); /* mm: [2500, 5000) */
	query_result_release(&r);
	struct query_error e = run_err(db, "phases | saturated power");
	assert_non_null(strstr(e.msg, "has no capacity"));
	query_error_release(&e);

	/* windows of metrics: whole series, during, between */
	r = run_ok(db, "metrics cpu.util | select mean, max");
	/* [0, 10500): (2250x10 + 1500x50 + 1500x100 + 2250x20 + 1500x0) / 9000 */
	assert_true(fabs(cell_real(&r, 0, 0) - 292500.0 / 9000) < 1e-9);
	query_result_release(&r);
	r = run_ok(db,
		   "metrics cpu.util | during /wf/step1/aten::mm | select mean, max, sat, phase");
	assert_true(fabs(cell_real(&r, 0, 0) - 177500.0 / 2750) < 1e-9);
	assert_true(query_cell(&r, 0, 2)->i == 1000);
	assert_true(query_cell(&r, 0, 3)->i == 3);
	query_result_release(&r);
	/* the trace starts at 1000 (the root): 3us..4.5us is [4000, 5500) */
	r = run_ok(db, "metrics cpu.util | between 3us and 4.5us | select mean");
	assert_true(fabs(cell_real(&r, 0, 0) - 100) < 1e-9);
	query_result_release(&r);
	/* the last sample holds over its own period, and no longer */
	r = run_ok(db, "metrics cpu.util | between 8000ns and 9000ns | select mean, max");
	assert_true(fabs(cell_real(&r, 0, 0) - 0) < 1e-9);
	query_result_release(&r);
	r = run_ok(db, "metrics cpu.util | between 9500ns and 10000ns | select mean");
	assert_int_equal(query_cell(&r, 0, 0)->type, QP_NULL);
	query_result_release(&r);
	/* in a gap there is no value: [7800, 8900) is after 20 stopped holding */
	r = run_ok(db, "metrics cpu.util | between 6800ns and 7900ns | select mean, max, sat");
	assert_int_equal(query_cell(&r, 0, 0)->type, QP_NULL);
	assert_int_equal(query_cell(&r, 0, 1)->type, QP_NULL);
	query_result_release(&r);
	r = run_ok(db, "phases | saturated cpu.util >= 5 | select id, cpu.util.sat | sort id");
	assert_true(query_cell(&r, 0, 1)->i == 8000 - 1500); /* wf: not the gaps, not 0 */
	query_result_release(&r);
	sqlite3_close(db);
}

/* gm_twmean/gm_twmax agree with model_series_window on the same file. */
static void test_twmean_matches_model(void **state)
{
	(void)state;
	char dir[256], path[300];
	assert_int_equal(testdir_make(dir, sizeof(dir), "query"), 0);
	snprintf(path, sizeof(path), "%s/t.db", dir);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *pragma = xasprintf("PRAGMA application_id = %d; PRAGMA user_version = %d;",
				 STORE_APPLICATION_ID, STORE_SCHEMA_VERSION);
	assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	free(pragma);
	assert_int_equal(sqlite3_exec(db, store_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, store_schema_v2_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, tiny_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO meta VALUES ('schema_version', '2');"
				      "INSERT INTO sources(id, path, format, anchor, imported_at)"
				      " VALUES (1, 't', 'x', 'absolute', 'now')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);

	struct model *m;
	char *err = NULL;
	sqlite3 *qdb;
	if (model_open(path, &m, &err) < 0)
		fail_msg("model_open: %s", err);
	assert_int_equal(query_open(path, NULL, &qdb, &err), 0);
	static const int64_t windows[][2] = {
	    {1000, 11000}, {2000, 5000}, {6000, 7000}, {-50, 1},     {0, 2500},	   {2500, 2501},
	    {8999, 9001},  {9000, 9500}, {9001, 9500}, {4000, 4000}, {3999, 5501}, {-100, -1}};
	const struct mseries *all, *one = NULL;
	size_t nall;
	assert_int_equal(model_series(m, &all, &nall, &err), 0);
	for (size_t i = 0; i < nall; i++)
		if (all[i].id == 1)
			one = &all[i];
	assert_non_null(one);
	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		double mean, max;
		assert_int_equal(model_series_window(m, one, windows[i][0], windows[i][1], &mean,
						     &max, NULL, &err),
				 0);
		char *q =
		    xasprintf("metrics cpu.util | between %lldns and %lldns | select mean, max",
			      (long long)windows[i][0] - 1000, (long long)windows[i][1] - 1000);
		struct query_result r = run_ok(qdb, q);
		const struct query_value *qm = query_cell(&r, 0, 0), *qx = query_cell(&r, 0, 1);
		if (isnan(mean) != (qm->type == QP_NULL) || isnan(max) != (qx->type == QP_NULL) ||
		    (!isnan(mean) && fabs(mean - qm->r) > 1e-9) ||
		    (!isnan(max) && fabs(max - qx->r) > 1e-9))
			fail_msg("[%lld, %lld): model %g/%g, query %g/%g", (long long)windows[i][0],
				 (long long)windows[i][1], mean, max,
				 qm->type == QP_NULL ? NAN : qm->r,
				 qx->type == QP_NULL ? NAN : qx->r);
		query_result_release(&r);
		free(q);
	}
	sqlite3_close(qdb);
	model_free(m);
	testdir_remove(dir);
}

static void test_events_running_phase(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r =
	    run_ok(db, "events | select id, phase, phase.name, phase.path | sort id");
	assert_int_equal(r.nrows, 2);
	assert_true(query_cell(&r, 0, 1)->i == 3); /* on track 1, inside mm */
	assert_string_equal(query_cell(&r, 0, 2)->s, "aten::mm");
	assert_string_equal(query_cell(&r, 0, 3)->s, "/wf/step1/aten::mm");
	assert_true(query_cell(&r, 1, 1)->i == 4); /* no track: by time, the deepest */
	assert_int_equal(r.phase_col, 1);
	query_result_release(&r);
	r = run_ok(db, "events | within 500ns of /wf/step1/aten::add | select id, near");
	assert_int_equal(r.nrows, 1);
	assert_true(query_cell(&r, 0, 0)->i == 2);
	query_result_release(&r);
	r = run_ok(db, "events | within 1000ns of /wf/step1/aten::add | select id, near");
	assert_int_equal(r.nrows, 1); /* 2100 is 3900 ns from it */
	query_result_release(&r);
	r = run_ok(db, "events | within 4us of phases kind = operator | select id, near | sort id");
	assert_int_equal(r.nrows, 2);
	assert_true(query_cell(&r, 0, 1)->i == 3); /* nearest: the one it is in */
	query_result_release(&r);
	r = run_ok(db, "events | during /wf/step1/aten::mm");
	assert_int_equal(r.nrows, 1);
	query_result_release(&r);
	r = run_ok(db, "events | with cpu.util | select id, cpu.util.value | sort id");
	assert_true(fabs(cell_real(&r, 0, 1) - 10) < 1e-9);
	assert_true(fabs(cell_real(&r, 1, 1) - 20) < 1e-9);
	query_result_release(&r);
	sqlite3_close(db);
}

static void test_aggregates(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r =
	    run_ok(db, "phases | by kind | stats count, sum(dur), min(dur), max(dur), mean(dur),"
		       " p50(dur), p95(dur), p99(dur) | sort kind");
	assert_int_equal(r.nrows, 3);
	assert_int_equal(r.ncols, 9);
	assert_string_equal(r.cols[0].name, "kind");
	assert_string_equal(r.cols[2].name, "sum(dur)");
	assert_int_equal(r.cols[2].type, QC_DUR);
	/* operator: 3000 and 1000 */
	assert_string_equal(query_cell(&r, 0, 0)->s, "operator");
	assert_true(query_cell(&r, 0, 1)->i == 2);
	assert_true(query_cell(&r, 0, 2)->i == 4000);
	assert_true(query_cell(&r, 0, 3)->i == 1000);
	assert_true(query_cell(&r, 0, 4)->i == 3000);
	assert_true(fabs(cell_real(&r, 0, 5) - 2000) < 1e-9);
	assert_true(fabs(cell_real(&r, 0, 6) - 2000) < 1e-9); /* linear between ranks */
	assert_true(fabs(cell_real(&r, 0, 7) - 2900) < 1e-9);
	assert_true(fabs(cell_real(&r, 0, 8) - 2980) < 1e-9);
	query_result_release(&r);
	/* the hash-grouped form (count..mean) and GROUP BY (with a percentile)
	 * agree, NULL keys included */
	static const char *const keys[] = {"name", "kind", "category", "parent", "depth"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char *q1 = xasprintf("phases | by %s | stats count, sum(dur), min(self), max(dur),"
				     " mean(dur), count(parent)",
				     keys[k]);
		char *q2 = xasprintf("phases | by %s | stats count, sum(dur), min(self), max(dur),"
				     " mean(dur), count(parent), p50(dur)",
				     keys[k]);
		struct query_result h = run_ok(db, q1), g = run_ok(db, q2);
		assert_int_equal(h.nrows, g.nrows);
		for (size_t i = 0; i < h.nrows; i++)
			for (size_t c = 0; c < h.ncols; c++) {
				const struct query_value *a = query_cell(&h, i, c),
							 *b = query_cell(&g, i, c);
				if (a->type != b->type || (a->type == QP_INT && a->i != b->i) ||
				    (a->type == QP_REAL && fabs(a->r - b->r) > 1e-9) ||
				    (a->type == QP_TEXT && strcmp(a->s, b->s)))
					fail_msg("%s: row %zu col %zu differs", q1, i, c);
			}
		query_result_release(&h);
		query_result_release(&g);
		free(q1);
		free(q2);
	}
	r = run_ok(db, "phases | by name | top 2 sum(dur)");
	assert_int_equal(r.nrows, 2);
	assert_string_equal(query_cell(&r, 0, 0)->s, "wf");
	query_result_release(&r);
	r = run_ok(db, "phases kind = operator | by name | stats sum(dur) | where sum(dur) > 2us");
	assert_int_equal(r.nrows, 1);
	assert_string_equal(query_cell(&r, 0, 0)->s, "aten::mm");
	query_result_release(&r);
	r = run_ok(db, "phases | top 1");
	assert_true(query_cell(&r, 0, 0)->i == 1);
	query_result_release(&r);
	r = run_ok(db, "phases dur > 2us and dur < 9us | sort dur asc | select id");
	assert_int_equal(r.nrows, 2);
	assert_true(query_cell(&r, 0, 0)->i == 3);
	query_result_release(&r);
	/* a time against a duration is relative to the trace start (1000) */
	r = run_ok(db, "phases start >= 1us | select id | sort id");
	assert_int_equal(r.nrows, 2);
	query_result_release(&r);
	r = run_ok(db, "phases start >= 2000 | count");
	assert_true(query_cell(&r, 0, 0)->i == 2);
	query_result_release(&r);
	r = run_ok(db, "phases name !~ \"^aten\" and not kind = step | select name");
	assert_int_equal(r.nrows, 1);
	query_result_release(&r);
	struct query_error e = run_err(db, "phases | with cpu.utl");
	assert_int_equal(e.pos, 14);
	assert_non_null(strstr(e.hint, "cpu.util"));
	query_error_release(&e);
	e = run_err(db, "phases | with cpu.util@h2");
	assert_non_null(strstr(e.msg, "on host 'h2'"));
	query_error_release(&e);
	sqlite3_close(db);
}

/* Arithmetic in conditions and selections: precedence, parentheses, units,
 * division by zero and overflow, on the tiny trace (wf 10000 ns, self 0;
 * step1 8000, 0; mm 3000, 3000; add 1000, 1000). */
static void test_arith(void **state)
{
	(void)state;
	/* precedence, left to right, unary minus, parentheses, units */
	static const struct {
		const char *expr;
		int64_t want;
		enum query_coltype type;
	} ints[] = {
	    {"1 + 2 * 3", 7, QC_INT},
	    {"(1 + 2) * 3", 9, QC_INT},
	    {"10 - 4 - 3", 3, QC_INT},
	    {"-2 * 3", -6, QC_INT},
	    {"7 -2", 5, QC_INT}, /* a literal after a value subtracts */
	    {"2 * (dur - 1us)", 18000, QC_DUR},
	};
	sqlite3 *db = tiny_db();
	struct query_result r;
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		char *q = xasprintf("phases id = 1 | select %s", ints[i].expr);
		r = run_ok(db, q);
		if (r.nrows != 1 || strcmp(r.cols[0].name, ints[i].expr) ||
		    r.cols[0].type != ints[i].type || query_cell(&r, 0, 0)->i != ints[i].want)
			fail_msg("'%s': %s = %lld", q, r.cols[0].name,
				 (long long)query_cell(&r, 0, 0)->i);
		query_result_release(&r);
		free(q);
	}
	r = run_ok(db, "phases id = 1 | select 12 / 4 / 3");
	assert_true(fabs(cell_real(&r, 0, 0) - 1.0) < 1e-12);
	query_result_release(&r);

	/* the query: operators whose self time is over half their time */
	r = run_ok(db, "phases | where self > 0.5 * dur | select id");
	assert_int_equal(r.nrows, 2);
	assert_true(query_cell(&r, 0, 0)->i == 3 && query_cell(&r, 1, 0)->i == 4);
	query_result_release(&r);
	/* a parenthesised value opens the left side; ratios are real */
	r = run_ok(db,
		   "phases | where (dur - self) / dur >= 1 and not id = 2 | select id, self / dur");
	assert_int_equal(r.nrows, 1);
	assert_true(query_cell(&r, 0, 0)->i == 1);
	assert_int_equal(r.cols[1].type, QC_REAL);
	assert_true(fabs(cell_real(&r, 0, 1)) < 1e-12);
	query_result_release(&r);
	r = run_ok(db, "phases | where ((dur + 0.5 * self)) - 1us > 3.5us | sort id | select id");
	assert_int_equal(r.nrows, 2); /* wf 9000, step1 7000; mm 3500 is not over */
	query_result_release(&r);
	/* times: a time minus a time is a duration, a time plus one a time */
	r = run_ok(db, "phases id = 3 | select end - start, start + 1us, end - 1us - start");
	assert_int_equal(r.cols[0].type, QC_DUR);
	assert_int_equal(r.cols[1].type, QC_TIME);
	assert_true(query_cell(&r, 0, 0)->i == 3000);
	assert_true(query_cell(&r, 0, 1)->i == 3000);
	assert_true(query_cell(&r, 0, 2)->i == 2000);
	query_result_release(&r);
	/* aggregates of arithmetic, and arithmetic of aggregates after stats */
	r = run_ok(db, "phases | by kind | stats sum(dur - self), sum(dur), sum(self)"
		       " | where sum(self) > 0.5 * sum(dur)");
	assert_int_equal(r.nrows, 1);
	assert_string_equal(query_cell(&r, 0, 0)->s, "operator");
	assert_string_equal(r.cols[1].name, "sum(dur - self)");
	assert_true(query_cell(&r, 0, 1)->i == 0);
	query_result_release(&r);
	r = run_ok(db, "phases | top 1 dur - 2 * self | select id");
	assert_true(query_cell(&r, 0, 0)->i == 1);
	query_result_release(&r);
	/* division by zero is NULL: no row matches it, a cell shows none */
	r = run_ok(db, "phases | where dur / 0 >= 0 or 1 / (children - children) = 1 | count");
	assert_true(query_cell(&r, 0, 0)->i == 0);
	query_result_release(&r);
	r = run_ok(db, "phases id = 1 | select dur / 0, dur / (self * 0)");
	assert_int_equal(query_cell(&r, 0, 0)->type, QP_NULL);
	assert_int_equal(query_cell(&r, 0, 1)->type, QP_NULL);
	query_result_release(&r);
	/* overflow: a duration saturates at the int64 range, a number turns real */
	r = run_ok(db, "phases id = 1 | select dur * 9223372036854775807,"
		       " dur * -9223372036854775807, dur * 1e300, 9223372036854775807 + 1");
	assert_true(query_cell(&r, 0, 0)->i == INT64_MAX);
	assert_true(query_cell(&r, 0, 1)->i == INT64_MIN);
	assert_true(query_cell(&r, 0, 2)->i == INT64_MAX);
	assert_true(fabs(cell_real(&r, 0, 3) - 9223372036854775808.0) < 1e4);
	query_result_release(&r);
	sqlite3_close(db);

	/* errors point at the operation and say why */
	static const struct {
		const char *q;
		int col;
		const char *msg, *hint;
	} errs[] = {
	    {"phases | where dur * dur > 1", 16, "cannot multiply a duration and a duration",
	     "scale by numbers"},
	    {"phases | where 2 / dur > 1", 16, "cannot divide a number and a duration", NULL},
	    {"phases | where start + start > 1", 16, "cannot add a time and a time", NULL},
	    {"phases | where -start < 1", 16, "a time cannot be negated", NULL},
	    {"phases | where 1 + name > 2", 20, "'name' is text", NULL},
	    {"phases | where dur > 1 + 2 * \"x\"", 30, "'\"x\"' is text", NULL},
	    {"phases | where start > dur * 2", 16, "cannot compare a time with a duration", NULL},
	    {"phases | where dur*2 > 1", 16, "unknown field 'dur*2'",
	     "put blanks around operators: 'dur * 2'"},
	    {"phases | where dur /2 > 1", 20, "expected a comparison", "blanks around '/'"},
	    {"phases | where (dur + 1 > 2", 28, "expected ')'", NULL},
	    {"phases | where dur > (self + 1", 31, "expected ')'", NULL},
	    {"phases | where dur > 2 * ", 26, "expected a field", NULL},
	    {"phases | where (dur - self)", 28, "expected a comparison", NULL},
	    {"phases | by dur - self | count", 13, "by takes fields", NULL},
	    {"phases | where dur + > 1", 22, "expected a field", NULL},
	};
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		compile_fails(errs[i].q, errs[i].col, errs[i].msg, errs[i].hint);
	/* a lone '/' that no value follows is still the root path */
	compiles("phases /");
	compiles("phases kind = step /wf/**");
}

/* The step field: the nearest part of the workflow or iteration above a
 * phase, itself included; `kind = step` still means the kind. */
static void test_step_field(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r = run_ok(db, "phases | select id, step, step.id | sort id");
	assert_int_equal(r.nrows, 4);
	assert_int_equal(query_cell(&r, 0, 1)->type, QP_NULL); /* the workflow has none */
	for (size_t i = 1; i < 4; i++) {
		assert_string_equal(query_cell(&r, i, 1)->s, "step1");
		assert_true(query_cell(&r, i, 2)->i == 2);
	}
	assert_int_equal(r.cols[2].type, QC_PHASE);
	query_result_release(&r);
	r = run_ok(db, "phases kind = step | count");
	assert_true(query_cell(&r, 0, 0)->i == 1);
	query_result_release(&r);
	r = run_ok(db, "phases step = step1 kind = operator | by step | stats count, sum(dur)");
	assert_int_equal(r.nrows, 1);
	assert_string_equal(query_cell(&r, 0, 0)->s, "step1");
	assert_true(query_cell(&r, 0, 1)->i == 2 && query_cell(&r, 0, 2)->i == 4000);
	query_result_release(&r);
	r = run_ok(db, "phases step ~ \"^st\" | count");
	assert_true(query_cell(&r, 0, 0)->i == 3);
	query_result_release(&r);
	sqlite3_close(db);
	/* by step, as by name, groups through the hash table (an alias of a
	 * source that looks like the table's once sent them to GROUP BY) */
	static const char *const hashed[] = {"phases | by step | count",
					     "phases | by name | stats count, sum(dur)",
					     "gaps | by source | top 3 sum(dur)"};
	for (size_t i = 0; i < sizeof(hashed) / sizeof(hashed[0]); i++) {
		struct query_plan plan;
		struct query_error e = {0};
		assert_int_equal(query_compile(hashed[i], &plan, &e), 0);
		if (!strstr(plan.sql, "gm_hagg"))
			fail_msg("'%s' is not hash-grouped: %s", hashed[i], plan.sql);
		query_plan_release(&plan);
	}
}

static void test_print(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r = run_ok(db, "sql SELECT 'a,b' AS x, 'say \"hi\"' AS y, 1.5 AS z,"
					   " NULL AS n, 'l1' || char(10) || 'l2' AS w");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char *err = NULL;
	assert_int_equal(query_print(f, &r, QF_CSV, NULL, 0, &err), 0);
	fclose(f);
	assert_string_equal(buf, "x,y,z,n,w\r\n\"a,b\",\"say \"\"hi\"\"\",1.5,,\"l1\nl2\"\r\n");
	free(buf);
	/* integers as "%lld" writes them, the extremes included */
	struct query_result ints =
	    run_ok(db, "sql SELECT 0 AS a, -7 AS b, 9223372036854775807 AS c,"
		       " -9223372036854775807 - 1 AS d, 1000000 AS e");
	f = open_memstream(&buf, &len);
	assert_int_equal(query_print(f, &ints, QF_CSV, NULL, 0, &err), 0);
	fclose(f);
	assert_string_equal(buf, "a,b,c,d,e\r\n0,-7,9223372036854775807,-9223372036854775808,"
				 "1000000\r\n");
	free(buf);
	query_result_release(&ints);
	f = open_memstream(&buf, &len);
	assert_int_equal(query_print(f, &r, QF_JSON, NULL, 0, &err), 0);
	fclose(f);
	assert_string_equal(buf, "[\n{\"x\":\"a,b\",\"y\":\"say \\\"hi\\\"\",\"z\":1.5,\"n\":null,"
				 "\"w\":\"l1\\nl2\"}\n]\n");
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(query_print(f, &r, QF_TABLE, NULL, 0, &err), 0);
	fclose(f);
	assert_null(strstr(buf, "l1\nl2")); /* no raw control character in a table */
	free(buf);
	query_result_release(&r);
	r = run_ok(db, "phases | select name, dur | sort id | limit 2");
	f = open_memstream(&buf, &len);
	assert_int_equal(query_print(f, &r, QF_TABLE, NULL, 0, &err), 0);
	fclose(f);
	assert_string_equal(buf, "name       dur\n"
				 "wf     10.0 us\n"
				 "step1  8.00 us\n"
				 "(2 rows)\n");
	free(buf);
	query_result_release(&r);
	sqlite3_close(db);
}

/* query_print's output through hooks as a string (the caller frees it). */
static char *print_hooked(const struct query_result *r, enum query_format fmt,
			  const struct query_print_hooks *hooks, int terminal)
{
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(query_print(f, r, fmt, hooks, terminal, &err), 0);
	fclose(f);
	return buf;
}

/* The same with the sanitiser and width alone. */
static char *print_to_string(const struct query_result *r, enum query_format fmt, int terminal)
{
	const struct query_print_hooks hooks = {.sanitize = format_sanitize, .width = format_width};
	return print_hooked(r, fmt, &hooks, terminal);
}

/* CSV and JSON carry text exactly to a file or pipe; to a terminal, CSV shows
 * the sanitiser's form and JSON escapes C1, bidi and DEL as \uXXXX. */
static void test_print_terminal(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r =
	    run_ok(db, "sql SELECT 'a' || char(27) || ']52;c;Zm9v' || char(7) || char(155) ||"
		       " char(8238) || char(127) || ',' || char(233) AS \"h\x1b"
		       "x\","
		       " 7 AS n");
	char *s = print_to_string(&r, QF_CSV, 0);
	assert_string_equal(
	    s, "h\x1bx,n\r\n\"a\x1b]52;c;Zm9v\a\xc2\x9b\xe2\x80\xae\x7f,\xc3\xa9\",7\r\n");
	free(s);
	s = print_to_string(&r, QF_JSON, 0);
	assert_string_equal(s,
			    "[\n{\"h\\u001Bx\":\"a\\u001B]52;c;Zm9v\\u0007\xc2\x9b\xe2\x80\xae\x7f,"
			    "\xc3\xa9\",\"n\":7}\n]\n");
	free(s);
	s = print_to_string(&r, QF_CSV, 1);
	assert_string_equal(
	    s, "h\\ex,n\r\n\"a\\e]52;c;Zm9v\\x07\\u009b\\u{202e}\\x7f,\xc3\xa9\",7\r\n");
	free(s);
	s = print_to_string(&r, QF_JSON, 1);
	assert_string_equal(s, "[\n{\"h\\u001Bx\":\"a\\u001B]52;c;Zm9v\\u0007\\u009B\\u202E\\u007F,"
			       "\xc3\xa9\",\"n\":7}\n]\n");
	free(s);
	query_result_release(&r);
	sqlite3_close(db);
}

/* A hand-made result of one text column "t" and a number column "n",
 * a row per text. */
static struct query_result text_result(const char *const *texts, size_t n)
{
	static const struct query_column cols[] = {{"t", QC_TEXT}, {"n", QC_INT}};
	struct query_result r;
	query_result_init(&r, cols, 2, n);
	for (size_t i = 0; i < n; i++) {
		r.cells[2 * i] = (struct query_value){
		    .type = QP_TEXT, .s = query_result_text(&r, texts[i], strlen(texts[i]))};
		r.cells[2 * i + 1] = (struct query_value){.type = QP_INT, .i = (int64_t)i};
	}
	return r;
}

/* To a file or a pipe a cell wider than 256 columns stands whole without
 * widening its column: one long name does not pad every other row to it. */
static void test_print_long_cell(void **state)
{
	(void)state;
	enum { LONG = 70000 };
	char *long_text = xmalloc(LONG + 1);
	memset(long_text, 'x', LONG);
	long_text[LONG] = '\0';
	const char *texts[] = {"ab", long_text, "abcd"};
	struct query_result r = text_result(texts, 3);
	char *buf = print_to_string(&r, QF_TABLE, 0);
	size_t n = strlen(buf);
	/* the header and short rows padded to "abcd", the long cell whole */
	assert_true(n < LONG + 100);
	assert_non_null(strstr(buf, "t     n\nab    0\n"));
	assert_non_null(strstr(buf, "abcd  2\n(3 rows)\n"));
	assert_non_null(strstr(buf, "\n"
				    "xxxx"));
	assert_non_null(strstr(buf, "xxxx  1\n"));
	free(buf);
	query_result_release(&r);
	free(long_text);
}

/* Values longer than the printers' buffer read exactly as short ones: the
 * sanitiser's and JSON's escapes of characters of 1 to 4 bytes on either
 * side of each cut, as the whole value's would be (jansson's own output for
 * JSON). */
static void test_print_long_values(void **state)
{
	(void)state;
	static const char *const bits[] = {
	    "a", "\xc3\xa9", "\xe2\x80\xae", "\xf0\x9f\x98\x80", "\x1b", "\"", ",", "\n", "\xff"};
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; sb.len < 200000; i = (i * 7 + 3) % 9)
		sbuf_adds(&sb, bits[i]);
	const char *texts[] = {sb.buf};
	struct query_result r = text_result(texts, 1);
	/* JSON, to a file: jansson's string of the value repaired */
	char *fixed = text_utf8_dup(sb.buf);
	json_t *j = json_string(fixed);
	char *want = json_dumps(j, JSON_ENCODE_ANY);
	char *buf = print_to_string(&r, QF_JSON, 0);
	assert_true(strncmp(buf, "[\n{\"t\":", 7) == 0);
	assert_true(strncmp(buf + 7, want, strlen(want)) == 0);
	assert_string_equal(buf + 7 + strlen(want), ",\"n\":0}\n]\n");
	free(buf);
	free(want);
	json_decref(j);
	free(fixed);
	/* CSV and the table on a terminal: the sanitiser's form of the whole */
	struct sbuf clean = SBUF_INIT;
	format_sanitize(&clean, sb.buf);
	buf = print_to_string(&r, QF_CSV, 1);
	assert_true(strncmp(buf, "t,n\r\n\"", 6) == 0);
	const char *p = buf + 6, *q = clean.buf;
	for (; *q; q++, p++) {
		if (*q == '"')
			assert_int_equal(*p++, '"');
		if (*p != *q)
			fail_msg("CSV differs at byte %td of the sanitised value", q - clean.buf);
	}
	assert_string_equal(p, "\",0\r\n");
	free(buf);
	buf = print_to_string(&r, QF_TABLE, 1);
	assert_non_null(strstr(buf, clean.buf));
	free(buf);
	sbuf_release(&clean);
	sbuf_release(&sb);
	query_result_release(&r);
}

/* Two columns of one name are one JSON key, where the first stands, with
 * the last one's value, as before the printer wrote JSON itself. */
static void test_print_json_same_names(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r = run_ok(db, "sql SELECT 1 AS a, 2 AS b, 3 AS a");
	char *buf = print_to_string(&r, QF_JSON, 0);
	assert_string_equal(buf, "[\n{\"a\":3,\"b\":2}\n]\n");
	free(buf);
	query_result_release(&r);
	sqlite3_close(db);
}

/* track.name, rank and host of phases and events, and the window's
 * phase.name of metrics during phases, on a file of two ranks: rank 0's
 * thread on h1 runs an operator, rank 1's stream on h2 a kernel. */
static void test_track_fields(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	assert_int_equal(
	    sqlite3_exec(
		db,
		"INSERT INTO phase_kinds(id, name) VALUES (11,'kernel');"
		"INSERT INTO strings(id, text) VALUES (20,'gemm'),(21,'stream 7'),(22,'sync');"
		"INSERT INTO tracks(id, source_id, kind, name, host, rank) VALUES"
		" (5, 1, 'thread', 'thread 9', 'h1', 0), (6, 1, 'stream', 'stream 7', 'h2', 1);"
		"INSERT INTO phases(id, parent_id, kind, name_id, track_id, start_ns, dur_ns,"
		" self_ns, depth) VALUES (10, 2, 8, 22, 5, 7000, 500, 500, 2),"
		" (11, 10, 11, 20, 6, 7200, 900, 900, 3);"
		"INSERT INTO events(id, track_id, t_ns, name_id) VALUES (3, 6, 7300, 21);",
		NULL, NULL, NULL),
	    SQLITE_OK);
	struct query_result r = run_ok(db, "phases rank = 1 | select name, track.name, host, rank");
	assert_int_equal(r.nrows, 1);
	assert_string_equal(query_cell(&r, 0, 0)->s, "gemm");
	assert_string_equal(query_cell(&r, 0, 1)->s, "stream 7");
	assert_string_equal(query_cell(&r, 0, 2)->s, "h2");
	assert_int_equal(query_cell(&r, 0, 3)->i, 1);
	assert_int_equal(r.cols[1].type, QC_TEXT);
	assert_int_equal(r.cols[3].type, QC_INT);
	query_result_release(&r);
	/* by rank: the phases on no track (wf) have none */
	r = run_ok(db, "phases track.name ~ \"^(thread|stream) \" | by rank, host | stats count | "
		       "sort rank");
	assert_int_equal(r.nrows, 2);
	assert_int_equal(query_cell(&r, 0, 0)->i, 0);
	assert_string_equal(query_cell(&r, 0, 1)->s, "h1");
	assert_int_equal(query_cell(&r, 0, 2)->i, 1);
	assert_int_equal(query_cell(&r, 1, 0)->i, 1);
	query_result_release(&r);
	r = run_ok(db, "phases kind = workflow | select rank, track.name");
	assert_int_equal(query_cell(&r, 0, 0)->type, QP_NULL);
	assert_int_equal(query_cell(&r, 0, 1)->type, QP_NULL);
	query_result_release(&r);
	r = run_ok(db, "events rank = 1 | select name, track.name, rank, host, phase.name");
	assert_int_equal(r.nrows, 1);
	assert_string_equal(query_cell(&r, 0, 0)->s, "stream 7");
	assert_string_equal(query_cell(&r, 0, 1)->s, "stream 7");
	assert_int_equal(query_cell(&r, 0, 2)->i, 1);
	assert_string_equal(query_cell(&r, 0, 3)->s, "h2");
	assert_string_equal(query_cell(&r, 0, 4)->s, "gemm");
	query_result_release(&r);
	/* metrics over windows name their window */
	r = run_ok(db, "metrics cpu.util | during phases kind = step | select phase, phase.name");
	assert_int_equal(r.nrows, 1);
	assert_int_equal(query_cell(&r, 0, 0)->i, 2);
	assert_string_equal(query_cell(&r, 0, 1)->s, "step1");
	assert_int_equal(r.cols[1].type, QC_TEXT);
	query_result_release(&r);
	sqlite3_close(db);
}

static void fit_plain(struct sbuf *out, const char *s, int cols)
{
	format_fit(out, s, cols, 0);
}

/* The table on a terminal: cut to its width (numbers whole, the widest text
 * first, each cut cell ending in the mark), times as UTC dates; raw. */
static void test_print_fit(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	struct query_result r =
	    run_ok(db, "phases | select name, start, dur, path | sort id | limit 2");
	struct query_print_hooks hooks = {.sanitize = format_sanitize,
					  .width = format_width,
					  .fit = fit_plain,
					  .cols = 52,
					  .more = "\u2026",
					  .clock = 1};
	char *buf = print_hooked(&r, QF_TABLE, &hooks, 1);
	assert_string_equal(buf, "name                        start      dur  path\n"
				 "wf     1970-01-01 00:00:00.000001  10.0 us  /wf\n"
				 "step1  1970-01-01 00:00:00.000001  8.00 us  /wf/ste\u2026\n"
				 "(2 rows)\n");
	free(buf);
	/* narrower than the numbers: the columns past the width left out */
	hooks.cols = 40;
	buf = print_hooked(&r, QF_TABLE, &hooks, 1);
	assert_string_equal(buf, "name                        start\n"
				 "wf     1970-01-01 00:00:00.000001\n"
				 "step1  1970-01-01 00:00:00.000001\n"
				 "(2 rows)\n"
				 "(2 columns past the width left out: --wide shows them)\n");
	free(buf);
	hooks.raw = 1;
	hooks.cols = 0;
	buf = print_hooked(&r, QF_TABLE, &hooks, 1);
	assert_string_equal(buf, "name   start    dur  path\n"
				 "wf      1000  10000  /wf\n"
				 "step1   1000   8000  /wf/step1\n"
				 "(2 rows)\n");
	free(buf);
	query_result_release(&r);
	sqlite3_close(db);
}

/* The explorer's own units (summaries, :diff): bytes, bytes per ns as a
 * rate, signed differences and ratios read with their units in a table,
 * as stored in CSV, JSON and --raw. */
static void test_print_units(void **state)
{
	(void)state;
	static const struct query_column cols[] = {
	    {"bytes", QC_BYTES}, {"GB/s", QC_RATE}, {"diff", QC_DELTA}, {"ratio", QC_RATIO}};
	struct query_result r;
	query_result_init(&r, cols, 4, 3);
	struct query_value *v = r.cells;
	v[0] = (struct query_value){.type = QP_INT, .i = 150994944};
	v[1] = (struct query_value){.type = QP_REAL, .r = 1279.8};
	v[2] = (struct query_value){.type = QP_INT, .i = 279000000};
	v[3] = (struct query_value){.type = QP_REAL, .r = 1.6};
	v[4] = (struct query_value){.type = QP_INT, .i = 76428};
	v[5] = (struct query_value){.type = QP_REAL, .r = 0.869};
	v[6] = (struct query_value){.type = QP_INT, .i = -300};
	v[7] = (struct query_value){.type = QP_REAL, .r = 0.43};
	v[9] = (struct query_value){.type = QP_REAL, .r = 10.35}; /* row 2: mostly NULL */
	v[10] = (struct query_value){.type = QP_INT, .i = 0};
	char *buf = print_to_string(&r, QF_TABLE, 0);
	assert_string_equal(buf, "   bytes        GB/s     diff  ratio\n"
				 "151.0 MB    1.3 TB/s  +279 ms  1.60x\n"
				 " 76.4 KB  869.0 MB/s  -300 ns  0.43x\n"
				 "       -   10.3 GB/s     0 ns      -\n"
				 "(3 rows)\n");
	free(buf);
	buf = print_to_string(&r, QF_CSV, 0);
	assert_string_equal(buf, "bytes,GB/s,diff,ratio\r\n150994944,1279.8,279000000,1.6\r\n"
				 "76428,0.869,-300,0.43\r\n,10.35,0,\r\n");
	free(buf);
	struct query_table t;
	query_table_build(&t, &r, &(struct query_print_hooks){.raw = 1});
	assert_string_equal(query_table_cell(&t, 1, 0), "150994944");
	assert_string_equal(query_table_cell(&t, 2, 2), "-300");
	assert_true(t.right[0] && t.right[1] && t.right[2] && t.right[3]);
	query_table_release(&t);
	query_result_release(&r);
}

static void test_complete(void **state)
{
	(void)state;
	sqlite3 *db = tiny_db();
	char **c;
	size_t start;
	size_t n = query_complete(db, "ph", &c, &start);
	assert_int_equal(n, 1);
	assert_string_equal(c[0], "phases");
	assert_int_equal(start, 0);
	free(c[0]);
	free(c);
	n = query_complete(db, "phases | t", &c, &start);
	assert_int_equal(n, 1);
	assert_string_equal(c[0], "top");
	assert_int_equal(start, 9);
	free(c[0]);
	free(c);
	/* sar's names hold their resource: cpu.util, not also cpu.cpu.util */
	n = query_complete(db, "phases | with cpu", &c, &start);
	assert_int_equal(n, 1);
	assert_string_equal(c[0], "cpu.util");
	free(c[0]);
	free(c);
	/* nvidia-smi's do not: power, and gpu0.power to name the GPU */
	n = query_complete(db, "phases | with ", &c, &start);
	assert_int_equal(n, 3);
	assert_string_equal(c[0], "cpu.util");
	assert_string_equal(c[1], "gpu0.power");
	assert_string_equal(c[2], "power");
	for (size_t i = 0; i < n; i++)
		free(c[i]);
	free(c);
	n = query_complete(db, "phases du", &c, &start);
	assert_int_equal(n, 1);
	assert_string_equal(c[0], "dur");
	free(c[0]);
	free(c);
	n = query_complete(db, "phases name = aten::", &c, &start);
	assert_int_equal(n, 2);
	assert_string_equal(c[0], "aten::add");
	for (size_t i = 0; i < n; i++)
		free(c[i]);
	free(c);
	n = query_complete(db, "phases kind = op", &c, &start);
	assert_int_equal(n, 1);
	assert_string_equal(c[0], "operator");
	free(c[0]);
	free(c);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lex_tokens),
	    cmocka_unit_test(test_lex_units),
	    cmocka_unit_test(test_arith),
	    cmocka_unit_test(test_step_field),
	    cmocka_unit_test(test_parse_valid),
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_error_format),
	    cmocka_unit_test(test_compile_binds),
	    cmocka_unit_test(test_injection),
	    cmocka_unit_test(test_interned_text),
	    cmocka_unit_test(test_path_loop),
	    cmocka_unit_test(test_time_limit),
	    cmocka_unit_test(test_busy_waits),
	    cmocka_unit_test(test_memory_limits),
	    cmocka_unit_test(test_windows_match_sql),
	    cmocka_unit_test(test_running_matches_sql),
	    cmocka_unit_test(test_authorizer),
	    cmocka_unit_test(test_glob),
	    cmocka_unit_test(test_twmean_by_hand),
	    cmocka_unit_test(test_twmean_matches_model),
	    cmocka_unit_test(test_events_running_phase),
	    cmocka_unit_test(test_aggregates),
	    cmocka_unit_test(test_print),
	    cmocka_unit_test(test_print_terminal),
	    cmocka_unit_test(test_print_fit),
	    cmocka_unit_test(test_print_units),
	    cmocka_unit_test(test_print_long_cell),
	    cmocka_unit_test(test_print_long_values),
	    cmocka_unit_test(test_print_json_same_names),
	    cmocka_unit_test(test_track_fields),
	    cmocka_unit_test(test_complete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
