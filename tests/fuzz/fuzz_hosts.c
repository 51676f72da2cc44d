/*
 * libFuzzer target for the hosts file parser (importers/hosts.c): each
 * input is a hosts file, given to the import of one fixed nvidia-smi CSV
 * from host "node7", so that an alias of it renames the metrics' host.
 * The CSV is valid, so an import may fail only on the hosts file, with a
 * message naming it (see fuzz_import.h for the rest).
 */
#include "tests/fuzz/fuzz_import.h"

static const char csv[] = "timestamp, index, utilization.gpu [%], memory.used [MiB]\n"
			  "2024/03/15 13:57:59.791, 0, 35 %, 1024 MiB\n"
			  "2024/03/15 13:58:00.791, 0, 40 %, 2048 MiB\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char csv_path[128];
	char hosts_path[128], prefix[136];
	if (!csv_path[0])
		fuzz_file(csv_path, "gpu.csv", csv, sizeof(csv) - 1);
	fuzz_file(hosts_path, "hosts", data, size);
	snprintf(prefix, sizeof(prefix), "%s:", hosts_path);
	struct import_opts o = {.host = "node7", .hosts_file = hosts_path};
	return fuzz_import_file(csv_path, "nvidia-smi", o, prefix);
}
