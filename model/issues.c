/*
 * Top issues: one list across the workflow, ranked by the time each would
 * save the makespan, each pointing at the phase to look at and explained in
 * a line a data scientist reads without the paper (DESIGN.md, Analyses).
 *
 * Sources so far:
 *   bottleneck, software-bound  per step, rank and Spark stage, the
 *              bottleneck whose removal saves most (model/attrib.c):
 *              impact = its duration less the estimate without it;
 *   imbalance  where ranks meet at collectives, each step's straggler (the
 *              rank the others wait for), impact = its last arrivals less
 *              the mean arrivals; elsewhere each imbalanced group's longest
 *              member, impact = its duration minus the group's mean
 *              (model/imbalance.c);
 *   idle-gpu   per rank, the GPU stream that waited longest for the host
 *              (HTA's host-wait idle, model/gpubreak.c): impact = that
 *              wait, what launching work sooner would give back at most;
 *   critical-path  per workflow, the longest piece of work on its critical
 *              path (model/critpath.c): impact = the makespan less the
 *              what-if makespan were it twice as fast.
 * The share is the impact over the duration of the workflow the phase
 * belongs to.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analyze.h"
#include "model/ptree.h"
#include "model/text.h"
#include "model/xalloc.h"

/* The first column of sql's first row with ?1 bound to id; 0 when none. */
static int64_t one_int(sqlite3 *db, const char *sql, int64_t id)
{
	sqlite3_stmt *q;
	int64_t v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* What the ranking shares: the file, the list's allocation, and the first
 * error a walk up the tree met (a loop). */
struct ranking {
	struct store *st;
	size_t alloc;
	int rc;
	char **err;
};

/* The duration of the top-level phase above id (its workflow); 0 when
 * none, or on an error (kept in rk). */
static int64_t workflow_ns(struct ranking *rk, int64_t id)
{
	int64_t *chain = NULL, dur = 0;
	size_t n = 0;
	if (rk->rc < 0)
		return 0;
	int rc = ptree_up(store_db(rk->st), store_path(rk->st), id, &chain, &n, rk->err);
	if (rc < 0)
		rk->rc = rc;
	else if (n)
		dur = one_int(store_db(rk->st),
			      "SELECT dur_ns FROM phases WHERE id = ?1 AND parent_id IS NULL",
			      chain[n - 1]);
	free(chain);
	return dur;
}

static char *explain_imbalance(const struct imbalance *g)
{
	char a[32], b[32], c[32];
	text_duration(a, sizeof(a), g->actual_ns);
	text_duration(b, sizeof(b), g->ideal_ns);
	text_duration(c, sizeof(c), g->impact_ns);
	if (g->meets) {
		char *who = imbalance_says(g);
		char *s = xasprintf("among %s, %s: with the work spread evenly the ranks would"
				    " reach the collectives about %s sooner",
				    g->label, who, c);
		free(who);
		return s;
	}
	if (!strcmp(g->kind, "tasks"))
		return xasprintf(
		    "%s took %s against a mean of %s over %s; %lld of them ran over 10%%"
		    " long: spreading the work evenly would save about %s",
		    g->straggler, a, b, g->label, (long long)g->slow, c);
	if (!strcmp(g->kind, "ranks"))
		return xasprintf("%s took %s against a mean of %s over %s, which meet at no"
				 " collective in the trace: spreading the work evenly would save"
				 " about %s",
				 g->straggler, a, b, g->label, c);
	return xasprintf("the slowest %s took %s against a mean of %s (the ranks meet at no"
			 " collective in the trace): spreading the work evenly would save"
			 " about %s",
			 g->label, a, b, c);
}

/* The phase a track's nodes hang under (tracks.phase_id), or 0. */
static int64_t track_phase(sqlite3 *db, int64_t track_id)
{
	return one_int(db, "SELECT phase_id FROM tracks WHERE id = ?1", track_id);
}

static void add(struct analysis *a, struct ranking *rk, struct issue u)
{
	XGROW(a->issues, a->nissues + 1, rk->alloc);
	a->issues[a->nissues++] = u;
}

/* Per rank, the stream that waited longest for its host to launch work. */
static void idle_gpu(struct ranking *rk, struct analysis *a, const struct gpubreak *g)
{
	sqlite3 *db = store_db(rk->st);
	for (size_t i = 0; i < g->nranks; i++) {
		const struct gpubreak_rank *r = &g->ranks[i];
		const struct gpubreak_stream *worst = NULL;
		for (size_t k = 0; k < r->nstreams; k++)
			if (!worst || r->streams[k].idle.ns[GPUBREAK_HOST_WAIT] >
					  worst->idle.ns[GPUBREAK_HOST_WAIT])
				worst = &r->streams[k];
		int64_t wait = worst ? worst->idle.ns[GPUBREAK_HOST_WAIT] : 0;
		int64_t phase = worst ? track_phase(db, worst->track_id) : 0;
		if (wait <= 0 || phase <= 0 || worst->time.window_ns <= 0)
			continue;
		char w[32], win[32], who[32] = "";
		size_t len = strlen(worst->name);
		while (len && worst->name[len - 1] == ' ') /* Kineto's "stream 7 " */
			len--;
		if (r->rank >= 0)
			snprintf(who, sizeof(who), " of rank %d", r->rank);
		text_duration(w, sizeof(w), wait);
		text_duration(win, sizeof(win), worst->time.window_ns);
		int64_t whole = workflow_ns(rk, phase);
		add(a, rk,
		    (struct issue){.kind = "idle-gpu",
				   .phase_id = phase,
				   .impact_ns = wait,
				   .share = whole > 0 ? (double)wait / (double)whole : NAN,
				   .explanation = xasprintf(
				       "GPU %.*s%s sat idle %s of its %s (%.0f%%) waiting for the "
				       "CPU to launch"
				       " work (%lld gaps): fewer, larger launches (bigger batches, "
				       "CUDA graphs,"
				       " torch.compile) would give back up to %s",
				       (int)len, worst->name, who, w, win,
				       100.0 * (double)wait / (double)worst->time.window_ns,
				       (long long)worst->idle.count[GPUBREAK_HOST_WAIT], w)});
	}
}

/* Per workflow, the first phase of its path with a what-if makespan. */
static void critical(struct ranking *rk, struct analysis *a)
{
	for (size_t i = 0; i < a->npath; i++) {
		const struct pathrow *p = &a->path[i];
		if (p->whatif_ns < 0 ||
		    (i && a->path[i - 1].root_id == p->root_id && a->path[i - 1].whatif_ns >= 0))
			continue;
		int64_t gain = p->makespan_ns - p->whatif_ns;
		if (gain <= 0)
			continue;
		char on[32], whole[32], g[32];
		char *name = analysis_phase_name(rk->st, p->phase_id);
		text_duration(on, sizeof(on), p->on_path_ns);
		text_duration(whole, sizeof(whole), p->makespan_ns);
		text_duration(g, sizeof(g), gain);
		int64_t wf = workflow_ns(rk, p->phase_id);
		char *bound = NULL, *then = NULL, *e = NULL;
		if (p->bound_id && analysis_phase_path(rk->st, p->bound_id, &bound, &e) >= 0 &&
		    bound)
			then = xasprintf(", no more: then %s bounds the path", bound);
		add(a, rk,
		    (struct issue){
			.kind = "critical-path",
			.phase_id = p->phase_id,
			.impact_ns = gain,
			.share = wf > 0 ? (double)gain / (double)wf : NAN,
			.explanation = xasprintf(
			    "%s is %s of the workflow's critical path (%.2g%% of %s): were it twice"
			    " as fast the workflow would end %s sooner%s",
			    name, on, 100.0 * (double)p->on_path_ns / (double)p->makespan_ns, whole,
			    g, then ? then : "")});
		free(then);
		free(bound);
		free(e);
		free(name);
	}
}

static const char *advice(int res)
{
	switch (res) {
	case ATTRIB_CPU:
		return "more cores, or less CPU work in the loop (more data-loader workers,"
		       " preprocessing done ahead)";
	case ATTRIB_GPU:
		return "faster kernels (mixed precision, fused operators) or more GPUs";
	case ATTRIB_GPU_MEM:
		return "fewer memory round trips (fused operators, larger batches)";
	case ATTRIB_DISK:
		return "faster storage, or the data cached in memory";
	default:
		return "a faster network, or less data sent";
	}
}

/* Per step, rank and stage, the bottleneck whose removal saves most. */
static void bottlenecks(struct ranking *rk, struct analysis *a)
{
	for (size_t i = 0; i < a->attr.nrows; i++) {
		const struct attrib_row *r = &a->attr.rows[i];
		if (r->kind != PHASE_STEP && r->kind != PHASE_RANK && r->kind != PHASE_STAGE)
			continue;
		struct attrib_bneck b[ATTRIB_NRES + 1];
		if (!attrib_bottlenecks(r, b))
			continue;
		int64_t gain = r->dur_ns - b[0].without_ns;
		if (gain <= 0)
			continue;
		char d[32], g[32];
		text_duration(d, sizeof(d), r->dur_ns);
		text_duration(g, sizeof(g), gain);
		char *name = analysis_phase_name(rk->st, r->phase_id);
		int64_t wf = workflow_ns(rk, r->phase_id);
		char *why;
		if (b[0].res == ATTRIB_SOFTWARE)
			why = xasprintf(
			    "%s: no resource was saturated during %.0f%% of its work, so the"
			    " time goes to Python, synchronisation or waiting, not to hardware:"
			    " up to %s of its %s",
			    name, 100 * b[0].frac, g, d);
		else
			why = xasprintf("%s: %s saturated during %.0f%% of its work; %s would save"
					" about %s of its %s",
					name, attrib_res_name(b[0].res), 100 * b[0].frac,
					advice(b[0].res), g, d);
		free(name);
		add(a, rk,
		    (struct issue){.kind = b[0].res == ATTRIB_SOFTWARE ? "software-bound"
								       : "bottleneck",
				   .phase_id = r->phase_id,
				   .impact_ns = gain,
				   .share = wf > 0 ? (double)gain / (double)wf : NAN,
				   .explanation = why});
	}
}

static int by_impact(const void *x, const void *y)
{
	const struct issue *a = x, *b = y;
	if (a->impact_ns != b->impact_ns)
		return a->impact_ns < b->impact_ns ? 1 : -1;
	return (a->phase_id > b->phase_id) - (a->phase_id < b->phase_id);
}

int issues_rank(struct store *st, struct analysis *a, const struct gpubreak *gpu, char **err)
{
	struct ranking rk = {.st = st, .err = err};
	for (size_t i = 0; i < a->nimb; i++) {
		const struct imbalance *g = &a->imb[i];
		if (g->meets && strcmp(g->kind, "ranks"))
			continue; /* one ProfilerStep#N of a step listed already */
		int64_t whole = workflow_ns(&rk, g->straggler_id);
		add(a, &rk,
		    (struct issue){.kind = "imbalance",
				   .phase_id = g->straggler_id,
				   .impact_ns = g->impact_ns,
				   .share = whole > 0 ? (double)g->impact_ns / (double)whole : NAN,
				   .explanation = explain_imbalance(g)});
	}
	idle_gpu(&rk, a, gpu);
	critical(&rk, a);
	bottlenecks(&rk, a);
	if (a->nissues)
		qsort(a->issues, a->nissues, sizeof(*a->issues), by_impact);
	return rk.rc;
}
