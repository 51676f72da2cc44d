/*
 * Unit tests for the metrics screen (tui/metrics.c), drawn headless into an
 * 80x24 grid: the statistics of hand-made series (the mean is time-weighted,
 * a step function), the sparkline over the current node's window, the
 * filter on name and host, moving and scrolling the selection, the empty
 * trace.db, and a hostile metric name that must not reach a cell as ESC.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view/model.h"
#include "model/store/store.h"
#include "tests/testdir.h"
#include "tui/app.h"
#include "tui/glyphs.h"
#include "tui/grid.h"
#include "model/util/xalloc.h"

#define EVIL "evil\x1b[2Jname"

struct fx {
	char dir[256];
	char path[320];
	struct model *m;
	struct app a;
	struct grid g;
};

static int64_t add_phase(struct store *st, int64_t parent, int kind, const char *name,
			 int64_t start, int64_t dur, int64_t children, int depth)
{
	char *err = NULL;
	int64_t id = store_reserve_phase_id(st);
	struct phase_row r = {.id = id,
			      .parent_id = parent,
			      .kind = kind,
			      .name_id = store_intern(st, name, strlen(name), &err),
			      .start_ns = start,
			      .dur_ns = dur,
			      .self_ns = dur,
			      .child_count = children,
			      .depth = depth};
	assert_int_equal(store_add_phase(st, &r, &err), 0);
	return id;
}

static int64_t add_metric(struct store *st, int64_t src, const char *host, const char *resource,
			  const char *name, const char *unit)
{
	char *err = NULL;
	struct metric_row mr = {.source_id = src,
				.host = host,
				.resource = resource,
				.name = name,
				.unit = unit,
				.value_kind = "instant"};
	int64_t id = store_add_metric(st, &mr, &err);
	assert_true(id > 0);
	return id;
}

static void sample(struct store *st, int64_t metric, int64_t t, double v)
{
	char *err = NULL;
	assert_int_equal(store_add_sample(st, metric, t, v, &err), 0);
}

/* kind 0: the main fixture; 1: thirty series; 2: phases and no metric. */
static void write_db(const char *path, int kind)
{
	struct store *st = NULL;
	char *err = NULL;
	assert_int_equal(store_open(path, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	int64_t wf = add_phase(st, 0, PHASE_WORKFLOW, "wf", 0, 1000, 1, 0);
	int64_t late = add_phase(st, wf, PHASE_STEP, "late", 500, 500, 1, 1);
	add_phase(st, late, PHASE_OPERATOR, "op", 600, 300, 0, 2);
	struct source_row sr = {
	    .path = "m.json", .format = "chrome", .anchor = "epoch", .rank = -1};
	int64_t src = store_add_source(st, &sr, &err);
	assert_true(src > 0);
	if (kind == 0) {
		/* 10 over [0, 600), 40 over [600, 1000), then 20 for a period */
		int64_t util = add_metric(st, src, "node1", "cpu", "util", "%");
		sample(st, util, 0, 10);
		sample(st, util, 600, 40);
		sample(st, util, 1000, 20);
		/* i over [100 i, 100 i + 100) for i = 0..9, then 10 */
		int64_t ramp = add_metric(st, src, "node1", "gpu0", "ramp", "W");
		for (int i = 0; i <= 10; i++)
			sample(st, ramp, 100 * i, i);
		int64_t evil = add_metric(st, src, "node2", "mem", EVIL, "B");
		sample(st, evil, 500, 1e9);
		add_metric(st, src, "node3", "disk", "idle", NULL); /* no samples */
	} else if (kind == 4) {
		/* a percentage that moves between 1 and 3 of its 100 */
		int64_t low = add_metric(st, src, "h", "cpu", "low", "%");
		assert_int_equal(sqlite3_exec(store_db(st), "UPDATE metrics SET capacity = 100",
					      NULL, NULL, NULL),
				 SQLITE_OK);
		for (int i = 0; i <= 10; i++)
			sample(st, low, 100 * i, 1 + i % 3);
	} else if (kind == 3) {
		/* a hostile file: samples 2^64 ns apart */
		int64_t far = add_metric(st, src, "h", "far", "far", "x");
		sample(st, far, INT64_MIN + 1, 1);
		sample(st, far, INT64_MAX - 1, 2);
	} else if (kind == 1) {
		for (int i = 0; i < 30; i++) {
			char name[16];
			snprintf(name, sizeof(name), "m%02d", i);
			int64_t id = add_metric(st, src, "h", name, name, "x");
			sample(st, id, 0, i);
		}
	}
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
}

static int open_fx(void **state, int kind)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	char *err = NULL;
	if (testdir_make(f->dir, sizeof(f->dir), "metrics") < 0) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/trace.db", f->dir);
	write_db(f->path, kind);
	if (model_open(f->path, &f->m, &err) < 0)
		fail_msg("model_open: %s", err);
	f->a.m = f->m;
	/* the metrics screen over the whole trace: the top, not where the
	 * tree opens */
	if (tree_view_init(&f->a.tree, f->m, &err) < 0 || tree_view_goto(&f->a.tree, "/", &err) < 0)
		fail_msg("tree_view_init: %s", err);
	f->a.g = glyphs_get(1);
	f->a.screen = SCREEN_METRICS;
	f->a.w = 80;
	f->a.h = 24;
	grid_init(&f->g, 80, 24, 1);
	*state = f;
	return 0;
}

static int setup_main(void **state)
{
	return open_fx(state, 0);
}

static int setup_many(void **state)
{
	return open_fx(state, 1);
}

static int setup_far(void **state)
{
	return open_fx(state, 3);
}

static int setup_low(void **state)
{
	return open_fx(state, 4);
}

static int setup_empty(void **state)
{
	return open_fx(state, 2);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	grid_release(&f->g);
	tree_view_release(&f->a.tree);
	free(f->a.mv.filter);
	free(f->a.mv.win);
	free(f->a.message);
	model_free(f->m);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

/* Draws the screen as app_draw lays it out: rows 1..h-2 of the grid. */
static void draw(struct fx *f)
{
	grid_clear(&f->g, ROLE_NORMAL);
	metrics_draw(&f->a, &f->g, 1, f->a.h - 2);
}

static const char *row(struct fx *f, int y)
{
	static char buf[1024];
	grid_row_text(&f->g, y, buf, sizeof(buf));
	return buf;
}

/* The grid row whose text starts with prefix, or -1. */
static int find_row(struct fx *f, const char *prefix)
{
	for (int y = 0; y < f->g.h; y++)
		if (!strncmp(row(f, y), prefix, strlen(prefix)))
			return y;
	return -1;
}

/* The columns of row y after the name (device, host, min, mean, max,
 * samples: the texts between runs of two or more blanks) as one string with
 * single blanks, e.g. "cpu node1 10% 21.4% 40% 3", and the sparkline. */
static void fields(struct fx *f, int y, char *out, size_t n, char *spark, size_t sn)
{
	const char *hdr = row(f, 1);
	const char *at = strstr(hdr, "Spark");
	assert_non_null(at);
	size_t x = (size_t)(at - hdr);
	char line[1024];
	snprintf(line, sizeof(line), "%s", row(f, y));
	snprintf(spark, sn, "%s", strlen(line) > x ? line + x : "");
	if (strlen(line) > x)
		line[x] = '\0';
	out[0] = '\0';
	size_t len = 0;
	int col = 0;
	for (char *p = line; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		char *e = p;
		while (*e && !(e[0] == ' ' && (e[1] == ' ' || !e[1])))
			e++;
		if (col++ && len < n)
			len += (size_t)snprintf(out + len, n - len, "%s%.*s", len ? " " : "",
						(int)(e - p), p);
		p = e;
	}
	assert_true(col >= 6);
}

static int level(const char *glyphs, char c)
{
	const char *p = strchr(glyphs, c);
	return p ? (int)(p - glyphs) : -1;
}

static void test_metrics_stats(void **state)
{
	struct fx *f = *state;
	draw(f);
	const char *hdr = row(f, 1);
	static const char *const words[] = {"Name", "Device", "Host",	 "Min",
					    "Mean", "Max",    "Samples", "Spark"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strstr(hdr, words[i]))
			fail_msg("header \"%s\" lacks \"%s\"", hdr, words[i]);
	assert_int_equal(strncmp(hdr, "Name", 4), 0);
	assert_int_equal(grid_at(&f->g, 0, 1)->role, ROLE_HEADER);
	assert_int_equal(grid_at(&f->g, 79, 1)->role, ROLE_HEADER);

	char got[256], spark[128];
	int y = find_row(f, "util");
	assert_int_equal(y, 2); /* ordered by host, resource, name */
	fields(f, y, got, sizeof(got), spark, sizeof(spark));
	/* samples 600 and 400 apart: the period is 400 (model/store/sample.h), which
	 * the last sample holds: (10 * 600 + 40 * 400 + 20 * 400) / 1400 */
	assert_string_equal(got, "cpu node1 10% 21.4% 40% 3");

	y = find_row(f, "ramp");
	assert_int_equal(y, 3);
	fields(f, y, got, sizeof(got), spark, sizeof(spark));
	/* mean = (0 + 1 + ... + 10) * 100 / 1100 = 5: the last sample, 10,
	 * holds one period */
	assert_string_equal(got, "gpu0 node1 0 W 5 W 10 W 11");

	y = find_row(f, "idle");
	assert_int_equal(y, 5);
	fields(f, y, got, sizeof(got), spark, sizeof(spark));
	assert_string_equal(got, "disk node3 - - - 0"); /* NAN: "-" */
	assert_null(f->a.message);
}

static void test_metrics_sparkline(void **state)
{
	struct fx *f = *state;
	const struct glyphs *g = glyphs_get(1);
	char levels[9] = "";
	for (int i = 0; i < 8; i++)
		levels[i] = g->spark[i][0];
	draw(f);
	assert_non_null(strstr(row(f, 1), "Spark (trace)"));
	char got[256], spark[128];
	int y = find_row(f, "ramp");
	fields(f, y, got, sizeof(got), spark, sizeof(spark));
	/* a ramp over [0, 1000): rising from the lowest glyph, never falling;
	 * 9 of 0..10 is the top of the window: level 9 / 10 * 7 -> 6 */
	size_t len = strlen(spark);
	assert_true(len >= 16);
	assert_int_equal(level(levels, spark[0]), 0);
	assert_int_equal(level(levels, spark[len - 1]), 6);
	int rises = 0;
	for (size_t i = 1; i < len; i++) {
		int p = level(levels, spark[i - 1]), q = level(levels, spark[i]);
		if (p < 0 || q < 0)
			fail_msg("'%c' in the sparkline \"%s\" is not a spark glyph", spark[i],
				 spark);
		assert_true(q >= p);
		rises += q > p;
	}
	assert_int_equal(rises, 6);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(grid_at(&f->g, (int)(strlen(row(f, y)) - len + i), y)->role,
				 y == 2 ? ROLE_SELECTED : ROLE_SPARK);

	/* util: 10 then 40 from t = 600: lowest glyphs, then highest */
	fields(f, find_row(f, "util"), got, sizeof(got), spark, sizeof(spark));
	len = strlen(spark);
	assert_int_equal(level(levels, spark[0]), 0);
	assert_int_equal(level(levels, spark[len / 2]), 0);
	assert_int_equal(level(levels, spark[len - 1]), 7);

	/* into wf and on into late, its only child: the window becomes
	 * [500, 1000) */
	char *err = NULL;
	assert_int_equal(tree_view_enter(&f->a.tree, &err), 1);
	assert_string_equal(f->a.tree.node->name, "late");
	draw(f);
	assert_non_null(strstr(row(f, 1), "Spark (over late)"));
	fields(f, find_row(f, "ramp"), got, sizeof(got), spark, sizeof(spark));
	len = strlen(spark);
	/* 5 on the series' own 0..10 scale: 5 / 10 * 7 + 0.5 -> 4 */
	assert_int_equal(level(levels, spark[0]), 4);
	assert_int_equal(level(levels, spark[len - 1]), 6);
	/* util over [500, 1000): 10 for a fifth, then 40 */
	fields(f, find_row(f, "util"), got, sizeof(got), spark, sizeof(spark));
	len = strlen(spark);
	assert_int_equal(level(levels, spark[0]), 0);
	assert_int_equal(level(levels, spark[len / 2]), 7);
	/* the one-sample series marks its own bucket only */
	fields(f, find_row(f, "evil"), got, sizeof(got), spark, sizeof(spark));
	assert_int_equal(strlen(spark), 1);
}

static void test_metrics_hostile_name(void **state)
{
	struct fx *f = *state;
	draw(f);
	for (int y = 0; y < f->g.h; y++)
		for (int x = 0; x < f->g.w; x++)
			if (grid_at(&f->g, x, y)->ch == 0x1b)
				fail_msg("ESC in cell %d,%d: \"%s\"", x, y, row(f, y));
	int y = find_row(f, "evil\\e[2Jname");
	assert_int_equal(y, 4);
	char got[256], spark[128];
	fields(f, y, got, sizeof(got), spark, sizeof(spark));
	assert_string_equal(got, "mem node2 1.0 GB 1.0 GB 1.0 GB 1");
}

static void test_metrics_filter(void **state)
{
	struct fx *f = *state;
	/* on the host */
	f->a.mv.filter = xstrdup("node2");
	draw(f);
	assert_int_equal(find_row(f, "evil"), 2);
	assert_int_equal(find_row(f, "util"), -1);
	assert_string_equal(row(f, 3), "");
	/* smart case: lower case matches either case */
	free(f->a.mv.filter);
	f->a.mv.filter = xstrdup("AMP");
	draw(f);
	assert_int_equal(find_row(f, "ramp"), -1);
	assert_non_null(strstr(row(f, 1 + 22 / 2), "no series match the filter 'AMP'"));
	free(f->a.mv.filter);
	f->a.mv.filter = xstrdup("amp");
	draw(f);
	assert_int_equal(find_row(f, "ramp"), 2);
	assert_int_equal(grid_at(&f->g, 0, 2)->role, ROLE_SELECTED);
	/* the selection moves among the rows shown only */
	free(f->a.mv.filter);
	f->a.mv.filter = xstrdup("node1");
	f->a.mv.sel = f->a.mv.top = 0;
	draw(f);
	assert_int_equal(grid_at(&f->g, 0, find_row(f, "util"))->role, ROLE_SELECTED);
	metrics_key(&f->a, A_DOWN);
	metrics_key(&f->a, A_DOWN);
	draw(f);
	assert_int_equal(grid_at(&f->g, 0, find_row(f, "util"))->role, ROLE_NORMAL);
	assert_int_equal(grid_at(&f->g, 0, find_row(f, "ramp"))->role, ROLE_SELECTED);
	assert_int_equal(f->a.mv.sel, 1);
	assert_string_equal(row(f, 4), "");
}

/* The selected row's name, and that exactly one row is selected. */
static const char *selected(struct fx *f)
{
	static char name[64];
	int n = 0;
	for (int y = 2; y < f->g.h - 1; y++)
		if (grid_at(&f->g, 0, y)->role == ROLE_SELECTED) {
			sscanf(row(f, y), "%63s", name);
			n++;
		}
	assert_int_equal(n, 1);
	return name;
}

static void test_metrics_move(void **state)
{
	struct fx *f = *state;
	/* 30 series in 21 table rows (24 less breadcrumb, status, header) */
	draw(f);
	assert_string_equal(selected(f), "m00");
	metrics_key(&f->a, A_UP);
	draw(f);
	assert_string_equal(selected(f), "m00");
	metrics_key(&f->a, A_DOWN);
	metrics_key(&f->a, A_DOWN);
	draw(f);
	assert_string_equal(selected(f), "m02");
	assert_int_equal(find_row(f, "m02"), 4);
	metrics_key(&f->a, A_END);
	draw(f);
	assert_string_equal(selected(f), "m29");
	assert_int_equal(find_row(f, "m29"), 22); /* the last table row */
	assert_int_equal(find_row(f, "m09"), 2);  /* scrolled by 9 */
	assert_int_equal(find_row(f, "m08"), -1);
	metrics_key(&f->a, A_DOWN);
	draw(f);
	assert_string_equal(selected(f), "m29");
	metrics_key(&f->a, A_PGUP);
	draw(f);
	assert_string_equal(selected(f), "m08");
	assert_int_equal(find_row(f, "m00"), 2); /* back a page, clamped at the top */
	assert_int_equal(find_row(f, "m08"), 10);
	metrics_key(&f->a, A_HOME);
	draw(f);
	assert_string_equal(selected(f), "m00");
	assert_int_equal(find_row(f, "m00"), 2);
	metrics_key(&f->a, A_PGDN);
	draw(f);
	assert_string_equal(selected(f), "m21");
	assert_int_equal(find_row(f, "m29"), 22);
	/* other actions are app.c's */
	metrics_key(&f->a, A_SEARCH);
	metrics_key(&f->a, A_ENTER);
	draw(f);
	assert_string_equal(selected(f), "m21");
	/* a smaller screen keeps the selection visible */
	f->a.h = 12;
	draw(f);
	assert_string_equal(selected(f), "m21");
	assert_int_equal(find_row(f, "m21"), 10); /* the last of 9 rows */
	assert_int_equal(find_row(f, "m13"), 2);
	assert_string_equal(row(f, 11), ""); /* the status line is not drawn on */
}

static void test_metrics_empty(void **state)
{
	struct fx *f = *state;
	draw(f);
	const char *msg = "no metric series in this trace.db: counter tracks of traces show here";
	int y = 1 + 22 / 2;
	const char *r = row(f, y);
	const char *at = strstr(r, msg);
	assert_non_null(at);
	/* centred: as many spaces before as columns after, give or take one */
	int before = (int)(at - r), after = 80 - before - (int)strlen(msg);
	assert_true(before - after <= 1 && after - before <= 1);
	for (int i = 0; i < 24; i++)
		if (i != y)
			assert_string_equal(row(f, i), "");
	metrics_key(&f->a, A_DOWN);
	metrics_key(&f->a, A_END);
	assert_int_equal(f->a.mv.sel, 0);
}

/* Times at both ends of int64: no overflow (UBSan), no endless loop, and
 * the sparkline still shows the value in force. */
static void test_metrics_far_times(void **state)
{
	struct fx *f = *state;
	const struct mseries *s;
	size_t n;
	char *err = NULL;
	assert_int_equal(model_series(f->m, &s, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(s[0].mean >= 1 && s[0].mean <= 2);
	double out[8];
	assert_int_equal(model_series_buckets(f->m, &s[0], INT64_MIN + 1, INT64_MAX, out, 8, &err),
			 0);
	assert_true(out[0] == 1);
	assert_true(out[7] >= 1 && out[7] <= 2);
	draw(f); /* the window covers every sample */
	assert_true(find_row(f, "far") >= 0);
}

/* The fixture's series of this name (one there must be). */
static const struct mseries *series_named(struct fx *f, const char *name)
{
	const struct mseries *s, *found = NULL;
	size_t n;
	char *err = NULL;
	assert_int_equal(model_series(f->m, &s, &n, &err), 0);
	for (size_t i = 0; i < n && !found; i++)
		if (!strcmp(s[i].name, name))
			found = &s[i];
	assert_non_null(found);
	return found;
}

/* A series' figures over a window: of the values that hold there, by
 * time.  util: 10 at 0, 40 at 600, 20 at 1000 (period 400, the last holds
 * to 1400); over [500, 900) 10 holds 100 ns and 40 300 ns. */
static void test_metrics_window_stats(void **state)
{
	struct fx *f = *state;
	const struct mseries *util = series_named(f, "util");
	char *err = NULL;
	struct mwindow w;
	assert_int_equal(model_series_stats(f->m, util, 500, 900, &w, &err), 0);
	assert_true(w.min == 10 && w.max == 40 && w.samples == 2 && w.covered_ns == 400);
	assert_true(fabs(w.mean - 32.5) < 1e-9);
	assert_int_equal(model_series_stats(f->m, util, 1100, 1300, &w, &err), 0);
	assert_true(w.min == 20 && w.mean == 20 && w.max == 20 && w.samples == 1);
	/* past the last sample's hold: nothing holds */
	assert_int_equal(model_series_stats(f->m, util, 1500, 2000, &w, &err), 0);
	assert_true(isnan(w.min) && isnan(w.mean) && isnan(w.max) && w.samples == 0);
}

/* A series with a capacity is drawn on 0..capacity (a percentage between
 * 1 and 3 of 100 stays at the lowest glyph), one without on its own
 * min..max; the scale as text, its ends as the Min and Max columns write
 * them. */
static void test_metrics_scale(void **state)
{
	struct fx *f = *state;
	const struct glyphs *g = glyphs_get(1);
	char got[256], spark[128];
	draw(f);
	fields(f, find_row(f, "low"), got, sizeof(got), spark, sizeof(spark));
	assert_true(strlen(spark) >= 8);
	for (size_t i = 0; spark[i]; i++)
		assert_int_equal(spark[i], g->spark[0][0]);
	char buf[48];
	struct mseries s = {.capacity = 100, .unit = "%", .min = 1, .max = 3};
	mseries_scale_text(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0..100%");
	s = (struct mseries){.capacity = 0, .unit = "MHz", .min = 345, .max = 1980};
	mseries_scale_text(&s, buf, sizeof(buf));
	assert_string_equal(buf, "345..1980 MHz");
	double lo, hi;
	mseries_scale(&s, &lo, &hi);
	assert_true(lo == 345 && hi == 1980);
	/* memory in nvidia-smi's MiB reads as bytes do on the metrics screen
	 * (text_metric), not "0..144k MiB" */
	s = (struct mseries){.capacity = 143808, .unit = "MiB", .min = 0, .max = 7000};
	mseries_scale_text(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0..150.8 GB");
	s = (struct mseries){.capacity = 0, .unit = "MiB", .min = 512, .max = 7000};
	mseries_scale_text(&s, buf, sizeof(buf));
	assert_string_equal(buf, "536.9 MB..7.3 GB");
	/* a value far outside the scale (a hostile sample) is its end glyph,
	 * not what converting 1e300 to int gives (undefined: the lowest here) */
	assert_string_equal(glyphs_spark(g, 1e300, 0, 100), g->spark[7]);
	assert_string_equal(glyphs_spark(g, -1e300, 0, 100), g->spark[0]);
	assert_string_equal(glyphs_spark(g, 50, 0, 100), g->spark[4]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_metrics_stats, setup_main, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_window_stats, setup_main, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_sparkline, setup_main, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_hostile_name, setup_main, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_filter, setup_main, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_move, setup_many, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_empty, setup_empty, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_far_times, setup_far, teardown),
	    cmocka_unit_test_setup_teardown(test_metrics_scale, setup_low, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
