/*
 * Unit tests for model/analysis/level.h: each phase kind's level, the one
 * kind whose level depends on its track (a span: a part of the workflow
 * on a host's track or none, work on a CPU thread's), and level_of_phase
 * reading both from a trace.db's phases and tracks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>

#include "model/analysis/level.h"
#include "model/store/store.h"

static void test_kinds(void **state)
{
	(void)state;
	static const struct {
		int kind, level;
	} want[] = {
	    {PHASE_WORKFLOW, LEVEL_WORKFLOW},	{PHASE_STEP, LEVEL_PART},
	    {PHASE_SPAN, LEVEL_PART},		{PHASE_RANK, LEVEL_PART},
	    {PHASE_APPLICATION, LEVEL_PART},	{PHASE_JOB, LEVEL_PART},
	    {PHASE_STAGE, LEVEL_PART},		{PHASE_PROFILER_STEP, LEVEL_ITERATION},
	    {PHASE_OPERATOR, LEVEL_WORK},	{PHASE_ANNOTATION, LEVEL_WORK},
	    {PHASE_TASK, LEVEL_WORK},		{PHASE_PROCESS, LEVEL_NONE},
	    {PHASE_THREAD, LEVEL_NONE},		{PHASE_STREAM, LEVEL_NONE},
	    {PHASE_RUNTIME, LEVEL_NONE},	{PHASE_KERNEL, LEVEL_NONE},
	    {PHASE_MEMCPY, LEVEL_NONE},		{PHASE_MEMSET, LEVEL_NONE},
	    {PHASE_GPU_ANNOTATION, LEVEL_NONE}, {PHASE_ASYNC, LEVEL_NONE},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
		assert_int_equal(level_of(want[i].kind, 0), want[i].level);
	/* on a thread only a span changes: a Python function's is work */
	assert_int_equal(level_of(PHASE_SPAN, 1), LEVEL_WORK);
	assert_int_equal(level_of(PHASE_STEP, 1), LEVEL_PART);
	assert_int_equal(level_of(PHASE_OPERATOR, 1), LEVEL_WORK);
	/* kinds no file has */
	assert_int_equal(level_of(PHASE_NONE, 0), LEVEL_NONE);
	assert_int_equal(level_of(PHASE_KIND_COUNT, 0), LEVEL_NONE);
	assert_int_equal(level_of(-1, 0), LEVEL_NONE);
}

static void test_of_phase(void **state)
{
	(void)state;
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE tracks(id INTEGER PRIMARY KEY, kind TEXT NOT NULL);"
		 "CREATE TABLE phases(id INTEGER PRIMARY KEY, kind INTEGER, track_id INTEGER);"
		 "INSERT INTO tracks VALUES (1, 'host'), (2, 'thread');"
		 "INSERT INTO phases VALUES (1, %d, NULL), (2, %d, 1), (3, %d, 2), (4, %d, NULL),"
		 " (5, %d, 2);",
		 PHASE_WORKFLOW, PHASE_SPAN, PHASE_SPAN, PHASE_SPAN, PHASE_OPERATOR);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	int kind = -1;
	assert_int_equal(level_of_phase(db, 1, &kind), LEVEL_WORKFLOW);
	assert_int_equal(kind, PHASE_WORKFLOW);
	assert_int_equal(level_of_phase(db, 2, &kind), LEVEL_PART); /* an OTLP span on its host */
	assert_int_equal(kind, PHASE_SPAN);
	assert_int_equal(level_of_phase(db, 3, NULL), LEVEL_WORK); /* a span on a thread */
	assert_int_equal(level_of_phase(db, 4, NULL), LEVEL_PART); /* a span on no track */
	assert_int_equal(level_of_phase(db, 5, NULL), LEVEL_WORK);
	assert_int_equal(level_of_phase(db, 9, &kind), LEVEL_NONE); /* no such phase */
	assert_int_equal(kind, PHASE_NONE);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinds),
	    cmocka_unit_test(test_of_phase),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
