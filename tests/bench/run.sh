#!/usr/bin/env bash
# Import benchmarks against DESIGN.md's "Performance budget" (`make bench`).
#
# Builds a BENCH_MB-MiB Kineto trace (default 1024) by replicating a real
# sample (tests/bench/make_big_trace.py), plus a gzip -1 copy of it, both
# cached in BENCH_DIR (default /tmp/grademl-bench; never the repository),
# then measures with /usr/bin/time:
#   a parse-only streaming pass over the plain JSON (build/tools/parse_only),
#   `grademl-tui import` of the plain JSON (wall time, peak RSS, db size),
#   `grademl-tui import` of the .gz,
#   `grademl-tui import` of a sadf -j file of ~2 M samples (make_big_sadf.py),
#   `grademl-tui import` of a ~200 MB Spark log (make_big_spark.py; needs
#   ../shared/samples),
#   and, after the table, tests/bench/longstr.sh: one 160 MiB string,
#   tests/bench/progress.sh: the import with its progress line on, and
#   tests/bench/export.sh: the export of tui.sh's trace.db to Chrome JSON, and
#   tests/bench/promlive.sh: a live pull of an hour from a local Prometheus.
# Prints one table of figure / measured / budget / verdict.  Exits 0 even when
# a budget is missed; non-zero only when something failed to run.
#
#   GRADEML_BIN=build/grademl-tui GRADEML_TOOLS=build/tools bash tests/bench/run.sh
#   BENCH_MB=200 BENCH_RUNS=3 BENCH_DIR=/var/tmp/b BENCH_SAMPLE=x.json.gz bash tests/bench/run.sh
# BENCH_RUNS (default 1) repeats each measurement and keeps the best time.
# tests/bench/metric.sh runs the metric-import row alone, to compare builds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${GRADEML_BIN:-$root/build/grademl-tui}
tools=${GRADEML_TOOLS:-$root/build/tools}
dir=${BENCH_DIR:-/tmp/grademl-bench}
mb=${BENCH_MB:-1024}
sample=${BENCH_SAMPLE:-}
runs=${BENCH_RUNS:-1}

die() {
	echo "bench: $*" >&2
	exit 1
}

[[ $mb =~ ^[0-9]+$ && $mb -gt 0 ]] || die "BENCH_MB must be a positive whole number of MiB, not '$mb'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, not '$runs'"
[[ -x $bin ]] || die "$bin is not built (run make, or set GRADEML_BIN)"
[[ -x $tools/parse_only ]] || die "$tools/parse_only is not built (make build/tools/parse_only, or set GRADEML_TOOLS)"
if ! { [[ -x /usr/bin/time ]] && /usr/bin/time -f '%e' true 2>/dev/null; }; then
	die "GNU time is needed at /usr/bin/time (Debian: apt-get install time)"
fi
command -v python3 >/dev/null || die "python3 is needed to build the input"
command -v gzip >/dev/null || die "gzip is needed"
mkdir -p "$dir" || die "cannot create $dir"
case "$(cd "$dir" && pwd)/" in
"$root"/*) die "BENCH_DIR $dir is inside the repository; big files do not belong there" ;;
esac

json=$dir/big-${mb}MiB.json
gz=$json.gz
work=$(mktemp -d "$dir/run.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- inputs, cached by size (rebuilt when the generator changes) ----
if [[ ! -s $json || $here/make_big_trace.py -nt $json ]]; then
	echo "bench: building $json ($mb MiB) ..." >&2
	rm -f "$json" "$gz"
	python3 "$here/make_big_trace.py" --mb "$mb" ${sample:+--sample "$sample"} -o "$json.tmp" ||
		die "make_big_trace.py failed"
	mv "$json.tmp" "$json"
fi
if [[ ! -s $gz || $json -nt $gz ]]; then
	echo "bench: compressing $gz (gzip -1) ..." >&2
	gzip -1 -c "$json" >"$gz.tmp" || die "gzip failed"
	mv "$gz.tmp" "$gz"
fi
json_bytes=$(stat -c %s "$json")
gz_bytes=$(stat -c %s "$gz")

t_parse='' t_parsegz='' t_import='' m_import='' t_importgz='' m_importgz='' t_sadf='' m_sadf='' t_spark='' m_spark=''
# measure NAME CMD...: runs CMD under /usr/bin/time BENCH_RUNS times; sets
# t_NAME (the best wall time, s) and m_NAME (the largest peak RSS, KiB)
measure() {
	local name=$1 i t m best='' peak=0
	shift
	for ((i = 0; i < runs; i++)); do
		rm -f "$work"/*.db "$work"/*.db-wal "$work"/*.db-journal
		if ! /usr/bin/time -f '%e %M' -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
			echo "bench: failed: $*" >&2
			tail -n 5 "$work/$name.err" >&2
			exit 1
		fi
		read -r t m <"$work/$name.time"
		if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$t
		fi
		((m > peak)) && peak=$m
	done
	printf -v "t_$name" '%s' "$best"
	printf -v "m_$name" '%s' "$peak"
}

# Warm the page cache so every pass reads from memory alike.
cat "$json" "$gz" >/dev/null

measure parse "$tools/parse_only" "$json"
[[ $(cat "$work/parse.out") == "$json_bytes" ]] || die "parse_only read $(cat "$work/parse.out") bytes, not $json_bytes"
measure parsegz "$tools/parse_only" "$gz"

db=$work/plain.db
measure import "$bin" import -o "$db" "$json"
db_bytes=0
for f in "$db" "$db-wal" "$db-journal"; do
	[[ -e $f ]] && db_bytes=$((db_bytes + $(stat -c %s "$f")))
done
if command -v sqlite3 >/dev/null; then
	phases=$(sqlite3 "$db" 'SELECT count(*) FROM phases') || die "cannot count phases in $db"
else
	phases=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM phases").fetchone()[0])' "$db") ||
		die "cannot count phases in $db"
fi
rm -f "$db" "$db-wal" "$db-journal"

measure importgz "$bin" import -o "$work/gz.db" "$gz"
rm -f "$work/gz.db"

# Metric import: the demo's sar capture replicated (issue 4: >= 1 M samples/s).
sadf=$dir/big-sadf.json
if [[ ! -s $sadf || $here/make_big_sadf.py -nt $sadf ]]; then
	python3 "$here/make_big_sadf.py" --copies 200 -o "$sadf.tmp" || die "make_big_sadf.py failed"
	mv "$sadf.tmp" "$sadf"
fi
measure sadf "$bin" import -o "$work/sadf.db" "$sadf"
if command -v sqlite3 >/dev/null; then
	msamples=$(sqlite3 "$work/sadf.db" 'SELECT count(*) FROM samples') || die "cannot count samples"
else
	msamples=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM samples").fetchone()[0])' "$work/sadf.db")
fi
rm -f "$work/sadf.db"

# Spark import: a real NDS log replicated (issue 4: >= 50 MB/s); needs
# ../shared/samples and zstd, else the row says skipped.
spark=$dir/big-spark.log
spark_bytes=0
if [[ ! -s $spark || $here/make_big_spark.py -nt $spark ]] && command -v zstd >/dev/null; then
	python3 "$here/make_big_spark.py" --copies 5 -o "$spark.tmp" 2>/dev/null && mv "$spark.tmp" "$spark"
	rm -f "$spark.tmp"
fi
if [[ -s $spark ]]; then
	spark_bytes=$(stat -c %s "$spark")
	cat "$spark" >/dev/null
	measure spark "$bin" import -o "$work/spark.db" "$spark"
	rm -f "$work/spark.db"
fi

# ---- the table ----
awk -v mb="$mb" -v jb="$json_bytes" -v gb="$gz_bytes" -v db="$db_bytes" -v ph="$phases" -v runs="$runs" \
	-v tp="$t_parse" -v tpg="$t_parsegz" -v ti="$t_import" -v mi="$m_import" \
	-v tg="$t_importgz" -v mg="$m_importgz" -v ts="$t_sadf" -v ms="$m_sadf" -v ns="$msamples" \
	-v tk="$t_spark" -v mk="$m_spark" -v kb="$spark_bytes" '
function ratio(a, b) { return b > 0 ? a / b : 1e9 }
function row(fig, meas, budget, ok) {
	printf "%-34s %-22s %-12s %s\n", fig, meas, budget, ok ? "PASS" : "MISS"
}
function info(fig, meas) { printf "%-34s %-22s %-12s %s\n", fig, meas, "-", "-" }
BEGIN {
	M = 1048576
	printf "input: %.1f MiB JSON (%d bytes), %.1f MiB gzip -1; %d phases imported; best of %d run(s)\n\n",
	       jb / M, jb, gb / M, ph, runs
	printf "%-34s %-22s %-12s %s\n", "figure", "measured", "budget", "verdict"
	printf "%-34s %-22s %-12s %s\n", "------", "--------", "------", "-------"
	info("parse-only pass, plain", sprintf("%.2f s (%.0f MiB/s)", tp, ratio(jb / M, tp)))
	info("parse-only pass, .gz", sprintf("%.2f s", tpg))
	info("import, plain", sprintf("%.2f s", ti))
	info("import, .gz", sprintf("%.2f s", tg))
	speed = ratio(jb / M, ti)
	row("import speed", sprintf("%.0f MiB/s", speed), ">= 150", speed >= 150)
	r = ratio(ti, tp)
	info("import time / parse-only time", sprintf("%.2fx", r)) # printed, not a budget (DESIGN.md)
	rss = (mi > mg ? mi : mg) / 1024
	row("peak RSS while importing", sprintf("%.1f MiB", rss), "<= 100 MiB", rss <= 100)
	r = ratio(tg, ti)
	row(".gz time / plain time", sprintf("%.2fx", r), "<= 1.3x", r <= 1.3)
	r = ratio(db, jb)
	row("trace.db size / JSON size", sprintf("%.3f (%.1f MiB)", r, db / M), "<= 0.6", r <= 0.6)
	info("phases", sprintf("%d", ph))
	r = ratio(ns, ts)
	row("metric import (sadf -j)", sprintf("%.2f M samples/s", r / 1e6), ">= 1 M/s", r >= 1e6)
	row("peak RSS, metric import", sprintf("%.1f MiB", ms / 1024), "<= 100 MiB", ms / 1024 <= 100)
	info("samples", sprintf("%d in %.2f s", ns, ts))
	if (kb > 0) {
		r = ratio(kb / 1e6, tk)
		row("Spark import", sprintf("%.0f MB/s (%.0f MB)", r, kb / 1e6), ">= 50 MB/s", r >= 50)
		row("peak RSS, Spark import", sprintf("%.1f MiB", mk / 1024), "<= 100 MiB", mk / 1024 <= 100)
	} else {
		info("Spark import", "skipped (no ../shared/samples or zstd)")
	}
}'
echo
GRADEML_BIN=$bin BENCH_DIR=$dir BENCH_RUNS=$runs bash "$here/longstr.sh"
# the import again with its progress line on a terminal, against a pipe
echo
GRADEML_BIN=$bin BENCH_JSON=$json BENCH_RUNS=$runs bash "$here/progress.sh"
# the export of the explorer benchmark's trace.db (made here when missing)
echo
GRADEML_BIN=$bin BENCH_DIR=$dir BENCH_MB=$mb bash "$here/export.sh"
echo
GRADEML_BIN=$bin BENCH_DIR=$dir BENCH_RUNS=$runs bash "$here/promlive.sh"
