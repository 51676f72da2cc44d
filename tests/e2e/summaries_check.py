#!/usr/bin/env python3
"""The explorer's summaries (:kernels, :ops, :api, :annotations) against an
independent computation from the raw Chrome trace (json and gzip only), for
tests/e2e/summaries.sh and tests/e2e/annotations.sh.

    summaries_check.py TRACE SCOPE KIND SUMMARY.json [PHASES.json]
    summaries_check.py ranks SUMMARY.json TRACE...

SCOPE is "all" (every phase of the file) or "step:NAME" (the ProfilerStep
NAME on its CPU thread: the host events inside its window on that thread,
and the device work their runtime calls launched, by correlation id).
KIND annotations: the user_annotation events (ProfilerStep#N left out:
those are steps) by name, each instance's host time, self time and the
union of the device work launched beneath it; and, for "all", the
gpu_user_annotation events of each name (those named as a ProfilerStep
left out), counted and their durations summed.
SUMMARY.json is `grademl-tui summary --format json`; PHASES.json, when
given, `query` rows (id, name, start) of the scope's phases, to check that
each row's first instance is the one that started first.

The ranks mode checks :ranks of a step into which the TRACEs (one per
rank, none with two ProfilerStep names, so HTA leaves nothing out) were
imported: each rank's step time (its first event's start to its last
event's end, the profiler's bookkeeping, Kineto's pid "Spans" or "Traces",
left out), compute and comm (the unions of its COMP and COMM device
work, HTA's kernel types) and idle% (its device work's window less their
union).  Prints one line
per disagreement and exits 1 when there is any.
"""
import gzip
import json
import math
import sys
from decimal import Decimal

DEVICE = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset", "mtia_ccp_events"}
RUNTIME = {"cuda_runtime", "runtime", "cuda_driver", "mtia_runtime", "hip_runtime",
           "xpu_runtime", "xpu_driver", "privateuse1_runtime", "privateuse1_driver",
           "cuda_sync"}
NOT_OPS = DEVICE | RUNTIME | {"gpu_user_annotation", "user_annotation", "trace",
                              "python_function", "python"}


def ns(x):
    return int(Decimal(x) * 1000)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal, parse_int=Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for i, e in enumerate(evs):
        if e.get("ph") != "X" or "dur" not in e:
            continue
        cat = str(e.get("cat", "")).lower()
        out.append({"i": i, "name": e.get("name", ""), "cat": cat, "pid": str(e.get("pid")),
                    "tid": str(e.get("tid")), "ts": ns(e["ts"]), "dur": ns(e["dur"]),
                    "args": e.get("args") or {}})
    return out


def nest(host):
    """Each host event's parent on its thread by time containment."""
    by_thread = {}
    for e in host:
        by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"], e["i"]))
        stack = []
        for e in evs:
            while stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            e["parent"] = stack[-1] if stack else None
            e["children"] = []
            if stack:
                stack[-1]["children"].append(e)
            stack.append(e)


def median(v):
    v = sorted(v)
    n = len(v)
    return float(v[n // 2]) if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def hta_type(name):
    if name.startswith("nccl") or "gloo:" in name:
        return "COMM"
    if "Memcpy" in name or "Memset" in name:
        return "MEM"
    return "COMP"


def union(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def annotations(host, inside, work, launch, gpu_all, scope):
    """Groups of the host annotations in scope, each instance's device time
    (the union of the device work launched beneath it) and the GPU-side
    annotations by name."""
    groups = {}
    for e in inside:
        if e["cat"] == "user_annotation" and not e["name"].startswith("ProfilerStep#"):
            groups.setdefault(e["name"], []).append(e)
    spans = {}
    for d in work:
        r = launch.get(d["args"].get("correlation"))
        while r is not None:
            if r["cat"] == "user_annotation":
                spans.setdefault(r["i"], []).append((d["ts"], d["ts"] + d["dur"]))
            r = r["parent"]
    steps = {e["name"] for e in host if e["name"].startswith("ProfilerStep#")}
    gpu = {}
    for e in gpu_all if scope == "all" else []:
        if e["name"] not in steps:
            gpu.setdefault(e["name"], []).append(e)
    device = {i: union(s) for i, s in spans.items()}
    return groups, device, gpu


def ranks(summary, traces):
    got = {r["rank"]: r for r in json.load(open(summary))}
    bad = []
    for path in traces:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, parse_float=Decimal, parse_int=Decimal)
        rank = f"rank {int(doc['distributedInfo']['rank'])}"
        evs = load(path)
        dev = [(e["ts"], e["ts"] + e["dur"], hta_type(e["name"])) for e in evs
               if e["cat"] in DEVICE]
        window = max(b for a, b, t in dev) - min(a for a, b, t in dev)
        work = [e for e in evs if e["pid"] not in ("Spans", "Traces")]
        want = {"step": max(e["ts"] + e["dur"] for e in work) - min(e["ts"] for e in work),
                "compute": union([(a, b) for a, b, t in dev if t == "COMP"]),
                "comm": union([(a, b) for a, b, t in dev if t == "COMM"]),
                "idle%": 100.0 * (window - union([(a, b) for a, b, t in dev])) / window}
        r = got.get(rank)
        if r is None:
            bad.append(f"ranks: no row {rank}")
            continue
        for k, v in want.items():
            if r[k] is None or abs(r[k] - v) > 1e-9 * max(1.0, abs(v)):
                bad.append(f"ranks {rank}: {k} {r[k]} != {v}")
    for line in bad:
        print(line)
    print(f"ranks: {len(traces)} ranks, {len(bad)} disagreements")
    sys.exit(1 if bad else 0)


def main():
    if sys.argv[1] == "ranks":
        ranks(sys.argv[2], sys.argv[3:])
    trace, scope, kind, summary = sys.argv[1:5]
    phases = json.load(open(sys.argv[5])) if len(sys.argv) > 5 else None
    evs = load(trace)
    host = [e for e in evs if e["cat"] not in DEVICE and e["cat"] != "gpu_user_annotation"]
    dev = [e for e in evs if e["cat"] in DEVICE]
    nest(host)
    if scope == "all":
        inside = host
        work = dev
    else:
        name = scope.split(":", 1)[1]
        step = [e for e in host if e["name"] == name]
        assert len(step) == 1, f"{len(step)} events named {name}"
        s = step[0]
        inside = []
        todo = list(s["children"])
        while todo:
            e = todo.pop()
            inside.append(e)
            todo.extend(e["children"])
        corr = {e["args"].get("correlation") for e in inside if e["cat"] in RUNTIME}
        corr.discard(None)
        work = [d for d in dev if d["args"].get("correlation") in corr]
    launch = {}
    for e in inside:
        c = e["args"].get("correlation")
        if e["cat"] in RUNTIME and c is not None:
            launch.setdefault(c, e)
    groups = {}
    if kind == "kernels":
        for d in work:
            groups.setdefault(d["name"], []).append(d)
    elif kind == "ops":
        for e in inside:
            if e["cat"] not in NOT_OPS and not e["name"].startswith("ProfilerStep#"):
                groups.setdefault(e["name"], []).append(e)
        under = {}  # op event index -> device time beneath it
        for d in work:
            r = launch.get(d["args"].get("correlation"))
            while r is not None:
                under[r["i"]] = under.get(r["i"], 0) + d["dur"]
                r = r["parent"]
    elif kind == "annotations":
        groups, device, gpu = annotations(
            host, inside, work, launch, [e for e in evs if e["cat"] == "gpu_user_annotation"],
            scope)
    else:
        for e in inside:
            if e["cat"] in RUNTIME:
                groups.setdefault(e["name"], []).append(e)

    got = {r["name"]: r for r in json.load(open(summary))}
    bad = []

    def check(name, what, want, have, tol=0.0):
        if want is None or have is None:
            if want is not have:
                bad.append(f"{kind} {name[:60]!r}: {what} {have} != {want}")
        elif (tol == 0 and have != want) or \
                (tol and abs(have - want) > tol * max(1.0, abs(want))):
            bad.append(f"{kind} {name[:60]!r}: {what} {have} != {want}")

    names = set(groups) | (set(gpu) if kind == "annotations" else set())
    if set(got) != names:
        bad.append(f"{kind}: names differ: only in the summary {sorted(set(got) - set(groups))[:3]},"
                   f" only in the trace {sorted(names - set(got))[:3]}")
    total_all = sum(e["dur"] for g in groups.values() for e in g)
    starts = {}
    if phases:
        for p in phases:
            starts[p["id"]] = (p["name"], p["start"])
    for name in names:
        r = got.get(name)
        if r is None:
            continue
        g = groups.get(name, [])
        if kind == "annotations":
            gg = gpu.get(name, [])
            check(name, "gpu count", len(gg), r["gpu count"])
            check(name, "gpu time", sum(e["dur"] for e in gg) if gg else None, r["gpu time"])
            if not g:
                check(name, "count", 0, r["count"])
                check(name, "total", None, r["total"])
                continue
        d = [e["dur"] for e in g]
        check(name, "count", len(d), r["count"])
        check(name, "total", sum(d), r["total"])
        check(name, "mean", sum(d) / len(d), r["mean"], 1e-9)
        check(name, "max", max(d), r["max"])
        if kind in ("kernels", "annotations"):
            check(name, "min", min(d), r["min"])
            sd = 0.0 if len(d) == 1 else math.sqrt(
                sum((x - sum(d) / len(d)) ** 2 for x in d) / (len(d) - 1))
            check(name, "stddev", sd, r["stddev"], 1e-6)
        if kind == "annotations":
            self_ns = sum(e["dur"] - sum(c["dur"] for c in e["children"]) for e in g)
            check(name, "self", self_ns, r["self"])
            check(name, "device", sum(device.get(e["i"], 0) for e in g), r["device"])
        if kind == "kernels":
            check(name, "type", hta_type(name), r["type"])
            check(name, "median", median(d), r["median"], 1e-9)
            check(name, "share%", 100.0 * sum(d) / total_all, r["share%"], 1e-9)
            b = sum(int(e["args"].get("bytes", 0)) for e in g)
            check(name, "bytes", b or None, r["bytes"]) if b or r["bytes"] is not None else None
            if b:
                check(name, "GB/s", b / sum(d), r["GB/s"], 1e-9)
        if kind == "ops":
            self_ns = sum(e["dur"] - sum(c["dur"] for c in e["children"]) for e in g)
            check(name, "self", self_ns, r["self"])
            check(name, "device", sum(under.get(e["i"], 0) for e in g), r["device"])
        if phases is not None:
            pn, ps = starts.get(r["first"], (None, None))
            check(name, "first's name", name, pn)
            check(name, "first's start", min(p["start"] for p in phases if p["name"] == name), ps)
    for line in bad[:20]:
        print(line)
    if len(bad) > 20:
        print(f"... {len(bad) - 20} more")
    print(f"{kind} {scope}: {len(names)} names, {sum(len(g) for g in groups.values())} phases,"
          f" {len(bad)} disagreements")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
