/*
 * Line-by-line reading of an input for the text formats (CSV, JSON lines,
 * logs), with line numbers for error messages.  A line is returned without
 * its "\n" or "\r\n" and NUL-terminated; it stays valid until the next call.
 * Memory is bounded by LINES_MAX: a longer line is an error, as is a NUL
 * byte (the file is binary, not text).
 */
#ifndef GRADEML_LINES_H
#define GRADEML_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "importers/input.h"

#define LINES_MAX (1 << 20)

struct lines {
	struct input *in;
	char *buf;
	size_t cap, len, pos; /* buf[pos..len) not yet returned */
	int64_t lineno;	      /* of the line last returned */
	int eof;
};

void lines_init(struct lines *l, struct input *in);
/* 1 and the next line, 0 at the end, -1 with *err ("file:N: ..."). */
int lines_next(struct lines *l, char **line, size_t *len, char **err);
void lines_release(struct lines *l);

#endif
