/*
 * The bounded correlation-id map: values come back as put, whether the id
 * sits in memory or, past the memory bound, on disk; updates reach either
 * place; ids of every magnitude work; deltas for ids past the bound are
 * folded in by cmap_settle; and a map given room enough never touches the
 * disk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/ingest/cmap.h"

static uint64_t value_of(int64_t id)
{
	return (uint64_t)id * 0x9e3779b97f4a7c15ULL | 1ULL << 63;
}

static void test_cmap_spills_past_its_bound(void **state)
{
	(void)state;
	struct cmap *m = cmap_new(16 << 10, NULL); /* 1024 slots: 768 ids in memory */
	const int n = 5000;
	for (int64_t id = 1; id <= n; id++)
		assert_int_equal(cmap_put(m, id * 7, value_of(id)), 0);
	assert_true(cmap_on_disk(m) >= (uint64_t)(n - 768));
	assert_true(cmap_on_disk(m) < (uint64_t)n);
	for (int64_t id = n; id >= 1; id--) {
		uint64_t v = 0;
		assert_int_equal(cmap_get(m, id * 7, &v), 1);
		assert_int_equal(v, value_of(id));
	}
	uint64_t v = 0;
	assert_int_equal(cmap_get(m, 3, &v), 0);
	assert_int_equal(cmap_get(m, 7 * (n + 1), &v), 0);
	/* updates, in memory (the first ids) and on disk (the last) */
	uint64_t disk = cmap_on_disk(m);
	assert_int_equal(cmap_put(m, 7, 11), 0);
	assert_int_equal(cmap_put(m, 7 * n, 12), 0);
	assert_int_equal(cmap_on_disk(m), disk);
	assert_int_equal(cmap_get(m, 7, &v), 1);
	assert_int_equal(v, 11);
	assert_int_equal(cmap_get(m, 7 * n, &v), 1);
	assert_int_equal(v, 12);
	cmap_free(m);
}

static void test_cmap_ids_of_any_size(void **state)
{
	(void)state;
	const int64_t ids[] = {INT64_MAX, INT64_MIN, -1, 1, (int64_t)1 << 40};
	const size_t nids = sizeof(ids) / sizeof(ids[0]);
	for (int on_disk = 0; on_disk < 2; on_disk++) {
		struct cmap *m = cmap_new(0, NULL); /* the smallest table */
		if (on_disk)			    /* fill memory first, so these go to disk */
			for (int64_t id = 100; id < 2100; id++)
				assert_int_equal(cmap_put(m, id, 1), 0);
		uint64_t before = cmap_on_disk(m);
		for (size_t i = 0; i < nids; i++)
			assert_int_equal(cmap_put(m, ids[i], (uint64_t)i << 60 | i), 0);
		for (size_t i = 0; i < nids; i++) {
			uint64_t v = 99;
			assert_int_equal(cmap_get(m, ids[i], &v), 1);
			assert_int_equal(v, (uint64_t)i << 60 | i);
		}
		assert_int_equal(cmap_on_disk(m) - before, on_disk ? nids : 0);
		cmap_free(m);
	}
}

static uint64_t sum(uint64_t v, uint64_t delta)
{
	return v + delta;
}

/* Deltas for ids with no room in memory wait for cmap_settle, through
 * sorted runs when there are many, and land combined with what the disk
 * table held. */
static void test_cmap_add_defers_past_its_bound(void **state)
{
	(void)state;
	struct cmap *m = cmap_new(16 << 10, sum); /* 1024 slots: 768 ids in memory */
	const int64_t n = 3000;
	assert_int_equal(cmap_put(m, n + 1, 1000), 0); /* memory has room */
	for (int64_t id = 1; id <= 767; id++)
		assert_int_equal(cmap_put(m, id + 100000, 0), 0); /* fill memory */
	assert_int_equal(cmap_put(m, 7, 500), 0);		  /* on disk: memory is full */
	/* 100 rounds over 3000 ids: 300 k deltas, more than one buffer */
	for (int round = 0; round < 100; round++)
		for (int64_t id = 1; id <= n + 1; id++)
			assert_int_equal(cmap_add(m, id, (uint64_t)id), 0);
	uint64_t v = 0;
	assert_int_equal(cmap_get(m, n + 1, &v), 1); /* in memory: at once */
	assert_int_equal(v, 1000 + 100 * (uint64_t)(n + 1));
	assert_int_equal(cmap_get(m, 5, &v), 0); /* deferred: not yet */
	assert_int_equal(cmap_settle(m), 0);
	for (int64_t id = 1; id <= n; id++) {
		assert_int_equal(cmap_get(m, id, &v), 1);
		assert_int_equal(v, 100 * (uint64_t)id + (id == 7 ? 500 : 0));
	}
	assert_int_equal(cmap_on_disk(m), (uint64_t)n);
	assert_int_equal(cmap_settle(m), 0); /* nothing left: no change */
	assert_int_equal(cmap_get(m, 3, &v), 1);
	assert_int_equal(v, 300);
	cmap_free(m);
}

static void test_cmap_with_room_stays_in_memory(void **state)
{
	(void)state;
	struct cmap *m = cmap_new(16 << 20, NULL);
	for (int64_t id = 1; id <= 100000; id++)
		assert_int_equal(cmap_put(m, id, (uint64_t)id), 0);
	assert_int_equal(cmap_on_disk(m), 0);
	uint64_t v;
	assert_int_equal(cmap_get(m, 54321, &v), 1);
	assert_int_equal(v, 54321);
	cmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cmap_spills_past_its_bound),
	    cmocka_unit_test(test_cmap_ids_of_any_size),
	    cmocka_unit_test(test_cmap_add_defers_past_its_bound),
	    cmocka_unit_test(test_cmap_with_room_stays_in_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
