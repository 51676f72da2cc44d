#!/usr/bin/env python3
"""Writes an nvidia-smi CSV for the analysis benchmark: the rows of the
real H100 capture (tests/data/gpu/nvsmi.csv.gz, 100 ms apart) replayed in
a loop over [--start, --end] (epoch seconds), as GPU --index, so that the
samples cover the benchmark trace's GPU work.

    python3 tests/bench/align_nvsmi.py --start 1669783687 --end 1669783730 --index 1 -o out.csv
"""
import argparse
import datetime
import gzip
import os

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--start", type=float, required=True)
ap.add_argument("--end", type=float, required=True)
ap.add_argument("--index", type=int, default=0)
ap.add_argument("--sample", default=os.path.join(here, "..", "data", "gpu", "nvsmi.csv.gz"))
ap.add_argument("-o", "--output", required=True)
a = ap.parse_args()

lines = gzip.open(a.sample, "rt").read().splitlines()
header, rows = lines[0], [r.split(", ") for r in lines[1:] if r.strip()]
busy = [r for r in rows if r[5] != "0 %"] or rows  # the capture's working rows
with open(a.output, "w") as f:
    f.write(header + "\n")
    t, i = a.start, 0
    while t <= a.end:
        r = list(busy[i % len(busy)])
        r[0] = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        r[1] = str(a.index)
        f.write(", ".join(r) + "\n")
        t, i = t + 0.1, i + 1
