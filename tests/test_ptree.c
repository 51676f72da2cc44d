/*
 * Unit tests for model/store/ptree.h: walks up parent links that may loop, in
 * memory (ptree_loop) and in a file (ptree_up, Brent's check), on trees
 * small enough to draw in the comments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/ptree.h"
#include "model/store/schema.sql.h"

/* Indexes: -1 is no parent. */
static void test_loop_in_memory(void **state)
{
	(void)state;
	/* 0 <- 1 <- 2, 0 <- 3: a tree */
	static const int32_t tree[] = {-1, 0, 1, 0};
	assert_int_equal(ptree_loop(tree, 4), -1);
	assert_int_equal(ptree_loop(tree, 0), -1);
	/* 2 is its own parent */
	static const int32_t self[] = {-1, 0, 2, 0};
	assert_int_equal(ptree_loop(self, 4), 2);
	/* 1 and 2 each other's parent, 3 hangs under 2, 0 a root */
	static const int32_t two[] = {-1, 2, 1, 2};
	int64_t x = ptree_loop(two, 4);
	assert_true(x == 1 || x == 2);
	/* a long tail into a loop 5 -> 6 -> 7 -> 5; the tree beside it is kept */
	int32_t tail[64];
	for (int i = 0; i < 64; i++)
		tail[i] = i - 1;
	tail[5] = 7;
	x = ptree_loop(tail, 64);
	assert_true(x >= 5 && x <= 7);
	/* a parent out of range is no parent */
	static const int32_t out[] = {9, 0};
	assert_int_equal(ptree_loop(out, 2), -1);
}

/* Phases 1 (root) <- 2 <- 3 <- 4, and 10 <- 11 <- 12 <- 10 a loop with 13
 * hanging under 12; 20's parent 99 is not in the file. */
static sqlite3 *looped_db(void)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, store_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(
	    sqlite3_exec(
		db,
		"INSERT INTO phases(id, parent_id, kind, name_id, start_ns, dur_ns, self_ns,"
		" depth) VALUES (1, NULL, 1, 1, 0, 9, 0, 0), (2, 1, 2, 1, 0, 9, 0, 1),"
		" (3, 2, 8, 1, 0, 9, 0, 2), (4, 3, 8, 1, 0, 9, 0, 3),"
		" (10, 12, 2, 1, 0, 9, 0, 1), (11, 10, 8, 1, 0, 9, 0, 2),"
		" (12, 11, 8, 1, 0, 9, 0, 3), (13, 12, 8, 1, 0, 9, 0, 4),"
		" (20, 99, 8, 1, 0, 9, 0, 5)",
		NULL, NULL, NULL),
	    SQLITE_OK);
	return db;
}

static void test_up_in_file(void **state)
{
	(void)state;
	sqlite3 *db = looped_db();
	int64_t *chain = NULL;
	size_t n = 0;
	char *err = NULL;
	assert_int_equal(ptree_up(db, "t.db", 4, &chain, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_true(chain[0] == 4 && chain[1] == 3 && chain[2] == 2 && chain[3] == 1);
	free(chain);
	assert_int_equal(ptree_up(db, "t.db", 1, &chain, &n, &err), 0);
	assert_int_equal(n, 1);
	free(chain);
	/* no such phase: an empty chain; a parent missing: the chain ends */
	assert_int_equal(ptree_up(db, "t.db", 7, &chain, &n, &err), 0);
	assert_int_equal(n, 0);
	free(chain);
	assert_int_equal(ptree_up(db, "t.db", 20, &chain, &n, &err), 0);
	assert_int_equal(n, 1);
	free(chain);
	/* on the loop, and below it: stopped, with the file and the phase */
	static const int64_t looped[] = {10, 11, 12, 13};
	for (size_t i = 0; i < 4; i++) {
		chain = NULL;
		assert_int_equal(ptree_up(db, "t.db", looped[i], &chain, &n, &err), PTREE_LOOP);
		assert_null(chain);
		char want[64];
		snprintf(want, sizeof(want), "t.db: phase %lld's parents form a loop",
			 (long long)looped[i]);
		assert_string_equal(err, want);
		free(err);
	}
	sqlite3_close(db);
}

/* Brent's check stops a walk round a loop of any length within a few
 * times its length, and never stops a walk that does not loop. */
static void test_walk_bound(void **state)
{
	(void)state;
	for (int64_t len = 1; len <= 1000; len += 37) {
		struct ptree_walk w;
		ptree_walk_init(&w, 0);
		int64_t x = 0, steps = 0;
		do {
			x = (x + 1) % len;
			steps++;
		} while (!ptree_walk_loops(&w, x) && steps < 100 * len);
		assert_true(steps <= 3 * len);
	}
	struct ptree_walk w;
	ptree_walk_init(&w, 0);
	for (int64_t x = 1; x < 100000; x++)
		assert_int_equal(ptree_walk_loops(&w, x), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loop_in_memory),
	    cmocka_unit_test(test_up_in_file),
	    cmocka_unit_test(test_walk_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
