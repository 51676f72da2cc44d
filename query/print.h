/*
 * Writing a query result (exec.h) as an aligned table, CSV or JSON, for
 * `grademl-tui query`.  The table is for a terminal: every text value goes
 * through the caller's sanitiser (tui/format.h's format_sanitize; query/
 * does not depend on tui/), durations read as "24.8 ms", the explorer's
 * other units as "12.3 MB", "1.3 TB/s", "+1.20 ms", "1.61x", NULL as "-".  CSV
 * (RFC 4180: CRLF, quotes doubled, fields with , " CR LF quoted) and JSON
 * (an array of objects, one per row, keys the column names) carry raw
 * values: nanoseconds, full-precision numbers, text as stored, unless the
 * output is a terminal: then CSV text goes through the sanitiser too, and
 * JSON writes each character the sanitiser would escape as \uXXXX (still
 * the same data to a JSON reader).  query_print writes a value through a
 * buffer of 64 KiB, never a copy of the value or of the table, so printing
 * takes little memory beside the result (query/exec.h counts the result
 * against --max-memory); to a file a table column is as wide as its widest
 * cell up to 256 columns, a wider cell standing whole.
 */
#ifndef GRADEML_QUERY_PRINT_H
#define GRADEML_QUERY_PRINT_H

#include <stdio.h>

#include "model/util/sbuf.h"
#include "query/exec.h"

enum query_format { QF_TABLE, QF_CSV, QF_JSON };

struct query_print_hooks {
	/* sanitize, width and fit may be given a value in pieces cut between
	 * characters: each must map characters one by one */
	/* appends s made safe for a terminal; NULL: bytes < 0x20 as '?' */
	void (*sanitize)(struct sbuf *out, const char *s);
	/* display columns of sanitised text; NULL: one per UTF-8 character */
	int (*width)(const char *s);
	/* appends display text s (sanitised) cut to at most cols columns;
	 * NULL: one column per UTF-8 character */
	void (*fit)(struct sbuf *out, const char *s, int cols);
	/* texts[0..n) sanitised and cut to cols columns each, with more,
	 * different texts never alike (tui/format.h's format_cut_distinct;
	 * free each and the array); NULL: the name column is cut as the
	 * others are */
	char **(*cut_distinct)(const char *const *texts, size_t n, int cols, const char *more);
	/* The table on a terminal (0 for none of it): fit it into cols
	 * columns by cutting its widest text columns, each cut cell ending in
	 * more ("..." when NULL), and leaving out the columns past it, from
	 * the right, with a line that says how many; clock: times as UTC
	 * date and time of day with the decimals their column needs; raw:
	 * durations and times as integer nanoseconds, bytes, rates and ratios
	 * as stored (before clock). */
	int cols;
	const char *more;
	int clock, raw;
	/* the text of the name column (query_name_col) as model/util/cxxname.h
	 * shortens it (C++ signatures as their function's name; two names
	 * never read the same unless they are the same; it costs a copy of
	 * that column's text) */
	int short_names;
};

/* A result as display text: the header (row 0) and every cell through the
 * hooks' sanitiser, durations as "24.8 ms" and the other units as above
 * (raw and clock as the hooks say),
 * NULL as "-"; each column's widest
 * cell and whether it is right-aligned (numbers; the sql escape's columns
 * unless they hold text).  The table printer and the explorer share it. */
struct query_table {
	size_t nrows, ncols; /* rows of the result: cells holds nrows + 1 */
	char **cells;
	int *width;
	int *right;
};

/* The column of r that names its rows, whose text short_names shortens:
 * the first text column called "name" (else "phase": the explorer's :path);
 * -1 for none. */
long query_name_col(const struct query_result *r);

/* hooks NULL or its members NULL: the plain defaults above. */
void query_table_build(struct query_table *t, const struct query_result *r,
		       const struct query_print_hooks *hooks);
void query_table_release(struct query_table *t);
/* Row 0 is the header; the result's row i is row i + 1. */
static inline const char *query_table_cell(const struct query_table *t, size_t row, size_t col)
{
	return t->cells[row * t->ncols + col];
}

/* "table", "csv", "json" -> *fmt; -1 for anything else. */
int query_format_parse(const char *s, enum query_format *fmt);
/* Writes r to f, a terminal when terminal (CSV and JSON escape then).
 * Returns 0, or -1 with *err on a write error. */
int query_print(FILE *f, const struct query_result *r, enum query_format fmt,
		const struct query_print_hooks *hooks, int terminal, char **err);

#endif
