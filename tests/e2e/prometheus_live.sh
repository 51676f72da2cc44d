#!/usr/bin/env bash
# The live Prometheus pull (grademl-tui import --prometheus URL) against the
# real thing: Debian's prometheus scraping Debian's node exporter every
# second, on free loopback ports, its data in this test's directory, while
# sadc records the same host.  A step burns every CPU for 5 s, then (2 s
# later) a step sleeps 5 s; the pull stores what attribution reads, and
#   - cpu.util of each step over its middle 2 s agrees with sar's over the
#     same seconds within 10 percentage points: both are 1 s differences
#     of /proc/stat, the pull's evaluated 0.1 s after each scrape, sadc
#     started 0.02 s after a whole second, so their seconds differ by about
#     0.1 s: 5 points of a 100-point jump inside the window, none outside;
#   - attribution tells the steps apart (cpu use 0.3 or more apart; a skip
#     when sar's shows no such gap either: other work kept the host busy),
#     judges the burning step bound by cpu, and gives each step a cpu use
#     within 0.15 of the one it gives from sar (the whole step: its ends
#     may sit in seconds the two sample differently, 0.1 s each of 5 s);
#   - the step is the scrape interval; --prometheus-step 2s spaces them;
#   - a second job scrapes the same exporter as "otherhost:9100" without
#     node_uname_info: an instance of no host, named in a diagnostic;
#   - --host-alias maps the instance to a manifest's host; --from/--to pull
#     into an empty trace.db every host the server has; --promql adds a
#     series.
# Then the failures, each one line on stderr naming the URL and what
# failed, exit status 2 and trace.db as before: an unreachable server, a
# 404, 503 after the retries, a server slower than --prometheus-timeout
# (a stub, tests/e2e/prom_stub.py), a PromQL error; and a 503 that passes
# on a retry, a bearer token read from a file or the environment (the
# stub checks the header), a token file that is not one token.  The stub
# also plays a server with DCGM's and nvidia_gpu_exporter's series.
# The real-thing part skips, with its reason, only when the packages are
# not installed (make deps installs them); the stub's part always runs.
# About 30 s.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
. "$here/tap.sh"
e2e_init promlive
e2e_home
e2e_need_bin
CHECK="python3 $here/prometheus_live_check.py"
SADC=${SADC:-/usr/lib/sysstat/sadc}
# every server here is on loopback: no proxy in between (libcurl's)
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# port_open PORT
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
# serve NAME CMD...: runs CMD (@PORT@ in it a free port) until its port
# answers; another port when the first was taken meanwhile.  Sets PORT.
serve() {
	local name=$1 try i pid
	shift
	for try in 1 2 3 4 5; do
		PORT=$(free_port)
		"${@//@PORT@/$PORT}" >"$TMP/$name.log" 2>&1 &
		pid=$!
		for i in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			if port_open "$PORT"; then
				pids+=("$pid")
				return 0
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	return 1
}
# api URL: the body of a GET, or nothing
api() {
	python3 -c 'import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except Exception:
    pass' "$1"
}
# q DB SQL: its output
q() { sqlite3 "$1" "$2" 2>&1; }

# same_pages A B: A is byte for byte B but for SQLite's change counter
# (bytes 24..27 and its copy at 92..95), which a failed import into an
# existing trace.db advances (tests/e2e/run.sh says why)
same_pages() {
	cmp -s -n 24 "$1" "$2" && cmp -s -i 28 -n 64 "$1" "$2" && cmp -s -i 96 "$1" "$2"
}
# fails NAME WANT DB ARGS...: the import into DB fails with status 2, one
# line on stderr holding each |-separated part of WANT, DB reading as
# before and nothing left beside it
fails() {
	local name=$1 want=$2 db=$3 rc part lines missing="" beside
	shift 3
	cp "$db" "$TMP/before.db"
	"$BIN" import -o "$db" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	lines=$(wc -l <"$TMP/err")
	IFS='|' read -ra parts <<<"$want"
	for part in "${parts[@]}"; do
		grep -qF -- "$part" "$TMP/err" || missing="$missing '$part'"
	done
	beside=$(ls -a "$(dirname "$db")" | grep -F "$(basename "$db")" | grep -vx "$(basename "$db")")
	if [ $rc = 2 ] && [ "$lines" = 1 ] && [ -z "$missing" ] && same_pages "$db" "$TMP/before.db" &&
		[ -z "$beside" ]; then
		ok "$name: exit 2, one line, trace.db as before: $(cut -c1-160 "$TMP/err")"
	else
		not_ok "$name" "status $rc, $lines lines, missing:$missing, beside: $beside, $(head -c 300 "$TMP/err" | tr '\n' '|')"
	fi
}

# A manifest of one step over the last minute, for the failures
host=$(python3 -c 'import socket; print(socket.gethostname())')
now=$(date +%s%N)
echo "{\"step\": \"s\", \"start_ns\": $((now - 60000000000)), \"end_ns\": $((now - 1000000000)), \"host\": \"$host\"}" >"$TMP/one.jsonl"
"$BIN" import -o "$TMP/fail.db" "$TMP/one.jsonl" 2>"$TMP/err" || not_ok "manifest" "$(cat "$TMP/err")"

# ---- the servers ----
have_prom=1 why=""
for b in prometheus prometheus-node-exporter "$SADC" sadf; do
	command -v "$b" >/dev/null 2>&1 || { have_prom=0; why="no $b"; }
done
PROM="http://127.0.0.1:$(free_port)" # nothing there until the real server runs
if [ $have_prom = 1 ]; then
	if serve node prometheus-node-exporter --web.listen-address=127.0.0.1:@PORT@ \
		--collector.disable-defaults --collector.cpu --collector.meminfo \
		--collector.diskstats --collector.netdev --collector.netclass --collector.uname; then
		node=$PORT
		# a second job scrapes the same exporter as an instance of no host
		cat >"$TMP/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$node']
  - job_name: other
    static_configs:
      - targets: ['127.0.0.1:$node']
        labels: {instance: 'otherhost:9100'}
    metric_relabel_configs:
      - source_labels: [__name__]
        regex: node_uname_info
        action: drop
EOF
		serve prom prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/tsdb" \
			--web.listen-address=127.0.0.1:@PORT@ ||
			{ have_prom=0; why="prometheus did not start: $(tail -c 200 "$TMP/prom.log")"; }
		PROM=http://127.0.0.1:$PORT
	else
		have_prom=0 why="the node exporter did not start: $(tail -c 200 "$TMP/node.log")"
	fi
fi
if [ $have_prom = 1 ]; then
	# both jobs scraped (the first scrape waits for target discovery, ~5 s)
	for i in $(seq 150); do
		n=$(api "$PROM/api/v1/query?query=count(node_memory_MemTotal_bytes)" |
			python3 -c 'import json, sys
try:
    print(json.load(sys.stdin)["data"]["result"][0]["value"][1])
except Exception:
    print(0)')
		[ "$n" = 2 ] && break
		sleep 0.2
	done
	[ "$n" = 2 ] || { have_prom=0; why="prometheus scraped nothing in 30 s"; }
fi
STUB_TOKEN=s3cret-token python3 "$here/prom_stub.py" "$TMP/stub.port" "$TMP/stub.log" "$PROM" 2>"$TMP/stub.err" &
pids+=($!)
for i in $(seq 100); do
	[ -s "$TMP/stub.port" ] && break
	sleep 0.1
done
STUB=http://127.0.0.1:$(cat "$TMP/stub.port" 2>/dev/null)

# ---- failures the stub makes ----
dead=$(free_port)
fails "unreachable server" "http://127.0.0.1:$dead/api/v1/series|cannot connect" "$TMP/fail.db" \
	--prometheus "http://127.0.0.1:$dead"
fails "404" "$STUB/e404/api/v1/series|HTTP 404: no such page" "$TMP/fail.db" --prometheus "$STUB/e404"
fails "503 after the retries" "$STUB/e503/api/v1/series|HTTP 503 (3 tries): unavailable: stub says no" \
	"$TMP/fail.db" --prometheus "$STUB/e503"
t0=$(date +%s%N)
fails "server slower than --prometheus-timeout" "$STUB/slow/api/v1/series|timed out" "$TMP/fail.db" \
	--prometheus "$STUB/slow" --prometheus-timeout 1s
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $ms -lt 5000 ]; then
	ok "the slow server is given up after ${ms} ms (--prometheus-timeout 1s)"
else
	not_ok "the slow server is given up after ${ms} ms (--prometheus-timeout 1s)"
fi
echo "s3cret-token" >"$TMP/token"
printf 'two\nlines\n' >"$TMP/token2"
fails "a token file of two lines" "$TMP/token2|control character" "$TMP/fail.db" \
	--prometheus "$STUB/auth" --prometheus-token-file "$TMP/token2"

# ---- GPU exporters: the stub plays a server with DCGM's and nvidia_gpu_exporter's series ----
echo "{\"step\": \"g\", \"start_ns\": $((now - 60000000000)), \"end_ns\": $((now - 1000000000)), \"host\": \"gpunode\"}" >"$TMP/gpu.jsonl"
if "$BIN" import -o "$TMP/gpu.db" "$TMP/gpu.jsonl" --prometheus "$STUB/gpu" 2>"$TMP/err"; then
	got=$(q "$TMP/gpu.db" "SELECT group_concat(name || ' ' || resource || ' ' || unit || ' ' ||
		coalesce(capacity, 0) || ' ' || value_kind || ' ' || (SELECT min(value) || '-' || max(value)
		FROM samples WHERE metric_id = m.id), '; ') FROM (SELECT * FROM metrics WHERE host = 'gpunode'
		AND name IN ('DCGM_FI_DEV_GPU_UTIL', 'DCGM_FI_DEV_FB_USED', 'utilization.gpu',
		'memory.used', 'power.draw', 'clocks.current.graphics') ORDER BY name, resource) m")
	want="DCGM_FI_DEV_FB_USED gpu0 MiB 81920.0 instant 20.0-20.0; DCGM_FI_DEV_FB_USED gpu1 MiB 81920.0 instant 21.0-21.0;"
	want+=" DCGM_FI_DEV_GPU_UTIL gpu0 % 100.0 instant 20.0-20.0; DCGM_FI_DEV_GPU_UTIL gpu1 % 100.0 instant 21.0-21.0;"
	want+=" clocks.current.graphics gpu0 MHz 1980.0 instant 10.0-10.0; clocks.current.graphics gpu1 MHz 1980.0 instant 11.0-11.0;"
	want+=" memory.used gpu0 MiB 40960.0 instant 10.0-10.0; memory.used gpu1 MiB 40960.0 instant 11.0-11.0;"
	want+=" power.draw gpu0 W 300.0 instant 10.0-10.0; power.draw gpu1 W 300.0 instant 11.0-11.0;"
	want+=" utilization.gpu gpu0 % 100.0 instant 10.0-10.0; utilization.gpu gpu1 % 100.0 instant 11.0-11.0"
	n=$(q "$TMP/gpu.db" "SELECT count(*) FROM metrics")
	if [ "$got" = "$want" ] && [ "$n" = 24 ]; then
		ok "GPU exporters: DCGM's and nvidia_gpu_exporter's 24 series on gpuN (a uuid by its nvidia_smi_index), capacities from the exporters"
	else
		not_ok "GPU exporters" "$n series; got '$got'"
	fi
else
	not_ok "GPU exporters" "$(cat "$TMP/err")"
fi

if [ $have_prom = 0 ]; then
	skip "live pull from Debian's prometheus and node exporter" \
		"$why (make deps installs prometheus prometheus-node-exporter sysstat)"
	summary
	exit $?
fi

# ---- the real thing: a burning step and a sleeping one, sar beside ----
# sadf stamps a record with its whole second: sadc starts just after one,
# so that the stamp is the end of the second the record describes, as the
# sysstat importer takes it
python3 -c 'import time; t = time.time(); time.sleep(int(t) + 1.02 - t)'
"$SADC" 1 "$TMP/sa.bin" &
sadc_pid=$!
pids+=($sadc_pid)
sleep 1.5
python3 - "$TMP/wf.jsonl" "$host" <<'EOF'
import json, multiprocessing as mp, os, sys, time

STEP_S, GAP_S = 5.0, 2.0


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


out, host = sys.argv[1:3]
steps = []
n = os.cpu_count() or 1
with mp.Pool(n) as pool:
    t0 = time.time_ns()
    pool.map(spin, [STEP_S] * n)
    steps.append(("burn", t0, time.time_ns()))
time.sleep(GAP_S)
t0 = time.time_ns()
time.sleep(STEP_S)
steps.append(("sleep", t0, time.time_ns()))
with open(out, "w") as f:
    for name, a, b in steps:
        f.write(json.dumps({"step": name, "start_ns": a, "end_ns": b, "host": host}) + "\n")
EOF
sleep 2.5 # the scrapes and sar samples after the last step
kill -INT $sadc_pid 2>/dev/null
wait $sadc_pid 2>/dev/null
sadf -j -- -u ALL -P ALL "$TMP/sa.bin" >"$TMP/sadf.json" 2>"$TMP/err" ||
	not_ok "sadf" "$(head -c 200 "$TMP/err")"

live=$TMP/live.db
if "$BIN" import -o "$live" "$TMP/wf.jsonl" --prometheus "$PROM" 2>"$TMP/err"; then
	ok "pull: a manifest and the live series in one import"
else
	not_ok "pull" "$(cat "$TMP/err")"
fi
"$BIN" import -o "$TMP/sar.db" "$TMP/wf.jsonl" "$TMP/sadf.json" 2>"$TMP/err" ||
	not_ok "sar import" "$(cat "$TMP/err")"

ncpu=$(nproc)
got=$(q "$live" "SELECT (SELECT count(*) FROM metrics WHERE host = '$host' AND name = 'cpu.util'
	AND unit = '%' AND value_kind = 'mean' AND capacity = 100) || ' ' ||
	(SELECT count(*) FROM metrics WHERE host = '$host' AND name GLOB 'cpu[0-9]*.util') || ' ' ||
	(SELECT capacity FROM metrics WHERE host = '$host' AND name = 'cpu.busy') || ' ' ||
	(SELECT capacity > 1e6 FROM metrics WHERE host = '$host' AND name = 'mem.memused') || ' ' ||
	(SELECT count(*) > 0 FROM metrics WHERE host = '$host' AND name GLOB 'disk:*.util-percent')")
if [ "$got" = "1 $ncpu $ncpu.0 1 1" ]; then
	ok "series: cpu.util (%, mean, capacity 100), $ncpu per-core, cpu.busy of $ncpu cores, memory with its total, disks"
else
	not_ok "series: cpu.util, per-core, cpu.busy, memory, disks" "got '$got' for $ncpu CPUs"
fi
ex=$(q "$live" "SELECT count || ' ' || example FROM diagnostics WHERE code = 'PROM_NO_HOST'")
case $ex in
"1 otherhost:9100"*) ok "diagnostic PROM_NO_HOST names the instance of no host: $ex" ;;
*) not_ok "diagnostic PROM_NO_HOST names otherhost:9100" "got '$ex'" ;;
esac
if [ "$(q "$live" "SELECT count(*) FROM metrics WHERE host <> '$host'")" = 0 ]; then
	ok "nothing of otherhost:9100 pulled"
else
	not_ok "nothing of otherhost:9100 pulled" "$(q "$live" "SELECT DISTINCT host FROM metrics")"
fi

$CHECK means "$live" "$TMP/sar.db" "$TMP/wf.jsonl" 1.5 10 >"$TMP/check" 2>&1
if "$BIN" report --format json "$live" >"$TMP/live.json" 2>"$TMP/err" &&
	"$BIN" report --format json "$TMP/sar.db" >"$TMP/sar.json" 2>>"$TMP/err"; then
	$CHECK attrib "$TMP/live.json" "$TMP/sar.json" burn sleep 0.15 >>"$TMP/check" 2>&1
else
	not_ok "report" "$(head -c 300 "$TMP/err")"
fi
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"skip - "*) skip "${line#skip - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) [ -n "$line" ] && not_ok "checker" "$line" ;;
	esac
done <"$TMP/check"

attrs=$(q "$live" "SELECT json_extract(attrs, '$.step_ns') || ' ' || json_extract(attrs, '$.scrape_interval_ns')
	FROM sources WHERE format = 'prometheus'")
if [ "$attrs" = "1000000000 1000000000" ]; then
	ok "the step is the scrape interval, 1 s (the source's attrs)"
else
	not_ok "the step is the scrape interval, 1 s" "step, scrape interval: '$attrs'"
fi
# a coarser step: rates over it, each stored at its start
cp "$TMP/sar.db" "$TMP/step2.db"
if "$BIN" import -o "$TMP/step2.db" --prometheus "$PROM" --prometheus-step 2s 2>"$TMP/err"; then
	got=$(q "$TMP/step2.db" "SELECT count(DISTINCT s.t_ns - p.t_ns) || ' ' || min(s.t_ns - p.t_ns) FROM samples s
		JOIN samples p ON p.metric_id = s.metric_id AND p.t_ns = (SELECT max(t_ns) FROM samples
		WHERE metric_id = s.metric_id AND t_ns < s.t_ns) JOIN metrics m ON m.id = s.metric_id
		JOIN sources o ON o.id = m.source_id WHERE m.name = 'cpu.util' AND o.format = 'prometheus'")
	if [ "$got" = "1 2000000000" ]; then
		ok "--prometheus-step 2s: cpu.util every 2 s"
	else
		not_ok "--prometheus-step 2s: cpu.util every 2 s" "spacings: $got"
	fi
else
	not_ok "--prometheus-step 2s" "$(cat "$TMP/err")"
fi

# ---- hosts, windows, --promql ----
sed "s/\"host\": \"$host\"/\"host\": \"worker7\"/" "$TMP/wf.jsonl" >"$TMP/w7.jsonl"
"$BIN" import -o "$TMP/w7.db" "$TMP/w7.jsonl" 2>"$TMP/err" || not_ok "w7 manifest" "$(cat "$TMP/err")"
fails "no instance names a host" "$PROM: no instance names a host of trace.db|127.0.0.1:$node (nodename $host)" \
	"$TMP/w7.db" --prometheus "$PROM"
if "$BIN" import -o "$TMP/w7.db" --prometheus "$PROM" --host-alias 127.0.0.1=worker7 2>"$TMP/err" &&
	[ "$(q "$TMP/w7.db" "SELECT count(*) FROM metrics WHERE host = 'worker7' AND name = 'cpu.util'")" = 1 ]; then
	ok "--host-alias 127.0.0.1=worker7 maps the instance to the manifest's host"
else
	not_ok "--host-alias maps the instance" "$(cat "$TMP/err") $(q "$TMP/w7.db" "SELECT DISTINCT host FROM metrics")"
fi
from=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["start_ns"] / 1e9)' "$TMP/wf.jsonl")
to=$(python3 -c 'import datetime, json, sys
t = json.loads(open(sys.argv[1]).readlines()[-1])["end_ns"] / 1e9
print(datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))' "$TMP/wf.jsonl")
if "$BIN" import -o "$TMP/window.db" --prometheus "$PROM" --from "$from" --to "$to" \
	--promql 'up' --name targets-up 2>"$TMP/err"; then
	got=$(q "$TMP/window.db" "SELECT group_concat(h, ' ') FROM (SELECT DISTINCT host AS h FROM metrics
		WHERE name = 'cpu.util' ORDER BY h)")
	up=$(q "$TMP/window.db" "SELECT count(*) FROM metrics WHERE name = 'targets-up' AND resource GLOB '*job=node*'")
	want=$(printf '%s\n' "$host" otherhost | sort | tr '\n' ' ')
	if [ "$got " = "$want" ] && [ "$up" = 1 ]; then
		ok "--from (epoch seconds) --to (ISO-8601) into an empty trace.db: every host ($got); --promql 'up' as targets-up"
	else
		not_ok "--from/--to, every host, --promql" "hosts '$got', want '$want'; targets-up series $up"
	fi
else
	not_ok "--from/--to into an empty trace.db" "$(cat "$TMP/err")"
fi

# ---- failures against the real server, and the stub in front of it ----
cp "$live" "$TMP/live2.db"
fails "PromQL error" "$PROM/api/v1/query_range|HTTP 400|bad_data|--promql 'broken'" "$TMP/live2.db" \
	--prometheus "$PROM" --promql 'rate(up[' --name broken
: >"$TMP/stub.log"
if "$BIN" import -o "$TMP/flaky.db" "$TMP/wf.jsonl" --prometheus "$STUB/flaky" 2>"$TMP/err" &&
	[ "$(grep -c ' /flaky/api/v1/series ' "$TMP/stub.log")" = 3 ]; then
	ok "503 twice, then an answer: the third try pulls"
else
	not_ok "503 twice, then an answer" "$(cat "$TMP/err") $(head -5 "$TMP/stub.log" | tr '\n' '|')"
fi
: >"$TMP/stub.log"
fails "no token: 401" "$STUB/auth/api/v1/series|HTTP 401: unauthorized: bad token" "$TMP/live2.db" \
	--prometheus "$STUB/auth"
if "$BIN" import -o "$TMP/tok.db" "$TMP/wf.jsonl" --prometheus "$STUB/auth" \
	--prometheus-token-file "$TMP/token" 2>"$TMP/err" &&
	grep -q ' /auth/api/v1/query_range Bearer s3cret-token$' "$TMP/stub.log" &&
	! grep ' /auth/api/' "$TMP/stub.log" | grep -v -q -e 'Bearer s3cret-token$' -e ' -$'; then
	ok "--prometheus-token-file: every request carries the bearer token"
else
	not_ok "--prometheus-token-file" "$(cat "$TMP/err") $(tail -3 "$TMP/stub.log" | tr '\n' '|')"
fi
if GRADEML_PROMETHEUS_TOKEN=s3cret-token "$BIN" import -o "$TMP/tok2.db" "$TMP/wf.jsonl" \
	--prometheus "$STUB/auth" 2>"$TMP/err" &&
	[ "$(q "$TMP/tok2.db" "SELECT count(*) FROM metrics WHERE name = 'cpu.util'")" = 1 ]; then
	ok "GRADEML_PROMETHEUS_TOKEN: the token from the environment"
else
	not_ok "GRADEML_PROMETHEUS_TOKEN" "$(cat "$TMP/err")"
fi
GRADEML_PROMETHEUS_TOKEN=wrong-one "$BIN" import -o "$TMP/live2.db" --prometheus "$STUB/auth" 2>"$TMP/err"
rc=$?
if [ $rc = 2 ] && grep -q 'HTTP 401' "$TMP/err" && ! grep -q wrong-one "$TMP/err"; then
	ok "a refused token is not in the message: $(cat "$TMP/err")"
else
	not_ok "a refused token is not in the message" "status $rc: $(cat "$TMP/err")"
fi

summary
