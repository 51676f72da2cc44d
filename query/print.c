/*
 * Query results as a table, CSV or JSON (see print.h).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/util/cxxname.h"
#include "model/util/text.h"
#include "query/print.h"
#include "model/util/xalloc.h"

int query_format_parse(const char *s, enum query_format *fmt)
{
	static const char *const names[] = {"table", "csv", "json"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, names[i])) {
			*fmt = (enum query_format)i;
			return 0;
		}
	return -1;
}

static void plain_sanitize(struct sbuf *out, const char *s)
{
	for (; *s; s++)
		sbuf_addc(out, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

static int plain_width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void plain_fit(struct sbuf *out, const char *s, int cols)
{
	for (; *s; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80 && cols-- <= 0)
			break;
		sbuf_addc(out, *s);
	}
}

/* The caller's hooks, the plain ones where it gives none. */
static struct query_print_hooks resolve(const struct query_print_hooks *hooks)
{
	struct query_print_hooks h = {0};
	if (hooks)
		h = *hooks;
	if (!h.sanitize)
		h.sanitize = plain_sanitize;
	if (!h.width)
		h.width = plain_width;
	if (!h.fit)
		h.fit = plain_fit;
	if (!h.more)
		h.more = "...";
	return h;
}

/* Appends v in decimal: what "%lld" writes, without printf's machinery
 * (a 46 k-row CSV spent a tenth of its time in vfprintf). */
static void add_int(struct sbuf *out, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	sbuf_add(out, p, (size_t)(buf + sizeof(buf) - p));
}

/* A value as raw text (CSV): integers, numbers with 17 significant digits
 * trimmed of a useless tail, text as stored. */
static void raw_text(struct sbuf *out, const struct query_value *v)
{
	switch (v->type) {
	case QP_NULL:
		break;
	case QP_INT:
		add_int(out, v->i);
		break;
	case QP_REAL:
		sbuf_addf(out, "%.15g", v->r);
		break;
	case QP_TEXT:
		sbuf_adds(out, v->s);
		break;
	}
}

/* A time's integer nanoseconds (a real one rounded). */
static int64_t time_ns(const struct query_value *v)
{
	return v->type == QP_INT ? v->i : (int64_t)llround(v->r);
}

/* The decimals of a second (0, 3, 6 or 9) that show the time ns exactly. */
static int clock_decimals(int64_t ns)
{
	return ns % 1000 ? 9 : ns % 1000000 ? 6 : ns % 1000000000 ? 3 : 0;
}

/* ns since the epoch as UTC "2026-11-22 08:15:12.992518", decimals of a
 * second after the point. */
static void clock_text(struct sbuf *out, int64_t ns, int decimals)
{
	int64_t s = ns / 1000000000, frac = ns % 1000000000;
	if (frac < 0) {
		s--;
		frac += 1000000000;
	}
	time_t t = (time_t)s;
	struct tm tm;
	char buf[64];
	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm)) {
		add_int(out, ns);
		return;
	}
	sbuf_adds(out, buf);
	if (decimals) {
		for (int k = decimals; k < 9; k++)
			frac /= 10;
		sbuf_addf(out, ".%0*lld", decimals, (long long)frac);
	}
}

/* A number of a column with a unit (a duration, bytes, a rate, a
 * ratio, a metric's value in unit, its row's) as the explorer shows it
 * into buf; NULL for other columns, for values out of range and for a
 * metric's value without a unit column. */
static const char *unit_text(char *buf, size_t n, const struct query_value *v,
			     enum query_coltype type, const char *unit)
{
	double d = v->type == QP_INT ? (double)v->i : v->r;
	if (type == QC_MVAL)
		return unit ? text_metric(buf, n, d, unit) : NULL;
	if (type == QC_RATIO)
		return text_ratio(buf, n, d);
	if (type == QC_PCT) {
		snprintf(buf, n, "%.2f", d);
		return buf;
	}
	if (type == QC_RATE && fabs(d) < 9e9) /* bytes per ns: per s, 1e9 times as many */
		return text_rate(buf, n, d * 1e9);
	if (type != QC_DUR && type != QC_DELTA && type != QC_BYTES)
		return NULL;
	if (v->type == QP_REAL && !(fabs(d) < 9e18))
		return NULL;
	int64_t i = v->type == QP_INT ? v->i : llround(d);
	return type == QC_BYTES	  ? text_bytes(buf, n, i)
	       : type == QC_DELTA ? text_signed_duration(buf, n, i)
				  : text_duration(buf, n, i);
}

static int has_unit(enum query_coltype t)
{
	return t == QC_DUR || t == QC_TIME || t >= QC_BYTES;
}

/* For each column of r that holds a metric's value (QC_MVAL), the column
 * that holds its unit: "X.unit" for "X.mean" (`with X`), else "unit"; -1
 * for the others and where there is none.  The caller frees the array. */
static int *unit_columns(const struct query_result *r)
{
	int *u = xcalloc(r->ncols ? r->ncols : 1, sizeof(int));
	for (size_t c = 0; c < r->ncols; c++) {
		const char *name = r->cols[c].name, *dot = strrchr(name, '.');
		int len = dot ? (int)(dot - name) : 0;
		u[c] = -1;
		for (size_t k = 0; r->cols[c].type == QC_MVAL && k < r->ncols; k++) {
			const char *n = r->cols[k].name;
			if (r->cols[k].type == QC_TEXT &&
			    (dot ? !strncmp(n, name, (size_t)len) && !strcmp(n + len, ".unit")
				 : !strcmp(n, "unit")))
				u[c] = (int)k;
		}
	}
	return u;
}

/* The unit of cell (row, c) of r when it is a metric's value: the text in
 * its unit column (ucol from unit_columns), else NULL. */
static const char *cell_unit(const struct query_result *r, size_t row, int ucol)
{
	if (ucol < 0)
		return NULL;
	const struct query_value *u = query_cell(r, row, (size_t)ucol);
	return u->type == QP_TEXT ? u->s : NULL;
}

/* A value for the table; decimals: a clock time's (see clock_decimals);
 * unit: a metric value's (cell_unit), trace text, sanitised here. */
static void cell_text(struct sbuf *out, const struct query_value *v, enum query_coltype type,
		      const char *unit, const struct query_print_hooks *h, int decimals)
{
	char buf[128];
	if (v->type == QP_INT || v->type == QP_REAL) {
		if (h->raw && has_unit(type)) {
			raw_text(out, v);
			return;
		}
		if (type == QC_TIME && h->clock && (v->type == QP_INT || fabs(v->r) < 9e18)) {
			clock_text(out, time_ns(v), decimals);
			return;
		}
		if (unit_text(buf, sizeof(buf), v, type, unit)) {
			if (unit)
				h->sanitize(out, buf);
			else
				sbuf_adds(out, buf);
			return;
		}
	}
	switch (v->type) {
	case QP_NULL:
		sbuf_addc(out, '-');
		return;
	case QP_TEXT:
		h->sanitize(out, v->s);
		return;
	case QP_INT:
		add_int(out, v->i);
		return;
	case QP_REAL:
		sbuf_addf(out, "%.6g", v->r);
		return;
	}
}

/* With h->short_names, the shown text of each row's name (NULL for a row
 * whose name is no text) and the column's index in *col; NULL when the
 * hooks ask for none or r has no name column (query_name_col). */
long query_name_col(const struct query_result *r)
{
	static const char *const names[] = {"name", "phase"};
	for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++)
		for (size_t c = 0; c < r->ncols; c++)
			if (!strcmp(r->cols[c].name, names[k]) &&
			    (r->cols[c].type == QC_TEXT || r->cols[c].type == QC_ANY))
				return (long)c;
	return -1;
}

static char **short_names(const struct query_result *r, const struct query_print_hooks *h,
			  size_t *col)
{
	long nc = query_name_col(r);
	if (!h->short_names || nc < 0)
		return NULL;
	size_t c = (size_t)nc;
	const char **texts = xcalloc(r->nrows ? r->nrows : 1, sizeof(*texts));
	for (size_t i = 0; i < r->nrows; i++) {
		const struct query_value *v = query_cell(r, i, c);
		texts[i] = v->type == QP_TEXT ? v->s : "";
	}
	char **out = cxxname_distinct(texts, r->nrows, h->more);
	for (size_t i = 0; i < r->nrows; i++)
		if (query_cell(r, i, c)->type != QP_TEXT) {
			free(out[i]);
			out[i] = NULL;
		}
	free(texts);
	*col = c;
	return out;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

static int right_aligned(enum query_coltype t)
{
	return t != QC_TEXT && t != QC_ANY;
}

/* Each column's alignment (right: numbers; the sql escape's columns unless
 * they hold text) and, for a clock column, the decimals of a second its
 * most precise time needs. */
static void table_columns(const struct query_result *r, const struct query_print_hooks *h,
			  int *right, int *decimals)
{
	for (size_t c = 0; c < r->ncols; c++) {
		right[c] = right_aligned(r->cols[c].type) || r->cols[c].type == QC_ANY;
		decimals[c] = 0;
		for (size_t i = 0; i < r->nrows; i++) {
			const struct query_value *v = query_cell(r, i, c);
			if (r->cols[c].type == QC_ANY && v->type == QP_TEXT)
				right[c] = 0;
			if (h->clock && r->cols[c].type == QC_TIME &&
			    (v->type == QP_INT || v->type == QP_REAL) &&
			    clock_decimals(time_ns(v)) > decimals[c])
				decimals[c] = clock_decimals(time_ns(v));
		}
	}
}

void query_table_build(struct query_table *t, const struct query_result *r,
		       const struct query_print_hooks *hooks)
{
	struct query_print_hooks h = resolve(hooks);
	size_t nc = r->ncols, nr = r->nrows;
	t->nrows = nr;
	t->ncols = nc;
	t->cells = xcalloc((nr + 1) * (nc ? nc : 1), sizeof(char *));
	t->width = xcalloc(nc ? nc : 1, sizeof(int));
	t->right = xcalloc(nc ? nc : 1, sizeof(int));
	int *decimals = xcalloc(nc ? nc : 1, sizeof(int));
	int *ucol = unit_columns(r);
	table_columns(r, &h, t->right, decimals);
	struct sbuf sb;
	sbuf_init(&sb);
	for (size_t c = 0; c < nc; c++) {
		sbuf_reset(&sb);
		h.sanitize(&sb, r->cols[c].name);
		t->cells[c] = xstrdup(sb.buf);
	}
	size_t name_col = 0;
	char **names = short_names(r, &h, &name_col);
	for (size_t i = 0; i < nr; i++)
		for (size_t c = 0; c < nc; c++) {
			struct query_value v = *query_cell(r, i, c);
			if (names && c == name_col && names[i])
				v.s = names[i];
			sbuf_reset(&sb);
			cell_text(&sb, &v, r->cols[c].type, cell_unit(r, i, ucol[c]), &h,
				  decimals[c]);
			t->cells[(i + 1) * nc + c] = xstrdup(sb.buf);
		}
	free_names(names, nr);
	for (size_t i = 0; i <= nr; i++)
		for (size_t c = 0; c < nc; c++) {
			int w = h.width(t->cells[i * nc + c]);
			if (w > t->width[c])
				t->width[c] = w;
		}
	free(decimals);
	free(ucol);
	sbuf_release(&sb);
}

void query_table_release(struct query_table *t)
{
	for (size_t i = 0; t->cells && i < (t->nrows + 1) * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->width);
	free(t->right);
	memset(t, 0, sizeof(*t));
}

/* The narrowest a cut column gets: a few characters and the cut mark; the
 * name column (query_name_col) keeps more, up to a third of the width, so
 * that names stay readable and apart, and columns past the width are left
 * out instead. */
#define FIT_MIN	     8
#define FIT_NAME_MIN 40

/* The narrowest text column c may be cut to in a table at most width
 * columns wide whose name column is name_col (-1: none). */
static int fit_floor(const struct query_table *t, size_t c, long name_col, int width)
{
	int least = FIT_MIN;
	if ((long)c == name_col)
		least = width / 3 < FIT_NAME_MIN ? width / 3 : FIT_NAME_MIN;
	if (least < FIT_MIN)
		least = FIT_MIN;
	return t->width[c] < least ? t->width[c] : least;
}

/* Text columns' widths under a cap level L (each at most L, at least its
 * floor). */
static long capped(const struct query_table *t, size_t n, int level, long name_col, int width)
{
	long sum = 0;
	for (size_t c = 0; c < n; c++)
		if (!t->right[c]) {
			int w = t->width[c] < level ? t->width[c] : level;
			int least = fit_floor(t, c, name_col, width);
			sum += w > least ? w : least;
		}
	return sum;
}

/* The columns shown in a table at most width columns wide (0: all): from
 * the left, as many as fit with their text cut to its floor, at least one,
 * as htop leaves out the columns past the screen. */
static size_t fit_columns(const struct query_table *t, int width, long name_col)
{
	long used = 0;
	size_t n = 0;
	for (; width > 0 && n < t->ncols; n++) {
		long w = t->right[n] ? t->width[n] : fit_floor(t, n, name_col, width);
		used += w + (n ? 2 : 0);
		if (n && used > width)
			break;
	}
	return width > 0 ? n : t->ncols;
}

/* Each of the first n columns' width in a table at most width columns wide
 * (0: as wide as it is): numbers keep theirs, the widest text columns give
 * up columns, down to their floor each, the highest level that fits, the
 * columns left over to the leftmost cut ones. */
static void fit_widths(const struct query_table *t, size_t n, int width, int *cap, long name_col)
{
	long total = 2 * (long)(n ? n - 1 : 0), budget = width, widest = 0;
	for (size_t c = 0; c < t->ncols; c++)
		cap[c] = t->width[c];
	for (size_t c = 0; c < n; c++) {
		total += t->width[c];
		if (t->right[c])
			budget -= t->width[c];
		else if (t->width[c] > widest)
			widest = t->width[c];
	}
	budget -= 2 * (long)(n ? n - 1 : 0);
	if (width <= 0 || total <= width || widest <= FIT_MIN)
		return;
	int lo = FIT_MIN, hi = (int)widest; /* capped(lo) fits unless nothing does */
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (capped(t, n, mid, name_col, width) <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	long left = budget - capped(t, n, lo, name_col, width);
	for (size_t c = 0; c < n; c++)
		if (!t->right[c] && t->width[c] > lo) {
			int least = fit_floor(t, c, name_col, width);
			cap[c] = (lo > least ? lo : least) + (left > 0 ? (left--, 1) : 0);
		}
}

/* ---- writing text of any length ----
 *
 * The printers write a value through a buffer of at most PIECE bytes at a
 * time, never a copy of the whole value or of the whole table: a value of
 * hundreds of MB (the sql escape's zeroblob, hex) costs no more memory to
 * print than a short one.  Pieces are cut before a byte that starts a
 * character, and the sanitisers and escapes map characters one by one, so
 * the pieces read as the whole would. */
#define PIECE 65536

struct pieces {
	const char *s; /* what is left */
	char buf[PIECE + 1];
};

/* The next piece of what is left, NUL-terminated; NULL after the last. */
static const char *piece_next(struct pieces *pc)
{
	const char *s = pc->s;
	if (!s || !*s)
		return NULL;
	size_t n = strnlen(s, PIECE + 1);
	if (n <= PIECE) {
		pc->s = s + n;
		return s;
	}
	n = PIECE;
	for (int back = 0; back < 3 && ((unsigned char)s[n] & 0xc0) == 0x80; back++)
		n--;
	memcpy(pc->buf, s, n);
	pc->buf[n] = '\0';
	pc->s = s + n;
	return pc->buf;
}

/* Scratch for writing one result. */
struct out {
	FILE *f;
	const struct query_print_hooks *h;
	struct pieces pc;
	struct sbuf tmp, cut;
	char **names; /* short_names' (NULL: none), of column name_col */
	size_t name_col;
	int *ucol; /* each column's unit column (unit_columns), or NULL */
};

/* One table cell: text to sanitise (raw), or display text already. */
struct cell {
	const char *s;
	int raw;
};

/* Cell (row, c) of r, row -1 the header; non-text values are formatted
 * into o->tmp, which the cell then points into. */
static struct cell cell_of(struct out *o, const struct query_result *r, long row, size_t c,
			   const int *decimals)
{
	if (row < 0)
		return (struct cell){r->cols[c].name, 1};
	const struct query_value *v = query_cell(r, (size_t)row, c);
	if (v->type == QP_TEXT && o->names && c == o->name_col)
		return (struct cell){o->names[row], 1};
	if (v->type == QP_TEXT)
		return (struct cell){v->s, 1};
	sbuf_reset(&o->tmp);
	cell_text(&o->tmp, v, r->cols[c].type,
		  o->ucol ? cell_unit(r, (size_t)row, o->ucol[c]) : NULL, o->h, decimals[c]);
	return (struct cell){o->tmp.buf, 0};
}

/* Display columns of a cell (the sanitiser's width is that of its output). */
static int cell_width(struct out *o, struct cell k)
{
	if (!k.raw)
		return o->h->width(k.s);
	long w = 0;
	const char *p;
	o->pc.s = k.s;
	while ((p = piece_next(&o->pc)) && w < INT32_MAX)
		w += o->h->width(p);
	return w < INT32_MAX ? (int)w : INT32_MAX;
}

/* Writes a cell's display text, at most cols columns of it (cols < 0: all);
 * returns the columns written. */
static int cell_put(struct out *o, struct cell k, int cols)
{
	int used = 0;
	const char *p;
	o->pc.s = k.s;
	while ((cols < 0 || used < cols) && (p = piece_next(&o->pc))) {
		if (k.raw) {
			sbuf_reset(&o->tmp);
			o->h->sanitize(&o->tmp, p);
			p = o->tmp.buf;
		}
		if (cols >= 0) {
			sbuf_reset(&o->cut);
			o->h->fit(&o->cut, p, cols - used);
			p = o->cut.buf;
		}
		used += o->h->width(p);
		fputs(p, o->f);
		if (!k.raw)
			break; /* display text is one piece */
	}
	return used;
}

static struct out *out_new(FILE *f, const struct query_print_hooks *h)
{
	struct out *o = xcalloc(1, sizeof(*o));
	o->f = f;
	o->h = h;
	sbuf_init(&o->tmp);
	sbuf_init(&o->cut);
	return o;
}

static void out_free(struct out *o)
{
	free(o->ucol);
	sbuf_release(&o->tmp);
	sbuf_release(&o->cut);
	free(o);
}

static void spaces(FILE *f, int n)
{
	for (; n > 0; n--)
		putc(' ', f);
}

/* A cell wider than this, written to a file or a pipe, is written whole
 * without widening its column: each column is as wide as its widest cell
 * up to this, so that one long name does not pad every row (the output
 * stays within a few times the data). */
#define PAD_MAX 256

static int print_table(FILE *f, const struct query_result *r, const struct query_print_hooks *h)
{
	size_t nc = r->ncols;
	struct out *o = out_new(f, h);
	o->ucol = unit_columns(r);
	struct query_table t = {.nrows = r->nrows, .ncols = nc};
	t.width = xcalloc(nc ? nc : 1, sizeof(int));
	t.right = xcalloc(nc ? nc : 1, sizeof(int));
	int *padded = xcalloc(nc ? nc : 1, sizeof(int)); /* widest up to PAD_MAX */
	int *decimals = xcalloc(nc ? nc : 1, sizeof(int));
	int *cap = xcalloc(nc ? nc : 1, sizeof(int));
	int *widths = xcalloc((r->nrows + 1) * nc + 1, sizeof(int)); /* each cell's */
	table_columns(r, h, t.right, decimals);
	o->names = short_names(r, h, &o->name_col);
	for (long i = -1; i < (long)r->nrows; i++)
		for (size_t c = 0; c < nc; c++) {
			int w = cell_width(o, cell_of(o, r, i, c, decimals));
			widths[(size_t)(i + 1) * nc + c] = w;
			if (w > t.width[c])
				t.width[c] = w;
			if (w <= PAD_MAX && w > padded[c])
				padded[c] = w;
		}
	int cut = h->cols > 0, more = h->width(h->more);
	long name_col = o->names ? (long)o->name_col : -1;
	size_t shown = cut ? fit_columns(&t, h->cols, name_col) : nc;
	if (cut)
		fit_widths(&t, shown, h->cols, cap, name_col);
	else
		memcpy(cap, padded, (nc ? nc : 1) * sizeof(int));
	/* a name column too wide is cut so that its names stay apart */
	char **cut_names = NULL;
	if (cut && o->names && h->cut_distinct && t.width[o->name_col] > cap[o->name_col]) {
		const char **texts = xcalloc(r->nrows ? r->nrows : 1, sizeof(*texts));
		for (size_t i = 0; i < r->nrows; i++)
			texts[i] = o->names[i] ? o->names[i] : "";
		cut_names = h->cut_distinct(texts, r->nrows, cap[o->name_col], h->more);
		free(texts);
	}
	for (long i = -1; i < (long)r->nrows; i++) {
		for (size_t c = 0; c < shown; c++) {
			struct cell k = cell_of(o, r, i, c, decimals);
			int w = widths[(size_t)(i + 1) * nc + c], pad = cap[c] - w;
			if (cut_names && i >= 0 && c == o->name_col && o->names[i]) {
				k = (struct cell){cut_names[i], 0};
				w = h->width(k.s);
				pad = cap[c] - w;
			}
			if (c)
				fputs("  ", f);
			if (cut && w > cap[c]) {
				pad = cap[c] - more - cell_put(o, k, cap[c] - more);
				fputs(h->more, f);
			} else {
				if (t.right[c])
					spaces(f, pad);
				cell_put(o, k, -1);
			}
			if (!t.right[c] && c + 1 < shown)
				spaces(f, pad);
		}
		putc('\n', f);
	}
	fprintf(f, "(%zu row%s%s)\n", r->nrows, r->nrows == 1 ? "" : "s",
		r->truncated ? ", truncated" : "");
	if (shown < nc)
		fprintf(f, "(%zu column%s past the width left out: --wide shows %s)\n", nc - shown,
			nc - shown == 1 ? "" : "s", nc - shown == 1 ? "it" : "them");
	free_names(cut_names, r->nrows);
	free(cap);
	free(widths);
	free(decimals);
	free(padded);
	free(t.width);
	free(t.right);
	free_names(o->names, r->nrows);
	out_free(o);
	return 0;
}

/* A CSV field of s (RFC 4180), through the sanitiser first on a terminal
 * (tty); the sanitiser's escapes add no comma or quote, and leave no CR or
 * LF to quote. */
static void csv_put(struct out *o, const char *s, int tty)
{
	int quote = strpbrk(s, tty ? ",\"" : ",\"\r\n") != NULL;
	const char *p;
	if (quote)
		putc('"', o->f);
	o->pc.s = s;
	while ((p = piece_next(&o->pc))) {
		if (tty) {
			sbuf_reset(&o->tmp);
			o->h->sanitize(&o->tmp, p);
			p = o->tmp.buf;
		}
		while (quote && *p) {
			size_t k = strcspn(p, "\"");
			fwrite(p, 1, k, o->f);
			p += k;
			if (*p) {
				fputs("\"\"", o->f);
				p++;
			}
		}
		fputs(p, o->f);
	}
	if (quote)
		putc('"', o->f);
}

static int print_csv(FILE *f, const struct query_result *r, const struct query_print_hooks *h,
		     int tty)
{
	struct out *o = out_new(f, h);
	struct sbuf num = SBUF_INIT;
	sbuf_init(&num);
	for (size_t c = 0; c < r->ncols; c++) {
		if (c)
			putc(',', f);
		csv_put(o, r->cols[c].name, tty);
	}
	fputs("\r\n", f);
	for (size_t i = 0; i < r->nrows; i++) {
		for (size_t c = 0; c < r->ncols; c++) {
			const struct query_value *v = query_cell(r, i, c);
			if (c)
				putc(',', f);
			if (v->type == QP_TEXT) {
				csv_put(o, v->s, tty);
			} else {
				sbuf_reset(&num);
				raw_text(&num, v);
				fputs(num.buf, f);
			}
		}
		fputs("\r\n", f);
	}
	sbuf_release(&num);
	out_free(o);
	return 0;
}

/* Appends code point cp as jansson's ASCII form writes it: \uXXXX, a
 * surrogate pair beyond the BMP. */
static void json_ascii(struct sbuf *out, uint32_t cp)
{
	if (cp < 0x10000) {
		sbuf_addf(out, "\\u%04X", (unsigned)cp);
		return;
	}
	cp -= 0x10000;
	sbuf_addf(out, "\\u%04X\\u%04X", (unsigned)(0xd800 | (cp >> 10)),
		  (unsigned)(0xdc00 | (cp & 0x3ff)));
}

/* The code point of the UTF-8 sequence p[0..k). */
static uint32_t utf8_decode(const unsigned char *p, size_t k)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t cp = p[0] & lead_mask[k];
	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* A JSON string of s, as jansson writes it: " \ and control characters
 * escaped (\b \f \n \r \t, else \u00XX), invalid UTF-8 one U+FFFD a byte
 * (as text_utf8_dup repairs it).  On a terminal (tty) each character from
 * DEL up that the sanitiser would change is written \uXXXX instead: the
 * same string to a JSON reader. */
static void json_put_string(struct out *o, const char *s, int tty)
{
	const char *p;
	char one[5];
	putc('"', o->f);
	o->pc.s = s;
	while ((p = piece_next(&o->pc))) {
		const unsigned char *u = (const unsigned char *)p;
		size_t n = strlen(p);
		sbuf_reset(&o->cut);
		while (n) {
			size_t k = *u < 0x80 ? 1 : text_utf8_seq(u, n);
			if (!k) { /* one invalid byte */
				sbuf_adds(&o->cut, "\xef\xbf\xbd");
				u++;
				n--;
				continue;
			}
			unsigned char c = *u;
			static const char esc[] = "btn\0fr"; /* \b \t \n \v \f \r */
			if (c == '"' || c == '\\') {
				sbuf_addc(&o->cut, '\\');
				sbuf_addc(&o->cut, (char)c);
			} else if (c >= '\b' && c <= '\r' && esc[c - '\b']) {
				sbuf_addc(&o->cut, '\\');
				sbuf_addc(&o->cut, esc[c - '\b']);
			} else if (c < 0x20) {
				json_ascii(&o->cut, c);
			} else if (tty && c >= 0x7f) {
				memcpy(one, u, k);
				one[k] = '\0';
				sbuf_reset(&o->tmp);
				o->h->sanitize(&o->tmp, one);
				if (o->tmp.len == k && !memcmp(o->tmp.buf, one, k))
					sbuf_add(&o->cut, u, k);
				else
					json_ascii(&o->cut, utf8_decode(u, k));
			} else {
				sbuf_add(&o->cut, u, k);
			}
			u += k;
			n -= k;
		}
		fwrite(o->cut.buf, 1, o->cut.len, o->f);
	}
	putc('"', o->f);
}

/* A number as jansson writes it (reals with 15 significant digits); null
 * for what JSON has no number for. */
static void json_put_number(struct out *o, const struct query_value *v)
{
	if (v->type == QP_INT) {
		sbuf_reset(&o->tmp);
		add_int(&o->tmp, v->i);
		fputs(o->tmp.buf, o->f);
		return;
	}
	json_t *j = isfinite(v->r) ? json_real(v->r) : NULL;
	char *s = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15)) : NULL;
	fputs(s ? s : "null", o->f);
	free(s);
	json_decref(j);
}

/* An array of objects, one a row, keys the column names.  Two columns of
 * one name make one key, where the first stands, with the last's value,
 * as a JSON object built column by column would have it. */
static int print_json(FILE *f, const struct query_result *r, const struct query_print_hooks *h,
		      int tty)
{
	size_t nc = r->ncols;
	struct out *o = out_new(f, h);
	long *from = xcalloc(nc ? nc : 1, sizeof(long)); /* the column a key's value is from */
	for (size_t c = 0; c < nc; c++) {
		from[c] = (long)c;
		for (size_t e = 0; e < c && from[c] == (long)c; e++)
			if (!strcmp(r->cols[e].name, r->cols[c].name))
				from[c] = -1, from[e] = (long)c;
	}
	fputs("[", f);
	for (size_t i = 0; i < r->nrows; i++) {
		fputs(i ? ",\n{" : "\n{", f);
		int any = 0;
		for (size_t c = 0; c < nc; c++) {
			if (from[c] < 0)
				continue;
			const struct query_value *v = query_cell(r, i, (size_t)from[c]);
			if (any++)
				putc(',', f);
			json_put_string(o, r->cols[c].name, tty);
			putc(':', f);
			if (v->type == QP_TEXT)
				json_put_string(o, v->s, tty);
			else if (v->type == QP_INT || v->type == QP_REAL)
				json_put_number(o, v);
			else
				fputs("null", f);
		}
		putc('}', f);
	}
	fputs(r->nrows ? "\n]\n" : "]\n", f);
	free(from);
	out_free(o);
	return 0;
}

int query_print(FILE *f, const struct query_result *r, enum query_format fmt,
		const struct query_print_hooks *hooks, int terminal, char **err)
{
	struct query_print_hooks h = resolve(hooks);
	int rc = fmt == QF_TABLE ? print_table(f, r, &h)
		 : fmt == QF_CSV ? print_csv(f, r, &h, terminal)
				 : print_json(f, r, &h, terminal);
	if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
		*err = xasprintf("cannot write the result: %s", strerror(errno));
		return -1;
	}
	return rc;
}
