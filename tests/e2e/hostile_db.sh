#!/usr/bin/env bash
# Hostile trace.db files, row by row: a trace.db made by someone else with
# the right application id and schema version but none of the constraints
# may hold anything in any column.  tests/tools/hostile_db.py builds a
# valid one (the demo capture and a small generated GPU capture of two
# ranks, analysed), rebuilds it without NOT NULL, UNIQUE and composite keys,
# then writes into one column of one table at a time NULL in every row
# ("null", as the issue's crashes had it), or row by row in turn,
# NULL, text, text that begins as a number, a blob with NUL bytes, a real,
# -1, the int64 limits, an id that points nowhere, '', 1e300 and 0
# ("mixed"; into a table's id, negative ids and ids that point nowhere).
#
# On each mutant every command that reads trace.db runs: report (text and
# json), analyze (on a copy), an import appended to a copy, query, summary
# (kernels, ops, api, ranks), diff (both ways against the valid file),
# export, and the explorer
# headless with keys that open details, the timeline, the flame graph
# (both modes), the issues, the metrics, :kernels and :ops with their
# callers (c), :ranks, :path and :diff.  Each must end by itself
# with status 0, or 2 with exactly one line on standard error (a query's
# error also shows where in the query, in the lines after: the query
# language's form); never a signal (status 128 and above), a sanitizer
# report, another status, or a control character (other than newline) in
# the explorer's screen.  One "ok" per table, one "not ok" per mutant and
# command that failed.
#
#   GRADEML_BIN=build/san/grademl-tui bash tests/e2e/hostile_db.sh
#   GRADEML_HOSTILE_KINDS="mixed max" ...   those kinds of mutants
#       (default "null mixed"; "all": mixed and every kind on its own,
#       about six times as many; tests/tools/hostile_db.py lists the kinds)
#   GRADEML_HOSTILE_ONLY=TABLE ...   only that table's mutants
# Needs: bash, python3 (its sqlite3 module), xargs.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/e2e/tap.sh
e2e_init hostile-db
e2e_need_bin
e2e_home
export BIN TMP SEED
JOBS=${GRADEML_E2E_JOBS:-2}

if ! python3 -c 'import sqlite3' 2>/dev/null; then
	skip "hostile trace.db" "python3 with its sqlite3 module is not installed"
	summary
	exit 0
fi

SEED=$TMP/seed.db LOOSE=$TMP/loose.db
if ! python3 tests/tools/hostile_db.py seed "$BIN" "$SEED" 2>"$TMP/err" ||
	! python3 tests/tools/hostile_db.py loosen "$SEED" "$LOOSE" 2>>"$TMP/err"; then
	not_ok "build the valid trace.db and its loose copy" "$(head -c 300 "$TMP/err")"
	summary
	exit 1
fi

cat >"$TMP/explore.keys" <<'EOF'
d
J
t
+
l
q
F
Enter
d
q
i
Enter
q
m
q
type :kernels
Enter
c
q
q
type :ops
Enter
c
q
q
type :api
Enter
q
type :ranks /demo/ddp
Enter
q
type :path
Enter
Enter
q
type :goto /demo/ddp
Enter
Enter
Enter
d
t
q
F
q
EOF
echo "type :diff $SEED" >>"$TMP/explore.keys"
printf 'Enter\nq\n' >>"$TMP/explore.keys"
# what an import appends: a step of the demo workflow on host vm
cat >"$TMP/more.json" <<'EOF'
{"traceEvents": [
 {"name": "more", "ph": "X", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
 {"name": "aten::mm", "ph": "X", "cat": "cpu_op", "ts": 10, "dur": 20, "pid": 1, "tid": 1}
]}
EOF

# check_mutant NNNN: runs every command on $TMP/m/NNNN.db; prints one
# "NNNN COMMAND: WHY" line per command that failed (with STRICT set, every
# status but 0 fails).
check_mutant() {
	local id=$1 db=$TMP/m/$1.db dir=$TMP/r/$1
	mkdir -p "$dir"
	cp "$db" "$dir/an.db"
	cp "$db" "$dir/im.db"
	local -a cmds=(
		"report|report $db"
		"report-json|report $db --format json"
		"analyze|analyze $dir/an.db"
		"report-analyzed|report $dir/an.db"
		"import|import -o $dir/im.db --workflow demo --step more --host vm $TMP/more.json"
		"query-ops|query $db phases kind = operator | saturated cpu.util | by name | top 5 sum(dur)"
		"query-path|query $db phases /demo/ddp/** | select id, name, path, rank, track.name | limit 50"
		"query-events|query $db events | within 1ms of phases kind = profiler_step | select id, t, name, phase.name, near"
		"query-with|query $db phases kind = profiler_step | with cpu.util | select id, path, dur, cpu.util.mean"
		"query-metrics|query $db metrics cpu.util | during phases kind = step | select phase, mean, max, sat"
		"query-kernels|query $db phases kind = kernel | with gpu0.utilization.gpu | by rank, track.name | stats count, sum(dur)"
		"summary-kernels|summary $db kernels"
		"summary-ops|summary $db ops /demo"
		"summary-api|summary $db api"
		"summary-ranks|summary $db ranks /demo/ddp"
		"diff|diff $db $SEED"
		"diff-back|diff $SEED $db --format json"
		"export|export -o $dir/out.json $db"
		"export-sub|export -o $dir/sub.json $db /demo/ddp"
		"explore|--keys $TMP/explore.keys --dump $dir/screen.txt $db"
	)
	local c name args rc lines
	for c in "${cmds[@]}"; do
		name=${c%%|*} args=${c#*|}
		rc=0
		# word splitting on purpose, but a query is one argument
		case $name in
		query-*)
			local q=${args#query "$db" }
			timeout -k 5 60 "$BIN" query "$db" "$q" >"$dir/out" 2>"$dir/err" </dev/null || rc=$?
			;;
		*)
			# shellcheck disable=SC2086
			timeout -k 5 60 "$BIN" $args >"$dir/out" 2>"$dir/err" </dev/null || rc=$?
			;;
		esac
		lines=$(wc -l <"$dir/err")
		if [ "$rc" -ge 124 ]; then
			echo "$id $name: status $rc: $(grep -m 1 -E 'ERROR|runtime error|SUMMARY' "$dir/err" | head -c 200)"
		elif grep -qE 'runtime error|Sanitizer|SUMMARY: ' "$dir/err"; then
			echo "$id $name: sanitizer: $(grep -m 1 -E 'runtime error|ERROR' "$dir/err" | head -c 200)"
		elif [ "$rc" -ne 0 ] && { [ -n "${STRICT:-}" ] || [ "$rc" -ne 2 ]; }; then
			echo "$id $name: status $rc: $(head -c 200 "$dir/err" | tr '\n' '|')"
		elif [ "$rc" -eq 2 ] && [ "$lines" -ne 1 ] &&
			! { [ "${name%%-*}" = query ] && head -n 1 "$dir/err" | grep -q '^grademl-tui: error at column'; }; then
			echo "$id $name: status 2 with $lines lines on stderr: $(head -c 200 "$dir/err" | tr '\n' '|')"
		elif [ "$name" = explore ] && [ "$rc" -eq 0 ] &&
			LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$dir/screen.txt"; then
			echo "$id $name: a control character on the screen"
		fi
	done
	rm -rf "$dir"
}
export -f check_mutant

# shellcheck disable=SC2086
if ! python3 tests/tools/hostile_db.py many "$LOOSE" "$TMP/m" ${GRADEML_HOSTILE_KINDS:-null mixed} 2>"$TMP/err"; then
	not_ok "make the mutants" "$(head -c 300 "$TMP/err")"
	summary
	exit 1
fi
index=$TMP/m/index
if [ -n "${GRADEML_HOSTILE_ONLY:-}" ]; then
	awk -v t="$GRADEML_HOSTILE_ONLY" '$2 == t' "$TMP/m/index" >"$TMP/only"
	index=$TMP/only
fi

# the valid file itself: every command succeeds
check_mutant_valid() {
	cp "$LOOSE" "$TMP/m/loose.db"
	STRICT=1 check_mutant loose
}
if out=$(check_mutant_valid) && [ -z "$out" ]; then
	ok "the loose copy of a valid trace.db: every command runs"
else
	not_ok "the loose copy of a valid trace.db: every command runs" "$(echo "$out" | head -n 3 | tr '\n' '|')"
fi

cut -d ' ' -f 1 "$index" | xargs -P "$JOBS" -n 1 bash -c 'check_mutant "$1"' _ >"$TMP/failed"

for table in $(cut -d ' ' -f 2 "$index" | uniq); do
	n=$(awk -v t="$table" '$2 == t' "$index" | wc -l)
	bad=0
	while read -r id t col kind; do
		[ "$t" = "$table" ] || continue
		while IFS= read -r line; do
			not_ok "$table.$col $kind: ${line#"$id" }"
			bad=$((bad + 1))
		done < <(grep "^$id " "$TMP/failed")
	done <"$index"
	[ "$bad" -eq 0 ] && ok "$table: $n mutants, each command ends with status 0 or 2 and one line"
done
summary
