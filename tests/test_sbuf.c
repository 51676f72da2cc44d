/*
 * The byte buffer's invariant (model/util/sbuf.h): buf is a C string from
 * the start, whether the sbuf was set up by sbuf_init, by SBUF_INIT or by
 * zeroing the struct that holds it and resetting it; and appending nothing
 * from nowhere (an empty column's text, a NULL pointer with length 0) is
 * allowed.  Under UBSan (make SANITIZE=1) the last is what it checks: memcpy
 * from NULL is undefined even for 0 bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "model/util/sbuf.h"

static void test_sbuf_init_is_a_string(void **state)
{
	(void)state;
	struct sbuf a = SBUF_INIT, b;
	sbuf_init(&b);
	assert_non_null(a.buf);
	assert_string_equal(a.buf, "");
	assert_string_equal(b.buf, "");
	sbuf_release(&a);
	sbuf_release(&b);
	assert_string_equal(a.buf, "");
}

static void test_sbuf_reset_of_a_zeroed_one(void **state)
{
	(void)state;
	struct {
		int n;
		struct sbuf label;
	} holder = {0};
	sbuf_reset(&holder.label);
	assert_non_null(holder.label.buf);
	assert_string_equal(holder.label.buf, "");
	sbuf_adds(&holder.label, "ab");
	sbuf_reset(&holder.label);
	assert_string_equal(holder.label.buf, "");
	sbuf_release(&holder.label);
}

static void test_sbuf_add_nothing_from_null(void **state)
{
	(void)state;
	struct sbuf s = SBUF_INIT;
	sbuf_add(&s, NULL, 0);
	assert_int_equal(s.len, 0);
	assert_string_equal(s.buf, "");
	sbuf_adds(&s, "x");
	sbuf_add(&s, NULL, 0);
	assert_string_equal(s.buf, "x");
	sbuf_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbuf_init_is_a_string),
	    cmocka_unit_test(test_sbuf_reset_of_a_zeroed_one),
	    cmocka_unit_test(test_sbuf_add_nothing_from_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
