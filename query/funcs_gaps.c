/*
 * The idle gaps of device streams as a table, for the query language's
 * `gaps` source: the eponymous virtual table gm_gaps, one row per gap as
 * the GPU breakdown cuts them (model/analysis/gpubreak.h: each stream's
 * counted work, the last profiler step left out as HTA leaves it, each gap
 * from the end of all its work so far to the next start) with its cause
 * (model/analysis/idle.h).  The gaps are computed once per registration
 * of the functions (query_funcs_register: once per query), on the first
 * scan; a gap's host phase (the deepest phase on the launching
 * thread's track at the gap's middle, down the thread's tree through the
 * parent index) when its column is first read.
 */
#include <stdlib.h>
#include <string.h>

#include "model/analysis/gpubreak.h"
#include "model/store/col.h"
#include "model/util/xalloc.h"
#include "query/funcs_int.h"

struct gap_row {
	int64_t source, track, start, end, thread;
	int rank; /* -1: none */
	int cause;
	int64_t op; /* -1: not looked up yet; 0: none */
};

struct gaps_vtab {
	sqlite3_vtab base;
	struct qfuncs *f;
};

struct gaps_cursor {
	sqlite3_vtab_cursor base;
	size_t i;
};

enum { COL_SOURCE, COL_RANK, COL_TRACK, COL_START, COL_END, COL_CAUSE, COL_THREAD, COL_OP };

void funcs_gaps_release(struct qfuncs *f)
{
	free(f->gaps);
	f->gaps = NULL;
	f->ngaps = 0;
	f->gaps_loaded = 0;
}

static int gaps_load(struct qfuncs *f, char **err)
{
	struct gpubreak g;
	struct gpubreak_opts o;
	size_t alloc = 0;
	if (f->gaps_loaded)
		return 0;
	gpubreak_default_opts(&o);
	o.gaps = 1;
	if (gpubreak_load_db(f->db, &o, &g, err) < 0)
		return -1;
	for (size_t r = 0; r < g.nranks; r++)
		for (size_t s = 0; s < g.ranks[r].nstreams; s++) {
			const struct gpubreak_stream *x = &g.ranks[r].streams[s];
			for (size_t k = 0; k < x->ngaps; k++) {
				XGROW(f->gaps, f->ngaps + 1, alloc);
				f->gaps[f->ngaps++] =
				    (struct gap_row){g.ranks[r].source_id, x->track_id,
						     x->gaps[k].start,	   x->gaps[k].end,
						     x->gaps[k].thread,	   g.ranks[r].rank,
						     x->gaps[k].cause,	   -1};
			}
		}
	gpubreak_release(&g);
	f->gaps_loaded = 1;
	return 0;
}

/* The deepest phase on thread's track that holds t, from the track's node
 * down; 0 when none, -1 on a SQLite error. */
static int64_t host_phase(struct qfuncs *f, int64_t thread, int64_t t)
{
	if (!f->gap_node_q &&
	    (sqlite3_prepare_v2(f->db, "SELECT phase_id FROM tracks WHERE id = ?1", -1,
				&f->gap_node_q, NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(f->db,
				"SELECT id, start_ns + dur_ns FROM phases WHERE parent_id = ?1"
				" AND start_ns <= ?3 AND track_id = ?2 ORDER BY start_ns DESC"
				" LIMIT 1",
				-1, &f->gap_child_q, NULL) != SQLITE_OK))
		return -1;
	int64_t at = 0, found = 0;
	sqlite3_bind_int64(f->gap_node_q, 1, thread);
	if (sqlite3_step(f->gap_node_q) == SQLITE_ROW)
		at = col_int(f->gap_node_q, 0);
	sqlite3_reset(f->gap_node_q);
	/* a tree deeper than this has looped */
	for (int depth = 0; at && depth < 4096; depth++) {
		sqlite3_stmt *q = f->gap_child_q;
		sqlite3_bind_int64(q, 1, at);
		sqlite3_bind_int64(q, 2, thread);
		sqlite3_bind_int64(q, 3, t);
		at = 0;
		if (sqlite3_step(q) == SQLITE_ROW && col_int(q, 1) > t)
			at = found = col_int(q, 0);
		sqlite3_reset(q);
	}
	return found;
}

static int gaps_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
			sqlite3_vtab **out, char **err)
{
	(void)argc;
	(void)argv;
	(void)err;
	int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(source_id INTEGER, rank INTEGER,"
					  " track_id INTEGER, start_ns INTEGER, end_ns INTEGER,"
					  " cause TEXT, thread_id INTEGER, op_id INTEGER)");
	if (rc != SQLITE_OK)
		return rc;
	struct gaps_vtab *v = xcalloc(1, sizeof(*v));
	v->f = aux;
	*out = &v->base;
	return SQLITE_OK;
}

static int gaps_disconnect(sqlite3_vtab *v)
{
	free(v);
	return SQLITE_OK;
}

static int gaps_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct gaps_vtab *g = (struct gaps_vtab *)v;
	info->estimatedCost = g->f->gaps_loaded ? (double)g->f->ngaps + 1 : 1e6;
	return SQLITE_OK;
}

static int gaps_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	(void)v;
	struct gaps_cursor *c = xcalloc(1, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int gaps_close(sqlite3_vtab_cursor *c)
{
	free(c);
	return SQLITE_OK;
}

static int gaps_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr, int argc,
		       sqlite3_value **argv)
{
	(void)idx;
	(void)idxstr;
	(void)argc;
	(void)argv;
	struct gaps_vtab *v = (struct gaps_vtab *)cur->pVtab;
	char *err = NULL;
	if (gaps_load(v->f, &err) < 0) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = sqlite3_mprintf("%s", err ? err : "cannot read the idle gaps");
		free(err);
		return SQLITE_ERROR;
	}
	((struct gaps_cursor *)cur)->i = 0;
	return SQLITE_OK;
}

static int gaps_next(sqlite3_vtab_cursor *cur)
{
	((struct gaps_cursor *)cur)->i++;
	return SQLITE_OK;
}

static int gaps_eof(sqlite3_vtab_cursor *cur)
{
	struct gaps_vtab *v = (struct gaps_vtab *)cur->pVtab;
	return ((struct gaps_cursor *)cur)->i >= v->f->ngaps;
}

static int gaps_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct gaps_vtab *v = (struct gaps_vtab *)cur->pVtab;
	struct gap_row *r = &v->f->gaps[((struct gaps_cursor *)cur)->i];
	switch (col) {
	case COL_SOURCE:
		sqlite3_result_int64(ctx, r->source);
		break;
	case COL_RANK:
		if (r->rank >= 0)
			sqlite3_result_int(ctx, r->rank);
		break;
	case COL_TRACK:
		sqlite3_result_int64(ctx, r->track);
		break;
	case COL_START:
		sqlite3_result_int64(ctx, r->start);
		break;
	case COL_END:
		sqlite3_result_int64(ctx, r->end);
		break;
	case COL_CAUSE:
		sqlite3_result_text(ctx, idle_cause_name(r->cause), -1, SQLITE_STATIC);
		break;
	case COL_THREAD:
		if (r->thread)
			sqlite3_result_int64(ctx, r->thread);
		break;
	case COL_OP:
		if (r->op < 0 && r->thread) {
			int64_t op =
			    host_phase(v->f, r->thread, r->start + (r->end - r->start) / 2);
			if (op < 0) {
				sqlite3_result_error(ctx, sqlite3_errmsg(v->f->db), -1);
				return SQLITE_ERROR;
			}
			r->op = op;
		}
		if (r->op > 0)
			sqlite3_result_int64(ctx, r->op);
		break;
	}
	return SQLITE_OK;
}

static int gaps_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct gaps_cursor *)cur)->i + 1;
	return SQLITE_OK;
}

static const sqlite3_module gaps_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only: no CREATE VIRTUAL TABLE */
    .xConnect = gaps_connect,
    .xBestIndex = gaps_best_index,
    .xDisconnect = gaps_disconnect,
    .xDestroy = gaps_disconnect,
    .xOpen = gaps_open,
    .xClose = gaps_close,
    .xFilter = gaps_filter,
    .xNext = gaps_next,
    .xEof = gaps_eof,
    .xColumn = gaps_column,
    .xRowid = gaps_rowid,
};

int funcs_gaps_register(sqlite3 *db, struct qfuncs *f)
{
	return sqlite3_create_module_v2(db, "gm_gaps", &gaps_module, f, NULL);
}
