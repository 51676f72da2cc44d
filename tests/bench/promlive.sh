#!/usr/bin/env bash
# Issue 19's budget for the live Prometheus pull: one hour of one host's
# node_exporter series at 1 s resolution (about 100 series) in 5 s or less
# from a local Prometheus, peak RSS 100 MiB or less.
#
# The hour is backfilled: tests/bench/make_node_openmetrics.py writes a
# 64-core host's node_exporter series (4 disks, 4 links; 539 raw series, 1.9 M
# samples) as OpenMetrics, `promtool tsdb create-blocks-from openmetrics`
# makes TSDB blocks of them (cached in BENCH_DIR), and Debian's prometheus
# serves a copy on a free loopback port.  A manifest gives the workflow
# that hour on that host; `grademl-tui import --prometheus URL` is timed
# (BENCH_RUNS times, default 3; the best time, the largest RSS).  Prints
# rows of figure / measured / budget / verdict as run.sh does.
#
#   bash tests/bench/promlive.sh
#   BENCH_RUNS=5 GRADEML_BIN=build/grademl-tui bash tests/bench/promlive.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib.sh"
bench_init promlive time
runs=${BENCH_RUNS:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, not '$runs'"
for b in prometheus promtool python3 sqlite3; do
	command -v "$b" >/dev/null || die "$b is needed (make deps-bench installs it)"
done
mkdir -p "$dir" || die "cannot create $dir"
case "$(cd "$dir" && pwd)/" in
"$root"/*) die "BENCH_DIR $dir is inside the repository; big files do not belong there" ;;
esac

start=1767225600 # 2026-01-01T00:00:00Z: the hour's blocks are cached
gen=$here/make_node_openmetrics.py
blocks=$dir/promlive-tsdb
if [[ ! -d $blocks || $gen -nt $blocks ]]; then
	echo "bench-promlive: building $blocks ..." >&2
	rm -rf "$blocks" "$blocks.tmp" "$dir/promlive.om"
	python3 "$gen" --start $start --seconds 3600 --host benchhost -o "$dir/promlive.om" ||
		die "make_node_openmetrics.py failed"
	promtool tsdb create-blocks-from openmetrics "$dir/promlive.om" "$blocks.tmp" >/dev/null ||
		die "promtool tsdb create-blocks-from openmetrics failed"
	rm -f "$dir/promlive.om"
	mv "$blocks.tmp" "$blocks"
fi
work=$(mktemp -d "$dir/promlive.XXXXXX")
prom_pid=""
cleanup() {
	if [[ -n $prom_pid ]]; then
		kill "$prom_pid" 2>/dev/null || true
		wait "$prom_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
cp -r "$blocks" "$work/tsdb"
printf 'global:\n  scrape_interval: 1s\n' >"$work/prom.yml"

# a free port (another one if it was taken before the server bound it)
for try in 1 2 3 4 5; do
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	prometheus --config.file="$work/prom.yml" --storage.tsdb.path="$work/tsdb" \
		--storage.tsdb.retention.time=100y --web.listen-address=127.0.0.1:$port \
		>"$work/prom.log" 2>&1 &
	prom_pid=$!
	for i in $(seq 100); do
		kill -0 $prom_pid 2>/dev/null || break
		python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=1)' "http://127.0.0.1:$port/-/ready" 2>/dev/null && break 2
		sleep 0.1
	done
	kill $prom_pid 2>/dev/null || true
	wait $prom_pid 2>/dev/null || true
	prom_pid=""
done
[[ -n $prom_pid ]] || die "prometheus did not start: $(tail -c 300 "$work/prom.log")"

echo '{"step": "hour", "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T01:00:00Z", "host": "benchhost"}' \
	>"$work/wf.jsonl"
"$bin" import -o "$work/base.db" "$work/wf.jsonl" 2>"$work/err" || die "manifest: $(cat "$work/err")"
best="" peak=0
for ((r = 0; r < runs; r++)); do
	cp "$work/base.db" "$work/pull.db"
	/usr/bin/time -f '%e %M' -o "$work/time" "$bin" import -o "$work/pull.db" \
		--prometheus "http://127.0.0.1:$port" >/dev/null 2>"$work/err" ||
		die "the pull failed: $(head -c 300 "$work/err")"
	read -r t m <"$work/time"
	if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
		best=$t
	fi
	((m > peak)) && peak=$m
done
read -r series samples <<<"$(sqlite3 -separator ' ' "$work/pull.db" \
	"SELECT count(*), (SELECT count(*) FROM samples) FROM metrics")"

awk -v t="$best" -v m="$peak" -v n="$series" -v s="$samples" -v runs="$runs" '
function row(fig, meas, budget, ok) {
	printf "%-34s %-22s %-12s %s\n", fig, meas, budget, ok ? "PASS" : "MISS"
}
BEGIN {
	printf "live pull: 1 h of one host at 1 s, %d series, %d samples; best of %d run(s)\n",
	       n, s, runs
	row("live pull, 1 h of ~100 series", sprintf("%.2f s", t), "<= 5 s", t <= 5)
	row("peak RSS, live pull", sprintf("%.1f MiB", m / 1024), "<= 100 MiB", m / 1024 <= 100)
}'
