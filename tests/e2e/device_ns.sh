#!/usr/bin/env bash
# The device time beneath every phase (phases.device_ns, the query's
# `device`), end to end: the real binary's figures per (kind, name) of the
# operators, profiler steps and annotations, and those of the steps and the
# workflow above them, against tests/tools/device_beneath.py, which finds
# each device work's launch and the spans above it in the raw trace itself.
#
#   a. tests/data/gpu imported as the other tests do (import.sh: a manifest's
#      steps, a Chrome trace under each by --step, two ranks under one):
#      each step's operators, profiler steps and annotations; each step's
#      device time is the union of all the device work of its traces (two
#      ranks' overlapping work counts once), the workflow's that of all
#      its steps' traces;
#      :ops (summary ops), the report's device work of each phase it
#      attributes (JSON device_ns) and the explorer's details pane
#      say the same;
#   b. samples from ../shared/samples (GRADEML_SAMPLES), when present: a
#      Kineto ResNet-50 trace (its first format: Operator, Runtime, Kernel)
#      and HTA's NCCL training rank, each imported alone, the same checks.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)" per
# check, then the summary; exits 1 when any check failed.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init device_ns
e2e_need_bin
REF=$ROOT/tests/tools/device_beneath.py
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace

# tool DB PATH_RE: the binary's lines in device_beneath.py's form for the
# phases whose path matches PATH_RE (sorted as the reference sorts them).
tool() {
	local db=$1 re=$2 kind
	for kind in operator profiler_step annotation; do
		"$BIN" query "$db" "phases kind = $kind and path ~ \"$re\" | by name |
			stats count, sum(device)" --format json |
			python3 -c 'import json, sys
for r in json.load(sys.stdin):
    print(sys.argv[1], r["count"], r["sum(device)"] or 0, r["name"])' "$kind" || return 1
	done | LC_ALL=C sort
}

# ops NAME DB: `summary ops` (:ops) says, per operator name, the sum of the
# instances' device.
ops() {
	local name=$1 db=$2
	if "$BIN" summary "$db" ops --format json >"$TMP/ops.json" 2>"$TMP/err" &&
		"$BIN" query "$db" 'phases kind = operator | by name | stats count, sum(device)' \
			--format json >"$TMP/opq.json" 2>>"$TMP/err" &&
		python3 - "$TMP/ops.json" "$TMP/opq.json" >"$TMP/ops.cmp" 2>>"$TMP/err" <<'PY'
import json, sys
a = {r["name"]: (r["count"], r["device"]) for r in json.load(open(sys.argv[1]))}
b = {r["name"]: (r["count"], r["sum(device)"]) for r in json.load(open(sys.argv[2]))}
bad = [(k, a[k], b.get(k)) for k in a if a[k] != b.get(k)]
if bad or len(a) != len(b) or not any(d for _, d in a.values()):
    print("%d names, %d in the query; first difference %s" % (len(a), len(b), bad[:1]))
    sys.exit(1)
print(len(a))
PY
	then
		ok "$name :ops: device per name is its instances' ($(cat "$TMP/ops.cmp") names)"
	else
		not_ok "$name :ops" "$(head -c 300 "$TMP/ops.cmp") $(head -c 200 "$TMP/err")"
	fi
}

# device DB KIND NAME: the device_ns of the one phase of that kind and name.
device() {
	"$BIN" query "$1" "phases kind = $2 and name = \"$3\" | select device" --format csv |
		tr -d '\r' | sed -n 2p
}

# agree NAME DB PATH_RE TRACE...: the phases under PATH_RE against the
# reference for TRACEs; prints the reference's total on success.
agree() {
	local name=$1 db=$2 re=$3
	shift 3
	if ! python3 "$REF" "$@" >"$TMP/$name.ref" 2>"$TMP/err"; then
		not_ok "$name" "reference: $(head -c 200 "$TMP/err")"
		return 1
	fi
	grep -v '^total ' "$TMP/$name.ref" | LC_ALL=C sort >"$TMP/$name.want"
	if ! tool "$db" "$re" >"$TMP/$name.got" 2>"$TMP/err"; then
		not_ok "$name" "query: $(head -c 200 "$TMP/err")"
		return 1
	fi
	local n d
	n=$(grep -c . "$TMP/$name.want")
	d=$(grep -vc '^[a-z_]* [0-9]* 0 ' "$TMP/$name.want")
	if [ "$d" -eq 0 ]; then
		not_ok "$name" "the reference finds no phase with device time"
	elif ! diff -u "$TMP/$name.want" "$TMP/$name.got" >"$TMP/$name.diff"; then
		not_ok "$name" "$(grep -c '^[-+][a-z]' "$TMP/$name.diff") lines differ, first: $(grep -m2 '^[-+][a-z]' "$TMP/$name.diff" | tr '\n' ' ')"
	else
		ok "$name: $n (kind, name) rows, $d with device time"
	fi
	sed -n 's/^total //p' "$TMP/$name.ref" >"$TMP/$name.total"
}

# --- a. tests/data/gpu ---
GPU=$TMP/gpu.db
if bash tests/data/gpu/import.sh "$BIN" "$GPU" >/dev/null 2>"$TMP/err"; then
	for step in train eval ddp; do
		case $step in
		ddp) traces=(tests/data/gpu/ddp_rank0.pt.trace.json.gz tests/data/gpu/ddp_rank1.pt.trace.json.gz) ;;
		*) traces=("tests/data/gpu/$step.pt.trace.json.gz") ;;
		esac
		agree "gpu $step" "$GPU" "^/gpu/$step/" "${traces[@]}"
		want=$(cat "$TMP/gpu $step.total")
		got=$(device "$GPU" step "$step")
		if [ -n "$want" ] && [ "$got" = "$want" ] && [ "$want" -gt 0 ]; then
			ok "gpu step $step: device $got ns, the union of its traces' device work"
		else
			not_ok "gpu step $step" "device '$got' ns, its traces' union is '$want' ns"
		fi
	done
	want=$(python3 "$REF" tests/data/gpu/*.pt.trace.json.gz 2>"$TMP/err" | sed -n 's/^total //p')
	sum=$(cat "$TMP/gpu train.total" "$TMP/gpu eval.total" "$TMP/gpu ddp.total" |
		awk '{ s += $1 } END { print s }')
	got=$(device "$GPU" workflow gpu)
	if [ -n "$want" ] && [ "$got" = "$want" ] && [ "$want" -le "$sum" ]; then
		ok "gpu workflow: device $got ns, the union of its steps' ($sum ns summed)"
	else
		not_ok "gpu workflow" "device '$got' ns, its steps' union is '$want' ns ($sum summed)"
	fi
	ops gpu "$GPU"
	if "$BIN" report --format json "$GPU" >"$TMP/report.json" 2>"$TMP/err" &&
		"$BIN" query "$GPU" 'phases depth <= 3 | select path, device' --format json \
			>"$TMP/paths.json" 2>>"$TMP/err" &&
		python3 - "$TMP/report.json" "$TMP/paths.json" >"$TMP/report.cmp" 2>>"$TMP/err" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))["attribution"]["phases"]
dev = {r["path"]: r["device"] for r in json.load(open(sys.argv[2]))}
n = 0
for p in rep:
    if p.get("device_ns") != dev.get(p["path"]):
        print("%s: report %s, device %s" % (p["path"], p.get("device_ns"), dev.get(p["path"])))
        sys.exit(1)
    n += p["device_ns"] > 0
print(n)
PY
	then
		ok "gpu report: each attributed phase's device_ns is its device ($(cat "$TMP/report.cmp") of them > 0)"
	else
		not_ok "gpu report" "$(head -c 300 "$TMP/report.cmp") $(head -c 200 "$TMP/err")"
	fi
	# the details pane of the first row at the root (the longest step, ddp)
	printf 'd\ndump\n' >"$TMP/details.keys"
	want=$("$BIN" query "$GPU" 'phases kind = step and name = "ddp" | select device' |
		sed -n 2p | sed 's/^ *//; s/ *$//')
	if ! "$BIN" --keys "$TMP/details.keys" --dump "$TMP/details.txt" --size 100x30 "$GPU" \
		>/dev/null 2>"$TMP/err" </dev/null; then
		not_ok "gpu details pane" "$(head -c 200 "$TMP/err")"
	elif grep -q "^ time .*  device $want  at " "$TMP/details.txt" &&
		grep -q "^ path  *\/gpu\/ddp *$" "$TMP/details.txt"; then
		ok "gpu details pane: /gpu/ddp shows device $want"
	else
		not_ok "gpu details pane" "no 'device $want' for /gpu/ddp: $(grep -m1 '^ time' "$TMP/details.txt")"
	fi
else
	not_ok "gpu import" "$(head -c 200 "$TMP/err")"
fi

# --- b. samples ---
[ -d "$SAMPLES" ] || skip "samples" "$SAMPLES is absent"
for f in pytorch__kineto__kineto_resnet50_autograd_api_num_workers_0__worker0.pt.trace.json.gz \
	facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz; do
	[ -d "$SAMPLES" ] || break
	if [ ! -f "$SAMPLES/$f" ]; then
		not_ok "sample $f" "not in $SAMPLES"
		continue
	fi
	db=$TMP/$f.db
	if ! "$BIN" import -o "$db" "$SAMPLES/$f" >/dev/null 2>"$TMP/err"; then
		not_ok "sample $f" "import: $(head -c 200 "$TMP/err")"
		continue
	fi
	agree "sample $f" "$db" "^/" "$SAMPLES/$f"
	ops "sample $f" "$db"
	want=$(cat "$TMP/sample $f.total")
	got=$(device "$db" workflow workflow)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "sample $f: the workflow's device $got ns, the union of all its device work"
	else
		not_ok "sample $f workflow" "device '$got' ns, the union of the trace's is '$want' ns"
	fi
done

summary
