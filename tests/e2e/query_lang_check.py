"""Checks tests/e2e/query_lang.sh's query results against the raw traces.

Usage: query_lang_check.py TMP TRACE...  (TMP holds by_source.json,
by_step.json, step3.json, long.json and steps.json), or
query_lang_check.py --gaps TMP LABEL (TMP holds LABEL-gaps.json, -top.json,
-tracks.json, -ops.json, -report.json and -ref.txt, hta_reference.py
--gaps's lines).  Prints "ok - NAME" or "not ok - NAME (why)".

A kernel's step is the profiler step (a ProfilerStep#N user annotation on a
CPU thread) whose window holds the runtime call that launched it (the same
args.correlation), on that call's thread.  Times are Kineto's microseconds,
to nanoseconds as the importer rounds them.
"""
import collections
import gzip
import json
import os
import sys


def ns(us):
    return int(round(us * 1000))


def load(path):
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        return json.load(f)


def source_name(path, trace):
    rank = (trace.get("distributedInfo") or {}).get("rank")
    base = os.path.basename(path)
    return base if rank is None else f"{base} (rank {rank})"


def expected(paths):
    per_step = collections.Counter()
    total = collections.Counter()
    long = collections.Counter()
    steps = {}
    for path in paths:
        trace = load(path)
        name = source_name(path, trace)
        ev = [e for e in trace["traceEvents"] if isinstance(e, dict)]
        windows = [(e["pid"], e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"])
                   for e in ev if e.get("cat") == "user_annotation"
                   and str(e.get("name", "")).startswith("ProfilerStep#")]
        for w in windows:
            steps[(name, w[4])] = w[3] - w[2]
        launch = {}
        for e in ev:
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
                launch[e["args"]["correlation"]] = e
        for e in ev:
            if e.get("cat") != "kernel":
                continue
            total[name] += 1
            if ns(e["ts"] + e["dur"]) - ns(e["ts"]) > 10500:
                long[name] += 1
            call = launch.get(e.get("args", {}).get("correlation"))
            if call is None:
                continue
            t = ns(call["ts"])
            for pid, tid, a, b, step in windows:
                if (pid, tid) == (call["pid"], call["tid"]) and a <= t < b:
                    per_step[(name, step)] += 1
                    break
    return per_step, total, long, steps


def report(ok, name, why=""):
    print(f"ok - {name}" if ok else f"not ok - {name} ({why})")


def check_gaps(tmp, label):
    def read(what):
        text = open(os.path.join(tmp, f"{label}-{what}")).read()
        try:
            return json.loads(text)
        except ValueError:
            return text.strip()

    got, top, tracks, ops = (read(w + ".json") for w in ("gaps", "top", "tracks", "ops"))
    for what, v in (("gaps", got), ("top", top), ("tracks", tracks), ("ops", ops)):
        if isinstance(v, str):
            report(False, f"{label}: gaps query {what}", v)
            return
    track = {t["id"]: t for t in tracks}

    def key(g):
        t = track[g["track"]]
        off = t["time_offset_ns"] or 0
        return (f"{t['pid']}:{t['tid']}", g["start"] - off, g["end"] - off)

    mine = sorted(key(g) for g in got)
    ref = []
    for line in open(os.path.join(tmp, f"{label}-ref.txt")):
        w = line.split()
        if len(w) != 4 or w[0] != "gap":
            report(False, f"{label}: hta_reference.py --gaps", line.strip())
            return
        ref.append((w[1], int(w[2]), int(w[3])))
    ref.sort()
    streams = len({r[0] for r in ref})
    apart = [(a, b) for a, b in zip(mine + [None] * len(ref), ref + [None] * len(mine)) if a != b]
    report(mine == ref and ref, f"{label}: {len(ref)} gaps of {streams} streams as HTA's reference",
           f"{len(mine)} gaps, {len(ref)} in the reference; first apart: {apart[:1]}")
    bad = [g for g in got if g["dur"] != g["end"] - g["start"]]
    report(not bad, f"{label}: dur = end - start", f"{bad[:2]}")

    rep = json.load(open(os.path.join(tmp, f"{label}-report.json")))
    want = collections.Counter()
    for r in rep["gpu_breakdown"]:
        for x in r["streams"]:
            for cause, v in x["idle_causes"].items():
                if v["gaps"]:
                    want[(x["track_id"], cause, "gaps")] += v["gaps"]
                    want[(x["track_id"], cause, "ns")] += v["ns"]
    have = collections.Counter()
    for g in got:
        have[(g["track"], g["cause"], "gaps")] += 1
        have[(g["track"], g["cause"], "ns")] += g["dur"]
    report(have == want, f"{label}: gaps by stream and cause as the report's idle causes",
           f"{dict(have)} != {dict(want)}")

    with_op = [g for g in got if g["op"] is not None]
    bad = [o for o in ops if o["thread"] != o["track"]
           or not o["p0"] <= o["g0"] + (o["g1"] - o["g0"]) // 2 < o["p1"]]
    report(with_op and not bad and len(ops) == len(with_op),
           f"{label}: {len(with_op)} of {len(got)} gaps name the launching thread's phase"
           " at their middle", f"{bad[:2]}, {len(ops)} joined")

    longest = sorted(got, key=lambda g: (-g["dur"], g["track"], g["start"]))[:10]
    report([g["dur"] for g in longest] == [g["end"] - g["start"] for g in top] and len(top) == min(10, len(got)),
           f"{label}: gaps | top 10 dur", f"{top} vs {longest}")


def main():
    if sys.argv[1] == "--gaps":
        check_gaps(sys.argv[2], sys.argv[3])
        return
    tmp, paths = sys.argv[1], sys.argv[2:]
    per_step, total, long, steps = expected(paths)

    def rows(what):
        try:
            return json.load(open(os.path.join(tmp, what + ".json")))
        except ValueError:
            return open(os.path.join(tmp, what + ".json")).read().strip()

    got = rows("by_source")
    if isinstance(got, str):
        report(False, "by source", got)
    else:
        names = [r["source"] for r in got]
        report(sorted(names) == sorted(total), "by source shows each file's name and rank",
               f"{names} != {sorted(total)}")
        sums = {r["source"]: r["count"] for r in got}
        report(sums == dict(total), "by source: each file's kernels",
               f"{sums} != {dict(total)}")
    got = rows("by_step")
    if isinstance(got, str):
        report(False, "by source, step", got)
    else:
        mine = {(r["source"], r["step"]): r["count"] for r in got
                if r["step"] and r["step"].startswith("ProfilerStep#")}
        report(mine == dict(per_step) and len(mine) > 0,
               f"by step: kernels of each of {len(per_step)} profiler steps",
               f"{mine} != {dict(per_step)}")
    got = rows("step3")
    want = {k[0]: v for k, v in per_step.items() if k[1] == "ProfilerStep#3"}
    report(not isinstance(got, str) and {r["source"]: r["count"] for r in got} == want,
           "where step = \"ProfilerStep#3\"", f"{got} != {want}")
    got = rows("long")
    report(not isinstance(got, str) and {r["source"]: r["count"] for r in got} == dict(long)
           and sum(long.values()) > 0,
           f"where end - start > 0.5 * 21us: {sum(long.values())} kernels", f"{got} != {dict(long)}")
    got = rows("steps")
    if isinstance(got, str):
        report(False, "profiler steps' arithmetic", got)
        return
    durs = {(r["source.name"], r["name"]): r["dur"] for r in got}
    report(durs == steps, f"profiler steps' dur ({len(steps)} steps)", f"{durs} != {steps}")
    bad = [r for r in got if r["dur - self"] != r["dur"] - r["self"]
           or abs(r["self / dur"] - r["self"] / r["dur"]) > 1e-12]
    report(not bad and got, "dur - self and self / dur on every step", f"{bad[:2]}")


main()
