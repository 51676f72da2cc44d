/*
 * The flame graph screen (icicle): the selected phase's subtree merged by
 * name path (model/analysis/flame.h), the frame zoomed into across the whole width
 * on the first row, its children below it, each as wide as its total time
 * (host or device, `d` switches), widest first.  Frames narrower than a
 * cell are merged into one dim run after their siblings; labels are cut
 * with the "more" glyph.  The selected frame's total, self and count are on
 * the status line.  A draw visits only the frames it draws, so keys stay
 * fast whatever the subtree's size; the merge runs once, when the screen
 * opens on a phase it has not merged yet.
 *
 * Bottom-up (:callers NAME, or c on a frame, or on a :kernels or :ops row)
 * lists the frames of one name, one row per path that leads to it, largest
 * first; Enter shows the row's frame in the graph, q goes back to it (or
 * to the table the list was opened from).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/nstime.h"
#include "model/util/sbuf.h"
#include "tui/app.h"
#include "tui/format.h"
#include "model/util/xalloc.h"

/* Rows of the callers list as app_draw last laid it out. */
static size_t caller_rows(const struct app *a)
{
	int rows = a->h - 4; /* breadcrumb, title, header, status */
	return rows > 1 ? (size_t)rows : 1;
}

/* Scrolls the callers list so that its selected row is among rows shown. */
static void keep_shown(struct flame_view *v, size_t rows)
{
	if (v->csel < v->ctop)
		v->ctop = v->csel;
	if (v->csel >= v->ctop + rows)
		v->ctop = v->csel - rows + 1;
}

static void callers_clear(struct flame_view *v)
{
	free(v->callers);
	free(v->cname);
	v->callers = NULL;
	v->cname = NULL;
	v->ncallers = v->csel = v->ctop = 0;
	v->in_callers = v->callers_back = 0;
}

void flame_view_release(struct flame_view *v)
{
	callers_clear(v);
	flame_release(&v->fl);
	memset(v, 0, sizeof(*v));
}

/* Merges phase id's subtree (name: for the message; NULL: "the") unless
 * it is the one shown; 0, or -1 with the reason in the status line. */
static int open_at(struct app *a, int64_t id, const char *name)
{
	struct flame_view *v = &a->fv;
	char *err = NULL;
	if (v->built && v->phase_id == id)
		return 0;
	if (a->show_now) {
		app_message(a, 0, "merging %s%s subtree by name path ...", name ? name : "the",
			    name ? "'s" : "");
		a->show_now(a);
	}
	flame_view_release(v);
	if (flame_build(a->m, id, &v->fl, &err) < 0) {
		app_error(a, -1, err);
		return -1;
	}
	if (a->show_now) /* the status line is the frame's again */
		app_message_clear(a);
	v->built = 1;
	v->phase_id = id;
	v->mode = FLAME_HOST;
	return 0;
}

int flame_view_open(struct app *a)
{
	const struct mnode *n = tree_view_selected(&a->tree);
	if (!n || !n->id) {
		app_message(a, 1, "flame: select a phase first");
		return -1;
	}
	return open_at(a, n->id, n->name);
}

static int64_t total(const struct flame_view *v, uint32_t i)
{
	return flame_total(&v->fl.f[i], v->mode);
}

/* The frame the status line describes. */
static uint32_t current(const struct flame_view *v)
{
	return v->in_callers && v->ncallers ? v->callers[v->csel] : v->sel;
}

/* Widths and figures in mode; a selected frame with no time in it gives
 * way to its nearest ancestor that has some. */
static void set_mode(struct flame_view *v, enum flame_mode mode)
{
	if (v->mode == mode)
		return;
	v->mode = mode;
	flame_sort(&v->fl, mode);
	while (v->sel != v->zoom && flame_total(&v->fl.f[v->sel], mode) <= 0)
		v->sel = (uint32_t)v->fl.f[v->sel].parent;
}

/* The callers list of name (NULL: the current frame's) in the flame shown;
 * 0, or -1 with a message when no frame has that name. */
static int list_callers(struct app *a, const char *name)
{
	struct flame_view *v = &a->fv;
	char *want = xstrdup(name ? name : v->fl.f[current(v)].name);
	uint32_t *rows;
	size_t n = flame_named(&v->fl, want, v->mode, &rows);
	if (!n) {
		app_message(a, 1, "callers: no frame named '%s' under %s", want, v->fl.f[0].name);
		free(want);
		return -1;
	}
	callers_clear(v);
	v->cname = want;
	v->callers = rows;
	v->ncallers = n;
	v->in_callers = 1;
	return 0;
}

void flame_view_callers(struct app *a, const char *name)
{
	if (!(a->screen == SCREEN_FLAME && a->fv.built) && flame_view_open(a) < 0)
		return;
	list_callers(a, *name ? name : NULL);
	a->screen = SCREEN_FLAME;
}

int flame_view_callers_at(struct app *a, int64_t root_id, enum flame_mode mode, const char *name)
{
	if (open_at(a, root_id, NULL) < 0)
		return -1;
	set_mode(&a->fv, mode);
	if (list_callers(a, name) < 0)
		return -1;
	a->fv.callers_back = 1;
	a->screen = SCREEN_FLAME;
	return 0;
}

static void callers_key(struct app *a, enum action act)
{
	struct flame_view *v = &a->fv;
	if (app_list_move(act, &v->csel, &v->ctop, v->ncallers, caller_rows(a)))
		return;
	if (act == A_ENTER) {
		uint32_t f = v->callers[v->csel];
		v->sel = f;
		v->zoom = f ? (uint32_t)v->fl.f[f].parent : 0;
		v->top = 0;
		v->in_callers = v->callers_back = 0;
	} else if (act == A_FLAME_MODE) {
		uint32_t keep = v->callers[v->csel];
		set_mode(v, v->mode == FLAME_HOST ? FLAME_DEVICE : FLAME_HOST);
		free(v->callers);
		v->ncallers = flame_named(&v->fl, v->cname, v->mode, &v->callers);
		v->csel = v->ctop = 0;
		for (size_t i = 0; i < v->ncallers; i++)
			if (v->callers[i] == keep)
				v->csel = i;
		keep_shown(v, caller_rows(a));
	}
}

/* The sibling of sel dir steps away among those with time in this mode. */
static void sibling(struct flame_view *v, int dir)
{
	const struct flame *fl = &v->fl;
	if (v->sel == v->zoom)
		return;
	uint32_t p = (uint32_t)fl->f[v->sel].parent, k = 0;
	while (k < fl->f[p].nkids && flame_kid(fl, p, k) != v->sel)
		k++;
	if (dir < 0 && k > 0)
		v->sel = flame_kid(fl, p, k - 1);
	else if (dir > 0 && k + 1 < fl->f[p].nkids && total(v, flame_kid(fl, p, k + 1)) > 0)
		v->sel = flame_kid(fl, p, k + 1);
}

void flame_view_key(struct app *a, enum action act)
{
	struct flame_view *v = &a->fv;
	const struct flame *fl = &v->fl;
	if (!v->built)
		return;
	if (act == A_WHOLE_NAME) {
		v->whole = !v->whole;
		return;
	}
	if (v->in_callers) {
		callers_key(a, act);
		return;
	}
	const struct flame_frame *s = &fl->f[v->sel];
	switch (act) {
	case A_DOWN:
		if (s->nkids && total(v, flame_kid(fl, v->sel, 0)) > 0)
			v->sel = flame_kid(fl, v->sel, 0);
		break;
	case A_UP:
		if (v->sel != v->zoom)
			v->sel = (uint32_t)s->parent;
		break;
	case A_SIB_PREV:
		sibling(v, -1);
		break;
	case A_SIB_NEXT:
		sibling(v, 1);
		break;
	case A_HOME:
		v->sel = v->zoom;
		break;
	case A_ENTER:
		v->zoom = v->sel;
		v->top = 0;
		break;
	case A_BACK:
		if (!v->zoom) {
			app_message(a, 0, "the whole graph is shown (q goes back to the tree)");
			break;
		}
		v->zoom = (uint32_t)fl->f[v->zoom].parent;
		v->top = 0;
		break;
	case A_ZOOM_RESET:
		v->zoom = 0;
		v->top = 0;
		break;
	case A_CALLERS:
		flame_view_callers(a, "");
		break;
	case A_FLAME_MODE:
		/* a frame with no time in this mode is not drawn */
		set_mode(v, v->mode == FLAME_HOST ? FLAME_DEVICE : FLAME_HOST);
		break;
	default:
		break;
	}
}

/* Name s as lists show it (format_name: a C++ signature shortened), cut
 * to cols columns, ending with the "more" glyph when cut. */
static void fit_more(struct app *a, struct sbuf *out, const char *s, int cols)
{
	struct sbuf name = SBUF_INIT, clean = SBUF_INIT;
	format_name(&name, s, 1, a->g->more);
	format_sanitize(&clean, name.buf);
	sbuf_reset(out);
	if (format_width(clean.buf) <= cols)
		format_fit(out, clean.buf, cols, 0);
	else {
		format_fit(out, clean.buf, cols - format_width(a->g->more), 0);
		sbuf_adds(out, a->g->more);
	}
	sbuf_release(&name);
	sbuf_release(&clean);
}

struct layout {
	struct app *a;
	struct grid *g;
	const struct flame_view *v;
	int y, rows; /* the first row of level 0 (the zoomed frame), rows shown */
	struct sbuf label;
};

static void draw_frame(struct layout *l, uint32_t i, double x0, double x1, int level, int alt)
{
	const struct flame_view *v = l->v;
	int row = level - v->top;
	int c0 = (int)lround(x0), c1 = (int)lround(x1);
	if (row >= l->rows || c1 - c0 < 1)
		return;
	if (row >= 0) {
		enum role role = i == v->sel ? ROLE_SELECTED : alt ? ROLE_FLAME_ALT : ROLE_FLAME;
		int w = c1 - c0, gap = w >= 3; /* a blank cell tells neighbours apart */
		grid_fill(l->g, c0, l->y + row, w - gap, ' ', role);
		if (w - gap >= 2) {
			fit_more(l->a, &l->label, v->fl.f[i].name, w - gap);
			grid_put(l->g, c0, l->y + row, w - gap, l->label.buf, role);
		}
	}
	const struct flame *fl = &v->fl;
	const struct flame_frame *f = &fl->f[i];
	int64_t own = total(v, i),
		sum = v->mode == FLAME_HOST ? f->kids_host_ns : f->kids_device_ns;
	double denom = (double)(own > sum ? own : sum);
	if (denom <= 0)
		return;
	double scale = (x1 - x0) / denom, x = x0;
	int64_t done = 0;
	for (uint32_t k = 0; k < f->nkids; k++) {
		uint32_t c = flame_kid(fl, i, k);
		int64_t t = total(v, c);
		double w = (double)t * scale;
		if (t <= 0)
			break;
		if (w < 1.0) {
			/* the rest are narrower still: one dim run for them all */
			int r0 = (int)lround(x), r1 = (int)lround(x + (double)(sum - done) * scale);
			if (row + 1 >= 0 && row + 1 < l->rows && r1 > r0)
				grid_fill(l->g, r0, l->y + row + 1, r1 - r0, '+', ROLE_DIM);
			break;
		}
		draw_frame(l, c, x, x + w, level + 1, (int)(k % 2) ^ (level % 2));
		x += w;
		done = ns_sum(done, t);
	}
}

/* "a › b › c": the path from the root to frame i, each name as lists show
 * it, its start cut off to fit cols. */
static void frame_path(struct app *a, uint32_t i, int cols, struct sbuf *out)
{
	const struct flame *fl = &a->fv.fl;
	uint32_t chain[FLAME_MAX_DEPTH + 1];
	int n = 0;
	for (int32_t p = (int32_t)i; p >= 0 && n <= FLAME_MAX_DEPTH; p = fl->f[p].parent)
		chain[n++] = (uint32_t)p;
	sbuf_reset(out);
	struct sbuf name = SBUF_INIT;
	for (int k = n - 1; k >= 0; k--) {
		if (k != n - 1)
			sbuf_adds(out, a->g->crumb);
		sbuf_reset(&name);
		format_name(&name, fl->f[chain[k]].name, 1, a->g->more);
		format_sanitize(out, name.buf);
	}
	sbuf_release(&name);
	format_left_cut(out, cols, a->g->more);
}

/* The callers list: a title, a header, one row per path. */
static void callers_draw(struct app *a, struct grid *g, int y, int h)
{
	struct flame_view *v = &a->fv;
	const struct flame *fl = &v->fl;
	int64_t all = 0, root = total(v, 0);
	for (size_t i = 0; i < v->ncallers; i++)
		if (!flame_nested(fl, v->callers[i]))
			all = ns_sum(all, total(v, v->callers[i]));
	char tb[32], sb[32];
	struct sbuf s = SBUF_INIT, path = SBUF_INIT;
	struct sbuf name = SBUF_INIT;
	format_name(&name, v->cname, 1, a->g->more);
	sbuf_adds(&s, "callers of ");
	format_sanitize(&s, name.buf);
	sbuf_release(&name);
	sbuf_addf(&s, " (%s time): %zu path%s, total %s", v->mode == FLAME_HOST ? "host" : "device",
		  v->ncallers, v->ncallers == 1 ? "" : "s", format_duration(tb, sizeof(tb), all));
	if (root > 0)
		sbuf_addf(&s, " (%.1f%%)", 100.0 * (double)all / (double)root);
	fit_more(a, &path, s.buf, g->w);
	grid_put(g, 0, y, g->w, path.buf, ROLE_TITLE);
	grid_fill(g, 0, y + 1, g->w, ' ', ROLE_HEADER);
	grid_put(g, 0, y + 1, g->w, "    Total  Share      Self    Count  Called from",
		 ROLE_HEADER);
	size_t rows = (size_t)(h > 3 ? h - 2 : 1);
	keep_shown(v, rows);
	for (size_t r = 0; r < rows && v->ctop + r < v->ncallers; r++) {
		size_t i = v->ctop + r;
		uint32_t f = v->callers[i];
		int row = y + 2 + (int)r, nested = flame_nested(fl, f);
		sbuf_reset(&s);
		int64_t t = total(v, f);
		sbuf_addf(&s, "%9s %5.1f%% %9s %8lld  ", format_duration(tb, sizeof(tb), t),
			  root > 0 ? 100.0 * (double)t / (double)root : 0.0,
			  format_duration(sb, sizeof(sb), flame_self(&fl->f[f], v->mode)),
			  (long long)fl->f[f].count);
		int used = format_width(s.buf);
		/* the frames above it: the title names the frame itself */
		frame_path(a, f && fl->f[f].parent >= 0 ? (uint32_t)fl->f[f].parent : f,
			   g->w - used > 8 ? g->w - used : 8, &path);
		sbuf_adds(&s, path.buf);
		enum role role = i == v->csel ? ROLE_SELECTED : nested ? ROLE_DIM : ROLE_NORMAL;
		if (i == v->csel)
			grid_fill(g, 0, row, g->w, ' ', role);
		grid_put(g, 0, row, g->w, s.buf, role);
	}
	sbuf_release(&s);
	sbuf_release(&path);
}

void flame_view_draw(struct app *a, struct grid *g, int y, int h)
{
	struct flame_view *v = &a->fv;
	if (!v->built) {
		grid_put(g, 0, y, g->w, "no flame graph: select a phase in the tree and press F",
			 ROLE_DIM);
		return;
	}
	if (v->whole) /* w: the current frame's whole name below */
		h -= grid_put_pane(g, y + h, h / 2, "whole name (w hides it)",
				   v->fl.f[current(v)].name, a->g->more);
	if (v->in_callers) {
		callers_draw(a, g, y, h);
		return;
	}
	const struct flame *fl = &v->fl;
	struct sbuf head = SBUF_INIT, path = SBUF_INIT;
	char more[64] = "";
	if (fl->left_out)
		snprintf(more, sizeof(more), ", %lld left out (frame limit)",
			 (long long)fl->left_out);
	sbuf_addf(&head, "%s time, %lld phases%s: ", v->mode == FLAME_HOST ? "host" : "device",
		  (long long)fl->phases, more);
	int cols = g->w - format_width(head.buf);
	frame_path(a, v->zoom, cols > 8 ? cols : 8, &path);
	sbuf_adds(&head, path.buf);
	grid_put(g, 0, y, g->w, head.buf, ROLE_TITLE);
	struct layout l = {.a = a, .g = g, .v = v, .y = y + 1, .rows = h - 1};
	int level = fl->f[v->sel].depth - fl->f[v->zoom].depth;
	if (level < v->top)
		v->top = level;
	if (level >= v->top + l.rows)
		v->top = level - l.rows + 1;
	if (total(v, v->zoom) <= 0 && !fl->f[v->zoom].nkids)
		grid_put(g, 0, l.y, g->w, "no time in this mode here (d switches host/device)",
			 ROLE_DIM);
	else
		draw_frame(&l, v->zoom, 0, g->w, 0, 0);
	sbuf_release(&l.label);
	sbuf_release(&head);
	sbuf_release(&path);
}

void flame_view_status(struct app *a, struct grid *g, int y)
{
	struct flame_view *v = &a->fv;
	if (!v->built)
		return;
	uint32_t cur = current(v);
	const struct flame_frame *f = &v->fl.f[cur];
	int64_t t = total(v, cur), all = total(v, 0);
	char tb[32], sb[32];
	struct sbuf s = SBUF_INIT;
	sbuf_addf(&s, "total %s", format_duration(tb, sizeof(tb), t));
	if (all > 0)
		sbuf_addf(&s, " (%.1f%%)", 100.0 * (double)t / (double)all);
	sbuf_addf(&s, "  self %s  count %lld  ",
		  format_duration(sb, sizeof(sb), flame_self(f, v->mode)), (long long)f->count);
	struct sbuf name = SBUF_INIT;
	int cols = g->w - format_width(s.buf);
	fit_more(a, &name, f->name, cols > 1 ? cols : 1);
	sbuf_adds(&s, name.buf);
	grid_put(g, 0, y, g->w, s.buf, ROLE_STATUS);
	sbuf_release(&name);
	sbuf_release(&s);
}
