#!/usr/bin/env python3
"""GPU workloads whose bottleneck is known by construction (the truth suite).

Each case is a short loop built so that one cause bounds it: it runs for
WARM_S seconds unprofiled (what nvidia-smi's 100 ms rows see), then a few
steps under torch.profiler (CPU and CUDA activity):

  compute    large bf16 GEMMs queued back to back: the GPU never idles
  input      a DataLoader whose dataset sleeps per sample (num_workers=0),
             little GPU work a step: the GPU idles while the host fetches
  sync       ~2 ms of GEMMs, then loss.item() and ~2 ms of host work a step:
             without the .item() the host work would overlap the GEMMs, so
             the GPU idles after each synchronisation
  pageable   a 256 MiB pageable host tensor copied to the device each step,
             next to a tiny kernel: device copy time dominates
  launch     a narrow 48-layer MLP (64 wide, batch 16), forward and
             backward: each kernel is shorter than its launch, the host
             launches back to back
  straggler  two ranks over gloo on the one GPU; rank 1 does three times
             rank 0's GEMMs before each all-reduce, so rank 0 waits in it

Beside each trace the workload writes what it measured itself, without the
profiler's trace (CUDA events, perf_counter, epoch clocks): the ground truth
in truth.json, and the steps as OTLP/JSON spans in steps.otlp.json.  In
sync, the host's time from .item()'s return to the next step's first
launch (step_item_end_ns, step_launch_ns) is how long the GPU must wait:
the 2 ms of host work and the loop's own overhead around it.

Usage: workloads.py OUT_DIR [CASE ...]       (needs a CUDA build of PyTorch)
       workloads.py --cpu-dry-run OUT_DIR    (checks the script on a CPU)
"""
import json
import os
import random
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.profiler import ProfilerActivity

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from truthlib import (STEPS, SlowDataset, busy_host, gemms, note, otlp,  # noqa: E402
                      run_cases, run_ranks)
from truthlib import profiler as truth_profiler  # noqa: E402

DRY = False  # --cpu-dry-run: the same code on the CPU, sizes cut down
WARM_S = 2.0  # unprofiled seconds before the profiled steps of a case


def dev():
    return "cpu" if DRY else "cuda"


def sync():
    if not DRY:
        torch.cuda.synchronize()


class Timer:
    """GPU time between two points of the stream (CUDA events), or wall time
    when dry."""

    def __init__(self):
        if DRY:
            self.t0 = self.t1 = 0.0
        else:
            self.a = torch.cuda.Event(enable_timing=True)
            self.b = torch.cuda.Event(enable_timing=True)

    def start(self):
        if DRY:
            self.t0 = time.perf_counter()
        else:
            self.a.record()

    def stop(self):
        if DRY:
            self.t1 = time.perf_counter()
        else:
            self.b.record()

    def ms(self):
        if DRY:
            return (self.t1 - self.t0) * 1e3
        self.b.synchronize()
        return self.a.elapsed_time(self.b)


def profiler(path):
    acts = [ProfilerActivity.CPU] + ([] if DRY else [ProfilerActivity.CUDA])
    return truth_profiler(path, acts)


def drive(out, name, step):
    """Runs step(None) for WARM_S seconds unprofiled (the bulk of the run,
    which nvidia-smi's 100 ms rows see), then STEPS profiled steps, each
    step(m) filling the lists of m with what it measured."""
    end = time.perf_counter() + WARM_S
    while time.perf_counter() < end:
        step(None)
    sync()
    m = {}
    with profiler(os.path.join(out, name + ".pt.trace.json")) as prof:
        for _ in range(STEPS):
            step(m)
            prof.step()
    sync()
    return m


def case_compute(out, rec):
    n = 1024 if DRY else 8192
    per_step = 2 if DRY else 12
    a = torch.randn(n, n, device=dev(), dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev(), dtype=torch.bfloat16)

    def step(m):
        t = Timer()
        t.start()
        gemms(a, b, per_step)
        t.stop()
        if m is not None:
            note(m, "step_gpu_ms", t.ms())

    m = drive(out, "compute", step)
    rec.update(expect={"verdict": "compute", "gpu_busy_min": 0.9},
               gemm={"m": n, "n": n, "k": n, "dtype": "bfloat16", "per_step": per_step},
               tflops=2 * n ** 3 * per_step * len(m["step_gpu_ms"])
               / (sum(m["step_gpu_ms"]) / 1e3) / 1e12, **m)


def case_input(out, rec):
    batch, dim = 8, 1024
    it = iter(torch.utils.data.DataLoader(SlowDataset(dim), batch_size=batch,
                                          num_workers=0))
    w = torch.randn(dim, dim, device=dev())

    def step(m):
        f0 = time.perf_counter()
        x = next(it)
        note(m, "step_fetch_ms", (time.perf_counter() - f0) * 1e3)
        t = Timer()
        t.start()
        y = x.to(dev(), non_blocking=True)
        for _ in range(4):
            y = torch.tanh(torch.matmul(y, w))
        t.stop()
        if m is not None:
            note(m, "step_gpu_ms", t.ms())

    m = drive(out, "input", step)
    rec.update(expect={"verdict": "gpu idle", "cause": "input"},
               loader={"batch": batch, "sample_ms": SlowDataset.SAMPLE_MS, "num_workers": 0},
               **m)


def case_sync(out, rec):
    n = 256 if DRY else 4096
    per_step = 2 if DRY else 10  # about 2 ms on an H100
    host_ms = 2.0
    a = torch.randn(n, n, device=dev(), dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev(), dtype=torch.bfloat16)

    def step(m):
        s0 = time.perf_counter()
        t = Timer()
        t.start()
        note(m, "step_launch_ns", time.time_ns())  # the step's first GEMM goes
        c = gemms(a, b, per_step)
        t.stop()
        i0 = time.perf_counter()
        c.float().mean().item()  # the host reads a device value
        note(m, "step_item_ms", (time.perf_counter() - i0) * 1e3)
        note(m, "step_item_end_ns", time.time_ns())
        busy_host(host_ms)  # then works on the host, the value in hand
        note(m, "step_wall_ms", (time.perf_counter() - s0) * 1e3)
        if m is not None:
            note(m, "step_gpu_ms", t.ms())

    m = drive(out, "sync", step)
    rec.update(expect={"verdict": "gpu idle", "cause": "sync"},
               gemm={"n": n, "per_step": per_step}, host_ms_after_item=host_ms, **m)


def case_pageable(out, rec):
    nbytes = (16 if DRY else 256) << 20
    host = torch.empty(nbytes // 4, dtype=torch.float32).uniform_()  # pageable
    assert not host.is_pinned()

    def step(m):
        t = Timer()
        t.start()
        x = host.to(dev())  # pageable H2D: blocks the host too
        t.stop()
        x.mul_(2.0)
        if m is not None:
            note(m, "step_copy_ms", t.ms())

    m = drive(out, "pageable", step)
    rec.update(expect={"verdict": "device copies", "cause": "pageable H2D",
                       "advice": "pinned memory"},
               copy_bytes=nbytes,
               gbps=[nbytes / (ms / 1e3) / 1e9 for ms in m["step_copy_ms"] if ms > 0], **m)


def case_launch(out, rec):
    layers, width, batch = 48, 64, 16
    model = nn.Sequential(*[mod for _ in range(layers)
                            for mod in (nn.Linear(width, width), nn.ReLU())]).to(dev())
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device=dev())

    def step(m):
        w0 = time.perf_counter()
        t = Timer()
        t.start()
        opt.zero_grad(set_to_none=True)
        model(x).sum().backward()
        opt.step()
        t.stop()
        note(m, "step_wall_ms", (time.perf_counter() - w0) * 1e3)
        if m is not None:
            note(m, "step_span_gpu_ms", t.ms())

    m = drive(out, "launch", step)
    rec.update(expect={"verdict": "gpu idle", "cause": "launch"},
               mlp={"layers": layers, "width": width, "batch": batch}, **m)


def straggler_rank(rank, out, dry):
    global DRY
    DRY = dry  # a spawned process starts with the module's default
    n = 256 if DRY else 4096
    a = torch.randn(n, n, device=dev(), dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev(), dtype=torch.bfloat16)
    grad = torch.ones(1 << 20, device=dev())
    work = (3 if rank == 1 else 1) * (2 if DRY else 20)
    for _ in range(5 if DRY else 60):  # the bulk of the run, unprofiled
        gemms(a, b, work)
        dist.all_reduce(grad)
    sync()
    r = {"gemms_per_step": work}
    with profiler(os.path.join(out, "straggler_rank%d.pt.trace.json" % rank)) as prof:
        for _ in range(STEPS):
            gemms(a, b, work)
            sync()  # the rank's work for the step is done: it arrives
            note(r, "arrive_ns", time.time_ns())
            dist.all_reduce(grad)
            sync()
            note(r, "leave_ns", time.time_ns())
            prof.step()
    return r


def case_straggler(out, rec):
    rec.update(expect={"verdict": "straggler", "rank": 1, "waits": "rank 0"},
               backend="gloo", ranks=run_ranks(straggler_rank, 2, (out, DRY), timeout=300))


CASES = {"compute": case_compute, "input": case_input, "sync": case_sync,
         "pageable": case_pageable, "launch": case_launch, "straggler": case_straggler}


def main():
    global DRY, WARM_S
    args = sys.argv[1:]
    if args and args[0] == "--cpu-dry-run":
        DRY, WARM_S = True, 0.2
        args = args[1:]
    if not args:
        sys.exit("usage: workloads.py [--cpu-dry-run] OUT_DIR [CASE ...]")
    if not DRY and not torch.cuda.is_available():
        sys.exit("workloads.py: no CUDA device")
    out, names = args[0], args[1:] or list(CASES)
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    random.seed(0)
    host = socket.gethostname()
    truth = {"host": host, "torch": torch.__version__,
             "cuda": None if DRY else torch.version.cuda,
             "gpu": None if DRY else torch.cuda.get_device_name(0)}
    done = run_cases(out, names, CASES, truth)
    spans = [(name, t0, t1, {"case": name}) for name, t0, t1, _ in done]
    with open(os.path.join(out, "steps.otlp.json"), "w") as f:
        json.dump(otlp(spans, host, "gpu-truth", "tests/truth/gpu/workloads.py"), f)


if __name__ == "__main__":
    main()
