#!/usr/bin/env python3
"""An independent reference for model/analysis/gpubreak.c: the GPU breakdowns of
Holistic Trace Analysis (HTA) computed straight from a raw Chrome/Kineto
trace (JSON or .json.gz), without trace.db, pandas or HTA itself.

Usage: hta_reference.py [--include-last-step] [--kernel-wait-ns N] [--hta-rounding] [--hta]
                        [--gaps] TRACE...

It prints, for each trace, the figures tests/test_gpubreak.c compares with
(lines described in tests/expected/gpubreak/README).  The definitions are
HTA's, as model/analysis/gpubreak.h states them:

  * device work: complete events with a duration whose args carry `stream`
    as an integer other than -1, as HTA's `stream != -1` (an event without
    one reads as -1, as does the context-wide "Context Sync"; ROCm's runtime
    calls on the host carry the stream as a pointer in text, "0x0", which
    HTA reads as -1: no device work; cuda_sync events on a stream, such as
    Stream Wait Event, are); a CPU operator that carries a stream
    (Triton's launcher, stream 0) is host work, except with --hta, where
    it counts as HTA counts it;
  * last step: with two or more distinct ProfilerStep* names, keep only the
    device work whose correlated host event (same args.correlation, no
    stream) started before the latest start of a stream-less ProfilerStep*
    event (HTA Trace._filter_irrelevant_gpu_kernels) on the host: Kineto's
    copies of the steps on the device streams (cat gpu_user_annotation)
    start when the device reaches the step, later than its first launches,
    so, unlike HTA's code, they are not taken for the cutoff;
  * kernel type (HTA 0.6.1 and main, by name, first rule that holds):
    "nccl", "hip" or "hccl" prefix, or "ncclKernel" or "gloo:" anywhere ->
    COMMUNICATION; "Memcpy", "Memset" or "dma" prefix -> MEMORY; "Memcpy"
    or "Sync" anywhere, "Stream Wait Event", or a "pe_exe", "job_exe" or
    "runFunction" prefix -> OTHER (neither compute nor transfer); else
    COMPUTATION;
  * temporal breakdown, kernel-type unions and mixes, comm/comp overlap,
    top kernels with the duration_ratio/num_kernels "others" rule, and the
    per-stream idle breakdown (host wait, kernel wait, other); the top
    kernels over all the device work, the last step's included (as
    `summary kernels` counts it), except with --hta, after HTA's cutoff.

--gaps prints, instead, each stream's idle gaps as the idle causes cut
them (model/analysis/gpubreak.h, "Idle causes"): over the device work kept,
sorted by start, each stretch from the end of all work so far to the next
start, one line "gap PID:STREAM START_NS END_NS" each, in the trace's own
time (no time offset): what the query language's `gaps` source lists.

Times are exact integer nanoseconds: a decimal microsecond timestamp is
converted digit by digit, never through a float.  --hta-rounding does what
HTA itself does to a trace whose times have fractions of a microsecond: each
event's start is rounded up and its end down to a whole microsecond (an
event shorter than that keeps a duration of 0), so that the effect of that
rounding on every figure can be measured against the exact ones.

--hta gives HTA 0.6.1's own figures, what `grademl-tui report --hta` must
equal: its rounding, and its cutoff, the latest start of every
ProfilerStep* event without an integer stream, Kineto's gpu_user_annotation
copies included (Trace._filter_irrelevant_gpu_kernels takes them, as it
takes every event without a stream for the host's).
"""
import gzip
import json
import math
import os
import re
import sys

TYPES = ["COMMUNICATION", "COMPUTATION", "MEMORY", "OTHER"]  # bit 1 << index in masks
WAITS = ["host_wait", "kernel_wait", "other"]


def us_to_ns(v):
    """A JSON number (int, or decimal text kept by parse_float=str) in
    microseconds as integer nanoseconds, exactly."""
    if isinstance(v, int):
        return v * 1000
    s = str(v)
    if "e" in s or "E" in s:
        return int(round(float(s) * 1000))
    neg = s.startswith("-")
    if neg:
        s = s[1:]
    whole, _, frac = s.partition(".")
    frac = (frac + "000")[:3]
    ns = int(whole or "0") * 1000 + int(frac)
    return -ns if neg else ns


COMM_RE = re.compile(r"^(nccl|hip|hccl)|ncclKernel|gloo:")
MEMORY_RE = re.compile(r"^(Memcpy|Memset|dma)")
OTHER_RE = re.compile(r"Memcpy|Sync|^Stream Wait Event$|^(pe_exe|job_exe|runFunction)")


def kernel_type(name):
    if COMM_RE.search(name):
        return 0
    if MEMORY_RE.match(name):
        return 2
    if OTHER_RE.search(name):
        return 3
    return 1


def merge(spans):
    """Disjoint union of (start, end) spans; touching spans join."""
    out = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(spans):
    return sum(e - s for s, e in spans)


def temporal(work):
    """(window, idle, compute, noncompute) of a list of work dicts."""
    if not work:
        return (0, 0, 0, 0)
    allm = merge([(w["s"], w["e"]) for w in work])
    window = allm[-1][1] - allm[0][0]
    idle = window - length(allm)
    comp = length(merge([(w["s"], w["e"]) for w in work if w["type"] == 1]))
    return (window, idle, comp, window - comp - idle)


def overlap(a, b):
    """Length of the intersection of two disjoint, sorted span lists."""
    total, i, k = 0, 0, 0
    while i < len(a) and k < len(b):
        lo, hi = max(a[i][0], b[k][0]), min(a[i][1], b[k][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[k][1]:
            i += 1
        else:
            k += 1
    return total


def mixes(unions):
    """Time during which exactly each set of types ran: between two
    consecutive boundaries the set of running types does not change."""
    bounds = sorted({t for u in unions for sp in u for t in sp})
    mix = [0] * (1 << len(unions))
    pos = [0] * len(unions)
    for lo, hi in zip(bounds, bounds[1:]):
        mask = 0
        for t, u in enumerate(unions):
            while pos[t] < len(u) and u[pos[t]][1] <= lo:
                pos[t] += 1
            if pos[t] < len(u) and u[pos[t]][0] <= lo:
                mask |= 1 << t
        if mask:
            mix[mask] += hi - lo
    return mix


def quantile(values, q):
    """pandas' default (linear) quantile."""
    pos = q * (len(values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def top_kernels(work, t, top_n=10, ratio=0.8):
    agg = {}
    for w in work:
        if w["type"] != t:
            continue
        d = w["e"] - w["s"]
        a = agg.setdefault(w["name"], [0, 0, d, d])
        a[0] += 1
        a[1] += d
        a[2] = min(a[2], d)
        a[3] = max(a[3], d)
    rows = sorted(agg.items(), key=lambda kv: (-kv[1][1], kv[0].encode()))
    out, rest = [], None
    fold = len(rows) > top_n
    q = quantile([c for c in _cumsum([r[1][1] for r in rows])], ratio) if fold else 0
    cum = 0
    for i, (name, (count, total, lo, hi)) in enumerate(rows):
        cum += total
        if fold and (cum > q or i >= top_n):
            if rest is None:
                rest = [0, 0, 0, lo, hi]
            rest[0] += 1
            rest[1] += count
            rest[2] += total
            rest[3] = min(rest[3], lo)
            rest[4] = max(rest[4], hi)
        else:
            out.append((name, 1, count, total, lo, hi))
    if rest:
        out.append(("others", rest[0], rest[1], rest[2], rest[3], rest[4]))
    return out


def _cumsum(xs):
    c = 0
    for x in xs:
        c += x
        yield c


def idle_breakdown(work, kernel_wait_ns):
    ns, count = [0, 0, 0], [0, 0, 0]
    ws = sorted(work, key=lambda w: (w["s"], w["e"]))
    for prev, cur in zip(ws, ws[1:]):
        gap = cur["s"] - prev["e"]
        if cur["launch"] is not None and cur["launch"] > prev["e"]:
            k = 0
        elif gap < kernel_wait_ns:
            k = 1
        else:
            k = 2
        ns[k] += gap
        count[k] += 1
    return ns, count


def hta_round(s, e):
    """An event's start rounded up and its end rounded down to whole us."""
    s, e = -(-s // 1000) * 1000, e // 1000 * 1000
    return s, max(e, s)


# A rank in a file name, as grademl-tui import reads it (man page, import):
# "rank" or "worker" starting a word, not after the word "local", an
# optional - or _, 1 to 9 digits ending the word.
NAME_RANK = re.compile(r"(?i)(?<![a-z0-9])(?<!local[^a-z0-9])(?:rank|worker)[-_]?"
                       r"([0-9]{1,9})(?![a-z0-9])")


def name_rank(path):
    """The one rank the base name of path says, else -1 (none, or two)."""
    said = {int(m.group(1)) for m in NAME_RANK.finditer(os.path.basename(path))}
    return said.pop() if len(said) == 1 else -1


def idle_gaps(work):
    """(start, end) of each gap: the end of all work so far to the next start."""
    out, end = [], None
    for w in sorted(work, key=lambda w: (w["s"], w["e"])):
        if end is not None and w["s"] > end:
            out.append((end, w["s"]))
        end = w["e"] if end is None else max(end, w["e"])
    return out


def analyse(path, include_last_step, kernel_wait_ns, rounding=False, hta_cutoff=False,
            gaps=False):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh, parse_float=str)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    rank = name_rank(path)  # a trace that names no rank: its file name's
    if isinstance(doc, dict) and isinstance(doc.get("distributedInfo"), dict):
        rank = int(doc["distributedInfo"].get("rank", rank))

    device, host_corr, step_names, step_starts = [], {}, set(), []
    for e in events:
        if not isinstance(e, dict) or e.get("dur") is None or e.get("cat") is None:
            continue
        if e.get("cat") == "Trace":
            continue
        args = e.get("args") or {}
        name = str(e.get("name", ""))
        s = us_to_ns(e["ts"])
        end = s + max(us_to_ns(e["dur"]), 0)
        if rounding:
            s, end = hta_round(s, end)
        stream = args.get("stream")
        if (isinstance(stream, int) and stream != -1
                and (hta_cutoff or e.get("cat") != "cpu_op")):
            device.append({
                "pid": str(e.get("pid")), "stream": str(args["stream"]), "name": name,
                "s": s, "e": end, "type": kernel_type(name),
                "corr": args.get("correlation")})
            continue
        if name.startswith("ProfilerStep") and (hta_cutoff or e.get("cat") != "gpu_user_annotation"):
            step_names.add(name)
            step_starts.append(s)
        if "correlation" in args:
            host_corr[args["correlation"]] = s

    for w in device:
        w["launch"] = host_corr.get(w["corr"])
    left_out, cutoff, every = 0, 0, device
    if len(step_names) >= 2 and not include_last_step:
        cutoff = max(step_starts)
        kept = [w for w in device if w["launch"] is not None and w["launch"] < cutoff]
        left_out = len(device) - len(kept)
        device = kept

    if gaps:
        streams = {}
        for w in device:
            streams.setdefault((w["pid"], w["stream"]), []).append(w)
        return [f"gap {pid}:{stream} {s} {e}" for (pid, stream), ws in sorted(streams.items())
                for s, e in idle_gaps(ws)]
    lines = [f"rank {rank} items {len(device)} left_out {left_out}"]
    lines.append("temporal window_ns %d idle_ns %d compute_ns %d noncompute_ns %d"
                 % temporal(device))
    unions = [merge([(w["s"], w["e"]) for w in device if w["type"] == t])
              for t in range(len(TYPES))]
    for t in range(len(TYPES)):
        lines.append(f"type {TYPES[t]} ns {length(unions[t])}")
    mix = mixes(unions)
    for mask in range(1, 1 << len(TYPES)):
        if mix[mask]:
            lines.append(f"mix {mask} ns {mix[mask]}")
    lines.append(f"overlap comm_ns {length(unions[0])} overlap_ns {overlap(unions[0], unions[1])}")
    streams = {}
    for w in device:
        streams.setdefault((w["pid"], w["stream"]), []).append(w)
    for (pid, stream), ws in sorted(streams.items()):
        lines.append(f"stream {pid}:{stream} items {len(ws)} window_ns %d idle_ns %d"
                     " compute_ns %d noncompute_ns %d" % temporal(ws))
        ns, count = idle_breakdown(ws, kernel_wait_ns)
        for k in range(3):
            lines.append(f"idle {pid}:{stream} {WAITS[k]} ns {ns[k]} count {count[k]}")
    for t in range(len(TYPES)):
        for name, names, count, total, lo, hi in top_kernels(device if hta_cutoff else every, t):
            lines.append(f"kernel {TYPES[t]} names {names} count {count} sum_ns {total}"
                         f" min_ns {lo} max_ns {hi} {name}")
    return lines


def main(argv):
    include_last_step, kernel_wait_ns, rounding, hta, gaps, paths = False, 30000, False, False, False, []
    it = iter(argv)
    for a in it:
        if a == "--include-last-step":
            include_last_step = True
        elif a == "--kernel-wait-ns":
            kernel_wait_ns = int(next(it))
        elif a == "--hta-rounding":
            rounding = True
        elif a == "--hta":
            rounding, hta = True, True
        elif a == "--gaps":
            gaps = True
        else:
            paths.append(a)
    if not paths:
        sys.stderr.write(__doc__)
        return 2
    for p in paths:
        lines = analyse(p, include_last_step, kernel_wait_ns, rounding, hta, gaps)
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
