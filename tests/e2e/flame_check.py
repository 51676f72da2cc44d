#!/usr/bin/env python3
"""The flame graph's figures against the raw Kineto trace (json, gzip only).

usage: flame_check.py TRACE.json.gz TID SCREENS.txt HEIGHT MODES
       flame_check.py TRACE.json.gz TID SCREENS.txt HEIGHT callers NAME ROOT

SCREENS.txt holds the explorer's dumps (HEIGHT lines each) of a walk down
the flame graph of thread TID: the first screen has the thread's frame
selected, each next one the widest child of the one before (key j), one
walk per letter of MODES (h: host time, d: device time).  For each screen
the status line's frame (total, self, count, name) is compared with the
same name path computed here: the thread's complete events nested by time
containment, names that differ only in a trailing #N merged, host total
the sum of durations, self a duration less its children's; device time the
GPU work (Kernel, Memcpy, Memset) whose correlation id a runtime call in
the frame's subtree made.  Counts must be equal; times as close as the
status line's digits allow.  The thread's own frame is counted only (its
window is the importer's).  Prints "ok - ..." / "not ok - ..." lines.

With callers, the first screen is the bottom-up list of NAME (host time) in
the flame graph of the thread, whose frame is named ROOT:
its title's path count and total (of the paths not below another NAME),
and each row's total, self and count, against every name path below the
thread that ends in NAME (a row shows the path of its callers, down to
the frame's parent; it may be cut at its start: its end must match one
path, and no two rows the same one).
"""
import collections
import gzip
import json
import re
import sys

GPU_CATS = {'Kernel', 'Memcpy', 'Memset', 'kernel', 'gpu_memcpy', 'gpu_memset'}
UNITS = {'ns': 1, 'us': 1e3, 'ms': 1e6, 's': 1e9}


def merged(name):
    return re.sub(r'#[0-9]+$', '#*', name)


def frames(events, tid):
    """Per name path below the thread: [count, host ns, self ns, device ns]."""
    device = collections.Counter()
    work = collections.defaultdict(list)
    for e in events:
        if e.get('ph') == 'X' and e.get('cat') in GPU_CATS:
            corr = (e.get('args') or {}).get('correlation')
            if corr is not None:
                device[corr] += e['dur'] * 1000
                work[corr].append(e)
    spans = [e for e in events if e.get('ph') == 'X' and str(e.get('tid')) == tid
             and e.get('cat') not in GPU_CATS]
    spans.sort(key=lambda e: (e['ts'], -e['dur']))
    out = collections.defaultdict(lambda: [0, 0, 0, 0])
    stack = []  # (end, path, entry)
    for e in spans:
        while stack and not (e['ts'] + e['dur'] <= stack[-1][0]):
            stack.pop()
        path = (stack[-1][1] if stack else ()) + (merged(e['name']),)
        dur = e['dur'] * 1000
        f = out[path]
        f[0] += 1
        f[1] += dur
        f[2] += dur
        if stack:
            out[stack[-1][1]][2] -= dur
        corr = (e.get('args') or {}).get('correlation')
        if e.get('cat') in ('Runtime', 'cuda_runtime') and corr in device:
            for k in range(1, len(path) + 1):
                out[path[:k]][3] += device[corr]
            for g in work[corr]:  # the device work, a frame under its launch
                w = out[path + (merged(g['name']),)]
                w[0] += 1
                w[3] += g['dur'] * 1000
        stack.append((e['ts'] + e['dur'], path, f))
    return out


def parse_ns(text):
    """'35.9 ms' -> (ns, tolerance ns)."""
    m = re.fullmatch(r'([0-9]+)(?:\.([0-9]+))? (ns|us|ms|s)', text)
    if not m:
        return None, None
    digits = len(m.group(2) or '')
    unit = UNITS[m.group(3)]
    value = float(m.group(1) + '.' + (m.group(2) or '0')) * unit
    return value, 0.5 * unit * 10 ** -digits + 1


STATUS = re.compile(r'total (.+?) \(([0-9.]+)%\)  self (.+?)  count ([0-9]+)  (.*)$')


def check_callers(want, screen, name, root):
    ends = {p: f for p, f in want.items() if p[-1] == merged(name)}
    outer = sum(f[1] for p, f in ends.items() if merged(name) not in p[:-1])
    m = re.match(r'callers of (.*) \(host time\): ([0-9]+) paths?, total (\S+ \S+)'
                 r' \([0-9.]+%\)$', screen[1])
    if not m:
        print(f'error: no callers title: {screen[1]!r}')
        return
    t, tt = parse_ns(m.group(3))
    ok = m.group(1) == name and int(m.group(2)) == len(ends) and t is not None \
        and abs(t - outer) <= tt
    print(f'{"ok" if ok else "not ok"} - callers of {name}: {m.group(2)} paths, total '
          f'{m.group(3)} (trace: {len(ends)} paths, {outer / 1e6:.4f} ms)')
    row = re.compile(r' *([0-9.]+ \S+) +[0-9.]+% +([0-9.]+ \S+) +([0-9]+)  (.*)$')
    seen = set()
    for line in screen[3:-1]:
        r = row.match(line)
        if not r:
            continue
        total, self_, count, shown = r.groups()
        parts = tuple(shown.split(' › '))
        cut = parts[0].startswith('…')
        n = len(parts)
        # a row shows its callers: the path down to the frame's parent
        hits = [p for p in ends if p not in seen and (
            ((root,) + p[:-1] == parts) if not cut else
            (len(p) >= n and ((root,) + p[:-1])[-n + 1:] == parts[1:]
             and ((root,) + p[:-1])[-n].endswith(parts[0][1:].lstrip('› '))))]
        bad = []
        f = None
        for p in hits:
            f = ends[p]
            t, tt = parse_ns(total)
            s, st = parse_ns(self_)
            if int(count) == f[0] and abs(t - f[1]) <= tt and abs(s - f[2]) <= st:
                seen.add(p)
                break
        else:
            bad.append('no path of the trace ends so with these figures')
        print(f'{"not ok" if bad else "ok"} - callers row {shown}: total {total} self {self_} '
              f'count {count}' + (f' ({bad[0]})' if bad else ''))


def main():
    trace, tid, screens, height, modes = sys.argv[1:6]
    height = int(height)
    with gzip.open(trace, 'rt') as f:
        doc = json.load(f)
    events = doc['traceEvents'] if isinstance(doc, dict) else doc
    want = frames(events, tid)
    # frames made of host spans: their device self time is none
    want_ops = {merged(e['name']) for e in events if e.get('ph') == 'X'
                and str(e.get('tid')) == tid and e.get('cat') not in GPU_CATS}
    lines = open(screens, encoding='utf-8').read().split('\n')
    dumps = [lines[i:i + height] for i in range(0, len(lines) - height + 1, height)]
    if modes == 'callers':
        check_callers(want, dumps[0], sys.argv[6], sys.argv[7])
        return
    if len(dumps) >= 2 and dumps[-1] == dumps[-2]:
        dumps.pop()  # the final screen, dumped again after the script
    per_walk = len(dumps) // len(modes)
    if per_walk < 2 or per_walk * len(modes) != len(dumps):
        print(f'error: {len(dumps)} screens for {len(modes)} walks')
        return
    for w, mode in enumerate(modes):
        path = ()
        for depth, screen in enumerate(dumps[w * per_walk:(w + 1) * per_walk]):
            m = STATUS.match(screen[-1])
            what = f'{"host" if mode == "h" else "device"} walk, level {depth}'
            if not m:
                print(f'error: {what}: no frame on the status line: {screen[-1]!r}')
                break
            total, _, self_, count, name = m.groups()
            if depth == 0:
                ok = count == '1'
                print(f'{"ok" if ok else "not ok"} - {what}: the thread, count {count}')
                continue
            path += (name,)
            f = want.get(path)
            if f is None:
                print(f'error: {what}: {" > ".join(path)} is no frame of the trace')
                break
            t, tt = parse_ns(total)
            s, st = parse_ns(self_)
            exp_t = f[1] if mode == 'h' else f[3]
            exp_s = f[2] if mode == 'h' else f[3] if path[-1] not in want_ops else 0
            bad = []
            if int(count) != f[0]:
                bad.append(f'count {count}, trace {f[0]}')
            if t is None or abs(t - exp_t) > tt:
                bad.append(f'total {total}, trace {exp_t / 1e6:.4f} ms')
            if s is None or abs(s - exp_s) > st:
                bad.append(f'self {self_}, trace {exp_s / 1e6:.4f} ms')
            print(f'{"not ok" if bad else "ok"} - {what}: {name}: count {count} total {total} '
                  f'self {self_}' + (f' ({"; ".join(bad)})' if bad else ''))


main()
