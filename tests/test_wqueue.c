/*
 * The write-behind queue: every message arrives once, in order, whole (also
 * one larger than a chunk); the consumer's first error stops it and comes
 * back from wqueue_finish; pushes after it fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "model/ingest/wqueue.h"
#include "model/util/xalloc.h"

struct sink {
	uint64_t next, bytes;
	int64_t fail_at;
	int bad;
	int flushes;
};

static int consume(void *arg, const void *msg, size_t len, char **err)
{
	struct sink *s = arg;
	uint64_t seq;
	if (!msg) {
		s->flushes++; /* the end of a chunk */
		return 0;
	}
	memcpy(&seq, msg, sizeof(seq));
	if (seq != s->next)
		s->bad = 1;
	/* the tail repeats the low byte of seq */
	for (size_t i = sizeof(seq); i < len; i++)
		if ((unsigned char)((const char *)msg)[i] != (unsigned char)seq)
			s->bad = 1;
	if ((int64_t)seq == s->fail_at) {
		*err = xasprintf("failed at %llu", (unsigned long long)seq);
		return -1;
	}
	s->next++;
	s->bytes += len;
	return 0;
}

static void in_order_and_whole(void **state)
{
	struct sink s = {.fail_at = -1};
	char *err = NULL;
	struct wqueue *q = wqueue_start(consume, &s, &err);
	assert_non_null(q);
	size_t big = WQUEUE_CHUNK * 3 + 5;
	char *tail = malloc(big);
	uint64_t expect = 0;
	for (uint64_t i = 0; i < 200000; i++) {
		size_t tl = i == 777 ? big : i % 97;
		memset(tail, (unsigned char)i, tl);
		assert_int_equal(wqueue_push(q, &i, sizeof(i), tail, tl), 0);
		expect += sizeof(i) + tl;
	}
	assert_int_equal(wqueue_finish(q, &err), 0);
	assert_int_equal(s.next, 200000);
	assert_int_equal(s.bytes, expect);
	assert_int_equal(s.bad, 0);
	assert_true(s.flushes > 1); /* once a chunk, the last one included */
	free(tail);
}

static void first_error_stops(void **state)
{
	struct sink s = {.fail_at = 1000};
	char *err = NULL;
	struct wqueue *q = wqueue_start(consume, &s, &err);
	assert_non_null(q);
	/* the producer runs at most WQUEUE_CHUNKS chunks ahead, so within a
	 * few chunks after message 1000 a push sees the failure */
	int refused = 0;
	for (uint64_t i = 0; i < 1000000 && !refused; i++)
		refused = wqueue_push(q, &i, sizeof(i), NULL, 0) < 0;
	assert_true(refused);
	assert_int_equal(wqueue_finish(q, &err), -1);
	assert_string_equal(err, "failed at 1000");
	assert_int_equal(s.next, 1000); /* nothing after the failure was handled */
	assert_int_equal(s.bad, 0);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(in_order_and_whole),
	    cmocka_unit_test(first_error_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
