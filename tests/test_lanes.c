/*
 * The timeline's lanes (model/view/lanes.c) on a small hand-built trace.db whose
 * layout is worked out here: a lane per track in sort order, a row per
 * nesting depth on a thread, kernels on row 0 of their stream under the
 * call that launched them, containers and phases nested past the rows
 * drawn kept but not drawn; over a limit the deepest rows dropped with
 * their children moved up and kernels never dropped, even past the limit;
 * the depth-first numbers, the seek, the virtual root and a cancelled read;
 * a row's busy time and column shades with overlapping kernels counted
 * once.
 * A generated trace of launches checks the limit on thousands of phases:
 * every kernel kept, and the layout's time linear when the limit and the
 * phases grow tenfold together.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/view/lanes.h"
#include "model/view/model.h"
#include "model/store/store.h"
#include "model/util/sbuf.h"
#include "tests/phasefx.h"
#include "tests/testdir.h"

struct fx {
	char dir[256], db[300];
	struct model *m;
	int64_t step, thread, a, a1, a2, a3, launch, k1, l2, k2, b, x;
};

/*
 * step / thread T / A 0..100 / A1 10..50 / A2 12..40 / A3 13..30 / launch 14..15 / K1 on S 60..70
 *                 /          / L2 60..61 / K2 on S 80..90
 *                 / B 100..150
 *      / stream S (no children)
 *      / X 20..30 on a track the file does not list
 * Tracks sort S (1) before T (2).  A thread's rows: A, B (0); A1, L2 (1);
 * A2 (2); A3 (3); launch on row 4, past LANES_NEST: kept, not drawn.
 */
static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct writer w = {0};
	char *err = NULL;
	if (!f || testdir_make(f->dir, sizeof(f->dir), "lanes") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/trace.db", f->dir);
	if (store_open(f->db, STORE_WRITE, &w.st, &err) < 0 || store_begin(w.st, &err) < 0)
		fail_msg("cannot open %s: %s", f->db, err ? err : "?");
	struct source_row sr = {
	    .path = "t.json", .format = "chrome", .anchor = "epoch", .rank = -1};
	w.src = store_add_source(w.st, &sr, &err);
	int64_t t = add_track(&w, "thread", "T", 2), s = add_track(&w, "stream", "S", 1);
	f->step = add_phase(&w, 0, PHASE_STEP, "step", 0, 0, 150, 3, 0);
	f->thread = add_phase(&w, f->step, PHASE_THREAD, "thread T", t, 0, 150, 2, 0);
	f->a = add_phase(&w, f->thread, PHASE_OPERATOR, "A", t, 0, 100, 2, 0);
	f->a1 = add_phase(&w, f->a, PHASE_OPERATOR, "A1", t, 10, 40, 1, 0);
	f->a2 = add_phase(&w, f->a1, PHASE_OPERATOR, "A2", t, 12, 28, 1, 0);
	f->a3 = add_phase(&w, f->a2, PHASE_OPERATOR, "A3", t, 13, 17, 1, 0);
	f->launch = add_phase(&w, f->a3, PHASE_RUNTIME, "launch", t, 14, 1, 1, 0);
	f->k1 = add_phase(&w, f->launch, PHASE_KERNEL, "K1", s, 60, 10, 0, 0);
	f->l2 = add_phase(&w, f->a, PHASE_RUNTIME, "L2", t, 60, 1, 1, 0);
	f->k2 = add_phase(&w, f->l2, PHASE_KERNEL, "K2", s, 80, 10, 0, 0);
	f->b = add_phase(&w, f->thread, PHASE_OPERATOR, "B", t, 100, 50, 0, 0);
	add_phase(&w, f->step, PHASE_STREAM, "stream S", s, 0, 0, 0, 0);
	f->x = add_phase(&w, f->step, PHASE_SPAN, "X", 999, 20, 10, 0, 0);
	writer_close(&w);
	if (model_open(f->db, &f->m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	model_free(f->m);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

/* The index of phase id among the spans, -1 when it was not kept. */
static int32_t span_of(const struct lanes *l, int64_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->s[i].id == id)
			return (int32_t)i;
	return -1;
}

/* The spans kept that are not device work. */
static size_t host_and_containers(const struct lanes *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += !lanes_is_device(l->s[i].kind);
	return n;
}

static const char *lane_name(const struct lanes *l, size_t k)
{
	return l->lane[k].t ? l->lane[k].t->name : "(no track)";
}

static void test_layout(void **state)
{
	struct fx *f = *state;
	struct lanes l;
	char *err = NULL;
	assert_int_equal(lanes_build(f->m, NULL, f->step, LANES_MAX_SPANS, NULL, &l, &err), 0);
	/* S, T by sort index, then the unknown track's lane */
	assert_int_equal(l.nlanes, 3);
	assert_string_equal(lane_name(&l, 0), "S");
	assert_string_equal(lane_name(&l, 1), "T");
	assert_string_equal(lane_name(&l, 2), "(no track)");
	assert_int_equal(l.lane[0].nrows, 1);
	assert_int_equal(l.lane[1].nrows, LANES_NEST);
	assert_int_equal(l.lane[1].row, 1);
	assert_int_equal(l.nrows, 1 + LANES_NEST + 1);
	/* the window: the step's own */
	assert_true(l.t0 == 0 && l.t1 == 150);
	/* kept: every phase; launch, on row 4, is not drawn */
	assert_int_equal(l.n, 12);
	int32_t launch = span_of(&l, f->launch);
	assert_true(launch >= 0);
	assert_int_equal(l.s[launch].row, -1);
	assert_int_equal(l.s[launch].lane, 1);
	assert_int_equal(l.left_out, 0);
	int32_t a = span_of(&l, f->a), a3 = span_of(&l, f->a3), k1 = span_of(&l, f->k1);
	int32_t k2 = span_of(&l, f->k2), l2 = span_of(&l, f->l2), b = span_of(&l, f->b);
	int32_t th = span_of(&l, f->thread);
	assert_true(a >= 0 && a3 >= 0 && k1 >= 0 && k2 >= 0 && l2 >= 0 && b >= 0 && th >= 0);
	/* rows: containers none; A, B on T's row 0; A3 on its row 3; kernels on S */
	assert_int_equal(l.s[th].row, -1);
	assert_int_equal(l.s[a].row, 1);
	assert_int_equal(l.s[a].lane, 1);
	assert_int_equal(l.s[th].lane, -1);
	assert_int_equal(l.s[b].row, 1);
	assert_int_equal(l.s[l2].row, 2);
	assert_int_equal(l.s[a3].row, 4);
	assert_int_equal(l.s[k1].row, 0);
	assert_int_equal(l.s[k2].row, 0);
	assert_int_equal(l.s[span_of(&l, f->x)].row, 5);
	/* K1 hangs under launch, K2 under L2 */
	assert_int_equal(l.s[k1].parent, launch);
	assert_int_equal(l.s[launch].parent, a3);
	assert_int_equal(l.s[k2].parent, l2);
	/* ancestry by the depth-first numbers */
	assert_true(lanes_covers(&l, (uint32_t)a, (uint32_t)k1));
	assert_true(lanes_covers(&l, (uint32_t)th, (uint32_t)k2));
	assert_true(lanes_covers(&l, (uint32_t)k1, (uint32_t)k1));
	assert_false(lanes_covers(&l, (uint32_t)b, (uint32_t)k1));
	assert_false(lanes_covers(&l, (uint32_t)k1, (uint32_t)a));
	/* by_pre: each subtree a range, A's holding exactly its 8 phases */
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(l.by_pre[l.s[i].pre], i);
	assert_int_equal(l.s[a].last - l.s[a].pre, 7);
	/* children by start: the root's thread (0), X (20), stream (0, later id) */
	assert_int_equal(l.nroot, 3);
	assert_int_equal(l.s[l.kids[2]].id, f->x);
	assert_int_equal(l.s[a].nkids, 2);
	assert_int_equal(l.s[l.kids[l.s[a].kids]].id, f->a1);
	assert_int_equal(l.s[l.kids[l.s[a].kids + 1]].id, f->l2);
	/* S's row: K1 60..70, K2 80..90; seeks by end */
	const struct lane_row *rw = &l.row[0];
	assert_int_equal(rw->n, 2);
	assert_int_equal(lanes_seek(&l, 0, 0), 0);
	assert_int_equal(lanes_seek(&l, 0, 70), 0);
	assert_int_equal(lanes_seek(&l, 0, 71), 1);
	assert_int_equal(lanes_seek(&l, 0, 91), 2);
	lanes_release(&l);
}

/* Under a limit the deepest host rows go first; kernels stay. */
static void test_limit_drops_deep_rows_first(void **state)
{
	struct fx *f = *state;
	struct lanes l;
	char *err = NULL;
	assert_int_equal(lanes_build(f->m, NULL, f->step, 8, NULL, &l, &err), 0);
	assert_true(l.n <= 8);
	/* the phases dropped are counted: A1, A2, A3, launch and L2 */
	assert_int_equal(l.left_out, 5);
	assert_int_equal(l.n + l.left_out, 12);
	int32_t a = span_of(&l, f->a), k1 = span_of(&l, f->k1), k2 = span_of(&l, f->k2);
	assert_true(a >= 0 && k1 >= 0 && k2 >= 0 && span_of(&l, f->b) >= 0);
	assert_int_equal(span_of(&l, f->a1), -1);
	assert_int_equal(span_of(&l, f->a3), -1);
	assert_int_equal(l.s[k1].parent, a);
	assert_int_equal(l.s[k2].parent, a);
	assert_int_equal(l.lane[1].nrows, 1);
	assert_true(lanes_covers(&l, (uint32_t)a, (uint32_t)k2));
	lanes_release(&l);
	/* below what one row needs: the rest is counted as left out, but the
	 * kernels, kept past the limit */
	assert_int_equal(lanes_build(f->m, NULL, f->step, 3, NULL, &l, &err), 0);
	/* the thread and A, K1 the third, K2 past the limit */
	assert_int_equal(l.n, 4);
	assert_int_equal(host_and_containers(&l), 2);
	assert_true(span_of(&l, f->thread) >= 0 && span_of(&l, f->a) >= 0);
	assert_true(span_of(&l, f->k1) >= 0 && span_of(&l, f->k2) >= 0);
	assert_int_equal(l.s[span_of(&l, f->k2)].parent, span_of(&l, f->a));
	assert_int_equal(l.n + l.left_out, 12);
	lanes_release(&l);
}

/*
 * step / thread T / op i 10i..10i+5 / launch i 10i+1..+2 / kernel i on S 10i+3..+7
 *      / stream S
 * for i < k: 3k + 2 phases below the step, the launches on T's row 1.
 */
static int64_t make_launches(const char *db, int k)
{
	struct writer w;
	writer_open(&w, db);
	int64_t t = add_track(&w, "thread", "T", 2), s = add_track(&w, "stream", "S", 1);
	int64_t step = add_phase(&w, 0, PHASE_STEP, "step", 0, 0, 10 * (int64_t)k, 2, 0);
	int64_t th = add_phase(&w, step, PHASE_THREAD, "thread T", t, 0, 10 * (int64_t)k, k, 0);
	add_phase(&w, step, PHASE_STREAM, "stream S", s, 0, 10 * (int64_t)k, 0, 0);
	for (int i = 0; i < k; i++) {
		int64_t at = 10 * (int64_t)i;
		int64_t op = add_phase(&w, th, PHASE_OPERATOR, "op", t, at, 5, 1, 0);
		int64_t launch = add_phase(&w, op, PHASE_RUNTIME, "launch", t, at + 1, 1, 1, 0);
		add_phase(&w, launch, PHASE_KERNEL, "kernel", s, at + 3, 4, 0, 0);
	}
	writer_close(&w);
	return step;
}

/* What a layout of make_launches(k) under limit max must hold: every
 * kernel, under its operator or, where that was left out, the thread; no
 * more than max other phases; and the rest counted as left out. */
static void check_launches(const struct lanes *l, int k, size_t max)
{
	size_t kernels = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct lane_span *s = &l->s[i];
		if (!lanes_is_device(s->kind))
			continue;
		kernels++;
		assert_true(s->parent >= 0);
		const struct lane_span *p = &l->s[s->parent];
		assert_true(p->kind == PHASE_OPERATOR || p->kind == PHASE_THREAD);
		assert_true(p->kind == PHASE_THREAD || (p->start <= s->start && s->start < p->end));
		assert_true(lanes_covers(l, (uint32_t)s->parent, (uint32_t)i));
	}
	assert_int_equal(kernels, k);
	assert_true(host_and_containers(l) <= max);
	assert_true(l->left_out > 0);
	assert_int_equal(l->n + (size_t)l->left_out, 3 * (size_t)k + 2);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Past the limit the launches' row goes, then operators are left out:
 * their kernels are kept all the same, more of them than the limit. */
static void test_limit_keeps_device_work(void **state)
{
	(void)state;
	char dir[256], db[300], *err = NULL;
	struct model *m = NULL;
	struct lanes l;
	assert_int_equal(testdir_make(dir, sizeof(dir), "lanes-dev"), 0);
	snprintf(db, sizeof(db), "%s/trace.db", dir);
	int64_t step = make_launches(db, 3000);
	if (model_open(db, &m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	assert_int_equal(lanes_build(m, NULL, step, 1000, NULL, &l, &err), 0);
	check_launches(&l, 3000, 1000);
	assert_int_equal(l.lane[1].nrows, 1);
	lanes_release(&l);
	model_free(m);
	testdir_remove(dir);
}

/* The layout's CPU time (the least of three) for limits max and 10 max
 * over 2 max and 20 max operators: linear, it grows about tenfold; a pass
 * over the spans kept per phase read past the limit made it a hundredfold. */
static void test_limit_linear(void **state)
{
	(void)state;
	char dir[256], db[2][300], *err = NULL;
	double best[2];
	assert_int_equal(testdir_make(dir, sizeof(dir), "lanes-lin"), 0);
	for (int x = 0; x < 2; x++) {
		size_t max = x ? 20000 : 2000;
		int k = 2 * (int)max;
		struct model *m = NULL;
		snprintf(db[x], sizeof(db[x]), "%s/t%d.db", dir, x);
		int64_t step = make_launches(db[x], k);
		if (model_open(db[x], &m, &err) < 0)
			fail_msg("model_open: %s", err ? err : "?");
		best[x] = -1;
		for (int run = 0; run < 3; run++) {
			struct lanes l;
			double t0 = cpu_seconds();
			assert_int_equal(lanes_build(m, NULL, step, max, NULL, &l, &err), 0);
			double t = cpu_seconds() - t0;
			check_launches(&l, k, max);
			lanes_release(&l);
			if (best[x] < 0 || t < best[x])
				best[x] = t;
		}
		model_free(m);
	}
	testdir_remove(dir);
	double ratio = best[1] / (best[0] > 1e-6 ? best[0] : 1e-6);
	print_message("layout: %.4f s at 6k phases, %.4f s at 60k: %.1fx\n", best[0], best[1],
		      ratio);
	if (ratio > 30)
		fail_msg("tenfold phases and limit took %.1fx the time (linear: about 10x)", ratio);
}

/* Root 0 (the tree's top): every phase, the step a container under it. */
static void test_virtual_root(void **state)
{
	struct fx *f = *state;
	struct lanes l;
	char *err = NULL;
	assert_int_equal(lanes_build(f->m, NULL, 0, LANES_MAX_SPANS, NULL, &l, &err), 0);
	assert_int_equal(l.nroot, 1);
	assert_int_equal(l.s[l.kids[0]].id, f->step);
	assert_int_equal(l.n, 13);
	assert_true(l.t0 == 0 && l.t1 == 150);
	lanes_release(&l);
}

static void test_cancel_and_missing_root(void **state)
{
	struct fx *f = *state;
	struct lanes l;
	char *err = NULL;
	atomic_int cancel = 1;
	assert_int_equal(lanes_build(f->m, NULL, f->step, LANES_MAX_SPANS, &cancel, &l, &err), -1);
	assert_non_null(strstr(err, "interrupted"));
	free(err);
	err = NULL;
	assert_int_equal(lanes_build(f->m, NULL, 12345, LANES_MAX_SPANS, NULL, &l, &err), -1);
	assert_non_null(strstr(err, "no phase 12345"));
	free(err);
}

/* A stream whose kernels overlap: K 0..40 and 20..60 (and 50..55 inside
 * them) are busy 0..60 once, not 95 ns; then an instant at 70 and K
 * 90..100.  Busy in total 70 ns of the 100. */
static void test_busy_and_shade(void **state)
{
	char dir[256], db[300], *err = NULL;
	struct writer w;
	struct model *m;
	struct lanes l;
	(void)state;
	assert_int_equal(testdir_make(dir, sizeof(dir), "lanes-busy"), 0);
	snprintf(db, sizeof(db), "%s/trace.db", dir);
	writer_open(&w, db);
	int64_t t = add_track(&w, "thread", "T", 2), s = add_track(&w, "stream", "S", 1);
	int64_t step = add_phase(&w, 0, PHASE_STEP, "step", 0, 0, 100, 1, 0);
	int64_t th = add_phase(&w, step, PHASE_THREAD, "thread T", t, 0, 100, 1, 0);
	int64_t call = add_phase(&w, th, PHASE_RUNTIME, "launch", t, 0, 100, 5, 0);
	add_phase(&w, call, PHASE_KERNEL, "K", s, 0, 40, 0, 0);
	add_phase(&w, call, PHASE_KERNEL, "K", s, 20, 40, 0, 0);
	add_phase(&w, call, PHASE_KERNEL, "K", s, 50, 5, 0, 0);
	add_phase(&w, call, PHASE_KERNEL, "I", s, 70, 0, 0, 0);
	add_phase(&w, call, PHASE_KERNEL, "K", s, 90, 10, 0, 0);
	writer_close(&w);
	if (model_open(db, &m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	assert_int_equal(lanes_build(m, NULL, step, LANES_MAX_SPANS, NULL, &l, &err), 0);
	assert_string_equal(lane_name(&l, 0), "S");
	size_t r = l.lane[0].row;
	assert_int_equal(lanes_busy(&l, r, 0, 100), 70);
	assert_int_equal(lanes_busy(&l, r, 30, 95), 35);
	assert_int_equal(lanes_busy(&l, r, 60, 90), 0);
	assert_int_equal(lanes_busy(&l, r, 100, 0), 0);
	/* ten columns of 10 ns: full to 60, empty (the instant takes no
	 * time) to 90, full again */
	double sh[10];
	const double want[10] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 1};
	lanes_shade(&l, r, 0, 100, 10, sh);
	for (int c = 0; c < 10; c++)
		assert_float_equal(sh[c], want[c], 1e-12);
	/* three columns: [0, 33), [33, 66), [66, 100) */
	assert_int_equal(lanes_column_start(0, 100, 1, 3), 33);
	assert_int_equal(lanes_column_start(0, 100, 2, 3), 66);
	assert_int_equal(lanes_column_start(0, 100, 3, 3), 100);
	lanes_shade(&l, r, 0, 100, 3, sh);
	assert_float_equal(sh[0], 1, 1e-12);
	assert_float_equal(sh[1], 27.0 / 33, 1e-12);
	assert_float_equal(sh[2], 10.0 / 34, 1e-12);
	/* a window of no length: covered or not */
	lanes_shade(&l, r, 30, 30, 2, sh);
	assert_true(sh[0] == 1 && sh[1] == 1);
	lanes_shade(&l, r, 80, 80, 1, sh);
	assert_true(sh[0] == 0);
	/* the thread's row: the launch, busy throughout */
	assert_int_equal(lanes_busy(&l, l.lane[1].row, 0, 100), 100);
	/* the window [30, 95) summed: S busy 30..60 and 90..95; by name, the
	 * launch 65 ns, K 10 + 30 + 5 + 5 clipped (overlaps are each K's own
	 * time), the instant I none, each counted */
	struct lanes_sum sum;
	lanes_sum(&l, 30, 95, &sum);
	assert_int_equal(sum.lane_busy[0], 35);
	assert_int_equal(sum.lane_busy[1], 65);
	assert_int_equal(sum.nname, 3);
	struct sbuf name = SBUF_INIT;
	const char *want_name[] = {"launch", "K", "I"};
	const uint64_t want_ns[] = {65, 50, 0}, want_count[] = {1, 4, 1};
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(store_string(model_store(m), sum.name[i].name_id, &name, &err),
				    want_name[i]);
		assert_int_equal(sum.name[i].ns, want_ns[i]);
		assert_int_equal(sum.name[i].count, want_count[i]);
	}
	assert_int_equal(sum.name[1].device, 1);
	assert_int_equal(sum.name[0].device, 0);
	sbuf_release(&name);
	lanes_sum_release(&sum);
	/* a window past every span: nothing */
	lanes_sum(&l, 200, 300, &sum);
	assert_true(sum.nname == 0 && sum.lane_busy[0] == 0 && sum.lane_busy[1] == 0);
	lanes_sum_release(&sum);
	lanes_release(&l);
	model_free(m);
	testdir_remove(dir);
}

/* A range's sums count the phases nested past the rows drawn (launch, on
 * row 4 under A3), once, and the kernels on their stream. */
static void test_sum_counts_undrawn(void **state)
{
	struct fx *f = *state;
	struct lanes l;
	struct lanes_sum sum;
	struct sbuf name = SBUF_INIT;
	char *err = NULL;
	assert_int_equal(lanes_build(f->m, NULL, f->step, LANES_MAX_SPANS, NULL, &l, &err), 0);
	assert_true(l.s[span_of(&l, f->launch)].row < 0);
	lanes_sum(&l, 0, 150, &sum);
	int seen = 0;
	for (size_t i = 0; i < sum.nname; i++) {
		const char *n = store_string(model_store(f->m), sum.name[i].name_id, &name, &err);
		if (!strcmp(n, "launch")) {
			assert_int_equal(sum.name[i].ns, 1);
			assert_int_equal(sum.name[i].count, 1);
			seen |= 1;
		}
		if (!strcmp(n, "K1")) {
			assert_int_equal(sum.name[i].ns, 10);
			seen |= 2;
		}
	}
	assert_int_equal(seen, 3);
	/* S (K1 60..70, K2 80..90) and T (A, B: 0..150) */
	assert_int_equal(sum.lane_busy[0], 20);
	assert_int_equal(sum.lane_busy[1], 150);
	sbuf_release(&name);
	lanes_sum_release(&sum);
	lanes_release(&l);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_layout),
	    T(test_limit_drops_deep_rows_first),
	    cmocka_unit_test(test_limit_keeps_device_work),
	    cmocka_unit_test(test_limit_linear),
	    T(test_virtual_root),
	    T(test_cancel_and_missing_root),
	    cmocka_unit_test(test_busy_and_shade),
	    T(test_sum_counts_undrawn),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
