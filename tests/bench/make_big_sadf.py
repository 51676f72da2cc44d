#!/usr/bin/env python3
"""Builds a large sysstat `sadf -j` file for the metric-import benchmark by
replicating the samples of the demo's real sar capture, one second apart.

    python3 tests/bench/make_big_sadf.py --copies 200 -o /tmp/grademl-bench/big-sadf.json
"""
import argparse
import copy
import datetime
import gzip
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--copies", type=int, default=200)
ap.add_argument("--sample", default=os.path.join(here, "..", "data", "demo", "sysstat.sadf.json.gz"))
ap.add_argument("-o", "--output", required=True)
a = ap.parse_args()

doc = json.load(gzip.open(a.sample))
host = doc["sysstat"]["hosts"][0]
base = datetime.datetime(2026, 1, 1)
out = []
for _ in range(a.copies):
    for s in host["statistics"]:
        s2 = copy.deepcopy(s)
        t = base + datetime.timedelta(seconds=len(out))
        s2["timestamp"]["date"] = t.strftime("%Y-%m-%d")
        s2["timestamp"]["time"] = t.strftime("%H:%M:%S")
        out.append(s2)
host["statistics"] = out
with open(a.output, "w") as f:
    json.dump(doc, f, indent=1)
