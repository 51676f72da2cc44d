#!/usr/bin/env bash
# End-to-end tests of `grademl-tui diff A.db B.db` and the explorer's
# `:diff OTHER.db` (grademl-tui(1), DIFF).
#
# On two real before/after pairs from ../shared/samples (Kineto's
# before_fix/after_fix traces, HTA's control/test), each imported alone:
#   - `diff --format json`: every figure (each level's rows, counts,
#     totals, means, differences, ratios, status, order, sums, and each
#     run's makespan) against an independent computation from the raw
#     JSON files (tests/e2e/diff_check.py: json and gzip only), exactly;
#     and the same check must fail on a copy of the JSON with one total
#     moved by 1 ns;
#   - the text: both files and the makespan ratio in the header, --limit
#     leaving "... N more" per level, every row of a level with --limit 0;
#   - `:diff` headless at 80x24: the title (the step median first) and row count, sorting by the
#     diff column (ascending: the largest drop first, the JSON's), and
#     search then Enter showing the first instance of that name path in
#     the tree.
# Without the samples: a name with an escape sequence reaches neither the
# text nor the screen raw (JSON keeps it exactly), and bad input (a missing
# file, a file that is not a trace.db, one file only) exits 2 with one line
# naming the file.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, python3.  GRADEML_SAMPLES overrides ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init diff
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3
e2e_home

e2e_need_bin

# import NAME TRACE: TRACE alone into $TMP/NAME.db; fails with a line.
import() {
	if ! "$BIN" import -o "$TMP/$1.db" "$2" >/dev/null 2>"$TMP/err"; then
		not_ok "$1: import" "$(head -c 300 "$TMP/err")"
		return 1
	fi
}

# relay PREFIX: diff_check.py's lines as this script's checks.
relay() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$1: ${line#ok - }" ;;
		"not ok - "*) not_ok "$1: ${line#not ok - }" ;;
		*) not_ok "$1" "diff_check.py said: $(printf '%s' "$line" | head -c 200)" ;;
		esac
	done
}

# pair NAME A_TRACE B_TRACE: the JSON against the raw files.
pair() {
	local name=$1 a=$2 b=$3
	if [ ! -r "$a" ] || [ ! -r "$b" ]; then
		skip "$name" "$SAMPLES is absent"
		return 1
	fi
	import "$name-a" "$a" && import "$name-b" "$b" || return 1
	if ! "$BIN" diff "$TMP/$name-a.db" "$TMP/$name-b.db" --format json >"$TMP/$name.json" \
		2>"$TMP/err"; then
		not_ok "$name: diff --format json" "$(head -c 300 "$TMP/err")"
		return 1
	fi
	relay "$name" < <("$PY" tests/e2e/diff_check.py "$a" "$b" "$TMP/$name.json" 2>&1)
}

pair kineto "$SAMPLES/pytorch__kineto__before_fix_trace.json" \
	"$SAMPLES/pytorch__kineto__after_fix_trace.json"
if pair hta "$SAMPLES/facebookresearch__HolisticTraceAnalysis__control.json.gz" \
	"$SAMPLES/facebookresearch__HolisticTraceAnalysis__test.json.gz"; then
	A=$TMP/hta-a.db B=$TMP/hta-b.db

	# the checker can fail: one total moved by 1 ns
	"$PY" - "$TMP/hta.json" "$TMP/moved.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["levels"][3]["rows"][7]["b"]["total_ns"] += 1
json.dump(d, open(sys.argv[2], "w"))
EOF
	bad=$("$PY" tests/e2e/diff_check.py \
		"$SAMPLES/facebookresearch__HolisticTraceAnalysis__control.json.gz" \
		"$SAMPLES/facebookresearch__HolisticTraceAnalysis__test.json.gz" "$TMP/moved.json" |
		grep -c '^not ok')
	if [ "$bad" -ge 1 ]; then
		ok "hta: a total moved by 1 ns fails the check ($bad checks)"
	else
		not_ok "hta: a total moved by 1 ns" "diff_check.py did not notice"
	fi

	# text: header, --limit, --limit 0
	"$BIN" diff "$A" "$B" --limit 3 >"$TMP/text.txt" 2>"$TMP/err"
	more=$(grep -c '^  \.\.\. [0-9]* more (--limit 0 shows all)$' "$TMP/text.txt")
	if grep -qF "A  $A: makespan 465 ms" "$TMP/text.txt" &&
		grep -qF "B  $B: makespan 745 ms" "$TMP/text.txt" &&
		grep -qF "makespan B-A +280 ms, B/A 1.60x" "$TMP/text.txt" && [ "$more" = 3 ]; then
		ok "hta: the text names both files, their makespans and ratio; --limit 3 leaves 3 levels with more"
	else
		not_ok "hta: text header and --limit" "$(head -c 400 "$TMP/text.txt") $(cat "$TMP/err")"
	fi
	rows=$("$BIN" diff "$A" "$B" --limit 0 | sed '/^step medians/,/^$/d' |
		grep -c '^ *[0-9][0-9]* *[0-9][0-9]* ')
	want=$("$PY" -c 'import json, sys
print(sum(l["names"] for l in json.load(open(sys.argv[1]))["levels"]))' "$TMP/hta.json")
	if [ "$rows" = "$want" ]; then
		ok "hta: --limit 0 prints all $want rows"
	else
		not_ok "hta: --limit 0" "$rows rows, the JSON has $want"
	fi

	# :diff headless: title, sort by diff ascending, search and Enter; run
	# in $TMP so that the title holds a short name
	"$PY" - "$TMP/hta.json" >"$TMP/low.txt" <<'EOF'
import json, sys
rows = [(l["level"], r) for l in json.load(open(sys.argv[1]))["levels"] for r in l["rows"]]
lv, low = min(rows, key=lambda x: x[1]["diff_ns"])
print(lv)
print(low["path"][-1])
print(sum(r["diff_ns"] == low["diff_ns"] for _, r in rows))
EOF
	mapfile -t low <"$TMP/low.txt"
	cat >"$TMP/diff.keys" <<EOF
type :diff hta-b.db
Enter
dump
l l l s s
dump
g
type /aten::_local_scalar_dense
Enter
Enter
d
dump
EOF
	if ! (cd "$TMP" && "$BIN" --keys diff.keys --dump screen.txt --size 80x24 hta-a.db) \
		2>"$TMP/err"; then
		not_ok ":diff headless" "$(head -c 300 "$TMP/err")"
	else
		total=$("$PY" -c 'import json, sys
print(sum(l["names"] for l in json.load(open(sys.argv[1]))["levels"]))' "$TMP/hta.json")
		s1=$(sed -n '1,24p' "$TMP/screen.txt")
		s2=$(sed -n '25,48p' "$TMP/screen.txt")
		s3=$(sed -n '49,72p' "$TMP/screen.txt")
		if grep -qF ":diff hta-b.db: step median 76.8 ms -> 115 ms (1.49x), makespan 46" <<<"$s1" &&
			grep -qE " $total rows *\$" <<<"$s1" &&
			grep -qE '^ level +name +status +diff ' <<<"$s1" &&
			grep -qE '^ step +ProfilerStep#\* +\+279 ms +1\.60x( |$)' <<<"$s1"; then
			ok ":diff shows the title, $total rows and the step first"
		else
			not_ok ":diff first screen" "$(head -n 5 <<<"$s1" | tr '\n' '|')"
		fi
		if [ "${low[2]}" = 1 ] &&
			sed -n 4p <<<"$s2" | grep -qF -- "${low[1]: -30}" &&
			sed -n 4p <<<"$s2" | grep -qE "^ ${low[0]} .* -[0-9.]+ [mun]?s "; then
			ok ":diff sorted by diff ascending: the largest drop (${low[0]} ${low[1]}) first"
		else
			not_ok ":diff sort" "want ${low[0]} '${low[1]}' (${low[2]} such), row: $(sed -n 4p <<<"$s2")"
		fi
		if grep -q "› aten::item" <<<"$s3" &&
			grep -qF "aten::_local_scalar_dense" <<<"$(sed -n '3,22p' <<<"$s3")"; then
			ok ":diff search and Enter show the name's first instance in the tree"
		else
			not_ok ":diff Enter" "$(head -n 3 <<<"$s3" | tr '\n' '|')"
		fi
	fi
fi

# ---- without the samples ----

# a hostile name, in both runs
for run in a b; do
	"$PY" - "$TMP/hostile-$run.json" "$run" <<'EOF'
import json, sys
dur = 10 if sys.argv[2] == "a" else 30
ev = [{"ph": "X", "cat": "cpu_op", "name": "\u001b[31mred\u001b[0m", "pid": 1, "tid": 1,
       "ts": 1000, "dur": dur},
      {"ph": "X", "cat": "cpu_op", "name": "plain", "pid": 1, "tid": 1, "ts": 2000, "dur": 5}]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
EOF
	import "hostile-$run" "$TMP/hostile-$run.json"
done
HA=$TMP/hostile-a.db HB=$TMP/hostile-b.db
"$BIN" diff "$HA" "$HB" >"$TMP/hostile.txt" 2>&1
if ! grep -q $'\x1b' "$TMP/hostile.txt" && grep -qF '\e[31mred\e[0m' "$TMP/hostile.txt"; then
	ok "hostile: an escape sequence in a name shows as text in the diff"
else
	not_ok "hostile: text" "$(head -c 300 "$TMP/hostile.txt" | cat -v)"
fi
"$BIN" diff "$HA" "$HB" --format json >"$TMP/hostile.json"
if "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))["levels"][1]["rows"][0]
sys.exit(not (r["name"] == "\x1b[31mred\x1b[0m" and r["diff_ns"] == 20000 and r["ratio"] == 3.0))' \
	"$TMP/hostile.json"; then
	ok "hostile: the JSON keeps the name exactly, with its +20 us and ratio 3"
else
	not_ok "hostile: JSON" "$(head -c 300 "$TMP/hostile.json")"
fi
printf 'type :diff %s\nEnter\n' "$HB" >"$TMP/hostile.keys"
"$BIN" --keys "$TMP/hostile.keys" --dump "$TMP/hostile-screen.txt" --size 80x24 "$HA" 2>&1
if ! grep -q $'\x1b' "$TMP/hostile-screen.txt" &&
	grep -qF '\e[31mred\e[0m' "$TMP/hostile-screen.txt"; then
	ok "hostile: the :diff screen shows the escape sequence as text"
else
	not_ok "hostile: :diff screen" "$(head -c 300 "$TMP/hostile-screen.txt" | cat -v)"
fi

# bad input: exit 2, one line naming the file
echo 'not a database' >"$TMP/text.db"
# expect_error NAME TEXT ARGS...: exit 2, nothing on stdout, TEXT on the
# first line of stderr; one line only unless it is a usage error (the usage
# follows then, as for every command)
expect_error() {
	local name=$1 text=$2
	shift 2
	"$BIN" diff "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$? lines
	lines=$(grep -vc '^usage: \|^   ' "$TMP/err")
	if [ $rc = 2 ] && [ "$lines" = 1 ] && head -n 1 "$TMP/err" | grep -qF -- "$text" &&
		[ ! -s "$TMP/out" ]; then
		ok "bad input: $name exits 2 with one line: $(basename -- "$text")"
	else
		not_ok "bad input: $name" "exit $rc, stderr: $(head -c 200 "$TMP/err")"
	fi
}
expect_error "a missing B" "$TMP/none.db" "$HA" "$TMP/none.db"
expect_error "A not a trace.db" "$TMP/text.db" "$TMP/text.db" "$HB"
expect_error "one file only" "diff needs two trace.db files" "$HA"
expect_error "a bad --limit" "--limit wants a count, not '-3'" "$HA" "$HB" --limit -3

summary
