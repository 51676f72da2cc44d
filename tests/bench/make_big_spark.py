#!/usr/bin/env python3
"""Builds a large Spark event log for the import benchmark by replicating a
real one (default: the NDS q66 log of ../shared/samples, zstd), renumbering
job, stage and task ids and shifting times so the copies don't collide.  The
importer keeps one application per file, so the copies' tasks all land in
the first copy's application (later ApplicationStarts count as DUP_EVENT);
every task is stored, which is what the speed figure needs.

    python3 tests/bench/make_big_spark.py --copies 5 -o /tmp/grademl-bench/big-spark.log
"""
import argparse
import json
import os
import subprocess

here = os.path.dirname(os.path.abspath(__file__))
default = os.path.join(here, "..", "..", "..", "shared", "samples", "spark-eventlog",
                       "NVIDIA__spark-rapids-tools__nds_q66_gpu.zstd")
ap = argparse.ArgumentParser()
ap.add_argument("--copies", type=int, default=5)
ap.add_argument("--sample", default=default)
ap.add_argument("-o", "--output", required=True)
a = ap.parse_args()

if a.sample.endswith(".zstd") or a.sample.endswith(".zst"):
    text = subprocess.run(["zstd", "-dc", a.sample], check=True, capture_output=True).stdout
else:
    text = open(a.sample, "rb").read()
lines = text.decode("utf-8", "replace").splitlines()
TIME_KEYS = ("Timestamp", "Submission Time", "Completion Time", "Launch Time", "Finish Time",
             "Getting Result Time", "time")


def shift(o, dt, ids):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in TIME_KEYS and isinstance(v, int) and v > 0:
                o[k] = v + dt
            elif k in ("Job ID", "Stage ID", "Task ID") and isinstance(v, int):
                o[k] = v + ids
            elif k == "App ID" and isinstance(v, str):
                o[k] = v + "-copy%d" % (ids // 10 ** 6)
            else:
                shift(v, dt, ids)
    elif isinstance(o, list):
        for v in o:
            shift(v, dt, ids)


with open(a.output, "w") as out:
    for c in range(a.copies):
        for l in lines:
            try:
                e = json.loads(l)
            except ValueError:
                continue
            shift(e, c * 3600 * 1000, c * 10 ** 6)
            out.write(json.dumps(e, separators=(",", ":")) + "\n")
