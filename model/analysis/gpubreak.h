/*
 * GPU trace breakdowns with Holistic Trace Analysis' definitions (HTA,
 * facebookresearch/HolisticTraceAnalysis: hta/analyzers/breakdown_analysis.py,
 * communication_analysis.py, hta/utils/utils.py, hta/common/trace.py), read
 * from trace.db.  One gpubreak_rank per (source, rank): HTA analyses one
 * trace file per rank, and two files of one rank (a train and an eval
 * trace) have unrelated windows, so they are never merged.
 *
 * Device work is every phase of kind kernel, memcpy or memset on a track of
 * kind "stream" (HTA: the events with a `stream` argument; GPU user
 * annotations have none and are left out here too).  Which of it counts:
 *
 *   - Last step (HTA Trace.load_traces, include_last_profiler_step=False):
 *     when the source names at least two distinct ProfilerStep* phases, the
 *     cutoff is the latest start among its host ProfilerStep* phases;
 *     device work counts only when its launching
 *     call (its runtime parent, linked by correlation id as HTA links it,
 *     else a launch edge's source) started before the cutoff, so work with
 *     no launching call is left out as well.  With fewer than two step
 *     names nothing is left out.  opts.include_last_step keeps everything.
 *     One departure from HTA's code, which treats every event without a
 *     stream as CPU: Kineto's copies of the steps on the device streams
 *     (GPU annotations) do not count, for each starts when the device
 *     reaches the step, after the step's first launches, and the cutoff is
 *     a launch time: with them the last step's early work was kept.
 *   - Kernel type (utils.get_kernel_type of HTA 0.6.1 and main), by name only,
 *     whatever the phase kind, the first rule that holds:
 *     COMMUNICATION when the name starts with "nccl", "hip" or "hccl", or
 *     holds "ncclKernel" or "gloo:" anywhere; MEMORY when it starts with
 *     "Memcpy", "Memset" or "dma" (MTIA's dma_request); OTHER when it holds
 *     "Memcpy" or "Sync" anywhere (Stream Sync, Event Sync, Context Sync),
 *     is "Stream Wait Event", or starts with "pe_exe", "job_exe" or
 *     "runFunction"; else COMPUTATION.  OTHER is device work that is
 *     neither computation nor a transfer: it counts in the window and in
 *     non-compute time, never as compute.
 *
 * The figures, all in nanoseconds over the counted device work of a rank:
 *
 *   - Temporal breakdown (get_temporal_breakdown): window = end of the last
 *     work minus start of the first (all streams together); idle = window
 *     minus the union of all work; compute = the union of COMPUTATION work;
 *     non-compute = window - compute - idle.  Unions, never sums, so
 *     overlapping streams are not counted twice.  The same definition over
 *     one stream's work gives each stream's breakdown.
 *   - Kernel-type time (get_gpu_kernel_breakdown, first table): the union of
 *     each type's work, and mix_ns[mask], the time during which exactly the
 *     set of types `mask` ran (HTA's "COMPUTATION overlapping
 *     COMMUNICATION" rows); the mix entries partition the busy time.
 *   - Top kernels (the second table): over all the rank's device work,
 *     the last step's included, as the summaries (model/analysis/aggr.h)
 *     count it, so that the two agree (with opts.hta after HTA's last-step
 *     rule, as HTA); per type, kernels grouped by name with
 *     count, sum, min and max of durations (sums, not unions), ordered by
 *     sum, largest first (ties by name).  When a type has more than opts.top_n
 *     names, HTA's rule folds into one "others" entry every name past the
 *     first top_n and every name whose running sum exceeds the
 *     opts.duration_ratio quantile (linear interpolation) of the running sums.
 *   - Communication/computation overlap (get_comm_comp_overlap): the length
 *     of the intersection of the COMMUNICATION union with the COMPUTATION
 *     union, over the length of the COMMUNICATION union; undefined (no
 *     communication) is reported as comm_ns == 0.
 *   - Idle time breakdown (get_idle_time_breakdown), per stream: work sorted
 *     by start (ties: shorter first); each item after the first has the gap
 *     start - end of the item before it (the previous item, not the latest
 *     end so far, exactly as HTA).  The gap is host wait when the item's
 *     launching call started after that previous end; else kernel wait when
 *     the gap is below opts.kernel_wait_ns; else other.  Gaps are summed as
 *     they are, so overlapping items on one stream give negative kernel-wait
 *     time, as in HTA.  HTA's consecutive_kernel_delay defaults to 30 in the
 *     trace's unit, which for Kineto JSON (microseconds) is 30 us: the
 *     default here is 30000 ns.
 *
 * Beyond HTA:
 *
 *   - Idle causes, per stream and per rank (all its streams together: the
 *     GPU is idle while none of them works): the idle time (window less
 *     the union of the work) is cut into gaps, each from the end of all
 *     work so far to the next start, and each gap gets one cause from what
 *     the host was doing (model/analysis/idle.h, with opts.launch_ns); per cause,
 *     the gaps' time and count.  The causes' times add up to the idle time.
 *   - Copies, per stream: the copies among the counted work (phases of
 *     kind memcpy, and MEMORY work that is no memset, such as MTIA's
 *     dma_request), their count, bytes (the trace's "bytes", or a DMA's
 *     "size") and union, all of them and those whose host side is pageable
 *     memory (model/analysis/devcall.h).
 *
 * Where this differs from HTA: times are exact nanoseconds (HTA rounds a
 * fractional-microsecond start up and end down to whole microseconds); the
 * step count is per source, not across all ranks' names; sort ties are
 * broken deterministically.
 *
 * opts.hta reproduces HTA 0.6.1's figures instead: the cutoff is the
 * latest start among every stream-less ProfilerStep* phase, Kineto's GPU
 * annotations of the steps included (Trace._filter_irrelevant_gpu_kernels),
 * and every time is rounded as HTA's parser leaves it, in the trace's own
 * microseconds (trace.db less the source's time_offset_ns): a start, a
 * launching call's start and the cutoff up, an end down, an item never
 * ending before it starts.  Still per source, not across ranks; MTIA's own
 * filter (the work launched within the steps, used by HTA when the trace's
 * device_type is MTIA and it names two or more steps) is not applied.  Work whose stored end lies
 * past INT64_MAX ends there, and a figure beyond int64 (work more than 292 years apart) is held at
 * INT64_MAX (model/util/nstime.h).
 *
 * The caller owns a struct gpubreak and releases it with gpubreak_release;
 * every string in it belongs to it.
 */
#ifndef GRADEML_GPUBREAK_H
#define GRADEML_GPUBREAK_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "model/analysis/idle.h"
#include "model/store/store.h"

enum gpubreak_type { GPUBREAK_COMM, GPUBREAK_COMP, GPUBREAK_MEM, GPUBREAK_OTHER, GPUBREAK_NTYPES };
enum gpubreak_wait {
	GPUBREAK_HOST_WAIT,
	GPUBREAK_KERNEL_WAIT,
	GPUBREAK_OTHER_WAIT,
	GPUBREAK_NWAITS
};

struct gpubreak_opts {
	int64_t kernel_wait_ns; /* HTA consecutive_kernel_delay; 30000 */
	int include_last_step;	/* 0: leave the last profiler step out, as HTA */
	int top_n;		/* HTA num_kernels; 10 */
	double duration_ratio;	/* HTA duration_ratio; 0.8 */
	int64_t launch_ns;	/* idle causes: IDLE_LAUNCH_NS */
	int hta;		/* 1: HTA 0.6.1's own figures (its cutoff, its rounding) */
	int gaps;		/* 1: keep each stream's idle gaps (gpubreak_stream.gaps) */
};

struct gpubreak_temporal {
	int64_t window_ns, idle_ns, compute_ns, noncompute_ns;
};

struct gpubreak_idle {
	int64_t ns[GPUBREAK_NWAITS];	/* summed gaps by category */
	int64_t count[GPUBREAK_NWAITS]; /* gaps by category */
};

struct gpubreak_causes {
	int64_t ns[IDLE_NCAUSES];   /* idle time by cause (enum idle_cause) */
	int64_t gaps[IDLE_NCAUSES]; /* gaps by cause */
};

struct gpubreak_copies {
	int64_t count, ns, bytes;		       /* copies, their union, their bytes */
	int64_t pageable, pageable_ns, pageable_bytes; /* of them, to or from pageable memory */
};

struct gpubreak_kernel {
	char *name; /* "others" for the folded entry */
	int type;   /* enum gpubreak_type */
	int others; /* 1: the folded entry; count is its work items, names its names */
	int64_t names, count, sum_ns, min_ns, max_ns;
};

/* One idle gap of a stream, as the idle causes cut them: from the end of
 * all its work so far to the next start. */
struct gpubreak_gap {
	int64_t start, end;
	int cause;	/* enum idle_cause */
	int64_t thread; /* the track of the call that launched the work ending it; 0: none */
};

struct gpubreak_stream {
	int64_t track_id;
	char *name; /* the track's name, e.g. "stream 7" */
	int64_t items;
	struct gpubreak_temporal time;
	struct gpubreak_idle idle;
	struct gpubreak_causes cause;
	struct gpubreak_copies copies;
	struct gpubreak_gap *gaps; /* with opts.gaps, by start; else NULL (never cached) */
	size_t ngaps;
};

struct gpubreak_rank {
	int64_t source_id;
	char *source;	   /* the file's path */
	int rank;	   /* -1: none */
	int api;	   /* enum devcall_api its work's names say; not cached (gpucache) */
	int64_t items;	   /* device work counted */
	int64_t left_out;  /* device work left out by the last-step rule */
	int64_t cutoff_ns; /* the last step's start; 0 when nothing is left out */
	/* from the end of the work counted to the start of the left-out step's
	 * first work after it: the kept steps' last idle gap, which the window
	 * (first to last work, HTA's) ends before; 0 when none; not cached */
	int64_t tail_ns;
	struct gpubreak_temporal time;
	struct gpubreak_causes cause; /* of time.idle_ns */
	int64_t type_ns[GPUBREAK_NTYPES];
	int64_t mix_ns[1 << GPUBREAK_NTYPES]; /* index: bit (1 << type) per type; [0] is 0 */
	int64_t comm_ns, overlap_ns;	      /* comm_ns = type_ns[GPUBREAK_COMM] */
	struct gpubreak_kernel *kernels;      /* by type (COMM, COMP, MEM, OTHER), then sum */
	size_t nkernels;
	struct gpubreak_stream *streams; /* by track id */
	size_t nstreams;
};

struct gpubreak {
	struct gpubreak_rank *ranks; /* by source id, then rank */
	size_t nranks;
	int hta; /* made with opts.hta: HTA 0.6.1's own figures; never cached */
};

void gpubreak_default_opts(struct gpubreak_opts *o);
/* "COMMUNICATION", "COMPUTATION", "MEMORY", "OTHER" (HTA's names). */
const char *gpubreak_type_name(int type);
/* "host_wait", "kernel_wait", "other" (HTA's idle_category). */
const char *gpubreak_wait_name(int wait);
/* HTA's kernel type of a device work name. */
int gpubreak_kernel_type(const char *name);

/* Computes every breakdown over st's trace.db; opts NULL takes the defaults.
 * Returns 0, or -1 with *err set (the caller frees it) and g empty. */
int gpubreak_load(struct store *st, const struct gpubreak_opts *opts, struct gpubreak *g,
		  char **err);
/* The same over an open trace.db. */
int gpubreak_load_db(sqlite3 *db, const struct gpubreak_opts *opts, struct gpubreak *g, char **err);
void gpubreak_release(struct gpubreak *g);

#endif
