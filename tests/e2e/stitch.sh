#!/usr/bin/env bash
# End-to-end tests of the critical path and of stitching a workflow that
# OTLP describes ($GRADEML_BIN), each figure against an independent
# computation from the raw files (python3's json):
#
#   a. the demo (tests/data/demo: train, then infer, in one process): the
#      path is train, the 2 s between the steps as a wait, infer; each
#      step's time on it is its manifest window less its trace's span; the
#      workflow itself is never on it; :whatif on train saves half its
#      window, :whatif 1 nothing;
#   b. the truth GPU workflow (tests/truth/gpu/data): steps.otlp.json, then
#      each case's Kineto trace with --step /gpu-truth/CASE: every trace
#      hangs under its span, which keeps its window, on the span's host;
#      the cases ran one after another, so removing any one saves its whole
#      span; no diagnostic of far-apart sources;
#   c. relative traces under spans (the demo's legacy autograd export, a
#      truth trace without its baseTimeNanoseconds) start with their span;
#      one under a step with no window lands in 1970 and is diagnosed;
#   d. OTLP spans with host.name and sar of that host: attribution charges
#      the spans;
#   e. the GPU capture's DDP step: a what-if that saves less than the phase
#      runs on the path names what then bounds it, in the explorer and the
#      report alike.
#
# Prints "ok - NAME" / "not ok - NAME (why)", then a summary; exits 1 when
# any check failed.  Needs: bash, python3, sqlite3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-stitch
DEMO=tests/data/demo
TRUTH=tests/truth/gpu/data
KEYS=$ROOT/tests/e2e/keys

e2e_need_bin

q() { sqlite3 -batch -noheader "$1" "$2"; }

# keys NAME DB SIZE: runs the explorer on DB with tests/e2e/keys/NAME.keys
# into $TMP/NAME.txt; the status lines (each dump's last) in $TMP/NAME.msg.
keys() {
	local rows=${3#*x}
	"$BIN" --keys "$KEYS/$1.keys" --dump "$TMP/$1.txt" --size "$3" "$2" \
		>"$TMP/$1.out" 2>"$TMP/$1.err" </dev/null &&
		awk -v r="$rows" 'NR % r == 0' "$TMP/$1.txt" >"$TMP/$1.msg"
}

# ---- a. the demo ----
DB=$TMP/demo.db
if ! bash $DEMO/import.sh "$BIN" "$DB" >"$TMP/err" 2>&1; then
	not_ok "demo: import" "$(head -c 300 "$TMP/err")"
else
	"$BIN" report --format json "$DB" >"$TMP/demo.json"
	if why=$(python3 - "$DEMO" "$TMP/demo.json" <<'EOF'
import gzip, json, sys
d, rep = sys.argv[1], json.load(open(sys.argv[2]))
steps = [json.loads(l) for l in open(d + "/workflow.jsonl") if l.strip()]
train, infer = steps
def span_ns(s):
    ev = json.load(gzip.open(d + "/" + s["trace"]))
    return (max(e["ts"] + e["dur"] for e in ev) - min(e["ts"] for e in ev)) * 1000
want = {"/demo/train": train["end_ns"] - train["start_ns"] - span_ns(train),
        "/demo/infer": infer["end_ns"] - infer["start_ns"] - span_ns(infer)}
cp = rep["critical_path"]
got = {r["path"]: r["on_path_ns"] for r in cp}
bad = []
if any(r["path"] == "/demo" for r in cp):
    bad.append("the workflow itself is on the path")
for p, ns in want.items():
    if got.get(p) != ns:
        bad.append("%s on the path %s ns, want %s" % (p, got.get(p), ns))
if cp[0]["makespan_ns"] != infer["end_ns"] - train["start_ns"]:
    bad.append("makespan %s" % cp[0]["makespan_ns"])
if cp[0].get("wait_ns") != infer["start_ns"] - train["end_ns"]:
    bad.append("wait %s, want the gap %s" % (cp[0].get("wait_ns"), infer["start_ns"] - train["end_ns"]))
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
	); then
		ok "demo: the path is train, the gap between the steps (a wait), infer; each step's time on it is its window less its trace"
	else
		not_ok "demo: critical path" "$why"
	fi
	if keys critpath-demo "$DB" 120x24; then
		half=$(python3 -c 'import json; s = json.loads(open("'$DEMO'/workflow.jsonl").readline()); print((s["end_ns"] - s["start_ns"]) / 2)')
		if python3 - "$TMP/critpath-demo.msg" "$half" <<'EOF'; then
import re, sys
msg = open(sys.argv[1]).read().splitlines()
u = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
m = re.match(r"train 2x faster saves ([\d.]+) (ns|us|ms|s) ", msg[0])
ok = m and abs(float(m.group(1)) * u[m.group(2)] / float(sys.argv[2]) - 1) < 0.005
ok = ok and msg[1].startswith("train at 1x changes nothing: demo's 17.8 s as observed")
sys.exit(0 if ok else 1)
EOF
			ok "demo: train 2x faster saves half its window; 1x changes nothing"
		else
			not_ok "demo: :whatif on train" "$(tr '\n' '|' <"$TMP/critpath-demo.msg")"
		fi
	else
		not_ok "demo: :whatif runs" "$(head -c 300 "$TMP/critpath-demo.err")"
	fi
fi

# ---- b. the truth GPU workflow, stitched ----
DB=$TMP/truth.db
cases="compute input sync pageable launch"
import_truth() {
	"$BIN" import -o "$DB" "$TRUTH/steps.otlp.json" || return 1
	for c in $cases; do
		"$BIN" import -o "$DB" --step "/gpu-truth/$c" "$TRUTH/$c.pt.trace.json.gz" || return 1
	done
	"$BIN" import -o "$DB" --step /gpu-truth/straggler "$TRUTH"/straggler_rank*.pt.trace.json.gz &&
		"$BIN" import -o "$DB" --host vm "$TRUTH/nvsmi.csv.gz"
}
if ! import_truth >"$TMP/err" 2>&1; then
	not_ok "truth: import" "$(head -c 300 "$TMP/err")"
else
	q "$DB" "SELECT p.name, p.kind, p.start_ns, p.end_ns, coalesce(t.host, '-') FROM phases_v p
		LEFT JOIN tracks t ON t.id = p.track_id WHERE p.depth <= 2 ORDER BY p.id" >"$TMP/top"
	q "$DB" "SELECT s.path, s.host, s.anchor, (SELECT group_concat(DISTINCT sp.name)
		FROM phases n JOIN phases_v sp ON sp.id = n.parent_id WHERE n.source_id = s.id
		AND n.kind IN (3, 4) AND n.depth = 3) FROM sources s WHERE s.format = 'chrome'" >"$TMP/srcs"
	q "$DB" "SELECT count(*) FROM diagnostics WHERE code = 'FAR_APART'" >"$TMP/far"
	if why=$(python3 - "$TRUTH" "$TMP/top" "$TMP/srcs" "$TMP/far" <<'EOF'
import json, os, sys
d = sys.argv[1]
doc = json.load(open(d + "/steps.otlp.json"))
rs = doc["resourceSpans"][0]
host = [a["value"]["stringValue"] for a in rs["resource"]["attributes"] if a["key"] == "host.name"][0]
spans = [s for ss in rs["scopeSpans"] for s in ss["spans"]]
top = [l.split("|") for l in open(sys.argv[2]).read().splitlines()]
bad = []
steps = [r[0] for r in top if r[1] == "step"]
if steps != ["gpu-truth"]:
    bad.append("steps %s" % steps)
for s in spans:
    rows = [r for r in top if r[0] == s["name"] and r[1] in ("span", "step")]
    want = [s["startTimeUnixNano"], s["endTimeUnixNano"], host]
    if len(rows) != 1 or [rows[0][2], rows[0][3], rows[0][4]] != want:
        bad.append("%s: %s, want %s" % (s["name"], rows, want))
wf = [r for r in top if r[1] == "workflow"][0]
root = [s for s in spans if not s.get("parentSpanId")][0]
if [wf[2], wf[3]] != [root["startTimeUnixNano"], root["endTimeUnixNano"]]:
    bad.append("the workflow lasts %s..%s" % (wf[2], wf[3]))
for line in open(sys.argv[3]).read().splitlines():
    path, h, anchor, under = line.split("|")
    case = os.path.basename(path).split(".")[0].split("_rank")[0]
    if h != host or anchor != "baseTimeNanoseconds" or under != case:
        bad.append("%s: host %s, anchor %s, under %s" % (case, h, anchor, under))
if open(sys.argv[4]).read().strip() != "0":
    bad.append("a FAR_APART diagnostic")
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
	); then
		ok "truth: each trace under its case's span (no step beside it), spans keep their windows, on host vm's track; traces take the span's host; the workflow lasts its root span"
	else
		not_ok "truth: stitching" "$why"
	fi
	if keys critpath-truth "$DB" 120x24; then
		if why=$(python3 - "$TRUTH" "$TMP/critpath-truth.msg" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1] + "/steps.otlp.json"))
spans = {s["name"]: int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])
         for ss in doc["resourceSpans"][0]["scopeSpans"] for s in ss["spans"]}
u = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
bad = []
msgs = open(sys.argv[2]).read().splitlines()
for case, msg in zip(["compute", "input", "sync", "pageable", "launch", "straggler"], msgs):
    m = re.match(r"%s taking no time saves ([\d.]+) (ns|us|ms|s) " % case, msg)
    if not m or abs(float(m.group(1)) * u[m.group(2)] / spans[case] - 1) > 0.005:
        bad.append("%s: '%s', want its %d ns" % (case, msg.strip(), spans[case]))
if not msgs[6].startswith("compute at 1x changes nothing"):
    bad.append(msgs[6].strip())
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
		); then
			ok "truth: the cases ran one after another: each taking no time saves its whole span; 1x changes nothing"
		else
			not_ok "truth: what-if per case" "$why"
		fi
	else
		not_ok "truth: :whatif runs" "$(head -c 300 "$TMP/critpath-truth.err")"
	fi
fi

# ---- c. relative traces under spans; one anchored nowhere ----
python3 - "$DEMO" "$TMP/demo.otlp.json" <<'EOF'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1] + "/workflow.jsonl") if l.strip()]
kv = lambda k, v: {"key": k, "value": {"stringValue": v}}
spans = [{"traceId": "d", "spanId": "r", "name": "demo-run",
          "startTimeUnixNano": str(steps[0]["start_ns"]), "endTimeUnixNano": str(steps[-1]["end_ns"])}]
spans += [{"traceId": "d", "spanId": "s%d" % i, "parentSpanId": "r", "name": s["step"],
           "startTimeUnixNano": str(s["start_ns"]), "endTimeUnixNano": str(s["end_ns"])}
          for i, s in enumerate(steps)]
json.dump({"resourceSpans": [{"resource": {"attributes": [kv("host.name", steps[0]["host"])]},
                              "scopeSpans": [{"spans": spans}]}]}, open(sys.argv[2], "w"))
EOF
python3 - "$TRUTH/compute.pt.trace.json.gz" "$TMP/compute-relative.json" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
del d["baseTimeNanoseconds"]
json.dump(d, open(sys.argv[2], "w"))
EOF
DB=$TMP/relative.db
if "$BIN" import -o "$DB" "$TMP/demo.otlp.json" 2>"$TMP/err" &&
	"$BIN" import -o "$DB" --step /demo-run/train $DEMO/train.pt.trace.json.gz 2>>"$TMP/err" &&
	"$BIN" import -o "$DB" --step /workflow/demo-run/infer $DEMO/infer.pt.trace.json.gz 2>>"$TMP/err" &&
	"$BIN" import -o "$TMP/kineto.db" "$TRUTH/steps.otlp.json" 2>>"$TMP/err" &&
	"$BIN" import -o "$TMP/kineto.db" --step /gpu-truth/compute "$TMP/compute-relative.json" 2>>"$TMP/err"; then
	got=$(q "$DB" "SELECT group_concat(s.anchor || ':' || (n.start_ns = sp.start_ns), ' ')
		FROM sources s JOIN phases n ON n.source_id = s.id AND n.kind = 4
		JOIN phases sp ON sp.id = n.parent_id WHERE s.format = 'chrome'")
	# the trace's first record is the profiler's own trace span (kind 21,
	# profiler): it starts with the span, its work after
	got+=" $(q "$TMP/kineto.db" "SELECT s.anchor || ':' || (min(n.start_ns) = sp.start_ns)
		FROM sources s JOIN phases n ON n.source_id = s.id AND n.kind IN (4, 21)
		JOIN phases sp ON sp.id = n.parent_id WHERE s.format = 'chrome'")"
	far=$(q "$DB" "SELECT count(*) FROM diagnostics WHERE code = 'FAR_APART'")
	if [ "$got" = "step-window:1 step-window:1 step-window:1" ] && [ "$far" = 0 ]; then
		ok "relative traces (legacy autograd export, Kineto without its base) start with the span they are imported under"
	else
		not_ok "relative traces under spans" "got '$got', FAR_APART $far"
	fi
else
	not_ok "relative traces: import" "$(head -c 300 "$TMP/err")"
fi
DB=$TMP/far.db
if "$BIN" import -o "$DB" "$TRUTH/steps.otlp.json" 2>"$TMP/err" &&
	"$BIN" import -o "$DB" --step /gpu-truth/elsewhere $DEMO/train.pt.trace.json.gz 2>>"$TMP/err"; then
	if "$BIN" report "$DB" | grep -q '! FAR_APART .*1970-01-01T00:00:00Z.*2026-11-26T'; then
		ok "a relative trace under a step with no window: FAR_APART in the report, with both dates"
	else
		not_ok "far-apart sources" "$("$BIN" report "$DB" | grep -n '!' | head -3 | tr '\n' '|')"
	fi
else
	not_ok "far-apart: import" "$(head -c 300 "$TMP/err")"
fi

# ---- d. spans and sar of their host: attribution charges the spans ----
DB=$TMP/attr.db
if "$BIN" import -o "$DB" "$TMP/demo.otlp.json" 2>"$TMP/err" &&
	"$BIN" import -o "$DB" $DEMO/sysstat.sadf.json.gz 2>>"$TMP/err" &&
	"$BIN" analyze "$DB" >/dev/null 2>>"$TMP/err"; then
	got=$(q "$DB" "SELECT group_concat(p.name || ':' || (a.usage > 0.5), ' ') FROM attribution a
		JOIN phases_v p ON p.id = a.phase_id WHERE p.kind = 'span' AND a.resource = 'cpu'")
	if [ "$got" = "train:1 infer:1" ] && ! "$BIN" report "$DB" | grep -q 'no attributed metric'; then
		ok "OTLP spans with host.name and sar of that host: attribution charges the spans cpu"
	else
		not_ok "attribution of spans" "got '$got'"
	fi
else
	not_ok "attribution of spans: import" "$(head -c 300 "$TMP/err")"
fi

# ---- e. the GPU capture: what then bounds the path ----
DB=$TMP/gpu.db
if ! bash tests/data/gpu/import.sh "$BIN" "$DB" >"$TMP/err" 2>&1; then
	not_ok "gpu: import" "$(head -c 300 "$TMP/err")"
elif keys critpath-gpu "$DB" 250x24; then
	line=$("$BIN" report "$DB" | grep -F '/gpu/ddp/rank 1/python3 (525) CPU/thread 525 (python3)/ProfilerStep#3  (twice as fast:' || true)
	msg=$(sed -n 1p "$TMP/critpath-gpu.msg")
	# the phase the report says then bounds the path; the explorer's
	# message (cut to the screen's width) must name the same one
	bound=${line##*; then }
	bound=${bound% bounds the path)}
	leaf=${bound##*/}
	if [[ $line == *"; then /gpu/ddp/rank 1/"*" bounds the path)" ]] &&
		[[ $msg == "ProfilerStep#3 taking no time saves "*", not "*": then ${leaf:0:60}"* ]]; then
		ok "gpu: a ProfilerStep that saves less than it runs on the path names the thread that then bounds it (report and explorer)"
	else
		not_ok "gpu: what then bounds the path" "report '$line', explorer '$msg'"
	fi
else
	not_ok "gpu: :whatif runs" "$(head -c 300 "$TMP/critpath-gpu.err")"
fi

summary
