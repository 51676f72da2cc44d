/*
 * The body of every importer's libFuzzer target: each input is written to a
 * file and imported, with the format forced, into a trace.db in memory
 * (STORE_MEMORY) that the process keeps from one input to the next: no
 * file, no publishing, no schema to create per input.  Any outcome is fine
 * (most inputs are rejected with an error) except a crash, a sanitizer
 * report, a leak, or a failed import that does not explain itself or does
 * not leave trace.db as it was.
 * Header-only: each target includes it and calls fuzz_import from
 * LLVMFuzzerTestOneInput; a target whose input is not the traced file
 * itself (a hosts or rules file) writes its files with fuzz_file and imports with
 * fuzz_import_file.
 */
#ifndef GRADEML_FUZZ_IMPORT_H
#define GRADEML_FUZZ_IMPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/util/sbuf.h"
#include "tests/dbdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* This process's scratch directory: in /dev/shm where there is one, since
 * rewriting a file on a disk file system costs the kernel a writeback per
 * input (a fifth of each run on ext4); removed with its files at exit.  The
 * nest's spilled runs (TMPDIR) go there too. */
static char fuzz_dir[64];

static inline void fuzz_dir_remove(void)
{
	char *cmd = xasprintf("rm -rf '%s'", fuzz_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz: cannot remove %s\n", fuzz_dir);
	free(cmd);
}

/* The file name in this process's scratch directory, in path (128 bytes),
 * holding the size bytes of data; returns path. */
static inline char *fuzz_file(char *path, const char *name, const void *data, size_t size)
{
	if (!fuzz_dir[0]) {
		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/grademl-fuzz-XXXXXX",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_dir_remove);
		setenv("TMPDIR", fuzz_dir, 1); /* the nest's spilled runs, likewise */
	}
	snprintf(path, 128, "%s/%s", fuzz_dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	return path;
}

/* The state of the store's database that every import must leave as it
 * found it, or restore: its schema and the number of rows in each table an
 * import fills; a string the caller frees.  The statement is prepared once
 * once for the process's one store (a third of each run went to preparing
 * it). */
static sqlite3_stmt *fuzz_state_stmt;

static inline char *fuzz_db_state(struct store *st)
{
	if (!fuzz_state_stmt) {
		struct sbuf q = SBUF_INIT;
		sbuf_init(&q);
		sbuf_adds(&q, "SELECT (SELECT group_concat(name || ' ' || coalesce(sql, ''), ';')"
			      " FROM (SELECT * FROM sqlite_master ORDER BY name))");
		size_t n;
		const char *const *tables = dbdump_tables(&n);
		for (size_t i = 0; i < n; i++)
			sbuf_addf(&q, " || ' %s:' || (SELECT count(*) FROM %s)", tables[i],
				  tables[i]);
		if (sqlite3_prepare_v3(store_db(st), q.buf, -1, SQLITE_PREPARE_PERSISTENT,
				       &fuzz_state_stmt, NULL) != SQLITE_OK)
			abort();
		sbuf_release(&q);
	}
	sqlite3_stmt *s = fuzz_state_stmt;
	if (sqlite3_step(s) != SQLITE_ROW)
		abort();
	char *state = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_reset(s);
	return state;
}

/* Deletes every row an import added (the rows of a table get the same ids
 * again: trace.db has no AUTOINCREMENT). */
static inline void fuzz_db_clear(struct store *st)
{
	size_t n;
	const char *const *tables = dbdump_tables(&n);
	for (size_t i = 0; i < n; i++) {
		char *sql = xasprintf("DELETE FROM %s", tables[i]), *err = NULL;
		if (store_exec(st, sql, &err) < 0)
			abort();
		free(sql);
	}
}

/* The trace.db in memory the imports of this process go to (STORE_MEMORY),
 * created with its first import's schema and no rows, and its state. */
static struct store *fuzz_store;
static char *fuzz_empty_state;

static inline struct store *fuzz_store_get(void)
{
	char *err = NULL;
	if (!fuzz_store) {
		if (store_open(STORE_MEMORY, STORE_WRITE, &fuzz_store, &err) < 0 ||
		    store_begin(fuzz_store, &err) < 0 || store_commit(fuzz_store, &err) < 0) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
		if (!fuzz_empty_state)
			fuzz_empty_state = fuzz_db_state(fuzz_store);
	}
	return fuzz_store;
}

/* Aborts unless the store is in its empty state. */
static inline void fuzz_check_empty(struct store *st, const char *when)
{
	char *state = fuzz_db_state(st);
	if (strcmp(state, fuzz_empty_state)) {
		fprintf(stderr, "%s, trace.db is not as it was:\n%s\nwas:\n%s\n", when, state,
			fuzz_empty_state);
		abort();
	}
	free(state);
}

/*
 * Imports in_path with o's options, the format forced, into the store in
 * memory; its status, with *err set on failure.  A failure must leave the
 * store exactly as it was (one transaction, rolled back); after a success
 * the rows are appended to dump when that is not NULL (dbdump_db), then
 * deleted.  So one store serves every input, and opening one (the schema)
 * is paid once, not per input (host aliases hold for one transaction).
 */
static inline int fuzz_import_run(char *in_path, const char *format, struct import_opts o,
				  struct sbuf *dump, char **err)
{
	struct store *st = fuzz_store_get();
	char *paths[] = {in_path};
	o.arena_bytes = 4096; /* exercise the spill paths */
	*err = NULL;
	int rc = import_to_store(st, paths, 1, format, &o, err);
	if (rc < 0 && !*err)
		abort();
	char *why = NULL;
	if (rc == 0 && dump && dbdump_db(store_db(st), dump, &why) < 0) {
		fprintf(stderr, "dbdump: %s\n", why);
		abort();
	}
	if (rc == 0)
		fuzz_db_clear(st);
	fuzz_check_empty(st, rc < 0 ? "after a failed import" : "after deleting the import's rows");
	return rc;
}

/* fuzz_import_run; a failure's message must also begin with err_prefix
 * when that is not NULL. */
static inline int fuzz_import_file(char *in_path, const char *format, struct import_opts o,
				   const char *err_prefix)
{
	char *err;
	if (fuzz_import_run(in_path, format, o, NULL, &err) < 0) {
		if (err_prefix && strncmp(err, err_prefix, strlen(err_prefix)))
			abort();
		free(err);
	}
	return 0;
}

static inline int fuzz_import(const uint8_t *data, size_t size, const char *format)
{
	char in_path[128];
	return fuzz_import_file(fuzz_file(in_path, "in", data, size), format,
				(struct import_opts){0}, NULL);
}

#endif
