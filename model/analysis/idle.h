/*
 * Why a GPU stream idles (DESIGN.md, Analyses): each idle gap of a stream
 * gets one cause from what the host thread that launched the work ending
 * the gap was doing during it.  model/analysis/gpubreak.c finds the gaps (the
 * stretches of a stream's window where none of its device work runs, so
 * that they add up to its idle time) and asks for their causes; this
 * module reads the host side of the trace and applies the rule.
 *
 * The host activity of one source (trace file): on each thread track, the
 * phases under the thread's node (operators, runtime calls, annotations,
 * Python spans) by name, and the calls that launched its device work.  A
 * gap [start, end) closed by work launched by call L on thread T gets the
 * first cause that applies:
 *
 *   launch         L started before the gap and the gap is at most
 *                  launch_ns: the work was queued, the gap is the device's
 *                  own launch latency;
 *   host           no launching call is known;
 *   device         L had ended before the gap, which is longer than
 *                  launch_ns: the work was queued before the device went
 *                  idle, so nothing T did held it back; the device ran
 *                  another process's work (ranks or jobs sharing it) or
 *                  waited on an event of another stream;
 *   communication  for at least half the gap T was inside a collective
 *                  (a name starting with c10d::, gloo:, nccl:, mpi:, ucc:,
 *                  record_param_comms or ProcessGroup, or containing
 *                  all2all, alltoall or all_to_all), or T was inside no
 *                  operator or runtime call while a collective ran on
 *                  another thread of the trace (gloo's worker; a wait on
 *                  the work of a collective is not profiled);
 *   input          for at least half the gap T was fetching data (a name
 *                  containing "DataLoader" in any case, or a user
 *                  annotation containing batch, fetch, dataload, data_load
 *                  or load_data) or in a call that launched a host-to-device
 *                  copy;
 *   sync           the gap opened while T was in a synchronising call that
 *                  had started before it (model/analysis/devcall.h's list,
 *                  aten::item, aten::_local_scalar_dense, or a call that
 *                  launched a copy from the device to pageable memory), or
 *                  such calls cover at least half the gap;
 *   launch         T started a launch of device work (any stream) at least
 *                  every launch_ns through the gap: no stretch between the
 *                  gap's start, the launching calls T started in it and its
 *                  end is longer;
 *   host           otherwise: other CPU work, or code in no profiled op.
 */
#ifndef GRADEML_IDLE_H
#define GRADEML_IDLE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

enum idle_cause {
	IDLE_LAUNCH,
	IDLE_SYNC,
	IDLE_COMM,
	IDLE_INPUT,
	IDLE_HOST,
	IDLE_DEVICE,
	IDLE_NCAUSES
};

#define IDLE_LAUNCH_NS 100000 /* 100 us */

/* The call that launched one item of device work. */
struct idle_launch {
	int64_t track;	    /* its thread's track id; 0: no launching call known */
	int64_t start, end; /* the call's window */
	int copy;	    /* the item's DEVCALL_* flags (model/analysis/devcall.h) */
};

struct idle_host;

/* "launch", "sync", "communication", "input", "host", "device". */
const char *idle_cause_name(int cause);
/* The cause named s, or -1. */
int idle_cause_of(const char *s);

/* Reads the host activity of source_id's threads, given the launches of
 * its device work (n of them, any order).  Returns 0 with *out set (free
 * it with idle_host_free), or -1 with *err set. */
int idle_host_load(sqlite3 *db, int64_t source_id, const struct idle_launch *l, size_t n,
		   struct idle_host **out, char **err);
/* The cause of the gap [start, end) closed by work that next launched. */
int idle_gap_cause(const struct idle_host *h, int64_t start, int64_t end,
		   const struct idle_launch *next, int64_t launch_ns);
void idle_host_free(struct idle_host *h);

#endif
