/*
 * Summaries of a phase's subtree, by name, as profilers print them: device
 * work (`nsys stats`' cuda_gpu_kern_sum, with HTA's kernel types and a
 * copy's bytes), operators (host total, self, and the device time of the
 * work they launched, as TensorBoard's operator view), runtime calls and
 * user annotations (HTA's user annotation breakdown, host and GPU side).
 * And one row per rank of the part of the workflow that holds ranks.  A
 * summary without rows says why (struct aggr's why, aggr_ranks' *why).  The explorer's :kernels,
 * :ops, :api, :annotations and :ranks and `grademl-tui summary` show them (tui/summ.c).
 *
 * The subtree is read in one pass over the phases table in id order from
 * the root (ids are reserved when a span opens, so a parent's id is below
 * its children's; a file that breaks that is walked by a recursive query
 * instead).  Memory: 4 bytes per id from the root to the file's last,
 * one row per name, and for
 * :kernels 8 bytes per device work item for the medians (up to
 * AGGR_MEDIAN_MAX items; beyond that the medians are left out).
 */
#ifndef GRADEML_AGGR_H
#define GRADEML_AGGR_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/store.h"

#define AGGR_MEDIAN_MAX ((size_t)1 << 24)

enum aggr_what {
	AGGR_KERNELS, /* phases of kind kernel, memcpy, memset */
	AGGR_OPS,     /* kind operator */
	AGGR_API,     /* kind runtime */
	/* kind annotation (record_function ranges, the DataLoader's
	 * enumerate(DataLoader)#...__next__: whatever an importer marks as a
	 * user's range on the host) and gpu_annotation (the same ranges as the
	 * device ran them).  Neither a track's node (a stream's annotation lane
	 * is one) nor a GPU annotation named as a profiler step of the file
	 * (Kineto writes each ProfilerStep#N again on the GPU) is one. */
	AGGR_ANNOTATIONS
};

struct aggr_row {
	char *name;
	int kind;		/* the phase kind of its first instance */
	int type;		/* AGGR_KERNELS: enum gpubreak_type (HTA's rule, by name) */
	int64_t count;		/* AGGR_ANNOTATIONS: the host instances (may be 0) */
	int64_t total_ns;	/* the sum of the instances' durations (an instance nested in
				   one of the same name counts in both, as HTA counts) */
	int64_t self_ns;	/* AGGR_OPS, AGGR_ANNOTATIONS: the sum of their self times */
	int64_t device_ns;	/* AGGR_OPS, AGGR_ANNOTATIONS: the instances' device_ns summed
				   (each one the union of the device work beneath it) */
	int64_t gpu_count;	/* AGGR_ANNOTATIONS: the GPU-side instances */
	int64_t gpu_ns;		/* their durations summed (HTA's figure by default) */
	int64_t min_ns, max_ns; /* 0 without a host instance */
	double mean_ns, median_ns; /* NAN without a host instance */ /* median: the middle one, or
				      the mean of the two middle ones; NAN when left out */
	double stddev_ns; /* sample standard deviation (n - 1); 0 for one */
	int64_t bytes;	  /* copies and sets: the trace's "bytes", summed; 0: none */
	int64_t first_id; /* the instance that started first (ties: lowest id) */
};

struct aggr {
	struct aggr_row *rows; /* by total, largest first; ties by GPU time, then name */
	size_t nrows;
	int64_t total_ns; /* the rows' totals added up (what shares are of) */
	int64_t phases;	  /* phases in the subtree */
	int median_cut;	  /* more than AGGR_MEDIAN_MAX items: no medians */
	char *why;	  /* no rows: why, one line (names no phase), else NULL */
};

/* Summarises the subtree of phase root_id (0: every phase).  0, or -1 (PTREE_LOOP for a
 * parent cycle) with *err; a is empty then. */
int aggr_compute(struct store *st, int64_t root_id, enum aggr_what what, struct aggr *a,
		 char **err);
void aggr_release(struct aggr *a);

/* One rank of a step (:ranks): its time, its device work with HTA's
 * definitions (the GPU breakdowns of model/analysis/gpubreak.h, cached or computed:
 * the last profiler step left out as HTA does), and its waits at the
 * collectives where the step's ranks meet (model/analysis/imbalance.h). */
struct aggr_rank {
	int64_t rank_id;    /* the rank node */
	char *name;	    /* its name, "rank 3" */
	int64_t dur_ns;	    /* its duration in the step */
	int64_t compute_ns; /* the union of its COMP device work; -1: no device work */
	int64_t comm_ns;    /* the union of its COMM device work; -1 likewise */
	double idle_pct;    /* its GPU's idle time over its device work's window; NAN none */
	int64_t wait_ns;    /* inside collectives before the last rank came; -1: its ranks
			       do not meet */
	int straggler;	    /* the rank the others wait for (or the longest, where
			       they do not meet) */
};

/* The ranks beneath the nearest phase, phase_id or one above it, that has
 * ranks as children (a step, a span, a nested step: whatever level holds
 * them; model/analysis/level.h), in rank order; *step gets that phase's id.
 * Where none has, no rows, *step 0 and *why says why (one line, naming no
 * phase: the caller frees it; NULL when there are rows).  0, or -1 with
 * *err. */
int aggr_ranks(struct store *st, int64_t phase_id, int64_t *step, struct aggr_rank **out, size_t *n,
	       char **why, char **err);
void aggr_ranks_release(struct aggr_rank *r, size_t n);

#endif
