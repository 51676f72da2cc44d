#!/usr/bin/env python3
"""Every figure of `grademl-tui report` against an independent computation
from the raw files (json, gzip and csv only; trace.db is never read).

    figures.py [--doctor] CASE REPORT.json REPORT.txt [TRACE.db]

CASE names the workflow figures.sh imported (gpu, demo, gpu-truth) and so
the raw files behind the report (case_config): its manifest (or none), each
step's traces and the time offset each was imported with, the metric
files.  TRACE.db, when given, is only asked (grademl-tui query, GRADEML_BIN)
where a phase of the critical path starts, to find it in its trace.  For each section
of the report, the figures the JSON holds are recomputed here and compared
with a stated tolerance, and the text's figures (printed to three digits)
are read back and compared within their printed precision:

  sources      per file: its size, phases + dropped (X, B and b events),
               events (instants), samples (nvidia-smi: every numeric cell;
               a manifest: its lines), and the diagnostics LONE_FLOW (flow
               ids with a start or an end only), IGNORED_METADATA, OVERLAP
               (a span ending after the span that contains it) and
               UNLINKED_DEVICE (device work no host call launched)
  tree         "Where the time went": every node shown, its duration, self
               time, children and share of its parent: a workflow and its
               steps from the manifest, a rank from its trace's spans, a
               process, thread, stream or annotation lane from its events,
               a span from the nesting of its thread's spans by time
  operators    the top operators by total and by self time: count, total
               and self, over the operator spans of every trace
  streams      each stream's window (its trace's spans, from first start to
               last end) and busy fraction (busy and items: streams.sh)
  breakdown    the GPU breakdown against tests/tools/hta_reference.py
               (temporal, kernel types, overlap, idle per stream, top
               kernels); idle causes and copies: idle.sh
  issues       each issue's saving and share of its workflow: idle-gpu its
               cause's idle time, with the idle, window, gaps and shares its
               text gives; bottleneck and software-bound GradeML's gain
               from the row's bounds; critical-path the what-if's;
               imbalance the Stragglers' (straggler.sh)
  stragglers   each ProfilerStep's group of ranks (the step's own group:
               straggler.sh), and the text of every group and rank
  resources    each row's measured mean and peak of every series shown,
               its host and device work, the demands (a kernel's exact on
               utilization.gpu, the rest an NNLS fit of the samples on the
               time each type of work was active), est. use (GradeML's
               upsampling of the samples over the work with those demands),
               bound-by shares (steps: resources.sh; here every row), and
               the estimate without the bound
  critical     the makespan and waits, each step's own time on the path
               (its window less its traces), and on a trace of one thread
               every listed phase's time (its self time) and what-if

Prints one "ok - ..." or "not ok - ... (why)" line per check; exits 1 when
any failed.  --doctor: every number of REPORT.json moved by 3% (ids kept)
and every duration or share of REPORT.txt too; each check must then fail,
and the line says how many did not (exits 1 unless all failed).
"""
import bisect
import csv
import gzip
import io
import itertools
import json
import os
import re
import subprocess
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "truth", "cpu"))
sys.path.insert(0, HERE)
import expect  # noqa: E402  the sar reader of the CPU truth cases
import hta_reference  # noqa: E402
import idle_check  # noqa: E402
import straggler  # noqa: E402
from device_work import DEVICE_CATS  # noqa: E402
from hta_reference import merge, length, us_to_ns  # noqa: E402

GPU_ANNOTATION = "gpu_user_annotation"
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9}


# ---- reading the raw files ----

def opener(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")


def kind_of(e):
    """The phase kind of a complete event (grademl-tui(1) DESCRIPTION)."""
    cat = str(e.get("cat", "")).lower()
    if cat in DEVICE_CATS:
        return "device"
    if cat == GPU_ANNOTATION:
        return "gpu_annotation"
    return idle_check.kind_of(e)


class Raw:
    """One Chrome/Kineto trace: its events in epoch ns (exact), the nesting
    of each host thread's spans by time, and its tracks."""

    def __init__(self, path, offset_ns=None):
        self.path = path
        with opener(path) as f:
            doc = json.load(f, parse_float=str)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        meta = doc if isinstance(doc, dict) else {}
        base = offset_ns if offset_ns is not None else int(meta.get("baseTimeNanoseconds", 0))
        self.rank = (meta.get("distributedInfo") or {}).get("rank")
        self.spans, self.instants, self.meta, self.flows = [], [], [], {}
        self.durations = 0  # X, B and b events: phases + dropped
        for i, e in enumerate(events):
            if not isinstance(e, dict):
                continue
            ph = e.get("ph")
            if ph in ("X", "B", "b"):
                self.durations += 1
            if ph == "X":
                t0 = base + us_to_ns(e["ts"])
                x = {"i": i, "t0": t0, "t1": t0 + max(us_to_ns(e.get("dur", 0)), 0),
                     "name": e.get("name", ""), "pid": str(e.get("pid", "")),
                     "tid": str(e.get("tid", "")), "kind": kind_of(e),
                     "cat": str(e.get("cat", "")).lower(),
                     "args": e.get("args") or {}, "parent": None, "nchild": 0,
                     "covered": 0}
                self.spans.append(x)
            elif ph in ("i", "I"):
                self.instants.append({"t": base + us_to_ns(e["ts"]), "pid": str(e.get("pid", "")),
                                      "tid": str(e.get("tid", ""))})
            elif ph == "M":
                self.meta.append(e)
            elif ph in ("s", "f"):
                k = self.flows.setdefault((e.get("cat"), e.get("id")), [0, 0])
                k[ph == "f"] += 1
        self.overlaps = self.nest()
        self.launch()

    def nest(self):
        """Nests each host thread's spans by time: sorted by start, longer
        first; a span is inside the innermost open one that it starts
        before the end of (clipped to that one's parent); a parent's self
        time is its duration less its children's, each up to its end.
        Returns how many children end after their parent."""
        lanes = {}
        for x in self.spans:
            if x["kind"] not in ("device", "gpu_annotation"):
                lanes.setdefault((x["pid"], x["tid"]), []).append(x)
        overlaps = 0
        for xs in lanes.values():
            xs.sort(key=lambda x: (x["t0"], -(x["t1"] - x["t0"]), x["i"]))
            stack = []
            for x in xs:
                while stack and stack[-1]["nest_end"] <= x["t0"]:
                    stack.pop()
                x["nest_end"] = x["t1"]
                if stack:
                    top = stack[-1]
                    x["parent"] = top
                    x["nest_end"] = min(x["t1"], top["nest_end"])
                    top["nchild"] += 1
                    top["covered"] += min(x["t1"], top["t1"]) - x["t0"]
                    overlaps += x["t1"] > top["t1"]
                stack.append(x)
        for x in self.spans:
            x["self"] = max(x["t1"] - x["t0"] - x["covered"], 0)
        return overlaps

    def launch(self):
        """Device work under the host call that launched it (the first
        runtime call on a host thread with its correlation id); the rest is
        unlinked, under its stream."""
        calls = {}
        for x in sorted(self.spans, key=lambda x: x["i"]):
            c = x["args"].get("correlation")
            if x["kind"] == "runtime" and c is not None and c not in calls:
                calls[c] = x
        self.unlinked = 0
        for x in self.spans:
            if x["kind"] != "device":
                continue
            call = calls.get(x["args"].get("correlation"))
            if call is None:
                self.unlinked += 1
            else:
                call["nchild"] += 1
                x["parent"] = call

    def device(self):
        return [x for x in self.spans if x["kind"] == "device"]

    def window(self):
        """From the first span's start to the last one's end."""
        return (min(x["t0"] for x in self.spans), max(x["t1"] for x in self.spans))

    def rank_window(self):
        """The window of the trace's node (a rank's): of its spans but
        Kineto's own trace span (pid "Spans", older "Traces"), the profiler's
        bookkeeping (grademl-tui(1) PROFILER BOOKKEEPING)."""
        work = [x for x in self.spans if x["pid"] not in ("Spans", "Traces")] or self.spans
        return (min(x["t0"] for x in work), max(x["t1"] for x in work))

    def lost_flows(self):
        return sum(1 for s, f in self.flows.values() if (s == 0) != (f == 0))

    def ignored_metadata(self):
        used = {"process_name", "thread_name", "process_labels", "process_sort_index"}
        return sum(1 for e in self.meta if e.get("name") not in used)


# ---- text: figures printed to three digits ----

DUR = r"(-?[\d.]+) (ns|us|ms|s|min|h)"


def parse_dur(text):
    """A printed duration: its value in ns and half its last digit."""
    m = re.fullmatch(DUR, text.strip())
    if not m:
        return None
    num, unit = m.groups()
    places = len(num.split(".")[1]) if "." in num else 0
    return float(num) * UNITS[unit], 0.5 * 10 ** -places * UNITS[unit]


def parse_pct(text):
    m = re.fullmatch(r"(-?[\d.]+)%", text.strip())
    if not m:
        return None
    places = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
    return float(m.group(1)), 0.5 * 10 ** -places


def near_dur(text, ns, tol=0):
    """The printed duration text is ns (within tol ns besides)."""
    p = parse_dur(text)
    return p is not None and abs(p[0] - ns) <= p[1] * (1 + 1e-9) + tol


def near_pct(text, pct, tol=1e-6):
    p = parse_pct(text)
    return p is not None and abs(p[0] - pct) <= p[1] + tol


# ---- the checks ----

class Checks:
    def __init__(self, case, report, text, db=None):
        self.case, self.r, self.text, self.db = case, report, text, db
        self.lines = text.splitlines()
        self.results = []
        self.raw, self._units = {}, {}
        for step in case["steps"]:
            for t in step["traces"]:
                self.raw[t["path"]] = Raw(t["path"], t.get("offset_ns"))

    def check(self, name, bad, n=None):
        """One line: name, with n figures compared, fails on bad (a list of
        what disagreed)."""
        what = "%s: %s" % (self.case["name"], name)
        if n == 0 and not bad:
            self.results.append((None, what, "no such figure in this report"))
            return
        if n is not None:
            what += " (%d figures)" % n
        self.results.append((not bad, what, "; ".join(bad[:4]) + (
            " and %d more" % (len(bad) - 4) if len(bad) > 4 else "")))

    def section(self, title):
        """The text lines of the report's section whose title starts so."""
        out, on = [], False
        for line in self.lines:
            if line.startswith(title):
                on = True
            elif on and not out and line and not line.startswith(" "):
                continue  # the title's own next lines
            elif on and line and not line.startswith(" "):
                break
            elif on:
                out.append(line)
        return out

    def traces(self):
        for step in self.case["steps"]:
            for t in step["traces"]:
                yield step, t, self.raw[t["path"]]

    # -- sources --
    def sources(self):
        bad, n = [], 0
        by_path = {s["path"]: s for s in self.r["sources"]}

        def diag(src, code):
            return sum(d["count"] for d in src["diagnostics"] if d["code"] == code)

        def cmp(what, got, want):
            nonlocal n
            n += 1
            if got != want:
                bad.append("%s: %s, the file %s" % (what, got, want))
        for step, t, raw in self.traces():
            s = by_path.get(t["path"])
            if s is None:
                bad.append("%s: no source" % t["path"])
                continue
            name = os.path.basename(t["path"])
            cmp(name + " size", s["size_bytes"], os.path.getsize(t["path"]))
            cmp(name + " phases + dropped", s["phases"] + s["dropped"], raw.durations)
            cmp(name + " events", s["events"], len(raw.instants))
            cmp(name + " LONE_FLOW", diag(s, "LONE_FLOW"), raw.lost_flows())
            cmp(name + " IGNORED_METADATA", diag(s, "IGNORED_METADATA"), raw.ignored_metadata())
            cmp(name + " OVERLAP", diag(s, "OVERLAP"), raw.overlaps)
            cmp(name + " UNLINKED_DEVICE", diag(s, "UNLINKED_DEVICE"), raw.unlinked)
        if self.case.get("manifest"):
            s = by_path.get(self.case["manifest"])
            with open(self.case["manifest"]) as f:
                lines = [x for x in f if x.strip()]
            if s is None:
                bad.append("no manifest source")
            else:
                cmp("manifest phases", s["phases"], len(lines))
                cmp("manifest size", s["size_bytes"], os.path.getsize(self.case["manifest"]))
        for path in self.case.get("nvsmi", []):
            s = by_path.get(path)
            rows = nvsmi_table(path)
            cells = sum(1 for row in rows for k, v in row.items() if k != "t" and v is not None)
            if s is None:
                bad.append("no nvidia-smi source")
            else:
                cmp("nvidia-smi samples", s["samples"], cells)
                cmp("nvidia-smi size", s["size_bytes"], os.path.getsize(path))
        # the text: each source's counts line
        text = "\n".join(self.section("Sources"))
        for s in self.r["sources"]:
            want = "%d phases, %d events, %d samples, %d dropped" % (
                s["phases"], s["events"], s["samples"], s["dropped"])
            n += 1
            if want not in text:
                bad.append("text lacks '%s'" % want)
        self.check("sources: sizes, counts and diagnostics against the files", bad, n)

    # -- tree --
    def tree(self):
        """Every node of "Where the time went" against the raw files."""
        bad, n = [], 0
        root = self.r["tree"][0] if self.r["tree"] else None
        if root is None or root["name"] != self.case["name"]:
            self.check("tree: the workflow at its top", ["no node %s" % self.case["name"]])
            return
        steps = {s["name"]: s for s in self.case["steps"]}
        refs = {}  # id(json node) -> (start, dur, self, children)

        def lanes_of(raws):
            """Processes (pid, device?) -> {lane key: [spans or instants]}."""
            procs = {}
            for raw in raws:
                for x in raw.spans:
                    dev = x["kind"] in ("device", "gpu_annotation")
                    lane = {"device": "stream", "gpu_annotation": "annotations"}.get(
                        x["kind"], "thread")
                    procs.setdefault((norm(x["pid"]), dev), {}).setdefault(
                        (lane, norm(x["tid"])), []).append(x)
                for i in raw.instants:
                    # an instant of no process and thread (Kineto's "Record
                    # Window End") has a process of its own, "global"
                    pid, tid = ("global", "global") if i["pid"] == i["tid"] == "" else (
                        norm(i["pid"]), norm(i["tid"]))
                    procs.setdefault((pid, False), {}).setdefault(
                        ("thread", tid), []).append({"t0": i["t"], "t1": i["t"]})
            return procs

        def extent(xs):
            return min(x["t0"] for x in xs), max(x["t1"] for x in xs)

        def lane_ref(key, xs):
            lo, hi = extent(xs)
            if key[0] == "stream":
                busy = length(merge([(x["t0"], x["t1"]) for x in xs]))
                return lo, hi - lo, hi - lo - busy, sum(1 for x in xs if x["parent"] is None)
            if key[0] == "annotations":
                busy = length(merge([(x["t0"], x["t1"]) for x in xs]))
                return lo, hi - lo, hi - lo - busy, len(xs)
            top = [x for x in xs if "i" in x and x["parent"] is None]
            busy = length(merge([(x["t0"], x["t1"]) for x in top]))
            return lo, hi - lo, hi - lo - busy, len(top)

        def node(j, ref, kids):
            """Compares node j with ref, then its shown children with kids:
            {matching function} -> (ref, grandchildren)."""
            nonlocal n
            refs[id(j)] = ref
            start, dur, own, count = ref
            got = (j["start_ns"], j["dur_ns"], j["self_ns"], j["child_count"])
            n += 4
            if got != (start, dur, own, count):
                bad.append("%s: start, dur, self, children %s, raw %s" % (
                    j["name"], got, (start, dur, own, count)))
            for c in j.get("children", []):
                m = kids(c)
                if m is None:
                    bad.append("%s/%s: nothing in the raw files" % (j["name"], c["name"]))
                    continue
                n += 1
                share = m[0][1] / dur if dur > 0 else 1.0
                if c["kind"] == "profiler":  # the profiler's bookkeeping: no share
                    if c["share_of_parent"] is not None:
                        bad.append("%s: share %s, want none" % (c["name"], c["share_of_parent"]))
                elif abs(c["share_of_parent"] - share) > 1e-9:
                    bad.append("%s: share %s, raw %s" % (c["name"], c["share_of_parent"], share))
                node(c, m[0], m[1])

        def span_kids(xs):
            def find(c):
                hit = [x for x in xs if x["t0"] == c["start_ns"] and x["name"] == c["name"]]
                if len(hit) != 1:
                    return None
                x = hit[0]
                sub = [y for y in x["_kids"]]
                return (x["t0"], x["t1"] - x["t0"], x["self"], x["nchild"]), span_kids(sub)
            return find

        for raw in self.raw.values():
            for x in raw.spans:
                x["_kids"] = []
            for x in raw.spans:
                if x["parent"] is not None and x["kind"] != "device":
                    x["parent"]["_kids"].append(x)

        def proc_kids(procs):
            def find(c):
                pid = proc_pid(c["name"])
                cands = [(k, v) for k, v in procs.items() if k[0] == pid]
                if len(cands) > 1:  # a host and a device process of one pid
                    cands = [kv for kv in cands
                             if kv[0][1] == any(x["kind"] != "thread" for x in c["children"])]
                if len(cands) != 1:
                    return None
                lanes = cands[0][1]
                lo, hi = extent(sum(lanes.values(), []))
                return (lo, hi - lo, 0, len(lanes)), lane_kids(lanes)
            return find

        def lane_kids(lanes):
            def find(c):
                key = lane_key(c)
                if key not in lanes:
                    return None
                xs = lanes[key]
                top = [x for x in xs if "i" in x and (x["parent"] is None or key[0] != "thread")]
                if key[0] == "stream":
                    top = []
                return lane_ref(key, xs), span_kids(top)
            return find

        def trace_kids(raws):
            ranked = [r for r in raws if r.rank is not None]

            def find(c):
                if c["kind"] == "rank":
                    hit = [r for r in ranked if "rank %s" % r.rank == c["name"]]
                    if len(hit) != 1:
                        return None
                    lo, hi = hit[0].rank_window()
                    procs = lanes_of(hit)
                    return (lo, hi - lo, 0, len(procs)), proc_kids(procs)
                return proc_kids(lanes_of([r for r in raws if r.rank is None]))(c)
            return find

        def step_ref(s):
            raws = [self.raw[t["path"]] for t in s["traces"]]
            kids = len({r.rank for r in raws if r.rank is not None}) + len(
                lanes_of([r for r in raws if r.rank is None]))
            if "start" in s:
                lo, hi = s["start"], s["end"]
            else:
                lo = min(r.rank_window()[0] for r in raws)
                hi = max(r.rank_window()[1] for r in raws)
            return (lo, hi - lo, 0, kids), trace_kids(raws)

        step_refs = {name: step_ref(s) for name, s in steps.items()}
        lo = min(r[0][0] for r in step_refs.values())
        hi = max(r[0][0] + r[0][1] for r in step_refs.values())
        node(root, (lo, hi - lo, 0, len(steps)), lambda c: step_refs.get(c["name"]))
        # the text: each node's duration and share, "... N more"
        text = self.section("Where the time went")
        k = 0

        def walk(j, level, parent_dur):
            nonlocal k, n
            for c in j.get("children", []):
                ref = refs.get(id(c))
                if k >= len(text) or ref is None:
                    return
                line = text[k]
                k += 1
                m = re.match(r"^  (\s*)(.*?) +(-?[\d.]+ \S+) +([\d.]+%|-)  (\S+)$", line)
                share = 100.0 * ref[1] / parent_dur if parent_dur > 0 else 100.0
                n += 2
                # the profiler's bookkeeping has no share of its parent: "-"
                books = m and m.group(5) == "profiler"
                if not m or not near_dur(m.group(3), ref[1]) or (
                        m.group(4) != "-" if books else not near_pct(m.group(4), share)):
                    bad.append("text '%s': raw %d ns, %.2f%%" % (line.strip(), ref[1], share))
                walk(c, level + 1, ref[1])
                if c.get("children") is not None and c["child_count"] > 12 and \
                        len(c["children"]) == 12:
                    n += 1
                    more = "  %s... %d more" % ("  " * (level + 1), ref[3] - 12)
                    if k >= len(text) or text[k] != more:
                        bad.append("text '%s', want '%s'" % (
                            text[k] if k < len(text) else "", more))
                    k += 1
        walk({"children": [root]}, 0, 0)
        self.check("tree: every node's start, duration, self time, children and share "
                   "(JSON exact, text to its digits) against the raw files", bad, n)

    # -- top operators --
    def operators(self):
        agg = {}
        for raw in self.raw.values():
            for x in raw.spans:
                if x["kind"] == "operator":
                    a = agg.setdefault(x["name"], [0, 0, 0])
                    a[0] += 1
                    a[1] += x["t1"] - x["t0"]
                    a[2] += x["self"]
        bad, n = [], 0
        for key, idx, title in (("top_operators_by_total", 1, "Top operators by total time"),
                                ("top_operators_by_self", 2, "Top operators by self time")):
            want = sorted(agg.items(), key=lambda kv: (-kv[1][idx], kv[0]))[:10]
            got = self.r[key]
            n += 1
            if [o["name"] for o in got] != [k for k, _ in want]:
                bad.append("%s: %s, raw %s" % (key, [o["name"] for o in got][:3],
                                               [k for k, _ in want][:3]))
            rows = [l for l in self.section(title)[1:] if l.strip()]
            for k, o in enumerate(got):
                a = agg.get(o["name"])
                n += 3
                if a is None or (o["count"], o["total_ns"], o["self_ns"]) != tuple(a):
                    bad.append("%s %s: count, total, self %s, raw %s" % (
                        key, o["name"], (o["count"], o["total_ns"], o["self_ns"]), a))
                    continue
                m = re.match(r"^  (.{50}) +(\d+) +(\S+ \S+) +(\S+ \S+)$", rows[k]) \
                    if k < len(rows) else None
                n += 3
                if not m or not o["name"].startswith(m.group(1).rstrip()) or \
                        int(m.group(2)) != a[0] or not near_dur(m.group(3), a[1]) or \
                        not near_dur(m.group(4), a[2]):
                    bad.append("text '%s': raw %s" % (rows[k].strip() if k < len(rows) else "",
                                                      a))
        self.check("top operators by total and self: count, total and self over the operator "
                   "spans of the traces", bad, n)

    # -- GPU streams --
    def streams(self):
        """Each stream's window is its own (from its first device work's
        start to its last one's end, as the GPU breakdown's idle share
        takes it) and its busy fraction busy / window; the source's window
        (from the first span's start to the last one's end: instants do not
        stretch it) is source_window_ns.  Busy and items are checked to the
        ns by streams.sh, and are how a stream is found here."""
        ref = {}
        for raw in self.raw.values():
            lanes = {}
            for x in raw.device():
                lanes.setdefault(norm(x["tid"]), []).append((x["t0"], x["t1"]))
            lo, hi = raw.window()
            for tid, xs in lanes.items():
                own = max(b for a, b in xs) - min(a for a, b in xs)
                ref.setdefault((tid, length(merge(xs)), len(xs)), []).append((own, hi - lo))
        bad, n = [], 0
        rows = [l for l in self.section("GPU streams") if "busy" in l]
        if len(rows) != len(self.r["gpu_streams"]):
            bad.append("%d text rows, %d in JSON" % (len(rows), len(self.r["gpu_streams"])))
        for k, x in enumerate(self.r["gpu_streams"]):
            tid = re.search(r"-?\d+", x["stream"]).group(0)
            w = ref.get((tid, x["busy_ns"], x["items"]))
            n += 2
            if not w or len(set(w)) != 1:
                bad.append("stream %s (busy %d, %d items): no stream of a trace so" % (
                    tid, x["busy_ns"], x["items"]))
                continue
            w = w[0]
            if x["window_ns"] != w[0] or abs(x["busy_fraction"] - x["busy_ns"] / w[0]) > 1e-12 \
                    or x["source_window_ns"] != w[1]:
                bad.append("stream %s: window %d, fraction %.4f, source's %d; raw window %d,"
                           " fraction %.4f, source's %d" % (
                               tid, x["window_ns"], x["busy_fraction"], x["source_window_ns"],
                               w[0], x["busy_ns"] / w[0], w[1]))
            m = re.search(r"busy +(\S+ \S+) of +(\S+ \S+) +(\S+%) +(\d+) items$", rows[k]) \
                if k < len(rows) else None
            n += 4
            if not m or not near_dur(m.group(1), x["busy_ns"]) or not near_dur(m.group(2), w[0]) \
                    or not near_pct(m.group(3), 100.0 * x["busy_ns"] / w[0]) \
                    or int(m.group(4)) != x["items"]:
                bad.append("text '%s': raw window %d" % (rows[k].strip() if k < len(rows) else "",
                                                         w[0]))
        self.check("GPU streams: each stream's window is its own first to last work, busy a "
                   "share of it; its source's window is its trace's spans'",
                   bad, n)

    # -- GPU breakdown --
    def breakdown(self):
        """Each trace's breakdown against hta_reference.py (HTA's
        definitions from the raw file), exactly; the text within its
        digits, its idle causes and copies against idle_check.py's reading
        of the raw file (the JSON's: idle.sh)."""
        bad, n = [], 0
        text = self.section("GPU breakdown")
        heads = [k for k, l in enumerate(text) if l.startswith("  ") and not l.startswith("   ")]
        if not self.r["gpu_breakdown"]:
            self.check("GPU breakdown: none without device work",
                       [] if text == ["  (no device work)"] else ["text %s" % text[:2]], 0)
            return
        if len(heads) != len(self.r["gpu_breakdown"]):
            bad.append("%d text blocks, %d in JSON" % (len(heads), len(self.r["gpu_breakdown"])))
        paths = {os.path.basename(t["path"]): t["path"] for _, t, _ in self.traces()}
        for b, g in enumerate(self.r["gpu_breakdown"]):
            path = paths.get(os.path.basename(g["source"]))
            if path is None:
                bad.append("%s: not a trace of the case" % g["source"])
                continue
            name = os.path.basename(path)
            ref = hta_lines(path)
            got = {"rank": (g["items"], g["left_out"]),
                   "temporal": (g["window_ns"], g["idle_ns"], g["compute_ns"], g["noncompute_ns"]),
                   "overlap": (g["comm_ns"], g["overlap_ns"])}
            got.update(("type " + t, v) for t, v in g["kernel_type_ns"].items())
            for x in g["streams"]:
                tid = re.search(r"-?\d+", x["name"]).group(0)
                got["stream " + tid] = (x["items"], x["window_ns"], x["idle_ns"], x["compute_ns"],
                                        x["noncompute_ns"])
                for w, v in x["idle_breakdown"].items():
                    got["idle %s %s" % (tid, w)] = (v["ns"], v["count"])
            got["kernels"] = sorted((k["type"], k["name"], k["count"], k["sum_ns"], k["min_ns"],
                                     k["max_ns"]) for k in g["top_kernels"])
            for key, want in ref.items():
                n += 1
                if got.get(key) != want:
                    bad.append("%s %s: %s, raw %s" % (name, key, str(got.get(key))[:80],
                                                      str(want)[:80]))
            # the text block of this trace
            end = heads[b + 1] if b + 1 < len(heads) else len(text)
            block = text[heads[b]:end] if b < len(heads) else []
            fig = idle_check.Trace(path).figures()
            bad += self.breakdown_text(name, block, ref, fig, g)
            n += len(block)
        self.check("GPU breakdown: temporal, kernel types, overlap, idle per stream and top "
                   "kernels against hta_reference.py; the text's figures", bad, n)

    @staticmethod
    def breakdown_text(name, block, ref, fig, g):
        bad = []

        def want(ok, line, why):
            if not ok:
                bad.append("%s text '%s': %s" % (name, line.strip()[:100], why))
        if not block:
            return ["%s: no text" % name]
        items, left = ref["rank"]
        m = re.search(r": (\d+) items, scope: (?:the whole trace|launched before the last"
                      r" profiler step \((\d+) left out\))$", block[0])
        want(m and int(m.group(1)) == items and int(m.group(2) or 0) == left, block[0],
             "items %d, left out %d" % (items, left))
        win, idle, comp, non = ref["temporal"]
        m = re.search(r"window (\S+ \S+): idle (\S+), compute (\S+), non-compute (\S+)$",
                      block[1])
        want(m and near_dur(m.group(1), win) and near_pct(m.group(2), 100 * idle / win)
             and near_pct(m.group(3), 100 * comp / win)
             and near_pct(m.group(4), 100 * non / win), block[1], "raw %s" % (ref["temporal"],))
        kern = [l for l in block if l.strip().startswith("kernels:")]
        m = re.search(r"computation (\S+ \S+), communication (\S+ \S+), memory (\S+ \S+),"
                      r" other (\S+ \S+)"
                      r"(?:; communication overlapped with computation (\S+))?$",
                      kern[0] if kern else "")
        comm, over = ref["overlap"]
        want(m and near_dur(m.group(1), ref["type COMPUTATION"])
             and near_dur(m.group(2), ref["type COMMUNICATION"])
             and near_dur(m.group(3), ref["type MEMORY"])
             and near_dur(m.group(4), ref["type OTHER"])
             and (m.group(5) is None) == (comm == 0)
             and (comm == 0 or near_pct(m.group(5), 100 * over / comm)),
             kern[0] if kern else "", "no kernels line as the raw file's")
        # the GPU's causes, then each stream's: the line after its header
        wanted = [(fig["gpu"], idle, 2)]
        streams = [k for k, l in enumerate(block) if re.match(r"^     \S.*: \d+ items, idle", l)]
        for k in streams:
            m = re.match(r"^     stream (-?\d+) *: (\d+) items, idle (\S+) of its window:"
                         r" host wait (\S+ \S+)"
                         r" \((\d+) gaps?\), kernel wait (\S+ \S+) \((\d+)\), other (\S+ \S+)"
                         r" \((\d+)\)$", block[k])
            tid = m.group(1) if m else None
            st = ref.get("stream " + str(tid))
            ok = m and st and int(m.group(2)) == st[0] and near_pct(m.group(3),
                                                                    100 * st[2] / st[1])
            for w, (dur, cnt) in zip(("host_wait", "kernel_wait", "other"),
                                     ((4, 5), (6, 7), (8, 9))):
                x = ref.get("idle %s %s" % (tid, w))
                ok = ok and x and near_dur(m.group(dur), x[0]) and int(m.group(cnt)) == x[1]
            want(ok, block[k], "raw %s" % (st,))
            f = [v for key, v in fig["streams"].items() if norm(str(key[1])) == tid]
            if f and st:
                wanted.append((f[0]["causes"], st[2], k + 1))
                cp = f[0]["copies"]
                line = [l for l in block[k + 1:k + 3] if l.strip().startswith("copies:")]
                if cp["count"]:
                    mm = re.search(r"copies: (\d+), (\S+) (\S+) in (\S+ \S+) \((\S+) of the "
                                   r"window\)", line[0] if line else "")
                    scale = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
                    want(mm and int(mm.group(1)) == cp["count"]
                         and abs(float(mm.group(2)) * scale[mm.group(3)] - cp["bytes"])
                         <= 0.05 * scale[mm.group(3)] + 0.5
                         and near_dur(mm.group(4), cp["ns"])
                         and near_pct(mm.group(5), 100 * cp["ns"] / st[1]),
                         line[0] if line else "", "raw copies %s" % cp)
                else:
                    want(not line, line[0] if line else "", "no copies in the raw file")
        for by_cause, base, k in wanted:
            line = block[k] if k < len(block) and "idle by cause:" in block[k] else ""
            parts = re.findall(r"(\w+) (\S+ \S+) \((\S+), (\d+) gaps?\)", line)
            exp = [(c, v) for c, v in by_cause.items() if v[1]]
            ok = len(parts) == len(exp)
            for (c, d, p, gaps), (c2, (ns, cnt)) in zip(parts, exp):
                ok = ok and c == c2 and near_dur(d, ns) and near_pct(p, 100 * ns / base) \
                    and int(gaps) == cnt
            want(ok, line, "raw %s" % exp)
        return bad

    # -- where an issue points --
    def step_window(self, step):
        if "start" in step:
            return step["start"], step["end"]
        ws = [self.raw[t["path"]].rank_window() for t in step["traces"]]
        return min(w[0] for w in ws), max(w[1] for w in ws)

    def workflow_window(self):
        ws = [self.step_window(s) for s in self.case["steps"]]
        return min(w[0] for w in ws), max(w[1] for w in ws)

    def trace_at(self, path):
        """The trace a phase path is in: its step's, of its rank."""
        parts = path.split("/")
        step = [s for s in self.case["steps"] if len(parts) > 2 and s["name"] == parts[2]]
        if not step:
            return None
        raws = [self.raw[t["path"]] for t in step[0]["traces"]]
        rank = re.fullmatch(r"rank (\d+)", parts[3]) if len(parts) > 3 else None
        if rank:
            raws = [r for r in raws if r.rank == int(rank.group(1))]
        return raws[0] if len(raws) == 1 else None

    # -- top issues --
    def issues(self):
        """Each issue's saving against its own reference, its share of the
        workflow against the manifest's window; the text's ten."""
        bad, n = [], 0
        lo, hi = self.workflow_window()
        rows = {r["path"]: r for r in self.r["attribution"]["phases"]}
        refs = []
        idle_seen = {}
        for u in self.r["top_issues"]:
            ref, why = None, ""
            if u["kind"] == "idle-gpu":
                raw = self.trace_at(u["path"])
                fig = idle_check.Trace(raw.path).figures()["gpu"] if raw else None
                win = hta_lines(raw.path)["temporal"] if raw else None
                if fig:
                    idle_seen.setdefault(raw.path, (fig, win))
                    ref = fig[u["cause"]][0]
                    bad += self.idle_words(u, fig, win)
                    n += 6
            elif u["kind"] in ("bottleneck", "software-bound"):
                # its duration less the estimate without it (checked with
                # the Resources)
                r = rows.get(u["path"])
                if r and r["bottlenecks"]:
                    ref = r["dur_ns"] - r["bottlenecks"][0]["without_ns"]
                    bad += self.bound_words(u, r, ref)
                    n += 3
            elif u["kind"] == "critical-path":
                cp = [c for c in self.r["critical_path"] if c["phase_id"] == u["phase_id"]
                      and c["whatif_2x_makespan_ns"] is not None]
                if cp:
                    ref = cp[0]["makespan_ns"] - cp[0]["whatif_2x_makespan_ns"]
            elif u["kind"] == "imbalance":
                g = [x for x in self.r["imbalance"] if x["straggler_id"] == u["phase_id"]
                     and x["kind"] == "ranks"]
                if g:
                    ref = g[0]["impact_ns"]
            refs.append(ref)
            n += 2
            if ref is None:
                bad.append("%s %s: no reference" % (u["kind"], u["path"]))
                continue
            if u["impact_ns"] != ref:
                bad.append("%s %s: saving %d, reference %d" % (u["kind"], u["path"],
                                                               u["impact_ns"], ref))
            if abs(u["share"] - ref / (hi - lo)) > 1e-12:
                bad.append("%s %s: share %.6f, of the workflow's %d ns %.6f" % (
                    u["kind"], u["path"], u["share"], hi - lo, ref / (hi - lo)))
        # an idle-gpu issue for each cause that held a GPU idle 10% of its window
        for path, (fig, win) in idle_seen.items():
            want = sorted(c for c, v in fig.items() if v[0] >= 0.1 * win[0])
            got = sorted(u["cause"] for u in self.r["top_issues"] if u["kind"] == "idle-gpu"
                         and self.trace_at(u["path"]) is self.raw[path])
            n += 1
            if got != want:
                bad.append("%s: idle-gpu causes %s, 10%% of the window or more: %s" % (
                    os.path.basename(path), got, want))
        # the text: the first ten, ranked
        text = self.section("Top issues")
        heads = [l for l in text if re.match(r"^ +\d+\. ", l)]
        for k, u in enumerate(self.r["top_issues"][:10]):
            m = re.match(r"^ +(\d+)\. (\S+) +(\S+ \S+) +(\S+%)  (.*)$", heads[k]) \
                if k < len(heads) else None
            ref = refs[k]
            n += 3
            if not m or int(m.group(1)) != k + 1 or m.group(2) != u["kind"] or ref is None or \
                    not near_dur(m.group(3), ref) or not near_pct(m.group(4),
                                                                  100 * ref / (hi - lo)):
                bad.append("text '%s': reference %s" % (heads[k].strip() if k < len(heads)
                                                        else "", ref))
        self.check("top issues: each saving against its reference (the idle of its cause, "
                   "the Resources' estimate without it, the what-if, the stragglers'), its share of the workflow, "
                   "the figures in its words", bad, n)

    @staticmethod
    def idle_words(u, fig, win):
        """An idle-gpu issue's words: the GPU idle, its window, the cause's
        time and gaps, each cause's share."""
        idle = sum(v[0] for v in fig.values())
        m = re.search(r"sat idle (\S+ \S+) of its (\S+ \S+) \((\S+)\); cause (\w+) for "
                      r"(\S+ \S+) \((\d+) gaps?\)", u["explanation"])
        shares = dict(re.findall(r"(\w+) (\d+%)", u["explanation"].split(
            "Idle by cause:")[-1]))
        c = fig[u["cause"]]
        ok = m and near_dur(m.group(1), idle) and near_dur(m.group(2), win[0]) and \
            near_pct(m.group(3), 100 * idle / win[0]) and m.group(4) == u["cause"] and \
            near_dur(m.group(5), c[0]) and int(m.group(6)) == c[1] and \
            sorted(shares) == sorted(k for k, v in fig.items() if v[1]) and \
            all(near_pct(shares[k], 100 * fig[k][0] / idle) for k in shares)
        return [] if ok else ["idle-gpu %s: words '%s', raw idle %d of %d, %s" % (
            u["path"], u["explanation"][:160], idle, win[0], fig)]

    @staticmethod
    def bound_words(u, r, saving):
        """A bottleneck's or software-bound's words: the share of its time
        bound and its duration, the saving."""
        b = r["bottlenecks"][0]
        m = re.search(r"during (\d+%) of its ([\d.]+ (?:ns|us|ms|s|min|h))\b", u["explanation"])
        s = re.search(r"(?:would save about|up to) ([\d.]+ (?:ns|us|ms|s|min|h))\b",
                      u["explanation"])
        ok = m and s and near_pct(m.group(1), 100 * b["fraction"]) and \
            near_dur(m.group(2), r["dur_ns"]) and near_dur(s.group(1), saving)
        return [] if ok else ["%s %s: words '%s', bound %.3f of %d, saving %d" % (
            u["kind"], u["path"], u["explanation"][:160], b["fraction"], r["dur_ns"], saving)]

    # -- stragglers --
    def stragglers(self):
        """Each group of ranks that meet at collectives, and each
        ProfilerStep#N's (the step whose ProfilerStep#N the last rank was
        in when it arrived), from straggler.py's reading of the raw traces:
        straggler, collectives, last arrivals, waits, the longest wait and
        the impact; then the text of every group and rank."""
        bad, n = [], 0
        text = "\n".join(self.section("Stragglers"))
        for step in self.case["steps"]:
            paths = [t["path"] for t in step["traces"]]
            if len(paths) < 2 or any(self.raw[p].rank is None for p in paths):
                continue
            ranks = [straggler.Rank(p) for p in paths]
            nccl = all(any(e.get("cat") == "kernel" and e["name"].startswith("nccl")
                           for e in r.spans) for r in ranks)
            meets = straggler.meetings(ranks, host=not nccl)
            groups = {None: meets}
            for m in meets:
                last = [r for r in ranks if r.rank == m["last"]][0]
                at = [e for e in last.spans if e["name"].startswith("ProfilerStep#")
                      and e.get("cat") == "user_annotation"
                      and e["start"] <= m["arrive"][m["last"]] < e["end"]]
                if at:
                    groups.setdefault(at[0]["name"], []).append(m)
            its = [k for k in groups if k is not None]
            if len(its) < 2:
                groups = {None: meets}
            label = "the %d ranks of step %s" % (len(ranks), step["name"])
            for it, ms in groups.items():
                want = straggler_figures(ranks, ms)
                kind = "ranks" if it is None else "iteration"
                lab = label if it is None else "%s on %s" % (it, label)
                got = [g for g in self.r["imbalance"] if g["kind"] == kind and g["label"] == lab]
                n += 8
                if len(got) != 1:
                    bad.append("no group '%s'" % lab)
                    continue
                g = got[0]
                have = {"straggler": g["straggler"], "collectives": g["collectives"],
                        "last": g["last"], "wait_ns": g["wait_ns"], "longest": g["longest"],
                        "longest_wait_ns": g["longest_wait_ns"],
                        "waits": {x["name"]: (x["last"], x["wait_ns"]) for x in g["ranks"]}}
                if {k: v for k, v in have.items()} != {k: want[k] for k in have}:
                    bad.append("%s: %s, raw %s" % (lab, have, {k: want[k] for k in have}))
                if abs(g["impact_ns"] - want["impact"]) > 2:
                    bad.append("%s: impact %d, raw %.1f" % (lab, g["impact_ns"], want["impact"]))
                # the text
                how = "NCCL kernels on the GPU" if nccl else "c10d ops on the host"
                line = re.escape("%s arrives last at %d of %d collectives (%s); the others wait " % (
                    want["straggler"], want["last"], want["collectives"], how)) + \
                    r"(\S+ \S+) in all, " + re.escape(want["longest"]) + \
                    r" the longest \((\S+ \S+)\)$"
                where = "    " + lab if it is not None else "  /%s/%s" % (self.case["name"],
                                                                       step["name"])
                m = re.search("^" + re.escape(where) + ": " + line, text, re.M)
                n += 2
                if not m or not near_dur(m.group(1), want["wait_ns"]) or \
                        not near_dur(m.group(2), want["longest_wait_ns"]):
                    bad.append("text of %s: no line with %s arriving last, waits %d, %d" % (
                        lab, want["straggler"], want["wait_ns"], want["longest_wait_ns"]))
                if it is None:
                    for name, (last, wait) in want["waits"].items():
                        m = re.search(r"\n    %s +last at %d of %d  waited (\S+ \S+)\n" % (
                            re.escape(name), last, want["collectives"]), text + "\n")
                        n += 1
                        if not m or not near_dur(m.group(1), wait):
                            bad.append("text: %s last at %d, waited %d" % (name, last, wait))
        self.check("stragglers: each group and each ProfilerStep's (straggler, last arrivals, "
                   "waits, longest, impact) and the text against the raw traces", bad, n)

    # -- resources --
    def row_window(self, path):
        parts = path.split("/")
        if len(parts) == 2:
            return self.workflow_window()
        step = [x for x in self.case["steps"] if x["name"] == parts[2]]
        if len(parts) == 3 and step:
            return self.step_window(step[0])
        raw = self.trace_at(path)
        return raw.rank_window() if raw and len(parts) == 4 else None

    def periods(self):
        if not hasattr(self, "_periods"):
            self._periods = self.read_periods()
        return self._periods

    def sampled(self, cls):
        """The samples of a class as read (the GPU's without its device
        work)."""
        ps = self.periods()
        return self._gpu_sampled if cls == "gpu" else ps[cls]

    def read_periods(self):
        """The samples of each class as periods: [(t0, t1, {series: % of
        capacity})], sar's each over its interval before its stamp,
        nvidia-smi's from its stamp to the next (3 median periods at
        most)."""
        out = {}
        for path in self.case.get("sadf", []):
            smp, _ = expect.samples(expect.load(path))
            out["host"] = [(a, b, v) for a, b, v in smp]
        caps = {"memory.used": "memory.total", "power.draw": "power.limit"}
        for path in self.case.get("nvsmi", []):
            rows = nvsmi_table(path)
            gaps = sorted(b["t"] - a["t"] for a, b in zip(rows, rows[1:]) if b["t"] > a["t"])
            period = gaps[(len(gaps) - 1) // 2]
            ps = []
            for i, r in enumerate(rows):
                end = min(rows[i + 1]["t"], r["t"] + 3 * period) if i + 1 < len(rows) \
                    else r["t"] + period
                v = {}
                for k, x in r.items():
                    if k == "t" or x is None:
                        continue
                    cap = 100.0 if k.startswith("utilization.") else r.get(caps.get(k))
                    if cap:
                        v[k] = 100.0 * x / cap
                ps.append((r["t"], end, v))
            self._gpu_sampled = ps
            out["gpu"] = self.traced_gpu(ps)
        return out

    def cover(self):
        """The time the traces of the GPU's device work cover: each one's
        window, from its first span to its last."""
        return merge([raw.window() for raw in self.raw.values() if raw.device()])

    def traced_gpu(self, ps):
        """nvidia-smi's periods with the GPU's traced device work beside
        them (grademl-tui(1) Bottlenecks): within the window of each trace
        with device work (its first span to its last), "device work" is 100
        while some kernel, copy or set of any trace runs and 0 otherwise;
        the periods are cut where that changes, their samples as read."""
        cover = self.cover()
        work = merge([(x["t0"], x["t1"]) for raw in self.raw.values()
                      for x in raw.device() if x["t1"] > x["t0"]])
        cuts = sorted({t for a, b in cover + work for t in (a, b)} |
                      {t for a, b, _ in ps for t in (a, b)})
        pstarts, cstarts, wstarts = ([x[0] for x in xs] for xs in (ps, cover, work))
        out = []
        for a, b in zip(cuts, cuts[1:]):
            p = holding(ps, pstarts, a, b)
            v = dict(p[2]) if p else {}
            if holding(cover, cstarts, a, b):
                v["device work"] = 100.0 if holding(work, wstarts, a, b) else 0.0
            if v:
                out.append((a, b, v))
        return out

    def shares_gpu(self, raw):
        """Whether another trace's device work is on the GPU while raw's
        window is open (grademl-tui(1) Bottlenecks: a shared GPU)."""
        lo, hi = raw.window()
        return raw.device() and any(
            o is not raw and o.device() and o.window()[0] < hi and lo < o.window()[1]
            for o in self.raw.values())

    def own_gpu(self, raw, ps):
        """ps, the GPU's periods, with "device work" raw's own inside its
        window: a rank on a shared GPU is judged on its own device work."""
        lo, hi = raw.window()
        work = merge([(x["t0"], x["t1"]) for x in raw.device() if x["t1"] > x["t0"]])
        cuts = sorted({t for a, b, _ in ps for t in (a, b)} |
                      {t for a, b in work for t in (a, b) if lo <= t <= hi})
        pstarts, wstarts = [x[0] for x in ps], [x[0] for x in work]
        out = []
        for a, b in zip(cuts, cuts[1:]):
            p = holding(ps, pstarts, a, b)
            if not p:
                continue
            v = dict(p[2])
            if lo <= a and b <= hi:
                v["device work"] = 100.0 if holding(work, wstarts, a, b) else 0.0
            out.append((a, b, v))
        return out

    def resources(self):
        """Each row of the attribution (workflow, steps, ranks): what was
        measured, its work, its estimated use, the share of its time each
        bound held, the estimate without its verdict; and the text."""
        bad, n = [], 0
        periods = self.periods()
        demand = {}
        for f in self.r["attribution"]["demand"]:
            demand.setdefault(f["resource"], {})[f["phase_type"]] = (f["rule"] == "exact",
                                                                     f["demand"])
        use = self.est_use(periods, demand)
        text = self.section("Resources (")
        # the demands: the rule's and the NNLS fit's, and the text's lines
        for res, d in self.fits.items():
            for t, (exact, x) in d.items():
                got = demand.get(res, {}).get(t, (False, 0.0))
                n += 1
                if got[0] != exact or abs(got[1] - x) > 1e-6 * max(1.0, abs(x)):
                    bad.append("demand %s %s: %s, fit %s" % (res, t, got, (exact, x)))
                line = [l for l in text if re.match(r"^    metric #\d+ %s +%s +" % (
                    re.escape(res), re.escape(t)), l)]
                n += 1
                if (x > 0) != bool(line) or (line and not line[0].endswith(
                        "%s %s" % ("exact" if exact else "variable", "%.3g" % x))):
                    bad.append("text demand %s %s: %s, fit %.3g" % (res, t, line, x))
        for row in self.r["attribution"]["phases"]:
            path = row["path"]
            w = self.row_window(path)
            if w is None:
                bad.append("%s: not a phase of the case" % path)
                continue
            lo, hi = w
            dur = hi - lo
            cls = "gpu" if row["device_work_ns"] or "gpu" in row["resources"] else "host"
            ps = [(max(a, lo), min(b, hi), v) for a, b, v in periods.get(cls, [])
                  if min(b, hi) > max(a, lo)]
            raw = self.trace_at(path) if len(path.split("/")) == 4 else None
            if cls == "gpu" and raw and self.shares_gpu(raw):
                ps = self.own_gpu(raw, ps)
            # measured: mean and peak of each series shown
            for m in row["measured"]:
                xs = [(b - a, v[m["metric"]]) for a, b, v in ps if m["metric"] in v]
                cov = sum(t for t, _ in xs)
                n += 2
                if not xs or abs(m["mean"] - sum(t * x for t, x in xs) / cov) > 1e-6 or \
                        abs(m["peak"] - max(x for _, x in xs)) > 1e-6:
                    bad.append("%s %s: mean %.4f peak %.4f, raw %s" % (
                        path, m["metric"], m["mean"], m["peak"],
                        "none" if not xs else "%.4f %.4f" % (
                            sum(t * x for t, x in xs) / cov, max(x for _, x in xs))))
            # work: the busy time of its threads and of its streams, added up
            work = self.work_of(path, cls)
            n += 2
            if (row["host_work_ns"], row["device_work_ns"]) != work:
                bad.append("%s: host, device work %s, raw %s" % (
                    path, (row["host_work_ns"], row["device_work_ns"]), work))
            # estimated use
            for res, x in row["resources"].items():
                if "use" not in x:
                    continue
                ref = use.get(res, {}).get(path, 0.0) / dur
                n += 1
                if abs(x["use"] - ref) > 1e-6:
                    bad.append("%s: est. use of %s %.6f, raw %.6f" % (path, res, x["use"], ref))
            # bounds: the judged metrics of its class
            judged = [r for r in ("cpu", "gpu", "gpu-mem", "disk", "net")
                      if any(d > 0 for _, d in demand.get(r, {}).values())]
            held = {}
            covered = 0
            for a, b, v in ps:
                sat = bounds_held(v, judged)
                if sat is None:
                    continue
                covered += b - a
                for k in sat or ["software"]:
                    held[k] = held.get(k, 0) + b - a
            g = {k: t / dur for k, t in held.items()}
            got = {b["resource"]: b["fraction"] for b in row["bottlenecks"]}
            n += 2 + len(g)
            if set(got) != set(g) or any(abs(got[k] - g[k]) > 1e-9 for k in g):
                bad.append("%s: bound %s, raw %s" % (path, got, g))
            if abs(row["no_data"] - (1 - covered / dur)) > 1e-9:
                bad.append("%s: no data %.4f, raw %.4f" % (path, row["no_data"],
                                                            1 - covered / dur))
            # software's saving: over the time its work covers, or the time
            # a trace of its device work covers of its window if longer
            covers = max(self.covered_work(path, cls),
                         length(merge([(max(a, lo), min(b, hi)) for a, b in self.cover()
                                       if min(b, hi) > max(a, lo)])) if cls == "gpu" else 0)
            for b in row["bottlenecks"]:
                others = max([v for k, v in g.items() if k != b["resource"]] or [0.0])
                k = b["resource"]
                base = min(covers, dur) if k == "software" else dur
                want = dur - round(min(g.get(k, 0), 1 - others) * base)
                n += 1
                if abs(b["without_ns"] - want) > 1:
                    bad.append("%s: without %s %d, raw %d" % (path, k, b["without_ns"], want))
            bad += self.resources_text(text, row, dur, use, ps)
            n += 3
        self.check("resources: each row's measured series, work, est. use, bounds and the "
                   "estimate without its verdict against the samples and traces", bad, n)

    def resources_text(self, text, row, dur, use, ps):
        """The row's three lines in the text report."""
        path = row["path"]
        try:
            k = next(i for i, l in enumerate(text) if l == "  " + path)
        except StopIteration:
            return ["text: no row %s" % path]
        lines = text[k + 1:k + 4]
        bad = []
        parts = re.findall(r"(?:(\S+) )?(device work|\S+) (\d+%) \(peak (\d+%)\)",
                           lines[0][len("      measured "):])
        for m, (res, name, mean, peak) in zip(row["measured"], parts):
            xs = [(b - a, v[m["metric"]]) for a, b, v in ps if m["metric"] in v]
            cov = sum(t for t, _ in xs)
            if name != m["metric"] or not xs or \
                    not near_pct(mean, sum(t * x for t, x in xs) / cov) or \
                    not near_pct(peak, max(x for _, x in xs)):
                bad.append("text %s: '%s'" % (path, lines[0].strip()))
        if len(parts) != len(row["measured"]):
            bad.append("text %s: '%s'" % (path, lines[0].strip()))
        est = dict(re.findall(r"([\w-]+) (\d+%)", lines[1].split("(")[0]))
        for res, x in row["resources"].items():
            if "use" in x and not near_pct(est.get(res, "x"), 100 * use.get(res, {}).get(
                    path, 0.0) / dur):
                bad.append("text %s: '%s'" % (path, lines[1].strip()))
        for kind, ns in (("host", row["host_work_ns"]), ("device", row["device_work_ns"])):
            m = re.search(kind + r" work (\S+ \S+?)[,)]", lines[1])
            if (0 < ns < dur) != bool(m) or (m and not near_dur(m.group(1), ns)):
                bad.append("text %s: '%s'" % (path, lines[1].strip()))
        bs = [(b["resource"], b["fraction"]) for b in row["bottlenecks"]]
        words = ", ".join("%s %s" % (r, "%.0f%%" % (100 * f)) for r, f in bs)
        bound = lines[2]
        # beside the software share, why its GPUs idled (idle_cause,
        # checked against the GPU breakdown by tests/e2e/cause.sh)
        c = row.get("idle_cause")
        if c:
            why = " (its %s idled for %s %.0f%% of %s: " % (
                "GPU" if c["gpus"] == 1 else "%d GPUs" % c["gpus"], c["cause"],
                100 * c["share"], "its window" if c["gpus"] == 1 else "their windows")
            at = bound.find(why)
            end = bound.find(")", at + len(why))
            if at < 0 or end < 0 or not bound[:at].endswith("software %.0f%%" % (
                    100 * dict(bs)["software"])):
                bad.append("text %s: no cause %r in '%s'" % (path, why, bound.strip()))
            else:
                bound = bound[:at] + bound[end + 1:]
        if not bound.startswith("      bound by " + words) or \
                not near_dur(re.search(r" of its (\S+ \S+?)(?:;|$)", bound).group(1), dur):
            bad.append("text %s: '%s'" % (path, lines[2].strip()))
        return bad

    def units(self, cls):
        if cls not in self._units:
            self._units[cls] = self.read_units(cls)
        return self._units[cls]

    def read_units(self, cls):
        """The work of a class as units: (trace path, type, start, end):
        on a GPU each kernel, copy and set; on a host each stretch of a
        thread where its innermost span runs (Kineto's profiler span is no
        work)."""
        out = []
        for raw in self.raw.values():
            if cls == "gpu":
                for x in raw.device():
                    out.append((raw.path, device_type(x), x["t0"], x["t1"]))
                continue
            lanes = {}
            for x in raw.spans:
                if x["kind"] not in ("device", "gpu_annotation"):
                    lanes.setdefault((x["pid"], x["tid"]), []).append(x)
            for xs in lanes.values():
                for x, a, b in innermost(xs):
                    t = host_type(x)
                    if t is not None and b > a:
                        out.append((raw.path, t, a, b))
        return out

    def in_row(self, path):
        """The traces a row's work comes from."""
        parts = path.split("/")
        if len(parts) == 4:
            raw = self.trace_at(path)
            return {raw.path} if raw else set()
        steps = [x for x in self.case["steps"] if len(parts) == 2 or x["name"] == parts[2]]
        return {t["path"] for x in steps for t in x["traces"]}

    def work_of(self, path, cls):
        """(host, device) work of a row: each thread's (or stream's) busy
        time, added up; host work counts only where its class is measured."""
        traces = self.in_row(path)
        host = dev = 0
        if "host" in self.periods():
            lanes = {}
            for p, t, a, b in self.units("host"):
                if p in traces:
                    lanes.setdefault(p, []).append((a, b))
            host = sum(length(merge(v)) for v in lanes.values())
        for p in traces:
            raw = self.raw[p]
            streams = {}
            for x in raw.device():
                streams.setdefault(x["tid"], []).append((x["t0"], x["t1"]))
            dev += sum(length(merge(v)) for v in streams.values())
        return host, dev if "gpu" in self.periods() else 0

    def covered_work(self, path, cls):
        """The time a row's work covers, in its measured class."""
        traces = self.in_row(path)
        return length(merge([(a, b) for p, t, a, b in self.units(cls) if p in traces]))

    def est_use(self, periods, demand):
        """GradeML's attribution (grademl-tui(1) Resource attribution), as a
        row's use of each resource x its duration: per sample period, the
        time each mix of active work types lasted; the value upsampled over
        the mixes (exact demand, then variable, then background, capped);
        each unit of work charged its type's rate while it runs.  The
        demands are the report's (its NNLS fit is not redone here)."""
        res_metric = {"gpu": ("gpu", "utilization.gpu"), "gpu-mem": ("gpu", "utilization.memory"),
                      "cpu": ("host", "cpu.util")}
        out = {}
        self.fits = {}
        for res, (cls, metric) in res_metric.items():
            if res not in demand or cls not in periods:
                continue
            units = self.units(cls)
            types = sorted({t for _, t, _, _ in units})
            if res == "gpu":  # the traced device work where a trace covers
                ps = [(a, b, v.get("device work", v.get(metric))) for a, b, v in periods[cls]
                      if "device work" in v or metric in v]
            else:
                ps = [(a, b, v[metric]) for a, b, v in self.sampled(cls) if metric in v]
            # device work (kernels, copies, sets) demands the whole GPU
            # (exact): it is what utilization.gpu measures, copies included
            # (man page, Bottlenecks); the rest by NNLS
            if res == "gpu":
                d = {t: (True, 100.0) if t in ("kernel", "memcpy", "memset") else (False, 0.0)
                     for t in types}
            else:
                d = fit(units, types, ps, {})
            self.fits[res] = d
            charged = upsampled_charge(units, types, d, ps, 100.0)
            rows = {}
            for row in self.r["attribution"]["phases"]:
                traces = self.in_row(row["path"])
                rows[row["path"]] = sum(c for (p, _, _, _), c in zip(units, charged)
                                        if p in traces) / 100.0
            out[res] = rows
        return out

    def phase_start(self, phase_id):
        """Where the phase of that id starts: only to find it in the raw
        trace (grademl-tui query; None without a database)."""
        if not self.db:
            return None
        rows = query(self.db, "phases id = %d | select start" % phase_id)
        return rows[0]["start"] if rows else None

    # -- critical path --
    def critical(self):
        """The makespan (the manifest's window), the waits (at least the
        gaps between steps; on traces of one thread those alone), each
        step's own time on the path (its window less the span of its trace
        that ends last: the chain back from the last end runs through it),
        and on a trace of one thread each listed phase's time on the path
        (its self time) and its twice-as-fast saving (half its duration);
        then the text."""
        bad, n = [], 0
        cp = self.r["critical_path"]
        if not cp:
            self.check("critical path", ["none in the report"])
            return
        lo, hi = self.workflow_window()
        wins = sorted(self.step_window(x) for x in self.case["steps"])
        gaps = sum(max(0, b[0] - max(a[1] for a in wins[:k + 1]))
                   for k, b in enumerate(wins[1:]))
        spans, serial = {}, set()
        for x in self.case["steps"]:
            raws = [self.raw[t["path"]] for t in x["traces"]]
            if raws:
                last = max(raws, key=lambda r: r.rank_window()[1])
                spans[x["name"]] = last.rank_window() if last.rank is not None else work_window(last)
            for r in raws:
                threads = {(y["pid"], y["tid"]) for y in r.spans if y["kind"] not in (
                    "device", "gpu_annotation", "span")}
                if len(threads) == 1 and not any(y["name"] in idle_check.SYNC_CALLS
                                                 for y in r.spans):
                    serial.add(r.path)
        one_thread = len(serial) == len(self.raw)
        inside = sum(b - a for a, b in spans.values())
        row = cp[0]
        n += 2
        if row["makespan_ns"] != hi - lo:
            bad.append("makespan %d, the manifest's %d" % (row["makespan_ns"], hi - lo))
        if not (gaps <= row["wait_ns"] <= gaps + inside) or (one_thread and
                                                             row["wait_ns"] != gaps):
            bad.append("wait %d; the gaps between steps %d, traced %d" % (
                row["wait_ns"], gaps, inside))
        refs = {}
        for c in cp:
            parts = c["path"].split("/")
            if len(parts) == 3:
                x = [y for y in self.case["steps"] if y["name"] == parts[2]][0]
                a, b = self.step_window(x)
                own = b - a
                if x["name"] in spans:
                    s0, s1 = spans[x["name"]]
                    own -= max(0, min(b, s1) - max(a, s0))
                refs[c["phase_id"]] = (own, None)
            else:
                raw = self.trace_at(c["path"])
                t0 = self.phase_start(c["phase_id"]) if raw and raw.path in serial else None
                hit = [y for y in raw.spans if y["name"] == parts[-1] and y["t0"] == t0 and
                       y["kind"] != "device"] if t0 is not None else []
                if len(hit) == 1:
                    y = hit[0]
                    refs[c["phase_id"]] = (y["self"], (y["t1"] - y["t0"]) / 2)
            ref = refs.get(c["phase_id"])
            if ref is None:
                continue
            n += 1
            if c["on_path_ns"] != ref[0]:
                bad.append("%s: on the path %d, raw %d" % (c["path"], c["on_path_ns"], ref[0]))
            if ref[1] is not None and c["whatif_2x_makespan_ns"] is not None:
                n += 1
                if abs(c["makespan_ns"] - c["whatif_2x_makespan_ns"] - ref[1]) > 1:
                    bad.append("%s: twice as fast saves %d, half its duration %.0f" % (
                        c["path"], c["makespan_ns"] - c["whatif_2x_makespan_ns"], ref[1]))
        # the text
        text = self.section("Critical path")
        m = re.match(r"^  /%s: (\S+ \S+), (\S+ \S+) of it waiting" % re.escape(
            self.case["name"]), text[0] if text else "")
        n += 2
        if not m or not near_dur(m.group(1), hi - lo) or not near_dur(m.group(2),
                                                                      row["wait_ns"]):
            bad.append("text '%s'" % (text[0] if text else ""))
        for k, c in enumerate(cp):
            line = text[k + 1] if k + 1 < len(text) else ""
            m = re.match(r"^ +(\S+ \S+) +(\S+%)  (.*?)(?:  \(twice as fast: (\S+ \S+) sooner"
                         r"(?:; then .* bounds the path)?\))?$", line)
            ref = refs.get(c["phase_id"], (c["on_path_ns"], None))
            n += 2
            if not m or not c["path"].startswith(m.group(3)[:40]) or \
                    not near_dur(m.group(1), ref[0]) or \
                    not near_pct(m.group(2), 100 * ref[0] / (hi - lo)) or \
                    (m.group(4) is None) != (c["whatif_2x_makespan_ns"] is None) or \
                    (m.group(4) and ref[1] is not None and not near_dur(m.group(4), ref[1])):
                bad.append("text '%s': raw %s" % (line.strip()[:120], ref))
        self.check("critical path: makespan, waits, each step's and (one thread) each phase's "
                   "time on it and what-if, and the text, against the manifest and traces",
                   bad, n)


def norm(v):
    """A pid or tid as the importer keys it: '' is 0."""
    return v if v != "" else "0"


def proc_pid(name):
    m = re.search(r"\((-?\d+)\)", name)
    return m.group(1) if m else name[len("process "):] if name.startswith("process ") else None


def lane_key(node):
    name = node["name"].strip()
    if node["kind"] == "stream":
        return ("stream", re.search(r"-?\d+", name).group(0))
    if node["kind"] == "gpu_annotation":
        return ("annotations", re.search(r"-?\d+", name).group(0))
    tid = name[len("thread "):] if name.startswith("thread ") else name
    return ("thread", re.sub(r" \(.*\)$", "", tid))


def straggler_figures(ranks, meets):
    """The man page's figures of ranks meeting at meets (straggler.py's
    meetings): the rank charged the others' waits most, how often it was
    last, each rank's last arrivals and wait, the others' waits added up,
    the longest, and the impact (last arrival less the mean, added up)."""
    waits = {r.rank: sum(m["arrive"][m["last"]] - m["arrive"][r.rank] for m in meets)
             for r in ranks}
    lasts = {r.rank: sum(m["last"] == r.rank for m in meets) for r in ranks}
    charged = {r.rank: sum(sum(m["arrive"][m["last"]] - a for a in m["arrive"].values())
                           for m in meets if m["last"] == r.rank) for r in ranks}
    s = max(lasts, key=lambda r: (charged[r], lasts[r], -r))
    others = [r for r in waits if r != s]
    longest = max(others, key=lambda r: (waits[r], -r))
    impact = sum(m["arrive"][m["last"]] - Decimal(sum(m["arrive"].values())) / len(ranks)
                 for m in meets)
    return {"straggler": "rank %d" % s, "collectives": len(meets), "last": lasts[s],
            "wait_ns": sum(waits[r] for r in others), "longest": "rank %d" % longest,
            "longest_wait_ns": waits[longest], "impact": impact,
            "waits": {"rank %d" % r: (lasts[r], waits[r]) for r in waits}}


def holding(xs, starts, a, b):
    """The period of xs (sorted, starts their starts) holding [a, b), or None."""
    k = bisect.bisect_right(starts, a) - 1
    return xs[k] if k >= 0 and b <= xs[k][1] else None


def device_type(x):
    return "memcpy" if x["cat"].endswith("memcpy") else \
        "memset" if x["cat"].endswith("memset") else "kernel"


def host_type(x):
    return {"operator": "operator", "runtime": "runtime", "annotation": "annotation",
            "profiler_step": "annotation"}.get(x["kind"])


def innermost(xs):
    """The stretches of a thread's time during which each span is the
    innermost open one (spans nested as Raw.nest does)."""
    xs = sorted(xs, key=lambda x: (x["t0"], -(x["t1"] - x["t0"]), x["i"]))
    out, stack, at = [], [], None
    for x in xs + [None]:
        t = x["t0"] if x else None
        while stack and (x is None or stack[-1]["nest_end"] <= t):
            top = stack.pop()
            out.append((top, at, top["nest_end"]))
            at = top["nest_end"]
        if x is None:
            break
        if stack:
            out.append((stack[-1], at, t))
        at = t
        stack.append(x)
    return [(x, a, b) for x, a, b in out if b > a]


def upsample(b, value, cap):
    """grademl-tui's upsampling of one sample value over a period's
    buckets [e, v, f] (exact and variable demand, share of the period):
    first to exact demand, then in proportion to variable demand, then
    spread as background, never past capacity.  Returns each bucket's u."""
    n = len(b)
    u = [0.0] * n
    rest, need = value, sum(e * f for e, _, f in b)
    for i in sorted(range(n), key=lambda i: -b[i][0]):
        if not (need > 0 and rest > 0):
            break
        e, _, f = b[i]
        u[i] = min(rest / need * e, e, cap)
        rest = max(rest - u[i] * f, 0)
        need -= e * f
    if rest > 0:
        need = sum(v * f for _, v, f in b)
        order = sorted(range(n), key=lambda i: -(0 if not b[i][1] > 0 else
                                                 b[i][1] / (cap - u[i]) if cap - u[i] > 0
                                                 else float("inf")))
        for i in order:
            if not (need > 0 and rest > 0):
                break
            _, v, f = b[i]
            x = min(rest / need * v, max(cap - u[i], 0))
            u[i] += x
            rest = max(rest - x * f, 0)
            need -= v * f
    if rest > 0:
        left = sum(f for _, _, f in b)
        for i in sorted(range(n), key=lambda i: -u[i]):
            if not (left > 0 and rest > 0):
                break
            f = b[i][2]
            x = min(rest / left, max(cap - u[i], 0))
            u[i] += x
            rest = max(rest - x * f, 0)
            left -= f
    return u


def cuts_of(units, periods):
    """The stretches between consecutive starts and ends of units and
    periods: (start, end, the units active, the period or None)."""
    ev = []
    for k, (_, t, a, b) in enumerate(units):
        ev.append((a, 1, k))
        ev.append((b, 0, k))
    for a, b, _ in periods:
        ev.append((a, 2, -1))
        ev.append((b, 2, -1))
    ev.sort()
    times = sorted({e[0] for e in ev})
    pstarts = [a for a, _, _ in periods]
    # the active units over each elementary interval [times[i], times[i+1])
    active, cuts = set(), []
    j = 0
    for i, t in enumerate(times):
        while j < len(ev) and ev[j][0] == t:
            _, what, k = ev[j]
            if what == 1:
                active.add(k)
            elif what == 0:
                active.discard(k)
            j += 1
        if i + 1 < len(times):
            p = bisect.bisect_right(pstarts, t) - 1
            p = p if p >= 0 and periods[p][0] <= t < periods[p][1] else None
            cuts.append((t, times[i + 1], tuple(sorted(active)), p))
    return cuts


def mixes_of(units, types, cuts):
    """Per period, how long each mix of active types (a count per type)
    lasted."""
    mix = {}
    for a, b, act, p in cuts:
        if p is not None:
            m = mix.setdefault(p, {})
            kk = tuple(sum(1 for k in act if units[k][1] == t) for t in types)
            m[kk] = m.get(kk, 0) + (b - a)
    return mix


def fit(units, types, periods, exact):
    """The demands of a metric by non-negative least squares (grademl-tui(1)
    Resource attribution): per sample period, its value less what the
    exact demands (exact: {type: d}) take against the time-weighted count
    of each other type active in it."""
    mix = mixes_of(units, types, cuts_of(units, periods))
    free = [t for t in types if t not in exact]
    rows, ys = [], []
    for p, (a, b, value) in enumerate(periods):
        L = b - a
        m = mix.get(p, {})
        rows.append([sum(kk[types.index(t)] * n for kk, n in m.items()) / L for t in free])
        ys.append(max(value - sum(kk[types.index(t)] * n * d for kk, n in m.items()
                                  for t, d in exact.items()) / L, 0.0))
    x = nnls(rows, ys) if free else []
    out = {t: (True, d) for t, d in exact.items()}
    out.update((t, (False, v)) for t, v in zip(free, x))
    return out


def nnls(rows, ys):
    """min |A x - y| over x >= 0 for a few columns: the best of the
    solutions of the normal equations on each set of free columns that
    are positive and meet the optimality conditions."""
    k = len(rows[0]) if rows else 0
    g = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    h = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(k)]
    best = None
    for m in range(k + 1):
        for S in itertools.combinations(range(k), m):
            x = [0.0] * k
            sol = solve([[g[i][j] for j in S] for i in S], [h[i] for i in S]) if S else []
            if sol is None or any(v <= 0 for v in sol):
                continue
            for i, v in zip(S, sol):
                x[i] = v
            grad = [h[i] - sum(g[i][j] * x[j] for j in range(k)) for i in range(k)]
            if any(grad[i] > 1e-9 * max(1.0, abs(h[i])) for i in range(k) if i not in S):
                continue
            res = sum((y - sum(a * b for a, b in zip(r, x))) ** 2 for r, y in zip(rows, ys))
            if best is None or res < best[0]:
                best = (res, x)
    return best[1] if best else [0.0] * k


def solve(a, b):
    """a x = b by Gauss-Jordan elimination with partial pivoting; None when
    a is singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-300:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def upsampled_charge(units, types, demand, periods, cap):
    """Each unit's charge (value x ns) of one metric: per period, the mixes
    of active types and how long each lasted, upsampled; a unit of type t
    under mix k gets d_t min(u/e, 1) (exact) or d_t max(u - e, 0)/v
    (variable) while it runs."""
    cuts = cuts_of(units, periods)

    def key(act):
        return tuple(sum(1 for k in act if units[k][1] == t) for t in types)
    mix = mixes_of(units, types, cuts)
    rate = {}
    for p, m in mix.items():
        a, b, value = periods[p]
        L = b - a
        keys = list(m)
        bk = []
        for kk in keys:
            e = sum(c * demand[t][1] for c, t in zip(kk, types) if demand[t][0])
            v = sum(c * demand[t][1] for c, t in zip(kk, types) if not demand[t][0])
            bk.append((e, v, m[kk] / L))
        u = upsample(bk, min(value, cap * 4), cap)
        for kk, (e, v, _), x in zip(keys, bk, u):
            for t in types:
                exact, d = demand[t]
                if not d > 0:
                    r = 0.0
                elif exact:
                    r = d * min(x / e, 1) if e > 0 else 0.0
                else:
                    r = d * max(x - e, 0) / v if v > 0 else 0.0
                rate[(p, kk, t)] = r
    charge = [0.0] * len(units)
    for a, b, act, p in cuts:
        if p is None or not act:
            continue
        kk = key(act)
        for k in act:
            charge[k] += rate.get((p, kk, units[k][1]), 0.0) * (b - a)
    return charge


def bounds_held(v, judged):
    """The bounds one sample's values hold (grademl-tui(1) Bottlenecks);
    None when no judged metric has a value."""
    have = False
    held = []
    if "cpu" in judged and "cpu.util" in v:
        have = True
        if v["cpu.util"] >= 95:
            held.append("cpu")
        elif any(x >= 95 for k, x in v.items() if re.fullmatch(r"cpu\d+\.util", k)):
            held.append("single-thread")
    for r, metric in (("gpu", "device work"), ("gpu", "utilization.gpu"),
                      ("gpu-mem", "utilization.memory")):
        if r in judged and metric in v:
            have = True
            if v[metric] >= 95 and r not in held:
                held.append(r)
            if metric == "device work":
                v = {k: x for k, x in v.items() if k != "utilization.gpu"}
    return held if have else None


def work_window(raw):
    """A trace's window on the critical path: of its work, less the
    profiler's own span (Kineto's category Trace) and GPU annotations."""
    xs = [x for x in raw.spans if x["cat"] != "trace" and x["kind"] != "gpu_annotation"]
    return min(x["t0"] for x in xs), max(x["t1"] for x in xs)


def hta_lines(path):
    """hta_reference.py's figures of a trace (HTA's defaults), by key."""
    out = {"kernels": []}
    for line in hta_reference.analyse(path, False, 30000):
        w = line.split()
        if w[0] == "rank":
            out["rank"] = (int(w[3]), int(w[5]))
        elif w[0] == "temporal":
            out["temporal"] = tuple(int(w[k]) for k in (2, 4, 6, 8))
        elif w[0] == "type":
            out["type " + w[1]] = int(w[3])
        elif w[0] == "overlap":
            out["overlap"] = (int(w[2]), int(w[4]))
        elif w[0] == "stream":
            tid = w[1].split(":")[1]
            out["stream " + tid] = tuple(int(w[k]) for k in (3, 5, 7, 9, 11))
        elif w[0] == "idle":
            out["idle %s %s" % (w[1].split(":")[1], w[2])] = (int(w[4]), int(w[6]))
        elif w[0] == "kernel":
            name = line.split(" max_ns ")[1].split(" ", 1)[1]
            out["kernels"].append((w[1], name, int(w[5]), int(w[7]), int(w[9]), int(w[11])))
    out["kernels"].sort()
    return out


def nvsmi_table(path):
    """nvidia-smi's CSV: per row, {column: number or None} and "t" in epoch
    ns (UTC)."""
    import datetime
    with opener(path) as f:
        rd = csv.reader(io.StringIO(f.read()))
    head = [h.strip() for h in next(rd)]
    out = []
    for row in rd:
        if not row:
            continue
        r = {}
        for h, v in zip(head, row):
            v = v.strip()
            name = h.split(" [")[0]
            if name == "timestamp":
                dt = datetime.datetime.strptime(v, "%Y/%m/%d %H:%M:%S.%f").replace(
                    tzinfo=datetime.timezone.utc)
                frac = v.split(".")[1]
                r["t"] = int(dt.replace(microsecond=0).timestamp()) * 10**9 + int(
                    frac.ljust(9, "0")[:9])
                continue
            if name in ("index", "name", "pci.bus_id"):
                continue
            m = re.fullmatch(r"P?(-?[\d.]+)(?: \S+)?", v)  # pstate P0 is 0
            r[name] = float(m.group(1)) if m else None
        out.append(r)
    out.sort(key=lambda r: r["t"])
    return out


# ---- the explorer's panes against the report ----

SHORT = {"cpu": "cpu", "gpu": "gpu", "gpu-mem": "gmem", "disk": "disk", "net": "net",
         "single-thread": "1cpu", "software": "sw"}
BARS = re.compile("[\u2581-\u2588]+ ")


def fmt_dur(ns):
    """A duration as the report and the explorer print it (3 digits)."""
    v, neg = (-ns, "-") if ns < 0 else (ns, "")
    for lim, div, unit in ((3600e9, 3600e9, "h"), (60e9, 60e9, "min"), (1e9, 1e9, "s"),
                           (1e6, 1e6, "ms"), (1e3, 1e3, "us")):
        if v >= lim:
            x = v / div
            return "%s%.*f %s" % (neg, 0 if x >= 99.95 else 1 if x >= 9.995 else 2, x, unit)
    return "%s%.0f ns" % (neg, v)


class Panes:
    """The phases whose pane and tree row are compared with the report:
    every row of the Resources (workflow, steps, ranks), a stream of each
    trace, the first two spans of each thread the report's tree shows, and
    the phases on the critical path; each found by its path (one phase
    only, or the one the report names: grademl-tui query)."""

    def __init__(self, report, text, db):
        self.r, self.db = report, db
        self.lines = text.splitlines()
        self.targets = []
        seen = set()

        def add(path, **kw):
            if path in seen:
                return
            ids = query(db, 'phases path = "%s" | select id, start, dur, self' %
                        path.replace('"', '\\"'))
            want = kw.get("phase_id")
            hit = [x for x in ids if want is None or x["id"] == want]
            # :goto takes the first phase of the path: compare only that one
            if ids and hit and hit[0] is ids[0] and (want is not None or len(ids) == 1):
                seen.add(path)
                self.targets.append(dict(kw, path=path, id=hit[0]["id"], dur=hit[0]["dur"],
                                         own=hit[0]["self"]))
        rows = {r["path"]: r for r in report["attribution"]["phases"]}
        busy = {(x["stream"], x["busy_ns"]) for x in report["gpu_streams"]}

        def walk(node, path, parent):
            path = path + "/" + node["name"]
            kw = {"node": node, "parent": parent, "row": rows.get(path)}
            if path in rows:
                add(path, **kw)
            if node["kind"] == "stream" and (node["name"], node["dur_ns"] - node["self_ns"]) \
                    in busy and not any(t.get("node", {}).get("kind") == "stream" and
                                        t["path"].rsplit("/", 2)[0] == path.rsplit("/", 2)[0]
                                        for t in self.targets):
                add(path, **kw)
            if parent and parent["kind"] == "thread" and \
                    parent["children"].index(node) < 2:
                add(path, **kw)
            for c in node.get("children", []):
                walk(c, path, node)
        nodes = {}

        def index(node, path, parent):
            path = path + "/" + node["name"]
            nodes[path] = (node, parent)
            for c in node.get("children", []):
                index(c, path, node)
        for n in report["tree"]:
            index(n, "", None)
            walk(n, "", None)
        # a phase on the path: its what-if, and its tree row where the
        # report's tree shows it (the pane has no time on the path)
        for c in report["critical_path"]:
            node, parent = nodes.get(c["path"], (None, None))
            if node or c["whatif_2x_makespan_ns"] is not None:
                add(c["path"], phase_id=c["phase_id"], cp=c, node=node, parent=parent,
                    row=rows.get(c["path"]))

    def keys(self):
        out = []
        for k, t in enumerate(self.targets):
            out += ["type :goto " + t["path"].rstrip(), "Enter"]
            if not k:
                out.append("d")
            out.append("dump")
            if t.get("cp") and t["cp"]["whatif_2x_makespan_ns"] is not None:
                out += ["type :whatif 2", "Enter", "dump"]
        return "\n".join(out) + "\n"

    def report_lines(self, path):
        """The Resources lines of path in the text report."""
        try:
            k = self.lines.index("  " + path)
        except ValueError:
            return None
        return {l.strip().split(" ", 1)[0] if not l.strip().startswith("est. use") else
                "est.": l.strip() for l in self.lines[k + 1:k + 4]}

    def compare(self, dump, rows, name):
        screens = dump.split("\n")
        per = rows
        shots = [screens[i:i + per] for i in range(0, len(screens) - 1, per)]
        k = 0
        results = []
        for t in self.targets:
            shot = shots[k] if k < len(shots) else []
            k += 1
            bad = self.one(t, shot)
            if t.get("cp") and t["cp"]["whatif_2x_makespan_ns"] is not None:
                msg = shots[k][-1] if k < len(shots) else ""
                k += 1
                c = t["cp"]
                leaf = t["path"].rsplit("/", 1)[-1]
                want = "%s 2x faster saves %s " % (leaf, fmt_dur(c["makespan_ns"] -
                                                            c["whatif_2x_makespan_ns"]))
                wf = t["path"].split("/")[1]
                if not msg.startswith(want[-150:] if len(want) < 150 else want[:150]) or \
                        "of %s's %s" % (wf, fmt_dur(c["makespan_ns"])) not in msg:
                    bad.append(":whatif 2 says '%s', the report twice as fast: %s sooner of %s" % (
                        msg.strip()[:160], fmt_dur(c["makespan_ns"] - c["whatif_2x_makespan_ns"]),
                        fmt_dur(c["makespan_ns"])))
            results.append((not bad, "%s: pane and report agree on %s" % (
                name, re.sub(r" +(/|$)", r"\1", t["path"])),
                            "; ".join(bad)))
        return results

    def one(self, t, shot):
        bad = []
        pane = {}
        on = False
        for line in shot:
            if line.startswith("-- details"):
                on = True
            elif on and line.startswith(" ") and len(line) > 11:
                pane.setdefault(line[1:10].strip(), line[11:].rstrip())
        if "time" not in pane:
            return ["no details pane: %s" % (shot[-1].strip() if shot else "no screen")]
        leaf = t["path"].rsplit("/", 1)[-1]
        if not pane.get("phase", "").startswith(leaf.rstrip()):
            return ["the pane shows %s" % pane.get("phase")]
        m = re.search(r"dur (\S+ \S+)  self (\S+ \S+)(?:  device (\S+ \S+))?", pane["time"])
        dur, own = (m.group(1), m.group(2)) if m else (None, None)
        node = t.get("node")
        # the phase's duration and self time: the report's tree, else trace.db's
        want = (fmt_dur(node["dur_ns"]), fmt_dur(node["self_ns"])) if node else \
            (fmt_dur(t["dur"]), fmt_dur(t["own"]))
        if (dur, own) != want:
            bad.append("pane dur, self %s, report %s" % ((dur, own), want))
        if node and t.get("parent") is not None:
            line = [l for l in self.lines if re.match(
                r"^ +%s +%s +[\d.]+%%  " % (re.escape(node["name"].strip()[:50]),
                                           re.escape(fmt_dur(node["dur_ns"]))), l)]
            if not line:
                bad.append("the report's tree has no line %s %s" % (node["name"],
                                                                  fmt_dur(node["dur_ns"])))
        # the tree's row of the phase
        rowl = [l for l in shot[2:] if re.match(r"^[+ ] %s +\S" % re.escape(leaf.rstrip()[:60]),
                                                l) and "-- details" not in l]
        m = None
        for l in rowl:
            m = re.search(r" (\S+ \S+) +([\d.]+%) +(\S+ \S+) +(\d+)(?: (\S+ \d+%))?", l)
            if m and m.group(1) == dur and m.group(3) == own:
                break
            m = None
        if not m:
            bad.append("no tree row %s with the pane's %s, %s" % (leaf, dur, own))
        elif node:
            share = 100.0 * node["share_of_parent"]
            if m.group(2) != "%.1f%%" % share or int(m.group(4)) != node["child_count"]:
                bad.append("tree row share, count %s %s; report %.1f%% %d" % (
                    m.group(2), m.group(4), share, node["child_count"]))
        row = t.get("row")
        if row and m:
            bs = row["bottlenecks"]
            want = "%s %.0f%%" % (SHORT[bs[0]["resource"]], 100 * bs[0]["fraction"]) if bs else None
            c = row.get("idle_cause")
            if c:  # the cause instead of "sw" (at 200 columns its long form)
                want = "idle:%s %.0f%%" % ({"communication": "comm"}.get(c["cause"], c["cause"]),
                                           100 * c["share"])
            if m.group(5) != want:
                bad.append("Bneck %s, the report's verdict %s" % (m.group(5), want))
        if row:
            rep = self.report_lines(t["path"]) or {}
            for key, label in (("measured", "measured"), ("bound", "bound by")):
                got = pane.get(label, "")
                theirs = rep.get(key, "")[len(label) + 1:]
                if got != theirs and not (label == "measured" and
                                          got == "no sample of this host/device holds during it"
                                          and theirs.startswith("no sample")):
                    bad.append("%s: pane '%s', report '%s'" % (label, got, theirs))
            # the pane draws a bar before each share and no commas
            got = BARS.sub("", pane.get("est. use", "")).replace("%  ", "%, ")
            theirs = rep.get("est.", "")[len("est. use "):]
            if got != theirs:
                bad.append("est. use: pane '%s', report '%s'" % (got, theirs))
        if node and node["kind"] == "stream":
            b = [x for x in self.r["gpu_streams"] if x["stream"] == node["name"] and
                 x["busy_ns"] == node["dur_ns"] - node["self_ns"]]
            if not b or own != fmt_dur(node["dur_ns"] - b[0]["busy_ns"]):
                bad.append("stream self %s, its window less the report's busy %s" % (
                    own, fmt_dur(node["dur_ns"] - b[0]["busy_ns"]) if b else "?"))
            # its device work is the stream's busy time; its use of the GPU
            # that share of its window, less what work of other traces on
            # the GPU at the same time takes (ranks sharing one GPU)
            use = BARS.sub("", pane.get("est. use", ""))
            m = re.match(r"gpu (\d+)%", use)
            share = 100.0 * b[0]["busy_ns"] / node["dur_ns"] if b else 0
            if b and b[0]["busy_ns"] < node["dur_ns"] and not (
                    m and (int(m.group(1)) > 0 or share < 0.5) and
                    int(m.group(1)) <= round(share) and use.endswith("(its device work %s)" % fmt_dur(b[0]["busy_ns"]))):
                bad.append("stream est. use '%s', the report's busy %s of %s" % (
                    use, fmt_dur(b[0]["busy_ns"]), fmt_dur(node["dur_ns"])))
            if b and pane.get("bound by", "-") == "-":
                bad.append("stream bound by '-' beside its device work")
        if node and node["kind"] == "rank":
            bad += self.straggler(node, pane.get("straggler"))
        return bad

    def straggler(self, node, line):
        gs = [g for g in self.r["imbalance"] if g["kind"] == "ranks" and g.get("meets")]
        mine = [(g, x) for g in gs for x in g["ranks"] if x["name"] == node["name"]]
        if not mine:
            return [] if line is None else ["pane straggler '%s', the report none" % line]
        g, x = mine[0]
        if x["name"] == g["straggler"]:
            want = "this rank (last at %d of %d collectives, waited %s); the others wait %s " \
                "in all" % (x["last"], g["collectives"], fmt_dur(x["wait_ns"]),
                            fmt_dur(g["wait_ns"]))
        else:
            want = "%s (last at %d of %d collectives); this rank: last at %d, waited %s" % (
                g["straggler"], g["last"], g["collectives"], x["last"], fmt_dur(x["wait_ns"]))
        return [] if line == want else ["pane straggler '%s', report '%s'" % (line, want)]


def find_doctored(doc, part):
    """The part of the doctored report that stands where part stood."""
    if part is None:
        return None
    for key in ("tree", "attribution", "critical_path"):
        hit = _find(doc[key] if key != "attribution" else doc[key]["phases"], part)
        if hit is not None:
            return hit
    return None


def _find(o, part):
    if isinstance(o, dict):
        if o.get("name", o.get("path")) == part.get("name", part.get("path")) and \
                o.get("start_ns") == part.get("start_ns") and \
                o.get("phase_id") == part.get("phase_id"):
            return o
        o = list(o.values())
    if isinstance(o, list):
        for x in o:
            hit = _find(x, part)
            if hit is not None:
                return hit
    return None


def query(db, q):
    out = subprocess.run([os.environ.get("GRADEML_BIN", "build/grademl-tui"), "query", db, q,
                          "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)

# ---- doctoring: every figure moved, so that every check must fail ----

def _moved(num):
    """A printed number moved by 3% and two of its last digit."""
    places = len(num.split(".")[1]) if "." in num else 0
    return "%.*f" % (places, float(num) * 1.03 + 2 * 10 ** -places)


def doctored_text(text):
    """Every duration, percentage and count of text moved."""
    text = re.sub(r"(?<![\w#.])(\d+(?:\.\d+)?)(?= (?:ns|us|ms|s|min|h)\b)",
                  lambda m: _moved(m.group(1)), text)
    text = re.sub(r"(?<![\w#.])(\d+(?:\.\d+)?)(?=%)", lambda m: _moved(m.group(1)), text)
    return re.sub(r"(?<![\w#.])(\d+)(?= (?:items|phases|events|samples|dropped|gaps|more|"
                  r"collectives)\b)", lambda m: _moved(m.group(1)), text)


def doctored(o, key=""):
    """Every number of the report's JSON moved by 3% (and 1 at least); ids,
    ranks and the start of each phase kept, so that what a check looks up
    is still found; explanations' figures moved as the text's."""
    if isinstance(o, dict):
        return {k: doctored(v, k) for k, v in o.items()}
    if isinstance(o, list):
        return [doctored(v, key) for v in o]
    if isinstance(o, bool) or key.endswith("_id") or key in ("rank", "start_ns"):
        return o
    if isinstance(o, int):
        return o + max(1, abs(o) * 3 // 100)
    if isinstance(o, float):
        return o * 1.03 + 0.01
    if isinstance(o, str) and key == "explanation":
        return doctored_text(o)
    return o

# ---- the cases: the files behind each database figures.sh builds ----

def case_config(name, root):
    """The workflow NAME as figures.sh imports it: its manifest, its steps
    (each with its traces, and the offset each was imported with: None for
    a trace with its own base), its metric files."""
    if name in ("gpu", "demo"):
        d = os.path.join(root, "tests", "data", name)
        man = os.path.join(d, "workflow.jsonl")
        steps = []
        with open(man) as f:
            for line in f:
                if not line.strip():
                    continue
                s = json.loads(line)
                names = s.get("traces") or ([s["trace"]] if "trace" in s else [])
                off = s["trace_start_us"] * 1000 if "trace_start_us" in s else None
                steps.append({"name": s["step"], "start": s["start_ns"], "end": s["end_ns"],
                              "traces": [{"path": os.path.relpath(os.path.join(d, t), root),
                                          "offset_ns": off} for t in names]})
        c = {"name": name, "manifest": os.path.relpath(man, root), "steps": steps,
             "nvsmi": [], "sadf": []}
        if name == "gpu":
            c["nvsmi"] = [os.path.relpath(os.path.join(d, "nvsmi.csv.gz"), root)]
        else:
            c["sadf"] = [os.path.relpath(os.path.join(d, "sysstat.sadf.json.gz"), root)]
        return c
    if name == "gpu-truth":
        # tests/truth/gpu/data: the input-bound loop and the two-rank
        # straggler, each trace under its step, beside nvidia-smi
        d = os.path.join("tests", "truth", "gpu", "data")
        return {"name": name, "manifest": None, "nvsmi": [os.path.join(d, "nvsmi.csv.gz")],
                "sadf": [],
                "steps": [{"name": "input", "traces": [
                    {"path": os.path.join(d, "input.pt.trace.json.gz")}]},
                    {"name": "straggler", "traces": [
                        {"path": os.path.join(d, "straggler_rank%d.pt.trace.json.gz" % k)}
                        for k in (0, 1)]}]}
    raise SystemExit("figures.py: unknown case %r" % name)


def main(argv):
    if argv[:1] == ["--keys"] and len(argv) == 3:
        # the key script that shows each compared phase's pane
        with open(argv[1]) as f:
            sys.stdout.write(Panes(json.load(f), "", argv[2]).keys())
        return 0
    if argv[:1] in (["--panes"], ["--panes-doctor"]) and len(argv) == 7:
        # NAME REPORT.json REPORT.txt DB DUMP ROWS: the panes against the
        # report (doctored: against a report with every figure moved)
        name, rj, rt, db, dump, rows = argv[1:]
        with open(rj) as f, open(rt) as g, open(dump, encoding="utf-8") as h:
            report, text = json.load(f), g.read()
            p = Panes(report, text, db)
            if argv[0] == "--panes-doctor":
                p.r, p.lines = doctored(report), doctored_text(text).splitlines()
                for t in p.targets:
                    for k in ("node", "row", "cp", "parent"):
                        t[k] = find_doctored(p.r, t.get(k))
            res = p.compare(h.read(), int(rows), name)
        if argv[0] == "--panes-doctor":
            kept = [w for ok, w, _ in res if ok]
            print(("ok - " if not kept else "not ok - ") +
                  "%s: every figure of the report doctored, %d of %d panes disagree" % (
                      name, len(res) - len(kept), len(res)) +
                  ("" if not kept else " (still agree: %s)" % "; ".join(kept)))
            return 1 if kept else 0
        for ok, what, why in res:
            print(("ok - " if ok else "not ok - ") + what + ("" if ok else " (%s)" % why))
        return 0 if all(r[0] for r in res) else 1
    doctor = argv[:1] == ["--doctor"]
    if doctor:
        argv = argv[1:]
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    os.chdir(root)
    case = case_config(argv[0], root)
    with open(argv[1]) as f:
        report = json.load(f)
    with open(argv[2]) as f:
        text = f.read()
    db = argv[3] if len(argv) > 3 else None
    if doctor:
        # the JSON's figures moved, then the text's: each time every check
        # that compares figures must fail
        fails = 0
        for what, r, t in (("JSON", doctored(report), text), ("text", report,
                                                              doctored_text(text))):
            ran = [x for x in run_checks(Checks(case, r, t, db)) if x[0] is not None]
            kept = [w for ok, w, _ in ran if ok]
            fails += bool(kept)
            print(("ok - " if not kept else "not ok - ") +
                  "%s: every figure of the %s doctored, %d of %d checks fail" % (
                      case["name"], what, len(ran) - len(kept), len(ran)) +
                  ("" if not kept else " (still pass: %s)" % "; ".join(kept)))
        return 1 if fails else 0
    c = Checks(case, report, text, db)
    ran = [x for x in run_checks(c) if x[0] is not None]
    for ok, what, why in c.results:
        print({True: "ok - ", False: "not ok - ", None: "skip - "}[ok] + what +
              ("" if ok else " (%s)" % why))
    return 0 if all(r[0] for r in ran) else 1


def run_checks(c):
    for name in CHECKS:
        try:
            getattr(c, name)()
        except Exception as e:  # a check that cannot run fails, saying why
            c.results.append((False, "%s: %s" % (c.case["name"], name),
                              "the check itself: %r" % e))
    return c.results


CHECKS = ["sources", "tree", "operators", "streams", "breakdown", "issues", "stragglers", "resources", "critical"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
