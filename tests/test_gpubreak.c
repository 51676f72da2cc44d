/*
 * Unit tests for model/analysis/gpubreak.h: HTA's GPU breakdowns over trace.db.
 *
 * Small Chrome traces written inline, whose figures are worked out by hand
 * in the comments, then real traces whose figures come from an independent
 * reference: tests/tools/hta_reference.py reads the raw JSON (not trace.db)
 * and printed tests/expected/gpubreak/NAME.txt (see the README there); the
 * test imports the same file, formats gpubreak's result in the same lines
 * and compares them all.  HTA's own sample traces live in ../shared/samples
 * and are skipped when it is absent; the H100 capture is in tests/data/gpu.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/analysis/gpubreak.h"
#include "model/view/model.h"
#include "model/util/sbuf.h"
#include "tests/importfx.h"
#include "tests/skip.h"
#include "model/util/xalloc.h"

#define SAMPLES	 "../shared/samples/chrome-trace/facebookresearch__HolisticTraceAnalysis__"
#define EXPECTED "tests/expected/gpubreak/"

static int setup(void **state)
{
	return importfx_setup(state, "gpubreak", "trace.json");
}

static int teardown(void **state)
{
	return importfx_teardown(state);
}

/* The breakdowns of f's trace.db with opts (NULL: defaults). */
static void load(struct fx *f, const struct gpubreak_opts *opts, struct gpubreak *g)
{
	char *err = NULL;
	struct model *m;
	if (model_open(f->db, &m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	if (gpubreak_load(model_store(m), opts, g, &err) < 0)
		fail_msg("gpubreak_load: %s", err ? err : "?");
	model_free(m);
}

/* Imports text and computes the breakdowns with opts (NULL: defaults). */
static void load_text(struct fx *f, const char *text, const struct gpubreak_opts *opts,
		      struct gpubreak *g)
{
	char *err = NULL;
	if (importfx_fresh(f, text, NULL, &err) < 0)
		fail_msg("import: %s", err ? err : "?");
	load(f, opts, g);
}

#define RT(ts, corr)                                                                               \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"          \
	"\"tid\":1,\"ts\":" #ts ",\"dur\":2,\"args\":{\"correlation\":" #corr "}},"
#define DEV(cat, name, stream, ts, dur, corr)                                                      \
	"{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #stream       \
	",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"stream\":" #stream ",\"device\":0,"          \
	"\"correlation\":" #corr "}}"

/*
 * One stream, times in microseconds:
 *   k1   100..110  launched at 90
 *   k2   112..122  launched at 95, before k1 ended: gap 2 < 30 -> kernel wait
 *   k3   200..220  launched at 150, after k2 ended at 122: gap 78 -> host wait
 *   k4   300..310  launched at 160, before 220: gap 80 >= 30 -> other
 *   cpy  315..320  "Memcpy DtoH", launched at 170: gap 5 -> kernel wait, MEMORY
 * Window 100..320 = 220 us; busy 10+10+20+10+5 = 55; idle 165 = 2+78+80+5;
 * compute 50 (the four kernels); non-compute 220-50-165 = 5 (the memcpy).
 */
static const char gaps_json[] = "{\"traceEvents\":[" RT(90, 1) RT(95, 2) RT(150, 3) RT(160, 4)
    RT(170, 5) DEV("kernel", "k1", 7, 100, 10, 1) "," DEV("kernel", "k2", 7, 112, 10, 2) "," DEV(
	"kernel", "k3", 7, 200, 20,
	3) "," DEV("kernel", "k4", 7, 300, 10,
		   4) "," DEV("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 7, 315, 5, 5) "]}";

static void test_stream_gaps(void **state)
{
	struct fx *f = *state;
	struct gpubreak g;
	load_text(f, gaps_json, NULL, &g);
	assert_int_equal(g.nranks, 1);
	const struct gpubreak_rank *r = &g.ranks[0];
	assert_int_equal(r->items, 5);
	assert_int_equal(r->left_out, 0);
	assert_int_equal(r->time.window_ns, 220000);
	assert_int_equal(r->time.idle_ns, 165000);
	assert_int_equal(r->time.compute_ns, 50000);
	assert_int_equal(r->time.noncompute_ns, 5000);
	assert_int_equal(r->type_ns[GPUBREAK_MEM], 5000);
	assert_int_equal(r->type_ns[GPUBREAK_COMP], 50000);
	assert_int_equal(r->type_ns[GPUBREAK_COMM], 0);
	assert_int_equal(r->mix_ns[1 << GPUBREAK_MEM], 5000);
	assert_int_equal(r->comm_ns, 0);

	assert_int_equal(r->nstreams, 1);
	const struct gpubreak_stream *s = &r->streams[0];
	assert_int_equal(s->items, 5);
	assert_int_equal(s->time.window_ns, 220000);
	assert_int_equal(s->idle.ns[GPUBREAK_HOST_WAIT], 78000);
	assert_int_equal(s->idle.count[GPUBREAK_HOST_WAIT], 1);
	assert_int_equal(s->idle.ns[GPUBREAK_KERNEL_WAIT], 7000);
	assert_int_equal(s->idle.count[GPUBREAK_KERNEL_WAIT], 2);
	assert_int_equal(s->idle.ns[GPUBREAK_OTHER_WAIT], 80000);
	assert_int_equal(s->idle.count[GPUBREAK_OTHER_WAIT], 1);

	/* the memcpy is the one MEMORY kernel; the four kernels are COMPUTATION,
	 * k3 the largest (20 us) */
	int mem = 0, comp = 0;
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct gpubreak_kernel *k = &r->kernels[i];
		if (k->type == GPUBREAK_MEM) {
			mem++;
			assert_string_equal(k->name, "Memcpy DtoH (Device -> Pinned)");
			assert_int_equal(k->sum_ns, 5000);
		} else if (k->type == GPUBREAK_COMP && comp++ == 0) {
			assert_string_equal(k->name, "k3");
		}
	}
	assert_int_equal(mem, 1);
	assert_int_equal(comp, 4);
	gpubreak_release(&g);

	/* a 1 us threshold turns the two short gaps (2 and 5 us) into "other" */
	struct gpubreak_opts o;
	gpubreak_default_opts(&o);
	o.kernel_wait_ns = 1000;
	load_text(f, gaps_json, &o, &g);
	s = &g.ranks[0].streams[0];
	assert_int_equal(s->idle.ns[GPUBREAK_KERNEL_WAIT], 0);
	assert_int_equal(s->idle.ns[GPUBREAK_OTHER_WAIT], 87000);
	assert_int_equal(s->idle.ns[GPUBREAK_HOST_WAIT], 78000);
	gpubreak_release(&g);
}

/* Runs sql on f's trace.db. */
static void exec(struct fx *f, const char *sql)
{
	sqlite3_stmt *s = importfx_query(f, sql);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
}

#define NAMED(name) " WHERE name_id = (SELECT id FROM strings WHERE text = '" name "')"

#define HOST(cat, name, tid, ts, dur)                                                              \
	"{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid          \
	",\"ts\":" #ts ",\"dur\":" #dur "},"
#define LAUNCH8(ts, kts, corr) RT(ts, corr) DEV("kernel", "small", 8, kts, 10, corr) ","

/*
 * The cause of each idle gap of stream 7 (model/analysis/idle.h), times in us; the
 * launching thread is tid 1, tid 2 a collective's worker:
 *   A 110..150   k2 was launched at 95, before the gap: queued, 40 <= 100
 *                us -> launch
 *   B 160..1005  tid 1 in no op while tid 2 is in gloo:all_reduce
 *                (170..990) -> communication
 *   C 1010..2005 the same collective, but tid 1 is in aten::cat: not its
 *                wait; no launch for 990 us -> host
 *   D 2010..3005 tid 1 in the annotation "## load_batch ##" -> input
 *   E 3010..3505 tid 1 in cudaStreamSynchronize (3003..3012) as it opens
 *                -> sync
 *   F 3510..4305 tid 1 launches onto stream 8 every 80 us -> launch
 *   G 4310..5000 k8 has no launching call -> host
 *   H 5010..5500 k9's launch (4320..4322) had returned before the gap:
 *                queued, and 490 > 100 us -> device
 */
static const char *const causes_parts[] = {
    "{\"traceEvents\":[" RT(90, 1) RT(95, 2) RT(1000, 3) RT(2000, 4) RT(3000, 5) RT(3500, 6)
	RT(4300, 7) RT(4320, 8),
    HOST("user_annotation", "gloo:all_reduce", 2, 170, 820)
	HOST("user_annotation", "gloo:all_reduce", 2, 1020, 970)
	    HOST("cpu_op", "aten::cat", 1, 1015, 980),
    HOST("user_annotation", "## load_batch ##", 1, 2015, 975)
	HOST("cuda_runtime", "cudaStreamSynchronize", 1, 3003, 9),
    LAUNCH8(3550, 3555, 20) LAUNCH8(3630, 3635, 21) LAUNCH8(3710, 3715, 22) LAUNCH8(3790, 3795, 23)
	LAUNCH8(3870, 3875, 24),
    LAUNCH8(3950, 3955, 25) LAUNCH8(4030, 4035, 26) LAUNCH8(4110, 4115, 27) LAUNCH8(4190, 4195, 28)
	LAUNCH8(4270, 4275, 29),
    DEV("kernel", "k1", 7, 100, 10, 1) "," DEV("kernel", "k2", 7, 150, 10, 2) ",",
    DEV("kernel", "k3", 7, 1005, 5, 3) "," DEV("kernel", "k4", 7, 2005, 5, 4) ",",
    DEV("kernel", "k5", 7, 3005, 5, 5) "," DEV("kernel", "k6", 7, 3505, 5, 6) ",",
    DEV("kernel", "k7", 7, 4305, 5, 7) "," DEV("kernel", "k8", 7, 5000, 10, 99) ",",
    DEV("kernel", "k9", 7, 5500, 10, 8) "]}",
};

static void test_idle_causes(void **state)
{
	struct fx *f = *state;
	struct gpubreak g;
	struct sbuf text = SBUF_INIT;
	sbuf_init(&text);
	for (size_t i = 0; i < sizeof(causes_parts) / sizeof(*causes_parts); i++)
		sbuf_adds(&text, causes_parts[i]);
	load_text(f, text.buf, NULL, &g);
	sbuf_release(&text);
	assert_int_equal(g.nranks, 1);
	const struct gpubreak_rank *r = &g.ranks[0];
	const struct gpubreak_stream *s = NULL;
	for (size_t i = 0; i < r->nstreams; i++)
		if (r->streams[i].items == 9)
			s = &r->streams[i];
	assert_non_null(s);
	static const int64_t ns[IDLE_NCAUSES] = {
	    [IDLE_LAUNCH] = 40000 + 795000, [IDLE_SYNC] = 495000,	   [IDLE_COMM] = 845000,
	    [IDLE_INPUT] = 995000,	    [IDLE_HOST] = 995000 + 690000, [IDLE_DEVICE] = 490000};
	static const int64_t gaps[IDLE_NCAUSES] = {2, 1, 1, 1, 2, 1};
	int64_t sum = 0;
	for (int c = 0; c < IDLE_NCAUSES; c++) {
		assert_int_equal(s->cause.ns[c], ns[c]);
		assert_int_equal(s->cause.gaps[c], gaps[c]);
		sum += s->cause.ns[c];
	}
	assert_int_equal(sum, s->time.idle_ns);
	/* the GPU's gaps (both streams) add up to its idle time too */
	sum = 0;
	for (int c = 0; c < IDLE_NCAUSES; c++)
		sum += r->cause.ns[c];
	assert_int_equal(sum, r->time.idle_ns);
	gpubreak_release(&g);

	/* the host side is read in one scan of the source's ids; a file whose
	 * ids do not follow its tree (here the annotation moved before the
	 * source's first id) is walked through the parent index instead, to the
	 * same causes */
	exec(f, "UPDATE phases SET id = -5" NAMED("## load_batch ##"));
	load(f, NULL, &g);
	s = NULL;
	for (size_t i = 0; i < g.ranks[0].nstreams; i++)
		if (g.ranks[0].streams[i].items == 9)
			s = &g.ranks[0].streams[i];
	assert_non_null(s);
	for (int c = 0; c < IDLE_NCAUSES; c++) {
		assert_int_equal(s->cause.ns[c], ns[c]);
		assert_int_equal(s->cause.gaps[c], gaps[c]);
	}
	gpubreak_release(&g);
}

/*
 * The same stream at the ends of int64 time (a trace.db is an ordinary
 * file: anyone may write one): k1 moved to start at INT64_MIN and the
 * memcpy given a duration that ends past INT64_MAX, so it ends there.  The
 * window and k1's gap to k2 (launched at 95 us, after k1 ended: host
 * wait) are longer than INT64_MAX ns: they read INT64_MAX.  What fits is
 * exact: compute 50 us, the memcpy's INT64_MAX - 315 us of MEMORY.
 */
static void test_extreme_times(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_fresh(f, gaps_json, NULL, &err) < 0)
		fail_msg("import: %s", err ? err : "?");
	exec(f, "UPDATE phases SET start_ns = -9223372036854775807 - 1" NAMED("k1"));
	exec(f, "UPDATE phases SET dur_ns = 9223372036854775807" NAMED(
		    "Memcpy DtoH (Device -> Pinned)"));
	sqlite3_close(f->conn);
	f->conn = NULL;
	struct gpubreak g;
	load(f, NULL, &g);
	assert_int_equal(g.nranks, 1);
	const struct gpubreak_rank *r = &g.ranks[0];
	assert_int_equal(r->items, 5);
	assert_true(r->time.window_ns == INT64_MAX);
	assert_int_equal(r->time.compute_ns, 50000);
	assert_true(r->type_ns[GPUBREAK_MEM] == INT64_MAX - 315000);
	assert_true(r->mix_ns[1 << GPUBREAK_MEM] == INT64_MAX - 315000);
	const struct gpubreak_stream *s = &r->streams[0];
	assert_true(s->time.window_ns == INT64_MAX);
	assert_true(s->idle.ns[GPUBREAK_HOST_WAIT] == INT64_MAX);
	assert_int_equal(s->idle.count[GPUBREAK_HOST_WAIT], 2);
	assert_int_equal(s->idle.ns[GPUBREAK_OTHER_WAIT], 80000);
	for (size_t i = 0; i < r->nkernels; i++)
		if (r->kernels[i].type == GPUBREAK_MEM)
			assert_true(r->kernels[i].sum_ns == INT64_MAX - 315000);
	gpubreak_release(&g);
}

/*
 * A compute kernel on stream 7 over 1000..1100 us and an NCCL kernel on
 * stream 20 over 1050..1150: half of the 100 us of communication runs under
 * computation.  Window 150, idle 0, compute 100, non-compute 50; alone:
 * COMP 1000..1050, both 1050..1100, COMM 1100..1150.
 */
static void test_comm_overlap(void **state)
{
	struct fx *f = *state;
	struct gpubreak g;
	load_text(f,
		  "{\"traceEvents\":[" RT(990, 1) RT(995, 2)
		      DEV("kernel", "gemm", 7, 1000, 100,
			  1) "," DEV("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 1050,
				     100, 2) "]}",
		  NULL, &g);
	assert_int_equal(g.nranks, 1);
	const struct gpubreak_rank *r = &g.ranks[0];
	assert_int_equal(r->comm_ns, 100000);
	assert_int_equal(r->overlap_ns, 50000);
	assert_int_equal(r->time.window_ns, 150000);
	assert_int_equal(r->time.idle_ns, 0);
	assert_int_equal(r->time.compute_ns, 100000);
	assert_int_equal(r->time.noncompute_ns, 50000);
	assert_int_equal(r->mix_ns[1 << GPUBREAK_COMP], 50000);
	assert_int_equal(r->mix_ns[(1 << GPUBREAK_COMP) | (1 << GPUBREAK_COMM)], 50000);
	assert_int_equal(r->mix_ns[1 << GPUBREAK_COMM], 50000);
	assert_int_equal(r->nstreams, 2);
	gpubreak_release(&g);
}

/* Host steps ProfilerStep#1 over [0, 100) us and #2 over [100, 200). */
#define TWO_STEPS                                                                                  \
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,"         \
	"\"tid\":1,\"ts\":0,\"dur\":100},"                                                         \
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,"         \
	"\"tid\":1,\"ts\":100,\"dur\":100},"

/*
 * Two profiler steps: step 1 over 0..100 us, step 2 from 100.  Kernel a is
 * launched at 10 (kept), b at 110 (in the last step: left out), c has no
 * launching call (left out, as HTA drops work with no correlated CPU
 * event).  With include_last_step all three count.
 */
static void test_last_step(void **state)
{
	struct fx *f = *state;
	static const char json[] = "{\"traceEvents\":[" TWO_STEPS RT(10, 1) RT(110, 2)
	    DEV("kernel", "a", 7, 50, 10, 1) "," DEV("kernel", "b", 7, 150, 10,
						     2) "," DEV("kernel", "c", 7, 60, 5, 99) "]}";
	struct gpubreak g;
	load_text(f, json, NULL, &g);
	assert_int_equal(g.nranks, 1);
	assert_int_equal(g.ranks[0].items, 1);
	assert_int_equal(g.ranks[0].left_out, 2);
	assert_int_equal(g.ranks[0].time.window_ns, 10000);
	assert_true(g.ranks[0].cutoff_ns > 0);
	gpubreak_release(&g);

	struct gpubreak_opts o;
	gpubreak_default_opts(&o);
	o.include_last_step = 1;
	load_text(f, json, &o, &g);
	assert_int_equal(g.ranks[0].items, 3);
	assert_int_equal(g.ranks[0].left_out, 0);
	assert_int_equal(g.ranks[0].time.window_ns, 110000); /* 50 .. 160 */
	gpubreak_release(&g);
}

/* Kineto copies each step onto the device stream, starting when the device
 * reaches it: ProfilerStep#2's copy starts at 150, after step 2's launch at
 * 110.  The cutoff is the host step's start (100), so kernel b, launched in
 * step 2, is left out as the rest of its step; the gap before it is the
 * kept step's last. */
static void test_last_step_device_copy(void **state)
{
	struct fx *f = *state;
	static const char json[] =
	    "{\"traceEvents\":[" TWO_STEPS
	    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":0,"
	    "\"tid\":7,\"ts\":50,\"dur\":10},"
	    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":0,"
	    "\"tid\":7,\"ts\":150,\"dur\":10}," RT(10, 1) RT(110, 2)
		DEV("kernel", "a", 7, 50, 10, 1) "," DEV("kernel", "b", 7, 150, 10, 2) "]}";
	struct gpubreak g;
	load_text(f, json, NULL, &g);
	assert_int_equal(g.nranks, 1);
	assert_int_equal(g.ranks[0].items, 1);
	assert_int_equal(g.ranks[0].left_out, 1);
	assert_int_equal(g.ranks[0].cutoff_ns, 100000);
	/* the kept step's last gap: from a's end (60) to b's start (150) */
	assert_int_equal(g.ranks[0].tail_ns, 90000);
	gpubreak_release(&g);
}

static void test_kernel_type(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int type;
	} cases[] = {
	    {"ncclKernel_AllReduce_RING_LL_Sum_float", GPUBREAK_COMM},
	    {"ncclDevKernel_AllGather_RING_LL", GPUBREAK_COMM},
	    {"gloo:all_reduce", GPUBREAK_COMM},
	    {"Memset (Device)", GPUBREAK_MEM},
	    {"Memcpy HtoD (Pageable -> Device)", GPUBREAK_MEM},
	    /* "nccl" must start the name, as in HTA, unless "ncclKernel" is in it */
	    {"void my_nccl_like_kernel", GPUBREAK_COMP},
	    {"void ncclKernel_SendRecv(ncclDevComm*)", GPUBREAK_COMM},
	    {"sm90_xmma_gemm_bf16", GPUBREAK_COMP},
	    /* HTA 0.6.1: ROCm's and Ascend's collectives, MTIA's DMA, and OTHER */
	    {"hipAllReduce", GPUBREAK_COMM},
	    {"hcclAllGather", GPUBREAK_COMM},
	    {"dma_request", GPUBREAK_MEM},
	    {"Stream Sync", GPUBREAK_OTHER},
	    {"Event Sync", GPUBREAK_OTHER},
	    {"Stream Wait Event", GPUBREAK_OTHER},
	    {"pe_exe", GPUBREAK_OTHER},
	    {"job_exe", GPUBREAK_OTHER},
	    {"runFunction", GPUBREAK_OTHER},
	    /* "Memcpy" not at the start is no transfer, and no compute either */
	    {"void fused_Memcpy_like", GPUBREAK_OTHER},
	    {"event_record", GPUBREAK_COMP},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		if (gpubreak_kernel_type(cases[i].name) != cases[i].type)
			fail_msg("'%s' is %s, not %s", cases[i].name,
				 gpubreak_type_name(gpubreak_kernel_type(cases[i].name)),
				 gpubreak_type_name(cases[i].type));
	assert_string_equal(gpubreak_type_name(GPUBREAK_OTHER), "OTHER");
}

/* The lines hta_reference.py prints, from gpubreak's result. */
static void format_rank(struct fx *f, const struct gpubreak_rank *r, struct sbuf *out)
{
	sbuf_addf(out, "rank %d items %lld left_out %lld\n", r->rank, (long long)r->items,
		  (long long)r->left_out);
	sbuf_addf(out, "temporal window_ns %lld idle_ns %lld compute_ns %lld noncompute_ns %lld\n",
		  (long long)r->time.window_ns, (long long)r->time.idle_ns,
		  (long long)r->time.compute_ns, (long long)r->time.noncompute_ns);
	for (int t = 0; t < GPUBREAK_NTYPES; t++)
		sbuf_addf(out, "type %s ns %lld\n", gpubreak_type_name(t),
			  (long long)r->type_ns[t]);
	/* the mask bits are the reference's too: COMMUNICATION 1, COMPUTATION 2,
	 * MEMORY 4 */
	for (int mask = 1; mask < 1 << GPUBREAK_NTYPES; mask++)
		if (r->mix_ns[mask])
			sbuf_addf(out, "mix %d ns %lld\n", mask, (long long)r->mix_ns[mask]);
	sbuf_addf(out, "overlap comm_ns %lld overlap_ns %lld\n", (long long)r->comm_ns,
		  (long long)r->overlap_ns);
	/* the reference names a stream by its work's `stream` argument, which
	 * is the tid for CUDA but not for MTIA (tid 3774 is "Stream 108") */
	sqlite3_stmt *q = importfx_query(
	    f, "SELECT t.pid || ':' || coalesce((SELECT json_extract(p.attrs, '$.stream') FROM"
	       " phases p WHERE p.track_id = t.id AND p.attrs IS NOT NULL LIMIT 1), t.tid)"
	       " FROM tracks t WHERE t.id = ?1");
	char **keys = xcalloc(r->nstreams + 1, sizeof(*keys));
	size_t *order = xcalloc(r->nstreams + 1, sizeof(*order));
	for (size_t i = 0; i < r->nstreams; i++) {
		sqlite3_bind_int64(q, 1, r->streams[i].track_id);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		keys[i] = xstrdup((const char *)sqlite3_column_text(q, 0));
		sqlite3_reset(q);
		order[i] = i;
	}
	sqlite3_finalize(q);
	/* the reference sorts streams by (pid, stream) as strings */
	for (size_t i = 1; i < r->nstreams; i++)
		for (size_t k = i; k > 0 && strcmp(keys[order[k - 1]], keys[order[k]]) > 0; k--) {
			size_t t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	for (size_t j = 0; j < r->nstreams; j++) {
		const struct gpubreak_stream *s = &r->streams[order[j]];
		const char *key = keys[order[j]];
		sbuf_addf(out,
			  "stream %s items %lld window_ns %lld idle_ns %lld compute_ns %lld"
			  " noncompute_ns %lld\n",
			  key, (long long)s->items, (long long)s->time.window_ns,
			  (long long)s->time.idle_ns, (long long)s->time.compute_ns,
			  (long long)s->time.noncompute_ns);
		for (int w = 0; w < GPUBREAK_NWAITS; w++)
			sbuf_addf(out, "idle %s %s ns %lld count %lld\n", key,
				  gpubreak_wait_name(w), (long long)s->idle.ns[w],
				  (long long)s->idle.count[w]);
	}
	for (size_t i = 0; i < r->nstreams; i++)
		free(keys[i]);
	free(keys);
	free(order);
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct gpubreak_kernel *k = &r->kernels[i];
		sbuf_addf(
		    out, "kernel %s names %lld count %lld sum_ns %lld min_ns %lld max_ns %lld %s\n",
		    gpubreak_type_name(k->type), (long long)k->names, (long long)k->count,
		    (long long)k->sum_ns, (long long)k->min_ns, (long long)k->max_ns, k->name);
	}
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	struct sbuf b = SBUF_INIT;
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		sbuf_add(&b, chunk, n);
	fclose(fp);
	return sbuf_detach(&b);
}

/* The tree and the breakdown agree on every stream: with the last step
 * kept, HTA's window, idle time and items of a stream are its node's
 * duration and self time and its track's spans; and every stream with
 * device work is in the breakdown. */
static void check_tree_agrees(struct fx *f, struct store *st)
{
	struct gpubreak_opts o;
	gpubreak_default_opts(&o);
	o.include_last_step = 1;
	struct gpubreak g;
	char *err = NULL;
	if (gpubreak_load(st, &o, &g, &err) < 0)
		fail_msg("gpubreak_load: %s", err ? err : "?");
	sqlite3_stmt *q = importfx_query(f, "SELECT p.dur_ns, p.self_ns, t.spans FROM tracks t"
					    " JOIN phases p ON p.id = t.phase_id WHERE t.id = ?1");
	size_t n = 0;
	for (size_t i = 0; i < g.nranks; i++)
		for (size_t k = 0; k < g.ranks[i].nstreams; k++, n++) {
			const struct gpubreak_stream *x = &g.ranks[i].streams[k];
			sqlite3_bind_int64(q, 1, x->track_id);
			assert_int_equal(sqlite3_step(q), SQLITE_ROW);
			assert_int_equal(sqlite3_column_int64(q, 0), x->time.window_ns);
			assert_int_equal(sqlite3_column_int64(q, 1), x->time.idle_ns);
			assert_int_equal(sqlite3_column_int64(q, 2), x->items);
			sqlite3_reset(q);
		}
	sqlite3_finalize(q);
	gpubreak_release(&g);
	assert_int_equal(n, importfx_int(f, "SELECT count(*) FROM tracks WHERE kind = 'stream'"
					    " AND spans > 0"));
}

/* Imports trace alone (skips when it is absent), opens it and computes its
 * breakdowns with the defaults into g; the caller frees the model. */
static struct model *load_sample(struct fx *f, const char *trace, struct gpubreak *g)
{
	if (access(trace, R_OK) != 0)
		skip_because("%s is absent", trace);
	importfx_reset(f);
	char *err = NULL;
	char *paths[] = {(char *)trace};
	struct import_opts none = {0};
	if (import_files(f->db, paths, 1, NULL, &none, &err) < 0)
		fail_msg("import %s: %s", trace, err ? err : "?");
	struct model *m;
	if (model_open(f->db, &m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	if (gpubreak_load(model_store(m), NULL, g, &err) < 0)
		fail_msg("gpubreak_load: %s", err ? err : "?");
	return m;
}

/* Imports trace, formats the breakdowns and compares every line with the
 * expected file but its '#' comments; then checks that the tree agrees. */
static void check_sample(struct fx *f, const char *trace, const char *expected_name)
{
	char path[512];
	snprintf(path, sizeof(path), EXPECTED "%s", expected_name);
	char *want = slurp(path);
	if (!want)
		fail_msg("cannot read %s", path);
	struct gpubreak g;
	struct model *m = load_sample(f, trace, &g);
	assert_int_equal(g.nranks, 1);
	struct sbuf got = SBUF_INIT;
	format_rank(f, &g.ranks[0], &got);
	gpubreak_release(&g);
	check_tree_agrees(f, model_store(m));
	model_free(m);

	/* drop the comments of the expected file */
	struct sbuf exp = SBUF_INIT;
	for (char *line = want; *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
		if (line[0] != '#')
			sbuf_add(&exp, line, len);
		line += len;
	}
	const char *a = exp.buf ? exp.buf : "", *b = got.buf ? got.buf : "";
	int line = 1;
	while (*a && *b && *a == *b) {
		if (*a == '\n')
			line++;
		a++;
		b++;
	}
	if (*a || *b) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		fail_msg("%s: line %d of the figures differs\n  reference: %.*s\n  gpubreak:  %.*s",
			 expected_name, line, ea ? (int)(ea - a) : (int)strlen(a), a,
			 eb ? (int)(eb - b) : (int)strlen(b), b);
	}
	sbuf_release(&exp);
	sbuf_release(&got);
	free(want);
}

static void test_hta_control(void **state)
{
	check_sample(*state, SAMPLES "control.json.gz", "hta_control.txt");
}

static void test_hta_test(void **state)
{
	check_sample(*state, SAMPLES "test.json.gz", "hta_test.txt");
}

static void test_hta_inference(void **state)
{
	check_sample(*state, SAMPLES "inference_rank_1.json.gz", "hta_inference_rank_1.txt");
}

/* Accelerators beyond CUDA: MTIA's command processor events on its streams,
 * ROCm's kernels and copies on an MI250 (whose runtime calls carry a stream
 * too, as text: no device work). */
static void test_hta_mtia(void **state)
{
	check_sample(*state, SAMPLES "mtia_inference_rank_0.json.gz",
		     "hta_mtia_inference_rank_0.txt");
}

/* MTIA's DMA is its copies: every dma_request on a stream counts among
 * the streams' copies, with the bytes of its "size", and is no compute. */
static void test_mtia_dma_copies(void **state)
{
	struct fx *f = *state;
	struct gpubreak g;
	struct model *m = load_sample(f, SAMPLES "mtia_inference_rank_0.json.gz", &g);
	int64_t dma = importfx_int(f, "SELECT count(*) FROM phases p JOIN tracks t ON"
				      " t.id = p.track_id JOIN strings s ON s.id = p.name_id"
				      " WHERE t.kind = 'stream' AND s.text = 'dma_request'");
	int64_t bytes = importfx_int(f, "SELECT sum(json_extract(p.attrs, '$.size')) FROM phases p"
					" JOIN strings s ON s.id = p.name_id"
					" WHERE s.text = 'dma_request'");
	assert_int_equal(g.nranks, 1);
	int64_t count = 0, sum = 0;
	for (size_t k = 0; k < g.ranks[0].nstreams; k++) {
		count += g.ranks[0].streams[k].copies.count;
		sum += g.ranks[0].streams[k].copies.bytes;
	}
	assert_true(dma > 0);
	assert_int_equal(count, dma);
	assert_int_equal(sum, bytes);
	assert_true(g.ranks[0].type_ns[GPUBREAK_MEM] > 0);
	assert_true(g.ranks[0].time.compute_ns <
		    g.ranks[0].time.window_ns - g.ranks[0].time.idle_ns);
	gpubreak_release(&g);
	model_free(m);
}

static void test_hta_mi250(void **state)
{
	check_sample(*state, SAMPLES "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
		     "hta_mi250_minitoy_train_ROCm6_2_kineto.txt");
}

static void test_h100_train(void **state)
{
	check_sample(*state, "tests/data/gpu/train.pt.trace.json.gz", "h100_train.txt");
}

static void test_h100_eval(void **state)
{
	check_sample(*state, "tests/data/gpu/eval.pt.trace.json.gz", "h100_eval.txt");
}

static void test_h100_ddp_rank0(void **state)
{
	check_sample(*state, "tests/data/gpu/ddp_rank0.pt.trace.json.gz", "h100_ddp_rank0.txt");
}

static void test_h100_ddp_rank1(void **state)
{
	check_sample(*state, "tests/data/gpu/ddp_rank1.pt.trace.json.gz", "h100_ddp_rank1.txt");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_stream_gaps),    T(test_comm_overlap),
	    T(test_last_step),	    T(test_last_step_device_copy),
	    T(test_kernel_type),    T(test_hta_control),
	    T(test_hta_test),	    T(test_hta_inference),
	    T(test_hta_mtia),	    T(test_mtia_dma_copies),
	    T(test_hta_mi250),	    T(test_h100_train),
	    T(test_h100_eval),	    T(test_h100_ddp_rank0),
	    T(test_h100_ddp_rank1), T(test_extreme_times),
	    T(test_idle_causes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
