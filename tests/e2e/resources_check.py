#!/usr/bin/env python3
"""Checks for tests/e2e/resources.sh: grademl-tui's measured figures and
bottleneck verdicts against an independent computation from the raw files.

  resources_check.py sadf REPORT_JSON SADF_JSON[.gz] MANIFEST [STEP=VERDICT ...]
      per step of the manifest: the report's measured cpu.util (mean, peak),
      busiest CPU and bound shares against tests/truth/cpu/expect.py's; with
      STEP=VERDICT, the step's first bottleneck must be VERDICT.  The row
      of a step is the workflow's child of its name, or with STEP=PATH
      (a slash in it) the phase at PATH: the same window at another level
  resources_check.py nvsmi REPORT_JSON NVSMI_CSV[.gz] MANIFEST TRACE_DIR STEP[=VERDICT]...
      the report's utilization.gpu mean and peak over each step against
      nvidia-smi's rows (instants: each holds until the next row, or three
      median periods; the last one period); its GPU's device work (the
      step's traces, TRACE_DIR/STEP.pt.trace.json.gz or STEP_rank*...,
      read by tests/tools/device_work.py) against the measured "device
      work" (the union of that work over the time a trace covers) and the
      est. use of gpu; and the share of the step's time bound by gpu: while
      device work runs where a trace covers, while a row at 95% or more
      holds elsewhere
  resources_check.py pane DUMP REPORT_TEXT PATH...
      for each phase PATH the details pane's "measured" and "bound by"
      lines (one dump per path, in order) equal the report's

Prints one line per check, "ok - ..." or "not ok - ... (why)"; exits 1 when
any failed.
"""
import csv
import gzip
import io
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "truth", "cpu"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import device_work  # noqa: E402
import expect  # noqa: E402
from hta_reference import length, merge  # noqa: E402

TOL = 0.05  # percentage points: the report prints doubles, python too
failed = 0


def check(ok, name, why=""):
    global failed
    if ok:
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name} ({why})")


def rows_by_path(report):
    with open(report) as f:
        doc = json.load(f)
    return {r["path"]: r for r in doc["attribution"]["phases"]}


def row_for(rows, step, at=None):
    """The row of step: the one at (at or {})[step] when given, else the
    workflow's child of that name."""
    if at and step in at:
        return rows.get(at[step])
    hits = [r for p, r in rows.items() if p.endswith("/" + step) and p.count("/") == 2]
    return hits[0] if len(hits) == 1 else None


def measured(row, name, host=None):
    for m in row.get("measured", []):
        if m["metric"] == name:
            return m
    return None


def bound(row, res):
    for b in row["bottlenecks"]:
        if b["resource"] == res:
            return b["fraction"]
    return 0.0


def sadf(report, sadf_path, manifest, args):
    figs, _ = expect.figures(sadf_path, manifest)
    rows = rows_by_path(report)
    at = dict(a.split("=", 1) for a in args if "=" in a and a.split("=", 1)[1].startswith("/"))
    verdicts = [a for a in args if a.split("=", 1)[1:] and not a.split("=", 1)[1].startswith("/")]
    for step, f in figs.items():
        r = row_for(rows, step, at)
        if not r:
            check(False, f"{step}: a row in the report's attribution")
            continue
        # every series the report shows beside the verdict that sadf has
        shown = [m for m in r.get("measured", []) if m["metric"] in f["mean"]]
        check(shown, f"{step}: measured series beside the verdict", f"report {r.get('measured')}")
        for m in shown:
            name = m["metric"]
            want_mean, want_max = f["mean"][name], f["max"][name]
            check(abs(m["mean"] - want_mean) < TOL and abs(m["peak"] - want_max) < TOL,
                  f"{step}: measured {name} {want_mean:.2f}% (peak {want_max:.1f}%) as sadf says",
                  f"report {m}")
        for res, key in (("cpu", "cpu"), ("single-thread", "single-thread"),
                         ("disk", "disk"), ("software", "software")):
            got, want = bound(r, res), f["bound"][key]
            check(abs(got - want) < 0.005,
                  f"{step}: bound by {res} {100 * want:.1f}% of its time as sadf says",
                  f"report {100 * got:.2f}%")
        check(abs(r.get("no_data", -1) - (1 - f["covered"])) < 0.005,
              f"{step}: no data {100 * (1 - f['covered']):.1f}% as sadf says",
              f"report {r.get('no_data')}")
        # the verdict follows from the figures beside it
        for b in r["bottlenecks"]:
            res = b["resource"]
            if res not in ("cpu", "single-thread", "disk"):
                continue
            ms = [m for m in r.get("measured", [])
                  if (res == "cpu" and m["metric"] == "cpu.util")
                  or (res == "single-thread" and m["metric"].startswith("cpu")
                      and m["metric"] != "cpu.util" and m["metric"].endswith(".util"))
                  or (res == "disk" and m["metric"].startswith("disk:"))]
            m = ms[0] if ms else None
            floor = 95 if res != "disk" else 50
            check(m is not None and m["peak"] >= floor
                  and (res != "cpu"
                       or m["mean"] * (1 - r.get("no_data", 0)) >= 95 * b["fraction"] - TOL),
                  f"{step}: bound by {res} {100 * b['fraction']:.0f}% beside the series that"
                  f" shows it, peaking at {floor}% or more", f"measured {r.get('measured')}")
    for v in verdicts:
        step, want = v.split("=")
        r = row_for(rows, step, at)
        got = r["bottlenecks"][0]["resource"] if r and r["bottlenecks"] else "-"
        check(got == want, f"{step}: verdict {want}", f"report says {got}")


def nvsmi_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rd = csv.reader(io.StringIO(f.read()))
        head = [h.strip() for h in next(rd)]
        ti = head.index("timestamp")
        ui = [i for i, h in enumerate(head) if h.startswith("utilization.gpu")][0]
        out = []
        import datetime
        for row in rd:
            ts = row[ti].strip()
            dt = datetime.datetime.strptime(ts, "%Y/%m/%d %H:%M:%S.%f")
            dt = dt.replace(tzinfo=datetime.timezone.utc)
            sec = int(dt.timestamp())
            frac = ts.split(".")[1]
            t = sec * 10**9 + int(frac.ljust(9, "0")[:9])
            out.append((t, float(row[ui].strip().rstrip("%").strip())))
    out.sort()
    return out


def clip(spans, a, b):
    return [(max(s, a), min(e, b)) for s, e in spans if min(e, b) > max(s, a)]


def cut(spans, holes):
    """spans less holes (both disjoint and sorted)."""
    out = []
    for s, e in spans:
        for hs, he in holes:
            if he <= s or hs >= e:
                continue
            if hs > s:
                out.append((s, hs))
            s = max(s, he)
        if e > s:
            out.append((s, e))
    return out


def traced(trace_dir, step):
    """The step's traces as (coverage, union of GPU 0's device work)."""
    names = sorted(f for f in os.listdir(trace_dir)
                   if f == f"{step}.pt.trace.json.gz" or
                   (f.startswith(f"{step}_rank") and f.endswith(".pt.trace.json.gz")))
    cov, busy = [], []
    for n in names:
        win, g = device_work.gpus(os.path.join(trace_dir, n))
        if 0 in g:
            cov.append(win)
            busy += g[0]
    return [tuple(x) for x in merge(cov)], [tuple(x) for x in merge(busy)]


def nvsmi(report, csv_path, manifest, trace_dir, steps):
    smp = nvsmi_rows(csv_path)
    sp = sorted(b[0] - a[0] for a, b in zip(smp, smp[1:]) if b[0] > a[0])[:1024]
    period = sorted(sp)[(len(sp) - 1) // 2]
    hold = 3 * period
    with open(manifest) as f:
        win = {s["step"]: (s["start_ns"], s["end_ns"]) for s in map(json.loads, f)}
    rows = rows_by_path(report)
    for arg in steps:
        step, _, verdict = arg.partition("=")
        a, b = win[step]
        covered, busy = traced(trace_dir, step)
        covered, busy = clip(covered, a, b), clip(busy, a, b)
        area = cov = 0
        sat = []
        peak = None
        for i, (t, v) in enumerate(smp):
            until = min(smp[i + 1][0], t + hold) if i + 1 < len(smp) else t + period
            lo, hi = max(a, t), min(b, until)
            if hi > lo:
                area += v * (hi - lo)
                cov += hi - lo
                if v >= 95:
                    sat.append((lo, hi))
                peak = v if peak is None else max(peak, v)
        r = row_for(rows, step)
        m = measured(r, "utilization.gpu") if r else None
        check(m is not None and abs(m["mean"] - area / cov) < TOL and abs(m["peak"] - peak) < TOL,
              f"{step}: measured utilization.gpu {area / cov:.2f}% (peak {peak:.0f}%) as"
              " nvidia-smi says", f"report {m}")
        if covered:
            share = 100 * length(busy) / length(covered)
            d = measured(r, "device work") if r else None
            check(d is not None and abs(d["mean"] - share) < TOL
                  and d["peak"] == (100 if busy else 0),
                  f"{step}: measured device work {share:.2f}% as the union of its traced"
                  " device work over the time its traces cover", f"report {d}")
            use = (r or {}).get("resources", {}).get("gpu", {}).get("use")
            want_use = length(busy) / (b - a)
            check(use is not None and abs(use - want_use) < 0.0005,
                  f"{step}: est. use of gpu {100 * want_use:.2f}%, its device work's union"
                  " over its time", f"report {use}")
        want = length(merge(busy + cut(sat, covered))) / (b - a)
        check(r is not None and abs(bound(r, "gpu") - want) < 0.005,
              f"{step}: bound by gpu {100 * want:.1f}% of its time: while device work ran"
              " where traced, nvidia-smi at 95% or more elsewhere",
              f"report {r and r['bottlenecks']}")
        if verdict:
            got = r["bottlenecks"][0]["resource"] if r and r["bottlenecks"] else "-"
            check(got == verdict, f"{step}: verdict {verdict}", f"report says {got}")


def pane(dump, report_text, paths):
    with open(dump) as f:
        screens = f.read()
    with open(report_text) as f:
        rep = f.read().splitlines()
    # the report's lines of each path in its Resources section
    start = next(i for i, l in enumerate(rep) if l.startswith("Resources ("))
    want = {}
    for i in range(start, len(rep)):
        line = rep[i]
        if line.startswith("  /") and not line.startswith("   "):
            cur = line.strip()
            want[cur] = {}
        elif line.startswith("      measured ") or line.startswith("      bound by "):
            want[cur][line[6:14]] = line[15:]
        elif not line.strip():
            break
    got = []
    for line in screens.splitlines():
        if line.startswith(" measured  ") or line.startswith(" bound by  "):
            got.append((line[1:9], line[11:].rstrip()))
    for k, path in enumerate(paths):
        w = want.get(path)
        g = dict(got[2 * k:2 * k + 2]) if len(got) >= 2 * k + 2 else {}
        check(w is not None and g.get("measured") == w.get("measured")
              and g.get("bound by") == w.get("bound by"),
              f"pane and report agree on {path}",
              f"pane {g}, report {w}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "sadf":
        sadf(args[0], args[1], args[2], args[3:])
    elif mode == "nvsmi":
        nvsmi(args[0], args[1], args[2], args[3], args[4:])
    elif mode == "pane":
        pane(args[0], args[1], args[2:])
    else:
        sys.exit(__doc__)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
