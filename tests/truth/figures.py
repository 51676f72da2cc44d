"""The truth suite's figure checks (tests/truth/run.py, cases.json).

Each check compares a figure of `grademl-tui report --format json` (or of
`grademl-tui query`) with a reference computed without the tool: from what
the workload measured itself (truth.json, host clocks) or from the raw
trace with Python's json.  A check returns Figure rows; every figure is in
nanoseconds and holds within its stated tolerance, tol_ns.
"""
import gzip
import json
import os
import sys
from collections import namedtuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import device_work  # noqa: E402
from hta_reference import length  # noqa: E402

Figure = namedtuple("Figure", "label tool ref tol_ns how")


def _active(ctx, values):
    """The entries of a per-step list that belong to the traced steps."""
    return values[-ctx.truth["steps"]["active"]:]


def _series(ctx, key):
    """Per traced step, a truth value in ns: the list KEY (KEY_ms in
    milliseconds, else ns), or the differences of KEY_end_ns and
    KEY_start_ns."""
    rec = ctx.record
    if key in rec:
        scale = 1e6 if key.endswith("_ms") else 1
        return [round(v * scale) for v in _active(ctx, rec[key])]
    return [b - a for a, b in zip(_active(ctx, rec[key + "_start_ns"]),
                                  _active(ctx, rec[key + "_end_ns"]))]


def _trace_start_ns(ctx, name):
    """Where a legacy trace's ts counts from: its record's trace_start_us."""
    def find(o):
        if isinstance(o, dict):
            if o.get("trace") == name and "trace_start_us" in o:
                return o["trace_start_us"] * 1000
            o = list(o.values())
        if isinstance(o, list):
            for x in o:
                r = find(x)
                if r is not None:
                    return r
        return None

    return find(ctx.truth)


def raw_events(ctx, name):
    """The complete ("X") events of a trace in the case's directory, with
    "t0" and "t1" in epoch ns: Kineto's ts counts from baseTimeNanoseconds,
    the legacy format's from the trace's recorded start."""
    path = os.path.join(ctx.data, name)
    with (gzip.open(path, "rt") if name.endswith(".gz") else open(path)) as f:
        doc = json.load(f)
    if isinstance(doc, list):
        events, base = doc, _trace_start_ns(ctx, name)
    else:
        events, base = doc["traceEvents"], doc.get("baseTimeNanoseconds", 0)
    if base is None:
        raise ValueError("%s: no baseTimeNanoseconds, no trace_start_us in truth.json" % name)
    out = []
    for e in events:
        if e.get("ph") == "X" and "dur" in e:
            e = dict(e)
            e["t0"] = base + round(float(e["ts"]) * 1000)
            e["t1"] = e["t0"] + round(float(e["dur"]) * 1000)
            out.append(e)
    return out


def _leaf(path):
    return (path or "").rsplit("/", 1)[-1]


LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def _op_total(ctx, op):
    rows = ctx.query('phases name = "%s" | stats count, sum(dur)' % op)
    return rows[0].get("sum(dur)") if rows else None


def op_time(ctx, spec):
    """One operator's total time (grademl-tui query, and the report's top
    operators where it is one) against the raw trace and the workload's
    clocks around the call; tol_ms is the profiler's own cost allowed."""
    op = spec.get("op", LOADER)
    tool = _op_total(ctx, op)
    raw = [e for e in raw_events(ctx, spec["trace"]) if e["name"] == op]
    truth = sum(_series(ctx, spec["truth"]))
    name = "DataLoader __next__" if op == LOADER else op
    tol = max(spec.get("tol_ms", 0.5) * 1e6, 0.03 * truth)
    how = "max(%g ms, 3%%): the profiler's own cost around the call" % spec.get("tol_ms", 0.5)
    out = [Figure("%s total vs raw trace" % name, tool, sum(e["t1"] - e["t0"] for e in raw),
                  1000 * len(raw), "1 us an event"),
           Figure("%s total vs truth" % name, tool, truth, tol, how)]
    top = next((o for o in ctx.report["top_operators_by_total"] if o["name"] == op), None)
    if top:
        out.append(Figure("%s in top operators vs truth" % name, top["total_ns"], truth, tol, how))
    return out


def _profiler_steps(ctx):
    steps = []

    def walk(n):
        if n["kind"] == "profiler_step":
            steps.append(n)
        for c in n.get("children", []):
            walk(c)

    for n in ctx.report["tree"]:
        walk(n)
    return sorted(steps, key=lambda n: n["start_ns"])


def step_times(ctx, spec):
    """Each traced ProfilerStep's duration in the report against the raw
    trace's host annotation, and against spec's "truth" (a per-step list of
    wall times, the step's own code without prof.step()) where it names
    one; where the workload kept its clock at each prof.step()
    (step_end_ns), each step's start and duration and the critical path's
    makespan against it too."""
    rec = ctx.record
    active = ctx.truth["steps"]["active"]
    raw = sorted((e for e in raw_events(ctx, spec["trace"])
                  if e["name"].startswith("ProfilerStep#")
                  and e.get("cat") in (None, "user_annotation")), key=lambda e: e["t0"])
    tool = _profiler_steps(ctx)
    bounds = ([rec["profile_start_ns"]] + rec["step_end_ns"])[-active - 1:] \
        if "step_end_ns" in rec else None
    out = []
    for k in range(active):
        t = tool[k] if k < len(tool) else None
        r = raw[k] if k < len(raw) else None
        out.append(Figure("step %d duration vs raw trace" % (k + 1), t and t["dur_ns"],
                          r and r["t1"] - r["t0"], 1000, "1 us"))
        if "truth" in spec:
            wall = _series(ctx, spec["truth"])[k]
            out.append(Figure("step %d duration vs truth's wall time" % (k + 1),
                              t and t["dur_ns"], wall, max(500000, 0.02 * wall),
                              "max(0.5 ms, 2%): prof.step() is outside the wall time"))
        if bounds is None:
            continue
        truth = bounds[k + 1] - bounds[k]
        out.append(Figure("step %d duration vs truth" % (k + 1), t and t["dur_ns"], truth,
                          max(500000, 0.01 * truth), "max(0.5 ms, 1%)"))
        out.append(Figure("step %d start, less truth's" % (k + 1),
                          t and t["start_ns"] - bounds[k], 0, 1000000,
                          "1 ms: the time offset and the profiler's clock"))
    if bounds is not None:
        paths = ctx.report["critical_path"]
        whole = bounds[-1] - bounds[0]
        out.append(Figure("critical-path makespan vs truth",
                          paths[0]["makespan_ns"] if paths else None, whole,
                          max(1000000, 0.03 * whole), "max(1 ms, 3%)"))
    return out


def whatif_serial(ctx, spec):
    """In a loop on one thread every phase on the path is serial: twice as
    fast, the first phase with a what-if gives back half its duration (as
    the raw trace has it: the event that starts where it does)."""
    label = "twice-as-fast saving vs half the phase's raw duration"
    row = next((r for r in ctx.report["critical_path"] if r["whatif_2x_makespan_ns"] is not None),
               None)
    if row is None:
        return [Figure(label, None, None, 0, "no what-if on the path")]
    ph = ctx.query("phases id = %d | select start, name" % row["phase_id"])[0]
    raw = next((e for e in raw_events(ctx, spec["trace"])
                if e["name"] == ph["name"] and abs(e["t0"] - ph["start"]) <= 1000), None)
    return [Figure(label, row["makespan_ns"] - row["whatif_2x_makespan_ns"],
                   raw and (raw["t1"] - raw["t0"]) / 2, 2000, "2 us")]


def _arrivals(ctx, traces, op):
    """Per rank (in the order of traces), the start of each call of op on
    the host, in time order: its arrival at the collective."""
    return [sorted(e["t0"] for e in raw_events(ctx, t) if e["name"] == op) for t in traces]


def arrivals(ctx, spec):
    """Each rank's wait at each traced all_reduce, from the raw traces (the
    last arrival less its own), against the workload's clocks.  It checks
    the reference the tool's wait must meet, not the tool."""
    arr = _arrivals(ctx, spec["traces"], spec["op"])
    ranks = ctx.record["ranks"]
    out = []
    for k in range(ctx.truth["steps"]["active"]):
        last = max(a[k] if k < len(a) else 0 for a in arr)
        for r, a in enumerate(arr):
            truth = round(_active(ctx, ranks[r]["wait_ms"])[k] * 1e6)
            out.append(Figure("raw: rank %d wait at all_reduce %d vs truth" % (r, k + 1),
                              last - a[k] if k < len(a) else None, truth, 1000000,
                              "1 ms: the host clock read beside the call"))
    return out


def rank_wait(ctx, spec):
    """The report's wait of a rank (its time in the collectives before the
    last rank arrived) against the workload's own clocks: its arrival to
    the last one, over the traced steps."""
    tool = ctx.select(spec.get("tool", "imbalance[kind=ranks].ranks[name=rank %d].wait_ns"
                               % spec["rank"]))
    rank = ctx.record["ranks"][spec["rank"]]
    truth = round(sum(_active(ctx, rank["wait_ms"])) * 1e6)
    return [Figure("rank %d wait (all traced steps) vs truth" % spec["rank"], tool, truth,
                   max(1000000, 0.1 * truth), "max(1 ms, 10%)")]


def stream_busy(ctx, spec):
    """Each GPU stream's busy time in the report against the union of its
    kernels, memcpys and memsets in the raw trace (Kineto's tid is the
    stream)."""
    by_tid = {}
    for e in raw_events(ctx, spec["trace"]):
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            by_tid.setdefault(str(e["tid"]), []).append((e["t0"], e["t1"]))
    out = []
    for s in ctx.report["gpu_streams"]:
        tid = s["stream"].strip().rsplit(" ", 1)[-1]
        union, end = 0, None
        for a, b in sorted(by_tid.get(tid, [])):
            if end is None or a > end:
                union += b - a
                end = b
            elif b > end:
                union += b - end
                end = b
        out.append(Figure("stream %s busy vs union of device work" % tid, s["busy_ns"], union,
                          1000, "1 us"))
    return out or [Figure("stream busy vs union of device work", None, None, 0, "no stream")]


def gpu_measured(ctx, spec):
    """What the report measured of the step's GPU (grademl-tui(1)
    BOTTLENECKS: its traced device work) against the raw trace
    (tests/tools/device_work.py): the measured "device work" share times
    the time the trace covers in the step, and the est. use of gpu times
    the step's duration, each against the union of GPU 0's device work in
    the step."""
    path = spec["path"]
    row = next((r for r in ctx.report["attribution"]["phases"] if r["path"] == path), None)
    node, names = {"children": ctx.report["tree"]}, path.strip("/").split("/")
    for name in names:
        node = next((c for c in node.get("children", []) if c["name"] == name), {})
    (lo, hi), gpus = device_work.gpus(os.path.join(ctx.data, spec["trace"]))
    if row is None or "start_ns" not in node or 0 not in gpus:
        return [Figure("%s: GPU device work" % path, None, None, 0, "no row or no GPU 0")]
    a, b = node["start_ns"], node["start_ns"] + node["dur_ns"]
    busy = length([(max(s, a), min(e, b)) for s, e in gpus[0] if min(e, b) > max(s, a)])
    covered = max(0, min(hi, b) - max(lo, a))
    m = next((x for x in row["measured"] if x["metric"] == "device work"), None)
    use = row["resources"].get("gpu", {}).get("use")
    return [Figure("measured device work x traced time vs union of device work",
                   None if m is None else round(m["mean"] / 100 * covered), busy, 1000,
                   "1 us"),
            Figure("est. use of gpu x duration vs union of device work",
                   None if use is None else round(use * row["dur_ns"]), busy, 1000, "1 us")]


CHECKS = {f.__name__: f for f in (step_times, whatif_serial, op_time, arrivals,
                                  rank_wait, stream_busy, gpu_measured)}
