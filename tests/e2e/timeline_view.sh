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

# draw NAME KEYS SIZE DUMP: the key script's screens at SIZE into DUMP.
draw() {
	"$BIN" --keys "$2" --dump "$4" --size "$3" "$TMP/busy.db" 2>"$TMP/err" && return 0
	not_ok "$1" "$(head -n 1 "$TMP/err")"
	return 1
}

# check NAME MODE ARG...: timeline_view_check.py MODE ARG... passes.
check() {
	local name=$1 why
	shift
	if why=$(python3 tests/e2e/timeline_view_check.py "$@" 2>&1); then
		ok "$name ($why)"
	else
		not_ok "$name" "$why"
	fi
}

if ! python3 tests/tools/busy_streams.py "$TMP/busy.json" 2>"$TMP/err"; then
	not_ok "trace written" "$(head -n 1 "$TMP/err")"
elif ! "$BIN" import -o "$TMP/busy.db" "$TMP/busy.json" >/dev/null 2>"$TMP/err"; then
	not_ok "imported" "$(head -n 1 "$TMP/err")"
else
	J=$TMP/busy.json
	printf 't\n' >"$TMP/k"
	{
		echo t
		for i in $(seq 1 14); do printf '+\ndump\n'; done
	} >"$TMP/zoom"
	for size in 200x50 80x23; do
		draw "$size: timeline" "$TMP/k" "$size" "$TMP/s$size.txt" &&
			check "$size: each column's shade is its busy share in the raw trace" \
				shade "$J" "$TMP/s$size.txt"
		if draw "$size: zoomed in" "$TMP/zoom" "$size" "$TMP/z$size.txt"; then
			check "$size: zooming in, neighbouring axis labels differ and increase" \
				axis "$TMP/z$size.txt"
			check "$size: zooming in, bars carry the names of their work" \
				names "$J" "$TMP/z$size.txt"
		fi
	done
	{
		echo t
		for i in $(seq 1 40); do echo J; done
	} >"$TMP/lanes"
	last=$(python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print("gpu0 stream %d" % max(e["tid"] for e in ev if e.get("cat") == "kernel"))' "$J")
	if ! draw "J: lanes scrolled" "$TMP/lanes" 80x23 "$TMP/lanes.txt"; then
		:
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
		draw "$2: range $1" "$TMP/range$1" "$2" "$TMP/r$1$2.txt" &&
			check "$2: the range ($1) sums by lane and by name as the raw trace does" \
				range "$J" "$TMP/r$1$2.txt"
	done
fi
summary
