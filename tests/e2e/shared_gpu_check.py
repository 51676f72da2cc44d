#!/usr/bin/env python3
"""Checks a report of two ranks on a shared GPU, or each on its own, against
the raw traces (tests/tools/device_work.py: each GPU's union of device work,
json only).  The rule (grademl-tui(1) BOTTLENECKS, a shared GPU): a rank's
GPU figures are its own device work's; when several ranks' device work ran
on one GPU (same host, same device id), the rank rows and their top issues
say "shared GPU", and a rank is not GPU-bound for the time the other's
kernels ran.

  shared_gpu_check.py shared|own|turns REPORT.json REPORT.txt RANK0 RANK1

shared: both ranks' traces on one GPU at once; own: each on a GPU of its
own; turns: on one GPU, one trace after the other (nothing is shared).

Prints "ok - NAME" or "not ok - NAME (why)" lines for tests/e2e/shared_gpu.sh."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from device_work import gpus  # noqa: E402
from hta_reference import length, merge  # noqa: E402

failed = 0


def check(name, cond, why=""):
    global failed
    if cond:
        print("ok - " + name)
    else:
        failed += 1
        print("not ok - %s (%s)" % (name, str(why).replace("\n", " | ")))


def main(argv):
    case, report, text, traces = argv[0], argv[1], argv[2], argv[3:5]
    with open(report) as f:
        doc = json.load(f)
    with open(text) as f:
        txt = f.read()
    own, devices = [], []
    for path in traces:
        _, g = gpus(path)
        assert len(g) == 1, "one GPU per rank's trace"
        (pid, work), = g.items()
        devices.append(pid)
        own.append(work)
    shared = case == "shared"
    assert (devices[0] == devices[1]) == (case != "own"), (case, devices)
    rows = {r["path"]: r for r in doc["attribution"]["phases"]}
    ranks = sorted(p for p in rows if p.rsplit("/", 1)[-1].startswith("rank "))
    check("%s: a row per rank" % case, len(ranks) == 2, ranks)
    if len(ranks) != 2:
        return
    step = ranks[0].rsplit("/", 1)[0]
    for k, path in enumerate(ranks):
        r = rows[path]
        busy = length(own[k])
        gpu = r["resources"].get("gpu", {}).get("bound_ns")
        check("%s: rank %d's GPU figure is its own device work (%.1f%% of its %d ns)"
              % (case, k, 100.0 * busy / r["dur_ns"], r["dur_ns"]),
              gpu == busy and r["device_work_ns"] == busy,
              "bound %s, device work %s, own %d" % (gpu, r["device_work_ns"], busy))
        check("%s: rank %d's measured device work is its own" % (case, k),
              any(m["metric"] == "device work" and
                  abs(m["mean"] - 100.0 * busy / r["dur_ns"]) < 0.05 for m in r["measured"]),
              r["measured"])
        check("%s: rank %d is not called GPU-bound" % (case, k),
              r["bottlenecks"] and r["bottlenecks"][0]["resource"] != "gpu",
              r["bottlenecks"])
        label = r.get("shared_gpu") == 2 and r.get("own_gpu") is True
        check("%s: rank %d's row says %s" % (case, k, "shared GPU, its own work judged"
                                              if shared else "nothing of sharing"),
              label if shared else not r.get("shared_gpu") and not r.get("own_gpu"),
              {k2: r.get(k2) for k2 in ("shared_gpu", "own_gpu")})
        line = "shared GPU (2 ranks on it), judged on its own device work"
        bound = txt.split("\n  %s\n" % path, 1)[-1].split("\n  /", 1)[0]
        check("%s: the text's Resources line of rank %d %s" % (
              case, k, "says it" if shared else "says nothing of sharing"),
              (line in bound) == shared and "bound by" in bound, bound.strip()[:300])
    union = length(merge([w for ws in own for w in ws]))
    s = rows.get(step)
    check("%s: the step's GPU figure is the union of both ranks' (%d ns)" % (case, union),
          s is not None and s["resources"].get("gpu", {}).get("bound_ns") == union,
          s and s["resources"])
    if shared:
        check("%s: the step's row says shared GPU, judged on all of it" % case,
              s is not None and s.get("shared_gpu") == 2 and s.get("own_gpu") is False,
              s and {k2: s.get(k2) for k2 in ("shared_gpu", "own_gpu")})
    issues = doc["top_issues"]
    gpu_bound = [i for i in issues if i["kind"] == "bottleneck" and i["path"] in ranks
                 and "GPU was busy" in i["explanation"]]
    check("%s: no top issue calls a rank GPU-bound" % case, not gpu_bound,
          [i["explanation"][:120] for i in gpu_bound])
    idle = [i for i in issues if i["kind"] == "idle-gpu"]
    said = [("shared GPU, 2 ranks on it" in i["explanation"]) for i in idle]
    check("%s: the idle-gpu issues %s" % (case, "say shared GPU" if shared
                                          else "say nothing of sharing"),
          idle and all(x == shared for x in said), [i["explanation"][:160] for i in idle])
    check("%s: the JSON %s" % (case, "says shared GPU" if shared else "never says shared"),
          ("shared GPU" in json.dumps(doc)) == shared and ("shared GPU" in txt) == shared)


if __name__ == "__main__":
    main(sys.argv[1:])
    sys.exit(1 if failed else 0)
