/*
 * Resource attribution and bottlenecks (GradeML / Grade10), model/analysis/attrib.c and
 * bottleneck.c.
 *
 * Which metrics are attributed, and to what:
 *   cpu      "cpu.util" of a host                 host work (CPU threads, tasks)
 *   disk     "disk:X.util-percent" of a host      host work
 *   net      "net:X.ifutil-percent" (not lo)      host work
 *   gpu      "utilization.gpu", DCGM_FI_DEV_GPU_UTIL of GPU N    kernels on GPU N
 *   gpu-mem  "utilization.memory", DCGM_FI_DEV_MEM_COPY_UTIL     kernels, copies, sets
 * The work that uses a resource is the phases active on that host (device)
 * in their exclusive time: on a CPU thread the innermost phase running, on
 * a GPU stream each kernel, copy or set, on a Spark executor each task.
 * Phases of other hosts are never charged.
 *
 * A GPU's device work measures it: within the window of a trace that gives
 * a GPU's device work (its coverage: from the trace's first phase to its
 * last), the GPU's utilization is its capacity while some of that work runs
 * (kernel, copy or set) and 0 otherwise.  There its utilization series
 * take those values instead of their samples, which hold only outside any
 * coverage; a GPU without such a series gets one of those values alone.
 * nvidia-smi's utilization.gpu is the share of its sample period (1/6 s to
 * 1 s) in which a kernel ran, read at one moment: it cannot say when in the
 * period, and does not count copies; the trace's union of device work is
 * the same quantity to the nanosecond, for the processes it traced.
 *
 * Demand rules: device work has Exact(capacity) demand on its GPU's
 * utilization (busy while it runs, above); every other pair
 * is Variable(d) with d fitted per metric and phase type (operator,
 * runtime, annotation, task, other; kernel, memcpy, memset) by
 * non-negative least squares of the observed samples on the phases'
 * activity, GradeML's best fit.  The observed usage of each sample period
 * is upsampled to the change points of demand in three passes (exact,
 * variable, background), capped at capacity, and split among the active
 * phases by their demand; composite phases sum their descendants.
 *
 * Bottlenecks (Grade10's rule, on what was measured): a resource is
 * saturated while a sample holding then (model/store/sample.h) is at >= 95% of
 * its capacity; upsampled usage never decides it, since a sample period's
 * usage packed into the work that ran in it says nothing of saturation.
 * Two refinements judge a resource by its parts and by who waits on it:
 * A GPU is therefore saturated while its traced device work runs, and,
 * outside any trace's coverage, while utilization.gpu is >= 95%.
 * single-thread, one CPU (cpuN.util) at >= 95% while cpu.util is below
 * 95%; and disk, also while a disk's %util is >= 50% and the host's
 * cpu.iowait amounts to 0.2 of a CPU or more (x the CPUs that have a
 * series), since one synchronous writer keeps a device busy only while its
 * request is in flight.  A phase is judged over its own window on the
 * resources its work demands (single-thread with cpu), in the classes its
 * work ran in (any of them saturated counts): bound by r for the time r
 * was saturated; software-bound for the time some such metric holds a
 * value and none is saturated; the rest of its window has no data.  With
 * g each bound's share of the window, GradeML's gain without one is
 * min(g, 1 - max g of the others) of the duration (for software-bound, of
 * the time its work or its device work's trace covers: only there is its
 * code known).
 *
 * A shared GPU: one that several sources' device work ran on, a source
 * being one imported trace (a rank's process), a GPU its host and device
 * id (the stream tracks' pid, Kineto's args.device; traces imported with
 * no host name are one host, as in attribution).  Its utilization is the
 * union of all of them, and a phase above the sources (the step) is judged
 * on that; a phase of one source (the rank, its process, its operators) is
 * judged on its own source's device work alone: the GPU counts as
 * saturated for it while its own work runs, within its own trace's window,
 * so a rank that waits while another rank's kernels run is not GPU-bound.
 * Its row says so (shared_gpu, own_gpu).
 *
 * Figures are kept for phases of at least ATTRIB_MIN_NS (and every
 * workflow, step, rank, process, thread and stream); shorter phases count
 * in their ancestors only: their own figure would be below the resolution
 * of any metric.
 */
#ifndef GRADEML_ATTRIB_H
#define GRADEML_ATTRIB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define ATTRIB_RES_LIST(X)                                                                         \
	X(CPU, "cpu", 0)                                                                           \
	X(GPU, "gpu", 1)                                                                           \
	X(GPU_MEM, "gpu-mem", 1)                                                                   \
	X(DISK, "disk", 0)                                                                         \
	X(NET, "net", 0)

enum attrib_res {
#define X(id, name, dev) ATTRIB_##id,
	ATTRIB_RES_LIST(X)
#undef X
	    ATTRIB_NRES,
	/* bounds that are not attributed: */
	ATTRIB_THREAD = ATTRIB_NRES, /* one CPU saturated, not all */
	ATTRIB_NBOUND,
	ATTRIB_SOFTWARE = ATTRIB_NBOUND, /* nothing saturated */
	ATTRIB_NBNECK			 /* what attrib_bottlenecks may return */
};

#define ATTRIB_MIN_NS	 100000 /* 100 us */
#define ATTRIB_SATURATED 0.95
#define ATTRIB_IO_BUSY	 0.50 /* a disk's %util, of capacity, ... */
#define ATTRIB_IO_WAIT	 0.20 /* ... with this much iowait, in CPUs */

/* "cpu", "gpu", "gpu-mem", "disk", "net", "single-thread", "software". */
const char *attrib_res_name(int res);
/* The resource named s, or -1. */
int attrib_res_of(const char *s);
/* 1 when the resource is a device's (its work is device work), else 0. */
int attrib_res_device(int res);

/* One phase's figures.  Its work (its own and its descendants') is host
 * work (class 0) or device work (class 1); bounds are of its window. */
struct attrib_row {
	int64_t phase_id, dur_ns;
	int kind;			 /* enum phase_kind */
	int level;			 /* enum phase_level (level.h) */
	int64_t busy_ns[2];		 /* its work's time, host and device */
	int64_t cover_ns[2];		 /* the time that work covers (at most dur_ns) */
	unsigned mask;			 /* bit r: the work demands resource r */
	double use[ATTRIB_NRES];	 /* mean attributed usage over dur_ns, 1.0 = one resource */
	int64_t bneck_ns[ATTRIB_NBOUND]; /* of dur_ns, the time bound by r */
	int64_t data_ns;		 /* of dur_ns, the time a judged metric holds a value */
	int64_t free_ns;		 /* of that, the time nothing judged was saturated */
	int64_t traced_ns;  /* of dur_ns, the time a trace's device work measures its GPU */
	int64_t devbusy_ns; /* of that, the time some of that work ran */
	int shared_gpu;	    /* sources (ranks) giving device work on a GPU its work ran
			       on, when more than one: a shared GPU; else 0 */
	int own_gpu;	    /* 1: judged on its own source's device work there */
};

/* A fitted demand: per metric and phase type. */
struct attrib_fit {
	int64_t metric_id;
	int res;
	const char *type; /* static: "operator", "kernel", ... */
	int exact;	  /* Exact(demand) rather than Variable(demand) */
	double demand;	  /* in the metric's units per active phase */
};

struct attribution {
	struct attrib_row *rows; /* by phase_id */
	size_t nrows;
	struct attrib_fit *fits;
	size_t nfits;
};

/* GradeML's upsampling of one sample period, on its own for tests: n
 * stretches of the period (frac: their share of it, summing to 1) with
 * their exact and variable demand; out gets each stretch's usage, which
 * averages to value where capacity allows. */
void attrib_upsample(size_t n, const double *exact, const double *var, const double *frac,
		     double value, double cap, double *out);

/* A user's demand rule, replacing the default for one phase type on one
 * resource: Exact(d), Variable(d) or None (GradeML's rules).  Text: rules
 * separated by ';' or newlines, each "TYPE RESOURCE exact [D]", "TYPE
 * RESOURCE variable [D]" or "TYPE RESOURCE none", TYPE one of operator,
 * runtime, annotation, task, other (host work) or kernel, memcpy, memset
 * (device work), RESOURCE one of its class's (cpu, disk, net; gpu,
 * gpu-mem); D in the metric's units per active phase, left out: the
 * capacity (exact) or a fit (variable).  The file keeps the rules analyze
 * was given in meta 'demand_rules'. */
enum { ATTRIB_RULE_EXACT, ATTRIB_RULE_VARIABLE, ATTRIB_RULE_NONE };
struct attrib_rule {
	int res;
	int dev, type; /* the type's class (0 host, 1 device) and index in it */
	int rule;      /* ATTRIB_RULE_* */
	double demand; /* NAN: the capacity (exact) or fitted (variable) */
};
struct attrib_rules {
	struct attrib_rule *v;
	size_t n;
};
/* Returns 0, or -1 with *err naming the rule and what is wrong with it. */
int attrib_rules_parse(const char *text, struct attrib_rules *out, char **err);
void attrib_rules_release(struct attrib_rules *r);

/* Computes the attribution of every attributable metric of the file open
 * as db (path for messages) under the rules of meta 'demand_rules'.  Uses
 * only reads: db may be a second connection on another thread.  Returns 0,
 * or -1 or PTREE_LOOP (model/store/ptree.h: the parent links loop) with *err. */
int attrib_compute(sqlite3 *db, const char *path, struct attribution *a, char **err);
/* The same under the rules text given (NULL: the file's). */
int attrib_compute_rules(sqlite3 *db, const char *path, const char *rules, struct attribution *a,
			 char **err);
void attrib_release(struct attribution *a);
/* The row of a phase, or NULL. */
const struct attrib_row *attrib_find(const struct attribution *a, int64_t phase_id);

/* The usage of each resource attributed to phase_id's work (its own and
 * its descendants', as attrib_row.use) over [t0, t1) in nb buckets: bucket
 * b is [t0 + b (t1 - t0) / nb, t0 + (b + 1) (t1 - t0) / nb), edges rounded
 * down, and out[r * nb + b] (ATTRIB_NRES * nb doubles) its mean usage of
 * resource r, 1.0 = one resource.  Over a window that holds all the
 * phase's work the buckets integrate to its row's use[r] x dur_ns; over the
 * phase's own window too when its work lies within it (host work always; a
 * kernel may outlive the call that launched it).  The method and
 * numbers are attrib_compute's, on the demands it fitted: a's fits, or
 * with a NULL the file's cache (attribution_fit; the caller checks it is
 * fresh, model/analysis/analyze.h).  Reads only the phase's hosts: their metrics'
 * samples over the sample periods [t0, t1) touches and their work in
 * those periods.  Returns 0, or -1 or PTREE_LOOP with *err. */
int attrib_series(sqlite3 *db, const char *path, const struct attribution *a, int64_t phase_id,
		  int64_t t0, int64_t t1, int nb, double *out, char **err);

/* One bottleneck of a row: a bound (resource, ATTRIB_THREAD) or
 * ATTRIB_SOFTWARE. */
struct attrib_bneck {
	int res;
	double frac;	    /* of its duration */
	int64_t without_ns; /* estimated duration without it */
};
/* The row's bottlenecks with a fraction > 0, largest saving first; out
 * holds ATTRIB_NBNECK.  Returns how many. */
size_t attrib_bottlenecks(const struct attrib_row *r, struct attrib_bneck *out);

/* A row's share of its window with no data: no judged metric holds. */
double attrib_nodata(const struct attrib_row *r);
/* What bounds the row, in words the report and the explorer share: "cpu
 * 89%, software 11% of its 11.3 s; 1.29 s without cpu" (each bound's share
 * of the duration, largest saving first, the time with no data, and the
 * estimate without the first), or "-" when it has none.  why_sw, when not
 * NULL, follows the software share in parentheses (why the GPUs idled,
 * model/analysis/cause.h). */
struct sbuf;
void attrib_bound_text(const struct attrib_row *r, const char *why_sw, struct sbuf *out);
/* " (its host work 101 ms)": how much of its window its work covers, when
 * not all of it (the use is a mean over the whole window). */
void attrib_work_text(const struct attrib_row *r, struct sbuf *out);
/* "; shared GPU (2 ranks on it), judged on its own device work" (or
 * without the judged part for a row above the ranks), nothing when its GPU
 * is its own; attrib_bound_text ends with it. */
void attrib_shared_text(const struct attrib_row *r, struct sbuf *out);
/* A bound's name in at most four columns ("cpu", "1cpu", "gmem", "sw"). */
const char *attrib_bound_short(int res);
/* The bound a metric series is judged for: its resource when attributed,
 * ATTRIB_THREAD for a CPU's cpuN.util, ATTRIB_IOWAIT for cpu.iowait (the
 * disk's second rule); -1 for any other. */
#define ATTRIB_IOWAIT ATTRIB_NBNECK
int attrib_series_bound(const char *resource, const char *name);

/* Replaces the cache tables' rows (attribution, attribution_fit) inside the
 * caller's transaction; reads them back. */
int attrib_save(sqlite3 *db, const struct attribution *a, char **err);
int attrib_load(sqlite3 *db, struct attribution *a, char **err);
/* One phase's cached row: 1 found, 0 none, -1 on a read error. */
int attrib_read(sqlite3 *db, int64_t phase_id, struct attrib_row *r);

#endif
