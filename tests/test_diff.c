/*
 * The diff of two runs (model/analysis/diff.c) on two hand-built trace.db files
 * whose answer is known by construction: profiler steps merged across
 * their numbers, operators matched by name path (a runtime call or a span
 * on the way adds nothing), names added and removed, totals, means and ratios,
 * the order by the absolute difference, the first instance of each row,
 * a file whose child comes before its parent or whose ids are far apart,
 * a missing file, and a stop asked for at once or part-way; the steps'
 * medians (odd and even counts, one step) and warm-up, names' roles, and
 * the pairing of renamed names (only one to one, under the same path).
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
#include "model/util/sbuf.h"
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

/* Row i's name as diff_row_name spells it, uncut (a static buffer). */
static const char *name_of(const struct diff *d, size_t i)
{
	static struct sbuf sb;
	sbuf_release(&sb);
	sbuf_init(&sb);
	diff_row_name(d, &d->rows[i], 0, &sb);
	return sb.buf;
}

static const struct diff_row *row(const struct diff *d, int level, const char *name)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].level == level && !strcmp(name_of(d, i), name))
			return &d->rows[i];
	return NULL;
}

static void check_steps(const struct diff_steps *s, int64_t n, int64_t median, int64_t first,
			int64_t warmup)
{
	assert_int_equal(s->n, n);
	assert_int_equal(s->median_ns, median);
	assert_int_equal(s->first_ns, first);
	assert_int_equal(s->warmup_ns, warmup);
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
	/* A: steps of 100 and 120, the median their mean; 2 steps tell no
	 * warm-up apart.  B: one step, its own median. */
	check_steps(&r->steps[0], 2, 110, 100, 0);
	check_steps(&r->steps[1], 1, 200, 200, 0);
	assert_int_equal(r->renamed, 0);
}

static void medians(void **state)
{
	(void)state;
	int64_t one[] = {7}, odd[] = {30, 10, 20}, even[] = {4, 1, 3, 2}, odd2[] = {5, 5, 9, 1, 5};
	int64_t big[] = {INT64_MAX, INT64_MAX - 2}, neg[] = {-3, 0};
	assert_int_equal(diff_median(one, 1), 7);
	assert_int_equal(diff_median(odd, 3), 20);
	assert_int_equal(diff_median(even, 4), 2); /* (2 + 3) / 2, rounded down */
	assert_int_equal(diff_median(odd2, 5), 5);
	assert_int_equal(diff_median(big, 2), INT64_MAX - 1); /* no overflow */
	assert_int_equal(diff_median(neg, 2), -1);
	assert_int_equal(even[0], 1); /* sorted in place */
	assert_int_equal(even[3], 4);
}

static const char *role_of(const char *name)
{
	static struct sbuf sb;
	sbuf_release(&sb);
	sbuf_init(&sb);
	diff_role(name, &sb);
	return sb.buf;
}

static void roles(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
	    {"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	     "enumerate(DataLoader)#*.__next__"},
	    {"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
	     "enumerate(DataLoader)#*.__next__"},
	    {"Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD"},
	    {"Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD"},
	    {"Memset (Device)", "Memset"},
	    {"Optimizer.step#SGD.step", "*.step#*.step"},
	    {"x (a (b) c)", "x"},
	    {"Foo. bar A1.b", "Foo. bar *.b"},
	    /* what is not a class before a member, or not a trailing qualifier */
	    {"aten::linear", "aten::linear"},
	    {"nn.Module: Linear", "nn.Module: Linear"},
	    {"void f<int>(float*, int)", "void f<int>(float*, int)"},
	    {"a (b) c", "a (b) c"},
	    {"(Device)", "(Device)"},
	    {"", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(role_of(cases[i][0]), cases[i][1]);
}

/* A: ProfilerStep#1..3 of 50, 10, 12 { enumerate(DataLoader)#_SingleIter.__next__,
 * _AIter.go, _BIter.go; Memcpy HtoD (Pageable -> Device) }, and at the top
 * X.run.  B: ProfilerStep#4..7 of 8, 6, 9, 7 { ..._MultiIter.__next__,
 * _CIter.go; Memcpy HtoD (Pinned -> Device) }, and under a step Y.run (a
 * path other than A's X.run). */
static void renamed(void **state)
{
	struct fx *f = *state;
	char *err = NULL, pa[320], pb[320];
	snprintf(pa, sizeof(pa), "%s/ra.db", f->dir);
	snprintf(pb, sizeof(pb), "%s/rb.db", f->dir);
	struct store *st = create(pa);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 1000, 4, 0);
	int64_t d1[] = {50, 10, 12};
	for (int k = 0; k < 3; k++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", k + 1);
		int64_t s1 = add(st, wf, PHASE_PROFILER_STEP, name, 100 * k, d1[k], 4, 1);
		add(st, s1, PHASE_ANNOTATION, "enumerate(DataLoader)#_SingleIter.__next__", 100 * k,
		    k ? 5 : 20, 0, 2);
		add(st, s1, PHASE_OPERATOR, "_AIter.go", 100 * k, 1, 0, 2);
		add(st, s1, PHASE_OPERATOR, "_BIter.go", 100 * k, 1, 0, 2);
		int64_t rt = add(st, s1, PHASE_RUNTIME, "cudaMemcpyAsync", 100 * k, 1, 1, 2);
		add(st, rt, PHASE_MEMCPY, "Memcpy HtoD (Pageable -> Device)", 100 * k, 3, 0, 3);
	}
	add(st, wf, PHASE_OPERATOR, "X.run", 900, 4, 0, 1);
	finish(st);
	st = create(pb);
	wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 1000, 4, 0);
	int64_t d2[] = {8, 6, 9, 7};
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", k + 4);
		int64_t s1 = add(st, wf, PHASE_PROFILER_STEP, name, 100 * k, d2[k], 4, 1);
		add(st, s1, PHASE_ANNOTATION, "enumerate(DataLoader)#_MultiIter.__next__", 100 * k,
		    2, 0, 2);
		add(st, s1, PHASE_OPERATOR, "_CIter.go", 100 * k, 1, 0, 2);
		int64_t rt = add(st, s1, PHASE_RUNTIME, "cudaMemcpyAsync", 100 * k, 1, 1, 2);
		add(st, rt, PHASE_MEMCPY, "Memcpy HtoD (Pinned -> Device)", 100 * k, 2, 0, 3);
		if (k == 3)
			add(st, s1, PHASE_OPERATOR, "Y.run", 300, 4, 0, 2);
	}
	finish(st);
	assert_int_equal(diff_compute(pa, pb, NULL, NULL, &f->d, &err), 0);

	const struct diff_row *r = row(&f->d, DIFF_STEP, "ProfilerStep#*");
	assert_non_null(r);
	check_steps(&r->steps[0], 3, 12, 50, 38);
	check_steps(&r->steps[1], 4, 7, 8, 1);

	/* one row for the iterators, B's name after A's */
	r = row(&f->d, DIFF_OP,
		"ProfilerStep#* > enumerate(DataLoader)#_SingleIter.__next__"
		" -> enumerate(DataLoader)#_MultiIter.__next__");
	assert_non_null(r);
	check_side(&r->side[0], 3, 30);
	check_side(&r->side[1], 4, 8);
	/* per step: 20, 5, 5 -> 2, 2, 2, 2; the first step's 15 more apart */
	check_steps(&r->steps[0], 3, 5, 20, 15);
	check_steps(&r->steps[1], 4, 2, 2, 0);
	assert_int_equal(diff_median_delta(r), -3);
	const char *parts[DIFF_MAX_PARTS];
	size_t left;
	assert_int_equal(diff_renamed_parts(&f->d, r, parts, &left), 2);
	assert_string_equal(parts[1], "enumerate(DataLoader)#_MultiIter.__next__");
	assert_null(
	    row(&f->d, DIFF_OP, "ProfilerStep#* > enumerate(DataLoader)#_MultiIter.__next__"));
	r = row(&f->d, DIFF_KERNEL,
		"Memcpy HtoD (Pageable -> Device) -> Memcpy HtoD (Pinned -> Device)");
	assert_non_null(r);
	check_side(&r->side[0], 3, 9);
	check_side(&r->side[1], 4, 8);
	/* two of a role only in A and one in B: no pair says which */
	assert_non_null(r = row(&f->d, DIFF_OP, "ProfilerStep#* > _AIter.go"));
	check_side(&r->side[1], 0, 0);
	assert_non_null(row(&f->d, DIFF_OP, "ProfilerStep#* > _BIter.go"));
	assert_non_null(r = row(&f->d, DIFF_OP, "ProfilerStep#* > _CIter.go"));
	check_side(&r->side[0], 0, 0);
	/* the same role under another path is another name */
	assert_non_null(row(&f->d, DIFF_OP, "X.run"));
	assert_non_null(r = row(&f->d, DIFF_OP, "ProfilerStep#* > Y.run"));
	check_steps(&r->steps[1], 4, 0, 0, 0); /* 0, 0, 0, 4 */
	/* the level's sums keep every instance once */
	assert_int_equal(f->d.run[1].level[DIFF_OP].count, 4 + 4 + 1);
	assert_int_equal(f->d.run[0].level[DIFF_KERNEL].total_ns, 9);
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
	const char *parts[DIFF_MAX_PARTS];
	size_t left;
	assert_int_equal(diff_row_parts(&f->d, r, parts, &left), 2);
	assert_int_equal(left, 0);
	assert_string_equal(parts[0], "ProfilerStep#*");
	assert_string_equal(parts[1], "aten::linear");
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
	const struct diff_row *r =
	    row(&f->d, DIFF_OP, "ProfilerStep#* > aten::linear > aten::addmm");
	check_steps(&r->steps[0], 2, 32, 30, 0); /* (30 + 35) / 2, rounded down */
	check_steps(&r->steps[1], 1, 80, 80, 0);
	assert_int_equal(diff_median_delta(r), 48);
	r = row(&f->d, DIFF_OP, "aten::copy_"); /* in no step */
	check_steps(&r->steps[0], 2, 0, 0, 0);
	check_steps(&r->steps[1], 1, 0, 0, 0);	 /* not in B: 0 in its one step */
	r = row(&f->d, DIFF_KERNEL, "gemm");	 /* beneath A's first step, by its launch */
	check_steps(&r->steps[0], 2, 10, 20, 0); /* 20, 0 */
	/* both runs have steps: by the change of the median per step (A's two
	 * steps, B's one), then of the total */
	static const char *const want[] = {
	    "ProfilerStep#* > aten::linear > aten::addmm",		 /* 32 -> 80 */
	    "ProfilerStep#* > aten::linear",				 /* 45 -> 90 */
	    "ProfilerStep#* > aten::gelu",				 /* 0 -> 15 */
	    "ProfilerStep#* > aten::relu",				 /* 5 -> 0 */
	    "ProfilerStep#* > aten::linear > aten::addmm > aten::empty", /* 1 -> 0 */
	    "aten::copy_",			       /* in no step: 0 -> 0, total -7 */
	    "ProfilerStep#* > aten::linear > aten::t", /* 0 -> 0, total 0 */
	};
	size_t i = 0;
	while (i < f->d.nrows && f->d.rows[i].level != DIFF_OP)
		i++;
	assert_int_equal(f->d.rows[0].level, DIFF_STEP);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++, i++) {
		assert_true(i < f->d.nrows);
		assert_int_equal(f->d.rows[i].level, DIFF_OP);
		assert_string_equal(name_of(&f->d, i), want[k]);
	}
	assert_int_equal(f->d.rows[i].level, DIFF_RUNTIME);
	assert_int_equal(f->d.rows[f->d.nrows - 1].level, DIFF_KERNEL);
}

/* The operators of sort_tree: a name each under the node before it
 * (parent, an index; -1: at the top), names that read alike once joined
 * (a name holding " > ", a prefix of another, bytes below ' ' and above
 * 0x7f, the empty name) and, after them, two chains deeper than
 * DIFF_MAX_PARTS. */
struct tnode {
	int parent;
	const char *name;
};

#define CHAIN 300 /* the chains' depth */

static const struct tnode tnodes[] = {
    {-1, "a"}, {0, "b"},   {1, "c"},   {1, "\x01"},	 {0, "b!"}, {0, "\xc3\xa9"}, {-1, "a > b"},
    {6, "c"},  {-1, "a!"}, {8, "x"},   {-1, "a\x01"},	 {10, "y"}, {-1, ""},	     {12, "z"},
    {12, ""},  {-1, "b"},  {-1, "ab"}, {-1, "\xc3\xa9"}, {2, "d"},  {-1, "a b"},     {19, "c"},
};
#define NTNODES (sizeof(tnodes) / sizeof(tnodes[0]))
#define NNODES	(NTNODES + 2 * CHAIN + 3)

/* Node k's parent and name: tnodes, then a chain of CHAIN "d" with "x"
 * and "y" at its foot, then one of CHAIN "e" with "x". */
static void sort_node(size_t k, int *parent, const char **name)
{
	if (k < NTNODES) {
		*parent = tnodes[k].parent;
		*name = tnodes[k].name;
		return;
	}
	k -= NTNODES;
	if (k < CHAIN + 2) {
		*parent = k == 0 ? -1 : (int)(NTNODES + (k < CHAIN ? k - 1 : CHAIN - 1));
		*name = k < CHAIN ? "d" : k == CHAIN ? "x" : "y";
		return;
	}
	k -= CHAIN + 2;
	*parent = k == 0 ? -1 : (int)(NTNODES + CHAIN + 2 + (k < CHAIN ? k - 1 : CHAIN - 1));
	*name = k < CHAIN ? "e" : "x";
}

/* wf / thread / the nodes, each dur ns (none with dur 0); ids into id. */
static void sort_tree(const char *path, int64_t dur, int64_t *id)
{
	struct store *st = create(path);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 1000, 1, 0);
	int64_t th = add(st, wf, PHASE_THREAD, "thread 1", 0, 1000, dur ? 1 : 0, 1);
	int kids[NNODES] = {0}, depth[NNODES];
	for (size_t k = 0; k < NNODES; k++) {
		int parent;
		const char *name;
		sort_node(k, &parent, &name);
		if (parent >= 0)
			kids[parent]++;
	}
	for (size_t k = 0; k < NNODES && dur; k++) {
		int parent;
		const char *name;
		sort_node(k, &parent, &name);
		depth[k] = parent < 0 ? 2 : depth[parent] + 1;
		id[k] = add(st, parent < 0 ? th : id[parent], PHASE_OPERATOR, name, 0, dur, kids[k],
			    depth[k]);
	}
	finish(st);
}

/* Node k's name path joined, its innermost DIFF_MAX_PARTS names. */
static void joined(size_t k, struct sbuf *out)
{
	const char *chain[NNODES];
	size_t n = 0;
	for (int p = (int)k; p >= 0;) {
		const char *name;
		int up;
		sort_node((size_t)p, &up, &name);
		chain[n++] = name;
		p = up;
	}
	if (n > DIFF_MAX_PARTS)
		n = DIFF_MAX_PARTS;
	sbuf_reset(out);
	for (size_t i = n; i-- > 0;) {
		sbuf_adds(out, chain[i]);
		if (i)
			sbuf_adds(out, " > ");
	}
}

/* Rows that tie on the difference come in the byte order of their joined
 * name paths, as strcmp orders the strings, though the paths are compared
 * by index and text is read only from where two part: names that hold the
 * separator, prefixes, control bytes, UTF-8, empty names, and paths deeper
 * than DIFF_MAX_PARTS; each path its own row, and matched across the runs
 * by index. */
static void names_sorted_as_joined_text(void **state)
{
	struct fx *f = *state;
	char a[300], none[300], same[300], *err = NULL;
	static int64_t id[NNODES], id_b[NNODES];
	snprintf(a, sizeof(a), "%s/sort-a.db", f->dir);
	snprintf(none, sizeof(none), "%s/sort-none.db", f->dir);
	snprintf(same, sizeof(same), "%s/sort-same.db", f->dir);
	sort_tree(a, 1, id);
	sort_tree(none, 0, id_b);
	sort_tree(same, 3, id_b);

	assert_int_equal(diff_compute(a, none, NULL, NULL, &f->d, &err), 0);
	struct sbuf prev = SBUF_INIT, cur = SBUF_INIT;
	sbuf_init(&prev);
	sbuf_init(&cur);
	size_t nops = 0;
	for (size_t i = 0; i < f->d.nrows; i++) {
		const struct diff_row *r = &f->d.rows[i];
		if (r->level != DIFF_OP)
			continue;
		assert_int_equal(diff_delta(r), -1); /* all tie */
		size_t k = 0;
		while (k < NNODES && id[k] != r->side[0].first_id)
			k++;
		assert_true(k < NNODES);
		joined(k, &cur);
		if (nops++)
			assert_true(strcmp(prev.buf, cur.buf) <= 0);
		struct sbuf t = prev;
		prev = cur;
		cur = t;
	}
	assert_int_equal(nops, NNODES);
	diff_release(&f->d);

	assert_int_equal(diff_compute(a, same, NULL, NULL, &f->d, &err), 0);
	nops = 0;
	for (size_t i = 0; i < f->d.nrows; i++)
		if (f->d.rows[i].level == DIFF_OP) {
			nops++;
			check_side(&f->d.rows[i].side[0], 1, 1);
			check_side(&f->d.rows[i].side[1], 1, 3);
		}
	assert_int_equal(nops, NNODES);
	sbuf_release(&prev);
	sbuf_release(&cur);
}

/* A name of n bytes: the letter c, repeated. */
static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* Long names: a path keeps its innermost names within DIFF_NAME_MAX bytes
 * and counts the rest, an innermost name longer than that stays whole,
 * diff_row_name's max keeps the end after "…" and starts on a whole UTF-8
 * character, and a name longer than DIFF_NAME_LONG (only a hand-made file
 * holds one) is cut to its first 64 KiB and "…". */
static void long_names_cut(void **state)
{
	struct fx *f = *state;
	char a[300], *err = NULL;
	snprintf(a, sizeof(a), "%s/long.db", f->dir);
	char *k5 = repeat('k', 600), *k10 = repeat('m', 10000), *huge = repeat('h', 70000);
	char utf[301];
	for (int i = 0; i < 150; i++)
		memcpy(utf + 2 * i, "\xc3\xa9", 2); /* é */
	utf[300] = '\0';
	struct store *st = create(a);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 1000, 1, 0);
	int64_t th = add(st, wf, PHASE_THREAD, "thread 1", 0, 1000, 3, 1);
	int64_t o1 = add(st, th, PHASE_OPERATOR, k5, 0, 100, 1, 2);
	int64_t o2 = add(st, o1, PHASE_OPERATOR, k5, 0, 90, 1, 3);
	int64_t o3 = add(st, o2, PHASE_OPERATOR, k5, 0, 80, 1, 4);
	add(st, o3, PHASE_OPERATOR, "leaf", 0, 70, 0, 5);
	add(st, th, PHASE_OPERATOR, k10, 200, 60, 0, 2);
	int64_t u = add(st, th, PHASE_OPERATOR, utf, 300, 50, 1, 2);
	add(st, u, PHASE_OPERATOR, huge, 300, 40, 0, 3);
	finish(st);

	assert_int_equal(diff_compute(a, a, NULL, NULL, &f->d, &err), 0);
	const char *parts[DIFF_MAX_PARTS];
	size_t left, i = 0;
	while (i < f->d.nrows && f->d.rows[i].side[0].total_ns != 70)
		i++;
	assert_true(i < f->d.nrows);
	assert_int_equal(diff_row_parts(&f->d, &f->d.rows[i], parts, &left), 2);
	assert_int_equal(left, 2);
	assert_string_equal(parts[0], k5);
	assert_string_equal(parts[1], "leaf");
	struct sbuf sb;
	sbuf_init(&sb);
	diff_row_name(&f->d, &f->d.rows[i], 0, &sb);
	assert_int_equal(sb.len, strlen("\xe2\x80\xa6 > ") + 600 + strlen(" > leaf"));
	assert_memory_equal(sb.buf, "\xe2\x80\xa6 > kkk", 9);
	sbuf_reset(&sb);
	diff_row_name(&f->d, &f->d.rows[i], 100, &sb);
	assert_int_equal(sb.len, 100);
	assert_memory_equal(sb.buf, "\xe2\x80\xa6kkk", 6);
	assert_string_equal(sb.buf + 100 - 7, " > leaf");

	i = 0;
	while (i < f->d.nrows && f->d.rows[i].side[0].total_ns != 60)
		i++;
	assert_int_equal(diff_row_parts(&f->d, &f->d.rows[i], parts, &left), 1);
	assert_int_equal(left, 0);
	assert_string_equal(parts[0], k10); /* longer than DIFF_NAME_MAX, whole */

	i = 0;
	while (i < f->d.nrows && f->d.rows[i].side[0].total_ns != 40)
		i++;
	assert_int_equal(diff_row_parts(&f->d, &f->d.rows[i], parts, &left), 1);
	assert_int_equal(left, 1); /* é * 150 and 64 KiB do not fit in DIFF_NAME_MAX */
	assert_int_equal(strlen(parts[0]), 65536 + 3);
	assert_string_equal(parts[0] + 65536, "\xe2\x80\xa6");
	assert_memory_equal(parts[0], huge, 65536);
	i = 0;
	while (i < f->d.nrows && f->d.rows[i].side[0].total_ns != 50)
		i++;
	for (size_t max = 7; max < 12; max++) { /* "…" and é é: never half an é */
		sbuf_reset(&sb);
		diff_row_name(&f->d, &f->d.rows[i], max, &sb);
		assert_true(sb.len <= max && sb.len >= max - 1);
		assert_memory_equal(sb.buf, "\xe2\x80\xa6\xc3\xa9", 5);
	}
	sbuf_release(&sb);
	free(k5);
	free(k10);
	free(huge);
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
	    cmocka_unit_test(medians),
	    cmocka_unit_test(roles),
	    cmocka_unit_test_setup_teardown(renamed, setup, teardown),
	    cmocka_unit_test_setup_teardown(ops_by_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(sorted_by_abs_diff, setup, teardown),
	    cmocka_unit_test_setup_teardown(names_sorted_as_joined_text, setup, teardown),
	    cmocka_unit_test_setup_teardown(long_names_cut, setup, teardown),
	    cmocka_unit_test_setup_teardown(bad_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(stops, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
