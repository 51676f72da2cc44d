#!/usr/bin/env python3
"""Checks a trace.db imported from a modded-nanogpt log through
rules/nanogpt.rules against the log itself, read here on its own.

    nanogpt_check.py LOG TRACE.DB

The log prints "step:N/M train_time:Tms ..." as training step N ends, and
"step:N/M val_loss:V train_time:Tms ..." after a validation; train_time is
milliseconds of training, a clock the speedrun restarts once (after its
warm-up steps), so a time less than the one before counts on from it.  Step
N runs from the step line before it (the first from 0) to its own; a
validation belongs to the step whose window holds its time, or to the
imported step (the log's node) when none does.  Prints "ok - ..." or
"not ok - ... (why)" per check."""
import re
import sqlite3
import sys

MS = 1_000_000
TRAIN = re.compile(r"^step:(\d+)/\d+ train_time:(\d+)ms")
VAL = re.compile(r"^step:(\d+)/\d+ val_loss:[0-9.]+ train_time:(\d+)ms")


def report(ok, name, why=""):
    print(("ok - " if ok else "not ok - ") + name + ("" if ok else f" ({why})"))


def read_log(path):
    """[(N, end_ns)] of the steps and [t_ns] of the validations, the clock's
    restarts counted on."""
    steps, vals = [], []
    base, last = 0, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = TRAIN.match(line) or VAL.match(line)
            if not m:
                continue
            raw = int(m.group(2))
            if last is not None and raw < last:
                base += last
            last = raw
            t = (base + raw) * MS
            if m.re is TRAIN:
                steps.append((int(m.group(1)), t))
            else:
                vals.append(t)
    return steps, vals


def main():
    log, db = sys.argv[1], sys.argv[2]
    steps, vals = read_log(log)
    windows = {}
    start = 0
    for n, end in steps:
        windows[f"step:{n}"] = (start, end)
        start = end
    con = sqlite3.connect(db)
    got = {
        name: (s, s + d)
        for name, s, d in con.execute(
            "SELECT name, start_ns, dur_ns FROM phases_v WHERE kind = 'span'")
    }
    report(len(got) == len(steps) == 1393, "nanogpt: one phase per step line",
           f"{len(got)} phases, {len(steps)} step lines, 1393 in the log's header")
    wrong = [n for n in windows if got.get(n) != windows[n]]
    report(not wrong, "nanogpt: each step from the step line before it to its own",
           f"{len(wrong)} differ, e.g. {wrong[:1]}: "
           f"{[got.get(n) for n in wrong[:1]]} want {[windows[n] for n in wrong[:1]]}")
    zero = [n for n, (s, e) in got.items() if e <= s]
    report(not zero, "nanogpt: no step of 0 ns", f"{zero[:3]}")

    step_id, s_start, s_dur = con.execute(
        "SELECT id, start_ns, dur_ns FROM phases_v WHERE kind = 'step'").fetchone()
    last = max([e for _, e in steps] + vals)
    report((s_start, s_start + s_dur) == (0, last),
           "nanogpt: the imported step spans the log, its last validation included",
           f"[{s_start}, {s_start + s_dur}] want [0, {last}]")

    unbound = con.execute("SELECT count(*) FROM events WHERE phase_id IS NULL").fetchone()[0]
    report(unbound == 0, "nanogpt: no event bound to nothing", f"{unbound} unbound")
    want = []
    for t in vals:
        holder = [n for n, (s, e) in windows.items() if s <= t < e]
        want.append((t, holder[0] if holder else None))
    rows = con.execute(
        "SELECT e.t_ns, p.kind, p.name FROM events_v e JOIN phases_v p ON p.id = e.phase_id"
        " WHERE e.name = 'validation' ORDER BY e.t_ns").fetchall()
    have = [(t, name if kind == "span" else None) for t, kind, name in rows]
    report(have == sorted(want) and len(vals) == 13,
           "nanogpt: each validation bound to the step running at its time (the last to"
           " the imported step)", f"got {have[:3]}..., want {sorted(want)[:3]}...")
    on_step = con.execute("SELECT count(*) FROM events WHERE phase_id = ?",
                          (step_id,)).fetchone()[0]
    report(on_step == sum(1 for _, h in want if h is None),
           "nanogpt: what follows the last step line is the imported step's",
           f"{on_step} events on the step")


main()
