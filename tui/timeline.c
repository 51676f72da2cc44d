/*
 * The timeline screen: a Gantt chart of the current node's children, one
 * lane per track (thread, GPU stream), under a time axis relative to the
 * node's start, with the metric series that overlap the window drawn as
 * sparklines on the same axis and a footer describing the selected child.
 *
 * The state is struct timeline in app.h: the window [t0, t1] shown, the
 * selected child (an index into node->children, which are in start order)
 * and the first lane shown.  Lanes are worked out on every draw in one pass
 * over the children (a hash of track ids), so a draw is O(children) and
 * nothing needs invalidating when the node changes.  The tree's selection
 * follows the timeline's, so leaving the timeline lands on the same phase.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/sbuf.h"
#include "model/store.h"
#include "model/text.h"
#include "tui/app.h"
#include "tui/format.h"
#include "model/xalloc.h"

/* Columns of the lane labels left of the Gantt area. */
#define LABEL_W 18
/* Columns between two tick labels of the time axis. */
#define TICK_W 15
/* The narrowest window zooming in reaches (ns). */
#define MIN_WINDOW 1000

static int64_t end_of(const struct mnode *c)
{
	return c->start_ns + (c->dur_ns > 0 ? c->dur_ns : 0);
}

/* The node's own window widened to cover all its children (async kernels
 * may lie outside their parent). */
static void full_window(const struct mnode *n, int64_t *f0, int64_t *f1)
{
	int64_t s = n->start_ns, e = end_of(n);
	for (size_t i = 0; i < n->nchildren; i++) {
		const struct mnode *c = n->children[i];
		if (c->start_ns < s)
			s = c->start_ns;
		if (end_of(c) > e)
			e = end_of(c);
	}
	*f0 = s;
	*f1 = e;
}

static struct mnode *selected(const struct timeline *tl)
{
	if (!tl->node || !tl->node->nchildren)
		return NULL;
	return tl->node
	    ->children[tl->sel < tl->node->nchildren ? tl->sel : tl->node->nchildren - 1];
}

/* Moves [t0, t1] (keeping its width) into [f0, f1]; a window wider than
 * [f0, f1] becomes [f0, f1]. */
static void clamp_window(struct timeline *tl, int64_t f0, int64_t f1)
{
	int64_t w = tl->t1 - tl->t0;
	if (w >= f1 - f0) {
		tl->t0 = f0;
		tl->t1 = f1;
		return;
	}
	if (tl->t0 < f0) {
		tl->t0 = f0;
		tl->t1 = f0 + w;
	}
	if (tl->t1 > f1) {
		tl->t1 = f1;
		tl->t0 = f1 - w;
	}
}

/* Centres the window (same width) on t, clamped to the full window. */
static void center_on(struct timeline *tl, int64_t t)
{
	int64_t f0, f1, w = tl->t1 - tl->t0;
	full_window(tl->node, &f0, &f1);
	tl->t0 = t - w / 2;
	tl->t1 = tl->t0 + w;
	clamp_window(tl, f0, f1);
}

/* Pans so the selected child overlaps the window. */
static void show_selected(struct timeline *tl)
{
	struct mnode *c = selected(tl);
	if (!c || (end_of(c) >= tl->t0 && c->start_ns <= tl->t1))
		return;
	center_on(tl, c->start_ns + (end_of(c) - c->start_ns) / 2);
}

/* Keeps the tree's selection on the timeline's selected child: a linear
 * search of the rows when the tree lists the same node (no re-sort). */
static void sync_tree(struct app *a)
{
	struct mnode *c = selected(&a->tl);
	struct tree_view *v = &a->tree;
	if (!c)
		return;
	if (v->node == a->tl.node) {
		for (size_t i = 0; i < v->nrows; i++)
			if (v->rows[i] == c) {
				v->sel = i;
				return;
			}
		return; /* filtered out of the tree: leave its selection alone */
	}
	char *err = NULL;
	if (tree_view_show(v, a->tl.node, c, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
	}
}

void timeline_select(struct app *a, const struct mnode *c)
{
	struct timeline *tl = &a->tl;
	if (!c || !tl->node || c->parent != tl->node) {
		timeline_open(a);
		return;
	}
	for (size_t i = 0; i < tl->node->nchildren; i++)
		if (tl->node->children[i] == c)
			tl->sel = i;
	show_selected(tl);
}

void timeline_open(struct app *a)
{
	struct timeline *tl = &a->tl;
	struct mnode *n = a->tree.node;
	char *err = NULL;
	memset(tl, 0, sizeof(*tl));
	tl->node = n;
	if (!n)
		return;
	if (model_children(a->m, n, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
	}
	full_window(n, &tl->t0, &tl->t1);
	struct mnode *want = tree_view_selected(&a->tree);
	for (size_t i = 0; want && i < n->nchildren; i++)
		if (n->children[i] == want) {
			tl->sel = i;
			break;
		}
}

/* Shows child c (of the timeline's node) in the tree, clearing a filter
 * that hides it; 0 on success. */
static int tree_select(struct app *a, struct mnode *c, char **err)
{
	if (tree_view_show(&a->tree, a->tl.node, c, err) < 0)
		return -1;
	if (tree_view_selected(&a->tree) != c) {
		tree_view_set_filter(&a->tree, NULL);
		if (tree_view_show(&a->tree, a->tl.node, c, err) < 0)
			return -1;
	}
	return 0;
}

static void enter(struct app *a)
{
	struct mnode *c = selected(&a->tl);
	char *err = NULL;
	if (!c || !c->child_count)
		return;
	if (tree_select(a, c, &err) < 0 || tree_view_enter(&a->tree, &err) < 0) {
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
		if (tree_view_show(&a->tree, a->tl.node, selected(&a->tl), &err) < 0)
			goto fail;
	}
	int r = tree_view_up(&a->tree, &err);
	if (r < 0)
		goto fail;
	if (r > 0)
		timeline_open(a);
	return;
fail:
	app_message(a, 1, "%s", err);
	free(err);
}

static void zoom_in(struct timeline *tl)
{
	struct mnode *c = selected(tl);
	int64_t f0, f1, w = tl->t1 - tl->t0, nw = w / 2;
	if (!c)
		return;
	if (nw < MIN_WINDOW)
		nw = MIN_WINDOW;
	if (nw >= w)
		return;
	int64_t mid = c->start_ns + (end_of(c) - c->start_ns) / 2;
	tl->t0 = mid - nw / 2;
	tl->t1 = tl->t0 + nw;
	full_window(tl->node, &f0, &f1);
	clamp_window(tl, f0, f1);
}

static void zoom_out(struct timeline *tl)
{
	int64_t f0, f1, w = tl->t1 - tl->t0;
	full_window(tl->node, &f0, &f1);
	int64_t nw = w > (f1 - f0) / 2 ? f1 - f0 : w * 2;
	int64_t mid = tl->t0 + w / 2;
	tl->t0 = mid - nw / 2;
	tl->t1 = tl->t0 + nw;
	clamp_window(tl, f0, f1);
}

static void pan(struct timeline *tl, int dir)
{
	int64_t f0, f1, step = (tl->t1 - tl->t0) / 4;
	if (step < 1)
		step = 1;
	full_window(tl->node, &f0, &f1);
	tl->t0 += dir * step;
	tl->t1 += dir * step;
	clamp_window(tl, f0, f1);
}

void timeline_key(struct app *a, enum action act)
{
	struct timeline *tl = &a->tl;
	struct mnode *n = tl->node;
	if (!n)
		return;
	size_t nc = n->nchildren, old = tl->sel;
	if (tl->sel >= nc)
		tl->sel = nc ? nc - 1 : 0;
	switch (act) {
	case A_DOWN:
		if (tl->sel + 1 < nc)
			tl->sel++;
		break;
	case A_UP:
		if (tl->sel > 0)
			tl->sel--;
		break;
	case A_HOME:
		tl->sel = 0;
		break;
	case A_END:
		tl->sel = nc ? nc - 1 : 0;
		break;
	case A_COSTLIEST:
		for (size_t i = 0; i < nc; i++)
			if (n->children[i]->dur_ns > n->children[tl->sel]->dur_ns)
				tl->sel = i;
		break;
	case A_ZOOM_IN:
		zoom_in(tl);
		return;
	case A_ZOOM_OUT:
		zoom_out(tl);
		return;
	case A_PAN_LEFT:
		pan(tl, -1);
		return;
	case A_PAN_RIGHT:
		pan(tl, 1);
		return;
	case A_ZOOM_RESET:
		full_window(n, &tl->t0, &tl->t1);
		return;
	case A_ENTER:
		enter(a);
		return;
	case A_BACK:
		back(a);
		return;
	default:
		return;
	}
	show_selected(tl);
	if (tl->sel != old)
		sync_tree(a);
}

/* Drawing. */

/* One lane: the children on one track. */
struct lane {
	int64_t track; /* 0: no (known) track */
	const struct mtrack *t;
	size_t spans; /* children drawn on it so far (for the alternating role) */
	int row;      /* grid row, or -1 when scrolled out */
};

/* Track id -> lane index, open addressing; slots hold index + 1 (0: empty). */
struct lane_map {
	struct lane *lanes;
	size_t nlanes, alloc;
	size_t *slots;
	size_t nslots; /* a power of two, at least twice nlanes */
};

static size_t hash_id(int64_t id, size_t mask)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & mask;
}

static void map_grow(struct lane_map *lm)
{
	size_t n = lm->nslots ? lm->nslots * 2 : 64;
	free(lm->slots);
	lm->slots = xcalloc(n, sizeof(*lm->slots));
	lm->nslots = n;
	for (size_t i = 0; i < lm->nlanes; i++) {
		size_t h = hash_id(lm->lanes[i].track, n - 1);
		while (lm->slots[h])
			h = (h + 1) & (n - 1);
		lm->slots[h] = i + 1;
	}
}

static size_t map_lane(struct lane_map *lm, struct model *m, int64_t track)
{
	if (!lm->nslots)
		map_grow(lm);
	size_t h = hash_id(track, lm->nslots - 1);
	while (lm->slots[h]) {
		if (lm->lanes[lm->slots[h] - 1].track == track)
			return lm->slots[h] - 1;
		h = (h + 1) & (lm->nslots - 1);
	}
	XGROW(lm->lanes, lm->nlanes + 1, lm->alloc);
	struct lane *l = &lm->lanes[lm->nlanes];
	memset(l, 0, sizeof(*l));
	l->track = track;
	l->t = track ? model_track(m, track) : NULL;
	lm->slots[h] = ++lm->nlanes;
	if (lm->nlanes * 2 > lm->nslots)
		map_grow(lm);
	return lm->nlanes - 1;
}

/* Lane order: the track's sort_index, then its id; "(no track)" last. */
static int cmp_lane(const struct lane *a, const struct lane *b)
{
	if (!a->t != !b->t)
		return a->t ? -1 : 1;
	if (a->t && a->t->sort_index != b->t->sort_index)
		return a->t->sort_index < b->t->sort_index ? -1 : 1;
	return a->track < b->track ? -1 : a->track > b->track;
}

static const struct lane *order_base;

static int cmp_order(const void *pa, const void *pb)
{
	return cmp_lane(&order_base[*(const size_t *)pa], &order_base[*(const size_t *)pb]);
}

/* The Gantt area: columns [x, x + w) show times [t0, t1]. */
struct area {
	int x, w;
	int64_t t0, t1;
};

/* Column (from a->x) of time t in [t0, t1], rounded down. */
static int col_of(const struct area *ar, int64_t t)
{
	int64_t span = ar->t1 > ar->t0 ? ar->t1 - ar->t0 : 1;
	double c = (double)(t - ar->t0) * ar->w / (double)span;
	return c < 0 ? 0 : c >= ar->w ? ar->w - 1 : (int)c;
}

/* Fills the columns of [s, e] on row y; at least one cell when visible. */
static void draw_span(struct grid *g, const struct area *ar, uint32_t ch, int y, int64_t s,
		      int64_t e, enum role role)
{
	if (e < ar->t0 || s > ar->t1 || ar->w < 1)
		return;
	if (s < ar->t0)
		s = ar->t0;
	if (e > ar->t1)
		e = ar->t1;
	int64_t span = ar->t1 > ar->t0 ? ar->t1 - ar->t0 : 1;
	int c0 = col_of(ar, s);
	double ce = ceil((double)(e - ar->t0) * ar->w / (double)span);
	int c1 = ce > ar->w ? ar->w : (int)ce;
	if (c1 <= c0)
		c1 = c0 + 1;
	grid_fill(g, ar->x + c0, y, c1 - c0, ch, role);
}

/* The code point of a one-character glyph ('#' if it is not one). */
static uint32_t glyph_cp(const char *glyph)
{
	const unsigned char *p = (const unsigned char *)glyph;
	size_t k = text_utf8_seq(p, strlen(glyph));
	return k ? format_decode(p, k) : '#';
}

/* "+1.20 ms" relative to base; zero at base itself. */
static const char *rel(char *buf, size_t n, int64_t t, int64_t base, const char *zero)
{
	if (t == base) {
		snprintf(buf, n, "%s", zero);
		return buf;
	}
	char d[32];
	format_duration(d, sizeof(d), t - base);
	snprintf(buf, n, "%s%s", t > base ? "+" : "", d);
	return buf;
}

/* Tick labels relative to the node's start; when zoomed in so far that
 * neighbouring ticks would read the same (3 significant digits), the first
 * tick keeps its offset and the others count from it ("t0" in the
 * label column says so). */
static void draw_axis(struct grid *g, const struct area *ar, int y, int64_t base)
{
	int64_t span = ar->t1 - ar->t0;
	char a0[40], a1[40];
	int64_t step = ar->w > TICK_W ? (int64_t)((double)span * TICK_W / ar->w) : span;
	rel(a0, sizeof(a0), ar->t0, base, "0");
	rel(a1, sizeof(a1), ar->t0 + step, base, "0");
	int delta = span > 0 && !strcmp(a0, a1);
	grid_fill(g, 0, y, g->w, ' ', ROLE_HEADER);
	grid_put(g, 0, y, LABEL_W - 1, delta ? "time (from t0)" : "time", ROLE_HEADER);
	for (int c = 0; c < ar->w; c += TICK_W) {
		char buf[48], r[40];
		int64_t t = ar->t0 + (int64_t)((double)span * c / ar->w);
		if (c == 0)
			t = ar->t0;
		if (c > 0 && span <= 0)
			break; /* a zero-length window has one time to show */
		rel(r, sizeof(r), t, delta && c > 0 ? ar->t0 : base, "0");
		snprintf(buf, sizeof(buf), "%s%s", delta && c == 0 ? "t0=" : "", r);
		int len = (int)strlen(buf);
		if (ar->x + c + len > g->w)
			break;
		grid_put(g, ar->x + c, y, TICK_W - 1, buf, ROLE_HEADER);
	}
}

/* Metric sparklines on rows [y, y + rows); returns the rows used. */
/* Utilisation series come first: they say most at a glance. */
static int spark_first(const struct mseries *s)
{
	size_t n = strlen(s->name);
	return (n > 5 && !strcmp(s->name + n - 5, ".util")) ||
	       (n > 8 && !strcmp(s->name + n - 8, "-percent"));
}

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
	double *v = xmalloc((size_t)ar->w * sizeof(*v));
	/* Rows are few and series many (sar records hundreds): utilisations
	 * first, then the rest; a series that never changes shows nothing. */
	for (size_t k = 0; k < 2 * ns && used < rows; k++) {
		size_t i = k % ns;
		if ((k < ns) != spark_first(&s[i]) || !(s[i].max > s[i].min) || !s[i].samples ||
		    s[i].t1 < ar->t0 || s[i].t0 > ar->t1)
			continue;
		if (model_series_buckets(a->m, &s[i], ar->t0, ar->t1 > ar->t0 ? ar->t1 : ar->t0 + 1,
					 v, ar->w, &err) < 0) {
			grid_put(g, 0, y + used++, g->w, err, ROLE_ERROR);
			free(err);
			err = NULL;
			continue;
		}
		/* the label: the name, its host where room is left, and the
		 * scale (model.h: 0..capacity, else min..max) at its end, but
		 * for a percentage of 100, which the name says */
		char scale[48] = "";
		double lo, hi;
		mseries_scale(&s[i], &lo, &hi);
		if (!(s[i].capacity == 100 && s[i].unit && !strcmp(s[i].unit, "%")))
			mseries_scale_text(&s[i], scale, sizeof(scale));
		int sw = format_width(scale);
		struct sbuf label = SBUF_INIT;
		sbuf_adds(&label, s[i].name);
		if (s[i].host) {
			sbuf_addc(&label, ' ');
			sbuf_adds(&label, s[i].host);
		}
		int room = LABEL_W - 2 - sw;
		if (sw && room >= 1) {
			grid_put(g, 0, y + used, room, label.buf, ROLE_LABEL);
			grid_put(g, LABEL_W - 1 - sw, y + used, sw, scale, ROLE_DIM);
		} else {
			grid_put(g, 0, y + used, LABEL_W - 1, label.buf, ROLE_LABEL);
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

static void draw_footer(struct app *a, struct grid *g, int y, int64_t f0, int64_t f1)
{
	const struct timeline *tl = &a->tl;
	const struct mnode *c = selected(tl), *n = tl->node;
	char s[40], d[32], w0[40], w1[40];
	struct sbuf rest = SBUF_INIT;
	int64_t base = n->start_ns;
	sbuf_addf(&rest, "  at %s for %s  window %s + %s",
		  rel(s, sizeof(s), c->start_ns, base, "+0"),
		  format_duration(d, sizeof(d), c->dur_ns), rel(w0, sizeof(w0), tl->t0, base, "+0"),
		  format_duration(w1, sizeof(w1), tl->t1 - tl->t0));
	double zoom = tl->t1 > tl->t0 ? (double)(f1 - f0) / (double)(tl->t1 - tl->t0) : 1;
	if (zoom >= 9.95 || fabs(zoom - floor(zoom + 0.5)) < 0.05)
		sbuf_addf(&rest, "  zoom %.0fx", zoom);
	else
		sbuf_addf(&rest, "  zoom %.1fx", zoom);
	int room = g->w - (int)rest.len;
	if (room < 12)
		room = 12;
	grid_fill(g, 0, y, g->w, ' ', ROLE_LABEL);
	struct sbuf name;
	sbuf_init(&name);
	format_name(&name, c->name, c->kind == PHASE_KERNEL, a->g->more);
	int used = grid_put_cut(g, 0, y, room, name.buf, a->g->more, ROLE_LABEL);
	sbuf_release(&name);
	grid_put(g, used, y, -1, rest.buf, ROLE_LABEL);
	sbuf_release(&rest);
}

void timeline_draw(struct app *a, struct grid *g, int y, int h)
{
	struct timeline *tl = &a->tl;
	struct mnode *n = tl->node;
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
	if (!n || !n->nchildren) {
		grid_put(g, 0, h > 1 ? y + 1 : y, -1, "no children to draw", ROLE_DIM);
		return;
	}
	if (tl->sel >= n->nchildren)
		tl->sel = n->nchildren - 1;
	int64_t f0, f1;
	full_window(n, &f0, &f1);
	struct area ar = {LABEL_W < g->w ? LABEL_W : g->w, g->w - LABEL_W, tl->t0, tl->t1};
	if (ar.w < 0)
		ar.w = 0;
	int footer = y + h - 1;
	draw_footer(a, g, footer, f0, f1);
	if (h < 2)
		return;
	draw_axis(g, &ar, y, n->start_ns);
	int rows = h - 2, first = y + 1;

	/* One pass: each child's lane. */
	struct lane_map lm = {0};
	size_t nc = n->nchildren;
	size_t *lane_of = xmalloc(nc * sizeof(*lane_of));
	int64_t last_track = 0;
	size_t last_lane = SIZE_MAX;
	for (size_t i = 0; i < nc; i++) {
		int64_t t = n->children[i]->track_id;
		if (last_lane == SIZE_MAX || t != last_track) {
			last_lane = map_lane(&lm, a->m, t);
			last_track = t;
		}
		lane_of[i] = last_lane;
	}
	/* Unknown track ids share one "(no track)" lane: canon[] maps every
	 * lane to the one it is drawn as. */
	size_t *canon = xmalloc(lm.nlanes * sizeof(*canon));
	size_t *order = xmalloc(lm.nlanes * sizeof(*order));
	size_t none = SIZE_MAX, nl = 0;
	for (size_t i = 0; i < lm.nlanes; i++) {
		if (!lm.lanes[i].t && none == SIZE_MAX)
			none = i;
		canon[i] = lm.lanes[i].t ? i : none;
		if (canon[i] == i)
			order[nl++] = i;
	}
	order_base = lm.lanes;
	qsort(order, nl, sizeof(*order), cmp_order);

	/* Scroll so the selected child's lane shows. */
	size_t sel_lane = canon[lane_of[tl->sel]];
	int sel_pos = 0;
	for (size_t p = 0; p < nl; p++)
		if (order[p] == sel_lane)
			sel_pos = (int)p;
	if (tl->top > (int)nl - rows)
		tl->top = (int)nl - rows;
	if (tl->top < 0)
		tl->top = 0;
	if (rows > 0 && sel_pos < tl->top)
		tl->top = sel_pos;
	if (rows > 0 && sel_pos >= tl->top + rows)
		tl->top = sel_pos - rows + 1;
	int shown = (int)nl - tl->top < rows ? (int)nl - tl->top : rows;
	for (size_t i = 0; i < lm.nlanes; i++)
		lm.lanes[i].row = -1;
	for (int p = 0; p < shown; p++) {
		struct lane *l = &lm.lanes[order[tl->top + p]];
		l->row = first + p;
		struct sbuf name;
		sbuf_init(&name);
		format_name(&name, l->t ? l->t->name : "(no track)", 0, a->g->more);
		grid_put_cut(g, 0, l->row, LABEL_W - 1, name.buf, a->g->more, ROLE_LABEL);
		sbuf_release(&name);
	}

	/* The spans; every lane counts its own spans so the roles alternate. */
	uint32_t full = glyph_cp(a->g->full);
	for (size_t i = 0; i < nc; i++) {
		struct lane *l = &lm.lanes[canon[lane_of[i]]];
		size_t k = l->spans++;
		if (l->row < 0 || i == tl->sel)
			continue;
		const struct mnode *c = n->children[i];
		draw_span(g, &ar, full, l->row, c->start_ns, end_of(c),
			  k % 2 ? ROLE_BAR_ALT : ROLE_BAR);
	}
	const struct mnode *sc = n->children[tl->sel];
	if (lm.lanes[sel_lane].row >= 0)
		draw_span(g, &ar, full, lm.lanes[sel_lane].row, sc->start_ns, end_of(sc),
			  ROLE_SELECTED);

	if (rows > shown)
		draw_sparks(a, g, &ar, first + shown, rows - shown);

	free(canon);
	free(order);
	free(lane_of);
	free(lm.lanes);
	free(lm.slots);
}
