/*
 * Report figures from trace.db (see summary.h).  Operators are aggregated by
 * name over phases of kind 'operator'; a stream's busy time is the union of
 * its device work, which the nest builder leaves as its node's duration
 * less its self (idle) time, shown over the window of the source it came
 * from; its items are its device work (tracks.spans).  GPU annotations are
 * in a lane of their own, neither busy time nor items (model/ingest/nest.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/store/store.h"
#include "model/analysis/summary.h"
#include "model/store/col.h"
#include "model/util/xalloc.h"

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **q, char **err)
{
	if (sqlite3_prepare_v2(db, sql, -1, q, NULL) != SQLITE_OK) {
		*err = xasprintf("cannot read trace.db: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static int load_sources(sqlite3 *db, struct summary *s, char **err)
{
	sqlite3_stmt *q, *d;
	if (prepare(db,
		    "SELECT id, path, format, compression, anchor, host, coalesce(rank, -1),"
		    " size_bytes, phases, events, samples, dropped FROM sources ORDER BY id",
		    &q, err) < 0)
		return -1;
	if (prepare(db,
		    "SELECT code, message, example, count FROM diagnostics WHERE source_id = ?1"
		    " ORDER BY count DESC, code",
		    &d, err) < 0) {
		sqlite3_finalize(q);
		return -1;
	}
	size_t alloc = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(s->sources, s->nsources + 1, alloc);
		struct summary_source *src = &s->sources[s->nsources++];
		memset(src, 0, sizeof(*src));
		src->id = col_int(q, 0);
		src->path = col_strdup_or_null(q, 1);
		src->format = col_strdup_or_null(q, 2);
		src->compression = col_strdup_or_null(q, 3);
		src->anchor = col_strdup_or_null(q, 4);
		src->host = col_strdup_or_null(q, 5);
		src->rank = col_int32(q, 6);
		src->size_bytes = col_int(q, 7);
		src->phases = col_int(q, 8);
		src->events = col_int(q, 9);
		src->samples = col_int(q, 10);
		src->dropped = col_int(q, 11);
		sqlite3_bind_int64(d, 1, src->id);
		size_t dalloc = 0;
		while (sqlite3_step(d) == SQLITE_ROW) {
			XGROW(src->diags, src->ndiags + 1, dalloc);
			struct summary_diag *g = &src->diags[src->ndiags++];
			g->code = col_strdup_or_null(d, 0);
			g->message = col_strdup_or_null(d, 1);
			g->example = col_strdup_or_null(d, 2);
			g->count = col_int(d, 3);
		}
		sqlite3_reset(d);
	}
	sqlite3_finalize(q);
	sqlite3_finalize(d);
	return 0;
}

static int load_ops(sqlite3 *db, const char *order, int top_n, struct summary_op **out, size_t *n,
		    char **err)
{
	char *sql =
	    xasprintf("SELECT s.text, count(*), sum(p.dur_ns), sum(p.self_ns)"
		      " FROM phases p JOIN strings s ON s.id = p.name_id"
		      " WHERE p.kind = %d GROUP BY p.name_id ORDER BY %s DESC, s.text LIMIT %d",
		      PHASE_OPERATOR, order, top_n);
	sqlite3_stmt *q;
	int rc = prepare(db, sql, &q, err);
	free(sql);
	if (rc < 0)
		return -1;
	*out = xcalloc((size_t)top_n, sizeof(**out));
	while (sqlite3_step(q) == SQLITE_ROW && *n < (size_t)top_n) {
		struct summary_op *o = &(*out)[(*n)++];
		o->name = col_strdup_or_null(q, 0);
		o->count = col_int(q, 1);
		o->total_ns = col_int(q, 2);
		o->self_ns = col_int(q, 3);
	}
	sqlite3_finalize(q);
	return 0;
}

static int load_streams(sqlite3 *db, struct summary *s, char **err)
{
	/* windows come from the track nodes (few rows, looked up by id), so the
	 * report does not scan the phases table per stream; a track of instants
	 * only (Kineto's "Record Window End") does not stretch its source's
	 * window, as it does not its rank's (importers/chrome.c) */
	char *sql = xasprintf(
	    "WITH win AS (SELECT t.source_id AS sid, min(p.start_ns) AS s,"
	    "   max(p.start_ns + p.dur_ns) AS e FROM tracks t JOIN phases p ON p.id = t.phase_id"
	    "   WHERE t.spans > 0 GROUP BY t.source_id)"
	    " SELECT pn.text, sn.text, coalesce(src.rank, -1), n.dur_ns - n.self_ns,"
	    "  win.e - win.s, t.spans, t.id, n.dur_ns"
	    " FROM tracks t JOIN phases n ON n.id = t.phase_id"
	    " JOIN strings sn ON sn.id = n.name_id"
	    " JOIN phases pr ON pr.id = n.parent_id JOIN strings pn ON pn.id = pr.name_id"
	    " JOIN sources src ON src.id = t.source_id JOIN win ON win.sid = t.source_id"
	    " WHERE n.kind = %d ORDER BY t.source_id, pn.text, n.start_ns",
	    PHASE_STREAM);
	sqlite3_stmt *q;
	int rc = prepare(db, sql, &q, err);
	free(sql);
	if (rc < 0)
		return -1;
	size_t alloc = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(s->streams, s->nstreams + 1, alloc);
		struct summary_stream *x = &s->streams[s->nstreams++];
		x->process = col_strdup_or_null(q, 0);
		x->stream = col_strdup_or_null(q, 1);
		x->rank = col_int32(q, 2);
		x->busy_ns = col_int(q, 3);
		x->source_window_ns = col_int(q, 4);
		x->items = col_int(q, 5);
		x->track_id = col_int(q, 6);
		x->window_ns = col_int(q, 7);
	}
	sqlite3_finalize(q);
	return 0;
}

int summary_load(struct model *m, struct summary *s, int top_n, char **err)
{
	memset(s, 0, sizeof(*s));
	sqlite3 *db = store_db(model_store(m));
	if (load_sources(db, s, err) < 0 ||
	    load_ops(db, "sum(p.dur_ns)", top_n, &s->by_total, &s->nby_total, err) < 0 ||
	    load_ops(db, "sum(p.self_ns)", top_n, &s->by_self, &s->nby_self, err) < 0 ||
	    load_streams(db, s, err) < 0) {
		summary_release(s);
		return -1;
	}
	return 0;
}

static void free_ops(struct summary_op *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(o[i].name);
	free(o);
}

void summary_release(struct summary *s)
{
	for (size_t i = 0; i < s->nsources; i++) {
		struct summary_source *src = &s->sources[i];
		free(src->path);
		free(src->format);
		free(src->compression);
		free(src->anchor);
		free(src->host);
		for (size_t k = 0; k < src->ndiags; k++) {
			free(src->diags[k].code);
			free(src->diags[k].message);
			free(src->diags[k].example);
		}
		free(src->diags);
	}
	free(s->sources);
	free_ops(s->by_total, s->nby_total);
	free_ops(s->by_self, s->nby_self);
	for (size_t i = 0; i < s->nstreams; i++) {
		free(s->streams[i].process);
		free(s->streams[i].stream);
	}
	free(s->streams);
	memset(s, 0, sizeof(*s));
}
