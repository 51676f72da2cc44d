/*
 * Resource attribution and bottlenecks: the method and its choices are in
 * attrib.h.  How it runs:
 *
 *   1. One scan of phases and tracks; the metrics worth attributing (and
 *      those bounds are judged on besides: per-CPU util, iowait) and their
 *      samples, as periods each sample holds, with the gaps between
 *      (model/store/sample.h).  A class is the work of one host's CPU side, or
 *      of one GPU of a host; each metric belongs to one class.  Within the
 *      windows of the traces of a GPU's device work, its utilization is
 *      that work's union instead (attrib.h; devwork_measure).
 *   2. Per class, its work is laid out in lanes: a CPU thread is one lane
 *      whose innermost open phase works (phases nest by time); a GPU
 *      stream's or executor's phases are packed into lanes of phases that
 *      do not overlap.  A lane yields exclusive segments in time order.
 *   3. Sweep one: the lanes are merged in time with every metric's sample
 *      boundaries; for each sample period, how long each mix of active
 *      phase types (counts per type: the "key") lasted.  From that, the
 *      NNLS fit of each metric's Variable demands, then each period
 *      upsampled per key in GradeML's three passes.
 *   4. Sweep two: the same merge; at every change of key or period the
 *      usage rate per phase type follows from the upsampled values, as
 *      running integrals; a segment's share is the difference of the
 *      integrals at its ends, added to every kept ancestor (attrib.h:
 *      ATTRIB_MIN_NS), which notes the classes its work ran in.
 *   5. Bottlenecks: each kept phase's window judged on what was measured
 *      in the classes its work ran in (model/analysis/bottleneck.c), into
 *      its row beside what it used.
 *
 * Step 1 is attrib_load.c, the fit and upsampling of step 3 attrib_fit.c,
 * step 5 bottleneck.c; the cache in trace.db is attrib_cache.c and the
 * user's demand rules attrib_rules.c (attrib_int.h: what they share).
 *
 * Memory: 30 bytes per phase, 4 per phase of work, the kept rows, and per
 * class about 70 bytes per boundary of its judged metrics' samples.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/attrib.h"
#include "model/analysis/attrib_int.h"
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/util/nstime.h"
#include "model/store/ptree.h"
#include "model/util/spans.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

static const struct {
	const char *name;
	int device;
} res_info[] = {
#define X(id, name, dev) {name, dev},
    ATTRIB_RES_LIST(X)
#undef X
};

const char *attrib_res_name(int res)
{
	if (res == ATTRIB_SOFTWARE)
		return "software";
	if (res == ATTRIB_THREAD)
		return "single-thread";
	return res >= 0 && res < ATTRIB_NRES ? res_info[res].name : "?";
}

int attrib_res_of(const char *s)
{
	for (int r = 0; r < ATTRIB_NBNECK; r++)
		if (!strcmp(s, attrib_res_name(r)))
			return r;
	return -1;
}

int attrib_res_device(int res)
{
	return res >= 0 && res < ATTRIB_NRES ? res_info[res].device : 0;
}

const char *const attrib_type_names[2][NTYPES] = {
    {"operator", "runtime", "annotation", "task", "other"},
    {"kernel", "memcpy", "memset", NULL, NULL},
};

/* A lane: phase indexes, by start then longest first. */
struct lane {
	int32_t *ph;
	size_t n, i;
	int32_t *stack;
	int64_t *stack_end;
	size_t sp, salloc;
	int64_t cur;
	int64_t s0, s1; /* the segment now or next */
	double busy;	/* the part of the segment now that its track's earlier ones left */
	int32_t who;
	int active, done;
	double snap[ATTRIB_NRES];
};

int attrib_fail(struct run *r, const char *what)
{
	*r->err = xasprintf("%s: cannot read %s: %s", r->path, what, sqlite3_errmsg(r->db));
	return -1;
}

/* The phase type of a phase of the given kind on a track, or -1 when it is
 * no work of its own (a container, or GPU annotations over kernels). */
int attrib_type_of(int kind, int leaf, const struct track *t)
{
	if (t->device >= 0)
		return kind == PHASE_KERNEL   ? 0
		       : kind == PHASE_MEMCPY ? 1
		       : kind == PHASE_MEMSET ? 2
					      : -1;
	switch (kind) {
	case PHASE_OPERATOR:
		return 0;
	case PHASE_RUNTIME:
		return 1;
	case PHASE_ANNOTATION:
	case PHASE_PROFILER_STEP:
		return 2;
	case PHASE_TASK:
		return 3;
	default: /* a part of the workflow with nothing traced beneath it */
		return leaf && level_of(kind, t->thread) == LEVEL_PART ? 4 : -1;
	}
}

/* ---- lanes ---- */

struct work {
	int32_t ph;
	int64_t start, end;
};

static int by_start(const void *a, const void *b)
{
	const struct work *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the outer first */
	return (x->ph > y->ph) - (x->ph < y->ph);
}

/* Lays out the work of class c in lanes; *types gets each phase's type. */
static struct lane *make_lanes(struct run *r, int c, uint8_t *types, size_t *nlanes)
{
	struct phases *p = &r->p;
	size_t *count = xcalloc(r->ntracks + 1, sizeof(*count));
	size_t total = 0;
	for (size_t i = 0; i < p->n; i++) {
		int32_t t = p->track[i];
		types[i] = 0xff;
		if (t < 0 || r->tracks[t].cls != c || p->end[i] <= p->start[i])
			continue;
		int ty = attrib_type_of(p->kind[i], p->leaf[i], &r->tracks[t]);
		if (ty < 0)
			continue;
		types[i] = (uint8_t)ty;
		count[t]++;
		total++;
	}
	struct work *w = xmalloc((total + 1) * sizeof(*w));
	size_t *at = xcalloc(r->ntracks + 1, sizeof(*at));
	for (size_t t = 0, o = 0; t < r->ntracks; t++) {
		at[t] = o;
		o += count[t];
	}
	for (size_t i = 0; i < p->n; i++)
		if (types[i] != 0xff)
			w[at[p->track[i]]++] = (struct work){(int32_t)i, p->start[i], p->end[i]};
	struct lane *lanes = NULL;
	size_t nl = 0, lalloc = 0;
	size_t o = 0;
	for (size_t t = 0; t < r->ntracks; t++) {
		struct work *tw = w + o;
		size_t n = count[t];
		o += n;
		if (!n)
			continue;
		size_t k = 1;
		while (k < n && by_start(&tw[k - 1], &tw[k]) <= 0)
			k++;
		if (k < n) /* phases are mostly stored in start order already */
			qsort(tw, n, sizeof(*tw), by_start);
		if (r->tracks[t].nest) {
			XGROW(lanes, nl + 1, lalloc);
			struct lane *l = &lanes[nl++];
			memset(l, 0, sizeof(*l));
			l->ph = xmalloc(n * sizeof(*l->ph));
			for (size_t i = 0; i < n; i++)
				l->ph[i] = tw[i].ph;
			l->n = n;
			continue;
		}
		/* flat work that may overlap: first-fit into lanes of its own */
		size_t first = nl;
		for (size_t i = 0; i < n; i++) {
			size_t li = first;
			while (li < nl && p->end[lanes[li].ph[lanes[li].n - 1]] > tw[i].start)
				li++;
			if (li == nl) {
				XGROW(lanes, nl + 1, lalloc);
				memset(&lanes[nl], 0, sizeof(lanes[nl]));
				lanes[nl].ph = xmalloc(n * sizeof(*lanes[nl].ph));
				nl++;
			}
			lanes[li].ph[lanes[li].n++] = tw[i].ph;
		}
	}
	free(w);
	free(at);
	free(count);
	*nlanes = nl;
	return lanes;
}

static void lane_push(struct lane *l, int32_t ph, int64_t end)
{
	if (l->sp == l->salloc) {
		l->salloc = l->salloc ? l->salloc * 2 : 16;
		l->stack = xrealloc(l->stack, l->salloc * sizeof(*l->stack));
		l->stack_end = xrealloc(l->stack_end, l->salloc * sizeof(*l->stack_end));
	}
	l->stack[l->sp] = ph;
	l->stack_end[l->sp++] = end;
}

/* The lane's next exclusive segment into s0, s1, who; done when none. */
static void lane_next(struct lane *l, const struct phases *p)
{
	for (;;) {
		int64_t next = l->i < l->n ? p->start[l->ph[l->i]] : INF;
		if (l->sp) {
			int64_t top_end = l->stack_end[l->sp - 1];
			int32_t top = l->stack[l->sp - 1];
			if (next < top_end) {
				if (next > l->cur) {
					l->s0 = l->cur, l->s1 = next, l->who = top;
					l->cur = next;
					return;
				}
				int32_t ph = l->ph[l->i++];
				lane_push(l, ph, p->end[ph] < top_end ? p->end[ph] : top_end);
				l->cur = next;
				continue;
			}
			l->sp--;
			if (top_end > l->cur) {
				l->s0 = l->cur, l->s1 = top_end, l->who = top;
				l->cur = top_end;
				return;
			}
			continue;
		}
		if (next == INF) {
			l->done = 1;
			return;
		}
		int32_t ph = l->ph[l->i++];
		lane_push(l, ph, p->end[ph]);
		l->cur = next;
	}
}

static void lane_reset(struct lane *l, const struct phases *p)
{
	l->i = 0, l->sp = 0, l->cur = 0, l->active = 0, l->done = 0;
	lane_next(l, p);
}

/* A binary heap of lanes by their next event time. */
struct heap {
	int32_t *v;
	size_t n;
	struct lane *lanes;
};

static int64_t lane_time(const struct lane *l)
{
	return l->done ? INF : l->active ? l->s1 : l->s0;
}

static void heap_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t a = 2 * i + 1, b = a + 1, m = i;
		if (a < h->n && lane_time(&h->lanes[h->v[a]]) < lane_time(&h->lanes[h->v[m]]))
			m = a;
		if (b < h->n && lane_time(&h->lanes[h->v[b]]) < lane_time(&h->lanes[h->v[m]]))
			m = b;
		if (m == i)
			return;
		int32_t x = h->v[i];
		h->v[i] = h->v[m], h->v[m] = x;
		i = m;
	}
}

/* ---- the two sweeps ---- */

static uint64_t key_of(const int *cnt)
{
	uint64_t k = 0;
	for (int t = 0; t < NTYPES; t++)
		k |= (uint64_t)(cnt[t] > 255 ? 255 : cnt[t]) << (8 * t);
	return k;
}

int attrib_key_count(uint64_t k, int t)
{
	return (int)((k >> (8 * t)) & 0xff);
}

/* Adds len of key to metric m's current period (entries of one period are
 * kept together; a period's few keys are found by a linear scan). */
static void hist_add(struct metric *m, uint64_t key, double len)
{
	size_t from = m->off[m->j];
	for (size_t e = from; e < m->nent; e++)
		if (m->key[e] == key) {
			m->len[e] += len;
			return;
		}
	if (m->nent == m->aent) {
		m->aent = m->aent ? m->aent * 2 : 64;
		m->key = xrealloc(m->key, m->aent * sizeof(*m->key));
		m->len = xrealloc(m->len, m->aent * sizeof(*m->len));
	}
	m->key[m->nent] = key;
	m->len[m->nent++] = len;
}

static int in_period(const struct metric *m)
{
	return m->j < m->ns && m->j + 1 < m->ns && m->ok[m->j];
}

static int64_t next_boundary(const struct metric *m)
{
	size_t nj = m->j == m->ns ? 0 : m->j + 1;
	return nj < m->ns ? m->t[nj] : INF;
}

/* Moves m's period to the one holding time now; returns whether it moved. */
static int advance_metric(struct metric *m, int64_t now, int hist)
{
	int moved = 0;
	while (next_boundary(m) <= now) {
		m->j = m->j == m->ns ? 0 : m->j + 1;
		if (hist)
			m->off[m->j] = m->nent;
		moved = 1;
	}
	return moved;
}

struct state {
	/* running integrals of usage per type and resource: value at t_ref
	 * and rate */
	double w[NTYPES][ATTRIB_NRES], wr[NTYPES][ATTRIB_NRES];
	int64_t t_ref;
};

static void fold(struct state *s, int64_t now)
{
	double dt = ns_span(s->t_ref, now);
	if (dt == 0)
		return;
	for (int t = 0; t < NTYPES; t++)
		for (int x = 0; x < ATTRIB_NRES; x++)
			s->w[t][x] += s->wr[t][x] * dt;
	s->t_ref = now;
}

/* The upsampled value of metric m for key in its current period. */
static double upsampled(const struct metric *m, uint64_t key)
{
	for (size_t e = m->off[m->j]; e < m->off[m->j + 1]; e++)
		if (m->key[e] == key)
			return m->u[e];
	return 0;
}

/* New rates after a change of key or period (sweep two). */
static void rates(struct run *r, struct klass *k, struct state *s, uint64_t key)
{
	memset(s->wr, 0, sizeof(s->wr));
	for (size_t i = 0; i < k->nmetrics; i++) {
		struct metric *m = &r->m[k->metrics[i]];
		if (!in_period(m))
			continue;
		double e = 0, v = 0, c = m->cap;
		for (int t = 0; t < NTYPES; t++) {
			int n = attrib_key_count(key, t);
			if (m->exact[t])
				e += n * m->d[t];
			else
				v += n * m->d[t];
		}
		double u = upsampled(m, key);
		for (int t = 0; t < NTYPES; t++) {
			if (!(m->d[t] > 0) || !attrib_key_count(key, t))
				continue;
			double rate = m->exact[t] ? e > 0 ? m->d[t] * fmin(u / e, 1) : 0
				      : v > 0	  ? m->d[t] * fmax(u - e, 0) / v
						  : 0;
			s->wr[t][m->res] += rate / c;
		}
	}
}

static void snapshot(const struct state *s, int t, int64_t now, double *out)
{
	double dt = ns_span(s->t_ref, now);
	for (int x = 0; x < ATTRIB_NRES; x++)
		out[x] = s->w[t][x] + s->wr[t][x] * dt;
}

/* Kept phase x's work ran in class c: its first, or one of several. */
static void note_class(struct run *r, int32_t x, struct acc *a, int32_t c)
{
	if (a->last == c)
		return;
	if (a->cls >= 0 && a->cls != c) {
		XGROW(r->multi, r->nmulti + 2, r->amulti);
		if (a->last == a->cls) /* the first time another class comes */
			r->multi[r->nmulti++] = (struct kcls){r->p.keep[x], a->cls};
		r->multi[r->nmulti++] = (struct kcls){r->p.keep[x], c};
	} else {
		a->cls = c;
	}
	a->last = c;
}

/* Adds a segment's share to kept phase x (row a): its use, and busy, its
 * track's busy time it adds (a stream's kernels may overlap). */
static void charge_one(struct run *r, const struct klass *k, int t, int32_t x, const double *use,
		       double busy)
{
	struct acc *a = &r->acc[r->p.keep[x]];
	for (int y = 0; y < ATTRIB_NRES; y++)
		a->use[y] += use[y];
	a->busy[k->device >= 0] += busy;
	a->mask |= k->mask[t];
	note_class(r, x, a, (int32_t)(k - r->k));
}

/* A segment of phase ph (type t, of class k) ends: its share goes to every
 * kept phase from ph up, and from its stream's node up to the first of
 * those (device work hangs under the call that launched it, so its
 * stream and the GPU's process are not its ancestors). */
static void charge(struct run *r, struct klass *k, const struct lane *l, int t, int64_t now,
		   const struct state *s)
{
	double end[ATTRIB_NRES];
	snapshot(s, t, now, end);
	for (int y = 0; y < ATTRIB_NRES; y++)
		end[y] -= l->snap[y];
	double busy = l->busy;
	const struct phases *p = &r->p;
	size_t n = 0;
	for (int32_t x = p->up[l->who]; x >= 0; x = p->parent[x] >= 0 ? p->up[p->parent[x]] : -1) {
		charge_one(r, k, t, x, end, busy);
		XGROW(r->chain, n + 1, r->achain);
		r->chain[n++] = x;
	}
	int32_t tr = p->track[l->who];
	for (int32_t x = tr >= 0 ? r->tracks[tr].nodeix : -1; x >= 0;
	     x = p->parent[x] >= 0 ? p->up[p->parent[x]] : -1) {
		size_t i = n;
		while (i > 0 && r->chain[i - 1] != x)
			i--; /* from the top: the first shared one is high up */
		if (i)
			break;
		charge_one(r, k, t, x, end, busy);
	}
}

/* A segment of phase ph (of class k) starts: the part of it that no earlier
 * one covered goes to every kept phase from ph up.  The sweep meets the
 * segments by start, so that part is what lies past the last end so far;
 * once a phase's last end reaches past it, so do its ancestors'. */
static void cover_from(struct run *r, const struct klass *k, const struct lane *l, int32_t x)
{
	int dev = k->device >= 0;
	int32_t c = (int32_t)(k - r->k);
	const struct phases *p = &r->p;
	for (; x >= 0; x = p->parent[x] >= 0 ? p->up[p->parent[x]] : -1) {
		struct acc *a = &r->acc[p->keep[x]];
		if (a->cover_cls != c)
			a->cover_cls = c, a->cover_end = INT64_MIN;
		if (l->s1 <= a->cover_end)
			break;
		a->cover[dev] += l->s1 - (l->s0 > a->cover_end ? l->s0 : a->cover_end);
		a->cover_end = l->s1;
	}
}

/* ... and from its stream's node up (charge()): the walk stops at the
 * first phase the first walk reached, whose last end is already past.
 * Also notes the part of the segment its track's earlier segments left
 * (their union is the track's busy time: a stream's kernels can overlap
 * by a few hundred ns, each on a lane of its own). */
static void cover(struct run *r, const struct klass *k, struct lane *l)
{
	int32_t tr = r->p.track[l->who];
	int64_t from = l->s0;
	if (tr >= 0) {
		struct track *t = &r->tracks[tr];
		from = t->busy_end > from ? t->busy_end : from;
		t->busy_end = l->s1 > t->busy_end ? l->s1 : t->busy_end;
	}
	l->busy = l->s1 > from ? ns_span(from, l->s1) : 0;
	cover_from(r, k, l, r->p.up[l->who]);
	if (tr >= 0)
		cover_from(r, k, l, r->tracks[tr].nodeix);
}

/* What a merge of the lanes does: sweep one (time per key per period),
 * sweep two (charges to the kept phases), or sweep two for one phase's
 * usage over time (struct series). */
enum sweep_mode { SWEEP_HIST, SWEEP_CHARGE, SWEEP_SERIES };

/* attrib_series' accumulator: the usage rate of the phase asked about is,
 * at any time, the sum over types of the rate per phase of that type
 * (struct state's wr) times how many of its phases of that type run. */
struct series {
	const uint8_t *under; /* per phase: its work counts (it or a descendant) */
	int na[NTYPES];	      /* lanes running such a phase now, per type */
	int64_t t0, t1;
	int nb;
	double *out; /* per resource and bucket: the integral, then the mean */
};

/* The start of bucket b of nb over [t0, t1) (b = nb: t1), without overflow:
 * t0 plus an offset of at most t1 - t0, in uint64_t, is a time in [t0, t1]. */
static int64_t bucket_edge(const struct series *sa, int b)
{
	uint64_t span = ns_diff(sa->t0, sa->t1), n = (uint64_t)sa->nb;
	return (int64_t)((uint64_t)sa->t0 + span / n * (uint64_t)b + span % n * (uint64_t)b / n);
}

/* Adds the rates of s over [a, b), a stretch with no event inside. */
static void series_add(struct series *sa, const struct state *s, int64_t a, int64_t b)
{
	double rate[ATTRIB_NRES] = {0};
	int any = 0;
	a = a > sa->t0 ? a : sa->t0;
	b = b < sa->t1 ? b : sa->t1;
	if (a >= b)
		return;
	for (int t = 0; t < NTYPES; t++)
		if (sa->na[t])
			for (int x = 0; x < ATTRIB_NRES; x++) {
				rate[x] += sa->na[t] * s->wr[t][x];
				any |= rate[x] != 0;
			}
	if (!any)
		return;
	int i = (int)(ns_span(sa->t0, a) / ns_span(sa->t0, sa->t1) * sa->nb);
	i = i < 0 ? 0 : i >= sa->nb ? sa->nb - 1 : i;
	while (i > 0 && bucket_edge(sa, i) > a)
		i--;
	while (i + 1 < sa->nb && bucket_edge(sa, i + 1) <= a)
		i++;
	for (; i < sa->nb && bucket_edge(sa, i) < b; i++) {
		int64_t lo = bucket_edge(sa, i), hi = bucket_edge(sa, i + 1);
		double len = ns_span(lo > a ? lo : a, hi < b ? hi : b);
		for (int x = 0; x < ATTRIB_NRES; x++)
			sa->out[x * sa->nb + i] += rate[x] * len;
	}
}

/* One merge of the lanes with the metrics' sample boundaries. */
static void sweep(struct run *r, struct klass *k, struct lane *lanes, size_t nl,
		  const uint8_t *types, enum sweep_mode mode, struct series *sa)
{
	int hist = mode == SWEEP_HIST;
	struct heap h = {xmalloc((nl + 1) * sizeof(int32_t)), 0, lanes};
	struct state s;
	int cnt[NTYPES] = {0};
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < nl; i++) {
		lane_reset(&lanes[i], &r->p);
		h.v[h.n++] = (int32_t)i;
	}
	for (size_t i = h.n; i-- > 0;)
		heap_down(&h, i);
	for (size_t i = 0; i < k->nmetrics; i++) {
		struct metric *m = &r->m[k->metrics[i]];
		m->j = m->ns;
	}
	for (size_t i = 0; i < r->ntracks; i++)
		r->tracks[i].busy_end = INT64_MIN;
	int64_t prev = INF;
	uint64_t key = 0, prev_key = ~(uint64_t)0;
	for (;;) {
		int64_t now = h.n ? lane_time(&lanes[h.v[0]]) : INF;
		for (size_t i = 0; i < k->nmetrics; i++) {
			int64_t b = next_boundary(&r->m[k->metrics[i]]);
			now = b < now ? b : now;
		}
		if (now == INF)
			break;
		if (hist && prev != INF && now > prev)
			for (size_t i = 0; i < k->nmetrics; i++) {
				struct metric *m = &r->m[k->metrics[i]];
				if (in_period(m))
					hist_add(m, key, ns_span(prev, now));
			}
		if (mode == SWEEP_SERIES && prev != INF && now > prev)
			series_add(sa, &s, prev, now);
		if (prev == INF)
			s.t_ref = now;
		/* lanes whose event is now: ends first, then what starts */
		while (h.n && lane_time(&lanes[h.v[0]]) == now) {
			struct lane *l = &lanes[h.v[0]];
			if (l->active) {
				int t = types[l->who];
				if (mode == SWEEP_CHARGE)
					charge(r, k, l, t, now, &s);
				else if (mode == SWEEP_SERIES && sa->under[l->who])
					sa->na[t]--;
				cnt[t]--;
				l->active = 0;
				lane_next(l, &r->p);
			} else {
				int t = types[l->who];
				cnt[t]++;
				l->active = 1;
				if (mode == SWEEP_CHARGE) {
					snapshot(&s, t, now, l->snap);
					cover(r, k, l);
				} else if (mode == SWEEP_SERIES && sa->under[l->who])
					sa->na[t]++;
			}
			heap_down(&h, 0);
		}
		int moved = 0;
		for (size_t i = 0; i < k->nmetrics; i++)
			moved |= advance_metric(&r->m[k->metrics[i]], now, hist);
		key = key_of(cnt);
		if (mode != SWEEP_HIST && (moved || key != prev_key)) {
			fold(&s, now);
			rates(r, k, &s, key);
			prev_key = key;
		}
		prev = now;
	}
	if (hist)
		for (size_t i = 0; i < k->nmetrics; i++) {
			struct metric *m = &r->m[k->metrics[i]];
			for (size_t j = m->j == m->ns ? 0 : m->j + 1; j <= m->ns; j++)
				m->off[j] = m->nent;
		}
	free(h.v);
}

/* Class c up to sweep two: its lanes, sweep one, the demands (fitted, or
 * fits' when not NULL) and each period upsampled. */
static struct lane *class_prepare(struct run *r, int c, uint8_t *types, size_t *nl,
				  const struct attrib_fit *fits, size_t nfits)
{
	struct klass *k = &r->k[c];
	struct lane *lanes = make_lanes(r, c, types, nl);
	int present[NTYPES] = {0};
	for (size_t i = 0; i < r->p.n; i++)
		if (types[i] != 0xff)
			present[types[i]] = 1;
	for (size_t i = 0; i < k->nmetrics; i++) {
		struct metric *m = &r->m[k->metrics[i]];
		m->off = xcalloc(m->ns + 1, sizeof(*m->off));
	}
	sweep(r, k, lanes, *nl, types, SWEEP_HIST, NULL);
	for (size_t i = 0; i < k->nmetrics; i++) {
		struct metric *m = &r->m[k->metrics[i]];
		if (fits && m->id != DEVWORK_ID)
			attrib_demands_of(m, k->device >= 0, fits, nfits);
		else
			attrib_fit_metric(r, m, k->device >= 0, present);
		attrib_upsample_metric(m);
		for (int t = 0; t < NTYPES; t++)
			if (m->d[t] > 0)
				k->mask[t] |= 1u << m->res;
	}
	return lanes;
}

static void lanes_free(struct lane *lanes, size_t nl)
{
	for (size_t i = 0; i < nl; i++) {
		free(lanes[i].ph);
		free(lanes[i].stack);
		free(lanes[i].stack_end);
	}
	free(lanes);
}

static void run_class(struct run *r, int c, uint8_t *types)
{
	size_t nl;
	struct lane *lanes = class_prepare(r, c, types, &nl, NULL, 0);
	sweep(r, &r->k[c], lanes, nl, types, SWEEP_CHARGE, NULL);
	lanes_free(lanes, nl);
}

static int by_keep(const void *x, const void *y)
{
	const struct kcls *a = x, *b = y;
	if (a->keep != b->keep)
		return a->keep < b->keep ? -1 : 1;
	return (a->cls > b->cls) - (a->cls < b->cls);
}

static void rows(struct run *r)
{
	struct attribution *a = r->out;
	const struct phases *p = &r->p;
	a->rows = xcalloc(r->nkeep + 1, sizeof(*a->rows));
	for (size_t c = 0; c < r->nk; c++)
		if (r->k[c].nmetrics)
			bottleneck_build(r, &r->k[c]);
	if (r->nmulti)
		qsort(r->multi, r->nmulti, sizeof(*r->multi), by_keep);
	for (size_t i = 0; i < p->n; i++) {
		if (p->keep[i] < 0)
			continue;
		const struct acc *x = &r->acc[p->keep[i]];
		if (!(x->busy[0] > 0 || x->busy[1] > 0))
			continue;
		struct attrib_row *w = &a->rows[a->nrows++];
		struct bottleneck_verdict v;
		bottleneck_judge(r, i, x, &v);
		w->phase_id = p->id[i];
		w->kind = p->kind[i];
		w->level = level_of(p->kind[i], p->track[i] >= 0 && r->tracks[p->track[i]].thread);
		w->dur_ns = ns_dur(p->start[i], p->end[i]);
		w->mask = x->mask;
		for (int c = 0; c < 2; c++) {
			w->busy_ns[c] = llround(x->busy[c]);
			w->cover_ns[c] = x->cover[c] < w->dur_ns ? x->cover[c] : w->dur_ns;
		}
		for (int y = 0; y < ATTRIB_NRES; y++)
			w->use[y] = w->dur_ns ? x->use[y] / (double)w->dur_ns : 0;
		memcpy(w->bneck_ns, v.bneck, sizeof(w->bneck_ns));
		w->data_ns = v.data;
		w->free_ns = v.free_;
		w->traced_ns = v.traced;
		w->devbusy_ns = v.devbusy;
		w->shared_gpu = v.shared;
		w->own_gpu = v.own;
	}
}

static void run_release(struct run *r)
{
	struct phases *p = &r->p;
	free(p->id), free(p->start), free(p->end), free(p->parent), free(p->track);
	free(p->kind), free(p->leaf), free(p->keep), free(p->up), free(p->src);
	for (size_t i = 0; i < r->nm; i++) {
		struct metric *m = &r->m[i];
		free(m->t), free(m->v), free(m->ok), free(m->off), free(m->key), free(m->len),
		    free(m->u);
		free(m->value_kind);
	}
	free(r->m);
	for (size_t i = 0; i < r->nk; i++) {
		free(r->k[i].metrics);
		free(r->k[i].judged);
		free(r->k[i].cov);
		bottleneck_own_release(&r->k[i]);
		bottleneck_release(&r->k[i].jd);
	}
	free(r->k);
	free(r->multi);
	free(r->chain);
	for (size_t i = 0; i < r->nhosts; i++)
		free(r->hosts[i]);
	free(r->hosts);
	free(r->tracks);
	free(r->acc);
}

/* The rules the file keeps (meta 'demand_rules'), or NULL. */
static char *file_rules(sqlite3 *db)
{
	sqlite3_stmt *q;
	char *text = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'demand_rules'", -1, &q,
			       NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(q) == SQLITE_ROW)
		text = col_strdup_or_null(q, 0);
	sqlite3_finalize(q);
	return text;
}

int attrib_compute(sqlite3 *db, const char *path, struct attribution *a, char **err)
{
	return attrib_compute_rules(db, path, NULL, a, err);
}

int attrib_compute_rules(sqlite3 *db, const char *path, const char *rules_text,
			 struct attribution *a, char **err)
{
	struct run r = {.db = db,
			.path = path,
			.err = err,
			.out = a,
			.t0 = INT64_MIN,
			.t1 = INT64_MAX,
			.judge = 1};
	struct attrib_rules rules;
	int rc = -1;
	memset(a, 0, sizeof(*a));
	char *kept = rules_text ? NULL : file_rules(db);
	if (attrib_rules_parse(rules_text ? rules_text : kept, &rules, err) < 0) {
		char *e = *err;
		*err = xasprintf("%s: %s", path, e);
		free(e);
		free(kept);
		return -1;
	}
	free(kept);
	r.rules = &rules;
	if (attrib_load_tracks(&r) < 0 || attrib_load_metrics(&r) < 0)
		goto out;
	attrib_devwork_cover(&r);
	int covered = 0;
	for (size_t c = 0; c < r.nk; c++)
		covered |= r.k[c].ncov > 0;
	if (!r.nm && !covered) {
		rc = 0;
		goto out;
	}
	if ((rc = attrib_load_phases(&r)) < 0)
		goto out;
	for (size_t i = 0; i < r.ntracks; i++)
		if (r.tracks[i].work && r.tracks[i].node) {
			int32_t x = attrib_phase_index(&r.p, r.tracks[i].node);
			r.tracks[i].nodeix = x >= 0 ? r.p.up[x] : -1;
		}
	attrib_devwork_measure(&r);
	r.acc = xcalloc(r.nkeep + 1, sizeof(*r.acc));
	for (size_t i = 0; i < r.nkeep; i++)
		r.acc[i].cls = r.acc[i].last = r.acc[i].cover_cls = -1;
	uint8_t *types = xmalloc(r.p.n + 1);
	for (size_t c = 0; c < r.nk; c++)
		if (r.k[c].nmetrics)
			run_class(&r, (int)c, types);
	free(types);
	rows(&r);
	rc = 0;
out:
	run_release(&r);
	attrib_rules_release(&rules);
	if (rc < 0)
		attrib_release(a);
	return rc;
}

void attrib_release(struct attribution *a)
{
	free(a->rows);
	free(a->fits);
	memset(a, 0, sizeof(*a));
}

const struct attrib_row *attrib_find(const struct attribution *a, int64_t phase_id)
{
	size_t i = attrib_lower_bound(a->rows, a->nrows, sizeof(*a->rows), phase_id);
	return i < a->nrows && a->rows[i].phase_id == phase_id ? &a->rows[i] : NULL;
}

/* ---- usage over time (attrib_series) ----
 *
 * The same sweeps over a window: per class of the phase's hosts, the
 * sample periods that [t0, t1) touches, and the work of the class's lanes
 * in them.  A track's phases are found without a scan: the nest builder
 * writes each track's phases as one run of ids in start order, the runs of
 * a source in (host before stream, track id) order (model/ingest/nest.h), so the
 * run and the window inside it are binary searches on ids.  What began
 * before the window: on a thread, the open phases are the last phase
 * started and its ancestors; on a flat track (stream, executor), phases
 * that started up to LOOKBACK_NS, or twice the longest phase in the window,
 * earlier.  A track laid out otherwise is scanned. */

#define LOOKBACK_NS 1000000000LL

struct wph {
	int64_t id, parent, start, end;
	int32_t track;
	uint8_t kind, leaf;
	int depth;
};

struct win {
	struct run *r;
	struct wph *v;
	size_t n, alloc;
	int64_t max_id;
	sqlite3_stmt *probe, *start, *row, *range, *back, *scan, *up;
	int64_t phase, depth; /* the phase asked about */
	int64_t loop;	      /* a phase whose parents were found to loop, or 0 */
	/* ids above the window whose "under the phase" is known: open addressing */
	int64_t *memo_id;
	int8_t *memo_v;
	size_t memo_n, memo_cap;
};

#define WPH_COLS                                                                                   \
	"id, coalesce(parent_id, 0), kind, coalesce(track_id, 0), start_ns, dur_ns, child_count, " \
	"depth"

static void wph_read(struct win *w, sqlite3_stmt *q, struct wph *x)
{
	int64_t tid = col_int(q, 3), dur = col_int(q, 5);
	x->id = col_int(q, 0);
	x->parent = col_int(q, 1);
	x->kind = (uint8_t)col_int32(q, 2);
	x->track = tid ? attrib_track_index(w->r, tid) : -1;
	x->start = attrib_time_of(col_int(q, 4));
	x->end = attrib_time_of(ns_end(x->start, dur));
	x->leaf = col_int(q, 6) == 0;
	x->depth = col_int32(q, 7);
}

static void wph_add(struct win *w, const struct wph *x)
{
	XGROW(w->v, w->n + 1, w->alloc);
	w->v[w->n++] = *x;
}

/* The first phase at or after id from that lies on a track and is not a
 * track's node: 1 with *id, *ti; 0 when none. */
static int probe(struct win *w, int64_t from, int64_t *id, int32_t *ti)
{
	for (;;) {
		int got = 0;
		sqlite3_reset(w->probe);
		sqlite3_bind_int64(w->probe, 1, from);
		while (sqlite3_step(w->probe) == SQLITE_ROW) {
			int64_t x = col_int(w->probe, 0), tid = col_int(w->probe, 1);
			int32_t t = tid ? attrib_track_index(w->r, tid) : -1;
			got = 1;
			from = x + 1;
			if (t >= 0 && w->r->tracks[t].node != x) {
				*id = x, *ti = t;
				return 1;
			}
		}
		if (!got)
			return 0;
	}
}

/* The order of the runs of ids: source, host tracks before streams, id. */
static int run_order(const struct track *a, const struct track *b)
{
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream - b->stream;
	return (a->id > b->id) - (a->id < b->id);
}

/* Track ti's run of ids [*a, *e]: 0, or -1 when it is not laid out so. */
static int track_run(struct win *w, int32_t ti, int64_t *a, int64_t *e)
{
	const struct track *t = &w->r->tracks[ti];
	int64_t lo = 0, hi = w->max_id + 1, id;
	int32_t x;
	if (t->spans <= 0)
		return -1;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (!probe(w, mid, &id, &x))
			hi = mid;
		else if (run_order(&w->r->tracks[x], t) < 0)
			lo = id + 1;
		else
			hi = mid;
	}
	if (!probe(w, lo, a, &x) || x != ti)
		return -1;
	*e = *a + t->spans - 1;
	if (!probe(w, *e, &id, &x) || id != *e || x != ti)
		return -1;
	return probe(w, *e + 1, &id, &x) && run_order(&w->r->tracks[x], t) <= 0 ? -1 : 0;
}

/* The first id of [a, e + 1) whose phase starts at or after t. */
static int64_t first_at(struct win *w, int64_t a, int64_t e, int64_t t)
{
	int64_t lo = a, hi = e + 1;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2, s = INT64_MAX;
		sqlite3_reset(w->start);
		sqlite3_bind_int64(w->start, 1, mid);
		if (sqlite3_step(w->start) == SQLITE_ROW)
			s = col_int(w->start, 0);
		if (s < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Track ti's phases that may be at work in [lo, hi). */
static void load_track(struct win *w, int32_t ti, int64_t lo, int64_t hi)
{
	const struct track *t = &w->r->tracks[ti];
	struct wph x;
	int64_t a, e;
	if (!t->spans && t->node) {
		/* no spans: nothing but the node, unless it has children */
		sqlite3_reset(w->row);
		sqlite3_bind_int64(w->row, 1, t->node);
		if (sqlite3_step(w->row) == SQLITE_ROW && col_int(w->row, 6) == 0)
			return;
	}
	if (track_run(w, ti, &a, &e) < 0) {
		sqlite3_reset(w->scan);
		sqlite3_bind_int64(w->scan, 1, t->id);
		sqlite3_bind_int64(w->scan, 2, lo);
		sqlite3_bind_int64(w->scan, 3, hi);
		while (sqlite3_step(w->scan) == SQLITE_ROW) {
			wph_read(w, w->scan, &x);
			wph_add(w, &x);
		}
		return;
	}
	int64_t x_lo = first_at(w, a, e, lo), x_hi = first_at(w, a, e, hi), longest = 0;
	sqlite3_reset(w->range);
	sqlite3_bind_int64(w->range, 1, x_lo);
	sqlite3_bind_int64(w->range, 2, x_hi);
	while (sqlite3_step(w->range) == SQLITE_ROW) {
		wph_read(w, w->range, &x);
		if (x.track != ti)
			continue;
		wph_add(w, &x);
		longest = ns_dur(x.start, x.end) > longest ? ns_dur(x.start, x.end) : longest;
	}
	if (x_lo <= a)
		return;
	if (t->nest) {
		/* the open phases are the last one started and its ancestors */
		struct ptree_walk up;
		ptree_walk_init(&up, x_lo - 1);
		for (int64_t id = x_lo - 1; id;) {
			sqlite3_reset(w->row);
			sqlite3_bind_int64(w->row, 1, id);
			if (sqlite3_step(w->row) != SQLITE_ROW)
				break;
			wph_read(w, w->row, &x);
			if (x.track != ti)
				break;
			wph_add(w, &x);
			id = x.parent;
			if (ptree_walk_loops(&up, id)) {
				w->loop = x_lo - 1;
				break;
			}
		}
		return;
	}
	int64_t back = longest > INT64_MAX / 2 ? INT64_MAX : 2 * longest, horizon;
	if (__builtin_sub_overflow(lo, back > LOOKBACK_NS ? back : LOOKBACK_NS, &horizon))
		horizon = INT64_MIN;
	sqlite3_reset(w->back);
	sqlite3_bind_int64(w->back, 1, a);
	sqlite3_bind_int64(w->back, 2, x_lo);
	while (sqlite3_step(w->back) == SQLITE_ROW) {
		wph_read(w, w->back, &x);
		if (x.start < horizon)
			break;
		if (x.track == ti && x.end > lo)
			wph_add(w, &x);
	}
}

static int by_id(const void *a, const void *b)
{
	const struct wph *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* The window's phases into r->p, in id order. */
static void window_phases(struct win *w, int64_t **parent_id, int **depth)
{
	struct phases *p = &w->r->p;
	if (w->n)
		qsort(w->v, w->n, sizeof(*w->v), by_id);
	size_t n = 0;
	for (size_t i = 0; i < w->n; i++)
		if (!n || w->v[i].id != w->v[n - 1].id)
			w->v[n++] = w->v[i];
	p->n = n;
	p->id = xmalloc((n + 1) * sizeof(*p->id));
	p->start = xmalloc((n + 1) * sizeof(*p->start));
	p->end = xmalloc((n + 1) * sizeof(*p->end));
	p->parent = xmalloc((n + 1) * sizeof(*p->parent));
	p->track = xmalloc((n + 1) * sizeof(*p->track));
	p->kind = xmalloc(n + 1);
	p->leaf = xmalloc(n + 1);
	*parent_id = xmalloc((n + 1) * sizeof(**parent_id));
	*depth = xmalloc((n + 1) * sizeof(**depth));
	for (size_t i = 0; i < n; i++) {
		const struct wph *x = &w->v[i];
		p->id[i] = x->id, p->start[i] = x->start, p->end[i] = x->end;
		p->track[i] = x->track, p->kind[i] = x->kind, p->leaf[i] = x->leaf;
		(*parent_id)[i] = x->parent, (*depth)[i] = x->depth;
	}
	for (size_t i = 0; i < n; i++)
		p->parent[i] = (*parent_id)[i] ? attrib_phase_index(p, (*parent_id)[i]) : -1;
}

static int8_t *memo_slot(struct win *w, int64_t id, int add)
{
	if (add && 2 * (w->memo_n + 1) > w->memo_cap) {
		size_t cap = w->memo_cap ? 2 * w->memo_cap : 256;
		int64_t *ids = xcalloc(cap, sizeof(*ids));
		int8_t *v = xcalloc(cap, sizeof(*v));
		for (size_t i = 0; i < w->memo_cap; i++)
			if (w->memo_id[i])
				for (size_t j = (uint64_t)w->memo_id[i] * 0x9E3779B97F4A7C15u % cap;
				     ; j = (j + 1) % cap)
					if (!ids[j]) {
						ids[j] = w->memo_id[i], v[j] = w->memo_v[i];
						break;
					}
		free(w->memo_id), free(w->memo_v);
		w->memo_id = ids, w->memo_v = v, w->memo_cap = cap;
	}
	if (!w->memo_cap)
		return NULL;
	for (size_t j = (uint64_t)id * 0x9E3779B97F4A7C15u % w->memo_cap;;
	     j = (j + 1) % w->memo_cap) {
		if (w->memo_id[j] == id)
			return &w->memo_v[j];
		if (!w->memo_id[j]) {
			if (!add)
				return NULL;
			w->memo_id[j] = id;
			w->memo_n++;
			return &w->memo_v[j];
		}
	}
}

/* Whether phase id, not in the window, is the phase asked about or lies
 * under it: up its ancestors in the file, remembering each. */
static int under_id(struct win *w, int64_t id)
{
	int64_t path[64];
	int n = 0, v = 0;
	struct ptree_walk up;
	ptree_walk_init(&up, id);
	for (int64_t first = id;;) {
		if (!id)
			break;
		if (id == w->phase) {
			v = 1;
			break;
		}
		int8_t *m = memo_slot(w, id, 0);
		if (m) {
			v = *m;
			break;
		}
		sqlite3_reset(w->up);
		sqlite3_bind_int64(w->up, 1, id);
		if (sqlite3_step(w->up) != SQLITE_ROW || col_int(w->up, 1) <= w->depth)
			break;
		if (n < 64)
			path[n++] = id;
		id = col_int(w->up, 0);
		if (ptree_walk_loops(&up, id)) {
			w->loop = first;
			break;
		}
	}
	for (int i = 0; i < n; i++)
		*memo_slot(w, path[i], 1) = (int8_t)v;
	return v;
}

/* under[i]: 1 when window phase i is the phase asked about or under it;
 * 2 while unknown. */
static int under_of(struct win *w, uint8_t *under, const int64_t *parent_id, const int *depth,
		    int32_t i)
{
	const struct phases *p = &w->r->p;
	if (under[i] != 2)
		return under[i];
	int v;
	if (p->id[i] == w->phase)
		v = 1;
	else if (depth[i] <= w->depth)
		v = 0;
	else if (p->parent[i] >= 0)
		v = under_of(w, under, parent_id, depth, p->parent[i]);
	else
		v = under_id(w, parent_id[i]);
	return under[i] = (uint8_t)v;
}

static int prep(struct win *w, sqlite3_stmt **q, const char *sql)
{
	return sqlite3_prepare_v2(w->r->db, sql, -1, q, NULL) == SQLITE_OK ? 0 : -1;
}

static void win_release(struct win *w)
{
	sqlite3_finalize(w->probe), sqlite3_finalize(w->start), sqlite3_finalize(w->row);
	sqlite3_finalize(w->range), sqlite3_finalize(w->back), sqlite3_finalize(w->scan);
	sqlite3_finalize(w->up);
	free(w->v), free(w->memo_id), free(w->memo_v);
}

/* Which tracks' hosts count: the phase's own track's, or those of the
 * tracks whose node lies under it. */
static void hosts_of(struct win *w, int32_t own, uint8_t *ok)
{
	struct run *r = w->r;
	for (size_t i = 0; i < r->ntracks; i++)
		ok[i] = own >= 0 ? i == (size_t)own
				 : r->tracks[i].node && under_id(w, r->tracks[i].node);
	for (size_t i = 0; i < r->ntracks; i++)
		for (size_t j = 0; j < r->ntracks && !(ok[i] & 2); j++)
			if ((ok[j] & 1) && r->tracks[i].host == r->tracks[j].host)
				ok[i] |= 2;
}

int attrib_series(sqlite3 *db, const char *path, const struct attribution *a, int64_t phase_id,
		  int64_t t0, int64_t t1, int nb, double *out, char **err)
{
	struct run r = {.db = db, .path = path, .err = err, .t0 = t0, .t1 = t1};
	struct win w = {.r = &r, .phase = phase_id};
	struct attrib_rules rules = {0};
	struct attribution cached = {0};
	sqlite3_stmt *own = NULL;
	uint8_t *ok = NULL, *types = NULL, *under = NULL, *stream_under = NULL;
	int64_t *parent_id = NULL;
	int *depth = NULL, rc = -1;
	if (nb <= 0 || t1 <= t0) {
		*err = xasprintf("%s: no time to divide: [%lld, %lld) in %d", path, (long long)t0,
				 (long long)t1, nb);
		return -1;
	}
	memset(out, 0, (size_t)nb * ATTRIB_NRES * sizeof(*out));
	if (!a) {
		if (attrib_load_fits(db, &cached) < 0) {
			attrib_fail(&r, "the fitted demands");
			goto out;
		}
		a = &cached;
	}
	/* a GPU measured by its device work alone has its demands by rule */
	char *kept = file_rules(db);
	int bad = attrib_rules_parse(kept, &rules, err);
	free(kept);
	if (bad < 0)
		goto out;
	r.rules = &rules;
	if (prep(&w, &w.probe,
		 "SELECT id, coalesce(track_id, 0) FROM phases WHERE id >= ?1"
		 " ORDER BY id LIMIT 16") < 0 ||
	    prep(&w, &w.start, "SELECT start_ns FROM phases WHERE id = ?1") < 0 ||
	    prep(&w, &w.row, "SELECT " WPH_COLS " FROM phases WHERE id = ?1") < 0 ||
	    prep(&w, &w.range, "SELECT " WPH_COLS " FROM phases WHERE id >= ?1 AND id < ?2") < 0 ||
	    prep(&w, &w.back,
		 "SELECT " WPH_COLS " FROM phases WHERE id >= ?1 AND id < ?2"
		 " ORDER BY id DESC") < 0 ||
	    prep(&w, &w.scan,
		 "SELECT " WPH_COLS " FROM phases WHERE track_id = ?1"
		 " AND start_ns < ?3 AND start_ns + dur_ns > ?2") < 0 ||
	    prep(&w, &w.up, "SELECT coalesce(parent_id, 0), depth FROM phases WHERE id = ?1") < 0 ||
	    prep(&w, &own,
		 "SELECT coalesce(track_id, 0), depth, (SELECT max(id) FROM phases)"
		 " FROM phases WHERE id = ?1") < 0) {
		attrib_fail(&r, "phases");
		goto out;
	}
	if (attrib_load_tracks(&r) < 0)
		goto out;
	sqlite3_bind_int64(own, 1, phase_id);
	if (sqlite3_step(own) != SQLITE_ROW) {
		*err = xasprintf("%s: no phase %lld", path, (long long)phase_id);
		goto out;
	}
	int64_t own_track = col_int(own, 0);
	w.depth = col_int(own, 1);
	w.max_id = col_int(own, 2);
	ok = xmalloc(r.ntracks + 1);
	hosts_of(&w, own_track ? attrib_track_index(&r, own_track) : -1, ok);
	r.track_ok = ok;
	if (attrib_load_metrics(&r) < 0)
		goto out;
	attrib_devwork_cover(&r);
	for (size_t c = 0; c < r.nk; c++) {
		int64_t lo = INF, hi = INT64_MIN;
		for (size_t i = 0; i < r.k[c].nmetrics; i++) {
			const struct metric *m = &r.m[r.k[c].metrics[i]];
			if (m->ns) {
				lo = m->t[0] < lo ? m->t[0] : lo;
				hi = m->t[m->ns - 1] > hi ? m->t[m->ns - 1] : hi;
			}
		}
		for (size_t i = 0; i < r.k[c].ncov; i++) {
			int64_t from = r.k[c].cov[i].start > t0 ? r.k[c].cov[i].start : t0;
			int64_t to = r.k[c].cov[i].end < t1 ? r.k[c].cov[i].end : t1;
			if (from < to) {
				lo = from < lo ? from : lo;
				hi = to > hi ? to : hi;
			}
		}
		for (size_t i = 0; lo < hi && i < r.ntracks; i++)
			if (r.tracks[i].cls == (int)c)
				load_track(&w, (int32_t)i, lo, hi);
	}
	window_phases(&w, &parent_id, &depth);
	int64_t loop = ptree_loop(r.p.parent, r.p.n);
	if (loop >= 0 || w.loop) {
		*err = ptree_loop_error(path, loop >= 0 ? r.p.id[loop] : w.loop);
		rc = PTREE_LOOP;
		goto out;
	}
	attrib_devwork_measure(&r);
	under = xmalloc(r.p.n + 1);
	memset(under, 2, r.p.n + 1);
	for (size_t i = 0; i < r.p.n; i++)
		if (r.p.end[i] > t0 && r.p.start[i] < t1)
			under_of(&w, under, parent_id, depth, (int32_t)i);
		else if (under[i] == 2)
			under[i] = 0;
	/* a stream's work counts under its node's ancestors too (charge()) */
	stream_under = xcalloc(r.ntracks + 1, 1);
	for (size_t i = 0; i < r.ntracks && !w.loop; i++)
		stream_under[i] =
		    r.tracks[i].work && r.tracks[i].node && under_id(&w, r.tracks[i].node) == 1;
	for (size_t i = 0; i < r.p.n; i++)
		if (r.p.track[i] >= 0 && stream_under[r.p.track[i]])
			under[i] = 1;
	if (w.loop) {
		*err = ptree_loop_error(path, w.loop);
		rc = PTREE_LOOP;
		goto out;
	}
	types = xmalloc(r.p.n + 1);
	struct series sa = {.under = under, .t0 = t0, .t1 = t1, .nb = nb, .out = out};
	for (size_t c = 0; c < r.nk; c++) {
		if (!r.k[c].nmetrics)
			continue;
		size_t nl;
		struct lane *lanes = class_prepare(&r, (int)c, types, &nl, a->fits, a->nfits);
		memset(sa.na, 0, sizeof(sa.na));
		sweep(&r, &r.k[c], lanes, nl, types, SWEEP_SERIES, &sa);
		lanes_free(lanes, nl);
	}
	for (int b = 0; b < nb; b++) {
		double len = ns_span(bucket_edge(&sa, b), bucket_edge(&sa, b + 1));
		for (int x = 0; x < ATTRIB_NRES; x++)
			out[x * nb + b] = len > 0 ? out[x * nb + b] / len : 0;
	}
	rc = 0;
out:
	sqlite3_finalize(own);
	win_release(&w);
	run_release(&r);
	attrib_release(&cached);
	attrib_rules_release(&rules);
	free(ok), free(types), free(under), free(stream_under), free(parent_id), free(depth);
	return rc;
}
