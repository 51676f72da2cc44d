#!/usr/bin/env python3
"""CPU workloads whose bottleneck is known by construction (the truth suite).

Each case is one step of a workflow, run for STEP_S seconds while sysstat's
sadc records the host every second (capture.sh):

  cores    one busy loop per CPU (processes): every core saturated
  thread   one busy loop in this process: one core saturated, the others idle
  disk     4 KiB writes, each followed by fsync, to a file on the root disk:
           the writer waits on the device; one synchronous request at a time
           keeps %util under 100 however slow the disk is, with iowait
  sleep    time.sleep: waiting on an outside party, no resource busy

Between the steps the host rests GAP_S seconds, so that no sar sample is
shared by two steps.  The steps go to OUT/workflow.jsonl (grademl-tui's
manifest: step, start_ns, end_ns, host) and what each step measured itself
(loop iterations, fsyncs, CPU time) to OUT/truth.json.

Usage: workloads.py OUT_DIR [CASE ...]
"""
import json
import multiprocessing as mp
import os
import socket
import sys
import time

STEP_S = 4.0
GAP_S = 2.0
CASES = ["cores", "thread", "disk", "sleep"]


def spin(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


def cores(out):
    n = os.cpu_count() or 1
    with mp.Pool(n) as pool:
        loops = pool.map(spin, [STEP_S] * n)
    return {"processes": n, "loops": sum(loops)}


def thread(out):
    return {"loops": spin(STEP_S)}


def disk(out):
    path = os.path.join(out, "fsync.tmp")
    block = os.urandom(4096)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    n = 0
    try:
        end = time.monotonic() + STEP_S
        while time.monotonic() < end:
            os.write(fd, block)
            os.fsync(fd)
            n += 1
    finally:
        os.close(fd)
        os.unlink(path)
    return {"fsyncs": n, "bytes": n * len(block)}


def sleep(out):
    time.sleep(STEP_S)
    return {}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    cases = sys.argv[2:] or CASES
    os.makedirs(out, exist_ok=True)
    host = socket.gethostname()
    steps, truth = [], {}
    for name in cases:
        time.sleep(GAP_S)
        cpu0 = time.process_time()
        start = time.time_ns()
        got = globals()[name](out)
        end = time.time_ns()
        got["cpu_s"] = time.process_time() - cpu0
        steps.append({"step": name, "start_ns": start, "end_ns": end, "host": host})
        truth[name] = got
        print(f"{name}: {(end - start) / 1e9:.2f} s {got}", flush=True)
    time.sleep(GAP_S)
    with open(os.path.join(out, "workflow.jsonl"), "w") as f:
        for s in steps:
            f.write(json.dumps(s) + "\n")
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump({"host": host, "cpus": os.cpu_count(), "cases": truth}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
