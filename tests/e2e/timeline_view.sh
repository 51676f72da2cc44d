#!/usr/bin/env bash
# End-to-end test of what the timeline shows at a glance (grademl-tui(1),
# the timeline), on a Kineto step tests/tools/busy_streams.py writes, whose
# streams are busy about 1%, 95% and (overlapping kernels) 40% of it; each
# screen dumped at 200x50 and 80x23 and read by
# tests/e2e/timeline_view_check.py:
#   - a column's glyph is the share of its time the lane was busy, so an
#     idle stream looks idle: every column's level worked out from the raw
#     trace with Python;
#   - zoomed in step by step to 16000x, no two neighbouring axis labels
#     read the same, and they increase, and the bars wide enough carry the
#     names of their work;
#   - at 80x23, where the last stream's lane is below the screen, J
#     scrolls the lanes down to it;
#   - a range (V: the window shown, zoomed and panned so that kernels are
#     cut at its ends; v twice: the selected phase's window) sums busy
#     time by lane and time by name as Python does over the raw trace.
#
# Prints "ok - NAME", "not ok - NAME (why)", then "N passed, M failed";
# exits 1 when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init timeline_view
e2e_home
e2e_need_bin

if ! python3 tests/tools/busy_streams.py "$TMP/busy.json" 2>"$TMP/err"; then
	not_ok "trace written" "$(head -n 1 "$TMP/err")"
elif ! "$BIN" import -o "$TMP/busy.db" "$TMP/busy.json" >/dev/null 2>"$TMP/err"; then
	not_ok "imported" "$(head -n 1 "$TMP/err")"
else
	printf 't\n' >"$TMP/k"
	{
		echo t
		for i in $(seq 1 14); do printf '+\ndump\n'; done
	} >"$TMP/zoom"
	for size in 200x50 80x23; do
		if ! "$BIN" --keys "$TMP/k" --dump "$TMP/s$size.txt" --size "$size" \
			"$TMP/busy.db" 2>"$TMP/err"; then
			not_ok "$size: timeline drawn" "$(head -n 1 "$TMP/err")"
		elif why=$(python3 tests/e2e/timeline_view_check.py shade "$TMP/busy.json" \
			"$TMP/s$size.txt" 2>&1); then
			ok "$size: each column's shade is its busy share in the raw trace ($why)"
		else
			not_ok "$size: each column's shade is its busy share in the raw trace" "$why"
		fi
		if ! "$BIN" --keys "$TMP/zoom" --dump "$TMP/z$size.txt" --size "$size" \
			"$TMP/busy.db" 2>"$TMP/err"; then
			not_ok "$size: zoomed in" "$(head -n 1 "$TMP/err")"
		elif why=$(python3 tests/e2e/timeline_view_check.py axis "$TMP/z$size.txt" 2>&1); then
			ok "$size: zooming in, neighbouring axis labels differ and increase ($why)"
		else
			not_ok "$size: zooming in, neighbouring axis labels differ and increase" "$why"
		fi
		if why=$(python3 tests/e2e/timeline_view_check.py names "$TMP/busy.json" \
			"$TMP/z$size.txt" 2>&1); then
			ok "$size: zooming in, bars carry the names of their work ($why)"
		else
			not_ok "$size: zooming in, bars carry the names of their work" "$why"
		fi
	done
	{
		echo t
		for i in $(seq 1 40); do echo J; done
	} >"$TMP/lanes"
	last=$(python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print("gpu0 stream %d" % max(e["tid"] for e in ev if e.get("cat") == "kernel"))' "$TMP/busy.json")
	if ! "$BIN" --keys "$TMP/lanes" --dump "$TMP/lanes.txt" --size 80x23 \
		"$TMP/busy.db" 2>"$TMP/err"; then
		not_ok "J: lanes scrolled" "$(head -n 1 "$TMP/err")"
	elif grep -q "^$last " "$TMP/s80x23.txt"; then
		not_ok "J scrolls to the last lane" "$last shows on the first screen already"
	elif grep -q "^$last " "$TMP/lanes.txt"; then
		ok "J scrolls the lanes at 80x23 down to the last ($last), below the first screen"
	else
		not_ok "J scrolls to the last lane" "$last is not on the screen: $(grep -c '^gpu0' "$TMP/lanes.txt") lanes"
	fi
	printf 't\n+\n+\n+\nl\nV\n' >"$TMP/rangeV"
	printf 't\nv\nv\n' >"$TMP/rangev"
	for run in "V 200x50" "v 80x23" "V 80x23"; do
		set -- $run
		if ! "$BIN" --keys "$TMP/range$1" --dump "$TMP/r$1$2.txt" --size "$2" \
			"$TMP/busy.db" 2>"$TMP/err"; then
			not_ok "$2: range $1" "$(head -n 1 "$TMP/err")"
		elif why=$(python3 tests/e2e/timeline_view_check.py range "$TMP/busy.json" \
			"$TMP/r$1$2.txt" 2>&1); then
			ok "$2: the range ($1) sums by lane and by name as the raw trace does ($why)"
		else
			not_ok "$2: the range ($1) sums by lane and by name as the raw trace does" "$why"
		fi
	done
fi
summary
