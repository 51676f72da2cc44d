#!/usr/bin/python3
"""Check the demo data in DIR (default tests/data/demo) and print a summary.

Exits non-zero when a file is missing or malformed, when a trace has no
ProfilerStep#N event, when the sadf JSON lacks cpu-load or memory, or when
a step / trace time range falls outside the sysstat sampling window.
Needs only the Python standard library.
"""
import calendar
import collections
import gzip
import json
import os
import sys
import time

DIR = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "data", "demo")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def load_gz(name):
    with gzip.open(os.path.join(DIR, name), "rt") as f:
        return json.load(f)


def sadf_epoch(ts):
    # sadf -j prints UTC dates when "utc" is 1 (the default)
    t = time.strptime(ts["date"] + " " + ts["time"], "%Y-%m-%d %H:%M:%S")
    return calendar.timegm(t) if ts.get("utc", 1) else time.mktime(t)


steps = [json.loads(l) for l in open(os.path.join(DIR, "workflow.jsonl"))
         if l.strip()]
check([s["step"] for s in steps] == ["train", "infer"], "workflow steps")

sa = load_gz("sysstat.sadf.json.gz")
host = sa["sysstat"]["hosts"][0]
stats = host["statistics"]
check(len(stats) >= 5, "too few sysstat samples: %d" % len(stats))
for key in ("cpu-load", "memory", "disk", "network"):
    check(all(key in s for s in stats), "sadf statistics lack " + key)
# a sample at time T covers (T - interval, T]
sa_lo = sadf_epoch(stats[0]["timestamp"]) - stats[0]["timestamp"]["interval"]
sa_hi = sadf_epoch(stats[-1]["timestamp"])
print("sysstat: %d samples, window %d..%d s (%s %s .. %s UTC), keys: %s" % (
    len(stats), sa_lo, sa_hi, stats[0]["timestamp"]["date"],
    stats[0]["timestamp"]["time"], stats[-1]["timestamp"]["time"],
    ", ".join(k for k in stats[0] if k != "timestamp")))

for s in steps:
    name = s["trace"]
    ev = load_gz(name)
    # Debian's torch has no Kineto: the export is a bare list of events
    events = ev["traceEvents"] if isinstance(ev, dict) else ev
    ph = collections.Counter(e.get("ph") for e in events)
    cat = collections.Counter(e.get("cat") for e in events)
    prof_steps = sorted(e["name"] for e in events
                        if e.get("name", "").startswith("ProfilerStep#"))
    check(prof_steps, name + " has no ProfilerStep#N")
    if isinstance(ev, dict) and "baseTimeNanoseconds" in ev:
        base_us = ev["baseTimeNanoseconds"] / 1000.0
    elif min(e["ts"] for e in events) > 1e15:
        base_us = 0.0  # already absolute epoch microseconds
    else:
        base_us = s["trace_start_us"]  # relative ts: use the manifest anchor
    lo = base_us + min(e["ts"] for e in events)
    hi = base_us + max(e["ts"] + e.get("dur", 0) for e in events)
    print("%s: %d events, ph=%s cat=%s steps=%s span=%.3f s" % (
        name, len(events), dict(ph), dict(cat), prof_steps, (hi - lo) / 1e6))
    check(s["start_ns"] / 1e3 <= lo and hi <= s["end_ns"] / 1e3,
          name + " not inside its workflow step")
    check(sa_lo <= s["start_ns"] / 1e9 and s["end_ns"] / 1e9 <= sa_hi,
          s["step"] + " step not inside the sysstat window")

if failures:
    sys.exit("%d check(s) failed" % len(failures))
print("demo data OK")
