/*
 * The OTLP/JSON trace importer: the specification's example (a span whose
 * parent is elsewhere, so a root), a small export written to a scratch
 * directory with a root, children listed before their parents, a span
 * event, host.name and service.name, the same export under --step, a trace
 * stitched under a span by --step PATH (its window, its host, relative
 * times anchored to it; far-apart sources diagnosed), metrics exports and
 * broken documents refused, and sniffing.
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
#include "importers/otlp.h"
#include "tests/importfx.h"
#include "tests/skip.h"

static int setup(void **state)
{
	return importfx_setup(state, "otlp", "trace.json");
}

#define SPEC "../shared/samples/otlp-json/open-telemetry__opentelemetry-proto__trace.json"

static void spec_sample(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (access(SPEC, R_OK))
		skip_because("%s is absent", SPEC);
	struct import_opts o = {0};
	char *paths[] = {SPEC};
	if (import_files(f->db, paths, 1, NULL, &o, &err) < 0)
		fail_msg("%s", err);
	char buf[512];
	assert_string_equal(importfx_text(f, "SELECT format FROM sources", buf, sizeof(buf)),
			    "otlp");
	/* its one span names a parent not in the file: a root, so a step */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step' AND"
					 " name = 'I''m a server span'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'step'"),
			 1544712660000000000);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE kind = 'step'"),
			 1000000000);
	assert_string_equal(
	    importfx_text(f,
			  "SELECT json_extract(attrs, '$.service') || ' ' ||"
			  " json_extract(attrs, '$.attributes.\"my.span.attr\"') FROM"
			  " phases_v WHERE kind = 'step'",
			  buf, sizeof(buf)),
	    "my.service some value");
	assert_int_equal(
	    importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'ORPHAN_SPAN'"), 1);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'workflow'"),
			 1544712661000000000);
}

#define KV(k, v) "{\"key\":\"" k "\",\"value\":{\"stringValue\":\"" v "\"}}"
#define SPAN(id, parent, name, t0, t1, extra)                                                      \
	"{\"traceId\":\"T1\",\"spanId\":\"" id "\",\"parentSpanId\":\"" parent                     \
	"\",\"name\":\"" name "\",\"startTimeUnixNano\":\"" t0 "\",\"endTimeUnixNano\":" t1 extra  \
	"}"

/* pipeline 1000..9000 s; load 1000..3000, train 3000..8000 with epoch
 * 4000..6000 beneath; children listed before their parents. */
static const char
    doc[] = "{\"resourceSpans\":[{\"resource\":{\"attributes\":[" KV("host.name", "node1") "," KV("service.name", "trainer") "]},\"scopeSpans\":[{\"spans\":[" SPAN(
	"e", "c", "epoch", "4000000000000", "6000000000000",
	"") "," SPAN("b", "a", "load", "1000000000000", "3000000000000",
		     "") "," SPAN("c", "a", "train", "3000000000000", "8000000000000",
				  ",\"events\":[{\"timeUnixNano\":"
				  "\"5000000000000\",\"name\":\"checkpoint\"}],"
				  "\"attributes\":[{\"key\":\"lr\",\"value\":{"
				  "\"doubleValue\":0.1}},"
				  "{\"key\":\"n\",\"value\":{\"intValue\":\"7\"}}"
				  "]") "," SPAN("a", "", "pipeline", "1000000000000",
						"9000000000000",
						"") "," SPAN("a", "", "again", "1000000000000",
							     "9000000000000", "") "," SPAN("z", "",
											   "no "
											   "time",
											   "x",
											   "9000000"
											   "000000",
											   "") "]}]"
											       "}]}"
											       "\n";

static void tree_and_host(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_import(f, doc, NULL, &err) < 0)
		fail_msg("%s", err);
	char buf[512];
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step'"), 1);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE name = 'pipeline'"),
			 1000000000000);
	assert_int_equal(importfx_int(f, "SELECT end_ns FROM phases_v WHERE name = 'pipeline'"),
			 9000000000000);
	assert_int_equal(
	    importfx_int(f, "SELECT child_count FROM phases_v WHERE name = 'pipeline'"), 2);
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM phases_v c JOIN phases_v p ON"
			    " p.id = c.parent_id WHERE p.name = 'pipeline' AND"
			    " c.kind = 'span' AND c.depth = 2 AND c.category = 'trainer'"),
	    2);
	assert_int_equal(
	    importfx_int(f, "SELECT c.depth FROM phases_v c JOIN phases_v p ON"
			    " p.id = c.parent_id WHERE p.name = 'train' AND c.name = 'epoch'"),
	    3);
	/* train's self time: 5000 s less epoch's 2000 s */
	assert_int_equal(importfx_int(f, "SELECT self_ns FROM phases_v WHERE name = 'train'"),
			 3000000000000);
	assert_int_equal(importfx_int(f,
				      "SELECT json_extract(attrs, '$.attributes.n') FROM phases_v"
				      " WHERE name = 'train'"),
			 7);
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, sizeof(buf)),
			    "node1");
	assert_string_equal(importfx_text(f,
					  "SELECT json_extract(attrs, '$.host') FROM phases_v WHERE"
					  " name = 'epoch'",
					  buf, sizeof(buf)),
			    "node1");
	assert_int_equal(importfx_int(f, "SELECT e.t_ns FROM events e JOIN phases_v p ON p.id ="
					 " e.phase_id WHERE p.name = 'train'"),
			 5000000000000);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'DUP_SPAN'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_SPAN'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT phases FROM sources"), 3);
	assert_int_equal(importfx_int(f, "SELECT events FROM sources"), 1);
}

static void under_a_step(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {.workflow = "w", .step = "run", .host = "cli"};
	if (importfx_import(f, doc, &o, &err) < 0)
		fail_msg("%s", err);
	char buf[64];
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step'"), 1);
	assert_int_equal(
	    importfx_int(f, "SELECT c.depth FROM phases_v c JOIN phases_v p ON"
			    " p.id = c.parent_id WHERE p.name = 'run' AND c.name = 'pipeline'"
			    " AND c.kind = 'span'"),
	    2);
	assert_int_equal(importfx_int(f, "SELECT depth FROM phases_v WHERE name = 'epoch'"), 4);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'run'"),
			 8000000000000);
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, sizeof(buf)), "cli");
}

/* Stitching: an export whose root span "run" (T0 .. +30 ms, host node1)
 * has children prepare (0..5 ms), train (6..20) and evaluate (21..30). */
#define T0_NS 1795350500000000000LL
#define T0_US 1795350500000000LL

static void stitch_spans(struct fx *f)
{
	static const char span[] =
	    "%s{\"traceId\":\"T\",\"spanId\":\"%s\",\"parentSpanId\":\"%s\","
	    "\"name\":\"%s\",\"startTimeUnixNano\":\"%lld\",\"endTimeUnixNano\":\"%lld\"}";
	const struct {
		const char *id, *parent, *name;
		int t0, t1;
	} s[] = {{"r", "", "run", 0, 30},
		 {"p", "r", "prepare", 0, 5},
		 {"t", "r", "train", 6, 20},
		 {"e", "r", "evaluate", 21, 30}};
	char text[2048];
	int n = snprintf(text, sizeof(text),
			 "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":"
			 "\"host.name\",\"value\":{\"stringValue\":\"node1\"}}]},"
			 "\"scopeSpans\":[{\"spans\":[");
	for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, span, i ? "," : "", s[i].id,
			      s[i].parent, s[i].name, T0_NS + s[i].t0 * 1000000LL,
			      T0_NS + s[i].t1 * 1000000LL);
	snprintf(text + n, sizeof(text) - (size_t)n, "]}]}]}");
	struct import_opts o = {.workflow = "w"};
	char *err = NULL;
	if (importfx_fresh(f, text, &o, &err) < 0)
		fail_msg("%s", err);
}

/* A Chrome trace of one op on one thread, 2 ms from ts (us). */
static void stitch_trace(struct fx *f, const char *step, long long ts, char **err, int *rc)
{
	char text[256];
	snprintf(text, sizeof(text),
		 "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"
		 "\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":%lld,\"dur\":2000}]}",
		 ts);
	struct import_opts o = {.workflow = "w", .step = step};
	*rc = importfx_import(f, text, &o, err);
}

/* --step names the span: the trace hangs under it, takes its host, and
 * the span keeps its window; spans are on their host's track. */
static void step_finds_span(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[64];
	int rc;
	stitch_spans(f);
	stitch_trace(f, "/run/train", T0_US + 7000, &err, &rc);
	if (rc < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE name = 'train'"), 1);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v c JOIN phases_v p ON"
					 " p.id = c.parent_id WHERE p.name = 'train' AND"
					 " p.kind = 'span' AND c.kind = 'process'"),
			 1);
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE name = 'train'"),
			 T0_NS + 6000000);
	assert_int_equal(importfx_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'train'"),
			 14000000);
	assert_int_equal(importfx_int(f, "SELECT self_ns FROM phases_v WHERE name = 'train'"),
			 14000000);
	assert_int_equal(importfx_int(f, "SELECT depth FROM phases_v WHERE name = 'aten::mm'"), 5);
	assert_int_equal(importfx_int(f, "SELECT end_ns - start_ns FROM phases_v"
					 " WHERE kind = 'workflow'"),
			 30000000);
	/* the trace names no host: the span's */
	assert_string_equal(
	    importfx_text(f, "SELECT host FROM sources WHERE format = 'chrome'", buf, sizeof(buf)),
	    "node1");
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM tracks t JOIN sources s ON"
					 " s.id = t.source_id WHERE s.format = 'chrome' AND"
					 " t.host IS NOT 'node1'"),
			 0);
	/* every span, the root's step too, on node1's host track */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v p JOIN tracks t ON"
					 " t.id = p.track_id WHERE t.kind = 'host' AND"
					 " t.host = 'node1' AND p.kind IN ('span', 'step')"),
			 4);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics WHERE"
					 " code = 'FAR_APART'"),
			 0);
}

/* A trace with relative times (the legacy autograd export, JAX) under a
 * span starts with the span, whatever the path's spelling; under a step
 * with no window it stays in 1970, and a diagnostic says so. */
static void relative_trace_anchors(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[64];
	int rc;
	stitch_spans(f);
	stitch_trace(f, "/w/run/evaluate", 0, &err, &rc);
	if (rc < 0)
		fail_msg("%s", err);
	assert_string_equal(importfx_text(f, "SELECT anchor FROM sources WHERE format = 'chrome'",
					  buf, sizeof(buf)),
			    "step-window");
	assert_int_equal(importfx_int(f, "SELECT start_ns FROM phases_v WHERE name = 'aten::mm'"),
			 T0_NS + 21000000);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step'"), 1);
	assert_int_equal(importfx_int(f, "SELECT end_ns - start_ns FROM phases_v"
					 " WHERE kind = 'workflow'"),
			 30000000);
	stitch_trace(f, "/run/elsewhere", 0, &err, &rc);
	if (rc < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics d JOIN sources s ON"
					 " s.id = d.source_id WHERE d.code = 'FAR_APART' AND"
					 " s.id = (SELECT max(id) FROM sources)"),
			 1);
	assert_non_null(strstr(importfx_text(f,
					     "SELECT example FROM diagnostics WHERE"
					     " code = 'FAR_APART'",
					     buf, sizeof(buf)),
			       "1970-01-01T00:00:00Z"));
}

static void refused(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(importfx_import(f, "{\"resourceMetrics\":[]}", NULL, &err), -1);
	assert_non_null(strstr(err, "an OTLP metrics export: only traces"));
	free(err);
	err = NULL;
	struct import_opts o = {0};
	char *paths[] = {f->in};
	assert_int_equal(import_files(f->db, paths, 1, "otlp", &o, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(
	    importfx_import(f, "{\"resourceSpans\":[]} {\"resourceSpans\":[", NULL, &err), -1);
	assert_non_null(strstr(err, "trace.json: byte "));
	free(err);
	assert_int_equal(access(f->db, F_OK), -1);
}

static void sniff(void **state)
{
	(void)state;
	const char *a = " {\n  \"resourceSpans\": [", *b = "{\"resourceLogs\":[", *c = "{\"x\":1}";
	assert_int_equal(otlp_sniff((const unsigned char *)a, strlen(a)), 90);
	assert_int_equal(otlp_sniff((const unsigned char *)b, strlen(b)), 50);
	assert_int_equal(otlp_sniff((const unsigned char *)c, strlen(c)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(spec_sample, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(tree_and_host, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(under_a_step, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(step_finds_span, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(relative_trace_anchors, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(refused, setup, importfx_teardown),
	    cmocka_unit_test(sniff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
