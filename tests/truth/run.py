#!/usr/bin/env python3
"""The truth suite's runner: each case of tests/truth/cases.json imported
into its own trace.db, analysed and reported (grademl-tui import, analyze,
report --format json); the tool's verdict read where the case says and
compared with the verdict known by construction; each figure check of
tests/truth/figures.py run against the workload's own clocks or the raw
trace.

  run.py [--table]   the table `make truth` prints: case, expected verdict,
                     the tool's verdict, agree; then the figures
  run.py --tap       `make check`'s lines (ok / not ok / skip) and summary,
                     then the doctored inputs on which checks must fail

A row marked "pending" (a fix in another branch) is counted skipped in
--tap, with its reason, and shown as it is in the table; a case that
cannot be imported or reported fails, pending or not.  GRADEML_BIN
names the binary (build/grademl-tui); --cases FILE another case list;
--only GLOB some cases.  Exit status 1 when an asserted check fails.
"""
import argparse
import copy
import fnmatch
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import figures  # noqa: E402

TIMEOUT_S = 300


class Failed(Exception):
    """A case that could not be imported or reported: one line."""


# ---- selectors: where a verdict is read in the report ----

def _parts(sel):
    """a.b[x.y=1].c -> ["a", "b[x.y=1]", "c"]: dots outside brackets."""
    parts, cur, depth = [], "", 0
    for ch in sel:
        if ch == "." and not depth:
            parts.append(cur)
            cur = ""
            continue
        depth += {"[": 1, "]": -1}.get(ch, 0)
        cur += ch
    return parts + [cur]


def _match(item, cond):
    """[key=value], [key~glob], [key!=value]: a missing key matches none."""
    m = re.match(r"^([^=~!]+)(=|~|!=)(.*)$", cond)
    if not m or not isinstance(item, dict):
        raise ValueError("bad filter [%s]" % cond)
    v = item.get(m.group(1))
    if v is None:
        return False
    v = v if isinstance(v, str) else json.dumps(v)
    if m.group(2) == "~":
        return fnmatch.fnmatchcase(v, m.group(3))
    return (v == m.group(3)) == (m.group(2) == "=")


def select(doc, sel):
    """The value at sel in doc, None where there is none."""
    sel, _, post = sel.partition("|")
    cur = doc
    for part in _parts(sel):
        name = part.split("[", 1)[0]
        if name:
            cur = cur.get(name) if isinstance(cur, dict) else None
        conds = re.findall(r"\[([^\]]*)\]", part)
        if conds and not isinstance(cur, list):
            cur = None
        elif len(conds) == 1 and conds[0].isdigit():
            cur = cur[int(conds[0])] if int(conds[0]) < len(cur) else None
        elif conds:  # [a=1][b~x*]: the first item that meets them all
            cur = next((x for x in cur if all(_match(x, c) for c in conds)), None)
        if cur is None:
            return None
    if post == "leaf" and isinstance(cur, str):
        cur = cur.rsplit("/", 1)[-1]
    elif post:
        raise ValueError("unknown |%s in %s" % (post, sel))
    return cur


def agrees(expect, got):
    if isinstance(expect, dict) and "glob" in expect:
        return isinstance(got, str) and fnmatch.fnmatchcase(got, expect["glob"])
    if isinstance(expect, dict) and "not" in expect:
        return got is not None and got != expect["not"]
    return got == expect


def show(v, width=44):
    if isinstance(v, dict) and "glob" in v:
        s = "~" + v["glob"]
    elif isinstance(v, dict) and "not" in v:
        s = "not " + str(v["not"])
    else:
        s = "-" if v is None else str(v)
    s = "".join(c if c.isprintable() else "?" for c in s)
    return s if len(s) <= width else s[:width - 3] + "..."


def show_verdict(fields, width):
    return " ".join("%s=%s" % (k, show(v, width)) for k, v in fields.items())


# ---- one case ----

class Context:
    """What a figure check sees: the report, the case's truth.json and its
    record, the raw files' directory, and the tool's query command."""

    def __init__(self, run, case, data, report, db):
        self.run, self.case, self.data, self.report, self.db = run, case, data, report, db
        self.truth = load_truth(data)
        name = case.get("record", case["case"].split("/", 1)[-1])
        self.record = self.truth.get("cases", {}).get(name, {})

    def select(self, sel):
        return select(self.report, sel)

    def query(self, q):
        return json.loads(self.run.tool("query", self.db, q, "--format", "json"))


def load_truth(data):
    path = os.path.join(data, "truth.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def resolve(arg, data, truth):
    def one(m):
        key = m.group(1)
        if key == "data":
            return data
        if key.startswith("t:"):
            v = select(truth, key[2:])
            if v is None:
                raise Failed("truth.json has no %s" % key[2:])
            return str(v)
        raise Failed("unknown placeholder {%s}" % key)

    return re.sub(r"\{([^}]*)\}", one, arg)


class Result:
    def __init__(self, case):
        self.case = case
        self.skip = None  # why the case did not run
        self.error = None  # why it could not be imported or reported
        self.got = {}
        self.agree = None
        self.figures = []  # (spec, Figure, ok) or (spec, None, error)


class Runner:
    def __init__(self, binary, tmp):
        self.bin, self.tmp = binary, tmp

    def tool(self, *args):
        try:
            p = subprocess.run([self.bin] + list(args), capture_output=True, text=True,
                               timeout=TIMEOUT_S, cwd=ROOT)
        except subprocess.TimeoutExpired:
            raise Failed("%s: no answer in %d s" % (args[0], TIMEOUT_S))
        except OSError as e:
            raise Failed("cannot run %s: %s" % (self.bin, e.strerror))
        if p.returncode:
            line = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
            raise Failed("%s: %s" % (args[0], line))
        return p.stdout

    def case(self, case, figure_data=None):
        r = Result(case)
        data = os.path.join(ROOT, case["data"])
        missing = [f for f in case.get("files", []) if not os.path.exists(os.path.join(data, f))]
        if case.get("import") is None or not os.path.isdir(data) or missing:
            r.skip = "no data: %s" % (case.get("note") or os.path.join(
                case["data"], missing[0] if missing else ""))
            return r
        db = os.path.join(self.tmp, re.sub(r"[^A-Za-z0-9]+", "_", case["case"]) + ".db")
        if os.path.exists(db):
            os.unlink(db)
        try:
            truth = load_truth(data)
            for args in case["import"]:
                self.tool("import", "-o", db, *[resolve(a, data, truth) for a in args])
            self.tool("analyze", db)
            report = json.loads(self.tool("report", db, "--format", "json"))
        except (Failed, ValueError) as e:
            r.error = str(e)
            return r
        r.got = {k: select(report, sel) for k, sel in case["read"].items()}
        r.agree = all(agrees(v, r.got.get(k)) for k, v in case["expect"].items())
        ctx = Context(self, case, figure_data or data, report, db)
        for spec in case.get("figures", []):
            try:
                for f in figures.CHECKS[spec["check"]](ctx, spec):
                    ok = (f.tool is not None and f.ref is not None
                          and abs(f.tool - f.ref) <= f.tol_ns)
                    r.figures.append((spec, f, ok))
            except Exception as e:  # a broken check fails its row, not the run
                r.figures.append((spec, None, "%s: %s" % (type(e).__name__, e)))
        return r


# ---- output ----

def ms(ns):
    return "-" if ns is None else "%.3f ms" % (ns / 1e6)


def tap_lines(r):
    """(status, name, why) for one case: status ok, not ok or skip."""
    c = r.case
    pend = c.get("pending")
    name = "truth %s" % c["case"]
    if r.skip:
        return [("skip", name, r.skip)]
    if r.error:  # pending or not: an import or report that fails is never hidden
        return [("not ok", name, r.error)]
    exp, got = show_verdict(c["expect"], 60), show_verdict(r.got, 60)
    out = []
    if pend:
        out.append(("skip", name + " verdict", "pending: %s%s" % (
            pend, "; agrees now: flip it" if r.agree else "; tool says " + got)))
    else:
        out.append(("ok" if r.agree else "not ok", name + " verdict: " + exp,
                    None if r.agree else "tool says " + got))
    for spec, f, ok in r.figures:
        fpend = spec.get("pending")
        if f is None:
            out.append(("skip" if fpend else "not ok", "%s figure %s" % (name, spec["check"]), ok))
            continue
        label = "%s figure: %s (%s vs %s, within %s)" % (name, f.label, ms(f.tool), ms(f.ref),
                                                         ms(f.tol_ns))
        if fpend:
            out.append(("skip", label, "pending: %s%s" % (fpend, "; agrees now: flip it"
                                                          if ok else "")))
        else:
            out.append(("ok" if ok else "not ok", label, None))
    return out


def print_table(results, out):
    rows = [("case", "expected verdict", "the tool's verdict", "agree")]
    notes = []
    for r in results:
        c = r.case
        pend = c.get("pending")
        if r.skip:
            agree, tool = "skip", "-"
            notes.append("%s: skipped, %s" % (c["case"], r.skip))
        elif r.error:
            agree, tool = "no", "error"
            notes.append("%s: %s" % (c["case"], r.error))
        else:
            agree, tool = ("yes" if r.agree else "no"), show_verdict(r.got, 28)
        if pend and not r.skip:
            agree += " (pending)"
            notes.append("%s: pending, %s" % (c["case"], pend))
        rows.append((c["case"], show_verdict(c["expect"], 28), tool, agree))
    w = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        out.write("%-*s  %-*s  %-*s  %s\n" % (w[0], row[0], w[1], row[1], w[2], row[2], row[3]))
    for n in notes:
        out.write("  %s\n" % n)
    frows = [("case", "figure", "tool", "reference", "within", "agree")]
    for r in results:
        for spec, f, ok in r.figures:
            pend = " (pending)" if spec.get("pending") else ""
            if f is None:
                frows.append((r.case["case"], spec["check"], "error", ok, "", "no" + pend))
            else:
                frows.append((r.case["case"], f.label, ms(f.tool), ms(f.ref), ms(f.tol_ns),
                              ("yes" if ok else "no") + pend))
    out.write("\n")
    w = [max(len(row[i]) for row in frows) for i in range(5)]
    for row in frows:
        out.write("%-*s  %-*s  %*s  %*s  %*s  %s\n" % (w[0], row[0], w[1], row[1], w[2], row[2],
                                                      w[3], row[3], w[4], row[4], row[5]))


# ---- doctored inputs: each kind of check must be able to fail ----

def _rewrite_json(path, fn):
    gz = path.endswith(".gz")
    with (gzip.open(path, "rt") if gz else open(path)) as f:
        doc = json.load(f)
    fn(doc)
    with (gzip.open(path, "wt") if gz else open(path, "w")) as f:
        json.dump(doc, f)


def doctored(runner, cases, tmp):
    """(name, Result, predicate on it) for each doctored run; the predicate
    is true when the check failed as it must."""
    by = {c["case"]: c for c in cases}
    out = []

    def copy_data(c, sub):
        d = os.path.join(tmp, sub)
        shutil.copytree(os.path.join(ROOT, c["data"]), d)
        return d

    def fig_failed(*labels):
        """Each label names a figure that must have failed."""
        return lambda r: all(any(f is not None and not ok and f.label.startswith(label)
                                 for _, f, ok in r.figures) for label in labels)

    loader = by.get("torch/loader")
    if loader and os.path.isdir(os.path.join(ROOT, loader["data"])):
        c = copy.deepcopy(loader)
        c["expect"]["phase"] = "aten::addmm"
        out.append(("the loader verdict, expecting aten::addmm, disagrees",
                    runner.case(c), lambda r: r.agree is False))

        d = copy_data(loader, "late-truth")

        def late(t):
            rec = t["cases"]["loader"]
            rec["fetch_end_ns"] = [x + 5000000 for x in rec["fetch_end_ns"]]
            rec["step_end_ns"][-1] += 5000000

        _rewrite_json(os.path.join(d, "truth.json"), late)
        c = copy.deepcopy(loader)
        c["data"] = os.path.relpath(d, ROOT)
        out.append(("loader time, last step and makespan vs a truth.json 5 ms later fail",
                    runner.case(c), fig_failed("DataLoader __next__ total vs truth",
                                               "step 3 duration vs truth",
                                               "critical-path makespan vs truth")))

        d = copy_data(loader, "long-raw")

        def stretch(events):
            for e in events:
                if e["name"].startswith(("enumerate(DataLoader)", "ProfilerStep#2")):
                    e["dur"] = int(e["dur"] * 1.1)

        _rewrite_json(os.path.join(d, loader["files"][0]), stretch)
        out.append(("loader time, what-if and step 2 vs a raw trace 10% longer fail",
                    runner.case(loader, figure_data=d),
                    fig_failed("DataLoader __next__ total vs raw trace", "twice-as-fast",
                               "step 2 duration vs raw trace")))

        d = copy_data(loader, "shifted")
        _rewrite_json(os.path.join(d, "truth.json"), lambda t: t["cases"]["loader"].update(
            trace_start_us=t["cases"]["loader"]["trace_start_us"] + 2000))
        c = copy.deepcopy(loader)
        c["data"] = os.path.relpath(d, ROOT)
        out.append(("step starts vs truth, the trace imported 2 ms late, fail",
                    runner.case(c), fig_failed("step 1 start")))

    item = by.get("torch/item")
    gpu_input = by.get("gpu/input")
    if item and gpu_input and os.path.isdir(os.path.join(ROOT, gpu_input["data"])):
        c = copy.deepcopy(gpu_input)
        c.pop("pending", None)
        c.update(expect=item["expect"], read=item["read"], figures=[])
        out.append(("the .item() verdict (no GPU cause) on an idle-GPU trace disagrees",
                    runner.case(c), lambda r: r.agree is False))

    strag = by.get("gpu/straggler")
    if strag and os.path.isdir(os.path.join(ROOT, strag["data"])):
        d = copy_data(strag, "swapped-waits")

        def swap(t):
            ranks = t["cases"]["straggler"]["ranks"]
            ranks[0]["wait_ms"], ranks[1]["wait_ms"] = ranks[1]["wait_ms"], ranks[0]["wait_ms"]

        _rewrite_json(os.path.join(d, "truth.json"), swap)
        c = copy.deepcopy(strag)
        c["data"] = os.path.relpath(d, ROOT)
        out.append(("raw arrivals vs a truth.json with the waits swapped fail",
                    runner.case(c), fig_failed("raw: rank 0 wait")))

    tstrag = by.get("torch/straggler")
    if tstrag and os.path.isdir(os.path.join(ROOT, tstrag["data"])):
        d = copy_data(tstrag, "swapped-names")
        a, b = (os.path.join(d, "straggler_rank%d.pt.trace.json.gz" % i) for i in (0, 1))
        os.rename(a, a + ".tmp")
        os.rename(b, a)
        os.rename(a + ".tmp", b)
        c = copy.deepcopy(tstrag)
        c["data"] = os.path.relpath(d, ROOT)
        out.append(("the gloo straggler, its traces' file names swapped, disagrees",
                    runner.case(c),
                    lambda r: r.agree is False and fig_failed("rank 0 wait")(r)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tap", action="store_true")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.json"))
    ap.add_argument("--only", default="*")
    a = ap.parse_args()
    binary = os.environ.get("GRADEML_BIN", "build/grademl-tui")
    binary = binary if os.path.isabs(binary) else os.path.join(ROOT, binary)
    with open(a.cases) as f:
        cases = [c for c in json.load(f)["cases"] if fnmatch.fnmatchcase(c["case"], a.only)]
    tmp = tempfile.mkdtemp(prefix="grademl-truth.")
    try:
        runner = Runner(binary, tmp)
        results = [runner.case(c) for c in cases]
        if not a.tap:
            print_table(results, sys.stdout)
            return int(any(s == "not ok" for r in results for s, _, _ in tap_lines(r)))
        n = {"ok": 0, "not ok": 0, "skip": 0}
        for r in results:
            for status, name, why in tap_lines(r):
                n[status] += 1
                print("%s - %s%s" % (status, name, " (%s)" % why if why else ""))
        for name, r, failed in doctored(runner, cases, tmp):
            ok = r.error is None and r.skip is None and failed(r)
            n["ok" if ok else "not ok"] += 1
            print("%s - doctored: %s%s" % ("ok" if ok else "not ok", name,
                                            "" if ok else " (%s)" % (r.error or r.skip or
                                                                     "it passed")))
        line = "%d passed, %d failed" % (n["ok"], n["not ok"])
        print(line + (", %d skipped" % n["skip"] if n["skip"] else ""))
        return int(n["not ok"] > 0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
