#!/usr/bin/env python3
"""Checks for tests/e2e/units.sh, from the raw files, not trace.db.

  units_check.py metrics DUMP NVSMI_CSV_GZ WORKFLOW_JSONL STEP
      DUMP is the explorer's metrics screen drilled into STEP.  Each row of
      an nvidia-smi series must show, over the step's window (its start_ns
      and end_ns in the manifest), the min, time-weighted mean and max of
      the values that hold there and how many samples those are, computed
      here from the CSV with grademl-tui's rule for how long a sample holds
      (model/store/sample.h: an instant holds until the next sample, at
      most 3 periods; the period is the lower median spacing of the first
      1025 samples; the last holds one period).  A figure matches when it
      is within half a unit of its last printed digit of the exact value,
      in the unit it is printed in (MiB read as bytes in decimal units).
      The Name header must say over which step the figures are.

  units_check.py sar DUMP SADF_JSON_GZ WORKFLOW_JSONL STEP
      The same for sysstat's CPU series (cpu-load: usr, sys, idle, ... of
      "all" on device cpu, of CPU N on cpuN): sar stamps a sample at the end
      of its interval, so the value holds from timestamp - interval, for
      at most 1.5 periods (an interval mean; model/store/sample.h).

  units_check.py query TABLE CSV COLUMN...
      TABLE and CSV are one query's output as a table and as CSV.  The CSV
      must have a unit column beside each COLUMN (a metric's value): "unit",
      or "X.unit" for "X.mean"; each table cell of COLUMN must be the CSV's
      raw number written in that unit (decimal bytes for MiB and kB, "%"
      after the number, any other unit after a blank), and not a bare
      number where the unit is not empty.

Prints "ok - NAME" / "not ok - NAME (why)" lines.
"""
import csv
import datetime
import gzip
import json
import re
import sys

BYTE_UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def ns_of(stamp):
    d = datetime.datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f")
    d = d.replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 10**9 + d.microsecond * 1000


def read_nvsmi(path):
    """{metric name: (unit, [(t_ns, value)])} for the numeric columns."""
    with gzip.open(path, "rt") as f:
        rows = [line.rstrip("\n").split(", ") for line in f if line.strip()]
    head = rows[0]
    out = {}
    for c, h in enumerate(head):
        m = re.match(r"^([\w.]+)(?: \[(.*)\])?$", h.strip())
        name, unit = m.group(1), m.group(2) or ""
        if name.startswith("temperature."):
            unit = "C"  # nvidia-smi --help-query-gpu: degrees C, no brackets
        if name in ("timestamp", "index", "name", "pci.bus_id", "pstate"):
            continue
        series = []
        for r in rows[1:]:
            v = r[c].strip()
            if unit and v.endswith(" " + unit):
                v = v[: -len(unit) - 1]
            series.append((ns_of(r[0]), float(v)))
        out[name] = (unit, series)
    return out


def read_sar(path):
    """{(device, field): [(t_ns, value)]} of cpu-load, t at the interval's start."""
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    out = {}
    for st in doc["sysstat"]["hosts"][0]["statistics"]:
        ts = st["timestamp"]
        d = datetime.datetime.strptime(ts["date"] + " " + ts["time"], "%Y-%m-%d %H:%M:%S")
        d = d.replace(tzinfo=datetime.timezone.utc)
        t = (int(d.timestamp()) - ts["interval"]) * 10**9
        for cpu in st.get("cpu-load", []):
            dev = "cpu" if cpu["cpu"] == "all" else "cpu" + cpu["cpu"]
            for k, v in cpu.items():
                if k != "cpu":
                    out.setdefault((dev, k), []).append((t, float(v)))
    return out


def window_figures(series, t0, t1, mean_kind=False):
    """min, time-weighted mean, max and count of the values that hold in [t0, t1)."""
    ts = [t for t, _ in series]
    d = sorted(b - a for a, b in zip(ts[:1025], ts[1:1025]) if b > a)
    period = d[(len(d) - 1) // 2]
    hold = period + period // 2 if mean_kind else 3 * period
    vals, area, cov = [], 0, 0
    for i, (t, v) in enumerate(series):
        until = t + period if i + 1 == len(series) else min(ts[i + 1], t + hold)
        if until <= t or until <= t0 or t >= t1:
            continue
        part = min(until, t1) - max(t, t0)
        vals.append(v)
        area += v * part
        cov += part
    return min(vals), area / cov, max(vals), len(vals)


def parse_shown(text):
    """'2.2 GB' -> (2.2, 'GB', half of its last digit); '0.749%' -> (0.749, '%', 0.0005)."""
    m = re.match(r"^(-?[0-9]+(?:\.([0-9]+))?)\s*(\S*)$", text.strip())
    if not m:
        return None
    decimals = len(m.group(2) or "")
    return float(m.group(1)), m.group(3), 0.5 * 10**-decimals


def matches(shown, exact, unit):
    p = parse_shown(shown)
    if not p:
        return False
    num, sunit, half = p
    if unit in ("MiB", "kB"):
        if sunit not in BYTE_UNITS:
            return False
        exact = exact * {"MiB": 1048576, "kB": 1000}[unit] / BYTE_UNITS[sunit]
    elif sunit != unit:
        return False
    return abs(num - exact) <= half * (1 + 1e-9) + 1e-9


def cmd_metrics(dump, data, manifest, step, sar=False):
    steps = {}
    with open(manifest) as f:
        for line in f:
            j = json.loads(line)
            steps[j["step"]] = (j["start_ns"], j["end_ns"])
    t0, t1 = steps[step]
    series = read_sar(data) if sar else read_nvsmi(data)
    lines = open(dump, encoding="utf-8").read().split("\n")
    header = lines[1]
    want = "Name (figures over %s)" % step
    forms = (want, "Name (over %s)" % step, "Over %s" % step)
    if any(header.startswith(f) for f in forms):
        print("ok - the header names the step %s" % step)
    else:
        print("not ok - the header names the step %s (%r)" % (step, header[:40]))
    seen = 0
    for line in lines[2:]:
        cells = re.split(r"\s{2,}", line.strip())
        key = (cells[1], cells[0]) if sar and len(cells) > 1 else cells[0]
        if len(cells) < 7 or key not in series:
            continue
        name = "%s %s" % key if sar else cells[0]
        unit, s = ("%", series[key]) if sar else series[key]
        lo, mean, hi, count = window_figures(s, t0, t1, sar)
        shown = cells[3:7]
        good = (
            matches(shown[0], lo, unit)
            and matches(shown[1], mean, unit)
            and matches(shown[2], hi, unit)
            and shown[3] == str(count)
        )
        what = "%s over %s: min %s mean %s max %s samples %s" % (
            name, step, *shown)
        if good:
            print("ok - " + what)
        else:
            print("not ok - %s (from the CSV: %.6g %.6g %.6g %d %s)" %
                  (what, lo, mean, hi, count, unit))
        seen += 1
    if seen < 8:
        print("not ok - %s: rows of nvidia-smi series on the screen (%d)" % (step, seen))


def unit_of(col):
    return col.rsplit(".", 1)[0] + ".unit" if "." in col else "unit"


def cmd_query(table, csvfile, columns):
    name = table.rsplit("/", 1)[-1]
    with open(csvfile, newline="") as f:
        rows = list(csv.DictReader(f))
    lines = [l for l in open(table, encoding="utf-8").read().split("\n") if l.strip()]
    head = re.split(r"\s{2,}", lines[0].strip())
    body = [re.split(r"\s{2,}", l.strip()) for l in lines[1:-1]]
    if len(body) != len(rows) or not rows:
        print("not ok - %s: table and CSV rows (%d, %d)" % (name, len(body), len(rows)))
        return
    for col in columns:
        ucol = unit_of(col)
        if ucol not in rows[0]:
            print("not ok - %s: a %s column beside %s in the CSV (%s)" %
                  (name, ucol, col, ",".join(rows[0])))
            continue
        c = head.index(col)
        bad = []
        for cells, row in zip(body, rows):
            raw, unit = row[col], row[ucol]
            if raw == "":
                continue
            if not matches(cells[c], float(raw), unit):
                bad.append("%s for %s %s" % (cells[c], raw, unit))
        if bad:
            print("not ok - %s: %s in its unit (%s)" % (name, col, "; ".join(bad[:3])))
        else:
            print("ok - %s: %s in its unit, %d rows (%s)" %
                  (name, col, len(rows), body[0][c]))


def main():
    if len(sys.argv) == 6 and sys.argv[1] in ("metrics", "sar"):
        cmd_metrics(*sys.argv[2:], sar=sys.argv[1] == "sar")
    elif len(sys.argv) >= 5 and sys.argv[1] == "query":
        cmd_query(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit("usage: units_check.py metrics DUMP NVSMI_CSV_GZ WORKFLOW_JSONL STEP\n"
                 "       units_check.py sar DUMP SADF_JSON_GZ WORKFLOW_JSONL STEP\n"
                 "       units_check.py query TABLE CSV COLUMN...")


if __name__ == "__main__":
    main()
