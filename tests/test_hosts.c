/*
 * Host aliases from a hosts file (importers/hosts.h), seen through the
 * import of a small nvidia-smi CSV from host "node7": comments, blanks and
 * tabs, an alias renaming the host, names that are not valid UTF-8, and a
 * file giving one alias two names refused with its line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "tests/importfx.h"

static const char csv[] = "timestamp, index, utilization.gpu [%]\n"
			  "2024/03/15 13:57:59.791, 0, 35 %\n";

static int setup(void **state)
{
	return importfx_setup(state, "hosts", "gpu.csv");
}

/* Imports the CSV from node7 with hosts as the hosts file. */
static int import(struct fx *f, const char *hosts, char *path, char **err)
{
	snprintf(path, 320, "%s/hosts", f->dir);
	importfx_write(path, hosts);
	struct import_opts o = {.host = "node7", .hosts_file = path};
	importfx_reset(f);
	return importfx_import(f, csv, &o, err);
}

static void aliases(void **state)
{
	struct fx *f = *state;
	char *err = NULL, path[320], buf[64];
	if (import(f,
		   "# canonical name, then aliases\n"
		   "\n"
		   "  gpu-box\tnode7.local   node7 # the sampler's name\n"
		   "node8 node8.local\n",
		   path, &err) < 0)
		fail_msg("%s", err);
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, sizeof(buf)),
			    "gpu-box");
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM metrics WHERE host <> 'gpu-box'"),
			 0);
}

/* Found while writing fuzz_hosts: --host is stored as valid UTF-8 but
 * a hosts file's names were stored as they came. */
static void invalid_utf8(void **state)
{
	struct fx *f = *state;
	char *err = NULL, path[320], buf[64];
	if (import(f, "gpu\xff-box node7\n", path, &err) < 0)
		fail_msg("%s", err);
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, sizeof(buf)),
			    "gpu\xef\xbf\xbd-box");
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM metrics WHERE host <> "
					 "'gpu' || char(65533) || '-box'"),
			 0);
}

static void alias_given_twice(void **state)
{
	struct fx *f = *state;
	char *err = NULL, path[320], want[400];
	assert_int_equal(import(f, "a node7\n# b\nb node7\n", path, &err), -1);
	snprintf(want, sizeof(want), "%s:3: 'node7' is already an alias of 'a'", path);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(access(f->db, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(aliases, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(invalid_utf8, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(alias_given_twice, setup, importfx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
