/*
 * The timeline screen: a Gantt chart of the current node's subtree, one
 * lane per track beneath it (CPU threads, GPU streams, each rank's), each
 * lane as many rows as its phases nest (up to LANES_NEST), kernels on their
 * streams' lanes, under a time axis relative to the node's start; the
 * metric series that overlap the window drawn as sparklines on the same
 * axis, and a footer describing the selected phase.
 *
 * The lanes are laid out once when the timeline opens (model/view/lanes.h);
 * a draw shades each column of a visible row by the share of its time the
 * row was busy, two bisections of the row's busy intervals a column, so it
 * costs the rows times the columns, not the phases.  The selection is any phase of the subtree: j/k
 * move among its siblings, ] and [ into its children and back out.  Selecting a CPU call marks the
 * device work it launched; selecting device work marks the calls that launched it.  The tree's
 * selection follows the timeline's where it can (on leaving it, always), so leaving lands on the
 * same phase. A trace.db may hold any int64 time: the windows, widths and columns are worked out
 * without overflow (model/util/nstime.h), a window's width held at INT64_MAX.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/view/lanes.h"
#include "model/util/nstime.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"
#include "tui/app.h"
#include "tui/format.h"

/* Columns of the lane labels left of the Gantt area. */
#define LABEL_W 18
/* Columns between two tick labels of the time axis. */
#define TICK_W 15
/* The narrowest bar that carries its name (columns). */
#define BAR_NAME_W 6
/* The most rows a range's sums take. */
#define RANGE_ROWS 12
/* The narrowest window zooming in reaches (ns). */
#define MIN_WINDOW 1000

static const struct lane_span *selected(const struct timeline *tl)
{
	return tl->l.n ? &tl->l.s[tl->sel] : NULL;
}

/* The window's width (two int64 times may lie more than INT64_MAX apart). */
static uint64_t width(const struct timeline *tl)
{
	return ns_diff(tl->t0, tl->t1);
}

/* The middle of a span. */
static int64_t middle(const struct lane_span *c)
{
	return c->start + ns_dur(c->start, c->end) / 2;
}

/* The window w wide centred on mid, moved (keeping its width) inside the
 * full window; as wide as that or wider, it becomes it.  The sums are
 * taken in uint64_t and land within the full window: no overflow. */
static void set_window(struct timeline *tl, int64_t mid, uint64_t w)
{
	int64_t f0 = tl->l.t0, f1 = tl->l.t1, t0;
	if (w >= ns_diff(f0, f1)) {
		tl->t0 = f0;
		tl->t1 = f1;
		return;
	}
	t0 = mid <= f0 || ns_diff(f0, mid) <= w / 2 ? f0 : (int64_t)((uint64_t)mid - w / 2);
	if (t0 > f1 || ns_diff(t0, f1) < w)
		t0 = (int64_t)((uint64_t)f1 - w);
	tl->t0 = t0;
	tl->t1 = (int64_t)((uint64_t)t0 + w);
}

/* Centres the window (same width) on t. */
static void center_on(struct timeline *tl, int64_t t)
{
	set_window(tl, t, width(tl));
}

/* Pans so the selected phase overlaps the window. */
static void show_selected(struct timeline *tl)
{
	const struct lane_span *c = selected(tl);
	if (!c || (c->end >= tl->t0 && c->start <= tl->t1))
		return;
	center_on(tl, middle(c));
}

/* The tree follows a selection among the node's children (a linear search
 * of its rows when it lists the same node: no re-sort). */
static void sync_tree(struct app *a)
{
	const struct lane_span *c = selected(&a->tl);
	struct tree_view *v = &a->tree;
	if (!c || c->parent >= 0 || v->node != a->tl.node)
		return;
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i]->id == c->id) {
			v->sel = i;
			return;
		}
}

void timeline_leave(struct app *a)
{
	const struct lane_span *c = selected(&a->tl);
	char *err = NULL;
	if (!c || a->tree.node != a->tl.node)
		return;
	if (c->parent < 0) {
		sync_tree(a);
		return;
	}
	if (tree_view_show_id(&a->tree, c->id, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
	}
}

/* Selects the root's child with this id, if there is one. */
static int select_id(struct timeline *tl, int64_t id)
{
	for (size_t j = 0; j < tl->l.nroot; j++)
		if (tl->l.s[tl->l.kids[j]].id == id) {
			tl->sel = tl->l.kids[j];
			return 1;
		}
	return 0;
}

void timeline_select(struct app *a, const struct mnode *c)
{
	struct timeline *tl = &a->tl;
	if (tl->job && c && c->parent == tl->node) {
		tl->want = c->id;
		return;
	}
	if (!c || !tl->node || c->parent != tl->node || !select_id(tl, c->id)) {
		timeline_open(a);
		return;
	}
	show_selected(tl);
}

/* The lanes are read by a thread of its own, on a read-only connection of
 * its own, so that opening the timeline on millions of phases answers at
 * once; the screen says it is reading until they are there. */
struct timeline_job {
	struct model *m;
	int64_t root;
	atomic_int cancel, done;
	struct lanes l;
	char *err;
	pthread_t th;
	int threaded;
};

static void *job_run(void *arg)
{
	struct timeline_job *j = arg;
	const char *path = store_path(model_store(j->m));
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		j->err = xasprintf("%s: cannot open: %s", path,
				   db ? sqlite3_errmsg(db) : "out of memory");
	else
		lanes_build(j->m, db, j->root, LANES_MAX_SPANS, &j->cancel, &j->l, &j->err);
	sqlite3_close(db);
	atomic_store(&j->done, 1);
	return NULL;
}

/* Acts on the keys typed while the phases were read, in order; one that
 * opens another timeline (Enter, Backspace) queues those after it again. */
static void replay(struct app *a)
{
	struct timeline *tl = &a->tl;
	enum action q[TIMELINE_QUEUE];
	int n = tl->nqueued;
	memcpy(q, tl->queued, (size_t)n * sizeof(*q));
	tl->nqueued = 0;
	for (int i = 0; i < n; i++)
		timeline_key(a, q[i]);
}

/* Ends the job (waits for it when wait, else cancels it) and takes its
 * lanes when it finished. */
static void job_end(struct app *a, int wait)
{
	struct timeline *tl = &a->tl;
	struct timeline_job *j = tl->job;
	if (!j)
		return;
	if (!wait)
		atomic_store(&j->cancel, 1);
	if (j->threaded)
		pthread_join(j->th, NULL);
	tl->job = NULL;
	if (!wait) {
		lanes_release(&j->l);
	} else if (j->err) {
		app_message(a, 1, "%s", j->err);
	} else {
		tl->l = j->l;
		tl->t0 = tl->l.t0;
		tl->t1 = tl->l.t1;
		if (!select_id(tl, tl->want))
			tl->sel = tl->l.nroot ? tl->l.kids[0] : 0;
	}
	free(j->err);
	free(j);
	replay(a);
}

int timeline_poll(struct app *a)
{
	if (!a->tl.job || !atomic_load(&a->tl.job->done))
		return 0;
	job_end(a, 1);
	return 1;
}

void timeline_wait(struct app *a)
{
	job_end(a, 1);
}

void timeline_release(struct app *a)
{
	job_end(a, 0);
	lanes_sum_release(&a->tl.sum);
	lanes_release(&a->tl.l);
	memset(&a->tl, 0, sizeof(a->tl));
}

void timeline_open(struct app *a)
{
	struct timeline *tl = &a->tl;
	struct mnode *n = a->tree.node;
	timeline_release(a);
	tl->node = n;
	if (!n)
		return;
	struct mnode *want = tree_view_selected(&a->tree);
	tl->want = want ? want->id : 0;
	struct timeline_job *j = xcalloc(1, sizeof(*j));
	j->m = a->m;
	j->root = n->id;
	tl->job = j;
	j->threaded = pthread_create(&j->th, NULL, job_run, j) == 0;
	if (!j->threaded)
		job_run(j);
}

/* Shows phase id (a child of the timeline's node) in the tree, clearing a
 * filter that hides it; 0 on success. */
static int tree_select(struct app *a, int64_t id, char **err)
{
	if (tree_view_show_id(&a->tree, id, err) < 0)
		return -1;
	struct mnode *sel = tree_view_selected(&a->tree);
	if (!sel || sel->id != id) {
		tree_view_set_filter(&a->tree, NULL);
		if (tree_view_show_id(&a->tree, id, err) < 0)
			return -1;
	}
	return 0;
}

/* Enter: the selected phase becomes the timeline's node. */
static void enter(struct app *a)
{
	const struct lane_span *c = selected(&a->tl);
	char *err = NULL;
	if (!c || (!c->nkids && !a->tl.l.left_out))
		return;
	if (tree_select(a, c->id, &err) < 0 || tree_view_enter(&a->tree, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
		return;
	}
	timeline_open(a);
}

static void back(struct app *a)
{
	char *err = NULL;
	if (a->tree.node != a->tl.node && a->tl.node) {
		/* the tree moved meanwhile: go up from where the timeline is */
		if (tree_view_show(&a->tree, a->tl.node, NULL, &err) < 0)
			goto fail;
	}
	int64_t was = a->tl.node ? a->tl.node->id : 0;
	int r = tree_view_up(&a->tree, &err);
	if (r < 0)
		goto fail;
	if (r > 0) {
		timeline_open(a);
		a->tl.want = was;
	}
	return;
fail:
	app_message(a, 1, "%s", err);
	free(err);
}

static void zoom_to(struct timeline *tl, int64_t mid, uint64_t w)
{
	set_window(tl, mid, w < MIN_WINDOW ? MIN_WINDOW : w);
}

static void zoom_in(struct timeline *tl)
{
	const struct lane_span *c = selected(tl);
	uint64_t w = width(tl), nw = w / 2 < MIN_WINDOW ? MIN_WINDOW : w / 2;
	if (!c || nw >= w)
		return;
	zoom_to(tl, middle(c), nw);
}

static void zoom_out(struct timeline *tl)
{
	uint64_t w = width(tl);
	zoom_to(tl, tl->t0 + (int64_t)(w / 2), w > UINT64_MAX / 2 ? UINT64_MAX : w * 2);
}

/* The window fits the selected phase, with an eighth of it either side. */
static void zoom_fit(struct timeline *tl)
{
	const struct lane_span *c = selected(tl);
	uint64_t d = c ? ns_diff(c->start, c->end) : 0;
	if (c)
		zoom_to(tl, middle(c), d + d / 4);
}

static void pan(struct timeline *tl, int dir)
{
	uint64_t w = width(tl);
	int64_t step = w / 4 ? (int64_t)(w / 4) : 1;
	set_window(tl, ns_sum(tl->t0 + (int64_t)(w / 2), dir * step), w);
}

/* The selected phase's siblings: the root's children or its parent's. */
static const uint32_t *siblings(const struct timeline *tl, size_t *n)
{
	const struct lane_span *c = selected(tl);
	if (c->parent < 0) {
		*n = tl->l.nroot;
		return tl->l.kids;
	}
	const struct lane_span *p = &tl->l.s[c->parent];
	*n = p->nkids;
	return tl->l.kids + p->kids;
}

/* The selection moves among its siblings. */
static void move(struct timeline *tl, enum action act)
{
	size_t n, at = 0;
	const uint32_t *sib = siblings(tl, &n);
	while (at < n && sib[at] != tl->sel)
		at++;
	if (at == n)
		return;
	switch (act) {
	case A_DOWN:
		at += at + 1 < n;
		break;
	case A_UP:
		at -= at > 0;
		break;
	case A_HOME:
		at = 0;
		break;
	case A_END:
		at = n - 1;
		break;
	default: /* A_COSTLIEST */
		for (size_t j = 0; j < n; j++) {
			const struct lane_span *x = &tl->l.s[sib[j]], *y = &tl->l.s[sib[at]];
			if (x->end - x->start > y->end - y->start)
				at = j;
		}
	}
	tl->sel = sib[at];
}

/* The label of a lane: its rank when the lanes hold several, its GPU, its
 * track's name. */
static void lane_label(const struct lane *ln, int ranks, struct sbuf *out)
{
	if (!ln->t) {
		sbuf_adds(out, "(no track)");
		return;
	}
	if (ranks && ln->t->rank >= 0)
		sbuf_addf(out, "r%lld ", (long long)ln->t->rank);
	if (ln->t->device >= 0)
		sbuf_addf(out, "gpu%d ", ln->t->device);
	size_t n = strlen(ln->t->name);
	while (n > 0 && ln->t->name[n - 1] == ' ')
		n--; /* Kineto's "stream 7 " */
	sbuf_add(out, ln->t->name, n);
}

static int many_ranks(const struct lanes *l)
{
	int64_t first = -1;
	for (size_t k = 0; k < l->nlanes; k++) {
		const struct mtrack *t = l->lane[k].t;
		if (!t || t->rank < 0)
			continue;
		if (first >= 0 && t->rank != first)
			return 1;
		first = t->rank;
	}
	return 0;
}

/* The glyph level of a column busy for share of its time: 0 (blank) when
 * nothing ran in it, else 1 to 8 eighths, rounded up so that any work
 * shows. */
static int shade_level(double share, int any)
{
	if (!(share > 0))
		return any ? 1 : 0;
	int k = (int)ceil(share * 8 - 1e-9);
	return k < 1 ? 1 : k > 8 ? 8 : k;
}

/* Sums [t0, t1) by lane and by name (Perfetto's area selection); shown
 * below the lanes until cleared. */
static void sum_range(struct timeline *tl, int64_t t0, int64_t t1)
{
	lanes_sum_release(&tl->sum);
	lanes_sum(&tl->l, t0, t1, &tl->sum);
	tl->ranged = 1;
	tl->anchored = 0;
}

/* v: a range from the phase marked to the one selected (the same one: its
 * own window); with a range shown, it is cleared. */
static void range_mark(struct app *a)
{
	struct timeline *tl = &a->tl;
	if (tl->ranged) {
		tl->ranged = 0;
		lanes_sum_release(&tl->sum);
		return;
	}
	if (!tl->anchored) {
		tl->anchored = 1;
		tl->anchor = tl->sel;
		app_message(a, 0, "range marked: v at another phase sums from one to the other");
		return;
	}
	const struct lane_span *x = &tl->l.s[tl->anchor], *y = &tl->l.s[tl->sel];
	int64_t t0 = x->start < y->start ? x->start : y->start;
	int64_t t1 = x->end > y->end ? x->end : y->end;
	sum_range(tl, t0, t1 > t0 ? t1 : ns_sum(t0, 1));
}

/* V: the window shown; with a range shown, it is cleared. */
static void range_window(struct timeline *tl)
{
	if (tl->ranged) {
		tl->ranged = 0;
		lanes_sum_release(&tl->sum);
		return;
	}
	sum_range(tl, tl->t0, tl->t1 > tl->t0 ? tl->t1 : ns_sum(tl->t0, 1));
}

/* The lane shown on the first row (the lanes must not be empty). */
static size_t top_lane(const struct timeline *tl)
{
	int top = tl->top < 0 ? 0 : tl->top >= (int)tl->l.nrows ? (int)tl->l.nrows - 1 : tl->top;
	return tl->l.row[top].lane;
}

/* The first row shows the next lane (dir 1) or the previous one, or the
 * top lane's first row when it is cut; the selection may scroll out. */
static void scroll_lane(struct timeline *tl, int dir)
{
	const struct lanes *l = &tl->l;
	if (!l->nlanes)
		return;
	size_t k = top_lane(tl);
	if (dir > 0 && k + 1 < l->nlanes)
		k++;
	else if (dir < 0 && (int)l->lane[k].row == tl->top && k > 0)
		k--;
	tl->top = (int)l->lane[k].row;
	tl->free_scroll = 1;
}

/* Scrolls to the next lane below the first shown (wrapping) that has work
 * in the window, and says how busy it is there. */
static void next_busy_lane(struct app *a)
{
	struct timeline *tl = &a->tl;
	const struct lanes *l = &tl->l;
	size_t k0 = top_lane(tl);
	uint64_t w = width(tl);
	for (size_t j = 1; j <= l->nlanes; j++) {
		size_t k = (k0 + j) % l->nlanes;
		uint64_t busy = lanes_busy(l, l->lane[k].row, tl->t0, tl->t1);
		if (!busy)
			continue;
		struct sbuf label = SBUF_INIT;
		lane_label(&l->lane[k], many_ranks(l), &label);
		app_message(a, 0, "%s: busy %.1f%% of the window", label.buf,
			    w ? 100.0 * (double)busy / (double)w : 100.0);
		sbuf_release(&label);
		tl->top = (int)l->lane[k].row;
		tl->free_scroll = 1;
		return;
	}
	app_message(a, 0, "no lane has work in the window");
}

void timeline_key(struct app *a, enum action act)
{
	struct timeline *tl = &a->tl;
	if (!tl->node)
		return;
	if (tl->job && act != A_BACK) {
		if (tl->nqueued < TIMELINE_QUEUE)
			tl->queued[tl->nqueued++] = act;
		else
			app_message(a, 1,
				    "still reading the timeline's phases: %d keys kept, no more",
				    TIMELINE_QUEUE);
		return;
	}
	switch (act) {
	case A_ZOOM_IN:
		zoom_in(tl);
		return;
	case A_ZOOM_OUT:
		zoom_out(tl);
		return;
	case A_ZOOM_FIT:
		zoom_fit(tl);
		return;
	case A_PAN_LEFT:
		pan(tl, -1);
		return;
	case A_PAN_RIGHT:
		pan(tl, 1);
		return;
	case A_ZOOM_RESET:
		tl->t0 = tl->l.t0;
		tl->t1 = tl->l.t1;
		return;
	case A_ENTER:
		enter(a);
		return;
	case A_BACK:
		back(a);
		return;
	default:
		break;
	}
	if (!tl->l.n)
		return;
	switch (act) {
	case A_LANE_DOWN:
	case A_LANE_UP:
		scroll_lane(tl, act == A_LANE_DOWN ? 1 : -1);
		return;
	case A_LANE_BUSY:
		next_busy_lane(a);
		return;
	case A_RANGE_MARK:
		range_mark(a);
		return;
	case A_RANGE_WINDOW:
		range_window(tl);
		return;
	default:
		break;
	}
	const struct lane_span *c = selected(tl);
	tl->free_scroll = 0;
	switch (act) {
	case A_DOWN:
	case A_UP:
	case A_HOME:
	case A_END:
	case A_COSTLIEST:
		move(tl, act);
		break;
	case A_INTO:
		if (c->nkids)
			tl->sel = tl->l.kids[c->kids];
		break;
	case A_OUT:
		if (c->parent >= 0)
			tl->sel = (uint32_t)c->parent;
		break;
	default:
		return;
	}
	show_selected(tl);
	sync_tree(a);
}

/* Drawing. */

/* The Gantt area: columns [x, x + w) show times [t0, t1]. */
struct area {
	int x, w;
	int64_t t0, t1;
};

/* The area's time span (1 for a zero-length window). */
static double area_span(const struct area *ar)
{
	return ar->t1 > ar->t0 ? ns_span(ar->t0, ar->t1) : 1;
}

/* t + off for an offset off >= 0 in ns, rounded down, at most INT64_MAX. */
static int64_t time_after(int64_t t, double off)
{
	if (!(off > 0))
		return t;
	if (!(off < ns_span(t, INT64_MAX)))
		return INT64_MAX;
	return (int64_t)((uint64_t)t + (uint64_t)off);
}

/* Column (from a->x) of time t in [t0, t1], rounded down. */
static int col_of(const struct area *ar, int64_t t)
{
	double c = ns_span(ar->t0, t) * ar->w / area_span(ar);
	return c < 0 ? 0 : c >= ar->w ? ar->w - 1 : (int)c;
}

/* The columns [*c0, *c1) that [s, e] touches, at least one; 0 when it
 * lies outside the area. */
static int span_cols(const struct area *ar, int64_t s, int64_t e, int *c0, int *c1)
{
	if (e < ar->t0 || s > ar->t1 || ar->w < 1)
		return 0;
	if (s < ar->t0)
		s = ar->t0;
	if (e > ar->t1)
		e = ar->t1;
	*c0 = col_of(ar, s);
	double ce = ceil(ns_span(ar->t0, e) * ar->w / area_span(ar));
	*c1 = ce > ar->w ? ar->w : (int)ce;
	if (*c1 <= *c0)
		*c1 = *c0 + 1;
	return 1;
}

/* Gives the columns of [s, e] on row y the role, keeping their shade, at
 * least one cell when visible; returns the column after the last (0:
 * none). */
static int paint_span(struct grid *g, const struct area *ar, int y, int64_t s, int64_t e,
		      enum role role)
{
	int c0, c1;
	if (!span_cols(ar, s, e, &c0, &c1))
		return 0;
	grid_paint(g, ar->x + c0, y, c1 - c0, role);
	return c1;
}

/* "+1.20 ms" relative to base, zero at base itself; with as many more
 * digits as it takes to tell apart two instants res apart (res > 0). */
static const char *rel(char *buf, size_t n, int64_t t, int64_t base, const char *zero, int64_t res)
{
	if (t == base) {
		snprintf(buf, n, "%s", zero);
		return buf;
	}
	char d[32];
	if (res > 0)
		format_instant(d, sizeof(d), ns_sub(base, t), res);
	else
		format_duration(d, sizeof(d), ns_sub(base, t));
	snprintf(buf, n, "%s%s", t > base ? "+" : "", d);
	return buf;
}

/* The tick labels over the area, one each TICK_W columns, relative to base
 * (from: t0 for the first, then from it), into lab[]; whether they all fit
 * a tick and no two neighbours read the same. */
static int axis_labels(const struct area *ar, int64_t base, int from_t0, char lab[][64], int n)
{
	double span = ns_span(ar->t0, ar->t1);
	int64_t res = (int64_t)(ar->w > TICK_W ? span * TICK_W / ar->w : span);
	int ok = 1;
	for (int i = 0; i < n; i++) {
		char r[40];
		int64_t t = time_after(ar->t0, span * i * TICK_W / ar->w);
		rel(r, sizeof(r), t, from_t0 && i > 0 ? ar->t0 : base, "0", res > 0 ? res : 1);
		snprintf(lab[i], 64, "%s%s", from_t0 && i == 0 ? "t0=" : "", r);
		if ((i > 0 || !from_t0) && (int)strlen(lab[i]) > TICK_W - 1)
			ok = 0;
		if (i > 0 && !strcmp(lab[i], lab[i - 1]))
			ok = 0;
	}
	return ok;
}

/* Tick labels relative to the node's start, each with as many digits as
 * it takes to tell it from its neighbours; when that makes them too wide
 * (zoomed in far from the start), the first tick keeps its offset and the
 * others count from it ("t0" in the label column says so), so that no
 * two neighbouring labels ever read the same. */
static void draw_axis(struct grid *g, const struct area *ar, int y, int64_t base)
{
	int n = ar->t1 > ar->t0 && ar->w > 0 ? (ar->w + TICK_W - 1) / TICK_W : 1;
	char(*lab)[64] = xmalloc((size_t)n * sizeof(*lab));
	int delta = !axis_labels(ar, base, 0, lab, n);
	if (delta)
		axis_labels(ar, base, 1, lab, n);
	grid_fill(g, 0, y, g->w, ' ', ROLE_HEADER);
	grid_put(g, 0, y, ar->x - 1, delta ? "time (from t0)" : "time", ROLE_HEADER);
	for (int i = 0; i < n; i++) {
		int c = i * TICK_W, len = (int)strlen(lab[i]);
		if (ar->x + c + len > g->w)
			break;
		grid_put(g, ar->x + c, y, TICK_W - 1, lab[i], ROLE_HEADER);
	}
	free(lab);
}

/* The label of a metric lane: its device and a short name ("gpu0 util"),
 * and its host when the series come from more than one. */
static void series_label(const struct mseries *s, int hosts, struct sbuf *out)
{
	static const char *const shorter[][2] = {
	    {"utilization.gpu", "util"},
	    {"utilization.memory", "mem util"},
	    {"memory.used", "mem used"},
	    {"memory.total", "mem total"},
	    {"power.draw", "power"},
	    {"temperature.gpu", "temp"},
	    {"clocks.sm", "sm clock"},
	    {"clocks.mem", "mem clock"},
	    {"pcie.link.gen.current", "pcie gen"},
	};
	const char *name = s->name;
	size_t k = s->resource ? strlen(s->resource) : 0;
	if (k && !strncmp(name, s->resource, k) && name[k] == '.' && name[k + 1])
		name += k + 1;
	for (size_t i = 0; i < sizeof(shorter) / sizeof(shorter[0]); i++)
		if (!strcmp(name, shorter[i][0]))
			name = shorter[i][1];
	if (k)
		sbuf_addf(out, "%s ", s->resource);
	size_t n = strlen(name);
	if (n > 8 && !strcmp(name + n - 8, "-percent")) /* sysstat's "util-percent" */
		sbuf_addf(out, "%.*s %%", (int)(n - 8), name);
	else
		sbuf_adds(out, name);
	if (hosts && s->host)
		sbuf_addf(out, " %s", s->host);
}

/* Utilisation series come first: they say most at a glance. */
static int spark_first(const struct mseries *s)
{
	size_t n = strlen(s->name);
	return (n > 5 && !strcmp(s->name + n - 5, ".util")) ||
	       (n > 8 && !strcmp(s->name + n - 8, "-percent")) ||
	       !strcmp(s->name, "utilization.gpu");
}

/* Whether series worth drawing over [t0, t1] come from more than one host. */
static int many_hosts(const struct mseries *s, size_t ns)
{
	const char *first = NULL;
	for (size_t i = 0; i < ns; i++) {
		if (!s[i].host)
			continue;
		if (first && strcmp(first, s[i].host))
			return 1;
		first = s[i].host;
	}
	return 0;
}

/* Metric sparklines on rows [y, y + rows); returns the rows used. */
static int draw_sparks(struct app *a, struct grid *g, const struct area *ar, int y, int rows)
{
	const struct mseries *s;
	size_t ns;
	char *err = NULL;
	int used = 0;
	if (rows < 1 || ar->w < 1)
		return 0;
	if (model_series(a->m, &s, &ns, &err) < 0) {
		grid_put(g, 0, y, g->w, err, ROLE_ERROR);
		free(err);
		return 1;
	}
	int hosts = many_hosts(s, ns);
	double *v = xmalloc((size_t)ar->w * sizeof(*v));
	/* Rows are few and series many (sar records hundreds): utilisations
	 * first, then the rest; a series that never changes shows nothing. */
	for (size_t k = 0; k < 2 * ns && used < rows; k++) {
		size_t i = k % ns;
		if ((k < ns) != spark_first(&s[i]) || !(s[i].max > s[i].min) || !s[i].samples ||
		    s[i].t1 < ar->t0 || s[i].t0 > ar->t1)
			continue;
		if (model_series_buckets(a->m, &s[i], ar->t0,
					 ar->t1 > ar->t0 ? ar->t1 : ns_sum(ar->t0, 1), v, ar->w,
					 &err) < 0) {
			grid_put(g, 0, y + used++, g->w, err, ROLE_ERROR);
			free(err);
			err = NULL;
			continue;
		}
		/* the scale (model.h: 0..capacity, else min..max) ends the
		 * label, but for a percentage of 100, which the name says */
		char scale[48] = "";
		double lo, hi;
		mseries_scale(&s[i], &lo, &hi);
		if (!(s[i].capacity == 100 && s[i].unit && !strcmp(s[i].unit, "%")))
			mseries_scale_text(&s[i], scale, sizeof(scale));
		int sw = format_width(scale);
		struct sbuf label = SBUF_INIT;
		series_label(&s[i], hosts, &label);
		int room = ar->x - 2 - sw;
		if (sw && room >= 1) {
			grid_put_cut(g, 0, y + used, room, label.buf, a->g->more, ROLE_LABEL);
			grid_put(g, ar->x - 1 - sw, y + used, sw, scale, ROLE_DIM);
		} else {
			grid_put_cut(g, 0, y + used, ar->x - 1, label.buf, a->g->more, ROLE_LABEL);
		}
		sbuf_release(&label);
		for (int c = 0; c < ar->w; c++)
			grid_put(g, ar->x + c, y + used, 1, glyphs_spark(a->g, v[c], lo, hi),
				 ROLE_SPARK);
		used++;
	}
	free(v);
	return used;
}

/* The label column's width: the widest lane label and a blank, at least
 * LABEL_W, at most a quarter of the screen. */
static int label_width(const struct lanes *l, int ranks, int w)
{
	int want = LABEL_W;
	for (size_t k = 0; k < l->nlanes; k++) {
		struct sbuf label = SBUF_INIT;
		lane_label(&l->lane[k], ranks, &label);
		int lw = format_width(label.buf) + 1;
		if (lw > want)
			want = lw;
		sbuf_release(&label);
	}
	return want > w / 4 && w / 4 > LABEL_W ? w / 4 : want > w / 4 ? LABEL_W : want;
}

/* Draws row r on grid row y: each column shaded by the share of its time
 * the row was busy (the union of its spans there), from blank to a full
 * block in eighths (the spark glyphs), so that an idle stream looks idle
 * at every zoom; a column any span touches shows at least the lowest
 * glyph.  Bars alternate their role by span, so neighbours stay apart.
 * Costs the columns times two bisections, whatever the spans. */
static void draw_row(struct app *a, struct grid *g, const struct area *ar, const struct lanes *l,
		     size_t r, int y, double *share)
{
	const struct lane_row *rw = &l->row[r];
	lanes_shade(l, r, ar->t0, ar->t1, ar->w, share);
	int64_t c0 = ar->t0;
	for (int c = 0; c < ar->w; c++) {
		int64_t c1 = lanes_column_start(ar->t0, ar->t1, c + 1, ar->w);
		size_t k = lanes_seek(l, r, c0);
		const struct lane_span *sp = k < rw->n ? &l->s[rw->at[k]] : NULL;
		int any = sp && (c1 > c0 ? sp->start < c1 : sp->start <= c0) &&
			  (sp->end > c0 || sp->start == c0);
		int lv = shade_level(share[c], any);
		/* the role of the first span that runs into the column */
		if (lv && c0 < INT64_MAX && sp && sp->end == c0 && sp->start < c0)
			k = lanes_seek(l, r, c0 + 1);
		if (lv)
			grid_put(g, ar->x + c, y, 1, a->g->spark[lv - 1],
				 k % 2 ? ROLE_BAR_ALT : ROLE_BAR);
		c0 = c1;
	}
}

/* Bars at least BAR_NAME_W columns wide carry their name (sanitised, a
 * kernel's signature shortened, cut to fit) inside them, a bar cell kept
 * either side; a seek per bar or column, so the columns bound the cost. */
static void name_bars(struct app *a, struct grid *g, const struct area *ar, const struct lanes *l,
		      size_t r, int y)
{
	const struct lane_row *rw = &l->row[r];
	struct sbuf text = SBUF_INIT, name = SBUF_INIT;
	for (int c = 0; c < ar->w;) {
		int64_t t = lanes_column_start(ar->t0, ar->t1, c, ar->w);
		size_t k = lanes_seek(l, r, t < INT64_MAX ? t + 1 : t);
		if (k >= rw->n || l->s[rw->at[k]].start > ar->t1)
			break;
		const struct lane_span *sp = &l->s[rw->at[k]];
		int c0, c1;
		if (!span_cols(ar, sp->start, sp->end, &c0, &c1) || c1 <= c) {
			c++;
			continue;
		}
		if (c0 < c)
			c0 = c;
		char *err = NULL;
		if (c1 - c0 >= BAR_NAME_W &&
		    store_string(model_store(a->m), sp->name_id, &text, &err)) {
			sbuf_reset(&name);
			format_name(&name, text.buf, sp->kind == PHASE_KERNEL, a->g->more);
			grid_put_cut(g, ar->x + c0 + 1, y, c1 - c0 - 2, name.buf, a->g->more,
				     k % 2 ? ROLE_BAR_ALT : ROLE_BAR);
		}
		free(err);
		c = c1;
	}
	sbuf_release(&text);
	sbuf_release(&name);
}

/* Grid row of lanes row r, or -1 when it is scrolled out. */
static int row_y(const struct timeline *tl, int first, int shown, int32_t r)
{
	return r >= tl->top && r < tl->top + shown ? first + (r - tl->top) : -1;
}

/* Marks what the selection is linked to: the device work below a call,
 * or the calls above device work; returns how many it marked. */
static size_t draw_linked(struct grid *g, const struct area *ar, const struct timeline *tl,
			  int first, int shown)
{
	const struct lanes *l = &tl->l;
	const struct lane_span *c = selected(tl);
	size_t n = 0;
	if (lanes_is_device(c->kind)) {
		for (int32_t p = c->parent; p >= 0; p = l->s[p].parent) {
			const struct lane_span *s = &l->s[p];
			int y = s->row >= 0 ? row_y(tl, first, shown, s->row) : -1;
			if (y >= 0)
				paint_span(g, ar, y, s->start, s->end, ROLE_MATCH);
			n += s->lane >= 0; /* a call, not a container */
		}
		return n;
	}
	for (uint32_t j = c->pre + 1; j <= c->last; j++) {
		const struct lane_span *s = &l->s[l->by_pre[j]];
		if (!lanes_is_device(s->kind))
			continue;
		n++;
		int y = s->row >= 0 ? row_y(tl, first, shown, s->row) : -1;
		if (y >= 0)
			paint_span(g, ar, y, s->start, s->end, ROLE_MATCH);
	}
	return n;
}

static void draw_footer(struct app *a, struct grid *g, int y, size_t linked)
{
	struct timeline *tl = &a->tl;
	const struct lane_span *c = selected(tl);
	char s[40], d[32], w0[40], w1[40];
	struct sbuf rest = SBUF_INIT;
	int64_t base = tl->node->start_ns;
	sbuf_addf(&rest, "  at %s for %s", rel(s, sizeof(s), c->start, base, "+0", 0),
		  format_duration(d, sizeof(d), ns_dur(c->start, c->end)));
	if (linked)
		sbuf_addf(&rest,
			  lanes_is_device(c->kind) ? "  %zu calls above" : "  %zu device ops below",
			  linked);
	double zoom = tl->t1 > tl->t0 ? ns_span(tl->l.t0, tl->l.t1) / ns_span(tl->t0, tl->t1) : 1;
	if (zoom >= 9.95 || fabs(zoom - floor(zoom + 0.5)) < 0.05)
		sbuf_addf(&rest, "  zoom %.0fx", zoom);
	else
		sbuf_addf(&rest, "  zoom %.1fx", zoom);
	if (tl->l.left_out)
		sbuf_addf(&rest, "  %lld phases left out (Enter one to see them)",
			  (long long)tl->l.left_out);
	sbuf_addf(&rest, "  window %s + %s", rel(w0, sizeof(w0), tl->t0, base, "+0", 0),
		  format_duration(w1, sizeof(w1), ns_dur(tl->t0, tl->t1)));
	int room = g->w - (int)rest.len;
	if (room < 12)
		room = 12;
	grid_fill(g, 0, y, g->w, ' ', ROLE_LABEL);
	if (tl->cur.id != c->id) {
		char *err = NULL;
		if (model_phase(a->m, c->id, &tl->cur, &err) <= 0) {
			free(err);
			tl->cur.id = c->id;
			tl->cur.name = "?";
		}
	}
	struct sbuf name = SBUF_INIT;
	format_name(&name, tl->cur.name, c->kind == PHASE_KERNEL, a->g->more);
	int used = grid_put_cut(g, 0, y, room, name.buf, a->g->more, ROLE_LABEL);
	sbuf_release(&name);
	grid_put_cut(g, used, y, g->w - used, rest.buf, a->g->more, ROLE_LABEL);
	sbuf_release(&rest);
}

/* The rows the range's sums take of rows: a title, the column heads and
 * a row per lane or name, at most half of them and RANGE_ROWS. */
static int range_rows(const struct timeline *tl, int rows)
{
	size_t busy = 0, want;
	for (size_t k = 0; k < tl->l.nlanes; k++)
		busy += tl->sum.lane_busy[k] > 0;
	want = 2 + (busy > tl->sum.nname ? busy : tl->sum.nname);
	if (want > RANGE_ROWS)
		want = RANGE_ROWS;
	return (int)want < rows / 2 ? (int)want : rows / 2;
}

/* The lane with the most busy time not yet listed (done marks those
 * listed), or -1 when no other was busy. */
static ssize_t busiest_left(const struct lanes_sum *sm, size_t n, const char *done)
{
	ssize_t best = -1;
	for (size_t k = 0; k < n; k++)
		if (!done[k] && sm->lane_busy[k] &&
		    (best < 0 || sm->lane_busy[k] > sm->lane_busy[best]))
			best = (ssize_t)k;
	return best;
}

/* The range's sums on rows [y, y + rows): its window, then side by side
 * the lanes by busy time (and share of the range) and the names by time
 * (and count), the most first, as Perfetto's area selection lists them. */
static void draw_range(struct app *a, struct grid *g, int y, int rows, int lw, int ranks)
{
	const struct timeline *tl = &a->tl;
	const struct lanes_sum *sm = &tl->sum;
	char t0[40], d[32], cell[64];
	uint64_t w = ns_diff(sm->t0, sm->t1);
	int half = g->w / 2, nx = half + 1;
	int nw = g->w - nx - 18, bw = half - 17;
	struct sbuf text = SBUF_INIT, name = SBUF_INIT;
	char *done = xcalloc(tl->l.nlanes ? tl->l.nlanes : 1, 1);
	if (lw > bw)
		lw = bw;
	for (int r = y; r < y + rows; r++)
		grid_fill(g, 0, r, g->w, ' ', ROLE_NORMAL);
	/* the range to the nanosecond: it may be any two phases' ends */
	sbuf_addf(&text, "range %s + %s: busy by lane, time by name (v or V clears)",
		  rel(t0, sizeof(t0), sm->t0, tl->node->start_ns, "+0", 1),
		  format_instant(d, sizeof(d), (int64_t)(w > INT64_MAX ? INT64_MAX : w), 1));
	grid_fill(g, 0, y, g->w, ' ', ROLE_HEADER);
	grid_put_cut(g, 0, y, g->w, text.buf, a->g->more, ROLE_HEADER);
	if (rows > 1) {
		grid_put(g, 0, y + 1, lw, "lane", ROLE_DIM);
		grid_put(g, lw + 1, y + 1, 16, "     busy  share", ROLE_DIM);
		if (nw > 4) {
			grid_put(g, nx, y + 1, nw, "name", ROLE_DIM);
			grid_put(g, nx + nw + 1, y + 1, 17, "     time   count", ROLE_DIM);
		}
	}
	for (int i = 0; i + 2 < rows; i++) {
		ssize_t k = busiest_left(sm, tl->l.nlanes, done);
		if (k >= 0 && lw > 0) {
			done[k] = 1;
			sbuf_reset(&text);
			lane_label(&tl->l.lane[k], ranks, &text);
			grid_put_cut(g, 0, y + 2 + i, lw, text.buf, a->g->more, ROLE_LABEL);
			format_duration(d, sizeof(d), (int64_t)sm->lane_busy[k]);
			snprintf(cell, sizeof(cell), "%9s %5.1f%%", d,
				 w ? 100.0 * (double)sm->lane_busy[k] / (double)w : 0.0);
			grid_put(g, lw + 1, y + 2 + i, 16, cell, ROLE_NORMAL);
		}
		if ((size_t)i < sm->nname && nw > 4) {
			const struct lanes_sum_name *nm = &sm->name[i];
			char *err = NULL;
			sbuf_reset(&name);
			if (!store_string(model_store(a->m), nm->name_id, &text, &err)) {
				free(err);
				sbuf_reset(&text);
				sbuf_adds(&text, "?");
			}
			format_name(&name, text.buf, nm->device, a->g->more);
			grid_put_cut(g, nx, y + 2 + i, nw, name.buf, a->g->more, ROLE_NORMAL);
			format_duration(d, sizeof(d),
					(int64_t)(nm->ns > INT64_MAX ? INT64_MAX : nm->ns));
			snprintf(cell, sizeof(cell), "%9s %7llu", d, (unsigned long long)nm->count);
			grid_put(g, nx + nw + 1, y + 2 + i, 17, cell, ROLE_NORMAL);
		}
	}
	free(done);
	sbuf_release(&text);
	sbuf_release(&name);
}

void timeline_draw(struct app *a, struct grid *g, int y, int h)
{
	struct timeline *tl = &a->tl;
	const struct lanes *l = &tl->l;
	if (y < 0) {
		h += y;
		y = 0;
	}
	if (h > g->h - y)
		h = g->h - y;
	if (h < 1)
		return;
	for (int r = y; r < y + h; r++)
		grid_fill(g, 0, r, g->w, ' ', ROLE_NORMAL);
	timeline_poll(a);
	if (tl->job) {
		grid_put(g, 0, h > 1 ? y + 1 : y, -1, "reading the phases below this level...",
			 ROLE_DIM);
		return;
	}
	if (!tl->node || !l->n) {
		grid_put(g, 0, h > 1 ? y + 1 : y, -1, "no children to draw", ROLE_DIM);
		return;
	}
	int ranks = many_ranks(l), lw = label_width(l, ranks, g->w);
	struct area ar = {lw < g->w ? lw : g->w, g->w - lw, tl->t0, tl->t1};
	if (ar.w < 0)
		ar.w = 0;
	int rows = h - 2, first = y + 1, panel = tl->ranged ? range_rows(tl, rows) : 0;
	rows -= panel;
	/* scroll so the selected phase's row shows */
	const struct lane_span *sc = selected(tl);
	int sel_row = sc->row >= 0    ? sc->row
		      : sc->lane >= 0 ? (int)(l->lane[sc->lane].row + l->lane[sc->lane].nrows - 1)
				      : -1;
	if (tl->top > (int)l->nrows - rows)
		tl->top = (int)l->nrows - rows;
	if (tl->top < 0)
		tl->top = 0;
	if (!tl->free_scroll && rows > 0 && sel_row >= 0 && sel_row < tl->top)
		tl->top = sel_row;
	if (!tl->free_scroll && rows > 0 && sel_row >= tl->top + rows)
		tl->top = sel_row - rows + 1;
	int shown = (int)l->nrows - tl->top < rows ? (int)l->nrows - tl->top : rows;
	if (shown < 0)
		shown = 0;
	if (h >= 2)
		draw_axis(g, &ar, y, tl->node->start_ns);
	if (h >= 2 && tl->ranged)
		paint_span(g, &ar, y, tl->sum.t0, tl->sum.t1 - 1, ROLE_MATCH);
	double *share = xmalloc((size_t)(ar.w > 0 ? ar.w : 1) * sizeof(*share));
	for (int p = 0; p < shown; p++) {
		const struct lane_row *rw = &l->row[tl->top + p];
		if (rw->nest == 0 || p == 0) {
			struct sbuf label = SBUF_INIT, name = SBUF_INIT;
			lane_label(&l->lane[rw->lane], ranks, &label);
			format_name(&name, label.buf, 0, a->g->more);
			grid_put_cut(g, 0, first + p, ar.x - 1, name.buf, a->g->more,
				     rw->nest ? ROLE_DIM : ROLE_LABEL);
			sbuf_release(&label);
			sbuf_release(&name);
		}
		draw_row(a, g, &ar, l, (size_t)(tl->top + p), first + p, share);
		name_bars(a, g, &ar, l, (size_t)(tl->top + p), first + p);
	}
	free(share);
	size_t linked = draw_linked(g, &ar, tl, first, shown);
	/* a phase nested past the rows drawn shows on its lane's last row */
	const struct lane_span *c = selected(tl);
	int32_t cr = c->row >= 0    ? c->row
		     : c->lane >= 0 ? (int32_t)(l->lane[c->lane].row + l->lane[c->lane].nrows - 1)
				    : -1;
	int sy = cr >= 0 ? row_y(tl, first, shown, cr) : -1;
	if (sy >= 0)
		paint_span(g, &ar, sy, c->start, c->end, ROLE_SELECTED);
	if (rows > shown)
		draw_sparks(a, g, &ar, first + shown, rows - shown);
	if (panel)
		draw_range(a, g, first + rows, panel, ar.x - 1, ranks);
	draw_footer(a, g, y + h - 1, linked);
}
