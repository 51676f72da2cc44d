#!/usr/bin/env bash
# End-to-end tests of `grademl-tui export` ($GRADEML_BIN): Chrome trace
# JSON that Perfetto UI and chrome://tracing open and that `import` reads
# back into the same phases.
#
#   a. round trips, import -> export -> import of the export, compared by
#      tests/e2e/export_check.py (python3's json and sqlite3 on both
#      trace.dbs: the JSON's shape as Perfetto's importer takes it; the
#      same phases with their names, exact times, kinds where a category
#      says them and parents; tracks, edges, instants, samples): the GPU
#      capture (tests/data/gpu, as .json.gz), the stitched demo workflow
#      (tests/data/demo, as .json), a hostile trace (escape sequences,
#      control characters, invalid UTF-8 in names and args), and from
#      ../shared/samples HTA's NCCL trace, a Spark event log and OTLP
#      spans;
#   b. a subtree (PATH as :goto and `summary` read it): its phases, no
#      other;
#   c. errors, each one line and exit status 2 with no file left behind,
#      not even the hidden one it was written to: a PATH that names no
#      phase, no -o, a file that is no trace.db, a directory that is not
#      there, a file size limit (ulimit -f); and SIGTERM mid-way, which
#      ends it by that signal with nothing left.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, python3.  GRADEML_SAMPLES overrides ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init export
CHECK=$ROOT/tests/e2e/export_check.py
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}

e2e_need_bin

# roundtrip NAME DB OUT: exports DB to OUT, imports OUT into a new
# trace.db and prints a test line per check of export_check.py.
roundtrip() {
	local name=$1 db=$2 out=$3 back=$TMP/$1.back.db line why
	if ! "$BIN" export -o "$out" "$db" >"$TMP/out" 2>"$TMP/err"; then
		not_ok "$name: export" "$(head -c 300 "$TMP/err")"
		return
	fi
	if ! "$BIN" import -o "$back" "$out" >/dev/null 2>"$TMP/err"; then
		not_ok "$name: import of the export" "$(head -c 300 "$TMP/err")"
		return
	fi
	if ! python3 "$CHECK" "$db" "$out" "$back" >"$TMP/check" 2>&1; then
		not_ok "$name: export_check.py" "$(tail -c 300 "$TMP/check")"
		return
	fi
	while IFS=$'\t' read -r line why; do
		case $line in
		"ok "*) ok "$name: ${line#ok }" ;;
		"not ok "*) not_ok "$name: ${line#not ok }" "$why" ;;
		esac
	done <"$TMP/check"
}

# hidden DIR: the hidden files an export left in DIR.
hidden() {
	find "$1" -maxdepth 1 -name '.*.json*' | head -n 3
}

# ---- a. round trips ----
GPU=$TMP/gpu.db
if bash tests/data/gpu/import.sh "$BIN" "$GPU" >/dev/null 2>"$TMP/err"; then
	roundtrip gpu "$GPU" "$TMP/gpu.json.gz"
else
	not_ok "gpu: import" "$(head -c 300 "$TMP/err")"
fi
if bash tests/data/demo/import.sh "$BIN" "$TMP/demo.db" >/dev/null 2>"$TMP/err"; then
	roundtrip demo "$TMP/demo.db" "$TMP/demo.json"
else
	not_ok "demo: import" "$(head -c 300 "$TMP/err")"
fi

# names and args that are no plain text
python3 - "$TMP/hostile.json" <<'EOF'
import json, sys
esc, bad = "\x1b[31mred\x1b[0m", b"inv\xffalid"
events = [
    {"ph": "X", "ts": 10.001, "dur": 5, "pid": 1, "tid": 2, "name": "op " + esc, "cat": "cpu_op",
     "args": {"tab\there": "line\nbreak", "ctl": "\x01\x7f", "nested": {"s": esc}}},
    {"ph": "X", "ts": 11, "dur": 1, "pid": 1, "tid": 2, "name": "@BAD@", "cat": "cpu_op"},
    {"ph": "i", "ts": 12, "pid": 1, "tid": 2, "s": "t", "name": "note \u2028 " + esc},
]
text = json.dumps({"traceEvents": events}).encode().replace(b"@BAD@", bad)
open(sys.argv[1], "wb").write(text)
EOF
if "$BIN" import -o "$TMP/hostile.db" "$TMP/hostile.json" >/dev/null 2>"$TMP/err"; then
	roundtrip hostile "$TMP/hostile.db" "$TMP/hostile-out.json"
	if "$BIN" export -o "$TMP/"$'\e[31mred.json' "$TMP/hostile.db" >"$TMP/out" 2>&1 &&
		! grep -q $'\e' "$TMP/out"; then
		ok "hostile: the line export prints is escaped"
	else
		not_ok "hostile: the line export prints is escaped" "$(head -c 200 "$TMP/out" | od -c | head -n 2)"
	fi
else
	not_ok "hostile: import" "$(head -c 300 "$TMP/err")"
fi

# real samples, each alone: NCCL kernels on two streams, a Spark
# application's tasks overlapping on their executors, OTLP spans
for s in chrome-trace/facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz \
	spark-eventlog/NVIDIA__spark-rapids-tools__gpu_oom_eventlog.zstd \
	otlp-json/open-telemetry__opentelemetry-proto__trace.json; do
	name=$(basename "$s")
	name=${name%%.*}
	name=${name##*__}
	if [ ! -f "$SAMPLES/$s" ]; then
		skip "$name" "no $SAMPLES/$s"
		continue
	fi
	if "$BIN" import -o "$TMP/$name.db" "$SAMPLES/$s" >/dev/null 2>"$TMP/err"; then
		roundtrip "$name" "$TMP/$name.db" "$TMP/$name.json"
	else
		not_ok "$name: import" "$(head -c 300 "$TMP/err")"
	fi
done

# ---- b. a subtree ----
if "$BIN" export -o "$TMP/train.json" "$GPU" /gpu/train >/dev/null 2>"$TMP/err" &&
	why=$(python3 - "$GPU" "$TMP/train.json" <<'EOF'
import collections, json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
want = collections.Counter(r[0] for r in c.execute(
    "WITH RECURSIVE s(id) AS (SELECT id FROM phases_v WHERE name = 'train' AND kind = 'step'"
    " UNION ALL SELECT p.id FROM phases p JOIN s ON p.parent_id = s.id)"
    " SELECT p.name FROM s JOIN phases_v p USING (id) WHERE p.kind NOT IN"
    " ('rank', 'process', 'thread', 'stream')"
    " AND NOT (p.kind = 'profiler' AND p.track_id IS NULL) AND p.id NOT IN"
    " (SELECT phase_id FROM tracks WHERE phase_id IS NOT NULL)"))
got = collections.Counter(e["name"] for e in json.load(open(sys.argv[2]))["traceEvents"]
                          if e["ph"] == "X")
if want != got or len(want) < 100:
    print("%d phases under /gpu/train, %d written; e.g. %s" % (
        sum(want.values()), sum(got.values()), list(((want - got) + (got - want)).items())[:2]))
EOF
	) && [ -z "$why" ]; then
	ok "subtree: the phases of /gpu/train and no other"
else
	not_ok "subtree: the phases of /gpu/train and no other" "${why:-$(head -c 300 "$TMP/err")}"
fi

# ---- c. errors ----
# fails NAME WANT OUT CMD...: CMD exits 2 with one line on stderr that
# contains WANT, and neither OUT nor a hidden file beside it is left.
fails() {
	local name=$1 want=$2 out=$3 rc
	shift 3
	"$@" >/dev/null 2>"$TMP/err"
	rc=$?
	local lines=$(wc -l <"$TMP/err") left=$(ls -d "$out" 2>/dev/null; hidden "$(dirname "$out")" 2>/dev/null)
	if [ "$rc" = 2 ] && [ "$lines" = 1 ] && grep -qF -- "$want" "$TMP/err" && [ -z "$left" ]; then
		ok "$name"
	else
		not_ok "$name" "exit $rc, $lines lines: $(head -c 200 "$TMP/err"); left: $left"
	fi
}
mkdir -p "$TMP/e"
fails "error: a PATH that names no phase" "nosuch" "$TMP/e/x.json" \
	"$BIN" export -o "$TMP/e/x.json" "$GPU" /gpu/nosuch
"$BIN" export "$GPU" >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 2 ] && head -n 1 "$TMP/err" | grep -q "export needs -o" &&
	sed -n 2p "$TMP/err" | grep -q "^usage:"; then
	ok "error: no -o (and the usage)"
else
	not_ok "error: no -o (and the usage)" "exit $rc: $(head -c 200 "$TMP/err")"
fi
echo "not a database" >"$TMP/e/text.db"
fails "error: a file that is no trace.db" "text.db" "$TMP/e/x.json" \
	"$BIN" export -o "$TMP/e/x.json" "$TMP/e/text.db"
fails "error: a directory that is not there" "$TMP/e/no/x.json" "$TMP/e/no/x.json" \
	"$BIN" export -o "$TMP/e/no/x.json" "$GPU"
fails "error: a file size limit (ulimit -f 1024)" "cannot write" "$TMP/e/x.json" \
	bash -c 'ulimit -f 1024 && exec "$@"' - "$BIN" export -o "$TMP/e/x.json" "$GPU"

# SIGTERM once the hidden file is there: a trace.db of the GPU capture's
# training step eight times, so that the export takes a while
BIG=$TMP/big.db
for i in 1 2 3 4 5 6 7 8; do
	"$BIN" import -o "$BIG" --step "t$i" tests/data/gpu/train.pt.trace.json.gz >/dev/null 2>&1
done
why=$(python3 - "$BIN" "$BIG" "$TMP/sig" <<'EOF'
import os, signal, subprocess, sys, time
binary, db, d = sys.argv[1:4]
os.makedirs(d)
p = subprocess.Popen([binary, "export", "-o", d + "/out.json.gz", db],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while p.poll() is None and not [f for f in os.listdir(d) if f.startswith(".")]:
    time.sleep(0.002)
if p.poll() is not None:
    print("the export ended (exit %d) before it could be signalled" % p.returncode)
    sys.exit()
p.send_signal(signal.SIGTERM)
rc = p.wait()
if rc != -signal.SIGTERM or os.listdir(d):
    print("exit %d; left %s" % (rc, os.listdir(d)))
EOF
)
if [ -z "$why" ]; then
	ok "SIGTERM mid-way: ended by it, nothing left"
else
	not_ok "SIGTERM mid-way: ended by it, nothing left" "$why"
fi

summary
