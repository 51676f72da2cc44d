#!/usr/bin/env bash
# Prometheus without limits (issue 26, item 5): a stub server
# (tests/e2e/prom_stub.py) that misbehaves on purpose, and query_range files
# made here, against the bounds of an import:
#   - an answer of 10^6 series (made as it is sent): refused at the
#     series cap, exit 2, one line saying what to narrow, trace.db as
#     before, well within the time limit and 100 MiB;
#   - a pull just under the cap: it imports, and the report on it, within
#     100 MiB each;
#   - a server that trickles a byte every 0.2 s: given up at the deadline
#     (--prometheus-timeout 1s), not kept alive;
#   - a 7 MB label (a disk's device, a --promql series' label): cut to
#     1 KiB in names, resources and diagnostics, counted (LONG_STRING);
#   - a window of 30 days: with --prometheus-step 1s refused before any
#     request, saying the least step; at the scrape interval (1 s), pulled
#     at a coarser step, one request a query (the stub counts them), and
#     counted (PROM_STEP);
#   - a server of 20,001 instances: refused at the discovery;
#   - a query_range file of 10^5 series: refused at the cap.
# Every import runs under `timeout` (and, but under AddressSanitizer,
# `ulimit -v`), so that a binary without these bounds fails here rather than
# eating the machine.  Peak RSS is measured with /usr/bin/time (not under
# AddressSanitizer, whose shadow memory it would count).  About 20 s (60 s
# under AddressSanitizer).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
. "$here/tap.sh"
e2e_init promhostile
e2e_home
e2e_need_bin
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

RSS_MAX=$((100 * 1024)) # KiB: the import's and the report's budget
asan=0
ldd "$BIN" 2>/dev/null | grep -q libasan && asan=1
LIMIT=$((asan ? 90 : 30)) # seconds any one command may take here
if ! [ -x /usr/bin/time ]; then
	skip "prometheus_hostile" "no /usr/bin/time (Debian's time package)"
	summary
	exit $?
fi

stub_pid=""
cleanup() {
	[ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null && wait "$stub_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
python3 "$here/prom_stub.py" "$TMP/stub.port" "$TMP/stub.log" http://127.0.0.1:9 2>"$TMP/stub.err" &
stub_pid=$!
for i in $(seq 100); do
	[ -s "$TMP/stub.port" ] && break
	sleep 0.1
done
STUB=http://127.0.0.1:$(cat "$TMP/stub.port" 2>/dev/null)

# bounded ARGS...: "$BIN" ARGS under the time limit (and an address-space
# limit but under ASan); sets rc, ms (wall) and rss (KiB); stdout in
# $TMP/out, stderr in $TMP/err
bounded() {
	local t0=$(date +%s%N)
	(
		[ $asan = 0 ] && ulimit -v $((4 * 1024 * 1024))
		exec timeout -k 2 $LIMIT /usr/bin/time -f %M -o "$TMP/rss" "$BIN" "$@"
	) >"$TMP/out" 2>"$TMP/err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	rss=$(tail -1 "$TMP/rss" 2>/dev/null)
	[[ $rss =~ ^[0-9]+$ ]] || rss=0
}
# rss_ok: the last command's peak RSS is within budget (always, under ASan)
rss_ok() {
	[ $asan = 1 ] || [ "$rss" -le $RSS_MAX ]
}
rss_shown() {
	[ $asan = 1 ] && echo "RSS not measured under ASan" || echo "$((rss / 1024)) MiB"
}
# same_pages A B: A is B but for SQLite's change counter (see
# prometheus_live.sh)
same_pages() {
	cmp -s -n 24 "$1" "$2" && cmp -s -i 28 -n 64 "$1" "$2" && cmp -s -i 96 "$1" "$2"
}
# refused NAME WANT DB ARGS...: import into DB (none: "") exits 2 within
# the limit and budget, one line on stderr holding each |-separated part of
# WANT, DB as before and nothing beside it
refused() {
	local name=$1 want=$2 db=$3 part lines missing="" beside="" dir
	shift 3
	if [ -n "$db" ]; then
		cp "$db" "$TMP/before.db"
		bounded import -o "$db" "$@"
		dir=$(dirname "$db")
		beside=$(ls -a "$dir" | grep -F "$(basename "$db")" | grep -vx "$(basename "$db")")
	else
		rm -f "$TMP/new.db"
		bounded import -o "$TMP/new.db" "$@"
		[ -e "$TMP/new.db" ] && beside="$TMP/new.db made"
	fi
	lines=$(wc -l <"$TMP/err")
	IFS='|' read -ra parts <<<"$want"
	for part in "${parts[@]}"; do
		grep -qF -- "$part" "$TMP/err" || missing="$missing '$part'"
	done
	if [ $rc = 2 ] && [ "$lines" = 1 ] && [ -z "$missing" ] && [ -z "$beside" ] &&
		{ [ -z "$db" ] || same_pages "$db" "$TMP/before.db"; } && rss_ok; then
		ok "$name: exit 2 in $ms ms, $(rss_shown), one line: $(cut -c1-200 "$TMP/err")"
	else
		not_ok "$name" "status $rc after $ms ms, $(rss_shown), $lines lines, missing:$missing, beside: $beside, $(head -c 300 "$TMP/err" | tr '\n' '|')"
	fi
}
# requests MODE KIND: how many requests of KIND (series, query,
# query_range) the stub logged for MODE since the log was emptied
requests() {
	grep -c " /$1/api/v1/$2 " "$TMP/stub.log"
}
q() { sqlite3 "$1" "$2" 2>&1; }

# a manifest of one step over the last minute, on the stub's host
now=$(date +%s%N)
echo "{\"step\": \"s\", \"start_ns\": $((now - 60000000000)), \"end_ns\": $((now - 1000000000)), \"host\": \"stubnode\"}" >"$TMP/one.jsonl"
"$BIN" import -o "$TMP/base.db" "$TMP/one.jsonl" 2>"$TMP/err" || not_ok "manifest" "$(cat "$TMP/err")"

# ---- too many series ----
cp "$TMP/base.db" "$TMP/many.db"
refused "an answer of 10^6 series" \
	"$STUB/node.1000000/api/v1/query_range (cpu*.util): more than 10000 series|narrow it" \
	"$TMP/many.db" --prometheus "$STUB/node.1000000"

# the most a pull takes, about: 9000 CPUs and the host's other series
cp "$TMP/base.db" "$TMP/most.db"
bounded import -o "$TMP/most.db" --prometheus "$STUB/node.9000"
irc=$rc ims=$ms irss=$rss
n=$(q "$TMP/most.db" "SELECT count(*) FROM metrics WHERE name GLOB 'cpu[0-9]*.util'")
rss=$irss
if [ $irc = 0 ] && [ "$n" = 9000 ] && rss_ok; then
	ok "a pull of 9000 CPUs, under the cap: imported in $ims ms, $(rss_shown)"
else
	not_ok "a pull of 9000 CPUs, under the cap" "status $irc after $ims ms, $(rss_shown), $n CPUs: $(head -c 300 "$TMP/err")"
fi
bounded report "$TMP/most.db"
if [ $rc = 0 ] && rss_ok && grep -q stubnode "$TMP/out"; then
	ok "the report on it: $ms ms, $(rss_shown)"
else
	not_ok "the report on the pull of 9000 CPUs" "status $rc after $ms ms, $(rss_shown): $(head -c 300 "$TMP/err")"
fi

# ---- a server that trickles ----
refused "a server that trickles a byte every 0.2 s, --prometheus-timeout 1s" \
	"$STUB/trickle.0.2/api/v1/series: timed out: the answer was not whole within 1" \
	"$TMP/base.db" --prometheus "$STUB/trickle.0.2" --prometheus-timeout 1s
if [ $rc = 2 ] && [ $ms -lt 5000 ]; then
	ok "the trickling server is given up after $ms ms (the deadline 1 s)"
else
	not_ok "the trickling server is given up within 5 s" "status $rc after $ms ms"
fi

# ---- a 7 MB label ----
cp "$TMP/base.db" "$TMP/label.db"
bounded import -o "$TMP/label.db" --prometheus "$STUB/biglabel.7340032" --promql 'big_one' --name big
got=$(q "$TMP/label.db" "SELECT max(length(CAST(name AS BLOB))) || ' ' || max(length(CAST(resource AS BLOB)))
	|| ' ' || max(length(CAST(host AS BLOB))) FROM metrics")
cuts=$(q "$TMP/label.db" "SELECT count FROM diagnostics WHERE code = 'LONG_STRING'")
ex=$(q "$TMP/label.db" "SELECT max(length(CAST(example AS BLOB))) FROM diagnostics")
disk=$(q "$TMP/label.db" "SELECT count(*) FROM metrics WHERE name GLOB 'disk:dddd*.util-percent'")
size=$(stat -c %s "$TMP/label.db")
read -r name_b res_b host_b <<<"$got"
if [ $rc = 0 ] && [ "${name_b:-0}" -le 1100 ] && [ "${res_b:-0}" -le 1100 ] &&
	[ "${host_b:-0}" -le 1100 ] && [ "${cuts:-0}" -ge 2 ] && [ "${ex:-0}" -le 300 ] &&
	[ "$disk" = 1 ] && [ "$size" -lt 1048576 ] && rss_ok; then
	ok "a 7 MB label: names, resources, hosts of $name_b, $res_b, $host_b bytes at most, $cuts cuts counted (LONG_STRING), examples of $ex bytes at most, trace.db $((size / 1024)) KiB, $(rss_shown)"
else
	not_ok "a 7 MB label cut" "status $rc, longest name/resource/host '$got', LONG_STRING '$cuts', example $ex bytes, disk series $disk, trace.db $size bytes, $(rss_shown): $(head -c 300 "$TMP/err")"
fi

# ---- a long window ----
to=$(date +%s)
from=$((to - 30 * 86400))
: >"$TMP/stub.log"
refused "30 days at --prometheus-step 1s" \
	"$STUB/node.1: --prometheus-step 1.00 s from|more than 10000 steps a series|give --prometheus-step 260s or more" \
	"" --prometheus "$STUB/node.1" --from $from --to $to --prometheus-step 1s
n=$(wc -l <"$TMP/stub.log")
if [ "$n" = 0 ]; then
	ok "refused before any request"
else
	not_ok "refused before any request" "$n requests"
fi
: >"$TMP/stub.log"
rm -f "$TMP/month.db"
bounded import -o "$TMP/month.db" --prometheus "$STUB/node.1" --from $from --to $to
ranges=$(requests node.1 query_range)
step=$(q "$TMP/month.db" "SELECT json_extract(attrs, '$.step_ns') FROM sources")
most=$(q "$TMP/month.db" "SELECT max(c) FROM (SELECT count(*) AS c FROM samples GROUP BY metric_id)")
diag=$(q "$TMP/month.db" "SELECT count || ' ' || example FROM diagnostics WHERE code = 'PROM_STEP'")
# the series table of promlive.c has 24 queries: one request each at most
if [ $rc = 0 ] && [ "$ranges" -ge 1 ] && [ "$ranges" -le 24 ] && [ "${step:-0}" -ge $((30 * 86400 * 100000)) ] &&
	[ "${most:-0}" -le 10000 ] && [ -n "$diag" ] && rss_ok; then
	ok "30 days at the scrape interval: $ranges query_range requests in $ms ms, a step of $((step / 1000000000)) s, $most points a series at most, PROM_STEP '$diag'"
else
	not_ok "30 days at the scrape interval" "status $rc after $ms ms, $ranges query_range requests, step '$step', $most points a series, PROM_STEP '$diag': $(head -c 300 "$TMP/err")"
fi

# ---- too many instances ----
refused "a server of 20001 instances" \
	"$STUB/instances.20001/api/v1/series (which exporters run where): more than 10000 instances" \
	"" --prometheus "$STUB/instances.20001" --from $((to - 60)) --to $to

# ---- a file of too many series ----
python3 - "$TMP/many.json" 100000 <<'EOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write('{"status":"success","data":{"resultType":"matrix","result":[')
    f.write(",".join('{"metric":{"__name__":"m","instance":"h:9100","cpu":"%d"},'
                     '"values":[[1700000000,"1"],[1700000001,"2"]]}' % i for i in range(n)))
    f.write("]}}")
EOF
refused "a query_range file of 10^5 series" \
	"$TMP/many.json: more than 10000 series|narrow the query that wrote it" "" "$TMP/many.json"

summary
