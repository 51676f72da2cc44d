#!/usr/bin/python3
"""PyTorch CPU workloads whose answer is known by construction (the truth
suite), for Debian's python3-torch (1.13, CPU, no Kineto).

Each case is a short training loop that runs WARM_S seconds unprofiled,
then a few steps under torch.profiler (CPU activity):

  loader     a small MLP fed by a DataLoader whose dataset sleeps
             SlowDataset.SAMPLE_MS per sample (batch 8, num_workers=0):
             each step waits on its input far longer than it computes
  item       a small MLP whose loop reads loss.item() every step; on a CPU
             the read is a plain memory load, no device synchronisation:
             the loop's time is the model's, and nothing in it is a GPU's
  straggler  two ranks over gloo (one process each, one thread each); rank
             1 does three times rank 0's matmuls before each all_reduce,
             so rank 1 arrives last and rank 0 waits in the collective

Beside each trace the workload writes what it measured with host clocks,
without the profiler's trace, in truth.json: each profiled step's end
(step_end_ns, the moment of prof.step(); the first step starts at
profile_start_ns), the time in the loader per step (fetch_start_ns,
fetch_end_ns), the time in .item(), and per rank the arrival at and the
departure from each all_reduce (arrive_ns, leave_ns).  Each trace's start
in epoch microseconds is kept as trace_start_us: the legacy trace's "ts"
counts from it (import with --time-offset TRACE_START_USus).  The steps go
to workflow.jsonl, a workflow manifest (importers/workflow.c).

Usage: workloads.py OUT_DIR [CASE ...]
"""
import os
import random
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.profiler import ProfilerActivity

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from truthlib import (STEPS, SlowDataset, gemms, manifest_line, note, profiler,  # noqa: E402
                      run_cases, run_ranks)

WARM_S = 0.5  # unprofiled seconds before the profiled steps of a case


def drive(out, name, step, rec):
    """Runs step(None) for WARM_S seconds unprofiled, then STEPS profiled
    steps, each step(m) filling the lists of m.  Keeps in rec the trace's
    file and start and each step's end on the epoch clock."""
    end = time.perf_counter() + WARM_S
    while time.perf_counter() < end:
        step(None)
    m = {}
    info = {}
    trace = name + ".pt.trace.json"
    with profiler(os.path.join(out, trace), [ProfilerActivity.CPU], info) as prof:
        m["profile_start_ns"] = time.time_ns()
        for _ in range(STEPS):
            step(m)
            note(m, "step_end_ns", time.time_ns())
            prof.step()
    rec.update(trace=trace + ".gz", trace_start_us=info["trace_start_us"], **m)


def mlp(dim, hidden):
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, 10))


def case_loader(out, rec):
    batch, dim = 8, 256
    it = iter(torch.utils.data.DataLoader(SlowDataset(dim), batch_size=batch,
                                          num_workers=0))
    model = mlp(dim, 256)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step(m):
        note(m, "fetch_start_ns", time.time_ns())
        x = next(it)
        note(m, "fetch_end_ns", time.time_ns())
        opt.zero_grad(set_to_none=True)
        model(x).pow(2).mean().backward()
        opt.step()

    drive(out, "loader", step, rec)
    rec.update(expect={"verdict": "input", "phase": "DataLoader __next__"},
               loader={"batch": batch, "sample_ms": SlowDataset.SAMPLE_MS, "num_workers": 0})


def case_item(out, rec):
    batch, dim = 64, 256
    model = mlp(dim, 512)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, dim)

    def step(m):
        opt.zero_grad(set_to_none=True)
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        i0 = time.time_ns()
        loss.item()  # the host reads the value: on a CPU, no synchronisation
        note(m, "item_ns", time.time_ns() - i0)

    drive(out, "item", step, rec)
    rec.update(expect={"verdict": "no GPU cause", "item_share_max": 0.05},
               mlp={"dim": dim, "hidden": 512, "batch": batch})


def straggler_rank(rank, out):
    torch.set_num_threads(1)
    n = 256
    a, b = torch.randn(n, n), torch.randn(n, n)
    grad = torch.ones(1 << 16)
    work = (3 if rank == 1 else 1) * 2
    for _ in range(20):  # the bulk of the run, unprofiled
        gemms(a, b, work)
        dist.all_reduce(grad)
    r = {"gemms_per_step": work}
    info = {}
    trace = "straggler_rank%d.pt.trace.json" % rank
    with profiler(os.path.join(out, trace), [ProfilerActivity.CPU], info) as prof:
        r["profile_start_ns"] = time.time_ns()
        for _ in range(STEPS):
            gemms(a, b, work)
            note(r, "arrive_ns", time.time_ns())  # the rank's work is done
            dist.all_reduce(grad)
            note(r, "leave_ns", time.time_ns())
            note(r, "step_end_ns", time.time_ns())
            prof.step()
    r.update(trace=trace + ".gz", trace_start_us=info["trace_start_us"])
    return r


def case_straggler(out, rec):
    rec.update(expect={"verdict": "straggler", "rank": 1, "waits": "rank 0"},
               backend="gloo", ranks=run_ranks(straggler_rank, 2, (out,), timeout=120))


CASES = {"loader": case_loader, "item": case_item, "straggler": case_straggler}


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: workloads.py OUT_DIR [CASE ...]")
    out, names = sys.argv[1], sys.argv[2:] or list(CASES)
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    random.seed(0)
    torch.set_num_threads(1)
    truth = {"kineto": torch.autograd.kineto_available()}
    done = run_cases(out, names, CASES, truth)
    with open(os.path.join(out, "workflow.jsonl"), "w") as f:
        for name, t0, t1, rec in done:
            traces = [r["trace"] for r in rec.get("ranks", [])] or [rec.get("trace")]
            f.write(manifest_line(name, t0, t1, truth["host"], pid=os.getpid(),
                                  traces=traces) + "\n")


if __name__ == "__main__":
    main()
