/*
 * Walks up the phase tree that stop at a loop; see ptree.h.
 */
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/store/ptree.h"
#include "model/util/xalloc.h"

char *ptree_loop_error(const char *path, int64_t id)
{
	return xasprintf("%s: phase %lld's parents form a loop", path, (long long)id);
}

int ptree_up(sqlite3 *db, const char *path, int64_t id, int64_t **chain, size_t *n, char **err)
{
	sqlite3_stmt *q = NULL;
	struct ptree_walk w;
	int64_t *v = NULL;
	size_t len = 0, alloc = 0;
	int rc = -1, step;
	if (sqlite3_prepare_v2(db, "SELECT parent_id FROM phases WHERE id = ?1", -1, &q, NULL) !=
	    SQLITE_OK)
		goto fail;
	ptree_walk_init(&w, id);
	for (int64_t cur = id;;) {
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, cur);
		if ((step = sqlite3_step(q)) != SQLITE_ROW) {
			if (step != SQLITE_DONE)
				goto fail;
			break; /* no such phase: the chain ends above the last */
		}
		XGROW(v, len + 1, alloc);
		v[len++] = cur;
		if (col_null(q, 0))
			break;
		cur = col_int(q, 0);
		if (ptree_walk_loops(&w, cur)) {
			*err = ptree_loop_error(path, id);
			rc = PTREE_LOOP;
			goto out;
		}
	}
	*chain = v;
	*n = len;
	v = NULL;
	rc = 0;
	goto out;
fail:
	*err = xasprintf("%s: cannot read phases: %s", path, sqlite3_errmsg(db));
out:
	sqlite3_finalize(q);
	free(v);
	return rc;
}

int64_t ptree_loop(const int32_t *parent, size_t n)
{
	/* 0: not seen; 1: on the chain being walked; 2: its chain ends */
	uint8_t *seen = xcalloc(n ? n : 1, 1);
	int64_t found = -1;
	for (size_t i = 0; i < n && found < 0; i++) {
		int64_t x = (int64_t)i;
		while (x >= 0 && (size_t)x < n && !seen[x]) {
			seen[x] = 1;
			x = parent[x];
		}
		if (x >= 0 && (size_t)x < n && seen[x] == 1) {
			found = x;
			break;
		}
		for (x = (int64_t)i; x >= 0 && (size_t)x < n && seen[x] == 1; x = parent[x])
			seen[x] = 2;
	}
	free(seen);
	return found;
}
