/*
 * Resource attribution, step 1 (attrib.c): what a run reads from trace.db.
 * The tracks and their hosts, the phases as parallel arrays in id order
 * (which are kept, and each one's nearest kept phase), the metrics worth
 * attributing or judging with their samples as periods, grouped in classes
 * (a host's CPU side, one GPU of a host), and a GPU's device work as its
 * measurement where no utilization series covers it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/attach.h"
#include "model/analysis/attrib.h"
#include "model/analysis/attrib_int.h"
#include "model/store/col.h"
#include "model/store/ptree.h"
#include "model/store/sample.h"
#include "model/store/store.h"
#include "model/util/nstime.h"
#include "model/util/spans.h"
#include "model/util/xalloc.h"
#include "model/view/model.h"

static const char *intern_host(struct run *r, const char *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < r->nhosts; i++)
		if (!strcmp(r->hosts[i], s))
			return r->hosts[i];
	r->hosts = xrealloc(r->hosts, (r->nhosts + 1) * sizeof(*r->hosts));
	return r->hosts[r->nhosts++] = xstrdup(s);
}

int attrib_load_tracks(struct run *r)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (sqlite3_prepare_v2(r->db,
			       "SELECT id, kind, host, " TRACK_DEVICE_SQL
			       ", coalesce(source_id, 0), spans, coalesce(phase_id, 0),"
			       " (SELECT p.start_ns FROM phases p WHERE p.id = tracks.phase_id),"
			       " (SELECT p.dur_ns FROM phases p WHERE p.id = tracks.phase_id)"
			       " FROM tracks ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK)
		return attrib_fail(r, "tracks");
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(r->tracks, r->ntracks + 1, alloc);
		const char *kind = col_text_or_null(q, 1);
		struct track *t = &r->tracks[r->ntracks++];
		t->id = col_int(q, 0);
		t->host = intern_host(r, col_text_or_null(q, 2));
		t->device = col_int32(q, 3);
		t->thread = kind && !strcmp(kind, "thread");
		t->nest = t->thread || (kind && !strcmp(kind, "host"));
		t->cls = -1;
		t->stream = kind && (!strcmp(kind, "stream") || !strcmp(kind, "annotation"));
		t->work = kind && !strcmp(kind, "stream");
		t->source = col_int(q, 4);
		t->spans = col_count(q, 5);
		t->node = col_int(q, 6);
		t->w0 = t->w1 = 0;
		t->nodeix = -1;
		if (t->spans > 0 && !col_null(q, 7)) {
			t->w0 = attrib_time_of(col_int(q, 7));
			t->w1 = attrib_time_of(ns_end(t->w0, col_int(q, 8)));
		}
		if (!t->nest && t->device < 0 && !(kind && !strcmp(kind, "executor")))
			t->device = -2; /* async or counter tracks: no work */
	}
	sqlite3_finalize(q);
	return 0;
}

size_t attrib_lower_bound(const void *base, size_t n, size_t stride, int64_t key)
{
	const char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int64_t k;
		memcpy(&k, b + mid * stride, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int32_t attrib_track_index(const struct run *r, int64_t id)
{
	size_t i = attrib_lower_bound(r->tracks, r->ntracks, sizeof(*r->tracks), id);
	return i < r->ntracks && r->tracks[i].id == id ? (int32_t)i : -1;
}

int32_t attrib_phase_index(const struct phases *p, int64_t id)
{
	if (p->n && id >= p->id[0] && (uint64_t)(id - p->id[0]) < p->n &&
	    p->id[id - p->id[0]] == id)
		return (int32_t)(id - p->id[0]);
	size_t i = attrib_lower_bound(p->id, p->n, sizeof(*p->id), id);
	return i < p->n && p->id[i] == id ? (int32_t)i : -1;
}

/* Kept: long enough to say something, or a level of the tree's top. */
static int kept(int kind, int64_t dur)
{
	if (dur <= 0)
		return 0;
	/* workflow, step, rank, process, thread, stream */
	return (kind >= PHASE_WORKFLOW && kind <= PHASE_STREAM) || dur >= ATTRIB_MIN_NS;
}

int attrib_load_phases(struct run *r)
{
	sqlite3_stmt *q;
	struct phases *p = &r->p;
	size_t alloc = 0;
	int64_t *parent_id = NULL;
	/* sized once: growing arrays of millions copies and faults them in */
	if (sqlite3_prepare_v2(r->db, "SELECT count(*) FROM phases", -1, &q, NULL) != SQLITE_OK)
		return attrib_fail(r, "phases");
	if (sqlite3_step(q) == SQLITE_ROW)
		alloc = (size_t)col_int(q, 0) + 1;
	sqlite3_finalize(q);
	p->id = xmalloc_big(alloc * sizeof(*p->id));
	p->start = xmalloc_big(alloc * sizeof(*p->start));
	p->end = xmalloc_big(alloc * sizeof(*p->end));
	p->track = xmalloc_big(alloc * sizeof(*p->track));
	p->src = xmalloc_big(alloc * sizeof(*p->src));
	p->kind = xmalloc(alloc);
	p->leaf = xmalloc(alloc);
	parent_id = xmalloc_big(alloc * sizeof(*parent_id));
	if (sqlite3_prepare_v2(
		r->db,
		"SELECT id, coalesce(parent_id, 0), kind, coalesce(track_id, 0), start_ns,"
		" dur_ns, child_count, coalesce(source_id, 0) FROM phases ORDER BY id",
		-1, &q, NULL) != SQLITE_OK) {
		free(parent_id);
		return attrib_fail(r, "phases");
	}
	while (sqlite3_step(q) == SQLITE_ROW && p->n < alloc) {
		size_t i = p->n++;
		p->id[i] = col_int(q, 0);
		parent_id[i] = col_int(q, 1);
		p->kind[i] = (uint8_t)col_int32(q, 2);
		int64_t tid = col_int(q, 3);
		p->track[i] = tid ? attrib_track_index(r, tid) : -1;
		p->start[i] = attrib_time_of(col_int(q, 4));
		p->end[i] = attrib_time_of(ns_end(p->start[i], col_int(q, 5)));
		p->leaf[i] = col_int(q, 6) == 0;
		int64_t src = col_int(q, 7);
		p->src[i] = src > 0 && src <= INT32_MAX ? (int32_t)src : 0;
	}
	int rc = sqlite3_errcode(r->db);
	sqlite3_finalize(q);
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		free(parent_id);
		return attrib_fail(r, "phases");
	}
	p->parent = xmalloc_big((p->n + 1) * sizeof(*p->parent));
	p->keep = xmalloc_big((p->n + 1) * sizeof(*p->keep));
	p->up = xmalloc_big((p->n + 1) * sizeof(*p->up));
	for (size_t i = 0; i < p->n; i++) {
		p->parent[i] = parent_id[i] ? attrib_phase_index(p, parent_id[i]) : -1;
		p->keep[i] =
		    kept(p->kind[i], ns_dur(p->start[i], p->end[i])) ? (int32_t)r->nkeep++ : -1;
		p->up[i] = -2; /* not yet known */
	}
	free(parent_id);
	int64_t loop = ptree_loop(p->parent, p->n);
	if (loop >= 0) {
		*r->err = ptree_loop_error(r->path, p->id[loop]);
		return PTREE_LOOP;
	}
	/* up[]: the nearest kept phase, resolved along the parent chain */
	for (size_t i = 0; i < p->n; i++) {
		int32_t x = (int32_t)i, hops = 0;
		while (x >= 0 && p->up[x] == -2 && p->keep[x] < 0 && hops++ < 1 << 20)
			x = p->parent[x];
		int32_t found = x < 0 ? -1 : p->keep[x] >= 0 ? x : p->up[x] == -2 ? -1 : p->up[x];
		for (int32_t y = (int32_t)i; y >= 0 && p->up[y] == -2;) {
			int32_t next = p->keep[y] >= 0 ? -1 : p->parent[y];
			p->up[y] = p->keep[y] >= 0 ? y : found;
			y = next;
		}
	}
	return 0;
}

/* The class of metrics a name measures, or -1 when not attributed. */
int attrib_res_of_metric(const char *resource, const char *name)
{
	size_t n = strlen(name);
#define ENDS(s) (n >= sizeof(s) - 1 && !strcmp(name + n - (sizeof(s) - 1), s))
	if (!strcmp(name, "cpu.util") && resource && !strcmp(resource, "cpu"))
		return ATTRIB_CPU;
	if (!strcmp(name, "utilization.gpu") || !strcmp(name, "DCGM_FI_DEV_GPU_UTIL"))
		return ATTRIB_GPU;
	if (!strcmp(name, "utilization.memory") || !strcmp(name, "DCGM_FI_DEV_MEM_COPY_UTIL"))
		return ATTRIB_GPU_MEM;
	if (resource && !strncmp(resource, "disk:", 5) && ENDS(".util-percent"))
		return ATTRIB_DISK;
	if (resource && !strncmp(resource, "net:", 4) && strcmp(resource, "net:lo") &&
	    ENDS(".ifutil-percent"))
		return ATTRIB_NET;
#undef ENDS
	return -1;
}

/* What else a host's bounds are judged on: its CPUs (cpuN.util) and its
 * iowait; -1 for anything else. */
static int judged_role(const char *resource, const char *name)
{
	if (!resource || strncmp(resource, "cpu", 3))
		return -1;
	if (!strcmp(resource, "cpu"))
		return !strcmp(name, "cpu.iowait") ? ROLE_IOWAIT : -1;
	const char *d = resource + 3;
	if (!*d || strspn(d, "0123456789") != strlen(d))
		return -1;
	size_t n = strlen(resource);
	return !strncmp(name, resource, n) && !strcmp(name + n, ".util") ? ROLE_CORE : -1;
}

int attrib_series_bound(const char *resource, const char *name)
{
	if (!name)
		return -1;
	int res = attrib_res_of_metric(resource, name);
	if (res >= 0)
		return res;
	switch (judged_role(resource, name)) {
	case ROLE_CORE:
		return ATTRIB_THREAD;
	case ROLE_IOWAIT:
		return ATTRIB_IOWAIT;
	default:
		return -1;
	}
}

static int class_of(struct run *r, const char *host, int device)
{
	for (size_t i = 0; i < r->nk; i++)
		if (r->k[i].host == host && r->k[i].device == device)
			return (int)i;
	r->k = xrealloc(r->k, (r->nk + 1) * sizeof(*r->k));
	r->k[r->nk] = (struct klass){.host = host, .device = device};
	return (int)r->nk++;
}

/* m's samples become periods: each sample's value holds until the next
 * sample or its hold, whichever comes first (model/store/sample.h), and a
 * period where none holds follows it (ok 0).  The period of the series is
 * read from its first samples, whatever window was loaded. */
static int hold_samples(struct run *r, struct metric *m)
{
	sqlite3_stmt *q;
	int64_t first[SAMPLE_PERIOD_N];
	size_t nf = 0;
	if (sqlite3_prepare_v2(
		r->db, "SELECT t_ns FROM samples WHERE metric_id = ?1 ORDER BY t_ns LIMIT ?2", -1,
		&q, NULL) != SQLITE_OK)
		return attrib_fail(r, "samples");
	sqlite3_bind_int64(q, 1, m->id);
	sqlite3_bind_int(q, 2, SAMPLE_PERIOD_N);
	while (nf < SAMPLE_PERIOD_N && sqlite3_step(q) == SQLITE_ROW)
		first[nf++] = col_int(q, 0);
	sqlite3_finalize(q);
	int64_t period = sample_period(first, nf), hold = sample_hold(period, m->value_kind);
	size_t n = 0;
	int64_t *t = xmalloc((2 * m->ns + 1) * sizeof(*t));
	double *v = xmalloc((2 * m->ns + 1) * sizeof(*v));
	uint8_t *ok = xmalloc(2 * m->ns + 1);
	for (size_t i = 0; i < m->ns; i++) {
		int64_t next = i + 1 < m->ns ? m->t[i + 1] : INT64_MAX;
		int64_t until = attrib_time_of(sample_until(m->t[i], next, period, hold));
		t[n] = m->t[i], v[n] = m->v[i], ok[n++] = 1;
		if (until < next)
			t[n] = until, v[n] = 0, ok[n++] = 0;
	}
	free(m->t), free(m->v);
	m->t = t, m->v = v, m->ok = ok, m->ns = n;
	return 0;
}

static int load_samples(struct run *r, struct metric *m)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (sqlite3_prepare_v2(
		r->db,
		"SELECT t_ns, value FROM samples WHERE metric_id = ?1 AND t_ns >="
		" coalesce((SELECT max(t_ns) FROM samples WHERE metric_id = ?1 AND t_ns <= ?2),"
		" (SELECT min(t_ns) FROM samples WHERE metric_id = ?1)) AND t_ns <="
		" coalesce((SELECT min(t_ns) FROM samples WHERE metric_id = ?1 AND t_ns >= ?3),"
		" (SELECT max(t_ns) FROM samples WHERE metric_id = ?1)) ORDER BY t_ns",
		-1, &q, NULL) != SQLITE_OK)
		return attrib_fail(r, "samples");
	sqlite3_bind_int64(q, 1, m->id);
	sqlite3_bind_int64(q, 2, r->t0);
	sqlite3_bind_int64(q, 3, r->t1);
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (m->ns == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			m->t = xrealloc(m->t, alloc * sizeof(*m->t));
			m->v = xrealloc(m->v, alloc * sizeof(*m->v));
		}
		m->t[m->ns] = attrib_time_of(col_int(q, 0));
		double v = col_real(q, 1);
		m->v[m->ns++] = isfinite(v) && v > 0 ? v : 0;
	}
	sqlite3_finalize(q);
	return hold_samples(r, m);
}

/* The metrics worth attributing, each in the class of its host (device):
 * only classes that have work get any. */
int attrib_load_metrics(struct run *r)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	for (size_t i = 0; i < r->ntracks; i++) {
		struct track *t = &r->tracks[i];
		if (t->device >= -1 && (!r->track_ok || r->track_ok[i]))
			t->cls = class_of(r, t->host, t->device);
	}
	size_t nk_work = r->nk;
	if (sqlite3_prepare_v2(r->db,
			       "SELECT id, host, resource, name, capacity, value_kind FROM metrics"
			       " WHERE capacity > 0 AND value_kind != 'counter' ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK)
		return attrib_fail(r, "metrics");
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *resource = col_text_or_null(q, 2);
		const char *name = col_text_or_null(q, 3);
		int res = attrib_res_of_metric(resource, name ? name : ""), role = ROLE_ATTRIB;
		if (res < 0 && r->judge && (role = judged_role(resource, name ? name : "")) >= 0)
			res = ATTRIB_CPU;
		if (res < 0)
			continue;
		struct mseries s = {.resource = resource};
		int device = attrib_res_device(res) ? mseries_device(&s) : -1;
		if (attrib_res_device(res) && device < 0)
			continue;
		const char *host = intern_host(r, col_text_or_null(q, 1));
		int cls = -1;
		for (size_t k = 0; k < nk_work; k++)
			if (r->k[k].host == host && r->k[k].device == device)
				cls = (int)k;
		if (cls < 0)
			continue;
		XGROW(r->m, r->nm + 1, alloc);
		r->m[r->nm++] = (struct metric){.id = col_int(q, 0),
						.res = res,
						.cls = cls,
						.role = role,
						.cap = col_real(q, 4),
						.value_kind = col_strdup_or_null(q, 5)};
	}
	sqlite3_finalize(q);
	for (size_t i = 0; i < r->nm; i++) {
		struct klass *k = &r->k[r->m[i].cls];
		if (r->m[i].role == ROLE_ATTRIB) {
			k->metrics = xrealloc(k->metrics, (k->nmetrics + 1) * sizeof(*k->metrics));
			k->metrics[k->nmetrics++] = (int)i;
		}
		k->judged = xrealloc(k->judged, (k->njudged + 1) * sizeof(*k->judged));
		k->judged[k->njudged++] = (int)i;
		k->ncpu += r->m[i].role == ROLE_CORE;
		if (load_samples(r, &r->m[i]) < 0)
			return -1;
	}
	return 0;
}

/* ---- a GPU's device work as its measurement ----
 *
 * nvidia-smi's utilization.gpu is the share of its sample period in which
 * some kernel ran; a trace's device work measures the same to the
 * nanosecond.  So within the window of a trace that gives a GPU's device
 * work (from the first phase of its tracks to the last: its coverage), the
 * GPU's utilization is its capacity while some device work runs (kernels,
 * copies, sets: device copies are device work) and 0 otherwise; its
 * utilization series take those values there, and hold their own samples
 * only outside; a GPU with no such series gets one of those values alone
 * (DEVWORK_ID). */

/* The coverage of each GPU class: the windows of the sources that give
 * device work on it. */
void attrib_devwork_cover(struct run *r)
{
	for (size_t c = 0; c < r->nk; c++) {
		struct klass *k = &r->k[c];
		size_t alloc = 0;
		for (size_t i = 0; k->device >= 0 && i < r->ntracks; i++) {
			const struct track *t = &r->tracks[i];
			if (t->cls != (int)c || !t->work || t->w1 <= t->w0)
				continue;
			struct span w = {INF, INT64_MIN};
			for (size_t j = 0; j < r->ntracks; j++) {
				const struct track *u = &r->tracks[j];
				if (u->source != t->source || u->w1 <= u->w0)
					continue;
				w.start = u->w0 < w.start ? u->w0 : w.start;
				w.end = u->w1 > w.end ? u->w1 : w.end;
			}
			XGROW(k->cov, k->ncov + 1, alloc);
			k->cov[k->ncov++] = w;
		}
		k->ncov = spans_normalize(k->cov, k->ncov);
	}
}

void attrib_devwork_periods(const struct span *cov, size_t ncov, const struct span *w, size_t n,
			    struct metric *out)
{
	size_t alloc = 2 * (n + ncov) + 1, ns = 0, j = 0;
	out->t = xmalloc(alloc * sizeof(*out->t));
	out->v = xmalloc(alloc * sizeof(*out->v));
	out->ok = xmalloc(alloc);
#define PERIOD(at, val, o) (out->t[ns] = (at), out->v[ns] = (val), out->ok[ns++] = (uint8_t)(o))
	for (size_t c = 0; c < ncov; c++) {
		int64_t x = cov[c].start, b = cov[c].end;
		for (; j < n && w[j].start < b; j++) {
			int64_t s = w[j].start > x ? w[j].start : x,
				e = w[j].end < b ? w[j].end : b;
			if (e <= x)
				continue;
			if (s > x)
				PERIOD(x, 0, OK_HOLDS | OK_TRACED);
			PERIOD(s, 1, OK_HOLDS | OK_TRACED);
			x = e;
			if (w[j].end > b)
				break; /* it goes on into the next coverage */
		}
		if (x < b)
			PERIOD(x, 0, OK_HOLDS | OK_TRACED);
		PERIOD(b, 0, 0);
	}
#undef PERIOD
	out->ns = ns;
}

/* m's periods overlaid with d's where d's are traced, d's values x m's
 * capacity: one boundary per time either has one. */
static void devwork_overlay(struct metric *m, const struct metric *d)
{
	size_t alloc = m->ns + d->ns + 1, n = 0, i = 0, j = 0;
	int64_t *t = xmalloc(alloc * sizeof(*t));
	double *v = xmalloc(alloc * sizeof(*v));
	uint8_t *ok = xmalloc(alloc);
	while (i < m->ns || j < d->ns) {
		int64_t x = j == d->ns || (i < m->ns && m->t[i] < d->t[j]) ? m->t[i] : d->t[j];
		while (i < m->ns && m->t[i] <= x)
			i++;
		while (j < d->ns && d->t[j] <= x)
			j++;
		/* m's period holding x is i - 1, d's j - 1 (none when 0) */
		t[n] = x, v[n] = 0, ok[n] = 0;
		if (j && d->ok[j - 1] & OK_TRACED)
			v[n] = d->v[j - 1] * m->cap, ok[n] = d->ok[j - 1];
		else if (i)
			v[n] = m->v[i - 1], ok[n] = m->ok[i - 1];
		n++;
	}
	free(m->t), free(m->v), free(m->ok);
	m->t = t, m->v = v, m->ok = ok, m->ns = n;
}

/* Each covered GPU class's device work, as its utilization (above); the
 * phases are loaded. */
void attrib_devwork_measure(struct run *r)
{
	const struct phases *p = &r->p;
	size_t *count = xcalloc(r->nk + 1, sizeof(*count)), *at = xcalloc(r->nk + 1, sizeof(*at));
	int32_t *cls = xmalloc((p->n + 1) * sizeof(*cls));
	size_t total = 0;
	for (size_t i = 0; i < p->n; i++) {
		int32_t t = p->track[i];
		cls[i] = -1;
		if (t < 0 || !r->tracks[t].work || r->tracks[t].cls < 0 ||
		    !r->k[r->tracks[t].cls].ncov || p->end[i] <= p->start[i] ||
		    attrib_type_of(p->kind[i], p->leaf[i], &r->tracks[t]) < 0)
			continue;
		cls[i] = r->tracks[t].cls;
		count[cls[i]]++;
		total++;
	}
	struct span *w = xmalloc((total + 1) * sizeof(*w));
	for (size_t c = 0, o = 0; c < r->nk; c++) {
		at[c] = o;
		o += count[c];
	}
	for (size_t i = 0; i < p->n; i++)
		if (cls[i] >= 0)
			w[at[cls[i]]++] = (struct span){p->start[i], p->end[i]};
	size_t nk = r->nk, m_alloc = r->nm;
	for (size_t c = 0, o = 0; c < nk; c++) {
		struct klass *k = &r->k[c];
		size_t n = count[c];
		o += n;
		if (!k->ncov)
			continue;
		n = spans_normalize(w + o - count[c], n);
		struct metric d = {.id = DEVWORK_ID, .res = ATTRIB_GPU, .cls = (int)c, .cap = 100};
		attrib_devwork_periods(k->cov, k->ncov, w + o - count[c], n, &d);
		int merged = 0;
		for (size_t i = 0; i < k->nmetrics; i++)
			if (r->m[k->metrics[i]].res == ATTRIB_GPU) {
				devwork_overlay(&r->m[k->metrics[i]], &d);
				merged = 1;
			}
		if (merged) {
			free(d.t), free(d.v), free(d.ok);
			continue;
		}
		for (size_t j = 0; j < d.ns; j++)
			d.v[j] *= d.cap;
		XGROW(r->m, r->nm + 1, m_alloc);
		r->m[r->nm] = d;
		k->metrics = xrealloc(k->metrics, (k->nmetrics + 1) * sizeof(*k->metrics));
		k->metrics[k->nmetrics++] = (int)r->nm;
		k->judged = xrealloc(k->judged, (k->njudged + 1) * sizeof(*k->judged));
		k->judged[k->njudged++] = (int)r->nm;
		r->nm++;
	}
	bottleneck_own(r, cls);
	free(w), free(cls), free(count), free(at);
}
