/*
 * Unit tests for model/analysis/aggr.h: the summaries of a subtree by name, on a
 * small Chrome trace whose figures are worked out by hand below; then the
 * same trace with a parent's id moved past its child's (the tree walk
 * instead of the scan: the same figures) and with a parent cycle (an
 * error, not a hang).  The annotations on a trace of their own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importers/importer.h"
#include "model/analysis/aggr.h"
#include "model/analysis/gpubreak.h"
#include "model/view/model.h"
#include "model/store/ptree.h"
#include "tests/importfx.h"

static int setup(void **state)
{
	return importfx_setup(state, "aggr", "trace.json");
}

static int teardown(void **state)
{
	return importfx_teardown(state);
}

#define OP(name, ts, dur)                                                                          \
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts   \
	",\"dur\":" #dur "},"
#define RT(name, ts, dur, corr)                                                                    \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,"        \
	"\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}},"
#define DEV(cat, name, ts, dur, corr, more)                                                        \
	"{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts  \
	",\"dur\":" #dur ",\"args\":{\"stream\":7,\"device\":0,\"correlation\":" #corr more "}}"

/*
 * Times in microseconds.  ProfilerStep#1 (0..1000):
 *   aten::linear 10..200 (self 105)
 *     aten::addmm 20..100 (self 76)
 *       cudaLaunchKernel 30 -> gemm 300..340 (40)
 *       cudaLaunchKernel 40 -> gemm 350..360 (10)
 *     cudaMemcpyAsync 120..125 -> Memcpy HtoD 370..380 (10), 1e6 bytes
 *   aten::relu 300..320 (self 18)
 *     cudaLaunchKernel 305 -> relu_k 400..430 (30)
 *   aten::linear 500..600 (self 98)
 *     cudaLaunchKernel 510 -> gemm 610..640 (30)
 *   cudaLaunchKernel 700 -> ncclKernel_AllReduce 710..810 (100)
 *   cudaDeviceSynchronize 820..900
 * ProfilerStep#2 (1000..2000): aten::relu 1100..1150, its launch at 1105
 *   -> relu_k 1200..1220 (20).
 */
static const char trace_json[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,"
    "\"tid\":1,\"ts\":0,\"dur\":1000}," OP("aten::linear", 10, 190) OP("aten::addmm", 20, 80) RT(
	"cudaLaunchKernel", 30, 2, 1) RT("cudaLaunchKernel", 40, 2,
					 2) RT("cudaMemcpyAsync", 120, 5,
					       3) OP("aten::relu", 300,
						     20) RT("cudaLaunchKernel", 305, 2,
							    4) OP("aten::linear", 500, 100)
	RT("cudaLaunchKernel", 510, 2, 5) RT("cudaLaunchKernel", 700, 2, 6) RT(
	    "cudaDeviceSynchronize",
	    820, 80,
	    8) "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,"
	       "\"tid\":1,\"ts\":1000,\"dur\":1000}," OP("aten::relu", 1100,
							 50) RT("cudaLaunchKernel", 1105, 2, 7)
		   DEV("kernel", "gemm", 300, 40, 1, "") "," DEV("kernel", "gemm", 350, 10, 2, "") "," DEV(
		       "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)",
		       370, 10, 3,
		       ",\"bytes\":1000000") "," DEV("kernel", "relu_k", 400, 30, 4,
						     "") "," DEV("kernel", "gemm", 610, 30, 5,
								 "") "," DEV("kernel",
									     "ncclKernel_"
									     "AllReduce",
									     710, 100, 6,
									     "") "," DEV("kerne"
											 "l",
											 "relu_"
											 "k",
											 1200, 20,
											 7, "") "]"
												"}";

static void import(struct fx *f)
{
	char *err = NULL;
	if (importfx_fresh(f, trace_json, NULL, &err) < 0)
		fail_msg("import: %s", err ? err : "?");
}

/* The summary of the phase the query's first row names (0: the file). */
static int compute(struct fx *f, const char *root_sql, enum aggr_what what, struct aggr *a,
		   char **err)
{
	int64_t root = root_sql ? importfx_int(f, root_sql) : 0;
	if (f->conn) { /* the model reads the file on a connection of its own */
		sqlite3_close(f->conn);
		f->conn = NULL;
	}
	struct model *m;
	if (model_open(f->db, &m, err) < 0)
		fail_msg("model_open: %s", *err ? *err : "?");
	int rc = aggr_compute(model_store(m), root, what, a, err);
	model_free(m);
	return rc;
}

static const char step1[] = "SELECT id FROM phases_v WHERE name = 'ProfilerStep#1'";

static void summarise(struct fx *f, const char *root_sql, enum aggr_what what, struct aggr *a)
{
	char *err = NULL;
	if (compute(f, root_sql, what, a, &err) < 0)
		fail_msg("aggr_compute: %s", err ? err : "?");
}

static const struct aggr_row *row(const struct aggr *a, const char *name)
{
	for (size_t i = 0; i < a->nrows; i++)
		if (!strcmp(a->rows[i].name, name))
			return &a->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

static int64_t first_of(struct fx *f, const char *name)
{
	char sql[160];
	snprintf(sql, sizeof(sql),
		 "SELECT id FROM phases_v WHERE name = '%s' ORDER BY start_ns, id LIMIT 1", name);
	return importfx_int(f, sql);
}

/* The kernels of ProfilerStep#1, checked figure by figure. */
static void check_kernels(struct fx *f)
{
	struct aggr a;
	summarise(f, step1, AGGR_KERNELS, &a);
	assert_int_equal(a.nrows, 4);
	assert_int_equal(a.total_ns, 220000);
	assert_false(a.median_cut);
	/* by total: nccl 100, gemm 80, relu_k 30, the copy 10 */
	assert_string_equal(a.rows[0].name, "ncclKernel_AllReduce");
	assert_string_equal(a.rows[1].name, "gemm");
	assert_string_equal(a.rows[2].name, "relu_k");
	assert_string_equal(a.rows[3].name, "Memcpy HtoD (Pageable -> Device)");
	assert_int_equal(a.rows[0].type, GPUBREAK_COMM);
	assert_int_equal(a.rows[1].type, GPUBREAK_COMP);
	assert_int_equal(a.rows[3].type, GPUBREAK_MEM);
	const struct aggr_row *g = row(&a, "gemm");
	assert_int_equal(g->count, 3);
	assert_int_equal(g->total_ns, 80000);
	assert_int_equal(g->min_ns, 10000);
	assert_int_equal(g->max_ns, 40000);
	assert_true(fabs(g->mean_ns - 80000.0 / 3) < 1e-6);
	assert_true(g->median_ns == 30000.0);
	/* deviations 40-26.67, 10-26.67, 30-26.67: squares 466.67e6 / 2 */
	assert_true(fabs(g->stddev_ns - sqrt(700e6 / 3)) < 1e-3);
	assert_int_equal(g->bytes, 0);
	assert_int_equal(g->first_id, first_of(f, "gemm"));
	const struct aggr_row *c = &a.rows[3];
	assert_int_equal(c->kind, PHASE_MEMCPY);
	assert_int_equal(c->bytes, 1000000);
	assert_true(a.rows[0].stddev_ns == 0.0); /* one instance */
	aggr_release(&a);
}

/* The operators of ProfilerStep#1: host total and self, and the device
 * work beneath each instance (the copy and both gemms under the first
 * aten::linear, one gemm under the second). */
static void check_ops(struct fx *f)
{
	struct aggr a;
	summarise(f, step1, AGGR_OPS, &a);
	assert_int_equal(a.nrows, 3);
	const struct aggr_row *l = &a.rows[0], *m = &a.rows[1], *r = &a.rows[2];
	assert_string_equal(l->name, "aten::linear");
	assert_int_equal(l->count, 2);
	assert_int_equal(l->total_ns, 290000);
	assert_int_equal(l->self_ns, 203000);
	assert_int_equal(l->device_ns, 90000);
	assert_int_equal(l->max_ns, 190000);
	assert_true(l->mean_ns == 145000.0);
	assert_true(isnan(l->median_ns));
	assert_string_equal(m->name, "aten::addmm");
	assert_int_equal(m->self_ns, 76000);
	assert_int_equal(m->device_ns, 50000);
	assert_string_equal(r->name, "aten::relu");
	assert_int_equal(r->device_ns, 30000);
	assert_int_equal(r->first_id, first_of(f, "aten::relu"));
	aggr_release(&a);
}

static void check_api(struct fx *f)
{
	struct aggr a;
	summarise(f, step1, AGGR_API, &a);
	assert_int_equal(a.nrows, 3);
	assert_string_equal(a.rows[0].name, "cudaDeviceSynchronize");
	assert_int_equal(a.rows[0].total_ns, 80000);
	const struct aggr_row *l = row(&a, "cudaLaunchKernel");
	assert_int_equal(l->count, 5); /* ProfilerStep#2's is not under #1 */
	assert_int_equal(l->total_ns, 10000);
	assert_int_equal(l->max_ns, 2000);
	aggr_release(&a);
}

static void test_step(void **state)
{
	struct fx *f = *state;
	import(f);
	check_kernels(f);
	check_ops(f);
	check_api(f);
}

/* Root 0, the whole file: relu_k twice, the median of 30 and 20 is 25. */
static void test_whole_file(void **state)
{
	struct fx *f = *state;
	import(f);
	struct aggr a;
	summarise(f, NULL, AGGR_KERNELS, &a);
	assert_int_equal(a.total_ns, 240000);
	const struct aggr_row *r = row(&a, "relu_k");
	assert_int_equal(r->count, 2);
	assert_true(r->median_ns == 25000.0);
	assert_int_equal(a.phases, importfx_int(f, "SELECT count(*) FROM phases"));
	aggr_release(&a);
}

/* The first gemm's launching call gets an id past its kernel's: the scan
 * cannot see the kernel as in the subtree, so the tree walk runs, with
 * the same figures. */
static void move_launch(struct fx *f)
{
	int64_t k = first_of(f, "gemm");
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "UPDATE phases SET id = 1000000 WHERE id = (SELECT parent_id FROM phases WHERE"
		 " id = %lld); UPDATE phases SET parent_id = 1000000 WHERE id = %lld",
		 (long long)k, (long long)k);
	sqlite3_finalize(importfx_query(f, "SELECT 1")); /* opens f->conn */
	assert_int_equal(sqlite3_exec(f->conn, sql, NULL, NULL, NULL), SQLITE_OK);
}

static void test_unordered(void **state)
{
	struct fx *f = *state;
	import(f);
	move_launch(f);
	check_kernels(f);
	check_ops(f);
	check_api(f);
}

/* ProfilerStep#1's parent made its own descendant: the walk stops with
 * the loop error. */
static void test_loop(void **state)
{
	struct fx *f = *state;
	import(f);
	move_launch(f);
	sqlite3_finalize(importfx_query(f, "SELECT 1"));
	assert_int_equal(sqlite3_exec(f->conn,
				      "UPDATE phases SET parent_id = (SELECT id FROM phases_v WHERE"
				      " name = 'relu_k' ORDER BY id LIMIT 1) WHERE id = (SELECT id"
				      " FROM phases_v WHERE name = 'ProfilerStep#1')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	struct aggr a;
	char *err = NULL;
	assert_int_equal(compute(f, step1, AGGR_KERNELS, &a, &err), PTREE_LOOP);
	assert_non_null(err);
	free(err);
	assert_int_equal(a.nrows, 0);
}

/* Two ranks meet at one NCCL all-reduce (times in microseconds from a
 * common base): rank 0 computes 10..110 and arrives at 120 (until 220),
 * rank 1 computes 10..160 and arrives at 170 (until 220).  Rank 1 is the
 * straggler; rank 0 waits 50.  Each: step 0..220 (the launches at 0 and
 * 5), device window 10..220 with 10 idle (4.76%). */
#define RANK_TRACE(r, g0, g1, n0, n1)                                                              \
	"{\"distributedInfo\":{\"rank\":" #r ",\"world_size\":2,\"backend\":\"nccl\"},"            \
	"\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","   \
	"\"pid\":1,\"tid\":1,\"ts\":1700000000000000,\"dur\":2,\"args\":{\"correlation\":1}},"     \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"          \
	"\"tid\":1,\"ts\":1700000000000005,\"dur\":2,\"args\":{\"correlation\":2}},"               \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,"                  \
	"\"ts\":17000000000000" #g0 ",\"dur\":" #g1 ",\"args\":{\"stream\":7,\"correlation\":1}}," \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce\",\"pid\":0,\"tid\":7,"  \
	"\"ts\":1700000000000" #n0 ",\"dur\":" #n1 ",\"args\":{\"stream\":7,\"correlation\":2}}]}"

static void test_ranks(void **state)
{
	struct fx *f = *state;
	char p0[320], p1[320], *err = NULL;
	snprintf(p0, sizeof(p0), "%s/r0.json", f->dir);
	snprintf(p1, sizeof(p1), "%s/r1.json", f->dir);
	importfx_write(p0, RANK_TRACE(0, 10, 100, 120, 100));
	importfx_write(p1, RANK_TRACE(1, 10, 150, 170, 50));
	char *paths[] = {p0, p1};
	struct import_opts o = {.workflow = "w", .step = "s"};
	importfx_reset(f);
	if (import_files(f->db, paths, 2, NULL, &o, &err) < 0)
		fail_msg("import: %s", err ? err : "?");
	int64_t step = importfx_int(f, "SELECT id FROM phases_v WHERE kind = 'step'");
	int64_t wf = importfx_int(f, "SELECT id FROM phases_v WHERE kind = 'workflow'");
	int64_t k = first_of(f, "gemm");
	sqlite3_close(f->conn);
	f->conn = NULL;
	struct model *m;
	if (model_open(f->db, &m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	struct aggr_rank *r;
	size_t n;
	int64_t got;
	char *why = NULL;
	/* from a kernel of rank 0, up to its step */
	assert_int_equal(aggr_ranks(model_store(m), k, &got, &r, &n, &why, &err), 0);
	assert_int_equal(got, step);
	assert_null(why);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].name, "rank 0");
	assert_string_equal(r[1].name, "rank 1");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].dur_ns, 220000);
		assert_true(fabs(r[i].idle_pct - 100.0 * 10 / 210) < 1e-9);
	}
	assert_int_equal(r[0].compute_ns, 100000);
	assert_int_equal(r[0].comm_ns, 100000);
	assert_int_equal(r[1].compute_ns, 150000);
	assert_int_equal(r[1].comm_ns, 50000);
	assert_int_equal(r[0].wait_ns, 50000);
	assert_int_equal(r[1].wait_ns, 0);
	assert_false(r[0].straggler);
	assert_true(r[1].straggler);
	aggr_ranks_release(r, n);
	/* the workflow is above every step: no rows, and why */
	assert_int_equal(aggr_ranks(model_store(m), wf, &got, &r, &n, &why, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(got, 0);
	assert_non_null(why);
	assert_non_null(strstr(why, "the parts beneath it hold theirs"));
	free(why);
	model_free(m);
}

/* A step with no ranks (a trace without distributedInfo): none, not an
 * error; under UBSan (make SANITIZE=1) also no qsort of the NULL array. */
static void test_ranks_none(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	import(f);
	int64_t step = importfx_int(f, "SELECT id FROM phases_v WHERE kind = 'step'");
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'rank'"), 0);
	sqlite3_close(f->conn);
	f->conn = NULL;
	struct model *m;
	if (model_open(f->db, &m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	struct aggr_rank *r = NULL;
	size_t n = 1;
	int64_t got;
	char *why = NULL;
	assert_int_equal(aggr_ranks(model_store(m), step, &got, &r, &n, &why, &err), 0);
	assert_int_equal(got, 0);
	assert_int_equal(n, 0);
	assert_non_null(why);
	assert_non_null(strstr(why, "no ranks at or above it"));
	free(why);
	aggr_ranks_release(r, n);
	model_free(m);
}

/*
 * Microseconds.  On the host, ProfilerStep#1 0..1000 holds "## fwd ##"
 * 10..400 and, nested in it, another "## fwd ##" 20..200 whose aten::mm
 * 30..100 launches gemm 300..340 (40) at 40; then "load" 500..900.  On the
 * GPU's annotation lane: ProfilerStep#1 again 300..400 (the step's device
 * side, no annotation), "## fwd ##" 300..345 and "gpu only" 350..360.
 */
static const char annot_json[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
    "\"ts\":0,\"dur\":1000,\"args\":{}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"## fwd "
    "##\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":390,\"args\":{}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"## fwd "
    "##\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":180,\"args\":{}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":"
    "70,\"args\":{}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":40,\"dur\":2,\"args\":{\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"load\",\"pid\":1,\"tid\":1,\"ts\":500,"
    "\"dur\":400,\"args\":{}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":40,"
    "\"args\":{\"stream\":7,\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":0,\"tid\":7,"
    "\"ts\":300,\"dur\":100,\"args\":{\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"## fwd "
    "##\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":45,\"args\":{\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"gpu "
    "only\",\"pid\":0,\"tid\":7,\"ts\":350,\"dur\":10,\"args\":{\"stream\":7}}]}";

/* Each instance counts, a nested one of the same name too (HTA sums
 * them all); device time is each instance's union, summed; the GPU side
 * apart; the step's GPU side and the annotation lane's node are none. */
static void test_annotations(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_fresh(f, annot_json, NULL, &err) < 0)
		fail_msg("import: %s", err ? err : "?");
	struct aggr a;
	summarise(f, NULL, AGGR_ANNOTATIONS, &a);
	assert_int_equal(a.nrows, 3);
	const struct aggr_row *fwd = &a.rows[0], *load = &a.rows[1], *gpu = &a.rows[2];
	assert_string_equal(fwd->name, "## fwd ##");
	assert_int_equal(fwd->count, 2);
	assert_int_equal(fwd->total_ns, 570000);
	assert_int_equal(fwd->self_ns, 210000 + 110000);
	assert_int_equal(fwd->device_ns, 80000);
	assert_int_equal(fwd->min_ns, 180000);
	assert_int_equal(fwd->max_ns, 390000);
	assert_true(fwd->mean_ns == 285000.0);
	assert_int_equal(fwd->gpu_count, 1);
	assert_int_equal(fwd->gpu_ns, 45000);
	assert_int_equal(fwd->first_id, first_of(f, "## fwd ##"));
	assert_string_equal(load->name, "load");
	assert_int_equal(load->total_ns, 400000);
	assert_int_equal(load->device_ns, 0);
	assert_int_equal(load->gpu_count, 0);
	assert_string_equal(gpu->name, "gpu only");
	assert_int_equal(gpu->count, 0);
	assert_int_equal(gpu->gpu_count, 1);
	assert_int_equal(gpu->gpu_ns, 10000);
	assert_true(isnan(gpu->mean_ns));
	assert_int_equal(gpu->first_id, first_of(f, "gpu only"));
	aggr_release(&a);
	/* the step's subtree: its host annotations, the GPU lane is elsewhere */
	summarise(f, step1, AGGR_ANNOTATIONS, &a);
	assert_int_equal(a.nrows, 2);
	assert_int_equal(a.rows[0].gpu_count, 0);
	assert_int_equal(a.rows[0].total_ns, 570000);
	aggr_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_step, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_whole_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unordered, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_loop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ranks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ranks_none, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_annotations, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
