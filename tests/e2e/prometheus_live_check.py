#!/usr/bin/env python3
"""Checks of tests/e2e/prometheus_live.sh: what a live pull from Prometheus
stored, against sar over the same seconds and between the steps.

  prometheus_live_check.py means LIVE.db SAR.db MANIFEST TRIM_S TOL
      each step's cpu.util mean over [start + TRIM_S, end - TRIM_S], read
      from the samples of each trace.db (a value holds until the next
      sample): the pull's within TOL percentage points of sar's
  prometheus_live_check.py attrib LIVE.json SAR.json BUSY IDLE TOL
      from `grademl-tui report --format json`: attribution gives step BUSY
      a cpu use above IDLE's by 0.3 or more (unless sar's shows no such
      gap: other work kept the host busy; a skip), judges BUSY bound by
      cpu, and gives each step a cpu use within TOL of sar's attribution

Prints "ok - ..." / "not ok - ..." lines.
"""
import json
import sqlite3
import sys


def mean(db, host, a, b):
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT s.t_ns, s.value FROM samples s JOIN metrics m ON m.id = s.metric_id"
        " WHERE m.name = 'cpu.util' AND m.resource = 'cpu' AND m.host = ?"
        " ORDER BY s.t_ns", (host,)).fetchall()
    con.close()
    total = covered = 0.0
    for (t, v), nxt in zip(rows, rows[1:] + [(None, None)]):
        end = nxt[0] if nxt[0] is not None else t + 10**9
        lo, hi = max(t, a), min(end, b)
        if hi > lo:
            total += v * (hi - lo)
            covered += hi - lo
    return total / covered if covered > 0.5 * (b - a) else None


def means(live, sar, manifest, trim, tol):
    trim_ns = int(float(trim) * 1e9)
    steps = [json.loads(line) for line in open(manifest) if line.strip()]
    got = {}
    for s in steps:
        a, b = s["start_ns"] + trim_ns, s["end_ns"] - trim_ns
        m_live, m_sar = mean(live, s["host"], a, b), mean(sar, s["host"], a, b)
        got[s["step"]] = m_live
        name = "%s: cpu.util over its middle %.1f s, pulled %s, sar %s" % (
            s["step"], (b - a) / 1e9,
            "-" if m_live is None else "%.1f%%" % m_live,
            "-" if m_sar is None else "%.1f%%" % m_sar)
        if m_live is None or m_sar is None:
            print("not ok - %s (no samples cover it)" % name)
        elif abs(m_live - m_sar) <= float(tol):
            print("ok - %s: within %s points" % (name, tol))
        else:
            print("not ok - %s: more than %s points apart" % (name, tol))
    return got


def attrib(live_json, sar_json, busy, idle, tol):
    def rows(path):
        d = json.load(open(path))
        return {r["path"].rsplit("/", 1)[-1]: r for r in d["attribution"]["phases"]}

    live, sar = rows(live_json), rows(sar_json)

    def use(r):
        return r.get("resources", {}).get("cpu", {}).get("use")

    ub, ui = use(live.get(busy, {})), use(live.get(idle, {}))
    sb, si = use(sar.get(busy, {})), use(sar.get(idle, {}))
    name = "attribution tells %s (cpu use %s) from %s (%s)" % (
        busy, "-" if ub is None else "%.2f" % ub, idle, "-" if ui is None else "%.2f" % ui)
    if ub is None or ui is None:
        print("not ok - %s" % name)
    elif ub - ui >= 0.3:
        print("ok - %s" % name)
    elif sb is not None and si is not None and sb - si < 0.3:
        print("skip - %s: other work kept the host busy (from sar: %.2f, %.2f)" % (name, sb, si))
    else:
        print("not ok - %s" % name)
    top = [b["resource"] for b in live.get(busy, {}).get("bottlenecks", [])]
    if top[:1] == ["cpu"]:
        print("ok - %s is bound by cpu first (%s)" % (busy, ", ".join(top)))
    else:
        print("not ok - %s is bound by cpu first (%s)" % (busy, ", ".join(top) or "none"))
    for step in (busy, idle):
        a, b = use(live.get(step, {})), use(sar.get(step, {}))
        name = "%s: attributed cpu use from the pull %s, from sar %s" % (
            step, "-" if a is None else "%.2f" % a, "-" if b is None else "%.2f" % b)
        if a is not None and b is not None and abs(a - b) <= float(tol):
            print("ok - %s: within %s" % (name, tol))
        else:
            print("not ok - %s: not within %s" % (name, tol))


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "means":
        means(*sys.argv[2:])
    elif len(sys.argv) == 7 and sys.argv[1] == "attrib":
        attrib(*sys.argv[2:])
    else:
        sys.exit(__doc__)
