/*
 * The device time beneath each phase (model/store/devunion.h), against a
 * plain computation: for each phase, the device work of its whole subtree
 * gathered, sorted and merged.  Forests of a few thousand phases with
 * random parents, ids with gaps and far apart, overlapping work, parents
 * that name no phase, and device work under device work, swept with the
 * default table and with tables of 8 and 64 phases, where phases are let go
 * and met again many times and their ids go to the temporary table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/devunion.h"
#include "model/store/store.h"

struct row {
	int64_t id, parent, start, dur, stored;
	int kind;
};

static int is_work(const struct row *r)
{
	return (r->kind == PHASE_KERNEL || r->kind == PHASE_MEMCPY || r->kind == PHASE_MEMSET) &&
	       r->dur > 0;
}

struct iv {
	int64_t s, e;
};

static int by_start(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;
	return (x->s > y->s) - (x->s < y->s);
}

/* The index of the row with id, or -1. */
static long find(const struct row *rows, long n, int64_t id)
{
	for (long i = 0; i < n; i++)
		if (rows[i].id == id)
			return i;
	return -1;
}

/* What device_ns must be after the sweep: the union of the device work in
 * the phase's subtree, its own included; what the row held where there is
 * none. */
static void expect(const struct row *rows, long n, int64_t *want)
{
	long *parent = malloc(n * sizeof(*parent));
	for (long i = 0; i < n; i++)
		parent[i] = rows[i].parent ? find(rows, n, rows[i].parent) : -1;
	struct iv *ivs = malloc(n * sizeof(*ivs));
	for (long p = 0; p < n; p++) {
		long k = 0;
		for (long w = 0; w < n; w++) {
			if (!is_work(&rows[w]))
				continue;
			long a = w;
			for (long hops = 0; a >= 0 && a != p && hops < n; hops++)
				a = parent[a];
			if (a == p)
				ivs[k++] = (struct iv){rows[w].start, rows[w].start + rows[w].dur};
		}
		if (!k) {
			want[p] = rows[p].stored;
			continue;
		}
		qsort(ivs, k, sizeof(*ivs), by_start);
		int64_t sum = 0, end = INT64_MIN;
		for (long i = 0; i < k; i++) {
			int64_t from = ivs[i].s > end ? ivs[i].s : end;
			if (ivs[i].e > from) {
				sum += ivs[i].e - from;
				end = ivs[i].e;
			}
		}
		want[p] = sum;
	}
	free(ivs);
	free(parent);
}

static sqlite3 *make_db(const struct row *rows, long n)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(
	    sqlite3_exec(db,
			 "CREATE TABLE phases(id INTEGER PRIMARY KEY, parent_id INTEGER,"
			 " kind INTEGER, start_ns INTEGER, dur_ns INTEGER,"
			 " device_ns INTEGER)",
			 NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_stmt *q;
	assert_int_equal(
	    sqlite3_prepare_v2(db, "INSERT INTO phases VALUES (?, ?, ?, ?, ?, ?)", -1, &q, NULL),
	    SQLITE_OK);
	for (long i = 0; i < n; i++) {
		sqlite3_bind_int64(q, 1, rows[i].id);
		sqlite3_bind_int64(q, 2, rows[i].parent);
		sqlite3_bind_int(q, 3, rows[i].kind);
		sqlite3_bind_int64(q, 4, rows[i].start);
		sqlite3_bind_int64(q, 5, rows[i].dur);
		sqlite3_bind_int64(q, 6, rows[i].stored);
		assert_int_equal(sqlite3_step(q), SQLITE_DONE);
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	return db;
}

static void check_db(sqlite3 *db, const struct row *rows, long n, const int64_t *want)
{
	sqlite3_stmt *q;
	assert_int_equal(
	    sqlite3_prepare_v2(db, "SELECT device_ns FROM phases WHERE id = ?", -1, &q, NULL),
	    SQLITE_OK);
	for (long i = 0; i < n; i++) {
		sqlite3_bind_int64(q, 1, rows[i].id);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		int64_t got = sqlite3_column_int64(q, 0);
		if (got != want[i])
			print_error("phase %lld (kind %d): %lld, want %lld\n",
				    (long long)rows[i].id, rows[i].kind, (long long)got,
				    (long long)want[i]);
		assert_int_equal(got, want[i]);
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	/* the temporary table is gone */
	assert_int_equal(sqlite3_exec(db, "SELECT * FROM temp.grademl_devunion", NULL, NULL, NULL),
			 SQLITE_ERROR);
}

/* A random forest: roots, operators under them and under each other,
 * launches under operators, work under launches; time moves on with the
 * ids, work runs late and overlaps, long-lived roots gather work with gaps. */
static long make_forest(struct row *rows, long n, unsigned seed)
{
	srand(seed);
	int64_t t = 1000, id = 7;
	for (long i = 0; i < n; i++) {
		struct row *r = &rows[i];
		id += 1 + rand() % 5;
		if (i == n / 2)
			id += (int64_t)1 << 40; /* far apart: another block, another cache slot */
		r->id = id;
		r->stored = rand() % 3 ? 0 : rand() % 1000;
		t += rand() % 50;
		int roll = rand() % 10;
		if (i < 3 || roll == 0) {
			r->kind = PHASE_STEP;
			r->parent = i < 3 ? 0 : rows[rand() % 3].id;
		} else if (roll < 4) {
			r->kind = PHASE_OPERATOR;
			r->parent = rows[i - 1 - rand() % (i < 20 ? i : 20)].id;
		} else if (roll < 6) {
			r->kind = PHASE_RUNTIME;
			r->parent = rows[i - 1 - rand() % (i < 10 ? i : 10)].id;
		} else {
			static const int kinds[] = {PHASE_KERNEL, PHASE_KERNEL, PHASE_MEMCPY,
						    PHASE_MEMSET};
			r->kind = kinds[rand() % 4];
			r->parent = rows[i - 1 - rand() % (i < 10 ? i : 10)].id;
		}
		if (rand() % 50 == 0)
			r->parent = 3; /* names no phase */
		r->start = t + rand() % 400;
		r->dur = rand() % 20 == 0 ? 0 : 1 + rand() % 300;
		if (rand() % 200 == 0)
			t += 100000; /* a gap: everything idle */
	}
	return n;
}

static void sweep_and_check(const struct row *rows, long n, size_t max_phases)
{
	int64_t *want = malloc(n * sizeof(*want));
	expect(rows, n, want);
	sqlite3 *db = make_db(rows, n);
	char *err = NULL;
	assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
	int rc =
	    max_phases ? devunion_write_within(db, max_phases, &err) : devunion_write(db, &err);
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	check_db(db, rows, n, want);
	/* a second sweep over its own result writes nothing new */
	assert_int_equal(devunion_write_within(db, max_phases ? max_phases : 8, &err), 0);
	check_db(db, rows, n, want);
	sqlite3_close(db);
	free(want);
}

static void test_forests(void **state)
{
	(void)state;
	enum { N = 3000 };
	struct row *rows = calloc(N, sizeof(*rows));
	for (unsigned seed = 1; seed <= 4; seed++) {
		make_forest(rows, N, seed);
		sweep_and_check(rows, N, 0);
		sweep_and_check(rows, N, 64);
		sweep_and_check(rows, N, 8);
	}
	free(rows);
}

/* Two kernels on two streams under one operator overlap: the operator's
 * device time is their union, 50 ns, not their sum, 70; a root with a gap
 * between its two operators' work, swept with the smallest table so the
 * root is let go in the gap and met again, adds both. */
static void test_overlap_and_gap(void **state)
{
	(void)state;
	struct row rows[] = {
	    {1, 0, 0, 5000, 0, PHASE_STEP},	  {2, 1, 900, 200, 0, PHASE_OPERATOR},
	    {3, 2, 1000, 30, 30, PHASE_KERNEL},	  {4, 2, 1010, 40, 40, PHASE_KERNEL},
	    {5, 1, 3000, 100, 0, PHASE_OPERATOR}, {6, 5, 4000, 25, 25, PHASE_MEMCPY},
	};
	long n = sizeof(rows) / sizeof(rows[0]);
	/* Between the two, launches of their own with a kernel each fill the
	 * table, so the root is let go in the gap. */
	struct row many[64];
	memcpy(many, rows, sizeof(rows));
	for (long i = n; i + 1 < 64; i += 2) {
		many[i] = (struct row){100 + i, 0, 2000 + i, 1, 0, PHASE_RUNTIME};
		many[i + 1] = (struct row){100 + i + 1, 100 + i, 2000 + i, 1, 1, PHASE_KERNEL};
	}
	int64_t want[64];
	expect(many, 64, want);
	assert_int_equal(want[0], 50 + 25);
	assert_int_equal(want[1], 50);
	assert_int_equal(want[4], 25);
	sweep_and_check(many, 64, 8);
	sweep_and_check(many, 64, 0);
}

/* A parent cycle in a damaged file ends the walk; the sweep returns. */
static void test_cycle(void **state)
{
	(void)state;
	struct row rows[] = {
	    {1, 2, 0, 100, 0, PHASE_OPERATOR},
	    {2, 1, 0, 100, 0, PHASE_OPERATOR},
	    {3, 1, 10, 20, 0, PHASE_KERNEL},
	    {4, 4, 50, 20, 0, PHASE_KERNEL},
	};
	sqlite3 *db = make_db(rows, 4);
	char *err = NULL;
	assert_int_equal(devunion_write_within(db, 8, &err), 0);
	sqlite3_stmt *q;
	sqlite3_prepare_v2(db, "SELECT device_ns FROM phases ORDER BY id", -1, &q, NULL);
	int64_t want[] = {20, 20, 20, 20};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int64(q, 0), want[i]);
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_overlap_and_gap),
	    cmocka_unit_test(test_forests),
	    cmocka_unit_test(test_cycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
