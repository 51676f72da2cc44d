/*
 * The query language's lexer: splits a query (man grademl-query(7)) into
 * tokens.  Table-driven, as SQLite's tokenize.c: one character-class table
 * and query_lex_token, which returns the type and length of the token at a
 * position.  Tokens point into the caller's text; the lexer owns nothing.
 *
 * Words are identifiers, keywords, field and metric names in one class: a
 * letter, '_' or any non-ASCII byte, then letters, digits and _ . : - # @ *
 * (so `cpu.util`, `disk:vda.util-percent`, `aten::mm` are one word).
 * Keywords are words the parser recognises by text, case-insensitively.
 * A number may carry a unit suffix (`1.5ms`, `2GB`, `80%`), kept in the
 * token and converted by query_lex_number.  The arithmetic operators are
 * `+`, a `-` that starts no number, and a `*` that starts a token; `/`
 * starts a path, and the parser reads a lone `/` between operands as
 * division (so operators after a word need a blank: `dur*2` is one word).  A path starts with '/'
 * and runs to a blank, '|', ',' or ')'; a name with blanks needs a quoted path.
 */
#ifndef GRADEML_QUERY_LEXER_H
#define GRADEML_QUERY_LEXER_H

#include <stddef.h>
#include <stdint.h>

enum query_tok {
	QT_EOF,
	QT_WORD,
	QT_STRING, /* "..." or '...', with \" \' \\ \n \t escapes */
	QT_NUMBER, /* digits [. digits] [e[+-]digits] [unit]; a leading '-' */
	QT_PATH,
	QT_PIPE,
	QT_LP,
	QT_RP,
	QT_COMMA,
	QT_EQ,
	QT_NE,
	QT_LT,
	QT_LE,
	QT_GT,
	QT_GE,
	QT_MATCH,  /* ~ */
	QT_NMATCH, /* !~ */
	QT_PLUS,
	QT_MINUS, /* a '-' not starting a number */
	QT_STAR,  /* a '*' starting a token (inside a word it is part of it) */
	QT_SLASH, /* never returned: the parser's name for a lone '/' operator */
	QT_ERROR  /* a character no token starts with, or an unterminated string */
};

struct query_token {
	enum query_tok type;
	int pos; /* byte offset in the query */
	int len;
};

/* The token starting at s[0] (s NUL-terminated, blanks already skipped by
 * the caller or not): its type, and its length in *len (0 at the end).
 * Leading blanks are not part of any token: query_lex_next skips them. */
enum query_tok query_lex_token(const char *s, int *len);
/* The next token of q at or after *pos; advances *pos past it. */
struct query_token query_lex_next(const char *q, int *pos);

/* Units a number literal may carry; the kind of value it makes. */
enum query_unit_kind { QU_NONE, QU_TIME, QU_BYTES, QU_PERCENT };

struct query_number {
	enum query_unit_kind kind;
	int is_int;   /* value fits int64 exactly (time and bytes always do) */
	int64_t i;    /* nanoseconds for time, bytes for sizes */
	double r;     /* the value as a double (percent: 80% is 80) */
	int unit_pos; /* offset of the unit in the token, or -1 */
};

/* Converts a QT_NUMBER token's text s[0..n) with its unit: ns us ms s min h
 * (to integer nanoseconds, exactly for plain decimals), B KB MB GB (decimal)
 * KiB MiB GiB (binary) (to integer bytes), % (the number itself).  Returns
 * 0, or -1 with *why (static text) on an unknown unit or an overflow; then
 * n->unit_pos tells where the unit starts. */
int query_lex_number(const char *s, int n, struct query_number *out, const char **why);
/* The unit names query_lex_number accepts, NULL-terminated (for hints). */
extern const char *const query_units[];

/* The text of a QT_STRING token s[0..n) without quotes and with escapes
 * resolved; the caller frees it. */
char *query_lex_string(const char *s, int n);

#endif
