#!/usr/bin/env python3
"""Writes two ranks' Kineto traces whose device figures are known by
construction, for tests/e2e/shared_gpu.sh (grademl-tui(1) BOTTLENECKS, a
shared GPU).

Usage: shared_gpu.py OUTDIR DEVICE0 DEVICE1 [SHIFT_MS]

Each rank N writes OUTDIR/rankN.pt.trace.json: one ProfilerStep#1 of
WINDOW_MS on its host thread, and SLOTS slots of SLOT_MS.  In each slot
rank 0 launches one kernel that runs OWN_MS[0] from LEAD_MS into the slot,
rank 1 one that runs GAP_MS after it, OWN_MS[1] long (a GPU time-sliced between two
processes runs one's kernels, then the other's); each host waits for its
kernel in cudaStreamSynchronize, then idles to the slot's end.  So rank 0's
own stream is busy SLOTS x OWN_MS[0] of its WINDOW_MS, rank 1's SLOTS x
OWN_MS[1], and the GPU, when both run on the same device, the sum of the
two.  DEVICE0 and DEVICE1 are the device ids of the ranks' kernels
(args.device, the stream's pid): equal, the ranks share one GPU; different,
each has its own.  SHIFT_MS (0 by default) starts rank 1's trace that much
later (its baseTimeNanoseconds): past WINDOW_MS, the ranks take turns on
the GPU instead of sharing it.  Prints the figures as JSON on stdout:
{"window_ns", "own_busy_ns": [rank 0, rank 1]}.
"""
import json
import os
import sys

BASE_NS = 1790000000000000000
SLOTS = 10
SLOT_MS = 10.0
WINDOW_MS = SLOTS * SLOT_MS
OWN_MS = (4.65, 4.5)
LEAD_MS = 0.1  # from a slot's start to rank 0's kernel
GAP_MS = 0.05  # between rank 0's kernel and rank 1's in a slot
LAUNCH_MS = 0.02


def us(ms):
    """Kineto's microseconds, from ms (three decimals: whole ns)."""
    return round(ms * 1000.0, 3)


def rank_trace(rank, device, shift_ms):
    pid, tid = 1000 + rank, 1000 + rank
    ev = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
         "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
         "args": {"labels": "CPU"}},
        {"name": "process_name", "ph": "M", "ts": 0, "pid": device, "tid": 0,
         "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": device, "tid": 0,
         "args": {"labels": "GPU %d" % device}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": device, "tid": 7,
         "args": {"name": "stream 7 "}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid,
         "tid": tid, "ts": us(0), "dur": us(WINDOW_MS), "args": {"External id": 1}},
    ]
    for s in range(SLOTS):
        k0 = s * SLOT_MS + LEAD_MS + (0 if rank == 0 else OWN_MS[0] + GAP_MS)
        launch, corr = k0 - 1.5 * LAUNCH_MS, 100 + s
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": tid,
                   "ts": us(launch - 0.001), "dur": us(LAUNCH_MS + 0.002),
                   "args": {"External id": 10 + s}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                   "pid": pid, "tid": tid, "ts": us(launch), "dur": us(LAUNCH_MS),
                   "args": {"External id": 10 + s, "correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm_rank%d" % rank,
                   "pid": device, "tid": 7, "ts": us(k0), "dur": us(OWN_MS[rank]),
                   "args": {"External id": 10 + s, "device": device, "stream": 7,
                            "correlation": corr}})
        sync0 = launch + LAUNCH_MS + 0.002
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                   "pid": pid, "tid": tid, "ts": us(sync0),
                   "dur": us(k0 + OWN_MS[rank] + 0.001 - sync0), "args": {}})
    return {
        "schemaVersion": 1,
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
        "deviceProperties": [{"id": device, "name": "NVIDIA H100"}],
        "baseTimeNanoseconds": BASE_NS + round(shift_ms * 1e6),
        "displayTimeUnit": "ms",
        "traceEvents": ev,
    }


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: shared_gpu.py OUTDIR DEVICE0 DEVICE1 [SHIFT_MS]")
    out, devices = sys.argv[1], (int(sys.argv[2]), int(sys.argv[3]))
    shift = float(sys.argv[4]) if len(sys.argv) == 5 else 0.0
    os.makedirs(out, exist_ok=True)
    busy = []
    for rank in (0, 1):
        doc = rank_trace(rank, devices[rank], shift if rank else 0.0)
        with open(os.path.join(out, "rank%d.pt.trace.json" % rank), "w") as f:
            json.dump(doc, f)
        # measured back from what was written: the union of its kernels
        ks = sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000))
                    for e in doc["traceEvents"] if e.get("cat") == "kernel")
        total, end = 0, None
        for a, b in ks:
            a = max(a, end) if end is not None else a
            total += max(b - a, 0)
            end = b if end is None else max(end, b)
        busy.append(total)
    json.dump({"window_ns": round(WINDOW_MS * 1e6), "own_busy_ns": busy}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
