/*
 * A growable byte buffer.  Invariants: buf is never NULL after sbuf_init or
 * SBUF_INIT (until the first byte it is a shared empty string that is never
 * written), buf[len] == '\0' always, so a string buffer can be read as a C
 * string.  sbuf_detach is the only way to take ownership of the bytes.
 */
#ifndef GRADEML_SBUF_H
#define GRADEML_SBUF_H

#include <stddef.h>

struct sbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

/* The empty string of every sbuf that holds no allocation. */
extern char sbuf_slop[1];

#define SBUF_INIT                                                                                  \
	{                                                                                          \
		sbuf_slop, 0, 0                                                                    \
	}

void sbuf_init(struct sbuf *sb);
void sbuf_release(struct sbuf *sb);
void sbuf_reset(struct sbuf *sb);
char *sbuf_detach(struct sbuf *sb);
void sbuf_grow(struct sbuf *sb, size_t extra);
void sbuf_add(struct sbuf *sb, const void *data, size_t n);
void sbuf_addc(struct sbuf *sb, char c);
void sbuf_adds(struct sbuf *sb, const char *s);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal (quotes included), escaping as RFC 8259 says. */
void sbuf_add_json_string(struct sbuf *sb, const char *s, size_t n);

#endif
