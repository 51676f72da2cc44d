/*
 * The summaries as result tables, and the explorer's :kernels, :ops,
 * :api, :annotations and :ranks; see summ.h.  Column names are what `summary --format json` keys
 * its objects by.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/aggr.h"
#include "model/analysis/gpubreak.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "tui/app.h"
#include "tui/format.h"
#include "tui/summ.h"

static const char *const names[SUMM_NKINDS] = {"kernels", "ops", "api", "annotations", "ranks"};

int summ_parse(const char *name)
{
	for (int k = 0; k < SUMM_NKINDS; k++)
		if (!strcmp(name, names[k]))
			return k;
	return -1;
}

const char *summ_name(int kind)
{
	return kind >= 0 && kind < SUMM_NKINDS ? names[kind] : "?";
}

static const struct query_column kernel_cols[] = {
    {"name", QC_TEXT},	 {"type", QC_TEXT},  {"count", QC_INT},	  {"total", QC_DUR},
    {"share%", QC_PCT},	 {"mean", QC_DUR},   {"median", QC_DUR},  {"min", QC_DUR},
    {"max", QC_DUR},	 {"stddev", QC_DUR}, {"bytes", QC_BYTES}, {"GB/s", QC_RATE},
    {"first", QC_PHASE}, {"scope", QC_TEXT},
};
static const struct query_column op_cols[] = {
    {"name", QC_TEXT}, {"count", QC_INT},   {"total", QC_DUR},
    {"self", QC_DUR},  {"device", QC_DUR},  {"mean", QC_DUR},
    {"max", QC_DUR},   {"first", QC_PHASE}, {"scope", QC_TEXT},
};
/* count, total, self, mean .. stddev: the host instances; gpu count and
 * gpu time: the GPU-side ones (HTA's user annotation breakdown, by default) */
static const struct query_column annotation_cols[] = {
    {"name", QC_TEXT},	{"count", QC_INT},     {"total", QC_DUR},    {"self", QC_DUR},
    {"device", QC_DUR}, {"mean", QC_DUR},      {"min", QC_DUR},	     {"max", QC_DUR},
    {"stddev", QC_DUR}, {"gpu count", QC_INT}, {"gpu time", QC_DUR}, {"first", QC_PHASE},
    {"scope", QC_TEXT},
};
static const struct query_column api_cols[] = {
    {"name", QC_TEXT}, {"count", QC_INT},   {"total", QC_DUR},	{"mean", QC_DUR},
    {"max", QC_DUR},   {"first", QC_PHASE}, {"scope", QC_TEXT},
};

const char *summ_scope(int kind)
{
	return kind >= 0 && kind < SUMM_RANKS ? "all beneath it, no step left out" : NULL;
}

const char *summ_scope_key(int kind)
{
	return summ_scope(kind) ? "subtree" : NULL;
}

static const struct query_column rank_cols[] = {
    {"rank", QC_TEXT}, {"step", QC_DUR},  {"compute", QC_DUR},	  {"comm", QC_DUR},
    {"wait", QC_DUR},  {"idle%", QC_PCT}, {"straggler", QC_TEXT}, {"id", QC_PHASE},
};

static void set_int(struct query_value *v, int64_t i)
{
	v->type = QP_INT;
	v->i = i;
}

static void set_real(struct query_value *v, double r)
{
	if (isfinite(r)) {
		v->type = QP_REAL;
		v->r = r;
	}
}

/* HTA's kernel types, as short as nsys would print them. */
static const char *type_word(int type)
{
	static const char *const w[GPUBREAK_NTYPES] = {"COMM", "COMP", "MEM", "OTHER"};
	return type >= 0 && type < GPUBREAK_NTYPES ? w[type] : "?";
}

/* An annotation's cells from count to gpu time (annotation_cols): the
 * host figures empty where it has no host instance, gpu time where it has
 * no GPU one; the cell after them. */
static struct query_value *annotation_cells(struct query_value *v, const struct aggr_row *x)
{
	set_int(v, x->count);
	if (x->count) {
		set_int(v + 1, x->total_ns);
		set_int(v + 2, x->self_ns);
		set_int(v + 3, x->device_ns);
		set_real(v + 4, x->mean_ns);
		set_int(v + 5, x->min_ns);
		set_int(v + 6, x->max_ns);
		set_real(v + 7, x->stddev_ns);
	}
	set_int(v + 8, x->gpu_count);
	if (x->gpu_count)
		set_int(v + 9, x->gpu_ns);
	return v + 10;
}

/* A kernel's, operator's or runtime call's cells from its type or count
 * to its max or GB/s (kernel_cols, op_cols, api_cols); the cell after
 * them. */
static struct query_value *work_cells(struct query_result *r, struct query_value *v,
				      const struct aggr_row *x, int kind, const struct aggr *a)
{
	if (kind == SUMM_KERNELS) {
		v->type = QP_TEXT;
		v->s = (char *)type_word(x->type);
		v->s = query_result_text(r, v->s, strlen(v->s));
		v++;
	}
	set_int(v++, x->count);
	set_int(v++, x->total_ns);
	if (kind == SUMM_KERNELS)
		set_real(v++,
			 a->total_ns ? 100.0 * (double)x->total_ns / (double)a->total_ns : 0.0);
	if (kind == SUMM_OPS) {
		set_int(v++, x->self_ns);
		set_int(v++, x->device_ns);
	}
	set_real(v++, x->mean_ns);
	if (kind == SUMM_KERNELS) {
		set_real(v++, x->median_ns);
		set_int(v++, x->min_ns);
	}
	set_int(v++, x->max_ns);
	if (kind == SUMM_KERNELS) {
		set_real(v++, x->stddev_ns);
		if (x->bytes) {
			set_int(v, x->bytes);
			if (x->total_ns)
				set_real(v + 1, (double)x->bytes / (double)x->total_ns);
		}
		v += 2;
	}
	return v;
}

static int rank_table(struct store *st, int64_t root_id, struct query_result *r, char **why,
		      char **err)
{
	struct aggr_rank *x;
	size_t n;
	int64_t step;
	if (aggr_ranks(st, root_id, &step, &x, &n, why, err) < 0)
		return -1;
	query_result_init(r, rank_cols, sizeof(rank_cols) / sizeof(*rank_cols), n);
	for (size_t i = 0; i < n; i++) {
		struct query_value *v = &r->cells[i * r->ncols];
		v->type = QP_TEXT;
		v->s = query_result_text(r, x[i].name, strlen(x[i].name));
		set_int(v + 1, x[i].dur_ns);
		if (x[i].compute_ns >= 0) {
			set_int(v + 2, x[i].compute_ns);
			set_int(v + 3, x[i].comm_ns);
		}
		if (x[i].wait_ns >= 0)
			set_int(v + 4, x[i].wait_ns);
		set_real(v + 5, x[i].idle_pct);
		if (x[i].straggler) {
			v[6].type = QP_TEXT;
			v[6].s = query_result_text(r, "straggler", strlen("straggler"));
		}
		set_int(v + 7, x[i].rank_id);
	}
	aggr_ranks_release(x, n);
	return 0;
}

int summ_table(struct store *st, int64_t root_id, int kind, int scoped, struct query_result *r,
	       char **why, char **err)
{
	*why = NULL;
	if (kind == SUMM_RANKS)
		return rank_table(st, root_id, r, why, err);
	static const enum aggr_what what[SUMM_NKINDS] = {AGGR_KERNELS, AGGR_OPS, AGGR_API,
							 AGGR_ANNOTATIONS};
	static const struct query_column *const cols[SUMM_NKINDS] = {kernel_cols, op_cols, api_cols,
								     annotation_cols};
	/* with the scope column, the last */
	static const size_t ncols[SUMM_NKINDS] = {
	    sizeof(kernel_cols) / sizeof(*kernel_cols), sizeof(op_cols) / sizeof(*op_cols),
	    sizeof(api_cols) / sizeof(*api_cols),
	    sizeof(annotation_cols) / sizeof(*annotation_cols)};
	struct aggr a;
	int rc = aggr_compute(st, root_id, what[kind], &a, err);
	if (rc < 0)
		return rc;
	query_result_init(r, cols[kind], ncols[kind] - !scoped, a.nrows);
	const char *key = summ_scope_key(kind);
	for (size_t i = 0; i < a.nrows; i++) {
		const struct aggr_row *x = &a.rows[i];
		struct query_value *v = &r->cells[i * r->ncols];
		v->type = QP_TEXT;
		v->s = query_result_text(r, x->name, strlen(x->name));
		v++;
		v = kind == SUMM_ANNOTATIONS ? annotation_cells(v, x)
					     : work_cells(r, v, x, kind, &a);
		set_int(v++, x->first_id);
		if (scoped) {
			v->type = QP_TEXT;
			v->s = query_result_text(r, key, strlen(key));
		}
	}
	*why = a.why;
	a.why = NULL;
	aggr_release(&a);
	return 0;
}

/* ---- the explorer ---- */

void summ_open(struct app *a, int kind, const char *path)
{
	char *err = NULL;
	if (*path && tree_view_goto(&a->tree, path, &err) < 0) {
		app_message(a, 1, "%s", err);
		free(err);
		return;
	}
	const struct mnode *n = tree_view_selected(&a->tree);
	if (!n) {
		app_message(a, 1, "%s: select a phase first", names[kind]);
		return;
	}
	if (a->show_now) {
		app_message(a, 0, "summarising %s ...", names[kind]);
		a->show_now(a);
	}
	struct query_result r;
	int64_t t0 = app_now_ns();
	char *why = NULL;
	int rc = summ_table(model_store(a->m), n->id, kind, 0, &r, &why, &err);
	int64_t took = app_now_ns() - t0;
	if (rc < 0) {
		app_error(a, rc, err);
		return;
	}
	struct sbuf title = SBUF_INIT;
	sbuf_addf(&title, "%s of ", names[kind]);
	format_sanitize(&title, n->name);
	if (summ_scope(kind))
		sbuf_addf(&title, " (%s)", summ_scope(kind));
	size_t rows = r.nrows;
	results_show(a, title.buf, &r);
	sbuf_release(&title);
	if (kind == SUMM_KERNELS || kind == SUMM_OPS) { /* c and :callers read its flame */
		a->rv.callers_root = n->id;
		a->rv.callers_device = kind == SUMM_KERNELS;
	}
	char d[32];
	app_message(a, 0, "%zu name%s in %s%s%s", rows, rows == 1 ? "" : "s",
		    format_duration(d, sizeof(d), took), why ? ": " : "", why ? why : "");
	free(why);
}
