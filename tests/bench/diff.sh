#!/usr/bin/env bash
# The diff benchmark (issue 18): `grademl-tui diff A.db B.db --format json`
# on two databases of the explorer benchmark's size, against the issue's
# budget: <= 10 s.  A is the explorer benchmark's trace.db (tests/bench/tui.sh:
# the BENCH_MB-MiB Kineto trace imported twice, ~5.6 M phases at 1024); B a
# copy of it in which the names of the aten::add* operators get a trailing
# qualifier (the same role: renamed rows) and those of the NCCL kernels a
# prefix (another role), so that the diff has names renamed, added and
# removed as well as matched.  Run tui.sh first (make bench does); A is never changed.
# Prints one table; exits 0 even when a budget is missed, non-zero only when
# something failed to run.
#
#   bash tests/bench/diff.sh          (GRADEML_BIN picks the binary)
#   BENCH_MB=64 bash tests/bench/diff.sh
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init diff time
a=$dir/tui-${mb}MiB.db
[[ -s $a ]] || die "$a is missing: run tests/bench/tui.sh first"

work=$(mktemp -d "$dir/diff.XXXXXX")
trap 'rm -rf "$work"' EXIT
b=$work/b.db
cp "$a" "$b"
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE strings SET text = text || \x27 (renamed)\x27 WHERE text LIKE \x27aten::add%\x27")
c.execute("UPDATE strings SET text = \x27renamed_\x27 || text WHERE text LIKE \x27ncclKernel%\x27")
c.commit()' "$b" || die "cannot rename names in $b"

cat "$a" "$b" >/dev/null # the page cache, as after the imports that made them
/usr/bin/time -f '%e %U %M' -o "$work/time" "$bin" diff "$a" "$b" --format json \
	>"$work/diff.json" 2>"$work/err" || die "diff failed: $(head -c 300 "$work/err")"
read -r secs user rss <"$work/time"
read -r phases names added removed renamed < <(python3 -c 'import json, sqlite3, sys
d = json.load(open(sys.argv[2]))
n = sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM phases").fetchone()[0]
print(n, sum(l["names"] for l in d["levels"]), sum(l["added"] for l in d["levels"]),
      sum(l["removed"] for l in d["levels"]),
      sum(r["status"] == "renamed" for l in d["levels"] for r in l["rows"]))' "$a" "$work/diff.json") ||
	die "cannot read the diff"
[[ $added -gt 0 && $removed -gt 0 && $renamed -gt 0 ]] ||
	die "the changed names are not in the diff ($added added, $removed removed, $renamed renamed)"

awk -v ph="$phases" -v n="$names" -v ad="$added" -v rm="$removed" -v rn="$renamed" \
	-v s="$secs" -v u="$user" \
	-v rss="$rss" '
function row(fig, meas, budget, ok) {
	printf "%-28s %-14s %-10s %s\n", fig, meas, budget, ok ? "PASS" : "MISS"
}
BEGIN {
	printf "input: two databases of %d phases each; %d names, %d added, %d removed, %d renamed\n\n", ph, n, ad, rm, rn
	printf "%-28s %-14s %-10s %s\n", "figure", "measured", "budget", "verdict"
	printf "%-28s %-14s %-10s %s\n", "------", "--------", "------", "-------"
	row("diff (wall)", sprintf("%.2f s", s), "<= 10 s", s <= 10)
	printf "%-28s %-14s\n", "diff (user CPU)", sprintf("%.2f s", u)
	printf "%-28s %-14s\n", "peak RSS, diff", sprintf("%.1f MiB", rss / 1024)
}'
