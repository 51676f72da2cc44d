#!/usr/bin/env python3
"""Prints one line per step of the demo capture's workflow.jsonl:
step, host, trace start in microseconds, trace file.  `make demo` imports
each trace under its step, anchored at its recorded start."""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "workflow.jsonl")) as f:
    for line in f:
        if line.strip():
            s = json.loads(line)
            sys.stdout.write("%s %s %d %s\n" % (s["step"], s["host"], s["trace_start_us"], s["trace"]))
