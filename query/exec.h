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
	size_t text_bytes;	   /* what those blocks take */
};

/* What one query may take (query_run); a zero field sets no limit. */
struct query_limits {
	/* Wall time, waiting for a writer included: a query past it stops
	 * with "query stopped after DUR; raise --timeout". */
	int64_t timeout_ns;
	/* Bytes of memory: SQLite's (page cache, sorts, temporary tables) and
	 * the result's together, SQLite's own cap coming down as the result
	 * grows, and any one string or blob at most half of it
	 * (SQLITE_LIMIT_LENGTH: it is held twice while read); and as many
	 * again of temporary files (large sorts spill to them;
	 * query/tempcap.h).  Past either the query stops ("raise
	 * --max-memory").  Both caps are process-wide while the query runs;
	 * the memory cap (sqlite3_hard_heap_limit64) counts only where SQLite
	 * keeps its memory statistics (model/store/store.c leaves them on for
	 * processes that read first). */
	int64_t max_memory;
	/* How many times the caller will hold the result, for max_memory: the
	 * explorer keeps a display copy of every cell beside it (2); 0 and 1
	 * mean once. */
	int result_copies;
	/* Polled while the query runs or waits: non-zero stops it (C-c). */
	int (*stop)(void *ctx);
	void *ctx;
};

#define QUERY_TIMEOUT_NS (60 * (int64_t)1000000000) /* the command line's default */
#define QUERY_MAX_MEMORY ((int64_t)1 << 30)	    /* the default everywhere */

/* Opens path read-only (SQLITE_OPEN_READONLY, PRAGMA query_only) and checks
 * that it is a trace.db, waiting while a writer (an import's commit) holds
 * the file, within lim's time limit (NULL: none; without one a minute).
 * Returns 0 or -1 with *err. */
int query_open(const char *path, const struct query_limits *lim, sqlite3 **db, char **err);
/* Closes a connection from query_open (NULL is fine). */
void query_close(sqlite3 *db);

/* Compiles and runs q on db into *out (release it).  max_rows 0: no limit.
 * lim: NULL for none.  While a writer holds the file (an import's commit)
 * the query waits, within its time limit (without one, a minute).  On a
 * bad query returns -1 with *err the message, the query and a caret line
 * under the column, and a hint ("error at column 8: ...\n  Q\n  ^");
 * *qerr, when not NULL, gets the same error's position and text (release
 * it).  A failure while running (a SQLite error, a limit) has no position. */
int query_run(sqlite3 *db, const char *q, size_t max_rows, const struct query_limits *lim,
	      struct query_result *out, struct query_error *qerr, char **err);
void query_result_release(struct query_result *r);
/* s[0..n) copied into r's text blocks, for a result built by hand (the
 * explorer's :diff): r owns the copy. */
char *query_result_text(struct query_result *r, const char *s, size_t n);
/* A result built by hand (the explorer's summaries, tui/summ.c): ncols
 * columns named and typed as cols (names copied), nrows rows of NULL cells
 * to fill, phase_col the first QC_PHASE column; texts copied into it by
 * query_result_text. */
void query_result_init(struct query_result *r, const struct query_column *cols, size_t ncols,
		       size_t nrows);

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
