#!/usr/bin/env python3
"""The CPU truth cases as nested workflows: the same four windows and the
same sar (tests/truth/cpu/data/sadf.json.gz), described two more ways, so
that the truth suite shows every level of the tree getting the verdict the
flat manifest's steps get.

  nested.otlp.json  an OTLP/JSON export: one root span, "pipeline", over the
                    four windows, each a child span on host.name = the
                    manifest's host (importers/otlp.c makes the root a
                    step and the children spans beneath it)
  nested.jsonl      a workflow manifest whose steps are nested two deep:
                    pipeline -> busy (cores, thread) and wait (disk, sleep)

Each window is the manifest's (workflow.jsonl), unchanged, so the verdicts
are the flat cases', known by construction (expect.py).  Ids are derived
from the names: rerunning writes the same bytes.

Usage: tests/truth/cpu/nested.py [DATA_DIR]   (default: beside this script)
"""
import hashlib
import json
import os
import sys

GROUPS = {"busy": ("cores", "thread"), "wait": ("disk", "sleep")}
ROOT = "pipeline"


def span_id(name, width):
    return hashlib.sha256(name.encode()).hexdigest()[:width]


def otlp(steps, host):
    """The export: ROOT over every step, each step its child."""
    trace = span_id("trace:" + ROOT, 32)

    def span(name, t0, t1, parent=None):
        s = {"traceId": trace, "spanId": span_id(name, 16), "name": name, "kind": 1,
             "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t1),
             "attributes": [{"key": "truth.case", "value": {"stringValue": name}}]}
        if parent:
            s["parentSpanId"] = span_id(parent, 16)
        return s

    spans = [span(ROOT, steps[0]["start_ns"], steps[-1]["end_ns"])]
    spans += [span(s["step"], s["start_ns"], s["end_ns"], ROOT) for s in steps]
    res = {"attributes": [{"key": "host.name", "value": {"stringValue": host}},
                          {"key": "service.name", "value": {"stringValue": ROOT}}]}
    return {"resourceSpans": [{"resource": res, "scopeSpans": [
        {"scope": {"name": "tests/truth/cpu/nested.py"}, "spans": spans}]}]}


def manifest(steps, host):
    """The manifest's lines: ROOT, its groups, their steps."""
    by = {s["step"]: s for s in steps}

    def line(name, members, parent=None):
        d = {"step": name, "start_ns": min(by[m]["start_ns"] for m in members),
             "end_ns": max(by[m]["end_ns"] for m in members), "host": host}
        if parent:
            d["parent"] = parent
        return json.dumps(d)

    out = [line(ROOT, list(by))]
    for group, members in GROUPS.items():
        out.append(line(group, members, ROOT))
        out += [line(m, [m], group) for m in members]
    return "\n".join(out) + "\n"


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data")
    with open(os.path.join(data, "workflow.jsonl")) as f:
        steps = [json.loads(l) for l in f if l.strip()]
    names = sorted(s["step"] for s in steps)
    if names != sorted(m for ms in GROUPS.values() for m in ms):
        sys.exit("nested.py: workflow.jsonl has steps %s, not the four cases" % names)
    host = steps[0]["host"]
    with open(os.path.join(data, "nested.otlp.json"), "w") as f:
        json.dump(otlp(steps, host), f, indent=1)
        f.write("\n")
    with open(os.path.join(data, "nested.jsonl"), "w") as f:
        f.write(manifest(steps, host))


if __name__ == "__main__":
    main()
