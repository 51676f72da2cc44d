/*
 * libFuzzer target for the Chrome trace importer: each input is written to
 * a file and imported into a fresh trace.db.  Any outcome is fine (most
 * inputs are rejected with an error) except a crash, a sanitizer report, a
 * leak, or an import that succeeds and leaves an inconsistent database.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void setup(void)
{
	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/grademl-fuzz-XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	char in_path[128], db_path[128];
	snprintf(in_path, sizeof(in_path), "%s/in.json", dir);
	snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
	FILE *f = fopen(in_path, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	unlink(db_path);
	char *paths[] = {in_path};
	struct import_opts o = {.arena_bytes = 4096}; /* exercise the spill path */
	char *err = NULL;
	if (import_files(db_path, paths, 1, "chrome", &o, &err) < 0) {
		if (!err || access(db_path, F_OK) == 0)
			abort(); /* a failed import must explain itself and leave nothing */
		free(err);
	}
	unlink(db_path);
	return 0;
}
