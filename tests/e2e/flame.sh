#!/usr/bin/env bash
# The flame graph screen (F, :flame).  First on the bundled demo capture
# (tests/data/demo, imported as `make demo` does): a walk down the training
# thread's widest frames at 80x24 (its profiler steps merged) against
# tests/e2e/flame_check.py, an independent computation from the raw JSON.
# Then on a real Kineto trace with GPU work (../shared/samples, or
# GRADEML_SAMPLES; skipped when absent):
#   - figures: at 200x50, from a CPU thread's frame down its widest child
#     four times, by host time and again by device time (d), each frame's
#     total, self and count on the status line against tests/e2e/
#     flame_check.py, an independent computation from the raw JSON;
#   - the same walk with the figures doctored, where every frame must
#     disagree (the checker can fail);
#   - keys: Enter zooms (the frame across the whole width, its path in the
#     title), h zooms out, :flame opens it as F does;
#   - at 80x24: every screen 80 columns and 24 rows, labels cut with "…",
#     the figures on the status line;
#   - bottom-up at 80x24: `:callers cudaLaunchKernel` (its path count and
#     total, each row's total, self and count) against flame_check.py, then
#     doctored; `c` on a cudaLaunchKernel frame lists the same paths, and q
#     goes back to the graph.
# And on HTA's nccl_data sample (skipped when absent): the profiler's
# bookkeeping makes no frame of rank 0's flame graph.
# Prints "ok - NAME" / "not ok - NAME (why)" / "skip - NAME (why)", then the
# summary; exits 1 when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init flame
e2e_home
PY=$(command -v python3) || PY=python3
CHECK=tests/e2e/flame_check.py
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
TRACE=$SAMPLES/pytorch__kineto__worker0.1623143089861.pt.trace.json.gz
STEP=pytorch__kineto__worker0.1623143089861
PROC="/workflow/$STEP/rank 0/python (25738) CPU"
TID=25772

e2e_need_bin
# run NAME SIZE KEYS...: the explorer on $DB with the key lines given,
# dumps into $TMP/NAME.txt; 0 when it ran
run() {
	e2e_keys "$1" "$2" "$DB" "${@:3}"
}

# lines CMD...: counts the checker's "ok - " / "not ok - " lines; with
# INVERT=1 each is counted the other way round (doctored figures)
lines() {
	local line n=0
	while IFS= read -r line; do
		n=$((n + 1))
		case ${INVERT:-0}:$line in
		0:"ok - "*) ok "${line#ok - }" ;;
		0:"not ok - "*) not_ok "${line#not ok - }" ;;
		1:"ok - "*) not_ok "doctored, yet agrees: ${line#ok - }" ;;
		1:"not ok - "*) ok "doctored, disagrees: ${line#not ok - }" ;;
		*) not_ok "flame_check.py said" "$line" ;;
		esac
	done < <("$PY" "$CHECK" "$@" 2>&1)
	[ "$n" -gt 0 ] || not_ok "flame_check.py printed nothing"
}

walk='dump
j
dump
j
dump
j
dump
j
dump'

# ---- the demo capture, 80x24 ----
DB=$TMP/demo.db
if ! bash tests/data/demo/import.sh "$BIN" "$DB" >/dev/null 2>"$TMP/err"; then
	not_ok "import the demo capture" "$(head -c 300 "$TMP/err")"
elif run demo 80x24 "type :goto /demo/train/process CPU functions/thread 1" Enter F "$walk"; then
	lines tests/data/demo/train.pt.trace.json.gz 1 "$TMP/demo.txt" 24 h
	if grep -q '^total .*  count [0-9]*  ProfilerStep#\*$' "$TMP/demo.txt"; then
		ok "demo: the profiler steps merged into ProfilerStep#*"
	else
		not_ok "demo: the profiler steps merged into ProfilerStep#*"
	fi
fi

# ---- the profiler's bookkeeping gets no width (HTA's nccl_data sample) ----
# rank 0's flame graph at 200x50: Kineto's Spans, Traces and global
# processes (and the PyTorch Profiler span) make no frame, and the widest
# child (j) is work.
NCCL=$SAMPLES/facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz
if [ ! -f "$NCCL" ]; then
	skip "bookkeeping in the flame graph" "no $NCCL (GRADEML_SAMPLES)"
elif ! "$BIN" import -o "$TMP/nccl.db" "$NCCL" >/dev/null 2>"$TMP/err"; then
	not_ok "import $NCCL" "$(head -c 300 "$TMP/err")"
elif DB=$TMP/nccl.db run bookkeeping 200x50 \
	"type :goto /workflow/facebookresearch__HolisticTraceAnalysis__nccl_data/rank 0" Enter F dump j dump; then
	title=$(sed -n 2p "$TMP/bookkeeping.txt")
	if [ "${title%: rank 0}" != "$title" ] &&
		! sed -n 3,49p "$TMP/bookkeeping.txt" | grep -Eq 'Spans|PyTorch Profiler|Traces|global'; then
		ok "bookkeeping: no frame of Spans, Traces, global or PyTorch Profiler in rank 0's flame graph"
	else
		not_ok "bookkeeping: no frame of the profiler's bookkeeping in rank 0's flame graph" \
			"$title: $(sed -n 3,49p "$TMP/bookkeeping.txt" | grep -Eo '[^ ]*(Spans|PyTorch Profiler|Traces|global)[^ ]*' | head -n 3 | tr '\n' ' ')"
	fi
	widest=$(sed -n 100p "$TMP/bookkeeping.txt")
	name=${widest#*count [0-9]*  }
	if [ "$name" != "$widest" ] && [[ ! $name =~ Spans|Traces|global ]]; then
		ok "bookkeeping: rank 0's widest frame is work: $name"
	else
		not_ok "bookkeeping: rank 0's widest frame is work" "$widest"
	fi
fi

if [ ! -f "$TRACE" ]; then
	skip "flame graph on a real trace" "no $TRACE (GRADEML_SAMPLES)"
	summary
	exit 0
fi
DB=$TMP/t.db
if ! "$BIN" import -o "$DB" "$TRACE" >/dev/null 2>"$TMP/err"; then
	not_ok "import $TRACE" "$(head -c 300 "$TMP/err")"
	summary
	exit 1
fi

goto="type :goto $PROC/thread $TID (python)"

# ---- figures at 200x50, host then device ----
if run figures 200x50 "$goto" Enter F "$walk" d 0 g "$walk"; then
	lines "$TRACE" "$TID" "$TMP/figures.txt" 50 hd
	# the same screens with every count one more and every total doubled
	"$PY" - "$TMP/figures.txt" "$TMP/doctored.txt" <<'PYEOF'
import re, sys
text = open(sys.argv[1], encoding='utf-8').read()
def bump(m):
    v = float(m.group(2)) * 2 + 1
    return f'{m.group(1)}{v:.4g} {m.group(3)}'
text = re.sub(r'(total )([0-9.]+) (ns|us|ms|s)', bump, text)
text = re.sub(r'(count )([0-9]+)', lambda m: f'{m.group(1)}{int(m.group(2)) + 1}', text)
open(sys.argv[2], 'w', encoding='utf-8').write(text)
PYEOF
	INVERT=1 lines "$TRACE" "$TID" "$TMP/doctored.txt" 50 hd
fi

# ---- zoom keys and :flame at 200x50 ----
if run zoom 200x50 "$goto" Enter "type :flame" Enter j dump Enter dump h dump; then
	"$PY" - "$TMP/zoom.txt" >"$TMP/zoom.out" <<'PYEOF'
import re, sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
s = [lines[i:i + 50] for i in range(0, 150, 50)]
name = re.search(r'count [0-9]+  (.*)$', s[0][-1]).group(1)
def say(ok, what):
    print(('ok - ' if ok else 'not ok - ') + what)
say(s[0][1].startswith('host time,') and s[0][1].endswith(': thread 25772 (python)'),
    ':flame opens on the selected thread: ' + s[0][1])
say(s[1][1].endswith(' › ' + name) and s[1][2].startswith(name),
    'Enter zooms into ' + name + ': ' + s[1][1])
say(s[1][-1] == s[0][-1], 'the zoomed frame stays selected: ' + s[1][-1])
say(s[2][1] == s[0][1] and s[2][2] == s[0][2], 'h zooms back out: ' + s[2][1])
PYEOF
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		*) not_ok "${line#not ok - }" ;;
		esac
	done <"$TMP/zoom.out"
fi

# ---- 80x24 ----
if run small 80x24 "$goto" Enter F j dump j j dump d dump; then
	"$PY" - "$TMP/small.txt" >"$TMP/small.out" <<'PYEOF'
import re, sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
s = [lines[i:i + 24] for i in range(0, 72, 24)]
def say(ok, what):
    print(('ok - ' if ok else 'not ok - ') + what)
say(len(lines) >= 72 and all(len(l) <= 80 for l in lines), '80x24: three screens, no row past 80 columns')
say(all(re.match(r'total .* self .* count [0-9]+  ', x[-1]) for x in s), '80x24: the figures on the status line')
say(any('…' in row for row in s[0][2:-1]), '80x24: frame labels cut with …')
say(s[2][1].startswith('device time,'), '80x24: d shows device time: ' + s[2][1][:40])
PYEOF
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		*) not_ok "${line#not ok - }" ;;
		esac
	done <"$TMP/small.out"
fi
# ---- bottom-up at 80x24 ----
if run callers 80x24 "$goto" Enter "type :callers cudaLaunchKernel" Enter dump q F j j j j c dump q dump; then
	lines "$TRACE" "$TID" "$TMP/callers.txt" 24 callers cudaLaunchKernel "thread $TID (python)"
	sed -E 's/(total |^ *)([0-9.]+) (ns|us|ms|s)/\1\29 \3/' "$TMP/callers.txt" >"$TMP/callers-doctored.txt"
	INVERT=1 lines "$TRACE" "$TID" "$TMP/callers-doctored.txt" 24 callers cudaLaunchKernel \
		"thread $TID (python)"
	"$PY" - "$TMP/callers.txt" >"$TMP/callers.out" <<'PYEOF'
import sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
s = [lines[i:i + 24] for i in range(0, 72, 24)]
def say(ok, what):
    print(('ok - ' if ok else 'not ok - ') + what)
say(s[1][1].startswith('callers of cudaLaunchKernel (host time): ') and s[1][2:-1] == s[0][2:-1],
    'c on a cudaLaunchKernel frame lists its callers: ' + s[1][1][:50])
say(s[2][1].startswith('host time,') and s[2][-1].endswith('cudaLaunchKernel'),
    'q goes back to the graph, the frame still selected: ' + s[2][-1][:60])
PYEOF
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		*) not_ok "${line#not ok - }" ;;
		esac
	done <"$TMP/callers.out"
fi
summary
