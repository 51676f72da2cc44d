#!/usr/bin/env bash
# The explorer under a chain of long names (issue 26): the breadcrumb line
# shows the path from the workflow down to the current level, dropping
# levels from the top until it fits.  Under 100 nested operators of 64 KiB
# names each (tests/tools/make_deep_names.py) a key must cost what it
# costs under 10 of them: only the levels that fill the line are measured.
# Headless, with --stats, after a search has taken the tree to the
# innermost level; the median key of the 100-deep chain at most 5x the
# 10-deep one's (a breadcrumb that formats every level for every level
# it drops is 80x here).  The screens of both end in the innermost name,
# cut, after the cut mark.  Prints "ok - NAME" / "not ok - NAME (why)",
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
	if printf '%s\n' "$top" | grep -q "^… › level$((d - 1)):n*…\$"; then
		ok "breadcrumb: $d deep shows the innermost name, cut, after the cut mark"
	else
		not_ok "breadcrumb: $d deep shows the innermost name, cut, after the cut mark" \
			"$(printf '%s' "$top" | head -c 200)"
	fi
done
summary
