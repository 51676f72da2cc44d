/*
 * Critical path and what-if over the dependency DAG of one subtree of the
 * phase tree (Daydream's and HTA's question: which phases bound the
 * makespan, and what would it be if one of them were k times faster).
 *
 * The graph.  Every phase under the root (the root included; GPU
 * annotations, kind gpu_annotation, and what lies under them are left out:
 * they mirror host annotations on a stream and are not work; so is the
 * profiler's bookkeeping, kind profiler, and what lies under it) gives two
 * events, its start S and its end E, at their observed times.  Edges, each
 * kept only when it does not go back in observed time:
 *   work        S(p) -> E(p) for a leaf: a phase with no contained child;
 *   nesting     S(parent) -> S(c) for every child;  E(c) -> E(parent) for a
 *               contained child: one inside its parent's window and either
 *               on its parent's track, or under a structural parent, or a
 *               rank or process node itself (a trace under a span).
 *               Structure, by the phase's level (level.h) whatever importer
 *               made it: the workflow; a rank, process, thread or stream
 *               node; a part of the workflow (a step or span at any depth,
 *               a Spark job or stage) that holds anything beneath it; any
 *               other phase without a track.  A part with nothing beneath
 *               it is work, as is any other phase on a track.  A kernel is no contained child of
 *               the runtime call that launched it: its end holds up nothing
 *               on the host, so a parent's end waits only for what really
 *               ran inside it;
 *   order       E(a) -> S(b) for consecutive phases of one serial executor
 *               (a track of kind thread or stream): consecutive children of
 *               one parent on that track, and on a stream consecutive device
 *               ops (kernel, memcpy, memset) whatever launched them; and
 *               among the children of one parent that are on no serial
 *               track (steps, spans, ranks), b after a when b began once
 *               every sibling before it had ended and a ended last of them:
 *               steps or spans that ran one after another, in one process
 *               or not, are ordered whether or not a manifest says so;
 *   edges       every row of the edges table with both ends under the root
 *               (flow, launch, fwd-bwd, stage parent, step order), a -> b as
 *               E(a) -> S(b), or as S(a) -> S(b) when b started before a
 *               ended (a launch: the kernel starts while its call runs);
 *   sync        E(k) -> E(s) for a host call s that returns only when device
 *               work is done (cudaDeviceSynchronize, cudaStreamSynchronize,
 *               cudaEventSynchronize, a synchronous cudaMemcpy, their HIP
 *               and driver-API twins), k the device op of the same source
 *               (trace file) that ended last within s's window: the call
 *               could not return before it.  The trace does not say which
 *               stream or event s named, so the last op to end on any of
 *               the source's streams stands for it.  A cudaMemcpyAsync
 *               whose copy is from or to pageable memory (model/analysis/devcall.h)
 *               is such a call when its copy ends before it returns;
 *   copy        S(k) -> E(s) for such a call s whose copy k ends after it
 *               returns (the host stages the data as the copy runs, so s
 *               returns only as k completes): the edge is k's work, and a
 *               faster copy returns the call sooner.
 * All levels are in the graph, not only leaves: a composite phase's own
 * (self) time is the gaps between its children, which the nesting and
 * order edges carry, so the path says "this operator's host code" as well
 * as "this kernel".
 *
 * Weights.  Each event waited on one predecessor: the one that happened
 * last (its binding edge; ties go to the first found in a topological
 * pass).  The binding edge weighs the observed gap between the two events;
 * every other edge weighs 0.  So the longest path reproduces the observed
 * timeline exactly, and the critical path is the chain of binding edges
 * back from the last end under the root: contiguous, in time order, its
 * length the makespan.  The makespan of a root is the latest end of any
 * event under it less the earliest start (normally the root's own window,
 * longer when device work outlives it).  An event with no predecessor in
 * the graph (the root's start; a phase whose only causes lie outside the
 * root) is released at its observed time.
 *
 * Each stretch of the path is either a phase running, its work or its self
 * time (work edges and copy edges; nesting and order edges between a
 * contained child and its parent), or a wait on the dependency named by the edge: a launch
 * latency, a queue on a stream, a flow, a step-order or stage gap, a
 * synchronising call's return after the device work it waited for, or an
 * unexplained release.  A workflow's own time (before, between or after
 * its steps) is a gap: nothing recorded ran, so the path's phases never
 * include the workflow itself, and no what-if shortens it.  Through sync edges the path runs from
 * the host into the kernels the host waited on, so a what-if on a kernel shortens the host's wait.
 *
 * What-if.  Making phase X k times faster divides by k the weight of every
 * binding edge that is the work or self time of X or of a phase under X
 * (its kernels included), then takes the longest path again in the same
 * topological order (linear time).  Assumed: waits stay as observed
 * (launch latencies, queueing, unexplained gaps, dependencies on work
 * outside the root), and an edge that did not bind still needs no time, so
 * a phase may now start as soon as all its predecessors are done.  Phases
 * outside X do not change; contention X caused is not modelled: a thread
 * or rank that ran beside X, joined by no recorded edge, keeps its times,
 * and may then bound the path (struct critpath_whatif says which).  k > 1
 * speeds up, 0 < k < 1 slows down, INFINITY removes X's time.
 *
 * Memory is a few arrays of int32/int64 per phase and per event (about
 * 110 bytes a phase at the peak: 630 MB for 5.6 M phases), nothing
 * allocated per node.  Time: a recursive query over the phases_parent
 * index for a subtree of up to 2^18 phases, a scan of the phases table in
 * rowid order beyond that; one read of the edges; a radix sort of start
 * times; one Kahn pass (and one replay per what-if), all linear.
 */
#ifndef GRADEML_CRITPATH_H
#define GRADEML_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/store.h"

/* What a stretch of the path is. */
enum critpath_what {
	CRITPATH_RUN = 0,     /* phase_id ran: its work, or its self time between children */
	CRITPATH_EDGE = 1,    /* phase_id waited on an edges row of kind edge_kind */
	CRITPATH_LAUNCH = 2,  /* phase_id (on another track) waited after its parent began */
	CRITPATH_QUEUE = 3,   /* phase_id waited after its predecessor on its thread or stream */
	CRITPATH_RELEASE = 4, /* phase_id started later than anything in the graph explains */
	CRITPATH_SYNC = 5,    /* phase_id, a synchronising call, returned after device work ended */
	CRITPATH_GAP = 6,     /* nothing under phase_id, a workflow, ran: before, between or
				 after its steps */
};

/* One stretch of the path; consecutive stretches of one phase and kind are
 * merged.  Times are absolute nanoseconds. */
struct critpath_step {
	int64_t phase_id;
	int64_t start_ns, dur_ns;
	int64_t on_path_ns; /* phase_id's running time on the whole path */
	int what;	    /* enum critpath_what */
	int edge_kind;	    /* EDGE_* for CRITPATH_EDGE, else 0 */
};

/* A phase's running time on the path. */
struct critpath_phase {
	int64_t phase_id;
	int64_t on_path_ns;
	int64_t whatif_ns; /* the makespan were it critpath_analyze's k times faster; -1 */
	int64_t bound_id;  /* then: what bounds the makespan instead (critpath_whatif); 0 */
};

/* A what-if's answer.  shrink_ns is what the phase and those under it run
 * on the observed path: k times faster, the makespan would lose loss_ns,
 * shrink_ns * (1 - 1/k), were the path to stay the same.  Where it loses
 * less (by more than 1% of loss_ns), the replayed path has left the
 * observed one: bound_id is the phase
 * it now waits on there (another rank, a concurrent step, a fixed wait's
 * end), the deepest one that is work rather than structure. */
struct critpath_whatif {
	int64_t observed_ns;	/* the makespan as observed */
	int64_t makespan_ns;	/* the makespan were the phase k times faster */
	int64_t shrink_ns;	/* the phase's and its subtree's running time on the path */
	int64_t loss_ns;	/* what that time loses k times faster: the saving were the
				   path to stay the same */
	int64_t bound_id;	/* 0 when the path stays the same */
	int64_t bound_track_id; /* where bound_id ran; 0: none */
};

struct critpath {
	int64_t root_id;
	int64_t start_ns, makespan_ns; /* steps tile [start_ns, start_ns + makespan_ns) */
	int64_t run_ns, wait_ns;       /* the path's running and waiting time (sum: makespan) */
	struct critpath_step *steps;   /* in time order */
	size_t nsteps;
	struct critpath_phase *phases; /* every phase that ran on the path, longest first */
	size_t nphases;
	int64_t nphases_graph, nedges_graph; /* the graph's size: phases, edges kept */
};

/* The critical path of the subtree at root_id (0: every workflow).  Fills
 * *out (the caller releases it with critpath_release); -1 and *err when the
 * root does not exist or trace.db cannot be read, PTREE_LOOP (model/store/ptree.h)
 * when the parent links loop through it. */
int critpath_compute(struct store *st, int64_t root_id, struct critpath *out, char **err);
/* critpath_compute, and for the first n phases of the path (longest
 * first) that are work rather than structure (see the nesting edges
 * above: a leaf step or span is work, one holding work is not), the makespan
 * were each k times faster, on the one graph (one replay each: on a graph
 * of more than CRITPATH_WHATIF_ALL_MAX phases, the first alone). */
#define CRITPATH_WHATIF_ALL_MAX (1u << 20)
int critpath_analyze(struct store *st, int64_t root_id, double k, size_t n, struct critpath *out,
		     char **err);
/* Root_id's makespan as observed and were phase_id (under it) k times
 * faster (k > 0, INFINITY allowed), from the one graph, in *out; -1 and
 * *err on a bad phase or k. */
int critpath_whatif(struct store *st, int64_t root_id, int64_t phase_id, double k,
		    struct critpath_whatif *out, char **err);
void critpath_release(struct critpath *c);

#endif
