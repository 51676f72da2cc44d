/*
 * The query compiler (see compile.h).  One query becomes one SELECT:
 *
 *   WITH w1 AS MATERIALIZED (windows of during/within), ...
 *   SELECT columns FROM source WHERE filters GROUP BY keys HAVING ...
 *   ORDER BY ... LIMIT ?
 *
 * Fields come from per-source tables of fixed SQL.  Fields whose text is
 * interned (name, kind, category) compare through the interning table, so
 * `name ~ "re"` runs the regex once per distinct string, not once per phase,
 * and `by name` groups on the integer id.  Stages must come in the order
 * row filters, by, stats, sort/where-on-aggregates, top/limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "query/compile.h"
#include "query/funcs.h"
#include "model/util/xalloc.h"

/* The trace's start: the earliest root phase, else the earliest sample. */
#define TSTART_SQL                                                                                 \
	"(SELECT coalesce((SELECT min(start_ns) FROM phases WHERE parent_id IS NULL),"             \
	" (SELECT min(t_ns) FROM samples), 0))"

/* The phase running at an event: its own phase_id, else the deepest phase
 * on its track that contains its time, else the deepest phase anywhere. */
#define RUNNING_SQL "coalesce(e.phase_id, gm_running(e.track_id, e.t_ns))"

/* A column of the track of the row aliased a (tracks' primary key serves it). */
#define TRACK_SQL(col, a) "(SELECT " col " FROM tracks WHERE id = " a ".track_id)"

#define PHASE_HOST_SQL                                                                             \
	"coalesce((SELECT host FROM tracks WHERE id = p.track_id), json_extract(p.attrs, "         \
	"'$.host'))"

struct field {
	const char *name;
	enum query_coltype type;
	const char *sql;		   /* "$W0"/"$W1": the scope's window bounds */
	const char *icol, *itable, *itext; /* interned: id column, table, text column */
};

#define F_STRUCT(n, t, s, ic, it, ix) {n, t, s, ic, it, ix},
#define F_NAME(n, t, s, ic, it, ix)   n,

#define PHASE_FIELDS(X)                                                                            \
	X("id", QC_PHASE, "p.id", NULL, NULL, NULL)                                                \
	X("parent", QC_PHASE, "p.parent_id", NULL, NULL, NULL)                                     \
	X("kind", QC_TEXT, "gm_kind(p.kind)", "p.kind", "phase_kinds", "name")                     \
	X("name", QC_TEXT, "gm_str(p.name_id)", "p.name_id", "strings", "text")                    \
	X("category", QC_TEXT, "gm_str(p.cat_id)", "p.cat_id", "strings", "text")                  \
	X("path", QC_TEXT, "gm_path(p.id)", NULL, NULL, NULL)                                      \
	X("host", QC_TEXT, PHASE_HOST_SQL, NULL, NULL, NULL)                                       \
	X("track", QC_INT, "p.track_id", NULL, NULL, NULL)                                         \
	X("track.name", QC_TEXT, TRACK_SQL("name", "p"), NULL, NULL, NULL)                         \
	X("rank", QC_INT, TRACK_SQL("rank", "p"), NULL, NULL, NULL)                                \
	X("source", QC_INT, "p.source_id", NULL, NULL, NULL)                                       \
	X("start", QC_TIME, "p.start_ns", NULL, NULL, NULL)                                        \
	X("end", QC_TIME, "(p.start_ns + p.dur_ns)", NULL, NULL, NULL)                             \
	X("dur", QC_DUR, "p.dur_ns", NULL, NULL, NULL)                                             \
	X("self", QC_DUR, "p.self_ns", NULL, NULL, NULL)                                           \
	X("device", QC_DUR, "p.device_ns", NULL, NULL, NULL)                                       \
	X("children", QC_INT, "p.child_count", NULL, NULL, NULL)                                   \
	X("depth", QC_INT, "p.depth", NULL, NULL, NULL)

#define EVENT_FIELDS(X)                                                                            \
	X("id", QC_INT, "e.id", NULL, NULL, NULL)                                                  \
	X("t", QC_TIME, "e.t_ns", NULL, NULL, NULL)                                                \
	X("name", QC_TEXT, "gm_str(e.name_id)", "e.name_id", "strings", "text")                    \
	X("level", QC_TEXT, "e.level", NULL, NULL, NULL)                                           \
	X("host", QC_TEXT, "(SELECT host FROM tracks WHERE id = e.track_id)", NULL, NULL, NULL)    \
	X("track", QC_INT, "e.track_id", NULL, NULL, NULL)                                         \
	X("track.name", QC_TEXT, TRACK_SQL("name", "e"), NULL, NULL, NULL)                         \
	X("rank", QC_INT, TRACK_SQL("rank", "e"), NULL, NULL, NULL)                                \
	X("source", QC_INT, "e.source_id", NULL, NULL, NULL)                                       \
	X("phase", QC_PHASE, RUNNING_SQL, NULL, NULL, NULL)                                        \
	X("phase.name", QC_TEXT,                                                                   \
	  "gm_str((SELECT name_id FROM phases WHERE id = " RUNNING_SQL "))", NULL, NULL, NULL)     \
	X("phase.path", QC_TEXT, "gm_path(" RUNNING_SQL ")", NULL, NULL, NULL)

#define METRIC_FIELDS(X)                                                                           \
	X("id", QC_INT, "m.id", NULL, NULL, NULL)                                                  \
	X("host", QC_TEXT, "m.host", NULL, NULL, NULL)                                             \
	X("resource", QC_TEXT, "m.resource", NULL, NULL, NULL)                                     \
	X("name", QC_TEXT, "m.name", NULL, NULL, NULL)                                             \
	X("unit", QC_TEXT, "m.unit", NULL, NULL, NULL)                                             \
	X("kind", QC_TEXT, "m.value_kind", NULL, NULL, NULL)                                       \
	X("capacity", QC_REAL, "m.capacity", NULL, NULL, NULL)                                     \
	X("samples", QC_INT, "(SELECT count(*) FROM samples WHERE metric_id = m.id)", NULL, NULL,  \
	  NULL)                                                                                    \
	X("first", QC_TIME, "(SELECT min(t_ns) FROM samples WHERE metric_id = m.id)", NULL, NULL,  \
	  NULL)                                                                                    \
	X("last", QC_TIME, "(SELECT max(t_ns) FROM samples WHERE metric_id = m.id)", NULL, NULL,   \
	  NULL)                                                                                    \
	X("mean", QC_REAL, "gm_twmean(m.id, $W0, $W1)", NULL, NULL, NULL)                          \
	X("max", QC_REAL, "gm_twmax(m.id, $W0, $W1)", NULL, NULL, NULL)                            \
	X("sat", QC_DUR, "CASE WHEN m.capacity > 0 THEN gm_satns(m.id, $W0, $W1, NULL) END", NULL, \
	  NULL, NULL)

#define SAMPLE_FIELDS(X)                                                                           \
	X("metric", QC_TEXT, "m.name", NULL, NULL, NULL)                                           \
	X("metric_id", QC_INT, "s.metric_id", NULL, NULL, NULL)                                    \
	X("host", QC_TEXT, "m.host", NULL, NULL, NULL)                                             \
	X("resource", QC_TEXT, "m.resource", NULL, NULL, NULL)                                     \
	X("unit", QC_TEXT, "m.unit", NULL, NULL, NULL)                                             \
	X("t", QC_TIME, "s.t_ns", NULL, NULL, NULL)                                                \
	X("value", QC_REAL, "s.value", NULL, NULL, NULL)

static const struct field phase_fields[] = {
    PHASE_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const struct field event_fields[] = {
    EVENT_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const struct field metric_fields[] = {
    METRIC_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const struct field sample_fields[] = {
    SAMPLE_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const char *const phase_names[] = {PHASE_FIELDS(F_NAME) NULL};
static const char *const event_names[] = {EVENT_FIELDS(F_NAME) NULL};
static const char *const metric_names[] = {METRIC_FIELDS(F_NAME) NULL};
static const char *const sample_names[] = {SAMPLE_FIELDS(F_NAME) NULL};

/* Per source: its fields, alias, FROM clause, window (start and end SQL)
 * and default columns. */
static const struct source_info {
	const struct field *fields;
	const char *const *names;
	const char *from;
	const char *t0, *t1; /* the row's time span; t1 == t0 for instants */
	const char *defaults[8];
} sources[] = {
    [QS_PHASES] = {phase_fields,
		   phase_names,
		   "phases p",
		   "p.start_ns",
		   "(p.start_ns + p.dur_ns)",
		   {"id", "kind", "name", "dur", "path", NULL}},
    [QS_EVENTS] = {event_fields,
		   event_names,
		   "events e",
		   "e.t_ns",
		   "e.t_ns",
		   {"id", "t", "name", "level", "phase", NULL}},
    [QS_METRICS] = {metric_fields,
		    metric_names,
		    "metrics m",
		    NULL,
		    NULL,
		    {"id", "host", "name", "unit", "samples", "mean", "max", NULL}},
    [QS_SAMPLES] = {sample_fields,
		    sample_names,
		    "samples s JOIN metrics m ON m.id = s.metric_id",
		    "s.t_ns",
		    "s.t_ns",
		    {"metric", "host", "t", "value", NULL}},
};

static const char *const source_words[] = {"phases", "events", "metrics", "samples"};

const char *const *query_fields(enum query_source src)
{
	return sources[src].names;
}

static const char *const agg_names[] = {"count", "sum", "mean", "avg", "min", "max",
					"p50",	 "p90", "p95",	"p99", NULL};

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

static void fail(struct cc *c, int pos, int len, char *msg, char *hint)
{
	if (!c->failed)
		query_error_set(c->e, pos, len, msg, hint);
	else {
		free(msg);
		free(hint);
	}
	c->failed = 1;
}

static char *node_text(struct cc *c, const struct qnode *n)
{
	return xstrndup(c->q + n->pos, (size_t)n->len);
}

/* ---- parameters ---- */

static struct query_param *new_param(struct cc *c, struct sbuf *out)
{
	struct query_plan *p = c->plan;
	XGROW(p->params, p->nparams + 1, p->aparams);
	struct query_param *qp = &p->params[p->nparams++];
	memset(qp, 0, sizeof(*qp));
	sbuf_addf(out, "?%zu", p->nparams);
	return qp;
}

static void bind_text(struct cc *c, struct sbuf *out, const char *s)
{
	struct query_param *qp = new_param(c, out);
	qp->type = QP_TEXT;
	qp->s = xstrdup(s);
}

static void bind_int(struct cc *c, struct sbuf *out, int64_t v)
{
	struct query_param *qp = new_param(c, out);
	qp->type = QP_INT;
	qp->i = v;
}

static void bind_null(struct cc *c, struct sbuf *out)
{
	new_param(c, out)->type = QP_NULL;
}

static void bind_number(struct cc *c, struct sbuf *out, const struct query_number *n)
{
	struct query_param *qp = new_param(c, out);
	if (n->is_int) {
		qp->type = QP_INT;
		qp->i = n->i;
	} else {
		qp->type = QP_REAL;
		qp->r = n->r;
	}
}

/* ---- globs ---- */

char *query_glob_regex(const char *glob)
{
	struct sbuf sb;
	sbuf_init(&sb);
	sbuf_addc(&sb, '^');
	const char *s = glob;
	if (*s != '/')
		sbuf_adds(&sb, "(?:/[^/]*)*/"); /* a relative glob matches at any depth */
	while (*s) {
		if (s[0] == '/' && s[1] == '*' && s[2] == '*' && (s[3] == '/' || !s[3])) {
			sbuf_adds(&sb, "(?:/[^/]*)*");
			s += 3;
			continue;
		}
		char ch = *s++;
		if (ch == '*') {
			sbuf_adds(&sb, "[^/]*");
		} else if (ch == '?') {
			sbuf_adds(&sb, "[^/]");
		} else if (strchr("\\^$.|+()[]{}#", ch) || ch == ' ') {
			sbuf_addc(&sb, '\\');
			sbuf_addc(&sb, ch);
		} else {
			sbuf_addc(&sb, ch);
		}
	}
	sbuf_addc(&sb, '$');
	return sbuf_detach(&sb);
}

/* The glob's shape: levels (excluding "**"), whether it has "**", and its
 * last level when that is a plain name (no wildcard), else NULL. */
static void glob_shape(const char *glob, int *levels, int *any_depth, char **last)
{
	*levels = 0;
	*any_depth = glob[0] != '/';
	*last = NULL;
	const char *s = glob;
	while (*s) {
		if (*s == '/')
			s++;
		const char *end = strchr(s, '/');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		if (n == 2 && s[0] == '*' && s[1] == '*') {
			*any_depth = 1;
		} else {
			(*levels)++;
			if (!end) {
				int wild = memchr(s, '*', n) || memchr(s, '?', n);
				if (!wild && n)
					*last = xstrndup(s, n);
			}
		}
		s += n;
	}
	if (!*any_depth && *levels == 0)
		*levels = 0;
}

/* The condition "phase alias.id's path matches glob" into out. */
static void emit_glob(struct cc *c, struct sbuf *out, const char *alias, const char *glob)
{
	int levels, any;
	char *last;
	glob_shape(glob, &levels, &any, &last);
	char *re = query_glob_regex(glob);
	sbuf_addc(out, '(');
	if (levels > 0 && !any)
		sbuf_addf(out, "%s.depth = %d AND ", alias, levels - 1);
	else if (levels > 1)
		sbuf_addf(out, "%s.depth >= %d AND ", alias, levels - 1);
	if (last) {
		sbuf_addf(out, "%s.name_id = (SELECT id FROM strings WHERE text = ", alias);
		bind_text(c, out, last);
		sbuf_adds(out, ") AND ");
	}
	sbuf_adds(out, "regexp(");
	bind_text(c, out, re);
	sbuf_addf(out, ", gm_path(%s.id)))", alias);
	free(re);
	free(last);
}

/* ---- resolution ---- */

static void scope_init(struct scope *s, enum query_source src)
{
	memset(s, 0, sizeof(*s));
	s->src = src;
	s->si = &sources[src];
	sbuf_init(&s->from);
	sbuf_init(&s->where);
	sbuf_init(&s->having);
	sbuf_init(&s->order);
	sbuf_adds(&s->from, s->si->from);
	s->limit = -1;
	s->w0 = xstrdup("-9223372036854775808");
	s->w1 = xstrdup("9223372036854775807");
}

static void outcols_free(struct outcol *o, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(o[i].name);
		free(o[i].sql);
		free(o[i].group_sql);
		free(o[i].arg_sql);
	}
	free(o);
}

static void scope_release(struct scope *s)
{
	sbuf_release(&s->from);
	sbuf_release(&s->where);
	sbuf_release(&s->having);
	sbuf_release(&s->order);
	for (size_t i = 0; i < s->nextras; i++) {
		free(s->extras[i].name);
		free(s->extras[i].sql);
	}
	free(s->extras);
	outcols_free(s->keys, s->nkeys);
	outcols_free(s->aggs, s->naggs);
	outcols_free(s->sel, s->nsel);
	free(s->w0);
	free(s->w1);
}

static const struct field *find_field(const struct scope *s, const char *name)
{
	for (const struct field *f = s->si->fields; f->name; f++)
		if (!strcasecmp(f->name, name))
			return f;
	return NULL;
}

static const struct extra *find_extra(const struct scope *s, const char *name)
{
	for (size_t i = 0; i < s->nextras; i++)
		if (!strcasecmp(s->extras[i].name, name))
			return &s->extras[i];
	return NULL;
}

/* A field's SQL with the window placeholders filled. */
static char *field_sql(const struct scope *s, const char *tmpl)
{
	struct sbuf sb;
	sbuf_init(&sb);
	for (const char *p = tmpl; *p;) {
		if (!strncmp(p, "$W0", 3)) {
			sbuf_adds(&sb, s->w0);
			p += 3;
		} else if (!strncmp(p, "$W1", 3)) {
			sbuf_adds(&sb, s->w1);
			p += 3;
		} else {
			sbuf_addc(&sb, *p++);
		}
	}
	return sbuf_detach(&sb);
}

static void add_extra(struct scope *s, const char *name, enum query_coltype type, char *sql)
{
	XGROW(s->extras, s->nextras + 1, s->aextras);
	s->extras[s->nextras].name = xstrdup(name);
	s->extras[s->nextras].type = type;
	s->extras[s->nextras].sql = sql;
	s->nextras++;
}

/* Fills the hint for an unknown name: the closest field or extra. */
static char *field_hint(const struct scope *s, const char *name)
{
	const char *cands[128];
	size_t n = 0;
	for (const struct field *f = s->si->fields; f->name && n < 100; f++)
		cands[n++] = f->name;
	for (size_t i = 0; i < s->nextras && n < 127; i++)
		cands[n++] = s->extras[i].name;
	cands[n] = NULL;
	const char *sug = query_suggest(name, cands);
	if (sug)
		return xasprintf("did you mean '%s'?", sug);
	struct sbuf sb;
	sbuf_init(&sb);
	sbuf_addf(&sb, "%s fields:", source_words[s->src]);
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&sb, " %s", cands[i]);
	return sbuf_detach(&sb);
}

/* A resolved term: its SQL (owned), type, and where it came from. */
struct rterm {
	char *sql;
	enum query_coltype type;
	const struct field *field; /* a plain field, or NULL */
	int is_text_literal;	   /* a string or a bare word that names no field */
	int is_number;
	const struct qnode *node;
	char *name;    /* output name */
	char agg_op;   /* an aggregate: its gm_hagg letter, or 0 */
	char *agg_arg; /* its argument's SQL */
};

static void rterm_release(struct rterm *t)
{
	free(t->sql);
	free(t->name);
	free(t->agg_arg);
	memset(t, 0, sizeof(*t));
}

static const char *const agg_sql[][2] = {
    {"count", "count"}, {"sum", "sum"}, {"mean", "avg"}, {"avg", "avg"}, {"min", "min"},
    {"max", "max"},	{"p50", "50"},	{"p90", "90"},	 {"p95", "95"},	 {"p99", "99"},
};

static int resolve_term(struct cc *c, struct scope *s, const struct qnode *n, int post,
			int literal_ok, struct rterm *out);

/* An aggregate call: count, count(x), sum(x), mean/avg(x), min, max, pNN. */
static int resolve_agg(struct cc *c, struct scope *s, const struct qnode *n, struct rterm *out)
{
	size_t k;
	for (k = 0; k < sizeof(agg_sql) / sizeof(agg_sql[0]); k++)
		if (!strcasecmp(n->text, agg_sql[k][0]))
			break;
	if (k == sizeof(agg_sql) / sizeof(agg_sql[0])) {
		const char *sug = query_suggest(n->text, agg_names);
		fail(c, n->pos, (int)strlen(n->text), xasprintf("unknown function '%s'", n->text),
		     sug ? xasprintf("did you mean '%s'?", sug)
			 : xstrdup("aggregates: count sum mean avg min max p50 p90 p95 p99"));
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->node = n;
	if (!n->a) {
		if (k != 0) {
			fail(c, n->pos, n->len, xasprintf("%s() needs a field", agg_sql[k][0]),
			     xasprintf("e.g. %s(dur)", agg_sql[k][0]));
			return -1;
		}
		out->sql = xstrdup("count(*)");
		out->type = QC_INT;
		out->name = xstrdup("count");
		out->agg_op = 'c';
		return 0;
	}
	struct rterm arg;
	if (n->a->kind != QN_WORD) {
		fail(c, n->a->pos, n->a->len, xasprintf("%s() takes a field", agg_sql[k][0]),
		     xasprintf("e.g. %s(dur)", agg_sql[k][0]));
		return -1;
	}
	if (resolve_term(c, s, n->a, 0, 0, &arg) < 0)
		return -1;
	if (k == 0) {
		out->sql = xasprintf("count(%s)", arg.sql);
		out->type = QC_INT;
	} else if (k >= 6) {
		out->sql = xasprintf("gm_pct(%s, %s)", arg.sql, agg_sql[k][1]);
		out->type = arg.type == QC_DUR || arg.type == QC_TIME ? arg.type : QC_REAL;
	} else {
		out->sql = xasprintf("%s(%s)", agg_sql[k][1], arg.sql);
		out->type = arg.type == QC_PHASE ? QC_INT : arg.type;
		if (!strcmp(agg_sql[k][1], "avg") && arg.type != QC_DUR && arg.type != QC_TIME)
			out->type = QC_REAL;
	}
	static const char ops[] = "CsaanxXXXX"; /* gm_hagg letters; X: not hashable */
	out->agg_op = ops[k] == 'X' || arg.type == QC_TEXT ? 0 : ops[k];
	out->agg_arg = xstrdup(arg.sql);
	out->name = xasprintf("%s(%s)", agg_sql[k][0], arg.name);
	for (char *p = out->name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	rterm_release(&arg);
	return 0;
}

/* Resolves a term.  post: after stats, where names are group keys and
 * aggregates; literal_ok: a bare word naming no field is a text value. */
static int resolve_term(struct cc *c, struct scope *s, const struct qnode *n, int post,
			int literal_ok, struct rterm *out)
{
	memset(out, 0, sizeof(*out));
	out->node = n;
	switch (n->kind) {
	case QN_NUMBER:
		out->sql = NULL; /* bound by the caller, who knows the context */
		out->is_number = 1;
		out->type = n->num.kind == QU_TIME ? QC_DUR : n->num.is_int ? QC_INT : QC_REAL;
		return 0;
	case QN_STRING:
	case QN_PATH:
		out->is_text_literal = 1;
		out->type = QC_TEXT;
		return 0;
	case QN_CALL:
		if (!post && !s->aggregated) {
			/* only valid where aggregates are: stats, top, sort after stats */
			fail(c, n->pos, n->len,
			     xasprintf("'%s' is an aggregate; it belongs in stats, top or sort",
				       n->text),
			     xstrdup("e.g. phases | by name | stats count, sum(dur)"));
			return -1;
		}
		return resolve_agg(c, s, n, out);
	case QN_WORD: {
		if (post) {
			for (size_t i = 0; i < s->nkeys; i++)
				if (!strcasecmp(s->keys[i].name, n->text)) {
					out->sql = xstrdup(s->keys[i].sql);
					out->type = s->keys[i].type;
					out->name = xstrdup(s->keys[i].name);
					return 0;
				}
			if (!strcasecmp(n->text, "count")) {
				out->sql = xstrdup("count(*)");
				out->type = QC_INT;
				out->name = xstrdup("count");
				return 0;
			}
			if (literal_ok) {
				out->is_text_literal = 1;
				out->type = QC_TEXT;
				return 0;
			}
			fail(c, n->pos, n->len,
			     xasprintf("'%s' is not a group key or an aggregate here", n->text),
			     xstrdup("after stats, use the by keys and aggregates such as "
				     "count or sum(dur)"));
			return -1;
		}
		const struct extra *x = find_extra(s, n->text);
		if (x) {
			out->sql = xstrdup(x->sql);
			out->type = x->type;
			out->name = xstrdup(x->name);
			return 0;
		}
		const struct field *f = find_field(s, n->text);
		if (f) {
			out->field = f;
			out->sql = field_sql(s, f->sql);
			out->type = f->type;
			out->name = xstrdup(f->name);
			return 0;
		}
		if (literal_ok) {
			out->is_text_literal = 1;
			out->type = QC_TEXT;
			return 0;
		}
		if (!strcasecmp(n->text, "count") && s->aggregated) {
			out->sql = xstrdup("count(*)");
			out->type = QC_INT;
			out->name = xstrdup("count");
			return 0;
		}
		fail(c, n->pos, n->len, xasprintf("unknown field '%s'", n->text),
		     field_hint(s, n->text));
		return -1;
	}
	default:
		fail(c, n->pos, n->len, xstrdup("expected a field"), NULL);
		return -1;
	}
}

static const char *type_word(enum query_coltype t)
{
	switch (t) {
	case QC_DUR:
		return "a duration";
	case QC_TIME:
		return "a time";
	case QC_TEXT:
		return "text";
	default:
		return "a number";
	}
}

/* The value side of a comparison against a field of type ft, into out. */
static int emit_value(struct cc *c, struct scope *s, struct sbuf *out, const struct rterm *lhs,
		      const struct rterm *v)
{
	const struct qnode *n = v->node;
	enum query_coltype ft = lhs->type;
	if (v->sql) {
		sbuf_adds(out, v->sql);
		return 0;
	}
	if (v->is_number) {
		enum query_unit_kind u = n->num.kind;
		if (ft == QC_TEXT) {
			/* text compared with a number: bind the token as typed */
			char *t = node_text(c, n);
			bind_text(c, out, t);
			free(t);
			return 0;
		}
		if ((ft == QC_DUR || ft == QC_TIME) && (u == QU_BYTES || u == QU_PERCENT)) {
			fail(c, n->pos, n->len,
			     xasprintf("'%s' is %s; this value is not", lhs->name, type_word(ft)),
			     xstrdup("time units: ns us ms s min h"));
			return -1;
		}
		if (ft == QC_TIME && u == QU_TIME) {
			/* a duration against a time: an offset from the trace start */
			sbuf_adds(out, "(" TSTART_SQL " + ");
			bind_number(c, out, &n->num);
			sbuf_addc(out, ')');
			return 0;
		}
		bind_number(c, out, &n->num);
		return 0;
	}
	/* text */
	if (ft != QC_TEXT) {
		fail(c, n->pos, n->len, xasprintf("'%s' is %s, not text", lhs->name, type_word(ft)),
		     xstrdup(ft == QC_DUR ? "compare it with a duration such as 5ms"
					  : "compare it with a number"));
		return -1;
	}
	bind_text(c, out, n->text);
	return 0;
}

static int is_interned(const struct rterm *t)
{
	return t->field && t->field->icol;
}

/* Checks a value of the phase kind field against the known kinds. */
static int check_kind(struct cc *c, const struct rterm *lhs, const struct qnode *v)
{
	if (!lhs->field || strcmp(lhs->field->name, "kind") || lhs->field->type != QC_TEXT ||
	    strcmp(lhs->field->itable ? lhs->field->itable : "", "phase_kinds"))
		return 0;
	const char *kinds[PHASE_KIND_COUNT + 1];
	for (int k = 1; k < PHASE_KIND_COUNT; k++) {
		kinds[k - 1] = store_kind_name(k);
		if (!strcmp(kinds[k - 1], v->text))
			return 0;
	}
	kinds[PHASE_KIND_COUNT - 1] = NULL;
	const char *sug = query_suggest(v->text, kinds);
	fail(c, v->pos, v->len, xasprintf("unknown phase kind '%s'", v->text),
	     sug ? xasprintf("did you mean '%s'?", sug)
		 : xstrdup("kinds: workflow step rank process thread stream profiler_step "
			   "operator annotation runtime kernel memcpy memset gpu_annotation "
			   "async span application job stage task"));
	return -1;
}

static int emit_expr(struct cc *c, struct scope *s, struct sbuf *out, const struct qnode *n,
		     int post);

static int emit_cmp(struct cc *c, struct scope *s, struct sbuf *out, const struct qnode *n,
		    int post)
{
	struct rterm a, b;
	enum query_tok op = n->op;
	int rc = -1;
	memset(&b, 0, sizeof(b));
	if (resolve_term(c, s, n->a, post, 0, &a) < 0)
		return -1;
	if (resolve_term(c, s, n->b, post, 1, &b) < 0)
		goto out;
	if (b.is_text_literal && n->b->kind == QN_WORD) {
		/* a bare word value: keep its text */
		b.node = n->b;
	}
	if (op == QT_MATCH || op == QT_NMATCH) {
		if (!b.is_text_literal) {
			fail(c, n->b->pos, n->b->len,
			     xstrdup("a regular expression must be a string"),
			     xstrdup("e.g. name ~ \"^aten::(mm|addmm)$\""));
			goto out;
		}
		int off = 0;
		char *why = NULL;
		if (query_regex_check(n->b->text, &off, &why) < 0) {
			int quote = n->b->kind == QN_STRING ? 1 : 0;
			int pos = n->b->pos + quote + off;
			if (pos >= n->b->pos + n->b->len)
				pos = n->b->pos + n->b->len - 1;
			fail(c, pos, 1, why, xstrdup("PCRE2 syntax; quote the pattern"));
			goto out;
		}
		if (is_interned(&a)) {
			sbuf_addf(out, "(%s%s IN (SELECT id FROM %s WHERE regexp(",
				  op == QT_NMATCH ? "NOT " : "", a.field->icol, a.field->itable);
			bind_text(c, out, n->b->text);
			sbuf_addf(out, ", %s)))", a.field->itext);
		} else {
			sbuf_addf(out, "(%sregexp(", op == QT_NMATCH ? "NOT " : "");
			bind_text(c, out, n->b->text);
			sbuf_addf(out, ", %s))", a.sql);
		}
		rc = 0;
		goto out;
	}
	if (a.field && !strcmp(a.field->name, "path") && s->src == QS_PHASES && b.is_text_literal &&
	    (op == QT_EQ || op == QT_NE)) {
		if (op == QT_NE)
			sbuf_adds(out, "(NOT ");
		emit_glob(c, out, "p", n->b->text);
		if (op == QT_NE)
			sbuf_addc(out, ')');
		rc = 0;
		goto out;
	}
	if (b.is_text_literal && check_kind(c, &a, n->b) < 0)
		goto out;
	if (is_interned(&a) && b.is_text_literal && (op == QT_EQ || op == QT_NE)) {
		sbuf_addf(out, "(%s %s (SELECT id FROM %s WHERE %s = ", a.field->icol,
			  op == QT_EQ ? "=" : "IS NOT", a.field->itable, a.field->itext);
		bind_text(c, out, n->b->text);
		sbuf_adds(out, "))");
		rc = 0;
		goto out;
	}
	static const char *const ops[] = {[QT_EQ] = "=",  [QT_NE] = "!=", [QT_LT] = "<",
					  [QT_LE] = "<=", [QT_GT] = ">",  [QT_GE] = ">="};
	sbuf_addf(out, "(%s %s ", a.sql, ops[op]);
	if (emit_value(c, s, out, &a, &b) < 0)
		goto out;
	sbuf_addc(out, ')');
	rc = 0;
out:
	rterm_release(&a);
	rterm_release(&b);
	return rc;
}

static int emit_expr(struct cc *c, struct scope *s, struct sbuf *out, const struct qnode *n,
		     int post)
{
	switch (n->kind) {
	case QN_OR:
	case QN_AND:
		sbuf_addc(out, '(');
		if (emit_expr(c, s, out, n->a, post) < 0)
			return -1;
		sbuf_adds(out, n->kind == QN_OR ? " OR " : " AND ");
		if (emit_expr(c, s, out, n->b, post) < 0)
			return -1;
		sbuf_addc(out, ')');
		return 0;
	case QN_NOT:
		sbuf_adds(out, "(NOT ");
		if (emit_expr(c, s, out, n->a, post) < 0)
			return -1;
		sbuf_addc(out, ')');
		return 0;
	case QN_CMP:
		return emit_cmp(c, s, out, n, post);
	case QN_PATH:
		if (post) {
			fail(c, n->pos, n->len, xstrdup("a path cannot filter aggregated rows"),
			     NULL);
			return -1;
		}
		if (s->src == QS_PHASES) {
			emit_glob(c, out, "p", n->text);
		} else if (s->src == QS_EVENTS) {
			char *re = query_glob_regex(n->text);
			sbuf_adds(out, "regexp(");
			bind_text(c, out, re);
			sbuf_adds(out, ", gm_path(" RUNNING_SQL "))");
			free(re);
		} else {
			fail(c, n->pos, n->len,
			     xasprintf("a path selects phases or events, not %s",
				       source_words[s->src]),
			     NULL);
			return -1;
		}
		return 0;
	default:
		fail(c, n->pos, n->len, xstrdup("expected a condition"),
		     xstrdup("e.g. dur > 1ms, name ~ \"^aten::\""));
		return -1;
	}
}

static void add_where(struct scope *s, const char *cond)
{
	sbuf_adds(&s->where, s->has_where ? " AND " : "");
	sbuf_adds(&s->where, cond);
	s->has_where = 1;
}

/* ---- metrics ---- */

/* A metric reference "name" or "name@host": registers it for the check
 * before the run; the SQL of its id for a row on host_sql into out. */
static int emit_metric_id(struct cc *c, struct sbuf *out, const struct qnode *n,
			  const char *host_sql, int need_capacity, char **display)
{
	if (n->kind != QN_WORD && n->kind != QN_STRING) {
		fail(c, n->pos, n->len, xstrdup("expected a metric name"),
		     xstrdup("e.g. cpu.util or \"gpu0.utilization.gpu\""));
		return -1;
	}
	char *name = xstrdup(n->text), *host = NULL;
	char *at = strrchr(name, '@');
	if (at && at != name && at[1]) {
		*at = '\0';
		host = xstrdup(at + 1);
	}
	struct query_plan *p = c->plan;
	XGROW(p->mrefs, p->nmrefs + 1, p->amrefs);
	struct query_mref *m = &p->mrefs[p->nmrefs++];
	m->name = xstrdup(name);
	m->host = host ? xstrdup(host) : NULL;
	m->pos = n->pos;
	m->len = n->len;
	m->need_capacity = need_capacity;
	if (out) {
		sbuf_adds(out, "gm_metric(");
		bind_text(c, out, name);
		sbuf_adds(out, ", ");
		if (host)
			bind_text(c, out, host);
		else
			bind_null(c, out);
		sbuf_addf(out, ", %s)", host_sql);
	}
	if (display)
		*display = xstrdup(n->text);
	free(name);
	free(host);
	return 0;
}

/* ---- windows ---- */

static int compile_select(struct cc *c, const struct query_ast *ast, struct scope *s,
			  struct sbuf *out);

/* Compiles a window (path or phases sub-query) into a new CTE; returns its
 * number, or -1. */
static int compile_window(struct cc *c, const struct qwindow *w)
{
	struct sbuf body;
	sbuf_init(&body);
	int rc = -1;
	if (w->path) {
		sbuf_adds(&body, "SELECT p.id AS wid, p.start_ns AS w0, p.start_ns + p.dur_ns AS w1"
				 " FROM phases p WHERE ");
		emit_glob(c, &body, "p", w->path->text);
	} else {
		if (w->sub->source != QS_PHASES) {
			fail(c, w->sub->source_pos, 6, xstrdup("a window is a selection of phases"),
			     xstrdup("e.g. during phases kind = step"));
			goto out;
		}
		struct scope sub;
		scope_init(&sub, QS_PHASES);
		sub.window_mode = 1;
		int r = compile_select(c, w->sub, &sub, &body);
		scope_release(&sub);
		if (r < 0)
			goto out;
	}
	int id = ++c->ncte;
	sbuf_addf(&c->ctes, "%sw%d AS MATERIALIZED (%s)", id > 1 ? ", " : "", id, body.buf);
	rc = id;
out:
	sbuf_release(&body);
	return rc;
}

/* A time literal for between/within: 1 with *sql set (owned). */
static int time_bound(struct cc *c, const struct qnode *n, int relative, char **sql)
{
	struct sbuf sb;
	sbuf_init(&sb);
	if (n->num.kind != QU_TIME && !(n->num.kind == QU_NONE && n->num.is_int)) {
		fail(c, n->pos, n->len, xstrdup("expected a time"),
		     xstrdup("a duration from the trace start (2s, 1.5min) or epoch nanoseconds"));
		sbuf_release(&sb);
		return -1;
	}
	if (relative && n->num.kind == QU_TIME) {
		sbuf_adds(&sb, "(" TSTART_SQL " + ");
		bind_number(c, &sb, &n->num);
		sbuf_addc(&sb, ')');
	} else {
		bind_number(c, &sb, &n->num);
	}
	*sql = sbuf_detach(&sb);
	return 0;
}

/* Restricts s's rows to the windows [w0, w1) (SQL expressions over alias w
 * or constants): phases contained, instants inside; metrics get the window
 * for their statistics. */
static void restrict_rows(struct scope *s, const char *w0, const char *w1, struct sbuf *cond)
{
	if (s->src == QS_PHASES)
		sbuf_addf(cond, "p.start_ns >= %s AND p.start_ns + p.dur_ns <= %s", w0, w1);
	else
		sbuf_addf(cond, "%s >= %s AND %s < %s", s->si->t0, w0, s->si->t0, w1);
}

static int stage_during(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src == QS_METRICS && s->windowed) {
		fail(c, st->pos, st->len, xstrdup("metrics take one window"),
		     xstrdup("use a single during or between"));
		return -1;
	}
	int id = compile_window(c, &st->win);
	if (id < 0)
		return -1;
	struct sbuf cond;
	sbuf_init(&cond);
	if (s->src == QS_METRICS) {
		sbuf_addf(&s->from, " JOIN w%d w ON 1", id);
		free(s->w0);
		free(s->w1);
		s->w0 = xstrdup("w.w0");
		s->w1 = xstrdup("w.w1");
		s->windowed = 1;
		s->joined = 1;
		add_extra(s, "phase", QC_PHASE, xstrdup("w.wid"));
		add_extra(s, "phase.name", QC_TEXT,
			  xstrdup("gm_str((SELECT name_id FROM phases WHERE id = w.wid))"));
	} else {
		sbuf_addf(&cond, "EXISTS (SELECT 1 FROM w%d w WHERE ", id);
		restrict_rows(s, "w.w0", "w.w1", &cond);
		sbuf_addc(&cond, ')');
		add_where(s, cond.buf);
	}
	sbuf_release(&cond);
	return 0;
}

static int stage_between(struct cc *c, struct scope *s, const struct qstage *st)
{
	char *a = NULL, *b = NULL;
	if (time_bound(c, st->t0, 1, &a) < 0 || time_bound(c, st->t1, 1, &b) < 0) {
		free(a);
		return -1;
	}
	if (s->src == QS_METRICS) {
		if (s->windowed) {
			fail(c, st->pos, st->len, xstrdup("metrics take one window"),
			     xstrdup("use a single during or between"));
			free(a);
			free(b);
			return -1;
		}
		free(s->w0);
		free(s->w1);
		s->w0 = a;
		s->w1 = b;
		s->windowed = 1;
		return 0;
	}
	struct sbuf cond;
	sbuf_init(&cond);
	restrict_rows(s, a, b, &cond);
	add_where(s, cond.buf);
	sbuf_release(&cond);
	free(a);
	free(b);
	return 0;
}

static int stage_within(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src != QS_PHASES && s->src != QS_EVENTS) {
		fail(c, st->pos, st->len,
		     xasprintf("within needs phases or events, not %s", source_words[s->src]),
		     NULL);
		return -1;
	}
	const struct query_number *d = &st->t0->num;
	if (!(d->kind == QU_TIME || (d->kind == QU_NONE && d->is_int)) || d->i < 0) {
		fail(c, st->t0->pos, st->t0->len, xstrdup("expected a distance"),
		     xstrdup("e.g. within 5ms of /demo/train"));
		return -1;
	}
	int id = compile_window(c, &st->win);
	if (id < 0)
		return -1;
	struct sbuf near;
	sbuf_init(&near);
	/* the nearest window by the gap between the row's span and it (0 when
	 * they overlap), the lowest id among equals: gm_near (funcs.h) over the
	 * windows gm_wset collects once */
	sbuf_addf(&near, "gm_near((SELECT gm_wset(w.wid, w.w0, w.w1) FROM w%d w), %s, %s, ", id,
		  s->si->t0, s->si->t1);
	bind_number(c, &near, d);
	sbuf_adds(&near, s->src == QS_PHASES ? ", p.id)" : ")");
	char *cond = xasprintf("%s IS NOT NULL", near.buf);
	add_where(s, cond);
	free(cond);
	add_extra(s, "near", QC_PHASE, sbuf_detach(&near));
	return 0;
}

static int stage_with(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src != QS_PHASES && s->src != QS_EVENTS) {
		fail(c, st->pos, st->len,
		     xasprintf("with needs phases or events, not %s", source_words[s->src]),
		     xstrdup("for metrics, use the fields mean, max and sat"));
		return -1;
	}
	for (size_t i = 0; i < st->nterms; i++) {
		struct sbuf mid;
		char *disp = NULL;
		sbuf_init(&mid);
		if (emit_metric_id(c, &mid, st->terms[i],
				   s->src == QS_PHASES
				       ? PHASE_HOST_SQL
				       : "(SELECT host FROM tracks WHERE id = e.track_id)",
				   0, &disp) < 0) {
			sbuf_release(&mid);
			return -1;
		}
		char *name;
		if (s->src == QS_PHASES) {
			name = xasprintf("%s.mean", disp);
			add_extra(
			    s, name, QC_REAL,
			    xasprintf("gm_twmean(%s, p.start_ns, p.start_ns + p.dur_ns)", mid.buf));
			free(name);
			name = xasprintf("%s.max", disp);
			add_extra(
			    s, name, QC_REAL,
			    xasprintf("gm_twmax(%s, p.start_ns, p.start_ns + p.dur_ns)", mid.buf));
		} else {
			name = xasprintf("%s.value", disp);
			add_extra(s, name, QC_REAL, xasprintf("gm_valueat(%s, e.t_ns)", mid.buf));
		}
		free(name);
		free(disp);
		sbuf_release(&mid);
	}
	return 0;
}

static int stage_saturated(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src != QS_PHASES) {
		fail(c, st->pos, st->len,
		     xasprintf("saturated needs phases, not %s", source_words[s->src]),
		     xstrdup("for metrics, use the field sat"));
		return -1;
	}
	struct sbuf sql;
	char *disp = NULL;
	sbuf_init(&sql);
	sbuf_adds(&sql, "gm_satns(");
	if (emit_metric_id(c, &sql, st->metric, PHASE_HOST_SQL, st->threshold == NULL, &disp) < 0) {
		sbuf_release(&sql);
		return -1;
	}
	sbuf_adds(&sql, ", p.start_ns, p.start_ns + p.dur_ns, ");
	if (st->threshold) {
		if (st->threshold->num.kind == QU_TIME) {
			fail(c, st->threshold->pos, st->threshold->len,
			     xstrdup("a threshold is a value of the metric, not a time"),
			     xstrdup("e.g. saturated cpu.util >= 90%"));
			sbuf_release(&sql);
			free(disp);
			return -1;
		}
		bind_number(c, &sql, &st->threshold->num);
	} else {
		sbuf_adds(&sql, "NULL");
	}
	sbuf_addc(&sql, ')');
	char *cond = xasprintf("%s > 0", sql.buf);
	add_where(s, cond);
	free(cond);
	char *name = xasprintf("%s.sat", disp);
	add_extra(s, name, QC_DUR, sbuf_detach(&sql));
	free(name);
	free(disp);
	return 0;
}

/* ---- grouping, aggregates, output ---- */

static void add_outcol(struct outcol **v, size_t *n, size_t *alloc, const char *name,
		       enum query_coltype type, const char *sql, const char *group_sql)
{
	XGROW(*v, *n + 1, *alloc);
	memset(&(*v)[*n], 0, sizeof((*v)[*n]));
	(*v)[*n].name = xstrdup(name);
	(*v)[*n].type = type;
	(*v)[*n].sql = xstrdup(sql);
	(*v)[*n].group_sql = group_sql ? xstrdup(group_sql) : NULL;
	(*n)++;
}

static void add_count(struct scope *s)
{
	add_outcol(&s->aggs, &s->naggs, &s->aaggs, "count", QC_INT, "count(*)", NULL);
	s->aggs[s->naggs - 1].op = 'c';
}

static int stage_by(struct cc *c, struct scope *s, const struct qstage *st)
{
	for (size_t i = 0; i < st->nterms; i++) {
		struct rterm t;
		if (st->terms[i]->kind != QN_WORD) {
			fail(c, st->terms[i]->pos, st->terms[i]->len, xstrdup("by takes fields"),
			     xstrdup("e.g. by name, kind"));
			return -1;
		}
		if (resolve_term(c, s, st->terms[i], 0, 0, &t) < 0)
			return -1;
		add_outcol(&s->keys, &s->nkeys, &s->akeys, t.name, t.type, t.sql,
			   is_interned(&t) ? t.field->icol : t.sql);
		const char *g = s->keys[s->nkeys - 1].group_sql;
		s->keys[s->nkeys - 1].intkey =
		    t.field && t.type != QC_TEXT && t.type != QC_REAL &&
		    strspn(g, "abcdefghijklmnopqrstuvwxyz_.") == strlen(g);
		if (is_interned(&t))
			s->keys[s->nkeys - 1].intkey = 1;
		rterm_release(&t);
	}
	s->grouped = 1;
	return 0;
}

static const struct outcol *find_agg(const struct scope *s, const char *name)
{
	for (size_t i = 0; i < s->naggs; i++)
		if (!strcasecmp(s->aggs[i].name, name))
			return &s->aggs[i];
	return NULL;
}

/* Adds an aggregate term (a call, or the word count) to the stats. */
static int add_agg(struct cc *c, struct scope *s, const struct qnode *n)
{
	struct rterm t;
	if (n->kind == QN_WORD && !strcasecmp(n->text, "count")) {
		if (!find_agg(s, "count")) {
			add_outcol(&s->aggs, &s->naggs, &s->aaggs, "count", QC_INT, "count(*)",
				   NULL);
			s->aggs[s->naggs - 1].op = 'c';
		}
		return 0;
	}
	if (n->kind != QN_CALL) {
		const char *sug = n->kind == QN_WORD ? query_suggest(n->text, agg_names) : NULL;
		fail(c, n->pos, n->len, xstrdup("expected an aggregate"),
		     sug ? xasprintf("did you mean '%s'?", sug)
			 : xstrdup("e.g. count, sum(dur), mean(dur), p95(dur)"));
		return -1;
	}
	if (resolve_agg(c, s, n, &t) < 0)
		return -1;
	if (!find_agg(s, t.name)) {
		add_outcol(&s->aggs, &s->naggs, &s->aaggs, t.name, t.type, t.sql, NULL);
		s->aggs[s->naggs - 1].op = t.agg_op;
		s->aggs[s->naggs - 1].arg_sql = t.agg_arg ? xstrdup(t.agg_arg) : NULL;
	}
	rterm_release(&t);
	return 0;
}

/* Resolves a sort/top key against the output: an aggregate, a group key or
 * a field; its SQL into out. */
static int emit_key(struct cc *c, struct scope *s, struct sbuf *out, const struct qnode *n)
{
	struct rterm t;
	int r;
	if (s->aggregated && n->kind == QN_CALL)
		r = resolve_agg(c, s, n, &t);
	else
		r = resolve_term(c, s, n, s->aggregated, 0, &t);
	if (r < 0)
		return -1;
	if (!t.sql) {
		fail(c, n->pos, n->len, xstrdup("expected a field or an aggregate"), NULL);
		rterm_release(&t);
		return -1;
	}
	sbuf_adds(out, t.sql);
	rterm_release(&t);
	return 0;
}

static void add_order(struct scope *s, const char *key, int desc)
{
	sbuf_adds(&s->order, s->has_order ? ", " : "");
	sbuf_addf(&s->order, "%s %s", key, desc ? "DESC" : "ASC");
	s->has_order = 1;
}

static int enter_level(struct cc *c, struct scope *s, const struct qstage *st, enum level lv,
		       const char *word)
{
	if (lv < s->level) {
		fail(c, st->pos, st->len,
		     xasprintf("'%.*s' cannot come after '%s'", st->len, c->q + st->pos,
			       s->level_word),
		     xstrdup("stages go: filters (where during between with within saturated "
			     "select), by, stats, sort, top/limit"));
		return -1;
	}
	s->level = lv;
	s->level_word = word;
	return 0;
}

static int stage_select(struct cc *c, struct scope *s, const struct qstage *st)
{
	for (size_t i = 0; i < st->nterms; i++) {
		struct rterm t;
		if (st->terms[i]->kind != QN_WORD) {
			fail(c, st->terms[i]->pos, st->terms[i]->len,
			     xstrdup("select takes fields"), xstrdup("e.g. select id, name, dur"));
			return -1;
		}
		if (resolve_term(c, s, st->terms[i], 0, 0, &t) < 0)
			return -1;
		add_outcol(&s->sel, &s->nsel, &s->asel, t.name, t.type, t.sql, NULL);
		rterm_release(&t);
	}
	return 0;
}

static int run_stage(struct cc *c, struct scope *s, const struct qstage *st)
{
	struct sbuf tmp;
	int rc = 0;
	sbuf_init(&tmp);
	if (s->window_mode && (st->kind == QST_BY || st->kind == QST_STATS ||
			       st->kind == QST_COUNT || st->kind == QST_SELECT)) {
		fail(c, st->pos, st->len,
		     xasprintf("a window selects phases; '%.*s' is not allowed in it", st->len,
			       c->q + st->pos),
		     NULL);
		return -1;
	}
	switch (st->kind) {
	case QST_WHERE:
		if (s->aggregated) {
			if (enter_level(c, s, st, LV_POST, "where") < 0 ||
			    emit_expr(c, s, &tmp, st->expr, 1) < 0) {
				rc = -1;
				break;
			}
			sbuf_adds(&s->having, s->has_having ? " AND " : "");
			sbuf_adds(&s->having, tmp.buf);
			s->has_having = 1;
			break;
		}
		if (enter_level(c, s, st, LV_ROWS, "where") < 0 ||
		    emit_expr(c, s, &tmp, st->expr, 0) < 0) {
			rc = -1;
			break;
		}
		add_where(s, tmp.buf);
		break;
	case QST_DURING:
		rc = enter_level(c, s, st, LV_ROWS, "during") < 0 ? -1 : stage_during(c, s, st);
		break;
	case QST_BETWEEN:
		rc = enter_level(c, s, st, LV_ROWS, "between") < 0 ? -1 : stage_between(c, s, st);
		break;
	case QST_WITHIN:
		rc = enter_level(c, s, st, LV_ROWS, "within") < 0 ? -1 : stage_within(c, s, st);
		break;
	case QST_WITH:
		rc = enter_level(c, s, st, LV_ROWS, "with") < 0 ? -1 : stage_with(c, s, st);
		break;
	case QST_SATURATED:
		rc = enter_level(c, s, st, LV_ROWS, "saturated") < 0 ? -1
								     : stage_saturated(c, s, st);
		break;
	case QST_SELECT:
		/* picks the columns of unaggregated rows: anywhere before stats */
		if (s->aggregated || s->grouped) {
			fail(c, st->pos, st->len,
			     xstrdup("select picks columns of rows; after by or stats the columns "
				     "are the keys and aggregates"),
			     NULL);
			rc = -1;
			break;
		}
		rc = stage_select(c, s, st);
		break;
	case QST_BY:
		rc = enter_level(c, s, st, LV_BY, "by") < 0 ? -1 : stage_by(c, s, st);
		break;
	case QST_STATS:
	case QST_COUNT:
		if (enter_level(c, s, st, LV_STATS, st->kind == QST_COUNT ? "count" : "stats") <
		    0) {
			rc = -1;
			break;
		}
		s->aggregated = 1;
		if (st->kind == QST_COUNT) {
			if (!find_agg(s, "count"))
				add_count(s);
			break;
		}
		for (size_t i = 0; i < st->nterms && rc == 0; i++)
			rc = add_agg(c, s, st->terms[i]);
		break;
	case QST_SORT:
		if (enter_level(c, s, st, LV_POST, "sort") < 0) {
			rc = -1;
			break;
		}
		for (size_t i = 0; i < st->nterms && rc == 0; i++) {
			sbuf_reset(&tmp);
			if ((rc = emit_key(c, s, &tmp, st->terms[i])) == 0)
				add_order(s, tmp.buf, st->desc[i]);
		}
		break;
	case QST_TOP:
		if (enter_level(c, s, st, LV_LIMIT, "top") < 0) {
			rc = -1;
			break;
		}
		if (s->grouped && !s->aggregated) {
			/* by ... | top N key: the key's aggregate is the stats */
			s->aggregated = 1;
			if (st->key)
				rc = add_agg(c, s, st->key);
			else
				add_count(s);
		}
		if (rc == 0) {
			if (st->key) {
				rc = emit_key(c, s, &tmp, st->key);
			} else if (s->aggregated) {
				sbuf_adds(&tmp, s->naggs ? s->aggs[0].sql : "count(*)");
			} else if (s->src == QS_PHASES) {
				sbuf_adds(&tmp, "p.dur_ns");
			} else if (s->src == QS_SAMPLES) {
				sbuf_adds(&tmp, "s.value");
			} else if (s->src == QS_METRICS) {
				char *m = field_sql(s, "gm_twmean(m.id, $W0, $W1)");
				sbuf_adds(&tmp, m);
				free(m);
			} else {
				fail(c, st->pos, st->len, xstrdup("top needs a key for events"),
				     xstrdup("e.g. top 10 t"));
				rc = -1;
			}
		}
		if (rc == 0) {
			add_order(s, tmp.buf, 1);
			s->limit = st->n;
		}
		break;
	case QST_LIMIT:
		if (enter_level(c, s, st, LV_LIMIT, "limit") < 0) {
			rc = -1;
			break;
		}
		s->limit = st->n;
		break;
	}
	sbuf_release(&tmp);
	return rc;
}

static void add_plan_col(struct cc *c, const char *name, enum query_coltype type)
{
	struct query_plan *p = c->plan;
	XGROW(p->cols, p->ncols + 1, p->acols);
	p->cols[p->ncols].name = xstrdup(name);
	p->cols[p->ncols].type = type;
	if (type == QC_PHASE && p->phase_col < 0)
		p->phase_col = (int)p->ncols;
	p->ncols++;
}

/* text with every occurrence of from[i] replaced by to[i] (the first
 * match at each position wins); the caller frees it. */
static char *replace_all(const char *text, char *const *from, char *const *to, size_t n)
{
	struct sbuf sb;
	sbuf_init(&sb);
	for (const char *p = text; *p;) {
		size_t i;
		for (i = 0; i < n; i++)
			if (from[i] && *from[i] && !strncmp(p, from[i], strlen(from[i])))
				break;
		if (i < n) {
			sbuf_adds(&sb, to[i]);
			p += strlen(from[i]);
		} else {
			sbuf_addc(&sb, *p++);
		}
	}
	return sbuf_detach(&sb);
}

/* Whether sql still reads a column of the source row (p. e. m. s. w.). */
static int reads_row(const char *sql)
{
	for (const char *p = sql; *p; p++)
		if (strchr("pemsw", *p) && p[1] == '.' &&
		    (p == sql ||
		     !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
		       (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'))))
			return 1;
	return 0;
}

/* The hash-grouped form of an aggregated select with one integer key and
 * aggregates gm_hagg computes (see funcs.c): 1 with out filled, 0 when the
 * query does not have that shape (the caller emits GROUP BY). */
static int emit_hashed(struct cc *c, struct scope *s, struct sbuf *out)
{
	if (s->nkeys != 1 || !s->keys[0].intkey || s->naggs == 0 || s->naggs > 16)
		return 0;
	for (size_t i = 0; i < s->naggs; i++)
		if (!s->aggs[i].op)
			return 0;
	size_t n = s->naggs + 1;
	char **from = xcalloc(n, sizeof(char *)), **to = xcalloc(n, sizeof(char *));
	/* the longest texts first: an aggregate holds the key's column */
	for (size_t i = 0; i < s->naggs; i++) {
		from[i] = s->aggs[i].sql;
		to[i] = xasprintf("g.a%zu", i);
	}
	from[s->naggs] = s->keys[0].group_sql;
	to[s->naggs] = xstrdup("g.k0");
	char *key = replace_all(s->keys[0].sql, from, to, n);
	char *having = replace_all(s->having.buf, from, to, n);
	char *order = replace_all(s->order.buf, from, to, n);
	int ok = !reads_row(key) && !reads_row(having) && !reads_row(order);
	if (ok) {
		sbuf_addf(out, "SELECT %s AS c0", key);
		for (size_t i = 0; i < s->naggs; i++)
			sbuf_addf(out, ", g.a%zu AS c%zu", i, i + 1);
		sbuf_adds(out, " FROM (SELECT json_extract(value, '$[0]') AS k0");
		for (size_t i = 0; i < s->naggs; i++)
			sbuf_addf(out, ", json_extract(value, '$[%zu]') AS a%zu", i + 1, i);
		sbuf_adds(out, " FROM json_each((SELECT gm_hagg('");
		for (size_t i = 0; i < s->naggs; i++)
			sbuf_addc(out, s->aggs[i].op);
		sbuf_addf(out, "', %s", s->keys[0].group_sql);
		for (size_t i = 0; i < s->naggs; i++)
			sbuf_addf(out, ", %s", s->aggs[i].arg_sql ? s->aggs[i].arg_sql : "NULL");
		sbuf_addf(out, ") FROM %s", s->from.buf);
		if (s->has_where)
			sbuf_addf(out, " WHERE %s", s->where.buf);
		sbuf_adds(out, "))) g");
		if (s->has_having)
			sbuf_addf(out, " WHERE %s", having);
		sbuf_addf(out, " ORDER BY %s%sc0", order,
			  s->has_order ? ", " : ""); /* ties: key order */
		add_plan_col(c, s->keys[0].name, s->keys[0].type);
		for (size_t i = 0; i < s->naggs; i++)
			add_plan_col(c, s->aggs[i].name, s->aggs[i].type);
	}
	for (size_t i = 0; i < n; i++)
		free(to[i]);
	free(from);
	free(to);
	free(key);
	free(having);
	free(order);
	return ok;
}

/* Whether cond requires `parent = VALUE` (a top-level conjunct): then the
 * rows come in start order straight from the index phases_parent. */
static int filters_parent(const struct qnode *n)
{
	if (!n)
		return 0;
	if (n->kind == QN_AND)
		return filters_parent(n->a) || filters_parent(n->b);
	return n->kind == QN_CMP && n->op == QT_EQ && n->a->kind == QN_WORD &&
	       !strcasecmp(n->a->text, "parent") && n->b->kind == QN_NUMBER;
}

/* Builds the SELECT of ast in scope s into out; the top level also records
 * the plan's columns. */
static int compile_select(struct cc *c, const struct query_ast *ast, struct scope *s,
			  struct sbuf *out)
{
	int top = !s->window_mode;
	s->level_word = "the source";
	if (ast->metric) {
		struct sbuf cond;
		sbuf_init(&cond);
		/* a reference by name: restrict rows to the metrics it names */
		const struct qnode *n = ast->metric;
		if (emit_metric_id(c, NULL, n, NULL, 0, NULL) < 0) {
			sbuf_release(&cond);
			return -1;
		}
		const struct query_mref *m = &c->plan->mrefs[c->plan->nmrefs - 1];
		sbuf_adds(&cond, s->src == QS_SAMPLES
				     ? "s.metric_id IN (SELECT id FROM metrics WHERE (name = "
				     : "(m.name = ");
		bind_text(c, &cond, m->name);
		sbuf_adds(&cond, " OR (resource || '.' || name) = ");
		bind_text(c, &cond, m->name);
		sbuf_adds(&cond, ")");
		if (m->host) {
			sbuf_adds(&cond, " AND host = ");
			bind_text(c, &cond, m->host);
		}
		if (s->src == QS_SAMPLES)
			sbuf_adds(&cond, ")");
		add_where(s, cond.buf);
		sbuf_release(&cond);
	}
	if (ast->filter) {
		struct sbuf cond;
		sbuf_init(&cond);
		int r = emit_expr(c, s, &cond, ast->filter, 0);
		if (r == 0)
			add_where(s, cond.buf);
		sbuf_release(&cond);
		if (r < 0)
			return -1;
	}
	for (size_t i = 0; i < ast->nstages; i++)
		if (run_stage(c, s, &ast->stages[i]) < 0)
			return -1;
	if (!s->window_mode && s->aggregated && emit_hashed(c, s, out)) {
		if (s->limit >= 0) {
			sbuf_adds(out, " LIMIT ");
			bind_int(c, out, s->limit);
		}
		return 0;
	}
	/* the select list */
	sbuf_adds(out, "SELECT ");
	size_t ncol = 0;
#define COL(sql, name, type)                                                                       \
	do {                                                                                       \
		sbuf_addf(out, "%s%s AS c%zu", ncol ? ", " : "", (sql), ncol);                     \
		if (top)                                                                           \
			add_plan_col(c, (name), (type));                                           \
		ncol++;                                                                            \
	} while (0)
	if (s->window_mode) {
		sbuf_adds(out, "p.id AS wid, p.start_ns AS w0, p.start_ns + p.dur_ns AS w1");
	} else if (s->aggregated) {
		for (size_t i = 0; i < s->nkeys; i++)
			COL(s->keys[i].sql, s->keys[i].name, s->keys[i].type);
		for (size_t i = 0; i < s->naggs; i++)
			COL(s->aggs[i].sql, s->aggs[i].name, s->aggs[i].type);
	} else {
		if (s->grouped) {
			fail(c, ast->source_pos, 1,
			     xstrdup("'by' needs stats, count or top after it"),
			     xstrdup("e.g. phases | by name | stats count, sum(dur)"));
			return -1;
		}
		if (s->nsel) {
			for (size_t i = 0; i < s->nsel; i++)
				COL(s->sel[i].sql, s->sel[i].name, s->sel[i].type);
		} else {
			for (size_t i = 0; s->si->defaults[i]; i++) {
				const struct field *f = find_field(s, s->si->defaults[i]);
				char *sql = field_sql(s, f->sql);
				COL(sql, f->name, f->type);
				free(sql);
			}
		}
		/* the columns stages added, unless select chose the columns */
		for (size_t i = 0; !s->nsel && i < s->nextras; i++)
			COL(s->extras[i].sql, s->extras[i].name, s->extras[i].type);
	}
#undef COL
	sbuf_addf(out, " FROM %s", s->from.buf);
	if (s->has_where)
		sbuf_addf(out, " WHERE %s", s->where.buf);
	if (s->aggregated && s->nkeys) {
		sbuf_adds(out, " GROUP BY ");
		for (size_t i = 0; i < s->nkeys; i++)
			sbuf_addf(out, "%s%s", i ? ", " : "", s->keys[i].group_sql);
	}
	if (s->has_having)
		sbuf_addf(out, " HAVING %s", s->having.buf);
	/* ties (and unsorted rows) in a stable order */
	static const char *const row_order[] = {[QS_PHASES] = "p.id",
						[QS_EVENTS] = "e.id",
						[QS_METRICS] = "m.id",
						[QS_SAMPLES] = "s.metric_id, s.t_ns"};
	if (s->window_mode) {
		if (s->has_order)
			sbuf_addf(out, " ORDER BY %s", s->order.buf);
	} else if (s->aggregated) {
		if (s->has_order)
			sbuf_addf(out, " ORDER BY %s, c0", s->order.buf);
		else if (s->nkeys)
			sbuf_adds(out, " ORDER BY c0");
	} else {
		/* children of one parent: in start order, as the index has them */
		int by_start = s->src == QS_PHASES && filters_parent(ast->filter);
		sbuf_addf(out, " ORDER BY %s%s%s", s->order.buf, s->has_order ? ", " : "",
			  by_start ? "p.start_ns, p.id" : row_order[s->src]);
		if (s->joined)
			sbuf_adds(out, ", w.wid");
	}
	if (s->limit >= 0) {
		sbuf_adds(out, " LIMIT ");
		bind_int(c, out, s->limit);
	}
	return 0;
}

int query_compile(const char *q, struct query_plan *plan, struct query_error *e)
{
	struct query_ast ast;
	struct cc c = {.q = q, .plan = plan, .e = e};
	struct scope s;
	struct sbuf body;
	int rc = -1;
	memset(plan, 0, sizeof(*plan));
	plan->phase_col = -1;
	if (query_parse(q, &ast, e) < 0)
		return -1;
	if (ast.is_sql) {
		plan->raw = 1;
		plan->sql = xstrdup(ast.sql);
		plan->sql_pos = (int)(ast.sql - q);
		query_ast_release(&ast);
		return 0;
	}
	sbuf_init(&c.ctes);
	sbuf_init(&body);
	scope_init(&s, ast.source);
	if (compile_select(&c, &ast, &s, &body) < 0)
		goto out;
	if (c.ncte)
		plan->sql = xasprintf("WITH %s %s", c.ctes.buf, body.buf);
	else
		plan->sql = sbuf_detach(&body);
	rc = 0;
out:
	scope_release(&s);
	sbuf_release(&body);
	sbuf_release(&c.ctes);
	query_ast_release(&ast);
	if (rc < 0) {
		if (!e->msg)
			query_error_set(e, 0, 1, xstrdup("bad query"), NULL);
		query_plan_release(plan);
		plan->phase_col = -1;
	}
	return rc;
}

void query_plan_release(struct query_plan *plan)
{
	free(plan->sql);
	for (size_t i = 0; i < plan->nparams; i++)
		free(plan->params[i].s);
	free(plan->params);
	for (size_t i = 0; i < plan->ncols; i++)
		free(plan->cols[i].name);
	free(plan->cols);
	for (size_t i = 0; i < plan->nmrefs; i++) {
		free(plan->mrefs[i].name);
		free(plan->mrefs[i].host);
	}
	free(plan->mrefs);
	memset(plan, 0, sizeof(*plan));
}
