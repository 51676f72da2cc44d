#!/usr/bin/env bash
# DESIGN.md's import budget with import's progress line on (issue 28: it
# costs <= 2% of the import's time): `grademl-tui import` of the bench trace
# BENCH_JSON (run.sh's big-<BENCH_MB>MiB.json in BENCH_DIR) with stderr on
# a pseudo-terminal (tests/e2e/import_out.py: the line drawn four times a
# second) and to a pipe (no line), the two in turn, BENCH_RUNS times each
# (at least 3); the best wall time of each, their ratio against 1.02, and
# the CPU time (user + system, all threads) of each as information.
# Prints rows as run.sh's table does; run.sh runs it after its table.
#
#   BENCH_JSON=/tmp/importout/big.json BENCH_RUNS=5 bash tests/bench/progress.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${GRADEML_BIN:-$root/build/grademl-tui}
dir=${BENCH_DIR:-/tmp/grademl-bench}
json=${BENCH_JSON:-$dir/big-${BENCH_MB:-1024}MiB.json}
runs=${BENCH_RUNS:-1}
((runs < 3)) && runs=3

die() {
	echo "bench: $*" >&2
	exit 1
}

[[ -x $bin ]] || die "$bin is not built (run make, or set GRADEML_BIN)"
[[ -s $json ]] || die "$json is missing (tests/bench/run.sh builds it; or set BENCH_JSON)"
/usr/bin/time -f '%e' true 2>/dev/null || die "GNU time is needed at /usr/bin/time"
work=$(mktemp -d "${TMPDIR:-/tmp}/grademl-progress.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat "$json" >/dev/null # the page cache warm for both

# one MODE: an import with stderr on a terminal (on) or a pipe (off);
# appends "WALL CPU" to $work/MODE.
one() {
	rm -f "$work/p.db"
	local t=(/usr/bin/time -f '%e %U %S' -o "$work/time" "$bin" import -o "$work/p.db" "$json")
	if [[ $1 == on ]]; then
		python3 "$root/tests/e2e/import_out.py" 120 "$work/out" "${t[@]}" || die "import failed"
		grep -q $'\r''importing' "$work/out" || die "no progress line on the terminal"
	else
		"${t[@]}" 2>&1 | cat >"$work/out"
		[[ ! -s $work/out ]] || die "import printed to a pipe: $(head -c 200 "$work/out")"
	fi
	awk '{ print $1, $2 + $3 }' "$work/time" >>"$work/$1"
}
for ((i = 0; i < runs; i++)); do
	one on
	one off
done
awk -v runs="$runs" '
function best(f,   w, c, b, bc) {
	b = -1
	while ((getline line < f) > 0) {
		split(line, x, " ")
		if (b < 0 || x[1] < b) b = x[1]
		if (bc == "" || x[2] < bc) bc = x[2]
	}
	bw[f] = b; bcpu[f] = bc
}
BEGIN {
	best(ARGV[1]); best(ARGV[2])
	on = bw[ARGV[1]]; off = bw[ARGV[2]]
	r = off > 0 ? on / off : 1e9
	printf "%-34s %-22s %-12s %s\n", "import, progress on / off", sprintf("%.3fx (%.2f / %.2f s)", r, on, off), "<= 1.02x", r <= 1.02 ? "PASS" : "MISS"
	printf "%-34s %-22s %-12s %s\n", "import CPU, progress on / off", sprintf("%.2f / %.2f s", bcpu[ARGV[1]], bcpu[ARGV[2]]), "-", "-"
	printf "(best of %d runs each, taken in turn)\n", runs
}' "$work/on" "$work/off"
