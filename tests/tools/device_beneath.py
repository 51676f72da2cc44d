#!/usr/bin/env python3
"""An independent reference for the device time beneath each host phase of a
raw Chrome/Kineto trace (JSON or .json.gz), from json, gzip and decimal
only, never trace.db: what grademl-tui stores as a phase's device_ns.

Usage: device_beneath.py TRACE...

Device work is every complete event ("ph": "X") of a device category
(kernel, gpu_memcpy, gpu_memset and their older spellings, MTIA's
mtia_ccp_events).  Its launch is the host event (any other category) that
carries the same args.correlation, the earliest when several do.  A host
event is beneath a host span when both are on one (pid, tid) and the
event starts within the span ([start, end)).  A span's device time is the
length of the union of the time intervals ([ts, ts + dur)) of the device
work whose launch is the span itself or is beneath it: work that overlaps
(two streams) counts once.  The total is the length of the union of all
the device work of the traces given.

Prints, over all the traces given, one line per (kind, name), sorted:

  KIND COUNT DEVICE_NS NAME

KIND: operator (cpu_op, or Operator in Kineto's first traces),
profiler_step (a user_annotation named ProfilerStep#N), annotation (any
other user_annotation); COUNT: its spans;
DEVICE_NS: their device time, summed over the spans (each span's a
union).  Then one line:

  total DEVICE_NS

Times: microseconds as exact decimals, cut to whole nanoseconds.
"""
import bisect
import decimal
import gzip
import json
import sys

DEVICE = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset", "mtia_ccp_events"}


def ns(v):
    """Microseconds (a JSON number) as whole nanoseconds, toward zero."""
    return int(decimal.Decimal(str(v)) * 1000)


def events_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh, parse_float=decimal.Decimal)
    evs = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    return [e for e in evs if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]


def union_ns(intervals):
    """The length of the union of (start, end) intervals."""
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s >= end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def kind_of(e):
    cat = str(e.get("cat", "")).lower()
    if cat in ("cpu_op", "operator"):
        return "operator"
    if cat == "user_annotation":
        name = str(e.get("name", ""))
        return "profiler_step" if name.startswith("ProfilerStep#") else "annotation"
    return None


def one_trace(path, out, every):
    evs = events_of(path)
    work = {}  # correlation -> its device work's intervals
    for e in evs:
        if str(e.get("cat", "")).lower() not in DEVICE:
            continue
        d = max(ns(e.get("dur", 0)), 0)
        if d == 0:
            continue
        iv = (ns(e["ts"]), ns(e["ts"]) + d)
        every.append(iv)
        corr = (e.get("args") or {}).get("correlation")
        if corr is not None:
            work.setdefault(corr, []).append(iv)
    launch = {}  # correlation -> (start, pid, tid)
    for e in evs:
        if str(e.get("cat", "")).lower() in DEVICE:
            continue
        corr = (e.get("args") or {}).get("correlation")
        if corr in work:
            key = (ns(e["ts"]), str(e.get("pid")), str(e.get("tid")))
            if corr not in launch or key[0] < launch[corr][0]:
                launch[corr] = key
    per_thread = {}
    for corr, (t, pid, tid) in launch.items():
        per_thread.setdefault((pid, tid), []).append((t, corr))
    index = {}
    for key, ls in per_thread.items():
        ls.sort(key=lambda x: x[0])
        index[key] = ([t for t, _ in ls], [work[c] for _, c in ls])
    for e in evs:
        kind = kind_of(e)
        if kind is None:
            continue
        s = ns(e["ts"])
        end = s + max(ns(e.get("dur", 0)), 0)
        times, ivs = index.get((str(e.get("pid")), str(e.get("tid"))), ([], []))
        lo, hi = bisect.bisect_left(times, s), bisect.bisect_left(times, end)
        row = out.setdefault((kind, str(e.get("name", ""))), [0, 0])
        row[0] += 1
        row[1] += union_ns(iv for ls in ivs[lo:hi] for iv in ls)


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    out, every = {}, []
    for p in argv:
        one_trace(p, out, every)
    total = union_ns(every)
    for (kind, name), (count, dev) in sorted(out.items()):
        sys.stdout.write(f"{kind} {count} {dev} {name}\n")
    sys.stdout.write(f"total {total}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
