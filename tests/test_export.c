/*
 * The Chrome trace export (model/store/export.c) on a hand-built trace.db whose
 * file is worked out here: processes and threads named, phases as complete
 * events with exact times, categories the import maps back, correlation
 * ids renumbered, attrs repaired into JSON; flow ends at the first moment
 * of a phase that no child covers; phases that overlap on one track on
 * lanes of their own; instants, counters; a subtree; gzip; the file read
 * back by the Chrome importer; and the errors, which leave no file.
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
#include <zlib.h>

#include "importers/importer.h"
#include "model/store/export.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "tests/testdir.h"
#include "model/util/xalloc.h"

#define T0 INT64_C(1795000000000000000) /* a whole second */

struct fx {
	char dir[256], db[300], out[300];
	struct store *st;
	int64_t wf, s1, s2, outer, inner, launch, kernel, bwd, a, b, c;
	json_t *doc;
};

struct w {
	struct store *st;
	int64_t chrome, other;
};

static int64_t add(struct w *w, int64_t src, int64_t parent, int kind, const char *name,
		   const char *cat, int64_t track, int64_t start, int64_t dur, const char *attrs)
{
	char *err = NULL;
	struct phase_row p = {.id = store_reserve_phase_id(w->st),
			      .parent_id = parent,
			      .kind = kind,
			      .name_id = store_intern(w->st, name, strlen(name), &err),
			      .cat_id = cat ? store_intern(w->st, cat, strlen(cat), &err) : 0,
			      .track_id = track,
			      .source_id = src,
			      .start_ns = T0 + start,
			      .dur_ns = dur,
			      .self_ns = dur,
			      .attrs = attrs,
			      .attrs_len = attrs ? strlen(attrs) : 0};
	if (store_add_phase(w->st, &p, &err) < 0)
		fail_msg("store_add_phase(%s): %s", name, err ? err : "?");
	return p.id;
}

static int64_t track(struct w *w, int64_t src, const char *kind, const char *tid, const char *name,
		     int64_t node)
{
	char *err = NULL;
	struct track_row t = {.source_id = src,
			      .kind = kind,
			      .pid = "1",
			      .tid = tid,
			      .name = name,
			      .host = "h1",
			      .rank = -1,
			      .phase_id = node};
	int64_t id = store_add_track(w->st, &t, &err);
	assert_true(id > 0);
	return id;
}

static void exec(struct w *w, const char *sql)
{
	char *err = NULL;
	if (store_exec(w->st, sql, &err) < 0)
		fail_msg("%s: %s", sql, err ? err : "?");
}

/*
 * workflow W 0..10 ms (no track)
 *   step s1 0..5 ms / process P / thread T: outer 1000.123..2000 us
 *       { inner 1000.123..1500, cudaLaunchKernel 1600..1700 -> kernel on S 1800..1900 },
 *       bwd 3000..3500 (attrs no JSON); outer -> bwd is a fwd-bwd edge
 *   step s2 5..10 ms, after s1 / host track H (another source): a 5100..5300,
 *       b 5200..5400 (overlaps a: a second lane), c 5250..5260 under b
 * instant "mark" at 1650 us on T, bound to the launch; a metric of h1,
 * samples at 1 ms and 7 ms.
 */
static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char *err = NULL;
	if (!f || testdir_make(f->dir, sizeof(f->dir), "export") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/trace.db", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/out.json", f->dir);
	struct w w = {0};
	if (store_open(f->db, STORE_WRITE, &w.st, &err) < 0 || store_begin(w.st, &err) < 0)
		fail_msg("cannot open %s: %s", f->db, err ? err : "?");
	struct source_row sc = {.path = "t.json", .format = "chrome", .anchor = "x", .rank = -1};
	struct source_row so = {.path = "o.json", .format = "otlp", .anchor = "x", .rank = -1};
	w.chrome = store_add_source(w.st, &sc, &err);
	w.other = store_add_source(w.st, &so, &err);
	f->wf = add(&w, w.other, 0, PHASE_WORKFLOW, "W", NULL, 0, 0, 10000000, NULL);
	f->s1 = add(&w, w.other, f->wf, PHASE_STEP, "s1", NULL, 0, 0, 5000000, NULL);
	int64_t p = add(&w, w.chrome, f->s1, PHASE_PROCESS, "P", NULL, 0, 1000123, 2499877, NULL);
	int64_t tn = store_reserve_phase_id(w.st), sn = store_reserve_phase_id(w.st);
	int64_t t = track(&w, w.chrome, "thread", "7", "thread 7", tn);
	int64_t s = track(&w, w.chrome, "stream", "7", "stream 7 ", sn);
	struct phase_row node = {.id = tn,
				 .parent_id = p,
				 .kind = PHASE_THREAD,
				 .name_id = store_intern(w.st, "thread 7", 8, &err),
				 .track_id = t,
				 .source_id = w.chrome,
				 .start_ns = T0 + 1000123,
				 .dur_ns = 2499877};
	assert_int_equal(store_add_phase(w.st, &node, &err), 0);
	node.id = sn;
	node.kind = PHASE_STREAM;
	node.track_id = s;
	assert_int_equal(store_add_phase(w.st, &node, &err), 0);
	f->outer = add(&w, w.chrome, tn, PHASE_OPERATOR, "outer", "cpu_op", t, 1000123, 999877,
		       "{\"correlation\":5, \"s\":\"a\x01"
		       "b\",\"u\":\"\\ud800x\","
		       "\"n\":[1,2.5e3,true,null],\"o\":{}}");
	f->inner = add(&w, w.chrome, f->outer, PHASE_OPERATOR, "inner", "cpu_op", t, 1000123,
		       499877, NULL);
	f->launch = add(&w, w.chrome, f->outer, PHASE_RUNTIME, "cudaLaunchKernel", "cuda_runtime",
			t, 1600000, 100000, "{\"correlation\":99,\"External id\":3}");
	f->kernel = add(&w, w.chrome, f->launch, PHASE_KERNEL, "k\x01\xff", "kernel", s, 1800000,
			100000, "{\"correlation\":99}");
	f->bwd =
	    add(&w, w.chrome, tn, PHASE_OPERATOR, "bwd", "cpu_op", t, 3000000, 500000, "{not json");
	f->s2 = add(&w, w.other, f->wf, PHASE_STEP, "s2", NULL, 0, 5000000, 5000000, NULL);
	int64_t h = track(&w, w.other, "host", NULL, "h1", 0);
	f->a = add(&w, w.other, f->s2, PHASE_SPAN, "a", NULL, h, 5100000, 200000, NULL);
	f->b = add(&w, w.other, f->s2, PHASE_SPAN, "b", NULL, h, 5200000, 200000, NULL);
	f->c = add(&w, w.other, f->b, PHASE_SPAN, "c", NULL, h, 5250000, 10000, NULL);
	char *sql = xasprintf("INSERT INTO edges VALUES (%lld, %lld, %d), (%lld, %lld, %d),"
			      " (%lld, %lld, %d)",
			      (long long)f->launch, (long long)f->kernel, EDGE_LAUNCH,
			      (long long)f->outer, (long long)f->bwd, EDGE_FWDBWD, (long long)f->s1,
			      (long long)f->s2, EDGE_STEP_ORDER);
	exec(&w, sql);
	free(sql);
	exec(&w, "UPDATE phases SET child_count = (SELECT count(*) FROM phases c"
		 " WHERE c.parent_id = phases.id)");
	int64_t mark = store_intern(w.st, "mark", 4, &err);
	assert_int_equal(
	    store_add_event(w.st, w.chrome, t, T0 + 1650000, mark, NULL, f->launch, NULL, 0, &err),
	    0);
	struct metric_row m = {.source_id = w.other,
			       .host = "h1",
			       .resource = "gpu0",
			       .name = "util",
			       .unit = "%",
			       .value_kind = "instant"};
	int64_t mid = store_add_metric(w.st, &m, &err);
	assert_int_equal(store_add_sample(w.st, mid, T0 + 1000000, 50.5, &err), 0);
	assert_int_equal(store_add_sample(w.st, mid, T0 + 7000000, 75, &err), 0);
	if (store_commit(w.st, &err) < 0)
		fail_msg("commit: %s", err ? err : "?");
	store_close(w.st);
	if (store_open(f->db, STORE_READ, &f->st, &err) < 0)
		fail_msg("store_open: %s", err ? err : "?");
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	json_decref(f->doc);
	store_close(f->st);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static char *slurp(const char *path)
{
	gzFile g = gzopen(path, "rb");
	assert_non_null(g);
	struct sbuf b = SBUF_INIT;
	sbuf_init(&b);
	char chunk[65536];
	int n;
	while ((n = gzread(g, chunk, sizeof(chunk))) > 0)
		sbuf_add(&b, chunk, (size_t)n);
	gzclose(g);
	return sbuf_detach(&b);
}

/* Exports root to f->out (or path) and parses it into f->doc. */
static struct export_stats run(struct fx *f, int64_t root, const char *path)
{
	struct export_stats es;
	char *err = NULL;
	if (export_chrome(f->st, root, path ? path : f->out, &es, &err) < 0)
		fail_msg("export_chrome: %s", err ? err : "?");
	char *text = slurp(path ? path : f->out);
	json_error_t je;
	json_decref(f->doc);
	f->doc = json_loads(text, 0, &je);
	if (!f->doc)
		fail_msg("not JSON: %s at %d: %.200s", je.text, je.position, text);
	free(text);
	return es;
}

/* The index'th event (0: the first) of phase ph named name (NULL: any). */
static json_t *event(struct fx *f, const char *ph, const char *name, int index)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(f->doc, "traceEvents"), i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));
		if (!strcmp(json_string_value(json_object_get(e, "ph")), ph) &&
		    (!name || (n && !strcmp(n, name))) && index-- == 0)
			return e;
	}
	return NULL;
}

static int count(struct fx *f, const char *ph)
{
	int n = 0;
	while (event(f, ph, NULL, n))
		n++;
	return n;
}

static json_int_t num(json_t *e, const char *key)
{
	assert_non_null(e);
	json_t *v = json_object_get(e, key);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* ts of e in ns from the file's base (ts is microseconds). */
static int64_t ts_ns(json_t *e)
{
	assert_non_null(e);
	return (int64_t)(json_number_value(json_object_get(e, "ts")) * 1000 + 0.5);
}

static void test_layout(void **state)
{
	struct fx *f = *state;
	struct export_stats es = run(f, 0, NULL);
	assert_int_equal(es.phases, 11);
	assert_int_equal(count(f, "X"), 11);
	assert_int_equal(json_integer_value(json_object_get(f->doc, "baseTimeNanoseconds")), T0);
	/* the workflow's process first, then host h1's, each named */
	json_t *pn = event(f, "M", "process_name", 0);
	assert_int_equal(num(pn, "pid"), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(pn, "args"), "name")),
			    "workflow");
	pn = event(f, "M", "process_name", 1);
	assert_int_equal(num(pn, "pid"), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(pn, "args"), "name")),
			    "h1");
	/* steps on the workflow's track, the rest on their host's threads */
	json_t *w = event(f, "X", "W", 0), *s1 = event(f, "X", "s1", 0);
	json_t *outer = event(f, "X", "outer", 0), *kernel = event(f, "X", "k\x01\xef\xbf\xbd", 0);
	assert_int_equal(num(w, "pid"), 1);
	assert_int_equal(num(s1, "tid"), num(w, "tid"));
	assert_string_equal(json_string_value(json_object_get(s1, "cat")), "step");
	assert_int_equal(num(outer, "pid"), 2);
	assert_non_null(kernel); /* a control character kept, an invalid byte repaired */
	assert_int_not_equal(num(kernel, "tid"), num(outer, "tid"));
	assert_string_equal(json_string_value(json_object_get(kernel, "cat")), "kernel");
	/* a Chrome trace's categories as they were; the others' from the kind */
	assert_string_equal(json_string_value(json_object_get(event(f, "X", "a", 0), "cat")),
			    "trace");
	/* overlapping spans on lanes of their own; a child on its parent's */
	json_t *a = event(f, "X", "a", 0), *b = event(f, "X", "b", 0), *c = event(f, "X", "c", 0);
	assert_int_not_equal(num(a, "tid"), num(b, "tid"));
	assert_int_equal(num(c, "tid"), num(b, "tid"));
	int lanes = 0;
	for (int i = 0; event(f, "M", "thread_name", i); i++) {
		const char *n = json_string_value(json_object_get(
		    json_object_get(event(f, "M", "thread_name", i), "args"), "name"));
		lanes += !strcmp(n, "h1") || !strcmp(n, "h1 (2)");
	}
	assert_int_equal(lanes, 2);
}

static void test_times_exact(void **state)
{
	struct fx *f = *state;
	run(f, 0, NULL);
	char *text = slurp(f->out);
	/* 1000.123 us from the base, 999.877 us long: written as such */
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"ts\":1000.123,\"dur\":999.877,"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"ts\":0,\"dur\":10000,"));
	free(text);
}

static void test_args(void **state)
{
	struct fx *f = *state;
	run(f, 0, NULL);
	json_t *oa = json_object_get(event(f, "X", "outer", 0), "args");
	assert_int_equal(num(oa, "correlation"), 5); /* an operator's is its own */
	assert_string_equal(json_string_value(json_object_get(oa, "s")), "a\x01"
									 "b");
	assert_string_equal(json_string_value(json_object_get(oa, "u")), "\xef\xbf\xbdx");
	assert_true(json_number_value(json_array_get(json_object_get(oa, "n"), 1)) == 2500.0);
	assert_true(json_is_object(json_object_get(oa, "o")));
	/* a launch's correlation id is its phase id, its device work's too */
	json_t *la = json_object_get(event(f, "X", "cudaLaunchKernel", 0), "args");
	assert_int_equal(num(la, "correlation"), f->launch);
	assert_int_equal(num(la, "External id"), 3);
	json_t *ka = json_object_get(event(f, "X", "k\x01\xef\xbf\xbd", 0), "args");
	assert_int_equal(num(ka, "correlation"), f->launch);
	assert_int_equal(json_object_size(ka), 1);
	char *text = slurp(f->out); /* the ids replaced, not repeated */
	int n = 0;
	for (const char *p = text; (p = strstr(p, "\"correlation\"")); p++)
		n++;
	assert_int_equal(n, 3);
	free(text);
	/* attrs that are no JSON object kept as a string */
	json_t *ba = json_object_get(event(f, "X", "bwd", 0), "args");
	assert_string_equal(json_string_value(json_object_get(ba, "attrs")), "{not json");
	assert_null(json_object_get(event(f, "X", "inner", 0), "args"));
}

static void test_flows(void **state)
{
	struct fx *f = *state;
	struct export_stats es = run(f, 0, NULL);
	assert_int_equal(es.flows, 3);
	assert_int_equal(es.unbound, 0);
	json_t *s = event(f, "s", "ac2g", 0), *e = event(f, "f", "ac2g", 0);
	json_t *launch = event(f, "X", "cudaLaunchKernel", 0);
	json_t *kernel = event(f, "X", "k\x01\xef\xbf\xbd", 0);
	assert_int_equal(num(s, "id"), num(e, "id"));
	assert_int_equal(ts_ns(s), 1600000);
	assert_int_equal(num(s, "tid"), num(launch, "tid"));
	assert_int_equal(ts_ns(e), 1800000);
	assert_int_equal(num(e, "tid"), num(kernel, "tid"));
	assert_string_equal(json_string_value(json_object_get(e, "bp")), "e");
	/* outer's child starts with it: its edge leaves where the child ends */
	assert_int_equal(ts_ns(event(f, "s", "fwdbwd", 0)), 1500000);
	assert_int_equal(ts_ns(event(f, "f", "fwdbwd", 0)), 3000000);
	assert_non_null(event(f, "s", "step-order", 0));
	/* the instant on its thread, where the launch runs */
	json_t *i = event(f, "i", "mark", 0);
	assert_int_equal(num(i, "tid"), num(launch, "tid"));
	assert_int_equal(ts_ns(i), 1650000);
}

static void test_counters(void **state)
{
	struct fx *f = *state;
	struct export_stats es = run(f, 0, NULL);
	assert_int_equal(es.samples, 2);
	json_t *c = event(f, "C", "gpu0 util (%)", 1);
	assert_int_equal(num(c, "pid"), 2);
	assert_int_equal(ts_ns(c), 7000000);
	assert_true(json_number_value(json_object_get(json_object_get(c, "args"), "value")) == 75);
}

static void test_subtree(void **state)
{
	struct fx *f = *state;
	struct export_stats es = run(f, f->s1, NULL);
	/* s1 and what runs under it: not W, s2 nor the spans of s2 */
	assert_int_equal(es.phases, 6);
	assert_null(event(f, "X", "W", 0));
	assert_null(event(f, "X", "a", 0));
	assert_non_null(event(f, "X", "bwd", 0));
	assert_int_equal(es.flows, 2); /* the step-order edge leads out of it */
	assert_null(event(f, "s", "step-order", 0));
	assert_int_equal(es.samples, 1); /* the one sample within its phases' window */
	assert_int_equal(es.instants, 1);
}

static void test_gzip(void **state)
{
	struct fx *f = *state;
	char gz[320];
	snprintf(gz, sizeof(gz), "%s.gz", f->out);
	run(f, 0, NULL);
	run(f, 0, gz);
	char *plain = slurp(f->out), *inflated = slurp(gz);
	assert_string_equal(plain, inflated);
	free(plain);
	free(inflated);
	FILE *fp = fopen(gz, "rb");
	assert_true(fgetc(fp) == 0x1f && fgetc(fp) == 0x8b); /* gzip's magic */
	fclose(fp);
}

static int64_t one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* The file read back by the Chrome importer: the same phases, times,
 * kinds, parents, edges, instants and samples. */
static void test_read_back(void **state)
{
	struct fx *f = *state;
	run(f, 0, NULL);
	char db2[320], *err = NULL, *paths[] = {f->out};
	snprintf(db2, sizeof(db2), "%s/back.db", f->dir);
	struct import_opts o = {0};
	if (import_files(db2, paths, 1, NULL, &o, &err) < 0)
		fail_msg("import: %s", err ? err : "?");
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(db2, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(one(db, "SELECT count(*) FROM phases_v WHERE kind NOT IN ('workflow',"
				 " 'step', 'process', 'thread', 'stream')"),
			 11);
	char *q = xasprintf("SELECT count(*) FROM phases_v k JOIN phases_v l ON l.id = k.parent_id"
			    " WHERE k.kind = 'kernel' AND l.kind = 'runtime' AND l.name ="
			    " 'cudaLaunchKernel' AND k.start_ns = %lld AND k.dur_ns = 100000",
			    (long long)(T0 + 1800000));
	assert_int_equal(one(db, q), 1);
	free(q);
	assert_int_equal(one(db, "SELECT count(*) FROM phases_v i JOIN phases_v o ON o.id ="
				 " i.parent_id WHERE i.name = 'inner' AND o.name = 'outer'"),
			 1);
	assert_int_equal(one(db, "SELECT count(*) FROM phases_v c JOIN phases_v b ON b.id ="
				 " c.parent_id WHERE c.name = 'c' AND b.name = 'b'"),
			 1);
	assert_int_equal(one(db, "SELECT count(*) FROM phases_v WHERE name = 's2' AND kind ="
				 " 'operator'"),
			 1);
	assert_int_equal(one(db, "SELECT count(*) FROM edges WHERE kind = 2"), 1);
	assert_int_equal(one(db, "SELECT count(*) FROM edges WHERE kind = 3"), 1);
	assert_int_equal(one(db, "SELECT count(*) FROM edges WHERE kind = 1"), 1);
	assert_int_equal(one(db, "SELECT count(*) FROM events_v e JOIN phases_v p ON p.id ="
				 " e.phase_id WHERE p.name = 'cudaLaunchKernel'"),
			 1);
	assert_int_equal(one(db, "SELECT count(*) FROM samples"), 2);
	assert_int_equal(one(db, "SELECT count(*) FROM diagnostics WHERE code IN ('LONE_FLOW',"
				 " 'UNBOUND_FLOW', 'UNLINKED_DEVICE', 'OVERLAP')"),
			 0);
	sqlite3_close(db);
}

/* Nothing but the file itself is ever left in dir. */
static int leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_errors(void **state)
{
	struct fx *f = *state;
	char path[400], *err = NULL;
	/* a directory that is not there */
	snprintf(path, sizeof(path), "%s/no/such/out.json", f->dir);
	assert_int_equal(export_chrome(f->st, 0, path, NULL, &err), -1);
	assert_non_null(strstr(err, path));
	assert_null(strchr(err, '\n'));
	free(err);
	err = NULL;
	/* a directory in the file's place: nothing written, no file left */
	snprintf(path, sizeof(path), "%s/isdir.json", f->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(export_chrome(f->st, 0, path, NULL, &err), -1);
	assert_non_null(strstr(err, "cannot write"));
	free(err);
	err = NULL;
	assert_int_equal(leftovers(f->dir), 0);
	/* the trace.db itself */
	assert_int_equal(export_chrome(f->st, 0, f->db, NULL, &err), -1);
	assert_non_null(strstr(err, "is the trace.db being exported"));
	free(err);
	err = NULL;
	/* a phase that is not there */
	assert_int_equal(export_chrome(f->st, 999999, f->out, NULL, &err), -1);
	assert_non_null(strstr(err, "999999"));
	free(err);
	assert_int_equal(access(f->out, F_OK), -1);
	assert_int_equal(leftovers(f->dir), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_layout), T(test_times_exact), T(test_args),
	    T(test_flows),  T(test_counters),	 T(test_subtree),
	    T(test_gzip),   T(test_read_back),	 T(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
