#!/usr/bin/env python3
"""Checks `grademl-tui export` against the trace.db it read and against
the trace.db that importing its output made, with nothing but sqlite3 and
the JSON itself.

    export_check.py ORIG.db OUT.json[.gz] REIMPORTED.db

Prints one line per check, "ok NAME" or "not ok NAME<TAB>WHY"; exits 0.

What is compared:
  json       the file loads (gzip when it ends in .gz), numbers read as
             decimals so that no time is rounded;
  perfetto   the shape Perfetto's JSON importer and chrome://tracing take
             (the Trace Event Format): {"traceEvents":[...]} first; every
             event opens with "ph" then "ts" (Perfetto's tokenizer reads ts
             by scanning the keys in order and cannot pass an array or a
             \\u escape before it), ts and dur non-negative microseconds
             with at most three decimals; pids and tids unsigned 32-bit
             integers, each named by process_name / thread_name metadata;
             flows as "s"/"f" pairs of one id and category, "f" binding its
             enclosing slice ("bp":"e"); counters with numeric args only;
             the complete events of each thread nest, but for the children
             that end after their parent that the import repaired (the
             original's OVERLAP count) - what a viewer would cut;
  phases     every phase of the original but the ones a process or thread
             stands for (rank, process, thread, stream and the tracks'
             nodes) comes back once with its name, start and duration
             exactly, its kind where a Chrome category can say it (the
             others read back as operators; the profiler's trace span, kind
             profiler, as the span its category Trace says: its pid, now a
             number, no longer says it is bookkeeping), and its parent: the same
             phase (by name and times) or, where the original parent is a
             node of the structure, a node of the structure;
  tracks     the phases of one original track share one track of the
             re-import, named as the original (an annotation lane's name
             gains " annotations" when read back);
  edges      each edge between written phases comes back between the same
             two phases, launches as launches, fwd-bwd as fwd-bwd, the rest
             as flows;
  events     the instants, with their times, names and bound phases;
  samples    as many series and the same (time, value) samples.
"""
import collections
import decimal
import gzip
import json
import re
import sqlite3
import sys

STRUCT = {"rank", "process", "thread", "stream"}
# the profiler's bookkeeping: a node of the structure where it has no track
# (a process node), else an event
REPRESENTABLE = {"operator", "profiler_step", "annotation", "runtime", "kernel", "memcpy",
                 "memset", "gpu_annotation", "span"}
results = []


def check(name, ok, why=""):
    results.append((name, ok, why))


def connect(path):
    return sqlite3.connect("file:" + path + "?mode=ro", uri=True)


def phases(db, reimport):
    """id -> (kind, name, start, dur, parent, track) of the written phases,
    and the ids of everything else (the structure)."""
    c = connect(db)
    nodes = {r[0] for r in c.execute("SELECT phase_id FROM tracks WHERE phase_id IS NOT NULL")}
    rows = c.execute("SELECT p.id, p.kind, p.name, p.start_ns, p.dur_ns, p.parent_id,"
                     " p.track_id, s.format = 'chrome' FROM phases_v p"
                     " LEFT JOIN sources s ON s.id = p.source_id").fetchall()
    written, structure = {}, set()
    for i, kind, name, start, dur, parent, track, chrome in rows:
        # the import's own workflow and step hold the file: the original's
        # come back as operators
        scaffold = reimport and kind in ("workflow", "step")
        if kind in STRUCT or i in nodes or scaffold or (kind == "profiler" and not track):
            structure.add(i)
        else:
            written[i] = (kind, name, start, dur, parent, track, chrome)
    c.close()
    return written, structure


def key(p):
    return (p[1], p[2], p[3])


def main():
    orig_db, out, re_db = sys.argv[1:4]
    opener = gzip.open if out.endswith(".gz") else open
    with opener(out, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw, parse_float=decimal.Decimal)
        check("json", True)
    except ValueError as e:
        check("json", False, str(e))
        return
    check_shape(raw.decode("utf-8"), doc, orig_db)

    ow, ost = phases(orig_db, False)
    rw, rst = phases(re_db, True)
    check("phases: as many", len(ow) == len(rw), "%d written, %d read back" % (len(ow), len(rw)))
    ok_keys = collections.Counter(map(key, ow.values())) == collections.Counter(map(key, rw.values()))
    missing = collections.Counter(map(key, ow.values())) - collections.Counter(map(key, rw.values()))
    check("phases: names, starts and durations exact", ok_keys,
          "e.g. %s" % (list(missing)[:3],))

    # kinds and parents, compared by the phases' (name, start, duration)
    def parent_key(table, st, p):
        par = p[4]
        if par is None or par in st:
            return "structure"
        return key(table[par]) if par in table else "missing"

    # a Chrome trace's phases nest by time on their threads and under their
    # launches: they come back with their parents; other phases may have
    # theirs elsewhere (a Spark task's stage) and come back with the
    # structure above them instead
    want, loose, got = collections.Counter(), set(), collections.Counter()
    for p in ow.values():
        kind = p[0] if p[0] in REPRESENTABLE else "span" if p[0] == "profiler" else "operator"
        if kind == "profiler_step" and not p[1].startswith("ProfilerStep#"):
            kind = "operator"
        entry = (key(p), kind, parent_key(ow, ost, p))
        want[entry] += 1
        if not p[6]:
            loose.add(entry)
    for p in rw.values():
        got[(key(p), p[0], parent_key(rw, rst, p))] += 1
    missing, extra = want - got, got - want
    for entry in list(missing):
        if entry in loose:
            alt = (entry[0], entry[1], "structure")
            n = min(missing[entry], extra[alt])
            missing[entry] -= n
            extra[alt] -= n
    missing, extra = +missing, +extra
    check("phases: kinds and parents", not missing and not extra,
          "e.g. wanted %s, got %s" % (list(missing.items())[:2], list(extra.items())[:2]))

    # tracks: each original track's phases on tracks of its own back, of
    # its name (a lane past the first: "NAME (2)")
    oc, rc = connect(orig_db), connect(re_db)
    otn = dict(oc.execute("SELECT id, name FROM tracks"))
    rtn = {i: re.sub(r" annotations$", "", n) if k == "annotation" else n
           for i, n, k in rc.execute("SELECT id, name, kind FROM tracks")}
    by_key = collections.defaultdict(list)
    for p in rw.values():
        by_key[key(p)].append(p[5])
    seen = collections.defaultdict(set)
    for p in ow.values():
        back = by_key.get(key(p), [])
        if p[5] is not None and p[0] not in ("workflow", "step") and len(back) == 1:
            seen[p[5]].update(back)
    owner = collections.Counter(b for back in seen.values() for b in back)
    bad = [(otn[t], sorted(rtn.get(b, "?") for b in back)) for t, back in seen.items()
           if any(owner[b] > 1 or not re.fullmatch(re.escape(otn[t]) + r"( \(\d+\))?",
                                                     rtn.get(b, "?")) for b in back)]
    check("tracks", not bad, "e.g. %s" % (bad[:3],))

    # edges between written phases, by their ends' keys
    def edges(c, table):
        names = {2: "launch", 3: "fwd-bwd"}
        n = collections.Counter()
        for s, d, k in c.execute("SELECT src, dst, kind FROM edges"):
            if s in table and d in table:
                n[(key(table[s]), key(table[d]), names.get(k, "flow"))] += 1
        return n
    oe, re_ = edges(oc, ow), edges(rc, rw)
    check("edges", oe == re_, "%d written, %d read back; e.g. %s"
          % (sum(oe.values()), sum(re_.values()), list((oe - re_).items())[:2]))

    def events(c, table):
        n = collections.Counter()
        for t, name, ph in c.execute("SELECT t_ns, name, phase_id FROM events_v"):
            n[(t, name, key(table[ph]) if ph in table else None)] += 1
        return n
    oev, rev = events(oc, ow), events(rc, rw)
    check("events", oev == rev, "%d written, %d read back; e.g. %s"
          % (sum(oev.values()), sum(rev.values()), list((oev - rev).items())[:2]))

    om = oc.execute("SELECT count(*) FROM metrics").fetchone()[0]
    rm = rc.execute("SELECT count(*) FROM metrics").fetchone()[0]
    os_ = collections.Counter(oc.execute("SELECT t_ns, value FROM samples"))
    rs = collections.Counter(rc.execute("SELECT t_ns, value FROM samples"))
    check("samples", om == rm and os_ == rs, "%d series and %d samples written, %d and %d read"
          " back" % (om, sum(os_.values()), rm, sum(rs.values())))
    overlaps = lambda c: c.execute("SELECT coalesce(sum(count), 0) FROM diagnostics"
                                   " WHERE code = 'OVERLAP'").fetchone()[0]
    check("overlaps repaired alike", overlaps(oc) == overlaps(rc),
          "%d in the original, %d read back" % (overlaps(oc), overlaps(rc)))


EVENT_HEAD = re.compile(r'\{"ph":"([XisfCM])","ts":(\d+(?:\.\d{1,3})?)[,}]')


def ns(v):
    return int(decimal.Decimal(v) * 1000)


def check_shape(text, doc, orig_db):
    lines = text.split("\n")
    check("perfetto: traceEvents first", text.startswith('{"traceEvents":['),
          repr(text[:40]))
    heads = [EVENT_HEAD.match(l.lstrip(",")) for l in lines[1:-2]]
    bad = [l for l, h in zip(lines[1:-2], heads) if not h]
    check("perfetto: each event opens with ph then ts", not bad and len(heads) ==
          len(doc["traceEvents"]), "e.g. %r" % (bad[:1],))
    check("perfetto: baseTimeNanoseconds", isinstance(doc.get("baseTimeNanoseconds"), int))
    u32 = lambda v: isinstance(v, int) and 0 <= v < 2 ** 32
    procs, threads, used_p, used_t = set(), set(), set(), set()
    flows = collections.defaultdict(list)
    problems = []
    slices = collections.defaultdict(list)
    for n, e in enumerate(doc["traceEvents"]):
        ph = e.get("ph")
        if not u32(e.get("pid")):
            problems.append(("pid", e))
            continue
        if ph == "M":
            a = e.get("args", {})
            if e["name"] == "process_name" and isinstance(a.get("name"), str):
                procs.add(e["pid"])
            elif e["name"] == "process_sort_index" and isinstance(a.get("sort_index"), int):
                pass
            elif e["name"] == "thread_name" and isinstance(a.get("name"), str) and u32(e.get("tid")):
                threads.add((e["pid"], e["tid"]))
            else:
                problems.append(("metadata", e))
            continue
        used_p.add(e["pid"])
        if ph == "C":
            a = e.get("args")
            if not isinstance(e.get("name"), str) or not isinstance(a, dict) or not a or \
               not all(isinstance(v, (int, decimal.Decimal)) for v in a.values()):
                problems.append(("counter", e))
            continue
        if not u32(e.get("tid")):
            problems.append(("tid", e))
            continue
        used_t.add((e["pid"], e["tid"]))
        if ph == "X":
            if not isinstance(e.get("name"), str) or ns(e.get("dur", -1)) < 0 or \
               not isinstance(e.get("args", {}), dict):
                problems.append(("complete", e))
            slices[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["dur"]), n))
        elif ph in "sf":
            if not isinstance(e.get("id"), int) or e.get("cat") != e.get("name") or \
               (ph == "f") != (e.get("bp") == "e"):
                problems.append(("flow", e))
            flows[(e.get("cat"), e.get("id"))].append(ph)
        elif ph == "i" and e.get("s") not in ("t", "p", "g"):
            problems.append(("instant", e))
    check("perfetto: events well formed", not problems, "e.g. %s" % (problems[:1],))
    check("perfetto: every process and thread named", used_p <= procs and used_t <= threads,
          "unnamed: %s" % (sorted((used_p - procs) | {t[0] for t in used_t - threads})[:5],))
    lone = [k for k, v in flows.items() if sorted(v) != ["f", "s"]]
    check("perfetto: flows paired", not lone, "e.g. %s" % (lone[:3],))
    # each thread's complete events, nested as a viewer nests them
    crossings = 0
    for evs in slices.values():
        evs.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack = []  # (end, nest end)
        for start, dur, _ in evs:
            end = start + dur
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][0]:
                crossings += 1
            stack.append((end, min(end, stack[-1][1]) if stack else end))
    c = connect(orig_db)
    overlaps = c.execute("SELECT coalesce(sum(count), 0) FROM diagnostics"
                         " WHERE code = 'OVERLAP'").fetchone()[0]
    c.close()
    check("perfetto: slices nest", crossings == overlaps,
          "%d cross their parent; the original's import repaired %d" % (crossings, overlaps))


if __name__ == "__main__":
    main()
    for name, ok, why in results:
        print("ok %s" % name if ok else "not ok %s\t%s" % (name, why))
