/*
 * The tree screen's logic (treeview.c) and drawing (tree.c) on a small
 * hand-built trace.db: sorting and flipping, drilling in and back up to the
 * same row, the costliest child, smart-case search that wraps, filters,
 * goto with '/' inside names or a name's trailing blank left out, and the
 * drawn rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/store.h"
#include "tests/testdir.h"
#include "tui/app.h"

struct fx {
	char dir[256], db[300];
	struct model *m;
	struct tree_view v;
};

static int64_t add(struct store *st, int64_t parent, int kind, const char *name, int64_t start,
		   int64_t dur, int64_t self, int64_t children, int depth)
{
	char *err = NULL;
	struct phase_row p = {0};
	p.id = store_reserve_phase_id(st);
	p.parent_id = parent;
	p.kind = kind;
	p.name_id = store_intern(st, name, strlen(name), &err);
	p.start_ns = start;
	p.dur_ns = dur;
	p.self_ns = self;
	p.child_count = children;
	p.depth = depth;
	assert_int_equal(store_add_phase(st, &p, &err), 0);
	return p.id;
}

/* wf / train / {aten::mm 40, aten::add 10, Aten::relu 25, a/b 5} and
 * train / a/b / {inner 3} */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct store *st;
	char *err = NULL;
	assert_int_equal(testdir_make(f->dir, sizeof(f->dir), "tree"), 0);
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	assert_int_equal(store_open(f->db, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 100, 0, 2, 0);
	int64_t tr = add(st, wf, PHASE_STEP, "train", 0, 100, 20, 4, 1);
	add(st, tr, PHASE_OPERATOR, "aten::mm", 0, 40, 40, 0, 2);
	add(st, tr, PHASE_OPERATOR, "aten::add", 40, 10, 10, 0, 2);
	add(st, tr, PHASE_OPERATOR, "Aten::relu", 50, 25, 5, 0, 2);
	int64_t ab = add(st, tr, PHASE_OPERATOR, "a/b", 80, 5, 2, 1, 2);
	add(st, ab, PHASE_OPERATOR, "inner", 81, 3, 3, 0, 3);
	add(st, wf, PHASE_STREAM, "stream 7 ", 10, 50, 40, 0, 1); /* Kineto's name */
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
	assert_int_equal(model_open(f->db, &f->m, &err), 0);
	assert_int_equal(tree_view_init(&f->v, f->m, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	tree_view_release(&f->v);
	model_free(f->m);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static const char *sel(struct fx *f)
{
	return tree_view_selected(&f->v)->name;
}

static void drill_and_sort(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	/* the top has one row, wf: the first screen is wf's two */
	assert_string_equal(f->v.node->name, "wf");
	assert_string_equal(sel(f), "train");
	assert_int_equal(tree_view_enter(&f->v, &err), 1);
	assert_int_equal(f->v.nrows, 4);
	/* default: duration, longest first */
	assert_string_equal(f->v.rows[0]->name, "aten::mm");
	assert_string_equal(f->v.rows[3]->name, "a/b");
	tree_view_sort(&f->v, SORT_DUR); /* same key flips */
	assert_string_equal(f->v.rows[0]->name, "a/b");
	tree_view_sort(&f->v, SORT_NAME);
	assert_string_equal(f->v.rows[0]->name, "Aten::relu");
	tree_view_sort(&f->v, SORT_SELF);
	assert_string_equal(f->v.rows[0]->name, "aten::mm");
	tree_view_sort(&f->v, SORT_START);
	assert_string_equal(f->v.rows[2]->name, "Aten::relu");
	/* a leaf cannot be entered */
	f->v.sel = 0;
	assert_int_equal(tree_view_enter(&f->v, &err), 0);
	/* into a/b and back: a/b is selected again */
	f->v.sel = 3;
	assert_int_equal(tree_view_enter(&f->v, &err), 1);
	assert_string_equal(sel(f), "inner");
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_string_equal(sel(f), "a/b");
	tree_view_costliest(&f->v);
	assert_string_equal(sel(f), "aten::mm");
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_string_equal(sel(f), "wf");
	assert_int_equal(tree_view_up(&f->v, &err), 0); /* the top */
}

/* wf / s / rank / {proc (one child: thread / {a, b}), lone (one leaf),
 * Spans (the profiler's bookkeeping, the longest: one thread)} */
static int setup_chain(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct store *st;
	char *err = NULL;
	assert_int_equal(testdir_make(f->dir, sizeof(f->dir), "chain"), 0);
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	assert_int_equal(store_open(f->db, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 100, 0, 1, 0);
	int64_t s = add(st, wf, PHASE_STEP, "s", 0, 100, 0, 1, 1);
	int64_t r = add(st, s, PHASE_RANK, "rank 0", 0, 100, 0, 3, 2);
	int64_t p = add(st, r, PHASE_PROCESS, "proc", 0, 90, 0, 1, 3);
	int64_t t = add(st, p, PHASE_THREAD, "thread", 0, 90, 0, 2, 4);
	add(st, t, PHASE_OPERATOR, "a", 0, 50, 50, 0, 5);
	add(st, t, PHASE_OPERATOR, "b", 50, 40, 40, 0, 5);
	int64_t lone = add(st, r, PHASE_PROCESS, "lone", 0, 10, 0, 1, 3);
	add(st, lone, PHASE_THREAD, "leaf", 0, 10, 10, 0, 4);
	int64_t books = add(st, r, PHASE_PROFILER, "Spans", 0, 100, 0, 1, 3);
	add(st, books, PHASE_PROFILER, "PyTorch Profiler", 0, 100, 0, 0, 4);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
	assert_int_equal(model_open(f->db, &f->m, &err), 0);
	assert_int_equal(tree_view_init(&f->v, f->m, &err), 0);
	*state = f;
	return 0;
}

/* The first screen and every drill pass through chains of only children
 * to the first level with more than one row; up goes back one level at a
 * time through what was passed. */
static void open_where_the_work_is(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_string_equal(f->v.node->name, "rank 0");
	assert_int_equal(f->v.nrows, 3);
	assert_string_equal(sel(f), "proc");
	/* proc's only child, thread, has two: Enter shows them */
	assert_int_equal(tree_view_enter(&f->v, &err), 1);
	assert_string_equal(f->v.node->name, "thread");
	assert_string_equal(sel(f), "a");
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_string_equal(f->v.node->name, "proc");
	assert_string_equal(sel(f), "thread");
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_string_equal(f->v.node->name, "rank 0");
	assert_string_equal(sel(f), "proc");
	/* a chain that ends in a lone leaf stops above it */
	tree_view_move(&f->v, 1);
	assert_string_equal(sel(f), "lone");
	assert_int_equal(tree_view_enter(&f->v, &err), 1);
	assert_string_equal(f->v.node->name, "lone");
	assert_string_equal(sel(f), "leaf");
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_string_equal(f->v.node->name, "s");
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_int_equal(tree_view_up(&f->v, &err), 0);
	assert_string_equal(sel(f), "wf");
	/* Enter from the top goes down the whole chain again */
	assert_int_equal(tree_view_enter(&f->v, &err), 1);
	assert_string_equal(f->v.node->name, "rank 0");
}

static void search_and_filter(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	int wrapped;
	assert_int_equal(tree_view_goto(&f->v, "/wf/train/aten::mm", &err), 0);
	assert_string_equal(sel(f), "aten::mm");
	/* lower case matches both cases; an upper-case letter makes it exact */
	assert_int_equal(tree_view_search(&f->v, "aten", 1, &wrapped), 1);
	assert_string_equal(sel(f), "Aten::relu");
	assert_int_equal(wrapped, 0);
	assert_int_equal(tree_view_search(&f->v, "aten", 1, &wrapped), 1);
	assert_string_equal(sel(f), "aten::add");
	assert_int_equal(tree_view_search(&f->v, "Aten", 1, &wrapped), 1);
	assert_string_equal(sel(f), "Aten::relu");
	assert_int_equal(wrapped, 1);
	assert_int_equal(tree_view_search(&f->v, "aten::mm", -1, &wrapped), 1);
	assert_string_equal(sel(f), "aten::mm");
	assert_int_equal(tree_view_search(&f->v, "nothing", 1, &wrapped), 0);
	tree_view_set_filter(&f->v, "ATEN");
	assert_int_equal(f->v.nrows, 0);
	tree_view_set_filter(&f->v, "aten");
	assert_int_equal(f->v.nrows, 3);
	tree_view_set_filter(&f->v, "");
	assert_int_equal(f->v.nrows, 4);
	assert_null(f->v.filter);
}

/* / searches the whole subtree below the current level, in order of start,
 * from after the selected row, smart case, wrapping. */
static void find_below(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	int wrapped;
	assert_string_equal(f->v.node->name, "wf");
	assert_string_equal(sel(f), "train");
	/* two levels down, not among the rows shown */
	assert_int_equal(tree_view_find(&f->v, "inner", &err), 1);
	assert_string_equal(f->v.node->name, "a/b");
	assert_string_equal(sel(f), "inner");
	assert_int_equal(f->v.nhits, 1);
	assert_int_equal(tree_view_goto(&f->v, "/wf/train", &err), 0);
	assert_int_equal(tree_view_enter(&f->v, &err), 1);
	assert_string_equal(sel(f), "aten::mm");
	/* in order of start (mm 0, add 40, relu 50): the first after mm */
	assert_int_equal(tree_view_find(&f->v, "aten", &err), 1);
	assert_int_equal(f->v.nhits, 3);
	assert_int_equal(f->v.hit, 1);
	assert_string_equal(sel(f), "aten::add");
	assert_int_equal(tree_view_find_next(&f->v, 1, &wrapped, &err), 1);
	assert_string_equal(sel(f), "Aten::relu");
	assert_int_equal(wrapped, 0);
	assert_int_equal(tree_view_find_next(&f->v, 1, &wrapped, &err), 1);
	assert_string_equal(sel(f), "aten::mm");
	assert_int_equal(wrapped, 1);
	assert_int_equal(tree_view_find_next(&f->v, -1, &wrapped, &err), 1);
	assert_string_equal(sel(f), "Aten::relu");
	assert_int_equal(wrapped, 1);
	/* an upper-case letter makes it exact; after the selected row */
	assert_int_equal(tree_view_find(&f->v, "Aten", &err), 1);
	assert_int_equal(f->v.nhits, 1);
	assert_int_equal(tree_view_find(&f->v, "nothing", &err), 0);
	assert_int_equal(tree_view_find_next(&f->v, 1, &wrapped, &err), 0);
	/* below train only: the stream beside it is not searched */
	assert_int_equal(tree_view_find(&f->v, "stream", &err), 0);
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_int_equal(tree_view_find(&f->v, "stream", &err), 1);
	assert_string_equal(sel(f), "stream 7 ");
}

static void goto_paths(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(tree_view_goto(&f->v, "/wf/train/a/b/inner", &err), 0);
	assert_string_equal(sel(f), "inner");
	assert_string_equal(f->v.node->name, "a/b");
	assert_int_equal(tree_view_goto(&f->v, "/", &err), 0);
	assert_string_equal(sel(f), "wf");
	assert_int_equal(tree_view_goto(&f->v, "/wf/nope", &err), -1);
	assert_non_null(strstr(err, "nope"));
	free(err);
	/* a name's trailing blank may be left out, as the screens show it */
	assert_int_equal(tree_view_goto(&f->v, "/wf/stream 7", &err), 0);
	assert_string_equal(sel(f), "stream 7 ");
	assert_int_equal(tree_view_goto(&f->v, "/wf/stream 7 ", &err), 0);
	assert_string_equal(sel(f), "stream 7 ");
	assert_int_equal(tree_view_goto(&f->v, "/wf/stream", &err), -1);
	free(err);
}

static void drawn_rows(void **state)
{
	struct fx *f = *state;
	struct app a;
	struct grid g;
	char *err = NULL, line[512];
	memset(&a, 0, sizeof(a));
	a.m = f->m;
	a.g = glyphs_get(1);
	assert_int_equal(tree_view_init(&a.tree, f->m, &err), 0);
	assert_int_equal(tree_view_goto(&a.tree, "/wf/train/aten::add", &err), 0);
	grid_init(&g, 80, 24, 1);
	app_draw(&a, &g);
	grid_row_text(&g, 0, line, sizeof(line));
	assert_string_equal(line, "grademl-tui > wf > train");
	grid_row_text(&g, 1, line, sizeof(line));
	assert_non_null(strstr(line, "Name"));
	assert_non_null(strstr(line, "vDuration"));
	grid_row_text(&g, 2, line, sizeof(line));
	assert_non_null(strstr(line, "aten::mm"));
	assert_non_null(strstr(line, "40 ns"));
	assert_non_null(strstr(line, "40.0%"));
	/* aten::add (row 4) is selected, drawn in the selected role */
	grid_row_text(&g, 4, line, sizeof(line));
	assert_non_null(strstr(line, "aten::add"));
	assert_int_equal(grid_at(&g, 10, 4)->role, ROLE_SELECTED);
	assert_int_equal(grid_at(&g, 10, 3)->role, ROLE_NORMAL);
	/* a/b has children: marked with '+' */
	grid_row_text(&g, 5, line, sizeof(line));
	assert_true(line[0] == '+');
	/* details pane */
	app_key(&a, 'd');
	app_draw(&a, &g);
	int found = 0;
	for (int y = 0; y < g.h; y++) {
		grid_row_text(&g, y, line, sizeof(line));
		found |= strstr(line, "path") && strstr(line, "/wf/train/aten::add");
	}
	assert_true(found);
	/* too small */
	grid_resize(&g, 60, 20);
	app_draw(&a, &g);
	grid_row_text(&g, 10, line, sizeof(line));
	assert_string_equal(line, "terminal too small: 60x20, needs 80x20");
	/* 80x20 is enough: a 24-line terminal in tmux has 23; the details
	 * pane gives up rows so the list keeps 8 */
	grid_resize(&g, 80, 20);
	app_draw(&a, &g);
	grid_row_text(&g, 0, line, sizeof(line));
	assert_string_equal(line, "grademl-tui > wf > train");
	grid_row_text(&g, 10, line, sizeof(line));
	assert_non_null(strstr(line, "-- details 1-8 of 11 (J/K) --"));
	grid_resize(&g, 80, 19);
	app_draw(&a, &g);
	grid_row_text(&g, 9, line, sizeof(line));
	assert_string_equal(line, "terminal too small: 80x19, needs 80x20");
	grid_release(&g);
	app_release(&a);
}

/* wf / s / {stream 7 (one kernel, a long C++ signature, 3 us at 688 ms),
 * an operator whose name is too long, one that fits but for a blank} */
#define KERNEL_ARGS "float, float, float, float, float, float, float, float, float, float, "
static const char *const long_kernel = "void k::f<" KERNEL_ARGS KERNEL_ARGS KERNEL_ARGS KERNEL_ARGS
    KERNEL_ARGS KERNEL_ARGS KERNEL_ARGS KERNEL_ARGS "int>(int, float const*)";

static int setup_names(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct store *st;
	char *err = NULL;
	assert_int_equal(testdir_make(f->dir, sizeof(f->dir), "names"), 0);
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	assert_int_equal(store_open(f->db, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t wf = add(st, 0, PHASE_WORKFLOW, "wf", 0, 1000000000, 0, 1, 0);
	int64_t s = add(st, wf, PHASE_STEP, "s", 0, 1000000000, 0, 3, 1);
	int64_t sm = add(st, s, PHASE_STREAM, "stream 7 ", 0, 900000000, 0, 1, 2);
	add(st, sm, PHASE_KERNEL, long_kernel, 688123456, 3000, 3000, 0, 3);
	add(st, s, PHASE_OPERATOR, "an_operator_name_far_too_long_for_the_column", 0, 500000000, 0,
	    0, 2);
	/* 29 characters, the name column's width at 80 columns, and a blank */
	add(st, s, PHASE_OPERATOR, "a_name_of_twenty_nine_letters ", 500000000, 100000000, 0, 0, 2);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
	assert_int_equal(model_open(f->db, &f->m, &err), 0);
	*state = f;
	return 0;
}

/* Row y of g containing text, or -1. */
static int find_line(struct grid *g, const char *text, char *line, size_t n)
{
	for (int y = 0; y < g->h; y++) {
		grid_row_text(g, y, line, n);
		if (strstr(line, text))
			return y;
	}
	return -1;
}

/* Names in the tree: trailing blanks dropped, a cut marked, a kernel's
 * signature shortened with the whole of it in the details pane, which
 * scrolls (J/K); a short phase's start and end read apart. */
static void names_as_shown(void **state)
{
	struct fx *f = *state;
	struct app a;
	struct grid g;
	char *err = NULL, line[1024];
	assert_int_equal(app_init(&a, f->m, 1, NULL, &err), 0);
	grid_init(&g, 80, 24, 1);
	app_draw(&a, &g);
	grid_row_text(&g, 0, line, sizeof(line));
	assert_string_equal(line, "grademl-tui > wf > s");
	assert_true(find_line(&g, "  an_operator_name_far_too_lon~ ", line, sizeof(line)) > 0);
	assert_true(find_line(&g, "  a_name_of_twenty_nine_letters ", line, sizeof(line)) > 0);
	assert_int_equal(find_line(&g, "a_name_of_twenty_nine_letter~", line, sizeof(line)), -1);
	/* into the stream: its kernel as k::f<float~> (the template's first word) */
	assert_int_equal(tree_view_goto(&a.tree, "/wf/s/stream 7", &err), 0);
	app_key(&a, K_ENTER);
	app_draw(&a, &g);
	grid_row_text(&g, 0, line, sizeof(line));
	assert_string_equal(line, "grademl-tui > wf > s > stream 7");
	int y = find_line(&g, "k::f<", line, sizeof(line));
	assert_true(y > 0);
	assert_int_equal(strncmp(line, "  k::f<float~> ", 15), 0);
	/* the details pane: the whole name over rows of its own, and more
	 * rows than the pane has, so it scrolls */
	app_key(&a, 'd');
	app_draw(&a, &g);
	assert_true(find_line(&g, " phase     void k::f<float, float, ", line, sizeof(line)) > 0);
	assert_true(find_line(&g, "const*)  kind kernel", line, sizeof(line)) > 0);
	assert_true(find_line(&g, " details 1-11 of ", line, sizeof(line)) > 0);
	assert_int_equal(find_line(&g, " bound by ", line, sizeof(line)), -1);
	for (int i = 0; i < 30; i++)
		app_key(&a, 'J');
	app_draw(&a, &g);
	assert_true(find_line(&g, " bound by ", line, sizeof(line)) > 0);
	assert_int_equal(find_line(&g, " phase ", line, sizeof(line)), -1);
	assert_true(find_line(&g, " time      +688.123 ms .. +688.126 ms  dur 3.00 us", line,
			      sizeof(line)) > 0);
	int last = find_line(&g, " details ", line, sizeof(line)), from, to, of;
	assert_int_equal(sscanf(line, "-- details %d-%d of %d", &from, &to, &of), 3);
	assert_int_equal(to, of);
	app_key(&a, 'K');
	app_draw(&a, &g);
	assert_int_equal(find_line(&g, " details ", line, sizeof(line)), last);
	assert_int_equal(sscanf(line, "-- details %d-%d of %d", &from, &to, &of), 3);
	assert_int_equal(to, of - 1);
	grid_release(&g);
	app_release(&a);
}

/* A message wider than the screen ends in the cut mark, on the status
 * line and, while a prompt is open, on the row above it. */
static void long_messages_cut(void **state)
{
	struct fx *f = *state;
	struct app a;
	struct grid g;
	char *err = NULL, line[512], msg[101], cut[81];
	memset(msg, 'x', 100);
	msg[100] = '\0';
	memset(cut, 'x', 79);
	memcpy(cut + 79, "~", 2);
	assert_int_equal(app_init(&a, f->m, 1, NULL, &err), 0);
	grid_init(&g, 80, 23, 1);
	app_message(&a, 0, "%s", msg);
	app_draw(&a, &g);
	grid_row_text(&g, 22, line, sizeof(line));
	assert_string_equal(line, cut);
	app_key(&a, ':');
	app_message(&a, 1, "%s", msg);
	app_draw(&a, &g);
	grid_row_text(&g, 21, line, sizeof(line));
	assert_string_equal(line, cut);
	grid_release(&g);
	app_release(&a);
}

/* The profiler's bookkeeping, the longest row, is listed last whatever the
 * sort and never selected when its level is shown; the costliest row is
 * work. */
static void bookkeeping_last(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_string_equal(f->v.rows[2]->name, "Spans");
	for (enum tree_sort k = SORT_NAME; k <= SORT_START; k++) {
		tree_view_sort(&f->v, k);
		assert_string_equal(f->v.rows[2]->name, "Spans");
		tree_view_sort(&f->v, k); /* flipped */
		assert_string_equal(f->v.rows[2]->name, "Spans");
	}
	tree_view_move(&f->v, 2);
	assert_string_equal(sel(f), "Spans");
	tree_view_costliest(&f->v);
	assert_string_equal(sel(f), "proc");
	assert_int_equal(tree_view_up(&f->v, &err), 1);
	assert_int_equal(tree_view_enter(&f->v, &err), 1);
	assert_string_equal(f->v.node->name, "rank 0");
	assert_string_equal(sel(f), "proc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(drill_and_sort, setup, teardown),
	    cmocka_unit_test_setup_teardown(search_and_filter, setup, teardown),
	    cmocka_unit_test_setup_teardown(goto_paths, setup, teardown),
	    cmocka_unit_test_setup_teardown(find_below, setup, teardown),
	    cmocka_unit_test_setup_teardown(drawn_rows, setup, teardown),
	    cmocka_unit_test_setup_teardown(open_where_the_work_is, setup_chain, teardown),
	    cmocka_unit_test_setup_teardown(bookkeeping_last, setup_chain, teardown),
	    cmocka_unit_test_setup_teardown(names_as_shown, setup_names, teardown),
	    cmocka_unit_test_setup_teardown(long_messages_cut, setup_names, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
