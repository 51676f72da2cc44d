/*
 * The Chrome importer's event scanner against YAJL's callbacks: every
 * input is imported twice, with the scanner on and with it off
 * (GRADEML_CHROME_SCAN=0), and the two trace.db files must hold the same
 * rows in every table the import writes (phases, edges, events, metrics,
 * samples, diagnostics with their examples and byte offsets, tracks,
 * strings, sources but for the import time), or fail with the same
 * message.  Inputs: small texts made to reach each way the scanner
 * declines or stops, a long file whose chunk boundaries fall inside every
 * kind of token, strings longer than what streaming keeps of them, the traces in tests/data, and
 * the public samples in
 * ../shared/samples/chrome-trace when present.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "tests/dbdump.h"
#include "tests/testdir.h"
#include "tests/skip.h"

#define SAMPLES "../shared/samples/chrome-trace"

struct fx {
	char dir[256];
	int strict; /* import under --strict */
	char *last; /* the rows of the last import same_both_ways compared */
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	if (testdir_make(f->dir, sizeof(f->dir), "chrome-scan") < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	testdir_remove(f->dir);
	free(f->last);
	free(f);
	return 0;
}

/* Imports path with the scanner on (scan 1) or off into a fresh db; the
 * tables' rows, or "error: message", into out. */
static void import_into(struct fx *f, const char *path, int scan, struct sbuf *out)
{
	char *db = xasprintf("%s/%s.db", f->dir, scan ? "on" : "off");
	unlink(db);
	setenv("GRADEML_CHROME_SCAN", scan ? "1" : "0", 1);
	struct import_opts o;
	memset(&o, 0, sizeof(o));
	o.strict = f->strict;
	char *err = NULL;
	char *paths[] = {(char *)path};
	int rc = import_files(db, paths, 1, NULL, &o, &err);
	unsetenv("GRADEML_CHROME_SCAN");
	if (rc < 0)
		sbuf_addf(out, "error: %s\n", err ? err : "(none)");
	else if (dbdump(db, out, &err) < 0)
		fail_msg("%s", err);
	free(err);
	unlink(db);
	free(db);
}

/* Both imports of path must agree; returns 1 when path imported. */
static int same_both_ways(struct fx *f, const char *path)
{
	struct sbuf on = SBUF_INIT, off = SBUF_INIT;
	sbuf_init(&on);
	sbuf_init(&off);
	import_into(f, path, 1, &on);
	import_into(f, path, 0, &off);
	if (strcmp(on.buf, off.buf)) {
		size_t i = 0;
		while (on.buf[i] && on.buf[i] == off.buf[i])
			i++;
		size_t from = i > 200 ? i - 200 : 0;
		print_error("%s: scanner and YAJL differ at byte %zu\nscanner: %.400s\nyajl:    "
			    "%.400s\n",
			    path, i, on.buf + from, off.buf + from);
	}
	assert_string_equal(on.buf, off.buf);
	int ok = strncmp(on.buf, "error: ", 7) != 0;
	free(f->last);
	f->last = sbuf_detach(&on);
	sbuf_release(&off);
	return ok;
}

static int same_text(struct fx *f, const char *text, size_t len)
{
	char *path = xasprintf("%s/in.json", f->dir);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
	int ok = same_both_ways(f, path);
	unlink(path);
	free(path);
	return ok;
}

#define EV "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}"

/* Texts that import: the scanner reads some of their events and declines
 * the others, and both paths store the same. */
static void test_edge_cases(void **state)
{
	static const char *const texts[] = {
	    /* the common shape, both top-level forms, metadata around */
	    "[" EV "," EV "," EV "]",
	    "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0}],\"traceEvents\":[" EV ",\n  " EV
	    ",\n  " EV "],\"baseTimeNanoseconds\":1000}",
	    "\xef\xbb\xbf[" EV "," EV "," EV "]",
	    /* escapes, control characters, non-ASCII and invalid UTF-8 */
	    "[{\"ph\":\"X\",\"name\":\"a\\\"b\\u00e9\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}," EV
	    ",{\"ph\":\"X\",\"name\":\"caf\xc3\xa9\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1,"
	    "\"args\":{\"k\xc3\xa9\":\"v\xc3\xa9\x7f\"}}," EV
	    ",{\"ph\":\"X\",\"name\":\"bad\xff\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1},"
	    "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":6,\"dur\":1,\"args\":{"
	    "\"k\xfe\":"
	    "\"\xc0\"}}," EV "]",
	    /* numbers of every form, big integers, strings and literals in fields */
	    "[{\"ph\":\"X\",\"name\":\"n\",\"pid\":-0,\"tid\":1.5e3,\"ts\":1E+2,\"dur\":0.000,"
	    "\"args\":{\"a\":-1.25e-3,\"b\":123456789012345678901,\"c\":9223372036854775807}}," EV
	    ",{\"ph\":\"X\",\"name\":\"n\",\"pid\":\"7\",\"tid\":\"x\",\"ts\":\"12.5\",\"dur\":"
	    "\"3\",\"args\":{\"c\":9223372036854775807,\"d\":-9223372036854775808,\"e\":"
	    "18446744073709551616}}," EV
	    ",{\"ph\":\"X\",\"name\":null,\"cat\":true,\"pid\":false,\"tid\":null,\"ts\":5,"
	    "\"dur\":null,\"id\":1}," EV "]",
	    /* repeated fields, args of every shape */
	    "[{\"ph\":\"X\",\"ts\":1,\"ts\":2,\"name\":\"r\",\"pid\":1,\"tid\":1,\"dur\":1}," EV
	    ",{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"a\":"
	    "1},"
	    "\"args\":{\"b\":2}}," EV
	    ",{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":[1,2]},"
	    "{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":7},"
	    "{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{}},"
	    "{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{ }},"
	    "{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"Input "
	    "Dims\":[[1,2],[],[3]],\"Input type\":[\"float\",\"\"],\"m\":{\"x\":{\"y\":[true,"
	    "null,false]},\"z\":{}},\"a\":1,\"a\":2},\"extra\":{\"q\":1},\"more\":[1]}," EV
	    ",{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":"
	    "{\"deep\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}},"
	    "{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"other\":\"o\","
	    "\"other\":2}," EV "]",
	    /* every phase type, flows, counters with args before ph, metadata */
	    "[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"p\"}},"
	    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"t\"}},"
	    "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":1,\"args\":{\"labels\":\"GPU\"}},"
	    "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":1,\"args\":{\"sort_index\":3}},"
	    "{\"name\":\"other\",\"ph\":\"M\",\"pid\":1,\"args\":{}},"
	    "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":10,\"args\":{\"x\":1}},"
	    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":20},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":"
	    "21},"
	    "{\"ph\":\"b\",\"cat\":\"c\",\"id\":\"0x1\",\"name\":\"as\",\"pid\":1,\"ts\":11},"
	    "{\"ph\":\"e\",\"cat\":\"c\",\"id\":\"0x1\",\"pid\":1,\"ts\":15,\"scope\":\"s\"},"
	    "{\"ph\":\"b\",\"cat\":\"c\",\"id\":\"0x2\",\"name\":\"open\",\"pid\":1,\"ts\":12},"
	    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
	    "\"tid\":1,\"ts\":12,\"dur\":2,\"args\":{\"correlation\":5}},"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":13,\"dur\":"
	    "3,"
	    "\"args\":{\"correlation\":5,\"External id\":3}},"
	    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":12,\"name\":\"f\"},"
	    "{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":5,\"pid\":0,\"tid\":7,\"ts\":13,\"bp\":\"e\","
	    "\"name\":\"f\"},{\"ph\":\"t\",\"id\":\"zz\",\"pid\":1,\"tid\":1,\"ts\":13},"
	    "{\"ph\":\"X\",\"name\":\"o\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":1,\"bind_id\":9,"
	    "\"flow_out\":true},{\"ph\":\"X\",\"name\":\"i\",\"pid\":1,\"tid\":1,\"ts\":14,\"dur\":"
	    "1,"
	    "\"bind_id\":9,\"flow_in\":\"true\"},{\"ph\":\"X\",\"name\":\"i\",\"pid\":1,\"tid\":1,"
	    "\"ts\":14,\"dur\":1,\"bind_id\":9,\"flow_in\":true,\"flow_out\":1},"
	    "{\"args\":{\"v\":1,\"w\":\"2.5\",\"x\":\"no\"},\"ph\":\"C\",\"name\":\"ctr\",\"pid\":"
	    "1,"
	    "\"ts\":10},{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":11,\"args\":{\"value\":3}},"
	    "{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":12,\"args\":{\"s\":\"x\"}},"
	    "{\"ph\":\"i\",\"name\":\"inst\",\"pid\":1,\"tid\":1,\"ts\":13,\"s\":\"t\"},"
	    "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
	    "\"ts\":1,\"dur\":100},{\"ph\":\"Q\",\"name\":\"q\",\"pid\":1,\"ts\":1},"
	    "{\"ph\":\"X\",\"name\":\"nodur\",\"pid\":1,\"tid\":1,\"ts\":3},"
	    "{\"ph\":\"X\",\"name\":\"negdur\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":-1},"
	    "{\"ph\":\"X\",\"name\":\"nots\",\"pid\":1,\"tid\":1,\"dur\":1},"
	    "{\"name\":\"noph\",\"pid\":1,\"tid\":1,\"ts\":1},"
	    "{\"ph\":\"X\",\"name\":\"huge\",\"pid\":1,\"tid\":1,\"ts\":9223372036854775807,"
	    "\"dur\":1000},{},42,\"s\",[1,{\"ph\":\"X\"}],null,true,{}," EV ",{}]",
	    /* what Perfetto reads: commas before ] and }, control characters in
	     * strings, the array unclosed or cut inside its last event */
	    "{\"traceEvents\":[" EV ",{\"ph\":\"X\",\"name\":\"t\",\"pid\":1,\"tid\":1,\"ts\":1,"
	    "\"dur\":2,\"args\":{\"a\":[1,[2,],{},],\"b\":{\"c\":1,},},}," EV " , \n],\"m\":{\"x\":"
	    "[1,],},}",
	    "{\"m\":\"a\tb\",\"traceEvents\":[" EV ",{\"ph\":\"X\",\"name\":\"c\x01\nd\",\"pid\":1,"
	    "\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{\"k\x1f\":\"\x7f\r\",\"s\":[\"\t\"]}}," EV "]}",
	    "[" EV "," EV,
	    "[" EV "," EV ",\n",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a\",\"args\":{\"x\":[1,{\"y\":\"z\\",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a\",\"ts\":12",
	    "[" EV "," EV ",[1,tr",
	    /* white space of every kind between tokens, a trailing {} */
	    "[ \n\t\r{ \"ph\" : \"X\" ,\r\n\"name\"\t:\"w\", \"pid\" :1 ,\"tid\": 1,\"ts\":1 ,"
	    "\"dur\":2 , \"args\" : { \"a\" : [ 1 , 2 ] , \"b\" : { } } } \n,\n " EV " ,\f" EV
	    " , " EV " ,\n{}\n]\n",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		assert_true(same_text(*state, texts[i], strlen(texts[i])));
}

/* Texts that fail: both paths fail with the same message; under --strict
 * all of them, else those marked 0 (the others, what Perfetto reads, import
 * the same both ways). */
static void test_malformed(void **state)
{
	struct fx *f = *state;
	static const char *const texts[] = {
	    "[" EV "," EV ",]",
	    "[" EV ",," EV "]",
	    "[" EV "," EV ",\n ]",
	    "[" EV "," EV "," EV,
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":01}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a\" \"b\"}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":tru}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"args\":{\"a\":[1,}}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"args\":{\"a\":[1}]}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a\"]," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a\"}x," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a\"}," EV "] [",
	    "{\"traceEvents\":[" EV "," EV "],\"traceEvents\":{}}",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"a\nb\"}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":1.}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":-}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"name\":\"tab\tin\"}," EV "]",
	    "[" EV "," EV ",{\"ph\":\"X\",\"args\":{\"a\":1,}}," EV "]",
	    /* a token cut where YAJL stops (an unfinished string, the first
	     * '[', a comma held back): found at the same byte both ways */
	    "[{\"ph\":\"B\",\"name\":\"b\"3\"p,\n ",
	    "{\"schemaVersion\":1,\"m\":\"ab\"\":[ {\"ph\":\"X\"}]}",
	    "[{\"pat\": \"ac2g\", \"id\":5555 7, \"p 7, ",
	    "[{\"ph\":\"Bb\x10\x02n\"1,\"\x01",
	};
	static const int lenient[] = {1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0,
				      0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0};
	_Static_assert(sizeof(lenient) / sizeof(lenient[0]) == sizeof(texts) / sizeof(texts[0]),
		       "one mark a text");
	for (int strict = 1; strict >= 0; strict--) {
		f->strict = strict;
		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
			assert_int_equal(same_text(f, texts[i], strlen(texts[i])),
					 !strict && lenient[i]);
	}
}

/* A long text whose 64 KiB reads end inside every kind of token, with an
 * event larger than one read. */
static void test_chunk_boundaries(void **state)
{
	struct sbuf t = SBUF_INIT;
	sbuf_init(&t);
	sbuf_adds(&t, "{\"traceEvents\": [\n");
	for (int i = 0; i < 6000; i++) {
		sbuf_addf(&t,
			  "  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"op%*d\", \"pid\": %d, "
			  "\"tid\": %d, \"ts\": %d.%03d, \"dur\": %d, \"args\": {\"External id\": "
			  "%d, \"s\": \"%.*s\", \"l\": [%d, true, null], \"f\": %s}},\n",
			  i % 3 ? "cpu_op" : "kernel", i % 7 + 1, i, i % 2, i % 5, 1000 + i * 3,
			  i % 1000, i % 11, i, i % 13, "abcdefghijklmnop", i,
			  i % 2 ? "false" : "1e2");
		if (i == 3000) {
			sbuf_adds(&t,
				  "  {\"ph\": \"X\", \"name\": \"big\", \"pid\": 1, \"tid\": 1, "
				  "\"ts\": 5, \"dur\": 1, \"args\": {\"s\": \"");
			for (int k = 0; k < 150000; k++)
				sbuf_addc(&t, (char)('a' + k % 26));
			sbuf_adds(&t, "\"}},\n");
		}
	}
	sbuf_adds(&t, "  {}\n], \"baseTimeNanoseconds\": 1000}\n");
	assert_true(same_text(*state, t.buf, t.len));
	sbuf_release(&t);
}

/* The long text above with what Perfetto reads in it: commas before ]
 * and }, control characters, and the input ending inside its last event;
 * then the same ending after an event and after a comma. */
static void test_lenient_chunk_boundaries(void **state)
{
	struct sbuf t = SBUF_INIT;
	sbuf_init(&t);
	for (int end = 0; end < 3; end++) {
		sbuf_reset(&t);
		sbuf_adds(&t, "{\"traceEvents\": [\n");
		for (int i = 0; i < 6000; i++)
			sbuf_addf(
			    &t,
			    "  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"op%*d%s\", "
			    "\"pid\": %d, \"tid\": %d, \"ts\": %d.%03d, \"dur\": %d, \"args\": "
			    "{\"External id\": %d, \"s\": \"%.*s\", \"l\": [%d, true, null%s], "
			    "\"f\": %s%s}%s},\n",
			    i % 3 ? "cpu_op" : "kernel", i % 7 + 1, i, i % 5 ? "" : "\t\x01", i % 2,
			    i % 5, 1000 + i * 3, i % 1000, i % 11, i, i % 13, "abcdefghijklmnop", i,
			    i % 4 ? "" : ",", i % 2 ? "false" : "1e2", i % 6 ? "" : ",",
			    i % 9 ? "" : " ,\n");
		if (end == 0)
			sbuf_adds(&t,
				  "  {\"ph\": \"X\", \"name\": \"cut\", \"args\": {\"s\": \"ab");
		else if (end == 1)
			sbuf_adds(&t,
				  "  {\"ph\": \"X\", \"name\": \"last\", \"pid\": 1, \"tid\": 1, "
				  "\"ts\": 1, \"dur\": 1}\n");
		assert_true(same_text(*state, t.buf, t.len));
	}
	sbuf_release(&t);
}

/* Strings whose first byte that is not plain ASCII (an escape, a control
 * character, UTF-8, invalid UTF-8, DEL) lies at every offset of the
 * scanner's eight-byte steps, and strings of every length around them. */
static void test_string_offsets(void **state)
{
	static const char *const specials[] = {"\\\"", "\\u0041", "\xc3\xa9", "\xff", "\x7f", ""};
	struct sbuf t = SBUF_INIT;
	sbuf_init(&t);
	sbuf_adds(&t, "[");
	for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++)
		for (int at = 0; at < 20; at++)
			sbuf_addf(&t,
				  "{\"ph\":\"X\",\"name\":\"%.*s%s%.*s\",\"pid\":1,\"tid\":1,"
				  "\"ts\":%d,\"dur\":1,\"args\":{\"%.*s%s\":\"%s%.*s\"}},",
				  at, "abcdefghijklmnopqrstuvwxyz", specials[k], at % 9,
				  "ABCDEFGHIJ", at, at, "abcdefghijklmnopqrstuvwxyz", specials[k],
				  specials[k], at, "0123456789012345678901234");
	sbuf_adds(&t, EV "]");
	assert_true(same_text(*state, t.buf, t.len));
	struct fx *f = *state;
	for (int strict = 1; strict >= 0; strict--) {
		f->strict = strict;
		for (int at = 0; at < 20; at++) {
			sbuf_reset(&t);
			sbuf_addf(&t, "[" EV ",{\"ph\":\"X\",\"name\":\"%.*s\t\"}," EV "]", at,
				  "abcdefghijklmnopqrstuvwxyz");
			assert_int_equal(same_text(f, t.buf, t.len), !strict);
		}
	}
	sbuf_release(&t);
}

/* Appends unit repeated, up to n bytes. */
static void add_run(struct sbuf *t, const char *unit, size_t n)
{
	size_t u = strlen(unit);
	for (size_t i = 0; i + u <= n; i += u)
		sbuf_add(t, unit, u);
}

/* Strings longer than what is kept of them while streaming (1 MiB), in
 * every place, with escapes that the reads cut at every offset; and such
 * strings that turn out malformed, or end the input, beyond that point. */
static void test_long_strings(void **state)
{
	size_t mib = (size_t)1 << 20;
	static const char *const units[] = {"abcdefghijklmnopqrstuvwxyz012345", "ab\\\"cd\\u00e9",
					    "\xc3\xa9x\\n"};
	struct sbuf t = SBUF_INIT;
	sbuf_init(&t);
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		sbuf_reset(&t);
		sbuf_adds(&t, u == 1 ? "\xef\xbb\xbf{\"m\": \"" : "{\"m\": \"");
		add_run(&t, units[u], mib + mib / 4);
		sbuf_adds(&t, "\", \"traceEvents\": [" EV ", {\"ph\": \"X\", \"name\": \"");
		add_run(&t, units[u], 2 * mib);
		sbuf_adds(&t, "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {");
		for (int k = 0; k < 2; k++) {
			sbuf_addf(&t, "\"k%d\": \"", k);
			add_run(&t, units[u], mib + mib / 8 + (size_t)k * 7);
			sbuf_adds(&t, "\", \"");
			add_run(&t, units[u], mib + 3);
			sbuf_adds(&t, "\": 1, ");
		}
		sbuf_adds(&t, "\"e\": 1}}, " EV ", {\"ph\": \"X\", \"dur\": -1, \"name\": \"");
		add_run(&t, units[u], mib + mib / 4);
		sbuf_adds(&t, "\", \"pid\": 1, \"tid\": 1, \"ts\": 3}], \"z\": [\"");
		add_run(&t, units[u], mib + mib / 4);
		sbuf_adds(&t, "\", " EV "]}");
		assert_true(same_text(*state, t.buf, t.len));
	}
	/* what Perfetto reads (a control character, the input ending) imports
	 * unless --strict */
	static const char *const bad[] = {"\n", "\\q", "\\u12x4", "\\u12\"", "\\", ""};
	static const int lenient[] = {1, 0, 0, 0, 1, 1};
	struct fx *f = *state;
	for (int strict = 1; strict >= 0; strict--) {
		f->strict = strict;
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			sbuf_reset(&t);
			sbuf_adds(&t, "[" EV ", {\"ph\": \"X\", \"name\": \"");
			add_run(&t, units[0], mib + mib / 4);
			sbuf_adds(&t, bad[k]);
			if (k + 2 < sizeof(bad) / sizeof(bad[0])) {
				add_run(&t, units[0], mib / 2);
				sbuf_adds(&t,
					  "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}, " EV
					  "]");
			}
			assert_int_equal(same_text(f, t.buf, t.len), !strict && lenient[k]);
		}
	}
	sbuf_release(&t);
}

/* Control characters in strings longer than what is kept of them: escaped
 * within a string's first bytes, dropped past them, by the lenient feed or
 * by stream_cut where it cuts the string as it streams (which happens on
 * one path and not the other), counted once each either way; in an event's
 * name, in its args, in top-level metadata, and in a string the input ends
 * inside. */
static void test_lenient_long_strings(void **state)
{
	struct fx *f = *state;
	size_t mib = (size_t)1 << 20;
	static const size_t at[] = {0,	    7,	     65535,   65536,   393239,	393240,
				    393241, 1048575, 1048576, 1048577, 3145728, 5242880};
	static const char ctl[] = "\x01\t\n\x1f\r";
	struct sbuf t = SBUF_INIT, str = SBUF_INIT;
	sbuf_init(&t);
	sbuf_init(&str);
	sbuf_reset(&str);
	add_run(&str, "abcdefghijklmnopqrstuvwxyz012345", 6 * mib);
	size_t n = 0;
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++, n++)
		str.buf[at[k]] = ctl[k % 5];
	for (size_t k = 2 * mib; k < 2 * mib + 65536; k += 2, n++)
		str.buf[k] = '\x01';
	for (int place = 0; place < 4; place++) {
		sbuf_reset(&t);
		sbuf_adds(&t, place == 2 ? "{\"m\": \"" : "{\"traceEvents\": [" EV ", ");
		if (place < 2)
			sbuf_adds(&t, place ? "{\"ph\": \"X\", \"args\": {\"k\": \""
					    : "{\"ph\": \"X\", \"name\": \"");
		if (place == 3)
			sbuf_adds(&t, "{\"ph\": \"X\", \"name\": \"c\", \"args\": {\"k\": [\"");
		sbuf_add(&t, str.buf, str.len);
		if (place == 0)
			sbuf_adds(&t,
				  "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}, " EV "]}");
		else if (place == 1)
			sbuf_adds(&t, "\"}, \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
				      "\"dur\": 2}]}");
		else if (place == 2)
			sbuf_adds(&t, "\", \"traceEvents\": [" EV "]}");
		assert_true(same_text(f, t.buf, t.len));
		char *want = xasprintf("|CONTROL_CHAR|%zu|", n);
		if (!strstr(f->last, want))
			print_error("no %s in:\n%.2000s\n", want,
				    strstr(f->last, "== diagnostics"));
		assert_non_null(strstr(f->last, want));
		free(want);
	}
	sbuf_release(&t);
	sbuf_release(&str);
}

/* Events beyond what one event may hold: args beyond 1 MiB, with the cut
 * at a string, inside a nested value or among many small members, a number
 * of 1024 bytes, and white space beyond the scanner's buffer, after which
 * YAJL reads the rest. */
static void test_big_events(void **state)
{
	struct sbuf t = SBUF_INIT;
	sbuf_init(&t);
	sbuf_adds(&t, "[" EV ",{\"ph\":\"X\",\"name\":\"strings\",\"pid\":1,\"tid\":1,\"ts\":1,"
		      "\"dur\":1,\"args\":{\"a\":1");
	for (int k = 0; k < 20; k++) {
		sbuf_addf(&t, ",\"s%d\":\"", k);
		add_run(&t, "abcdefghijklmnop", 60000);
		sbuf_adds(&t, k == 16 ? "\",\"n\":{\"x\":[1,{\"y\":\"z\"}]}" : "\"");
	}
	sbuf_adds(&t, ",\"correlation\":5}}," EV ",{\"ph\":\"X\",\"name\":\"nested\",\"pid\":1,"
		      "\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"a\":1,\"deep\":[");
	for (int k = 0; k < 20; k++) {
		sbuf_adds(&t, k ? ",{\"s\":\"" : "{\"s\":\"");
		add_run(&t, "abcdefghijklmnop", 60000);
		sbuf_adds(&t, "\"}");
	}
	sbuf_adds(&t, "],\"b\":2}}," EV ",{\"ph\":\"C\",\"name\":\"members\",\"pid\":1,\"ts\":1,"
		      "\"args\":{");
	for (int k = 0; k < 60000; k++)
		sbuf_addf(&t, "\"m%d\":%d,", k, k);
	sbuf_adds(&t, "\"z\":1}}," EV ",{\"ph\":\"X\",\"name\":\"n\",\"pid\":1,\"tid\":1,\"ts\":1,"
		      "\"dur\":1,\"args\":{\"big\":");
	add_run(&t, "1234567890", 1020);
	sbuf_adds(&t, "1234}}," EV ",{\"ph\":\"X\",\"name\":\"ws\",\"pid\":1,");
	add_run(&t, " \n", (size_t)5 << 20);
	sbuf_adds(&t, "\"tid\":1,\"ts\":2,\"dur\":1}," EV "," EV "]");
	assert_true(same_text(*state, t.buf, t.len));
	sbuf_release(&t);
}

/* Numbers longer than 1024 bytes, and runs of number characters that long
 * that are not one number, in every place and across the 64 KiB reads:
 * both paths fail on the same byte with the same message. */
static void test_long_numbers(void **state)
{
	static const char *const runs[] = {"1234567890", "0123", "1.2.", "----", "9e99", "12\x01"};
	static const char *const places[] = {
	    "[" EV ",{\"ph\":\"X\",\"ts\":%s,\"dur\":1}," EV "]",
	    "[" EV ",{\"ph\":\"X\",\"name\":\"\\n\",\"args\":{\"a\":[1,%s]}}," EV "]",
	    "[" EV ",{\"ph\":\"X\",\"name\":tru%s}," EV "]",
	    "[" EV ",%s," EV "]",
	    "{\"m\":%s,\"traceEvents\":[" EV "]}",
	    "{\"traceEvents\":[" EV "],\"m\":[\"a\",%s]}",
	};
	struct sbuf t = SBUF_INIT, run = SBUF_INIT;
	sbuf_init(&t);
	sbuf_init(&run);
	for (size_t u = 0; u < sizeof(runs) / sizeof(runs[0]); u++) {
		sbuf_reset(&run);
		add_run(&run, runs[u], 2000);
		for (size_t k = 0; k < sizeof(places) / sizeof(places[0]); k++) {
			sbuf_reset(&t);
			sbuf_addf(&t, places[k], run.buf);
			assert_false(same_text(*state, t.buf, t.len));
		}
	}
	/* a number of 1025 bytes, and of 3 MiB, starting around the end of
	 * the first read */
	static const size_t starts[] = {65536 - 1200, 65536 - 1025, 65536 - 1024, 65536 - 1, 65536};
	static const size_t lens[] = {1025, (size_t)3 << 20};
	for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++)
		for (size_t n = 0; n < sizeof(lens) / sizeof(lens[0]); n++) {
			sbuf_reset(&t);
			sbuf_adds(&t, "[" EV ",{\"ph\":\"X\",\"name\":\"");
			add_run(&t, "p", starts[k] - t.len - 7);
			sbuf_adds(&t, "\",\"ts\":");
			assert_int_equal(t.len, starts[k]);
			add_run(&t, "7", lens[n]);
			sbuf_adds(&t, ",\"dur\":1}," EV "]");
			assert_false(same_text(*state, t.buf, t.len));
		}
	sbuf_release(&run);
	sbuf_release(&t);
}

static int is_chrome_name(const char *name)
{
	return strstr(name, ".json") != NULL;
}

/* Every Chrome trace in dir; returns how many were compared. */
static int same_dir(struct fx *f, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !is_chrome_name(e->d_name))
			continue;
		char *path = xasprintf("%s/%s", dir, e->d_name);
		assert_true(same_both_ways(f, path));
		free(path);
		n++;
	}
	closedir(d);
	return n;
}

static void test_data_traces(void **state)
{
	int n = same_dir(*state, "tests/data/demo") + same_dir(*state, "tests/data/gpu");
	assert_true(n >= 6);
}

static void test_samples(void **state)
{
	if (access(SAMPLES, R_OK) != 0)
		skip_because("%s is absent", SAMPLES);
	assert_true(same_dir(*state, SAMPLES) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_edge_cases, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_chunk_boundaries, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lenient_chunk_boundaries, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_string_offsets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_long_strings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lenient_long_strings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_big_events, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_long_numbers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_data_traces, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_samples, setup, teardown),
	};
	return cmocka_run_group_tests_name("chrome_scan", tests, NULL, NULL);
}
