/*
 * The query compiler: a parsed query (parse.h) to one SQLite SELECT over
 * trace.db plus the values to bind to it.  No user text is ever part of the
 * SQL: every literal becomes a numbered parameter (?N), and every field,
 * function and metric name maps through this module's fixed tables (or, for
 * metrics, through a bound name looked up by gm_metric).  The `sql` escape
 * hatch is the one exception, by design: its text is handed to query_exec,
 * which runs it read-only under an authorizer.
 *
 * The compiled SQL calls the functions of query/funcs.h; it reads the
 * schema of model/store/schema.sql.h and never writes.
 */
#ifndef GRADEML_QUERY_COMPILE_H
#define GRADEML_QUERY_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "query/parse.h"

/* What a result column holds, for formatting and for the explorer. */
enum query_coltype {
	QC_TEXT,
	QC_INT,
	QC_REAL,
	QC_DUR,	  /* nanoseconds */
	QC_TIME,  /* nanoseconds since the Unix epoch */
	QC_PHASE, /* a phase id: the explorer can jump to it */
	QC_ANY,	  /* the sql escape: whatever SQLite returns */
	/* the explorer's own tables (summaries, :diff) only: */
	QC_BYTES, /* bytes */
	QC_RATE,  /* bytes per nanosecond (GB/s) */
	QC_DELTA, /* a difference of nanoseconds, shown signed */
	QC_RATIO, /* a ratio, shown as "1.61x" */
	QC_PCT,	  /* a percentage, shown to two decimals ("28.88"), as the report does */
	/* a metric's value (samples' value, metrics' mean and max): shown in
	 * the unit of its row's "unit" column, which the query adds when it
	 * selects none ("150.8 GB" for 143808 MiB; grademl-tui(1) UNITS) */
	QC_MVAL
};

enum query_ptype { QP_NULL, QP_INT, QP_REAL, QP_TEXT };

struct query_param {
	enum query_ptype type;
	int64_t i;
	double r;
	char *s; /* owned */
};

struct query_column {
	char *name; /* owned */
	enum query_coltype type;
};

/* A metric the query names, checked against the file before it runs. */
struct query_mref {
	char *name, *host; /* owned; host NULL: any */
	int pos, len;
	int need_capacity; /* saturated without a threshold */
};

struct query_plan {
	int raw;   /* the sql escape: sql is the user's statement */
	char *sql; /* owned */
	struct query_param *params;
	size_t nparams, aparams;
	struct query_column *cols; /* empty for raw */
	size_t ncols, acols;
	int phase_col; /* the first QC_PHASE column, or -1 */
	struct query_mref *mrefs;
	size_t nmrefs, amrefs;
	int sql_pos; /* raw: where the statement starts in the query */
};

/* Parses and compiles q.  Returns 0 with *plan filled (release it), or -1
 * with *e set (plan left empty). */
int query_compile(const char *q, struct query_plan *plan, struct query_error *e);
void query_plan_release(struct query_plan *plan);

/* A path glob as an anchored PCRE2 pattern: '*' any characters but '/',
 * '?' one such character, a whole "**" level any number (zero or more) of
 * levels; everything else literal.  The caller frees it. */
char *query_glob_regex(const char *glob);

/* The fields of a source, NULL-terminated (for completion and the man page). */
const char *const *query_fields(enum query_source src);

#endif
