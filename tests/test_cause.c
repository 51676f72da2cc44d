/*
 * The cause where the verdict is (model/analysis/cause.c) on a tree built
 * by hand: a step with three ranks, each a GPU process over one stream
 * (tracks.phase_id: the stream's node) beside a CPU process, and GPU
 * breakdowns written in the test.  Which phases a rank's causes reach,
 * the sum over ranks, the software-only and issue-share rules, and the
 * words and column forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/cause.h"
#include "model/store/store.h"
#include "model/util/sbuf.h"
#include "tests/phasefx.h"
#include "tests/testdir.h"

#define MS 1000000LL

struct fx {
	char dir[256], db[300];
	int64_t step, rank[3], gpu[3], stream[3], cpu[3], track[3];
	struct gpubreak_stream streams[3];
	struct gpubreak_rank ranks[3];
	struct gpubreak g;
};

/* Rank k: its GPU window and idle time by cause. */
static void rank_figures(struct fx *f, int k, int64_t window, const int64_t ns[IDLE_NCAUSES])
{
	struct gpubreak_rank *r = &f->ranks[k];
	struct gpubreak_stream *x = &f->streams[k];
	memset(r, 0, sizeof(*r));
	memset(x, 0, sizeof(*x));
	x->track_id = f->track[k];
	x->time.window_ns = window;
	r->source_id = 1;
	r->rank = k;
	r->time.window_ns = window;
	for (int c = 0; c < IDLE_NCAUSES; c++) {
		r->cause.ns[c] = ns[c];
		r->cause.gaps[c] = ns[c] > 0 ? c + 1 : 0;
		r->time.idle_ns += ns[c];
	}
	x->time.idle_ns = r->time.idle_ns;
	r->streams = x;
	r->nstreams = 1;
}

/* The fixture, its file written into a scratch directory; the test
 * removes the directory and frees it. */
static struct fx *build(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || testdir_make(f->dir, sizeof(f->dir), "cause") < 0)
		fail_msg("cannot make a scratch directory");
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	struct writer w;
	writer_open(&w, f->db);
	int64_t wf = add_phase(&w, 0, PHASE_WORKFLOW, "wf", 0, 0, 100 * MS, 1, 0);
	f->step = add_phase(&w, wf, PHASE_STEP, "step", 0, 0, 100 * MS, 3, 1);
	for (int k = 0; k < 3; k++) {
		char name[32];
		snprintf(name, sizeof(name), "rank %d", k);
		f->rank[k] = add_phase(&w, f->step, PHASE_RANK, name, 0, 0, 100 * MS, 2, 2);
		f->cpu[k] = add_phase(&w, f->rank[k], PHASE_PROCESS, "CPU", 0, 0, 100 * MS, 0, 3);
		f->gpu[k] = add_phase(&w, f->rank[k], PHASE_PROCESS, "GPU 0", 0, 0, 100 * MS, 1, 3);
		f->stream[k] =
		    add_phase(&w, f->gpu[k], PHASE_STREAM, "stream 7", 0, 0, 100 * MS, 0, 4);
		char *err = NULL;
		struct track_row tr = {.source_id = w.src,
				       .kind = "stream",
				       .pid = name,
				       .tid = "7",
				       .name = "stream 7",
				       .rank = k,
				       .phase_id = f->stream[k]};
		f->track[k] = store_add_track(w.st, &tr, &err);
		assert_true(f->track[k] > 0);
	}
	writer_close(&w);
	/* rank 0: input 60 ms, launch 10 ms of 80; rank 1: input 20 ms,
	 * sync 30 ms of 60; rank 2: host 5 ms of 100, below the issue share */
	rank_figures(f, 0, 80 * MS,
		     (int64_t[IDLE_NCAUSES]){[IDLE_INPUT] = 60 * MS, [IDLE_LAUNCH] = 10 * MS});
	rank_figures(f, 1, 60 * MS,
		     (int64_t[IDLE_NCAUSES]){[IDLE_INPUT] = 20 * MS, [IDLE_SYNC] = 30 * MS});
	rank_figures(f, 2, 100 * MS, (int64_t[IDLE_NCAUSES]){[IDLE_HOST] = 5 * MS});
	f->g.ranks = f->ranks;
	f->g.nranks = 3;
	return f;
}

/* The fixture's file, open for reading; the test closes it. */
static struct store *opened(const struct fx *f)
{
	struct store *st = NULL;
	char *err = NULL;
	if (store_open(f->db, STORE_READ, &st, &err) < 0)
		fail_msg("open: %s", err);
	return st;
}

/* A row bound by software for sw_ns of its dur_ns, by gpu for the rest. */
static struct attrib_row row(int64_t id, int64_t dur_ns, int64_t sw_ns)
{
	struct attrib_row r = {.phase_id = id, .dur_ns = dur_ns, .data_ns = dur_ns};
	r.free_ns = sw_ns;
	r.bneck_ns[ATTRIB_GPU] = dur_ns - sw_ns;
	r.mask = 1u << ATTRIB_GPU;
	r.cover_ns[1] = dur_ns;
	return r;
}

static void test_gpu_node(void **state)
{
	(void)state;
	struct fx *f = build();
	struct store *st = opened(f);
	for (int k = 0; k < 3; k++)
		assert_int_equal(cause_gpu_node(store_db(st), &f->ranks[k]), f->gpu[k]);
	store_close(st);
	assert_true(cause_is_issue(&f->ranks[0], IDLE_INPUT));
	assert_true(cause_is_issue(&f->ranks[0], IDLE_LAUNCH)); /* 10 of 80 ms */
	assert_false(cause_is_issue(&f->ranks[0], IDLE_SYNC));
	assert_false(cause_is_issue(&f->ranks[2], IDLE_HOST)); /* 5 of 100 ms */
	testdir_remove(f->dir);
	free(f);
}

static void test_where(void **state)
{
	(void)state;
	struct fx *f = build();
	struct cause_map *m = NULL;
	char *err = NULL;
	struct cause c;
	struct store *st = opened(f);
	assert_int_equal(cause_map_build(st, &f->g, &m, &err), 0);
	store_close(st);
	/* a rank's GPU and the phases above it, one rank's figures */
	for (int k = 0; k < 2; k++) {
		struct attrib_row r = row(f->rank[k], 100 * MS, 90 * MS);
		assert_int_equal(cause_of(m, &r, &c), 1);
		assert_int_equal(c.gpus, 1);
		r.phase_id = f->gpu[k];
		assert_int_equal(cause_of(m, &r, &c), 1);
	}
	struct attrib_row r = row(f->rank[0], 100 * MS, 90 * MS);
	assert_int_equal(cause_of(m, &r, &c), 1);
	assert_int_equal(c.cause, IDLE_INPUT);
	assert_int_equal(c.ns, 60 * MS);
	assert_int_equal(c.idle_ns, 70 * MS);
	assert_int_equal(c.window_ns, 80 * MS);
	assert_int_equal(c.gaps, IDLE_INPUT + 1);
	assert_true(c.share == 0.75);
	r.phase_id = f->rank[1];
	assert_int_equal(cause_of(m, &r, &c), 1);
	assert_int_equal(c.cause, IDLE_SYNC);
	/* beside or below the GPU's node: none */
	r.phase_id = f->cpu[0];
	assert_int_equal(cause_of(m, &r, &c), 0);
	r.phase_id = f->stream[0];
	assert_int_equal(cause_of(m, &r, &c), 0);
	/* a rank without an idle-gpu issue counts for nothing */
	r.phase_id = f->rank[2];
	assert_int_equal(cause_of(m, &r, &c), 0);
	/* the step sums the two ranks that count: input 80 ms of 140 */
	r.phase_id = f->step;
	assert_int_equal(cause_of(m, &r, &c), 1);
	assert_int_equal(c.gpus, 2);
	assert_int_equal(c.cause, IDLE_INPUT);
	assert_int_equal(c.ns, 80 * MS);
	assert_int_equal(c.window_ns, 140 * MS);
	assert_int_equal(c.idle_ns, 120 * MS);
	/* a verdict other than software keeps no cause */
	r = row(f->step, 100 * MS, 10 * MS);
	assert_int_equal(cause_of(m, &r, &c), 0);
	assert_int_equal(cause_of(NULL, &r, &c), 0);
	cause_map_free(m);
	testdir_remove(f->dir);
	free(f);
}

static void test_words(void **state)
{
	(void)state;
	char buf[64];
	struct cause c = {.cause = IDLE_COMM,
			  .ns = 17 * MS,
			  .gaps = 1,
			  .window_ns = 20 * MS,
			  .gpus = 1,
			  .share = 0.85};
	cause_column(&c, 16, buf, sizeof(buf));
	assert_string_equal(buf, "idle:comm 85%");
	cause_column(&c, 12, buf, sizeof(buf));
	assert_string_equal(buf, "comm 85%");
	cause_column(&c, 6, buf, sizeof(buf));
	assert_string_equal(buf, "comm");
	c.cause = IDLE_LAUNCH;
	c.share = 1;
	cause_column(&c, 16, buf, sizeof(buf));
	assert_string_equal(buf, "idle:launch 100%");
	cause_column(&c, 8, buf, sizeof(buf));
	assert_string_equal(buf, "launch");
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	c.cause = IDLE_INPUT;
	c.share = 0.85;
	cause_text(&c, &sb);
	assert_string_equal(sb.buf,
			    "its GPU idled for input 85% of its window: 17.0 ms of 20.0 ms, 1 gap");
	sbuf_reset(&sb);
	c.gpus = 2;
	c.gaps = 3;
	cause_text(&c, &sb);
	assert_string_equal(
	    sb.buf, "its 2 GPUs idled for input 85% of their windows: 17.0 ms of 20.0 ms, 3 gaps");
	sbuf_reset(&sb);
	struct attrib_row r = row(1, 100 * MS, 90 * MS);
	c.gpus = 1;
	c.gaps = 1;
	cause_bound_text(&r, &c, &sb);
	assert_string_equal(sb.buf, "software 90% (its GPU idled for input 85% of its window:"
				    " 17.0 ms of 20.0 ms, 1 gap), gpu 10% of its 100 ms");
	sbuf_reset(&sb);
	cause_bound_text(&r, NULL, &sb);
	assert_string_equal(sb.buf, "software 90%, gpu 10% of its 100 ms");
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpu_node),
	    cmocka_unit_test(test_where),
	    cmocka_unit_test(test_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
