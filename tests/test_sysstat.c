/*
 * The sysstat importer on small sadf -j (and mpstat -o JSON) documents
 * written to a scratch directory: series names, units, capacities, the
 * shift of each sample to the start of its interval, --host and
 * --time-offset, local-time diagnostics, every kind of bad input (one line,
 * nothing imported), and the real samples in ../shared/samples/sysstat
 * counted independently with jansson.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "tests/importfx.h"
#include "tests/skip.h"

static int setup(void **state)
{
	return importfx_setup(state, "sysstat", "in.json");
}

/* 2026-01-02 03:04:05 UTC */
#define T0 1767323045LL

static const char sadf[] =
    "{\"sysstat\": {\"hosts\": [{\"nodename\": \"n1\", \"number-of-cpus\": 2,"
    " \"statistics\": ["
    "{\"timestamp\": {\"date\": \"2026-01-02\", \"time\": \"03:04:05\", \"utc\": 1, \"interval\": "
    "10},"
    " \"cpu-load\": [{\"cpu\": \"all\", \"usr\": 1.5, \"idle\": 90.0},"
    "  {\"cpu\": \"0\", \"usr\": 3, \"idle\": 80}],"
    " \"memory\": {\"memfree\": 100, \"memused\": 300, \"memused-percent\": 75.0},"
    " \"disk\": [{\"disk-device\": \"sda\", \"tps\": 1.0, \"util-percent\": 2.5}],"
    " \"network\": {\"net-dev\": [{\"iface\": \"eth0\", \"rxkB\": 1.0, \"txkB\": 2.0}]}},"
    "{\"timestamp\": {\"date\": \"2026-01-02\", \"time\": \"03:04:15\", \"utc\": 1, \"interval\": "
    "10},"
    " \"cpu-load\": [{\"cpu\": \"all\", \"usr\": 2.5, \"idle\": 60.0}]}"
    "], \"restarts\": []}]}}\n";

static void series_and_times(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[128];
	assert_int_equal(importfx_import(f, sadf, NULL, &err), 0);
	/* first sample: 2 cpus x (usr, idle, util) + 3 memory + 2 disk + 2 net; second: 3 */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM samples"), 6 + 3 + 2 + 2 + 3);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM metrics"), 13);
	assert_string_equal(
	    importfx_text(f, "SELECT group_concat(DISTINCT host) FROM metrics", buf, 128), "n1");
	/* cpu.util = 100 - idle, stored at the interval's start */
	assert_int_equal(
	    importfx_int(f, "SELECT s.t_ns FROM samples s JOIN metrics m ON m.id = s.metric_id"
			    " WHERE m.name = 'cpu.util' ORDER BY s.t_ns LIMIT 1"),
	    (T0 - 10) * 1000000000LL);
	assert_int_equal(importfx_int(f, "SELECT sum(s.value) FROM samples s JOIN metrics m"
					 " ON m.id = s.metric_id WHERE m.name = 'cpu.util'"),
			 10 + 40);
	assert_string_equal(importfx_text(f,
					  "SELECT unit || '/' || value_kind || '/' || capacity"
					  " FROM metrics WHERE name = 'cpu0.util'",
					  buf, 128),
			    "%/mean/100.0");
	assert_string_equal(importfx_text(f,
					  "SELECT resource || ' ' || unit || ' ' || capacity"
					  " FROM metrics WHERE name = 'mem.memused'",
					  buf, 128),
			    "mem kB 400.0");
	assert_string_equal(importfx_text(f,
					  "SELECT resource || ' ' || unit FROM metrics"
					  " WHERE name = 'net:eth0.rxkB'",
					  buf, 128),
			    "net:eth0 kB/s");
	assert_int_equal(
	    importfx_int(f, "SELECT count(*) FROM metrics WHERE name = 'disk:sda.util-percent'"
			    " AND capacity = 100"),
	    1);
	assert_int_equal(importfx_int(f, "SELECT samples FROM sources"), 16);
	assert_string_equal(importfx_text(f, "SELECT format FROM sources", buf, 128), "sysstat");
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, 128), "n1");
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics"), 0);
}

static void host_and_offset(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[64];
	struct import_opts o = {
	    .host = "gpu-node-7", .time_offset_ns = 5000000000LL, .has_time_offset = 1};
	assert_int_equal(importfx_import(f, sadf, &o, &err), 0);
	assert_string_equal(
	    importfx_text(f, "SELECT group_concat(DISTINCT host) FROM metrics", buf, 64),
	    "gpu-node-7");
	assert_int_equal(importfx_int(f, "SELECT min(t_ns) FROM samples"),
			 (T0 - 10 + 5) * 1000000000LL);
	assert_string_equal(importfx_text(f, "SELECT anchor FROM sources", buf, 64), "time-offset");
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, 64), "gpu-node-7");
}

static void mpstat_local_time(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(
	    importfx_import(
		f,
		"{\"sysstat\": {\"hosts\": [{\"nodename\": \"x\", \"date\": \"06/01/20\","
		" \"statistics\": [{\"timestamp\": \"12:53:20\", \"cpu-load\":"
		" [{\"cpu\": \"all\", \"usr\": 1, \"idle\": 2}]}]}]}}",
		NULL, &err),
	    0);
	/* 2020-06-01 12:53:20, taken as UTC, and said so */
	assert_int_equal(importfx_int(f, "SELECT min(t_ns) FROM samples"),
			 1591016000LL * 1000000000LL);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'LOCAL_TIME'"),
			 1);
}

/* Each bad input: exit with one line naming the file, and no trace.db. */
static void bad_inputs(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {"{\"sysstat\": {\"hosts\": [{\"nodename\": \"n\", \"statistics\": [{\"timestamp\": "
	     "{\"date\": \"2026-01-02\", \"time\": \"03:04:05\", \"utc\": 1}, \"queue\": {\"a\": "
	     "1}",
	     "ends inside"},
	    {"{\"sysstat\": {\"hosts\": [}}", "brackets do not match"},
	    {"{\"sysstat\": {\"hosts\": []}}", "no \"statistics\" samples"},
	    {"{\"sysstat\": {\"hosts\": [{\"statistics\": [{\"timestamp\": 1, \"x\": tru}]}]}}",
	     "not valid JSON"},
	    {"{\"sysstat\": {\"hosts\": [{\"statistics\": [{\"timestamp\": \"bad\"}]}]}}",
	     "no sample has a readable timestamp"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *err = NULL;
		unlink(f->db);
		assert_int_equal(importfx_import(f, cases[i].text, NULL, &err), -1);
		assert_non_null(err);
		if (!strstr(err, cases[i].want) || !strstr(err, f->in) || strchr(err, '\n'))
			fail_msg("case %zu: '%s'", i, err);
		assert_int_not_equal(access(f->db, F_OK), 0);
		free(err);
	}
	/* a binary file forced to sysstat */
	char *err = NULL;
	FILE *fp = fopen(f->in, "wb");
	fwrite("{\"sysstat\"\0\x01\x02\xff", 1, 14, fp);
	fclose(fp);
	char *paths[] = {f->in};
	struct import_opts o = {0};
	assert_int_equal(import_files(f->db, paths, 1, "sysstat", &o, &err), -1);
	assert_non_null(err);
	free(err);
	assert_int_not_equal(access(f->db, F_OK), 0);
}

/* Numbers below a sample (not its timestamp), plus one util per CPU:
 * counted with jansson, independently of the importer's scanner. */
static int64_t expected_samples(json_t *v, int top)
{
	int64_t n = 0;
	const char *k;
	json_t *e;
	size_t i;
	if (json_is_number(v))
		return 1;
	if (json_is_object(v)) {
		json_object_foreach(v, k, e) if (!top || strcmp(k, "timestamp"))
		{
			n += expected_samples(e, 0);
			if (top && !strcmp(k, "cpu-load") && json_is_array(e))
				n += (int64_t)json_array_size(e);
		}
	}
	if (json_is_array(v))
		json_array_foreach(v, i, e) n += expected_samples(e, 0);
	return n;
}

static void real_samples(void **state)
{
	struct fx *f = *state;
	const char *dir = "../shared/samples/sysstat";
	DIR *d = opendir(dir);
	if (!d)
		skip_because("%s is absent", dir);
	struct dirent *de;
	int seen = 0;
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, "sadf-j") && !strstr(de->d_name, "mpstat") &&
		    !strstr(de->d_name, "pidstat"))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		json_error_t je;
		json_t *root = json_load_file(path, 0, &je);
		assert_non_null(root);
		int64_t want = 0;
		size_t i, j;
		json_t *h, *s;
		json_array_foreach(json_object_get(json_object_get(root, "sysstat"), "hosts"), i, h)
		    json_array_foreach(json_object_get(h, "statistics"), j, s) want +=
		    expected_samples(s, 1);
		json_decref(root);
		if (f->conn) {
			sqlite3_close(f->conn);
			f->conn = NULL;
		}
		unlink(f->db);
		char *paths[] = {path}, *err = NULL;
		struct import_opts o = {0};
		if (import_files(f->db, paths, 1, NULL, &o, &err) < 0)
			fail_msg("%s: %s", de->d_name, err);
		if (importfx_int(f, "SELECT count(*) FROM samples") != want)
			fail_msg("%s: %lld samples, want %lld", de->d_name,
				 (long long)importfx_int(f, "SELECT count(*) FROM samples"),
				 (long long)want);
		seen++;
	}
	closedir(d);
	assert_true(seen >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(series_and_times, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(host_and_offset, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(mpstat_local_time, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(bad_inputs, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(real_samples, setup, importfx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
