#!/usr/bin/env python3
"""Makes a real Chrome trace into what a tracer killed mid-run leaves, for
tests/e2e/lenient.sh, and counts what an import of it must keep.

  cut_trace.py cut TRACE OUT CLOSED
      OUT: TRACE's text cut inside an event about three fifths into its
      traceEvents array, just after that event's "ph"; CLOSED: the same
      text with the cut event left out and the array and document closed.
      Prints "BYTES LINE WANT": OUT's size, the line of its last byte, and
      the duration events (X, B, b) in it, the cut one included (the
      importer keeps every complete one or counts it dropped, and counts
      the cut one dropped).
  cut_trace.py array TRACE OUT
      OUT: TRACE's events in the JSON Array Format, each with a comma before
      its closing brace and after it, and no closing ']'.  Prints
      "EVENTS WANT": the events, and the duration events among them.
"""
import gzip
import json
import re
import sys


def text_of(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def is_duration(e):
    return isinstance(e, dict) and e.get("ph") in ("X", "B", "b")


def elements(t):
    """The traceEvents array's elements: (start, end, value) each."""
    m = re.search(r'"traceEvents"\s*:\s*\[', t)
    pos = m.end() if m else t.index("[") + 1
    dec = json.JSONDecoder()
    out = []
    ws = re.compile(r"[ \t\r\n]*")
    while True:
        pos = ws.match(t, pos).end()
        if t[pos] == "]":
            return out
        value, end = dec.raw_decode(t, pos)
        out.append((pos, end, value))
        pos = ws.match(t, end).end()
        if t[pos] == ",":
            pos += 1


def cut(path, out, closed):
    t = text_of(path)
    els = elements(t)
    k = len(els) * 3 // 5
    while not is_duration(els[k][2]):
        k += 1
    start, end, _ = els[k]
    ph = re.compile(r'"ph"\s*:\s*"[^"]*"').search(t, start, end)
    at = ph.end() + 3  # inside the key or value after "ph"
    assert at < end
    with open(out, "w", encoding="utf-8") as f:
        f.write(t[:at])
    head = t[:start].rstrip(" \t\r\n")
    assert head.endswith(",")
    tail = "]" + ("}" if t.lstrip().startswith("{") else "")
    with open(closed, "w", encoding="utf-8") as f:
        f.write(head[:-1] + tail)
    n = len(t[:at].encode("utf-8"))
    line = t[: at - 1].count("\n") + 1
    want = sum(1 for s, e, v in els[:k] if is_duration(v)) + 1
    print(n, line, want)


def array(path, out):
    doc = json.loads(text_of(path))
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    with open(out, "w", encoding="utf-8") as f:
        f.write("[\n")
        for e in events:
            s = json.dumps(e)
            if isinstance(e, dict) and e:
                s = s[:-1] + ", }"
            f.write(s + ",\n")
    print(len(events), sum(1 for e in events if is_duration(e)))


if __name__ == "__main__":
    if sys.argv[1] == "cut":
        cut(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        array(sys.argv[2], sys.argv[3])
