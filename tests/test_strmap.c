/*
 * The string map: keys come back with their values, and families of keys
 * that differ in a few bytes (numbered ids, ProfilerStep#N, short names)
 * spread over the table instead of piling onto a few slots, which would make
 * every lookup a long probe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "model/util/strmap.h"

/* The mean distance of an entry from the slot its hash picks. */
static double mean_displacement(const struct strmap *m)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key)
			sum += (i - (m->slot[i].hash & (m->cap - 1))) & (m->cap - 1);
	return (double)sum / (double)m->n;
}

static void check_family(const char *fmt, int count)
{
	struct strmap m = STRMAP_INIT;
	char k[64];
	for (int i = 0; i < count; i++) {
		snprintf(k, sizeof(k), fmt, i);
		int created = 0;
		strmap_put(&m, k, strlen(k), i, &created);
		assert_true(created);
	}
	for (int i = 0; i < count; i++) {
		snprintf(k, sizeof(k), fmt, i);
		struct strmap_ent *e = strmap_get(&m, k, strlen(k));
		assert_non_null(e);
		assert_int_equal(e->value, i);
	}
	double d = mean_displacement(&m);
	if (d >= 2.0)
		fail_msg("keys like '%s' lie %.1f slots from home on average", fmt, d);
	strmap_clear(&m);
}

static void test_strmap_numbered_ids_spread(void **state)
{
	(void)state;
	check_family("%07d", 20000);  /* the last word 7 bytes long */
	check_family("%015d", 20000); /* 8 + 7 */
	check_family("%06d", 20000);
	check_family("ProfilerStep#%d", 5000);
	check_family("tid %d", 5000);
}

static void test_strmap_short_names_spread(void **state)
{
	(void)state;
	struct strmap m = STRMAP_INIT;
	char k[16];
	for (int a = '!'; a <= '~'; a++)
		for (int b = '!'; b <= '~'; b++) {
			snprintf(k, sizeof(k), "name_%c%c", a, b);
			strmap_put(&m, k, strlen(k), a * 256 + b, NULL);
		}
	assert_int_equal(m.n, 94 * 94);
	struct strmap_ent *e = strmap_get(&m, "name_ab", 7);
	assert_non_null(e);
	assert_int_equal(e->value, 'a' * 256 + 'b');
	assert_null(strmap_get(&m, "name_a", 6));
	assert_true(mean_displacement(&m) < 2.0);
	strmap_clear(&m);
}

static void test_strmap_empty_and_embedded_nul(void **state)
{
	(void)state;
	struct strmap m = STRMAP_INIT;
	assert_null(strmap_get(&m, "", 0));
	strmap_put(&m, "", 0, 1, NULL);
	strmap_put(&m, "a\0b", 3, 2, NULL);
	strmap_put(&m, "a", 1, 3, NULL);
	assert_int_equal(strmap_get(&m, "", 0)->value, 1);
	assert_int_equal(strmap_get(&m, "a\0b", 3)->value, 2);
	assert_int_equal(strmap_get(&m, "a", 1)->value, 3);
	strmap_clear(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strmap_numbered_ids_spread),
	    cmocka_unit_test(test_strmap_short_names_spread),
	    cmocka_unit_test(test_strmap_empty_and_embedded_nul),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
