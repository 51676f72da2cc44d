#!/usr/bin/env bash
# Runs the parts of `make check` and adds up their results: each cmocka
# program (its "[  PASSED  ] N test(s)." lines), each end-to-end script and
# the fuzz smoke run (their "N passed, M failed[, K skipped]" lines).  Every
# part runs even when an earlier one failed; a part that ends without its
# summary, or exits non-zero with no failure counted, counts one failure.
# The last line is the total, "N passed, M failed, K skipped"; the exit
# status is 1 when anything failed.
#
#   bash tests/run-all.sh [unit] [e2e] [fuzz]     (all three by default)
#
# GRADEML_TESTS lists the cmocka programs; GRADEML_BIN, GRADEML_TOOLS and
# GRADEML_FOREIGN_KNOWN (tests/foreign/run.sh) are passed on; MAKE runs
# the fuzz smoke (make fuzz-smoke);
# GRADEML_PART_TIMEOUT bounds each part (seconds, default 3600).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# every script in tests/e2e (tap.sh is their library), the truth suite and
# the foreign-trace suite (every check counted: tests/foreign/known.txt
# lists no known failure; GRADEML_FOREIGN_KNOWN=FILE still names such a
# list, whose checks are then reported, not counted)
E2E="tests/tree.sh $(ls tests/e2e/*.sh | grep -v '/tap\.sh$') tests/truth/run.sh tests/foreign/run.sh"
limit=${GRADEML_PART_TIMEOUT:-3600}
log=$(mktemp "${TMPDIR:-/tmp}/grademl-check.XXXXXX")
trap 'rm -f "$log"' EXIT

total_pass=0 total_fail=0 total_skip=0 failed_parts=""

# add NAME SUMMARY PASS FAIL SKIP: counts a part; one failure more when it
# ended without its summary (SUMMARY empty), or non-zero with none counted.
add() {
	local f=$4
	if [ -z "$2" ]; then
		echo "$1: exit status $rc, no summary line"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$1: exit status $rc with no failed test counted"
		f=$((f + 1))
	fi
	total_pass=$((total_pass + $3))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + $5))
	[ "$f" -eq 0 ] || failed_parts+="  $1: $f failed"$'\n'
}

# run NAME CMD...: runs a part, its output shown and kept in $log; sets rc.
run() {
	local name=$1
	shift
	echo "== $name"
	timeout -k 10 "$limit" "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	[ "$rc" -ne 124 ] || echo "$name: stopped after $limit s"
}

# sum PATTERN: the sum of the numbers PATTERN's \(group\) finds in $log.
sum() {
	local n=0 x
	while read -r x; do
		n=$((n + x))
	done < <(sed -n "s/$1/\1/p" "$log")
	echo "$n"
}

# A cmocka program: the sums of its groups' summary lines.
unit_part() {
	local t=$1 p s f runs
	run "$t" env GRADEML_BIN="${GRADEML_BIN:-build/grademl-tui}" "$t"
	p=$(sum '^\[  PASSED  \] \([0-9]*\) test(s)\.$')
	s=$(sum '^\[  SKIPPED \] \([0-9]*\) test(s), listed below:$')
	f=$(sum '^\[  FAILED  \] \([0-9]*\) test(s), listed below:$')
	runs=$(grep '^\[==========\] [0-9]* test(s) run\.$' "$log")
	add "$t" "$runs" "$p" "$f" "$s"
}

# A script whose last counting line is "N passed, M failed[, K skipped]".
script_part() {
	local name=$1 line p=0 f=0 s=0
	shift
	run "$name" "$@"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#* passed, } f=${f%% failed*}
		case $line in *" skipped"*) s=${line%% skipped*} s=${s##* } ;; esac
	fi
	add "$name" "$line" "$p" "$f" "$s"
}

parts=${*:-unit e2e fuzz}
for part in $parts; do
	case $part in
	unit)
		for t in ${GRADEML_TESTS:-}; do
			unit_part "$t"
		done
		;;
	e2e)
		for s in $E2E; do
			script_part "$s" bash "$s"
		done
		;;
	fuzz)
		script_part "fuzz smoke" "${MAKE:-make}" --no-print-directory fuzz-smoke
		;;
	*)
		echo "run-all.sh: unknown part '$part' (unit, e2e, fuzz)" >&2
		exit 2
		;;
	esac
done

echo "=="
[ -z "$failed_parts" ] || printf 'failed:\n%s' "$failed_parts"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
