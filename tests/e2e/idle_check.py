#!/usr/bin/env python3
"""Why the GPU idles, and its copies, computed from raw Kineto traces with
json and gzip only, and compared with what `grademl-tui report --format
json` says (the rule is the man page's, ANALYSES, "Why the GPU idles").

    idle_check.py [--case NAME TRUTH.json] REPORT.json TRACE...

For each trace, every stream of its GPU and the GPU as a whole (all its
streams): the idle gaps are cut, each gets its cause by the rule, and the
time and count per cause must equal the report's; so must each stream's
copies.  With --case, a workload of tests/truth/gpu (workloads.py) whose
answer is known by construction: the report's issues must give its verdict,
and the figures must agree with what the workload measured itself
(TRUTH.json).  Prints one "ok - ..." or "not ok - ... (why)" line per check.
"""
import gzip
import json
import os
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

LAUNCH_NS = 100000  # 100 us
DEVICE = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
COPY = {"gpu_memcpy", "memcpy"}
RUNTIME = {"cuda_runtime", "runtime", "cuda_driver", "mtia_runtime", "hip_runtime", "cuda_sync"}
SPAN = {"trace", "python_function", "python"}
SYNC_CALLS = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
              "cudaMemcpy", "cudaMemcpy2D", "cuCtxSynchronize", "cuStreamSynchronize",
              "cuEventSynchronize", "hipDeviceSynchronize", "hipStreamSynchronize",
              "hipEventSynchronize", "hipMemcpy", "hipMemcpyWithStream"}
SYNC_OPS = {"aten::item", "aten::_local_scalar_dense"}
COMM_PREFIX = ("c10d::", "gloo:", "nccl:", "mpi:", "ucc:", "record_param_comms", "ProcessGroup")
COMM_PART = ("all2all", "alltoall", "all_to_all")
INPUT_PART = ("batch", "fetch", "dataload", "data_load", "load_data")
CAUSES = ("launch", "sync", "communication", "input", "host", "device")


def ns(v):
    """Microseconds as Kineto writes them to integer ns, half up."""
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding=ROUND_HALF_UP))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def union(spans):
    out = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def subtract(a, b):
    out = []
    for s, e in a:
        at = s
        for x, y in b:
            if y <= at or x >= e:
                continue
            if x > at:
                out.append([at, x])
            at = max(at, y)
        if at < e:
            out.append([at, e])
    return out


def cover(spans, lo, hi):
    return sum(max(0, min(e, hi) - max(s, lo)) for s, e in spans if s < hi and e > lo)


def kind_of(e):
    cat = str(e.get("cat", "")).lower()
    if cat in RUNTIME:
        return "runtime"
    if e["name"].startswith("ProfilerStep#"):
        return "profiler_step"
    if cat == "user_annotation":
        return "annotation"
    if cat in SPAN:
        return "span"
    return "operator"


def copy_flags(name):
    if not name.startswith("Memcpy"):
        return set()
    f = {"htod"} if "HtoD" in name else {"dtoh"} if "DtoH" in name else set()
    if f and "Pageable" in name:
        f.add("pageable")
    return f


class Trace:
    def __init__(self, path):
        ev = [e for e in load(path) if e.get("ph") == "X" and "name" in e]
        self.path = path
        dev, host = [], []
        for e in ev:
            cat = str(e.get("cat", "")).lower()
            if cat in DEVICE:
                dev.append(e)
            elif cat != "gpu_user_annotation":
                host.append(e)
        # the launching call of each correlation id: the first on a thread
        calls = {}
        for e in host:
            c = e.get("args", {}).get("correlation")
            if kind_of(e) == "runtime" and c is not None and c not in calls:
                calls[c] = e
        # the last profiler step is left out (HTA), when there are two: the
        # work launched from the latest start of a host ProfilerStep on
        steps = [e for e in ev if e["name"].startswith("ProfilerStep")
                 and str(e.get("cat", "")).lower() not in DEVICE | {"gpu_user_annotation"}]
        cutoff = max(ns(e["ts"]) for e in steps) if len({e["name"] for e in steps}) > 1 else None
        self.items, launched = [], []
        for e in dev:
            call = calls.get(e.get("args", {}).get("correlation"))
            s = ns(e["ts"])
            it = {"start": s, "end": s + ns(e.get("dur", 0)), "name": e["name"],
                  "stream": (e.get("pid"), e.get("tid")),
                  "copy": str(e.get("cat", "")).lower() in COPY,
                  "flags": copy_flags(e["name"]), "bytes": e.get("args", {}).get("bytes", 0),
                  "thread": (call["pid"], call["tid"]) if call else None,
                  "lstart": ns(call["ts"]) if call else None,
                  "lend": ns(call["ts"]) + ns(call.get("dur", 0)) if call else None}
            launched.append(it)
            if cutoff is not None and (call is None or it["lstart"] >= cutoff):
                continue
            self.items.append(it)
        self.launched = launched
        self.threads = self.host_side(host, launched)

    @staticmethod
    def host_side(host, launched):
        th = {}

        def t(key):
            return th.setdefault(key, {"comm": [], "input": [], "sync": [], "ops": [],
                                       "starts": []})
        every_comm = []
        for e in host:
            key, k, name = (e.get("pid"), e.get("tid")), kind_of(e), e["name"]
            s = ns(e["ts"])
            span = [s, s + ns(e.get("dur", 0))]
            low = name.lower()
            if name.startswith(COMM_PREFIX) or any(p in low for p in COMM_PART):
                t(key)["comm"].append(span)
                every_comm.append(span)
            if "dataloader" in low or (k == "annotation" and any(p in low for p in INPUT_PART)):
                t(key)["input"].append(span)
            if (k == "runtime" and name in SYNC_CALLS) or (k == "operator" and name in SYNC_OPS):
                t(key)["sync"].append(span)
            if k in ("operator", "runtime"):
                t(key)["ops"].append(span)
        for it in launched:
            if it["thread"] is None:
                continue
            x = t(it["thread"])
            x["starts"].append(it["lstart"])
            if "htod" in it["flags"]:
                x["input"].append([it["lstart"], it["lend"]])
            if {"dtoh", "pageable"} <= it["flags"]:
                x["sync"].append([it["lstart"], it["lend"]])
        every_comm = union(every_comm)
        for x in th.values():
            ops = union(x["ops"])
            x["comm"] = union(x["comm"] + subtract(every_comm, ops))
            x["input"], x["sync"] = union(x["input"]), union(x["sync"])
            x["starts"].sort()
        return th

    def cause(self, g0, g1, nxt):
        """The man page's rule, first that applies."""
        length = g1 - g0
        if nxt["thread"] is None:
            return "host"
        if nxt["lstart"] < g0 and length <= LAUNCH_NS:
            return "launch"
        if nxt["lend"] <= g0 and length > LAUNCH_NS:
            return "device"
        x = self.threads[nxt["thread"]]
        if 2 * cover(x["comm"], g0, g1) >= length:
            return "communication"
        if 2 * cover(x["input"], g0, g1) >= length:
            return "input"
        if any(s < g0 <= e for s, e in x["sync"]) or 2 * cover(x["sync"], g0, g1) >= length:
            return "sync"
        points = [g0] + [s for s in x["starts"] if g0 < s < g1] + [g1]
        if all(b - a <= LAUNCH_NS for a, b in zip(points, points[1:])):
            return "launch"
        return "host"

    def causes(self, items):
        """{cause: [ns, gaps]} over the idle gaps of items, and the gaps."""
        out = {c: [0, 0] for c in CAUSES}
        gaps = []
        items = sorted(items, key=lambda i: (i["start"], i["end"]))
        end = items[0]["end"] if items else 0
        for it in items[1:]:
            if it["start"] > end:
                c = self.cause(end, it["start"], it)
                out[c][0] += it["start"] - end
                out[c][1] += 1
                gaps.append((end, it["start"], c))
            end = max(end, it["end"])
        return out, gaps

    def figures(self):
        streams = {}
        for it in self.items:
            streams.setdefault(it["stream"], []).append(it)
        out = {"gpu": self.causes(self.items)[0], "streams": {}}
        for key, its in streams.items():
            causes, gaps = self.causes(its)
            copies = [i for i in its if i["copy"]]
            pageable = [i for i in copies if "pageable" in i["flags"]]

            def length(xs):
                return sum(e - s for s, e in union([[i["start"], i["end"]] for i in xs]))
            window = max(i["end"] for i in its) - min(i["start"] for i in its)
            out["streams"][key] = {
                "causes": causes, "gaps": gaps, "window_ns": window,
                "idle_ns": window - length(its),
                "copies": {"count": len(copies), "ns": length(copies),
                           "bytes": sum(int(i["bytes"]) for i in copies),
                           "pageable": len(pageable), "pageable_ns": length(pageable),
                           "pageable_bytes": sum(int(i["bytes"]) for i in pageable)}}
        return out


def number(s):
    m = re.search(r"(\d+)\s*$", str(s))
    return int(m.group(1)) if m else None


def by_cause(x):
    """The report's idle time and gaps by cause of a GPU or stream, or None."""
    c = x.get("idle_causes")
    return {k: [c[k]["ns"], c[k]["gaps"]] for k in CAUSES} if c else None


def issues(report, kind):
    return [dict(u, cause=u.get("cause")) for u in report["top_issues"] if u["kind"] == kind]


def mean(xs):
    return sum(xs) / len(xs)


def near(a, b, rel):
    return abs(a - b) <= rel * abs(b)


def verdict(case, report, traces, truth, check):
    """The verdict of a workload whose bottleneck is known by construction."""
    t = truth["cases"][case]
    idle, copies = issues(report, "idle-gpu"), issues(report, "copy-bound")
    first = idle[0]["cause"] if idle else None
    tr = traces[0]
    gpu = tr.figures()["gpu"]
    total = sum(v[0] for v in gpu.values())
    window = max(i["end"] for i in tr.items) - min(i["start"] for i in tr.items)

    def share(c):
        return gpu[c][0] / total if total else 0

    def gaps(c):
        _, g = tr.causes(tr.items)
        return [(b - a) / 1e6 for a, b, k in g if k == c]
    if case in ("input", "sync", "launch"):
        check(first == case, "%s: the first idle-gpu issue's cause is %s" % (case, case),
              "it is %s" % first)
        check(share(case) >= {"input": 0.9, "sync": 0.9, "launch": 0.75}[case],
              "%s: %s holds most of the GPU's idle time" % (case, case),
              "%.0f%%" % (100 * share(case)))
    if case == "input":
        # a gap of cause input is the loader's wait (17 ms a step)
        check(near(mean(gaps("input")), mean(t["step_fetch_ms"]), 0.10),
              "input: an input gap lasts the loader's wait",
              "%.2f ms against %.2f ms" % (mean(gaps("input")), mean(t["step_fetch_ms"])))
    if case == "sync":
        # after .item() the host works 2 ms and the loop goes round: the GPU
        # waits from .item()'s return to the next step's first launch, which
        # the workload's own clock measured; the checker's items hold the
        # traced steps but the last, so gap i follows traced step i
        first_step = truth["steps"]["wait"] + truth["steps"]["warmup"]
        ends, launches = t["step_item_end_ns"], t["step_launch_ns"]
        want = [(launches[k + 1] - ends[k]) / 1e6 for k in range(first_step, len(ends) - 1)]
        got = gaps("sync")
        check(got and len(got) <= len(want)
              and all(near(g, w, 0.10) for g, w in zip(got, want)),
              "sync: a sync gap lasts the host's time from .item() to its next launch",
              "%s ms against %s ms" % (["%.2f" % g for g in got], ["%.2f" % w for w in want]))
        check(got and min(got) >= t["host_ms_after_item"],
              "sync: each sync gap holds the host work after .item()",
              "%s ms against %.2f ms" % (["%.2f" % g for g in got], t["host_ms_after_item"]))
    if case == "compute":
        check(not idle and not copies, "compute: no idle-gpu or copy-bound issue",
              "%d, %d" % (len(idle), len(copies)))
        check(total < 0.1 * window, "compute: the GPU idles under 10% of its window",
              "%.1f%%" % (100.0 * total / window))
    if case == "pageable":
        check(not idle, "pageable: no idle-gpu issue", "%d" % len(idle))
        soft = issues(report, "software-bound")
        check(not soft, "pageable: not software-bound (the copies bound it)",
              json.dumps(soft)[:200])
        check(len(copies) == 1 and copies[0]["cause"] == "pageable"
              and "pinned memory" in copies[0]["explanation"],
              "pageable: copy-bound, pageable, pinned memory advised",
              json.dumps(copies)[:200])
        # every traced step's copy, in order, against the CUDA events of
        # its step (the traced steps are the last of the workload's)
        mine = sorted((i for i in tr.launched if i["copy"]), key=lambda i: i["start"])
        step_ms = t["step_copy_ms"][-len(mine):] if mine else []
        lasts = [(i["end"] - i["start"]) / 1e6 for i in mine]
        check(mine and all(near(a, b, 0.05) for a, b in zip(lasts, step_ms)),
              "pageable: each copy lasts what CUDA events measured in its step",
              "%s against %s ms" % (["%.2f" % x for x in lasts], ["%.2f" % x for x in step_ms]))
        got = sum(int(i["bytes"]) for i in mine) / max(1, sum(i["end"] - i["start"] for i in mine))
        want = t["copy_bytes"] * len(step_ms) / max(1e-9, sum(step_ms) / 1e3) / 1e9
        check(near(got, want, 0.05), "pageable: the copies' GB/s is the workload's",
              "%.2f against %.2f" % (got, want))
        # the path holds the host in each copy: twice as fast, a copy's call
        # returns half its hold sooner; the path names the copies by step,
        # each matched here to the raw copy its length is
        cp = [p for p in report["critical_path"] if p["whatif_2x_makespan_ns"] is not None
              and p["path"].endswith("Memcpy HtoD (Pageable -> Device)")]
        why = []
        for p in cp:
            c = min(mine, key=lambda i: abs((i["end"] - i["start"]) - p["on_path_ns"]))
            gain, hold = p["makespan_ns"] - p["whatif_2x_makespan_ns"], c["lend"] - c["start"]
            if not near(gain, hold / 2, 0.01):
                why.append("%s: gain %d ns, hold %d ns" % (p["path"][-60:], gain, hold))
        check(len(cp) == len(mine) and not why,
              "pageable: each copy twice as fast returns its call sooner by half its hold",
              "%d copies on the path of %d; %s" % (len(cp), len(mine), "; ".join(why)))
    if case == "straggler":
        rank0 = [u for u in idle if "/rank 0/" in (u["path"] or "")]
        check(bool(rank0) and rank0[0]["cause"] == "communication",
              "straggler: rank 0's first idle-gpu issue is communication",
              json.dumps(rank0)[:200])
        # both ranks share the one GPU: while rank 1 computes, rank 0's
        # queued work waits (cause device); of what rank 0's host held it
        # idle for, the collective holds nearly all
        host = total - gpu["device"][0]
        comm = gpu["communication"][0] / host if host else 0
        check(comm >= 0.9,
              "straggler: communication holds the idle time rank 0's host caused",
              "%.0f%% (device %.0f%% of all)" % (100 * comm, 100 * share("device")))
        # rank 0 idles in the all-reduce of the kept steps (2 and 3)
        r0 = [r for r in t["ranks"] if r["rank"] == 0][0]
        inside = sum((r0["leave_ns"][i] - r0["arrive_ns"][i]) / 1e6 for i in (2, 3))
        got = gpu["communication"][0] / 1e6
        check(near(got, inside, 0.10), "straggler: rank 0's communication idle is its wait",
              "%.2f ms against %.2f ms" % (got, inside))


def main():
    args = sys.argv[1:]
    case = truth = None
    if args and args[0] == "--case":
        case, truth, args = args[1], json.load(open(args[2])), args[3:]
    report = json.load(open(args[0]))
    fails, traces = 0, []

    def check(ok, what, why=""):
        nonlocal fails
        print(("ok - " if ok else "not ok - ") + what + ("" if ok else " (%s)" % why))
        fails += not ok

    for path in args[1:]:
        name = os.path.basename(path)
        tr = Trace(path)
        traces.append(tr)
        fig = tr.figures()
        ranks = [r for r in report["gpu_breakdown"] if os.path.basename(r["source"]) == name]
        check(len(ranks) == 1, "%s: one GPU in the report" % name, "%d" % len(ranks))
        if len(ranks) != 1:
            continue
        r = ranks[0]
        got = by_cause(r)
        check(got == fig["gpu"], "%s: the GPU's idle time by cause" % name,
              "report %s, trace %s" % (got, fig["gpu"]))
        check(got is not None and sum(v[0] for v in got.values()) == r["idle_ns"],
              "%s: the causes add up to the GPU's idle time" % name)
        for key, f in sorted(fig["streams"].items(), key=lambda kv: str(kv[0])):
            mine = [s for s in r["streams"] if number(s["name"]) == number(key[1])]
            what = "%s stream %s" % (name, key[1])
            if len(mine) != 1:
                check(False, what + ": in the report", "%d" % len(mine))
                continue
            s = mine[0]
            got = by_cause(s)
            check(got == f["causes"] and s["idle_ns"] == f["idle_ns"],
                  what + ": idle time by cause",
                  "report %s idle %d, trace %s idle %d" % (got, s["idle_ns"], f["causes"],
                                                           f["idle_ns"]))
            check(s.get("copies") == f["copies"], what + ": copies",
                  "report %s, trace %s" % (s.get("copies"), f["copies"]))
    if case:
        verdict(case, report, traces, truth, check)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
