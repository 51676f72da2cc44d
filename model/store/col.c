/*
 * Reading one column of a row of trace.db with its type checked; see col.h.
 * SQLite converts a value of any type to the one asked for, and hands back
 * NULL for the text of NULL: these keep the conversions that are safe (an
 * integer's digits as text, text that is a whole number as that number),
 * refuse the others (text read as an integer is not its leading digits, a
 * huge real is not INT64_MAX), and never return a NULL string.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/store/col.h"
#include "model/util/xalloc.h"

int col_null(sqlite3_stmt *q, int i)
{
	return sqlite3_column_type(q, i) == SQLITE_NULL;
}

const char *col_text_n(sqlite3_stmt *q, int i, size_t *n)
{
	const unsigned char *t = sqlite3_column_text(q, i);
	*n = t ? (size_t)sqlite3_column_bytes(q, i) : 0;
	return t ? (const char *)t : "";
}

const char *col_text(sqlite3_stmt *q, int i)
{
	size_t n;
	return col_text_n(q, i, &n);
}

const char *col_text_or_null(sqlite3_stmt *q, int i)
{
	return col_null(q, i) ? NULL : col_text(q, i);
}

size_t col_bytes(sqlite3_stmt *q, int i)
{
	return (size_t)sqlite3_column_bytes(q, i);
}

char *col_strdup(sqlite3_stmt *q, int i)
{
	return xstrdup(col_text(q, i));
}

char *col_strdup_or_null(sqlite3_stmt *q, int i)
{
	return col_null(q, i) ? NULL : xstrdup(col_text(q, i));
}

/* -2^63 is exact in a double; 2^63 is the first value past int64's range. */
static int real_fits(double d)
{
	return d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}

int64_t col_int_or(sqlite3_stmt *q, int i, int64_t none)
{
	switch (sqlite3_column_type(q, i)) {
	case SQLITE_INTEGER:
		return sqlite3_column_int64(q, i);
	case SQLITE_FLOAT: {
		double d = sqlite3_column_double(q, i);
		return real_fits(d) ? (int64_t)d : none;
	}
	case SQLITE_TEXT: {
		/* a number kept as text (meta's values are) */
		const char *t = col_text(q, i);
		char *end;
		errno = 0;
		long long v = strtoll(t, &end, 10);
		return *t && !*end && !errno ? (int64_t)v : none;
	}
	default:
		return none;
	}
}

int64_t col_int(sqlite3_stmt *q, int i)
{
	return col_int_or(q, i, 0);
}

int col_int32(sqlite3_stmt *q, int i)
{
	int64_t v = col_int(q, i);
	return v < INT_MIN ? INT_MIN : v > INT_MAX ? INT_MAX : (int)v;
}

int64_t col_count(sqlite3_stmt *q, int i)
{
	int64_t v = col_int(q, i);
	return v < 0 ? 0 : v > COL_ID_MAX ? COL_ID_MAX : v;
}

int64_t col_dur(sqlite3_stmt *q, int i)
{
	int64_t v = col_int(q, i);
	return v < 0 ? 0 : v > COL_DUR_MAX ? COL_DUR_MAX : v;
}

int64_t col_time(sqlite3_stmt *q, int i)
{
	int64_t v = col_int(q, i);
	return v < -COL_TIME_MAX ? -COL_TIME_MAX : v > COL_TIME_MAX ? COL_TIME_MAX : v;
}

double col_real_or(sqlite3_stmt *q, int i, double none)
{
	switch (sqlite3_column_type(q, i)) {
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		return sqlite3_column_double(q, i);
	case SQLITE_TEXT: {
		const char *t = col_text(q, i);
		char *end;
		double v = strtod(t, &end);
		return *t && !*end && isfinite(v) ? v : none;
	}
	default:
		return none;
	}
}

double col_real(sqlite3_stmt *q, int i)
{
	return col_real_or(q, i, 0);
}

int col_check_ids(sqlite3 *db, const char *path, char **err)
{
	/* the key of each; a file that declares it otherwise than as its
	 * rowid costs a scan here */
	static const char *const tables[][2] = {
	    {"strings", "id"},
	    {"phase_kinds", "id"},
	    {"sources", "id"},
	    {"tracks", "id"},
	    {"phases", "id"},
	    {"events", "id"},
	    {"metrics", "id"},
	    {"diagnostics", "id"},
	    {"imbalance", "id"},
	    {"issues", "id"},
	    {"imbalance_meets", "imbalance_id"},
	};
	for (size_t i = 0; i < sizeof(tables) / sizeof(*tables); i++) {
		const char *t = tables[i][0], *k = tables[i][1];
		sqlite3_stmt *q;
		char *sql =
		    xasprintf("SELECT min(%s), max(%s), EXISTS (SELECT 1 FROM %s WHERE %s = 0)"
			      " FROM %s",
			      k, k, t, k, t);
		int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
		free(sql);
		if (rc != SQLITE_OK)
			continue; /* a table an older schema lacks */
		int64_t lo = 1, hi = 1;
		int ints = 1, zero = 0;
		if (sqlite3_step(q) == SQLITE_ROW && !col_null(q, 0)) {
			/* min and max order every type: text and blobs sort
			 * after numbers, so they show at the max */
			ints = sqlite3_column_type(q, 0) == SQLITE_INTEGER &&
			       sqlite3_column_type(q, 1) == SQLITE_INTEGER;
			lo = col_int(q, 0);
			hi = col_int(q, 1);
			zero = col_int(q, 2) != 0;
		}
		sqlite3_finalize(q);
		/* 0 is every reader's "none" */
		if (!ints || zero || lo < -COL_ID_MAX || hi > COL_ID_MAX) {
			char id[32] = "that is not an integer";
			if (ints)
				snprintf(id, sizeof(id), "%lld",
					 (long long)(zero		? 0
						     : lo < -COL_ID_MAX ? lo
									: hi));
			*err = xasprintf("%s: table %s has an id %s, not one of -2^61..2^61 but 0"
					 " (a trace.db that grademl-tui did not write)",
					 path, t, id);
			return -1;
		}
	}
	return 0;
}
