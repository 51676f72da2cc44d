/*
 * The query parser (see parse.h): recursive descent over query_lex_next,
 * building nodes in one arena per tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/util/sbuf.h"
#include "query/parse.h"
#include "model/util/xalloc.h"

#define MAX_DEPTH 64 /* nesting of parentheses, not's and sub-queries */

const char *const query_sources[] = {"phases", "events", "metrics", "samples", "gaps", "sql", NULL};
const char *const query_stage_words[] = {"where", "by",	    "stats",	 "count",  "top",
					 "sort",  "limit",  "select",	 "during", "between",
					 "with",  "within", "saturated", NULL};

/* Arena: blocks chained through their first word, freed at once. */
struct arena {
	struct arena *next;
	size_t used, cap;
	max_align_t data[];
};

static void *arena_alloc(void **head, size_t n)
{
	struct arena *a = *head;
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!a || a->cap - a->used < n) {
		size_t cap = n > 4096 ? n : 4096;
		struct arena *b = xmalloc(sizeof(*b) + cap);
		b->next = a;
		b->used = 0;
		b->cap = cap;
		*head = a = b;
	}
	void *p = (char *)a->data + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

static void arena_free(void *head)
{
	struct arena *a = head;
	while (a) {
		struct arena *next = a->next;
		free(a);
		a = next;
	}
}

void query_error_set(struct query_error *e, int pos, int len, char *msg, char *hint)
{
	if (e->msg) { /* the first error wins */
		free(msg);
		free(hint);
		return;
	}
	e->pos = pos;
	e->len = len > 0 ? len : 1;
	e->msg = msg;
	e->hint = hint;
}

void query_error_release(struct query_error *e)
{
	free(e->msg);
	free(e->hint);
	memset(e, 0, sizeof(*e));
}

char *query_error_format(const char *query, const struct query_error *e)
{
	struct sbuf sb;
	sbuf_init(&sb);
	size_t n = strlen(query);
	int pos = e->pos < 0 ? 0 : (size_t)e->pos > n ? (int)n : e->pos;
	int len = e->len < 1 ? 1 : e->len;
	/* the column counts characters, not bytes: UTF-8 continuation
	 * bytes take no column */
	int col = 0;
	for (int i = 0; i < pos; i++)
		if (((unsigned char)query[i] & 0xc0) != 0x80)
			col++;
	sbuf_addf(&sb, "error at column %d: %s\n  ", col + 1, e->msg ? e->msg : "bad query");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)query[i];
		sbuf_addc(&sb, c < 0x20 || c == 0x7f ? ' ' : (char)c);
	}
	sbuf_adds(&sb, "\n  ");
	for (int i = 0; i < col; i++)
		sbuf_addc(&sb, ' ');
	int carets = 0;
	for (int i = pos; i < pos + len && (size_t)i < n; i++)
		if (((unsigned char)query[i] & 0xc0) != 0x80)
			carets++;
	if (carets < 1)
		carets = 1;
	for (int i = 0; i < carets; i++)
		sbuf_addc(&sb, '^');
	if (e->hint)
		sbuf_addf(&sb, "\nhint: %s", e->hint);
	return sbuf_detach(&sb);
}

/* Optimal string alignment distance (a swap of two neighbours counts one:
 * "tpo" is one edit from "top"), case-insensitive. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int ne = (a[i - 1] | 0x20) != (b[j - 1] | 0x20);
			size_t v = d[i - 1][j - 1] + (size_t)ne;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && (a[i - 1] | 0x20) == (b[j - 2] | 0x20) &&
			    (a[i - 2] | 0x20) == (b[j - 1] | 0x20) && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *query_suggest(const char *s, const char *const *cands)
{
	const char *best = NULL;
	size_t bestd = 99, len = strlen(s);
	size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	for (size_t i = 0; cands[i]; i++) {
		size_t d = edit_distance(s, cands[i]);
		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

struct parser {
	const char *q;
	int pos;
	struct query_token tok;
	void **arena;
	struct query_error *e;
	int depth;
	int parens; /* open '(' of conditions: a value may end at ')' */
	int failed;
};

static void advance(struct parser *p)
{
	p->tok = query_lex_next(p->q, &p->pos);
}

static void fail(struct parser *p, int pos, int len, char *msg, char *hint)
{
	if (!p->failed)
		query_error_set(p->e, pos, len, msg, hint);
	else {
		free(msg);
		free(hint);
	}
	p->failed = 1;
}

/* A short quoted rendering of the current token, for messages. */
static char *tok_text(struct parser *p)
{
	if (p->tok.type == QT_EOF)
		return xstrdup("the end of the query");
	int n = p->tok.len > 40 ? 40 : p->tok.len;
	return xasprintf("'%.*s%s'", n, p->q + p->tok.pos, p->tok.len > 40 ? "..." : "");
}

static void fail_expected(struct parser *p, const char *what, const char *hint)
{
	char *t = tok_text(p);
	if (p->tok.type == QT_ERROR && (p->q[p->tok.pos] == '"' || p->q[p->tok.pos] == '\''))
		fail(p, p->tok.pos, 1, xstrdup("unterminated string"),
		     xstrdup("close it with the same quote"));
	else
		fail(p, p->tok.pos, p->tok.len, xasprintf("expected %s, found %s", what, t),
		     hint ? xstrdup(hint) : NULL);
	free(t);
}

static int is_kw(const struct parser *p, const char *kw)
{
	return p->tok.type == QT_WORD && (size_t)p->tok.len == strlen(kw) &&
	       !strncasecmp(p->q + p->tok.pos, kw, (size_t)p->tok.len);
}

static char *arena_strndup(struct parser *p, const char *s, size_t n)
{
	char *d = arena_alloc(p->arena, n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static struct qnode *new_node(struct parser *p, enum qnode_kind kind, int pos, int len)
{
	struct qnode *n = arena_alloc(p->arena, sizeof(*n));
	n->kind = kind;
	n->pos = pos;
	n->len = len;
	return n;
}

static struct qnode *parse_or(struct parser *p);
static struct qnode *parse_value(struct parser *p);

/* NUMBER | STRING | PATH | WORD [ "(" [term] ")" ] */
static struct qnode *parse_term(struct parser *p)
{
	struct query_token t = p->tok;
	struct qnode *n;
	const char *why;
	switch (t.type) {
	case QT_NUMBER:
		n = new_node(p, QN_NUMBER, t.pos, t.len);
		if (query_lex_number(p->q + t.pos, t.len, &n->num, &why) < 0) {
			int u = n->num.unit_pos;
			if (u >= 0) {
				char *unit = xstrndup(p->q + t.pos + u, (size_t)(t.len - u));
				const char *s = query_suggest(unit, query_units);
				fail(p, t.pos + u, t.len - u, xasprintf("%s '%s'", why, unit),
				     s ? xasprintf("did you mean '%s'?", s)
				       : xstrdup(
					     "units: ns us ms s min h, B KB MB GB KiB MiB GiB, %"));
				free(unit);
			} else {
				fail(p, t.pos, t.len, xstrdup(why), NULL);
			}
			return NULL;
		}
		advance(p);
		return n;
	case QT_STRING:
		n = new_node(p, QN_STRING, t.pos, t.len);
		{
			char *s = query_lex_string(p->q + t.pos, t.len);
			n->text = arena_strndup(p, s, strlen(s));
			free(s);
		}
		advance(p);
		return n;
	case QT_PATH:
		n = new_node(p, QN_PATH, t.pos, t.len);
		n->text = arena_strndup(p, p->q + t.pos, (size_t)t.len);
		advance(p);
		return n;
	case QT_WORD:
		advance(p);
		if (p->tok.type != QT_LP) {
			n = new_node(p, QN_WORD, t.pos, t.len);
			n->text = arena_strndup(p, p->q + t.pos, (size_t)t.len);
			return n;
		}
		n = new_node(p, QN_CALL, t.pos, t.len);
		n->text = arena_strndup(p, p->q + t.pos, (size_t)t.len);
		advance(p);
		if (p->tok.type != QT_RP) {
			if (++p->depth > MAX_DEPTH) {
				fail(p, p->tok.pos, p->tok.len, xstrdup("query nested too deeply"),
				     NULL);
				return NULL;
			}
			n->a = parse_value(p);
			p->depth--;
			if (!n->a)
				return NULL;
		}
		if (p->tok.type != QT_RP) {
			fail_expected(p, "')'", NULL);
			return NULL;
		}
		n->len = p->tok.pos + 1 - n->pos;
		advance(p);
		return n;
	default:
		fail_expected(p, "a field, a number or a string",
			      "strings are quoted: name = \"aten::mm\"");
		return NULL;
	}
}

static int is_cmp_op(enum query_tok t)
{
	return t >= QT_EQ && t <= QT_NMATCH;
}

static void fail_deep(struct parser *p)
{
	fail(p, p->tok.pos, p->tok.len, xstrdup("query nested too deeply"), NULL);
}

/* Whether the token after the current one can start a value: a lone '/'
 * before one is division, anywhere else the root path. */
static int next_starts_value(const struct parser *p)
{
	int look = p->pos;
	struct query_token t = query_lex_next(p->q, &look);
	return t.type == QT_NUMBER || t.type == QT_WORD || t.type == QT_LP || t.type == QT_MINUS;
}

/* Whether n is a value (something arithmetic and comparisons take), not a
 * condition. */
static int is_value(const struct qnode *n)
{
	return n->kind == QN_WORD || n->kind == QN_NUMBER || n->kind == QN_STRING ||
	       n->kind == QN_CALL || n->kind == QN_ARITH || n->kind == QN_NEG;
}

static struct qnode *new_arith(struct parser *p, enum query_tok op, struct qnode *a,
			       struct qnode *b)
{
	struct qnode *n = new_node(p, QN_ARITH, a->pos, b->pos + b->len - a->pos);
	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

/* "-" unary | "(" value ")" | term */
static struct qnode *parse_unary(struct parser *p)
{
	struct qnode *n = NULL;
	int pos = p->tok.pos;
	if (++p->depth > MAX_DEPTH) {
		fail_deep(p);
		return NULL;
	}
	if (p->tok.type == QT_MINUS) {
		advance(p);
		struct qnode *a = parse_unary(p);
		if (a) {
			n = new_node(p, QN_NEG, pos, a->pos + a->len - pos);
			n->a = a;
		}
	} else if (p->tok.type == QT_LP) {
		advance(p);
		n = parse_value(p);
		if (n && p->tok.type != QT_RP) {
			fail_expected(p, "')'", NULL);
			n = NULL;
		} else if (n) {
			/* the parentheses are part of the value's text */
			n->len = p->tok.pos + 1 - pos;
			n->pos = pos;
			advance(p);
		}
	} else {
		n = parse_term(p);
	}
	p->depth--;
	return n;
}

/* a {("*"|"/") unary}, a already parsed (NULL: it failed) */
static struct qnode *parse_mul_from(struct parser *p, struct qnode *a)
{
	while (a && is_value(a) && a->kind != QN_STRING) {
		enum query_tok op;
		if (p->tok.type == QT_STAR)
			op = QT_STAR;
		else if (p->tok.type == QT_PATH && p->tok.len == 1 && next_starts_value(p))
			op = QT_SLASH;
		else
			break;
		advance(p);
		struct qnode *b = parse_unary(p);
		a = b ? new_arith(p, op, a, b) : NULL;
	}
	return a;
}

/* a {("+"|"-") mul}, a already parsed: multiplication binds tighter */
static struct qnode *parse_add_from(struct parser *p, struct qnode *a)
{
	while (a && is_value(a) && a->kind != QN_STRING) {
		enum query_tok op = p->tok.type;
		if (op == QT_NUMBER && p->q[p->tok.pos] == '-') {
			/* "dur -5ms": a negative literal after a value subtracts */
			op = QT_MINUS;
			p->tok.pos++;
			p->tok.len--;
		} else if (op == QT_PLUS || op == QT_MINUS) {
			advance(p);
		} else {
			break;
		}
		struct qnode *b = parse_mul_from(p, parse_unary(p));
		a = b ? new_arith(p, op, a, b) : NULL;
	}
	return a;
}

static struct qnode *parse_value(struct parser *p)
{
	return parse_add_from(p, parse_mul_from(p, parse_unary(p)));
}

/* "(" expr ")" | PATH | "/..." string | value op value.  A '(' may open a
 * condition or a value: its content is parsed as a condition, where a
 * value may end at the ')', and a value goes on as arithmetic after it. */
static struct qnode *parse_cmp(struct parser *p)
{
	struct qnode *a;
	if (p->tok.type == QT_LP) {
		int pos = p->tok.pos;
		advance(p);
		p->parens++;
		struct qnode *n = parse_or(p);
		p->parens--;
		if (!n)
			return NULL;
		if (p->tok.type != QT_RP) {
			char *t = tok_text(p);
			fail(p, p->tok.pos, p->tok.len, xasprintf("expected ')', found %s", t),
			     xasprintf("the '(' at column %d is not closed", pos + 1));
			free(t);
			return NULL;
		}
		if (!is_value(n)) {
			advance(p);
			return n;
		}
		n->len = p->tok.pos + 1 - pos;
		n->pos = pos;
		advance(p);
		if (!(a = parse_add_from(p, parse_mul_from(p, n))))
			return NULL;
	} else {
		if (!(a = parse_value(p)))
			return NULL;
		if (a->kind == QN_PATH || (a->kind == QN_STRING && a->text[0] == '/')) {
			if (!is_cmp_op(p->tok.type)) {
				a->kind = QN_PATH;
				return a;
			}
		}
	}
	if (!is_cmp_op(p->tok.type)) {
		if (p->parens && p->tok.type == QT_RP)
			return a; /* a value in parentheses: the caller goes on */
		char *t = tok_text(p);
		int slash = p->tok.type == QT_PATH && p->tok.len > 1;
		fail(p, p->tok.pos, p->tok.len,
		     xasprintf("expected a comparison (= != < <= > >= ~ !~) after '%.*s', found %s",
			       a->len > 40 ? 40 : a->len, p->q + a->pos, t),
		     xstrdup(slash ? "to divide, put blanks around '/': dur / 2"
				   : "e.g. dur > 1ms, name ~ \"^aten::\", kind = operator"));
		free(t);
		return NULL;
	}
	struct qnode *n = new_node(p, QN_CMP, a->pos, 0);
	n->op = p->tok.type;
	advance(p);
	n->a = a;
	if (!(n->b = parse_value(p)))
		return NULL;
	n->len = n->b->pos + n->b->len - n->pos;
	return n;
}

static struct qnode *parse_not(struct parser *p)
{
	if (is_kw(p, "not")) {
		struct qnode *n = new_node(p, QN_NOT, p->tok.pos, p->tok.len);
		advance(p);
		if (++p->depth > MAX_DEPTH) {
			fail(p, p->tok.pos, p->tok.len, xstrdup("query nested too deeply"), NULL);
			return NULL;
		}
		n->a = parse_not(p);
		p->depth--;
		return n->a ? n : NULL;
	}
	if (++p->depth > MAX_DEPTH) {
		fail(p, p->tok.pos, p->tok.len, xstrdup("query nested too deeply"), NULL);
		return NULL;
	}
	struct qnode *n = parse_cmp(p);
	p->depth--;
	return n;
}

/* A token that can start another condition: juxtaposition means "and". */
static int starts_condition(const struct parser *p)
{
	switch (p->tok.type) {
	case QT_LP:
	case QT_PATH:
	case QT_STRING:
		return 1;
	case QT_WORD:
		return !is_kw(p, "or") && !is_kw(p, "and");
	default:
		return 0;
	}
}

static struct qnode *parse_and(struct parser *p)
{
	struct qnode *a = parse_not(p);
	while (a && (is_kw(p, "and") || starts_condition(p))) {
		if (is_kw(p, "and"))
			advance(p);
		struct qnode *n = new_node(p, QN_AND, a->pos, 0);
		n->a = a;
		if (!(n->b = parse_not(p)))
			return NULL;
		n->len = n->b->pos + n->b->len - n->pos;
		a = n;
	}
	return a;
}

static struct qnode *parse_or(struct parser *p)
{
	struct qnode *a = parse_and(p);
	while (a && is_kw(p, "or")) {
		advance(p);
		struct qnode *n = new_node(p, QN_OR, a->pos, 0);
		n->a = a;
		if (!(n->b = parse_and(p)))
			return NULL;
		n->len = n->b->pos + n->b->len - n->pos;
		a = n;
	}
	return a;
}

static int at_stage_end(const struct parser *p)
{
	return p->tok.type == QT_PIPE || p->tok.type == QT_EOF || p->tok.type == QT_RP;
}

/* term {"," term}; sort also takes asc/desc after each term. */
static int parse_terms(struct parser *p, struct qstage *s, int sort)
{
	struct qnode *buf[64];
	int desc[64];
	size_t n = 0;
	do {
		if (n && p->tok.type == QT_COMMA)
			advance(p);
		if (n == 64) {
			fail(p, p->tok.pos, p->tok.len, xstrdup("too many terms (64 at most)"),
			     NULL);
			return -1;
		}
		if (!(buf[n] = parse_value(p)))
			return -1;
		desc[n] = 0;
		if (sort && (is_kw(p, "asc") || is_kw(p, "desc"))) {
			desc[n] = is_kw(p, "desc");
			advance(p);
		}
		n++;
	} while (p->tok.type == QT_COMMA);
	s->terms = arena_alloc(p->arena, n * sizeof(*s->terms));
	s->desc = arena_alloc(p->arena, n * sizeof(*s->desc));
	memcpy(s->terms, buf, n * sizeof(*buf));
	memcpy(s->desc, desc, n * sizeof(*desc));
	s->nterms = n;
	return 0;
}

static int parse_count(struct parser *p, long long *out, const char *what)
{
	struct query_number num;
	const char *why;
	if (p->tok.type != QT_NUMBER ||
	    query_lex_number(p->q + p->tok.pos, p->tok.len, &num, &why) < 0 ||
	    num.kind != QU_NONE || !num.is_int || num.i < 0) {
		fail_expected(p, what, "a whole number such as 10");
		return -1;
	}
	*out = num.i;
	advance(p);
	return 0;
}

static int parse_inner(struct parser *p, struct query_ast *ast, int pipes);

static int parse_window(struct parser *p, struct qwindow *w)
{
	w->pos = p->tok.pos;
	if (p->tok.type == QT_PATH || (p->tok.type == QT_STRING && p->q[p->tok.pos + 1] == '/')) {
		if (!(w->path = parse_term(p)))
			return -1;
		w->path->kind = QN_PATH;
		w->len = w->path->len;
		return 0;
	}
	if (p->tok.type == QT_LP || is_kw(p, "phases")) {
		int paren = p->tok.type == QT_LP;
		if (paren)
			advance(p);
		if (++p->depth > MAX_DEPTH) {
			fail(p, p->tok.pos, p->tok.len, xstrdup("query nested too deeply"), NULL);
			return -1;
		}
		w->sub = arena_alloc(p->arena, sizeof(*w->sub));
		if (parse_inner(p, w->sub, paren) < 0)
			return -1;
		p->depth--;
		if (paren) {
			if (p->tok.type != QT_RP) {
				fail_expected(p, "')'", NULL);
				return -1;
			}
			advance(p);
		}
		w->len = p->tok.pos - w->pos;
		return 0;
	}
	fail_expected(p, "a phase path or a phase selection",
		      "e.g. during /demo/train, during phases kind = step");
	return -1;
}

static int parse_number_term(struct parser *p, struct qnode **out, const char *what)
{
	if (p->tok.type != QT_NUMBER) {
		fail_expected(p, what, NULL);
		return -1;
	}
	return (*out = parse_term(p)) ? 0 : -1;
}

static int parse_metric(struct parser *p, struct qnode **out)
{
	if (p->tok.type != QT_WORD && p->tok.type != QT_STRING) {
		fail_expected(p, "a metric name", "e.g. cpu.util, \"gpu0.utilization.gpu\"");
		return -1;
	}
	return (*out = parse_term(p)) ? 0 : -1;
}

static const struct {
	const char *word;
	enum qstage_kind kind;
} stage_table[] = {
    {"where", QST_WHERE},	  {"by", QST_BY},	  {"stats", QST_STATS},
    {"count", QST_COUNT},	  {"top", QST_TOP},	  {"sort", QST_SORT},
    {"limit", QST_LIMIT},	  {"select", QST_SELECT}, {"during", QST_DURING},
    {"between", QST_BETWEEN},	  {"with", QST_WITH},	  {"within", QST_WITHIN},
    {"saturated", QST_SATURATED},
};

static int parse_stage(struct parser *p, struct qstage *s)
{
	size_t k;
	for (k = 0; k < sizeof(stage_table) / sizeof(stage_table[0]); k++)
		if (is_kw(p, stage_table[k].word))
			break;
	if (k == sizeof(stage_table) / sizeof(stage_table[0])) {
		char *w = xstrndup(p->q + p->tok.pos, (size_t)p->tok.len);
		const char *sug =
		    p->tok.type == QT_WORD ? query_suggest(w, query_stage_words) : NULL;
		char *t = tok_text(p);
		fail(p, p->tok.pos, p->tok.len, xasprintf("unknown stage %s", t),
		     sug ? xasprintf("did you mean '%s'?", sug)
			 : xstrdup("stages: where by stats count top sort limit select during "
				   "between with within saturated"));
		free(t);
		free(w);
		return -1;
	}
	s->kind = stage_table[k].kind;
	s->pos = p->tok.pos;
	s->len = p->tok.len;
	advance(p);
	switch (s->kind) {
	case QST_WHERE:
		return (s->expr = parse_or(p)) ? 0 : -1;
	case QST_BY:
	case QST_STATS:
	case QST_SELECT:
		return parse_terms(p, s, 0);
	case QST_SORT:
		return parse_terms(p, s, 1);
	case QST_WITH:
		return parse_terms(p, s, 0);
	case QST_COUNT:
		return 0;
	case QST_TOP:
		if (parse_count(p, &s->n, "how many rows") < 0)
			return -1;
		if (!at_stage_end(p) && !(s->key = parse_value(p)))
			return -1;
		return 0;
	case QST_LIMIT:
		return parse_count(p, &s->n, "how many rows");
	case QST_DURING:
		return parse_window(p, &s->win);
	case QST_BETWEEN:
		if (parse_number_term(p, &s->t0, "a time (e.g. 2s)") < 0)
			return -1;
		if (!is_kw(p, "and")) {
			fail_expected(p, "'and'", "between 2s and 5s");
			return -1;
		}
		advance(p);
		return parse_number_term(p, &s->t1, "a time (e.g. 5s)");
	case QST_WITHIN:
		if (parse_number_term(p, &s->t0, "a distance (e.g. 5ms)") < 0)
			return -1;
		if (!is_kw(p, "of")) {
			fail_expected(p, "'of'", "within 5ms of /demo/train");
			return -1;
		}
		advance(p);
		return parse_window(p, &s->win);
	case QST_SATURATED:
		if (parse_metric(p, &s->metric) < 0)
			return -1;
		if (p->tok.type == QT_GE) {
			advance(p);
			return parse_number_term(p, &s->threshold, "a threshold (e.g. 90%)");
		}
		return 0;
	}
	return 0;
}

/* source [metric] [expr] {"|" stage}; pipes: whether stages may follow
 * (not in an unparenthesised window, whose '|' belongs to the outer query). */
static int parse_inner(struct parser *p, struct query_ast *ast, int pipes)
{
	size_t k;
	for (k = 0; k < QS_NSOURCES; k++)
		if (is_kw(p, query_sources[k]))
			break;
	if (k == QS_NSOURCES) {
		char *w = xstrndup(p->q + p->tok.pos, (size_t)p->tok.len);
		const char *sug = p->tok.type == QT_WORD ? query_suggest(w, query_sources) : NULL;
		char *t = tok_text(p);
		fail(p, p->tok.pos, p->tok.len,
		     xasprintf("expected phases, events, metrics, samples, gaps or sql, found %s",
			       t),
		     sug ? xasprintf("did you mean '%s'?", sug) : NULL);
		free(t);
		free(w);
		return -1;
	}
	ast->source = (enum query_source)k;
	ast->source_pos = p->tok.pos;
	advance(p);
	if ((ast->source == QS_METRICS || ast->source == QS_SAMPLES) &&
	    (p->tok.type == QT_WORD || p->tok.type == QT_STRING) && !is_kw(p, "not")) {
		/* a metric reference, unless the word starts a comparison */
		int look = p->pos;
		struct query_token next = query_lex_next(p->q, &look);
		if (!is_cmp_op(next.type) && next.type != QT_LP &&
		    !(p->tok.type == QT_STRING && p->q[p->tok.pos + 1] == '/'))
			if (!(ast->metric = parse_term(p)))
				return -1;
	}
	if (!at_stage_end(p) && !(ast->filter = parse_or(p)))
		return -1;
	struct qstage buf[64];
	size_t n = 0;
	while (pipes && p->tok.type == QT_PIPE) {
		advance(p);
		if (n == 64) {
			fail(p, p->tok.pos, p->tok.len, xstrdup("too many stages (64 at most)"),
			     NULL);
			return -1;
		}
		memset(&buf[n], 0, sizeof(buf[n]));
		if (parse_stage(p, &buf[n]) < 0)
			return -1;
		n++;
	}
	ast->stages = arena_alloc(p->arena, (n ? n : 1) * sizeof(*ast->stages));
	memcpy(ast->stages, buf, n * sizeof(*buf));
	ast->nstages = n;
	return 0;
}

int query_parse(const char *q, struct query_ast *ast, struct query_error *e)
{
	struct parser p = {.q = q, .e = e};
	memset(ast, 0, sizeof(*ast));
	p.arena = &ast->arena;
	advance(&p);
	if (is_kw(&p, "sql")) {
		ast->is_sql = 1;
		ast->source_pos = p.tok.pos;
		ast->sql = q + p.pos;
		return 0;
	}
	if (parse_inner(&p, ast, 1) < 0)
		goto fail;
	if (p.tok.type != QT_EOF) {
		if (p.tok.type == QT_RP)
			fail(&p, p.tok.pos, 1, xstrdup("unbalanced ')'"), NULL);
		else
			fail_expected(&p, "'|' or the end of the query",
				      "stages are separated by '|', e.g. phases | top 10 dur");
		goto fail;
	}
	return 0;
fail:
	query_ast_release(ast);
	if (!e->msg)
		query_error_set(e, 0, 1, xstrdup("bad query"), NULL);
	return -1;
}

void query_ast_release(struct query_ast *ast)
{
	arena_free(ast->arena);
	memset(ast, 0, sizeof(*ast));
}
