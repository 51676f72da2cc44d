/*
 * Line-by-line reading of an input for the text formats (CSV, JSON lines,
 * logs), with line numbers for error messages.  A line is returned without
 * its "\n" or "\r\n" and NUL-terminated; it stays valid until the next call.
 * Memory is bounded by LINES_MAX: a longer line is an error, as is a NUL
 * byte (the file is binary, not text), unless skip_long is set: then a longer
 * line is read past and counted (skipped_long, first_long for its number).
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
	int skip_long;	      /* set by the caller after lines_init */
	int skipping;	      /* inside a long line being read past */
	int64_t skipped_long; /* lines longer than LINES_MAX read past */
	int64_t first_long;   /* the number of the first of them */
};

void lines_init(struct lines *l, struct input *in);
/* 1 and the next line, 0 at the end, -1 with *err ("file:N: ..."). */
int lines_next(struct lines *l, char **line, size_t *len, char **err);
void lines_release(struct lines *l);

#endif
