/*
 * The critical path screen; see pathview.h.  Column names are what the
 * e2e check (tests/e2e/path.sh) reads back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/ptree.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "tui/app.h"
#include "tui/format.h"
#include "tui/pathview.h"

/* the figures first, so that they show on an 80-column screen */
static const struct query_column path_cols[] = {
    {"phase", QC_TEXT}, {"step", QC_TEXT},     {"on_path", QC_DUR},
    {"share%", QC_PCT}, {"2x_saves", QC_DUR},  {"bound_by", QC_TEXT},
    {"kind", QC_TEXT},	{"workflow", QC_TEXT}, {"id", QC_PHASE},
};
#define NCOLS (sizeof(path_cols) / sizeof(*path_cols))

static void set_text(struct query_result *r, struct query_value *v, const char *s)
{
	v->type = QP_TEXT;
	v->s = query_result_text(r, s, strlen(s));
}

static void set_int(struct query_value *v, int64_t i)
{
	v->type = QP_INT;
	v->i = i;
}

/* One row: phase id's time on the path of the workflow p names (wait: the
 * path's waiting time). */
static int fill_row(struct store *st, struct query_result *r, size_t row, const struct pathrow *p,
		    const char *wf, int wait, const char *more, char **err)
{
	struct query_value *v = &r->cells[row * r->ncols];
	int64_t id = wait ? p->root_id : p->phase_id, ns = wait ? p->wait_ns : p->on_path_ns;
	int64_t *chain = NULL;
	size_t n = 0;
	int rc = ptree_up(store_db(st), store_path(st), id, &chain, &n, err);
	if (rc < 0)
		return rc;
	if (n >= 2) {
		char *step = analysis_phase_name(st, chain[n - 2]);
		set_text(r, v + 1, step);
		free(step);
	}
	free(chain);
	char *name = wait ? xstrdup("(waiting)") : analysis_phase_name(st, id);
	set_text(r, v, name);
	free(name);
	set_int(v + 2, ns);
	if (p->makespan_ns > 0) {
		v[3].type = QP_REAL;
		v[3].r = round(10000.0 * (double)ns / (double)p->makespan_ns) / 100;
	}
	if (!wait && p->whatif_ns >= 0) {
		set_int(v + 4, p->makespan_ns - p->whatif_ns);
		if (p->bound_id) {
			char *b = analysis_phase_name(st, p->bound_id);
			struct sbuf shown = SBUF_INIT; /* a kernel's signature shortened */
			format_name(&shown, b, 1, more);
			set_text(r, v + 5, shown.buf);
			sbuf_release(&shown);
			free(b);
		}
	}
	set_text(r, v + 6, wait ? "wait" : "run");
	set_text(r, v + 7, wf);
	set_int(v + 8, id);
	return 0;
}

int pathview_table(struct store *st, const struct analysis *an, const char *more,
		   struct query_result *r, char **err)
{
	size_t nwf = 0;
	int rc = 0;
	for (size_t i = 0; i < an->npath; i++)
		nwf += !i || an->path[i - 1].root_id != an->path[i].root_id;
	query_result_init(r, path_cols, NCOLS, an->npath + nwf);
	size_t row = 0;
	for (size_t i = 0, end; i < an->npath && rc == 0; i = end) {
		const struct pathrow *p = &an->path[i];
		char *wf = analysis_phase_name(st, p->root_id);
		int waited = 0;
		for (end = i; end < an->npath && an->path[end].root_id == p->root_id; end++) {
			if (rc == 0 && !waited && p->wait_ns > an->path[end].on_path_ns) {
				rc = fill_row(st, r, row++, p, wf, 1, more, err);
				waited = 1;
			}
			if (rc == 0)
				rc = fill_row(st, r, row++, &an->path[end], wf, 0, more, err);
		}
		if (rc == 0 && !waited)
			rc = fill_row(st, r, row++, p, wf, 1, more, err);
		free(wf);
	}
	if (rc < 0)
		query_result_release(r);
	return rc;
}

void pathview_command(struct app *a, const char *arg)
{
	char *err = NULL;
	while (*arg == ' ')
		arg++;
	if (*arg) {
		app_message(a, 1,
			    "path takes no argument: it shows every workflow's critical path");
		return;
	}
	struct store *st = model_store(a->m);
	struct analysis an;
	if (a->show_now && !analysis_fresh(store_db(st))) {
		app_message(a, 0, "finding the critical path (grademl-tui analyze keeps it) ...");
		a->show_now(a);
	}
	int rc = analysis_path(st, &an, &err);
	if (rc < 0) {
		app_error(a, rc, err);
		return;
	}
	if (!an.npath) {
		analysis_release(&an);
		app_message(a, 1, "path: no workflow has a critical path (nothing took time)");
		return;
	}
	struct query_result r;
	rc = pathview_table(st, &an, a->g->more, &r, &err);
	if (rc < 0) {
		analysis_release(&an);
		app_error(a, rc, err);
		return;
	}
	struct sbuf title = SBUF_INIT;
	char ms[32], w[32];
	const struct pathrow *p = &an.path[0];
	size_t nwf = r.nrows - an.npath;
	if (nwf == 1) {
		sbuf_adds(&title, "critical path of ");
		format_sanitize(&title, r.cells[7].s);
		sbuf_addf(&title, ": %s, %s of it waiting",
			  format_duration(ms, sizeof(ms), p->makespan_ns),
			  format_duration(w, sizeof(w), p->wait_ns));
	} else {
		sbuf_addf(&title, "critical paths of %zu workflows", nwf);
	}
	results_show(a, title.buf, &r);
	sbuf_release(&title);
	analysis_release(&an);
	app_message(a, 0,
		    "longest on the path first; 2x_saves: the makespan saved were the phase twice"
		    " as fast; Enter shows the phase");
}
