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
#      device time is all the device work of its traces, the workflow's
#      that of its steps;
#   b. samples from ../shared/samples (GRADEML_SAMPLES), when present: a
#      Kineto ResNet-50 trace, HTA's NCCL training rank and param's linear
#      trace, each imported alone.
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
	sum=0
	for step in train eval ddp; do
		case $step in
		ddp) traces=(tests/data/gpu/ddp_rank0.pt.trace.json.gz tests/data/gpu/ddp_rank1.pt.trace.json.gz) ;;
		*) traces=("tests/data/gpu/$step.pt.trace.json.gz") ;;
		esac
		agree "gpu $step" "$GPU" "^/gpu/$step/" "${traces[@]}"
		want=$(cat "$TMP/gpu $step.total")
		got=$(device "$GPU" step "$step")
		if [ -n "$want" ] && [ "$got" = "$want" ] && [ "$want" -gt 0 ]; then
			ok "gpu step $step: device $got ns, all its traces' device work"
		else
			not_ok "gpu step $step" "device '$got' ns, its traces hold '$want' ns"
		fi
		sum=$((sum + ${want:-0}))
	done
	got=$(device "$GPU" workflow gpu)
	if [ "$got" = "$sum" ]; then
		ok "gpu workflow: device $got ns, its steps' sum"
	else
		not_ok "gpu workflow" "device '$got' ns, its steps hold $sum ns"
	fi
else
	not_ok "gpu import" "$(head -c 200 "$TMP/err")"
fi

# --- b. samples ---
for f in pytorch__kineto__kineto_resnet50_autograd_api_num_workers_0__worker0.pt.trace.json.gz \
	facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz \
	facebookresearch__param__linear_kineto.json.gz; do
	if [ ! -f "$SAMPLES/$f" ]; then
		skip "sample $f" "$SAMPLES is absent"
		continue
	fi
	db=$TMP/$f.db
	if ! "$BIN" import -o "$db" "$SAMPLES/$f" >/dev/null 2>"$TMP/err"; then
		not_ok "sample $f" "import: $(head -c 200 "$TMP/err")"
		continue
	fi
	agree "sample $f" "$db" "^/" "$SAMPLES/$f"
	want=$(cat "$TMP/sample $f.total")
	got=$(device "$db" workflow workflow)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "sample $f: the workflow's device $got ns, all its device work"
	else
		not_ok "sample $f workflow" "device '$got' ns, the trace holds '$want' ns"
	fi
done

summary
