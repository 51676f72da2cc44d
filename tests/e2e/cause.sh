#!/usr/bin/env bash
# The cause where the verdict is, end to end: on the GPU workloads of
# tests/truth/gpu, imported as tests/truth/cases.json imports them, the
# report (JSON and text) and the explorer (headless, 200x50 and 80x23, the
# phase selected by :goto with the details pane open) are read by
# tests/e2e/cause_check.py, which holds them to the report's own GPU
# breakdown (checked against the raw traces by tests/e2e/idle.sh):
#
#   a. input, sync and launch: the step is software-bound and its Bneck
#      column, details pane, report Resources line and JSON idle_cause name
#      the cause each workload was built to have, with its share of the
#      GPU's window; input from the analyses computed in memory and again
#      from the file's cache (`grademl-tui analyze`);
#   b. the gloo straggler: rank 0 (software-bound, waiting in the
#      collectives) names communication; rank 1 and the step, GPU-bound,
#      keep their verdict, as does the compute workload's step.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)" per
# check, then the summary; exits 1 when any check failed.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init cause
e2e_need_bin
e2e_need_tools python3
export HOME=$TMP/home XDG_STATE_HOME=$TMP/state
mkdir -p "$HOME"
TRUTH=$ROOT/tests/truth/gpu/data

if [ ! -r "$TRUTH/truth.json" ]; then
	skip "the GPU truth workloads" "no $TRUTH/truth.json"
	summary
	exit
fi
host=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["host"])' \
	"$TRUTH/truth.json")

# imported NAME STEP FILE...: a fresh DB for NAME, FILEs under
# /gpu-truth/STEP; its path.
imported() {
	local name=$1 step=$2
	shift 2
	if ! "$BIN" import -o "$TMP/$name.db" --workflow gpu-truth --step "$step" \
		--host "$host" "$@" >/dev/null 2>"$TMP/err"; then
		not_ok "$name: import" "$(head -c 300 "$TMP/err")"
		return 1
	fi
	echo "$TMP/$name.db"
}

# checked NAME DB PATH CAUSE SOURCE...: report and screens of DB read by
# cause_check.py for the phase at PATH.
checked() {
	local name=$1 db=$2 path=$3 cause=$4 size
	shift 4
	if ! "$BIN" report --format json "$db" >"$TMP/$name.json" 2>"$TMP/err" ||
		! "$BIN" report "$db" >"$TMP/$name.txt" 2>>"$TMP/err"; then
		not_ok "$name: report" "$(head -c 300 "$TMP/err")"
		return
	fi
	printf 'type :goto %s\nEnter\nd\n' "$path" >"$TMP/$name.keys"
	for size in 200x50 80x23; do
		if ! timeout 60 "$BIN" --keys "$TMP/$name.keys" --dump "$TMP/$name.$size" \
			--size "$size" "$db" >/dev/null 2>"$TMP/err"; then
			not_ok "$name: explorer at $size" "$(head -c 300 "$TMP/err")"
			return
		fi
	done
	relay "$name: cause_check.py" < <(python3 tests/e2e/cause_check.py "$name" "$path" \
		"$cause" "$TMP/$name.json" "$TMP/$name.txt" "$TMP/$name.200x50" \
		"$TMP/$name.80x23" "$@" 2>&1)
}

# a. one cause each, by construction
for case in input sync launch; do
	db=$(imported "$case" "$case" "$TRUTH/$case.pt.trace.json.gz") || continue
	checked "$case" "$db" "/gpu-truth/$case" "$case" "$case.pt.trace.json.gz"
done
if [ -r "$TMP/input.db" ]; then
	if "$BIN" analyze "$TMP/input.db" >/dev/null 2>"$TMP/err"; then
		checked "input, cached" "$TMP/input.db" /gpu-truth/input input input.pt.trace.json.gz
	else
		not_ok "input: analyze" "$(head -c 300 "$TMP/err")"
	fi
fi

# b. two ranks on one step, and a GPU-bound step
r0=straggler_rank0.pt.trace.json.gz r1=straggler_rank1.pt.trace.json.gz
if db=$(imported straggler straggler "$TRUTH/$r0" "$TRUTH/$r1"); then
	checked "straggler rank 0" "$db" "/gpu-truth/straggler/rank 0" communication "$r0"
	checked "straggler rank 1" "$db" "/gpu-truth/straggler/rank 1" - "$r1"
	checked "straggler step" "$db" /gpu-truth/straggler - "$r0" "$r1"
fi
if db=$(imported compute compute "$TRUTH/compute.pt.trace.json.gz"); then
	checked compute "$db" /gpu-truth/compute - compute.pt.trace.json.gz
fi

summary
