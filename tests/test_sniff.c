/*
 * Content sniffing over the real samples in ../shared/samples
 * (GRADEML_SAMPLES overrides): every file is opened as an import opens it
 * and sniffed, and the importer chosen must be the one the table below
 * names for its folder or file.  The table is what sniffing chose when the
 * window grew from 4 KiB to 64 KiB, with one change: the MLPerf BERT log,
 * whose first record follows 5 KB of shell trace, is now an MLPerf log.
 * A file the table does not know fails the test, so that a new sample is
 * looked at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "importers/importer.h"
#include "tests/skip.h"

/* The first row whose folder matches and whose prefix starts the file's
 * name (NULL: any) says what sniffing picks: an importer's name, "-" for
 * none, or "empty" for a file that cannot be opened because it is empty. */
static const struct {
	const char *dir, *prefix, *want;
} table[] = {
    {"chrome-trace", NULL, "chrome"},
    {"spark-eventlog", "NVIDIA__spark-rapids-tools__appstatus_", "empty"},
    {"spark-eventlog", NULL, "spark"},
    {"otlp-json", NULL, "otlp"},
    {"prometheus-query-range", NULL, "prometheus"},
    /* text exposition and dcgmi output: no importer reads them */
    {"prometheus-exposition", NULL, "-"},
    {"dcgm", NULL, "-"},
    {"psutil-csv", NULL, "-"},
    {"sysstat", "sysstat__sysstat__expected.sadf-d", "-"},
    {"sysstat", "sysstat__sysstat__expected.sar-A", "-"},
    {"sysstat", NULL, "sysstat"},
    {"nvidia-smi-csv", "utkuozdemir__", "-"}, /* several sections, '#' banners first */
    {"nvidia-smi-csv", NULL, "nvidia-smi"},
    {"training-log", "microsoft__VirtualClient__Example_bert_real_output", "mlperf"},
    /* read with --rules: a log format is never sniffed */
    {"training-log", "KellerJordan__modded-nanogpt__", "-"},
    /* no importer of theirs: the weak JSON guesses ('{', '[' first) */
    {"training-log", "aigoncharov__trainer_state_viz__", "chrome"},
    {"training-log", "microsoft__VirtualClient__sb-exec.log", "chrome"},
    {"training-log", "AIRI-Institute__", "-"},
};

static const char *samples_dir(void)
{
	const char *d = getenv("GRADEML_SAMPLES");
	return d && *d ? d : "../shared/samples";
}

static const char *expected(const char *dir, const char *name)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].dir, dir) &&
		    (!table[i].prefix || !strncmp(name, table[i].prefix, strlen(table[i].prefix))))
			return table[i].want;
	return NULL;
}

/* What an import's sniffing picks for path, as the table spells it. */
static const char *sniffed(const char *path)
{
	struct input *in = NULL;
	char *err = NULL;
	if (input_open(path, &in, &err) < 0) {
		int empty = strstr(err, ": empty") != NULL;
		free(err);
		return empty ? "empty" : "cannot open";
	}
	size_t n;
	const unsigned char *b = input_peek(in, &n);
	const struct importer *imp = importer_sniff(b, n);
	input_close(in);
	return imp ? imp->name : "-";
}

static void samples_sniff_as_before(void **state)
{
	(void)state;
	const char *root = samples_dir();
	DIR *top = opendir(root);
	if (!top)
		skip_because("%s is absent", root);
	struct dirent *de;
	int seen = 0, bad = 0;
	while ((de = readdir(top))) {
		char dir[1024];
		struct stat sb;
		snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
		if (de->d_name[0] == '.' || stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
			continue;
		DIR *d = opendir(dir);
		assert_non_null(d);
		struct dirent *fe;
		while ((fe = readdir(d))) {
			char path[2048];
			snprintf(path, sizeof(path), "%s/%s", dir, fe->d_name);
			if (fe->d_name[0] == '.' || stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
				continue;
			const char *want = expected(de->d_name, fe->d_name);
			const char *got = sniffed(path);
			if (!want || strcmp(want, got)) {
				print_error("%s/%s: sniffed %s, want %s\n", de->d_name, fe->d_name,
					    got, want ? want : "(not in the table)");
				bad++;
			}
			seen++;
		}
		closedir(d);
	}
	closedir(top);
	print_message("%d samples sniffed\n", seen);
	assert_int_equal(bad, 0);
	assert_true(seen > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(samples_sniff_as_before),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
