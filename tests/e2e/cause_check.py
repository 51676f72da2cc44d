#!/usr/bin/env python3
"""The cause where the verdict is: one phase of `grademl-tui report` (JSON
and text) and of the explorer's screens (headless dumps at 200x50 and
80x23, the phase's row selected, the details pane open) against the GPU
breakdown of the same report, which tests/e2e/idle.sh checks against the
raw traces (the man page's ANALYSES, "Bottlenecks" and "Why the GPU idles").

    cause_check.py NAME PATH CAUSE REPORT.json REPORT.txt WIDE.txt NARROW.txt SOURCE...

CAUSE is the cause known by construction ("-": the phase's verdict is not
software and it must show none).  SOURCE: the file names of the traces
whose GPUs the phase holds.  Prints one "ok - ..." or "not ok - ... (why)"
line per check.
"""
import json
import os
import sys

SHORT = {"communication": "comm"}
NARROW_W = 8  # the Bneck column's text under 120 columns
WIDE_W = 16


def out(ok, name, why=""):
    print(("ok - %s" % name) if ok else ("not ok - %s (%s)" % (name, why)))


def expected(report, sources):
    """The cause and its figures from the report's GPU breakdown: the
    ranks of the sources with an idle-gpu issue (a cause holding the GPU
    idle at least 10% of its window), summed."""
    ns, gaps, idle, window, gpus = {}, {}, 0, 0, 0
    for r in report["gpu_breakdown"]:
        if os.path.basename(r["source"]) not in sources:
            continue
        causes = r["idle_causes"]
        if not any(c["ns"] > 0 and c["ns"] >= 0.10 * r["window_ns"] for c in causes.values()):
            continue
        for k, c in causes.items():
            ns[k] = ns.get(k, 0) + c["ns"]
            gaps[k] = gaps.get(k, 0) + c["gaps"]
        idle += r["idle_ns"]
        window += r["window_ns"]
        gpus += 1
    if not window:
        return None
    order = list(report["gpu_breakdown"][0]["idle_causes"])  # the tool's cause order
    top = max(order, key=lambda k: (ns.get(k, 0), -order.index(k)))
    return {"cause": top, "ns": ns[top], "gaps": gaps[top], "idle_ns": idle,
            "window_ns": window, "gpus": gpus, "share": ns[top] / window}


def column(screen, name):
    """The Bneck column's text on the row named name, or None."""
    head = next((l for l in screen if "Bneck" in l and "When" in l), None)
    if head is None:
        return None
    a, b = head.index("Bneck"), head.index("When")
    for l in screen:
        if l[2:].startswith(name + " ") and len(l) > a:
            return l[a:b].strip()
    return None


def bound_line(lines, prefix):
    return next((l[len(prefix):] for l in lines if l.startswith(prefix)), None)


def main():
    name, path, want, rjson, rtext, wide, narrow = sys.argv[1:8]
    sources = set(sys.argv[8:])
    report = json.load(open(rjson))
    text = open(rtext, encoding="utf-8").read().split("\n")
    screens = {w: [l.rstrip() for l in open(f, encoding="utf-8").read().split("\n")] for w, f in
               (("wide", wide), ("narrow", narrow))}
    row = next((p for p in report["attribution"]["phases"] if p["path"] == path), None)
    if row is None:
        out(False, "%s: %s in the report's attribution" % (name, path), "absent")
        return
    got = row.get("idle_cause")
    leaf = path.rsplit("/", 1)[1]
    if want == "-":
        out(got is None, "%s: no cause beside a %s verdict in JSON" %
            (name, row["bottlenecks"][0]["resource"]), "idle_cause %r" % got)
        first = row["bottlenecks"][0]
        short = {"gpu-mem": "gmem", "single-thread": "1cpu", "software": "sw"}
        keep = "%s %.0f%%" % (short.get(first["resource"], first["resource"]),
                              100 * first["fraction"])
        for w, screen in screens.items():
            col = column(screen, leaf)
            out(col == keep, "%s: Bneck at %s keeps %r" % (name, w, keep), "shows %r" % col)
        return
    exp = expected(report, sources)
    out(exp is not None and exp["cause"] == want,
        "%s: the GPU breakdown's largest cause is %s, as built" % (name, want),
        "breakdown says %r" % (exp and exp["cause"]))
    if exp is None:
        return
    out(got is not None and row["bottlenecks"][0]["resource"] == "software",
        "%s: a software verdict with its cause in JSON" % name,
        "idle_cause %r, first bottleneck %s" % (got, row["bottlenecks"][0]["resource"]))
    for k in ("cause", "ns", "gaps", "idle_ns", "window_ns", "gpus"):
        out(got is not None and got[k] == exp[k],
            "%s: idle_cause.%s is the breakdown's %s" % (name, k, exp[k]),
            "idle_cause %r" % (got and got[k]))
    out(got is not None and abs(got["share"] - exp["share"]) < 1e-9,
        "%s: idle_cause.share is ns over the windows, %.4f" % (name, exp["share"]),
        "idle_cause %r" % (got and got["share"]))
    issues = [u for u in report["top_issues"] if u["kind"] == "idle-gpu" and
              u["path"].startswith(path + "/")]
    top = max(issues, key=lambda u: u["impact_ns"]) if issues else None
    out(top is not None and top["cause"] == exp["cause"] and
        (exp["gpus"] > 1 or top["impact_ns"] == exp["ns"]),
        "%s: the cause is its largest idle-gpu issue's" % name,
        "issue %r" % ((top["cause"], top["impact_ns"]) if top else None,))
    pct = "%.0f%%" % (100 * exp["share"])
    short = SHORT.get(exp["cause"], exp["cause"])
    gpus = "its GPU" if exp["gpus"] == 1 else "its %d GPUs" % exp["gpus"]
    words = "software %.0f%% (%s idled for %s %s of %s window" % (
        100 * row["bottlenecks"][0]["fraction"], gpus, exp["cause"], pct,
        "its" if exp["gpus"] == 1 else "their")
    # the report's Resources section: the phase's line, then its bound-by line
    at = next((i for i, l in enumerate(text) if l == "  " + path), None)
    bound = next((l.strip() for l in text[at + 1:at + 5] if l.strip().startswith("bound by ")),
                 None) if at is not None else None
    out(bound is not None and bound.startswith("bound by " + words),
        "%s: the report's Resources line names the cause: %s" % (name, words),
        "says %r" % bound)
    for w, screen in screens.items():
        width = WIDE_W if w == "wide" else NARROW_W
        want_col = next(s for s in ("idle:%s %s" % (short, pct), "%s %s" % (short, pct), short)
                        if len(s) <= width)
        col = column(screen, leaf)
        out(col == want_col, "%s: Bneck at %s shows %r" % (name, w, want_col), "shows %r" % col)
        pane = bound_line(screen, " bound by  ")
        if w == "wide":
            ok = bound is not None and pane == bound[len("bound by "):] and pane.startswith(words)
        else:
            ok = pane is not None and pane.startswith(words[:60])
        out(ok, "%s: the details pane at %s says the cause and its share" % (name, w),
            "says %r" % pane)


if __name__ == "__main__":
    main()
