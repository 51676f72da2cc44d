#!/usr/bin/env bash
# End-to-end test of a GPU-bound verdict's advice (grademl-tui(1) Top
# issues): the bottleneck issue of a GPU kept busy quotes the GPU
# breakdown's kernel types (computation, communication, memory, other) as
# the breakdown's own line gives them, and its advice follows the largest:
# faster kernels for computation, less or overlapped communication for
# NCCL's, fewer copies for memory (MTIA's DMA), fewer synchronisations for
# other.  Two traces known by construction (tests/tools/gpu_mix.py: a GPU
# busy 95% with 80 ms of GEMMs and 15 ms of all-reduce, and the reverse),
# and HTA's MTIA sample, whose DMA is memory and whose pe_exe is other.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, python3.  GRADEML_SAMPLES overrides ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init gpu_advice
e2e_need_bin

# advise LABEL DB EXPECT: the report of DB, checked by gpu_advice.py
advise() {
	local label=$1 db=$2 expect=$3 why
	if ! "$BIN" report "$db" >"$TMP/r.txt" 2>"$TMP/err" ||
		! "$BIN" report --format json "$db" >"$TMP/r.json" 2>>"$TMP/err"; then
		not_ok "$label: report" "$(head -n 1 "$TMP/err")"
	elif why=$(python3 tests/e2e/gpu_advice.py "$TMP/r.txt" "$TMP/r.json" "$expect" 2>&1); then
		ok "$label: the GPU-bound verdict quotes the breakdown ($why)"
	else
		not_ok "$label: the GPU-bound verdict quotes the breakdown and advises for its largest type" \
			"$(echo "$why" | head -n 2 | tr '\n' '|')"
	fi
}

for mode in comp comm; do
	if ! figures=$(python3 tests/tools/gpu_mix.py "$TMP/$mode.json" "$mode" 2>"$TMP/err"); then
		not_ok "$mode: trace written" "$(head -n 1 "$TMP/err")"
	elif ! "$BIN" import -o "$TMP/$mode.db" "$TMP/$mode.json" >/dev/null 2>"$TMP/err"; then
		not_ok "$mode: imported" "$(head -n 1 "$TMP/err")"
	else
		advise "$mode" "$TMP/$mode.db" "$figures"
	fi
done

MTIA=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace/facebookresearch__HolisticTraceAnalysis__mtia_inference_rank_0.json.gz
if [ ! -e "$MTIA" ]; then
	skip "HTA's MTIA sample" "absent: $MTIA"
elif ! "$BIN" import -o "$TMP/mtia.db" "$MTIA" >/dev/null 2>"$TMP/err"; then
	not_ok "mtia: imported" "$(head -n 1 "$TMP/err")"
else
	advise "mtia" "$TMP/mtia.db" any
fi
summary
