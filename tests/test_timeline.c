/*
 * Unit tests for the timeline screen (tui/timeline.c): a small trace.db
 * written through the store, opened with the model, and drawn into an
 * 80x24 grid with ASCII glyphs.  The workflow's window is 60 us and one
 * child runs 2 us past it, so the full window is 62 us over the 62 columns
 * of the Gantt area (80 - 18 label columns): one column per microsecond,
 * which makes every bar's columns easy to work out by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view/model.h"
#include "model/store/store.h"
#include "tests/phasefx.h"
#include "tests/testdir.h"
#include "tui/app.h"
#include "tui/glyphs.h"
#include "tui/grid.h"
#include "tui/treeview.h"
#include "model/util/xalloc.h"

#define T0 1000000000LL /* the workflow's start */
#define US 1000LL

/* Children of "wf", in start order (their index in wf's children). */
enum { ALPHA, BETA, GAMMA, EVIL, DELTA, KERNEL, NCHILD };

#define EVIL_NAME "\x1b]0;evil\x07"

struct fx {
	char dir[256];
	char path[320];
	struct model *m;
	struct app a;
	struct grid g;
};

static int64_t add_metric(struct writer *w, const char *name, const char *host)
{
	char *err = NULL;
	struct metric_row mr = {.source_id = w->src,
				.host = host,
				.resource = "cpu",
				.name = name,
				.unit = "%",
				.value_kind = "mean",
				.capacity = 100};
	int64_t id = store_add_metric(w->st, &mr, &err);
	assert_true(id > 0);
	return id;
}

static void write_trace(const char *path)
{
	struct writer w;
	char *err = NULL;
	writer_open(&w, path);
	/* "stream 3" sorts before "thread 7" by sort_index, whatever the ids */
	int64_t thread = add_track(&w, "thread", "thread 7", 2);
	int64_t stream = add_track(&w, "stream", "stream 3", 1);

	int64_t wf = add_phase(&w, 0, PHASE_WORKFLOW, "wf", 0, T0, 60 * US, NCHILD, 0);
	add_phase(&w, wf, PHASE_OPERATOR, "alpha", thread, T0, 10 * US, 0, 1);
	add_phase(&w, wf, PHASE_KERNEL, "beta", stream, T0 + 5 * US, 20 * US, 0, 1);
	int64_t gamma =
	    add_phase(&w, wf, PHASE_OPERATOR, "gamma", thread, T0 + 10 * US, 10 * US, 1, 1);
	add_phase(&w, gamma, PHASE_RUNTIME, "inner", thread, T0 + 12 * US, 1 * US, 0, 2);
	add_phase(&w, wf, PHASE_SPAN, EVIL_NAME, 0, T0 + 40 * US, 2 * US, 0, 1);
	add_phase(&w, wf, PHASE_KERNEL, "delta", stream, T0 + 50 * US, 10 * US, 0, 1);
	/* an async kernel past its parent's end: widens the window to 62 us */
	add_phase(&w, wf, PHASE_KERNEL, "kernel", stream, T0 + 60 * US, 2 * US, 0, 1);

	/* a workflow whose only child takes no time: a zero-length window */
	int64_t zero = add_phase(&w, 0, PHASE_WORKFLOW, "zero", 0, T0 + 100 * US, 0, 1, 0);
	add_phase(&w, zero, PHASE_OPERATOR, "instant", thread, T0 + 100 * US, 0, 0, 1);

	/* 0 for the first half of the window, 100 for the second half (the
	 * 61.5 us sample keeps the step inside the window to its end) */
	int64_t util = add_metric(&w, "util", "node1");
	assert_int_equal(store_add_sample(w.st, util, T0, 0, &err), 0);
	assert_int_equal(store_add_sample(w.st, util, T0 + 31 * US, 100, &err), 0);
	assert_int_equal(store_add_sample(w.st, util, T0 + 61500, 100, &err), 0);
	assert_int_equal(store_add_sample(w.st, util, T0 + 62 * US, 50, &err), 0);
	/* a series entirely outside the window: not drawn */
	int64_t far = add_metric(&w, "far", "node2");
	assert_int_equal(store_add_sample(w.st, far, T0 + 1000000 * US, 1, &err), 0);
	assert_int_equal(store_add_sample(w.st, far, T0 + 2000000 * US, 2, &err), 0);

	writer_close(&w);
}

/* The tree inside the workflow named name; its longest child selected. */
static void enter_workflow(struct fx *f, const char *name)
{
	char *err = NULL;
	struct mnode *root = model_root(f->m);
	struct mnode *wf = NULL;
	for (size_t i = 0; i < root->nchildren; i++)
		if (!strcmp(root->children[i]->name, name))
			wf = root->children[i];
	assert_non_null(wf);
	assert_int_equal(tree_view_show(&f->a.tree, root, wf, &err), 0);
	assert_int_equal(tree_view_enter(&f->a.tree, &err), 1);
	timeline_open(&f->a);
	timeline_wait(&f->a);
}

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	char *err = NULL;
	if (testdir_make(f->dir, sizeof(f->dir), "timeline") < 0) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/trace.db", f->dir);
	write_trace(f->path);
	if (model_open(f->path, &f->m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	f->a.m = f->m;
	f->a.g = glyphs_get(1);
	f->a.screen = SCREEN_TIMELINE;
	if (tree_view_init(&f->a.tree, f->m, &err) < 0)
		fail_msg("tree_view_init: %s", err ? err : "?");
	grid_init(&f->g, 80, 24, 1);
	enter_workflow(f, "wf");
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	grid_release(&f->g);
	timeline_release(&f->a);
	tree_view_release(&f->a.tree);
	free(f->a.message);
	model_free(f->m);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

/* Draws the timeline where app_draw puts it (rows 1..22 of 80x24). */
static void draw(struct fx *f)
{
	grid_clear(&f->g, ROLE_NORMAL);
	timeline_draw(&f->a, &f->g, 1, 22);
}

static const char *row(struct fx *f, int y)
{
	static char buf[1024];
	grid_row_text(&f->g, y, buf, sizeof(buf));
	return buf;
}

static int role_at(struct fx *f, int x, int y)
{
	const struct cell *c = grid_at(&f->g, x, y);
	assert_non_null(c);
	return c->role;
}

/* Asserts columns [x0, x1) of row y are a bar of role: drawn, its inner
 * columns full ('#') or its name, which bars wide enough carry (the end
 * columns may be partly busy, a lighter shade), and x0 - 1 and x1 not
 * full of that role. */
static void assert_bar(struct fx *f, int y, int x0, int x1, int role)
{
	for (int x = x0; x < x1; x++) {
		const struct cell *c = grid_at(&f->g, x, y);
		int edge = x == x0 || x == x1 - 1;
		if ((edge && c->ch == ' ') || c->role != role)
			fail_msg("row %d col %d: '%c' role %d, want a bar of role %d", y, x,
				 (int)c->ch, c->role, role);
	}
	const struct cell *l = grid_at(&f->g, x0 - 1, y), *r = grid_at(&f->g, x1, y);
	assert_false(l && l->ch == '#' && l->role == role);
	assert_false(r && r->ch == '#' && r->role == role);
}

static struct mnode *wf_child(struct fx *f, int i)
{
	assert_true((size_t)i < f->a.tl.node->nchildren);
	return f->a.tl.node->children[i];
}

/* The index of the timeline's selected span among wf's children (-1: it
 * is not one), and selecting child i. */
static int sel_child(struct fx *f)
{
	const struct lane_span *s = &f->a.tl.l.s[f->a.tl.sel];
	for (size_t i = 0; i < f->a.tl.node->nchildren; i++)
		if (f->a.tl.node->children[i]->id == s->id)
			return (int)i;
	return -1;
}

static void select_child(struct fx *f, int i)
{
	int64_t id = wf_child(f, i)->id;
	for (size_t k = 0; k < f->a.tl.l.n; k++)
		if (f->a.tl.l.s[k].id == id) {
			f->a.tl.sel = (uint32_t)k;
			return;
		}
	fail_msg("child %d is not a span", i);
}

static void test_open_window_and_selection(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	assert_non_null(tl->node);
	assert_string_equal(tl->node->name, "wf");
	assert_int_equal(tl->node->nchildren, NCHILD);
	/* widened past the parent's 60 us by the async kernel */
	assert_true(tl->t0 == T0);
	assert_true(tl->t1 == T0 + 62 * US);
	/* the tree (sorted by duration) had the longest child selected */
	assert_int_equal(sel_child(f), BETA);
	assert_int_equal(tl->top, 0);
}

static void test_draw_lanes_and_bars(void **state)
{
	struct fx *f = *state;
	draw(f);
	/* the axis: ticks every 15 columns, relative to the node's start */
	assert_string_equal(row(f, 1), "time              0              +15.0 us       +30.0 us"
				       "       +45.0 us");
	/* lanes by sort_index, "(no track)" last, then the sparkline; thread
	 * 7 has a second row for gamma's child; the stream's label names its
	 * GPU (its pid), the sparkline's its device and host */
	assert_int_equal(strncmp(row(f, 2), "gpu1 stream 3 ", 14), 0);
	assert_int_equal(strncmp(row(f, 3), "thread 7 ", 9), 0);
	assert_int_equal(strncmp(row(f, 4), "                  ", 18), 0);
	assert_int_equal(strncmp(row(f, 5), "(no track) ", 11), 0);
	assert_int_equal(strncmp(row(f, 6), "cpu util node1 ", 15), 0);
	assert_string_equal(row(f, 7), "");

	/* stream 3: beta (selected) 5..25 us, delta 50..60, kernel 60..62 */
	assert_bar(f, 2, 18 + 5, 18 + 25, ROLE_SELECTED);
	assert_bar(f, 2, 18 + 50, 18 + 60, ROLE_BAR_ALT);
	assert_bar(f, 2, 18 + 60, 18 + 62, ROLE_BAR);
	assert_int_equal(grid_at(&f->g, 18 + 4, 2)->ch, ' ');
	assert_int_equal(grid_at(&f->g, 18 + 25, 2)->ch, ' ');
	/* thread 7: alpha 0..10, gamma 10..20 in the other role (the boundary
	 * shows); below gamma, inner 12..13 */
	assert_bar(f, 3, 18, 18 + 10, ROLE_BAR);
	assert_bar(f, 3, 18 + 10, 18 + 20, ROLE_BAR_ALT);
	assert_int_equal(grid_at(&f->g, 18 + 20, 3)->ch, ' ');
	assert_bar(f, 4, 18 + 12, 18 + 13, ROLE_BAR);
	/* (no track): the hostile span 40..42 */
	assert_bar(f, 5, 18 + 40, 18 + 42, ROLE_BAR);
	assert_int_equal(role_at(f, 0, 2), ROLE_LABEL);

	/* the sparkline: 31 lows then 31 highs over the Gantt columns */
	char want[80];
	memset(want, '_', 31);
	memset(want + 31, '#', 31);
	want[62] = '\0';
	assert_string_equal(row(f, 6) + 18, want);
	assert_int_equal(role_at(f, 18, 6), ROLE_SPARK);

	/* bars of six columns or more carry their names, a bar cell either
	 * side: beta (20 columns), delta (10: "delta" fits its 8), gamma and
	 * alpha (10); kernel (2) and inner (1) do not */
	assert_int_equal(strncmp(row(f, 2) + 23, "#beta#####", 10), 0);
	assert_int_equal(strncmp(row(f, 2) + 68, "#delta####", 10), 0);
	assert_int_equal(strncmp(row(f, 3) + 18, "#alpha####", 10), 0);
	assert_int_equal(strncmp(row(f, 3) + 28, "#gamma####", 10), 0);
	assert_int_equal(strncmp(row(f, 4) + 30, "#", 1), 0);

	/* the footer on the area's last row */
	assert_string_equal(row(f, 22),
			    "beta  at +5.00 us for 20.0 us  zoom 1x  window +0 + 62.0 us");
}

static void test_hostile_name_is_visible_text(void **state)
{
	struct fx *f = *state;
	select_child(f, EVIL);
	draw(f);
	assert_int_equal(strncmp(row(f, 22), "\\e]0;evil\\x07  at +40.0 us", 26), 0);
	for (int y = 0; y < f->g.h; y++)
		for (int x = 0; x < f->g.w; x++) {
			uint32_t ch = grid_at(&f->g, x, y)->ch;
			if (ch < 0x20 || ch == 0x7f)
				fail_msg("control character 0x%02x at %d,%d", (unsigned)ch, x, y);
		}
	/* the selected span is on the (no track) lane */
	assert_bar(f, 5, 18 + 40, 18 + 42,
		   ROLE_SELECTED); /* fitted, its bar carries its name, as visible text too */
	timeline_key(&f->a, A_ZOOM_FIT);
	draw(f);
	assert_non_null(strstr(row(f, 5), "\\e]0;evil\\x07###"));
	for (int x = 0; x < f->g.w; x++) {
		uint32_t ch = grid_at(&f->g, x, 5)->ch;
		assert_false(ch < 0x20 || ch == 0x7f);
	}
}

static void test_zoom_and_pan_clamp(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	/* beta's midpoint is T0 + 15 us; the first halving hits the left edge */
	timeline_key(&f->a, A_ZOOM_IN);
	assert_true(tl->t0 == T0 && tl->t1 == T0 + 31 * US);
	timeline_key(&f->a, A_ZOOM_IN);
	assert_true(tl->t0 == T0 + 7250 && tl->t1 == T0 + 22750);
	draw(f);
	assert_int_equal(strstr(row(f, 22), "zoom 4x  window +7.25 us + 15.5 us") == NULL, 0);
	/* out: doubles around the window's centre, clamped */
	timeline_key(&f->a, A_ZOOM_OUT);
	assert_true(tl->t0 == T0 && tl->t1 == T0 + 31 * US);
	/* pan by a quarter window, clamped at both ends */
	timeline_key(&f->a, A_PAN_RIGHT);
	assert_true(tl->t0 == T0 + 7750 && tl->t1 == T0 + 38750);
	timeline_key(&f->a, A_PAN_LEFT);
	timeline_key(&f->a, A_PAN_LEFT);
	assert_true(tl->t0 == T0 && tl->t1 == T0 + 31 * US);
	for (int i = 0; i < 10; i++)
		timeline_key(&f->a, A_PAN_RIGHT);
	assert_true(tl->t0 == T0 + 31 * US && tl->t1 == T0 + 62 * US);
	timeline_key(&f->a, A_ZOOM_OUT);
	timeline_key(&f->a, A_ZOOM_OUT);
	assert_true(tl->t0 == T0 && tl->t1 == T0 + 62 * US);
	/* in as far as it goes: 1 us around beta's midpoint */
	for (int i = 0; i < 20; i++)
		timeline_key(&f->a, A_ZOOM_IN);
	assert_true(tl->t1 - tl->t0 == 1000);
	assert_true(tl->t0 == T0 + 14500);
	/* beta covers the whole window */
	draw(f);
	assert_bar(f, 2, 18, 80, ROLE_SELECTED);
	timeline_key(&f->a, A_ZOOM_RESET);
	assert_true(tl->t0 == T0 && tl->t1 == T0 + 62 * US);
}

static void test_selection_moves_and_pans(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	for (int i = 0; i < 20; i++)
		timeline_key(&f->a, A_ZOOM_IN);
	assert_true(tl->t0 == T0 + 14500 && tl->t1 == T0 + 15500);
	/* the last child lies outside: the window pans to its midpoint */
	timeline_key(&f->a, A_END);
	assert_int_equal(sel_child(f), KERNEL);
	assert_true(tl->t0 == T0 + 60500 && tl->t1 == T0 + 61500);
	assert_ptr_equal(tree_view_selected(&f->a.tree), wf_child(f, KERNEL));
	timeline_key(&f->a, A_HOME);
	assert_int_equal(sel_child(f), ALPHA);
	assert_true(tl->t0 == T0 + 4500 && tl->t1 == T0 + 5500);
	timeline_key(&f->a, A_UP);
	assert_int_equal(sel_child(f), ALPHA);
	timeline_key(&f->a, A_DOWN);
	assert_int_equal(sel_child(f), BETA);
	/* beta (5..25 us) overlaps the window already: no pan */
	assert_true(tl->t0 == T0 + 4500 && tl->t1 == T0 + 5500);
	timeline_key(&f->a, A_DOWN);
	assert_int_equal(sel_child(f), GAMMA);
	assert_ptr_equal(tree_view_selected(&f->a.tree), wf_child(f, GAMMA));
	timeline_key(&f->a, A_COSTLIEST);
	assert_int_equal(sel_child(f), BETA);
	assert_ptr_equal(tree_view_selected(&f->a.tree), wf_child(f, BETA));
	/* keys the timeline does not handle change nothing */
	timeline_key(&f->a, A_SEARCH);
	assert_int_equal(sel_child(f), BETA);
}

static void test_enter_and_back(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	/* beta has no children: Enter does nothing */
	timeline_key(&f->a, A_ENTER);
	timeline_wait(&f->a);
	assert_string_equal(tl->node->name, "wf");
	timeline_key(&f->a, A_DOWN);
	timeline_key(&f->a, A_ENTER);
	timeline_wait(&f->a);
	assert_string_equal(tl->node->name, "gamma");
	assert_ptr_equal(f->a.tree.node, tl->node);
	assert_int_equal(tl->node->nchildren, 1);
	assert_true(tl->t0 == T0 + 10 * US && tl->t1 == T0 + 20 * US);
	draw(f);
	assert_int_equal(strncmp(row(f, 2), "thread 7 ", 9), 0);
	/* inner: 12..13 us of a 10 us window over 62 columns: 12.4 .. 18.6 */
	assert_bar(f, 2, 18 + 12, 18 + 19, ROLE_SELECTED);
	/* its end columns are 0.6 busy: five eighths ('=' in ASCII); its
	 * name just fits between them */
	assert_int_equal(strncmp(row(f, 2) + 30, "=inner=", 7), 0);
	assert_int_equal(strncmp(row(f, 22), "inner  at +2.00 us for 1.00 us", 30), 0);

	timeline_key(&f->a, A_BACK);
	timeline_wait(&f->a);
	assert_string_equal(tl->node->name, "wf");
	assert_int_equal(sel_child(f), GAMMA);
	assert_ptr_equal(tree_view_selected(&f->a.tree), wf_child(f, GAMMA));
	/* up to the root, whose children are the workflows */
	timeline_key(&f->a, A_BACK);
	timeline_wait(&f->a);
	assert_ptr_equal(tl->node, model_root(f->m));
	assert_string_equal(wf_child(f, sel_child(f))->name, "wf");
	/* at the root Back does nothing */
	timeline_key(&f->a, A_BACK);
	timeline_wait(&f->a);
	assert_ptr_equal(tl->node, model_root(f->m));
}

static void test_enter_through_tree_filter(void **state)
{
	struct fx *f = *state;
	/* a tree filter hiding gamma must not make Enter go elsewhere */
	tree_view_set_filter(&f->a.tree, "alpha");
	select_child(f, GAMMA);
	timeline_key(&f->a, A_ENTER);
	timeline_wait(&f->a);
	assert_string_equal(f->a.tl.node->name, "gamma");
	assert_string_equal(f->a.tree.node->name, "gamma");
}

static void test_no_children_and_zero_window(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct mnode *alpha = wf_child(f, ALPHA);
	assert_int_equal(tree_view_show(&f->a.tree, alpha, NULL, &err), 0);
	timeline_open(&f->a);
	timeline_wait(&f->a);
	draw(f);
	assert_string_equal(row(f, 2), "no children to draw");
	/* keys on an empty node are harmless */
	timeline_key(&f->a, A_DOWN);
	timeline_key(&f->a, A_END);
	timeline_key(&f->a, A_ZOOM_IN);
	timeline_key(&f->a, A_COSTLIEST);
	timeline_key(&f->a, A_ENTER);
	timeline_wait(&f->a);
	assert_ptr_equal(f->a.tl.node, alpha);

	/* a zero-length window: the instant gets one cell at the left */
	assert_int_equal(tree_view_up(&f->a.tree, &err), 1);
	assert_int_equal(tree_view_up(&f->a.tree, &err), 1);
	enter_workflow(f, "zero");
	struct timeline *tl = &f->a.tl;
	assert_true(tl->t0 == tl->t1);
	timeline_key(&f->a, A_ZOOM_IN);
	timeline_key(&f->a, A_ZOOM_OUT);
	timeline_key(&f->a, A_PAN_RIGHT);
	assert_true(tl->t0 == T0 + 100 * US && tl->t1 == T0 + 100 * US);
	draw(f);
	assert_bar(f, 2, 18, 19, ROLE_SELECTED);
	assert_string_equal(row(f, 1), "time              0");
	assert_string_equal(row(f, 22), "instant  at +0 for 0 ns  zoom 1x  window +0 + 0 ns");
}

/* With UTF-8 glyphs the bars are full blocks and the sparkline blocks. */
static void test_utf8_glyphs(void **state)
{
	struct fx *f = *state;
	struct grid g;
	grid_init(&g, 80, 24, 0);
	f->a.g = glyphs_get(0);
	timeline_draw(&f->a, &g, 1, 22);
	const struct cell *c = grid_at(&g, 18 + 5, 2);
	assert_int_equal(c->ch, 0x2588);
	assert_int_equal(c->role, ROLE_SELECTED);
	assert_int_equal(grid_at(&g, 18, 3)->ch, 0x2588);
	assert_int_equal(grid_at(&g, 18, 6)->ch, 0x2581);
	assert_int_equal(grid_at(&g, 79, 6)->ch, 0x2588);
	grid_release(&g);
}

/* Rows outside [y, y + h) keep what was there, whatever h. */
static void test_small_heights_stay_inside(void **state)
{
	struct fx *f = *state;
	for (int h = 0; h <= 6; h++) {
		for (int y = 0; y < 24; y++)
			grid_fill(&f->g, 0, y, 80, 'Z', ROLE_NORMAL);
		timeline_draw(&f->a, &f->g, 10, h);
		for (int y = 0; y < 24; y++) {
			if (y >= 10 && y < 10 + h)
				continue;
			for (int x = 0; x < 80; x++)
				if (grid_at(&f->g, x, y)->ch != 'Z')
					fail_msg("h %d wrote row %d col %d", h, y, x);
		}
	}
	/* one row: the footer; two: the axis and the footer */
	timeline_draw(&f->a, &f->g, 10, 1);
	assert_int_equal(strncmp(row(f, 10), "beta  at", 8), 0);
	timeline_draw(&f->a, &f->g, 10, 2);
	assert_int_equal(strncmp(row(f, 10), "time ", 5), 0);
	assert_int_equal(strncmp(row(f, 11), "beta  at", 8), 0);
	/* an area running past the grid is cut at its edge */
	timeline_draw(&f->a, &f->g, 20, 10);
	assert_int_equal(strncmp(row(f, 23), "beta  at", 8), 0);
}

/* With one lane row the lanes scroll to keep the selection's lane shown. */
static void test_lanes_scroll_to_selection(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	grid_clear(&f->g, ROLE_NORMAL);
	timeline_draw(&f->a, &f->g, 1, 3);
	assert_int_equal(strncmp(row(f, 2), "gpu1 stream 3 ", 14), 0);
	select_child(f, EVIL);
	timeline_draw(&f->a, &f->g, 1, 3);
	assert_int_equal(tl->top, 3);
	assert_int_equal(strncmp(row(f, 2), "(no track) ", 11), 0);
	assert_bar(f, 2, 18 + 40, 18 + 42, ROLE_SELECTED);
	select_child(f, GAMMA);
	timeline_draw(&f->a, &f->g, 1, 3);
	assert_int_equal(tl->top, 1);
	assert_int_equal(strncmp(row(f, 2), "thread 7 ", 9), 0);
	/* with room for every lane, top goes back to 0 */
	draw(f);
	assert_int_equal(tl->top, 0);
}

/* An app on the trace.db at path, its tree open in (passed down to) the
 * workflow named top, the timeline there read; app_off ends it. */
static void app_on(struct app *a, const char *path, const char *top)
{
	char *err = NULL;
	memset(a, 0, sizeof(*a));
	if (model_open(path, &a->m, &err) < 0)
		fail_msg("model_open: %s", err ? err : "?");
	a->g = glyphs_get(1);
	assert_int_equal(tree_view_init(&a->tree, a->m, &err), 0);
	assert_string_equal(a->tree.node->name, top);
	timeline_open(a);
	timeline_wait(a);
}

static void app_off(struct app *a)
{
	timeline_release(a);
	tree_view_release(&a->tree);
	free(a->message);
	model_free(a->m);
}

/* 100 k children on 8 tracks: lanes and the footer are right.  (How fast
 * that draws is make bench's business, not a unit test's.) */
static void test_draw_100k_children(void **state)
{
	struct fx *f = *state;
	enum { N = 100000, TRACKS = 8 };
	char path[400];
	snprintf(path, sizeof(path), "%s/big.db", f->dir);
	struct writer w;
	writer_open(&w, path);
	int64_t tracks[TRACKS];
	for (int i = 0; i < TRACKS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "t%d", i);
		tracks[i] = add_track(&w, "thread", name, TRACKS - i);
	}
	int64_t big = add_phase(&w, 0, PHASE_WORKFLOW, "big", 0, 0, (int64_t)N * 100, N, 0);
	for (int i = 0; i < N; i++)
		add_phase(&w, big, PHASE_OPERATOR, i == N / 2 ? "middle" : "op", tracks[i % TRACKS],
			  (int64_t)i * 100, 90, 0, 1);
	writer_close(&w);

	struct app a;
	app_on(&a, path, "big");
	assert_int_equal(a.tl.node->nchildren, N);
	assert_int_equal(a.tl.l.nroot, N);
	a.tl.sel = a.tl.l.kids[N / 2];
	timeline_draw(&a, &f->g, 1, 22);
	/* lanes by sort_index: t7 first */
	assert_int_equal(strncmp(row(f, 2), "t7 ", 3), 0);
	assert_int_equal(strncmp(row(f, 9), "t0 ", 3), 0);
	assert_int_equal(strncmp(row(f, 22), "middle  at +5.00 ms", 19), 0);
	app_off(&a);
}

/* A trace.db being written in the fixture's directory, with the tracks
 * "thread 7" and, sorted before it, "stream 3". */
struct two_lanes {
	char path[400];
	struct writer w;
	int64_t thread, stream;
};

static void two_lanes_open(struct fx *f, const char *name, struct two_lanes *d)
{
	snprintf(d->path, sizeof(d->path), "%s/%s", f->dir, name);
	writer_open(&d->w, d->path);
	d->thread = add_track(&d->w, "thread", "thread 7", 2);
	d->stream = add_track(&d->w, "stream", "stream 3", 1);
}

/* A call marks the device work below it and the device work the calls
 * above it; ] and [ move into a phase's children and back out; f fits the
 * window to the selection; leaving shows the selection in the tree.
 *   wf 0..100 us / outer (thread) 0..50 / launch 10..12 / kern (stream) 20..40
 *                / other (thread) 60..70
 * Rows: stream (y 2), thread (y 3), thread nested (y 4); 62 columns for
 * 100 us. */
static void test_linked_and_nesting_keys(void **state)
{
	struct fx *f = *state;
	struct two_lanes d;
	two_lanes_open(f, "linked.db", &d);
	int64_t wf = add_phase(&d.w, 0, PHASE_WORKFLOW, "wf", 0, 0, 100 * US, 2, 0);
	int64_t outer = add_phase(&d.w, wf, PHASE_OPERATOR, "outer", d.thread, 0, 50 * US, 1, 1);
	int64_t launch =
	    add_phase(&d.w, outer, PHASE_RUNTIME, "launch", d.thread, 10 * US, 2 * US, 1, 2);
	add_phase(&d.w, launch, PHASE_KERNEL, "kern", d.stream, 20 * US, 20 * US, 0, 3);
	add_phase(&d.w, wf, PHASE_OPERATOR, "other", d.thread, 60 * US, 10 * US, 0, 1);
	writer_close(&d.w);

	struct app a;
	app_on(&a, d.path, "wf");
	struct timeline *tl = &a.tl;
	/* the tree (by duration) has outer selected */
	assert_int_equal(tl->l.s[tl->sel].id, outer);
	timeline_draw(&a, &f->g, 1, 22);
	assert_int_equal(strncmp(row(f, 2), "gpu1 stream 3 ", 14), 0);
	assert_int_equal(strncmp(row(f, 3), "thread 7 ", 9), 0);
	/* outer 0..50 us: columns 0..31; kern 20..40 us: 12.4..24.8 -> 12..25 */
	assert_bar(f, 3, 18, 18 + 31, ROLE_SELECTED);
	assert_bar(f, 2, 18 + 12, 18 + 25, ROLE_MATCH);
	assert_bar(f, 4, 18 + 6, 18 + 8, ROLE_BAR);
	assert_non_null(strstr(row(f, 22), "outer  at +0 for 50.0 us  1 device ops below"));

	timeline_key(&a, A_INTO);
	assert_int_equal(tl->l.s[tl->sel].id, launch);
	timeline_key(&a, A_DOWN); /* its only sibling: stays */
	assert_int_equal(tl->l.s[tl->sel].id, launch);
	timeline_key(&a, A_INTO);
	assert_int_equal(strcmp(tl->l.s[tl->sel].kind == PHASE_KERNEL ? "kern" : "?", "kern"), 0);
	timeline_draw(&a, &f->g, 1, 22);
	/* the kernel selected, the calls above it marked */
	assert_bar(f, 2, 18 + 12, 18 + 25, ROLE_SELECTED);
	assert_bar(f, 3, 18, 18 + 31, ROLE_MATCH);
	assert_bar(f, 4, 18 + 6, 18 + 8, ROLE_MATCH);
	assert_non_null(strstr(row(f, 22), "kern  at +20.0 us for 20.0 us  2 calls above"));
	timeline_key(&a, A_INTO); /* no children: stays */
	assert_int_equal(tl->l.s[tl->sel].kind, PHASE_KERNEL);

	timeline_key(&a, A_OUT);
	assert_int_equal(tl->l.s[tl->sel].id, launch);
	/* f: the window is launch (10..12 us) and an eighth either side */
	timeline_key(&a, A_ZOOM_FIT);
	assert_true(tl->t0 == 9750 && tl->t1 == 12250);
	timeline_key(&a, A_ZOOM_RESET);
	assert_true(tl->t0 == 0 && tl->t1 == 100 * US);

	/* leaving: the tree shows launch, inside outer */
	timeline_leave(&a);
	assert_string_equal(a.tree.node->name, "outer");
	assert_int_equal(tree_view_selected(&a.tree)->id, launch);

	app_off(&a);
}

/* The span of phase id in the timeline, selected. */
static void select_id(struct app *a, int64_t id)
{
	for (size_t k = 0; k < a->tl.l.n; k++)
		if (a->tl.l.s[k].id == id) {
			a->tl.sel = (uint32_t)k;
			return;
		}
	fail_msg("phase %lld is not a span", (long long)id);
}

/* A hostile trace.db's times at the ends of int64:
 *   far INT64_MIN..-1 / first (thread) INT64_MIN..+1 us
 *                     / last (stream) INT64_MAX - 1 us..INT64_MAX
 * The full window is 2^64 - 1 ns wide, more than an int64 holds: the
 * window, its width, the columns, the axis and the footer are worked out
 * without overflow (under UBSan one would abort), and the keys move and
 * size the window as on any trace. */
static void test_times_at_int64_ends(void **state)
{
	struct fx *f = *state;
	struct two_lanes d;
	two_lanes_open(f, "far.db", &d);
	int64_t far = add_phase(&d.w, 0, PHASE_WORKFLOW, "far", 0, INT64_MIN, INT64_MAX, 2, 0);
	int64_t first =
	    add_phase(&d.w, far, PHASE_OPERATOR, "first", d.thread, INT64_MIN, US, 0, 1);
	int64_t last =
	    add_phase(&d.w, far, PHASE_KERNEL, "last", d.stream, INT64_MAX - US, US, 0, 1);
	writer_close(&d.w);

	struct app a;
	app_on(&a, d.path, "far");
	struct timeline *tl = &a.tl;
	assert_true(tl->t0 == INT64_MIN && tl->t1 == INT64_MAX);
	select_id(&a, last);
	timeline_draw(&a, &f->g, 1, 22);
	/* first in the thread's first column, last (selected) in the stream's
	 * last; the axis from the node's start (clamped by the model to
	 * MODEL_TIME_MIN: the window starts before it); offsets and widths
	 * past INT64_MAX (2562048 h) read as that */
	assert_bar(f, 3, 18, 19, ROLE_BAR);
	assert_bar(f, 2, 79, 80, ROLE_SELECTED);
	assert_string_equal(row(f, 1), "time              -1921536 h     -681835 h      +557865 h"
				       "      +1797566 h");
	assert_non_null(strstr(row(f, 22), "zoom 1x  window -1921536 h + 2562048 h"));

	/* + halves the window (2^64 - 1 ns) around last, held at the right end */
	timeline_key(&a, A_ZOOM_IN);
	assert_true(tl->t0 == 0 && tl->t1 == INT64_MAX);
	/* h: a quarter of it to the left */
	timeline_key(&a, A_PAN_LEFT);
	assert_true(tl->t0 == -(INT64_MAX / 4) && tl->t1 == INT64_MAX - INT64_MAX / 4);
	timeline_draw(&a, &f->g, 1, 22);
	assert_non_null(strstr(row(f, 22), "zoom 2x  window +1 ns + 2562048 h"));
	/* - twice: the whole again */
	timeline_key(&a, A_ZOOM_OUT);
	assert_true((uint64_t)tl->t1 - (uint64_t)tl->t0 == UINT64_MAX - 1);
	timeline_key(&a, A_ZOOM_OUT);
	assert_true(tl->t0 == INT64_MIN && tl->t1 == INT64_MAX);
	/* f on last: 1.25 us, held at the right end */
	timeline_key(&a, A_ZOOM_FIT);
	assert_true(tl->t1 == INT64_MAX && tl->t1 - tl->t0 == 1250);
	timeline_draw(&a, &f->g, 1, 22);
	assert_bar(f, 2, 18 + 12, 80, ROLE_SELECTED);
	assert_non_null(strstr(row(f, 22), "last  at +2562048 h for 1.00 us"));
	/* f on first: held at the left end */
	select_id(&a, first);
	timeline_key(&a, A_ZOOM_FIT);
	assert_true(tl->t0 == INT64_MIN && tl->t1 - tl->t0 == 1250);
	timeline_draw(&a, &f->g, 1, 22);
	assert_bar(f, 3, 18, 18 + 50, ROLE_SELECTED);
	assert_non_null(strstr(row(f, 22), "first  at -1921536 h for 1.00 us"));
	app_off(&a);
}

/* J and K scroll the lanes a lane at a time, leaving the selection where
 * it is (off screen); b scrolls to the next lane with work in the window
 * and says how busy it is there; moving the selection scrolls back to it. */
static void test_lane_keys(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	grid_clear(&f->g, ROLE_NORMAL);
	timeline_draw(&f->a, &f->g, 1, 3); /* one row of lanes */
	assert_int_equal(tl->top, 0);
	timeline_key(&f->a, A_LANE_DOWN);
	timeline_draw(&f->a, &f->g, 1, 3);
	assert_int_equal(tl->top, 1);
	assert_int_equal(strncmp(row(f, 2), "thread 7 ", 9), 0);
	timeline_key(&f->a, A_LANE_DOWN);
	timeline_draw(&f->a, &f->g, 1, 3);
	assert_int_equal(tl->top, 3);
	assert_int_equal(strncmp(row(f, 2), "(no track) ", 11), 0);
	timeline_key(&f->a, A_LANE_DOWN); /* the last lane: stays */
	assert_int_equal(tl->top, 3);
	timeline_key(&f->a, A_LANE_UP);
	assert_int_equal(tl->top, 1);
	/* the window 30..45 us: only the (no track) lane has work, 2 us */
	tl->t0 = T0 + 30 * US;
	tl->t1 = T0 + 45 * US;
	timeline_key(&f->a, A_LANE_BUSY);
	assert_int_equal(tl->top, 3);
	assert_non_null(f->a.message);
	assert_string_equal(f->a.message, "(no track): busy 13.3% of the window");
	/* from there, the next with work wraps round to itself */
	timeline_key(&f->a, A_LANE_BUSY);
	assert_int_equal(tl->top, 3);
	/* a window with no work at all */
	tl->t0 = T0 + 30 * US;
	tl->t1 = T0 + 35 * US;
	timeline_key(&f->a, A_LANE_BUSY);
	assert_string_equal(f->a.message, "no lane has work in the window");
	/* selecting again scrolls to the selection (beta, stream 3) */
	timeline_key(&f->a, A_ZOOM_RESET);
	select_child(f, ALPHA);
	timeline_key(&f->a, A_DOWN);
	assert_int_equal(sel_child(f), BETA);
	timeline_draw(&f->a, &f->g, 1, 3);
	assert_int_equal(tl->top, 0);
}

/* Keys typed while the phases are read are kept and acted on, in order,
 * once they are (the read is not taken until a draw, a poll or a wait). */
static void test_keys_while_reading(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	timeline_key(&f->a, A_HOME); /* alpha, in the tree too */
	timeline_open(&f->a);
	assert_non_null(tl->job);
	timeline_key(&f->a, A_DOWN);
	timeline_key(&f->a, A_DOWN);
	timeline_key(&f->a, A_ZOOM_IN);
	timeline_wait(&f->a);
	assert_null(tl->job);
	assert_int_equal(tl->nqueued, 0);
	/* alpha, then beta, then gamma; zoomed in around gamma */
	assert_int_equal(sel_child(f), GAMMA);
	assert_true(tl->t1 - tl->t0 == 31 * US);
}

/* v twice on one phase sums its window; V the window shown, v or V
 * again clears; the panel lists the busiest lane first. */
static void test_range_keys(void **state)
{
	struct fx *f = *state;
	struct timeline *tl = &f->a.tl;
	select_child(f, BETA);
	timeline_key(&f->a, A_RANGE_MARK);
	assert_true(tl->anchored && !tl->ranged);
	timeline_key(&f->a, A_RANGE_MARK);
	assert_true(tl->ranged && !tl->anchored);
	assert_true(tl->sum.t0 == T0 + 5 * US && tl->sum.t1 == T0 + 25 * US);
	/* stream 3: beta 20 us; thread 7: alpha 5..10, gamma 10..20 */
	assert_int_equal(tl->sum.lane_busy[0], 20 * US);
	assert_int_equal(tl->sum.lane_busy[1], 15 * US);
	draw(f);
	assert_int_equal(strncmp(row(f, 16), "range +5.000 us + 20.000 us: ", 29), 0);
	assert_int_equal(strncmp(row(f, 18), "gpu1 stream 3 ", 14), 0);
	assert_non_null(strstr(row(f, 18), "20.0 us 100.0%"));
	assert_non_null(strstr(row(f, 19), "gamma                   10.0 us       1"));
	timeline_key(&f->a, A_RANGE_MARK);
	assert_false(tl->ranged);
	timeline_key(&f->a, A_RANGE_WINDOW);
	assert_true(tl->ranged && tl->sum.t0 == tl->t0 && tl->sum.t1 == tl->t1);
	timeline_key(&f->a, A_RANGE_WINDOW);
	assert_false(tl->ranged);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_open_window_and_selection),
	    T(test_draw_lanes_and_bars),
	    T(test_hostile_name_is_visible_text),
	    T(test_zoom_and_pan_clamp),
	    T(test_selection_moves_and_pans),
	    T(test_enter_and_back),
	    T(test_enter_through_tree_filter),
	    T(test_no_children_and_zero_window),
	    T(test_utf8_glyphs),
	    T(test_small_heights_stay_inside),
	    T(test_lanes_scroll_to_selection),
	    T(test_lane_keys),
	    T(test_keys_while_reading),
	    T(test_range_keys),
	    T(test_draw_100k_children),
	    T(test_linked_and_nesting_keys),
	    T(test_times_at_int64_ends),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
