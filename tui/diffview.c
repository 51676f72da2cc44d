/*
 * The diff of two runs as text, JSON or a results table (see diffview.h).
 * All three show the same rows of model/analysis/diff.h in its order: by level,
 * then the largest change of total time first.  Names come from trace.db
 * and pass the sanitiser before they reach a terminal; JSON holds them
 * exactly (invalid UTF-8 repaired), with times in ns and means and ratios
 * as exact doubles.  A row's name path is spelled out for that row only,
 * cut as diff.h says: the text and JSON are written a row at a time, and
 * the table keeps at most TABLE_PATH_BYTES of each path, so that memory
 * does not grow with the depth of a path or the length of its names.
 * Before the levels come the step medians: each step name's median in A
 * and in B, largest change first, with the first step's warm-up apart.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/diff.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"
#include "query/exec.h"
#include "tui/app.h"
#include "tui/diffview.h"
#include "tui/format.h"

#define NAME_COLS	60 /* the text's name column: a longer path keeps its end */
#define TABLE_NAME_COLS 40 /* the widest the results screen draws a column */
/* The path column's most bytes: the longest real names, C++ signatures of
 * kernels, alone in their path, run to 5 KB. */
#define TABLE_PATH_BYTES 8192
/* The bytes of a name's end that fill cols columns once sanitised: four
 * bytes a column at most, and room for zero-width marks. */
#define SHOWN_BYTES(cols) ((size_t)(cols)*16)

static const char *const level_titles[DIFF_NLEVELS] = {
    "steps (profiler steps by name, ProfilerStep#N merged)",
    "operators (by name path under their profiler step)",
    "runtime calls (by name)",
    "kernels (device work by name)",
};

static const char *status_of(const struct diff_row *r)
{
	return !r->side[0].count   ? "added"
	       : !r->side[1].count ? "removed"
	       : r->renamed	   ? "renamed"
				   : "";
}

static double median_ratio(const struct diff_row *r)
{
	return r->steps[0].n && r->steps[1].n && r->steps[0].median_ns
		   ? (double)r->steps[1].median_ns / (double)r->steps[0].median_ns
		   : NAN;
}

static int by_median_delta(const void *pa, const void *pb, void *ctx)
{
	const struct diff *d = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int64_t da = llabs(diff_median_delta(&d->rows[a])),
		db = llabs(diff_median_delta(&d->rows[b]));
	if (da != db)
		return da > db ? -1 : 1;
	return a < b ? -1 : a > b; /* the step level's order: by total */
}

/* The step rows that have steps, largest change of median first, into a
 * new array (*n of them). */
static size_t *step_order(const struct diff *d, size_t *n)
{
	size_t *idx = xcalloc(d->nrows ? d->nrows : 1, sizeof(*idx));
	*n = 0;
	for (size_t i = 0; i < d->nrows && d->rows[i].level == DIFF_STEP; i++)
		if (d->rows[i].steps[0].n || d->rows[i].steps[1].n)
			idx[(*n)++] = i;
	qsort_r(idx, *n, sizeof(*idx), by_median_delta, (void *)d);
	return idx;
}

/* B's makespan over A's; NAN when A has none. */
static double makespan_ratio(const struct diff *d)
{
	return d->run[0].makespan_ns ? (double)d->run[1].makespan_ns / (double)d->run[0].makespan_ns
				     : NAN;
}

/* Level l's rows in d: [*first, *end), and how many were added, removed. */
static void level_rows(const struct diff *d, int l, size_t *first, size_t *end, size_t *added,
		       size_t *removed)
{
	size_t i = 0;
	while (i < d->nrows && d->rows[i].level < l)
		i++;
	*first = i;
	*added = *removed = 0;
	for (; i < d->nrows && d->rows[i].level == l; i++) {
		*added += !d->rows[i].side[0].count;
		*removed += !d->rows[i].side[1].count;
	}
	*end = i;
}

/* The row's name as shown in cols columns: sanitised, a longer one its
 * end after more (in sb; raw is scratch). */
static const char *shown_name(const struct diff *d, const struct diff_row *r, size_t cols,
			      const char *more, struct sbuf *raw, struct sbuf *sb)
{
	sbuf_reset(raw);
	diff_row_name(d, r, SHOWN_BYTES(cols), raw);
	sbuf_reset(sb);
	format_sanitize(sb, raw->buf);
	return format_left_cut(sb, cols, more);
}

/* ---- text ---- */

static void text_side(FILE *out, const char *tag, const struct diff_run *r, struct sbuf *sb)
{
	char m[32];
	sbuf_reset(sb);
	format_sanitize(sb, r->path);
	fprintf(out, "  %s  %s: makespan %s, %lld workflow%s\n", tag, sb->buf,
		format_duration(m, sizeof(m), r->makespan_ns), (long long)r->workflows,
		r->workflows == 1 ? "" : "s");
}

/* Whether both runs have steps: then rows show their medians per step. */
static int per_step(const struct diff *d)
{
	return d->run[0].steps && d->run[1].steps;
}

static void text_row(FILE *out, const struct diff *d, const struct diff_row *r, struct sbuf *raw,
		     struct sbuf *sb)
{
	char t[4][32], dd[32], ra[32], st[4][32];
	format_duration(t[0], sizeof(t[0]), r->side[0].total_ns);
	format_duration(t[1], sizeof(t[1]), r->side[1].total_ns);
	for (int k = 0; k < 2; k++)
		if (r->side[k].count)
			format_duration(t[2 + k], sizeof(t[2 + k]),
					r->side[k].total_ns / r->side[k].count);
		else
			snprintf(t[2 + k], sizeof(t[2 + k]), "-");
	fprintf(out, "  %8lld %8lld %10s %10s %10s %10s %11s %7s", (long long)r->side[0].count,
		(long long)r->side[1].count, t[0], t[1], t[2], t[3],
		text_signed_duration(dd, sizeof(dd), diff_delta(r)),
		text_ratio(ra, sizeof(ra), diff_ratio(r)));
	if (per_step(d))
		fprintf(out, " %10s %10s %11s %10s %10s",
			format_duration(st[0], sizeof(st[0]), r->steps[0].median_ns),
			format_duration(st[1], sizeof(st[1]), r->steps[1].median_ns),
			text_signed_duration(dd, sizeof(dd), diff_median_delta(r)),
			format_duration(st[2], sizeof(st[2]), r->steps[0].warmup_ns),
			format_duration(st[3], sizeof(st[3]), r->steps[1].warmup_ns));
	fprintf(out, "  %-7s  %s\n", status_of(r), shown_name(d, r, NAME_COLS, "...", raw, sb));
}

/* One side's steps: how many, median, warm-up ("-" without steps). */
static void text_steps(const struct diff_steps *s, char med[32], char warm[32])
{
	if (!s->n) {
		snprintf(med, 32, "-");
		snprintf(warm, 32, "-");
		return;
	}
	format_duration(med, 32, s->median_ns);
	format_duration(warm, 32, s->warmup_ns);
}

/* The step medians: the lead of the text, before the levels. */
static void text_medians(FILE *out, const struct diff *d, struct sbuf *raw, struct sbuf *sb)
{
	size_t n, *idx = step_order(d, &n);
	if (!n)
		goto out;
	fprintf(out, "\nstep medians (per step; the first step's excess over the median apart, "
		     "as warm-up)\n");
	fprintf(out, "  %7s %7s %10s %10s %11s %7s %10s %10s  %-7s  %s\n", "steps A", "steps B",
		"median A", "median B", "B-A", "B/A", "warm-up A", "warm-up B", "", "name");
	for (size_t k = 0; k < n; k++) {
		const struct diff_row *r = &d->rows[idx[k]];
		char ma[32], mb[32], wa[32], wb[32], dd[32], ra[32];
		text_steps(&r->steps[0], ma, wa);
		text_steps(&r->steps[1], mb, wb);
		if (r->steps[0].n && r->steps[1].n)
			text_signed_duration(dd, sizeof(dd), diff_median_delta(r));
		else
			snprintf(dd, sizeof(dd), "-");
		fprintf(out, "  %7lld %7lld %10s %10s %11s %7s %10s %10s  %-7s  %s\n",
			(long long)r->steps[0].n, (long long)r->steps[1].n, ma, mb, dd,
			text_ratio(ra, sizeof(ra), median_ratio(r)), wa, wb, status_of(r),
			shown_name(d, r, NAME_COLS, "...", raw, sb));
	}
out:
	free(idx);
}

static void write_text(FILE *out, const struct diff *d, size_t limit)
{
	struct sbuf sb, raw;
	sbuf_init(&sb);
	sbuf_init(&raw);
	char dd[32], ra[32];
	fprintf(out, "Diff of two runs (B against A)\n");
	text_side(out, "A", &d->run[0], &sb);
	text_side(out, "B", &d->run[1], &sb);
	int64_t dm = d->run[1].makespan_ns - d->run[0].makespan_ns;
	fprintf(out, "  makespan B-A %s, B/A %s\n", text_signed_duration(dd, sizeof(dd), dm),
		text_ratio(ra, sizeof(ra), makespan_ratio(d)));
	text_medians(out, d, &raw, &sb);
	for (int l = 0; l < DIFF_NLEVELS; l++) {
		size_t first, end, added, removed;
		char ta[32], tb[32];
		level_rows(d, l, &first, &end, &added, &removed);
		fprintf(out, "\n%s\n", level_titles[l]);
		fprintf(out, "  A %lld in %s, B %lld in %s; %zu names, %zu added, %zu removed\n",
			(long long)d->run[0].level[l].count,
			format_duration(ta, sizeof(ta), d->run[0].level[l].total_ns),
			(long long)d->run[1].level[l].count,
			format_duration(tb, sizeof(tb), d->run[1].level[l].total_ns), end - first,
			added, removed);
		if (first == end)
			continue;
		fprintf(out, "  %8s %8s %10s %10s %10s %10s %11s %7s", "count A", "count B",
			"total A", "total B", "mean A", "mean B", "B-A", "B/A");
		if (per_step(d))
			fprintf(out, " %10s %10s %11s %10s %10s", "step A", "step B", "step B-A",
				"warm-up A", "warm-up B");
		fprintf(out, "  %-7s  %s\n", "", "name");
		size_t shown = limit && end - first > limit ? limit : end - first;
		for (size_t i = first; i < first + shown; i++)
			text_row(out, d, &d->rows[i], &raw, &sb);
		if (shown < end - first)
			fprintf(out, "  ... %zu more (--limit 0 shows all)\n", end - first - shown);
	}
	sbuf_release(&sb);
	sbuf_release(&raw);
}

/* ---- JSON ---- */

static json_t *json_side(const struct diff_side *s, int mean)
{
	json_t *j = json_pack("{s:I, s:I}", "count", (json_int_t)s->count, "total_ns",
			      (json_int_t)s->total_ns);
	if (mean)
		json_object_set_new(j, "mean_ns",
				    s->count ? json_real((double)s->total_ns / (double)s->count)
					     : json_null());
	return j;
}

static json_t *json_run(const struct diff_run *r)
{
	return json_pack("{s:o, s:I, s:I}", "path", report_json_string(r->path), "makespan_ns",
			 (json_int_t)r->makespan_ns, "workflows", (json_int_t)r->workflows);
}

static json_t *json_steps(const struct diff_steps *s)
{
	return json_pack("{s:I, s:I, s:I, s:I}", "steps", (json_int_t)s->n, "median_ns",
			 (json_int_t)s->median_ns, "first_ns", (json_int_t)s->first_ns, "warmup_ns",
			 (json_int_t)s->warmup_ns);
}

/* A row's figures per step, where a run has steps. */
static json_t *json_per_step(const struct diff_row *r)
{
	int both = r->steps[0].n && r->steps[1].n;
	return json_pack("{s:o, s:o, s:o}", "a", json_steps(&r->steps[0]), "b",
			 json_steps(&r->steps[1]), "median_diff_ns",
			 both ? json_integer((json_int_t)diff_median_delta(r)) : json_null());
}

/* The row's name and parts as diff_row_parts cuts them, and how many
 * names above them it left out (only when it did). */
static json_t *json_row(const struct diff *d, const struct diff_row *r, struct sbuf *sb)
{
	const char *part[DIFF_MAX_PARTS];
	size_t left, n = diff_row_parts(d, r, part, &left);
	json_t *parts = json_array();
	for (size_t k = 0; k < n; k++)
		json_array_append_new(parts, report_json_string(part[k]));
	sbuf_reset(sb);
	diff_row_name(d, r, 0, sb);
	double ratio = diff_ratio(r);
	const char *st = status_of(r);
	json_t *j =
	    json_pack("{s:o, s:o, s:s, s:o, s:o, s:I, s:o}", "name", report_json_string(sb->buf),
		      "path", parts, "status", *st ? st : "both", "a", json_side(&r->side[0], 1),
		      "b", json_side(&r->side[1], 1), "diff_ns", (json_int_t)diff_delta(r), "ratio",
		      isnan(ratio) ? json_null() : json_real(ratio));
	if (left)
		json_object_set_new(j, "path_left_out", json_integer((json_int_t)left));
	if (d->run[0].steps || d->run[1].steps)
		json_object_set_new(j, "per_step", json_per_step(r));
	if (r->renamed) {
		json_t *bp = json_array();
		n = diff_renamed_parts(d, r, part, &left);
		for (size_t k = 0; k < n; k++)
			json_array_append_new(bp, report_json_string(part[k]));
		json_object_set_new(j, "b_path", bp);
		if (left)
			json_object_set_new(j, "b_path_left_out", json_integer((json_int_t)left));
	}
	return j;
}

/* The step medians, largest change first (see text_medians). */
static json_t *json_medians(const struct diff *d, struct sbuf *sb)
{
	size_t n, *idx = step_order(d, &n);
	json_t *a = json_array();
	for (size_t k = 0; k < n; k++) {
		const struct diff_row *r = &d->rows[idx[k]];
		int both = r->steps[0].n && r->steps[1].n;
		double ratio = median_ratio(r);
		const char *st = status_of(r);
		sbuf_reset(sb);
		diff_row_name(d, r, 0, sb);
		json_array_append_new(
		    a,
		    json_pack("{s:o, s:s, s:o, s:o, s:o, s:o}", "name", report_json_string(sb->buf),
			      "status", *st ? st : "both", "a", json_steps(&r->steps[0]), "b",
			      json_steps(&r->steps[1]), "median_diff_ns",
			      both ? json_integer((json_int_t)diff_median_delta(r)) : json_null(),
			      "median_ratio", isnan(ratio) ? json_null() : json_real(ratio)));
	}
	free(idx);
	return a;
}

#define JSON_FLAGS (JSON_INDENT(2) | JSON_ENSURE_ASCII)

/* v (its reference taken) as json_dumpf writes it depth levels down an
 * indented document (every line after its first indented 2 * depth more;
 * with JSON_ENSURE_ASCII a string holds no newline); open: an object
 * without its closing "\n}", for more members to follow.  0; -1. */
static int json_put(FILE *out, json_t *v, int depth, int open)
{
	char *s = v ? json_dumps(v, JSON_FLAGS | JSON_ENCODE_ANY) : NULL;
	json_decref(v);
	if (!s)
		return -1;
	size_t n = strlen(s);
	if (open && n >= 2 && !strcmp(s + n - 2, "\n}"))
		n -= 2;
	for (const char *p = s, *end = s + n; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t k = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		fwrite(p, 1, k, out);
		if (nl)
			fprintf(out, "%*s", 2 * depth, "");
		p += k;
	}
	free(s);
	return 0;
}

/* The JSON document json_dumpf would write of the whole diff, written a
 * level's header and a row at a time. */
static int write_json(FILE *out, const struct diff *d, size_t limit)
{
	struct sbuf sb;
	sbuf_init(&sb);
	int rc = json_put(out,
			  json_pack("{s:o, s:o, s:o}", "a", json_run(&d->run[0]), "b",
				    json_run(&d->run[1]), "steps", json_medians(d, &sb)),
			  0, 1);
	fputs(",\n  \"levels\": [", out);
	for (int l = 0; l < DIFF_NLEVELS && rc == 0; l++) {
		size_t first, end, added, removed;
		level_rows(d, l, &first, &end, &added, &removed);
		size_t shown = limit && end - first > limit ? limit : end - first;
		fputs(l ? ",\n    " : "\n    ", out);
		rc = json_put(out,
			      json_pack("{s:s, s:o, s:o, s:I, s:I, s:I, s:I}", "level",
					diff_level_name(l), "a", json_side(&d->run[0].level[l], 0),
					"b", json_side(&d->run[1].level[l], 0), "names",
					(json_int_t)(end - first), "added", (json_int_t)added,
					"removed", (json_int_t)removed, "left_out",
					(json_int_t)(end - first - shown)),
			      2, 1);
		fputs(",\n      \"rows\": [", out);
		for (size_t i = first; i < first + shown && rc == 0; i++) {
			fputs(i > first ? ",\n        " : "\n        ", out);
			rc = json_put(out, json_row(d, &d->rows[i], &sb), 4, 0);
		}
		fputs(shown ? "\n      ]\n    }" : "]\n    }", out);
	}
	fputs("\n  ]\n}\n", out);
	sbuf_release(&sb);
	return rc;
}

int diffview_write(FILE *out, const char *a, const char *b, enum report_format fmt, size_t limit,
		   char **err)
{
	struct diff d;
	if (diff_compute(a, b, NULL, NULL, &d, err) < 0)
		return -1;
	int rc = 0;
	if (fmt == REPORT_JSON)
		rc = write_json(out, &d, limit);
	else
		write_text(out, &d, limit);
	diff_release(&d);
	if (rc < 0 || fflush(out) != 0 || ferror(out)) {
		*err = xasprintf("cannot write the diff: %s",
				 errno ? strerror(errno) : "output error");
		return -1;
	}
	return 0;
}

/* ---- the explorer's table ---- */

enum {
	COL_LEVEL,
	COL_NAME,
	COL_STATUS,
	COL_DIFF,
	COL_RATIO,
	COL_TOTAL_A,
	COL_TOTAL_B,
	COL_COUNT_A,
	COL_COUNT_B,
	COL_MEAN_A,
	COL_MEAN_B,
	COL_STEP_A,
	COL_STEP_B,
	COL_WARMUP_A,
	COL_WARMUP_B,
	COL_PATH,
	COL_PHASE,
	NCOLS
};

static const struct {
	const char *name;
	enum query_coltype type;
} table_cols[NCOLS] = {
    [COL_LEVEL] = {"level", QC_TEXT},	   [COL_NAME] = {"name", QC_TEXT},
    [COL_STATUS] = {"status", QC_TEXT},	   [COL_DIFF] = {"diff", QC_DELTA},
    [COL_RATIO] = {"ratio", QC_RATIO},	   [COL_TOTAL_A] = {"total_a", QC_DUR},
    [COL_TOTAL_B] = {"total_b", QC_DUR},   [COL_COUNT_A] = {"count_a", QC_INT},
    [COL_COUNT_B] = {"count_b", QC_INT},   [COL_MEAN_A] = {"mean_a", QC_DUR},
    [COL_MEAN_B] = {"mean_b", QC_DUR},	   [COL_STEP_A] = {"step_a", QC_DUR},
    [COL_STEP_B] = {"step_b", QC_DUR},	   [COL_WARMUP_A] = {"warmup_a", QC_DUR},
    [COL_WARMUP_B] = {"warmup_b", QC_DUR}, [COL_PATH] = {"path", QC_TEXT},
    [COL_PHASE] = {"phase", QC_PHASE},
};

static struct query_value text_value(struct query_result *r, const char *s)
{
	return (struct query_value){.type = QP_TEXT, .s = query_result_text(r, s, strlen(s))};
}

static struct query_value int_value(int64_t v)
{
	return (struct query_value){.type = QP_INT, .i = v};
}

static struct query_value real_value(double v)
{
	return isnan(v) ? (struct query_value){.type = QP_NULL}
			: (struct query_value){.type = QP_REAL, .r = v};
}

static double mean_of(const struct diff_side *s)
{
	return s->count ? (double)s->total_ns / (double)s->count : NAN;
}

/* d's rows as a query result: the results screen's sort, search, filter
 * and Enter work on it as on a query's.  The name column holds the end of
 * the path, which tells rows apart (the screen cuts a cell's end); the
 * path column all of it as diff_row_name spells it, up to TABLE_PATH_BYTES
 * (its end after "…"). */
static void diff_table(const struct diff *d, const char *more, struct query_result *r)
{
	/* the per-step columns only where a run has steps */
	int steps = d->run[0].steps || d->run[1].steps;
	size_t keep[NCOLS], nc = 0;
	for (size_t c = 0; c < NCOLS; c++)
		if (steps ||
		    (c != COL_STEP_A && c != COL_STEP_B && c != COL_WARMUP_A && c != COL_WARMUP_B))
			keep[nc++] = c;
	struct sbuf name, raw;
	sbuf_init(&name);
	sbuf_init(&raw);
	memset(r, 0, sizeof(*r));
	r->ncols = nc;
	r->nrows = d->nrows;
	r->cols = xcalloc(nc, sizeof(*r->cols));
	for (size_t j = 0; j < nc; j++) {
		r->cols[j].name = xstrdup(table_cols[keep[j]].name);
		r->cols[j].type = table_cols[keep[j]].type;
		if (keep[j] == COL_PHASE)
			r->phase_col = (int)j;
	}
	r->cells = xcalloc(d->nrows ? d->nrows * nc : 1, sizeof(*r->cells));
	for (size_t i = 0; i < d->nrows; i++) {
		const struct diff_row *row = &d->rows[i];
		struct query_value v[NCOLS];
		v[COL_LEVEL] = text_value(r, diff_level_name(row->level));
		v[COL_NAME] = text_value(r, shown_name(d, row, TABLE_NAME_COLS, more, &raw, &name));
		sbuf_reset(&raw);
		diff_row_name(d, row, TABLE_PATH_BYTES, &raw);
		v[COL_STATUS] = text_value(r, status_of(row));
		v[COL_DIFF] = int_value(diff_delta(row));
		v[COL_RATIO] = real_value(diff_ratio(row));
		v[COL_TOTAL_A] = int_value(row->side[0].total_ns);
		v[COL_TOTAL_B] = int_value(row->side[1].total_ns);
		v[COL_COUNT_A] = int_value(row->side[0].count);
		v[COL_COUNT_B] = int_value(row->side[1].count);
		v[COL_MEAN_A] = real_value(mean_of(&row->side[0]));
		v[COL_MEAN_B] = real_value(mean_of(&row->side[1]));
		for (int k = 0; k < 2; k++) { /* none where the run has no steps */
			const struct diff_steps *st = &row->steps[k];
			v[COL_STEP_A + k] = st->n ? int_value(st->median_ns) : real_value(NAN);
			v[COL_WARMUP_A + k] = st->n ? int_value(st->warmup_ns) : real_value(NAN);
		}
		v[COL_PATH] = text_value(r, raw.buf);
		v[COL_PHASE] = row->side[0].first_id ? int_value(row->side[0].first_id)
						     : (struct query_value){.type = QP_NULL};
		for (size_t j = 0; j < nc; j++)
			r->cells[i * nc + j] = v[keep[j]];
	}
	sbuf_release(&name);
	sbuf_release(&raw);
}

void diffview_command(struct app *a, const char *arg)
{
	while (*arg == ' ')
		arg++;
	if (!*arg) {
		app_message(a, 1, "diff needs a trace.db to compare with, e.g. :diff before.db");
		return;
	}
	if (a->show_now) {
		app_message(a, 0, "comparing with %s (C-c stops it)", arg);
		a->show_now(a);
	}
	struct diff d;
	char *err = NULL;
	int64_t t0 = app_now_ns();
	int rc = diff_compute(store_path(model_store(a->m)), arg, app_interrupted, a, &d, &err);
	if (rc == DIFF_STOPPED) {
		free(err);
		*a->interrupt = 0; /* it stopped the diff; it must not quit too */
		char took[32];
		app_message(a, 1, "diff stopped after %s (C-c)",
			    format_duration(took, sizeof(took), app_now_ns() - t0));
		return;
	}
	if (rc < 0) {
		app_message(a, 1, "%s", err);
		free(err);
		return;
	}
	if (app_interrupted(a))
		*a->interrupt = 0; /* C-c came once the files were read: the diff is done */
	struct query_result r;
	char ma[32], mb[32], ra[32];
	diff_table(&d, a->g->more, &r);
	struct sbuf title = SBUF_INIT;
	sbuf_addf(&title, "diff %s: ", arg);
	size_t nsteps, *idx = step_order(&d, &nsteps);
	if (nsteps && d.rows[idx[0]].steps[0].n && d.rows[idx[0]].steps[1].n) {
		/* first the step name whose median changed most */
		const struct diff_row *s = &d.rows[idx[0]];
		sbuf_addf(&title, "step median %s -> %s (%s), ",
			  format_duration(ma, sizeof(ma), s->steps[0].median_ns),
			  format_duration(mb, sizeof(mb), s->steps[1].median_ns),
			  text_ratio(ra, sizeof(ra), median_ratio(s)));
	}
	free(idx);
	sbuf_addf(&title, "makespan %s -> %s (%s)",
		  format_duration(ma, sizeof(ma), d.run[0].makespan_ns),
		  format_duration(mb, sizeof(mb), d.run[1].makespan_ns),
		  text_ratio(ra, sizeof(ra), makespan_ratio(&d)));
	size_t n = d.nrows;
	diff_release(&d);
	results_show(a, title.buf, &r);
	sbuf_release(&title);
	app_message(a, 0, "%zu names, this run A, %s B; Enter shows a name in A", n, arg);
}
