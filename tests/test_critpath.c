/*
 * The critical path and what-if (model/critpath) on hand-computed cases: a
 * diamond of workflow steps, steps and OTLP spans that ran one after
 * another with nothing declaring it, concurrent steps where a what-if makes
 * the other one bound the path, a CPU op whose kernel outlives it; and on the
 * real GPU capture (tests/data/gpu), properties that hold whatever the
 * figures: the path tiles the root's window in time order, it lies under
 * the root, a what-if never lengthens it and gains at most what it shrank.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/analysis/critpath.h"
#include "model/view/model.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "tests/importfx.h"

#define GPU "tests/data/gpu"
#define MS  1000000LL
#define US  1000LL

static int setup(void **state)
{
	return importfx_setup(state, "critpath", "in.json");
}

static struct model *open_model(struct fx *f)
{
	struct model *m;
	char *err = NULL;
	if (model_open(f->db, &m, &err) < 0)
		fail_msg("%s", err);
	return m;
}

static int64_t id_of(struct fx *f, const char *name)
{
	sqlite3_stmt *q = importfx_query(f, "SELECT id FROM phases_v WHERE name = ?1");
	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	int64_t id = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
	sqlite3_finalize(q);
	if (id < 0)
		fail_msg("no phase '%s'", name);
	return id;
}

static struct critpath_whatif whatif_full(struct model *m, int64_t root, int64_t phase, double k)
{
	struct critpath_whatif w;
	char *err = NULL;
	if (critpath_whatif(model_store(m), root, phase, k, &w, &err) < 0)
		fail_msg("%s", err);
	return w;
}

static int64_t whatif(struct model *m, int64_t root, int64_t phase, double k)
{
	return whatif_full(m, root, phase, k).makespan_ns;
}

/* The invariants of any path: contiguous, in time order, summing up. */
static void check_tiling(const struct critpath *c)
{
	assert_true(c->nsteps > 0);
	int64_t t = c->start_ns, run = 0;
	for (size_t i = 0; i < c->nsteps; i++) {
		assert_int_equal(c->steps[i].start_ns, t);
		assert_true(c->steps[i].dur_ns > 0);
		t += c->steps[i].dur_ns;
	}
	assert_int_equal(t, c->start_ns + c->makespan_ns);
	assert_int_equal(c->run_ns + c->wait_ns, c->makespan_ns);
	for (size_t i = 0; i < c->nphases; i++) {
		run += c->phases[i].on_path_ns;
		if (i)
			assert_true(c->phases[i - 1].on_path_ns >= c->phases[i].on_path_ns);
	}
	assert_int_equal(run, c->run_ns);
}

/* a -> b, a -> c, b and c -> d; c has slack. Times in ms from T0. */
#define T0 1795350500000000000LL
static void diamond(void **state)
{
	struct fx *f = *state;
	char text[1024], *err = NULL;
	snprintf(
	    text, sizeof(text),
	    "{\"step\": \"a\", \"start_ns\": %lld, \"end_ns\": %lld}\n"
	    "{\"step\": \"b\", \"start_ns\": %lld, \"end_ns\": %lld, \"depends_on\": [\"a\"]}\n"
	    "{\"step\": \"c\", \"start_ns\": %lld, \"end_ns\": %lld, \"depends_on\": [\"a\"]}\n"
	    "{\"step\": \"d\", \"start_ns\": %lld, \"end_ns\": %lld,"
	    " \"depends_on\": [\"b\", \"c\"]}\n",
	    T0, T0 + 10 * MS, T0 + 10 * MS, T0 + 30 * MS, T0 + 12 * MS, T0 + 24 * MS, T0 + 30 * MS,
	    T0 + 40 * MS);
	struct import_opts o = {.workflow = "wf"};
	if (importfx_fresh(f, text, &o, &err) < 0)
		fail_msg("%s", err);
	int64_t wf = id_of(f, "wf"), a = id_of(f, "a"), b = id_of(f, "b"), c = id_of(f, "c"),
		d = id_of(f, "d");
	struct model *m = open_model(f);
	struct critpath cp;
	if (critpath_compute(model_store(m), wf, &cp, &err) < 0)
		fail_msg("%s", err);
	check_tiling(&cp);
	assert_int_equal(cp.start_ns, T0);
	assert_int_equal(cp.makespan_ns, 40 * MS);
	assert_int_equal(cp.wait_ns, 0);
	/* a, b, d run back to back; c is off the path */
	assert_int_equal(cp.nsteps, 3);
	int64_t want[] = {a, b, d}, len[] = {10 * MS, 20 * MS, 10 * MS};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(cp.steps[i].phase_id, want[i]);
		assert_int_equal(cp.steps[i].what, CRITPATH_RUN);
		assert_int_equal(cp.steps[i].dur_ns, len[i]);
		assert_int_equal(cp.steps[i].on_path_ns, len[i]);
	}
	assert_int_equal(cp.phases[0].phase_id, b);
	/* the same figure from the what-if pass, and as observed */
	assert_int_equal(whatif(m, wf, b, 1), 40 * MS);
	struct critpath_whatif w;
	assert_int_equal(critpath_whatif(model_store(m), wf, b, 2, &w, &err), 0);
	assert_int_equal(w.makespan_ns, 34 * MS);
	assert_int_equal(w.observed_ns, cp.makespan_ns);
	/* b runs 20 ms on the path: 10 ms were it to stay; c then bounds it */
	assert_int_equal(w.shrink_ns, 20 * MS);
	assert_int_equal(w.loss_ns, 10 * MS);
	assert_int_equal(w.bound_id, c);
	/* b twice as fast: d now waits for c (12 + 12 = 24), not b (10 + 10) */
	assert_int_equal(whatif(m, wf, b, 2), 34 * MS);
	assert_int_equal(whatif(m, wf, b, INFINITY), 34 * MS);
	/* c off the path: nothing gained */
	assert_int_equal(whatif(m, wf, c, 2), 40 * MS);
	assert_int_equal(whatif(m, wf, c, 10), 40 * MS);
	/* a first: b and c both start 5 ms earlier; c's 2 ms wait stays */
	assert_int_equal(whatif(m, wf, a, 2), 35 * MS);
	assert_int_equal(whatif(m, wf, d, 2), 35 * MS);
	/* a slower b stays on the path */
	assert_int_equal(whatif(m, wf, b, 0.5), 60 * MS);
	/* the whole workflow: every step halves, c's wait after a stays */
	assert_int_equal(whatif(m, wf, wf, 2), 20 * MS);
	/* errors */
	assert_int_equal(critpath_whatif(model_store(m), wf, b, 0, &w, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(critpath_whatif(model_store(m), b, a, 2, &w, &err), -1);
	assert_non_null(strstr(err, "not under"));
	free(err);
	err = NULL;
	critpath_release(&cp);
	assert_int_equal(critpath_compute(model_store(m), 987654321, &cp, &err), -1);
	free(err);
	/* root 0: every workflow, the same path */
	if (critpath_compute(model_store(m), 0, &cp, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(cp.makespan_ns, 40 * MS);
	assert_int_equal(cp.nsteps, 3);
	critpath_release(&cp);
	model_free(m);
}

/* aten::mm (100..120 us) launches a 100 us kernel at 110 through
 * cudaLaunchKernel (102..106); aten::add runs after it on the thread.
 * The kernel ends last, so it bounds the step. */
static const char launch_trace[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
    "\"ts\":100,\"dur\":20},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
    "\"tid\":1,\"ts\":102,\"dur\":4,\"args\":{\"correlation\":42}},"
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":42,\"pid\":1,\"tid\":1,"
    "\"ts\":102},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,"
    "\"ts\":110,\"dur\":100,\"args\":{\"correlation\":42,\"stream\":7}},"
    "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":42,\"pid\":0,\"tid\":7,"
    "\"ts\":110,\"bp\":\"e\"},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,"
    "\"ts\":130,\"dur\":5}]}";

static void kernel_outlives_launch(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {.workflow = "wf", .step = "s"};
	if (importfx_fresh(f, launch_trace, &o, &err) < 0)
		fail_msg("%s", err);
	int64_t step = id_of(f, "s"), mm = id_of(f, "aten::mm"), rt = id_of(f, "cudaLaunchKernel"),
		k = id_of(f, "gemm"), add = id_of(f, "aten::add");
	struct model *m = open_model(f);
	struct critpath cp;
	if (critpath_compute(model_store(m), step, &cp, &err) < 0)
		fail_msg("%s", err);
	check_tiling(&cp);
	assert_int_equal(cp.makespan_ns, 110 * US);
	/* mm's own code until the launch, the launch call, the launch
	 * latency (the ac2g edge), the kernel */
	assert_int_equal(cp.nsteps, 4);
	assert_int_equal(cp.steps[0].phase_id, mm);
	assert_int_equal(cp.steps[0].what, CRITPATH_RUN);
	assert_int_equal(cp.steps[0].dur_ns, 2 * US);
	assert_int_equal(cp.steps[1].phase_id, rt);
	assert_int_equal(cp.steps[1].dur_ns, 4 * US);
	assert_int_equal(cp.steps[2].phase_id, k);
	assert_int_equal(cp.steps[2].what, CRITPATH_EDGE);
	assert_int_equal(cp.steps[2].edge_kind, EDGE_LAUNCH);
	assert_int_equal(cp.steps[2].dur_ns, 4 * US);
	assert_int_equal(cp.steps[3].phase_id, k);
	assert_int_equal(cp.steps[3].what, CRITPATH_RUN);
	assert_int_equal(cp.steps[3].on_path_ns, 100 * US);
	assert_int_equal(cp.wait_ns, 4 * US);
	assert_int_equal(cp.phases[0].phase_id, k);
	/* a kernel twice as fast: 110 + 50 - 100 */
	assert_int_equal(whatif(m, step, k, 2), 60 * US);
	/* no kernel at all: the thread bounds it (add ends at 135) */
	assert_int_equal(whatif(m, step, k, INFINITY), 35 * US);
	/* aten::add is off the path */
	assert_int_equal(whatif(m, step, add, 4), 110 * US);
	/* aten::mm twice as fast takes its launch and kernel with it:
	 * 1 + 2 + 4 (latency stays) + 50 */
	assert_int_equal(whatif(m, step, mm, 2), 57 * US);
	critpath_release(&cp);
	model_free(m);
}

/* The same launch, then cudaDeviceSynchronize (125..215) waits for the
 * kernel (110..210) and aten::add (220..225) runs after it returns.  The
 * sync edge puts the kernel on the host's path: a faster kernel lets the
 * call return, and add start, sooner. */
static const char sync_trace[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
    "\"ts\":100,\"dur\":20},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
    "\"tid\":1,\"ts\":102,\"dur\":4,\"args\":{\"correlation\":42}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,"
    "\"ts\":110,\"dur\":100,\"args\":{\"correlation\":42,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\","
    "\"pid\":1,\"tid\":1,\"ts\":125,\"dur\":90},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,"
    "\"ts\":220,\"dur\":5}]}";

static void sync_waits_on_kernel(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {.workflow = "wf", .step = "s"};
	if (importfx_fresh(f, sync_trace, &o, &err) < 0)
		fail_msg("%s", err);
	int64_t step = id_of(f, "s"), k = id_of(f, "gemm"),
		sync = id_of(f, "cudaDeviceSynchronize"), add = id_of(f, "aten::add");
	struct model *m = open_model(f);
	struct critpath cp;
	if (critpath_compute(model_store(m), step, &cp, &err) < 0)
		fail_msg("%s", err);
	check_tiling(&cp);
	assert_int_equal(cp.makespan_ns, 125 * US);
	/* ... the kernel, then the call's return 5 us after it, then add */
	size_t i = 0;
	while (i < cp.nsteps && !(cp.steps[i].phase_id == k && cp.steps[i].what == CRITPATH_RUN))
		i++;
	assert_true(i + 1 < cp.nsteps);
	assert_int_equal(cp.steps[i].dur_ns, 100 * US);
	assert_int_equal(cp.steps[i + 1].phase_id, sync);
	assert_int_equal(cp.steps[i + 1].what, CRITPATH_SYNC);
	assert_int_equal(cp.steps[i + 1].start_ns, cp.start_ns + 110 * US);
	assert_int_equal(cp.steps[i + 1].dur_ns, 5 * US);
	assert_int_equal(cp.steps[cp.nsteps - 1].phase_id, add);
	/* the call's own 90 us are not on the path: it waited */
	for (size_t j = 0; j < cp.nphases; j++)
		assert_false(cp.phases[j].phase_id == sync);
	assert_int_equal(cp.phases[0].phase_id, k);
	/* kernel twice as fast: it ends at 160, the call returns at 165, add
	 * runs 170..175: 75 us from 100 */
	assert_int_equal(whatif(m, step, k, 2), 75 * US);
	/* no kernel: the call returns as soon as it is made (125), add 130..135 */
	assert_int_equal(whatif(m, step, k, INFINITY), 35 * US);
	/* the call itself faster: it was waiting, nothing changes */
	assert_int_equal(whatif(m, step, sync, 2), 125 * US);
	critpath_release(&cp);
	model_free(m);
}

/* Steps with no declared dependency that ran one after the other in one
 * process: a 0..10 ms, then, after 2 ms that no record covers, b 12..20.
 * The path is a, the workflow's gap, b; never the workflow itself. */
static void steps_in_sequence(void **state)
{
	struct fx *f = *state;
	char text[512], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"step\": \"a\", \"start_ns\": %lld, \"end_ns\": %lld, \"host\": \"h\"}\n"
		 "{\"step\": \"b\", \"start_ns\": %lld, \"end_ns\": %lld, \"host\": \"h\"}\n",
		 T0, T0 + 10 * MS, T0 + 12 * MS, T0 + 20 * MS);
	struct import_opts o = {.workflow = "wf"};
	if (importfx_fresh(f, text, &o, &err) < 0)
		fail_msg("%s", err);
	int64_t wf = id_of(f, "wf"), a = id_of(f, "a"), b = id_of(f, "b");
	struct model *m = open_model(f);
	struct critpath cp;
	if (critpath_analyze(model_store(m), wf, 2, 2, &cp, &err) < 0)
		fail_msg("%s", err);
	check_tiling(&cp);
	assert_int_equal(cp.makespan_ns, 20 * MS);
	assert_int_equal(cp.nsteps, 3);
	assert_int_equal(cp.steps[0].phase_id, a);
	assert_int_equal(cp.steps[0].what, CRITPATH_RUN);
	assert_int_equal(cp.steps[0].dur_ns, 10 * MS);
	assert_int_equal(cp.steps[1].phase_id, wf);
	assert_int_equal(cp.steps[1].what, CRITPATH_GAP);
	assert_int_equal(cp.steps[1].dur_ns, 2 * MS);
	assert_int_equal(cp.steps[2].phase_id, b);
	assert_int_equal(cp.steps[2].what, CRITPATH_RUN);
	assert_int_equal(cp.wait_ns, 2 * MS);
	/* the phases on it: a and b, not the workflow */
	assert_int_equal(cp.nphases, 2);
	assert_int_equal(cp.phases[0].phase_id, a);
	assert_int_equal(cp.phases[1].phase_id, b);
	critpath_release(&cp);
	/* a twice as fast: b starts 5 ms sooner (the gap stays) */
	struct critpath_whatif w = whatif_full(m, wf, a, 2);
	assert_int_equal(w.makespan_ns, 15 * MS);
	assert_int_equal(w.shrink_ns, 10 * MS);
	assert_int_equal(w.loss_ns, 5 * MS);
	assert_int_equal(w.bound_id, 0);
	assert_int_equal(whatif(m, wf, b, INFINITY), 12 * MS);
	/* 1x: nothing changes, though a is on the path */
	w = whatif_full(m, wf, a, 1);
	assert_int_equal(w.makespan_ns, 20 * MS);
	assert_int_equal(w.observed_ns, 20 * MS);
	assert_int_equal(w.shrink_ns, 10 * MS);
	assert_int_equal(w.loss_ns, 0);
	/* the workflow as a whole: its steps halve, its gap stays */
	assert_int_equal(whatif(m, wf, wf, 2), 11 * MS);
	model_free(m);
}

/* Two steps at once on two hosts: a 0..10 ms, c 0..9.  Were a free, c
 * would bound the workflow: 9 ms, and the what-if says so. */
static void concurrent_step_bounds(void **state)
{
	struct fx *f = *state;
	char text[512], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"step\": \"a\", \"start_ns\": %lld, \"end_ns\": %lld, \"host\": \"h1\"}\n"
		 "{\"step\": \"c\", \"start_ns\": %lld, \"end_ns\": %lld, \"host\": \"h2\"}\n",
		 T0, T0 + 10 * MS, T0, T0 + 9 * MS);
	struct import_opts o = {.workflow = "wf"};
	if (importfx_fresh(f, text, &o, &err) < 0)
		fail_msg("%s", err);
	int64_t wf = id_of(f, "wf"), a = id_of(f, "a"), c = id_of(f, "c");
	struct model *m = open_model(f);
	struct critpath_whatif w = whatif_full(m, wf, a, INFINITY);
	assert_int_equal(w.observed_ns, 10 * MS);
	assert_int_equal(w.makespan_ns, 9 * MS);
	assert_int_equal(w.shrink_ns, 10 * MS);
	assert_int_equal(w.loss_ns, 10 * MS);
	assert_int_equal(w.bound_id, c);
	assert_int_equal(w.bound_track_id,
			 importfx_int(f, "SELECT id FROM tracks WHERE host = 'h2'"));
	/* c is off the path */
	w = whatif_full(m, wf, c, INFINITY);
	assert_int_equal(w.makespan_ns, 10 * MS);
	assert_int_equal(w.shrink_ns, 0);
	assert_int_equal(w.bound_id, 0);
	model_free(m);
}

/* An OTLP span of trace T under parent (none: ""), from t0 to t1 ms after
 * T0, on host node1, appended to sb. */
static void otlp_span(struct sbuf *sb, const char *id, const char *parent, const char *name, int t0,
		      int t1)
{
	sbuf_addf(sb,
		  "%s{\"traceId\":\"T\",\"spanId\":\"%s\",\"parentSpanId\":\"%s\","
		  "\"name\":\"%s\",\"startTimeUnixNano\":\"%lld\",\"endTimeUnixNano\":\"%lld\"}",
		  sb->len && sb->buf[sb->len - 1] == '}' ? "," : "", id, parent, name, T0 + t0 * MS,
		  T0 + t1 * MS);
}

/* A part of the workflow run 0..30 ms whose children ran one after
 * another: prepare 0..5, train 6..20, evaluate 21..30; run's own code in
 * the gaps.  Whatever importer made the parts, run is structure (its time
 * its children's and its gaps) and each leaf is work with its what-if. */
static void check_parts_in_sequence(struct fx *f)
{
	char *err = NULL;
	int64_t wf = id_of(f, "wf"), run = id_of(f, "run"), p = id_of(f, "prepare"),
		t = id_of(f, "train"), e = id_of(f, "evaluate");
	struct model *m = open_model(f);
	struct critpath cp;
	if (critpath_compute(model_store(m), wf, &cp, &err) < 0)
		fail_msg("%s", err);
	check_tiling(&cp);
	assert_int_equal(cp.makespan_ns, 30 * MS);
	assert_int_equal(cp.wait_ns, 0);
	int64_t want[] = {p, run, t, run, e}, len[] = {5 * MS, 1 * MS, 14 * MS, 1 * MS, 9 * MS};
	assert_int_equal(cp.nsteps, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(cp.steps[i].phase_id, want[i]);
		assert_int_equal(cp.steps[i].what, CRITPATH_RUN);
		assert_int_equal(cp.steps[i].dur_ns, len[i]);
	}
	assert_int_equal(cp.phases[0].phase_id, t);
	critpath_release(&cp);
	/* the report's what-ifs: train, the longest, then evaluate and
	 * prepare; run holds them and gets none */
	if (critpath_analyze(model_store(m), wf, 2, 4, &cp, &err) < 0)
		fail_msg("%s", err);
	int64_t order[] = {t, e, p, run}, at[] = {23 * MS, 25500 * US, 27500 * US, -1};
	assert_int_equal(cp.nphases, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(cp.phases[i].phase_id, order[i]);
		assert_int_equal(cp.phases[i].whatif_ns, at[i]);
	}
	assert_int_equal(cp.phases[0].bound_id, 0);
	critpath_release(&cp);
	/* train free: evaluate starts 14 ms sooner */
	assert_int_equal(whatif(m, wf, t, INFINITY), 16 * MS);
	assert_int_equal(whatif(m, wf, p, 2), 27500 * US);
	model_free(m);
}

/* The parts as OTLP spans on their host's track, run the root span. */
static void spans_in_sequence(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {.workflow = "wf"};
	struct sbuf doc = SBUF_INIT;
	sbuf_init(&doc);
	sbuf_adds(&doc, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":"
			"\"host.name\",\"value\":{\"stringValue\":\"node1\"}}]},"
			"\"scopeSpans\":[{\"spans\":[");
	otlp_span(&doc, "r", "", "run", 0, 30);
	otlp_span(&doc, "p", "r", "prepare", 0, 5);
	otlp_span(&doc, "t", "r", "train", 6, 20);
	otlp_span(&doc, "e", "r", "evaluate", 21, 30);
	sbuf_adds(&doc, "]}]}]}");
	int rc = importfx_fresh(f, doc.buf, &o, &err);
	sbuf_release(&doc);
	if (rc < 0)
		fail_msg("%s", err);
	check_parts_in_sequence(f);
}

/* The same parts as a manifest's steps (no track), run their parent. */
static void steps_nested_in_sequence(void **state)
{
	struct fx *f = *state;
	char text[1024], *err = NULL;
	static const struct {
		const char *name, *parent;
		int t0, t1;
	} steps[] = {{"run", NULL, 0, 30},
		     {"prepare", "run", 0, 5},
		     {"train", "run", 6, 20},
		     {"evaluate", "run", 21, 30}};
	size_t len = 0;
	for (size_t i = 0; i < 4; i++)
		len += (size_t)snprintf(
		    text + len, sizeof(text) - len,
		    "{\"step\": \"%s\", \"start_ns\": %lld, \"end_ns\": %lld%s%s%s}\n",
		    steps[i].name, T0 + steps[i].t0 * MS, T0 + steps[i].t1 * MS,
		    steps[i].parent ? ", \"parent\": \"" : "",
		    steps[i].parent ? steps[i].parent : "", steps[i].parent ? "\"" : "");
	struct import_opts o = {.workflow = "wf"};
	if (importfx_fresh(f, text, &o, &err) < 0)
		fail_msg("%s", err);
	check_parts_in_sequence(f);
}

/* A copy from or to pageable memory holds its cudaMemcpyAsync (100..200,
 * under aten::copy_ 99..201) while it runs: the host to device copy
 * (110..205) ends after the call returns, the device to host one (150..190)
 * before; aten::add (210..215) runs after.  A faster copy returns the call,
 * and starts add, sooner. */
static const char pageable_trace[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":1,\"tid\":1,"
    "\"ts\":99,\"dur\":102},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,"
    "\"tid\":1,\"ts\":100,\"dur\":100,\"args\":{\"correlation\":42}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy %s\",\"pid\":0,\"tid\":7,"
    "\"ts\":%d,\"dur\":%d,\"args\":{\"correlation\":42,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,"
    "\"ts\":210,\"dur\":5}]}";

static void pageable_copy_holds_call(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *name;
		int ts, dur;
		int64_t twice, gone; /* makespans: the copy twice as fast, and without it */
	} cases[] = {
	    /* the call returns at 200 while the copy ends at 205: from its start
	     * the copy holds the call 90 us; twice as fast, 45: the call returns
	     * at 155, aten::copy_ at 156, add runs 165..170 (71 us from 99) */
	    {"HtoD (Pageable -> Device)", 110, 95, 71 * US, 26 * US},
	    /* the call returns 10 us after its copy ends: twice as fast (150..170)
	     * it returns at 180 and add runs 190..195 */
	    {"DtoH (Device -> Pageable)", 150, 40, 96 * US, 76 * US},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		char text[2048], *err = NULL, name[64];
		snprintf(text, sizeof(text), pageable_trace, cases[c].name, cases[c].ts,
			 cases[c].dur);
		snprintf(name, sizeof(name), "Memcpy %s", cases[c].name);
		struct import_opts o = {.workflow = "wf", .step = "s"};
		if (importfx_fresh(f, text, &o, &err) < 0)
			fail_msg("%s", err);
		int64_t step = id_of(f, "s"), copy = id_of(f, name),
			call = id_of(f, "cudaMemcpyAsync");
		struct model *m = open_model(f);
		struct critpath cp;
		if (critpath_compute(model_store(m), step, &cp, &err) < 0)
			fail_msg("%s", err);
		check_tiling(&cp);
		assert_int_equal(cp.makespan_ns, 116 * US);
		assert_int_equal(whatif(m, step, copy, 2), cases[c].twice);
		assert_int_equal(whatif(m, step, copy, INFINITY), cases[c].gone);
		/* the call faster is its copy faster (the copy is under it) */
		assert_int_equal(whatif(m, step, call, 2), cases[c].twice);
		critpath_release(&cp);
		model_free(m);
	}
}

/* Is phase id under root (or root itself)? */
static int under(struct fx *f, int64_t id, int64_t root)
{
	sqlite3_stmt *q = importfx_query(
	    f, "WITH RECURSIVE up(id) AS (SELECT ?1 UNION ALL SELECT p.parent_id FROM phases p"
	       " JOIN up ON p.id = up.id WHERE p.parent_id IS NOT NULL)"
	       " SELECT count(*) FROM up WHERE id = ?2");
	sqlite3_bind_int64(q, 1, id);
	sqlite3_bind_int64(q, 2, root);
	int r = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) > 0;
	sqlite3_finalize(q);
	return r;
}

static void check_real(struct fx *f, struct model *m, int64_t root)
{
	struct critpath cp;
	char *err = NULL;
	if (critpath_compute(model_store(m), root, &cp, &err) < 0)
		fail_msg("%s", err);
	check_tiling(&cp);
	/* the window: the root's own, or longer where device work outlives it */
	sqlite3_stmt *q = importfx_query(
	    f, "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT p.id FROM phases p"
	       " JOIN sub ON p.parent_id = sub.id WHERE p.kind <> ?2)"
	       " SELECT min(p.start_ns), max(p.start_ns + p.dur_ns), count(*),"
	       " (SELECT start_ns FROM phases WHERE id = ?1),"
	       " (SELECT start_ns + dur_ns FROM phases WHERE id = ?1)"
	       " FROM sub JOIN phases p ON p.id = sub.id");
	sqlite3_bind_int64(q, 1, root);
	sqlite3_bind_int(q, 2, PHASE_GPU_ANNOTATION);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	int64_t lo = sqlite3_column_int64(q, 0), hi = sqlite3_column_int64(q, 1);
	int64_t n = sqlite3_column_int64(q, 2), rs = sqlite3_column_int64(q, 3),
		re = sqlite3_column_int64(q, 4);
	sqlite3_finalize(q);
	assert_int_equal(cp.start_ns, lo);
	assert_int_equal(cp.start_ns, rs);
	assert_true(cp.start_ns + cp.makespan_ns >= re);
	assert_true(cp.start_ns + cp.makespan_ns <= hi);
	assert_true(cp.nphases_graph > 1 && cp.nphases_graph <= n);
	/* it goes through the trace, not only the root */
	assert_true(cp.nphases > 10);
	for (size_t i = 0; i < cp.nsteps; i++)
		if (!under(f, cp.steps[i].phase_id, root))
			fail_msg("step %zu: phase %lld is not under %lld", i,
				 (long long)cp.steps[i].phase_id, (long long)root);
	/* what-if: k = 1 is the baseline; speeding up the leaf with the most
	 * time on the path gains something, and at most what it shrank */
	assert_int_equal(whatif(m, root, root, 1), cp.makespan_ns);
	int64_t leaf = 0, on = 0;
	for (size_t i = 0; i < cp.nphases && !leaf; i++) {
		q = importfx_query(f, "SELECT child_count FROM phases WHERE id = ?1");
		sqlite3_bind_int64(q, 1, cp.phases[i].phase_id);
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) == 0) {
			leaf = cp.phases[i].phase_id;
			on = cp.phases[i].on_path_ns;
		}
		sqlite3_finalize(q);
	}
	assert_true(leaf && on > 0);
	int64_t w = whatif(m, root, leaf, 2);
	assert_true(w < cp.makespan_ns);
	assert_true(w >= cp.makespan_ns - on / 2 - 1);
	/* the whole root twice as fast: never slower, never better than half */
	w = whatif(m, root, root, 2);
	assert_true(w <= cp.makespan_ns && w >= cp.makespan_ns / 2);
	critpath_release(&cp);
}

/* train.pt.trace.json.gz under its manifest step, as import.sh does. */
static void real_train(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	importfx_reset(f);
	char *manifest[] = {GPU "/workflow.jsonl"}, *trace[] = {GPU "/train.pt.trace.json.gz"};
	struct import_opts wo = {.workflow = "gpu"};
	struct import_opts to = {.workflow = "gpu", .step = "train", .host = "vm"};
	if (import_files(f->db, manifest, 1, NULL, &wo, &err) < 0 ||
	    import_files(f->db, trace, 1, NULL, &to, &err) < 0)
		fail_msg("%s", err);
	struct model *m = open_model(f);
	int64_t train = importfx_int(f, "SELECT id FROM phases_v WHERE kind = 'step'"
					" AND name = 'train'");
	check_real(f, m, train);
	/* a ProfilerStep: its kernels may end after it */
	int64_t ps = importfx_int(f, "SELECT id FROM phases_v WHERE kind = 'profiler_step'"
				     " ORDER BY dur_ns DESC LIMIT 1");
	assert_true(ps > 0);
	check_real(f, m, ps);
	/* the step's path is bound by its manifest window: the trace sits
	 * inside it, the rest of the window is the step's own time */
	struct critpath cp;
	if (critpath_compute(model_store(m), train, &cp, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(cp.makespan_ns,
			 importfx_int(f, "SELECT dur_ns FROM phases WHERE id = (SELECT id FROM"
					 " phases_v WHERE kind = 'step' AND name = 'train')"));
	assert_int_equal(cp.steps[0].phase_id, train);
	critpath_release(&cp);
	model_free(m);
}

/* Kineto's bookkeeping: the profiler's trace span opens 100 us before the
 * first op and closes long after the last one.  It is no work: the path
 * runs from aten::mm's start to aten::add's end, and none of it lies on a
 * phase of kind profiler. */
static const char bookkeeping_trace[] =
    "{\"distributedInfo\":{\"rank\":0},\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
    "\"tid\":\"PyTorch Profiler\",\"ts\":0,\"dur\":1000},"
    "{\"name\":\"Iteration Start: PyTorch Profiler\",\"ph\":\"i\",\"s\":\"g\","
    "\"pid\":\"Traces\",\"tid\":\"Trace PyTorch Profiler\",\"ts\":0},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
    "\"ts\":100,\"dur\":50},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,"
    "\"ts\":200,\"dur\":30},"
    "{\"name\":\"Record Window End\",\"ph\":\"i\",\"s\":\"g\",\"pid\":\"\",\"tid\":\"\","
    "\"ts\":1200}]}";

static void bookkeeping_off_path(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {.workflow = "wf", .step = "s"};
	if (importfx_fresh(f, bookkeeping_trace, &o, &err) < 0)
		fail_msg("%s", err);
	int64_t wf = id_of(f, "wf"), mm = id_of(f, "aten::mm");
	struct model *m = open_model(f);
	struct critpath cp;
	if (critpath_compute(model_store(m), wf, &cp, &err) < 0)
		fail_msg("%s", err);
	check_tiling(&cp);
	struct mnode n;
	assert_int_equal(model_phase(m, mm, &n, &err), 1);
	assert_int_equal(cp.start_ns, n.start_ns);
	assert_int_equal(cp.makespan_ns, 130 * US);
	for (size_t i = 0; i < cp.nsteps; i++) {
		if (model_phase(m, cp.steps[i].phase_id, &n, &err) < 0)
			fail_msg("%s", err);
		assert_int_not_equal(n.kind, PHASE_PROFILER);
	}
	critpath_release(&cp);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(diamond, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(steps_in_sequence, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(concurrent_step_bounds, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(spans_in_sequence, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(steps_nested_in_sequence, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(sync_waits_on_kernel, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(kernel_outlives_launch, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(pageable_copy_holds_call, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(real_train, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(bookkeeping_off_path, setup, importfx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
