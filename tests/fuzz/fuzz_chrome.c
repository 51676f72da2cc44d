/*
 * libFuzzer target for the Chrome trace importer (see fuzz_import.h).  Each
 * input is imported twice, with the event scanner on and off
 * (GRADEML_CHROME_SCAN), and the two outcomes must be the same: the same
 * error message, or the same rows in every table the import writes.
 */
#include "model/xalloc.h"
#include "tests/fuzz/fuzz_import.h"

/* The outcome of importing in_path with the scanner on or off. */
static char *outcome(char *in_path, int scan, int *failed)
{
	setenv("GRADEML_CHROME_SCAN", scan ? "1" : "0", 1);
	char *err;
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	*failed = fuzz_import_run(in_path, "chrome", (struct import_opts){0}, &out, &err) < 0;
	if (*failed) {
		sbuf_addf(&out, "error: %s", err);
		free(err);
	}
	return sbuf_detach(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in_path[128];
	fuzz_file(in_path, "in", data, size);
	int failed;
	char *on = outcome(in_path, 1, &failed), *off = outcome(in_path, 0, &failed);
	if (strcmp(on, off)) {
		fprintf(stderr, "scanner: %.2000s\nyajl:    %.2000s\n", on, off);
		abort();
	}
	free(on);
	free(off);
	return 0;
}
