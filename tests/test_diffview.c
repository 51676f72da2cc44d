/*
 * The explorer's :diff (tui/diffview.c) on two small hand-built trace.db
 * files, driven through app_key as keys would: C-c while the diff runs
 * stops it with a message and leaves the explorer where it was and usable
 * (the interrupt consumed, so the front end does not quit on it); the same
 * diff not interrupted shows its table.  The C-c is forced: the app's
 * show_now hook, which a terminal front end calls just before the diff
 * starts, raises the interrupt flag as the SIGINT handler would.  And
 * `diff --format json`, written a row at a time, is byte for byte what
 * jansson writes of the same document, with and without --limit.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view/model.h"
#include "model/store/store.h"
#include "tests/testdir.h"
#include "tui/app.h"
#include "tui/diffview.h"
#include "tui/grid.h"
#include "tui/keys.h"

struct fx {
	char dir[256], a[300], b[300];
	struct model *m;
	struct app app;
};

static volatile sig_atomic_t got_signal;

static void add(struct store *st, int64_t id, int64_t parent, int kind, const char *name,
		int64_t dur, int64_t children, int depth)
{
	char *err = NULL;
	struct phase_row p = {.id = id,
			      .parent_id = parent,
			      .kind = kind,
			      .name_id = store_intern(st, name, strlen(name), &err),
			      .start_ns = 0,
			      .dur_ns = dur,
			      .self_ns = dur,
			      .child_count = children,
			      .depth = depth};
	assert_int_equal(store_add_phase(st, &p, &err), 0);
}

/* wf / thread / ProfilerStep#1 { aten::mm (mm ns) } */
static void write_db(const char *path, int64_t mm)
{
	struct store *st;
	char *err = NULL;
	assert_int_equal(store_open(path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t id[4];
	for (int i = 0; i < 4; i++)
		id[i] = store_reserve_phase_id(st);
	add(st, id[0], 0, PHASE_WORKFLOW, "wf", 1000, 1, 0);
	add(st, id[1], id[0], PHASE_THREAD, "thread 1", 1000, 1, 1);
	add(st, id[2], id[1], PHASE_PROFILER_STEP, "ProfilerStep#1", 500, 1, 2);
	add(st, id[3], id[2], PHASE_OPERATOR, "aten::mm", mm, 0, 3);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char *err = NULL;
	assert_int_equal(testdir_make(f->dir, sizeof(f->dir), "diffview"), 0);
	snprintf(f->a, sizeof(f->a), "%s/a.db", f->dir);
	snprintf(f->b, sizeof(f->b), "%s/b.db", f->dir);
	write_db(f->a, 100);
	write_db(f->b, 300);
	assert_int_equal(model_open(f->a, &f->m, &err), 0);
	assert_int_equal(app_init(&f->app, f->m, 1, NULL, &err), 0);
	f->app.interrupt = &got_signal;
	got_signal = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	app_release(&f->app);
	model_free(f->m);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

/* C-c as the terminal front end's SIGINT handler takes it. */
static void press_ctrl_c(struct app *a)
{
	(void)a;
	got_signal = SIGINT;
}

static void command(struct app *a, const char *line)
{
	app_key(a, ':');
	for (const char *p = line; *p; p++)
		app_key(a, (unsigned char)*p);
	app_key(a, K_ENTER);
}

static void ctrl_c_stops_diff(void **state)
{
	struct fx *f = *state;
	struct app *a = &f->app;
	char line[400];
	snprintf(line, sizeof(line), "diff %s", f->b);
	a->show_now = press_ctrl_c;
	command(a, line);
	assert_non_null(a->message);
	assert_true(a->msg_error);
	assert_non_null(strstr(a->message, "diff stopped after"));
	assert_non_null(strstr(a->message, "(C-c)"));
	/* the interrupt was the diff's: the front end must not quit on it */
	assert_int_equal(got_signal, 0);
	assert_false(a->quit);
	assert_int_equal(a->screen, SCREEN_TREE);
	assert_null(a->rv.query);
	/* still usable: keys work and the screen draws */
	struct grid g;
	grid_init(&g, 80, 24, 1);
	app_key(a, 'j');
	app_draw(a, &g);
	assert_false(a->quit);
	/* the same diff, not interrupted: its table */
	a->show_now = NULL;
	command(a, line);
	assert_int_equal(a->screen, SCREEN_RESULTS);
	assert_non_null(a->rv.query);
	assert_non_null(strstr(a->rv.query, "diff "));
	assert_true(a->rv.r.nrows >= 2); /* the step and aten::mm */
	app_draw(a, &g);
	grid_release(&g);
}

/* The JSON is what json_dumpf writes of it, read back: every level (two
 * of them without rows), with rows left out by a limit and without. */
static void json_as_jansson_writes_it(void **state)
{
	struct fx *f = *state;
	for (size_t limit = 0; limit < 2; limit++) {
		char *buf = NULL, *err = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		assert_non_null(out);
		assert_int_equal(diffview_write(out, f->a, f->b, REPORT_JSON, limit, &err), 0);
		fclose(out);
		json_error_t jerr;
		json_t *doc = json_loads(buf, 0, &jerr);
		assert_non_null(doc);
		assert_int_equal(json_array_size(json_object_get(doc, "levels")), 4);
		char *again = json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		assert_non_null(again);
		size_t n = strlen(again);
		assert_int_equal(len, n + 1);
		assert_memory_equal(buf, again, n);
		assert_int_equal(buf[n], '\n');
		free(again);
		json_decref(doc);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(ctrl_c_stops_diff, setup, teardown),
	    cmocka_unit_test_setup_teardown(json_as_jansson_writes_it, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
