"""What the truth suite's workloads share (tests/truth/*/workloads.py).

Each workload runs cases whose bottleneck is known by construction, each a
short loop profiled for WAIT + WARMUP + ACTIVE steps (only the ACTIVE ones
are in the trace, as ProfilerStep#WAIT+WARMUP .. #STEPS-1).  Beside each
trace it writes what the case measured itself with host clocks (truth.json)
and the cases as steps of a workflow: OTLP/JSON spans (otlp) or a workflow
manifest in JSON lines (manifest_line).  Importable both on a CUDA machine
and with Debian's CPU-only python3-torch 1.13.
"""
import json
import os
import random
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import profile, schedule

WAIT, WARMUP, ACTIVE = 1, 1, 3
STEPS = WAIT + WARMUP + ACTIVE


def profiler(path, activities, info=None):
    """torch.profiler over STEPS steps of which the ACTIVE last are traced,
    exported to path.  info, when given, gets the trace's start in epoch
    microseconds (trace_start_us): a profiler without Kineto (Debian's
    build) writes the legacy format, whose "ts" counts from that start."""

    def on_ready(p):
        p.export_chrome_trace(path)
        if info is not None:
            info["trace_start_us"] = int(p.profiler.kineto_results.trace_start_us())

    return profile(activities=activities,
                   schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                   on_trace_ready=on_ready)


def note(m, key, value):
    """Appends value to m[key]; m None (an unprofiled step) keeps nothing."""
    if m is not None:
        m.setdefault(key, []).append(value)


def busy_host(ms):
    """Python work on the host for about ms milliseconds (not a sleep)."""
    end = time.perf_counter() + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        x += random.random()
    return x


def gemms(a, b, n):
    c = a
    for _ in range(n):
        c = torch.matmul(a, b)
    return c


class SlowDataset(torch.utils.data.Dataset):
    """A sample costs SAMPLE_MS of waiting (a slow disk or remote store)."""
    SAMPLE_MS = 2.0

    def __init__(self, dim):
        self.dim = dim

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        time.sleep(self.SAMPLE_MS / 1e3)
        return torch.full((self.dim,), float(i % 7))


def run_cases(out, names, cases, truth):
    """Runs each named case (cases[name](out, rec) fills rec), half a
    second apart; a case that fails keeps its error and the others go on.
    Writes OUT/truth.json (truth, with one record per case under "cases")
    and returns [(name, start_ns, end_ns, rec)]."""
    truth.setdefault("host", socket.gethostname())
    truth.setdefault("torch", torch.__version__)
    truth["steps"] = {"wait": WAIT, "warmup": WARMUP, "active": ACTIVE}
    truth["cases"] = {}
    done = []
    for name in names:
        rec = {}
        t0 = time.time_ns()
        try:
            cases[name](out, rec)
        except Exception as e:  # keep what the other cases captured
            rec["error"] = repr(e)
            print("# %s: failed: %r" % (name, e), file=sys.stderr, flush=True)
        t1 = time.time_ns()
        rec.update(start_ns=t0, end_ns=t1)
        truth["cases"][name] = rec
        done.append((name, t0, t1, rec))
        print("# %s: %.2f s" % (name, (t1 - t0) / 1e9), file=sys.stderr, flush=True)
        time.sleep(0.5)  # a visible gap between the cases in the metrics
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return done


def _rank_main(target, rank, world, port, q, args):
    """One rank's process: joins the gloo group on loopback, runs
    target(rank, *args) and puts the record it returns on q."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    r = target(rank, *args)
    dist.destroy_process_group()
    r["rank"] = rank
    q.put(r)


def run_ranks(target, world, args, timeout):
    """Runs target(rank, *args) in world spawned processes joined over gloo,
    each returning a record with arrive_ns: its arrival at each profiled
    step's collective.  Returns the records by rank, each with wait_ms: at
    each step, from its arrival to the last rank's (what it waits)."""
    port = 29500 + os.getpid() % 1000
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_rank_main, args=(target, r, world, port, q, args))
             for r in range(world)]
    for p in procs:
        p.start()
    ranks = sorted((q.get(timeout=timeout) for _ in procs), key=lambda r: r["rank"])
    for p in procs:
        p.join()
        if p.exitcode:
            raise RuntimeError("rank exited with %d" % p.exitcode)
    last = [max(r["arrive_ns"][i] for r in ranks) for i in range(STEPS)]
    for r in ranks:
        r["wait_ms"] = [(last[i] - r["arrive_ns"][i]) / 1e6 for i in range(STEPS)]
    return ranks


def otlp(spans, host, service, scope):
    """One root span named service over [(name, t0, t1, attrs)] as its
    children, OTLP/JSON, on resource host.name = host."""
    trace_id = "%032x" % random.getrandbits(128)

    def span(name, sid, parent, t0, t1, attrs):
        s = {"traceId": trace_id, "spanId": sid, "name": name, "kind": 1,
             "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t1),
             "attributes": [{"key": k, "value": {"stringValue": str(v)}}
                            for k, v in attrs.items()]}
        if parent:
            s["parentSpanId"] = parent
        return s

    root = "%016x" % random.getrandbits(64)
    out = [span(service, root, None, spans[0][1], spans[-1][2], {})]
    for name, t0, t1, attrs in spans:
        out.append(span(name, "%016x" % random.getrandbits(64), root, t0, t1, attrs))
    res = {"attributes": [{"key": "host.name", "value": {"stringValue": host}},
                          {"key": "service.name", "value": {"stringValue": service}}]}
    return {"resourceSpans": [{"resource": res, "scopeSpans": [
        {"scope": {"name": scope}, "spans": out}]}]}


def manifest_line(step, t0, t1, host, **attrs):
    """One step of a workflow manifest (importers/workflow.c), JSON text."""
    return json.dumps(dict(step=step, start_ns=t0, end_ns=t1, host=host, **attrs))
