/*
 * What the details pane shows of one phase beyond its mnode: its
 * attributes, the file it came from and its edges (what it launched, what
 * it waits on).  Read on demand, one phase at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/view/model.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

/* Enough to show; a phase with thousands of edges says how many more. */
#define MAX_EDGES 64

static int read_edges(sqlite3 *db, const struct mnode *n, struct mdetail *d)
{
	static const char sql[] =
	    "SELECT 1, e.kind, e.dst, s.text FROM edges e JOIN phases p ON p.id = e.dst"
	    " JOIN strings s ON s.id = p.name_id WHERE e.src = ?1"
	    " UNION ALL "
	    "SELECT 0, e.kind, e.src, s.text FROM edges e JOIN phases p ON p.id = e.src"
	    " JOIN strings s ON s.id = p.name_id WHERE e.dst = ?1";
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(q, 1, n->id);
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (d->nedges == MAX_EDGES) {
			d->more_edges++;
			continue;
		}
		XGROW(d->edges, d->nedges + 1, alloc);
		struct medge *e = &d->edges[d->nedges++];
		e->outgoing = col_int32(q, 0);
		e->kind = col_int32(q, 1);
		e->other = col_int(q, 2);
		e->name = col_strdup_or_null(q, 3);
	}
	return sqlite3_finalize(q) == SQLITE_OK ? 0 : -1;
}

int model_detail(struct model *m, const struct mnode *n, struct mdetail *d, char **err)
{
	sqlite3 *db = store_db(model_store(m));
	sqlite3_stmt *q = NULL;
	memset(d, 0, sizeof(*d));
	if (!n->id)
		return 0; /* the root has nothing stored */
	if (sqlite3_prepare_v2(db,
			       "SELECT p.attrs, s.path FROM phases p"
			       " LEFT JOIN sources s ON s.id = p.source_id WHERE p.id = ?1",
			       -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(q, 1, n->id);
	if (sqlite3_step(q) == SQLITE_ROW) {
		d->attrs = col_strdup_or_null(q, 0);
		d->source = col_strdup_or_null(q, 1);
	}
	if (sqlite3_finalize(q) != SQLITE_OK || read_edges(db, n, d) < 0)
		goto fail;
	return 0;
fail:
	*err = xasprintf("%s: cannot read phase %lld: %s", store_path(model_store(m)),
			 (long long)n->id, sqlite3_errmsg(db));
	model_detail_release(d);
	return -1;
}

void model_detail_release(struct mdetail *d)
{
	for (size_t i = 0; i < d->nedges; i++)
		free(d->edges[i].name);
	free(d->edges);
	free(d->attrs);
	free(d->source);
	memset(d, 0, sizeof(*d));
}
