/*
 * The Spark event log importer on small logs written to a scratch
 * directory: the tree (application, job, stages, tasks), times, executor
 * hosts, the stage-parent edge, failed tasks, a log cut off before
 * ApplicationEnd, malformed and over-long lines, inputs that are not Spark
 * logs, the phase kinds of an older trace.db, and the real logs in
 * ../shared/samples/spark-eventlog, whose TaskEnd lines are counted
 * independently (a rolling pair imported as one application).
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
#include "importers/lines.h"
#include "tests/importfx.h"
#include "tests/skip.h"

#define SAMPLES "../shared/samples/spark-eventlog"

static int setup(void **state)
{
	return importfx_setup(state, "spark", "app.log");
}

#define TASK(id, stage, exec, host, t0, t1, reason)                                                \
	"{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":" #stage ",\"Stage Attempt ID\":0,"      \
	"\"Task Type\":\"ResultTask\",\"Task End Reason\":{\"Reason\":\"" reason "\"},"            \
	"\"Task Info\":{\"Task ID\":" #id ",\"Index\":" #id ",\"Attempt\":0,\"Launch Time\":" #t0  \
	",\"Executor ID\":\"" exec "\",\"Host\":\"" host "\",\"Finish Time\":" #t1 ","             \
	"\"Failed\":false,\"Killed\":false}}\n"

/* Times in ms: app 1000..6000, job 2000..5000, stage 0 2000..4000, stage 1
 * 4000..5000; task 1 failed. */
static const char head[] =
    "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.1.1\"}\n"
    "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":1000,\"Executor ID\":\"1\","
    "\"Executor Info\":{\"Host\":\"hostA\",\"Total Cores\":2}}\n"
    "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":1000,\"Executor ID\":\"2\","
    "\"Executor Info\":{\"Host\":\"hostB\",\"Total Cores\":2}}\n"
    "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"demo\",\"App ID\":\"app-1\","
    "\"Timestamp\":1000,\"User\":\"u\"}\n"
    "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Submission Time\":2000,"
    "\"Stage IDs\":[0,1]}\n"
    "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":0,"
    "\"Stage Attempt ID\":0,\"Stage Name\":\"map at x:1\",\"Number of Tasks\":2,"
    "\"Parent IDs\":[],\"Submission Time\":2000}}\n"
    "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0}\n" TASK(0, 0, "1", "hostA", 2100, 3000,
								   "Success")
	TASK(1, 0, "2", "hostB", 2200, 3500,
	     "ExceptionFailure") "{\"Event\":"
				 "\"SparkListenerStageCompleted\","
				 "\"Stage Info\":{\"Stage ID\":0,"
				 "\"Stage Attempt ID\":0,\"Stage Name\":\"map at "
				 "x:1\",\"Submission Time\":2000,"
				 "\"Completion Time\":4000}}\n"
				 "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage "
				 "Info\":{\"Stage ID\":1,"
				 "\"Stage Attempt ID\":0,\"Stage Name\":\"count at x:2\",\"Number "
				 "of Tasks\":1,"
				 "\"Parent IDs\":[0],\"Submission Time\":4000}}\n" TASK(
				     2, 1, "1", "hostA", 4100, 5000, "Success");

static const char tail[] =
    "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{\"Stage ID\":1,"
    "\"Stage Attempt ID\":0,\"Submission Time\":4000,\"Completion Time\":5000}}\n"
    "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":0,\"Completion Time\":5000,"
    "\"Job Result\":{\"Result\":\"JobSucceeded\"}}\n"
    "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":6000}\n";

#define MS 1000000LL

static void tree_times_hosts_edge(void **state)
{
	struct fx *f = *state;
	char log[8192], buf[256], *err = NULL;
	snprintf(log, sizeof(log), "%s%s", head, tail);
	if (importfx_import(f, log, NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'application'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'job'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'stage'"), 2);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'task'"), 3);
	/* the step is named after the application; the shape of the tree */
	assert_string_equal(importfx_text(f,
					  "SELECT s.name FROM phases_v a JOIN phases_v s ON s.id ="
					  " a.parent_id WHERE a.kind = 'application'",
					  buf, sizeof(buf)),
			    "demo");
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM phases_v t JOIN phases_v s ON s.id ="
			    " t.parent_id JOIN phases_v j ON j.id = s.parent_id JOIN"
			    " phases_v a ON a.id = j.parent_id WHERE t.kind = 'task' AND"
			    " s.kind = 'stage' AND j.kind = 'job' AND a.kind = 'application'"
			    " AND t.depth = 5"),
	    3);
	assert_int_equal(
	    importfx_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'application'"), 1000 * MS);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'application'"),
			 6000 * MS);
	/* the children's hull is 2000..5000 */
	assert_int_equal(importfx_int(f, "SELECT self_ns FROM phases_v WHERE kind = 'application'"),
			 2000 * MS);
	assert_int_equal(importfx_int(f, "SELECT child_count FROM phases_v WHERE kind = 'job'"), 2);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE name LIKE 'stage 0%'"),
			 4000 * MS);
	assert_int_equal(
	    importfx_int(f, "SELECT child_count FROM phases_v WHERE name LIKE 'stage 0%'"), 2);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'task 1.0'"),
			 1300 * MS);
	assert_int_equal(importfx_int(f, "SELECT self_ns FROM phases_v WHERE name = 'task 1.0'"),
			 1300 * MS);
	/* executors: one track each, host from ExecutorAdded */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM tracks WHERE kind = 'executor'"), 2);
	assert_string_equal(importfx_text(f,
					  "SELECT tr.host FROM phases_v t JOIN tracks tr ON tr.id ="
					  " t.track_id WHERE t.name = 'task 1.0'",
					  buf, sizeof(buf)),
			    "hostB");
	assert_int_equal(importfx_int(f, "SELECT spans FROM tracks WHERE name = 'executor 1'"), 2);
	/* stage 0 -> stage 1 */
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM edges e JOIN phases_v a ON a.id = e.src"
			    " JOIN phases_v b ON b.id = e.dst WHERE a.name LIKE 'stage 0%'"
			    " AND b.name LIKE 'stage 1%' AND e.kind = 4"),
	    1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM edges"), 1);
	/* the failed attempt is kept and marked */
	assert_int_equal(importfx_int(f, "SELECT json_extract(attrs, '$.failed') FROM phases_v"
					 " WHERE name = 'task 1.0'"),
			 1);
	assert_int_equal(
	    importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'FAILED_TASK'"), 1);
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM diagnostics WHERE code = 'TRUNCATED'"), 0);
	assert_int_equal(importfx_int(f, "SELECT phases FROM sources"), 7);
}

static void truncated_log(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_import(f, head, NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'task'"), 3);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'TRUNCATED'"),
			 3);
	/* closed at the last event: task 2's end */
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'application'"),
			 5000 * MS);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE name LIKE 'stage 1%'"),
			 5000 * MS);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'job'"),
			 5000 * MS);
}

static void malformed_and_long_lines(void **state)
{
	struct fx *f = *state;
	size_t big = LINES_MAX + (256 << 10); /* the reader may take a chunk past the limit */
	size_t cap = sizeof(head) + sizeof(tail) + big + 200, n = 0;
	char *log = malloc(cap);
	n += (size_t)snprintf(log + n, cap - n, "%sthis is not json\n{\"no\":\"event\"}\n", head);
	n += (size_t)snprintf(log + n, cap - n,
			      "{\"Event\":\"org.apache.spark.sql.execution.ui."
			      "SparkListenerSQLExecutionStart\",\"plan\":\"");
	memset(log + n, 'x', big);
	n += big;
	snprintf(log + n, cap - n, "\"}\n%s", tail);
	char *err = NULL;
	if (importfx_import(f, log, NULL, &err) < 0)
		fail_msg("%s", err);
	free(log);
	char buf[256];
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_LINE'"),
			 2);
	assert_non_null(
	    strstr(importfx_text(f, "SELECT example FROM diagnostics WHERE code = 'BAD_LINE'", buf,
				 sizeof(buf)),
		   "line 13: this is not json"));
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'LONG_LINE'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'task'"), 3);
	assert_int_equal(importfx_int(f, "SELECT dropped FROM sources"), 3);
}

static void not_spark(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {0};
	char *paths[] = {f->in};
	assert_int_equal(importfx_import(f, "{\"a\":1}\n{\"b\":2}\n", NULL, &err),
			 -1); /* not sniffed */
	free(err);
	err = NULL;
	assert_int_equal(import_files(f->db, paths, 1, "spark", &o, &err), -1);
	assert_non_null(strstr(err, "app.log:2: not a Spark event log"));
	free(err);
	err = NULL;
	FILE *fp = fopen(f->in, "w");
	fputs("{\"Event\":\"foo\"}\n", fp);
	fclose(fp);
	assert_int_equal(import_files(f->db, paths, 1, "spark", &o, &err), -1);
	assert_non_null(strstr(err, "not a Spark event log"));
	free(err);
	err = NULL;
	assert_int_equal(importfx_import(f, "", NULL, &err), -1);
	assert_non_null(err);
	free(err);
	assert_int_equal(access(f->db, F_OK), -1); /* nothing written */
}

/* A trace.db from before the Spark kinds gets them when written again. */
static void kinds_added_to_old_file(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	char log[8192];
	snprintf(log, sizeof(log), "%s%s", head, tail);
	if (importfx_import(f, log, NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phase_kinds WHERE name = 'task'"),
			 1);
	assert_int_equal(sqlite3_exec(f->conn,
				      "DELETE FROM phase_kinds WHERE name IN"
				      " ('application', 'job', 'stage', 'task')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(f->conn);
	f->conn = NULL;
	if (importfx_import(f, log, NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'task'"), 6);
}

/* TaskEnd lines of a file, counted with the line reader alone. */
static int64_t count_task_ends(const char *path)
{
	struct input *in;
	char *err = NULL, *s;
	size_t n;
	if (input_open(path, &in, &err) < 0)
		fail_msg("%s", err);
	struct lines l;
	lines_init(&l, in);
	l.skip_long = 1;
	int64_t c = 0;
	int r;
	while ((r = lines_next(&l, &s, &n, &err)) > 0)
		c += strstr(s, "\"Event\":\"SparkListenerTaskEnd\"") != NULL;
	assert_int_equal(r, 0);
	lines_release(&l);
	input_close(in);
	return c;
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
		struct stat sb;
		snprintf(path, sizeof(path), "%s/%s", SAMPLES, de->d_name);
		if (de->d_name[0] == '.' || stat(path, &sb) < 0 || sb.st_size == 0)
			continue; /* the 0-byte appstatus marker cannot import */
		int64_t want = count_task_ends(path);
		importfx_reset(f);
		char *paths[] = {path}, *err = NULL;
		struct import_opts o = {0};
		if (import_files(f->db, paths, 1, NULL, &o, &err) < 0)
			fail_msg("%s: %s", de->d_name, err);
		int64_t got = importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'task'");
		if (got != want)
			fail_msg("%s: %lld tasks, want %lld", de->d_name, (long long)got,
				 (long long)want);
		print_message("%s: %lld tasks\n", de->d_name, (long long)got);
		seen++;
	}
	closedir(d);
	assert_true(seen >= 10);
}

/* events_1 and events_2 of one eventlog_v2_ directory: one application. */
static void rolling_parts(void **state)
{
	struct fx *f = *state;
	const char *app = "local-1623876083964";
	char dir[400], part[2][600], real[2][600];
	snprintf(dir, sizeof(dir), "%s/eventlog_v2_%s", f->dir, app);
	for (int i = 0; i < 2; i++) {
		snprintf(real[i], sizeof(real[i]),
			 "%s/NVIDIA__spark-rapids-tools__events_%d_%s.zstd", SAMPLES, i + 1, app);
		if (access(real[i], R_OK) < 0)
			skip_because("%s is absent", real[i]);
	}
	char abs[2][PATH_MAX];
	for (int i = 0; i < 2; i++)
		assert_non_null(realpath(real[i], abs[i]));
	assert_int_equal(mkdir(dir, 0755), 0);
	for (int i = 0; i < 2; i++) {
		snprintf(part[i], sizeof(part[i]), "%s/events_%d_%s.zstd", dir, i + 1, app);
		assert_int_equal(symlink(abs[i], part[i]), 0);
	}
	char *paths[] = {part[0], part[1]}, *err = NULL;
	struct import_opts o = {0};
	int rc = import_files(f->db, paths, 2, NULL, &o, &err);
	for (int i = 0; i < 2; i++)
		unlink(part[i]);
	rmdir(dir);
	if (rc < 0)
		fail_msg("%s", err);
	int64_t want = count_task_ends(real[0]) + count_task_ends(real[1]);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'task'"),
			 want);
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'application'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'job'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics WHERE code = 'ORPHAN'"),
			 0);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics WHERE code = 'ROLLED'"),
			 1);
	/* the job ends where part 2 says */
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'job'"),
			 1623876212122LL * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(tree_times_hosts_edge, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(truncated_log, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(malformed_and_long_lines, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(not_spark, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(kinds_added_to_old_file, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(real_samples, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(rolling_parts, setup, importfx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
