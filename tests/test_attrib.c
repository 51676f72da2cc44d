/*
 * Resource attribution (model/analysis/attrib.c) on cases small enough to work out
 * by hand: the three-pass upsampling of one sample period, a saturated GPU,
 * a CPU demand fitted by NNLS, phases of another host never charged, the
 * cache's round trip, and a phase's usage over time (attrib_series) by
 * hand and on the real captures (tests/data/demo, tests/data/gpu, imported
 * with GRADEML_BIN; skipped without it).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/analysis/attrib.h"
#include "model/store/ptree.h"
#include "model/store/schema.sql.h"
#include "model/store/store.h"
#include "tests/testdir.h"
#include "tests/skip.h"

#define MS 1000000LL

/* One period, two halves: phase A with Exact(50) in the first, phase B
 * with Variable(1) in both; the sample says 60 of 100.
 *   exact:      need 50 * .5 = 25 <= 60, so the first half gets 50; 35 left
 *   variable:   by demand / room: first half (1/50) before second (1/100);
 *               first: min(35 / 1 * 1, 100 - 50) = 35 -> 85; 17.5 left;
 *               second: min(17.5 / .5 * 1, 100) = 35
 * So 85 then 35, which average to 60; A gets 50 of the 85 and B 35 of each. */
static void test_upsample_exact_and_variable(void **state)
{
	(void)state;
	double e[] = {50, 0}, v[] = {1, 1}, f[] = {.5, .5}, u[2];
	attrib_upsample(2, e, v, f, 60, 100, u);
	assert_true(fabs(u[0] - 85) < 1e-9);
	assert_true(fabs(u[1] - 35) < 1e-9);
}

/* More usage than demand and capacity allow: exact first (capped at its
 * demand), variable up to capacity, then the background spreads the rest
 * evenly under the cap.  Demands: first half exact 40; second half none.
 * value 90: exact gives 40 (20 used, 70 left); no variable demand;
 * background by value, highest first: first half min(70 / 1, 60) = 60
 * -> 100, 40 left over .5; second half min(40 / .5, 100) = 80. */
static void test_upsample_background_capped(void **state)
{
	(void)state;
	double e[] = {40, 0}, v[] = {0, 0}, f[] = {.5, .5}, u[2];
	attrib_upsample(2, e, v, f, 90, 100, u);
	assert_true(fabs(u[0] - 100) < 1e-9);
	assert_true(fabs(u[1] - 80) < 1e-9);
}

struct fx {
	char path[64];
	sqlite3 *db;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/grademl-attrib-XXXXXX");
	int fd = mkstemp(f->path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(f->db, store_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(f->db, store_schema_v2_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(f->db, store_schema_v3_sql, NULL, NULL, NULL), SQLITE_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	sqlite3_close(f->db);
	unlink(f->path);
	free(f);
	return 0;
}

static void sql(sqlite3 *db, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *err = NULL;
	if (sqlite3_exec(db, buf, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", buf, err);
}

static void phase(sqlite3 *db, int id, int parent, int kind, int track, long long t0, long long t1,
		  int children)
{
	sql(db,
	    "INSERT INTO phases(id, parent_id, kind, name_id, track_id, start_ns, dur_ns, self_ns,"
	    " child_count, depth) VALUES (%d, nullif(%d, 0), %d, 1, nullif(%d, 0), %lld, %lld, 0,"
	    " %d, 0)",
	    id, parent, kind, track, t0, t1 - t0, children);
}

static const struct attrib_row *row(const struct attribution *a, int64_t id)
{
	const struct attrib_row *r = attrib_find(a, id);
	assert_non_null(r);
	return r;
}

/* GPU 0 of host h: kernels [0, 40) and [60, 100) ms on one stream under a
 * stream node spanning [0, 100); utilization.gpu says `util` over [0, 100)
 * (and 0 over [100, 200): the last sample holds one period).  Kernels have
 * Exact(100) demand: the exact pass needs 100 * .8 = 80, what an 80%
 * sample holds, so each kernel is charged 100% while it runs: the stream
 * node's device work is 80 ms and its mean use 80 ms * 1.0 / 100 ms = 0.8
 * of the GPU.  Upsampled use never says a resource was saturated: at 80%
 * the GPU was not, and the node's 100 ms are software-bound; at 97% it
 * was, the whole 100 ms.  A kernel of host "other" at the same time, with
 * no metric of its own, is never charged.  All of it from t0 on; kernel
 * 3's stored duration is last_dur. */
static void gpu_at(struct fx *f, long long t0, long long last_dur, int util)
{
	sqlite3 *db = f->db;
	sql(db,
	    "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
	    " (1, 1, 'stream', '0', 'stream 7', 'h'), (2, 1, 'stream', '0', 'stream 7', 'other')");
	phase(db, 1, 0, PHASE_STREAM, 1, t0, t0 + 100 * MS, 2);
	phase(db, 2, 1, PHASE_KERNEL, 1, t0, t0 + 40 * MS, 0);
	phase(db, 3, 1, PHASE_KERNEL, 1, t0 + 60 * MS, t0 + 100 * MS, 0);
	sql(db, "UPDATE phases SET dur_ns = %lld WHERE id = 3", last_dur);
	phase(db, 4, 0, PHASE_STREAM, 2, t0, t0 + 100 * MS, 1);
	phase(db, 5, 4, PHASE_KERNEL, 2, t0, t0 + 100 * MS, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'gpu0', 'utilization.gpu', '%%', 'instant', 100)");
	sql(db, "INSERT INTO samples VALUES (1, %lld, %d), (1, %lld, 0)", t0, util, t0 + 100 * MS);
	struct attribution a;
	char *err = NULL;
	int sat = util >= 95;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	const struct attrib_row *r = row(&a, 1);
	assert_int_equal(r->busy_ns[1], 80 * MS);
	assert_int_equal(r->bneck_ns[ATTRIB_GPU], sat ? 100 * MS : 0);
	assert_int_equal(r->data_ns, 100 * MS);
	assert_int_equal(r->free_ns, sat ? 0 : 100 * MS);
	assert_true(fabs(r->use[ATTRIB_GPU] - 0.8) < 1e-9);
	assert_true(r->mask & (1u << ATTRIB_GPU));
	assert_null(attrib_find(&a, 4));
	assert_null(attrib_find(&a, 5));
	/* GradeML's estimate: g = 1, nothing else: the whole duration goes,
	 * or for software-bound the 80 ms its work covers */
	struct attrib_bneck b[ATTRIB_NBNECK];
	assert_int_equal(attrib_bottlenecks(r, b), 1);
	assert_int_equal(b[0].res, sat ? ATTRIB_GPU : ATTRIB_SOFTWARE);
	assert_int_equal(b[0].without_ns, sat ? 0 : 20 * MS);
	/* the cache keeps what the explorer and report read */
	sql(db, "BEGIN");
	assert_int_equal(attrib_save(db, &a, &err), 0);
	sql(db, "COMMIT");
	struct attrib_row back;
	assert_int_equal(attrib_read(db, 1, &back), 1);
	assert_int_equal(back.bneck_ns[ATTRIB_GPU], r->bneck_ns[ATTRIB_GPU]);
	assert_int_equal(back.busy_ns[1], r->busy_ns[1]);
	assert_int_equal(back.data_ns, r->data_ns);
	assert_int_equal(back.free_ns, r->free_ns);
	assert_true(fabs(back.use[ATTRIB_GPU] - 0.8) < 1e-9);
	assert_int_equal(attrib_read(db, 5, &back), 0);
	attrib_release(&a);
}

static void test_gpu_at_80(void **state)
{
	gpu_at(*state, 0, 40 * MS, 80);
}

static void test_saturated_gpu(void **state)
{
	gpu_at(*state, 0, 40 * MS, 97);
}

/* The same at the ends of time, where the sweep's arithmetic on times
 * must not overflow: work from INT64_MIN on; work up to INT64_MAX - 1 with
 * kernel 3 ending at INT64_MAX itself, or past it (a trace.db is an
 * ordinary file: anyone may write one).  Times are held below INT64_MAX,
 * which the sweep keeps for "no more events", so kernel 3 is cut at
 * INT64_MAX - 1, its stream's end, and the figures are the same. */
static void test_saturated_gpu_at_the_start_of_time(void **state)
{
	gpu_at(*state, INT64_MIN, 40 * MS, 97);
}

static void test_saturated_gpu_at_the_end_of_time(void **state)
{
	gpu_at(*state, INT64_MAX - 1 - 100 * MS, 40 * MS + 1, 97);
}

static void test_saturated_gpu_past_the_end_of_time(void **state)
{
	gpu_at(*state, INT64_MAX - 1 - 100 * MS, 90 * MS, 97);
}

/* A GPU measured by its trace's device work (attrib.h).  A step over
 * [-100, 200) ms of host h whose trace covers [0, 100) (its thread's node;
 * a runtime call on it) and gives GPU 0's kernels [10, 40) and [60, 100);
 * utilization.gpu of gpu0 reads 100 over [-100, 0), 0 over [0, 100) (the
 * row nvidia-smi took while CUPTI idled the GPU) and 100 over [100, 200).
 * Where the trace covers, its device work is the measurement: the GPU is
 * saturated 70 ms there, not 0; nvidia-smi's rows decide the 200 ms
 * outside.  Without the series the trace alone measures its 100 ms. */
/* Kernels of one stream may overlap (Hopper starts a dependent kernel
 * before the one it waits for ends): [0, 40) and [30, 100) ms.  The
 * stream's busy time is their union, 100 ms, not 110; each kernel keeps
 * its own work. */
static void test_overlapping_kernels(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
		" (1, 1, 'stream', '0', 'stream 7', 'h')");
	phase(db, 1, 0, PHASE_STREAM, 1, 0, 100 * MS, 2);
	phase(db, 2, 1, PHASE_KERNEL, 1, 0, 40 * MS, 0);
	phase(db, 3, 1, PHASE_KERNEL, 1, 30 * MS, 100 * MS, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'gpu0', 'utilization.gpu', '%%', 'instant', 100)");
	sql(db, "INSERT INTO samples VALUES (1, 0, 80), (1, %lld, 0)", 100 * MS);
	struct attribution a;
	char *err = NULL;
	if (attrib_compute(db, f->path, &a, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(row(&a, 1)->busy_ns[1], 100 * MS);
	assert_int_equal(row(&a, 1)->cover_ns[1], 100 * MS);
	attrib_release(&a);
}

static void device_work_measures(struct fx *f, int with_nvsmi)
{
	sqlite3 *db = f->db;
	sql(db,
	    "INSERT INTO tracks(id, source_id, kind, pid, tid, host, phase_id, spans) VALUES"
	    " (1, 1, 'thread', '9', '9', 'h', 1, 1), (2, 1, 'stream', '0', 'stream 7', 'h', 3, 2)");
	phase(db, 10, 0, PHASE_STEP, 0, -100 * MS, 200 * MS, 2);
	phase(db, 1, 10, PHASE_THREAD, 1, 0, 100 * MS, 1);
	phase(db, 2, 1, PHASE_RUNTIME, 1, 5 * MS, 95 * MS, 0);
	phase(db, 3, 10, PHASE_STREAM, 2, 10 * MS, 100 * MS, 2);
	phase(db, 4, 3, PHASE_KERNEL, 2, 10 * MS, 40 * MS, 0);
	phase(db, 5, 3, PHASE_KERNEL, 2, 60 * MS, 100 * MS, 0);
	sql(db, "UPDATE phases SET depth = CASE WHEN id IN (1, 3) THEN 1 WHEN id = 10 THEN 0"
		" ELSE 2 END"); /* the walk up stops at depth */
	if (with_nvsmi) {
		sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity)"
			" VALUES (1, 'h', 'gpu0', 'utilization.gpu', '%%', 'instant', 100)");
		sql(db,
		    "INSERT INTO samples VALUES (1, %lld, 100), (1, 0, 0), (1, %lld, 100),"
		    " (1, %lld, 0)",
		    -100 * MS, 100 * MS, 200 * MS);
	}
	struct attribution a;
	char *err = NULL;
	if (attrib_compute(db, f->path, &a, &err) < 0)
		fail_msg("%s", err);
	const struct attrib_row *r = row(&a, 10);
	assert_int_equal(r->dur_ns, 300 * MS);
	assert_int_equal(r->bneck_ns[ATTRIB_GPU], with_nvsmi ? 270 * MS : 70 * MS);
	assert_int_equal(r->data_ns, with_nvsmi ? 300 * MS : 100 * MS);
	assert_int_equal(r->free_ns, 30 * MS);
	assert_int_equal(r->traced_ns, 100 * MS);
	assert_int_equal(r->devbusy_ns, 70 * MS);
	/* each kernel is charged the whole GPU while it runs (the exact
	 * demand of device work), nothing where none runs */
	assert_true(fabs(r->use[ATTRIB_GPU] - 70.0 / 300) < 1e-9);
	assert_true(fabs(row(&a, 3)->use[ATTRIB_GPU] - 70.0 / 90) < 1e-9);
	struct attrib_bneck b[ATTRIB_NBNECK];
	assert_true(attrib_bottlenecks(r, b) >= 1);
	assert_int_equal(b[0].res, ATTRIB_GPU);
	/* over time the same: [0, 50) has 30 ms of kernels, [50, 100) 40 */
	double out[ATTRIB_NRES * 2];
	if (attrib_series(db, f->path, &a, 10, 0, 100 * MS, 2, out, &err) < 0)
		fail_msg("%s", err);
	if (fabs(out[ATTRIB_GPU * 2] - 0.6) > 1e-9 || fabs(out[ATTRIB_GPU * 2 + 1] - 0.8) > 1e-9)
		fail_msg("gpu over time %g %g", out[ATTRIB_GPU * 2], out[ATTRIB_GPU * 2 + 1]);
	/* the cache keeps the traced figures */
	sql(db, "BEGIN");
	assert_int_equal(attrib_save(db, &a, &err), 0);
	sql(db, "COMMIT");
	struct attrib_row back;
	assert_int_equal(attrib_read(db, 10, &back), 1);
	assert_int_equal(back.traced_ns, 100 * MS);
	assert_int_equal(back.devbusy_ns, 70 * MS);
	assert_int_equal(back.bneck_ns[ATTRIB_GPU], r->bneck_ns[ATTRIB_GPU]);
	attrib_release(&a);
}

static void test_device_work_beside_nvsmi(void **state)
{
	device_work_measures(*state, 1);
}

static void test_device_work_alone(void **state)
{
	device_work_measures(*state, 0);
}

/* One CPU thread of host h, [0, 3) s, running operator 2 over [0, 1.5) s;
 * cpu.util samples 60 | 30 | 0 over the three seconds, and cpu.idle,
 * which is not attributed. */
static void one_operator(sqlite3 *db)
{
	long long s = 1000 * MS;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
		" (1, 1, 'thread', '10', '10', 'h')");
	phase(db, 1, 0, PHASE_THREAD, 1, 0, 3 * s, 1);
	phase(db, 2, 1, PHASE_OPERATOR, 1, 0, 3 * s / 2, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'cpu', 'cpu.util', '%%', 'mean', 100),"
		" (2, 'h', 'cpu', 'cpu.idle', '%%', 'mean', 100)");
	sql(db, "INSERT INTO samples VALUES (1, 0, 60), (1, %lld, 30), (1, %lld, 0), (1, %lld, 0)",
	    s, 2 * s, 3 * s);
}

/* One CPU thread of host h: operator A over [0, 1.5) s inside a thread
 * node over [0, 3) s; cpu.util samples 60 | 30 | 0 over three seconds.
 * A is active 1, 0.5 and 0 of the three periods, so NNLS fits A's
 * Variable demand to 60 exactly (60 = 1 d, 30 = .5 d).  Upsampled, A runs
 * at 60 in both of its periods: mean use 0.6 of the CPU.  Measured, the
 * CPU is never saturated, so all 1.5 s of its window are software-bound,
 * and the thread's 3 s too. */
static void test_cpu_fit(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS;
	one_operator(db);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	assert_int_equal(a.nfits, 1); /* cpu.idle is not attributed */
	assert_true(fabs(a.fits[0].demand - 60) < 1e-6);
	assert_string_equal(a.fits[0].type, "operator");
	const struct attrib_row *r = row(&a, 2);
	assert_int_equal(r->busy_ns[0], 3 * s / 2);
	assert_true(fabs(r->use[ATTRIB_CPU] - 0.6) < 1e-6);
	assert_int_equal(r->bneck_ns[ATTRIB_CPU], 0);
	assert_int_equal(r->data_ns, 3 * s / 2);
	assert_int_equal(r->free_ns, 3 * s / 2);
	/* the thread node sums its child: 0.9 CPU-seconds over 3 s */
	const struct attrib_row *t = row(&a, 1);
	assert_true(fabs(t->use[ATTRIB_CPU] - 0.3) < 1e-6);
	struct attrib_bneck b[ATTRIB_NBNECK];
	assert_int_equal(attrib_bottlenecks(t, b), 1);
	assert_int_equal(b[0].res, ATTRIB_SOFTWARE);
	assert_true(fabs(b[0].frac - 1) < 1e-9);
	attrib_release(&a);
}

/* The same operator under the user's rules: a fixed variable demand is
 * kept, not fitted, and still takes all the observed use (nothing else
 * runs); Exact(20) takes 20 whenever it runs (1.5 s x 20 = 30 %-seconds,
 * 0.2 of a CPU over its 1.5 s) and leaves the rest to background; None
 * takes nothing.  The file's meta 'demand_rules' is what attrib_compute
 * applies. */
static void test_rules(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS;
	one_operator(db);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute_rules(db, f->path, "operator cpu variable 40", &a, &err),
			 0);
	assert_int_equal(a.nfits, 1);
	assert_int_equal(a.fits[0].exact, 0);
	assert_true(a.fits[0].demand == 40);
	assert_true(fabs(row(&a, 2)->use[ATTRIB_CPU] - 0.6) < 1e-6);
	attrib_release(&a);
	assert_int_equal(attrib_compute_rules(db, f->path, " ;operator cpu exact 20;", &a, &err),
			 0);
	assert_int_equal(a.fits[0].exact, 1);
	assert_true(a.fits[0].demand == 20);
	assert_true(fabs(row(&a, 2)->use[ATTRIB_CPU] - 0.2) < 1e-6);
	attrib_release(&a);
	/* exact without a demand: the capacity, capped by what was observed */
	assert_int_equal(attrib_compute_rules(db, f->path, "operator cpu exact", &a, &err), 0);
	assert_true(a.fits[0].demand == 100);
	assert_true(fabs(row(&a, 2)->use[ATTRIB_CPU] - 0.6) < 1e-6);
	attrib_release(&a);
	sql(db, "INSERT INTO meta VALUES ('demand_rules', 'operator cpu none')");
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	const struct attrib_row *r = row(&a, 2);
	assert_int_equal(r->busy_ns[0], 3 * s / 2);
	assert_false(r->mask & (1u << ATTRIB_CPU));
	assert_true(r->use[ATTRIB_CPU] == 0);
	attrib_release(&a);
	/* a bad rule in the file is an error naming the file and the rule */
	sql(db, "UPDATE meta SET value = 'operator cpu sometimes' WHERE key = 'demand_rules'");
	assert_int_equal(attrib_compute(db, f->path, &a, &err), -1);
	assert_non_null(strstr(err, f->path));
	assert_non_null(strstr(err, "'operator cpu sometimes'"));
	free(err);
}

/* What attrib_rules_parse refuses, and why. */
static void test_rules_parse(void **state)
{
	(void)state;
	static const struct {
		const char *text, *why;
	} bad[] = {
	    {"operator cpu", "write TYPE RESOURCE"},
	    {"operator cpu variable 1 2", "too many words"},
	    {"kernal gpu exact", "no such phase type"},
	    {"kernel gpu0 exact", "no such resource"},
	    {"kernel software exact", "no such resource"},
	    {"kernel cpu exact", "device work demands gpu or gpu-mem only"},
	    {"operator gpu none", "host work demands cpu, disk or net only"},
	    {"operator cpu often", "exact, variable or none"},
	    {"operator cpu none 3", "none takes no demand"},
	    {"operator cpu exact -1", "a number >= 0"},
	    {"operator cpu exact nan", "a number >= 0"},
	    {"operator cpu exact 1x", "a number >= 0"},
	    {"operator cpu variable 1; memcpy net none", "'memcpy net none': device work"},
	    {"operatoroperatoroperatoroperatoroperator cpu none", "too long"},
	};
	struct attrib_rules r;
	char *err = NULL;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (attrib_rules_parse(bad[i].text, &r, &err) != -1)
			fail_msg("'%s' was taken", bad[i].text);
		if (!strstr(err, bad[i].why))
			fail_msg("'%s': %s", bad[i].text, err);
		free(err);
		err = NULL;
	}
	assert_int_equal(attrib_rules_parse("kernel gpu-mem variable 2.5\n\t memset gpu none ;"
					    "task disk exact",
					    &r, &err),
			 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.v[0].res, ATTRIB_GPU_MEM);
	assert_int_equal(r.v[0].dev, 1);
	assert_int_equal(r.v[0].rule, ATTRIB_RULE_VARIABLE);
	assert_true(r.v[0].demand == 2.5);
	assert_int_equal(r.v[1].rule, ATTRIB_RULE_NONE);
	assert_int_equal(r.v[2].res, ATTRIB_DISK);
	assert_true(isnan(r.v[2].demand));
	attrib_rules_release(&r);
	assert_int_equal(attrib_rules_parse(NULL, &r, &err), 0);
	assert_int_equal(r.n, 0);
}

/* A host of two CPUs judged by its parts, one operator per second on a
 * thread over [0, 4) s (sar's means, one a second):
 *   [0, 1)  cpu.util 55, cpu0 100, cpu1 10: one CPU saturated, not all:
 *           single-thread;
 *   [1, 2)  cpu.util 97: cpu;
 *   [2, 3)  cpu.util 20, the disk at 70% with iowait 30% of both CPUs (0.6
 *           of a CPU): disk, though under 95%;
 *   [3, 4)  the same disk with iowait 5% (0.1 of a CPU): software.
 * An operator a second keeps every metric's demand fitted above zero. */
static void test_bounds_by_parts(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
		" (1, 1, 'thread', '10', '10', 'h')");
	phase(db, 1, 0, PHASE_THREAD, 1, 0, 4 * s, 4);
	for (int i = 0; i < 4; i++)
		phase(db, 2 + i, 1, PHASE_OPERATOR, 1, i * s, (i + 1) * s, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'cpu', 'cpu.util', '%%', 'mean', 100),"
		" (2, 'h', 'cpu0', 'cpu0.util', '%%', 'mean', 100),"
		" (3, 'h', 'cpu1', 'cpu1.util', '%%', 'mean', 100),"
		" (4, 'h', 'cpu', 'cpu.iowait', '%%', 'mean', 100),"
		" (5, 'h', 'disk:vda', 'disk:vda.util-percent', '%%', 'mean', 100)");
	static const double v[4][5] = {
	    {55, 100, 10, 0, 1}, {97, 97, 97, 0, 1}, {20, 10, 30, 30, 70}, {20, 10, 30, 5, 70}};
	for (int i = 0; i < 4; i++)
		for (int m = 0; m < 5; m++)
			sql(db, "INSERT INTO samples VALUES (%d, %lld, %g)", m + 1, i * s, v[i][m]);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	const struct attrib_row *r = row(&a, 1);
	assert_true(r->mask & (1u << ATTRIB_CPU));
	assert_true(r->mask & (1u << ATTRIB_DISK));
	assert_int_equal(r->bneck_ns[ATTRIB_THREAD], s);
	assert_int_equal(r->bneck_ns[ATTRIB_CPU], s);
	assert_int_equal(r->bneck_ns[ATTRIB_DISK], s);
	assert_int_equal(r->free_ns, s);
	assert_int_equal(r->data_ns, 4 * s);
	struct attrib_bneck b[ATTRIB_NBNECK];
	for (int i = 0; i < 4; i++) {
		static const int want[4] = {ATTRIB_THREAD, ATTRIB_CPU, ATTRIB_DISK,
					    ATTRIB_SOFTWARE};
		assert_int_equal(attrib_bottlenecks(row(&a, 2 + i), b), 1);
		assert_int_equal(b[0].res, want[i]);
		assert_true(fabs(b[0].frac - 1) < 1e-9);
	}
	attrib_release(&a);
}

/* Nested phases on a thread: the innermost running one is charged.  An
 * operator [0, 1) s with a child [0.25, 0.75) s; cpu.util 100 over [0, 1):
 * saturated; the parent's own work is 0.5 s, the child's 0.5 s, and the
 * parent's row sums both: 1 s of work, all bottlenecked on cpu. */
static void test_nesting(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
		" (1, 1, 'thread', '10', '10', 'h')");
	phase(db, 1, 0, PHASE_OPERATOR, 1, 0, s, 1);
	phase(db, 2, 1, PHASE_OPERATOR, 1, s / 4, 3 * s / 4, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'cpu', 'cpu.util', '%%', 'mean', 100)");
	sql(db, "INSERT INTO samples VALUES (1, 0, 100), (1, %lld, 100), (1, %lld, 0)", s, 2 * s);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	assert_int_equal(row(&a, 2)->busy_ns[0], s / 2);
	assert_int_equal(row(&a, 1)->busy_ns[0], s);
	assert_int_equal(row(&a, 1)->bneck_ns[ATTRIB_CPU], s);
	assert_true(fabs(row(&a, 1)->use[ATTRIB_CPU] - 1) < 1e-6);
	attrib_release(&a);
}

/* A process over [0, 4) s with two threads, each one operator over the
 * same [1, 2) s; cpu.util 30 throughout: never saturated, so software-bound
 * over all 4 s.  Its work is 2 s of thread time but covers 1 s: removing
 * the software bound saves that 1 s (g = 1 over the time its work covers),
 * not 2 s, and the cache keeps the covered time. */
static void test_software_over_covered_time(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS;
	char *err = NULL;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
		" (1, 1, 'thread', '10', '10', 'h'), (2, 1, 'thread', '10', '11', 'h')");
	phase(db, 1, 0, PHASE_PROCESS, 0, 0, 4 * s, 2);
	phase(db, 2, 1, PHASE_OPERATOR, 1, s, 2 * s, 0);
	phase(db, 3, 1, PHASE_OPERATOR, 2, s, 2 * s, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'cpu', 'cpu.util', '%%', 'mean', 100)");
	for (int i = 0; i <= 4; i++)
		sql(db, "INSERT INTO samples VALUES (1, %lld, 30)", i * s);
	struct attribution a;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	const struct attrib_row *r = row(&a, 1);
	assert_int_equal(r->busy_ns[0], 2 * s);
	assert_int_equal(r->cover_ns[0], s);
	assert_int_equal(r->free_ns, 4 * s);
	struct attrib_bneck b[ATTRIB_NBNECK];
	assert_int_equal(attrib_bottlenecks(r, b), 1);
	assert_int_equal(b[0].res, ATTRIB_SOFTWARE);
	assert_int_equal(b[0].without_ns, 3 * s);
	sql(db, "BEGIN");
	assert_int_equal(attrib_save(db, &a, &err), 0);
	sql(db, "COMMIT");
	struct attrib_row back;
	assert_int_equal(attrib_read(db, 1, &back), 1);
	assert_int_equal(back.cover_ns[0], s);
	assert_int_equal(attrib_bottlenecks(&back, b), 1);
	assert_int_equal(b[0].without_ns, 3 * s);
	attrib_release(&a);
}

/* Device work hangs under the call that launched it: a step over [0, 100)
 * ms holds a CPU process (thread, operator, launch call) and a GPU process
 * with stream 7's node; the kernel [20, 60) ms is the call's child, not the
 * stream's.  The stream node and the GPU's process get its work as its
 * ancestors do (40 ms of device work, covering 40 ms, 0.4 of the GPU over
 * their 100 ms), and the step counts it once. */
static void test_stream_of_launched_work(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	char *err = NULL;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host, phase_id) VALUES"
		" (1, 1, 'thread', '10', '10', 'h', 3), (2, 1, 'stream', '0', '7', 'h', 7)");
	phase(db, 1, 0, PHASE_STEP, 0, 0, 100 * MS, 2);
	phase(db, 2, 1, PHASE_PROCESS, 0, 0, 100 * MS, 1);
	phase(db, 3, 2, PHASE_THREAD, 1, 0, 100 * MS, 1);
	phase(db, 4, 3, PHASE_OPERATOR, 1, 10 * MS, 30 * MS, 1);
	phase(db, 5, 4, PHASE_RUNTIME, 1, 15 * MS, 20 * MS, 1);
	phase(db, 6, 1, PHASE_PROCESS, 0, 0, 100 * MS, 1);
	phase(db, 7, 6, PHASE_STREAM, 2, 0, 100 * MS, 0);
	phase(db, 8, 5, PHASE_KERNEL, 2, 20 * MS, 60 * MS, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'gpu0', 'utilization.gpu', '%%', 'instant', 100)");
	sql(db, "INSERT INTO samples VALUES (1, 0, 40), (1, %lld, 0)", 100 * MS);
	struct attribution a;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	for (int id = 1; id <= 7; id++) {
		const struct attrib_row *r = row(&a, id);
		assert_int_equal(r->busy_ns[1], 40 * MS);
		if (r->dur_ns == 100 * MS) {
			assert_int_equal(r->cover_ns[1], 40 * MS);
			assert_true(fabs(r->use[ATTRIB_GPU] - 0.4) < 1e-9);
		}
	}
	attrib_release(&a);
}

/* Parent links that loop (test_nesting's two operators each other's
 * parent; then the second its own): attribution, and a phase's usage over
 * time, stop with an error naming the file and a phase, where they
 * charged up the loop for ever or recursed until the stack ran out. */
static void test_loop_is_an_error(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
		" (1, 1, 'thread', '10', '10', 'h')");
	phase(db, 1, 0, PHASE_OPERATOR, 1, 0, s, 1);
	phase(db, 2, 1, PHASE_OPERATOR, 1, s / 4, 3 * s / 4, 0);
	sql(db, "UPDATE phases SET depth = 1 WHERE id = 2");
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'cpu', 'cpu.util', '%%', 'mean', 100)");
	sql(db, "INSERT INTO samples VALUES (1, 0, 100), (1, %lld, 100), (1, %lld, 0)", s, 2 * s);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	double out[ATTRIB_NRES * 4];
	sql(db, "UPDATE phases SET parent_id = 2 WHERE id = 1");
	struct attribution b;
	assert_int_equal(attrib_compute(db, f->path, &b, &err), PTREE_LOOP);
	char want[128];
	snprintf(want, sizeof(want), "%s: phase 1's parents form a loop", f->path);
	assert_string_equal(err, want);
	free(err);
	sql(db, "UPDATE phases SET parent_id = NULL WHERE id = 1");
	sql(db, "UPDATE phases SET parent_id = 2 WHERE id = 2");
	assert_int_equal(attrib_series(db, "t.db", &a, 1, 0, s, 4, out, &err), PTREE_LOOP);
	assert_string_equal(err, "t.db: phase 2's parents form a loop");
	free(err);
	attrib_release(&a);
}

/* Work at both ends of time on one thread: the sweep from one to the other
 * spans more than INT64_MAX nanoseconds.  An operator over [MIN, MIN + 1)
 * s, where no sample is, and one over [MAX - 2, MAX - 1) s with cpu.util
 * 100 over it, as test_nesting's: the first has no data at all, the
 * second is all bound by cpu. */
static void test_times_far_apart(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS, t = INT64_MAX - 2 * s;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host) VALUES"
		" (1, 1, 'thread', '10', '10', 'h')");
	phase(db, 1, 0, PHASE_OPERATOR, 1, INT64_MIN, INT64_MIN + s, 0);
	phase(db, 2, 0, PHASE_OPERATOR, 1, t, t + s, 0);
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'cpu', 'cpu.util', '%%', 'mean', 100)");
	sql(db, "INSERT INTO samples VALUES (1, %lld, 100), (1, %lld, 100), (1, %lld, 0)", t, t + s,
	    t + 2 * s);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	assert_int_equal(row(&a, 1)->busy_ns[0], s);
	assert_int_equal(row(&a, 1)->bneck_ns[ATTRIB_CPU], 0);
	assert_int_equal(row(&a, 1)->data_ns, 0);
	assert_int_equal(row(&a, 1)->free_ns, 0);
	assert_true(attrib_nodata(row(&a, 1)) == 1);
	assert_int_equal(row(&a, 2)->busy_ns[0], s);
	assert_int_equal(row(&a, 2)->bneck_ns[ATTRIB_CPU], s);
	assert_true(fabs(row(&a, 2)->use[ATTRIB_CPU] - 1) < 1e-6);
	double out[ATTRIB_NRES * 2];
	assert_int_equal(attrib_series(db, f->path, &a, 2, t, t + s, 2, out, &err), 0);
	assert_true(fabs(out[ATTRIB_CPU * 2] - 1) < 1e-6 &&
		    fabs(out[ATTRIB_CPU * 2 + 1] - 1) < 1e-6);
	attrib_release(&a);
}

/* attrib_series reads a stream laid out as a run of ids (tracks.spans)
 * from the first sample on, and looks back from there for the work that
 * began before it: at the start of time there is no "before".  Kernels
 * [MIN, MIN + 40) and [MIN + 60, MIN + 100) ms on stream 1 (its node:
 * phase 1); utilization.gpu 100 from MIN + 20 ms to MIN + 100 ms: both
 * kernels run at 100% in it, so the stream's use over [MIN + 20, MIN +
 * 60) ms is 0.5, over [MIN + 60, MIN + 100) ms 1. */
static void test_series_at_the_start_of_time(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long t0 = INT64_MIN;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host, phase_id, spans) VALUES"
		" (1, 1, 'stream', '0', 'stream 7', 'h', 1, 2)");
	phase(db, 1, 0, PHASE_STREAM, 1, t0, t0 + 100 * MS, 2);
	phase(db, 2, 1, PHASE_KERNEL, 1, t0, t0 + 40 * MS, 0);
	phase(db, 3, 1, PHASE_KERNEL, 1, t0 + 60 * MS, t0 + 100 * MS, 0);
	sql(db, "UPDATE phases SET depth = 1 WHERE id > 1"); /* the walk up stops at depth */
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'gpu0', 'utilization.gpu', '%%', 'instant', 100)");
	sql(db, "INSERT INTO samples VALUES (1, %lld, 100), (1, %lld, 0)", t0 + 20 * MS,
	    t0 + 100 * MS);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	double out[ATTRIB_NRES * 2];
	if (attrib_series(db, f->path, &a, 1, t0 + 20 * MS, t0 + 100 * MS, 2, out, &err) < 0)
		fail_msg("%s", err);
	assert_true(fabs(out[ATTRIB_GPU * 2] - 0.5) < 1e-9);
	assert_true(fabs(out[ATTRIB_GPU * 2 + 1] - 1) < 1e-9);
	attrib_release(&a);
}

/* attrib_series over [t0, t1) in nb buckets, checked against want[]
 * (ATTRIB_CPU only; every other resource 0). */
static void check_series(sqlite3 *db, const struct attribution *a, int64_t id, int64_t t0,
			 int64_t t1, int nb, const double *want)
{
	double out[ATTRIB_NRES * 8];
	char *err = NULL;
	if (attrib_series(db, "t.db", a, id, t0, t1, nb, out, &err) < 0)
		fail_msg("%s", err);
	for (int x = 0; x < ATTRIB_NRES; x++)
		for (int b = 0; b < nb; b++) {
			double w = x == ATTRIB_CPU ? want[b] : 0;
			if (fabs(out[x * nb + b] - w) > 1e-9)
				fail_msg("phase %lld, %s, bucket %d: %g, not %g", (long long)id,
					 attrib_res_name(x), b, out[x * nb + b], w);
		}
}

/* Two threads of host h share its CPU: operator A over [0, 2) s on one
 * (under a thread node over [0, 4) s), B over [0.5, 2.5) s on the other.
 * cpu.util 60 | 80 | 20 | 0: A and B are active 1.5, 2, .5 and 0 of the
 * four periods, so NNLS fits Variable(40) exactly.  The first period's
 * half with both (key 2, demand 80) gets 80 first, the half with A alone
 * the 20 left over .5 s: 40; so every running operator gets 40 of 100 at
 * all times.  A's series over [0, 4) s in 8 buckets: 0.4 in the first four,
 * then 0; B's over [0.25, 2.25) s in 4 buckets: B starts halfway through
 * the first, so 0.2, then 0.4, 0.4, 0.4. */
static void test_series_shared_cpu(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = f->db;
	long long s = 1000 * MS;
	sql(db, "INSERT INTO tracks(id, source_id, kind, pid, tid, host, phase_id) VALUES"
		" (1, 1, 'thread', '10', '10', 'h', 1), (2, 1, 'thread', '10', '11', 'h', NULL)");
	phase(db, 1, 0, PHASE_THREAD, 1, 0, 4 * s, 1);
	phase(db, 2, 1, PHASE_OPERATOR, 1, 0, 2 * s, 0);
	phase(db, 3, 0, PHASE_OPERATOR, 2, s / 2, 5 * s / 2, 0);
	sql(db, "UPDATE phases SET depth = 1 WHERE id = 2"); /* the walk up stops at depth */
	sql(db, "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity) VALUES"
		" (1, 'h', 'cpu', 'cpu.util', '%%', 'mean', 100)");
	sql(db,
	    "INSERT INTO samples VALUES (1, 0, 60), (1, %lld, 80), (1, %lld, 20), (1, %lld, 0),"
	    " (1, %lld, 0)",
	    s, 2 * s, 3 * s, 4 * s);
	struct attribution a;
	char *err = NULL;
	assert_int_equal(attrib_compute(db, f->path, &a, &err), 0);
	assert_int_equal(a.nfits, 1);
	assert_true(fabs(a.fits[0].demand - 40) < 1e-6);
	assert_true(fabs(row(&a, 2)->use[ATTRIB_CPU] - 0.4) < 1e-6);
	const double a8[] = {.4, .4, .4, .4, 0, 0, 0, 0}, b4[] = {.2, .4, .4, .4};
	check_series(db, &a, 2, 0, 4 * s, 8, a8);
	check_series(db, &a, 1, 0, 4 * s, 8, a8); /* the thread node: A's */
	check_series(db, &a, 3, s / 4, 9 * s / 4, 4, b4);
	/* from the cache's demands rather than a's, the same */
	sql(db, "BEGIN");
	assert_int_equal(attrib_save(db, &a, &err), 0);
	sql(db, "COMMIT");
	check_series(db, NULL, 3, s / 4, 9 * s / 4, 4, b4);
	/* a window inside one bucket of a sample period: still 0.4 */
	const double one[] = {.4};
	check_series(db, NULL, 3, s, s + 1000, 1, one);
	double out[ATTRIB_NRES];
	assert_int_equal(attrib_series(db, "t.db", &a, 99, 0, s, 1, out, &err), -1);
	free(err);
	attrib_release(&a);
}

/* The cache gives back every figure of every row that has any: both
 * classes' work and software-bound time included (a phase with device work
 * and no host resource once read its device time as host time). */
static void check_cache_round_trip(const char *db_path, const struct attribution *a)
{
	sqlite3 *w;
	struct attribution back;
	char *err = NULL;
	assert_int_equal(sqlite3_open_v2(db_path, &w, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sql(w, "BEGIN");
	if (attrib_save(w, a, &err) < 0)
		fail_msg("%s", err);
	sql(w, "COMMIT");
	if (attrib_load(w, &back, &err) < 0)
		fail_msg("%s", err);
	size_t kept = 0;
	for (size_t i = 0; i < a->nrows; i++) {
		const struct attrib_row *r = &a->rows[i], *b = attrib_find(&back, r->phase_id);
		if (!r->mask && !r->busy_ns[0] && !r->busy_ns[1]) {
			assert_null(b);
			continue;
		}
		kept++;
		if (!b)
			fail_msg("phase %lld is not in the cache", (long long)r->phase_id);
		assert_int_equal(b->mask, r->mask);
		for (int c = 0; c < 2; c++)
			assert_int_equal(b->busy_ns[c], r->busy_ns[c]);
		assert_int_equal(b->data_ns, r->data_ns);
		assert_int_equal(b->free_ns, r->free_ns);
		for (int x = 0; x < ATTRIB_NBOUND; x++) {
			if (!(r->mask & (1u << (x == ATTRIB_THREAD ? ATTRIB_CPU : x))))
				continue;
			assert_int_equal(b->bneck_ns[x], r->bneck_ns[x]);
			assert_true(x >= ATTRIB_NRES || b->use[x] == r->use[x]);
		}
		struct attrib_row one;
		if (i % 97 == 0) {
			assert_int_equal(attrib_read(w, r->phase_id, &one), 1);
			assert_int_equal(one.busy_ns[0], r->busy_ns[0]);
			assert_int_equal(one.busy_ns[1], r->busy_ns[1]);
			assert_int_equal(one.free_ns, r->free_ns);
			assert_int_equal(one.data_ns, r->data_ns);
		}
	}
	assert_int_equal(back.nrows, kept);
	attrib_release(&back);
	sqlite3_close(w);
}

/* On a real capture: for phases of each kind asked, the series' integral
 * over a window that holds all the phase's work (kernels may end after
 * their launch) is its row's use times its duration. */
static void check_real(const char *script, const char *tag)
{
	const char *bin = getenv("GRADEML_BIN");
	char dir[256], cmd[1024], db_path[300];
	if (!bin || access(bin, X_OK))
		skip_because("GRADEML_BIN (%s) is not an executable", bin ? bin : "unset");
	if (access(script, R_OK))
		skip_because("%s is absent", script);
	assert_int_equal(testdir_make(dir, sizeof(dir), tag), 0);
	snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
	snprintf(cmd, sizeof(cmd), "bash %s '%s' '%s' >/dev/null 2>&1", script, bin, db_path);
	assert_int_equal(system(cmd), 0);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	struct attribution a;
	char *err = NULL;
	if (attrib_compute(db, db_path, &a, &err) < 0)
		fail_msg("%s", err);
	/* the longest phase of each kind, and a call whose child is a kernel */
	sqlite3_stmt *q;
	assert_int_equal(
	    sqlite3_prepare_v2(
		db,
		"WITH pick(id) AS (SELECT (SELECT id FROM phases WHERE kind = k.id ORDER BY"
		" dur_ns DESC LIMIT 1) FROM phase_kinds k WHERE k.name IN ('workflow', 'step', "
		"'rank',"
		" 'thread', 'profiler_step', 'operator', 'annotation') UNION SELECT (SELECT"
		" p.id FROM phases p JOIN phases c ON c.parent_id = p.id WHERE c.kind = (SELECT"
		" id FROM phase_kinds WHERE name = 'kernel') AND p.dur_ns >= 100000 ORDER BY"
		" p.dur_ns DESC LIMIT 1)), sub(top, id, e) AS (SELECT id, id, 0 FROM pick"
		" UNION ALL SELECT sub.top, p.id, p.start_ns + p.dur_ns FROM phases p JOIN sub"
		" ON p.parent_id = sub.id) SELECT p.id, p.start_ns, p.dur_ns,"
		" max(p.start_ns + p.dur_ns, max(sub.e)) FROM sub JOIN phases p ON p.id ="
		" sub.top GROUP BY p.id",
		-1, &q, NULL),
	    SQLITE_OK);
	int n = 0, charged = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(q, 0), t0 = sqlite3_column_int64(q, 1);
		int64_t dur = sqlite3_column_int64(q, 2), t1 = sqlite3_column_int64(q, 3);
		enum { NB = 8 };
		double out[ATTRIB_NRES * NB];
		if (attrib_series(db, db_path, &a, id, t0, t1, NB, out, &err) < 0)
			fail_msg("%s", err);
		const struct attrib_row *r = attrib_find(&a, id);
		for (int x = 0; x < ATTRIB_NRES; x++) {
			double sum = 0, want = r ? r->use[x] * (double)dur : 0;
			for (int b = 0; b < NB; b++) {
				int64_t lo = t0 + (t1 - t0) / NB * b + (t1 - t0) % NB * b / NB;
				int64_t hi =
				    t0 + (t1 - t0) / NB * (b + 1) + (t1 - t0) % NB * (b + 1) / NB;
				sum += out[x * NB + b] * (double)(hi - lo);
			}
			if (fabs(sum - want) > 1e-6 * fmax(want, 1e6))
				fail_msg("phase %lld, %s: series %g ns, row %g ns", (long long)id,
					 attrib_res_name(x), sum, want);
			charged |= want > 0;
		}
		n++;
	}
	sqlite3_finalize(q);
	assert_true(n >= 5);
	assert_true(charged);
	check_cache_round_trip(db_path, &a);
	attrib_release(&a);
	sqlite3_close(db);
	testdir_remove(dir);
}

static void test_series_demo(void **state)
{
	(void)state;
	check_real("tests/data/demo/import.sh", "attrib-demo");
}

static void test_series_gpu(void **state)
{
	(void)state;
	check_real("tests/data/gpu/import.sh", "attrib-gpu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_upsample_exact_and_variable),
	    cmocka_unit_test(test_upsample_background_capped),
	    cmocka_unit_test_setup_teardown(test_gpu_at_80, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_saturated_gpu, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_saturated_gpu_at_the_end_of_time, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_saturated_gpu_at_the_start_of_time, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_device_work_beside_nvsmi, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_device_work_alone, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overlapping_kernels, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_saturated_gpu_past_the_end_of_time, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_times_far_apart, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_series_at_the_start_of_time, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cpu_fit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_software_over_covered_time, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stream_of_launched_work, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bounds_by_parts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_loop_is_an_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
	    cmocka_unit_test(test_rules_parse),
	    cmocka_unit_test_setup_teardown(test_series_shared_cpu, setup, teardown),
	    cmocka_unit_test(test_series_demo),
	    cmocka_unit_test(test_series_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
