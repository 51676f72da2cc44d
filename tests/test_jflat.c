/*
 * Unit tests for importers/jflat.h: the nodes of what jflat_parse takes
 * are those jflat_from_json makes of jansson's tree of the same text (so a
 * reader cannot tell which path a sample took), and what it cannot read
 * exactly as jansson does it declines, leaving the text as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importers/jflat.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

/* Both trees of text are the same, node by node (numbers bit for bit). */
static void check_same_as_jansson(const char *text)
{
	struct jflat a = JFLAT_INIT, b = JFLAT_INIT;
	char *buf = xstrdup(text);
	assert_int_equal(jflat_parse(&a, buf, strlen(buf)), 0);
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);
	assert_non_null(v);
	jflat_from_json(&b, v);
	assert_int_equal(a.len, b.len);
	for (size_t i = 0; i < a.len; i++) {
		const struct jflat_node *x = &a.n[i], *y = &b.n[i];
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->next, y->next);
		assert_int_equal(!x->key, !y->key);
		if (x->key)
			assert_string_equal(x->key, y->key);
		if (x->type == JF_STRING) {
			assert_string_equal(x->str, y->str);
			assert_int_equal(x->str_len, y->str_len);
		}
		assert_true(x->integer == y->integer);
		assert_memory_equal(&x->num, &y->num, sizeof(double));
	}
	json_decref(v);
	free(buf);
	jflat_release(&a);
	jflat_release(&b);
}

/* jflat_parse declines text and leaves it as it was. */
static void check_declined(const char *text)
{
	struct jflat f = JFLAT_INIT;
	char *buf = xstrdup(text);
	if (jflat_parse(&f, buf, strlen(buf)) != 1)
		fail_msg("took %s", text);
	assert_string_equal(buf, text);
	free(buf);
	jflat_release(&f);
}

static void test_sample_shape(void **state)
{
	(void)state;
	const char *text =
	    "{\"timestamp\": {\"date\": \"2026-01-01\", \"time\": \"00:00:01\", \"utc\": 1,"
	    " \"interval\": 1}, \"cpu-load\": [{\"cpu\": \"all\", \"usr\": 0.99, \"idle\": 98.51},"
	    " {\"cpu\": \"0\", \"usr\": 1.5e1, \"idle\": -0.0}], \"memory\": {\"memused\": 170148,"
	    " \"ok\": true, \"no\": false, \"none\": null, \"e\": {}, \"a\": []}}";
	struct jflat f = JFLAT_INIT;
	char *buf = xstrdup(text);
	assert_int_equal(jflat_parse(&f, buf, strlen(buf)), 0);
	assert_int_equal(f.n[0].type, JF_NONE);
	assert_int_equal(f.n[JFLAT_ROOT].type, JF_OBJECT);
	assert_int_equal(f.n[JFLAT_ROOT].count, 3);
	uint32_t ts = jflat_get(&f, JFLAT_ROOT, "timestamp");
	assert_int_equal(ts, 2);
	assert_string_equal(f.n[jflat_get(&f, ts, "time")].str, "00:00:01");
	assert_int_equal(f.n[jflat_get(&f, ts, "utc")].type, JF_INTEGER);
	assert_true(f.n[jflat_get(&f, ts, "utc")].integer == 1);
	assert_int_equal(jflat_get(&f, ts, "tz"), 0);
	assert_int_equal(jflat_get(&f, 0, "tz"), 0); /* no value has no members */
	uint32_t cpus = jflat_get(&f, JFLAT_ROOT, "cpu-load");
	assert_int_equal(f.n[cpus].type, JF_ARRAY);
	uint32_t c0 = jflat_child(&f, cpus), c1 = f.n[c0].next;
	assert_null(f.n[c0].key);
	assert_true(f.n[jflat_get(&f, c0, "idle")].num == 98.51);
	assert_true(f.n[jflat_get(&f, c1, "usr")].num == 15);
	assert_int_equal(f.n[jflat_get(&f, c1, "usr")].type, JF_REAL);
	assert_int_equal(f.n[c1].next, 0);
	uint32_t mem = jflat_get(&f, JFLAT_ROOT, "memory");
	assert_int_equal(f.n[mem].next, 0);
	assert_int_equal(f.n[jflat_get(&f, mem, "none")].type, JF_NULL);
	assert_int_equal(f.n[jflat_get(&f, mem, "e")].count, 0);
	assert_int_equal(jflat_child(&f, jflat_get(&f, mem, "a")), 0);
	free(buf);
	jflat_release(&f);
	check_same_as_jansson(text);
}

static void test_numbers_as_jansson(void **state)
{
	(void)state;
	static const char *const nums[] = {"0",
					   "-0",
					   "-0.0",
					   "0.0",
					   "98.51",
					   "0.99",
					   "23560820",
					   "-17",
					   "1e5",
					   "1E+5",
					   "1.5e-3",
					   "2.5E-21",
					   "7e22",
					   "123456789012.25",
					   "0.1",
					   "0.3",
					   "100.00",
					   "9007199254740991",
					   "900719925474099.1",
					   "999999999999999999",
					   "-999999999999999999",
					   "4.35",
					   "0.000001"};
	for (size_t i = 0; i < sizeof(nums) / sizeof(*nums); i++) {
		char text[128];
		snprintf(text, sizeof(text), "{\"v\": %s, \"w\": [%s]}", nums[i], nums[i]);
		check_same_as_jansson(text);
	}
	/* sadf's %.2f and friends, many of them */
	srand(7);
	for (int i = 0; i < 20000; i++) {
		char text[128];
		int k = rand();
		switch (i % 4) {
		case 0:
			snprintf(text, sizeof(text), "[%d.%02d]", k % 100000, rand() % 100);
			break;
		case 1:
			snprintf(text, sizeof(text), "[-%d.%06d]", k % 1000, rand() % 1000000);
			break;
		case 2:
			snprintf(text, sizeof(text), "[%de%d]", k % 100000, rand() % 45 - 22);
			break;
		default:
			snprintf(text, sizeof(text), "[%.17g]", (double)k / (rand() % 999 + 1));
			break;
		}
		struct jflat f = JFLAT_INIT;
		char *buf = xstrdup(text);
		int declined = jflat_parse(&f, buf, strlen(buf));
		free(buf);
		jflat_release(&f);
		if (!declined)
			check_same_as_jansson(text);
	}
}

static void test_declines(void **state)
{
	(void)state;
	static const char *const texts[] = {
	    "{\"a\": \"x\\ny\"}",	      /* an escape */
	    "{\"a\\\"\": 1}",		      /* one in a key */
	    "{\"a\": \"caf\xc3\xa9\"}",	      /* non-ASCII: jansson checks UTF-8 */
	    "{\"a\": \"tab\there\"}",	      /* a control character */
	    "{\"a\": 1, \"b\": 2, \"a\": 3}", /* a repeated key */
	    "{\"a\": 01}",
	    "{\"a\": 1.}",
	    "{\"a\": .5}",
	    "{\"a\": -}",
	    "{\"a\": 1e}",
	    "{\"a\": 1e23}",		       /* beyond 10^22 */
	    "{\"a\": 1234567890123456789}",    /* 19 digits: strtoll's to judge */
	    "{\"a\": 9007199254740993.0}",     /* beyond 2^53 */
	    "{\"a\": 0.12345678901234567890}", /* too many digits */
	    "{\"a\": 1e00001}",
	    "{\"a\": truex}",
	    "{\"a\": nul}",
	    "{\"a\": 1x}",
	    "{\"a\": 1,}",
	    "{\"a\" 1}",
	    "{a: 1}",
	    "{\"a\": [1 2]}",
	    "{\"a\": [1,]}",
	    "{\"a\": 1}}",
	    "{\"a\": 1} x",
	    "{\"a\": 1",
	    "{\"a\": \"x",
	    "{\"a\": [}",
	    "1",
	    "\"a\"",
	    "",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++)
		check_declined(texts[i]);

	/* too deep, too many members */
	struct sbuf sb = SBUF_INIT;
	for (int i = 0; i < 70; i++)
		sbuf_adds(&sb, "[");
	for (int i = 0; i < 70; i++)
		sbuf_adds(&sb, "]");
	check_declined(sb.buf);
	sbuf_reset(&sb);
	sbuf_adds(&sb, "{");
	for (int i = 0; i <= JFLAT_MEMBERS; i++)
		sbuf_addf(&sb, "%s\"k%d\": %d", i ? ", " : "", i, i);
	sbuf_adds(&sb, "}");
	check_declined(sb.buf);
	sbuf_release(&sb);
}

static void test_limits_taken(void **state)
{
	(void)state;
	struct sbuf sb = SBUF_INIT;
	for (int i = 0; i < 63; i++)
		sbuf_adds(&sb, "[");
	for (int i = 0; i < 63; i++)
		sbuf_adds(&sb, "]");
	check_same_as_jansson(sb.buf);
	sbuf_reset(&sb);
	sbuf_adds(&sb, " {");
	for (int i = 0; i < JFLAT_MEMBERS; i++)
		sbuf_addf(&sb, "%s\"k%d\" :%d", i ? " ,\n" : "", i, i);
	sbuf_adds(&sb, "}\t");
	check_same_as_jansson(sb.buf);
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sample_shape),
	    cmocka_unit_test(test_numbers_as_jansson),
	    cmocka_unit_test(test_declines),
	    cmocka_unit_test(test_limits_taken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
