#!/usr/bin/env python3
"""Traces for tests/e2e/correlate.sh, and the answers of the query language's
correlation in time worked out the slow way.

  correlate_check.py trace N OUT
      OUT: a Chrome trace (JSON Object Format) of about N complete events
      on four threads: per thread a run of "step" spans, each holding a
      few operators that hold a few children, on a coarse microsecond
      grid so that starts, ends and gaps often tie; zero-length operators;
      instant events in operators and between steps.  The same N gives
      the same file.
  correlate_check.py during DB
      Prints, one a line, the ids of the phases that lie inside an
      operator (w0 <= start and end <= w1) and then, after a line "--",
      the ids of the events at or after an operator's start and before
      its end, each by a scan of every pair.
  correlate_check.py within DB DIST_NS
      Prints "id near" for every phase that has an operator other than
      itself within DIST_NS: the one with the least gap max(w0 - end,
      start - w1, 0), the lowest id among equals; then "--" and the same
      for the events (gap max(w0 - t, t - w1, 0)).

The ids and times come from trace.db's phases and events tables (read
with sqlite3), so the answers are over what the import stored.
"""
import json
import random
import sqlite3
import sys


def trace(n, out):
    rnd = random.Random(n)
    events = []
    per_thread = max(1, n // 4)
    for tid in range(1, 5):
        t = rnd.randrange(0, 50)
        made = 0
        step = 0
        while made < per_thread:
            ops = rnd.randrange(2, 6)
            s0 = t
            parts = []
            for _ in range(ops):
                gap = rnd.choice((0, 0, 1, 2, 5))
                t += gap
                dur = rnd.choice((0, 3, 4, 8, 10, 20))
                parts.append((t, dur))
                t += dur
            events.append({"ph": "X", "cat": "user_annotation", "name": "step%d" % step,
                           "pid": 1, "tid": tid, "ts": s0, "dur": t - s0})
            made += 1
            for i, (a, d) in enumerate(parts):
                events.append({"ph": "X", "cat": "cpu_op", "name": "aten::op%d" % (i % 3),
                               "pid": 1, "tid": tid, "ts": a, "dur": d})
                made += 1
                c = a
                while d >= 3 and c + 1 < a + d and rnd.random() < 0.6:
                    cd = rnd.randrange(0, a + d - c)
                    events.append({"ph": "X", "cat": "cpu_op", "name": "aten::child",
                                   "pid": 1, "tid": tid, "ts": c, "dur": cd})
                    made += 1
                    c += cd + 1
                if rnd.random() < 0.3:
                    events.append({"ph": "i", "s": "t", "name": "mark", "pid": 1,
                                   "tid": tid, "ts": a + rnd.randrange(0, d + 1)})
            gap = rnd.choice((1, 2, 7, 30))
            if rnd.random() < 0.3:
                events.append({"ph": "i", "s": "t", "name": "idle", "pid": 1,
                               "tid": tid, "ts": t + rnd.randrange(0, gap)})
            t += gap
            step += 1
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": events}, f)


def rows(db):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    phases = c.execute("SELECT p.id, p.start_ns, p.start_ns + p.dur_ns, k.name FROM phases p"
                       " JOIN phase_kinds k ON k.id = p.kind").fetchall()
    events = c.execute("SELECT id, t_ns FROM events").fetchall()
    ops = [(i, a, b) for i, a, b, k in phases if k == "operator"]
    return phases, events, ops


def during(db):
    phases, events, ops = rows(db)
    for i, a, b, _ in sorted(phases):
        if any(w0 <= a and b <= w1 for _, w0, w1 in ops):
            print(i)
    print("--")
    for i, t in sorted(events):
        if any(w0 <= t < w1 for _, w0, w1 in ops):
            print(i)


def nearest(a, b, d, ops, self_id):
    best = None
    for wid, w0, w1 in ops:
        if wid == self_id:
            continue
        g = max(w0 - b, a - w1, 0)
        if g <= d and (best is None or (g, wid) < best):
            best = (g, wid)
    return best[1] if best else None


def within(db, d):
    phases, events, ops = rows(db)
    for i, a, b, _ in sorted(phases):
        w = nearest(a, b, d, ops, i)
        if w is not None:
            print(i, w)
    print("--")
    for i, t in sorted(events):
        w = nearest(t, t, d, ops, None)
        if w is not None:
            print(i, w)


def main():
    cmd = sys.argv[1]
    if cmd == "trace":
        trace(int(sys.argv[2]), sys.argv[3])
    elif cmd == "during":
        during(sys.argv[2])
    elif cmd == "within":
        within(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: correlate_check.py trace N OUT | during DB | within DB DIST_NS")


if __name__ == "__main__":
    main()
