#!/usr/bin/env python3
"""An independent reference for a device stream's busy time, items and
window, computed straight from a raw Chrome/Kineto trace (JSON or .json.gz)
with json and gzip only, never trace.db.

Usage: device_work.py TRACE...
       device_work.py --gpus TRACE...

Device work is every complete event ("ph": "X") whose category is one that
Kineto gives the work of a device's stream or queue, whatever the
accelerator: kernel, gpu_memcpy, gpu_memset (CUDA, ROCm/HIP, XPU), their
older spellings Kernel, Memcpy, Memset, and MTIA's mtia_ccp_events.  GPU
user annotations (gpu_user_annotation: ProfilerStep#N, Optimizer.step on
the stream) are not device work.  A stream is the (pid, tid) its work is on.

A trace from XLA's or TensorFlow's profiler (the trace viewer JSON that
jax.profiler and TensorBoard write) has no categories: there device work
is every complete event on a track its metadata names a device's stream,
wherever the names come in the file.  A process named "/device:KIND:N"
is a device (a plane); its threads named "Stream #..." are its streams,
and when it has none (a TPU), its thread "XLA Ops" is.  Its other lines
(XLA Ops beside streams, XLA Modules, Steps, ...) only repeat the streams'
work and are not device work.  TensorFlow 1's timeline names a stream's
process ".../device:GPU:0/stream:14 Compute" (".../stream:all" repeats
them all and is not device work) and its copies' ".../device:GPU:0/memcpy
Compute".  The launching call carries XLA's correlation_id where Kineto's
carries correlation.

Prints one line per stream, sorted by pid and tid (as text):

  PID TID ITEMS BUSY_NS WINDOW_NS UNLINKED

ITEMS: its device work; BUSY_NS: the length of the union of that work's
intervals (touching intervals join); WINDOW_NS: from the first work's start
to the last one's end; UNLINKED: the work whose correlation id no host event
carries (no launching call: it hangs under the stream itself).  Times are
exact integer nanoseconds (hta_reference.us_to_ns).

With --gpus, what a trace measures of each GPU (grademl-tui(1)
BOTTLENECKS): one line per trace, then one per GPU (the pid of its device
work, a number):

  trace PATH WINDOW_START WINDOW_END
  gpu PID BUSY_NS START END START END ...

WINDOW: the trace's window, from its first complete event's start to the
last one's end (those of zero length left out); the GPU is measured by its
device work there.  START END: the union of its device work (all streams),
in order.  Times are absolute: baseTimeNanoseconds plus the event's.
"""
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hta_reference import length, merge, us_to_ns  # noqa: E402

DEVICE_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset", "mtia_ccp_events"}
PLANE = re.compile(r"^/device:(?!CPU)[^/]+$")
TF1_STREAM = re.compile(r"/device:(?!CPU)[^/]*/(stream:\d|memcpy)")


def load(path):
    """The trace's events and its base time (ns; 0 when relative)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh, parse_float=str)
    if isinstance(doc, dict):
        return doc["traceEvents"], int(doc.get("baseTimeNanoseconds", 0) or 0)
    return doc, 0


def names(events):
    """{pid: process name} and {(pid, tid): thread name}, from the M events
    wherever they are."""
    procs, threads = {}, {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "M":
            continue
        name = str((e.get("args") or {}).get("name", ""))
        if e.get("name") == "process_name":
            procs[str(e.get("pid", 0))] = name
        elif e.get("name") == "thread_name":
            threads[(str(e.get("pid", 0)), str(e.get("tid", 0)))] = name
    return procs, threads


def device_tracks(events):
    """The set of (pid, tid) that the metadata names device streams."""
    procs, threads = names(events)
    with_streams = {p for (p, _), n in threads.items() if n.startswith("Stream #")}
    out = set()
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        key = (str(e.get("pid", 0)), str(e.get("tid", 0)))
        proc, thread = procs.get(key[0], ""), threads.get(key, "")
        if TF1_STREAM.search(proc):
            out.add(key)
        elif PLANE.match(proc) and (thread.startswith("Stream #") or
                                    (thread == "XLA Ops" and key[0] not in with_streams)):
            out.add(key)
    return out


def is_device(e, tracks):
    """Whether complete event e is device work (tracks: device_tracks)."""
    return (str(e.get("cat", "")).lower() in DEVICE_CATS
            or (str(e.get("pid", 0)), str(e.get("tid", 0))) in tracks)


def correlation(args):
    """The launch correlation id of an event's args (Kineto's, else XLA's)."""
    c = args.get("correlation")
    return c if c is not None else args.get("correlation_id")


def gpus(path):
    """(window, {pid: union of its device work}) of one trace, absolute ns:
    window (start, end) over its complete events of nonzero length."""
    events, base = load(path)
    tracks = device_tracks(events)
    lo = hi = None
    work = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        s = us_to_ns(e["ts"]) + base
        d = max(us_to_ns(e.get("dur", 0)), 0)
        if d > 0:
            lo = s if lo is None else min(lo, s)
            hi = s + d if hi is None else max(hi, s + d)
        pid = str(e.get("pid", ""))
        if is_device(e, tracks) and pid.isdigit() and d > 0:
            work.setdefault(int(pid), []).append((s, s + d))
    return (lo, hi), {p: [tuple(x) for x in merge(w)] for p, w in sorted(work.items())}


def streams(path):
    events, _ = load(path)
    tracks = device_tracks(events)
    work, host_corr = {}, set()
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        args = e.get("args") or {}
        if not is_device(e, tracks):
            if correlation(args) is not None:
                host_corr.add(str(correlation(args)))
            continue
        s = us_to_ns(e["ts"])
        d = max(us_to_ns(e.get("dur", 0)), 0)
        key = (str(e.get("pid", 0)), str(e.get("tid", 0)))
        work.setdefault(key, []).append((s, s + d, correlation(args)))
    out = []
    for (pid, tid), ws in sorted(work.items()):
        busy = length(merge([(s, e) for s, e, _ in ws]))
        window = max(e for _, e, _ in ws) - min(s for s, _, _ in ws)
        unlinked = sum(1 for _, _, c in ws if not c or str(c) not in host_corr)
        out.append(f"{pid} {tid} {len(ws)} {busy} {window} {unlinked}")
    return out


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    if argv[0] == "--gpus":
        for p in argv[1:]:
            (lo, hi), g = gpus(p)
            sys.stdout.write(f"trace {p} {lo} {hi}\n")
            for pid, w in g.items():
                flat = " ".join(f"{s} {e}" for s, e in w)
                sys.stdout.write(f"gpu {pid} {length(w)} {flat}\n")
        return 0
    for p in argv:
        sys.stdout.write("".join(line + "\n" for line in streams(p)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
