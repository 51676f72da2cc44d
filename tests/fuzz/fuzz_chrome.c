/*
 * libFuzzer target for the Chrome trace importer (see fuzz_import.h).  Each
 * input is imported twice, with the event scanner on and off
 * (GRADEML_CHROME_SCAN), and the two outcomes must be the same: the same
 * error message, or the same rows in every table the import writes.
 */
#include <sqlite3.h>

#include "model/sbuf.h"
#include "model/xalloc.h"
#include "tests/dbdump.h"
#include "tests/fuzz/fuzz_import.h"

/* The outcome of importing in_path with the scanner on or off. */
static char *outcome(char *in_path, int scan)
{
	char db_path[128];
	snprintf(db_path, sizeof(db_path), "%.*s/t.db", (int)(strrchr(in_path, '/') - in_path),
		 in_path);
	unlink(db_path);
	setenv("GRADEML_CHROME_SCAN", scan ? "1" : "0", 1);
	char *paths[] = {in_path};
	struct import_opts o = {.arena_bytes = 4096}; /* exercise the spill paths */
	char *err = NULL;
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	if (import_files(db_path, paths, 1, "chrome", &o, &err) < 0) {
		if (!err || access(db_path, F_OK) == 0)
			abort();
		sbuf_addf(&out, "error: %s", err);
		free(err);
	} else if (dbdump(db_path, &out, &err) < 0) {
		abort();
	}
	unlink(db_path);
	return sbuf_detach(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in_path[128];
	fuzz_file(in_path, "in", data, size);
	char *on = outcome(in_path, 1), *off = outcome(in_path, 0);
	if (strcmp(on, off)) {
		fprintf(stderr, "scanner: %.2000s\nyajl:    %.2000s\n", on, off);
		abort();
	}
	free(on);
	free(off);
	return 0;
}
