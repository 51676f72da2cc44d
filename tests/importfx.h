/*
 * The fixture of the importer tests: a scratch directory with an input
 * file and a trace.db, importing inline text and querying the result with
 * sqlite3.  Header-only, like testdir.h; include it after cmocka.h.
 */
#ifndef GRADEML_IMPORTFX_H
#define GRADEML_IMPORTFX_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "importers/importer.h"
#include "tests/testdir.h"

struct fx {
	char dir[256], in[300], db[300];
	sqlite3 *conn;
};

/* A fresh directory "grademl-test-TAG-*" with the input named in_name. */
static inline int importfx_setup(void **state, const char *tag, const char *in_name)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || testdir_make(f->dir, sizeof(f->dir), tag) < 0)
		return -1;
	snprintf(f->in, sizeof(f->in), "%s/%s", f->dir, in_name);
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	*state = f;
	return 0;
}

static inline int importfx_teardown(void **state)
{
	struct fx *f = *state;
	if (f->conn)
		sqlite3_close(f->conn);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static inline void importfx_write(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* Closes the query connection and removes trace.db. */
static inline void importfx_reset(struct fx *f)
{
	if (f->conn)
		sqlite3_close(f->conn);
	f->conn = NULL;
	unlink(f->db);
}

/* Imports text (format sniffed) into trace.db; 0 or -1 and *err. */
static inline int importfx_import(struct fx *f, const char *text, const struct import_opts *o,
				  char **err)
{
	struct import_opts none = {0};
	importfx_write(f->in, text);
	char *paths[] = {f->in};
	return import_files(f->db, paths, 1, NULL, o ? o : &none, err);
}

/* importfx_import into a fresh trace.db. */
static inline int importfx_fresh(struct fx *f, const char *text, const struct import_opts *o,
				 char **err)
{
	importfx_reset(f);
	return importfx_import(f, text, o, err);
}

static inline sqlite3_stmt *importfx_query(struct fx *f, const char *sql)
{
	sqlite3_stmt *s;
	if (!f->conn)
		assert_int_equal(sqlite3_open(f->db, &f->conn), SQLITE_OK);
	if (sqlite3_prepare_v2(f->conn, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(f->conn));
	return s;
}

/* The first column of the first row as an integer (-1: no row). */
static inline int64_t importfx_int(struct fx *f, const char *sql)
{
	sqlite3_stmt *s = importfx_query(f, sql);
	int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return v;
}

/* The first column of the first row as text into buf ("" when none). */
static inline const char *importfx_text(struct fx *f, const char *sql, char *buf, size_t n)
{
	sqlite3_stmt *s = importfx_query(f, sql);
	buf[0] = '\0';
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return buf;
}

#endif
