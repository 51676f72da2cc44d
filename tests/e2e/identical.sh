#!/usr/bin/env bash
# trace.db stays the same for the same input: the demo and GPU captures
# (tests/data/*/import.sh, as `make demo` imports them) are imported, and
# then analysed, and each table's schema and rows are hashed
# (tests/e2e/tablehash.py: rows in the order written, the import's
# wall-clock stamps and the tool version left out) and compared with
# tests/expected/tables/CAPTURE.{import,analyze}.  The expected hashes were
# recorded with the binary of the commit before model/ was sorted into
# rooms (5f7c101), gpu.analyze again when the last profiler step's cutoff
# became the host's step start, and when the breakdown's top kernels came
# to count all the device work (and demo.analyze's meta, the analysis
# version); a change that moves code must leave them as they are.
# A change that means to write different rows re-records them with
# GRADEML_E2E_REGEN=1 and says why in its commit.
#
# Prints "ok - NAME" / "not ok - NAME (why)", then the summary; exits 1
# when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init identical
e2e_need_bin
REGEN=${GRADEML_E2E_REGEN:-}
EXPECTED=tests/expected/tables

# check NAME FILE: FILE's table hashes against $EXPECTED/NAME
check() {
	local want=$EXPECTED/$1 got=$TMP/$1.got
	if ! python3 tests/e2e/tablehash.py "$2" >"$got" 2>"$TMP/err"; then
		not_ok "$1: tables hashed" "$(head -n 3 "$TMP/err" | tr '\n' '|')"
	elif [ "$REGEN" = 1 ]; then
		cp "$got" "$want"
		regenerated
		echo "regenerated - $1"
	elif [ ! -e "$want" ]; then
		not_ok "$1: tables as recorded" "no $want; run with GRADEML_E2E_REGEN=1"
	elif diff -u "$want" "$got" >"$TMP/diff" 2>&1; then
		ok "$1: every table as recorded ($(wc -l <"$want") hashes)"
	else
		not_ok "$1: tables as recorded" "$(grep '^[-+][^-+]' "$TMP/diff" | cut -c1-40 | tr '\n' '|')"
	fi
}

for cap in demo gpu; do
	db=$TMP/$cap.db
	if ! bash "tests/data/$cap/import.sh" "$BIN" "$db" >"$TMP/out" 2>&1; then
		not_ok "$cap: imported" "$(tail -n 3 "$TMP/out" | tr '\n' '|')"
		continue
	fi
	check "$cap.import" "$db"
	if ! "$BIN" analyze "$db" >"$TMP/out" 2>&1; then
		not_ok "$cap: analysed" "$(tail -n 3 "$TMP/out" | tr '\n' '|')"
		continue
	fi
	check "$cap.analyze" "$db"
done
summary
