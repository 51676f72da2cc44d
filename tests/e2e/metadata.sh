#!/usr/bin/env bash
# Chrome trace metadata within the import's memory bound, end to end with
# grademl-tui ($GRADEML_BIN) on generated traces:
#
#   a. thread_name events for 100 k and for 1 M threads without events,
#      then process_name and process_labels events for 70 k and 700 k
#      processes without events: the 10x trace's peak resident set is
#      within 1.5 times the 1x trace's and 100 MB, the strings table holds
#      none of their names, and UNUSED_METADATA counts what was skipped;
#   b. metadata before and after the events of its threads and processes
#      still names them, past 65536 metadata events of others too.
#
# Each trace is written into the import's standard input, never to disk.
# Prints "ok - NAME" / "not ok - NAME (why)", then a summary; exits 1 when
# any check failed.  Needs: bash, python3, sqlite3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-metadata
e2e_need_bin
e2e_need_tools python3 sqlite3

# feed DB KIND N: imports a trace of N metadata-only processes or threads
# (KIND thread or process) around two real events on pid 1 tid 1, with
# thread 1 and process 1 named before their events and thread 2 and
# process 2 after theirs; prints the import's exit status and its peak
# resident set in KiB.
feed() {
	python3 - "$BIN" "$@" <<'EOF'
import resource, subprocess, sys
bin, db, kind, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = subprocess.Popen([bin, "import", "-o", db, "--format", "chrome", "/dev/stdin"],
                     stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
w = p.stdin.write
w(b'{"traceEvents":[\n')
w(b'{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"named first"}},\n')
w(b'{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"proc first"}},\n')
w(b'{"ph":"X","name":"op","cat":"cpu_op","pid":1,"tid":1,"ts":1000,"dur":5},\n')
w(b'{"ph":"X","name":"op","cat":"cpu_op","pid":2,"tid":2,"ts":1000,"dur":5},\n')
chunk = []
for i in range(n):
    if kind == "thread":
        chunk.append(b'{"ph":"M","name":"thread_name","pid":1,"tid":%d,'
                     b'"args":{"name":"unused thread %d"}},\n' % (i + 10, i))
    else:
        chunk.append(b'{"ph":"M","name":"process_name","pid":%d,"tid":0,'
                     b'"args":{"name":"unused proc %d"}},\n' % (i + 10, i))
        chunk.append(b'{"ph":"M","name":"process_labels","pid":%d,"tid":0,'
                     b'"args":{"labels":"unused label %d"}},\n' % (i + 10, i))
    if len(chunk) >= 4096:
        w(b"".join(chunk))
        chunk = []
w(b"".join(chunk))
w(b'{"ph":"M","name":"thread_name","pid":2,"tid":2,"args":{"name":"named after"}},\n')
w(b'{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"proc after"}}\n]}\n')
p.stdin.close()
rc = p.wait()
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF
}

# under AddressSanitizer (shadow memory, redzones) only the ratio holds
cap_kb=$((100 * 1000 * 1000 / 1024))
ldd "$BIN" 2>/dev/null | grep -q libasan && cap_kb=$((1 << 30))

for kind in thread process; do
	n=100000 per=1
	[ "$kind" = process ] && n=70000 per=2
	read -r rc1 kb1 < <(feed "$TMP/$kind-1x.db" "$kind" "$n")
	read -r rc10 kb10 < <(feed "$TMP/$kind-10x.db" "$kind" $((10 * n)))
	name="a: metadata of $n and $((10 * n)) ${kind}es without events"
	[ "$kind" = thread ] && name="a: thread_name of $n and $((10 * n)) threads without events"
	if [ "$rc1" != 0 ] || [ "$rc10" != 0 ]; then
		not_ok "$name" "import exit $rc1 and $rc10"
		continue
	fi
	if [ "$kb10" -le $((kb1 * 3 / 2)) ] && [ "$kb10" -le "$cap_kb" ]; then
		ok "$name: peak RSS $((kb1 / 1024)) MiB, then $((kb10 / 1024)) MiB (within 1.5 times and 100 MB)"
	else
		not_ok "$name" "peak RSS $((kb1 / 1024)) MiB, then $((kb10 / 1024)) MiB (want within 1.5 times and 100 MB)"
	fi
	unused=$(sqlite3 "$TMP/$kind-10x.db" "SELECT count(*) FROM strings WHERE text LIKE 'unused %'")
	dropped=$(sqlite3 "$TMP/$kind-10x.db" "SELECT coalesce(sum(count), 0) FROM diagnostics WHERE code = 'UNUSED_METADATA'")
	kept=$((per * 10 * n - dropped))
	if [ "$unused" = 0 ] && [ "$dropped" -gt 0 ] && [ "$kept" -le $((2 * 65536)) ]; then
		ok "$name: no unused name in strings; UNUSED_METADATA $dropped, $kept kept"
	else
		not_ok "$name" "$unused unused names in strings, UNUSED_METADATA '$dropped' ($kept kept)"
	fi
	# b. names before and after the events, past the others
	got=$(sqlite3 "$TMP/$kind-10x.db" "SELECT group_concat(name, '|') FROM (SELECT name FROM phases_v
		WHERE kind IN ('thread', 'process') ORDER BY name)")
	want="named after|named first|proc after (2)|proc first (1)"
	if [ "$got" = "$want" ]; then
		ok "b: after $((10 * n)) ${kind} metadata events, the threads and processes with events are named: $got"
	else
		not_ok "b: after $((10 * n)) ${kind} metadata events, names" "'$got', want '$want'"
	fi
done

summary
