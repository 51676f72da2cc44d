/*
 * libFuzzer target for the rules-file parser of the "log" importer: each
 * input is parsed as a rules file.  Either it parses, and the rules are
 * freed, or it is refused with a message; anything else (a crash, a
 * sanitizer report, a leak, a refusal without a message) is a finding.
 */
#include <stdint.h>
#include <stdlib.h>

#include "importers/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rules *r = NULL;
	char *err = NULL;
	if (rules_parse((const char *)data, size, "fuzz.rules", &r, &err) < 0) {
		if (!err || r)
			abort();
		free(err);
		return 0;
	}
	if (!r || err)
		abort();
	rules_free(r);
	return 0;
}
