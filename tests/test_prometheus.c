/*
 * The Prometheus importer on small query results written to a scratch
 * directory: the envelope and the bare result array, labels as the
 * resource, instance as the host without its port, --host, NaN/Inf and bad
 * values counted, vector results, timestamps exact to the microsecond,
 * sniffing, every kind of bad input (one line, nothing imported), a
 * result of more series than a file may hold refused, labels longer than
 * 1 KiB cut and counted, and the
 * real samples in ../shared/samples/prometheus-query-range counted
 * independently with jansson.
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
#include "importers/prometheus.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "tests/importfx.h"
#include "tests/skip.h"

static int setup(void **state)
{
	return importfx_setup(state, "prometheus", "in.json");
}

#define SERIES_A                                                                                   \
	"{\"metric\": {\"__name__\": \"node_cpu_ratio\", \"instance\": \"n1:9100\", \"mode\": "    \
	"\"user\", \"job\": \"node\"}, \"values\": [[1700000000.123, \"0.5\"], [1700000015.123, "  \
	"\"0.25\"]]}"
#define SERIES_B                                                                                   \
	"{\"metric\": {\"__name__\": \"node_cpu_ratio\", \"instance\": \"n2:9100\", \"job\": "     \
	"\"node\", \"mode\": \"user\"}, \"values\": [[1700000000.123, \"1\"]]}"

static const char envelope[] = "{\"status\": \"success\", \"data\": {\"resultType\": \"matrix\","
			       " \"result\": [" SERIES_A ", " SERIES_B "]}}\n";
static const char bare[] = "[" SERIES_A ", " SERIES_B "]";

static void check_ab(struct fx *f)
{
	char buf[128];
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM samples"), 3);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM metrics"), 2);
	/* labels but __name__ and instance, sorted: the same resource for both */
	assert_string_equal(
	    importfx_text(f, "SELECT group_concat(DISTINCT resource) FROM metrics", buf, 128),
	    "job=node,mode=user");
	assert_string_equal(
	    importfx_text(
		f, "SELECT group_concat(host, ' ') FROM (SELECT host FROM metrics ORDER BY host)",
		buf, 128),
	    "n1 n2");
	assert_string_equal(importfx_text(f,
					  "SELECT name || '/' || value_kind || '/' || capacity"
					  " FROM metrics LIMIT 1",
					  buf, 128),
			    "node_cpu_ratio/instant/1.0");
	assert_int_equal(importfx_int(f, "SELECT min(t_ns) FROM samples"), 1700000000123000000LL);
	assert_int_equal(importfx_int(f, "SELECT max(t_ns) FROM samples"), 1700000015123000000LL);
	assert_int_equal(importfx_int(f, "SELECT sum(value) * 4 FROM samples s JOIN metrics m"
					 " ON m.id = s.metric_id WHERE m.host = 'n1'"),
			 3);
	assert_string_equal(importfx_text(f, "SELECT format FROM sources", buf, 128), "prometheus");
	/* two hosts: the source names none */
	assert_int_equal(importfx_int(f, "SELECT host IS NULL FROM sources"), 1);
	assert_int_equal(importfx_int(f, "SELECT samples FROM sources"), 3);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM diagnostics"), 0);
}

static void envelope_matrix(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_fresh(f, envelope, NULL, &err) < 0)
		fail_msg("%s", err);
	check_ab(f);
}

static void bare_array(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_fresh(f, bare, NULL, &err) < 0)
		fail_msg("%s", err);
	check_ab(f);
}

/* Keys sorted (jq -S): "data" first, "resultType" after "result". */
static void sorted_keys(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (importfx_fresh(f,
			   "{\"data\": {\"result\": [" SERIES_A "], \"resultType\": \"matrix\"},"
			   " \"status\": \"success\"}",
			   NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM samples"), 2);
}

static void host_override_and_source_host(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[64];
	struct import_opts o = {.host = "gpu-node-7"};
	assert_int_equal(importfx_fresh(f, envelope, &o, &err), 0);
	assert_string_equal(
	    importfx_text(f, "SELECT group_concat(DISTINCT host) FROM metrics", buf, 64),
	    "gpu-node-7");
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, 64), "gpu-node-7");
	/* --host merges the two instances' series, which have the same labels */
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM metrics"), 1);
	/* one instance, IPv6 with brackets: the source takes its host */
	assert_int_equal(importfx_fresh(f,
					"[{\"metric\": {\"instance\": \"[::1]:9090\"},"
					" \"values\": [[1700000000, \"1\"]]}]",
					NULL, &err),
			 0);
	assert_string_equal(importfx_text(f, "SELECT host FROM sources", buf, 64), "::1");
	assert_string_equal(importfx_text(f, "SELECT name FROM metrics", buf, 64), "value");
	assert_int_equal(importfx_int(f, "SELECT resource IS NULL FROM metrics"), 1);
	/* no port, and a name ending in percent */
	assert_int_equal(
	    importfx_fresh(f,
			   "[{\"metric\": {\"__name__\": \"gpu_util_percent\", \"instance\":"
			   " \"node3\"}, \"values\": [[1700000000, \"97\"]]}]",
			   NULL, &err),
	    0);
	assert_string_equal(
	    importfx_text(f, "SELECT host || ' ' || unit || ' ' || capacity FROM metrics", buf, 64),
	    "node3 % 100.0");
}

static void bad_values_counted(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[64];
	assert_int_equal(
	    importfx_fresh(f,
			   "[{\"metric\": {\"__name__\": \"x\"}, \"values\": [[1700000000, "
			   "\"NaN\"], [1700000001, \"+Inf\"], [1700000002, \"-Inf\"],"
			   " [1700000003, \"abc\"], [1700000004, \"\"], [1700000005],"
			   " [\"bad\", \"1\"], [1700000006, \"2.5e1\"]]}]",
			   NULL, &err),
	    0);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM samples"), 1);
	assert_int_equal(importfx_int(f, "SELECT value FROM samples"), 25);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'NON_FINITE'"),
			 3);
	assert_string_equal(
	    importfx_text(f, "SELECT example FROM diagnostics WHERE code = 'NON_FINITE'", buf, 64),
	    "NaN");
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_VALUE'"),
			 2);
	assert_int_equal(importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_POINT'"),
			 2);
	assert_int_equal(importfx_int(f, "SELECT dropped FROM sources"), 7);
	assert_int_equal(importfx_int(f, "SELECT samples FROM sources"), 1);
}

static void vector_result(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[64];
	if (importfx_fresh(
		f,
		"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		"{\"metric\":{\"__name__\":\"up\",\"instance\":\"a:1\"},\"value\":[1700000000.5,"
		"\"1\"]},"
		"{\"metric\":{\"__name__\":\"up\",\"instance\":\"b:1\"},\"value\":[1700000000.5,"
		"\"0\"]}]}}",
		NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM samples"), 2);
	assert_int_equal(importfx_int(f, "SELECT count(DISTINCT t_ns) FROM samples"), 1);
	assert_int_equal(importfx_int(f, "SELECT min(t_ns) FROM samples"), 1700000000500000000LL);
	assert_string_equal(importfx_text(f, "SELECT group_concat(host) FROM metrics", buf, 64),
			    "a,b");
}

/* Times as Prometheus writes them (milliseconds) and with microseconds,
 * where a double's error would show; a string time to the nanosecond. */
static void exact_times(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts o = {.time_offset_ns = 7, .has_time_offset = 1};
	if (importfx_fresh(
		f,
		"[{\"metric\": {}, \"values\": [[1564308009.804, \"1\"], [1999999999.999999,"
		" \"1\"], [1700000000.000001, \"1\"], [0.001, \"1\"],"
		" [\"1700000000.123456789\", \"1\"]]}]",
		&o, &err) < 0)
		fail_msg("%s", err);
	static const int64_t want[] = {1000000 + 7, 1564308009804000000LL + 7,
				       1700000000000001000LL + 7, 1700000000123456789LL + 7,
				       1999999999999999000LL + 7};
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM samples"), 5);
	for (size_t i = 0; i < 5; i++) {
		char sql[128];
		snprintf(sql, sizeof(sql),
			 "SELECT t_ns FROM samples ORDER BY t_ns LIMIT 1 OFFSET %zu", i);
		assert_int_equal(importfx_int(f, sql), want[i]);
	}
}

static void sniffing(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {envelope, "prometheus"},
	    {bare, "prometheus"},
	    {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"x\"}", "prometheus"},
	    {"{\"traceEvents\": [{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2}]}",
	     "chrome"},
	    {"[{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1}]",
	     "chrome"},
	    {"{\"sysstat\": {\"hosts\": []}}", "sysstat"},
	    {"{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.0\"}\n", NULL},
	    {"{\"status\": 1}", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct importer *imp =
		    importer_sniff((const unsigned char *)cases[i].text, strlen(cases[i].text));
		const char *got = imp ? imp->name : NULL;
		if (cases[i].want ? !got || strcmp(got, cases[i].want)
				  : got && !strcmp(got, "prometheus"))
			fail_msg("case %zu: sniffed as %s", i, got ? got : "nothing");
	}
}

/* Each bad input: one line naming the file, and no trace.db. */
static void bad_inputs(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {"{\"status\": \"success\", \"data\": {\"resultType\": \"matrix\", \"result\": "
	     "[{\"metric\": {}, \"values\": [[1, \"1\"]",
	     "ends inside"},
	    {"{\"status\": \"error\", \"errorType\": \"bad_data\", \"error\": \"parse error at "
	     "char "
	     "3\"}",
	     "status 'error': bad_data: parse error at char 3"},
	    {"{\"status\": \"success\", \"data\": {\"resultType\": \"matrix\", \"result\": []}}",
	     "no series"},
	    {"[]", "no series"},
	    {"{\"status\": \"success\", \"data\": {\"resultType\": \"scalar\", \"result\": [1, "
	     "\"2\"]}}",
	     "resultType 'scalar'"},
	    {"[{\"metric\": {}, \"values\": [[1, tru]]}]", "not valid JSON"},
	    {"[{\"metric\": {}, \"values\": [[1, \"1\"]]}] x", "after the end"},
	    {"[{\"metric\": {}, \"values\": [[1, \"1\"]]}}", "brackets do not match"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *err = NULL;
		importfx_reset(f);
		importfx_write(f->in, cases[i].text);
		char *paths[] = {f->in};
		struct import_opts o = {0};
		assert_int_equal(import_files(f->db, paths, 1, "prometheus", &o, &err), -1);
		assert_non_null(err);
		if (!strstr(err, cases[i].want) || !strstr(err, f->in) || strchr(err, '\n'))
			fail_msg("case %zu: '%s'", i, err);
		assert_int_not_equal(access(f->db, F_OK), 0);
		free(err);
	}
	/* not JSON, and a binary file, forced to prometheus */
	static const char *const junk[] = {"hello world\n", "{\"status\"\0\x01\x02\xff", ""};
	static const size_t junk_len[] = {12, 14, 0};
	for (size_t i = 0; i < 3; i++) {
		char *err = NULL;
		importfx_reset(f);
		FILE *fp = fopen(f->in, "wb");
		fwrite(junk[i], 1, junk_len[i], fp);
		fclose(fp);
		char *paths[] = {f->in};
		struct import_opts o = {0};
		assert_int_equal(import_files(f->db, paths, 1, "prometheus", &o, &err), -1);
		assert_non_null(err);
		if (!strstr(err, f->in) || strchr(err, '\n'))
			fail_msg("junk %zu: '%s'", i, err);
		free(err);
		assert_int_not_equal(access(f->db, F_OK), 0);
	}
}

/* A result of n series, each of its own "cpu" label. */
static char *many_series(int n)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_adds(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[");
	for (int i = 0; i < n; i++)
		sbuf_addf(
		    &b,
		    "%s{\"metric\":{\"__name__\":\"m\",\"instance\":\"h:9100\",\"cpu\":\"%d\"},"
		    "\"values\":[[1700000000,\"1\"]]}",
		    i ? "," : "", i);
	sbuf_adds(&b, "]}}");
	return sbuf_detach(&b);
}

/* PROM_SERIES_MAX series import; one more is refused, with what to
 * narrow, and nothing is imported. */
static void too_many_series(void **state)
{
	struct fx *f = *state;
	char *err = NULL, *text = many_series(PROM_SERIES_MAX);
	if (importfx_fresh(f, text, NULL, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(importfx_int(f, "SELECT count(*) FROM metrics"), PROM_SERIES_MAX);
	free(text);
	text = many_series(PROM_SERIES_MAX + 1);
	assert_int_equal(importfx_fresh(f, text, NULL, &err), -1);
	char *want = xasprintf("%s: more than %d series, the most one file stores: narrow the"
			       " query that wrote it",
			       f->in, PROM_SERIES_MAX);
	if (strncmp(err, want, strlen(want)) || strchr(err, '\n'))
		fail_msg("'%s'", err);
	assert_int_not_equal(access(f->db, F_OK), 0);
	free(want);
	free(err);
	free(text);
}

/* A name, a host and a label of 2 MB, a label name of 5000 bytes: each
 * cut to 1 KiB at a character's boundary and an ellipsis, counted. */
static void long_labels_cut(void **state)
{
	struct fx *f = *state;
	char *err = NULL, buf[256];
	size_t n = 2 << 20;
	char *big = xmalloc(n + 1), *key = xmalloc(5001);
	for (size_t i = 0; i < n; i += 2)
		memcpy(big + i, "\xc3\xa9", 2); /* é: a cut could split it */
	big[n] = '\0';
	memset(key, 'k', 5000);
	key[5000] = '\0';
	char *text =
	    xasprintf("[{\"metric\": {\"__name__\": \"n%s\", \"instance\": \"h%s:9100\","
		      " \"%s\": \"v\", \"dev\": \"%s\"}, \"values\": [[1700000000, \"1\"]]}]",
		      big, big, key, big);
	if (importfx_fresh(f, text, NULL, &err) < 0)
		fail_msg("%s", err);
	/* 'n' and 511 é: 1023 bytes; the ellipsis 3 */
	assert_int_equal(importfx_int(f, "SELECT length(CAST(name AS BLOB)) FROM metrics"), 1026);
	assert_string_equal(importfx_text(f, "SELECT substr(name, -2) FROM metrics", buf, 256),
			    "\xc3\xa9\xe2\x80\xa6");
	assert_int_equal(importfx_int(f, "SELECT length(CAST(host AS BLOB)) FROM metrics"), 1026);
	assert_int_equal(importfx_int(f, "SELECT length(CAST(resource AS BLOB)) FROM metrics"),
			 203);
	assert_int_equal(
	    importfx_int(f, "SELECT count FROM diagnostics WHERE code = 'LONG_STRING'"), 4);
	assert_string_equal(
	    importfx_text(f, "SELECT example FROM diagnostics WHERE code = 'LONG_STRING'", buf,
			  256),
	    "label __name__ of 2097153 bytes");
	assert_int_equal(
	    importfx_int(f, "SELECT max(length(CAST(example AS BLOB))) FROM diagnostics"), 203);
	free(text);
	free(big);
	free(key);
}

/* Points that are [number, string of a finite number], counted with
 * jansson, independently of the importer's scanner. */
static int64_t expected_samples(json_t *root)
{
	json_t *result =
	    json_is_array(root) ? root : json_object_get(json_object_get(root, "data"), "result");
	int64_t n = 0;
	size_t i, j;
	json_t *s, *p;
	json_array_foreach(result, i, s)
	{
		json_t *values = json_object_get(s, "values");
		json_array_foreach(values, j, p)
		{
			const char *v = json_string_value(json_array_get(p, 1));
			char *end;
			double d = v ? strtod(v, &end) : 0;
			if (json_is_number(json_array_get(p, 0)) && v && *v && !*end && d == d &&
			    d - d == 0)
				n++;
		}
	}
	return n;
}

static void real_samples(void **state)
{
	struct fx *f = *state;
	const char *dir = "../shared/samples/prometheus-query-range";
	DIR *d = opendir(dir);
	if (!d)
		skip_because("%s is absent", dir);
	struct dirent *de;
	int seen = 0;
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, ".json"))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		json_error_t je;
		json_t *root = json_load_file(path, 0, &je);
		assert_non_null(root);
		int64_t want = expected_samples(root);
		json_decref(root);
		importfx_reset(f);
		char *paths[] = {path}, *err = NULL;
		struct import_opts o = {0};
		if (import_files(f->db, paths, 1, NULL, &o, &err) < 0)
			fail_msg("%s: %s", de->d_name, err);
		if (importfx_int(f, "SELECT count(*) FROM samples") != want)
			fail_msg("%s: %lld samples, want %lld", de->d_name,
				 (long long)importfx_int(f, "SELECT count(*) FROM samples"),
				 (long long)want);
		assert_int_equal(
		    importfx_int(f, "SELECT count(*) FROM metrics WHERE host LIKE '%:%'"), 0);
		seen++;
	}
	closedir(d);
	if (!seen)
		skip_because("%s holds no sample", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(envelope_matrix, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(bare_array, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(sorted_keys, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(host_override_and_source_host, setup,
					    importfx_teardown),
	    cmocka_unit_test_setup_teardown(bad_values_counted, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(vector_result, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(exact_times, setup, importfx_teardown),
	    cmocka_unit_test(sniffing),
	    cmocka_unit_test_setup_teardown(too_many_series, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(long_labels_cut, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(bad_inputs, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(real_samples, setup, importfx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
