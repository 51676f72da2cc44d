/*
 * One `grademl-tui import` run: open the store, begin the transaction, run
 * the importer of each file, commit; on any failure roll everything back so
 * trace.db is exactly as it was.  Also the workflow/step nodes every source
 * hangs under.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importers/importer.h"
#include "model/xalloc.h"

int64_t import_step_node(struct store *st, const struct import_opts *o, const char *step_name,
			 char **err)
{
	const char *wf = o->workflow ? o->workflow : "workflow";
	int64_t wf_id = store_find_child(st, 0, PHASE_WORKFLOW, wf, err);
	if (wf_id < 0)
		return -1;
	if (!wf_id) {
		struct phase_row r = {.id = store_reserve_phase_id(st), .kind = PHASE_WORKFLOW};
		r.name_id = store_intern(st, wf, strlen(wf), err);
		if (r.name_id < 0 || store_add_phase(st, &r, err) < 0)
			return -1;
		wf_id = r.id;
	}
	int64_t step_id = store_find_child(st, wf_id, PHASE_STEP, step_name, err);
	if (step_id)
		return step_id;
	struct phase_row r = {
		.id = store_reserve_phase_id(st), .parent_id = wf_id, .kind = PHASE_STEP, .depth = 1};
	r.name_id = store_intern(st, step_name, strlen(step_name), err);
	if (r.name_id < 0 || store_add_phase(st, &r, err) < 0)
		return -1;
	return r.id;
}

int import_refresh_window(struct store *st, int64_t node_id, char **err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q, *up;
	if (sqlite3_prepare_v2(db,
			       "SELECT min(start_ns), max(start_ns + dur_ns), count(*) FROM phases"
			       " WHERE parent_id = ?1",
			       -1, &q, NULL) != SQLITE_OK)
		goto bad;
	if (sqlite3_prepare_v2(db, "SELECT parent_id FROM phases WHERE id = ?1", -1, &up, NULL) !=
	    SQLITE_OK) {
		sqlite3_finalize(q);
		goto bad;
	}
	int rc = 0;
	while (node_id > 0 && rc == 0) {
		sqlite3_bind_int64(q, 1, node_id);
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
			int64_t s = sqlite3_column_int64(q, 0), e = sqlite3_column_int64(q, 1);
			rc = store_update_phase_window(st, node_id, s, e - s,
						       sqlite3_column_int64(q, 2), err);
		}
		sqlite3_reset(q);
		sqlite3_bind_int64(up, 1, node_id);
		node_id = sqlite3_step(up) == SQLITE_ROW ? sqlite3_column_int64(up, 0) : 0;
		sqlite3_reset(up);
	}
	sqlite3_finalize(q);
	sqlite3_finalize(up);
	return rc;
bad:
	*err = xasprintf("%s: %s", store_path(st), sqlite3_errmsg(db));
	return -1;
}

/* The common prefix of the files' base names, for a step shared by ranks. */
static char *group_step_name(char *const *paths, size_t n)
{
	const char *first = strrchr(paths[0], '/') ? strrchr(paths[0], '/') + 1 : paths[0];
	size_t len = strlen(first);
	for (size_t i = 1; i < n; i++) {
		const char *b = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
		size_t k = 0;
		while (k < len && b[k] == first[k])
			k++;
		len = k;
	}
	while (len && strchr("0123456789._-", first[len - 1]))
		len--;
	return len ? xstrndup(first, len) : xstrdup("ranks");
}

int import_files(const char *db_path, char *const *paths, size_t npaths, const char *format,
		 const struct import_opts *opts, char **err)
{
	struct store *st = NULL;
	struct input *in = NULL;
	const struct importer *forced = NULL;
	struct import_opts o = *opts;
	char *group = NULL;
	int rc = -1;
	if (format && !(forced = importer_find(format))) {
		*err = xasprintf("unknown format '%s' (try: grademl-tui import --list-formats)",
				 format);
		return -1;
	}
	if (!o.group_step && npaths > 1)
		o.group_step = group = group_step_name(paths, npaths);
	if (store_open(db_path, STORE_WRITE, &st, err) < 0)
		goto out;
	if (store_begin(st, err) < 0)
		goto out;
	for (size_t i = 0; i < npaths; i++) {
		if (input_open(paths[i], &in, err) < 0)
			goto out;
		const struct importer *imp = forced;
		if (!imp) {
			size_t n;
			const unsigned char *peek = input_peek(in, &n);
			imp = importer_sniff(peek, n);
			if (!imp) {
				*err = xasprintf("%s: unrecognised format at byte 0 (not a trace this"
						 " version reads; --format forces one)",
						 paths[i]);
				goto out;
			}
		}
		if (imp->run(in, st, &o, err) < 0)
			goto out;
		input_close(in);
		in = NULL;
	}
	if (store_commit(st, err) < 0)
		goto out;
	rc = 0;
out:
	input_close(in);
	if (st) {
		if (rc < 0)
			store_rollback(st);
		store_close(st);
	}
	free(group);
	return rc;
}
