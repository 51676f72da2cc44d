/*
 * Rows put back in id order: a tree's rows put in post-order come out in id
 * order, each once and whole; an ancestor open longer than the window, or
 * rows holding more attrs bytes than allowed, are skipped and come out as
 * soon as they arrive; a held row can be changed before it goes; the
 * emitter's error stops the idorder for good; odd ids (far ahead, twice,
 * behind the window) go out once each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "model/ingest/idorder.h"

struct seen {
	int64_t id[64];
	int64_t child_count[64];
	char attrs[64][16];
	size_t n;
	int fail_at; /* 1-based emission that fails; 0: none */
};

static int record(void *arg, const struct phase_row *p)
{
	struct seen *s = arg;
	if (s->fail_at && (int)s->n + 1 == s->fail_at)
		return -7;
	s->id[s->n] = p->id;
	s->child_count[s->n] = p->child_count;
	snprintf(s->attrs[s->n], sizeof(s->attrs[0]), "%.*s", (int)p->attrs_len,
		 p->attrs ? p->attrs : "");
	s->n++;
	return 0;
}

/* Rows emitted after a larger id (skipped or late). */
static int out_of_order(const struct seen *s)
{
	int n = 0;
	for (size_t i = 1, max = 0; i < s->n; i++) {
		if (s->id[i] < s->id[max])
			n++;
		else
			max = i;
	}
	return n;
}

static int put(struct idorder *o, int64_t id)
{
	char a[16];
	snprintf(a, sizeof(a), "a%lld", (long long)id);
	struct phase_row p = {.id = id, .attrs = a, .attrs_len = strlen(a)};
	return idorder_put(o, &p);
}

/* 10 ( 11 ( 12 13 ) 14 ) 15: pre-order ids, put in post-order */
static const int64_t post[] = {12, 13, 11, 14, 10, 15};

static void test_idorder_post_order_comes_out_sorted(void **state)
{
	(void)state;
	struct seen s = {0};
	struct idorder *o = idorder_new(10, 8, 1 << 20, record, &s);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(put(o, post[i]), 0);
	assert_int_equal(s.n, 0); /* 10 is still open */
	assert_int_equal(put(o, 10), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(put(o, 15), 0);
	assert_int_equal(idorder_flush(o), 0);
	assert_int_equal(s.n, 6);
	for (size_t i = 0; i < s.n; i++) {
		char want[16];
		snprintf(want, sizeof(want), "a%lld", (long long)(10 + i));
		assert_int_equal(s.id[i], 10 + (int64_t)i);
		assert_string_equal(s.attrs[i], want);
	}
	assert_int_equal(out_of_order(&s), 0);
	idorder_free(o);
}

static void test_idorder_long_open_ancestor_is_skipped(void **state)
{
	(void)state;
	struct seen s = {0};
	/* 1 stays open over 2..20, a subtree larger than the window of 4 */
	struct idorder *o = idorder_new(1, 4, 1 << 20, record, &s);
	for (int64_t id = 2; id <= 20; id++)
		assert_int_equal(put(o, id), 0);
	assert_true(s.n >= 20 - 4 - 1);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.id[i], 2 + (int64_t)i);
	size_t before = s.n;
	assert_int_equal(put(o, 1), 0); /* late: out at once */
	assert_int_equal(s.n, before + 1);
	assert_int_equal(s.id[before], 1);
	assert_int_equal(idorder_flush(o), 0);
	assert_int_equal(s.n, 20);
	assert_int_equal(out_of_order(&s), 1);
	idorder_free(o);
}

static void test_idorder_bytes_bound_what_is_held(void **state)
{
	(void)state;
	struct seen s = {0};
	/* at most 4 bytes held, less than any attrs buffer: each row goes as
	 * it comes, 1 and 2 skipped */
	struct idorder *o = idorder_new(1, 64, 4, record, &s);
	for (int64_t id = 3; id <= 9; id++)
		assert_int_equal(put(o, id), 0);
	assert_int_equal(s.n, 7);
	assert_int_equal(s.id[0], 3);
	assert_int_equal(put(o, 2), 0);
	assert_int_equal(put(o, 1), 0);
	assert_int_equal(idorder_flush(o), 0);
	assert_int_equal(s.n, 9);
	int64_t sum = 0;
	for (size_t i = 0; i < s.n; i++)
		sum += s.id[i];
	assert_int_equal(sum, 45);
	idorder_free(o);
}

static void test_idorder_find_changes_a_held_row(void **state)
{
	(void)state;
	struct seen s = {0};
	struct idorder *o = idorder_new(1, 8, 1 << 20, record, &s);
	assert_int_equal(put(o, 3), 0);
	assert_int_equal(put(o, 2), 0);
	assert_null(idorder_find(o, 1)); /* not put yet */
	assert_null(idorder_find(o, 4));
	struct phase_row *r = idorder_find(o, 3);
	assert_non_null(r);
	r->child_count += 5;
	assert_int_equal(put(o, 1), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.child_count[2], 5);
	assert_null(idorder_find(o, 3)); /* gone */
	idorder_free(o);
}

static void test_idorder_emit_error_stops_it(void **state)
{
	(void)state;
	struct seen s = {.fail_at = 2};
	struct idorder *o = idorder_new(1, 8, 1 << 20, record, &s);
	assert_int_equal(put(o, 2), 0);
	assert_int_equal(put(o, 3), 0);
	assert_int_equal(put(o, 1), -7);
	assert_int_equal(s.n, 1);
	s.fail_at = 0; /* the error sticks even once the emitter would work */
	assert_int_equal(put(o, 4), -7);
	assert_int_equal(idorder_flush(o), -7);
	assert_int_equal(s.n, 1);
	idorder_free(o); /* frees what it still holds */
}

/* A row far past the window with nothing held moves the window at once; an
 * id put twice goes out as it comes; ids outside the window are not found. */
static void test_idorder_jumps_and_odd_ids(void **state)
{
	(void)state;
	struct seen s = {0};
	struct idorder *o = idorder_new(1, 4, 1 << 20, record, &s);
	assert_int_equal(put(o, 1000000000), 0); /* nothing held: no walk over the gap */
	assert_int_equal(s.n, 0);
	assert_non_null(idorder_find(o, 1000000000));
	assert_null(idorder_find(o, 1000000000 + 4));
	assert_null(idorder_find(o, 1));
	assert_int_equal(put(o, 1000000000), 0); /* twice: out at once */
	assert_int_equal(s.n, 1);
	assert_int_equal(put(o, 7), 0); /* behind the window: out at once */
	assert_int_equal(s.n, 2);
	assert_int_equal(idorder_flush(o), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.id[2], 1000000000);
	assert_int_equal(out_of_order(&s), 1); /* 7 came after 1000000000 */
	idorder_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_idorder_post_order_comes_out_sorted),
	    cmocka_unit_test(test_idorder_long_open_ancestor_is_skipped),
	    cmocka_unit_test(test_idorder_bytes_bound_what_is_held),
	    cmocka_unit_test(test_idorder_find_changes_a_held_row),
	    cmocka_unit_test(test_idorder_emit_error_stops_it),
	    cmocka_unit_test(test_idorder_jumps_and_odd_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
