/*
 * The cause where the verdict is (model/analysis/cause.h): each rank of
 * the GPU breakdowns with an idle-gpu issue, the chain from its GPU's node
 * up to the root, and the phases' causes read off those chains.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/cause.h"
#include "model/analysis/devcall.h"
#include "model/store/col.h"
#include "model/store/ptree.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

/* One rank that counts: its chain (its GPU's node first) and a copy of its
 * figures (the breakdowns may be released before the map). */
struct cause_gpu {
	int64_t *chain;
	size_t n;
	struct gpubreak_causes cause;
	int64_t idle_ns, window_ns;
	int api;
};

struct cause_map {
	struct cause_gpu *v;
	size_t n;
};

int64_t cause_gpu_node(sqlite3 *db, const struct gpubreak_rank *r)
{
	const struct gpubreak_stream *x = NULL;
	for (size_t k = 0; k < r->nstreams; k++)
		if (!x || r->streams[k].time.window_ns - r->streams[k].time.idle_ns >
			      x->time.window_ns - x->time.idle_ns)
			x = &r->streams[k];
	sqlite3_stmt *q;
	int64_t gpu = 0;
	if (!x || sqlite3_prepare_v2(db,
				     "SELECT coalesce(nullif(p.parent_id, 0), p.id) FROM tracks t"
				     " JOIN phases p ON p.id = t.phase_id WHERE t.id = ?1",
				     -1, &q, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(q, 1, x->track_id);
	if (sqlite3_step(q) == SQLITE_ROW)
		gpu = col_int(q, 0);
	sqlite3_finalize(q);
	return gpu;
}

int cause_is_issue(const struct gpubreak_rank *r, int c)
{
	int64_t ns = r->cause.ns[c];
	return r->time.window_ns > 0 && r->time.idle_ns > 0 && ns > 0 &&
	       (double)ns >= CAUSE_ISSUE_SHARE * (double)r->time.window_ns;
}

/* 1 when some cause of r is an idle-gpu issue. */
static int any_issue(const struct gpubreak_rank *r)
{
	for (int c = 0; c < IDLE_NCAUSES; c++)
		if (cause_is_issue(r, c))
			return 1;
	return 0;
}

int cause_map_build(struct store *st, const struct gpubreak *g, struct cause_map **out, char **err)
{
	struct cause_map *m = xcalloc(1, sizeof(*m));
	sqlite3 *db = store_db(st);
	int rc = 0;
	m->v = xcalloc(g->nranks ? g->nranks : 1, sizeof(*m->v));
	for (size_t i = 0; i < g->nranks; i++) {
		const struct gpubreak_rank *r = &g->ranks[i];
		int64_t gpu = any_issue(r) ? cause_gpu_node(db, r) : 0;
		if (gpu <= 0)
			continue;
		struct cause_gpu *x = &m->v[m->n];
		rc = ptree_up(db, store_path(st), gpu, &x->chain, &x->n, err);
		if (rc < 0)
			goto out;
		x->cause = r->cause;
		x->idle_ns = r->time.idle_ns;
		x->window_ns = r->time.window_ns;
		x->api = r->api;
		m->n++;
	}
out:
	if (rc < 0) {
		cause_map_free(m);
		m = NULL;
	}
	*out = m;
	return rc;
}

int cause_of(const struct cause_map *m, const struct attrib_row *r, struct cause *out)
{
	struct attrib_bneck b[ATTRIB_NBNECK];
	int64_t ns[IDLE_NCAUSES] = {0}, gaps[IDLE_NCAUSES] = {0};
	if (!m || !r || !attrib_bottlenecks(r, b) || b[0].res != ATTRIB_SOFTWARE)
		return 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < m->n; i++) {
		const struct cause_gpu *x = &m->v[i];
		size_t k = 0;
		while (k < x->n && x->chain[k] != r->phase_id)
			k++;
		if (k == x->n)
			continue;
		for (int c = 0; c < IDLE_NCAUSES; c++) {
			ns[c] += x->cause.ns[c];
			gaps[c] += x->cause.gaps[c];
		}
		out->idle_ns += x->idle_ns;
		out->window_ns += x->window_ns;
		if (x->api > out->api)
			out->api = x->api;
		out->gpus++;
	}
	if (!out->gpus || out->window_ns <= 0)
		return 0;
	for (int c = 1; c < IDLE_NCAUSES; c++)
		if (ns[c] > ns[out->cause])
			out->cause = c;
	out->ns = ns[out->cause];
	out->gaps = gaps[out->cause];
	out->share = (double)out->ns / (double)out->window_ns;
	return 1;
}

void cause_map_free(struct cause_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].chain);
	free(m->v);
	free(m);
}

const char *cause_short(int cause)
{
	return cause == IDLE_COMM ? "comm" : idle_cause_name(cause);
}

void cause_column(const struct cause *c, int w, char *buf, size_t n)
{
	const char *name = cause_short(c->cause);
	double pct = 100 * c->share;
	if (snprintf(buf, n, "idle:%s %.0f%%", name, pct) <= w)
		return;
	if (snprintf(buf, n, "%s %.0f%%", name, pct) <= w)
		return;
	snprintf(buf, n, "%s", name);
}

void cause_text(const struct cause *c, struct sbuf *out)
{
	char win[32], d[32];
	const char *dev = devcall_api_device(c->api);
	text_duration(win, sizeof(win), c->window_ns);
	text_duration(d, sizeof(d), c->ns);
	if (c->gpus > 1)
		sbuf_addf(out, "its %d %ss idled for %s %.0f%% of their windows", c->gpus, dev,
			  idle_cause_name(c->cause), 100 * c->share);
	else
		sbuf_addf(out, "its %s idled for %s %.0f%% of its window", dev,
			  idle_cause_name(c->cause), 100 * c->share);
	sbuf_addf(out, ": %s of %s, %lld gap%s", d, win, (long long)c->gaps,
		  c->gaps == 1 ? "" : "s");
}

void cause_bound_text(const struct attrib_row *r, const struct cause *c, struct sbuf *out)
{
	struct sbuf why = SBUF_INIT;
	sbuf_init(&why);
	if (c)
		cause_text(c, &why);
	attrib_bound_text(r, c ? why.buf : NULL, out);
	sbuf_release(&why);
}
