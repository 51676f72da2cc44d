#!/usr/bin/env python3
"""How much HTA's rounding of fractional-microsecond times moves its GPU
breakdown: the figures of hta_reference.py computed exactly (what
grademl-tui keeps) and with --hta-rounding (what HTA shows), side by side.

Usage: hta_rounding.py TRACE...

Prints, per trace, one line per figure that is a share of a window: the
temporal breakdown's idle, compute and non-compute shares, and each
stream's idle share, each as

  TRACE FIGURE EXACT% ROUNDED% DIFF

with DIFF the rounded share less the exact one, in percentage points; then
a last line "max |diff| N pp over M figures".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hta_reference import analyse  # noqa: E402


def shares(lines):
    """{figure: share in %} of hta_reference's output lines."""
    out = {}
    for line in lines:
        f = line.split()
        if f[0] not in ("temporal", "stream"):
            continue
        kv = dict(zip(f[1::2], f[2::2])) if f[0] == "temporal" else dict(zip(f[2::2], f[3::2]))
        window = int(kv["window_ns"])
        if window <= 0:
            continue
        where = "gpu" if f[0] == "temporal" else "stream " + f[1]
        parts = ("idle", "compute", "noncompute") if f[0] == "temporal" else ("idle",)
        for k in parts:
            out[f"{where} {k}"] = 100.0 * int(kv[k + "_ns"]) / window
    return out


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    worst, n = 0.0, 0
    for path in argv:
        exact = shares(analyse(path, False, 30000))
        rounded = shares(analyse(path, False, 30000, rounding=True))
        name = os.path.basename(path)
        for fig in sorted(exact):
            if fig not in rounded:
                continue
            d = rounded[fig] - exact[fig]
            worst, n = max(worst, abs(d)), n + 1
            print(f"{name} {fig.replace(' ', '_')} {exact[fig]:.2f} {rounded[fig]:.2f} {d:+.2f}")
    print(f"max |diff| {worst:.2f} pp over {n} figures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
