/*
 * Unit tests of the analyses (model/analysis/imbalance.c, issues.c, analyze.c) on a
 * trace.db written row by row (ranks that meet at collectives among them), with the expected
 * figures worked out by hand in each test.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/analysis/analyze.h"
#include "model/store/ptree.h"
#include "model/util/xalloc.h"
#include "tests/testdir.h"

struct fx {
	char dir[256], db[300];
	struct store *st;
	int64_t src[2];
};

static int64_t add(struct fx *f, int64_t parent, int kind, const char *name, int64_t source,
		   int64_t start, int64_t dur, int depth)
{
	char *err = NULL;
	struct phase_row r = {.id = store_reserve_phase_id(f->st),
			      .parent_id = parent,
			      .kind = kind,
			      .source_id = source,
			      .start_ns = start,
			      .dur_ns = dur,
			      .depth = depth};
	r.name_id = store_intern(f->st, name, strlen(name), &err);
	assert_true(r.name_id > 0);
	assert_int_equal(store_add_phase(f->st, &r, &err), 0);
	return r.id;
}

/* A workflow of 1000 ns: step "train" with ranks of 100 and 140 ns whose
 * ProfilerStep#1 took 50 and 70 ns and ProfilerStep#2 30 and 30; step
 * "prep" with a stage of three tasks of 10, 20 and 60 ns. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char *err = NULL;
	if (!f || testdir_make(f->dir, sizeof(f->dir), "analyze") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	*state = f;
	if (store_open(f->db, STORE_WRITE, &f->st, &err) < 0 || store_begin(f->st, &err) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		struct source_row s = {
		    .path = "x", .format = "chrome", .anchor = "absolute", .rank = i};
		f->src[i] = store_add_source(f->st, &s, &err);
	}
	int64_t wf = add(f, 0, PHASE_WORKFLOW, "wf", 0, 0, 1000, 0);
	int64_t train = add(f, wf, PHASE_STEP, "train", 0, 0, 200, 1);
	static const int64_t rank_ns[] = {100, 140}, it1[] = {50, 70}, it2[] = {30, 30};
	for (int i = 0; i < 2; i++) {
		char name[24];
		snprintf(name, sizeof(name), "rank %d", i);
		int64_t r = add(f, train, PHASE_RANK, name, f->src[i], 0, rank_ns[i], 2);
		int64_t t = add(f, r, PHASE_THREAD, "thread", f->src[i], 0, rank_ns[i], 3);
		add(f, t, PHASE_PROFILER_STEP, "ProfilerStep#1", f->src[i], 0, it1[i], 4);
		add(f, t, PHASE_PROFILER_STEP, "ProfilerStep#2", f->src[i], 80, it2[i], 4);
	}
	int64_t prep = add(f, wf, PHASE_STEP, "prep", 0, 300, 100, 1);
	int64_t stage = add(f, prep, PHASE_STAGE, "stage 3", 0, 300, 60, 2);
	add(f, stage, PHASE_TASK, "task 1", 0, 300, 10, 3);
	add(f, stage, PHASE_TASK, "task 2", 0, 300, 20, 3);
	add(f, stage, PHASE_TASK, "task 3", 0, 300, 60, 3);
	return store_commit(f->st, &err);
}

/* Ranks that meet at collectives, worked out by hand.  Step "dist": three
 * ranks; rank 0 starts first and runs longest (1000 ns), yet arrives first.
 * NCCL kernels (arrival, end), each rank's ProfilerStep#1 [0, 450) and #2
 * [450, 1000):
 *   AllReduce  r0 100, r1 150, r2 200, all end 210: rank 2 last
 *   AllReduce  r0 300, r1 420, r2 350, all end 430: rank 1 last
 *   SendRecv   r0 500, r1 520, r2 600, all end 610: rank 2 last
 *   AllReduce  r0 700 (ncclDevKernel_ naming): no partner, unmatched
 *   SendRecv   r0 800-810, r1 900, r2 905: rank 0 left first, unmatched
 * Step "gloo": two ranks, no kernel: c10d::allreduce_ r0 100-110 (with a
 * c10d op inside it), its gloo:all_reduce 105-300; r1 250-260, gloo:
 * 255-300 (and a gpu annotation of that name, not a gloo op). */
static int setup_meet(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char *err = NULL;
	if (!f || testdir_make(f->dir, sizeof(f->dir), "meet") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	*state = f;
	if (store_open(f->db, STORE_WRITE, &f->st, &err) < 0 || store_begin(f->st, &err) < 0)
		return -1;
	int64_t wf = add(f, 0, PHASE_WORKFLOW, "wf", 0, 0, 2000, 0);
	int64_t dist = add(f, wf, PHASE_STEP, "dist", 0, 0, 1000, 1);
	static const int64_t span[3][2] = {{0, 1000}, {50, 900}, {90, 840}};
	static const int64_t at[5][3] = {
	    {100, 150, 200}, {300, 420, 350}, {500, 520, 600}, {700, -1, -1}, {800, 900, 905}};
	static const int64_t end[5] = {210, 430, 610, 710, 0};
	static const char *const kname[5] = {
	    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)",
	    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)",
	    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)",
	    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
	    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"};
	for (int i = 0; i < 3; i++) {
		struct source_row src = {
		    .path = "x", .format = "chrome", .anchor = "absolute", .rank = i};
		int64_t s = store_add_source(f->st, &src, &err);
		char name[24];
		snprintf(name, sizeof(name), "rank %d", i);
		int64_t r = add(f, dist, PHASE_RANK, name, s, span[i][0], span[i][1], 2);
		int64_t t = add(f, r, PHASE_THREAD, "thread", s, span[i][0], span[i][1], 3);
		add(f, t, PHASE_PROFILER_STEP, "ProfilerStep#1", s, 0, 450, 4);
		add(f, t, PHASE_PROFILER_STEP, "ProfilerStep#2", s, 450, 550, 4);
		int64_t gpu = add(f, r, PHASE_STREAM, "stream 7", s, 100, 900, 3);
		for (int k = 0; k < 5; k++)
			if (at[k][i] >= 0)
				add(f, gpu, PHASE_KERNEL, kname[k], s, at[k][i],
				    (end[k] ? end[k] : at[k][i] + 10) - at[k][i], 4);
	}
	int64_t gloo = add(f, wf, PHASE_STEP, "gloo", 0, 1000, 1000, 1);
	static const int64_t c10d[2][2] = {{1100, 10}, {1250, 10}},
			     run[2][2] = {{1105, 195}, {1255, 45}};
	for (int i = 0; i < 2; i++) {
		struct source_row src = {
		    .path = "x", .format = "chrome", .anchor = "absolute", .rank = i};
		int64_t s = store_add_source(f->st, &src, &err);
		char name[24];
		snprintf(name, sizeof(name), "rank %d", i);
		int64_t r = add(f, gloo, PHASE_RANK, name, s, 1000, 400, 2);
		int64_t t = add(f, r, PHASE_THREAD, "thread", s, 1000, 400, 3);
		int64_t op =
		    add(f, t, PHASE_OPERATOR, "c10d::allreduce_", s, c10d[i][0], c10d[i][1], 4);
		if (i == 0)
			add(f, op, PHASE_OPERATOR, "c10d::allreduce_", s, 1101, 4, 5);
		add(f, r, PHASE_ANNOTATION, "gloo:all_reduce", s, run[i][0], run[i][1], 3);
		if (i == 0)
			add(f, r, PHASE_GPU_ANNOTATION, "gloo:all_reduce", s, 1120, 10, 3);
	}
	return store_commit(f->st, &err);
}

/* Step "legacy": two ranks over gloo as PyTorch's legacy export writes
 * them, every gloo:all_reduce an operator on a thread of its own.  Rank 0
 * (the longer, 0-400) calls c10d::allreduce_ at 100-110 and its gloo op
 * runs 105-300; rank 1 (200-400) calls at 250-260, gloo 255-300. */
static int setup_legacy(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char *err = NULL;
	if (!f || testdir_make(f->dir, sizeof(f->dir), "legacy") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	*state = f;
	if (store_open(f->db, STORE_WRITE, &f->st, &err) < 0 || store_begin(f->st, &err) < 0)
		return -1;
	int64_t wf = add(f, 0, PHASE_WORKFLOW, "wf", 0, 0, 400, 0);
	int64_t step = add(f, wf, PHASE_STEP, "legacy", 0, 0, 400, 1);
	static const int64_t span[2][2] = {{0, 400}, {200, 200}}, c10d[2] = {100, 250},
			     gloo[2][2] = {{105, 195}, {255, 45}};
	for (int i = 0; i < 2; i++) {
		struct source_row src = {
		    .path = "x", .format = "chrome", .anchor = "time-offset", .rank = i};
		int64_t s = store_add_source(f->st, &src, &err);
		char name[24];
		snprintf(name, sizeof(name), "rank %d", i);
		int64_t r = add(f, step, PHASE_RANK, name, s, span[i][0], span[i][1], 2);
		int64_t p =
		    add(f, r, PHASE_PROCESS, "process CPU functions", s, span[i][0], span[i][1], 3);
		int64_t t1 = add(f, p, PHASE_THREAD, "thread 1", s, span[i][0], span[i][1], 4);
		int64_t t2 = add(f, p, PHASE_THREAD, "thread 2", s, gloo[i][0], gloo[i][1], 4);
		add(f, t1, PHASE_OPERATOR, "c10d::allreduce_", s, c10d[i], 10, 5);
		add(f, t2, PHASE_OPERATOR, "gloo:all_reduce", s, gloo[i][0], gloo[i][1], 5);
	}
	return store_commit(f->st, &err);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	store_close(f->st);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static const struct imbalance *group(const struct analysis *a, const char *kind)
{
	for (size_t i = 0; i < a->nimb; i++)
		if (!strcmp(a->imb[i].kind, kind))
			return &a->imb[i];
	return NULL;
}

static void imbalance_by_hand(void **state)
{
	struct fx *f = *state;
	struct analysis a;
	char *err = NULL;
	assert_int_equal(analysis_run(f->st, &a, &err), 0);
	/* ranks 100, 140: ideal 120, actual 140, impact 20; tasks 10, 20, 60:
	 * ideal 30, impact 30, one task over 33; ProfilerStep#1 50, 70: ideal
	 * 60, impact 10; ProfilerStep#2 is balanced and not listed */
	assert_int_equal(a.nimb, 3);
	const struct imbalance *g = group(&a, "tasks");
	assert_non_null(g);
	assert_int_equal(g->members, 3);
	assert_int_equal(g->ideal_ns, 30);
	assert_int_equal(g->actual_ns, 60);
	assert_int_equal(g->impact_ns, 30);
	assert_int_equal(g->slow, 1);
	assert_string_equal(g->straggler, "task 3");
	assert_string_equal(g->label, "the 3 tasks of stage 3");
	g = group(&a, "ranks");
	assert_non_null(g);
	assert_int_equal(g->impact_ns, 20);
	assert_string_equal(g->straggler, "rank 1");
	g = group(&a, "iteration");
	assert_non_null(g);
	assert_int_equal(g->ideal_ns, 60);
	assert_int_equal(g->impact_ns, 10);
	assert_string_equal(g->straggler, "ProfilerStep#1");
	/* issues: largest impact first, share of the 1000 ns workflow */
	assert_int_equal(a.nissues, 3);
	assert_int_equal(a.issues[0].impact_ns, 30);
	assert_int_equal(a.issues[1].impact_ns, 20);
	assert_int_equal(a.issues[2].impact_ns, 10);
	assert_true(fabs(a.issues[0].share - 0.03) < 1e-12);
	assert_non_null(
	    strstr(a.issues[0].explanation, "task 3 took 60 ns against a mean of 30 ns"));
	char *path = NULL;
	assert_int_equal(analysis_phase_path(f->st, a.issues[1].phase_id, &path, &err), 0);
	assert_string_equal(path, "/wf/train/rank 1");
	free(path);
	analysis_release(&a);
}

static const struct imbalance *meeting(const struct analysis *a, const char *label)
{
	for (size_t i = 0; i < a->nimb; i++)
		if (!strcmp(a->imb[i].label, label))
			return &a->imb[i];
	fail_msg("no group '%s'", label);
	return NULL;
}

static void assert_rank(const struct imbalance *g, size_t k, const char *name, int64_t last,
			int64_t wait)
{
	assert_true(k < g->nranks);
	assert_string_equal(g->ranks[k].name, name);
	assert_int_equal(g->ranks[k].last, last);
	assert_int_equal(g->ranks[k].wait_ns, wait);
}

static void meet_by_hand(void **state)
{
	struct fx *f = *state;
	struct analysis a;
	char *err = NULL;
	assert_int_equal(analysis_run(f->st, &a, &err), 0);
	/* no group by durations: both steps' ranks meet */
	assert_int_equal(a.nimb, 4);
	const struct imbalance *g = meeting(&a, "the 3 ranks of step dist");
	assert_string_equal(g->kind, "ranks");
	assert_string_equal(g->meets, "device");
	assert_string_equal(g->straggler, "rank 2"); /* charged 150 + 180, rank 1 120 + 70 */
	assert_int_equal(g->collectives, 3);
	assert_int_equal(g->last, 2);
	assert_int_equal(g->unmatched, 4); /* the lone AllReduce, the SendRecv rank 0 left */
	assert_int_equal(g->slow, 2);
	/* waits: rank 0 100 + 120 + 100, rank 1 50 + 0 + 80, rank 2 0 + 70 + 0 */
	assert_int_equal(g->nranks, 3);
	assert_rank(g, 0, "rank 2", 2, 70);
	assert_rank(g, 1, "rank 0", 0, 320);
	assert_rank(g, 2, "rank 1", 1, 130);
	assert_int_equal(g->wait_ns, 450);
	assert_string_equal(imbalance_longest(g)->name, "rank 0");
	/* last less mean: 200 - 150, 420 - 356.67, 600 - 540 */
	assert_int_equal(g->impact_ns, 173);
	assert_int_equal(g->actual_ns, 100 + 120 + 100);
	assert_int_equal(g->ideal_ns, 320 - 173);
	char *says = imbalance_says(g);
	assert_string_equal(says, "rank 2 arrives last at 2 of 3 collectives (NCCL kernels on the"
				  " GPU, 4 calls unmatched); the others wait 450 ns in all, rank 0"
				  " the longest (320 ns)");
	free(says);
	/* ProfilerStep#1 holds the first two: rank 1 charged 120 + 70, rank 2 50 + 100 */
	g = meeting(&a, "ProfilerStep#1 on the 3 ranks of step dist");
	assert_string_equal(g->kind, "iteration");
	assert_string_equal(g->straggler, "rank 1");
	assert_int_equal(g->collectives, 2);
	assert_int_equal(g->last, 1);
	assert_int_equal(g->impact_ns, 113);
	assert_rank(g, 0, "rank 1", 1, 50);
	char *path = NULL;
	assert_int_equal(analysis_phase_path(f->st, g->straggler_id, &path, &err), 0);
	assert_string_equal(path, "/wf/dist/rank 1/thread/ProfilerStep#1");
	free(path);
	g = meeting(&a, "ProfilerStep#2 on the 3 ranks of step dist");
	assert_string_equal(g->straggler, "rank 2");
	assert_int_equal(g->impact_ns, 60);
	/* gloo: rank 0 calls at 1100, its gloo op runs to 1300; rank 1 calls at
	 * 1250: rank 0 waits 150 */
	g = meeting(&a, "the 2 ranks of step gloo");
	assert_string_equal(g->meets, "host");
	assert_string_equal(g->straggler, "rank 1");
	assert_int_equal(g->collectives, 1);
	assert_int_equal(g->unmatched, 0);
	assert_rank(g, 1, "rank 0", 0, 150);
	assert_int_equal(g->impact_ns, 75);
	/* one issue per step, not per ProfilerStep#N; the straggler's path */
	size_t n = 0;
	for (size_t i = 0; i < a.nissues; i++)
		if (!strcmp(a.issues[i].kind, "imbalance")) {
			n++;
			if (a.issues[i].impact_ns == 173)
				assert_non_null(
				    strstr(a.issues[i].explanation,
					   "among the 3 ranks of step dist, rank 2 arrives"
					   " last at 2 of 3 collectives"));
		}
	assert_int_equal(n, 2);
	analysis_release(&a);
}

/* The legacy export's gloo ops are operators: they carry rank 0's
 * collective on to 300, so the ranks meet, and rank 0, though the longer,
 * is the one that waits (150 ns). */
static void meet_legacy_gloo(void **state)
{
	struct fx *f = *state;
	struct analysis a;
	char *err = NULL;
	assert_int_equal(analysis_run(f->st, &a, &err), 0);
	const struct imbalance *g = meeting(&a, "the 2 ranks of step legacy");
	assert_string_equal(g->kind, "ranks");
	assert_string_equal(g->meets, "host");
	assert_string_equal(g->straggler, "rank 1");
	assert_int_equal(g->collectives, 1);
	assert_rank(g, 1, "rank 0", 0, 150);
	assert_int_equal(g->wait_ns, 150);
	analysis_release(&a);
}

/* What the report shows of the ranks is what the cache gives back. */
static void meet_cache_round_trip(void **state)
{
	struct fx *f = *state;
	struct analysis a, b;
	char *err = NULL;
	assert_int_equal(analysis_run(f->st, &a, &err), 0);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(analysis_save(f->st, &a, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(analysis_get(f->st, &b, &err), 0);
	assert_int_equal(b.cached, 1);
	assert_int_equal(b.nimb, a.nimb);
	for (size_t i = 0; i < a.nimb; i++) {
		const struct imbalance *x = &a.imb[i], *y = &b.imb[i];
		assert_string_equal(y->label, x->label);
		assert_string_equal(y->meets, x->meets);
		assert_int_equal(y->collectives, x->collectives);
		assert_int_equal(y->unmatched, x->unmatched);
		assert_int_equal(y->last, x->last);
		assert_int_equal(y->wait_ns, x->wait_ns);
		assert_int_equal(y->nranks, x->nranks);
		for (size_t k = 0; k < x->nranks; k++) {
			assert_int_equal(y->ranks[k].rank_id, x->ranks[k].rank_id);
			assert_rank(y, k, x->ranks[k].name, x->ranks[k].last, x->ranks[k].wait_ns);
		}
	}
	analysis_release(&b);
	analysis_release(&a);
}

static void cache_round_trip(void **state)
{
	struct fx *f = *state;
	struct analysis a, b;
	char *err = NULL;
	assert_int_equal(analysis_get(f->st, &a, &err), 0);
	assert_int_equal(a.cached, 0); /* never analysed */
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(analysis_save(f->st, &a, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(analysis_get(f->st, &b, &err), 0);
	assert_int_equal(b.cached, 1);
	assert_int_equal(b.nissues, a.nissues);
	assert_int_equal(b.nimb, a.nimb);
	for (size_t i = 0; i < a.nissues; i++) {
		assert_int_equal(b.issues[i].phase_id, a.issues[i].phase_id);
		assert_int_equal(b.issues[i].impact_ns, a.issues[i].impact_ns);
		assert_string_equal(b.issues[i].kind, a.issues[i].kind);
		assert_string_equal(b.issues[i].explanation, a.issues[i].explanation);
	}
	assert_string_equal(b.imb[0].label, a.imb[0].label);
	analysis_release(&b);
	/* a cache an earlier analysis wrote (its signature without the
	 * analysis' version: its figures meant something else) is stale */
	assert_true(analysis_fresh(store_db(f->st)));
	assert_int_equal(store_begin(f->st, &err), 0);
	char *old = xasprintf(
	    "UPDATE meta SET value = 'v%d p' || coalesce((SELECT max(id) FROM phases), 0)"
	    " || ' s' || coalesce((SELECT max(id) FROM sources), 0)"
	    " || ' m' || coalesce((SELECT max(id) FROM metrics), 0) WHERE key = 'analysis_of'",
	    STORE_SCHEMA_VERSION);
	assert_int_equal(store_exec(f->st, old, &err), 0);
	free(old);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_false(analysis_fresh(store_db(f->st)));
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(analysis_save(f->st, &a, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_true(analysis_fresh(store_db(f->st)));
	/* a later import makes the cache stale: computed again */
	assert_int_equal(store_begin(f->st, &err), 0);
	add(f, 0, PHASE_WORKFLOW, "another", 0, 5000, 10, 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(analysis_get(f->st, &b, &err), 0);
	assert_int_equal(b.cached, 0);
	assert_int_equal(b.nissues, a.nissues);
	analysis_release(&b);
	analysis_release(&a);
}

static void assert_same_path(const struct analysis *x, const struct analysis *y)
{
	assert_int_equal(x->npath, y->npath);
	for (size_t i = 0; i < x->npath; i++)
		assert_memory_equal(&x->path[i], &y->path[i], sizeof(x->path[i]));
}

/* analysis_path (the explorer's :path): the rows analysis_get has, the
 * critical path alone, computed or from the cache. */
static void path_alone(void **state)
{
	struct fx *f = *state;
	struct analysis a, p;
	char *err = NULL;
	assert_int_equal(analysis_get(f->st, &a, &err), 0);
	assert_true(a.npath > 0);
	assert_int_equal(analysis_path(f->st, &p, &err), 0);
	assert_int_equal(p.cached, 0);
	assert_int_equal(p.nissues, 0);
	assert_same_path(&a, &p);
	analysis_release(&p);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(analysis_save(f->st, &a, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(analysis_path(f->st, &p, &err), 0);
	assert_int_equal(p.cached, 1);
	assert_same_path(&a, &p);
	analysis_release(&p);
	analysis_release(&a);
}

/* Parent links that loop (an edit of the file with sqlite3): the analyses
 * and a phase's path stop with one error naming the file and a phase, where
 * they walked up the loop for ever. */
static void loop_is_an_error(void **state)
{
	struct fx *f = *state;
	struct analysis a;
	char *err = NULL, *path = NULL;
	/* step prep (11) under its own stage (12): task 3 (15), the stage's
	 * straggler, hangs below the loop */
	assert_int_equal(sqlite3_exec(store_db(f->st),
				      "UPDATE phases SET parent_id = 12 WHERE id = 11", NULL, NULL,
				      NULL),
			 SQLITE_OK);
	char *want = NULL;
	assert_int_equal(analysis_phase_path(f->st, 15, &path, &err), PTREE_LOOP);
	assert_null(path);
	want = xasprintf("%s: phase 15's parents form a loop", f->db);
	assert_string_equal(err, want);
	free(want);
	free(err);
	err = NULL;
	assert_int_equal(analysis_run(f->st, &a, &err), PTREE_LOOP);
	assert_non_null(strstr(err, "'s parents form a loop"));
	assert_true(!strncmp(err, f->db, strlen(f->db)));
	free(err);
	/* the rest of the tree still has its paths */
	assert_int_equal(analysis_phase_path(f->st, 5, &path, &err), 0);
	assert_string_equal(path, "/wf/train/rank 0/thread/ProfilerStep#1");
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(imbalance_by_hand, setup, teardown),
	    cmocka_unit_test_setup_teardown(cache_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(path_alone, setup, teardown),
	    cmocka_unit_test_setup_teardown(loop_is_an_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(meet_by_hand, setup_meet, teardown),
	    cmocka_unit_test_setup_teardown(meet_cache_round_trip, setup_meet, teardown),
	    cmocka_unit_test_setup_teardown(meet_legacy_gloo, setup_legacy, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
