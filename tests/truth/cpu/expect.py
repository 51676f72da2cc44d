#!/usr/bin/env python3
"""The CPU truth cases' figures and verdicts, computed from the raw files
alone (sadf -j JSON and the workflow manifest), independently of
grademl-tui: what its report must agree with.

A sar sample stamped T with interval I is the mean over [T - I, T).  Over a
step's window [start, end), for each series: the time-weighted mean of the
samples that hold there, the highest of them, and the share of the window
during which each rule of grademl-tui(1) BOTTLENECKS held:

  cpu            cpu.util (100 - %idle of "all") >= 95
  single-thread  some CPU's 100 - %idle >= 95 while cpu.util < 95
  disk           some disk's %util >= 95, or >= 50 while the host's %iowait
                 amounts to 0.2 of a CPU or more (iowait x CPUs >= 20)
  software       a sample holds and none of the above

The verdict is the rule that held longest (software when none did).

Usage: expect.py [--check | --json] SADF_JSON[.gz] WORKFLOW_JSONL
  (default: a table; --json: the figures as JSON; --check: exit 1 unless
  each step's verdict is what its workload was built to show)
"""
import calendar
import gzip
import json
import sys

SAT = 95.0
IO_BUSY = 50.0
IO_WAIT_CORES = 0.2
BUILT = {"cores": "cpu", "thread": "single-thread", "disk": "disk", "sleep": "software"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def samples(doc):
    """[(t0_ns, t1_ns, {series: value})], the host's CPU count."""
    host = doc["sysstat"]["hosts"][0]
    out = []
    for s in host["statistics"]:
        ts = s["timestamp"]
        y, mo, d = (int(x) for x in ts["date"].split("-"))
        h, mi, se = (int(x) for x in ts["time"].split(":"))
        t1 = calendar.timegm((y, mo, d, h, mi, se)) * 10**9
        t0 = t1 - int(ts["interval"]) * 10**9
        v = {}
        for c in s.get("cpu-load", []):
            name = "cpu" if c["cpu"] == "all" else "cpu" + c["cpu"]
            v[name + ".util"] = 100.0 - c["idle"]
            v[name + ".iowait"] = c["iowait"]
        for k in s.get("disk", []):
            v["disk:" + k["disk-device"] + ".util-percent"] = k["util-percent"]
        out.append((t0, t1, v))
    return out, host["number-of-cpus"]


def rules(v, ncpu):
    """The rules that hold for one sample's values."""
    util = v.get("cpu.util", 0.0)
    cores = [x for k, x in v.items() if k.startswith("cpu") and k != "cpu.util"
             and k.endswith(".util")]
    disks = [x for k, x in v.items() if k.startswith("disk:")]
    held = set()
    if util >= SAT:
        held.add("cpu")
    elif cores and max(cores) >= SAT:
        held.add("single-thread")
    iowait_cores = v.get("cpu.iowait", 0.0) * ncpu / 100.0
    if any(d >= SAT or (d >= IO_BUSY and iowait_cores >= IO_WAIT_CORES) for d in disks):
        held.add("disk")
    return held


def figures(sadf, manifest):
    smp, ncpu = samples(load(sadf))
    out = {}
    with open(manifest) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    for st in steps:
        a, b = st["start_ns"], st["end_ns"]
        area, peak, covered = {}, {}, 0
        held = {"cpu": 0, "single-thread": 0, "disk": 0, "software": 0}
        for t0, t1, v in smp:
            lo, hi = max(a, t0), min(b, t1)
            if hi <= lo:
                continue
            covered += hi - lo
            for k, x in v.items():
                area[k] = area.get(k, 0.0) + x * (hi - lo)
                peak[k] = max(peak.get(k, x), x)
            r = rules(v, ncpu)
            for k in r:
                held[k] += hi - lo
            if not r:
                held["software"] += hi - lo
        dur = b - a
        share = {k: x / dur for k, x in held.items()}
        verdict = max(share, key=lambda k: (share[k], k == "software"))
        out[st["step"]] = {
            "dur_ns": dur,
            "covered": covered / dur,
            "mean": {k: x / covered for k, x in area.items()} if covered else {},
            "max": peak,
            "bound": share,
            "verdict": verdict,
        }
    return out, ncpu


def main():
    args = sys.argv[1:]
    mode = args.pop(0) if args and args[0].startswith("--") else "--table"
    if len(args) != 2 or mode not in ("--table", "--json", "--check"):
        sys.exit(__doc__)
    figs, ncpu = figures(*args)
    if mode == "--json":
        json.dump(figs, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    bad = 0
    print(f"{'step':8} {'cpu.util':>8} {'busiest core':>12} {'disk':>6} {'iowait':>6}"
          f"  {'cpu':>4} {'1-core':>6} {'disk':>4} {'sw':>4}  verdict")
    for name, f in figs.items():
        m = f["mean"]
        core = max((x for k, x in m.items() if k.startswith("cpu") and k != "cpu.util"
                    and k.endswith(".util")), default=0.0)
        disk = max((x for k, x in m.items() if k.startswith("disk:")), default=0.0)
        b = f["bound"]
        want = BUILT.get(name)
        ok = want is None or (f["verdict"] == want and b[want] >= 0.5)
        bad += not ok
        print(f"{name:8} {m.get('cpu.util', 0):7.1f}% {core:11.1f}% {disk:5.1f}%"
              f" {m.get('cpu.iowait', 0):5.1f}%  {100 * b['cpu']:3.0f}% "
              f"{100 * b['single-thread']:5.0f}% {100 * b['disk']:3.0f}% "
              f"{100 * b['software']:3.0f}%  {f['verdict']}"
              + ("" if ok else f"  (built to be {want})"))
    print(f"{ncpu} CPUs")
    if mode == "--check" and bad:
        sys.exit(f"expect.py: {bad} step(s) do not show what they were built to show")


if __name__ == "__main__":
    main()
