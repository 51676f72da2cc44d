#!/usr/bin/env bash
# The explorer under a chain of long names (issue 26): the breadcrumb line
# shows the path from the workflow down to the current level; where it
# does not fit, the levels in the middle give way to the cut mark, the
# first two (workflow and step) and the last two staying, each cut to fit
# and the innermost keeping half the line.  Under 100 nested operators of 64 KiB
# names each (tests/tools/make_deep_names.py) a key must cost what it
# costs under 10 of them: only the levels that fill the line are measured.
# Headless, with --stats, after a search has taken the tree to the
# innermost level; the median key of the 100-deep chain at most 5x the
# 10-deep one's (a breadcrumb that formats every level for every level
# it drops is 80x here).  The screens of both show the workflow, its step,
# the cut mark, the level above the innermost and the innermost name, cut.
# On the GPU capture at 80 columns a kernel's launch keeps its step in the
# line (before, the levels were dropped from the top and the step with
# them), and :whatif's message, naming a kernel of a 600-character
# signature, ends on the line at 200 columns.  Prints "ok - NAME" / "not ok - NAME (why)",
# then "N passed, M failed"; exits 1 when any check failed.
# Needs: bash, python3, timeout.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init tui_deep
e2e_home
e2e_need_bin
e2e_need_tools python3 timeout

printf 'type /leaf_1\nEnter\ndump\nj k j k j k j k j k j k j k j k\n' >"$TMP/deep.keys"

# p50 DEPTH: imports a chain DEPTH deep, runs the keys, prints the median
# key's milliseconds; the screen in TMP/DEPTH.txt.
p50() {
	local d=$1
	python3 tests/tools/make_deep_names.py --depth "$d" --leaves 5 -o "$TMP/$d.json" &&
		"$BIN" import -o "$TMP/$d.db" "$TMP/$d.json" >/dev/null &&
		timeout 120 "$BIN" --keys "$TMP/deep.keys" --dump "$TMP/$d.txt" --size 80x24 \
			--stats "$TMP/$d.db" 2>&1 >/dev/null |
		sed -n 's/^headless: [0-9]* keys, p50 \([0-9.]*\) ms.*/\1/p'
}

a=$(p50 10)
b=$(p50 100)
if [ -n "$a" ] && [ -n "$b" ] &&
	python3 -c "import sys; sys.exit(not float('$b') <= 5 * max(float('$a'), 0.05))"; then
	ok "breadcrumb: a key under 100 long names costs what it does under 10 ($b ms, $a ms)"
else
	not_ok "breadcrumb: a key under 100 long names costs what it does under 10" \
		"p50 ${b:-none} ms under 100, ${a:-none} ms under 10"
fi

for d in 10 100; do
	top=$(head -n 1 "$TMP/$d.txt" 2>/dev/null)
	if printf '%s\n' "$top" | grep -q "^workflow › $d › … › level$((d - 2))[:n]*… › level$((d - 1)):n*…\$"; then
		ok "breadcrumb: $d deep keeps the workflow, its step and the last two levels, cut"
	else
		not_ok "breadcrumb: $d deep keeps the workflow, its step and the last two levels, cut" \
			"$(printf '%s' "$top" | head -c 200)"
	fi
done

# gpu_line SIZE LINE KEY...: the explorer on the GPU capture at SIZE with
# one key line each KEY; prints line LINE (a number, or $ for the last) of
# its screen.
gpu_line() {
	local size=$1 line=$2
	shift 2
	printf '%s\n' "$@" >"$TMP/gpu.keys"
	"$BIN" --keys "$TMP/gpu.keys" --dump "$TMP/gpu.txt" --size "$size" "$TMP/gpu.db" >/dev/null 2>&1
	sed -n "${line}p" "$TMP/gpu.txt" 2>/dev/null
}

# expect_line TEXT PATTERN NAME: ok NAME when TEXT matches the grep PATTERN.
expect_line() {
	if printf '%s\n' "$1" | grep -q "$2"; then
		ok "$3"
	else
		not_ok "$3" "$1"
	fi
}

if [ -x tests/data/gpu/import.sh ] || [ -r tests/data/gpu/import.sh ]; then
	if bash tests/data/gpu/import.sh "$BIN" "$TMP/gpu.db" >/dev/null 2>&1; then
		# the breadcrumb deep in the capture at 80 columns: a launch keeps
		# its workflow and step
		top=$(gpu_line 80x24 1 'type /cunn_SoftMaxBackwardSmem' Enter dump)
		expect_line "$top" '^gpu › ddp › … › .* › cudaLaunchKernel *$' \
			"breadcrumb at 80 columns: a launch deep in the GPU capture keeps its workflow and step"
		# :whatif's message names what then bounds the path, a kernel of a
		# 600-character signature: at 200 columns its end is on the line
		last=$(gpu_line 200x50 '$' \
			'type :goto /gpu/ddp/rank 1/python3 (525) CPU/thread 525 (python3)/ProfilerStep#3' \
			Enter 'type :whatif 2' Enter dump)
		expect_line "$last" '^ProfilerStep#3 2x faster saves .*: then .* on rank 1.s stream 7 bounds the path *$' \
			":whatif at 200 columns: the message ends in what then bounds the path"
	else
		skip "breadcrumb on the GPU capture" "tests/data/gpu does not import here"
	fi
fi
summary
