#!/usr/bin/env bash
# DESIGN.md's "one string of any length: linear time, memory within the
# bound above", measured: `grademl-tui import` of a small trace whose one
# event name is BENCH_LONG_MB MiB long (default 160; made by
# tests/tools/make_long_string.py, with a gzip -1 copy, cached in BENCH_DIR),
# plain and .gz.  Prints rows as run.sh's table does: each import's time and
# speed against the 150 MiB/s any real trace must reach, and the peak RSS
# against 100 MiB.  Then one event of BENCH_LONG_MB MiB of each other kind
# (make_long_string.py --field number, space, strings, members; plain only):
# the number must be rejected (exit 2), the others import; each row gives
# the time and the peak RSS against 100 MiB.  run.sh runs it after its own
# table; alone:
#
#   bash tests/bench/longstr.sh
#   BENCH_LONG_MB=320 BENCH_RUNS=3 GRADEML_BIN=build/grademl-tui bash tests/bench/longstr.sh
#
# BENCH_RUNS (default 1) repeats each import and keeps the best time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${GRADEML_BIN:-$root/build/grademl-tui}
dir=${BENCH_DIR:-/tmp/grademl-bench}
mb=${BENCH_LONG_MB:-160}
runs=${BENCH_RUNS:-1}
gen=$root/tests/tools/make_long_string.py

die() {
	echo "bench: $*" >&2
	exit 1
}

[[ $mb =~ ^[0-9]+$ && $mb -gt 0 ]] || die "BENCH_LONG_MB must be a positive whole number of MiB, not '$mb'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, not '$runs'"
[[ -x $bin ]] || die "$bin is not built (run make, or set GRADEML_BIN)"
/usr/bin/time -f '%e' true 2>/dev/null || die "GNU time is needed at /usr/bin/time"
command -v python3 >/dev/null || die "python3 is needed to build the input"
mkdir -p "$dir" || die "cannot create $dir"
case "$(cd "$dir" && pwd)/" in
"$root"/*) die "BENCH_DIR $dir is inside the repository; big files do not belong there" ;;
esac

kinds=(number space strings members)
json=$dir/long-string-${mb}MiB.json
gz=$json.gz
# build FILE FIELD: FILE made by the generator with --field FIELD, unless it
# is there and newer than the generator (gzip when FILE ends in .gz)
build() {
	local tmp=$dir/long.tmp.json${1##*.json}
	if [[ ! -s $1 || $gen -nt $1 ]]; then
		echo "bench: building $1 ..." >&2
		python3 "$gen" --mb "$mb" --field "$2" -o "$tmp" || die "make_long_string.py failed"
		mv "$tmp" "$1"
	fi
}
build "$json" name
build "$gz" name
for kind in "${kinds[@]}"; do
	build "$dir/long-$kind-${mb}MiB.json" "$kind"
done
work=$(mktemp -d "$dir/long.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat "$json" "$gz" >/dev/null

# imp FILE [STATUS]: prints the best wall time (s) and the largest peak RSS
# (KiB) of importing FILE, which must exit with STATUS (default 0)
imp() {
	local i t m st best='' peak=0
	for ((i = 0; i < runs; i++)); do
		rm -f "$work"/t.db*
		st=0
		/usr/bin/time -f '%e %M' -o "$work/time" "$bin" import -o "$work/t.db" "$1" \
			>/dev/null 2>"$work/err" || st=$?
		[[ $st == "${2:-0}" ]] ||
			die "import of $1 exited with $st, not ${2:-0}: $(head -c 300 "$work/err")"
		read -r t m <<<"$(tail -n 1 "$work/time")"
		if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$t
		fi
		((m > peak)) && peak=$m
	done
	echo "$best $peak"
}
read -r tp mp <<<"$(imp "$json")"
read -r tg mg <<<"$(imp "$gz")"

awk -v mb="$mb" -v jb="$(stat -c %s "$json")" -v gb="$(stat -c %s "$gz")" -v tp="$tp" -v mp="$mp" \
	-v tg="$tg" -v mg="$mg" '
function speed(t) { return t > 0 ? jb / 1048576 / t : 1e9 }
function row(fig, meas, budget, ok) {
	printf "%-34s %-22s %-12s %s\n", fig, meas, budget, ok ? "PASS" : "MISS"
}
BEGIN {
	printf "one %d MiB string: %.1f MiB JSON, %.2f MiB gzip -1\n", mb, jb / 1048576, gb / 1048576
	row(sprintf("one %d MiB string: import", mb), sprintf("%.2f s (%.0f MiB/s)", tp, speed(tp)),
	    ">= 150", speed(tp) >= 150)
	row(sprintf("one %d MiB string: import .gz", mb), sprintf("%.2f s (%.0f MiB/s)", tg, speed(tg)),
	    ">= 150", speed(tg) >= 150)
	rss = (mp > mg ? mp : mg) / 1024
	row(sprintf("one %d MiB string: peak RSS", mb), sprintf("%.1f MiB", rss), "<= 100 MiB", rss <= 100)
}'

# the other kinds, one at a time (each file is read once before it is timed)
for kind in "${kinds[@]}"; do
	f=$dir/long-$kind-${mb}MiB.json
	cat "$f" >/dev/null
	want=0
	[[ $kind == number ]] && want=2
	read -r t m <<<"$(imp "$f" "$want")"
	awk -v kind="$kind" -v mb="$mb" -v jb="$(stat -c %s "$f")" -v t="$t" -v m="$m" -v want="$want" '
function row(fig, meas, budget, ok) {
	printf "%-34s %-22s %-12s %s\n", fig, meas, budget, ok ? "PASS" : "MISS"
}
BEGIN {
	fig = sprintf("one %d MiB %s event", mb, kind)
	if (want)
		printf "%-34s %-22s %-12s %s\n", fig ": rejected", sprintf("%.2f s", t), "exit 2", "PASS"
	else
		printf "%-34s %-22s %-12s\n", fig ": import",
		       sprintf("%.2f s (%.0f MiB/s)", t, t > 0 ? jb / 1048576 / t : 1e9), "linear"
	row(fig ": peak RSS", sprintf("%.1f MiB", m / 1024), "<= 100 MiB", m / 1024 <= 100)
}'
done
