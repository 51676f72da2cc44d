#!/usr/bin/env python3
"""The tool's figures on one foreign trace against an independent reading of
the raw file (json and gzip only, never trace.db for the expected side), for
tests/foreign/run.sh.

    check.py BIN TRACE DB

DB is TRACE imported alone by BIN.  Prints one line per check,

    ok CHECK DETAIL        or        fail CHECK DETAIL

(fields separated by tabs), CHECK one of:

  device work   the device work the file has, recognised by its track (a
                Kineto device category, whatever the accelerator, or an XLA
                device plane's stream: a process "/device:..." and a thread
                "Stream #..."), is the tool's kernel, memcpy and memset
                phases, by count;
  kernels       per name, `summary kernels`'s count and total (ns) are that
                work's;
  kernel names' types
                per name, `summary kernels`'s type is HTA 0.6.1's (below);
  ops           per name, `summary ops`'s count and total are the host
                operators': complete events (and B/E pairs) on host tracks,
                less Kineto's non-operator categories
                (tests/e2e/summaries_check.py's NOT_OPS), the profiler steps
                and, in an XLA trace, Python frames ("$file.py:line f") and
                the calls that launched device work (by correlation_id);
  streams       per stream (pid, tid), the report's gpu_streams items and
                busy_ns: the count and the union of its device work;
  steps         the profiler steps' durations: ProfilerStep#N on the host
                (Kineto), StepTraceAnnotation's events (args step_num, XLA),
                named NAME#STEP_NUM as the tool names them;
  steps' device time
                each step's device time (the query's device): the union of
                the device work launched within it by its thread (runtime
                calls, by args.correlation; XLA's correlation_id);
  idle split    per stream, the report's idle_breakdown (host wait, kernel
                wait, other: ns and gaps) against tests/tools/hta_reference.py;
  kernel types  the report's kernel_type_ns and compute/non-compute against
                hta_reference.py with HTA 0.6.1's kernel types (below).

HTA's own figures (idle split, kernel types) read device work as HTA does,
an event with a category whose args carry an integer stream; an XLA trace
has none, so its stream events are given their thread as the stream (and
"kernel" as the category, when they have none), and XLA's correlation_id
becomes HTA's correlation, first (HTA does not read
XLA traces: that is this suite's analogue, no HTA figure).
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import hta_reference  # noqa: E402
from device_work import DEVICE_CATS, load  # noqa: E402
from hta_reference import length, merge, us_to_ns  # noqa: E402
from summaries_check import NOT_OPS, RUNTIME  # noqa: E402

# HTA 0.6.1's kernel types by name (issue 27, item 3): communication first,
# then memory, then the class of events on a stream that are no kernel.
OTHER_NAMES = ("Stream Wait Event", "pe_exe", "job_exe", "runFunction")


def hta_kernel_type(name):
    """An index into hta_reference.TYPES, OTHER past its end when the
    reference has no such class: never compute."""
    types = hta_reference.TYPES
    if name.startswith(("hip", "hccl")) or "ncclKernel" in name:
        return types.index("COMMUNICATION")
    if name.startswith("dma") or "Memcpy" in name or "Memset" in name:
        return types.index("MEMORY")
    if "Sync" in name or name in OTHER_NAMES:
        return types.index("OTHER") if "OTHER" in types else len(types)
    return types.index("COMPUTATION")


class Trace:
    """One raw trace: its device work, host operators and steps."""

    def __init__(self, path):
        self.path = path
        events, _ = load(path)
        self.events = [e for e in events if isinstance(e, dict)]
        procs, threads = {}, {}
        for e in self.events:
            if e.get("ph") == "M" and isinstance(e.get("args"), dict):
                if e.get("name") == "process_name":
                    procs[str(e.get("pid"))] = str(e["args"].get("name", ""))
                elif e.get("name") == "thread_name":
                    threads[(str(e.get("pid")), str(e.get("tid")))] = str(e["args"].get("name", ""))
        self.xla = any(n.startswith("/device:") for n in procs.values())
        self.device, self.host = [], []
        for e in self.complete():
            key = (str(e.get("pid", 0)), str(e.get("tid", 0)))
            cat = str(e.get("cat", "")).lower()
            xla_stream = procs.get(key[0], "").startswith("/device:") and \
                threads.get(key, "").startswith("Stream #")
            if cat in DEVICE_CATS or xla_stream:
                self.device.append(e)
            elif cat != "gpu_user_annotation":  # a step's copy on a stream
                self.host.append(xla_host(e) if self.xla else e)

    def complete(self):
        """Every complete event with a duration, and each B/E pair on a
        thread as one (its ts and dur in ns as "s" and "d"; "o" the id()
        of the file's complete event)."""
        open_ = {}
        for e in self.events:
            ph = e.get("ph")
            if ph == "X" and e.get("dur") is not None:
                yield dict(e, s=us_to_ns(e["ts"]), d=max(us_to_ns(e["dur"]), 0), o=id(e))
            elif ph == "B":
                open_.setdefault((e.get("pid"), e.get("tid")), []).append(e)
            elif ph == "E" and open_.get((e.get("pid"), e.get("tid"))):
                b = open_[(e.get("pid"), e.get("tid"))].pop()
                s = us_to_ns(b["ts"])
                yield dict(b, s=s, d=max(us_to_ns(e["ts"]) - s, 0))

    def kernels(self):
        return by_name(self.device)

    def ops(self):
        def op(e):
            cat = str(e.get("cat", "")).lower()
            name = str(e.get("name", ""))
            if cat in NOT_OPS or name.startswith("ProfilerStep#"):
                return False
            args = e.get("args") or {}
            return not (self.xla and (name.startswith("$") or "step_num" in args))
        return by_name([e for e in self.host if op(e)])

    def streams(self):
        work = {}
        for e in self.device:
            work.setdefault((str(e.get("pid", 0)), str(e.get("tid", 0))), []).append(
                (e["s"], e["s"] + e["d"]))
        return {k: (len(w), length(merge(w))) for k, w in work.items()}

    def steps(self):
        return sorted((step_name(e), e["d"]) for e in self.host
                      if str(e.get("name", "")).startswith("ProfilerStep#")
                      or (self.xla and "step_num" in (e.get("args") or {})))

    def step_device(self):
        """Each profiler step's device time: the union of the device work
        its thread launched within it (runtime calls, by correlation)."""
        launch = {}
        for e in self.host:
            c = (e.get("args") or {}).get("correlation")
            if str(e.get("cat", "")).lower() in RUNTIME and c is not None:
                launch[c] = (str(e.get("pid")), str(e.get("tid")), e["s"])
        out = []
        for st in self.host:
            name = str(st.get("name", ""))
            if not (name.startswith("ProfilerStep#")
                    or (self.xla and "step_num" in (st.get("args") or {}))):
                continue
            where = (str(st.get("pid")), str(st.get("tid")))
            work = [(d["s"], d["s"] + d["d"]) for d in self.device
                    if launch.get(xla_corr(d).get("correlation"), (None,))[:2] == where
                    and st["s"] <= launch[xla_corr(d)["correlation"]][2] <= st["s"] + st["d"]]
            out.append((step_name(st), length(merge(work))))
        return sorted(out)

    def hta(self):
        """hta_reference.py's lines, with HTA 0.6.1's kernel types and the
        default's documented departure (grademl-tui(1), GPU breakdown):
        device work without a stream argument counts, on its thread as the
        stream, as an XLA trace's stream events all do."""
        saved = hta_reference.kernel_type
        hta_reference.kernel_type = hta_kernel_type
        try:
            ids = {e.get("o") for e in self.device
                   if not isinstance((e.get("args") or {}).get("stream"), int)
                   and str(e.get("tid", "")).lstrip("-").isdigit()}
            if not self.xla and not ids:
                return hta_reference.analyse(self.path, False, 30000)
            evs = [dict(e, cat=e.get("cat") or "kernel",
                        args=dict(xla_corr(e), stream=int(e.get("tid", 0))))
                   if id(e) in ids else xla_host(e) if self.xla else e
                   for e in self.events]
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump({"traceEvents": evs}, f)
            try:
                return hta_reference.analyse(f.name, False, 30000)
            finally:
                os.unlink(f.name)
        finally:
            hta_reference.kernel_type = saved


def step_name(e):
    """A step's name as grademl-tui(1) gives it: a StepTraceAnnotation's
    with its args.step_num ("train#3"), as Kineto's ProfilerStep#3."""
    name, args = str(e.get("name", "")), e.get("args") or {}
    if "step_num" in args and not name.startswith("ProfilerStep#"):
        return "%s#%s" % (name, args["step_num"])
    return name


def xla_corr(e):
    """e's args, with XLA's correlation_id (text) as HTA's integer
    correlation, which ties a stream's work to the host call that launched
    it."""
    args = e.get("args") if isinstance(e.get("args"), dict) else {}
    c = args.get("correlation_id")
    if isinstance(c, str) and c.isdigit():
        return dict(args, correlation=int(c))
    return args


def xla_host(e):
    """A host event of an XLA trace as HTA would read it: one that carries a
    correlation_id is the call that launched device work (a category, which
    HTA's reader needs, given where it has none)."""
    args = xla_corr(e)
    if "correlation" not in args:
        return e
    return dict(e, args=args, cat=e.get("cat") or "cuda_runtime")


def by_name(events):
    out = {}
    for e in events:
        c = out.setdefault(str(e.get("name", "")), [0, 0])
        c[0] += 1
        c[1] += e["d"]
    return {k: tuple(v) for k, v in out.items()}


def hta_figures(lines):
    """hta_reference.py's lines by key (as tests/e2e/figures.py reads them)."""
    out = {"idle": {}, "type": {}}
    for line in lines:
        w = line.split()
        if w[0] == "temporal":
            out["temporal"] = tuple(int(w[k]) for k in (2, 4, 6, 8))
        elif w[0] == "rank":
            out["items"] = int(w[3])
        elif w[0] == "type":
            out["type"][w[1]] = int(w[3])
        elif w[0] == "idle":
            pid, stream = w[1].split(":")
            if stream.isdigit() and int(stream) >= 1 << 31:
                stream = str(int(stream) - (1 << 32))  # an int32's -1 read unsigned
            out["idle"].setdefault((pid, stream), {})[w[2]] = (int(w[4]), int(w[6]))
    return out


class Tool:
    """The tool's figures of DB."""

    def __init__(self, binary, db):
        self.binary, self.db = binary, db
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        try:
            self.tracks = {r[0]: (str(r[1]), str(r[2]), str(r[3] or ""))
                           for r in con.execute("SELECT id, pid, tid, name FROM tracks")}
        finally:
            con.close()
        self.report = self.json("report", "--format", "json", db)

    def json(self, *args):
        out = subprocess.run([self.binary, *args], capture_output=True, check=True)
        return json.loads(out.stdout)

    def summary(self, kind):
        rows = self.json("summary", self.db, kind, "--format", "json")
        return {r["name"]: (r["count"], r["total"]) for r in rows}

    def query(self, q):
        return self.json("query", self.db, q, "--format", "json")


def differ(ref, got, what, limit=3):
    """The keys where two dicts differ, as text; empty when they agree."""
    keys = sorted(set(ref) | set(got), key=str)
    bad = [k for k in keys if ref.get(k) != got.get(k)]
    parts = ["%s: tool %s, file %s" % (str(k)[:70], got.get(k), ref.get(k)) for k in bad[:limit]]
    if len(bad) > limit:
        parts.append("%d more" % (len(bad) - limit))
    return ("%d of %d %s differ: " % (len(bad), len(keys), what) + "; ".join(parts)) if bad else ""


def stream_key(tid, name):
    """A stream's number as HTA keys it (its args.stream): the number its
    track's name carries ("stream 7"), else the track's tid."""
    m = re.match(r"\s*stream\s+(-?\d+)", name, re.I)
    return m.group(1) if m else tid


def checks(binary, trace_path, db):
    t, tool = Trace(trace_path), Tool(binary, db)
    res = []

    def put(name, why, detail):
        res.append(("fail" if why else "ok", name, why or detail))

    n = tool.query("phases (kind = kernel or kind = memcpy or kind = memset) | stats count")
    got = n[0]["count"] if n else 0
    put("device work", "" if got == len(t.device) else
        "tool %d kernel/memcpy/memset phases, file %d device events" % (got, len(t.device)),
        "%d device events on %d streams" % (len(t.device), len(t.streams())))

    ref = t.kernels()
    put("kernels", differ(ref, tool.summary("kernels"), "kernel names (count, total ns)"),
        "%d names, %d ns" % (len(ref), sum(v[1] for v in ref.values())))
    short = {"COMMUNICATION": "COMM", "COMPUTATION": "COMP", "MEMORY": "MEM"}
    types = hta_reference.TYPES + ["OTHER"]
    ref = {n: short.get(types[hta_kernel_type(n)], types[hta_kernel_type(n)])
           for n in t.kernels()}
    got = {r["name"]: r["type"] for r in tool.json("summary", db, "kernels", "--format", "json")}
    put("kernel names' types", differ(ref, got, "kernel names' types (HTA 0.6.1)"),
        ", ".join("%s %d" % (k, list(ref.values()).count(k)) for k in sorted(set(ref.values())))
        or "no kernels")
    ref = t.ops()
    put("ops", differ(ref, tool.summary("ops"), "operator names (count, total ns)"),
        "%d names, %d instances" % (len(ref), sum(v[0] for v in ref.values())))

    ref = t.streams()
    got = {tool.tracks[s["track_id"]][:2]: (s["items"], s["busy_ns"])
           for s in tool.report["gpu_streams"] if s.get("track_id") in tool.tracks}
    put("streams", differ(ref, got, "streams (items, busy ns)"),
        "%d streams, busy %s ns" % (len(ref), sorted(v[1] for v in ref.values())[-3:]))

    ref = t.steps()
    got = sorted((r["name"], r["dur"]) for r in
                 tool.query("phases kind = profiler_step | select name, dur"))
    put("steps", "" if ref == got else "tool %s, file %s" % (got[:4], ref[:4]),
        "%d steps" % len(ref))

    ref = t.step_device()
    got = sorted((r["name"], r["device"]) for r in
                 tool.query("phases kind = profiler_step | select name, device"))
    put("steps' device time", "" if ref == got else "tool %s, file %s" % (got[:4], ref[:4]),
        "%s" % ref[:4])

    hta = hta_figures(t.hta())
    breakdown = tool.report["gpu_breakdown"]
    got_idle, got_type, got_temporal = {}, {}, None
    for g in breakdown:
        for x in g["streams"]:
            pid, tid, _ = tool.tracks.get(x["track_id"], ("?", "?", ""))
            got_idle[(pid, stream_key(tid, x["name"]))] = {
                w: (v["ns"], v["count"]) for w, v in x["idle_breakdown"].items()}
        got_type = dict(g["kernel_type_ns"])
        got_temporal = (g["window_ns"], g["idle_ns"], g["compute_ns"], g["noncompute_ns"])
    put("idle split", differ(hta["idle"], got_idle, "streams' idle split"),
        "%d streams, %s" % (len(hta["idle"]), "; ".join(
            "%s %s" % (k[1], ", ".join("%s %d ns/%d" % (w, *v) for w, v in sorted(x.items())))
            for k, x in sorted(hta["idle"].items())[:2])))
    if not hta.get("items"):
        put("kernel types", "tool %d breakdowns, file no device work by HTA's rule" % len(breakdown)
            if breakdown else "", "no device work")
    elif len(breakdown) != 1:
        put("kernel types", "tool %d breakdowns for one trace" % len(breakdown), "")
    else:
        ref_t = dict(hta["type"], temporal=hta["temporal"])
        got_t = {k: got_type.get(k) for k in hta["type"]}
        got_t.update((k, v) for k, v in got_type.items() if v)
        got_t["temporal"] = got_temporal
        put("kernel types", differ(ref_t, got_t, "type unions (ns) or temporal (window, idle,"
                                   " compute, non-compute)"),
            ", ".join("%s %d ns" % kv for kv in sorted(hta["type"].items())))
    return res


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    for state, name, detail in checks(*argv):
        print("%s\t%s\t%s" % (state, name, detail.replace("\t", " ").replace("\n", " ")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
