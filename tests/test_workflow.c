/*
 * The workflow manifest importer on small manifests written to a scratch
 * directory: steps, a nested step, depends_on edges, ISO-8601 and ns times,
 * hosts; the demo's real manifest followed by a trace imported under one of
 * its steps, which must not shrink the step's declared window; bad, repeated
 * and dangling lines counted; a file without a step line refused; sniffing
 * and the time parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "importers/workflow.h"
#include "tests/importfx.h"
#include "tests/skip.h"

#define DEMO "tests/data/demo"

static int setup(void **state)
{
	return importfx_setup(state, "workflow", "wf.jsonl");
}

/* 2026-11-22T12:28:19.155Z is 1795350499155000000 ns. */
static const char manifest[] =
    "{\"step\": \"prep\", \"start\": \"2026-11-22T12:28:19.155Z\","
    " \"end\": \"2026-11-22T12:28:21Z\", \"host\": \"node1\"}\n"
    "{\"step\": \"train\", \"start\": 1795350501000000000, \"end\": 1795350510000000000,"
    " \"host\": \"node2\", \"depends_on\": [\"prep\"]}\n"
    "{\"step\": \"epoch1\", \"start_ns\": 1795350502000000000,"
    " \"end_ns\": \"1795350505000000000\", \"parent\": \"train\", \"depends_on\": [\"prep\"]}\n";

static void steps_parents_edges(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {.workflow = "nightly"};
	if (importfx_import(f, manifest, &o, &err) < 0)
		fail_msg("%s", err);
	char buf[512];
	assert_string_equal(importfx_text(f, "SELECT format FROM sources", buf, sizeof(buf)),
			    "workflow");
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step'"), 3);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE name = 'prep'"),
			 1795350499155000000);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE name = 'prep'"),
			 1795350501000000000);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'epoch1'"),
			 3000000000);
	/* epoch1 is under train, one level deeper */
	assert_int_equal(
	    importfx_int(f, "SELECT c.depth FROM phases_v c JOIN phases_v p ON"
			    " p.id = c.parent_id WHERE c.name = 'epoch1' AND p.name = 'train'"
			    " AND p.kind = 'step'"),
	    2);
	assert_int_equal(importfx_int(f, "SELECT child_count FROM phases_v WHERE name = 'train'"),
			 1);
	/* the workflow spans its steps */
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'workflow'"
					 " AND name = 'nightly'"),
			 1795350499155000000);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'workflow'"),
			 1795350510000000000);
	/* prep -> train and prep -> epoch1 */
	assert_int_equal(importfx_int(f,
				      "SELECT count(*) FROM edges e JOIN phases_v s ON s.id = e.src"
				      " JOIN phases_v d ON d.id = e.dst WHERE e.kind = 5 AND"
				      " s.name = 'prep' AND d.name IN ('train', 'epoch1')"),
			 2);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM edges"), 2);
	/* hosts: attrs, a track each */
	assert_string_equal(importfx_text(f,
					  "SELECT json_extract(attrs, '$.host') FROM phases_v WHERE"
					  " name = 'train'",
					  buf, sizeof(buf)),
			    "node2");
	assert_string_equal(importfx_text(f,
					  "SELECT t.host FROM phases p JOIN tracks t ON"
					  " t.id = p.track_id JOIN strings s ON s.id = p.name_id"
					  " WHERE s.text = 'prep' AND t.kind = 'host'",
					  buf, sizeof(buf)),
			    "node1");
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, sizeof(buf)),
			    "node1");
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics"), 0);

	/* imported again: the same steps, no new edges */
	sqlite3_close(f->conn);
	f->conn = NULL;
	if (importfx_import(f, manifest, &o, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step'"), 3);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM edges"), 2);
}

/* The demo: the manifest, then the train trace under its step as
 * tests/data/demo/import.sh anchors it. */
static void manifest_window_kept(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (access(DEMO "/workflow.jsonl", R_OK) || access(DEMO "/train.pt.trace.json.gz", R_OK))
		skip_because("%s is incomplete", DEMO);
	struct import_opts o = {.workflow = "demo"};
	char *wf[] = {DEMO "/workflow.jsonl"};
	if (import_files(f->db, wf, 1, NULL, &o, &err) < 0)
		fail_msg("%s", err);
	const int64_t start = 1795350499155638250, end = 1795350510442805107;
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE name = 'train'"),
			 start);
	o.step = "train";
	o.host = "vm";
	o.has_time_offset = 1;
	o.time_offset_ns = (int64_t)1795350499792984 * 1000;
	char *tr[] = {DEMO "/train.pt.trace.json.gz"};
	if (import_files(f->db, tr, 1, NULL, &o, &err) < 0)
		fail_msg("%s", err);
	/* one train step with the trace beneath, starting later than the
	 * manifest says the step did: without the manifest window the step
	 * would start there */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step' AND"
					 " name = 'train'"),
			 1);
	int64_t child =
	    importfx_int(f, "SELECT min(c.start_ns) FROM phases_v c JOIN phases_v s ON"
			    " s.id = c.parent_id WHERE s.name = 'train' AND s.kind = 'step'");
	assert_true(child > start);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'step' AND"
					 " name = 'train'"),
			 start);
	assert_true(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'step' AND"
				    " name = 'train'") >= end);
	assert_true(importfx_int(f, "SELECT child_count FROM phases_v WHERE kind = 'step' AND"
				    " name = 'train'") > 0);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'workflow'"),
			 start);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'workflow'"),
			 1795350516979249354);
}

static void bad_lines_counted(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_import(
		f,
		"{\"step\": \"a\", \"start\": 1000000000, \"end\": 2000000000}\n"
		"not json\n"
		"\n"
		"[1, 2]\n"
		"{\"step\": \"a\", \"start\": 1, \"end\": 2}\n"
		"{\"step\": \"b\", \"start\": \"yesterday\", \"end\": 2, \"parent\": \"zz\","
		" \"depends_on\": [\"a\", \"nope\", 3]}\n"
		"{\"step\": \"c\", \"start\": 5, \"end\": 6, \"parent\": \"d\"}\n"
		"{\"step\": \"d\", \"start\": 5, \"end\": 6, \"parent\": \"c\"}\n",
		NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_LINE'"),
			 2);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'DUP_STEP'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_TIME'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_PARENT'"),
			 2);
	assert_int_equal(
	    importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_DEPENDENCY'"), 2);
	assert_int_equal(importfx_int(f, "SELECT dropped FROM sources"), 3);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step'"), 4);
	/* the first a kept; b without a window, under the workflow */
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'a'"),
			 1000000000);
	assert_int_equal(importfx_int(f, "SELECT depth FROM phases_v WHERE name = 'b'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM edges WHERE kind = 5"), 1);
	/* the cycle c <-> d is broken at one of them */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE name IN ('c', 'd')"
					 " AND depth = 1"),
			 1);
}

static void no_step_is_fatal(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {0};
	char *paths[] = {f->in};
	FILE *fp = fopen(f->in, "w");
	fputs("{\"name\": \"x\", \"start\": 1}\nnot json\n", fp);
	fclose(fp);
	assert_int_equal(import_files(f->db, paths, 1, "workflow", &o, &err), -1);
	assert_non_null(strstr(err, "wf.jsonl:2: not a workflow manifest"));
	free(err);
	assert_int_equal(access(f->db, F_OK), -1);
}

/* What a Python script writes with time.time(): epoch seconds as a float
 * (a double: within a microsecond of the ns); an integer stays ns. */
static void epoch_seconds(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	static const char text[] =
	    "{\"step\": \"a\", \"start\": 1795350499.155638, \"end\": 1795350510.5}\n"
	    "{\"step\": \"b\", \"start\": 1795350512.5, \"end\": 1795350516}\n"
	    "{\"step\": \"c\", \"start\": -1.5, \"end\": 1e300}\n";
	struct import_opts o = {.workflow = "w"};
	if (importfx_import(f, text, &o, &err) < 0)
		fail_msg("%s", err);
	int64_t a0 = importfx_int(f, "SELECT start_ns FROM phases_v WHERE name = 'a'");
	assert_true(a0 > 1795350499155637000 && a0 < 1795350499155639000);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE name = 'a'"),
			 1795350510500000000);
	/* b: an integer end is ns (1.8 s after the epoch), before its start;
	 * c: no time at all */
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_TIME'"),
			 2);
}

static void sniff_and_times(void **state)
{
	(void)state;
	const char *ok = "{\"step\": \"train\", \"start_ns\": 1}\n{";
	const char *spark = "{\"Event\":\"SparkListenerLogStart\"}\n";
	const char *nostart = "{\"step\": \"train\", \"end\": 1}\n";
	assert_int_equal(workflow_sniff((const unsigned char *)ok, strlen(ok)), 90);
	assert_int_equal(workflow_sniff((const unsigned char *)spark, strlen(spark)), 0);
	assert_int_equal(workflow_sniff((const unsigned char *)nostart, strlen(nostart)), 0);
	const struct {
		const char *json;
		int64_t ns; /* -1: refused */
	} cases[] = {
	    {"\"2026-11-22T12:28:19.155Z\"", 1795350499155000000},
	    {"\"2026-11-22T13:28:19.155+01:00\"", 1795350499155000000},
	    {"\"2026-11-22 12:28:19\"", 1795350499000000000},
	    {"\"1970-01-01T00:00:01.000000001Z\"", 1000000001},
	    {"\"2000-02-29T00:00:00Z\"", 951782400000000000},
	    {"1795350499155638250", 1795350499155638250},
	    {"\"1795350499155638250\"", 1795350499155638250},
	    {"\"2026-13-01T00:00:00Z\"", -1},
	    {"\"2026-11-22T12:28\"", -1},
	    {"\"2026-11-22T12:28:19Zjunk\"", -1},
	    {"\"99999999999999999999\"", -1},
	    {"-5", -1},
	    {"1.5", -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
		int64_t ns = 0;
		int rc = workflow_time(v, &ns);
		json_decref(v);
		if (cases[i].ns < 0)
			assert_int_equal(rc, -1);
		else if (rc < 0 || ns != cases[i].ns)
			fail_msg("%s: %d %lld", cases[i].json, rc, (long long)ns);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(steps_parents_edges, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(manifest_window_kept, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(epoch_seconds, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(bad_lines_counted, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(no_step_is_fatal, setup, importfx_teardown),
	    cmocka_unit_test(sniff_and_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
