/*
 * Every row an import writes, as text: the tables of trace.db an importer
 * fills, each row's columns joined by '|', sources without the time of the
 * import.  Two imports that must agree (the Chrome importer's scanner on
 * and off: tests/test_chrome_scan.c, tests/fuzz/fuzz_chrome.c) compare
 * these.  Header-only, for the fuzz targets as well as the unit tests.
 */
#ifndef GRADEML_TESTS_DBDUMP_H
#define GRADEML_TESTS_DBDUMP_H

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

/* The tables an import fills, *n of them. */
static inline const char *const *dbdump_tables(size_t *n)
{
	static const char *const tables[] = {
	    "phases",	   "edges",  "events",	"metrics", "samples",
	    "diagnostics", "tracks", "strings", "sources",
	};
	*n = sizeof(tables) / sizeof(tables[0]);
	return tables;
}

/* Appends the rows of the import tables of connection c to out; 0, or -1
 * with *err. */
static inline int dbdump_db(sqlite3 *c, struct sbuf *out, char **err)
{
	size_t ntables;
	const char *const *tables = dbdump_tables(&ntables);
	int rc = 0;
	for (size_t t = 0; t < ntables && !rc; t++) {
		char *sql = !strcmp(tables[t], "sources")
				? xasprintf("SELECT id, path, format, compression, size_bytes, "
					    "anchor, time_offset_ns, host, rank, phases, events, "
					    "samples, dropped, attrs FROM sources ORDER BY id")
				: xasprintf("SELECT * FROM %s ORDER BY rowid", tables[t]);
		sqlite3_stmt *s;
		if (sqlite3_prepare_v2(c, sql, -1, &s, NULL) != SQLITE_OK) {
			*err = xasprintf("%s: %s", sql, sqlite3_errmsg(c));
			free(sql);
			rc = -1;
			break;
		}
		sbuf_addf(out, "== %s\n", tables[t]);
		while (sqlite3_step(s) == SQLITE_ROW) {
			for (int i = 0; i < sqlite3_column_count(s); i++) {
				const unsigned char *v = sqlite3_column_text(s, i);
				sbuf_adds(out, v ? (const char *)v : "NULL");
				sbuf_addc(out, '|');
			}
			sbuf_addc(out, '\n');
		}
		sqlite3_finalize(s);
		free(sql);
	}
	return rc;
}

/* dbdump_db of the trace.db at path db. */
static inline int dbdump(const char *db, struct sbuf *out, char **err)
{
	sqlite3 *c;
	if (sqlite3_open_v2(db, &c, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: %s", db, sqlite3_errmsg(c));
		sqlite3_close(c);
		return -1;
	}
	int rc = dbdump_db(c, out, err);
	sqlite3_close(c);
	return rc;
}

#endif
