/*
 * Reading a column of trace.db (model/store/col.h): a value of any type in
 * any column reads as a value of the type asked for or as the default, never
 * as a NULL string or as SQLite's loose conversions (the leading digits of
 * text, INT64_MAX for a huge real); counts and durations stay in ranges whose
 * sums fit int64; and the ids of a hostile file's tables are checked at open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"

/* One row of every kind of value, in this order. */
enum { C_NULL, C_TEXT, C_NUMTEXT, C_INTTEXT, C_BLOB, C_REAL, C_NEG, C_MAX, C_MIN, C_HUGE, C_EMPTY };
static const char row_sql[] =
    "SELECT NULL, 'x', '12abc', '42', X'00ff00', 1.5, -1, 9223372036854775807,"
    " -9223372036854775808, 1e300, ''";

static sqlite3 *db;
static sqlite3_stmt *q;

static int setup(void **state)
{
	(void)state;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, row_sql, -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_step(q) != SQLITE_ROW)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sqlite3_finalize(q);
	sqlite3_close(db);
	return 0;
}

static void test_text_never_null(void **state)
{
	(void)state;
	size_t n = 99;
	assert_string_equal(col_text(q, C_NULL), "");
	assert_string_equal(col_text_n(q, C_NULL, &n), "");
	assert_int_equal(n, 0);
	assert_null(col_text_or_null(q, C_NULL));
	assert_null(col_strdup_or_null(q, C_NULL));
	char *s = col_strdup(q, C_NULL);
	assert_string_equal(s, "");
	free(s);
	assert_string_equal(col_text(q, C_TEXT), "x");
	assert_string_equal(col_text(q, C_NEG), "-1");
	/* a blob's bytes: its NUL ends the C string, not the length */
	const char *b = col_text_n(q, C_BLOB, &n);
	assert_int_equal(n, 3);
	assert_int_equal(b[0], 0);
	assert_int_equal((unsigned char)b[1], 0xff);
	assert_int_equal(col_bytes(q, C_BLOB), 3);
	assert_true(col_null(q, C_NULL));
	assert_false(col_null(q, C_EMPTY));
}

static void test_int_checks_the_type(void **state)
{
	(void)state;
	assert_int_equal(col_int(q, C_NULL), 0);
	assert_int_equal(col_int_or(q, C_NULL, -7), -7);
	assert_int_equal(col_int_or(q, C_TEXT, -7), -7);
	/* SQLite reads '12abc' as 12: not an integer here */
	assert_int_equal(col_int_or(q, C_NUMTEXT, -7), -7);
	assert_int_equal(col_int(q, C_INTTEXT), 42);
	assert_int_equal(col_int_or(q, C_BLOB, -7), -7);
	assert_int_equal(col_int_or(q, C_EMPTY, -7), -7);
	assert_int_equal(col_int(q, C_REAL), 1);
	assert_int_equal(col_int(q, C_NEG), -1);
	assert_true(col_int(q, C_MAX) == INT64_MAX);
	assert_true(col_int(q, C_MIN) == INT64_MIN);
	/* SQLite reads 1e300 as INT64_MAX: out of range here */
	assert_int_equal(col_int_or(q, C_HUGE, -7), -7);
	assert_int_equal(col_int32(q, C_MAX), 2147483647);
	assert_int_equal(col_int32(q, C_MIN), -2147483647 - 1);
}

static void test_counts_and_durations_add_up(void **state)
{
	(void)state;
	assert_int_equal(col_count(q, C_NEG), 0);
	assert_true(col_count(q, C_MAX) == COL_ID_MAX);
	assert_true(col_count(q, C_MAX) + COL_ID_MAX > 0); /* an id plus a count */
	assert_true(COL_ID_MAX - -COL_ID_MAX > 0);	   /* one id less another */
	assert_int_equal(col_dur(q, C_MIN), 0);
	assert_true(col_dur(q, C_MAX) == COL_DUR_MAX);
	assert_true(col_dur(q, C_MAX) + COL_DUR_MAX > 0);
	assert_int_equal(col_dur(q, C_TEXT), 0);
	assert_true(col_time(q, C_MAX) == COL_TIME_MAX);
	assert_true(col_time(q, C_MIN) == -COL_TIME_MAX);
	assert_int_equal(col_time(q, C_NEG), -1);
	assert_true(col_time(q, C_MAX) + col_dur(q, C_MAX) > 0); /* a time plus a duration */
}

static void test_real(void **state)
{
	(void)state;
	assert_true(col_real(q, C_REAL) == 1.5);
	assert_true(col_real(q, C_NEG) == -1.0);
	assert_true(col_real_or(q, C_NULL, -7) == -7);
	assert_true(col_real_or(q, C_TEXT, -7) == -7);
	assert_true(col_real(q, C_INTTEXT) == 42.0);
	assert_true(col_real_or(q, C_BLOB, -7) == -7);
}

/* check_ids(SQL): col_check_ids on a fresh database made by SQL; its error
 * in *err. */
static int check_ids(const char *sql, char **err)
{
	sqlite3 *d;
	*err = NULL;
	if (sqlite3_open(":memory:", &d) != SQLITE_OK ||
	    sqlite3_exec(d, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s", sqlite3_errmsg(d));
	int rc = col_check_ids(d, "x.db", err);
	sqlite3_close(d);
	return rc;
}

static void test_check_ids(void **state)
{
	(void)state;
	char *err;
	/* a table an older schema lacks, or an empty one, is fine */
	assert_int_equal(check_ids("CREATE TABLE phases(id INTEGER PRIMARY KEY)", &err), 0);
	assert_int_equal(check_ids("CREATE TABLE phases(id INTEGER PRIMARY KEY);"
				   " INSERT INTO phases VALUES (-2305843009213693952), (1),"
				   " (2305843009213693952)",
				   &err),
			 0);
	assert_int_equal(check_ids("CREATE TABLE phases(id INTEGER PRIMARY KEY);"
				   " INSERT INTO phases VALUES (-2305843009213693953), (3)",
				   &err),
			 -1);
	assert_string_equal(err, "x.db: table phases has an id -2305843009213693953, not one of"
				 " -2^61..2^61 but 0 (a trace.db that grademl-tui did not write)");
	free(err);
	assert_int_equal(check_ids("CREATE TABLE tracks(id INTEGER PRIMARY KEY);"
				   " INSERT INTO tracks VALUES (-1), (0), (1)",
				   &err),
			 -1);
	assert_non_null(strstr(err, "table tracks has an id 0, not one of"));
	free(err);
	assert_int_equal(check_ids("CREATE TABLE metrics(id INTEGER PRIMARY KEY);"
				   " INSERT INTO metrics VALUES (9223372036854775807)",
				   &err),
			 -1);
	assert_non_null(strstr(err, "table metrics has an id 9223372036854775807"));
	free(err);
	/* a key that is not the rowid may hold text */
	assert_int_equal(check_ids("CREATE TABLE strings(id, text);"
				   " INSERT INTO strings VALUES (1, 'a'), ('x', 'b')",
				   &err),
			 -1);
	assert_non_null(strstr(err, "table strings has an id that is not an integer"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_text_never_null),
	    cmocka_unit_test(test_int_checks_the_type),
	    cmocka_unit_test(test_counts_and_durations_add_up),
	    cmocka_unit_test(test_real),
	    cmocka_unit_test(test_check_ids),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
