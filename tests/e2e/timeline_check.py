"""Checks the timeline's screens (tests/e2e/timeline.sh) against a raw
Kineto trace, read here with json alone.

  timeline_check.py steps TRACE SCREENS TID   footers of ProfilerStep#N, N in start order
  timeline_check.py lanes TRACE SCREENS TID   the lane labels of the first screen
  timeline_check.py keys TRACE SCREENS TID    ] [ f on the first step

SCREENS holds the dumps of timeline.sh's key script, one screen after
another.  Prints a short summary and exits 0 when the screens agree; else
prints why and exits 1.
"""
import gzip
import json
import sys

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
RUNTIME = {"cuda_runtime", "cuda_driver"}


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


def screens(path):
    """The dumps, split at each breadcrumb line (the first line of a screen)."""
    out = []
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("grademl-tui "):
            out.append([])
        if out:
            out[-1].append(line)
    return out


def fmt(ns):
    """A duration as the explorer prints it: three significant digits."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            v = ns / scale
            s = "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v
            return s + " " + unit
    return "%d ns" % ns


def steps(events, tid):
    """ProfilerStep#N on thread tid, in start order, each with its device ops."""
    ps = sorted((e for e in events if e.get("ph") == "X"
                 and str(e.get("name", "")).startswith("ProfilerStep#")
                 and e.get("tid") == tid), key=lambda e: e["ts"])
    rt = [e for e in events if e.get("cat") in RUNTIME and e.get("tid") == tid
          and "correlation" in e.get("args", {})]
    dev = {}
    for e in events:
        if e.get("cat") in DEVICE and "correlation" in e.get("args", {}):
            dev.setdefault(e["args"]["correlation"], []).append(e)
    out = []
    for p in ps:
        lo, hi = p["ts"], p["ts"] + p["dur"]
        ops = [d for r in rt if lo <= r["ts"] and r["ts"] + r.get("dur", 0) <= hi
               for d in dev.get(r["args"]["correlation"], [])]
        out.append((p["name"], round(p["dur"] * 1000), ops))
    return out


def footer(screen):
    return [l for l in screen if l.strip()][-2]


def main():
    what, trace, dumps, tid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    events = load(trace)
    scr = screens(dumps)
    st = steps(events, tid)
    if len(scr) < 5 or len(st) < 3:
        print("%d screens, %d profiler steps" % (len(scr), len(st)))
        return 1
    # the screens: longest step, then j, j (in start order from it)
    longest = max(range(len(st)), key=lambda i: st[i][1])
    if what == "steps":
        seen = []
        for k in range(3):
            name, dur, ops = st[min(longest + k, len(st) - 1)]
            want = "%s  at " % name
            f = footer(scr[k])
            if not f.startswith(want):
                print("screen %d: footer %r, want %r..." % (k, f, want))
                return 1
            w = "for %s  %d device ops below" % (fmt(dur), len(ops))
            if w not in f:
                print("screen %d: footer %r, want %r" % (k, f, w))
                return 1
            seen.append("%s %d ops" % (name, len(ops)))
        print(", ".join(seen))
        return 0
    if what == "lanes":
        streams = sorted({e["tid"] for e in events if e.get("cat") in DEVICE})
        axis = scr[0][1]  # "time", blanks, then the first tick where the bars start
        x = len("time") + len(axis[len("time"):]) - len(axis[len("time"):].lstrip())
        labels = [l[:x].strip() for l in scr[0][2:-2] if l[:1] not in (" ", "")]
        want = ["gpu%d stream %s" % (0, s) for s in streams]
        for w in want + ["thread %d (python3)" % tid]:
            if w not in labels:
                print("no lane %r among %r" % (w, labels))
                return 1
        print("%d streams" % len(streams))
        return 0
    if what == "keys":
        first = st[0][0]
        f_in, f_fit = footer(scr[3]), footer(scr[4])
        if f_in.startswith(first) or "at +" not in f_in:
            print("after ]: footer %r still on %s" % (f_in, first))
            return 1
        if not f_fit.startswith(first + "  at "):
            print("after [: footer %r, want %s" % (f_fit, first))
            return 1
        if "zoom 1x" in f_fit:
            print("after f: still at zoom 1x: %r" % f_fit)
            return 1
        print("] then [ on %s, f: %s" % (first, f_fit.split("  zoom ")[-1]))
        return 0
    print("unknown check " + what)
    return 1


if __name__ == "__main__":
    sys.exit(main())
