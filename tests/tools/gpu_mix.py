#!/usr/bin/env python3
"""Writes one rank's Kineto trace whose GPU is kept busy by work of a known
kernel type, for tests/e2e/gpu_advice.sh (grademl-tui(1) Top issues: what
a GPU-bound verdict advises follows the kernel types of the work that kept
it busy).

Usage: gpu_mix.py OUT MODE

MODE is comp or comm.  One ProfilerStep#1 of SLOTS slots of SLOT_MS on the
host thread; in each slot the host launches a long kernel of MODE's type
(a GEMM, or an NCCL all-reduce: HTA's communication, "ncclKernel" in its
name) of BIG_MS and a short one of the other type of SMALL_MS after it, on
stream 7, then waits for them.  So the GPU is busy (BIG_MS + SMALL_MS) /
SLOT_MS of the step, and HTA's kernel types put SLOTS x BIG_MS under MODE's
type and SLOTS x SMALL_MS under the other.  Prints the figures as JSON on
stdout: {"COMPUTATION": ns, "COMMUNICATION": ns}.
"""
import json
import sys

BASE_NS = 1790000000000000000
SLOTS = 10
SLOT_MS = 10.0
BIG_MS = 8.0
SMALL_MS = 1.5
LEAD_MS = 0.1
LAUNCH_MS = 0.02
NAMES = {"comp": "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32",
         "comm": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"}


def us(ms):
    """Kineto's microseconds, from ms (three decimals: whole ns)."""
    return round(ms * 1000.0, 3)


def trace(mode):
    other = "comm" if mode == "comp" else "comp"
    pid, tid, dev = 1000, 1000, 0
    ev = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
         "args": {"name": "python3"}},
        {"name": "process_name", "ph": "M", "ts": 0, "pid": dev, "tid": 0,
         "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": dev, "tid": 0,
         "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": dev, "tid": 7,
         "args": {"name": "stream 7 "}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid,
         "tid": tid, "ts": us(0), "dur": us(SLOTS * SLOT_MS), "args": {"External id": 1}},
    ]
    corr = 100
    for s in range(SLOTS):
        t = s * SLOT_MS + LEAD_MS
        for kind, dur in ((mode, BIG_MS), (other, SMALL_MS)):
            launch = t - 2 * LAUNCH_MS
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": pid, "tid": tid, "ts": us(launch), "dur": us(LAUNCH_MS),
                       "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": NAMES[kind], "pid": dev,
                       "tid": 7, "ts": us(t), "dur": us(dur),
                       "args": {"device": dev, "stream": 7, "correlation": corr}})
            corr += 1
            t += dur
        sync0 = t - BIG_MS - SMALL_MS
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                   "pid": pid, "tid": tid, "ts": us(sync0), "dur": us(t - sync0),
                   "args": {}})
    doc = {"schemaVersion": 1, "baseTimeNanoseconds": BASE_NS, "displayTimeUnit": "ms",
           "deviceProperties": [{"id": dev, "name": "NVIDIA H100"}], "traceEvents": ev}
    big, small = round(SLOTS * BIG_MS * 1e6), round(SLOTS * SMALL_MS * 1e6)
    figures = {"COMPUTATION": big if mode == "comp" else small,
               "COMMUNICATION": big if mode == "comm" else small}
    return doc, figures


def main(argv):
    if len(argv) != 3 or argv[2] not in NAMES:
        sys.exit("usage: gpu_mix.py OUT comp|comm")
    doc, figures = trace(argv[2])
    with open(argv[1], "w") as f:
        json.dump(doc, f)
    print(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv)
