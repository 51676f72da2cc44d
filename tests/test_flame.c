/*
 * The flame graph's merge (model/analysis/flame.c) on small hand-built trace.dbs
 * whose answers are worked out here: profiler steps merged by their
 * trailing #N, host, self and device time summed per name path, device
 * time carried up from the kernels, children widest first in each mode,
 * the id-ordered pass giving what the depth-first walk gives, and a file
 * whose ids break that pass's premise still read whole.  The screen: in a
 * terminal, F says what it merges while it merges, then gives the status
 * line back to the frame's figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/flame.h"
#include "model/view/model.h"
#include "model/store/store.h"
#include "tests/testdir.h"
#include "tui/app.h"
#include "tui/grid.h"

struct fx {
	char dir[256], db[300];
	struct model *m;
	int64_t thread, step1, step2, late;
};

static int64_t add_id(struct store *st, int64_t id, int64_t parent, int kind, const char *name,
		      int64_t dur, int64_t self, int64_t device, int64_t children)
{
	char *err = NULL;
	struct phase_row p = {0};
	p.id = id ? id : store_reserve_phase_id(st);
	p.parent_id = parent;
	p.kind = kind;
	p.name_id = store_intern(st, name, strlen(name), &err);
	p.dur_ns = dur;
	p.self_ns = self;
	p.device_ns = device;
	p.child_count = children;
	assert_int_equal(store_add_phase(st, &p, &err), 0);
	return p.id;
}

static int64_t add(struct store *st, int64_t parent, int kind, const char *name, int64_t dur,
		   int64_t self, int64_t device, int64_t children)
{
	return add_id(st, 0, parent, kind, name, dur, self, device, children);
}

/*
 * wf / thread /
 *   ProfilerStep#1 (100, self 10) / aten::mm (60, self 20) / cudaLaunchKernel (40) / gemm 30
 *                                 / aten::add (30, self 30)
 *   ProfilerStep#2 (50, self 5)   / aten::mm (45, self 15) / cudaLaunchKernel (30) / gemm 25
 *                                                          / cudaMemcpyAsync (0) / Memcpy 7
 *   other#x (5)
 * thread's self: 20.  The Memcpy's id is reserved before its parent's, as
 * no importer would: only the depth-first walk finds it.
 */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct store *st;
	char *err = NULL;
	assert_int_equal(testdir_make(f->dir, sizeof(f->dir), "flame"), 0);
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	assert_int_equal(store_open(f->db, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t early = store_reserve_phase_id(st);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 200, 0, 0, 1);
	f->thread = add(st, wf, PHASE_THREAD, "thread", 200, 20, 0, 3);
	int64_t s1 = f->step1 =
	    add(st, f->thread, PHASE_PROFILER_STEP, "ProfilerStep#1", 100, 10, 0, 2);
	int64_t mm = add(st, s1, PHASE_OPERATOR, "aten::mm", 60, 20, 0, 1);
	int64_t la = add(st, mm, PHASE_RUNTIME, "cudaLaunchKernel", 40, 40, 30, 1);
	add(st, s1, PHASE_OPERATOR, "aten::add", 30, 30, 0, 0);
	f->step2 = add(st, f->thread, PHASE_PROFILER_STEP, "ProfilerStep#2", 50, 5, 0, 1);
	int64_t mm2 = add(st, f->step2, PHASE_OPERATOR, "aten::mm", 45, 15, 0, 2);
	int64_t la2 = add(st, mm2, PHASE_RUNTIME, "cudaLaunchKernel", 30, 30, 25, 1);
	int64_t cp = add(st, mm2, PHASE_RUNTIME, "cudaMemcpyAsync", 0, 0, 7, 1);
	add(st, f->thread, PHASE_OPERATOR, "other#x", 5, 5, 0, 0);
	add(st, la, PHASE_KERNEL, "gemm", 30, 30, 30, 0);
	add(st, la2, PHASE_KERNEL, "gemm", 25, 25, 25, 0);
	f->late = add_id(st, early, cp, PHASE_MEMCPY, "Memcpy", 7, 7, 7, 0);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
	assert_int_equal(model_open(f->db, &f->m, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	model_free(f->m);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static const struct flame_frame *at(const struct flame *fl, const char *const *path, size_t n)
{
	int32_t i = flame_find(fl, path, n);
	assert_true(i >= 0);
	return &fl->f[i];
}

#define AT(fl, ...)                                                                                \
	at(fl, (const char *const[]){__VA_ARGS__},                                                 \
	   sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* The figures every way of reading the thread must give. */
static void check_thread(const struct flame *fl, int with_memcpy)
{
	assert_int_equal(fl->phases, with_memcpy ? 13 : 12);
	assert_int_equal(fl->left_out, 0);
	const struct flame_frame *t = AT(fl, "thread");
	assert_int_equal(t->count, 1);
	assert_int_equal(t->host_ns, 200);
	assert_int_equal(t->self_ns, 20);
	assert_int_equal(t->device_ns, 55 + (with_memcpy ? 7 : 0));
	assert_int_equal(t->kids_host_ns, 155); /* the steps' 150 and other#x's 5 */
	assert_int_equal(t->kids_device_ns, t->device_ns);
	const struct flame_frame *ps = AT(fl, "thread", "ProfilerStep#7");
	assert_string_equal(ps->name, "ProfilerStep#*");
	assert_int_equal(ps->count, 2);
	assert_int_equal(ps->host_ns, 150);
	assert_int_equal(ps->self_ns, 15);
	const struct flame_frame *mm = AT(fl, "thread", "ProfilerStep#*", "aten::mm");
	assert_int_equal(mm->count, 2);
	assert_int_equal(mm->host_ns, 105);
	assert_int_equal(mm->self_ns, 35);
	assert_int_equal(mm->device_ns, 55 + (with_memcpy ? 7 : 0));
	assert_int_equal(mm->device_self_ns, 0);
	const struct flame_frame *la =
	    AT(fl, "thread", "ProfilerStep#*", "aten::mm", "cudaLaunchKernel");
	assert_int_equal(la->count, 2);
	assert_int_equal(la->host_ns, 70);
	assert_int_equal(la->device_ns, 55);
	const struct flame_frame *k =
	    AT(fl, "thread", "ProfilerStep#*", "aten::mm", "cudaLaunchKernel", "gemm");
	assert_int_equal(k->count, 2);
	assert_int_equal(k->host_ns, 0); /* device work is no host time */
	assert_int_equal(k->device_ns, 55);
	assert_int_equal(k->device_self_ns, 55);
	assert_int_equal(AT(fl, "thread", "ProfilerStep#*", "aten::add")->count, 1);
	/* "#x" is not a number: no merge, and the name kept */
	assert_string_equal(AT(fl, "thread", "other#x")->name, "other#x");
	assert_true(flame_find(fl, (const char *const[]){"thread", "other#*"}, 2) < 0);
	assert_int_equal(flame_find(fl, (const char *const[]){"thread", "aten::mm"}, 2), -1);
	/* a parent before its children; every child listed once under it */
	size_t kids = 0;
	for (size_t i = 0; i < fl->n; i++) {
		kids += fl->f[i].nkids;
		for (uint32_t j = 0; j < fl->f[i].nkids; j++)
			assert_int_equal(fl->f[flame_kid(fl, (uint32_t)i, j)].parent, (int32_t)i);
		assert_true(i == 0 || fl->f[i].parent < (int32_t)i);
	}
	assert_int_equal(kids, fl->n - 1);
}

static void merges_by_name_path(void **state)
{
	struct fx *f = *state;
	struct flame fl;
	char *err = NULL;
	assert_int_equal(flame_build(f->m, f->thread, &fl, &err), 0);
	check_thread(&fl, 1);
	/* host: the steps (150) before other#x (5) */
	const struct flame_frame *t = &fl.f[0];
	assert_int_equal(t->nkids, 2);
	assert_string_equal(fl.f[flame_kid(&fl, 0, 0)].name, "ProfilerStep#*");
	assert_int_equal(flame_total(t, FLAME_HOST), 200);
	assert_int_equal(flame_self(t, FLAME_DEVICE), 0);
	flame_release(&fl);
}

static void one_step_keeps_its_name(void **state)
{
	struct fx *f = *state;
	struct flame fl;
	char *err = NULL;
	assert_int_equal(flame_build(f->m, f->step2, &fl, &err), 0);
	assert_string_equal(fl.f[0].name, "ProfilerStep#2");
	assert_int_equal(fl.f[0].count, 1);
	assert_int_equal(fl.f[0].host_ns, 50);
	assert_int_equal(fl.f[0].device_ns, 32);
	/* device mode sorts the launch (25) before the copy (7) */
	const struct flame_frame *mm = AT(&fl, "ProfilerStep#2", "aten::mm");
	flame_sort(&fl, FLAME_DEVICE);
	uint32_t i = (uint32_t)(mm - fl.f);
	assert_string_equal(fl.f[flame_kid(&fl, i, 0)].name, "cudaLaunchKernel");
	assert_string_equal(fl.f[flame_kid(&fl, i, 1)].name, "cudaMemcpyAsync");
	flame_sort(&fl, FLAME_HOST); /* host: 30 before 0 */
	assert_string_equal(fl.f[flame_kid(&fl, i, 0)].name, "cudaLaunchKernel");
	flame_release(&fl);
}

/* The id-ordered pass from the first row on: it cannot find the Memcpy
 * whose id is below its parent's, sees the count short, and the
 * depth-first walk reads the subtree again; every way gives one answer. */
static void every_walk_agrees(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	size_t limits[] = {0, 1, 3, SIZE_MAX};
	for (size_t i = 0; i < sizeof(limits) / sizeof(*limits); i++) {
		struct flame fl;
		assert_int_equal(flame_build_walk(f->m, f->thread, limits[i], &fl, &err), 0);
		check_thread(&fl, 1);
		flame_release(&fl);
		/* step 1's ids are in order: the pass reads it alone */
		assert_int_equal(flame_build_walk(f->m, f->step1, limits[i], &fl, &err), 0);
		assert_int_equal(fl.phases, 5);
		assert_int_equal(fl.f[0].host_ns, 100);
		assert_int_equal(fl.f[0].device_ns, 30);
		assert_int_equal(AT(&fl, "ProfilerStep#1", "aten::mm", "cudaLaunchKernel", "gemm")
				     ->device_self_ns,
				 30);
		flame_release(&fl);
	}
}

/* Bottom-up: every path to a name, largest first; recursion marked. */
static void callers_of_a_name(void **state)
{
	struct fx *f = *state;
	struct flame fl;
	char *err = NULL;
	uint32_t *rows;
	assert_int_equal(flame_build(f->m, f->thread, &fl, &err), 0);
	/* gemm: one path (both steps merged) */
	assert_int_equal(flame_named(&fl, "gemm", FLAME_DEVICE, &rows), 1);
	assert_int_equal(fl.f[rows[0]].device_ns, 55);
	assert_int_equal(fl.f[rows[0]].count, 2);
	assert_int_equal(flame_nested(&fl, rows[0]), 0);
	free(rows);
	/* a step's own name finds the merged frame */
	assert_int_equal(flame_named(&fl, "ProfilerStep#9", FLAME_HOST, &rows), 1);
	assert_int_equal(fl.f[rows[0]].count, 2);
	free(rows);
	assert_int_equal(flame_named(&fl, "nothing", FLAME_HOST, &rows), 0);
	assert_null(rows);
	flame_release(&fl);
}

/* wf / a (10) / b (6) / a (4) / b (1), and wf / b (3): b by two paths,
 * the deeper a below another a. */
static void callers_nested(void **state)
{
	char dir[256], db[300];
	struct store *st;
	struct model *m;
	struct flame fl;
	char *err = NULL;
	uint32_t *rows;
	assert_int_equal(testdir_make(dir, sizeof(dir), "flame2"), 0);
	snprintf(db, sizeof(db), "%s/t.db", dir);
	assert_int_equal(store_open(db, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 13, 0, 0, 2);
	int64_t a1 = add(st, wf, PHASE_OPERATOR, "a", 10, 4, 0, 1);
	int64_t b1 = add(st, a1, PHASE_OPERATOR, "b", 6, 2, 0, 1);
	int64_t a2 = add(st, b1, PHASE_OPERATOR, "a", 4, 3, 0, 1);
	add(st, a2, PHASE_OPERATOR, "b", 1, 1, 0, 0);
	add(st, wf, PHASE_OPERATOR, "b", 3, 3, 0, 0);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
	assert_int_equal(model_open(db, &m, &err), 0);
	assert_int_equal(flame_build(m, wf, &fl, &err), 0);
	assert_int_equal(flame_named(&fl, "b", FLAME_HOST, &rows), 3);
	assert_int_equal(fl.f[rows[0]].host_ns, 6);
	assert_int_equal(fl.f[rows[1]].host_ns, 3);
	assert_int_equal(fl.f[rows[2]].host_ns, 1);
	assert_int_equal(flame_nested(&fl, rows[0]), 0);
	assert_int_equal(flame_nested(&fl, rows[1]), 0);
	assert_int_equal(flame_nested(&fl, rows[2]), 1);
	free(rows);
	flame_release(&fl);
	model_free(m);
	testdir_remove(dir);
}

static void missing_phase_is_an_error(void **state)
{
	struct fx *f = *state;
	struct flame fl;
	char *err = NULL;
	assert_int_equal(flame_build(f->m, 999, &fl, &err), -1);
	assert_non_null(strstr(err, "no phase 999"));
	assert_non_null(strstr(err, "t.db"));
	free(err);
	assert_int_equal(fl.n, 0);
}

/* The status line show_now put on the screen, as the terminal's does. */
static char shown[512];

static void show_now_status(struct app *a)
{
	struct grid g;
	grid_init(&g, 80, 23, 1);
	app_draw(a, &g);
	grid_row_text(&g, 22, shown, sizeof(shown));
	grid_release(&g);
}

static void status_after_merge(void **state)
{
	struct fx *f = *state;
	struct app a;
	struct grid g;
	char *err = NULL, line[512];
	assert_int_equal(app_init(&a, f->m, 1, NULL, &err), 0);
	a.show_now = show_now_status;
	assert_int_equal(tree_view_goto(&a.tree, "/wf/thread", &err), 0);
	shown[0] = 0;
	app_key(&a, 'F');
	assert_string_equal(shown, "merging thread's subtree by name path ...");
	grid_init(&g, 80, 23, 1);
	app_draw(&a, &g);
	grid_row_text(&g, 22, line, sizeof(line));
	assert_string_equal(line, "total 200 ns (100.0%)  self 20 ns  count 1  thread");
	grid_release(&g);
	app_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(merges_by_name_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(one_step_keeps_its_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(every_walk_agrees, setup, teardown),
	    cmocka_unit_test_setup_teardown(callers_of_a_name, setup, teardown),
	    cmocka_unit_test(callers_nested),
	    cmocka_unit_test_setup_teardown(missing_phase_is_an_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(status_after_merge, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
