#!/usr/bin/env python3
"""Build a large Kineto trace by replicating a real sample.

usage: make_big_trace.py [--sample FILE] [--mb N | --copies K] -o OUT

The output is one JSON object: the sample's top-level keys (schemaVersion,
deviceProperties, distributedInfo, ...) and a "traceEvents" array holding the
sample's events K times, K chosen so the file reaches N MiB.  Copy k is
shifted in time by k * (sample span + 1 ms); its correlation, External id,
flow id and Python id values are offset by k * (largest id + 1) so that links
stay unique and still pair up.  Metadata events (ph "M") appear once.

One event per line, with json.dumps' default separators ("key": value), as
Kineto writes them.  Each copy is built from templates serialized once (the
static text between the numbers that move), so memory stays at the sample's
size whatever N is, and 1 GiB takes seconds.
"""
import argparse
import decimal
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SAMPLES = [
    os.path.join(ROOT, '..', 'shared', 'samples', 'chrome-trace',
                 'facebookresearch__HolisticTraceAnalysis__df_index_resolver.json.gz'),
    os.path.join(ROOT, 'tests', 'data', 'demo', 'train.pt.trace.json.gz'),
]

# Top-level event fields and args fields whose integer values are link ids.
ID_FIELDS = ('id', 'bind_id')
ID_ARGS = ('External id', 'correlation', 'Python id', 'Python parent id')
MARK = '\x00slot\x00'


class Num(float):
    """A float that remembers its text, so a moved timestamp keeps its digits."""
    __slots__ = ('text',)


def parse_float(s):
    f = Num(s)
    f.text = s
    return f


def open_sample(path):
    with open(path, 'rb') as f:
        head = f.read(4)
    if head[:2] == b'\x1f\x8b':
        return gzip.open(path, 'rt', encoding='utf-8')
    if head == b'\x28\xb5\x2f\xfd':
        import subprocess
        out = subprocess.run(['zstd', '-dc', path], check=True, stdout=subprocess.PIPE).stdout
        import io
        return io.StringIO(out.decode('utf-8'))
    return open(path, 'r', encoding='utf-8')


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def ts_base(v):
    """A timestamp as something that adds an integer shift exactly."""
    if isinstance(v, Num):
        return decimal.Decimal(v.text)
    if is_int(v):
        return v
    return None


def build_templates(events):
    """Returns (parts, kinds, bases, span_us, id_stride, meta_text).

    parts alternates static text and slots: parts[1::2] are the slots, whose
    values are bases[i] + shift for kinds[i] == 0 (time) or + id offset for
    kinds[i] == 1 (id)."""
    tmin, tmax, idmax = None, None, 0
    for e in events:
        if e.get('ph') == 'M':
            continue
        t = ts_base(e.get('ts'))
        if t is None:
            continue
        d = ts_base(e.get('dur'))
        end = t + d if d is not None and d > 0 else t
        tmin = t if tmin is None or t < tmin else tmin
        tmax = end if tmax is None or end > tmax else tmax
        for k in ID_FIELDS:
            if is_int(e.get(k)):
                idmax = max(idmax, e[k])
        a = e.get('args')
        if isinstance(a, dict):
            for k in ID_ARGS:
                if is_int(a.get(k)):
                    idmax = max(idmax, a[k])
    if tmin is None:
        sys.exit('make_big_trace: the sample has no timed events')
    span = int(decimal.Decimal(tmax - tmin).to_integral_value(decimal.ROUND_CEILING))

    parts, kinds, bases, meta = [], [], [], []
    text = []  # static text accumulated since the last slot

    def slot(kind, base):
        parts.append(''.join(text))
        text.clear()
        parts.append(None)
        kinds.append(kind)
        bases.append(base)

    for e in events:
        if e.get('ph') == 'M':
            meta.append(json.dumps(e, ensure_ascii=False))
            continue
        # Replace each moving value with a mark, serialize once, split there.
        e = dict(e)
        t = ts_base(e.get('ts'))
        order = []
        if t is not None:
            e['ts'] = MARK
            order.append(('ts', 0, t))
        for k in ID_FIELDS:
            if is_int(e.get(k)):
                order.append((k, 1, e[k]))
                e[k] = MARK
        a = e.get('args')
        if isinstance(a, dict):
            a = dict(a)
            for k in ID_ARGS:
                if is_int(a.get(k)):
                    order.append(('args.' + k, 1, a[k]))
                    a[k] = MARK
            e['args'] = a
        s = json.dumps(e, ensure_ascii=False)
        pieces = s.split(json.dumps(MARK))
        # json.dumps keeps dict order; marks appear in key order, so map them
        # back by walking the dict the same way.
        seq = []
        for k, v in e.items():
            if v == MARK:
                seq.append(k)
            elif k == 'args' and isinstance(v, dict):
                seq.extend('args.' + ak for ak, av in v.items() if av == MARK)
        by_name = {name: (kind, base) for name, kind, base in order}
        moved = [by_name[name] for name in seq]  # in the order of the marks
        if len(pieces) != len(moved) + 1:
            sys.exit('make_big_trace: a string in the sample equals the internal mark')
        text.append('  ')
        for piece, (kind, base) in zip(pieces, moved):
            text.append(piece)
            slot(kind, base)
        text.append(pieces[-1])
        text.append(',\n')
    parts.append(''.join(text))
    return parts, kinds, bases, span, idmax + 1, meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sample', help='Kineto trace to replicate (plain or .gz)')
    ap.add_argument('--mb', type=float, default=1024, help='target size in MiB (default 1024)')
    ap.add_argument('--copies', type=int, help='exactly this many whole copies (overrides --mb)')
    ap.add_argument('-o', '--output', required=True, help='output file ("-" for stdout)')
    args = ap.parse_args()

    sample = args.sample
    if not sample:
        sample = next((p for p in DEFAULT_SAMPLES if os.path.exists(p)), None)
        if not sample:
            sys.exit('make_big_trace: no sample found; pass --sample FILE')
    with open_sample(sample) as f:
        doc = json.load(f, parse_float=parse_float)
    if isinstance(doc, list):
        doc = {'traceEvents': doc}
    events = doc.pop('traceEvents', None)
    if not isinstance(events, list) or not events:
        sys.exit('make_big_trace: %s has no traceEvents' % sample)

    parts, kinds, bases, span, id_stride, meta = build_templates(events)
    per_copy = len(events) - len(meta)
    del events
    ts_idx = [i for i, k in enumerate(kinds) if k == 0]
    id_idx = [i for i, k in enumerate(kinds) if k == 1]
    ts_bases = [bases[i] for i in ts_idx]
    id_bases = [bases[i] for i in id_idx]
    del kinds, bases
    step = span + 1000  # µs: the sample's span plus 1 ms between copies

    target = int(args.mb * 1048576) if not args.copies else None
    out = sys.stdout.buffer if args.output == '-' else open(args.output, 'wb')
    head = {k: v for k, v in doc.items() if k != 'traceName'}
    head.setdefault('schemaVersion', 1)
    w = ['{\n']
    for k, v in head.items():
        w.append('  %s: %s,\n' % (json.dumps(k), json.dumps(v, ensure_ascii=False)))
    w.append('  "traceEvents": [\n')
    for m in meta:
        w.append('  %s,\n' % m)
    written = out.write(''.join(w).encode('utf-8'))

    nslots = len(ts_idx) + len(id_idx)
    copies = 0
    tail_comma = len(',\n')
    while True:
        shift, off = copies * step, copies * id_stride
        vals = [None] * nslots
        for i, b in zip(ts_idx, ts_bases):
            vals[i] = str(b + shift)
        for i, b in zip(id_idx, id_bases):
            vals[i] = str(b + off)
        parts[1::2] = vals
        chunk = ''.join(parts).encode('utf-8')
        copies += 1
        if target is None:
            last = copies >= args.copies
            if last:
                chunk = chunk[:-tail_comma] + b'\n'
        else:
            last = written + len(chunk) >= target
        if last and target is not None:
            # Stop at the first event boundary past the target; every event
            # is one line, so ",\n" only occurs between events.
            cut = chunk.find(b',\n', max(0, target - written - tail_comma))
            chunk = chunk[:cut if cut >= 0 else len(chunk) - tail_comma] + b'\n'
        written += out.write(chunk)
        if last:
            break
    tail = '  ]'
    if 'traceName' in doc:
        tail += ',\n  "traceName": %s' % json.dumps(doc['traceName'], ensure_ascii=False)
    tail += '\n}\n'
    written += out.write(tail.encode('utf-8'))
    if out is not sys.stdout.buffer:
        out.close()
    print('make_big_trace: %s: %d bytes, %d copies of %d events from %s (+ %d metadata), '
          'span %d us per copy' % (args.output, written, copies, per_copy,
                                   os.path.basename(sample), len(meta), span), file=sys.stderr)


if __name__ == '__main__':
    main()
