/*
 * The tree screen: the current phase's children as rows (name, duration,
 * share of the parent, self time, child count, the main bottleneck when
 * the file has resource attribution, and a sparkline of when the child ran
 * within the parent's window), with an optional details pane under the
 * list.  The logic lives in treeview.c; this file draws it and
 * maps actions onto it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/store/store.h"
#include "tui/app.h"
#include "tui/format.h"
#include "model/util/xalloc.h"

#define W_DUR	   10
#define W_SHARE	   7
#define W_SELF	   10
#define W_COUNT	   8
#define W_SPARK	   12
#define W_BNECK	   9
#define DETAILS_H  12
#define LIST_MIN_H 8

/* From BNECK_WIDE_AT columns on, Bneck holds "idle:launch 100%"
 * (model/analysis/cause.h). */
#define BNECK_WIDE_AT 120
#define W_BNECK_WIDE  17

static int is_device(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET ||
	       kind == PHASE_GPU_ANNOTATION;
}

/* Share of the parent: device work against the parent's device time, host
 * work against its duration (DESIGN.md: never mix the two); none for the
 * profiler's bookkeeping, no part of its parent's time. */
static double share(const struct mnode *c)
{
	const struct mnode *p = c->parent;
	if (!p || store_is_bookkeeping(c->kind))
		return NAN;
	if (is_device(c->kind) && !is_device(p->kind) && p->device_ns > 0)
		return (double)c->dur_ns / (double)p->device_ns;
	return p->dur_ns > 0 ? (double)c->dur_ns / (double)p->dur_ns : NAN;
}

static void put_right(struct grid *g, int x, int y, int w, const char *s, enum role r)
{
	int n = format_width(s);
	grid_put(g, x + (n < w ? w - n : 0), y, w, s, r);
}

/* The series a->spark names that describes what row c ran on (its host,
 * its GPU: model/analysis/attach.c), or, when it names a host, that
 * host's; NULL when none does. */
static const struct mseries *spark_series(struct app *a, const struct mnode *c)
{
	const struct mseries *s;
	size_t n;
	char *err = NULL;
	if (model_series(a->m, &s, &n, &err) < 0) {
		free(err);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		int pinned;
		if (mseries_named(&s[i], a->spark, &pinned) &&
		    (pinned || model_attached(a->m, c, &s[i])))
			return &s[i];
	}
	return NULL;
}

/* The chosen metric over the child's own window: what the resource did
 * while the child ran (blank where the series has no value). */
static void draw_metric_spark(struct app *a, struct grid *g, int x, int y, int n,
			      const struct mnode *c, enum role r)
{
	const struct mseries *s = spark_series(a, c);
	double v[64];
	char *err = NULL;
	if (n > 64)
		n = 64;
	if (!s || c->dur_ns <= 0 ||
	    model_series_buckets(a->m, s, c->start_ns, c->start_ns + c->dur_ns, v, n, &err) < 0) {
		free(err);
		return;
	}
	double lo, hi;
	mseries_scale(s, &lo, &hi);
	for (int i = 0; i < n; i++)
		grid_put(g, x + i, y, 1, glyphs_spark(a->g, v[i], lo, hi),
			 r == ROLE_SELECTED ? r : ROLE_SPARK);
}

/* When the child ran within its parent's window: the covered fraction of
 * each of n buckets; or, after ':spark NAME', that metric during the child. */
static void draw_spark(struct app *a, struct grid *g, int x, int y, int n, const struct mnode *c,
		       enum role r)
{
	if (a->spark) {
		draw_metric_spark(a, g, x, y, n, c, r);
		return;
	}
	const struct mnode *p = c->parent;
	if (!p || p->dur_ns <= 0)
		return;
	double w = (double)p->dur_ns / n;
	for (int i = 0; i < n; i++) {
		double b0 = w * i, b1 = b0 + w; /* from the parent's start */
		double s = (double)(c->start_ns - p->start_ns), e = s + (double)c->dur_ns;
		double cov = (fmin(b1, e) - fmax(b0, s)) / w;
		if (cov > 0)
			grid_put(g, x + i, y, 1, glyphs_spark(a->g, cov, 0, 1),
				 r == ROLE_SELECTED ? r : ROLE_SPARK);
	}
}

static const char *sort_mark(const struct app *a, enum tree_sort s)
{
	return a->tree.sort != s ? "" : a->tree.desc ? a->g->down : a->g->up;
}

/* The Bneck column's width on g: the cause's long form where there is
 * room, else its short form (cause_column). */
static int bneck_w(const struct grid *g)
{
	return g->w >= BNECK_WIDE_AT ? W_BNECK_WIDE : W_BNECK;
}

static void draw_header(struct app *a, struct grid *g, int y, int name_w)
{
	char buf[64];
	grid_fill(g, 0, y, g->w, ' ', ROLE_HEADER);
	snprintf(buf, sizeof(buf), "Name%s", sort_mark(a, SORT_NAME));
	grid_put(g, 0, y, name_w, buf, a->tree.sort == SORT_NAME ? ROLE_SORTED : ROLE_HEADER);
	int x = name_w;
	snprintf(buf, sizeof(buf), "%sDuration", sort_mark(a, SORT_DUR));
	put_right(g, x, y, W_DUR, buf, a->tree.sort == SORT_DUR ? ROLE_SORTED : ROLE_HEADER);
	x += W_DUR;
	put_right(g, x, y, W_SHARE, "Share", ROLE_HEADER);
	x += W_SHARE;
	snprintf(buf, sizeof(buf), "%sSelf", sort_mark(a, SORT_SELF));
	put_right(g, x, y, W_SELF, buf, a->tree.sort == SORT_SELF ? ROLE_SORTED : ROLE_HEADER);
	x += W_SELF;
	snprintf(buf, sizeof(buf), "%sCount", sort_mark(a, SORT_COUNT));
	put_right(g, x, y, W_COUNT, buf, a->tree.sort == SORT_COUNT ? ROLE_SORTED : ROLE_HEADER);
	x += W_COUNT + 1;
	if (app_attr_available(a)) {
		grid_put(g, x, y, bneck_w(g), "Bneck", ROLE_HEADER);
		x += bneck_w(g);
	}
	/* a metric's scale: the selected row's series' (0..capacity, else
	 * its min..max) */
	const struct mnode *sel = tree_view_selected(&a->tree);
	const struct mseries *ss = a->spark && sel ? spark_series(a, sel) : NULL;
	char scale[48] = "";
	if (ss)
		mseries_scale_text(ss, scale, sizeof(scale));
	if (a->spark && format_width(a->spark) + 1 + format_width(scale) > W_SPARK)
		scale[0] = '\0'; /* the name first: the metrics screen has the range */
	snprintf(buf, sizeof(buf), "%s%s%s%s", sort_mark(a, SORT_START),
		 a->spark ? a->spark : "When", *scale ? " " : "", scale);
	grid_put(g, x, y, W_SPARK, buf, a->tree.sort == SORT_START ? ROLE_SORTED : ROLE_HEADER);
}

static void draw_row(struct app *a, struct grid *g, int y, int name_w, const struct mnode *c,
		     int selected)
{
	int books = store_is_bookkeeping(c->kind);
	enum role r = selected ? ROLE_SELECTED : books ? ROLE_DIM : ROLE_NORMAL;
	char buf[64];
	if (selected)
		grid_fill(g, 0, y, g->w, ' ', ROLE_SELECTED);
	/* a mark for rows that can be drilled into */
	grid_put(g, 0, y, 2, c->child_count ? "+ " : "  ", selected ? r : ROLE_DIM);
	struct sbuf name;
	sbuf_init(&name);
	format_name(&name, c->name, c->kind == PHASE_KERNEL, a->g->more);
	/* dimmed, and said in words where there are no colours: in the
	 * verdict's column, which it has none of, so that a narrow name column
	 * keeps the name; after the name where that column is not shown */
	int books_said = books && app_attr_available(a);
	if (books && !books_said)
		sbuf_adds(&name, " (profiler)");
	grid_put_cut(g, 2, y, name_w - 3, name.buf, a->g->more, r);
	sbuf_release(&name);
	int x = name_w;
	put_right(g, x, y, W_DUR, format_duration(buf, sizeof(buf), c->dur_ns), r);
	x += W_DUR;
	double sh = share(c);
	if (isnan(sh))
		snprintf(buf, sizeof(buf), "-");
	else
		snprintf(buf, sizeof(buf), sh >= 9.995 ? "%.0f%%" : "%.1f%%", sh * 100);
	put_right(g, x, y, W_SHARE, buf, r);
	x += W_SHARE;
	put_right(g, x, y, W_SELF, format_duration(buf, sizeof(buf), c->self_ns), r);
	x += W_SELF;
	snprintf(buf, sizeof(buf), "%lld", (long long)c->child_count);
	put_right(g, x, y, W_COUNT, buf, r);
	x += W_COUNT + 1;
	if (app_attr_available(a)) {
		if (books_said)
			snprintf(buf, sizeof(buf), "profiler");
		else
			app_attr_top(a, app_attr(a, c->id), bneck_w(g) - 1, buf, sizeof(buf));
		grid_put(g, x, y, bneck_w(g) - 1, buf, r);
		x += bneck_w(g);
	}
	draw_spark(a, g, x, y, g->w - x < W_SPARK ? g->w - x : W_SPARK, c, r);
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

/* Reads what the details pane shows of n, once per selection. */
static void load_detail(struct app *a, const struct mnode *n)
{
	if (a->detail_for == n)
		return;
	model_detail_release(&a->detail);
	a->detail_for = n;
	a->details_top = 0;
	char *err = NULL;
	if (model_detail(a->m, n, &a->detail, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
	}
	const struct mnode *p = n->parent;
	int64_t *d = xmalloc((p ? p->nchildren : 0) * sizeof(*d) + sizeof(*d));
	size_t k = 0;
	for (size_t i = 0; p && i < p->nchildren; i++)
		if (p->children[i]->name == n->name || !strcmp(p->children[i]->name, n->name))
			d[k++] = p->children[i]->dur_ns;
	qsort(d, k, sizeof(*d), cmp_i64);
	double sum = 0; /* a double: many long siblings must not overflow */
	for (size_t i = 0; i < k; i++)
		sum += (double)d[i];
	a->sib_count = (int64_t)k;
	a->sib_min = k ? d[0] : 0;
	a->sib_max = k ? d[k - 1] : 0;
	a->sib_mean = k ? (int64_t)(sum / (double)k) : 0;
	a->sib_p95 = k ? d[(size_t)ceil(0.95 * (double)k) - 1] : 0; /* nearest rank */
	free(d);
	if (model_evidence(a->m, n, app_attr(a, n->id), a->busy,
			   sizeof(a->busy) / sizeof(a->busy[0]), &a->nbusy, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
	}
}

static void path_of(const struct mnode *n, struct sbuf *sb)
{
	if (!n->parent)
		return;
	path_of(n->parent, sb);
	sbuf_addc(sb, '/');
	sbuf_adds(sb, n->name);
}

static const char *utc(char *buf, size_t n, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	if (ns < 0 || !gmtime_r(&s, &tm)) {
		snprintf(buf, n, "?");
		return buf;
	}
	size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + k, n - k, ".%03lldZ", (long long)(ns % 1000000000 / 1000000));
	return buf;
}

/* For a rank of a step whose ranks meet at collectives, what it did there
 * and who the straggler is (model/analysis/imbalance.h, the report's Stragglers);
 * 0 for any other phase. */
static int rank_meets(struct app *a, const struct mnode *n, struct sbuf *sb)
{
	char b1[32], b2[32];
	if (n->kind != PHASE_RANK || a->imb_state < 0)
		return 0;
	if (!a->imb_state) {
		char *err = NULL;
		a->imb_state = 1;
		if (analysis_imbalance(model_store(a->m), &a->imb, &a->nimb, &err) < 0) {
			app_message(a, 1, "%s", err);
			free(err);
			a->imb_state = -1;
			return 0;
		}
	}
	for (size_t i = 0; i < a->nimb; i++) {
		const struct imbalance *g = &a->imb[i];
		for (size_t k = 0; g->meets && !strcmp(g->kind, "ranks") && k < g->nranks; k++) {
			const struct imbalance_rank *r = &g->ranks[k];
			if (r->rank_id != n->id)
				continue;
			format_duration(b1, sizeof(b1), r->wait_ns);
			if (!k)
				sbuf_addf(sb,
					  "this rank (last at %lld of %lld collectives, waited %s);"
					  " the others wait %s in all",
					  (long long)r->last, (long long)g->collectives, b1,
					  format_duration(b2, sizeof(b2), g->wait_ns));
			else
				sbuf_addf(
				    sb,
				    "%s (last at %lld of %lld collectives); this rank: last at"
				    " %lld, waited %s",
				    g->straggler, (long long)g->last, (long long)g->collectives,
				    (long long)r->last, b1);
			return 1;
		}
	}
	return 0;
}

/* The details pane's lines before they are laid out: a label and its
 * text (a long one wraps onto rows of its own). */
struct dlines {
	const char *label[16];
	char *text[16];
	int wrap[16]; /* rows it wraps onto at most; the last ends in the cut mark */
	int n;
};

/* Rows the phase's whole name may take; any other line is cut to one. */
#define DETAILS_WRAP_NAME 32
#define DETAILS_WRAP	  1

static void dline(struct dlines *d, const char *label, const char *text)
{
	if (d->n < 16) {
		d->label[d->n] = label;
		d->wrap[d->n] = d->n ? DETAILS_WRAP : DETAILS_WRAP_NAME;
		d->text[d->n++] = xstrdup(text);
	}
}

/* Lays out d at width cols (label column included) into rows, each a
 * label (NULL under the first) and its sanitised text. */
static int dlines_layout(const struct dlines *d, int cols, const char *more, struct sbuf *rows,
			 const char **labels, int max)
{
	int nrows = 0, tw = cols - 12 > 8 ? cols - 12 : 8;
	for (int i = 0; i < d->n; i++) {
		struct sbuf clean = SBUF_INIT;
		format_sanitize(&clean, d->text[i]);
		const unsigned char *p = (const unsigned char *)clean.buf;
		size_t left = clean.len;
		for (int k = 0; nrows < max && (k == 0 || left); k++) {
			struct sbuf *r = &rows[nrows];
			labels[nrows++] = k ? NULL : d->label[i];
			int used = 0, brk_used = 0;
			int last = k + 1 == d->wrap[i] && format_width((const char *)p) > tw;
			size_t brk_len = 0, brk_left = 0;
			while (left) {
				uint32_t cp;
				int w;
				size_t n = format_next(p, left, &cp, &w);
				if (used + w > tw - (last ? format_width(more) : 0)) {
					/* wrap after the row's last blank, unless
					 * that leaves it less than half full */
					if (!last && brk_used > tw / 2) {
						p -= brk_left - left;
						left = brk_left;
						r->buf[r->len = brk_len] = '\0';
					}
					break;
				}
				sbuf_add(r, p, n);
				used += w;
				p += n;
				left -= n;
				if (cp == ' ') {
					brk_used = used;
					brk_len = r->len;
					brk_left = left;
				}
			}
			if (last && left) {
				sbuf_adds(r, more);
				left = 0;
			}
		}
		sbuf_release(&clean);
	}
	return nrows;
}

static void draw_details(struct app *a, struct grid *g, int y, int h, const struct mnode *n)
{
	char b1[64], b2[64], b3[64], b4[64];
	struct sbuf sb = SBUF_INIT;
	struct dlines d = {0};
	grid_fill(g, 0, y, g->w, '-', ROLE_DIM);
	if (!n) {
		grid_put(g, 2, y, -1, " details ", ROLE_TITLE);
		grid_put(g, 11, y + 1, -1, "nothing selected", ROLE_NORMAL);
		return;
	}
	load_detail(a, n);
	const struct mnode *root = model_root(a->m);
	sbuf_addf(&sb, "%s  kind %s", n->name, store_kind_name(n->kind));
	if (n->category)
		sbuf_addf(&sb, "  category %s", n->category);
	dline(&d, "phase", sb.buf);
	sbuf_reset(&sb);
	/* a short phase far from the start gets the digits that tell its
	 * start from its end */
	sbuf_addf(
	    &sb, "+%s .. +%s  dur %s  self %s",
	    format_instant(b1, sizeof(b1), n->start_ns - root->start_ns, n->dur_ns),
	    format_instant(b2, sizeof(b2), n->start_ns + n->dur_ns - root->start_ns, n->dur_ns),
	    format_duration(b3, sizeof(b3), n->dur_ns),
	    format_duration(b4, sizeof(b4), n->self_ns));
	if (n->device_ns)
		sbuf_addf(&sb, "  device %s", format_duration(b1, sizeof(b1), n->device_ns));
	sbuf_addf(&sb, "  at %s", utc(b2, sizeof(b2), n->start_ns));
	dline(&d, "time", sb.buf);
	sbuf_reset(&sb);
	path_of(n, &sb);
	dline(&d, "path", format_left_cut(&sb, g->w - 12, a->g->more));
	sbuf_reset(&sb);
	const struct mtrack *t = model_track(a->m, n->track_id);
	if (t) {
		format_name(&sb, t->name, 0, a->g->more);
		sbuf_addf(&sb, " (%s)", t->kind);
		if (t->host)
			sbuf_addf(&sb, "  host %s", t->host);
		if (t->rank >= 0)
			sbuf_addf(&sb, "  rank %lld", (long long)t->rank);
	} else {
		sbuf_adds(&sb, "-");
	}
	if (a->detail.source)
		sbuf_addf(&sb, "  from %s", a->detail.source);
	dline(&d, "track", sb.buf);
	sbuf_reset(&sb);
	for (size_t i = 0; i < a->detail.nedges; i++) {
		const struct medge *e = &a->detail.edges[i];
		sbuf_addf(&sb, "%s%s %s %s", i ? "; " : "", store_edge_kind_name(e->kind),
			  e->outgoing ? "->" : "<-", e->name ? e->name : "?");
	}
	if (a->detail.more_edges)
		sbuf_addf(&sb, "; and %lld more", (long long)a->detail.more_edges);
	dline(&d, "edges", a->detail.nedges ? sb.buf : "none");
	dline(&d, "attrs", a->detail.attrs ? a->detail.attrs : "none");
	sbuf_reset(&sb);
	if (rank_meets(a, n, &sb)) {
		dline(&d, "straggler", sb.buf);
	} else {
		sbuf_addf(&sb, "%lld named so here: min %s  mean %s  p95 %s  max %s",
			  (long long)a->sib_count, format_duration(b1, sizeof(b1), a->sib_min),
			  format_duration(b2, sizeof(b2), a->sib_mean),
			  format_duration(b3, sizeof(b3), a->sib_p95),
			  format_duration(b4, sizeof(b4), a->sib_max));
		dline(&d, "siblings", sb.buf);
	}
	sbuf_reset(&sb);
	/* what was measured of the phase's host and device meanwhile: the
	 * series behind its bottlenecks, then the busiest; mean share of
	 * capacity over the time a sample holds, and the peak */
	model_busy_text(a->busy, a->nbusy, &sb);
	dline(&d, "measured", a->nbusy ? sb.buf : "no sample of this host/device holds during it");
	sbuf_reset(&sb);
	/* what its work used of them, and what held it back (model/analysis/attrib.h) */
	struct sbuf b2s = SBUF_INIT;
	sbuf_init(&b2s);
	const struct attrib_row *r = app_attr(a, n->id);
	app_attr_lines(a, r, &sb, &b2s);
	dline(&d, "est. use", sb.buf);
	sbuf_reset(&sb);
	app_attr_over_time(a, n, r, &sb);
	dline(&d, "over time", sb.buf);
	dline(&d, "bound by", b2s.buf);
	sbuf_release(&b2s);
	sbuf_release(&sb);

	/* lay out, then show the rows from details_top (J/K scroll) */
	enum { MAXROWS = DETAILS_WRAP_NAME + 15 * DETAILS_WRAP };
	struct sbuf rows[MAXROWS];
	const char *labels[MAXROWS];
	for (int i = 0; i < MAXROWS; i++)
		sbuf_init(&rows[i]);
	int nrows = dlines_layout(&d, g->w, a->g->more, rows, labels, MAXROWS), room = h - 1;
	if (a->details_top > nrows - room)
		a->details_top = nrows - room;
	if (a->details_top < 0)
		a->details_top = 0;
	char title[64];
	if (nrows > room)
		snprintf(title, sizeof(title), " details %d-%d of %d (J/K) ", a->details_top + 1,
			 a->details_top + room, nrows);
	else
		snprintf(title, sizeof(title), " details ");
	grid_put(g, 2, y++, -1, title, ROLE_TITLE);
	for (int i = 0; i < room && a->details_top + i < nrows; i++) {
		int k = a->details_top + i;
		grid_put(g, 1, y + i, 10, labels[k] ? labels[k] : "", ROLE_LABEL);
		grid_put(g, 11, y + i, -1, rows[k].buf, ROLE_NORMAL);
	}
	for (int i = 0; i < MAXROWS; i++)
		sbuf_release(&rows[i]);
	for (int i = 0; i < d.n; i++)
		free(d.text[i]);
}

void tree_draw(struct app *a, struct grid *g, int y, int h)
{
	struct tree_view *v = &a->tree;
	int name_w = g->w - (W_DUR + W_SHARE + W_SELF + W_COUNT + 1 + W_SPARK) -
		     (app_attr_available(a) ? bneck_w(g) : 0);
	/* on a short terminal the pane gives up rows (it scrolls) so the
	 * list keeps LIST_MIN_H */
	int details_h = h - 1 - DETAILS_H >= LIST_MIN_H ? DETAILS_H : h - 1 - LIST_MIN_H;
	if (details_h < 4)
		details_h = 4;
	int list_h = h - 1 - (a->details ? details_h : 0);
	draw_header(a, g, y, name_w);
	if (v->filter) {
		/* after "Name" and its sort mark, within the name column */
		char buf[128];
		int x = 4 + (a->tree.sort == SORT_NAME) + 2;
		snprintf(buf, sizeof(buf), "[filter: %.100s", v->filter);
		int room = name_w - 1 - x, w = format_width(buf) + 1;
		if (w > room && room > 1) {
			grid_put(g, x, y, room - 1, buf, ROLE_FILTER);
			grid_put(g, x + room - 1, y, 1, a->g->more, ROLE_FILTER);
			grid_put(g, x + room, y, 1, "]", ROLE_FILTER);
		} else if (room > 1) {
			x += grid_put(g, x, y, room, buf, ROLE_FILTER);
			grid_put(g, x, y, 1, "]", ROLE_FILTER);
		}
	}
	a->page = list_h;
	tree_view_scroll(v, list_h);
	for (int i = 0; i < list_h && v->top + (size_t)i < v->nrows; i++)
		draw_row(a, g, y + 1 + i, name_w, v->rows[v->top + (size_t)i],
			 v->top + (size_t)i == v->sel);
	if (!v->nrows)
		grid_put(g, 2, y + 1, -1,
			 v->filter ? "no children match the filter (\\ then Enter clears it)"
				   : "no phases here",
			 ROLE_DIM);
	else if (v->nrows > (size_t)list_h) {
		char buf[48];
		snprintf(buf, sizeof(buf), " %zu/%zu ", v->sel + 1, v->nrows);
		grid_put(g, g->w - format_width(buf), y + list_h, -1, buf, ROLE_DIM);
	}
	if (a->details)
		draw_details(a, g, y + 1 + list_h, details_h, tree_view_selected(v));
}

void tree_search(struct app *a, int dir, int fresh)
{
	struct tree_view *v = &a->tree;
	char *err = NULL;
	int wrapped = 0, r;
	if (fresh || !v->nhits || !v->find_pat || strcmp(v->find_pat, a->search)) {
		if (a->show_now) {
			app_message(a, 0, "searching below %s ...",
				    v->node->parent ? v->node->name : "the top");
			a->show_now(a);
		}
		r = tree_view_find(v, a->search, &err);
	} else {
		r = tree_view_find_next(v, dir, &wrapped, &err);
	}
	if (r < 0) {
		app_error(a, r, err);
	} else if (!r) {
		app_message(a, 1, "pattern not found: %s", a->search);
	} else {
		app_message(a, 0, "%s%zu of %zu%s", wrapped ? "search wrapped: " : "", v->hit + 1,
			    v->nhits, v->hits_more ? "+" : "");
	}
}

void tree_click(struct app *a, int y)
{
	struct tree_view *v = &a->tree;
	/* the rows start under the breadcrumb and the header (tree_draw at 1) */
	int row = y - 2;
	if (row >= 0 && row < a->page && v->top + (size_t)row < v->nrows)
		v->sel = v->top + (size_t)row;
}

void tree_key(struct app *a, enum action act)
{
	struct tree_view *v = &a->tree;
	char *err = NULL;
	int page = a->page > 1 ? a->page : 1;
	int r = 0;
	switch (act) {
	case A_DOWN:
		tree_view_move(v, 1);
		break;
	case A_UP:
		tree_view_move(v, -1);
		break;
	case A_PGDN:
		tree_view_move(v, page);
		break;
	case A_PGUP:
		tree_view_move(v, -page);
		break;
	case A_HALF_DOWN:
		tree_view_move(v, page > 1 ? page / 2 : 1);
		break;
	case A_HALF_UP:
		tree_view_move(v, -(page > 1 ? page / 2 : 1));
		break;
	case A_HOME:
		tree_view_move(v, -(long)v->nrows);
		break;
	case A_END:
		tree_view_move(v, (long)v->nrows);
		break;
	case A_ENTER:
		r = tree_view_enter(v, &err);
		if (r == 0 && tree_view_selected(v))
			app_message(a, 0, "%s has no children", tree_view_selected(v)->name);
		break;
	case A_BACK:
		r = tree_view_up(v, &err);
		break;
	case A_POP:
		r = tree_view_up(v, &err);
		if (r == 0)
			a->quit = 1;
		break;
	case A_COSTLIEST:
		tree_view_costliest(v);
		break;
	case A_SORT_NAME:
		tree_view_sort(v, SORT_NAME);
		break;
	case A_SORT_DUR:
		tree_view_sort(v, SORT_DUR);
		break;
	case A_SORT_SELF:
		tree_view_sort(v, SORT_SELF);
		break;
	case A_SORT_COUNT:
		tree_view_sort(v, SORT_COUNT);
		break;
	case A_SORT_START:
		tree_view_sort(v, SORT_START);
		break;
	case A_DETAILS:
		a->details = !a->details;
		break;
	case A_DETAILS_DOWN:
	case A_DETAILS_UP:
		if (!a->details)
			app_message(a, 1, "no details pane: d shows it");
		a->details_top += act == A_DETAILS_DOWN ? 1 : -1; /* clamped when drawn */
		break;
	default:
		break;
	}
	if (r < 0) {
		app_message(a, 1, "%s", err);
		free(err);
	}
}
