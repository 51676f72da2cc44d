/*
 * Sorted runs and their merge: records of varying length come back whole
 * and in order from more runs than one merge takes (so in rounds), empty
 * runs and no runs at all are fine, and a failing sink stops the merge with
 * its error and closes the file; a set of runs, however many, holds one
 * open file.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ingest/runs.h"
#include "model/util/xalloc.h"
#include "tests/testdir.h"

struct item {
	uint64_t key, seq; /* seq makes the order total */
	uint32_t len;	   /* bytes after the header, each the low byte of seq */
	uint32_t pad;
};

static size_t item_size(const void *r)
{
	return sizeof(struct item) + ((const struct item *)r)->len;
}

static int item_cmp(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int item_pcmp(const void *x, const void *y)
{
	return item_cmp(*(void *const *)x, *(void *const *)y);
}

static const struct run_kind items = {sizeof(struct item), item_size, item_cmp};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

struct check {
	struct item last;
	uint64_t n, bad;
	uint64_t big;	      /* records longer than a merge's read buffer */
	const struct runs *s; /* if set: its file's size, seen by the first record */
	uint64_t file_bytes;
	uint64_t fail_at; /* 0: never */
	char **err;
};

static int check_sink(void *arg, const void *rec)
{
	struct check *c = arg;
	const struct item *it = rec;
	if (c->n && item_cmp(&c->last, it) >= 0)
		c->bad++;
	for (uint32_t i = 0; i < it->len; i++)
		if ((unsigned char)((const char *)(it + 1))[i] != (unsigned char)it->seq)
			c->bad++;
	c->big += it->len > RUNS_READ_BUF;
	if (c->s && !c->n)
		c->file_bytes = c->s->end;
	c->last = *it;
	if (++c->n == c->fail_at) {
		*c->err = xasprintf("stopped at %llu", (unsigned long long)c->n);
		return -1;
	}
	return 0;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Writes nruns runs of up to 40 random items each into s; returns the item
 * count. */
static uint64_t make_runs(struct runs *s, size_t nruns, uint64_t seed)
{
	uint64_t seq = 0;
	char *err = NULL;
	for (size_t r = 0; r < nruns; r++) {
		size_t n = r % 7 == 3 ? 0 : lcg(&seed) % 40;
		void **v = xcalloc(n ? n : 1, sizeof(*v));
		for (size_t i = 0; i < n; i++) {
			uint64_t pick = lcg(&seed) % 300;
			/* some longer than a merge's read buffer */
			uint32_t len = (uint32_t)(pick == 0    ? RUNS_READ_BUF + lcg(&seed) % 20000
						  : pick < 100 ? lcg(&seed) % 300
							       : 0);
			struct item *it = xmalloc(sizeof(*it) + len);
			*it = (struct item){.key = lcg(&seed) % 500, .seq = seq++, .len = len};
			memset(it + 1, (int)(unsigned char)it->seq, len);
			v[i] = it;
		}
		qsort(v, n, sizeof(*v), item_pcmp);
		if (runs_write(s, v, n, &err) < 0)
			fail_msg("runs_write: %s", err);
		assert_int_equal(s->v[s->n - 1].count, n);
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
	}
	return seq;
}

/* More runs than one merge takes: merged in rounds, every record back in
 * order, and one open file for them all. */
static void test_runs_merge_in_rounds(void **state)
{
	(void)state;
	enum { NRUNS = 2 * RUNS_FANIN + 5 };
	int fds = open_fds();
	struct runs s;
	runs_init(&s, &items);
	uint64_t total = make_runs(&s, NRUNS, 7);
	assert_true(total > 10000);
	assert_int_equal(s.n, NRUNS);
	assert_int_equal(open_fds(), fds + 1);
	char *err = NULL;
	struct check c = {.err = &err, .s = &s};
	uint64_t written = s.end;
	assert_int_equal(runs_merge(&s, check_sink, &c, &err), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(c.n, total);
	assert_int_equal(c.bad, 0);
	assert_true(c.big > 0);
	/* the rounds rewrote the newest 519 runs once, not their own output */
	assert_true(c.file_bytes > written);
	assert_true(c.file_bytes < written + written * 3 / 4);
	assert_int_equal(open_fds(), fds);

	/* the set can be used again */
	total = make_runs(&s, 9, 8);
	c = (struct check){.err = &err};
	assert_int_equal(runs_merge(&s, check_sink, &c, &err), 0);
	assert_int_equal(c.n, total);
	assert_int_equal(c.bad, 0);
	runs_release(&s);
	assert_int_equal(open_fds(), fds);
}

static void test_runs_merge_none(void **state)
{
	(void)state;
	struct runs s;
	runs_init(&s, &items);
	char *err = NULL;
	struct check c = {.err = &err};
	assert_int_equal(runs_merge(&s, check_sink, &c, &err), 0);
	assert_int_equal(c.n, 0);
	runs_release(&s);
}

static void test_runs_sink_error_closes_all(void **state)
{
	(void)state;
	int fds = open_fds();
	struct runs s;
	runs_init(&s, &items);
	uint64_t total = make_runs(&s, RUNS_FANIN + 10, 11);
	char *err = NULL;
	struct check c = {.err = &err, .fail_at = total / 2};
	assert_int_equal(runs_merge(&s, check_sink, &c, &err), -1);
	assert_int_equal(s.n, 0);
	assert_int_equal(c.n, total / 2);
	assert_non_null(err);
	assert_non_null(strstr(err, "stopped at"));
	free(err);
	assert_int_equal(open_fds(), fds);

	/* runs_release on runs never merged */
	make_runs(&s, 5, 3);
	runs_release(&s);
	assert_int_equal(open_fds(), fds);
}

/* Fixed-size items (no bytes after the header) through a run buffer: in
 * order whether they stayed in memory or filled it many times over, and
 * none at all is fine; the buffer can be used again once merged. */
static void test_runs_buffer(void **state)
{
	(void)state;
	static const struct run_kind fixed = {sizeof(struct item), item_size, item_cmp};
	int fds = open_fds();
	const size_t counts[] = {0, 5, 100, 1000};
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		struct run_buffer b;
		run_buffer_init(&b, &fixed, 64);
		uint64_t seed = 11 + k;
		char *err = NULL;
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < counts[k]; i++) {
				struct item *it = run_buffer_add(&b, &err);
				assert_non_null(it);
				*it = (struct item){.key = lcg(&seed) % 50, .seq = i};
			}
			assert_true(counts[k] <= 64 ? b.runs.n == 0 : b.runs.n > 0);
			struct check c = {.err = &err};
			assert_int_equal(run_buffer_merge(&b, check_sink, &c, &err), 0);
			assert_int_equal(c.n, counts[k]);
			assert_int_equal(c.bad, 0);
			assert_int_equal(b.n, 0);
			assert_int_equal(b.runs.n, 0);
		}
		run_buffer_release(&b);
	}
	assert_int_equal(open_fds(), fds);
}

/* Runs go to $TMPDIR, and leave nothing there. */
static void test_runs_in_tmpdir(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(testdir_make(dir, sizeof(dir), "runs"), 0);
	char *saved = getenv("TMPDIR") ? xstrdup(getenv("TMPDIR")) : NULL;
	setenv("TMPDIR", dir, 1);
	struct runs s;
	runs_init(&s, &items);
	char *err = NULL;
	struct item it = {.key = 1, .seq = 1};
	void *one[1] = {&it};
	assert_int_equal(runs_write(&s, one, 1, &err), 0);
	char link[64], target[512];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fileno(s.f));
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_true(strncmp(target, dir, strlen(dir)) == 0);
	assert_non_null(strstr(target, "(deleted)"));
	runs_release(&s);

	/* a TMPDIR that cannot take files: the error names it */
	setenv("TMPDIR", "/nonexistent-grademl", 1);
	assert_int_equal(runs_write(&s, one, 1, &err), -1);
	assert_non_null(strstr(err, "/nonexistent-grademl"));
	assert_int_equal(s.n, 0);
	free(err);
	runs_release(&s);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runs_merge_in_rounds),
	    cmocka_unit_test(test_runs_merge_none),
	    cmocka_unit_test(test_runs_sink_error_closes_all),
	    cmocka_unit_test(test_runs_buffer),
	    cmocka_unit_test(test_runs_in_tmpdir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
