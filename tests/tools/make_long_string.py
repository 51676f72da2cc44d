#!/usr/bin/env python3
"""Write a small Kineto-like trace with one very long string in it.

usage: make_long_string.py --mb N [--field FIELD] [--escapes] -o OUT

FIELD says where the N-MiB string goes: name (an event's "name", the
default), cat (its "cat"), arg (an args value), key (an args key), thread
(a thread name in a "thread_name" metadata event) or meta (a top-level
key's value, outside traceEvents).  --escapes fills the string with JSON
escapes (\\" and \\u00e9) between its letters, the path the event scanner
leaves to YAJL.  Four more FIELDs put N MiB of something else than one
string in that one event: number (its "ts" is a number of N MiB of
digits), space (N MiB of white space between two of its members),
strings (its args hold strings of just under 1 MiB each, the most of one
that is not cut while streaming) and members (its args hold members of
about 100 bytes each).  Around it are a few ordinary events, so that an
import can check they arrive intact.  OUT ending in .gz is written gzip -1.  The
string is written in pieces, so memory stays small whatever N is.
"""
import argparse
import gzip
import sys

PIECE = 1 << 20


def long_string(out, nbytes, escapes):
    """Writes a JSON string of nbytes bytes of text between its quotes."""
    unit = 'ab\\"cd\\u00e9ef' if escapes else 'abcdefghijklmnopqrstuvwxyz012345'
    piece = unit * (PIECE // len(unit))
    out.write('"')
    left = nbytes
    while left >= len(piece):
        out.write(piece)
        left -= len(piece)
    whole = left // len(unit)
    out.write(unit * whole + 'x' * (left - whole * len(unit)))
    out.write('"')


def chunks(out, text, nbytes):
    """Writes nbytes bytes of text repeated, in pieces."""
    piece = text * (PIECE // len(text))
    left = nbytes
    while left >= len(piece):
        out.write(piece)
        left -= len(piece)
    out.write(piece[:left])


def many_members(out, nbytes, size):
    """Writes args members "sB_K": "ab...", of size bytes each (B and K six
    digits), as many as make nbytes, rounded up."""
    unit = 'abcdefghijklmnopqrstuvwxyz012345'
    n = max(1, size - len('"s000000_000000": "", '))
    body = (unit * (n // len(unit) + 1))[:n]
    per = max(1, PIECE // size)
    block = ''.join('"s@@@@@@_%06d": "%s", ' % (i, body) for i in range(per))
    member = len(block) // per
    left = nbytes
    b = 0
    while left > 0:
        text = block.replace('@@@@@@', '%06d' % b, per)
        text = text[:min(per, (left + member - 1) // member) * member]
        out.write(text)
        left -= len(text)
        b += 1


def event(ts, name, pid=1, tid=1, cat='cpu_op', args='{"External id": 1}'):
    return ('{"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d, '
            '"ts": %d, "dur": 10, "args": %s}' % (cat, name, pid, tid, ts, args))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mb', type=float, required=True)
    ap.add_argument('--field', default='name',
                    choices=['name', 'cat', 'arg', 'key', 'thread', 'meta', 'number',
                             'space', 'strings', 'members'])
    ap.add_argument('--escapes', action='store_true')
    ap.add_argument('-o', dest='out', required=True)
    a = ap.parse_args()
    n = int(a.mb * (1 << 20))
    if a.out.endswith('.gz'):
        out = gzip.open(a.out, 'wt', compresslevel=1, encoding='utf-8')
    else:
        out = open(a.out, 'w', encoding='utf-8')
    w = out.write
    w('{"schemaVersion": 1,\n')
    if a.field == 'meta':
        w('"deviceProperties": ')
        long_string(out, n, a.escapes)
        w(',\n')
    w('"traceEvents": [\n')
    w('{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": ')
    if a.field == 'thread':
        long_string(out, n, a.escapes)
    else:
        w('"main"')
    w('}},\n')
    for i in range(3):
        w(event(1000 + 100 * i, 'before%d' % i) + ',\n')
    w('{"ph": "X", "pid": 1, "tid": 1, "ts": ')
    if a.field == 'number':
        chunks(out, '1234567890', n)
    else:
        w('2000')
    w(',')
    if a.field == 'space':
        chunks(out, ' \n\t\r', n)
    w(' "dur": 50, "cat": ')
    if a.field == 'cat':
        long_string(out, n, a.escapes)
    else:
        w('"cpu_op"')
    w(', "name": ')
    if a.field == 'name':
        long_string(out, n, a.escapes)
    else:
        w('"long"')
    w(', "args": {"External id": 7, ')
    if a.field == 'strings':
        many_members(out, n, (1 << 20) - 16)
    elif a.field == 'members':
        many_members(out, n, 100)
    if a.field == 'key':
        long_string(out, n, a.escapes)
        w(': 1')
    else:
        w('"Long": ')
        if a.field == 'arg':
            long_string(out, n, a.escapes)
        else:
            w('"short"')
    w('}},\n')
    for i in range(3):
        w(event(3000 + 100 * i, 'after%d' % i) + (',\n' if i < 2 else '\n'))
    w(']}\n')
    out.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
