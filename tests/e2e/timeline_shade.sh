#!/usr/bin/env bash
# End-to-end test of the timeline's shades (grademl-tui(1), the timeline):
# a column's glyph is the share of its time the lane was busy, so an idle
# stream looks idle.  tests/tools/busy_streams.py writes a Kineto step whose
# streams are busy about 1%, 95% and (overlapping kernels) 40% of it; the
# timeline of the step is dumped at 200x50 and 80x23, and
# tests/e2e/timeline_shade_check.py works out every column's level from the
# raw trace with Python and compares.
#
# Prints "ok - NAME", "not ok - NAME (why)", then "N passed, M failed";
# exits 1 when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init timeline_shade
e2e_home
e2e_need_bin

if ! python3 tests/tools/busy_streams.py "$TMP/busy.json" 2>"$TMP/err"; then
	not_ok "trace written" "$(head -n 1 "$TMP/err")"
elif ! "$BIN" import -o "$TMP/busy.db" "$TMP/busy.json" >/dev/null 2>"$TMP/err"; then
	not_ok "imported" "$(head -n 1 "$TMP/err")"
else
	printf 't\n' >"$TMP/k"
	for size in 200x50 80x23; do
		if ! "$BIN" --keys "$TMP/k" --dump "$TMP/s$size.txt" --size "$size" \
			"$TMP/busy.db" 2>"$TMP/err"; then
			not_ok "$size: timeline drawn" "$(head -n 1 "$TMP/err")"
		elif why=$(python3 tests/e2e/timeline_shade_check.py "$TMP/busy.json" \
			"$TMP/s$size.txt" 2>&1); then
			ok "$size: each column's shade is its busy share in the raw trace ($why)"
		else
			not_ok "$size: each column's shade is its busy share in the raw trace" "$why"
		fi
	done
fi
summary
