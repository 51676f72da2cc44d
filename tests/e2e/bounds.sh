#!/usr/bin/env bash
# Nothing hangs, nothing grows without bound: end-to-end checks of
# grademl-tui ($GRADEML_BIN) on the demo capture doctored with sqlite3.
#
#   a. parent links that loop (phase 2 under 3, 3 under 2; then the
#      analyses' cache pointing into such a loop): report, analyze, query
#      and the headless explorer each exit 2 within seconds with one line
#      naming the file;
#   b. query limits: a recursive CTE through the sql escape stops at
#      --timeout; a sorted cartesian join, a cartesian join's rows and a
#      recursive CTE that keeps its rows stop at --max-memory, with never
#      more than that in the temporary directory; each with exit 2 and one
#      line naming the option; the explorer's ':' queries have the time
#      and memory limits too;
#   c. a query while another connection holds the write lock (an import's
#      commit) waits for it and succeeds;
#   d. a table written to a pipe is within a few times its CSV whatever its
#      longest cell (query and summary), and a query's peak resident set
#      stays within --max-memory (and the binary's own) however large one
#      value or the result is; in the explorer too, which holds a display
#      copy of a ':' result beside it.
#
# Each command runs under `timeout`, so a hang is a failure, not a stuck
# test.  Prints "ok - NAME" / "not ok - NAME (why)", then a summary; exits 1
# when any check failed.  Needs: bash, python3, sqlite3, timeout.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-bounds

export HOME=$TMP/home XDG_STATE_HOME=$TMP/state
mkdir -p "$HOME"

e2e_need_bin
for tool in python3 sqlite3 timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool $tool" "not installed"
		summary
		exit 1
	fi
done
if ! bash tests/data/demo/import.sh "$BIN" "$TMP/demo.db" >"$TMP/import.log" 2>&1; then
	not_ok "demo capture imports" "$(tail -n 3 "$TMP/import.log" | tr '\n' '|')"
	summary
	exit 1
fi

# expect_error NAME WANT LIMIT CMD...: CMD exits 2 within LIMIT seconds
# with nothing on stdout and one line on stderr that contains WANT.
expect_error() {
	local name=$1 want=$2 limit=$3 rc=0
	shift 3
	timeout "$limit" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	if [ "$rc" -eq 124 ]; then
		not_ok "$name" "still running after $limit s"
	elif [ "$rc" -ne 2 ]; then
		not_ok "$name" "exit $rc, not 2: $(head -c 200 "$TMP/err")"
	elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -qF -- "$want" "$TMP/err"; then
		not_ok "$name" "stderr is not one line with '$want': $(head -c 300 "$TMP/err")"
	elif [ -s "$TMP/out" ]; then
		not_ok "$name" "wrote to stdout: $(head -c 200 "$TMP/out")"
	else
		ok "$name"
	fi
}

# ---- a. parent links that loop ----

LOOP=$TMP/loop.db
cp "$TMP/demo.db" "$LOOP"
sqlite3 "$LOOP" "UPDATE phases SET parent_id = 3 WHERE id = 2;
	UPDATE phases SET parent_id = 2 WHERE id = 3;"
want="loop.db: phase 2's parents form a loop"
expect_error "a: report on a parent loop" "$want" 20 "$BIN" report "$LOOP"
expect_error "a: report --format json on a parent loop" "$want" 20 "$BIN" report --format json "$LOOP"
cp "$LOOP" "$TMP/loop-analyze.db"
expect_error "a: analyze on a parent loop" "loop-analyze.db: phase 2's parents form a loop" 20 \
	"$BIN" analyze "$TMP/loop-analyze.db"
expect_error "a: a query's path through a parent loop" "loop.db: phase 2's parents form a loop" 20 \
	"$BIN" query "$LOOP" 'phases kind = step | select id, path'
printf 'dump\n' >"$TMP/first.keys"
expect_error "a: the headless explorer on a parent loop" "$want" 20 \
	"$BIN" --keys "$TMP/first.keys" --dump "$TMP/first.txt" --size 80x24 "$LOOP"

# The cache analyze wrote on the healthy file, and the loop made after:
# the cache still matches (no import raised an id), and its issues point
# into the loop.
CLOOP=$TMP/cloop.db
cp "$TMP/demo.db" "$CLOOP"
if ! "$BIN" analyze "$CLOOP" >"$TMP/analyze.out" 2>&1; then
	not_ok "a: analyze the demo capture" "$(head -c 200 "$TMP/analyze.out")"
fi
sqlite3 "$CLOOP" "UPDATE phases SET parent_id = 3 WHERE id = 2;
	UPDATE phases SET parent_id = 2 WHERE id = 3;
	UPDATE issues SET phase_id = 3 WHERE id = 1;"
want="cloop.db: phase 3's parents form a loop"
expect_error "a: report from a cache that points into a loop" "$want" 20 "$BIN" report "$CLOOP"
printf 'i\ndump\n' >"$TMP/issues.keys"
expect_error "a: the explorer's issues screen into a loop" "$want" 20 \
	"$BIN" --keys "$TMP/issues.keys" --dump "$TMP/issues.txt" --size 80x24 "$CLOOP"
printf 'type :phases kind = step | select id, name\nEnter\nj\nEnter\ndump\n' >"$TMP/goto.keys"
expect_error "a: Enter on a query's row whose phase is in a loop" "cloop.db: phase" 20 \
	"$BIN" --keys "$TMP/goto.keys" --dump "$TMP/goto.txt" --size 80x24 "$CLOOP"
# the healthy part of the tree still opens
rc=0
timeout 20 "$BIN" --keys "$TMP/first.keys" --dump "$TMP/top.txt" --size 80x24 "$CLOOP" \
	>"$TMP/out" 2>"$TMP/err" || rc=$?
if [ "$rc" -eq 0 ] && grep -q demo "$TMP/top.txt"; then
	ok "a: the explorer opens the file at its healthy top"
else
	not_ok "a: the explorer opens the file at its healthy top" "exit $rc: $(head -c 200 "$TMP/err")"
fi

# ---- b. query limits ----

DEMO=$TMP/demo.db
endless='sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c'
expect_error "b: a recursive CTE stops at --timeout" "query stopped after 2.00 s; raise --timeout" 20 \
	"$BIN" query --timeout 2s "$DEMO" "$endless"

# watch_temp PID DIR: the most bytes the files PID holds open under DIR
# (deleted temporary files included) took together while it ran
watch_temp() {
	local pid=$1 dir=$2 peak=0 sum f
	while kill -0 "$pid" 2>/dev/null; do
		sum=0
		for f in /proc/"$pid"/fd/*; do
			case $(readlink "$f" 2>/dev/null) in
			"$dir"/*) sum=$((sum + $(stat -L -c %s "$f" 2>/dev/null || echo 0))) ;;
			esac
		done
		[ "$sum" -gt "$peak" ] && peak=$sum
		sleep 0.05
	done
	echo "$peak"
}

# cartesian QUERY LIMIT BYTES WANT NAME: QUERY under --max-memory LIMIT
# (BYTES) with its temporary directory watched: exit 2 with one line
# holding WANT, and never more than BYTES of temporary files.
cartesian() {
	local q=$1 limit=$2 bytes=$3 want=$4 name=$5 rc=0 peak
	mkdir -p "$TMP/sqltmp"
	SQLITE_TMPDIR=$TMP/sqltmp TMPDIR=$TMP/sqltmp timeout 60 "$BIN" query --max-memory "$limit" \
		"$DEMO" "$q" >"$TMP/out" 2>"$TMP/err" &
	local pid=$!
	peak=$(watch_temp "$pid" "$TMP/sqltmp")
	wait "$pid" || rc=$?
	if [ "$rc" -ne 2 ] || ! grep -qF "$want" "$TMP/err" || [ "$(wc -l <"$TMP/err")" -ne 1 ]; then
		not_ok "$name" "exit $rc: $(head -c 200 "$TMP/err")"
	elif [ "$peak" -gt "$bytes" ]; then
		not_ok "$name" "$peak bytes of temporary files, over $bytes"
	else
		ok "$name"
	fi
}
cartesian 'sql SELECT a.id, b.id, c.id FROM phases a, phases b, phases c
	ORDER BY a.name_id + b.name_id + c.start_ns' 32MiB $((32 << 20)) \
	"query stopped: it needs more than 32 MiB of temporary files; raise --max-memory" \
	"b: a sorted cartesian join stops at --max-memory of temporary files"
cartesian 'sql SELECT a.id, b.id, b.name_id FROM phases a, phases b' 16MiB $((16 << 20)) \
	"query stopped: it needs more than 16 MiB of memory; raise --max-memory" \
	"b: a cartesian join's result stops at --max-memory"
cartesian 'sql WITH RECURSIVE c(x, y) AS (SELECT 1, 1 UNION SELECT x + 1, y * 7 % 1000003
	FROM c) SELECT count(*) FROM c' 16MiB $((16 << 20)) "raise --max-memory" \
	"b: a recursive CTE that keeps its rows stops at --max-memory"
# expect_usage NAME WANT CMD...: CMD exits 2 with WANT in stderr's first line
expect_usage() {
	local name=$1 want=$2 rc=0
	shift 2
	timeout 5 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	if [ "$rc" -eq 2 ] && head -n 1 "$TMP/err" | grep -qF -- "$want"; then
		ok "$name"
	else
		not_ok "$name" "exit $rc: $(head -n 1 "$TMP/err")"
	fi
}
expect_usage "b: a bad --timeout is a usage error" "invalid --timeout 'soon'" \
	"$BIN" query --timeout soon "$DEMO" 'phases | count'
expect_usage "b: a bad --max-memory is a usage error" "invalid --max-memory 'lots'" \
	"$BIN" query --max-memory lots "$DEMO" 'phases | count'
expect_usage "b: the explorer's bad --max-memory is a usage error" "invalid --max-memory '-1'" \
	"$BIN" --max-memory -1 "$DEMO"
rc=0
timeout 20 "$BIN" query --timeout 0 --max-memory 0 "$DEMO" 'phases | count' >"$TMP/out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -q 1075 "$TMP/out"; then
	ok "b: --timeout 0 and --max-memory 0 lift the limits"
else
	not_ok "b: --timeout 0 and --max-memory 0 lift the limits" "exit $rc: $(head -c 200 "$TMP/out")"
fi

# explorer_stops NAME QUERY WANT OPTION...: the explorer run with OPTION
# stops QUERY typed at ':' with WANT on its screen, and the next query runs
explorer_stops() {
	local name=$1 q=$2 want=$3 rc=0
	shift 3
	printf 'type :%s\nEnter\ndump\ntype :phases | count\nEnter\n' "$q" >"$TMP/limit.keys"
	timeout 30 "$BIN" "$@" --keys "$TMP/limit.keys" --dump "$TMP/limit.txt" --size 100x24 \
		"$DEMO" >"$TMP/out" 2>"$TMP/err" || rc=$?
	if [ "$rc" -eq 0 ] && grep -qF -- "$want" "$TMP/limit.txt" && grep -q 1075 "$TMP/limit.txt"; then
		ok "$name"
	else
		not_ok "$name" "exit $rc: $(head -c 200 "$TMP/err") $(grep -m1 -i query "$TMP/limit.txt" 2>/dev/null)"
	fi
}
explorer_stops "b: the explorer's ':' query stops at --max-memory and the next one runs" \
	'sql SELECT a.id, b.id, c.id FROM phases a, phases b, phases c ORDER BY a.name_id + b.name_id + c.start_ns' \
	"raise --max-memory" --max-memory 64MiB
explorer_stops "b: the explorer's ':' query stops at --timeout and the next one runs" "$endless" \
	"query stopped after 2.00 s; raise --timeout" --timeout 2s
expect_usage "b: the explorer's bad --timeout is a usage error" "invalid --timeout 'soon'" \
	"$BIN" --timeout soon "$DEMO"

# ---- c. a query during an import's commit waits for it ----

cp "$DEMO" "$TMP/busy.db"
python3 - "$TMP/busy.db" "$BIN" >"$TMP/busy.out" 2>&1 <<'EOF'
import sqlite3, subprocess, sys, time
db, bin = sys.argv[1], sys.argv[2]
w = sqlite3.connect(db, isolation_level=None)
w.execute("BEGIN EXCLUSIVE")
w.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
q = subprocess.Popen([bin, "query", db, "phases | count"], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
time.sleep(1.0)
early = q.poll()
w.execute("COMMIT")
out, err = q.communicate(timeout=20)
print("early exit" if early is not None else "waited", q.returncode, out.split(), err.strip())
EOF
if grep -q "^waited 0 .*1075" "$TMP/busy.out"; then
	ok "c: a query while a writer holds the file waits and succeeds"
else
	not_ok "c: a query while a writer holds the file waits and succeeds" "$(head -c 300 "$TMP/busy.out")"
fi


# ---- d. output and memory within bounds whatever the values ----

# a table to a pipe is within a few times its CSV, with one 64 KiB name
# among 2000 short ones (each row used to be padded to it: 131 MB)
python3 - "$TMP/long.json" <<'EOF'
import json, sys
ev = [{"ph": "X", "name": "x" * 70000, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]
ev += [{"ph": "X", "name": "op%d" % (i % 50), "cat": "cpu_op", "pid": 1, "tid": 1,
        "ts": 10 + 10 * i, "dur": 5} for i in range(2000)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
EOF
if ! "$BIN" import -o "$TMP/long.db" "$TMP/long.json" 2>"$TMP/err"; then
	not_ok "d: a trace with a long name imports" "$(head -c 200 "$TMP/err")"
else
	for cmd in "query|phases | select name, dur" "query|phases" "summary|ops"; do
		sub=${cmd%%|*} arg=${cmd#*|}
		table=$(timeout 60 "$BIN" "$sub" "$TMP/long.db" "$arg" | wc -c)
		csv=$(timeout 60 "$BIN" "$sub" --format csv "$TMP/long.db" "$arg" | wc -c)
		if [ "$csv" -gt 65536 ] && [ "$table" -le $((3 * csv)) ]; then
			ok "d: $sub '$arg' to a pipe: $table bytes, within 3 times its CSV's $csv"
		else
			not_ok "d: $sub '$arg' to a pipe" "$table bytes, its CSV $csv bytes"
		fi
	done
fi

# peak RSS PEAKFILE CMD...: runs CMD, its peak resident set in KiB into
# PEAKFILE; returns CMD's exit status
peak_rss() {
	python3 - "$@" <<'EOF'
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1] + ".err", "w"))
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)
EOF
}
peak_rss "$TMP/base.kb" "$BIN" query "$DEMO" 'phases | count'
base_kb=$(cat "$TMP/base.kb")
# AddressSanitizer's quarantine keeps freed memory resident: no peak then
asan=0
ldd "$BIN" 2>/dev/null | grep -q libasan && asan=1
# memory_bound NAME QUERY WANT: QUERY under --max-memory 200MiB exits WANT
# (2: with the limit's message), its peak RSS within 200 MiB more than the
# same command's on a small query (the binary and its libraries)
memory_bound() {
	local name="d: $1 under --max-memory 200MiB" q=$2 want=$3 rc=0 kb
	peak_rss "$TMP/q.kb" timeout 60 "$BIN" query --max-memory 200MiB "$DEMO" "$q" || rc=$?
	kb=$(cat "$TMP/q.kb")
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name" "exit $rc, want $want: $(head -c 200 "$TMP/q.kb.err")"
	elif [ "$want" = 2 ] && ! grep -q "raise --max-memory" "$TMP/q.kb.err"; then
		not_ok "$name" "$(head -c 200 "$TMP/q.kb.err")"
	elif [ "$asan" = 1 ]; then
		ok "$name: exit $rc (peak RSS not measured under AddressSanitizer)"
	elif [ "$kb" -gt $((200 * 1024 + base_kb)) ]; then
		not_ok "$name" "peak RSS $((kb / 1024)) MiB, over 200 MiB + $((base_kb / 1024)) MiB"
	else
		ok "$name: exit $rc, peak RSS $((kb / 1024)) MiB (idle $((base_kb / 1024)) MiB)"
	fi
}
memory_bound "a 150 MB blob" 'sql SELECT zeroblob(150000000)' 2
memory_bound "a 90 MB text" 'sql SELECT hex(zeroblob(45000000))' 2
memory_bound "a 40 MB text, printed" 'sql SELECT hex(zeroblob(20000000))' 0
memory_bound "3 M rows" "sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
	LIMIT 3000000) SELECT x, printf('%040d', x) FROM c" 2
memory_bound "1 M rows, printed" "sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1
	FROM c LIMIT 1000000) SELECT x, printf('%040d', x) FROM c" 0

# explorer_bound NAME WIDTH WANT: a ':' query of 100000 rows of WIDTH
# characters under --max-memory 200MiB: the screen says WANT, and the peak
# RSS stays within 200 MiB more than the binary's own, though the explorer
# holds a display copy of every cell beside the result
explorer_bound() {
	local name="d: the explorer, $1 under --max-memory 200MiB" kb
	printf "type :sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) SELECT x, printf('%%0%dd', x) FROM c\nEnter\ndump\n" \
		"$2" >"$TMP/mem.keys"
	peak_rss "$TMP/e.kb" timeout 60 "$BIN" --max-memory 200MiB --keys "$TMP/mem.keys" \
		--dump "$TMP/mem.txt" --size 80x24 "$DEMO"
	kb=$(cat "$TMP/e.kb")
	if ! grep -q "$3" "$TMP/mem.txt"; then
		not_ok "$name" "the screen does not say '$3': $(tail -n 1 "$TMP/mem.txt" | head -c 200)"
	elif [ "$asan" = 1 ]; then
		ok "$name: '$3' (peak RSS not measured under AddressSanitizer)"
	elif [ "$kb" -gt $((200 * 1024 + base_kb)) ]; then
		not_ok "$name" "peak RSS $((kb / 1024)) MiB, over 200 MiB + $((base_kb / 1024)) MiB"
	else
		ok "$name: '$3', peak RSS $((kb / 1024)) MiB (idle $((base_kb / 1024)) MiB)"
	fi
}
explorer_bound "150 MB of rows" 1500 "raise --max-memory"
explorer_bound "80 MB of rows, shown" 800 "100000 rows in"

summary || exit 1
