/*
 * The top-issues screen: the analyses' ranked list (model/analysis/analyze.c), one
 * row per issue (rank, kind, time saved, share of the workflow, the phase),
 * and the selected issue's explanation below.  Enter shows the phase in the
 * tree.  The analyses are read (or computed) when the screen first opens.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "tui/app.h"
#include "tui/format.h"
#include "model/util/xalloc.h"

#define EXPLAIN_H 4 /* rows under the list for the explanation */

static int load(struct app *a)
{
	struct issues_view *v = &a->iv;
	if (v->loaded)
		return 0;
	char *err = NULL;
	int rc = analysis_get(model_store(a->m), &v->an, &err);
	if (rc < 0) {
		app_error(a, rc, err);
		return -1;
	}
	v->paths = xcalloc(v->an.nissues ? v->an.nissues : 1, sizeof(*v->paths));
	for (size_t i = 0; i < v->an.nissues; i++) {
		rc = analysis_phase_path(model_store(a->m), v->an.issues[i].phase_id, &v->paths[i],
					 &err);
		if (rc < 0) {
			app_error(a, rc, err);
			issues_release(v);
			return -1;
		}
	}
	v->loaded = 1;
	return 0;
}

void issues_release(struct issues_view *v)
{
	for (size_t i = 0; v->paths && i < v->an.nissues; i++)
		free(v->paths[i]);
	free(v->paths);
	analysis_release(&v->an);
	memset(v, 0, sizeof(*v));
}

void issues_open(struct app *a)
{
	load(a);
}

/* Rows of the list as app_draw last laid it out. */
static size_t list_rows(const struct app *a)
{
	int rows = a->h - 3 - (EXPLAIN_H + 1);
	return rows > 1 ? (size_t)rows : 1;
}

void issues_key(struct app *a, enum action act)
{
	struct issues_view *v = &a->iv;
	if (load(a) < 0 || !v->an.nissues)
		return;
	if (app_list_move(act, &v->sel, &v->top, v->an.nissues, list_rows(a)))
		return;
	if (act == A_ENTER) {
		char *err = NULL;
		const char *path = v->paths ? v->paths[v->sel] : NULL;
		if (!path) {
			app_message(a, 1, "issue %zu: its phase is no longer in the file",
				    v->sel + 1);
		} else if (tree_view_goto(&a->tree, path, &err) < 0) {
			app_message(a, 1, "%s", err);
			free(err);
		} else {
			a->screen = SCREEN_TREE;
			app_message(a, 0, "issue %zu: %s", v->sel + 1, v->an.issues[v->sel].kind);
		}
	}
}

/* Writes text wrapped at w columns into rows y.. < ymax; the last row
 * that fits ends with the "more" glyph when text goes on. */
static void wrap(struct app *a, struct grid *g, int y, int ymax, int w, const char *text)
{
	const char *p = text;
	while (*p && y < ymax) {
		size_t len = strlen(p), cut = len;
		if ((int)len > w) {
			cut = (size_t)w;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (!cut)
				cut = (size_t)w;
		}
		if (y == ymax - 1 && cut < len) {
			grid_put(g, 1, y, w - 1, p, ROLE_NORMAL);
			grid_put(g, w, y, 1, a->g->more, ROLE_DIM);
			return;
		}
		grid_put(g, 1, y++, (int)cut > w ? w : (int)cut, p, ROLE_NORMAL);
		p += cut;
		p += strspn(p, " ");
	}
}

void issues_draw(struct app *a, struct grid *g, int y, int h)
{
	struct issues_view *v = &a->iv;
	char d[32], pct[16], num[24];
	/* columns: rank 1..3, kind (and cause) 6..29, saved ..38, share ..45,
	 * phase 48.. */
	grid_fill(g, 0, y, g->w, ' ', ROLE_HEADER);
	grid_put(g, 3, y, 1, "#", ROLE_HEADER);
	grid_put(g, 6, y, 4, "Kind", ROLE_HEADER);
	grid_put(g, 34, y, 5, "Saves", ROLE_HEADER);
	grid_put(g, 41, y, 5, "Share", ROLE_HEADER);
	grid_put(g, 48, y, 5, "Phase", ROLE_HEADER);
	if (load(a) < 0)
		return;
	if (!v->an.nissues) {
		grid_put(g, 1, y + 2, g->w - 2,
			 "No issues found: no imbalance, no GPU waiting on its host, nothing on"
			 " a critical path that would save time.",
			 ROLE_DIM);
		return;
	}
	size_t rows = (size_t)(h - 1 - (EXPLAIN_H + 1) > 1 ? h - 1 - (EXPLAIN_H + 1) : 1);
	for (size_t r = 0; r < rows && v->top + r < v->an.nissues; r++) {
		size_t i = v->top + r;
		const struct issue *u = &v->an.issues[i];
		enum role role = i == v->sel ? ROLE_SELECTED : ROLE_NORMAL;
		int row = y + 1 + (int)r;
		grid_fill(g, 0, row, g->w, ' ', role);
		snprintf(num, sizeof(num), "%3zu", i + 1);
		snprintf(pct, sizeof(pct), "-");
		if (!isnan(u->share))
			snprintf(pct, sizeof(pct), u->share < 0.01 ? "%.2f%%" : "%.1f%%",
				 100 * u->share);
		grid_put(g, 1, row, 3, num, role);
		struct sbuf text = SBUF_INIT;
		sbuf_adds(&text, u->kind);
		if (u->cause)
			sbuf_addf(&text, " (%s)", u->cause);
		grid_put(g, 6, row, 24, text.buf, role);
		sbuf_release(&text);
		sbuf_reset(&text);
		format_duration(d, sizeof(d), u->impact_ns);
		grid_put(g, 30 + 9 - format_width(d), row, 9, d, role);
		grid_put(g, 40 + 6 - format_width(pct), row, 7, pct, role);
		sbuf_adds(&text, v->paths && v->paths[i] ? v->paths[i] : "?");
		grid_put(g, 48, row, g->w - 49, format_left_cut(&text, g->w - 49, a->g->more),
			 role);
		sbuf_release(&text);
	}
	int ey = y + h - EXPLAIN_H - 1;
	grid_fill(g, 0, ey, g->w, '-', ROLE_DIM);
	grid_put(g, 2, ey, -1, " why ", ROLE_TITLE);
	wrap(a, g, ey + 1, y + h, g->w - 2, v->an.issues[v->sel].explanation);
}
