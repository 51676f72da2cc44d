/*
 * Resource attribution in the explorer: which figures the tree and the
 * details pane show for a phase (model/analysis/attrib.h has the method).  The
 * figures come from the file's cache while it matches the file (`grademl-tui
 * analyze`), one row read per phase drawn; a file without a fresh cache and
 * under ATTR_COMPUTE_MAX phases is attributed in memory when first needed
 * (milliseconds at that size); a larger one shows none, and a hint.  The
 * idle causes beside a software verdict (model/analysis/cause.h) come the
 * same way, from the GPU breakdowns' cache or computed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/gpucache.h"
#include "model/store/store.h"
#include "tui/app.h"
#include "tui/format.h"
#include "model/util/xalloc.h"

#define ATTR_COMPUTE_MAX 1000000
/* The GPU breakdowns behind the idle causes cost more: about 0.15 s for
 * the 38 k phases of tests/data/gpu; a file without a fresh cache computes
 * them up to this size, a larger one keeps "sw" until `analyze`. */
#define CAUSE_COMPUTE_MAX 100000

static void look(struct app *a)
{
	struct app_attr *t = &a->attr;
	sqlite3 *db = store_db(model_store(a->m));
	char *err = NULL;
	t->state = -1;
	if (analysis_fresh(db)) {
		t->state = 1;
		return;
	}
	if (model_phase_bound(a->m) > ATTR_COMPUTE_MAX)
		return;
	int rc = attrib_compute(db, store_path(model_store(a->m)), &t->all, &err);
	if (rc < 0) {
		app_error(a, rc, err);
		return;
	}
	t->state = 2;
}

int app_attr_available(struct app *a)
{
	if (!a->attr.state)
		look(a);
	return a->attr.state == 1 || (a->attr.state == 2 && a->attr.all.nrows);
}

const struct attrib_row *app_attr(struct app *a, int64_t phase_id)
{
	struct app_attr *t = &a->attr;
	if (!t->state)
		look(a);
	if (t->state == 2)
		return attrib_find(&t->all, phase_id);
	if (t->state != 1)
		return NULL;
	if (t->row.phase_id == phase_id && t->row.mask)
		return &t->row;
	return attrib_read(store_db(model_store(a->m)), phase_id, &t->row) == 1 ? &t->row : NULL;
}

/* Reads the GPU breakdowns' idle causes the way the attribution was had:
 * the file's cache, else computed when the file is small enough. */
static void look_causes(struct app *a)
{
	struct app_attr *t = &a->attr;
	struct store *st = model_store(a->m);
	struct gpubreak g = {0};
	char *err = NULL;
	t->cause_state = -1;
	if (t->state != 1 && (t->state != 2 || model_phase_bound(a->m) > CAUSE_COMPUTE_MAX))
		return;
	int rc = t->state == 1 ? gpucache_load(store_db(st), &g, &err)
			       : gpubreak_load(st, NULL, &g, &err);
	if (rc == 0)
		rc = cause_map_build(st, &g, &t->causes, &err);
	gpubreak_release(&g);
	if (rc == 0)
		t->cause_state = 1;
	else
		app_error(a, rc, err);
}

/* The cause beside r's software verdict into c: 1, or 0 when it has none. */
static int attr_cause(struct app *a, const struct attrib_row *r, struct cause *c)
{
	struct attrib_bneck b[ATTRIB_NBNECK];
	if (!r || !attrib_bottlenecks(r, b) || b[0].res != ATTRIB_SOFTWARE)
		return 0;
	if (!a->attr.cause_state)
		look_causes(a);
	return cause_of(a->attr.causes, r, c);
}

void app_attr_top(struct app *a, const struct attrib_row *r, int w, char *buf, size_t n)
{
	struct attrib_bneck b[ATTRIB_NBNECK];
	struct cause c;
	*buf = 0;
	if (!r)
		return;
	if (!attrib_bottlenecks(r, b)) {
		if (attrib_nodata(r) > 0)
			snprintf(buf, n, "no data");
		return;
	}
	if (attr_cause(a, r, &c))
		cause_column(&c, w, buf, n);
	else
		snprintf(buf, n, "%s %.0f%%", attrib_bound_short(b[0].res), 100 * b[0].frac);
}

/* "name ███░░ 37%" for one resource's mean use (1.0 = one resource). */
static void bar(struct app *a, struct sbuf *sb, const char *name, double use)
{
	int cells = 5, full = (int)lround(fmin(fmax(use, 0), 1) * cells);
	sbuf_addf(sb, "%s%s ", sb->len ? "  " : "", name);
	for (int i = 0; i < cells; i++)
		sbuf_adds(sb, i < full ? a->g->full : a->g->spark[0]);
	sbuf_addf(sb, " %.0f%%", 100 * use);
}

void app_attr_lines(struct app *a, const struct attrib_row *r, struct sbuf *use, struct sbuf *bneck)
{
	if (!r) {
		const char *why =
		    a->attr.state == 1 || a->attr.state == 2
			? "none: no attributed metric of its host or device, or under 100 us"
			: "not computed for a file this large: run `grademl-tui analyze` on it";
		sbuf_adds(use, why);
		sbuf_adds(bneck, "-");
		return;
	}
	for (int x = 0; x < ATTRIB_NRES; x++)
		if (r->mask & (1u << x))
			bar(a, use, attrib_res_name(x), r->use[x]);
	if (!use->len)
		sbuf_adds(use, "none: no sample holds while its work runs");
	attrib_work_text(r, use);
	struct cause c;
	cause_bound_text(r, attr_cause(a, r, &c) ? &c : NULL, bneck);
}

/* Over time on a file attributed from its cache, the samples the window
 * touches and the work of its hosts then are read again: about 0.1 s for a
 * ProfilerStep of the 5.6 M-phase bench, seconds for a whole step.  Longer
 * phases of such files go without. */
#define ATTR_SERIES_MAX_NS (2 * 1000000000LL)

/* n's series into the cache slot; 0 when there is one. */
static int series(struct app *a, const struct mnode *n)
{
	struct app_attr *t = &a->attr;
	char *err = NULL;
	if (t->series_for == n->id)
		return t->series_ok ? 0 : -1;
	t->series_for = n->id;
	t->series_ok = 0;
	if (t->state == 1 && n->dur_ns > ATTR_SERIES_MAX_NS)
		return -1;
	if (n->dur_ns <= 0)
		return -1;
	int rc = attrib_series(store_db(model_store(a->m)), store_path(model_store(a->m)),
			       t->state == 2 ? &t->all : NULL, n->id, n->start_ns,
			       n->start_ns + n->dur_ns, APP_ATTR_BUCKETS, t->series, &err);
	if (rc == PTREE_LOOP) {
		app_error(a, rc, err);
		return -1;
	}
	if (rc < 0) {
		free(err);
		return -1;
	}
	t->series_ok = 1;
	return 0;
}

void app_attr_over_time(struct app *a, const struct mnode *n, const struct attrib_row *r,
			struct sbuf *out)
{
	if (!r) {
		sbuf_adds(out, "-");
		return;
	}
	if (series(a, n) < 0) {
		sbuf_adds(out, a->attr.state == 1 && n->dur_ns > ATTR_SERIES_MAX_NS
				   ? "not drawn for a phase over 2 s of a file this large"
				   : "-");
		return;
	}
	int k = 0;
	for (int x = 0; x < ATTRIB_NRES; x++) {
		if (!(r->mask & (1u << x)) || k++ == 3)
			continue;
		sbuf_addf(out, "%s%s ", k > 1 ? "  " : "", attrib_res_name(x));
		for (int b = 0; b < APP_ATTR_BUCKETS; b++)
			sbuf_adds(out, glyphs_spark(
					   a->g, fmin(a->attr.series[x * APP_ATTR_BUCKETS + b], 1),
					   0, 1));
	}
	sbuf_adds(out, k ? "  (0..100%)" : "-");
}

void app_attr_release(struct app_attr *t)
{
	attrib_release(&t->all);
	cause_map_free(t->causes);
	memset(t, 0, sizeof(*t));
}
