/*
 * Reading one column of a row of trace.db.  The file may have been made by
 * anyone: a column that the schema declares NOT NULL INTEGER may hold NULL,
 * text, a blob or a real, an id may point nowhere.  Every read of a column
 * goes through these, which check the value's type and never hand back a
 * NULL pointer where a string is expected, so that a hostile row reads as
 * an empty or absent value instead of crashing a reader; what a value means
 * (an id that points nowhere, a negative duration) stays the caller's to
 * check.  The pointers are SQLite's: valid until the statement steps,
 * resets or is finalized.
 */
#ifndef GRADEML_COL_H
#define GRADEML_COL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The largest magnitude of an id of trace.db (ids count up from 1; a file
 * made elsewhere may move one below): a reader may add a count (col_count)
 * to an id (the phases of a track are a run of ids), or take one id from
 * another, without overflowing. */
#define COL_ID_MAX ((int64_t)1 << 61)

/* Whether column i is NULL. */
int col_null(sqlite3_stmt *q, int i);

/* Column i as text: a number's digits, a blob's bytes up to its first NUL;
 * "" for NULL.  Never NULL. */
const char *col_text(sqlite3_stmt *q, int i);
/* The same, and its length in bytes (which a blob's NUL does not end) in *n. */
const char *col_text_n(sqlite3_stmt *q, int i, size_t *n);
/* Column i as text, or NULL when it is NULL: where NULL means "none". */
const char *col_text_or_null(sqlite3_stmt *q, int i);
/* The length in bytes of column i as text (which a blob's NUL does not end);
 * 0 for NULL.  Read after col_text or col_text_or_null. */
size_t col_bytes(sqlite3_stmt *q, int i);
/* A copy of col_text; the caller frees it. */
char *col_strdup(sqlite3_stmt *q, int i);
/* A copy of col_text, or NULL when the column is NULL; the caller frees it. */
char *col_strdup_or_null(sqlite3_stmt *q, int i);

/* Column i as an integer: a real is truncated toward zero when it fits in
 * int64, text that is a whole decimal integer is that integer; otherwise
 * (NULL, other text, a blob, a real out of range) none. */
int64_t col_int_or(sqlite3_stmt *q, int i, int64_t none);
/* col_int_or(q, i, 0). */
int64_t col_int(sqlite3_stmt *q, int i);
/* col_int clamped to the range of int. */
int col_int32(sqlite3_stmt *q, int i);

/* Column i as a count: col_int held within 0..COL_ID_MAX, so that an id
 * plus a count stays within int64. */
int64_t col_count(sqlite3_stmt *q, int i);

/* The longest duration a reader takes from trace.db (73 years): a few add
 * up, or one subtracts from another, within int64. */
#define COL_DUR_MAX ((int64_t)1 << 61)
/* Column i as a duration in ns: col_int held within 0..COL_DUR_MAX. */
int64_t col_dur(sqlite3_stmt *q, int i);

/* The latest (and, negated, the earliest) time a reader takes from
 * trace.db, in ns from the epoch (the year 2116): a time plus a duration
 * (col_dur) fits int64. */
#define COL_TIME_MAX ((int64_t)1 << 62)
/* Column i as a time in ns: col_int held within -COL_TIME_MAX..COL_TIME_MAX. */
int64_t col_time(sqlite3_stmt *q, int i);

/* Column i as a finite number (an integer converted, text that is a whole
 * number read); none for NULL, other text or a blob. */
double col_real_or(sqlite3_stmt *q, int i, double none);
/* col_real_or(q, i, 0). */
double col_real(sqlite3_stmt *q, int i);

/* Checks the ids of every table keyed by an INTEGER PRIMARY KEY (in its
 * index: a look at each end and at 0, not a scan) for -COL_ID_MAX..COL_ID_MAX
 * but 0 (every reader's "none").  0, or -1 with *err naming path, the table
 * and the id. */
int col_check_ids(sqlite3 *db, const char *path, char **err);

#endif
