#!/usr/bin/env python3
"""Counts the duration events of a Chrome trace the way the issue defines
completeness: every 'X', every 'B' and every async 'b' must end up either as
a phase in trace.db or as a drop counted in diagnostics.  Prints the count."""
import gzip
import json
import sys


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return json.loads(f.read().decode("utf-8", "replace"))


doc = load(sys.argv[1])
events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
print(sum(1 for e in events if isinstance(e, dict) and e.get("ph") in ("X", "B", "b")))
