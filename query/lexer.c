/*
 * The query lexer (see lexer.h): a character-class table, one function that
 * classifies the token at a position, and the conversion of number literals
 * with their units.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/util/text.h"
#include "query/lexer.h"
#include "model/util/xalloc.h"

enum cc {
	CC_ILLEGAL,
	CC_SPACE,
	CC_ALPHA, /* letters, '_', bytes >= 0x80 */
	CC_DIGIT,
	CC_QUOTE,
	CC_SLASH,
	CC_PIPE,
	CC_LP,
	CC_RP,
	CC_COMMA,
	CC_EQ,
	CC_BANG,
	CC_LT,
	CC_GT,
	CC_TILDE,
	CC_MINUS,
	CC_DOT,
	CC_PLUS,
	CC_WORDONLY /* : # @ * : inside a word, never first */
};

static const unsigned char cc_table[256] = {
    ['\t'] = CC_SPACE,
    ['\n'] = CC_SPACE,
    ['\r'] = CC_SPACE,
    ['\f'] = CC_SPACE,
    ['\v'] = CC_SPACE,
    [' '] = CC_SPACE,
    ['"'] = CC_QUOTE,
    ['\''] = CC_QUOTE,
    ['/'] = CC_SLASH,
    ['|'] = CC_PIPE,
    ['('] = CC_LP,
    [')'] = CC_RP,
    [','] = CC_COMMA,
    ['='] = CC_EQ,
    ['!'] = CC_BANG,
    ['<'] = CC_LT,
    ['>'] = CC_GT,
    ['~'] = CC_TILDE,
    ['-'] = CC_MINUS,
    ['.'] = CC_DOT,
    ['+'] = CC_PLUS,
    [':'] = CC_WORDONLY,
    ['#'] = CC_WORDONLY,
    ['@'] = CC_WORDONLY,
    ['*'] = CC_WORDONLY,
    ['_'] = CC_ALPHA,
    ['0'] = CC_DIGIT,
    ['1'] = CC_DIGIT,
    ['2'] = CC_DIGIT,
    ['3'] = CC_DIGIT,
    ['4'] = CC_DIGIT,
    ['5'] = CC_DIGIT,
    ['6'] = CC_DIGIT,
    ['7'] = CC_DIGIT,
    ['8'] = CC_DIGIT,
    ['9'] = CC_DIGIT,
#define L(c) [c] = CC_ALPHA, [c - 'a' + 'A'] = CC_ALPHA
    L('a'),
    L('b'),
    L('c'),
    L('d'),
    L('e'),
    L('f'),
    L('g'),
    L('h'),
    L('i'),
    L('j'),
    L('k'),
    L('l'),
    L('m'),
    L('n'),
    L('o'),
    L('p'),
    L('q'),
    L('r'),
    L('s'),
    L('t'),
    L('u'),
    L('v'),
    L('w'),
    L('x'),
    L('y'),
    L('z'),
#undef L
#define H8(b)                                                                                      \
	[b] = CC_ALPHA, [b + 1] = CC_ALPHA, [b + 2] = CC_ALPHA, [b + 3] = CC_ALPHA,                \
	[b + 4] = CC_ALPHA, [b + 5] = CC_ALPHA, [b + 6] = CC_ALPHA, [b + 7] = CC_ALPHA
    H8(0x80),
    H8(0x88),
    H8(0x90),
    H8(0x98),
    H8(0xa0),
    H8(0xa8),
    H8(0xb0),
    H8(0xb8),
    H8(0xc0),
    H8(0xc8),
    H8(0xd0),
    H8(0xd8),
    H8(0xe0),
    H8(0xe8),
    H8(0xf0),
    H8(0xf8),
#undef H8
};

#define CC(c) cc_table[(unsigned char)(c)]

static int word_char(char c)
{
	switch (CC(c)) {
	case CC_ALPHA:
	case CC_DIGIT:
	case CC_DOT:
	case CC_MINUS:
	case CC_WORDONLY:
		return 1;
	default:
		return 0;
	}
}

/* Length of a number (with its unit letters) at s, which starts with a
 * digit, or '.' or '-' followed by one. */
static int number_len(const char *s)
{
	int i = 0;
	if (s[i] == '-')
		i++;
	while (CC(s[i]) == CC_DIGIT)
		i++;
	if (s[i] == '.')
		for (i++; CC(s[i]) == CC_DIGIT; i++)
			;
	if ((s[i] == 'e' || s[i] == 'E') &&
	    (CC(s[i + 1]) == CC_DIGIT ||
	     ((s[i + 1] == '+' || s[i + 1] == '-') && CC(s[i + 2]) == CC_DIGIT))) {
		i += 2;
		while (CC(s[i]) == CC_DIGIT)
			i++;
	}
	while (CC(s[i]) == CC_ALPHA || s[i] == '%')
		i++;
	return i;
}

enum query_tok query_lex_token(const char *s, int *len)
{
	int i;
	switch (CC(s[0])) {
	case CC_SPACE:
		for (i = 1; CC(s[i]) == CC_SPACE; i++)
			;
		*len = i;
		return QT_ERROR; /* blanks are skipped by query_lex_next */
	case CC_ALPHA:
		for (i = 1; word_char(s[i]); i++)
			;
		*len = i;
		return QT_WORD;
	case CC_DIGIT:
		*len = number_len(s);
		return QT_NUMBER;
	case CC_DOT:
	case CC_MINUS:
		if (CC(s[1]) == CC_DIGIT || (s[0] == '-' && s[1] == '.' && CC(s[2]) == CC_DIGIT)) {
			*len = number_len(s);
			return QT_NUMBER;
		}
		*len = 1;
		return s[0] == '-' ? QT_MINUS : QT_ERROR;
	case CC_PLUS:
		*len = 1;
		return QT_PLUS;
	case CC_QUOTE:
		for (i = 1; s[i] && s[i] != s[0]; i++)
			if (s[i] == '\\' && s[i + 1])
				i++;
		if (!s[i]) {
			*len = i;
			return QT_ERROR;
		}
		*len = i + 1;
		return QT_STRING;
	case CC_SLASH:
		for (i = 1;
		     s[i] && CC(s[i]) != CC_SPACE && s[i] != '|' && s[i] != ',' && s[i] != ')'; i++)
			;
		*len = i;
		return QT_PATH;
	case CC_PIPE:
		*len = 1;
		return QT_PIPE;
	case CC_LP:
		*len = 1;
		return QT_LP;
	case CC_RP:
		*len = 1;
		return QT_RP;
	case CC_COMMA:
		*len = 1;
		return QT_COMMA;
	case CC_EQ:
		*len = s[1] == '=' ? 2 : 1;
		return QT_EQ;
	case CC_BANG:
		*len = 2;
		if (s[1] == '=')
			return QT_NE;
		if (s[1] == '~')
			return QT_NMATCH;
		*len = 1;
		return QT_ERROR;
	case CC_LT:
		if (s[1] == '>') {
			*len = 2;
			return QT_NE;
		}
		*len = s[1] == '=' ? 2 : 1;
		return *len == 2 ? QT_LE : QT_LT;
	case CC_GT:
		*len = s[1] == '=' ? 2 : 1;
		return *len == 2 ? QT_GE : QT_GT;
	case CC_TILDE:
		*len = 1;
		return QT_MATCH;
	default:
		if (!s[0]) {
			*len = 0;
			return QT_EOF;
		}
		/* one whole UTF-8 sequence is impossible here (>= 0x80 is ALPHA) */
		*len = 1;
		return s[0] == '*' ? QT_STAR : QT_ERROR;
	}
}

struct query_token query_lex_next(const char *q, int *pos)
{
	struct query_token t;
	int len;
	while (CC(q[*pos]) == CC_SPACE)
		(*pos)++;
	t.pos = *pos;
	t.type = query_lex_token(q + *pos, &len);
	t.len = len;
	*pos += len;
	return t;
}

/* Units: name, kind, and the factor to the base unit (ns, bytes, 1). */
static const struct unit {
	const char *name;
	enum query_unit_kind kind;
	int64_t factor;
} unit_table[] = {
    {"ns", QU_TIME, 1},
    {"us", QU_TIME, 1000},
    {"ms", QU_TIME, 1000000},
    {"s", QU_TIME, 1000000000},
    {"min", QU_TIME, INT64_C(60000000000)},
    {"h", QU_TIME, INT64_C(3600000000000)},
    {"B", QU_BYTES, 1},
    {"KB", QU_BYTES, 1000},
    {"MB", QU_BYTES, 1000000},
    {"GB", QU_BYTES, 1000000000},
    {"KiB", QU_BYTES, 1024},
    {"MiB", QU_BYTES, 1048576},
    {"GiB", QU_BYTES, 1073741824},
    {"%", QU_PERCENT, 1},
};

const char *const query_units[] = {"ns", "us", "ms",  "s",   "min", "h", "B", "KB",
				   "MB", "GB", "KiB", "MiB", "GiB", "%", NULL};

int query_lex_number(const char *s, int n, struct query_number *out, const char **why)
{
	int u = 0;
	/* the number ends where the unit starts: the first letter or % that
	 * is not the exponent's e */
	for (u = s[0] == '-' ? 1 : 0; u < n; u++) {
		char c = s[u];
		if ((c == 'e' || c == 'E') && u + 1 < n &&
		    (CC(s[u + 1]) == CC_DIGIT || s[u + 1] == '+' || s[u + 1] == '-')) {
			u++;
			continue;
		}
		if (CC(c) == CC_ALPHA || c == '%')
			break;
	}
	memset(out, 0, sizeof(*out));
	out->unit_pos = u < n ? u : -1;
	const struct unit *unit = NULL;
	if (u < n) {
		for (size_t k = 0; k < sizeof(unit_table) / sizeof(unit_table[0]); k++)
			if ((int)strlen(unit_table[k].name) == n - u &&
			    !memcmp(unit_table[k].name, s + u, (size_t)(n - u)))
				unit = &unit_table[k];
		/* units are case-sensitive (B and b differ in the wild) unless
		 * nothing else matches: 5MS is 5 ms */
		for (size_t k = 0; !unit && k < sizeof(unit_table) / sizeof(unit_table[0]); k++)
			if ((int)strlen(unit_table[k].name) == n - u &&
			    !strncasecmp(unit_table[k].name, s + u, (size_t)(n - u)))
				unit = &unit_table[k];
		if (!unit) {
			*why = "unknown unit";
			return -1;
		}
	}
	char *num = xstrndup(s, (size_t)u);
	char *end;
	errno = 0;
	out->r = strtod(num, &end);
	int bad = *end || errno == ERANGE || !isfinite(out->r);
	int have_exp = strpbrk(num, "eE") != NULL;
	if (!bad && unit && unit->kind != QU_PERCENT) {
		out->kind = unit->kind;
		out->is_int = 1;
		int64_t whole;
		if (!have_exp && text_parse_int64(num, (size_t)u, &whole) == 0) {
			if (__builtin_mul_overflow(whole, unit->factor, &out->i))
				bad = 1;
		} else if (have_exp || unit->factor % 1000 != 0) {
			/* KiB, MiB, GiB with a fraction: to the nearest byte */
			double v = out->r * (double)unit->factor;
			if (!(v >= -9.2e18 && v <= 9.2e18))
				bad = 1;
			else
				out->i = (int64_t)llround(v);
		} else if (text_parse_units(num, (size_t)u, unit->factor, &out->i) < 0) {
			bad = 1;
		}
		out->r = (double)out->i;
	} else if (!bad) {
		out->kind = unit ? QU_PERCENT : QU_NONE;
		out->is_int = !have_exp && !strchr(num, '.') &&
			      text_parse_int64(num, (size_t)u, &out->i) == 0;
	}
	free(num);
	if (bad) {
		out->unit_pos = -1;
		*why = "number out of range";
		return -1;
	}
	return 0;
}

char *query_lex_string(const char *s, int n)
{
	char *out = xmalloc((size_t)n + 1), *o = out;
	for (int i = 1; i < n - 1; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < n - 1) {
			c = s[++i];
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (c != '\\' && c != '"' && c != '\'') {
				/* unknown escapes stay as written: regexes need \d, \s ... */
				*o++ = '\\';
			}
		}
		*o++ = c;
	}
	*o = '\0';
	return out;
}
