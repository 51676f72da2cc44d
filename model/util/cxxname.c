/*
 * The shortening of C++ signatures shared by every view; see cxxname.h.
 * A signature is read at its top level only (brackets skipped whole by
 * closing()), so each character is looked at a bounded number of times.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/cxxname.h"
#include "model/util/xalloc.h"

/* A plain template argument list this short stays whole at level 0. */
#define SHORT_ARGS 20

static const char anon[] = "(anonymous namespace)::";
#define ANON_LEN (sizeof(anon) - 1)

static int ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (unsigned char)c >= 0x80;
}

static int ident(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

static int opener(char c)
{
	return c == '<' || c == '(' || c == '[' || c == '{';
}

static int closer(char c)
{
	return c == '>' || c == ')' || c == ']' || c == '}';
}

/* The end of the bracketed run that opens at p[i], or n when it does not
 * close before n. */
static size_t closing(const char *p, size_t i, size_t n)
{
	size_t depth = 0;
	for (; i < n; i++) {
		if (opener(p[i]))
			depth++;
		else if (closer(p[i]) && !--depth)
			return i + 1;
	}
	return n;
}

/* Whether s[b..i) ends with the word "operator". */
static int after_operator(const char *s, size_t b, size_t i)
{
	return i - b >= 8 && !memcmp(s + i - 8, "operator", 8) && (i - 8 == b || !ident(s[i - 9]));
}

/* The end of an operator's symbol at s[i] ("()", "[]", "<<", "+=", ...). */
static size_t operator_end(const char *s, size_t i, size_t n)
{
	if (i + 1 < n && ((s[i] == '(' && s[i + 1] == ')') || (s[i] == '[' && s[i + 1] == ']')))
		return i + 2;
	while (i < n && strchr("<>=!+-*/%^&|~,", s[i]))
		i++;
	return i;
}

/* Whether s[b..e) at its top level has none of the characters bad. */
static int top_level_lacks(const char *s, size_t b, size_t e, const char *bad)
{
	for (size_t i = b; i < e;) {
		if (opener(s[i])) {
			i = closing(s, i, e);
		} else if (strchr(bad, s[i])) {
			return 0;
		} else {
			i++;
		}
	}
	return 1;
}

/* Whether what follows a signature's parameters is only its qualifiers
 * (" const", " &&", " noexcept"). */
static int qualifiers_only(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == ' ' || s[i] == '&'))
			return 0;
	return 1;
}

/* The function name of signature s[0..n) as [*nb, *ne); 0 when s is not a
 * C++ signature: a name, then a parameter list closing at the end (bar its
 * qualifiers), with a template, a namespace or a return type to say it is
 * C++; or a qualified template with no parameters ("cutlass::Kernel<X>"). */
static int parse_sig(const char *s, size_t n, size_t *nb, size_t *ne)
{
	size_t start = 0, i = 0;
	int tmpl = 0, qual = 0, ret = 0;
	while (i < n) {
		char c = s[i];
		if (after_operator(s, start, i) && strchr("()[]<>=!+-*/%^&|~,", c)) {
			size_t e = operator_end(s, i, n);
			i = e > i ? e : i + 1;
		} else if (c == ' ') {
			start = ++i;
			ret = 1;
		} else if (c == '(' && n - i >= ANON_LEN && !memcmp(s + i, anon, ANON_LEN)) {
			i += ANON_LEN; /* part of the name */
		} else if (c == '(') {
			if (i == start || !(ident(s[i - 1]) || s[i - 1] == '>' || s[i - 1] == ')'))
				return 0;
			size_t e = closing(s, i, n);
			if (s[e - 1] != ')' || !qualifiers_only(s + e, n - e))
				return 0;
			*nb = start;
			*ne = i;
			return (tmpl || qual || ret) && top_level_lacks(s, start, i, ".#/,\"'") &&
			       top_level_lacks(s, 0, start, ".#/,\"'");
		} else if (opener(c)) {
			tmpl |= c == '<';
			i = closing(s, i, n);
		} else if (closer(c)) {
			return 0;
		} else {
			qual |= c == ':' && i + 1 < n && s[i + 1] == ':';
			i++;
		}
	}
	if (!(n && s[n - 1] == '>' && tmpl && qual && !ret))
		return 0;
	*nb = 0;
	*ne = n;
	return top_level_lacks(s, 0, n, ".#/,\"'");
}

/* The end of the identifier at s[i]. */
static size_t ident_end(const char *s, size_t i, size_t e)
{
	while (i < e && ident(s[i]))
		i++;
	return i;
}

/* At s[*p], an identifier with its namespaces dropped: "at::native::
 * (anonymous namespace)::Op" -> [Op); returns its end, *p its start. */
static size_t unqualified(const char *s, size_t *p, size_t e)
{
	size_t q = ident_end(s, *p, e);
	while (q + 1 < e && s[q] == ':' && s[q + 1] == ':') {
		size_t r = q + 2;
		if (e - r >= ANON_LEN && !memcmp(s + r, anon, ANON_LEN))
			r += ANON_LEN;
		if (r >= e || !ident_start(s[r]))
			break;
		*p = r;
		q = ident_end(s, r, e);
	}
	return q;
}

/* Level 0: template arguments s[b..e) as their first word ("<Op…>"), or
 * whole when short and plain. */
static void fold_first_word(struct sbuf *out, const char *s, size_t b, size_t e, const char *more)
{
	int plain = e - b <= SHORT_ARGS;
	for (size_t i = b; i < e && plain; i++)
		plain = !opener(s[i]);
	sbuf_addc(out, '<');
	if (plain) {
		sbuf_add(out, s + b, e - b);
		sbuf_addc(out, '>');
		return;
	}
	for (size_t i = b; i < e;) {
		while (i < e && s[i] == ' ')
			i++;
		if (i < e && ident_start(s[i])) {
			size_t p = i, q = unqualified(s, &p, e);
			sbuf_add(out, s + p, q - p);
			if (q == e) { /* the word is all there is */
				sbuf_addc(out, '>');
				return;
			}
			break;
		}
		while (i < e && s[i] != ',') /* the next argument */
			i = opener(s[i]) ? closing(s, i, e) : i + 1;
		i++;
	}
	sbuf_adds(out, more);
	sbuf_addc(out, '>');
}

/* Level 1: template arguments s[b..e) whole, but each name without its
 * namespaces and each function without its parameters. */
static void fold_compact(struct sbuf *out, const char *s, size_t b, size_t e)
{
	int boundary = 1;
	sbuf_addc(out, '<');
	for (size_t i = b; i < e;) {
		char c = s[i];
		if (boundary && e - i >= ANON_LEN && !memcmp(s + i, anon, ANON_LEN)) {
			i += ANON_LEN;
		} else if (boundary && ident_start(c)) {
			size_t p = i, q = unqualified(s, &p, e);
			sbuf_add(out, s + p, q - p);
			i = q;
			boundary = 0;
		} else if (after_operator(s, b, i) && c == '(' && i + 1 < e && s[i + 1] == ')') {
			sbuf_adds(out, "()");
			i += 2;
		} else if (c == '(' && i > b &&
			   (ident(s[i - 1]) || s[i - 1] == '>' || s[i - 1] == ')')) {
			i = closing(s, i, e); /* a function's parameters */
		} else if (c == '{') {
			size_t g = closing(s, i, e); /* a lambda: whole */
			sbuf_add(out, s + i, g - i);
			i = g;
		} else {
			sbuf_addc(out, c);
			boundary = c == '<' || c == ',' || c == ' ' || c == '(';
			i++;
		}
	}
	sbuf_addc(out, '>');
}

void cxxname_short(struct sbuf *out, const char *name, int level, const char *more)
{
	size_t n = strlen(name), nb, ne;
	while (n && name[n - 1] == ' ')
		n--;
	if (level >= 2 || !parse_sig(name, n, &nb, &ne)) {
		sbuf_add(out, name, n);
		return;
	}
	for (size_t i = nb; i < ne;) {
		char c = name[i];
		if (after_operator(name, nb, i) && strchr("()[]<>=!+-*/%^&|~,", c)) {
			size_t e = operator_end(name, i, ne);
			e = e > i ? e : i + 1;
			sbuf_add(out, name + i, e - i);
			i = e;
		} else if (c == '<') {
			size_t e = closing(name, i, ne);
			size_t last = e > i + 1 && name[e - 1] == '>' ? e - 1 : e;
			if (level == 0)
				fold_first_word(out, name, i + 1, last, more);
			else
				fold_compact(out, name, i + 1, last);
			i = e;
		} else if (opener(c)) {
			size_t e = closing(name, i, ne);
			sbuf_add(out, name + i, e - i);
			i = e;
		} else {
			sbuf_addc(out, c);
			i++;
		}
	}
}

struct shown {
	const char *text, *name;
	size_t i;
};

static int cmp_shown(const void *x, const void *y)
{
	const struct shown *a = x, *b = y;
	int c = strcmp(a->text, b->text);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

char **cxxname_distinct(const char *const *names, size_t n, const char *more)
{
	char **out = xcalloc(n ? n : 1, sizeof(*out));
	int *level = xcalloc(n ? n : 1, sizeof(*level));
	struct shown *s = xcalloc(n ? n : 1, sizeof(*s));
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	for (size_t i = 0; i < n; i++) {
		sbuf_reset(&sb);
		cxxname_short(&sb, names[i] ? names[i] : "", 0, more);
		out[i] = xstrdup(sb.buf);
	}
	/* Twins (runs of one text from different names) go up a level, all
	 * of a run together so that equal names stay equal, until none are
	 * left; a raised name may meet another, hence the passes.  Each pass
	 * raises at least one name and no name goes past the last level. */
	for (int moved = 1; moved;) {
		moved = 0;
		for (size_t i = 0; i < n; i++)
			s[i] = (struct shown){out[i], names[i] ? names[i] : "", i};
		qsort(s, n, sizeof(*s), cmp_shown);
		for (size_t a = 0, b; a < n; a = b) {
			int twins = 0;
			for (b = a + 1; b < n && !strcmp(s[b].text, s[a].text); b++)
				twins |= strcmp(s[b].name, s[a].name) != 0;
			for (size_t k = a; twins && k < b; k++) {
				size_t i = s[k].i;
				if (level[i] + 1 >= CXXNAME_LEVELS)
					continue;
				level[i]++;
				sbuf_reset(&sb);
				cxxname_short(&sb, s[k].name, level[i], more);
				free(out[i]); /* s[k].text is not read again this pass */
				out[i] = xstrdup(sb.buf);
				moved = 1;
			}
		}
	}
	sbuf_release(&sb);
	free(s);
	free(level);
	return out;
}

void cxxname_path(struct sbuf *out, const char *path, const char *more)
{
	struct sbuf part = SBUF_INIT;
	sbuf_init(&part);
	size_t depth = 0;
	for (const char *p = path;; p++) {
		if (*p && (*p != '/' || depth)) {
			if (opener(*p))
				depth++;
			else if (closer(*p) && depth)
				depth--;
			sbuf_addc(&part, *p);
			continue;
		}
		cxxname_short(out, part.buf, 0, more);
		sbuf_reset(&part);
		if (!*p)
			break;
		sbuf_addc(out, '/');
	}
	sbuf_release(&part);
}
