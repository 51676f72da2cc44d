/*
 * Unit tests for model/ingest/nest.h: spans fed straight to the builder, written
 * into a real store, and read back from the phases, edges and events tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ingest/nest.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "tests/testdir.h"
#include "model/util/xalloc.h"

#define ON_DEVICE NEST_ON_DEVICE

struct fx {
	char dir[256];
	char path[320];
	struct store *st;
	int64_t src, proc;
};

static int64_t intern(struct fx *f, const char *s)
{
	char *err = NULL;
	int64_t id = store_intern(f->st, s, strlen(s), &err);
	if (id <= 0)
		fail_msg("store_intern(%s): %s", s, err ? err : "?");
	return id;
}

/* Opens a new store at f->path inside a transaction, with one source and a
 * reserved process node. */
static void fx_open(struct fx *f)
{
	char *err = NULL;
	if (store_open(f->path, STORE_WRITE, &f->st, &err) < 0 || store_begin(f->st, &err) < 0)
		fail_msg("cannot open %s: %s", f->path, err ? err : "?");
	struct source_row sr = {
	    .path = "t.json", .format = "chrome", .anchor = "epoch", .rank = -1};
	f->src = store_add_source(f->st, &sr, &err);
	assert_true(f->src > 0);
	f->proc = store_reserve_phase_id(f->st);
}

/* Rolls back and closes: the file the test created disappears. */
static void fx_close(struct fx *f)
{
	if (!f->st)
		return;
	store_rollback(f->st);
	store_close(f->st);
	f->st = NULL;
}

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	if (testdir_make(f->dir, sizeof(f->dir), "nest") < 0) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/trace.db", f->dir);
	fx_open(f);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	fx_close(f);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static struct nest_track make_track(struct fx *f, int device, const char *name)
{
	char *err = NULL;
	struct nest_track t = {0};
	t.node_id = store_reserve_phase_id(f->st);
	t.parent_id = f->proc;
	t.name_id = intern(f, name);
	t.kind = device ? PHASE_STREAM : PHASE_THREAD;
	t.depth = 3;
	struct track_row tr = {.source_id = f->src,
			       .kind = device ? "stream" : "thread",
			       .pid = "1",
			       .tid = name,
			       .name = name,
			       .rank = -1,
			       .phase_id = t.node_id};
	t.track_id = store_add_track(f->st, &tr, &err);
	assert_true(t.track_id > 0);
	return t;
}

struct sp {
	uint32_t track;
	int role, flags, kind;
	int64_t start, dur;
	const char *name, *cat;
	int64_t corr;
	uint64_t flow;
	const char *attrs;
};

static void add(struct fx *f, struct nest *n, struct sp s)
{
	char *err = NULL;
	struct nest_span ns = {
	    .track = s.track,
	    .role = (uint8_t)s.role,
	    .flags = (uint8_t)s.flags,
	    .kind = (uint8_t)(s.kind ? s.kind : PHASE_OPERATOR),
	    .start = s.start,
	    .dur = s.dur,
	    .name_id = intern(f, s.name),
	    .cat_id = s.cat ? intern(f, s.cat) : 0,
	    .corr = s.corr,
	    .flow_cat = s.cat ? intern(f, s.cat) : 0,
	    .flow_id = s.flow,
	    .attrs = s.attrs,
	    .attrs_len = s.attrs ? strlen(s.attrs) : 0,
	};
	assert_int_equal(nest_add(n, &ns, &err), 0);
}

static void finish(struct fx *f, struct nest *n, struct nest_track *t, size_t nt, int64_t off,
		   struct nest_stats *stats)
{
	char *err = NULL;
	memset(stats, 0, sizeof(*stats));
	if (nest_finish(n, f->st, f->src, t, nt, off, stats, &err) < 0)
		fail_msg("nest_finish: %s", err ? err : "?");
}

struct prow {
	int64_t id, parent, kind, track, start, dur, self, device, children, depth;
};

static struct prow row_where(sqlite3 *db, const char *sql, int64_t arg, const char *text)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
	if (text)
		sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(s, 1, arg);
	if (sqlite3_step(s) != SQLITE_ROW)
		fail_msg("no phase for %s", text ? text : "id");
	struct prow r = {
	    sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
	    sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5),
	    sqlite3_column_int64(s, 6), sqlite3_column_int64(s, 7), sqlite3_column_int64(s, 8),
	    sqlite3_column_int64(s, 9),
	};
	if (sqlite3_step(s) == SQLITE_ROW)
		fail_msg("more than one phase for %s", text ? text : "id");
	sqlite3_finalize(s);
	return r;
}

#define PCOLS                                                                                      \
	"SELECT p.id, coalesce(p.parent_id, 0), p.kind, coalesce(p.track_id, 0), p.start_ns,"      \
	" p.dur_ns, p.self_ns, p.device_ns, p.child_count, p.depth FROM phases p"

/* The phase named `name` (exactly one). */
static struct prow byname(struct fx *f, const char *name)
{
	return row_where(store_db(f->st),
			 PCOLS " JOIN strings s ON s.id = p.name_id WHERE s.text = ?1", 0, name);
}

static struct prow byid(struct fx *f, int64_t id)
{
	return row_where(store_db(f->st), PCOLS " WHERE p.id = ?1", id, NULL);
}

static int64_t q_int(struct fx *f, const char *sql)
{
	sqlite3 *db = store_db(f->st);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) != SQLITE_ROW)
		fail_msg("no row from %s", sql);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

#define EQ(a, b)                                                                                   \
	do {                                                                                       \
		int64_t a_ = (a), b_ = (b);                                                        \
		if (a_ != b_)                                                                      \
			fail_msg("%s = %lld, want %lld", #a, (long long)a_, (long long)b_);        \
	} while (0)

static void test_nest_containment(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.name = "D", .start = 60, .dur = 10});
	add(f, n, (struct sp){.name = "B", .start = 10, .dur = 30});
	add(f, n, (struct sp){.name = "A", .start = 0, .dur = 100});
	add(f, n, (struct sp){.name = "C", .start = 50, .dur = 40});
	struct nest_stats st;
	finish(f, n, &t, 1, 0, &st);
	nest_free(n);

	EQ(st.phases, 5);
	EQ(st.overlaps, 0);
	struct prow a = byname(f, "A"), b = byname(f, "B"), c = byname(f, "C"), d = byname(f, "D");
	EQ(a.parent, t.node_id);
	EQ(a.depth, 4);
	EQ(a.children, 2);
	EQ(a.start, 0);
	EQ(a.dur, 100);
	EQ(a.self, 30);
	EQ(a.track, t.track_id);
	EQ(a.kind, PHASE_OPERATOR);
	EQ(a.device, 0);
	EQ(b.parent, a.id);
	EQ(b.depth, 5);
	EQ(b.children, 0);
	EQ(b.self, 30);
	EQ(c.parent, a.id);
	EQ(c.depth, 5);
	EQ(c.children, 1);
	EQ(c.self, 30);
	EQ(d.parent, c.id);
	EQ(d.depth, 6);
	EQ(d.self, 10);
	EQ(d.dur, 10);

	struct prow node = byid(f, t.node_id);
	EQ(node.parent, f->proc);
	EQ(node.kind, PHASE_THREAD);
	EQ(node.depth, 3);
	EQ(node.children, 1);
	EQ(node.start, 0);
	EQ(node.dur, 100);
	EQ(node.self, 0);
	EQ(t.used, 1);
	EQ(t.start, 0);
	EQ(t.end, 100);
	EQ(t.spans, 4);
}

static void test_nest_equal_start_longest_first(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.name = "short", .start = 0, .dur = 50});
	add(f, n, (struct sp){.name = "long", .start = 0, .dur = 100});
	struct nest_stats st;
	finish(f, n, &t, 1, 0, &st);
	nest_free(n);
	struct prow s = byname(f, "short"), l = byname(f, "long");
	EQ(l.parent, t.node_id);
	EQ(s.parent, l.id);
	EQ(s.depth, l.depth + 1);
	EQ(l.children, 1);
	EQ(l.self, 50);
	EQ(s.self, 50);
	EQ(st.overlaps, 0);
}

static void test_nest_overflowing_child(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.name = "B", .start = 10, .dur = 110});
	add(f, n, (struct sp){.name = "A", .start = 0, .dur = 100});
	add(f, n, (struct sp){.name = "E", .start = 130, .dur = 10});
	struct nest_stats st;
	finish(f, n, &t, 1, 0, &st);
	nest_free(n);
	struct prow a = byname(f, "A"), b = byname(f, "B"), e = byname(f, "E");
	EQ(st.overlaps, 1);
	EQ(b.parent, a.id);
	EQ(b.dur, 110);
	EQ(b.self, 110);
	EQ(a.children, 1);
	EQ(a.self, 10); /* 100 - (100 - 10): B counted up to A's end */
	EQ(e.parent, t.node_id);
	EQ(e.depth, 4);
	struct prow node = byid(f, t.node_id);
	EQ(node.start, 0);
	EQ(node.dur, 140);
	EQ(node.self, 10); /* [120, 130) idle */
	EQ(node.children, 2);
}

static void test_nest_flat(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "async");
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.name = "A", .start = 0, .dur = 100});
	add(f, n,
	    (struct sp){
		.name = "F", .start = 10, .dur = 20, .flags = NEST_FLAT, .attrs = "{\"f\":1}"});
	add(f, n, (struct sp){.name = "G", .start = 40, .dur = 20});
	struct nest_stats st;
	finish(f, n, &t, 1, 0, &st);
	nest_free(n);
	struct prow a = byname(f, "A"), fl = byname(f, "F"), g = byname(f, "G");
	EQ(fl.parent, t.node_id);
	EQ(fl.depth, 4);
	EQ(g.parent, a.id); /* a flat span does not stop later nesting */
	EQ(a.children, 1);
	EQ(a.self, 80);
	EQ(byid(f, t.node_id).children, 2);
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT attrs = '{\"f\":1}' FROM phases WHERE id = %lld",
		 (long long)fl.id);
	EQ(q_int(f, sql), 1);
}

/* tracks[0] is the device stream, tracks[1] the host thread: the device
 * track is listed first and its spans are added first, and still every
 * launch must be known when its kernel is placed. */
static void test_nest_launch_link(void **state)
{
	struct fx *f = *state;
	struct nest_track t[2] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1")};
	struct nest *n = nest_new(1 << 20);
	add(f, n,
	    (struct sp){.track = 0,
			.role = NEST_DEVICE,
			.flags = ON_DEVICE,
			.kind = PHASE_KERNEL,
			.name = "K",
			.start = 100,
			.dur = 30,
			.corr = 7});
	add(f, n,
	    (struct sp){.track = 0,
			.role = NEST_DEVICE,
			.flags = ON_DEVICE,
			.kind = PHASE_KERNEL,
			.name = "U",
			.start = 200,
			.dur = 10,
			.corr = 99});
	add(f, n,
	    (struct sp){.track = 1,
			.flags = NEST_LAUNCH,
			.kind = PHASE_RUNTIME,
			.name = "cudaLaunchKernel",
			.start = 0,
			.dur = 50,
			.corr = 7});
	add(f, n, (struct sp){.track = 1, .name = "aten::mm", .start = 0, .dur = 60});
	struct nest_stats st;
	finish(f, n, t, 2, 0, &st);
	nest_free(n);

	struct prow k = byname(f, "K"), u = byname(f, "U"), l = byname(f, "cudaLaunchKernel"),
		    op = byname(f, "aten::mm");
	EQ(st.phases, 6);
	EQ(st.unlinked, 1);
	EQ(l.parent, op.id);
	EQ(k.parent, l.id);
	EQ(k.depth, l.depth + 1);
	EQ(k.track, t[0].track_id);
	EQ(k.kind, PHASE_KERNEL);
	EQ(k.device, 30);
	EQ(k.self, 30);
	EQ(l.children, 1);
	EQ(l.device, 30);
	EQ(l.self, 50); /* device work takes no host time */
	EQ(op.children, 1);
	EQ(op.self, 10);
	EQ(u.parent, t[0].node_id);
	EQ(u.depth, t[0].depth + 1);
	EQ(u.device, 10);
	struct prow stream = byid(f, t[0].node_id);
	EQ(stream.kind, PHASE_STREAM);
	EQ(stream.children, 1);
	EQ(stream.start, 100);
	EQ(stream.dur, 110);
	EQ(stream.self, 70);
	EQ(t[0].spans, 2);
	EQ(t[1].spans, 2);
}

/* A kernel (host launch, device track) for the launch-count tests. */
static struct sp kernel(const char *name, int64_t start, int64_t dur, int64_t corr)
{
	return (struct sp){.track = 0,
			   .role = NEST_DEVICE,
			   .flags = ON_DEVICE,
			   .kind = PHASE_KERNEL,
			   .name = name,
			   .start = start,
			   .dur = dur,
			   .corr = corr};
}

static struct sp host_launch(uint32_t track, const char *name, int64_t start, int64_t dur,
			     int64_t corr)
{
	return (struct sp){.track = track,
			   .flags = NEST_LAUNCH,
			   .kind = PHASE_RUNTIME,
			   .name = name,
			   .start = start,
			   .dur = dur,
			   .corr = corr};
}

/* Device work recorded on a host track (no device flag). */
static struct sp host_device_work(uint32_t track, const char *name, int64_t start, int64_t dur,
				  int64_t corr)
{
	return (struct sp){.track = track,
			   .role = NEST_DEVICE,
			   .kind = PHASE_KERNEL,
			   .name = name,
			   .start = start,
			   .dur = dur,
			   .corr = corr};
}

/* Writes the step and the process above the fixture's tracks (f->proc), as
 * an importer does after the nest; returns the step's id. */
static int64_t add_step_and_process(struct fx *f)
{
	char *err = NULL;
	struct phase_row step = {.id = store_reserve_phase_id(f->st),
				 .kind = PHASE_STEP,
				 .name_id = intern(f, "step"),
				 .source_id = f->src,
				 .dur_ns = 100000,
				 .depth = 1};
	struct phase_row proc = {.id = f->proc,
				 .parent_id = step.id,
				 .kind = PHASE_PROCESS,
				 .name_id = intern(f, "process"),
				 .source_id = f->src,
				 .dur_ns = 100000,
				 .depth = 2};
	if (store_add_phase(f->st, &step, &err) < 0 || store_add_phase(f->st, &proc, &err) < 0)
		fail_msg("store_add_phase: %s", err ? err : "?");
	return step.id;
}

static void commit(struct fx *f)
{
	char *err = NULL;
	if (store_commit(f->st, &err) < 0)
		fail_msg("store_commit: %s", err ? err : "?");
}

/* 5000 short operators on track 0 from start on: more rows than the
 * idorder holds, so that a launch before them has gone to the writer. */
static void add_small_ops(struct fx *f, struct nest *n, int64_t start)
{
	for (int i = 0; i < 5000; i++)
		add(f, n,
		    (struct sp){.track = 0,
				.kind = PHASE_OPERATOR,
				.name = "small",
				.start = start + 2 * i,
				.dur = 1});
}

/* The device work of a correlation id is counted in its launch's row, by
 * every path: counted ahead (several kernels), a second launch of the id
 * (the first keeps the kernels), a launch on the device track itself (its
 * kernel read while it is open), and device work on a host track (added to
 * the launch read before it). */
static void test_nest_launch_counts(void **state)
{
	struct fx *f = *state;
	struct nest_track t[3] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1"),
				  make_track(f, 0, "thread 2")};
	struct nest *n = nest_new(1 << 20);
	add(f, n, kernel("K1", 100, 30, 7));
	add(f, n, kernel("K2", 140, 20, 7));
	add(f, n, host_launch(1, "L7", 0, 50, 7));
	add(f, n, host_launch(1, "L7 again", 60, 5, 7));
	/* a graph launch on the stream, enclosing its kernel */
	add(f, n,
	    (struct sp){.track = 0,
			.flags = NEST_LAUNCH | ON_DEVICE,
			.kind = PHASE_RUNTIME,
			.name = "G",
			.start = 300,
			.dur = 100,
			.corr = 8});
	add(f, n, kernel("KG", 310, 40, 8));
	/* device work on a host track, after its launch's track */
	add(f, n, host_launch(1, "L9", 500, 10, 9));
	add(f, n, host_device_work(2, "stray", 520, 7, 9));
	struct nest_stats st;
	finish(f, n, t, 3, 0, &st);
	nest_free(n);

	struct prow l = byname(f, "L7"), l2 = byname(f, "L7 again"), k1 = byname(f, "K1"),
		    k2 = byname(f, "K2");
	EQ(k1.parent, l.id);
	EQ(k2.parent, l.id);
	EQ(l.children, 2);
	EQ(l.device, 50);
	EQ(l2.children, 0);
	EQ(l2.device, 0);
	struct prow g = byname(f, "G"), kg = byname(f, "KG");
	EQ(kg.parent, g.id);
	EQ(g.children, 1);
	EQ(g.device, 40);
	struct prow l9 = byname(f, "L9"), stray = byname(f, "stray");
	EQ(stray.parent, l9.id);
	EQ(l9.children, 1);
	EQ(l9.device, 7);
	EQ(st.unlinked, 0);
	fx_close(f);
	fx_open(f);

	/* device work on the launch's own track, read once the launch has
	 * closed but while the op around it is open: its row is still held to
	 * be written in id order, and takes the count there */
	struct nest_track t2[1] = {make_track(f, 0, "thread 1")};
	n = nest_new(1 << 20);
	add(f, n,
	    (struct sp){.track = 0, .kind = PHASE_OPERATOR, .name = "op", .start = 0, .dur = 100});
	add(f, n, host_launch(0, "L5", 10, 10, 5));
	add(f, n, host_device_work(0, "K5", 30, 4, 5));
	finish(f, n, t2, 1, 0, &st);
	nest_free(n);
	int64_t step = add_step_and_process(f);
	commit(f);
	struct prow l5 = byname(f, "L5"), k5 = byname(f, "K5");
	EQ(k5.parent, l5.id);
	EQ(l5.children, 1);
	EQ(l5.device, 4);
	/* the op around it was written without it: it and the nodes above get
	 * it at the commit */
	EQ(byname(f, "op").device, 4);
	EQ(byid(f, t2[0].node_id).device, 4);
	EQ(byid(f, step).device, 4);
	fx_close(f);
	unlink(f->path); /* committed: a new file for the next case */
	fx_open(f);

	/* the same, with more rows after the launch than the idorder holds:
	 * the launch's row has gone to the writer, and takes the count there */
	struct nest_track t3[1] = {make_track(f, 0, "thread 1")};
	n = nest_new(1 << 20);
	add(f, n,
	    (struct sp){
		.track = 0, .kind = PHASE_OPERATOR, .name = "op", .start = 0, .dur = 100000});
	add(f, n, host_launch(0, "L6", 10, 10, 6));
	add_small_ops(f, n, 100);
	add(f, n, host_device_work(0, "K6", 20000, 3, 6));
	finish(f, n, t3, 1, 0, &st);
	nest_free(n);
	step = add_step_and_process(f);
	commit(f);
	struct prow l6 = byname(f, "L6"), k6 = byname(f, "K6");
	EQ(k6.parent, l6.id);
	EQ(l6.children, 1);
	EQ(l6.device, 3);
	EQ(byname(f, "op").device, 3);
	EQ(byid(f, t3[0].node_id).device, 3);
	EQ(byid(f, f->proc).device, 3);
	EQ(byid(f, step).device, 3);
}

/* Counts that cannot hold are not used: a kernel whose time overflows once
 * offset is dropped (and not counted in its launch), a correlation id whose
 * device time does not fit the count is added kernel by kernel, and without
 * counts a reused id still belongs to its first host launch. */
static void test_nest_launch_counts_fall_back(void **state)
{
	struct fx *f = *state;
	struct nest_track t[2] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1")};
	struct nest *n = nest_new(1 << 20);
	int64_t off = (int64_t)1 << 62;
	add(f, n, kernel("K", 100, 30, 7));
	add(f, n, kernel("far", INT64_MAX - off + 1, 5, 7)); /* overflows with off */
	add(f, n, host_launch(1, "L", 0, 50, 7));
	struct nest_stats st;
	finish(f, n, t, 2, off, &st);
	nest_free(n);
	struct prow l = byname(f, "L");
	EQ(st.span_overflow, 1);
	EQ(l.children, 1);
	EQ(l.device, 30);
	fx_close(f);
	fx_open(f);

	struct nest_track t2[2] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1")};
	n = nest_new(1 << 20);
	int64_t huge = (int64_t)1 << 43; /* more device time than a count holds */
	add(f, n, kernel("K", 100, huge, 7));
	add(f, n, kernel("K2", huge + 200, 3, 7));
	add(f, n, host_launch(1, "L", 0, 50, 7));
	finish(f, n, t2, 2, 0, &st);
	nest_free(n);
	l = byname(f, "L");
	EQ(l.children, 2);
	EQ(l.device, huge + 3);
	fx_close(f);
	fx_open(f);

	/* with counts off (a kernel's end overflows), a reused id still goes
	 * to its first host launch */
	struct nest_track t3[2] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1")};
	n = nest_new(1 << 20);
	add(f, n, kernel("K", 100, 30, 7));
	add(f, n, kernel("end overflows", INT64_MAX - 5, 10, 9));
	add(f, n, host_launch(1, "L1", 0, 50, 7));
	add(f, n, host_launch(1, "L2", 60, 5, 7));
	finish(f, n, t3, 2, 0, &st);
	nest_free(n);
	struct prow l1 = byname(f, "L1"), l2 = byname(f, "L2"), k = byname(f, "K");
	EQ(st.span_overflow, 1);
	EQ(k.parent, l1.id);
	EQ(l1.children, 1);
	EQ(l1.device, 30);
	EQ(l2.children, 0);
}

/* More correlation ids than the launch map may hold in memory (with a budget
 * of 8 KiB, its smallest table, 768): the rest live on disk, and every
 * kernel still finds its launch, every launch its count, both for counts
 * read ahead (the stream) and for device work on a host track (added one
 * by one). */
static void test_nest_launch_map_past_its_memory(void **state)
{
	struct fx *f = *state;
	struct nest_track t[3] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1"),
				  make_track(f, 0, "thread 2")};
	struct nest *n = nest_new(8192);
	const int N = 3000;
	for (int i = 0; i < N; i++) {
		add(f, n, host_launch(1, "L", 100 * i, 10, i + 1));
		add(f, n, kernel("K", 100 * i + 50, 3, i + 1));
	}
	add(f, n, host_launch(1, "L stray", 100 * N, 10, 5000000));
	add(f, n, host_device_work(2, "stray", 100 * N + 20, 4, 5000000));
	struct nest_stats st;
	finish(f, n, t, 3, 0, &st);
	nest_free(n);
	EQ(st.unlinked, 0);
	EQ(q_int(f, "SELECT count(*) FROM phases k JOIN phases l ON l.id = k.parent_id"
		    " JOIN strings s ON s.id = k.name_id JOIN strings ls ON ls.id = l.name_id"
		    " WHERE s.text = 'K' AND ls.text = 'L' AND l.start_ns = k.start_ns - 50"),
	   N);
	EQ(q_int(f, "SELECT count(*) FROM phases l JOIN strings s ON s.id = l.name_id"
		    " WHERE s.text = 'L' AND l.child_count = 1 AND l.device_ns = 3"),
	   N);
	struct prow ls = byname(f, "L stray"), stray = byname(f, "stray");
	EQ(stray.parent, ls.id);
	EQ(ls.children, 1);
	EQ(ls.device, 4);
}

/* The header: `device` alone makes a track "processed after every host track". */
/* A device track listed before the host track that launches its work is still
 * processed after it: NEST_ON_DEVICE orders tracks. */
static void test_nest_device_flag_orders_tracks(void **state)
{
	struct fx *f = *state;
	struct nest_track t[2] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1")};
	struct nest *n = nest_new(1 << 20);
	add(f, n,
	    (struct sp){.track = 0,
			.role = NEST_DEVICE,
			.flags = ON_DEVICE,
			.kind = PHASE_KERNEL,
			.name = "K",
			.start = 100,
			.dur = 30,
			.corr = 7});
	add(f, n,
	    (struct sp){.track = 1,
			.flags = NEST_LAUNCH,
			.kind = PHASE_RUNTIME,
			.name = "launch",
			.start = 0,
			.dur = 50,
			.corr = 7});
	struct nest_stats st;
	finish(f, n, t, 2, 0, &st);
	nest_free(n);
	EQ(st.unlinked, 0);
	EQ(byname(f, "K").parent, byname(f, "launch").id);
}

/* A span overflowing its parent must not adopt later spans outside the
 * parent: A[0,10) B[5,15) C[12,14) puts C beside A, not under B. */
static void test_nest_overlap_does_not_adopt(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.name = "A", .start = 0, .dur = 10});
	add(f, n, (struct sp){.name = "B", .start = 5, .dur = 10});
	add(f, n, (struct sp){.name = "C", .start = 12, .dur = 2});
	struct nest_stats st;
	finish(f, n, &t, 1, 0, &st);
	nest_free(n);
	struct prow a = byname(f, "A"), b = byname(f, "B"), c = byname(f, "C");
	EQ(b.parent, a.id);
	EQ(b.dur, 10); /* the real duration is kept */
	EQ(c.parent, t.node_id);
	EQ(st.overlaps, 1);
	EQ(a.self, 5);
}

/* A flow id reused after its flow ended links each pair once, not every
 * start with every end. */
static void test_nest_flow_id_reuse(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	const char *names[] = {"S1", "E1", "S2", "E2"};
	for (int i = 0; i < 4; i++) {
		add(f, n, (struct sp){.name = names[i], .start = i * 100, .dur = 10});
		add(f, n,
		    (struct sp){.role = i % 2 ? NEST_FLOW_IN : NEST_FLOW_OUT,
				.name = "f",
				.cat = "c",
				.start = i * 100 + 1,
				.flow = 1});
	}
	struct nest_stats st;
	finish(f, n, &t, 1, 0, &st);
	nest_free(n);
	EQ(st.edges, 2);
	EQ(st.lone_flows, 0);
	char sql[160];
	for (int i = 0; i < 4; i += 2) {
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM edges WHERE src = %lld AND dst = %lld",
			 (long long)byname(f, names[i]).id, (long long)byname(f, names[i + 1]).id);
		EQ(q_int(f, sql), 1);
	}
}

/* A flow end without "bp":"e" binds to the next span starting at or after
 * it (Chrome's default), here one starting exactly at its time. */
static void test_nest_flow_next_slice(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.name = "S", .start = 0, .dur = 10});
	add(f, n,
	    (struct sp){.role = NEST_FLOW_OUT, .name = "f", .cat = "c", .start = 5, .flow = 3});
	add(f, n, (struct sp){.name = "before", .start = 20, .dur = 30});
	add(f, n,
	    (struct sp){
		.role = NEST_FLOW_IN_NEXT, .name = "f", .cat = "c", .start = 40, .flow = 3});
	add(f, n, (struct sp){.name = "N", .start = 60, .dur = 5});
	/* a next-slice end with no span after it is unbound */
	add(f, n,
	    (struct sp){
		.role = NEST_FLOW_IN_NEXT, .name = "f", .cat = "c", .start = 90, .flow = 4});
	struct nest_stats st;
	finish(f, n, &t, 1, 0, &st);
	nest_free(n);
	char sql[160];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM edges WHERE src = %lld AND dst = %lld",
		 (long long)byname(f, "S").id, (long long)byname(f, "N").id);
	EQ(q_int(f, sql), 1);
	EQ(st.edges, 1);
	EQ(st.unbound_points, 1);
}

/* A track whose every record overflows gets no node (nothing may point at
 * a phase that was never written). */
static void test_nest_overflowed_track_has_no_node(void **state)
{
	struct fx *f = *state;
	struct nest_track t[2] = {make_track(f, 0, "thread 1"), make_track(f, 0, "thread 2")};
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.track = 0, .name = "ok", .start = 0, .dur = 5});
	add(f, n, (struct sp){.track = 1, .name = "late", .start = INT64_MAX - 2, .dur = 1});
	struct nest_stats st;
	finish(f, n, t, 2, 10, &st);
	nest_free(n);
	EQ(t[1].used, 0);
	EQ(st.span_overflow, 1);
	char sql[96];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM phases WHERE id = %lld",
		 (long long)t[1].node_id);
	EQ(q_int(f, sql), 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM phases WHERE id = %lld",
		 (long long)t[0].node_id);
	EQ(q_int(f, sql), 1);
}

static void test_nest_flows(void **state)
{
	struct fx *f = *state;
	struct nest_track t[2] = {make_track(f, 0, "thread 1"), make_track(f, 1, "stream 7")};
	struct nest *n = nest_new(1 << 20);
	add(f, n,
	    (struct sp){.track = 0, .kind = PHASE_RUNTIME, .name = "S", .start = 0, .dur = 50});
	add(f, n,
	    (struct sp){.track = 1,
			.role = NEST_DEVICE,
			.flags = ON_DEVICE,
			.kind = PHASE_KERNEL,
			.name = "K",
			.start = 100,
			.dur = 30});
	/* a flow start at S's very start, its end inside K */
	add(f, n,
	    (struct sp){.track = 1,
			.role = NEST_FLOW_IN,
			.flags = ON_DEVICE,
			.name = "f",
			.cat = "ac2g",
			.start = 110,
			.flow = 42});
	add(f, n,
	    (struct sp){.track = 0,
			.role = NEST_FLOW_OUT,
			.name = "f",
			.cat = "ac2g",
			.start = 0,
			.flow = 42});
	/* the same id in another category is another flow: lone */
	add(f, n,
	    (struct sp){.track = 0,
			.role = NEST_FLOW_OUT,
			.name = "f",
			.cat = "fwdbwd",
			.start = 10,
			.flow = 42});
	/* an end without a start: lone */
	add(f, n,
	    (struct sp){.track = 0,
			.role = NEST_FLOW_IN,
			.name = "f",
			.cat = "ac2g",
			.start = 20,
			.flow = 77});
	/* outside any span: unbound */
	add(f, n,
	    (struct sp){.track = 0,
			.role = NEST_FLOW_OUT,
			.name = "f",
			.cat = "ac2g",
			.start = 500,
			.flow = 88});
	/* spans that are themselves the ends of a flow */
	add(f, n,
	    (struct sp){.track = 0,
			.flags = NEST_BIND_OUT,
			.name = "P",
			.cat = "user",
			.start = 300,
			.dur = 20,
			.flow = 5});
	add(f, n,
	    (struct sp){.track = 0,
			.flags = NEST_BIND_IN,
			.name = "Q",
			.cat = "user",
			.start = 400,
			.dur = 10,
			.flow = 5});
	struct nest_stats st;
	finish(f, n, t, 2, 0, &st);
	nest_free(n);

	struct prow s = byname(f, "S"), k = byname(f, "K"), p = byname(f, "P"), q = byname(f, "Q");
	EQ(st.edges, 2);
	EQ(st.lone_flows, 2);
	EQ(st.unbound_points, 1);
	EQ(q_int(f, "SELECT count(*) FROM edges"), 2);
	char sql[160];
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM edges WHERE src = %lld AND dst = %lld"
		 " AND kind = %d",
		 (long long)s.id, (long long)k.id, EDGE_LAUNCH);
	EQ(q_int(f, sql), 1);
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM edges WHERE src = %lld AND dst = %lld"
		 " AND kind = %d",
		 (long long)p.id, (long long)q.id, EDGE_FLOW);
	EQ(q_int(f, sql), 1);
	/* points are not phases */
	EQ(q_int(f, "SELECT count(*) FROM phases p JOIN strings s ON s.id = p.name_id"
		    " WHERE s.text = 'f'"),
	   0);
	EQ(st.phases, 6);
}

static void test_nest_instants(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.role = NEST_INSTANT, .name = "inner mark", .start = 45});
	add(f, n, (struct sp){.name = "S", .start = 0, .dur = 100});
	add(f, n, (struct sp){.name = "T", .start = 40, .dur = 20});
	add(f, n,
	    (struct sp){.role = NEST_INSTANT, .name = "mark", .start = 70, .attrs = "{\"v\":1}"});
	add(f, n, (struct sp){.role = NEST_INSTANT, .name = "outside", .start = 500});
	struct nest_stats st;
	finish(f, n, &t, 1, 1000, &st);
	nest_free(n);
	struct prow s = byname(f, "S"), tt = byname(f, "T");
	EQ(st.events, 3);
	EQ(st.phases, 3);
	EQ(q_int(f, "SELECT count(*) FROM events"), 3);
	char sql[200];
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM events_v WHERE name = 'mark' AND"
		 " phase_id = %lld AND t_ns = 1070 AND track_id = %lld AND attrs = '{\"v\":1}'",
		 (long long)s.id, (long long)t.track_id);
	EQ(q_int(f, sql), 1);
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM events_v WHERE name = 'inner mark' AND"
		 " phase_id = %lld AND t_ns = 1045",
		 (long long)tt.id);
	EQ(q_int(f, sql), 1);
	EQ(q_int(f, "SELECT count(*) FROM events_v WHERE name = 'outside' AND phase_id IS NULL"
		    " AND t_ns = 1500"),
	   1);
}

/* ---- the spill path against the in-memory path ---- */

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* Builds the same random source of nrec records into a new store at path
 * with the given arena, and dumps every row nest_finish wrote into out. */
static void build_random(const char *path, size_t arena, int nrec, struct sbuf *out,
			 struct nest_stats *st)
{
	struct fx f = {0};
	snprintf(f.path, sizeof(f.path), "%s", path);
	fx_open(&f);
	struct nest_track t[3] = {make_track(&f, 0, "thread 1"), make_track(&f, 1, "stream 7"),
				  make_track(&f, 0, "thread 2")};
	int64_t names[16];
	for (int i = 0; i < 16; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "op%d", i);
		names[i] = intern(&f, nm);
	}
	int64_t cats[2] = {intern(&f, "ac2g"), intern(&f, "user")};
	struct nest *n = nest_new(arena);
	uint64_t seed = 12345;
	int64_t *launches = xcalloc((size_t)nrec, sizeof(*launches));
	size_t nlaunch = 0;
	char *err = NULL;
	for (int i = 0; i < nrec; i++) {
		char attrs[32];
		struct nest_span s = {0};
		uint64_t r = lcg(&seed) % 100;
		uint32_t host = lcg(&seed) % 2 ? 2 : 0;
		s.start = (int64_t)(lcg(&seed) % 20000) * 10;
		s.dur = (int64_t)(lcg(&seed) % 100 < 80 ? lcg(&seed) % 500 : lcg(&seed) % 20000);
		s.name_id = names[lcg(&seed) % 16];
		s.kind = PHASE_OPERATOR;
		s.track = host;
		if (r < 55) {
			s.role = NEST_SPAN;
		} else if (r < 70) {
			s.role = NEST_SPAN;
			s.kind = PHASE_RUNTIME;
			s.flags = NEST_LAUNCH;
			s.corr = i + 1;
			launches[nlaunch++] = s.corr;
		} else if (r < 85) {
			s.track = 1;
			s.role = NEST_DEVICE;
			s.flags = ON_DEVICE;
			s.kind = PHASE_KERNEL;
			s.corr = nlaunch && lcg(&seed) % 4 ? launches[lcg(&seed) % nlaunch]
							   : 1000000 + i;
		} else if (r < 90) {
			s.role = NEST_INSTANT;
		} else {
			s.role = lcg(&seed) % 2 ? NEST_FLOW_OUT : NEST_FLOW_IN;
			s.cat_id = s.flow_cat = cats[lcg(&seed) % 2];
			s.flow_id = lcg(&seed) % 300;
			if (lcg(&seed) % 3 == 0) {
				s.track = 1;
				s.flags = ON_DEVICE;
			}
		}
		if (lcg(&seed) % 8 == 0) {
			s.attrs_len = (size_t)snprintf(attrs, sizeof(attrs), "{\"i\":%d}", i);
			s.attrs = attrs;
		}
		assert_int_equal(nest_add(n, &s, &err), 0);
	}
	free(launches);
	memset(st, 0, sizeof(*st));
	if (nest_finish(n, f.st, f.src, t, 3, 1000000, st, &err) < 0)
		fail_msg("nest_finish: %s", err);
	nest_free(n);

	sqlite3 *db = store_db(f.st);
	static const char *const dumps[] = {
	    "SELECT id, coalesce(parent_id, 0), kind, name_id, track_id, start_ns, dur_ns,"
	    " self_ns, device_ns, child_count, depth, coalesce(attrs, '-') FROM phases"
	    " ORDER BY track_id, start_ns, dur_ns DESC, id",
	    "SELECT src, dst, kind, 0, 0, 0, 0, 0, 0, 0, 0, '' FROM edges ORDER BY src, dst, kind",
	    "SELECT id, coalesce(phase_id, 0), track_id, t_ns, name_id, 0, 0, 0, 0, 0, 0,"
	    " coalesce(attrs, '-') FROM events ORDER BY id",
	};
	for (size_t d = 0; d < 3; d++) {
		sqlite3_stmt *q;
		assert_int_equal(sqlite3_prepare_v2(db, dumps[d], -1, &q, NULL), SQLITE_OK);
		while (sqlite3_step(q) == SQLITE_ROW) {
			sbuf_addf(out, "%zu", d);
			for (int c = 0; c < 11; c++)
				sbuf_addf(out, " %lld", (long long)sqlite3_column_int64(q, c));
			sbuf_addf(out, " %s\n", (const char *)sqlite3_column_text(q, 11));
		}
		sqlite3_finalize(q);
	}
	fx_close(&f);
}

static size_t count_lines(const char *s, char tag)
{
	size_t n = 0;
	for (const char *p = s; *p; p++)
		if ((p == s || p[-1] == '\n') && *p == tag)
			n++;
	return n;
}

/* The random source built with the smallest arena (spilled, a run for
 * every few dozen records) and with room for it all must store the same;
 * with 40000 records the spans make more runs than one merge takes. */
static void test_nest_spill_matches_memory(void **state)
{
	struct fx *f = *state;
	fx_close(f); /* this test builds its own stores */
	char p1[400], p2[400];
	snprintf(p1, sizeof(p1), "%s/spill.db", f->dir);
	snprintf(p2, sizeof(p2), "%s/memory.db", f->dir);
	static const int sizes[] = {5000, 40000};
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct sbuf small = SBUF_INIT, big = SBUF_INIT;
		sbuf_init(&small);
		sbuf_init(&big);
		struct nest_stats ss, sb;
		build_random(p1, 4096, sizes[k], &small, &ss);
		build_random(p2, (size_t)64 << 20, sizes[k], &big, &sb);

		/* not vacuous: thousands of phases, some nesting, linking and flows */
		assert_true(count_lines(big.buf, '0') > (size_t)sizes[k] * 3 / 5);
		assert_true(count_lines(big.buf, '1') > 0);
		assert_true(count_lines(big.buf, '2') > 0);
		assert_true(sb.overlaps > 0);
		assert_true(sb.unlinked > 0);
		assert_true(sb.lone_flows > 0);

		if (strcmp(small.buf, big.buf)) {
			const char *a = small.buf, *b = big.buf;
			size_t line = 1;
			while (*a && *a == *b) {
				if (*a == '\n')
					line++;
				a++;
				b++;
			}
			fail_msg("%d records: spilled and in-memory builds differ at line %zu",
				 sizes[k], line);
		}
		EQ(ss.phases, sb.phases);
		EQ(ss.events, sb.events);
		EQ(ss.edges, sb.edges);
		EQ(ss.overlaps, sb.overlaps);
		EQ(ss.unlinked, sb.unlinked);
		EQ(ss.unbound_points, sb.unbound_points);
		EQ(ss.lone_flows, sb.lone_flows);
		EQ(ss.span_overflow, sb.span_overflow);
		EQ(ss.point_overflow, sb.point_overflow);
		EQ(ss.phases, (int64_t)count_lines(big.buf, '0'));
		sbuf_release(&small);
		sbuf_release(&big);
		assert_int_equal(access(p1, F_OK), -1);
		assert_int_equal(access(p2, F_OK), -1);
	}
}

static void test_nest_offset_and_overflow(void **state)
{
	struct fx *f = *state;
	struct nest_track t = make_track(f, 0, "thread 1");
	struct nest *n = nest_new(1 << 20);
	const int64_t off = 1000000;
	add(f, n, (struct sp){.name = "S", .start = 10, .dur = 20});
	add(f, n, (struct sp){.name = "early", .start = -5, .dur = 3});
	add(f, n, (struct sp){.name = "too late", .start = INT64_MAX - 5, .dur = 1});
	add(f, n, (struct sp){.role = NEST_INSTANT, .name = "late mark", .start = INT64_MAX - 1});
	struct nest_stats st;
	finish(f, n, &t, 1, off, &st);
	nest_free(n);
	struct prow s = byname(f, "S"), e = byname(f, "early");
	EQ(s.start, off + 10);
	EQ(s.dur, 20);
	EQ(e.start, off - 5);
	EQ(st.span_overflow, 1);
	EQ(st.point_overflow, 1);
	EQ(st.phases, 3);
	EQ(st.events, 0);
	EQ(q_int(f, "SELECT count(*) FROM strings s JOIN phases p ON p.name_id = s.id"
		    " WHERE s.text = 'too late'"),
	   0);
	EQ(q_int(f, "SELECT count(*) FROM events"), 0);
	EQ(t.start, off - 5);
	EQ(t.end, off + 30);
	EQ(t.spans, 2);
	struct prow node = byid(f, t.node_id);
	EQ(node.start, off - 5);
	EQ(node.dur, 35);
}

static void test_nest_track_window_and_idle(void **state)
{
	struct fx *f = *state;
	struct nest_track t[2] = {make_track(f, 0, "thread 1"), make_track(f, 0, "thread 2")};
	struct nest *n = nest_new(1 << 20);
	add(f, n, (struct sp){.name = "d", .start = 1000, .dur = 100});
	add(f, n, (struct sp){.name = "a", .start = 100, .dur = 100});
	add(f, n, (struct sp){.name = "c", .start = 400, .dur = 50});
	add(f, n, (struct sp){.name = "b", .start = 150, .dur = 150}); /* overflows a */
	struct nest_stats st;
	t[1].used = 1; /* nest_finish resets it */
	finish(f, n, t, 2, 0, &st);
	nest_free(n);
	EQ(t[0].used, 1);
	EQ(t[0].start, 100);
	EQ(t[0].end, 1100);
	EQ(t[0].spans, 4);
	struct prow node = byid(f, t[0].node_id);
	EQ(node.start, 100);
	EQ(node.dur, 1000);
	EQ(node.self, 650); /* 1000 - |[100,300) + [400,450) + [1000,1100)| */
	EQ(node.children, 3);
	EQ(byname(f, "b").parent, byname(f, "a").id);
	/* a track without records has no node row */
	EQ(t[1].used, 0);
	EQ(t[1].spans, 0);
	char sql[96];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM phases WHERE id = %lld",
		 (long long)t[1].node_id);
	EQ(q_int(f, sql), 0);
	EQ(st.phases, 5);
}

/* Finishes n with its nt tracks t, frees it, adds the step and the process
 * above them and commits; the step's id. */
static int64_t finish_and_commit(struct fx *f, struct nest *n, struct nest_track *t, size_t nt)
{
	struct nest_stats st;
	finish(f, n, t, nt, 0, &st);
	nest_free(n);
	int64_t step = add_step_and_process(f);
	commit(f);
	return step;
}

/* Every phase's device_ns is the time of the device work beneath it:
 * its launches' kernels, those of the spans it contains, up through the
 * thread's node to the process and step written after the nest (by
 * store_commit), and a stream's unlinked work under the stream's node.
 * (test_nest_launch_counts: the same for work added to a launch's row
 * once the rows above it were written.) */
static void test_nest_device_beneath(void **state)
{
	struct fx *f = *state;
	struct nest_track t[2] = {make_track(f, 1, "stream 7"), make_track(f, 0, "thread 1")};
	struct nest *n = nest_new(1 << 20);
	add(f, n, kernel("K1", 100, 30, 1));
	add(f, n, kernel("K2", 400, 50, 2));
	add(f, n, kernel("K3", 460, 5, 2));
	add(f, n, kernel("U", 600, 11, 99)); /* no launch: under the stream */
	add(f, n, (struct sp){.track = 1, .kind = PHASE_OPERATOR, .name = "outer", .dur = 1000});
	add(f, n,
	    (struct sp){
		.track = 1, .kind = PHASE_OPERATOR, .name = "inner", .start = 10, .dur = 190});
	add(f, n, host_launch(1, "L1", 20, 10, 1));
	add(f, n,
	    (struct sp){
		.track = 1, .kind = PHASE_OPERATOR, .name = "inner2", .start = 300, .dur = 100});
	add(f, n, host_launch(1, "L2", 310, 10, 2));
	add(f, n, (struct sp){.track = 1, .kind = PHASE_OPERATOR, .name = "idle", .start = 2000});
	int64_t step = finish_and_commit(f, n, t, 2);
	EQ(byname(f, "L1").device, 30);
	EQ(byname(f, "inner").device, 30);
	EQ(byname(f, "inner2").device, 55);
	EQ(byname(f, "outer").device, 85);
	EQ(byname(f, "idle").device, 0);
	EQ(byid(f, t[1].node_id).device, 85);
	EQ(byid(f, t[0].node_id).device, 11);
	EQ(byid(f, f->proc).device, 96);
	EQ(byid(f, step).device, 96);
}

/* Device work that overlaps counts once: K1 [100, 130) on stream 7 and K2
 * [110, 150) on stream 8, both launched under op "both", give it 50 ns (not
 * the 70 summed); K3 [140, 160) under "later" makes the thread's, the
 * process's and the step's 60 ns, and U [500, 511) on stream 8 (no launch)
 * adds 11 to stream 8's node (its unlinked work), the process and the step. */
static void test_nest_device_union(void **state)
{
	static const struct {
		const char *name;
		int64_t start, dur, corr;
		uint32_t stream; /* the track's index: 0 stream 7, 1 stream 8 */
	} work[] = {{"K1", 100, 30, 1, 0},
		    {"K2", 110, 40, 2, 1},
		    {"K3", 140, 20, 3, 1},
		    {"U", 500, 11, 99, 1}};
	struct fx *f = *state;
	struct nest *n = nest_new(1 << 20);
	struct nest_track t[3] = {make_track(f, 1, "stream 7"), make_track(f, 1, "stream 8"),
				  make_track(f, 0, "thread 1")};
	for (size_t i = 0; i < sizeof(work) / sizeof(work[0]); i++) {
		struct sp k = kernel(work[i].name, work[i].start, work[i].dur, work[i].corr);
		k.track = work[i].stream;
		add(f, n, k);
	}
	add(f, n, (struct sp){.track = 2, .kind = PHASE_OPERATOR, .name = "both", .dur = 100});
	add(f, n, host_launch(2, "L1", 10, 10, 1));
	add(f, n, host_launch(2, "L2", 30, 10, 2));
	add(f, n,
	    (struct sp){
		.track = 2, .kind = PHASE_OPERATOR, .name = "later", .start = 200, .dur = 50});
	add(f, n, host_launch(2, "L3", 210, 10, 3));
	int64_t step = finish_and_commit(f, n, t, 3);
	static const struct {
		const char *name;
		int64_t device;
	} spans[] = {{"L1", 30}, {"L2", 40}, {"both", 50}, {"later", 20}};
	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++)
		EQ(byname(f, spans[i].name).device, spans[i].device);
	const int64_t nodes[][2] = {
	    {t[2].node_id, 60}, {t[0].node_id, 0}, {t[1].node_id, 11}, {f->proc, 71}, {step, 71}};
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		EQ(byid(f, nodes[i][0]).device, nodes[i][1]);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_nest_containment),
	    T(test_nest_equal_start_longest_first),
	    T(test_nest_overflowing_child),
	    T(test_nest_flat),
	    T(test_nest_launch_link),
	    T(test_nest_launch_counts),
	    T(test_nest_launch_counts_fall_back),
	    T(test_nest_launch_map_past_its_memory),
	    T(test_nest_device_flag_orders_tracks),
	    T(test_nest_flows),
	    T(test_nest_overlap_does_not_adopt),
	    T(test_nest_device_union),
	    T(test_nest_flow_id_reuse),
	    T(test_nest_flow_next_slice),
	    T(test_nest_overflowed_track_has_no_node),
	    T(test_nest_instants),
	    T(test_nest_spill_matches_memory),
	    T(test_nest_offset_and_overflow),
	    T(test_nest_track_window_and_idle),
	    T(test_nest_device_beneath),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
