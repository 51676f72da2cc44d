#!/usr/bin/env python3
"""Write a Chrome trace of deeply nested operators with long names.

usage: make_deep_names.py --depth D --leaves L [--name-bytes B] [--same-name]
                          [--escape] [--scale K] -o OUT

D complete events ("cpu_op") nest one in the next on one thread, each with
a name of its own of B bytes (65536 by default, the longest a trace string
is kept whole), or all with the same one (--same-name); with --escape each
long name ends in an escape sequence (ESC [31m).  L short-named operators
("leaf_N") sit side by side in the innermost one; one short operator
("other") runs on a second thread, so that the explorer opens on the two
threads, not down the chain.  Every duration is multiplied by K (1 by
default), so that two files written with different K differ in every
total.  The diff compares operators by their name path, so each leaf's
path holds every long name above it: 100 x 64 KiB above 500 leaves is
6.5 MB of trace whose paths, joined, are 3.2 GB.  Written one event at a
time, so memory stays small whatever D and L are.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, required=True)
    ap.add_argument("--leaves", type=int, required=True)
    ap.add_argument("--name-bytes", type=int, default=65536)
    ap.add_argument("--same-name", action="store_true")
    ap.add_argument("--escape", action="store_true")
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("-o", dest="out", required=True)
    a = ap.parse_args()
    inner = 2 * a.leaves + 2  # the innermost operator's span, in us
    with open(a.out, "w") as out:
        out.write('{"traceEvents": [\n')
        out.write('{"ph": "X", "cat": "cpu_op", "name": "other", "pid": 1, "tid": 2, '
                  '"ts": 1000, "dur": %d},\n' % a.scale)
        for level in range(a.depth):
            tag = "level%d:" % (0 if a.same_name else level)
            end = "\x1b[31m" if a.escape else ""
            name = tag + "n" * max(0, a.name_bytes - len(tag) - len(end)) + end
            dur = (inner + 2 * (a.depth - 1 - level)) * a.scale
            out.write('{"ph": "X", "cat": "cpu_op", "name": %s, "pid": 1, "tid": 1, '
                      '"ts": %d, "dur": %d},\n' % (json.dumps(name), 1000 + level * a.scale, dur))
        t0 = 1000 + a.depth * a.scale
        for k in range(a.leaves):
            sep = "," if k + 1 < a.leaves else ""
            out.write('{"ph": "X", "cat": "cpu_op", "name": "leaf_%d", "pid": 1, "tid": 1, '
                      '"ts": %d, "dur": %d}%s\n' % (k, t0 + (2 * k + 1) * a.scale, a.scale, sep))
        out.write("]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
