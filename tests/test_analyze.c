/*
 * Unit tests of the analyses (model/imbalance.c, issues.c, analyze.c) on a
 * trace.db written row by row, with the expected figures worked out by hand
 * in each test.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/analyze.h"
#include "model/ptree.h"
#include "model/xalloc.h"
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
	    cmocka_unit_test_setup_teardown(loop_is_an_error, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
