/*
 * The body of every importer's libFuzzer target: each input is written to a
 * file and imported into a fresh trace.db with the format forced.  Any
 * outcome is fine (most inputs are rejected with an error) except a crash,
 * a sanitizer report, a leak, or a failed import that does not explain
 * itself or leaves a database behind.  Header-only: each target includes it
 * and calls fuzz_import from LLVMFuzzerTestOneInput.
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

static inline int fuzz_import(const uint8_t *data, size_t size, const char *format)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/grademl-fuzz-XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	char in_path[128], db_path[128];
	snprintf(in_path, sizeof(in_path), "%s/in", dir);
	snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
	FILE *f = fopen(in_path, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	unlink(db_path);
	char *paths[] = {in_path};
	struct import_opts o = {.arena_bytes = 4096}; /* exercise the spill paths */
	char *err = NULL;
	if (import_files(db_path, paths, 1, format, &o, &err) < 0) {
		if (!err || access(db_path, F_OK) == 0)
			abort(); /* a failed import must explain itself and leave nothing */
		free(err);
	}
	unlink(db_path);
	return 0;
}

#endif
