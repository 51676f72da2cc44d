#!/usr/bin/env python3
"""The :path screen (tests/e2e/path.sh) against `grademl-tui report --format
json`'s critical_path, whose figures tests/e2e/figures.sh checks against the
raw files.

  path_check.py table REPORT.json SCREEN.txt
      every row of the table (the screen's lines 4..) against the report:
      per workflow its phases in the report's order, its waiting time a
      row of its own where its length falls among them; each row's id,
      kind, time on the path, share of the makespan and twice-as-fast
      saving as the explorer prints them, two or more rows with a what-if
      (each piece of work among the ten gets one).  Prints the screen index of the
      row to try Enter on (the second row with a what-if, else the first)
      and the report's path of its phase, tab-separated; exits 1 with the
      differences otherwise.
  path_check.py jump REPORT.json ROW SCREEN.txt WHATIF.txt
      after Enter on row ROW: the details pane's path is the phase's, and
      `:whatif 2` there saves what the row's 2x_saves says.
"""
import itertools
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from figures import fmt_dur  # noqa: E402  the one formatter of durations


def want_rows(report):
    """The rows the screen should show, in order: (id, kind, on_path_ns,
    share text, 2x_saves text, path)."""
    rows = []
    for wf, group in itertools.groupby(report["critical_path"], key=lambda c: c["root_id"]):
        group = list(group)
        head, waited = group[0], False
        wait = (wf, "wait", head["wait_ns"], share(head["wait_ns"], head), "-", None)
        for c in group:
            if not waited and head["wait_ns"] > c["on_path_ns"]:
                rows.append(wait)
                waited = True
            saves = "-" if c["whatif_2x_makespan_ns"] is None else \
                fmt_dur(c["makespan_ns"] - c["whatif_2x_makespan_ns"])
            rows.append((c["phase_id"], "run", c["on_path_ns"], share(c["on_path_ns"], c),
                         saves, c["path"]))
        if not waited:
            rows.append(wait)
    return rows


def share(ns, c):
    """As the screen prints share%: rounded to 0.01, two decimals."""
    if c["makespan_ns"] <= 0:
        return "-"
    return "%.2f" % (math.floor(10000.0 * ns / c["makespan_ns"] + 0.5) / 100)


def screen_rows(lines):
    """The table's rows: (id, kind, on_path, share, 2x_saves) from columns
    split at two or more blanks (phase, step, on_path, share%, 2x_saves,
    then, kind, workflow, id)."""
    out = []
    for ln in lines[3:]:
        f = re.split(r"\s{2,}", ln.strip())
        if len(f) != 9 or not f[-1].isdigit():
            break
        out.append((int(f[-1]), f[6], f[2], f[3], f[4]))
    return out


def table(report, screen):
    rep = json.load(open(report))
    lines = open(screen, encoding="utf-8").read().splitlines()
    want, got, bad = want_rows(rep), screen_rows(lines), []
    if len(got) != len(want):
        bad.append("%d rows on the screen, the report makes %d" % (len(got), len(want)))
    for k, (w, g) in enumerate(zip(want, got)):
        wt = (w[0], w[1], fmt_dur(w[2]), w[3], w[4])
        if wt != g:
            bad.append("row %d: screen %s, report %s" % (k, g, wt))
    # the demo and GPU captures have several operators or profiler steps
    # among the ten: each gets its what-if, not the first alone
    if sum(w[4] != "-" for w in want) < 2:
        bad.append("%d rows with a what-if; the analysis asks one of each piece of work" %
                   sum(w[4] != "-" for w in want))
    if bad:
        print("; ".join(bad[:6]))
        return 1
    withif = [k for k, w in enumerate(want) if w[4] != "-"]
    k = withif[1] if len(withif) > 1 else withif[0]
    print("%d\t%s" % (k, want[k][5]))
    return 0


def jump(report, row, screen, whatif):
    w = want_rows(json.load(open(report)))[int(row)]
    text = open(screen, encoding="utf-8").read()
    m = re.search(r"^ path +(.*?) *$", text, re.M)
    bad = []
    if not m or m.group(1) != w[5]:
        bad.append("Enter: the details pane shows %r, not %r" % (m and m.group(1), w[5]))
    last = [ln for ln in open(whatif, encoding="utf-8").read().splitlines() if ln.strip()][-1]
    if " 2x faster saves %s (" % w[4] not in last:
        bad.append(":whatif 2 says %r, the row %s" % (last.strip()[:160], w[4]))
    if bad:
        print("; ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "table" and len(a) == 3:
        sys.exit(table(a[1], a[2]))
    if a and a[0] == "jump" and len(a) == 5:
        sys.exit(jump(*a[1:]))
    sys.exit("usage: path_check.py table REPORT SCREEN | jump REPORT ROW SCREEN WHATIF")
