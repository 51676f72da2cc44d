/*
 * Line reading; see lines.h.
 */
#include <stdlib.h>
#include <string.h>

#include "importers/lines.h"
#include "importers/tally.h"
#include "model/util/xalloc.h"

#define CHUNK (64 << 10)

void lines_init(struct lines *l, struct input *in)
{
	memset(l, 0, sizeof(*l));
	l->in = in;
}

void lines_release(struct lines *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

/* Reads more bytes after the unread ones; 0 at the end, -1 on error. */
static int fill(struct lines *l, char **err)
{
	if (l->pos) {
		memmove(l->buf, l->buf + l->pos, l->len - l->pos);
		l->len -= l->pos;
		l->pos = 0;
	}
	if (l->cap - l->len < CHUNK) {
		l->cap = l->len + CHUNK + 1;
		l->buf = xrealloc(l->buf, l->cap);
	}
	ssize_t n = input_read(l->in, l->buf + l->len, l->cap - l->len - 1, err);
	if (n < 0)
		return -1;
	l->len += (size_t)n;
	return n > 0;
}

int lines_next(struct lines *l, char **line, size_t *len, char **err)
{
	if (!l->buf) {
		int r = l->eof ? 0 : fill(l, err);
		if (r < 0)
			return -1;
		if (r == 0) {
			l->eof = 1;
			return 0;
		}
	}
	size_t scanned = l->pos;
	for (;;) {
		char *nl = memchr(l->buf + scanned, '\n', l->len - scanned);
		if (l->skipping && (nl || l->eof)) {
			l->lineno++;
			l->skipped_long++;
			l->first_long = l->first_long ? l->first_long : l->lineno;
			l->skipping = 0;
			l->pos = nl ? (size_t)(nl - l->buf) + 1 : l->len;
			scanned = l->pos;
			continue;
		}
		if (nl || (l->eof && l->pos < l->len)) {
			size_t end = nl ? (size_t)(nl - l->buf) : l->len;
			char *s = l->buf + l->pos;
			size_t n = end - l->pos;
			l->lineno++;
			tally_events(1);
			if (memchr(s, '\0', n)) {
				*err = xasprintf("%s:%lld: a NUL byte: this is not a text file",
						 input_path(l->in), (long long)l->lineno);
				return -1;
			}
			if (n && s[n - 1] == '\r')
				n--;
			s[n] = '\0';
			l->pos = nl ? end + 1 : l->len;
			*line = s;
			*len = n;
			return 1;
		}
		if (l->eof)
			return 0;
		if (l->len - l->pos > LINES_MAX && l->skip_long) {
			l->skipping = 1; /* drop what was read of it; memory stays bounded */
			l->pos = l->len;
		} else if (l->len - l->pos > LINES_MAX) {
			*err = xasprintf("%s:%lld: line longer than %d bytes", input_path(l->in),
					 (long long)l->lineno + 1, LINES_MAX);
			return -1;
		}
		scanned = l->len - l->pos; /* relative: fill moves the unread bytes to 0 */
		int r = fill(l, err);
		if (r < 0)
			return -1;
		if (r == 0)
			l->eof = 1;
	}
}
