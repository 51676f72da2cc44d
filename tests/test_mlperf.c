/*
 * The MLPerf logging importer on small logs written to a scratch directory
 * (run > epoch > eval nesting with init under run, points as events bound
 * to the open interval or else the step, an unmatched stop, a repeated
 * start, a line that is not MLLOG, malformed JSON, a file with no MLLOG
 * line), on records after a long preamble (sniffed all the same), and on
 * the real logs in ../shared/samples/training-log, sniffed, whose intervals
 * and points are counted independently with plain string search.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "importers/importer.h"
#include "tests/importfx.h"
#include "tests/skip.h"

#define SAMPLES "../shared/samples/training-log"
#define MS	1000000LL

static int setup(void **state)
{
	return importfx_setup(state, "mlperf", "result_0.txt");
}

/* Imports text with the format forced (NULL: sniffed). */
static int import(struct fx *f, const char *text, const char *format, char **err)
{
	struct import_opts o = {0};
	importfx_write(f->in, text);
	char *paths[] = {f->in};
	return import_files(f->db, paths, 1, format, &o, err);
}

#define ML(t, type, key, value, meta)                                                              \
	":::MLLOG {\"namespace\": \"\", \"time_ms\": " #t ", \"event_type\": \"" type              \
	"\", \"key\": \"" key "\", \"value\": " value ", \"metadata\": {\"file\": \"t.py\", "      \
	"\"lineno\": 1" meta "}}\n"
#define START(t, key, meta)    ML(t, "INTERVAL_START", key, "null", meta)
#define STOP(t, key, meta)     ML(t, "INTERVAL_END", key, "null", meta)
#define POINT(t, key, v, meta) ML(t, "POINT_IN_TIME", key, v, meta)

static const char log_text[] = "Starting training on 8 GPUs\n" START(1000, "run_start", "")
    START(1000, "init_start", "") START(1001, "init_start", "") /* another rank: ignored */
    STOP(1100, "init_stop", "") POINT(1200, "global_batch_size", "256", "")
	START(1300, "epoch_start", ", \"epoch_num\": 1")
	    START(1400, "eval_start", ", \"epoch_num\": 1")
		POINT(1500, "eval_accuracy", "0.5", ", \"epoch_num\": 1")
		    STOP(1600, "eval_stop", ", \"epoch_num\": 1")
			STOP(1700, "epoch_stop", ", \"epoch_num\": 1")
			    STOP(1800, "block_stop", "") ":::MLLOG {\"key\": \"run_stop\", \n"
							 "0: " STOP(2000, "run_stop",
								    ", \"status\": \"success\"");

static void nesting_events_diagnostics(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (import(f, log_text, NULL, &err) < 0) /* sniffed */
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'span'"), 4);
	assert_int_equal(importfx_int(f,
				      "SELECT count(*) FROM phases_v p JOIN phases_v q ON"
				      " q.id = p.parent_id WHERE p.name = 'run' AND q.kind = 'step'"
				      " AND q.name = 'result_0.txt'"),
			 1);
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM phases_v p JOIN phases_v q ON"
			    " q.id = p.parent_id WHERE p.name = 'init' AND q.name = 'run'"),
	    1);
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM phases_v p JOIN phases_v q ON"
			    " q.id = p.parent_id WHERE p.name = 'epoch 1' AND q.name = 'run'"),
	    1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v p JOIN phases_v q ON"
					 " q.id = p.parent_id WHERE p.name = 'eval 1' AND"
					 " q.name = 'epoch 1'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE name = 'run'"),
			 1000 * MS);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'run'"),
			 1000 * MS);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'init'"),
			 100 * MS);
	assert_int_equal(importfx_int(f, "SELECT child_count FROM phases_v WHERE name = 'run'"), 2);
	assert_int_equal(importfx_int(f, "SELECT self_ns FROM phases_v WHERE name = 'run'"),
			 500 * MS);
	assert_int_equal(importfx_int(f, "SELECT depth FROM phases_v WHERE name = 'eval 1'"), 4);
	/* the step covers the run */
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE kind = 'step'"),
			 1000 * MS);
	/* points are events bound to the interval open at the time */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM events_v"), 2);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM events_v e JOIN phases_v p ON"
					 " p.id = e.phase_id WHERE e.name = 'eval_accuracy' AND"
					 " p.name = 'eval 1' AND e.t_ns = 1500000000"),
			 1);
	assert_int_equal(importfx_int(f,
				      "SELECT count(*) FROM events_v e JOIN phases_v p ON"
				      " p.id = e.phase_id WHERE e.name = 'global_batch_size' AND"
				      " p.name = 'run' AND json_extract(e.attrs, '$.value') = 256"
				      " AND json_extract(e.attrs, '$.metadata.file') = 't.py'"),
			 1);
	assert_int_equal(
	    importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'UNMATCHED_STOP'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'DUP_START'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'NOT_MLLOG'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_JSON'"),
			 1);
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM diagnostics WHERE code = 'UNCLOSED'"), 0);
	assert_int_equal(importfx_int(f, "SELECT phases FROM sources"), 4);
	assert_int_equal(importfx_int(f, "SELECT events FROM sources"), 2);
	assert_int_equal(importfx_int(f, "SELECT dropped FROM sources"), 2);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM sources WHERE format = 'mlperf'"),
			 1);
}

/* A new epoch closes the one left open; a run never stopped closes at the
 * last time seen. */
static void unclosed_intervals(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	static const char text[] =
	    START(1000, "run_start", "") START(1100, "epoch_start", ", \"epoch_num\": 1")
		START(1300, "epoch_start", ", \"epoch_num\": 2")
		    POINT(1500, "train_samples", "1024", "");
	if (import(f, text, "mlperf", &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'epoch 1'"),
			 200 * MS);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE name = 'epoch 2'"),
			 1500 * MS);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE name = 'run'"),
			 1500 * MS);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'UNCLOSED'"),
			 3);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM events_v e JOIN phases_v p ON"
					 " p.id = e.phase_id WHERE p.name = 'epoch 2'"),
			 1);
}

/* A point outside every interval (each run's cache_clear) is the step's,
 * and the step spans it: it was bound to nothing, outside the step. */
static void points_outside_intervals(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	static const char text[] =
	    POINT(500, "cache_clear", "true", "") START(1000, "run_start", "")
		STOP(2000, "run_stop", "") POINT(2500, "submission_status", "\"ok\"", "");
	if (import(f, text, NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM events WHERE phase_id IS NULL"), 0);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM events_v e JOIN phases_v p ON"
					 " p.id = e.phase_id WHERE p.kind = 'step'"),
			 2);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'step'"),
			 500 * MS);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'step'"),
			 2500 * MS);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'run'"),
			 1000 * MS);
}

static void no_mllog_is_fatal(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(import(f, "just a log\nnothing else\n", "mlperf", &err), -1);
	assert_non_null(strstr(err, "result_0.txt: no :::MLLOG line"));
	free(err);
	assert_int_equal(access(f->db, F_OK), -1);
}

/* The benchmark's own output before the first record, far beyond the old
 * 4096-byte sniffing window: still an MLPerf log; a text that only names
 * the marker is none, and neither is one whose first record lies past the
 * 64 KiB sniffed. */
static void sniffed_after_noise(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	size_t noise = 20000, cap = noise + INPUT_PEEK_MAX + 4096;
	char *text = malloc(cap), *p = text;
	assert_non_null(text);
	for (int i = 0; (size_t)(p - text) < noise; i++)
		p += snprintf(p, cap - (size_t)(p - text), "+ echo 'Beginning trial %d of 5'\n", i);
	snprintf(p, cap - (size_t)(p - text), "%s",
		 START(1000, "run_start", "") POINT(1200, "global_batch_size", "256", "")
		     STOP(2000, "run_stop", ""));
	if (import(f, text, NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM sources WHERE format = 'mlperf'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE name = 'run'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM events_v"), 1);
	importfx_reset(f);

	assert_int_equal(
	    import(f, "LOG_PREFIX = \":::MLLOG\"\nprint(':::MLLOG', record)\n", NULL, &err), -1);
	assert_non_null(strstr(err, "unrecognised format"));
	free(err);
	err = NULL;

	memset(text, '#', INPUT_PEEK_MAX);
	text[INPUT_PEEK_MAX - 1] = '\n';
	snprintf(text + INPUT_PEEK_MAX, cap - INPUT_PEEK_MAX, "%s", START(1000, "run_start", ""));
	assert_int_equal(import(f, text, NULL, &err), -1);
	assert_non_null(strstr(err, "unrecognised format"));
	free(err);
	assert_int_equal(import(f, text, "mlperf", &err), 0);
	free(text);
}

/* Independently: points are MLLOG lines whose key is not an interval key;
 * phases follow one open flag (and number) per level. */
static void count_log(const char *path, int64_t *phases, int64_t *events, int *any)
{
	static const char *const lv[][2] = {{"run_start", "run_stop"},
					    {"init_start", "init_stop"},
					    {"block_start", "block_stop"},
					    {"epoch_start", "epoch_stop"},
					    {"eval_start", "eval_stop"}};
	int open[5] = {0};
	char num[5][32] = {{0}};
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	static char buf[1 << 20];
	*phases = *events = 0;
	*any = 0;
	while (fgets(buf, sizeof(buf), fp)) {
		/* ranks writing at once may join records on one line */
		for (char *r = strstr(buf, ":::MLLOG"), *next; r; r = next) {
			next = strstr(r + 1, ":::MLLOG");
			if (next)
				*next = '\0';
			*any = 1;
			const char *k = strstr(r, "\"key\": \"");
			assert_non_null(k);
			k += 8;
			const char *e = strstr(r, "\"epoch_num\": ");
			char n[32] = "";
			if (e)
				snprintf(n, sizeof(n), "%.*s", (int)strspn(e + 13, "0123456789"),
					 e + 13);
			int hit = 0;
			for (int l = 0; l < 5; l++) {
				size_t sl = strlen(lv[l][0]), el = strlen(lv[l][1]);
				if (!strncmp(k, lv[l][0], sl) && k[sl] == '"') {
					hit = 1;
					if (open[l] && !strcmp(num[l], n))
						break;
					*phases += open[l];
					open[l] = 1;
					snprintf(num[l], sizeof(num[l]), "%s", n);
				} else if (!strncmp(k, lv[l][1], el) && k[el] == '"') {
					hit = 1;
					*phases += open[l];
					open[l] = 0;
				}
			}
			*events += !hit;
			if (next)
				*next = ':';
		}
	}
	fclose(fp);
	for (int l = 0; l < 5; l++)
		*phases += open[l];
}

static void real_samples(void **state)
{
	struct fx *f = *state;
	DIR *d = opendir(SAMPLES);
	if (!d)
		skip_because("%s is absent", SAMPLES);
	struct dirent *de;
	int seen = 0;
	while ((de = readdir(d))) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", SAMPLES, de->d_name);
		int64_t phases, events;
		int any;
		if (de->d_name[0] == '.')
			continue;
		count_log(path, &phases, &events, &any);
		if (!any)
			continue;
		importfx_reset(f);
		char *paths[] = {path}, *err = NULL;
		struct import_opts o = {0};
		/* sniffed: the BERT log's first record follows 5 KB of shell trace */
		if (import_files(f->db, paths, 1, NULL, &o, &err) < 0)
			fail_msg("%s: %s", de->d_name, err);
		assert_int_equal(
		    importfx_int(f, "SELECT count(*) FROM sources WHERE format = 'mlperf'"), 1);
		int64_t gp = importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'span'");
		int64_t ge = importfx_int(f, "SELECT count(*) FROM events_v");
		if (gp != phases || ge != events)
			fail_msg("%s: %lld phases, %lld events; want %lld, %lld", de->d_name,
				 (long long)gp, (long long)ge, (long long)phases,
				 (long long)events);
		/* every epoch lies inside a run, and no interval was cut short */
		assert_int_equal(importfx_int(f,
					      "SELECT count(*) FROM phases_v p JOIN phases_v q ON"
					      " q.id = p.parent_id WHERE p.name LIKE 'epoch %'"
					      " AND q.name <> 'run'"),
				 0);
		assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics WHERE code IN"
						 " ('UNCLOSED', 'UNMATCHED_STOP', 'BAD_JSON')"),
				 0);
		/* every point bound, and inside the step */
		assert_int_equal(
		    importfx_int(f, "SELECT count(*) FROM events WHERE phase_id IS NULL"), 0);
		assert_int_equal(importfx_int(f, "SELECT count(*) FROM events e, phases_v s WHERE"
						 " s.kind = 'step' AND (e.t_ns < s.start_ns OR"
						 " e.t_ns > s.end_ns)"),
				 0);
		print_message("%s: %lld phases, %lld events\n", de->d_name, (long long)gp,
			      (long long)ge);
		seen++;
	}
	closedir(d);
	assert_true(seen >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(nesting_events_diagnostics, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(unclosed_intervals, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(points_outside_intervals, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(no_mllog_is_fatal, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(sniffed_after_noise, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(real_samples, setup, importfx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
