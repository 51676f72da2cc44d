/*
 * Running queries: compile (compile.h), check the metrics a query names,
 * register the SQL functions (funcs.h), prepare under an authorizer that
 * allows reading only, bind, step, and collect a result table.
 *
 * This is the API the explorer and the CLI call.  The connection belongs to
 * the caller; query_open gives a read-only one (defence in depth: the
 * authorizer already denies every write, ATTACH/DETACH, PRAGMAs that change
 * anything and functions that could write).  A result owns all its strings.
 */
#ifndef GRADEML_QUERY_EXEC_H
#define GRADEML_QUERY_EXEC_H

#include <sqlite3.h>
#include <stddef.h>

#include "query/compile.h"

/* One cell: type says which member holds the value (16 bytes, since a
 * result of many rows is mostly cells). */
struct query_value {
	enum query_ptype type; /* QP_NULL, QP_INT, QP_REAL, QP_TEXT */
	union {
		int64_t i; /* QP_INT */
		double r;  /* QP_REAL */
		char *s;   /* QP_TEXT: NUL-terminated, owned by the result; equal
			    * texts may share one copy */
	};
};

struct query_result {
	size_t ncols, nrows;
	struct query_column *cols; /* names and types; QC_ANY for the sql escape */
	struct query_value *cells; /* nrows x ncols, row-major */
	int phase_col;		   /* a column of phase ids to jump to, or -1 */
	int truncated;		   /* more rows than max_rows were left out */
	void *text;		   /* owns the cells' strings (blocks of many) */
};

/* Opens path read-only (SQLITE_OPEN_READONLY, PRAGMA query_only) and checks
 * that it is a trace.db.  Returns 0 or -1 with *err. */
int query_open(const char *path, sqlite3 **db, char **err);
/* Closes a connection from query_open (NULL is fine). */
void query_close(sqlite3 *db);

/* Compiles and runs q on db into *out (release it).  max_rows 0: no limit.
 * On a bad query returns -1 with *err the message, the query and a caret
 * line under the column, and a hint ("error at column 8: ...\n  Q\n  ^");
 * *qerr, when not NULL, gets the same error's position and text (release
 * it).  A failure while running (a SQLite error) has no position. */
int query_run(sqlite3 *db, const char *q, size_t max_rows, struct query_result *out,
	      struct query_error *qerr, char **err);
void query_result_release(struct query_result *r);

static inline const struct query_value *query_cell(const struct query_result *r, size_t row,
						   size_t col)
{
	return &r->cells[row * r->ncols + col];
}

/* The authorizer query_run installs while it prepares a statement
 * (sqlite3_set_authorizer's callback): SELECT, reads, recursive CTEs, the
 * functions not on a deny list and a few read-only PRAGMAs; nothing else. */
int query_authorizer(void *unused, int action, const char *a, const char *b, const char *db,
		     const char *trigger);

/* Completion for the word that ends text (what is left of the cursor):
 * sources first, stage keywords after '|', metric names after with and
 * saturated and after metrics/samples, phase kinds and names after
 * `kind =` and `name =`, else the fields of the source and the operators.
 * Fills *cands (sorted, unique, each starting with the word; free each and
 * the array) and *start (where the word begins in text).  db may be NULL
 * (no metric or phase names then).  Returns the number of candidates. */
size_t query_complete(sqlite3 *db, const char *text, char ***cands, size_t *start);

#endif
