/*
 * Writing a query result (exec.h) as an aligned table, CSV or JSON, for
 * `grademl-tui query`.  The table is for a terminal: every text value goes
 * through the caller's sanitiser (tui/format.h's format_sanitize; query/
 * does not depend on tui/), durations read as "24.8 ms", NULL as "-".  CSV
 * (RFC 4180: CRLF, quotes doubled, fields with , " CR LF quoted) and JSON
 * (an array of objects, one per row, keys the column names) carry raw
 * values: nanoseconds, full-precision numbers, text as stored.
 */
#ifndef GRADEML_QUERY_PRINT_H
#define GRADEML_QUERY_PRINT_H

#include <stdio.h>

#include "model/sbuf.h"
#include "query/exec.h"

enum query_format { QF_TABLE, QF_CSV, QF_JSON };

struct query_print_hooks {
	/* appends s made safe for a terminal; NULL: bytes < 0x20 as '?' */
	void (*sanitize)(struct sbuf *out, const char *s);
	/* display columns of sanitised text; NULL: one per UTF-8 character */
	int (*width)(const char *s);
};

/* "table", "csv", "json" -> *fmt; -1 for anything else. */
int query_format_parse(const char *s, enum query_format *fmt);
/* Writes r to f.  Returns 0, or -1 with *err on a write error. */
int query_print(FILE *f, const struct query_result *r, enum query_format fmt,
		const struct query_print_hooks *hooks, char **err);

#endif
