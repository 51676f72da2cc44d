#!/usr/bin/env python3
"""Every figure of `grademl-tui diff A.db B.db --format json` against an
independent computation from the two raw Chrome/Kineto traces (json and
gzip only; trace.db is never read).

    diff_check.py A_TRACE B_TRACE DIFF.json

The traces are read and nested as figures.py does (Raw: each host
thread's spans by time, device work under the runtime call that launched
it).  Then, per run, the rule of grademl-tui(1) DIFF: profiler steps by
name with the number after '#' merged; operators and annotations by the
path of operator and annotation names above them up to their profiler step
(runtime calls and spans passed through); runtime calls by name; device
work by name; a name only in A and one only in B of the same role (the
same level and path above, the same name once a trailing " (...)" and the
class names before a '.' and a member are set aside), when each is the only
one of its role on its side, as one renamed row.  Each row's count, total,
mean, difference, ratio and status,
the rows' set and order (absolute difference, largest first, then name),
each level's sums and counts, and each run's makespan (its trace's window, the profiler's bookkeeping left out)
must be the diff's, exactly; and so must each step name's steps, median
(an even count's two middle ones' mean, rounded down), first step and
warm-up (its excess over the median, with 3 steps or more), largest change
of median first.  Prints one "ok - ..." or "not ok - ... (why)"
line per check; exits 1 when any failed.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

LEVELS = ("step", "op", "runtime", "kernel")
failed = 0


def check(name, bad):
    global failed
    if bad:
        failed += 1
        print(f"not ok - {name} ({bad})")
    else:
        print(f"ok - {name}")


def step_name(name):
    return re.sub(r"#[0-9]+$", "#*", name)


def op_path(x):
    """The names of the operators and annotations from x up, to its
    profiler step (merged) if it has one, outermost first."""
    names = []
    p = x
    while p is not None:
        kind = p["kind"]
        if kind in ("operator", "annotation"):
            names.append(p["name"])
        elif kind == "profiler_step":
            names.append(step_name(p["name"]))
            break
        elif kind not in ("runtime", "span"):
            break
        p = p["parent"]
    return tuple(reversed(names))


def role(name):
    """A name's role (grademl-tui(1) DIFF): without a trailing " (...)",
    each class name before a '.' and a member as '*'."""
    m = re.match(r"^(.*) (\((?:[^()]|\([^()]*\))*\))$", name)
    if m:
        name = m.group(1)
    return re.sub(r"(?<![A-Za-z0-9_])_*[A-Z][A-Za-z0-9_]*(?=\.[A-Za-z_])", "*", name)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def per_step(run, level, key):
    """A row's figures per step in one run (grademl-tui(1) DIFF): its time
    in each of the run's steps, 0 where it has none."""
    steps = run["steps"]
    if level == "step":
        return steps_of(run["durs"].get(key, []))
    if not steps:
        return steps_of([])
    per = run["per"].get((level, key), {})
    v = [per.get(id(st), 0) for st in steps]
    med = median(v)
    first = v[0]
    return {"steps": len(v), "median_ns": med, "first_ns": first,
            "warmup_ns": first - med if len(v) >= 3 and first > med else 0}


def steps_of(durs):
    """[(id order, dur)] of one step name -> its figures."""
    if not durs:
        return {"steps": 0, "median_ns": 0, "first_ns": 0, "warmup_ns": 0}
    med = median([d for _, d in durs])
    first = min(durs)[1]
    return {"steps": len(durs), "median_ns": med, "first_ns": first,
            "warmup_ns": first - med if len(durs) >= 3 and first > med else 0}


def step_of(x):
    """The profiler step x is beneath, through operators, annotations,
    runtime calls and spans only (None: none)."""
    p = x["parent"]
    while p is not None and p["kind"] in ("operator", "annotation", "runtime", "span"):
        p = p["parent"]
    return p if p is not None and p["kind"] == "profiler_step" else None


def aggregate(raw):
    """level -> path tuple -> [count, total_ns]; "durs" -> step name ->
    [(order, dur)]; "per" -> (level, path) -> {step's id: time};
    "steps": the run's steps, first first."""
    out = {lv: {} for lv in LEVELS}
    out["durs"] = {}
    out["per"] = {}
    out["steps"] = sorted((x for x in raw.spans if x["kind"] == "profiler_step"),
                          key=lambda x: x["t0"])

    def add(level, key, dur):
        c = out[level].setdefault(key, [0, 0])
        c[0] += 1
        c[1] += dur
        st = step_of(x) if level != "step" else None
        if st is not None:
            per = out["per"].setdefault((level, key), {})
            per[id(st)] = per.get(id(st), 0) + dur

    for x in raw.spans:
        dur = x["t1"] - x["t0"]
        kind = x["kind"]
        if kind == "profiler_step":
            add("step", (step_name(x["name"]),), dur)
            out["durs"].setdefault((step_name(x["name"]),), []).append((x["t0"], dur))
        elif kind in ("operator", "annotation"):
            add("op", op_path(x), dur)
        elif kind == "runtime":
            add("runtime", (x["name"],), dur)
        elif kind == "device":
            add("kernel", (x["name"],), dur)
    return out


def main(argv):
    raws = [figures.Raw(argv[0]), figures.Raw(argv[1])]
    with open(argv[2], encoding="utf-8") as f:
        got = json.load(f)
    agg = [aggregate(r) for r in raws]
    for side, raw in zip("ab", raws):
        t0, t1 = raw.rank_window()
        check(f"{side}: makespan {t1 - t0} ns", None if got[side]["makespan_ns"] == t1 - t0
              else f"diff says {got[side]['makespan_ns']}")
    check("levels in order", None if [lv["level"] for lv in got["levels"]] == list(LEVELS)
          else [lv["level"] for lv in got["levels"]])
    medians = []
    for lv in got["levels"]:
        level = lv["level"]
        a, b = agg[0].get(level, {}), agg[1].get(level, {})
        pairs = renamed(a, b)
        keys = (set(a) | set(b)) - set(pairs.values())
        want = []
        for k in keys:
            kb = pairs.get(k, k)
            ca, ta = a.get(k, [0, 0])
            cb, tb = b.get(kb, [0, 0])
            status = "added" if not ca else "removed" if not cb else "both"
            row = {
                "name": " > ".join(k) + (" -> " + kb[-1] if kb != k else ""), "path": list(k),
                "status": "renamed" if kb != k else status,
                "a": {"count": ca, "total_ns": ta, "mean_ns": ta / ca if ca else None},
                "b": {"count": cb, "total_ns": tb, "mean_ns": tb / cb if cb else None},
                "diff_ns": tb - ta, "ratio": tb / ta if ta else None}
            if agg[0]["steps"] or agg[1]["steps"]:
                pa, pb = per_step(agg[0], level, k), per_step(agg[1], level, kb)
                row["per_step"] = {
                    "a": pa, "b": pb, "median_diff_ns": pb["median_ns"] - pa["median_ns"]
                    if pa["steps"] and pb["steps"] else None}
            if kb != k:
                row["b_path"] = list(kb)
            want.append(row)
        by_step = agg[0]["steps"] and agg[1]["steps"]
        want.sort(key=lambda r: (-abs(r["per_step"]["median_diff_ns"] or 0) if by_step else 0,
                                 -abs(r["diff_ns"]), " > ".join(r["path"]).encode("utf-8")))
        for row in want if level == "step" else ():
            k = tuple(row["path"])
            sa = steps_of(agg[0]["durs"].get(k, []))
            sb = steps_of(agg[1]["durs"].get(tuple(row.get("b_path", k)), []))
            both = sa["steps"] and sb["steps"]
            if sa["steps"] or sb["steps"]:
                medians.append({
                    "name": row["name"], "status": row["status"], "a": sa, "b": sb,
                    "median_diff_ns": sb["median_ns"] - sa["median_ns"] if both else None,
                    "median_ratio": sb["median_ns"] / sa["median_ns"]
                    if both and sa["median_ns"] else None})
        rows = lv["rows"]
        check(f"{level}: {len(want)} names", None if lv["names"] == len(want) and
              lv["left_out"] == 0 and len(rows) == len(want)
              else f"diff has {lv['names']} names, {len(rows)} rows, {lv['left_out']} left out")
        n_added = sum(r["status"] == "added" for r in want)
        n_removed = sum(r["status"] == "removed" for r in want)
        check(f"{level}: {n_added} added, {n_removed} removed",
              None if (lv["added"], lv["removed"]) == (n_added, n_removed)
              else f"diff says {lv['added']} added, {lv['removed']} removed")
        for side, i in (("a", 0), ("b", 1)):
            cnt = sum(c for c, _ in agg[i].get(level, {}).values())
            tot = sum(t for _, t in agg[i].get(level, {}).values())
            check(f"{level}: {side} has {cnt} in {tot} ns",
                  None if lv[side] == {"count": cnt, "total_ns": tot}
                  else f"diff says {lv[side]}")
        bad = [(w["name"], r["name"]) for w, r in zip(want, rows)
               if (w["path"], w["name"]) != (r["path"], r["name"])]
        check(f"{level}: rows in order of the absolute difference",
              None if not bad else f"{len(bad)} out of place, first: want "
              f"{bad[0][0]!r}, got {bad[0][1]!r}")
        mism = [w["name"] for w, r in zip(want, rows) if w != r]
        check(f"{level}: every row's counts, totals, means, difference, ratio and status",
              None if not mism else f"{len(mism)} differ, first {mism[0]!r}: want "
              f"{next((w for w in want if w['name'] == mism[0]), None)}, got "
              f"{next((r for r in rows if r['name'] == mism[0]), None)}")
    # the steps' order: by the change of median, then the step level's (a stable sort)
    medians.sort(key=lambda r: -abs(r["median_diff_ns"] or 0))
    check(f"steps: {len(medians)} step names' medians, largest change first",
          None if got.get("steps") == medians else f"want {medians}, got {got.get('steps')}")
    return 1 if failed else 0


def renamed(a, b):
    """A's path -> B's, for the names only in A paired with one only in B
    of the same role under the same path."""
    groups = {}
    for side, mine, other in ((0, a, b), (1, b, a)):
        for k in mine:
            if k not in other:
                groups.setdefault((k[:-1], role(k[-1])), ([], []))[side].append(k)
    return {g[0][0]: g[1][0] for g in groups.values() if len(g[0]) == 1 and len(g[1]) == 1}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
