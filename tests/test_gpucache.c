/*
 * Unit tests for model/analysis/gpucache.h, the GPU breakdowns' cache: a struct
 * gpubreak built by hand and one computed from the H100 capture in
 * tests/data/gpu (four Kineto traces: no rank, no rank, ranks 0 and 1)
 * come back field by field; a file of schema v3 migrates to v6 with its
 * cache stale; and the report of an analysed file, read from the cache,
 * equals the report computed in memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importers/importer.h"
#include "model/analysis/analyze.h"
#include "model/analysis/gpucache.h"
#include "model/util/xalloc.h"
#include "tests/testdir.h"
#include "tui/report.h"

#define GPU "tests/data/gpu/"

struct fx {
	char dir[256], db[300];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || testdir_make(f->dir, sizeof(f->dir), "gpucache") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static void assert_temporal_equal(const struct gpubreak_temporal *a,
				  const struct gpubreak_temporal *b)
{
	assert_int_equal(a->window_ns, b->window_ns);
	assert_int_equal(a->idle_ns, b->idle_ns);
	assert_int_equal(a->compute_ns, b->compute_ns);
	assert_int_equal(a->noncompute_ns, b->noncompute_ns);
}

static void assert_gpubreak_equal(const struct gpubreak *a, const struct gpubreak *b)
{
	assert_int_equal(a->nranks, b->nranks);
	for (size_t i = 0; i < a->nranks; i++) {
		const struct gpubreak_rank *x = &a->ranks[i], *y = &b->ranks[i];
		assert_int_equal(x->source_id, y->source_id);
		assert_string_equal(x->source, y->source);
		assert_int_equal(x->rank, y->rank);
		assert_int_equal(x->items, y->items);
		assert_int_equal(x->left_out, y->left_out);
		assert_int_equal(x->cutoff_ns, y->cutoff_ns);
		assert_temporal_equal(&x->time, &y->time);
		assert_memory_equal(&x->cause, &y->cause, sizeof(x->cause));
		for (int t = 0; t < GPUBREAK_NTYPES; t++)
			assert_int_equal(x->type_ns[t], y->type_ns[t]);
		for (int m = 0; m < 1 << GPUBREAK_NTYPES; m++)
			assert_int_equal(x->mix_ns[m], y->mix_ns[m]);
		assert_int_equal(x->comm_ns, y->comm_ns);
		assert_int_equal(x->overlap_ns, y->overlap_ns);
		assert_int_equal(x->nkernels, y->nkernels);
		for (size_t k = 0; k < x->nkernels; k++) {
			const struct gpubreak_kernel *p = &x->kernels[k], *q = &y->kernels[k];
			assert_string_equal(p->name, q->name);
			assert_int_equal(p->type, q->type);
			assert_int_equal(p->others, q->others);
			assert_int_equal(p->names, q->names);
			assert_int_equal(p->count, q->count);
			assert_int_equal(p->sum_ns, q->sum_ns);
			assert_int_equal(p->min_ns, q->min_ns);
			assert_int_equal(p->max_ns, q->max_ns);
		}
		assert_int_equal(x->nstreams, y->nstreams);
		for (size_t s = 0; s < x->nstreams; s++) {
			const struct gpubreak_stream *p = &x->streams[s], *q = &y->streams[s];
			assert_int_equal(p->track_id, q->track_id);
			assert_string_equal(p->name, q->name);
			assert_int_equal(p->items, q->items);
			assert_temporal_equal(&p->time, &q->time);
			for (int w = 0; w < GPUBREAK_NWAITS; w++) {
				assert_int_equal(p->idle.ns[w], q->idle.ns[w]);
				assert_int_equal(p->idle.count[w], q->idle.count[w]);
			}
			for (int c = 0; c < IDLE_NCAUSES; c++) {
				assert_int_equal(p->cause.ns[c], q->cause.ns[c]);
				assert_int_equal(p->cause.gaps[c], q->cause.gaps[c]);
			}
			assert_memory_equal(&p->copies, &q->copies, sizeof(p->copies));
		}
	}
}

/* Saves g into the file in one transaction and reads it back into out. */
static void save_and_load(const char *db, const struct gpubreak *g, struct gpubreak *out)
{
	struct store *st;
	char *err = NULL;
	if (store_open(db, STORE_WRITE, &st, &err) < 0 || store_begin(st, &err) < 0 ||
	    gpucache_save(store_db(st), g, &err) < 0 || store_commit(st, &err) < 0)
		fail_msg("save: %s", err ? err : "?");
	store_close(st);
	if (store_open(db, STORE_READ, &st, &err) < 0 || gpucache_load(store_db(st), out, &err) < 0)
		fail_msg("load: %s", err ? err : "?");
	store_close(st);
}

static void add_kernel(struct gpubreak_rank *r, const char *name, int type, int others,
		       int64_t names, int64_t count, int64_t sum, int64_t min, int64_t max)
{
	r->kernels = xrealloc(r->kernels, (r->nkernels + 1) * sizeof(*r->kernels));
	r->kernels[r->nkernels++] =
	    (struct gpubreak_kernel){xstrdup(name), type, others, names, count, sum, min, max};
}

/*
 * Two ranks.  The first, of a source and a stream that exist, has what the
 * definitions allow at their edges: a negative kernel-wait sum (overlapping
 * items on one stream), kernels of every type with an "others" fold in the
 * middle of the list (the order is the rank's, not by sum), a name with a
 * quote and UTF-8, a stream name ending in a space, mixes of one type and
 * of all three.  The second names a source with no row (its path reads ""),
 * has no kernel and no stream, and holds int64's extremes.
 */
static void test_round_trip_by_hand(void **state)
{
	struct fx *f = *state;
	struct store *st;
	char *err = NULL;
	assert_int_equal(store_open(f->db, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	struct source_row src = {
	    .path = "runs/rank 'ü'.json", .format = "chrome", .anchor = "absolute", .rank = 2};
	int64_t sid = store_add_source(st, &src, &err);
	struct track_row tr = {.source_id = sid, .kind = "stream", .name = "stream 7 ", .rank = 2};
	int64_t tid = store_add_track(st, &tr, &err);
	assert_true(sid > 0 && tid > 0);
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);

	struct gpubreak g = {.ranks = xcalloc(2, sizeof(*g.ranks)), .nranks = 2}, back;
	struct gpubreak_rank *r = &g.ranks[0];
	r->source_id = sid;
	r->source = xstrdup(src.path);
	r->rank = 2;
	r->items = 12;
	r->left_out = 3;
	r->cutoff_ns = 1795364996824806512;
	r->time = (struct gpubreak_temporal){220000, 165000, 50000, 5000};
	r->cause = (struct gpubreak_causes){{1000, 0, 4000, 150000, 10000}, {3, 0, 1, 1, 2}};
	r->type_ns[GPUBREAK_COMM] = 7000;
	r->type_ns[GPUBREAK_COMP] = 50000;
	r->type_ns[GPUBREAK_MEM] = 5000;
	r->mix_ns[1 << GPUBREAK_COMP] = 43000;
	r->mix_ns[1 << GPUBREAK_MEM] = 4000;
	r->mix_ns[(1 << GPUBREAK_NTYPES) - 1] = 1000;
	r->mix_ns[(1 << GPUBREAK_COMM) | (1 << GPUBREAK_COMP)] = 6000;
	r->comm_ns = 7000;
	r->overlap_ns = 7000;
	add_kernel(r, "ncclDevKernel_AllReduce", GPUBREAK_COMM, 0, 1, 2, 7000, 3000, 4000);
	add_kernel(r, "gemm \"x\" ü", GPUBREAK_COMP, 0, 1, 4, 30000, 5000, 10000);
	add_kernel(r, "others", GPUBREAK_COMP, 1, 3, 5, 20000, 1000, 9000);
	add_kernel(r, "Memcpy DtoH (Device -> Pinned)", GPUBREAK_MEM, 0, 1, 1, 5000, 5000, 5000);
	r->streams = xcalloc(1, sizeof(*r->streams));
	r->nstreams = 1;
	r->streams[0] = (struct gpubreak_stream){
	    tid,
	    xstrdup("stream 7 "),
	    12,
	    {220000, 165000, 50000, 5000},
	    {{78000, -300, 80000}, {1, 2, 1}},
	    {{0, 2000, 0, 160000, 3000}, {0, 2, 0, 1, 1}},
	    {3, 5000, 805306368, 2, 4000, INT64_MAX},
	    NULL,
	    0,
	};
	r = &g.ranks[1];
	r->source_id = sid + 1000;
	r->source = xstrdup("");
	r->rank = -1;
	r->time = (struct gpubreak_temporal){INT64_MAX, 0, INT64_MAX, INT64_MIN};
	r->type_ns[GPUBREAK_COMP] = INT64_MAX;
	r->mix_ns[1 << GPUBREAK_COMP] = INT64_MAX;

	save_and_load(f->db, &g, &back);
	assert_gpubreak_equal(&g, &back);
	gpubreak_release(&back);

	/* saving again replaces the rows: an empty breakdown reads empty */
	struct gpubreak none = {.ranks = NULL};
	save_and_load(f->db, &none, &back);
	assert_int_equal(back.nranks, 0);
	gpubreak_release(&back);
	gpubreak_release(&g);
}

/* Imports the four Kineto traces of the capture (not its nvidia-smi rows:
 * without a metric the attribution is empty, see test_report_from_cache). */
static void import_capture(struct fx *f)
{
	char *paths[] = {GPU "train.pt.trace.json.gz", GPU "eval.pt.trace.json.gz",
			 GPU "ddp_rank0.pt.trace.json.gz", GPU "ddp_rank1.pt.trace.json.gz"};
	struct import_opts none = {0};
	char *err = NULL;
	if (import_files(f->db, paths, 4, NULL, &none, &err) < 0)
		fail_msg("import: %s", err ? err : "?");
}

static void compute(const char *db, struct gpubreak *g)
{
	struct store *st;
	char *err = NULL;
	if (store_open(db, STORE_READ, &st, &err) < 0 || gpubreak_load(st, NULL, g, &err) < 0)
		fail_msg("gpubreak_load: %s", err ? err : "?");
	store_close(st);
}

static void test_round_trip_capture(void **state)
{
	struct fx *f = *state;
	struct gpubreak g, back;
	import_capture(f);
	compute(f->db, &g);
	/* what the round trip must carry: ranks and none, an "others" fold,
	 * more than one stream, work left out of the last step */
	int folds = 0, unranked = 0, ranked = 0, streams = 0, left_out = 0;
	for (size_t i = 0; i < g.nranks; i++) {
		for (size_t k = 0; k < g.ranks[i].nkernels; k++)
			folds += g.ranks[i].kernels[k].others;
		unranked += g.ranks[i].rank < 0;
		ranked += g.ranks[i].rank >= 0;
		streams += g.ranks[i].nstreams > 1;
		left_out += g.ranks[i].left_out > 0;
	}
	assert_int_equal(g.nranks, 4);
	assert_int_equal(unranked, 2);
	assert_int_equal(ranked, 2);
	assert_true(folds >= 4);
	assert_true(streams > 0);
	assert_int_equal(left_out, 4);
	save_and_load(f->db, &g, &back);
	assert_gpubreak_equal(&g, &back);
	gpubreak_release(&back);
	gpubreak_release(&g);
}

static void exec_sql(const char *db, const char *sql)
{
	sqlite3 *c;
	assert_int_equal(sqlite3_open(db, &c), SQLITE_OK);
	if (sqlite3_exec(c, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(c));
	sqlite3_close(c);
}

static int64_t int_of(struct store *st, const char *sql)
{
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(store_db(st), sql, -1, &q, NULL), SQLITE_OK);
	int64_t v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
	sqlite3_finalize(q);
	return v;
}

/* `grademl-tui analyze` on the file. */
static void analyze(const char *db)
{
	struct store *st;
	struct analysis an;
	char *err = NULL;
	if (store_open(db, STORE_WRITE, &st, &err) < 0 || store_begin(st, &err) < 0 ||
	    analysis_run(st, &an, &err) < 0)
		fail_msg("analyze: %s", err ? err : "?");
	if (analysis_save(st, &an, &err) < 0 || store_commit(st, &err) < 0)
		fail_msg("analyze: %s", err ? err : "?");
	analysis_release(&an);
	store_close(st);
}

/*
 * A file analysed by v3 has every cache table but the GPU breakdowns' and
 * a signature "v3 ...".  Read as it is, its cache is stale and the
 * analyses are computed; its first write adds the v4 and v5 tables (and
 * v5's issue cause), still stale, until `analyze` writes them.
 */
static void test_v3_file(void **state)
{
	struct fx *f = *state;
	struct gpubreak want;
	import_capture(f);
	compute(f->db, &want);
	analyze(f->db);
	exec_sql(f->db,
		 "DROP TABLE gpu_breakdown; DROP TABLE gpu_breakdown_mix;"
		 " DROP TABLE gpu_breakdown_kernels; DROP TABLE gpu_breakdown_streams;"
		 " DROP TABLE gpu_breakdown_causes; DROP TABLE gpu_breakdown_copies;"
		 " ALTER TABLE issues DROP COLUMN cause; PRAGMA user_version = 3;"
		 " UPDATE meta SET value = '3' WHERE key = 'schema_version';"
		 " UPDATE meta SET value = 'v3 ' || substr(value, 4) WHERE key = 'analysis_of'");

	struct store *st;
	struct analysis an;
	char *err = NULL;
	assert_int_equal(store_open(f->db, STORE_READ, &st, &err), 0);
	assert_int_equal(analysis_fresh(store_db(st)), 0);
	assert_int_equal(analysis_get(st, &an, &err), 0);
	assert_int_equal(an.cached, 0);
	assert_gpubreak_equal(&want, &an.gpu);
	analysis_release(&an);
	store_close(st);

	assert_int_equal(store_open(f->db, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	assert_int_equal(int_of(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(int_of(st, "SELECT count(*) FROM pragma_table_info('issues')"
				    " WHERE name = 'cause'"),
			 1);
	assert_int_equal(int_of(st, "SELECT count(*) FROM gpu_breakdown"), 0);
	assert_int_equal(analysis_fresh(store_db(st)), 0);
	store_close(st);

	analyze(f->db);
	assert_int_equal(store_open(f->db, STORE_READ, &st, &err), 0);
	assert_int_equal(analysis_get(st, &an, &err), 0);
	assert_int_equal(an.cached, 1);
	assert_gpubreak_equal(&want, &an.gpu);
	analysis_release(&an);
	store_close(st);
	gpubreak_release(&want);
}

static char *report(const char *db, enum report_format fmt)
{
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_non_null(out);
	if (report_write(out, db, fmt, &err) < 0)
		fail_msg("report: %s", err ? err : "?");
	fclose(out);
	return buf;
}

/* The report of the analysed file, read from the cache, is the report
 * computed in memory, byte for byte (rank 1, named by its step path: 1028
 * items, as tests/expected/gpubreak/h100_ddp_rank1.txt has them); and it is read
 * from the cache: a figure changed there shows. */
static void test_report_from_cache(void **state)
{
	struct fx *f = *state;
	import_capture(f);
	char *text = report(f->db, REPORT_TEXT), *json = report(f->db, REPORT_JSON);
	analyze(f->db);
	char *ctext = report(f->db, REPORT_TEXT), *cjson = report(f->db, REPORT_JSON);
	assert_string_equal(ctext, text);
	assert_string_equal(cjson, json);
	assert_non_null(strstr(text, "/rank 1: 1028 items"));
	free(ctext);

	exec_sql(f->db, "UPDATE gpu_breakdown SET items = 4242 WHERE rank = 1");
	ctext = report(f->db, REPORT_TEXT);
	assert_non_null(strstr(ctext, "/rank 1: 4242 items"));
	free(ctext);
	free(cjson);
	free(text);
	free(json);
}

/* A row the cache cannot hold is an error, not a wrong figure. */
static void test_bad_rows(void **state)
{
	struct fx *f = *state;
	struct gpubreak g;
	struct store *st;
	char *err = NULL;
	import_capture(f);
	analyze(f->db);
	exec_sql(f->db, "UPDATE gpu_breakdown_kernels SET type = 'GRAPHICS' WHERE seq = 1");
	assert_int_equal(store_open(f->db, STORE_READ, &st, &err), 0);
	assert_int_equal(gpucache_load(store_db(st), &g, &err), -1);
	assert_non_null(strstr(err, "unknown kernel type 'GRAPHICS'"));
	assert_int_equal(g.nranks, 0);
	free(err);
	store_close(st);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_round_trip_by_hand), T(test_round_trip_capture), T(test_v3_file),
	    T(test_report_from_cache),	T(test_bad_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
