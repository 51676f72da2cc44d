/*
 * Growable byte buffer; see sbuf.h for the invariants.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

char sbuf_slop[1];

void sbuf_init(struct sbuf *sb)
{
	sb->buf = sbuf_slop;
	sb->len = 0;
	sb->alloc = 0;
}

void sbuf_release(struct sbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	sbuf_init(sb);
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
	else
		sb->buf = sbuf_slop; /* one zeroed with its struct, never added to */
}

char *sbuf_detach(struct sbuf *sb)
{
	char *s = sb->alloc ? sb->buf : xstrdup("");
	sbuf_init(sb);
	return s;
}

void sbuf_grow(struct sbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n *= 2;
	if (!sb->alloc) {
		sb->buf = xmalloc(n);
		sb->buf[0] = '\0';
	} else {
		sb->buf = xrealloc(sb->buf, n);
	}
	sb->alloc = n;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t n)
{
	sbuf_grow(sb, n);
	if (n) /* data may be NULL then (an empty column's text) */
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sbuf_addc(struct sbuf *sb, char c)
{
	sbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap, cp;
	va_start(ap, fmt);
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n > 0) {
		sbuf_grow(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
		sb->len += (size_t)n;
	}
	va_end(ap);
}

void sbuf_add_json_string(struct sbuf *sb, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	sbuf_grow(sb, n + 2);
	sbuf_addc(sb, '"');
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		sbuf_add(sb, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':
			sbuf_adds(sb, "\\\"");
			break;
		case '\\':
			sbuf_adds(sb, "\\\\");
			break;
		case '\n':
			sbuf_adds(sb, "\\n");
			break;
		case '\t':
			sbuf_adds(sb, "\\t");
			break;
		case '\r':
			sbuf_adds(sb, "\\r");
			break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			sbuf_add(sb, u, 6);
		}
		}
	}
	sbuf_add(sb, s + run, n - run);
	sbuf_addc(sb, '"');
}
