/*
 * libFuzzer target for the "log" importer (importers/rulelog.c): each input
 * is a text log read through one fixed rules file that uses every rule
 * kind (a lap too), the line's time and a rule's own time, {group} names
 * and a loose sample value.  The rules are valid, so an import may fail
 * only on the log itself, with a message naming it (see fuzz_import.h for
 * the rest).
 */
#include "tests/fuzz/fuzz_import.h"

static const char rules[] =
    "time iso8601 /^\\[?(?<time>\\d{4}-\\d\\d-\\d\\d[T ][0-9:.,]+"
    "(?:Z|[+-]\\d\\d:?\\d\\d)?)[ \\]]/\n"
    "start {bench} /Executor is going to execute \\S+ \\S+: (?<bench>\\S*)\\.$/\n"
    "end {bench} /Executor (?:succeeded|failed) in \\S+ \\S+: (?<bench>\\S*)\\.$/\n"
    "start epoch{n} /begin epoch (?<n>\\d*)/i\n"
    "end epoch{n} /end epoch (?<n>\\d*)/i\n"
    "lap iter{n} /iter (?<n>\\d*) done/\n"
    "sample step_time:{model}:{precision} ms /model: (?<model>[^,]*), precision: "
    "(?<precision>\\w*), step time: (?<value>[0-9.]+) ms/\n"
    "sample step_avg ms /^step:\\d+\\/\\d+ .*step_avg:(?<value>[0-9.]+)ms/\n"
    "sample loss - /loss[=:] ?(?<value>\\S+)/\n"
    "event val{step} /^step:(?<step>\\d+)\\/\\d+ val_loss:(?<val_loss>\\S+)"
    "(?: at (?<time>\\S+ \\S+))?/\n"
    "event error /\\]\\[ERROR\\] (?<message>.*)$/\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char rules_path[128];
	char in_path[128], prefix[136];
	if (!rules_path[0])
		fuzz_file(rules_path, "log.rules", rules, sizeof(rules) - 1);
	fuzz_file(in_path, "in", data, size);
	snprintf(prefix, sizeof(prefix), "%s:", in_path);
	return fuzz_import_file(in_path, "log", (struct import_opts){.rules = rules_path}, prefix);
}
