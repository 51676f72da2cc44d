#!/usr/bin/env bash
# Every figure `grademl-tui report` prints, against an independent
# computation from the raw files (tests/e2e/figures.py: json, gzip and csv
# only), on three real captures each imported as a user would:
#   gpu        tests/data/gpu (import.sh: manifest, four Kineto traces,
#              nvidia-smi);
#   demo       tests/data/demo (import.sh: manifest, two legacy traces, sar);
#   gpu-truth  tests/truth/gpu/data: the input-bound loop and the two-rank
#              straggler, each under its step, beside nvidia-smi.
# For each: `report --format json` and the text report against figures.py,
# then the same with every figure doctored, where every check must fail.
# Then the explorer (headless, 200x50): for every row of the Resources
# (workflow, steps, ranks), a stream of each trace, the first spans of each
# thread in the report's tree and the phases on the critical path, the
# details pane and the tree's row (duration, self, share, count, bound by,
# measured, est. use, straggler) and `:whatif 2` against the report's
# figures for the same phase; again against a doctored report, where every
# phase must disagree.  The figures.py docstring lists what is compared, and
# how closely.
#
# Prints "ok - NAME" / "not ok - NAME (why)" / "skip - NAME (why)", then the
# summary; exits 1 when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init figures
e2e_home
export GRADEML_BIN=$BIN
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3

e2e_need_bin

# lines CMD...: each "ok - ", "not ok - " or "skip - " line CMD prints
# counted; anything else it prints is a failure
lines() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"skip - "*) skip "${line#skip - }" ;;
		"") ;;
		*) not_ok "figures.py said" "$line" ;;
		esac
	done < <("$@" 2>&1)
}

# build CASE: imports CASE into $TMP/CASE.db as a user would; 0 on success
build() {
	local db=$TMP/$1.db T=tests/truth/gpu/data host
	case $1 in
	gpu | demo) bash "tests/data/$1/import.sh" "$BIN" "$db" ;;
	gpu-truth)
		host=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["host"])' \
			"$T/truth.json") &&
			"$BIN" import -o "$db" --workflow gpu-truth --step input --host "$host" \
				"$T/input.pt.trace.json.gz" &&
			"$BIN" import -o "$db" --workflow gpu-truth --step straggler --host "$host" \
				"$T/straggler_rank0.pt.trace.json.gz" "$T/straggler_rank1.pt.trace.json.gz" &&
			"$BIN" import -o "$db" --host "$host" "$T/nvsmi.csv.gz"
		;;
	esac
}

for case in gpu demo gpu-truth; do
	db=$TMP/$case.db
	if ! build "$case" >/dev/null 2>"$TMP/err"; then
		not_ok "$case: import" "$(head -c 300 "$TMP/err")"
		continue
	fi
	if ! "$BIN" report --format json "$db" >"$TMP/$case.json" 2>"$TMP/err" ||
		! "$BIN" report "$db" >"$TMP/$case.txt" 2>>"$TMP/err"; then
		not_ok "$case: report" "$(head -c 300 "$TMP/err")"
		continue
	fi
	lines "$PY" tests/e2e/figures.py "$case" "$TMP/$case.json" "$TMP/$case.txt" "$db"
	lines "$PY" tests/e2e/figures.py --doctor "$case" "$TMP/$case.json" "$TMP/$case.txt" "$db"
	# the explorer: each phase's details pane and tree row, and :whatif 2
	# where the report gives a what-if, against the report
	if ! "$PY" tests/e2e/figures.py --keys "$TMP/$case.json" "$db" >"$TMP/$case.keys" \
		2>"$TMP/err" ||
		! "$BIN" --keys "$TMP/$case.keys" --dump "$TMP/$case.dump" --size 200x50 "$db" \
			2>"$TMP/err" </dev/null; then
		not_ok "$case: the explorer's panes" "$(head -c 300 "$TMP/err")"
		continue
	fi
	lines "$PY" tests/e2e/figures.py --panes "$case" "$TMP/$case.json" "$TMP/$case.txt" "$db" \
		"$TMP/$case.dump" 50
	lines "$PY" tests/e2e/figures.py --panes-doctor "$case" "$TMP/$case.json" "$TMP/$case.txt" \
		"$db" "$TMP/$case.dump" 50
done

summary
