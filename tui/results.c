/*
 * The query results screen: what a query typed at the ':' prompt returned
 * (query/exec.h), as a table that scrolls both ways.  h/l pick a column,
 * s sorts by it (again: reverse), '/' searches and '\' filters the cells as
 * shown, Enter shows the row's phase in the tree when the result has a
 * phase column.  A query that does not compile shows its error with a caret
 * under the column, and the prompt opens again with the cursor there.
 *
 * The queries run on a read-only connection of their own (query_open),
 * opened by the first one; the model's connection is never given to them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/analyze.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "query/parse.h"
#include "tui/app.h"
#include "tui/format.h"

#define RESULTS_MAX_ROWS 100000 /* rows kept; the title says when more were left */
#define COL_MAX		 40	/* widest a column is drawn */
#define COL_GAP		 2

void results_release(struct results_view *v)
{
	query_close(v->db);
	free(v->query);
	free(v->error);
	free(v->filter);
	free(v->order);
	query_table_release(&v->t);
	query_result_release(&v->r);
	memset(v, 0, sizeof(*v));
}

int results_is_query(const char *line, size_t len)
{
	for (size_t i = 0; query_sources[i]; i++)
		if (strlen(query_sources[i]) == len && !strncmp(line, query_sources[i], len))
			/* a bare "metrics" is the command that opens the metrics screen */
			return strcmp(query_sources[i], "metrics") ||
			       line[len + strspn(line + len, " ")];
	return 0;
}

/* The screen's connection, opened when first needed; NULL with a message. */
static sqlite3 *conn(struct app *a)
{
	struct results_view *v = &a->rv;
	char *err = NULL;
	struct query_limits lim = {.timeout_ns = v->timeout_ns, .stop = app_interrupted, .ctx = a};
	if (!v->db && query_open(store_path(model_store(a->m)), &lim, &v->db, &err) < 0) {
		if (app_interrupted(a))
			*a->interrupt = 0; /* it stopped the wait; it must not quit too */
		app_message(a, 1, "%s", err);
		free(err);
		v->db = NULL;
	}
	return v->db;
}

size_t results_complete(struct app *a, const char *line, char ***cands, size_t *start)
{
	return query_complete(conn(a), line, cands, start);
}

/* ---- the rows shown: filter, then sort ---- */

static int row_matches(const struct results_view *v, size_t row, const char *pat)
{
	for (size_t c = 0; c < v->t.ncols; c++)
		if (tree_view_match(query_table_cell(&v->t, row + 1, c), pat))
			return 1;
	return 0;
}

/* -1, 0, 1 as a sorts before b, ascending: numbers, then text, then NULL
 * (NULL stays last whichever way the sort goes). */
static int value_cmp(const struct query_value *a, const struct query_value *b)
{
	int ra = a->type == QP_NULL ? 2 : a->type == QP_TEXT;
	int rb = b->type == QP_NULL ? 2 : b->type == QP_TEXT;
	if (ra != rb || ra == 2)
		return (ra > rb) - (ra < rb);
	if (ra == 1)
		return strcmp(a->s, b->s);
	if (a->type == QP_INT && b->type == QP_INT)
		return (a->i > b->i) - (a->i < b->i);
	double x = a->type == QP_INT ? (double)a->i : a->r;
	double y = b->type == QP_INT ? (double)b->i : b->r;
	return (x > y) - (x < y);
}

static int order_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct results_view *v = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb, c = (size_t)v->sort_col;
	const struct query_value *x = query_cell(&v->r, a, c), *y = query_cell(&v->r, b, c);
	int d = value_cmp(x, y);
	if (v->desc && x->type != QP_NULL && y->type != QP_NULL)
		d = -d;
	return d ? d : (a > b) - (a < b); /* stable: the query's order breaks ties */
}

/* Rebuilds the rows shown, keeping the selected row selected when it stays. */
static void reorder(struct results_view *v)
{
	size_t keep = v->nshown ? v->order[v->sel] : (size_t)-1;
	v->nshown = 0;
	for (size_t i = 0; i < v->r.nrows; i++)
		if (!v->filter || row_matches(v, i, v->filter))
			v->order[v->nshown++] = i;
	if (v->sort_col >= 0)
		qsort_r(v->order, v->nshown, sizeof(*v->order), order_cmp, v);
	v->sel = v->top = 0;
	for (size_t i = 0; i < v->nshown; i++)
		if (v->order[i] == keep)
			v->sel = i;
}

/* ---- running a query ---- */

/* r, taken over, as the rows shown, in its own order; more marks what a
 * shortened name left out. */
static void install(struct results_view *v, struct query_result *r, const char *more)
{
	free(v->order);
	free(v->filter);
	v->filter = NULL;
	query_table_release(&v->t);
	query_result_release(&v->r);
	v->r = *r;
	/* as `grademl-tui query` shows them on a terminal: times as dates */
	query_table_build(&v->t, &v->r,
			  &(struct query_print_hooks){.sanitize = format_sanitize,
						      .width = format_width,
						      .more = more,
						      .clock = 1,
						      .short_names = 1});
	v->order = xcalloc(v->r.nrows ? v->r.nrows : 1, sizeof(*v->order));
	v->nshown = v->sel = v->top = v->col = v->left = 0;
	v->sort_col = -1;
	v->desc = 0;
	v->callers_root = 0; /* summ_open sets it after */
	reorder(v);
}

void results_run(struct app *a, const char *query)
{
	struct results_view *v = &a->rv;
	struct query_result r;
	struct query_error qe = {0};
	char *err = NULL;
	if (!conn(a))
		return;
	/* query may be the prompt's own line, which reopening it clears */
	char *q = xstrdup(query);
	free(v->query);
	v->query = q;
	if (a->show_now) {
		app_message(a, 0, "running the query (C-c stops it)");
		a->show_now(a);
	}
	/* C-c stops it sooner than its limits */
	struct query_limits lim = {.timeout_ns = v->timeout_ns,
				   .max_memory = v->max_memory,
				   .result_copies = 2, /* and its table (install) */
				   .stop = app_interrupted,
				   .ctx = a};
	int64_t t0 = app_now_ns();
	int rc = query_run(v->db, q, RESULTS_MAX_ROWS, &lim, &r, &qe, &err);
	int64_t took = app_now_ns() - t0;
	if (rc < 0 && a->interrupt && *a->interrupt == SIGINT) {
		*a->interrupt = 0; /* it stopped the query; it must not quit too */
		query_error_release(&qe);
		free(err);
		free(v->error);
		v->error = xasprintf("stopped after %.1f s (C-c)", (double)took / 1e9);
		a->screen = SCREEN_RESULTS;
		app_message(a, 1, "query stopped");
		return;
	}
	free(v->error);
	v->error = NULL;
	a->screen = SCREEN_RESULTS;
	if (rc < 0) {
		v->error = err;
		/* the first line: "error at column N: what" */
		app_message(a, 1, "%.*s", (int)strcspn(err, "\n"), err);
		if (qe.msg) /* mend it where it went wrong */
			prompt_reopen(&a->prompt, PROMPT_COMMAND, v->query,
				      qe.pos > 0 ? (size_t)qe.pos : 0);
		query_error_release(&qe);
		return;
	}
	install(v, &r, a->g->more);
	char d[32];
	app_message(a, 0, "%zu row%s%s in %s", r.nrows, r.nrows == 1 ? "" : "s",
		    r.truncated ? " (more left out)" : "", format_duration(d, sizeof(d), took));
}

void results_show(struct app *a, const char *title, struct query_result *r)
{
	struct results_view *v = &a->rv;
	char *t = xstrdup(title);
	free(v->query);
	v->query = t;
	free(v->error);
	v->error = NULL;
	install(v, r, a->g->more);
	a->screen = SCREEN_RESULTS;
}

void results_open(struct app *a)
{
	if (!a->rv.query)
		app_message(a, 0, "no query yet: type : and a query (man 7 grademl-query)");
}

/* ---- keys ---- */

/* The column that takes the width the others leave: the name column,
 * whose names query_print_hooks' short_names shortened; -1 for none. */
static long grow_col(const struct results_view *v)
{
	return v->t.ncols ? query_name_col(&v->r) : -1;
}

/* A column's width on a screen sw wide: its widest cell, room for the sort
 * marker after the name, at most COL_MAX; the name column up to what the
 * other columns leave of the screen when that is more. */
static int col_width(const struct results_view *v, size_t c, int sw)
{
	int w = v->t.width[c], head = format_width(query_table_cell(&v->t, 0, c)) + 1;
	if (head > w)
		w = head;
	int most = COL_MAX;
	if ((long)c == grow_col(v)) {
		int rest = 1;
		for (size_t k = 0; k < v->t.ncols; k++)
			if (k != c)
				rest += col_width(v, k, sw) + COL_GAP;
		if (sw - 1 - rest > most)
			most = sw - 1 - rest;
	}
	return w < most ? w : most;
}

/* The column that stays on screen while the others scroll, as htop keeps
 * its command: the name column, else the first. */
static size_t frozen_col(const struct results_view *v)
{
	long g = grow_col(v);
	return g >= 0 ? (size_t)g : 0;
}

/* What the frozen column takes: its width and gap once the table is
 * scrolled past it and there is room for it beside the selected column;
 * else 0. */
static int frozen_width(const struct results_view *v, int w)
{
	size_t fc = frozen_col(v);
	if (v->t.ncols < 2 || fc >= v->left || fc == v->col)
		return 0;
	int fw = col_width(v, fc, w) + COL_GAP;
	return 1 + fw + col_width(v, v->col, w) <= w - 1 ? fw : 0;
}

/* Whether column c ends on a screen w wide when the first shown is v->left. */
static int col_fits(const struct results_view *v, size_t c, int w)
{
	int x = 1 + frozen_width(v, w);
	for (size_t k = v->left; k <= c; k++)
		x += col_width(v, k, w) + COL_GAP;
	return x - COL_GAP <= w - 1;
}

static size_t list_rows(const struct app *a)
{
	int rows = a->h - 4; /* breadcrumb, query line, header, status */
	return rows > 1 ? (size_t)rows : 1;
}

static void sort_by(struct app *a)
{
	struct results_view *v = &a->rv;
	if (v->sort_col == (int)v->col) {
		v->desc = !v->desc;
	} else {
		v->sort_col = (int)v->col;
		/* numbers largest first, text A to Z: what one sorts by first */
		v->desc = v->t.right[v->col];
	}
	reorder(v);
}

static void show_phase(struct app *a)
{
	struct results_view *v = &a->rv;
	char *err = NULL;
	if (v->r.phase_col < 0) {
		app_message(a, 1, "no phase in these rows: select id (or phase) to jump to one");
		return;
	}
	const struct query_value *id = query_cell(&v->r, v->order[v->sel], (size_t)v->r.phase_col);
	/* by id, not by path: siblings may share a name (a step's many aten::relu) */
	int rc = id->type == QP_INT ? tree_view_show_id(&a->tree, id->i, &err) : 0;
	if (rc < 0)
		app_error(a, rc, err);
	else if (!rc)
		app_message(a, 1, "this row names no phase");
	else
		a->screen = SCREEN_TREE;
}

void results_key(struct app *a, enum action act)
{
	struct results_view *v = &a->rv;
	if (!v->query || v->error || !v->t.ncols)
		return;
	if (app_list_move(act, &v->sel, &v->top, v->nshown, list_rows(a)))
		return;
	switch (act) {
	case A_COL_PREV:
		v->col -= v->col > 0;
		break;
	case A_COL_NEXT:
		v->col += v->col + 1 < v->t.ncols;
		break;
	case A_SORT_COL:
		sort_by(a);
		return;
	case A_ENTER:
		if (v->nshown)
			show_phase(a);
		return;
	case A_CALLERS:
		results_callers(a, "");
		return;
	case A_WHOLE_NAME:
		v->whole = !v->whole;
		return;
	default:
		return;
	}
	if (v->col < v->left)
		v->left = v->col;
	while (v->left < v->col && !col_fits(v, v->col, a->w))
		v->left++;
}

void results_callers(struct app *a, const char *name)
{
	struct results_view *v = &a->rv;
	if (!v->query || v->error || !v->callers_root) {
		app_message(a, 1, "callers: on a :kernels or :ops table, or on the flame graph");
		return;
	}
	if (!*name) {
		/* the name as stored, not as the table shows it */
		const struct query_value *c =
		    v->nshown ? query_cell(&v->r, v->order[v->sel], 0) : NULL;
		if (!c || c->type != QP_TEXT) {
			app_message(a, 1, "callers: no row selected");
			return;
		}
		name = c->s;
	}
	flame_view_callers_at(a, v->callers_root, v->callers_device ? FLAME_DEVICE : FLAME_HOST,
			      name);
}

int results_search(struct app *a, const char *pat, int dir, int *wrapped)
{
	struct results_view *v = &a->rv;
	size_t n = v->nshown;
	*wrapped = 0;
	for (size_t k = 1; k <= n; k++) {
		size_t i = dir > 0 ? (v->sel + k) % n : (v->sel + n - k % n) % n;
		if (row_matches(v, v->order[i], pat)) {
			*wrapped = dir > 0 ? i <= v->sel : i >= v->sel;
			v->sel = i;
			size_t rows = list_rows(a);
			if (v->sel < v->top || v->sel >= v->top + rows)
				v->top = v->sel > rows / 2 ? v->sel - rows / 2 : 0;
			return 1;
		}
	}
	return 0;
}

void results_set_filter(struct app *a, const char *pat)
{
	struct results_view *v = &a->rv;
	free(v->filter);
	v->filter = *pat ? xstrdup(pat) : NULL;
	reorder(v);
	if (v->filter && !v->nshown)
		app_message(a, 1, "no rows match the filter '%s'", pat);
}

/* ---- drawing ---- */

static void draw_cell(struct app *a, struct grid *g, int x, int y, int w, const char *s, int right,
		      enum role role);

/* The query line: the query, and how many rows of how many. */
static void draw_title(struct app *a, struct grid *g, int y)
{
	struct results_view *v = &a->rv;
	char right[96];
	grid_fill(g, 0, y, g->w, ' ', ROLE_TITLE);
	right[0] = '\0';
	if (!v->error && v->filter)
		snprintf(right, sizeof(right), " %zu of %zu rows, filter '%.20s' ", v->nshown,
			 v->r.nrows, v->filter);
	else if (!v->error)
		snprintf(right, sizeof(right), " %zu row%s%s ", v->r.nrows,
			 v->r.nrows == 1 ? "" : "s",
			 v->r.truncated ? " (the first; more left out)" : "");
	int rw = format_width(right);
	grid_put(g, 1, y, 1, ":", ROLE_TITLE);
	draw_cell(a, g, 2, y, g->w - 3 - rw, v->query, 0, ROLE_TITLE);
	grid_put(g, g->w - rw, y, rw, right, v->filter ? ROLE_FILTER : ROLE_TITLE);
}

/* One cell: cut to w columns (the "more" glyph where cut), numbers to the right. */
static void draw_cell(struct app *a, struct grid *g, int x, int y, int w, const char *s, int right,
		      enum role role)
{
	int sw = format_width(s);
	if (sw > w) {
		struct sbuf cut = SBUF_INIT;
		format_fit(&cut, s, w - 1, 0);
		if (cut.len) /* a column one cell wide has room for the mark only */
			grid_put(g, x, y, w - 1, cut.buf, role);
		grid_put(g, x + w - 1, y, 1, a->g->more, role == ROLE_SELECTED ? role : ROLE_DIM);
		sbuf_release(&cut);
		return;
	}
	grid_put(g, right ? x + w - sw : x, y, w, s, role);
}

/* Column c of row row (0: the header) at x, w wide; name, when not NULL,
 * is the name column's text (cut to its width already). */
static void draw_col(struct app *a, struct grid *g, int x, int y, int w, size_t row, size_t c,
		     enum role role, const char *name)
{
	struct results_view *v = &a->rv;
	enum role r = role;
	if (!row && c == v->col)
		r = ROLE_SELECTED;
	else if (!row && (int)c == v->sort_col)
		r = ROLE_SORTED;
	grid_fill(g, x, y, w, ' ', r);
	if (!row && (int)c == v->sort_col) {
		/* the header with the sort marker after the name */
		struct sbuf h = SBUF_INIT;
		sbuf_adds(&h, query_table_cell(&v->t, 0, c));
		sbuf_adds(&h, v->desc ? a->g->down : a->g->up);
		draw_cell(a, g, x, y, w, h.buf, v->t.right[c], r);
		sbuf_release(&h);
	} else {
		draw_cell(a, g, x, y, w,
			  name && (long)c == grow_col(v) ? name : query_table_cell(&v->t, row, c),
			  v->t.right[c], r);
	}
}

/* Row row of the table (0: the header) across the columns shown: the frozen
 * column where the table is scrolled past it (frozen_width), then those
 * from v->left; name, when not NULL, is the name column's text. */
static void draw_row(struct app *a, struct grid *g, int y, size_t row, enum role role,
		     const char *name)
{
	struct results_view *v = &a->rv;
	int x = 1, fw = frozen_width(v, g->w);
	if (fw) {
		draw_col(a, g, x, y, fw - COL_GAP, row, frozen_col(v), role, name);
		x += fw;
	}
	for (size_t c = v->left; c < v->t.ncols && x < g->w - 1; c++) {
		int w = col_width(v, c, g->w);
		if (x + w > g->w - 1)
			w = g->w - 1 - x;
		draw_col(a, g, x, y, w, row, c, role, name);
		x += w + COL_GAP;
	}
}

/* The error with the query and a caret under the column, then the hint. */
static void draw_error(struct app *a, struct grid *g, int y, int h)
{
	const char *p = a->rv.error;
	for (int i = 0; *p && i < h; i++) {
		size_t len = strcspn(p, "\n");
		struct sbuf line = SBUF_INIT;
		sbuf_add(&line, p, len);
		grid_put(g, 1, y + i, g->w - 2, line.buf, i ? ROLE_NORMAL : ROLE_ERROR);
		sbuf_release(&line);
		p += len + (p[len] == '\n');
	}
}

/* w's pane: the selected row's name (its first column where it has no
 * name column) whole, in at most most rows ending above row end; returns
 * the rows it takes. */
static int draw_whole(struct app *a, struct grid *g, int end, int most)
{
	struct results_view *v = &a->rv;
	long c = grow_col(v);
	const struct query_value *x =
	    v->nshown ? query_cell(&v->r, v->order[v->sel], c >= 0 ? (size_t)c : 0) : NULL;
	return grid_put_pane(g, end, most, "whole name (w hides it)",
			     x && x->type == QP_TEXT ? x->s : "-", a->g->more);
}

void results_draw(struct app *a, struct grid *g, int y, int h)
{
	struct results_view *v = &a->rv;
	if (!v->query) {
		grid_put(g, 1, y + 1, g->w - 2,
			 "No query yet. Type : and a query, e.g.  phases kind = operator | by name"
			 " | top 10 sum(dur)",
			 ROLE_DIM);
		grid_put(g, 1, y + 2, g->w - 2,
			 "Tab completes; man 7 grademl-query has the language.", ROLE_DIM);
		return;
	}
	draw_title(a, g, y);
	if (v->error) {
		draw_error(a, g, y + 2, h - 2);
		return;
	}
	grid_fill(g, 0, y + 1, g->w, ' ', ROLE_HEADER);
	draw_row(a, g, y + 1, 0, ROLE_HEADER, NULL);
	if (!v->nshown) {
		grid_put(g, 1, y + 3, g->w - 2,
			 v->filter ? "No rows match the filter." : "No rows.", ROLE_DIM);
		return;
	}
	size_t rows = (size_t)(h - 2 > 1 ? h - 2 : 1), n = 0;
	int pane = v->whole ? draw_whole(a, g, y + h, h / 2) : 0;
	rows = rows > (size_t)pane + 1 ? rows - (size_t)pane : 1;
	if (pane && v->sel >= v->top + rows) /* the pane covers it */
		v->top = v->sel - rows + 1;
	if (v->top + rows > v->nshown)
		rows = v->nshown - v->top;
	/* the names shown, cut so that different ones read apart */
	long gc = grow_col(v);
	char **names = NULL;
	if (gc >= 0) {
		const char **texts = xcalloc(rows ? rows : 1, sizeof(*texts));
		for (n = 0; n < rows; n++)
			texts[n] = query_table_cell(&v->t, v->order[v->top + n] + 1, (size_t)gc);
		names =
		    format_cut_distinct(texts, rows, col_width(v, (size_t)gc, g->w), a->g->more);
		free(texts);
	}
	for (size_t r = 0; r < rows; r++) {
		size_t i = v->top + r;
		enum role role = i == v->sel ? ROLE_SELECTED : ROLE_NORMAL;
		int row = y + 2 + (int)r;
		grid_fill(g, 0, row, g->w, ' ', role);
		draw_row(a, g, row, v->order[i] + 1, role, names ? names[r] : NULL);
	}
	for (size_t k = 0; names && k < n; k++)
		free(names[k]);
	free(names);
}
