/*
 * Resource attribution and bottlenecks (GradeML / Grade10), model/attrib.c.
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
 * Demand rules: a kernel has Exact(capacity) demand on its GPU's
 * utilization (nvidia-smi counts the time a kernel runs); every other pair
 * is Variable(d) with d fitted per metric and phase type (operator,
 * runtime, annotation, task, other; kernel, memcpy, memset) by
 * non-negative least squares of the observed samples on the phases'
 * activity, GradeML's best fit.  The observed usage of each sample period
 * is upsampled to the change points of demand in three passes (exact,
 * variable, background), capped at capacity, and split among the active
 * phases by their demand; composite phases sum their descendants.
 *
 * Bottlenecks: a phase is bottlenecked on a metric while the metric is at
 * >= 95% of capacity (global) or the phase gets >= 95% of the share
 * available to it (local).  Per resource type, the time bottlenecked is
 * counted over the phase's work that demands it; the time its work ran
 * while nothing it demands was saturated is software-bound time.  With g
 * the bottlenecked fraction of each resource, GradeML's gain without a
 * bottleneck is min(g, 1 - max g of the others), of the time the work of
 * its class covers: min(dur, work time).
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
	ATTRIB_SOFTWARE = ATTRIB_NRES /* a pseudo-resource: nothing saturated */
};

#define ATTRIB_MIN_NS	 100000 /* 100 us */
#define ATTRIB_SATURATED 0.95

/* "cpu", "gpu", "gpu-mem", "disk", "net", "software". */
const char *attrib_res_name(int res);
/* The resource named s, or -1. */
int attrib_res_of(const char *s);
/* 1 when the resource is a device's (its work is device work), else 0. */
int attrib_res_device(int res);

/* One phase's figures.  Work is split into host work (class 0) and device
 * work (class 1); a resource's fractions are of the work of its class. */
struct attrib_row {
	int64_t phase_id, dur_ns;
	int kind;		       /* enum phase_kind */
	int64_t busy_ns[2];	       /* its work's time (its own and its descendants') */
	int64_t free_ns[2];	       /* of that, while nothing it demands was saturated */
	unsigned mask;		       /* bit r: the work demands resource r */
	double use[ATTRIB_NRES];       /* mean attributed usage over dur_ns, 1.0 = one resource */
	int64_t bneck_ns[ATTRIB_NRES]; /* work time bottlenecked on r */
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
 * or -1 or PTREE_LOOP (model/ptree.h: the parent links loop) with *err. */
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
 * fresh, model/analyze.h).  Reads only the phase's hosts: their metrics'
 * samples over the sample periods [t0, t1) touches and their work in
 * those periods.  Returns 0, or -1 or PTREE_LOOP with *err. */
int attrib_series(sqlite3 *db, const char *path, const struct attribution *a, int64_t phase_id,
		  int64_t t0, int64_t t1, int nb, double *out, char **err);

/* One bottleneck of a row: a resource or ATTRIB_SOFTWARE. */
struct attrib_bneck {
	int res;
	double frac;	    /* of its class's work */
	int64_t without_ns; /* estimated duration without it */
};
/* The row's bottlenecks with a fraction > 0, largest saving first; out
 * holds ATTRIB_NRES + 1.  Returns how many. */
size_t attrib_bottlenecks(const struct attrib_row *r, struct attrib_bneck *out);

/* Replaces the cache tables' rows (attribution, attribution_fit) inside the
 * caller's transaction; reads them back. */
int attrib_save(sqlite3 *db, const struct attribution *a, char **err);
int attrib_load(sqlite3 *db, struct attribution *a, char **err);
/* One phase's cached row: 1 found, 0 none, -1 on a read error. */
int attrib_read(sqlite3 *db, int64_t phase_id, struct attrib_row *r);

#endif
