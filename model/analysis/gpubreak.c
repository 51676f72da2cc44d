/*
 * GPU trace breakdowns (see gpubreak.h for the definitions followed).  One
 * query streams the device work of trace.db ordered by source, rank, stream
 * and start; each (source, rank) group is held in memory only while it is
 * analysed, so memory follows the largest rank, not the file.
 *
 * A work item's launching call is its parent when that is a runtime call
 * (the importer parents device work by correlation id, HTA's link), else
 * the source of a launch edge (an ac2g flow) when there is one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/devcall.h"
#include "model/analysis/gpubreak.h"
#include "model/analysis/idle.h"
#include "model/store/col.h"
#include "model/store/namememo.h"
#include "model/util/nstime.h"
#include "model/util/spans.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

struct item {
	int64_t name_id, start, end, launch; /* launch: INT64_MIN when none */
	int type;
	int memcpy;		/* a copy (phase kind memcpy) */
	int64_t bytes;		/* a copy's bytes, 0 when unknown */
	struct idle_launch how; /* its launching call */
};

/* One (source, rank) group as it is read. */
struct group {
	int64_t source_id;
	int rank;
	int api; /* enum devcall_api: the largest its names say */
	struct item *items;
	size_t n, alloc;
	/* one entry per stream, in the order read; items of stream k are
	 * items[first[k] .. first[k+1]) */
	struct gpubreak_stream *streams;
	size_t *first;
	size_t nstreams, salloc, falloc;
};

/* The last-step cutoff of a source: work launched at or after it is left out. */
struct cutoff {
	int64_t source_id, start;
};

/* HTA's rounding of time t of a trace whose microseconds start at off: to
 * the next whole microsecond (up), or the previous one (down). */
static int64_t us_up(int64_t t, int64_t off)
{
	int64_t r = (int64_t)(((uint64_t)t - (uint64_t)off) % 1000);
	return r ? ns_sub(r, ns_sum(t, 1000)) : t;
}

static int64_t us_down(int64_t t, int64_t off)
{
	int64_t r = (int64_t)(((uint64_t)t - (uint64_t)off) % 1000);
	return ns_sub(r, t);
}

void gpubreak_default_opts(struct gpubreak_opts *o)
{
	o->kernel_wait_ns = 30000;
	o->include_last_step = 0;
	o->top_n = 10;
	o->duration_ratio = 0.8;
	o->launch_ns = IDLE_LAUNCH_NS;
	o->hta = 0;
	o->gaps = 0;
}

const char *gpubreak_type_name(int type)
{
	static const char *const names[GPUBREAK_NTYPES] = {"COMMUNICATION", "COMPUTATION", "MEMORY",
							   "OTHER"};
	return type >= 0 && type < GPUBREAK_NTYPES ? names[type] : "?";
}

const char *gpubreak_wait_name(int wait)
{
	static const char *const names[GPUBREAK_NWAITS] = {"host_wait", "kernel_wait", "other"};
	return wait >= 0 && wait < GPUBREAK_NWAITS ? names[wait] : "?";
}

static int starts(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* HTA's rules, in HTA's order (gpubreak.h). */
int gpubreak_kernel_type(const char *name)
{
	static const char *const comm[] = {"nccl", "hip", "hccl"}, *const mem[] = {"Memcpy",
										   "Memset", "dma"};
	static const char *const other[] = {"pe_exe", "job_exe", "runFunction"};
	for (size_t i = 0; i < sizeof(comm) / sizeof(*comm); i++)
		if (starts(name, comm[i]))
			return GPUBREAK_COMM;
	if (strstr(name, "ncclKernel") || strstr(name, "gloo:"))
		return GPUBREAK_COMM;
	for (size_t i = 0; i < sizeof(mem) / sizeof(*mem); i++)
		if (starts(name, mem[i]))
			return GPUBREAK_MEM;
	if (strstr(name, "Memcpy") || strstr(name, "Sync") || !strcmp(name, "Stream Wait Event"))
		return GPUBREAK_OTHER;
	for (size_t i = 0; i < sizeof(other) / sizeof(*other); i++)
		if (starts(name, other[i]))
			return GPUBREAK_OTHER;
	return GPUBREAK_COMP;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **q, char **err)
{
	if (sqlite3_prepare_v2(db, sql, -1, q, NULL) != SQLITE_OK) {
		*err = xasprintf("cannot read trace.db: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* Sources that name at least two ProfilerStep* phases, with the latest start
 * among their host ones (not device work, nor its GPU annotations unless
 * hta, as HTA takes them), rounded up as HTA does when hta. */
static int load_cutoffs(sqlite3 *db, int hta, struct cutoff **out, size_t *n, char **err)
{
	static const char sql[] =
	    "SELECT p.source_id, count(DISTINCT p.name_id), max(p.start_ns),"
	    " (SELECT time_offset_ns FROM sources s WHERE s.id = p.source_id) FROM phases p"
	    " WHERE p.name_id IN (SELECT id FROM strings WHERE text GLOB ?1)"
	    " AND p.kind NOT IN (?2, ?3, ?4, ?5) AND p.source_id IS NOT NULL"
	    " GROUP BY p.source_id ORDER BY p.source_id";
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (prepare(db, sql, &q, err) < 0)
		return -1;
	sqlite3_bind_text(q, 1, "ProfilerStep*", -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 2, PHASE_KERNEL);
	sqlite3_bind_int(q, 3, PHASE_MEMCPY);
	sqlite3_bind_int(q, 4, PHASE_MEMSET);
	sqlite3_bind_int(q, 5, hta ? PHASE_KERNEL : PHASE_GPU_ANNOTATION);
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (col_int(q, 1) < 2)
			continue;
		XGROW(*out, *n + 1, alloc);
		(*out)[*n].source_id = col_int(q, 0);
		(*out)[*n].start = hta ? us_up(col_int(q, 2), col_int(q, 3)) : col_int(q, 2);
		(*n)++;
	}
	if (rc != SQLITE_DONE)
		*err = xasprintf("cannot read trace.db: %s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : -1;
}

static const struct cutoff *find_cutoff(const struct cutoff *c, size_t n, int64_t source_id)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].source_id == source_id)
			return &c[i];
	return NULL;
}

/* The temporal breakdown of items (sorted by start), of which compute are
 * COMPUTATION. */
static void temporal(const struct item *it, size_t n, struct gpubreak_temporal *t)
{
	memset(t, 0, sizeof(*t));
	if (!n)
		return;
	struct span *all = xmalloc(n * sizeof(*all)), *comp = xmalloc(n * sizeof(*comp));
	size_t nc = 0;
	for (size_t i = 0; i < n; i++) {
		all[i] = (struct span){it[i].start, it[i].end};
		if (it[i].type == GPUBREAK_COMP)
			comp[nc++] = all[i];
	}
	size_t na = spans_merge(all, n);
	nc = spans_merge(comp, nc);
	t->window_ns = ns_dur(all[0].start, all[na - 1].end);
	t->idle_ns = t->window_ns - spans_length(all, na);
	t->compute_ns = spans_length(comp, nc);
	t->noncompute_ns = t->window_ns - t->compute_ns - t->idle_ns;
	free(all);
	free(comp);
}

/* HTA's idle time breakdown of one stream's items, sorted by start. */
static void idle_breakdown(const struct item *it, size_t n, int64_t kernel_wait_ns,
			   struct gpubreak_idle *d)
{
	memset(d, 0, sizeof(*d));
	for (size_t i = 1; i < n; i++) {
		int64_t prev_end = it[i - 1].end, gap = ns_sub(prev_end, it[i].start);
		int w = GPUBREAK_OTHER_WAIT;
		if (it[i].launch != INT64_MIN && it[i].launch > prev_end)
			w = GPUBREAK_HOST_WAIT;
		else if (gap < kernel_wait_ns)
			w = GPUBREAK_KERNEL_WAIT;
		d->ns[w] = ns_sum(d->ns[w], gap);
		d->count[w]++;
	}
}

/* The idle gaps of one stream's items (sorted by start) by cause
 * (model/analysis/idle.h): the stretches between the end of all work so far and the
 * next start, which add up to the stream's idle time. */
static void idle_causes(const struct item *it, size_t n, const struct idle_host *h,
			int64_t launch_ns, struct gpubreak_causes *c, struct gpubreak_stream *keep)
{
	size_t alloc = 0;
	memset(c, 0, sizeof(*c));
	int64_t end = n ? it[0].end : 0;
	for (size_t i = 1; i < n; i++) {
		if (it[i].start > end) {
			int k = idle_gap_cause(h, end, it[i].start, &it[i].how, launch_ns);
			c->ns[k] = ns_sum(c->ns[k], ns_dur(end, it[i].start));
			c->gaps[k]++;
			if (keep) {
				XGROW(keep->gaps, keep->ngaps + 1, alloc);
				keep->gaps[keep->ngaps++] =
				    (struct gpubreak_gap){end, it[i].start, k, it[i].how.track};
			}
		}
		if (it[i].end > end)
			end = it[i].end;
	}
}

/* The copies among one stream's items (sorted by start): their count,
 * bytes and union, all of them and those from or to pageable memory. */
static void copies(const struct item *it, size_t n, struct gpubreak_copies *c)
{
	struct span *all = xmalloc((n ? n : 1) * sizeof(*all));
	struct span *pg = xmalloc((n ? n : 1) * sizeof(*pg));
	size_t na = 0, np = 0;
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		if (!it[i].memcpy)
			continue;
		all[na++] = (struct span){it[i].start, it[i].end};
		c->count++;
		c->bytes = ns_sum(c->bytes, it[i].bytes);
		if (it[i].how.copy & DEVCALL_PAGEABLE) {
			pg[np++] = all[na - 1];
			c->pageable++;
			c->pageable_bytes = ns_sum(c->pageable_bytes, it[i].bytes);
		}
	}
	c->ns = spans_length(all, spans_merge(all, na));
	c->pageable_ns = spans_length(pg, spans_merge(pg, np));
	free(all);
	free(pg);
}

static int by_start(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

static int by_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Kernel-type unions, their exact mixes, and the comm/comp overlap. */
static void type_times(const struct item *it, size_t n, struct gpubreak_rank *r)
{
	struct span *s[GPUBREAK_NTYPES];
	size_t ns[GPUBREAK_NTYPES] = {0}, nb = 0;
	int64_t *bounds = xmalloc((2 * n + 1) * sizeof(*bounds));
	for (int t = 0; t < GPUBREAK_NTYPES; t++)
		s[t] = xmalloc((n ? n : 1) * sizeof(**s));
	for (size_t i = 0; i < n; i++)
		s[it[i].type][ns[it[i].type]++] = (struct span){it[i].start, it[i].end};
	for (int t = 0; t < GPUBREAK_NTYPES; t++) {
		ns[t] = spans_merge(s[t], ns[t]);
		r->type_ns[t] = spans_length(s[t], ns[t]);
		for (size_t i = 0; i < ns[t]; i++) {
			bounds[nb++] = s[t][i].start;
			bounds[nb++] = s[t][i].end;
		}
	}
	/* between two consecutive boundaries the set of running types is fixed */
	if (nb)
		qsort(bounds, nb, sizeof(*bounds), by_int64);
	size_t p[GPUBREAK_NTYPES] = {0};
	for (size_t b = 0; b + 1 < nb; b++) {
		int64_t lo = bounds[b], hi = bounds[b + 1];
		if (hi == lo)
			continue;
		int mask = 0;
		for (int t = 0; t < GPUBREAK_NTYPES; t++) {
			while (p[t] < ns[t] && s[t][p[t]].end <= lo)
				p[t]++;
			if (p[t] < ns[t] && s[t][p[t]].start <= lo)
				mask |= 1 << t;
		}
		r->mix_ns[mask] = ns_sum(r->mix_ns[mask], ns_dur(lo, hi));
	}
	r->mix_ns[0] = 0;
	r->comm_ns = r->type_ns[GPUBREAK_COMM];
	r->overlap_ns = spans_intersect_length(s[GPUBREAK_COMM], ns[GPUBREAK_COMM],
					       s[GPUBREAK_COMP], ns[GPUBREAK_COMP]);
	for (int t = 0; t < GPUBREAK_NTYPES; t++)
		free(s[t]);
	free(bounds);
}

struct kagg {
	int64_t name_id, count, sum, min, max;
	char *name;
};

static int by_name_id(const void *a, const void *b)
{
	const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;
	return x->name_id < y->name_id ? -1 : x->name_id > y->name_id;
}

static int by_sum_desc(const void *a, const void *b)
{
	const struct kagg *x = a, *y = b;
	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void add_kernel(struct gpubreak_rank *r, size_t *alloc, const struct kagg *k, int type,
		       int others)
{
	XGROW(r->kernels, r->nkernels + 1, *alloc);
	struct gpubreak_kernel *o = &r->kernels[r->nkernels++];
	o->name = xstrdup(others ? "others" : k->name);
	o->type = type;
	o->others = others;
	o->names = others ? 0 : 1;
	o->count = k->count;
	o->sum_ns = k->sum;
	o->min_ns = k->min;
	o->max_ns = k->max;
}

/* The top kernels of one type, HTA's _aggr_gpu_kernel_time: names past
 * top_n, or whose running sum exceeds the duration_ratio quantile of the
 * running sums, fold into "others". */
static void top_kernels(sqlite3_stmt *nameq, const struct item *it, size_t n, int type,
			const struct gpubreak_opts *o, struct gpubreak_rank *r, size_t *alloc)
{
	const struct item **v = xmalloc((n ? n : 1) * sizeof(*v));
	size_t nv = 0, na = 0, aalloc = 0;
	struct kagg *a = NULL;
	for (size_t i = 0; i < n; i++)
		if (it[i].type == type)
			v[nv++] = &it[i];
	if (nv)
		qsort(v, nv, sizeof(*v), by_name_id);
	for (size_t i = 0; i < nv; i++) {
		int64_t d = ns_dur(v[i]->start, v[i]->end);
		if (!na || a[na - 1].name_id != v[i]->name_id) {
			XGROW(a, na + 1, aalloc);
			a[na++] = (struct kagg){v[i]->name_id, 0, 0, d, d, NULL};
		}
		struct kagg *k = &a[na - 1];
		k->count++;
		k->sum = ns_sum(k->sum, d);
		if (d < k->min)
			k->min = d;
		if (d > k->max)
			k->max = d;
	}
	for (size_t i = 0; i < na; i++) {
		sqlite3_bind_int64(nameq, 1, a[i].name_id);
		if (sqlite3_step(nameq) == SQLITE_ROW) {
			a[i].name = col_strdup(nameq, 0);
		} else {
			a[i].name = xstrdup("");
		}
		sqlite3_reset(nameq);
	}
	if (na)
		qsort(a, na, sizeof(*a), by_sum_desc);
	double q = 0;
	int fold = na > (size_t)o->top_n;
	if (fold) {
		/* pandas' default quantile: linear between the closest ranks */
		double pos = o->duration_ratio * (double)(na - 1);
		size_t lo = (size_t)floor(pos), hi = (size_t)ceil(pos);
		int64_t clo = 0, chi = 0, c = 0;
		for (size_t i = 0; i <= hi && i < na; i++) {
			c = ns_sum(c, a[i].sum);
			if (i == lo)
				clo = c;
			if (i == hi)
				chi = c;
		}
		q = (double)clo + ((double)chi - (double)clo) * (pos - (double)lo);
	}
	struct kagg rest = {0, 0, 0, INT64_MAX, 0, NULL};
	int64_t cum = 0, folded = 0;
	for (size_t i = 0; i < na; i++) {
		cum = ns_sum(cum, a[i].sum);
		if (fold && ((double)cum > q || i >= (size_t)o->top_n)) {
			rest.count += a[i].count;
			rest.sum = ns_sum(rest.sum, a[i].sum);
			if (a[i].min < rest.min)
				rest.min = a[i].min;
			if (a[i].max > rest.max)
				rest.max = a[i].max;
			folded++;
		} else {
			add_kernel(r, alloc, &a[i], type, 0);
		}
	}
	if (folded) {
		add_kernel(r, alloc, &rest, type, 1);
		r->kernels[r->nkernels - 1].names = folded;
	}
	for (size_t i = 0; i < na; i++)
		free(a[i].name);
	free(a);
	free(v);
}

/* Whether the last-step rule leaves out item it. */
static int left_out(const struct item *it, const struct cutoff *cut, const struct gpubreak_opts *o)
{
	return cut && !o->include_last_step &&
	       (it->launch == INT64_MIN || it->launch >= cut->start);
}

/* Analyses one group into a new gpubreak_rank. */
static int analyse(sqlite3 *db, sqlite3_stmt *nameq, struct group *g, const struct cutoff *cut,
		   const struct gpubreak_opts *o, struct gpubreak *out, size_t *ralloc, char **err)
{
	XGROW(out->ranks, out->nranks + 1, *ralloc);
	struct gpubreak_rank *r = &out->ranks[out->nranks++];
	memset(r, 0, sizeof(*r));
	r->source_id = g->source_id;
	r->rank = g->rank;
	r->api = g->api;
	sqlite3_stmt *q;
	if (prepare(db, "SELECT path FROM sources WHERE id = ?1", &q, err) < 0)
		return -1;
	sqlite3_bind_int64(q, 1, g->source_id);
	r->source = sqlite3_step(q) == SQLITE_ROW ? col_strdup(q, 0) : xstrdup("");
	sqlite3_finalize(q);

	/* what the host did, from every launch, before the last-step rule */
	struct idle_launch *how = xmalloc((g->n ? g->n : 1) * sizeof(*how));
	for (size_t i = 0; i < g->n; i++)
		how[i] = g->items[i].how;
	struct idle_host *host = NULL;
	int rc = idle_host_load(db, g->source_id, how, g->n, &host, err);
	free(how);
	if (rc < 0)
		return -1;

	/* the kept steps' last gap: from the counted work's end to the first
	 * left-out work that starts after it */
	int64_t kept_end = INT64_MIN, next = INT64_MAX;
	for (size_t i = 0; i < g->n; i++)
		if (!left_out(&g->items[i], cut, o) && g->items[i].end > kept_end)
			kept_end = g->items[i].end;
	for (size_t i = 0; i < g->n; i++)
		if (left_out(&g->items[i], cut, o) && g->items[i].start >= kept_end &&
		    g->items[i].start < next)
			next = g->items[i].start;
	r->tail_ns = kept_end != INT64_MIN && next != INT64_MAX ? ns_dur(kept_end, next) : 0;

	/* the top kernels: by default over all the device work, as the
	 * summaries count it; with HTA's figures after its last-step rule */
	size_t kalloc = 0;
	for (int t = 0; !o->hta && t < GPUBREAK_NTYPES; t++)
		top_kernels(nameq, g->items, g->n, t, o, r, &kalloc);

	/* the last-step rule, keeping the order (stream, start) */
	g->first[g->nstreams] = g->n;
	size_t kept = 0;
	for (size_t s = 0; s < g->nstreams; s++) {
		size_t from = g->first[s], to = g->first[s + 1];
		g->first[s] = kept;
		for (size_t i = from; i < to; i++) {
			if (left_out(&g->items[i], cut, o)) {
				r->left_out++;
				continue;
			}
			g->items[kept++] = g->items[i];
		}
	}
	g->first[g->nstreams] = kept;
	g->n = kept;
	r->items = (int64_t)kept;
	r->cutoff_ns = cut && !o->include_last_step ? cut->start : 0;

	size_t salloc = 0;
	for (size_t s = 0; s < g->nstreams; s++) {
		size_t from = g->first[s], to = g->first[s + 1];
		if (from == to) {
			free(g->streams[s].name);
			continue;
		}
		XGROW(r->streams, r->nstreams + 1, salloc);
		struct gpubreak_stream *x = &r->streams[r->nstreams++];
		*x = g->streams[s];
		x->items = (int64_t)(to - from);
		temporal(&g->items[from], to - from, &x->time);
		idle_breakdown(&g->items[from], to - from, o->kernel_wait_ns, &x->idle);
		idle_causes(&g->items[from], to - from, host, o->launch_ns, &x->cause,
			    o->gaps ? x : NULL);
		copies(&g->items[from], to - from, &x->copies);
	}
	g->nstreams = 0;

	if (g->n)
		qsort(g->items, g->n, sizeof(*g->items), by_start);
	temporal(g->items, g->n, &r->time);
	idle_causes(g->items, g->n, host, o->launch_ns, &r->cause, NULL);
	type_times(g->items, g->n, r);
	for (int t = 0; o->hta && t < GPUBREAK_NTYPES; t++)
		top_kernels(nameq, g->items, g->n, t, o, r, &kalloc);
	idle_host_free(host);
	return 0;
}

static void group_reset(struct group *g, int64_t source_id, int rank)
{
	for (size_t s = 0; s < g->nstreams; s++)
		free(g->streams[s].name);
	g->source_id = source_id;
	g->rank = rank;
	g->api = DEVCALL_API_NONE;
	g->n = 0;
	g->nstreams = 0;
}

/* What a device work name says: its HTA type, bit 4 when it is a copy
 * by its name (MEMORY work that is no memset: MTIA's dma_request), and its
 * copy flags (model/analysis/devcall.h) from bit 5 on. */
static int item_name(const char *name)
{
	int type = gpubreak_kernel_type(name);
	int copy = type == GPUBREAK_MEM && strncmp(name, "Memset", 6) != 0;
	return type | copy << 4 | devcall_copy(name) << 5;
}

int gpubreak_load(struct store *st, const struct gpubreak_opts *opts, struct gpubreak *out,
		  char **err)
{
	return gpubreak_load_db(store_db(st), opts, out, err);
}

int gpubreak_load_db(sqlite3 *db, const struct gpubreak_opts *opts, struct gpubreak *out,
		     char **err)
{
	/* The work is read through w: each item with the track it counts on,
	 * its stream's (a sync on a host-side "stream N" track counts on the
	 * stream track of its process and number); ?7: 1 for HTA's own rule,
	 * every phase with a stream argument other than -1. */
	static const char sql[] =
	    "WITH w(id, track_id) AS (SELECT p.id, CASE WHEN t.kind = ?5 THEN t.id ELSE"
	    "  coalesce((SELECT s.id FROM tracks s WHERE s.source_id = t.source_id"
	    "   AND s.kind = ?5 AND s.pid IS t.pid"
	    "   AND s.tid = CAST(json_extract(p.attrs, '$.stream') AS TEXT)), t.id) END"
	    " FROM phases p JOIN tracks t ON t.id = p.track_id"
	    " WHERE (p.kind IN (?1, ?2, ?3) AND t.kind = ?5"
	    "  AND (?7 = 0 OR (instr(p.attrs, '\"stream\"') AND json_valid(p.attrs)"
	    "   AND json_type(p.attrs, '$.stream') = 'integer'"
	    "   AND json_extract(p.attrs, '$.stream') <> -1)))"
	    " OR ((?7 = 1 OR p.cat_id = (SELECT id FROM strings WHERE text = 'cuda_sync'))"
	    "  AND instr(p.attrs, '\"stream\"')"
	    "  AND NOT (p.kind IN (?1, ?2, ?3) AND t.kind = ?5) AND json_valid(p.attrs)"
	    "  AND json_type(p.attrs, '$.stream') = 'integer'"
	    "  AND json_extract(p.attrs, '$.stream') <> -1)),"
	    /* the runtime calls by correlation id of the sources whose work
	     * includes other than kernels, copies and sets (syncs: the
	     * importer links them to no call) */
	    " corr(source_id, c, id) AS MATERIALIZED (SELECT r.source_id,"
	    "  json_extract(r.attrs, '$.correlation'), r.id FROM phases r"
	    "  WHERE r.kind = ?6 AND r.source_id IN (SELECT q.source_id FROM w"
	    "   JOIN phases q ON q.id = w.id WHERE q.kind NOT IN (?1, ?2, ?3))"
	    "  AND instr(r.attrs, '\"correlation\"') AND json_valid(r.attrs))"
	    "SELECT t.source_id, coalesce(t.rank, -1), w.track_id, t.name, p.name_id,"
	    " p.start_ns, p.dur_ns, l.start_ns, l.dur_ns, coalesce(l.track_id, 0), p.kind,"
	    " CASE WHEN p.kind = ?2 AND json_valid(p.attrs) THEN json_extract(p.attrs, '$.bytes')"
	    " WHEN p.kind = ?1 AND instr(p.attrs, '\"size\"') AND json_valid(p.attrs)"
	    " THEN json_extract(p.attrs, '$.size') END, coalesce(p.cat_id, 0),"
	    " coalesce(l.name_id, 0), coalesce(l.cat_id, 0),"
	    " (SELECT time_offset_ns FROM sources s WHERE s.id = t.source_id)"
	    " FROM w JOIN phases p ON p.id = w.id JOIN tracks t ON t.id = w.track_id"
	    " LEFT JOIN phases l ON l.id ="
	    " coalesce((SELECT r.id FROM phases r WHERE r.id = p.parent_id AND r.kind = ?6),"
	    "  (SELECT r.id FROM edges e JOIN phases r ON r.id = e.src"
	    "   WHERE e.dst = p.id AND e.kind = ?4 ORDER BY r.start_ns, r.id LIMIT 1),"
	    "  CASE WHEN p.kind NOT IN (?1, ?2, ?3) THEN (SELECT max(c.id) FROM corr c"
	    "   WHERE c.source_id = p.source_id AND c.id <> p.id"
	    "   AND c.c = json_extract(p.attrs, '$.correlation')) END)"
	    " ORDER BY t.source_id, 2, w.track_id, p.start_ns, p.dur_ns, p.id";
	struct gpubreak_opts def;
	gpubreak_default_opts(&def);
	const struct gpubreak_opts *o = opts ? opts : &def;
	struct cutoff *cuts = NULL;
	size_t ncuts = 0, ralloc = 0;
	sqlite3_stmt *q = NULL, *nameq = NULL;
	struct group g = {0};
	struct namememo names = NAMEMEMO_INIT, apis = NAMEMEMO_INIT;
	int rc = -1, step, have = 0;
	memset(out, 0, sizeof(*out));
	out->hta = o->hta;
	if (load_cutoffs(db, o->hta, &cuts, &ncuts, err) < 0 || prepare(db, sql, &q, err) < 0 ||
	    prepare(db, "SELECT text FROM strings WHERE id = ?1", &nameq, err) < 0)
		goto out;
	sqlite3_bind_int(q, 1, PHASE_KERNEL);
	sqlite3_bind_int(q, 2, PHASE_MEMCPY);
	sqlite3_bind_int(q, 3, PHASE_MEMSET);
	sqlite3_bind_int(q, 4, EDGE_LAUNCH);
	sqlite3_bind_text(q, 5, "stream", -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 6, PHASE_RUNTIME);
	sqlite3_bind_int(q, 7, o->hta != 0);
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t source_id = col_int(q, 0), track = col_int(q, 2);
		int rank = col_int32(q, 1);
		if (have && (source_id != g.source_id || rank != g.rank)) {
			if (analyse(db, nameq, &g, find_cutoff(cuts, ncuts, g.source_id), o, out,
				    &ralloc, err) < 0)
				goto out;
			group_reset(&g, source_id, rank);
		}
		if (!have)
			group_reset(&g, source_id, rank);
		have = 1;
		if (!g.nstreams || g.streams[g.nstreams - 1].track_id != track) {
			XGROW(g.streams, g.nstreams + 1, g.salloc);
			XGROW(g.first, g.nstreams + 2, g.falloc);
			memset(&g.streams[g.nstreams], 0, sizeof(*g.streams));
			g.streams[g.nstreams].track_id = track;
			g.streams[g.nstreams].name = col_strdup(q, 3);
			g.first[g.nstreams++] = g.n;
		}
		XGROW(g.items, g.n + 1, g.alloc);
		struct item *it = &g.items[g.n++];
		int64_t dur = col_int(q, 6);
		it->name_id = col_int(q, 4);
		it->start = col_int(q, 5);
		it->end = ns_end(it->start, dur);
		int known = !col_null(q, 7);
		int v = namememo_get(&names, nameq, it->name_id, item_name);
		int64_t bytes = col_int(q, 11);
		it->launch = known ? col_int(q, 7) : INT64_MIN;
		if (o->hta) {
			int64_t off = col_int(q, 15);
			it->start = us_up(it->start, off);
			it->end = us_down(it->end, off);
			if (it->end < it->start)
				it->end = it->start;
			if (known)
				it->launch = us_up(it->launch, off);
		}
		it->type = v & 0xf;
		it->memcpy = col_int32(q, 10) == PHASE_MEMCPY || (v >> 4 & 1);
		it->bytes = bytes > 0 ? bytes : 0;
		it->how = (struct idle_launch){.track = known ? col_int(q, 9) : 0,
					       .start = it->launch,
					       .end = known ? ns_end(it->launch, col_int(q, 8))
							    : INT64_MIN,
					       .copy = v >> 5};
		/* its category, its launching call's name and category */
		for (int c = 12; c <= 14; c++) {
			int64_t id = col_int(q, c);
			int api = id ? namememo_get(&apis, nameq, id, devcall_api) : 0;
			g.api = api > g.api ? api : g.api;
		}
	}
	if (step != SQLITE_DONE) {
		*err = xasprintf("cannot read trace.db: %s", sqlite3_errmsg(db));
		goto out;
	}
	if (have &&
	    analyse(db, nameq, &g, find_cutoff(cuts, ncuts, g.source_id), o, out, &ralloc, err) < 0)
		goto out;
	rc = 0;
out:
	group_reset(&g, 0, 0);
	free(g.items);
	free(g.streams);
	free(g.first);
	free(cuts);
	namememo_release(&names);
	namememo_release(&apis);
	sqlite3_finalize(q);
	sqlite3_finalize(nameq);
	if (rc < 0)
		gpubreak_release(out);
	return rc;
}

void gpubreak_release(struct gpubreak *g)
{
	for (size_t i = 0; i < g->nranks; i++) {
		struct gpubreak_rank *r = &g->ranks[i];
		free(r->source);
		for (size_t k = 0; k < r->nkernels; k++)
			free(r->kernels[k].name);
		free(r->kernels);
		for (size_t s = 0; s < r->nstreams; s++) {
			free(r->streams[s].name);
			free(r->streams[s].gaps);
		}
		free(r->streams);
	}
	free(g->ranks);
	memset(g, 0, sizeof(*g));
}
