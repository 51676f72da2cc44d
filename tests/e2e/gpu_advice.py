#!/usr/bin/env python3
"""Checks a report's GPU-bound verdict against its own GPU breakdown, for
tests/e2e/gpu_advice.sh.

    gpu_advice.py REPORT.txt REPORT.json EXPECT

The first bottleneck issue that says the GPU (or accelerator) was busy
must quote its device work's kernel types as the GPU breakdown's "kernels:"
line words them (two sections, one quantity), and advise for the largest
kernel type: EXPECT is comp, comm, or a JSON object {"COMPUTATION": ns,
"COMMUNICATION": ns} the trace was made with (then kernel_type_ns must
equal it, and the advice follow the larger).  Exits 1 with the reason.
"""
import json
import re
import sys

ADVICE = {"COMPUTATION": "faster kernels", "COMMUNICATION": "less or overlapped communication",
          "MEMORY": "fewer, larger copies", "OTHER": "fewer synchronisations"}


def main(argv):
    text = open(argv[1]).read()
    report = json.load(open(argv[2]))
    expect = argv[3]
    issue = next((i for i in report["top_issues"] if i["kind"] == "bottleneck"
                  and re.search(r"(GPU|accelerator) was busy", i["explanation"])), None)
    if issue is None:
        sys.exit("no GPU-bound bottleneck issue")
    why = issue["explanation"]
    quoted = re.search(r"\(its device work by HTA's kernel types: ([^)]*)\)", why)
    line = re.search(r"^\s+kernels: ([^;\n]*)", text, re.M)
    if not quoted or not line:
        sys.exit("the verdict quotes no kernel figures, or the breakdown has none: %r" % why)
    if quoted.group(1) != line.group(1):
        sys.exit("verdict '%s' but breakdown '%s'" % (quoted.group(1), line.group(1)))
    types = report["gpu_breakdown"][0]["kernel_type_ns"]
    if isinstance(types, list):
        types = dict(types)
    if expect.startswith("{"):
        want = json.loads(expect)
        for k, v in want.items():
            if types.get(k) != v:
                sys.exit("%s %s ns, made with %s" % (k, types.get(k), v))
    top = max(types, key=lambda k: types[k])
    named = {"comp": "COMPUTATION", "comm": "COMMUNICATION"}.get(expect)
    if named and top != named:
        sys.exit("largest type %s, expected %s" % (top, named))
    if ADVICE[top] not in why or any(a in why for k, a in ADVICE.items() if k != top):
        sys.exit("largest type %s, yet the advice reads: %r" % (top, why))
    print("%s; advice for %s" % (quoted.group(1), top))


if __name__ == "__main__":
    main(sys.argv)
