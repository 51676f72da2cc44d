/*
 * The metrics screen: one row per metric series (name, device, host, min,
 * time-weighted mean, max with their unit, sample count) and a sparkline of
 * the series over the window of the tree's current node, so drilling into a
 * phase and then opening this screen shows what the resources did during
 * that phase.  The device is the series' resource (gpu0, disk:sda,
 * net:eth0, cpu0); a name that starts with it shows without it.  Names,
 * devices and hosts too wide for their column are cut so that two
 * different ones never read the same (format_cut_distinct).
 *
 * Inside a phase (a step, an operator) every figure is that phase's: min,
 * mean, max and the sample count are of the values that hold during its
 * window (model_series_stats), read once per window for all series, and
 * the Name header says over which phase; at the root they are the whole
 * trace's (model_series).
 *
 * a->mv.sel is an index into model_series' array (app.c's search sets it
 * that way); a->mv.top counts rows of the filtered table.  A sparkline is
 * scaled to its series' capacity where known (0..100%, cores, link speed),
 * else to its own min..max over the whole trace, so the same level means
 * the same value whichever node the window comes from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/format.h"
#include "model/util/nstime.h"
#include "model/util/xalloc.h"

#define GAP	  2  /* columns between two table columns */
#define HOST_MAX  16 /* widest host column */
#define DEV_MAX	  12 /* widest device column */
#define SPARK_MIN 8  /* narrower than this the Min column gives way */
#define NAME_MIN  10 /* the name column gets at least this when it can */
#define SPARK_MAX 48 /* widest sparkline */

static int passes(const struct mseries *s, const char *filter)
{
	return tree_view_match(s->name, filter) || (s->host && tree_view_match(s->host, filter));
}

/* The series that pass the filter, as indices into s; *idx is the caller's. */
static size_t visible(const struct mseries *s, size_t n, const char *filter, size_t **idx)
{
	size_t nv = 0;
	*idx = xmalloc((n ? n : 1) * sizeof(**idx));
	for (size_t i = 0; i < n; i++)
		if (passes(&s[i], filter))
			(*idx)[nv++] = i;
	return nv;
}

/* The row of the selection among the visible ones: sel's own row, else the
 * first visible series after it, else the last row.  nv > 0. */
static size_t sel_row(const size_t *idx, size_t nv, size_t sel)
{
	for (size_t p = 0; p < nv; p++)
		if (idx[p] >= sel)
			return p;
	return nv - 1;
}

/* Sets sel to row p and scrolls so that it is among rows table rows. */
static void place(struct metrics_view *mv, const size_t *idx, size_t nv, size_t p, size_t rows)
{
	if (rows < 1)
		rows = 1;
	mv->sel = idx[p];
	if (mv->top > p)
		mv->top = p;
	if (p >= mv->top + rows)
		mv->top = p - rows + 1;
	if (mv->top + rows > nv)
		mv->top = nv > rows ? nv - rows : 0;
}

static int load(struct app *a, const struct mseries **s, size_t *n)
{
	char *err = NULL;
	if (model_series(a->m, s, n, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
		return -1;
	}
	return 0;
}

void metrics_key(struct app *a, enum action act)
{
	const struct mseries *s;
	size_t n, *idx;
	if (load(a, &s, &n) < 0)
		return;
	size_t nv = visible(s, n, a->mv.filter, &idx);
	/* The table's height as app_draw last laid it out: the screen less the
	 * breadcrumb, the status line and the header. */
	size_t rows = a->h > 3 ? (size_t)a->h - 3 : 1;
	if (!nv)
		goto out;
	size_t p = sel_row(idx, nv, a->mv.sel), half = rows > 1 ? rows / 2 : 1;
	switch (act) {
	case A_DOWN:
		p += p + 1 < nv;
		break;
	case A_UP:
		p -= p > 0;
		break;
	case A_PGDN:
		p = p + rows < nv ? p + rows : nv - 1;
		a->mv.top += rows;
		break;
	case A_PGUP:
		p = p > rows ? p - rows : 0;
		a->mv.top = a->mv.top > rows ? a->mv.top - rows : 0;
		break;
	case A_HALF_DOWN:
		p = p + half < nv ? p + half : nv - 1;
		break;
	case A_HALF_UP:
		p = p > half ? p - half : 0;
		break;
	case A_HOME:
		p = 0;
		break;
	case A_END:
		p = nv - 1;
		break;
	default:
		goto out;
	}
	place(&a->mv, idx, nv, p, rows);
out:
	free(idx);
}

/* The name a series shows: without its resource's prefix ("cpu0.idle" of
 * cpu0 as "idle"), the device column says it. */
static const char *shown_name(const struct mseries *m)
{
	size_t k = m->resource ? strlen(m->resource) : 0;
	if (k && !strncmp(m->name, m->resource, k) && m->name[k] == '.' && m->name[k + 1])
		return m->name + k + 1;
	return m->name;
}

static const char *device(const struct mseries *m)
{
	return m->resource && *m->resource ? m->resource : "-";
}

/* Draws text in columns [x, x + w), cut with the "more" glyph when it does
 * not fit, right-aligned when right. */
static void put_col(struct app *a, struct grid *g, int x, int y, int w, const char *text,
		    enum role role, int right)
{
	if (w <= 0)
		return;
	int tw = format_width(text);
	if (tw <= w) {
		grid_put(g, right ? x + w - tw : x, y, w, text, role);
		return;
	}
	int used = grid_put(g, x, y, w - 1, text, role);
	grid_put(g, x + used, y, 1, a->g->more, role);
}

/* The series' figures over the current node's window, as whole-trace
 * ones are at the root: NULL there, else an array parallel to s (read on
 * the first draw in a window, kept while it stays). */
static const struct mwindow *figures(struct app *a, const struct mseries *s, size_t n)
{
	const struct mnode *node = a->tree.node;
	struct metrics_view *mv = &a->mv;
	if (!node || node == model_root(a->m) || node->dur_ns <= 0)
		return NULL;
	int64_t t0 = node->start_ns, t1 = ns_end(node->start_ns, node->dur_ns);
	if (mv->win && mv->nwin == n && mv->win_t0 == t0 && mv->win_t1 == t1)
		return mv->win;
	free(mv->win);
	mv->win = xcalloc(n ? n : 1, sizeof(*mv->win));
	mv->nwin = n;
	mv->win_t0 = t0;
	mv->win_t1 = t1;
	for (size_t i = 0; i < n; i++) {
		char *err = NULL;
		if (model_series_stats(a->m, &s[i], t0, t1, &mv->win[i], &err) < 0) {
			app_message(a, 1, "%s", err);
			free(err);
		}
	}
	return mv->win;
}

/* Series s[i]'s figures: over the window when win, else the whole trace's. */
static struct mwindow figure(const struct mseries *s, size_t i, const struct mwindow *win)
{
	if (win)
		return win[i];
	return (struct mwindow){s[i].min, s[i].mean, s[i].max, s[i].samples, s[i].covered_ns};
}

static int maxi(int a, int b)
{
	return a > b ? a : b;
}

/* Column widths and where each column starts; the visible series' name,
 * device and host as cut to their columns. */
struct layout {
	int name, dev, host, min, mean, max, samples, spark;
	int x_dev, x_host, x_min, x_mean, x_max, x_samples, x_spark;
	char **names, **devs, **hosts; /* by visible row */
	size_t n;
};

static void free_cuts(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void layout_release(struct layout *l)
{
	free_cuts(l->names, l->n);
	free_cuts(l->devs, l->n);
	free_cuts(l->hosts, l->n);
}

/* One column's texts for the visible rows, cut to cols without twins. */
static char **cut_column(const struct mseries *s, const size_t *idx, size_t nv, int cols,
			 const char *(*get)(const struct mseries *), const char *more)
{
	const char **texts = xcalloc(nv ? nv : 1, sizeof(*texts));
	for (size_t i = 0; i < nv; i++)
		texts[i] = get(&s[idx[i]]);
	char **out = format_cut_distinct(texts, nv, cols, more);
	free(texts);
	return out;
}

static const char *host_of(const struct mseries *m)
{
	return m->host ? m->host : "-";
}

static void lay_out(struct app *a, struct layout *l, const struct mseries *s, const size_t *idx,
		    size_t nv, const struct mwindow *win, int width)
{
	char buf[64];
	int longest = 4;
	*l = (struct layout){.dev = 6, .host = 4, .min = 3, .mean = 4, .max = 3, .samples = 7};
	for (size_t i = 0; i < nv; i++) {
		const struct mseries *m = &s[idx[i]];
		struct mwindow f = figure(s, idx[i], win);
		longest = maxi(longest, format_width(shown_name(m)));
		l->dev = maxi(l->dev, format_width(device(m)));
		l->host = maxi(l->host, format_width(host_of(m)));
		l->min = maxi(l->min, format_width(format_value(buf, sizeof(buf), f.min, m->unit)));
		l->mean =
		    maxi(l->mean, format_width(format_value(buf, sizeof(buf), f.mean, m->unit)));
		l->max = maxi(l->max, format_width(format_value(buf, sizeof(buf), f.max, m->unit)));
		l->samples =
		    maxi(l->samples, snprintf(buf, sizeof(buf), "%lld", (long long)f.samples));
	}
	if (l->host > HOST_MAX)
		l->host = HOST_MAX;
	if (l->dev > DEV_MAX)
		l->dev = DEV_MAX;
	int rest = width - (l->dev + l->host + l->min + l->mean + l->max + l->samples) - 7 * GAP;
	/* on a narrow screen the sparkline matters more than the minimum */
	if (rest - NAME_MIN < SPARK_MIN) {
		rest += l->min + GAP;
		l->min = 0;
	}
	if (rest < 0)
		rest = 0;
	/* The sparkline takes half of what is left, the name the slack; a name
	 * column wider than the longest name gives its surplus back. */
	l->spark = rest / 2 > SPARK_MAX ? SPARK_MAX : rest / 2;
	if (rest - l->spark < NAME_MIN)
		l->spark = rest > NAME_MIN ? rest - NAME_MIN : 0;
	if (l->spark < 4)
		l->spark = 0;
	l->name = rest - l->spark;
	if (l->spark && l->name > longest && l->spark < SPARK_MAX) {
		int give = l->name - longest;
		if (l->spark + give > SPARK_MAX)
			give = SPARK_MAX - l->spark;
		l->spark += give;
		l->name -= give;
	}
	l->x_dev = l->name + GAP;
	l->x_host = l->x_dev + l->dev + GAP;
	l->x_min = l->x_host + l->host + GAP;
	l->x_mean = l->x_min + (l->min ? l->min + GAP : 0);
	l->x_max = l->x_mean + l->mean + GAP;
	l->x_samples = l->x_max + l->max + GAP;
	l->x_spark = l->x_samples + l->samples + GAP;
	l->n = nv;
	l->names = cut_column(s, idx, nv, l->name, shown_name, a->g->more);
	l->devs = cut_column(s, idx, nv, l->dev, device, a->g->more);
	l->hosts = cut_column(s, idx, nv, l->host, host_of, a->g->more);
}

/* The sparkline's window: the current node's, or every sample's when the
 * node has none (a trace.db with metrics but no phases). */
static void window(struct app *a, const struct mseries *s, size_t n, int64_t *t0, int64_t *t1)
{
	const struct mnode *node = a->tree.node;
	if (node && node->dur_ns > 0) {
		*t0 = node->start_ns;
		*t1 = ns_end(node->start_ns, node->dur_ns);
		return;
	}
	*t0 = INT64_MAX;
	*t1 = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (!s[i].samples)
			continue;
		if (s[i].t0 < *t0)
			*t0 = s[i].t0;
		if (s[i].t1 >= *t1)
			*t1 = s[i].t1 < INT64_MAX ? s[i].t1 + 1 : INT64_MAX;
	}
	if (*t0 > *t1)
		*t0 = *t1 = 0;
}

/* The sparkline column's header: over which node, as long as fits. */
static char *spark_title(struct app *a, int w)
{
	const struct mnode *node = a->tree.node;
	if (node && node != model_root(a->m)) {
		char *t = xasprintf("Sparkline (over %s)", node->name);
		if (format_width(t) <= w)
			return t;
		free(t);
		return xasprintf("Spark (over %s)", node->name);
	}
	static const char *const whole[] = {"Sparkline (whole trace; 0..capacity, else Min..Max)",
					    "Sparkline (over the whole trace)",
					    "Sparkline (whole trace)", "Spark (whole trace)",
					    "Spark (trace)"};
	size_t i = 0;
	while (i < 4 && (int)strlen(whole[i]) > w)
		i++;
	return xstrdup(whole[i]);
}

/* The name column's header: over which phase the figures are, when they
 * are a phase's, the longest form that fits in w ("Over NAME" cut to w when
 * none does, put_col marks the cut). */
static char *name_title(struct app *a, int windowed, int w)
{
	static const char *const forms[] = {"Name (figures over %s)", "Name (over %s)", "Over %s"};
	if (!windowed)
		return xstrdup("Name");
	struct sbuf name = SBUF_INIT;
	format_name(&name, a->tree.node->name, 1, a->g->more);
	char *t = NULL;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		free(t);
		t = xasprintf(forms[i], name.buf);
		if (format_width(t) <= w)
			break;
	}
	sbuf_release(&name);
	return t;
}

static void centred(struct grid *g, int y, const char *msg, enum role role)
{
	int w = format_width(msg);
	grid_put(g, w < g->w ? (g->w - w) / 2 : 0, y, -1, msg, role);
}

/* Row p of the visible series, m. */
static void draw_row(struct app *a, struct grid *g, int y, const struct layout *l, size_t p,
		     const struct mseries *m, const struct mwindow *f, int selected, int64_t t0,
		     int64_t t1, double *buckets)
{
	char buf[64];
	enum role role = selected ? ROLE_SELECTED : ROLE_NORMAL;
	if (selected)
		grid_fill(g, 0, y, g->w, ' ', ROLE_SELECTED);
	put_col(a, g, 0, y, l->name, l->names[p], role, 0);
	put_col(a, g, l->x_dev, y, l->dev, l->devs[p], role, 0);
	put_col(a, g, l->x_host, y, l->host, l->hosts[p], role, 0);
	put_col(a, g, l->x_min, y, l->min, format_value(buf, sizeof(buf), f->min, m->unit), role,
		1);
	put_col(a, g, l->x_mean, y, l->mean, format_value(buf, sizeof(buf), f->mean, m->unit), role,
		1);
	put_col(a, g, l->x_max, y, l->max, format_value(buf, sizeof(buf), f->max, m->unit), role,
		1);
	snprintf(buf, sizeof(buf), "%lld", (long long)f->samples);
	put_col(a, g, l->x_samples, y, l->samples, buf, role, 1);
	if (!l->spark || !m->samples)
		return;
	char *err = NULL;
	if (model_series_buckets(a->m, m, t0, t1, buckets, l->spark, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
		return;
	}
	double lo, hi;
	mseries_scale(m, &lo, &hi);
	for (int k = 0; k < l->spark; k++)
		grid_put(g, l->x_spark + k, y, 1, glyphs_spark(a->g, buckets[k], lo, hi),
			 selected ? ROLE_SELECTED : ROLE_SPARK);
}

void metrics_draw(struct app *a, struct grid *g, int y, int h)
{
	const struct mseries *s;
	size_t n, *idx = NULL;
	double *buckets = NULL;
	if (h <= 0 || load(a, &s, &n) < 0)
		return;
	if (!n) {
		centred(g, y + h / 2,
			"no metric series in this trace.db: counter tracks of traces show here",
			ROLE_DIM);
		return;
	}
	size_t nv = visible(s, n, a->mv.filter, &idx);
	const struct mwindow *win = figures(a, s, n);
	struct layout l;
	lay_out(a, &l, s, idx, nv, win, g->w);

	int64_t t0, t1;
	window(a, s, n, &t0, &t1);
	char *over = spark_title(a, l.spark);
	grid_fill(g, 0, y, g->w, ' ', ROLE_HEADER);
	char *name = name_title(a, win != NULL, l.name);
	put_col(a, g, 0, y, l.name, name, ROLE_HEADER, 0);
	free(name);
	put_col(a, g, l.x_dev, y, l.dev, "Device", ROLE_HEADER, 0);
	put_col(a, g, l.x_host, y, l.host, "Host", ROLE_HEADER, 0);
	put_col(a, g, l.x_min, y, l.min, "Min", ROLE_HEADER, 1);
	put_col(a, g, l.x_mean, y, l.mean, "Mean", ROLE_HEADER, 1);
	put_col(a, g, l.x_max, y, l.max, "Max", ROLE_HEADER, 1);
	put_col(a, g, l.x_samples, y, l.samples, "Samples", ROLE_HEADER, 1);
	put_col(a, g, l.x_spark, y, l.spark, over, ROLE_HEADER, 0);
	free(over);

	size_t rows = h > 1 ? (size_t)h - 1 : 0;
	if (!nv) {
		char *msg = xasprintf("no series match the filter '%s'", a->mv.filter);
		if (h > 1)
			centred(g, y + 1 + (h - 1) / 2, msg, ROLE_DIM);
		free(msg);
		goto out;
	}
	size_t sel = sel_row(idx, nv, a->mv.sel);
	place(&a->mv, idx, nv, sel, rows);
	buckets = xmalloc((size_t)(l.spark ? l.spark : 1) * sizeof(*buckets));
	for (size_t r = 0; r < rows && a->mv.top + r < nv; r++) {
		size_t p = a->mv.top + r;
		struct mwindow f = figure(s, idx[p], win);
		draw_row(a, g, y + 1 + (int)r, &l, p, &s[idx[p]], &f, p == sel, t0, t1, buckets);
	}
out:
	layout_release(&l);
	free(buckets);
	free(idx);
}

int metrics_search(struct app *a, const char *pat, int dir, int *wrapped)
{
	const struct mseries *s;
	size_t n;
	char *err = NULL;
	*wrapped = 0;
	if (model_series(a->m, &s, &n, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
		return 0;
	}
	for (size_t step = 1; step <= n; step++) {
		size_t j = dir > 0 ? (a->mv.sel + step) % n : (a->mv.sel + n - step % n) % n;
		if (passes(&s[j], a->mv.filter) && passes(&s[j], pat)) {
			*wrapped = dir > 0 ? j <= a->mv.sel : j >= a->mv.sel;
			a->mv.sel = j;
			return 1;
		}
	}
	return 0;
}
