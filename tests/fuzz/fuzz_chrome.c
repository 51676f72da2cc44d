/*
 * libFuzzer target for the Chrome trace importer (see fuzz_import.h).  Each
 * input is imported twice, with the event scanner on and off
 * (GRADEML_CHROME_SCAN), and the two outcomes must be the same: both fail,
 * or both store the same rows in every table the import writes.  On plain
 * input both must also fail with the same message.  On compressed input
 * they need not: the scanner reads a whole event ahead before parsing it,
 * so on a corrupt stream it may meet the decoder's error ("corrupt gzip
 * data") where YAJL, fed as the bytes come, first meets the garbage the
 * decoder produced before it noticed ("malformed JSON"); both are right.
 * An input of odd size is imported under --strict, one of even size as
 * Perfetto reads it (trailing commas, control characters, a cut array).
 */
#include "model/util/xalloc.h"
#include "tests/fuzz/fuzz_import.h"

/* The outcome of importing in_path with the scanner on or off. */
static char *outcome(char *in_path, int scan, int strict, int *failed)
{
	setenv("GRADEML_CHROME_SCAN", scan ? "1" : "0", 1);
	char *err;
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	*failed = fuzz_import_run(in_path, "chrome", (struct import_opts){.strict = strict}, &out,
				  &err) < 0;
	if (*failed) {
		sbuf_addf(&out, "error: %s", err);
		free(err);
	}
	return sbuf_detach(&out);
}

/* Whether data starts with the magic bytes of gzip or zstd. */
static int compressed(const uint8_t *data, size_t size)
{
	return (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
	       (size >= 4 && !memcmp(data, "\x28\xb5\x2f\xfd", 4));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in_path[128];
	fuzz_file(in_path, "in", data, size);
	int on_failed, off_failed;
	int strict = size % 2;
	char *on = outcome(in_path, 1, strict, &on_failed),
	     *off = outcome(in_path, 0, strict, &off_failed);
	if (on_failed != off_failed ||
	    ((!on_failed || !compressed(data, size)) && strcmp(on, off))) {
		fprintf(stderr, "scanner: %.2000s\nyajl:    %.2000s\n", on, off);
		abort();
	}
	free(on);
	free(off);
	return 0;
}
