/*
 * The body of every importer's libFuzzer target: each input is written to a
 * file and imported into a fresh trace.db with the format forced.  Any
 * outcome is fine (most inputs are rejected with an error) except a crash,
 * a sanitizer report, a leak, or a failed import that does not explain
 * itself or leaves a database behind.  Header-only: each target includes it
 * and calls fuzz_import from LLVMFuzzerTestOneInput; a target whose input
 * is not the traced file itself (a rules or hosts file) writes its files
 * with fuzz_file and imports with fuzz_import_file.
 */
#ifndef GRADEML_FUZZ_IMPORT_H
#define GRADEML_FUZZ_IMPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file name in this process's scratch directory, in path (128 bytes),
 * holding the size bytes of data; returns path. */
static inline char *fuzz_file(char *path, const char *name, const void *data, size_t size)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/grademl-fuzz-XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, 128, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	return path;
}

/* Imports in_path with o's options into a fresh trace.db beside it.  A
 * failure must say why, begin with err_prefix when that is not NULL, and
 * leave no trace.db. */
static inline int fuzz_import_file(char *in_path, const char *format, struct import_opts o,
				   const char *err_prefix)
{
	char db_path[128];
	snprintf(db_path, sizeof(db_path), "%.*s/t.db", (int)(strrchr(in_path, '/') - in_path),
		 in_path);
	unlink(db_path);
	char *paths[] = {in_path};
	o.arena_bytes = 4096; /* exercise the spill paths */
	char *err = NULL;
	if (import_files(db_path, paths, 1, format, &o, &err) < 0) {
		if (!err || access(db_path, F_OK) == 0 ||
		    (err_prefix && strncmp(err, err_prefix, strlen(err_prefix))))
			abort();
		free(err);
	}
	unlink(db_path);
	return 0;
}

static inline int fuzz_import(const uint8_t *data, size_t size, const char *format)
{
	char in_path[128];
	return fuzz_import_file(fuzz_file(in_path, "in", data, size), format,
				(struct import_opts){0}, NULL);
}

#endif
