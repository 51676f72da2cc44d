/*
 * Bottlenecks of an attribution run (attrib.h: Grade10's rule, on what was
 * measured), and how a row's bottlenecks read.  Per class, its judged metrics' periods
 * are merged into segments with the bounds saturated then, with prefix sums
 * of each bound's time; a kept phase's window is judged by two binary
 * searches per bound, or by a merge of the segments where its work ran in
 * several classes (bottleneck_judge).  A GPU that several sources' device
 * work ran on (ranks sharing it: the same host and device id) is judged,
 * for a phase of one of them, on that source's own device work alone
 * (bottleneck_own): the others' kernels keep the GPU busy, not its rank.
 * A row's verdicts then read as GradeML's estimate without each bound
 * (attrib_bottlenecks) and as text.  The run's state is
 * model/analysis/attrib.c's (attrib_int.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/attrib.h"
#include "model/analysis/attrib_int.h"
#include "model/util/nstime.h"
#include "model/util/sbuf.h"
#include "model/util/spans.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

static int by_time(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The bounds of one segment of class k that starts at t; at[] holds each
 * judged metric's period, moved on to the one holding t. */
static unsigned judge_bits(struct run *r, struct klass *k, size_t *at, int64_t t)
{
	unsigned bits = 0;
	double core = 0, disk = 0, iowait = 0;
	for (size_t i = 0; i < k->njudged; i++) {
		const struct metric *m = &r->m[k->judged[i]];
		size_t j = at[i];
		while (j + 1 < m->ns && m->t[j + 1] <= t)
			j++;
		at[i] = j;
		if (!(j + 1 < m->ns && m->t[j] <= t && m->ok[j]))
			continue;
		double f = m->v[j] / m->cap;
		bits |= 1u << JUDGE_DATA;
		if (m->ok[j] & OK_TRACED)
			bits |=
			    1u << JUDGE_TRACED | (f >= ATTRIB_SATURATED ? 1u << JUDGE_DEVBUSY : 0);
		if (m->role == ROLE_CORE)
			core = fmax(core, f);
		else if (m->role == ROLE_IOWAIT)
			iowait = fmax(iowait, f);
		else if (f >= ATTRIB_SATURATED)
			bits |= 1u << m->res;
		if (m->role == ROLE_ATTRIB && m->res == ATTRIB_DISK)
			disk = fmax(disk, f);
	}
	if (!(bits & 1u << ATTRIB_CPU) && core >= ATTRIB_SATURATED)
		bits |= 1u << ATTRIB_THREAD;
	if (disk >= ATTRIB_IO_BUSY && iowait * (k->ncpu ? k->ncpu : 1) >= ATTRIB_IO_WAIT)
		bits |= 1u << ATTRIB_DISK;
	return bits;
}

void bottleneck_build(struct run *r, struct klass *k)
{
	struct judge *jd = &k->jd;
	size_t total = 0, n = 0;
	for (size_t i = 0; i < k->njudged; i++)
		total += r->m[k->judged[i]].ns;
	jd->t = xmalloc((total + 1) * sizeof(*jd->t));
	for (size_t i = 0; i < k->njudged; i++) {
		const struct metric *m = &r->m[k->judged[i]];
		if (m->ns)
			memcpy(jd->t + n, m->t, m->ns * sizeof(*m->t));
		n += m->ns;
	}
	qsort(jd->t, n, sizeof(*jd->t), by_time);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || jd->t[i] != jd->t[u - 1])
			jd->t[u++] = jd->t[i];
	jd->n = u;
	jd->bits = xcalloc(u + 1, sizeof(*jd->bits));
	size_t *at = xcalloc(k->njudged + 1, sizeof(*at));
	for (size_t i = 0; i + 1 < u; i++)
		jd->bits[i] = (uint16_t)judge_bits(r, k, at, jd->t[i]);
	free(at);
	for (int b = 0; b < JUDGE_NBITS; b++) {
		int64_t *pre = jd->pre[b] = xmalloc((u + 1) * sizeof(*pre));
		pre[0] = 0;
		for (size_t i = 0; i < u; i++)
			pre[i + 1] = ns_sum(pre[i], i + 1 < u && jd->bits[i] & 1u << b
							? ns_dur(jd->t[i], jd->t[i + 1])
							: 0);
	}
}

void bottleneck_release(struct judge *jd)
{
	free(jd->t), free(jd->bits);
	for (int b = 0; b < JUDGE_NBITS; b++)
		free(jd->pre[b]);
	for (int i = 0; i < jd->nsw; i++)
		free(jd->sw[i].pre);
}

/* ---- a shared GPU: each source's own device work ---- */

/* Class k's own entry for source, or NULL. */
static struct own *own_of(const struct klass *k, int64_t source)
{
	for (size_t o = 0; o < k->nown; o++)
		if (k->own[o].source == source)
			return &k->own[o];
	return NULL;
}

/* Whether own o's window meets another's of class k. */
static int own_concurrent(const struct klass *k, size_t o)
{
	for (size_t x = 0; x < k->nown; x++)
		if (x != o && k->own[x].win.start < k->own[o].win.end &&
		    k->own[o].win.start < k->own[x].win.end)
			return 1;
	return 0;
}

/* Class c's own[]: each source's window (the span of its phases) and its
 * device work there, as periods; those whose windows meet no other's are
 * left out (the sources took turns), and all when fewer than two remain. */
static void own_measure(struct run *r, const int32_t *dev, size_t c)
{
	const struct phases *p = &r->p;
	struct klass *k = &r->k[c];
	struct span **w = xcalloc(k->nown, sizeof(*w));
	size_t *n = xcalloc(k->nown, sizeof(*n)), *alloc = xcalloc(k->nown, sizeof(*alloc));
	for (size_t o = 0; o < k->nown; o++)
		k->own[o].win = (struct span){INT64_MAX, INT64_MIN};
	for (size_t i = 0; i < p->n; i++) {
		struct own *x = p->src[i] ? own_of(k, p->src[i]) : NULL;
		if (!x || p->end[i] <= p->start[i])
			continue;
		size_t o = (size_t)(x - k->own);
		x->win.start = p->start[i] < x->win.start ? p->start[i] : x->win.start;
		x->win.end = p->end[i] > x->win.end ? p->end[i] : x->win.end;
		if (dev[i] != (int32_t)c)
			continue;
		XGROW(w[o], n[o] + 1, alloc[o]);
		w[o][n[o]++] = (struct span){p->start[i], p->end[i]};
	}
	uint8_t *meets = xmalloc(k->nown);
	for (size_t o = 0; o < k->nown; o++)
		meets[o] = (uint8_t)own_concurrent(k, o);
	size_t kept = 0;
	for (size_t o = 0; o < k->nown; o++) {
		if (meets[o]) {
			w[kept] = w[o], n[kept] = n[o];
			k->own[kept++] = k->own[o];
		} else {
			free(w[o]);
		}
	}
	free(meets);
	k->nown = kept > 1 ? kept : 0;
	for (size_t o = 0; o < kept; o++) {
		size_t m = spans_normalize(w[o], n[o]);
		if (k->nown)
			attrib_devwork_periods(&k->own[o].win, 1, w[o], m, &k->own[o].m);
		free(w[o]);
	}
	free(w), free(n), free(alloc);
}

void bottleneck_own(struct run *r, const int32_t *dev)
{
	const struct phases *p = &r->p;
	if (!p->src)
		return;
	size_t *alloc = xcalloc(r->nk + 1, sizeof(*alloc));
	for (size_t i = 0; i < p->n; i++) {
		if (dev[i] < 0 || !p->src[i])
			continue;
		struct klass *k = &r->k[dev[i]];
		if (own_of(k, p->src[i]))
			continue;
		XGROW(k->own, k->nown + 1, alloc[dev[i]]);
		k->own[k->nown++] = (struct own){.source = p->src[i]};
	}
	free(alloc);
	for (size_t c = 0; c < r->nk; c++) {
		if (r->k[c].nown > 1)
			own_measure(r, dev, c);
		if (r->k[c].nown)
			continue;
		free(r->k[c].own);
		r->k[c].own = NULL;
	}
}

/* The sources of class k's own[] whose windows meet [a, z). */
static int own_sharing(const struct klass *k, int64_t a, int64_t z)
{
	int n = 0;
	for (size_t o = 0; o < k->nown; o++)
		n += k->own[o].win.start < z && a < k->own[o].win.end;
	return n;
}

void bottleneck_own_release(struct klass *k)
{
	for (size_t o = 0; o < k->nown; o++)
		free(k->own[o].m.t), free(k->own[o].m.v), free(k->own[o].m.ok);
	free(k->own);
}

/* Software-bound for the judged bounds set: data, none of set saturated. */
static int software(unsigned bits, unsigned set)
{
	return (bits & 1u << JUDGE_DATA) && !(bits & set);
}

/* Whether segment i counts: bit set in it, or (bit < 0) software-bound
 * for the judged bounds set. */
static int counts(const struct judge *jd, size_t i, int bit, unsigned set)
{
	return bit >= 0 ? !!(jd->bits[i] & 1u << bit) : software(jd->bits[i], set);
}

/* The time before x of the segments that count, pre their prefix sums
 * (times are held below INT64_MAX: x + 1 fits). */
static int64_t judge_upto(const struct judge *jd, const int64_t *pre, int bit, unsigned set,
			  int64_t x)
{
	size_t i =
	    attrib_lower_bound(jd->t, jd->n, sizeof(*jd->t), x + 1); /* t[i - 1] <= x < t[i] */
	if (i == 0)
		return 0;
	int64_t in = i < jd->n && counts(jd, i - 1, bit, set) ? ns_dur(jd->t[i - 1], x) : 0;
	return ns_sum(pre[i - 1], in);
}

/* The time in [a, z) of the segments that count. */
static int64_t judge_time(const struct judge *jd, const int64_t *pre, int bit, unsigned set,
			  int64_t a, int64_t z)
{
	int64_t t = judge_upto(jd, pre, bit, set, z) - judge_upto(jd, pre, bit, set, a);
	return t > 0 ? t : 0;
}

/* The prefix of software-bound time for set over class k's segments. */
static const int64_t *judge_sw(struct judge *jd, unsigned set)
{
	for (int i = 0; i < jd->nsw; i++)
		if (jd->sw[i].set == set)
			return jd->sw[i].pre;
	if (jd->nsw == (int)(sizeof(jd->sw) / sizeof(jd->sw[0])))
		return NULL;
	int64_t *pre = xmalloc((jd->n + 1) * sizeof(*pre));
	pre[0] = 0;
	for (size_t i = 0; i < jd->n; i++)
		pre[i + 1] = ns_sum(pre[i], i + 1 < jd->n && software(jd->bits[i], set)
						? ns_dur(jd->t[i], jd->t[i + 1])
						: 0);
	jd->sw[jd->nsw].set = set;
	jd->sw[jd->nsw++].pre = pre;
	return pre;
}

/* Class bits b where own's period j holds x: the GPU judged on own's
 * device work while own is traced; *next the end of that period. */
static unsigned own_bits(const struct metric *own, size_t j, int64_t x, unsigned b, int64_t *next)
{
	int64_t e = own->t[j] > x ? own->t[j] : j + 1 < own->ns ? own->t[j + 1] : *next;
	*next = e < *next ? e : *next;
	if (!(own->t[j] <= x && j + 1 < own->ns && own->ok[j] & OK_TRACED))
		return b;
	b &= ~(1u << ATTRIB_GPU | 1u << JUDGE_DEVBUSY);
	b |= 1u << JUDGE_DATA | 1u << JUDGE_TRACED;
	return own->v[j] > 0 ? b | 1u << ATTRIB_GPU | 1u << JUDGE_DEVBUSY : b;
}

/* Over [a, z), the classes cls[0..nc) merged: a bound counts while any of
 * them has it saturated; a shared GPU's judged on source src's own device
 * work (src 0: on all of it). */
static void judge_walk(struct run *r, const int32_t *cls, size_t nc, int64_t src, unsigned set,
		       int64_t a, int64_t z, struct bottleneck_verdict *v)
{
	size_t *at = xcalloc(2 * nc + 1, sizeof(*at));
	const struct metric **own = xcalloc(nc + 1, sizeof(*own));
	for (size_t c = 0; c < nc; c++) {
		const struct judge *jd = &r->k[cls[c]].jd;
		size_t i = attrib_lower_bound(jd->t, jd->n, sizeof(*jd->t), a + 1);
		at[c] = i ? i - 1 : 0;
		const struct own *o = src ? own_of(&r->k[cls[c]], src) : NULL;
		if (o && o->m.ns) {
			own[c] = &o->m;
			i = attrib_lower_bound(o->m.t, o->m.ns, sizeof(*o->m.t), a + 1);
			at[nc + c] = i ? i - 1 : 0;
		}
	}
	for (int64_t x = a; x < z;) {
		int64_t next = z;
		unsigned bits = 0;
		for (size_t c = 0; c < nc; c++) {
			const struct judge *jd = &r->k[cls[c]].jd;
			size_t i = at[c];
			while (i + 1 < jd->n && jd->t[i + 1] <= x)
				i++;
			at[c] = i;
			unsigned b = i < jd->n && jd->t[i] <= x && i + 1 < jd->n ? jd->bits[i] : 0;
			int64_t e = i < jd->n && jd->t[i] > x ? jd->t[i]
				    : i + 1 < jd->n	      ? jd->t[i + 1]
							      : z;
			next = e < next ? e : next;
			if (own[c]) {
				size_t j = at[nc + c];
				while (j + 1 < own[c]->ns && own[c]->t[j + 1] <= x)
					j++;
				at[nc + c] = j;
				b = own_bits(own[c], j, x, b, &next);
			}
			bits |= b;
		}
		int64_t len = ns_dur(x, next);
		for (int b = 0; b < ATTRIB_NBOUND; b++)
			if (set & bits & 1u << b)
				v->bneck[b] = ns_sum(v->bneck[b], len);
		if (bits & 1u << JUDGE_DATA)
			v->data = ns_sum(v->data, len);
		if (set & 1u << ATTRIB_GPU && bits & 1u << JUDGE_TRACED)
			v->traced = ns_sum(v->traced, len);
		if (set & 1u << ATTRIB_GPU && bits & 1u << JUDGE_DEVBUSY)
			v->devbusy = ns_sum(v->devbusy, len);
		if (software(bits, set))
			v->free_ = ns_sum(v->free_, len);
		x = next;
	}
	free(at);
	free(own);
}

void bottleneck_judge(struct run *r, size_t i, const struct acc *a, struct bottleneck_verdict *v)
{
	const struct phases *p = &r->p;
	unsigned set = a->mask & ((1u << ATTRIB_NRES) - 1);
	if (set & 1u << ATTRIB_CPU)
		set |= 1u << ATTRIB_THREAD;
	memset(v, 0, sizeof(*v));
	int64_t s0 = p->start[i], s1 = p->end[i];
	if (a->cls < 0 || s1 <= s0)
		return;
	int32_t keep = p->keep[i];
	size_t m = 0, hi = r->nmulti;
	while (m < hi) {
		size_t mid = (m + hi) / 2;
		if (r->multi[mid].keep < keep)
			m = mid + 1;
		else
			hi = mid;
	}
	size_t e = m;
	while (e < r->nmulti && r->multi[e].keep == keep)
		e++;
	int32_t *cls = xmalloc((e - m + 1) * sizeof(*cls));
	size_t nc = e > m ? e - m : 1;
	for (size_t c = 0; c < nc; c++)
		cls[c] = e > m ? r->multi[m + c].cls : a->cls;
	int64_t src = p->src ? p->src[i] : 0;
	for (size_t c = 0; c < nc; c++) {
		const struct klass *k = &r->k[cls[c]];
		int shared = own_sharing(k, s0, s1);
		v->shared = shared > 1 && shared > v->shared ? shared : v->shared;
		v->own |= shared > 1 && src && own_of(k, src);
	}
	struct judge *jd = &r->k[a->cls].jd;
	const int64_t *sw = nc > 1 || v->own ? NULL : judge_sw(jd, set);
	if (!sw)
		judge_walk(r, cls, nc, v->own ? src : 0, set, s0, s1, v);
	free(cls);
	if (!sw)
		return;
	for (int b = 0; b < ATTRIB_NBOUND; b++)
		if (set & 1u << b)
			v->bneck[b] = judge_time(jd, jd->pre[b], b, set, s0, s1);
	v->data = judge_time(jd, jd->pre[JUDGE_DATA], JUDGE_DATA, set, s0, s1);
	v->free_ = judge_time(jd, sw, -1, set, s0, s1);
	if (set & 1u << ATTRIB_GPU) {
		v->traced = judge_time(jd, jd->pre[JUDGE_TRACED], JUDGE_TRACED, set, s0, s1);
		v->devbusy = judge_time(jd, jd->pre[JUDGE_DEVBUSY], JUDGE_DEVBUSY, set, s0, s1);
	}
}

/* ---- bottlenecks ---- */

/* The share of r's window bound by res (a bound, or ATTRIB_SOFTWARE). */
static double frac(const struct attrib_row *r, int res)
{
	if (r->dur_ns <= 0)
		return 0;
	int64_t t = res == ATTRIB_SOFTWARE ? r->free_ns : r->bneck_ns[res];
	return fmin((double)t / (double)r->dur_ns, 1);
}

double attrib_nodata(const struct attrib_row *r)
{
	return r->dur_ns > 0 ? fmax(1 - (double)r->data_ns / (double)r->dur_ns, 0) : 0;
}

static int by_saving(const void *a, const void *b)
{
	const struct attrib_bneck *x = a, *y = b;
	if (x->without_ns != y->without_ns)
		return x->without_ns < y->without_ns ? -1 : 1;
	return x->res - y->res;
}

size_t attrib_bottlenecks(const struct attrib_row *r, struct attrib_bneck *out)
{
	double g[ATTRIB_NBNECK];
	for (int x = 0; x < ATTRIB_NBNECK; x++)
		g[x] = frac(r, x);
	size_t n = 0;
	for (int x = 0; x < ATTRIB_NBNECK; x++) {
		if (!(g[x] > 0))
			continue;
		double others = 0;
		for (int y = 0; y < ATTRIB_NBOUND; y++)
			if (y != x)
				others = fmax(others, g[y]);
		/* GradeML's gain, over the phase's window; what its code would
		 * save is known only where its work was traced (the time its
		 * work covers, or the window of the trace of its device work:
		 * while none ran, the trace shows the host's) */
		double gain = fmax(fmin(g[x], 1 - others), 0);
		int64_t work = r->cover_ns[0] > r->cover_ns[1] ? r->cover_ns[0] : r->cover_ns[1];
		work = r->traced_ns > work ? r->traced_ns : work;
		int64_t span = x == ATTRIB_SOFTWARE && work < r->dur_ns ? work : r->dur_ns;
		out[n++] = (struct attrib_bneck){x, g[x], r->dur_ns - llround(gain * (double)span)};
	}
	qsort(out, n, sizeof(*out), by_saving);
	return n;
}

const char *attrib_bound_short(int res)
{
	static const char *const shorts[ATTRIB_NBNECK] = {"cpu", "gpu",	 "gmem", "disk",
							  "net", "1cpu", "sw"};
	return res >= 0 && res < ATTRIB_NBNECK ? shorts[res] : "?";
}

void attrib_bound_text(const struct attrib_row *r, const char *why_sw, struct sbuf *out)
{
	struct attrib_bneck b[ATTRIB_NBNECK];
	size_t n = attrib_bottlenecks(r, b);
	double nodata = attrib_nodata(r);
	char d[32], w[32];
	int shown_nodata = nodata >= 0.005;
	if (!n && !shown_nodata) {
		sbuf_adds(out, "-");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		sbuf_addf(out, "%s%s %.0f%%", i ? ", " : "", attrib_res_name(b[i].res),
			  100 * b[i].frac);
		if (why_sw && b[i].res == ATTRIB_SOFTWARE)
			sbuf_addf(out, " (%s)", why_sw);
	}
	if (shown_nodata)
		sbuf_addf(out, "%sno data %.0f%%", n ? ", " : "", 100 * nodata);
	sbuf_addf(out, " of its %s", text_duration(d, sizeof(d), r->dur_ns));
	if (n && b[0].res != ATTRIB_SOFTWARE && b[0].without_ns < r->dur_ns)
		sbuf_addf(out, "; %s without %s", text_duration(w, sizeof(w), b[0].without_ns),
			  attrib_res_name(b[0].res));
	attrib_shared_text(r, out);
}

void attrib_shared_text(const struct attrib_row *r, struct sbuf *out)
{
	if (r->shared_gpu > 1)
		sbuf_addf(out, "; shared GPU (%d ranks on it)%s", r->shared_gpu,
			  r->own_gpu ? ", judged on its own device work" : "");
}

void attrib_work_text(const struct attrib_row *r, struct sbuf *out)
{
	char d[32];
	int k = 0;
	for (int c = 0; c < 2; c++)
		if (r->busy_ns[c] > 0 && r->busy_ns[c] < r->dur_ns)
			sbuf_addf(out, "%s%s work %s", k++ ? ", " : " (its ", c ? "device" : "host",
				  text_duration(d, sizeof(d), r->busy_ns[c]));
	if (k)
		sbuf_addc(out, ')');
}
