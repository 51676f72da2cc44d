/*
 * Unit tests for model/util/text.h: exact decimal time parsing, integer and id
 * parsing, durations with units, and UTF-8 validation and repair.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

/* text_parse_units on a C string; returns its status, *out untouched on failure */
static int units(const char *s, int64_t unit, int64_t *out)
{
	return text_parse_units(s, strlen(s), unit, out);
}

static void test_units_exact_microseconds(void **state)
{
	(void)state;
	int64_t v = 0;
	assert_int_equal(units("1694128201435418", 1000, &v), 0);
	assert_true(v == INT64_C(1694128201435418000));
	assert_int_equal(units("4203669604595.407", 1000, &v), 0);
	assert_true(v == INT64_C(4203669604595407));
	/* a double would lose the last digit of this one */
	assert_int_equal(units("1694128201435418.123", 1000, &v), 0);
	assert_true(v == INT64_C(1694128201435418123));
	assert_int_equal(units("0", 1000, &v), 0);
	assert_true(v == 0);
	assert_int_equal(units(".5", 1000, &v), 0);
	assert_true(v == 500);
	assert_int_equal(units("5.", 1000, &v), 0);
	assert_true(v == 5000);
	assert_int_equal(units("+2.25", 1000, &v), 0);
	assert_true(v == 2250);
}

static void test_units_rounding(void **state)
{
	(void)state;
	int64_t v = -1;
	/* 0.0005 us = 0.5 ns: rounds half up */
	assert_int_equal(units("0.0005", 1000, &v), 0);
	assert_true(v == 1);
	assert_int_equal(units("0.0004999", 1000, &v), 0);
	assert_true(v == 0);
	assert_int_equal(units("1.9996", 1000, &v), 0);
	assert_true(v == 2000);
	assert_int_equal(units("1.9994", 1000, &v), 0);
	assert_true(v == 1999);
	/* with unit 1 the first fractional digit decides */
	assert_int_equal(units("7.5", 1, &v), 0);
	assert_true(v == 8);
	assert_int_equal(units("7.49", 1, &v), 0);
	assert_true(v == 7);
}

static void test_units_negative_and_exponent(void **state)
{
	(void)state;
	int64_t v = 0;
	assert_int_equal(units("-5", 1000, &v), 0);
	assert_true(v == -5000);
	assert_int_equal(units("-0.0005", 1000, &v), 0);
	assert_true(v == -1);
	assert_int_equal(units("-12.345", 1000, &v), 0);
	assert_true(v == -12345);
	assert_int_equal(units("1.5e3", 1000, &v), 0);
	assert_true(v == 1500000);
	assert_int_equal(units("2E-3", 1000, &v), 0);
	assert_true(v == 2);
	assert_int_equal(units("-1e2", 1, &v), 0);
	assert_true(v == -100);
	assert_int_equal(units("1e+2", 1000000, &v), 0);
	assert_true(v == 100000000);
}

static void test_units_junk(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",	   " ",	  " 5",	 "5 ",	"\t5", "5\n",  "abc",  "5x",	"1.2.3",
	    "-",   "+",	  ".",	 "-.",	"1e",  "1e+",  "e3",   "1e3 ",	"0x10",
	    "1,5", "nan", "inf", "--1", "+-1", "1ee2", "5 us", "1_000",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v = 4242;
		if (units(bad[i], 1000, &v) != -1)
			fail_msg("text_parse_units accepted \"%s\" as %lld", bad[i], (long long)v);
		assert_true(v == 4242);
	}
	/* explicit length: a NUL byte inside the text is junk */
	int64_t v = 4242;
	assert_int_equal(text_parse_units("12\0"
					  "3",
					  4, 1000, &v),
			 -1);
	/* and the length bounds the text: "123" read as "12" */
	assert_int_equal(text_parse_units("123", 2, 1000, &v), 0);
	assert_true(v == 12000);
}

static void test_units_overflow(void **state)
{
	(void)state;
	int64_t v = 0;
	/* INT64_MAX ns is 9223372036854775.807 us */
	assert_int_equal(units("9223372036854775.807", 1000, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(units("9223372036854775.808", 1000, &v), -1);
	assert_int_equal(units("9223372036854776", 1000, &v), -1);
	assert_int_equal(units("99999999999999999999999", 1, &v), -1);
	assert_int_equal(units("9223372036854775807", 1, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(units("9223372036854775808", 1, &v), -1);
	assert_int_equal(units("-9223372036854775.809", 1000, &v), -1);
	assert_int_equal(units("1e300", 1000, &v), -1);
	assert_int_equal(units("1e400", 1, &v), -1);
	assert_int_equal(units("-9.3e18", 1, &v), -1);
	/* rounding up the last nanosecond can overflow too */
	assert_int_equal(units("9223372036854775807.5", 1, &v), -1);
}

static void test_units_int64_min(void **state)
{
	(void)state;
	/* INT64_MIN does not overflow int64, so by the header it parses */
	int64_t v = 0;
	assert_int_equal(units("-9223372036854775808", 1, &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(units("-9223372036854775.808", 1000, &v), 0);
	assert_true(v == INT64_MIN);
}

static int int64_of(const char *s, int64_t *out)
{
	return text_parse_int64(s, strlen(s), out);
}

static void test_parse_int64(void **state)
{
	(void)state;
	int64_t v = 0;
	assert_int_equal(int64_of("0", &v), 0);
	assert_true(v == 0);
	assert_int_equal(int64_of("-42", &v), 0);
	assert_true(v == -42);
	assert_int_equal(int64_of("+42", &v), 0);
	assert_true(v == 42);
	assert_int_equal(int64_of("9223372036854775807", &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(int64_of("-9223372036854775808", &v), 0);
	assert_true(v == INT64_MIN);
	v = 7;
	static const char *const bad[] = {"",
					  "-",
					  "+",
					  " 1",
					  "1 ",
					  "1.0",
					  "1e3",
					  "0x1",
					  "12a",
					  "--1",
					  "9223372036854775808",
					  "-9223372036854775809",
					  "18446744073709551616",
					  "99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (int64_of(bad[i], &v) != -1)
			fail_msg("text_parse_int64 accepted \"%s\" as %lld", bad[i], (long long)v);
	assert_true(v == 7);
	assert_int_equal(text_parse_int64("12\0"
					  "3",
					  4, &v),
			 -1);
	assert_int_equal(text_parse_int64("123", 2, &v), 0);
	assert_true(v == 12);
}

static int id_of(const char *s, uint64_t *out)
{
	return text_parse_id64(s, strlen(s), out);
}

static void test_parse_id64(void **state)
{
	(void)state;
	uint64_t v = 0;
	assert_int_equal(id_of("0x1a", &v), 0);
	assert_true(v == 26);
	assert_int_equal(id_of("0X1A", &v), 0);
	assert_true(v == 26);
	assert_int_equal(id_of("0xDeadBeef", &v), 0);
	assert_true(v == 0xdeadbeefULL);
	assert_int_equal(id_of("1234", &v), 0);
	assert_true(v == 1234);
	assert_int_equal(id_of("0", &v), 0);
	assert_true(v == 0);
	assert_int_equal(id_of("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(id_of("0xffffffffffffffff", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 99;
	static const char *const bad[] = {"",
					  "0x",
					  "0x1g",
					  "1a",
					  "-1",
					  "+1",
					  " 1",
					  "1 ",
					  "x1",
					  "0xx1",
					  "1.5",
					  "18446744073709551616",
					  "0x10000000000000000"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (id_of(bad[i], &v) != -1)
			fail_msg("text_parse_id64 accepted \"%s\" as %llu", bad[i],
				 (unsigned long long)v);
	assert_true(v == 99);
}

static void test_parse_duration(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t ns;
	} ok[] = {
	    {"1.5s", INT64_C(1500000000)},
	    {"-200ms", INT64_C(-200000000)},
	    {"3min", INT64_C(180000000000)},
	    {"7", 7},
	    {"7ns", 7},
	    {"2.5us", 2500},
	    {"2h", INT64_C(7200000000000)},
	    {"0.5min", INT64_C(30000000000)},
	    {"1e3ms", INT64_C(1000000000)},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t v = 0;
		if (text_parse_duration(ok[i].s, &v) != 0)
			fail_msg("text_parse_duration refused \"%s\"", ok[i].s);
		if (v != ok[i].ns)
			fail_msg("text_parse_duration(\"%s\") = %lld, want %lld", ok[i].s,
				 (long long)v, (long long)ok[i].ns);
	}
	static const char *const bad[] = {"",	 "s",	 "ms",		 "min", "abc",
					  "5 s", "5sec", "5m",		 "5xs", "1.5.s",
					  " 1s", "1s ",	 "10000000000h", "s5"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v = 5;
		if (text_parse_duration(bad[i], &v) != -1)
			fail_msg("text_parse_duration accepted \"%s\" as %lld", bad[i],
				 (long long)v);
	}
}

static void test_parse_size(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t bytes;
	} ok[] = {
	    {"0", 0},
	    {"512", 512},
	    {"64MiB", INT64_C(67108864)},
	    {"1GiB", INT64_C(1073741824)},
	    {"1.5gib", INT64_C(1610612736)},
	    {"2GB", INT64_C(2000000000)},
	    {"10kb", 10000},
	    {"3KiB", 3072},
	    {"1TiB", INT64_C(1099511627776)},
	    {"100B", 100},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t v = -1;
		if (text_parse_size(ok[i].s, &v) != 0 || v != ok[i].bytes)
			fail_msg("text_parse_size(\"%s\") = %lld, want %lld", ok[i].s, (long long)v,
				 (long long)ok[i].bytes);
	}
	static const char *const bad[] = {"", "MiB", "lots", "1 GiB", "1PiB", "99999999999GiB"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v;
		if (text_parse_size(bad[i], &v) == 0)
			fail_msg("text_parse_size accepted \"%s\"", bad[i]);
	}
}

static void test_utf8_valid(void **state)
{
	(void)state;
	static const char good[] = "ascii \xc2\xb5s \xe2\x96\x81\xe2\x96\x82\xe2\x96\x88 "
				   "\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \t\n";
	assert_int_equal(text_utf8_valid(good, strlen(good)), 1);
	assert_int_equal(text_utf8_valid("", 0), 1);
	static const struct {
		const char *s;
		size_t n;
	} bad[] = {
	    {"\xc0\xaf", 2},	     /* overlong '/' */
	    {"\xe0\x80\xaf", 3},     /* overlong, three bytes */
	    {"\xed\xa0\x80", 3},     /* UTF-16 surrogate */
	    {"\xf4\x90\x80\x80", 4}, /* beyond U+10FFFF */
	    {"\xf5\x80\x80\x80", 4},
	    {"\xe2\x96", 2}, /* truncated */
	    {"a\xe2", 2},    /* truncated at the end */
	    {"\x80", 1},     /* lone continuation */
	    {"\xff", 1},
	    {"a\0b", 3}, /* NUL inside */
	    {"\xc2\xb5\xc2", 3},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (text_utf8_valid(bad[i].s, bad[i].n))
			fail_msg("text_utf8_valid accepted case %zu", i);
	/* the length bounds the check: the truncated tail is not read */
	assert_int_equal(text_utf8_valid("ab\xe2", 2), 1);
}

/* Repairs s[0..n), checks the count, the bytes and that the result is valid. */
static void check_repair(const char *s, size_t n, const char *want, size_t want_bad)
{
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	sbuf_adds(&out, ">");
	size_t bad = text_utf8_repair(&out, s, n);
	if (bad != want_bad)
		fail_msg("text_utf8_repair replaced %zu, want %zu", bad, want_bad);
	assert_int_equal(out.len, strlen(want) + 1);
	assert_memory_equal(out.buf + 1, want, strlen(want));
	assert_int_equal(text_utf8_valid(out.buf, out.len), 1);
	sbuf_release(&out);
}

#define FFFD "\xef\xbf\xbd"

static void test_utf8_repair(void **state)
{
	(void)state;
	check_repair("\xc2\xb5s \xe2\x96\x81\xe2\x96\x88", 10, "\xc2\xb5s \xe2\x96\x81\xe2\x96\x88",
		     0);
	check_repair("", 0, "", 0);
	/* 0xc0 can never start a sequence: both bytes are replaced */
	check_repair("a\xc0\xaf"
		     "b",
		     4, "a" FFFD FFFD "b", 2);
	check_repair("\xed\xa0\x80", 3, FFFD FFFD FFFD, 3);
	/* each byte of a truncated sequence is replaced on its own */
	check_repair("x\xe2\x96", 3, "x" FFFD FFFD, 2);
	check_repair("\xe2\x96"
		     "z",
		     3, FFFD FFFD "z", 2);
	check_repair("a\0b", 3, "a" FFFD "b", 1);
	check_repair("\0\0", 2, FFFD FFFD, 2);
	check_repair("\xf0\x9f\x98\x80\xff", 5, "\xf0\x9f\x98\x80" FFFD, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_units_exact_microseconds),
	    cmocka_unit_test(test_units_rounding),
	    cmocka_unit_test(test_units_negative_and_exponent),
	    cmocka_unit_test(test_units_junk),
	    cmocka_unit_test(test_units_overflow),
	    cmocka_unit_test(test_units_int64_min),
	    cmocka_unit_test(test_parse_int64),
	    cmocka_unit_test(test_parse_id64),
	    cmocka_unit_test(test_parse_duration),
	    cmocka_unit_test(test_parse_size),
	    cmocka_unit_test(test_utf8_valid),
	    cmocka_unit_test(test_utf8_repair),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
