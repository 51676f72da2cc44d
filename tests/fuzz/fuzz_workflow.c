/*
 * libFuzzer target for the workflow manifest (JSON lines) importer (see fuzz_import.h).
 */
#include "tests/fuzz/fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_import(data, size, "workflow");
}
