/*
 * Unit tests of the nvidia-smi CSV importer (importers/nvsmi.c): each test
 * writes a small CSV to a scratch directory, imports it into a fresh
 * trace.db there with nvsmi_import inside one store transaction (as
 * import_files does), and reads the result back with SQL.  The real
 * captures under GRADEML_SAMPLES (default ../shared/samples, beside the
 * project) are imported too when they are there, and their sample counts
 * checked against counts made here from the CSV text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "importers/importer.h"
#include "importers/input.h"
#include "importers/nvsmi.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"
#include "tests/skip.h"

#define MAX_FILES 16

struct fx {
	char *dir;
	char *db;
	char *files[MAX_FILES];
	int nfiles;
	sqlite3 *conn; /* read-only connection to db, opened lazily */
	struct import_opts o;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/grademl-test-nvsmi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		free(tmpl);
		free(f);
		return -1;
	}
	f->dir = tmpl;
	f->db = xasprintf("%s/trace.db", f->dir);
	*state = f;
	return 0;
}

static void close_conn(struct fx *f)
{
	if (f->conn) {
		sqlite3_close(f->conn);
		f->conn = NULL;
	}
}

static int teardown(void **state)
{
	struct fx *f = *state;
	close_conn(f);
	static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *p = xasprintf("%s%s", f->db, suffixes[i]);
		unlink(p);
		free(p);
	}
	for (int i = 0; i < f->nfiles; i++) {
		unlink(f->files[i]);
		free(f->files[i]);
	}
	rmdir(f->dir);
	free(f->db);
	free(f->dir);
	free(f);
	return 0;
}

static const char *write_file(struct fx *f, const char *name, const char *text, size_t len)
{
	assert_true(f->nfiles < MAX_FILES);
	char *path = xasprintf("%s/%s", f->dir, name);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
	f->files[f->nfiles++] = path;
	return path;
}

/* One import of path into f->db, as import_files runs one file: a
 * transaction committed on success, rolled back on failure. */
static int import_path(struct fx *f, const char *path, char **err)
{
	struct store *st = NULL;
	struct input *in = NULL;
	int rc = -1;
	close_conn(f);
	*err = NULL;
	if (store_open(f->db, STORE_WRITE, &st, err) < 0)
		return -1;
	if (store_begin(st, err) < 0 || input_open(path, &in, err) < 0 ||
	    nvsmi_import(in, st, &f->o, err) < 0 || store_commit(st, err) < 0)
		goto out;
	rc = 0;
out:
	input_close(in);
	if (rc < 0)
		store_rollback(st);
	store_close(st);
	return rc;
}

static void import_ok(struct fx *f, const char *name, const char *csv)
{
	const char *path = write_file(f, name, csv, strlen(csv));
	char *err = NULL;
	int rc = import_path(f, path, &err);
	if (rc != 0)
		print_error("import of %s failed: %s\n", name, err ? err : "(no message)");
	free(err);
	assert_int_equal(rc, 0);
}

/* The import of text must fail with a message that contains want, and
 * leave no trace.db behind. */
static void import_fails(struct fx *f, const char *name, const char *text, size_t len,
			 const char *want)
{
	const char *path = write_file(f, name, text, len);
	char *err = NULL;
	assert_int_equal(import_path(f, path, &err), -1);
	assert_non_null(err);
	if (!strstr(err, want))
		print_error("error: %s\n  want: %s\n", err, want);
	assert_non_null(strstr(err, want));
	assert_null(strchr(err, '\n'));
	assert_int_not_equal(access(f->db, F_OK), 0);
	free(err);
}

static sqlite3 *conn(struct fx *f)
{
	if (!f->conn)
		assert_int_equal(sqlite3_open_v2(f->db, &f->conn, SQLITE_OPEN_READONLY, NULL),
				 SQLITE_OK);
	return f->conn;
}

static sqlite3_stmt *prepare(struct fx *f, const char *fmt, va_list ap)
{
	char *sql = xvasprintf(fmt, ap);
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(conn(f), sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		print_error("SQL error in '%s': %s\n", sql, sqlite3_errmsg(conn(f)));
	free(sql);
	assert_int_equal(rc, SQLITE_OK);
	return s;
}

static int64_t q_int(struct fx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t q_int(struct fx *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sqlite3_stmt *s = prepare(f, fmt, ap);
	va_end(ap);
	int rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		print_error("no row for: %s\n", sqlite3_sql(s));
	assert_int_equal(rc, SQLITE_ROW);
	if (sqlite3_column_type(s, 0) == SQLITE_NULL)
		print_error("NULL for: %s\n", sqlite3_sql(s));
	assert_int_not_equal(sqlite3_column_type(s, 0), SQLITE_NULL);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static double q_real(struct fx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static double q_real(struct fx *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sqlite3_stmt *s = prepare(f, fmt, ap);
	va_end(ap);
	int rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		print_error("no row for: %s\n", sqlite3_sql(s));
	assert_int_equal(rc, SQLITE_ROW);
	double v = sqlite3_column_double(s, 0);
	sqlite3_finalize(s);
	return v;
}

static char *q_text(struct fx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *q_text(struct fx *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sqlite3_stmt *s = prepare(f, fmt, ap);
	va_end(ap);
	char *v = NULL;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v;
}

static void assert_text(struct fx *f, const char *want, const char *sql)
{
	char *got = q_text(f, "%s", sql);
	if (!got || strcmp(got, want))
		print_error("%s\n  want: %s\n  got:  %s\n", sql, want, got ? got : "(null)");
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static int64_t diag_count(struct fx *f, const char *code)
{
	return q_int(f, "SELECT coalesce(sum(count), 0) FROM diagnostics WHERE code = '%s'", code);
}

/* The value of series name on resource at t_ns. */
static double value_at(struct fx *f, const char *resource, const char *name, int64_t t)
{
	return q_real(f,
		      "SELECT s.value FROM samples s JOIN metrics m ON m.id = s.metric_id"
		      " WHERE m.resource = '%s' AND m.name = '%s' AND s.t_ns = %lld",
		      resource, name, (long long)t);
}

static double capacity_of(struct fx *f, const char *resource, const char *name)
{
	return q_real(f, "SELECT capacity FROM metrics WHERE resource = '%s' AND name = '%s'",
		      resource, name);
}

#define T0  1710511079791000000LL /* 2024/03/15 13:57:59.791 UTC */
#define SEC 1000000000LL

/* --format=csv: units in the header and in the values, with the index. */
static const char UNITS[] =
    "timestamp, index, name, pci.bus_id, utilization.gpu [%], memory.total [MiB], "
    "memory.used [MiB], power.draw [W], power.limit [W], enforced.power.limit [W], "
    "clocks.sm [MHz], temperature.gpu, pstate\n"
    "2024/03/15 13:57:59.791, 0, NVIDIA H100 80GB HBM3, 00000000:0A:00.0, 35 %, 81559 MiB, "
    "1024 MiB, 120.50 W, 700.00 W, 650.00 W, 1980 MHz, 41, P0\n"
    "2024/03/15 13:57:59.791, 1, NVIDIA H100 80GB HBM3, 00000000:0B:00.0, 0 %, 81559 MiB, "
    "3 MiB, 69.85 W, 700.00 W, 650.00 W, 345 MHz, 38, P8\n"
    "2024/03/15 13:58:00.791, 0, NVIDIA H100 80GB HBM3, 00000000:0A:00.0, 97 %, 81559 MiB, "
    "40960 MiB, 640.25 W, 700.00 W, 650.00 W, 1980 MHz, 57, P0\n"
    "2024/03/15 13:58:00.791, 1, NVIDIA H100 80GB HBM3, 00000000:0B:00.0, 1 %, 81559 MiB, "
    "3 MiB, 70.10 W, 700.00 W, 650.00 W, 345 MHz, 38, P8\n";

static void test_units(void **state)
{
	struct fx *f = *state;
	import_ok(f, "units.csv", UNITS);
	/* 9 numeric columns (pstate included) x 4 rows */
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 36);
	assert_int_equal(q_int(f, "SELECT samples FROM sources"), 36);
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics"), 18);
	assert_text(f, "nvidia-smi", "SELECT format FROM sources");
	assert_text(f, "wallclock", "SELECT anchor FROM sources");
	assert_text(f, "gpu0,gpu1",
		    "SELECT group_concat(r) FROM (SELECT DISTINCT resource r"
		    " FROM metrics ORDER BY r)");
	assert_text(f, "%", "SELECT unit FROM metrics WHERE name = 'utilization.gpu' LIMIT 1");
	assert_text(f, "MiB", "SELECT unit FROM metrics WHERE name = 'memory.used' LIMIT 1");
	assert_text(f, "W", "SELECT unit FROM metrics WHERE name = 'power.draw' LIMIT 1");
	assert_text(f, "MHz", "SELECT unit FROM metrics WHERE name = 'clocks.sm' LIMIT 1");
	assert_text(f, "C", "SELECT unit FROM metrics WHERE name = 'temperature.gpu' LIMIT 1");
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics WHERE value_kind != 'instant'"), 0);
	assert_true(value_at(f, "gpu0", "utilization.gpu", T0 + SEC) == 97);
	assert_true(value_at(f, "gpu1", "memory.used", T0) == 3);
	assert_true(value_at(f, "gpu0", "power.draw", T0) == 120.5);
	assert_true(value_at(f, "gpu1", "pstate", T0 + SEC) == 8);
	assert_true(value_at(f, "gpu0", "temperature.gpu", T0 + SEC) == 57);
	/* capacities */
	assert_true(capacity_of(f, "gpu0", "utilization.gpu") == 100);
	assert_true(capacity_of(f, "gpu1", "memory.used") == 81559);
	assert_true(capacity_of(f, "gpu0", "power.draw") == 650); /* enforced wins */
	assert_true(capacity_of(f, "gpu0", "clocks.sm") == 0);
	/* names and bus ids in the source's attrs; driver columns are none here */
	assert_text(f, "NVIDIA H100 80GB HBM3",
		    "SELECT json_extract(attrs, '$.gpus.gpu1.name') FROM sources");
	assert_text(f, "00000000:0B:00.0",
		    "SELECT json_extract(attrs, '$.gpus.gpu1.\"pci.bus_id\"') FROM sources");
	assert_int_equal(diag_count(f, "IGNORED_COLUMN"), 0);
	assert_int_equal(diag_count(f, "BAD_ROW"), 0);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 0);
}

/* --format=csv,nounits as VirtualClient runs it: the header keeps its
 * units, the values have none; power.limit only. */
static void test_nounits(void **state)
{
	struct fx *f = *state;
	import_ok(f, "nounits.csv",
		  "timestamp, index, driver_version, utilization.gpu [%], memory.free [MiB], "
		  "memory.total [MiB], power.draw [W], power.limit [W]\r\n"
		  "2024/02/29 23:59:59.5, 0, 550.54.15, 12, 14917, 15360, 9.31, 70.00\r\n");
	int64_t t = 1709251199500000000LL;
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 5);
	assert_true(value_at(f, "gpu0", "utilization.gpu", t) == 12);
	assert_true(value_at(f, "gpu0", "power.draw", t) == 9.31);
	assert_true(capacity_of(f, "gpu0", "memory.free") == 15360);
	assert_true(capacity_of(f, "gpu0", "power.draw") == 70);
	assert_text(f, "%", "SELECT unit FROM metrics WHERE name = 'utilization.gpu'");
	assert_int_equal(diag_count(f, "IGNORED_COLUMN"), 1);
	assert_text(f, "driver_version",
		    "SELECT example FROM diagnostics WHERE code = 'IGNORED_COLUMN'");
}

/* A header without brackets at all: the units come from the field names. */
static void test_header_without_units(void **state)
{
	struct fx *f = *state;
	import_ok(f, "bare.csv",
		  "timestamp,index,utilization.gpu,memory.used,power.draw,clocks.sm,"
		  "fan.speed,pcie.link.width.current,compute_mode\n"
		  "2024/03/15 13:57:59.791,0,50,100,200.5,1400,30,16,Default\n");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 6);
	assert_text(f, "%", "SELECT unit FROM metrics WHERE name = 'utilization.gpu'");
	assert_text(f, "MiB", "SELECT unit FROM metrics WHERE name = 'memory.used'");
	assert_text(f, "W", "SELECT unit FROM metrics WHERE name = 'power.draw'");
	assert_text(f, "MHz", "SELECT unit FROM metrics WHERE name = 'clocks.sm'");
	assert_text(f, "%", "SELECT unit FROM metrics WHERE name = 'fan.speed'");
	assert_int_equal(
	    q_int(f, "SELECT unit IS NULL FROM metrics WHERE name = 'pcie.link.width.current'"), 1);
	assert_true(capacity_of(f, "gpu0", "fan.speed") == 100);
	assert_true(capacity_of(f, "gpu0", "memory.used") == 0); /* no memory.total */
	assert_int_equal(diag_count(f, "IGNORED_COLUMN"), 1);
}

/* No index: the bus ids number the GPUs in order of first appearance. */
static void test_bus_id_numbering(void **state)
{
	struct fx *f = *state;
	import_ok(f, "bus.csv",
		  "timestamp, name, pci.bus_id, utilization.gpu [%]\n"
		  "2023/01/11 00:06:01.255, Tesla T4, 00000003:00:00.0, 10\n"
		  "2023/01/11 00:06:01.261, Tesla T4, 00000001:00:00.0, 20\n"
		  "2023/01/11 00:06:02.255, Tesla T4, 00000003:00:00.0, 30\n"
		  "2023/01/11 00:06:02.261, Tesla T4, 00000001:00:00.0, 40\n");
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples s JOIN metrics m ON m.id = "
				  "s.metric_id WHERE m.resource = 'gpu0 (bus 00000003:00:00.0)'"),
			 2);
	assert_int_equal(q_int(f, "SELECT sum(s.value) FROM samples s JOIN metrics m ON m.id = "
				  "s.metric_id WHERE m.resource = 'gpu1 (bus 00000001:00:00.0)'"),
			 60);
	assert_text(f, "Tesla T4",
		    "SELECT json_extract(attrs, '$.gpus.\"gpu1 (bus 00000001:00:00.0)\".name')"
		    " FROM sources");
}

/* Neither index nor bus id: the position among rows of one timestamp. */
static void test_row_order(void **state)
{
	struct fx *f = *state;
	import_ok(f, "order.csv",
		  "timestamp, utilization.gpu [%], memory.used [MiB]\n"
		  "2024/03/15 13:57:59.791, 1, 10\n"
		  "2024/03/15 13:57:59.791, 2, 20\n"
		  "2024/03/15 13:57:59.791, 3, 30\n"
		  "2024/03/15 13:58:00.791, 4, 40\n"
		  "2024/03/15 13:58:00.791, 5, 50\n");
	assert_int_equal(q_int(f, "SELECT count(DISTINCT resource) FROM metrics"), 3);
	assert_true(value_at(f, "gpu0 (row order)", "utilization.gpu", T0 + SEC) == 4);
	assert_true(value_at(f, "gpu1 (row order)", "memory.used", T0 + SEC) == 50);
	assert_true(value_at(f, "gpu2 (row order)", "memory.used", T0) == 30);
}

/* Unavailable values are skipped and counted; nothing is dropped. */
static void test_na_values(void **state)
{
	struct fx *f = *state;
	import_ok(f, "na.csv",
		  "timestamp, index, temperature.memory, power.draw [W], fan.speed [%], "
		  "clocks.sm [MHz], utilization.gpu [%]\n"
		  "2024/03/15 13:57:59.791, 0, N/A, [N/A], [Not Supported], 300, 5\n"
		  "2024/03/15 13:58:00.791, 0, 35, [Unknown Error], , 300, 6\n");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 5);
	assert_int_equal(diag_count(f, "NA_VALUE"), 5);
	assert_text(f, "line 2: temperature.memory = N/A",
		    "SELECT example FROM diagnostics WHERE code = 'NA_VALUE'");
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 0);
}

/* A malformed row is skipped whole and counted; the others import. */
static void test_bad_rows(void **state)
{
	struct fx *f = *state;
	import_ok(f, "bad.csv",
		  "timestamp, index, utilization.gpu [%], memory.used [MiB]\n"
		  "2024/03/15 13:57:59.791, 0, 1, 10\n"
		  "2024/03/15 13:57:59.791, 1, 2\n"
		  "2024/03/15 13:58:00.791, 0, lots, 10\n"
		  "2024/13/15 13:58:00.791, 0, 3, 10\n"
		  "2024/03/15 13:58:00.791, -1, 3, 10\n"
		  "2024/03/15 13:58:00.791, 0, 4 MiB, 10\n"
		  "2024/03/15 13:58:01.791, 0, 5, 11\n");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 4);
	assert_int_equal(diag_count(f, "BAD_ROW"), 5);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 5);
	assert_text(f, "line 3: expected 4 cells as in the header, found 3",
		    "SELECT example FROM diagnostics WHERE code = 'BAD_ROW'");
	assert_true(value_at(f, "gpu0", "memory.used", T0 + 2 * SEC) == 11);
}

/* Runs appended to one file repeat the header: skipped and counted. */
static void test_repeated_header(void **state)
{
	struct fx *f = *state;
	import_ok(f, "rep.csv",
		  "timestamp, index, utilization.gpu [%]\n"
		  "2024/03/15 13:57:59.791, 0, 1\n"
		  "timestamp, index, utilization.gpu [%]\n"
		  "2024/03/15 13:58:00.791, 0, 2\n");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 2);
	assert_int_equal(diag_count(f, "REPEATED_HEADER"), 1);
	assert_int_equal(diag_count(f, "BAD_ROW"), 0);
}

static void test_fatal_inputs(void **state)
{
	struct fx *f = *state;
	static const char noheader[] = "2024/03/15 13:57:59.791, 0, 35, 1024\n";
	import_fails(f, "noheader.csv", noheader, strlen(noheader),
		     "noheader.csv:1: a data row where the header should be");
	static const char nots[] = "index, utilization.gpu [%]\n0, 35\n";
	import_fails(f, "nots.csv", nots, strlen(nots), "nots.csv:1: not an nvidia-smi");
	static const char text[] = "\n\nhello, world\nmore\n";
	import_fails(f, "text.csv", text, strlen(text), "text.csv:3: not an nvidia-smi");
	static const char bin[] = "timestamp, index, utilization.gpu [%]\n2024\0\x01\x02";
	import_fails(f, "bin.csv", bin, sizeof(bin) - 1, "bin.csv:2: a NUL byte");
	import_fails(f, "empty.csv", "", 0, "empty.csv");
	static const char blank[] = "\n  \n";
	import_fails(f, "blank.csv", blank, strlen(blank), "blank.csv:2: no header line");
	struct sbuf wide = SBUF_INIT;
	sbuf_adds(&wide, "timestamp");
	for (int i = 0; i < 5000; i++)
		sbuf_adds(&wide, ", utilization.gpu [%]");
	import_fails(f, "wide.csv", wide.buf, wide.len, "wide.csv:1: a header of 5001 columns");
	sbuf_release(&wide);
	static const char only[] = "timestamp, index, utilization.gpu [%]\n";
	import_fails(f, "only.csv", only, strlen(only), "only.csv:1: a header but no data rows");
	static const char allbad[] = "timestamp, index, utilization.gpu [%]\n"
				     "2024/03/15 13:57:59.791, 0\n";
	import_fails(f, "allbad.csv", allbad, strlen(allbad),
		     "allbad.csv:2: expected 3 cells as in the header, found 2");
}

static void test_host_and_time_offset(void **state)
{
	struct fx *f = *state;
	f->o.host = "node-7";
	f->o.has_time_offset = 1;
	f->o.time_offset_ns = -2 * SEC;
	import_ok(f, "host.csv",
		  "timestamp, index, utilization.gpu [%]\n"
		  "2024/03/15 13:57:59.791, 0, 1\n");
	assert_text(f, "node-7", "SELECT host FROM metrics");
	assert_text(f, "node-7", "SELECT host FROM sources");
	assert_int_equal(q_int(f, "SELECT t_ns FROM samples"), T0 - 2 * SEC);
	assert_int_equal(q_int(f, "SELECT time_offset_ns FROM sources"), -2 * SEC);
}

static void test_gzip(void **state)
{
	struct fx *f = *state;
	char *path = xasprintf("%s/gz.csv.gz", f->dir);
	f->files[f->nfiles++] = path;
	gzFile gz = gzopen(path, "wb");
	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, UNITS, (unsigned)strlen(UNITS)), (int)strlen(UNITS));
	assert_int_equal(gzclose(gz), Z_OK);
	char *err = NULL;
	int rc = import_path(f, path, &err);
	if (rc)
		print_error("%s\n", err);
	free(err);
	assert_int_equal(rc, 0);
	assert_text(f, "gzip", "SELECT compression FROM sources");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 36);
}

/* Field names are bytes from the file: stored as valid UTF-8. */
static void test_hostile_names(void **state)
{
	struct fx *f = *state;
	import_ok(f, "hostile.csv",
		  "timestamp, index, \x1b[31mutil\xff\xfe [%\xc3], temperature.\x1b]0;x\x07\n"
		  "2024/03/15 13:57:59.791, 0, 1, 2\n");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 2);
	sqlite3_stmt *s = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(conn(f), "SELECT name, unit FROM metrics", -1, &s, NULL), SQLITE_OK);
	int rows = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		for (int c = 0; c < 2; c++) {
			const char *v = (const char *)sqlite3_column_text(s, c);
			if (v)
				assert_true(text_utf8_valid(v, strlen(v)));
		}
		rows++;
	}
	sqlite3_finalize(s);
	assert_int_equal(rows, 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics WHERE name LIKE '%%util%%'"), 1);
}

static void test_sniff(void **state)
{
	(void)state;
#define SNIFF(s) nvsmi_sniff((const unsigned char *)(s), strlen(s))
	assert_int_equal(SNIFF(UNITS), 90);
	assert_int_equal(SNIFF("\xef\xbb\xbftimestamp, pci.bus_id, memory.used [MiB]\n"), 90);
	assert_int_equal(SNIFF("timestamp,utilization.gpu\n1,2\n"), 90);
	assert_int_equal(SNIFF("2024/03/15 13:57:59.791, 0, NVIDIA H100, 35 %\n"), 30);
	assert_int_equal(SNIFF("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"timestamp\"}]}"), 0);
	assert_int_equal(SNIFF("{\"sysstat\": {\"hosts\": [{\"nodename\": \"a\", \"statistics\": "
			       "[{\"timestamp\": {\"date\": \"2024-01-01\"}}]}]}}"),
			 0);
	assert_int_equal(SNIFF("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5\"}\n"
			       "{\"Event\":\"SparkListenerJobStart\",\"Submission Time\":1}\n"),
			 0);
	assert_int_equal(SNIFF("timestamp,container,cpu_percent (%),name\n"), 0);
	assert_int_equal(SNIFF("timestamp, index, name\n"), 0);
	assert_int_equal(SNIFF("2024-05-13 13:25:41,  7.1%,394,47.2,  1.08 W\n"), 0);
	assert_int_equal(SNIFF(""), 0);
	/* a field cut by the end of the buffer is not looked at */
	assert_int_equal(SNIFF("timestamp, utilization.gp"), 0);
	const struct importer *imp = importer_find("nvidia-smi");
	if (imp) /* once registered, content sniffing picks it */
		assert_ptr_equal(importer_sniff((const unsigned char *)UNITS, strlen(UNITS)), imp);
#undef SNIFF
}

/* ---- the real captures ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	struct sbuf sb = SBUF_INIT;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		sbuf_add(&sb, buf, n);
	fclose(fp);
	*len = sb.len;
	return sbuf_detach(&sb);
}

/* Splits one CSV line (not NUL-terminated, n bytes) at ',' into trimmed
 * owned cells; returns the count. */
static size_t cells_of(const char *s, size_t n, char ***out)
{
	size_t count = 0, alloc = 0;
	char **v = NULL;
	size_t i = 0;
	for (;;) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		size_t a = i, b = j;
		while (a < b && (s[a] == ' ' || s[a] == '\r'))
			a++;
		while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\r'))
			b--;
		XGROW(v, count + 1, alloc);
		v[count++] = xstrndup(s + a, b - a);
		if (j == n)
			break;
		i = j + 1;
	}
	*out = v;
	return count;
}

static void cells_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int unavailable(const char *v)
{
	size_t n = strlen(v);
	return !n || !strcmp(v, "N/A") || (v[0] == '[' && v[n - 1] == ']');
}

static const char *samples_dir(void)
{
	const char *d = getenv("GRADEML_SAMPLES");
	return d && *d ? d : "../shared/samples";
}

/* The VirtualClient CSVs: every column but timestamp, index, name,
 * pci.bus_id and driver_version is a number (pstate "P8" included). */
static void test_sample_csvs(void **state)
{
	struct fx *f = *state;
	static const char *const files[] = {
	    "microsoft__VirtualClient__query-gpu-1xH100.csv",
	    "microsoft__VirtualClient__query-gpu-1xT4-NA.csv",
	    "microsoft__VirtualClient__query-gpu-4xT4.csv",
	};
	static const char *const not_series[] = {"timestamp", "index", "name", "pci.bus_id",
						 "driver_version"};
	int found = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *path = xasprintf("%s/nvidia-smi-csv/%s", samples_dir(), files[i]);
		size_t len;
		char *text = slurp(path, &len);
		if (!text) {
			free(path);
			continue;
		}
		found++;
		assert_int_equal(nvsmi_sniff((const unsigned char *)text, len), 90);
		/* count here: non-unavailable cells of the numeric columns */
		int64_t want = 0, rows = 0, na = 0;
		char **hdr = NULL;
		size_t nh = 0;
		const char *p = text, *end = text + len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			char **c;
			size_t nc = cells_of(p, n, &c);
			if (!hdr) {
				hdr = c;
				nh = nc;
			} else {
				assert_int_equal(nc, nh);
				rows++;
				for (size_t k = 0; k < nc; k++) {
					int skip = 0;
					for (size_t s = 0; s < 5; s++)
						skip |= !strncmp(hdr[k], not_series[s],
								 strlen(not_series[s])) &&
							(hdr[k][strlen(not_series[s])] == '\0');
					if (skip)
						continue;
					if (unavailable(c[k]))
						na++;
					else
						want++;
				}
				cells_free(c, nc);
			}
			p += n + 1;
		}
		cells_free(hdr, nh);
		free(text);
		char *err = NULL;
		close_conn(f);
		unlink(f->db);
		int rc = import_path(f, path, &err);
		if (rc)
			print_error("%s\n", err);
		free(err);
		assert_int_equal(rc, 0);
		print_message("%s: %lld rows, %lld samples, %lld unavailable\n", files[i],
			      (long long)rows, (long long)want, (long long)na);
		assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), want);
		assert_int_equal(q_int(f, "SELECT samples FROM sources"), want);
		assert_int_equal(diag_count(f, "NA_VALUE"), na);
		assert_int_equal(diag_count(f, "BAD_ROW"), 0);
		assert_int_equal(diag_count(f, "IGNORED_COLUMN"), 1); /* driver_version */
		free(path);
	}
	if (!found)
		skip_because("%s/nvidia-smi-csv holds none of the captures", samples_dir());
}

/* The nvidia_gpu_exporter captures are not CSV files (sections of
 * nvidia-smi output under '#' banners) and are not claimed; each has two
 * query-gpu CSV sections (idle, load) of 200+ fields, cut out and imported
 * here.  Count: the cells of columns with a unit in brackets that are not
 * unavailable must all be samples. */
static void test_exporter_captures(void **state)
{
	struct fx *f = *state;
	static const char *const files[] = {
	    "utkuozdemir__nvidia_gpu_exporter__linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt",
	    "utkuozdemir__nvidia_gpu_exporter__linux-x86_64__nvidia-l40s__595.80.txt",
	};
	int found = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *path = xasprintf("%s/nvidia-smi-csv/%s", samples_dir(), files[i]);
		size_t len;
		char *text = slurp(path, &len);
		free(path);
		if (!text)
			continue;
		found++;
		assert_int_equal(nvsmi_sniff((const unsigned char *)text, len), 0);
		int sections = 0;
		const char *at = text;
		while ((at = strstr(at, ":: query-gpu (csv"))) {
			/* skip the banner's '#' lines to the header */
			const char *p = strchr(at, '\n') + 1;
			while (*p == '#')
				p = strchr(p, '\n') + 1;
			const char *e = strstr(p, "\n\n");
			assert_non_null(e);
			at = e;
			sections++;
			char *csv = xstrndup(p, (size_t)(e - p + 1));
			char *name = xasprintf("capture%zu-%d.csv", i, sections);
			const char *file = write_file(f, name, csv, strlen(csv));
			free(name);
			/* count here */
			char **hdr = NULL, **c = NULL;
			const char *nl = strchr(csv, '\n');
			size_t nh = cells_of(csv, (size_t)(nl - csv), &hdr);
			int64_t want = 0;
			struct sbuf names = SBUF_INIT;
			for (const char *r = nl + 1; *r; r = strchr(r, '\n') + 1) {
				size_t nc = cells_of(r, (size_t)(strchr(r, '\n') - r), &c);
				assert_int_equal(nc, nh);
				for (size_t k = 0; k < nc; k++) {
					const char *br = strstr(hdr[k], " [");
					if (!br || unavailable(c[k]))
						continue;
					want++;
				}
				cells_free(c, nc);
			}
			for (size_t k = 0; k < nh; k++) {
				const char *br = strstr(hdr[k], " [");
				if (br)
					sbuf_addf(&names, "%s'%.*s'", names.len ? "," : "",
						  (int)(br - hdr[k]), hdr[k]);
			}
			close_conn(f);
			unlink(f->db);
			char *err = NULL;
			int rc = import_path(f, file, &err);
			if (rc)
				print_error("%s\n", err);
			free(err);
			assert_int_equal(rc, 0);
			int64_t got = q_int(f,
					    "SELECT count(*) FROM samples s JOIN metrics m ON m.id"
					    " = s.metric_id WHERE m.name IN (%s)",
					    names.buf);
			int64_t all = q_int(f, "SELECT count(*) FROM samples");
			print_message("%s section %d: %zu fields, %lld samples (%lld of bracketed "
				      "fields)\n",
				      files[i], sections, nh, (long long)all, (long long)got);
			assert_int_equal(got, want);
			assert_int_equal(diag_count(f, "BAD_ROW"), 0);
			assert_text(f, "gpu0", "SELECT DISTINCT resource FROM metrics");
			assert_true(capacity_of(f, "gpu0", "memory.used") ==
				    value_at(f, "gpu0", "memory.total",
					     q_int(f, "SELECT min(t_ns) FROM samples")));
			assert_true(capacity_of(f, "gpu0", "power.draw") ==
				    value_at(f, "gpu0", "enforced.power.limit",
					     q_int(f, "SELECT min(t_ns) FROM samples")));
			assert_int_equal(q_int(f, "SELECT json_extract(attrs, '$.gpus.gpu0.name')"
						  " LIKE 'NVIDIA %%' FROM sources"),
					 1);
			sbuf_release(&names);
			cells_free(hdr, nh);
			free(csv);
		}
		assert_int_equal(sections, 2);
		free(text);
	}
	if (!found)
		skip_because("%s/nvidia-smi-csv holds none of the captures", samples_dir());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_units, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nounits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_header_without_units, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bus_id_numbering, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_row_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_na_values, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_rows, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_repeated_header, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fatal_inputs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_host_and_time_offset, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gzip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hostile_names, setup, teardown),
	    cmocka_unit_test(test_sniff),
	    cmocka_unit_test_setup_teardown(test_sample_csvs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exporter_captures, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
