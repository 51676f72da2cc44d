/*
 * The diff of two runs (model/analysis/diff.c) on two hand-built trace.db files
 * whose answer is known by construction: profiler steps merged across
 * their numbers, operators matched by name path (a runtime call or a span
 * on the way adds nothing), names added and removed, totals, means and ratios,
 * the order by the absolute difference, the first instance of each row,
 * a file whose child comes before its parent or whose ids are far apart,
 * a missing file, and a stop asked for at once or part-way.
 */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/diff.h"
#include "model/store/store.h"
#include "tests/testdir.h"

struct fx {
	char dir[256], a[300], b[300];
	int64_t a_relu, a_linear; /* ids in A */
	struct diff d;
};

static void put(struct store *st, int64_t id, int64_t parent, int kind, const char *name,
		int64_t start, int64_t dur, int64_t children, int depth)
{
	char *err = NULL;
	struct phase_row p = {0};
	p.id = id;
	p.parent_id = parent;
	p.kind = kind;
	p.name_id = store_intern(st, name, strlen(name), &err);
	p.start_ns = start;
	p.dur_ns = dur;
	p.self_ns = dur;
	p.child_count = children;
	p.depth = depth;
	assert_int_equal(store_add_phase(st, &p, &err), 0);
}

static int64_t add(struct store *st, int64_t parent, int kind, const char *name, int64_t start,
		   int64_t dur, int64_t children, int depth)
{
	int64_t id = store_reserve_phase_id(st);
	put(st, id, parent, kind, name, start, dur, children, depth);
	return id;
}

static struct store *create(const char *path)
{
	struct store *st;
	char *err = NULL;
	assert_int_equal(store_open(path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	return st;
}

static void finish(struct store *st)
{
	char *err = NULL;
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
}

/* A: wf 1000 / thread / ProfilerStep#1 100 { aten::linear 40 { aten::addmm
 * 30 { cudaLaunchKernel 5 { gemm 20, aten::empty 2 } } }, nn.Module: ReLU
 * (a span) { aten::relu 10 } }, ProfilerStep#2
 * 120 { aten::linear 50 { aten::addmm 35 } }; thread 2 / aten::copy_ 7.
 * B: wf 800 / thread / ProfilerStep#7 200 { aten::linear 90 { aten::addmm
 * 80, aten::t 0 }, aten::gelu 15 }, where aten::linear's id is after
 * aten::addmm's and aten::t's is 2^40. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_int_equal(testdir_make(f->dir, sizeof(f->dir), "diff"), 0);
	snprintf(f->a, sizeof(f->a), "%s/a.db", f->dir);
	snprintf(f->b, sizeof(f->b), "%s/b.db", f->dir);

	struct store *st = create(f->a);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 1000, 2, 0);
	int64_t th = add(st, wf, PHASE_THREAD, "thread 1", 0, 1000, 2, 1);
	int64_t s1 = add(st, th, PHASE_PROFILER_STEP, "ProfilerStep#1", 0, 100, 2, 2);
	f->a_linear = add(st, s1, PHASE_OPERATOR, "aten::linear", 0, 40, 1, 3);
	int64_t mm = add(st, f->a_linear, PHASE_OPERATOR, "aten::addmm", 0, 30, 1, 4);
	int64_t rt = add(st, mm, PHASE_RUNTIME, "cudaLaunchKernel", 0, 5, 2, 5);
	add(st, rt, PHASE_KERNEL, "gemm", 10, 20, 0, 6);
	add(st, rt, PHASE_OPERATOR, "aten::empty", 1, 2, 0, 6); /* under the call */
	int64_t py = add(st, s1, PHASE_SPAN, "nn.Module: ReLU", 50, 10, 1, 3);
	f->a_relu = add(st, py, PHASE_OPERATOR, "aten::relu", 50, 10, 0, 4);
	int64_t s2 = add(st, th, PHASE_PROFILER_STEP, "ProfilerStep#2", 200, 120, 1, 2);
	int64_t l2 = add(st, s2, PHASE_OPERATOR, "aten::linear", 200, 50, 1, 3);
	add(st, l2, PHASE_OPERATOR, "aten::addmm", 200, 35, 0, 4);
	int64_t t2 = add(st, wf, PHASE_THREAD, "thread 2", 0, 1000, 1, 1);
	add(st, t2, PHASE_OPERATOR, "aten::copy_", 500, 7, 0, 2);
	finish(st);

	st = create(f->b);
	wf = add(st, 0, PHASE_WORKFLOW, "wf", 5000, 800, 1, 0);
	th = add(st, wf, PHASE_THREAD, "thread 1", 5000, 800, 1, 1);
	s1 = add(st, th, PHASE_PROFILER_STEP, "ProfilerStep#7", 5000, 200, 2, 2);
	int64_t mm_id = store_reserve_phase_id(st), lin_id = store_reserve_phase_id(st);
	put(st, lin_id, s1, PHASE_OPERATOR, "aten::linear", 5000, 90, 2, 3);
	put(st, mm_id, lin_id, PHASE_OPERATOR, "aten::addmm", 5000, 80, 0, 4);
	add(st, s1, PHASE_OPERATOR, "aten::gelu", 5100, 15, 0, 3);
	/* ids too far apart for an array over them */
	put(st, (int64_t)1 << 40, lin_id, PHASE_OPERATOR, "aten::t", 5080, 0, 0, 4);
	finish(st);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	diff_release(&f->d);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static const struct diff_row *row(const struct diff *d, int level, const char *name)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].level == level && !strcmp(d->rows[i].name, name))
			return &d->rows[i];
	return NULL;
}

static void check_side(const struct diff_side *s, int64_t count, int64_t total)
{
	assert_int_equal(s->count, count);
	assert_int_equal(s->total_ns, total);
}

static void steps_merged(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(diff_compute(f->a, f->b, NULL, NULL, &f->d, &err), 0);
	const struct diff_row *r = row(&f->d, DIFF_STEP, "ProfilerStep#*");
	assert_non_null(r);
	check_side(&r->side[0], 2, 220);
	check_side(&r->side[1], 1, 200);
	assert_int_equal(diff_delta(r), -20);
	assert_true(fabs(diff_ratio(r) - 200.0 / 220.0) < 1e-15);
	assert_int_equal(f->d.run[0].makespan_ns, 1000);
	assert_int_equal(f->d.run[1].makespan_ns, 800);
	assert_int_equal(f->d.run[0].workflows, 1);
}

static void ops_by_path(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(diff_compute(f->a, f->b, NULL, NULL, &f->d, &err), 0);
	const struct diff_row *r = row(&f->d, DIFF_OP, "ProfilerStep#* > aten::linear");
	assert_non_null(r);
	check_side(&r->side[0], 2, 90);
	check_side(&r->side[1], 1, 90);
	assert_int_equal(r->side[0].first_id, f->a_linear);
	assert_int_equal(r->nparts, 2);
	assert_string_equal(r->parts[0], "ProfilerStep#*");
	assert_string_equal(r->parts[1], "aten::linear");
	/* B's aten::addmm comes before its parent in id order: still matched */
	r = row(&f->d, DIFF_OP, "ProfilerStep#* > aten::linear > aten::addmm");
	assert_non_null(r);
	check_side(&r->side[0], 2, 65);
	check_side(&r->side[1], 1, 80);
	assert_null(row(&f->d, DIFF_OP, "aten::addmm"));
	/* the runtime call adds nothing to the path of what is under it */
	r = row(&f->d, DIFF_OP, "ProfilerStep#* > aten::linear > aten::addmm > aten::empty");
	assert_non_null(r);
	check_side(&r->side[0], 1, 2);
	/* added, removed */
	r = row(&f->d, DIFF_OP, "ProfilerStep#* > aten::gelu");
	assert_non_null(r);
	check_side(&r->side[0], 0, 0);
	check_side(&r->side[1], 1, 15);
	assert_int_equal(r->side[0].first_id, 0);
	assert_true(isnan(diff_ratio(r)));
	r = row(&f->d, DIFF_OP, "ProfilerStep#* > aten::relu"); /* the span adds nothing */
	assert_non_null(r);
	assert_int_equal(r->side[0].first_id, f->a_relu);
	check_side(&r->side[1], 0, 0);
	assert_true(diff_ratio(r) == 0.0);
	r = row(&f->d, DIFF_OP, "aten::copy_");
	assert_non_null(r);
	check_side(&r->side[0], 1, 7);
	/* level sums */
	check_side(&f->d.run[0].level[DIFF_OP], 7, 174);
	check_side(&f->d.run[1].level[DIFF_OP], 4, 185);
	r = row(&f->d, DIFF_OP, "ProfilerStep#* > aten::linear > aten::t");
	assert_non_null(r);
	check_side(&r->side[0], 0, 0);
	check_side(&r->side[1], 1, 0);
	r = row(&f->d, DIFF_KERNEL, "gemm");
	assert_non_null(r);
	check_side(&r->side[0], 1, 20);
	check_side(&r->side[1], 0, 0);
	r = row(&f->d, DIFF_RUNTIME, "cudaLaunchKernel");
	assert_non_null(r);
	check_side(&r->side[0], 1, 5);
}

static void sorted_by_abs_diff(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(diff_compute(f->a, f->b, NULL, NULL, &f->d, &err), 0);
	static const char *const want[] = {
	    "ProfilerStep#* > aten::gelu",		   /* +15, and ahead of addmm by name */
	    "ProfilerStep#* > aten::linear > aten::addmm", /* +15 */
	    "ProfilerStep#* > aten::relu",		   /* -10 */
	    "aten::copy_",				   /* -7 */
	    "ProfilerStep#* > aten::linear > aten::addmm > aten::empty", /* -2 */
	    "ProfilerStep#* > aten::linear",				 /* 0 */
	    "ProfilerStep#* > aten::linear > aten::t",			 /* 0 */
	};
	size_t i = 0;
	while (i < f->d.nrows && f->d.rows[i].level != DIFF_OP)
		i++;
	assert_int_equal(f->d.rows[0].level, DIFF_STEP);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++, i++) {
		assert_true(i < f->d.nrows);
		assert_int_equal(f->d.rows[i].level, DIFF_OP);
		assert_string_equal(f->d.rows[i].name, want[k]);
	}
	assert_int_equal(f->d.rows[i].level, DIFF_RUNTIME);
	assert_int_equal(f->d.rows[f->d.nrows - 1].level, DIFF_KERNEL);
}

static void bad_file(void **state)
{
	struct fx *f = *state;
	char *err = NULL, missing[320];
	snprintf(missing, sizeof(missing), "%s/none.db", f->dir);
	assert_int_equal(diff_compute(f->a, missing, NULL, NULL, &f->d, &err), -1);
	assert_non_null(strstr(err, missing));
	free(err);
	assert_int_equal(f->d.nrows, 0);
}

/* A stop test that says stop from its n-th call on, counting its calls
 * (from both reading threads). */
struct stopper {
	atomic_int calls;
	int from;
};

static int stop_at(void *ctx)
{
	struct stopper *s = ctx;
	return atomic_fetch_add(&s->calls, 1) + 1 >= s->from;
}

/* A's file with n more kernels under one launch, so that a scan polls
 * its stop test many times. */
static void add_kernels(const char *path, int n)
{
	char *err = NULL;
	struct store *st;
	assert_int_equal(store_open(path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf2", 0, 1000, 1, 0);
	int64_t rt = add(st, wf, PHASE_RUNTIME, "cudaLaunchKernel", 0, 5, n, 1);
	for (int i = 0; i < n; i++)
		add(st, rt, PHASE_KERNEL, i % 2 ? "gemm" : "relu_kernel", i, 1, 0, 2);
	finish(st);
}

/* A stop test that answers at once, or part-way through the scans, ends
 * the diff with DIFF_STOPPED and nothing in it; one that never does
 * changes nothing. */
static void stops(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	add_kernels(f->a, 50000);
	assert_int_equal(diff_compute(f->a, f->b, NULL, NULL, &f->d, &err), 0);
	size_t nrows = f->d.nrows;
	diff_release(&f->d);
	struct stopper never = {.from = INT_MAX};
	assert_int_equal(diff_compute(f->a, f->b, stop_at, &never, &f->d, &err), 0);
	assert_int_equal(f->d.nrows, nrows);
	/* polled while the 50000 kernels were read: every 4096 phases and
	 * as SQLite works */
	assert_true(atomic_load(&never.calls) >= 50000 / 4096);
	diff_release(&f->d);
	int from[] = {1, 5};
	for (size_t k = 0; k < 2; k++) {
		struct stopper s = {.from = from[k]};
		assert_int_equal(diff_compute(f->a, f->b, stop_at, &s, &f->d, &err), DIFF_STOPPED);
		assert_string_equal(err, "stopped");
		free(err);
		err = NULL;
		assert_int_equal(f->d.nrows, 0);
		assert_null(f->d.rows);
		/* each thread stops at its next poll: far fewer than a full scan's */
		assert_true(atomic_load(&s.calls) < atomic_load(&never.calls));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(steps_merged, setup, teardown),
	    cmocka_unit_test_setup_teardown(ops_by_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(sorted_by_abs_diff, setup, teardown),
	    cmocka_unit_test_setup_teardown(bad_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(stops, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
