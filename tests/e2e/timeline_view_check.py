#!/usr/bin/env python3
"""Checks the timeline's screens in dumps against the raw Kineto trace
(tests/tools/busy_streams.py writes it), for tests/e2e/timeline_view.sh.

Usage: timeline_view_check.py shade TRACE DUMP
       timeline_view_check.py axis DUMP
       timeline_view_check.py range TRACE DUMP
       timeline_view_check.py names TRACE DUMP

shade: the dump is the timeline of the trace's step, its window the step's
(checked in the footer), at any size.  For each stream lane drawn, each
column's glyph must be the share of the column's time the stream was busy
(the union of its kernels there, overlaps once), in eighths rounded up,
blank only where no kernel touched it: the level Python works out here
for the same columns, [W * c / w, W * (c + 1) / w) of the window W.  One
column a lane may differ (a boundary rounded the other way).  Prints each
lane's ink (the mean level over 8) and the busy share Python measured.

range: the range's sums below the lanes (v twice, or V) against the raw
trace over the range the panel names: each lane's busy time (the union of
its events there) and share, each name's time (its events clipped to the
range) and count, to the three significant digits shown; the lanes and
names listed are the busiest, the most first.

names: on every screen in the dump, the text inside each stream's and
thread's bars is (part of) the name of work that ran there, and some bar
carries one.

axis: every time axis in the dump (screens one after another) has labels
that read as times, increase left to right, and no two neighbours alike.
"""
import json
import math
import re
import sys

LEVELS = {" ": 0, "\u2581": 1, "\u2582": 2, "\u2583": 3, "\u2584": 4, "\u2585": 5,
          "\u2586": 6, "\u2587": 7, "\u2588": 8}


def busy_intervals(trace):
    ev = json.load(open(trace))["traceEvents"]
    step = next(e for e in ev if e.get("name") == "ProfilerStep#1")
    t0 = round(step["ts"] * 1000)
    width = round(step["dur"] * 1000)
    per = {}
    for e in ev:
        if e.get("cat") != "kernel":
            continue
        s = round(e["ts"] * 1000) - t0
        per.setdefault(e["tid"], []).append((s, s + round(e["dur"] * 1000)))
    return width, per


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def levels(iv, width, w):
    u = union(iv)
    bounds = [width * c // w for c in range(w + 1)]
    out = []
    for c in range(w):
        a, b = bounds[c], bounds[c + 1]
        busy = sum(max(0, min(e, b) - max(s, a)) for s, e in u)
        share = busy / (b - a) if b > a else 0
        touched = any(s < b and e > a for s, e in iv)
        if share > 0:
            lv = min(8, max(1, math.ceil(share * 8 - 1e-9)))
        else:
            lv = 1 if touched else 0
        out.append(lv)
    return out


UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9}


def label_ns(text):
    m = re.fullmatch(r"(t0=)?([+-]?)([0-9.]+) ?(ns|us|ms|s|min|h)?", text)
    if not m:
        sys.exit("axis label %r is not a time" % text)
    v = float(m.group(3)) * UNITS[m.group(4) or "ns"]
    return -v if m.group(2) == "-" else v


def axis(dump):
    n = 0
    for line in open(dump, encoding="utf-8"):
        if not line.startswith("time"):
            continue
        head = re.match(r"time( \(from t0\))?\s+", line)
        labels = line[head.end():].split()
        labels = [a + " " + b for a, b in zip(labels[::2], labels[1::2])] \
            if all(re.fullmatch(r"(ns|us|ms|s|min|h)", x) for x in labels[1::2]) else labels
        if head.group(1):
            values = [label_ns(x) for x in labels[1:]]
        else:
            values = [label_ns(x) for x in labels]
        for a, b in zip(labels, labels[1:]):
            if a == b:
                sys.exit("two neighbouring labels read %r: %s" % (a, line.strip()))
        for a, b in zip(values, values[1:]):
            if not b > a:
                sys.exit("labels do not increase: %s" % line.strip())
        n += 1
    if not n:
        sys.exit("no time axis in the dump")
    print("%d axes" % n)


def dur_ns(text):
    v, unit = text.split()
    return float(v) * UNITS[unit]


def close(shown, exact):
    return abs(shown - exact) <= 0.005 * abs(exact) + 0.5


def range_sums(trace, dump):
    ev = json.load(open(trace))["traceEvents"]
    step = next(e for e in ev if e.get("name") == "ProfilerStep#1")
    base = round(step["ts"] * 1000)
    lines = open(dump, encoding="utf-8").read().split("\n")
    at = next((i for i, l in enumerate(lines) if l.startswith("range ")), None)
    if at is None:
        sys.exit("no range on the screen")
    m = re.match(r"range (\+0|\+[0-9.]+ \w+) \+ ([0-9.]+ \w+):", lines[at])
    t0 = 0 if m.group(1) == "+0" else dur_ns(m.group(1)[1:])
    t1 = t0 + dur_ns(m.group(2))
    nx = lines[at + 1].index("name")
    lanes, names = {}, {}
    for e in ev:
        if e.get("ph") != "X":
            continue
        s = round(e["ts"] * 1000) - base
        d = round(e["dur"] * 1000)
        label = ("gpu0 stream %d" % e["tid"]) if e.get("cat") == "kernel" \
            else "thread %d" % e["tid"]
        lanes.setdefault(label, []).append((s, s + d))
        if s < t1 and (s + d > t0 or s == t0):
            n = names.setdefault(e["name"], [0, 0])
            n[0] += max(0, min(s + d, t1) - max(s, t0))
            n[1] += 1
    busy = {k: sum(max(0, min(e, t1) - max(s, t0)) for s, e in union(v))
            for k, v in lanes.items()}
    shown_lanes, shown_names = [], []
    for line in lines[at + 2:]:
        if not line.strip() or line.startswith(("?:help", "python3")):
            break
        left, right = line[:nx], line[nx:]
        ml = re.match(r"^(.*?)\s+([0-9.]+ (?:ns|us|ms|s))\s+([0-9.]+)%\s*$", left)
        if ml:
            lane, b, share = ml.group(1), dur_ns(ml.group(2)), float(ml.group(3))
            if lane not in busy:
                sys.exit("lane %r is not in the trace" % lane)
            if not close(b, busy[lane]) or abs(share - 100 * busy[lane] / (t1 - t0)) > 0.051:
                sys.exit("%s: busy %s (%.1f%%), the trace says %d ns" %
                         (lane, ml.group(2), share, busy[lane]))
            shown_lanes.append(lane)
        mr = re.match(r"^(.*?)\s+([0-9.]+ (?:ns|us|ms|s))\s+(\d+)\s*$", right)
        if mr:
            name, t, count = mr.group(1), dur_ns(mr.group(2)), int(mr.group(3))
            if name not in names:
                sys.exit("name %r is not in the range in the trace" % name)
            if not close(t, names[name][0]) or count != names[name][1]:
                sys.exit("%s: %s in %d, the trace says %d ns in %d" %
                         (name, mr.group(2), count, names[name][0], names[name][1]))
            shown_names.append(name)
    if not shown_lanes or not shown_names:
        sys.exit("the range lists no lane or no name")
    least = min(busy[k] for k in shown_lanes)
    hidden = [k for k in busy if k not in shown_lanes and busy[k] > least]
    if hidden:
        sys.exit("lane %s (busy %d ns) is left out for a less busy one" % (hidden[0], busy[hidden[0]]))
    least = min(names[k][0] for k in shown_names)
    hidden = [k for k in names if k not in shown_names and names[k][0] > least]
    if hidden:
        sys.exit("name %s is left out for one with less time" % hidden[0])
    top = max(names, key=lambda k: names[k][0])
    print("range %.0f..%.0f ns: %d lanes and %d names as the trace sums them, %s first (%d ns)"
          % (t0, t1, len(shown_lanes), len(shown_names), top, names[top][0]))


def names(trace, dump):
    ev = json.load(open(trace))["traceEvents"]
    on = {}
    for e in ev:
        if e.get("ph") == "X":
            label = ("gpu0 stream %d" % e["tid"]) if e.get("cat") == "kernel" \
                else "thread %d" % e["tid"]
            on.setdefault(label, set()).add(e["name"])
    shown, lane = 0, None
    for line in open(dump, encoding="utf-8").read().split("\n"):
        m = re.match(r"(gpu0 stream \d+|thread \d+) ", line)
        if m:
            lane = m.group(1)
        elif not line.startswith(" " * 10):
            lane = None
            continue
        if lane is None:
            continue
        for text in re.findall(r"[^\s\u2581-\u2588]{2,}", line[18:]):
            text = text.rstrip("\u2026")
            if not any(text in n for n in on[lane]):
                sys.exit("%s: %r in a bar is no name of its work" % (lane, text))
            shown += 1
    if not shown:
        sys.exit("no bar carries its name")
    print("%d names in bars, each its work's" % shown)


def shade(trace, dump):
    width, per = busy_intervals(trace)
    lines = open(dump, encoding="utf-8").read().split("\n")
    axis = next(i for i, l in enumerate(lines) if l.startswith("time"))
    x = re.match(r"time( \(from t0\))?\s+", lines[axis]).end()
    if not any(re.search(r"window \+0 \+ 20\.", l) for l in lines):
        sys.exit("the window is not the step's 20.0 ms")
    cols = max(len(l) for l in lines[axis:axis + 3]) - x
    report = []
    for stream, iv in sorted(per.items()):
        label = "gpu0 stream %d" % stream
        row = next((l for l in lines if l.startswith(label + " ")), None)
        if row is None:
            continue
        cells = row[x:].ljust(cols)[:cols]
        got = [LEVELS.get(ch, -1) for ch in cells]
        want = levels(iv, width, cols)
        bad = [c for c in range(cols) if got[c] != want[c]]
        if len(bad) > 1:
            c = bad[0]
            sys.exit("%s: %d columns differ, first %d: %r (level %d), want level %d"
                     % (label, len(bad), c, cells[c], got[c], want[c]))
        share = sum(e - s for s, e in union(iv)) / width
        ink = sum(got) / (8.0 * cols)
        if stream in (7, 8, 9):
            report.append("stream %d: busy %.3f, ink %.3f" % (stream, share, ink))
        if stream == 7 and not (share < 0.02 and ink < 0.10):
            sys.exit("stream 7 (busy %.3f) is drawn with ink %.3f" % (share, ink))
        if stream == 8 and not (share > 0.9 and ink > 0.90):
            sys.exit("stream 8 (busy %.3f) is drawn with ink %.3f" % (share, ink))
    if len(report) < 3:
        sys.exit("streams 7, 8 and 9 are not all drawn")
    print("; ".join(report) + " over %d columns" % cols)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "shade":
        shade(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "names":
        names(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "range":
        range_sums(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "axis":
        axis(sys.argv[2])
    else:
        sys.exit("usage: timeline_view_check.py shade|range|names TRACE DUMP | axis DUMP")
