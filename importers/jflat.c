/*
 * Flat JSON nodes; see jflat.h.
 *
 * The parser is one loop over the text with a stack of open containers.
 * Whatever it is not sure to read as jansson does, it declines (returns
 * 1) rather than guess: an escape or a non-ASCII byte in a string (jansson
 * decodes and checks UTF-8), a number it cannot convert exactly (see
 * number()), a repeated key (jansson keeps the last value), a malformed
 * document (jansson words the error).
 */
#include <string.h>

#include "importers/jflat.h"
#include "model/util/xalloc.h"

#define JFLAT_DEPTH 64

static uint32_t push(struct jflat *f)
{
	XGROW(f->n, f->len + 1, f->alloc);
	memset(&f->n[f->len], 0, sizeof(*f->n));
	return (uint32_t)f->len++;
}

static const char *skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/* A string's bytes from p (after its opening quote) to its closing quote;
 * NULL when it has one that jansson would decode or check. */
static const char *string_end(const char *p, const char *e)
{
	for (; p < e; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			return p;
		if (c < 0x20 || c >= 0x80 || c == '\\')
			return NULL;
	}
	return NULL;
}

static int delimiter(const char *p, const char *e)
{
	return p == e || *p == ',' || *p == ']' || *p == '}' || *p == ' ' || *p == '\n' ||
	       *p == '\r' || *p == '\t';
}

/* A number at *p into node n, as jansson reads it: an integer (no fraction,
 * no exponent) through strtoll, else a double through strtod.  Taken here
 * only when exact without either: integers of at most 18 digits, and
 * reals whose digits make an integer m < 2^53 scaled by 10^k, |k| <= 22,
 * where one IEEE multiplication or division by the exact power of ten is
 * the correctly rounded result, as strtod's (Clinger 1990).  0, or 1 to
 * decline. */
static int number(const char **pp, const char *e, struct jflat_node *n)
{
	static const double pow10[] = {1e0,  1e1,  1e2,	 1e3,  1e4,  1e5,  1e6,	 1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *p = *pp;
	int neg = p < e && *p == '-';
	p += neg;
	if (p == e || *p < '0' || *p > '9')
		return 1;
	if (*p == '0' && p + 1 < e && p[1] >= '0' && p[1] <= '9')
		return 1; /* a leading zero: not JSON */
	uint64_t m = 0;
	int digits = 0, scale = 0, real = 0;
	for (; p < e && *p >= '0' && *p <= '9'; p++, digits++)
		m = m * 10 + (uint64_t)(*p - '0');
	if (digits > 18)
		return 1;
	if (p < e && *p == '.') {
		real = 1;
		p++;
		if (p == e || *p < '0' || *p > '9')
			return 1;
		for (; p < e && *p >= '0' && *p <= '9'; p++, scale--) {
			uint64_t d = (uint64_t)(*p - '0');
			if (m > ((((uint64_t)1 << 53) - 1) - d) / 10)
				return 1; /* m would reach 2^53 */
			m = m * 10 + d;
		}
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		real = 1;
		p++;
		int eneg = p < e && *p == '-', x = 0, xd = 0;
		p += p < e && (*p == '-' || *p == '+');
		for (; p < e && *p >= '0' && *p <= '9' && xd < 4; p++, xd++)
			x = x * 10 + (*p - '0');
		if (!xd)
			return 1;
		scale += eneg ? -x : x;
	}
	if (!delimiter(p, e))
		return 1;
	if (!real) {
		n->type = JF_INTEGER;
		n->integer = neg ? -(int64_t)m : (int64_t)m;
		n->num = (double)n->integer;
	} else {
		if (m >= (uint64_t)1 << 53 || scale < -22 || scale > 22)
			return 1;
		double v = scale < 0 ? (double)m / pow10[-scale] : (double)m * pow10[scale];
		n->type = JF_REAL;
		n->num = neg ? -v : v;
	}
	*pp = p;
	return 0;
}

static int literal(const char **pp, const char *e, struct jflat_node *n)
{
	static const struct {
		const char *word;
		unsigned char type;
	} lit[] = {{"true", JF_TRUE}, {"false", JF_FALSE}, {"null", JF_NULL}};
	for (size_t i = 0; i < sizeof(lit) / sizeof(*lit); i++) {
		size_t k = strlen(lit[i].word);
		if ((size_t)(e - *pp) >= k && !memcmp(*pp, lit[i].word, k) &&
		    delimiter(*pp + k, e)) {
			n->type = lit[i].type;
			*pp += k;
			return 0;
		}
	}
	return 1;
}

/* Whether object node obj already has a member named key[0..len). */
static int has_member(const struct jflat *f, uint32_t obj, const char *key, size_t len)
{
	for (uint32_t c = jflat_child(f, obj); c; c = f->n[c].next)
		if (f->n[c].key_len == len && !memcmp(f->n[c].key, key, len))
			return 1;
	return 0;
}

int jflat_parse(struct jflat *f, char *text, size_t len)
{
	struct {
		uint32_t node, last;
	} st[JFLAT_DEPTH];
	int depth = 0;
	const char *p = skip_ws(text, text + len), *e = text + len, *key = NULL, *end;
	size_t key_len = 0;
	f->len = 0;
	push(f); /* node 0: no value */
	if (p == e || (*p != '{' && *p != '['))
		return 1;
	for (;;) {
		/* a value at p; key names it when its container is an object */
		if (p == e || f->len > JFLAT_NODES)
			return 1;
		uint32_t i = push(f);
		struct jflat_node *n = &f->n[i];
		n->key = key;
		n->key_len = (uint32_t)key_len;
		if (depth > 0) {
			if (st[depth - 1].last)
				f->n[st[depth - 1].last].next = i;
			st[depth - 1].last = i;
			f->n[st[depth - 1].node].count++;
		}
		switch (*p) {
		case '{':
		case '[':
			if (depth == JFLAT_DEPTH)
				return 1;
			n->type = *p == '{' ? JF_OBJECT : JF_ARRAY;
			st[depth].node = i;
			st[depth].last = 0;
			depth++;
			p = skip_ws(p + 1, e);
			if (p < e && *p == (n->type == JF_OBJECT ? '}' : ']')) {
				p++;
				depth--;
				break;
			}
			if (n->type == JF_OBJECT)
				goto member;
			key = NULL;
			continue;
		case '"':
			if (!(end = string_end(p + 1, e)))
				return 1;
			n->type = JF_STRING;
			n->str = p + 1;
			n->str_len = (uint32_t)(end - p - 1);
			p = end + 1;
			break;
		case 't':
		case 'f':
		case 'n':
			if (literal(&p, e, n))
				return 1;
			break;
		default:
			if (number(&p, e, n))
				return 1;
			break;
		}
		/* after a value: a comma, or the ends of containers */
		for (;;) {
			p = skip_ws(p, e);
			if (depth == 0)
				goto done;
			if (p == e)
				return 1;
			int obj = f->n[st[depth - 1].node].type == JF_OBJECT;
			if (*p == (obj ? '}' : ']')) {
				p++;
				depth--;
				continue;
			}
			if (*p != ',')
				return 1;
			p = skip_ws(p + 1, e);
			if (obj)
				goto member;
			key = NULL;
			break;
		}
		continue;
	member:
		/* p is at a member's key, in the object on top of the stack */
		if (p == e || *p != '"' || !(end = string_end(p + 1, e)))
			return 1;
		key = p + 1;
		key_len = (size_t)(end - key);
		if (f->n[st[depth - 1].node].count == JFLAT_MEMBERS ||
		    has_member(f, st[depth - 1].node, key, key_len))
			return 1;
		p = skip_ws(end + 1, e);
		if (p == e || *p != ':')
			return 1;
		p = skip_ws(p + 1, e);
	}
done:
	if (p != e)
		return 1;
	/* accepted: the strings become C strings in place of their closing quotes */
	for (size_t i = 0; i < f->len; i++) {
		struct jflat_node *n = &f->n[i];
		if (n->key)
			text[n->key - text + n->key_len] = '\0';
		if (n->type == JF_STRING)
			text[n->str - text + n->str_len] = '\0';
	}
	return 0;
}

static uint32_t from_json(struct jflat *f, json_t *v, const char *key)
{
	uint32_t i = push(f), prev = 0, c;
	f->n[i].key = key;
	f->n[i].key_len = key ? (uint32_t)strlen(key) : 0;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *m;
		f->n[i].type = JF_OBJECT;
		json_object_foreach(v, k, m)
		{
			c = from_json(f, m, k);
			if (prev)
				f->n[prev].next = c;
			prev = c;
			f->n[i].count++;
		}
		break;
	}
	case JSON_ARRAY: {
		size_t j;
		json_t *m;
		f->n[i].type = JF_ARRAY;
		json_array_foreach(v, j, m)
		{
			c = from_json(f, m, NULL);
			if (prev)
				f->n[prev].next = c;
			prev = c;
			f->n[i].count++;
		}
		break;
	}
	case JSON_STRING:
		f->n[i].type = JF_STRING;
		f->n[i].str = json_string_value(v);
		f->n[i].str_len = (uint32_t)json_string_length(v);
		break;
	case JSON_INTEGER:
		f->n[i].type = JF_INTEGER;
		f->n[i].integer = json_integer_value(v);
		f->n[i].num = json_number_value(v);
		break;
	case JSON_REAL:
		f->n[i].type = JF_REAL;
		f->n[i].num = json_real_value(v);
		break;
	case JSON_TRUE:
		f->n[i].type = JF_TRUE;
		break;
	case JSON_FALSE:
		f->n[i].type = JF_FALSE;
		break;
	case JSON_NULL:
		f->n[i].type = JF_NULL;
		break;
	}
	return i;
}

void jflat_from_json(struct jflat *f, json_t *v)
{
	f->len = 0;
	push(f);
	from_json(f, v, NULL);
}

uint32_t jflat_get(const struct jflat *f, uint32_t obj, const char *key)
{
	if (f->n[obj].type != JF_OBJECT)
		return 0;
	for (uint32_t c = jflat_child(f, obj); c; c = f->n[c].next)
		if (!strcmp(f->n[c].key, key))
			return c;
	return 0;
}

void jflat_release(struct jflat *f)
{
	free(f->n);
	f->n = NULL;
	f->len = f->alloc = 0;
}
