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
 * ratio) as the explorer shows it into buf; NULL for other columns and
 * for values out of range. */
static const char *unit_text(char *buf, size_t n, const struct query_value *v,
			     enum query_coltype type)
{
	double d = v->type == QP_INT ? (double)v->i : v->r;
	if (type == QC_RATIO)
		return text_ratio(buf, n, d);
	if (type == QC_PCT) {
		snprintf(buf, n, "%.2f", d);
		return buf;
	}
	if (type == QC_RATE && fabs(d) < 9e9) { /* bytes per ns: per s, 1e9 times as many */
		text_bytes(buf, n, llround(d * 1e9));
		size_t k = strlen(buf);
		snprintf(buf + k, n - k, "/s");
		return buf;
	}
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

/* A value for the table; decimals: a clock time's (see clock_decimals). */
static void cell_text(struct sbuf *out, const struct query_value *v, enum query_coltype type,
		      const struct query_print_hooks *h, int decimals)
{
	char buf[64];
	if (v->type == QP_INT || v->type == QP_REAL) {
		if (h->raw && has_unit(type)) {
			raw_text(out, v);
			return;
		}
		if (type == QC_TIME && h->clock && (v->type == QP_INT || fabs(v->r) < 9e18)) {
			clock_text(out, time_ns(v), decimals);
			return;
		}
		if (unit_text(buf, sizeof(buf), v, type)) {
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

static int right_aligned(enum query_coltype t)
{
	return t != QC_TEXT && t != QC_ANY;
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
	struct sbuf sb;
	sbuf_init(&sb);
	for (size_t c = 0; c < nc; c++) {
		sbuf_reset(&sb);
		h.sanitize(&sb, r->cols[c].name);
		t->cells[c] = xstrdup(sb.buf);
		/* the sql escape's columns: right-aligned unless they hold text */
		t->right[c] = right_aligned(r->cols[c].type) || r->cols[c].type == QC_ANY;
	}
	/* a clock column's decimals: what its most precise time needs */
	int *decimals = xcalloc(nc ? nc : 1, sizeof(int));
	for (size_t c = 0; h.clock && c < nc; c++)
		for (size_t i = 0; r->cols[c].type == QC_TIME && i < nr; i++) {
			const struct query_value *v = query_cell(r, i, c);
			if ((v->type == QP_INT || v->type == QP_REAL) &&
			    clock_decimals(time_ns(v)) > decimals[c])
				decimals[c] = clock_decimals(time_ns(v));
		}
	for (size_t i = 0; i < nr; i++)
		for (size_t c = 0; c < nc; c++) {
			const struct query_value *v = query_cell(r, i, c);
			sbuf_reset(&sb);
			cell_text(&sb, v, r->cols[c].type, &h, decimals[c]);
			t->cells[(i + 1) * nc + c] = xstrdup(sb.buf);
			if (r->cols[c].type == QC_ANY && (v->type == QP_TEXT))
				t->right[c] = 0;
		}
	for (size_t i = 0; i <= nr; i++)
		for (size_t c = 0; c < nc; c++) {
			int w = h.width(t->cells[i * nc + c]);
			if (w > t->width[c])
				t->width[c] = w;
		}
	free(decimals);
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

/* The narrowest a cut column gets: a few characters and the cut mark. */
#define FIT_MIN 8

/* Text columns' widths under a cap level L (each at most L). */
static long capped(const struct query_table *t, int level)
{
	long sum = 0;
	for (size_t c = 0; c < t->ncols; c++)
		if (!t->right[c])
			sum += t->width[c] < level ? t->width[c] : level;
	return sum;
}

/* Each column's width in a table at most width columns wide (0: as wide as
 * it is): numbers keep theirs, the widest text columns give up columns,
 * down to FIT_MIN each, the highest level that fits, the columns left over
 * to the leftmost cut ones. */
static void fit_widths(const struct query_table *t, int width, int *cap)
{
	long total = 2 * (long)(t->ncols ? t->ncols - 1 : 0), budget = width, widest = 0;
	for (size_t c = 0; c < t->ncols; c++) {
		cap[c] = t->width[c];
		total += t->width[c];
		if (t->right[c])
			budget -= t->width[c];
		else if (t->width[c] > widest)
			widest = t->width[c];
	}
	budget -= 2 * (long)(t->ncols ? t->ncols - 1 : 0);
	if (width <= 0 || total <= width || widest <= FIT_MIN)
		return;
	int lo = FIT_MIN, hi = (int)widest; /* capped(lo) fits unless nothing does */
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (capped(t, mid) <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	long left = budget - capped(t, lo);
	for (size_t c = 0; c < t->ncols; c++)
		if (!t->right[c] && t->width[c] > lo)
			cap[c] = lo + (left > 0 ? (left--, 1) : 0);
}

static int print_table(FILE *f, const struct query_result *r, const struct query_print_hooks *h)
{
	struct query_table t;
	struct sbuf sb, cut;
	query_table_build(&t, r, h);
	sbuf_init(&sb);
	sbuf_init(&cut);
	size_t nc = t.ncols;
	int *cap = xcalloc(nc ? nc : 1, sizeof(int));
	int more = h->width(h->more);
	fit_widths(&t, h->cols, cap);
	for (size_t i = 0; i <= t.nrows; i++) {
		sbuf_reset(&sb);
		for (size_t c = 0; c < nc; c++) {
			const char *s = query_table_cell(&t, i, c);
			int w = h->width(s);
			if (w > cap[c]) {
				sbuf_reset(&cut);
				h->fit(&cut, s, cap[c] - more);
				sbuf_adds(&cut, h->more);
				s = cut.buf;
				w = h->width(s);
			}
			int pad = cap[c] - w;
			if (c)
				sbuf_adds(&sb, "  ");
			if (t.right[c])
				for (int k = 0; k < pad; k++)
					sbuf_addc(&sb, ' ');
			sbuf_adds(&sb, s);
			if (!t.right[c] && c + 1 < nc)
				for (int k = 0; k < pad; k++)
					sbuf_addc(&sb, ' ');
		}
		fprintf(f, "%s\n", sb.buf);
	}
	fprintf(f, "(%zu row%s%s)\n", t.nrows, t.nrows == 1 ? "" : "s",
		r->truncated ? ", truncated" : "");
	free(cap);
	query_table_release(&t);
	sbuf_release(&sb);
	sbuf_release(&cut);
	return 0;
}

static void csv_field(struct sbuf *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		sbuf_adds(out, s);
		return;
	}
	sbuf_addc(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			sbuf_addc(out, '"');
		sbuf_addc(out, *s);
	}
	sbuf_addc(out, '"');
}

/* A CSV field of s, through tty's sanitiser first when the output is a
 * terminal (tty not NULL); tmp is scratch. */
static void csv_text(struct sbuf *out, const char *s, struct sbuf *tmp,
		     const struct query_print_hooks *tty)
{
	if (tty) {
		sbuf_reset(tmp);
		tty->sanitize(tmp, s);
		s = tmp->buf;
	}
	csv_field(out, s);
}

static int print_csv(FILE *f, const struct query_result *r, const struct query_print_hooks *tty)
{
	struct sbuf line, v, tmp;
	sbuf_init(&line);
	sbuf_init(&v);
	sbuf_init(&tmp);
	for (size_t c = 0; c < r->ncols; c++) {
		if (c)
			sbuf_addc(&line, ',');
		csv_text(&line, r->cols[c].name, &tmp, tty);
	}
	fprintf(f, "%s\r\n", line.buf);
	for (size_t i = 0; i < r->nrows; i++) {
		sbuf_reset(&line);
		for (size_t c = 0; c < r->ncols; c++) {
			if (c)
				sbuf_addc(&line, ',');
			sbuf_reset(&v);
			raw_text(&v, query_cell(r, i, c));
			csv_text(&line, v.buf, &tmp, tty);
		}
		fprintf(f, "%s\r\n", line.buf);
	}
	sbuf_release(&line);
	sbuf_release(&v);
	sbuf_release(&tmp);
	return 0;
}

static json_t *json_value(const struct query_value *v)
{
	switch (v->type) {
	case QP_INT:
		return json_integer((json_int_t)v->i);
	case QP_REAL:
		return isfinite(v->r) ? json_real(v->r) : json_null();
	case QP_TEXT: {
		json_t *j = json_string(v->s);
		if (!j) { /* not UTF-8 (a blob through the sql escape) */
			char *fixed = text_utf8_dup(v->s);
			j = json_string(fixed);
			free(fixed);
		}
		return j ? j : json_null();
	}
	default:
		return json_null();
	}
}

/* JSON text json (valid UTF-8, as jansson writes it) for a terminal: each
 * character the sanitiser would change written as \uXXXX instead.  Only
 * strings hold characters past ASCII or DEL, so it stays the same JSON. */
static void json_terminal(struct sbuf *out, const char *json, const struct query_print_hooks *h)
{
	struct sbuf tmp;
	sbuf_init(&tmp);
	const unsigned char *p = (const unsigned char *)json;
	size_t n = strlen(json);
	while (n) {
		size_t k = *p < 0x7f ? 1 : text_utf8_seq(p, n);
		if (!k)
			k = 1;
		char one[5] = {0};
		memcpy(one, p, k);
		sbuf_reset(&tmp);
		if (*p >= 0x7f)
			h->sanitize(&tmp, one);
		if (*p < 0x7f || (tmp.len == k && !memcmp(tmp.buf, one, k))) {
			sbuf_add(out, p, k);
		} else if (*p == 0x7f) {
			sbuf_adds(out, "\\u007F");
		} else {
			/* jansson's ASCII form of the one character: "\uXXXX" */
			json_t *j = json_string(one);
			char *e = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
			if (e)
				sbuf_add(out, e + 1, strlen(e) - 2);
			free(e);
			json_decref(j);
		}
		p += k;
		n -= k;
	}
	sbuf_release(&tmp);
}

static int print_json(FILE *f, const struct query_result *r, const struct query_print_hooks *tty)
{
	struct sbuf esc;
	sbuf_init(&esc);
	fputs("[", f);
	for (size_t i = 0; i < r->nrows; i++) {
		json_t *o = json_object();
		for (size_t c = 0; c < r->ncols; c++)
			json_object_set_new(o, r->cols[c].name, json_value(query_cell(r, i, c)));
		char *s =
		    json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
		if (s && tty) {
			sbuf_reset(&esc);
			json_terminal(&esc, s, tty);
		}
		fprintf(f, "%s\n%s", i ? "," : "", !s ? "{}" : tty ? esc.buf : s);
		free(s);
		json_decref(o);
	}
	fputs(r->nrows ? "\n]\n" : "]\n", f);
	sbuf_release(&esc);
	return 0;
}

int query_print(FILE *f, const struct query_result *r, enum query_format fmt,
		const struct query_print_hooks *hooks, int terminal, char **err)
{
	struct query_print_hooks h = resolve(hooks);
	const struct query_print_hooks *tty = terminal ? &h : NULL;
	int rc = fmt == QF_TABLE ? print_table(f, r, &h)
		 : fmt == QF_CSV ? print_csv(f, r, tty)
				 : print_json(f, r, tty);
	if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
		*err = xasprintf("cannot write the result: %s", strerror(errno));
		return -1;
	}
	return rc;
}
