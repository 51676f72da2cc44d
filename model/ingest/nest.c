/*
 * Phase-tree construction for one source; see nest.h for the contract.
 *
 * Records live in an arena (a fixed header followed by the attrs bytes);
 * nest_finish sorts an index of them, or, when earlier arenas were spilled
 * to sorted runs in a temporary file, k-way merges the runs.  There are two
 * arenas of half the budget each: while the parser fills one, a spill
 * thread sorts and writes the other, so sorting costs the parser nothing.  The sorted
 * stream is consumed by one pass that keeps a stack of open spans for the
 * current track; a span's row is made when it is popped (post-order),
 * with an id reserved when it was pushed (pre-order), so children always
 * know their parent and parents know their self time and child count.
 * Rows then wait in an idorder, to reach the writer thread in id order.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ingest/cmap.h"
#include "model/ingest/idorder.h"
#include "model/ingest/nest.h"
#include "model/ingest/runs.h"
#include "model/util/nstime.h"
#include "model/util/sbuf.h"
#include "model/util/timing.h"
#include "model/ingest/wqueue.h"
#include "model/util/xalloc.h"

#define NEST_ON_DEVICE_KEY (1ULL << 32)

struct rec {
	uint64_t key; /* device bit << 32 | track */
	int64_t start, dur;
	uint64_t seq;
	int64_t name_id, cat_id, corr, flow_cat;
	uint64_t flow_id;
	uint32_t attrs_len;
	uint8_t role, flags, kind, pad;
};

#define REC_SIZE(alen) ((sizeof(struct rec) + (alen) + 7) & ~(size_t)7)

/* One arena and the index of the records in it. */
struct buf {
	char *arena;
	size_t used, cap;
	struct rec **idx;
	size_t nidx, idx_alloc;
};

/* ---- launch map: correlation id -> launching phase ----
 *
 * A cmap of 8 bytes' meaning per correlation id of device work (and of
 * every launch, when some device work is on a host track), kept until
 * every device track has been read: in memory up to half the nest's
 * budget, on disk beyond.
 *
 * The first launch of an id on a host track holds it; with none, the
 * launch on a device track read last before the kernel.  nest_add counts
 * the device work of each id on device tracks, and a host launch, read
 * before any device track, takes that count into its own row (child_count,
 * device_ns): its kernels are linked to it with no UPDATE of a row already
 * written.  Otherwise (a launch on a device track, work on a host track,
 * counts that do not fit or whose times overflow once offset) each kernel
 * is added to its launch one by one: in its frame or its row held in the
 * idorder, or as an UPDATE once its row has gone to the writer.
 *
 * An id's value: LAUNCH_READ clear: the device work counted for it, its
 * number << DEV_NS_BITS | its total time (ns), or LAUNCH_UNCOUNTED when
 * that does not fit; set: the launch that holds the id, phase id << 16 |
 * depth (ids below LAUNCH_ID_LIMIT, depths kept modulo 2^16), LAUNCH_HOST
 * when it is on a host track, and LAUNCH_APPLIED when the counted work is
 * in its row. */

#define LAUNCH_READ	 (1ULL << 63)
#define LAUNCH_APPLIED	 (1ULL << 62)
#define LAUNCH_HOST	 (1ULL << 61)
#define LAUNCH_UNCOUNTED (1ULL << 62)
#define LAUNCH_ID_LIMIT	 (1ULL << 45) /* phase ids the map can hold */
#define DEV_NS_BITS	 42	      /* 73 minutes of device time per correlation id */
#define DEV_NS_MAX	 ((1ULL << DEV_NS_BITS) - 1)
#define DEV_N_MAX	 ((1ULL << (62 - DEV_NS_BITS)) - 1)

static int launch_failed(const struct cmap *m, char **err)
{
	*err = xstrdup(cmap_error(m));
	return -1;
}

/* One more piece of device work of dur ns in an id's count (a cmap_combine:
 * the order of the pieces does not change the result). */
static uint64_t launch_count(uint64_t v, uint64_t dur)
{
	uint64_t n = v >> DEV_NS_BITS, ns = v & DEV_NS_MAX;
	if (v & LAUNCH_UNCOUNTED)
		return v;
	if (n == DEV_N_MAX || dur > DEV_NS_MAX - ns)
		return LAUNCH_UNCOUNTED;
	return (n + 1) << DEV_NS_BITS | (ns + dur);
}

/* Counts device work by batches: its slots are fetched from memory all at
 * once first, rather than one cache miss after another (6% of the parse
 * stage's main thread on the bench went to those misses). */
#define COUNT_BATCH 16

struct counting {
	int64_t corr[COUNT_BATCH], dur[COUNT_BATCH];
	size_t n;
};

static int count_batch(struct cmap *m, struct counting *b, char **err)
{
	for (size_t i = 0; i < b->n; i++)
		cmap_prefetch(m, b->corr[i]);
	size_t n = b->n;
	b->n = 0;
	for (size_t i = 0; i < n; i++)
		if (cmap_add(m, b->corr[i], (uint64_t)b->dur[i]) < 0)
			return launch_failed(m, err);
	return 0;
}

static int launch_id_depth(uint64_t v, int64_t *id)
{
	*id = (int64_t)((v & (LAUNCH_ID_LIMIT - 1) << 16) >> 16);
	return (int)(v & 0xffff);
}

static int rec_role_rank(const struct rec *r)
{
	if (r->role == NEST_FLOW_IN_NEXT)
		return 0;
	return r->role == NEST_SPAN || r->role == NEST_DEVICE ? 1 : 2;
}

static int rec_cmp(const struct rec *a, const struct rec *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	int ra = rec_role_rank(a), rb = rec_role_rank(b);
	if (ra != rb)
		return ra - rb;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int rec_pcmp(const void *x, const void *y)
{
	return rec_cmp(*(struct rec *const *)x, *(struct rec *const *)y);
}

static int rec_vcmp(const void *x, const void *y)
{
	return rec_cmp(x, y);
}

static size_t rec_size(const void *r)
{
	return REC_SIZE(((const struct rec *)r)->attrs_len);
}

static const struct run_kind rec_runs = {sizeof(struct rec), rec_size, rec_vcmp};

struct nest {
	struct buf buf[2];
	int cur;	  /* records go into buf[cur] */
	struct runs runs; /* the spill thread's while a job is out */
	uint64_t seq;
	uint32_t max_track;
	size_t arena_bytes; /* the memory budget given to nest_new */
	struct cmap *launches;
	int all_launches;	  /* device work on a host track: keep every launch */
	struct counting counting; /* device work not yet in launches */
	/* the counted device work's window, raw; whether start + dur overflowed */
	int64_t dev_min, dev_max;
	int dev_overflow;
	/* the spill thread: sorts and writes *job, then sets it NULL */
	pthread_t thread;
	int thread_on, stop;
	pthread_mutex_t mu;
	pthread_cond_t changed;
	struct buf *job;
	char *job_err; /* its first error */
};

static void buf_release(struct buf *b)
{
	free(b->arena);
	free(b->idx);
	memset(b, 0, sizeof(*b));
}

struct nest *nest_new(size_t arena_bytes)
{
	struct nest *n = xcalloc(1, sizeof(*n));
	if (arena_bytes < 8192)
		arena_bytes = 8192;
	n->arena_bytes = arena_bytes;
	n->dev_min = INT64_MAX;
	n->dev_max = INT64_MIN;
	n->launches = cmap_new(arena_bytes / 2, launch_count);
	runs_init(&n->runs, &rec_runs);
	for (int i = 0; i < 2; i++)
		n->buf[i].cap = arena_bytes / 2; /* allocated when first filled */
	n->buf[0].arena = xmalloc(n->buf[0].cap);
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->changed, NULL);
	return n;
}

/* Waits until the spill thread is idle; its error, if any, goes to *err. */
static int spill_wait(struct nest *n, char **err)
{
	if (!n->thread_on)
		return 0;
	pthread_mutex_lock(&n->mu);
	while (n->job)
		pthread_cond_wait(&n->changed, &n->mu);
	char *e = n->job_err;
	n->job_err = NULL;
	pthread_mutex_unlock(&n->mu);
	if (e) {
		*err = e;
		return -1;
	}
	return 0;
}

static void spill_stop(struct nest *n)
{
	if (!n->thread_on)
		return;
	pthread_mutex_lock(&n->mu);
	n->stop = 1;
	pthread_cond_broadcast(&n->changed);
	pthread_mutex_unlock(&n->mu);
	pthread_join(n->thread, NULL);
	n->thread_on = 0;
	free(n->job_err);
	n->job_err = NULL;
}

void nest_free(struct nest *n)
{
	if (!n)
		return;
	spill_stop(n);
	runs_release(&n->runs);
	cmap_free(n->launches);
	buf_release(&n->buf[0]);
	buf_release(&n->buf[1]);
	pthread_mutex_destroy(&n->mu);
	pthread_cond_destroy(&n->changed);
	free(n);
}

/* Sorts b's records and writes them as a new run; b is then empty.  Runs
 * only where nothing else touches b or the run list. */
static int spill(struct nest *n, struct buf *b, char **err)
{
	if (!b->nidx)
		return 0;
	qsort(b->idx, b->nidx, sizeof(*b->idx), rec_pcmp);
	if (runs_write(&n->runs, (void *const *)b->idx, b->nidx, err) < 0)
		return -1;
	b->nidx = 0;
	b->used = 0;
	return 0;
}

static void *spill_thread(void *arg)
{
	struct nest *n = arg;
	pthread_mutex_lock(&n->mu);
	for (;;) {
		while (!n->job && !n->stop)
			pthread_cond_wait(&n->changed, &n->mu);
		if (!n->job)
			break;
		struct buf *b = n->job;
		pthread_mutex_unlock(&n->mu);
		char *err = NULL;
		int rc = spill(n, b, &err);
		pthread_mutex_lock(&n->mu);
		if (rc < 0 && !n->job_err)
			n->job_err = err;
		else
			free(err);
		n->job = NULL;
		pthread_cond_broadcast(&n->changed);
	}
	pthread_mutex_unlock(&n->mu);
	return NULL;
}

/* Hands the full current buffer to the spill thread and switches to the
 * other one, waiting until that one has been written. */
static int spill_async(struct nest *n, char **err)
{
	if (!n->thread_on) {
		if (pthread_create(&n->thread, NULL, spill_thread, n) != 0)
			return spill(n, &n->buf[n->cur], err); /* no thread: sort here */
		n->thread_on = 1;
	}
	if (spill_wait(n, err) < 0)
		return -1;
	pthread_mutex_lock(&n->mu);
	n->job = &n->buf[n->cur];
	pthread_cond_broadcast(&n->changed);
	pthread_mutex_unlock(&n->mu);
	n->cur ^= 1;
	struct buf *b = &n->buf[n->cur];
	if (!b->arena)
		b->arena = xmalloc(b->cap);
	return 0;
}

int nest_add(struct nest *n, const struct nest_span *s, char **err)
{
	size_t alen = s->attrs ? s->attrs_len : 0;
	size_t need = REC_SIZE(alen);
	struct buf *b = &n->buf[n->cur];
	if (b->used + need > b->cap) {
		if (b->nidx && spill_async(n, err) < 0)
			return -1;
		b = &n->buf[n->cur];
		if (need > b->cap) {
			b->arena = xrealloc(b->arena, need);
			b->cap = need;
		}
	}
	if (s->role == NEST_DEVICE && s->corr) {
		int64_t dur = s->dur < 0 ? 0 : s->dur, end;
		if (!(s->flags & NEST_ON_DEVICE)) {
			n->all_launches = 1;
		} else {
			struct counting *cb = &n->counting;
			cb->corr[cb->n] = s->corr;
			cb->dur[cb->n++] = dur;
			if (cb->n == COUNT_BATCH && count_batch(n->launches, cb, err) < 0)
				return -1;
			if (__builtin_add_overflow(s->start, dur, &end))
				n->dev_overflow = 1;
			else if (end > n->dev_max)
				n->dev_max = end;
			if (s->start < n->dev_min)
				n->dev_min = s->start;
		}
	}
	struct rec *r = (struct rec *)(b->arena + b->used);
	memset(r, 0, sizeof(*r));
	r->key = s->track | ((s->flags & NEST_ON_DEVICE) ? NEST_ON_DEVICE_KEY : 0);
	r->start = s->start;
	r->dur = s->dur < 0 ? 0 : s->dur;
	r->seq = n->seq++;
	r->name_id = s->name_id;
	r->cat_id = s->cat_id;
	r->corr = s->corr;
	r->flow_cat = s->flow_cat;
	r->flow_id = s->flow_id;
	r->attrs_len = (uint32_t)alen;
	r->role = s->role;
	r->flags = s->flags;
	r->kind = s->kind;
	if (alen)
		memcpy(r + 1, s->attrs, alen);
	b->used += need;
	XGROW(b->idx, b->nidx + 1, b->idx_alloc);
	b->idx[b->nidx++] = r;
	return 0;
}

/* ---- the consuming pass ---- */

struct frame {
	int64_t id, parent_id;
	int64_t start, end;
	int64_t nest_end; /* end clipped to the parent's: later spans nest only inside it */
	int64_t covered, nchild;
	int64_t device_ns; /* device work beneath it, counted in its row */
	int64_t name_id, cat_id;
	int depth, kind;
	int linked; /* device work under its launch, which counted its own time */
	struct sbuf attrs;
};

/* One end of a flow, kept for link_flows.  fid is compared as a signed
 * integer, as the flow ids of earlier versions were (in SQLite). */
struct flow_end {
	int64_t cat, fid, t;
	uint64_t seq;	    /* the order it was recorded in: ties in t */
	int64_t phase, dir; /* dir 0: the start, 1: the end */
};

struct pending_flow { /* a "next slice" flow end waiting for its span */
	int64_t cat, t;
	uint64_t fid;
};

struct ctx {
	struct store *st;
	int64_t source_id;
	struct nest_track *tracks;
	size_t ntracks;
	int64_t off;
	struct nest_stats *stats;
	char **err;
	struct nest_track *t; /* current track */
	struct frame *stack;
	size_t depth, alloc;
	/* the current track's busy time: the union of its spans (on a stream,
	 * of its device work), covered up to cover_end; the device work's
	 * window (dev_end < dev_start: none yet) */
	int64_t busy, cover_end, top_children;
	int64_t top_device; /* the device time beneath the track's node */
	int64_t dev_start, dev_end;
	struct pending_flow *pending;
	size_t npending, pending_alloc;
	struct cmap *launches; /* the nest's */
	int all_launches;
	int counted; /* the counts of device work hold once offset */
	/* the flow ends recorded so far (a 16th of the arena budget's worth in
	 * memory), paired by the main thread: the writer is busy enough */
	struct run_buffer flows;
	uint64_t flow_seq;
	struct wqueue *q;    /* the writes, done by the writer thread */
	struct idorder *ord; /* phases on their way to q, put back in id order */
	/* the writer's phases not yet written: batched into one statement */
	struct phase_row pend[STORE_PHASE_BATCH];
	size_t npend;
	struct event_row epend[STORE_EVENT_BATCH]; /* and its events */
	size_t nepend;
};

/* ---- the writes: queued here, done on the writer thread ---- */

/* Rows held to be written in id order: a window of ids (about 0.6 MiB of
 * slots), their attrs bounded by a sixteenth of the nest's memory budget,
 * as the flow ends are. */
#define ORDER_WINDOW 4096

enum wop { W_PHASE, W_EVENT, W_LAUNCH };

/* One queued write; a phase's or an event's attrs follow it. */
struct wmsg {
	int op;
	union {
		struct phase_row phase;
		struct {
			int64_t track_id, t, name_id, phase_id;
		} event;
		struct {
			int64_t id, kernels, device_ns;
		} launch;
	} u;
};

static int push(struct ctx *c, const struct wmsg *m, const void *tail, size_t tlen)
{
	if (wqueue_push(c->q, m, sizeof(*m), tail, tlen) == 0)
		return 0;
	/* the writer failed: its error comes back from wqueue_finish */
	return -1;
}

/* The writer thread's side: one queued write into the store. */
static int do_write(void *arg, const void *msg, size_t len, char **err)
{
	struct ctx *c = arg;
	const struct wmsg *m = msg;
	/* attrs point into the chunk: written by the end of it at the latest */
	size_t tlen = m ? len - sizeof(*m) : 0;
	const char *tail = tlen ? (const char *)msg + sizeof(*m) : NULL;
	if (m && m->op == W_PHASE) {
		struct phase_row *p = &c->pend[c->npend++];
		*p = m->u.phase;
		p->attrs_len = tlen;
		p->attrs = tail;
		if (c->npend < STORE_PHASE_BATCH)
			return 0;
	}
	if (m && m->op == W_EVENT) {
		c->epend[c->nepend++] = (struct event_row){.source_id = c->source_id,
							   .track_id = m->u.event.track_id,
							   .t_ns = m->u.event.t,
							   .name_id = m->u.event.name_id,
							   .phase_id = m->u.event.phase_id,
							   .attrs = tail,
							   .attrs_len = tlen};
		if (c->nepend < STORE_EVENT_BATCH)
			return 0;
	}
	if ((!m || m->op == W_EVENT) && c->nepend) {
		size_t n = c->nepend;
		c->nepend = 0;
		if (store_add_events(c->st, c->epend, n, err) < 0)
			return -1;
	}
	/* Events do not read phases, so they leave the batch alone; a launch's
	 * update needs its row, which may be waiting here. */
	int flush = !m || m->op == W_PHASE;
	for (size_t i = 0; !flush && m->op == W_LAUNCH && i < c->npend; i++)
		flush = c->pend[i].id == m->u.launch.id;
	if (flush && c->npend) {
		size_t n = c->npend;
		c->npend = 0;
		if (store_add_phases(c->st, c->pend, n, err) < 0)
			return -1;
	}
	if (!m || m->op != W_LAUNCH)
		return 0;
	return store_add_launch_stats(c->st, m->u.launch.id, m->u.launch.kernels,
				      m->u.launch.device_ns, err);
}

static int push_phase(void *arg, const struct phase_row *p)
{
	struct wmsg m = {.op = W_PHASE, .u.phase = *p};
	m.u.phase.attrs = NULL;
	return push(arg, &m, p->attrs, p->attrs ? p->attrs_len : 0);
}

static int queue_phase(struct ctx *c, const struct phase_row *p)
{
	return idorder_put(c->ord, p);
}

static int is_device_work(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET;
}

/* A phase's device time as the nest writes it: the sum of the device work
 * in its subtree, its own included.  Where work beneath it overlaps,
 * store_commit replaces it with the union (devunion.h); elsewhere the two
 * agree, and the row needs no second write. */
static int64_t frame_device_ns(const struct frame *f)
{
	return ns_sum(is_device_work(f->kind) ? f->end - f->start : 0, f->device_ns);
}

static int write_frame(struct ctx *c, struct frame *f)
{
	int64_t self = (f->end - f->start) - f->covered;
	struct phase_row p = {
	    .id = f->id,
	    .parent_id = f->parent_id,
	    .kind = f->kind,
	    .name_id = f->name_id,
	    .cat_id = f->cat_id,
	    .track_id = c->t->track_id,
	    .source_id = c->source_id,
	    .start_ns = f->start,
	    .dur_ns = f->end - f->start,
	    .self_ns = self < 0 ? 0 : self,
	    .device_ns = frame_device_ns(f),
	    .child_count = f->nchild,
	    .depth = f->depth,
	    .attrs = f->attrs.len ? f->attrs.buf : NULL,
	    .attrs_len = f->attrs.len,
	};
	c->stats->phases++;
	return queue_phase(c, &p);
}

/* Adds kernels and their device time to the launch id: in its frame while
 * it is open (passed up as it is written), or in its row on the way to the
 * writer, else with an UPDATE of its row; the rows above it, written
 * without it, store_commit sets (devunion.h). */
static int launch_adjust(struct ctx *c, int64_t id, int64_t kernels, int64_t device_ns)
{
	for (size_t i = c->depth; i-- > 0;)
		if (c->stack[i].id == id) {
			c->stack[i].nchild += kernels;
			c->stack[i].device_ns = ns_sum(c->stack[i].device_ns, device_ns);
			return 0;
		}
	struct phase_row *held = idorder_find(c->ord, id);
	if (held) {
		held->child_count += kernels;
		held->device_ns = ns_sum(held->device_ns, device_ns);
		return 0;
	}
	struct wmsg m = {.op = W_LAUNCH};
	m.u.launch.id = id;
	m.u.launch.kernels = kernels;
	m.u.launch.device_ns = device_ns;
	return push(c, &m, NULL, 0);
}

/* Passes a written frame's device time to its parent: the span beneath it
 * on the stack or the track's node, which pass it on when they are written
 * in turn (the nodes above the nest get theirs at store_commit).  Device work under its launch was
 * counted there when it was linked: only what it launched in turn is left to add. */
static int credit_parent(struct ctx *c, const struct frame *f)
{
	if (f->linked)
		return f->device_ns ? launch_adjust(c, f->parent_id, 0, f->device_ns) : 0;
	struct frame *top = c->depth ? &c->stack[c->depth - 1] : NULL;
	if (top && top->id == f->parent_id)
		top->device_ns = ns_sum(top->device_ns, frame_device_ns(f));
	else if (f->parent_id == c->t->node_id)
		c->top_device = ns_sum(c->top_device, frame_device_ns(f));
	return 0;
}

static int pop_until(struct ctx *c, int64_t t)
{
	while (c->depth && c->stack[c->depth - 1].nest_end <= t) {
		struct frame *f = &c->stack[--c->depth];
		if (write_frame(c, f) < 0 || credit_parent(c, f) < 0)
			return -1;
	}
	return 0;
}

static int flow_cmp(const void *x, const void *y)
{
	const struct flow_end *a = x, *b = y;
	if (a->cat != b->cat)
		return a->cat < b->cat ? -1 : 1;
	if (a->fid != b->fid)
		return a->fid < b->fid ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static size_t flow_size(const void *e)
{
	(void)e;
	return sizeof(struct flow_end);
}

static const struct run_kind flow_runs = {sizeof(struct flow_end), flow_size, flow_cmp};

/* Records one end of a flow for pairing in link_flows. dir 0: start, 1: end. */
static int record_flow(struct ctx *c, int64_t cat, uint64_t fid, int dir, int64_t phase, int64_t t)
{
	struct flow_end *e = run_buffer_add(&c->flows, c->err);
	if (!e)
		return -1;
	*e = (struct flow_end){cat, (int64_t)fid, t, c->flow_seq++, phase, dir};
	return 0;
}

static int end_track(struct ctx *c)
{
	struct nest_track *t = c->t;
	if (!t)
		return 0;
	if (pop_until(c, INT64_MAX) < 0)
		return -1;
	c->stats->unbound_points += (int64_t)c->npending;
	c->npending = 0;
	c->t = NULL;
	if (!t->used)
		return 0; /* every record overflowed: the track has no node */
	if (t->kind == PHASE_STREAM && c->dev_start <= c->dev_end) {
		t->start = c->dev_start; /* a stream's window is its device work's */
		t->end = c->dev_end;
	}
	int64_t win = t->end - t->start;
	struct phase_row p = {
	    .id = t->node_id,
	    .parent_id = t->parent_id,
	    .kind = t->kind,
	    .name_id = t->name_id,
	    .track_id = t->track_id,
	    .source_id = c->source_id,
	    .start_ns = t->start,
	    .dur_ns = win,
	    .self_ns = win - c->busy > 0 ? win - c->busy : 0,
	    .device_ns = c->top_device,
	    .child_count = c->top_children,
	    .depth = t->depth,
	};
	c->stats->phases++;
	return queue_phase(c, &p);
}

static void cover(struct ctx *c, int64_t s, int64_t e)
{
	if (e <= c->cover_end)
		return;
	c->busy += e - (s > c->cover_end ? s : c->cover_end);
	c->cover_end = e;
}

static int is_point(int role)
{
	return role == NEST_FLOW_OUT || role == NEST_FLOW_IN || role == NEST_INSTANT ||
	       role == NEST_FLOW_IN_NEXT;
}

static int consume_point(struct ctx *c, const struct rec *r, int64_t t)
{
	struct frame *top = c->depth ? &c->stack[c->depth - 1] : NULL;
	int64_t bound = top ? top->id : 0;
	if (r->role == NEST_INSTANT) {
		c->stats->events++;
		struct wmsg m = {.op = W_EVENT};
		m.u.event.track_id = c->t->track_id;
		m.u.event.t = t;
		m.u.event.name_id = r->name_id;
		m.u.event.phase_id = bound;
		return push(c, &m, r + 1, r->attrs_len);
	}
	if (r->role == NEST_FLOW_IN_NEXT) {
		XGROW(c->pending, c->npending + 1, c->pending_alloc);
		c->pending[c->npending++] = (struct pending_flow){r->flow_cat, t, r->flow_id};
		return 0;
	}
	if (!bound) {
		c->stats->unbound_points++;
		return 0;
	}
	return record_flow(c, r->flow_cat, r->flow_id, r->role == NEST_FLOW_OUT ? 0 : 1, bound, t);
}

/* Makes f the launch of its correlation id (see the launch map). */
static int launch_bind(struct ctx *c, const struct rec *r, struct frame *f)
{
	if ((uint64_t)f->id >= LAUNCH_ID_LIMIT)
		return 0; /* its kernels go unlinked (counted), not to a wrapped id */
	uint64_t v = 0;
	int got = cmap_get(c->launches, r->corr, &v);
	if (got < 0)
		return launch_failed(c->launches, c->err);
	if ((!got && !c->all_launches) || (v & LAUNCH_READ && v & LAUNCH_HOST))
		return 0; /* no device work has the id; or a host launch holds it */
	int host = !(r->key & NEST_ON_DEVICE_KEY);
	uint64_t nv = LAUNCH_READ | (host ? LAUNCH_HOST : 0) | (uint64_t)f->id << 16 |
		      (uint64_t)(f->depth & 0xffff);
	if (host && !(v & LAUNCH_READ) && !(v & LAUNCH_UNCOUNTED) && c->counted &&
	    (v >> DEV_NS_BITS)) {
		f->nchild += (int64_t)(v >> DEV_NS_BITS);
		f->device_ns = ns_sum(f->device_ns, (int64_t)(v & DEV_NS_MAX));
		nv |= LAUNCH_APPLIED;
	}
	return cmap_put(c->launches, r->corr, nv) < 0 ? launch_failed(c->launches, c->err) : 0;
}

/* Chooses the parent of a new span: its launch, the enclosing span, or the track. */
static int place_span(struct ctx *c, const struct rec *r, struct frame *f)
{
	struct nest_track *t = c->t;
	struct frame *top = c->depth ? &c->stack[c->depth - 1] : NULL;
	uint64_t v = 0;
	int got = 0;
	if (r->role == NEST_DEVICE && r->corr && (got = cmap_get(c->launches, r->corr, &v)) < 0)
		return launch_failed(c->launches, c->err);
	if (got && (v & LAUNCH_READ)) {
		f->depth = launch_id_depth(v, &f->parent_id) + 1;
		f->linked = 1;
		if ((v & LAUNCH_APPLIED) && (r->key & NEST_ON_DEVICE_KEY))
			return 0; /* counted in the launch's row */
		return launch_adjust(c, f->parent_id, 1, f->end - f->start);
	}
	if (top && !(r->flags & NEST_FLAT) && r->role != NEST_DEVICE) {
		f->parent_id = top->id;
		f->depth = top->depth + 1;
		f->nest_end = f->end < top->nest_end ? f->end : top->nest_end;
		top->nchild++;
		if (f->end > top->end)
			c->stats->overlaps++;
		top->covered += (f->end < top->end ? f->end : top->end) - f->start;
		return 0;
	}
	if (r->role == NEST_DEVICE)
		c->stats->unlinked++;
	f->parent_id = t->node_id;
	f->depth = t->depth + 1;
	c->top_children++;
	return 0;
}

static struct frame *push_frame(struct ctx *c)
{
	if (c->depth == c->alloc) {
		size_t na = c->alloc ? c->alloc * 2 : 64;
		c->stack = xrealloc(c->stack, na * sizeof(*c->stack));
		for (size_t i = c->alloc; i < na; i++)
			sbuf_init(&c->stack[i].attrs);
		c->alloc = na;
	}
	return &c->stack[c->depth++];
}

static int consume(struct ctx *c, const struct rec *r)
{
	uint32_t ti = (uint32_t)(r->key & 0xffffffffu);
	if (ti >= c->ntracks) {
		*c->err = xasprintf("internal error: record on unknown track %u", ti);
		return -1;
	}
	struct nest_track *t = &c->tracks[ti];
	if (t != c->t) {
		if (end_track(c) < 0)
			return -1;
		c->t = t;
		c->busy = c->top_children = c->top_device = 0;
		c->cover_end = INT64_MIN;
		c->dev_start = INT64_MAX;
		c->dev_end = INT64_MIN;
		t->used = 0;
	}
	int point = is_point(r->role);
	int64_t start, end;
	if (__builtin_add_overflow(r->start, c->off, &start) ||
	    (!point && __builtin_add_overflow(start, r->dur, &end))) {
		if (point)
			c->stats->point_overflow++;
		else
			c->stats->span_overflow++;
		return 0;
	}
	if (point)
		end = start;
	if (!t->used) {
		t->start = start;
		t->end = end;
		t->used = 1;
	}
	if (end > t->end)
		t->end = end;
	if (pop_until(c, start) < 0)
		return -1;
	/* a profiler step is a unit of iteration: a span that ends before it
	 * does only opened it (XLA's StepTraceAnnotation begins inside the
	 * Python frame of its __init__), and ends there without holding it */
	if (r->kind == PHASE_PROFILER_STEP && pop_until(c, end - 1) < 0)
		return -1;
	if (point)
		return consume_point(c, r, start);

	/* a stream's busy time and items are its device work alone (kernels,
	 * copies, sets), as HTA counts them */
	if (t->kind != PHASE_STREAM || is_device_work(r->kind)) {
		cover(c, start, end);
		t->spans++;
	}
	if (t->kind == PHASE_STREAM && is_device_work(r->kind)) {
		c->dev_start = start < c->dev_start ? start : c->dev_start;
		c->dev_end = end > c->dev_end ? end : c->dev_end;
	}
	struct frame f = {
	    .id = store_reserve_phase_id(c->st),
	    .start = start,
	    .end = end,
	    .nest_end = end,
	    .name_id = r->name_id,
	    .cat_id = r->cat_id,
	    .kind = r->kind,
	};
	if (place_span(c, r, &f) < 0)
		return -1;
	if ((r->flags & NEST_LAUNCH) && r->corr)
		if (launch_bind(c, r, &f) < 0)
			return -1;
	if ((r->flags & (NEST_BIND_OUT | NEST_BIND_IN)) &&
	    record_flow(c, r->flow_cat, r->flow_id, (r->flags & NEST_BIND_OUT) ? 0 : 1, f.id,
			start) < 0)
		return -1;
	for (size_t i = 0; i < c->npending; i++)
		if (record_flow(c, c->pending[i].cat, c->pending[i].fid, 1, f.id, c->pending[i].t) <
		    0)
			return -1;
	c->npending = 0;
	if (r->flags & NEST_FLAT) {
		sbuf_init(&f.attrs);
		if (r->attrs_len)
			sbuf_add(&f.attrs, r + 1, r->attrs_len);
		int rc = write_frame(c, &f) < 0 || credit_parent(c, &f) < 0 ? -1 : 0;
		sbuf_release(&f.attrs);
		return rc;
	}
	struct frame *slot = push_frame(c);
	struct sbuf keep = slot->attrs; /* each slot keeps its buffer for reuse */
	*slot = f;
	slot->attrs = keep;
	sbuf_reset(&slot->attrs);
	if (r->attrs_len)
		sbuf_add(&slot->attrs, r + 1, r->attrs_len);
	return 0;
}

/* ---- the consuming pass over the merged runs ---- */

static int sink_consume(void *arg, const void *r)
{
	return consume(arg, r);
}

/* The edge kind a flow category stands for. */
static int flow_kind(struct store *st, int64_t cat)
{
	struct sbuf name = SBUF_INIT;
	char *err = NULL;
	const char *s = store_string(st, cat, &name, &err);
	int kind = EDGE_FLOW;
	if (s && (!strcmp(s, "ac2g") || !strcmp(s, "async_cpu_to_gpu") || !strcmp(s, "async")))
		kind = EDGE_LAUNCH;
	else if (s && !strcmp(s, "fwdbwd"))
		kind = EDGE_FWDBWD;
	free(err);
	sbuf_release(&name);
	return kind;
}

/* Pairs flow ends in one ordered pass: within a (category, id), each end
 * takes the latest start before it (equal times: the one recorded first).
 * Ends without a start and starts no end took are lone. */
struct pairing {
	struct ctx *c;
	sqlite3_stmt *ins;
	int64_t cat, fid, start, kind_cat;
	int have_group, start_used, kind;
};

static int pair_flow(void *arg, const void *rec)
{
	struct pairing *p = arg;
	const struct flow_end *e = rec;
	struct nest_stats *stats = p->c->stats;
	if (!p->have_group || e->cat != p->cat || e->fid != p->fid) {
		if (p->have_group && p->start && !p->start_used)
			stats->lone_flows++;
		p->have_group = 1;
		p->cat = e->cat;
		p->fid = e->fid;
		p->start = 0;
	}
	if (e->dir == 0) {
		if (p->start && !p->start_used)
			stats->lone_flows++;
		p->start = e->phase;
		p->start_used = 0;
		return 0;
	}
	if (!p->start) {
		stats->lone_flows++;
		return 0;
	}
	p->start_used = 1;
	if (p->start == e->phase)
		return 0;
	if (e->cat != p->kind_cat) {
		p->kind = flow_kind(p->c->st, e->cat);
		p->kind_cat = e->cat;
	}
	sqlite3_bind_int64(p->ins, 1, p->start);
	sqlite3_bind_int64(p->ins, 2, e->phase);
	sqlite3_bind_int(p->ins, 3, p->kind);
	int rc = sqlite3_step(p->ins);
	sqlite3_reset(p->ins);
	if (rc != SQLITE_DONE) {
		*p->c->err = xasprintf("%s: cannot write a flow edge: %s", store_path(p->c->st),
				       sqlite3_errmsg(store_db(p->c->st)));
		return -1;
	}
	stats->edges++;
	return 0;
}

static int link_flows(struct ctx *c)
{
	struct pairing p = {.c = c, .kind_cat = -1, .kind = EDGE_FLOW};
	sqlite3 *db = store_db(c->st);
	if (sqlite3_prepare_v2(db, "INSERT INTO edges(src, dst, kind) VALUES (?1, ?2, ?3)", -1,
			       &p.ins, NULL) != SQLITE_OK) {
		*c->err =
		    xasprintf("%s: cannot pair flows: %s", store_path(c->st), sqlite3_errmsg(db));
		return -1;
	}
	int rc = -1;
	if (run_buffer_merge(&c->flows, pair_flow, &p, c->err) < 0)
		goto out;
	if (p.have_group && p.start && !p.start_used)
		c->stats->lone_flows++;
	rc = 0;
out:
	sqlite3_finalize(p.ins);
	return rc;
}

int nest_finish(struct nest *n, struct store *st, int64_t source_id, struct nest_track *tracks,
		size_t ntracks, int64_t offset_ns, struct nest_stats *stats, char **err)
{
	struct ctx c = {
	    .st = st,
	    .source_id = source_id,
	    .tracks = tracks,
	    .ntracks = ntracks,
	    .off = offset_ns,
	    .stats = stats,
	    .err = err,
	};
	int rc = -1;
	int64_t lo, hi;
	c.launches = n->launches;
	c.all_launches = n->all_launches;
	if (count_batch(n->launches, &n->counting, err) < 0)
		return -1;
	if (cmap_settle(n->launches) < 0)
		return launch_failed(n->launches, err);
	c.counted = !n->dev_overflow && !__builtin_add_overflow(n->dev_min, offset_ns, &lo) &&
		    !__builtin_add_overflow(n->dev_max, offset_ns, &hi);
	run_buffer_init(&c.flows, &flow_runs, n->arena_bytes / 16 / sizeof(struct flow_end));
	for (size_t i = 0; i < ntracks; i++)
		tracks[i].used = 0, tracks[i].spans = 0;
	if (!(c.q = wqueue_start(do_write, &c, err)))
		goto out;
	c.ord =
	    idorder_new(store_next_phase_id(st), ORDER_WINDOW, n->arena_bytes / 16, push_phase, &c);
	struct buf *b = &n->buf[n->cur];
	if (spill_wait(n, err) < 0)
		goto out;
	if (n->runs.n) { /* some arena was spilled (a full one: never an empty run) */
		if (spill(n, b, err) < 0)
			goto out;
		spill_stop(n);
		/* the arenas are on disk now: give their memory back before merging */
		buf_release(&n->buf[0]);
		buf_release(&n->buf[1]);
		if (runs_merge(&n->runs, sink_consume, &c, err) < 0)
			goto out;
	} else if (b->nidx) {
		qsort(b->idx, b->nidx, sizeof(*b->idx), rec_pcmp);
		for (size_t i = 0; i < b->nidx; i++)
			if (consume(&c, b->idx[i]) < 0)
				goto out;
	}
	if (end_track(&c) < 0 || idorder_flush(c.ord) < 0)
		goto out;
	timing_mark("sort, nest (main thread)");
	rc = 0;
out:
	/* The writer's error, if any, is the one to report: a failed push
	 * only says that the writer stopped. */
	if (c.q) {
		char *werr = NULL;
		if (wqueue_finish(c.q, &werr) < 0) {
			free(rc < 0 ? *err : NULL);
			*err = werr;
			rc = -1;
		}
	}
	timing_mark("writer catching up"); /* what it had left when the tree was built */
	if (rc == 0 && link_flows(&c) < 0)
		rc = -1;
	timing_mark("flows");
	run_buffer_release(&c.flows);
	idorder_free(c.ord);
	free(c.pending);
	for (size_t i = 0; i < c.alloc; i++)
		sbuf_release(&c.stack[i].attrs);
	free(c.stack);
	return rc;
}
