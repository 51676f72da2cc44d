/*
 * The query parser: text to a syntax tree (grammar in man grademl-query(7)).
 *
 *   query  = "sql" ANY-TEXT | source { "|" stage }
 *   source = ("phases"|"events"|"metrics"|"samples"|"gaps") [metric] [expr]
 *   stage  = where expr | by term,... | stats agg,... | count
 *          | top INT [term] | sort term [asc|desc],... | limit INT
 *          | select term,... | during window | between time and time
 *          | with metric,... | within DUR of window
 *          | saturated metric [>= number]
 *   window = PATH | "(" query ")" | phases [expr]
 *   expr   = expr or expr | expr and expr | expr expr (and) | not expr
 *          | "(" expr ")" | value op value | PATH
 *   value  = value ("+"|"-") value | value ("*"|"/") value | "-" value
 *          | "(" value ")" | term    ('*' and '/' bind tighter than '+' '-')
 *   term   = WORD | NUMBER | STRING | PATH | WORD "(" [value] ")"
 *
 * A value where a term may stand (a comparison's sides, select, sort and
 * top keys, an aggregate's argument) may be arithmetic; by, stats and with
 * take terms, and the compiler says so.  The parser only checks the shape; names (fields,
 * functions, metrics) are resolved by query_compile.  Every node keeps its position for errors. The
 * tree is owned by struct query_ast and freed whole by query_ast_release; strings in nodes are
 * owned by the tree.
 */
#ifndef GRADEML_QUERY_PARSE_H
#define GRADEML_QUERY_PARSE_H

#include <stddef.h>

#include "query/lexer.h"

/* Where a query went wrong: a byte offset and length in the query text, a
 * message and an optional hint.  Messages are static or owned (msg/hint are
 * freed by query_error_release). */
struct query_error {
	int pos, len;
	char *msg;
	char *hint; /* NULL: none */
};

void query_error_set(struct query_error *e, int pos, int len, char *msg, char *hint);
void query_error_release(struct query_error *e);
/* "error text\n  QUERY\n  ^^^\nhint: ..." for a terminal; the caller frees
 * it.  The query line is shown as typed (control characters as '?'). */
char *query_error_format(const char *query, const struct query_error *e);

enum query_source { QS_PHASES, QS_EVENTS, QS_METRICS, QS_SAMPLES, QS_GAPS, QS_NSOURCES };

enum qnode_kind {
	QN_OR,
	QN_AND,
	QN_NOT,
	QN_CMP,	 /* a op b */
	QN_WORD, /* a field or a bare text value */
	QN_NUMBER,
	QN_STRING,
	QN_PATH,  /* a glob over phase paths */
	QN_CALL,  /* word(arg) or word(): aggregates */
	QN_ARITH, /* a op b: QT_PLUS, QT_MINUS, QT_STAR or QT_SLASH */
	QN_NEG	  /* - a */
};

struct qnode {
	enum qnode_kind kind;
	int pos, len;
	enum query_tok op;	 /* QN_CMP, QN_ARITH */
	struct qnode *a, *b;	 /* operands; QN_CALL: a is the argument or NULL */
	char *text;		 /* QN_WORD, QN_STRING, QN_PATH, QN_CALL (name) */
	struct query_number num; /* QN_NUMBER */
};

enum qstage_kind {
	QST_WHERE,
	QST_BY,
	QST_STATS,
	QST_COUNT,
	QST_TOP,
	QST_SORT,
	QST_LIMIT,
	QST_SELECT,
	QST_DURING,
	QST_BETWEEN,
	QST_WITH,
	QST_WITHIN,
	QST_SATURATED
};

struct query_ast;

/* A time window source: phases selected by a path glob or a sub-query. */
struct qwindow {
	int pos, len;
	struct qnode *path;    /* a QN_PATH, or NULL */
	struct query_ast *sub; /* a phases query, or NULL */
};

struct qstage {
	enum qstage_kind kind;
	int pos, len;	      /* the keyword */
	struct qnode *expr;   /* where */
	struct qnode **terms; /* by, stats, sort, select, with (metric words) */
	int *desc;	      /* sort: per term */
	size_t nterms;
	long long n;		 /* top, limit */
	struct qnode *key;	 /* top: the key or NULL */
	struct qnode *t0, *t1;	 /* between: numbers; within: t0 the distance */
	struct qwindow win;	 /* during, within */
	struct qnode *metric;	 /* saturated */
	struct qnode *threshold; /* saturated: a number or NULL */
};

struct query_ast {
	int is_sql;
	const char *sql; /* is_sql: the text after "sql" (points into the query) */
	enum query_source source;
	int source_pos;
	struct qnode *metric; /* metrics/samples: a metric reference, or NULL */
	struct qnode *filter; /* or NULL */
	struct qstage *stages;
	size_t nstages;
	void *arena; /* owns every node, array and string above */
};

/* Parses q into *ast.  Returns 0, or -1 with *e set (ast left empty). */
int query_parse(const char *q, struct query_ast *ast, struct query_error *e);
void query_ast_release(struct query_ast *ast);

/* Keyword tables, for completion and hints. */
extern const char *const query_sources[];     /* by enum query_source, then "sql", NULL */
extern const char *const query_stage_words[]; /* NULL-terminated */

/* The word among cands (NULL-terminated) closest to s by edit distance,
 * if close enough to be a likely typo; else NULL. */
const char *query_suggest(const char *s, const char *const *cands);

#endif
