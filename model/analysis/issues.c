/*
 * Top issues: one list across the workflow, ranked by the time each would
 * save the makespan, each pointing at the phase to look at and explained in
 * a line a data scientist reads without the paper (DESIGN.md, Analyses).
 *
 * Sources so far:
 *   bottleneck, software-bound  per step, rank and Spark stage, the
 *              bottleneck whose removal saves most (model/analysis/bottleneck.c):
 *              impact = its duration less the estimate without it;
 *   imbalance  where ranks meet at collectives, each step's straggler (the
 *              rank the others wait for), impact = its last arrivals less
 *              the mean arrivals; elsewhere each imbalanced group's longest
 *              member, impact = its duration minus the group's mean
 *              (model/analysis/imbalance.c);
 *   idle-gpu   per rank, its GPU (idle while none of its streams works),
 *              one issue per cause (model/analysis/idle.h) that held it idle at
 *              least 10% of its window: impact = that cause's idle time,
 *              what removing the cause would give back at most; the gpu or
 *              software-bound verdict of a phase above it whose device work
 *              kept the GPU busy a smaller share of its time than the GPU
 *              idled is left out (why it idled is the verdict), the GPU's
 *              idle share taken over its window and the gap after it to the
 *              left-out last step (the kept steps' last gap);
 *   copy-bound per rank, the GPU stream copying longest, when copies are at
 *              least half its device work and 10% of its window: impact =
 *              the copy time; the gpu or software-bound verdict of a phase
 *              above it whose duration is at most twice that is left out
 *              (the copies are its GPU time, or what nvidia-smi missed);
 * Their texts name the device and the advice as its runtime has them
 * (model/analysis/devcall.h: an MTIA accelerator, HIP graphs under ROCm).
 *   critical-path  per workflow, the longest piece of work on its critical
 *              path (model/analysis/critpath.c): impact = the makespan less the
 *              what-if makespan were it twice as fast.
 * The share is the impact over the duration of the workflow the phase
 * belongs to.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/analyze.h"
#include "model/analysis/cause.h"
#include "model/analysis/devcall.h"
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/store/ptree.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

/* An idle cause is an issue once it holds a GPU idle CAUSE_ISSUE_SHARE of
 * its window (model/analysis/cause.h); copies, once they take that share of
 * a stream's window and COPY_ISSUE_SHARE of its device work. */
#define IDLE_ISSUE_SHARE CAUSE_ISSUE_SHARE
#define COPY_ISSUE_SHARE 0.50

/* The first column of sql's first row with ?1 bound to id; 0 when none. */
static int64_t one_int(sqlite3 *db, const char *sql, int64_t id)
{
	sqlite3_stmt *q;
	int64_t v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW)
		v = col_int(q, 0);
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

/* What each idle cause means and what gives the time back (model/analysis/idle.h),
 * for a device under runtime api (model/analysis/devcall.h): into *what and *fix,
 * owned by the caller. */
static void idle_why(int cause, int api, char **what, char **fix)
{
	const char *graphs = devcall_api_graphs(api);
	switch (cause) {
	case IDLE_LAUNCH:
		*what = xasprintf("the host was launching work back to back, each kernel shorter"
				  " than its launch");
		*fix = graphs ? xasprintf("%s, torch.compile or bigger batches (fewer, larger"
					  " kernels)",
					  graphs)
			      : xasprintf("Fewer, larger kernels (torch.compile, bigger batches)");
		break;
	case IDLE_SYNC:
		*what = xasprintf("each gap followed a wait of the host for the device (.item(),"
				  " .cpu(), print(tensor), a copy to pageable memory,"
				  " torch.%s.synchronize())",
				  devcall_api_torch(api));
		*fix = xasprintf("Removing host reads of device values from the loop");
		break;
	case IDLE_COMM:
		*what = xasprintf("the host was inside a collective");
		*fix = xasprintf("Overlapping communication with computation (bucketing), or"
				 " evening out the ranks it waits for,");
		break;
	case IDLE_INPUT:
		*what = xasprintf("the host was fetching the next batch or copying it to the"
				  " device");
		*fix = xasprintf("More DataLoader workers, prefetching and pinned memory");
		break;
	case IDLE_DEVICE:
		*what = xasprintf("the work after each gap had been queued before it: the %s ran"
				  " another process's work (ranks or jobs sharing it) or waited on"
				  " another stream",
				  devcall_api_device(api));
		*fix = xasprintf("A %s of its own for each rank (nvidia-smi lists what else runs"
				 " on it)",
				 devcall_api_device(api));
		break;
	default:
		*what = xasprintf("the host ran other CPU work, or Python outside any profiled op");
		*fix = xasprintf("Moving that work out of the step (or onto other threads)");
	}
}

/* The stream's name, without Kineto's trailing space ("stream 7 "), and
 * " of rank N" when the trace names one, in who. */
static int stream_label(const struct gpubreak_rank *r, const struct gpubreak_stream *x, char *who,
			size_t n)
{
	size_t len = strlen(x->name);
	while (len && x->name[len - 1] == ' ')
		len--;
	who[0] = 0;
	if (r->rank >= 0)
		snprintf(who, n, " of rank %d", r->rank);
	return (int)len;
}

/* What the device side says to the verdicts of the phases above it, with
 * its phase and ancestors: a copy-bound stream (copy_ns, its copy time), a
 * GPU that idled for causes (idle, the share of its window it idled; < 0
 * for a GPU without idle-gpu issues), and the runtime it ran under. */
struct explains {
	int64_t *chain;
	size_t n;
	int64_t copy_ns;
	double idle;
	int api;
	const int64_t *type_ns; /* a rank's GPU: its breakdown's kernel types; else NULL */
};

static void explains_add(struct ranking *rk, struct explains **ex, size_t *nex, size_t *alloc,
			 int64_t phase, int64_t copy_ns, double idle, int api,
			 const int64_t *type_ns)
{
	XGROW(*ex, *nex + 1, *alloc);
	struct explains *e = &(*ex)[(*nex)++];
	*e = (struct explains){NULL, 0, copy_ns, idle, api, type_ns};
	if (rk->rc >= 0) {
		int rc = ptree_up(store_db(rk->st), store_path(rk->st), phase, &e->chain, &e->n,
				  rk->err);
		if (rc < 0)
			rk->rc = rc;
	}
}

/* Per rank, its GPU (all its streams: idle while none works): one issue
 * per cause that held it idle at least IDLE_ISSUE_SHARE of its window,
 * pointing at the GPU's node (the parent of its busiest stream's). */
static void idle_gpu(struct ranking *rk, struct analysis *a, const struct gpubreak *g,
		     struct explains **ex, size_t *nex, size_t *alloc)
{
	sqlite3 *db = store_db(rk->st);
	for (size_t i = 0; i < g->nranks; i++) {
		const struct gpubreak_rank *r = &g->ranks[i];
		int64_t gpu = cause_gpu_node(db, r);
		const struct gpubreak_temporal *t = &r->time;
		if (gpu <= 0)
			continue;
		if (t->window_ns <= 0 || t->idle_ns <= 0) {
			explains_add(rk, ex, nex, alloc, gpu, 0, -1, r->api, r->type_ns);
			continue;
		}
		char who[128] = "", idle[32], win[32], d[32];
		const struct attrib_row *ar = attrib_find(&a->attr, gpu);
		int n = r->rank >= 0 ? snprintf(who, sizeof(who), " of rank %d", r->rank) : 0;
		if (ar && ar->shared_gpu > 1)
			snprintf(who + n, sizeof(who) - (size_t)n,
				 " (shared GPU, %d ranks on it: idle while none of this rank's"
				 " streams worked)",
				 ar->shared_gpu);
		struct sbuf split = SBUF_INIT;
		sbuf_init(&split);
		for (int c = 0; c < IDLE_NCAUSES; c++)
			if (r->cause.gaps[c])
				sbuf_addf(&split, "%s%s %.0f%%", split.len ? ", " : "",
					  idle_cause_name(c),
					  100.0 * (double)r->cause.ns[c] / (double)t->idle_ns);
		text_duration(idle, sizeof(idle), t->idle_ns);
		text_duration(win, sizeof(win), t->window_ns);
		int64_t whole = workflow_ns(rk, gpu);
		int any = 0;
		for (int c = 0; c < IDLE_NCAUSES; c++) {
			int64_t ns = r->cause.ns[c];
			if (!cause_is_issue(r, c))
				continue;
			any = 1;
			text_duration(d, sizeof(d), ns);
			char *what, *fix;
			idle_why(c, r->api, &what, &fix);
			add(a, rk,
			    (struct issue){
				.kind = "idle-gpu",
				.cause = idle_cause_name(c),
				.phase_id = gpu,
				.impact_ns = ns,
				.share = whole > 0 ? (double)ns / (double)whole : NAN,
				.explanation = xasprintf(
				    "the %s%s sat idle %s of its %s (%.0f%%); cause %s for %s "
				    "(%lld gap%s): %s. %s would give back up to %s. Idle by cause:"
				    " %s",
				    devcall_api_device(r->api), who, idle, win,
				    100.0 * (double)t->idle_ns / (double)t->window_ns,
				    idle_cause_name(c), d, (long long)r->cause.gaps[c],
				    r->cause.gaps[c] == 1 ? "" : "s", what, fix, d, split.buf)});
			free(what);
			free(fix);
		}
		/* the share of the kept steps' time it idled: its window, and the
		 * last gap of those steps, which the window ends before */
		explains_add(rk, ex, nex, alloc, gpu, 0,
			     any ? (double)(t->idle_ns + r->tail_ns) /
				       (double)(t->window_ns + r->tail_ns)
				 : -1,
			     r->api, r->type_ns);
		sbuf_release(&split);
	}
}

/* Per rank, the stream copying longest, when copies are at least
 * COPY_ISSUE_SHARE of its device work and IDLE_ISSUE_SHARE of its window. */
static void copy_bound(struct ranking *rk, struct analysis *a, const struct gpubreak *g,
		       struct explains **ex, size_t *nex, size_t *alloc)
{
	sqlite3 *db = store_db(rk->st);
	for (size_t i = 0; i < g->nranks; i++) {
		const struct gpubreak_rank *r = &g->ranks[i];
		const struct gpubreak_stream *x = NULL;
		for (size_t k = 0; k < r->nstreams; k++)
			if (!x || r->streams[k].copies.ns > x->copies.ns)
				x = &r->streams[k];
		if (!x || x->copies.ns <= 0)
			continue;
		const struct gpubreak_copies *k = &x->copies;
		int64_t busy = x->time.window_ns - x->time.idle_ns;
		int64_t phase = track_phase(db, x->track_id);
		if (phase <= 0 || busy <= 0 || (double)k->ns < COPY_ISSUE_SHARE * (double)busy ||
		    (double)k->ns < IDLE_ISSUE_SHARE * (double)x->time.window_ns)
			continue;
		char who[32], t[32], win[32], b[32], rate[40], pg[96] = "";
		int len = stream_label(r, x, who, sizeof(who));
		int pageable = 2.0 * (double)k->pageable_ns >= (double)k->ns;
		text_duration(t, sizeof(t), k->ns);
		text_duration(win, sizeof(win), x->time.window_ns);
		if (k->pageable)
			snprintf(pg, sizeof(pg),
				 ", %lld of them (%.0f%% of the copy time) from or to"
				 " pageable host memory",
				 (long long)k->pageable,
				 100.0 * (double)k->pageable_ns / (double)k->ns);
		int64_t whole = workflow_ns(rk, phase);
		add(a, rk,
		    (struct issue){
			.kind = "copy-bound",
			.cause = pageable ? "pageable" : "copies",
			.phase_id = phase,
			.impact_ns = k->ns,
			.share = whole > 0 ? (double)k->ns / (double)whole : NAN,
			.explanation = xasprintf(
			    "%s %.*s%s copied memory %s of its %s (%.0f%%), %.0f%% of its device "
			    "work: %lld copies, %s at %s%s%s: %sfewer, larger transfers"
			    " would give back up to %s",
			    devcall_api_device(r->api), len, x->name, who, t, win,
			    100.0 * (double)k->ns / (double)x->time.window_ns,
			    100.0 * (double)k->ns / (double)busy, (long long)k->count,
			    text_bytes(b, sizeof(b), k->bytes),
			    text_rate(rate, sizeof(rate), 1e9 * (double)k->bytes / (double)k->ns),
			    pg,
			    r->api == DEVCALL_API_CUDA ? " (nvidia-smi's utilization.gpu does not"
							 " count copies)"
						       : "",
			    pageable ? "pinned memory (pin_memory=True, then .to(device,"
				       " non_blocking=True)) and "
				     : "",
			    t)});
		explains_add(rk, ex, nex, alloc, phase, k->ns, -1, r->api, NULL);
	}
}

/* Whether the device-side issues beneath r say what its gpu or
 * software-bound verdict would: a copy-bound stream that copied at least
 * half of its duration (the copies are its GPU time, or what nvidia-smi
 * left out), or a GPU with idle-gpu issues that idled a larger share of its
 * window than r's device work kept it busy (why it idled is the verdict). */
static int device_explains(const struct explains *ex, size_t n, const struct attrib_row *r)
{
	double busy = r->traced_ns > 0 ? (double)r->devbusy_ns / (double)r->traced_ns : 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ex[i].n; k++)
			if (ex[i].chain[k] == r->phase_id &&
			    (ex[i].copy_ns > 0 ? 2.0 * (double)ex[i].copy_ns >= (double)r->dur_ns
					       : ex[i].idle >= 0 && ex[i].idle >= busy))
				return 1;
	return 0;
}

/* The runtime of the devices beneath phase id (the largest, model/analysis/devcall.h). */
static int device_api(const struct explains *ex, size_t n, int64_t id)
{
	int api = DEVCALL_API_NONE;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ex[i].n; k++)
			if (ex[i].chain[k] == id && ex[i].api > api)
				api = ex[i].api;
	return api;
}

/* The kernel types (gpubreak.h) of the GPUs beneath phase id, summed into
 * type_ns; the largest, or -1 when there is none. */
static int device_mix(const struct explains *ex, size_t n, int64_t id,
		      int64_t type_ns[GPUBREAK_NTYPES])
{
	int top = -1;
	memset(type_ns, 0, GPUBREAK_NTYPES * sizeof(*type_ns));
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ex[i].n; k++)
			if (ex[i].type_ns && ex[i].chain[k] == id)
				for (int t = 0; t < GPUBREAK_NTYPES; t++)
					type_ns[t] += ex[i].type_ns[t];
	for (int t = 0; t < GPUBREAK_NTYPES; t++)
		if (type_ns[t] > 0 && (top < 0 || type_ns[t] > type_ns[top]))
			top = t;
	return top;
}

/* Per workflow, the first phase of its path with a what-if makespan. */
static void critical(struct ranking *rk, struct analysis *a)
{
	int64_t done = 0; /* the workflow whose issue is in: rows come a workflow at a time */
	for (size_t i = 0; i < a->npath; i++) {
		const struct pathrow *p = &a->path[i];
		if (p->whatif_ns < 0 || p->root_id == done)
			continue;
		done = p->root_id;
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

/* What saturates a bound (model/analysis/attrib.h), and what would relieve it; a
 * GPU's named as its runtime api names it (model/analysis/devcall.h), and
 * nvidia-smi's figure only where it may have one. */
static const char *rule(int res, int api)
{
	int nv = api == DEVCALL_API_CUDA || api == DEVCALL_API_NONE;
	switch (res) {
	case ATTRIB_CPU:
		return "the CPU was saturated (cpu.util >= 95%)";
	case ATTRIB_THREAD:
		return "one CPU was saturated (>= 95%) while cpu.util was not: a single-thread"
		       " bottleneck";
	case ATTRIB_GPU:
		return api == DEVCALL_API_MTIA ? "the accelerator was busy (its traced device work"
						 " running)"
		       : nv ? "the GPU was busy (its traced device work running; utilization.gpu"
			      " >= 95% where no trace covers it)"
			    : "the GPU was busy (its traced device work running)";
	case ATTRIB_GPU_MEM:
		return "GPU memory was saturated (utilization.memory >= 95%)";
	case ATTRIB_DISK:
		return "the disk held it back (%util >= 95%, or >= 50% with iowait of 0.2 CPU or"
		       " more): I/O-bound";
	default:
		return "the network was saturated (an interface >= 95%)";
	}
}

/* The kernel types as the report's GPU breakdown words them, in its order. */
static const struct {
	int type;
	const char *word;
} kernel_words[GPUBREAK_NTYPES] = {
    {GPUBREAK_COMP, "computation"},
    {GPUBREAK_COMM, "communication"},
    {GPUBREAK_MEM, "memory"},
    {GPUBREAK_OTHER, "other"},
};

/* What would relieve a GPU kept busy mostly by work of kernel type top
 * (gpubreak.h; -1: not known). */
static const char *gpu_advice(int top, int api)
{
	switch (top) {
	case GPUBREAK_COMM:
		return "less or overlapped communication (larger buckets, overlap with the"
		       " backward pass) or faster links";
	case GPUBREAK_MEM:
		return "fewer, larger copies, or the data kept on the device";
	case GPUBREAK_OTHER:
		return "fewer synchronisations and waits on the device (stream waits, syncs)";
	default:
		return api == DEVCALL_API_MTIA ? "faster kernels (mixed precision, fused operators)"
						 " or more accelerators"
					       : "faster kernels (mixed precision, fused operators)"
						 " or more GPUs";
	}
}

static const char *advice(int res, int api)
{
	switch (res) {
	case ATTRIB_CPU:
		return "more cores, or less CPU work in the loop (more data-loader workers,"
		       " preprocessing done ahead)";
	case ATTRIB_THREAD:
		return "spreading the work over processes (the GIL, a serial loop), or vectorising"
		       " it";
	case ATTRIB_GPU:
		return gpu_advice(-1, api);
	case ATTRIB_GPU_MEM:
		return "fewer memory round trips (fused operators, larger batches)";
	case ATTRIB_DISK:
		return "faster storage, larger and fewer synchronous writes (fewer fsyncs), or the"
		       " data cached in memory";
	default:
		return "a faster network, or less data sent";
	}
}

/* Per part of the workflow (level.h: a step, span, rank, Spark application,
 * job or stage, at any depth), the bottleneck whose removal saves most. */
static void bottlenecks(struct ranking *rk, struct analysis *a, const struct explains *ex,
			size_t nex)
{
	for (size_t i = 0; i < a->attr.nrows; i++) {
		const struct attrib_row *r = &a->attr.rows[i];
		if (r->level != LEVEL_PART)
			continue;
		struct attrib_bneck b[ATTRIB_NBNECK];
		if (!attrib_bottlenecks(r, b))
			continue;
		int64_t gain = r->dur_ns - b[0].without_ns;
		if (gain <= 0 || ((b[0].res == ATTRIB_SOFTWARE || b[0].res == ATTRIB_GPU) &&
				  device_explains(ex, nex, r)))
			continue;
		char d[32], g[32], nodata[48] = "";
		text_duration(d, sizeof(d), r->dur_ns);
		text_duration(g, sizeof(g), gain);
		if (attrib_nodata(r) >= 0.005)
			snprintf(nodata, sizeof(nodata), " (no data for %.0f%% of it)",
				 100 * attrib_nodata(r));
		char *name = analysis_phase_name(rk->st, r->phase_id);
		int64_t wf = workflow_ns(rk, r->phase_id);
		struct sbuf shared = SBUF_INIT;
		sbuf_init(&shared);
		attrib_shared_text(r, &shared);
		char *why;
		if (b[0].res == ATTRIB_SOFTWARE) {
			char judged[64] = "";
			size_t k = 0;
			for (int x = 0; x < ATTRIB_NRES; x++)
				if (r->mask & (1u << x))
					k +=
					    (size_t)snprintf(judged + k, sizeof(judged) - k, "%s%s",
							     k ? ", " : "", attrib_res_name(x));
			why = xasprintf(
			    "%s: nothing it demands and was measured (%s) was saturated during"
			    " %.0f%% of its %s%s%s, so the time goes to Python, synchronisation or"
			    " waiting, not to hardware: up to %s",
			    name, judged, 100 * b[0].frac, d, nodata, shared.buf, g);
		} else {
			int api = device_api(ex, nex, r->phase_id);
			struct sbuf mix = SBUF_INIT;
			sbuf_init(&mix);
			const char *fix = advice(b[0].res, api);
			int64_t type_ns[GPUBREAK_NTYPES];
			int top =
			    b[0].res == ATTRIB_GPU ? device_mix(ex, nex, r->phase_id, type_ns) : -1;
			if (top >= 0) { /* the breakdown's words and figures */
				sbuf_adds(&mix, " (its device work by HTA's kernel types:");
				for (size_t t = 0; t < GPUBREAK_NTYPES; t++) {
					char x[32];
					sbuf_addf(&mix, "%s %s %s", t ? "," : "",
						  kernel_words[t].word,
						  text_duration(x, sizeof(x),
								type_ns[kernel_words[t].type]));
				}
				sbuf_addc(&mix, ')');
				fix = gpu_advice(top, api);
			}
			why = xasprintf(
			    "%s: %s during %.0f%% of its %s%s%s%s; %s would save about %s", name,
			    rule(b[0].res, api), 100 * b[0].frac, d, nodata, shared.buf, mix.buf,
			    fix, g);
			sbuf_release(&mix);
		}
		sbuf_release(&shared);
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
	struct explains *ex = NULL;
	size_t nex = 0, alloc = 0;
	idle_gpu(&rk, a, gpu, &ex, &nex, &alloc);
	copy_bound(&rk, a, gpu, &ex, &nex, &alloc);
	critical(&rk, a);
	bottlenecks(&rk, a, ex, nex);
	for (size_t i = 0; i < nex; i++)
		free(ex[i].chain);
	free(ex);
	if (a->nissues)
		qsort(a->issues, a->nissues, sizeof(*a->issues), by_impact);
	return rk.rc;
}
