#!/usr/bin/env python3
"""`grademl-tui report --hta --format json` against HTA 0.6.1's figures
computed straight from the raw trace by tests/tools/hta_reference.py --hta.

Usage: hta_exact.py TRACE REPORT.json TRACE.db

Prints nothing and exits 0 when every figure is equal; else prints the
first lines that differ (reference, then report) and exits 1.  The report's
figures are written in the reference's lines: the rank's counts, the
temporal breakdown, each kernel type's union and each mix of types, the
overlap, each stream's temporal breakdown and idle split (a stream named
by its process and its work's `stream` argument, read from trace.db's
tracks), and the top kernels.
"""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from hta_reference import TYPES, WAITS, analyse  # noqa: E402


def stream_keys(db, ids):
    """{track id: "PID:STREAM"} as the reference names a stream."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    out = {}
    for i in ids:
        row = con.execute(
            "SELECT t.pid || ':' || coalesce((SELECT json_extract(p.attrs, '$.stream')"
            " FROM phases p WHERE p.track_id = t.id AND json_valid(p.attrs)"
            " AND json_type(p.attrs, '$.stream') = 'integer' LIMIT 1), t.tid)"
            " FROM tracks t WHERE t.id = ?", (i,)).fetchone()
        out[i] = row[0] if row else "?"
    con.close()
    return out


def report_lines(g, keys):
    rank = g["rank"] if g["rank"] is not None else -1
    lines = [f"rank {rank} items {g['items']} left_out {g['left_out']}",
             "temporal window_ns %d idle_ns %d compute_ns %d noncompute_ns %d"
             % (g["window_ns"], g["idle_ns"], g["compute_ns"], g["noncompute_ns"])]
    for t in TYPES:
        lines.append(f"type {t} ns {g['kernel_type_ns'][t]}")
    for mask in range(1, 1 << len(TYPES)):
        key = "+".join(t for k, t in enumerate(TYPES) if mask >> k & 1)
        if g["kernel_type_mix_ns"][key]:
            lines.append(f"mix {mask} ns {g['kernel_type_mix_ns'][key]}")
    lines.append(f"overlap comm_ns {g['comm_ns']} overlap_ns {g['overlap_ns']}")
    for s in sorted(g["streams"], key=lambda s: keys[s["track_id"]]):
        k = keys[s["track_id"]]
        lines.append(f"stream {k} items {s['items']} window_ns {s['window_ns']}"
                     f" idle_ns {s['idle_ns']} compute_ns {s['compute_ns']}"
                     f" noncompute_ns {s['noncompute_ns']}")
        for w in WAITS:
            b = s["idle_breakdown"][w]
            lines.append(f"idle {k} {w} ns {b['ns']} count {b['count']}")
    for x in g["top_kernels"]:
        lines.append(f"kernel {x['type']} names {x['names']} count {x['count']}"
                     f" sum_ns {x['sum_ns']} min_ns {x['min_ns']} max_ns {x['max_ns']}"
                     f" {x['name']}")
    return lines


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    trace, report, db = argv
    want = analyse(trace, False, 30000, rounding=True, hta_cutoff=True)
    gpu = json.load(open(report))["gpu_breakdown"]
    if not gpu:
        got = [] if want[0].split()[3] == "0" and want[0].split()[5] == "0" else ["(none)"]
        want = [] if not got else want[:1]
    elif len(gpu) != 1 or any(g["figures"] != "hta-0.6.1" for g in gpu):
        print("want one rank of HTA's figures, got %d (%s)"
              % (len(gpu), ", ".join(g["figures"] for g in gpu)))
        return 1
    else:
        got = report_lines(gpu[0], stream_keys(db, [s["track_id"] for s in gpu[0]["streams"]]))
    # a stream's lines sort by its name; the rest keep the reference's order
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            print(f"line {i + 1}: reference {a!r}, report {b!r}")
            return 1
    if len(want) != len(got):
        print(f"{len(want)} reference lines, {len(got)} report lines")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
