#!/usr/bin/env bash
# What `grademl-tui import` ($GRADEML_BIN) prints, on the GPU capture in
# tests/data/gpu:
#
#   a. to a pipe, a whole trace: nothing on stdout or stderr;
#   b. to a pipe, the trace cut inside an event (tests/e2e/cut_trace.py):
#      one line on stderr, naming the file and TRUNCATED, and still
#      nothing on stdout;
#   c. on a terminal of 80 columns (tests/e2e/import_out.py), the trace fed
#      through a named pipe in two halves with a pause between: progress
#      lines while it waits (its name, bytes, events read, rate), each
#      drawn over the last and none wider than the terminal, erased at the
#      end; then one closing line whose phases, events, samples and
#      diagnostics are what trace.db holds of the import;
#   d. on a terminal, the two DDP ranks and the cut trace in one import:
#      the TRUNCATED line, then a closing line for 3 files whose figures
#      are trace.db's; any progress line of a file on disk says its size.
#
# Prints "ok - NAME" / "not ok - NAME (why)", then a summary; exits 1 when
# any check failed.  Needs: bash, python3, mkfifo.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-import-out
e2e_need_bin
e2e_need_tools python3 mkfifo
e2e_home
GPU=tests/data/gpu
PTY=tests/e2e/import_out.py

# figures DB: "PHASES EVENTS SAMPLES DIAGNOSTICS" of every source in DB.
figures() {
	python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
p, e, s = c.execute("SELECT sum(phases), sum(events), sum(samples) FROM sources").fetchone()
d = c.execute("SELECT count(*) FROM diagnostics").fetchone()[0]
print(p, e, s, d)' "$1"
}

# closing OUT: "FILES PHASES EVENTS SAMPLES DIAGNOSTICS" of the closing line
# in a terminal's output OUT, or nothing when it has none.
closing() {
	python3 -c 'import re, sys
t = open(sys.argv[1], encoding="utf-8", newline="").read().replace("\r\n", "\n")
m = re.search(r"\nimported (\d+) files? into \S+: (\d+) phases, (\d+) events, (\d+) samples, (\d+) diagnostics?, in [0-9.]+ [mun]?s\n$", "\n" + t.split("\x1b[K")[-1])
print(*m.groups()) if m else None' "$1"
}

# a. a whole trace to a pipe
rm -f "$TMP/a.db"
if "$BIN" import -o "$TMP/a.db" "$GPU/train.pt.trace.json.gz" >"$TMP/a.out" 2>"$TMP/a.err" &&
	[ ! -s "$TMP/a.out" ] && [ ! -s "$TMP/a.err" ]; then
	ok "a: to a pipe, a whole trace imports without a word"
else
	not_ok "a: to a pipe, a whole trace imports without a word" "$(head -c 200 "$TMP/a.err")"
fi

# b. the trace cut inside an event, to a pipe
cut=$TMP/cut.json
if ! read -r bytes _ _ < <(python3 tests/e2e/cut_trace.py cut "$GPU/train.pt.trace.json.gz" "$cut" "$TMP/closed.json"); then
	not_ok "b: cut_trace.py cuts the trace"
else
	rm -f "$TMP/b.db"
	"$BIN" import -o "$TMP/b.db" "$cut" >"$TMP/b.out" 2>"$TMP/b.err"
	rc=$?
	if [ "$rc" = 0 ] && [ ! -s "$TMP/b.out" ] && [ "$(wc -l <"$TMP/b.err")" = 1 ] &&
		grep -q "^grademl-tui import: $cut: TRUNCATED: .*input ends at byte $bytes " "$TMP/b.err"; then
		ok "b: to a pipe, a trace cut at byte $bytes says TRUNCATED in one line on stderr"
	else
		not_ok "b: to a pipe, a trace cut at byte $bytes says TRUNCATED in one line on stderr" "exit $rc, $(head -c 300 "$TMP/b.err")"
	fi
fi

# c. on a terminal, the trace waiting half-way in a named pipe
fifo=$TMP/train.json
mkfifo "$fifo"
gzip -dc "$GPU/train.pt.trace.json.gz" >"$TMP/train-plain.json"
rm -f "$TMP/c.db"
if ! python3 "$PTY" 80 "$TMP/c.out" --fifo "$TMP/train-plain.json" "$BIN" import -o "$TMP/c.db" "$fifo"; then
	not_ok "c: on a terminal, import through a named pipe" "$(head -c 300 "$TMP/c.out")"
else
	if python3 - "$TMP/c.out" <<'PY'; then
import re, sys
t = open(sys.argv[1], encoding="utf-8", newline="").read()
# every progress line: "\r" LINE ESC[K, drawn over the last one
lines = re.findall(r"\r([^\r\n\x1b]*)\x1b\[K", t)
shown = [l for l in lines if l]
assert shown, "no progress line: " + repr(t[:200])
assert all(len(l) < 80 for l in shown), max(map(len, shown))
line = re.compile(r"^importing train\.json: [0-9.]+ [kKMGT]?B, (\d+) events read, [0-9.]+ [kKMGT]?B/s$")
last = re.compile(r"^importing: checking, indexing, committing, \d+ events read, \S+ \S+$")
bad = [l for l in shown if not line.match(l) and not last.match(l)]
assert not bad, bad[0]
# waiting half-way: some events read, not all, the same count twice
counts = [int(line.match(l).group(1)) for l in shown if line.match(l)]
assert max(counts) > 0, counts
assert any(a == b for a, b in zip(counts, counts[1:])), counts
# erased before the closing line, which is the last thing printed
assert lines[-1] == "" and t.rstrip("\r\n").rfind("\x1b[K") < t.rfind("imported"), repr(t[-300:])
PY
		ok "c: on a terminal, progress lines while the import waits, drawn in place within 80 columns, then erased"
	else
		not_ok "c: on a terminal, progress lines while the import waits, drawn in place within 80 columns, then erased" "$(tr '\r\033' '|~' <"$TMP/c.out" | head -c 300)"
	fi
	want="1 $(figures "$TMP/c.db")" got=$(closing "$TMP/c.out")
	if [ "$got" = "$want" ]; then
		ok "c: the closing line's files, phases, events, samples, diagnostics are trace.db's: $got"
	else
		not_ok "c: the closing line's figures" "'$got', trace.db holds '$want'"
	fi
fi

# d. on a terminal, three files, one cut
rm -f "$TMP/d.db"
if ! python3 "$PTY" 80 "$TMP/d.out" "$BIN" import -o "$TMP/d.db" "$GPU"/ddp_rank*.pt.trace.json.gz "$cut"; then
	not_ok "d: on a terminal, three files import" "$(head -c 300 "$TMP/d.out")"
else
	want="3 $(figures "$TMP/d.db")" got=$(closing "$TMP/d.out")
	if [ "$got" = "$want" ] && grep -q "grademl-tui import: $cut: TRUNCATED: " "$TMP/d.out"; then
		ok "d: on a terminal, the TRUNCATED line, then the closing line with trace.db's figures: $got"
	else
		not_ok "d: on a terminal, the TRUNCATED line and the closing line" "'$got', trace.db holds '$want'"
	fi
	if python3 - "$TMP/d.out" <<'PY'; then
import re, sys
t = open(sys.argv[1], encoding="utf-8", newline="").read()
shown = [l for l in re.findall(r"\r([^\r\n\x1b]*)\x1b\[K", t) if l.startswith("importing ")]
# at 80 columns a long name leaves out the parts after the share, first
# the file's number and the rate
ok = re.compile(r"^importing \S+( \[[123]/3\])?: [0-9.]+ [kKMGT]?B of [0-9.]+ [kKMGT]?B \(\d+%\)(, \d+ events read)?(, [0-9.]+ [kKMGT]?B/s)?(, \S+ \S+ left)?$|^importing: checking, indexing, committing, \d+ events read, \S+ \S+$")
bad = [l for l in shown if not ok.match(l)]
assert not bad, bad[0]
assert all(len(l) < 80 for l in shown), max(map(len, shown))
PY
		ok "d: any progress line of a file on disk says its size and share"
	else
		not_ok "d: any progress line of a file on disk says its size and share" "$(tr '\r\033' '|~' <"$TMP/d.out" | head -c 300)"
	fi
fi

summary
