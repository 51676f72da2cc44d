/*
 * The query compiler (see compile.h).  One query becomes one SELECT:
 *
 *   WITH w1 AS MATERIALIZED (windows of during/within), ...
 *   SELECT columns FROM source WHERE filters GROUP BY keys HAVING ...
 *   ORDER BY ... LIMIT ?
 *
 * This file holds the operators: conditions (comparisons, regular
 * expressions, path globs), the stages that filter, group, aggregate, sort
 * and cut the rows, every value bound as a parameter, and the SELECT they
 * make.  Fields come from per-source tables of fixed SQL
 * (compile_source.c); the stages that relate rows in time (during,
 * between, within, with, saturated) are compile_correlate.c's; what the
 * three share is compile_int.h.  Fields whose text is interned (name, kind,
 * category) compare through the interning table, so `name ~ "re"` runs the
 * regex once per distinct string, not once per phase, and `by name` groups
 * on the integer id.  Stages must come in the order row filters, by, stats,
 * sort/where-on-aggregates, top/limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "query/compile.h"
#include "query/compile_int.h"
#include "query/funcs.h"
#include "model/util/xalloc.h"

static const char *const agg_names[] = {"count", "sum", "mean", "avg", "min", "max",
					"p50",	 "p90", "p95",	"p99", NULL};

void compile_fail(struct cc *c, int pos, int len, char *msg, char *hint)
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

void compile_bind_text(struct cc *c, struct sbuf *out, const char *s)
{
	struct query_param *qp = new_param(c, out);
	qp->type = QP_TEXT;
	qp->s = xstrdup(s);
}

void compile_bind_int(struct cc *c, struct sbuf *out, int64_t v)
{
	struct query_param *qp = new_param(c, out);
	qp->type = QP_INT;
	qp->i = v;
}

void compile_bind_null(struct cc *c, struct sbuf *out)
{
	new_param(c, out)->type = QP_NULL;
}

void compile_bind_number(struct cc *c, struct sbuf *out, const struct query_number *n)
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
void compile_glob(struct cc *c, struct sbuf *out, const char *alias, const char *glob)
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
		compile_bind_text(c, out, last);
		sbuf_adds(out, ") AND ");
	}
	sbuf_adds(out, "regexp(");
	compile_bind_text(c, out, re);
	sbuf_addf(out, ", gm_path(%s.id)))", alias);
	free(re);
	free(last);
}

/* ---- resolution ---- */

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
static int resolve_arith(struct cc *c, struct scope *s, const struct qnode *n, int post,
			 struct rterm *out);
static const char *type_word(enum query_coltype t);

/* An aggregate call: count, count(x), sum(x), mean/avg(x), min, max, pNN. */
static int resolve_agg(struct cc *c, struct scope *s, const struct qnode *n, struct rterm *out)
{
	size_t k;
	for (k = 0; k < sizeof(agg_sql) / sizeof(agg_sql[0]); k++)
		if (!strcasecmp(n->text, agg_sql[k][0]))
			break;
	if (k == sizeof(agg_sql) / sizeof(agg_sql[0])) {
		const char *sug = query_suggest(n->text, agg_names);
		compile_fail(
		    c, n->pos, (int)strlen(n->text), xasprintf("unknown function '%s'", n->text),
		    sug ? xasprintf("did you mean '%s'?", sug)
			: xstrdup("aggregates: count sum mean avg min max p50 p90 p95 p99"));
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->node = n;
	if (!n->a) {
		if (k != 0) {
			compile_fail(c, n->pos, n->len,
				     xasprintf("%s() needs a field", agg_sql[k][0]),
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
	if (n->a->kind != QN_WORD && n->a->kind != QN_ARITH && n->a->kind != QN_NEG) {
		compile_fail(c, n->a->pos, n->a->len,
			     xasprintf("%s() takes a field", agg_sql[k][0]),
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

/* The hint for an unknown word: a field glued to an operator ("dur*2",
 * "dur-self": '*' and '-' are word characters) asks for blanks. */
static char *operator_hint(const struct scope *s, const char *word)
{
	size_t k = strcspn(word, "*-");
	if (word[k] && k > 0) {
		char *head = xstrndup(word, k);
		int field = source_field(s, head) || source_extra(s, head);
		free(head);
		if (field)
			return xasprintf("put blanks around operators: '%.*s %c %s'", (int)k, word,
					 word[k], word + k + 1);
	}
	return source_field_hint(s, word);
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
	case QN_ARITH:
	case QN_NEG:
		return resolve_arith(c, s, n, post, out);
	case QN_CALL:
		if (!post && !s->aggregated) {
			/* only valid where aggregates are: stats, top, sort after stats */
			compile_fail(
			    c, n->pos, n->len,
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
			compile_fail(
			    c, n->pos, n->len,
			    xasprintf("'%s' is not a group key or an aggregate here", n->text),
			    xstrdup("after stats, use the by keys and aggregates such as "
				    "count or sum(dur)"));
			return -1;
		}
		const struct extra *x = source_extra(s, n->text);
		if (x) {
			out->sql = xstrdup(x->sql);
			out->type = x->type;
			out->name = xstrdup(x->name);
			return 0;
		}
		const struct field *f = source_field(s, n->text);
		if (f) {
			out->field = f;
			out->sql = source_field_sql(s, f->sql);
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
		compile_fail(c, n->pos, n->len, xasprintf("unknown field '%s'", n->text),
			     operator_hint(s, n->text));
		return -1;
	}
	default:
		compile_fail(c, n->pos, n->len, xstrdup("expected a field"), NULL);
		return -1;
	}
}

/* What arithmetic sees in a type: a number, a duration, a time, or none
 * of these (text). */
enum akind { AK_NUM, AK_DUR, AK_TIME, AK_NONE };

static enum akind arith_kind(enum query_coltype t)
{
	switch (t) {
	case QC_INT:
	case QC_REAL:
	case QC_PHASE:
	case QC_ANY:
	case QC_BYTES:
	case QC_RATIO:
	case QC_PCT:
		return AK_NUM;
	case QC_DUR:
	case QC_DELTA:
		return AK_DUR;
	case QC_TIME:
		return AK_TIME;
	default:
		return AK_NONE;
	}
}

/* An operand of arithmetic: a term whose SQL is a number (a literal is
 * bound here). */
static int resolve_operand(struct cc *c, struct scope *s, const struct qnode *n, int post,
			   struct rterm *out)
{
	if (resolve_term(c, s, n, post, 0, out) < 0)
		return -1;
	if (out->is_number) {
		struct sbuf sb;
		sbuf_init(&sb);
		compile_bind_number(c, &sb, &n->num);
		out->sql = sbuf_detach(&sb);
		out->name = node_text(c, n);
	}
	if (!out->sql || arith_kind(out->type) == AK_NONE) {
		compile_fail(c, n->pos, n->len,
			     xasprintf("'%.*s' is text; arithmetic takes numbers, durations and "
				       "times",
				       n->len > 40 ? 40 : n->len, c->q + n->pos),
			     NULL);
		rterm_release(out);
		return -1;
	}
	return 0;
}

/* The type of a op b, or -1 when the operation means nothing (a time
 * plus a time, a duration times a duration, anything over a time...).  A
 * bare number with a duration or a time counts nanoseconds, as it does in
 * comparisons. */
static int arith_type(enum query_tok op, const struct rterm *a, const struct rterm *b)
{
	enum akind x = arith_kind(a->type), y = arith_kind(b->type);
	int real =
	    a->type == QC_REAL || b->type == QC_REAL || a->type == QC_ANY || b->type == QC_ANY;
	switch (op) {
	case QT_PLUS:
		if (x == AK_TIME || y == AK_TIME)
			return x == AK_TIME && y == AK_TIME ? -1 : QC_TIME;
		break;
	case QT_MINUS:
		if (x == AK_TIME)
			return y == AK_TIME ? QC_DUR : QC_TIME;
		if (y == AK_TIME)
			return -1;
		break;
	case QT_STAR:
		if (x == AK_TIME || y == AK_TIME || (x == AK_DUR && y == AK_DUR))
			return -1;
		break;
	default: /* QT_SLASH */
		if (x == AK_TIME || y == AK_TIME || (x == AK_NUM && y == AK_DUR))
			return -1;
		if (x == AK_DUR && y == AK_DUR)
			return QC_REAL;
		return x == AK_DUR ? QC_DUR : QC_REAL;
	}
	if (x == AK_DUR || y == AK_DUR)
		return QC_DUR;
	return real ? QC_REAL : QC_INT;
}

/* Arithmetic (QN_ARITH, QN_NEG) into out.  Division is in real numbers
 * and by zero gives NULL (SQLite's); a duration or a time is whole
 * nanoseconds through gm_ns, which rounds and saturates at the int64
 * range; whole numbers past it become real (SQLite's overflow). */
static int resolve_arith(struct cc *c, struct scope *s, const struct qnode *n, int post,
			 struct rterm *out)
{
	static const char *const opsql[] = {
	    [QT_PLUS] = "+", [QT_MINUS] = "-", [QT_STAR] = "*", [QT_SLASH] = "/"};
	static const char *const opname[] = {[QT_PLUS] = "add",
					     [QT_MINUS] = "subtract",
					     [QT_STAR] = "multiply",
					     [QT_SLASH] = "divide"};
	struct rterm a, b;
	int rc = -1;
	memset(&b, 0, sizeof(b));
	if (resolve_operand(c, s, n->a, post, &a) < 0)
		return -1;
	memset(out, 0, sizeof(*out));
	out->node = n;
	out->name = node_text(c, n);
	if (n->kind == QN_NEG) {
		if (arith_kind(a.type) == AK_TIME) {
			compile_fail(c, n->pos, n->len, xstrdup("a time cannot be negated"),
				     xstrdup("subtract it from another time: end - start"));
			goto out;
		}
		out->type = a.type;
		out->sql = xasprintf("(-%s)", a.sql);
		rc = 0;
		goto out;
	}
	if (resolve_operand(c, s, n->b, post, &b) < 0)
		goto out;
	int t = arith_type(n->op, &a, &b);
	if (t < 0) {
		compile_fail(c, n->pos, n->len,
			     xasprintf("cannot %s %s and %s", opname[n->op], type_word(a.type),
				       type_word(b.type)),
			     xstrdup("durations add and subtract, scale by numbers and divide "
				     "into ratios; times differ by durations"));
		goto out;
	}
	out->type = (enum query_coltype)t;
	char *e = n->op == QT_SLASH ? xasprintf("(CAST(%s AS REAL) / %s)", a.sql, b.sql)
				    : xasprintf("(%s %s %s)", a.sql, opsql[n->op], b.sql);
	if (out->type == QC_DUR || out->type == QC_TIME) {
		out->sql = xasprintf("gm_ns(%s)", e);
		free(e);
	} else {
		out->sql = e;
	}
	rc = 0;
out:
	rterm_release(&a);
	rterm_release(&b);
	if (rc < 0)
		rterm_release(out);
	return rc;
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
			compile_bind_text(c, out, t);
			free(t);
			return 0;
		}
		if ((ft == QC_DUR || ft == QC_TIME) && (u == QU_BYTES || u == QU_PERCENT)) {
			compile_fail(
			    c, n->pos, n->len,
			    xasprintf("'%s' is %s; this value is not", lhs->name, type_word(ft)),
			    xstrdup("time units: ns us ms s min h"));
			return -1;
		}
		if (ft == QC_TIME && u == QU_TIME) {
			/* a duration against a time: an offset from the trace start */
			sbuf_adds(out, "(" TSTART_SQL " + ");
			compile_bind_number(c, out, &n->num);
			sbuf_addc(out, ')');
			return 0;
		}
		compile_bind_number(c, out, &n->num);
		return 0;
	}
	/* text */
	if (ft != QC_TEXT) {
		compile_fail(c, n->pos, n->len,
			     xasprintf("'%s' is %s, not text", lhs->name, type_word(ft)),
			     xstrdup(ft == QC_DUR ? "compare it with a duration such as 5ms"
						  : "compare it with a number"));
		return -1;
	}
	compile_bind_text(c, out, n->text);
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
	compile_fail(
	    c, v->pos, v->len, xasprintf("unknown phase kind '%s'", v->text),
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
	if (a.is_number) {
		/* a literal on the left: bound as it is */
		struct sbuf sb;
		sbuf_init(&sb);
		compile_bind_number(c, &sb, &n->a->num);
		a.sql = sbuf_detach(&sb);
		a.name = node_text(c, n->a);
	}
	if (a.field && !strcmp(a.field->name, "kind") && n->b->kind == QN_WORD) {
		/* kind = step: a bare word is a kind, even one that names a field */
		b.is_text_literal = 1;
		b.type = QC_TEXT;
		b.node = n->b;
	} else if (resolve_term(c, s, n->b, post, 1, &b) < 0) {
		goto out;
	}
	if ((n->a->kind == QN_ARITH || n->a->kind == QN_NEG || n->b->kind == QN_ARITH ||
	     n->b->kind == QN_NEG) &&
	    b.sql && !b.is_text_literal) {
		enum akind x = arith_kind(a.type), y = arith_kind(b.type);
		if (x != y && (x == AK_NONE || y == AK_NONE || x == AK_TIME || y == AK_TIME)) {
			compile_fail(c, n->pos, n->len,
				     xasprintf("cannot compare %s with %s", type_word(a.type),
					       type_word(b.type)),
				     NULL);
			goto out;
		}
	}
	if (b.is_text_literal && n->b->kind == QN_WORD) {
		/* a bare word value: keep its text */
		b.node = n->b;
	}
	if (op == QT_MATCH || op == QT_NMATCH) {
		if (!b.is_text_literal) {
			compile_fail(c, n->b->pos, n->b->len,
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
			compile_fail(c, pos, 1, why, xstrdup("PCRE2 syntax; quote the pattern"));
			goto out;
		}
		if (is_interned(&a)) {
			sbuf_addf(out, "(%s%s IN (SELECT id FROM %s WHERE regexp(",
				  op == QT_NMATCH ? "NOT " : "", a.field->icol, a.field->itable);
			compile_bind_text(c, out, n->b->text);
			sbuf_addf(out, ", %s)))", a.field->itext);
		} else {
			sbuf_addf(out, "(%sregexp(", op == QT_NMATCH ? "NOT " : "");
			compile_bind_text(c, out, n->b->text);
			sbuf_addf(out, ", %s))", a.sql);
		}
		rc = 0;
		goto out;
	}
	if (a.field && !strcmp(a.field->name, "path") && s->src == QS_PHASES && b.is_text_literal &&
	    (op == QT_EQ || op == QT_NE)) {
		if (op == QT_NE)
			sbuf_adds(out, "(NOT ");
		compile_glob(c, out, "p", n->b->text);
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
		compile_bind_text(c, out, n->b->text);
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
			compile_fail(c, n->pos, n->len,
				     xstrdup("a path cannot filter aggregated rows"), NULL);
			return -1;
		}
		if (s->src == QS_PHASES) {
			compile_glob(c, out, "p", n->text);
		} else if (s->src == QS_EVENTS) {
			char *re = query_glob_regex(n->text);
			sbuf_adds(out, "regexp(");
			compile_bind_text(c, out, re);
			sbuf_adds(out, ", gm_path(" RUNNING_SQL "))");
			free(re);
		} else {
			compile_fail(c, n->pos, n->len,
				     xasprintf("a path selects phases or events, not %s",
					       source_words[s->src]),
				     NULL);
			return -1;
		}
		return 0;
	default:
		compile_fail(c, n->pos, n->len, xstrdup("expected a condition"),
			     xstrdup("e.g. dur > 1ms, name ~ \"^aten::\""));
		return -1;
	}
}

void compile_add_where(struct scope *s, const char *cond)
{
	sbuf_adds(&s->where, s->has_where ? " AND " : "");
	sbuf_adds(&s->where, cond);
	s->has_where = 1;
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
			compile_fail(c, st->terms[i]->pos, st->terms[i]->len,
				     xstrdup("by takes fields"), xstrdup("e.g. by name, kind"));
			return -1;
		}
		if (resolve_term(c, s, st->terms[i], 0, 0, &t) < 0)
			return -1;
		const char *shown = source_key_shown(s, t.field);
		add_outcol(&s->keys, &s->nkeys, &s->akeys, t.name, shown ? QC_TEXT : t.type,
			   shown ? shown : t.sql, is_interned(&t) ? t.field->icol : t.sql);
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
		compile_fail(c, n->pos, n->len, xstrdup("expected an aggregate"),
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
		compile_fail(c, n->pos, n->len, xstrdup("expected a field or an aggregate"), NULL);
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
		compile_fail(
		    c, st->pos, st->len,
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
		enum qnode_kind k = st->terms[i]->kind;
		if (k != QN_WORD && k != QN_ARITH && k != QN_NEG) {
			compile_fail(c, st->terms[i]->pos, st->terms[i]->len,
				     xstrdup("select takes fields and arithmetic on them"),
				     xstrdup("e.g. select id, name, dur, dur - self"));
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
		compile_fail(c, st->pos, st->len,
			     xasprintf("a window selects phases; '%.*s' is not allowed in it",
				       st->len, c->q + st->pos),
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
		compile_add_where(s, tmp.buf);
		break;
	case QST_DURING:
		rc = enter_level(c, s, st, LV_ROWS, "during") < 0 ? -1 : correlate_during(c, s, st);
		break;
	case QST_BETWEEN:
		rc = enter_level(c, s, st, LV_ROWS, "between") < 0 ? -1
								   : correlate_between(c, s, st);
		break;
	case QST_WITHIN:
		rc = enter_level(c, s, st, LV_ROWS, "within") < 0 ? -1 : correlate_within(c, s, st);
		break;
	case QST_WITH:
		rc = enter_level(c, s, st, LV_ROWS, "with") < 0 ? -1 : correlate_with(c, s, st);
		break;
	case QST_SATURATED:
		rc = enter_level(c, s, st, LV_ROWS, "saturated") < 0
			 ? -1
			 : correlate_saturated(c, s, st);
		break;
	case QST_SELECT:
		/* picks the columns of unaggregated rows: anywhere before stats */
		if (s->aggregated || s->grouped) {
			compile_fail(
			    c, st->pos, st->len,
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
			} else if (s->src == QS_GAPS) {
				sbuf_adds(&tmp, "(i.end_ns - i.start_ns)");
			} else if (s->src == QS_METRICS) {
				char *m = source_field_sql(s, "gm_twmean(m.id, $W0, $W1)");
				sbuf_adds(&tmp, m);
				free(m);
			} else {
				compile_fail(c, st->pos, st->len,
					     xstrdup("top needs a key for events"),
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

/* Whether sql still reads a column of the source row (p. e. m. s. w. i.). */
static int reads_row(const char *sql)
{
	for (const char *p = sql; *p; p++)
		if (strchr("pemswi", *p) && p[1] == '.' &&
		    (p == sql ||
		     !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
		       (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'))))
			return 1;
	return 0;
}

/* The hash-grouped form of an aggregated select with one integer key and
 * aggregates gm_hagg computes (see funcs_agg.c): 1 with out filled, 0 when the
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

/* The SQL of the unit column a metric's value column shows its values in
 * (query/print.c: "X.unit" for "X.mean", which `with X` adds, else "unit"),
 * when the plan has not got that column yet; NULL otherwise.  *name is
 * the unit column's name (the caller frees it). */
static const char *missing_unit(const struct query_plan *p, const struct scope *s, size_t col,
				char **name)
{
	const char *v = p->cols[col].name, *dot = strrchr(v, '.');
	*name = dot ? xasprintf("%.*s.unit", (int)(dot - v), v) : xstrdup("unit");
	for (size_t i = 0; i < p->ncols; i++)
		if (!strcmp(p->cols[i].name, *name))
			return NULL;
	if (!dot)
		return s->src == QS_METRICS || s->src == QS_SAMPLES ? "m.unit" : NULL;
	for (size_t i = 0; i < s->nextras; i++)
		if (!strcmp(s->extras[i].name, *name))
			return s->extras[i].sql;
	return NULL;
}

/* Builds the SELECT of ast in scope s into out; the top level also records
 * the plan's columns. */
int compile_select(struct cc *c, const struct query_ast *ast, struct scope *s, struct sbuf *out)
{
	int top = !s->window_mode;
	s->level_word = "the source";
	if (ast->metric) {
		struct sbuf cond;
		sbuf_init(&cond);
		/* a reference by name: restrict rows to the metrics it names */
		const struct qnode *n = ast->metric;
		if (correlate_metric_id(c, NULL, n, NULL, 0, NULL) < 0) {
			sbuf_release(&cond);
			return -1;
		}
		const struct query_mref *m = &c->plan->mrefs[c->plan->nmrefs - 1];
		sbuf_adds(&cond, s->src == QS_SAMPLES
				     ? "s.metric_id IN (SELECT id FROM metrics WHERE (name = "
				     : "(m.name = ");
		compile_bind_text(c, &cond, m->name);
		sbuf_adds(&cond, " OR (resource || '.' || name) = ");
		compile_bind_text(c, &cond, m->name);
		sbuf_adds(&cond, ")");
		if (m->host) {
			sbuf_adds(&cond, " AND host = ");
			compile_bind_text(c, &cond, m->host);
		}
		if (s->src == QS_SAMPLES)
			sbuf_adds(&cond, ")");
		compile_add_where(s, cond.buf);
		sbuf_release(&cond);
	}
	if (ast->filter) {
		struct sbuf cond;
		sbuf_init(&cond);
		int r = emit_expr(c, s, &cond, ast->filter, 0);
		if (r == 0)
			compile_add_where(s, cond.buf);
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
			compile_bind_int(c, out, s->limit);
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
			compile_fail(c, ast->source_pos, 1,
				     xstrdup("'by' needs stats, count or top after it"),
				     xstrdup("e.g. phases | by name | stats count, sum(dur)"));
			return -1;
		}
		if (s->nsel) {
			for (size_t i = 0; i < s->nsel; i++)
				COL(s->sel[i].sql, s->sel[i].name, s->sel[i].type);
		} else {
			for (size_t i = 0; s->si->defaults[i]; i++) {
				const struct field *f = source_field(s, s->si->defaults[i]);
				char *sql = source_field_sql(s, f->sql);
				COL(sql, f->name, f->type);
				free(sql);
			}
		}
		/* the columns stages added, unless select chose the columns */
		for (size_t i = 0; !s->nsel && i < s->nextras; i++)
			COL(s->extras[i].sql, s->extras[i].name, s->extras[i].type);
		/* each metric value's unit, for the table to show it in */
		for (size_t i = 0, n = top ? c->plan->ncols : 0; i < n; i++) {
			char *uname = NULL;
			const char *usql = c->plan->cols[i].type == QC_MVAL
					       ? missing_unit(c->plan, s, i, &uname)
					       : NULL;
			if (usql)
				COL(usql, uname, QC_TEXT);
			free(uname);
		}
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
						[QS_SAMPLES] = "s.metric_id, s.t_ns",
						[QS_GAPS] = "i.track_id, i.start_ns"};
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
		compile_bind_int(c, out, s->limit);
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
	source_scope_init(&s, ast.source);
	if (compile_select(&c, &ast, &s, &body) < 0)
		goto out;
	if (c.ncte)
		plan->sql = xasprintf("WITH %s %s", c.ctes.buf, body.buf);
	else
		plan->sql = sbuf_detach(&body);
	rc = 0;
out:
	source_scope_release(&s);
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
