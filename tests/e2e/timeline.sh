#!/usr/bin/env bash
# End-to-end test of the timeline's lanes on the project's GPU capture
# (tests/data/gpu, through its import.sh), against the raw Kineto trace
# (tests/e2e/timeline_check.py reads it with Python's json):
#   - on the train step's main thread, each ProfilerStep#N's footer: its
#     duration, and the device operations it launched: the kernels, copies
#     and sets whose correlation id is that of a runtime call the thread
#     made inside the step;
#   - the lanes: the thread's, and one "gpu0 stream N" per stream that work
#     ran on, named as the trace names them;
#   - ] on a step selects its first child, and [ goes back to the step;
#     f fits the window to it (zoom past 1x), 0 shows the whole again.
#
# Prints "ok - NAME", "not ok - NAME (why)", then "N passed, M failed";
# exits 1 when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init timeline
CHECK=$ROOT/tests/e2e/timeline_check.py
e2e_home

e2e_need_bin
DB=$TMP/gpu.db
if ! bash tests/data/gpu/import.sh "$BIN" "$DB" >/dev/null 2>"$TMP/err"; then
	not_ok "import" "$(head -c 300 "$TMP/err")"
	summary
	exit 1
fi

# The thread the train step's profiler steps ran on, its timeline opened
# with the longest step selected (the tree sorts by duration), each step in
# turn (j), dumped at 160x40.
TRAIN=tests/data/gpu/train.pt.trace.json.gz
tid=$(python3 -c 'import gzip, json, sys
ev = json.load(gzip.open(sys.argv[1]))["traceEvents"]
print(next(e["tid"] for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")
           and e.get("cat") == "user_annotation"))' "$TRAIN") || tid=none
goto="type :goto /gpu/train/python3 ($tid) CPU/thread $tid (python3)"
printf '%s\nEnter\nEnter\nt\ndump\nj\ndump\nj\ndump\ng\n]\ndump\n[\nf\ndump\n0\n' "$goto" >"$TMP/k"
if ! "$BIN" --keys "$TMP/k" --dump "$TMP/s.txt" --size 160x40 "$DB" 2>"$TMP/err"; then
	not_ok "timeline" "$(head -c 300 "$TMP/err")"
	summary
	exit 1
fi
if why=$(python3 "$CHECK" steps "$TRAIN" "$TMP/s.txt" "$tid"); then
	ok "each ProfilerStep's duration and device ops launched equal the raw trace's ($why)"
else
	not_ok "ProfilerStep footers" "$why"
fi
if why=$(python3 "$CHECK" lanes "$TRAIN" "$TMP/s.txt" "$tid"); then
	ok "the lanes are the thread and each stream its work ran on ($why)"
else
	not_ok "lanes" "$why"
fi
if why=$(python3 "$CHECK" keys "$TRAIN" "$TMP/s.txt" "$tid"); then
	ok "] selects the step's first child, [ the step again, f fits it ($why)"
else
	not_ok "] [ f" "$why"
fi
summary
