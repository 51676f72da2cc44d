#!/usr/bin/env python3
"""Checks the tool's stragglers against an independent reading of the raw
traces (json only, exact decimal timestamps).

  straggler.py CASE REPORT.json TRACE.db TRACE... [TRUTH.json]

CASE is dlrm (NCCL kernels on the GPU), ddp or gloo (c10d ops on the host,
gloo's backend); TRUTH.json (gloo) is tests/truth/gpu/data/truth.json, what
the workload measured with its own clocks.  The rule (man grademl-tui,
Stragglers): ranks meet at collectives; at each, the last rank to arrive is
the straggler and every other rank waits from its arrival to the last one.
Prints "ok NAME" or "not_ok NAME WHY" lines for tests/e2e/straggler.sh."""
import gzip
import json
import sqlite3
import sys
from decimal import Decimal


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return json.loads(f.read().decode("utf-8", "replace"), parse_float=Decimal)


def ns(v):
    return int(Decimal(v) * 1000)


class Rank:
    def __init__(self, path):
        doc = load(path)
        self.rank = doc["distributedInfo"]["rank"]
        base = int(doc.get("baseTimeNanoseconds", 0))
        self.spans = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
        for e in self.spans:
            e["start"] = ns(e["ts"]) + base
            e["end"] = e["start"] + ns(e.get("dur", 0))

    def window(self):
        """Of the spans of work: not Kineto's own trace span (pid "Spans",
        older "Traces"), the profiler's bookkeeping."""
        work = [e for e in self.spans if e.get("pid") not in ("Spans", "Traces")]
        return min(e["start"] for e in work), max(e["end"] for e in work)

    def nccl(self):
        """NCCL kernels, by the collective in their name, in order."""
        out = {}
        for e in sorted(self.spans, key=lambda e: e["start"]):
            if e.get("cat") == "kernel" and e["name"].startswith("nccl"):
                out.setdefault(e["name"].split("_")[1].split("(")[0], []).append(e)
        return out

    def c10d(self):
        """c10d ops (arrival), each with the gloo op that ran it (its end)."""
        ops = sorted((e for e in self.spans if e["name"].startswith("c10d::")),
                     key=lambda e: e["start"])
        gloo = sorted((e for e in self.spans if e["name"].startswith("gloo:")
                       and e.get("cat") == "user_annotation"), key=lambda e: e["start"])
        assert len(ops) == len(gloo), "one gloo op per c10d op"
        out = {}
        for op, g in zip(ops, gloo):
            assert g["start"] >= op["start"]
            out.setdefault(op["name"], []).append(
                {"start": op["start"], "end": max(op["end"], g["end"])})
        return out


def meetings(ranks, host):
    """Per matched collective: arrivals by rank, the last rank."""
    calls = {r.rank: (r.c10d() if host else r.nccl()) for r in ranks}
    kinds = set(k for c in calls.values() for k in c)
    out = []
    for kind in sorted(kinds):
        n = min(len(c.get(kind, [])) for c in calls.values())
        for i in range(n):
            arrive = {r: calls[r][kind][i]["start"] for r in calls}
            last = max(arrive.values())
            # a meeting: every rank is still inside when the last arrives
            assert all(calls[r][kind][i]["end"] >= last for r in calls), (kind, i)
            out.append({"arrive": arrive, "last": max(arrive, key=lambda r: (arrive[r], -r))})
    return out


def main():
    case, report, db = sys.argv[1:4]
    files = sys.argv[4:]
    truth = None
    if case == "gloo":
        truth = json.load(open(files.pop()))
    ranks = [Rank(f) for f in files]
    rep = json.load(open(report))
    con = sqlite3.connect(db)
    results = []

    def check(name, cond, why=""):
        results.append(("ok %s" % name) if cond else ("not_ok %s\t%s" % (name, why)))

    meets = meetings(ranks, host=case != "dlrm")
    waits = {r.rank: sum(m["arrive"][m["last"]] - m["arrive"][r.rank] for m in meets)
             for r in ranks}
    lasts = {r.rank: sum(m["last"] == r.rank for m in meets) for r in ranks}
    straggler = max(lasts, key=lambda r: (sum(
        sum(m["arrive"][m["last"]] - a for a in m["arrive"].values())
        for m in meets if m["last"] == r), lasts[r]))
    groups = [g for g in rep["imbalance"] if g["kind"] == "ranks"]
    g = groups[0] if len(groups) == 1 else None
    check("%s: one group of ranks" % case, g is not None, "%d groups" % len(groups))
    if g is None:
        return results
    tool = {int(x["name"].split()[-1]): x for x in g.get("ranks", [])}
    others = sum(w for r, w in waits.items() if r != straggler)
    longest = max((r for r in waits if r != straggler), key=lambda r: waits[r])
    check("%s: rank %d arrives last at %d of %d collectives" %
          (case, straggler, lasts[straggler], len(meets)),
          g.get("straggler") == "rank %d" % straggler and g.get("last") == lasts[straggler]
          and g.get("collectives") == len(meets) and g.get("unmatched") == 0
          and g.get("meets") == ("device" if case == "dlrm" else "host"),
          "tool: %s, last at %s of %s (%s unmatched), meets %s" %
          (g.get("straggler"), g.get("last"), g.get("collectives"), g.get("unmatched"),
           g.get("meets")))
    check("%s: each rank's wait and last arrivals, exact" % case,
          len(tool) == len(ranks) and all(
              tool[r]["wait_ns"] == waits[r] and tool[r]["last"] == lasts[r] for r in waits),
          "want %s, tool %s" % (sorted(waits.items()),
                                sorted((r, x["wait_ns"]) for r, x in tool.items())))
    check("%s: the others wait %.2f ms in all, rank %d the longest" %
          (case, others / 1e6, longest),
          g.get("wait_ns") == others and g.get("longest") == "rank %d" % longest,
          "tool: %s, longest %s" % (g.get("wait_ns"), g.get("longest")))
    mean_gap = sum(m["arrive"][m["last"]] - Decimal(sum(m["arrive"].values())) / len(ranks)
                   for m in meets)
    check("%s: impact = last arrival less the mean, added up (%.3f ms)" %
          (case, mean_gap / Decimal(1e6)), abs(g.get("impact_ns", 0) - mean_gap) <= 2,
          "tool %s" % g.get("impact_ns"))
    issue = [u for u in rep["top_issues"] if u["kind"] == "imbalance"
             and u["phase_id"] == g.get("straggler_id")]
    want = "rank %d arrives last at %d of %d collectives" % (
        straggler, lasts[straggler], len(meets))
    check("%s: the issue says '%s', rank %d the longest" % (case, want, longest),
          len(issue) == 1 and want in issue[0]["explanation"]
          and "rank %d the longest" % longest in issue[0]["explanation"]
          and issue[0]["impact_ns"] == g.get("impact_ns"),
          "issue: %s" % (issue[0]["explanation"] if issue else "none"))

    if case == "dlrm":
        # the issue's figures: every first NCCL kernel ends together; rank 7
        # reaches it last, rank 1 first and waits about 7.6 ms
        first = [m for m in meets if m["arrive"] == {
            r.rank: r.nccl()["SendRecv"][0]["start"] for r in ranks}][0]
        w1 = first["arrive"][first["last"]] - first["arrive"][1]
        check("dlrm: the first collective: rank 7 last, rank 1 first, waiting %.2f ms" %
              (w1 / 1e6), first["last"] == 7 and 7.5e6 < w1 < 7.7e6
              and min(first["arrive"], key=first["arrive"].get) == 1, "%s" % first)
        # a rank's window is its spans' of work, not stretched to "Record
        # Window End" nor to the profiler's trace span
        got = dict((int(n.split()[-1]), (s, e)) for n, s, e in con.execute(
            "SELECT name, start_ns, end_ns FROM phases_v WHERE kind = 'rank'"))
        want = {r.rank: r.window() for r in ranks}
        check("dlrm: each rank's window is that of its spans", got == want,
              "want %s, got %s" % (want, got))
    if case == "gloo":
        # what the workload measured: rank 0's wait at each profiled step
        t = truth["cases"]["straggler"]["ranks"]
        lo, hi = min(r.window()[0] for r in ranks), max(r.window()[1] for r in ranks)
        steps = [i for i, a in enumerate(t[1]["arrive_ns"]) if lo <= a <= hi]
        want = {i: t[0]["wait_ms"][i] * 1e6 for i in steps}
        its = [x for x in rep["imbalance"] if x["kind"] == "iteration"]
        got = {}
        for x in its:
            s, e = con.execute("SELECT start_ns, start_ns + dur_ns FROM phases WHERE id = ?",
                               (x["straggler_id"],)).fetchone()
            zero = [r["wait_ns"] for r in x.get("ranks", []) if r["name"] == "rank 0"]
            for i in steps:
                if zero and s <= t[1]["arrive_ns"][i] <= e:
                    got[i] = zero[0]
        tol = 0.1e6  # the profiler's op start is not the workload's clock read
        check("gloo: rank 0's wait at each of the %d profiled steps within 0.1 ms of the "
              "workload's clocks (%s ms)" % (len(steps),
                                             ", ".join("%.2f" % (want[i] / 1e6) for i in steps)),
              len(steps) == 3 and sorted(got) == steps
              and all(abs(got[i] - want[i]) <= tol for i in steps),
              "want %s, got %s" % (want, got))
        check("gloo: rank 0's wait in all within 0.3 ms of the workload's (%.2f ms)" %
              (sum(want.values()) / 1e6),
              0 in tool and abs(tool[0]["wait_ns"] - sum(want.values())) <= 3 * tol,
              "tool %s" % tool.get(0))
    return results


if __name__ == "__main__":
    try:
        lines = main()
    except Exception as e:  # a crash is one failure, with its reason
        lines = ["not_ok %s: the check itself\t%r" % (sys.argv[1], e)]
    print("\n".join(lines))
