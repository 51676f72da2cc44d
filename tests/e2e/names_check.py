#!/usr/bin/env python3
"""Checks for tests/e2e/names.sh: how the explorer and the report show
names, against `summary kernels --format json` and the raw Kineto trace.

  names_check.py table SCREENS.txt HEIGHT WIDTH KERNELS.json [WHERE]
  names_check.py whole SCREENS.txt HEIGHT KERNELS.json ROW
  names_check.py callers SCREENS.txt TRACE.json.gz KERNELS.json ROW
  names_check.py tty OUTPUT.txt WHAT
  names_check.py report REPORT.txt TRACE.json.gz

Prints one "ok - ..." or "not ok - ..." line per check.
"""
import collections
import gzip
import json
import re
import sys


def screens(path, height):
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    lines += [''] * (height - len(lines))  # capture-pane may leave the last blank
    return [lines[i:i + height] for i in range(0, len(lines) - height + 1, height)]


def say(ok, what, why=''):
    print(f'{"ok" if ok else "not ok"} - {what}' + ('' if ok or not why else f' ({why})'))


def table(path, height, width, kernels, where=''):
    rows = json.load(open(kernels))
    width_s = f'{where + ": " if where else ""}{width}'  # tmux or headless
    nrows = 0
    twins, cxx, widths = [], [], []
    for s in screens(path, height):
        head = s[2]
        end = head.find(' type ')
        if end < 0:
            continue
        widths.append((end - 1, len(head.rstrip())))
        shown = [line[1:end].rstrip() for line in s[3:height - 1] if line[1:end].strip()]
        count = collections.Counter(shown)
        twins += [n for n, k in count.items() if k > 1]
        cxx += [n for n in shown if n.startswith('void ') or ')(' in n]
        nrows += len(shown)
    say(widths and not twins and (nrows >= len(rows) or where),
        f'{width_s}x{height}: no two rows of a screen of the {len(rows)} kernels of train read '
        f'alike ({len(widths)} screens, {nrows} rows)', f'alike: {twins[:3]}')
    say(widths and not cxx, f'{width_s}x{height}: no row shows a return type or parameters',
        f'{cxx[:2]}')
    if width >= 200 and widths:
        name_w, used = widths[0]
        say(name_w > 40 and used >= width - 10,
            f'{width_s}x{height}: the name column takes the free width ({name_w} columns, '
            f'the table {used} of {width})', 'the name column stays at 40 or the table '
            'leaves the right of the screen empty')


def whole(path, height, kernels, row):
    want = json.load(open(kernels))[row]['name']
    s = screens(path, height)[-1]
    at = [i for i, line in enumerate(s) if line.strip().startswith('whole name (w hides')]
    if not at:
        say(False, f'w: a whole-name pane', 'none on the screen')
        return
    body = s[at[0] + 1:height - 1]
    width = 200  # names.sh runs w at 200 columns
    text = ''.join(line[1:].ljust(width - 2) for line in body[:-1]) + body[-1][1:] \
        if body else ''
    text = text.rstrip()
    say(text == want, f'w: the pane shows row {row}\'s whole name ({len(want)} characters) '
        'as summary kernels gives it', f'shown {text[:80]!r}...')


def load_events(trace):
    with gzip.open(trace, 'rt') as f:
        doc = json.load(f)
    return doc['traceEvents'] if isinstance(doc, dict) else doc


def launchers(events, name):
    """(innermost host op, runtime call) of each instance of kernel name,
    by the runtime call that has its correlation id."""
    evs = [e for e in events if e.get('ph') == 'X']
    kern = [e for e in evs if e.get('cat') == 'kernel' and e.get('name') == name]
    runtime = {}
    for e in evs:
        if e.get('cat') in ('cuda_runtime', 'cuda_driver'):
            runtime[e.get('args', {}).get('correlation')] = e
    ops = collections.defaultdict(list)
    for e in evs:
        if e.get('cat') in ('cpu_op', 'user_annotation'):
            ops[(e['pid'], e['tid'])].append(e)
    out = collections.Counter()
    for k in kern:
        r = runtime.get(k.get('args', {}).get('correlation'))
        if not r:
            out[('?', '?')] += 1
            continue
        t = float(r['ts'])
        inside = [o for o in ops[(r['pid'], r['tid'])]
                  if float(o['ts']) <= t and t <= float(o['ts']) + float(o.get('dur', 0))]
        op = min(inside, key=lambda o: float(o.get('dur', 0)))['name'] if inside else '?'
        out[(re.sub(r'#[0-9]+$', '#*', op), r['name'])] += 1
    return out


def callers(path, trace, kernels, row):
    k = json.load(open(kernels))[row]
    s = screens(path, 50)[-1]
    m = re.match(r'callers of (.*) \(device time\): ([0-9]+) paths?', s[1])
    if not m:
        say(False, f'c on kernel row {row}: a callers list', f'title {s[1][:80]!r}')
        return
    rowre = re.compile(r' *[0-9.]+ \S+ +[0-9.]+% +[0-9.]+ \S+ +([0-9]+)  (.*)$')
    shown = collections.Counter()
    own = []
    for line in s[3:-1]:
        r = rowre.match(line)
        if not r:
            continue
        parts = r.group(2).split(' › ')
        shown[tuple(parts[-2:])] += int(r.group(1))
        if 'TrivialOffsetCalculator' in line or k['name'][:60] in line:
            own.append(line.strip()[:60])
    want = launchers(load_events(trace), k['name'])
    say(shown == want and sum(shown.values()) == k['count'] and not own,
        f'c on kernel row {row} ({m.group(1)[:50]}): its callers, operator and launch '
        f'{dict(want)}, {k["count"]} instances, as the raw trace\'s correlation ids have them',
        f'shown {dict(shown)}' + (f'; rows show its own signature: {own[0]!r}' if own else ''))


def tty(path, what):
    lines = open(path, encoding='utf-8').read().split('\n')
    rows = [line[:line.find('  ')] if '  ' in line else line for line in lines[1:]
            if line and not line.startswith('(')]
    alike = [n for n, k in collections.Counter(rows).items() if k > 1]
    cxx = [n for n in rows if n.startswith('void ')]
    say(len(rows) > 10 and not alike and not cxx,
        f'{what} on a terminal: {len(rows)} kernel names, all different, no return type',
        f'alike {alike[:2]}, with a return type {cxx[:2]}')


def report(path, trace):
    text = open(path, encoding='utf-8').read()
    names = {e['name'] for e in load_events(trace)
             if e.get('cat') == 'kernel' and len(e.get('name', '')) > 100}
    whole = [n for n in names if n in text]
    say(names and not whole, f'report: none of the {len(names)} kernel signatures past 100 '
        'characters appears whole', f'{len(whole)} do: {sorted(whole)[0][:80] if whole else ""}')
    lines, section = [], ''
    for line in text.split('\n'):
        if line and not line.startswith(' '):
            section = line
        if section.startswith('Critical path') or 'top kernel' in line:
            lines.append(line)
    longest = max((len(line) for line in lines), default=0)
    say(lines and longest <= 400, f'report: critical path and top kernel lines at most 400 '
        f'columns (the longest {longest})', f'{longest} columns')


def main():
    mode = sys.argv[1]
    if mode == 'table':
        table(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], *sys.argv[6:])
    elif mode == 'whole':
        whole(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
    elif mode == 'callers':
        callers(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif mode == 'tty':
        tty(sys.argv[2], sys.argv[3])
    elif mode == 'report':
        report(sys.argv[2], sys.argv[3])


main()
