/*
 * What the query compiler's three files share (internal to them; callers
 * use compile.h).  compile.c turns a parsed query into SQL: the compiler's
 * state and its errors, the bound parameters, path globs, conditions,
 * grouping, aggregates, order and output, and the SELECT they make.
 * compile_source.c holds what a source is: each one's fields as fixed SQL,
 * its FROM clause, time span and default columns, and the scope a query
 * builds over it with the names looked up in it.  compile_correlate.c
 * relates rows to time: metric references, the windows of during, between
 * and within, and the metric columns of with and saturated.
 */
#ifndef GRADEML_QUERY_COMPILE_INT_H
#define GRADEML_QUERY_COMPILE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/store.h"
#include "model/util/sbuf.h"
#include "query/compile.h"

/* The trace's start: the earliest root phase, else the earliest sample. */
#define TSTART_SQL                                                                                 \
	"(SELECT coalesce((SELECT min(start_ns) FROM phases WHERE parent_id IS NULL),"             \
	" (SELECT min(t_ns) FROM samples), 0))"

/* The phase running at an event: its own phase_id, else the deepest phase
 * on its track that contains its time, else the deepest phase anywhere. */
#define RUNNING_SQL "coalesce(e.phase_id, gm_running(e.track_id, e.t_ns))"

/* A phase's host: its track's, else its attrs' (none where they are no JSON). */
#define PHASE_ATTRS_HOST_SQL STORE_ATTR_SQL("p.attrs", "$.host")
#define PHASE_HOST_SQL                                                                             \
	"coalesce((SELECT host FROM tracks WHERE id = p.track_id), " PHASE_ATTRS_HOST_SQL ")"

struct field {
	const char *name;
	enum query_coltype type;
	const char *sql;		   /* "$W0"/"$W1": the scope's window bounds */
	const char *icol, *itable, *itext; /* interned: id column, table, text column */
};

/* Per source: its fields, alias, FROM clause, window (start and end SQL)
 * and default columns. */
struct source_info {
	const struct field *fields;
	const char *const *names;
	const char *from;
	const char *t0, *t1; /* the row's time span; t1 == t0 for instants */
	const char *defaults[8];
};

/* A computed column a stage adds (with, within, saturated, during on
 * metrics): addressable by name like a field. */
struct extra {
	char *name;
	enum query_coltype type;
	char *sql;
};

struct outcol {
	char *name;
	enum query_coltype type;
	char *sql;
	char *group_sql; /* a by key: what GROUP BY uses */
	int intkey;	 /* a by key: group_sql is one integer column */
	char op;	 /* an aggregate gm_hagg can compute (its spec letter), or 0 */
	char *arg_sql;	 /* its argument, or NULL for count(*) */
};

enum level { LV_ROWS, LV_BY, LV_STATS, LV_POST, LV_LIMIT };

struct scope {
	enum query_source src;
	const struct source_info *si;
	int window_mode; /* a during/within sub-query: selects wid, w0, w1 */
	struct sbuf from, where, having, order;
	int has_where, has_having, has_order;
	struct extra *extras;
	size_t nextras, aextras;
	struct outcol *keys, *aggs, *sel;
	size_t nkeys, akeys, naggs, aaggs, nsel, asel;
	int grouped, aggregated;
	long long limit; /* -1: none */
	enum level level;
	const char *level_word;
	char *w0, *w1; /* metrics: the window of mean/max/sat */
	int windowed;
	int joined; /* metrics joined with a window CTE as w */
};

struct cc {
	const char *q;
	struct query_plan *plan;
	struct query_error *e;
	struct sbuf ctes;
	int ncte;
	int failed;
};

/* ---- compile.c ---- */

/* Records the first error (taking msg and hint, which may be NULL); later
 * ones are freed. */
void compile_fail(struct cc *c, int pos, int len, char *msg, char *hint);
/* Each binds a new parameter and writes its ?N into out. */
void compile_bind_text(struct cc *c, struct sbuf *out, const char *s);
void compile_bind_int(struct cc *c, struct sbuf *out, int64_t v);
void compile_bind_null(struct cc *c, struct sbuf *out);
void compile_bind_number(struct cc *c, struct sbuf *out, const struct query_number *n);
void compile_glob(struct cc *c, struct sbuf *out, const char *alias, const char *glob);
void compile_add_where(struct scope *s, const char *cond);
int compile_select(struct cc *c, const struct query_ast *ast, struct scope *s, struct sbuf *out);

/* ---- compile_source.c ---- */

extern const char *const source_words[]; /* by enum query_source */
void source_scope_init(struct scope *s, enum query_source src);
void source_scope_release(struct scope *s);
const struct field *source_field(const struct scope *s, const char *name);
const struct extra *source_extra(const struct scope *s, const char *name);
char *source_field_sql(const struct scope *s, const char *tmpl);
const char *source_key_shown(const struct scope *s, const struct field *f);
void source_add_extra(struct scope *s, const char *name, enum query_coltype type, char *sql);
char *source_field_hint(const struct scope *s, const char *name);

/* ---- compile_correlate.c ---- */

int correlate_metric_id(struct cc *c, struct sbuf *out, const struct qnode *n, const char *host_sql,
			int need_capacity, char **display);
int correlate_during(struct cc *c, struct scope *s, const struct qstage *st);
int correlate_between(struct cc *c, struct scope *s, const struct qstage *st);
int correlate_within(struct cc *c, struct scope *s, const struct qstage *st);
int correlate_with(struct cc *c, struct scope *s, const struct qstage *st);
int correlate_saturated(struct cc *c, struct scope *s, const struct qstage *st);

#endif
