/*
 * The attribution's cache in trace.db (tables attribution and
 * attribution_fit): saving a run's rows and fits, reading one phase's row
 * back, and loading them all.
 */
#include <string.h>

#include "model/analysis/attrib.h"
#include "model/analysis/attrib_int.h"
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/util/xalloc.h"

/* The cache's rows that are no resource: the time with data and the
 * software-bound part of it; the host and the device work time; the time
 * a trace's device work measures the GPU and the part of it when some ran;
 * the sources sharing its GPU and whether it was judged on its own. */
#define CACHE_SOFTWARE "software"
#define CACHE_WORK     "work"
#define CACHE_DEVWORK  "devwork"
#define CACHE_COVER    "cover"
#define CACHE_SHARED   "shared-gpu"

/* ---- the cache ---- */

int attrib_save(sqlite3 *db, const struct attribution *a, char **err)
{
	sqlite3_stmt *row = NULL, *fitq = NULL;
	int rc = -1;
	if (sqlite3_exec(db, "DELETE FROM attribution; DELETE FROM attribution_fit", NULL, NULL,
			 NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		db,
		"INSERT INTO attribution(phase_id, resource, usage, busy_ns, bneck_ns)"
		" VALUES (?1, ?2, ?3, ?4, ?5)",
		-1, &row, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "INSERT INTO attribution_fit(metric_id, phase_type, rule, demand)"
			       " VALUES (?1, ?2, ?3, ?4)",
			       -1, &fitq, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < a->nrows; i++) {
		const struct attrib_row *r = &a->rows[i];
		sqlite3_bind_int64(row, 1, r->phase_id);
		/* the resources it demands (single-thread with cpu), then the
		 * time with data and its software-bound part, then the work,
		 * then the time its work covers, then the time its device work
		 * was traced, then the sharing of its GPU */
		for (int x = 0; x < ATTRIB_NBOUND + 5; x++) {
			int on = x < ATTRIB_NRES	  ? r->mask & (1u << x)
				 : x == ATTRIB_THREAD	  ? r->mask & (1u << ATTRIB_CPU)
				 : x == ATTRIB_NBOUND + 3 ? r->traced_ns > 0
				 : x == ATTRIB_NBOUND + 4 ? r->shared_gpu > 0
							  : 1;
			if (!on)
				continue;
			const char *name = x < ATTRIB_NBOUND	    ? attrib_res_name(x)
					   : x == ATTRIB_NBOUND	    ? CACHE_SOFTWARE
					   : x == ATTRIB_NBOUND + 1 ? CACHE_WORK
					   : x == ATTRIB_NBOUND + 2 ? CACHE_COVER
					   : x == ATTRIB_NBOUND + 3 ? CACHE_DEVWORK
								    : CACHE_SHARED;
			int64_t busy = x < ATTRIB_NBOUND	? r->busy_ns[attrib_res_device(x)]
				       : x == ATTRIB_NBOUND	? r->data_ns
				       : x == ATTRIB_NBOUND + 1 ? r->busy_ns[0]
				       : x == ATTRIB_NBOUND + 2 ? r->cover_ns[0]
				       : x == ATTRIB_NBOUND + 3 ? r->traced_ns
								: r->shared_gpu;
			int64_t bn = x < ATTRIB_NBOUND	      ? r->bneck_ns[x]
				     : x == ATTRIB_NBOUND     ? r->free_ns
				     : x == ATTRIB_NBOUND + 1 ? r->busy_ns[1]
				     : x == ATTRIB_NBOUND + 2 ? r->cover_ns[1]
				     : x == ATTRIB_NBOUND + 3 ? r->devbusy_ns
							      : r->own_gpu;
			sqlite3_bind_text(row, 2, name, -1, SQLITE_STATIC);
			if (x < ATTRIB_NRES)
				sqlite3_bind_double(row, 3, r->use[x]);
			else
				sqlite3_bind_null(row, 3);
			sqlite3_bind_int64(row, 4, busy);
			sqlite3_bind_int64(row, 5, bn);
			if (sqlite3_step(row) != SQLITE_DONE)
				goto fail;
			sqlite3_reset(row);
		}
	}
	for (size_t i = 0; i < a->nfits; i++) {
		const struct attrib_fit *f = &a->fits[i];
		sqlite3_bind_int64(fitq, 1, f->metric_id);
		sqlite3_bind_text(fitq, 2, f->type, -1, SQLITE_STATIC);
		sqlite3_bind_text(fitq, 3, f->exact ? "exact" : "variable", -1, SQLITE_STATIC);
		sqlite3_bind_double(fitq, 4, f->demand);
		if (sqlite3_step(fitq) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(fitq);
	}
	rc = 0;
	goto out;
fail:
	*err = xasprintf("cannot write the attribution: %s", sqlite3_errmsg(db));
out:
	sqlite3_finalize(row);
	sqlite3_finalize(fitq);
	return rc;
}

/* Adds one attribution row (resource named res: busy, bneck, usage) to
 * r; -1 for a resource it does not know. */
static int fill(struct attrib_row *r, const char *res, int64_t busy, int64_t bn, double usage)
{
	if (!strcmp(res, CACHE_SOFTWARE)) {
		r->data_ns = busy;
		r->free_ns = bn;
		return 0;
	}
	if (!strcmp(res, CACHE_WORK)) {
		r->busy_ns[0] = busy;
		r->busy_ns[1] = bn;
		return 0;
	}
	if (!strcmp(res, CACHE_COVER)) {
		r->cover_ns[0] = busy;
		r->cover_ns[1] = bn;
		return 0;
	}
	if (!strcmp(res, CACHE_DEVWORK)) {
		r->traced_ns = busy;
		r->devbusy_ns = bn;
		return 0;
	}
	if (!strcmp(res, CACHE_SHARED)) {
		r->shared_gpu = busy > 0 && busy < INT32_MAX ? (int)busy : 0;
		r->own_gpu = bn != 0;
		return 0;
	}
	int x = attrib_res_of(res);
	if (x < 0 || x >= ATTRIB_NBOUND)
		return -1;
	if (x < ATTRIB_NRES) {
		r->mask |= 1u << x;
		r->use[x] = usage;
	}
	r->busy_ns[attrib_res_device(x)] = busy;
	r->bneck_ns[x] = bn;
	return 0;
}

int attrib_read(sqlite3 *db, int64_t phase_id, struct attrib_row *r)
{
	sqlite3_stmt *q;
	int n = 0;
	memset(r, 0, sizeof(*r));
	if (sqlite3_prepare_v2(
		db,
		"SELECT a.resource, a.usage, a.busy_ns, a.bneck_ns, p.dur_ns, p.kind,"
		" " LEVEL_ON_THREAD_SQL("p") " FROM attribution a"
					     " JOIN phases p ON p.id = a.phase_id"
					     " WHERE a.phase_id = ?1",
		-1, &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(q, 1, phase_id);
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (fill(r, col_text(q, 0), col_int(q, 2), col_int(q, 3), col_real(q, 1)) < 0)
			continue;
		r->phase_id = phase_id;
		r->dur_ns = col_int(q, 4);
		r->kind = col_int32(q, 5);
		r->level = level_of(r->kind, col_int32(q, 6));
		n++;
	}
	sqlite3_finalize(q);
	return n > 0;
}

static const char *type_name(const char *s)
{
	for (int c = 0; c < 2; c++)
		for (int t = 0; t < NTYPES; t++)
			if (attrib_type_names[c][t] && !strcmp(attrib_type_names[c][t], s))
				return attrib_type_names[c][t];
	return "other";
}

/* The cache's fitted demands into a->fits. */
int attrib_load_fits(sqlite3 *db, struct attribution *a)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (sqlite3_prepare_v2(
		db,
		"SELECT f.metric_id, m.name, m.resource, f.phase_type, f.rule, f.demand"
		" FROM attribution_fit f JOIN metrics m ON m.id = f.metric_id"
		" ORDER BY f.rowid",
		-1, &q, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(a->fits, a->nfits + 1, alloc);
		const char *rule = col_text_or_null(q, 4);
		a->fits[a->nfits++] = (struct attrib_fit){
		    col_int(q, 0), attrib_res_of_metric(col_text_or_null(q, 2), col_text(q, 1)),
		    type_name(col_text(q, 3)), rule && !strcmp(rule, "exact"), col_real(q, 5)};
	}
	int rc = sqlite3_errcode(db);
	sqlite3_finalize(q);
	return rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

int attrib_load(sqlite3 *db, struct attribution *a, char **err)
{
	sqlite3_stmt *q = NULL;
	size_t alloc = 0;
	memset(a, 0, sizeof(*a));
	if (sqlite3_prepare_v2(
		db,
		"SELECT a.phase_id, a.resource, a.usage, a.busy_ns, a.bneck_ns, p.dur_ns, p.kind,"
		" " LEVEL_ON_THREAD_SQL(
		    "p") " FROM attribution a JOIN phases p ON p.id = a.phase_id"
			 " ORDER BY a.phase_id",
		-1, &q, NULL) != SQLITE_OK)
		goto fail;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t id = col_int(q, 0);
		if (!a->nrows || a->rows[a->nrows - 1].phase_id != id) {
			XGROW(a->rows, a->nrows + 1, alloc);
			memset(&a->rows[a->nrows], 0, sizeof(a->rows[0]));
			a->rows[a->nrows].phase_id = id;
			a->rows[a->nrows].kind = col_int32(q, 6);
			a->rows[a->nrows].level = level_of(col_int32(q, 6), col_int32(q, 7));
			a->rows[a->nrows++].dur_ns = col_int(q, 5);
		}
		fill(&a->rows[a->nrows - 1], col_text(q, 1), col_int(q, 3), col_int(q, 4),
		     col_real(q, 2));
	}
	sqlite3_finalize(q);
	q = NULL;
	if (attrib_load_fits(db, a) < 0)
		goto fail;
	return 0;
fail:
	*err = xasprintf("cannot read the attribution: %s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	attrib_release(a);
	return -1;
}
