/*
 * Unit tests for tui/progress.h's line (progress_format), on the GPU
 * capture's files for their sizes: every part at 200 columns; narrower, the
 * file's number left out first, then the rate and the events, the name cut
 * in the middle down to 16 columns;
 * never wider than the terminal less one column, from 10 to 240; the
 * stages after the files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "importers/tally.h"
#include "model/util/sbuf.h"
#include "tui/format.h"
#include "tui/progress.h"

static char *const paths[] = {"tests/data/gpu/ddp_rank0.pt.trace.json.gz",
			      "tests/data/gpu/ddp_rank1.pt.trace.json.gz",
			      "tests/data/gpu/eval.pt.trace.json.gz"};

#define SEC 1000000000LL

/* The second file, 100000 bytes of it read in its first second. */
static const struct tally reading = {
    .bytes = 100000, .events = 1234, .file = 1, .file_ns = 5 * SEC, .stage = TALLY_READ};

static char *line(const struct tally *t, int cols)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	progress_format(&sb, t, paths, 3, 2 * SEC, 6 * SEC, cols, "\u2026");
	return sbuf_detach(&sb);
}

static void test_progress_wide(void **state)
{
	(void)state;
	struct stat sb;
	assert_int_equal(stat(paths[1], &sb), 0);
	char size[32], want[256];
	snprintf(want, sizeof(want),
		 "importing ddp_rank1.pt.trace.json.gz [2/3]: 100.0 KB of %s (%.0f%%), 1234 events"
		 " read, 100.0 KB/s, ",
		 format_bytes(size, sizeof(size), sb.st_size), 100.0 * 100000 / (double)sb.st_size);
	char *l = line(&reading, 200);
	assert_true(strncmp(l, want, strlen(want)) == 0);
	/* the rest at 100 KB/s: what the second's rate says */
	char left[32];
	snprintf(want, sizeof(want), "%s left",
		 format_duration(left, sizeof(left),
				 (int64_t)((double)(sb.st_size - 100000) / 100000 * 1e9)));
	assert_string_equal(l + strlen(l) - strlen(want), want);
	free(l);
}

static void test_progress_narrow(void **state)
{
	(void)state;
	/* at 100 the file's number goes, and the name is cut in the middle:
	 * its start and its last word stay */
	char *l = line(&reading, 100);
	assert_true(format_width(l) <= 99);
	assert_null(strstr(l, "[2/3]"));
	assert_true(strncmp(l, "importing ddp_rank1", 19) == 0);
	assert_non_null(strstr(l, "\u2026gz: 100.0 KB of "));
	assert_non_null(strstr(l, ", 1234 events read, 100.0 KB/s, "));
	free(l);
	/* at 80 the rate and the events go too, so that the name stands whole */
	l = line(&reading, 80);
	assert_true(format_width(l) <= 79);
	assert_true(strncmp(l, "importing ddp_rank1.pt.trace.json.gz: 100.0 KB of ", 50) == 0);
	assert_null(strstr(l, "[2/3]"));
	assert_null(strstr(l, "/s"));
	assert_null(strstr(l, "events"));
	assert_non_null(strstr(l, "%), "));
	assert_string_equal(l + strlen(l) - 5, " left");
	free(l);
}

static void test_progress_fits(void **state)
{
	(void)state;
	for (int cols = 10; cols <= 240; cols++) {
		char *l = line(&reading, cols);
		assert_true(format_width(l) <= cols - 1);
		free(l);
	}
}

static void test_progress_stages(void **state)
{
	(void)state;
	struct tally t = reading;
	t.stage = TALLY_COMMIT;
	char *l = line(&t, 200);
	assert_string_equal(l,
			    "importing: checking, indexing, committing, 1234 events read, 4.00 s");
	free(l);
	t.stage = TALLY_PULL;
	l = line(&t, 200);
	assert_string_equal(l, "importing: pulling from Prometheus, 1234 events read, 4.00 s");
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_progress_wide),
	    cmocka_unit_test(test_progress_narrow),
	    cmocka_unit_test(test_progress_fits),
	    cmocka_unit_test(test_progress_stages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
