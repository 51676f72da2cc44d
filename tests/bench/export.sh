#!/usr/bin/env bash
# The export benchmark (issue 19): `grademl-tui export` of the explorer
# benchmark's trace.db (the BENCH_MB-MiB Kineto trace imported twice, ~5.6 M
# phases at 1024; built and cached by bench_tui_db in lib.sh, as tui.sh
# uses it) to Chrome trace JSON, plain and gzip'd, against the issue's
# budgets: <= 15 s, peak RSS <= 100 MiB.  The file is warmed in the page
# cache first, as after the imports that made it.  Prints one table;
# exits 0 even when a budget is missed, non-zero only when something failed
# to run.
#
#   bash tests/bench/export.sh          (GRADEML_BIN picks the binary)
#   BENCH_MB=64 bash tests/bench/export.sh
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init export time
bench_work export
bench_tui_db "$work"
cat "$db" >/dev/null

# export OUT: runs the export into OUT; prints its wall time, peak RSS in
# KiB, the phases it wrote and OUT's size in bytes.
export_to() {
	/usr/bin/time -f '%e %M' -o "$work/time" "$bin" export -o "$1" "$db" >"$work/out" 2>"$work/err" ||
		die "export -o $1 failed: $(head -c 300 "$work/err")"
	local secs rss
	read -r secs rss <"$work/time"
	echo "$secs $rss $(sed -n 's/.*: \([0-9]*\) phases.*/\1/p' "$work/out") $(stat -c %s "$1")"
	rm -f "$1"
}
read -r js jr jp jb < <(export_to "$work/out.json")
read -r gs gr gp gb < <(export_to "$work/out.json.gz")
[[ $jp -gt 0 && $jp == "$gp" ]] || die "the exports wrote $jp and $gp phases"

awk -v db="$(stat -c %s "$db")" -v p="$jp" -v js="$js" -v jr="$jr" -v jb="$jb" -v gs="$gs" \
	-v gr="$gr" -v gb="$gb" '
function row(fig, meas, budget, ok) {
	printf "%-30s %-26s %-12s %s\n", fig, meas, budget, ok ? "PASS" : "MISS"
}
BEGIN {
	printf "input: a trace.db of %.1f MiB; %d phases written\n\n", db / 1048576, p
	printf "%-30s %-26s %-12s %s\n", "figure", "measured", "budget", "verdict"
	printf "%-30s %-26s %-12s %s\n", "------", "--------", "------", "-------"
	row("export to .json", sprintf("%.2f s (%.0f MiB)", js, jb / 1048576), "<= 15 s", js <= 15)
	row("export to .json.gz", sprintf("%.2f s (%.0f MiB)", gs, gb / 1048576), "<= 15 s", gs <= 15)
	row("peak RSS, export to .json", sprintf("%.1f MiB", jr / 1024), "<= 100 MiB", jr / 1024 <= 100)
	row("peak RSS, export to .json.gz", sprintf("%.1f MiB", gr / 1024), "<= 100 MiB",
	    gr / 1024 <= 100)
}'
