/*
 * The timeline's lanes; see lanes.h.  The walk appends spans with their
 * track's lane and nesting depth; then lanes are ordered, rows made, and
 * the children lists and depth-first numbers worked out, all in a few
 * linear passes and one sort per row.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/idmap.h"
#include "model/util/nstime.h"
#include "model/view/lanes.h"
#include "model/view/model.h"
#include "model/store/store.h"
#include "model/store/subtree.h"
#include "model/util/xalloc.h"
#include "model/util/search.h"

/* Of each phase visited that has children: its nearest kept span (itself
 * or an ancestor; -1: the root), its lane (-1: a container) and its
 * nesting depth there.  A visit returns the index of its phase's entry. */
struct vis {
	int32_t keep, lane, nest;
};

struct build {
	struct model *m;
	struct lanes *l;
	size_t max, alloc;
	struct idmap tracks; /* track id -> lane index (in order made) */
	int32_t *lane_of;    /* per span: its lane (-1: a container) */
	int *nest;	     /* per span: its nesting depth on its lane */
	struct vis *vis;
	size_t nvis, avis;
	atomic_int *cancel; /* set: the walk stops (NULL: never) */
	unsigned tick;
	size_t alloc_lanes;
	int max_nest; /* host phases nested this deep or deeper are not kept */
	/* Over the limit a row is dropped at once, by its count; its spans
	 * stay in l->s until they number half the spans kept, when one
	 * compaction takes them out: a compaction passes over at most three
	 * times the spans it takes out (and the parents' entries, at most once
	 * per row dropped), and no pass runs per phase read. */
	size_t live;			       /* spans kept, less those dropped */
	size_t dropped;			       /* spans dropped still in l->s */
	size_t at_nest[SUBTREE_MAX_DEPTH + 1]; /* host spans kept per depth, less dropped */
	int deep;			       /* no host span kept deeper than this */
};

int lanes_is_device(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET;
}

/* Phases that stand for a track or a group of them, not work on one. */
static int is_container(int kind)
{
	return kind >= PHASE_WORKFLOW && kind <= PHASE_STREAM;
}

/* The lane of a track; tracks the file does not describe share lane 0's
 * "(no track)" entry, keyed 0. */
static int32_t lane_for(struct build *b, int64_t track)
{
	int32_t k = idmap_get(&b->tracks, track);
	if (k >= 0)
		return k;
	struct lanes *l = b->l;
	const struct mtrack *t = track ? model_track(b->m, track) : NULL;
	if (!t && track && (k = idmap_get(&b->tracks, 0)) >= 0) {
		idmap_put(&b->tracks, track, k);
		return k;
	}
	XGROW(l->lane, l->nlanes + 1, b->alloc_lanes);
	struct lane *ln = &l->lane[l->nlanes];
	memset(ln, 0, sizeof(*ln));
	ln->track = t ? track : 0;
	ln->t = t;
	k = (int32_t)l->nlanes++;
	idmap_put(&b->tracks, ln->track, k);
	if (!t && track)
		idmap_put(&b->tracks, track, k);
	return k;
}

static void restart(void *arg)
{
	struct build *b = arg;
	b->l->n = 0;
	b->l->left_out = 0;
	b->nvis = 0;
	b->max_nest = INT_MAX;
	b->live = b->dropped = 0;
	memset(b->at_nest, 0, sizeof(b->at_nest));
	b->deep = 0;
}

static int64_t end_of(int64_t start, int64_t dur)
{
	return dur > 0 && start <= INT64_MAX - dur ? start + dur : start;
}

/* Appends span r (under kept span parent); returns its index. */
static int32_t keep(struct build *b, const struct subtree_row *r, int32_t parent, int32_t lane,
		    int nest)
{
	struct lanes *l = b->l;
	if (l->n >= b->alloc) {
		size_t had = b->alloc;
		XGROW(l->s, l->n + 1, b->alloc);
		if (b->alloc != had) {
			b->lane_of = xrealloc(b->lane_of, b->alloc * sizeof(*b->lane_of));
			b->nest = xrealloc(b->nest, b->alloc * sizeof(*b->nest));
		}
	}
	uint32_t i = (uint32_t)l->n++;
	struct lane_span *s = &l->s[i];
	memset(s, 0, sizeof(*s));
	s->id = r->id;
	s->name_id = r->name_id;
	s->start = r->start_ns;
	s->end = end_of(r->start_ns, r->dur_ns);
	s->parent = parent;
	s->kind = r->kind;
	s->row = -1;
	s->lane = -1;
	b->lane_of[i] = lane;
	b->nest[i] = nest;
	b->live++;
	if (lane >= 0 && !lanes_is_device(r->kind)) {
		b->at_nest[nest]++;
		if (nest > b->deep)
			b->deep = nest;
	}
	if (s->start < l->t0)
		l->t0 = s->start;
	if (s->end > l->t1)
		l->t1 = s->end;
	return (int32_t)i;
}

/* Host work, not device work or a container. */
static int is_host(const struct build *b, size_t i)
{
	return b->lane_of[i] >= 0 && !lanes_is_device(b->l->s[i].kind);
}

/* Whether span i is in a row dropped since it was kept. */
static int is_dropped(const struct build *b, size_t i)
{
	return is_host(b, i) && b->nest[i] >= b->max_nest;
}

/* Takes the dropped spans out of l->s; their children move up to their
 * nearest kept ancestor.  A parent comes before its children, so one pass
 * maps each old index to its new one, or to its parent's. */
static void compact(struct build *b)
{
	struct lanes *l = b->l;
	int32_t *to = xmalloc((l->n ? l->n : 1) * sizeof(*to));
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++) {
		int32_t p = l->s[i].parent < 0 ? -1 : to[l->s[i].parent];
		if (is_dropped(b, i)) {
			to[i] = p;
			continue;
		}
		to[i] = (int32_t)n;
		l->s[n] = l->s[i];
		l->s[n].parent = p;
		b->lane_of[n] = b->lane_of[i];
		b->nest[n] = b->nest[i];
		n++;
	}
	l->n = n;
	for (size_t i = 0; i < b->nvis; i++)
		if (b->vis[i].keep >= 0)
			b->vis[i].keep = to[b->vis[i].keep];
	free(to);
	b->dropped = 0;
}

/* At the limit, drops the deepest host rows kept, one at a time, until
 * below it or only row 0 is left (then nothing more is done until a row
 * is kept below it again, which takes room: no pass per phase read). */
static void make_room(struct build *b)
{
	while (b->live >= b->max) {
		while (b->deep > 0 && !b->at_nest[b->deep])
			b->deep--;
		if (!b->deep)
			break;
		size_t k = b->at_nest[b->deep];
		b->max_nest = b->deep;
		b->at_nest[b->deep] = 0;
		b->live -= k;
		b->dropped += k;
		b->l->left_out += (int64_t)k;
	}
	if (b->dropped && b->dropped >= b->live / 2)
		compact(b);
}

/* The nearest span kept at or above the one pv keeps for its children;
 * the dropped spans passed on the way point at it from then on. */
static int32_t kept_above(struct build *b, struct vis *pv)
{
	struct lane_span *s = b->l->s;
	int32_t k = pv->keep;
	if (!b->dropped)
		return k;
	while (k >= 0 && is_dropped(b, (size_t)k))
		k = s[k].parent;
	for (int32_t j = pv->keep; j != k;) {
		int32_t p = s[j].parent;
		s[j].parent = k;
		j = p;
	}
	pv->keep = k;
	return k;
}

/* Keeps every phase but, over the limit, the deepest host rows (their
 * children hang on their nearest kept ancestor) and then, when only row 0
 * is left, the host phases and containers past the limit; device work is
 * kept whatever the limit. */
static int32_t visit(void *arg, const struct subtree_row *r, int32_t parent)
{
	struct build *b = arg;
	struct lanes *l = b->l;
	if (b->cancel && !(b->tick++ & 1023) && atomic_load(b->cancel))
		return SUBTREE_STOP;
	if (r->depth == 0) { /* the virtual root (0) has no window of its own */
		l->t0 = r->id ? r->start_ns : INT64_MAX;
		l->t1 = r->id ? end_of(r->start_ns, r->dur_ns) : INT64_MIN;
		return -1;
	}
	if (b->live >= b->max)
		make_room(b); /* first: a compaction moves the spans */
	struct vis *pv = parent >= 0 ? &b->vis[parent] : NULL;
	struct vis v = {pv ? kept_above(b, pv) : -1, -1, 0};
	if (!is_container(r->kind))
		v.lane = lane_for(b, r->track_id);
	/* a lane nests no deeper than the walk reads (SUBTREE_MAX_DEPTH) */
	if (pv && v.lane >= 0 && pv->lane == v.lane && pv->nest < SUBTREE_MAX_DEPTH)
		v.nest = pv->nest + 1;
	int wanted = lanes_is_device(r->kind) ||
		     (b->live < b->max && (is_container(r->kind) || v.nest < b->max_nest));
	if (wanted && l->n < INT32_MAX) /* a span's index is an int32_t */
		v.keep = keep(b, r, v.keep, v.lane, v.nest);
	else
		l->left_out++;
	if (r->child_count <= 0)
		return -1;
	XGROW(b->vis, b->nvis + 1, b->avis);
	b->vis[b->nvis] = v;
	return (int32_t)b->nvis++;
}

static const struct lanes *sort_base;
static int cmp_start(const void *pa, const void *pb);

static int cmp_lane(const void *pa, const void *pb)
{
	const struct lane *a = pa, *b = pb;
	if (!a->t != !b->t)
		return a->t ? -1 : 1;
	if (a->t && a->t->sort_index != b->t->sort_index)
		return a->t->sort_index < b->t->sort_index ? -1 : 1;
	return a->track < b->track ? -1 : a->track > b->track;
}

static int span_before(const struct lanes *l, uint32_t a, uint32_t b)
{
	return l->s[a].start < l->s[b].start ||
	       (l->s[a].start == l->s[b].start && l->s[a].id < l->s[b].id);
}

/* Sorts spans at[0 .. n) by start, unless they already are (the usual case:
 * a trace's phases come in start order). */
static void sort_by_start(const struct lanes *l, uint32_t *at, size_t n)
{
	size_t j = 1;
	while (j < n && span_before(l, at[j - 1], at[j]))
		j++;
	if (j < n) {
		sort_base = l;
		qsort(at, n, sizeof(*at), cmp_start);
	}
}

static int cmp_start(const void *pa, const void *pb)
{
	const struct lane_span *a = &sort_base->s[*(const uint32_t *)pa];
	const struct lane_span *b = &sort_base->s[*(const uint32_t *)pb];
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The row's spans (sorted by start) merged into disjoint busy intervals,
 * with the running sum of their lengths. */
static void make_union(const struct lanes *l, struct lane_row *rw)
{
	size_t cap = rw->n ? rw->n : 1;
	rw->u0 = xmalloc(cap * sizeof(*rw->u0));
	rw->u1 = xmalloc(cap * sizeof(*rw->u1));
	rw->ucum = xmalloc((cap + 1) * sizeof(*rw->ucum));
	rw->nu = 0;
	rw->ucum[0] = 0;
	for (size_t j = 0; j < rw->n; j++) {
		const struct lane_span *s = &l->s[rw->at[j]];
		if (s->end <= s->start)
			continue; /* an instant takes no time */
		if (rw->nu && s->start <= rw->u1[rw->nu - 1]) {
			if (s->end > rw->u1[rw->nu - 1])
				rw->u1[rw->nu - 1] = s->end;
			continue;
		}
		if (rw->nu)
			rw->ucum[rw->nu] =
			    rw->ucum[rw->nu - 1] + ns_diff(rw->u0[rw->nu - 1], rw->u1[rw->nu - 1]);
		rw->u0[rw->nu] = s->start;
		rw->u1[rw->nu] = s->end;
		rw->nu++;
	}
	if (rw->nu)
		rw->ucum[rw->nu] =
		    rw->ucum[rw->nu - 1] + ns_diff(rw->u0[rw->nu - 1], rw->u1[rw->nu - 1]);
}

/* Orders the lanes, drops those with nothing drawn, and makes the rows. */
static void make_rows(struct build *b)
{
	struct lanes *l = b->l;
	int *deepest = xmalloc((l->nlanes ? l->nlanes : 1) * sizeof(*deepest));
	for (size_t k = 0; k < l->nlanes; k++)
		deepest[k] = -1;
	for (size_t i = 0; i < l->n; i++) {
		int32_t k = b->lane_of[i];
		if (k >= 0 && b->nest[i] < LANES_NEST && b->nest[i] > deepest[k])
			deepest[k] = b->nest[i];
	}
	/* lane.row holds the lane's index as made while it is sorted */
	size_t kept = 0;
	for (size_t k = 0; k < l->nlanes; k++)
		if (deepest[k] >= 0) {
			l->lane[kept] = l->lane[k];
			l->lane[kept].row = (uint32_t)k;
			kept++;
		}
	l->nlanes = kept;
	if (l->nlanes > 1)
		qsort(l->lane, l->nlanes, sizeof(*l->lane), cmp_lane);
	int32_t *first = xmalloc((b->alloc_lanes ? b->alloc_lanes : 1) * sizeof(*first));
	for (size_t k = 0; k < b->alloc_lanes; k++)
		first[k] = -1;
	int32_t *pos = xmalloc((b->alloc_lanes ? b->alloc_lanes : 1) * sizeof(*pos));
	for (size_t k = 0; k < l->nlanes; k++) {
		uint32_t made = l->lane[k].row;
		l->lane[k].row = (uint32_t)l->nrows;
		l->lane[k].nrows = (uint32_t)deepest[made] + 1;
		first[made] = (int32_t)l->nrows;
		pos[made] = (int32_t)k;
		l->nrows += l->lane[k].nrows;
	}
	l->row = xcalloc(l->nrows ? l->nrows : 1, sizeof(*l->row));
	for (size_t k = 0; k < l->nlanes; k++)
		for (uint32_t j = 0; j < l->lane[k].nrows; j++) {
			l->row[l->lane[k].row + j].lane = (uint32_t)k;
			l->row[l->lane[k].row + j].nest = (int)j;
		}
	for (size_t i = 0; i < l->n; i++) {
		int32_t k = b->lane_of[i];
		if (k < 0 || first[k] < 0)
			continue;
		l->s[i].lane = pos[k];
		if (b->nest[i] < LANES_NEST) {
			l->s[i].row = first[k] + b->nest[i];
			l->row[l->s[i].row].n++;
		}
	}
	for (size_t r = 0; r < l->nrows; r++) {
		l->row[r].at = xmalloc((l->row[r].n ? l->row[r].n : 1) * sizeof(*l->row[r].at));
		l->row[r].maxend = xmalloc((l->row[r].n ? l->row[r].n : 1) * sizeof(int64_t));
		l->row[r].n = 0;
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->s[i].row >= 0) {
			struct lane_row *rw = &l->row[l->s[i].row];
			rw->at[rw->n++] = (uint32_t)i;
		}
	for (size_t r = 0; r < l->nrows; r++) {
		struct lane_row *rw = &l->row[r];
		sort_by_start(l, rw->at, rw->n);
		for (size_t j = 0; j < rw->n; j++) {
			int64_t e = l->s[rw->at[j]].end;
			rw->maxend[j] = j && rw->maxend[j - 1] > e ? rw->maxend[j - 1] : e;
		}
		make_union(l, rw);
	}
	free(first);
	free(pos);
	free(deepest);
}

/* The children lists (the root's first), each by start, and the
 * depth-first numbers. */
static void make_kids(struct lanes *l)
{
	size_t n = l->n;
	l->kids = xmalloc((n ? n : 1) * sizeof(*l->kids));
	l->nroot = 0;
	for (size_t i = 0; i < n; i++) {
		if (l->s[i].parent < 0)
			l->nroot++;
		else
			l->s[l->s[i].parent].nkids++;
	}
	uint32_t at = (uint32_t)l->nroot;
	for (size_t i = 0; i < n; i++) {
		l->s[i].kids = at;
		at += l->s[i].nkids;
		l->s[i].nkids = 0;
	}
	size_t root = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t p = l->s[i].parent;
		if (p < 0)
			l->kids[root++] = (uint32_t)i;
		else
			l->kids[l->s[p].kids + l->s[p].nkids++] = (uint32_t)i;
	}
	sort_by_start(l, l->kids, l->nroot);
	for (size_t i = 0; i < n; i++)
		sort_by_start(l, l->kids + l->s[i].kids, l->s[i].nkids);
	/* pre-order numbers: a parent comes before its children in s[], so
	 * subtree sizes sum backwards, and each child's number follows from
	 * its parent's and its elder siblings' sizes */
	uint32_t *size = xmalloc((n ? n : 1) * sizeof(*size));
	for (size_t i = 0; i < n; i++)
		size[i] = 1;
	for (size_t i = n; i-- > 0;)
		if (l->s[i].parent >= 0)
			size[l->s[i].parent] += size[i];
	uint32_t next = 0;
	for (size_t j = 0; j < l->nroot; j++) {
		l->s[l->kids[j]].pre = next;
		next += size[l->kids[j]];
	}
	for (size_t i = 0; i < n; i++) {
		struct lane_span *s = &l->s[i];
		s->last = s->pre + size[i] - 1;
		uint32_t c = s->pre + 1;
		for (uint32_t j = 0; j < s->nkids; j++) {
			l->s[l->kids[s->kids + j]].pre = c;
			c += size[l->kids[s->kids + j]];
		}
	}
	free(size);
	l->by_pre = xmalloc((n ? n : 1) * sizeof(*l->by_pre));
	for (size_t i = 0; i < n; i++)
		l->by_pre[l->s[i].pre] = (uint32_t)i;
}

int lanes_build(struct model *m, sqlite3 *db, int64_t root_id, size_t max_spans, atomic_int *cancel,
		struct lanes *out, char **err)
{
	memset(out, 0, sizeof(*out));
	struct build b = {.m = m,
			  .l = out,
			  .max = max_spans < INT32_MAX ? max_spans : INT32_MAX,
			  .cancel = cancel,
			  .max_nest = INT_MAX};
	struct subtree_visitor v = {visit, restart, &b, SUBTREE_TIMES_NAMES};
	idmap_init(&b.tracks, 64);
	const char *path = store_path(model_store(m));
	int rc = subtree_walk(db ? db : store_db(model_store(m)), path, root_id, SUBTREE_DFS_ROWS,
			      &v, err);
	if (rc == 2) {
		*err = xasprintf("%s: reading phase %lld's subtree: interrupted", path,
				 (long long)root_id);
		rc = -1;
	}
	if (rc >= 0) {
		if (b.dropped)
			compact(&b);
		if (out->t0 > out->t1)
			out->t0 = out->t1 = 0;
		make_rows(&b);
		make_kids(out);
	}
	idmap_release(&b.tracks);
	free(b.lane_of);
	free(b.nest);
	free(b.vis);
	if (rc < 0) {
		lanes_release(out);
		return -1;
	}
	return 0;
}

void lanes_release(struct lanes *l)
{
	for (size_t r = 0; r < l->nrows; r++) {
		free(l->row[r].at);
		free(l->row[r].maxend);
		free(l->row[r].u0);
		free(l->row[r].u1);
		free(l->row[r].ucum);
	}
	free(l->row);
	free(l->lane);
	free(l->kids);
	free(l->by_pre);
	free(l->s);
	memset(l, 0, sizeof(*l));
}

int lanes_covers(const struct lanes *l, uint32_t a, uint32_t b)
{
	return l->s[a].pre <= l->s[b].pre && l->s[b].pre <= l->s[a].last;
}

size_t lanes_seek(const struct lanes *l, size_t r, int64_t t)
{
	const struct lane_row *rw = &l->row[r];
	size_t at;
	PARTITION_POINT(at, rw->n, i, rw->maxend[i] < t);
	return at;
}

/* The time row r was busy before t. */
static uint64_t busy_before(const struct lane_row *rw, int64_t t)
{
	size_t k;
	PARTITION_POINT(k, rw->nu, i, rw->u1[i] <= t);
	return rw->ucum[k] + (k < rw->nu && rw->u0[k] < t ? ns_diff(rw->u0[k], t) : 0);
}

uint64_t lanes_busy(const struct lanes *l, size_t r, int64_t t0, int64_t t1)
{
	const struct lane_row *rw = &l->row[r];
	if (t1 <= t0 || !rw->nu)
		return 0;
	return busy_before(rw, t1) - busy_before(rw, t0);
}

int64_t lanes_column_start(int64_t t0, int64_t t1, int c, int w)
{
	if (c <= 0 || w <= 0 || t1 <= t0)
		return t0;
	if (c >= w)
		return t1;
	/* in long double: a window may be 2^64 ns wide, and the column's
	 * offset stays below it */
	uint64_t off = (uint64_t)((long double)ns_diff(t0, t1) * c / w);
	return (int64_t)((uint64_t)t0 + off);
}

void lanes_shade(const struct lanes *l, size_t r, int64_t t0, int64_t t1, int w, double *share)
{
	const struct lane_row *rw = &l->row[r];
	if (t1 <= t0) {
		size_t k;
		PARTITION_POINT(k, rw->nu, i, rw->u1[i] <= t0);
		for (int c = 0; c < w; c++)
			share[c] = k < rw->nu && rw->u0[k] <= t0;
		return;
	}
	int64_t a = t0;
	uint64_t before = busy_before(rw, a);
	for (int c = 0; c < w; c++) {
		int64_t b = lanes_column_start(t0, t1, c + 1, w);
		uint64_t upto = busy_before(rw, b);
		/* a column narrower than a nanosecond: whether t is covered */
		share[c] = b > a ? (double)(upto - before) / (double)ns_diff(a, b)
				 : (double)(a < t1 && lanes_busy(l, r, a, a + 1) > 0);
		a = b;
		before = upto;
	}
}

static int cmp_sum_name(const void *pa, const void *pb)
{
	const struct lanes_sum_name *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->name_id < b->name_id ? -1 : a->name_id > b->name_id;
}

struct summing {
	const struct lanes *l;
	int64_t t0, t1;
	struct idmap names;
	size_t alloc;
	struct lanes_sum *out;
};

/* Adds span s's time within the window to its name's, when it lies in it
 * (an instant at t0 too). */
static void sum_span(struct summing *sg, const struct lane_span *s)
{
	struct lanes_sum *out = sg->out;
	if (s->start >= sg->t1 || s->end < sg->t0 || (s->end == sg->t0 && s->start < sg->t0))
		return;
	int64_t a = s->start > sg->t0 ? s->start : sg->t0, b = s->end < sg->t1 ? s->end : sg->t1;
	int32_t k = idmap_get(&sg->names, s->name_id);
	if (k < 0) {
		XGROW(out->name, out->nname + 1, sg->alloc);
		k = (int32_t)out->nname++;
		out->name[k] = (struct lanes_sum_name){s->name_id, 0, 0, lanes_is_device(s->kind)};
		idmap_put(&sg->names, s->name_id, k);
	}
	out->name[k].ns += b > a ? ns_diff(a, b) : 0;
	out->name[k].count++;
}

void lanes_sum(const struct lanes *l, int64_t t0, int64_t t1, struct lanes_sum *out)
{
	struct summing sg = {l, t0, t1, {0}, 0, out};
	memset(out, 0, sizeof(*out));
	out->t0 = t0;
	out->t1 = t1;
	out->lane_busy = xcalloc(l->nlanes ? l->nlanes : 1, sizeof(*out->lane_busy));
	for (size_t k = 0; k < l->nlanes; k++)
		out->lane_busy[k] = lanes_busy(l, l->lane[k].row, t0, t1);
	idmap_init(&sg.names, 64);
	for (size_t r = 0; r < l->nrows; r++) {
		const struct lane_row *rw = &l->row[r];
		for (size_t j = lanes_seek(l, r, t0); j < rw->n; j++) {
			const struct lane_span *s = &l->s[rw->at[j]];
			if (s->start >= t1)
				break;
			sum_span(&sg, s);
			if (rw->nest < LANES_NEST - 1)
				continue;
			/* the phases nested past the rows drawn lie below the
			 * last row's, numbered right after them */
			for (uint32_t d = s->pre + 1; d <= s->last; d++) {
				const struct lane_span *x = &l->s[l->by_pre[d]];
				if (x->row < 0 && x->lane >= 0)
					sum_span(&sg, x);
			}
		}
	}
	idmap_release(&sg.names);
	if (out->nname > 1)
		qsort(out->name, out->nname, sizeof(*out->name), cmp_sum_name);
}

void lanes_sum_release(struct lanes_sum *s)
{
	free(s->lane_busy);
	free(s->name);
	memset(s, 0, sizeof(*s));
}
