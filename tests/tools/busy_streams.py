#!/usr/bin/env python3
"""Writes one rank's Kineto trace whose GPU streams are busy for known
shares of one step, for tests/e2e/timeline_shade.sh (grademl-tui(1), the
timeline: a column's shade is the share of its time the lane was busy).

Usage: busy_streams.py OUT

One ProfilerStep#1 of STEP_MS on the host thread, which launches every
kernel (cudaLaunchKernel, its correlation id on the kernel) just before it
starts.  Four streams of GPU 0:
  stream 7:  NIDLE kernels of IDLE_US, spread evenly: about 1% busy;
  stream 8:  a kernel of BUSY_US in every SLOT_US: 95% busy;
  stream 9:  pairs of kernels that overlap (OVL_US each, the second
             starting OVL_SHIFT_US after the first) in every 2 * SLOT_US:
             the union is busy OVL_US + OVL_SHIFT_US of it, counted once;
  streams 20 to 20 + NFILL - 1: one short kernel each, lanes enough that
             the lanes do not all fit on an 80x23 screen.
Prints nothing; the check reads the trace itself.
"""
import json
import sys

BASE_NS = 1790000000000000000
STEP_MS = 20.0
NIDLE = 20
IDLE_US = 10.0
SLOT_US = 100.0
BUSY_US = 95.0
OVL_US = 60.0
OVL_SHIFT_US = 20.0
NFILL = 24
LAUNCH_US = 2.0


def meta(what, pid, tid, **args):
    """A metadata event: a process's or thread's name or labels."""
    return {"name": what, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": args}


def trace():
    pid, tid, dev = 1000, 1000, 0
    step_us = STEP_MS * 1000.0
    ev = [meta("process_name", pid, 0, name="python3"),
          meta("process_name", dev, 0, name="python3"),
          meta("process_labels", dev, 0, labels="GPU 0"),
          {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid,
           "tid": tid, "ts": 0.0, "dur": step_us, "args": {"External id": 1}}]
    kernels = []  # (stream, start us, dur us)
    for k in range(NIDLE):
        kernels.append((7, (k + 0.5) * step_us / NIDLE, IDLE_US))
    t = SLOT_US
    while t + SLOT_US <= step_us - SLOT_US:
        kernels.append((8, t, BUSY_US))
        t += SLOT_US
    t = SLOT_US
    while t + 2 * SLOT_US <= step_us - SLOT_US:
        kernels.append((9, t, OVL_US))
        kernels.append((9, t + OVL_SHIFT_US, OVL_US))
        t += 2 * SLOT_US
    for k in range(NFILL):
        kernels.append((20 + k, step_us / 2, IDLE_US))
    for s in sorted({k[0] for k in kernels}):
        ev.append(meta("thread_name", dev, s, name="stream %d " % s))
    corr = 100
    for s, start, dur in sorted(kernels, key=lambda k: k[1]):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                   "pid": pid, "tid": tid, "ts": round(start - LAUNCH_US, 3),
                   "dur": 1.0, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": "busy_kernel_s%d" % s, "pid": dev,
                   "tid": s, "ts": round(start, 3), "dur": dur,
                   "args": {"device": dev, "stream": s, "correlation": corr}})
        corr += 1
    return {"schemaVersion": 1, "baseTimeNanoseconds": BASE_NS, "displayTimeUnit": "ms",
            "deviceProperties": [{"id": dev, "name": "NVIDIA H100"}], "traceEvents": ev}


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: busy_streams.py OUT")
    with open(argv[1], "w") as f:
        json.dump(trace(), f)


if __name__ == "__main__":
    main(sys.argv)
