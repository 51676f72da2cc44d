#!/usr/bin/env bash
# Units and the figures of a phase (grademl-tui(1) UNITS), on the GPU
# capture in tests/data/gpu (nvidia-smi every 100 ms, memory in MiB) and the
# demo capture in tests/data/demo (sar every second):
#   a. the metrics screen drilled into a step shows that step's min, mean,
#      max and sample count, each equal to Python over nvidia-smi's CSV
#      (sar's JSON for the demo's CPU series) within the step's window from
#      the manifest (units_check.py), and says over which step they are, at
#      120x30, 200x50 and 80x23;
#   b. the timeline's scale of a memory lane and the metrics screen write
#      the same figure (memory.total, the capacity of memory.used) in the
#      same unit, decimal bytes, at 200x50;
#   c. query output of metric values carries their unit: a table shows
#      samples' value, metrics' mean and max and `with`'s columns in their
#      unit, the CSV of the same query the raw number beside a unit column.
# Prints "ok - NAME" / "not ok - NAME (why)", then the summary; exits 1
# when any check failed.  Needs python3.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.." # the repository root: e2e_init sets ROOT
. "$here/tap.sh"
e2e_init units
e2e_home
e2e_need_bin
e2e_need_tools python3

DATA=tests/data/gpu
DB=$TMP/gpu.db
if ! bash $DATA/import.sh "$BIN" "$DB" >"$TMP/import.out" 2>&1; then
	not_ok "import the GPU capture" "$(head -c 300 "$TMP/import.out")"
	summary || exit 1
fi

# screen NAME SIZE KEYS...: the explorer's screen after KEYS (one a line)
screen() {
	local name=$1 size=$2
	shift 2
	printf '%s\n' "$@" >"$TMP/$name.keys"
	"$BIN" --keys "$TMP/$name.keys" --dump "$TMP/$name.txt" --size "$size" "$DB" \
		2>"$TMP/$name.err"
}

# ---- a. a step's metrics are that step's ----
for step in train eval; do
	if screen "m-$step" 120x30 "type :goto /gpu/$step" Enter Enter m; then
		relay units_check.py < <(python3 "$here/units_check.py" metrics "$TMP/m-$step.txt" \
			$DATA/nvsmi.csv.gz $DATA/workflow.jsonl "$step" 2>&1)
	else
		not_ok "metrics screen in $step" "$(head -c 300 "$TMP/m-$step.err")"
	fi
done
DEMO_DB=$TMP/demo.db
if bash tests/data/demo/import.sh "$BIN" "$DEMO_DB" >"$TMP/demo.out" 2>&1; then
	for step in train infer; do
		# Enter passes the step's chain of only children; h h comes back
		printf '%s\n' "type :goto /demo/$step" Enter Enter h h m >"$TMP/d-$step.keys"
		if "$BIN" --keys "$TMP/d-$step.keys" --dump "$TMP/d-$step.txt" --size 200x50 \
			"$DEMO_DB" 2>"$TMP/d-$step.err"; then
			relay units_check.py < <(python3 "$here/units_check.py" sar "$TMP/d-$step.txt" \
				tests/data/demo/sysstat.sadf.json.gz tests/data/demo/workflow.jsonl \
				"$step" 2>&1)
		else
			not_ok "demo: metrics screen in $step" "$(head -c 300 "$TMP/d-$step.err")"
		fi
	done
else
	not_ok "import the demo capture" "$(head -c 300 "$TMP/demo.out")"
fi
if screen m-80 80x23 "type :goto /gpu/eval" Enter Enter m &&
	sed -n 2p "$TMP/m-80.txt" | grep -q '^Over eval '; then
	ok "80x23: the metrics screen's header says the figures are over eval"
else
	not_ok "80x23: the metrics screen's header says the figures are over eval" \
		"$(sed -n 2p "$TMP/m-80.txt" 2>/dev/null | cut -c1-40)"
fi

# ---- b. one figure, one unit: timeline and metrics screen ----
if screen t-train 200x50 "type :goto /gpu/train" Enter Enter t &&
	screen m-root 200x50 "type :goto /" Enter m; then
	lane=$(grep -o '^gpu0 mem used  *[^ ]*\( [A-Za-z%]*\)\?' "$TMP/t-train.txt" || true)
	top=${lane##*..}
	total=$(grep '^memory\.total ' "$TMP/m-root.txt" |
		sed 's/  \+/\t/g' | cut -f6 || true)
	if [ -n "$top" ] && [ "$top" = "$total" ] && [[ $top == *" GB" ]]; then
		ok "the timeline's memory scale ends at $top, memory.total on the metrics screen"
	else
		not_ok "the timeline's memory scale and the metrics screen agree" \
			"lane '$lane', memory.total max '$total'"
	fi
else
	not_ok "timeline and metrics screen of the GPU capture" \
		"$(head -c 300 "$TMP/t-train.err" "$TMP/m-root.err" 2>/dev/null)"
fi

# ---- c. query output of a metric's values has their unit ----
# query_units NAME QUERY COLUMN...: the table against the CSV
query_units() {
	local name=$1 q=$2
	shift 2
	if "$BIN" query "$DB" "$q" >"$TMP/$name.table" 2>"$TMP/$name.err" &&
		"$BIN" query "$DB" "$q" --format csv >"$TMP/$name.csv" 2>>"$TMP/$name.err"; then
		relay units_check.py < <(python3 "$here/units_check.py" query "$TMP/$name.table" \
			"$TMP/$name.csv" "$@" 2>&1)
	else
		not_ok "query $q" "$(head -c 300 "$TMP/$name.err")"
	fi
}
query_units samples 'samples memory.used | during /gpu/train' value
query_units metrics 'metrics | during /gpu/eval | select name, mean, max' mean max
query_units with 'phases kind = step | with memory.used, utilization.gpu' \
	memory.used.mean memory.used.max utilization.gpu.mean utilization.gpu.max

summary
